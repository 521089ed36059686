package main

import (
	"context"
	"strings"
	"testing"

	"github.com/chromedp/cdproto/page"
	"github.com/chromedp/chromedp"
)

// The page works under its Content-Security-Policy: it loads, renders an
// answer with markdown and code, and the browser reports no violation of
// the policy along the way (every inline script and style is allowed by
// its hash, nothing else is needed).
func TestBrowserPageRunsUnderItsSecurityPolicy(t *testing.T) {
	t.Parallel()
	tb := newTab(t)
	ctx, cancel := context.WithTimeout(tb.ctx, browserWait)
	defer cancel()
	if _, err := chromedp.Call(ctx, page.AddScriptToEvaluateOnNewDocument, page.AddScriptToEvaluateOnNewDocumentParams{
		Source: `window.cspViolations = []; document.addEventListener("securitypolicyviolation", (e) => window.cspViolations.push(e.violatedDirective + " " + e.blockedURI));`,
	}); err != nil {
		t.Fatal(err)
	}
	tb.open(t, "alice", "")
	tb.chat(t, "hello")
	if n := tb.count(t, "#log .reply .md code"); n == 0 {
		t.Error("the answer's markdown did not render")
	}
	if v := eval[[]string](t, tb, `window.cspViolations`); len(v) > 0 {
		t.Errorf("the page violates its policy: %s", strings.Join(v, "; "))
	}
	// The policy holds: an inline script added to the page does not run.
	eval[chromedp.Void](t, tb, `(() => { const s = document.createElement("script"); s.textContent = "window.injected = 1"; document.body.append(s); })()`)
	if eval[bool](t, tb, `window.injected === 1`) {
		t.Error("an injected inline script ran")
	}
	tb.checkProblems(t)
}
