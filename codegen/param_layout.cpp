// codegen/param_layout.cpp: host-side layout of a kernel's parameter struct, and writing
// scalar values in their compute types.
#include <fmt/format.h>

#include "codegen/kernel.hpp"
#include "cufuse/error.hpp"

namespace cufuse::detail {

size_t ParamLayout::add(const std::string& ctype, size_t size, const std::string& name, int count) {
  size_t off = (bytes_.size() + size - 1) / size * size;  // natural alignment (size is a power of 2)
  bytes_.resize(off + size * static_cast<size_t>(count < 0 ? 1 : count), 0);
  if (count < 0) decl_ += fmt::format("  {} {};\n", ctype, name);
  else decl_ += fmt::format("  {} {}[{}];\n", ctype, name, count);
  return off;
}

size_t ParamLayout::add_struct(const std::string& ctype, const std::vector<unsigned char>& bytes, size_t align,
                               const std::string& name) {
  const size_t off = (bytes_.size() + align - 1) / align * align;
  const size_t size = (bytes.size() + align - 1) / align * align;  // sizeof rounds up to the alignment
  bytes_.resize(off + size, 0);
  if (!bytes.empty()) std::memcpy(bytes_.data() + off, bytes.data(), bytes.size());
  decl_ += fmt::format("  {} {};\n", ctype, name);
  return off;
}

size_t compute_size(DType t) { return is_half(t) ? 4 : static_cast<size_t>(itemsize(t)); }  // complex: its pair

void write_compute_value(unsigned char* dst, DType t, double f, int64_t i, uint64_t u, bool b) {
  auto put = [&](auto v) { std::memcpy(dst, &v, sizeof(v)); };
  switch (t) {
    case DType::Bool: put(b); break;
    case DType::Int8: put(static_cast<int8_t>(i)); break;
    case DType::Int16: put(static_cast<int16_t>(i)); break;
    case DType::Int32: put(static_cast<int32_t>(i)); break;
    case DType::Int64: put(static_cast<int64_t>(i)); break;
    case DType::UInt8: put(static_cast<uint8_t>(u)); break;
    case DType::UInt16: put(static_cast<uint16_t>(u)); break;
    case DType::UInt32: put(static_cast<uint32_t>(u)); break;
    case DType::UInt64: put(static_cast<uint64_t>(u)); break;
    case DType::Float16:
    case DType::BFloat16:
    case DType::Float32: put(static_cast<float>(f)); break;
    case DType::Float64: put(f); break;
    case DType::Complex64: { const float v[2] = {static_cast<float>(f), 0.0f}; std::memcpy(dst, v, sizeof v); break; }
    case DType::Complex128: { const double v[2] = {f, 0.0}; std::memcpy(dst, v, sizeof v); break; }
  }
}

}  // namespace cufuse::detail
