// tests/gpu/test_sorting_gpu.cpp: issue 33's sort node on the device against the host reference
// backend, on fresh random inputs with NaNs (both signs), -0.0, infinities, ties and each
// dtype's extremes: sort and argsort bit for bit (the same keys, a stable sort) in every dtype
// on each CUB path (one row of odd lengths, CUB's single tile and many tiles, and a few long
// rows sorted one by one, where CUB maps the elements' bits itself; many short rows as one
// segmented sort of the key kernel's keys) and along every axis of a 3-D array; then the
// functions built on it (searchsorted, unique with every output, isin, median, quantile,
// nanmedian) and the kernel counts around the node (its producer fused into the kernel that
// writes its input).
#include <fmt/format.h>

#include <cstring>

#include "gpu_compare.hpp"

namespace {

const cf::DType kAll[] = {cf::bool_, cf::i8, cf::i16, cf::i32, cf::i64, cf::u8, cf::u16,
                          cf::u32,   cf::u64, cf::f16, cf::bf16, cf::f32, cf::f64};

// Random bytes of dtype t with, for floats, NaNs of both signs here and there.
std::vector<unsigned char> sort_input(cf::DType t, int64_t n, int kind = kGeneral) {
  auto b = random_bytes(t, n, kind);
  if (!cf::is_float(t)) return b;
  const int w = cf::itemsize(t);
  std::uniform_int_distribution<int64_t> d(0, std::max<int64_t>(n - 1, 0));
  for (int k = 0; k < std::min<int64_t>(n / 50 + 1, 64) && n > 0; ++k) {
    const int64_t i = d(rng());
    const uint64_t nan = w == 2 ? (t == cf::f16 ? 0x7e01 : 0x7fc1) : (w == 4 ? 0x7fc00001ull : 0x7ff8000000000001ull);
    const uint64_t v = k % 2 ? nan | (uint64_t(1) << (w * 8 - 1)) : nan;  // a payload, either sign
    std::memcpy(b.data() + i * w, &v, static_cast<size_t>(w));
  }
  return b;
}

std::vector<unsigned char> bytes(const cf::Array& a) {
  std::vector<unsigned char> b(static_cast<size_t>(a.nbytes()));
  a.copy_to_host(b.data(), b.size());
  return b;
}

// f(x) on the device and on the reference backend, from the same bytes: the same bits.
template <class F>
void same_on_both(cf::DType t, const cf::Shape& s, F f, const std::string& what, int kind = kGeneral) {
  auto in = sort_input(t, cf::numel(s), kind);
  cf::Array dev = f(cf::from_host(in.data(), t, s));
  dev.eval();
  std::vector<unsigned char> want;
  {
    cf::BackendScope ref(cf::Backend::Reference);
    want = bytes(f(cf::from_host(in.data(), t, s)));
  }
  CHECK_MESSAGE(dev.shape() == f(cf::from_host(in.data(), t, s)).shape(), what);
  const auto got = bytes(dev);
  std::string diff;  // the first mismatches: element, device bits, reference bits
  const size_t w = got.size() == want.size() && cf::numel(dev.shape()) > 0 ? got.size() / static_cast<size_t>(cf::numel(dev.shape())) : 0;
  for (size_t i = 0, shown = 0; w > 0 && i < got.size() / w && shown < 4; ++i)
    if (std::memcmp(got.data() + i * w, want.data() + i * w, w) != 0) {
      uint64_t g = 0, r = 0;
      std::memcpy(&g, got.data() + i * w, w);
      std::memcpy(&r, want.data() + i * w, w);
      diff += fmt::format(" [{}] 0x{:x} vs 0x{:x}", i, g, r);
      ++shown;
    }
  CHECK_MESSAGE(got == want, what << " " << cf::name(t) << " " << cf::to_string(s) << diff);
}

}  // namespace

TEST_CASE("gpu: sort and argsort match the reference bit for bit, every dtype and CUB path") {
  for (cf::DType t : kAll) {
    for (const cf::Shape& s : {cf::Shape{1}, cf::Shape{3}, cf::Shape{12345}, cf::Shape{1000003}, cf::Shape{4, 140001},
                               cf::Shape{513, 301}, cf::Shape{20000, 7}, cf::Shape{3, 0}, cf::Shape{2, 3, 0}}) {
      same_on_both(t, s, [](const cf::Array& x) { return cf::sort(x); }, "sort");
      same_on_both(t, s, [](const cf::Array& x) { return cf::argsort(x); }, "argsort");
    }
    for (int axis : {0, 1, 2})
      same_on_both(t, cf::Shape{33, 17, 9}, [axis](const cf::Array& x) { return cf::argsort(x, axis); }, "argsort axis");
    same_on_both(t, cf::Shape{40, 50}, [](const cf::Array& x) { return cf::sort(x, std::nullopt); }, "sort None");
  }
  // many ties: the stable order of equal keys
  same_on_both(cf::f32, cf::Shape{1 << 20}, [](const cf::Array& x) { return cf::argsort(x); }, "ties", kSmallInts);
  same_on_both(cf::i64, cf::Shape{300, 1000}, [](const cf::Array& x) { return cf::argsort(x, 0); }, "ties", kSmallInts);
}

TEST_CASE("gpu: the producer is fused into the node's input, the consumer after it") {
  auto x = random_array(cf::f32, {256, 512});
  x.eval();
  cf::Array e = cf::exp(x) * 2;  // the device's own exp values (the host's differ in the last ulp)
  e.eval();
  cf::reset_stats();
  cf::Array y = cf::sort(cf::exp(x) * 2, 1) - 1;
  y.eval();
  // one kernel writes exp(x) * 2, the node (counted as one: its key, CUB's and store kernels
  // are the call's, as on the reference backend), one kernel after it
  CHECK(cf::stats().kernels_launched == 3);
  cf::Array r;
  {
    cf::BackendScope ref(cf::Backend::Reference);
    auto b = bytes(e);
    r = cf::sort(cf::from_host(b.data(), cf::f32, x.shape()), 1) - 1;
    r.eval();
  }
  CHECK(bytes(y) == bytes(r));
}

TEST_CASE("gpu: searchsorted, unique, isin, median and quantiles match the reference") {
  for (cf::DType t : kAll) {
    same_on_both(t, cf::Shape{5000}, [](const cf::Array& x) {
      auto a = cf::sort(x.index({cf::slice(0, 1000)}));
      return cf::searchsorted(a, x.index({cf::slice(1000, 5000)}), "right");
    }, "searchsorted");
    same_on_both(t, cf::Shape{20000}, [](const cf::Array& x) { return cf::unique(x, true, true, true).inverse; },
                 "unique inverse", kSmallInts);
    same_on_both(t, cf::Shape{20000}, [](const cf::Array& x) { return cf::unique(x, true, false, true).counts; },
                 "unique counts");
    same_on_both(t, cf::Shape{3000}, [](const cf::Array& x) {
      return cf::isin(x, x.index({cf::slice(0, 500)}) + cf::full({}, 1, x.dtype()));
    }, "isin");
    if (t == cf::bool_) continue;
    same_on_both(t, cf::Shape{64, 301}, [](const cf::Array& x) { return cf::median(x, 1); }, "median");
    same_on_both(t, cf::Shape{64, 301}, [](const cf::Array& x) { return cf::quantile(x, 0.37, 0); }, "quantile");
    same_on_both(t, cf::Shape{64, 301}, [](const cf::Array& x) { return cf::nanmedian(x, 1); }, "nanmedian");
  }
}

// Found while merging (fixed in 22761d3): a gather through argsort's indices, read at two shifted
// slices inside a concatenation part (unique's run starts), read the gather's source at the
// mapped positions on the device, skipping the indices (the index map wrapped the gather
// instead of moving its indices); unique's inverse and counts failed through it.
TEST_CASE("gpu: run starts of values gathered through argsort, read at shifted slices, match the reference") {
  std::vector<int8_t> x(20000);
  for (size_t i = 0; i < x.size(); ++i) x[i] = static_cast<int8_t>((i * 37) % 11);
  auto starts = [&] {
    const cf::Array xs = cf::from_host(x);
    const cf::Array sv = cf::take(xs, cf::argsort(xs));
    const cf::Array hi = sv.index({cf::slice(1, 20000)}), lo = sv.index({cf::slice(0, 19999)});
    return cf::concatenate({cf::ones(cf::Shape{1}, cf::DType::Bool), cf::not_equal(hi, lo)}).astype(cf::DType::Int64);
  };
  const std::vector<int64_t> dev = starts().to_host<int64_t>();
  std::vector<int64_t> ref;
  {
    cf::BackendScope r(cf::Backend::Reference);
    ref = starts().to_host<int64_t>();
  }
  CHECK(dev == ref);
}
