package assistant

import (
	"context"
	"encoding/json"
	"strings"
	"unicode/utf8"

	"github.com/parleyhq/parley/blocks"
	"github.com/parleyhq/parley/internal/phantom"
	"github.com/parleyhq/parley/store"
)

// AuditClaimWithheld records a turn whose model claimed a change that no
// tool call made ("I have deleted note 1.") and whose claim was withheld
// (A8). Data {"sentences": how many were withheld, "lang", "word": the
// change word of the first, "finish"}; never the model's text.
const AuditClaimWithheld = "answer.claim_withheld"

// maxHeld bounds the prose claims holds back while it waits for a sentence
// to end: a longer run without a full stop is checked as it stands and let
// through up to its last space.
const maxHeld = 600

// claims is the turn's check on what the model says it did (A8). While the
// turn has made no change, the model's prose is held back a sentence at a
// time, and a sentence that claims a completed change is withheld: from
// the user, the stored reply and the replayed history. At the end of the
// turn correct says, in the claim's language, that nothing was changed.
// transcript routes the parser's blocks through it; this file alone writes
// its fields.
type claims struct {
	on       bool               // the turn has made no change: check what the model says
	held     string             // prose of a sentence not yet ended
	decided  int                // held[:decided] ends no sentence, whatever follows (phantom.Decided)
	emit     func(blocks.Block) // where checked prose goes, for the current call
	route    func(blocks.Block) // c.take as a func value, made once
	withheld []string           // the sentences withheld from the current call's text, until strip takes them out
	count    int                // the sentences withheld this turn
	first    phantom.Claim      // what the first of them claimed
}

// check turns the check on or off for the next model call.
func (c *claims) check(on bool) { c.on = on }

// sink returns where the parser's blocks go for a call that emits to
// emit: emit itself when the check is off.
func (c *claims) sink(emit func(blocks.Block)) func(blocks.Block) {
	if !c.on {
		return emit
	}
	c.emit = emit
	if c.route == nil {
		c.route = c.take
	}
	return c.route
}

// take holds prose back until its sentence ends; any other block first
// lets the prose before it through.
func (c *claims) take(b blocks.Block) {
	if b.Kind != blocks.Markdown {
		c.release(true)
		c.emit(b)
		return
	}
	c.held += b.Content
	c.release(false)
}

// release passes on each sentence held that has ended, or, all, every
// sentence held.
func (c *claims) release(all bool) {
	for c.held != "" {
		// Each delta adds a few bytes to what is held, and a long run
		// without a full stop goes out maxHeld bytes at a time: the scan
		// resumes where the last one could decide nothing more, never
		// at the start again.
		n := phantom.SentenceEnd(c.held[c.decided:])
		if n > 0 {
			n += c.decided
		} else {
			c.decided = phantom.Decided(c.held)
		}
		switch {
		case n > 0:
		case all, strings.ContainsRune(".!?…", lastRune(c.held)):
			// A full stop that ends what was written so far ends a
			// sentence too: the model may pause after it, or stop.
			n = len(c.held)
		case len(c.held) > maxHeld:
			n = strings.LastIndexByte(c.held[:maxHeld], ' ') + 1
			if n <= 0 {
				n = truncatedLen(c.held, maxHeld)
			}
			if n == 0 {
				// No rune starts in maxHeld bytes: they are not UTF-8,
				// no cut splits a rune, and cutting none would loop.
				n = maxHeld
			}
		default:
			return
		}
		s := c.held[:n]
		c.held, c.decided = c.held[n:], max(0, c.decided-n)
		c.pass(s)
	}
}

// pass emits sentence s, or withholds it if it claims a change.
func (c *claims) pass(s string) {
	if claim, ok := phantom.Check(s); ok {
		if c.count == 0 {
			c.first = claim
		}
		c.count++
		c.withheld = append(c.withheld, s)
		return
	}
	c.emit(blocks.Block{Kind: blocks.Markdown, Content: s})
}

// flush passes on what is held: the call's text has ended.
func (c *claims) flush() { c.release(true) }

// strip returns the model's text of a call without the sentences withheld
// from it, as later turns will replay it. Each call's text is stripped
// once, of its own sentences: a later call that says the same thing after
// a change ran keeps it.
func (c *claims) strip(text string) string {
	for _, s := range c.withheld {
		text = strings.Replace(text, s, "", 1)
	}
	c.withheld = c.withheld[:0]
	return text
}

// lastRune is the last rune of s, or utf8.RuneError.
func lastRune(s string) rune {
	r, _ := utf8.DecodeLastRuneInString(s)
	return r
}

// truncatedLen is the length of the longest prefix of s of at most n bytes
// that does not split a rune.
func truncatedLen(s string, n int) int { return len(truncate(s, n)) }

// noChange is what the user reads when a claim was withheld: nothing was
// changed, in the claim's language. pending is said when a card waits.
var noChange = map[string][2]string{
	"en": {"Note: nothing was changed. No action was carried out for this request; ask me again if you want me to make the change.",
		"Note: nothing has been changed yet. The change waits for your approval on the card."},
	"de": {"Hinweis: Es wurde nichts geändert. Für diese Anfrage wurde keine Aktion ausgeführt; bitte mich erneut darum, wenn ich die Änderung vornehmen soll.",
		"Hinweis: Es wurde noch nichts geändert. Die Änderung wartet auf deine Freigabe auf der Karte."},
	"fr": {"Remarque : rien n'a été modifié. Aucune action n'a été exécutée pour cette demande ; redemandez-le-moi si vous voulez que j'effectue la modification.",
		"Remarque : rien n'a encore été modifié. La modification attend votre approbation sur la carte."},
	"es": {"Nota: no se ha cambiado nada. No se ejecutó ninguna acción para esta solicitud; vuelve a pedírmelo si quieres que haga el cambio.",
		"Nota: todavía no se ha cambiado nada. El cambio espera tu aprobación en la tarjeta."},
	"it": {"Nota: non è stato modificato nulla. Per questa richiesta non è stata eseguita alcuna azione; chiedimelo di nuovo se vuoi che apporti la modifica.",
		"Nota: non è stato ancora modificato nulla. La modifica attende la tua approvazione nella scheda."},
	"pt": {"Observação: nada foi alterado. Nenhuma ação foi executada para este pedido; peça-me de novo se quiser que eu faça a alteração.",
		"Observação: nada foi alterado ainda. A alteração aguarda a sua aprovação no cartão."},
	"pl": {"Uwaga: nic nie zostało zmienione. Dla tej prośby nie wykonano żadnej akcji; poproś mnie ponownie, jeśli mam wprowadzić zmianę.",
		"Uwaga: jeszcze nic nie zostało zmienione. Zmiana czeka na Twoje zatwierdzenie na karcie."},
	"nl": {"Let op: er is niets gewijzigd. Voor dit verzoek is geen actie uitgevoerd; vraag het me opnieuw als je wilt dat ik de wijziging doorvoer.",
		"Let op: er is nog niets gewijzigd. De wijziging wacht op je goedkeuring op de kaart."},
}

// claimWarning tells the user why part of the answer is missing.
const claimWarning = "The assistant said it had made a change that no action made, so that part of its answer was left out."

// correct ends a turn whose model claimed a change that no tool call made:
// the user is told that nothing was changed, the stored model messages say
// so too, and the turn is audited. A stopped or failed turn says nothing
// more, and neither does one in which a change ran after all (changed):
// a claim made beside the call that then ran was true.
func correct(ctx context.Context, a *actor, out *transcript, changed bool, emit func(blocks.Block)) {
	c := &out.claims
	if c.count == 0 || out.err != nil || changed {
		return
	}
	pending := out.finish == FinishApproval
	texts, ok := noChange[c.first.Lang]
	if !ok {
		texts = noChange["en"]
	}
	reply := texts[0]
	if pending {
		reply = texts[1]
	}
	emit(blocks.Block{Kind: blocks.Warning, Content: claimWarning})
	emit(blocks.Block{Kind: blocks.Markdown, Content: reply})
	if !pending {
		// A card's turn ends on the call it waits for, which its decision
		// replays; the claim is gone from its text already.
		out.amend(reply)
	}
	data, _ := json.Marshal(map[string]any{"sentences": c.count, "lang": c.first.Lang, "word": c.first.Word, "finish": out.finish})
	ev := store.AuditEvent{Kind: AuditClaimWithheld, ActorID: a.u.ID, ThreadID: a.thread.ID, Data: data, CreatedAt: a.e.cfg.Now()}
	if err := a.e.cfg.Store.AppendAudit(context.WithoutCancel(ctx), &ev); err != nil {
		a.e.cfg.Logger.ErrorContext(ctx, "assistant: audit withheld claim", "thread", a.thread.ID, "err", err)
	}
}
