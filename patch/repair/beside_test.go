package repair_test

import (
	"strconv"
	"strings"
	"testing"

	"github.com/patchbench/patchbench/patch"
	"github.com/patchbench/patchbench/patch/repair"
)

// A context line between two changes left out right next to added lines
// (the held-out family mid_ctx_lost_beside_added): the line stood before
// the added lines, after them or among them, and each reading is a patch
// that gives another file. The engine used to guess the side from the
// lengths of the context runs around it and put both of these after the
// added lines, where the commits have them before.

// From google/gson@2d5cab1b7b1f, LinkedHashTreeMap.java: `-a, [lost], +b...`.
const besideGsonTree = `  /**
   * Returns a new array containing the same nodes as {@code oldTable}, but with
   * twice as many trees, each of (approximately) half the previous size.
   */
  static <K, V> Node<K, V>[] doubleCapacity(Node<K, V>[] oldTable) {
    // TODO: don't do anything if we're already at MAX_CAPACITY
    int oldCapacity = oldTable.length;
    @SuppressWarnings("unchecked") // Arrays and generics don't get along.
    Node<K, V>[] newTable = new Node[oldCapacity * 2];
    AvlIterator<K, V> iterator = new AvlIterator<K, V>();
    AvlBuilder<K, V> leftBuilder = new AvlBuilder<K, V>();
    AvlBuilder<K, V> rightBuilder = new AvlBuilder<K, V>();

`

const besideGsonTreeHunk = `@@ -3,10 +3,15 @@
    * twice as many trees, each of (approximately) half the previous size.
    */
   static <K, V> Node<K, V>[] doubleCapacity(Node<K, V>[] oldTable) {
-    // TODO: don't do anything if we're already at MAX_CAPACITY
+    if (oldCapacity >= MAX_CAPACITY) {
+      return oldTable;
+    }
+
+    int newCapacity = oldCapacity * 2;
+
     @SuppressWarnings("unchecked") // Arrays and generics don't get along.
-    Node<K, V>[] newTable = new Node[oldCapacity * 2];
+    Node<K, V>[] newTable = new Node[newCapacity];
     AvlIterator<K, V> iterator = new AvlIterator<K, V>();
     AvlBuilder<K, V> leftBuilder = new AvlBuilder<K, V>();
     AvlBuilder<K, V> rightBuilder = new AvlBuilder<K, V>();
`

// From google/gson@97d00f49309d, MapTest.java: `+A, [lost], +P`.
const besideGsonMap = `package com.google.gson.functional;

import com.google.gson.Gson;
import com.google.gson.GsonBuilder;
import com.google.gson.InstanceCreator;
import com.google.gson.JsonElement;
import com.google.gson.JsonSerializationContext;
import com.google.gson.JsonSerializer;
import com.google.gson.common.TestTypes;
import com.google.gson.reflect.TypeToken;

import junit.framework.TestCase;
`

const besideGsonMapHunk = `@@ -3,10 +3,13 @@
 import com.google.gson.Gson;
 import com.google.gson.GsonBuilder;
 import com.google.gson.InstanceCreator;
+import com.google.gson.JsonArray;
+import com.google.gson.JsonPrimitive;
 import com.google.gson.JsonSerializationContext;
 import com.google.gson.JsonSerializer;
 import com.google.gson.common.TestTypes;
+import com.google.gson.internal.$Gson$Types;
 import com.google.gson.reflect.TypeToken;
 
 import junit.framework.TestCase;
`

// readingsBeside returns the hunk with line put back at each place of the
// run of added lines that starts or ends at index i of its lines.
func readingsBeside(hunk, line string, i int) []string {
	ls := strings.Split(strings.TrimSuffix(hunk, "\n"), "\n")
	lo, hi := i, i
	for lo > 1 && strings.HasPrefix(ls[lo-1], "+") {
		lo--
	}
	for hi < len(ls) && strings.HasPrefix(ls[hi], "+") {
		hi++
	}
	var out []string
	for j := lo; j <= hi; j++ {
		r := append(append(append([]string(nil), ls[:j]...), " "+line), ls[j:]...)
		out = append(out, strings.Join(r, "\n")+"\n")
	}
	return out
}

func TestLostLineBesideAddedRefused(t *testing.T) {
	for _, c := range []struct {
		name, file, hunk, lost string
		at                     int // index in the hunk's lines where the lost line goes
		fileLine               int
	}{
		{"gson@2d5cab1b7b1f", besideGsonTree, besideGsonTreeHunk, "    int oldCapacity = oldTable.length;", 5, 7},
		{"gson@97d00f49309d", besideGsonMap, besideGsonMapHunk, "import com.google.gson.JsonElement;", 6, 6},
	} {
		t.Run(c.name, func(t *testing.T) {
			const path = "X.java"
			head := "--- a/" + path + "\n+++ b/" + path + "\n"
			// The other readings are patches git applies, each to another file.
			seen := map[string]bool{}
			for _, r := range readingsBeside(c.hunk, c.lost, c.at) {
				res, err := strictApply(head+r, patch.MapFS{path: c.file}, path, false)
				if err != nil {
					t.Fatalf("reading does not apply: %v\n%s", err, r)
				}
				seen[string(res[0].Content)] = true
			}
			if len(seen) < 2 {
				t.Fatalf("%d distinct files from the readings, want 2 or more", len(seen))
			}
			fsys := patch.MapFS{path: c.file}
			res, err := repair.Repair(head+c.hunk, repair.Options{FS: fsys})
			if err == nil {
				t.Fatalf("applied; want refused:\n%s", res.Results[0].Content)
			}
			want := "file line " + strconv.Itoa(c.fileLine) + " is not in the hunk and stands next to its added lines"
			if !strings.Contains(err.Error(), want) || !strings.Contains(err.Error(), "hunk 1 of "+path) {
				t.Errorf("reason %q, want it to name hunk 1 and %q", err, want)
			}
			if fsys[path] != c.file {
				t.Error("the file was written")
			}
		})
	}
}

// From BurntSushi/ripgrep@e4bce86111fe, ignore/src/types.rs (malformed-dev,
// drop_context_line): the line after the added one left out. Its header
// counts one old and one new line more than its body, and only one
// reading is a hunk git writes: with the line before the added one, the
// leading run would have 4 lines and the trailing run 2, away from both
// ends of the file. Applied, with the line after the added one.
const besideTypes = `use {Error, Match};

const DEFAULT_TYPES: &'static [(&'static str, &'static [&'static str])] = &[
    ("agda", &["*.agda", "*.lagda"]),
    ("asciidoc", &["*.adoc", "*.asc", "*.asciidoc"]),
    ("asm", &["*.asm", "*.s", "*.S"]),
    ("avro", &["*.avdl", "*.avpr", "*.avsc"]),
    ("awk", &["*.awk"]),
`

func TestLostLineBesideAddedDecidedByShape(t *testing.T) {
	const path = "types.rs"
	head := "--- a/" + path + "\n+++ b/" + path + "\n"
	hunk := `@@ -2,6 +2,7 @@
 
 const DEFAULT_TYPES: &'static [(&'static str, &'static [&'static str])] = &[
     ("agda", &["*.agda", "*.lagda"]),
+    ("aidl", &["*.aidl"]),
     ("asm", &["*.asm", "*.s", "*.S"]),
     ("avro", &["*.avdl", "*.avpr", "*.avsc"]),
`
	want := strings.Replace(besideTypes, "    (\"asciidoc\"", "    (\"aidl\", &[\"*.aidl\"]),\n    (\"asciidoc\"", 1)
	res, err := repair.Repair(head+hunk, repair.Options{FS: patch.MapFS{path: besideTypes}})
	if err != nil {
		t.Fatal(err)
	}
	if got := string(res.Results[0].Content); got != want {
		t.Errorf("got\n%s\nwant\n%s", got, want)
	}
	// Without usable counts nothing says only one line is missing: refused.
	bare := strings.Replace(hunk, "@@ -2,6 +2,7 @@", "@@ -2 +2 @@", 1)
	if _, err := repair.Repair(head+bare, repair.Options{FS: patch.MapFS{path: besideTypes}}); err == nil || !strings.Contains(err.Error(), "stands next to its added lines") {
		t.Errorf("without counts: %v, want refused as a line beside added lines", err)
	}
}
