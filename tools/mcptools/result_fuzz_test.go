package mcptools

import (
	"encoding/json"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/parleyhq/parley/tools"
)

// FuzzResultOf feeds a server's result, as it arrives on the wire, through
// resultOf: whatever the server sends, the Result is bounded, valid UTF-8
// and encodes for the model, and nothing panics.
func FuzzResultOf(f *testing.F) {
	f.Add([]byte(`{"content":[{"type":"text","text":"hello\nworld"}]}`), 64)
	f.Add([]byte(`{"content":[{"type":"text","text":"no such file"}],"isError":true}`), 64)
	f.Add([]byte(`{"content":[{"type":"image","data":"aGk=","mimeType":"image/png"}],"structuredContent":{"a":[1,2,3]}}`), 8)
	f.Add([]byte(`{"content":[{"type":"resource","resource":{"uri":"file:///x","text":"\u0000\ud800"}}]}`), 16)
	f.Add([]byte(`{"content":[{"type":"text","text":"\xff\xfe"}]}`), 1)
	f.Fuzz(func(t *testing.T, wire []byte, max int) {
		if max <= 0 || max > 1<<16 {
			max = 1 << 10
		}
		var res mcp.CallToolResult
		if json.Unmarshal(wire, &res) != nil {
			return
		}
		r := resultOf(&res, max)
		out := tools.MarshalForModel(r)
		if !json.Valid(out) {
			t.Fatalf("invalid JSON for the model: %q", out)
		}
		if len(r.Summary) > maxSummaryBytes || !utf8.ValidString(r.Summary) {
			t.Fatalf("summary %q", r.Summary)
		}
		if r.OK == res.IsError {
			t.Fatalf("ok %v for isError %v", r.OK, res.IsError)
		}
		if !r.OK && strings.Contains(r.Error.Message, "data.error") && r.Data == nil {
			t.Fatalf("points to data.error without data")
		}
		if text := contentText(res.Content, max); len(text) > max+len("\n[cut: the result was longer]") || !utf8.ValidString(text) {
			t.Fatalf("text of %d bytes for max %d", len(text), max)
		}
	})
}
