package tools

// joined is the Registry Join returns.
type joined []Registry

// Join returns a Registry of every tool of regs, in their order, looked up
// in each in turn: a name taken by an earlier registry hides a later
// registry's tool of that name, in Lookup and All alike. It reads regs at
// each call, so a registry whose tools change (mcptools.Live) is followed.
// It is safe for concurrent use if regs are.
func Join(regs ...Registry) Registry { return joined(regs) }

func (j joined) Lookup(name string) (BaseTool, bool) {
	for _, r := range j {
		if t, ok := r.Lookup(name); ok {
			return t, true
		}
	}
	return nil, false
}

func (j joined) All() []BaseTool {
	var out []BaseTool
	seen := map[string]bool{}
	for _, r := range j {
		for _, t := range r.All() {
			if name := t.Spec().Name; !seen[name] {
				seen[name] = true
				out = append(out, t)
			}
		}
	}
	return out
}
