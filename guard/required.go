package guard

import (
	"regexp/syntax"
	"slices"
	"strings"
)

// A rule's regexp runs only on windows of the text that hold one of its
// keywords. On real prose a keyword is common ("act", "prompt", "rules"),
// and running the regexps was nine tenths of the guard's time. So each rule
// also carries the literals its regexp requires, read off its syntax tree:
// a list of sets, every match containing one literal of each set (the
// conjunction of disjunctions of the trigram-index method, with whole
// literals). One more automaton pass over the view finds them all, and a
// window whose rule is missing a set is skipped without running the regexp.
// The requirement is necessary, never sufficient: the regexp still decides.

// maxReqLits bounds a set: a wider alternation filters little.
const maxReqLits = 96

// litSet is one requirement: a match contains one of lits.
type litSet []string

// requirements returns the literal sets every match of re contains.
func requirements(re *syntax.Regexp) []litSet {
	switch re.Op {
	case syntax.OpLiteral:
		if re.Flags&syntax.FoldCase != 0 || len(re.Rune) == 0 {
			return nil
		}
		return []litSet{{string(re.Rune)}}
	case syntax.OpCapture:
		return requirements(re.Sub[0])
	case syntax.OpPlus:
		return requirements(re.Sub[0])
	case syntax.OpRepeat:
		if re.Min >= 1 {
			return requirements(re.Sub[0])
		}
	case syntax.OpConcat:
		var out []litSet
		for _, s := range re.Sub {
			out = append(out, requirements(s)...)
		}
		return out
	case syntax.OpAlternate:
		var union litSet
		for _, s := range re.Sub {
			best := bestSet(requirements(s))
			if best == nil {
				return nil
			}
			union = append(union, best...)
		}
		slices.Sort(union)
		union = slices.Compact(union)
		if len(union) > maxReqLits {
			return nil
		}
		return []litSet{union}
	}
	return nil
}

// firstSet returns the literals one of which every match of re starts
// with, or nil.
func firstSet(re *syntax.Regexp) litSet {
	set, _ := prefixes(re)
	return set
}

// maxPrefixes bounds the cross product of a concatenation's prefixes.
const maxPrefixes = 256

// prefixes returns the literals one of which every match of re starts
// with, and whether re matches exactly one of them (nothing more).
func prefixes(re *syntax.Regexp) (litSet, bool) {
	switch re.Op {
	case syntax.OpLiteral:
		if re.Flags&syntax.FoldCase != 0 || len(re.Rune) == 0 {
			return nil, false
		}
		return litSet{string(re.Rune)}, true
	case syntax.OpCharClass:
		// A small class is a few one-rune literals.
		var out litSet
		for i := 0; i+1 < len(re.Rune); i += 2 {
			for r := re.Rune[i]; r <= re.Rune[i+1]; r++ {
				if len(out) == 4 {
					return nil, false
				}
				out = append(out, string(r))
			}
		}
		return out, len(out) > 0
	case syntax.OpCapture:
		return prefixes(re.Sub[0])
	case syntax.OpPlus:
		set, _ := prefixes(re.Sub[0])
		return set, false
	case syntax.OpQuest:
		set, full := prefixes(re.Sub[0])
		if set == nil {
			return nil, false
		}
		return compact(append(set, "")), full
	case syntax.OpRepeat:
		if re.Min >= 1 {
			set, _ := prefixes(re.Sub[0])
			return set, false
		}
	case syntax.OpConcat:
		acc, whole := litSet{""}, true
		for _, sub := range re.Sub {
			set, full := prefixes(sub)
			if set == nil || len(acc)*len(set) > maxPrefixes {
				whole = false
				break
			}
			next := make(litSet, 0, len(acc)*len(set))
			for _, a := range acc {
				for _, b := range set {
					next = append(next, a+b)
				}
			}
			acc = next
			if !full {
				return compact(acc), false
			}
		}
		if len(acc) == 1 && acc[0] == "" {
			return nil, false
		}
		return compact(acc), whole
	case syntax.OpAlternate:
		var union litSet
		full := true
		for _, sub := range re.Sub {
			set, f := prefixes(sub)
			if set == nil {
				return nil, false
			}
			union = append(union, set...)
			full = full && f
		}
		return compact(union), full
	}
	return nil, false
}

func compact(s litSet) litSet {
	slices.Sort(s)
	return slices.Compact(s)
}

// bestSet is the most selective set: the one whose shortest literal is
// longest, then the one with fewest literals.
func bestSet(sets []litSet) litSet {
	var best litSet
	bestMin := 0
	for _, s := range sets {
		m := minLen(s)
		if m > bestMin || m == bestMin && best != nil && len(s) < len(best) {
			best, bestMin = s, m
		}
	}
	return best
}

func minLen(s litSet) int {
	m := -1
	for _, l := range s {
		if m < 0 || len(l) < m {
			m = len(l)
		}
	}
	return max(m, 0)
}

// usefulSets drops the sets that filter nothing: those with a literal
// shorter than 3 bytes (a separator, one letter), and duplicates.
func usefulSets(sets []litSet) []litSet {
	var out []litSet
	seen := map[string]bool{}
	for _, s := range sets {
		if minLen(s) < 3 {
			continue
		}
		k := strings.Join(s, "\x00")
		if seen[k] {
			continue
		}
		seen[k] = true
		out = append(out, s)
	}
	return out
}

// reqIndex is the compiled requirements of every rule.
type reqIndex struct {
	lits    []string  // literal id -> literal
	litSets [][]int32 // literal id -> set ids holding it
	setLits [][]int32 // set id -> literal ids it holds
	ruleSet [][]int32 // rule -> set ids it requires
	nsets   int
}

func newReqIndex(ruleSets [][]litSet) *reqIndex {
	ix := &reqIndex{ruleSet: make([][]int32, len(ruleSets))}
	litID := map[string]int32{}
	var lits []string
	for r, sets := range ruleSets {
		for _, s := range sets {
			sid := int32(ix.nsets)
			ix.nsets++
			ix.ruleSet[r] = append(ix.ruleSet[r], sid)
			ix.setLits = append(ix.setLits, nil)
			for _, l := range s {
				id, ok := litID[l]
				if !ok {
					id = int32(len(lits))
					litID[l] = id
					lits = append(lits, l)
					ix.litSets = append(ix.litSets, nil)
				}
				ix.litSets[id] = append(ix.litSets[id], sid)
				ix.setLits[sid] = append(ix.setLits[sid], id)
			}
		}
	}
	ix.lits = lits
	return ix
}

// reqState is the per-view scratch of the requirement check: each
// literal's occurrences. A set's are looked up in its literals' only when
// a rule that requires the set is checked. Prose is full of the commonest
// literals ("a", "the", "you"), most of which are in several sets, and the
// sets of most rules are never asked about: one append a literal
// occurrence is what the automaton pass can afford.
type reqState struct {
	lit     [][]int32 // literal id -> start offsets, ascending
	touched []int32   // the literals with an occurrence, which reset empties
	buf     []int32   // startsIn's result
}

// reset empties st for a new view. Only the literals the last view found
// are emptied: a short message costs what it found, not the number of
// literals.
func (ix *reqIndex) reset(st *reqState) {
	if len(st.lit) != len(ix.lits) {
		st.lit = make([][]int32, len(ix.lits))
		st.touched = st.touched[:0]
	}
	for _, id := range st.touched {
		st.lit[id] = st.lit[id][:0]
	}
	st.touched = st.touched[:0]
}

// record notes an occurrence of literal id at start. A literal's
// occurrences come in the order of their ends, which for one literal is
// the order of their starts.
func (ix *reqIndex) record(st *reqState, id, start int) {
	l := st.lit[id]
	if len(l) == 0 {
		st.touched = append(st.touched, int32(id))
	}
	st.lit[id] = append(l, int32(start))
}

// startsIn returns the start offsets of set's literals inside [s, e),
// ascending. The result is valid until the next call.
func (ix *reqIndex) startsIn(st *reqState, set int32, s, e int) []int32 {
	out := st.buf[:0]
	from := 0 // literals contributing
	for _, id := range ix.setLits[set] {
		occ := st.lit[id]
		if len(occ) == 0 {
			continue
		}
		i, _ := slices.BinarySearch(occ, int32(s))
		j, _ := slices.BinarySearch(occ[i:], int32(e))
		if j > 0 {
			out = append(out, occ[i:i+j]...)
			from++
		}
	}
	if from > 1 {
		slices.Sort(out)
		out = slices.Compact(out)
	}
	st.buf = out
	return out
}

// allow reports whether every set of rule has an occurrence inside [s, e).
func (ix *reqIndex) allow(rule int, s, e int, st *reqState) bool {
	for _, sid := range ix.ruleSet[rule] {
		if !ix.occursIn(st, sid, s, e) {
			return false
		}
	}
	return true
}

// occursIn reports whether a literal of set occurs inside [s, e).
func (ix *reqIndex) occursIn(st *reqState, set int32, s, e int) bool {
	for _, id := range ix.setLits[set] {
		occ := st.lit[id]
		if len(occ) == 0 {
			continue
		}
		n := int32(len(ix.lits[id]))
		// The first occurrence starting at s or after; it must end by e.
		i, _ := slices.BinarySearch(occ, int32(s))
		if i < len(occ) && occ[i]+n <= int32(e) {
			return true
		}
	}
	return false
}
