// tests/gpu/test_streams_gpu.cpp: streams, events and devices on a GPU: work on two streams
// overlaps (measured with events), Stream::wait(Event) orders them, memory used on another
// stream is not reused by the pool before that stream is done, profiler::benchmark, and,
// on a machine with two GPUs, arrays on two devices (the tests say plainly when skipped).
#include <algorithm>

#include "gpu_compare.hpp"
#include "runtime/storage.hpp"

namespace {

// Kernels that keep the GPU busy for a given number of clock cycles (inline PTX: no headers).
const char* kSpinSource = R"(
__device__ __forceinline__ long long now() { long long t; asm volatile("mov.u64 %0, %%clock64;" : "=l"(t)); return t; }
extern "C" __global__ void spin(long long cycles) {
  const long long t0 = now();
  while (now() - t0 < cycles) {}
}
extern "C" __global__ void spin_then_fill(long long cycles, float* out, float v, int n) {
  const long long t0 = now();
  while (now() - t0 < cycles) {}
  for (int i = blockIdx.x * blockDim.x + threadIdx.x; i < n; i += gridDim.x * blockDim.x) out[i] = v;
}
)";

const cf::RawModule& spin_module() {
  static const cf::RawModule m(kSpinSource);
  return m;
}

template <class T>
std::vector<T> host(const cf::Array& a) {
  return a.to_host<T>();
}

cf::Array eye(int64_t n) { return (cf::arange(n).reshape({n, 1}) == cf::arange(n)).astype(cf::f32); }

// Cycles for about `ms` milliseconds on device 0 (measured once).
long long cycles_for_ms(double ms) {
  static const double cycles_per_ms = [] {
    const long long probe = 10'000'000;
    spin_module().get_function("spin")(1, 1, {1000LL});  // compiled and loaded before timing
    cf::synchronize();
    cf::Stream s;
    cf::Event a, b;
    a.record(s);
    {
      cf::StreamScope on(s);
      spin_module().get_function("spin")(1, 1, {probe});
    }
    b.record(s);
    return double(probe) / std::max(0.01, double(cf::Event::elapsed_ms(a, b)));
  }();
  return static_cast<long long>(cycles_per_ms * ms);
}

}  // namespace

TEST_CASE("streams gpu: work on two streams overlaps (measured with events)") {
  const long long c = cycles_for_ms(40);
  cf::Stream s1, s2;
  auto spin = spin_module().get_function("spin");
  // alone
  cf::Event a0, a1;
  a0.record(s1);
  {
    cf::StreamScope on(s1);
    spin(1, 1, {c});
  }
  a1.record(s1);
  const float alone = cf::Event::elapsed_ms(a0, a1);
  // together: s2 starts after s1's start event; s1 ends after s2's end event
  cf::Event start, end2, end;
  start.record(s1);
  s2.wait(start);
  {
    cf::StreamScope on(s1);
    spin(1, 1, {c});
  }
  {
    cf::StreamScope on(s2);
    spin(1, 1, {c});
  }
  end2.record(s2);
  s1.wait(end2);
  end.record(s1);
  const float both = cf::Event::elapsed_ms(start, end);
  MESSAGE("one spin kernel: " << alone << " ms; one on each of two streams: " << both << " ms");
  CHECK(both < 1.5f * alone);  // serialized would be 2x
}

TEST_CASE("streams gpu: Stream::wait(Event) orders work across streams") {
  const long long c = cycles_for_ms(30);
  const int n = 1 << 16;
  cf::Stream s1, s2;
  auto buf = cf::zeros({n}, cf::f32).eval();
  cf::synchronize();
  {
    cf::StreamScope on(s1);
    spin_module().get_function("spin_then_fill")(64, 256, {c, buf, 42.0f, n});
  }
  cf::Event filled;
  filled.record(s1);
  s2.wait(filled);
  cf::Array r;
  {
    cf::StreamScope on(s2);
    r = (buf + 1).eval();
  }
  s2.synchronize();
  auto h = host<float>(r);
  CHECK(std::all_of(h.begin(), h.end(), [](float v) { return v == 43.0f; }));
}

TEST_CASE("streams gpu: memory used on another stream is not reused before that stream is done") {
  const long long c = cycles_for_ms(60);
  const int64_t n = 1 << 20;
  cf::Stream s1, s2;
  cf::Array a;
  {
    cf::StreamScope on(s1);
    a = cf::full({n}, 7.0f, cf::f32).eval();  // ordered on s1
  }
  s1.synchronize();
  const void* a_ptr = a.node()->storage->ptr;
  cf::Array r;
  {
    cf::StreamScope on(s2);
    spin_module().get_function("spin")(1, 1, {c});  // s2 is busy for a while...
    r = (a * 2).eval();                             // ...then reads a
  }
  a = cf::Array();  // the last handle: a's block goes back to the pool, on s1
  cf::Array b;
  {
    cf::StreamScope on(s1);
    b = cf::full({n}, -1.0f, cf::f32).eval();  // same size on s1: the pool's first candidate
  }
  MESSAGE("the new block " << (b.node()->storage->ptr == a_ptr ? "reuses" : "does not reuse") << " the freed one");
  s2.synchronize();
  s1.synchronize();
  auto h = host<float>(r);
  CHECK(std::all_of(h.begin(), h.end(), [](float v) { return v == 14.0f; }));
  auto hb = host<float>(b);
  CHECK(std::all_of(hb.begin(), hb.end(), [](float v) { return v == -1.0f; }));
}

TEST_CASE("profiler gpu: benchmark times each call on the host and the device") {
  auto f = cf::fuse([](auto x, auto y) { return (x - y) * (x - y); });
  auto x = random_array(cf::f32, {10000});
  auto y = random_array(cf::f32, {10000});
  auto r = cf::profiler::benchmark([&] { f(x, y); }, 50, 5, "fused_squared_diff");
  CHECK(r.cpu_times.size() == 50);
  REQUIRE(r.gpu_times.size() == 1);
  CHECK(r.gpu_times[0].size() == 50);
  CHECK(*std::min_element(r.gpu_times[0].begin(), r.gpu_times[0].end()) > 0);
  const std::string line = r.to_str();
  CHECK(line.find("fused_squared_diff  :    CPU:") == 0);
  CHECK(line.find("GPU-" + std::to_string(cf::Device::current().id())) != std::string::npos);
  MESSAGE(line);
  auto quick = cf::profiler::benchmark([&] { f(x, y); }, 1000000, 0, "capped", {}, 0.05);
  CHECK(quick.cpu_times.size() < 1000000);
}

TEST_CASE("devices gpu: two devices: errors name both, to_device copies, work runs where arrays live") {
  if (cf::Device::count() < 2) {
    MESSAGE("SKIPPED: the two-device tests need 2 GPUs; this machine has " << cf::Device::count());
    return;
  }
  auto a = random_array(cf::f32, {4096});
  cf::Array b;
  {
    cf::DeviceScope d1(1);
    b = random_array(cf::f32, {4096});
  }
  CHECK(a.device() == 0);
  CHECK(b.device() == 1);
  CHECK_THROWS_WITH_AS(a + b, doctest::Contains("device 1"), cf::ValueError);
  auto b0 = b.to_device(0);
  CHECK(b0.device() == 0);
  CHECK(host<float>(b0) == host<float>(b));
  CHECK(host<float>(a + b0) == host<float>(a + b.to_device(0)));
  // a lazy expression of device-1 arrays is computed on device 1, whatever is current
  auto lazy = b * 2 + 1;
  lazy.eval();
  CHECK(lazy.device() == 1);
  auto f = cf::fuse([](auto x) { return x * 3; });
  for (int i = 0; i < 3; ++i) {  // replays on device 1 (a CUDA graph of that device's), then device 0
    auto r1 = f(b);
    CHECK(r1.device() == 1);
    CHECK(host<float>(r1) == host<float>(b * 3));
    CHECK(host<float>(f(a)) == host<float>(a * 3));
  }
  auto a1 = a.to_device(1);
  CHECK(host<float>(a1) == host<float>(a));
  // the source may go away at once: the copy was ordered before its block is reused
  auto c = random_array(cf::f32, {1 << 20});
  auto c1 = c.to_device(1);
  auto want = host<float>(c);
  c = cf::Array();
  CHECK(host<float>(c1) == want);
  // a reduction, a GEMM and a solver call run where their inputs live, and match device 0's
  cf::Array m1;
  {
    cf::DeviceScope d1(1);
    m1 = random_array(cf::f32, {96, 96}, /*positive, finite*/ 1) * 0.001f + eye(96);  // diagonally dominant
  }
  auto m0 = m1.to_device(0);
  auto close = [](const cf::Array& x1, const cf::Array& x0, float tol) {
    auto h1 = host<float>(x1), h0 = host<float>(x0);
    float d = 0;
    for (size_t i = 0; i < h1.size(); ++i) d = std::max(d, std::fabs(h1[i] - h0[i]));
    return h1.size() == h0.size() && d <= tol;
  };
  auto red1 = cf::sum(m1 * m1, 1), mm1 = cf::matmul(m1, m1.T()), inv1 = cf::linalg::inv(m1);
  CHECK_NOTHROW(red1.eval());
  CHECK_NOTHROW(mm1.eval());
  CHECK_NOTHROW(inv1.eval());
  // the three kinds of work in one evaluation on device 1
  auto r2 = cf::sum(m1, 0), g2 = cf::matmul(m1, m1), i2 = cf::linalg::inv(m1 * 2.0f);
  CHECK_NOTHROW(cf::eval(r2, g2, i2));
  CHECK(i2.device() == 1);
  CHECK(red1.device() == 1);
  CHECK(mm1.device() == 1);
  CHECK(inv1.device() == 1);
  CHECK(close(red1, cf::sum(m0 * m0, 1), 1e-2f));
  CHECK(close(mm1, cf::matmul(m0, m0.T()), 1e-2f));
  CHECK(close(inv1, cf::linalg::inv(m0), 1e-5f));
  // small blocks freed on one device are never handed out on the other
  for (int i = 0; i < 100; ++i) {
    auto x0 = a * float(i);
    cf::Array x1;
    {
      cf::DeviceScope d1(1);
      x1 = b * float(i);
    }
    x0.eval();
    x1.eval();
    CHECK(x0.device() == 0);
    CHECK(x1.device() == 1);
    // one plan on two devices: from its third run a CUDA graph on each
    if (i % 25 == 3) CHECK(host<float>(x1) == host<float>(b0 * float(i)));
  }
}

TEST_CASE("streams gpu: seed 004's two inversions on two streams, with events") {
  const int64_t size = 1024;
  auto A = cf::random::uniform({size, size}, cf::f32, 4) + eye(size) * float(size);
  A.eval();
  cf::Stream s1, s2;
  cf::Event e1, e2;
  cf::Array C1, C2;
  {
    cf::StreamScope on(s1);
    C1 = cf::linalg::inv(A).eval();
    e1.record(s1);
  }
  {
    cf::StreamScope on(s2);
    C2 = cf::linalg::inv(A).eval();
    e2.record(s2);
  }
  e1.synchronize();
  e2.synchronize();
  auto id = cf::matmul(A, C1);
  auto err = cf::max(cf::abs(id - eye(size))).item<float>();
  CHECK(err < 1e-3f);
  CHECK(host<float>(C1) == host<float>(C2));
}

TEST_CASE("streams gpu: seed 004's two inversions are both queued before either finishes (errors ignored)") {
  // Under ErrorScope(Ignore) inv reads no info back, so the host queues the second inversion
  // on the other stream while the first still runs: the overlap the seed measures is possible.
  const int64_t n = 3000;
  cf::Array A = cf::random::uniform({n, n}, cf::f32, 4) + eye(n) * float(n);
  A.eval();
  cf::Stream s1, s2;
  cf::linalg::ErrorScope no_wait(cf::linalg::Errors::Ignore);
  { cf::StreamScope on(s1); cf::linalg::inv(A).eval(); }  // compiles and loads what inv needs
  s1.synchronize();
  cf::Event e1, e2;
  cf::Array c1, c2;
  {
    cf::StreamScope on(s1);
    c1 = cf::linalg::inv(A).eval();
    e1.record(s1);
  }
  const bool first_pending = !e1.query();
  {
    cf::StreamScope on(s2);
    c2 = cf::linalg::inv(A).eval();
    e2.record(s2);
  }
  e1.synchronize();
  e2.synchronize();
  CHECK_MESSAGE(first_pending, "the first inversion had finished before the second was queued");
  auto d = cf::max(cf::abs(c1 - c2)).item<float>();
  CHECK(d == 0.0f);  // the same work on either stream gives the same bits
  auto resid = cf::max(cf::abs(cf::matmul(A, c1) - eye(n))).item<float>();
  CHECK(resid <= 1e-3f);
}
