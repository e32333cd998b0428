#!/usr/bin/env python3
"""tests/oracle/gen_sorting.py: NumPy 2's answers for issue 33's sorting, searching, sets and
order statistics, which tests/test_sorting_oracle.cpp checks cufuse (host reference backend) against.

    python3 tests/oracle/gen_sorting.py --out <dir>

Writes <out>/sorting.txt, one case per line, fields separated by TABs:

    <func> <params k=v ... | -> <input arrays, space separated> <expected arrays, space separated | error Kind>

An array is `<dtype>:<shape, comma separated>:<raw little-endian bytes in hex>` (bfloat16 from
ml_dtypes). Functions: sort / argsort (a; axis=None|int; kind stable), lexsort (keys...; axis),
searchsorted (a, v[, sorter]; side), digitize (x, bins; right), unique (a; flags rics, axis),
isin (e, t; invert), intersect1d / union1d / setdiff1d / setxor1d (a, b), median / nanmedian
(a; axis=None|int|i,j, keepdims), quantile / percentile / nanquantile / nanpercentile (a; q (a
number or `l`-joined list), axis, method, keepdims). Inputs hold NaNs (of both signs), -0.0,
infinities and ties; empty arrays and bad arguments are cases too.
"""
import argparse
import os

from oracle_common import DTYPES, NP, np, tok  # the shared dtypes and array token

FLOATS = ["float16", "bfloat16", "float32", "float64"]
rng = np.random.default_rng(20261133)
lines = []


def sample(dt, shape, special=True, span=6):
    """Values with ties (a small range); floats with NaN of both signs, -0.0, 0.0 and infinities."""
    n = int(np.prod(shape)) if shape else 1
    if dt == "bool":
        v = rng.integers(0, 2, n).astype(bool)
    elif dt.startswith("uint"):
        v = rng.integers(0, span, n).astype(NP[dt])
        if n > 2:
            v[0] = np.iinfo(NP[dt]).max
    elif dt.startswith("int"):
        v = rng.integers(-span, span, n).astype(NP[dt])
        if n > 2:
            v[0], v[1] = np.iinfo(NP[dt]).min, np.iinfo(NP[dt]).max
    else:
        v = (rng.integers(-span, span, n) / 2).astype(np.float64)
        if special and n > 6:
            k = rng.permutation(n)
            # ml_dtypes' bfloat16 sorts compare NaN as unordered (NaNs stay where they are), so
            # NumPy is no oracle for bfloat16 NaNs: those cases hold the other special values only
            nan = 0.25 if dt == "bfloat16" else np.nan
            v[k[0]], v[k[1]], v[k[2]] = nan, -nan, -0.0
            v[k[3]], v[k[4]] = np.inf, -np.inf
        v = v.astype(NP[dt])
    return v.reshape(shape)


def case(func, kw, inputs, fn):
    try:
        r = fn()
        res = " ".join(tok(x) for x in r) if isinstance(r, (list, tuple)) else tok(r)
    except (ValueError, TypeError, IndexError) as e:
        res = f"error {type(e).__name__}"
    params = " ".join(f"{k}={v}" for k, v in kw.items()) if kw else "-"
    lines.append("\t".join([func, params, " ".join(tok(x) for x in inputs), res]))


def axis_text(axis):
    if axis is None:
        return "None"
    if isinstance(axis, tuple):
        return ",".join(str(x) for x in axis)
    return str(axis)


def gen_sort():
    for dt in DTYPES:
        for shape in [(9,), (4, 7), (2, 3, 5), (0,), (3, 0)]:
            a = sample(dt, shape)
            for axis in [None, 0, -1, 1]:
                if axis == 1 and len(shape) < 2:
                    continue
                kw = dict(axis=axis_text(axis))
                case("sort", kw, [a], lambda: np.sort(a, axis=axis, kind="stable"))
                case("argsort", kw, [a], lambda: np.argsort(a, axis=axis, kind="stable"))
    a = sample("float32", (3, 4))
    case("sort", dict(axis=2), [a], lambda: np.sort(a, axis=2))
    case("argsort", dict(axis=-3), [a], lambda: np.argsort(a, axis=-3))
    z = np.array(2.5)
    case("sort", dict(axis=-1), [z], lambda: np.sort(z, axis=-1))
    case("sort", dict(axis="None"), [z], lambda: np.sort(z, axis=None))
    # long rows, many rows
    for dt in ["float32", "int64", "float16", "uint8"]:
        a = sample(dt, (40, 300), span=1000)
        case("argsort", dict(axis=1), [a], lambda: np.argsort(a, axis=1, kind="stable"))
        case("sort", dict(axis=0), [a], lambda: np.sort(a, axis=0, kind="stable"))


def gen_lexsort():
    for dt in ["int32", "float64", "bool", "float16", "uint64"]:
        ks = [sample(dt, (12,), span=3) for _ in range(3)]
        case("lexsort", dict(axis=-1), ks, lambda: np.lexsort(ks))
        k2 = [sample(dt, (3, 5), span=2) for _ in range(2)]
        case("lexsort", dict(axis=0), k2, lambda: np.lexsort(k2, axis=0))
        case("lexsort", dict(axis=1), k2, lambda: np.lexsort(k2, axis=1))
    bad = [np.arange(3), np.arange(4)]
    case("lexsort", dict(axis=-1), bad, lambda: np.lexsort(bad))


def gen_search():
    for dt in DTYPES:
        a = np.sort(sample(dt, (11,)), kind="stable")
        v = sample(dt, (3, 4))
        for side in ["left", "right"]:
            case("searchsorted", dict(side=side), [a, v], lambda: np.searchsorted(a, v, side=side))
        u = sample(dt, (8,))
        s = np.argsort(u, kind="stable")
        case("searchsorted", dict(side="left"), [u, v, s], lambda: np.searchsorted(u, v, side="left", sorter=s))
    a = np.arange(5, dtype=np.int16)
    v = np.array([1.5, -3, 7.25, np.nan])
    case("searchsorted", dict(side="right"), [a, v], lambda: np.searchsorted(a, v, side="right"))
    case("searchsorted", dict(side="left"), [np.zeros(0), v], lambda: np.searchsorted(np.zeros(0), v))
    case("searchsorted", dict(side="middle"), [a, v], lambda: np.searchsorted(a, v, side="middle"))
    case("searchsorted", dict(side="left"), [np.zeros((2, 2)), v], lambda: np.searchsorted(np.zeros((2, 2)), v))
    for dt in ["float64", "int32", "float32", "uint8"]:
        x = sample(dt, (13,), span=10)
        for bins in [np.array([0, 1, 2.5, 4]), np.array([4, 2.5, 1, 0]), np.array([1, 1, 3]), np.array([3.0]),
                     np.array([1, 3, 2])]:
            bins = bins.astype(NP[dt]) if dt != "uint8" else bins.astype(np.float64)
            for right in [False, True]:
                case("digitize", dict(right=int(right)), [x, bins], lambda: np.digitize(x, bins, right=right))


def gen_sets():
    for dt in DTYPES:
        for shape in [(15,), (3, 5), (0,)]:
            a = sample(dt, shape, span=4)
            for flags in ["", "i", "v", "c", "ivc"]:
                kw = dict(flags=flags or "-")
                case("unique", kw, [a], lambda: np.unique(a, return_index="i" in flags,
                                                          return_inverse="v" in flags, return_counts="c" in flags))
        b = sample(dt, (9,), span=4)
        a = sample(dt, (11,), span=4)
        case("isin", dict(invert=0), [a, b], lambda: np.isin(a, b))
        case("isin", dict(invert=1), [a.reshape(1, 11), b], lambda: np.isin(a.reshape(1, 11), b, invert=True))
        for f in ["intersect1d", "union1d", "setdiff1d", "setxor1d"]:
            case(f, {}, [a, b], lambda: getattr(np, f)(a, b))
    for dt in ["int32", "float64", "uint8"]:
        m = sample(dt, (7, 3), special=False, span=2)
        for axis in [0, 1, -1]:
            case("unique", dict(flags="ivc", axis=axis), [m],
                 lambda: np.unique(m, return_index=True, return_inverse=True, return_counts=True, axis=axis))
    e = np.zeros((0,), np.float32)
    for f in ["intersect1d", "union1d", "setdiff1d", "setxor1d"]:
        case(f, {}, [e, e], lambda: getattr(np, f)(e, e))


METHODS = ["linear", "lower", "higher", "midpoint", "nearest", "inverted_cdf", "averaged_inverted_cdf",
           "closest_observation", "interpolated_inverted_cdf", "hazen", "weibull", "median_unbiased",
           "normal_unbiased"]


def gen_stats():
    for dt in ["float64", "float32", "float16", "int32", "uint16", "bool", "bfloat16"]:
        for special in [False, True]:
            a = sample(dt, (4, 7), special=special, span=50)
            for axis in [None, 0, (0, 1)] if special else [1]:
                for keep in [0, 1]:
                    kw = dict(axis=axis_text(axis), keepdims=keep)
                    case("median", kw, [a], lambda: np.median(a, axis=axis, keepdims=bool(keep)))
                    if dt != "bfloat16":  # NumPy's masked-array path gives bfloat16 rows a float64 result
                        case("nanmedian", kw, [a], lambda: np.nanmedian(a, axis=axis, keepdims=bool(keep)))
            for m in METHODS:
                qs = [0.0, 0.3, 0.5, 1.0, [0.1, 0.77]] if m in ("linear", "nearest", "midpoint") else [0.3, [0.1, 0.77]]
                for q in qs:
                    qt = "l".join(str(x) for x in q) if isinstance(q, list) else str(q)
                    kw = dict(q=qt, axis=1, method=m, keepdims=0)
                    case("quantile", kw, [a], lambda: np.quantile(a, q, axis=1, method=m))
                    case("nanquantile", kw, [a], lambda: np.nanquantile(a, q, axis=1, method=m))
            for m in ["linear", "lower", "hazen"]:
                pq = 37.5
                kw = dict(q=pq, axis="None", method=m, keepdims=1)
                case("percentile", kw, [a], lambda: np.percentile(a, pq, method=m, keepdims=True))
                case("nanpercentile", kw, [a], lambda: np.nanpercentile(a, pq, method=m, keepdims=True))
    a = sample("float64", (3, 4))
    case("quantile", dict(q=1.5, axis="None", method="linear", keepdims=0), [a], lambda: np.quantile(a, 1.5))
    case("quantile", dict(q=0.5, axis="None", method="bogus", keepdims=0), [a],
         lambda: np.quantile(a, 0.5, method="bogus"))
    case("quantile", dict(q=0.5, axis=2, method="linear", keepdims=0), [a], lambda: np.quantile(a, 0.5, axis=2))
    case("quantile", dict(q=0.5, axis="None", method="linear", keepdims=0), [np.zeros(0)],
         lambda: np.quantile(np.zeros(0), 0.5))
    case("median", dict(axis="None", keepdims=0), [np.zeros(0)], lambda: np.median(np.zeros(0)))


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--out", required=True)
    args = ap.parse_args()
    for g in [gen_sort, gen_lexsort, gen_search, gen_sets, gen_stats]:
        g()
    os.makedirs(args.out, exist_ok=True)
    with open(os.path.join(args.out, "sorting.txt"), "w") as f:
        f.write("\n".join(lines) + "\n")
    print(f"gen_sorting.py: {len(lines)} cases in {args.out}/sorting.txt")


if __name__ == "__main__":
    main()
