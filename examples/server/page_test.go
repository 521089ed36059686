package main

import (
	"fmt"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/chromedp/chromedp"

	"github.com/parleyhq/parley/providers/fake"
)

// TestBrowserPage pins what makes the page read as finished: a reload
// mid-answer resumes it, controls and fields share one look, a round of
// tool calls is one row, a decision is said once, titles are text, an
// empty chat has one name, answers can be copied, a message over the limit
// stays in the composer, and notices look like notices. Screenshots at
// desktop and phone width.
func TestBrowserPage(t *testing.T) {
	t.Parallel()
	tb := newTab(t)

	t.Run("ReloadMidAnswerResumesItWithStop", func(t *testing.T) {
		tb.send(t, longMessage())
		tb.waitFor(t, "the answer to stream", `(document.querySelector("#log .reply .md") || {textContent: ""}).textContent.length > 20`)
		tb.do(t, chromedp.Reload())
		tb.waitFor(t, "the answer to stream again after the reload", `/w\d+/.test(([...document.querySelectorAll("#log .reply:last-child .md")].at(-1) || {textContent: ""}).textContent) && !document.querySelector("#log .reply:last-child .actions")`)
		if eval[bool](t, tb, `document.getElementById("stop").hidden || !document.getElementById("send").disabled`) {
			tb.fail(t, "while the resumed answer streams, Stop must show and Send be disabled")
		}
		if n := eval[int](t, tb, `[...document.querySelectorAll("#log .turnctl")].filter((b) => !b.disabled && b.offsetParent !== null).length`); n != 0 {
			t.Errorf("%d rating, edit or regenerate controls are enabled while the answer streams", n)
		}
		if strings.Contains(tb.lastReply(t), "reload to see the rest") {
			t.Errorf("the resumed answer still says to reload: %q", tb.lastReply(t))
		}
		tb.shot(t, "11-desktop-resumed-mid-answer")
		tb.idle(t)
		reply := tb.lastReply(t)
		if !strings.Contains(reply, "w399") || strings.Count(reply, "w200 ") != 1 {
			t.Errorf("the resumed answer did not complete once: %q", reply)
		}
		if eval[bool](t, tb, `!document.querySelector("#log .reply:last-child .actions .regen:enabled") || !document.querySelector("#log .reply:last-child .actions .rate:enabled")`) {
			t.Errorf("Regenerate and the ratings are not back once the answer ended")
		}
		tb.checkProblems(t)
	})

	t.Run("StopWorksOnAResumedAnswer", func(t *testing.T) {
		tb.send(t, longMessage())
		tb.waitFor(t, "the answer to stream", `(document.querySelector("#log .reply:last-child .md") || {textContent: ""}).textContent.length > 20`)
		tb.do(t, chromedp.Reload())
		tb.waitFor(t, "Stop on the resumed answer", `!document.getElementById("stop").hidden && document.querySelector("#log .reply:last-child .md")`)
		tb.do(t, chromedp.Click(chromedp.ID("stop")))
		tb.idle(t)
		if got := tb.text(t, "#log .reply:last-child .stopped"); got != "The answer was stopped." {
			t.Errorf("stopped note %q", got)
		}
		tb.checkProblems(t)
	})

	t.Run("AnEmptyChatHasOneName", func(t *testing.T) {
		tb.do(t, chromedp.Click(chromedp.ID("new")))
		tb.waitFor(t, "an empty chat with a draft thread", `document.getElementById("log").children.length === 0 && new URLSearchParams(location.search).get("thread")`)
		tb.waitFor(t, "the draft in the list", `document.querySelector("#threads .row.active")`)
		if got := tb.text(t, "#title"); got != "New chat" {
			t.Errorf("header %q, want New chat", got)
		}
		if got := tb.text(t, "#threads .row.active .t"); got != "New chat" {
			t.Errorf("the draft is listed as %q, want New chat", got)
		}
		if body := eval[string](t, tb, `document.body.innerText`); strings.Contains(body, "Untitled") {
			t.Errorf("the page calls an empty chat Untitled too")
		}
		tb.shot(t, "12-desktop-empty-chat")
		tb.checkProblems(t)
	})

	t.Run("ToolCallsFoldIntoOneRowPerRound", func(t *testing.T) {
		tb.chat(t, "show my notes")
		last := `[...document.querySelectorAll("#log .reply")].at(-1)`
		if n := eval[int](t, tb, last+`.querySelectorAll("details.tools").length`); n != 1 {
			t.Fatalf("%d tool rows, want 1 for the round", n)
		}
		if n := eval[int](t, tb, last+`.querySelectorAll(".tool").length`); n != 0 {
			t.Errorf("%d one-line tool entries beside the row", n)
		}
		if got := eval[string](t, tb, last+`.querySelector("details.tools > summary").innerText`); !strings.Contains(got, "✓ list_notes: 2 notes") {
			t.Errorf("tool row %q", got)
		}
		if eval[bool](t, tb, last+`.querySelector("details.tools").open`) {
			t.Errorf("the tool row starts open; it should be folded")
		}
		eval[chromedp.Void](t, tb, last+`.querySelector("details.tools > summary").click()`)
		body := eval[string](t, tb, last+`.querySelector("details.tools .body").innerText`)
		if !strings.Contains(body, "Result: 2 notes") || strings.ContainsAny(body, "{}") {
			t.Errorf("tool details %q, want the result in words, no JSON", body)
		}
		tb.shot(t, "13-desktop-tool-row-open")
		tb.checkProblems(t)
	})

	t.Run("AnswersHaveACopyButton", func(t *testing.T) {
		copyBtn := `[...document.querySelectorAll("#log .reply")].at(-1).querySelector(".actions button.copy")`
		tb.waitFor(t, "Copy on the answer", copyBtn+` && !`+copyBtn+`.hidden`)
		eval[chromedp.Void](t, tb, copyBtn+`.click()`)
		tb.waitFor(t, "the answer's Copy to say Copied", copyBtn+`.textContent === "Copied"`)
		tb.checkProblems(t)
	})

	t.Run("AnApprovalIsSaidOnce", func(t *testing.T) {
		tb.chat(t, "add a note: buy bread")
		tb.waitFor(t, "a pending card", `[...document.querySelectorAll("#log .card")].at(-1).querySelector("button.apply:enabled")`)
		// The card's details are names and values, not JSON.
		details := eval[string](t, tb, `(() => { const d = [...document.querySelectorAll("#log .card")].at(-1).querySelector("details"); d.open = true; return d.innerText; })()`)
		if !strings.Contains(details, "buy bread") || strings.ContainsAny(details, "{}") {
			t.Errorf("card details %q, want the arguments in words", details)
		}
		eval[chromedp.Void](t, tb, `[...document.querySelectorAll("#log .card")].at(-1).querySelector("button.apply").click()`)
		tb.idle(t)
		if eval[bool](t, tb, `[...[...document.querySelectorAll("#log .card")].at(-1).querySelectorAll(".buttons button")].some((b) => b.offsetParent !== null)`) {
			t.Errorf("the decided card still shows Apply and Decline")
		}
		if n := eval[int](t, tb, `[...document.querySelectorAll("#log .reply")].at(-2).querySelectorAll("details.tools").length`); n != 0 {
			t.Errorf("the call the card asks about also has a pending tool row (%d)", n)
		}
		if n := eval[int](t, tb, `(document.getElementById("log").innerText.match(/Applied/g) || []).length`); n != 1 {
			t.Errorf("%d visible Applied lines after one approval, want 1:\n%s", n, strings.Join(tb.transcript(t), "\n"))
		}
		tb.shot(t, "14-desktop-applied")
		tb.checkProblems(t)
	})

	t.Run("ControlsAndFieldsAreStyled", func(t *testing.T) {
		tb.chat(t, "show me a form")
		tb.waitFor(t, "an open form", `document.querySelector("#log form.ask:not(.closed) input[type=text]")`)
		type look struct{ Radius, Border, Background string }
		style := func(sel string) look {
			return eval[look](t, tb, fmt.Sprintf(`(() => { const s = getComputedStyle(document.querySelector(%q)); return {Radius: s.borderRadius, Border: s.borderTopStyle, Background: s.backgroundColor}; })()`, sel))
		}
		accent := "rgb(59, 125, 221)"
		if s := style("#log form.ask:not(.closed) button[type=submit]"); s.Background != accent || s.Radius == "0px" {
			t.Errorf("the form's Submit looks like %+v, want the accent with rounded corners", s)
		}
		for _, sel := range []string{"#log form.ask:not(.closed) input[type=text]", "#log form.ask:not(.closed) input[type=number]", "#log form.ask:not(.closed) input[type=date]", "#log form.ask:not(.closed) select"} {
			if s := style(sel); s.Radius != "6px" || s.Border != "solid" {
				t.Errorf("%s looks like %+v, want the page's field style", sel, s)
			}
		}
		tb.shot(t, "15-desktop-form-styled")
		eval[chromedp.Void](t, tb, `(() => { const f = document.querySelector("#log form.ask:not(.closed)"); f.querySelector("input[type=text]").value = "Ann"; f.querySelector("select").value = "green"; f.querySelector("fieldset input").checked = true; f.querySelector("button[type=submit]").click(); })()`)
		tb.idle(t)
		tb.checkProblems(t)
	})

	t.Run("TitlesAreShownWithoutMarkdown", func(t *testing.T) {
		thread := tb.threadInURL(t)
		eval[chromedp.Void](t, tb, fmt.Sprintf(`fetch("/api/chat/threads/%s", {method: "PATCH", headers: {"Content-Type": "application/json", "X-Demo-User": "alice"}, body: JSON.stringify({title: "## **Shopping** list for _Mum_ via `+"`add_note`"+`"})}).then((r) => r.ok)`, thread))
		tb.open(t, "alice", "?thread="+thread)
		tb.waitFor(t, "the thread listed", `document.querySelector("#threads .row.active .t")`)
		want := "Shopping list for Mum via add_note"
		if got := tb.text(t, "#title"); got != want {
			t.Errorf("header %q, want %q", got, want)
		}
		if got := tb.text(t, "#threads .row.active .t"); got != want {
			t.Errorf("list row %q, want %q", got, want)
		}
		if got := eval[string](t, tb, `document.title`); !strings.HasPrefix(got, want+" · ") {
			t.Errorf("document title %q", got)
		}
		tb.checkProblems(t)
	})

	t.Run("ScrollToNewestShowsAboveTheEnd", func(t *testing.T) {
		tb.waitFor(t, "a transcript taller than the view", `document.getElementById("log").scrollHeight > document.getElementById("log").clientHeight + 200`)
		eval[chromedp.Void](t, tb, `document.getElementById("log").scrollTop = 0`)
		tb.waitFor(t, "the jump button, with no answer streaming", `!document.getElementById("jump").hidden`)
		type box struct{ Top, Bottom float64 }
		jump := eval[box](t, tb, `(() => { const r = document.getElementById("jump").getBoundingClientRect(); return {Top: r.top, Bottom: r.bottom}; })()`)
		form := eval[box](t, tb, `(() => { const r = document.getElementById("form").getBoundingClientRect(); return {Top: r.top, Bottom: r.bottom}; })()`)
		if jump.Bottom > form.Top {
			t.Errorf("the jump button (%+v) overlaps the composer (%+v)", jump, form)
		}
		tb.do(t, chromedp.Click(chromedp.ID("jump")))
		tb.waitFor(t, "the transcript at its end", `(() => { const log = document.getElementById("log"); return log.scrollHeight - log.scrollTop - log.clientHeight < 48 && document.getElementById("jump").hidden; })()`)
		tb.checkProblems(t)
	})

	t.Run("APasteOverTheLimitStaysInTheComposer", func(t *testing.T) {
		before := tb.count(t, "#log .said")
		eval[chromedp.Void](t, tb, `(() => {
			const input = document.getElementById("input");
			const data = new DataTransfer();
			data.setData("text/plain", "x".repeat(42 * 1024));
			input.focus();
			input.dispatchEvent(new ClipboardEvent("paste", {clipboardData: data, bubbles: true, cancelable: true}));
			// A synthetic paste inserts nothing; do what the browser would.
			input.value = data.getData("text/plain");
			input.dispatchEvent(new InputEvent("input", {inputType: "insertFromPaste", bubbles: true}));
		})()`)
		if got := tb.text(t, "#limit"); !strings.Contains(got, "42 KB") || !strings.Contains(got, "the limit is 32 KB") {
			t.Errorf("limit note %q, want the size and the limit", got)
		}
		if !eval[bool](t, tb, `document.getElementById("send").disabled`) {
			t.Errorf("Send is enabled with a message over the limit")
		}
		tb.do(t, chromedp.Click(chromedp.ID("input")), pressEnter)
		if n := eval[int](t, tb, `document.getElementById("input").value.length`); n != 42*1024 {
			t.Errorf("the composer holds %d characters after Enter, want the 42 KB pasted", n)
		}
		if n := tb.count(t, "#log .said"); n != before {
			t.Errorf("a message over the limit was sent")
		}
		tb.shot(t, "16-desktop-over-the-limit")
		tb.do(t, chromedp.EmulateViewport(390, 844, chromedp.EmulateMobile))
		tb.waitFor(t, "the sidebar to slide away", `getComputedStyle(document.getElementById("nav")).visibility === "hidden"`)
		tb.shot(t, "17-phone-over-the-limit")
		eval[chromedp.Void](t, tb, `(() => { const i = document.getElementById("input"); i.value = ""; i.dispatchEvent(new InputEvent("input", {bubbles: true})); })()`)
		if tb.text(t, "#limit") != "" || eval[bool](t, tb, `document.getElementById("send").disabled`) {
			t.Errorf("the limit note or a disabled Send stayed after the composer was cleared")
		}
		tb.checkProblems(t)
	})

	t.Run("PhoneWidthShowsTheSameComponents", func(t *testing.T) {
		tb.do(t, chromedp.EmulateViewport(390, 844, chromedp.EmulateMobile))
		tb.open(t, "alice", "?thread="+tb.threadInURL(t))
		tb.waitFor(t, "the thread", `document.querySelectorAll("#log .reply").length > 0`)
		if w := eval[float64](t, tb, `document.documentElement.scrollWidth`); w > 390 {
			t.Errorf("the page scrolls sideways at 390 px: %v px wide", w)
		}
		eval[chromedp.Void](t, tb, `(() => { const d = document.querySelector("#log details.tools"); d.open = true; d.scrollIntoView({block: "center"}); })()`)
		tb.shot(t, "18-phone-tool-row-and-card")
		eval[chromedp.Void](t, tb, `document.querySelector("#log form.ask").scrollIntoView({block: "center"})`)
		tb.shot(t, "19-phone-form")
		tb.do(t, chromedp.EmulateViewport(1280, 860))
		tb.checkProblems(t)
	})

	t.Run("ABlockedMessageShowsANoticeAndAPlainAnswer", func(t *testing.T) {
		tb.open(t, "alice", "")
		tb.chat(t, "my aws key is AKIAIOSFODNN7EXAMPLE secret wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY")
		if got := tb.text(t, "#log .reply .warning"); !strings.Contains(got, "was not sent to the assistant") {
			t.Errorf("warning %q", got)
		}
		if reply := tb.lastReply(t); strings.Contains(reply, "Tell the user") || strings.Contains(reply, "security filter") {
			t.Errorf("the answer repeats the Engine's instruction: %q", reply)
		}
		tb.shot(t, "20-desktop-blocked-message")
		tb.checkProblems(t)
	})
}

// A sentence in which the model claims a change it did not make is
// withheld by the Engine, which says so in a warning block: the page shows
// it as a notice beside what was kept of the answer.
func TestBrowserWithheldClaimShowsAWarning(t *testing.T) {
	t.Parallel()
	model := fake.New()
	model.SetDefault(fake.Turn{fake.Text("I have deleted note 1. Anything else I can do?")})
	tb := newTabOn(t, func() *httptest.Server {
		srv, _ := newTestAppWithModel(t, settings{DatabasePath: testDatabase(t)}, model, &logBuffer{})
		return srv
	})
	tb.chat(t, "delete note 1 please")
	warning := tb.text(t, "#log .reply .warning")
	if !strings.Contains(warning, "left out") {
		t.Fatalf("no warning about the withheld claim; the answer reads %q", tb.lastReply(t))
	}
	if strings.Contains(tb.lastReply(t), "I have deleted") {
		t.Errorf("the withheld claim shows: %q", tb.lastReply(t))
	}
	look := eval[string](t, tb, `(() => { const s = getComputedStyle(document.querySelector("#log .reply .warning")); return s.borderLeftStyle + " " + s.paddingLeft; })()`)
	if look != "solid 32px" {
		t.Errorf("the warning is styled %q, want the notice's bar and icon room", look)
	}
	tb.shot(t, "21-desktop-withheld-claim")
	tb.do(t, chromedp.EmulateViewport(390, 844, chromedp.EmulateMobile))
	tb.shot(t, "22-phone-withheld-claim")
	tb.checkProblems(t)
}
