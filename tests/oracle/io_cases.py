#!/usr/bin/env python3
"""tests/oracle/io_cases.py: NumPy's side of the file-format oracle (tests/test_io_oracle.cpp).

    python3 tests/oracle/io_cases.py gen   --out <dir>   # NumPy writes, cufuse reads
    python3 tests/oracle/io_cases.py check --out <dir>   # cufuse wrote, NumPy reads

gen writes <dir>/numpy/<case>.npy (np.save, or np.lib.format.write_array for versions 2.0
and 3.0), <dir>/numpy/<case>.bin (the expected elements: C order, little-endian, raw) and
<dir>/numpy/stored.npz, compressed.npz (np.savez / np.savez_compressed of the 'all' cases),
and <dir>/manifest.txt, one record a line:
    npy <case> <dtype> <ndim> <shape..> <roundtrip 0/1>  (cufuse loads <case>.npy, compares
        with <case>.bin; with roundtrip 1 it also saves the array to cufuse/<case>.npy, which
        check compares with NumPy's file byte for byte)
    bad <case> <words the error must contain, '_' for spaces>
    npz <stored|compressed> <case..>
check loads every file cufuse wrote (cufuse/*.npy, cufuse/stored.npz, cufuse/compressed.npz)
with np.load and compares dtype, shape and bits with what NumPy made, and the .npy files
byte for byte with np.save's.
"""
import argparse
import os
import sys
import zipfile

try:
    import numpy as np
    import ml_dtypes
except ImportError as e:  # pragma: no cover
    sys.exit(f"io_cases.py: needs numpy and ml_dtypes: {e}")

BF16 = np.dtype(ml_dtypes.bfloat16)
DTYPES = ["bool", "int8", "int16", "int32", "int64", "uint8", "uint16", "uint32", "uint64",
          "float16", "bfloat16", "float32", "float64"]


def npd(name):
    return BF16 if name == "bfloat16" else np.dtype(name)


def sample(dt, shape):
    n = int(np.prod(shape)) if shape else 1
    a = (np.arange(n) % 7 - 3).astype(np.float64) * 1.25
    if npd(dt).kind in "iu" or dt == "bool":
        a = np.arange(n) % 7 - 3
    return a.astype(npd(dt)).reshape(shape)


def cases():
    """(case, array as written, roundtrip) for the .npy files."""
    out = []
    for dt in DTYPES:
        out.append((f"all_{dt}", sample(dt, (3, 4)), True))
    out.append(("scalar_f64", np.array(2.5), True))
    out.append(("empty_i32", np.zeros((0, 3), np.int32), True))
    out.append(("cube_u16", sample("uint16", (2, 3, 4)), True))
    out.append(("fortran_f32", np.asfortranarray(sample("float32", (4, 3))), True))
    out.append(("fortran_i64_3d", np.asfortranarray(sample("int64", (2, 3, 4))), True))
    out.append(("big_i4", sample("int32", (5,)).astype(">i4"), False))
    out.append(("big_f8", sample("float64", (2, 2)).astype(">f8"), False))
    out.append(("big_f2", np.asfortranarray(sample("float16", (2, 3)).astype(">f2")), False))
    out.append(("big_u8", sample("uint64", (3,)).astype(">u8"), False))
    return out


def write_bf16(path, a):
    """A .npy of bfloat16 with the descr 'bfloat16' (np.save would write the anonymous '<V2')."""
    d = {"descr": "bfloat16", "fortran_order": False, "shape": a.shape}
    header = "{" + "".join(f"'{k}': {d[k]!r}, " for k in sorted(d)) + "}"
    header += " " * (21 - len(repr(a.shape[0]))) if a.shape else ""
    with open(path, "wb") as f:
        hlen = len(header) + 1
        pad = 64 - (10 + hlen) % 64  # NumPy's _wrap_header for version 1.0
        f.write(b"\x93NUMPY\x01\x00" + (hlen + pad).to_bytes(2, "little") + header.encode() + b" " * pad + b"\n")
        f.write(np.ascontiguousarray(a).tobytes())


def gen(out):
    nd = os.path.join(out, "numpy")
    os.makedirs(nd, exist_ok=True)
    os.makedirs(os.path.join(out, "cufuse"), exist_ok=True)
    lines = []
    for name, a, rt in cases():
        path = os.path.join(nd, name + ".npy")
        if a.dtype == BF16:
            write_bf16(path, a)
        else:
            np.save(path, a)
        exp = np.ascontiguousarray(a).astype(a.dtype.newbyteorder("<") if a.dtype.byteorder == ">" else a.dtype)
        exp.tofile(os.path.join(nd, name + ".bin"))
        dt = "bfloat16" if a.dtype == BF16 else exp.dtype.name
        lines.append(f"npy {name} {dt} {a.ndim} {' '.join(map(str, a.shape))} {int(rt)}".replace("  ", " "))
    # Versions 2.0 and 3.0, written by NumPy's own writer.
    for v in (2, 3):
        name = f"version{v}_i16"
        a = sample("int16", (2, 5))
        with open(os.path.join(nd, name + ".npy"), "wb") as f:
            np.lib.format.write_array(f, a, version=(v, 0))
        a.tofile(os.path.join(nd, name + ".bin"))
        lines.append(f"npy {name} int16 2 2 5 0")
    # What cufuse refuses, with the words its error must say.
    np.save(os.path.join(nd, "bad_object.npy"), np.array([1, "a", None], dtype=object), allow_pickle=True)
    lines.append("bad bad_object object_arrays")
    np.save(os.path.join(nd, "bad_clongdouble.npy"), np.arange(3, dtype=np.clongdouble))
    lines.append("bad bad_clongdouble complex")
    np.save(os.path.join(nd, "bad_v2.npy"), sample("bfloat16", (3,)))  # NumPy writes '<V2'
    lines.append("bad bad_v2 '<V2' bfloat16")
    np.save(os.path.join(nd, "bad_structured.npy"), np.zeros(2, dtype=[("a", "<f4"), ("b", "<i2")]))
    lines.append("bad bad_structured structured")
    np.save(os.path.join(nd, "bad_unicode.npy"), np.array(["ab", "c"]))
    lines.append("bad bad_unicode string")
    # Archives of the 'all' cases (and a Fortran one).
    members = {name: a for name, a, _ in cases() if name.startswith(("all_", "fortran_f32", "scalar", "empty"))
               and a.dtype != BF16}
    np.savez(os.path.join(nd, "stored.npz"), **members)
    np.savez_compressed(os.path.join(nd, "compressed.npz"), **members)
    lines.append("npz stored " + " ".join(members))
    lines.append("npz compressed " + " ".join(members))
    with open(os.path.join(out, "manifest.txt"), "w") as f:
        f.write("\n".join(lines) + "\n")
    print(f"io_cases.py: {len(lines)} records in {out}")


def same(a, b):
    return a.dtype == b.dtype and a.shape == b.shape and np.ascontiguousarray(a).tobytes() == np.ascontiguousarray(b).tobytes()


def check(out):
    nd, cd = os.path.join(out, "numpy"), os.path.join(out, "cufuse")
    fails, n = [], 0
    for name, a, rt in cases():
        if not rt:
            continue
        mine = os.path.join(cd, name + ".npy")
        if not os.path.exists(mine):
            fails.append(f"{name}: cufuse wrote no {mine}")
            continue
        b = np.load(mine)
        n += 1
        if not same(a, b):
            fails.append(f"{name}: np.load of cufuse's file gives {b.dtype} {b.shape}, expected {a.dtype} {a.shape} "
                         f"(values equal: {np.array_equal(a, b)})")
        if a.flags.f_contiguous != b.flags.f_contiguous:
            fails.append(f"{name}: fortran order differs")
        if open(mine, "rb").read() != open(os.path.join(nd, name + ".npy"), "rb").read():
            fails.append(f"{name}: cufuse's .npy differs from np.save's bytes")
    for kind, method in (("stored", zipfile.ZIP_STORED), ("compressed", zipfile.ZIP_DEFLATED)):
        path = os.path.join(cd, kind + ".npz")
        if not os.path.exists(path):
            fails.append(f"{kind}.npz: cufuse wrote none")
            continue
        with zipfile.ZipFile(path) as z:
            bad = z.testzip()
            if bad:
                fails.append(f"{kind}.npz: zipfile finds {bad} corrupt")
            for info in z.infolist():
                if info.compress_type != method:
                    fails.append(f"{kind}.npz: {info.filename} has compression {info.compress_type}, expected {method}")
        ref = np.load(os.path.join(nd, kind + ".npz"))
        got = np.load(path)
        if list(got.keys()) != list(ref.keys()):
            fails.append(f"{kind}.npz: keys {list(got.keys())}, expected {list(ref.keys())}")
        for k in ref.keys():
            n += 1
            if k in got and not same(ref[k], got[k]):
                fails.append(f"{kind}.npz[{k}]: differs from NumPy's")
    for f in fails:
        print("FAIL", f)
    print(f"io_cases.py check: {n} arrays compared, {len(fails)} failures")
    return 1 if fails else 0


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("mode", choices=["gen", "check"])
    ap.add_argument("--out", required=True)
    args = ap.parse_args()
    if args.mode == "gen":
        gen(args.out)
        return 0
    return check(args.out)


if __name__ == "__main__":
    sys.exit(main())
