package repair_test

import (
	"strings"
	"testing"

	"github.com/patchbench/patchbench/internal/confinetest"
	"github.com/patchbench/patchbench/patch"
	"github.com/patchbench/patchbench/patch/repair"
)

// TestConfine: the tolerant path refuses every confinement case read
// through a patch.Root, forward and reverse, naming the path, and writes
// nothing, also when the section would only create or rename a file.
func TestConfine(t *testing.T) {
	for _, c := range confinetest.Cases {
		for _, reverse := range []bool{false, true} {
			name := c.Name
			if reverse {
				name += "/reverse"
			}
			t.Run(name, func(t *testing.T) {
				tr := confinetest.New(t)
				root, err := patch.OpenRoot(tr.Dir)
				if err != nil {
					t.Fatal(err)
				}
				defer root.Close()
				res, err := repair.Repair(tr.Patch(c), repair.Options{FS: root, Reverse: reverse})
				if err == nil {
					err = root.WriteResults(res.Results)
					t.Errorf("Repair accepted the patch (write: %v)", err)
				} else if want := tr.Want(c, false); !strings.Contains(err.Error(), want) {
					t.Errorf("error %q does not contain %q", err, want)
				}
				tr.Unchanged(t)
			})
		}
	}
}
