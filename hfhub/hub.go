package hfhub

import (
	"context"
	"crypto/sha1"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"hash"
	"io"
	"net/http"
	"net/url"
	"os"
	"path"
	"path/filepath"
	"regexp"
	"sort"
	"strconv"
	"strings"

	"github.com/patchbench/patchbench/internal/atomicfile"
	"github.com/patchbench/patchbench/internal/flock"
)

// DefaultEndpoint is the Hub's address when HF_ENDPOINT is not set.
const DefaultEndpoint = "https://huggingface.co"

// convertedRevision is the branch where the Hub keeps its own Parquet
// conversion of a dataset published in another format.
const convertedRevision = "refs/convert/parquet"

// Client downloads datasets from one Hub into one cache.
type Client struct {
	// Endpoint is the Hub's base URL (HF_ENDPOINT).
	Endpoint string
	// Token, when set, is sent as "Authorization: Bearer TOKEN" (HF_TOKEN).
	Token string
	// Cache is the cache's root directory.
	Cache string
	// Offline answers from the cache only (HF_HUB_OFFLINE).
	Offline bool
	// HTTP is the client used; nil means http.DefaultClient.
	HTTP *http.Client
	// Progress receives a bar per download (Terminal) or a plain line at
	// the start and end of each; nil shows nothing.
	Progress io.Writer
	Terminal bool
}

// FromEnv returns a client set up as the Hub's own tools are, from getenv
// (os.Getenv in a program): HF_ENDPOINT, HF_TOKEN (or the older
// HUGGING_FACE_HUB_TOKEN), HF_HUB_OFFLINE, and the cache under HF_HOME
// ($HF_HOME/patchbench), else under the user's cache directory
// (~/.cache/patchbench).
func FromEnv(getenv func(string) string) (*Client, error) {
	c := &Client{Endpoint: strings.TrimRight(getenv("HF_ENDPOINT"), "/")}
	if c.Endpoint == "" {
		c.Endpoint = DefaultEndpoint
	}
	c.Token = getenv("HF_TOKEN")
	if c.Token == "" {
		c.Token = getenv("HUGGING_FACE_HUB_TOKEN")
	}
	switch strings.ToLower(getenv("HF_HUB_OFFLINE")) {
	case "1", "true", "yes", "on":
		c.Offline = true
	}
	if home := getenv("HF_HOME"); home != "" {
		c.Cache = filepath.Join(home, "patchbench")
		return c, nil
	}
	base := getenv("XDG_CACHE_HOME")
	if base == "" {
		home := getenv("HOME")
		if home == "" {
			return nil, errors.New("hfhub: no cache directory: set HF_HOME or HOME")
		}
		base = filepath.Join(home, ".cache")
	}
	c.Cache = filepath.Join(base, "patchbench")
	return c, nil
}

// Dataset is a split resolved to files in the cache.
type Dataset struct {
	Ref
	// Commit is the commit the files come from.
	Commit string
	// Files are the split's Parquet files in the cache, in the Hub's
	// order; Path is the only one, or their directory when there are
	// several.
	Files []string
	Path  string
	// Source is the revision the files were listed at: Ref's revision, or
	// refs/convert/parquet for a dataset the Hub converted.
	Source string
}

// manifest is what the cache keeps of a listing, so that offline use
// knows the splits and each file's size and ETag.
type manifest struct {
	Repo   string                `json:"repo"`
	Commit string                `json:"commit"`
	Source string                `json:"source"`
	Splits map[string][]fileInfo `json:"splits"`
}

type fileInfo struct {
	Path string `json:"path"`
	Size int64  `json:"size"`
	// ETag is the LFS object's sha256 or the git blob's sha1, as the Hub
	// sends it in X-Linked-Etag or ETag.
	ETag string `json:"etag"`
}

// NotFoundError is a dataset, revision or split that does not exist.
type NotFoundError struct{ Msg string }

func (e *NotFoundError) Error() string { return e.Msg }

// Resolve returns the files of ref's split, downloading what the cache
// lacks (or, offline, what the cache holds).
func (c *Client) Resolve(ctx context.Context, ref Ref) (*Dataset, error) {
	repoDir := filepath.Join(c.Cache, "datasets", filepath.FromSlash(ref.Repo))
	var m *manifest
	var err error
	if c.Offline {
		m, err = c.cached(repoDir, ref)
	} else {
		m, err = c.list(ctx, repoDir, ref)
	}
	if err != nil {
		return nil, err
	}
	split, files, err := pickSplit(ref, m)
	if err != nil {
		return nil, err
	}
	splitDir := filepath.Join(repoDir, m.Commit, filepath.FromSlash(split))
	d := &Dataset{Ref: ref, Commit: m.Commit, Source: m.Source}
	d.Split = split
	for i, f := range files {
		local := filepath.Join(splitDir, fmt.Sprintf("%05d.parquet", i))
		if st, err := os.Stat(local); err == nil && st.Size() == f.Size {
			d.Files = append(d.Files, local)
			continue
		}
		if c.Offline {
			return nil, &NotFoundError{fmt.Sprintf("hfhub: offline (HF_HUB_OFFLINE): %s of %s@%s is not in the cache %s", f.Path, ref.Repo, m.Commit, c.Cache)}
		}
		if err := c.download(ctx, ref.Repo, m.Commit, f, local, filepath.Join(repoDir, m.Commit, "download.lock")); err != nil {
			return nil, err
		}
		d.Files = append(d.Files, local)
	}
	d.Path = splitDir
	if len(d.Files) == 1 {
		d.Path = d.Files[0]
	}
	return d, nil
}

// pickSplit chooses ref's split from m: the one named, else the only one,
// else test.
func pickSplit(ref Ref, m *manifest) (string, []fileInfo, error) {
	names := make([]string, 0, len(m.Splits))
	for k := range m.Splits {
		names = append(names, k)
	}
	sort.Strings(names)
	split := ref.Split
	if split == "" {
		switch {
		case len(names) == 1:
			split = names[0]
		case m.Splits["test"] != nil:
			split = "test"
		default:
			return "", nil, &NotFoundError{fmt.Sprintf("hfhub: %s@%s has several splits; name one (%s:SPLIT): %s", ref.Repo, m.Commit[:min(12, len(m.Commit))], ref.Repo, strings.Join(names, ", "))}
		}
	}
	files, ok := m.Splits[split]
	if !ok {
		return "", nil, &NotFoundError{fmt.Sprintf("hfhub: %s has no split %q; its splits: %s", ref.Repo, split, strings.Join(names, ", "))}
	}
	return split, files, nil
}

var commitRE = regexp.MustCompile(`^[0-9a-f]{40}$`)

// refFile is where the cache records the commit a revision named.
func refFile(repoDir, rev string) string {
	return filepath.Join(repoDir, "refs", url.PathEscape(rev))
}

// cached reads ref's listing from the cache.
func (c *Client) cached(repoDir string, ref Ref) (*manifest, error) {
	commit := ref.rev()
	if !commitRE.MatchString(commit) {
		b, err := os.ReadFile(refFile(repoDir, commit))
		if err != nil {
			return nil, &NotFoundError{fmt.Sprintf("hfhub: offline (HF_HUB_OFFLINE): %s@%s is not in the cache %s; run once online to download it", ref.Repo, commit, c.Cache)}
		}
		commit = strings.TrimSpace(string(b))
	}
	b, err := os.ReadFile(filepath.Join(repoDir, commit, "manifest.json"))
	if err != nil {
		return nil, fmt.Errorf("hfhub: offline (HF_HUB_OFFLINE): %s@%s is not in the cache %s; run once online to download it", ref.Repo, commit, c.Cache)
	}
	var m manifest
	if err := json.Unmarshal(b, &m); err != nil {
		return nil, fmt.Errorf("hfhub: cache %s: %w", filepath.Join(repoDir, commit, "manifest.json"), err)
	}
	return &m, nil
}

// revisionInfo is the part of GET /api/datasets/REPO/revision/REV
// (?blobs=true) used here.
type revisionInfo struct {
	SHA      string `json:"sha"`
	Siblings []struct {
		Name   string `json:"rfilename"`
		Size   int64  `json:"size"`
		BlobID string `json:"blobId"`
		LFS    *struct {
			SHA256 string `json:"sha256"`
			Size   int64  `json:"size"`
		} `json:"lfs"`
	} `json:"siblings"`
}

// list asks the Hub for ref's files and records the listing in the cache.
// A dataset without Parquet files of its own is listed at the Hub's
// conversion branch.
func (c *Client) list(ctx context.Context, repoDir string, ref Ref) (*manifest, error) {
	m, err := c.listAt(ctx, ref, ref.rev())
	if err != nil {
		return nil, err
	}
	if len(m.Splits) == 0 && ref.Revision == "" {
		conv, err := c.listAt(ctx, ref, convertedRevision)
		var nf *NotFoundError
		if err != nil && !errors.As(err, &nf) {
			return nil, err
		}
		if err == nil {
			m = conv
		}
	}
	if len(m.Splits) == 0 {
		return nil, &NotFoundError{fmt.Sprintf("hfhub: %s@%s has no Parquet files (and the Hub has no Parquet conversion of it)", ref.Repo, ref.rev())}
	}
	b, err := json.MarshalIndent(m, "", "  ")
	if err != nil {
		return nil, err
	}
	if err := os.MkdirAll(filepath.Join(repoDir, m.Commit), 0o755); err != nil {
		return nil, fmt.Errorf("hfhub: cache: %w", err)
	}
	if err := atomicfile.Write(filepath.Join(repoDir, m.Commit, "manifest.json"), b, 0o644); err != nil {
		return nil, fmt.Errorf("hfhub: cache: %w", err)
	}
	if err := os.MkdirAll(filepath.Join(repoDir, "refs"), 0o755); err != nil {
		return nil, fmt.Errorf("hfhub: cache: %w", err)
	}
	if err := atomicfile.Write(refFile(repoDir, ref.rev()), []byte(m.Commit+"\n"), 0o644); err != nil {
		return nil, fmt.Errorf("hfhub: cache: %w", err)
	}
	return m, nil
}

func (c *Client) listAt(ctx context.Context, ref Ref, rev string) (*manifest, error) {
	u := fmt.Sprintf("%s/api/datasets/%s/revision/%s?blobs=true", c.Endpoint, ref.Repo, url.PathEscape(rev))
	resp, err := c.do(ctx, http.MethodGet, u, nil, false)
	if err != nil {
		return nil, err
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		return nil, c.statusError(ctx, resp, ref, rev)
	}
	var info revisionInfo
	if err := json.NewDecoder(io.LimitReader(resp.Body, 256<<20)).Decode(&info); err != nil {
		return nil, fmt.Errorf("hfhub: %s: %w", u, err)
	}
	if !commitRE.MatchString(info.SHA) {
		return nil, fmt.Errorf("hfhub: %s: no commit sha in the answer", u)
	}
	m := &manifest{Repo: ref.Repo, Commit: info.SHA, Source: rev, Splits: map[string][]fileInfo{}}
	for _, s := range info.Siblings {
		split := splitOf(s.Name, rev == convertedRevision)
		if split == "" {
			continue
		}
		f := fileInfo{Path: s.Name, Size: s.Size, ETag: s.BlobID}
		if s.LFS != nil {
			f.Size, f.ETag = s.LFS.Size, s.LFS.SHA256
		}
		m.Splits[split] = append(m.Splits[split], f)
	}
	for _, files := range m.Splits {
		sort.Slice(files, func(i, j int) bool { return files[i].Path < files[j].Path })
	}
	return m, nil
}

var (
	shardRE    = regexp.MustCompile(`^([A-Za-z0-9_.]+?)-\d{5}-of-\d{5}(?:-[0-9a-f]+)?\.parquet$`)
	splitNamRE = regexp.MustCompile(`^[A-Za-z0-9_.-]+$`)
)

// splitOf names the split a Parquet file of the repository belongs to, as
// the datasets library lays them out: DIR/SPLIT-00000-of-00001.parquet
// (DIR "data" or a config's name), SPLIT/*.parquet or SPLIT.parquet; in the
// Hub's conversion, CONFIG/SPLIT/0000.parquet. A config other than default
// makes the key "config/split". "" for a file that is no split's.
func splitOf(name string, converted bool) string {
	if !strings.HasSuffix(name, ".parquet") {
		return ""
	}
	parts := strings.Split(name, "/")
	for _, p := range parts {
		if strings.HasPrefix(p, ".") {
			return ""
		}
	}
	key := func(config, split string) string {
		if !splitNamRE.MatchString(split) || split == "." || split == ".." {
			return ""
		}
		if config == "" || config == "default" || config == "data" {
			return split
		}
		if !splitNamRE.MatchString(config) || config == ".." {
			return ""
		}
		return config + "/" + split
	}
	base := parts[len(parts)-1]
	if converted {
		if len(parts) != 3 {
			return ""
		}
		return key(parts[0], strings.TrimPrefix(parts[1], "partial-"))
	}
	if m := shardRE.FindStringSubmatch(base); m != nil {
		config := ""
		if len(parts) > 1 {
			config = parts[0]
		}
		return key(config, m[1])
	}
	if len(parts) >= 2 && parts[len(parts)-2] != "data" {
		config := ""
		if len(parts) >= 3 {
			config = parts[len(parts)-3]
		}
		return key(config, parts[len(parts)-2])
	}
	return key("", keywordSplit(strings.TrimSuffix(base, ".parquet")))
}

// splitWords are the words the datasets library takes for a split in a
// file's name, and the split each names.
var splitWords = map[string]string{
	"train": "train", "training": "train",
	"validation": "validation", "valid": "validation", "val": "validation", "dev": "dev",
	"test": "test", "testing": "test", "eval": "test", "evaluation": "test",
}

// keywordSplit names the split of a file called name (no extension): the
// last of its words (split at '-', '_', '.', ' ' and digits) that names a
// split, so ape_bench1_test is test; else name itself.
func keywordSplit(name string) string {
	words := strings.FieldsFunc(strings.ToLower(name), func(r rune) bool {
		return r == '-' || r == '_' || r == '.' || r == ' ' || r >= '0' && r <= '9'
	})
	for i := len(words) - 1; i >= 0; i-- {
		if s, ok := splitWords[words[i]]; ok {
			return s
		}
	}
	return name
}

// statusError turns a failed answer into an error naming what exists.
func (c *Client) statusError(ctx context.Context, resp *http.Response, ref Ref, rev string) error {
	code := resp.Header.Get("X-Error-Code")
	switch {
	case code == "RevisionNotFound" || (resp.StatusCode == http.StatusNotFound && code == "" && rev != "main" && c.exists(ctx, ref)):
		refs := c.refs(ctx, ref)
		msg := fmt.Sprintf("hfhub: %s has no revision %q", ref.Repo, rev)
		if refs != "" {
			msg += "; its branches and tags: " + refs
		}
		return &NotFoundError{msg}
	case resp.StatusCode == http.StatusUnauthorized && c.Token != "" && code != "RepoNotFound":
		// The Hub names a bad token (X-Error-Message "Invalid credentials
		// in Authorization header"); the token itself is never shown.
		msg := resp.Header.Get("X-Error-Message")
		if msg == "" {
			msg = resp.Status
		}
		return &NotFoundError{fmt.Sprintf("hfhub: %s: the Hub refused HF_TOKEN (%s); check the token, and accept a gated dataset's terms on its page", ref.Repo, msg)}
	case resp.StatusCode == http.StatusNotFound || resp.StatusCode == http.StatusUnauthorized || code == "RepoNotFound":
		msg := fmt.Sprintf("hfhub: no dataset %s at %s", ref.Repo, c.Endpoint)
		if c.Token == "" {
			msg += " (a private or gated dataset needs HF_TOKEN)"
		}
		return &NotFoundError{msg}
	case resp.StatusCode == http.StatusForbidden:
		return fmt.Errorf("hfhub: %s: access refused (%s); a gated dataset must be accepted on its page, with HF_TOKEN set", ref.Repo, resp.Status)
	}
	body, _ := io.ReadAll(io.LimitReader(resp.Body, 512))
	return fmt.Errorf("hfhub: %s@%s: %s: %s", ref.Repo, rev, resp.Status, strings.TrimSpace(string(body)))
}

// exists says whether the dataset's default branch answers.
func (c *Client) exists(ctx context.Context, ref Ref) bool {
	resp, err := c.do(ctx, http.MethodGet, fmt.Sprintf("%s/api/datasets/%s/revision/main", c.Endpoint, ref.Repo), nil, false)
	if err != nil {
		return false
	}
	resp.Body.Close()
	return resp.StatusCode == http.StatusOK
}

// refs lists the dataset's branches and tags (GET /api/datasets/REPO/refs),
// or "" when the Hub does not say.
func (c *Client) refs(ctx context.Context, ref Ref) string {
	resp, err := c.do(ctx, http.MethodGet, fmt.Sprintf("%s/api/datasets/%s/refs", c.Endpoint, ref.Repo), nil, false)
	if err != nil {
		return ""
	}
	defer resp.Body.Close()
	var r struct {
		Branches, Tags []struct {
			Name string `json:"name"`
		}
	}
	if resp.StatusCode != http.StatusOK || json.NewDecoder(io.LimitReader(resp.Body, 1<<20)).Decode(&r) != nil {
		return ""
	}
	var names []string
	for _, b := range append(r.Branches, r.Tags...) {
		names = append(names, b.Name)
	}
	return strings.Join(names, ", ")
}

func (c *Client) do(ctx context.Context, method, u string, hdr http.Header, noRedirect bool) (*http.Response, error) {
	req, err := http.NewRequestWithContext(ctx, method, u, nil)
	if err != nil {
		return nil, fmt.Errorf("hfhub: %w", err)
	}
	for k, v := range hdr {
		req.Header[k] = v
	}
	req.Header.Set("User-Agent", "patchbench")
	if c.Token != "" {
		req.Header.Set("Authorization", "Bearer "+c.Token)
	}
	hc := c.HTTP
	if hc == nil {
		hc = http.DefaultClient
	}
	cp, next := *hc, hc.CheckRedirect
	if noRedirect {
		cp.CheckRedirect = func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }
	} else {
		cp.CheckRedirect = func(req *http.Request, via []*http.Request) error {
			if len(via) >= 10 {
				return errors.New("stopped after 10 redirects")
			}
			// The token goes to the Hub's own host only: net/http keeps
			// Authorization for a subdomain or another port of the same
			// name; huggingface_hub (requests) drops it for any other
			// scheme, host or port, as here.
			if !sameOrigin(via[0].URL, req.URL) {
				req.Header.Del("Authorization")
			}
			if next != nil {
				return next(req, via)
			}
			return nil
		}
	}
	hc = &cp
	resp, err := hc.Do(req)
	if err != nil {
		return nil, fmt.Errorf("hfhub: %w", err)
	}
	return resp, nil
}

// sameOrigin says whether a and b have the same scheme, host and port.
func sameOrigin(a, b *url.URL) bool {
	return a.Scheme == b.Scheme && strings.EqualFold(a.Hostname(), b.Hostname()) && port(a) == port(b)
}

func port(u *url.URL) string {
	if p := u.Port(); p != "" {
		return p
	}
	if u.Scheme == "https" {
		return "443"
	}
	return "80"
}

// resolveURL is the file's download address at commit.
func (c *Client) resolveURL(repo, commit, name string) string {
	segs := strings.Split(name, "/")
	for i, s := range segs {
		segs[i] = url.PathEscape(s)
	}
	return fmt.Sprintf("%s/datasets/%s/resolve/%s/%s", c.Endpoint, repo, commit, path.Join(segs...))
}

// normETag strips a weak marker and quotes.
func normETag(s string) string {
	return strings.Trim(strings.TrimPrefix(strings.TrimSpace(s), "W/"), `"`)
}

// download fetches f to local, resuming local's ".incomplete" file, and
// refuses a file whose metadata or content differ from the listing. It
// holds lockPath's lock while it writes.
func (c *Client) download(ctx context.Context, repo, commit string, f fileInfo, local, lockPath string) error {
	u := c.resolveURL(repo, commit, f.Path)
	where := fmt.Sprintf("%s@%.12s %s", repo, commit, f.Path)
	// The file's metadata, as the Hub's clients read it: the first answer,
	// before any redirect to the storage of large files.
	head, err := c.do(ctx, http.MethodHead, u, http.Header{"Accept-Encoding": {"identity"}}, true)
	if err != nil {
		return err
	}
	head.Body.Close()
	if head.StatusCode >= 400 {
		return fmt.Errorf("hfhub: %s: %s", where, head.Status)
	}
	etag := normETag(head.Header.Get("X-Linked-Etag"))
	if etag == "" {
		etag = normETag(head.Header.Get("ETag"))
	}
	size := head.ContentLength
	if s := head.Header.Get("X-Linked-Size"); s != "" {
		size, _ = strconv.ParseInt(s, 10, 64)
	}
	if rc := head.Header.Get("X-Repo-Commit"); rc != "" && rc != commit {
		return fmt.Errorf("hfhub: %s: the Hub serves commit %s, listed %s; refused", where, rc, commit)
	}
	if etag != "" && f.ETag != "" && etag != f.ETag {
		return fmt.Errorf("hfhub: %s: ETag %s differs from the listing's %s; refused", where, etag, f.ETag)
	}
	// A redirect's own length is not the file's: only X-Linked-Size then.
	sized := head.Header.Get("X-Linked-Size") != "" || (head.StatusCode < 300 && size >= 0)
	if sized && size != f.Size {
		return fmt.Errorf("hfhub: %s: size %d differs from the listing's %d; refused", where, size, f.Size)
	}
	if err := os.MkdirAll(filepath.Dir(local), 0o755); err != nil {
		return fmt.Errorf("hfhub: cache: %w", err)
	}
	// One process at a time writes a file's ".incomplete": two writers of
	// one partial file truncate and rename it under each other. The one
	// that waited finds the file done. (One lock per commit: a lock file
	// beside each would be left in the split's directory.)
	lock, err := flock.Acquire(ctx, lockPath, false)
	if err != nil {
		return fmt.Errorf("hfhub: cache: %w", err)
	}
	defer lock.Release()
	if st, err := os.Stat(local); err == nil && st.Size() == f.Size {
		return nil
	}
	partial := local + ".incomplete"
	err = c.fetch(ctx, u, where, f, partial)
	if errors.Is(err, errContent) {
		// A partial file from elsewhere may have been wrong: once more
		// from the start.
		os.Remove(partial)
		err = c.fetch(ctx, u, where, f, partial)
		if err != nil {
			os.Remove(partial)
		}
	}
	if err != nil {
		return err
	}
	if err := os.Rename(partial, local); err != nil {
		return fmt.Errorf("hfhub: cache: %w", err)
	}
	return nil
}

var errContent = errors.New("content differs from the listing")

// fetch downloads into partial, from where it ends, and checks the whole
// file's size and hash against f.
func (c *Client) fetch(ctx context.Context, u, where string, f fileInfo, partial string) error {
	out, err := os.OpenFile(partial, os.O_RDWR|os.O_CREATE, 0o644)
	if err != nil {
		return fmt.Errorf("hfhub: cache: %w", err)
	}
	defer out.Close()
	have, err := out.Seek(0, io.SeekEnd)
	if err != nil {
		return fmt.Errorf("hfhub: cache: %w", err)
	}
	if have > f.Size {
		have = 0
	}
	hdr := http.Header{"Accept-Encoding": {"identity"}}
	if have > 0 {
		hdr.Set("Range", fmt.Sprintf("bytes=%d-", have))
	}
	resp, err := c.do(ctx, http.MethodGet, u, hdr, false)
	if err != nil {
		return err
	}
	defer resp.Body.Close()
	switch {
	case resp.StatusCode == http.StatusPartialContent && have > 0 && strings.HasPrefix(resp.Header.Get("Content-Range"), fmt.Sprintf("bytes %d-", have)):
	case resp.StatusCode == http.StatusOK:
		have = 0
	case resp.StatusCode == http.StatusRequestedRangeNotSatisfiable && have == f.Size:
		resp.Body.Close()
		return c.check(out, where, f)
	default:
		return fmt.Errorf("hfhub: %s: %s", where, resp.Status)
	}
	if err := out.Truncate(have); err != nil {
		return fmt.Errorf("hfhub: cache: %w", err)
	}
	if _, err := out.Seek(have, io.SeekStart); err != nil {
		return fmt.Errorf("hfhub: cache: %w", err)
	}
	body := io.Reader(io.LimitReader(resp.Body, f.Size-have+1))
	done := c.progress(where, f.Size, have)
	n, err := io.Copy(out, &countReader{r: body, add: done.add})
	done.end(err)
	if err != nil {
		return fmt.Errorf("hfhub: %s: after %d bytes: %w", where, have+n, err)
	}
	return c.check(out, where, f)
}

// check compares the downloaded file with the listing: its size, and its
// hash with the ETag (an LFS object's sha256, a git blob's sha1).
func (c *Client) check(out *os.File, where string, f fileInfo) error {
	st, err := out.Stat()
	if err != nil {
		return fmt.Errorf("hfhub: cache: %w", err)
	}
	if st.Size() != f.Size {
		return fmt.Errorf("hfhub: %s: got %d bytes, the listing says %d; refused: %w", where, st.Size(), f.Size, errContent)
	}
	var h hash.Hash
	switch len(f.ETag) {
	case 64:
		h = sha256.New()
	case 40:
		h = sha1.New()
		fmt.Fprintf(h, "blob %d\x00", f.Size)
	default:
		return nil // an ETag of another form: the size is the check
	}
	if _, err := out.Seek(0, io.SeekStart); err != nil {
		return fmt.Errorf("hfhub: cache: %w", err)
	}
	if _, err := io.Copy(h, out); err != nil {
		return fmt.Errorf("hfhub: cache: %w", err)
	}
	if got := hex.EncodeToString(h.Sum(nil)); got != f.ETag {
		return fmt.Errorf("hfhub: %s: content hashes to %s, the ETag is %s; refused: %w", where, got, f.ETag, errContent)
	}
	return nil
}

type countReader struct {
	r   io.Reader
	add func(int)
}

func (c *countReader) Read(p []byte) (int, error) {
	n, err := c.r.Read(p)
	c.add(n)
	return n, err
}
