#!/usr/bin/env python3
"""Score recorded answers with relace-mcp's documented metric definitions,
independently of patchbench, and compare with a loc run's rows and report.

    relace_score.py CASES.jsonl ANSWERS.jsonl RUN_DIR

CASES.jsonl is in relace-mcp's schema (hard_gt) or patchbench's (ground_truth
with defs); ANSWERS.jsonl holds {"id", "files": {path: [[start, end], ...]}}
rows (what loc run --model replay/ANSWERS.jsonl answers with); RUN_DIR is the
loc run. Definitions (relace-mcp's benchmark documentation):

  file recall      ground-truth files returned / ground-truth files (1 with none)
  file precision   returned files in the ground truth / returned files (0 with none)
  line coverage    ground-truth lines in returned ranges / ground-truth lines
  line precision (matched)
                   returned lines that are ground-truth lines / returned lines,
                   both counted in files that are returned and in the ground truth
  function hit rate
                   functions whose definition span a returned range overlaps /
                   functions (0 with none; its mean over the cases with functions)
  quality score    0.4 file recall + 0.4 line precision (matched) + 0.2 function hit rate

Ground-truth lines of a relace-mcp entry are its target_ranges (else its
range); each entry is one function, its span its range.

Prints one line per case and the means; exits 1 when any differs from the run.
"""
import json
import sys


def norm(path):
    """relace-mcp's normalize_path (no clone root: /testbed/ stands for it)."""
    import pathlib
    p = path.strip()
    if p.startswith("./"):
        p = p[2:]
    if p.startswith(("a/", "b/")):
        p = p[2:]
    p = pathlib.PurePosixPath(p).as_posix()
    if p.startswith("/testbed/") and len(p) > len("/testbed/"):
        p = p[len("/testbed/"):]
    return p


def lines_of(ranges):
    out = set()
    for s, e in ranges:
        out.update(range(s, e + 1))
    return out


def truth_of(case):
    files, spans = {}, []
    if "hard_gt" in case:
        for e in case["hard_gt"]:
            t = [r for r in e.get("target_ranges") or [] if r[0] > 0 and r[1] >= r[0]] or [e["range"]]
            files.setdefault(e["path"], set()).update(lines_of(t))
            spans.append((e["path"], lines_of([e["range"]])))
    else:
        for p, ft in (case.get("ground_truth") or {}).get("files", {}).items():
            files.setdefault(p, set()).update(lines_of(ft["ranges"]))
            for d in ft.get("defs") or []:
                spans.append((p, lines_of([d["range"]])))
    return files, spans


def score(files, spans, answer):
    got = {}
    for p, rs in answer.items():
        got.setdefault(norm(p), set()).update(lines_of([r for r in rs if r[0] > 0 and r[1] >= r[0]]))
    files = {norm(p): ls for p, ls in files.items()}
    spans = [(norm(p), span) for p, span in spans]
    fr = sum(p in got for p in files) / len(files) if files else 1.0
    fp = sum(p in files for p in got) / len(got) if got else 0.0
    total = sum(len(ls) for ls in files.values())
    lc = sum(len(ls & got.get(p, set())) for p, ls in files.items()) / total if total else 0.0
    matched = [p for p in got if p in files]
    ret = sum(len(got[p]) for p in matched)
    lpm = sum(len(got[p] & files[p]) for p in matched) / ret if ret else 0.0
    fh = sum(bool(got.get(p, set()) & span) for p, span in spans) / len(spans) if spans else 0.0
    q = 0.4 * fr + 0.4 * lpm + 0.2 * fh
    return {"file_recall": fr, "file_precision": fp, "line_coverage": lc,
            "line_precision_matched": lpm, "function_hit_rate": fh, "quality_score": q}, bool(spans)


def main():
    cases_path, answers_path, run = sys.argv[1:4]
    cases = [json.loads(l) for l in open(cases_path) if l.strip()]
    answers = {}
    for l in open(answers_path):
        if l.strip():
            a = json.loads(l)
            answers[a["id"]] = a.get("files") or {}
    rows = {}
    for l in open(run + "/results.jsonl"):
        r = json.loads(l)
        rows[r["id"]] = r
    report = json.load(open(run + "/report.json"))
    bad = 0
    sums, n, fsum, fn = {}, 0, 0.0, 0
    for c in cases:
        files, spans = truth_of(c)
        if not files:
            continue
        m, with_fns = score(files, spans, answers.get(c["id"], {}))
        n += 1
        for k, v in m.items():
            sums[k] = sums.get(k, 0.0) + v
        if with_fns:
            fn += 1
            fsum += m["function_hit_rate"]
        ours = rows[c["id"]]["metrics"]
        diffs = [k for k, v in m.items() if (k != "function_hit_rate" or with_fns) and abs(ours.get(k, -1) - v) > 1e-12]
        bad += bool(diffs)
        print(c["id"], " ".join("%s=%.4f" % (k, v) for k, v in m.items()), "MISMATCH " + ",".join(diffs) if diffs else "same")
    means = {"avg_" + k: v / n for k, v in sums.items() if k != "function_hit_rate"}
    means["avg_function_hit_rate"] = fsum / fn if fn else 0.0
    for k, v in means.items():
        same = abs(report[k] - v) < 1e-12
        bad += not same
        print("%s=%.4f %s" % (k, v, "same" if same else "MISMATCH report.json %.6f" % report[k]))
    sys.exit(1 if bad else 0)


main()
