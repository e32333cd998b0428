#!/usr/bin/env python3
"""tests/oracle/gen_indexing.py: NumPy 2's answers for issue 30's advanced indexing, masks and
scatters, which tests/test_indexing_oracle.cpp checks cufuse (host reference backend) against.

    python3 tests/oracle/gen_indexing.py --out <dir>

Writes <out>/indexing.txt, one case per line, fields separated by TABs:

    <func> <params k=v ... | -> <input arrays, space separated> <expected arrays, space separated | error Kind>

An array is `<dtype>:<shape, comma separated>:<raw little-endian bytes in hex>` (bfloat16 from
ml_dtypes). Functions and their inputs:
    take (a, idx; axis=None|int, mode=raise|clip|wrap)       take_along_axis (a, idx; axis)
    index (x, arrays...; spec)         spec: items joined by ';': aK (the K-th index array),
                                       an int, ':', 'a:b', 'None', '...'
    mask (x, m)  nonzero (a)  argwhere (a)  flatnonzero (a)  extract (c, a)  compress (c, a; axis)
    put (a, idx, v; mode)  add_at / maximum_at / minimum_at (a, idx, v)   (the array after the call)
    setidx (x, idx, v)  iaddidx (x, idx, v)  setmask (x, m, v)  iaddmask (x, m, v)  (x after x[i] = v / += v)
"""
import argparse

from oracle_common import DTYPES, NP, np, tok, write_cases
from oracle_common import sample as sample_of

IDX_DTYPES = ["int8", "int16", "int32", "int64", "uint8", "uint16", "uint32", "uint64"]
rng = np.random.default_rng(20261126)
lines = []


def sample(dt, shape):
    return sample_of(rng, dt, shape, 50)


def indices(n, shape, dt="int64", neg=True):
    lo = -n if (neg and not dt.startswith("uint")) else 0
    return rng.integers(lo, max(n, 1), int(np.prod(shape)) if shape else 1).astype(dt).reshape(shape)


def case(func, kw, inputs, fn):
    try:
        r = fn()
        res = " ".join(tok(x) for x in r) if isinstance(r, (list, tuple)) else tok(r)
    except (ValueError, TypeError, IndexError) as e:
        res = f"error {type(e).__name__}"
    params = " ".join(f"{k}={v}" for k, v in kw.items()) if kw else "-"
    lines.append("\t".join([func, params, " ".join(tok(x) for x in inputs), res]))


def gen_take():
    for dt in DTYPES:
        a = sample(dt, (4, 5))
        for idt in IDX_DTYPES:
            i = indices(5, (3,), idt)
            case("take", dict(axis=1), [a, i], lambda: np.take(a, i, axis=1))
        for axis in [None, 0, -1]:
            n = a.size if axis is None else a.shape[axis]
            for ishape in [(), (4,), (2, 3), (0,)]:
                i = indices(n, ishape)
                case("take", dict(axis="None" if axis is None else axis), [a, i],
                     lambda: np.take(a, i, axis=axis))
        case("take", dict(axis=0), [a, np.array([4])], lambda: np.take(a, np.array([4]), axis=0))
        case("take", dict(axis=0), [a, np.array([-5])], lambda: np.take(a, np.array([-5]), axis=0))
        case("take", dict(axis=2), [a, np.array([0])], lambda: np.take(a, np.array([0]), axis=2))
    for dt in DTYPES:  # clip and wrap: indices far outside, negative, every index dtype
        a = sample(dt, (4, 5))
        for mode in ["clip", "wrap"]:
            for idt in IDX_DTYPES:
                i = (rng.integers(-30 if not idt.startswith("uint") else 0, 30, 6)).astype(idt)
                case("take", dict(axis=1, mode=mode), [a, i], lambda: np.take(a, i, axis=1, mode=mode))
            i = rng.integers(-60, 60, (2, 3))
            case("take", dict(axis="None", mode=mode), [a, i], lambda: np.take(a, i, mode=mode))
            case("take", dict(axis=-2, mode=mode), [a, np.zeros(0, np.int64)],
                 lambda: np.take(a, np.zeros(0, np.int64), axis=-2, mode=mode))
    for mode in ["clip", "wrap", "raise", "bogus"]:
        e = np.zeros((0, 3), np.float32)
        case("take", dict(axis=0, mode=mode), [e, np.array([1])], lambda: np.take(e, np.array([1]), axis=0, mode=mode))
        case("take", dict(axis=0, mode=mode), [e, np.zeros(0, np.int64)],
             lambda: np.take(e, np.zeros(0, np.int64), axis=0, mode=mode))
    e = np.zeros((0, 3), np.float32)
    case("take", dict(axis=1), [e, np.array([1, 2])], lambda: np.take(e, np.array([1, 2]), axis=1))
    case("take", dict(axis=0), [e, np.array([0])], lambda: np.take(e, np.array([0]), axis=0))
    for dt in ["float32", "int16", "bool", "bfloat16"]:
        a = sample(dt, (3, 4, 2))
        for axis in [0, 1, 2, -2]:
            shape = list(a.shape)
            shape[axis] = 3
            i = indices(a.shape[axis], tuple(shape))
            case("take_along_axis", dict(axis=axis), [a, i], lambda: np.take_along_axis(a, i, axis))
        i = indices(4, (1, 2, 1))
        case("take_along_axis", dict(axis=1), [a, i], lambda: np.take_along_axis(a, i, 1))
        case("take_along_axis", dict(axis=1), [a, np.array([[[5]]])], lambda: np.take_along_axis(a, np.array([[[5]]]), 1))


def spec_index(spec, arrays):
    out = []
    for item in spec.split(";"):
        if item.startswith("a"):
            out.append(arrays[int(item[1:])])
        elif item == ":":
            out.append(slice(None))
        elif item == "None":
            out.append(None)
        elif item == "...":
            out.append(Ellipsis)
        elif ":" in item:
            p, q = item.split(":")
            out.append(slice(int(p) if p else None, int(q) if q else None))
        else:
            out.append(int(item))
    return tuple(out)


def gen_index():
    x = sample("float32", (3, 4, 5))
    specs = [
        ("a0", [indices(3, (4,))]), ("a0", [indices(3, (2, 2))]), (":;a0", [indices(4, (3,))]),
        (":;:;a0", [indices(5, (2,))]), ("a0;a1", [indices(3, (2,)), indices(4, (2,))]),
        ("a0;:;a1", [indices(3, (2, 1)), indices(5, (3,))]), ("1;:;a0", [indices(5, (3,))]),
        (":;a0;a1", [indices(4, (1, 3)), indices(5, (2, 1))]), ("...;a0", [indices(5, (2,))]),
        ("a0;...", [indices(3, (2,))]), ("None;a0;1:3", [indices(3, (2,))]), ("1:;a0", [indices(4, (2,))]), ("a0;2;a1", [indices(3, (2,)), indices(5, (2,))]),
        ("a0", [np.array([3])]), (":;a0", [np.array([-5])]), ("a0;a1", [indices(3, (2,)), indices(4, (3,))]),
        ("a0", [np.zeros(0, np.int64)]), ("-1;a0;-2", [indices(4, (3,))]),
    ]
    for spec, arrays in specs:
        case("index", dict(spec=spec), [x] + arrays, lambda: x[spec_index(spec, arrays)])
    for dt in DTYPES:
        y = sample(dt, (4, 3))
        i = indices(4, (5,))
        case("index", dict(spec="a0"), [y, i], lambda: y[i])
        m = sample("bool", (4, 3))
        case("mask", {}, [y, m], lambda: y[m])
        r = sample("bool", (4,))
        case("mask", {}, [y, r], lambda: y[r])
    y = sample("int32", (4, 3))
    case("mask", {}, [y, np.ones((3,), bool)], lambda: y[np.ones((3,), bool)])
    case("mask", {}, [y, np.zeros((4, 3), bool)], lambda: y[np.zeros((4, 3), bool)])
    case("mask", {}, [np.zeros((0, 2)), np.zeros((0, 2), bool)], lambda: np.zeros((0, 2))[np.zeros((0, 2), bool)])


def gen_select():
    for dt in DTYPES:
        for shape in [(6,), (3, 4), (2, 3, 2), (0,), (0, 3)]:
            a = sample(dt, shape)
            if a.size:
                a.flat[0] = 0
            case("nonzero", {}, [a], lambda: np.nonzero(a))
            case("argwhere", {}, [a], lambda: np.argwhere(a))
            case("flatnonzero", {}, [a], lambda: np.flatnonzero(a))
    case("nonzero", {}, [np.array(1.0)], lambda: np.nonzero(np.array(1.0)))
    case("argwhere", {}, [np.array(1.0)], lambda: np.argwhere(np.array(1.0)))
    case("argwhere", {}, [np.array(0)], lambda: np.argwhere(np.array(0)))
    for dt in DTYPES:
        a = sample(dt, (3, 4))
        c = sample("bool", (3, 4))
        case("extract", {}, [c, a], lambda: np.extract(c, a))
        c2 = sample("int32", (5,))
        case("extract", {}, [c2, a], lambda: np.extract(c2, a))
        for axis in [None, 0, 1, -1]:
            n = a.size if axis is None else a.shape[axis]
            c3 = sample("bool", (max(n - 1, 1),))
            case("compress", dict(axis="None" if axis is None else axis), [c3, a],
                 lambda: np.compress(c3, a, axis=axis))
    a = sample("float64", (3, 4))
    case("extract", {}, [np.ones(13, bool), a], lambda: np.extract(np.ones(13, bool), a))
    case("compress", dict(axis=0), [np.ones(4, bool), a], lambda: np.compress(np.ones(4, bool), a, axis=0))
    case("compress", dict(axis=0), [np.array([True, False, False, False]), a],
         lambda: np.compress(np.array([True, False, False, False]), a, axis=0))


def after(fn, a):
    def run():
        b = a.copy()
        fn(b)
        return b
    return run


def gen_scatter():
    for dt in DTYPES:
        a = sample(dt, (3, 4))
        i = indices(12, (5,))
        v = sample(dt, (5,))
        case("put", {}, [a, i, v], after(lambda b: np.put(b, i, v), a))
        v2 = sample(dt, (2,))
        case("put", {}, [a, i, v2], after(lambda b: np.put(b, i, v2), a))
        case("put", {}, [a, np.array([12]), v2], after(lambda b: np.put(b, np.array([12]), v2), a))
        for mode in ["clip", "wrap"]:
            far = rng.integers(-40, 40, 5)
            case("put", dict(mode=mode), [a, far, v], after(lambda b: np.put(b, far, v, mode=mode), a))
        j = rng.integers(-3, 3, 7)  # duplicates
        for name, uf in [("add_at", np.add), ("maximum_at", np.maximum), ("minimum_at", np.minimum)]:
            w = sample(dt, (7, 4))
            case(name, {}, [a, j, w], after(lambda b: uf.at(b, j, w), a))
            r = sample(dt, (4,))
            case(name, {}, [a, j, r], after(lambda b: uf.at(b, j, r), a))
        case("add_at", {}, [a, np.array([3]), sample(dt, (4,))], after(lambda b: np.add.at(b, np.array([3]), 1), a))
        k = np.array([2, 0, -1])  # no duplicates: assignment is well defined
        vv = sample(dt, (3, 4))
        case("setidx", {}, [a, k, vv], after(lambda b: b.__setitem__(k, vv), a))
        row = sample(dt, (4,))
        case("setidx", {}, [a, k, row], after(lambda b: b.__setitem__(k, row), a))
        m = sample("bool", (3, 4))
        s = sample(dt, ())
        case("setmask", {}, [a, m, s], after(lambda b: b.__setitem__(m, s), a))
        mr = np.array([True, False, True])
        case("setmask", {}, [a, mr, row], after(lambda b: b.__setitem__(mr, row), a))
        if dt != "bool":
            case("iaddmask", {}, [a, m, s], after(lambda b: b.__setitem__(m, b[m] + s), a))
            case("iaddidx", {}, [a, k, row], after(lambda b: b.__setitem__(k, b[k] + row), a))
    z = np.zeros(0, np.float32)
    for mode in ["clip", "wrap", "bogus"]:
        case("put", dict(mode=mode), [z, np.array([1]), np.array([2.0], np.float32)],
             after(lambda b: np.put(b, np.array([1]), np.array([2.0], np.float32), mode=mode), z))
    f = np.zeros(4, np.float64)
    case("add_at", {}, [f, np.array([0, 0]), np.array([1.5, 2.0])], after(lambda b: np.add.at(b, [0, 0], [1.5, 2.0]), f))
    n = np.zeros(4, np.int64)
    case("add_at", {}, [n, np.array([0]), np.array([1.5])], after(lambda b: np.add.at(b, [0], np.array([1.5])), n))
    case("setidx", {}, [n, np.array([4]), np.array(1)], after(lambda b: b.__setitem__(np.array([4]), 1), n))
    case("setmask", {}, [n, np.ones(5, bool), np.array(1)], after(lambda b: b.__setitem__(np.ones(5, bool), 1), n))


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--out", required=True)
    args = ap.parse_args()
    gen_take()
    gen_index()
    gen_select()
    gen_scatter()
    write_cases(args.out, "indexing.txt", lines)


if __name__ == "__main__":
    main()
