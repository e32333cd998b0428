"""bench/peers_stats.py: issue 33's statistics workloads (H1, H2) for the framework classes of
peers_frameworks.py: inputs, each framework's peer callables and the checks against NumPy.

  H1  histogram(x, 1024 bins, range=(-4, 4)), x normal f32[2^26]
      CuPy cupy.histogram; PyTorch torch.histc (and torch.compile of it); JAX jnp.histogram, jitted.
  H2  bincount(x), x int32[2^26] uniform in [0, 1024)
      CuPy cupy.bincount; PyTorch torch.bincount (and torch.compile of it); JAX: the length read
      back (int(max(x)) + 1, as NumPy's semantics need), then a jitted jnp.bincount of that length.
"""
from peers_common import compare

IDS = ("H1", "H2")
STAT_N = 1 << 26
STAT_BINS = 1024
RANGE = (-4.0, 4.0)


def inputs(randn, randint, wid, f32):
    """randn(shape, dtype) and randint(high, n) of the framework (int64; cast to int32 here)."""
    if wid == "H1":
        return dict(x=randn(STAT_N, f32))
    x = randint(STAT_BINS, STAT_N)
    return dict(x=x.astype("int32") if hasattr(x, "astype") else x)


def cupy_fns(fw, wid, inp):
    cp = fw.cp
    x = inp["x"]
    if wid == "H1":
        return {"cupy": lambda: cp.histogram(x, STAT_BINS, range=RANGE)[0]}
    return {"cupy": lambda: cp.bincount(x)}


def torch_fns(fw, wid, inp):
    t = fw.torch
    x = inp["x"]
    if x.dtype == t.int64 and wid == "H2":
        x = inp["x"] = x.to(t.int32)

    def both(f, *args):
        c = t.compile(f, dynamic=False)
        return {"torch": lambda: f(*args), "torch.compile": lambda: c(*args)}
    if wid == "H1":
        return both(lambda x: t.histc(x, STAT_BINS, RANGE[0], RANGE[1]), x)
    return both(lambda x: t.bincount(x), x)


def jax_fns(fw, wid, inp):
    jax, jnp = fw.jax, fw.jnp
    x = inp["x"]
    if wid == "H1":
        j = jax.jit(lambda x: jnp.histogram(x, STAT_BINS, range=RANGE)[0])
        return {"jax.jit": lambda: j(x)}
    top = jax.jit(jnp.max)
    count = jax.jit(lambda x, n: jnp.bincount(x, length=n), static_argnums=1)
    return {"jax.jit": lambda: count(x, int(top(x)) + 1)}


def check(wid, get, inp, out, part=None):
    """Every bin against NumPy: H2 exactly; H1 within 1e-4 of each count (torch.histc computes
    bins without NumPy's correction at the edges, so a few values one ulp from an edge move)."""
    import numpy as np
    x = get(inp["x"], np.s_[:])
    if wid == "H1":
        want = np.histogram(x, STAT_BINS, range=RANGE)[0]
        return compare(get(out, np.s_[:]), want, 1e-4, 2)
    return compare(get(out, np.s_[:]), np.bincount(x), 0, 0)
