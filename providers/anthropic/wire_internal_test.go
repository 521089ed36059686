package anthropic

import (
	"encoding/json"
	"reflect"
	"testing"

	ant "github.com/anthropics/anthropic-sdk-go"

	"github.com/parleyhq/parley/providers/providertest"
)

// wireSeeds are events as Anthropic sends them, and the quirks that send
// an event to anthropic-sdk-go's decoder.
var wireSeeds = []string{
	`{"type":"content_block_delta","index":0,"delta":{"type":"text_delta","text":" the answer"}}`,
	`{"type":"content_block_delta","index":1,"delta":{"type":"input_json_delta","partial_json":"{\"location\": \"San Fra"}}`,
	`{"type":"message_start","message":{"id":"msg_01XFDUDYJgAACzvnptvVoYEL","type":"message","role":"assistant","content":[],"model":"claude-sonnet-4-5-20250929","stop_reason":null,"stop_sequence":null,"usage":{"input_tokens":472,"cache_creation_input_tokens":0,"cache_read_input_tokens":0,"cache_creation":{"ephemeral_5m_input_tokens":0,"ephemeral_1h_input_tokens":0},"output_tokens":2,"service_tier":"standard"}}}`,
	`{"type":"message_delta","delta":{"stop_reason":"end_turn","stop_sequence":null},"usage":{"input_tokens":472,"cache_creation_input_tokens":0,"cache_read_input_tokens":0,"output_tokens":89,"server_tool_use":{"web_search_requests":0}}}`,
	`{"type":"message_delta","delta":{"stop_reason":"tool_use","stop_sequence":null},"usage":{"output_tokens":15}}`,
	`{"type":"content_block_start","index":0,"content_block":{"type":"text","text":""}}`,
	`{"type":"content_block_start","index":0,"content_block":{"type":"thinking","thinking":"","signature":""}}`,
	`{"type":"content_block_delta","index":0,"delta":{"type":"thinking_delta","thinking":"Let me think"}}`,
	`{"type":"content_block_delta","index":0,"delta":{"type":"signature_delta","signature":"EqQBCgIYAhIM1gbcDa9GJwZA2b3hGgxBdjrkzLoky3dl1pkiMOYds"}}`,
	`{"type":"content_block_start","index":1,"content_block":{"type":"tool_use","id":"toolu_01T1x1fJ34qAmk2tNTrN7Up6","name":"get_weather","input":{}}}`,
	`{"type":"content_block_start","index":1,"content_block":{"type":"tool_use","id":"toolu_2","name":"read","input":{"path":"a.go"}}}`,
	`{"type":"content_block_start","index":2,"content_block":{"type":"server_tool_use","id":"srvtoolu_1","name":"web_search","input":null}}`,
	`{"type":"content_block_start","index":0,"content_block":{"type":"redacted_thinking","data":"EmwKAhgBEgy3va3pzix"}}`,
	`{"type":"content_block_delta","index":0,"delta":{"type":"citations_delta","citation":{"type":"char_location","cited_text":"x","document_index":0,"start_char_index":0,"end_char_index":1}}}`,
	`{"type":"content_block_stop","index":0}`,
	`{"type":"message_stop"}`,
	`{"type":"ping"}`,
	`{"type":"message_delta","delta":{"stop_reason":"max_tokens"},"usage":{"output_tokens":3,"input_tokens":null,"cache_read_input_tokens":7}}`,
	`{"type":"message_delta","delta":{"stop_reason":null},"usage":null}`,
	`{"type":"message_start","message":{"model":"m","usage":null}}`,
	`{"type":"content_block_delta","index":"0","delta":{"type":"text_delta","text":"string index"}}`,
	`{"type":"message_delta","delta":{"stop_reason":"end_turn"},"usage":{"output_tokens":12.0,"input_tokens":3}}`,
	`{"type":"message_start","message":{"model":7,"usage":{"input_tokens":1}}}`,
	`{"type":"content_block_start","index":0,"content_block":{"type":"tool_use","input":{ }}}`,
	`{"type":"content_block_delta","index":0,"delta":{"type":"text_delta","text":"a\u0000b\ud800"}}`,
	`{"type":"message_start","message":{"model":"` + "\xff" + `"}}`,
	`{"type":"content_block_delta","delta":{"text":"a"},"delta":{"thinking":"b"}}`,
	`{"type":"message_delta","usage":{"output_tokens":1},"usage":{"input_tokens":2}}`,
	`{"Type":"content_block_delta","Delta":{"Text":"folded"}}`,
	`{"type":"message_start","message":{"model":"m","content":5,"usage":{"input_tokens":4,"server_tool_use":[],"cache_creation":5}}}`,
	`{"type":"message_delta","delta":{"stop_reason":"bogus","citation":5},"usage":{"output_tokens":1,"server_tool_use":"x"}}`,
	`{"type":"content_block_start","content_block":{"type":"tool_use","input":5,"citations":7}}`,
	`{"type":"message_delta","usage":[]}`,
	`{"index":1e400}`, `{"index":9223372036854775808}`, `{"index":-1}`,
	`[]`, `null`, `"x"`, `{`, ``, `{}`,
}

// FuzzWireEvent holds the plain decoding of an event to what
// anthropic-sdk-go's decoder reads of it: the same fields, the same error.
func FuzzWireEvent(f *testing.F) {
	for _, s := range wireSeeds {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		var got wireEvent
		gotErr := json.Unmarshal(data, &got)
		var sdk ant.MessageStreamEventUnion
		sdkErr := json.Unmarshal(data, &sdk)
		if (gotErr == nil) != (sdkErr == nil) {
			t.Fatalf("%q: error %v, anthropic-sdk-go's %v", data, gotErr, sdkErr)
		}
		if sdkErr != nil {
			return
		}
		if providertest.AmbiguousKeys(data, wireKeys) {
			return
		}
		if want := fromSDK(&sdk); !reflect.DeepEqual(got, want) {
			t.Fatalf("%q:\n got %+v\nwant %+v", data, got, want)
		}
	})
}

// wireKeys are the keys a wireEvent reads.
var wireKeys = []string{"type", "index", "message", "model", "usage", "input_tokens", "output_tokens",
	"cache_read_input_tokens", "cache_creation_input_tokens", "content_block", "text", "thinking", "id",
	"name", "input", "delta", "partial_json", "stop_reason"}

// The fallback is taken: an event whose index is a string, or whose usage
// counts are floats, reads as anthropic-sdk-go read it.
func TestAnEventThePlainTypeCannotHoldIsReadByTheSDK(t *testing.T) {
	for _, in := range []string{
		`{"type":"content_block_delta","index":"1","delta":{"type":"text_delta","text":"x"}}`,
		`{"type":"message_delta","delta":{"stop_reason":"end_turn"},"usage":{"output_tokens":12.0,"input_tokens":3}}`,
	} {
		type plain wireEvent
		if json.Unmarshal([]byte(in), new(plain)) == nil {
			t.Fatalf("%s decodes as a plain struct: this test no longer reaches the fallback", in)
		}
		var sdk ant.MessageStreamEventUnion
		if err := json.Unmarshal([]byte(in), &sdk); err != nil {
			t.Fatal(err)
		}
		var got wireEvent
		if err := json.Unmarshal([]byte(in), &got); err != nil {
			t.Fatal(err)
		}
		if want := fromSDK(&sdk); !reflect.DeepEqual(got, want) {
			t.Errorf("%s:\n got %+v\nwant %+v", in, got, want)
		}
	}
	var got wireEvent
	if err := json.Unmarshal([]byte(`{"type":"content_block_delta","index":"1","delta":{"type":"text_delta","text":"x"}}`), &got); err != nil {
		t.Fatal(err)
	}
	if got.Type != "content_block_delta" || got.Delta.Text != "x" {
		t.Errorf("got %+v", got)
	}
	if err := json.Unmarshal([]byte(`{"type":"message_delta","usage":{"output_tokens":12.0,"input_tokens":3}}`), &got); err != nil {
		t.Fatal(err)
	}
	if u := got.Usage; u == nil || u.OutputTokens != 12 || u.InputTokens == nil || *u.InputTokens != 3 || u.CacheReadInputTokens != nil {
		t.Errorf("got usage %+v", u)
	}
}

// The fuzz target compares the seeds servers send: none of them has a
// key providertest.AmbiguousKeys reports.
func TestTheFuzzTargetComparesRealSeeds(t *testing.T) {
	for _, in := range wireSeeds[:2] {
		if providertest.AmbiguousKeys([]byte(in), wireKeys) {
			t.Errorf("AmbiguousKeys(%s) = true: the fuzz target skips it", in)
		}
	}
}

// BenchmarkDecodeEvent decodes typical events as a wireEvent and as
// anthropic-sdk-go's union type.
func BenchmarkDecodeEvent(b *testing.B) {
	for name, data := range map[string]string{
		"text_delta":       wireSeeds[0],
		"input_json_delta": wireSeeds[1],
		"message_start":    wireSeeds[2],
		"message_delta":    wireSeeds[3],
	} {
		data := []byte(data)
		b.Run(name+"/wire", func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				var e wireEvent
				if err := json.Unmarshal(data, &e); err != nil {
					b.Fatal(err)
				}
			}
		})
		b.Run(name+"/sdk", func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				var e ant.MessageStreamEventUnion
				if err := json.Unmarshal(data, &e); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}
