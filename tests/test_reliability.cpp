// tests/test_reliability.cpp: issue 38's smaller defects, each pinned: user kernel names
// checked where they are compiled (RawKernel, RawModule::get_function, from the CUBIN's
// symbols, no GPU needed); the read-only view messages say what the view is; NoDeviceError
// points at the reference backend; synchronize, stream and event waits are no-ops on the
// reference backend (a GPU program runs there unchanged); slicing with step INT64_MIN; the
// CUBIN symbol reader on damaged input.
#include <doctest/doctest.h>

#include <algorithm>
#include <climits>
#include <random>

#include "codegen/cubin_symbols.hpp"
#include "cufuse/cufuse.hpp"
#include "test_sandbox.hpp"

namespace cf = cufuse;

namespace {
const char* kTwoKernels = R"(
extern "C" __global__ void scale(float* y, float a, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) y[i] = a * y[i];
}
extern "C" __global__ void shift(float* y, float b, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) y[i] += b;
}
__global__ void mangled_one(float* y) { y[0] = 1; }
)";
}  // namespace

TEST_CASE("reliability: kernel names are checked when a RawKernel or a module's function is compiled") {
  cf::RawKernel good(kTwoKernels, "scale");
  CHECK_NOTHROW(good.compile());
  cf::RawKernel typo(kTwoKernels, "kk");
  CHECK_THROWS_WITH_AS(typo.compile(), doctest::Contains("defines no kernel named 'kk'"), cf::ValueError);
  CHECK_THROWS_WITH_AS(typo.compile(), doctest::Contains("its kernels: "), cf::ValueError);
  try {
    typo.compile();
  } catch (const cf::ValueError& e) {
    const std::string m = e.what();
    CHECK(m.find("scale") != std::string::npos);
    CHECK(m.find("shift") != std::string::npos);
    CHECK(m.find("extern \"C\"") != std::string::npos);
  }
  // A C++ (mangled) kernel is found by its mangled name only, and the message says why.
  CHECK_THROWS_WITH_AS(cf::RawKernel(kTwoKernels, "mangled_one").compile(), doctest::Contains("mangled"), cf::ValueError);
  cf::RawModule mod(kTwoKernels);
  CHECK_NOTHROW(mod.get_function("shift"));
  CHECK_NOTHROW(mod.get_function("scale"));
  CHECK_THROWS_WITH_AS(mod.get_function("nope"), doctest::Contains("RawModule::get_function: the source defines no kernel named 'nope'"),
                       cf::ValueError);
  // The CUBIN reader names exactly the entries (not the device functions, not the others').
  auto k = cufuse::detail::compile_kernel(kTwoKernels, "scale", 90);
  auto names = cufuse::detail::cubin_entry_names(k->cubin);
  REQUIRE(names);
  std::sort(names->begin(), names->end());
  CHECK(names->size() == 3);
  CHECK((*names)[0] == "_Z11mangled_onePf");
  CHECK((*names)[1] == "scale");
  CHECK((*names)[2] == "shift");
}

TEST_CASE("reliability: the CUBIN symbol reader refuses damaged input without reading past it") {
  auto k = cufuse::detail::compile_kernel(kTwoKernels, "shift", 90);
  const std::vector<char> good = k->cubin;
  CHECK_FALSE(cufuse::detail::cubin_entry_names({}).has_value());
  CHECK_FALSE(cufuse::detail::cubin_entry_names(std::vector<char>(good.begin(), good.begin() + 40)).has_value());
  std::mt19937_64 rng(38);
  int read = 0;
  for (int trial = 0; trial < 2000; ++trial) {
    std::vector<char> bad = good;
    if (trial % 3 == 0) bad.resize(rng() % good.size());
    for (int f = 0; f < 1 + int(rng() % 8); ++f)
      if (!bad.empty()) bad[rng() % bad.size()] = char(rng());
    auto names = cufuse::detail::cubin_entry_names(bad);  // no crash; ASan checks the reads
    read += names.has_value();
  }
  MESSAGE(read << " of 2000 damaged CUBINs still had a readable symbol table");
}

TEST_CASE("reliability: a read-only destination's message says what the view is") {
  cf::BackendScope ref(cf::Backend::Reference);
  cf::Array a = cf::zeros({3, 3});
  a.eval();
  CHECK_THROWS_WITH_AS((cf::diagonal(a)[{0}] = 1.0), doctest::Contains("a read-only view of shape ()"), cf::ValueError);
  CHECK_THROWS_WITH_AS((cf::diagonal(a)[{0}] = 1.0), doctest::Contains("diagonal()"), cf::ValueError);
  cf::Array d = cf::diagonal(a);
  CHECK_THROWS_WITH_AS((d += 1.0), doctest::Contains("a read-only view of shape (3,)"), cf::ValueError);
  cf::Array b = cf::ones({3}).broadcast_to({4, 3});
  // A row of it has no stride 0 left: the message names both kinds of read-only view.
  CHECK_THROWS_WITH_AS((b[{1}] = 0.0), doctest::Contains("a read-only view of shape (3,) (diagonal() and broadcast_to()"),
                       cf::ValueError);
  CHECK_THROWS_WITH_AS((b += 1.0), doctest::Contains("a broadcast view of shape (4, 3)"), cf::ValueError);
  a[{1, 1}] = 5.0;  // the array itself stays writable
  CHECK(a.to_host<double>()[4] == 5.0);
}

TEST_CASE("reliability: NoDeviceError suggests the reference backend") {
  if (cf::Device::available()) return;  // (GPU machine: nothing to check)
  cf::BackendScope cuda(cf::Backend::Cuda);
  CHECK_THROWS_WITH_AS(cf::synchronize(), doctest::Contains("CUFUSE_BACKEND=reference"), cf::NoDeviceError);
  CHECK_THROWS_WITH_AS(cf::ones({3}).eval(), doctest::Contains("CUFUSE_BACKEND=reference"), cf::NoDeviceError);
}

TEST_CASE("reliability: synchronize, stream and event waits are no-ops on the reference backend") {
  cf::BackendScope ref(cf::Backend::Reference);
  cf::Array x = cf::arange(8).astype(cf::f32) * 2.0f;
  cf::Stream s;
  {
    cf::StreamScope on(s);
    cf::Event start(true), stop(true);
    start.record();
    x += 1.0f;  // a pending write, settled at the boundary
    x.eval();
    stop.record(s);
    CHECK_NOTHROW(cf::synchronize());
    CHECK_NOTHROW(cf::Device::current().synchronize());
    CHECK_NOTHROW(s.synchronize());
    CHECK_NOTHROW(stop.synchronize());
    CHECK(stop.query());
    CHECK(s.query());
    CHECK_NOTHROW(cf::Stream::current().wait(stop));
    CHECK(cf::Event::elapsed_ms(start, stop) >= 0.0f);
  }
  CHECK(x.to_host<float>()[3] == 7.0f);
  cf::Event untimed(false);
  untimed.record();
  CHECK_THROWS_AS(cf::Event::elapsed_ms(untimed, untimed), cf::ValueError);
}

TEST_CASE("reliability: slices with step INT64_MIN or INT64_MAX") {
  cf::BackendScope ref(cf::Backend::Reference);
  cf::Array x = cf::arange(10);
  cf::Array r = x[{cf::slice(cf::none, cf::none, INT64_MIN)}];
  CHECK(r.shape() == cf::Shape{1});
  CHECK(r.to_host<int64_t>()[0] == 9);
  cf::Array f = x[{cf::slice(cf::none, cf::none, INT64_MAX)}];
  CHECK(f.shape() == cf::Shape{1});
  CHECK(f.to_host<int64_t>()[0] == 0);
  cf::Array e = x[{cf::slice(INT64_MIN, INT64_MAX, INT64_MIN)}];
  CHECK(e.shape() == cf::Shape{0});
}

TEST_CASE("reliability: an invalid DType value is a TypeError, not a read out of bounds") {
  cf::BackendScope ref(cf::Backend::Reference);
  const auto bad = static_cast<cf::DType>(200);
  CHECK_THROWS_AS((void)cf::itemsize(bad), cf::TypeError);
  CHECK_THROWS_WITH_AS((void)cf::name(bad), doctest::Contains("invalid dtype value 200"), cf::TypeError);
  CHECK_THROWS_AS(cf::zeros({3}, bad), cf::Error);
  CHECK_THROWS_AS(cf::ones({3}).astype(bad).eval(), cf::Error);
}

TEST_CASE("reliability: a 0-d kernel is planned, emitted and evaluated (valgrind: no uninitialised read)") {
  cf::BackendScope ref(cf::Backend::Reference);
  cf::Array x = cf::full({}, 3.0);
  cf::Array y = cf::sqrt(x * x + 7.0) - 1.0;
  cf::reset_stats();
  CHECK(y.to_host<double>()[0] == 3.0);
  CHECK(cf::stats().kernels_launched == 1);
  cf::Array s = cf::sum(cf::full({}, 2.0) * 4.0);  // a 0-d reduction of a 0-d input
  CHECK(s.to_host<double>()[0] == 8.0);
}

TEST_CASE("reliability: diagonal offsets at the ends of int64 are empty diagonals") {
  cf::BackendScope ref(cf::Backend::Reference);
  cf::Array a = cf::arange(12).reshape({3, 4});
  CHECK(cf::diagonal(a, INT64_MIN).shape() == cf::Shape{0});
  CHECK(cf::diagonal(a, INT64_MAX).shape() == cf::Shape{0});
  CHECK(cf::diagonal(a, -3).shape() == cf::Shape{0});
  CHECK(cf::diagonal(a, 4).shape() == cf::Shape{0});
  CHECK(cf::diagonal(a, -2).to_host<int64_t>() == std::vector<int64_t>{8});
  CHECK(cf::diagonal(a, 3).to_host<int64_t>() == std::vector<int64_t>{3});
  CHECK(cf::trace(a, INT64_MIN).to_host<int64_t>()[0] == 0);
}
