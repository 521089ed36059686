package guard

import (
	"encoding/binary"
	"fmt"
	"slices"
)

// matcher is an Aho-Corasick automaton over bytes, compiled to full DFAs on
// alphabets reduced to the bytes the keywords use. It is the keyword
// prefilter: a rule's regexp runs only when one of its keywords occurs, and
// one pass over the text finds every keyword of every rule.
//
// The pass is bound by memory, not by arithmetic: one table lookup per
// byte, in a table that is large when the keywords are many. So the table
// is kept small and its hot part dense. Keywords with a byte outside ASCII
// (the other languages') have an automaton of their own, which runs only on
// text that has such a byte: the ASCII one then needs a third of the
// alphabet and half the states. States are 16 bits, numbered breadth first
// (the shallow states prose lives in share cache lines), and the states
// that end a keyword are numbered last, so that "is there an output" is a
// comparison rather than a second lookup.
type matcher struct {
	lens  []int32 // keyword id -> length
	ascii *dfa    // the keywords that are all ASCII; nil if none
	wide  *dfa    // the others; nil if none
	// wordStart holds the keywords reported only where they start a
	// word: not after an ASCII letter or digit. A one-letter literal ("i"
	// of "i am") is in most words of prose, and its occurrences inside
	// words would only be skipped later.
	wordStart bitset
}

// dfa is one automaton of a matcher.
//
// The table is class-major: the next state of s on a byte is
// delta[off[byte]+s], where off[byte] is the byte's class times the
// number of states, so a step is an add and a load, with no multiply on
// the chain of dependent loads the pass is. And for one byte the states
// prose lives in are next to each other: the few hundred states that make
// nine steps in ten of prose read, for the few dozen bytes prose uses,
// about 20 KB of table, where rows of 48 classes made that 45 KB, more than
// a first-level cache.
type dfa struct {
	class    [256]uint8  // byte -> alphabet class; 0 for bytes in no keyword
	off      [256]uint32 // byte -> its class times the number of states
	n        int         // classes, including 0
	delta    []uint16    // class*states + state -> state
	firstOut uint16      // states from here on end a keyword
	outOff   []int32     // outputs of output state firstOut+k: outIDs[outOff[k]:outOff[k+1]]
	outIDs   []int32     // keyword ids, longest first
	maxLen   int         // the longest keyword, in bytes
}

// maxStates is the most states a dfa may have: they are 16 bits.
const maxStates = 1 << 16

// newMatcher compiles keywords. With fold, ASCII letters match either case
// (keywords must then be lower case). The keywords in wordStart (which may
// be nil) are reported only where they start a word. It panics if an
// automaton would need more than 65,536 states: keyword sets are the
// package's own.
func newMatcher(keywords []string, fold bool, wordStart bitset) *matcher {
	m := &matcher{lens: make([]int32, len(keywords)), wordStart: wordStart}
	var asciiIDs, wideIDs []int32
	for id, k := range keywords {
		m.lens[id] = int32(len(k))
		if isASCII(k) {
			asciiIDs = append(asciiIDs, int32(id))
		} else {
			wideIDs = append(wideIDs, int32(id))
		}
	}
	if len(asciiIDs) > 0 {
		m.ascii = newDFA(keywords, asciiIDs, fold, wordStart)
	}
	if len(wideIDs) > 0 {
		m.wide = newDFA(keywords, wideIDs, fold, wordStart)
	}
	return m
}

func newDFA(keywords []string, ids []int32, fold bool, wordStart bitset) *dfa {
	d := &dfa{}
	for _, id := range ids {
		k := keywords[id]
		for i := 0; i < len(k); i++ {
			if d.class[k[i]] == 0 {
				d.n++
				d.class[k[i]] = uint8(d.n)
			}
		}
	}
	d.n++
	if fold {
		for c := 'A'; c <= 'Z'; c++ {
			d.class[c] = d.class[c+'a'-'A']
		}
	}
	// The trie. A node's edges are few (the root's are the most, one per
	// class), and a slice searched in order builds the automaton in a
	// third of the time a map per node did.
	type edge struct {
		c uint8
		t int32
	}
	type node struct {
		next []edge // by class, once the trie is built
		out  []int32
		path string // the bytes that lead here
	}
	nodes := []node{{}}
	for _, id := range ids {
		k := keywords[id]
		d.maxLen = max(d.maxLen, len(k))
		s := int32(0)
		for i := 0; i < len(k); i++ {
			c := d.class[k[i]]
			j := slices.IndexFunc(nodes[s].next, func(e edge) bool { return e.c == c })
			if j < 0 {
				t := int32(len(nodes))
				nodes = append(nodes, node{path: k[:i+1]})
				nodes[s].next = append(nodes[s].next, edge{c, t})
				s = t
				continue
			}
			s = nodes[s].next[j].t
		}
		nodes[s].out = append(nodes[s].out, id)
	}
	if len(nodes) > maxStates {
		panic(fmt.Sprintf("guard: %d keywords need %d automaton states, more than %d", len(ids), len(nodes), maxStates))
	}
	for i := range nodes {
		slices.SortFunc(nodes[i].next, func(a, b edge) int { return int(a.c) - int(b.c) })
	}
	// Breadth first: failure links resolved into a full transition table,
	// over trie node numbers for now. A state's row is its failure state's
	// (complete, as that is nearer the root), with its own edges over it.
	delta := make([]int32, len(nodes)*d.n)
	fail := make([]int32, len(nodes))
	order := make([]int32, 1, len(nodes)) // breadth-first order, root first
	for _, e := range nodes[0].next {
		delta[e.c] = e.t
		order = append(order, e.t)
	}
	for q := 1; q < len(order); q++ {
		s := order[q]
		nodes[s].out = append(nodes[s].out, nodes[fail[s]].out...)
		row := delta[int(s)*d.n : int(s+1)*d.n]
		copy(row, delta[int(fail[s])*d.n:int(fail[s]+1)*d.n])
		for _, e := range nodes[s].next {
			fail[e.t] = row[e.c] // the failure state's move on c
			row[e.c] = e.t
			order = append(order, e.t)
		}
	}
	// A state is reached only after the bytes of its path (up to case
	// with fold). An output that is shorter than the path and must start
	// a word is dropped where the path has a letter or digit before it:
	// the "a" at the end of "data" is never reported, and the state is
	// not an output state for it.
	for s := range nodes {
		n := &nodes[s]
		n.out = slices.DeleteFunc(n.out, func(id int32) bool {
			l := len(keywords[id])
			return wordStart.has(int(id)) && l < len(n.path) && isAlnum(n.path[len(n.path)-l-1])
		})
	}
	// Renumber: states without outputs first, then those with, each in
	// breadth-first order.
	num := make([]uint16, len(nodes))
	next := 0
	for pass := 0; pass < 2; pass++ {
		if pass == 1 {
			d.firstOut = uint16(next)
		}
		for _, s := range order {
			if (len(nodes[s].out) > 0) == (pass == 1) {
				num[s] = uint16(next)
				next++
			}
		}
	}
	states := len(nodes)
	d.delta = make([]uint16, states*d.n)
	for s := range nodes {
		for c := 0; c < d.n; c++ {
			d.delta[c*states+int(num[s])] = num[delta[s*d.n+c]]
		}
	}
	for b := range d.off {
		d.off[b] = uint32(int(d.class[b]) * states)
	}
	d.outOff = make([]int32, 0, len(nodes)-int(d.firstOut)+1)
	for _, s := range order {
		if len(nodes[s].out) > 0 {
			d.outOff = append(d.outOff, int32(len(d.outIDs)))
			d.outIDs = append(d.outIDs, nodes[s].out...)
		}
	}
	d.outOff = append(d.outOff, int32(len(d.outIDs)))
	return d
}

// step advances d from state s on b[i], calling fn for the keywords that
// end there.
func (d *dfa) step(s uint16, b []byte, i int, m *matcher, fn func(id, start int)) uint16 {
	s = d.delta[int(d.off[b[i]])+int(s)]
	if s >= d.firstOut {
		d.emit(s, b, i, m, fn)
	}
	return s
}

// each calls fn(id, start) for every keyword occurrence in b, in the order
// of their ends (and for one end, longest first within each automaton).
//
// The wide automaton runs only near bytes outside ASCII: an occurrence of
// one of its keywords holds such a byte q, so it lies in [q-L+1, q+L) for
// L the longest wide keyword. Prose with an accent or a curly quote here
// and there pays for two automata only around them.
func (m *matcher) each(b []byte, fn func(id, start int)) {
	a, w := m.ascii, m.wide
	var s uint16
	for i := 0; i < len(b); {
		// The next region the wide automaton must see: [rs, re).
		rs, re := len(b), len(b)
		if w != nil {
			if q := nextNonASCII(b, i); q < len(b) {
				rs, re = max(i, q-w.maxLen+1), min(len(b), q+w.maxLen)
			}
		}
		if a != nil {
			s = a.run(s, b, i, rs, m, fn)
		}
		if rs == len(b) {
			return
		}
		var ws uint16
		j := rs
		for j < re {
			c := b[j]
			if a != nil {
				s = a.step(s, b, j, m, fn)
			}
			ws = w.step(ws, b, j, m, fn)
			j++
			if c >= 0x80 {
				re = min(len(b), j-1+w.maxLen)
			}
			if j == re && re < len(b) {
				// Stay in the region if the next byte outside ASCII is
				// close enough that an occurrence holding it could start
				// before here.
				if q := nextNonASCII(b, j); q < len(b) && q-w.maxLen+1 < j {
					re = min(len(b), q+w.maxLen)
				}
			}
		}
		i = re
	}
}

// run advances d over b[i:e] from state s and returns the state it ends in.
func (d *dfa) run(s uint16, b []byte, i, e int, m *matcher, fn func(id, start int)) uint16 {
	delta, off, first := d.delta, &d.off, d.firstOut
	for ; i < e; i++ {
		s = delta[int(off[b[i]])+int(s)]
		if s >= first {
			d.emit(s, b, i, m, fn)
		}
	}
	return s
}

// emit reports the keywords that end at b[i] in output state s.
func (d *dfa) emit(s uint16, b []byte, i int, m *matcher, fn func(id, start int)) {
	k := s - d.firstOut
	for _, id := range d.outIDs[d.outOff[k]:d.outOff[k+1]] {
		start := i + 1 - int(m.lens[id])
		if m.wordStart.has(int(id)) && start > 0 && isAlnum(b[start-1]) {
			continue
		}
		fn(int(id), start)
	}
}

// nextNonASCII returns the index of the first byte of b from i on that is
// 0x80 or above, or len(b).
func nextNonASCII(b []byte, i int) int {
	for ; i+8 <= len(b); i += 8 {
		if binary.LittleEndian.Uint64(b[i:])&0x8080808080808080 != 0 {
			break
		}
	}
	for ; i < len(b); i++ {
		if b[i] >= 0x80 {
			return i
		}
	}
	return len(b)
}

// bitset is a set of small integers (rule ids).
type bitset []uint64

func (b bitset) set(i int)      { b[i>>6] |= 1 << (i & 63) }
func (b bitset) has(i int) bool { return b != nil && b[i>>6]&(1<<(i&63)) != 0 }
func (b bitset) clear() {
	for i := range b {
		b[i] = 0
	}
}
