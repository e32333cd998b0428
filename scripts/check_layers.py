#!/usr/bin/env python3
"""scripts/check_layers.py: the layer order of cufuse's folders, checked over the #include lines.

The library's folders are the stages of the pipeline, bottom to top (docs/ARCHITECTURE.md,
"Layers"). A file may include its own folder and any folder of a lower layer; folders that
share a layer sit beside each other and include neither. This script reads every
`#include "..."` of the library's sources (include/, src/, codegen/; not tests, bench or
examples, which may include anything), resolves it the way the build does (the including
file's folder, then src/, the project root and include/), and fails naming each include
that runs against the order, and each folder the order does not name.

    python3 scripts/check_layers.py [project root]          # exit 0: every include runs down
    python3 scripts/check_layers.py --list [project root]   # the order, bottom to top

Registered as the CTest test unit_layers (tests/layers.cmake).
"""
import os
import re
import sys

# Bottom to top. Folders in one tuple share a layer: neither includes the other.
LAYERS = [
    ("include/cufuse",),     # the public API's declarations
    ("src/runtime",),        # the CUDA runtime: devices, streams, memory blocks, launches, logs
    ("src/core",),           # the vocabulary: node, dtype facts, op table, registry, counters
    ("src/graph",),          # building the lazy DAG (ops, views, reductions); evaluation via hooks
    ("src/plan",),           # the planner, its rules (GEMM epilogue included), graph keys, CSE
    ("codegen",),            # the emitters: CUDA source and parameter structs from a plan
    ("src/compile", "src/reference"),  # NVRTC and the kernel caches; the host reference evaluator
    ("src/library",),        # the calls: cuBLAS(Lt), cuSOLVER, the convolution kernel, host references
    ("src/library_build",),  # matmul, einsum, linalg, convolve: library nodes built from arrays
    ("src/exec",),           # the executor: look-up, binding, launch, realization; installs graph's hooks
    ("src/fuse", "src/kernel", "src/io", "src/dist"),  # fuse(), profiler, devices; Elementwise/Reduction/RawKernel; files, DLPack, foreign and pinned memory; arrays sharded over a mesh (plans per shard through exec, NCCL)
    ("src/typed",),          # typed expressions (include/cufuse/typed*.hpp): their run site over fuse() traces
    ("src/cli",),            # cufuse-dump-kernels and its interpreter; included by nothing
]
SOURCE_TOPS = ("include", "src", "codegen")
EXTENSIONS = (".cpp", ".hpp", ".h", ".inc", ".cu", ".cuh")
INCLUDE = re.compile(r'^\s*#\s*include\s*"([^"]+)"')


def layer_of():
    level = {}
    for i, folders in enumerate(LAYERS):
        for f in folders:
            level[f] = i
    return level


def sources(root):
    out = []
    for top in SOURCE_TOPS:
        for d, dirs, files in os.walk(os.path.join(root, top)):
            dirs.sort()
            for name in sorted(files):
                if name.endswith(EXTENSIONS):
                    out.append(os.path.relpath(os.path.join(d, name), root).replace(os.sep, "/"))
    return out


def resolve(root, including, target, known):
    for base in (os.path.dirname(including), "src", "", "include"):
        cand = os.path.normpath(os.path.join(base, target)).replace(os.sep, "/")
        if cand in known:
            return cand
    return None  # a system header, or one generated into the build tree


def check(root):
    level = layer_of()
    files = sources(root)
    known = set(files)
    problems = []
    unnamed = set()
    for f in files:
        a = os.path.dirname(f)
        if a not in level:
            unnamed.add(a)
            continue
        with open(os.path.join(root, f), encoding="utf-8", errors="replace") as fh:
            for lineno, line in enumerate(fh, 1):
                m = INCLUDE.match(line)
                if not m:
                    continue
                t = resolve(root, f, m.group(1), known)
                if t is None:
                    continue
                b = os.path.dirname(t)
                if b == a or b not in level:
                    continue  # own folder; an unnamed folder is reported once below
                if level[b] > level[a]:
                    problems.append(f"{f}:{lineno}: includes {t}: {b} (layer {level[b]}) is above {a} (layer {level[a]})")
                elif level[b] == level[a]:
                    problems.append(f"{f}:{lineno}: includes {t}: {b} sits beside {a} (layer {level[a]}); "
                                    "folders of one layer include neither")
    for d in sorted(unnamed):
        problems.append(f"{d}/: a folder of library sources that scripts/check_layers.py's LAYERS does not name; "
                        "give it its place in the order (and in docs/ARCHITECTURE.md)")
    return files, problems


def main(argv):
    args = [a for a in argv[1:] if not a.startswith("--")]
    root = args[0] if args else os.path.join(os.path.dirname(os.path.abspath(__file__)), "..")
    if "--list" in argv:
        for i, folders in enumerate(LAYERS):
            print(f"{i:2d}  {'  '.join(folders)}")
        return 0
    files, problems = check(root)
    if not files:
        print(f"check_layers: no sources under {os.path.abspath(root)}", file=sys.stderr)
        return 2
    for p in problems:
        print(p)
    print(f"check_layers: {len(files)} files, {len(problems)} problem(s) with the layer order")
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
