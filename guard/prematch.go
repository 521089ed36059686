package guard

import (
	"regexp/syntax"
	"slices"
	"unicode/utf8"
)

// An anchored branch is tried at every occurrence of its first literals,
// and on prose most attempts fail a word or two in: "i am" is rarely
// followed by "your developer", "system" by "override". Go's regexp pays a
// fixed price per attempt (its backtracker clears a bitmap of program size
// times input length), so the attempts were most of the rules' time.
// A preNode tree is the branch compiled for a quick walk over the text
// first, with backtracking under a step budget: mayMatch answers false
// only when no match can start at the position. Literals, classes,
// alternations, optional parts, bounded repeats and runs of a class are
// followed exactly, each node knowing the bytes a match of it can start
// with; anything else (or a spent budget) answers true and leaves the
// decision to the regexp. Like the literal requirements, it is necessary,
// never sufficient.

// preBudget bounds the steps of one mayMatch.
const preBudget = 400

// preMaxRun bounds the length of a run of a class (a word) mayMatch tries.
const preMaxRun = 64

type preOp uint8

const (
	preMaybe   preOp = iota // anything mayMatch does not follow: true
	preEmpty                // matches the empty string
	preLiteral              // lit
	preClass                // one rune of ranges (or any rune but, with nl, '\n')
	preConcat               // subs in order
	preAlt                  // one of subs
	preRepeat               // min to max copies of subs[0]; max < 0 is unbounded
)

// preNode is a node of a compiled branch.
type preNode struct {
	op       preOp
	lit      []byte
	ranges   []rune // preClass: sorted pairs; nil is any rune
	nl       bool   // preClass with nil ranges: not '\n'
	subs     []*preNode
	min, max int
	// first holds the bytes a non-empty match can start with; nullable
	// says the node can match the empty string.
	first    [4]uint64
	nullable bool
}

func (n *preNode) starts(c byte) bool { return n.first[c>>6]&(1<<(c&63)) != 0 }

func (n *preNode) addFirst(c byte) { n.first[c>>6] |= 1 << (c & 63) }

func (n *preNode) allFirst() { n.first = [4]uint64{^uint64(0), ^uint64(0), ^uint64(0), ^uint64(0)} }

// compilePre compiles re.
func compilePre(re *syntax.Regexp) *preNode {
	n := &preNode{}
	switch re.Op {
	case syntax.OpEmptyMatch:
		n.op, n.nullable = preEmpty, true
	case syntax.OpCapture:
		return compilePre(re.Sub[0])
	case syntax.OpLiteral:
		// U+FFFD also matches any invalid byte: left to the regexp.
		if re.Flags&syntax.FoldCase != 0 || len(re.Rune) == 0 || slices.Contains(re.Rune, utf8.RuneError) {
			return maybeNode()
		}
		n.op = preLiteral
		for _, r := range re.Rune {
			n.lit = utf8.AppendRune(n.lit, r)
		}
		n.addFirst(n.lit[0])
	case syntax.OpCharClass:
		n.op, n.ranges = preClass, re.Rune
		if len(re.Rune) == 0 {
			return maybeNode()
		}
		wide := false
		for k := 0; k+1 < len(re.Rune); k += 2 {
			lo, hi := re.Rune[k], re.Rune[k+1]
			for r := lo; r <= hi && r < utf8.RuneSelf; r++ {
				n.addFirst(byte(r))
			}
			wide = wide || hi >= utf8.RuneSelf
		}
		if wide {
			// Lead bytes of multi-byte runes, and of the bytes an invalid
			// sequence decodes from (U+FFFD, one byte each). Set once: a
			// class such as \pL has hundreds of ranges past ASCII.
			n.first[2], n.first[3] = ^uint64(0), ^uint64(0)
		}
	case syntax.OpAnyChar, syntax.OpAnyCharNotNL:
		n.op, n.nl = preClass, re.Op == syntax.OpAnyCharNotNL
		n.allFirst()
	case syntax.OpConcat:
		n.op, n.nullable = preConcat, true
		for _, s := range re.Sub {
			sub := compilePre(s)
			n.subs = append(n.subs, sub)
			if n.nullable {
				for k := range n.first {
					n.first[k] |= sub.first[k]
				}
			}
			n.nullable = n.nullable && sub.nullable
		}
	case syntax.OpAlternate:
		n.op = preAlt
		for _, s := range re.Sub {
			sub := compilePre(s)
			n.subs = append(n.subs, sub)
			for k := range n.first {
				n.first[k] |= sub.first[k]
			}
			n.nullable = n.nullable || sub.nullable
		}
	case syntax.OpQuest, syntax.OpStar, syntax.OpPlus, syntax.OpRepeat:
		sub := compilePre(re.Sub[0])
		n.op, n.subs, n.first = preRepeat, []*preNode{sub}, sub.first
		switch re.Op {
		case syntax.OpQuest:
			n.min, n.max = 0, 1
		case syntax.OpStar:
			n.min, n.max = 0, -1
		case syntax.OpPlus:
			n.min, n.max = 1, -1
		default:
			n.min, n.max = re.Min, re.Max
		}
		n.nullable = n.min == 0 || sub.nullable
		if n.max < 0 && sub.op != preClass {
			// An unbounded repeat of more than one rune is not followed.
			return maybeNode()
		}
	default:
		return maybeNode()
	}
	return n
}

// maybeNode stands for what mayMatch does not follow: it may match
// anything, the empty string included.
func maybeNode() *preNode {
	n := &preNode{op: preMaybe, nullable: true}
	n.allFirst()
	return n
}

// preCont is what remains to match after a node: the rest of a
// concatenation, the remaining copies of a repeat, then next.
type preCont struct {
	seq  []*preNode // the rest of a concatenation
	rep  *preNode   // a repeat whose copies remain
	left int        // copies of rep that must still match
	opt  int        // copies of rep that may still match
	next *preCont
}

// mayMatch reports whether n may match a prefix of b[i:]. False is a
// proof that it cannot.
func mayMatch(n *preNode, b []byte, i int) bool {
	budget := preBudget
	return preMatch(n, nil, b, i, &budget)
}

func preMatch(n *preNode, next *preCont, b []byte, i int, budget *int) bool {
	if *budget--; *budget < 0 {
		return true
	}
	if !n.nullable && (i >= len(b) || !n.starts(b[i])) {
		return false
	}
	switch n.op {
	case preMaybe:
		return true
	case preEmpty:
		return preNext(next, b, i, budget)
	case preLiteral:
		if len(b)-i < len(n.lit) || string(b[i:i+len(n.lit)]) != string(n.lit) {
			return false
		}
		return preNext(next, b, i+len(n.lit), budget)
	case preClass:
		size := n.at(b, i)
		if size == 0 {
			return false
		}
		return preNext(next, b, i+size, budget)
	case preConcat:
		if len(n.subs) == 0 {
			return preNext(next, b, i, budget)
		}
		return preMatch(n.subs[0], &preCont{seq: n.subs[1:], next: next}, b, i, budget)
	case preAlt:
		// A branch that cannot start with b[i] is passed over here, not
		// in a call: the rules' alternations have dozens of branches.
		for _, sub := range n.subs {
			if !sub.nullable && (i >= len(b) || !sub.starts(b[i])) {
				continue
			}
			if preMatch(sub, next, b, i, budget) {
				return true
			}
		}
		return false
	}
	// preRepeat
	if n.max >= 0 && n.max <= 8 {
		return preNext(&preCont{rep: n, left: n.min, opt: n.max - n.min, next: next}, b, i, budget)
	}
	return preRun(n, next, b, i, budget)
}

// preNext matches what c says remains.
func preNext(c *preCont, b []byte, i int, budget *int) bool {
	switch {
	case c == nil:
		return true
	case c.rep != nil:
		sub := c.rep.subs[0]
		if c.left > 0 {
			return preMatch(sub, &preCont{rep: c.rep, left: c.left - 1, opt: c.opt, next: c.next}, b, i, budget)
		}
		if c.opt > 0 && preMatch(sub, &preCont{rep: c.rep, opt: c.opt - 1, next: c.next}, b, i, budget) {
			return true
		}
		return preNext(c.next, b, i, budget)
	case len(c.seq) == 0:
		return preNext(c.next, b, i, budget)
	}
	return preMatch(c.seq[0], &preCont{seq: c.seq[1:], next: c.next}, b, i, budget)
}

// preRun matches a repeat of a class with more than 8 copies allowed (a
// word, a run of spaces): it tries every length of the run the text has,
// up to preMaxRun, longest first. A longer run is left to the regexp.
func preRun(n *preNode, next *preCont, b []byte, i int, budget *int) bool {
	sub := n.subs[0]
	if sub.op != preClass {
		return true
	}
	var ends [preMaxRun + 1]int
	ends[0] = i
	k := 0
	for k < preMaxRun && (n.max < 0 || k < n.max) {
		size := sub.at(b, ends[k])
		if size == 0 {
			break
		}
		k++
		ends[k] = ends[k-1] + size
	}
	if k == preMaxRun && sub.at(b, ends[k]) > 0 {
		return true
	}
	for ; k >= n.min; k-- {
		if preNext(next, b, ends[k], budget) || *budget < 0 {
			return true
		}
	}
	return false
}

// at returns the size of the rune at b[i] if the class matches it, else 0
// (also at the end of b). An invalid byte is U+FFFD, as for the regexp.
func (n *preNode) at(b []byte, i int) int {
	if i >= len(b) {
		return 0
	}
	r, size := rune(b[i]), 1
	if r >= utf8.RuneSelf {
		r, size = utf8.DecodeRune(b[i:])
	}
	if n.ranges == nil {
		if n.nl && r == '\n' {
			return 0
		}
		return size
	}
	rs := n.ranges
	for k := 0; k+1 < len(rs); k += 2 {
		if r < rs[k] {
			return 0
		}
		if r <= rs[k+1] {
			return size
		}
	}
	return 0
}
