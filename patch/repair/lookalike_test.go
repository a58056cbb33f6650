package repair_test

import (
	"slices"
	"strings"
	"testing"

	"github.com/patchbench/patchbench/patch"
	"github.com/patchbench/patchbench/patch/repair"
)

// From expressjs/express@3b4ce91fa3c7, lib/response.js (the held-out
// corpus's truncated_last family): the commit's hunk cut off after its
// first removed line, as an answer that ran out of room is. Its header
// still counts 9 old and 7 new lines; the body has 4 and 3, and no context
// after its change. Applied, it removed `if (charset) {` and left the
// block's body and closing brace: half a change.
const expressFormat = `res.format = function(obj){
  var req = this.req
    , next = req.next;

  var key = req.accepts(Object.keys(obj));

  this.set('Vary', 'Accept');

  if (key) {
    var type = normalizeType(key).value;
    var charset = mime.charsets.lookup(type);
    if (charset) {
      type += '; charset=' + charset;
    }
    this.set('Content-Type', type);
    obj[key](req, this, next);
  } else if (fn) {
    fn();
  }

  return this;
};
`

func TestTruncatedHunkRefused(t *testing.T) {
	head := "--- a/lib/response.js\n+++ b/lib/response.js\n"
	body := "   if (key) {\n     var type = normalizeType(key).value;\n     var charset = mime.charsets.lookup(type);\n-    if (charset) {\n"
	refuses(t, "lib/response.js", expressFormat, head+"@@ -9,9 +9,7 @@ res.format = function(obj){\n"+body, "may have been cut off")
	// The same body with counts that say it is whole: a hunk that ends
	// with its removal, placed by its removed line.
	want := strings.Replace(expressFormat, "    if (charset) {\n", "", 1)
	applies(t, "lib/response.js", expressFormat, head+"@@ -9,4 +9,3 @@\n"+body, want, repair.TierExact)
}

// The held-out corpus's already_elsewhere_stale family: the hunk's new
// side is in the file (copied, as a file with two similar blocks has it),
// its old side is still in place, and one removed line is stale. Reported
// already applied before (35 of 40 cases): the new side was in the file
// once, with no run of removed lines around it. Its context still frames
// the old block, so it is refused as stale.
func TestAlreadyAppliedLookalikeRefused(t *testing.T) {
	newSide := "  if (key) {\n    var type = normalizeType(key).value;\n    var charset = mime.charsets.lookup(type);\n    if (charset) type += '; charset=' + charset;\n    this.set('Content-Type', type);\n    obj[key](req, this, next);\n  } else if (fn) {\n"
	file := expressFormat + "\n" + newSide
	edit := "--- a/lib/response.js\n+++ b/lib/response.js\n@@ -9,9 +9,7 @@ res.format = function(obj){\n" +
		"   if (key) {\n     var type = normalizeType(key).value;\n     var charset = mime.charsets.lookup(type);\n" +
		"-    if (charset) { stale_since_42\n-      type += '; charset=' + charset;\n-    }\n+    if (charset) type += '; charset=' + charset;\n" +
		"     this.set('Content-Type', type);\n     obj[key](req, this, next);\n   } else if (fn) {\n"
	refuses(t, "lib/response.js", file, edit, "a line the hunk removes is not in the file")

	// From BurntSushi/ripgrep@9fc9f368f5dc, src/main.rs: every removed line
	// but the stale one is also a line of the new side, so none says the
	// old block is still there; its context framing it does.
	rg := `fn get_or_log_dir_entry(dent: Result<DirEntry>) -> Option<DirEntry> {
    match dent {
        Err(err) => {
            eprintln!("{}", err);
            None
        }
        Ok(dent) => {
            if let Some(err) = dent.error() {
                if !no_messages {
                    eprintln!("{}", err);
                }
            }
            if !dent.file_type().map_or(true, |x| x.is_file()) {
                None
            } else {
                Some(dent)
            }
        }
    }
}
`
	applied := `                    eprintln!("{}", err);
                }
            }
            if dent.depth() == 0 {
                return Some(dent);
            }
            if ft.is_file() {
                Some(dent)
            } else {
                None
            }
        }
    }
`
	rgEdit := "--- a/src/main.rs\n+++ b/src/main.rs\n@@ -10,10 +10,13 @@ fn get_or_log_dir_entry(\n" +
		"                     eprintln!(\"{}\", err);\n                 }\n             }\n" +
		"-            if !dent.file_type().map_or(true, |x| x.is_file()) { stale_since_42\n-                None\n-            } else {\n" +
		"+            if dent.depth() == 0 {\n+                return Some(dent);\n+            }\n+            if ft.is_file() {\n" +
		"                 Some(dent)\n+            } else {\n+                None\n             }\n         }\n     }\n"
	refuses(t, "src/main.rs", rg+"\n"+applied, rgEdit, "a line the hunk removes is not in the file")

	// Applied for real (the file's block is the new side, nothing else
	// frames the old one): a success that changes nothing.
	done := strings.Replace(rg, "            if !dent.file_type().map_or(true, |x| x.is_file()) {\n                None\n            } else {\n                Some(dent)\n            }\n",
		"            if dent.depth() == 0 {\n                return Some(dent);\n            }\n            if ft.is_file() {\n                Some(dent)\n            } else {\n                None\n            }\n", 1)
	res, err := repair.Repair(rgEdit, repair.Options{Target: "src/main.rs", FS: patch.MapFS{"src/main.rs": done}})
	if err != nil || res.Status != repair.StatusAlreadyApplied {
		t.Fatalf("status %v, err %v; want already_applied", res.Status, err)
	}
}

// The held-out corpus's drop_removed_edge family, from the same commit:
// the hunk's three lines of leading context are whole, and the first line
// of its removed block is left out. Kept before (40 of 40 such cases
// applied): the file's `if (charset) {` stayed, the block's closing brace
// went. With three lines before it the left-out line cannot be context
// the hunk lost; a removal it forgot is as likely, so it is refused. With
// two lines before it (the third lost), it is context and is kept.
func TestRemovalGapAfterFullContext(t *testing.T) {
	head := "--- a/lib/response.js\n+++ b/lib/response.js\n@@ -9,9 +9,7 @@ res.format = function(obj){\n"
	tail := "-      type += '; charset=' + charset;\n-    }\n+    if (charset) type += '; charset=' + charset;\n     this.set('Content-Type', type);\n     obj[key](req, this, next);\n   } else if (fn) {\n"
	refuses(t, "lib/response.js", expressFormat,
		head+"   if (key) {\n     var type = normalizeType(key).value;\n     var charset = mime.charsets.lookup(type);\n"+tail, "forgot to remove")
	lost := "   if (key) {\n     var type = normalizeType(key).value;\n-    if (charset) {\n" + tail
	want := strings.Replace(expressFormat, "    if (charset) {\n      type += '; charset=' + charset;\n    }\n", "    if (charset) type += '; charset=' + charset;\n", 1)
	if got, _, err := repairOne(t, "lib/response.js", expressFormat, head+lost); err != nil || got != want {
		t.Errorf("context lost before a removal: err %v, got\n%s", err, got)
	}
}

// From expressjs/express@95bfda1ff0b5, lib/express/response.js (lines 129
// to 156): sendfile's readFile wrapped in a stat.
const expressSendfile = `http.ServerResponse.prototype.sendfile = function(path, fn){
    var self = this;

    function error(err) {
        delete self.headers['Content-Disposition'];
        if (fn) {
            fn(err, path);
        } else {
            self.req.next(err);
        }
    }

    fs.readFile(path, function(err, buf){
        if (err) return error(err);
        self.contentType(path);
        self.send(buf);
        fn && fn(null, path);
    });
};

/**
 * Set _Content-Type_ response header passed through ` + "`mime.type()`" + `.
 *
 * Examples:
 *
 *     var filename = 'path/to/image.png';
 *     res.contentType(filename);
`

// The commit's hunk, at its place in expressSendfile.
const sendfileHead = "--- a/lib/express/response.js\n+++ b/lib/express/response.js\n@@ -10,11 +10,14 @@ http.ServerResponse.prototype.sendfile = function(path, fn){\n"

var sendfileHunk = []string{
	"         }",
	"     }",
	" ",
	"-    fs.readFile(path, function(err, buf){",
	"+    fs.stat(path, function(err, stat){",
	"         if (err) return error(err);",
	"-        self.contentType(path);",
	"-        self.send(buf);",
	"-        fn && fn(null, path);",
	"+        fs.readFile(path, function(err, buf){",
	"+            if (err) return error(err);",
	"+            self.contentType(path);",
	"+            self.send(buf);",
	"+            fn && fn(null, path);",
	"+        });",
	"     });",
	" };",
	" ",
}

func sendfileEdit(drop ...int) string {
	var b strings.Builder
	b.WriteString(sendfileHead)
	for i, l := range sendfileHunk {
		if !slices.Contains(drop, i) {
			b.WriteString(l + "\n")
		}
	}
	return b.String()
}

func sendfileWant(t *testing.T) string {
	t.Helper()
	want, _, err := repairOne(t, "lib/express/response.js", expressSendfile, sendfileEdit())
	if err != nil || !strings.Contains(want, "fs.stat(path") || strings.Count(want, "self.contentType(path);") != 1 {
		t.Fatalf("the whole hunk: err %v, got\n%s", err, want)
	}
	return want
}

// The held-out corpus's truncated_mid family: the hunk cut off after the
// context line between its two changes, as an answer that ran out of room
// is, its header counts intact (11 old, 14 new; the body has 5 and 5).
// Applied before (40 of 40 such cases): readFile became stat and the rest
// of the change was lost. A whole hunk of git's ends with 3 context lines
// unless it reaches the end of the file; this one ends with 1, and what it
// lacks (6 old, 9 new lines) cannot be 2 context lines it lost.
func TestCutAfterContextRefused(t *testing.T) {
	refuses(t, "lib/express/response.js", expressSendfile, sendfileEdit(6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 16, 17), "may have been cut off")
	// Its twin: the last context line lost, both sides one short of the
	// counts, which trailing context it lost explains.
	want := sendfileWant(t)
	if got, _, err := repairOne(t, "lib/express/response.js", expressSendfile, sendfileEdit(17)); err != nil || got != want {
		t.Errorf("trailing context lost: err %v, got\n%s", err, got)
	}
	// The same cut with counts one line more than its body on each side:
	// a context line it lost, and the first change is all there is.
	cut := strings.Replace(sendfileEdit(6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 16, 17), "-10,11 +10,14", "-10,6 +10,6", 1)
	wantCut := strings.Replace(expressSendfile, "fs.readFile(path, function(err, buf){\n        if", "fs.stat(path, function(err, stat){\n        if", 1)
	if got, _, err := repairOne(t, "lib/express/response.js", expressSendfile, cut); err != nil || got != wantCut {
		t.Errorf("one context line lost after the cut: err %v, got\n%s", err, got)
	}
}

// The held-out corpus's drop_removed_mid family: the first removed line
// of the second change (`self.contentType(path);`, right after the
// context line between the changes) left out. Kept before as context the
// hunk lost (33 of 40 such cases applied): the result called contentType
// inside the stat callback and again in the new readFile. The header
// counts 11 old lines and the body has 10; its new side is whole (14):
// the line was a removal, so the hunk is refused. Its twin, a context line
// lost before the first change, leaves both sides one short and is kept.
func TestRemovalForgottenBetweenChanges(t *testing.T) {
	refuses(t, "lib/express/response.js", expressSendfile, sendfileEdit(6), "forgot to remove")
	want := sendfileWant(t)
	if got, _, err := repairOne(t, "lib/express/response.js", expressSendfile, sendfileEdit(1)); err != nil || got != want {
		t.Errorf("context lost: err %v, got\n%s", err, got)
	}
	// Without counts nothing tells the two apart: the line is kept, as
	// before (a known limit).
	bare := strings.Replace(sendfileEdit(6), "@@ -10,11 +10,14 @@", "@@ @@", 1)
	if _, _, err := repairOne(t, "lib/express/response.js", expressSendfile, bare); err != nil {
		t.Errorf("bare header: %v", err)
	}
}
