"""bench/peers_common.py: what peers.py's processes share: the workloads of WORKLOADS.md
(sizes, bytes, which peers have a column), the timing rules, and the checks against NumPy."""
import math
import statistics
import time

# cupy.kernel: a hand-written CuPy kernel (W15: the example's cupy.ElementwiseKernel).
PEERS = ["cupy", "cupy.fuse", "cupy.kernel", "torch", "torch.compile", "jax.jit"]
PEER_TITLES = {"cupy": "CuPy", "cupy.fuse": "cupy.fuse", "cupy.kernel": "CuPy kernel", "torch": "torch",
               "torch.compile": "torch.compile", "jax.jit": "JAX jit"}
FRAMEWORK_OF = {"cupy": "cupy", "cupy.fuse": "cupy", "cupy.kernel": "cupy", "torch": "torch",
                "torch.compile": "torch", "jax.jit": "jax"}

N1 = 1 << 27            # W1, W2
ROWS = 8192             # W3, W4
EIN = (65536, 1024)     # W5
DIST = (10000, 784)     # W6
SMALL = 10000           # W7
MM = 15000              # W8
PROD = (4096, 512, 512)  # W9
CONV = 2048             # W10
KSIZE = 15
FIRST_N = 1 << 20       # W12
ADAM_N = 1 << 26        # W13
SCAN_N = 1 << 26        # W14: 1-D, and rows of SCAN_ROWS
SCAN_ROWS = (16384, 4096)
BS_N = 10000000         # W15
CG_N = 2000             # W16
KM_N, KM_K = 1 << 20, 16  # L1
EM_N = 1 << 22          # L2
GD_SHAPE = (8192, 1024)  # L3
JOIN_N = 4096           # M1, M2 (issue 30: joining)
PAD_N = 8192            # M3 (issue 30: pad)
IDX_N = 1 << 26         # I1, I2 (issue 30)
AT_N, AT_BINS = 1 << 24, 1 << 20  # I3

# id -> description, bytes that must move (None: not memory-bound), flops, unit,
#       the peers WORKLOADS.md's table has a column for, and the reason for the others.
WORKLOADS = {
    "W1": dict(desc="(x*2.5+1)*sin(x) - exp(-x*x) + sqrt(abs(x)), x f32[2^27]",
               bytes=2 * N1 * 4, peers=PEERS),
    "W2": dict(desc="sum((x-y)*(x-y)), x,y f32[2^27]", bytes=2 * N1 * 4, peers=PEERS),
    "W3": dict(desc="row softmax exp(a - max(a,1,keepdims)) / sum(...), f32[8192,8192]",
               bytes=2 * ROWS * ROWS * 4, peers=["cupy", "torch", "torch.compile", "jax.jit"]),
    "W4": dict(desc="row layernorm (a-mean)/sqrt(var+1e-5)*g+b, f32[8192,8192]",
               bytes=2 * ROWS * ROWS * 4 + 2 * ROWS * 4, peers=["cupy", "torch", "torch.compile", "jax.jit"]),
    "W5": dict(desc="einsum('ij,ij->i', a, b), f32[65536,1024] each",
               bytes=2 * EIN[0] * EIN[1] * 4 + EIN[0] * 4, peers=["cupy", "torch", "torch.compile", "jax.jit"]),
    "W6": dict(desc="sqrt(max(sum(q*q,1)[:,None] - 2*q@p.T + sum(p*p,1)[None,:], 0)), p,q f32[10000,784], full fp32",
               flops=2.0 * DIST[0] * DIST[0] * DIST[1], peers=["cupy", "torch", "torch.compile", "jax.jit"]),
    "W7a": dict(desc="(x-y)*(x-y), f32[10000], time per call", unit="us", peers=PEERS),
    "W7b": dict(desc="((x-y)*(x+y)*0.5 + x*3 - y/2) * (x*x+1), f32[10000], time per call", unit="us", peers=PEERS),
    "W8": dict(desc="matmul f32[15000,15000], fp32 / TF32", flops=2.0 * MM ** 3, peers=["cupy", "torch"]),
    "W9": dict(desc="prod(axis=0) of f64[4096,512,512]",
               bytes=PROD[0] * PROD[1] * PROD[2] * 8 + PROD[1] * PROD[2] * 8, peers=["cupy", "torch", "torch.compile"]),
    "W10": dict(desc="convolve2d (full) of f64[2048,2048] with a 15x15 Gaussian", peers=["cupy"]),
    "W11": dict(desc="linalg: qr f32[512,512] / det f32[512,512] / inv f32[6000,6000]", peers=["cupy"]),
    "W12": dict(desc="first call of a new fused elementwise function (context up): empty / warm disk cache, new process",
                peers=["cupy.fuse", "torch.compile"]),
    # issue 35: W12's protocol for W3's row softmax (cupy.fuse where it takes the function, else CuPy's ops)
    "W12-softmax": dict(desc="first call of W3's row softmax f32[8192,8192] (context up): empty / warm disk cache, "
                             "new process", peers=["cupy.fuse", "torch.compile"]),
    # issue 35: a fresh process running seed 004's fusion lesson and W3's softmax, wall time
    "W12c": dict(desc="cold start: a fresh process running seed 004's fusion lesson and W3's softmax, empty / warm "
                      "disk cache, wall time", peers=["cupy.fuse", "torch.compile"]),
    # issue 37: lazy across statements and loops (bench/loop_workloads.cpp)
    "W13": dict(desc="Adam step in place (torch: torch._fused_adam_; JAX: the functional step, buffers donated), "
                     "f32[2^26] each", bytes=7 * 4 * ADAM_N, peers=["torch", "torch.compile", "jax.jit"]),
    "W14": dict(desc="cumsum of f32[2^26] / cumsum(x, axis=1) of f32[16384,4096]", bytes=2 * 4 * SCAN_N,
                peers=["cupy", "torch", "torch.compile", "jax.jit"]),
    "W15": dict(desc="CuPy's black_scholes.py: 10M float64 options, call and put", bytes=5 * 8 * BS_N,
                peers=["cupy", "cupy.kernel", "torch", "torch.compile", "jax.jit"]),
    "W16": dict(desc="CuPy's cg.py: N = 2000 float64, A = R R^T, tol 0.1, time per iteration", unit="us",
                peers=["cupy", "torch", "torch.compile", "jax.jit"]),
    "L1": dict(desc="k-means, 2^20 points in 2-D, 16 centers, all(new == old) read back, per iteration", unit="us",
               peers=["cupy", "torch"]),
    "L2": dict(desc="EM, 1-D mixture of 4 Gaussians, 2^22 points, log-likelihood read back, per iteration",
               unit="us", peers=["cupy", "torch"]),
    "L3": dict(desc="gradient descent, least squares, A f32[8192,1024], |g| read back, per iteration", unit="us",
               peers=["cupy", "torch"]),
    # issue 30: joining and padding (bench/manipulation_workloads.cpp, peers_manip.py)
    "M1": dict(desc="concatenate([x*2, exp(y)]), x,y f32[4096,4096]", bytes=4 * JOIN_N * JOIN_N * 4,
               peers=["cupy", "torch", "torch.compile", "jax.jit"]),
    "M2": dict(desc="stack([x, y]), x,y f32[4096,4096]", bytes=4 * JOIN_N * JOIN_N * 4,
               peers=["cupy", "torch", "torch.compile", "jax.jit"]),
    "M3": dict(desc="pad(x, 1, 'reflect'), x f32[8192,8192]", bytes=(PAD_N * PAD_N + (PAD_N + 2) ** 2) * 4,
               peers=["cupy", "torch", "torch.compile", "jax.jit"]),
    # issue 30: advanced indexing (bench/indexing_workloads.cpp)
    "I1": dict(desc="x[mask], half of the mask True, x f32[2^26]", bytes=IDX_N * 4 + IDX_N + IDX_N // 2 * 4,
               peers=["cupy", "torch", "torch.compile", "jax.jit"]),
    # about 30% of a normal x has sin(x) > 0.5 (0.296): read x once, write the selected values
    "I1-lazy": dict(desc="(x*2)[sin(x) > 0.5], x f32[2^26]", bytes=IDX_N * 4 + int(IDX_N * 0.296) * 4,
                    peers=["cupy", "torch", "torch.compile", "jax.jit"]),
    "I2": dict(desc="take(x, idx), idx random int64, x f32[2^26]", bytes=IDX_N * 8 + IDX_N * 4 + IDX_N * 4,
               peers=["cupy", "torch", "torch.compile", "jax.jit"]),
    "I3": dict(desc="add_at of 2^24 f32 values into 2^20 bins, random idx",
               bytes=AT_N * 8 + AT_N * 4 + AT_BINS * 4 * 2, peers=["cupy", "torch", "torch.compile", "jax.jit"]),
    # issue 33: statistics (bench/statistics_workloads.cpp, peers_stats.py)
    "H1": dict(desc="histogram of f32[2^26] into 1024 bins, range given", bytes=(1 << 26) * 4,
               peers=["cupy", "torch", "torch.compile", "jax.jit"]),
    "H2": dict(desc="bincount of int32[2^26] in [0, 1024)", bytes=(1 << 26) * 4 * 2,
               peers=["cupy", "torch", "torch.compile", "jax.jit"]),
}
INDEXING = ("I1", "I1-lazy", "I2", "I3")
# issue 33: sorting (bench/sorting_workloads.cpp, peers_sort.py); floors: read the input, write the result
SORT_N, SORT_ROWS = 1 << 26, (8192, 8192)
_SORT_PEERS = ["cupy", "torch", "torch.compile", "jax.jit"]
WORKLOADS.update({
    "SR1": dict(desc="sort(x), x f32[2^26]", bytes=SORT_N * 8, peers=_SORT_PEERS),
    "SR2": dict(desc="sort(x, axis=1), x f32[8192,8192]", bytes=SORT_N * 8, peers=_SORT_PEERS),
    "SR3": dict(desc="argsort(x), x f32[2^26]", bytes=SORT_N * 12, peers=_SORT_PEERS),
    "SR4": dict(desc="argsort(x, axis=1), x f32[8192,8192]", bytes=SORT_N * 12, peers=_SORT_PEERS),
    "SR5": dict(desc="unique(v), v int32[2^26], 2^16 distinct", bytes=SORT_N * 4, peers=_SORT_PEERS),
    "SR6": dict(desc="median(x, axis=1), x f32[8192,8192]", bytes=SORT_N * 4, peers=_SORT_PEERS),
})
# issue 33: FFT (bench/fft_workloads.cpp, peers_fft.py); floors: read the input, write the result
FFT_N, FFT_SIDE = 1 << 24, 4096
_FFT_PEERS = ["cupy", "torch", "torch.compile", "jax.jit"]
WORKLOADS.update({
    "FF1": dict(desc="fft(z), z c64[2^24]", bytes=FFT_N * 16, peers=_FFT_PEERS),
    "FF2": dict(desc="rfft2(x), x f32[4096,4096]", bytes=FFT_SIDE * FFT_SIDE * 4 + FFT_SIDE * (FFT_SIDE // 2 + 1) * 8,
                peers=_FFT_PEERS),
    "FF3": dict(desc="abs(fft(z * w)) ** 2, z c64[2^24], w f32[2^24]", bytes=FFT_N * 16, peers=_FFT_PEERS),
})
# The float32 inputs every framework makes alike, by name and shape, in the order drawn.
SHARED_INPUTS = {
    "W1": dict(x=N1), "W2": dict(x=N1, y=N1), "W3": dict(a=(ROWS, ROWS)),
    "W4": dict(a=(ROWS, ROWS), g=ROWS, b=ROWS), "W5": dict(a=EIN, b=EIN), "W6": dict(q=DIST, p=DIST),
    "W7a": dict(x=SMALL, y=SMALL), "W7b": dict(x=SMALL, y=SMALL), "W8": dict(a=(MM, MM), b=(MM, MM)),
    "W14": dict(x=SCAN_N, x2=SCAN_ROWS),
    "M1": dict(x=(JOIN_N, JOIN_N), y=(JOIN_N, JOIN_N)), "M2": dict(x=(JOIN_N, JOIN_N), y=(JOIN_N, JOIN_N)),
    "M3": dict(x=(PAD_N, PAD_N)),
    "SR1": dict(x=1 << 26), "SR2": dict(x=(8192, 8192)), "SR3": dict(x=1 << 26), "SR4": dict(x=(8192, 8192)),
    "SR5": dict(x=1 << 26), "SR6": dict(x=(8192, 8192)),
    "FF1": dict(x=FFT_N, y=FFT_N), "FF2": dict(x=(FFT_SIDE, FFT_SIDE)), "FF3": dict(x=FFT_N, y=FFT_N, u=FFT_N),
}


def shared_inputs(randn, wid, f32):
    """SHARED_INPUTS[wid] drawn with the framework's randn(shape, dtype); None for other ids."""
    if wid not in SHARED_INPUTS:
        return None
    return {name: randn(shape, f32) for name, shape in SHARED_INPUTS[wid].items()}


ORDER = ["W1", "W2", "W3", "W4", "W5", "W6", "W7a", "W7b", "W8", "W9", "W10", "W11", "W12", "W12-softmax", "W12c",
         "W13", "W14", "W15", "W16", "L1", "L2", "L3", "M1", "M2", "M3", "I1", "I1-lazy", "I2", "I3", "H1", "H2",
         "SR1", "SR2", "SR3", "SR4", "SR5", "SR6", "FF1", "FF2", "FF3"]
# cufuse-bench's rows with no peer columns: peers.py skips them when --only names them.
CUFUSE_ONLY = ("R10k", "W1-interp", "W2-interp", "W3-interp", "W4-interp")
LOOPS = ("W16", "L1", "L2", "L3")  # timed per iteration (LoopPeer)
NA_REASON = "not a column of WORKLOADS.md's table for this workload"


# ----------------------------------------------------------------------------- timing
def time_batches(fn, sync, quick):
    """Warm up, then batches of calls each ended by one synchronize; median of batch means (ms)."""
    last = None
    for _ in range(2 if quick else 5):
        last = fn()
    sync(last)
    est = float("inf")
    for _ in range(3):
        t0 = time.perf_counter()
        last = fn()
        sync(last)
        est = min(est, time.perf_counter() - t0)
    target = 0.02 if quick else 0.1
    reps = int(min(max(target / max(est, 1e-6), 1), 200 if quick else 1000))
    batches = 5 if quick else 15
    if est > 0.05:
        batches = 3 if quick else 7
    means = []
    for _ in range(batches):
        t0 = time.perf_counter()
        for _ in range(reps):
            last = fn()
        sync(last)
        means.append((time.perf_counter() - t0) / reps * 1e3)
    del last
    return dict(time_ms=statistics.median(means), batch_ms=means, reps=reps, batches=batches)


def time_loop(fn, sync, quick):
    """Host-overhead workloads: loops of many calls then one synchronize; per-call time (ms)."""
    last = None
    for _ in range(200):
        last = fn()
    sync(last)
    calls, loops = (2000, 5) if quick else (10000, 11)
    per_call = []
    for _ in range(loops):
        t0 = time.perf_counter()
        for _ in range(calls):
            last = fn()
        sync(last)
        per_call.append((time.perf_counter() - t0) / calls * 1e3)
    del last
    return dict(time_ms=statistics.median(per_call), batch_ms=per_call, reps=calls, batches=loops)


# ----------------------------------------------------------------------------- checks
def compare(got, want, rtol, atol):
    import numpy as np
    got = np.asarray(got, dtype=np.float64).ravel()
    want = np.asarray(want, dtype=np.float64).ravel()
    if got.shape != want.shape:
        return False, "shape %s, want %s" % (got.shape, want.shape)
    err = np.abs(got - want)
    bad = ~(err <= atol + rtol * np.abs(want))  # NaN never passes
    if bad.any():
        i = int(np.argmax(bad))
        return False, "%d of %d sampled values differ; first [%d]: got %.9g, want %.9g" % (
            int(bad.sum()), got.size, i, got[i], want[i])
    return True, "%d sampled values match (max abs err %.3g)" % (got.size, float(err.max()) if err.size else 0.0)


def odd_stride(n, samples=1 << 20):
    s = max(1, n // samples)
    return s + 1 if s > 1 and s % 2 == 0 else s


def w1_ref(x):
    import numpy as np
    return (x * 2.5 + 1) * np.sin(x) - np.exp(-x * x) + np.sqrt(np.abs(x))


def w7a_ref(x, y):
    return (x - y) * (x - y)


def w7b_ref(x, y):
    return ((x - y) * (x + y) * 0.5 + x * 3 - y / 2) * (x * x + 1)


def gaussian_kernel():
    import numpy as np
    r = np.arange(KSIZE) - KSIZE // 2
    g = np.exp(-(r[:, None] ** 2 + r[None, :] ** 2) / (2 * 3.0 ** 2))
    return g / g.sum()


def check(wid, get, inp, out, part=None):
    """Compares out with NumPy in float64 on a sample. get(array, index) -> numpy."""
    import numpy as np
    f64 = np.float64
    if wid == "W1":
        s = odd_stride(N1)
        return compare(get(out, np.s_[::s]), w1_ref(get(inp["x"], np.s_[::s]).astype(f64)), 1e-4, 1e-4)
    if wid == "W2":
        x = get(inp["x"], np.s_[:]).astype(f64)
        y = get(inp["y"], np.s_[:]).astype(f64)
        want = np.sum((x - y) ** 2)
        del x, y
        # cupy.fuse's f32 sum lands ~6e-5 off on H100: 5e-4 still catches a wrong kernel
        return compare(get(out, ()), want, 5e-4, 0)
    if wid in ("W3", "W4"):
        ok, details = True, []
        for r in (0, ROWS // 2 + 1, ROWS - 1):
            a = get(inp["a"], np.s_[r]).astype(f64)
            if wid == "W3":
                e = np.exp(a - a.max())
                want = e / e.sum()
                res = compare(get(out, np.s_[r]), want, 1e-4, 1e-6 * want.max())
            else:
                g = get(inp["g"], np.s_[:]).astype(f64)
                b = get(inp["b"], np.s_[:]).astype(f64)
                want = (a - a.mean()) / np.sqrt(a.var() + 1e-5) * g + b
                res = compare(get(out, np.s_[r]), want, 1e-4, 1e-4)
            ok = ok and res[0]
            details.append(res[1])
        return ok, "rows 0, %d, %d: %s" % (ROWS // 2 + 1, ROWS - 1, "; ".join(details))
    if wid == "W5":
        rows = [0, 1, EIN[0] // 3, EIN[0] - 1]
        got, want, tol = [], [], []
        for r in rows:
            a = get(inp["a"], np.s_[r]).astype(f64)
            b = get(inp["b"], np.s_[r]).astype(f64)
            want.append(a @ b)
            tol.append(1e-5 * math.sqrt((a @ a) * (b @ b)))
            got.append(float(get(out, np.s_[r:r + 1])[0]))
        return compare(got, want, 0, max(tol))
    if wid == "W6":
        p = get(inp["p"], np.s_[:]).astype(f64)
        pp = (p * p).sum(1)
        got, want = [], []
        for r in (0, DIST[0] // 2, DIST[0] - 1):
            q = get(inp["q"], np.s_[r]).astype(f64)
            want.append(np.sqrt(np.maximum(q @ q - 2 * (p @ q) + pp, 0)))
            got.append(get(out, np.s_[r]))
        # fp32 GEMM errors are ~1e-6 here; TF32's are ~1e-4: 5e-5 tells them apart
        ok, d = compare(np.concatenate(got), np.concatenate(want), 0, 5e-5)
        return ok, d + ("" if ok else " (TF32 instead of full fp32?)")
    if wid in ("W7a", "W7b"):
        x = get(inp["x"], np.s_[:]).astype(f64)
        y = get(inp["y"], np.s_[:]).astype(f64)
        if wid == "W7a":
            return compare(get(out, np.s_[:]), w7a_ref(x, y), 1e-5, 1e-6)
        return compare(get(out, np.s_[:]), w7b_ref(x, y), 1e-4, 1e-3)
    if wid == "W8":
        tol = 1e-5 if part == "fp32" else 3e-3
        got, want, bound = [], [], []
        for i, j in ((0, 0), (1, MM - 1), (MM // 2, MM // 3), (MM - 1, 7)):
            a = get(inp["a"], np.s_[i]).astype(f64)
            b = get(inp["b"], np.s_[:, j]).astype(f64)
            want.append(a @ b)
            bound.append(math.sqrt((a @ a) * (b @ b)))
            got.append(float(get(out, np.s_[i, j:j + 1])[0]))
        return compare(got, want, 0, tol * max(bound))
    if wid == "W9":
        got, want = [], []
        for j, k in ((0, 0), (1, 511), (255, 300), (511, 511)):
            want.append(np.prod(get(inp["x"], np.s_[:, j, k]).astype(f64)))
            got.append(float(get(out, np.s_[j, k:k + 1])[0]))
        return compare(got, want, 1e-9, 0)
    if wid == "W10":
        a = get(inp["a"], np.s_[:]).astype(f64)
        k = gaussian_kernel()
        got, want = [], []
        for i, j in ((0, 0), (7, 2000), (1024, 1024), (2061, 2061), (2050, 13)):
            acc = 0.0
            for u in range(KSIZE):
                for v in range(KSIZE):
                    if 0 <= i - u < CONV and 0 <= j - v < CONV:
                        acc += a[i - u, j - v] * k[u, v]
            want.append(acc)
            got.append(float(get(out, np.s_[i, j:j + 1])[0]))
        return compare(got, want, 1e-10, 1e-12)
    if wid == "W11":
        if part == "qr":
            q, r = out
            qn, rn = get(q, np.s_[:]).astype(f64), get(r, np.s_[:]).astype(f64)
            a = get(inp["qr"], np.s_[:]).astype(f64)
            err = np.abs(qn @ rn - a).max() / np.abs(a).max()
            orth = np.abs(qn.T @ qn - np.eye(qn.shape[1])).max()
            ok = err < 1e-4 and orth < 1e-4
            return ok, "max |QR-A|/max|A| %.2g, max |QtQ-I| %.2g" % (err, orth)
        if part == "det":
            a = get(inp["det"], np.s_[:]).astype(f64)
            return compare(get(out, ()), np.linalg.det(a), 1e-3, 0)
        if part == "inv":
            a = get(inp["inv"], np.s_[:]).astype(f64)
            cols = [0, 1, 2999, 5999]
            errs = []
            for c in cols:
                xcol = get(out, np.s_[:, c]).astype(f64)
                e = np.zeros(a.shape[0])
                e[c] = 1
                errs.append(np.abs(a @ xcol - e).max())
            # rand(6000, 6000) has condition ~1e4-1e5: in float32 |A inv(A) - I| reaches ~1e-3;
            # the same bound as cufuse-bench's check (bench/library_workloads.cpp)
            return max(errs) <= 0.1, "max |A inv(A) - I| over %d columns: %.2g" % (len(cols), max(errs))
    if wid in ("W13", "W14", "W15", "W16", "L1", "L2", "L3"):
        import peers_loops
        return peers_loops.check(wid, get, inp, out, part)
    if wid in ("M1", "M2", "M3"):
        import peers_manip
        return peers_manip.check(wid, get, inp, out, part)
    if wid in INDEXING:
        return check_indexing(wid, get, inp, out)
    if wid in ("H1", "H2"):
        import peers_stats
        return peers_stats.check(wid, get, inp, out, part)
    if wid in ("SR1", "SR2", "SR3", "SR4", "SR5", "SR6"):
        import peers_sort
        return peers_sort.check(wid, get, inp, out, part)
    if wid in ("FF1", "FF2", "FF3"):
        import peers_fft
        return peers_fft.check(wid, get, inp, out, part)
    return False, "no check for " + wid


def check_indexing(wid, get, inp, out):
    """I1-I3 against NumPy (float64 sums for I3)."""
    import numpy as np
    if wid == "I1":
        x = get(inp["x"], np.s_[:])
        m = get(inp["mask"], np.s_[:])
        want = x[m]
        got = get(out, np.s_[:])
        if got.shape != want.shape:
            return False, "count %d, want %d" % (got.size, want.size)
        return compare(got[::97], want[::97], 0, 0)
    if wid == "I1-lazy":  # float32 sin as the framework computes it may differ from NumPy's near 0.5: counts within 0.01%
        x = get(inp["x"], np.s_[:])
        want = (x * np.float32(2))[np.sin(x) > np.float32(0.5)]
        got = get(out, np.s_[:])
        if abs(got.size - want.size) > 1e-4 * want.size:
            return False, "count %d, want %d" % (got.size, want.size)
        if got.size != want.size:
            return True, "count %d, NumPy %d (sin rounding at 0.5)" % (got.size, want.size)
        return compare(got[::97], want[::97], 0, 0)
    if wid == "I2":
        s = odd_stride(IDX_N)
        x = get(inp["x"], np.s_[:])
        i = get(inp["idx"], np.s_[::s])
        return compare(get(out, np.s_[::s]), x[i], 0, 0)
    if wid == "I3":
        i = get(inp["idx"], np.s_[:])
        v = get(inp["v"], np.s_[:]).astype(np.float64)
        want = np.bincount(i, weights=v, minlength=AT_BINS)
        return compare(get(out, np.s_[:]), want, 1e-4, 1e-4)
    return False, "no check for " + wid


