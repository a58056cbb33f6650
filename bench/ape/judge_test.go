package ape

import "testing"

func TestMajority(t *testing.T) {
	for _, tt := range []struct {
		votes []string
		want  string
		pass  bool
	}{
		{[]string{"Good", "Good", "Poor", "Excellent"}, "Good", true},
		{[]string{"Good", "Good", "Poor", "Poor"}, "Poor", false}, // tie: the worse grade
		{[]string{"Excellent", "Excellent", "Good", "Good"}, "Good", true},
		{[]string{"Excellent", "Acceptable", "Good", "Poor"}, "Poor", false},
		{[]string{"", "", "Excellent"}, "Excellent", true},
		{nil, "", false},
	} {
		got := Majority(tt.votes)
		if got != tt.want || Passes(got) != tt.pass {
			t.Errorf("Majority(%q) = %q (pass %v), want %q (pass %v)", tt.votes, got, Passes(got), tt.want, tt.pass)
		}
	}
}

func TestParseGrade(t *testing.T) {
	for _, tt := range []struct {
		in, want string
		ok       bool
	}{
		{"Reason: fine.\nCategory: none\nGrade: Good\n", "Good", true},
		{"**Grade:** Excellent", "Excellent", true},
		{"Grade: good", "", false},
		{"Grade: Good\nGrade: Poor", "", false},
		{"looks Good to me", "", false},
		{"Grade: Great", "", false},
	} {
		got, err := ParseGrade(tt.in)
		if got != tt.want || (err == nil) != tt.ok {
			t.Errorf("ParseGrade(%q) = %q, %v; want %q ok=%v", tt.in, got, err, tt.want, tt.ok)
		}
	}
}
