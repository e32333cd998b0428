// codegen/kernel.hpp: what code generation hands the executor: a kernel's source and name,
// its launch shape, and its parameter struct as a byte template plus the patches that bind
// a particular graph's pointers and scalar values into it.
#pragma once
#include <cstdint>
#include <cstring>
#include <string>
#include <vector>

#include "cufuse/dtype.hpp"
#include "runtime/launch.hpp"

namespace cufuse::detail {

enum class PatchSrc : uint8_t {
  LeafPtr,     // index: leaf; the leaf's data pointer (storage + offset)
  ScalarValue, // index: leaf; the Scalar leaf's value in its compute type
  ScalarReciprocal, // index: leaf; 1 / the Scalar leaf's value (src/plan/scalar_forms.hpp)
  GenA,        // index: leaf; generator parameter A (see codegen/elementwise_kernel.cpp)
  GenB,
  GenC,
  GenSeed,
  GenCounter,
  BufferPtr,   // index: buffer of the executable (a result or a write target)
  Workspace,   // index: byte offset into the step's workspace
};

struct Patch {
  uint32_t offset;
  PatchSrc src;
  DType dtype;     // the compute dtype a value is written as
  uint32_t index;
};

// The kernel's parameter struct, built field by field on the host with the same layout
// the generated struct declaration has on the device (natural alignment).
class ParamLayout {
 public:
  // Adds a field (count < 0) or an array of `count` elements; returns its byte offset.
  size_t add(const std::string& ctype, size_t size, const std::string& name, int count = -1);
  // Adds a field of struct type `ctype` holding `bytes` (that struct's own layout), at an offset
  // aligned to `align` (which the struct's declaration must state); returns its byte offset.
  size_t add_struct(const std::string& ctype, const std::vector<unsigned char>& bytes, size_t align, const std::string& name);
  template <class T>
  void set(size_t off, const T& v) {
    std::memcpy(bytes_.data() + off, &v, sizeof(T));
  }
  const std::vector<unsigned char>& bytes() const { return bytes_; }
  const std::string& decl() const { return decl_; }
  size_t size() const { return bytes_.size(); }

 private:
  std::vector<unsigned char> bytes_;
  std::string decl_;
};

struct KernelSpec {
  std::string name;
  std::string source;  // complete CUDA source, preamble included
  LaunchDims dims;
  std::vector<unsigned char> params;
  std::vector<Patch> patches;
  std::string summary;  // "contiguous, vector 4 x unroll 4, 32-bit index" for plan dumps
  int64_t numel = 0;    // elements in the iteration space (0: nothing to launch)
  size_t workspace_bytes = 0;       // scratch memory the launch needs (partials, counters)
  size_t workspace_zero_bytes = 0;  // leading bytes of it that must be zero at launch
};

// Writes v (given as double / int64 / uint64 per the dtype's kind) at dst in the compute
// type of dtype t (float for half types).
void write_compute_value(unsigned char* dst, DType t, double f, int64_t i, uint64_t u, bool b);
size_t compute_size(DType t);

}  // namespace cufuse::detail
