// src/exec/precompile.hpp: compiling a planned executable's kernels without running them
// (cufuse::precompile, include/cufuse/precompile.hpp; the CLI's --precompile). Shared by the
// lazy path (exec/precompile.cpp) and fuse() traces (fuse/precompile.cpp); and the reference
// backend's source check (CUFUSE_REFERENCE_COMPILE=ptx).
#pragma once
#include "cufuse/precompile.hpp"
#include "exec/executable.hpp"

namespace cufuse::detail {

// Gives every kernel step of `ex` its compiled kernel for `arch`: from the memory or the disk
// cache (counted in `cached`), else compiled by NVRTC now, which stores it on disk
// (`compiled`). Library steps compile their own kernels when they run: not counted.
void precompile_steps(Executable& ex, int arch, PrecompileStats& stats);

// CUFUSE_REFERENCE_COMPILE=ptx: checks that every kernel step's source of `ex` compiles for
// compute_<arch> (NVRTC to PTX, compile/compiler.hpp: check_kernel_source), where the reference
// backend evaluates the plan and no kernel runs. Throws CompileError as a compile would.
void check_step_sources(const Executable& ex, int arch);

// Is there a device to hold a precompiled fuse() entry (else the kernels are compiled and
// cached, and the trace is dropped)?
bool precompile_has_device();

}  // namespace cufuse::detail
