// src/library/sort_call.cpp: the sort and search nodes (library/sort_call.hpp): plan-dump lines,
// hashes, the device runs (generated key kernels around CUB's radix sort; a generated binary
// search) and the host references (std::stable_sort / std::lower_bound on the same keys).
#include "library/sort_call.hpp"

#include <algorithm>
#include <cstring>
#include <numeric>
#include <vector>

#include <fmt/format.h>

#include "codegen/sort_kernels.hpp"
#include "compile/compiler.hpp"
#include "cufuse/error.hpp"
#include "library/cub_sort.hpp"
#include "reference/evaluator.hpp"
#include "runtime/device.hpp"
#include "runtime/launch.hpp"
#include "runtime/storage.hpp"

namespace cufuse::detail {

namespace {

void launch_generated(const SortKernel& k, int64_t total, void* params, void* stream) {
  CompiledKernelPtr c = compile_kernel(k.source, k.name, default_arch());
  launch_kernel(c->kernel_for(current_device()), sort_launch_dims(total), params, stream);
}

size_t round_up(size_t b) { return (b + 255) & ~size_t(255); }

// Element i's bits (w bytes) of a row-major host array.
uint64_t bits_at(const unsigned char* p, int w, int64_t i) {
  uint64_t b = 0;
  std::memcpy(&b, p + i * w, static_cast<size_t>(w));  // little-endian host
  return b;
}
void put_bits(unsigned char* p, int w, int64_t i, uint64_t b) { std::memcpy(p + i * w, &b, static_cast<size_t>(w)); }

}  // namespace

// ------------------------------------------------------------------------------------ sort
SortCall::SortCall(DType t, int64_t rows, int64_t n, bool values, bool indices, std::string what, Shape shape)
    : t_(t), rows_(rows), n_(n), values_(values), indices_(indices), what_(std::move(what)),
      shape_(shape.ndim() == 0 ? Shape{rows, n} : std::move(shape)) {
  if (!values && !indices) throw InternalError("sort node: nothing asked");
  if (numel(shape_) != rows * n) throw InternalError("sort node: the output shape is not rows * n elements");
}

std::string SortCall::describe() const {
  const char* path = "";
  switch (cub_sort_path(rows_, n_)) {
    case CubSortPath::Single: path = "one radix sort"; break;
    case CubSortPath::PerRow: path = "a radix sort per row"; break;
    case CubSortPath::Segmented: path = "segmented sort"; break;
  }
  // Whether CUB reads the elements (mapping their bits itself) or the key kernel's unsigned keys.
  const bool direct = cub_sort_maps_keys(rows_, n_) || sort_key_type(t_).kind == 0;
  // Indices: sorted as int32 and widened by one kernel after CUB where the rows allow.
  const char* idx = !indices_ ? "" : cub_sort_index_bytes(n_) == 4 ? "int64 indices (sorted as int32, widened)" : "int64 indices";
  return fmt::format("{} {} ({}, {}) along rows -> {}{}{}, CUB {} on {}-bit {}", what_, name(t_), rows_, n_,
                     values_ ? "values" : "", values_ && indices_ ? " + " : "", idx, path, itemsize(t_) * 8,
                     direct ? "elements" : "keys");
}

uint64_t SortCall::attributes_hash() const {
  uint64_t h = hash_mix(0x736f7274, static_cast<uint64_t>(t_));
  h = hash_mix(h, static_cast<uint64_t>(rows_));
  h = hash_mix(h, static_cast<uint64_t>(n_));
  return hash_mix(h, (values_ ? 1u : 0u) | (indices_ ? 2u : 0u));
}

void SortCall::run(const std::vector<TensorRef>& inputs, const std::vector<TensorRef>& outputs, void* stream) const {
  const int64_t total = rows_ * n_;
  if (total == 0) return;
  const SortKeyType kt = sort_key_type(t_);
  const int w = kt.bytes;
  // CUB reads the input itself where its bits are the key, or where CUB maps them (one radix
  // sort or one per row: library/cub_sort.hpp); else the key kernel writes unsigned keys.
  const bool mapped = cub_sort_maps_keys(rows_, n_);
  const bool own_key = kt.kind == 0 || mapped;
  void* vals_out = values_ ? outputs.at(0).ptr : nullptr;
  int64_t* idx_out = indices_ ? static_cast<int64_t*>(outputs.at(values_ ? 1 : 0).ptr) : nullptr;
  const bool segmented = cub_sort_path(rows_, n_) == CubSortPath::Segmented;

  // Indices: int32 where the rows allow (CUB then moves 4 bytes less per element and pass), made
  // int64 by one widening kernel after CUB. A segmented sort of rows of 2^31 elements or more
  // with indices is not built (65 such rows fit no GPU's memory).
  const int iw = indices_ ? cub_sort_index_bytes(n_) : 0;
  if (segmented && iw == 8)
    throw NotSupportedError(fmt::format("{}: indices along rows of {} elements (2^31 or more) in {} rows", what_, n_, rows_));
  // Scratch: keys in (unless CUB reads the input), keys out (unless they are the values), the
  // iota, the sorted int32 indices, the offsets, CUB's temp (with keys alone and values alone:
  // one more buffer of keys and of values, CUB's double buffer, since the input is not ours to
  // overwrite); one block.
  const size_t kbytes = round_up(static_cast<size_t>(total) * w);
  const size_t ibytes = round_up(static_cast<size_t>(total) * iw);
  const size_t sbytes = iw == 4 ? ibytes : 0;
  const size_t obytes = segmented ? round_up(static_cast<size_t>(rows_ + 1) * 8) : 0;
  const bool keys_out_is_values = own_key && values_;
  CubSortArgs a;
  a.key_bytes = w;
  if (mapped && kt.kind != 0) a.kind = kt.kind == 1 ? CubKeyKind::Signed : CubKeyKind::Float;
  a.bfloat = t_ == DType::BFloat16;
  a.rows = rows_, a.n = n_;
  a.stream = stream;
  size_t cub_bytes = 0;
  // CUB's size query needs only the sizes and which pointers are set.
  a.vals_in = indices_ ? reinterpret_cast<const void*>(uintptr_t(256)) : nullptr;
  CUFUSE_CUDA_CHECK(cub_sort_temp_bytes(a, cub_bytes));
  const size_t need =
      (own_key ? 0 : kbytes) + (keys_out_is_values ? 0 : kbytes) + ibytes + sbytes + obytes + round_up(cub_bytes);
  std::shared_ptr<Storage> scratch = allocate_device(std::max<size_t>(need, 256));
  auto* p = static_cast<unsigned char*>(scratch->ptr);
  void* keys_in = own_key ? inputs.at(0).ptr : p;
  if (!own_key) p += kbytes;
  void* keys_out = keys_out_is_values ? vals_out : p;
  if (!keys_out_is_values) p += kbytes;
  void* idx_in = indices_ ? p : nullptr;
  p += ibytes;
  void* idx_sorted = iw == 4 ? static_cast<void*>(p) : static_cast<void*>(idx_out);
  p += sbytes;
  int64_t* offsets = segmented ? reinterpret_cast<int64_t*>(p) : nullptr;
  p += obytes;
  void* temp = p;

  if (!own_key || indices_ || segmented) {
    SortLoadParams lp{inputs.at(0).ptr, own_key ? nullptr : keys_in, idx_in, reinterpret_cast<long long*>(offsets),
                      total, n_, rows_};
    launch_generated(sort_load_kernel(t_, zeros_equal(), indices_ ? iw : 8), total, &lp, stream);
  }
  a.keys_in = keys_in;
  a.keys_out = keys_out;
  a.vals_in = idx_in;
  a.vals_out = idx_sorted;
  a.offsets = offsets;
  CUFUSE_CUDA_CHECK(cub_sort(a, temp, cub_bytes));
  if (iw == 4) {
    SortStoreParams wp{idx_sorted, idx_out, total};
    launch_generated(sort_widen_kernel(), total, &wp, stream);
  }
  if (values_ && !keys_out_is_values) {
    SortStoreParams sp{keys_out, vals_out, total};
    launch_generated(sort_store_kernel(t_), total, &sp, stream);
  }
}

void SortCall::run_reference(const std::vector<const HostArray*>& inputs, std::vector<HostArray>& outputs) const {
  const SortKeyType kt = sort_key_type(t_);
  const int w = kt.bytes;
  const unsigned char* in = inputs.at(0)->bytes.data();
  unsigned char* vals = values_ ? outputs.at(0).bytes.data() : nullptr;
  int64_t* idx = indices_ ? outputs.at(values_ ? 1 : 0).data<int64_t>() : nullptr;
  std::vector<uint64_t> keys(static_cast<size_t>(n_));
  std::vector<int64_t> order(static_cast<size_t>(n_));
  for (int64_t r = 0; r < rows_; ++r) {
    const int64_t base = r * n_;
    for (int64_t i = 0; i < n_; ++i) keys[static_cast<size_t>(i)] = sort_key(bits_at(in, w, base + i), kt, zeros_equal());
    std::iota(order.begin(), order.end(), int64_t(0));
    std::stable_sort(order.begin(), order.end(),
                     [&](int64_t x, int64_t y) { return keys[static_cast<size_t>(x)] < keys[static_cast<size_t>(y)]; });
    for (int64_t i = 0; i < n_; ++i) {
      const int64_t o = order[static_cast<size_t>(i)];
      if (idx) idx[base + i] = o;
      if (vals) put_bits(vals, w, base + i, sort_key_bits(keys[static_cast<size_t>(o)], kt));
    }
  }
}

// ---------------------------------------------------------------------------------- search
SearchCall::SearchCall(DType t, int64_t n, Shape v_shape, bool right)
    : t_(t), n_(n), v_shape_(std::move(v_shape)), right_(right) {}

std::string SearchCall::describe() const {
  return fmt::format("searchsorted {} a ({}) v {} side={} -> int64, generated binary search", name(t_), n_,
                     to_string(v_shape_), right_ ? "right" : "left");
}

uint64_t SearchCall::attributes_hash() const {
  uint64_t h = hash_mix(0x73656172, static_cast<uint64_t>(t_));
  h = hash_mix(h, static_cast<uint64_t>(n_));
  return hash_mix(h, right_ ? 1 : 0);
}

void SearchCall::run(const std::vector<TensorRef>& inputs, const std::vector<TensorRef>& outputs, void* stream) const {
  const int64_t m = numel(v_shape_);
  if (m == 0) return;
  SearchParams sp{inputs.at(0).ptr, inputs.at(1).ptr, static_cast<long long*>(outputs.at(0).ptr), n_, m,
                  right_ ? 1 : 0};
  launch_generated(search_kernel(t_), m, &sp, stream);
}

void SearchCall::run_reference(const std::vector<const HostArray*>& inputs, std::vector<HostArray>& outputs) const {
  const SortKeyType kt = sort_key_type(t_);
  const int w = kt.bytes;
  std::vector<uint64_t> keys(static_cast<size_t>(n_));
  for (int64_t i = 0; i < n_; ++i) keys[static_cast<size_t>(i)] = sort_key(bits_at(inputs.at(0)->bytes.data(), w, i), kt, true);
  const int64_t m = numel(v_shape_);
  int64_t* out = outputs.at(0).data<int64_t>();
  for (int64_t i = 0; i < m; ++i) {
    const uint64_t x = sort_key(bits_at(inputs.at(1)->bytes.data(), w, i), kt, true);
    // NumPy's binary search over a possibly unsorted `a` gives some insertion point; the device's
    // search is this same loop, so both backends agree there too.
    int64_t lo = 0, hi = n_;
    while (lo < hi) {
      const int64_t mid = lo + ((hi - lo) >> 1);
      const uint64_t y = keys[static_cast<size_t>(mid)];
      if (right_ ? (y <= x) : (y < x)) lo = mid + 1;
      else hi = mid;
    }
    out[i] = lo;
  }
}

}  // namespace cufuse::detail
