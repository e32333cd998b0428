#!/usr/bin/env bash
# scripts/profile-kernel.sh: Nsight Compute on one kernel of one bench row, on the GPU machine:
# where its time goes (throughput against the peaks, occupancy, what the warps stall on, the
# instructions issued), for the rows whose kernels are far from their floor (the interpreter's
# W1-interp and W3-interp, M1, I1, FF2 ...). Run it on a binary built there, or one carried by
# scripts/devbin.sh:
#   bash scripts/profile-kernel.sh BENCH ROW KERNEL_REGEX [OUT_DIR]
#   bash scripts/profile-kernel.sh .devbin/cufuse-bench W3-interp cf_interp_rows $OUT
# The row runs in this process (--no-isolate --quick); ncu profiles the KERNEL_REGEX kernel's
# third launch (after the warm-up runs), writes ROW.ncu-rep (for the Nsight Compute GUI) and
# ROW-ncu.txt to OUT_DIR (default .), and prints the summary lines. PROFILE_SOURCE=1 adds the
# per-instruction counters: ROW-sass.csv (each SASS instruction's executions and stall samples,
# for a machine without ncu) and the 25 instructions with the most stall samples.
set -uo pipefail
if [ $# -lt 3 ]; then
  echo "usage: $0 BENCH ROW KERNEL_REGEX [OUT_DIR]" >&2
  exit 2
fi
BENCH=$1 ROW=$2 KERNEL=$3 OUTD=${4:-.}
NCU=$(command -v ncu || ls /usr/local/cuda/bin/ncu 2>/dev/null || true)
if [ -z "$NCU" ]; then
  echo "profile-kernel: no ncu here" >&2
  exit 77
fi
mkdir -p "$OUTD"
LD_LIBRARY_PATH="$(dirname "$BENCH"):${LD_LIBRARY_PATH:-}" \
  timeout 300 "$NCU" --kernel-name "regex:$KERNEL" --launch-skip 2 --launch-count 1 \
  --section SpeedOfLight --section Occupancy --section LaunchStats --section WarpStateStats \
  --section SchedulerStats --section InstructionStats --section MemoryWorkloadAnalysis \
  ${PROFILE_SOURCE:+--section SourceCounters --import-source no} \
  -o "$OUTD/$ROW" -f "$BENCH" --only "$ROW" --no-isolate --quick >"$OUTD/$ROW-run.txt" 2>&1
rc=$?
"$NCU" --import "$OUTD/$ROW.ncu-rep" --page details >"$OUTD/$ROW-ncu.txt" 2>&1 || true
grep -E "Duration|Memory Throughput|Compute \(SM\) Throughput|Registers Per Thread|Achieved Occupancy|Theoretical Occupancy|Block Limit|Warp Cycles Per Issued|Issued Ipc|Executed Instructions |Stall|L1/TEX Hit|L2 Hit|DRAM Throughput|Shared Memory" \
  "$OUTD/$ROW-ncu.txt" | sed -E 's/ +/ /g' | head -40
# What the warps wait on, most first (cycles per issued instruction, by stall reason).
echo "stalls (warp cycles per issued instruction):"
"$NCU" --import "$OUTD/$ROW.ncu-rep" --page raw 2>/dev/null |
  grep -E "smsp__average_warps_issue_stalled_[a-z_]+_per_issue_active\.ratio" |
  awk '{ print $NF, $1 }' | sort -rn | head -8 | sed -E 's/smsp__average_warps_issue_stalled_//; s/_per_issue_active.ratio//; s/^/  /'
if [ -n "${PROFILE_SOURCE:-}" ]; then
  "$NCU" --import "$OUTD/$ROW.ncu-rep" --page source --csv --print-source sass >"$OUTD/$ROW-sass.csv" 2>&1 || true
  echo "hottest SASS (stall samples, executions, instruction):"
  python3 - "$OUTD/$ROW-sass.csv" <<'PY' || true
import csv, sys
rows = list(csv.reader(open(sys.argv[1])))
hdr = next((i for i, r in enumerate(rows) if "Source" in r), None)
if hdr is None: sys.exit(0)
h = rows[hdr]
def col(name):
    return next((i for i, c in enumerate(h) if c.startswith(name)), None)
src, smp, ex = col("Source"), col("Warp Stall Sampling (All"), col("Instructions Executed")
def num(x):
    try: return float(x.replace(",", ""))
    except Exception: return 0.0
body = [r for r in rows[hdr + 1:] if len(r) == len(h)]
body.sort(key=lambda r: -num(r[smp]) if smp is not None else 0)
for r in body[:25]:
    print("  %8s %12s  %s" % (r[smp] if smp is not None else "-", r[ex] if ex is not None else "-", r[src]))
PY
fi
exit $rc
