package main

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"github.com/parleyhq/parley/internal/testnote"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/chromedp/cdproto/browser"
	"github.com/chromedp/cdproto/cdp"
	"github.com/chromedp/cdproto/emulation"
	"github.com/chromedp/cdproto/input"
	"github.com/chromedp/cdproto/page"
	"github.com/chromedp/chromedp"

	"github.com/parleyhq/parley/assistant"
)

// The browser tests drive the example page in a real browser, Debian's
// chromium (or any Chrome), through the DevTools protocol, against the
// example served as the other tests serve it. They skip where no browser is
// installed, unless PARLEY_REQUIRE_BROWSER is set (CI sets it once it has
// installed chromium), when a missing browser fails. Screenshots go to $PARLEY_SCREENSHOTS, or else to
// parley-screenshots in the temporary directory; the log names the folder.

// browserWait bounds every wait on the page: a flow that needs longer is
// broken, not slow.
const browserWait = 15 * time.Second

// demoWordDelay paces the demo model, so a turn streams long enough to be
// seen streaming, and stopped.
const demoWordDelay = 10 * time.Millisecond

// findBrowser returns the path of a chromium or chrome binary, or "".
// PARLEY_CHROMIUM names one explicitly.
func findBrowser() string {
	if p := os.Getenv("PARLEY_CHROMIUM"); p != "" {
		return p
	}
	for _, name := range []string{"chromium", "chromium-browser", "google-chrome", "google-chrome-stable", "chrome"} {
		if p, err := exec.LookPath(name); err == nil {
			return p
		}
	}
	return ""
}

func screenshotDir(t *testing.T) string {
	dir := os.Getenv("PARLEY_SCREENSHOTS")
	if dir == "" {
		dir = filepath.Join(os.TempDir(), "parley-screenshots")
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatalf("screenshot folder: %v", err)
	}
	return dir
}

// tab is one browser tab on the example page.
type tab struct {
	ctx   context.Context
	url   string // the example's base URL
	shots string // the screenshot folder

	mu       sync.Mutex
	problems []string // uncaught exceptions and dialogs the page raised
}

// newTab serves the example on the demo model, starts a headless browser
// and opens the page in it at desktop size, as alice.
func newTab(t *testing.T) *tab {
	t.Helper()
	return newTabOn(t, func() *httptest.Server {
		srv, _ := newTestApp(t, settings{DatabasePath: testDatabase(t), DemoDelay: demoWordDelay})
		return srv
	})
}

// newTabOn is newTab on the server serve starts, once a browser is found.
func newTabOn(t *testing.T, serve func() *httptest.Server) *tab {
	t.Helper()
	bin := findBrowser()
	if bin == "" && os.Getenv("PARLEY_REQUIRE_BROWSER") != "" {
		t.Fatal("browser tests: PARLEY_REQUIRE_BROWSER is set but no chromium was found")
	}
	if bin == "" {
		testnote.Skip(t, "browser tests", "no chromium found; install Debian's chromium (apt-get install chromium) or set PARLEY_CHROMIUM to a Chrome binary")
	}
	srv := serve()
	opts := append(chromedp.DefaultExecAllocatorOptions[:], chromedp.ExecPath(bin), chromedp.NoSandbox, chromedp.WindowSize(1280, 860))
	actx, cancelAlloc := chromedp.NewExecAllocator(context.Background(), opts...)
	ctx, cancel := chromedp.NewContext(actx)
	t.Cleanup(func() { cancel(); cancelAlloc() })
	tb := &tab{ctx: ctx, url: srv.URL + "/", shots: screenshotDir(t)}
	t.Logf("screenshots in %s", tb.shots)

	// The first action starts the browser; it must not run under a timeout.
	if err := chromedp.Do(ctx, chromedp.Navigate("about:blank")); err != nil {
		t.Fatalf("starting %s: %v", bin, err)
	}
	messages := chromedp.Console(ctx)
	go func() {
		for m, err := range messages {
			if err != nil {
				return
			}
			if m.IsException() {
				tb.problem("uncaught exception: " + m.String())
			}
		}
	}()
	dialogs := chromedp.Events(ctx, page.JavascriptDialogOpening)
	go func() {
		for ev, err := range dialogs {
			if err != nil {
				return
			}
			tb.problem("a dialog opened: " + ev.Message)
			_, _ = chromedp.Call(ctx, page.HandleJavaScriptDialog, page.HandleJavaScriptDialogParams{Accept: false})
		}
	}()
	// The Copy button writes to the clipboard, which a headless browser
	// grants only when told to.
	_, _ = chromedp.CallBrowser(ctx, browser.SetPermission, browser.SetPermissionParams{
		Permission: &browser.PermissionDescriptor{Name: "clipboard-write"}, Setting: browser.PermissionSettingGranted, Origin: srv.URL})
	tb.do(t, chromedp.EmulateViewport(1280, 860))
	tb.open(t, "alice", "")
	return tb
}

func (tb *tab) problem(s string) {
	tb.mu.Lock()
	defer tb.mu.Unlock()
	tb.problems = append(tb.problems, s)
}

// checkProblems fails t for anything the page raised since the last check.
func (tb *tab) checkProblems(t *testing.T) {
	t.Helper()
	tb.mu.Lock()
	ps := tb.problems
	tb.problems = nil
	tb.mu.Unlock()
	for _, p := range ps {
		t.Error(p)
	}
}

// fail takes a screenshot of the page as it is, then fails t.
func (tb *tab) fail(t *testing.T, format string, args ...any) {
	t.Helper()
	tb.shot(t, "FAIL-"+regexp.MustCompile(`[^A-Za-z0-9]+`).ReplaceAllString(t.Name(), "-"))
	t.Fatalf(format, args...)
}

func (tb *tab) do(t *testing.T, actions ...chromedp.Action[chromedp.Void]) {
	t.Helper()
	ctx, cancel := context.WithTimeout(tb.ctx, browserWait)
	defer cancel()
	if err := chromedp.Do(ctx, actions...); err != nil {
		tb.fail(t, "browser: %v", err)
	}
}

// eval runs a JavaScript expression in the page and decodes its value.
func eval[T any](t *testing.T, tb *tab, expr string) T {
	t.Helper()
	ctx, cancel := context.WithTimeout(tb.ctx, browserWait)
	defer cancel()
	v, err := chromedp.Run(ctx, chromedp.Evaluate[T](expr))
	if err != nil {
		tb.fail(t, "evaluating %s: %v", expr, err)
	}
	return v
}

// waitFor waits until the JavaScript expression is truthy.
func (tb *tab) waitFor(t *testing.T, what, expr string) {
	t.Helper()
	ctx, cancel := context.WithTimeout(tb.ctx, browserWait+time.Second)
	defer cancel()
	_, err := chromedp.Run(ctx, chromedp.Poll[chromedp.Void](expr, chromedp.WithPollingInterval(25*time.Millisecond), chromedp.WithPollingTimeout(browserWait)))
	if err != nil {
		tb.fail(t, "waiting for %s (%s): %v", what, expr, err)
	}
}

// shot saves a screenshot of what the viewport shows as <name>.png.
func (tb *tab) shot(t *testing.T, name string) {
	t.Helper()
	ctx, cancel := context.WithTimeout(tb.ctx, browserWait)
	defer cancel()
	buf, err := chromedp.Run(ctx, chromedp.CaptureScreenshot())
	if err != nil {
		t.Errorf("screenshot %s: %v", name, err)
		return
	}
	path := filepath.Join(tb.shots, name+".png")
	if err := os.WriteFile(path, buf, 0o644); err != nil {
		t.Errorf("screenshot %s: %v", name, err)
	}
}

// open loads the page as user, with query ("?thread=…" or "") in the address,
// and waits for its script to have run.
func (tb *tab) open(t *testing.T, user, query string) {
	t.Helper()
	tb.do(t, chromedp.Navigate(tb.url))
	eval[chromedp.Void](t, tb, fmt.Sprintf(`localStorage.setItem("parley-demo-user", %q)`, user))
	tb.do(t, chromedp.Navigate(tb.url+query))
	tb.waitFor(t, "the page's script", `document.querySelector("#menu svg") && !document.querySelector("#log > .load")`)
}

// send types text into the composer and sends it, and reports whether the
// typing indicator showed at once.
func (tb *tab) send(t *testing.T, text string) (typing bool) {
	t.Helper()
	return eval[bool](t, tb, fmt.Sprintf(`(() => {
		const input = document.getElementById("input");
		input.value = %q;
		document.getElementById("send").click();
		return !!document.querySelector("#log .reply:last-child .typing");
	})()`, text))
}

// idle waits until no turn streams: Stop is gone, Send is back, and the
// follow-up turns the page starts itself (client tools) are done too.
func (tb *tab) idle(t *testing.T) {
	t.Helper()
	tb.waitFor(t, "the turn to end", `document.getElementById("stop").hidden && !document.getElementById("send").disabled && !document.querySelector("#log .typing")`)
}

// chat sends text and waits for the turn, and what follows it, to end.
func (tb *tab) chat(t *testing.T, text string) {
	t.Helper()
	tb.send(t, text)
	tb.idle(t)
}

// text is the visible text of the first element sel matches, "" if none.
func (tb *tab) text(t *testing.T, sel string) string {
	t.Helper()
	return eval[string](t, tb, fmt.Sprintf(`(document.querySelector(%q) || {innerText: ""}).innerText`, sel))
}

func (tb *tab) count(t *testing.T, sel string) int {
	t.Helper()
	return eval[int](t, tb, fmt.Sprintf(`document.querySelectorAll(%q).length`, sel))
}

// lastReply is the text of the newest answer.
func (tb *tab) lastReply(t *testing.T) string {
	t.Helper()
	return eval[string](t, tb, `[...document.querySelectorAll("#log .reply")].at(-1).innerText`)
}

// transcript is what the transcript shows, one line per element: its kind
// and its visible text.
func (tb *tab) transcript(t *testing.T) []string {
	t.Helper()
	return eval[[]string](t, tb, `[...document.querySelectorAll("#log > *")].map((e) => e.className + " | " + e.innerText.replace(/\s+/g, " ").trim())`)
}

func (tb *tab) threadInURL(t *testing.T) string {
	t.Helper()
	return eval[string](t, tb, `new URLSearchParams(location.search).get("thread") || ""`)
}

// TestBrowser runs the page's flows in order in one tab; later flows use
// the thread the earlier ones wrote.
func TestBrowser(t *testing.T) {
	t.Parallel()
	start := time.Now()
	tb := newTab(t)
	var thread string // alice's thread with every kind of turn in it

	t.Run("ChatRendersMarkdownAndCodeBlocks", func(t *testing.T) {
		if !tb.send(t, "hello") {
			tb.fail(t, "no typing indicator right after Send")
		}
		tb.idle(t)
		if got := tb.text(t, "#log .said .user"); got != "hello" {
			t.Errorf("user bubble %q", got)
		}
		if n := tb.count(t, "#log .reply .md code"); n < 2 {
			t.Errorf("inline code spans: %d, want the tool names and the variable as <code>", n)
		}
		if md := tb.text(t, "#log .reply .md"); strings.Contains(md, "`") {
			t.Errorf("markdown shows raw backticks: %q", md)
		}
		if lang := tb.text(t, "#log .reply .code .lang"); lang != "text" {
			t.Errorf("code block language label %q, want text", lang)
		}
		if code := tb.text(t, "#log .reply .code pre"); strings.TrimSpace(code) != "hello" {
			t.Errorf("code block %q, want the echoed message", code)
		}
		tb.do(t, chromedp.Click(chromedp.CSS("#log .reply .code button.copy")))
		tb.waitFor(t, "the Copy button to say Copied", `document.querySelector("#log .reply .code button.copy").textContent === "Copied"`)
		tb.waitFor(t, "the Copy button to say Copy again", `document.querySelector("#log .reply .code button.copy").textContent === "Copy"`)
		thread = tb.threadInURL(t)
		if thread == "" {
			t.Errorf("the new thread is not in the address: %s", eval[string](t, tb, `location.href`))
		}
		tb.waitFor(t, "the thread in the list, dated today", `/^today \d\d:\d\d$/.test((document.querySelector("#threads .row.active .when") || {}).textContent)`)
		if tb.count(t, "#byid:not([hidden])") != 0 {
			t.Errorf("alice, not staff, is offered to open threads by id")
		}
		tb.checkProblems(t)
	})

	t.Run("ToolCallAnswerRendersBoldAndLists", func(t *testing.T) {
		tb.do(t, chromedp.SendKeys(chromedp.ID("input"), "show my notes"), pressEnter)
		tb.idle(t)
		if got := eval[string](t, tb, `[...document.querySelectorAll("#log .said .user")].at(-1).textContent`); got != "show my notes" {
			t.Errorf("Enter sent %q", got)
		}
		reply := tb.lastReply(t)
		if !strings.Contains(reply, "✓ list_notes: 2 notes") {
			t.Errorf("no tool result line in %q", reply)
		}
		if got := eval[string](t, tb, `[...document.querySelectorAll("#log .reply")].at(-1).querySelector(".md strong").textContent`); got != "2 notes" {
			t.Errorf("**2 notes** rendered as %q, want <strong>2 notes</strong>", got)
		}
		if n := eval[int](t, tb, `[...document.querySelectorAll("#log .reply")].at(-1).querySelectorAll(".md ul > li").length`); n != 2 {
			t.Errorf("%d list items, want 2 notes as a list", n)
		}
		if strings.Contains(reply, "**") || strings.Contains(reply, "- #") {
			t.Errorf("raw markdown in %q", reply)
		}
		tb.shot(t, "01-desktop-chat")
		tb.checkProblems(t)
	})

	t.Run("ApprovalAppliedShowsAStatusLineNotABubble", func(t *testing.T) {
		tb.chat(t, "add a note: buy bread")
		tb.waitFor(t, "a pending card", `[...document.querySelectorAll("#log .card")].at(-1).querySelector("button.apply:enabled")`)
		tb.shot(t, "02-desktop-approval-card")
		eval[chromedp.Void](t, tb, `[...document.querySelectorAll("#log .card")].at(-1).querySelector("button.apply").click()`)
		tb.idle(t)
		if s := eval[string](t, tb, `[...document.querySelectorAll("#log .card")].at(-1).querySelector(".status").textContent`); s != "Applied" {
			t.Errorf("card status %q, want Applied", s)
		}
		if line := tb.text(t, "#log .decision.ok"); !strings.HasPrefix(line, "Applied: ") || !strings.Contains(line, "buy bread") {
			t.Errorf("decision line %q, want Applied: <the card's summary>", line)
		}
		if reply := tb.lastReply(t); !strings.Contains(reply, "I added the note “buy bread”") {
			t.Errorf("acknowledgment %q", reply)
		}
		tb.checkProblems(t)
	})

	t.Run("ApprovalDeclinedShowsAStatusLineNotABubble", func(t *testing.T) {
		tb.chat(t, "delete note 1")
		tb.waitFor(t, "a destructive card", `[...document.querySelectorAll("#log .card")].at(-1).matches(".destructive") && [...document.querySelectorAll("#log .card")].at(-1).querySelector("button.decline:enabled")`)
		eval[chromedp.Void](t, tb, `[...document.querySelectorAll("#log .card")].at(-1).querySelector("button.decline").click()`)
		tb.idle(t)
		if s := eval[string](t, tb, `[...document.querySelectorAll("#log .card")].at(-1).querySelector(".status").textContent`); s != "Declined" {
			t.Errorf("card status %q, want Declined", s)
		}
		if line := eval[string](t, tb, `[...document.querySelectorAll("#log .decision")].at(-1).textContent`); !strings.HasPrefix(line, "Declined: ") {
			t.Errorf("decision line %q, want Declined: <the card's summary>", line)
		}
		if reply := tb.lastReply(t); !strings.Contains(reply, "OK, I left your notes unchanged.") {
			t.Errorf("acknowledgment %q", reply)
		}
		tb.checkProblems(t)
	})

	t.Run("FormAnswersShowAsACompactSummary", func(t *testing.T) {
		tb.chat(t, "new note")
		tb.waitFor(t, "an open form", `document.querySelector("#log form.ask:not(.closed) input[type=text]")`)
		eval[chromedp.Void](t, tb, `(() => {
			const f = document.querySelector("#log form.ask:not(.closed)");
			f.querySelector("input[type=text]").value = "call mum";
			f.querySelector("select").value = "work";
			f.querySelector("button[type=submit]").click();
		})()`)
		tb.idle(t)
		answers := tb.text(t, "#log .answers")
		for _, want := range []string{"Answers to “New note”", "What should the note say?: call mum", "Tag: work"} {
			if !strings.Contains(answers, want) {
				t.Errorf("answers summary %q lacks %q", answers, want)
			}
		}
		if s := tb.text(t, "#log form.ask .status"); s != "Answered" {
			t.Errorf("form status %q, want Answered", s)
		}
		tb.waitFor(t, "the note proposed on a card", `[...document.querySelectorAll("#log .card")].at(-1).textContent.includes("call mum")`)
		tb.shot(t, "03-desktop-form")
		tb.checkProblems(t)
	})

	t.Run("ClientToolRunsInThePage", func(t *testing.T) {
		tb.chat(t, "what time is it in my browser")
		text := eval[string](t, tb, `document.getElementById("log").innerText`)
		for _, want := range []string{"→ browser_time (runs in your browser)", "✓ browser_time", "Your browser's clock says"} {
			if !strings.Contains(text, want) {
				t.Errorf("transcript lacks %q", want)
			}
		}
		tb.checkProblems(t)
	})

	t.Run("ReasoningIsCollapsedApartFromTheAnswer", func(t *testing.T) {
		tb.chat(t, "think about pandas")
		if n := tb.count(t, "#log details.reasoning"); n != 1 {
			t.Fatalf("%d reasoning sections, want 1", n)
		}
		if eval[bool](t, tb, `document.querySelector("#log details.reasoning").open`) {
			t.Error("the reasoning is shown open; it should start collapsed")
		}
		inside := eval[string](t, tb, `document.querySelector("#log details.reasoning .reasoning-text").textContent`)
		if !strings.Contains(inside, "think about pandas") || strings.Contains(tb.lastReply(t), "The user asks me") {
			t.Errorf("reasoning %q; answer %q", inside, tb.lastReply(t))
		}
		tb.checkProblems(t)
	})

	t.Run("ReloadShowsTheSameTranscript", func(t *testing.T) {
		live := tb.transcript(t)
		tb.do(t, chromedp.Reload())
		tb.waitFor(t, "the thread to load", `document.querySelector("#menu svg") && document.querySelectorAll("#log .reply").length > 0`)
		if got := tb.threadInURL(t); got != thread {
			t.Errorf("after the reload the address names thread %q, want %q", got, thread)
		}
		reloaded := tb.transcript(t)
		if !slices.Equal(live, reloaded) {
			t.Errorf("the transcript differs after a reload:\nlive:\n  %s\nreloaded:\n  %s", strings.Join(live, "\n  "), strings.Join(reloaded, "\n  "))
		}
		all := eval[string](t, tb, `document.getElementById("log").innerText`)
		for _, server := range []string{"I approve:", "I decline:", "My answers"} {
			if strings.Contains(all, server) {
				t.Errorf("the reloaded transcript shows the server's note %q as a message", server)
			}
		}
		tb.shot(t, "04-desktop-reloaded")
		tb.checkProblems(t)
	})

	t.Run("StopEndsTheTurnAndSendWaitsForIt", func(t *testing.T) {
		tb.do(t, chromedp.Click(chromedp.ID("new")))
		tb.waitFor(t, "an empty chat", `document.getElementById("log").children.length === 0 && document.getElementById("title").textContent === "New chat"`)
		tb.shot(t, "00-desktop-new-chat")
		tb.send(t, longMessage())
		tb.waitFor(t, "the answer to stream", `(document.querySelector("#log .reply .md") || {textContent: ""}).textContent.length > 20`)
		if eval[bool](t, tb, `document.getElementById("stop").hidden || !document.getElementById("send").disabled`) {
			tb.fail(t, "while a turn streams, Stop must show and Send be disabled")
		}
		// The transcript follows the stream at the bottom, and leaves a
		// reader who scrolled up where they are.
		tb.waitFor(t, "the transcript to follow the stream", `(() => {
			const log = document.getElementById("log");
			return log.scrollHeight > log.clientHeight && log.scrollHeight - log.scrollTop - log.clientHeight < 48 && /w\d+/.test([...log.querySelectorAll(".reply .md")].at(-1).textContent);
		})()`)
		eval[chromedp.Void](t, tb, `document.getElementById("log").scrollTop = 0`)
		tb.waitFor(t, "the jump button, as words arrive below", `!document.getElementById("jump").hidden`)
		if top := eval[float64](t, tb, `document.getElementById("log").scrollTop`); top > 1 {
			t.Errorf("the transcript scrolled to %v while the reader was at the top", top)
		}
		tb.do(t, chromedp.Click(chromedp.ID("jump")))
		tb.waitFor(t, "the transcript back at the bottom", `(() => { const log = document.getElementById("log"); return log.scrollHeight - log.scrollTop - log.clientHeight < 48 && document.getElementById("jump").hidden; })()`)
		// Enter in the composer does not send either: the text stays.
		tb.do(t, chromedp.SendKeys(chromedp.ID("input"), "second"), pressEnter)
		if v := eval[string](t, tb, `document.getElementById("input").value`); v != "second" {
			t.Errorf("composer holds %q after Enter during a stream, want the unsent text", v)
		}
		if n := tb.count(t, "#log .said"); n != 1 {
			t.Errorf("%d user messages after Enter during a stream, want 1", n)
		}
		tb.do(t, chromedp.Click(chromedp.ID("stop")))
		tb.idle(t)
		if got := tb.text(t, "#log .reply .stopped"); got != "The answer was stopped." {
			t.Errorf("stopped note %q", got)
		}
		if strings.Contains(tb.lastReply(t), "w399") {
			t.Errorf("the whole answer arrived despite Stop")
		}
		tb.shot(t, "05-desktop-stopped")
		live := tb.transcript(t)
		tb.do(t, chromedp.Reload())
		tb.waitFor(t, "the thread to load", `document.querySelector("#menu svg") && document.querySelector("#log .reply .stopped")`)
		if reloaded := tb.transcript(t); !slices.Equal(live, reloaded) {
			t.Errorf("the stopped turn differs after a reload:\nlive:\n  %s\nreloaded:\n  %s", strings.Join(live, "\n  "), strings.Join(reloaded, "\n  "))
		}
		eval[chromedp.Void](t, tb, `document.getElementById("input").value = ""`)
		tb.checkProblems(t)
	})

	t.Run("NewChatDuringAStreamLeavesTheOldTurnBehind", func(t *testing.T) {
		tb.send(t, longMessage())
		tb.waitFor(t, "the answer to stream", `(document.querySelector("#log .reply .md") || {textContent: ""}).textContent.length > 20`)
		old := tb.threadInURL(t)
		tb.do(t, chromedp.Click(chromedp.ID("new")))
		tb.waitFor(t, "an empty chat, ready to send", `document.getElementById("log").children.length === 0 && !document.getElementById("send").disabled`)
		tb.do(t, chromedp.Click(chromedp.CSS("#empty .chips button"))) // "show my notes"
		tb.idle(t)
		if got := tb.transcript(t); len(got) != 2 || !strings.Contains(got[0], "show my notes") || strings.Contains(got[1], "w1 ") {
			t.Errorf("the new chat shows %q, want the one message and its answer", got)
		}
		if now := tb.threadInURL(t); now == old || now == "" {
			t.Errorf("the new chat's thread %q, the old %q", now, old)
		}
		tb.checkProblems(t)
	})

	t.Run("UserSwitchDuringAStreamLeavesTheOldTurnBehind", func(t *testing.T) {
		tb.do(t, chromedp.Click(chromedp.ID("new")))
		tb.waitFor(t, "an empty chat", `document.getElementById("log").children.length === 0 && !document.getElementById("send").disabled`)
		tb.send(t, longMessage())
		tb.waitFor(t, "the answer to stream", `(document.querySelector("#log .reply .md") || {textContent: ""}).textContent.length > 20`)
		eval[chromedp.Void](t, tb, `(() => { const s = document.getElementById("user"); s.value = "bob"; s.dispatchEvent(new Event("change")); })()`)
		tb.waitFor(t, "bob's empty page", `document.getElementById("log").children.length === 0 && !document.getElementById("send").disabled && !location.search`)
		tb.chat(t, "show my notes")
		if reply := tb.lastReply(t); !strings.Contains(reply, "Pick up the bike") || strings.Contains(reply, "oat milk") {
			t.Errorf("bob's answer %q: want his note, not alice's", reply)
		}
		if n := tb.count(t, "#log .said"); n != 1 {
			t.Errorf("bob's chat shows %d user messages, want 1", n)
		}
		tb.open(t, "alice", "")
		tb.checkProblems(t)
	})

	t.Run("HostileMarkdownIsInert", func(t *testing.T) {
		tb.do(t, chromedp.Click(chromedp.ID("new")))
		tb.waitFor(t, "an empty chat", `document.getElementById("log").children.length === 0 && !document.getElementById("send").disabled`)
		// The demo model echoes the message inside a fence; closing it makes
		// the rest the model's own markdown.
		tb.chat(t, "hi\n```\n"+hostileMarkdown+"\n```\nbye")
		for sel, what := range map[string]string{
			"#log img, #log script, #log iframe, #log object, #log embed, #log svg image":      "an element that loads or runs something",
			"#log [onerror], #log [onclick], #log [onload]":                                    "an inline event handler",
			`#log a[href^="javascript" i], #log a[href^="data" i], #log a[href^="vbscript" i]`: "a script or data link",
			"#log .md [style], #log .md [class]":                                               "a style or class from the model",
		} {
			if n := tb.count(t, sel); n != 0 {
				t.Errorf("%d × %s (%s) in the rendered markdown", n, what, sel)
			}
		}
		if pwned := eval[bool](t, tb, `window.pwned !== undefined`); pwned {
			t.Errorf("model output ran script: window.pwned = %v", eval[string](t, tb, `String(window.pwned)`))
		}
		md := eval[string](t, tb, `[...document.querySelectorAll("#log .reply .md")].map((e) => e.innerText).join("\n")`)
		if !strings.Contains(md, `<img src=x onerror="window.pwned=1;alert(1)">`) {
			t.Errorf("the raw HTML is not shown as text: %q", md)
		}
		if rel := eval[string](t, tb, `document.querySelector('#log .md a[href="https://example.com/"]').rel`); !strings.Contains(rel, "noopener") {
			t.Errorf("a safe link has rel %q, want noopener", rel)
		}
		if target := eval[string](t, tb, `document.querySelector('#log .md a[href="https://example.com/"]').target`); target != "_blank" {
			t.Errorf("a safe link opens in %q, want a new tab", target)
		}
		if got := tb.text(t, "#log .md table td strong"); got != "1" {
			t.Errorf("table cell %q, want a table with **1** bold", got)
		}
		if got := tb.text(t, "#log .md h2"); got != "A heading" {
			t.Errorf("heading %q", got)
		}
		tb.shot(t, "06-desktop-hostile-markdown")
		tb.checkProblems(t)
	})

	t.Run("StaffReadsAnotherUsersThreadReadOnly", func(t *testing.T) {
		tb.open(t, "sam", "")
		if tb.count(t, "#byid:not([hidden])") != 1 {
			tb.fail(t, "staff are not offered to open a thread by id")
		}
		eval[chromedp.Void](t, tb, fmt.Sprintf(`(() => { document.getElementById("byid-input").value = %q; document.querySelector("#byid button").click(); })()`, thread))
		tb.waitFor(t, "alice's thread, read-only", `!document.getElementById("readonly").hidden && document.querySelectorAll("#log .reply").length > 0`)
		if !eval[bool](t, tb, `document.getElementById("form").hidden`) {
			t.Errorf("the composer shows on another user's thread")
		}
		if n := eval[int](t, tb, `[...document.querySelectorAll("#log button, #log input, #log select")].filter((b) => b.offsetParent !== null && !b.disabled && !b.matches(".copy")).length`); n != 0 {
			t.Errorf("%d controls that act on alice's thread are there for sam", n)
		}
		if got := tb.threadInURL(t); got != thread {
			t.Errorf("address names %q, want alice's thread %q", got, thread)
		}
		tb.shot(t, "07-desktop-staff-read-only")
		tb.do(t, chromedp.Reload())
		tb.waitFor(t, "alice's thread, read-only, after a reload", `!document.getElementById("readonly").hidden && document.querySelectorAll("#log .reply").length > 0`)
		tb.checkProblems(t)
	})

	t.Run("PhoneWidthCollapsesTheSidebar", func(t *testing.T) {
		tb.do(t, chromedp.EmulateViewport(390, 844, chromedp.EmulateMobile))
		tb.open(t, "alice", "?thread="+thread)
		tb.waitFor(t, "the thread", `document.querySelectorAll("#log .reply").length > 0`)
		type box struct{ Left, Right, Top, Bottom, Width float64 }
		rect := func(id string) box {
			return eval[box](t, tb, fmt.Sprintf(`(() => { const r = document.getElementById(%q).getBoundingClientRect(); return {Left: r.left, Right: r.right, Top: r.top, Bottom: r.bottom, Width: r.width}; })()`, id))
		}
		if v := eval[string](t, tb, `getComputedStyle(document.getElementById("nav")).visibility`); v != "hidden" {
			t.Errorf("the sidebar is %s at 390 px, want hidden", v)
		}
		if r := rect("menu"); r.Width == 0 {
			t.Errorf("no menu button at 390 px")
		}
		vw, vh := eval[float64](t, tb, `innerWidth`), eval[float64](t, tb, `innerHeight`)
		if r := rect("form"); r.Top < 0 || r.Bottom > vh+1 || r.Width < vw-1 {
			t.Errorf("composer at %+v in a %vx%v viewport, want it on screen, full width", r, vw, vh)
		}
		if r := rect("send"); r.Right > vw {
			t.Errorf("Send at %+v, past the edge of the %v px viewport", r, vw)
		}
		if r := rect("log"); r.Width < vw-1 {
			t.Errorf("transcript %v px wide, want the full %v", r.Width, vw)
		}
		if w := eval[float64](t, tb, `document.documentElement.scrollWidth`); w > vw {
			t.Errorf("the page scrolls sideways: %v px wide in a %v px viewport", w, vw)
		}
		tb.shot(t, "08-phone-transcript")
		tb.do(t, chromedp.Click(chromedp.ID("menu")))
		tb.waitFor(t, "the sidebar to slide in", `(() => { const s = getComputedStyle(document.getElementById("nav")); return s.visibility === "visible" && document.getElementById("nav").getBoundingClientRect().left >= 0; })()`)
		tb.shot(t, "09-phone-sidebar")
		eval[chromedp.Void](t, tb, `document.querySelector("#threads .row:not(.active) button.thread").click()`)
		tb.waitFor(t, "the sidebar to close on opening a thread", `getComputedStyle(document.getElementById("nav")).visibility === "hidden"`)
		tb.waitFor(t, "the other thread", `new URLSearchParams(location.search).get("thread") !== `+fmt.Sprintf("%q", thread)+` && document.querySelectorAll("#log .reply").length > 0`)
		// Back returns to the thread before.
		eval[chromedp.Void](t, tb, `history.back()`)
		tb.waitFor(t, "the first thread again after Back", `new URLSearchParams(location.search).get("thread") === `+fmt.Sprintf("%q", thread)+` && document.getElementById("log").innerText.includes("what time is it in my browser")`)
		tb.checkProblems(t)
	})

	t.Run("DarkColorSchemeFollowsTheSystem", func(t *testing.T) {
		dark := chromedp.Func(func(ctx context.Context, t *chromedp.Target) error {
			_, err := cdp.Call(ctx, t, emulation.SetEmulatedMedia, emulation.SetEmulatedMediaParams{
				Features: []*emulation.MediaFeature{{Name: "prefers-color-scheme", Value: "dark"}}})
			return err
		})
		tb.do(t, chromedp.EmulateViewport(1280, 860), dark)
		tb.open(t, "alice", "?thread="+thread)
		tb.waitFor(t, "the thread", `document.querySelectorAll("#log .reply").length > 0`)
		// Light text on a dark page: the red channel of each, from "rgb(r, g, b)".
		fg := eval[float64](t, tb, `+getComputedStyle(document.querySelector("#log .reply .md")).color.match(/\d+/)[0]`)
		bg := eval[float64](t, tb, `+getComputedStyle(document.body).backgroundColor.match(/\d+/)[0]`)
		if fg < 180 || bg > 60 {
			t.Errorf("in the dark scheme the answer's text is %v on %v (red channel), want light on dark", fg, bg)
		}
		tb.shot(t, "10-desktop-dark")
		tb.checkProblems(t)
	})

	t.Logf("browser flows took %v", time.Since(start).Round(time.Millisecond))
}

// TestBrowserModelPicker runs the model picker against two connections,
// both answered by the demo model, which names the model it was asked for.
func TestBrowserModelPicker(t *testing.T) {
	t.Parallel()
	var requests logBuffer // the model requests the page sent, one JSON body a line
	tb := newTabOn(t, func() *httptest.Server {
		h, err := newApp(settings{DatabasePath: testDatabase(t), DemoDelay: demoWordDelay}, twoDemoConnections(), testLogger(io.Discard))
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { _ = h.close() })
		srv := httptest.NewServer(recordModelRequests(h, &requests))
		t.Cleanup(srv.Close)
		return srv
	})

	t.Run("ListsEveryModelOfBothConnectionsWithTheDefaultSelected", func(t *testing.T) {
		tb.waitFor(t, "the picker", `!document.getElementById("model").hidden`)
		got := eval[[]string](t, tb, `[...document.getElementById("model").options].map((o) => o.textContent)`)
		want := []string{"openai/gpt-4o-mini", "openai/gpt-4.1", "anthropic/claude-sonnet-5-5", "anthropic/claude-haiku-5-5"}
		if !slices.Equal(got, want) {
			t.Errorf("picker lists %q, want %q", got, want)
		}
		if v := eval[string](t, tb, `document.getElementById("model").value`); v != "openai/gpt-4o-mini" {
			t.Errorf("picker preselects %q, want the default openai/gpt-4o-mini", v)
		}
		if l := eval[string](t, tb, `document.getElementById("model").getAttribute("aria-label")`); l != "Model" {
			t.Errorf("picker's accessible name %q, want Model", l)
		}
		tb.checkProblems(t)
	})

	t.Run("SwitchingStoresThePreferenceAndTheNextAnswerUsesIt", func(t *testing.T) {
		// By keyboard: focus the picker and press End, the last model.
		tb.do(t, chromedp.Focus(chromedp.ID("model")), pressKey("End", 35))
		tb.waitFor(t, "the choice", `document.getElementById("model").value === "anthropic/claude-haiku-5-5"`)
		deadline := time.Now().Add(browserWait)
		for pref := storedPreference(t, tb.url, "alice"); pref != "anthropic/claude-haiku-5-5"; pref = storedPreference(t, tb.url, "alice") {
			if time.Now().After(deadline) {
				tb.fail(t, "alice's stored preference is %q, want anthropic/claude-haiku-5-5", pref)
			}
			time.Sleep(25 * time.Millisecond)
		}
		if body := requests.String(); !strings.Contains(body, `PUT /api/chat/models/preference {"connection":"anthropic","model":"claude-haiku-5-5"}`) {
			t.Errorf("no PUT of the choice among the requests:\n%s", body)
		}
		tb.chat(t, "hello")
		if via := eval[string](t, tb, `[...document.querySelectorAll("#log .reply .via")].at(-1).textContent`); via != "anthropic/claude-haiku-5-5" {
			t.Errorf("the answer names %q as its model, want anthropic/claude-haiku-5-5", via)
		}
		if reply := tb.lastReply(t); !strings.Contains(reply, "answering as claude-haiku-5-5") {
			t.Errorf("the demo model was not asked for claude-haiku-5-5: %q", reply)
		}
		if body := requests.String(); !strings.Contains(body, `"model":"anthropic/claude-haiku-5-5"`) {
			t.Errorf("the stream request does not name the model:\n%s", body)
		}
		tb.shot(t, "11-desktop-model-picker")
		tb.checkProblems(t)
	})

	t.Run("TheChoiceOutlivesAReload", func(t *testing.T) {
		tb.do(t, chromedp.Reload())
		tb.waitFor(t, "the stored choice preselected", `document.getElementById("model").value === "anthropic/claude-haiku-5-5"`)
		tb.checkProblems(t)
	})

	t.Run("FitsAPhone", func(t *testing.T) {
		tb.do(t, chromedp.EmulateViewport(390, 844, chromedp.EmulateMobile))
		tb.open(t, "alice", "")
		tb.waitFor(t, "the picker", `!document.getElementById("model").hidden`)
		vw := eval[float64](t, tb, `innerWidth`)
		if r := eval[float64](t, tb, `document.getElementById("model").getBoundingClientRect().right`); r > vw {
			t.Errorf("the picker ends at %v px, past the %v px viewport", r, vw)
		}
		if w := eval[float64](t, tb, `document.documentElement.scrollWidth`); w > vw {
			t.Errorf("the page scrolls sideways: %v px wide in a %v px viewport", w, vw)
		}
		tb.shot(t, "12-phone-model-picker")
		tb.checkProblems(t)
	})
}

// twoDemoConnections are an "openai" and an "anthropic" connection, each
// with two models, both answered by the demo model.
func twoDemoConnections() models {
	demo := demoModel{delay: demoWordDelay}
	return models{connections: []assistant.Connection{
		{Name: "openai", Provider: demo, Model: "gpt-4o-mini", Models: []string{"gpt-4o-mini", "gpt-4.1"}},
		{Name: "anthropic", Provider: demo, Model: "claude-sonnet-5-5", Models: []string{"claude-sonnet-5-5", "claude-haiku-5-5"}},
	}}
}

// storedPreference is user's stored model choice as GET /api/chat/models
// on the server at base names it, "connection/model", or "".
func storedPreference(t *testing.T, base, user string) string {
	t.Helper()
	req, _ := http.NewRequest("GET", base+"api/chat/models", nil)
	req.Header.Set("X-Demo-User", user)
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	var body struct {
		Preference *struct{ Connection, Model string }
	}
	if err := json.NewDecoder(resp.Body).Decode(&body); err != nil || resp.StatusCode != http.StatusOK {
		t.Fatalf("GET /api/chat/models: %d %v", resp.StatusCode, err)
	}
	if body.Preference == nil {
		return ""
	}
	return body.Preference.Connection + "/" + body.Preference.Model
}

// recordModelRequests writes each PUT of a preference and each stream
// request h serves to w, "METHOD PATH BODY" a line.
func recordModelRequests(h http.Handler, w io.Writer) http.Handler {
	return http.HandlerFunc(func(rw http.ResponseWriter, r *http.Request) {
		if r.URL.Path == "/api/chat/models/preference" || r.URL.Path == "/api/chat/stream" {
			body, _ := io.ReadAll(r.Body)
			fmt.Fprintf(w, "%s %s %s\n", r.Method, r.URL.Path, body)
			r.Body = io.NopCloser(bytes.NewReader(body))
		}
		h.ServeHTTP(rw, r)
	})
}

// pressKey presses a key with no text, as a keyboard does: Home, End, the
// arrows.
func pressKey(key string, code int64) chromedp.Action[chromedp.Void] {
	return chromedp.Func(func(ctx context.Context, t *chromedp.Target) error {
		for _, typ := range []input.DispatchKeyEventType{input.DispatchKeyEventTypeKeyDown, input.DispatchKeyEventTypeKeyUp} {
			if _, err := cdp.Call(ctx, t, input.DispatchKeyEvent, input.DispatchKeyEventParams{Type: typ, Key: key, Code: key, WindowsVirtualKeyCode: code, NativeVirtualKeyCode: code}); err != nil {
				return err
			}
		}
		return nil
	})
}

// pressEnter presses Enter the way a keyboard does: one keydown carrying the
// text "\r", whose newline a page cancels with preventDefault. (SendKeys
// sends the text as a separate char event, which no keydown handler sees.)
var pressEnter = chromedp.Func(func(ctx context.Context, t *chromedp.Target) error {
	for _, p := range []input.DispatchKeyEventParams{
		{Type: input.DispatchKeyEventTypeKeyDown, Key: "Enter", Code: "Enter", Text: "\r", UnmodifiedText: "\r", WindowsVirtualKeyCode: 13, NativeVirtualKeyCode: 13},
		{Type: input.DispatchKeyEventTypeKeyUp, Key: "Enter", Code: "Enter", WindowsVirtualKeyCode: 13, NativeVirtualKeyCode: 13},
	} {
		if _, err := cdp.Call(ctx, t, input.DispatchKeyEvent, p); err != nil {
			return err
		}
	}
	return nil
})

// longMessage is a message whose echo keeps the demo model streaming prose
// for a few seconds, long enough to act while it does. The demo model
// echoes it inside a fence, which the message closes, so the words after it
// stream as markdown.
func longMessage() string {
	var b strings.Builder
	b.WriteString("hello\n```\n")
	for i := range 400 {
		fmt.Fprintf(&b, "w%d ", i)
	}
	return b.String()
}

// hostileMarkdown is model output that tries to run script, load things and
// borrow the page's look, beside ordinary markdown that must still render.
const hostileMarkdown = `<img src=x onerror="window.pwned=1;alert(1)">
<script>window.pwned=2</script>

[click me](javascript:window.pwned=3) [data link](data:text/html;base64,PHNjcmlwdD5hbGVydCgxKTwvc2NyaXB0Pg==) [safe](https://example.com/) ![pic](https://example.com/x.png)

<a href="javascript:window.pwned=4" class="card" style="color:red">raw link</a> <iframe src="javascript:window.pwned=5"></iframe> <svg onload="window.pwned=6"></svg>

| a | b |
|---|---|
| **1** | 2 |

## A heading`
