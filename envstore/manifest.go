package envstore

import (
	"bytes"
	"compress/gzip"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path"
	"path/filepath"
	"sort"
	"strings"
	"time"

	"golang.org/x/sys/unix"

	"github.com/patchbench/patchbench/internal/atomicfile"
)

// Entry types in a manifest.
const (
	TypeDir     = "dir"
	TypeFile    = "file"
	TypeSymlink = "symlink"
)

// Entry is one path of a stored tree.
type Entry struct {
	// Path is slash-separated and relative to the tree's root; "." is the
	// root itself.
	Path string `json:"path"`
	Type string `json:"type"`
	// Mode holds the permission bits (and setuid, setgid, sticky) of a file
	// or directory, as the setup left them.
	Mode uint32 `json:"mode,omitempty"`
	// Size and Hash (hex SHA-256) describe a file's content.
	Size int64  `json:"size,omitempty"`
	Hash string `json:"hash,omitempty"`
	// Target is a symlink's target, as it is (it may point anywhere).
	Target string `json:"target,omitempty"`
}

// exec reports whether a file's object is the executable variant.
func (e *Entry) exec() bool { return e.Mode&0o100 != 0 }

// linkable reports whether a hard link to the file's object gives the
// entry's mode less its write bits: the modes git and most tools make.
func (e *Entry) linkable() bool {
	switch e.Mode {
	case 0o644, 0o444, 0o755, 0o555:
		return true
	}
	return false
}

// Manifest is what the store keeps of one commit's environment.
type Manifest struct {
	Commit  string    `json:"commit"`
	Setup   string    `json:"setup"`
	Runner  string    `json:"runner"`
	Created time.Time `json:"created"`
	// SetupMS is how long the setup ran, and Log its output (capped by the
	// sandbox, first and last halves kept).
	SetupMS int64  `json:"setup_ms"`
	Log     string `json:"log"`
	// SourceDateEpoch is the time the setup ran at (SOURCE_DATE_EPOCH, and
	// the checkout's file times), in seconds since 1970; zero in stores
	// made before it was recorded.
	SourceDateEpoch int64 `json:"source_date_epoch,omitempty"`
	// PythonHashSeed is the PYTHONHASHSEED the setup ran with: "0" unless
	// BuildOptions.Env set it; empty when it was set empty or in stores
	// made before it was set (Python then seeds string hashes at random).
	PythonHashSeed string  `json:"python_hash_seed,omitempty"`
	Entries        []Entry `json:"entries"`
}

// Failure is the record of a setup that failed at a commit.
type Failure struct {
	Commit   string    `json:"commit"`
	Setup    string    `json:"setup"`
	Runner   string    `json:"runner"`
	Time     time.Time `json:"time"`
	ExitCode int       `json:"exit_code"`
	TimedOut bool      `json:"timed_out,omitempty"`
	Error    string    `json:"error,omitempty"`
	Log      string    `json:"log"`
}

// totals counts m's regular files and their bytes.
func (m *Manifest) totals() (files int, bytes int64) {
	for _, e := range m.Entries {
		if e.Type == TypeFile {
			files++
			bytes += e.Size
		}
	}
	return files, bytes
}

// check validates m's entries: paths inside the tree, each once, parents
// listed before children, known types, file hashes well formed.
func (m *Manifest) check() error {
	seen := make(map[string]string, len(m.Entries))
	for i, e := range m.Entries {
		where := fmt.Sprintf("entry %d (%q)", i, e.Path)
		if e.Path != "." && (e.Path == "" || path.Clean(e.Path) != e.Path || strings.HasPrefix(e.Path, "/") ||
			e.Path == ".." || strings.HasPrefix(e.Path, "../")) {
			return fmt.Errorf("%s: path outside the tree or not clean", where)
		}
		if _, dup := seen[e.Path]; dup {
			return fmt.Errorf("%s: listed twice", where)
		}
		if e.Path != "." {
			parent := path.Dir(e.Path)
			if seen[parent] != TypeDir {
				return fmt.Errorf("%s: its directory %q is not listed before it", where, parent)
			}
		}
		seen[e.Path] = e.Type
		switch e.Type {
		case TypeDir, TypeSymlink:
		case TypeFile:
			if !isHash(e.Hash) {
				return fmt.Errorf("%s: bad hash %q", where, e.Hash)
			}
			if e.Size < 0 {
				return fmt.Errorf("%s: negative size", where)
			}
		default:
			return fmt.Errorf("%s: unknown type %q", where, e.Type)
		}
	}
	if len(m.Entries) > 0 && m.Entries[0].Path != "." {
		return errors.New("the first entry is not the root")
	}
	return nil
}

// writeManifest stores m as its commit's manifest: gzip'd JSON in a temporary
// file, then the file system synced (the objects it names included), then
// renamed into place. The rename is the moment the commit becomes stored.
//
// In a store of format 2 the file lists only what differs from a base, the
// full manifest of another commit, when that is at most a quarter of the
// full file (see manifestFile); otherwise it is written in full and becomes
// the base of the manifests written after it.
func (s *Store) writeManifest(m *Manifest) error {
	sort.Slice(m.Entries, func(i, j int) bool { return entryLess(m.Entries[i].Path, m.Entries[j].Path) })
	if err := m.check(); err != nil {
		return fmt.Errorf("envstore: manifest of %s: %w", m.Commit, err)
	}
	full, err := encodeManifest(&manifestFile{Manifest: *m})
	if err != nil {
		return fmt.Errorf("envstore: manifest of %s: %w", m.Commit, err)
	}
	b, base := full, (*deltaBase)(nil)
	if s.deltas {
		base = s.manifestBase()
	}
	if base != nil && base.ref.Commit == m.Commit {
		base = nil // a manifest written again is never its own base
	}
	if base != nil {
		delta, err := encodeManifest(base.delta(m))
		if err != nil {
			return fmt.Errorf("envstore: manifest of %s: %w", m.Commit, err)
		}
		if len(delta) <= len(full)/4 {
			b = delta
		} else {
			base = nil
		}
	}
	if err := syncFS(s.dir); err != nil {
		return fmt.Errorf("envstore: manifest of %s: sync: %w", m.Commit, err)
	}
	if err := atomicfile.Write(s.manifestPath(m.Commit), b, 0o444); err != nil {
		return fmt.Errorf("envstore: manifest of %s: %w", m.Commit, err)
	}
	if s.deltas && base == nil {
		sum := sha256.Sum256(b)
		s.setManifestBase(newDeltaBase(m, hex.EncodeToString(sum[:])))
	}
	return nil
}

// encodeManifest is the gzip'd JSON of f.
func encodeManifest(f *manifestFile) ([]byte, error) {
	var buf bytes.Buffer
	zw, _ := gzip.NewWriterLevel(&buf, gzip.BestCompression)
	if err := json.NewEncoder(zw).Encode(f); err != nil {
		return nil, err
	}
	if err := zw.Close(); err != nil {
		return nil, err
	}
	return buf.Bytes(), nil
}

// manifestFile is a manifest as stored. Most of a commit's entries are
// those of the commit before it (the entries' SHA-256s are most of a
// manifest's bytes, and do not compress), so a manifest may be stored
// against a base: Base names another commit's manifest, which is stored in
// full (never itself against a base, so reading one costs at most two
// files), and the SHA-256 of its file; Entries then holds only the entries
// Base lacks or has otherwise, and Removed the paths of Base's entries this
// tree has not. The last 100 click commits' manifests take 1,195,410 bytes
// in full and 256,599 so (scripts/envstore-determinism.sh, default).
type manifestFile struct {
	Manifest
	Base    *manifestRef `json:"base,omitempty"`
	Removed []string     `json:"removed,omitempty"`
}

// manifestRef names a manifest file: its commit and the SHA-256 of its bytes.
type manifestRef struct {
	Commit string `json:"commit"`
	SHA256 string `json:"sha256"`
}

// ok reports whether r is well formed: a hash, and a commit that names a
// file in DIR/manifests.
func (r *manifestRef) ok() bool {
	return isHash(r.SHA256) && r.Commit != "" && !strings.ContainsAny(r.Commit, "/\\.")
}

// deltaBase is a full manifest that others are stored against.
type deltaBase struct {
	ref     manifestRef
	entries map[string]Entry
}

func newDeltaBase(m *Manifest, sha string) *deltaBase {
	b := &deltaBase{ref: manifestRef{Commit: m.Commit, SHA256: sha}, entries: make(map[string]Entry, len(m.Entries))}
	for _, e := range m.Entries {
		b.entries[e.Path] = e
	}
	return b
}

// delta is m stored against b.
func (b *deltaBase) delta(m *Manifest) *manifestFile {
	f := &manifestFile{Manifest: *m, Base: &b.ref}
	f.Entries = nil
	in := make(map[string]bool, len(m.Entries))
	for _, e := range m.Entries {
		in[e.Path] = true
		if be, ok := b.entries[e.Path]; !ok || be != e {
			f.Entries = append(f.Entries, e)
		}
	}
	for p := range b.entries {
		if !in[p] {
			f.Removed = append(f.Removed, p)
		}
	}
	sort.Strings(f.Removed)
	return f
}

// manifestBase returns the base this process stores manifests against:
// the last full manifest it wrote, or else the base of the manifest last
// written to the store (or that manifest, when full), so that one build
// per process (a Job's pods) shares bases too. Nil when there is none.
func (s *Store) manifestBase() *deltaBase {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.base != nil || s.baseLooked {
		return s.base
	}
	s.baseLooked = true
	ents, err := os.ReadDir(filepath.Join(s.dir, "manifests"))
	if err != nil {
		return nil
	}
	var last string
	var lastTime time.Time
	for _, e := range ents {
		c, ok := strings.CutSuffix(e.Name(), ".json.gz")
		if !ok || strings.HasPrefix(c, ".") {
			continue
		}
		if fi, err := e.Info(); err == nil && !fi.ModTime().Before(lastTime) {
			last, lastTime = c, fi.ModTime()
		}
	}
	if last == "" {
		return nil
	}
	f, id, err := s.readManifestFile(last)
	if err == nil && f.Base != nil && f.Base.ok() {
		f, id, err = s.readManifestFile(f.Base.Commit)
	}
	if err != nil || f.Base != nil {
		return nil
	}
	s.base = newDeltaBase(&f.Manifest, id.SHA256)
	return s.base
}

func (s *Store) setManifestBase(b *deltaBase) {
	s.mu.Lock()
	s.base, s.baseLooked = b, true
	s.mu.Unlock()
}

// entryLess orders paths so that a directory comes right before its
// contents: "a", "a/b", "a.txt" (compare component by component).
func entryLess(a, b string) bool {
	if a == "." || b == "." {
		return a == "." && b != "."
	}
	for {
		ha, ra, moreA := strings.Cut(a, "/")
		hb, rb, moreB := strings.Cut(b, "/")
		if ha != hb {
			return ha < hb
		}
		if !moreA || !moreB {
			return !moreA && moreB
		}
		a, b = ra, rb
	}
}

// Manifest reads the manifest of commit, a full commit id or a unique
// prefix of one. The error wraps fs.ErrNotExist if the store has no
// environment for it.
func (s *Store) Manifest(commit string) (*Manifest, error) {
	full, err := s.resolve(commit)
	if err != nil {
		return nil, err
	}
	return s.readManifest(full)
}

func (s *Store) readManifest(commit string) (*Manifest, error) {
	m, _, err := s.readManifestID(commit)
	return m, err
}

// manifestID identifies one manifest file: the SHA-256 of its bytes, and
// the stat fields that change whenever the file is replaced or written,
// so that a tree made from it can be matched to it by a stat(2).
type manifestID struct {
	SHA256  string `json:"sha256"`
	Size    int64  `json:"size"`
	Dev     uint64 `json:"dev"`
	Ino     uint64 `json:"ino"`
	MtimeNS int64  `json:"mtime_ns"`
	CtimeNS int64  `json:"ctime_ns"`
}

func (id *manifestID) setStat(st *unix.Stat_t) {
	id.Size, id.Dev, id.Ino = st.Size, st.Dev, st.Ino
	id.MtimeNS, id.CtimeNS = st.Mtim.Nano(), st.Ctim.Nano()
}

// sameFile reports whether st is the file id was taken from, unchanged.
func (id *manifestID) sameFile(st *unix.Stat_t) bool {
	return id.Size == st.Size && id.Dev == st.Dev && id.Ino == st.Ino &&
		id.MtimeNS == st.Mtim.Nano() && id.CtimeNS == st.Ctim.Nano()
}

// readManifestID reads and checks the manifest of commit (a full id) and
// says which file it read. A manifest stored against a base is read with
// its base, which must be the very file it names.
func (s *Store) readManifestID(commit string) (*Manifest, manifestID, error) {
	s.manifestReads.Add(1)
	f, id, err := s.readManifestFile(commit)
	if err != nil {
		return nil, id, err
	}
	p := s.manifestPath(commit)
	m := &f.Manifest
	if f.Base != nil {
		if m, err = s.applyBase(f); err != nil {
			return nil, id, fmt.Errorf("envstore: manifest %s: %w", p, err)
		}
	}
	if err := m.check(); err != nil {
		return nil, id, fmt.Errorf("envstore: manifest %s: %w", p, err)
	}
	return m, id, nil
}

// applyBase returns the manifest f lists against its base.
func (s *Store) applyBase(f *manifestFile) (*Manifest, error) {
	ref := f.Base
	if !ref.ok() {
		return nil, fmt.Errorf("bad base %+v", *ref)
	}
	bf, bid, err := s.readManifestFile(ref.Commit)
	switch {
	case err != nil:
		return nil, fmt.Errorf("its base: %w", err)
	case bid.SHA256 != ref.SHA256:
		return nil, fmt.Errorf("its base %s hashes to %s, not %s", s.manifestPath(ref.Commit), bid.SHA256, ref.SHA256)
	case bf.Base != nil:
		return nil, fmt.Errorf("its base %s is stored against a base itself", s.manifestPath(ref.Commit))
	}
	m := f.Manifest
	drop := make(map[string]bool, len(f.Removed)+len(f.Entries))
	for _, p := range f.Removed {
		drop[p] = true
	}
	for _, e := range f.Entries {
		drop[e.Path] = true
	}
	m.Entries = make([]Entry, 0, len(bf.Entries)+len(f.Entries))
	for _, e := range bf.Entries {
		if !drop[e.Path] {
			m.Entries = append(m.Entries, e)
		}
	}
	m.Entries = append(m.Entries, f.Entries...)
	sort.Slice(m.Entries, func(i, j int) bool { return entryLess(m.Entries[i].Path, m.Entries[j].Path) })
	return &m, nil
}

// readManifestFile decodes the manifest file of commit as it is stored
// (see manifestFile) and says which file it read.
func (s *Store) readManifestFile(commit string) (*manifestFile, manifestID, error) {
	var id manifestID
	p := s.manifestPath(commit)
	f, err := os.Open(p)
	if err != nil {
		return nil, id, fmt.Errorf("envstore: manifest of %s: %w", commit, err)
	}
	defer f.Close()
	var st unix.Stat_t
	if err := unix.Fstat(int(f.Fd()), &st); err != nil {
		return nil, id, fmt.Errorf("envstore: manifest %s: %w", p, err)
	}
	id.setStat(&st)
	h := sha256.New()
	zr, err := gzip.NewReader(io.TeeReader(f, h))
	if err != nil {
		return nil, id, fmt.Errorf("envstore: manifest %s: %w", p, err)
	}
	var mf manifestFile
	if err := json.NewDecoder(zr).Decode(&mf); err != nil {
		return nil, id, fmt.Errorf("envstore: manifest %s: %w", p, err)
	}
	// The rest (gzip's trailer) belongs to the hash too.
	if _, err := io.Copy(h, f); err != nil {
		return nil, id, fmt.Errorf("envstore: manifest %s: %w", p, err)
	}
	id.SHA256 = hex.EncodeToString(h.Sum(nil))
	if mf.Commit != commit {
		return nil, id, fmt.Errorf("envstore: manifest %s: names commit %q", p, mf.Commit)
	}
	return &mf, id, nil
}

// resolve finds the stored commit that commit names in full or by a
// unique prefix.
func (s *Store) resolve(commit string) (string, error) {
	if commit == "" || strings.ContainsAny(commit, "/\\.") {
		return "", fmt.Errorf("envstore: bad commit %q", commit)
	}
	if _, err := os.Stat(s.manifestPath(commit)); err == nil {
		return commit, nil
	}
	commits, err := s.Commits()
	if err != nil {
		return "", err
	}
	var found []string
	for _, c := range commits {
		if strings.HasPrefix(c, commit) {
			found = append(found, c)
		}
	}
	switch len(found) {
	case 1:
		return found[0], nil
	case 0:
		return "", fmt.Errorf("envstore: no environment for commit %s in %s: %w", commit, s.dir, fs.ErrNotExist)
	}
	return "", fmt.Errorf("envstore: commit %s is ambiguous in %s: %d stored commits start with it", commit, s.dir, len(found))
}

// Commits lists the stored commits, sorted.
func (s *Store) Commits() ([]string, error) {
	return s.listDir("manifests", ".json.gz")
}

// Failed lists the commits whose setup failed, sorted.
func (s *Store) Failed() ([]string, error) {
	return s.listDir("failed", ".json")
}

func (s *Store) listDir(sub, suffix string) ([]string, error) {
	ents, err := os.ReadDir(filepath.Join(s.dir, sub))
	if err != nil {
		return nil, fmt.Errorf("envstore: list %s: %w", sub, err)
	}
	var out []string
	for _, e := range ents {
		if c, ok := strings.CutSuffix(e.Name(), suffix); ok && !strings.HasPrefix(c, ".") {
			out = append(out, c)
		}
	}
	return out, nil
}

// Failure reads the failure record of commit.
func (s *Store) Failure(commit string) (*Failure, error) {
	b, err := os.ReadFile(s.failurePath(commit))
	if err != nil {
		return nil, fmt.Errorf("envstore: failure record of %s: %w", commit, err)
	}
	var f Failure
	if err := json.Unmarshal(b, &f); err != nil {
		return nil, fmt.Errorf("envstore: failure record of %s: %w", commit, err)
	}
	return &f, nil
}

func (s *Store) writeFailure(f *Failure) error {
	b, err := json.MarshalIndent(f, "", "  ")
	if err != nil {
		return err
	}
	return atomicfile.Write(s.failurePath(f.Commit), append(b, '\n'), 0o644)
}

// fileMode converts a manifest mode to an fs.FileMode's permission and
// special bits.
func fileMode(m uint32) fs.FileMode {
	mode := fs.FileMode(m & 0o777)
	if m&0o4000 != 0 {
		mode |= fs.ModeSetuid
	}
	if m&0o2000 != 0 {
		mode |= fs.ModeSetgid
	}
	if m&0o1000 != 0 {
		mode |= fs.ModeSticky
	}
	return mode
}

// manifestMode converts an fs.FileMode to a manifest mode.
func manifestMode(mode fs.FileMode) uint32 {
	m := uint32(mode.Perm())
	if mode&fs.ModeSetuid != 0 {
		m |= 0o4000
	}
	if mode&fs.ModeSetgid != 0 {
		m |= 0o2000
	}
	if mode&fs.ModeSticky != 0 {
		m |= 0o1000
	}
	return m
}
