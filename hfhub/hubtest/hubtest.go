// Package hubtest is a fake Hugging Face Hub for tests: the API paths and
// headers hfhub uses (revision listing, refs, resolve with ETag,
// X-Linked-Etag, X-Linked-Size and X-Repo-Commit, large files behind a
// redirect that honours Range), and a helper that writes rows as Parquet.
package hubtest

import (
	"bytes"
	"crypto/sha1"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"slices"
	"sort"
	"strings"
	"sync"
	"time"

	"github.com/parquet-go/parquet-go"
)

// File is one file of a repository.
type File struct {
	Path string
	Data []byte
	// LFS files are served as the Hub serves large files: a redirect
	// carrying X-Linked-Etag (sha256) and X-Linked-Size; others directly
	// with ETag (the git blob sha1).
	LFS bool
}

// Repo is a dataset repository.
type Repo struct {
	// Name is "owner/name"; Commit the 40-hex commit of main.
	Name, Commit string
	Files        []File
	// Converted are the files of refs/convert/parquet (CONFIG/SPLIT/
	// 0000.parquet), at ConvertedCommit.
	Converted       []File
	ConvertedCommit string
	// Tags are more refs; a revision equal to a tag is served as main.
	Tags []string
}

// Request is one request the server had.
type Request struct {
	// Host is the server that had it: the Hub's or, with [Server.UseCDN],
	// the CDN's host:port.
	Method, Host, Path, Range, Authorization string
}

// Server is the fake Hub.
type Server struct {
	*httptest.Server
	mu    sync.Mutex
	repos map[string]*Repo
	reqs  []Request
	// handler serves both the Hub and its CDN.
	handler http.Handler
	// CutAfter, when > 0, makes the next download of a large file stop
	// after that many bytes (the connection is dropped), once.
	CutAfter int
	// Corrupt makes large files' content differ from their ETag (one byte
	// changed); WrongSize makes X-Linked-Size one more than the listing.
	Corrupt, WrongSize bool
	// CDN, after [Server.UseCDN], is a second server (another host:port)
	// that large files are redirected to, as the Hub sends them to its CDN.
	CDN *httptest.Server
	// Token, when set, makes the dataset gated: the API and resolve paths
	// answer 401 (as the Hub does) unless Authorization is "Bearer Token".
	Token string
}

// NewServer starts a fake Hub serving repos.
func NewServer(repos ...*Repo) *Server {
	s := &Server{repos: map[string]*Repo{}}
	for _, r := range repos {
		s.repos[r.Name] = r
	}
	mux := http.NewServeMux()
	mux.HandleFunc("GET /api/datasets/{owner}/{name}/revision/{rev...}", s.revision)
	mux.HandleFunc("GET /api/datasets/{owner}/{name}/refs", s.refs)
	mux.HandleFunc("/datasets/{owner}/{name}/resolve/{rest...}", s.resolve)
	mux.HandleFunc("GET /lfs/{oid}", s.lfs)
	s.handler = http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		s.mu.Lock()
		s.reqs = append(s.reqs, Request{r.Method, r.Host, r.URL.Path, r.Header.Get("Range"), r.Header.Get("Authorization")})
		tok := s.Token
		s.mu.Unlock()
		if tok != "" && !strings.HasPrefix(r.URL.Path, "/lfs/") && r.Header.Get("Authorization") != "Bearer "+tok {
			if r.Header.Get("Authorization") != "" {
				w.Header().Set("X-Error-Message", "Invalid credentials in Authorization header")
			} else {
				w.Header().Set("X-Error-Code", "GatedRepo")
			}
			http.Error(w, `{"error":"Access denied"}`, http.StatusUnauthorized)
			return
		}
		mux.ServeHTTP(w, r)
	})
	s.Server = httptest.NewServer(s.handler)
	return s
}

// UseCDN starts [Server.CDN] and redirects large files there from now on.
func (s *Server) UseCDN() {
	s.CDN = httptest.NewServer(s.handler)
}

// Close stops the server and its CDN.
func (s *Server) Close() {
	if s.CDN != nil {
		s.CDN.Close()
	}
	s.Server.Close()
}

// Requests returns the requests so far.
func (s *Server) Requests() []Request {
	s.mu.Lock()
	defer s.mu.Unlock()
	return slices.Clone(s.reqs)
}

// Reset forgets the requests so far.
func (s *Server) Reset() {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.reqs = nil
}

func (s *Server) repo(w http.ResponseWriter, r *http.Request) *Repo {
	rp := s.repos[r.PathValue("owner")+"/"+r.PathValue("name")]
	if rp == nil {
		w.Header().Set("X-Error-Code", "RepoNotFound")
		http.Error(w, `{"error":"Repository not found"}`, http.StatusNotFound)
	}
	return rp
}

// files returns the files and commit of rev, or ok false.
func (rp *Repo) files(rev string) (files []File, commit string, ok bool) {
	switch {
	case rev == "main" || rev == rp.Commit || slices.Contains(rp.Tags, rev):
		return rp.Files, rp.Commit, true
	case rp.Converted != nil && (rev == "refs/convert/parquet" || rev == rp.ConvertedCommit):
		return rp.Converted, rp.ConvertedCommit, true
	}
	return nil, "", false
}

func (s *Server) revision(w http.ResponseWriter, r *http.Request) {
	rp := s.repo(w, r)
	if rp == nil {
		return
	}
	files, commit, ok := rp.files(r.PathValue("rev"))
	if !ok {
		w.Header().Set("X-Error-Code", "RevisionNotFound")
		http.Error(w, `{"error":"Invalid rev id"}`, http.StatusNotFound)
		return
	}
	type lfs struct {
		SHA256      string `json:"sha256"`
		Size        int    `json:"size"`
		PointerSize int    `json:"pointerSize"`
	}
	type sibling struct {
		Name   string `json:"rfilename"`
		Size   int    `json:"size,omitempty"`
		BlobID string `json:"blobId,omitempty"`
		LFS    *lfs   `json:"lfs,omitempty"`
	}
	out := struct {
		ID       string    `json:"id"`
		SHA      string    `json:"sha"`
		Siblings []sibling `json:"siblings"`
	}{ID: rp.Name, SHA: commit}
	blobs := r.URL.Query().Get("blobs") == "true"
	for _, f := range files {
		sb := sibling{Name: f.Path}
		if blobs {
			sb.Size, sb.BlobID = len(f.Data), BlobID(f.Data)
			if f.LFS {
				sb.LFS = &lfs{SHA256: SHA256(f.Data), Size: len(f.Data), PointerSize: 134}
				sb.BlobID = BlobID([]byte("pointer " + SHA256(f.Data)))
			}
		}
		out.Siblings = append(out.Siblings, sb)
	}
	json.NewEncoder(w).Encode(out)
}

func (s *Server) refs(w http.ResponseWriter, r *http.Request) {
	rp := s.repo(w, r)
	if rp == nil {
		return
	}
	type ref struct {
		Name string `json:"name"`
	}
	out := struct {
		Branches []ref `json:"branches"`
		Tags     []ref `json:"tags"`
	}{Branches: []ref{{"main"}}}
	for _, t := range rp.Tags {
		out.Tags = append(out.Tags, ref{t})
	}
	json.NewEncoder(w).Encode(out)
}

func (s *Server) resolve(w http.ResponseWriter, r *http.Request) {
	rp := s.repo(w, r)
	if rp == nil {
		return
	}
	rev, name, _ := strings.Cut(r.PathValue("rest"), "/")
	files, commit, ok := rp.files(rev)
	if !ok {
		w.Header().Set("X-Error-Code", "RevisionNotFound")
		http.Error(w, "Invalid rev id", http.StatusNotFound)
		return
	}
	i := slices.IndexFunc(files, func(f File) bool { return f.Path == name })
	if i < 0 {
		w.Header().Set("X-Error-Code", "EntryNotFound")
		http.Error(w, "Entry not found", http.StatusNotFound)
		return
	}
	f := files[i]
	w.Header().Set("X-Repo-Commit", commit)
	if f.LFS {
		size := len(f.Data)
		if s.WrongSize {
			size++
		}
		w.Header().Set("X-Linked-Etag", `"`+SHA256(f.Data)+`"`)
		w.Header().Set("X-Linked-Size", fmt.Sprint(size))
		w.Header().Set("ETag", `"`+BlobID([]byte("pointer "+SHA256(f.Data)))+`"`)
		target := "/lfs/" + SHA256(f.Data)
		if s.CDN != nil {
			target = s.CDN.URL + target
		}
		http.Redirect(w, r, target, http.StatusFound)
		return
	}
	w.Header().Set("ETag", `"`+BlobID(f.Data)+`"`)
	http.ServeContent(w, r, "", time.Time{}, bytes.NewReader(f.Data))
}

// lfs serves a large file's bytes, honouring Range.
func (s *Server) lfs(w http.ResponseWriter, r *http.Request) {
	var data []byte
	for _, rp := range s.repos {
		for _, f := range append(slices.Clone(rp.Files), rp.Converted...) {
			if f.LFS && SHA256(f.Data) == r.PathValue("oid") {
				data = f.Data
			}
		}
	}
	if data == nil {
		http.NotFound(w, r)
		return
	}
	if s.Corrupt {
		data = slices.Clone(data)
		data[len(data)/2] ^= 0xff
	}
	s.mu.Lock()
	cut := s.CutAfter
	s.CutAfter = 0
	s.mu.Unlock()
	if cut > 0 && r.Header.Get("Range") == "" {
		// Promise the whole file, send part of it, drop the connection.
		w.Header().Set("Content-Length", fmt.Sprint(len(data)))
		w.WriteHeader(http.StatusOK)
		w.Write(data[:cut])
		w.(http.Flusher).Flush()
		panic(http.ErrAbortHandler)
	}
	http.ServeContent(w, r, "", time.Time{}, bytes.NewReader(data))
}

// SHA256 is the hex sha256 of data: an LFS file's ETag.
func SHA256(data []byte) string {
	h := sha256.Sum256(data)
	return hex.EncodeToString(h[:])
}

// BlobID is git's blob id of data: a small file's ETag.
func BlobID(data []byte) string {
	h := sha1.New()
	fmt.Fprintf(h, "blob %d\x00", len(data))
	h.Write(data)
	return hex.EncodeToString(h.Sum(nil))
}

// Parquet writes rows as a Parquet file with one optional column per key:
// int64 when every value of the key is a whole number (as the Hub's
// Diff-XYZ n_added), else string, a value that is not a string written as
// its JSON (as the Hub's SWE-bench files hold FAIL_TO_PASS).
func Parquet(rows []map[string]any) ([]byte, error) {
	keys := map[string]bool{}
	for _, r := range rows {
		for k := range r {
			keys[k] = true
		}
	}
	names := make([]string, 0, len(keys))
	for k := range keys {
		names = append(names, k)
	}
	sort.Strings(names)
	isInt := map[string]bool{}
	group := parquet.Group{}
	for _, k := range names {
		isInt[k] = true
		for _, r := range rows {
			if f, ok := r[k].(float64); r[k] != nil && (!ok || f != float64(int64(f))) {
				isInt[k] = false
			}
		}
		group[k] = parquet.Optional(parquet.String())
		if isInt[k] {
			group[k] = parquet.Optional(parquet.Int(64))
		}
	}
	schema := parquet.NewSchema("row", group)
	var buf bytes.Buffer
	w := parquet.NewWriter(&buf, schema)
	// The schema's columns are in name order, as names are.
	for _, r := range rows {
		row := make(parquet.Row, len(names))
		for i, k := range names {
			v, ok := r[k]
			if !ok || v == nil {
				row[i] = parquet.NullValue().Level(0, 0, i)
				continue
			}
			if isInt[k] {
				row[i] = parquet.Int64Value(int64(v.(float64))).Level(0, 1, i)
				continue
			}
			s, isStr := v.(string)
			if !isStr {
				b, err := json.Marshal(v)
				if err != nil {
					return nil, err
				}
				s = string(b)
			}
			row[i] = parquet.ByteArrayValue([]byte(s)).Level(0, 1, i)
		}
		if _, err := w.WriteRows([]parquet.Row{row}); err != nil {
			return nil, err
		}
	}
	if err := w.Close(); err != nil {
		return nil, err
	}
	return buf.Bytes(), nil
}

// ParquetOfJSONL is [Parquet] of a JSON Lines text.
func ParquetOfJSONL(jsonl []byte) ([]byte, error) {
	var rows []map[string]any
	dec := json.NewDecoder(bytes.NewReader(jsonl))
	for dec.More() {
		var m map[string]any
		if err := dec.Decode(&m); err != nil {
			return nil, err
		}
		rows = append(rows, m)
	}
	return Parquet(rows)
}
