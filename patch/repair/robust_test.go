package repair_test

import (
	"math/rand"
	"strings"
	"testing"

	"github.com/patchbench/patchbench/internal/testdata"
	"github.com/patchbench/patchbench/patch"
	"github.com/patchbench/patchbench/patch/repair"
)

// degrade applies model-like damage to a patch text, chosen by r.
func degrade(r *rand.Rand, text string, f patch.Format) (string, []string) {
	var did []string
	lines := strings.Split(text, "\n")
	pick := func(name string, p float64) bool {
		if r.Float64() < p {
			did = append(did, name)
			return true
		}
		return false
	}
	noSpace := pick("no-space", 0.4)
	trail := pick("trailing-ws", 0.3)
	bare := f == patch.UDiff && pick("bare-headers", 0.3)
	tabs := pick("tabs", 0.2)
	for i, l := range lines {
		switch {
		case bare && strings.HasPrefix(l, "@@"):
			lines[i] = "@@ @@"
		case noSpace && strings.HasPrefix(l, " ") && (f == patch.UDiff || f == patch.UDiffH || f == patch.V4A):
			lines[i] = l[1:]
		}
		if trail && !strings.HasPrefix(lines[i], "+") {
			lines[i] = strings.TrimRight(lines[i], " \t")
		}
		if tabs && !strings.HasPrefix(lines[i], "+") {
			lines[i] = strings.ReplaceAll(lines[i], "\t", "    ")
		}
	}
	out := strings.Join(lines, "\n")
	if pick("fenced", 0.5) {
		out = "Here is the change you asked for:\n\n```diff\n" + out + "```\n\nIt keeps the behaviour otherwise."
	}
	return out, did
}

// TestRobustness damages our own diff of every dev commit in every format
// the way models do, several ways at once, and offers it to its own file and
// to another file. Nothing may be misapplied. The apply-once rules refuse
// some of them: a change of whitespace alone (gofmt's realignment) offered
// with its whitespace damaged reads the same both ways, and its reverse
// fits where it goes (4 of the shipped sample's 160; the dev corpus stays
// above 99%).
func TestRobustness(t *testing.T) {
	tried, recovered := robustness(t, degrade, 7)
	if recovered*100 < tried*97 {
		t.Errorf("recovered %d of %d, below 97%%", recovered, tried)
	}
}

// robustness damages our diff of every dev commit in four formats with
// damage, repairs it against its own file (misapplying fails the test) and
// offers it to another file (applying fails the test). It returns how many
// patches it tried and how many came out exactly right.
func robustness(t *testing.T, damage func(*rand.Rand, string, patch.Format) (string, []string), seed int64) (tried, recovered int) {
	t.Helper()
	rows := testdata.Load[testdata.Triple](t, "diffxyz-dev.jsonl.gz")
	r := rand.New(rand.NewSource(seed))
	wrong, crossApplied := 0, 0
	for i, row := range rows {
		for _, f := range []patch.Format{patch.UDiff, patch.UDiffH, patch.SearchReplace, patch.V4A} {
			opts := patch.DefaultMakeOptions()
			opts.Unique = !f.HasPositions()
			fp := patch.Make(row.Path, row.Path, row.OldCode, row.NewCode, opts)
			text, err := patch.Print(&patch.Patch{Files: []*patch.FilePatch{fp}}, f)
			if err != nil {
				continue
			}
			bad, did := damage(r, text, f)
			tried++
			res, err := repair.Repair(bad, repair.Options{FS: patch.MapFS{row.Path: row.OldCode}})
			switch {
			case err != nil:
				t.Logf("%s %s %v: %v", row.ID, f, did, err)
			case len(res.Results) == 0:
				// Reported as already applied to the file it changes.
				wrong++
				t.Errorf("%s %s %v: %s, nothing changed", row.ID, f, did, res.Status)
			case string(res.Results[0].Content) == row.NewCode:
				recovered++
			default:
				if strings.Join(strings.Fields(string(res.Results[0].Content)), " ") != strings.Join(strings.Fields(row.NewCode), " ") {
					wrong++
					t.Errorf("%s %s %v: misapplied", row.ID, f, did)
				} else {
					recovered++ // whitespace of added lines only
				}
			}
			other := rows[(i+131)%len(rows)]
			if other.Path != row.Path {
				if _, err := repair.Repair(bad, repair.Options{Target: "x", FS: patch.MapFS{"x": other.OldCode}}); err == nil {
					crossApplied++
					t.Errorf("%s %s %v: applied to %s", row.ID, f, did, other.ID)
				}
			}
		}
	}
	t.Logf("%d damaged patches: %d recovered, %d misapplied, %d applied to another file", tried, recovered, wrong, crossApplied)
	return tried, recovered
}

// TestRobustnessShapes offers the two misplacements of issue 8 in every
// format: a hunk written 4 spaces shallower than its file (its added elif
// must move with it), and a module-level def whose context the model
// remembered as the end of a class (refused, never put inside the class).
func TestRobustnessShapes(t *testing.T) {
	shallow := "if r is not None:\n    ground = r.groups()[0]\n    if ground in ['Z', 'ZZ']:\n        return ZZ\n    else:\n        return QQ\n"
	deep := indentBy(shallow, "            ")
	file := "class Domain:\n    def preprocess(cls, domain):\n        if isinstance(domain, str):\n" + deep + "        raise OptionError(domain)\n"
	withElif := strings.Replace(shallow, "    else:\n", "    elif ground in ['R', 'RR']:\n        return RR\n    else:\n", 1)
	want := strings.Replace(file, deep, indentBy(withElif, "            "), 1)

	class := "class Printer(Visitor):\n    def visit_constant(self, node):\n        return repr(node.value)\n\n    def variable(self, node):\n        return node.name\n"
	// The model's view: the method ends the class, module code follows.
	believed := "class Printer(Visitor):\n    def visit_constant(self, node):\n        return repr(node.value)\n\n\nPRINTER = Printer()\n"
	added := strings.Replace(believed, "\n\n\nPRINTER", "\n\n\ndef print_tree(node):\n    return Printer().visit(node)\n\n\nPRINTER", 1)

	tried := 0
	for _, f := range []patch.Format{patch.UDiff, patch.UDiffH, patch.UDiffL, patch.SearchReplace, patch.V4A} {
		opts := patch.DefaultMakeOptions()
		opts.Unique = !f.HasPositions()
		// Shape 1: made between the model's shallower view of the block.
		text, err := patch.Print(&patch.Patch{Files: []*patch.FilePatch{patch.Make("d.py", "d.py", shallow, withElif, opts)}}, f)
		if err != nil {
			t.Fatalf("%s: %v", f, err)
		}
		tried++
		res, err := repair.Repair(text, repair.Options{Format: f, FS: patch.MapFS{"d.py": file}})
		switch {
		case err != nil:
			t.Errorf("shallow %s: %v", f, err)
		case string(res.Results[0].Content) != want:
			t.Errorf("shallow %s: misapplied:\n%s", f, res.Results[0].Content)
		}
		// Shape 2: made from the model's mistaken view of the file.
		text, err = patch.Print(&patch.Patch{Files: []*patch.FilePatch{patch.Make("p.py", "p.py", believed, added, opts)}}, f)
		if err != nil {
			t.Fatalf("%s: %v", f, err)
		}
		tried++
		if res, err := repair.Repair(text, repair.Options{Format: f, FS: patch.MapFS{"p.py": class}}); err == nil {
			t.Errorf("module def %s: applied inside the class:\n%s", f, res.Results[0].Content)
		}
	}
	t.Logf("%d shaped patches, 0 misapplied unless reported above", tried)
}

func indentBy(s, ws string) string {
	lines := strings.SplitAfter(s, "\n")
	for i, l := range lines {
		if strings.TrimSpace(l) != "" {
			lines[i] = ws + l
		}
	}
	return strings.Join(lines, "")
}
