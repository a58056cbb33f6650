package patch

import (
	"bufio"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"math/rand/v2"
	"os"
	"path"
	"path/filepath"
	"strings"
	"syscall"
)

// A multi-file write is made all or nothing across a crash with a journal:
// before anything else is written, a file in the root,
// .patchbench-journal-N, names every temporary file, backup and directory
// the write will make. Then the new contents go to temporary files, each
// original is kept as a backup (a hard link) while its new file is renamed
// over it, and once every file is in, the journal is renamed to
// .patchbench-journal-N.done (the commit point) before the backups and the
// journal are removed. A write killed at any point leaves either a journal
// (roll back: every backup renamed over its target, every new file and
// temporary file removed, every directory made removed) or a .done journal
// (roll forward: the backups removed). [Root.Recover] does either; the
// in-process undo of a failed write is the same roll back.

const (
	journalPrefix = ".patchbench-journal-"
	journalPart   = ".part" // being written: nothing else was
	journalDone   = ".done" // committed: every new file is in
	journalMagic  = "patchbench write journal 1"
)

// journal is what a write is about to do.
type journal struct {
	Magic string `json:"journal"`
	// Dirs are the directories the write makes, parents first.
	Dirs  []string      `json:"dirs,omitempty"`
	Steps []journalStep `json:"steps"`
}

// journalStep is one file of a write: names in the directory Dir (a
// slash-separated path relative to the root, "." for the root).
type journalStep struct {
	Dir    string `json:"dir"`
	Target string `json:"target"`
	// Tmp holds the new content; empty for a deletion.
	Tmp string `json:"tmp,omitempty"`
	// Backup keeps the original while the new file goes in; empty when
	// there is no original (a creation).
	Backup string `json:"backup,omitempty"`
	// Linked: the new file of a creation went in as a hard link to Tmp,
	// which is kept until the commit, so that a roll back removes the
	// target only when it is that file.
	Linked bool `json:"linked,omitempty"`
	// DirBackup: the target is a directory whose files the write removes
	// (x/y renamed to x); Backup is that directory, moved aside whole
	// with the backups of its files, so that the new file takes its
	// place.
	DirBackup bool `json:"dir_backup,omitempty"`
}

// check refuses a journal whose names are not those a write makes: a
// journal is read back from the tree, and a forged one must not rename
// or remove other files.
func (j *journal) check() error {
	if j.Magic != journalMagic {
		return errors.New("not a patchbench journal")
	}
	for _, d := range j.Dirs {
		if err := CheckPath(d); err != nil {
			return err
		}
	}
	for _, s := range j.Steps {
		if s.Dir != "." {
			if err := CheckPath(s.Dir); err != nil {
				return err
			}
		}
		if strings.ContainsAny(s.Target, `/\`) || CheckPath(s.Target) != nil {
			return fmt.Errorf("bad target %q", s.Target)
		}
		if s.Tmp != "" && !isTempName(s.Tmp, s.Target, ".patchbench-") {
			return fmt.Errorf("bad temporary file %q for %q", s.Tmp, s.Target)
		}
		if s.Backup != "" && !isTempName(s.Backup, s.Target, ".patchbench-orig-") {
			return fmt.Errorf("bad backup %q for %q", s.Backup, s.Target)
		}
		if s.DirBackup && (s.Backup == "" || s.Tmp == "") {
			return fmt.Errorf("bad directory backup for %q", s.Target)
		}
	}
	return nil
}

// isTempName reports whether name is "." + target + infix + digits.
func isTempName(name, target, infix string) bool {
	rest, ok := strings.CutPrefix(name, "."+target+infix)
	if !ok || rest == "" {
		return false
	}
	for _, c := range rest {
		if c < '0' || c > '9' {
			return false
		}
	}
	return true
}

// OnWrite sets a function that [Root.WriteResults] calls at each point
// where a process killed would leave a different state on disk: "journal"
// (the journal is written, nothing else), "temps" (every new content is in
// a temporary file), "step N" (N files are in), "commit" (every file is
// in, the backups not yet removed). Tests stop a write there to check
// [Root.Recover]; nil calls nothing.
func (r *Root) OnWrite(hook func(point string)) { r.writeHook = hook }

// maxOpenDirs bounds the directories a write holds open at once: a patch
// of thousands of files in as many directories must not run out of
// descriptors (git apply holds none).
const maxOpenDirs = 64

// dirs opens the directories of a write through [Root.openDir], each
// once while it stays among the last maxOpenDirs used.
type dirs struct {
	r    *Root
	open map[string]*os.Root
}

func (d *dirs) get(dir string) (*os.Root, error) {
	if f, ok := d.open[dir]; ok {
		return f, nil
	}
	if len(d.open) >= maxOpenDirs {
		d.close()
	}
	f, err := d.r.openDir(filepath.FromSlash(dir))
	if err != nil {
		return nil, err
	}
	if d.open == nil {
		d.open = map[string]*os.Root{}
	}
	d.open[dir] = f
	return f, nil
}

func (d *dirs) close() {
	for k, f := range d.open {
		f.Close()
		delete(d.open, k)
	}
}

// WriteResults writes the results of [Apply] under dir through a [Root]:
// see [Root.WriteResults].
func WriteResults(dir string, results []FileResult) error {
	r, err := OpenRoot(dir)
	if err != nil {
		return fmt.Errorf("write: %w", err)
	}
	defer r.Close()
	return r.WriteResults(results)
}

// WriteResults writes the results of [Apply], all or nothing: every path is
// checked first, new contents go to temporary files beside their targets,
// then every target is swapped in by rename; if any step fails, everything
// done so far is undone. A journal in the root names what the write makes,
// so that a write killed midway is undone (or completed) by
// [Root.Recover]. Nothing is written through a symbolic link. It holds a
// bounded number of descriptors, however many files and directories it
// writes.
func (r *Root) WriteResults(results []FileResult) (err error) {
	hook := r.writeHook
	if hook == nil {
		hook = func(string) {}
	}
	paths, content, mode := Final(results)
	if len(paths) == 0 {
		return nil
	}
	// The streamed contents, by Final's rule: the last result to write a
	// path decides.
	stream := map[string]func(io.Writer) error{}
	for _, r := range results {
		if r.Path != "" && r.Op != Delete {
			stream[r.Path] = r.WriteContent
		}
	}
	names := make(map[string]string, len(paths))
	var dirTargets []string // written where a directory is
	for _, p := range paths {
		n, cerr := r.check(p)
		if cerr != nil {
			return fmt.Errorf("write: %w", cerr)
		}
		if strings.HasPrefix(path.Clean(p), journalPrefix) {
			return fmt.Errorf("write: %w %q: the name of patchbench's write journal", ErrUnsafePath, p)
		}
		if m := mode[p]; m&0o170000 == 0o120000 && content[p] != nil {
			return fmt.Errorf("write: %w %q: the patch makes it a symbolic link; symbolic links are not written", ErrUnsafePath, p)
		}
		if fi, serr := r.root.Lstat(n); serr == nil && !fi.Mode().IsRegular() {
			if !fi.IsDir() || content[p] == nil {
				return fmt.Errorf("write %s: not a regular file (%s)", p, fi.Mode().Type())
			}
			dirTargets = append(dirTargets, p)
		}
		names[p] = filepath.ToSlash(n)
	}
	removed := map[string]bool{}
	for _, p := range paths {
		if content[p] == nil {
			removed[names[p]] = true
		}
	}
	for _, p := range dirTargets {
		// A file takes a directory's place (x/y renamed to x) only when
		// the write removes every file in it, as git apply does.
		if err := r.onlyRemoved(names[p], removed); err != nil {
			return fmt.Errorf("write %s: %w", p, err)
		}
	}
	// Each step works in its target's directory, opened component by
	// component, refusing links (openDir): a directory swapped for a link
	// after the checks cannot move the writes, not even to a place inside
	// the root (os.Root follows links that stay inside, such as one to
	// .git).
	ds := &dirs{r: r}
	defer ds.close()

	// Plan: every name the write makes, decided before anything is
	// written, and the directories to make.
	j := journal{Magic: journalMagic}
	made := map[string]bool{}
	// deferred: directories made where a file this write removes is now
	// (x renamed to x/y), so made only once that file is gone.
	deferred := map[string]bool{}
	for _, p := range paths {
		n := names[p]
		s := journalStep{Dir: path.Dir(n), Target: path.Base(n)}
		if content[p] != nil {
			var missing []string
			for d := s.Dir; d != "." && !made[d]; d = path.Dir(d) {
				fi, serr := r.root.Lstat(filepath.FromSlash(d))
				if serr == nil && fi.IsDir() {
					break
				}
				if serr == nil && !removed[d] || serr != nil && !errors.Is(serr, fs.ErrNotExist) && !errors.Is(serr, syscall.ENOTDIR) {
					return fmt.Errorf("write %s: %s is not a directory", p, d)
				}
				missing = append(missing, d)
			}
			for i := len(missing) - 1; i >= 0; i-- {
				d := missing[i]
				made[d] = true
				if removed[d] || deferred[path.Dir(d)] {
					deferred[d] = true
				}
				j.Dirs = append(j.Dirs, d)
			}
		}
		var dir *os.Root // nil: the directory is made by this write
		if !made[s.Dir] {
			d, derr := ds.get(s.Dir)
			if derr != nil {
				return fmt.Errorf("write %s: %w", p, derr)
			}
			dir = d
		}
		if content[p] != nil {
			s.Tmp = freeName(dir, "."+s.Target+".patchbench-")
		}
		if dir != nil {
			if fi, serr := dir.Lstat(s.Target); serr == nil {
				s.Backup = freeName(dir, "."+s.Target+".patchbench-orig-")
				s.DirBackup = fi.IsDir()
			}
		}
		j.Steps = append(j.Steps, s)
	}
	jname, err := r.writeJournal(&j)
	if err != nil {
		return fmt.Errorf("write: journal: %w", err)
	}
	hook("journal")
	defer func() {
		if err != nil {
			// Undo with the journal, as a recovery would, then drop it.
			if rerr := r.rollBack(ds, &j); rerr == nil {
				r.root.Remove(jname)
			}
		}
	}()

	// Phase 1: the directories, then every new content in a temporary
	// file beside its target. What goes where a removed file is waits
	// for its removal.
	writeTemps := func(later bool) error {
		for _, d := range j.Dirs {
			if deferred[d] == later {
				if err := r.root.Mkdir(filepath.FromSlash(d), 0o755); err != nil {
					return fmt.Errorf("write: %w", err)
				}
			}
		}
		for i, s := range j.Steps {
			p := paths[i]
			c := content[p]
			if c == nil || deferred[s.Dir] != later {
				continue
			}
			dir, err := ds.get(s.Dir)
			if err != nil {
				return fmt.Errorf("write %s: %w", p, err)
			}
			perm := fs.FileMode(0o644)
			if st, serr := dir.Lstat(s.Target); serr == nil && st.Mode().IsRegular() {
				perm = st.Mode().Perm()
			}
			if m, ok := mode[p]; ok {
				perm = 0o644
				if m&0o111 != 0 {
					perm = 0o755
				}
			}
			if err := writeTemp(dir, s.Tmp, c, stream[p], perm); err != nil {
				return fmt.Errorf("write %s: %w", p, err)
			}
		}
		return nil
	}
	if err = writeTemps(false); err != nil {
		return err
	}
	hook("temps")

	// Phase 2: keep each original under its backup name (a hard link, so
	// that the target is never missing for a reader; a rename where links
	// cannot be made), then move the new file over it or remove it. A new
	// file goes in as a link to its temporary file, which fails if the
	// name was taken meanwhile. Removals go first, so that a directory
	// can take a removed file's place.
	n := 0
	swap := func(i int) error {
		s := &j.Steps[i]
		dir, err := ds.get(s.Dir)
		if err != nil {
			return fmt.Errorf("write %s: %w", paths[i], err)
		}
		if s.Backup != "" {
			if lerr := dir.Link(s.Target, s.Backup); lerr == nil {
				if s.Tmp == "" {
					err = dir.Remove(s.Target)
				}
			} else {
				err = dir.Rename(s.Target, s.Backup)
			}
			if err != nil {
				return fmt.Errorf("write %s: %w", paths[i], err)
			}
		}
		switch {
		case s.Tmp == "":
		case s.Backup == "":
			if err = dir.Link(s.Tmp, s.Target); err != nil && !errors.Is(err, fs.ErrExist) {
				err = dir.Rename(s.Tmp, s.Target) // no hard links here
			} else if err == nil {
				s.Linked = true
			}
		default:
			err = dir.Rename(s.Tmp, s.Target)
		}
		if err != nil {
			return fmt.Errorf("write %s: %w", paths[i], err)
		}
		n++
		hook(fmt.Sprintf("step %d", n))
		return nil
	}
	for i, s := range j.Steps {
		if s.Tmp == "" {
			if err = swap(i); err != nil {
				return err
			}
		}
	}
	if len(deferred) > 0 {
		if err = writeTemps(true); err != nil {
			return err
		}
	}
	for i, s := range j.Steps {
		if s.Tmp != "" {
			if err = swap(i); err != nil {
				return err
			}
		}
	}

	// Commit: from here a recovery completes the write.
	if err = r.root.Rename(jname, jname+journalDone); err != nil {
		return fmt.Errorf("write: journal: %w", err)
	}
	hook("commit")
	// Every file is in: the write succeeded. What the clean-up leaves (a
	// backup it could not remove) the next Recover removes; it is never
	// undone.
	r.rollForward(ds, &j, jname+journalDone)
	return nil
}

// freeName returns prefix plus a random number, a name nothing has in dir
// (nil: a directory not made yet, where every name is free). A fixed name
// (target plus a suffix) would be some user's file: the rename would
// replace it, and the clean-up delete it.
func freeName(dir *os.Root, prefix string) string {
	for {
		name := fmt.Sprintf("%s%d", prefix, rand.Uint32())
		if dir == nil {
			return name
		}
		if _, err := dir.Lstat(name); errors.Is(err, fs.ErrNotExist) {
			return name
		}
	}
}

// writeJournal writes j to a new journal file in the root and returns its
// name: written whole under a .part name, synced, then renamed, so that a
// journal found later is complete.
func (r *Root) writeJournal(j *journal) (string, error) {
	b, err := json.Marshal(j)
	if err != nil {
		return "", err
	}
	top, err := r.root.OpenRoot(".")
	if err != nil {
		return "", err
	}
	defer top.Close()
	var name string
	for {
		name = journalPrefix + fmt.Sprint(rand.Uint32())
		if _, err := top.Lstat(name); errors.Is(err, fs.ErrNotExist) {
			break
		}
	}
	if err := writeTemp(top, name+journalPart, append(b, '\n'), nil, 0o600); err != nil {
		return "", err
	}
	if err := top.Rename(name+journalPart, name); err != nil {
		top.Remove(name + journalPart)
		return "", err
	}
	if d, err := top.Open("."); err == nil {
		d.Sync() // the rename itself, before the first file is touched
		d.Close()
	}
	return name, nil
}

// rollBack undoes an uncommitted write: each new file that is ours and
// each temporary file is removed, then the directories made, then each
// backup goes back over its target (a directory made where a removed file
// was is gone by then). Every step checks what is there, so it undoes a
// write stopped anywhere, and undoing twice is undoing once.
func (r *Root) rollBack(ds *dirs, j *journal) error {
	var errs []error
	made := map[string]bool{}
	for _, d := range j.Dirs {
		made[d] = true
	}
	open := func(s journalStep) *os.Root {
		dir, err := ds.get(s.Dir)
		if err != nil {
			if !made[s.Dir] && !errors.Is(err, fs.ErrNotExist) {
				errs = append(errs, err)
			}
			return nil // a directory the write had not made yet
		}
		return dir
	}
	for i := len(j.Steps) - 1; i >= 0; i-- {
		s := j.Steps[i]
		if s.Tmp == "" {
			continue
		}
		dir := open(s)
		if dir == nil {
			continue
		}
		if s.Backup == "" {
			// A creation: the target is the new file when it is the
			// temporary file's other name, or, where no link could be
			// made, when the temporary file was renamed to it.
			tmp, terr := dir.Lstat(s.Tmp)
			if tgt, err := dir.Lstat(s.Target); err == nil && (terr == nil && os.SameFile(tmp, tgt) || errors.Is(terr, fs.ErrNotExist) && !s.Linked) {
				if err := dir.Remove(s.Target); err != nil {
					errs = append(errs, err)
				}
			}
		}
		dir.Remove(s.Tmp)
	}
	ds.close() // the directories made are removed next
	for i := len(j.Dirs) - 1; i >= 0; i-- {
		r.removeDir(j.Dirs[i])
	}
	// A directory moved aside goes back first: the backups of the files
	// removed from it are in it.
	for _, s := range j.Steps {
		if !s.DirBackup {
			continue
		}
		dir := open(s)
		if dir == nil {
			continue
		}
		if _, err := dir.Lstat(s.Backup); err != nil {
			continue // not moved yet
		}
		if fi, err := dir.Lstat(s.Target); err == nil && !fi.IsDir() {
			dir.Remove(s.Target) // the new file that took its place
		}
		if err := dir.Rename(s.Backup, s.Target); err != nil {
			errs = append(errs, fmt.Errorf("restore %s: %w", path.Join(s.Dir, s.Target), err))
		}
	}
	for i := len(j.Steps) - 1; i >= 0; i-- {
		s := j.Steps[i]
		if s.Backup == "" || s.DirBackup {
			continue
		}
		dir := open(s)
		if dir == nil {
			continue
		}
		if _, err := dir.Lstat(s.Backup); err == nil {
			if err := dir.Rename(s.Backup, s.Target); err != nil {
				errs = append(errs, fmt.Errorf("restore %s: %w", path.Join(s.Dir, s.Target), err))
				continue
			}
			dir.Remove(s.Backup) // a link to the target itself: the rename left it
		}
	}
	return errors.Join(errs...)
}

// rollForward ends a committed write: the backups and the temporary files
// kept for creations are removed, the directories a deletion or rename
// left empty too (as git apply does), then the journal.
func (r *Root) rollForward(ds *dirs, j *journal, jname string) error {
	for _, s := range j.Steps {
		dir, err := ds.get(s.Dir)
		if err != nil {
			continue // gone: a directory left empty, removed already
		}
		switch {
		case s.DirBackup:
			dir.RemoveAll(s.Backup) // the directory, with the backups of the files removed from it
		case s.Backup != "":
			dir.Remove(s.Backup)
		}
		if s.Tmp != "" {
			if tmp, err := dir.Lstat(s.Tmp); err == nil {
				if tgt, err := dir.Lstat(s.Target); err == nil && os.SameFile(tmp, tgt) {
					dir.Remove(s.Tmp)
				}
			}
		}
	}
	ds.close()
	for _, s := range j.Steps {
		if s.Tmp == "" {
			for d := s.Dir; d != "." && d != "/"; d = path.Dir(d) {
				if !r.removeDir(d) {
					break
				}
			}
		}
	}
	return r.root.Remove(jname)
}

// onlyRemoved checks that every file under the directory dir is one the
// write removes, and that it holds nothing but such files and
// directories.
func (r *Root) onlyRemoved(dir string, removed map[string]bool) error {
	f, err := r.root.Open(filepath.FromSlash(dir))
	if err != nil {
		return err
	}
	entries, err := f.ReadDir(-1)
	f.Close()
	if err != nil {
		return err
	}
	for _, e := range entries {
		p := dir + "/" + e.Name()
		switch {
		case e.IsDir():
			if err := r.onlyRemoved(p, removed); err != nil {
				return err
			}
		case !e.Type().IsRegular() || !removed[p]:
			return fmt.Errorf("%s is a directory, and %s in it stays", dir, p)
		}
	}
	return nil
}

// removeDir removes dir if it is an empty directory: a directory the
// write would have made where a removed file still is (x renamed to x/y)
// is that file, not to be removed.
func (r *Root) removeDir(dir string) bool {
	d := filepath.FromSlash(dir)
	if fi, err := r.root.Lstat(d); err != nil || !fi.IsDir() {
		return false
	}
	return r.root.Remove(d) == nil
}

// Recover finishes what a write killed midway left (see
// [Root.WriteResults]): a write that had not put in its last file is
// undone, every file back as it was; one that had is completed. The
// backups, temporary files, directories made and the journal are removed.
// It returns one line per write found, saying which. Call it under the
// root's lock ([Root.Lock]), before reading files to patch.
func (r *Root) Recover() ([]string, error) {
	top, err := r.root.Open(".")
	if err != nil {
		return nil, fmt.Errorf("recover: %w", err)
	}
	entries, err := top.ReadDir(-1)
	top.Close()
	if err != nil {
		return nil, fmt.Errorf("recover: %w", err)
	}
	var done []string
	for _, e := range entries {
		name := e.Name()
		if !strings.HasPrefix(name, journalPrefix) || !e.Type().IsRegular() {
			continue
		}
		if strings.HasSuffix(name, journalPart) {
			// Killed while the journal was written: nothing else was.
			if err := r.root.Remove(name); err != nil {
				return done, fmt.Errorf("recover: %w", err)
			}
			continue
		}
		b, err := r.ReadFileLimit(name, 64<<20)
		var j journal
		if err == nil {
			err = json.Unmarshal(b, &j)
		}
		if err == nil {
			err = j.check()
		}
		if err != nil {
			return done, fmt.Errorf("recover: journal %s: %w; left as it is", name, err)
		}
		ds := &dirs{r: r}
		if strings.HasSuffix(name, journalDone) {
			err = r.rollForward(ds, &j, name)
			done = append(done, fmt.Sprintf("completed an interrupted write of %d files (journal %s)", len(j.Steps), name))
		} else {
			if err = r.rollBack(ds, &j); err == nil {
				err = r.root.Remove(name)
			}
			done = append(done, fmt.Sprintf("undid an interrupted write of %d files (journal %s)", len(j.Steps), name))
		}
		ds.close()
		if err != nil {
			return done, fmt.Errorf("recover: journal %s: %w", name, err)
		}
	}
	return done, nil
}

// writeTemp writes data, or what stream writes when it is set, to a new
// file name in dir, synced, with mode perm.
func writeTemp(dir *os.Root, name string, data []byte, stream func(io.Writer) error, perm fs.FileMode) error {
	f, err := dir.OpenFile(name, os.O_RDWR|os.O_CREATE|os.O_EXCL, 0o600)
	if err != nil {
		return err
	}
	if stream != nil {
		bw := bufio.NewWriterSize(f, 64<<10)
		if err = stream(bw); err == nil {
			err = bw.Flush()
		}
	} else {
		_, err = f.Write(data)
	}
	if err == nil {
		err = f.Sync()
	}
	if err == nil {
		err = f.Chmod(perm) // on the descriptor: not subject to the umask, not through a path
	}
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		dir.Remove(name)
	}
	return err
}
