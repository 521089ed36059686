package blocks

import (
	"strings"
	"unicode/utf8"
)

// chunkSize is how much prose the Parser buffers before emitting a Markdown
// block: small enough to feel live, large enough to spare the client a
// re-render per token.
const chunkSize = 50

// maxFenceLine bounds how long a line that starts with backticks is held
// back while the Parser decides whether it is a fence. A longer line is
// ordinary text. The bound depends only on the text, so the outcome does not
// depend on how the text was split.
const maxFenceLine = 256

// A Parser turns streamed model text into blocks: prose becomes Markdown
// blocks of about 50 bytes, and ``` fenced sections become a Load block
// followed, once the fence closes, by a Code or Mermaid block.
//
// Write feeds text as it arrives; Flush ends the text. The blocks emitted
// do not depend on how the text was split into deltas, except for where
// prose is cut into Markdown chunks, and the chunks concatenate to exactly
// the prose. The zero value is ready to use. A Parser is not safe for
// concurrent use.
type Parser struct {
	prose []byte // prose not yet emitted
	body  []byte // the open fence's body so far
	line  []byte // a line start held back because it may be a fence line
	ticks int    // number of leading backticks in line

	midLine bool // the current line is known not to be a fence line

	inFence  bool
	fenceLen int    // backticks in the opening fence; closing needs at least as many
	fenceTag string // language of the open fence
	fenceKnd Kind   // Code or Mermaid
}

// Write parses the next piece of model text, calling emit for each block
// completed by it. emit must not call back into the Parser.
func (p *Parser) Write(delta string, emit func(Block)) {
	for len(delta) > 0 {
		if p.midLine {
			seg := delta
			if i := strings.IndexByte(delta, '\n'); i >= 0 {
				seg = delta[:i+1]
				p.midLine = false
			}
			delta = delta[len(seg):]
			addText(p, seg, emit)
			continue
		}
		// At a line start, or inside a held line that may be a fence.
		c := delta[0]
		delta = delta[1:]
		if c == '\n' {
			p.endLine(true, emit)
			continue
		}
		p.line = append(p.line, c)
		if !p.fenceCandidate(c) {
			p.midLine = true
			p.releaseLine(emit)
		}
	}
}

// Flush ends the text: it resolves a held line, emits an unclosed fence as
// its block with the body received so far, and emits the remaining prose.
// The Parser is then reset and may be reused.
func (p *Parser) Flush(emit func(Block)) {
	if len(p.line) > 0 {
		p.endLine(false, emit)
	}
	if p.inFence {
		p.closeFence(emit)
	}
	p.emitProse(true, emit)
	p.Reset()
}

// Reset discards all buffered text and state, keeping allocated buffers.
func (p *Parser) Reset() {
	*p = Parser{prose: p.prose[:0], body: p.body[:0], line: p.line[:0]}
}

// fenceCandidate reports whether the held line, whose last byte is c, may
// still turn out to be a fence line.
func (p *Parser) fenceCandidate(c byte) bool {
	if len(p.line) > maxFenceLine {
		return false
	}
	if len(p.line) == p.ticks+1 && c == '`' { // still in the leading run
		p.ticks++
		return true
	}
	if p.inFence { // a closing fence: enough backticks, then only spaces
		return p.ticks >= p.fenceLen && (c == ' ' || c == '\t' || c == '\r')
	}
	// An opening fence: three or more backticks, then an info string
	// without backticks (CommonMark), so "```x``` y" stays prose.
	return p.ticks >= 3 && c != '`'
}

// endLine resolves the held line, which ended with a newline (nl) or with
// the end of the text.
func (p *Parser) endLine(nl bool, emit func(Block)) {
	switch {
	case p.inFence && p.ticks >= p.fenceLen:
		p.closeFence(emit)
		p.line, p.ticks = p.line[:0], 0
	case !p.inFence && p.ticks >= 3:
		p.openFence(emit)
		p.line, p.ticks = p.line[:0], 0
	default:
		if nl {
			p.line = append(p.line, '\n')
		}
		p.releaseLine(emit)
	}
}

// releaseLine passes the held line on as ordinary text.
func (p *Parser) releaseLine(emit func(Block)) {
	addText(p, p.line, emit)
	p.line, p.ticks = p.line[:0], 0
}

// addText appends ordinary text to the fence body or the prose. It is
// generic so that neither a delta nor a held line is copied to convert it.
func addText[S ~string | ~[]byte](p *Parser, s S, emit func(Block)) {
	if p.inFence {
		p.body = append(p.body, s...)
		return
	}
	p.prose = append(p.prose, s...)
	if len(p.prose) >= chunkSize {
		p.emitProse(false, emit)
	}
}

// emitProse emits the buffered prose as one Markdown block once there is at
// least chunkSize of it, or whatever there is if all is set. Unless all is
// set it holds back an incomplete trailing rune.
func (p *Parser) emitProse(all bool, emit func(Block)) {
	switch {
	case all:
		p.emitFirst(len(p.prose), emit)
	case len(p.prose) >= chunkSize:
		p.emitFirst(len(p.prose)-incompleteTail(p.prose), emit)
	}
}

// FlushProse emits the prose buffered so far, however short, without ending
// the text: a line that may still be a fence and an incomplete trailing rune
// stay buffered. Use it for latency, e.g. to show the first words of an
// answer at once; chunking resumes with the next Write.
func (p *Parser) FlushProse(emit func(Block)) {
	p.emitFirst(len(p.prose)-incompleteTail(p.prose), emit)
}

// emitFirst emits the first n bytes of prose as a Markdown block.
func (p *Parser) emitFirst(n int, emit func(Block)) {
	if n <= 0 {
		return
	}
	emit(Block{Kind: Markdown, Content: string(p.prose[:n])})
	p.prose = p.prose[:copy(p.prose, p.prose[n:])]
}

// incompleteTail returns the length of a trailing UTF-8 sequence in b that
// is a valid prefix of a rune still missing bytes, or 0.
func incompleteTail(b []byte) int {
	for k := 1; k <= utf8.UTFMax-1 && k <= len(b); k++ {
		c := b[len(b)-k]
		if c < utf8.RuneSelf {
			return 0
		}
		if utf8.RuneStart(c) {
			if utf8.FullRune(b[len(b)-k:]) {
				return 0
			}
			return k
		}
	}
	return 0
}

// openFence starts a fenced block from the held opening line.
func (p *Parser) openFence(emit func(Block)) {
	p.emitProse(true, emit)
	info := strings.TrimSpace(string(p.line[p.ticks:]))
	if i := strings.IndexAny(info, " \t"); i >= 0 {
		info = info[:i]
	}
	p.inFence, p.fenceLen, p.fenceTag, p.fenceKnd = true, p.ticks, info, Code
	if strings.EqualFold(info, "mermaid") {
		p.fenceTag, p.fenceKnd = "", Mermaid
	}
	emit(Block{Kind: Load, Tag: string(p.fenceKnd)})
}

// closeFence emits the open fence's block.
func (p *Parser) closeFence(emit func(Block)) {
	b := Block{Kind: p.fenceKnd, Content: string(p.body), Tag: p.fenceTag}
	p.inFence, p.fenceLen, p.fenceTag, p.fenceKnd = false, 0, "", ""
	p.body = p.body[:0]
	emit(b)
}
