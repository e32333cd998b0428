"""bench/peers_loop_frameworks.py: issue 37's workloads (W13-W16, L1-L3) for the framework
classes of peers_frameworks.py: each framework's inputs and peer callables. CuPy runs the
NumPy-style programs of peers_loops.py as they are; PyTorch and JAX get their own spellings
of the same statements."""
from peers_common import ADAM_N, BS_N, CG_N, EM_N, GD_SHAPE, KM_K, KM_N, shared_inputs
from peers_loops import (ADAM_STEP, B1, B2, C1, C2, CG_TOL, EM_MU0, EM_TOL, EPS, GD_LR, GD_TOL, LR, RISK_FREE,
                         VOLATILITY, CG, GaussianMixtureEM, GradientDescent, KMeans, LoopPeer, black_scholes,
                         int_stream)

IDS = ("W13", "W14", "W15", "W16", "L1", "L2", "L3")


def cg_system(asarray):
    """W16's A = R R^T and b = A x_ans on the device (integers: exact in float64 in any order)."""
    R = asarray(int_stream(1, CG_N * CG_N).reshape(CG_N, CG_N))
    x_ans = asarray(int_stream(2, CG_N))
    A = R @ R.T
    return dict(A=A, b=A @ x_ans, x_ans=x_ans)


# ----------------------------------------------------------------------------- CuPy
def cupy_inputs(fw, wid):
    cp = fw.cp
    f32, f64 = cp.float32, cp.float64
    if wid == "W14":
        return shared_inputs(fw.randn, wid, f32)
    if wid == "W15":
        def rand_range(m, M):  # the example's own
            return (m + (M - m) * fw.rs.rand(BS_N)).astype(f64)
        return dict(s=rand_range(5, 30), x=rand_range(1, 100), t=rand_range(0.25, 10))
    if wid == "W16":
        return cg_system(cp.asarray)
    if wid == "L1":
        u, z = fw.rs.random_sample((KM_N, 2), dtype=f32), fw.randn((KM_N, 2), f32)
        return dict(X=cp.floor(u * 4) + z * f32(0.15))
    if wid == "L2":
        u, z = fw.rs.random_sample(EM_N, dtype=f32), fw.randn(EM_N, f32)
        return dict(x=cp.floor(u * 4) * 2 - 3 + z * f32(0.5))
    if wid == "L3":
        A, xt = fw.randn(GD_SHAPE, f32), fw.randn(GD_SHAPE[1], f32)
        return dict(A=A, b=A @ xt + fw.randn(GD_SHAPE[0], f32) * f32(0.01))
    raise KeyError(wid)


BLACK_SCHOLES_KERNEL = None


def cupy_black_scholes_kernel(cp):
    """The example's cupy.ElementwiseKernel, as black_scholes.py defines it."""
    global BLACK_SCHOLES_KERNEL
    if BLACK_SCHOLES_KERNEL is None:
        BLACK_SCHOLES_KERNEL = cp.ElementwiseKernel(
            'T s, T x, T t, T r, T v',  # Inputs
            'T call, T put',  # Outputs
            '''
            const T sqrt_t = sqrt(t);
            const T d1 = (log(s / x) + (r + v * v / 2) * t) / (v * sqrt_t);
            const T d2 = d1 - v * sqrt_t;

            const T cnd_d1 = get_cumulative_normal_distribution(d1);
            const T cnd_d2 = get_cumulative_normal_distribution(d2);

            const T exp_rt = exp(- r * t);
            call = s * cnd_d1 - x * exp_rt * cnd_d2;
            put = x * exp_rt * (1 - cnd_d2) - s * (1 - cnd_d1);
            ''',
            'black_scholes_kernel',
            preamble='''
            __device__
            inline T get_cumulative_normal_distribution(T x) {
                const T A1 = 0.31938153;
                const T A2 = -0.356563782;
                const T A3 = 1.781477937;
                const T A4 = -1.821255978;
                const T A5 = 1.330274429;
                const T RSQRT2PI = 0.39894228040143267793994605993438;
                const T W = 0.2316419;

                const T k = 1 / (1 + W * abs(x));
                T cnd = RSQRT2PI * exp(- x * x / 2) *
                    (k * (A1 + k * (A2 + k * (A3 + k * (A4 + k * A5)))));
                if (x > 0) {
                    cnd = 1 - cnd;
                }
                return cnd;
            }
            ''',
        )
    return BLACK_SCHOLES_KERNEL


def cupy_fns(fw, wid, inp):
    cp = fw.cp
    if wid == "W14":
        x, x2 = inp["x"], inp["x2"]
        return {"cupy": {"1-D": lambda: cp.cumsum(x), "rows": lambda: cp.cumsum(x2, axis=1)}}
    if wid == "W15":
        s, x, t = inp["s"], inp["x"], inp["t"]
        kernel = cupy_black_scholes_kernel(cp)
        return {"cupy": lambda: black_scholes(cp, s, x, t, RISK_FREE, VOLATILITY),
                "cupy.kernel": lambda: kernel(s, x, t, RISK_FREE, VOLATILITY)}
    if wid == "W16":
        return {"cupy": LoopPeer(wid, CG(cp, inp["A"], inp["b"], inp["x_ans"]), fw.sync)}
    if wid == "L1":
        return {"cupy": LoopPeer(wid, KMeans(cp, inp["X"]), fw.sync)}
    if wid == "L2":
        return {"cupy": LoopPeer(wid, GaussianMixtureEM(cp, inp["x"]), fw.sync)}
    if wid == "L3":
        return {"cupy": LoopPeer(wid, GradientDescent(cp, inp["A"], inp["b"]), fw.sync)}
    raise KeyError(wid)


# ----------------------------------------------------------------------------- PyTorch
def torch_inputs(fw, wid):
    t = fw.torch
    f32 = t.float32

    def rand(shape, dtype=f32):
        return t.rand(shape if isinstance(shape, tuple) else (shape,), dtype=dtype, device="cuda", generator=fw.gen)
    if wid == "W13":
        w, g = fw.randn(ADAM_N, f32), fw.randn(ADAM_N, f32)
        m, v = fw.randn(ADAM_N, f32) * 0.1, (fw.randn(ADAM_N, f32) * 0.1) ** 2
        return dict(w=w, g=g, m=m, v=v, w0=w.clone(), m0=m.clone(), v0=v.clone())
    if wid == "W14":
        return shared_inputs(fw.randn, wid, f32)
    if wid == "W15":
        return {k: lo + (hi - lo) * rand(BS_N, t.float64)
                for k, lo, hi in (("s", 5, 30), ("x", 1, 100), ("t", 0.25, 10))}
    if wid == "W16":
        return cg_system(lambda a: t.from_numpy(a).cuda())
    if wid == "L1":
        return dict(X=t.floor(rand((KM_N, 2)) * 4) + fw.randn((KM_N, 2), f32) * 0.15)
    if wid == "L2":
        return dict(x=t.floor(rand(EM_N) * 4) * 2 - 3 + fw.randn(EM_N, f32) * 0.5)
    if wid == "L3":
        A, xt = fw.randn(GD_SHAPE, f32), fw.randn(GD_SHAPE[1], f32)
        return dict(A=A, b=A @ xt + fw.randn(GD_SHAPE[0], f32) * 0.01)
    raise KeyError(wid)


class TorchCG:
    """cg.py's loop body in PyTorch; body(A, x, r0, p) -> (r0, p, converged), eager or compiled."""

    def __init__(self, torch, inp, body):
        self.t, self.A, self.b, self.x_ans, self.body = torch, inp["A"], inp["b"], inp["x_ans"], body

    def reset(self):
        self.x = self.t.zeros_like(self.b)
        self.r0 = self.b - self.A @ self.x
        self.p = self.r0

    def step(self):
        self.r0, self.p, done = self.body(self.A, self.x, self.r0, self.p)
        return done

    def result(self):
        return (self.x,)

    def summary(self):
        return "|x - x_ans| = %.3g" % float(self.t.linalg.norm(self.x - self.x_ans))


def torch_cg_body(torch):
    def cg_body(A, x, r0, p):
        a = torch.inner(r0, r0) / torch.inner(p, A @ p)
        x += a * p
        r1 = r0 - a * (A @ p)
        if torch.linalg.norm(r1) < CG_TOL:  # torch.compile: a graph break, as the example's `if`
            return r0, p, True
        b = torch.inner(r1, r1) / torch.inner(r0, r0)
        p = r1 + b * p
        return r1, p, False
    return cg_body


class TorchKMeans:
    def __init__(self, torch, X, k=KM_K):
        self.t, self.X, self.k, self.iterations = torch, X, k, 0

    def reset(self):
        self.centers = self.X[:self.k].clone()
        self.pred = self.t.zeros(len(self.X), dtype=self.t.int64, device=self.X.device)
        self.iterations = 0

    def step(self):
        t, X = self.t, self.X
        self.iterations += 1
        d = ((X[:, None, :] - self.centers[None, :, :]) ** 2).sum(2)
        new_pred = t.argmin(d, 1)
        if t.all(new_pred == self.pred):
            return True
        self.pred = new_pred
        mask = self.pred[:, None] == t.arange(self.k, device=X.device)[None, :]
        counts = mask.sum(0, dtype=X.dtype)
        sums = t.where(mask[:, :, None], X[:, None, :], 0.0).sum(0)
        self.centers = sums / counts[:, None]
        return False

    def result(self):
        return (self.centers,)

    def summary(self):
        return "%d iterations to a fixed assignment" % self.iterations


class TorchEM:
    def __init__(self, torch, x, tol=EM_TOL):
        self.t, self.x, self.tol = torch, x, tol

    def reset(self):
        t, dev = self.t, self.x.device
        self.w = t.full((4,), 0.25, dtype=self.x.dtype, device=dev)
        self.mu = t.tensor(EM_MU0, dtype=self.x.dtype, device=dev)
        self.var = t.ones(4, dtype=self.x.dtype, device=dev)
        self.prev_ll, self.ll = -float("inf"), None

    def step(self):
        t = self.t
        xc = self.x[:, None]
        dev = xc - self.mu
        lp = -0.5 * dev * dev / self.var - 0.5 * t.log(6.283185307179586 * self.var) + t.log(self.w)
        mx = lp.amax(1, keepdim=True)
        lse = mx + t.log(t.exp(lp - mx).sum(1, keepdim=True))
        resp = t.exp(lp - lse)
        nk = resp.sum(0)
        self.w = nk / len(self.x)
        self.mu = (resp * xc).sum(0) / nk
        self.var = (resp * (xc - self.mu) ** 2).sum(0) / nk
        self.ll = lse.mean().item()
        done = abs(self.ll - self.prev_ll) < self.tol
        self.prev_ll = self.ll
        return done

    def result(self):
        return self.w, self.mu, self.var

    def summary(self):
        return "mean log-likelihood %.7g" % self.ll


class TorchGD:
    def __init__(self, torch, A, b, tol=GD_TOL):
        self.t, self.A, self.b, self.tol = torch, A, b, tol

    def reset(self):
        self.x = self.t.zeros(self.A.shape[1], dtype=self.A.dtype, device=self.A.device)
        self.gnorm = None

    def step(self):
        r = self.A @ self.x - self.b
        g = (r @ self.A) / self.A.shape[0]
        self.x -= GD_LR * g
        self.gnorm = self.t.linalg.norm(g).item()
        return self.gnorm < self.tol

    def result(self):
        return (self.x,)

    def summary(self):
        return "|g| = %.3g" % self.gnorm


def torch_fns(fw, wid, inp):
    t = fw.torch
    if wid == "W13":
        w, g, m, v = inp["w"], inp["g"], inp["m"], inp["v"]
        step = t.tensor(float(ADAM_STEP), device="cuda")  # the bias corrections' step, float32 as Adam keeps it

        def reset():
            w.copy_(inp["w0"])
            m.copy_(inp["m0"])
            v.copy_(inp["v0"])

        def fused():  # what torch.optim.Adam(fused=True).step() calls, without its step += 1
            t._fused_adam_([w], [g], [m], [v], [], [step], lr=LR, beta1=B1, beta2=B2, weight_decay=0.0, eps=EPS,
                           amsgrad=False, maximize=False, grad_scale=None, found_inf=None)
            return w, m, v

        def adam_inplace(w, g, m, v):  # the C++ statements, in PyTorch
            m *= B1
            m += (1 - B1) * g
            v *= B2
            v += (1 - B2) * g * g
            w -= LR * (m / C1) / (t.sqrt(v / C2) + EPS)
        compiled_step = t.compile(adam_inplace, dynamic=False)

        def compiled():
            compiled_step(w, g, m, v)
            return w, m, v
        fused.before = compiled.before = reset
        return {"torch": fused, "torch.compile": compiled}
    if wid == "W14":
        x, x2 = inp["x"], inp["x2"]

        def one_d(x):
            return t.cumsum(x, 0)

        def rows(x2):
            return t.cumsum(x2, 1)
        c1, c2 = t.compile(one_d, dynamic=False), t.compile(rows, dynamic=False)
        return {"torch": {"1-D": lambda: one_d(x), "rows": lambda: rows(x2)},
                "torch.compile": {"1-D": lambda: c1(x), "rows": lambda: c2(x2)}}
    if wid == "W15":
        s, x, tt = inp["s"], inp["x"], inp["t"]

        def bs(s, x, t_):
            return black_scholes(t, s, x, t_, RISK_FREE, VOLATILITY)
        c = t.compile(bs, dynamic=False)
        return {"torch": lambda: bs(s, x, tt), "torch.compile": lambda: c(s, x, tt)}
    if wid == "W16":
        body = torch_cg_body(t)
        return {"torch": LoopPeer(wid, TorchCG(t, inp, body), fw.sync),
                "torch.compile": LoopPeer(wid, TorchCG(t, inp, t.compile(body, dynamic=False)), fw.sync)}
    if wid == "L1":
        return {"torch": LoopPeer(wid, TorchKMeans(t, inp["X"]), fw.sync)}
    if wid == "L2":
        return {"torch": LoopPeer(wid, TorchEM(t, inp["x"]), fw.sync)}
    if wid == "L3":
        return {"torch": LoopPeer(wid, TorchGD(t, inp["A"], inp["b"]), fw.sync)}
    raise KeyError(wid)


# ----------------------------------------------------------------------------- JAX
def jax_inputs(fw, wid):
    jnp = fw.jnp
    f32 = jnp.float32
    if wid == "W13":
        w, g = fw.randn(ADAM_N, f32), fw.randn(ADAM_N, f32)
        m, v = fw.randn(ADAM_N, f32) * 0.1, (fw.randn(ADAM_N, f32) * 0.1) ** 2
        return dict(w0=w, g=g, m0=m, v0=v)
    if wid == "W14":
        return shared_inputs(fw.randn, wid, f32)
    if wid == "W15":
        out = {}
        for k, lo, hi in (("s", 5, 30), ("x", 1, 100), ("t", 0.25, 10)):
            fw.key, sub = fw.jax.random.split(fw.key)
            out[k] = fw.jax.random.uniform(sub, (BS_N,), dtype=jnp.float64, minval=lo, maxval=hi)
        return out
    if wid == "W16":
        return cg_system(jnp.asarray)
    raise KeyError(wid)


class JaxCG:
    """cg.py's loop body under jax.jit: the part up to the norm, the `if` in Python (a read-back),
    then the part after it."""

    def __init__(self, jax, jnp, inp):
        self.jnp, self.A, self.b, self.x_ans = jnp, inp["A"], inp["b"], inp["x_ans"]

        def part1(A, x, r0, p):
            a = jnp.inner(r0, r0) / jnp.inner(p, jnp.dot(A, p))
            x = x + a * p
            r1 = r0 - a * jnp.dot(A, p)
            return x, r1, jnp.linalg.norm(r1)

        def part2(r0, r1, p):
            b = jnp.inner(r1, r1) / jnp.inner(r0, r0)
            return r1 + b * p
        self.part1, self.part2 = jax.jit(part1), jax.jit(part2)

    def reset(self):
        jnp = self.jnp
        self.x = jnp.zeros_like(self.b)
        self.r0 = self.b - jnp.dot(self.A, self.x)
        self.p = self.r0

    def step(self):
        self.x, r1, nrm = self.part1(self.A, self.x, self.r0, self.p)
        if nrm < CG_TOL:
            return True
        self.p = self.part2(self.r0, r1, self.p)
        self.r0 = r1
        return False

    def result(self):
        return (self.x,)

    def summary(self):
        return "|x - x_ans| = %.3g" % float(self.jnp.linalg.norm(self.x - self.x_ans))


def jax_fns(fw, wid, inp):
    jax, jnp = fw.jax, fw.jnp
    if wid == "W13":
        def adam(w, g, m, v):  # functional; w, m, v donated, so XLA may write them in place
            m = B1 * m + (1 - B1) * g
            v = B2 * v + (1 - B2) * g * g
            return w - LR * (m / C1) / (jnp.sqrt(v / C2) + EPS), m, v
        step = jax.jit(adam, donate_argnums=(0, 2, 3))
        state = {}

        def reset():
            state["wmv"] = tuple(jnp.copy(inp[k]) for k in ("w0", "m0", "v0"))

        def f():
            w, m, v = state["wmv"]
            state["wmv"] = step(w, inp["g"], m, v)
            return state["wmv"]
        f.before = reset
        return {"jax.jit": f}
    if wid == "W14":
        j1 = jax.jit(lambda x: jnp.cumsum(x))
        j2 = jax.jit(lambda x: jnp.cumsum(x, axis=1))
        return {"jax.jit": {"1-D": lambda: j1(inp["x"]), "rows": lambda: j2(inp["x2"])}}
    if wid == "W15":
        j = jax.jit(lambda s, x, t: black_scholes(jnp, s, x, t, RISK_FREE, VOLATILITY))
        return {"jax.jit": lambda: j(inp["s"], inp["x"], inp["t"])}
    if wid == "W16":
        return {"jax.jit": LoopPeer(wid, JaxCG(jax, jnp, inp), fw.sync)}
    raise KeyError(wid)

