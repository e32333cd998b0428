// cufuse/shape.hpp: Shape and Strides, small vectors of int64 that live inline
// up to 8 dimensions (no heap traffic when building graph nodes) and on the heap past that.
#pragma once
#include <algorithm>
#include <cstdint>
#include <initializer_list>
#include <memory>
#include <string>
#include <type_traits>
#include <vector>

namespace cufuse {

template <class T, int N>
class SmallVec {
 public:
  SmallVec() = default;
  SmallVec(std::initializer_list<T> il) { assign(il.begin(), il.end()); }
  explicit SmallVec(size_t n, T v = T{}) { resize(n, v); }
  template <class It, class = decltype(*std::declval<It>())>
  SmallVec(It b, It e) { assign(b, e); }
  SmallVec(const std::vector<T>& v) { assign(v.begin(), v.end()); }  // NOLINT: implicit on purpose
  SmallVec(const SmallVec& o) { assign(o.begin(), o.end()); }
  SmallVec& operator=(const SmallVec& o) {
    if (this != &o) assign(o.begin(), o.end());
    return *this;
  }
  SmallVec(SmallVec&& o) noexcept { *this = std::move(o); }
  SmallVec& operator=(SmallVec&& o) noexcept {
    if (this == &o) return *this;
    clear();
    if (o.heap_) {
      heap_ = std::move(o.heap_);
      cap_ = o.cap_;
      size_ = o.size_;
      o.cap_ = N;
      o.size_ = 0;
    } else {
      heap_.reset();
      cap_ = N;
      size_ = o.size_;
      std::move(o.inline_, o.inline_ + o.size_, inline_);
      o.clear();
    }
    return *this;
  }

  template <class It>
  void assign(It b, It e) {
    size_t n = static_cast<size_t>(std::distance(b, e));
    clear();
    reserve(n);
    std::copy(b, e, data());
    size_ = n;
  }
  void reserve(size_t n) {
    if (n <= cap_) return;
    auto p = std::make_unique<T[]>(n);
    std::move(data(), data() + size_, p.get());
    for (size_t i = 0; i < size_; ++i) data()[i] = T{};
    heap_ = std::move(p);
    cap_ = n;
  }
  void resize(size_t n, T v = T{}) {
    reserve(n);
    for (size_t i = size_; i < n; ++i) data()[i] = v;
    if constexpr (!std::is_trivially_destructible_v<T>)
      for (size_t i = n; i < size_; ++i) data()[i] = T{};
    size_ = n;
  }
  void push_back(T v) {
    if (size_ == cap_) reserve(cap_ * 2);
    data()[size_++] = std::move(v);  // a shared_ptr moves in: no count traffic
  }
  void pop_back() {
    --size_;
    if constexpr (!std::is_trivially_destructible_v<T>) data()[size_] = T{};
  }
  void insert_at(size_t pos, T v) {
    push_back(v);
    std::rotate(data() + pos, data() + size_ - 1, data() + size_);
  }
  void erase_at(size_t pos) {
    std::rotate(data() + pos, data() + pos + 1, data() + size_);
    pop_back();
  }
  // Removed elements are reset (so a vector of shared_ptr lets go of what it held).
  void clear() {
    if constexpr (!std::is_trivially_destructible_v<T>)
      for (size_t i = 0; i < size_; ++i) data()[i] = T{};
    size_ = 0;
  }

  T* data() { return heap_ ? heap_.get() : inline_; }
  const T* data() const { return heap_ ? heap_.get() : inline_; }
  size_t size() const { return size_; }
  int ndim() const { return static_cast<int>(size_); }
  bool empty() const { return size_ == 0; }
  T& operator[](size_t i) { return data()[i]; }
  const T& operator[](size_t i) const { return data()[i]; }
  T& back() { return data()[size_ - 1]; }
  const T& back() const { return data()[size_ - 1]; }
  T* begin() { return data(); }
  T* end() { return data() + size_; }
  const T* begin() const { return data(); }
  const T* end() const { return data() + size_; }
  std::vector<T> vec() const { return std::vector<T>(begin(), end()); }

  friend bool operator==(const SmallVec& a, const SmallVec& b) {
    if (a.size_ != b.size_) return false;
    const T* pa = a.data();
    const T* pb = b.data();
    for (size_t i = 0; i < a.size_; ++i)  // a few entries: a loop, not a memcmp call
      if (!(pa[i] == pb[i])) return false;
    return true;
  }
  friend bool operator!=(const SmallVec& a, const SmallVec& b) { return !(a == b); }

 private:
  T inline_[N];  // not zeroed: only [0, size_) is ever read
  std::unique_ptr<T[]> heap_;
  size_t cap_ = N;
  size_t size_ = 0;
};

using Shape = SmallVec<int64_t, 8>;
using Strides = SmallVec<int64_t, 8>;  // in elements, may be negative or zero
using Axes = SmallVec<int, 8>;

// Number of elements (1 for a 0-d shape).
inline int64_t numel(const Shape& s) {
  int64_t n = 1;
  for (auto d : s) n *= d;
  return n;
}
// Row-major strides in elements.
inline Strides contiguous_strides(const Shape& s) {
  Strides st(s.size());
  int64_t acc = 1;
  for (int i = s.ndim() - 1; i >= 0; --i) {
    st[i] = acc;
    acc *= std::max<int64_t>(s[i], 1);
  }
  return st;
}
// "(4096, 4096)": NumPy's spelling, used in every error message.
std::string to_string(const Shape& s);

}  // namespace cufuse
