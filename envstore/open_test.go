package envstore

import (
	"fmt"
	"path/filepath"
	"sync"
	"testing"
)

// TestOpenNewStoreConcurrently: builds started together on one new store
// (a Job's pods, two terminals) all open it; none finds it half made
// ("not an environment store ... and not empty"), which 2 of 3 concurrent
// env build processes did.
func TestOpenNewStoreConcurrently(t *testing.T) {
	root := t.TempDir()
	for round := range 40 {
		dir := filepath.Join(root, fmt.Sprint(round))
		var wg sync.WaitGroup
		errs := make([]error, 8)
		for i := range errs {
			wg.Go(func() { _, errs[i] = Open(dir) })
		}
		wg.Wait()
		for i, err := range errs {
			if err != nil {
				t.Fatalf("round %d, opener %d: %v", round, i, err)
			}
		}
		if _, err := OpenExisting(dir); err != nil {
			t.Fatalf("round %d: %v", round, err)
		}
	}
}
