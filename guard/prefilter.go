package guard

// matcher is an Aho-Corasick automaton over bytes, compiled to a full DFA
// on an alphabet reduced to the bytes the keywords use. It is the keyword
// prefilter: a rule's regexp runs only when one of its keywords occurs, and
// one pass over the text finds every keyword of every rule.
type matcher struct {
	class  [256]uint8 // byte -> alphabet class; 0 for bytes in no keyword
	n      int        // classes, including 0
	delta  []int32    // state*n + class -> state
	outOff []int32    // outputs of state s: outIDs[outOff[s]:outOff[s+1]]
	outIDs []int32
	lens   []int32 // keyword id -> length
}

// newMatcher compiles keywords. With fold, ASCII letters match either case
// (keywords must then be lower case).
func newMatcher(keywords []string, fold bool) *matcher {
	m := &matcher{lens: make([]int32, len(keywords))}
	for _, k := range keywords {
		for i := 0; i < len(k); i++ {
			if m.class[k[i]] == 0 {
				m.n++
				m.class[k[i]] = uint8(m.n)
			}
		}
	}
	m.n++
	if fold {
		for c := 'A'; c <= 'Z'; c++ {
			m.class[c] = m.class[c+'a'-'A']
		}
	}
	// Build the trie.
	type node struct {
		next map[uint8]int32
		out  []int32
	}
	nodes := []node{{next: map[uint8]int32{}}}
	for id, k := range keywords {
		m.lens[id] = int32(len(k))
		s := int32(0)
		for i := 0; i < len(k); i++ {
			c := m.class[k[i]]
			t, ok := nodes[s].next[c]
			if !ok {
				t = int32(len(nodes))
				nodes = append(nodes, node{next: map[uint8]int32{}})
				nodes[s].next[c] = t
			}
			s = t
		}
		nodes[s].out = append(nodes[s].out, int32(id))
	}
	// Breadth-first: failure links resolved into a full transition table.
	m.delta = make([]int32, len(nodes)*m.n)
	fail := make([]int32, len(nodes))
	queue := make([]int32, 0, len(nodes))
	for c := 1; c < m.n; c++ {
		if t, ok := nodes[0].next[uint8(c)]; ok {
			m.delta[c] = t
			queue = append(queue, t)
		}
	}
	for len(queue) > 0 {
		s := queue[0]
		queue = queue[1:]
		nodes[s].out = append(nodes[s].out, nodes[fail[s]].out...)
		for c := 1; c < m.n; c++ {
			if t, ok := nodes[s].next[uint8(c)]; ok {
				fail[t] = m.delta[int(fail[s])*m.n+c]
				m.delta[int(s)*m.n+c] = t
				queue = append(queue, t)
			} else {
				m.delta[int(s)*m.n+c] = m.delta[int(fail[s])*m.n+c]
			}
		}
	}
	m.outOff = make([]int32, len(nodes)+1)
	for s := range nodes {
		m.outOff[s] = int32(len(m.outIDs))
		m.outIDs = append(m.outIDs, nodes[s].out...)
	}
	m.outOff[len(nodes)] = int32(len(m.outIDs))
	return m
}

// each calls fn(id, start) for every keyword occurrence in b.
func (m *matcher) each(b []byte, fn func(id, start int)) {
	s := int32(0)
	n := int32(m.n)
	for i, c := range b {
		s = m.delta[s*n+int32(m.class[c])]
		if lo, hi := m.outOff[s], m.outOff[s+1]; lo < hi {
			for _, id := range m.outIDs[lo:hi] {
				fn(int(id), i+1-int(m.lens[id]))
			}
		}
	}
}

// eachString is each for a string.
func (m *matcher) eachString(b string, fn func(id, start int)) {
	s := int32(0)
	n := int32(m.n)
	for i := 0; i < len(b); i++ {
		s = m.delta[s*n+int32(m.class[b[i]])]
		if lo, hi := m.outOff[s], m.outOff[s+1]; lo < hi {
			for _, id := range m.outIDs[lo:hi] {
				fn(int(id), i+1-int(m.lens[id]))
			}
		}
	}
}

// bitset is a set of small integers (rule ids).
type bitset []uint64

func (b bitset) set(i int)      { b[i>>6] |= 1 << (i & 63) }
func (b bitset) has(i int) bool { return b[i>>6]&(1<<(i&63)) != 0 }
func (b bitset) clear() {
	for i := range b {
		b[i] = 0
	}
}
