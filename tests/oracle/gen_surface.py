#!/usr/bin/env python3
"""tests/oracle/gen_surface.py: NumPy 2's answers for issue 30's creation, printing and testing
functions, which tests/test_surface_oracle.cpp checks cufuse (host reference backend) against.

    python3 tests/oracle/gen_surface.py --out <dir>

Writes <out>/surface.txt, one case per line, fields separated by TABs. An array is one token
`<dtype>:<shape, comma separated>:<raw little-endian bytes in hex>` (bool 1 byte, bfloat16 from
ml_dtypes). Strings (reprs, messages) have backslash, newline and tab escaped as \\\\, \\n, \\t.

  make    <func> <params k=v ...> <input arrays, space separated or -> <expected array | error Kind>
          func: eye identity tri triu tril diag logspace meshgrid (meshgrid: outputs space separated)
  repr    <precision> <array> <np.array_repr(a, precision=...)>
  str     <array> <str(a)>
  close   <allclose|array_equal> <params> <a> <b> <True | False | error Kind>
  assert  <assert_allclose|assert_array_equal> <params> <actual> <desired> <PASS | message without its first newline>
"""
import argparse

from oracle_common import BF16, DTYPES, NP, np, tok, write_cases
from oracle_common import sample as sample_of

FLOATS = ["float16", "bfloat16", "float32", "float64"]
rng = np.random.default_rng(20261125)


def esc(s):
    return s.replace("\\", "\\\\").replace("\n", "\\n").replace("\t", "\\t")


def params(**kw):
    return " ".join(f"{k}={v}" for k, v in kw.items())


lines = []


def make(func, kw, inputs, fn):
    try:
        r = fn()
        res = " ".join(tok(x) for x in r) if isinstance(r, (list, tuple)) else tok(r)
    except (ValueError, TypeError, IndexError) as e:
        res = f"error {type(e).__name__}"
    ins = " ".join(tok(x) for x in inputs) if inputs else "-"
    lines.append("\t".join(["make", func, params(**kw) if kw else "-", ins, res]))


def sample(dt, shape):
    return sample_of(rng, dt, shape)


# ------------------------------------------------------------------ creation
def gen_creation():
    for dt in DTYPES:
        for n, m, k in [(3, None, 0), (3, 4, 1), (4, 3, -1), (3, 3, -2), (2, 5, 4), (3, None, 7), (0, None, 0),
                        (1, 0, 0), (3, 2, -5)]:
            kw = dict(N=n, M=m if m is not None else "None", k=k, dtype=dt)
            make("eye", kw, [], lambda: np.eye(n, m, k, dtype=NP[dt]))
            make("tri", kw, [], lambda: np.tri(n, m, k, dtype=NP[dt]))
        make("identity", dict(n=3, dtype=dt), [], lambda: np.identity(3, dtype=NP[dt]))
    for n, m in [(-1, None), (2, -1)]:
        make("eye", dict(N=n, M=m if m is not None else "None", k=0, dtype="float64"), [], lambda: np.eye(n, m))
    make("tri", dict(N=-1, M="None", k=0, dtype="float64"), [], lambda: np.tri(-1))
    make("identity", dict(n=-2, dtype="float64"), [], lambda: np.identity(-2))
    for dt in DTYPES:
        for shape in [(3, 4), (4, 3), (2, 3, 3), (4,), (0, 3), (1, 1)]:
            a = sample(dt, shape)
            for k in [-2, -1, 0, 1, 5]:
                make("triu", dict(k=k), [a], lambda: np.triu(a, k))
                make("tril", dict(k=k), [a], lambda: np.tril(a, k))
    make("triu", dict(k=0), [np.array(5.0)], lambda: np.triu(np.array(5.0)))
    for dt in DTYPES:
        v = sample(dt, (3,))
        for k in [-2, -1, 0, 1, 3]:
            make("diag", dict(k=k), [v], lambda: np.diag(v, k))
        m = sample(dt, (3, 4))
        for k in [-5, -1, 0, 2, 4]:
            make("diag", dict(k=k), [m], lambda: np.diag(m, k))
    make("diag", dict(k=1), [np.zeros(0)], lambda: np.diag(np.zeros(0), 1))
    make("diag", dict(k=0), [np.ones((2, 2, 2))], lambda: np.diag(np.ones((2, 2, 2))))
    make("diag", dict(k=0), [np.array(3.0)], lambda: np.diag(np.array(3.0)))
    # (int16, not int8: NumPy's float -> int8 of 1000 wraps, ours saturates: gen_cases.py's divergence 3)
    for dt in ["float64", "float32", "int64", "int16", "bool", "float16", "bfloat16"]:
        for start, stop, num, endpoint, base in [(0, 3, 4, True, 10.0), (0, 4, 4, False, 2.0),
                                                 (-2, 2, 7, True, 10.0), (1, 2, 1, True, 3.0), (0, 1, 0, True, 10.0),
                                                 (2, -1, 5, True, 0.5)]:
            kw = dict(start=start, stop=stop, num=num, endpoint=int(endpoint), base=base, dtype=dt)
            make("logspace", kw, [], lambda: np.logspace(start, stop, num, endpoint, base, dtype=NP[dt]))
    make("logspace", dict(start=0, stop=1, num=-1, endpoint=1, base=10.0, dtype="float64"), [],
         lambda: np.logspace(0, 1, -1))
    xs3 = [sample("float32", (3,)), sample("int16", (2,)), sample("uint8", (4,))]
    for count in [1, 2, 3]:
        for indexing in ["xy", "ij"]:
            for sparse in [0, 1]:
                xs = xs3[:count]
                make("meshgrid", dict(indexing=indexing, sparse=sparse), xs,
                     lambda: np.meshgrid(*xs, indexing=indexing, sparse=bool(sparse)))
    x2 = sample("float64", (2, 2))
    make("meshgrid", dict(indexing="xy", sparse=0), [x2, xs3[1]], lambda: np.meshgrid(x2, xs3[1]))
    make("meshgrid", dict(indexing="q", sparse=0), [xs3[0]], lambda: np.meshgrid(xs3[0], indexing="q"))


# ------------------------------------------------------------------ printing
def repr_cases():
    out = []
    for dt in DTYPES:
        out += [sample(dt, (5,)), sample(dt, (2, 3)), sample(dt, ()), np.zeros((0,), NP[dt]), np.zeros((2, 0), NP[dt]),
                sample(dt, (2, 2, 3)), sample(dt, (3, 30)), sample(dt, (1001,)), sample(dt, (30, 40)),
                sample(dt, (4, 3, 100))]
    ints = {dt: np.iinfo(NP[dt]) for dt in DTYPES if dt.startswith(("int", "uint"))}
    for dt, ii in ints.items():
        out.append(np.array([ii.min, 0, ii.max], NP[dt]))
    specials = [
        [1.0, 2.5], [0.1, 0.2, 0.3], [1 / 3, 2 / 3], [np.nan, np.inf, -np.inf], [-0.0, 1.0], [0.0, -0.0],
        [1e8, 1.0], [1e-5, 1.0], [123456789.0], [1e-4, 1e-3], [1.0, 1000.0], [1.0, 1000.5], [1.0, 1001.0],
        [np.nan], [np.inf, 1.0], [-np.inf, 2.5, np.nan], [1e20, 2, np.nan, -0.0], [0.1 + 0.2], [1e300, 1e-300],
        [5e-324], [1.5, -2.25, 3.125], [np.pi, np.e], [100.0, 1e-3], [12345.678, 0.001], [-1e-5, 1e5],
        [0.0], [1e16, 1.0], [9.999999999, 1.0], [0.5, 0.25, 0.125, 0.0625, 0.03125],
    ]
    for vals in specials:
        for dt in FLOATS:
            with np.errstate(all="ignore"):
                out.append(np.array(vals, dtype=NP[dt]))
    for dt in FLOATS:
        out.append(np.array(np.pi, dtype=NP[dt]))
        out.append(np.array(np.nan, dtype=NP[dt]))
        out.append(np.array(1e-5, dtype=NP[dt]))
        out.append((rng.standard_normal((10, 10)) * np.logspace(-6, 6, 10)).astype(NP[dt]))
    out.append(np.arange(2000.0))
    out.append(np.arange(1001))
    out.append(np.arange(24).reshape(2, 3, 4))
    out.append(np.arange(7 * 7 * 7 * 7).reshape(7, 7, 7, 7).astype(np.int16))
    out.append(np.ones((1, 1, 1), bool))
    out.append(np.array(True))
    out.append(np.array(7, np.int32))
    return out


def gen_printing():
    for a in repr_cases():
        for prec in [8, 6]:
            lines.append("\t".join(["repr", str(prec), tok(a), esc(np.array_repr(a, precision=prec))]))
        if a.dtype != BF16:
            lines.append("\t".join(["str", tok(a), esc(str(a))]))


# ------------------------------------------------------------------ testing
def gen_testing():
    pairs = []
    x = np.arange(100.0)
    y = np.where(np.arange(100) % 37 == 5, 0, x)
    pairs += [(x, y), (x, x), (x, x + 1e-9), (x.astype(np.float32), y.astype(np.float32))]
    pairs += [(np.array([1.0, 2.0, np.nan]), np.array([1.0, 2.5, 3.0], np.float32)),
              (np.array([1.0, np.nan]), np.array([1.0, np.nan])),
              (np.array([1.0, np.inf]), np.array([1.0, np.inf])),
              (np.array([1.0, np.inf]), np.array([1.0, -np.inf])),
              (np.array([1.0, 5.0]), np.array([1.0, np.inf])),
              (np.ones(3), np.ones(4)), (np.ones((2, 3)), np.ones((3, 2))),
              (np.arange(6.0), np.array(3.0)), (np.array(3.0), np.array(3.0 + 1e-3)),
              (np.arange(6).reshape(2, 3), np.array([[0, 1, 2], [3, 5, 5]])),
              (np.arange(12, dtype=np.uint8), np.arange(12, dtype=np.uint8)[::-1].copy()),
              (np.array([True, False]), np.array([True, True])),
              (np.array([1e-10, 1.0]), np.array([0.0, 1.0])),
              (np.arange(10.0), np.zeros(10) + 0.5),
              (np.arange(10, dtype=np.int32), np.arange(10, dtype=np.int32) * 2),
              (np.linspace(0, 1, 50).astype(np.float16), np.linspace(0, 1.01, 50).astype(np.float16)),
              (rng.standard_normal((40, 50)), rng.standard_normal((40, 50))),
              (np.zeros((0, 3)), np.zeros((0, 3))),
              (np.array([1.0, 2.0]), np.array([1.0, 2.0 + 2e-7]))]
    for a, b in pairs:
        for rtol, atol, equal_nan in [(1e-7, 0.0, True), (1e-5, 1e-8, False), (1e-2, 1e-3, True)]:
            kw = params(rtol=rtol, atol=atol, equal_nan=int(equal_nan))
            try:
                np.testing.assert_allclose(a, b, rtol=rtol, atol=atol, equal_nan=equal_nan)
                res = "PASS"
            except AssertionError as e:
                res = esc(str(e)[1:] if str(e).startswith("\n") else str(e))
            lines.append("\t".join(["assert", "assert_allclose", kw, tok(a), tok(b), res]))
            try:
                res = str(bool(np.allclose(a, b, rtol=rtol, atol=atol, equal_nan=equal_nan)))
            except (ValueError, TypeError) as e:
                res = f"error {type(e).__name__}"
            lines.append("\t".join(["close", "allclose", kw, tok(a), tok(b), res]))
        for equal_nan in [0, 1]:
            lines.append("\t".join(["close", "array_equal", params(equal_nan=equal_nan), tok(a), tok(b),
                                    str(bool(np.array_equal(a, b, equal_nan=bool(equal_nan))))]))
        try:
            np.testing.assert_array_equal(a, b)
            res = "PASS"
        except AssertionError as e:
            res = esc(str(e)[1:] if str(e).startswith("\n") else str(e))
        lines.append("\t".join(["assert", "assert_array_equal", "-", tok(a), tok(b), res]))


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--out", required=True)
    args = ap.parse_args()
    gen_creation()
    gen_printing()
    gen_testing()
    write_cases(args.out, "surface.txt", lines)


if __name__ == "__main__":
    main()
