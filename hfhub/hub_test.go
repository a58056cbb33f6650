package hfhub_test

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/patchbench/patchbench/bench/swe"
	"github.com/patchbench/patchbench/hfhub"
	"github.com/patchbench/patchbench/hfhub/hubtest"
)

const (
	commit  = "0123456789abcdef0123456789abcdef01234567"
	convSHA = "fedcba9876543210fedcba9876543210fedcba98"
)

// rows are SWE-bench-schema rows, as the Hub's SWE-bench files hold them.
var rows = []map[string]any{
	{"instance_id": "a__b-1", "repo": "a/b", "base_commit": "c1", "FAIL_TO_PASS": []string{"t1"}, "PASS_TO_PASS": []string{}},
	{"instance_id": "a__b-2", "repo": "a/b", "base_commit": "c2", "FAIL_TO_PASS": []string{"t2", "t3"}, "PASS_TO_PASS": []string{"t4"}},
}

func parquetOf(t *testing.T, rs []map[string]any) []byte {
	t.Helper()
	b, err := hubtest.Parquet(rs)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// fixture is a dataset with a test split (large file, served by redirect)
// and a dev split (small file), like SWE-bench_Lite.
func fixture(t *testing.T) (*hubtest.Server, []byte, []byte) {
	test := parquetOf(t, rows)
	dev := parquetOf(t, rows[:1])
	srv := hubtest.NewServer(&hubtest.Repo{
		Name: "org/bench", Commit: commit, Tags: []string{"v1"},
		Files: []hubtest.File{
			{Path: ".gitattributes", Data: []byte("*.parquet filter=lfs\n")},
			{Path: "README.md", Data: []byte("# bench\n")},
			{Path: "data/test-00000-of-00001.parquet", Data: test, LFS: true},
			{Path: "data/dev-00000-of-00001.parquet", Data: dev},
		},
	})
	t.Cleanup(srv.Close)
	return srv, test, dev
}

func client(srv *hubtest.Server, cache string) *hfhub.Client {
	return &hfhub.Client{Endpoint: srv.URL, Cache: cache}
}

func resolve(t *testing.T, c *hfhub.Client, id string) (*hfhub.Dataset, error) {
	t.Helper()
	ref, err := hfhub.ParseRef(id)
	if err != nil {
		t.Fatal(err)
	}
	return c.Resolve(context.Background(), ref)
}

func TestResolveDownloadsAndCaches(t *testing.T) {
	srv, test, dev := fixture(t)
	cache := t.TempDir()
	c := client(srv, cache)
	d, err := resolve(t, c, "org/bench")
	if err != nil {
		t.Fatal(err)
	}
	want := filepath.Join(cache, "datasets", "org", "bench", commit, "test", "00000.parquet")
	if d.Path != want || d.Split != "test" || d.Commit != commit {
		t.Fatalf("resolved %+v; want path %s, split test, commit %s", d, want, commit)
	}
	if got, _ := os.ReadFile(d.Path); string(got) != string(test) {
		t.Fatal("cached test split differs from the Hub's file")
	}
	// The cached file reads as the dataset through the SWE reader.
	insts, err := swe.LoadDataset(d.Path)
	if err != nil {
		t.Fatal(err)
	}
	if len(insts) != 2 || insts[1].InstanceID != "a__b-2" || !cmp.Equal(insts[1].FailToPass, []string{"t2", "t3"}) {
		t.Fatalf("instances read back: %+v", insts)
	}
	// The small file (no redirect, git blob ETag) at a tag and a split.
	d2, err := resolve(t, c, "org/bench@v1:dev")
	if err != nil {
		t.Fatal(err)
	}
	if got, _ := os.ReadFile(d2.Path); string(got) != string(dev) {
		t.Fatal("cached dev split differs from the Hub's file")
	}
	// Once cached, only the listing is asked for again.
	srv.Reset()
	if _, err := resolve(t, c, "org/bench:test"); err != nil {
		t.Fatal(err)
	}
	for _, r := range srv.Requests() {
		if !strings.Contains(r.Path, "/api/datasets/") {
			t.Errorf("cached file downloaded again: %s %s", r.Method, r.Path)
		}
	}
}

func TestResolveResumesPartialDownload(t *testing.T) {
	srv, test, _ := fixture(t)
	cache := t.TempDir()
	c := client(srv, cache)
	srv.CutAfter = len(test) / 2
	if _, err := resolve(t, c, "org/bench"); err == nil {
		t.Fatal("a download cut short succeeded")
	}
	partial := filepath.Join(cache, "datasets", "org", "bench", commit, "test", "00000.parquet.incomplete")
	st, err := os.Stat(partial)
	if err != nil || st.Size() != int64(len(test)/2) {
		t.Fatalf("partial file after the cut: %v, %v; want %d bytes", st, err, len(test)/2)
	}
	srv.Reset()
	d, err := resolve(t, c, "org/bench")
	if err != nil {
		t.Fatal(err)
	}
	if got, _ := os.ReadFile(d.Path); string(got) != string(test) {
		t.Fatal("resumed file differs from the Hub's")
	}
	var ranges []string
	for _, r := range srv.Requests() {
		if r.Method == "GET" && strings.HasPrefix(r.Path, "/lfs/") {
			ranges = append(ranges, r.Range)
		}
	}
	if want := []string{"bytes=" + strconv.Itoa(len(test)/2) + "-"}; !cmp.Equal(ranges, want) {
		t.Fatalf("ranges asked for: %q; want %q", ranges, want)
	}
	if _, err := os.Stat(partial); !os.IsNotExist(err) {
		t.Fatalf("partial file left behind: %v", err)
	}
}

func TestResolveRefusesMismatch(t *testing.T) {
	for _, tc := range []struct {
		name    string
		set     func(*hubtest.Server)
		wantErr string
	}{
		{"content differs from the ETag", func(s *hubtest.Server) { s.Corrupt = true }, "content hashes to"},
		{"size differs from the listing", func(s *hubtest.Server) { s.WrongSize = true }, "differs from the listing's"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			srv, _, _ := fixture(t)
			tc.set(srv)
			cache := t.TempDir()
			_, err := resolve(t, client(srv, cache), "org/bench")
			if err == nil || !strings.Contains(err.Error(), tc.wantErr) || !strings.Contains(err.Error(), "refused") {
				t.Fatalf("error %v; want one saying %q and refused", err, tc.wantErr)
			}
			dir := filepath.Join(cache, "datasets", "org", "bench", commit, "test")
			ents, _ := os.ReadDir(dir)
			if len(ents) != 0 {
				t.Fatalf("refused download left %v in the cache", ents)
			}
		})
	}
}

func TestResolveOffline(t *testing.T) {
	srv, test, _ := fixture(t)
	cache := t.TempDir()
	if _, err := resolve(t, client(srv, cache), "org/bench"); err != nil {
		t.Fatal(err)
	}
	srv.Reset()
	off := &hfhub.Client{Endpoint: "http://127.0.0.1:1", Cache: cache, Offline: true}
	for _, id := range []string{"org/bench", "org/bench:test", "org/bench@" + commit} {
		d, err := resolve(t, off, id)
		if err != nil {
			t.Fatalf("%s offline: %v", id, err)
		}
		if got, _ := os.ReadFile(d.Path); string(got) != string(test) {
			t.Fatalf("%s offline: wrong file", id)
		}
	}
	if n := len(srv.Requests()); n != 0 {
		t.Fatalf("offline resolution made %d requests", n)
	}
	// The dev split was never downloaded: offline says so.
	if _, err := resolve(t, off, "org/bench:dev"); err == nil || !strings.Contains(err.Error(), "not in the cache") {
		t.Fatalf("offline, split not downloaded: %v", err)
	}
	empty := &hfhub.Client{Endpoint: srv.URL, Cache: t.TempDir(), Offline: true}
	_, err := resolve(t, empty, "org/bench")
	if err == nil || !strings.Contains(err.Error(), "HF_HUB_OFFLINE") || !strings.Contains(err.Error(), "org/bench@main is not in the cache") {
		t.Fatalf("offline with an empty cache: %v", err)
	}
	if n := len(srv.Requests()); n != 0 {
		t.Fatalf("offline resolution made %d requests", n)
	}
}

func TestResolveNamesWhatExists(t *testing.T) {
	srv, _, _ := fixture(t)
	c := client(srv, t.TempDir())
	for _, tc := range []struct{ id, want string }{
		{"org/bench:validation", `org/bench has no split "validation"; its splits: dev, test`},
		{"org/nothing", "no dataset org/nothing at " + srv.URL + " (a private or gated dataset needs HF_TOKEN)"},
		{"org/bench@v2", `org/bench has no revision "v2"; its branches and tags: main, v1`},
	} {
		_, err := resolve(t, c, tc.id)
		var nf *hfhub.NotFoundError
		if err == nil || !strings.Contains(err.Error(), tc.want) || !errors.As(err, &nf) {
			t.Errorf("%s: error %v; want a NotFoundError with %q", tc.id, err, tc.want)
		}
	}
}

func TestResolveSendsToken(t *testing.T) {
	srv, _, _ := fixture(t)
	c := client(srv, t.TempDir())
	c.Token = "hf_secret"
	if _, err := resolve(t, c, "org/bench"); err != nil {
		t.Fatal(err)
	}
	reqs := srv.Requests()
	if len(reqs) < 3 {
		t.Fatalf("only %d requests", len(reqs))
	}
	for _, r := range reqs {
		if r.Authorization != "Bearer hf_secret" {
			t.Errorf("%s %s: Authorization %q", r.Method, r.Path, r.Authorization)
		}
	}
}

// A dataset published as JSON Lines is read from the Hub's Parquet
// conversion (refs/convert/parquet).
func TestResolveConvertedParquet(t *testing.T) {
	conv := parquetOf(t, rows)
	srv := hubtest.NewServer(&hubtest.Repo{
		Name: "org/jsonl", Commit: commit, ConvertedCommit: convSHA,
		Files:     []hubtest.File{{Path: "test.jsonl", Data: []byte("{}\n")}},
		Converted: []hubtest.File{{Path: "default/test/0000.parquet", Data: conv, LFS: true}},
	})
	defer srv.Close()
	d, err := resolve(t, client(srv, t.TempDir()), "org/jsonl")
	if err != nil {
		t.Fatal(err)
	}
	if d.Commit != convSHA || d.Source != "refs/convert/parquet" || d.Split != "test" {
		t.Fatalf("resolved %+v", d)
	}
	if got, _ := os.ReadFile(d.Path); string(got) != string(conv) {
		t.Fatal("converted file differs")
	}
	// With a revision named, there is no conversion to fall back on.
	if _, err := resolve(t, client(srv, t.TempDir()), "org/jsonl@"+commit); err == nil || !strings.Contains(err.Error(), "no Parquet files") {
		t.Fatalf("revision without Parquet: %v", err)
	}
}

// Several shards of a split resolve to their directory, read as one
// dataset.
func TestResolveShards(t *testing.T) {
	srv := hubtest.NewServer(&hubtest.Repo{
		Name: "org/big", Commit: commit,
		Files: []hubtest.File{
			{Path: "data/test-00000-of-00002.parquet", Data: parquetOf(t, rows[:1]), LFS: true},
			{Path: "data/test-00001-of-00002.parquet", Data: parquetOf(t, rows[1:]), LFS: true},
		},
	})
	defer srv.Close()
	d, err := resolve(t, client(srv, t.TempDir()), "org/big")
	if err != nil {
		t.Fatal(err)
	}
	if len(d.Files) != 2 || d.Path != filepath.Dir(d.Files[0]) {
		t.Fatalf("resolved %+v", d)
	}
	insts, err := swe.LoadDataset(d.Path)
	if err != nil {
		t.Fatal(err)
	}
	if len(insts) != 2 || insts[0].InstanceID != "a__b-1" || insts[1].InstanceID != "a__b-2" {
		t.Fatalf("instances of the shards: %+v", insts)
	}
}

// A large file redirected to another host (the Hub's CDN) is fetched
// without the token, as huggingface_hub (requests) drops Authorization on a
// redirect to another host; the Hub's own addresses still get it.
func TestResolveDropsTokenOnCrossHostRedirect(t *testing.T) {
	srv, test, _ := fixture(t)
	srv.UseCDN()
	c := client(srv, t.TempDir())
	c.Token = "hf_secret"
	d, err := resolve(t, c, "org/bench:test")
	if err != nil {
		t.Fatal(err)
	}
	if got, _ := os.ReadFile(d.Path); string(got) != string(test) {
		t.Fatalf("%s: %d bytes, want the %d of the test split", d.Path, len(got), len(test))
	}
	cdnHost := strings.TrimPrefix(srv.CDN.URL, "http://")
	var hub, cdn int
	for _, r := range srv.Requests() {
		if r.Host == cdnHost {
			cdn++
			if r.Authorization != "" {
				t.Errorf("CDN %s %s: Authorization %q", r.Method, r.Path, r.Authorization)
			}
			continue
		}
		hub++
		if r.Authorization != "Bearer hf_secret" {
			t.Errorf("Hub %s %s: Authorization %q", r.Method, r.Path, r.Authorization)
		}
	}
	if hub == 0 || cdn == 0 {
		t.Fatalf("%d requests to the Hub, %d to the CDN; want both", hub, cdn)
	}
}

// Processes resolving the same dataset at once into one cache (clients
// of their own, as separate processes have) all get the whole file.
func TestResolveConcurrent(t *testing.T) {
	big := make([]byte, 8<<20)
	for i := range big {
		big[i] = byte(i*7 + i>>13)
	}
	srv := hubtest.NewServer(&hubtest.Repo{
		Name: "org/big", Commit: commit,
		Files: []hubtest.File{{Path: "data/test-00000-of-00001.parquet", Data: big, LFS: true}},
	})
	t.Cleanup(srv.Close)
	cache := t.TempDir()
	const n = 6
	errs := make(chan error, n)
	for range n {
		go func() {
			d, err := resolve(t, client(srv, cache), "org/big")
			if err == nil {
				var got []byte
				if got, err = os.ReadFile(d.Path); err == nil && string(got) != string(big) {
					err = errors.New(d.Path + ": content differs")
				}
			}
			errs <- err
		}()
	}
	for range n {
		if err := <-errs; err != nil {
			t.Error(err)
		}
	}
}

// A gated dataset says what to do: without HF_TOKEN, set it; with a
// token the Hub refuses, that the token was refused, never the token.
func TestResolveGated(t *testing.T) {
	srv, _, _ := fixture(t)
	srv.Token = "hf_good"
	for _, tc := range []struct{ token, want string }{
		{"", "needs HF_TOKEN"},
		{"hf_bad", "refused HF_TOKEN"},
	} {
		c := client(srv, t.TempDir())
		c.Token = tc.token
		_, err := resolve(t, c, "org/bench")
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("token %q: error %v; want one saying %q", tc.token, err, tc.want)
		}
		if err != nil && tc.token != "" && strings.Contains(err.Error(), tc.token) {
			t.Errorf("the error shows the token: %v", err)
		}
	}
	c := client(srv, t.TempDir())
	c.Token = "hf_good"
	if _, err := resolve(t, c, "org/bench"); err != nil {
		t.Fatal(err)
	}
}
