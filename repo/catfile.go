package repo

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"io"
	"os/exec"
	"strconv"
	"strings"
	"sync"
	"time"
)

// catFile is one long-lived "git cat-file --batch" (or "--batch-check")
// process, started on first use and restarted after it dies. Requests are
// serialized: one request line is written and its whole response read while
// holding mu.
type catFile struct {
	git, gitDir string
	mode        string // "--batch" or "--batch-check"

	mu     sync.Mutex
	proc   *catProc
	closed bool
}

// catProc is a running cat-file process.
type catProc struct {
	cmd    *exec.Cmd
	stdin  io.WriteCloser
	out    *bufio.Reader
	stderr *tailBuffer
}

// header is the first line of a cat-file response.
type header struct {
	id      string
	typ     string
	size    int64
	missing bool
}

// request asks for obj and returns its header and, if content is set (the
// process runs --batch), its content. A missing object is not an error:
// header.missing is set. If the process fails during the request it is
// stopped, and the request is retried once on a new process. If ctx ends
// during the request the process is killed (the next request starts a new
// one) and ctx's error is returned.
func (c *catFile) request(ctx context.Context, obj string, content bool) (header, []byte, error) {
	if strings.ContainsAny(obj, "\n\x00") {
		return header{}, nil, fmt.Errorf("object name %q contains a newline", obj)
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	var lastErr error
	for attempt := 0; attempt < 2; attempt++ {
		if c.closed {
			return header{}, nil, fmt.Errorf("git cat-file: %w", ErrClosed)
		}
		if err := ctx.Err(); err != nil {
			return header{}, nil, err
		}
		if c.proc == nil {
			p, err := c.start()
			if err != nil {
				return header{}, nil, err
			}
			c.proc = p
		}
		p := c.proc
		stop := context.AfterFunc(ctx, func() { p.cmd.Process.Kill() })
		h, data, err := p.roundTrip(obj, content)
		interrupted := !stop()
		if err == nil && !interrupted {
			return h, data, nil
		}
		// The stream is out of step or the process is gone: stop it.
		c.proc = nil
		waitErr := p.stop()
		if interrupted || ctx.Err() != nil {
			return header{}, nil, ctx.Err()
		}
		lastErr = fmt.Errorf("git cat-file %s: %w", c.mode, errors.Join(err, processError(waitErr, p.stderr)))
	}
	return header{}, nil, lastErr
}

// start starts a cat-file process.
func (c *catFile) start() (*catProc, error) {
	cmd := exec.Command(c.git, "--git-dir="+c.gitDir, "cat-file", c.mode)
	cmd.Env = gitEnv()
	stdin, err := cmd.StdinPipe()
	if err != nil {
		return nil, fmt.Errorf("git cat-file %s: %w", c.mode, err)
	}
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		return nil, fmt.Errorf("git cat-file %s: %w", c.mode, err)
	}
	p := &catProc{cmd: cmd, stdin: stdin, out: bufio.NewReaderSize(stdout, 64<<10), stderr: &tailBuffer{max: 4096}}
	cmd.Stderr = p.stderr
	if err := cmd.Start(); err != nil {
		return nil, fmt.Errorf("git cat-file %s: %w", c.mode, err)
	}
	return p, nil
}

// close stops the process, if any. Later requests fail.
func (c *catFile) close() error {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.closed = true
	if c.proc == nil {
		return nil
	}
	p := c.proc
	c.proc = nil
	p.stdin.Close() // cat-file exits at end of input
	done := make(chan error, 1)
	go func() { done <- p.cmd.Wait() }()
	select {
	case err := <-done:
		if err != nil {
			return fmt.Errorf("git cat-file %s: %w", c.mode, processError(err, p.stderr))
		}
		return nil
	case <-time.After(5 * time.Second):
		p.cmd.Process.Kill()
		<-done
		return nil
	}
}

// roundTrip writes one request and reads its response.
func (p *catProc) roundTrip(obj string, content bool) (header, []byte, error) {
	if _, err := io.WriteString(p.stdin, obj+"\n"); err != nil {
		return header{}, nil, err
	}
	line, err := p.out.ReadString('\n')
	if err != nil {
		if err == io.EOF {
			err = io.ErrUnexpectedEOF
		}
		return header{}, nil, err
	}
	line = strings.TrimSuffix(line, "\n")
	if line == obj+" missing" {
		return header{missing: true}, nil, nil
	}
	if line == obj+" ambiguous" {
		return header{}, nil, fmt.Errorf("%s is ambiguous", obj)
	}
	f := strings.Split(line, " ")
	if len(f) != 3 {
		return header{}, nil, fmt.Errorf("unexpected response %q to %q", line, obj)
	}
	size, err := strconv.ParseInt(f[2], 10, 64)
	if err != nil || size < 0 {
		return header{}, nil, fmt.Errorf("unexpected response %q to %q", line, obj)
	}
	h := header{id: f[0], typ: f[1], size: size}
	if !content {
		return h, nil, nil
	}
	data := make([]byte, size+1) // content and a newline
	if _, err := io.ReadFull(p.out, data); err != nil {
		if err == io.EOF {
			err = io.ErrUnexpectedEOF
		}
		return header{}, nil, err
	}
	if data[size] != '\n' {
		return header{}, nil, fmt.Errorf("response to %q not terminated by a newline", obj)
	}
	return h, data[:size:size], nil
}

// stop kills the process and waits for it.
func (p *catProc) stop() error {
	p.stdin.Close()
	p.cmd.Process.Kill()
	return p.cmd.Wait()
}

// processError describes how a process ended, with the tail of its stderr.
func processError(err error, stderr *tailBuffer) error {
	msg := strings.TrimSpace(stderr.String())
	switch {
	case err == nil && msg == "":
		return nil
	case err == nil:
		return errors.New(msg)
	case msg == "":
		return err
	}
	return fmt.Errorf("%w: %s", err, msg)
}

// tailBuffer keeps the last max bytes written to it.
type tailBuffer struct {
	mu  sync.Mutex
	max int
	buf []byte
}

func (b *tailBuffer) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	b.buf = append(b.buf, p...)
	if over := len(b.buf) - b.max; over > 0 {
		b.buf = append(b.buf[:0], b.buf[over:]...)
	}
	return len(p), nil
}

func (b *tailBuffer) String() string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return string(b.buf)
}
