package envstore

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"runtime"
	"sort"
	"strings"
	"sync"
	"syscall"
)

// VerifyReport is what Verify found.
type VerifyReport struct {
	Objects   int `json:"objects"`
	Manifests int `json:"manifests"`
	// Temporary counts files and directories in DIR/tmp, as a killed
	// build leaves them; they are not problems (gc removes them).
	Temporary int `json:"temporary"`
	// Problems names each problem: a damaged or missing object, a
	// manifest that does not read.
	Problems []string `json:"problems"`
}

// OK reports whether Verify found no problem.
func (r *VerifyReport) OK() bool { return len(r.Problems) == 0 }

// Verify re-hashes every object (workers at a time; zero means one per CPU)
// and checks its name, mode and size, and reads every manifest and checks
// that each object it names exists with the size it records.
func (s *Store) Verify(ctx context.Context, workers int) (*VerifyReport, error) {
	rep := &VerifyReport{Problems: []string{}}
	var mu sync.Mutex
	problem := func(format string, args ...any) {
		mu.Lock()
		rep.Problems = append(rep.Problems, fmt.Sprintf(format, args...))
		mu.Unlock()
	}
	objects, err := s.objects(problem)
	if err != nil {
		return nil, err
	}
	rep.Objects = len(objects)
	damaged := map[string]bool{}
	if workers <= 0 {
		workers = runtime.GOMAXPROCS(0)
	}
	// The content's size of each object, compressed ones included.
	sizes := make([]int64, len(objects))
	work := make(chan int)
	var wg sync.WaitGroup
	for range workers {
		wg.Go(func() {
			buf := make([]byte, 256<<10)
			for i := range work {
				o := objects[i]
				if want := o.wantMode(); o.mode != want {
					problem("object %s: mode %04o, not read-only %04o: a write may have reached it", o.path, o.mode, want)
				}
				h, n, err := o.rehash(buf)
				sizes[i] = n
				switch {
				case err != nil:
					problem("object %s: %v", o.path, err)
					// Its content's size is not known.
					sizes[i] = -1
				case h != o.hash:
					problem("object %s: content (%d bytes) hashes to %s", o.path, n, h)
				default:
					continue
				}
				mu.Lock()
				damaged[o.path] = true
				mu.Unlock()
			}
		})
	}
	for i := range objects {
		if ctx.Err() != nil {
			break
		}
		work <- i
	}
	close(work)
	wg.Wait()
	if err := ctx.Err(); err != nil {
		return nil, fmt.Errorf("envstore: verify: %w", err)
	}
	// Each object by its key, its loose form where it has both (a
	// restore that made it loose and was stopped before it removed the
	// compressed one).
	byName := make(map[string]object, len(objects))
	for i, o := range objects {
		if prev, ok := byName[o.key()]; ok && !prev.compressed {
			continue
		}
		o.size = sizes[i]
		byName[o.key()] = o
	}
	commits, err := s.Commits()
	if err != nil {
		return nil, err
	}
	rep.Manifests = len(commits)
	for _, c := range commits {
		m, err := s.readManifest(c)
		if err != nil {
			problem("%v", err)
			continue
		}
		for _, e := range m.Entries {
			if e.Type != TypeFile {
				continue
			}
			o, ok := byName[objectKey(e.Hash, e.exec())]
			switch {
			case !ok:
				problem("manifest %s: %s: object %s is missing", c, e.Path, s.objectPath(e.Hash, e.exec()))
			case o.size != e.Size && o.size >= 0:
				problem("manifest %s: %s: object %s has %d bytes, the manifest says %d", c, e.Path, o.path, o.size, e.Size)
			case damaged[o.path]:
				// Named per commit too, so a user sees which commits it
				// breaks.
				problem("manifest %s: %s: object %s is damaged", c, e.Path, o.path)
			}
		}
	}
	s.brokenTrees(problem, damaged)
	if ents, err := os.ReadDir(filepath.Join(s.dir, "tmp")); err == nil {
		rep.Temporary = len(ents)
	}
	sort.Strings(rep.Problems)
	return rep, nil
}

// brokenTrees returns the commits whose materialized tree does not match
// its manifest, telling problem (if not nil) why: each entry must be there
// with its type, each hard-linked file the very object (the same inode)
// and not one of the damaged objects, each copied file the right bytes,
// and nothing more. GC removes a broken tree that no mount uses, and the
// next overlay restore makes it again.
func (s *Store) brokenTrees(problem func(string, ...any), damaged map[string]bool) []string {
	report := func(format string, args ...any) {
		if problem != nil {
			problem(format, args...)
		}
	}
	trees, err := os.ReadDir(filepath.Join(s.dir, "trees"))
	if err != nil {
		if !errors.Is(err, fs.ErrNotExist) {
			report("trees: %v", err)
		}
		return nil
	}
	var broken []string
	buf := make([]byte, 256<<10)
	for _, t := range trees {
		c := t.Name()
		if strings.HasPrefix(c, ".") {
			continue // a tree moved aside, which GC removes once unused
		}
		dir := s.treePath(c)
		m, id, err := s.readManifestID(c)
		if err != nil {
			report("tree %s: no manifest reads for it: %v", s.treeDir(c), err)
			broken = append(broken, c)
			continue
		}
		bad := func(format string, args ...any) {
			report("tree %s: "+format, append([]any{dir}, args...)...)
			broken = append(broken, c)
		}
		var mk treeMarker
		if b, err := os.ReadFile(filepath.Join(s.treeDir(c), treeMarkerName)); err != nil {
			bad("no completion marker (%v)", err)
			continue
		} else if json.Unmarshal(b, &mk) != nil || mk.Commit != c || mk.Manifest.SHA256 != id.SHA256 {
			bad("its completion marker does not name the manifest %s", s.manifestPath(c))
			continue
		}
		want := map[string]bool{}
		for _, e := range m.Entries {
			want[e.Path] = true
		}
		ok := true
		for _, e := range m.Entries {
			p := filepath.Join(dir, filepath.FromSlash(e.Path))
			fi, err := os.Lstat(p)
			if err != nil {
				bad("%s: %v", e.Path, err)
				ok = false
				break
			}
			switch e.Type {
			case TypeDir:
				ok = fi.IsDir()
			case TypeSymlink:
				tgt, err := os.Readlink(p)
				ok = err == nil && tgt == e.Target
			case TypeFile:
				if !fi.Mode().IsRegular() || fi.Size() != e.Size {
					ok = false
				} else if obj, err := os.Stat(s.objectPath(e.Hash, e.exec())); err == nil && os.SameFile(fi, obj) {
					ok = !damaged[s.objectPath(e.Hash, e.exec())]
				} else {
					h, n, err := hashObject(p, buf)
					ok = err == nil && n == e.Size && h == e.Hash
				}
			}
			if !ok {
				bad("%s is not what the manifest says", e.Path)
				break
			}
		}
		if !ok {
			continue
		}
		// Nothing the manifest does not name.
		filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
			if err != nil || !ok {
				return nil
			}
			rel, _ := filepath.Rel(dir, p)
			if !want[filepath.ToSlash(rel)] {
				bad("%s is not in the manifest", filepath.ToSlash(rel))
				ok = false
			}
			return nil
		})
	}
	return broken
}

// object is one file in DIR/objects.
type object struct {
	path string
	hash string
	exec bool
	// compressed: the file is the object compressed (compress.go); size
	// is then the file's, not the content's.
	compressed bool
	size       int64
	mode       fs.FileMode
	nlink      uint64
}

func objectKey(hash string, exec bool) string {
	if exec {
		return hash + ".x"
	}
	return hash
}

func (o object) key() string { return objectKey(o.hash, o.exec) }

// wantMode is the mode an object file must have: its variant's, or 0444
// compressed (the variant is in its name).
func (o object) wantMode() fs.FileMode {
	if o.compressed {
		return 0o444
	}
	return objectMode(o.exec)
}

// rehash returns the SHA-256 and size of the object's content.
func (o object) rehash(buf []byte) (string, int64, error) {
	return readObject(nil, o.path, o.compressed, buf)
}

// objects lists the store's objects; files in DIR/objects that cannot be
// objects are reported to problem, if it is not nil.
func (s *Store) objects(problem func(string, ...any)) ([]object, error) {
	root := filepath.Join(s.dir, "objects")
	var out []object
	err := filepath.WalkDir(root, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() {
			return nil
		}
		hash, exec, compressed, ok := parseObjectName(d.Name())
		if !ok || filepath.Base(filepath.Dir(p)) != hash[:2] {
			if problem != nil {
				problem("object %s: not an object name", p)
			}
			return nil
		}
		var st syscall.Stat_t
		if err := syscall.Lstat(p, &st); err != nil {
			return err
		}
		if st.Mode&syscall.S_IFMT != syscall.S_IFREG {
			if problem != nil {
				problem("object %s: not a regular file", p)
			}
			return nil
		}
		out = append(out, object{path: p, hash: hash, exec: exec, compressed: compressed, size: st.Size,
			mode: fs.FileMode(st.Mode & 0o7777), nlink: uint64(st.Nlink)})
		return nil
	})
	if err != nil {
		return nil, fmt.Errorf("envstore: list objects: %w", err)
	}
	return out, nil
}

// Stats are the store's totals.
type Stats struct {
	// Commits is the number of stored environments; Files and
	// LogicalBytes sum their regular files and sizes (what the trees
	// would take as copies).
	Commits      int   `json:"commits"`
	Files        int64 `json:"files"`
	LogicalBytes int64 `json:"logical_bytes"`
	// StoredBytes is what the store takes: objects (loose and
	// compressed, as they are on disk), manifests and the git map (file
	// sizes; DIR/tmp not counted).
	StoredBytes   int64 `json:"stored_bytes"`
	Objects       int   `json:"objects"`
	ObjectBytes   int64 `json:"object_bytes"`
	ManifestBytes int64 `json:"manifest_bytes"`
	// Compressed counts the objects stored compressed, and
	// UncompressedBytes is StoredBytes with every object whole: what
	// dedup alone keeps, before compression.
	Compressed        int   `json:"compressed_objects"`
	UncompressedBytes int64 `json:"uncompressed_stored_bytes"`
	Failed            int   `json:"failed"`
}

// Ratio is LogicalBytes / StoredBytes (0 for an empty store).
func (st *Stats) Ratio() float64 { return ratio(st.LogicalBytes, st.StoredBytes) }

// DedupRatio is LogicalBytes / UncompressedBytes: what dedup alone gives.
func (st *Stats) DedupRatio() float64 { return ratio(st.LogicalBytes, st.UncompressedBytes) }

func ratio(a, b int64) float64 {
	if b == 0 {
		return 0
	}
	return float64(a) / float64(b)
}

// Stats reads every manifest and lists every object.
func (s *Store) Stats() (*Stats, error) {
	st := &Stats{}
	commits, err := s.Commits()
	if err != nil {
		return nil, err
	}
	sizes := map[string]int64{} // object key -> content size
	for _, c := range commits {
		m, err := s.readManifest(c)
		if err != nil {
			return nil, err
		}
		for _, e := range m.Entries {
			if e.Type == TypeFile {
				sizes[objectKey(e.Hash, e.exec())] = e.Size
			}
		}
		st.Commits++
		files, bytes := m.totals()
		st.Files += int64(files)
		st.LogicalBytes += bytes
		if fi, err := os.Stat(s.manifestPath(c)); err == nil {
			st.ManifestBytes += fi.Size()
		}
	}
	objects, err := s.objects(nil)
	if err != nil {
		return nil, err
	}
	loose := map[string]bool{}
	for _, o := range objects {
		if !o.compressed {
			loose[o.key()] = true
		}
	}
	var whole int64
	var buf []byte
	for _, o := range objects {
		st.ObjectBytes += o.size
		if !o.compressed {
			st.Objects++
			whole += o.size
			continue
		}
		// Both forms (a restore killed before it removed the compressed
		// one, which GC removes): one object, its bytes on disk counted.
		if loose[o.key()] {
			continue
		}
		st.Objects++
		st.Compressed++
		n, ok := sizes[o.key()]
		if !ok { // no manifest names it: decompress to count
			if buf == nil {
				buf = make([]byte, 256<<10)
			}
			_, n, _ = readObject(nil, o.path, true, buf)
		}
		whole += n
	}
	st.StoredBytes = st.ObjectBytes + st.ManifestBytes
	if fi, err := os.Stat(filepath.Join(s.dir, "gitmap")); err == nil {
		st.StoredBytes += fi.Size()
	}
	st.UncompressedBytes = st.StoredBytes - st.ObjectBytes + whole
	failed, err := s.Failed()
	if err != nil {
		return nil, err
	}
	st.Failed = len(failed)
	return st, nil
}

// GCResult says what GC removed.
type GCResult struct {
	Objects   int   `json:"objects"`
	Bytes     int64 `json:"bytes"`
	Temporary int   `json:"temporary"`
	// Trees counts materialized trees removed: those of commits no longer
	// stored that no overlay restore uses.
	Trees int `json:"trees"`
	// Compressed counts the loose objects compressed (their link count
	// had fallen to one: no tree or restore uses them), and SavedBytes
	// what that saved.
	Compressed int   `json:"compressed"`
	SavedBytes int64 `json:"saved_bytes"`
}

// GC removes the objects no manifest names, and everything in DIR/tmp, and
// compresses the loose objects that nothing else links (see compress.go;
// a store of format 2 becomes format 3 first). It holds DIR/locks/gc.lock
// exclusively, so it waits for running builds, materializations and
// restores that make files, and they wait for it (see the package
// documentation). A manifest that does not read stops it before it
// removes anything.
func (s *Store) GC(ctx context.Context) (*GCResult, error) {
	l, err := s.acquire(ctx, "gc.lock", false)
	if err != nil {
		return nil, err
	}
	defer l.release()
	commits, err := s.Commits()
	if err != nil {
		return nil, err
	}
	used := map[string]bool{}
	for _, c := range commits {
		m, err := s.readManifest(c)
		if err != nil {
			return nil, fmt.Errorf("envstore: gc: %w (nothing removed)", err)
		}
		for _, e := range m.Entries {
			if e.Type == TypeFile {
				used[objectKey(e.Hash, e.exec())] = true
			}
		}
	}
	objects, err := s.objects(nil)
	if err != nil {
		return nil, err
	}
	res := &GCResult{}
	loose := map[string]bool{}
	for _, o := range objects {
		if !o.compressed {
			loose[o.key()] = true
		}
	}
	for _, o := range objects {
		// A compressed object whose loose form is there too (a
		// restore stopped before it removed it) is the one removed.
		if used[o.key()] && !(o.compressed && loose[o.key()]) {
			continue
		}
		if err := os.Remove(o.path); err != nil {
			return res, fmt.Errorf("envstore: gc: %w", err)
		}
		res.Objects++
		res.Bytes += o.size
	}
	// Overlay restores whose run was killed, then the materialized trees
	// of commits no longer stored that no mount uses.
	if _, err := s.ReleaseStale(ctx); err != nil {
		return res, fmt.Errorf("envstore: gc: %w", err)
	}
	recs, err := s.mountRecords()
	if err != nil {
		return res, fmt.Errorf("envstore: gc: %w", err)
	}
	inUse := map[string]bool{}
	for _, r := range recs {
		inUse[r.Commit] = true
	}
	stored := map[string]bool{}
	for _, c := range commits {
		stored[c] = true
	}
	trees, err := os.ReadDir(filepath.Join(s.dir, "trees"))
	if err != nil && !errors.Is(err, fs.ErrNotExist) {
		return res, fmt.Errorf("envstore: gc: %w", err)
	}
	broken := map[string]bool{}
	for _, c := range s.brokenTrees(nil, nil) {
		broken[c] = true
	}
	for _, t := range trees {
		// A tree moved aside (.old-<commit>-<random>) is kept while a
		// mount of its commit may use it.
		c, old := strings.CutPrefix(t.Name(), ".old-")
		if old {
			c = c[:max(strings.LastIndexByte(c, '-'), 0)]
		}
		if inUse[c] || !old && stored[c] && !broken[c] {
			continue
		}
		if err := removeAll(filepath.Join(s.dir, "trees", t.Name())); err != nil {
			return res, fmt.Errorf("envstore: gc: %w", err)
		}
		res.Trees++
	}
	// Everything in tmp, and the temporary files of atomic writes that a
	// killed build left beside manifests and failure records.
	for _, sub := range []string{"tmp", "manifests", "failed"} {
		dir := filepath.Join(s.dir, sub)
		ents, err := os.ReadDir(dir)
		if err != nil {
			return res, fmt.Errorf("envstore: gc: %w", err)
		}
		for _, e := range ents {
			if sub != "tmp" && !strings.HasPrefix(e.Name(), ".") {
				continue
			}
			if err := removeAll(filepath.Join(dir, e.Name())); err != nil {
				return res, fmt.Errorf("envstore: gc: %w", err)
			}
			res.Temporary++
		}
	}
	// Last, once the trees that went no longer link their objects.
	if err := s.upgradeFormat(); err != nil {
		return res, fmt.Errorf("envstore: gc: %w", err)
	}
	if s.compress.Load() {
		if objects, err = s.objects(nil); err != nil {
			return res, err
		}
		n, saved, err := s.compressLoose(ctx, objects, used)
		res.Compressed, res.SavedBytes = n, saved
		if err != nil {
			return res, fmt.Errorf("envstore: gc: compress: %w", err)
		}
	}
	return res, nil
}

// Info describes one commit of the store for listings.
type Info struct {
	Commit  string `json:"commit"`
	Status  string `json:"status"` // "stored" or "failed"
	Files   int    `json:"files,omitempty"`
	Bytes   int64  `json:"bytes,omitempty"`
	Setup   string `json:"setup"`
	Created string `json:"created"`
	// ExitCode is a failed setup's exit status.
	ExitCode int `json:"exit_code,omitempty"`
}

// List describes every stored and every failed commit, stored first.
func (s *Store) List() ([]Info, error) {
	var out []Info
	commits, err := s.Commits()
	if err != nil {
		return nil, err
	}
	for _, c := range commits {
		m, err := s.readManifest(c)
		if err != nil {
			return nil, err
		}
		in := Info{Commit: c, Status: "stored", Setup: m.Setup, Created: m.Created.Format("2006-01-02T15:04:05Z")}
		in.Files, in.Bytes = m.totals()
		out = append(out, in)
	}
	failed, err := s.Failed()
	if err != nil {
		return nil, err
	}
	for _, c := range failed {
		f, err := s.Failure(c)
		if err != nil {
			return nil, err
		}
		out = append(out, Info{Commit: c, Status: "failed", Setup: f.Setup, Created: f.Time.Format("2006-01-02T15:04:05Z"), ExitCode: f.ExitCode})
	}
	return out, nil
}
