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
	mode        string   // "--batch" or "--batch-check"
	env         []string // added to gitEnv()

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
	cmd.Env = append(gitEnv(), c.env...)
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
	h, err := p.readHeader(obj)
	if err != nil || h.missing || !content {
		return h, nil, err
	}
	data := make([]byte, h.size+1) // content and a newline
	if _, err := io.ReadFull(p.out, data); err != nil {
		if err == io.EOF {
			err = io.ErrUnexpectedEOF
		}
		return header{}, nil, err
	}
	if data[h.size] != '\n' {
		return header{}, nil, fmt.Errorf("response to %q not terminated by a newline", obj)
	}
	return h, data[:h.size:h.size], nil
}

// readHeader reads the first line of the response to obj.
func (p *catProc) readHeader(obj string) (header, error) {
	line, err := p.out.ReadString('\n')
	if err != nil {
		if err == io.EOF {
			err = io.ErrUnexpectedEOF
		}
		return header{}, err
	}
	line = strings.TrimSuffix(line, "\n")
	if line == obj+" missing" {
		return header{missing: true}, nil
	}
	if line == obj+" ambiguous" {
		return header{}, fmt.Errorf("%s is ambiguous", obj)
	}
	f := strings.Split(line, " ")
	if len(f) != 3 {
		return header{}, fmt.Errorf("unexpected response %q to %q", line, obj)
	}
	size, err := strconv.ParseInt(f[2], 10, 64)
	if err != nil || size < 0 {
		return header{}, fmt.Errorf("unexpected response %q to %q", line, obj)
	}
	return header{id: f[0], typ: f[1], size: size}, nil
}

// readString reads a content of h.size bytes and its newline into a
// string of that size: no growing buffer and no copy to turn it into text.
// buf is the copy buffer, reused across reads.
func (p *catProc) readString(obj string, h header, buf []byte) (string, error) {
	var b strings.Builder
	b.Grow(int(h.size))
	if n, err := io.CopyBuffer(&b, io.LimitReader(p.out, h.size), buf); err != nil || n != h.size {
		if err == nil {
			err = io.ErrUnexpectedEOF
		}
		return "", err
	}
	if c, err := p.out.ReadByte(); err != nil || c != '\n' {
		return "", fmt.Errorf("response to %q not terminated by a newline", obj)
	}
	return b.String(), nil
}

// stream asks for every object of objs in one pipelined exchange (the
// process runs --batch): a goroutine writes the requests while the
// responses are read, and fn is called with each in order, its content a
// string (empty for a missing object, header.missing set). If fn returns
// an error, ctx ends or the process fails, the process is stopped (the
// next request starts a new one) and the error returned; a process that
// fails before the first response is retried once on a new one.
func (c *catFile) stream(ctx context.Context, objs []string, fn func(i int, h header, content string) error) error {
	for _, obj := range objs {
		if strings.ContainsAny(obj, "\n\x00") {
			return fmt.Errorf("object name %q contains a newline", obj)
		}
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	copyBuf := make([]byte, 32<<10)
	var lastErr error
	for attempt := 0; attempt < 2; attempt++ {
		if c.closed {
			return fmt.Errorf("git cat-file: %w", ErrClosed)
		}
		if err := ctx.Err(); err != nil {
			return err
		}
		if c.proc == nil {
			p, err := c.start()
			if err != nil {
				return err
			}
			c.proc = p
		}
		p := c.proc
		stop := context.AfterFunc(ctx, func() { p.cmd.Process.Kill() })
		written := make(chan error, 1)
		go func() {
			bw := bufio.NewWriterSize(p.stdin, 64<<10)
			for _, obj := range objs {
				bw.WriteString(obj)
				bw.WriteByte('\n')
			}
			written <- bw.Flush()
		}()
		var err, fnErr error
		read := 0
		for i, obj := range objs {
			var h header
			if h, err = p.readHeader(obj); err != nil {
				break
			}
			var s string
			if !h.missing {
				if s, err = p.readString(obj, h, copyBuf); err != nil {
					break
				}
			}
			read++
			if fnErr = fn(i, h, s); fnErr != nil {
				break
			}
		}
		interrupted := !stop()
		if err == nil && fnErr == nil && !interrupted {
			// Every response read: every request was written.
			if err = <-written; err == nil {
				return nil
			}
		} else {
			// The stream is out of step or the process is gone: stop it
			// (the writer, if blocked, then fails).
			p.cmd.Process.Kill()
			<-written
		}
		c.proc = nil
		waitErr := p.stop()
		switch {
		case interrupted || ctx.Err() != nil:
			return ctx.Err()
		case fnErr != nil:
			return fnErr
		}
		lastErr = fmt.Errorf("git cat-file %s: %w", c.mode, errors.Join(err, processError(waitErr, p.stderr)))
		if read > 0 {
			break
		}
	}
	return lastErr
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
