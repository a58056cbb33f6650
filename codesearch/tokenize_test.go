package codesearch

import (
	"slices"
	"testing"

	"github.com/google/go-cmp/cmp"
)

// TestTokenize: the terms of code-like text, and the index build's counts
// of them (vocab.add, lower-casing into a buffer) the same terms.
func TestTokenize(t *testing.T) {
	for _, tc := range []struct {
		text string
		want []string
	}{
		{"getHTTPResponse_code", []string{"gethttpresponse_code", "get", "http", "response", "code"}},
		{"parseHTTPRequest2", []string{"parsehttprequest2", "parse", "http", "request2"}},
		{"foo__bar", []string{"foo__bar", "foo", "bar"}},
		{"_x", []string(nil)},
		{"a_", []string(nil)},
		{"__init__", []string{"init"}},
		{"HTTPServer_v2", []string{"httpserver_v2", "http", "server", "v2"}},
		{"ABCdef", []string{"abcdef", "ab", "cdef"}},
		{"XMLHttpRequest", []string{"xmlhttprequest", "xml", "http", "request"}},
		{"self.assertEqual(x, None)", []string{"assertequal", "assert", "equal"}},
		{"def map_overlap(x, depth): return x", []string{"map_overlap", "map", "overlap", "depth"}},
		{"x1 y22 z_3 404 v2", []string{"x1", "y22", "z_3", "v2"}},
		{"SOME_CONSTANT_VALUE = 10", []string{"some_constant_value", "some", "constant", "value"}},
		{"camelCaseWord snake_case_word", []string{"camelcaseword", "camel", "case", "word", "snake_case_word", "snake", "case", "word"}},
		{"path/to/file_name.py", []string{"path", "file_name", "file", "name", "py"}},
		{"The and for IF Else", []string(nil)},
		{"aB", []string{"ab"}},
		{"Ab", []string{"ab"}},
		{"AB", []string{"ab"}},
		{"aBC", []string{"abc", "bc"}},
		{"ABc", []string{"abc", "bc"}},
		{"a1B2c3", []string{"a1b2c3"}},
		{"foo_foo", []string{"foo_foo", "foo", "foo"}},
		{"__", []string(nil)},
		{"_", []string(nil)},
		{"tf.keras.layers.Dense", []string{"tf", "keras", "layers", "dense"}},
		{"iOS macOS", []string{"ios", "os", "macos", "mac", "os"}},
		{"x=é+ünïcode_wörd", []string{"code_w", "code", "rd"}},
	} {
		got := Tokenize(tc.text)
		if diff := cmp.Diff(tc.want, got); diff != "" {
			t.Errorf("Tokenize(%q) (-want +got):\n%s", tc.text, diff)
		}
		v := newVocab()
		v.add(tc.text)
		var counted []string
		for _, c := range v.take() {
			for range c.tf {
				counted = append(counted, v.terms[c.term])
			}
		}
		want := slices.Clone(tc.want)
		slices.Sort(want)
		slices.Sort(counted)
		if !slices.Equal(want, counted) {
			t.Errorf("vocab.add(%q) counted %q, want %q", tc.text, counted, want)
		}
	}
}
