"""bench/peers_loops.py: issue 37's workloads for peers.py: the programs as NumPy-style code
over an array module xp (CuPy runs them; NumPy in float64 is their reference), the constants
and data they share with cufuse-bench (bench/loop_programs.hpp), LoopPeer (an iterative
program timed one iteration per call), and the checks of W13-W16 and L1-L3."""
import time

from peers_common import ADAM_N, BS_N, KM_K, SCAN_ROWS, compare, odd_stride

# W13: the Adam step (the bias corrections' step a constant, as in bench/loop_programs.hpp)
LR, B1, B2, EPS, ADAM_STEP = 1e-3, 0.9, 0.999, 1e-8, 10
C1, C2 = 1 - B1 ** ADAM_STEP, 1 - B2 ** ADAM_STEP
# W15
RISK_FREE, VOLATILITY = 0.02, 0.3
# W16, L1-L3: tolerances, iterations checked against NumPy, most iterations of one solve
CG_TOL, EM_TOL, GD_TOL, GD_LR = 0.1, 1e-6, 1e-4, 0.5
CHECK_ITERS = {"W16": 10, "L1": 3, "L2": 3, "L3": 3}
MAX_ITER = {"W16": 5000, "L1": 300, "L2": 500, "L3": 1000}
EM_MU0 = [-2.0, -0.5, 0.5, 2.0]


# ----------------------------------------------------------------------------- data
def int_stream(stream, n):
    """W16's integers: element i of stream s is splitmix64(s * 2^40 + i) mod 100 - 50 (float64),
    as bench/loop_programs.cpp's int_stream, so that every framework solves the same system."""
    import numpy as np
    u64 = np.uint64
    z = np.arange(n, dtype=u64) + u64(stream << 40)
    z = z + u64(0x9E3779B97F4A7C15)
    z = (z ^ (z >> u64(30))) * u64(0xBF58476D1CE4E5B9)
    z = (z ^ (z >> u64(27))) * u64(0x94D049BB133111EB)
    z = z ^ (z >> u64(31))
    return (z % u64(100)).astype(np.float64) - 50.0


def adam_ref(w, g, m, v):
    """One Adam step in float64 (NumPy arrays): w, m, v after it."""
    import numpy as np
    m = B1 * m + (1 - B1) * g
    v = B2 * v + (1 - B2) * g * g
    return w - LR * (m / C1) / (np.sqrt(v / C2) + EPS), m, v


def black_scholes(xp, s, x, t, r, v):
    """CuPy's examples/finance/black_scholes.py, black_scholes()."""
    sqrt_t = xp.sqrt(t)
    d1 = (xp.log(s / x) + (r + v * v / 2) * t) / (v * sqrt_t)
    d2 = d1 - v * sqrt_t

    def get_cumulative_normal_distribution(x):
        A1 = 0.31938153
        A2 = -0.356563782
        A3 = 1.781477937
        A4 = -1.821255978
        A5 = 1.330274429
        RSQRT2PI = 0.39894228040143267793994605993438
        W = 0.2316419

        k = 1 / (1 + W * xp.abs(x))
        cnd = RSQRT2PI * xp.exp(-x * x / 2) * (k * (A1 + k * (A2 + k * (A3 + k * (A4 + k * A5)))))
        cnd = xp.where(x > 0, 1 - cnd, cnd)
        return cnd

    cnd_d1 = get_cumulative_normal_distribution(d1)
    cnd_d2 = get_cumulative_normal_distribution(d2)
    exp_rt = xp.exp(- r * t)
    call = s * cnd_d1 - x * exp_rt * cnd_d2
    put = x * exp_rt * (1 - cnd_d2) - s * (1 - cnd_d1)
    return call, put


# ----------------------------------------------------------------------------- the programs
# Each: reset() makes the initial state, step() runs one iteration (its convergence scalar
# read back) and says whether it converged, result() the arrays the check compares,
# summary() what a whole solve reached.
class CG:
    """CuPy's examples/cg/cg.py, fit(), one iteration per step()."""

    def __init__(self, xp, A, b, x_ans=None, tol=CG_TOL):
        self.xp, self.A, self.b, self.x_ans, self.tol = xp, A, b, x_ans, tol

    def reset(self):
        xp = self.xp
        self.x = xp.zeros_like(self.b, dtype=xp.float64)
        self.r0 = self.b - xp.dot(self.A, self.x)
        self.p = self.r0

    def step(self):
        xp, A = self.xp, self.A
        a = xp.inner(self.r0, self.r0) / xp.inner(self.p, xp.dot(A, self.p))
        self.x += a * self.p
        r1 = self.r0 - a * xp.dot(A, self.p)
        if xp.linalg.norm(r1) < self.tol:
            return True
        b = xp.inner(r1, r1) / xp.inner(self.r0, self.r0)
        self.p = r1 + b * self.p
        self.r0 = r1
        return False

    def result(self):
        return (self.x,)

    def summary(self):
        if self.x_ans is None:
            return ""
        return "|x - x_ans| = %.3g" % float(self.xp.linalg.norm(self.x - self.x_ans))


class KMeans:
    """L1: assignments by argmin, centers by masked sums, all(new_pred == pred) read back."""

    def __init__(self, xp, X, k=KM_K):
        self.xp, self.X, self.k = xp, X, k
        self.iterations = 0

    def reset(self):
        xp = self.xp
        self.centers = self.X[:self.k].copy()
        self.pred = xp.zeros(len(self.X), dtype=xp.int64)
        self.iterations = 0

    def step(self):
        xp, X = self.xp, self.X
        self.iterations += 1
        d = xp.sum((X[:, None, :] - self.centers[None, :, :]) ** 2, axis=2)
        new_pred = xp.argmin(d, axis=1)
        if xp.all(new_pred == self.pred):
            return True
        self.pred = new_pred
        mask = self.pred[:, None] == xp.arange(self.k)[None, :]
        counts = xp.sum(mask, axis=0, dtype=X.dtype)
        sums = xp.sum(xp.where(mask[:, :, None], X[:, None, :], X.dtype.type(0)), axis=0)
        self.centers = sums / counts[:, None]
        return False

    def result(self):
        return (self.centers,)

    def summary(self):
        return "%d iterations to a fixed assignment" % self.iterations


class GaussianMixtureEM:
    """L2: EM for a 1-D mixture of 4 Gaussians; the mean log-likelihood read back."""

    def __init__(self, xp, x, tol=EM_TOL):
        self.xp, self.x, self.tol = xp, x, tol

    def reset(self):
        xp, dt = self.xp, self.x.dtype
        self.w = xp.full(4, 0.25, dtype=dt)
        self.mu = xp.asarray(EM_MU0, dtype=dt)
        self.var = xp.ones(4, dtype=dt)
        self.prev_ll = -float("inf")
        self.ll = None

    def step(self):
        xp = self.xp
        f = self.x.dtype.type
        xc = self.x[:, None]
        dev = xc - self.mu
        lp = f(-0.5) * dev * dev / self.var - f(0.5) * xp.log(f(6.283185307179586) * self.var) + xp.log(self.w)
        mx = xp.max(lp, axis=1, keepdims=True)
        lse = mx + xp.log(xp.sum(xp.exp(lp - mx), axis=1, keepdims=True))
        resp = xp.exp(lp - lse)
        nk = xp.sum(resp, axis=0)
        self.w = nk / f(len(self.x))
        self.mu = xp.sum(resp * xc, axis=0) / nk
        self.var = xp.sum(resp * (xc - self.mu) ** 2, axis=0) / nk
        self.ll = float(xp.mean(lse))
        done = abs(self.ll - self.prev_ll) < self.tol
        self.prev_ll = self.ll
        return done

    def result(self):
        return self.w, self.mu, self.var

    def summary(self):
        return "mean log-likelihood %.7g" % self.ll


class GradientDescent:
    """L3: least squares by gradient descent, x -= lr * g in place, |g| read back."""

    def __init__(self, xp, A, b, tol=GD_TOL):
        self.xp, self.A, self.b, self.tol = xp, A, b, tol

    def reset(self):
        self.x = self.xp.zeros(self.A.shape[1], dtype=self.A.dtype)
        self.gnorm = None

    def step(self):
        xp = self.xp
        f = self.A.dtype.type
        r = self.A @ self.x - self.b
        g = (r @ self.A) / f(self.A.shape[0])
        self.x -= f(GD_LR) * g
        self.gnorm = float(xp.linalg.norm(g))
        return self.gnorm < self.tol

    def result(self):
        return (self.x,)

    def summary(self):
        return "|g| = %.3g" % self.gnorm


class LoopPeer:
    """An iterative program as a peers.py callable: each call is one iteration (a converged
    solve starts again); check_run() runs the checked iterations from the start; solve_note()
    solves to convergence once when that fits the time allowed (quick: 15 s, else 60 s)."""

    def __init__(self, wid, program, sync):
        self.wid, self.program, self.sync = wid, program, sync

    def check_run(self):
        p = self.program
        p.reset()
        for _ in range(CHECK_ITERS[self.wid]):
            if p.step():
                break
        return p.result()

    def before(self):
        self.program.reset()

    def __call__(self):
        if self.program.step():
            self.program.reset()
        return self.program.result()[0]

    def solve_note(self, per_iter_ms, quick):
        allowed_ms = 15000 if quick else 60000
        max_iter = MAX_ITER[self.wid]
        if per_iter_ms * max_iter > allowed_ms:
            return "solve to convergence skipped (up to %d iterations at %.0f us would pass %.0f s)" % (
                max_iter, per_iter_ms * 1e3, allowed_ms / 1e3)
        p = self.program
        p.reset()
        self.sync(p.result()[0])
        t0 = time.perf_counter()
        iters, converged = 0, False
        while iters < max_iter and not converged:
            converged = p.step()
            iters += 1
        self.sync(p.result()[0])
        ms = (time.perf_counter() - t0) * 1e3
        s = p.summary()
        return "solve: %s after %d iterations in %.1f ms (%.1f us per iteration)%s" % (
            "converged" if converged else "stopped", iters, ms, ms / iters * 1e3, (", " + s) if s else "")


# ----------------------------------------------------------------------------- checks
def reference(wid, get, inp):
    """The NumPy float64 program of an iterative workload on the framework's own data."""
    import numpy as np
    f64 = np.float64
    if wid == "W16":
        return CG(np, get(inp["A"], np.s_[:]).astype(f64), get(inp["b"], np.s_[:]).astype(f64))
    if wid == "L1":
        return KMeans(np, get(inp["X"], np.s_[:]).astype(f64))
    if wid == "L2":
        return GaussianMixtureEM(np, get(inp["x"], np.s_[:]).astype(f64))
    if wid == "L3":
        return GradientDescent(np, get(inp["A"], np.s_[:]).astype(f64), get(inp["b"], np.s_[:]).astype(f64))
    raise KeyError(wid)


def check_cumsum(x, y, atol):
    """y = cumsum(x) along the last axis: against float64 prefix sums (atol: float32 rounding
    of the running sum grows along it) and, tighter, y[i] - y[i-1] against x[i]."""
    import numpy as np
    want = np.cumsum(x.astype(np.float64), axis=-1)
    ok1, d1 = compare(y, want, 1e-6, atol)
    step = np.diff(y.astype(np.float32), axis=-1, prepend=np.float32(0))
    ok2, d2 = compare(step, x, 0, 1e-2)
    return ok1 and ok2, "%s; y[i] - y[i-1] = x[i]: %s" % (d1, d2)


def check(wid, get, inp, out, part=None):
    import numpy as np
    f64 = np.float64
    if wid == "W13":
        s = odd_stride(ADAM_N)
        w0, g, m0, v0 = (get(inp[k], np.s_[::s]).astype(f64) for k in ("w0", "g", "m0", "v0"))
        want = adam_ref(w0, g, m0, v0)
        res = [compare(get(o, np.s_[::s]), wv, 1e-6, atol) for o, wv, atol in zip(out, want, (1e-6, 1e-7, 1e-9))]
        return all(r[0] for r in res), "; ".join("%s: %s" % (n, r[1]) for n, r in zip("wmv", res))
    if wid == "W14":
        if part == "1-D":
            return check_cumsum(get(inp["x"], np.s_[:]), get(out, np.s_[:]), 1.0)
        rows = (0, SCAN_ROWS[0] // 2 + 1, SCAN_ROWS[0] - 1)
        return check_cumsum(np.stack([get(inp["x2"], np.s_[r]) for r in rows]),
                            np.stack([get(out, np.s_[r]) for r in rows]), 1e-3)
    if wid == "W15":
        s = odd_stride(BS_N)
        hs, hx, ht = (get(inp[k], np.s_[::s]).astype(f64) for k in ("s", "x", "t"))
        want = black_scholes(np, hs, hx, ht, RISK_FREE, VOLATILITY)
        res = [compare(get(o, np.s_[::s]), wv, 1e-9, 1e-9) for o, wv in zip(out, want)]
        return all(r[0] for r in res), "call: %s; put: %s" % (res[0][1], res[1][1])
    if wid in CHECK_ITERS:
        ref = reference(wid, get, inp)
        ref.reset()
        n = CHECK_ITERS[wid]
        for _ in range(n):
            if ref.step():
                break
        names = {"W16": ["x"], "L1": ["centers"], "L2": ["weights", "means", "variances"], "L3": ["x"]}[wid]
        tol = {"W16": (1e-7, None), "L1": (0, 1e-3), "L2": (1e-4, 1e-5), "L3": (1e-4, 1e-5)}[wid]
        res = []
        for name, got, want in zip(names, out, ref.result()):
            want = np.asarray(want)
            atol = tol[1] if tol[1] is not None else 1e-9 * float(np.abs(want).max())
            res.append((name, compare(get(got, np.s_[:]), want, tol[0], atol)))
        return all(r[1][0] for r in res), "after %d iterations: %s" % (
            n, "; ".join("%s: %s" % (name, r[1]) for name, r in res))
    return False, "no check for " + wid
