package patch

import (
	"fmt"
)

// DiffText prints the edit that turns old into neu in format f, "" when
// they are the same: a binary file (see IsBinary) as "Binary files ...
// differ", or with binary set as a GIT binary patch; formats without line
// numbers get context enough for each hunk to fit one place only. An empty
// path is a creation or a deletion; two different paths are two files
// compared, not a rename: the result patches one file in place.
func DiffText(f Format, oldPath, newPath, old, neu string, opts MakeOptions, binary bool) (string, error) {
	var fp *FilePatch
	if IsBinary(old) || IsBinary(neu) {
		fp = MakeBinary(oldPath, newPath, old, neu, binary)
	} else {
		opts.Unique = !f.HasPositions()
		fp = Make(oldPath, newPath, old, neu, opts)
	}
	if fp.Op == Rename {
		// A traditional diff naming both (no git header, which would make
		// it a rename), which patches one file in place. Formats with one
		// name per file get the name it prefers when both files exist.
		fp.Op = Modify
		if f == SearchReplace || f == V4A {
			name := TraditionalTarget(fp.OldPath, fp.NewPath, func(string) bool { return true })
			fp.OldPath, fp.NewPath = name, name
		}
	}
	if len(fp.Hunks) == 0 && !fp.Binary {
		return "", nil
	}
	return Print(&Patch{Files: []*FilePatch{fp}}, f)
}

// Convert returns p ready to print in format to. Between formats with line
// numbers that is p itself. Otherwise p is applied (in memory) to the
// files of fsys and each file's change is made anew from the old and new
// contents, with context lines of context, and enough for every hunk to fit
// one place only when to has no line numbers.
func Convert(p *Patch, fsys FileSystem, from, to Format, context int) (*Patch, error) {
	if from.HasPositions() && to.HasPositions() {
		return p, nil
	}
	results, err := Apply(p, fsys, ApplyOptions{})
	if err != nil {
		return nil, fmt.Errorf("convert: the patch must apply to the files to be converted: %w", err)
	}
	opts := DefaultMakeOptions()
	opts.Context, opts.Unique = context, !to.HasPositions()
	out := &Patch{}
	for _, r := range results {
		var old []byte
		if r.OldPath != "" {
			if old, err = fsys.ReadFile(r.OldPath); err != nil {
				return nil, fmt.Errorf("convert: read %s: %w", r.OldPath, err)
			}
		}
		fp := Make(r.OldPath, r.Path, string(old), string(r.Content), opts)
		fp.Op = r.Op
		fp.NewMode = r.Mode
		out.Files = append(out.Files, fp)
	}
	return out, nil
}
