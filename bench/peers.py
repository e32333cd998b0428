#!/usr/bin/env python3
"""bench/peers.py: the workloads of WORKLOADS.md through the libraries a user would pick
instead of cufuse (CuPy, cupy.fuse, PyTorch eager, torch.compile, JAX jit), timed the way
cufuse-bench times them, each result checked against NumPy before it is timed.

Each framework runs in its own child process (a crash or hang costs that framework's
columns, never the run); W12 and W12-softmax (first call, empty / warm disk cache) and W12c
(a cold start: seed 004's fusion lesson and W3's softmax in a fresh process, its wall time) run
in fresh processes.
A peer that fails, is missing, or is not a column of WORKLOADS.md's table for a workload is
reported as "-" with the reason.

  python3 bench/peers.py [--only W1,W7a] [--quick] [--json FILE] [--budget SECONDS]
                         [--peers cupy,torch,jax]
"""
import argparse
import json
import os
import signal
import statistics
import subprocess
import sys
import tempfile
import time
import traceback

from peers_common import (CUFUSE_ONLY, FIRST_N, FRAMEWORK_OF, NA_REASON, ORDER, PEER_TITLES, PEERS, WORKLOADS,
                          check, compare, time_batches, time_loop)
from peers_frameworks import FRAMEWORKS


FRESH_PROCESS = ("W12", "W12-softmax", "W12c")  # workloads run in fresh processes by the parent, not by a framework child


# ----------------------------------------------------------------------------- framework child
def emit(out, rec):
    out.write(json.dumps(rec) + "\n")
    out.flush()


def child_main(fwname, only, quick, out_path, deadline):
    out = open(out_path, "a")
    peers = [p for p in PEERS if FRAMEWORK_OF[p] == fwname]
    wids = [w for w in only if w not in FRESH_PROCESS and any(p in WORKLOADS[w]["peers"] for p in peers)]
    try:
        fw = FRAMEWORKS[fwname]()
    except Exception as e:  # noqa: BLE001 - any import or init failure is a result, not a crash
        for w in wids:
            for p in peers:
                if p in WORKLOADS[w]["peers"]:
                    emit(out, dict(kind="result", id=w, peer=p, status="missing",
                                   notes="%s unavailable: %s: %s" % (fwname, type(e).__name__, e)))
        return 0
    try:
        emit(out, dict(kind="device", name=fw.device_name()))
    except Exception:  # noqa: BLE001
        pass
    if hasattr(fw, "copy_bandwidth_gbs") and any(WORKLOADS[w].get("bytes") for w in wids):
        try:
            emit(out, dict(kind="floor", copy_bandwidth_gbs=fw.copy_bandwidth_gbs(), by=fwname))
        except Exception as e:  # noqa: BLE001
            print("peers: copy bandwidth via %s failed: %s" % (fwname, e), file=sys.stderr)

    for wid in wids:
        mine = [p for p in peers if p in WORKLOADS[wid]["peers"]]
        if time.time() > deadline:
            for p in mine:
                emit(out, dict(kind="result", id=wid, peer=p, status="skipped", notes="out of time budget"))
            continue
        inp = None
        try:
            inp = fw.inputs(wid)
            fw.sync()
            if wid == "W6" and hasattr(fw, "gemm_ms"):
                emit(out, dict(kind="floor", id="W6", gemm_ms=fw.gemm_ms(inp, quick), by=fwname))
            fns = fw.fns(wid, inp)
        except Exception as e:  # noqa: BLE001
            for p in mine:
                emit(out, dict(kind="result", id=wid, peer=p, status="error",
                               notes="setup: %s: %s" % (type(e).__name__, str(e)[:300])))
            traceback.print_exc()
            inp = None
            fw.free()
            continue
        for p in mine:
            emit(out, run_peer(fw, wid, p, fns.get(p), inp, quick))
        del fns, inp
        if hasattr(fw, "set_tf32"):
            fw.set_tf32(False)  # W8 leaves TF32 on
        fw.free()
    return 0


def run_peer(fw, wid, peer, fn, inp, quick):
    rec = dict(kind="result", id=wid, peer=peer, unit=WORKLOADS[wid].get("unit", "ms"))
    if fn is None:
        rec.update(status="missing", notes="no implementation for this peer")
        return rec
    try:
        parts = fn if isinstance(fn, dict) else {None: fn}
        checks, results, notes = [], [], []
        for label, f in parts.items():
            if hasattr(f, "before"):
                f.before()  # a stateful peer (W13, the loops) back to its initial state
            # compiles (torch.compile, jit, fuse) outside the clock; an iterative program
            # (peers_loops.LoopPeer) runs the iterations its check compares
            first = f.check_run() if hasattr(f, "check_run") else f()
            fw.sync(first)
            ok, detail = check(wid, fw.get, inp, first, label)
            del first
            checks.append((ok, (label + ": " if label else "") + detail))
            if hasattr(f, "check_run"):
                f.before()
            timer = time_loop if wid in ("W7a", "W7b") else time_batches
            r = timer(f, fw.sync, quick)
            r["label"] = label
            results.append(r)
            if hasattr(f, "solve_note"):  # one solve to convergence, where it fits the time
                try:
                    notes.append(f.solve_note(r["time_ms"], quick))
                except Exception as e:  # noqa: BLE001 - the timing stands without it
                    notes.append("solve failed: %s: %s" % (type(e).__name__, str(e)[:200]))
        rec["check"] = dict(done=True, ok=all(c[0] for c in checks), detail="; ".join(c[1] for c in checks))
        rec["time_ms"] = results[0]["time_ms"]
        rec["batch_ms"] = results[0]["batch_ms"]
        rec["reps"], rec["batches"] = results[0]["reps"], results[0]["batches"]
        if len(results) > 1 or results[0]["label"]:
            rec["parts"] = [dict(label=r["label"], time_ms=r["time_ms"], batch_ms=r["batch_ms"]) for r in results]
        rec["status"] = "ok" if rec["check"]["ok"] else "check-failed"
        if notes:
            rec["notes"] = "; ".join(notes)
    except Exception as e:  # noqa: BLE001
        rec.update(status="error", notes="%s: %s" % (type(e).__name__, str(e)[:300]))
        traceback.print_exc()
    return rec


# ----------------------------------------------------------------------------- W12 child
COLD_N = 10000          # seed 004's arange(size) (W12c)
COLD_SOFTMAX = (8192, 8192)  # W3 (W12-softmax, W12c)


def first_call_fn(x, y):
    return ((x - y) * (x + y) * 0.5 + x * 3 - y / 2) * (x * x + 1)


def start_up_fn(x, y):
    """The process's first fused function (library start-up included); a different kernel."""
    return (x + y) * 0.5


def softmax_fn(xp, a):
    """W3's row softmax through the module's functions (cupy, or cupy.fuse's traced values)."""
    e = xp.exp(a - xp.max(a, axis=1, keepdims=True))
    return e / xp.sum(e, axis=1, keepdims=True)


def torch_softmax_fn(a):
    import torch
    e = torch.exp(a - torch.amax(a, dim=1, keepdim=True))
    return e / e.sum(dim=1, keepdim=True)


SOFTMAX_ROWS_CHECKED = 64  # rows of the f32[8192,8192] result compared with NumPy (float64)


def w12_child_main(peer, which):
    """W12 (which "w7b") or W12-softmax ("softmax"): the process's second new function, its
    first call timed until the device is done, as bench/first_call.cpp times cufuse's."""
    import numpy as np
    rng = np.random.default_rng(5)
    hx = rng.standard_normal(FIRST_N, dtype=np.float32)
    hy = rng.standard_normal(FIRST_N, dtype=np.float32)
    softmax = which == "softmax"
    ha = np.random.default_rng(7).standard_normal(COLD_SOFTMAX, dtype=np.float32) if softmax else None
    path = "fused"
    try:
        if peer == "cupy.fuse":
            import cupy as cp
            cp.cuda.Device(0).use()
            x, y = cp.asarray(hx), cp.asarray(hy)  # context and pool up, no kernel compiled
            a = cp.asarray(ha) if softmax else None
            cp.cuda.Device().synchronize()
            make, sync, to_np = cp.fuse, cp.cuda.Device().synchronize, cp.asnumpy

            def measured(a):
                return softmax_fn(cp, a)
        elif peer == "torch.compile":
            import torch
            torch.set_grad_enabled(False)
            torch.cuda.init()
            x, y = torch.from_numpy(hx).cuda(), torch.from_numpy(hy).cuda()
            a = torch.from_numpy(ha).cuda() if softmax else None
            torch.cuda.synchronize()
            make, sync = (lambda f: torch.compile(f, dynamic=False)), torch.cuda.synchronize
            measured = torch_softmax_fn

            def to_np(t):
                return t.cpu().numpy()
        else:
            raise ValueError("no W12 for " + peer)
        f = make(start_up_fn)  # the process's first fused function: library start-up included
        t0 = time.perf_counter()
        f(x, y)
        sync()
        first_ms = (time.perf_counter() - t0) * 1e3
        f = make(measured if softmax else first_call_fn)
        args = (a,) if softmax else (x, y)
        t0 = time.perf_counter()
        try:
            z = f(*args)
            sync()
        except Exception as e:  # noqa: BLE001 - cupy.fuse refusing the function: CuPy's ops, timed afresh
            if not (softmax and peer == "cupy.fuse"):
                raise
            path = "CuPy's ops (cupy.fuse: %s: %s)" % (type(e).__name__, str(e)[:120])
            t0 = time.perf_counter()
            z = measured(a)
            sync()
        ms = (time.perf_counter() - t0) * 1e3
        got = to_np(z)
        if softmax:
            rows = np.linspace(0, COLD_SOFTMAX[0] - 1, SOFTMAX_ROWS_CHECKED).astype(np.int64)
            ok, detail = compare(got[rows], softmax_fn(np, ha[rows].astype(np.float64)), 1e-4, 1e-7)
        else:
            ok, detail = compare(got, first_call_fn(hx.astype(np.float64), hy.astype(np.float64)), 1e-4, 1e-3)
        print("@@first-call " + json.dumps(dict(time_ms=ms, first_ms=first_ms, check_ok=ok, detail=detail, path=path)),
              flush=True)
        return 0
    except Exception as e:  # noqa: BLE001
        print("@@first-call-error " + json.dumps("%s: %s" % (type(e).__name__, str(e)[:300])), flush=True)
        traceback.print_exc()
        return 1


# ----------------------------------------------------------------------------- W12c child


def w12c_child_main(peer):
    """Seed 004's fusion lesson, then W3's softmax end to end, as bench/cold_start.cpp runs them."""
    t_main = time.perf_counter()
    try:
        if peer == "cupy.fuse":
            import cupy as cp
            x = cp.arange(COLD_N)
            y = cp.arange(COLD_N)[::-1]
            sync, fuse = cp.cuda.Device().synchronize, cp.fuse

            def randn(m, n):
                return cp.random.standard_normal((m, n), dtype=cp.float32)

            def softmax(a):  # CuPy's own ops, as the notebook would write it
                e = cp.exp(a - a.max(axis=1, keepdims=True))
                return e / e.sum(axis=1, keepdims=True)
        elif peer == "torch.compile":
            import torch
            torch.set_grad_enabled(False)
            x = torch.arange(COLD_N, device="cuda")
            y = torch.arange(COLD_N, device="cuda").flip(0)
            sync = torch.cuda.synchronize

            def fuse(f):
                return torch.compile(f, dynamic=False)

            def randn(m, n):
                return torch.randn(m, n, device="cuda", dtype=torch.float32)

            def softmax_eager(a):
                e = torch.exp(a - a.amax(dim=1, keepdim=True))
                return e / e.sum(dim=1, keepdim=True)
            softmax = fuse(softmax_eager)
        else:
            raise ValueError("no W12c for " + peer)

        def squared_diff(a, b):
            return (a - b) * (a - b)
        fused_squared_diff = fuse(squared_diff)

        def bench_us(f):  # cupyx.profiler.benchmark(f, n_repeat=10): 10 warm-up calls, 10 timed
            for _ in range(10):
                f()
                sync()
            total = 0.0
            for _ in range(10):
                t0 = time.perf_counter()
                f()
                sync()
                total += time.perf_counter() - t0
            return total / 10 * 1e6
        t_lesson = time.perf_counter()
        plain_us = bench_us(lambda: squared_diff(x, y))
        fused_us = bench_us(lambda: fused_squared_diff(x, y))
        lesson_ms = (time.perf_counter() - t_lesson) * 1e3
        at0, fused0 = int(squared_diff(x, y)[0]), int(fused_squared_diff(x, y)[0])
        t_soft = time.perf_counter()
        s = softmax(randn(*COLD_SOFTMAX))
        row0 = float(s[0].sum())
        softmax_ms = (time.perf_counter() - t_soft) * 1e3
        want = (COLD_N - 1) ** 2
        ok = at0 == want and fused0 == want and abs(row0 - 1) < 1e-3
        print("@@cold-start " + json.dumps(dict(
            main_ms=(time.perf_counter() - t_main) * 1e3, lesson_ms=lesson_ms, softmax_ms=softmax_ms,
            plain_us=plain_us, fused_us=fused_us, check_ok=ok,
            detail="squared_diff[0] %d (fused %d, want %d); softmax row 0 sums to %.6f" % (at0, fused0, want, row0))),
              flush=True)
        return 0
    except Exception as e:  # noqa: BLE001
        print("@@cold-start-error " + json.dumps("%s: %s" % (type(e).__name__, str(e)[:300])), flush=True)
        traceback.print_exc()
        return 1


# ----------------------------------------------------------------------------- parent
_CHILD_PGID = [None]  # the session of the child now running, ended with us on SIGTERM/SIGINT


def _end_child_and_exit(signum, frame):
    if _CHILD_PGID[0]:
        try:
            os.killpg(_CHILD_PGID[0], signal.SIGKILL)
        except OSError:
            pass
    sys.exit(128 + signum)


def run_child(args, env_extra, timeout_s, log):
    """Runs this script with args in a new session; returns (rc, stdout, stderr tail, timed_out)."""
    env = dict(os.environ)
    env.update(env_extra)
    with tempfile.TemporaryFile("w+") as so, tempfile.TemporaryFile("w+") as se:
        p = subprocess.Popen([sys.executable, os.path.abspath(__file__)] + args, stdout=so, stderr=se,
                             env=env, start_new_session=True)
        _CHILD_PGID[0] = p.pid
        timed_out = False
        try:
            rc = p.wait(timeout=max(1.0, timeout_s))
        except subprocess.TimeoutExpired:
            timed_out = True
            try:
                os.killpg(p.pid, signal.SIGKILL)
            except OSError:
                pass
            rc = p.wait()
        # compile workers (torch inductor) may outlive the child: end its whole session
        try:
            os.killpg(p.pid, signal.SIGKILL)
        except OSError:
            pass
        _CHILD_PGID[0] = None
        so.seek(0)
        se.seek(0)
        out, err = so.read(), se.read()
    if err:
        log.write(err if err.endswith("\n") else err + "\n")
        log.flush()
    tail = " | ".join([ln for ln in err.strip().splitlines() if ln.strip()][-2:])
    return rc, out, tail, timed_out


def fresh_trials(peer, child_flag, tag, trials, timeout_s, deadline, log, extra=()):
    """Trials of a fresh-process child: per trial an empty cache directory of the peer's, one
    child with it empty, one with what that child left. Returns ([(which, record, wall_ms)],
    problem): each child's "@@<tag> {json}" record and its process's wall time. `extra`: more
    arguments for the child."""
    got, problem = [], None
    for _ in range(trials):
        if time.time() > deadline - 5:
            problem = problem or "out of time budget"
            break
        with tempfile.TemporaryDirectory(prefix="peers-%s-" % child_flag.strip("-")) as d:
            env = {"CUPY_CACHE_DIR": d} if peer == "cupy.fuse" else {
                "TORCHINDUCTOR_CACHE_DIR": d, "TRITON_CACHE_DIR": os.path.join(d, "triton")}
            # As for cufuse's children: NVRTC's own cache (CUDA 12.9+) off, so an empty
            # cache directory means a real compile.
            env["CUDA_CACHE_DISABLE"] = "1"
            for which in ("empty", "warm"):
                left = deadline - time.time()
                t0 = time.perf_counter()
                rc, out, tail, to = run_child([child_flag, peer] + list(extra), env, min(timeout_s, left), log)
                wall = (time.perf_counter() - t0) * 1e3
                line = [ln for ln in out.splitlines() if ln.startswith("@@%s " % tag)]
                err = [ln for ln in out.splitlines() if ln.startswith("@@%s-error " % tag)]
                if line:
                    got.append((which, json.loads(line[0][len("@@%s " % tag):]), wall))
                else:
                    problem = ("timed out" if to else json.loads(err[0][len("@@%s-error " % tag):]) if err
                               else "child exited %s: %s" % (rc, tail))
                    problem = "%s-cache process: %s" % (which, problem)
                    break
        if problem:
            break
    return got, problem


def run_w12(wid, only_peers, quick, deadline, log):
    """W12 or W12-softmax for each peer."""
    results = {}
    which = "softmax" if wid == "W12-softmax" else "w7b"
    for peer in ["cupy.fuse", "torch.compile"]:
        if peer not in only_peers:
            continue
        trials = (3 if peer == "cupy.fuse" else 1) if quick else 3
        got, problem = fresh_trials(peer, "--w12-child", "first-call", trials, 180, deadline, log,
                                    ["--w12-which", which])
        cold = [r["time_ms"] for w, r, _ in got if w == "empty"]
        warm = [r["time_ms"] for w, r, _ in got if w == "warm"]
        firsts = {"empty": [r["first_ms"] for w, r, _ in got if w == "empty"],
                  "warm": [r["first_ms"] for w, r, _ in got if w == "warm"]}
        checks = [(r["check_ok"], r["detail"]) for _, r, _ in got]
        cold, warm = cold[:len(warm)], warm[:len(cold)]  # whole trials only
        paths = sorted({r.get("path", "fused") for _, r, _ in got})
        rec = dict(kind="result", id=wid, peer=peer, unit="ms")
        if cold and warm and len(cold) == len(warm):
            rec.update(status="ok", time_ms=statistics.median(cold), batch_ms=cold, reps=1, batches=len(cold),
                       parts=[dict(label="empty cache", time_ms=statistics.median(cold), batch_ms=cold),
                              dict(label="warm cache", time_ms=statistics.median(warm), batch_ms=warm)],
                       check=dict(done=True, ok=all(c[0] for c in checks), detail=checks[-1][1]),
                       notes="median of %d fresh process(es) each; the process's second new function; its "
                             "first (library start-up included): %.3g / %.3g ms" % (
                                 len(cold), statistics.median(firsts["empty"]), statistics.median(firsts["warm"])))
            if paths != ["fused"]:
                rec["notes"] += "; ran: " + " / ".join(paths)
            if not rec["check"]["ok"]:
                rec["status"] = "check-failed"
            if problem:
                rec["notes"] += "; " + problem
        else:
            rec.update(status="error", notes=problem or "no figure")
        results[peer] = rec
    return results


def run_w12c(only_peers, quick, deadline, log):
    """W12c: each peer's cold start, an empty then a warm cache, wall time of the process
    (the interpreter's start and the framework's import included: what a user waits for)."""
    results = {}
    for peer in ["cupy.fuse", "torch.compile"]:
        if peer not in only_peers:
            continue
        got, problem = fresh_trials(peer, "--w12c-child", "cold-start", 2 if quick else 3, 300, deadline, log)
        cold = [wall for w, _, wall in got if w == "empty"]
        warm = [wall for w, _, wall in got if w == "warm"]
        inner = [r for w, r, _ in got if w == "empty"]
        checks = [(r["check_ok"], r["detail"]) for _, r, _ in got]
        cold, warm = cold[:len(warm)], warm[:len(cold)]  # whole trials only
        rec = dict(kind="result", id="W12c", peer=peer, unit="ms")
        if cold and warm and len(cold) == len(warm):
            med = statistics.median
            rec.update(status="ok", time_ms=med(cold), batch_ms=cold, reps=1, batches=len(cold),
                       parts=[dict(label="empty cache", time_ms=med(cold), batch_ms=cold),
                              dict(label="warm cache", time_ms=med(warm), batch_ms=warm)],
                       check=dict(done=True, ok=all(c[0] for c in checks), detail=checks[-1][1]),
                       notes="wall time of a fresh Python process (interpreter start and imports included), median "
                             "of %d; from the script's start: %.4g ms; empty cache: the lesson %.4g ms "
                             "(squared_diff %.3g us a call plain, %.3g us fused), the softmax %.4g ms" % (
                                 len(cold), med([r["main_ms"] for r in inner]), med([r["lesson_ms"] for r in inner]),
                                 med([r["plain_us"] for r in inner]), med([r["fused_us"] for r in inner]),
                                 med([r["softmax_ms"] for r in inner])))
            if not rec["check"]["ok"]:
                rec["status"] = "check-failed"
            if problem:
                rec["notes"] += "; " + problem
        else:
            rec.update(status="error", notes=problem or "no figure")
        results[peer] = rec
    return results


def problem_of(rec):
    """Why a peer's cell has no good figure: a failed check's detail, else the record's notes."""
    detail = (rec.get("check") or {}).get("detail", "")
    if rec.get("status") == "check-failed" and detail:
        return detail
    return rec.get("notes") or detail


def fmt_time(rec, unit):
    if not rec or rec.get("time_ms") is None:
        return "-"
    parts = rec.get("parts") or [rec]
    scale, suffix = (1e3, " us") if unit == "us" else (1.0, " ms")
    return " / ".join("%.3g" % (p["time_ms"] * scale) for p in parts) + suffix


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--only", default="", help="comma-separated workload ids (default: all)")
    ap.add_argument("--quick", action="store_true", help="fewer repetitions and trials")
    ap.add_argument("--json", default="", help="write one record per workload here")
    ap.add_argument("--budget", type=float, default=0, help="seconds for the whole run (default: 200 quick, 900)")
    ap.add_argument("--peers", default="cupy,torch,jax", help="frameworks to run: cupy,torch,jax")
    ap.add_argument("--child", default="", help=argparse.SUPPRESS)
    ap.add_argument("--out", default="", help=argparse.SUPPRESS)
    ap.add_argument("--deadline", type=float, default=0, help=argparse.SUPPRESS)
    ap.add_argument("--w12-child", default="", help=argparse.SUPPRESS)
    ap.add_argument("--w12-which", default="w7b", help=argparse.SUPPRESS)
    ap.add_argument("--w12c-child", default="", help=argparse.SUPPRESS)
    a = ap.parse_args()

    only = [w for w in a.only.split(",") if w] or ORDER
    mine = [w for w in only if w in CUFUSE_ONLY]  # GPU_CHECK_ONLY names cufuse-bench's rows too
    if mine:
        print("peers.py: %s: cufuse-bench's rows only, no peers" % ",".join(mine), file=sys.stderr)
        only = [w for w in only if w not in CUFUSE_ONLY]
        if not only and not a.w12_child and not a.w12c_child:
            return 0
    unknown = [w for w in only if w not in WORKLOADS]
    if unknown:
        print("peers.py: unknown workload(s) %s; known: %s" % (",".join(unknown), ",".join(ORDER)), file=sys.stderr)
        return 2
    only = [w for w in ORDER if w in only]

    if a.w12_child:
        return w12_child_main(a.w12_child, a.w12_which)
    if a.w12c_child:
        return w12c_child_main(a.w12c_child)
    if a.child:
        return child_main(a.child, only, a.quick, a.out, a.deadline or float("inf"))

    signal.signal(signal.SIGTERM, _end_child_and_exit)
    signal.signal(signal.SIGINT, _end_child_and_exit)
    t_start = time.time()
    budget = a.budget or (200 if a.quick else 900)
    deadline = t_start + budget
    frameworks = [f for f in a.peers.split(",") if f]
    log = sys.stderr

    results = {w: {} for w in only}
    device, copy_bw, gemm_ms = None, None, None
    # Shares of what time is left, per framework child (torch.compile compiles the most).
    weights = {"cupy": 1.0, "torch": 1.6, "jax": 0.8}
    w12_weight = sum(1.0 for w in FRESH_PROCESS if w in only)
    todo = [f for f in ["cupy", "torch", "jax"] if f in frameworks]
    for i, fw in enumerate(todo):
        wanted = [w for w in only if w not in FRESH_PROCESS and
                  any(FRAMEWORK_OF[p] == fw and p in WORKLOADS[w]["peers"] for p in PEERS)]
        if not wanted:
            continue
        left = deadline - time.time()
        share = weights[fw] / (sum(weights[f] for f in todo[i:]) + w12_weight)
        child_budget = max(20.0, left * share)
        env = {"PYTHONUNBUFFERED": "1"}
        if fw == "jax":
            env.update(XLA_PYTHON_CLIENT_PREALLOCATE="false", TF_CPP_MIN_LOG_LEVEL="2")
        with tempfile.NamedTemporaryFile("w+", suffix=".jsonl", delete=False) as tf:
            out_path = tf.name
        t0 = time.time()
        print("peers: %s (%s) within %.0f s" % (fw, ",".join(wanted), child_budget), file=sys.stderr, flush=True)
        rc, _, tail, to = run_child(
            ["--child", fw, "--only", ",".join(wanted), "--out", out_path,
             "--deadline", str(time.time() + child_budget * 0.85)] + (["--quick"] if a.quick else []),
            env, child_budget, log)
        with open(out_path) as f:
            lines = [json.loads(ln) for ln in f if ln.strip()]
        os.unlink(out_path)
        for rec in lines:
            if rec["kind"] == "device" and not device:
                device = rec["name"]
            elif rec["kind"] == "floor":
                if "copy_bandwidth_gbs" in rec and not copy_bw:
                    copy_bw = rec["copy_bandwidth_gbs"]
                if "gemm_ms" in rec and not gemm_ms:
                    gemm_ms = rec["gemm_ms"]
            elif rec["kind"] == "result":
                results[rec["id"]][rec["peer"]] = rec
        why = ("timed out after %.0f s" % child_budget if to else
               "crashed (exit %s): %s" % (rc, tail) if rc != 0 else "gave no result")
        for w in wanted:
            for p in PEERS:
                if FRAMEWORK_OF[p] == fw and p in WORKLOADS[w]["peers"] and p not in results[w]:
                    results[w][p] = dict(kind="result", id=w, peer=p, status="crashed" if rc else "missing",
                                         notes="%s child %s" % (fw, why))
        print("peers: %s done in %.0f s" % (fw, time.time() - t0), file=sys.stderr, flush=True)

    for wid in ("W12", "W12-softmax"):
        if wid in only:
            w12_peers = [p for p in WORKLOADS[wid]["peers"] if FRAMEWORK_OF[p] in frameworks]
            results[wid].update(run_w12(wid, w12_peers, a.quick, deadline, log))
    if "W12c" in only:
        w12c_peers = [p for p in WORKLOADS["W12c"]["peers"] if FRAMEWORK_OF[p] in frameworks]
        results["W12c"].update(run_w12c(w12c_peers, a.quick, deadline, log))

    # Every (workload, peer) gets a record: "-" with a reason where there is no figure.
    for w in only:
        for p in PEERS:
            if p in results[w]:
                continue
            if p not in WORKLOADS[w]["peers"]:
                results[w][p] = dict(id=w, peer=p, status="n/a", notes=NA_REASON)
            elif FRAMEWORK_OF[p] not in frameworks:
                results[w][p] = dict(id=w, peer=p, status="skipped", notes="framework not selected (--peers)")
            else:
                results[w][p] = dict(id=w, peer=p, status="missing", notes="no result")

    records = []
    for w in only:
        spec = WORKLOADS[w]
        floor_ms, floor_kind = None, None
        if spec.get("bytes") and copy_bw:
            floor_ms, floor_kind = spec["bytes"] / (copy_bw * 1e9) * 1e3, "bandwidth"
        elif w == "W6" and gemm_ms:
            floor_ms, floor_kind = gemm_ms, "gemm"
        best = None
        for p, r in results[w].items():
            if r.get("status") == "ok" and r.get("time_ms") is not None and (best is None or r["time_ms"] < best[1]):
                best = (p, r["time_ms"])
        records.append(dict(id=w, description=spec["desc"], unit=spec.get("unit", "ms"),
                            bytes=spec.get("bytes"), flops=spec.get("flops"),
                            floor_ms=floor_ms, floor_kind=floor_kind,
                            best_peer=best[0] if best else None, best_ms=best[1] if best else None,
                            results=results[w]))
    doc = dict(tool="peers", version=1, device=device, quick=a.quick, copy_bandwidth_gbs=copy_bw,
               gemm_w6_ms=gemm_ms, peers=PEERS, peer_titles=PEER_TITLES, workloads=records,
               elapsed_s=time.time() - t_start)
    if a.json:
        tmp = a.json + ".tmp"
        with open(tmp, "w") as f:
            json.dump(doc, f, indent=1)
        os.replace(tmp, a.json)

    # The table.
    print("peers on %s; copy bandwidth %s GB/s; %.0f s" % (
        device or "?", "%.0f" % copy_bw if copy_bw else "?", time.time() - t_start))
    head = "%-4s %-10s" % ("id", "floor") + "".join(" %-17s" % PEER_TITLES[p] for p in PEERS)
    print(head)
    for rec in records:
        fl = "-" if rec["floor_ms"] is None else ("%.3g ms" % rec["floor_ms"])
        cells = []
        for p in PEERS:
            r = rec["results"][p]
            cell = fmt_time(r, rec["unit"]) if r.get("status") in ("ok", "check-failed") else "-"
            if r.get("status") == "check-failed":
                cell += " (!)"
            cells.append(" %-17s" % cell)
        print("%-4s %-10s" % (rec["id"], fl) + "".join(cells))
    # Problems, grouped by reason: one line per reason with the cells it hit.
    groups = {}
    for rec in records:
        for p, r in rec["results"].items():
            if r.get("status") in ("ok", "n/a"):
                continue
            why = problem_of(r)
            groups.setdefault((r.get("status"), why), []).append("%s %s" % (rec["id"], PEER_TITLES[p]))
    for (status, why), cells in groups.items():
        print("  %s: %s%s" % (", ".join(cells), status, (" - " + why) if why else ""))
    return 0


if __name__ == "__main__":
    sys.exit(main())
