// cufuse/dlpack.hpp: zero-copy exchange with other array libraries (PyTorch, CuPy, JAX,
// NumPy, ...) through DLPack (the installed <dlpack/dlpack.h>).
//
//   DLManagedTensor* t = cf::to_dlpack(a);  // materializes a; the tensor views a's memory and
//                                           // keeps it alive until t->deleter(t) runs
//   cf::Array b = cf::from_dlpack(t);        // zero copy; b owns t: t's deleter runs once the
//                                           // last array on that memory has gone (and the
//                                           // work queued on it has finished)
//
// Devices: kDLCUDA and kDLCUDAManaged tensors become arrays on that device; kDLCPU tensors
// host arrays (the reference backend's memory); kDLCUDAHost (pinned) tensors host arrays under
// the reference backend and arrays of the current device otherwise (kernels reach pinned
// memory through unified addressing). Strides (in elements, any sign) and byte_offset are
// honoured. dtypes: bool (kDLBool, 8 bits), int8-64, uint8-64, float16/32/64, bfloat16; lanes
// must be 1. to_dlpack waits for the work that computes the array (the consumer may read at
// once, on any stream) and carries out pending writes into its memory first.
// Where the header is DLPack 1.x, the versioned structs are supported as well.
#pragma once
#include <dlpack/dlpack.h>

#include "cufuse/array.hpp"

namespace cufuse {

DLManagedTensor* to_dlpack(const Array& a);
Array from_dlpack(DLManagedTensor* t);

#if defined(DLPACK_MAJOR_VERSION) && DLPACK_MAJOR_VERSION >= 1
// The versioned form (DLPack >= 1.0): the version is DLPACK_MAJOR/MINOR_VERSION, flags 0.
DLManagedTensorVersioned* to_dlpack_versioned(const Array& a);
// Refuses a tensor of another major version (its deleter is then called, as the protocol says
// a consumer that cannot take a tensor must). A read-only tensor gives a read-only array.
Array from_dlpack(DLManagedTensorVersioned* t);
#endif

}  // namespace cufuse
