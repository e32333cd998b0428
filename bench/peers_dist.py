#!/usr/bin/env python3
"""bench/peers_dist.py: issue 32's multi-GPU rows (bench/dist_workloads.cpp: D1, D2, D3, D8, DS)
under the peers, on the same 2 GPUs: JAX (a Mesh of 2 devices, NamedSharding, jit) in this
process, and PyTorch DTensor (one process per GPU: this script re-launched by
torch.distributed.run with --torch-worker). Each row times the 2-GPU program and the
single-GPU one (weak scaling: each GPU gets the single-GPU size), as cufuse-bench does, and
prints the per-GPU efficiency.

  python3 bench/peers_dist.py [--only D1,D2] [--quick] [--json FILE]

A framework that is missing, or a machine with fewer than 2 GPUs, is reported as skipped.
Timing: warm-up, then batches of calls each ended by a synchronize (every GPU), the median of
the batch means (WORKLOADS.md's rule).
"""
import argparse
import json
import os
import statistics
import subprocess
import sys
import time

N1 = 1 << 27
ROWS = 8192
MM = 15000
SUM_N = 1 << 30
IDS = ("D1", "D2", "D3", "D8", "DS")


def time_calls(call, sync, quick):
    warm, batches, target = (2, 5, 20.0) if quick else (5, 15, 100.0)
    for _ in range(warm):
        call()
    sync()
    t0 = time.perf_counter()
    call()
    sync()
    est = max((time.perf_counter() - t0) * 1e3, 1e-3)
    reps = int(min(max(target / est, 1), 200 if quick else 1000))
    means = []
    for _ in range(batches):
        t0 = time.perf_counter()
        for _ in range(reps):
            call()
        sync()
        means.append((time.perf_counter() - t0) * 1e3 / reps)
    return statistics.median(means)


def row(peer, wid, two, one, kind):
    eff = one / (2 * two) if kind == "gemm" else one / two
    return dict(peer=peer, id=wid, two_gpus_ms=two, one_gpu_ms=one, efficiency=eff,
                note="allreduce beyond the local reductions: %.1f us" % ((two - one) * 1e3) if kind == "sum" else "")


# ------------------------------------------------------------------ JAX
def run_jax(ids, quick):
    try:
        import jax
        import jax.numpy as jnp
        from jax.sharding import Mesh, NamedSharding, PartitionSpec as P
    except Exception as e:  # noqa: BLE001
        return [dict(peer="jax", id=i, skipped="jax not importable: %s" % e) for i in ids]
    devs = [d for d in jax.devices() if d.platform == "gpu"]
    if len(devs) < 2:
        return [dict(peer="jax", id=i, skipped="%d GPU(s) visible to JAX" % len(devs)) for i in ids]
    import numpy as np
    mesh = Mesh(np.array(devs[:2]), ("gpu",))
    rows_sh = NamedSharding(mesh, P("gpu"))
    rep = NamedSharding(mesh, P())
    one_dev = devs[0]
    key = jax.random.PRNGKey(0)

    def put(shape, sh, k=0):
        return jax.jit(lambda kk: jax.random.normal(kk, shape, jnp.float32), out_shardings=sh)(jax.random.fold_in(key, k))

    def local(shape, k=0):
        return jax.device_put(jax.random.normal(jax.random.fold_in(key, k), shape, jnp.float32), one_dev)

    out = []
    for wid in ids:
        try:
            if wid == "D1":
                f = jax.jit(lambda x: (x * 2.5 + 1) * jnp.sin(x) - jnp.exp(-x * x) + jnp.sqrt(jnp.abs(x)))
                X, x0, kind = put((2 * N1,), rows_sh), local((N1,)), "ew"
                two_call, one_call = (lambda: f(X)), (lambda: f(x0))
            elif wid == "D2":
                f = jax.jit(lambda x, y: jnp.sum((x - y) * (x - y)))
                X, Y = put((2 * N1,), rows_sh, 1), put((2 * N1,), rows_sh, 2)
                x0, y0 = local((N1,), 1), local((N1,), 2)
                kind = "ar"
                two_call, one_call = (lambda: float(f(X, Y))), (lambda: float(f(x0, y0)))
            elif wid == "D3":
                f = jax.jit(lambda a: jax.nn.softmax(a, axis=1))
                X, x0, kind = put((2 * ROWS, ROWS), rows_sh), local((ROWS, ROWS)), "ew"
                two_call, one_call = (lambda: f(X)), (lambda: f(x0))
            elif wid == "D8":
                f = jax.jit(lambda a, b: jnp.matmul(a, b, precision=jax.lax.Precision.HIGHEST))
                A, B = put((MM, MM), rows_sh, 3), put((MM, MM), rep, 4)
                a0, b0 = local((MM, MM), 3), local((MM, MM), 4)
                kind = "gemm"
                two_call, one_call = (lambda: f(A, B)), (lambda: f(a0, b0))
            else:  # DS: the sum over 2 GPUs vs the local reductions alone
                X = put((SUM_N,), rows_sh, 5)
                f = jax.jit(jnp.sum)
                shards = [s.data for s in X.addressable_shards]
                kind = "sum"
                two_call = lambda: float(f(X))  # noqa: E731
                one_call = lambda: sum(float(r) for r in [f(s) for s in shards])  # noqa: E731 (both launched, then read)
            last = {}

            def keep(call):
                def run():
                    last["y"] = call()
                return run

            def sync():
                y = last.get("y")
                if hasattr(y, "block_until_ready"):
                    y.block_until_ready()

            two = time_calls(keep(two_call), sync, quick)
            one = time_calls(keep(one_call), sync, quick)
            out.append(row("jax", wid, two, one, kind))
        except Exception as e:  # noqa: BLE001
            out.append(dict(peer="jax", id=wid, skipped="error: %s" % e))
    return out


# ------------------------------------------------------------------ PyTorch DTensor
def torch_worker(ids, quick, json_path):
    import torch
    import torch.distributed as tdist
    try:
        from torch.distributed.tensor import Replicate, Shard, distribute_tensor
    except ImportError:
        from torch.distributed._tensor import Replicate, Shard, distribute_tensor
    from torch.distributed.device_mesh import init_device_mesh
    rank = int(os.environ["RANK"])
    torch.cuda.set_device(rank)
    tdist.init_process_group("nccl")
    mesh = init_device_mesh("cuda", (2,))
    g = torch.Generator(device="cuda").manual_seed(0)

    def sync():
        torch.cuda.synchronize()
        tdist.barrier()

    def rnd(*shape):
        return torch.randn(*shape, device="cuda", generator=g)

    out = []
    for wid in ids:
        try:
            if wid == "D1":
                f = lambda x: (x * 2.5 + 1) * torch.sin(x) - torch.exp(-x * x) + torch.sqrt(torch.abs(x))  # noqa: E731
                X, x0, kind = distribute_tensor(rnd(2 * N1), mesh, [Shard(0)]), rnd(N1), "ew"
                two_call, one_call = (lambda: f(X)), (lambda: f(x0))
            elif wid == "D2":
                X = distribute_tensor(rnd(2 * N1), mesh, [Shard(0)])
                Y = distribute_tensor(rnd(2 * N1), mesh, [Shard(0)])
                x0, y0, kind = rnd(N1), rnd(N1), "ar"
                two_call = lambda: ((X - Y) * (X - Y)).sum().full_tensor().item()  # noqa: E731
                one_call = lambda: ((x0 - y0) * (x0 - y0)).sum().item()  # noqa: E731
            elif wid == "D3":
                X, x0, kind = distribute_tensor(rnd(2 * ROWS, ROWS), mesh, [Shard(0)]), rnd(ROWS, ROWS), "ew"
                two_call, one_call = (lambda: torch.softmax(X, dim=1)), (lambda: torch.softmax(x0, dim=1))
            elif wid == "D8":
                torch.backends.cuda.matmul.allow_tf32 = False
                A = distribute_tensor(rnd(MM, MM), mesh, [Shard(0)])
                B = distribute_tensor(rnd(MM, MM), mesh, [Replicate()])
                a0, b0, kind = rnd(MM, MM), rnd(MM, MM), "gemm"
                two_call, one_call = (lambda: A @ B), (lambda: a0 @ b0)
            else:
                X = distribute_tensor(rnd(SUM_N), mesh, [Shard(0)])
                loc = X.to_local()
                kind = "sum"
                two_call = lambda: X.sum().full_tensor().item()  # noqa: E731
                one_call = lambda: loc.sum().item()  # noqa: E731
            two = time_calls(two_call, sync, quick)
            one = time_calls(one_call, sync, quick)
            out.append(row("torch.DTensor", wid, two, one, kind))
        except Exception as e:  # noqa: BLE001
            out.append(dict(peer="torch.DTensor", id=wid, skipped="error: %s" % e))
        torch.cuda.empty_cache()
    if rank == 0 and json_path:
        with open(json_path, "w") as fh:
            json.dump(out, fh)
    tdist.destroy_process_group()


def run_torch(ids, quick):
    try:
        import torch
    except Exception as e:  # noqa: BLE001
        return [dict(peer="torch.DTensor", id=i, skipped="torch not importable: %s" % e) for i in ids]
    if torch.cuda.device_count() < 2:
        return [dict(peer="torch.DTensor", id=i, skipped="%d GPU(s)" % torch.cuda.device_count()) for i in ids]
    tmp = "/tmp/peers_dist_torch_%d.json" % os.getpid()
    cmd = [sys.executable, "-m", "torch.distributed.run", "--standalone", "--nproc-per-node", "2", __file__,
           "--torch-worker", "--only", ",".join(ids), "--json", tmp] + (["--quick"] if quick else [])
    r = subprocess.run(cmd, capture_output=True, text=True, timeout=900)
    if r.returncode != 0 or not os.path.exists(tmp):
        return [dict(peer="torch.DTensor", id=i, skipped="torchrun failed: %s" % r.stderr[-400:]) for i in ids]
    with open(tmp) as fh:
        rows = json.load(fh)
    os.remove(tmp)
    return rows


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--only", default=",".join(IDS))
    ap.add_argument("--quick", action="store_true")
    ap.add_argument("--json", default="")
    ap.add_argument("--torch-worker", action="store_true")
    a = ap.parse_args()
    ids = [i for i in a.only.split(",") if i in IDS]
    if a.torch_worker:
        torch_worker(ids, a.quick, a.json)
        return
    rows = run_jax(ids, a.quick) + run_torch(ids, a.quick)
    print("%-4s %-14s %12s %12s %10s  %s" % ("id", "peer", "2 GPUs ms", "1 GPU ms", "per-GPU", "note"))
    for r in rows:
        if "skipped" in r:
            print("%-4s %-14s skipped: %s" % (r["id"], r["peer"], r["skipped"][:200]))
        else:
            print("%-4s %-14s %12.3f %12.3f %9.1f%%  %s" % (r["id"], r["peer"], r["two_gpus_ms"], r["one_gpu_ms"],
                                                          r["efficiency"] * 100, r["note"]))
    if a.json:
        with open(a.json, "w") as fh:
            json.dump({"tool": "peers_dist", "rows": rows}, fh, indent=1)


if __name__ == "__main__":
    main()
