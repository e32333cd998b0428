#!/usr/bin/env python3
"""tests/oracle/gen_complex.py: NumPy 2's answers for issue 33's complex dtypes, which
tests/test_complex_oracle.cpp checks cufuse (host reference backend) against.

    python3 tests/oracle/gen_complex.py --out <dir>

Writes <out>/complex.txt, one case per line, fields separated by TABs:

    <func> <params k=v ... | -> <input arrays, space separated> <expected array | error Kind | str HEX>

An array is `<dtype>:<shape, comma separated>:<raw little-endian bytes in hex>` (oracle_common.tok).
Functions: every op row that takes complex (unary and binary, complex beside complex and beside
each real dtype; their result dtypes and values; every unary row over a grid of special values:
zeros of both signs, infinities, NaN in either part), `scalar` (x op a Python complex/float/int:
params op, re, im, kind), astype (complex to every dtype, every dtype to complex), sum / prod /
mean / var / std / cumsum (axis), repr (NumPy's array repr, as the hex of its UTF-8 text), and
the ops NumPy has no complex loop for (floor, arctan2, remainder, ...: TypeError).
NumPy's order of complex values: less/greater/maximum/fmax/... over values with ties and NaNs,
max / min / nanmax / nanmin / argmax / argmin / median / nanmedian (axis), clip, sort /
argsort (axis; argsort stable), searchsorted (side), unique (its four outputs), isin, any/all
(truth values), and quantile / digitize (TypeError: NumPy takes real numbers only).
"""
import argparse

from oracle_common import DTYPES, NP, np, tok, write_cases

rng = np.random.default_rng(20261133)
lines = []
CPLX = ["complex64", "complex128"]
ALL = DTYPES + CPLX


def cvals(dt, n, scale=3.0, special=False):
    v = rng.standard_normal(n) * scale + 1j * rng.standard_normal(n) * scale
    if special and n > 12:
        sp = [0, -0.0, complex(0, -0.0), complex(-0.0, -0.0), 1, -1, 1j, -1j, complex(np.inf, 0),
              complex(0, np.inf), complex(np.nan, 1), complex(2, np.nan)]
        v[: len(sp)] = sp
    return v.astype(dt)


def rvals(dt, n):
    if dt == "bool":
        return rng.integers(0, 2, n).astype(bool)
    if dt.startswith("uint"):
        return rng.integers(0, 100, n).astype(NP[dt])
    if dt.startswith("int"):
        return rng.integers(-50, 50, n).astype(NP[dt])
    return (rng.standard_normal(n) * 5).astype(NP[dt])


def case(func, params, inputs, fn):
    try:
        with np.errstate(all="ignore"):
            r = fn()
        res = r if isinstance(r, str) else tok(r)
    except (TypeError, ValueError) as e:
        res = f"error {type(e).__name__}"
    p = " ".join(f"{k}={v}" for k, v in params.items()) or "-"
    lines.append("\t".join([func, p, " ".join(tok(x) for x in inputs), res]))


UNARY = ["negative", "positive", "absolute", "square", "reciprocal", "sqrt", "exp", "log", "sin", "cos", "tan",
         "sinh", "cosh", "tanh", "conjugate", "real", "imag", "angle", "isnan", "isinf", "isfinite", "logical_not",
         "sign", "rint", "exp2", "expm1", "log2", "log10", "log1p", "arcsin", "arccos", "arctan", "arcsinh",
         "arccosh", "arctanh"]
BINARY = ["add", "subtract", "multiply", "true_divide", "power", "equal", "not_equal", "logical_and", "less",
          "maximum"]
ORDER = ["less", "less_equal", "greater", "greater_equal", "maximum", "minimum", "fmax", "fmin", "equal"]
GRID = [0.0, -0.0, 1.0, -2.0, 0.5, np.inf, -np.inf, np.nan]


def grid(dt):
    """Every pair of GRID's parts: zeros of both signs, infinities, NaN in either part."""
    return np.array([complex(r, i) for r in GRID for i in GRID], dt)


def ordered(dt, n):
    """Values with ties (equal real parts, equal values, -0.0 beside 0.0) and NaNs in either part."""
    re = rng.integers(-2, 3, n).astype(float)
    im = rng.integers(-2, 3, n).astype(float)
    re[rng.random(n) < 0.1] = np.nan
    im[rng.random(n) < 0.1] = np.nan
    re[rng.random(n) < 0.1] = -0.0
    v = (re + 1j * im).astype(dt)
    v.real, v.imag = re, im  # NaN parts kept as they are (re + 1j * nan would spoil the real part)
    return v
NO_LOOP = ["floor", "ceil", "trunc", "arctan2", "remainder", "floor_divide", "fmod", "hypot", "cbrt", "bitwise_and",
           "left_shift", "logaddexp", "heaviside", "copysign"]
ARITY = {"arctan2": 2, "remainder": 2, "floor_divide": 2, "fmod": 2, "hypot": 2, "bitwise_and": 2, "left_shift": 2,
         "logaddexp": 2, "heaviside": 2, "copysign": 2}


def npf(name):
    return {"real": np.real, "imag": np.imag, "angle": np.angle}.get(name) or getattr(np, name)


def gen_ufuncs():
    for dt in CPLX:
        x = cvals(dt, 40, special=False)
        for op in UNARY:
            case(op, {}, [x], lambda: np.asarray(npf(op)(x)))
        s = cvals(dt, 24, special=True)
        g = grid(dt)
        for op in UNARY:
            case(op, {}, [g], lambda: np.asarray(npf(op)(g)))
        small = (cvals(dt, 24, scale=1e-3) if dt == "complex128" else cvals(dt, 24, scale=1e-2))
        for op in ["expm1", "log1p", "arcsin", "arccos", "arctan", "arcsinh", "arccosh", "arctanh", "sign"]:
            case(op, {}, [small], lambda: np.asarray(npf(op)(small)))
        o1, o2 = ordered(dt, 64), ordered(dt, 64)
        for op in ORDER:
            case(op, {}, [o1, o2], lambda: getattr(np, op)(o1, o2))
        pick = rng.choice(len(g) * len(g), 160, replace=False)  # pairs of special values
        gg = g[pick // len(g)], g[pick % len(g)]
        for op in ORDER:
            case(op, {}, list(gg), lambda: getattr(np, op)(*gg))
        for other in ALL:
            y = cvals(other, 40) if other in CPLX else rvals(other, 40)
            for op in BINARY:
                if op == "power" and other not in CPLX and not other.startswith("float"):
                    y2 = y if other == "bool" else (np.abs(y) % 4).astype(y.dtype)  # small exponents
                else:
                    y2 = y
                case(op, {}, [x, y2], lambda: getattr(np, op)(x, y2))
                if other not in CPLX:
                    case(op, {}, [y2, x], lambda: getattr(np, op)(y2, x))
        s2 = cvals(dt, 24, special=True)
        for op in ["add", "subtract", "multiply", "equal", "not_equal"]:
            case(op, {}, [s, s2], lambda: getattr(np, op)(s, s2))
        for op in NO_LOOP:
            args = [x] * ARITY.get(op, 1)
            case(op, {}, args, lambda: getattr(np, op)(*args))
    # real inputs of the complex-only rows
    for dt in DTYPES:
        y = rvals(dt, 20)
        for op in ["real", "imag", "angle", "conjugate"]:
            case(op, {}, [y], lambda: np.asarray(npf(op)(y)))


def gen_scalars():
    for dt in ALL:
        x = cvals(dt, 16) if dt in CPLX else rvals(dt, 16)
        for kind, val in [("complex", complex(0.5, -2.0)), ("float", 2.5), ("int", 3)]:
            for op in ["add", "multiply", "true_divide"]:
                if kind != "complex" and dt not in CPLX:
                    continue
                case("scalar", {"op": op, "re": val.real, "im": getattr(val, "imag", 0), "kind": kind}, [x],
                     lambda: getattr(np, op)(x, val))


def gen_casts():
    for src in CPLX:
        x = cvals(src, 30, scale=20.0)
        x.real = np.abs(x.real)  # negative floats to unsigned integers are undefined in NumPy
        for to in ALL:
            case("astype", {"dtype": to}, [x], lambda: x.astype(NP[to] if to in NP else to))
    for src in DTYPES:
        y = rvals(src, 30)
        for to in CPLX:
            case("astype", {"dtype": to}, [y], lambda: y.astype(to))


def gen_reductions():
    for dt in CPLX:
        for shape in [(7,), (4, 9), (3, 5, 6)]:
            x = cvals(dt, int(np.prod(shape)), scale=1.0).reshape(shape)
            for axis in ["None"] + [str(a) for a in range(len(shape))]:
                ax = None if axis == "None" else int(axis)
                for f in ["sum", "prod", "mean", "var", "std"]:
                    case(f, {"axis": axis}, [x], lambda: np.asarray(getattr(np, f)(x, axis=ax)))
                if ax is not None:
                    case("cumsum", {"axis": axis}, [x], lambda: np.cumsum(x, axis=ax))
        case("sum", {"axis": "0"}, [np.zeros((0, 3), dt)], lambda: np.sum(np.zeros((0, 3), dt), axis=0))


def gen_ordering():
    for dt in CPLX:
        for shape in [(40,), (6, 9)]:
            x = ordered(dt, int(np.prod(shape))).reshape(shape)
            xf = x.copy()
            xf[np.isnan(xf)] = 1 + 1j  # no NaN: max / argmax pick by order alone
            for axis in ["None"] + [str(a) for a in range(len(shape))]:
                ax = None if axis == "None" else int(axis)
                for f in ["max", "min", "nanmax", "nanmin", "argmax", "argmin"]:
                    for v in (x, xf):
                        case(f, {"axis": axis}, [v], lambda: np.asarray(getattr(np, f)(v, axis=ax)))
                for f in ["median", "nanmedian"]:
                    case(f, {"axis": axis}, [x], lambda: np.asarray(getattr(np, f)(x, axis=ax)))
                if ax is not None or len(shape) == 1:
                    a = -1 if ax is None else ax
                    case("sort", {"axis": str(a)}, [x], lambda: np.sort(x, axis=a))
                    case("argsort", {"axis": str(a)}, [x], lambda: np.argsort(x, axis=a, kind="stable"))
        case("max", {"axis": "0"}, [np.zeros((0, 3), dt)], lambda: np.max(np.zeros((0, 3), dt), axis=0))
        x = ordered(dt, 50)
        srt = np.sort(ordered(dt, 30))
        for side in ["left", "right"]:
            case("searchsorted", {"side": side}, [srt, x], lambda: np.searchsorted(srt, x, side=side))
            case("searchsorted", {"side": side}, [srt, x[:12].reshape(3, 4)],
                 lambda: np.searchsorted(srt, x[:12].reshape(3, 4), side=side))
        for k in ["values", "indices", "inverse", "counts"]:
            case("unique", {"out": k}, [x], lambda: np.unique(x, return_index=True, return_inverse=True,
                                                             return_counts=True)[["values", "indices", "inverse",
                                                                                  "counts"].index(k)])
        t9 = ordered(dt, 9)
        case("isin", {}, [x, t9], lambda: np.isin(x, t9))
        lo, hi = np.array(-1 + 0.5j, dt), np.array(1 - 1j, dt)
        case("clip", {}, [x, lo, hi], lambda: np.clip(x, lo, hi))
        case("quantile", {}, [x], lambda: np.quantile(x, 0.5))
        case("digitize", {}, [x], lambda: np.digitize(x, np.array([0.0, 1.0])))
        for f in ["any", "all"]:
            case(f, {"axis": "None"}, [x], lambda: np.asarray(getattr(np, f)(x)))


def gen_repr():
    samples = [
        np.array([1 + 2j, -0.0 - 0.5j, 3], "complex64"),
        np.array([1 + 2j, complex(np.nan, 1)]),
        np.array([1e-10j, 1e10 + 1j]),
        np.array([complex(np.inf, -np.inf), 2.5 - 1j]),
        np.array([[1.5 + 0j, 0 - 3.25j], [1e-3 + 1e3j, -7 + 0j]], "complex64"),
        np.array(1 + 2j),
        np.array(-0.5j, "complex64"),
        np.zeros(0, "complex128"),
        cvals("complex128", 5),
        cvals("complex64", 7),
    ]
    for a in samples:
        case("repr", {}, [a], lambda: "str " + repr(a).encode().hex())


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--out", required=True)
    out = ap.parse_args().out
    gen_ufuncs()
    gen_scalars()
    gen_casts()
    gen_reductions()
    gen_ordering()
    gen_repr()
    write_cases(out, "complex.txt", lines)


if __name__ == "__main__":
    main()
