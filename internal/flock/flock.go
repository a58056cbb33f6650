// Package flock takes advisory file locks (flock(2)) that a context can stop
// waiting for. The kernel drops a lock when its process dies, so a killed
// process never leaves one behind.
package flock

import (
	"context"
	"errors"
	"fmt"
	"os"
	"syscall"
	"time"
)

// Lock is a held lock. Release it once.
type Lock struct{ f *os.File }

// Acquire takes the lock on the file at path (created if missing), shared or
// exclusive, polling until it is free or ctx ends. Polling rather than a
// blocking flock keeps the wait cancellable.
func Acquire(ctx context.Context, path string, shared bool) (*Lock, error) {
	f, err := os.OpenFile(path, os.O_RDWR|os.O_CREATE, 0o644)
	if errors.Is(err, os.ErrPermission) {
		// flock(2) locks a file opened for reading too: another user's
		// lock file can still be waited on and held.
		f, err = os.Open(path)
	}
	if err != nil {
		return nil, fmt.Errorf("lock %s: %w", path, err)
	}
	how := syscall.LOCK_EX
	if shared {
		how = syscall.LOCK_SH
	}
	for delay := time.Millisecond; ; {
		err := syscall.Flock(int(f.Fd()), how|syscall.LOCK_NB)
		if err == nil {
			return &Lock{f}, nil
		}
		if !errors.Is(err, syscall.EWOULDBLOCK) {
			f.Close()
			return nil, fmt.Errorf("lock %s: %w", path, err)
		}
		select {
		case <-ctx.Done():
			f.Close()
			return nil, fmt.Errorf("lock %s: %w", path, ctx.Err())
		case <-time.After(delay):
		}
		delay = min(2*delay, 100*time.Millisecond)
	}
}

// ErrBusy is returned by TryAcquire when another open file holds the lock.
var ErrBusy = errors.New("lock held by another process")

// TryAcquire takes the exclusive lock on the file at path (created if
// missing, never through a symbolic link) without waiting: ErrBusy when it
// is held.
func TryAcquire(path string) (*Lock, error) {
	f, err := os.OpenFile(path, os.O_RDWR|os.O_CREATE|syscall.O_NOFOLLOW, 0o644)
	if err != nil {
		return nil, fmt.Errorf("lock %s: %w", path, err)
	}
	if err := syscall.Flock(int(f.Fd()), syscall.LOCK_EX|syscall.LOCK_NB); err != nil {
		f.Close()
		if errors.Is(err, syscall.EWOULDBLOCK) {
			return nil, fmt.Errorf("lock %s: %w", path, ErrBusy)
		}
		return nil, fmt.Errorf("lock %s: %w", path, err)
	}
	return &Lock{f}, nil
}

// Rewrite replaces the content of the locked file with b, for example to
// name the holder to the processes it refuses.
func (l *Lock) Rewrite(b []byte) error {
	if err := l.f.Truncate(0); err != nil {
		return err
	}
	_, err := l.f.WriteAt(b, 0)
	return err
}

// Is reports whether the locked file is still the file at path (it was not
// removed or replaced since it was opened).
func (l *Lock) Is(path string) bool {
	a, err := l.f.Stat()
	if err != nil {
		return false
	}
	b, err := os.Lstat(path)
	return err == nil && os.SameFile(a, b)
}

// Release drops the lock.
func (l *Lock) Release() { l.f.Close() }
