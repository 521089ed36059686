package providertest

import (
	"bytes"
	"encoding/json"
	"strings"
)

// AmbiguousKeys reports whether valid JSON data repeats a key within an
// object, or holds a key equal to one of keys only when case is ignored.
// encoding/json reads the last of repeated keys and matches keys
// regardless of case, where the SDKs' decoders read the first and match
// exactly: a driver's fuzz target that holds its own decoding of a chunk
// to its SDK's skips such data. Invalid JSON reports false.
func AmbiguousKeys(data []byte, keys []string) bool {
	dec := json.NewDecoder(bytes.NewReader(data))
	var objects []map[string]bool // the keys seen in each open object
	var inArray []bool            // whether each open container is an array
	expectKey := func() bool { return len(inArray) > 0 && !inArray[len(inArray)-1] }
	key := true
	for {
		tok, err := dec.Token()
		if err != nil {
			return false
		}
		switch tok := tok.(type) {
		case json.Delim:
			switch tok {
			case '{':
				objects = append(objects, map[string]bool{})
				inArray = append(inArray, false)
				key = true
				continue
			case '[':
				inArray = append(inArray, true)
			case '}':
				objects = objects[:len(objects)-1]
				inArray = inArray[:len(inArray)-1]
			case ']':
				inArray = inArray[:len(inArray)-1]
			}
		case string:
			if expectKey() && key {
				seen := objects[len(objects)-1]
				if seen[tok] {
					return true
				}
				seen[tok] = true
				for _, k := range keys {
					if tok != k && strings.EqualFold(tok, k) {
						return true
					}
				}
				key = false
				continue
			}
		}
		key = expectKey() // a value ended: a key comes next in an object
	}
}
