#!/usr/bin/env python3
"""bench/report.py: one table and one chart from cufuse-bench's JSON and peers.py's JSON.

Per workload: cufuse's time, GB/s or TFLOP/s, percent of the floor, each peer's time, and
cufuse's time over the best peer's. Workloads cufuse does not run yet show "-". The chart
shows every time relative to the best peer (log scale; lower is better). It is drawn with
matplotlib when that imports, else by a small PNG writer here (zlib + struct).

  python3 bench/report.py --bench cufuse.json --peers peers.json [--md table.md] [--png chart.png]
"""
import argparse
import json
import math
import struct
import sys
import zlib

ORDER = ["W1", "W2", "W3", "W4", "W5", "W6", "W7a", "W7b", "W8", "W9", "W10", "W11", "W12", "W12-softmax", "W12c",
         "W1-interp", "W2-interp", "W3-interp", "W4-interp",
         "W13", "W14", "W15", "W16", "L1", "L2", "L3", "M1", "M2", "M3"]
PEERS = ["cupy", "cupy.fuse", "cupy.kernel", "torch", "torch.compile", "jax.jit"]
TITLES = {"cufuse": "cufuse", "cupy": "CuPy", "cupy.fuse": "cupy.fuse", "cupy.kernel": "CuPy kernel",
          "torch": "torch", "torch.compile": "torch.compile", "jax.jit": "JAX jit"}
# WORKLOADS.md's floors, shown when neither run measured one.
TABLE_FLOOR = {"W1": "0.363 ms", "W2": "0.363 ms", "W3": "0.182 ms", "W4": "0.182 ms", "W5": "0.182 ms",
               "W6": "GEMM 3.03 ms", "W7a": "launch 3.3 us", "W7b": "launch 3.3 us", "W8": "-",
               "W9": "2.90 ms", "W10": "~0.06 ms compute", "W11": "-", "W12": "NVRTC ~7-11 ms",
               "W13": "0.61 ms", "W14": "0.182 ms", "W15": "0.133 ms", "W16": "-", "L1": "-", "L2": "-",
               "L3": "-", "M1": "-", "M2": "-", "M3": "-"}
SHORT = {"W1": "(x*2.5+1)*sin(x)-exp(-x*x)+sqrt(abs(x)), f32[2^27]", "W2": "sum((x-y)^2), f32[2^27]",
         "W3": "row softmax, f32[8192,8192]", "W4": "row layernorm, f32[8192,8192]",
         "W5": "einsum ij,ij->i, f32[65536,1024]", "W6": "distance matrix, f32[10000,784]",
         "W7a": "(x-y)*(x-y), f32[10000], per call", "W7b": "7-op expression, f32[10000], per call",
         "W8": "matmul f32[15000^2] fp32 / TF32", "W9": "prod axis 0, f64[4096,512,512]",
         "W10": "convolve2d full, f64[2048^2] * 15x15", "W11": "qr / det / inv",
         "W12": "first call: empty / warm disk cache",
         "W12-softmax": "first call of W3's softmax: empty / warm disk cache",
         "W12c": "cold start, seed 004's fusion lesson + softmax: empty / warm (wall)",
         "W1-interp": "W1 on the bytecode interpreter", "W2-interp": "W2 on the bytecode interpreter",
         "W3-interp": "W3 on the bytecode interpreter", "W4-interp": "W4 on the bytecode interpreter",
         "W13": "Adam step in place, f32[2^26] x4", "W14": "cumsum f32[2^26] / rows of [16384,4096]",
         "W15": "Black-Scholes, 10M f64 options", "W16": "CuPy cg.py, N=2000 f64, per iteration",
         "L1": "k-means 2^20x2, 16 centers, per iteration", "L2": "EM 1-D, 4 Gaussians, 2^22, per iteration",
         "L3": "gradient descent [8192,1024], per iteration",
         "M1": "concatenate([x*2, exp(y)]), f32[4096^2] x2", "M2": "stack([x, y]), f32[4096^2] x2",
         "M3": "pad(x, 1, 'reflect'), f32[8192^2]"}
OK = ("ok", "check-failed")


def load(path, what):
    if not path:
        return {}, "no %s JSON given" % what
    try:
        with open(path) as f:
            return json.load(f), None
    except FileNotFoundError:
        return {}, "%s JSON %s not found" % (what, path)
    except (OSError, ValueError) as e:
        return {}, "%s JSON %s unreadable: %s" % (what, path, e)


def problem_of(rec):
    """Why a peer's cell has no good figure: a failed check's detail, else the record's notes."""
    detail = (rec.get("check") or {}).get("detail", "")
    if rec.get("status") == "check-failed" and detail:
        return detail
    return rec.get("notes") or detail


def parts_of(rec):
    """[(label, time_ms)] of a record with a figure, else []."""
    if not rec or rec.get("status") not in OK or rec.get("time_ms") is None:
        return []
    ps = rec.get("parts") or []
    if ps:
        return [(p.get("label") or "", p.get("time_ms")) for p in ps]
    return [("", rec["time_ms"])]


def fmt_ms(ms, unit):
    if ms is None or (isinstance(ms, float) and not math.isfinite(ms)):
        return "-"
    if unit == "us":
        return "%.3g us" % (ms * 1e3)
    return ("%.4g ms" % ms) if ms < 1000 else ("%.0f ms" % ms)


def fmt_parts(parts, unit):
    return " / ".join(fmt_ms(t, unit) for _, t in parts) if parts else "-"


class Row:
    """One workload: the figures of every system, by part label."""

    def __init__(self, wid, bench_rec, peers_rec, bench_bw, peers_bw):
        self.id = wid
        self.b = bench_rec
        self.p = peers_rec or {}
        self.unit = (bench_rec or {}).get("unit") or self.p.get("unit") or ("us" if wid.startswith("W7") else "ms")
        self.figures = {"cufuse": parts_of(bench_rec)}
        results = self.p.get("results") or {}
        for peer in PEERS:
            self.figures[peer] = parts_of(results.get(peer))
        self.peer_recs = results
        self.bench_bw, self.peers_bw = bench_bw, peers_bw

    def labels(self):
        for sysname in ["cufuse"] + PEERS:
            if self.figures[sysname]:
                return [lbl for lbl, _ in self.figures[sysname]]
        return []

    def time_for(self, sysname, label):
        for lbl, t in self.figures[sysname]:
            if lbl == label:
                return t
        if len(self.figures[sysname]) == 1 and label == "":
            return self.figures[sysname][0][1]
        return None

    def best_peer(self, label):
        best = None
        for peer in PEERS:
            t = self.time_for(peer, label)
            if t is not None and t > 0 and (best is None or t < best[1]):
                best = (peer, t)
        return best

    def part_floors(self):
        """(time, floor) of each part, where every part has a floor of its own (W8)."""
        parts = (self.b or {}).get("parts") or []
        if parts and all(p.get("floor_ms") is not None for p in parts):
            return [(p.get("time_ms"), p["floor_ms"]) for p in parts]
        return None

    def floor_text(self):
        b = self.b or {}
        if b.get("floor_ms") is not None:
            kind = b.get("floor_kind", "")
            how = {"bandwidth": "copy %.0f GB/s" % b["bandwidth_gbs"] if b.get("bandwidth_gbs") else "copy",
                   "launch": "launch", "compile": "NVRTC", "gemm": "cuBLAS"}.get(kind, kind)
            pf = self.part_floors()
            if pf:
                return "%s (%s)" % (" / ".join(fmt_ms(f, self.unit) for _, f in pf), how)
            return "%s (%s)" % (fmt_ms(b["floor_ms"], self.unit), how)
        if self.p.get("floor_ms") is not None:
            kind = self.p.get("floor_kind")
            how = "copy %.0f GB/s" % self.peers_bw if kind == "bandwidth" and self.peers_bw else (kind or "")
            return "%s (%s, peers run)" % (fmt_ms(self.p["floor_ms"], self.unit), how)
        return TABLE_FLOOR.get(self.id, "-") + " (table)"

    def cufuse_cell(self):
        b = self.b
        if not b:
            return "-"
        if b.get("status") not in OK:
            return "%s" % (b.get("status") or "error")
        cell = fmt_parts(self.figures["cufuse"], self.unit)
        if b.get("status") == "check-failed":
            cell += " (check FAILED)"
        return cell

    def rate_cell(self):
        b = self.b or {}
        if b.get("status") not in OK:
            return "-"
        if b.get("tflops") is not None:
            return "%.1f TFLOP/s" % b["tflops"]
        if b.get("gbs") is not None:
            return "%.0f GB/s" % b["gbs"]
        return "-"

    def pct_cell(self):
        b = self.b or {}
        if b.get("status") not in OK or b.get("pct_of_floor") is None:
            return "-"
        pf = self.part_floors()
        if pf and all(t for t, _ in pf):
            return " / ".join("%.1f%%" % (f / t * 100.0) for t, f in pf)
        return "%.1f%%" % b["pct_of_floor"]

    def peer_cell(self, peer):
        figs = self.figures[peer]
        if not figs:
            return "-"
        cell = fmt_parts(figs, self.unit)
        best = [self.best_peer(lbl) for lbl, _ in figs]
        if best and all(bp and bp[0] == peer for bp in best):
            cell = "**%s**" % cell
        if (self.peer_recs.get(peer) or {}).get("status") == "check-failed":
            cell += " (check FAILED)"
        return cell

    def ratios(self):
        """[(label, cufuse / best peer)] where both exist."""
        out = []
        for lbl in self.labels():
            c, bp = self.time_for("cufuse", lbl), self.best_peer(lbl)
            out.append((lbl, c / bp[1] if c is not None and bp else None))
        return out

    def ratio_cell(self):
        rs = self.ratios()
        if not rs or all(r is None for _, r in rs):
            return "-"
        return " / ".join("-" if r is None else "%.2fx" % r for _, r in rs)

    def notes(self):
        b = self.b or {}
        bits = []
        if b:
            chk = b.get("check") or {}
            if chk.get("done"):
                bits.append("check %s" % ("ok" if chk.get("ok") else "FAILED: " + chk.get("detail", "")))
            if b.get("kernels_per_call") is not None:
                bits.append("%g kernel(s)/call" % b["kernels_per_call"])
            if b.get("status") not in OK and b.get("notes"):
                bits.append(b["notes"][:160])
        else:
            bits.append("not in cufuse-bench yet")
        return "; ".join(bits)


def build_rows(bench, peers):
    brecs = {r["id"]: r for r in bench.get("workloads", [])}
    precs = {r["id"]: r for r in peers.get("workloads", [])}
    ids = [w for w in ORDER if w in brecs or w in precs] + \
          [w for w in list(brecs) + list(precs) if w not in ORDER]
    seen, rows = set(), []
    bench_bw = next((r.get("bandwidth_gbs") for r in bench.get("workloads", []) if r.get("bandwidth_gbs")), None)
    for w in ids:
        if w in seen:
            continue
        seen.add(w)
        rows.append(Row(w, brecs.get(w), precs.get(w), bench_bw, peers.get("copy_bandwidth_gbs")))
    return rows


def markdown(rows, bench, peers, problems):
    out = []
    dev = bench.get("device") or peers.get("device") or "unknown device"
    out.append("# cufuse vs peers on %s" % dev)
    out.append("")
    bw = [r.bench_bw for r in rows if r.bench_bw]
    out.append("Copy bandwidth measured: cufuse-bench %s, peers %s. Ratio = cufuse time / best peer time "
               "(below 1: cufuse is faster). Best peer in bold.%s" % (
                   "%.0f GB/s" % bw[0] if bw else "-",
                   "%.0f GB/s" % peers["copy_bandwidth_gbs"] if peers.get("copy_bandwidth_gbs") else "-",
                   " Quick mode (fewer repetitions)." if bench.get("quick") or peers.get("quick") else ""))
    if bench.get("no_device"):
        out.append("")
        out.append("cufuse-bench: no CUDA device (%s)" % bench["no_device"])
    out.append("")
    head = ["id", "workload", "floor", "cufuse", "GB/s or TFLOP/s", "% of floor"] + \
           [TITLES[p] for p in PEERS] + ["cufuse / best peer", "notes"]
    out.append("| " + " | ".join(head) + " |")
    out.append("|" + "---|" * len(head))
    for r in rows:
        cells = [r.id, SHORT.get(r.id, (r.b or r.p).get("description", "")), r.floor_text(), r.cufuse_cell(),
                 r.rate_cell(), r.pct_cell()] + [r.peer_cell(p) for p in PEERS] + [r.ratio_cell(), r.notes()]
        out.append("| " + " | ".join(c.replace("|", "\\|") for c in cells) + " |")
    groups = {}  # the peers' problems, one line per reason
    for r in rows:
        for p in PEERS:
            rec = r.peer_recs.get(p) or {}
            st = rec.get("status")
            if st and st not in ("ok", "n/a"):
                why = problem_of(rec)
                groups.setdefault((st, why), []).append("%s %s" % (r.id, TITLES[p]))
    notes = ["- %s: %s%s" % (", ".join(cells), st, (" - " + why) if why else "")
             for (st, why), cells in groups.items()]
    # W12's other figure: each system's very first fused call in the process (start-up included).
    for r in rows:
        for sysname, rec in [("cufuse", r.b or {})] + [(p, r.peer_recs.get(p) or {}) for p in PEERS]:
            if rec.get("status") in OK and "start-up" in (rec.get("notes") or ""):
                notes.append("- %s %s: %s" % (r.id, TITLES[sysname], rec["notes"]))
    # The iterative rows (W16, L1-L3): counts per iteration and each system's solve to convergence.
    for r in rows:
        if r.unit != "us" or not (r.id == "W16" or r.id.startswith("L")):
            continue
        for sysname, rec in [("cufuse", r.b or {})] + [(p, r.peer_recs.get(p) or {}) for p in PEERS]:
            if rec.get("status") in OK and rec.get("notes"):
                notes.append("- %s %s: %s" % (r.id, TITLES[sysname], rec["notes"]))
    if notes or problems:
        out.append("")
        out.append("Notes:")
        out.extend("- " + p for p in problems)
        out.extend(notes)
    return "\n".join(out) + "\n"


def compact(rows, bench, peers):
    """A narrow text table for terminals: cufuse, % of floor, the best peer, the ratio, the check."""
    out = ["%-4s %-22s %-7s %-34s %-14s %s" % ("id", "cufuse", "%floor", "best peer", "ratio", "check")]
    for r in rows:
        labels = r.labels() or [""]
        bests = [r.best_peer(lbl) for lbl in labels]
        if any(bests):
            names = {TITLES[b[0]] for b in bests if b}
            best = "%s %s" % ("/".join(sorted(names)),
                              " / ".join(fmt_ms(b[1], r.unit) if b else "-" for b in bests))
        else:
            best = "-"
        chk = (r.b or {}).get("check") or {}
        chk_s = "-" if not chk.get("done") else ("ok" if chk.get("ok") else "FAILED")
        out.append("%-4s %-22s %-7s %-34s %-14s %s" % (r.id, r.cufuse_cell()[:22], r.pct_cell(), best[:34],
                                                       r.ratio_cell(), chk_s))
    if bench.get("no_device"):
        out.append("cufuse-bench: no CUDA device (%s)" % bench["no_device"])
    groups = {}  # problems by reason, cufuse's and the peers'
    for r in rows:
        if r.b and r.b.get("status") not in OK:
            groups.setdefault(("cufuse " + str(r.b.get("status")), r.b.get("notes", "")), []).append(r.id)
        for p in PEERS:
            rec = r.peer_recs.get(p) or {}
            if rec.get("status") and rec["status"] not in ("ok", "n/a"):
                why = problem_of(rec)
                groups.setdefault((rec["status"], why), []).append("%s %s" % (r.id, TITLES[p]))
    for (st, why), cells in list(groups.items())[:8]:
        where = ", ".join(cells) if len(cells) <= 4 else "%s ... (%d cells)" % (", ".join(cells[:3]), len(cells))
        out.append(("! %s: %s - %s" % (where, st, why))[:200])
    return "\n".join(out) + "\n"


# ----------------------------------------------------------------------------- chart data
SYSTEMS = ["cufuse"] + PEERS
COLORS = {"cufuse": (214, 39, 40), "cupy": (31, 119, 180), "cupy.fuse": (174, 199, 232),
          "cupy.kernel": (148, 103, 189), "torch": (255, 127, 14), "torch.compile": (255, 187, 120),
          "jax.jit": (44, 160, 44)}


def chart_rows(rows):
    """[(label, {system: (ratio, time_text)})], ratio = time / best peer's time of that row."""
    out = []
    for r in rows:
        for lbl in r.labels() or [""]:
            bp = r.best_peer(lbl)
            vals = {}
            for s in SYSTEMS:
                t = r.time_for(s, lbl)
                if t is not None and bp:
                    vals[s] = (t / bp[1], fmt_ms(t, r.unit))
                elif t is not None:
                    vals[s] = (None, fmt_ms(t, r.unit))
            out.append((r.id + (" " + lbl if lbl else ""), vals))
    return out


def log_range(data):
    vals = [v[0] for _, d in data for v in d.values() if v[0]]
    if not vals:
        return 0.1, 10.0
    lo = 10 ** math.floor(math.log10(max(min(vals), 1e-3)))
    hi = 10 ** math.ceil(math.log10(min(max(vals), 1e5) * 1.01))
    return min(lo, 0.1), max(hi, 10.0)


def chart_matplotlib(data, title, path):
    import matplotlib
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    lo, hi = log_range(data)
    n = len(data)
    fig, ax = plt.subplots(figsize=(13, 0.9 + 0.62 * n * len(SYSTEMS) / 6 * 1.6))
    h = 0.8 / len(SYSTEMS)
    for si, s in enumerate(SYSTEMS):
        ys, ws = [], []
        for i, (_, d) in enumerate(data):
            y = i + si * h - 0.4 + h / 2
            if s in d and d[s][0]:
                ys.append(y)
                ws.append(d[s][0] - lo)
                ax.text(d[s][0] * 1.05, y, "%s  %.2fx" % (d[s][1], d[s][0]), va="center", fontsize=6.5)
            elif s in d:
                ax.text(lo * 1.05, y, "%s %s (no peer)" % (TITLES[s], d[s][1]), va="center", fontsize=6.5)
            elif s == "cufuse":
                ax.text(lo * 1.05, y, "cufuse: -", va="center", fontsize=6.5, color="gray")
        # bars start at the axis' left end and stop at the value
        ax.barh(ys, ws, height=h * 0.92, left=lo, color="#%02x%02x%02x" % COLORS[s], label=TITLES[s])
    ax.set_xscale("log")
    ax.set_xlim(lo, hi * 3)
    ax.axvline(1.0, color="black", lw=0.8)
    ax.set_yticks(range(n))
    ax.set_yticklabels([lbl for lbl, _ in data])
    ax.invert_yaxis()
    ax.set_xlabel("time / best peer's time (log scale, lower is better)")
    ax.set_title(title)
    ax.legend(loc="lower right", fontsize=8)
    ax.grid(axis="x", which="major", alpha=0.3)
    fig.tight_layout()
    fig.savefig(path, dpi=110)
    plt.close(fig)


# ----------------------------------------------------------------------------- PNG without matplotlib
_G = {  # 5x7 glyphs, rows top to bottom
    "0": "01110 10001 10011 10101 11001 10001 01110", "1": "00100 01100 00100 00100 00100 00100 01110",
    "2": "01110 10001 00001 00010 00100 01000 11111", "3": "11111 00010 00100 00010 00001 10001 01110",
    "4": "00010 00110 01010 10010 11111 00010 00010", "5": "11111 10000 11110 00001 00001 10001 01110",
    "6": "00110 01000 10000 11110 10001 10001 01110", "7": "11111 00001 00010 00100 01000 01000 01000",
    "8": "01110 10001 10001 01110 10001 10001 01110", "9": "01110 10001 10001 01111 00001 00010 01100",
    "A": "01110 10001 10001 11111 10001 10001 10001", "B": "11110 10001 10001 11110 10001 10001 11110",
    "C": "01110 10001 10000 10000 10000 10001 01110", "D": "11100 10010 10001 10001 10001 10010 11100",
    "E": "11111 10000 10000 11110 10000 10000 11111", "F": "11111 10000 10000 11110 10000 10000 10000",
    "G": "01110 10001 10000 10111 10001 10001 01111", "H": "10001 10001 10001 11111 10001 10001 10001",
    "I": "01110 00100 00100 00100 00100 00100 01110", "J": "00111 00010 00010 00010 00010 10010 01100",
    "K": "10001 10010 10100 11000 10100 10010 10001", "L": "10000 10000 10000 10000 10000 10000 11111",
    "M": "10001 11011 10101 10101 10001 10001 10001", "N": "10001 10001 11001 10101 10011 10001 10001",
    "O": "01110 10001 10001 10001 10001 10001 01110", "P": "11110 10001 10001 11110 10000 10000 10000",
    "Q": "01110 10001 10001 10001 10101 10010 01101", "R": "11110 10001 10001 11110 10100 10010 10001",
    "S": "01111 10000 10000 01110 00001 00001 11110", "T": "11111 00100 00100 00100 00100 00100 00100",
    "U": "10001 10001 10001 10001 10001 10001 01110", "V": "10001 10001 10001 10001 10001 01010 00100",
    "W": "10001 10001 10001 10101 10101 10101 01010", "X": "10001 10001 01010 00100 01010 10001 10001",
    "Y": "10001 10001 10001 01010 00100 00100 00100", "Z": "11111 00001 00010 00100 01000 10000 11111",
    " ": "00000 00000 00000 00000 00000 00000 00000", ".": "00000 00000 00000 00000 00000 01100 01100",
    "/": "00000 00001 00010 00100 01000 10000 00000", "-": "00000 00000 00000 11111 00000 00000 00000",
    "%": "11000 11001 00010 00100 01000 10011 00011", ":": "00000 01100 01100 00000 01100 01100 00000",
    "(": "00010 00100 01000 01000 01000 00100 00010", ")": "01000 00100 00010 00010 00010 00100 01000",
    "_": "00000 00000 00000 00000 00000 00000 11111", "+": "00000 00100 00100 11111 00100 00100 00000",
    ",": "00000 00000 00000 00000 01100 00100 01000", "=": "00000 00000 11111 00000 11111 00000 00000",
    "<": "00010 00100 01000 10000 01000 00100 00010", ">": "01000 00100 00010 00001 00010 00100 01000",
    "*": "00000 00100 10101 01110 10101 00100 00000", "?": "01110 10001 00001 00010 00100 00000 00100",
    "!": "00100 00100 00100 00100 00100 00000 00100", "[": "01110 01000 01000 01000 01000 01000 01110",
    "]": "01110 00010 00010 00010 00010 00010 01110", "'": "00100 00100 01000 00000 00000 00000 00000",
    "#": "01010 01010 11111 01010 11111 01010 01010", "^": "00100 01010 10001 00000 00000 00000 00000",
}
GLYPHS = {c: [row for row in rows.split()] for c, rows in _G.items()}


class Canvas:
    def __init__(self, w, h, bg=(255, 255, 255)):
        self.w, self.h = w, h
        self.px = bytearray(bytes(bg) * (w * h))

    def rect(self, x0, y0, x1, y1, color):
        x0, x1 = max(0, int(x0)), min(self.w, int(x1))
        y0, y1 = max(0, int(y0)), min(self.h, int(y1))
        if x1 <= x0 or y1 <= y0:
            return
        line = bytes(color) * (x1 - x0)
        for y in range(y0, y1):
            o = (y * self.w + x0) * 3
            self.px[o:o + len(line)] = line

    def text(self, x, y, s, color=(0, 0, 0), scale=2):
        for ch in s.upper():
            g = GLYPHS.get({"\u00d7": "X", "\u00b5": "U", "\u2013": "-", "\u2264": "<"}.get(ch, ch), GLYPHS["?"])
            for r, row in enumerate(g):
                for c, bit in enumerate(row):
                    if bit == "1":
                        self.rect(x + c * scale, y + r * scale, x + (c + 1) * scale, y + (r + 1) * scale, color)
            x += 6 * scale
        return x

    @staticmethod
    def text_width(s, scale=2):
        return len(s) * 6 * scale

    def save_png(self, path):
        stride = self.w * 3
        raw = b"".join(b"\x00" + bytes(self.px[y * stride:(y + 1) * stride]) for y in range(self.h))

        def chunk(tag, data):
            return struct.pack(">I", len(data)) + tag + data + struct.pack(">I", zlib.crc32(tag + data) & 0xFFFFFFFF)
        png = (b"\x89PNG\r\n\x1a\n" + chunk(b"IHDR", struct.pack(">IIBBBBB", self.w, self.h, 8, 2, 0, 0, 0)) +
               chunk(b"IDAT", zlib.compress(raw, 9)) + chunk(b"IEND", b""))
        with open(path, "wb") as f:
            f.write(png)


def chart_plain(data, title, path):
    lo, hi = log_range(data)
    bar_h, gap, group_gap = 12, 2, 14
    label_w, right_w, top, axis_h = 200, 300, 70, 40
    plot_w = 900
    n = len(data)
    group_h = len(SYSTEMS) * (bar_h + gap) + group_gap
    w = label_w + plot_w + right_w
    h = top + max(1, n) * group_h + axis_h + 10
    cv = Canvas(w, h)
    cv.text(10, 10, title[:100], scale=2)
    x = 10
    for s in SYSTEMS:  # legend
        cv.rect(x, 40, x + 14, 54, COLORS[s])
        x = cv.text(x + 20, 41, TITLES[s], scale=2) + 24
    span = math.log10(hi) - math.log10(lo)

    def xpos(v):
        return label_w + (math.log10(v) - math.log10(lo)) / span * plot_w
    # decade grid and the best-peer line
    d = lo
    while d <= hi * 1.0001:
        gx = xpos(d)
        cv.rect(gx, top - 4, gx + 1, top + n * group_h, (210, 210, 210))
        lbl = ("%gX" % d)
        cv.text(gx - cv.text_width(lbl, 1) // 2, top + n * group_h + 6, lbl, scale=1)
        d *= 10
    one = xpos(1.0)
    cv.rect(one, top - 4, one + 2, top + n * group_h, (0, 0, 0))
    cv.text(label_w, top + n * group_h + 22, "TIME / BEST PEER'S TIME (LOG SCALE, LOWER IS BETTER)", scale=1)
    for i, (lbl, vals) in enumerate(data):
        y0 = top + i * group_h
        cv.text(10, y0 + (group_h - group_gap) // 2 - 7, lbl[:15], scale=2)
        for si, s in enumerate(SYSTEMS):
            y = y0 + si * (bar_h + gap)
            if s not in vals:
                if s == "cufuse":
                    cv.text(label_w + 4, y + 2, "CUFUSE: -", color=(128, 128, 128), scale=1)
                continue
            ratio, ttext = vals[s]
            if ratio:
                x1 = xpos(min(max(ratio, lo), hi))
                cv.rect(label_w, y, max(label_w + 1, x1), y + bar_h, COLORS[s])
                cv.text(x1 + 4, y + 2, "%s %.2fX" % (ttext, ratio), scale=1)
            else:
                cv.text(label_w + 4, y + 2, "%s %s (NO PEER)" % (TITLES[s], ttext), scale=1)
    cv.save_png(path)


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--bench", default="", help="cufuse-bench --json output")
    ap.add_argument("--peers", default="", help="peers.py --json output")
    ap.add_argument("--md", default="", help="save the markdown table here")
    ap.add_argument("--png", default="", help="save the chart here")
    ap.add_argument("--plain-png", action="store_true", help="draw the PNG without matplotlib")
    ap.add_argument("--compact", action="store_true", help="print a narrow text table instead of the markdown")
    a = ap.parse_args()

    bench, pb = load(a.bench, "cufuse-bench")
    peers, pp = load(a.peers, "peers")
    problems = [p for p in (pb, pp) if p]
    rows = build_rows(bench, peers)
    md = markdown(rows, bench, peers, problems)
    print(compact(rows, bench, peers) if a.compact else md, end="")
    if a.md:
        with open(a.md, "w") as f:
            f.write(md)
    if a.png:
        data = chart_rows(rows)
        title = "cufuse vs peers on %s" % (bench.get("device") or peers.get("device") or "?")
        drawn = False
        if not a.plain_png:
            try:
                chart_matplotlib(data, title, a.png)
                drawn = True
            except ImportError:
                pass
            except Exception as e:  # noqa: BLE001 - fall back to the plain writer
                print("report: matplotlib chart failed (%s); plain PNG instead" % e, file=sys.stderr)
        if not drawn:
            chart_plain(data, title, a.png)
        print("chart: %s (%s)" % (a.png, "matplotlib" if drawn else "plain PNG writer"))
    return 0


if __name__ == "__main__":
    sys.exit(main())
