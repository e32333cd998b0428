#!/usr/bin/env python3
"""tests/oracle/gen_complex_linalg.py: NumPy 2's answers for issue 33's complex contractions and
linalg, which tests/test_complex_linalg_oracle.cpp checks cufuse (host reference backend) against.

    python3 tests/oracle/gen_complex_linalg.py --out <dir>

Writes <out>/complex_linalg.txt in tests/oracle/gen_complex.py's format, one case per line, TABs
between the fields:

    <func> <params k=v ... | -> <input arrays, space separated> <expected array | error Kind>

Functions: matmul, einsum (param sub), dot, vdot, inner, outer, tensordot (param axes) on
complex64/complex128 beside each other and beside real dtypes (NumPy's promotion); det,
slogdet_sign, slogdet_log, inv, solve, cholesky, eigvalsh (param uplo), svdvals, pinv, lstsq
(its x), matrix_rank, norm (param ord, matrix norms over the last two axes; `vec` the vector
2-norm) on well-conditioned random matrices, Hermitian positive definite ones where needed
(with an imaginary part on the diagonal, which LAPACK and cufuse ignore), singular and
non-square ones (LinAlgError is a ValueError). Factors with a phase freedom (qr, svd and eigh
vectors) are checked through invariants in tests/test_complex_linalg.cpp instead.
"""
import argparse
import functools

from oracle_common import np, tok, write_cases

rng = np.random.default_rng(20261133 + 33)
lines = []
CPLX = ["complex64", "complex128"]


def cplx(dt, shape, diag=0.0):
    a = rng.standard_normal(shape) + 1j * rng.standard_normal(shape)
    if diag and len(shape) >= 2:
        a = a + diag * np.eye(shape[-2], shape[-1])
    return a.astype(dt)


def hpd(dt, shape):
    g = rng.standard_normal(shape) + 1j * rng.standard_normal(shape)
    h = g @ np.conj(np.swapaxes(g, -1, -2)) + shape[-1] * np.eye(shape[-1])
    return h.astype(dt)


def case(func, params, inputs, fn):
    try:
        with np.errstate(all="ignore"):
            r = np.asarray(fn(*inputs))
        res = tok(r)
    except (TypeError, ValueError) as e:  # LinAlgError is a ValueError
        res = f"error {'TypeError' if isinstance(e, TypeError) else 'ValueError'}"
    p = " ".join(f"{k}={v}" for k, v in params.items()) or "-"
    lines.append("\t".join([func, p, " ".join(tok(x) for x in inputs), res]))


def gen_contractions():
    for dt in CPLX:
        a, b = cplx(dt, (3, 4)), cplx(dt, (4, 5))
        case("matmul", {}, [a, b], np.matmul)
        case("matmul", {}, [cplx(dt, (2, 3, 4)), cplx(dt, (2, 4, 2))], np.matmul)
        case("matmul", {}, [cplx(dt, (2, 1, 3, 4)), cplx(dt, (3, 4, 2))], np.matmul)
        case("matmul", {}, [cplx(dt, (4,)), cplx(dt, (4, 3))], np.matmul)
        case("matmul", {}, [cplx(dt, (3, 4)), cplx(dt, (4,))], np.matmul)
        case("matmul", {}, [cplx(dt, (4,)), cplx(dt, (4,))], np.matmul)
        case("matmul", {}, [cplx(dt, (0, 3)), cplx(dt, (3, 2))], np.matmul)
        case("matmul", {}, [cplx(dt, (2, 3)), cplx(dt, (4, 2))], np.matmul)  # mismatch: ValueError
        for sub, shapes in (("ij,jk->ik", [(3, 4), (4, 2)]), ("bij,bjk->bik", [(2, 3, 4), (2, 4, 5)]),
                            ("ij,ij->i", [(3, 4), (3, 4)]), ("ij,kj->ik", [(3, 4), (2, 4)]), ("ii->i", [(3, 3)]),
                            ("ij,jk,kl->il", [(2, 3), (3, 4), (4, 2)])):
            case("einsum", {"sub": sub}, [cplx(dt, s) for s in shapes], lambda *x, sub=sub: np.einsum(sub, *x))
        case("dot", {}, [cplx(dt, (2, 3, 4)), cplx(dt, (5, 4, 2))], np.dot)
        case("dot", {}, [cplx(dt, (3,)), cplx(dt, (3,))], np.dot)
        case("vdot", {}, [cplx(dt, (2, 3)), cplx(dt, (3, 2))], np.vdot)
        case("vdot", {}, [cplx(dt, (5,)), cplx(dt, (5,))], np.vdot)
        case("inner", {}, [cplx(dt, (2, 4)), cplx(dt, (3, 4))], np.inner)
        case("outer", {}, [cplx(dt, (3,)), cplx(dt, (2, 2))], np.outer)
        case("tensordot", {"axes": 2}, [cplx(dt, (2, 3, 4)), cplx(dt, (3, 4, 5))], lambda x, y: np.tensordot(x, y, 2))
    # mixed: complex with real and integer operands, both orders
    for da, db in (("float32", "complex64"), ("complex64", "float64"), ("int32", "complex64"),
                   ("complex128", "float32"), ("int64", "complex128"), ("complex64", "complex128")):
        def arr(d, s):
            return cplx(d, s) if d.startswith("complex") else (rng.standard_normal(s) * 3).astype(d)
        case("matmul", {}, [arr(da, (3, 4)), arr(db, (4, 2))], np.matmul)
        case("vdot", {}, [arr(da, (4,)), arr(db, (4,))], np.vdot)
        case("einsum", {"sub": "ij,jk->ik"}, [arr(da, (2, 3)), arr(db, (3, 2))],
             lambda x, y: np.einsum("ij,jk->ik", x, y))


def gen_linalg():
    la = np.linalg
    for dt in CPLX:
        for shape in ((4, 4), (2, 3, 3), (1, 1)):
            a = cplx(dt, shape, diag=shape[-1])
            case("det", {}, [a], la.det)
            case("slogdet_sign", {}, [a], lambda x: la.slogdet(x)[0])
            case("slogdet_log", {}, [a], lambda x: la.slogdet(x)[1])
            case("inv", {}, [a], la.inv)
            case("svdvals", {}, [a], lambda x: la.svd(x, compute_uv=False))
            case("pinv", {}, [a], la.pinv)
            case("matrix_rank", {}, [a], la.matrix_rank)
            for o in ("fro", "nuc", "1", "-1", "2", "-2", "inf", "-inf"):
                ordv = {"inf": np.inf, "-inf": -np.inf, "fro": "fro", "nuc": "nuc"}.get(o, None)
                ordv = int(o) if ordv is None else ordv
                case("norm", {"ord": o}, [a], lambda x, ordv=ordv: la.norm(x, ordv, axis=(-2, -1)))
            h = hpd(dt, shape)
            h_imag_diag = h + (1j * np.eye(shape[-1])).astype(dt)  # LAPACK reads only the real diagonal
            case("cholesky", {}, [h], la.cholesky)
            for uplo in ("L", "U"):
                case("eigvalsh", {"uplo": uplo}, [h_imag_diag], lambda x, uplo=uplo: la.eigvalsh(x, uplo))
            if len(shape) == 2:
                n = shape[0]
                case("solve", {}, [a, cplx(dt, (n,))], la.solve)
                case("solve", {}, [a, cplx(dt, (n, 2))], la.solve)
                case("lstsq", {}, [a, cplx(dt, (n, 2))], lambda x, y: la.lstsq(x, y, rcond=None)[0])
            else:
                case("solve", {}, [a, cplx(dt, shape[:-1] + (2,))], la.solve)
        for shape in ((5, 3), (3, 5), (2, 4, 3)):
            a = cplx(dt, shape)
            case("svdvals", {}, [a], lambda x: la.svd(x, compute_uv=False))
            case("pinv", {}, [a], la.pinv)
            case("matrix_rank", {}, [a], la.matrix_rank)
            case("norm", {"ord": "fro"}, [a], lambda x: la.norm(x, "fro", axis=(-2, -1)))
            case("norm", {"ord": "2"}, [a], lambda x: la.norm(x, 2, axis=(-2, -1)))
            case("det", {}, [a], la.det)  # not square: ValueError
            if len(shape) == 2:
                case("lstsq", {}, [a, cplx(dt, (shape[0], 2))], lambda x, y: la.lstsq(x, y, rcond=None)[0])
        case("norm", {"ord": "vec"}, [cplx(dt, (7,))], la.norm)
        # singular, low rank, not positive definite
        s = np.array([[1, 2j, 3], [2, 4j, 6], [1 + 1j, 0, 1]], dtype=dt)
        case("det", {}, [s], la.det)
        case("slogdet_sign", {}, [s], lambda x: la.slogdet(x)[0])
        case("slogdet_log", {}, [s], lambda x: la.slogdet(x)[1])
        case("inv", {}, [s], la.inv)
        case("matrix_rank", {}, [s], la.matrix_rank)
        case("cholesky", {}, [np.array([[1, 2j], [-2j, 1]], dtype=dt)], la.cholesky)
        low = (cplx(dt, (4, 2)) @ cplx(dt, (2, 5))).astype(dt)
        case("matrix_rank", {}, [low], la.matrix_rank)
    # mixed real/complex solve and a real matrix's complex right-hand side
    case("solve", {}, [(rng.standard_normal((3, 3)) + 3 * np.eye(3)).astype("float32"), cplx("complex64", (3, 2))],
         la.solve)
    case("solve", {}, [cplx("complex64", (3, 3), diag=3), rng.standard_normal((3,)).astype("float64")], la.solve)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--out", required=True)
    out = ap.parse_args().out
    gen_contractions()
    gen_linalg()
    write_cases(out, "complex_linalg.txt", lines)


if __name__ == "__main__":
    main()
