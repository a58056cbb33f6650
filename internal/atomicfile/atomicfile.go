// Package atomicfile writes files so that readers see the old content or
// the new, never a part: through a temporary file beside the target, synced,
// then renamed over it.
package atomicfile

import (
	"io"
	"io/fs"
	"os"
	"path/filepath"
)

// Write writes data to path with permissions perm.
func Write(path string, data []byte, perm fs.FileMode) error {
	return write(path, perm, true, bytesFill(data))
}

// WriteUnsynced is Write without waiting for the data to reach the disk:
// for many small files that can be made again, where the rename alone
// keeps readers from seeing a part.
func WriteUnsynced(path string, data []byte, perm fs.FileMode) error {
	return write(path, perm, false, bytesFill(data))
}

// WriteFunc writes what fill writes to path with permissions perm. Nothing
// replaces path if fill fails.
func WriteFunc(path string, perm fs.FileMode, fill func(io.Writer) error) error {
	return write(path, perm, true, fill)
}

func bytesFill(data []byte) func(io.Writer) error {
	return func(w io.Writer) error {
		_, err := w.Write(data)
		return err
	}
}

func write(path string, perm fs.FileMode, sync bool, fill func(io.Writer) error) (err error) {
	f, err := os.CreateTemp(filepath.Dir(path), "."+filepath.Base(path)+".*")
	if err != nil {
		return err
	}
	defer func() {
		if err != nil {
			f.Close()
			os.Remove(f.Name())
		}
	}()
	if err = fill(f); err != nil {
		return err
	}
	if sync {
		if err = f.Sync(); err != nil {
			return err
		}
	}
	if err = f.Close(); err != nil {
		return err
	}
	if err = os.Chmod(f.Name(), perm); err != nil {
		return err
	}
	return os.Rename(f.Name(), path)
}
