package patch

import "strings"

// Vacancies tracks, while the file patches of one patch are applied in
// order, the paths that file patches still to come rename or delete away.
// As git apply does, a rename or a creation may take such a path (two
// files swapped in one patch), a file may go under a file that leaves (x
// renamed to x/y), and a file may take the place of a directory whose
// files leave (x/y renamed to x; [Root.WriteResults] checks that nothing
// else is in it). The zero value is ready to use.
type Vacancies struct {
	leaving map[string]int  // file patches to come that vacate the path
	taken   map[string]bool // a path taken before the file patch that vacates it
}

// Leaves records a file patch to come that renames or deletes name away.
func (v *Vacancies) Leaves(name string) {
	if v.leaving == nil {
		v.leaving = map[string]int{}
	}
	v.leaving[name]++
}

// Leaving reports whether a file patch to come renames or deletes name
// away.
func (v *Vacancies) Leaving(name string) bool { return v.leaving[name] > 0 }

// Below reports whether a file patch to come renames or deletes away a
// path under the directory dir.
func (v *Vacancies) Below(dir string) bool {
	for p, n := range v.leaving {
		if n > 0 && strings.HasPrefix(p, dir+"/") {
			return true
		}
	}
	return false
}

// UnderLeaving reports whether a directory above name is a file that a
// file patch to come renames or deletes away, or one that removed
// reports removed already: nothing is at name yet.
func (v *Vacancies) UnderLeaving(name string, removed func(string) bool) bool {
	for d := parentDir(name); d != ""; d = parentDir(d) {
		if v.Leaving(d) || removed(d) {
			return true
		}
	}
	return false
}

// Take reports whether name, which exists, may be written by a rename or
// creation because a file patch to come moves it away, and marks it
// taken. written says that an earlier file patch wrote name: then it is
// not the original that leaves, and name may not be taken.
func (v *Vacancies) Take(name string, written bool) bool {
	if !v.Leaving(name) || v.taken[name] || written {
		return false
	}
	if v.taken == nil {
		v.taken = map[string]bool{}
	}
	v.taken[name] = true
	return true
}

// Taken reports whether name was taken by an earlier file patch: its
// original is still the source of the file patch that vacates it.
func (v *Vacancies) Taken(name string) bool { return v.taken[name] }

// Left records that the file patch vacating name was applied. It reports
// whether name was taken, and so holds the new file that took it rather
// than nothing.
func (v *Vacancies) Left(name string) (taken bool) {
	if v.leaving[name] > 0 {
		v.leaving[name]--
	}
	taken = v.taken[name]
	delete(v.taken, name)
	return taken
}

// parentDir is the slash path's directory, "" at the top.
func parentDir(name string) string {
	i := strings.LastIndexByte(name, '/')
	if i <= 0 {
		return ""
	}
	return name[:i]
}
