package openai_test

import (
	"context"
	"fmt"
	"net/http"
	"net/http/httptest"
	"testing"

	"github.com/parleyhq/parley/providers"
	"github.com/parleyhq/parley/providers/openai"
)

func TestNothingAfterTheFinishReasonIsEmitted(t *testing.T) {
	chunk := func(delta, finish string) string {
		f := "null"
		if finish != "" {
			f = `"` + finish + `"`
		}
		return fmt.Sprintf(`data: {"id":"x","object":"chat.completion.chunk","created":1,"model":"m","choices":[{"index":0,"delta":%s,"finish_reason":%s}]}`+"\n\n", delta, f)
	}
	body := chunk(`{"tool_calls":[{"index":0,"id":"call_1","type":"function","function":{"name":"f","arguments":"{}"}}]}`, "") +
		chunk(`{}`, "tool_calls") +
		chunk(`{"content":"late"}`, "") +
		chunk(`{"tool_calls":[{"index":1,"id":"call_2","type":"function","function":{"name":"g","arguments":"{}"}}]}`, "") +
		"data: [DONE]\n\n"
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/event-stream")
		fmt.Fprint(w, body)
	}))
	defer srv.Close()
	p := openai.New(openai.Config{BaseURL: srv.URL, Model: "m"})
	var got []string
	for ev, err := range p.Stream(context.Background(), &providers.Request{Messages: []providers.Message{{Role: providers.User, Content: "x"}}}) {
		if err != nil {
			t.Fatalf("stream error: %v", err)
		}
		switch ev.Kind {
		case providers.TextDelta:
			got = append(got, "text:"+ev.Text)
		case providers.ToolCallEvent:
			got = append(got, "call:"+ev.ToolCall.ID)
		case providers.FinishEvent:
			got = append(got, "finish:"+string(ev.Finish))
		}
	}
	want := []string{"call:call_1", "finish:tool_calls"}
	if fmt.Sprint(got) != fmt.Sprint(want) {
		t.Errorf("events %v, want %v: chunks after the finish reason are ignored", got, want)
	}
}
