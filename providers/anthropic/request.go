package anthropic

import (
	"bytes"
	"encoding/json"
	"fmt"
	"slices"
	"strings"
	"unicode"
	"unicode/utf8"

	ant "github.com/anthropics/anthropic-sdk-go"
	"github.com/anthropics/anthropic-sdk-go/packages/param"

	"github.com/parleyhq/parley/providers"
)

// invalidArgsKey is the one field of the input object a historical tool call
// is replayed with when its arguments were not a JSON object: the Messages
// API only takes objects, and a request must not fail over a call the model
// once garbled.
const invalidArgsKey = "invalid_arguments"

// params maps a Request onto the Messages API body.
func (p *Provider) params(req *providers.Request) (ant.MessageNewParams, error) {
	model := req.Model
	if model == "" {
		model = p.model
	}
	if model == "" {
		return ant.MessageNewParams{}, fmt.Errorf("anthropic: no model: set Request.Model or Config.Model")
	}
	maxTokens := req.MaxTokens
	if maxTokens <= 0 {
		maxTokens = p.maxTokens
	}
	msgs, extra, err := messages(req.Messages)
	if err != nil {
		return ant.MessageNewParams{}, err
	}
	params := ant.MessageNewParams{
		Model:     ant.Model(model),
		MaxTokens: int64(maxTokens),
		Messages:  msgs,
		System:    systemBlocks(req.System, req.SystemStable, extra),
	}
	for _, t := range req.Tools {
		tool, err := toolParam(t)
		if err != nil {
			return params, err
		}
		params.Tools = append(params.Tools, ant.ToolUnionParam{OfTool: tool})
	}
	if n := len(params.Tools); n > 0 {
		// Tools come first in the cached prefix and change only with the
		// user's permissions.
		params.Tools[n-1].OfTool.CacheControl = ant.NewCacheControlEphemeralParam()
	}
	thinking := (p.budget > 0 || p.adaptive) && !inToolLoop(msgs)
	switch {
	case thinking && p.adaptive:
		params.Thinking = ant.ThinkingConfigParamUnion{OfAdaptive: &ant.ThinkingConfigAdaptiveParam{}}
	case thinking:
		params.Thinking = ant.ThinkingConfigParamOfEnabled(int64(p.budget))
	}
	if thinking {
		params.MaxTokens += int64(p.budget)
	} else if req.Temperature != nil {
		// The API refuses a temperature alongside thinking.
		params.Temperature = ant.Float(*req.Temperature)
	}
	return params, nil
}

// inToolLoop reports whether the last assistant message on the wire made
// tool calls. With thinking on, the API then wants that message to start
// with the signed thinking block the model wrote, which a
// providers.Message does not keep; the API's own remedy is to send the
// request without thinking.
func inToolLoop(msgs []ant.MessageParam) bool {
	for i := len(msgs) - 1; i >= 0; i-- {
		if msgs[i].Role == ant.MessageParamRoleAssistant {
			return slices.ContainsFunc(msgs[i].Content, func(b ant.ContentBlockParamUnion) bool { return b.OfToolUse != nil })
		}
	}
	return false
}

// systemBlocks splits system at stable into a cached stable block and a
// volatile one; without a usable split the whole prompt is one cached
// block. extra, the conversation's system messages, follow uncached.
func systemBlocks(system string, stable int, extra []string) []ant.TextBlockParam {
	var out []ant.TextBlockParam
	if !blank(system) {
		for stable > 0 && stable < len(system) && !utf8.RuneStart(system[stable]) {
			stable-- // a split inside a rune would garble both halves
		}
		if stable <= 0 || stable >= len(system) || blank(system[:stable]) || blank(system[stable:]) {
			out = append(out, ant.TextBlockParam{Text: system})
		} else {
			out = append(out, ant.TextBlockParam{Text: system[:stable]}, ant.TextBlockParam{Text: system[stable:]})
		}
		out[0].CacheControl = ant.NewCacheControlEphemeralParam()
	}
	for _, s := range extra {
		out = append(out, ant.TextBlockParam{Text: s})
	}
	return out
}

// messages converts the conversation. The Messages API has no system or
// tool role and wants roles to alternate: system messages are returned
// apart (they join the system prompt), tool results become tool_result
// blocks of a user message, and consecutive messages of one role merge
// into one. Blank text, which the API refuses, is left out, and a message
// left with nothing is dropped.
func messages(in []providers.Message) (msgs []ant.MessageParam, system []string, err error) {
	for i, m := range in {
		var role ant.MessageParamRole
		var blocks []ant.ContentBlockParamUnion
		switch m.Role {
		case providers.System:
			if !blank(m.Content) {
				system = append(system, m.Content)
			}
			continue
		case providers.User:
			role = ant.MessageParamRoleUser
			if !blank(m.Content) {
				blocks = append(blocks, ant.NewTextBlock(m.Content))
			}
		case providers.Tool:
			if m.ToolCallID == "" {
				return nil, nil, fmt.Errorf("anthropic: message %d: tool message without tool_call_id", i)
			}
			role = ant.MessageParamRoleUser
			r := &ant.ToolResultBlockParam{ToolUseID: toolID(m.ToolCallID)}
			if !blank(m.Content) {
				r.Content = []ant.ToolResultBlockParamContentUnion{{OfText: &ant.TextBlockParam{Text: m.Content}}}
			}
			blocks = append(blocks, ant.ContentBlockParamUnion{OfToolResult: r})
		case providers.Assistant:
			role = ant.MessageParamRoleAssistant
			if !blank(m.Content) {
				blocks = append(blocks, ant.NewTextBlock(m.Content))
			}
			for _, c := range m.ToolCalls {
				blocks = append(blocks, ant.ContentBlockParamUnion{OfToolUse: &ant.ToolUseBlockParam{
					ID: toolID(c.ID), Name: c.Name, Input: toolInput(c.Args),
				}})
			}
		default:
			return nil, nil, fmt.Errorf("anthropic: message %d: unknown role %q", i, m.Role)
		}
		if len(blocks) == 0 {
			continue
		}
		if n := len(msgs); n > 0 && msgs[n-1].Role == role {
			msgs[n-1].Content = append(msgs[n-1].Content, blocks...)
		} else {
			msgs = append(msgs, ant.MessageParam{Role: role, Content: blocks})
		}
	}
	for i := range msgs {
		if msgs[i].Role == ant.MessageParamRoleUser {
			// Tool results must open the message that follows the calls.
			slices.SortStableFunc(msgs[i].Content, func(a, b ant.ContentBlockParamUnion) int {
				return boolRank(b.OfToolResult != nil) - boolRank(a.OfToolResult != nil)
			})
		}
	}
	if n := len(msgs); n > 0 && msgs[n-1].Role == ant.MessageParamRoleAssistant {
		trimFinalAssistant(&msgs[n-1])
		if len(msgs[n-1].Content) == 0 {
			msgs = msgs[:n-1]
		}
	}
	return msgs, system, nil
}

// trimFinalAssistant drops trailing whitespace from a final assistant
// message, which the API refuses there (it would continue the text).
func trimFinalAssistant(m *ant.MessageParam) {
	last := m.Content[len(m.Content)-1].OfText
	if last == nil {
		return
	}
	if last.Text = strings.TrimRightFunc(last.Text, unicode.IsSpace); last.Text == "" {
		m.Content = m.Content[:len(m.Content)-1]
	}
}

func boolRank(b bool) int {
	if b {
		return 1
	}
	return 0
}

// toolInput is a call's arguments as the input object of a tool_use block:
// a JSON object as is, nothing as {}, anything else (invalid JSON, an
// array, a string) wrapped as {invalidArgsKey: "<the text>"}.
func toolInput(args json.RawMessage) json.RawMessage {
	trimmed := bytes.TrimSpace(args)
	if len(trimmed) == 0 {
		return json.RawMessage(`{}`)
	}
	if trimmed[0] == '{' && json.Valid(trimmed) {
		return json.RawMessage(trimmed)
	}
	wrapped, _ := json.Marshal(map[string]string{invalidArgsKey: string(args)}) // cannot fail
	return wrapped
}

// toolID makes id fit the API's pattern for tool_use ids,
// ^[a-zA-Z0-9_-]+$, by replacing every other byte with '_'. The mapping
// is the same for a call and its result, so they still pair; ids from
// other providers (call_…, toolu_…) pass unchanged.
func toolID(id string) string {
	ok := func(c byte) bool {
		return c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || c == '_' || c == '-'
	}
	for i := 0; i < len(id); i++ {
		if !ok(id[i]) {
			b := []byte(id)
			for j := i; j < len(b); j++ {
				if !ok(b[j]) {
					b[j] = '_'
				}
			}
			return string(b)
		}
	}
	return id
}

// toolParam maps a tool definition; its JSON Schema is sent as is.
func toolParam(t providers.ToolDef) (*ant.ToolParam, error) {
	tool := &ant.ToolParam{Name: t.Name}
	if t.Description != "" {
		tool.Description = ant.String(t.Description)
	}
	schema := bytes.TrimSpace(t.Parameters)
	if len(schema) == 0 {
		schema = []byte(`{"type":"object","properties":{}}`)
	}
	var obj map[string]json.RawMessage
	if err := json.Unmarshal(schema, &obj); err != nil || obj == nil {
		return nil, fmt.Errorf("anthropic: tool %q: parameters are not a JSON object", t.Name)
	}
	tool.InputSchema = param.Override[ant.ToolInputSchemaParam](json.RawMessage(schema))
	return tool, nil
}

// blank reports whether s is empty or white space, which the API refuses
// as a text block.
func blank(s string) bool { return strings.TrimFunc(s, unicode.IsSpace) == "" }
