// codegen/preamble.hpp: the text every generated kernel starts with.
#pragma once
#include <string>

namespace cufuse::detail {

// Self-contained (no #include): the shared helpers of codegen/device_helpers.inc, the
// float16/bfloat16 storage types and their conversions (PTX cvt, so cuda_fp16.h's compile
// cost is never paid), and the vector type for 16-byte loads.
const std::string& kernel_preamble();

}  // namespace cufuse::detail
