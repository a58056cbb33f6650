package cli

import (
	"context"
	"fmt"
	"io"
	"os"
	"runtime/debug"
	"sync"
	"syscall"
	"unsafe"

	"github.com/patchbench/patchbench/cmd/internal/cmdline"
	"github.com/patchbench/patchbench/diff"
	"github.com/patchbench/patchbench/patch"
)

type diffOptions struct {
	format    string
	algorithm string
	context   int
	binary    bool
}

func newDiffCommand(sio Stdio) *cmdline.Command {
	var o diffOptions
	cmd := &cmdline.Command{
		Quick: true,
		Use:   "diff [flags] OLD NEW",
		Short: "Print the edit that turns file OLD into file NEW, in any format",
		Long: `Print the edit that turns file OLD into file NEW.

OLD or NEW may be /dev/null for a creation or a deletion. Formats without line
numbers (udiff-h, search-replace, v4a) get enough context for every hunk to be
placed uniquely. The exit status is 0 whether or not the files differ.

A file with a NUL byte in its first 8000 bytes is binary, as git decides: the
diff says only "Binary files ... differ", or with --binary is a GIT binary
patch, as git diff --binary writes it, that patchbench apply and git apply
accept. Binary changes have no search-replace or v4a form.`,
		Args: cmdline.ExactArgs(2, "OLD and NEW"),
		Run: func(ctx context.Context, args []string) error {
			return runDiff(o, args[0], args[1], sio)
		},
	}
	f := &cmd.Flags
	f.String(&o.format, "format", 0, "udiff", "output format: udiff, udiff-h, udiff-l, search-replace, v4a")
	f.String(&o.algorithm, "algorithm", 0, "histogram", "diff algorithm: histogram or myers")
	f.Int(&o.context, "unified", 'U', patch.DefaultContext, "lines of context around each change")
	f.Bool(&o.binary, "binary", 0, false, "write a change of binary files as a GIT binary patch that can be applied")
	f.AtLeast("unified", 0)
	return cmd
}

func runDiff(o diffOptions, oldName, newName string, sio Stdio) error {
	f, err := patch.ParseFormat(o.format)
	if err != nil {
		return Usage(err)
	}
	alg, err := diff.ParseAlgorithm(o.algorithm)
	if err != nil {
		return Usage(err)
	}
	// Nearly everything allocated here stays live until the command exits,
	// so collecting would only rescan it: the collector waits for a memory
	// limit instead (see readSide), and the two files are read at once.
	defer debug.SetGCPercent(debug.SetGCPercent(-1))
	defer debug.SetMemoryLimit(debug.SetMemoryLimit(memoryLimit(oldName, newName)))
	var old, neu string
	var oldErr, newErr error
	var oldUnmap, newUnmap func()
	var wg sync.WaitGroup
	wg.Add(1)
	go func() {
		defer wg.Done()
		old, oldUnmap, oldErr = readSide(oldName)
	}()
	neu, newUnmap, newErr = readSide(newName)
	wg.Wait()
	// Nothing refers to the mapped bytes once the output is written.
	defer oldUnmap()
	defer newUnmap()
	if oldErr != nil {
		return oldErr
	}
	if newErr != nil {
		return newErr
	}
	oldPath, newPath := oldName, newName
	if oldName == os.DevNull {
		oldPath = ""
	}
	if newName == os.DevNull {
		newPath = ""
	}
	text, err := makeDiff(o, f, alg, oldPath, newPath, old, neu)
	if err != nil {
		return err
	}
	_, err = fmt.Fprint(sio.Out, text)
	return err
}

// makeDiff prints the edit from old to neu in format f; "" when they are
// the same. An empty path is a creation or a deletion.
func makeDiff(o diffOptions, f patch.Format, alg diff.Algorithm, oldPath, newPath, old, neu string) (string, error) {
	text, err := patch.DiffText(f, oldPath, newPath, old, neu, patch.MakeOptions{Context: o.context, Algorithm: alg}, o.binary)
	if err != nil {
		return "", Failed(err)
	}
	return text, nil
}

// memoryLimit allows the diff a generous multiple of its inputs before the
// collector runs.
func memoryLimit(names ...string) int64 {
	var n int64
	for _, name := range names {
		if st, err := os.Stat(name); err == nil {
			n += st.Size()
		}
	}
	return 256<<20 + 8*n
}

// readSide returns the content of a file and a function that releases it.
// Large regular files are mapped rather than read: the page cache is used
// in place, with no copy and no zeroed buffer to fill. The bytes are never
// written, so a string can share them.
func readSide(name string) (string, func(), error) {
	none := func() {}
	if name == os.DevNull {
		return "", none, nil
	}
	// Regular files only, as git diff --no-index ("unsupported file
	// type"): a device never ends a read, and a named pipe blocks it (the
	// open too, without O_NONBLOCK). Checked again on the open file, in
	// case the name was swapped in between.
	if st, err := os.Stat(name); err == nil && !st.Mode().IsRegular() {
		return "", none, unsupported(name, st.Mode())
	}
	f, err := os.OpenFile(name, os.O_RDONLY|syscall.O_NONBLOCK, 0)
	if err != nil {
		return "", none, Usage(fmt.Errorf("read %s: %w", name, err))
	}
	defer f.Close()
	st, err := f.Stat()
	if err != nil {
		return "", none, Usage(fmt.Errorf("read %s: %w", name, err))
	}
	if !st.Mode().IsRegular() {
		return "", none, unsupported(name, st.Mode())
	}
	if st.Size() >= 1<<20 && st.Size() < 1<<40 {
		if b, err := syscall.Mmap(int(f.Fd()), 0, int(st.Size()), syscall.PROT_READ, syscall.MAP_PRIVATE); err == nil {
			return unsafe.String(&b[0], len(b)), func() { syscall.Munmap(b) }, nil
		}
	}
	b, err := io.ReadAll(f)
	if err != nil {
		return "", none, Usage(fmt.Errorf("read %s: %w", name, err))
	}
	if len(b) == 0 {
		return "", none, nil
	}
	return unsafe.String(&b[0], len(b)), none, nil
}

// unsupported refuses a file that is not a regular one, in git's words.
func unsupported(name string, mode os.FileMode) error {
	return Usage(fmt.Errorf("diff: %s: unsupported file type (a %s); only regular files are compared", name, patch.FileKind(mode)))
}
