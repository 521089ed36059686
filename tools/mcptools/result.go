package mcptools

import (
	"encoding/json"
	"strings"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/parleyhq/parley/tools"
)

// maxSummaryBytes bounds a result's one-line summary.
const maxSummaryBytes = 200

// resultOf is a server's result as a Parley Result: the text of its
// content (at most max bytes, images and other media named, not carried),
// its structured content as the data when it has one, and its first line as
// the summary. The server's error result is a failed Result whose data
// holds the server's text: the message, which users may see, is Parley's.
func resultOf(res *mcp.CallToolResult, max int) tools.Result {
	if res == nil {
		return tools.Fail(tools.CodeInternal, "The external tool returned nothing.")
	}
	text := contentText(res.Content, max)
	if res.IsError {
		r := tools.Fail(tools.CodeInternal, "The external tool reported an error.")
		if text != "" {
			r.Data = map[string]string{"error": text}
			r.Error.Hint = "Read data.error: it is the tool's own account of what went wrong."
		}
		return r
	}
	summary := text
	if i := strings.IndexByte(summary, '\n'); i >= 0 {
		summary = summary[:i]
	}
	summary = truncate(strings.TrimSpace(summary), maxSummaryBytes)
	if summary == "" {
		summary = "The external tool succeeded."
	}
	var data any
	if res.StructuredContent != nil {
		if raw, err := json.Marshal(res.StructuredContent); err == nil && len(raw) <= max {
			data = json.RawMessage(raw)
		}
	}
	if data == nil && text != "" {
		data = map[string]string{"text": text}
	}
	return tools.OK(summary, data)
}

// contentText joins the text of contents, at most max bytes of it.
func contentText(contents []mcp.Content, max int) string {
	var b strings.Builder
	for _, c := range contents {
		if b.Len() > 0 {
			b.WriteByte('\n')
		}
		switch c := c.(type) {
		case *mcp.TextContent:
			b.WriteString(c.Text)
		case *mcp.ImageContent:
			b.WriteString("[an image (" + truncate(c.MIMEType, 64) + ") was left out]")
		case *mcp.AudioContent:
			b.WriteString("[audio (" + truncate(c.MIMEType, 64) + ") was left out]")
		case *mcp.ResourceLink:
			b.WriteString("[resource: " + truncate(c.URI, 512) + "]")
		case *mcp.EmbeddedResource:
			if c.Resource != nil && c.Resource.Text != "" {
				b.WriteString(c.Resource.Text)
			} else {
				b.WriteString("[an embedded resource was left out]")
			}
		default:
			b.WriteString("[content of another kind was left out]")
		}
		if b.Len() > max {
			break
		}
	}
	s := strings.ToValidUTF8(b.String(), "\uFFFD")
	if len(s) > max {
		s = truncate(s, max) + "\n[cut: the result was longer]"
	}
	return s
}
