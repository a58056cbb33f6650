#!/usr/bin/env python3
"""Plain whole-file BM25, the peer of loc-signals.sh.

For each case of CASES.jsonl (as `patchbench loc build` writes them), read
the code files of its repository at base_commit with one `git cat-file
--batch` (the extensions patchbench indexes), rank the files by BM25
(k1 = 1.2, b = 0.75) over lower-cased words (runs of letters, digits and
_), and print the mean file Acc@1/3/5/10: a case counts at k when every
ground-truth file is in the first k. No index is cached: each case reads
and indexes its tree, as a cold run does.

Usage: bm25_files.py CASES.jsonl REPOS_DIR
"""
import json
import math
import re
import subprocess
import sys
from collections import Counter

CODE = re.compile(r"\.(py|pyi|go|js|jsx|mjs|cjs|ts|mts|cts|tsx|java|rs|kt|kts)$")
WORD = re.compile(r"[A-Za-z0-9_]+")
KS = (1, 3, 5, 10)


def files_at(git_dir, commit):
    ls = subprocess.run(["git", "--git-dir", git_dir, "ls-tree", "-r", "-z", "--full-tree", commit],
                        check=True, capture_output=True).stdout
    entries = []
    for rec in ls.split(b"\0"):
        if not rec:
            continue
        meta, path = rec.split(b"\t", 1)
        mode, typ, oid = meta.split()
        path = path.decode()
        if typ == b"blob" and CODE.search(path):
            entries.append((oid.decode(), path))
    proc = subprocess.run(["git", "--git-dir", git_dir, "cat-file", "--batch"],
                          input="".join(o + "\n" for o, _ in entries).encode(), check=True,
                          capture_output=True).stdout
    out, pos = {}, 0
    for oid, path in entries:
        nl = proc.index(b"\n", pos)
        head = proc[pos:nl].split()
        pos = nl + 1
        if len(head) < 3:
            continue
        size = int(head[2])
        out[path] = proc[pos:pos + size].decode("utf-8", "replace")
        pos += size + 1
    return out


def rank(files, query):
    docs = {p: Counter(w.lower() for w in WORD.findall(t)) for p, t in files.items()}
    lens = {p: sum(c.values()) for p, c in docs.items()}
    avg = sum(lens.values()) / max(len(lens), 1)
    df = Counter()
    for c in docs.values():
        df.update(c.keys())
    n = len(docs)
    q = Counter(w.lower() for w in WORD.findall(query))
    scores = {}
    for p, c in docs.items():
        s = 0.0
        for t in q:
            tf = c.get(t)
            if not tf:
                continue
            idf = math.log(1 + (n - df[t] + 0.5) / (df[t] + 0.5))
            s += idf * tf * 2.2 / (tf + 1.2 * (0.25 + 0.75 * lens[p] / avg))
        if s > 0:
            scores[p] = s
    return sorted(scores, key=lambda p: (-scores[p], p))


def main():
    cases = [json.loads(l) for l in open(sys.argv[1]) if l.strip()]
    # LocAgent's file-level gold: the files holding a ground-truth
    # function; a case without one is left out, as patchbench scores it.
    cases = [c for c in cases if any(f.get("functions") for f in c["ground_truth"]["files"].values())]
    hits = Counter()
    for c in cases:
        gold = {p for p, f in c["ground_truth"]["files"].items() if f.get("functions")}
        ranked = rank(files_at(f"{sys.argv[2]}/{c['repo']}", c["base_commit"]), c["query"])
        for k in KS:
            hits[k] += gold <= set(ranked[:k])
    print(" ".join(f"file_acc@{k}={hits[k] / len(cases):.3f}" for k in KS))


if __name__ == "__main__":
    main()
