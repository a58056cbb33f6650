// Package resultsfile reads a results file (JSON Lines, one row per case
// attempt, as package runner writes them) one row at a time: the last row
// of each key, without holding the file or its keys. The runner and the
// HTML page (which must not link the runner and its cache) share it.
package resultsfile

import (
	"bufio"
	"bytes"
	"crypto/sha256"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"slices"
	"syscall"
)

// rowHead is the part of a row a line that does not start with its key
// is decoded for.
type rowHead struct {
	Key *string `json:"key"`
}

// EachRow calls fn with the last row of each key, decoded, and returns
// the number of rows (see EachLast).
func EachRow(path string, fn func(row map[string]any) error) (int, error) {
	return EachLast(path, func(_ string, _ []byte, _ int64, row map[string]any) error { return fn(row) })
}

// EachLast calls fn with the last row of each key of the results file
// at path: its key, its line (without the newline), where the line starts
// in the file, and the row decoded. Errors name the line.
func EachLast(path string, fn func(key string, line []byte, off int64, row map[string]any) error) (int, error) {
	return eachLast(path, true, fn)
}

// EachLine is EachLast without decoding the rows (row is nil): for a
// reader that copies the lines. A line is still checked to be JSON.
func EachLine(path string, fn func(key string, line []byte, off int64) error) (int, error) {
	return eachLast(path, false, func(key string, line []byte, off int64, _ map[string]any) error { return fn(key, line, off) })
}

func eachLast(path string, decode bool, fn func(key string, line []byte, off int64, row map[string]any) error) (int, error) {
	lines := func(visit func(i int, line []byte, off int64, terminated bool) error) error {
		// Run files are never read through a symbolic link.
		f, err := os.OpenFile(path, os.O_RDONLY|syscall.O_NOFOLLOW, 0)
		if err != nil {
			return fmt.Errorf("results: %w", err)
		}
		defer f.Close()
		br := bufio.NewReaderSize(f, 64<<10)
		var off int64
		for i := 0; ; i++ {
			line, err := br.ReadBytes('\n')
			if err != nil && !errors.Is(err, io.EOF) {
				return fmt.Errorf("results: reading %s: %w", path, err)
			}
			terminated := len(line) > 0 && line[len(line)-1] == '\n'
			if body := bytes.TrimRight(line, "\r\n"); len(bytes.TrimSpace(body)) > 0 {
				if err := visit(i, body, off, terminated); err != nil {
					return err
				}
			}
			off += int64(len(line))
			if !terminated {
				return nil
			}
		}
	}
	// The last line of each key, by a 128-bit hash of the key: a run of
	// 150,000 cases keeps 3.6 MB of hashes instead of its keys.
	var last keyLines
	err := lines(func(i int, line []byte, _ int64, terminated bool) error {
		key, ok := leadingKey(line)
		if !ok || !terminated { // and a last line may be cut short
			var head rowHead
			err := json.Unmarshal(line, &head)
			if err == nil && head.Key == nil {
				err = errors.New(`no "key" field`)
			}
			if err != nil {
				if !terminated {
					return nil // cut short by a crash: not a row
				}
				return fmt.Errorf("results: %s line %d: %w", path, i+1, err)
			}
			key = *head.Key
		}
		last.add(key, i)
		return nil
	})
	if err != nil {
		return 0, err
	}
	last.done()
	err = lines(func(i int, line []byte, off int64, terminated bool) error {
		if key, ok := leadingKey(line); ok && last.get(key) != i {
			return nil // a later row of the key counts
		}
		key, ok := leadingKey(line)
		var row map[string]any
		if decode || !ok {
			if err := json.Unmarshal(line, &row); err != nil {
				if !terminated {
					return nil // cut short, as the first pass found
				}
				return fmt.Errorf("results: %s line %d: %w", path, i+1, err)
			}
			key, _ = row["key"].(string)
		} else if !json.Valid(line) {
			if !terminated {
				return nil
			}
			return fmt.Errorf("results: %s line %d: not a JSON object", path, i+1)
		}
		if last.get(key) != i {
			return nil // not the key's last row, or not a row
		}
		if !decode {
			row = nil
		}
		if err := fn(key, line, off, row); err != nil {
			return fmt.Errorf("results: %s line %d: %w", path, i+1, err)
		}
		return nil
	})
	return len(last), err
}

// KeyHash is the first 128 bits of SHA-256 of a key: what readers keep
// of a run's keys, so that 150,000 of them take 3.6 MB, not their text.
type KeyHash [16]byte

func HashKey(key string) KeyHash {
	h := sha256.Sum256([]byte(key))
	return KeyHash(h[:16])
}

// keyLines maps each key of a results file to its last line: pairs added
// in line order, then sorted once (a slice of 24-byte pairs, not a map).
type keyLines []keyLine

type keyLine struct {
	h    KeyHash
	line int32
}

func (k *keyLines) add(key string, line int) {
	*k = append(*k, keyLine{HashKey(key), int32(line)})
}

// done sorts the pairs and keeps the last line of each key.
func (k *keyLines) done() {
	s := *k
	slices.SortStableFunc(s, func(a, b keyLine) int {
		return bytes.Compare(a.h[:], b.h[:])
	})
	out := s[:0]
	for i := range s {
		if i+1 < len(s) && s[i+1].h == s[i].h {
			continue // a later line of the same key follows
		}
		out = append(out, s[i])
	}
	*k = slices.Clip(out)
}

// get returns the last line of key, or -1.
func (k keyLines) get(key string) int {
	h := HashKey(key)
	i, ok := slices.BinarySearchFunc(k, h, func(e keyLine, t KeyHash) int {
		return bytes.Compare(e.h[:], t[:])
	})
	if !ok {
		return -1
	}
	return int(k[i].line)
}

// leadingKey reads the key of a row that starts with {"key":"...", as the
// runner writes rows, without decoding the rest.
func leadingKey(line []byte) (string, bool) {
	const prefix = `{"key":"`
	if !bytes.HasPrefix(line, []byte(prefix)) {
		return "", false
	}
	for j := len(prefix); j < len(line); j++ {
		switch line[j] {
		case '\\':
			j++
		case '"':
			var key string
			if json.Unmarshal(line[len(prefix)-1:j+1], &key) != nil {
				return "", false
			}
			return key, true
		}
	}
	return "", false
}
