#!/usr/bin/env python3
"""scripts/dlpack_check.py: cufuse <-> NumPy / PyTorch / CuPy / JAX through DLPack capsules,
with no pybind11: the C-ABI library libcufuse_dlpack_bridge.so (tests/dlpack_bridge/bridge.cpp)
is loaded with ctypes, and the capsules are made and opened with Python's C API.

    python3 scripts/dlpack_check.py --lib build/libcufuse_dlpack_bridge.so [--frameworks numpy,torch,cupy,jax]

For each framework that is installed (NumPy with host tensors, the others with CUDA tensors):
  cufuse -> framework  fw.from_dlpack(capsule of a cufuse array): values, and zero copy (the
                       framework's pointer is cufuse's);
  framework -> cufuse  the framework's capsule handed to cufuse, which sums it and adds 1 in
                       place: the sum matches, and the framework sees the +1 (zero copy; JAX's
                       arrays are immutable: no write there);
  .npy                 (NumPy) cufuse saves an array, np.load reads it.
Prints one line per check; exits 1 if any failed, 0 otherwise (a framework that is not installed
is reported as skipped).
"""
import argparse
import ctypes
import os
import sys
import tempfile


class DLDevice(ctypes.Structure):
    _fields_ = [("device_type", ctypes.c_int32), ("device_id", ctypes.c_int32)]


class DLDataType(ctypes.Structure):
    _fields_ = [("code", ctypes.c_uint8), ("bits", ctypes.c_uint8), ("lanes", ctypes.c_uint16)]


class DLTensor(ctypes.Structure):
    _fields_ = [("data", ctypes.c_void_p), ("device", DLDevice), ("ndim", ctypes.c_int), ("dtype", DLDataType),
                ("shape", ctypes.POINTER(ctypes.c_int64)), ("strides", ctypes.POINTER(ctypes.c_int64)),
                ("byte_offset", ctypes.c_uint64)]


class DLManagedTensor(ctypes.Structure):
    _fields_ = [("dl_tensor", DLTensor), ("manager_ctx", ctypes.c_void_p), ("deleter", ctypes.c_void_p)]


api = ctypes.pythonapi
api.PyCapsule_New.restype = ctypes.py_object
api.PyCapsule_New.argtypes = [ctypes.c_void_p, ctypes.c_char_p, ctypes.c_void_p]
api.PyCapsule_GetPointer.restype = ctypes.c_void_p
api.PyCapsule_GetPointer.argtypes = [ctypes.py_object, ctypes.c_char_p]
api.PyCapsule_SetName.restype = ctypes.c_int
api.PyCapsule_SetName.argtypes = [ctypes.py_object, ctypes.c_char_p]
api.PyCapsule_GetName.restype = ctypes.c_char_p
api.PyCapsule_GetName.argtypes = [ctypes.py_object]


class Bridge:
    def __init__(self, path):
        self.lib = ctypes.CDLL(path)
        self.lib.cufuse_bridge_last_error.restype = ctypes.c_char_p
        self.lib.cufuse_bridge_make.argtypes = [ctypes.c_char_p, ctypes.c_int64, ctypes.c_int64, ctypes.c_int,
                                                ctypes.POINTER(ctypes.c_void_p)]
        self.lib.cufuse_bridge_consume.argtypes = [ctypes.c_void_p, ctypes.c_int, ctypes.c_double,
                                                   ctypes.POINTER(ctypes.c_double)]
        self.lib.cufuse_bridge_save.argtypes = [ctypes.c_char_p, ctypes.c_char_p, ctypes.c_int64, ctypes.c_int64]

    def _ok(self, rc):
        if rc != 0:
            raise RuntimeError("cufuse: " + self.lib.cufuse_bridge_last_error().decode())

    def make(self, dtype, rows, cols, host):
        p = ctypes.c_void_p()
        self._ok(self.lib.cufuse_bridge_make(dtype.encode(), rows, cols, int(host), ctypes.byref(p)))
        return p.value

    def consume(self, managed, host, add):
        s = ctypes.c_double()
        self._ok(self.lib.cufuse_bridge_consume(managed, int(host), add, ctypes.byref(s)))
        return s.value

    def save(self, path, dtype, rows, cols):
        self._ok(self.lib.cufuse_bridge_save(path.encode(), dtype.encode(), rows, cols))


class Exported:
    """A cufuse tensor as a DLPack producer object (__dlpack__ / __dlpack_device__)."""

    def __init__(self, managed):
        self.managed = managed
        t = DLManagedTensor.from_address(managed).dl_tensor
        self.device = (t.device.device_type, t.device.device_id)
        self.data = t.data

    def __dlpack__(self, *args, **kwargs):
        # No capsule destructor: every consumer here takes the tensor (and calls its deleter).
        return api.PyCapsule_New(self.managed, b"dltensor", None)

    def __dlpack_device__(self):
        return self.device


def take_capsule(cap):
    """The DLManagedTensor* of a consumer-side capsule, marked used (the protocol's rename)."""
    name = api.PyCapsule_GetName(cap)
    if name != b"dltensor":
        raise RuntimeError(f"capsule named {name!r}: this check reads unversioned 'dltensor' capsules")
    p = api.PyCapsule_GetPointer(cap, b"dltensor")
    api.PyCapsule_SetName(cap, b"used_dltensor")
    return p


def expected(np, rows, cols):
    return np.arange(rows * cols, dtype=np.float64).reshape(rows, cols) * 0.5 - 3


def run(fw, bridge, results):
    import numpy as np
    host = fw == "numpy"

    def rec(what, ok, detail=""):
        results.append((f"{fw}: {what}", ok, detail))

    if fw == "numpy":
        xp, to_np, sync = np, (lambda a: a), (lambda: None)
        ptr_of = lambda a: a.__array_interface__["data"][0]
        from_dlpack = np.from_dlpack
        capsule_of = lambda a: a.__dlpack__()
    elif fw == "torch":
        import torch
        if not torch.cuda.is_available():
            rec("CUDA", None, "torch.cuda is not available")
            return
        xp = None
        to_np = lambda a: a.cpu().numpy()
        sync = torch.cuda.synchronize
        ptr_of = lambda a: a.data_ptr()
        from_dlpack = torch.from_dlpack
        capsule_of = lambda a: torch.utils.dlpack.to_dlpack(a)
    elif fw == "cupy":
        import cupy
        xp, to_np, sync = cupy, cupy.asnumpy, cupy.cuda.runtime.deviceSynchronize
        ptr_of = lambda a: a.data.ptr
        from_dlpack = cupy.from_dlpack
        capsule_of = lambda a: a.__dlpack__()
    elif fw == "jax":
        import jax
        import jax.dlpack
        if not any(d.platform == "gpu" for d in jax.devices()):
            rec("CUDA", None, "JAX has no GPU device")
            return
        xp = jax.numpy
        to_np = np.asarray
        sync = lambda: None
        ptr_of = lambda a: a.unsafe_buffer_pointer()
        from_dlpack = jax.dlpack.from_dlpack
        capsule_of = lambda a: jax.dlpack.to_dlpack(a) if hasattr(jax.dlpack, "to_dlpack") else a.__dlpack__()
    else:
        raise ValueError(fw)

    # cufuse -> framework
    for dtype in ("float32", "float64", "int32", "float16"):
        ex = Exported(bridge.make(dtype, 3, 4, host))
        got = from_dlpack(ex)
        sync()
        want = expected(np, 3, 4).astype(dtype)
        arr = to_np(got)
        ok = arr.dtype == np.dtype(dtype) and arr.shape == (3, 4) and np.array_equal(arr, want)
        zero_copy = ptr_of(got) == ex.data
        # JAX may copy on import (its buffers have their own alignment rules): not required there.
        rec(f"cufuse -> {fw} {dtype}", ok and (zero_copy or fw == "jax"),
            f"values {'ok' if ok else arr}, zero copy {zero_copy}")
        del got

    # framework -> cufuse (a strided view where the framework allows one)
    base = expected(np, 4, 6).astype(np.float32)
    if fw == "numpy":
        x = base.copy()[:, 1:5:2]
    elif fw == "torch":
        import torch
        x = torch.from_numpy(base.copy()).cuda()[:, 1:5:2]
    elif fw == "cupy":
        x = xp.asarray(base)[:, 1:5:2]
    else:
        x = xp.asarray(base[:, 1:5:2].copy())
    before = to_np(x).copy()
    sync()
    add = 0.0 if fw == "jax" else 1.0
    s = bridge.consume(take_capsule(capsule_of(x)), host, add)
    sync()
    after = to_np(x)
    ok_sum = abs(s - float(before.astype(np.float64).sum())) < 1e-9
    rec(f"{fw} -> cufuse sum of a {before.shape} view", ok_sum, f"cufuse {s}, {fw} {before.sum()}")
    if add:
        rec(f"{fw} -> cufuse in-place write is seen by {fw}", np.array_equal(after, before + 1),
            "" if np.array_equal(after, before + 1) else f"{after} vs {before + 1}")

    if fw == "numpy":
        with tempfile.TemporaryDirectory() as d:
            for dtype in ("float32", "bfloat16", "int16", "bool"):
                p = os.path.join(d, f"x_{dtype}.npy")
                bridge.save(p, dtype, 2, 5)
                if dtype == "bfloat16":
                    import ml_dtypes  # noqa: F401  (registers 'bfloat16' for np.load)
                a = np.load(p)
                want = expected(np, 2, 5).astype(a.dtype)
                rec(f"cufuse save -> np.load {dtype}", str(a.dtype) == dtype and np.array_equal(a, want),
                    f"{a.dtype} {a.shape}")


def warm_up(fw):
    """Lets the framework load its CUDA libraries (torch, JAX and CuPy load them at first device use)."""
    if fw == "torch":
        import torch
        if torch.cuda.is_available():
            torch.zeros(1, device="cuda")
    elif fw == "cupy":
        import cupy
        cupy.zeros(1)
    elif fw == "jax":
        import jax
        jax.config.update("jax_enable_x64", True)  # else JAX turns an imported float64 into float32
        jax.devices()


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--lib", required=True)
    ap.add_argument("--frameworks", default="numpy,torch,cupy,jax")
    args = ap.parse_args()
    fws = args.frameworks.split(",")
    if len(fws) > 1:
        # One process per framework: a crash in one (a deleter called twice, a bad free) is reported
        # as that framework's failure with its exit status, and the others still run.
        import subprocess
        failed = ran = 0
        for fw in fws:
            p = subprocess.run([sys.executable, __file__, "--lib", args.lib, "--frameworks", fw],
                               capture_output=True, text=True)
            out = p.stdout + p.stderr
            lines = [l for l in out.splitlines() if not l.startswith("dlpack_check:")]
            print("\n".join(lines), flush=True)
            for l in lines:
                ran += l.startswith(("ok ", "FAIL "))
                failed += l.startswith("FAIL ")
            if p.returncode not in (0, 1):
                print(f"FAIL     {fw}: the check process died (exit {p.returncode})", flush=True)
                failed += 1
                ran += 1
        print(f"dlpack_check: {ran} checks, {failed} failed")
        return 1 if failed else 0
    failed = ran = 0

    def report(what, ok, detail):
        nonlocal failed, ran
        tag = "skipped" if ok is None else ("ok" if ok else "FAIL")
        failed += ok is False
        ran += ok is not None
        print(f"{tag:8} {what}" + (f"  ({detail})" if detail else ""), flush=True)

    class Live(list):
        def append(self, r):
            report(*r)

    results = Live()
    bridge = None
    for fw in fws:
        try:
            __import__(fw)
            warm_up(fw)
        except Exception as e:  # not installed
            results.append((f"{fw}", None, f"not installed ({e.__class__.__name__})"))
            continue
        try:
            # cufuse is loaded after the framework has loaded its CUDA libraries, as a Python
            # extension built on cufuse would be (see the README's DLPack notes: loaded the other
            # way round, PyTorch's and JAX's CUDA 13 wheels bind to /usr/local/cuda's libraries of
            # the same sonames and abort with "free(): invalid pointer" on the H200 machine).
            bridge = bridge or Bridge(args.lib)
            run(fw, bridge, results)
        except Exception as e:
            results.append((f"{fw}: exception", False, f"{e.__class__.__name__}: {e}"))
    print(f"dlpack_check: {ran} checks, {failed} failed")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
