"""bench/peers_manip.py: issue 30's joining and padding workloads (M1-M3) for the framework
classes of peers_frameworks.py: each framework's peer callables and the checks against NumPy.
The inputs are SHARED_INPUTS of peers_common.py (the float32 arrays every framework draws alike).

  M1  concatenate([x*2, exp(y)]) (axis 0), x, y f32[4096,4096]
  M2  stack([x, y]) (axis 0), x, y f32[4096,4096]
  M3  pad(x, 1, "reflect"), x f32[8192,8192]
"""
from peers_common import JOIN_N, PAD_N, compare

IDS = ("M1", "M2", "M3")


def cupy_fns(fw, wid, inp):
    cp = fw.cp
    if wid == "M1":
        x, y = inp["x"], inp["y"]
        return {"cupy": lambda: cp.concatenate([x * 2, cp.exp(y)])}
    if wid == "M2":
        x, y = inp["x"], inp["y"]
        return {"cupy": lambda: cp.stack([x, y])}
    if wid == "M3":
        x = inp["x"]
        return {"cupy": lambda: cp.pad(x, 1, mode="reflect")}
    raise KeyError(wid)


def torch_fns(fw, wid, inp):
    t = fw.torch

    def both(f, *args):
        c = t.compile(f, dynamic=False)
        return {"torch": lambda: f(*args), "torch.compile": lambda: c(*args)}
    if wid == "M1":
        return both(lambda x, y: t.cat([x * 2, t.exp(y)]), inp["x"], inp["y"])
    if wid == "M2":
        return both(lambda x, y: t.stack([x, y]), inp["x"], inp["y"])
    if wid == "M3":
        # torch's reflect pad of the last two dims wants a (C, H, W) input
        return both(lambda x: t.nn.functional.pad(x[None], (1, 1, 1, 1), mode="reflect")[0], inp["x"])
    raise KeyError(wid)


def jax_fns(fw, wid, inp):
    jax, jnp = fw.jax, fw.jnp

    def jit(f, *args):
        j = jax.jit(f)
        return {"jax.jit": lambda: j(*args)}
    if wid == "M1":
        return jit(lambda x, y: jnp.concatenate([x * 2, jnp.exp(y)]), inp["x"], inp["y"])
    if wid == "M2":
        return jit(lambda x, y: jnp.stack([x, y]), inp["x"], inp["y"])
    if wid == "M3":
        return jit(lambda x: jnp.pad(x, 1, mode="reflect"), inp["x"])
    raise KeyError(wid)


def check(wid, get, inp, out, part=None):
    """Rows of the result against NumPy in float64 (rows at both edges of each part)."""
    import numpy as np
    f64 = np.float64
    n = JOIN_N
    if wid == "M1":
        got, want = [], []
        for r in (0, 1, n // 2, n - 1):
            got.append(get(out, np.s_[r]))
            want.append(get(inp["x"], np.s_[r]).astype(f64) * 2)
            got.append(get(out, np.s_[n + r]))
            want.append(np.exp(get(inp["y"], np.s_[r]).astype(f64)))
        return compare(np.concatenate(got), np.concatenate(want), 1e-6, 1e-30)
    if wid == "M2":
        got, want = [], []
        for r in (0, n // 3, n - 1):
            for k, name in enumerate(("x", "y")):
                got.append(get(out, np.s_[k, r]))
                want.append(get(inp[name], np.s_[r]).astype(f64))
        return compare(np.concatenate(got), np.concatenate(want), 0, 0)
    if wid == "M3":
        m = PAD_N
        got, want = [], []
        for r in (0, 1, 2, m // 2, m, m + 1):
            src = 1 if r == 0 else (m - 2 if r == m + 1 else r - 1)  # reflect: no edge repeat
            row = get(inp["x"], np.s_[src]).astype(f64)
            want.append(np.concatenate([row[1:2], row, row[-2:-1]]))
            got.append(get(out, np.s_[r]))
        return compare(np.concatenate(got), np.concatenate(want), 0, 0)
    return False, "no check for " + wid
