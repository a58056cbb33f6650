package patch

// The one description of each format that every prompt naming it uses
// (Diff-XYZ's format prompts, APE-Bench's edit request, the MCP tools), so
// that a model is told the same thing about a format wherever it is asked
// for one. They describe an edit of one existing file.

// formatNames are what prompts call the formats.
var formatNames = map[Format]string{
	UDiff:         "a unified diff (udiff)",
	UDiffH:        "a unified diff with bare hunk headers (udiff-h)",
	UDiffL:        "a unified diff with ADD/DEL/CON line markers (udiff-l)",
	SearchReplace: "search/replace blocks (search-replace)",
	V4A:           "a V4A patch (the apply_patch format)",
}

// formatDescriptions describe each format's syntax, for a model reading
// or writing an edit of one file.
var formatDescriptions = map[Format]string{
	UDiff: "A unified diff is what `git diff` and `diff -u` print. It starts with two file header lines, `--- a/PATH` for the old file and `+++ b/PATH` for the new one. Then come the hunks, one for each group of nearby changes, from the top of the file to the bottom. A hunk starts with a header line `@@ -A,B +C,D @@`: the hunk covers B lines of the old file from line A on, and D lines of the new file from line C on. Each following line of the hunk starts with one character that says what it is:\n" +
		"\n" +
		"- a space: a context line, the same in both versions;\n" +
		"- `-`: a line of the old file that is removed;\n" +
		"- `+`: a line of the new file that is added.\n" +
		"\n" +
		"The rest of the line is the line of the file, exactly, with its indentation. Each hunk keeps three unchanged lines of context before and after its changes (fewer at the start or end of the file). B counts the context and removed lines of the hunk, D the context and added lines.",
	UDiffH: "This format is a unified diff, like the output of `git diff`, except that hunk headers carry no line numbers. It starts with two file header lines, `--- a/PATH` for the old file and `+++ b/PATH` for the new one. Then come the hunks, one for each group of nearby changes, from the top of the file to the bottom. A hunk starts with the header line `@@ ... @@`. Each following line of the hunk starts with one character that says what it is:\n" +
		"\n" +
		"- a space: a context line, the same in both versions;\n" +
		"- `-`: a line of the old file that is removed;\n" +
		"- `+`: a line of the new file that is added.\n" +
		"\n" +
		"The rest of the line is the line of the file, exactly, with its indentation. Since there are no line numbers, a hunk is found in the file by its context and removed lines: keep at least three unchanged lines of context before and after the changes, and more where needed, so that they match only one place in the file.",
	UDiffL: "This format is a unified diff, like the output of `git diff`, except that every line of a hunk starts with a marker word instead of a single character. It starts with two file header lines, `--- a/PATH` for the old file and `+++ b/PATH` for the new one. Then come the hunks, one for each group of nearby changes, from the top of the file to the bottom. A hunk starts with a header line `@@ -A,B +C,D @@`: the hunk covers B lines of the old file from line A on, and D lines of the new file from line C on. Each following line of the hunk starts with a marker and one space:\n" +
		"\n" +
		"- `CON `: a context line, the same in both versions;\n" +
		"- `DEL `: a line of the old file that is removed;\n" +
		"- `ADD `: a line of the new file that is added.\n" +
		"\n" +
		"The rest of the line is the line of the file, exactly, with its indentation. Each hunk keeps three unchanged lines of context before and after its changes (fewer at the start or end of the file). B counts the context and removed lines of the hunk, D the context and added lines.",
	SearchReplace: "An edit is written as search/replace blocks. First comes the path of the file on a line of its own. Then come one or more blocks, one for each group of nearby changes, from the top of the file to the bottom. Each block is:\n" +
		"\n" +
		"    <<<<<<< SEARCH\n" +
		"    lines of the old file, copied exactly\n" +
		"    =======\n" +
		"    the lines that replace them\n" +
		"    >>>>>>> REPLACE\n" +
		"\n" +
		"The SEARCH part must match a run of consecutive lines of the file character for character, with their indentation, and must match only one place in the file: include enough unchanged lines around the change to make it unique. The REPLACE part is what those lines become, including the unchanged lines that were copied into the SEARCH part.",
	V4A: "A V4A patch, the format of the apply_patch tool, starts with the line `*** Begin Patch` and ends with the line `*** End Patch`. A modified file is introduced by `*** Update File: PATH`. Then come its chunks, one for each group of nearby changes, from the top of the file to the bottom. A chunk starts with a line `@@`, which may be followed by a space and a line of the file before the chunk (such as the enclosing class or function header) that helps to find it. Each following line of the chunk starts with one character that says what it is:\n" +
		"\n" +
		"- a space: a context line, the same in both versions;\n" +
		"- `-`: a line of the old file that is removed;\n" +
		"- `+`: a line of the new file that is added.\n" +
		"\n" +
		"The rest of the line is the line of the file, exactly, with its indentation. There are no line numbers: a chunk is found in the file by its context and removed lines, so keep three unchanged lines of context before and after the changes, and more where needed, so that they match only one place in the file.",
}

// FormatName returns how a prompt names format f, for example "a unified
// diff (udiff)"; "" for a format that is not one of Formats.
func FormatName(f Format) string { return formatNames[f] }

// FormatDescription returns the description of format f's syntax that
// every prompt naming the format gives: its lines, markers and how its
// hunks are placed, for an edit of one existing file; "" for a format
// that is not one of Formats.
func FormatDescription(f Format) string { return formatDescriptions[f] }
