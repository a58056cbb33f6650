package repo

import (
	"bufio"
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"os/exec"
	"strconv"
	"strings"
)

// GrepMatch is one line "git grep" found.
type GrepMatch struct {
	// Path is the file's path from the root of the tree, slash-separated.
	Path string
	// Line is the 1-based line number; Text the line without its newline.
	Line int
	Text string
}

// GrepOptions say what [Repo.Grep] looks for.
type GrepOptions struct {
	// Pattern is a POSIX extended regular expression (git grep -E).
	Pattern string
	// IgnoreCase matches without regard to case (-i).
	IgnoreCase bool
	// Pathspecs limit the search to matching paths (git pathspecs, magic
	// such as ":(glob)" included); none searches every file.
	Pathspecs []string
	// Max stops the search after that many matches; 0 means no bound.
	Max int
}

// Grep runs "git grep" on the tree of revision rev, nothing checked out:
// the lines matching o.Pattern in text files (binary files are skipped),
// in git's order (by path, then line). When o.Max matches have been found
// and there are more, it stops git and reports more = true. A pattern git
// refuses is an error holding git's message.
func (r *Repo) Grep(ctx context.Context, rev string, o GrepOptions) (matches []GrepMatch, more bool, err error) {
	fail := func(err error) ([]GrepMatch, bool, error) {
		return nil, false, fmt.Errorf("repo: grep %q in %s of %s: %w", o.Pattern, rev, r.name, err)
	}
	tree, err := r.resolve(ctx, rev, "tree")
	if err != nil {
		return fail(err)
	}
	args := []string{"--git-dir=" + r.gitDir, "grep", "-n", "-z", "-I", "--no-color", "-E"}
	if o.IgnoreCase {
		args = append(args, "-i")
	}
	args = append(args, "-e", o.Pattern, tree, "--")
	args = append(args, o.Pathspecs...)

	// Stop git as soon as enough lines have been read.
	gctx, cancel := context.WithCancel(ctx)
	defer cancel()
	cmd := exec.CommandContext(gctx, r.git, args...)
	cmd.Env = gitEnv()
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		return fail(err)
	}
	if err := cmd.Start(); err != nil {
		return fail(err)
	}
	prefix := tree + ":"
	br := bufio.NewReaderSize(stdout, 64<<10)
	var parseErr error
	for {
		line, rerr := br.ReadString('\n')
		if line != "" {
			// TREE:PATH NUL LINE NUL TEXT
			m, perr := parseGrepLine(strings.TrimSuffix(line, "\n"), prefix)
			if perr != nil {
				parseErr = perr
				break
			}
			if o.Max > 0 && len(matches) == o.Max {
				more = true
				break
			}
			matches = append(matches, m)
		}
		if rerr != nil {
			if rerr != io.EOF {
				parseErr = rerr
			}
			break
		}
	}
	stopped := more || parseErr != nil
	if stopped {
		cancel()
	}
	werr := cmd.Wait()
	switch {
	case parseErr != nil:
		return fail(parseErr)
	case ctx.Err() != nil:
		return fail(ctx.Err())
	case stopped:
		return matches, more, nil
	}
	var exit *exec.ExitError
	if errors.As(werr, &exit) && exit.ExitCode() == 1 && stderr.Len() == 0 {
		return nil, false, nil // no match
	}
	if werr != nil {
		return fail(gitError(werr, stderr.Bytes()))
	}
	return matches, false, nil
}

func parseGrepLine(line, prefix string) (GrepMatch, error) {
	rest, ok := strings.CutPrefix(line, prefix)
	if !ok {
		return GrepMatch{}, fmt.Errorf("unexpected git grep output %q", line)
	}
	p, rest, ok1 := strings.Cut(rest, "\x00")
	num, text, ok2 := strings.Cut(rest, "\x00")
	n, err := strconv.Atoi(num)
	if !ok1 || !ok2 || err != nil {
		return GrepMatch{}, fmt.Errorf("unexpected git grep output %q", line)
	}
	return GrepMatch{Path: p, Line: n, Text: text}, nil
}
