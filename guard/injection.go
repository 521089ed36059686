package guard

import (
	"fmt"
	"regexp"
	"strings"
)

// ruleSpec is the source of one injection rule; see injection_rules.go.
type ruleSpec struct {
	name   string
	cat    Category
	sev    Severity
	kw     []string // prefilter keywords: every match contains one
	re     string
	unless string // a match containing this is not reported
	raw    bool   // no word-boundary check (markup rules)
	cjk    bool   // no word-boundary check (scripts without spaces)
}

type compactPhrase struct {
	text string
	cat  Category
	sev  Severity
}

type rule struct {
	name    string
	cat     Category
	sev     Severity
	re      *regexp.Regexp
	unless  *regexp.Regexp
	bounded bool // re wraps the rule in boundary groups; submatch 1 is the match
}

// injectionSet is the compiled injection rules and their prefilters.
type injectionSet struct {
	rules   []rule
	kw      *matcher
	kwRule  []int32 // keyword id -> rule index
	compact *matcher
	phrases []compactPhrase
}

const (
	reSep   = `(?:[^\pL\pN]{1,4})`
	reGap3  = `(?:(?:[^\pL\pN]{1,4}[\pL\pN'-]+){0,3}[^\pL\pN]{1,4})`
	reGap8  = `(?:(?:[^\pL\pN]{1,4}[\pL\pN'-]+){0,8}[^\pL\pN]{1,4})`
	reBound = `[^\pL\pN]`
)

// compileRuleSource expands the separators of a rule source and folds its
// non-ASCII letters as the text is folded.
func compileRuleSource(src string, bounded bool) (*regexp.Regexp, error) {
	s := strings.NewReplacer("…", reGap8, "~", reGap3, " ", reSep).Replace(src)
	s = foldPattern(s)
	if bounded {
		s = `(?:^|` + reBound + `)(` + s + `)(?:$|` + reBound + `)`
	}
	return regexp.Compile(s)
}

func compileInjection(specs []ruleSpec, phrases []compactPhrase) (*injectionSet, error) {
	set := &injectionSet{phrases: phrases}
	var kws []string
	for i, sp := range specs {
		bounded := !sp.raw && !sp.cjk
		re, err := compileRuleSource(sp.re, bounded)
		if err != nil {
			return nil, fmt.Errorf("guard: rule %s: %w", sp.name, err)
		}
		r := rule{name: sp.name, cat: sp.cat, sev: sp.sev, re: re, bounded: bounded}
		if sp.unless != "" {
			if r.unless, err = regexp.Compile(sp.unless); err != nil {
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
	set.kw = newMatcher(kws, false)
	texts := make([]string, len(phrases))
	for i, p := range phrases {
		texts[i] = p.text
	}
	set.compact = newMatcher(texts, false)
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
	out = set.scanView(n.main.b, &n.main, "", st, out)
	if n.leetOK {
		out = set.scanView(n.leet, &n.main, "leet", st, out)
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
			seen |= catBit(p.cat)
			a, e := n.compact.orig(start, start+len(p.text))
			out = append(out, rawFinding{detector: "injection/compact", cat: p.cat, kind: KindInjection, sev: p.sev, start: a, end: e, conf: 0.8, via: "compact"})
		})
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

func (set *injectionSet) scanView(b []byte, v *view, via string, st *scanState, out []rawFinding) []rawFinding {
	if cap(st.last) < len(set.rules) {
		st.last = make([]int32, len(set.rules))
	}
	last := st.last[:len(set.rules)]
	for i := range last {
		last[i] = -1
	}
	st.wins = st.wins[:0]
	set.kw.each(b, func(id, start int) {
		r := set.kwRule[id]
		if st.found.has(int(r)) {
			return
		}
		s, e := max(0, start-winRadius), min(len(b), start+winRadius)
		if li := last[r]; li >= 0 && int(st.wins[li].e) >= s {
			st.wins[li].e = int32(e)
			return
		}
		last[r] = int32(len(st.wins))
		st.wins = append(st.wins, window{r, int32(s), int32(e)})
	})
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
		r := &set.rules[i]
		for pos := ws; pos < we; {
			loc := r.re.FindSubmatchIndex(b[pos:we])
			if loc == nil {
				break
			}
			s, e := loc[0], loc[1]
			if r.bounded {
				s, e = loc[2], loc[3]
			}
			s, e = s+pos, e+pos
			if r.unless != nil && r.unless.Match(b[s:e]) {
				pos = s + 1
				continue
			}
			if e <= s {
				break
			}
			a, z := v.orig(s, e)
			conf := 0.9
			if via != "" {
				conf = 0.8
			}
			out = append(out, rawFinding{detector: r.name, cat: r.cat, kind: KindInjection, sev: r.sev, start: a, end: z, conf: conf, via: via})
			st.found.set(i)
			break
		}
	}
	return out
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
