//go:build !unix

package patch

// Lock takes the root's write lock: see lock_unix.go. Without flock it is
// not taken; applies in one process are still serialized by their callers.
func (r *Root) Lock() (unlock func(), err error) { return func() {}, nil }
