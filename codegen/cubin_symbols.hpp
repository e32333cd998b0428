// codegen/cubin_symbols.hpp: the kernel entry points a CUBIN defines, read from its ELF
// symbol table (no CUDA driver needed), so a user kernel's name is checked where it is
// compiled (RawKernel::compile, RawModule::get_function) rather than at its first launch.
#pragma once
#include <optional>
#include <string>
#include <vector>

namespace cufuse::detail {

// The names of the __global__ functions (entries) in `cubin`, as the ELF spells them (an
// extern "C" kernel by its name, a C++ one mangled); nullopt if `cubin` is not an ELF64 file
// this reader understands (then nothing is checked).
std::optional<std::vector<std::string>> cubin_entry_names(const std::vector<char>& cubin);

}  // namespace cufuse::detail
