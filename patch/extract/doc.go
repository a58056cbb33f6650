// Package extract finds the edit in free-form language-model output.
//
// [Extract] takes a model's whole answer (prose, code fences, tags, tool-call
// wrappers) and returns the edit in it as text ready for a parser of package
// patch, the format [patch.Detect] finds in that text, a one-line account of
// where the edit came from, and every candidate it considered with the
// reason it was or was not taken.
//
// # Candidates
//
// The text is read line by line ("\n" ends a line; a "\r" before it stays
// part of the line, so CRLF edits come out as CRLF). End-of-text tokens at
// the very end ("</s>", "<|im_end|>", "<|endoftext|>", "<|eot_id|>", ...)
// are removed first. Then these are recognised, in the order they start:
//
//   - Fences: a line of three or more '`' or '~' (with or without an info
//     string such as diff, patch or python) opens a fence; a line of the same
//     character, at least as long, with nothing after it and indented no
//     deeper, closes it. An unterminated fence runs to the end of the text.
//     At the top level a fence may be indented (list items); when every
//     content line carries the fence's indentation it is removed. Fences
//     nest: a fence's content is searched again, so a ```diff inside a
//     ````markdown fence, or inside another ``` fence that a closing line
//     with an info string could not end, is found. Nested structures must
//     start in column 0, so the context lines of a diff (which start with a
//     space) never open one. At the top level, a line of a unified diff's
//     hunk (a context, added or removed line under a hunk header with only
//     hunk lines between) opens no structure either: a document's example
//     fence, envelope or heredoc, or a Go string holding a JSON-escaped
//     envelope, is a line of the file the diff edits, as git apply reads it.
//   - Tags: <patch>...</patch> and <diff>...</diff>, with content on the tag
//     lines or between them; an unterminated tag runs to the end. A stray
//     closing tag is prose.
//   - Heredocs: a shell line such as "apply_patch <<'EOF'" or
//     "python3 apply_patch.py <<EOF" whose delimiter line ("EOF") follows.
//     The delimiter is quoted or an upper-case word, so that C++'s
//     "cout << x" is not taken for one, unless the line's command takes a
//     heredoc as a patch or a file (git apply, patch, apply_patch,
//     patchbench apply, cat, tee): "apply_patch <<eof", and such a line
//     indented in a fence. Without the delimiter line it is prose. The
//     line is read as the shell reads it (quotes, "<<-", "\EOF"): each
//     heredoc it opens is a candidate, their bodies one after another.
//   - V4A envelopes: "*** Begin Patch" (alone on its line, or after an
//     opening quote as in apply_patch "*** Begin Patch) to "*** End Patch".
//     An envelope written as a JSON string with \n escapes on one line, as in
//     a tool call, is unescaped. The text of a V4A candidate is always a
//     whole envelope: a missing "*** End Patch" is added (and said in the
//     reason), and several envelopes merge into one.
//   - Search-replace blocks: "<<<<<<< SEARCH" to ">>>>>>> REPLACE". The
//     block's path is the nearest line above that is not blank and not a
//     fence line (looking past the fence the block sits in), when it looks
//     like a path: "src/a.py", "### src/a.py", "**src/a.py**", "File:
//     src/a.py", "`src/a.py`", or a fence info string "python:src/a.py". It
//     is written as a bare path line before the block. A path has no spaces,
//     does not end in ':' or '.', and holds a letter or digit.
//   - Raw diffs, in top-level text outside all of the above: from a
//     "diff --git" line, a "--- " line followed by "+++ ", an "@@" hunk
//     header, or GNU diff's "Binary files X and Y differ", to the last line
//     that belongs to the diff (see below).
//
// Fence, tag and heredoc contents are candidates as a whole; when such a
// content holds a unified diff, prose lines before the first diff header are
// dropped (a parser would skip them anyway). Nothing else is changed: content
// lines are never trimmed, re-indented or re-ended.
//
// # Where a raw diff ends
//
// Header lines, hunk headers and lines starting with '+', '-', ' ' or '\'
// (or ADD, DEL, CON for udiff-l) belong to the diff. Other lines are
// ambiguous: a context line that lost its leading space looks like prose.
// A run of such lines (blank or not) inside a hunk is decided as follows:
//
//   - while the hunk header's line counts ("@@ -1,7 +1,8 @@") are not yet
//     met, the lines are context lines (empty ones, or ones that lost their
//     leading space), except that at the end of the text a blank line
//     followed by more text ends the diff;
//   - otherwise, when the run ends the text, it is not part of the diff: a
//     diff ends at its last diff-like line;
//   - when a diff line follows the run and the hunk has counts (met), the run
//     belongs to the diff only if it is blank lines before a new header;
//   - when a diff line follows and the header has no counts, the run belongs
//     to the diff unless a blank line in it is followed by a non-blank one:
//     a blank line followed by prose ends the diff.
//
// A line "-- " followed by git's version ("2.39.2") where the hunk's counts
// are met, or in a hunk without counts, is the signature git format-patch
// ends a mail with: the diff ends before it (within the counts it is a
// removed line "- "). A git header that renames, copies, changes a mode,
// creates or deletes a file is a unit of change without any hunk.
//
// So "This should fix it." after a blank line is never part of the diff,
// and neither is trailing prose at the end of the text. A non-diff line
// directly under a hunk line, followed by more diff lines, is taken as a
// context line unless the hunk's counts are already met. The price: in a
// hunk without counts, a context line that lost its leading space right
// after a blank line ends the diff. The blocks of a "GIT binary patch" (a
// "literal N" or "delta N" line, base85 data lines, an empty line; twice
// at most) belong to the diff. Fences and tags have no such ambiguity;
// their content is kept whole.
//
// # Choosing
//
// A candidate is an edit when patch.Detect finds a format in its text and it
// has at least one unit of change: a hunk header followed by a '+' or '-'
// (ADD or DEL) line, a "GIT binary patch", a SEARCH block with its divider,
// or a V4A file section.
// An edit that contains another edit (a <patch> tag around a ```diff fence,
// a bash fence around a heredoc around an envelope) gives way to the inner
// one. Edits inside <think>...</think> reasoning are used only when the
// answer after it has none.
//
// The format family (unified diff, udiff-l, search-replace or V4A) is that
// of the best edit: explicit containers (tags, envelopes, heredocs,
// search-replace blocks, fences labelled diff or patch) before other fences
// before raw text, then the earliest. Every edit of that family is taken, in
// order, and merged into one text: several fences for several files, blocks
// spread over prose. An edit whose text repeats one already taken (ignoring
// trailing whitespace) is dropped, except a search-replace block: blocks
// apply one after another, so the same block twice may edit two places, and
// the applier decides. Code fences without edit markers, such as
// the full new file shown beside the diff, are never taken. Two different
// edits of one file, such as a first attempt and its correction, are both
// kept: which one the model meant is not extraction's call, and Candidates
// lists both.
//
// The prose after each edit (lines outside every candidate, up to the next
// edit of any format and file, or the end) is read for what it says of
// that edit. A line that takes it back makes Extract return an error
// wrapping [ErrRetracted]: applying the answer would apply the withdrawn
// edit, and which part of it a correction replaces is not written down.
// How far a line reaches depends on how plainly it points at the edit:
//
//   - Said void ("that's wrong", "scratch that", "on second thought",
//     "ignore the previous diff", "disregard the above", "my mistake";
//     "ignore that" only ending its clause): whatever follows, another
//     file's edit, another format, or nothing at all ("Scratch that — no
//     change is needed", where the phrase opens the line).
//   - Replaced ("use this instead", "here is the corrected patch", "the
//     fixed version:"; and, unless the line adds to the answer ("also",
//     "additionally", "next", "another", "as well", "forgot"), a line
//     opening with "Correction", or a reference to the edit with a fault
//     said of it, only words such as "was" or "patch" between: "the
//     earlier patch doesn't work", "my previous diff had a bug"): when
//     any edit follows.
//   - An apology ("oops", "sorry"), unless the line adds to the answer:
//     when an edit of the same file follows.
//   - Words that point at no edit ("instead" but "instead of", "the fixed
//     version of total", a fault beside a reference with other words
//     between: "the above handles the incorrect sign"): only when the next
//     edit, of the same file, changes an old line the one before changed
//     (the old side without the context both sides share, or the lines
//     beside an insertion): the same lines changed twice are a
//     replacement; other lines, a second change ("Now make total use sum
//     instead:" merges both).
//
// A line that offers the next edit as another way of making the change
// before ("Alternatively, ...", a line opening with "Or", "A better fix:",
// "a simpler approach", "another option", "Option 2:") makes Extract
// return an error wrapping [ErrAlternatives]: two ways of making one
// change are not two changes. When the alternatives are the whole answer
// and its prose names one to use ("Use the second one.", "I recommend
// option 1", "The former is better."), that one alone is taken; two
// names, or other edits beside the alternatives (which may belong to one
// of them), refuse. The next edit restating the one before (the same
// text, or the same lines changed the same way in another format: "Or,
// as a block:") is neither.
//
// An edit left out for its format that changes a file no chosen edit
// names (a diff for a.py and a SEARCH/REPLACE block for b.py) makes
// Extract return an error wrapping [ErrMixed]: the chosen edits alone would
// be half the answer. Both formats for one file are alternatives, and the
// preferred one is taken.
//
// When nothing is an edit, Extract returns an error wrapping [ErrNoEdit]
// together with a Result whose Candidates say what was seen; empty input
// gives [ErrEmpty].
//
// # Samples: edits inside a file the answer shows
//
// An edit inside a file the answer shows whole is a string or an example
// of that file, not an edit of the file it names, and the file shown is no
// edit either:
//
//   - Code: in a fence labelled with a programming language (python, go,
//     ...), without a label, or labelled text, an edit with lines of that
//     code both before and after it outside every structure, blank and
//     path lines aside: a SEARCH/REPLACE block, a V4A envelope or a
//     JSON-escaped one in a string of a test, or the fence's own unified
//     diff. When one edit of a fence is such a string, every edit of it
//     is set aside.
//   - Data: in a JSON fence (or JSON at the top level, one line or a
//     block of lines that opens with "{" or "["), a V4A envelope in JSON
//     that is no apply_patch call. JSON with a field that says what a
//     test expects (expected..., want..., assert..., case, cases,
//     test_cases, tests, golden, fixture, fixtures, and output or outputs
//     holding a string: a list there is the items of a Responses API
//     response) is data whatever tool it names: a fixture of the tool,
//     not a call. Other JSON is a call when it names apply_patch ("name":
//     "apply_patch", "cmd": ["apply_patch", ...], a shell command running
//     apply_patch on a heredoc) or a tool called patch ("tool": "patch"),
//     or when it has only a call's fields: input, patch, arguments, args, parameters,
//     params, cmd, command, type, id, call_id, tool_call_id, workdir,
//     cwd, timeout, timeout_ms and explanation (VS Code Copilot's
//     apply_patch takes input and explanation). JSON with a test's field
//     in a code fence or in prose is data too.
//   - Documents: a fence labelled markdown (md, rst, asciidoc, org, ...)
//     that holds text of its own before its first edit is a document the
//     answer shows whole, and every edit in it (a ```diff fence, a
//     heredoc, a block) an example of that document, when the answer
//     names it as a file (a path in its info string such as
//     "markdown:README.md", a path line right above it, or a document's
//     name, README, CHANGELOG, CONTRIBUTING or a .md, .rst, .txt, .adoc
//     file, in the three lines of prose above it) and its edits do not
//     all change that document ("Here is the change to README.md:" above
//     a wrapper holding a diff of README.md is the answer: a document
//     holds no change of itself). Named by nothing, it is a document when
//     its headings are a README's (Installation, Usage, License,
//     Contributing, Getting started, ...; in column 0, outside the
//     structures in it) or it shows a badge; when its text also says
//     what an answer says of its edit ("Here is", "the fix", "I"), the
//     answer is refused all the same, since which it is is not written
//     down. Otherwise (a title, a sentence and the edit) it is the answer
//     wrapped whole, and its edits are the answer's.
//   - Files the answer writes: a heredoc whose shell line sends it to a
//     file ("cat > tests/fixtures/a.patch <<'EOF'", "tee F <<EOF", "cat
//     <<EOF | tee F") when no command after it applies that file
//     forward: a fixture saved, with the shell fence around it. A
//     command applies a file when it is git apply or git am (after git's
//     own options: git -C repo apply), GNU patch (patch -p1 < F, -i F,
//     --input=F), apply_patch (< F), patchbench apply, or one of those in
//     sh -c or bash -c, or cat F piped to one. The commands after the
//     heredoc on its line and on the lines after it count (a line ending
//     in a backslash goes on), until one writes the file again, and so
//     does prose, before the fence too ("Save this as fix.patch and run
//     `git apply fix.patch`:"), in backquotes or among its words; the
//     shell's commands decide before the prose, and code of another
//     language counts not at all (a test that applies the fixture it
//     saves, os.system("git apply F")). Lines in a heredoc's body are
//     data, not commands ("cat > setup.sh <<'EOF'" holding "git apply
//     fix.patch"), unless a later command runs the script they make
//     ("bash setup.sh", "./setup.sh"): then its commands decide.
//   - Heredocs the shell does not apply forward: fed to an applier that
//     applies it in reverse (git apply -R, patch -R) or writes none of
//     the files it names (git apply --check, --stat or --cached, patch
//     --dry-run or -o), on its own line or through a pipe ("cat <<EOF |
//     git apply -R"), or saved to a file that is only applied so. Such a
//     heredoc is no edit of the answer, and is refused like a sample.
//
// Shell fences run their heredocs and diff fences hold diffs, so they are
// not read so. When every edit of the answer is such a sample, Extract
// returns an error wrapping [ErrSample], naming the first and the file
// that holds it. When some are and others are edits, it returns an error
// wrapping [ErrPartSample]: the file shown is part of what the answer
// means, and applying the other edits alone would drop it without a word.
// The same holds for a document named as a file with no edit in it (the
// updated README.md shown whole) beside edits none of which changes it.
// A code fence without edits beside them is read as before (the code
// shown, the file the diff makes): only a document the answer names is
// known to be a file it shows whole.
//
// # Whole-file answers
//
// [Answer] reads an answer that is a whole file rather than an edit (the
// apply and anti-apply tasks of Diff-XYZ) with the same fence lines: the
// content of a fence that opens the answer, up to its last closing line, or
// of a fence in short prose, else the whole text, so that a file's own
// underlines and doc examples never cut it.
package extract
