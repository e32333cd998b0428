// cufuse/pinned.hpp: page-locked host memory (cupyx.empty_pinned / zeros_pinned and CuPy's
// pinned memory pool).
//
// A PinnedBuffer is host memory with a dtype and shape, from a small pool of cudaHostAlloc
// blocks (rounded to 512 bytes, reused by size). Copies between it and arrays are
// asynchronous on the current stream:
//
//   cf::PinnedBuffer h = cf::empty_pinned({n}, cf::f32);
//   fill(h.data_as<float>(), ...);
//   cf::Array d = cf::from_host(h);   // queued on the current stream; returns at once
//   d *= 2;
//   d.copy_to_host(h);                // queued after the kernel; returns at once
//   h.synchronize();                  // waits for the copies issued on h; then read it
//
// Do not write into a buffer while a copy from it may still run, nor read one a copy into
// it may still fill (synchronize() or ready() first). A block goes back to the pool when the
// last handle on it goes away, and is not handed out again before its last copy finished.
// Where there is no CUDA device the memory is ordinary (not page-locked) host memory and the
// copies are plain memcpy: code written for pinned buffers runs on the reference backend.
// Copies of a PinnedBuffer share its memory (like Array handles).
#pragma once
#include <cstddef>
#include <memory>

#include "cufuse/array.hpp"

namespace cufuse {

class PinnedBuffer {
 public:
  PinnedBuffer() = default;  // empty: no memory
  PinnedBuffer(const Shape& shape, DType dtype);

  bool defined() const { return impl_ != nullptr; }
  void* data();
  const void* data() const;
  template <class T>
  T* data_as() {
    check_type(dtype_of<T>());
    return static_cast<T*>(data());
  }
  template <class T>
  const T* data_as() const {
    check_type(dtype_of<T>());
    return static_cast<const T*>(data());
  }
  DType dtype() const;
  const Shape& shape() const;
  int64_t size() const;
  size_t nbytes() const;
  bool is_pinned() const;    // page-locked (false where there is no CUDA device)
  bool ready() const;        // the copies issued on it have finished
  void synchronize() const;  // waits for them

  struct Impl;
  const std::shared_ptr<Impl>& impl() const { return impl_; }

 private:
  void check_type(DType t) const;
  std::shared_ptr<Impl> impl_;
};

PinnedBuffer empty_pinned(const Shape& shape, DType dtype = f64);
PinnedBuffer zeros_pinned(const Shape& shape, DType dtype = f64);
// A new array with the buffer's dtype, shape and contents, copied asynchronously on the
// current stream (the reference backend copies at once). Array::copy_to_host(PinnedBuffer)
// is the way back (array.hpp).
Array from_host(const PinnedBuffer& src);

namespace memory {
size_t pinned_used_bytes();   // bytes of pinned blocks in live PinnedBuffers
size_t pinned_total_bytes();  // bytes the pinned pool holds (used and free)
void pinned_free_all_blocks();  // waits for their last copies, then frees the unused blocks
}  // namespace memory

}  // namespace cufuse
