package guard

import (
	"container/list"
	"context"
	"crypto/sha256"
	"errors"
	"fmt"
	"math"
	"sync"
	"time"
)

// Defaults of the Config.Judge settings.
const (
	// DefaultJudgeBand is the half-width of the uncertain band, in logits
	// of the learned layer around its Medium threshold.
	DefaultJudgeBand = 1.0
	// DefaultJudgeTimeout bounds one Judge call.
	DefaultJudgeTimeout = 2 * time.Second
	// DefaultJudgeCacheSize is how many verdicts are remembered.
	DefaultJudgeCacheSize = 4096
)

// judgeDetector names the finding a Judge adds.
const judgeDetector = "injection/judge"

// Judge is a second opinion the host supplies: an extra classifier the
// Guard asks only about a text whose learned-layer score is uncertain
// (within Config.JudgeBand of its Medium threshold) and that no rule has
// already found to be a Medium or higher injection.
//
// Judge reports whether text is a prompt injection. It must be safe for
// concurrent use, must not keep text, and should return soon after ctx is
// done (the Guard stops waiting at Config.JudgeTimeout either way). An
// error, or no answer in time, leaves the decision to
// Config.JudgeFailClosed.
type Judge interface {
	Judge(ctx context.Context, text string) (Verdict, error)
}

// JudgeFunc adapts a function to [Judge].
type JudgeFunc func(ctx context.Context, text string) (Verdict, error)

// Judge calls f.
func (f JudgeFunc) Judge(ctx context.Context, text string) (Verdict, error) { return f(ctx, text) }

// Verdict is a [Judge]'s answer.
type Verdict struct {
	// Injection says text is an attempt to instruct the assistant.
	Injection bool
	// Category names the attack when Injection is true; empty means the
	// learned layer's category for the text.
	Category Category
}

// judgeConfig is Config's judge settings, defaults applied.
type judgeConfig struct {
	j          Judge
	band       float32
	timeout    time.Duration
	failClosed bool
	cache      *verdictCache // nil: no cache
}

func newJudgeConfig(cfg Config) (*judgeConfig, error) {
	if cfg.Judge == nil {
		return nil, nil
	}
	if cfg.RulesOnly {
		return nil, fmt.Errorf("%w: Judge needs the learned layer; RulesOnly turns it off", ErrInvalidConfig)
	}
	band := cfg.JudgeBand
	if band == 0 {
		band = DefaultJudgeBand
	}
	if band < 0 || math.IsNaN(band) || math.IsInf(band, 0) {
		return nil, fmt.Errorf("%w: JudgeBand %v", ErrInvalidConfig, cfg.JudgeBand)
	}
	jc := &judgeConfig{j: cfg.Judge, band: float32(band), timeout: cfg.JudgeTimeout, failClosed: cfg.JudgeFailClosed}
	if jc.timeout == 0 {
		jc.timeout = DefaultJudgeTimeout
	}
	if jc.timeout < 0 {
		return nil, fmt.Errorf("%w: negative JudgeTimeout", ErrInvalidConfig)
	}
	switch n := cfg.JudgeCacheSize; {
	case n == 0:
		jc.cache = newVerdictCache(DefaultJudgeCacheSize)
	case n > 0:
		jc.cache = newVerdictCache(n)
	}
	return jc, nil
}

// errJudgeTimeout is the cause when a Judge does not answer in time.
var errJudgeTimeout = errors.New("guard: judge did not answer in time")

// consult asks the judge about text, whose normalized main view is norm,
// through the cache.
func (jc *judgeConfig) consult(ctx context.Context, norm []byte, text string) (Verdict, error) {
	key := sha256.Sum256(norm)
	if v, ok := jc.cache.get(key); ok {
		return v, nil
	}
	ctx, cancel := context.WithTimeout(ctx, jc.timeout)
	defer cancel()
	type answer struct {
		v   Verdict
		err error
	}
	ch := make(chan answer, 1) // buffered: a late judge does not block
	go func() {
		defer func() {
			if r := recover(); r != nil {
				ch <- answer{err: fmt.Errorf("guard: judge panic: %v", r)}
			}
		}()
		v, err := jc.j.Judge(ctx, text)
		ch <- answer{v, err}
	}()
	select {
	case a := <-ch:
		if a.err != nil {
			return Verdict{}, fmt.Errorf("guard: judge %T: %w", jc.j, a.err)
		}
		jc.cache.put(key, a.v)
		return a.v, nil
	case <-ctx.Done():
		// Stop waiting even for a judge that ignores ctx.
		return Verdict{}, fmt.Errorf("%w: %w", errJudgeTimeout, ctx.Err())
	}
}

// verdictCache is a size-bounded LRU of verdicts keyed by the SHA-256 of
// the normalized text: it never holds the text. A nil cache is empty.
type verdictCache struct {
	mu  sync.Mutex
	max int
	ll  *list.List // front: most recently used; values *cacheEntry
	m   map[[sha256.Size]byte]*list.Element
}

type cacheEntry struct {
	key [sha256.Size]byte
	v   Verdict
}

func newVerdictCache(n int) *verdictCache {
	return &verdictCache{max: n, ll: list.New(), m: make(map[[sha256.Size]byte]*list.Element)}
}

func (c *verdictCache) get(k [sha256.Size]byte) (Verdict, bool) {
	if c == nil {
		return Verdict{}, false
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	e, ok := c.m[k]
	if !ok {
		return Verdict{}, false
	}
	c.ll.MoveToFront(e)
	return e.Value.(*cacheEntry).v, true
}

func (c *verdictCache) put(k [sha256.Size]byte, v Verdict) {
	if c == nil {
		return
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	if e, ok := c.m[k]; ok {
		e.Value.(*cacheEntry).v = v
		c.ll.MoveToFront(e)
		return
	}
	c.m[k] = c.ll.PushFront(&cacheEntry{key: k, v: v})
	for c.ll.Len() > c.max {
		old := c.ll.Back()
		c.ll.Remove(old)
		delete(c.m, old.Value.(*cacheEntry).key)
	}
}

// secondOpinion asks the Judge about text when the learned layer's score
// at the top level (sc, after scan) is in the uncertain band and no rule
// is sure, and applies its verdict to raw. A non-nil error means the
// check fails closed: the Judge failed with JudgeFailClosed set, or ctx
// itself is done.
func (g *Guard) secondOpinion(ctx context.Context, sc *scratch, text string, raw []rawFinding) ([]rawFinding, error) {
	jc := g.judge
	if !sc.scored || sc.margin < -jc.band || sc.margin > jc.band {
		return raw, nil
	}
	for i, f := range raw {
		if i != sc.learnedAt && f.kind == KindInjection && f.sev >= Medium {
			return raw, nil // a rule is sure; the Judge is not needed
		}
	}
	v, err := jc.consult(ctx, sc.n.main.b, text)
	if err != nil {
		if ctx.Err() != nil || jc.failClosed {
			return raw, err
		}
		return raw, nil // fail open: the built-in verdict stands
	}
	switch {
	case v.Injection && sc.learnedAt < 0:
		cat := v.Category
		if cat == "" {
			cat = sc.jcat
		}
		raw = append(raw, rawFinding{detector: judgeDetector, cat: cat, kind: KindInjection, sev: Medium, start: sc.jstart, end: sc.jend, conf: 0.5})
	case !v.Injection && sc.learnedAt >= 0:
		raw = append(raw[:sc.learnedAt], raw[sc.learnedAt+1:]...)
	}
	return raw, nil
}

// HasJudge reports whether g asks a Judge (Config.Judge): a check may then
// cost a model call, which a caller may want to admit against a quota
// first.
func (g *Guard) HasJudge() bool { return g != nil && g.judge != nil }
