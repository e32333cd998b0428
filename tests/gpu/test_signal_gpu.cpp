// tests/gpu/test_signal_gpu.cpp: the generated convolution kernel on the device against the
// host reference (float64 sums; integers exact), on fresh random inputs: convolve2d and
// correlate2d over dtypes, modes, boundaries, filter sizes (exact rows, row- and
// column-chunked, larger than the image), strided and reversed views; np.convolve/correlate
// over lengths; an epilogue fused after the call; W10's shape.
#include <cmath>

#include "gpu_compare.hpp"

namespace {

using Vec = std::vector<double>;

// Random values of dtype t: normal for floats (no infinities), the full random range for integers.
cf::Array rnd(cf::DType t, const cf::Shape& s) { return cf::is_float(t) ? random_normal(t, s) : random_array(t, s); }

double rel_of(cf::DType out, int64_t taps) {
  switch (out) {
    case cf::DType::Float64: return 4e-16 * static_cast<double>(taps + 4);
    case cf::DType::Float32: return 2.4e-7 * static_cast<double>(taps + 4);
    case cf::DType::Float16: return 1e-3 + 2.4e-7 * static_cast<double>(taps);
    case cf::DType::BFloat16: return 8e-3 + 2.4e-7 * static_cast<double>(taps);
    default: return 0;  // integers and bool: exact
  }
}

// y = f(x, w) on the device against the reference; `mag` = f(|x|, |w|) bounds the rounding.
void check(const cf::Array& y, const cf::Array& mag, int64_t taps, const std::string& what) {
  const Vec want = host_values(cf::detail::reference_evaluate(y.node()));
  const Vec m = cf::is_float(y.dtype()) ? host_values(cf::detail::reference_evaluate(mag.astype(cf::f64).node())) : Vec{};
  cf::Array d = y;
  d.eval();  // y as its own root (as a user evaluates it), then widened for the comparison
  const Vec got = (d.dtype() == cf::f64 ? d : d.astype(cf::f64)).to_host<double>();
  REQUIRE_MESSAGE(got.size() == want.size(), what);
  const double rel = rel_of(y.dtype(), taps);
  int64_t bad = 0;
  for (size_t i = 0; i < got.size(); ++i) {
    const double tol = m.empty() ? 0.0 : rel * m[i] + 1e-300;
    const bool ok = got[i] == want[i] || std::fabs(got[i] - want[i]) <= tol;
    if (!ok && bad++ < 5) MESSAGE(what << ": [" << i << "] device " << got[i] << " reference " << want[i]);
  }
  CHECK_MESSAGE(bad == 0, what << ": " << bad << " of " << got.size() << " elements differ");
}

cf::Array mag_of(const cf::Array& a) { return cf::abs(a.astype(cf::f64)); }

}  // namespace

TEST_CASE("convolve2d and correlate2d on the device: dtypes, modes, boundaries") {
  struct T { cf::DType a, b; };
  const std::vector<T> types = {{cf::f64, cf::f64}, {cf::f32, cf::f32}, {cf::f16, cf::f16}, {cf::bf16, cf::bf16},
                                {cf::i32, cf::i32}, {cf::u8, cf::u8},   {cf::i64, cf::i8},  {cf::bool_, cf::bool_},
                                {cf::i8, cf::f32},  {cf::f32, cf::f64}};
  for (const auto& t : types) {
    const auto x = rnd(t.a, {37, 53});
    const auto w = rnd(t.b, {5, 4});
    for (const char* mode : {"full", "same", "valid"}) {
      for (const char* boundary : {"fill", "pad", "wrap", "symm"}) {  // 'pad': SciPy's other 'fill'
        for (bool corr : {false, true}) {
          const std::string what = std::string(corr ? "correlate2d " : "convolve2d ") + std::string(cf::name(t.a)) + "," +
                                   std::string(cf::name(t.b)) + " " + mode + " " + boundary;
          auto f = [&](const cf::Array& a, const cf::Array& b, double fill) {
            return corr ? cf::signal::correlate2d(a, b, mode, boundary, fill)
                        : cf::signal::convolve2d(a, b, mode, boundary, fill);
          };
          check(f(x, w, 1.5), f(mag_of(x), mag_of(w), 1.5), 20, what);
        }
      }
    }
  }
}

TEST_CASE("convolve2d on the device: filter sizes, chunking, filters larger than the image, views") {
  struct S { int64_t m1, n1, m2, n2; };
  for (const auto& s : std::vector<S>{{50, 45, 40, 35}, {64, 70, 33, 1}, {9, 7, 12, 16}, {1, 300, 1, 70}, {300, 1, 9, 1},
                                      {130, 140, 32, 32}, {3, 2, 7, 9}}) {
    for (const char* boundary : {"fill", "wrap", "symm"}) {
      for (const char* mode : {"full", "same"}) {
        const auto x = rnd(cf::f64, {s.m1, s.n1}), w = rnd(cf::f64, {s.m2, s.n2});
        const std::string what = "convolve2d (" + std::to_string(s.m1) + "," + std::to_string(s.n1) + ") * (" +
                                 std::to_string(s.m2) + "," + std::to_string(s.n2) + ") " + mode + " " + boundary;
        check(cf::signal::convolve2d(x, w, mode, boundary, -0.5),
              cf::signal::convolve2d(cf::abs(x), cf::abs(w), mode, boundary, 0.5), s.m2 * s.n2, what);
      }
    }
  }
  // Empty inputs (SciPy's shapes: 'valid' of two (0, n) inputs is (1, 1) of zeros, 'full' of
  // an empty image is the fill value's terms). Device fuzz seed 538946792347: the one-row
  // kernel staged filter row 0 of a (0, 5) filter, reading address 0.
  for (const char* mode : {"valid", "full", "same"}) {
    for (const auto& [img, flt] : std::vector<std::pair<cf::Shape, cf::Shape>>{
             {{0, 5}, {0, 5}}, {{0, 5}, {3, 2}}, {{4, 3}, {0, 2}}, {{0, 1}, {0, 1}}, {{1, 0}, {1, 0}}}) {
      if (std::string(mode) == "full" && ((img[0] == 0 && flt[0] == 0) || (img[1] == 0 && flt[1] == 0))) {
        CHECK_THROWS_WITH_AS(cf::signal::correlate2d(cf::ones(img), cf::ones(flt), mode), doctest::Contains("negative dimensions"),
                             cf::ValueError);  // as SciPy
        continue;
      }
      if (std::string(mode) == "valid" && img[0] == 0 && flt[0] > 0) continue;  // SciPy: neither covers the other
      for (cf::DType t : {cf::f32, cf::bool_}) {
        const auto x = rnd(t, img), w = rnd(t, flt);
        const std::string what = std::string("correlate2d empty ") + mode + " " + cf::to_string(img) + " " + cf::to_string(flt);
        const double fill = t == cf::bool_ ? 0.0 : 0.5;
        check(cf::signal::correlate2d(x, w, mode, "fill", fill), cf::signal::correlate2d(mag_of(x), mag_of(w), mode, "fill", fill),
              cf::numel(flt), what);
      }
    }
  }
  // An empty filter reads nothing: an empty image takes a wrapped or mirrored boundary too
  // (zeros; fuzz seed 418149582683, where the kernel refused to be emitted).
  for (const char* b : {"wrap", "symm"})
    for (const auto& [img, flt] : std::vector<std::pair<cf::Shape, cf::Shape>>{{{0, 33}, {33, 0}}, {{4, 0}, {0, 3}}, {{5, 6}, {0, 2}}}) {
      const auto x = rnd(cf::f32, img), w = rnd(cf::f32, flt);
      check(cf::signal::correlate2d(x, w, "full", b), cf::signal::correlate2d(mag_of(x), mag_of(w), "full", b), 1,
            std::string("correlate2d empty filter ") + b + " " + cf::to_string(img) + " " + cf::to_string(flt));
    }
  // Views: transposed, strided and reversed inputs are read in place.
  const auto base = rnd(cf::f32, {80, 90});
  const auto xv = base[{cf::slice(79, std::nullopt, -2), cf::slice(3, 87, 3)}].T();
  const auto wv = base[{cf::slice(10, 16), cf::slice(0, 14, 2)}];
  check(cf::signal::correlate2d(xv, wv, "same", "symm"), cf::signal::correlate2d(cf::abs(xv), cf::abs(wv), "same", "symm"),
        42, "correlate2d of views");
}

TEST_CASE("convolve and correlate on the device: lengths, swaps, modes") {
  for (auto [n, m] : std::vector<std::pair<int64_t, int64_t>>{{10000, 31}, {31, 10000}, {1, 1}, {7, 3}, {4097, 200}}) {
    for (const char* mode : {"full", "same", "valid"}) {
      const auto a = rnd(cf::f32, {n}), v = rnd(cf::f32, {m});
      const std::string what = "(" + std::to_string(n) + ", " + std::to_string(m) + ") " + mode;
      check(cf::convolve(a, v, mode), cf::convolve(cf::abs(a), cf::abs(v), mode), std::min(n, m), "convolve " + what);
      check(cf::correlate(a, v, mode), cf::correlate(cf::abs(a), cf::abs(v), mode), std::min(n, m), "correlate " + what);
    }
  }
  const auto ia = rnd(cf::i16, {500}), iv = rnd(cf::i16, {9});
  check(cf::convolve(ia, iv, "same"), cf::convolve(ia, iv, "same"), 9, "convolve int16");
}

TEST_CASE("a convolution's elementwise consumers are one kernel after it; W10's shape") {
  const auto x = rnd(cf::f64, {512, 512}), g = rnd(cf::f64, {15, 15});
  auto y = cf::sqrt(cf::abs(cf::signal::convolve2d(x, g))) * 2.0 + 1.0;
  const uint64_t before = cf::stats().kernels_launched;
  y.eval();
  CHECK(cf::stats().kernels_launched - before == 2);  // the convolution, then one epilogue kernel
  check(y, cf::sqrt(cf::signal::convolve2d(cf::abs(x), cf::abs(g))) * 2.0 + 1.0, 225, "epilogue after convolve2d");

  // W10: f64 (2048, 2048) * (15, 15), full. The reference checks the last 62 rows' first 40
  // columns, which read image rows 1986.. and columns 0..39 (the rest is the fill value).
  const auto big = rnd(cf::f64, {2048, 2048});
  auto full = cf::signal::convolve2d(big, g);
  REQUIRE(full.shape() == cf::Shape{2062, 2062});
  const Vec got = full[{cf::slice(2000, 2062), cf::slice(0, 40)}].copy().to_host<double>();
  const auto sub = big[{cf::slice(1986, 2048), cf::slice(0, 40)}].copy();
  const Vec want = host_values(cf::detail::reference_evaluate(
      cf::signal::convolve2d(sub, g)[{cf::slice(14, 76), cf::slice(0, 40)}].node()));
  const Vec mag = host_values(cf::detail::reference_evaluate(
      cf::signal::convolve2d(cf::abs(sub), cf::abs(g))[{cf::slice(14, 76), cf::slice(0, 40)}].node()));
  REQUIRE(got.size() == want.size());
  int64_t bad = 0;
  for (size_t i = 0; i < got.size(); ++i) bad += std::fabs(got[i] - want[i]) > rel_of(cf::f64, 225) * mag[i];
  CHECK_MESSAGE(bad == 0, "W10 corner: " << bad << " elements differ");
}

TEST_CASE("a convolution inside fuse() replays on the device with the unfused values") {
  auto blur = cf::fuse([](auto x, auto k) { return cf::signal::convolve2d(x, k, "same", "wrap") * 0.5f; });
  for (int call = 0; call < 3; ++call) {
    const auto x = rnd(cf::f32, {300, 200}), k = rnd(cf::f32, {7, 7});
    const cf::Array want = cf::signal::convolve2d(x, k, "same", "wrap") * 0.5f;
    CHECK(same_bits(blur(x, k), want));
  }
  CHECK(blur.stats().traces == 1);
}
