"""tests/oracle/oracle_common.py: what issue 30's NumPy oracle writers share (gen_indexing.py,
gen_manipulation.py, gen_surface.py): the dtypes, the array token the C++ readers parse
(tests/oracle_text.hpp), random samples of a dtype, and writing a case file atomically.

An array is one token `<dtype>:<shape, comma separated>:<raw little-endian bytes in hex>`
(bool 1 byte, bfloat16 from ml_dtypes).
"""
import os
import sys
import warnings

try:
    import numpy as np
    import ml_dtypes
except ImportError as e:  # pragma: no cover
    sys.exit(f"{os.path.basename(sys.argv[0])}: needs numpy (>= 2) and ml_dtypes: {e}; pip install numpy ml_dtypes")

warnings.simplefilter("ignore", RuntimeWarning)
BF16 = np.dtype(ml_dtypes.bfloat16)
DTYPES = ["bool", "int8", "int16", "int32", "int64", "uint8", "uint16", "uint32", "uint64",
          "float16", "bfloat16", "float32", "float64"]
NP = {n: (BF16 if n == "bfloat16" else np.dtype(n)) for n in DTYPES}


def dname(dt):
    dt = np.dtype(dt)
    return "bfloat16" if dt == BF16 else dt.name


def tok(a):
    a = np.asarray(a).copy(order="C")  # (np.ascontiguousarray would make a 0-d array 1-d)
    return f"{dname(a.dtype)}:{','.join(str(d) for d in a.shape)}:{a.tobytes().hex()}"


def sample(rng, dt, shape, span=100):
    """Random values of dtype dt: bools, unsigned in [0, 2*span), signed in [-span, span),
    floats normal * 10."""
    n = int(np.prod(shape)) if shape else 1
    if dt == "bool":
        v = rng.integers(0, 2, n).astype(bool)
    elif dt.startswith("uint"):
        v = rng.integers(0, 2 * span, n).astype(NP[dt])
    elif dt.startswith("int"):
        v = rng.integers(-span, span, n).astype(NP[dt])
    else:
        v = (rng.standard_normal(n) * 10).astype(NP[dt])
    return v.reshape(shape)


def write_cases(out, filename, lines):
    """<out>/<filename>: a `meta` line (NumPy's and ml_dtypes' versions), then the cases;
    written to a temporary file and renamed, so a reader never sees half of it."""
    os.makedirs(out, exist_ok=True)
    path = os.path.join(out, filename)
    with open(path + ".tmp", "w") as f:
        f.write(f"meta\t{np.__version__}\t{ml_dtypes.__version__}\n")
        f.write("\n".join(lines) + "\n")
    os.replace(path + ".tmp", path)
    print(f"{os.path.basename(sys.argv[0])}: {len(lines)} cases in {path}")
