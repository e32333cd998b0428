#!/usr/bin/env python3
"""tests/oracle/gen_cases.py: writes the NumPy 2 oracle cases (and SciPy's, for
convolve2d/correlate2d) that tests/test_reference_oracle.cpp checks the host reference
evaluator against.

    python3 tests/oracle/gen_cases.py --src <cufuse source dir> --out <dir>

Writes <out>/manifest.txt (one case per line, described below), <out>/data.bin (the
arrays, raw little-endian storage of each dtype: bool as 1 byte, float16/bfloat16 as
their 16 bits) and <out>/stamp. When the stamp says the cases were made by this very
script, from this op table, with these NumPy, ml_dtypes and SciPy versions, nothing is redone.

The ops come from include/cufuse/op_rows.hpp (every kernel row, by its NumPy name), so a new row is
tested, or this script fails naming it. Needs numpy >= 2 and ml_dtypes (bfloat16); scipy
for the convolve2d/correlate2d cases, which are skipped (saying so) without it.

Manifest records (tokens separated by spaces; an array is `<offset> <count>` into data.bin):
  meta <numpy version> <ml_dtypes version>
  promote <a> <b> <np.promote_types or ERR> <np.add's result dtype>
  float_for <a> <np.sqrt's loop dtype>
  type <op> <n> <d1..dn> <result dtype or REJECT> [<loop input dtypes d1..dn>]
  values <op> <n> <d1..dn> <out dtype> <ndim> <shape..> <count> <skip array or -1 0>
         then per input: <ndim> <shape..> <array>; then the expected <array>
  cast_exact <from> <to> <count> <in array> <out array>    (expected by exact rounding)
  arange <dtype> <first> <second> <ndim> <shape..> <strides..> <offset> <expected array>
  linspace <dtype> <start> <stop> <num> <endpoint> <step> <ndim> <shape..> <strides..> <offset> <expected>
  gather <dtype> <base array> <ndim> <shape..> <strides..> <offset> <expected>
  view <dtype> <base array> <in: ndim shape.. strides.. offset> <view: ndim shape.. strides.. offset> <expected>
  skipped <op> <reason> <count>      (how many inputs a documented divergence skipped)
  matmul_factor <dtype> <multiply|true_divide> <c> <ndim> <shape..> <a> <ndim> <shape..> <b> <expected f64> <magnitude f64>
  reduce <op> <dtype> <ndim> <shape..> <input> <axes: none or a,b> <keepdims 0/1> <dtype= or -> <ddof>
         then `ok <result dtype> <ndim> <shape..> <result> <magnitude f64 or -1 0>` or `error <ValueError|TypeError>`
  contract <einsum|matmul|dot|inner|outer|vdot|tensordot|trace|diagonal> <subscripts, axes `n` or `a,b;c,d`,
         `offset,axis1,axis2`, or -> <n> then per operand <dtype> <ndim> <shape..> <array>
         then `ok <result dtype> <ndim> <shape..> <result as f64>` or `error <ValueError|TypeError>`
  linalg <det|slogdet_sign|slogdet_log|inv|solve|cholesky|eigvalsh|svdvals|pinv|lstsq|matrix_rank|matrix_norm|
         convolve|correlate (param: the mode)|vector_norm (param: ord;axis;keepdims)|
         convolve2d|correlate2d (param: mode;boundary;fill value;views, see gen_conv2d)>
  inplace <ufunc> <a dtype> <b dtype, or int:v / float:v / bool:v for a Python scalar> <a> <b or -1 0>
         then `ok <a afterwards as f64>` or `error <TypeError|OverflowError>`
  call <composite> <k=v;k=v or -> <n> then per operand <dtype> <ndim> <shape..> <array>, <skip array or -1 0>,
         then `ok <result dtype> <ndim> <shape..> <result>` or `error <TypeError|ValueError>`
  ulps64 <op> <n> <dtype> <count> <operand arrays..> <NumPy's float64 result of the same inputs>
  weak <op> <array dtype> <int|float|bool> <Python value> <scalar on the left 0/1> <array>
         then `ok <result dtype> <result as f64>` or `error <TypeError|OverflowError>`
         <ord or -> <n> then operands and the result as for contract
"""
import argparse
import functools
import hashlib
import math
import os
import re
import sys
import warnings
from fractions import Fraction

try:
    import numpy as np
    import ml_dtypes
except ImportError as e:  # pragma: no cover
    sys.exit(f"gen_cases.py: needs numpy (>= 2) and ml_dtypes: {e}; pip install numpy ml_dtypes")
if int(np.__version__.split(".")[0]) < 2:
    sys.exit(f"gen_cases.py: needs numpy >= 2, found {np.__version__}")

BF16 = np.dtype(ml_dtypes.bfloat16)
DTYPES = ["bool", "int8", "int16", "int32", "int64", "uint8", "uint16", "uint32", "uint64",
          "float16", "bfloat16", "float32", "float64"]
NP = {n: (BF16 if n == "bfloat16" else np.dtype(n)) for n in DTYPES}
INTS = [d for d in DTYPES if d.startswith(("int", "uint"))]
FLOATS = ["float16", "bfloat16", "float32", "float64"]
SEED = 20240917
COMPARE = ("less", "less_equal", "greater", "greater_equal", "equal", "not_equal")
warnings.simplefilter("ignore", RuntimeWarning)  # overflow/invalid in casts and ufuncs are the point


def dname(dt):
    dt = np.dtype(dt)
    return "bfloat16" if dt == BF16 else dt.name


ROWS = os.path.join("include", "cufuse", "op_rows.hpp")
ARITY = {"UNARY": 1, "BINARY": 2, "WHERE": 3, "CAST": 1, "ROUND": 1, "NAN_TO_NUM": 1, "ISCLOSE": 2,
         "TERNARY": 3}


def read_table(src):
    """The op table's rows (include/cufuse/op_rows.hpp): kernel rows as (name, arity),
    composites as (name, arity), aliases as (alias, kernel row name), each in table order."""
    text = open(os.path.join(src, ROWS)).read()
    kernel = re.findall(r'X\(\s*(\w+)\s*,\s*(\w+)\s*,\s*"[^"]*"\s*,\s*(\w+)\s*,', text)
    comp = re.findall(r'\bC\(\s*(\w+)\s*,\s*(\w+)\s*,', text)
    alias = re.findall(r'\bA\(\s*(\w+)\s*,\s*(\w+)\s*,\s*(\w+)\s*\)', text)
    if not kernel or not comp or not alias:
        sys.exit(f"gen_cases.py: found no kernel, composite or alias rows in {ROWS}")
    by_id = {i: n for i, n, _ in kernel}
    return ([(n, ARITY[sig]) for _, n, sig in kernel], [(n, ARITY[sig]) for n, sig in comp],
            [(n, by_id[i]) for n, i, _ in alias])


def read_ops(src):
    """(name, arity) of every kernel row of the op table, in table order."""
    return read_table(src)[0]


def read_ulps_rows(src):
    """(name, arity, n) of every kernel row whose precision class is ULPS(n)."""
    text = open(os.path.join(src, ROWS)).read()
    rows = re.findall(r'X\(\s*\w+\s*,\s*(\w+)\s*,\s*"[^"]*"\s*,\s*(\w+)\s*,\s*\w+\s*,[^,]+,\s*\w+\s*,\s*ULPS\((\d+)\)',
                      text)
    return [(n, ARITY[sig], int(u)) for n, sig, u in rows]


class Writer:
    def __init__(self, out):
        self.lines = []
        self.data = open(os.path.join(out, "data.bin.tmp"), "wb")
        self.pos = 0

    def arr(self, a):
        a = np.ascontiguousarray(a)
        b = a.tobytes()
        off = self.pos
        self.data.write(b)
        pad = (-len(b)) % 8
        self.data.write(b"\0" * pad)
        self.pos += len(b) + pad
        return f"{off} {a.size}"

    def line(self, *tok):
        self.lines.append(" ".join(str(t) for t in tok))


def fmt_shape(shape):
    return " ".join(str(int(s)) for s in [len(shape), *shape])


# ---------------------------------------------------------------- values
def int_edges(d):
    info = np.iinfo(d)
    bits = info.bits
    v = [0, 1, 2, 3, 5, 7, 10, 100, 127, bits - 1, bits, bits + 1, info.max, info.max - 1, info.max // 2]
    if bits == 64:  # where float64 stops being exact
        v += [2**53, 2**53 + 1, 2**63 - 1024, 2**63 - 512]
    if info.min < 0:
        v += [-1, -2, -3, -7, -10, -100, -128, info.min, info.min + 1, info.min // 2]
    return [x for x in dict.fromkeys(v) if info.min <= x <= info.max]


def float_edges(d):
    fi = ml_dtypes.finfo(BF16) if d == "bfloat16" else np.finfo(NP[d])
    tiny, mx, eps = float(fi.tiny), float(fi.max), float(fi.eps)
    sub = float(fi.smallest_subnormal)
    v = [0.0, -0.0, 1.0, -1.0, 0.5, -0.5, 1.5, 2.5, -2.5, 3.0, 0.1, -0.7, 2.0, 10.0, 100.0, 1e3, -7.5,
         math.pi, math.e, math.nan, math.inf, -math.inf, sub, -sub, tiny, -tiny, tiny * 0.5, mx, -mx,
         mx / 2, 1 + eps, 1 - eps / 2, eps, 1e4, 65504.0, 1e-3, 0.25, -1.25, 4.5, 7.0]
    if d in ("float32", "float64", "bfloat16"):
        v += [1e30, -1e30, 1e-30, 1e20]
    if d == "float64":
        v += [1e300, -1e300, 1e-300, 2.0**53 + 2, 2.0**63, -(2.0**63), 1e17]
    if d == "float32":
        v += [2.0**24 + 2, 2.0**31, -(2.0**31), 1e10]
    return v


def edges(d):
    if d == "bool":
        return np.array([False, True])
    if d in INTS:
        return np.array(int_edges(d), dtype=NP[d])
    with np.errstate(all="ignore"):
        return np.array(float_edges(d), dtype=np.float64).astype(NP[d])


def randoms(d, n, rng):
    if d == "bool":
        return rng.integers(0, 2, n).astype(bool)
    if d in INTS:
        info = np.iinfo(d)
        full = rng.integers(info.min, info.max, n, dtype=NP[d], endpoint=True)
        small = rng.integers(max(info.min, -20), 21, n).astype(NP[d])
        return np.where(rng.random(n) < 0.5, full, small)
    fi = ml_dtypes.finfo(BF16) if d == "bfloat16" else np.finfo(NP[d])
    lo, hi = math.log2(float(fi.smallest_subnormal)), math.log2(float(fi.max))
    mag = np.exp2(rng.uniform(lo, hi, n))
    mixed = np.select([rng.random(n) < 0.3, rng.random(n) < 0.5],
                      [rng.uniform(-1, 1, n), rng.uniform(-12, 12, n)], mag * np.sign(rng.uniform(-1, 1, n)))
    with np.errstate(all="ignore"):
        return mixed.astype(NP[d])


def pool(d, n, rng):
    return np.concatenate([edges(d), randoms(d, n, rng)])


# ---------------------------------------------------------------- NumPy calls
def round_fraction(q, mant, emin, maxval):
    """A nonzero exact rational q rounded once (to nearest, ties to even) to a binary float with
    `mant` stored mantissa bits and minimum normal exponent emin; as float64 (inf past maxval)."""
    m = abs(q)
    e = m.numerator.bit_length() - m.denominator.bit_length()
    if Fraction(2) ** e > m:
        e -= 1
    e = max(e, emin)
    quantum = Fraction(2) ** (e - mant)
    n, r = divmod(m / quantum, 1)
    if r > Fraction(1, 2) or (r == Fraction(1, 2) and n % 2 == 1):
        n += 1
    v = n * quantum
    sign = 1.0 if q > 0 else -1.0
    return sign * math.inf if v > maxval else sign * float(v)


def np_fma(a, b, c):
    """fma(a, b, c), NumPy has none: promoted as a ufunc of three operands (floating dtypes only),
    a * b + c exact, rounded once; float16/bfloat16 computed in float32 (rounded once there) and
    rounded to the dtype, as every float16/bfloat16 op of the table is."""
    # The dtype NumPy gives a * b + c (its ufuncs' promotions, which ml_dtypes extends)
    p = np.add(np.multiply(np.ones(1, a.dtype), np.ones(1, b.dtype)), np.ones(1, c.dtype)).dtype
    if p.kind != "f" and p != BF16:
        raise TypeError(f"fma: no loop for {p}")
    a, b, c = np.broadcast_arrays(a, b, c)
    t = np.dtype(np.float32) if p.itemsize == 2 else p
    a, b, c = (x.astype(t) for x in (a, b, c))
    fi = np.finfo(t)
    out = np.empty(a.shape, dtype=t)
    for i in np.ndindex(a.shape):
        x, y, z = float(a[i]), float(b[i]), float(c[i])
        if math.isinf(x) or math.isinf(y) or math.isnan(x) or math.isnan(y) or math.isnan(z):
            r = x * y + z  # an infinite or NaN product: float64 gives IEEE's answer
        elif math.isinf(z):
            r = z  # a finite product (exactly, though float64 might overflow it) plus an infinity
        elif x == 0 or y == 0:
            r = x * y + z  # an exact zero product: z, or the sign of a zero sum as IEEE gives it
        else:
            q = Fraction(x) * Fraction(y) + Fraction(z)
            if q == 0:
                r = 0.0
            elif t == np.float64:
                try:
                    r = float(q)  # int / int: correctly rounded
                except OverflowError:
                    r = math.inf if q > 0 else -math.inf
            else:
                r = round_fraction(q, fi.nmant, fi.minexp, float(fi.max))
        out[i] = r
    return out.astype(p)


def np_call(op, args, out_dtype=None):
    with np.errstate(all="ignore"):
        if op == "where":
            return np.where(*args)
        if op == "fma":
            return np_fma(*args)
        if op == "astype":
            return args[0].astype(out_dtype)
        return getattr(np, op)(*args)


def result_type(op, dts):
    """NumPy's result dtype for op on strong arrays of these dtypes, or None (rejected)."""
    args = [np.ones(1, NP[d]) for d in dts]
    try:
        return dname(np_call(op, args).dtype)
    except (TypeError, ValueError, np.exceptions.DTypePromotionError):
        return None


def loop_dtypes(op, dts):
    try:
        r = getattr(np, op).resolve_dtypes(tuple(NP[d] for d in dts) + (None,))
        return [dname(x) for x in r[: len(dts)]]
    except Exception:
        return None


def f64_to_small_exact(x, mant, emin, maxval):
    """float64 -> the nearest value of a binary float with `mant` stored mantissa bits and
    minimum normal exponent emin (ties to even), rounded once; as float64. NaN stays NaN."""
    x = np.asarray(x, dtype=np.float64)
    with np.errstate(all="ignore"):
        m, e = np.frexp(np.abs(x))          # |x| = m * 2^e, m in [0.5, 1)
        p = np.where(e - 1 < emin, mant + 1 - (emin - (e - 1)), mant + 1)  # significant bits kept
        p = np.maximum(p, -1)
        r = np.rint(np.ldexp(m, p))          # exact scaling; rint: ties to even
        v = np.ldexp(r, e - p)
        half_ulp_over = maxval + np.ldexp(1.0, int(math.floor(math.log2(maxval))) - mant - 1)
        v = np.where(np.abs(x) >= half_ulp_over, np.inf, v)
        v = np.where(np.isinf(x), np.inf, v)
        v = np.where(np.isnan(x), np.nan, v)
    return np.copysign(v, x)


def f64_to_bf16_exact(x):
    return f64_to_small_exact(x, 7, -126, float(ml_dtypes.finfo(BF16).max)).astype(BF16)


# ---------------------------------------------------------------- case groups
def gen_promote(w):
    for a in DTYPES:
        for b in DTYPES:
            try:
                p = dname(np.promote_types(NP[a], NP[b]))
            except (TypeError, np.exceptions.DTypePromotionError):
                p = "ERR"
            w.line("promote", a, b, p, dname(np.add(np.zeros(1, NP[a]), np.zeros(1, NP[b])).dtype))
    for a in DTYPES:
        w.line("float_for", a, loop_dtypes("sqrt", [a])[0])


def gen_types(w, ops):
    for op, n in ops:
        if op == "astype":
            continue
        combos = [(a,) for a in DTYPES] if n == 1 else \
            [(a, b) for a in DTYPES for b in DTYPES] if n == 2 else \
            [(c, a, b) for c in DTYPES for a in DTYPES for b in DTYPES]
        for dts in combos:
            r = result_type(op, dts)
            if r is None:
                w.line("type", op, n, *dts, "REJECT")
                continue
            loops = loop_dtypes(op, dts) if op != "where" else None
            w.line("type", op, n, *dts, r, *(loops or []))


def skip_mask(op, dts, args):
    """Inputs where we deliberately differ from NumPy (see the test's header): True = skip.
    Also the arguments to give NumPy (where NumPy would raise for the whole array)."""
    n = args[0].size
    skip = np.zeros(n, dtype=bool)
    loops = loop_dtypes(op, dts)
    int_loop = loops is not None and loops[0] in INTS
    np_args = args
    if op == "power" and int_loop and NP[dts[1]].kind == "i":
        neg = args[1] < 0  # NumPy raises for the whole array; we give the truncated value
        skip |= neg
        np_args = [args[0], np.where(neg, 0, args[1]).astype(args[1].dtype)]
    if op == "reciprocal" and int_loop:
        skip |= args[0] == 0  # NumPy: 1.0/0 converted to an integer (undefined)
    if op in COMPARE and loops \
            and sorted(loops) == ["int64", "uint64"]:
        # Divergence 6: NumPy 2 compares signed integers with uint64 exactly; our op table
        # compares them in float64 (the graph builder rewrites such comparisons exactly).
        # Skip the pairs where float64 loses the answer.
        skip |= np_call(op, args) != np_call(op, [x.astype(np.float64) for x in args])
    if op in ("logaddexp", "logaddexp2") and loops and loops[0] == "float32":
        # Divergence 10: NumPy's float32 loop cancels where the result is near 0; ours computes
        # in float64. Skip where NumPy's float32 is more than 4 ulps off its own float64 value.
        r32 = np_call(op, args).astype(np.float32)
        r64 = np_call(op, [x.astype(np.float64) for x in args]).astype(np.float32)
        skip |= (np.abs(ordered32(r32) - ordered32(r64)) > 4) & ~np.isnan(r64)
    return skip, np_args


def ordered32(a):
    """float32 values as integers that order like them (ulp distances)."""
    i = np.ascontiguousarray(a, dtype=np.float32).view(np.int32).astype(np.int64)
    return np.where(i < 0, np.int64(-2**31) - i, i)


def cast_skip(src, to):
    """astype inputs NumPy leaves undefined (we saturate): NaN/inf/out of range -> integer."""
    n = src.size
    if not (src.dtype.kind == "f" or src.dtype == BF16) or to not in INTS:
        return np.zeros(n, dtype=bool)
    x = src.astype(np.float64)
    info = np.iinfo(to)
    with np.errstate(all="ignore"):
        ok = np.isfinite(x) & (x > float(info.min) - 1) & (x < float(info.max) + 1)
        # float(info.max) + 1 rounds for 64-bit types: in range is strictly below 2^63 / 2^64.
        if info.bits == 64:
            ok &= x < 2.0 ** (63 if info.min < 0 else 64)
    return ~ok


def write_values(w, op, dts, args, out_dtype=None, skip=None, np_args=None):
    exp = np_call(op, np_args if np_args is not None else args, out_dtype)
    shape = exp.shape
    if skip is None:
        skip = np.zeros(exp.shape, dtype=bool)
    if skip.any():
        w.line("skipped", op, "documented-divergence", int(skip.sum()))
    sk = w.arr(skip.astype(np.uint8)) if skip.any() else "-1 0"
    toks = ["values", op, len(args), *dts, dname(exp.dtype), fmt_shape(shape), exp.size, sk]
    for a in args:
        toks += [fmt_shape(a.shape), w.arr(a)]
    toks.append(w.arr(exp))
    w.line(*toks)


def gen_values(w, ops, rng):
    for op, n in ops:
        if op == "astype":
            continue
        for d in DTYPES:
            if op == "where":
                break
            if result_type(op, (d,) * n) is None:
                continue
            if n == 1:
                a = pool(d, 1000, rng)
                args = [a]
            elif n == 3:  # triples of a sample of the edge values, then random triples
                e = edges(d)
                sub = e[rng.permutation(e.size)[:12]]
                ga, gb, gc = np.meshgrid(sub, sub, sub, indexing="ij")
                args = [np.concatenate([ga.ravel(), pool(d, 600, rng)]),
                        np.concatenate([gb.ravel(), pool(d, 600, rng)[::-1]]),
                        np.concatenate([gc.ravel(), rng.permutation(pool(d, 600, rng))])]
                m = min(x.size for x in args)
                args = [x[:m] for x in args]
            else:  # every pair of edge values, then random pairs
                e = edges(d)
                ea, eb = np.meshgrid(e, e, indexing="ij")
                args = [np.concatenate([ea.ravel(), pool(d, 600, rng)]),
                        np.concatenate([eb.ravel(), pool(d, 600, rng)[::-1]])]
                m = min(x.size for x in args)
                args = [x[:m] for x in args]
            skip, np_args = skip_mask(op, (d,) * n, args)
            write_values(w, op, (d,) * n, args, skip=skip, np_args=np_args)
        if n == 2:  # mixed dtypes: the conversions into the loop dtype
            for a in DTYPES:
                for b in DTYPES:
                    if a == b or result_type(op, (a, b)) is None:
                        continue
                    ea, eb = edges(a), edges(b)
                    if op not in COMPARE:  # every edge pair for comparisons, a sample elsewhere
                        ea, eb = ea[rng.permutation(ea.size)[:16]], eb[rng.permutation(eb.size)[:16]]
                    ga, gb = np.meshgrid(ea, eb, indexing="ij")
                    pa, pb = randoms(a, 40, rng), randoms(b, 40, rng)
                    args = [np.concatenate([ga.ravel(), pa]), np.concatenate([gb.ravel(), pb])]
                    skip, np_args = skip_mask(op, (a, b), args)
                    write_values(w, op, (a, b), args, skip=skip, np_args=np_args)
        if op == "where":
            for c in DTYPES:
                for x in DTYPES:
                    for y in ([x] if c != "bool" else DTYPES):
                        if result_type("where", (c, x, y)) is None:
                            continue
                        px, py, pc = pool(x, 40, rng), pool(y, 40, rng), pool(c, 40, rng)
                        m = min(px.size, py.size, pc.size)
                        args = [rng.permutation(pc)[:m], px[:m], py[:m]]
                        write_values(w, "where", (c, x, y), args)
    # broadcasting inputs of other shapes
    for op, da, db in [("add", "float32", "float32"), ("multiply", "int16", "uint8"),
                       ("maximum", "float16", "float64"), ("less", "int32", "float32")]:
        a = pool(da, 12, rng)[:12].reshape(3, 1, 1, 4)
        b = pool(db, 12, rng)[:10].reshape(2, 5, 1)
        write_values(w, op, (da, db), [a, b])
    s = np.asarray(pool("float64", 1, rng)[5:6]).reshape(())
    write_values(w, "subtract", ("float64", "float64"), [s, pool("float64", 30, rng)[:30].reshape(5, 6)])


def gen_casts(w, rng):
    for a in DTYPES:
        for b in DTYPES:
            src = pool(a, 400, rng)
            skip = cast_skip(src, b)
            if b == "bfloat16" and a == "float64":
                # ml_dtypes rounds float64 -> float32 -> bfloat16 (twice); we round once.
                skip = skip | (src.astype(BF16).view(np.uint16) != f64_to_bf16_exact(src).view(np.uint16)) \
                    & ~np.isnan(src)
            write_values(w, "astype", (a,), [src], out_dtype=NP[b], skip=skip)
    # every float16 and bfloat16 bit pattern -> float32 and float64
    bits = np.arange(65536, dtype=np.uint32).astype(np.uint16)
    for h in ("float16", "bfloat16"):
        for f in ("float32", "float64"):
            write_values(w, "astype", (h,), [bits.view(NP[h])], out_dtype=NP[f])
    # float32 / float64 -> float16 / bfloat16 at every tie, either side of it, and boundaries
    for h in ("float16", "bfloat16"):
        vals = bits.view(NP[h]).astype(np.float64)
        fin = np.sort(np.unique(vals[np.isfinite(vals) & (vals >= 0)]))
        mids = (fin[:-1] + fin[1:]) / 2
        fi = ml_dtypes.finfo(BF16) if h == "bfloat16" else np.finfo(np.float16)
        top = float(fi.max) + (float(fi.max) - float(np.nextafter(np.array(fi.max, NP[h]), np.array(0, NP[h]))
                                                  .astype(np.float64))) / 2
        for f in ("float32", "float64"):
            ft = np.dtype(f)
            m = np.concatenate([mids, [top, float(fi.max), 7e4, 1e39 if f == "float64" else 3e38]]).astype(ft)
            src = np.concatenate([m, np.nextafter(m, ft.type(np.inf)), np.nextafter(m, ft.type(0)), fin.astype(ft)])
            if f == "float64":  # just past a tie by less than a float32 ulp: double rounding would tie
                src = np.concatenate([src, m * (1 + 2.0 ** -40), m * (1 - 2.0 ** -40)])
            rnd = rng.integers(0, 2**32 if f == "float32" else 2**64, 200000, dtype=np.uint64, endpoint=False)
            rnd = rnd.astype(np.uint32).view(np.float32) if f == "float32" else rnd.view(np.float64)
            src = np.concatenate([src, -src, rnd.astype(ft), [np.nan, np.inf, -np.inf, 0.0, -0.0]]).astype(ft)
            if h == "bfloat16" and f == "float64":
                exp = f64_to_bf16_exact(src)
                w.line("cast_exact", f, h, src.size, w.arr(src), w.arr(exp))
                skip = src.astype(BF16).view(np.uint16) != exp.view(np.uint16)
                skip &= ~np.isnan(src)
                write_values(w, "astype", (f,), [src], out_dtype=NP[h], skip=skip)
            else:
                write_values(w, "astype", (f,), [src], out_dtype=NP[h])


def layout_of(view, base):
    """(shape, strides, offset) in elements of a NumPy view over `base`."""
    isz = base.itemsize
    off = (view.__array_interface__["data"][0] - base.__array_interface__["data"][0]) // isz
    return view.shape, tuple(s // isz for s in view.strides), off


def positions(shape, strides, offset):
    idx = np.indices(shape).reshape(len(shape), -1) if shape else np.zeros((0, 1), np.int64)
    return offset + (np.asarray(strides, np.int64)[:, None] * idx).sum(axis=0) if shape else np.array([offset])


def fmt_layout(shape, strides, offset):
    return f"{fmt_shape(shape)} {' '.join(str(int(s)) for s in strides)} {int(offset)}".replace("  ", " ")


def gen_generators(w):
    layouts = [((37,), (1,), 0), ((5, 4), (4, 1), 0), ((6,), (3,), 2), ((3, 4), (1, 3), 0), ((2, 3), (0, 2), 1)]
    cases = [("int64", 0, 37, 1), ("int32", -5, 100, 3), ("int8", -100, 120, 7), ("uint8", 0, 255, 7),
             ("int16", 30, -50, -2), ("uint64", 3, 300, 11), ("float64", 0.0, 3.7, 0.1),
             ("float64", -1.5, 10.0, 0.3), ("float32", 0.0, 3.7, 0.1), ("float32", 1e7, 1e7 + 50, 1.5),
             ("float16", 0.0, 3.7, 0.1), ("float16", -10, 30, 0.7), ("bfloat16", 0.0, 3.7, 0.1),
             ("bfloat16", 100, 500, 9.5)]
    for d, start, stop, step in cases:
        for shape, strides, offset in layouts:
            p = positions(shape, strides, offset)
            need = int(p.max()) + 1
            stop_needed = start + step * (need + 1)  # enough elements for every position
            full = np.arange(start, stop_needed, step, dtype=NP[d])[:need]
            exp = full[p].reshape(shape)
            first = full[0].item() if d in INTS else float(full[0].astype(np.float64))
            second = full[1].item() if d in INTS else float(full[1].astype(np.float64))
            w.line("arange", d, repr(first), repr(second), fmt_layout(shape, strides, offset), w.arr(exp))
    lcases = [("float64", 0.0, 1.0, 11, True), ("float64", -3.3, 7.9, 40, False), ("float32", 0.0, 1.0, 37, True),
              ("float16", -2.0, 9.5, 37, True), ("bfloat16", 1.0, 1000.0, 37, True), ("int32", -5, 0, 37, True),
              ("int64", -100, 173, 37, False), ("uint8", 0, 255, 37, True), ("int8", -7.5, 7.5, 37, True),
              ("float64", 1.0, 1.0, 1, True), ("float32", 2.5, -2.5, 37, False), ("bool", 0, 1, 37, True)]
    for d, start, stop, num, endpoint in lcases:
        div = (num - 1) if endpoint else num
        # NumPy: step = delta / div, or (div == 0) y = i * delta, i.e. a step of delta.
        step = (float(stop) - float(start)) / div if div > 0 else float(stop) - float(start)
        with np.errstate(all="ignore"):
            full = np.linspace(start, stop, num, endpoint=endpoint, dtype=NP[d])
        if d == "bfloat16":  # we round the float64 values once (ml_dtypes rounds through float32)
            full = f64_to_bf16_exact(np.linspace(start, stop, num, endpoint=endpoint))
        for shape, strides, offset in layouts:
            p = positions(shape, strides, offset)
            if int(p.max()) >= num:
                continue
            exp = full[p].reshape(shape)
            w.line("linspace", d, repr(float(start)), repr(float(stop)), num, int(endpoint), repr(step),
                   fmt_layout(shape, strides, offset), w.arr(exp))


def gen_layouts(w, rng):
    for d in ("float32", "int16", "bfloat16", "bool", "float64", "uint8"):
        base = pool(d, 210, rng)[:210].copy()
        b3 = base.reshape(5, 6, 7)
        views = [b3, b3[::2, 1:, ::-1], b3.T, b3[1, :, 2], b3[::-1, ::-2, 3:5],
                 np.broadcast_to(b3[0:1, :, 4:5], (3, 6, 2)), b3[2:3, 3:4, 4:5].reshape(()), b3[:, 0:0, :]]
        for v in views:
            shape, strides, off = layout_of(v, base)
            w.line("gather", d, w.arr(base), fmt_layout(shape, strides, off), w.arr(v.copy(order="C")))
        # View nodes: a strided input, then a remap over its row-major logical index
        for vin, remap in [(b3.T, lambda t: t.reshape(6, 35)[1::2, ::-3]),
                           (b3[::2, 1:, ::-1], lambda t: t.reshape(3, 35)),
                           (b3[1], lambda t: np.broadcast_to(t.reshape(42)[5:9], (3, 4))),
                           (b3.transpose(1, 0, 2), lambda t: t.reshape(-1)[::5].reshape(3, 14)[:, 2:]),
                           (b3.transpose(1, 0, 2), lambda t: t.reshape(-1)[7:8].reshape(()))]:
            ishape, istrides, ioff = layout_of(vin, base)
            lin = np.arange(vin.size).reshape(vin.shape)
            r = remap(lin)
            vshape, vstrides, voff = layout_of(r, lin.base if lin.base is not None else lin)
            exp = remap(vin).copy(order="C")
            assert exp.shape == vshape, (d, exp.shape, vshape, vin.shape)
            w.line("view", d, w.arr(base), fmt_layout(ishape, istrides, ioff), fmt_layout(vshape, vstrides, voff),
                   w.arr(exp))


def gen_matmul_factors(w, rng):
    """(a * c) @ b and (a / c) @ b with Python-float factors, zeros, NaN and inf in a: NumPy
    scales the operand; cufuse may fold the factor into the GEMM's alpha (src/library_build/matmul.cpp)."""
    facs = [2.0, -0.5, 0.1, 3.0, 1e-3, 0.0, -0.0, np.inf, -np.inf, np.nan, 1e30, 1e-30, 65536.0, 2.0 ** -20]
    for d in ("float32", "float64", "float16"):
        a = rng.standard_normal((6, 5)).astype(d)
        a[0, 1] = 0
        a[2, :] = 0
        a[3, 2] = np.inf
        a[4, 0] = np.nan
        b = rng.standard_normal((5, 4)).astype(d)
        for c in facs:
            for op in ("multiply", "true_divide"):
                with np.errstate(all="ignore"):
                    sc = a * c if op == "multiply" else a / c
                    exp = np.matmul(sc, b).astype(np.float64)
                    mag = np.matmul(np.abs(sc.astype(np.float64)), np.abs(b.astype(np.float64)))
                w.line("matmul_factor", d, op, repr(float(c)), fmt_shape(a.shape), w.arr(a), fmt_shape(b.shape),
                       w.arr(b), w.arr(exp), w.arr(mag))


RED_OPS = ["sum", "prod", "mean", "max", "min", "argmax", "argmin", "any", "all", "var", "std", "ptp",
           "count_nonzero", "nansum", "nanmean", "nanmax", "nanmin", "cumsum", "cumprod"]
RED_DTYPES = ["bool", "int8", "int16", "int32", "int64", "uint8", "uint16", "uint32", "uint64", "float16",
              "float32", "float64"]


def red_input(d, shape, rng, special):
    """Values for a reduction: small integers (so products stay in range), floats with NaN,
    +-inf, +-0 and ties where `special`; the dtype's extremes for integers."""
    n = int(np.prod(shape))
    if d == "bool":
        return (rng.integers(0, 2, n) == 1).reshape(shape)
    if d.startswith("int") or d.startswith("uint"):
        info = np.iinfo(d)
        v = rng.integers(max(info.min, -4), min(info.max, 4) + 1, n).astype(d)
        if special and n >= 4:
            v[rng.integers(0, n)] = info.max
            v[rng.integers(0, n)] = info.min
        return v.reshape(shape)
    v = np.round(rng.standard_normal(n) * 3, 1).astype(d)
    if special and n >= 6:
        for val in (np.nan, np.inf, -np.inf, -0.0, 0.0):
            v[rng.integers(0, n)] = val
    return v.reshape(shape)


def red_call(op, x, axis, keepdims, dt, ddof):
    kw = {}
    if op in ("argmax", "argmin", "cumsum", "cumprod"):
        kw["axis"] = axis
        if op in ("argmax", "argmin"):
            kw["keepdims"] = keepdims
    else:
        kw["axis"] = axis
        kw["keepdims"] = keepdims
    if dt is not None:
        kw["dtype"] = dt
    if op in ("var", "std"):
        kw["ddof"] = ddof
    return np.asarray(getattr(np, op)(x, **kw))


def gen_reductions(w, rng):
    """Every reduction and scan on every dtype it takes, over all axes, one, two or a negative
    one, with and without keepdims, a dtype= where NumPy takes one, ddof for var/std; inputs
    with NaN, infinities, signed zeros, integer extremes; empty axes. The result's dtype, shape
    and values, or the error class NumPy raises."""
    shapes = [(7,), (3, 5), (2, 3, 4), (0, 3), (4, 1), ()]
    for op in RED_OPS:
        for d in RED_DTYPES:
            for shape in shapes:
                nd = len(shape)
                if op in ("argmax", "argmin", "cumsum", "cumprod"):
                    axes = [None] + list(range(nd)) + ([-1] if nd else [])
                else:
                    axes = [None] + [(a,) for a in range(nd)] + ([(0, nd - 1)] if nd >= 2 else []) + ([(-1,)] if nd else [])
                for special in (False, True):
                    x = red_input(d, shape, rng, special)
                    for axis in axes:
                        for keepdims in ((False, True) if op not in ("cumsum", "cumprod") else (False,)):
                            dts = [None]
                            if op in ("sum", "prod", "nansum", "cumsum", "cumprod") and d in ("int8", "uint8", "bool", "float16"):
                                dts.append("int32" if d != "float16" else "float32")
                            if op in ("mean", "nanmean") and d in ("float16", "int16"):
                                dts.append("float32")
                            ddofs = [0, 1] if op in ("var", "std") else [0]
                            for dt in dts:
                                for ddof in ddofs:
                                    ax = "none" if axis is None else ",".join(str(a) for a in np.atleast_1d(axis))
                                    head = ["reduce", op, d, fmt_shape(shape), w.arr(x), ax, int(keepdims),
                                            dt or "-", ddof]
                                    try:
                                        with np.errstate(all="ignore"), warnings.catch_warnings():
                                            warnings.simplefilter("ignore")
                                            r = red_call(op, x, axis, keepdims, dt, ddof)
                                    except (ValueError, TypeError) as e:
                                        w.line(*head, "error", type(e).__name__)
                                        continue
                                    mag = None
                                    if r.dtype.kind == "f":
                                        # NaN and inf results are compared exactly: magnitudes of the finite inputs
                                        xa = np.array(np.abs(x.astype(np.float64)), dtype=np.float64)
                                        xa[~np.isfinite(xa)] = 0
                                        with np.errstate(all="ignore"):
                                            if op in ("var", "std"):
                                                mag = red_call("sum", xa * xa + xa, axis, keepdims, None, 0) + 1
                                            elif op in ("cumsum", "cumprod"):
                                                mag = np.abs(red_call(op, xa + (op == "cumprod"), axis, False, None, 0))
                                            elif x.size:
                                                mag = red_call("sum", xa, axis, keepdims, None, 0)
                                            else:
                                                mag = np.zeros(r.shape)
                                        mag = np.broadcast_to(np.asarray(mag, dtype=np.float64), r.shape)
                                    w.line(*head, "ok", dname(r.dtype), fmt_shape(r.shape), w.arr(r),
                                           w.arr(np.ascontiguousarray(mag)) if mag is not None else "-1 0")


def error_class(e):
    """The cufuse error class a NumPy ValueError or TypeError corresponds to (LinAlgError and
    einsum's errors are ValueErrors)."""
    return "TypeError" if isinstance(e, TypeError) else "ValueError"


def emit_operand_case(w, record, kind, param, ins, fn):
    """One `contract` or `linalg` record: the operands, then NumPy's result (dtype, shape,
    values as float64) or the class of the error it raised."""
    head = [record, kind, param, len(ins)]
    for a in ins:
        head += [dname(a.dtype), fmt_shape(a.shape), w.arr(a)]
    try:
        with np.errstate(all="ignore"), warnings.catch_warnings():
            warnings.simplefilter("ignore")
            r = np.asarray(fn(*ins))
    except (ValueError, TypeError) as e:
        w.line(*head, "error", error_class(e))
        return
    w.line(*head, "ok", dname(r.dtype), fmt_shape(r.shape), w.arr(r.astype(np.float64)))


def gen_contractions(w, rng):
    """einsum (explicit and implicit output, '...', repeated labels, several operands),
    matmul (1-D operands, broadcast batches, empty dims), dot, inner, outer, vdot, tensordot,
    trace and diagonal, on small integer values (exact in every float dtype): NumPy's result
    dtype, shape and values (as float64), or the error class it raises."""
    def arr(d, shape):
        v = rng.integers(-3, 4, size=shape)
        return (v != 0) if d == "bool" else v.astype(d)

    emit = functools.partial(emit_operand_case, w, "contract")

    f64 = "float64"
    ein = [
        ("ij,jk->ik", [(2, 3), (3, 4)]), ("ij,jk", [(2, 3), (3, 4)]), ("ij,kj->ik", [(2, 3), (4, 3)]),
        ("ii->i", [(3, 3)]), ("ii", [(3, 3)]), ("ij->ji", [(2, 3)]), ("ij->", [(2, 3)]), ("ij", [(2, 3)]),
        ("ji", [(2, 3)]), ("i,i->", [(4,), (4,)]), ("i,i", [(4,), (4,)]), ("i,j->ij", [(2,), (3,)]),
        ("i,j", [(2,), (3,)]), ("ij,ij->i", [(2, 3), (2, 3)]), ("ij,ij->j", [(2, 3), (2, 3)]),
        ("ij,ij->ij", [(2, 3), (2, 3)]), ("ijk,ikl->ijl", [(2, 3, 4), (2, 4, 5)]),
        ("...ij,...jk->...ik", [(2, 1, 3, 4), (5, 4, 2)]), ("...ij,...jk", [(2, 3, 4), (4, 2)]),
        ("...ii->...i", [(2, 3, 3)]), ("...ii", [(2, 3, 3)]), ("i...->...", [(3, 2, 4)]), ("i...", [(3, 2)]),
        ("ij...,jk...->ik...", [(2, 3, 5), (3, 4, 5)]), ("bij,bjk,bkl->bil", [(2, 3, 4), (2, 4, 5), (2, 5, 3)]),
        ("ij,jk,kl->il", [(2, 3), (3, 4), (4, 2)]), ("ij,jk,kl", [(2, 3), (3, 4), (4, 2)]),
        ("ijk->kji", [(2, 3, 4)]), ("iij->ij", [(3, 3, 2)]), ("iji->j", [(3, 2, 3)]), ("ii,i->i", [(3, 3), (3,)]),
        ("a,a,a->a", [(4,), (4,), (4,)]), ("ab,bc,cd,de->ae", [(2, 3), (3, 2), (2, 4), (4, 3)]),
        ("Ab,bC->AC", [(2, 3), (3, 4)]), ("i->", [(5,)]), ("ij,j->i", [(3, 4), (4,)]), ("ij,i->j", [(3, 4), (3,)]),
        ("ij,jk->ik", [(0, 3), (3, 4)]), ("ij,jk->ik", [(2, 0), (0, 4)]), ("i,i->i", [(3,), (1,)]),
        ("...,...->...", [(2, 3), (3,)]), ("ij,jk->il", [(2, 3), (3, 4)]), ("ij,jk", [(2, 3), (4, 4)]),
        ("ij->iij", [(2, 3)]), ("ij,jk->ik", [(2, 3)]), ("ijk->ij", [(2, 3)]), ("i->j", [(3,)]),
        ("ii->i", [(2, 3)]), ("ij->i->j", [(2, 3)]),
    ]
    for sub, shapes in ein:
        emit("einsum", sub, [arr(f64, s) for s in shapes], lambda *a, sub=sub: np.einsum(sub, *a))
    for da, db in (("int32", "int64"), ("float32", "float32"), ("int32", "float32"), ("float16", "float16"),
                   ("bool", "bool"), ("int8", "uint8")):
        emit("einsum", "ij,jk->ik", [arr(da, (2, 3)), arr(db, (3, 4))], lambda a, b: np.einsum("ij,jk->ik", a, b))
        emit("einsum", "ij,ij->i", [arr(da, (2, 3)), arr(db, (2, 3))], lambda a, b: np.einsum("ij,ij->i", a, b))
    mm = [((3,), (3,)), ((3,), (3, 4)), ((2, 3), (3,)), ((2, 3), (3, 4)), ((5, 2, 3), (3, 4)), ((2, 3), (5, 3, 4)),
          ((5, 1, 2, 3), (4, 3, 2)), ((0, 3), (3, 2)), ((2, 0), (0, 3)), ((2, 3), (4, 2)), ((), (3,)), ((3,), ()),
          ((2, 2, 3), (3, 3, 2)), ((3,), (2, 3, 4))]
    for sa, sb in mm:
        emit("matmul", "-", [arr(f64, sa), arr(f64, sb)], np.matmul)
    for da, db in (("int32", "int64"), ("float32", "float32"), ("float16", "float16"), ("bool", "bool"),
                   ("int8", "uint8"), ("float32", "int32"), ("uint64", "int64")):  # no bfloat16: divergence 7
        emit("matmul", "-", [arr(da, (2, 3)), arr(db, (3, 4))], np.matmul)
        emit("matmul", "-", [arr(da, (2, 5, 3)), arr(db, (3,))], np.matmul)
    for sa, sb in (((3,), (3,)), ((2, 3), (3,)), ((2, 3), (3, 4)), ((2, 3, 4), (5, 4, 6)), ((), (3,)), ((3,), ()),
                   ((2, 3), (2, 3)), ((3,), (3, 2))):
        emit("dot", "-", [arr(f64, sa), arr(f64, sb)], np.dot)
    for sa, sb in (((3,), (3,)), ((2, 3), (4, 3)), ((2, 3, 4), (5, 4)), ((), (2, 3)), ((2, 3), (3, 2))):
        emit("inner", "-", [arr(f64, sa), arr(f64, sb)], np.inner)
    for sa, sb in (((3,), (4,)), ((2, 2), (3,)), ((), (3,))):
        emit("outer", "-", [arr(f64, sa), arr(f64, sb)], np.outer)
    for sa, sb in (((3,), (3,)), ((2, 3), (6,)), ((2, 3), (3, 2)), ((2, 3), (4,))):
        emit("vdot", "-", [arr(f64, sa), arr(f64, sb)], np.vdot)
    for sa, sb, ax in (((3, 4, 5), (4, 5, 6), 2), ((3, 4), (4, 5), 1), ((2,), (3,), 0), ((2, 3), (2, 3), 2),
                       ((3, 4, 5), (4, 3, 2), ((1, 0), (0, 1))), ((3, 4, 5), (5, 2), ((2,), (0,))),
                       ((3, 4), (5, 4), 1), ((3, 4, 5), (4, 3, 2), ((1, 0), (1, 0)))):
        param = str(ax) if isinstance(ax, int) else ",".join(map(str, ax[0])) + ";" + ",".join(map(str, ax[1]))
        emit("tensordot", param, [arr(f64, sa), arr(f64, sb)], lambda a, b, ax=ax: np.tensordot(a, b, ax))
    for shape, off, a1, a2 in (((4, 4), 0, 0, 1), ((4, 4), 1, 0, 1), ((4, 4), -1, 0, 1), ((4, 4), 5, 0, 1),
                               ((2, 3, 4), 0, 1, 2), ((3, 4, 5), 1, 0, 2), ((3, 4, 5), -2, 2, 0), ((3, 4), 0, -1, -2),
                               ((4,), 0, 0, 1), ((3, 3), 0, 0, 0), ((2, 5), -1, 1, 0)):
        param = f"{off},{a1},{a2}"
        x = arr(f64, shape)
        emit("trace", param, [x], lambda a, o=off, p=a1, q=a2: np.trace(a, o, p, q))
        emit("diagonal", param, [x], lambda a, o=off, p=a1, q=a2: np.diagonal(a, o, p, q))
    for d in ("int8", "bool", "float16", "uint32"):
        emit("trace", "0,0,1", [arr(d, (3, 3))], lambda a: np.trace(a))
        emit("diagonal", "1,0,1", [arr(d, (3, 4))], lambda a: np.diagonal(a, 1))


def gen_linalg(w, rng):
    """numpy.linalg on well-conditioned random matrices (2-D and batched, float32, float64 and
    integers), singular and non-square ones, float16: det, slogdet, inv, solve, cholesky,
    eigvalsh, svdvals, pinv, lstsq's solution, matrix_rank, matrix and vector norms. Factor
    outputs with sign freedom (qr, eigh and svd vectors) are checked elsewhere (through
    invariants). The result dtype, shape and values, or the error class (LinAlgError is a
    ValueError)."""
    def well(d, shape):
        n = shape[-1]
        a = rng.standard_normal(shape) + n * np.eye(shape[-2], n) if len(shape) >= 2 else rng.standard_normal(shape)
        if d.startswith("int"):
            return np.round(a).astype(d)
        return a.astype(d)

    def spd(d, shape):
        a = rng.standard_normal(shape)
        m = a @ np.swapaxes(a, -1, -2) + shape[-1] * np.eye(shape[-1])
        return m.astype(d)

    emit = functools.partial(emit_operand_case, w, "linalg")

    la = np.linalg
    sq = [(4, 4), (2, 3, 3), (1, 1), (0, 0)]
    for d in ("float64", "float32", "int32"):
        for shape in sq:
            a = well(d, shape)
            emit("det", "-", [a], la.det)
            emit("slogdet_sign", "-", [a], lambda x: la.slogdet(x)[0])
            emit("slogdet_log", "-", [a], lambda x: la.slogdet(x)[1])
            emit("inv", "-", [a], la.inv)
            emit("svdvals", "-", [a], lambda x: la.svd(x, compute_uv=False))
            if not (d == "int32" and a.size == 0):  # NumPy's pinv returns an empty int matrix as int
                emit("pinv", "-", [a], la.pinv)
            emit("matrix_rank", "-", [a], la.matrix_rank)
            for ordr in ("fro", "nuc", "1", "-1", "2", "-2", "inf", "-inf"):
                o = {"inf": np.inf, "-inf": -np.inf}.get(ordr, ordr if ordr in ("fro", "nuc") else None)
                o = int(ordr) if o is None else o
                if shape[-1] == 0 and ordr not in ("fro",):
                    continue  # NumPy's empty-matrix norms are version quirks
                emit("matrix_norm", ordr, [a], lambda x, o=o: la.norm(x, o, axis=(-2, -1)))
            s_ = spd(d, shape) if d != "int32" else well(d, shape)
            emit("cholesky", "-", [s_], la.cholesky)
            emit("eigvalsh", "-", [s_], la.eigvalsh)
            if len(shape) == 2:
                b = rng.standard_normal((shape[0],)).astype(d)
                emit("solve", "-", [a, b], la.solve)
                B = rng.standard_normal((shape[0], 2)).astype(d)
                emit("solve", "-", [a, B], la.solve)
                emit("lstsq", "-", [a, B], lambda x, y: la.lstsq(x, y, rcond=None)[0])
            else:
                B = rng.standard_normal(shape[:-1] + (2,)).astype(d)
                emit("solve", "-", [a, B], la.solve)
    # rectangular: svdvals, pinv, lstsq, rank, norms; square-only functions raise
    for d in ("float64", "float32"):
        for shape in ((5, 3), (3, 5), (2, 4, 3)):
            a = rng.standard_normal(shape).astype(d)
            emit("svdvals", "-", [a], lambda x: la.svd(x, compute_uv=False))
            emit("pinv", "-", [a], la.pinv)
            emit("matrix_rank", "-", [a], la.matrix_rank)
            emit("matrix_norm", "fro", [a], lambda x: la.norm(x, "fro", axis=(-2, -1)))
            emit("matrix_norm", "2", [a], lambda x: la.norm(x, 2, axis=(-2, -1)))
            emit("det", "-", [a], la.det)
            emit("inv", "-", [a], la.inv)
            emit("cholesky", "-", [a], la.cholesky)
            if len(shape) == 2:
                b = rng.standard_normal((shape[0], 2)).astype(d)
                emit("lstsq", "-", [a, b], lambda x, y: la.lstsq(x, y, rcond=None)[0])
    # singular, low rank, not positive definite, float16, 1-D
    for d in ("float64", "float32"):
        sing = np.array([[1, 2, 3], [2, 4, 6], [1, 0, 1]], dtype=d)
        emit("det", "-", [sing], la.det)
        emit("inv", "-", [sing], la.inv)
        emit("solve", "-", [sing, np.ones(3, dtype=d)], la.solve)
        emit("matrix_rank", "-", [sing], la.matrix_rank)
        emit("slogdet_sign", "-", [sing], lambda x: la.slogdet(x)[0])
        emit("slogdet_log", "-", [sing], lambda x: la.slogdet(x)[1])
        emit("cholesky", "-", [np.array([[1, 2], [2, 1]], dtype=d)], la.cholesky)
        emit("matrix_rank", "-", [np.zeros((3, 4), dtype=d)], la.matrix_rank)
        emit("solve", "-", [well(d, (3, 3)), np.ones(4, dtype=d)], la.solve)
    h = well("float16", (3, 3))
    for kind, fn in (("det", la.det), ("inv", la.inv), ("cholesky", la.cholesky), ("eigvalsh", la.eigvalsh),
                     ("svdvals", lambda x: la.svd(x, compute_uv=False))):
        emit(kind, "-", [h], fn)
    v = rng.standard_normal(5)
    emit("det", "-", [v], la.det)
    emit("matrix_rank", "-", [v], la.matrix_rank)
    emit("matrix_rank", "-", [np.zeros(4)], la.matrix_rank)


def gen_signal_and_norms(w, rng):
    """np.convolve / np.correlate (1-D, every mode, either operand the longer, mixed dtypes,
    complex-free) and np.linalg.norm's vector norms (ord None, 0, 1, 2, inf, -inf, 3, -2 over
    all axes, one axis, keepdims), as `linalg` records: small integer values, exact where the
    dtype allows."""
    emit = functools.partial(emit_operand_case, w, "linalg")

    for da, db in (("float64", "float64"), ("float32", "float32"), ("int32", "int32"), ("int64", "float32"),
                   ("int8", "int16"), ("bool", "bool"), ("float16", "float16")):
        for na, nb in ((7, 3), (3, 7), (5, 5), (1, 4), (6, 1), (0, 3), (3, 0)):
            a = rng.integers(-3, 4, na).astype(da) if da != "bool" else rng.integers(0, 2, na) == 1
            b = rng.integers(-3, 4, nb).astype(db) if db != "bool" else rng.integers(0, 2, nb) == 1
            for mode in ("full", "same", "valid"):
                emit("convolve", mode, [a, b], lambda x, y, m=mode: np.convolve(x, y, m))
                emit("correlate", mode, [a, b], lambda x, y, m=mode: np.correlate(x, y, m))
    for d in ("float64", "float32", "int32"):
        for shape in ((6,), (3, 4), (2, 3, 4)):
            x = rng.integers(-3, 4, shape).astype(d)
            for ordr in ("none", "0", "1", "2", "inf", "-inf", "3", "-2"):
                o = {"none": None, "inf": np.inf, "-inf": -np.inf}.get(ordr, None if ordr == "none" else float(ordr))
                axes = [None] if len(shape) == 1 else [-1, 0]
                for ax in axes:
                    for kd in (False, True):
                        if ax is None and len(shape) > 1:
                            continue
                        param = f"{ordr};{'none' if ax is None else ax};{int(kd)}"
                        emit("vector_norm", param, [x], lambda v, o=o, ax=ax, kd=kd: np.linalg.norm(v, o, ax, kd))


def scipy_signal():
    """scipy.signal, or None (with a line saying which cases are skipped) where SciPy is missing."""
    try:
        import scipy
        import scipy.signal
    except ImportError as e:
        print(f"gen_cases.py: scipy is not importable ({e}): the convolve2d/correlate2d oracle cases "
              "were skipped (pip install scipy)")
        return None
    return scipy.signal


# Non-contiguous operands of the convolve2d records: cufuse and NumPy take a view of the
# stored operand, which is made so that the view holds the case's values.
CONV_VIEWS = {"c": lambda x: x, "t": lambda x: x.T, "r": lambda x: x[::-1], "s": lambda x: x[:, ::2]}


def conv_stored(view, x):
    if view == "t":
        return x.T.copy()
    if view == "r":
        return x[::-1].copy()
    if view == "s":  # every other column; the ones between are other values
        base = np.empty((x.shape[0], 2 * x.shape[1]), dtype=x.dtype)
        base[:, ::2], base[:, 1::2] = x, x[::-1, ::-1]
        return base
    return x


def fill_token(v):
    """A fill value as a param token: i:/u: a Python int (u: past int64), f: a float, b: a
    bool, d:<dtype>:<value> a NumPy scalar (C++: a strong Scalar::typed)."""
    if isinstance(v, np.generic):
        return f"d:{dname(v.dtype)}:{v.item()!r}"
    if isinstance(v, bool):
        return f"b:{int(v)}"
    if isinstance(v, int):
        return f"{'u' if v > 2**63 - 1 else 'i'}:{v}"
    return f"f:{v!r}"


def gen_conv2d(w, rng, ss):
    """scipy.signal.convolve2d / correlate2d as `linalg` records, kinds convolve2d and
    correlate2d, param `<mode>;<boundary>;<fill token>;<views>`: the views one letter per
    operand of CONV_VIEWS (c as stored, t transposed, r rows reversed, s every other column).
    Every mode x boundary (the aliases and SciPy's undocumented 'pad' too) x fill values;
    kernels smaller and larger than the input in one or both dims, even and odd, 1xN, Nx1,
    1x1, empty; every dtype and mixed pairs (small integer values, exact; random floats);
    integer wrap; fill values SciPy cannot convert to the result dtype (a ValueError); wrong
    ndim, unknown modes and boundaries. Divergence 8 (tests/test_reference_oracle.cpp): SciPy
    has no bool, float16 or bfloat16 loop; those cases expect our semantics, computed by
    SciPy's int64 (bool: any nonzero) or float32 loop."""
    emit = functools.partial(emit_operand_case, w, "linalg")
    fns = {"convolve2d": ss.convolve2d, "correlate2d": ss.correlate2d}

    def scipy_call(kind, a, b, mode, boundary, fill):
        rt = np.promote_types(a.dtype, b.dtype) if a.ndim == b.ndim == 2 else None
        fn = fns[kind]
        if rt == np.bool_:  # divergence 8: any of a AND b
            return fn(a.astype(np.int64), b.astype(np.int64), mode, boundary, int(bool(fill))) != 0
        if rt in (np.float16, BF16):  # divergence 8: summed in float32
            f = float(np.asarray(fill, dtype=rt)) if boundary in ("fill", "pad") else fill
            return fn(a.astype(np.float32), b.astype(np.float32), mode, boundary, f).astype(rt)
        return fn(a, b, mode, boundary, fill)

    def case(kind, a, b, mode="full", boundary="fill", fill=0, views="cc"):
        # SciPy 1.17 dies of SIGFPE on a wrapped or mirrored empty in1 in 'full' mode with a
        # non-empty output; cufuse's answer there is checked in tests/test_library_signal.cpp.
        if (a.ndim == b.ndim == 2 and mode == "full" and boundary in ("wrap", "circular", "symm", "symmetric")
                and a.size == 0 and b.shape[0] > 0 and min(a.shape[i] + b.shape[i] - 1 for i in (0, 1)) > 0):
            return
        ins = [conv_stored(views[0], a), conv_stored(views[1], b)]
        emit(kind, f"{mode};{boundary};{fill_token(fill)};{views}", ins,
             lambda x, y: scipy_call(kind, CONV_VIEWS[views[0]](x), CONV_VIEWS[views[1]](y), mode, boundary, fill))

    def both(*args, **kw):
        for kind in fns:
            case(kind, *args, **kw)

    def ints(d, shape, lo=None, hi=None):
        if d == "bool":
            return rng.integers(0, 2, shape) == 1
        if lo is None:
            lo, hi = (0, 7) if d.startswith("uint") else (-3, 4)
        if d in INTS:
            return rng.integers(lo, hi, shape, dtype=NP[d])
        return rng.integers(lo, hi, shape).astype(NP[d])

    modes = ("full", "same", "valid")
    boundaries = ("fill", "pad", "wrap", "circular", "symm", "symmetric")
    shapes = [((5, 6), (3, 3)), ((5, 6), (2, 4)), ((4, 5), (3, 2)), ((6, 7), (1, 1)), ((1, 7), (1, 3)),
              ((7, 1), (3, 1)), ((3, 4), (5, 6)), ((3, 6), (5, 2)), ((2, 3), (7, 8)), ((4, 4), (4, 4)),
              ((1, 1), (3, 3)), ((5, 6), (1, 4)), ((2, 2), (5, 1)), ((3, 5), (3, 5))]
    # every mode x boundary x fill on each shape pair (float64, then int32 with float fills)
    for sa, sb in shapes:
        a, b = ints("float64", sa), ints("float64", sb)
        for mode in modes:
            for boundary in boundaries:
                fills = (0, 3, -2, 2.5) if boundary in ("fill", "pad") else (0, 7)
                for fill in fills:
                    both(a, b, mode, boundary, fill)
        a, b = ints("int32", sa), ints("int32", sb)
        for mode in modes:
            for boundary, fill in (("fill", 2.5), ("fill", -2.7), ("fill", -3), ("symm", 2.5), ("wrap", -1.5)):
                both(a, b, mode, boundary, fill)
    # every dtype, then mixed pairs (SciPy's result dtype is np.promote_types')
    pairs = [(d, d) for d in DTYPES] + [
        ("int8", "uint8"), ("bool", "int8"), ("int32", "float32"), ("int16", "float16"), ("float16", "float32"),
        ("uint64", "int64"), ("int64", "float32"), ("uint8", "float16"), ("bool", "float64"), ("uint8", "int64"),
        ("int8", "float16"), ("bool", "uint16"), ("uint32", "int8"), ("float32", "float64")]
    for da, db in pairs:
        for sa, sb in (((5, 6), (3, 2)), ((2, 3), (4, 4))):
            a, b = ints(da, sa), ints(db, sb)
            for mode in modes:
                for boundary, fill in (("fill", 1), ("fill", 2.5), ("wrap", 0), ("symm", 0)):
                    both(a, b, mode, boundary, fill)
    # integer sums wrap as SciPy's C loops do; a float fill of an integer result truncates
    for d, lo, hi in (("int8", -128, 128), ("uint8", 0, 256), ("int16", -2**15, 2**15), ("uint16", 0, 2**16),
                      ("int32", -2**31, 2**31), ("uint32", 0, 2**32), ("int64", -2**62, 2**62),
                      ("uint64", 0, 2**63)):
        a, b = ints(d, (6, 5), lo, hi), ints(d, (4, 3), lo, hi)
        for mode in modes:
            for boundary, fill in (("fill", 0), ("fill", 1), ("wrap", 0), ("symm", 0)):
                both(a, b, mode, boundary, fill)
    # fill values: SciPy converts a Python scalar as np.asarray(v, dtype) does and raises
    # ValueError where that fails; only the 'fill' boundary converts it (any mode, 'valid' too)
    int_fills = (-1, 127, -128, 255, 256, -129, 300, 2**31, -2**31 - 1, 2**63 - 1, 2**63, 2**64 - 1, True,
                 255.9, 256.0, -0.5, -0.9, -1.0, -128.9, -129.0, 1e300, 9.2e18, 2.0**63, 1.8e19, 2.0**64,
                 math.nan, math.inf, -math.inf)
    for d in INTS:
        a, b = ints(d, (4, 5)), ints(d, (2, 3))
        for fill in int_fills:
            both(a, b, "full", "fill", fill)
        for mode, boundary in (("valid", "fill"), ("same", "pad"), ("same", "wrap"), ("full", "symm")):
            for fill in (-1, 300, math.nan):
                both(a, b, mode, boundary, fill)
    # a NumPy scalar casts unsafely, as a 0-d array does (no error; float -> int out of range
    # is divergence 3 and left out)
    for d, fill in (("uint8", np.int16(-1)), ("int8", np.int64(300)), ("int32", np.float32(2.5)),
                    ("uint16", np.uint64(2**64 - 1)), ("float32", np.float64(1e300)), ("int16", np.bool_(True))):
        both(ints(d, (4, 5)), ints(d, (2, 3)), "full", "fill", fill)
    for d in ("float64", "float32", "float16", "bool"):
        a, b = ints(d, (4, 5)), ints(d, (2, 3))
        for fill in (-1, 2**64 - 1, 1e300, -1e-300, math.nan, math.inf, -math.inf, True, 0.1):
            both(a, b, "full", "fill", fill)
    # random floats (rounding: within the linalg tolerance), NaN and inf in the inputs
    for d in ("float64", "float32"):
        for sa, sb in (((9, 7), (3, 4)), ((4, 3), (6, 5))):
            a, b = rng.standard_normal(sa).astype(d), rng.standard_normal(sb).astype(d)
            for mode in modes:
                for boundary in ("fill", "wrap", "symm"):
                    both(a, b, mode, boundary, 0.75)
        a, b = ints(d, (4, 5)), ints(d, (2, 3))
        a[1, 2], b[0, 1] = math.nan, math.inf
        for mode in modes:
            for boundary in ("fill", "wrap", "symm"):
                both(a, b, mode, boundary, -math.inf)
    # empty inputs: the shape formulas, 'full' mode's negative extent, 'valid''s swap
    empties = ((0, 0), (0, 3), (3, 0), (1, 0), (0, 1), (2, 3), (1, 1), (3, 2))
    for sa in empties:
        for sb in empties:
            if 0 not in sa + sb:
                continue
            a, b = ints("float64", sa), ints("float64", sb)
            for mode in modes:
                for boundary in ("fill", "wrap", "symm"):
                    both(a, b, mode, boundary, 1.5)
    # non-contiguous operands: transposed, reversed, strided
    a, b = ints("float64", (5, 4)), ints("float64", (3, 2))
    for v1 in CONV_VIEWS:
        for v2 in CONV_VIEWS:
            for mode in modes:
                for boundary, fill in (("fill", 2), ("symm", 0), ("wrap", 0)):
                    both(a, b, mode, boundary, fill, v1 + v2)
    both(ints("int16", (6, 8)), ints("uint8", (3, 4)), "same", "fill", -1, "st")
    # errors: wrong ndim, unknown mode or boundary (SciPy's names are case-sensitive)
    m = ints("float64", (3, 3))
    for x, y in ((ints("float64", (3,)), m), (m, ints("float64", (3,))), (ints("float64", (2, 2, 2)), m),
                 (np.float64(2.0).reshape(()), m), (m, ints("float64", (1, 1, 1)))):
        both(x, y)
    for mode, boundary in (("bad", "fill"), ("FULL", "fill"), ("Same", "wrap"), ("full", "reflect"),
                           ("same", "FILL"), ("valid", "mirror"), ("full", "constant"), ("valid", "circ")):
        both(m, m, mode, boundary)
    both(ints("float64", (3, 1)), ints("float64", (2, 2)), "valid", "bad")  # the 'valid' shapes' error first


def gen_inplace(w, rng):
    """a op= b for every dtype pair and each in-place operator, and a op= a Python scalar
    (int, a large int, float, bool): NumPy's same_kind casting back into a, its values, or
    the error class it raises (UFuncTypeError is a TypeError; OverflowError)."""
    ops = {"add": "+=", "subtract": "-=", "multiply": "*=", "true_divide": "/=", "remainder": "%=",
           "bitwise_and": "&=", "bitwise_or": "|=", "bitwise_xor": "^=", "left_shift": "<<=", "right_shift": ">>="}
    ds = ["bool", "int8", "uint8", "int16", "uint16", "int32", "uint32", "int64", "uint64", "float16", "float32",
          "float64"]

    def vals(d, n=6):
        if d == "bool":
            return np.array([True, False, True, True, False, True])
        v = np.array([1, 2, 3, 5, 2, 1][:n])
        return v.astype(d)

    def run(op, a, b):
        x = a.copy()
        with np.errstate(all="ignore"), warnings.catch_warnings():
            warnings.simplefilter("ignore")
            getattr(np, op)(x, b, out=x, casting="same_kind")
        return x

    for op in ops:
        for ta in ds:
            rhs = [(tb, vals(tb)) for tb in ds] + [("int:1", 1), ("int:300", 300), ("float:1.5", 1.5), ("bool:1", True)]
            for tb, b in rhs:
                a = vals(ta)
                head = ["inplace", op, dname(a.dtype), tb, w.arr(a), w.arr(b) if isinstance(b, np.ndarray) else "-1 0"]
                try:
                    r = run(op, a, b)
                except OverflowError:
                    w.line(*head, "error", "OverflowError")
                    continue
                except TypeError:  # numpy's UFuncTypeError and casting errors
                    w.line(*head, "error", "TypeError")
                    continue
                w.line(*head, "ok", w.arr(r.astype(np.float64)))


def gen_weak_scalars(w, ops):
    """NEP 50 with Python scalars: every binary op of the table on an array of each dtype
    and a Python int (small, large, negative), float or bool, on either side: NumPy's
    result dtype and values, or the error class it raises."""
    ds = ["bool", "int8", "uint8", "int16", "uint16", "int32", "uint32", "int64", "uint64", "float16", "float32",
          "float64"]
    scalars = [("int", 3), ("int", 300), ("int", -2), ("int", 70000), ("int", 2 ** 40), ("float", 1.5),
               ("float", 1e10), ("bool", True)]
    for op, n in ops:
        if n != 2 or op in ("where",):
            continue
        f = getattr(np, op)
        for d in ds:
            a = (np.array([True, False, True]) if d == "bool" else np.array([1, 2, 5]).astype(d))
            for kind, v in scalars:
                for left in (False, True):
                    head = ["weak", op, d, kind, repr(v), int(left), w.arr(a)]
                    try:
                        with np.errstate(all="ignore"), warnings.catch_warnings():
                            warnings.simplefilter("ignore")
                            r = np.asarray(f(v, a) if left else f(a, v))
                    except OverflowError:
                        w.line(*head, "error", "OverflowError")
                        continue
                    except TypeError:
                        w.line(*head, "error", "TypeError")
                        continue
                    except ValueError:  # an integer to a negative power: divergence 1
                        continue
                    w.line(*head, "ok", dname(r.dtype), w.arr(r.astype(np.float64)))


# Parameters each composite row is called with besides NumPy's defaults ({}), as keywords.
COMPOSITE_CASES = {
    "sinc": [{}],
    "round": [{}, {"decimals": 2}, {"decimals": -1}, {"decimals": 11}],
    "nan_to_num": [{}, {"nan": -1.5, "posinf": 7, "neginf": -7.25}, {"nan": 1e300}, {"copy": False}],
    "isclose": [{}, {"rtol": 0.1, "atol": 0.5}, {"equal_nan": True}, {"rtol": 0.0, "atol": 0.0}],
}


def fmt_params(kw):
    return ";".join(f"{k}={v!r}" for k, v in kw.items()) or "-"


def gen_composites(w, comps, rng):
    """Every composite row of the op table (NumPy functions written in Python over ufuncs) on
    every dtype but bfloat16, with NumPy's defaults and other parameters:
      call <name> <k=v;k=v or -> <n> then per operand <dtype> <ndim> <shape..> <array>,
           then <skip array or -1 0>, then `ok <result dtype> <ndim> <shape..> <result>` or `error <cls>`.
    bfloat16 is left out (divergence 9): ml_dtypes' bfloat16 is not an np.inexact, so
    nan_to_num leaves it alone and sinc and isclose promote it otherwise."""
    ds = [d for d in DTYPES if d != "bfloat16"]
    for op, n in comps:
        f = getattr(np, op)
        for kw in COMPOSITE_CASES[op]:
            combos = [(d,) for d in ds] if n == 1 else [(a, b) for a in ds for b in ds]
            for dts in combos:
                if n == 1:
                    args = [pool(dts[0], 300, rng)]
                else:
                    ea, eb = edges(dts[0]), edges(dts[1])
                    if dts[0] != dts[1]:
                        ea, eb = ea[rng.permutation(ea.size)[:12]], eb[rng.permutation(eb.size)[:12]]
                    ga, gb = np.meshgrid(ea, eb, indexing="ij")
                    pa, pb = pool(dts[0], 60, rng)[:60], pool(dts[1], 60, rng)[:60]
                    # near pairs, where the tolerances decide
                    near = pa.astype(np.float64) * (1 + rng.choice([0, 1e-6, 1e-5, 1e-3, 0.2], pa.size))
                    with np.errstate(all="ignore"):
                        near = near.astype(NP[dts[1]]) if dts[1] != "bool" else pb
                    args = [np.concatenate([ga.ravel(), pa, pa]), np.concatenate([gb.ravel(), pb, near])]
                skip = np.zeros(args[0].shape, dtype=bool)
                if op == "round" and dts[0] in INTS and kw.get("decimals", 0) < 0:
                    # divergence 3: the float64 result cast back out of the integer's range
                    skip = cast_skip(np.round(args[0].astype(np.float64), kw["decimals"]), dts[0])
                head = ["call", op, fmt_params(kw), n]
                for d, a in zip(dts, args):
                    head += [d, fmt_shape(a.shape), w.arr(a)]
                head.append(w.arr(skip.astype(np.uint8)) if skip.any() else "-1 0")
                try:
                    with np.errstate(all="ignore"), warnings.catch_warnings():
                        warnings.simplefilter("ignore")
                        r = np.asarray(f(*args, **kw))
                except (TypeError, ValueError) as e:
                    w.line(*head, "error", error_class(e))
                    continue
                w.line(*head, "ok", dname(r.dtype), fmt_shape(r.shape), w.arr(r))


def gen_ulps64(w, rows, rng):
    """The ULPS(n) claim itself: each such kernel row on float32, float16 and bfloat16 inputs
    against NumPy's float64 value of the same inputs (the test rounds it to the dtype once):
      ulps64 <op> <n> <dtype> <count> then per operand <array>, then the float64 <array>."""
    for op, n, _ in rows:
        for d in ("float32", "float16", "bfloat16"):
            args = [pool(d, 2000, rng) for _ in range(n)]
            m = min(a.size for a in args)
            args = [a[:m] for a in args]
            if n == 2:
                args[1] = args[1][rng.permutation(m)]
            with np.errstate(all="ignore"):
                exp = np_call(op, [a.astype(np.float64) for a in args]).astype(np.float64)
            w.line("ulps64", op, n, d, m, *[w.arr(a) for a in args], w.arr(exp))


def gen_view_ops(w, rng):
    """Basic indexing (ints, negative and out-of-range ones, slices with any start, stop and
    step, None, ...) and the view functions (reshape with -1, transpose, swapaxes, moveaxis,
    squeeze, expand_dims, broadcast_to, ravel) on arange data: NumPy's result shape and
    values, or the error class (IndexError, ValueError, TypeError)."""
    shapes = [(5,), (3, 4), (2, 3, 4), (4, 1, 3), (0, 3), ()]

    def emit(kind, param, x, fn):
        head = ["viewop", kind, param, fmt_shape(x.shape), w.arr(x)]
        try:
            r = np.asarray(fn(x))
        except np.exceptions.AxisError:  # both a ValueError and an IndexError in NumPy
            w.line(*head, "error", "AxisError")
            return
        except IndexError:
            w.line(*head, "error", "IndexError")
            return
        except (ValueError, TypeError) as e:
            w.line(*head, "error", error_class(e))
            return
        w.line(*head, "ok", fmt_shape(r.shape), w.arr(np.ascontiguousarray(r).astype(np.int64)))

    def item(nd_left):
        c = rng.integers(0, 10)
        if c < 3:
            return ("i", int(rng.integers(-6, 7)))
        if c < 8:
            pick = lambda: None if rng.random() < 0.3 else int(rng.integers(-7, 8))
            step = [None, 1, 2, -1, -2, 3][rng.integers(0, 6)]
            return ("s", pick(), pick(), step)
        return ("n",) if c == 8 else ("e",)

    def spec_text(spec):
        out = []
        for it in spec:
            if it[0] == "i":
                out.append(f"i{it[1]}")
            elif it[0] == "s":
                f = lambda v: "_" if v is None else str(v)
                out.append(f"s{f(it[1])}:{f(it[2])}:{f(it[3])}")
            else:
                out.append(it[0])
        return "|".join(out) if out else "empty"

    def to_np(spec):
        return tuple(it[1] if it[0] == "i" else slice(it[1], it[2], it[3]) if it[0] == "s" else
                     (None if it[0] == "n" else Ellipsis) for it in spec)

    for shape in shapes:
        x = np.arange(int(np.prod(shape)), dtype=np.int32).reshape(shape)
        for _ in range(60):
            spec = [item(0) for _ in range(int(rng.integers(0, len(shape) + 2)))]
            if sum(1 for it in spec if it[0] == "e") > 1:
                continue  # NumPy: an index can only have a single ellipsis (also ours; not worth the cases)
            emit("index", spec_text(spec), x, lambda a, t=to_np(spec): a[t])
        n = int(np.prod(shape))
        for new in ([-1], [n], [1, -1], [-1, 1], [n, 1], [2, -1], [-1, -1], [n + 1], [3, 0], [0, -1]):
            emit("reshape", ",".join(map(str, new)), x, lambda a, new=new: a.reshape(new))
        nd = len(shape)
        for axes in ([], list(range(nd))[::-1], [1, 0, 2][:nd] if nd == 3 else None, [0, 0][:nd] if nd == 2 else None,
                     [-1, 0] if nd == 2 else None, [5] if nd == 1 else None):
            if axes is None:
                continue
            emit("transpose", ",".join(map(str, axes)) if axes else "none", x,
                 lambda a, axes=axes: a.transpose(axes if axes else None))
        for a1, a2 in ((0, -1), (0, 0), (0, 5), (-2, -1)):
            emit("swapaxes", f"{a1},{a2}", x, lambda a, a1=a1, a2=a2: np.swapaxes(a, a1, a2))
            emit("moveaxis", f"{a1},{a2}", x, lambda a, a1=a1, a2=a2: np.moveaxis(a, a1, a2))
        for ax in ("none", "1", "0", "-2", "0,1", "5"):
            axis = None if ax == "none" else tuple(int(v) for v in ax.split(","))
            emit("squeeze", ax, x, lambda a, axis=axis: np.squeeze(a, axis))
        for ax in (0, -1, nd, nd + 1, -nd - 1, -nd - 2):
            emit("expand_dims", str(ax), x, lambda a, ax=ax: np.expand_dims(a, ax))
        for target in ((2,) + shape, shape, (3,) + shape[1:] if nd else (3,), (7, 5), ()):
            emit("broadcast_to", ",".join(map(str, target)) if target else "scalar", x,
                 lambda a, t=target: np.broadcast_to(a, t))
        emit("ravel", "-", x, np.ravel)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--src", required=True, help="the cufuse source directory")
    ap.add_argument("--out", required=True, help="where to write manifest.txt and data.bin")
    args = ap.parse_args()
    os.makedirs(args.out, exist_ok=True)
    h = hashlib.sha256()
    h.update(open(__file__, "rb").read())
    h.update(open(os.path.join(args.src, ROWS), "rb").read())
    ss = scipy_signal()
    scipy_version = sys.modules["scipy"].__version__ if ss is not None else "none"
    h.update(f"{np.__version__} {ml_dtypes.__version__} {scipy_version}".encode())
    stamp = h.hexdigest()
    stamp_path = os.path.join(args.out, "stamp")
    if os.path.exists(stamp_path) and open(stamp_path).read().strip() == stamp and \
            os.path.exists(os.path.join(args.out, "manifest.txt")):
        print(f"gen_cases.py: oracle cases in {args.out} are up to date")
        return
    ops, composites, aliases = read_table(args.src)
    for op, n in ops:
        # real, imag, angle: NumPy functions (not ufuncs) over the real dtypes here (their complex
        # loops are gen_complex.py's)
        # fma: not NumPy's; np_fma computes it exactly (Fractions)
        if op not in ("astype", "where", "real", "imag", "angle", "fma") and not isinstance(getattr(np, op, None), np.ufunc):
            sys.exit(f"gen_cases.py: op table row '{op}' is not a NumPy ufunc; teach this script about it")
    for alias, target in aliases:  # an alias row claims NumPy's name is the very same ufunc
        if getattr(np, alias, None) is not getattr(np, target):
            sys.exit(f"gen_cases.py: op table alias '{alias}' is not NumPy's {target}")
    for op, n in composites:
        if op not in COMPOSITE_CASES:
            sys.exit(f"gen_cases.py: composite row '{op}' has no cases here; add its parameters to COMPOSITE_CASES")
    rng = np.random.default_rng(SEED)
    w = Writer(args.out)
    w.line("meta", np.__version__, ml_dtypes.__version__)
    gen_promote(w)
    gen_types(w, ops)
    gen_values(w, ops, rng)
    gen_casts(w, rng)
    gen_generators(w)
    gen_layouts(w, rng)
    gen_matmul_factors(w, np.random.default_rng(SEED + 1))
    gen_reductions(w, np.random.default_rng(SEED + 2))
    gen_contractions(w, np.random.default_rng(SEED + 3))
    gen_linalg(w, np.random.default_rng(SEED + 4))
    gen_signal_and_norms(w, np.random.default_rng(SEED + 5))
    if ss is not None:
        gen_conv2d(w, np.random.default_rng(SEED + 8), ss)
    gen_inplace(w, np.random.default_rng(SEED + 6))
    gen_weak_scalars(w, ops)
    gen_view_ops(w, np.random.default_rng(SEED + 7))
    gen_composites(w, composites, np.random.default_rng(SEED + 9))
    gen_ulps64(w, read_ulps_rows(args.src), np.random.default_rng(SEED + 10))
    w.data.close()
    os.replace(os.path.join(args.out, "data.bin.tmp"), os.path.join(args.out, "data.bin"))
    with open(os.path.join(args.out, "manifest.txt.tmp"), "w") as f:
        f.write("\n".join(w.lines) + "\n")
    os.replace(os.path.join(args.out, "manifest.txt.tmp"), os.path.join(args.out, "manifest.txt"))
    with open(stamp_path, "w") as f:
        f.write(stamp + "\n")
    print(f"gen_cases.py: wrote {len(w.lines)} cases, {w.pos >> 20} MiB of arrays, to {args.out}")


if __name__ == "__main__":
    main()
