#!/usr/bin/env python3
"""tests/oracle/gen_statistics.py: NumPy 2's answers for issue 33's statistics functions
(cufuse/statistics.hpp), which tests/test_statistics_oracle.cpp checks cufuse (host reference
backend) against.

    python3 tests/oracle/gen_statistics.py --out <dir>

Writes <out>/statistics.txt, one case per line, fields separated by TABs:

  case  <func> <params k=v ...> <input arrays, space separated> <expected arrays | error Kind>

An array is one token `<dtype>:<shape, comma separated>:<raw little-endian bytes in hex>`. A
parameter value is None, True, False, an int, a float (Python's repr), `@k` (input array k),
or a list `L<v>,<v>` of such values (`L` alone: empty). Functions with several results
(histogram, histogram2d, average with returned, gradient over several axes) write them space
separated. `cmp=exact` marks results compared bit for bit; otherwise integer and bool results
are exact and float ones compared with a tolerance for their dtype (sums whose order differs).
"""
import argparse
import os
import sys
import warnings

try:
    import numpy as np
except ImportError as e:  # pragma: no cover
    sys.exit(f"gen_statistics.py: needs numpy (>= 2): {e}")

warnings.simplefilter("ignore", RuntimeWarning)
warnings.simplefilter("ignore", DeprecationWarning)
rng = np.random.default_rng(20261133)
lines = []


def tok(a):
    a = np.asarray(a).copy(order="C")
    return f"{a.dtype.name}:{','.join(str(d) for d in a.shape)}:{a.tobytes().hex()}"


def val(v):
    if v is None or isinstance(v, bool):
        return str(v)
    if isinstance(v, str):
        return v
    if isinstance(v, (list, tuple)):
        return "L" + ",".join(val(x) for x in v)
    if isinstance(v, (int, np.integer)):
        return str(int(v))
    return repr(float(v))


def case(func, kw, inputs, fn, exact=False):
    """kw values may name inputs as '@k'."""
    try:
        r = fn()
        res = " ".join(tok(x) for x in r) if isinstance(r, (list, tuple)) else tok(r)
    except (ValueError, TypeError, IndexError, ZeroDivisionError) as e:
        kind = type(e).__name__
        if isinstance(e, np.exceptions.AxisError):
            kind = "IndexError"
        if isinstance(e, ZeroDivisionError):
            kind = "ValueError"  # cufuse has no ZeroDivisionError kind (cufuse/statistics.hpp)
        res = f"error {kind}"
    kw = dict(kw)
    if exact:
        kw["cmp"] = "exact"
    ins = " ".join(tok(x) for x in inputs) if inputs else "-"
    p = " ".join(f"{k}={val(v)}" for k, v in kw.items()) if kw else "-"
    lines.append("\t".join(["case", func, p, ins, res]))


def sample(dt, shape, lo=-100, hi=100):
    n = int(np.prod(shape)) if shape else 1
    if dt == "bool":
        v = rng.integers(0, 2, n).astype(bool)
    elif dt.startswith("uint"):
        v = rng.integers(0, hi, n).astype(dt)
    elif dt.startswith("int"):
        v = rng.integers(lo, hi, n).astype(dt)
    else:
        v = (rng.standard_normal(n) * 10).astype(dt)
    return v.reshape(shape)


def gen_bincount():
    for dt in ["int8", "int16", "int32", "int64", "uint8", "uint16", "uint32", "uint64", "bool"]:
        x = sample(dt, (50,), 0, 20)
        case("bincount", {}, [x], lambda: np.bincount(x))
        case("bincount", dict(minlength=30), [x], lambda: np.bincount(x, minlength=30))
    x = sample("int64", (40,), 0, 10)
    for wd in ["float32", "float64", "int32", "uint8"]:
        w = sample(wd, (40,))
        case("bincount", dict(weights="@1"), [x, w], lambda: np.bincount(x, w))
    e = np.zeros(0, np.int64)
    case("bincount", dict(minlength=4), [e], lambda: np.bincount(e, minlength=4))
    case("bincount", {}, [e], lambda: np.bincount(e))
    for bad in [np.array([1, -2, 3]), np.array([1.0, 2.0]), np.zeros(0), np.ones((2, 2), np.int64), np.array(3)]:
        case("bincount", {}, [bad], lambda: np.bincount(bad))
    case("bincount", dict(minlength=-1), [x], lambda: np.bincount(x, minlength=-1))
    w = np.ones(3)
    case("bincount", dict(weights="@1"), [x, w], lambda: np.bincount(x, w))


def on_edges(n, lo, hi, dt):
    """Values on and one ulp around every edge of np.histogram's bins."""
    edges = np.histogram_bin_edges(np.array([lo, hi], dt), n, (lo, hi)).astype(dt)
    inf = np.array(np.inf, dt)
    return np.concatenate([edges, np.nextafter(edges, inf), np.nextafter(edges, -inf)]).astype(dt)


def gen_histogram():
    for dt in ["float16", "float32", "float64", "int8", "int32", "uint8", "int64", "bool"]:
        a = sample(dt, (200,))
        for bins in [1, 7, 10]:
            case("histogram", dict(bins=bins), [a], lambda: np.histogram(a, bins), exact=True)
            case("histogram", dict(bins=bins, range=[-5.0, 12.5]), [a], lambda: np.histogram(a, bins, (-5.0, 12.5)),
                 exact=True)
        case("histogram_bin_edges", dict(bins=6), [a], lambda: np.histogram_bin_edges(a, 6), exact=True)
    # values on the edges, as NumPy rounds them
    for dt in ["float32", "float64", "float16"]:
        for n, lo, hi in [(10, 0.0, 1.0), (7, -3.3, 8.1), (1000, 0.1, 0.7)]:
            a = on_edges(n, lo, hi, dt)
            case("histogram", dict(bins=n, range=[lo, hi]), [a], lambda: np.histogram(a, n, (lo, hi)), exact=True)
            case("histogram", dict(bins=n), [a], lambda: np.histogram(a, n), exact=True)
    # equal range ends, a constant array, NaN / inf with and without a range
    a = np.full(5, 3.0, np.float32)
    case("histogram", dict(bins=4), [a], lambda: np.histogram(a, 4), exact=True)
    case("histogram", dict(bins=4, range=[2.0, 2.0]), [a], lambda: np.histogram(a, 4, (2.0, 2.0)), exact=True)
    i = np.full(5, 7, np.int32)
    case("histogram", dict(bins=3), [i], lambda: np.histogram(i, 3), exact=True)
    n = np.array([0.5, np.nan, 1.5, np.inf, -np.inf, 0.0, 2.0])
    case("histogram", dict(bins=4, range=[0.0, 2.0]), [n], lambda: np.histogram(n, 4, (0.0, 2.0)), exact=True)
    case("histogram", dict(bins=4), [n], lambda: np.histogram(n, 4))
    e = np.zeros(0, np.float32)
    case("histogram", dict(bins=3), [e], lambda: np.histogram(e, 3), exact=True)
    # weights and density
    a = sample("float64", (60,))
    for wd in ["float32", "float64", "int32", "int64"]:
        w = sample(wd, (60,))
        case("histogram", dict(bins=5, weights="@1"), [a, w], lambda: np.histogram(a, 5, weights=w))
        case("histogram", dict(bins=5, range=[-10.0, 10.0], weights="@1", density=True), [a, w],
             lambda: np.histogram(a, 5, (-10.0, 10.0), weights=w, density=True))
    case("histogram", dict(bins=8, density=True), [a], lambda: np.histogram(a, 8, density=True))
    a32 = sample("float32", (60,))
    case("histogram", dict(bins=8, density=True), [a32], lambda: np.histogram(a32, 8, density=True))
    # explicit edges: dtypes, repeated edges, values on them, outside them
    for ed in ["float64", "float32", "int64"]:
        edges = np.array([-20, -3, 0, 0, 4, 9, 25]).astype(ed)
        for dt in ["float32", "int16", "float64"]:
            a = sample(dt, (100,))
            a[:7] = edges.astype(dt)
            case("histogram", dict(bins="@1"), [a, edges], lambda: np.histogram(a, edges), exact=True)
            w = sample("float64", (100,))
            case("histogram", dict(bins="@1", weights="@2"), [a, edges, w], lambda: np.histogram(a, edges, weights=w))
            case("histogram", dict(bins="@1", density=True), [a, edges], lambda: np.histogram(a, edges, density=True))
    a = sample("float64", (30,))
    for bad_bins in [np.array([0.0, 2.0, 1.0]), np.zeros((2, 2))]:
        case("histogram", dict(bins="@1"), [a, bad_bins], lambda: np.histogram(a, bad_bins))
    case("histogram", dict(bins=0), [a], lambda: np.histogram(a, 0))
    case("histogram", dict(bins=-3), [a], lambda: np.histogram(a, -3))
    case("histogram", dict(bins=3, range=[2.0, 1.0]), [a], lambda: np.histogram(a, 3, (2.0, 1.0)))
    case("histogram", dict(bins=3, range=[0.0, float("inf")]), [a], lambda: np.histogram(a, 3, (0.0, np.inf)))
    w = np.ones(4)
    case("histogram", dict(bins=3, weights="@1"), [a, w], lambda: np.histogram(a, 3, weights=w))
    m = sample("float32", (4, 5))
    case("histogram", dict(bins=4), [m], lambda: np.histogram(m, 4), exact=True)


def gen_histogram2d():
    for dt in ["float64", "float32", "int32"]:
        x, y = sample(dt, (80,)), sample(dt, (80,))
        case("histogram2d", dict(bins=5), [x, y], lambda: np.histogram2d(x, y, 5), exact=True)
        case("histogram2d", dict(bins=[3, 4]), [x, y], lambda: np.histogram2d(x, y, [3, 4]), exact=True)
        case("histogram2d", dict(bins=4, range=[-5.0, 5.0, 0.0, 10.0]), [x, y],
             lambda: np.histogram2d(x, y, 4, [[-5, 5], [0, 10]]), exact=True)
        ex, ey = np.array([-30.0, -1.0, 0.0, 2.0, 30.0]), np.array([-5.0, 5.0, 6.0])
        case("histogram2d", dict(bins=["@2", "@3"]), [x, y, ex, ey], lambda: np.histogram2d(x, y, [ex, ey]), exact=True)
        w = sample("float64", (80,))
        case("histogram2d", dict(bins=3, weights="@2"), [x, y, w], lambda: np.histogram2d(x, y, 3, weights=w))
        case("histogram2d", dict(bins=3, density=True), [x, y], lambda: np.histogram2d(x, y, 3, density=True))
    x = sample("float64", (5,))
    y = sample("float64", (4,))
    case("histogram2d", dict(bins=3), [x, y], lambda: np.histogram2d(x, y, 3))
    x = sample("float64", (5,))
    case("histogram2d", dict(bins=0), [x, x], lambda: np.histogram2d(x, x, 0))


def gen_moments():
    for dt in ["float64", "float32", "int32", "int8", "bool"]:
        a = sample(dt, (4, 5))
        case("average", {}, [a], lambda: np.average(a))
        for ax in [0, 1, -1, [0, 1]]:
            case("average", dict(axis=ax), [a], lambda: np.average(a, tuple(ax) if isinstance(ax, list) else ax))
        w = np.abs(sample("float64", (4, 5))) + 0.5
        case("average", dict(weights="@1"), [a, w], lambda: np.average(a, weights=w))
        case("average", dict(axis=1, weights="@1", returned=True), [a, w],
             lambda: np.average(a, 1, w, returned=True))
        w1 = np.arange(1, 6).astype("int32")
        case("average", dict(axis=1, weights="@1"), [a, w1], lambda: np.average(a, 1, w1))
        case("average", dict(axis=1, weights="@1", keepdims=True), [a, w1],
             lambda: np.average(a, 1, w1, keepdims=True))
        case("average", dict(axis=0, returned=True), [a], lambda: np.average(a, 0, returned=True))
    a = sample("float64", (3, 4))
    case("average", dict(weights="@1"), [a, np.ones(4)], lambda: np.average(a, weights=np.ones(4)))
    case("average", dict(axis=0, weights="@1"), [a, np.ones(4)], lambda: np.average(a, 0, np.ones(4)))
    z = np.array([1.0, -1.0, 0.0])
    case("average", dict(axis=0, weights="@1"), [a, z], lambda: np.average(a, 0, z))
    for dt in ["float64", "float32", "int64"]:
        m = sample(dt, (3, 6))
        case("cov", {}, [m], lambda: np.cov(m))
        case("cov", dict(rowvar=False), [m], lambda: np.cov(m, rowvar=False))
        case("cov", dict(bias=True), [m], lambda: np.cov(m, bias=True))
        case("cov", dict(ddof=2), [m], lambda: np.cov(m, ddof=2))
        y = sample(dt, (2, 6))
        case("cov", dict(y="@1"), [m, y], lambda: np.cov(m, y))
        v = sample(dt, (6,))
        case("cov", {}, [v], lambda: np.cov(v))
        case("corrcoef", {}, [m], lambda: np.corrcoef(m))
        case("corrcoef", dict(y="@1"), [m, y], lambda: np.corrcoef(m, y))
        case("corrcoef", dict(rowvar=False), [m], lambda: np.corrcoef(m, rowvar=False))
    m = sample("float32", (3, 6))
    case("cov", dict(dtype="float32"), [m], lambda: np.cov(m, dtype=np.float32))
    case("cov", dict(ddof=6), [m], lambda: np.cov(m, ddof=6))
    case("cov", {}, [np.zeros((2, 2, 2))], lambda: np.cov(np.zeros((2, 2, 2))))
    case("cov", {}, [np.zeros((0, 3))], lambda: np.cov(np.zeros((0, 3))))
    for dt in ["float64", "float32"]:
        a = sample(dt, (5, 6))
        a[rng.random((5, 6)) < 0.3] = np.nan
        a[2] = np.nan
        for f in ["nanvar", "nanstd"]:
            case(f, {}, [a], lambda: getattr(np, f)(a))
            for ax in [0, 1, -1]:
                case(f, dict(axis=ax), [a], lambda: getattr(np, f)(a, ax))
                case(f, dict(axis=ax, ddof=1, keepdims=True), [a], lambda: getattr(np, f)(a, ax, ddof=1, keepdims=True))
            case(f, dict(axis=1, dtype="float64"), [a], lambda: getattr(np, f)(a, 1, dtype=np.float64))
        case("nanprod", dict(axis=1), [a], lambda: np.nanprod(a, 1))
        case("nanprod", {}, [a], lambda: np.nanprod(a))
        b = a.copy()
        b[2] = 1.0
        case("nanargmax", dict(axis=1), [b], lambda: np.nanargmax(b, 1))
        case("nanargmin", {}, [b], lambda: np.nanargmin(b))
        case("nanargmax", dict(axis=1), [a], lambda: np.nanargmax(a, 1))
        case("nanargmin", dict(axis=0), [b], lambda: np.nanargmin(b, 0))
    i = sample("int32", (3, 4))
    for f in ["nanvar", "nanstd", "nanprod", "nanargmax", "nanargmin"]:
        case(f, dict(axis=1), [i], lambda: getattr(np, f)(i, 1))


def gen_differences():
    for dt in ["float64", "float32", "int32", "uint8", "int8", "bool", "float16"]:
        a = sample(dt, (4, 6))
        for n in [0, 1, 2, 3, 7]:
            case("diff", dict(n=n), [a], lambda: np.diff(a, n), exact=True)
        case("diff", dict(axis=0), [a], lambda: np.diff(a, axis=0), exact=True)
        case("diff", dict(n=2, axis=-2), [a], lambda: np.diff(a, 2, -2), exact=True)
        case("ediff1d", {}, [a], lambda: np.ediff1d(a), exact=True)
    a = sample("float32", (3, 5))
    case("diff", dict(prepend=0), [a], lambda: np.diff(a, prepend=0), exact=True)
    case("diff", dict(prepend=1.5, append=-2.5), [a], lambda: np.diff(a, prepend=1.5, append=-2.5), exact=True)
    p = sample("float64", (3, 2))
    case("diff", dict(prepend="@1"), [a, p], lambda: np.diff(a, prepend=p), exact=True)
    q = sample("int8", (1, 5))
    case("diff", dict(axis=0, append="@1"), [a, q], lambda: np.diff(a, axis=0, append=q), exact=True)
    i8 = sample("int8", (6,))
    case("diff", dict(prepend=0), [i8], lambda: np.diff(i8, prepend=0), exact=True)
    case("diff", dict(n=-1), [a], lambda: np.diff(a, -1))
    case("diff", {}, [np.array(2.0)], lambda: np.diff(np.array(2.0)))
    case("diff", dict(axis=2), [a], lambda: np.diff(a, axis=2))
    v = sample("int16", (6,))
    case("ediff1d", dict(to_begin=-1, to_end=[5, 6]), [v], lambda: np.ediff1d(v, [5, 6], -1), exact=True)
    t = sample("int8", (3,))
    case("ediff1d", dict(to_end="@1"), [v, t], lambda: np.ediff1d(v, t), exact=True)
    case("ediff1d", dict(to_begin=0.5), [v], lambda: np.ediff1d(v, to_begin=0.5))
    f = sample("float32", (5,))
    case("ediff1d", dict(to_begin=2, to_end=3.5), [f], lambda: np.ediff1d(f, 3.5, 2), exact=True)
    case("ediff1d", {}, [np.zeros(0)], lambda: np.ediff1d(np.zeros(0)), exact=True)


def gen_gradient():
    for dt in ["float64", "float32", "int32"]:
        f = sample(dt, (7,))
        for eo in [1, 2]:
            case("gradient", dict(edge_order=eo), [f], lambda: np.gradient(f, edge_order=eo), exact=True)
            case("gradient", dict(spacing=[0.3], edge_order=eo), [f], lambda: np.gradient(f, 0.3, edge_order=eo),
                 exact=True)
            x = np.cumsum(np.abs(sample("float64", (7,))) + 0.1)
            case("gradient", dict(spacing=["@1"], edge_order=eo), [f, x], lambda: np.gradient(f, x, edge_order=eo))
            xe = np.arange(7) * 0.5
            case("gradient", dict(spacing=["@1"], edge_order=eo), [f, xe], lambda: np.gradient(f, xe, edge_order=eo),
                 exact=True)
            xi = np.array([0, 1, 3, 4, 7, 8, 10])
            case("gradient", dict(spacing=["@1"], edge_order=eo), [f, xi], lambda: np.gradient(f, xi, edge_order=eo))
        m = sample(dt, (4, 5))
        case("gradient", {}, [m], lambda: np.gradient(m), exact=True)
        case("gradient", dict(spacing=[2.0, 0.5]), [m], lambda: np.gradient(m, 2.0, 0.5), exact=True)
        case("gradient", dict(axis=1, edge_order=2), [m], lambda: np.gradient(m, axis=1, edge_order=2), exact=True)
        case("gradient", dict(axis=[-1, 0]), [m], lambda: np.gradient(m, axis=(-1, 0)), exact=True)
        y = np.array([0.0, 1.0, 1.5, 4.0])
        case("gradient", dict(spacing=["@1", 1.5]), [m, y], lambda: np.gradient(m, y, 1.5))
    f = sample("float64", (2,))
    case("gradient", dict(edge_order=2), [f], lambda: np.gradient(f, edge_order=2))
    case("gradient", dict(edge_order=3), [sample("float64", (6,))], lambda: np.gradient(np.zeros(6), edge_order=3))
    m = sample("float64", (3, 4))
    case("gradient", dict(spacing=[1.0, 2.0, 3.0]), [m], lambda: np.gradient(m, 1.0, 2.0, 3.0))
    bad = np.zeros(3)
    case("gradient", dict(spacing=["@1", 1.0]), [m, bad], lambda: np.gradient(m, bad, 1.0))


def gen_integrals():
    for dt in ["float64", "float32", "int32"]:
        y = sample(dt, (4, 6))
        case("trapezoid", {}, [y], lambda: np.trapezoid(y))
        case("trapezoid", dict(axis=0, dx=0.25), [y], lambda: np.trapezoid(y, dx=0.25, axis=0))
        x = np.cumsum(np.abs(sample("float64", (6,))))
        case("trapezoid", dict(x="@1"), [y, x], lambda: np.trapezoid(y, x))
        xf = np.abs(sample("float32", (4, 6)))
        case("trapezoid", dict(x="@1", axis=0), [y, xf], lambda: np.trapezoid(y, xf, axis=0))
    case("trapezoid", {}, [np.zeros(1)], lambda: np.trapezoid(np.zeros(1)))
    case("trapezoid", {}, [np.zeros(0)], lambda: np.trapezoid(np.zeros(0)))
    for dt in ["int8", "int32", "uint16", "float32", "bool"]:
        x = sample(dt, (3, 4))
        for ax in [0, 1, -1]:
            case("cumulative_sum", dict(axis=ax), [x], lambda: np.cumulative_sum(x, axis=ax), exact=dt != "float32")
            case("cumulative_sum", dict(axis=ax, include_initial=True), [x],
                 lambda: np.cumulative_sum(x, axis=ax, include_initial=True), exact=dt != "float32")
        case("cumulative_sum", {}, [x], lambda: np.cumulative_sum(x))
        v = sample(dt, (5,))
        case("cumulative_sum", dict(include_initial=True), [v], lambda: np.cumulative_sum(v, include_initial=True),
             exact=dt != "float32")
        case("cumulative_sum", dict(dtype="float64"), [v], lambda: np.cumulative_sum(v, dtype=np.float64))


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--out", required=True)
    args = ap.parse_args()
    gen_bincount()
    gen_histogram()
    gen_histogram2d()
    gen_moments()
    gen_differences()
    gen_gradient()
    gen_integrals()
    os.makedirs(args.out, exist_ok=True)
    path = os.path.join(args.out, "statistics.txt")
    with open(path + ".tmp", "w") as f:
        f.write(f"meta\t{np.__version__}\n")
        f.write("\n".join(lines) + "\n")
    os.replace(path + ".tmp", path)
    print(f"gen_statistics.py: {len(lines)} cases in {path}")


if __name__ == "__main__":
    main()
