// cufuse/cufuse.hpp: everything of the public API.
#pragma once
#include "cufuse/array.hpp"
#include "cufuse/backend.hpp"
#include "cufuse/creation.hpp"
#include "cufuse/dist.hpp"  // arrays sharded over a device mesh (issue 32)
#include "cufuse/dtype.hpp"
#include "cufuse/error.hpp"
#include "cufuse/eval.hpp"
#include "cufuse/fft.hpp"
#include "cufuse/foreign.hpp"
#include "cufuse/fuse.hpp"
#include "cufuse/indexing.hpp"
#include "cufuse/io.hpp"
#include "cufuse/kernel.hpp"
#include "cufuse/linalg.hpp"
#include "cufuse/manipulation.hpp"
#include "cufuse/memory.hpp"
#include "cufuse/ops.hpp"
#include "cufuse/pinned.hpp"
#include "cufuse/precompile.hpp"  // kernels compiled ahead of time (issue 35)
#include "cufuse/print.hpp"
#include "cufuse/profiler.hpp"
#include "cufuse/random.hpp"
#include "cufuse/scalar.hpp"
#include "cufuse/shape.hpp"
#include "cufuse/signal.hpp"
#include "cufuse/statistics.hpp"
#include "cufuse/sorting.hpp"
#include "cufuse/stream.hpp"
#include "cufuse/testing.hpp"
#include "cufuse/reduce.hpp"
#include "cufuse/typed.hpp"  // Tensor<T, N> and typed expression templates (issue 34)
// DLPack where its header is installed (libdlpack-dev); the library implements it when
// CMake found the header too (CUFUSE_HAVE_DLPACK).
#if __has_include(<dlpack/dlpack.h>)
#include "cufuse/dlpack.hpp"
#endif
