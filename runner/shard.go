package runner

import (
	"bytes"
	"crypto/sha256"
	"encoding/binary"
	"fmt"
	"os"
	"slices"
	"strconv"
	"strings"
)

// Shard selects part i of n of the cases, so that n processes (or machines)
// can share a run. The cases of shard i are those whose key hashes to i: the
// first 8 bytes of SHA-256(key), read as a big-endian unsigned integer,
// modulo n, plus 1. A key belongs to exactly one of the n shards whatever
// the other keys are, and the shard of a key never changes.
//
// Index counts from 1, as in "--shard 2/4". The zero value selects every
// case.
type Shard struct {
	Index, Count int
}

// IndexEnv is the environment variable "--shard env/N" reads: the
// completion index (from 0) a Kubernetes Indexed Job gives each pod.
const IndexEnv = "JOB_COMPLETION_INDEX"

// ParseShard parses "i/n" (1 ≤ i ≤ n), or "env/n", whose index is
// $JOB_COMPLETION_INDEX + 1 (the Job counts from 0). The empty string is the
// zero Shard.
func ParseShard(s string) (Shard, error) {
	return ParseShardEnv(s, os.Getenv)
}

// ParseShardEnv is ParseShard with the environment read through getenv.
func ParseShardEnv(s string, getenv func(string) string) (Shard, error) {
	if s == "" {
		return Shard{}, nil
	}
	is, ns, ok := strings.Cut(s, "/")
	if !ok {
		return Shard{}, fmt.Errorf("runner: shard %q: want i/n or env/n", s)
	}
	if is == "env" {
		v := getenv(IndexEnv)
		k, err := strconv.Atoi(v)
		if err != nil {
			return Shard{}, fmt.Errorf("runner: shard %q: $%s is %q, want the Job's completion index (0, 1, ...)", s, IndexEnv, v)
		}
		is = strconv.Itoa(k + 1)
	}
	i, err1 := strconv.Atoi(is)
	n, err2 := strconv.Atoi(ns)
	if err1 != nil || err2 != nil {
		return Shard{}, fmt.Errorf("runner: shard %q: want i/n with whole numbers", s)
	}
	sh := Shard{Index: i, Count: n}
	if err := sh.validate(); err != nil {
		return Shard{}, err
	}
	return sh, nil
}

// String returns "i/n", or "" for the zero Shard.
func (s Shard) String() string {
	if s == (Shard{}) {
		return ""
	}
	return fmt.Sprintf("%d/%d", s.Index, s.Count)
}

func (s Shard) validate() error {
	if s == (Shard{}) {
		return nil
	}
	if s.Count < 1 || s.Index < 1 || s.Index > s.Count {
		return fmt.Errorf("runner: shard %d/%d: want 1 ≤ i ≤ n", s.Index, s.Count)
	}
	return nil
}

// Contains reports whether key belongs to the shard. The zero Shard
// contains every key.
func (s Shard) Contains(key string) bool {
	if s.Count <= 1 {
		return true
	}
	sum := sha256.Sum256([]byte(key))
	return int(binary.BigEndian.Uint64(sum[:8])%uint64(s.Count))+1 == s.Index
}

// shuffle orders the indexes sel of cases by SHA-256 of the seed (8
// bytes, big-endian) followed by the case's key, ties (which need a hash
// collision) by key.
func shuffle(cases CaseList, sel []int32, seed int64) {
	type ranked struct {
		rank [sha256.Size]byte
		i    int32
	}
	rs := make([]ranked, len(sel))
	var prefix [8]byte
	binary.BigEndian.PutUint64(prefix[:], uint64(seed))
	for j, i := range sel {
		h := sha256.New()
		h.Write(prefix[:])
		h.Write([]byte(cases.Case(int(i)).Key))
		copy(rs[j].rank[:], h.Sum(nil))
		rs[j].i = i
	}
	slices.SortFunc(rs, func(a, b ranked) int {
		if c := bytes.Compare(a.rank[:], b.rank[:]); c != 0 {
			return c
		}
		return strings.Compare(cases.Case(int(a.i)).Key, cases.Case(int(b.i)).Key)
	})
	for j := range rs {
		sel[j] = rs[j].i
	}
}
