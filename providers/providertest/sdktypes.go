package providertest

import (
	"reflect"
	"strings"
	"testing"
)

// HoldsNoSDKStruct fails t if a value of typ holds, in a field, slice,
// array, map or pointer, a struct type of the module at modulePath (a
// provider's SDK). An interface ends the walk.
//
// Every package that names a provider's type loads the whole type graph of
// what it holds, and compiles the methods of every generic type in it
// again: a provider that held an openai-go or anthropic-sdk-go Client made
// each importer compile its pagination types' methods, 2,000 to 2,600
// functions and seconds of compile time, on every build of the importer.
// A provider holds the client's options instead, and builds the client
// where it sends.
func HoldsNoSDKStruct(t testing.TB, typ reflect.Type, modulePath string) {
	t.Helper()
	seen := map[reflect.Type]bool{}
	var walk func(typ reflect.Type, path string)
	walk = func(typ reflect.Type, path string) {
		if seen[typ] {
			return
		}
		seen[typ] = true
		switch typ.Kind() {
		case reflect.Struct:
			if p := typ.PkgPath(); p == modulePath || strings.HasPrefix(p, modulePath+"/") {
				t.Errorf("%s is %s, a struct of %s: hold what it needs instead", path, typ, modulePath)
				return
			}
			for i := range typ.NumField() {
				f := typ.Field(i)
				walk(f.Type, path+"."+f.Name)
			}
		case reflect.Pointer, reflect.Slice, reflect.Array:
			walk(typ.Elem(), path)
		case reflect.Map:
			walk(typ.Key(), path)
			walk(typ.Elem(), path)
		}
	}
	walk(typ, typ.String())
}
