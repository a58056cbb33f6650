package swe

import "testing"

func TestShellQuote(t *testing.T) {
	for _, c := range []struct{ in, want string }{
		{"tests/x.py::test_y", "tests/x.py::test_y"},
		{"pkg/sub-dir/a_b.py", "pkg/sub-dir/a_b.py"},
		{"k=v,@%+", "k=v,@%+"},
		{"", "''"},
		{"a b", "'a b'"},
		{"it's", `'it'\''s'`},
		{"^(TestA|TestB)$", "'^(TestA|TestB)$'"},
		{"é", "'é'"},
	} {
		if got := shellQuote(c.in); got != c.want {
			t.Errorf("shellQuote(%q) = %s, want %s", c.in, got, c.want)
		}
	}
}
