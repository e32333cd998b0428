// src/compile/interp_images.hpp: the bytecode interpreter's compiled images (issue 35), built
// with the library: tools/gen_interp.cpp generates the kernel from the op table and compiles
// it with NVRTC for a few archs plus PTX; the generated interp_images.cpp holds the bytes.
#pragma once
#include <cstddef>
#include <span>

namespace cufuse::detail {

struct InterpImage {
  int arch;                   // 90 for sm_90 (a CUBIN) or compute_90 (PTX)
  bool ptx;
  const unsigned char* data;  // PTX ends with its NUL
  size_t size;
};

// A CUBIN built for sm_`arch` runs on a device of compute capability `cc` only on its own
// major arch at an equal or higher minor version (the one rule the interpreter's images, the
// compiled kernels' loads and tier hint preloads all follow).
inline bool cubin_runs_on(int arch, int cc) { return arch / 10 == cc / 10 && arch % 10 <= cc % 10; }

// Every image the build made (archs NVRTC refused are left out; the build says which).
std::span<const InterpImage> interp_images();

// The image that runs on a device of compute capability `cc` (86 for sm_86): a CUBIN of its
// major arch at an equal or lower minor version (the highest such), else the PTX of the highest
// arch at or below cc (the driver JITs it), else null.
const InterpImage* interp_image_for(int cc);

}  // namespace cufuse::detail
