// tests/gpu/test_runtime_gpu.cpp: the runtime layer on a real device: properties, the
// stream-ordered pool and its statistics, out-of-memory, host/device round trips through
// the staging buffers, kernels loaded from an NVRTC-compiled CUBIN, streams, events and
// the per-thread current stream and device.
#include <doctest/doctest.h>

#include <cuda_runtime_api.h>
#include <nvrtc.h>

#include <atomic>
#include <chrono>
#include <cstdint>
#include <cstring>
#include <optional>
#include <random>
#include <string>
#include <thread>
#include <vector>

#include "cufuse/cufuse.hpp"
#include "cufuse/memory.hpp"
#include "cufuse/stream.hpp"
#include "runtime/device.hpp"
#include "runtime/launch.hpp"
#include "runtime/storage.hpp"
#include "runtime/transfer.hpp"

namespace cf = cufuse;
namespace cd = cufuse::detail;

namespace {

bool contains(const std::string& s, const std::string& p) { return s.find(p) != std::string::npos; }

// Kernels of the same shape as generated ones: extern "C", one struct parameter by value.
const char* kKernels = R"(
struct Params { float* out; long long cycles; unsigned n; };
extern "C" __global__ void spin_fill(Params p) {
  long long start = clock64();
  while (clock64() - start < p.cycles) {}
  unsigned i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < p.n) p.out[i] = 2.0f * float(i) + 1.0f;
}
extern "C" __global__ void reverse_shared(Params p) {
  extern __shared__ float sh[];
  unsigned i = threadIdx.x;
  sh[i] = float(i);
  __syncthreads();
  if (i < p.n) p.out[i] = sh[blockDim.x - 1 - i];
}
)";

struct Params {
  float* out;
  long long cycles;
  unsigned n;
};

std::vector<char> compile_cubin() {
  int cc = cd::device_props(cd::current_device()).cc;
  nvrtcProgram prog;
  REQUIRE(nvrtcCreateProgram(&prog, kKernels, "runtime_test.cu", 0, nullptr, nullptr) == NVRTC_SUCCESS);
  std::string arch = "--gpu-architecture=sm_" + std::to_string(cc);
  const char* opts[] = {arch.c_str()};
  nvrtcResult r = nvrtcCompileProgram(prog, 1, opts);
  if (r != NVRTC_SUCCESS) {
    size_t n = 0;
    nvrtcGetProgramLogSize(prog, &n);
    std::string log(n, '\0');
    nvrtcGetProgramLog(prog, log.data());
    FAIL("NVRTC failed: " << log);
  }
  size_t n = 0;
  REQUIRE(nvrtcGetCUBINSize(prog, &n) == NVRTC_SUCCESS);
  std::vector<char> cubin(n);
  REQUIRE(nvrtcGetCUBIN(prog, cubin.data()) == NVRTC_SUCCESS);
  nvrtcDestroyProgram(&prog);
  return cubin;
}

struct Kernels {
  void* spin = nullptr;
  void* reverse = nullptr;
};
const Kernels& kernels() {
  static const Kernels k = [] {
    auto cubin = compile_cubin();
    Kernels k;
    k.spin = cd::load_kernel(cubin, "spin_fill", cd::current_device());
    k.reverse = cd::load_kernel(cubin, "reverse_shared", cd::current_device());
    return k;
  }();
  return k;
}

void launch_spin(float* out, unsigned n, long long cycles, void* stream) {
  Params p{out, cycles, n};
  cd::LaunchDims d;
  d.block[0] = 256;
  d.grid[0] = (n + 255) / 256;
  cd::launch_kernel(kernels().spin, d, &p, stream);
}

std::vector<unsigned char> random_bytes(size_t n, uint64_t seed) {
  std::mt19937_64 g(seed);
  std::vector<unsigned char> v(n);
  size_t i = 0;
  for (; i + 8 <= n; i += 8) {
    uint64_t x = g();
    std::memcpy(v.data() + i, &x, 8);
  }
  for (; i < n; ++i) v[i] = static_cast<unsigned char>(g());
  return v;
}

void check_no_cuda_error_pending() { CHECK(cudaGetLastError() == cudaSuccess); }

constexpr size_t MiB = size_t(1) << 20;

}  // namespace

TEST_CASE("runtime gpu: a device is there and its properties are cached") {
  REQUIRE(cf::Device::count() >= 1);
  CHECK(cf::Device::unavailable_reason().empty());
  CHECK_NOTHROW(cd::require_device());
  const cd::DeviceProps& p = cd::device_props(0);
  CHECK(&p == &cd::device_props(0));  // cached: the same object
  CHECK_FALSE(p.name.empty());
  CHECK(p.cc >= 50);
  CHECK(p.sm_count > 0);
  CHECK(p.max_threads_per_sm >= 1024);
  CHECK(p.max_blocks_per_sm > 0);
  CHECK(p.shared_per_block_optin >= 48 * 1024);
  CHECK(p.shared_per_sm >= p.shared_per_block_optin);
  CHECK(p.l2_bytes > 0);
  CHECK(p.total_mem > 1024 * MiB);
  cf::Device d0(0);
  CHECK(d0.name() == p.name);
  CHECK(d0.compute_capability() == p.cc);
  CHECK(d0.multiprocessor_count() == p.sm_count);
  MESSAGE("device 0: " << p.name << ", sm_" << p.cc << ", " << p.sm_count << " SMs, "
                       << (p.total_mem >> 20) << " MiB");
  CHECK_THROWS_AS(cd::device_props(cf::Device::count()), cf::IndexError);
  CHECK_THROWS_AS(cf::Device(-1).use(), cf::IndexError);
  // Properties from several threads at once.
  std::vector<std::thread> ts;
  std::atomic<int> ok{0};
  for (int i = 0; i < 4; ++i)
    ts.emplace_back([&] { ok += cd::device_props(0).cc == p.cc; });
  for (auto& t : ts) t.join();
  CHECK(ok == 4);
}

TEST_CASE("runtime gpu: a cached plan does not keep the arrays of the graph it was made from alive") {
  cf::synchronize();
  const size_t used0 = cf::memory::used_bytes();
  {
    // Every group kind: elementwise, reduction, library (GEMM), convolution; each plan is new
    // here and stays in the plan cache after this block.
    auto a = cf::random::normal({4096, 4096}, cf::f32, 77).eval();  // 64 MiB
    auto w = cf::random::normal({3, 3}, cf::f32, 78).eval();
    cf::Array r1 = (a * 2.5f + 1.0f) * a, r2 = cf::sum(a * a, 1), r3 = cf::matmul(a, a.T()) + 1.0f,
              r4 = cf::signal::convolve2d(a, w) - a[{0, 0}];
    cf::eval(r1, r2, r3, r4);
    CHECK(cf::memory::used_bytes() >= used0 + 64 * MiB);
  }
  cf::synchronize();
  CHECK(cf::memory::used_bytes() == used0);
  check_no_cuda_error_pending();
}

TEST_CASE("runtime gpu: allocation from the pool, statistics and free_all_blocks") {
  cf::synchronize();
  cf::memory::free_all_blocks();
  size_t used0 = cf::memory::used_bytes();
  size_t total0 = cf::memory::total_bytes();
  CHECK(total0 >= used0);
  {
    auto a = cd::allocate_device(64 * MiB);
    REQUIRE(a->ptr != nullptr);
    CHECK(a->nbytes == 64 * MiB);
    CHECK(a->device == cd::current_device());
    CHECK(a->stream == cd::current_stream());
    CHECK(reinterpret_cast<uintptr_t>(a->ptr) % 256 == 0);
    cudaPointerAttributes attr{};
    REQUIRE(cudaPointerGetAttributes(&attr, a->ptr) == cudaSuccess);
    CHECK(attr.type == cudaMemoryTypeDevice);
    CHECK(attr.device == a->device);
    CHECK(cf::memory::used_bytes() >= used0 + 64 * MiB);
    CHECK(cf::memory::total_bytes() >= cf::memory::used_bytes());
    CHECK(cf::memory::used_bytes(0) == cf::memory::used_bytes());  // explicit device id
  }
  cf::synchronize();
  CHECK(cf::memory::used_bytes() == used0);
  // The release threshold keeps freed memory in the pool after a synchronize...
  size_t held = cf::memory::total_bytes();
  CHECK(held >= total0 + 64 * MiB - 2 * MiB);
  // ...and a second allocation of the same size is served from it.
  {
    auto b = cd::allocate_device(64 * MiB);
    CHECK(cf::memory::total_bytes() == held);
  }
  // free_all_blocks gives it back.
  cf::memory::free_all_blocks();
  CHECK(cf::memory::total_bytes() < held);
  CHECK(cf::memory::used_bytes() == used0);
  CHECK_THROWS_AS(cf::memory::used_bytes(cf::Device::count()), cf::IndexError);
  check_no_cuda_error_pending();
}

TEST_CASE("runtime gpu: zero-byte and odd-sized allocations") {
  auto z = cd::allocate_device(0);
  REQUIRE(z);
  CHECK(z->nbytes == 0);
  CHECK(z->ptr == nullptr);
  CHECK(z->device == cd::current_device());
  z.reset();
  std::vector<std::shared_ptr<cd::Storage>> v;
  for (size_t n : {size_t(1), size_t(3), size_t(255), size_t(4097), size_t(1) << 21}) {
    v.push_back(cd::allocate_device(n));
    CHECK(v.back()->ptr != nullptr);
  }
  v.clear();
  cf::synchronize();
  check_no_cuda_error_pending();
}

TEST_CASE("runtime gpu: an impossible allocation throws OutOfMemoryError with both numbers") {
  const size_t pib = size_t(1) << 50;
  bool thrown = false;
  try {
    cd::allocate_device(pib);
  } catch (const cf::OutOfMemoryError& e) {
    thrown = true;
    std::string m = e.what();
    MESSAGE(m);
    CHECK(e.kind() == cf::ErrorKind::OutOfMemory);
    CHECK(contains(m, "1.00 PiB requested"));
    CHECK(contains(m, "iB free"));  // e.g. "79.1 GiB free"
  }
  CHECK(thrown);
  // The failure left no error behind, and memory still works.
  check_no_cuda_error_pending();
  auto ok = cd::allocate_device(MiB);
  CHECK(ok->ptr != nullptr);
}

TEST_CASE("runtime gpu: host <-> device round trips through the staging buffers") {
  const size_t C = cd::kStagingChunkBytes;
  cf::Stream s;
  for (bool scoped : {false, true}) {
    std::optional<cf::StreamScope> on;
    if (scoped) on.emplace(s);
    void* stream = cd::current_stream();
    CHECK(stream == (scoped ? s.native() : nullptr));
    for (size_t n : {size_t(0), size_t(1), size_t(3), size_t(4097), MiB + 5, C - 1, C, C + 1,
                     2 * C, 2 * C + C / 2 + 7, 5 * C + 3}) {
      INFO("nbytes = " << n << (scoped ? " on a stream" : " on the null stream"));
      auto host = random_bytes(n, n * 31 + scoped);
      auto dev = cd::allocate_device(n);
      cd::copy_from_host(dev->ptr, host.data(), n, stream);
      // device -> device, then back through the other buffer
      auto dev2 = cd::allocate_device(n);
      cd::copy_device(dev2->ptr, dev->ptr, n, stream);
      std::vector<unsigned char> back(n + 1, 0x5a);
      cd::copy_to_host(back.data(), dev2->ptr, n, stream);
      CHECK(std::memcmp(back.data(), host.data(), n) == 0);
      CHECK(back[n] == 0x5a);  // nothing written past the end
    }
  }
  // Unaligned pointers on both sides.
  {
    size_t n = C + 12345;
    auto host = random_bytes(n + 3, 99);
    auto dev = cd::allocate_device(n + 8);
    void* d = static_cast<char*>(dev->ptr) + 3;
    cd::copy_from_host(d, host.data() + 1, n, nullptr);
    std::vector<unsigned char> back(n + 5, 0);
    cd::copy_to_host(back.data() + 3, d, n, nullptr);
    CHECK(std::memcmp(back.data() + 3, host.data() + 1, n) == 0);
  }
  check_no_cuda_error_pending();
}

TEST_CASE("runtime gpu: concurrent copies from several threads on their own streams") {
  const size_t n = 3 * cd::kStagingChunkBytes + 1001;
  std::atomic<int> good{0};
  std::vector<std::thread> ts;
  for (int t = 0; t < 4; ++t)
    ts.emplace_back([&, t] {
      cf::Stream s;
      cf::StreamScope on(s);
      for (int rep = 0; rep < 3; ++rep) {
        auto host = random_bytes(n, 1000 * t + rep);
        auto dev = cd::allocate_device(n);
        cd::copy_from_host(dev->ptr, host.data(), n, cd::current_stream());
        std::vector<unsigned char> back(n);
        cd::copy_to_host(back.data(), dev->ptr, n, cd::current_stream());
        good += std::memcmp(back.data(), host.data(), n) == 0;
      }
    });
  for (auto& t : ts) t.join();
  CHECK(good == 12);
}

TEST_CASE("runtime gpu: kernels load, launch, and fail with a useful message") {
  const unsigned n = 1000;
  auto out = cd::allocate_device(n * sizeof(float));
  launch_spin(static_cast<float*>(out->ptr), n, 0, nullptr);
  std::vector<float> h(n);
  cd::copy_to_host(h.data(), out->ptr, n * sizeof(float), nullptr);
  bool all = true;
  for (unsigned i = 0; i < n; ++i) all = all && h[i] == 2.0f * float(i) + 1.0f;
  CHECK(all);

  // A bad configuration names the kernel and the dimensions.
  Params p{static_cast<float*>(out->ptr), 0, n};
  cd::LaunchDims bad;
  bad.block[0] = 4096;
  try {
    cd::launch_kernel(kernels().spin, bad, &p, nullptr);
    FAIL("no throw");
  } catch (const cf::CudaError& e) {
    std::string m = e.what();
    CHECK(contains(m, "spin_fill"));
    CHECK(contains(m, "4096"));
  }
  check_no_cuda_error_pending();

  // A thread that has made no CUDA call yet launches too (the driver's launch needs the
  // device's context current on the thread; the first launch there makes it so).
  std::vector<float> h2(n, 0.0f);
  auto out2 = cd::allocate_device(n * sizeof(float));
  std::thread([&] {
    Params q{static_cast<float*>(out2->ptr), 0, n};
    cd::LaunchDims dims;
    dims.grid[0] = (n + 255) / 256;
    dims.block[0] = 256;
    cd::launch_kernel(kernels().spin, dims, &q, nullptr);
    cd::launch_kernel(kernels().spin, dims, &q, nullptr);
    cd::copy_to_host(h2.data(), out2->ptr, n * sizeof(float), nullptr);
  }).join();
  bool all2 = true;
  for (unsigned i = 0; i < n; ++i) all2 = all2 && h2[i] == 2.0f * float(i) + 1.0f;
  CHECK(all2);

  // A missing kernel name and a junk image are CudaErrors, not crashes.
  auto cubin = compile_cubin();
  CHECK_THROWS_AS(cd::load_kernel(cubin, "no_such_kernel", 0), cf::CudaError);
  std::vector<char> junk(256, 'x');  // not an ELF: read as PTX text, so NUL-terminated
  junk.back() = '\0';
  CHECK_THROWS_AS(cd::load_kernel(junk, "spin_fill", 0), cf::CudaError);
  CHECK_THROWS_AS(cd::load_kernel({}, "spin_fill", 0), cf::ValueError);
  check_no_cuda_error_pending();
}

TEST_CASE("runtime gpu: dynamic shared memory past 48 KiB needs set_max_dynamic_shared") {
  const auto& props = cd::device_props(0);
  unsigned threads = 1024;
  unsigned bytes = 64 * 1024;  // > 48 KiB, < 227 KiB opt-in on sm_90
  if (props.shared_per_block_optin < bytes) {
    MESSAGE("skipped: device opt-in shared memory is " << props.shared_per_block_optin);
    return;
  }
  auto out = cd::allocate_device(threads * sizeof(float));
  Params p{static_cast<float*>(out->ptr), 0, threads};
  cd::LaunchDims d;
  d.block[0] = threads;
  d.shared_bytes = bytes;
  CHECK_THROWS_AS(cd::launch_kernel(kernels().reverse, d, &p, nullptr), cf::CudaError);
  check_no_cuda_error_pending();
  cd::set_max_dynamic_shared(kernels().reverse, 0, bytes);
  CHECK_NOTHROW(cd::launch_kernel(kernels().reverse, d, &p, nullptr));
  std::vector<float> h(threads);
  cd::copy_to_host(h.data(), out->ptr, threads * sizeof(float), nullptr);
  CHECK(h[0] == float(threads - 1));
  CHECK(h[threads - 1] == 0.0f);
}

TEST_CASE("runtime gpu: two streams ordered by an event; elapsed time of a real kernel") {
  const unsigned n = 1 << 16;
  const size_t bytes = n * sizeof(float);
  cf::Stream a, b;
  CHECK(a.native() != nullptr);
  CHECK(b.native() != nullptr);
  CHECK(a.native() != b.native());
  CHECK_FALSE(a == b);
  cf::Stream a2 = a;
  CHECK(a == a2);
  CHECK(a.device() == cd::current_device());

  std::shared_ptr<cd::Storage> out, copy;
  {
    cf::StreamScope on(a);
    out = cd::allocate_device(bytes);
    CHECK(out->stream == a.native());
  }
  {
    cf::StreamScope on(b);
    copy = cd::allocate_device(bytes);
  }
  std::vector<float> zeros(n, 0.0f);
  cd::copy_from_host(out->ptr, zeros.data(), bytes, a.native());
  cd::copy_from_host(copy->ptr, zeros.data(), bytes, b.native());

  cf::Event start, stop, done(false);
  start.record(a);
  launch_spin(static_cast<float*>(out->ptr), n, 100'000'000, a.native());  // ~50 ms
  stop.record(a);
  done.record(a);
  CHECK_FALSE(a.query());  // still spinning
  CHECK_FALSE(stop.query());
  // b copies the kernel's output only after it is done.
  b.wait(done);
  cd::copy_device(copy->ptr, out->ptr, bytes, b.native());
  std::vector<float> h(n);
  cd::copy_to_host(h.data(), copy->ptr, bytes, b.native());
  bool all = true;
  for (unsigned i = 0; i < n; ++i) all = all && h[i] == 2.0f * float(i) + 1.0f;
  CHECK(all);

  float ms = cf::Event::elapsed_ms(start, stop);
  MESSAGE("spin kernel: " << ms << " ms");
  CHECK(ms > 1.0f);
  CHECK(stop.query());
  CHECK(a.query());
  CHECK_THROWS_AS(cf::Event::elapsed_ms(start, done), cf::ValueError);  // done has no timing

  // Events and waits on the legacy stream, and Stream::current.
  cf::Event e;
  e.record(cf::Stream::null());
  e.synchronize();
  CHECK(e.query());
  cf::Stream::null().wait(e);
  cf::Stream::null().synchronize();
  CHECK(cf::Stream::current() == cf::Stream::null());
  a.synchronize();
  b.synchronize();
  cf::Device(0).synchronize();
  cf::synchronize();
  check_no_cuda_error_pending();
}

TEST_CASE("runtime gpu: a block outlives the Stream it was made on") {
  std::shared_ptr<cd::Storage> st;
  {
    cf::Stream s;
    cf::StreamScope on(s);
    st = cd::allocate_device(4 * MiB);
    launch_spin(static_cast<float*>(st->ptr), 1 << 20, 1'000'000, cd::current_stream());
  }  // the Stream and the scope are gone; the block keeps the CUDA stream alive
  CHECK(st->stream_owner != nullptr);
  st.reset();  // cudaFreeAsync on a stream that still exists
  cf::synchronize();
  check_no_cuda_error_pending();
}

TEST_CASE("runtime gpu: StreamScope nests and each thread has its own current stream") {
  cf::Stream a, b;
  CHECK(cd::current_stream() == nullptr);
  {
    cf::StreamScope on_a(a);
    CHECK(cd::current_stream() == a.native());
    CHECK(cf::Stream::current() == a);
    {
      cf::StreamScope on_b(b);
      CHECK(cd::current_stream() == b.native());
      auto st = cd::allocate_device(1024);
      CHECK(st->stream == b.native());
    }
    CHECK(cd::current_stream() == a.native());

    std::atomic<int> ok{0};
    std::vector<std::thread> ts;
    for (int t = 0; t < 4; ++t)
      ts.emplace_back([&] {
        if (cd::current_stream() == nullptr) ++ok;  // a new thread starts on the null stream
        cf::Stream mine;
        cf::StreamScope on(mine);
        if (cd::current_stream() == mine.native() && cd::current_stream() != a.native()) ++ok;
        auto st = cd::allocate_device(4096);
        if (st->stream == mine.native()) ++ok;
        launch_spin(static_cast<float*>(st->ptr), 1024, 10'000, cd::current_stream());
        mine.synchronize();
        if (mine.query()) ++ok;
      });
    for (auto& t : ts) t.join();
    CHECK(ok == 16);
    CHECK(cd::current_stream() == a.native());  // untouched by the threads
  }
  CHECK(cd::current_stream() == nullptr);
}

TEST_CASE("runtime gpu: DeviceScope and the current device") {
  CHECK(cd::current_device() == 0);
  {
    cf::DeviceScope d0(0);
    CHECK(cd::current_device() == 0);
    CHECK(cf::Device::current().id() == 0);
  }
  CHECK_THROWS_AS(cf::DeviceScope(cf::Device::count()), cf::IndexError);
  CHECK(cd::current_device() == 0);
  if (cf::Device::count() < 2) {
    MESSAGE("one device: switching devices is not exercised");
    return;
  }
  cf::Stream on_dev1_stream = [] {
    cf::DeviceScope d1(1);
    return cf::Stream();
  }();
  CHECK(on_dev1_stream.device() == 1);
  {
    cf::DeviceScope d1(1);
    CHECK(cd::current_device() == 1);
    int cuda_dev = -1;
    REQUIRE(cudaGetDevice(&cuda_dev) == cudaSuccess);
    CHECK(cuda_dev == 1);
    auto st = cd::allocate_device(MiB);
    CHECK(st->device == 1);
    cudaPointerAttributes attr{};
    REQUIRE(cudaPointerGetAttributes(&attr, st->ptr) == cudaSuccess);
    CHECK(attr.device == 1);
    {
      cf::DeviceScope d0(0);
      CHECK(cd::current_device() == 0);
    }
    CHECK(cd::current_device() == 1);
    std::thread t([] { CHECK(cd::current_device() == 0); });  // per thread
    t.join();
  }
  CHECK(cd::current_device() == 0);
  {
    cf::StreamScope on(on_dev1_stream);  // a stream of device 1 makes device 1 current
    CHECK(cd::current_device() == 1);
    CHECK(cd::current_stream() == on_dev1_stream.native());
    {
      cf::DeviceScope d0(0);  // each device has its own current stream
      CHECK(cd::current_stream() == nullptr);
    }
    CHECK(cd::current_stream() == on_dev1_stream.native());
    // Work on device 1's stream; a block of device 1 ordered on it.
    auto st = cd::allocate_device(MiB);
    CHECK(st->device == 1);
    CHECK(st->stream == on_dev1_stream.native());
    launch_spin(static_cast<float*>(st->ptr), 1024, 1000, cd::current_stream());
  }
  CHECK(cd::current_device() == 0);
  CHECK(cd::current_stream() == nullptr);

  // A block of device 1 on the legacy stream, freed while device 0 is current.
  std::shared_ptr<cd::Storage> b1;
  size_t used1 = 0;
  {
    cf::DeviceScope d1(1);
    used1 = cf::memory::used_bytes();
    b1 = cd::allocate_device(8 * MiB);
    std::vector<unsigned char> host = random_bytes(8 * MiB, 7), back(8 * MiB);
    cd::copy_from_host(b1->ptr, host.data(), host.size(), nullptr);
    cd::copy_to_host(back.data(), b1->ptr, back.size(), nullptr);
    CHECK(back == host);
  }
  CHECK(cf::memory::used_bytes(1) >= used1 + 8 * MiB);
  b1.reset();
  cf::Device(1).synchronize();
  CHECK(cf::memory::used_bytes(1) == used1);
  CHECK(cd::current_device() == 0);
  cf::memory::free_all_blocks(1);
  CHECK(cd::current_device() == 0);

  // An event lives on the device of its first record.
  cf::Event e;
  e.record(on_dev1_stream);
  CHECK_THROWS_AS(e.record(cf::Stream::null()), cf::ValueError);  // device 0's stream
  e.synchronize();
  cf::Stream s0;
  s0.wait(e);  // cross-device wait is allowed
  s0.synchronize();
  check_no_cuda_error_pending();
}

TEST_CASE("runtime gpu: the hot path is a thread-local read") {
  cf::Stream s;
  cf::StreamScope on(s);
  (void)cd::current_stream();  // creates the stream
  auto t0 = std::chrono::steady_clock::now();
  uintptr_t acc = 0;
  const int N = 1'000'000;
  for (int i = 0; i < N; ++i) acc += reinterpret_cast<uintptr_t>(cd::current_stream()) + cd::current_device();
  double ns = std::chrono::duration<double, std::nano>(std::chrono::steady_clock::now() - t0).count() / N;
  MESSAGE("current_stream() + current_device(): " << ns << " ns (acc " << (acc & 1) << ")");
  CHECK(ns < 50.0);

  // Launch overhead on the host, for the record.
  auto out = cd::allocate_device(1024 * sizeof(float));
  for (int i = 0; i < 100; ++i) launch_spin(static_cast<float*>(out->ptr), 1024, 0, cd::current_stream());
  s.synchronize();
  const int L = 2000;
  t0 = std::chrono::steady_clock::now();
  for (int i = 0; i < L; ++i) launch_spin(static_cast<float*>(out->ptr), 1024, 0, cd::current_stream());
  double us = std::chrono::duration<double, std::micro>(std::chrono::steady_clock::now() - t0).count() / L;
  s.synchronize();
  MESSAGE("launch_kernel host time: " << us << " us");
  // Allocation + free on the hot path.
  t0 = std::chrono::steady_clock::now();
  for (int i = 0; i < L; ++i) cd::allocate_device(4096);
  us = std::chrono::duration<double, std::micro>(std::chrono::steady_clock::now() - t0).count() / L;
  MESSAGE("allocate_device + free host time: " << us << " us");
}
