#!/usr/bin/env python3
"""tests/oracle/gen_fft.py: numpy.fft's answers, which tests/test_fft_oracle.cpp checks
cufuse::fft (host reference backend, FFTW) against.

    python3 tests/oracle/gen_fft.py --out <dir>

Writes <out>/fft.txt, one case per line, fields separated by TABs:

    <func> <params k=v ... | -> <input array | -> <expected array | error Kind>

An array is `<dtype>:<shape, comma separated>:<raw little-endian bytes in hex>` (oracle_common.tok).
Params: n=<int|None> axis=<int> norm=<backward|ortho|forward> for the 1-D transforms;
s=<i,j,..|None> axes=<i,j,..|None> norm=... for the N-D ones (fft2 & co with axes given);
n, d (and dtype) for fftfreq/rfftfreq (no input); axes for fftshift/ifftshift.
Inputs: float16/32/64, complex64/128, int32 and bool, 1-D to 3-D, odd and even lengths, and
NumPy's errors (bad n, norm, axis, s/axes lengths).
"""
import argparse

from oracle_common import np, tok, write_cases

rng = np.random.default_rng(20261134)
lines = []


def case(func, params, a, fn):
    try:
        r = fn()
        res = tok(r)
    except (ValueError, TypeError, IndexError) as e:
        res = f"error {type(e).__name__}"
    p = " ".join(f"{k}={v}" for k, v in params.items()) or "-"
    lines.append("\t".join([func, p, tok(a) if a is not None else "-", res]))


def sample(dt, shape):
    n = int(np.prod(shape))
    if dt in ("complex64", "complex128"):
        v = rng.standard_normal(n) + 1j * rng.standard_normal(n)
    elif dt == "bool":
        v = rng.integers(0, 2, n).astype(bool)
    elif dt == "int32":
        v = rng.integers(-10, 10, n)
    else:
        v = rng.standard_normal(n)
    return np.asarray(v).astype(dt).reshape(shape)


def fmt(v):
    return "None" if v is None else ",".join(str(x) for x in v) if isinstance(v, (list, tuple)) else str(v)


def gen_1d():
    for dt in ["float32", "float64", "complex64", "complex128", "int32", "bool", "float16"]:
        for shape in [(1,), (8,), (9,), (3, 10), (2, 3, 7)]:
            a = sample(dt, shape)
            for f in ["fft", "ifft", "rfft", "irfft", "hfft", "ihfft"]:
                if f in ("rfft", "ihfft") and dt.startswith("complex"):
                    continue  # NumPy discards the imaginary part (with a warning); cufuse refuses
                for n in [None, 5, 12]:
                    for axis in sorted({-1, 0}):
                        for norm in ["backward", "ortho", "forward"]:
                            if n is not None and norm != "backward":
                                continue
                            case(f, {"n": fmt(n), "axis": axis, "norm": norm}, a,
                                 lambda: getattr(np.fft, f)(a, n=n, axis=axis, norm=norm))
    a = sample("complex128", (4,))
    for f in ["fft", "irfft"]:
        case(f, {"n": 0, "axis": -1, "norm": "backward"}, a, lambda: getattr(np.fft, f)(a, n=0))
        case(f, {"n": "None", "axis": 1, "norm": "backward"}, a, lambda: getattr(np.fft, f)(a, axis=1))
        case(f, {"n": "None", "axis": -1, "norm": "sideways"}, a, lambda: getattr(np.fft, f)(a, norm="sideways"))
    one = sample("complex64", (1,))
    case("irfft", {"n": "None", "axis": -1, "norm": "backward"}, one, lambda: np.fft.irfft(one))


def gen_nd():
    for dt in ["float32", "float64", "complex64", "complex128"]:
        for shape in [(4, 6), (3, 5, 8), (2, 1, 9)]:
            a = sample(dt, shape)
            for f in ["fftn", "ifftn", "rfftn", "irfftn", "fft2", "ifft2", "rfft2", "irfft2"]:
                if f.startswith("rfft") and dt.startswith("complex"):
                    continue
                for s, axes in [(None, None), (None, (0, -1)), ((3, 4), None), ((5, 2), (1, 0)), (None, (-1,))]:
                    if f.endswith("2") and (axes is None or len(axes) != 2):
                        if axes is None and s is None:
                            axes2 = (-2, -1)
                        else:
                            continue
                    else:
                        axes2 = axes
                    for norm in ["backward", "ortho"]:
                        kw = {"s": s, "axes": axes2, "norm": norm}
                        case(f, {"s": fmt(s), "axes": fmt(axes2), "norm": norm}, a,
                             lambda: getattr(np.fft, f)(a, **kw))
    a = sample("complex128", (4, 4))
    case("fftn", {"s": "4", "axes": "0,1", "norm": "backward"}, a, lambda: np.fft.fftn(a, s=(4,), axes=(0, 1)))
    case("fftn", {"s": "None", "axes": "0,1,2", "norm": "backward"}, a, lambda: np.fft.fftn(a, axes=(0, 1, 2)))


def gen_helpers():
    for n in [1, 2, 7, 8, 101]:
        for d in [1.0, 0.5, 3.0]:
            case("fftfreq", {"n": n, "d": d}, None, lambda: np.fft.fftfreq(n, d))
            case("rfftfreq", {"n": n, "d": d}, None, lambda: np.fft.rfftfreq(n, d))
    for shape in [(7,), (8,), (3, 4), (2, 5, 3)]:
        a = np.arange(int(np.prod(shape))).reshape(shape)
        for axes in [None, (0,), (-1,), (0, -1)]:
            if axes is not None and max(abs(x) for x in axes) >= len(shape) and axes != (-1,):
                continue
            for f in ["fftshift", "ifftshift"]:
                case(f, {"axes": fmt(axes)}, a, lambda: getattr(np.fft, f)(a, axes=axes))


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--out", required=True)
    out = ap.parse_args().out
    gen_1d()
    gen_nd()
    gen_helpers()
    write_cases(out, "fft.txt", lines)


if __name__ == "__main__":
    main()
