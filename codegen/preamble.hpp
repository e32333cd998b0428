// codegen/preamble.hpp: the text a generated kernel starts with.
#pragma once
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "cufuse/dtype.hpp"

namespace cufuse::detail {

// Self-contained (no #include): the helpers of codegen/device_helpers.inc, the float16/
// bfloat16 storage types and their conversions (PTX cvt, so cuda_fp16.h's compile cost is
// never paid), and the vector type for 16-byte loads; only the declarations `body` names
// (cf_...), with those they name in turn, in the order they are written. NVRTC's front end
// then parses a few dozen lines instead of ~320 (W12's kernel: ~0.5 ms less of ~28).
// Ends with kPreambleEnd.
std::string kernel_preamble(std::string_view body);

// The last line of every preamble: tools split a kernel's source there (cufuse-dump-kernels).
inline constexpr std::string_view kPreambleEnd = "// ---- end of the cufuse preamble ----\n";

// The complete source of a generated kernel: its preamble, then `struct <name>_params` with
// the fields `params_decl` and the __global__ function `name`, launch-bounded to `block`
// threads, taking that struct by value, with the statements `body`.
// `min_blocks` > 0: __launch_bounds__'s second argument, blocks an SM the registers must allow.
std::string kernel_source(std::string_view name, std::string_view params_decl, int block, std::string_view body,
                          int min_blocks = 0);

// A generated kernel's name: "cf_<kind>_", its outputs' dtypes, "_", the hash of its text
// in hex. A run of more than two outputs of one dtype is written "f32x300": eval() of
// thousands of results must not make a name of thousands of characters.
std::string kernel_name(std::string_view kind, const std::vector<DType>& outputs, uint64_t hash);

// Every helper, as one text (tests compile it whole).
const std::string& full_preamble();

}  // namespace cufuse::detail
