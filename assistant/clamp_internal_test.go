package assistant

import (
	"encoding/json"
	"fmt"
	"math"
	"strings"
	"testing"
)

func TestClampResultTrimsTheLargestArrayHeadFirstAndSaysSo(t *testing.T) {
	items := make([]map[string]any, 1000)
	for i := range items {
		items[i] = map[string]any{"id": i, "name": fmt.Sprintf("server-%04d", i)}
	}
	small := []int{1, 2, 3}
	raw, _ := json.Marshal(map[string]any{"ok": true, "summary": "1000 servers",
		"data": map[string]any{"servers": items, "regions": small}})
	out := clampResult(raw, 4096)
	if len(out) > 4096+512 { // the note itself may add a little
		t.Fatalf("clamped to %d bytes, want about 4096", len(out))
	}
	var got struct {
		OK        bool   `json:"ok"`
		Truncated string `json:"_truncated"`
		Data      struct {
			Servers []struct{ ID int } `json:"servers"`
			Regions []int              `json:"regions"`
		} `json:"data"`
	}
	if err := json.Unmarshal(out, &got); err != nil {
		t.Fatalf("clamped result is not JSON: %v", err)
	}
	n := len(got.Data.Servers)
	if n == 0 || n >= 1000 || got.Data.Servers[0].ID != 0 || got.Data.Servers[n-1].ID != n-1 {
		t.Errorf("kept %d servers, want a head of the list", n)
	}
	if len(got.Data.Regions) != 3 || !got.OK {
		t.Errorf("the small array or the envelope changed: %+v", got)
	}
	if !strings.Contains(got.Truncated, fmt.Sprintf("data.servers: kept the first %d of 1000 items", n)) {
		t.Errorf("note %q does not say what was dropped", got.Truncated)
	}
}

func TestClampResultLeavesSmallResultsAloneAndCutsArraylessOnes(t *testing.T) {
	small := []byte(`{"ok":true,"data":[1,2,3]}`)
	if got := clampResult(small, 1000); string(got) != string(small) {
		t.Errorf("a result under budget changed: %s", got)
	}
	big := []byte(`{"ok":true,"data":"` + strings.Repeat("x", 5000) + `"}`)
	if got := clampResult(big, 1000); len(got) > 1000 || !strings.Contains(string(got), `"beginning":"{\"ok\":true,\"data\":\"xxx`) {
		t.Errorf("a result with no array to cut: %d bytes %s", len(got), got)
	}
	top, _ := json.Marshal(make([]int, 5000))
	out := clampResult(top, 1000)
	var wrapped struct {
		Result    []int  `json:"result"`
		Truncated string `json:"_truncated"`
	}
	if err := json.Unmarshal(out, &wrapped); err != nil || len(wrapped.Result) == 0 || wrapped.Truncated == "" || len(out) > 1200 {
		t.Errorf("a top-level array: %d bytes, %v", len(out), err)
	}
}

// A result with nothing to cut (one deep, long string) still fits: the
// budget is a hard limit, and the work stays linear in the size.
func TestClampResultWithNothingToCutKeepsTheBeginning(t *testing.T) {
	deep := strings.Repeat("[", 2000) + `"` + strings.Repeat("a", 100_000) + `"` + strings.Repeat("]", 2000)
	raw, _ := json.Marshal(map[string]any{"ok": true, "summary": "big", "data": json.RawMessage(deep)})
	out := clampResult(raw, 4096)
	var env struct {
		OK        bool   `json:"ok"`
		Summary   string `json:"summary"`
		Truncated string `json:"_truncated"`
		Beginning string `json:"beginning"`
	}
	if err := json.Unmarshal(out, &env); err != nil || len(out) > 4096 {
		t.Fatalf("%d bytes, %v", len(out), err)
	}
	if !env.OK || env.Summary != "big" || env.Truncated == "" || !strings.HasPrefix(env.Beginning, `{"data":[[[`) {
		t.Errorf("envelope %+v", env)
	}
}

func FuzzClampResult(f *testing.F) {
	f.Add([]byte(`{"a":[1,2,3,4,5,6,7,8,9,10],"b":[[1,2],[3,4]]}`), 20)
	f.Add([]byte(`[{"x":[1,2,3]},{"y":"zzzzzzzz"}]`), 10)
	f.Add([]byte(`not json`), 3)
	f.Fuzz(func(t *testing.T, raw []byte, budget int) {
		out := clampResult(raw, budget)
		if json.Valid(raw) && !json.Valid(out) {
			t.Fatalf("valid input clamped to invalid JSON: %s", out)
		}
		if len(out) > len(raw)+512 {
			t.Fatalf("clamping grew the result from %d to %d bytes", len(raw), len(out))
		}
		if budget >= 600 && len(out) > budget {
			t.Fatalf("clamped to %d bytes, over the budget of %d", len(out), budget)
		}
	})
}

// Many arrays: every one is cut as needed, the note stays short, and the
// result fits.
func TestClampResultWithManyArraysFitsAndNamesTheLargest(t *testing.T) {
	data := map[string]any{}
	for k := range 800 {
		data[fmt.Sprintf("k%05d", k)] = make([]int, 20)
	}
	data["big"] = make([]int, 5000)
	raw, _ := json.Marshal(map[string]any{"ok": true, "summary": "many", "data": data})
	out := clampResult(raw, 16384)
	var env struct {
		OK        bool           `json:"ok"`
		Data      map[string]any `json:"data"`
		Truncated string         `json:"_truncated"`
	}
	if err := json.Unmarshal(out, &env); err != nil || len(out) > 16384 {
		t.Fatalf("%d bytes, %v", len(out), err)
	}
	if !env.OK || len(env.Data) != 801 || !strings.Contains(env.Truncated, "data.big: kept the first") ||
		!strings.Contains(env.Truncated, "more lists were cut") || len(env.Truncated) > noteReserve {
		t.Errorf("note %q (%d bytes), %d keys", env.Truncated, len(env.Truncated), len(env.Data))
	}
}

// HTML characters are not escaped: the model reads the same text whether
// or not the result was cut.
func TestClampResultKeepsHTMLCharacters(t *testing.T) {
	items := make([]string, 400)
	for i := range items {
		items[i] = strings.Repeat("<b>", 20)
	}
	raw, _ := json.Marshal(map[string]any{"ok": true, "data": items})
	out := clampResult(raw, 8000)
	if strings.Contains(string(out), `\u003c`) || !strings.Contains(string(out), "<b>") {
		t.Errorf("escaped: %.200s", out)
	}
}

func BenchmarkClampResultManyArrays(b *testing.B) {
	data := map[string]any{}
	for k := range 2000 {
		data[fmt.Sprintf("k%05d", k)] = make([]int, 20)
	}
	raw, _ := json.Marshal(map[string]any{"ok": true, "data": data})
	b.SetBytes(int64(len(raw)))
	for b.Loop() {
		clampResult(raw, 16384)
	}
}

func FuzzScalarSize(f *testing.F) {
	f.Add("plain", 1.5, true)
	f.Add("q\"uote\\ <&> \u2028 \x01 é", math.Copysign(0, -1), false)
	f.Fuzz(func(t *testing.T, s string, n float64, b bool) {
		for _, v := range []any{s, json.Number(fmt.Sprint(n)), b, nil} {
			enc, err := encode(v)
			if err != nil {
				continue
			}
			if got := scalarSize(v); got != len(enc) {
				t.Fatalf("scalarSize(%#v) = %d, encoded %d bytes: %s", v, got, len(enc), enc)
			}
		}
	})
}
