package patch

import "testing"

func TestMailSignature(t *testing.T) {
	for _, c := range []struct {
		lines []string
		want  bool
	}{
		{[]string{"-- ", "2.39.2"}, true},
		{[]string{"-- \r", "2.39.2\r"}, true},
		{[]string{"-- ", "2.43.0.windows.1"}, true},
		{[]string{"-- ", "2.39.3 (Apple Git-146)"}, true},
		{[]string{"-- ", "2.45.GIT"}, true},
		{[]string{"-- "}, false},
		{[]string{"--", "2.39.2"}, false},
		{[]string{"-- x", "2.39.2"}, false},
		{[]string{"-- ", " 2.39.2"}, false},
		{[]string{"-- ", "-2.39.2"}, false},
		{[]string{"-- ", "2"}, false},
		{[]string{"-- ", "2."}, false},
		{[]string{"-- ", "v2.39.2"}, false},
		{[]string{"-- ", "2.39.2 and more"}, false},
		{[]string{"-- ", "Jane Doe"}, false},
	} {
		if got := MailSignature(c.lines, 0); got != c.want {
			t.Errorf("MailSignature(%q) = %v, want %v", c.lines, got, c.want)
		}
	}
}
