"""bench/peers_fft.py: issue 33's FFT workloads (FF1-FF3) for the framework classes of
peers_frameworks.py: each framework's peer callables and the checks against NumPy. The inputs
are SHARED_INPUTS of peers_common.py (float32 normals every framework draws alike); the complex
z = x + 1j * y and the window w = |u| are made from them before timing.

  FF1  fft(z), z c64[2^24]                       FF2  rfft2(x), x f32[4096,4096]
  FF3  abs(fft(z * w)) ** 2, z c64[2^24], w f32[2^24] (a fused spectrum)
"""
from peers_common import compare

IDS = ("FF1", "FF2", "FF3")
FFT_N = 1 << 24
FFT_SIDE = 4096


def cupy_fns(fw, wid, inp):
    cp = fw.cp
    if wid == "FF2":
        x = inp["x"]
        return {"cupy": lambda: cp.fft.rfft2(x)}
    z = inp["x"] + 1j * inp["y"]
    if wid == "FF1":
        return {"cupy": lambda: cp.fft.fft(z)}
    w = cp.abs(inp["u"])
    return {"cupy": lambda: cp.abs(cp.fft.fft(z * w)) ** 2}


def torch_fns(fw, wid, inp):
    t = fw.torch

    def both(f, *args):
        c = t.compile(f, dynamic=False)
        return {"torch": lambda: f(*args), "torch.compile": lambda: c(*args)}
    if wid == "FF2":
        return both(lambda a: t.fft.rfft2(a), inp["x"])
    z = t.complex(inp["x"], inp["y"])
    if wid == "FF1":
        return both(lambda a: t.fft.fft(a), z)
    w = inp["u"].abs()
    return both(lambda a, b: t.fft.fft(a * b).abs() ** 2, z, w)


def jax_fns(fw, wid, inp):
    jax, jnp = fw.jax, fw.jnp

    def jit(f, *args):
        j = jax.jit(f)
        return {"jax.jit": lambda: j(*args)}
    if wid == "FF2":
        return jit(lambda a: jnp.fft.rfft2(a), inp["x"])
    z = jax.lax.complex(inp["x"], inp["y"])
    if wid == "FF1":
        return jit(lambda a: jnp.fft.fft(a), z)
    w = jnp.abs(inp["u"])
    return jit(lambda a, b: jnp.abs(jnp.fft.fft(a * b)) ** 2, z, w)


def check(wid, get, inp, out, part=None):
    """Sampled bins against NumPy's FFT of the same inputs in float64 (FF2: the first rows)."""
    import numpy as np
    f64 = np.float64
    if wid == "FF2":
        x = get(inp["x"], np.s_[:]).astype(f64)
        want = np.fft.rfft2(x)[:4]
        got = np.asarray(get(out, np.s_[:4]))
        scale = np.abs(want).max()
        return compare(np.abs(got - want).ravel() / scale, np.zeros(want.size), 0, 1e-4)
    z = get(inp["x"], np.s_[:]).astype(f64) + 1j * get(inp["y"], np.s_[:]).astype(f64)
    if wid == "FF3":
        z = z * np.abs(get(inp["u"], np.s_[:]).astype(f64))
    f = np.fft.fft(z)
    want = f if wid == "FF1" else np.abs(f) ** 2
    got = np.asarray(get(out, np.s_[:]))
    scale = np.abs(want).max()
    s = np.s_[:: 1 << 10]
    return compare((np.abs(got[s] - want[s]) / scale).ravel(), np.zeros(want[s].size), 0, 1e-4)
