// tests/test_runtime.cpp: the runtime layer where there may be no GPU: device discovery and
// the "no CUDA device" errors, streams/events/scopes as bookkeeping, host storage, CUDA
// error mapping, byte formatting, and when a plan gets its kernel chain. Checks that only
// hold without a device say so and are skipped (with a message) on a GPU machine; the rest
// run anywhere.
#include <doctest/doctest.h>

#include <cuda_runtime_api.h>

#include <cstdint>
#include <cstring>
#include <string>
#include <thread>
#include <vector>

#include "cufuse/memory.hpp"
#include "cufuse/stream.hpp"
#include "runtime/device.hpp"
#include "runtime/kernel_chain.hpp"
#include "runtime/launch.hpp"
#include "runtime/runtime_internal.hpp"
#include "runtime/storage.hpp"
#include "runtime/transfer.hpp"

namespace cf = cufuse;
namespace cd = cufuse::detail;

namespace {

bool starts_with(const std::string& s, const std::string& p) { return s.rfind(p, 0) == 0; }
bool contains(const std::string& s, const std::string& p) { return s.find(p) != std::string::npos; }

// Runs f, expects NoDeviceError with the documented message.
template <class F>
void check_no_device(F&& f, const char* what) {
  INFO(what);
  bool thrown = false;
  try {
    f();
  } catch (const cf::NoDeviceError& e) {
    thrown = true;
    std::string m = e.what();
    CHECK(starts_with(m, "no CUDA device"));
    CHECK(contains(m, "Planning, code generation and NVRTC compilation still work without one"));
    CHECK(e.kind() == cf::ErrorKind::NoDevice);
  }
  CHECK(thrown);
}

#define SKIP_WITH_DEVICE()                                                   \
  if (cf::Device::available()) {                                             \
    MESSAGE("skipped: this check is for machines without a CUDA device");    \
    return;                                                                  \
  }

}  // namespace

TEST_CASE("runtime: without a device, count() is 0 and the reason says why") {
  SKIP_WITH_DEVICE();
  CHECK(cf::Device::count() == 0);
  CHECK_FALSE(cf::Device::available());
  std::string why = cf::Device::unavailable_reason();
  CHECK_FALSE(why.empty());
  CHECK(contains(why, "cudaGetDeviceCount"));
  // The CUDA error string is part of it, e.g. "cudaErrorNoDevice: no CUDA-capable device...".
  CHECK(contains(why, "cudaError"));
  // Asking twice gives the same answer without throwing (it is probed once).
  CHECK(cf::Device::count() == 0);
  CHECK(cf::Device::unavailable_reason() == why);
}

TEST_CASE("runtime: without a device, everything that needs one throws NoDeviceError") {
  SKIP_WITH_DEVICE();
  check_no_device([] { cd::require_device(); }, "require_device");
  check_no_device([] { cd::allocate_device(16); }, "allocate_device");
  check_no_device([] { cd::allocate_device(0); }, "allocate_device(0)");
  check_no_device([] { cd::device_props(0); }, "device_props");
  check_no_device([] { cf::Device(0).use(); }, "Device::use");
  check_no_device([] { cf::Device(0).name(); }, "Device::name");
  check_no_device([] { cf::Device(0).synchronize(); }, "Device::synchronize");
  check_no_device([] { cf::DeviceScope s(0); }, "DeviceScope");
  check_no_device([] { cf::synchronize(); }, "synchronize");
  check_no_device([] { cf::memory::used_bytes(); }, "used_bytes");
  check_no_device([] { cf::memory::total_bytes(); }, "total_bytes");
  check_no_device([] { cf::memory::free_all_blocks(); }, "free_all_blocks");
  check_no_device([] { cf::Stream().native(); }, "Stream::native");
  check_no_device([] { cf::Stream::null().synchronize(); }, "null stream synchronize");
  check_no_device([] { cf::Event().record(); }, "Event::record");
  check_no_device([] { cf::Event().native(); }, "Event::native");
  std::vector<char> junk(16, 0);
  check_no_device([&] { cd::load_kernel(junk, "k", 0); }, "load_kernel");
  char buf[8] = {};
  check_no_device([&] { cd::copy_to_host(buf, buf, 4, nullptr); }, "copy_to_host");
  check_no_device([&] { cd::copy_from_host(buf, buf, 4, nullptr); }, "copy_from_host");
  check_no_device([&] { cd::copy_device(buf, buf, 4, nullptr); }, "copy_device");
  // Zero-byte copies have nothing to do and need no device.
  CHECK_NOTHROW(cd::copy_to_host(buf, buf, 0, nullptr));
  CHECK_NOTHROW(cd::copy_from_host(buf, buf, 0, nullptr));
  CHECK_NOTHROW(cd::copy_device(buf, buf, 0, nullptr));
}

TEST_CASE("runtime: Device, Stream and Event objects are made without touching a device") {
  // Holds with or without a GPU: none of these creates a CUDA object.
  CHECK_NOTHROW(cf::Device());
  CHECK_NOTHROW(cf::Device(0));
  CHECK_NOTHROW(cf::Device::current());
  CHECK(cf::Device().id() == cd::current_device());
  CHECK_NOTHROW(cf::Stream());
  CHECK_NOTHROW(cf::Stream::null());
  CHECK_NOTHROW(cf::Stream::current());
  CHECK_NOTHROW(cf::Event());
  CHECK_NOTHROW(cf::Event(false));

  cf::Stream s;
  CHECK(s.device() == cd::current_device());
  // A stream that was never used has no work: it is done, and waiting for it is free.
  CHECK(s.query());
  CHECK_NOTHROW(s.synchronize());
  // An event never recorded is complete, as in CUDA.
  cf::Event e;
  CHECK(e.query());
  CHECK_NOTHROW(e.synchronize());
  CHECK_NOTHROW(s.wait(e));
  // Timing needs two recorded timing events.
  CHECK_THROWS_AS(cf::Event::elapsed_ms(e, cf::Event()), cf::ValueError);
  CHECK_THROWS_AS(cf::Event::elapsed_ms(cf::Event(false), e), cf::ValueError);
  // The legacy default stream is nullptr and equal to itself with or without a device.
  CHECK(cf::Stream::null().native() == nullptr);
  CHECK(cf::Stream::current() == cf::Stream::null());
}

TEST_CASE("runtime: the current stream is per-thread bookkeeping and scopes nest") {
  // The default current stream is the legacy null stream.
  CHECK(cd::current_stream() == nullptr);
  CHECK(cd::current_stream_owner() == nullptr);
  cf::Stream a, b;
  {
    cf::StreamScope on_a(a);
    // The scope records `a` without creating it; current_stream() would create it.
    CHECK(cd::current_stream_owner() != nullptr);
    CHECK(cf::Stream::current().device() == a.device());
    auto owner_a = cd::current_stream_owner();
    {
      cf::StreamScope on_b(b);
      CHECK(cd::current_stream_owner() != owner_a);
      {
        cf::StreamScope on_null(cf::Stream::null());  // back to the legacy stream
        CHECK(cd::current_stream() == nullptr);
        CHECK(cd::current_stream_owner() == nullptr);
      }
      CHECK(cd::current_stream_owner() != owner_a);
      CHECK(cd::current_stream_owner() != nullptr);
    }
    CHECK(cd::current_stream_owner() == owner_a);

    // Another thread has its own current stream: the legacy one.
    bool other_null = false;
    std::thread t([&] {
      other_null = cd::current_stream() == nullptr && cd::current_stream_owner() == nullptr;
    });
    t.join();
    CHECK(other_null);

    if (!cf::Device::available()) {
      // Without a device the scoped stream cannot be created when a launch asks for it.
      check_no_device([] { cd::current_stream(); }, "current_stream in a scope");
    } else {
      CHECK(cd::current_stream() == a.native());
    }
  }
  CHECK(cd::current_stream() == nullptr);
  CHECK(cd::current_stream_owner() == nullptr);

  // A scope keeps its stream alive even when the Stream object was a temporary.
  {
    cf::StreamScope tmp{cf::Stream()};
    CHECK(cd::current_stream_owner() != nullptr);
  }
  CHECK(cd::current_stream_owner() == nullptr);
}

TEST_CASE("runtime: the current device is read from thread-local state") {
  int d = cd::current_device();
  CHECK(d >= 0);
  if (!cf::Device::available()) CHECK(d == 0);
  int other = -1;
  std::thread t([&] { other = cd::current_device(); });
  t.join();
  CHECK(other >= 0);
}

TEST_CASE("runtime: allocate_host gives 64-byte aligned memory and frees it") {
  for (size_t n : {size_t(0), size_t(1), size_t(63), size_t(64), size_t(65), size_t(1000), size_t(1) << 20}) {
    INFO("nbytes = " << n);
    auto st = cd::allocate_host(n);
    REQUIRE(st);
    CHECK(st->on_host());
    CHECK(st->device == -1);
    CHECK(st->nbytes == n);
    REQUIRE(st->ptr != nullptr);
    CHECK(reinterpret_cast<uintptr_t>(st->ptr) % 64 == 0);
    std::memset(st->ptr, 0xab, n);  // the whole range is writable (ASan would catch overruns)
    if (n > 0) CHECK(static_cast<unsigned char*>(st->ptr)[n - 1] == 0xab);
  }  // freed here
}

TEST_CASE("runtime: a Storage with a release function calls it instead of freeing") {
  int calls = 0;
  {
    auto st = std::make_shared<cd::Storage>();
    static int foreign = 7;
    st->ptr = &foreign;
    st->nbytes = sizeof foreign;
    st->device = 0;  // "device" memory that cufuse does not own: no cudaFreeAsync
    st->release = [&](cd::Storage& s) {
      ++calls;
      CHECK(s.ptr == &foreign);
    };
  }
  CHECK(calls == 1);
  { cd::Storage empty_device; empty_device.device = 0; }  // nullptr device block: no CUDA call
}

TEST_CASE("runtime: CUDA errors become cufuse errors naming the call, the error and the place") {
  try {
    cd::throw_cuda_error(cudaErrorInvalidValue, "cudaFoo(x, 3)", "/home/u/cufuse/src/runtime/foo.cpp", 42);
    FAIL("no throw");
  } catch (const cf::CudaError& e) {
    std::string m = e.what();
    CHECK(e.kind() == cf::ErrorKind::Cuda);
    CHECK(contains(m, "cudaFoo(x, 3)"));
    CHECK(contains(m, "cudaErrorInvalidValue"));
    CHECK(contains(m, cudaGetErrorString(cudaErrorInvalidValue)));
    CHECK(contains(m, "src/runtime/foo.cpp:42"));
    CHECK_FALSE(contains(m, "/home/u"));  // the path is shown from the repository root
  }
  CHECK_THROWS_AS(cd::throw_cuda_error(cudaErrorMemoryAllocation, "cudaMalloc", "f.cpp", 1),
                  cf::OutOfMemoryError);
  check_no_device([] { cd::throw_cuda_error(cudaErrorNoDevice, "cudaSetDevice(0)", "f.cpp", 1); },
                  "cudaErrorNoDevice");
  check_no_device([] { cd::throw_cuda_error(cudaErrorInsufficientDriver, "cudaFree(0)", "f.cpp", 1); },
                  "cudaErrorInsufficientDriver");

  CHECK_NOTHROW(CUFUSE_CUDA_CHECK(cudaSuccess));
  try {
    CUFUSE_CUDA_CHECK(cudaErrorInvalidConfiguration);
    FAIL("no throw");
  } catch (const cf::CudaError& e) {
    std::string m = e.what();
    CHECK(contains(m, "cudaErrorInvalidConfiguration"));
    CHECK(contains(m, "test_runtime.cpp:"));
  }
  // The check evaluates its argument once.
  int n = 0;
  auto once = [&] { ++n; return cudaSuccess; };
  CUFUSE_CUDA_CHECK(once());
  CHECK(n == 1);
}

TEST_CASE("runtime: byte counts are written for people") {
  CHECK(cd::format_bytes(0) == "0 B");
  CHECK(cd::format_bytes(1023) == "1023 B");
  CHECK(cd::format_bytes(1024) == "1.00 KiB");
  CHECK(cd::format_bytes(1536) == "1.50 KiB");
  CHECK(cd::format_bytes(size_t(80) << 30) == "80.0 GiB");
  CHECK(cd::format_bytes(size_t(79.1 * double(size_t(1) << 30))) == "79.1 GiB");
  CHECK(cd::format_bytes(size_t(1) << 40) == "1.00 TiB");
  CHECK(cd::format_bytes(size_t(1) << 50) == "1.00 PiB");
  CHECK(cd::format_bytes(size_t(512) << 20) == "512 MiB");
  CHECK(cd::format_bytes(size_t(1023) << 20) == "1.00 GiB");  // 3 digits: rounds to the next unit
  CHECK(cd::format_bytes(SIZE_MAX) == "16.0 EiB");
}

// The chain itself launches graphs (tests/gpu/test_graph_launch_gpu.cpp); what decides
// when a plan gets one is host bookkeeping: none for its first `after` runs, then one per
// device, its nodes asked for once, and none for a plan with nothing to chain.
TEST_CASE("runtime: a plan gets its kernel chain after its first runs, once per device") {
  using cufuse::detail::ChainNode;
  using cufuse::detail::ChainSlot;
  if (!cufuse::detail::chains_enabled() || cufuse::detail::chains_eager()) {
    MESSAGE("skipped: CUFUSE_GRAPHS is set (0 or all)");
    return;
  }
  int asked = 0;
  auto nodes = [&] {
    ++asked;
    return std::vector<ChainNode>{ChainNode{reinterpret_cast<void*>(0x1234), {}, 64}};
  };
  ChainSlot slot;
  CHECK(slot.get(0, 2, nodes) == nullptr);
  CHECK(slot.get(0, 2, nodes) == nullptr);
  CHECK(asked == 0);
  auto c0 = slot.get(0, 2, nodes);
  REQUIRE(c0 != nullptr);
  CHECK(c0->size() == 1);
  CHECK(c0->device() == 0);
  CHECK(slot.get(0, 2, nodes) == c0);
  auto c1 = slot.get(1, 2, nodes);
  REQUIRE(c1 != nullptr);
  CHECK(c1 != c0);
  CHECK(c1->device() == 1);
  CHECK(slot.get(1, 2, nodes) == c1);
  CHECK(asked == 2);
  ChainSlot none;  // a plan with a library call: no chain, and its nodes asked for once
  int asked_none = 0;
  auto empty = [&] {
    ++asked_none;
    return std::vector<ChainNode>{};
  };
  for (int i = 0; i < 5; ++i) CHECK(none.get(0, 0, empty) == nullptr);
  CHECK(asked_none == 1);
}
