package guard

import (
	"fmt"
	"regexp"
	"regexp/syntax"
	"slices"
	"strings"
	"sync"
	"unicode"
	"unicode/utf8"
)

// ruleSpec is the source of one injection rule; see injection_rules.go.
type ruleSpec struct {
	name   string
	cat    Category
	sev    Severity
	kw     []string // prefilter keywords: every match contains one
	re     string
	unless string // a match containing this is not reported
	neg    bool   // a match whose first word is negated is passed over (negation.go, match)
	next   string // a match followed by this (anchored at its end) is not reported
	raw    bool   // no word-boundary check (markup rules)
	cjk    bool   // no word-boundary check (scripts without spaces)
	lead   lead   // what must come before a match
	doc    bool   // reported in document mode only (CheckDocument)
}

// lead is what a rule requires before its match. A rule with a lead is
// anchored at its first literals without it, and the lead is checked at
// each occurrence.
type lead uint8

const (
	leadNone lead = iota
	// leadSentence: a match starts the text, a line, or a sentence (after
	// '.', '!', '?' or '"' and a space).
	leadSentence
	// leadLine: a match starts the text or a line.
	leadLine
	// leadNonLetter: a match starts the text or follows a character that
	// is not a letter.
	leadNonLetter
)

// source is the lead as an expression, prefixed to the rule's. Its space
// is \x20, one space, as lead.at reads it: a plain space in a rule source
// is a separator of one to four characters.
func (l lead) source() string {
	return [...]string{"", `(?:^|\n|[.!?"]\x20)`, `(?:^|\n)`, `(?:^|[^\pL])`}[l]
}

// at reports whether a match may start at p by the lead.
func (l lead) at(b []byte, p int) bool {
	switch l {
	case leadSentence:
		return lineStartAt(b, p)
	case leadLine:
		return p == 0 || b[p-1] == '\n'
	case leadNonLetter:
		if p == 0 {
			return true
		}
		r, _ := utf8.DecodeLastRune(b[:p])
		return !unicode.IsLetter(r)
	}
	return true
}

type compactPhrase struct {
	text string
	cat  Category
	sev  Severity
}

// neg reports whether the phrase starts at a verb a negation can take
// back ("never ignore all previous instructions"): the override and
// extraction phrases do, the jailbreak ones ("do anything now") do not.
func (p *compactPhrase) neg() bool {
	return p.cat == InstructionOverride || p.cat == PromptExtraction
}

// lazyRE is a regular expression compiled on first use: a process pays
// only for the rules its text wakes (compiling them all took 0.8 s of CPU
// at the first New, 7 s under the race detector). Its source was parsed
// when the rules were built, so compiling cannot fail on syntax.
type lazyRE struct {
	tree  *syntax.Regexp // printed and compiled on first use
	once  sync.Once
	re    *regexp.Regexp
	first litSet   // anchored branches: the literals a match starts with
	pre   *preNode // anchored branches: the branch, for mayMatch
}

func newLazyRE(src string) (*lazyRE, error) {
	tree, err := parseRule(src)
	if err != nil {
		return nil, err
	}
	return &lazyRE{tree: tree}, nil
}

// The rules' separators (reSep, reGap3, reGap8, reBound) are spelled with
// the class of reBound, about 1,900 times in the built-in rules. Parsed
// anew each time (the Unicode tables of \pL and \pN merged, negated and
// sorted), it was a quarter of the CPU of building the rules. parseRule
// parses a source with it spelled as a placeholder, a class of two
// private-use runes, and puts the class, parsed once, in each
// placeholder's place; the tree is the one syntax.Parse returns
// (TestParseRuleIsSyntaxParse).
const (
	sepPlaceholder = `[\x{F8F0}\x{F8F2}]`
	sepLo, sepHi   = 0xF8F0, 0xF8F2 // its runes, two apart so the parser keeps a class
)

// sepRunes is reBound's class, parsed once.
var sepRunes = sync.OnceValue(func() []rune {
	re, err := syntax.Parse(reBound, syntax.Perl)
	if err != nil || re.Op != syntax.OpCharClass {
		panic(fmt.Sprintf("guard: reBound %q is not a class: %v", reBound, err))
	}
	return re.Rune
})

// parseRule is syntax.Parse(src, syntax.Perl), with reBound's class parsed
// once (see sepPlaceholder). A source whose tree might not be the same
// that way is parsed as written:
//   - one with a case-folding flag (folding adds runes to a class);
//   - one that could spell the placeholder itself, with its runes or with
//     \x{...} (with the count below, "\Q[^\pL\pN]\E[\x{F8F0}\x{F8F2}]"
//     would put the class in the wrong place);
//   - one over 16 KiB: the parser refuses a tree of more than 32 million
//     class runes, and counts each separator's 1,496, which the
//     placeholder's two would hide (a class spelled in a byte of source
//     has at most about a thousand runes).
func parseRule(src string) (*syntax.Regexp, error) {
	n := strings.Count(src, reBound)
	if n == 0 || len(src) > 16<<10 || foldFlag.MatchString(src) ||
		strings.Contains(src, `\x{`) || strings.ContainsFunc(src, isPlaceholderRune) {
		return syntax.Parse(src, syntax.Perl)
	}
	tree, err := syntax.Parse(strings.ReplaceAll(src, reBound, sepPlaceholder), syntax.Perl)
	if err != nil {
		return syntax.Parse(src, syntax.Perl) // its error quotes the source as written
	}
	if filled, twin := fillSeparators(tree, sepRunes()); filled != n || twin {
		// The parser merged a placeholder into another class or factored
		// it out of an alternation, or a class spelled another way
		// ([^\pN\pL]) would have been factored with a separator.
		return syntax.Parse(src, syntax.Perl)
	}
	return tree, nil
}

// foldFlag finds a flag group that turns case folding on.
var foldFlag = regexp.MustCompile(`\(\?[a-zA-Z]*i`)

func isPlaceholderRune(r rune) bool { return r >= sepLo && r <= sepHi }

// fillSeparators puts cls in place of every placeholder class of tree. It
// returns how many it filled (parsing never copies a node, so when that is
// every placeholder of the source, each is a class of its own in the
// tree, where syntax.Parse of the source has reBound's), and whether tree
// has a twin of cls: a class of the same runes spelled another way. The
// parser factors alternatives that begin with equal classes ("C x|C y" is
// "C[xy]"), which it could not see between a placeholder and a twin.
func fillSeparators(tree *syntax.Regexp, cls []rune) (filled int, twin bool) {
	if tree.Op == syntax.OpCharClass {
		if slices.Equal(tree.Rune, []rune{sepLo, sepLo, sepHi, sepHi}) {
			tree.Rune = cls[:len(cls):len(cls)] // shared: an append copies
			return 1, false
		}
		return 0, slices.Equal(tree.Rune, cls)
	}
	for _, sub := range tree.Sub {
		f, t := fillSeparators(sub, cls)
		filled, twin = filled+f, twin || t
	}
	return filled, twin
}

func (l *lazyRE) get() *regexp.Regexp {
	l.once.Do(func() { l.re = regexp.MustCompile(l.tree.String()) })
	return l.re
}

type rule struct {
	name    string
	cat     Category
	sev     Severity
	re      *lazyRE
	unless  *regexp.Regexp
	neg     bool // see ruleSpec.neg
	next    *regexp.Regexp
	bounded bool // re wraps the rule in boundary groups; submatch 1 is the match
	// anch holds re anchored at its start, one per branch of a top-level
	// alternation, each tried at the occurrences of its first literals
	// (req set first[k]); empty when the rule has no such literals.
	anch  []*lazyRE
	first []int32
	lead  lead
	doc   bool // see ruleSpec.doc
}

// injectionSet is the compiled injection rules and their prefilters.
type injectionSet struct {
	rules   []rule
	kw      *matcher // the rules' keywords, then req's literals, then the aimed detector's targets
	kwRule  []int32  // keyword id -> rule index
	tgt     int      // the keyword id of the first target (aimLexicon.targets)
	compact *matcher
	phrases []compactPhrase
	req     *reqIndex // literals each rule's regexp requires
	typos   *typoIndex
	foreign bitset // the other languages' rules, which the typo view skips
}

const (
	reSep   = `(?:[^\pL\pN]{1,4})`
	reGap3  = `(?:(?:[^\pL\pN]{1,4}[\pL\pN'-]+){0,3}[^\pL\pN]{1,4})`
	reGap8  = `(?:(?:[^\pL\pN]{1,4}[\pL\pN'-]+){0,8}[^\pL\pN]{1,4})`
	reBound = `[^\pL\pN]`
)

// ruleSource expands the separators of a rule source and folds its
// non-ASCII letters as the text is folded.
func ruleSource(src string) string {
	return foldPattern(strings.NewReplacer("…", reGap8, "~", reGap3, " ", reSep).Replace(src))
}

// ruleRegexp is the expression of a rule source; bounded wraps it in word
// boundary groups, its match then being submatch 1.
func ruleRegexp(src string, bounded bool) (*lazyRE, error) {
	s := ruleSource(src)
	if bounded {
		s = `(?:^|` + reBound + `)(` + s + `)(?:$|` + reBound + `)`
	}
	return newLazyRE(s)
}

// ruleBody is the rule's own expression inside the tree ruleRegexp parsed:
// the capture between the boundary groups when bounded.
func ruleBody(tree *syntax.Regexp, bounded bool) *syntax.Regexp {
	if bounded && tree.Op == syntax.OpConcat && len(tree.Sub) == 3 && tree.Sub[1].Op == syntax.OpCapture {
		return tree.Sub[1].Sub[0]
	}
	return tree
}

// anchoredRule compiles the variant of a rule that matches only at the
// start of its input, when every match starts with a literal of a known
// set: the rule is then tried at each occurrence of those literals instead
// of scanning a window from every position. A rule that is an alternation
// is split into its branches, each with its own literals, so an attempt
// runs only the branches that can start there. It returns nothing when a
// branch has no such set.
func anchoredRule(tree *syntax.Regexp, bounded, short bool) []*lazyRE {
	branches := []*syntax.Regexp{tree}
	if tree.Op == syntax.OpAlternate {
		branches = tree.Sub
	}
	var res []*lazyRE
	for _, br := range branches {
		// A one-letter first literal ("i" of "i am") is still selective
		// at word starts, which bounded rules need.
		first := firstSet(br)
		if minLen(first) < 2 && !((bounded || short) && minLen(first) == 1) {
			return nil
		}
		// ^(branch) then, when bounded, a boundary or the end.
		parts := []*syntax.Regexp{{Op: syntax.OpBeginText}, {Op: syntax.OpCapture, Cap: 1, Sub: []*syntax.Regexp{br}}}
		if bounded {
			end := &syntax.Regexp{Op: syntax.OpAlternate, Sub: []*syntax.Regexp{{Op: syntax.OpEndText}, boundClass}}
			parts = append(parts, end)
		}
		res = append(res, &lazyRE{tree: &syntax.Regexp{Op: syntax.OpConcat, Sub: parts}, first: first, pre: compilePre(br)})
	}
	return res
}

// boundClass is reBound, parsed once.
var boundClass = func() *syntax.Regexp {
	re, err := syntax.Parse(reBound, syntax.Perl)
	if err != nil {
		panic(err)
	}
	return re
}()

// compileInjection compiles the rules. Without fast, no rule is anchored
// and no literal requirement is kept: every rule's regexp scans its keyword
// windows, the reference the fast path is tested against.
func compileInjection(specs []ruleSpec, phrases []compactPhrase, fast bool) (*injectionSet, error) {
	set := &injectionSet{phrases: phrases}
	var kws []string
	var reqs [][]litSet
	for i, sp := range specs {
		bounded := !sp.raw && !sp.cjk
		src := sp.lead.source() + sp.re
		re, err := ruleRegexp(src, bounded)
		if err != nil {
			return nil, fmt.Errorf("guard: rule %s: %w", sp.name, err)
		}
		tree := re.tree
		sets := usefulSets(requirements(tree))
		r := rule{name: sp.name, cat: sp.cat, sev: sp.sev, re: re, bounded: bounded, lead: sp.lead, neg: sp.neg, doc: sp.doc}
		var anch []*lazyRE
		if fast && sp.lead == leadNone {
			anch = anchoredRule(ruleBody(tree, bounded), bounded, false)
		} else if fast {
			// The lead is checked before an attempt, so the body anchors
			// without it, and may start with a single byte.
			body, err := newLazyRE(ruleSource(sp.re))
			if err != nil {
				return nil, fmt.Errorf("guard: rule %s: %w", sp.name, err)
			}
			anch = anchoredRule(body.tree, bounded, true)
		}
		if !fast {
			sets = nil
		}
		r.anch = anch
		for _, a := range anch {
			r.first = append(r.first, int32(len(sets)))
			sets = append(sets, a.first)
		}
		reqs = append(reqs, sets)
		if sp.unless != "" {
			if r.unless, err = regexp.Compile(sp.unless); err != nil {
				return nil, fmt.Errorf("guard: rule %s: %w", sp.name, err)
			}
		}
		if sp.next != "" {
			if r.next, err = regexp.Compile(`^(?:` + sp.next + `)`); err != nil {
				return nil, fmt.Errorf("guard: rule %s: %w", sp.name, err)
			}
		}
		set.rules = append(set.rules, r)
		if len(sp.kw) == 0 {
			return nil, fmt.Errorf("guard: rule %s has no keywords", sp.name)
		}
		for _, k := range sp.kw {
			kws = append(kws, foldPattern(k))
			set.kwRule = append(set.kwRule, int32(i))
		}
	}
	set.req = newReqIndex(reqs)
	set.typos = newTypoIndex(specs, realWordsList)
	set.foreign = make(bitset, (len(specs)+63)/64)
	for i, sp := range specs {
		if otherLanguage(sp.name) {
			set.foreign.set(i)
		}
	}
	for i := range set.rules {
		r := &set.rules[i]
		for k, local := range r.first {
			r.first[k] = set.req.ruleSet[i][local]
		}
		// The branches' first sets are for anchoring: a match needs only
		// one branch's, not all of them.
		if len(r.first) > 1 {
			set.req.ruleSet[i] = set.req.ruleSet[i][:len(set.req.ruleSet[i])-len(r.first)]
		}
	}
	// A literal whose every set is the first literals of a bounded rule
	// matters only where it starts a word.
	firstOfBounded := make([]bool, set.req.nsets)
	for _, r := range set.rules {
		if r.bounded {
			for _, sid := range r.first {
				firstOfBounded[sid] = true
			}
		}
	}
	set.tgt = len(set.kwRule) + len(set.req.lits)
	targets := aimedTables().targets
	wordStart := make(bitset, (set.tgt+len(targets)+63)/64)
	for id, sets := range set.req.litSets {
		if !slices.ContainsFunc(sets, func(sid int32) bool { return !firstOfBounded[sid] }) {
			wordStart.set(len(set.kwRule) + id)
		}
	}
	// One automaton pass finds the keywords, the literals and the aimed
	// detector's targets. A pass of its own for the targets cost 9% of a
	// check of English prose.
	set.kw = newMatcher(slices.Concat(kws, set.req.lits, targets), false, wordStart)
	texts := make([]string, len(phrases))
	for i, p := range phrases {
		texts[i] = p.text
	}
	set.compact = newMatcher(texts, false, nil)
	return set, nil
}

// rawFinding is a finding before its action is known, with offsets into
// the text being scanned.
type rawFinding struct {
	detector   string
	cat        Category
	kind       Kind
	sev        Severity
	start, end int
	conf       float64
	via        string
}

// scanState is the per-call scratch of the injection scan.
type scanState struct {
	hits  bitset
	found bitset // rules already reported for this text
	last  []int32
	wins  []window
	req   reqState
	// regions are the spans of the leet view near a byte leet changed.
	regions [][2]int32
	typo    view // the typo view (typo.go)
	// doc is document mode: a negated match is reported at Medium rather
	// than passed over (match).
	doc bool
	// targets are the aimed detector's targets in the main view, as
	// (target id, start) in the order of their ends, for aimed.
	targets [][2]int32
}

// scan reports injection findings in n's views. Offsets are into the text
// n was built from.
func (set *injectionSet) scan(n *normalizer, st *scanState, out []rawFinding) []rawFinding {
	words := (len(set.rules) + 63) / 64
	if cap(st.hits) < words {
		st.hits = make(bitset, words)
		st.found = make(bitset, words)
	}
	st.hits, st.found = st.hits[:words], st.found[:words]
	st.found.clear()
	st.targets = st.targets[:0]
	out = set.scanView(n.main.b, &n.main, "", nil, st, out)
	if n.leetOK {
		// A match the leet view adds holds a byte leet changed, and a
		// match is shorter than winRadius: only the text that near such a
		// byte is scanned again. Prose with a "2nd" or an "mp3" here and
		// there is not scanned twice.
		st.regions = st.regions[:0]
		for _, c := range n.leetAt {
			s, e := max(0, c-winRadius), min(int32(len(n.leet)), c+winRadius+1)
			if k := len(st.regions) - 1; k >= 0 && st.regions[k][1] >= s {
				st.regions[k][1] = e
				continue
			}
			st.regions = append(st.regions, [2]int32{s, e})
		}
		out = set.scanView(n.leet, &n.main, "leet", st.regions, st, out)
	}
	if len(n.compact.b) > 0 {
		var seen uint16 // categories already found, by index in injectionCats
		for _, f := range out {
			seen |= catBit(f.cat)
		}
		set.compact.each(n.compact.b, func(id, start int) {
			p := &set.phrases[id]
			if seen&catBit(p.cat) != 0 {
				return
			}
			sev, conf := p.sev, 0.8
			if p.neg() && negatedAt(n.main.b, int(n.compact.idx[start])) {
				if !st.doc {
					return
				}
				sev, conf = min(sev, Medium), 0.6
			}
			seen |= catBit(p.cat)
			a, e := n.compact.orig(start, start+len(p.text))
			out = append(out, rawFinding{detector: "injection/compact", cat: p.cat, kind: KindInjection, sev: sev, start: a, end: e, conf: conf, via: "compact"})
		})
	}
	return out
}

// scanTypoView reports the English rules that match the typo view tv near
// its corrected span [lo, hi), at Medium at most: a corrected reading is
// an inference (typo.go). It runs after the other views, whose rules it
// does not report again.
func (set *injectionSet) scanTypoView(tv *view, lo, hi int, st *scanState, out []rawFinding) []rawFinding {
	for i := range st.found {
		st.found[i] |= set.foreign[i]
	}
	n := len(out)
	st.regions = append(st.regions[:0], [2]int32{int32(lo), int32(hi)})
	out = set.scanView(tv.b, tv, "typo", st.regions, st, out)
	for i := n; i < len(out); i++ {
		out[i].sev = min(out[i].sev, Medium)
	}
	return out
}

// winRadius bounds the text a rule's regexp runs on: the bytes around each
// keyword hit, merged per rule. Rule matches are far shorter, and a long
// document with a common keyword costs windows, not whole-text passes.
const winRadius = 320

type window struct {
	rule int32
	s, e int32
}

// scanView reports the rules that match b, the view v's bytes (or the leet
// view's), looking for keywords and literals in the regions of b only when
// regions is not nil.
func (set *injectionSet) scanView(b []byte, v *view, via string, regions [][2]int32, st *scanState, out []rawFinding) []rawFinding {
	if cap(st.last) < len(set.rules) {
		st.last = make([]int32, len(set.rules))
	}
	last := st.last[:len(set.rules)]
	for i := range last {
		last[i] = -1
	}
	st.wins = st.wins[:0]
	nkw := len(set.kwRule)
	set.req.reset(&st.req)
	hit := func(id, start int) {
		if id >= set.tgt {
			if via == "" { // the main view
				st.targets = append(st.targets, [2]int32{int32(id - set.tgt), int32(start)})
			}
			return
		}
		if id >= nkw {
			set.req.record(&st.req, id-nkw, start)
			return
		}
		r := set.kwRule[id]
		if st.found.has(int(r)) || set.rules[r].doc && !st.doc {
			return
		}
		s, e := max(0, start-winRadius), min(len(b), start+winRadius)
		// Hits come in the order of their ends, so a later one may start
		// a little earlier: a window only grows.
		if li := last[r]; li >= 0 && int(st.wins[li].e) >= s {
			w := &st.wins[li]
			w.s, w.e = min(w.s, int32(s)), max(w.e, int32(e))
			return
		}
		last[r] = int32(len(st.wins))
		st.wins = append(st.wins, window{r, int32(s), int32(e)})
	}
	if regions == nil {
		set.kw.each(b, hit)
	}
	for _, r := range regions {
		off := int(r[0])
		set.kw.each(b[r[0]:r[1]], func(id, start int) { hit(id, start+off) })
	}
	for _, w := range st.wins {
		i := int(w.rule)
		if st.found.has(i) {
			continue
		}
		// Widen to word boundaries, so ^ and $ in a rule stand for real ones.
		ws, we := int(w.s), int(w.e)
		for ws > 0 && isWordish(b[ws-1]) {
			ws--
		}
		for we < len(b) && isWordish(b[we]) {
			we++
		}
		if !set.req.allow(i, ws, we, &st.req) {
			continue
		}
		r := &set.rules[i]
		s, e, neg, ok := set.match(i, b, ws, we, st)
		if !ok {
			continue
		}
		a, z := v.orig(s, e)
		conf, sev := 0.9, r.sev
		if via != "" {
			conf = 0.8
		}
		if neg {
			// Negated, in a document or too often: data that talks to
			// the model about its instructions is fenced, not withheld.
			conf, sev = 0.6, min(sev, Medium)
		}
		out = append(out, rawFinding{detector: r.name, cat: r.cat, kind: KindInjection, sev: sev, start: a, end: z, conf: conf, via: via})
		st.found.set(i)
	}
	return out
}

// match finds the leftmost match of r in b[ws:we], or, for an anchored
// rule, the first match starting at one of its first literals in [ws, we).
// A match whose verb is negated (negation.go) is passed over; the first
// of them is reported instead, with neg set, when no other match is found
// and the text is a document, or at once when maxNegated of them have
// been passed over.
func (set *injectionSet) match(i int, b []byte, ws, we int, st *scanState) (s, e int, neg, ok bool) {
	r := &set.rules[i]
	var nn, ns, ne int // negated matches passed over, and the first
	negated := func(ms, me int) bool {
		if !r.neg || !negatedAt(b, ms) {
			return false
		}
		if nn == 0 {
			ns, ne = ms, me
		}
		nn++
		return true
	}
	if len(r.anch) > 0 {
		found := false
		for k, lre := range r.anch {
			// A branch is tried after an earlier one matched only if it
			// can start before that match.
			if found {
				we = min(we, s)
			}
			for _, p32 := range set.req.startsIn(&st.req, r.first[k], ws, we) {
				p := int(p32)
				if r.bounded && p > 0 && wordBefore(b, p) || !r.lead.at(b, p) {
					continue
				}
				// The attempt ends where the window does, as the
				// reference's search does: a shorter cut would miss a
				// long match and put a false word end inside a word.
				end := we
				if !set.req.allow(i, p, end, &st.req) {
					// The literals inside [p, end) only get fewer as p
					// moves right: no later start can pass.
					break
				}
				if !mayMatch(lre.pre, b[:end], p) {
					continue
				}
				loc := lre.get().FindSubmatchIndex(b[p:end])
				if loc == nil || loc[3] <= loc[2] {
					continue
				}
				ms, me := p+loc[2], p+loc[3]
				if r.excluded(b, ms, me) {
					continue
				}
				if negated(ms, me) {
					if nn == maxNegated {
						return ns, ne, true, true
					}
					continue
				}
				s, e, found = ms, me, true
				break
			}
		}
		if found {
			return s, e, false, true
		}
	} else {
		for pos := ws; pos < we; {
			loc := r.re.get().FindSubmatchIndex(b[pos:we])
			if loc == nil {
				break
			}
			s, e := loc[0], loc[1]
			if r.bounded {
				s, e = loc[2], loc[3]
			}
			s, e = s+pos, e+pos
			if r.excluded(b, s, e) {
				pos = s + 1
				continue
			}
			if negated(s, e) {
				if nn == maxNegated {
					return ns, ne, true, true
				}
				pos = s + 1
				continue
			}
			if e <= s {
				break
			}
			return s, e, false, true
		}
	}
	if nn > 0 && st.doc {
		return ns, ne, true, true
	}
	return 0, 0, false, false
}

// maxNegated is how many negated matches of one rule a window may pass
// over: a text that negates the same attack that often is suspect, and
// each costs a regexp run.
const maxNegated = 8

// excluded reports whether r's match b[s:e] is one its spec says is not
// reported: it contains unless, or next follows.
func (r *rule) excluded(b []byte, s, e int) bool {
	return r.unless != nil && r.unless.Match(b[s:e]) ||
		r.next != nil && r.next.Match(b[e:min(len(b), e+maxNext)])
}

// maxNext is how far after a match a rule's next expression may read.
const maxNext = 64

// lineStartAt reports whether p starts the text, a line or a sentence, as
// leadSentence requires.
func lineStartAt(b []byte, p int) bool {
	switch {
	case p == 0 || b[p-1] == '\n':
		return true
	case p >= 2 && b[p-1] == ' ':
		c := b[p-2]
		return c == '.' || c == '!' || c == '?' || c == '"'
	}
	return false
}

// wordBefore reports whether b[:p] ends with a letter or a number, so that
// a bounded rule cannot start at p (reBound is a non-letter, non-number).
func wordBefore(b []byte, p int) bool {
	r, _ := utf8.DecodeLastRune(b[:p])
	return unicode.IsLetter(r) || unicode.Is(unicode.N, r)
}

// isWordish reports bytes that may be inside a word: ASCII letters and
// digits, and every byte of a multi-byte rune.
func isWordish(c byte) bool { return isAlnum(c) || c >= 0x80 }

var injectionCats = []Category{InstructionOverride, RoleHijack, PromptExtraction, DelimiterInjection, ToolAbuse, DataExfiltration, Jailbreak, EncodedPayload, HiddenText}

func catBit(c Category) uint16 {
	for i, x := range injectionCats {
		if x == c {
			return 1 << i
		}
	}
	return 1 << 15
}
