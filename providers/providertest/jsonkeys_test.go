package providertest_test

import (
	"testing"

	"github.com/parleyhq/parley/providers/providertest"
)

func TestAmbiguousKeysAreRepeatedOrFoldedOnes(t *testing.T) {
	keys := []string{"choices", "delta", "content", "index", "model"}
	for in, want := range map[string]bool{
		`{"model":"m","choices":[{"index":0,"delta":{"content":"a"}}]}`: false,
		`{"choices":[{"delta":{"content":"a"},"delta":{}}]}`:            true,
		`{"choices":[],"choices":[]}`:                                   true,
		`{"a":{"x":1},"b":{"x":1}}`:                                     false,
		`{"choices":[{"Delta":{"content":"a"}}]}`:                       true,
		`{"choices":[{"delta":{"content":"{\"content\":1}"}}]}`:         false,
		`[{"content":"a"},{"content":"b"}]`:                             false,
		`{"choices":[{"index":0},{"index":1}],"x":["model","model"]}`:   false,
		`{"choices":[`: false,
	} {
		if got := providertest.AmbiguousKeys([]byte(in), keys); got != want {
			t.Errorf("AmbiguousKeys(%s) = %v, want %v", in, got, want)
		}
	}
}
