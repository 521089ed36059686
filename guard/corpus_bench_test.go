package guard_test

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"github.com/parleyhq/parley/internal/testnote"
	"maps"
	"os"
	"slices"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/parleyhq/parley/guard"
	"github.com/parleyhq/parley/internal/guardcorpus"
	"github.com/parleyhq/parley/internal/guardmodel"
)

// benignCorpus is the benign prose of the third-party corpus, or a skip.
func benignCorpus(tb testing.TB) []string {
	tb.Helper()
	var texts []string
	for _, s := range corpusSamples(tb) {
		if !s.Attack {
			texts = append(texts, s.Text)
		}
	}
	return texts
}

// BenchmarkCheckBenignCorpus scans every benign prompt and document of the
// third-party corpus per op: real prose, not a repeated paragraph. cpu-MB/s
// is process CPU time, which a shared machine does not inflate.
func BenchmarkCheckBenignCorpus(b *testing.B) {
	texts := benignCorpus(b)
	benchTexts(b, texts, func(g *guard.Guard, ctx context.Context, s string) { g.Check(ctx, s) })
}

// corpusSamples is the third-party corpus, or a skip.
func corpusSamples(tb testing.TB) []guardcorpus.Sample {
	tb.Helper()
	dir, err := guardcorpus.FindCorpus(".")
	if errors.Is(err, guardcorpus.ErrNoCorpus) {
		testnote.Skip(tb, "guard corpus checks", err.Error())
	}
	if err != nil {
		tb.Fatal(err)
	}
	all, err := guardcorpus.LoadCorpus(dir)
	if err != nil {
		tb.Fatal(err)
	}
	return all
}

// BenchmarkCheckBenignBySource is BenchmarkCheckBenignCorpus for each
// source of the corpus's benign prose on its own: where the corpus's
// throughput goes, by language and kind of text.
func BenchmarkCheckBenignBySource(b *testing.B) {
	all := corpusSamples(b)
	bySource := map[string][]string{}
	for _, s := range all {
		if !s.Attack {
			bySource[s.Source] = append(bySource[s.Source], s.Text)
		}
	}
	for _, src := range slices.Sorted(maps.Keys(bySource)) {
		b.Run(strings.ReplaceAll(src, "/", "_"), func(b *testing.B) {
			benchTexts(b, bySource[src], func(g *guard.Guard, ctx context.Context, s string) { g.Check(ctx, s) })
		})
	}
}

// BenchmarkCheckEnglishProse4K scans 4 KiB messages of the corpus's
// benign English requests, one message over and over and then 64
// different ones in turn. BenchmarkCheckBenign4K repeats one 400-byte
// paragraph, so every table lookup it makes stays in the CPU's caches;
// different messages of the same kind of prose do not.
func BenchmarkCheckEnglishProse4K(b *testing.B) {
	all := corpusSamples(b)
	var prose strings.Builder
	for _, s := range all {
		if !s.Attack && !s.Document && s.Lang == "en" {
			prose.WriteString(s.Text)
			prose.WriteByte('\n')
		}
	}
	text := prose.String()
	var msgs []string
	for i := 0; i+4<<10 <= len(text) && len(msgs) < 64; i += 4 << 10 {
		msgs = append(msgs, text[i:i+4<<10])
	}
	if len(msgs) < 64 {
		b.Skipf("the corpus holds %d KiB of benign English requests, want 256", len(text)>>10)
	}
	check := func(g *guard.Guard, ctx context.Context, s string) { g.Check(ctx, s) }
	b.Run("one", func(b *testing.B) { benchTexts(b, msgs[:1], check) })
	b.Run("64", func(b *testing.B) { benchTexts(b, msgs, check) })
}

// BenchmarkCheckDocumentBenignCorpus is the same in document mode.
func BenchmarkCheckDocumentBenignCorpus(b *testing.B) {
	texts := benignCorpus(b)
	benchTexts(b, texts, func(g *guard.Guard, ctx context.Context, s string) { g.CheckDocument(ctx, s) })
}

// BenchmarkCheckBenignCorpus4K scans the benign corpus cut into 4 KiB
// messages and reports the p99 latency of one message.
func BenchmarkCheckBenignCorpus4K(b *testing.B) {
	var all []byte
	for _, t := range benignCorpus(b) {
		all = append(all, t...)
		all = append(all, '\n')
	}
	var msgs []string
	for len(all) >= 4<<10 {
		cut := 4 << 10
		for cut > 3<<10 && all[cut]&0xC0 == 0x80 {
			cut--
		}
		msgs = append(msgs, string(all[:cut]))
		all = all[cut:]
	}
	benchTexts(b, msgs, func(g *guard.Guard, ctx context.Context, s string) { g.Check(ctx, s) })
}

// BenchmarkLearnedBenignCorpus is the learned layer's share: the model
// scoring the normalized benign corpus, text by text.
func BenchmarkLearnedBenignCorpus(b *testing.B) {
	data, err := os.ReadFile("model.bin")
	if err != nil {
		b.Fatal(err)
	}
	m, err := guardmodel.Decode(data)
	if err != nil {
		b.Fatal(err)
	}
	var texts [][]byte
	total := 0
	for _, t := range benignCorpus(b) {
		texts = append(texts, []byte(guard.Normalize(t).Text))
		total += len(t)
	}
	var sc guardmodel.Scratch
	b.SetBytes(int64(total))
	for b.Loop() {
		for _, t := range texts {
			m.Score(t, &sc)
		}
	}
}

func benchTexts(b *testing.B, texts []string, check func(*guard.Guard, context.Context, string)) {
	g, err := guard.New(guard.Config{})
	if err != nil {
		b.Fatal(err)
	}
	ctx := context.Background()
	total := 0
	for _, t := range texts {
		total += len(t)
		check(g, ctx, t) // warm
	}
	b.SetBytes(int64(total))
	b.ReportAllocs()
	lat := make([]time.Duration, 0, len(texts)*8)
	cpu0 := cpuTime()
	n := 0
	for b.Loop() {
		for _, t := range texts {
			t0 := time.Now()
			check(g, ctx, t)
			lat = append(lat, time.Since(t0))
		}
		n++
	}
	cpu := cpuTime() - cpu0
	if n == 0 {
		return
	}
	slices.Sort(lat)
	perOp := cpu.Seconds() / float64(n)
	b.ReportMetric(float64(lat[len(lat)*99/100].Microseconds()), "p99-µs/msg")
	b.ReportMetric(float64(total)/perOp/1e6, "cpu-MB/s")
}

func cpuTime() time.Duration {
	var ru syscall.Rusage
	if syscall.Getrusage(syscall.RUSAGE_SELF, &ru) != nil {
		return 0
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

// BenchmarkScrubBenignCorpus scrubs every benign prompt and document of the
// third-party corpus per op, as text and as a JSON string value: what the
// credential scrub costs on prose that holds no credential.
func BenchmarkScrubBenignCorpus(b *testing.B) {
	texts := benignCorpus(b)
	var docs [][]byte
	n := 0
	for _, t := range texts {
		var buf bytes.Buffer
		enc := json.NewEncoder(&buf)
		enc.SetEscapeHTML(false) // as tools.MarshalForModel writes a result
		_ = enc.Encode(map[string]string{"text": t})
		docs = append(docs, bytes.TrimSpace(buf.Bytes()))
		n += len(t) + buf.Len()
	}
	b.SetBytes(int64(n))
	b.ReportAllocs()
	for b.Loop() {
		for i, t := range texts {
			guard.Scrub(t)
			guard.ScrubJSON(docs[i])
		}
	}
}
