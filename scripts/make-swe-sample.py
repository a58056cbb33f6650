#!/usr/bin/env python3
"""Build testdata/swe-sample.jsonl and testdata/swe-sample-preds.jsonl: a
SWE-bench-schema dataset of commits of this repository (repo
patchbench/patchbench; patch: the commit's change to non-test Go files,
test_patch: to its tests) and predictions that are those patches broken
the ways models break them, for README's offline quick start of
`patchbench swe eval --no-tests`.

  python3 scripts/make-swe-sample.py        # from the repository root
"""
import json, re, subprocess

PIN = "ecd570f"  # the newest commit the sample is made from
N = 6


def git(*a):
    return subprocess.run(["git", *a], check=True, capture_output=True).stdout.decode()


def main():
    rows = []
    for c in git("rev-list", "--first-parent", "--no-merges", PIN).split():
        names = git("diff", "--name-status", "--no-renames", c + "^", c).split("\n")
        mods = [l.split("\t")[1] for l in names if l.startswith("M\t") and l.endswith(".go")]
        src = [p for p in mods if not p.endswith("_test.go")]
        tests = [p for p in mods if p.endswith("_test.go")]
        if not 1 <= len(src) <= 2 or not tests:
            continue
        patch = git("diff", "--no-color", c + "^", c, "--", *src)
        if not 1 <= len(re.findall(r"^@@ ", patch, re.M)) <= 4 or len(patch) > 6000:
            continue
        rows.append({
            "instance_id": f"patchbench__patchbench-{c[:10]}", "repo": "patchbench/patchbench",
            "base_commit": git("rev-parse", c + "^").strip(), "patch": patch,
            "test_patch": git("diff", "--no-color", c + "^", c, "--", *tests),
            "problem_statement": git("log", "-1", "--format=%B", c).strip(),
            "FAIL_TO_PASS": [], "PASS_TO_PASS": [], "version": "0", "environment_setup_commit": c,
        })
        if len(rows) == N:
            break
    preds = []
    for i, r in enumerate(rows):
        p = r["patch"]
        kind = i % 3
        if kind == 1:  # a model's answer: prose, a fence, lost context spaces
            body = "\n".join(l[1:] if l.startswith(" ") and l.strip() else l for l in p.split("\n"))
            p = "Here is the fix:\n\n```diff\n" + body + "```\n"
        elif kind == 2 and i == 2:
            p = ""  # no answer
        preds.append({"instance_id": r["instance_id"], "model_name_or_path": "sample", "model_patch": p})
    with open("testdata/swe-sample.jsonl", "w") as f:
        for r in rows:
            f.write(json.dumps(r, sort_keys=True) + "\n")
    with open("testdata/swe-sample-preds.jsonl", "w") as f:
        for r in preds:
            f.write(json.dumps(r, sort_keys=True) + "\n")
    print(f"{len(rows)} instances")


if __name__ == "__main__":
    main()
