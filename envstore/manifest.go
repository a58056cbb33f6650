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
func (s *Store) writeManifest(m *Manifest) error {
	sort.Slice(m.Entries, func(i, j int) bool { return entryLess(m.Entries[i].Path, m.Entries[j].Path) })
	if err := m.check(); err != nil {
		return fmt.Errorf("envstore: manifest of %s: %w", m.Commit, err)
	}
	var buf bytes.Buffer
	zw, _ := gzip.NewWriterLevel(&buf, gzip.BestSpeed)
	if err := json.NewEncoder(zw).Encode(m); err != nil {
		return fmt.Errorf("envstore: manifest of %s: %w", m.Commit, err)
	}
	if err := zw.Close(); err != nil {
		return fmt.Errorf("envstore: manifest of %s: %w", m.Commit, err)
	}
	if err := syncFS(s.dir); err != nil {
		return fmt.Errorf("envstore: manifest of %s: sync: %w", m.Commit, err)
	}
	if err := atomicfile.Write(s.manifestPath(m.Commit), buf.Bytes(), 0o444); err != nil {
		return fmt.Errorf("envstore: manifest of %s: %w", m.Commit, err)
	}
	return nil
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
// says which file it read.
func (s *Store) readManifestID(commit string) (*Manifest, manifestID, error) {
	var id manifestID
	s.manifestReads.Add(1)
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
	var m Manifest
	if err := json.NewDecoder(zr).Decode(&m); err != nil {
		return nil, id, fmt.Errorf("envstore: manifest %s: %w", p, err)
	}
	// The rest (gzip's trailer) belongs to the hash too.
	if _, err := io.Copy(h, f); err != nil {
		return nil, id, fmt.Errorf("envstore: manifest %s: %w", p, err)
	}
	id.SHA256 = hex.EncodeToString(h.Sum(nil))
	if m.Commit != commit {
		return nil, id, fmt.Errorf("envstore: manifest %s: names commit %q", p, m.Commit)
	}
	if err := m.check(); err != nil {
		return nil, id, fmt.Errorf("envstore: manifest %s: %w", p, err)
	}
	return &m, id, nil
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
