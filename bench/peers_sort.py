"""bench/peers_sort.py: issue 33's sorting workloads (SR1-SR6) for the framework classes of
peers_frameworks.py: each framework's peer callables and the checks against NumPy. The inputs
are SHARED_INPUTS of peers_common.py (float32 normals every framework draws alike); SR5's
int32 values are made from them before timing ((x * 2^20) mod 2^16: 2^16 distinct values).

  SR1  sort(x), x f32[2^26]                 SR2  sort(x, axis=1), x f32[8192,8192]
  SR3  argsort(x), x f32[2^26]              SR4  argsort(x, axis=1), x f32[8192,8192]
  SR5  unique(v), v int32[2^26], 2^16 distinct values
  SR6  median(x, axis=1), x f32[8192,8192]
"""
from peers_common import compare

IDS = ("SR1", "SR2", "SR3", "SR4", "SR5", "SR6")
SORT_N = 1 << 26
SORT_ROWS = (8192, 8192)


def _ints(x, mod):
    """(x * 2^20) mod 2^16 as int32, in the framework's own ops (not timed)."""
    return mod((x * float(1 << 20)))


def cupy_fns(fw, wid, inp):
    cp = fw.cp
    x = inp["x"]
    if wid in ("SR1", "SR2"):
        return {"cupy": lambda: cp.sort(x, axis=-1)}
    if wid in ("SR3", "SR4"):
        return {"cupy": lambda: cp.argsort(x, axis=-1)}
    if wid == "SR5":
        v = _ints(x, lambda y: (y.astype(cp.int64) & 0xFFFF).astype(cp.int32))
        return {"cupy": lambda: cp.unique(v)}
    if wid == "SR6":
        return {"cupy": lambda: cp.median(x, axis=1)}
    raise KeyError(wid)


def torch_fns(fw, wid, inp):
    t = fw.torch
    x = inp["x"]

    def both(f, *args):
        c = t.compile(f, dynamic=False)
        return {"torch": lambda: f(*args), "torch.compile": lambda: c(*args)}
    if wid in ("SR1", "SR2"):
        return both(lambda a: t.sort(a, dim=-1).values, x)
    if wid in ("SR3", "SR4"):
        return both(lambda a: t.argsort(a, dim=-1, stable=True), x)
    if wid == "SR5":
        v = _ints(x, lambda y: (y.to(t.int64) & 0xFFFF).to(t.int32))
        return both(lambda a: t.unique(a, sorted=True), v)
    if wid == "SR6":
        # torch.median gives the lower middle element and torch.quantile takes at most 2^24
        # elements: NumPy's median (the mean of the two middle ones) from a sort, as it computes it
        return both(lambda a: t.sort(a, dim=1).values[:, 4095:4097].mean(dim=1), x)
    raise KeyError(wid)


def jax_fns(fw, wid, inp):
    jax, jnp = fw.jax, fw.jnp
    x = inp["x"]

    def jit(f, *args):
        j = jax.jit(f)
        return {"jax.jit": lambda: j(*args)}
    if wid in ("SR1", "SR2"):
        return jit(lambda a: jnp.sort(a, axis=-1), x)
    if wid in ("SR3", "SR4"):
        return jit(lambda a: jnp.argsort(a, axis=-1, stable=True), x)
    if wid == "SR5":
        v = _ints(x, lambda y: (y.astype(jnp.int64 if jax.config.jax_enable_x64 else jnp.int32) & 0xFFFF)
                  .astype(jnp.int32))
        # jit needs a static size: the count is read back first, as cufuse reads it back
        n = int(jnp.unique(v).shape[0])
        return jit(lambda a: jnp.unique(a, size=n), v)
    if wid == "SR6":
        return jit(lambda a: jnp.median(a, axis=1), x)
    raise KeyError(wid)


def check(wid, get, inp, out, part=None):
    """Sampled rows (or the whole vector) against NumPy's sort / median in float64."""
    import numpy as np
    f64 = np.float64
    if wid in ("SR1", "SR3"):
        x = get(inp["x"], np.s_[:]).astype(f64)
        got = get(out, np.s_[:])
        if wid == "SR3":
            got = x[got.astype(np.int64)]
        return compare(got.astype(f64)[:: 1 << 12], np.sort(x)[:: 1 << 12], 0, 0)
    if wid in ("SR2", "SR4", "SR6"):
        got, want = [], []
        for r in (0, SORT_ROWS[0] // 2, SORT_ROWS[0] - 1):
            row = get(inp["x"], np.s_[r]).astype(f64)
            if wid == "SR6":
                s = np.sort(row)
                want.append(np.array([(s[4095] + s[4096]) / 2]))
                got.append(np.asarray(get(out, np.s_[r]), f64).reshape(1))
            elif wid == "SR4":
                want.append(np.sort(row))
                got.append(row[get(out, np.s_[r]).astype(np.int64)])
            else:
                want.append(np.sort(row))
                got.append(get(out, np.s_[r]).astype(f64))
        return compare(np.concatenate(got), np.concatenate(want), 1e-6 if wid == "SR6" else 0, 0)
    if wid == "SR5":
        u = np.asarray(get(out, np.s_[:]))
        ok = bool(np.all(u[1:] > u[:-1])) and 0 < u.size <= 1 << 16
        return ok, "%d distinct values, strictly increasing" % u.size
    return False, "no check for " + wid
