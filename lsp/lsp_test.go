package lsp

import "testing"

func TestColumn(t *testing.T) {
	// é is one UTF-16 unit and two bytes; 😀 two units and four bytes.
	line := "é😀x"
	for _, tt := range []struct{ off, want int }{{0, 0}, {2, 1}, {6, 3}, {7, 4}} {
		if got := Column(line, tt.off); got != tt.want {
			t.Errorf("Column(%q, %d) = %d, want %d", line, tt.off, got, tt.want)
		}
	}
}

func TestDecodeLocations(t *testing.T) {
	for _, tt := range []struct {
		raw  string
		want int
	}{
		{`null`, 0},
		{`{"uri":"file:///a.go","range":{"start":{"line":1,"character":2},"end":{"line":1,"character":3}}}`, 1},
		{`[{"uri":"file:///a.go","range":{}},{"uri":"file:///b.go","range":{}}]`, 2},
		{`[{"targetUri":"file:///c.py","targetRange":{},"targetSelectionRange":{"start":{"line":4,"character":0},"end":{"line":4,"character":1}}}]`, 1},
	} {
		got, err := decodeLocations([]byte(tt.raw))
		if err != nil || len(got) != tt.want {
			t.Errorf("decodeLocations(%s) = %v, %v; want %d", tt.raw, got, err, tt.want)
		}
	}
	got, _ := decodeLocations([]byte(`[{"targetUri":"file:///c%20d.py","targetSelectionRange":{"start":{"line":4,"character":0},"end":{"line":4,"character":1}}}]`))
	if got[0].Path() != "/c d.py" || got[0].Range.Start.Line != 4 {
		t.Errorf("location link: %+v, path %q", got[0], got[0].Path())
	}
}
