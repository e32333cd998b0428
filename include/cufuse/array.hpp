// cufuse/array.hpp: cufuse::Array, a handle on a lazy NumPy-style array.
//
// An Array is cheap to copy and, like a Python name, a copy is the same array: writes
// through one are seen through the other. Operations build a DAG and run nothing; a
// result is computed when it is needed (item, to_host, eval, a write into memory that
// pending work reads) as few fused kernels as the planner can make.
#pragma once
#include <cstdint>
#include <initializer_list>
#include <memory>
#include <optional>
#include <string>
#include <type_traits>
#include <variant>
#include <vector>

#include <boost/smart_ptr/intrusive_ptr.hpp>

#include "cufuse/dtype.hpp"
#include "cufuse/error.hpp"
#include "cufuse/scalar.hpp"
#include "cufuse/shape.hpp"

namespace cufuse {

namespace detail {
struct Node;
struct LazyBase;
// A node of the lazy graph, reference-counted in the node itself (src/core/node.hpp has
// the count's hooks; nothing in this header copies or releases one).
using NodePtr = boost::intrusive_ptr<Node>;
}  // namespace detail

// ------------------------------------------------------------------ indexing
inline constexpr std::nullopt_t none = std::nullopt;
// start:stop:step with NumPy's rules; an absent bound is `none`.
struct Slice {
  std::optional<int64_t> start, stop;
  int64_t step = 1;
};
inline Slice slice(std::optional<int64_t> start, std::optional<int64_t> stop, int64_t step = 1) {
  return Slice{start, stop, step};
}
inline const Slice _{};  // ':' (the whole axis)
struct NewAxis {};
inline constexpr NewAxis newaxis{};  // None in NumPy indexing
struct EllipsisT {};
inline constexpr EllipsisT ellipsis{};  // '...'

class Array;
class Index {
 public:
  Index(int64_t i) : v_(i) {}  // NOLINT: implicit so that x[{0, _, newaxis}] reads naturally
  Index(int i) : v_(static_cast<int64_t>(i)) {}
  Index(Slice s) : v_(s) {}
  Index(NewAxis n) : v_(n) {}
  Index(EllipsisT e) : v_(e) {}
  // An integer array (advanced indexing: a gather) or a bool array (a mask), as NumPy's
  // x[idx, :], x[mask] (cufuse/indexing.hpp).
  Index(const Array& a);  // NOLINT
  const std::variant<int64_t, Slice, NewAxis, EllipsisT, std::shared_ptr<const Array>>& get() const { return v_; }

 private:
  std::variant<int64_t, Slice, NewAxis, EllipsisT, std::shared_ptr<const Array>> v_;
};

class Operand;
class Subscript;
class PinnedBuffer;  // cufuse/pinned.hpp

// ------------------------------------------------------------------ Array
class Array {
 public:
  Array();
  ~Array();
  Array(const Array& o);
  Array(Array&& o) noexcept;
  // Rebinds this name (Python's `a = b`).
  Array& operator=(const Array& o) &;
  Array& operator=(Array&& o) & noexcept;
  // On a temporary (x[...] = y, x(1, _) = 0): writes into the memory the temporary views.
  Array& operator=(const Array& o) &&;
  Array& operator=(Array&& o) &&;  // the value's node becomes the write itself where it can
  Array& operator=(const Scalar& v) &&;
  template <class T, class = std::enable_if_t<std::is_arithmetic_v<T>>>
  Array& operator=(T v) && { return std::move(*this) = Scalar(v); }

  // ---- facts
  bool defined() const { return node_ != nullptr; }
  DType dtype() const;
  const Shape& shape() const;
  int64_t shape(int axis) const;  // negative axes count from the end
  int ndim() const;
  int64_t size() const;
  int64_t itemsize() const { return cufuse::itemsize(dtype()); }
  int64_t nbytes() const { return size() * itemsize(); }
  int device() const;           // -1 for host (reference backend) or a placeholder
  bool is_lazy() const;         // not yet in memory
  // Strides in elements of the materialized array (materializes a lazy one).
  Strides strides() const;
  bool is_contiguous() const;   // materializes a lazy one
  std::string str() const;      // "Array(float32, (4, 4), lazy)"

  // ---- views: share memory with a materialized array, stay lazy on a lazy one
  Array reshape(const Shape& shape) const;  // one -1 allowed; copies only where NumPy would
  Array ravel() const;
  Array flatten() const;  // always a copy
  Array transpose() const;
  Array transpose(const Axes& axes) const;
  Array permute(const Axes& axes) const { return transpose(axes); }
  Array T() const { return transpose(); }
  Array swapaxes(int a, int b) const;
  Array moveaxis(int src, int dst) const;
  Array broadcast_to(const Shape& shape) const;
  Array expand_dims(int axis) const;
  Array squeeze() const;
  Array squeeze(const Axes& axes) const;
  Array index(std::initializer_list<Index> idx) const;
  Array index(const std::vector<Index>& idx) const;
  Array operator[](std::initializer_list<Index> idx) const { return index(idx); }
  Array operator[](int64_t i) const { return index({Index(i)}); }
  // x[idx] with an integer or bool Array: reads (a fused gather; a mask's selection, counted
  // on the device) and writes (x[idx] = v, x[mask] = v, x[mask] += v) through the Subscript.
  Subscript operator[](const Array& idx) const;
  template <class... I>
  Array operator()(I... idx) const { return index({Index(idx)...}); }
  Array astype(DType t) const;
  Array copy() const;
  // A copy on another device (cudaMemcpyPeerAsync, ordered after the work that made this
  // array); this array itself when it already lives there (src/fuse/devices.cpp).
  Array to_device(int device) const;

  // ---- materialization
  Array& eval();  // computes now (one fused launch per iteration space)
  const Array& eval() const;
  template <class T>
  std::vector<T> to_host() const {
    check_host_type(dtype_of<T>());
    if constexpr (std::is_same_v<T, bool>) {
      std::vector<uint8_t> raw(static_cast<size_t>(size()));
      copy_to_host(raw.data(), raw.size());
      return std::vector<bool>(raw.begin(), raw.end());
    } else {
      std::vector<T> v(static_cast<size_t>(size()));
      copy_to_host(v.data(), v.size() * sizeof(T));
      return v;
    }
  }
  void copy_to_host(void* dst, size_t nbytes) const;  // row-major, this array's dtype
  // Into page-locked memory of the same dtype and size, asynchronously on the current stream
  // (cufuse/pinned.hpp; dst.synchronize() before reading it).
  void copy_to_host(const PinnedBuffer& dst) const;
  // Materializes, carries out pending writes into its memory, and returns the address of
  // element 0 (device memory, or host memory under the reference backend): the work that
  // made it is queued on the current stream (cufuse/foreign.hpp has the other direction).
  void* data_ptr() const;
  template <class T>
  T item() const {
    Scalar s = item_scalar();
    if constexpr (std::is_same_v<T, bool>) return s.to_bool();
    else if constexpr (is_std_complex_v<T>) return T(s.to_complex());
    else if constexpr (std::is_floating_point_v<T>) return static_cast<T>(s.to_double());  // complex: its real part
    else if constexpr (std::is_same_v<T, half> || std::is_same_v<T, bfloat16_t>) return T(s.to_double());
    else if constexpr (std::is_signed_v<T>) return static_cast<T>(s.to_int64());
    else return static_cast<T>(s.to_uint64());
  }
  Scalar item_scalar() const;  // a one-element array's value, as a strong scalar of its dtype

  // ---- writes: lazy, like everything else. The handle moves to the new value, which the next
  // materialization point writes into this array's memory (fused with the work around it);
  // expressions made before the write keep the values they were made from, and any other
  // handle on the memory (an alias, a view, the base of a view) sees the write.
  Array& assign(const Array& value);  // broadcasting; NumPy's unsafe casting
  Array& assign(Array&& value);
  Array& assign(const Scalar& value);
  Array& fill(const Scalar& value) { return assign(value); }
  // On a temporary x[{idx, ...}] (integer index arrays), `x[{idx}] op= v` writes x[idx] op v
  // back through the index (NumPy's x[idx] = x[idx] op v); on a named array, into it.
#define CUFUSE_INPLACE_DECL(sym) \
  Array& operator sym(const Operand& o) &; \
  Array& operator sym(const Operand& o) &&;
  CUFUSE_INPLACE_DECL(+=)
  CUFUSE_INPLACE_DECL(-=)
  CUFUSE_INPLACE_DECL(*=)
  CUFUSE_INPLACE_DECL(/=)
  CUFUSE_INPLACE_DECL(%=)
  CUFUSE_INPLACE_DECL(&=)
  CUFUSE_INPLACE_DECL(|=)
  CUFUSE_INPLACE_DECL(^=)
  CUFUSE_INPLACE_DECL(<<=)
  CUFUSE_INPLACE_DECL(>>=)
#undef CUFUSE_INPLACE_DECL

  // ---- internals (for cufuse's own code and tests)
  explicit Array(detail::NodePtr node);
  Array(detail::NodePtr node, std::shared_ptr<detail::LazyBase> base);
  // The node (a view of a lazy array whose base is now in memory is rebound to that memory).
  const detail::NodePtr& node() const;
  const std::shared_ptr<detail::LazyBase>& lazy_base() const { return base_; }
  // The node, leaving this handle empty; null where it cannot be taken (a view of a lazy
  // base). For operations given a temporary: no reference count moves twice.
  detail::NodePtr take_node() &&;

 private:
  void check_host_type(DType t) const;
  void require_defined(const char* what) const;
  Array& inplace(uint16_t op, const Operand& o);
  // Records `value` as this array's new version (a lazy write: src/graph/array.cpp).
  Array& write(detail::NodePtr value);
  void set_node(detail::NodePtr n);
  // This handle stops counting as a name of its node (an Operand's temporary, held for the
  // op but named by nothing the program can reach: an evaluation later in the statement
  // fuses through it instead of keeping it in memory). A copy of it is a name again.
  void unname();
  friend class Operand;

  mutable detail::NodePtr node_;
  // When this array is a view of a lazy array, that array and how this one sees it:
  // a write into this view first materializes the base, so the write lands in its memory.
  mutable std::shared_ptr<detail::LazyBase> base_;
  bool named_ = true;  // counted in node_->array_refs (unname)
};

// x[idx] for an integer or bool Array idx (cufuse/indexing.hpp has the semantics): converts
// to the Array NumPy's x[idx] reads, and writes through the index into x.
class Subscript {
 public:
  Subscript(const Array& x, const Array& index) : x_(x), index_(index) {}
  operator Array() const { return value(); }  // NOLINT: the read
  Array value() const;
  // Writes into x: an integer index scatters (of duplicates one value wins); a mask is a
  // fused where (no read-back).
  Subscript& operator=(const Operand& v);
  Subscript& operator=(const Subscript& v);
  Subscript& operator+=(const Operand& v);
  Subscript& operator-=(const Operand& v);
  Subscript& operator*=(const Operand& v);
  Subscript& operator/=(const Operand& v);
  // What reading it gives (each reads it again; keep `Array y = x[idx]` to read once).
  Shape shape() const { return value().shape(); }
  DType dtype() const;
  int64_t size() const { return value().size(); }
  int ndim() const { return value().ndim(); }
  template <class T>
  std::vector<T> to_host() const { return value().to_host<T>(); }
  template <class T>
  T item() const { return value().item<T>(); }
  const Array& array() const { return x_; }
  const Array& index() const { return index_; }

 private:
  Subscript& update(uint16_t op, const Operand& v);
  Array x_, index_;
};

namespace detail {
struct Transient {};  // an Operand that dies with the op it is passed to (ops.hpp's operators)
}  // namespace detail

// An argument of an elementwise op: an Array or a C++ scalar (weak, like a Python scalar).
// An lvalue Array is referred to (it outlives the call it is an argument of); a temporary is
// moved into the operand, so an Operand kept past its full-expression (a named one, or in a
// std::vector<Operand> for apply) still holds its array and can be used again.
class Operand {
 public:
  // A temporary is held unnamed (Array::unname): it lives to the end of its statement, and an
  // evaluation there (`cf::sum(cf::abs(x - y)).item()`) fuses through it rather than keeping
  // it in memory for a handle nothing can reach.
  Operand(const Array& a) : ref_(&a) {}  // NOLINT
  Operand(Array&& a) : owned_(std::move(a)) { owned_->unname(); }  // NOLINT
  // The operators' own operands: built for one op and gone with it, so the op may take the
  // temporary's node instead of sharing it (a reference count and a registry entry less).
  Operand(Array&& a, detail::Transient) : owned_(std::move(a)), transient_(true) { owned_->unname(); }
  template <class T, class = std::enable_if_t<std::is_arithmetic_v<T>>>
  Operand(T v) : scalar_(v) {}  // NOLINT
  Operand(const Scalar& s) : scalar_(s) {}  // NOLINT
  Operand(const Subscript& s) : owned_(s.value()) { owned_->unname(); }  // NOLINT: x[idx] read
  Operand(half h) : scalar_(h) {}  // NOLINT
  Operand(bfloat16_t h) : scalar_(h) {}  // NOLINT
  // A copy shares the array and is never transient (it may be used again).
  Operand(const Operand& o) : owned_(o.owned_), ref_(o.ref_), scalar_(o.scalar_) {
    if (owned_ && !o.owned_->named_) owned_->unname();
  }
  Operand(Operand&&) noexcept = default;
  Operand& operator=(const Operand& o) { return *this = Operand(o); }
  Operand& operator=(Operand&&) noexcept = default;
  bool is_array() const { return owned_ || ref_; }
  const Array& array() const { return owned_ ? *owned_ : *ref_; }
  // The temporary of a transient operand, whose node the op may take; else nullptr.
  Array* temporary() const { return transient_ ? &*owned_ : nullptr; }
  const Scalar& scalar() const { return scalar_; }

 private:
  mutable std::optional<Array> owned_;  // a temporary, held (mutable: a transient's node is taken through a const&)
  const Array* ref_ = nullptr;          // an lvalue, which outlives the call
  bool transient_ = false;
  Scalar scalar_;
};

// Materializes several arrays together: outputs that share an iteration space come out of
// one kernel. Returns nothing; each array is in memory afterwards.
void eval_all(const std::vector<Array>& arrays);
template <class... A>
void eval(A&... arrays) {
  eval_all(std::vector<Array>{arrays...});
}

}  // namespace cufuse
