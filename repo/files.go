package repo

import (
	"context"
	"encoding/hex"
	"errors"
	"fmt"
	"strconv"
	"strings"
	"sync"
)

// treeCacheBytes bounds the tree objects a Repo keeps between listings
// (see [Repo.Files]): the commits of a repository share most of their
// directories.
const treeCacheBytes = 4 << 20

// Files lists the regular files (mode 100644 or 100755) of rev's tree,
// recursively, in tree order, as [Repo.Tree] lists them but without
// sizes (Size is -1). The trees are read through a long-lived
// "git cat-file --batch", one pipelined exchange per directory level, not
// by an ls-tree process per listing; the tree objects read are kept (a
// few MB per repository), so a later listing reads only the directories
// that changed.
func (r *Repo) Files(ctx context.Context, rev string) ([]TreeEntry, error) {
	root, err := r.resolve(ctx, rev, "tree")
	if err != nil {
		return nil, fmt.Errorf("repo: list %s in %s: %w", rev, r.name, err)
	}
	idLen := len(root) / 2
	trees := map[string]string{} // the raw tree objects of this listing
	for level := []string{root}; len(level) > 0; {
		var toRead []string
		for _, id := range level {
			if data, ok := r.trees.get(id); ok {
				trees[id] = data
			} else {
				toRead = append(toRead, id)
			}
		}
		err := r.blobs.stream(ctx, toRead, func(i int, h header, data string) error {
			if h.missing || h.typ != "tree" {
				return fmt.Errorf("tree %s is missing", toRead[i])
			}
			trees[toRead[i]] = data
			r.trees.put(toRead[i], data)
			return nil
		})
		if err != nil {
			return nil, fmt.Errorf("repo: list %s in %s: %w", rev, r.name, err)
		}
		var next []string
		for _, id := range level {
			err := eachTreeEntry(trees[id], idLen, func(mode uint32, _, raw string) bool {
				if mode&0o170000 == 0o040000 {
					sub := hex.EncodeToString([]byte(raw))
					if _, ok := trees[sub]; !ok {
						next = append(next, sub)
					}
				}
				return true
			})
			if err != nil {
				return nil, fmt.Errorf("repo: list %s in %s: tree %s: %w", rev, r.name, id, err)
			}
		}
		// A directory met twice in one level (two identical subtrees) is
		// read once.
		level = dedup(next)
	}
	var out []TreeEntry
	var walk func(id, prefix string)
	walk = func(id, prefix string) {
		// Parsed without error above.
		_ = eachTreeEntry(trees[id], idLen, func(mode uint32, name, raw string) bool {
			switch mode & 0o170000 {
			case 0o040000:
				walk(hex.EncodeToString([]byte(raw)), prefix+name+"/")
			case 0o100000:
				// As git reads a tree (canon_mode): any regular file is
				// 100644 or, executable, 100755.
				m := "100644"
				if mode&0o100 != 0 {
					m = "100755"
				}
				out = append(out, TreeEntry{Mode: m, Type: "blob", ID: hex.EncodeToString([]byte(raw)), Size: -1, Path: prefix + name})
			}
			return true
		})
	}
	walk(root, "")
	return out, nil
}

// dedup returns ids without repeats, in first-seen order.
func dedup(ids []string) []string {
	seen := make(map[string]bool, len(ids))
	out := ids[:0]
	for _, id := range ids {
		if !seen[id] {
			seen[id] = true
			out = append(out, id)
		}
	}
	return out
}

// eachTreeEntry calls fn with each entry of a raw tree object, whose
// entries are "<octal mode> <name>\x00<binary object id of idLen bytes>",
// until fn returns false.
func eachTreeEntry(data string, idLen int, fn func(mode uint32, name, rawID string) bool) error {
	for len(data) > 0 {
		sp := strings.IndexByte(data, ' ')
		nul := strings.IndexByte(data, 0)
		if sp < 0 || nul < sp || len(data) < nul+1+idLen {
			return errors.New("malformed tree object")
		}
		mode, err := strconv.ParseUint(data[:sp], 8, 32)
		if err != nil {
			return errors.New("malformed tree object")
		}
		if !fn(uint32(mode), data[sp+1:nul], data[nul+1:nul+1+idLen]) {
			return nil
		}
		data = data[nul+1+idLen:]
	}
	return nil
}

// treeCache keeps raw tree objects by id within treeCacheBytes, the
// oldest dropped first. Safe for concurrent use.
type treeCache struct {
	mu    sync.Mutex
	m     map[string]string
	queue []string
	size  int
}

func (c *treeCache) get(id string) (string, bool) {
	c.mu.Lock()
	defer c.mu.Unlock()
	data, ok := c.m[id]
	return data, ok
}

func (c *treeCache) put(id, data string) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.m == nil {
		c.m = map[string]string{}
	}
	if _, ok := c.m[id]; ok || len(data) > treeCacheBytes {
		return
	}
	c.m[id] = data
	c.queue = append(c.queue, id)
	c.size += len(data)
	for c.size > treeCacheBytes {
		old := c.queue[0]
		c.queue = c.queue[1:]
		c.size -= len(c.m[old])
		delete(c.m, old)
	}
}
