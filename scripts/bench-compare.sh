#!/usr/bin/env bash
# scripts/bench-compare.sh: the same benchmark rows from several source trees, on one machine,
# alternating, so that a refactor's before and after are measured side by side (issue 36's
# "every figure within noise": run on the GPU machine with the older trees unpacked beside
# this one, e.g. `git archive <commit> | tar -x -C before`).
#   bash scripts/bench-compare.sh OUTDIR ROWS ROUNDS TREE...   (TREE "." is this checkout)
# Prints one line per row and tree: the mean of the rounds' medians; JSON per run in OUTDIR.
set -uo pipefail
out=$1 rows=$2 rounds=$3; shift 3
mkdir -p "$out"
for t in "$@"; do
  b="build-cmp-$(echo "$t" | tr -c 'a-zA-Z0-9\n' _)"
  cmake -S "$t" -B "$b" -DCMAKE_BUILD_TYPE=Release >/dev/null 2>&1
  cmake --build "$b" -j"$(nproc)" --target cufuse-bench >"$out/build-$(basename "$b").log" 2>&1 || echo "build of $t failed"
done
for r in $(seq 1 "$rounds"); do
  for t in "$@"; do
    b="build-cmp-$(echo "$t" | tr -c 'a-zA-Z0-9\n' _)"
    "$b/bench/cufuse-bench" --quick --only "$rows" --json "$out/$(basename "$b")-$r.json" >/dev/null 2>&1
  done
done
python3 - "$out" "$@" <<'PY'
import json, sys, glob, os, statistics
out, trees = sys.argv[1], sys.argv[2:]
for t in trees:
    b = "build-cmp-" + "".join(c if c.isalnum() else "_" for c in t)
    runs = [json.load(open(f)) for f in sorted(glob.glob(os.path.join(out, os.path.basename(b) + "-*.json")))]
    rows = {}
    for run in runs:
        for rec in run.get("workloads", []):
            rows.setdefault(rec.get("id"), []).append(rec)
    for rid, recs in rows.items():
        vals = [r.get("time_us") if r.get("unit") == "us" else r.get("time_ms") for r in recs]
        vals = [v for v in vals if isinstance(v, (int, float))]
        unit = recs[0].get("unit", "")
        print(f"{t:10s} {rid:8s} {statistics.mean(vals) if vals else float('nan'):12.4f} {unit}  ({len(vals)} runs)")
PY
