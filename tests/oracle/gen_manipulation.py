#!/usr/bin/env python3
"""tests/oracle/gen_manipulation.py: NumPy 2's answers for issue 30's joining, splitting and
rearranging functions, which tests/test_manipulation_oracle.cpp checks cufuse (host reference
backend) against.

    python3 tests/oracle/gen_manipulation.py --out <dir>

Writes <out>/manipulation.txt, one case per line, fields separated by TABs:

  make  <func> <params k=v ...> <input arrays, space separated> <expected arrays | error Kind>

An array is one token `<dtype>:<shape, comma separated>:<raw little-endian bytes in hex>` (bool
1 byte, bfloat16 from ml_dtypes). A parameter value is an int, None, a string, or a list of ints
`L1,2,3` (`L` alone: empty), or a list of pairs `P1:2;3:4`. Functions with several results
(split and friends, broadcast_arrays, atleast_nd of several arrays) write them space separated.
"""
import argparse

from oracle_common import DTYPES, NP, np, tok, write_cases
from oracle_common import sample as sample_of

rng = np.random.default_rng(20261126)
lines = []


def val(v):
    if v is None:
        return "None"
    if isinstance(v, (list, tuple)):
        if v and isinstance(v[0], (list, tuple)):
            return "P" + ";".join(f"{a}:{b}" for a, b in v)
        return "L" + ",".join(str(int(x)) for x in v)
    return str(v)


def make(func, kw, inputs, fn):
    try:
        r = fn()
        res = " ".join(tok(x) for x in r) if isinstance(r, (list, tuple)) else tok(r)
    except (ValueError, TypeError, IndexError) as e:
        res = f"error {'IndexError' if isinstance(e, np.exceptions.AxisError) else type(e).__name__}"
    ins = " ".join(tok(x) for x in inputs) if inputs else "-"
    p = " ".join(f"{k}={val(v)}" for k, v in kw.items()) if kw else "-"
    lines.append("\t".join(["make", func, p, ins, res]))


def sample(dt, shape):
    return sample_of(rng, dt, shape)


def gen_joining():
    for dt in DTYPES:
        a, b, c = sample(dt, (2, 3)), sample(dt, (4, 3)), sample(dt, (2, 5))
        make("concatenate", dict(axis=0), [a, b], lambda: np.concatenate([a, b], 0))
        make("concatenate", dict(axis=-1), [a, c, a], lambda: np.concatenate([a, c, a], -1))
        make("concatenate", dict(axis=None), [a, c], lambda: np.concatenate([a, c], None))
        e = np.zeros((0, 3), NP[dt])
        make("concatenate", dict(axis=0), [e, a, e], lambda: np.concatenate([e, a, e]))
        make("stack", dict(axis=1), [a, a], lambda: np.stack([a, a], 1))
        make("stack", dict(axis=-1), [a, a, a], lambda: np.stack([a, a, a], -1))
        x, y = sample(dt, (3,)), sample(dt, (3,))
        for f in ["vstack", "hstack", "dstack", "column_stack"]:
            make(f, {}, [x, y], lambda: getattr(np, f)([x, y]))
            make(f, {}, [a, a], lambda: getattr(np, f)([a, a]))
    # promotion between every pair of dtypes
    for d1 in DTYPES:
        for d2 in DTYPES:
            if (d1 == "bfloat16") != (d2 == "bfloat16") and d1 != d2:
                continue  # NumPy has no promotion between bfloat16 and the others
            a, b = sample(d1, (2,)), sample(d2, (3,))
            make("concatenate", dict(axis=0), [a, b], lambda: np.concatenate([a, b]))
    # 3-D along each axis, 1-D, 0-d, many parts
    t = sample("float32", (2, 3, 4))
    for ax in [0, 1, 2, -2]:
        make("concatenate", dict(axis=ax), [t, t], lambda: np.concatenate([t, t], ax))
        make("stack", dict(axis=ax), [t, t], lambda: np.stack([t, t], ax))
    parts = [sample("int32", (1, 2)) for _ in range(20)]
    make("concatenate", dict(axis=0), parts, lambda: np.concatenate(parts))
    make("concatenate", dict(axis=None), [np.array(1.0), np.array(2.0)], lambda: np.concatenate([1.0, 2.0], None))
    # errors
    a, b = np.zeros((2, 3)), np.zeros((2, 4))
    make("concatenate", dict(axis=0), [a, b], lambda: np.concatenate([a, b]))
    make("concatenate", dict(axis=2), [a, a], lambda: np.concatenate([a, a], 2))
    make("concatenate", dict(axis=0), [a, np.zeros(3)], lambda: np.concatenate([a, np.zeros(3)]))
    make("concatenate", dict(axis=0), [np.array(1.0), np.array(2.0)], lambda: np.concatenate([np.array(1.0), np.array(2.0)]))
    make("stack", dict(axis=0), [a, b], lambda: np.stack([a, b]))
    make("stack", dict(axis=3), [a, a], lambda: np.stack([a, a], 3))


def gen_splitting():
    for dt in ["int8", "float32", "bool", "bfloat16"]:
        a = sample(dt, (6, 4))
        for sec in [1, 2, 3, 6]:
            make("split", dict(sections=sec, axis=0), [a], lambda: np.split(a, sec, 0))
        for sec in [3, 4, 5, 7]:
            make("array_split", dict(sections=sec, axis=-1), [a], lambda: np.array_split(a, sec, -1))
        for idx in [[2], [1, 3], [-2], [0, 10], [4, 2]]:
            make("split", dict(indices=idx, axis=0), [a], lambda: np.split(a, idx, 0))
            make("array_split", dict(indices=idx, axis=1), [a], lambda: np.array_split(a, idx, 1))
    a = sample("int64", (6, 4, 2))
    make("split", dict(sections=4, axis=0), [a], lambda: np.split(a, 4, 0))
    make("split", dict(sections=2, axis=3), [a], lambda: np.split(a, 2, 3))
    make("array_split", dict(sections=0, axis=0), [a], lambda: np.array_split(a, 0, 0))
    for f in ["hsplit", "vsplit", "dsplit"]:
        make(f, dict(sections=2), [a], lambda: getattr(np, f)(a, 2))
        make(f, dict(indices=[1]), [a], lambda: getattr(np, f)(a, [1]))
        make(f, dict(sections=3), [a], lambda: getattr(np, f)(a, 3))
    v = sample("float64", (6,))
    for f in ["hsplit", "vsplit", "dsplit"]:
        make(f, dict(sections=2), [v], lambda: getattr(np, f)(v, 2))


def gen_rearranging():
    for dt in DTYPES:
        a = sample(dt, (2, 3))
        for reps in [[2], [2, 2], [1, 3], [2, 1, 2], [0, 2], [1, 1]]:
            make("tile", dict(reps=reps), [a], lambda: np.tile(a, reps))
        for rep, ax in [(2, None), (3, 0), (2, 1), (2, -1), (0, 1)]:
            make("repeat", dict(repeats=rep, axis=ax), [a], lambda: np.repeat(a, rep, ax))
        make("repeat", dict(repeats=[1, 0, 2], axis=1), [a], lambda: np.repeat(a, [1, 0, 2], 1))
        make("repeat", dict(repeats=[2], axis=0), [a], lambda: np.repeat(a, [2], 0))
        for ax in [None, 0, 1, -1, [0, 1]]:
            make("flip", dict(axis=ax), [a], lambda: np.flip(a, ax))
        make("fliplr", {}, [a], lambda: np.fliplr(a))
        make("flipud", {}, [a], lambda: np.flipud(a))
        for sh, ax in [(1, None), (-4, None), (2, 1), (-1, 0), (7, -1), ([1, 2], [0, 1]), ([1, 1], [1, 1]), (3, [0, 1])]:
            make("roll", dict(shift=sh, axis=ax), [a], lambda: np.roll(a, sh, ax))
        for k in [-1, 0, 1, 2, 3, 5]:
            make("rot90", dict(k=k, axes=[0, 1]), [a], lambda: np.rot90(a, k, (0, 1)))
        make("rot90", dict(k=1, axes=[1, 0]), [a], lambda: np.rot90(a, 1, (1, 0)))
        for mode in ["constant", "edge", "reflect", "symmetric", "wrap"]:
            for pw in [[[1, 2], [0, 3]], [[2, 2]], [[5, 7]], [[0, 0], [2, 0]]]:
                make("pad", dict(pad_width=pw, mode=mode), [a], lambda: np.pad(a, pw, mode=mode))
        make("pad", dict(pad_width=[[1, 1]], mode="constant", constant_values=3), [a],
             lambda: np.pad(a, 1, constant_values=3))
    # 3-D, 1-D, empty, errors
    t = sample("float32", (2, 3, 4))
    make("rot90", dict(k=1, axes=[2, 0]), [t], lambda: np.rot90(t, 1, (2, 0)))
    make("rot90", dict(k=1, axes=[0, 0]), [t], lambda: np.rot90(t, 1, (0, 0)))
    make("rot90", dict(k=1, axes=[0, 3]), [t], lambda: np.rot90(t, 1, (0, 3)))
    make("roll", dict(shift=[1, -2, 3], axis=[0, 1, 2]), [t], lambda: np.roll(t, (1, -2, 3), (0, 1, 2)))
    make("roll", dict(shift=1, axis=3), [t], lambda: np.roll(t, 1, 3))
    make("tile", dict(reps=[2, 1, 1, 2]), [t], lambda: np.tile(t, (2, 1, 1, 2)))
    make("repeat", dict(repeats=2, axis=3), [t], lambda: np.repeat(t, 2, 3))
    make("flip", dict(axis=3), [t], lambda: np.flip(t, 3))
    for mode in ["constant", "edge", "reflect", "symmetric", "wrap"]:
        make("pad", dict(pad_width=[[1, 2], [3, 0], [2, 2]], mode=mode), [t],
             lambda: np.pad(t, ((1, 2), (3, 0), (2, 2)), mode=mode))
        v = sample("int16", (1,))
        make("pad", dict(pad_width=[[3, 4]], mode=mode), [v], lambda: np.pad(v, (3, 4), mode=mode))
        e = np.zeros((0, 2), np.float32)
        make("pad", dict(pad_width=[[1, 1]], mode=mode), [e], lambda: np.pad(e, 1, mode=mode))
        make("pad", dict(pad_width=[[0, 0], [1, 1]], mode=mode), [e], lambda: np.pad(e, ((0, 0), (1, 1)), mode=mode))
    a = sample("float64", (3, 3))
    make("pad", dict(pad_width=[[1, 1], [1, 1], [1, 1]], mode="constant"), [a], lambda: np.pad(a, ((1, 1),) * 3))
    make("pad", dict(pad_width=[[-1, 1]], mode="constant"), [a], lambda: np.pad(a, (-1, 1)))
    make("pad", dict(pad_width=[[1, 1]], mode="constant", constant_values=2.5), [a.astype(np.int32)],
         lambda: np.pad(a.astype(np.int32), 1, constant_values=2.5))
    make("tile", dict(reps=[-1]), [a], lambda: np.tile(a, -1))
    make("repeat", dict(repeats=-1, axis=0), [a], lambda: np.repeat(a, -1, 0))
    make("repeat", dict(repeats=[1, 2], axis=0), [a], lambda: np.repeat(a, [1, 2], 0))
    make("fliplr", {}, [sample("int32", (3,))], lambda: np.fliplr(np.zeros(3)))
    make("flipud", {}, [np.array(1.0)], lambda: np.flipud(np.array(1.0)))


def gen_shapes():
    for shapes in [[(3,), (2, 1)], [(2, 3), (3,), ()], [(4, 1, 2), (1, 5, 1)], [(2,), (3,)]]:
        xs = [sample("float32", s) for s in shapes]
        make("broadcast_arrays", {}, xs, lambda: np.broadcast_arrays(*xs))
    for s in [(), (3,), (2, 3), (2, 3, 4)]:
        x = sample("int32", s)
        for f in ["atleast_1d", "atleast_2d", "atleast_3d"]:
            make(f, {}, [x], lambda: getattr(np, f)(x))
    xs = [sample("int8", (2,)), sample("int8", ())]
    for f in ["atleast_1d", "atleast_2d", "atleast_3d"]:
        make(f, {}, xs, lambda: getattr(np, f)(*xs))


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--out", required=True)
    args = ap.parse_args()
    gen_joining()
    gen_splitting()
    gen_rearranging()
    gen_shapes()
    write_cases(args.out, "manipulation.txt", lines)


if __name__ == "__main__":
    main()
