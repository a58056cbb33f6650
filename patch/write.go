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
// content, or nil where the file is removed.
func Final(results []FileResult) (paths []string, content map[string][]byte, mode map[string]uint32) {
	content = map[string][]byte{}
	mode = map[string]uint32{}
	touch := func(p string) {
		if _, ok := content[p]; !ok {
			paths = append(paths, p)
		}
	}
	for _, r := range results {
		if r.OldPath != "" && (r.Op == Rename || r.Op == Delete) {
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
