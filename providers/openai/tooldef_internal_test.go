package openai

import (
	"bytes"
	"encoding/json"
	"reflect"
	"testing"
	"unicode/utf8"

	oai "github.com/openai/openai-go/v3"
	"github.com/openai/openai-go/v3/packages/param"
	"github.com/openai/openai-go/v3/shared"

	"github.com/parleyhq/parley/providers"
)

// viaMap is a tool as the client's own types encode it, the schema decoded
// into its map: what functionDef must send, byte for byte after parsing.
func viaMap(t providers.ToolDef) (any, error) {
	fn := shared.FunctionDefinitionParam{Name: t.Name}
	if t.Description != "" {
		fn.Description = param.NewOpt(t.Description)
	}
	if len(t.Parameters) > 0 {
		if err := json.Unmarshal(t.Parameters, &fn.Parameters); err != nil {
			return nil, err
		}
	}
	return encoded(oai.ChatCompletionFunctionTool(fn))
}

func encoded(v any) (any, error) {
	b, err := json.Marshal(v)
	if err != nil {
		return nil, err
	}
	var out any
	return out, json.Unmarshal(b, &out)
}

// checkDef holds functionDef to the client's encoding of the same tool:
// equal when both accept it, an error where the schema is not a JSON
// object. A valid object the map cannot hold (a number past float64's
// range) is sent as written.
func checkDef(t *testing.T, d providers.ToolDef) {
	t.Helper()
	want, werr := viaMap(d)
	raw, err := functionDef(d)
	var obj map[string]json.RawMessage
	isObject := len(bytes.Trim(d.Parameters, " \t\r\n")) == 0 || json.Unmarshal(d.Parameters, &obj) == nil && obj != nil
	switch {
	case err != nil && isObject:
		t.Fatalf("%+v: functionDef refused an object: %v", d, err)
	case err == nil && !isObject:
		t.Fatalf("%+v: functionDef sent parameters that are not an object", d)
	case err != nil:
		return
	case werr != nil:
		if !json.Valid(raw) {
			t.Fatalf("%+v: not JSON: %s", d, raw)
		}
		return
	}
	wire, err := json.Marshal(oai.ChatCompletionFunctionTool(param.Override[shared.FunctionDefinitionParam](raw)))
	if err != nil {
		t.Fatalf("%+v: the request does not encode: %v", d, err)
	}
	if !utf8.Valid(wire) {
		t.Fatalf("%+v: the request is not UTF-8: %q", d, wire)
	}
	got, err := encoded(json.RawMessage(wire))
	if err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(got, want) {
		t.Fatalf("%+v:\n got %v\nwant %v", d, got, want)
	}
}

func TestFunctionDefIsWhatTheClientWouldSend(t *testing.T) {
	for _, d := range []providers.ToolDef{
		{Name: "get_weather", Description: "Weather for a city.", Parameters: json.RawMessage(`{"type":"object","properties":{"city":{"type":"string"}},"required":["city"]}`)},
		{Name: "no_params"},
		{Name: "no_desc", Parameters: json.RawMessage(" {\n\"type\": \"object\"}\n")},
		{Name: `quote"and<html>&`, Description: "línea\n\t\"citée\" \u2028 <b>", Parameters: json.RawMessage(`{"enum":["a\u0000b"]}`)},
		{Name: "huge", Parameters: json.RawMessage(`{"maximum":1e400}`)},
		{Name: "latin1", Parameters: json.RawMessage("{\"enum\":[\"a\xffb\"]}")},
		{Name: "nbsp", Parameters: json.RawMessage("\u00a0{}")},
		{Name: "array", Parameters: json.RawMessage(`[1,2]`)},
		{Name: "broken", Parameters: json.RawMessage(`{"a":`)},
		{Name: "null", Parameters: json.RawMessage(`null`)},
	} {
		checkDef(t, d)
	}
}

func FuzzFunctionDef(f *testing.F) {
	f.Add("get_weather", "Weather for a city.", []byte(`{"type":"object","properties":{"city":{"type":"string"}}}`))
	f.Add("x\xff", "", []byte(`{"a":"\ud800"}`))
	f.Add("", "d", []byte(` {} `))
	f.Fuzz(func(t *testing.T, name, desc string, params []byte) {
		checkDef(t, providers.ToolDef{Name: name, Description: desc, Parameters: params})
	})
}
