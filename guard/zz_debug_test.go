package guard

import (
	"bufio"
	"fmt"
	"math/bits"
	"os"
	"strings"
	"testing"
)

var classNames = []string{"Dismiss", "Weak", "Reveal", "Rules", "Limit", "Gate", "Own", "Your", "Strong", "Mine", "Void", "AsIf", "Treat", "Supersede", "New", "Ask", "Say", "Question", "Lead", "Neg", "Above", "Output", "Shape", "Query", "All", "Become", "Free", "Without", "Censor", "Mode", "SwitchOn", "Data", "Send", "Self", "Answer", "Append", "Secret", "OnlySay", "Told", "AtStart", "Sys", "Of", "Routine", "Code", "Snippet"}

func cls(c aimClass) string {
	var s []string
	for c != 0 {
		i := bits.TrailingZeros64(uint64(c))
		s = append(s, classNames[i])
		c &^= 1 << i
	}
	return strings.Join(s, "+")
}

func TestZZDebugHits(t *testing.T) {
	f := os.Getenv("ZZ")
	if f == "" {
		t.Skip()
	}
	fh, _ := os.Open(f)
	sc := bufio.NewScanner(fh)
	lx := aimedTables()
	for sc.Scan() {
		text := sc.Text()
		var n normalizer
		n.normalize(text)
		b := n.main.b
		fmt.Printf("== %s\n   %s\n  ", text, b)
		lx.m.each(b, func(id, start int) {
			end := start + int(lx.m.lens[id])
			e := &lx.entries[id]
			if e.ok(b, start, end) {
				fmt.Printf(" [%s:%s]", b[start:end], cls(e.class))
			}
		})
		var as aimScratch
		out := aimed(&n.main, &as, nil)
		fmt.Printf("\n   -> %d findings", len(out))
		for _, o := range out {
			fmt.Printf(" %s/%s", o.cat, o.sev)
		}
		g, _ := New(Config{RulesOnly: true})
		for _, f := range g.Check(t.Context(), text).Findings {
			fmt.Printf(" {%s %s %s}", f.Detector, f.Category, f.Severity)
		}
		fmt.Println()
	}
}
