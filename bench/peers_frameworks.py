"""bench/peers_frameworks.py: one class per framework (CuPy, PyTorch, JAX) that makes each
workload's random inputs and the callables of its peers (eager, fused, compiled, jitted)."""

import peers_loop_frameworks as loops
import peers_manip as manip
import peers_stats as stats
import peers_sort as sorting
import peers_fft as ffts
from peers_common import (AT_BINS, AT_N, CONV, IDX_N, INDEXING, PROD, gaussian_kernel, shared_inputs,
                          time_batches)


# Each framework class: inputs(wid) -> dict of device arrays; fns(wid, inp) -> {peer: callable}
# or {peer: {part: callable}}; get(array, index) -> numpy; sync(last); free().

class CupyFW:
    name = "cupy"

    def __init__(self):
        import cupy as cp
        self.cp = cp
        self.rs = cp.random.RandomState(1234)

    def device_name(self):
        p = self.cp.cuda.runtime.getDeviceProperties(0)
        n = p["name"]
        return n.decode() if isinstance(n, bytes) else str(n)

    def sync(self, last=None):
        self.cp.cuda.Device().synchronize()

    def get(self, a, idx):
        return self.cp.asnumpy(a[idx])

    def free(self):
        self.cp.get_default_memory_pool().free_all_blocks()

    def randn(self, shape, dtype):
        return self.rs.standard_normal(shape, dtype=dtype)

    def copy_bandwidth_gbs(self):
        cp = self.cp
        nbytes = 1 << 30
        a = cp.empty(nbytes, dtype=cp.uint8)
        b = cp.empty(nbytes, dtype=cp.uint8)
        a.fill(7)
        b.fill(9)
        stream = cp.cuda.get_current_stream()
        kind = cp.cuda.runtime.memcpyDeviceToDevice

        def copy():
            cp.cuda.runtime.memcpyAsync(b.data.ptr, a.data.ptr, nbytes, kind, stream.ptr)
        t = time_batches(copy, self.sync, True)
        return 2.0 * nbytes / (t["time_ms"] * 1e-3) / 1e9  # a and b go back to the pool on return

    def inputs(self, wid):
        if wid in loops.IDS:
            return loops.cupy_inputs(self, wid)
        cp, f32, f64 = self.cp, self.cp.float32, self.cp.float64
        shared = shared_inputs(self.randn, wid, f32)
        if shared is not None:
            return shared
        if wid == "W9":
            x = self.randn(PROD, f64)
            x *= 1e-3
            x += 1.0  # products of 4096 values near 1 stay finite
            return dict(x=x)
        if wid in INDEXING or wid in stats.IDS:
            return indexing_inputs(self.randn, lambda hi, n: self.rs.randint(0, hi, n, dtype=cp.int64), wid, f32)
        if wid == "W10":
            return dict(a=self.randn((CONV, CONV), f64), k=cp.asarray(gaussian_kernel()))
        if wid == "W11":
            # The inputs cufuse-bench uses (bench/library_workloads.cpp), so that both run the same
            # pivoting: seed 004's randn(512, 512) for qr and det (det's scaled so that it stays
            # finite in float32) and its rand(6000, 6000) for inv.
            det = self.randn((512, 512), f32) * f32(0.0727)
            inv = self.rs.random_sample((6000, 6000), dtype=f32)
            return dict(qr=self.randn((512, 512), f32), det=det, inv=inv)
        raise KeyError(wid)

    def set_tf32(self, on):
        from cupy._core import _routines_linalg as lin
        tf32 = getattr(lin, "COMPUTE_TYPE_TF32", 7)
        default = getattr(lin, "COMPUTE_TYPE_DEFAULT", 1)
        lin.set_compute_type(self.cp.float32, tf32 if on else default)

    def gemm_ms(self, inp, quick):
        q, p = inp["q"], inp["p"]
        return time_batches(lambda: q @ p.T, self.sync, quick)["time_ms"]

    def fns(self, wid, inp):
        if wid in loops.IDS:
            return loops.cupy_fns(self, wid, inp)
        if wid in manip.IDS:
            return manip.cupy_fns(self, wid, inp)
        if wid in stats.IDS:
            return stats.cupy_fns(self, wid, inp)
        if wid in sorting.IDS:
            return sorting.cupy_fns(self, wid, inp)
        if wid in ffts.IDS:
            return ffts.cupy_fns(self, wid, inp)
        cp = self.cp
        if wid == "I1":
            x, m = inp["x"], inp["mask"]
            return {"cupy": lambda: x[m]}
        if wid == "I1-lazy":
            x = inp["x"]
            return {"cupy": lambda: (x * 2)[cp.sin(x) > 0.5]}
        if wid == "I2":
            x, i = inp["x"], inp["idx"]
            return {"cupy": lambda: cp.take(x, i)}
        if wid == "I3":
            import cupyx
            v, i = inp["v"], inp["idx"]

            def i3():
                bins = cp.zeros(AT_BINS, cp.float32)
                cupyx.scatter_add(bins, i, v)
                return bins
            return {"cupy": i3}
        if wid == "W1":
            def w1(x):
                return (x * 2.5 + 1) * cp.sin(x) - cp.exp(-x * x) + cp.sqrt(cp.abs(x))
            fused = cp.fuse(w1)
            x = inp["x"]
            return {"cupy": lambda: w1(x), "cupy.fuse": lambda: fused(x)}
        if wid == "W2":
            def w2(x, y):
                return cp.sum((x - y) * (x - y))
            fused = cp.fuse(w2)
            x, y = inp["x"], inp["y"]
            return {"cupy": lambda: w2(x, y), "cupy.fuse": lambda: fused(x, y)}
        if wid == "W3":
            a = inp["a"]

            def w3():
                e = cp.exp(a - a.max(axis=1, keepdims=True))
                return e / e.sum(axis=1, keepdims=True)
            return {"cupy": w3}
        if wid == "W4":
            a, g, b = inp["a"], inp["g"], inp["b"]
            return {"cupy": lambda: (a - a.mean(axis=1, keepdims=True)) /
                    cp.sqrt(a.var(axis=1, keepdims=True) + 1e-5) * g + b}
        if wid == "W5":
            a, b = inp["a"], inp["b"]
            return {"cupy": lambda: cp.einsum("ij,ij->i", a, b)}
        if wid == "W6":
            q, p = inp["q"], inp["p"]
            self.set_tf32(False)
            return {"cupy": lambda: cp.sqrt(cp.maximum(
                cp.sum(q * q, axis=1)[:, None] - 2 * (q @ p.T) + cp.sum(p * p, axis=1)[None, :], 0))}
        if wid in ("W7a", "W7b"):
            def w7a(x, y):
                return (x - y) * (x - y)

            def w7b(x, y):
                return ((x - y) * (x + y) * 0.5 + x * 3 - y / 2) * (x * x + 1)
            f = w7a if wid == "W7a" else w7b
            fused = cp.fuse(f)
            x, y = inp["x"], inp["y"]
            return {"cupy": lambda: f(x, y), "cupy.fuse": lambda: fused(x, y)}
        if wid == "W8":
            a, b = inp["a"], inp["b"]

            def mode(on):
                def f():
                    return a @ b
                f.before = lambda: self.set_tf32(on)
                return f
            return {"cupy": {"fp32": mode(False), "tf32": mode(True)}}
        if wid == "W9":
            x = inp["x"]
            return {"cupy": lambda: cp.prod(x, axis=0)}
        if wid == "W10":
            from cupyx.scipy import signal as csignal
            a, k = inp["a"], inp["k"]
            return {"cupy": lambda: csignal.convolve2d(a, k, mode="full")}
        if wid == "W11":
            return {"cupy": {"qr": lambda: cp.linalg.qr(inp["qr"]),
                             "det": lambda: cp.linalg.det(inp["det"]),
                             "inv": lambda: cp.linalg.inv(inp["inv"])}}
        raise KeyError(wid)


class TorchFW:
    name = "torch"

    def __init__(self):
        import torch
        self.torch = torch
        torch.set_grad_enabled(False)
        self.gen = torch.Generator(device="cuda")
        self.gen.manual_seed(1234)

    def device_name(self):
        return self.torch.cuda.get_device_name(0)

    def sync(self, last=None):
        self.torch.cuda.synchronize()

    def get(self, a, idx):
        return a[idx].detach().cpu().numpy()

    def free(self):
        self.torch.cuda.empty_cache()

    def randn(self, shape, dtype):
        if isinstance(shape, int):
            shape = (shape,)
        return self.torch.randn(shape, dtype=dtype, device="cuda", generator=self.gen)

    def copy_bandwidth_gbs(self):
        t = self.torch
        nbytes = 1 << 30
        a = t.full((nbytes,), 7, dtype=t.uint8, device="cuda")
        b = t.empty_like(a)
        r = time_batches(lambda: b.copy_(a), self.sync, True)
        return 2.0 * nbytes / (r["time_ms"] * 1e-3) / 1e9

    def set_tf32(self, on):
        m = self.torch.backends.cuda.matmul
        if hasattr(m, "fp32_precision"):
            m.fp32_precision = "tf32" if on else "ieee"
        else:
            m.allow_tf32 = on

    def inputs(self, wid):
        if wid in loops.IDS:
            return loops.torch_inputs(self, wid)
        t = self.torch
        f32, f64 = t.float32, t.float64
        shared = shared_inputs(self.randn, wid, f32)
        if shared is not None:
            return shared
        if wid == "W9":
            x = self.randn(PROD, f64)
            x.mul_(1e-3).add_(1.0)
            return dict(x=x)
        if wid in INDEXING or wid in stats.IDS:
            return indexing_inputs(self.randn, lambda hi, n: t.randint(0, hi, (n,), device="cuda", generator=self.gen),
                                   wid, f32)
        raise KeyError(wid)

    def fns(self, wid, inp):
        if wid in loops.IDS:
            return loops.torch_fns(self, wid, inp)
        if wid in manip.IDS:
            return manip.torch_fns(self, wid, inp)
        if wid in stats.IDS:
            return stats.torch_fns(self, wid, inp)
        if wid in sorting.IDS:
            return sorting.torch_fns(self, wid, inp)
        if wid in ffts.IDS:
            return ffts.torch_fns(self, wid, inp)
        t = self.torch

        def both(f, *args):
            c = t.compile(f, dynamic=False)
            return {"torch": lambda: f(*args), "torch.compile": lambda: c(*args)}
        if wid == "I1":
            return both(lambda x, m: x[m], inp["x"], inp["mask"])
        if wid == "I1-lazy":
            return both(lambda x: (x * 2)[t.sin(x) > 0.5], inp["x"])
        if wid == "I2":
            return both(lambda x, i: t.take(x, i), inp["x"], inp["idx"])
        if wid == "I3":
            def i3(v, i):
                return t.zeros(AT_BINS, dtype=t.float32, device="cuda").index_add_(0, i, v)
            return both(i3, inp["v"], inp["idx"])
        if wid == "W1":
            def w1(x):
                return (x * 2.5 + 1) * t.sin(x) - t.exp(-x * x) + t.sqrt(t.abs(x))
            return both(w1, inp["x"])
        if wid == "W2":
            def w2(x, y):
                return t.sum((x - y) * (x - y))
            return both(w2, inp["x"], inp["y"])
        if wid == "W3":
            def w3(a):
                e = t.exp(a - a.amax(dim=1, keepdim=True))
                return e / e.sum(dim=1, keepdim=True)
            return both(w3, inp["a"])
        if wid == "W4":
            def w4(a, g, b):
                return (a - a.mean(dim=1, keepdim=True)) / t.sqrt(
                    a.var(dim=1, keepdim=True, correction=0) + 1e-5) * g + b
            return both(w4, inp["a"], inp["g"], inp["b"])
        if wid == "W5":
            def w5(a, b):
                return t.einsum("ij,ij->i", a, b)
            return both(w5, inp["a"], inp["b"])
        if wid == "W6":
            self.set_tf32(False)

            def w6(q, p):
                return t.sqrt(t.clamp_min(
                    t.sum(q * q, dim=1)[:, None] - 2 * (q @ p.T) + t.sum(p * p, dim=1)[None, :], 0))
            return both(w6, inp["q"], inp["p"])
        if wid in ("W7a", "W7b"):
            def w7a(x, y):
                return (x - y) * (x - y)

            def w7b(x, y):
                return ((x - y) * (x + y) * 0.5 + x * 3 - y / 2) * (x * x + 1)
            return both(w7a if wid == "W7a" else w7b, inp["x"], inp["y"])
        if wid == "W8":
            a, b = inp["a"], inp["b"]

            def mode(on):
                def f():
                    return a @ b
                f.before = lambda: self.set_tf32(on)
                return f
            return {"torch": {"fp32": mode(False), "tf32": mode(True)}}
        if wid == "W9":
            def w9(x):
                return t.prod(x, dim=0)
            return both(w9, inp["x"])
        raise KeyError(wid)


class JaxFW:
    name = "jax"

    def __init__(self):
        import jax
        import jax.numpy as jnp
        jax.config.update("jax_default_matmul_precision", "highest")  # full fp32, no TF32
        jax.config.update("jax_enable_x64", True)  # W15, W16 are float64 (float32 inputs stay float32)
        self.jax, self.jnp = jax, jnp
        self.key = jax.random.PRNGKey(1234)
        self.dev = jax.devices("gpu")[0] if any(d.platform == "gpu" for d in jax.devices()) else None
        if self.dev is None:
            raise RuntimeError("JAX sees no GPU (devices: %s)" % jax.devices())

    def device_name(self):
        return getattr(self.dev, "device_kind", str(self.dev))

    def sync(self, last=None):
        if last is not None:
            self.jax.block_until_ready(last)

    def get(self, a, idx):
        import numpy as np
        return np.asarray(a[idx])

    def free(self):
        pass

    def randn(self, shape, dtype):
        self.key, sub = self.jax.random.split(self.key)
        if isinstance(shape, int):
            shape = (shape,)
        return self.jax.block_until_ready(self.jax.random.normal(sub, shape, dtype=dtype))

    def inputs(self, wid):
        if wid in loops.IDS:
            return loops.jax_inputs(self, wid)
        f32 = self.jnp.float32
        if wid in INDEXING or wid in stats.IDS:
            def randint(hi, n):
                self.key, sub = self.jax.random.split(self.key)
                return self.jax.random.randint(sub, (n,), 0, hi, dtype=self.jnp.int64)
            return indexing_inputs(self.randn, randint, wid, f32)
        if wid != "W8":  # not a JAX column
            shared = shared_inputs(self.randn, wid, f32)
            if shared is not None:
                return shared
        raise KeyError(wid)

    def fns(self, wid, inp):
        if wid in loops.IDS:
            return loops.jax_fns(self, wid, inp)
        if wid in manip.IDS:
            return manip.jax_fns(self, wid, inp)
        if wid in stats.IDS:
            return stats.jax_fns(self, wid, inp)
        if wid in sorting.IDS:
            return sorting.jax_fns(self, wid, inp)
        if wid in ffts.IDS:
            return ffts.jax_fns(self, wid, inp)
        jax, jnp = self.jax, self.jnp

        def jit(f, *args):
            j = jax.jit(f)
            return {"jax.jit": lambda: j(*args)}
        if wid == "I1":  # a shape that depends on the data cannot be jitted: the size is given (the count, read back)
            x, m = inp["x"], inp["mask"]
            count = jax.jit(jnp.count_nonzero)
            select = jax.jit(lambda x, m, n: x[jnp.nonzero(m, size=n)[0]], static_argnums=2)

            def i1():
                return select(x, m, int(count(m)))
            return {"jax.jit": i1}
        if wid == "I1-lazy":
            x = inp["x"]
            count = jax.jit(lambda x: jnp.count_nonzero(jnp.sin(x) > 0.5))
            select = jax.jit(lambda x, n: (x * 2)[jnp.nonzero(jnp.sin(x) > 0.5, size=n)[0]], static_argnums=1)

            def i1l():
                return select(x, int(count(x)))
            return {"jax.jit": i1l}
        if wid == "I2":
            return jit(lambda x, i: jnp.take(x, i, mode="clip"), inp["x"], inp["idx"])
        if wid == "I3":
            return jit(lambda v, i: jnp.zeros(AT_BINS, jnp.float32).at[i].add(v), inp["v"], inp["idx"])
        if wid == "W1":
            return jit(lambda x: (x * 2.5 + 1) * jnp.sin(x) - jnp.exp(-x * x) + jnp.sqrt(jnp.abs(x)), inp["x"])
        if wid == "W2":
            return jit(lambda x, y: jnp.sum((x - y) * (x - y)), inp["x"], inp["y"])
        if wid == "W3":
            def w3(a):
                e = jnp.exp(a - a.max(axis=1, keepdims=True))
                return e / e.sum(axis=1, keepdims=True)
            return jit(w3, inp["a"])
        if wid == "W4":
            return jit(lambda a, g, b: (a - a.mean(axis=1, keepdims=True)) /
                       jnp.sqrt(a.var(axis=1, keepdims=True) + 1e-5) * g + b, inp["a"], inp["g"], inp["b"])
        if wid == "W5":
            return jit(lambda a, b: jnp.einsum("ij,ij->i", a, b), inp["a"], inp["b"])
        if wid == "W6":
            return jit(lambda q, p: jnp.sqrt(jnp.maximum(
                jnp.sum(q * q, axis=1)[:, None] - 2 * (q @ p.T) + jnp.sum(p * p, axis=1)[None, :], 0)),
                inp["q"], inp["p"])
        if wid == "W7a":
            return jit(lambda x, y: (x - y) * (x - y), inp["x"], inp["y"])
        if wid == "W7b":
            return jit(lambda x, y: ((x - y) * (x + y) * 0.5 + x * 3 - y / 2) * (x * x + 1), inp["x"], inp["y"])
        raise KeyError(wid)


def indexing_inputs(randn, randint, wid, f32):
    """I1-I3's (and H1, H2's: peers_stats.py) inputs: randn(shape, dtype) and randint(high, n) of the framework."""
    if wid in stats.IDS:
        return stats.inputs(randn, randint, wid, f32)
    if wid == "I1":
        return dict(x=randn(IDX_N, f32), mask=randn(IDX_N, f32) > 0)
    if wid == "I1-lazy":
        return dict(x=randn(IDX_N, f32))
    if wid == "I2":
        return dict(x=randn(IDX_N, f32), idx=randint(IDX_N, IDX_N))
    return dict(v=randn(AT_N, f32), idx=randint(AT_BINS, AT_N))


FRAMEWORKS = {"cupy": CupyFW, "torch": TorchFW, "jax": JaxFW}


