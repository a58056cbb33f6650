//go:build unix

package patch

import "syscall"

// Lock takes the root's write lock, an advisory lock (flock) on the
// directory itself, held until unlock: two processes applying patches to
// the same tree (two agents, each with its own server, or apply run twice
// at once) take turns, so that each reads what the other wrote, and no
// edit is lost. It waits for the lock.
func (r *Root) Lock() (unlock func(), err error) {
	f, err := r.root.Open(".")
	if err != nil {
		return nil, err
	}
	for {
		err = syscall.Flock(int(f.Fd()), syscall.LOCK_EX)
		if err != syscall.EINTR {
			break
		}
	}
	if err != nil {
		f.Close()
		return nil, err
	}
	return func() { f.Close() }, nil // closing the descriptor releases the lock
}
