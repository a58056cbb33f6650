package envstore

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"time"

	"golang.org/x/sys/unix"

	"github.com/patchbench/patchbench/internal/atomicfile"
	"github.com/patchbench/patchbench/sandbox"
)

// Overlays in a user namespace. An ordinary user cannot mount an overlay
// that other processes see, but the kernel lets it mount one in a new user
// and mount namespace of its own. Such a mount is seen only by the
// processes in that namespace and ends with them, so `env restore` cannot
// leave one at a destination; a test stage can use one: a holder process
// (sh) makes the namespaces,
// mounts the overlay at the destination there and stays (reading a pipe
// from this process) until it is released or this process dies. This process reaches the tree through
// the holder's root (/proc/PID/root/DEST: by descriptors, as patch.Root
// writes; never a program that takes its working directory's path, which
// names the empty mount point outside), and runs programs in it through
// sandbox.EnterArgs (the test command through the sandbox's
// Command.Namespace).
//
// The copy-up of a lower file (the first write to it) gives the upper file
// the lower file's owner, which the namespace must map: it maps this user
// only, so the store's tree must belong to this user (a store it built).
// The tree's marker says whether one user and group own all of it, and a
// restore whose tree another user owns falls back to files, saying why,
// before anything is mounted.

// MethodUserNSOverlay is RestoreResult.Method for an overlay mounted in a
// user namespace (RestoreOptions.Namespace).
const MethodUserNSOverlay = "overlay-userns"

// treeOwner is who owns every file, directory and symbolic link of a
// materialized tree, when one user and one group do.
type treeOwner struct {
	UID uint32 `json:"uid"`
	GID uint32 `json:"gid"`
	// One is false when the tree has entries of several owners.
	One bool `json:"one"`
}

// ownerOf walks the tree at root and says who owns it.
func ownerOf(root string) (*treeOwner, error) {
	var o *treeOwner
	err := filepath.WalkDir(root, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		var st unix.Stat_t
		if err := unix.Lstat(p, &st); err != nil {
			return err
		}
		switch {
		case o == nil:
			o = &treeOwner{UID: st.Uid, GID: st.Gid, One: true}
		case st.Uid != o.UID || st.Gid != o.GID:
			o.One = false
			return filepath.SkipAll
		}
		return nil
	})
	if err != nil {
		return nil, err
	}
	return o, nil
}

// treeOwnerOf returns the owner of commit's complete tree from its marker,
// walking the tree (once) when the marker was written without it.
func (s *Store) treeOwnerOf(commit string, mk *treeMarker) (*treeOwner, error) {
	if mk.Owner != nil {
		return mk.Owner, nil
	}
	o, err := ownerOf(s.treePath(commit))
	if err != nil {
		return nil, err
	}
	mk.Owner = o
	if b, err := json.Marshal(mk); err == nil {
		atomicfile.WriteUnsynced(filepath.Join(s.treeDir(commit), treeMarkerName), b, 0o444) // best effort
	}
	return o, nil
}

// nsHolder is the process that holds a user namespace's overlay.
type nsHolder struct {
	cmd   *exec.Cmd
	stdin io.WriteCloser
}

// stop ends the holder, and with it the namespaces and the mount, and
// waits for it.
func (h *nsHolder) stop() {
	h.stdin.Close()
	h.cmd.Process.Kill()
	h.cmd.Wait()
}

// startHolder starts a holder that mounts the overlay with opts at dest in
// a new user and mount namespace, and returns once it is mounted.
func startHolder(ctx context.Context, opts, dest string) (*nsHolder, error) {
	// userxattr: the overlay's own marks (an opaque directory, a
	// redirect) as user.overlay.* attributes, which the namespace may
	// set (trusted.* it may not: a deleted lower directory fails with
	// EIO without). volatile first, as mountOverlay does; a kernel
	// without it mounts without.
	script := `mount -t overlay overlay -o "$1,userxattr,volatile" "$2" 2>/dev/null || mount -t overlay overlay -o "$1,userxattr" "$2" || exit 1
echo mounted
read -r _`
	cmd := exec.Command("/bin/sh", "-c", script, "sh", opts, dest)
	cmd.SysProcAttr = &syscall.SysProcAttr{
		Cloneflags:                 syscall.CLONE_NEWUSER | syscall.CLONE_NEWNS,
		UidMappings:                []syscall.SysProcIDMap{{ContainerID: 0, HostID: os.Getuid(), Size: 1}},
		GidMappings:                []syscall.SysProcIDMap{{ContainerID: 0, HostID: os.Getgid(), Size: 1}},
		GidMappingsEnableSetgroups: false,
		// The mount ends with the holder: with this process, or when
		// the pipe it reads closes.
		Pdeathsig: syscall.SIGKILL,
	}
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	stdin, err := cmd.StdinPipe()
	if err != nil {
		return nil, err
	}
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		return nil, err
	}
	if err := cmd.Start(); err != nil {
		return nil, err
	}
	h := &nsHolder{cmd: cmd, stdin: stdin}
	line := make(chan string, 1)
	go func() {
		l, _ := bufio.NewReader(stdout).ReadString('\n')
		line <- l
	}()
	var got string
	select {
	case got = <-line:
	case <-ctx.Done():
	case <-time.After(time.Minute):
	}
	if strings.TrimSpace(got) != "mounted" {
		h.stop()
		if err := ctx.Err(); err != nil {
			return nil, err
		}
		return nil, errors.New(outputLines(stderr.Bytes(), errors.New("the holder ended")))
	}
	return h, nil
}

// nsPath is where this process reaches dest inside the holder pid's mount
// namespace.
func nsPath(pid int, dest string) string {
	return fmt.Sprintf("/proc/%d/root%s", pid, dest)
}

// restoreUserNS mounts commit's tree at abs in a user namespace (see the
// top of this file). It returns why not when it cannot (the tree cannot be
// made, belongs to another user, the mount fails), having left nothing.
func (s *Store) restoreUserNS(ctx context.Context, commit, abs string, opts RestoreOptions, res *RestoreResult) (string, error) {
	mk, err := s.readyTree(ctx, commit, opts)
	if errors.Is(err, ErrCorrupt) {
		return "", err
	}
	if err != nil {
		return fmt.Sprintf("the store's tree of the commit cannot be made here (%v)", err), nil
	}
	owner, err := s.treeOwnerOf(commit, mk)
	if err != nil {
		return fmt.Sprintf("the store's tree of the commit cannot be read (%v)", err), nil
	}
	uid, gid := uint32(os.Getuid()), uint32(os.Getgid())
	if !owner.One || owner.UID != uid || owner.GID != gid {
		who := fmt.Sprintf("uid %d and gid %d", owner.UID, owner.GID)
		if !owner.One {
			who = "several users"
		}
		return fmt.Sprintf("the store's tree belongs to %s, which a user namespace of this user (uid %d, gid %d) cannot map: the first write to a file would fail (copy-up: value too large for defined data type, EOVERFLOW)", who, uid, gid), nil
	}
	var h *nsHolder
	err = s.mountRecorded(ctx, commit, abs, opts, func(rec *mountRecord, mopts string) error {
		var err error
		if h, err = startHolder(ctx, mopts, abs); err != nil {
			return err
		}
		rec.UserNS, rec.Holder = true, h.cmd.Process.Pid
		rec.HolderStart = processStart(rec.Holder)
		return nil
	})
	if errors.Is(err, errMount) {
		return fmt.Sprintf("an overlay in a user namespace does not mount (%v)", errors.Unwrap(err)), nil
	}
	if err != nil {
		return "", err
	}
	res.Files, res.Dirs, res.Symlinks, res.Bytes = mk.Files, mk.Dirs, mk.Symlinks, mk.Bytes
	res.NamespacePID = h.cmd.Process.Pid
	res.Path = nsPath(res.NamespacePID, abs)
	res.holder = h
	return "", nil
}

// Enter returns the argv prefix that runs a program in the restored tree:
// nothing for a tree this process sees at Dir, else the prefix that enters
// the user namespace it is mounted in, in Dir there (sandbox.EnterArgs).
func (r *RestoreResult) Enter() ([]string, error) {
	if r.NamespacePID == 0 {
		return nil, nil
	}
	return sandbox.EnterArgs(r.NamespacePID, r.Dir)
}

// Release undoes the restore: for an overlay, Release(r.Dir), the holder
// of a user namespace's overlay stopped first; nothing for files (remove
// them as any directory).
func (r *RestoreResult) Release() error {
	switch r.Method {
	case RestoreOverlay.String(), MethodUserNSOverlay:
	default:
		return nil
	}
	if r.holder != nil {
		r.holder.stop()
	}
	return Release(r.Dir)
}
