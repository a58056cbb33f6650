package patch

import "io/fs"

// MapFS is an in-memory FileSystem: path to content.
type MapFS map[string]string

// ReadFile returns the content of name or an fs.ErrNotExist error.
func (m MapFS) ReadFile(name string) ([]byte, error) {
	c, ok := m[name]
	if !ok {
		return nil, &fs.PathError{Op: "open", Path: name, Err: fs.ErrNotExist}
	}
	return []byte(c), nil
}

// Final folds results into the final state of each touched path: its new
// content, or nil where the file is removed. A path that one result renames
// or deletes away and another writes (two files swapped in one patch) ends
// with the content written.
func Final(results []FileResult) (paths []string, content map[string][]byte, mode map[string]uint32) {
	content = map[string][]byte{}
	mode = map[string]uint32{}
	written := map[string]bool{}
	for _, r := range results {
		if r.Path != "" && r.Op != Delete {
			written[r.Path] = true
		}
	}
	touch := func(p string) {
		if _, ok := content[p]; !ok {
			paths = append(paths, p)
		}
	}
	for _, r := range results {
		if r.OldPath != "" && (r.Op == Rename || r.Op == Delete) && !written[r.OldPath] {
			touch(r.OldPath)
			content[r.OldPath] = nil
		}
		if r.Path != "" && r.Op != Delete {
			touch(r.Path)
			content[r.Path] = r.Content
			if r.Mode != 0 {
				mode[r.Path] = r.Mode
			}
		}
	}
	return paths, content, mode
}
