// tests/test_streams.cpp: streams, devices and the profiler without a GPU: an op mixing
// devices names both (arrays on stand-in device storages that nothing reads), the record of
// a storage's use on other streams, to_device and benchmark refusing plainly without a
// device, and profiler results printed exactly as cupyx.profiler.benchmark prints them.
#include <cmath>
#include <sstream>

#include "exec/binding.hpp"
#include "runtime/storage.hpp"
#include "test_core_helpers.hpp"

namespace {

// Device memory that is never touched: for building graphs on a machine with no GPU.
std::shared_ptr<cf::detail::Storage> stand_in(int device, void* stream = nullptr) {
  auto st = std::make_shared<cf::detail::Storage>();
  st->ptr = reinterpret_cast<void*>(uintptr_t(0x100000) * uintptr_t(device + 2));
  st->nbytes = 1024;
  st->device = device;
  st->stream = stream;
  st->release = [](cf::detail::Storage&) {};  // not ours to free
  return st;
}

cf::Array on_device(int device, const cf::Shape& shape = {16}) {
  return cf::Array(cf::detail::make_buffer(cf::f32, cf::detail::contiguous_layout(shape), stand_in(device)));
}

}  // namespace

TEST_CASE("devices: an op mixing devices throws an error naming both") {
  auto a = on_device(0), b = on_device(1);
  CHECK(a.device() == 0);
  CHECK(b.device() == 1);
  CHECK_NOTHROW(a * 2 + a);  // building only
  try {
    (void)(a + b);
    FAIL("mixing devices was accepted");
  } catch (const cf::ValueError& e) {
    const std::string w = e.what();
    CHECK(w.find("device 0") != std::string::npos);
    CHECK(w.find("device 1") != std::string::npos);
    CHECK(w.find("to_device") != std::string::npos);
  }
  // deep in lazy graphs too
  auto la = cf::sin(a) * 3, lb = cf::exp(b(cf::slice(0, 8))) - 1;
  CHECK_THROWS_WITH_AS(la(cf::slice(0, 8)) + lb, doctest::Contains("device 1"), cf::ValueError);
  CHECK_THROWS_AS(cf::where(a > 0, a, b), cf::ValueError);
  // host memory (reference backend) and a device
  cf::BackendScope ref(cf::Backend::Reference);
  auto h = cf::from_host(std::vector<float>(16, 1.0f));
  CHECK_THROWS_WITH_AS(h + a, doctest::Contains("the host"), cf::ValueError);
  // scalars and generators have no device
  CHECK_NOTHROW(a + cf::arange(16).astype(cf::f32) + 1.5f);
  // user kernels check too
  cf::ElementwiseKernel k("T x, T y", "T z", "z = x + y", "add");
  CHECK_THROWS_WITH_AS(k(a, b), doctest::Contains("device 1"), cf::ValueError);
}

TEST_CASE("streams: a storage records the other streams that used it, once each") {
  void* s1 = reinterpret_cast<void*>(0x51);
  void* s2 = reinterpret_cast<void*>(0x52);
  auto st = stand_in(0, s1);
  cf::detail::note_stream_use(*st, s1, 0);  // its own stream: nothing to record
  CHECK(st->other_streams.empty());
  cf::detail::note_stream_use(*st, s2, 0);
  cf::detail::note_stream_use(*st, s2, 0);
  REQUIRE(st->other_streams.size() == 1);
  CHECK(st->other_streams[0].stream == s2);
  cf::detail::note_stream_use(*st, nullptr, 0);  // the legacy default stream is another stream
  CHECK(st->other_streams.size() == 2);
  auto host = cf::detail::allocate_host(64);
  cf::detail::note_stream_use(*host, s2, 0);  // host memory has no streams
  CHECK(host->other_streams.empty());
}

TEST_CASE("devices and streams: plain errors where there is no device") {
  if (cf::Device::available()) {
    MESSAGE("a device is present: the no-device errors are not exercised here");
    return;
  }
  auto a = on_device(0);
  CHECK_THROWS_AS(a.to_device(1), cf::NoDeviceError);
  CHECK_THROWS_AS(cf::profiler::benchmark([] {}, 3, 1), cf::NoDeviceError);
  cf::Stream s;  // building streams and events needs no device
  cf::Event e;
  CHECK_NOTHROW(s.wait(e));  // never recorded: nothing to wait for
  CHECK_THROWS_AS(e.record(s), cf::NoDeviceError);
}

TEST_CASE("profiler: results print as cupyx.profiler.benchmark prints them") {
  cf::profiler::BenchmarkResult r;
  r.name = "squared_diff";
  r.cpu_times = {31.5e-6, 38.5e-6};
  r.devices = {0};
  r.gpu_times = {{40e-6, 44e-6}};
  CHECK(r.to_str() ==
        "squared_diff        :    CPU:    35.000 us   +/-  3.500 (min:    31.500 / max:    38.500) us"
        "     GPU-0:    42.000 us   +/-  2.000 (min:    40.000 / max:    44.000) us");
  CHECK(r.to_str(false) == "squared_diff        :    CPU:    35.000 us   +/-  3.500 (min:    31.500 / max:    38.500) us");
  cf::profiler::BenchmarkResult one;
  one.name = "f";
  one.cpu_times = {2e-6};
  one.devices = {1};
  one.gpu_times = {{3e-6}};
  std::ostringstream os;
  os << one;
  CHECK(os.str() == "f                   :    CPU:     2.000 us     GPU-1:     3.000 us");
  CHECK(r.cpu_mean() == doctest::Approx(35e-6));
  CHECK(r.gpu_mean() == doctest::Approx(42e-6));
  CHECK(std::isnan(r.gpu_mean(1)));  // one device timed
  CHECK(std::isnan(cf::profiler::BenchmarkResult{}.cpu_mean()));
  CHECK_THROWS_AS(cf::profiler::benchmark([] {}, 0, 1), cf::ValueError);
}
