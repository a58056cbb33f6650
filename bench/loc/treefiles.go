package loc

import (
	"bufio"
	"bytes"
	"context"
	"fmt"
	"io"
	"os"
	"os/exec"
	"strconv"
	"strings"

	"github.com/patchbench/patchbench/symbols"
)

// maxIndexedFile is the largest file indexed; larger ones are data.
const maxIndexedFile = 1 << 20

// treeFiles streams the code files of commit to fn, in tree order: the
// regular files whose language package symbols knows, up to
// maxIndexedFile bytes each. The tree is listed once (ls-tree with
// sizes) and the chosen blobs read by one "git cat-file --batch", so a
// non-code file is never read, and a blob the repository lacks (a
// partial clone) is skipped rather than failing the tree, as "git
// archive" did.
func treeFiles(ctx context.Context, gitDir, commit string, fn func(path string, src string)) error {
	type entry struct{ id, path string }
	var entries []entry
	ls, err := gitOut(ctx, gitDir, "ls-tree", "-r", "-l", "-z", "--full-tree", commit)
	if err != nil {
		return err
	}
	for _, rec := range bytes.Split(ls, []byte{0}) {
		// <mode> SP <type> SP <id> SP+ <size> TAB <path>
		meta, path, ok := bytes.Cut(rec, []byte{'\t'})
		if !ok {
			continue
		}
		f := strings.Fields(string(meta))
		if len(f) != 4 || f[1] != "blob" || (f[0] != "100644" && f[0] != "100755") {
			continue
		}
		size, err := strconv.ParseInt(f[3], 10, 64)
		if err != nil || size > maxIndexedFile || symbols.LanguageOf(string(path)) == "" {
			continue
		}
		entries = append(entries, entry{f[2], string(path)})
	}
	if len(entries) == 0 {
		return nil
	}
	cmd := exec.CommandContext(ctx, "git", "--git-dir", gitDir, "cat-file", "--batch")
	// A partial clone would fetch each missing blob from its remote, one
	// round trip per file: a missing blob is skipped instead.
	cmd.Env = append(os.Environ(), "GIT_NO_LAZY_FETCH=1")
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	in, err := cmd.StdinPipe()
	if err != nil {
		return err
	}
	out, err := cmd.StdoutPipe()
	if err != nil {
		return err
	}
	if err := cmd.Start(); err != nil {
		return fmt.Errorf("git cat-file: %w", err)
	}
	go func() {
		bw := bufio.NewWriter(in)
		for _, e := range entries {
			bw.WriteString(e.id)
			bw.WriteByte('\n')
		}
		bw.Flush()
		in.Close()
	}()
	br := bufio.NewReaderSize(out, 1<<20)
	var readErr error
	for _, e := range entries {
		head, err := br.ReadString('\n')
		if err != nil {
			readErr = fmt.Errorf("git cat-file: %s: %w", e.path, err)
			break
		}
		f := strings.Fields(head)
		if len(f) == 2 && f[1] == "missing" {
			continue
		}
		if len(f) != 3 || f[1] != "blob" {
			readErr = fmt.Errorf("git cat-file: %s: unexpected header %q", e.path, head)
			break
		}
		size, err := strconv.ParseInt(f[2], 10, 64)
		if err != nil {
			readErr = fmt.Errorf("git cat-file: %s: %w", e.path, err)
			break
		}
		// Read into a string of the file's size: no growing buffer, and
		// no copy to turn it into the text that is tokenized.
		var b strings.Builder
		b.Grow(int(size))
		if _, err := io.CopyN(&b, br, size); err != nil {
			readErr = fmt.Errorf("git cat-file: %s: %w", e.path, err)
			break
		}
		if _, err := br.Discard(1); err != nil { // the newline after the content
			readErr = fmt.Errorf("git cat-file: %s: %w", e.path, err)
			break
		}
		fn(e.path, b.String())
	}
	_, _ = io.Copy(io.Discard, out)
	if err := cmd.Wait(); err != nil && readErr == nil {
		return fmt.Errorf("git cat-file %s: %s: %w", commit, strings.TrimSpace(stderr.String()), err)
	}
	return readErr
}

func gitOut(ctx context.Context, gitDir string, args ...string) ([]byte, error) {
	cmd := exec.CommandContext(ctx, "git", append([]string{"--git-dir", gitDir}, args...)...)
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		return nil, fmt.Errorf("git %s: %s: %w", args[0], strings.TrimSpace(stderr.String()), err)
	}
	return out, nil
}
