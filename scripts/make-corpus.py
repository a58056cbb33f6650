#!/usr/bin/env python3
"""Build testdata/corpus/ from this repository's own history, so that the
tests behind the corpus figures run in a bare clone (internal/testdata
falls back to it when ../shared/data is absent).

  diffxyz-dev.jsonl.gz    real edits: one row per (commit, modified file)
                          of Go files, with git's diff
  malformed-dev.jsonl.gz  each of those edits broken the ways models break
                          diffs (families below); `expected` is the new
                          file, or null for the must-refuse families

Deterministic: the commits are the first-parent history up to PIN, files of
at most 400 lines changed in 1 to 4 hunks, every STEP-th kept.

  python3 scripts/make-corpus.py        # from the repository root
"""
import gzip, json, os, random, re, subprocess, sys

PIN = "ecd570f"  # the newest commit the corpus is made from
STEP = 3
MAX_ROWS = 40
OUT = "testdata/corpus"


def git(*args):
    return subprocess.run(["git", *args], check=True, capture_output=True).stdout.decode("utf-8", "surrogateescape")


def size_class(n):
    return "small" if n < 100 else "medium" if n < 300 else "large"


def triples():
    rows = []
    commits = git("rev-list", "--first-parent", "--reverse", "--no-merges", PIN).split()
    for c in commits:
        parent = c + "^"
        try:
            names = git("diff", "--name-status", "--no-renames", parent, c).splitlines()
        except subprocess.CalledProcessError:
            continue  # the root commit
        for line in names:
            st, path = line.split("\t", 1)
            if st != "M" or not path.endswith(".go"):
                continue
            old = git("show", f"{parent}:{path}")
            new = git("show", f"{c}:{path}")
            if old.count("\n") > 400 or "\r" in old + new or not old.endswith("\n") or not new.endswith("\n"):
                continue
            d = git("diff", "--no-color", "--no-ext-diff", "-U3", parent, c, "--", path)
            hunks = len(re.findall(r"^@@ ", d, re.M))
            if not 1 <= hunks <= 4:
                continue
            body = [l for l in d.splitlines() if not l.startswith(("+++", "---"))]
            rows.append({
                "id": f"patchbench@{c[:12]}:{path}", "repo": "patchbench/patchbench", "commit": c,
                "path": path, "lang": "go",
                "old_code": old, "new_code": new, "udiff": d,
                "n_added": sum(l.startswith("+") for l in body), "n_removed": sum(l.startswith("-") for l in body),
                "n_hunks": hunks, "size_class": size_class(old.count("\n")),
            })
    return rows[::STEP][:MAX_ROWS]


def split(d):
    """Header lines and hunks (each a header line and its body lines)."""
    lines = d.split("\n")
    if lines and lines[-1] == "":
        lines.pop()
    head, hunks = [], []
    for l in lines:
        if l.startswith("@@"):
            hunks.append([l])
        elif hunks:
            hunks[-1].append(l)
        else:
            head.append(l)
    return head, hunks


def join(head, hunks):
    return "\n".join(head + [l for h in hunks for l in h]) + "\n"


def ctx(h, fn, blank):
    out = [h[0]]
    for l in h[1:]:
        if l.startswith(" ") and (l == " ") == blank:
            l = fn(l)
        out.append(l)
    return out


HDR = re.compile(r"^@@ -(\d+)(?:,(\d+))? \+(\d+)(?:,(\d+))? @@(.*)$")


def families(t, rnd):
    head, hunks = split(t["udiff"])
    fam = {}
    fam["ctx_no_space"] = join(head, [ctx(h, lambda l: l[1:], False) for h in hunks])
    fam["blank_ctx_no_space"] = join(head, [ctx(h, lambda l: "", True) for h in hunks])

    def rehead(f):
        out = []
        for h in hunks:
            m = HDR.match(h[0])
            a, b, c, d, rest = int(m[1]), int(m[2] or 1), int(m[3]), int(m[4] or 1), m[5]
            out.append([f(a, b, c, d, rest)] + h[1:])
        return out
    fam["bad_counts"] = join(head, rehead(lambda a, b, c, d, r: f"@@ -{a},{b + 2} +{c},{max(d - 1, 0)} @@{r}"))
    k = rnd.choice([-7, -3, 4, 9])
    fam["bad_starts"] = join(head, rehead(lambda a, b, c, d, r: f"@@ -{max(a + k, 1)},{b} +{max(c + k, 1)},{d} @@{r}"))
    fam["bare_headers"] = join(head, [["@@ @@"] + h[1:] for h in hunks])
    fam["trailing_ws"] = join(head, [ctx(h, lambda l: l + "  ", False) for h in hunks])
    fam["fenced"] = "Here is the change:\n\n```diff\n" + t["udiff"] + "```\n\nThis keeps the rest of the file as it is.\n"
    fam["no_file_headers"] = join([], hunks)
    fam["no_ab_prefix"] = join([l.replace("--- a/", "--- ").replace("+++ b/", "+++ ") for l in head], hunks)
    fam["crlf"] = t["udiff"].replace("\n", "\r\n")
    if len(hunks) > 1:
        fam["hunks_reversed"] = join(head, hunks[::-1])
    return fam


def stale(t):
    """The edit against a file whose removed lines have changed since:
    nothing in the file is what the patch removes."""
    removed = [l[1:] for l in t["udiff"].splitlines() if l.startswith("-") and not l.startswith("---")]
    if not removed or any(not r.strip() for r in removed):
        return None
    old = t["old_code"]
    for r in set(removed):
        old = old.replace(r + "\n", r + " // changed since\n")
    return old


def main():
    os.makedirs(OUT, exist_ok=True)
    rows = triples()
    rnd = random.Random(26)
    mal = []
    for t in rows:
        for name, p in families(t, rnd).items():
            mal.append({"id": f"{t['id']}#{name}", "family": name, "path": t["path"], "lang": t["lang"],
                        "old_code": t["old_code"], "patch": p, "expected": t["new_code"]})
        s = stale(t)
        if s is not None:
            mal.append({"id": f"{t['id']}#stale_base", "family": "stale_base", "path": t["path"], "lang": t["lang"],
                        "old_code": s, "patch": t["udiff"], "expected": None})
    for name, data in (("diffxyz-dev.jsonl.gz", rows), ("malformed-dev.jsonl.gz", mal)):
        with gzip.GzipFile(os.path.join(OUT, name), "wb", mtime=0) as f:
            for r in data:
                f.write((json.dumps(r, ensure_ascii=False, sort_keys=True) + "\n").encode())
        print(f"{OUT}/{name}: {len(data)} rows", file=sys.stderr)


if __name__ == "__main__":
    main()
