package guard

import (
	"bytes"
	"context"
	"fmt"
	"math"
	"runtime/debug"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"time"
	"unicode"
	"unicode/utf8"

	"github.com/parleyhq/parley/internal/guardmodel"
)

// DefaultMaxBytes is the input size limit when Config.MaxBytes is zero.
const DefaultMaxBytes = 1 << 20

// Config configures a Guard. The zero Config is the safe default: the
// built-in detectors, [DefaultActions], no allowlist.
type Config struct {
	// Actions overrides the action of categories; categories it does not
	// name keep the [DefaultActions] entry, or the severity default.
	Actions map[Category]Action
	// Allowlist holds operator phrases that are known not to be attacks
	// (a product name that reads like an instruction, a canned prompt).
	// When the allowlisted phrases cover at least 80% of the normalized
	// input, the injection rules are skipped for it; hidden-text, encoded
	// payload and PII detection still run. Phrases are normalized as the
	// input is, so case and look-alike letters do not matter.
	Allowlist []string
	// Detectors are run after the built-in ones, on the input text (for
	// CheckArgs, on the string values and keys joined by newlines). An
	// error or a panic from one fails the check closed.
	Detectors []Detector
	// MaxBytes is the largest input scanned; a larger one is blocked with
	// a TooLarge finding. Zero means DefaultMaxBytes.
	MaxBytes int
	// RulesOnly turns the learned layer off, leaving the rules: for
	// comparison, or where an operator wants only findings a rule can
	// explain.
	RulesOnly bool
	// LearnedShift raises (or, negative, lowers) the learned layer's
	// thresholds, in logits: 1 trades about a fifth of its catches for
	// about half of its false positives on text unlike its training data
	// (BENCHMARKS.md has the measured trade-off). Zero is the shipped
	// calibration.
	LearnedShift float64

	// Judge is a second opinion, asked only where the learned layer is
	// uncertain: when its score is within JudgeBand of its Medium
	// threshold and no rule found a Medium or higher injection. Its
	// "injection" adds a Medium finding (Detector "injection/judge") to a
	// text scored just below the threshold; its "benign" removes the
	// learned layer's finding from a text scored just above it. Nil, the
	// default, asks no one. It needs the learned layer (not RulesOnly).
	Judge Judge
	// JudgeBand is the half-width of the uncertain band, in logits; zero
	// means DefaultJudgeBand.
	JudgeBand float64
	// JudgeTimeout bounds each Judge call; zero means
	// DefaultJudgeTimeout.
	JudgeTimeout time.Duration
	// JudgeFailClosed blocks a text the Judge could not judge (an error,
	// a panic, or no answer within JudgeTimeout) as a Critical GuardError,
	// as a failing Detector does. False, the default, fails open: the
	// built-in verdict stands.
	JudgeFailClosed bool
	// JudgeCacheSize is how many verdicts are kept, keyed by a SHA-256 of
	// the normalized text (never the text); zero means
	// DefaultJudgeCacheSize, negative keeps none. Errors are not cached.
	JudgeCacheSize int
}

// Detector is a custom detector. Detect returns findings with Start and End
// as byte offsets into text; Action is computed by the Guard from the
// action map (a detector may ask for a stronger one by setting it), and a
// zero Kind means [KindInjection]. A detector returning an error, or
// panicking, fails the whole check closed: a Critical [GuardError] Block.
// Detect must be safe for concurrent use and must not keep text.
type Detector interface {
	Detect(ctx context.Context, text string) ([]Finding, error)
}

// DetectorFunc adapts a function to [Detector].
type DetectorFunc func(ctx context.Context, text string) ([]Finding, error)

// Detect calls f.
func (f DetectorFunc) Detect(ctx context.Context, text string) ([]Finding, error) {
	return f(ctx, text)
}

// Guard scans user input and tool arguments. It is immutable after [New]
// and safe for concurrent use.
type Guard struct {
	actions   map[Category]Action
	allow     [][]byte
	detectors []Detector
	maxBytes  int
	rulesOnly bool         // Config.RulesOnly
	shift     float32      // Config.LearnedShift
	judge     *judgeConfig // nil without Config.Judge
	pool      sync.Pool
}

// builtin compiles the built-in rules once per process.
var builtin = sync.OnceValues(func() (*injectionSet, error) {
	return compileInjection(injectionRules, compactPhrases(), true)
})

var builtinPII = sync.OnceValue(newPIIScanner)

// tables are the built-in detectors' compiled tables and weights, about 16
// MiB. They are built once per process, the first time any Guard scans,
// and shared by every Guard: an Engine that never sees a message pays
// nothing for them, and a process with many Engines pays once.
type tables struct {
	inj   *injectionSet
	pii   *piiScanner
	model *guardmodel.Model
}

var builtinTables = sync.OnceValues(func() (*tables, error) {
	tablesBuilt.Store(true)
	inj, err := builtin()
	if err != nil {
		return nil, err
	}
	m, err := builtinModel()
	if err != nil {
		return nil, err
	}
	return &tables{inj: inj, pii: builtinPII(), model: m}, nil
})

// tablesBuilt says whether builtinTables ran: tests check that New alone
// leaves it false.
var tablesBuilt atomic.Bool

// tables returns the built-in tables. They are the package's own, tested
// to build; if they did not, the panic is recovered by check, which then
// fails closed.
func (g *Guard) tables() *tables {
	t, err := builtinTables()
	if err != nil {
		panic(fmt.Sprintf("guard: built-in tables: %v", err))
	}
	return t
}

// New returns a Guard for cfg. Errors wrap [ErrInvalidConfig].
func New(cfg Config) (*Guard, error) {
	g := &Guard{
		actions:   make(map[Category]Action, len(defaultActions)+len(cfg.Actions)),
		maxBytes:  cfg.MaxBytes,
		rulesOnly: cfg.RulesOnly,
	}
	if math.IsNaN(cfg.LearnedShift) || math.IsInf(cfg.LearnedShift, 0) {
		return nil, fmt.Errorf("%w: LearnedShift %v", ErrInvalidConfig, cfg.LearnedShift)
	}
	g.shift = float32(cfg.LearnedShift)
	if g.maxBytes == 0 {
		g.maxBytes = DefaultMaxBytes
	}
	if g.maxBytes < 0 {
		return nil, fmt.Errorf("%w: negative MaxBytes", ErrInvalidConfig)
	}
	for c, a := range defaultActions {
		g.actions[c] = a
	}
	for c, a := range cfg.Actions {
		if a < Allow || a > Block {
			return nil, fmt.Errorf("%w: action %d for %q", ErrInvalidConfig, a, c)
		}
		if c == "" {
			return nil, fmt.Errorf("%w: empty category in Actions", ErrInvalidConfig)
		}
		g.actions[c] = a
	}
	for _, p := range cfg.Allowlist {
		n := Normalize(p).Text
		if n == "" {
			return nil, fmt.Errorf("%w: empty allowlist phrase %q", ErrInvalidConfig, p)
		}
		g.allow = append(g.allow, []byte(n))
	}
	for i, d := range cfg.Detectors {
		if d == nil {
			return nil, fmt.Errorf("%w: Detectors[%d] is nil", ErrInvalidConfig, i)
		}
	}
	g.detectors = slices.Clone(cfg.Detectors)
	var err error
	if g.judge, err = newJudgeConfig(cfg); err != nil {
		return nil, err
	}
	g.pool.New = func() any { return new(scratch) }
	return g, nil
}

// scratch is the pooled per-call state.
type scratch struct {
	n      normalizer
	st     scanState
	raw    []rawFinding
	decbuf []byte
	budget int  // decoded bytes left for this call
	doc    bool // document mode: CheckDocument
	// overBudget: decodable text was left unscanned and reported.
	overBudget bool
	ms         guardmodel.Scratch
	aim        aimScratch
	// The learned layer's last score, for the Judge: margin is its logit
	// minus the Medium threshold (valid when scored), learnedAt the index
	// of its finding in the output (-1: none), and jcat, jstart, jend the
	// category and span of its best window when it scored just below.
	margin       float32
	scored       bool
	learnedAt    int
	jcat         Category
	jstart, jend int
}

// Check scans text and returns what to do with it. It never fails: a
// detector error or panic, an input over MaxBytes, or a done ctx give a
// Block result (fail closed), with the cause in Result.Cause.
func (g *Guard) Check(ctx context.Context, text string) Result {
	return g.check(ctx, text, nil, false)
}

// CheckDocument scans text that reaches the model as data rather than as
// the user's words: a server-side tool's result, page context, a fetched
// document. It looks for indirect injection, instructions planted in the
// data for the model to follow, with thresholds of its own; personal data
// is not a finding (the host's own records are full of it), and Redacted
// is always text. Like Check it never fails: a detector error, a panic or
// a done ctx give a Critical Block.
//
// Custom Detectors run in document mode too.
func (g *Guard) CheckDocument(ctx context.Context, text string) Result {
	return g.check(ctx, text, nil, true)
}

func (g *Guard) check(ctx context.Context, text string, args *argsText, doc bool) (res Result) {
	full := text
	if args != nil {
		full = args.raw
	}
	defer func() {
		if r := recover(); r != nil {
			res = failClosed(full, fmt.Errorf("guard: panic: %v\n%s", r, debug.Stack()))
		}
	}()
	if len(full) > g.maxBytes {
		f := Finding{Detector: "guard/size", Category: TooLarge, Kind: KindInjection, Severity: High, Action: g.action(TooLarge, High), End: len(full), Confidence: 1}
		return Result{Action: f.Action, Severity: f.Severity, Findings: []Finding{f}, Redacted: full}
	}
	if err := ctx.Err(); err != nil {
		return failClosed(full, err)
	}
	sc := g.pool.Get().(*scratch)
	defer g.pool.Put(sc)
	sc.budget = maxDecodedBytes
	sc.overBudget = false
	sc.doc = doc
	sc.scored, sc.learnedAt, sc.jcat = false, -1, ""
	raw := g.scan(sc, text, 0, sc.raw[:0])
	if g.judge != nil {
		var err error
		if raw, err = g.secondOpinion(ctx, sc, text, raw); err != nil {
			sc.raw = raw[:0]
			return failClosed(full, err)
		}
	}
	sc.raw = raw[:0]
	var custom []Finding
	for _, d := range g.detectors {
		if err := ctx.Err(); err != nil {
			return failClosed(full, err)
		}
		fs, err := d.Detect(ctx, text)
		if err != nil {
			return failClosed(full, fmt.Errorf("guard: detector %T: %w", d, err))
		}
		for _, f := range fs {
			f.Start = min(max(f.Start, 0), len(text))
			f.End = min(max(f.End, f.Start), len(text))
			if f.Detector == "" {
				f.Detector = "custom"
			}
			f.Action = max(f.Action, g.action(f.Category, f.Severity))
			custom = append(custom, f)
		}
	}
	if len(raw) == 0 && len(custom) == 0 {
		return Result{Redacted: full}
	}
	res.Findings = make([]Finding, 0, len(raw)+len(custom))
	for _, r := range raw {
		res.Findings = append(res.Findings, Finding{
			Detector: r.detector, Category: r.cat, Kind: r.kind, Severity: r.sev,
			Action: g.action(r.cat, r.sev), Start: r.start, End: r.end, Confidence: r.conf, Via: r.via,
		})
	}
	res.Findings = append(res.Findings, custom...)
	if args != nil {
		for i := range res.Findings {
			f := &res.Findings[i]
			f.Start, f.End = args.orig(f.Start, f.End)
		}
	}
	slices.SortStableFunc(res.Findings, func(a, b Finding) int {
		if a.Start != b.Start {
			return a.Start - b.Start
		}
		return a.End - b.End
	})
	for _, f := range res.Findings {
		res.Action = max(res.Action, f.Action)
		res.Severity = max(res.Severity, f.Severity)
	}
	res.Redacted = redact(full, res.Findings, args)
	return res
}

// failClosed is the Result for an input the guard could not scan.
func failClosed(text string, cause error) Result {
	f := Finding{Detector: "guard", Category: GuardError, Kind: KindInjection, Severity: Critical, Action: Block, End: len(text), Confidence: 1}
	return Result{Action: Block, Severity: Critical, Findings: []Finding{f}, Redacted: redactionLabel(GuardError), Cause: cause}
}

func (g *Guard) action(c Category, s Severity) Action {
	if a, ok := g.actions[c]; ok {
		return a
	}
	return severityAction(s)
}

// reportedPast are verbs in the first person past that normalizing folds
// into an order, each with what must come before it: "olvidé", "ignoré"
// (I forgot, I ignored) say what the user did, "olvide", "ignore" tell
// the reader; French reports with "j'ai oublié", and a bare "Oublié" is a
// misspelt order.
var reportedPast = []struct{ word, before string }{
	{"olvidé", ""}, {"ignoré", ""}, {"oublié", "ai "}, {"oublié", "ai\u00a0"},
}

// dropReported removes from out[from:] the instruction overrides that
// begin with one of reportedPast in text, as a whole word, about no
// instructions of the assistant's ("Olvidé las instrucciones de montaje
// del armario", "J'ai oublié les instructions de montage"): only the
// accent, which the rules do not see, tells them from the order, and an
// attacker may write it, so the finding must say nothing of the
// assistant's either.
func dropReported(set *injectionSet, text string, out []rawFinding, from int) []rawFinding {
	kept := slices.DeleteFunc(out[from:], func(f rawFinding) bool {
		return f.cat == InstructionOverride && f.start >= 0 && f.end <= len(text) && f.start < f.end && reported(set, text, f.start, f.end)
	})
	return out[:from+len(kept)]
}

// reported reports whether text[start:end] begins with a reportedPast
// verb and holds no word the aimed lexicon reads as the assistant's own
// ("Olvidé todas las instrucciones anteriores" is kept).
func reported(set *injectionSet, text string, start, end int) bool {
	w := text[start:end]
	for _, r := range reportedPast {
		if len(w) < len(r.word) || !strings.EqualFold(w[:len(r.word)], r.word) {
			continue
		}
		if rest := w[len(r.word):]; rest != "" {
			if c, _ := utf8.DecodeRuneInString(rest); unicode.IsLetter(c) {
				continue // "olvidémonos": let us forget
			}
		}
		if r.before != "" && !strings.HasSuffix(strings.ToLower(text[max(0, start-len(r.before)):start]), r.before) {
			continue
		}
		return !ownIn(set, w)
	}
	return false
}

// scan runs the built-in detectors on text; offsets are into text.
func (g *Guard) scan(sc *scratch, text string, depth int, out []rawFinding) []rawFinding {
	n := &sc.n
	n.normalize(text)
	tab := g.tables()
	if !g.allowlisted(n.main.b) {
		sc.st.doc = sc.doc
		from := len(out)
		out = tab.inj.scan(n, &sc.st, out)
		sc.aim.doc = sc.doc
		out = aimed(&n.main, &sc.aim, sc.st.targets, out)
		out = dropReported(tab.inj, text, out, from)
		out = g.learned(tab, sc, out)
	}
	// Hidden text: tag characters (except emoji flags) and bidi controls.
	var tagRuns []tagRun
	for _, t := range n.tags {
		if t.flag {
			continue
		}
		out = append(out, rawFinding{detector: "injection/tag_characters", cat: HiddenText, kind: KindInjection, sev: High, start: t.start, end: t.end, conf: 1, via: "tags"})
		if len(t.text) > 0 && depth < maxDecodeDepth {
			tagRuns = append(tagRuns, tagRun{start: t.start, end: t.end, text: slices.Clone(t.text)})
		}
	}
	if len(n.bidi) > 0 {
		sev := Low
		for _, b := range n.bidi {
			if r, _ := utf8.DecodeRuneInString(text[b[0]:]); r == 0x202D || r == 0x202E {
				sev = Medium
			}
		}
		b := n.bidi[0]
		out = append(out, rawFinding{detector: "injection/bidi_controls", cat: HiddenText, kind: KindInjection, sev: sev, start: b[0], end: n.bidi[len(n.bidi)-1][1], conf: 1})
	}
	if !sc.doc {
		out = tab.pii.scan(text, out)
	}
	if depth >= maxDecodeDepth {
		return out
	}
	for _, t := range tagRuns {
		out = g.scanPayload(sc, string(t.text), t.start, t.end, "tags", depth, out)
	}
	findEncodedRuns(text, func(r encodedRun) {
		hidden := hiddenVia(r.via)
		if !hidden && overlapsPII(out, r.start, r.end) {
			return
		}
		dec, ok := decodeRun(sc.decbuf[:0], text, r)
		sc.decbuf = dec[:0]
		if hidden {
			// A carrier run is a finding whether or not it decodes.
			sev := Medium
			if ok {
				sev = High
			}
			out = append(out, rawFinding{detector: carrierDetector(r.via), cat: HiddenText, kind: KindInjection, sev: sev, start: r.start, end: r.end, conf: 1, via: r.via})
		}
		if !ok {
			return
		}
		if sc.budget <= 0 {
			// Text that decodes but is past the budget is not scanned:
			// say so rather than let a flood of harmless blobs hide the
			// one that matters.
			if !sc.overBudget {
				sc.overBudget = true
				out = append(out, rawFinding{detector: "injection/decode_budget", cat: EncodedPayload, kind: KindInjection, sev: Medium, start: r.start, end: r.end, conf: 0.5, via: r.via})
			}
			return
		}
		sc.budget -= max(len(dec), minDecodeCost)
		out = g.scanPayload(sc, string(dec), r.start, r.end, r.via, depth, out)
	})
	return out
}

// overlapsPII reports whether [s, e) overlaps a PII finding already made:
// a token that was reported as a credential is not decoded again.
func overlapsPII(out []rawFinding, s, e int) bool {
	for _, f := range out {
		if f.kind == KindPII && s < f.end && f.start < e {
			return true
		}
	}
	return false
}

// scanPayload scans decoded content and reports its findings on the span
// [s, e) of the encoded run, one severity step higher for injections (an
// encoded instruction is hiding), plus an EncodedPayload finding.
func (g *Guard) scanPayload(parent *scratch, payload string, s, e int, via string, depth int, out []rawFinding) []rawFinding {
	sub := g.pool.Get().(*scratch)
	defer g.pool.Put(sub)
	sub.budget, sub.overBudget = parent.budget, parent.overBudget
	sub.doc = parent.doc
	inner := g.scan(sub, payload, depth+1, sub.raw[:0])
	parent.budget, parent.overBudget = sub.budget, sub.overBudget
	sub.raw = inner[:0]
	injected := Severity(None)
	for _, f := range inner {
		f.start, f.end, f.via = s, e, via
		if f.kind == KindInjection {
			// A rule's finding inside an encoding is one step worse: the
			// encoding hides it. The learned layer's stays as it is, so
			// that alone it still only warns.
			if f.detector != learnedDetector {
				f.sev = min(f.sev+1, Critical)
			}
			injected = max(injected, f.sev)
		}
		out = append(out, f)
	}
	if injected >= Medium && !hiddenVia(via) {
		out = append(out, rawFinding{detector: "injection/encoded", cat: EncodedPayload, kind: KindInjection, sev: injected, start: s, end: e, conf: 0.9, via: via})
	}
	return out
}

// allowlisted reports whether operator phrases cover at least 80% of the
// normalized text.
func (g *Guard) allowlisted(b []byte) bool {
	if len(g.allow) == 0 || len(b) == 0 {
		return false
	}
	text := b
	covered := 0
	last := 0 // end of the covered prefix, to count overlaps once
	type iv struct{ s, e int }
	var ivs []iv
	for _, p := range g.allow {
		for off := 0; ; {
			k := bytes.Index(text[off:], p)
			if k < 0 {
				break
			}
			ivs = append(ivs, iv{off + k, off + k + len(p)})
			off += k + 1
		}
	}
	slices.SortFunc(ivs, func(a, b iv) int { return a.s - b.s })
	for _, v := range ivs {
		s := max(v.s, last)
		if v.e > s {
			covered += v.e - s
			last = v.e
		}
	}
	return covered*5 >= len(text)*4
}

// redact replaces the PII findings whose action is Redact or Block.
func redact(text string, fs []Finding, args *argsText) string {
	var spans []Finding
	for _, f := range fs {
		if f.Kind == KindPII && f.Action >= Redact && f.End > f.Start {
			spans = append(spans, f)
		}
	}
	if len(spans) == 0 {
		return text
	}
	if args != nil {
		return args.redact(spans)
	}
	var b strings.Builder
	b.Grow(len(text))
	pos := 0
	for _, f := range spans {
		if f.End <= pos {
			continue
		}
		b.WriteString(text[pos:max(pos, f.Start)])
		b.WriteString(redactionLabel(f.Category))
		pos = f.End
	}
	b.WriteString(text[pos:])
	return b.String()
}
