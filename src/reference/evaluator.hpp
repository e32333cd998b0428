// src/reference/evaluator.hpp: the host evaluator. It runs any DAG node by node with
// NumPy's semantics and is the oracle of every GPU test; the reference backend runs on it.
#pragma once
#include <cstdint>
#include <cstring>
#include <vector>

#include "core/node.hpp"

namespace cufuse::detail {

// A row-major host array in its dtype's storage format (float16/bfloat16 as 16 bits).
struct HostArray {
  DType dtype = DType::Float32;
  Shape shape;
  std::vector<unsigned char> bytes;

  int64_t size() const { return numel(shape); }
  template <class T> const T* data() const { return reinterpret_cast<const T*>(bytes.data()); }
  template <class T> T* data() { return reinterpret_cast<T*>(bytes.data()); }
  double get_double(int64_t i) const;   // element i as double (bool 0/1)
  int64_t get_int64(int64_t i) const;   // element i as int64 (floats truncated)
  uint64_t get_uint64(int64_t i) const; // element i as uint64 bits of the integer
};

// Evaluates the roots (any node kinds) on the host. Buffer leaves are read from their
// memory (device memory is copied to the host); a placeholder is an error.
std::vector<HostArray> reference_evaluate(const std::vector<NodePtr>& roots);
HostArray reference_evaluate(const NodePtr& root);

}  // namespace cufuse::detail
