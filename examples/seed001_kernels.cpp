// examples/seed001_kernels.cpp: seed 001 ("What is CuPy?") in C++.
//   1. basics: det of five stacked [1 2 3 4 5] rows, norm, the current device, copies
//      host <-> device, the memory pool's counters;
//   2. adding two 5e7-element float64 vectors with a CuPy-style ElementwiseKernel (and plain
//      `a + b`) against a host loop, then clearing the pool;
//   3. "something big": a 1024^3 float64 random array, x *= 3; x *= x on the GPU and the host;
//   4. the product along axis 0 of a (4096, 512, 512) float64 stack (8 GB, the notebook's size,
//      built in pinned host memory so its copy to the device is fast): the notebook's two
//      RawKernels (accumulating in global memory, then in a register), cufuse's own
//      prod(x, 0), and the host loop, checked with testing::assert_allclose as the notebook's
//      np.testing.assert_array_almost_equal does (decimal=6: atol 1.5e-6);
//   5. the memory cell's pinned pool (memory::pinned_used_bytes / pinned_total_bytes), and the
//      closing note on __cuda_array_interface__: a raw device pointer handed to or taken from
//      other code, Array::data_ptr and from_device_pointer (zero copy both ways).
// GPU steps are timed with profiler::benchmark (mean GPU time), host steps once (they are slow).
// Skipped: the second-device part runs only with two or more GPUs.
// Without a CUDA device it says so, runs small versions of 1-4 on the host reference backend
// (which cannot run user kernels: it compiles the two RawKernels with NVRTC and prints their
// register counts instead), checks them the same way, and exits 0.
#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <cufuse/cufuse.hpp>
#include <functional>
#include <memory>
#include <string>
#include <utility>
#include <vector>

namespace cf = cufuse;

using Clock = std::chrono::steady_clock;
static double ms_since(Clock::time_point t0) {
  return std::chrono::duration<double, std::milli>(Clock::now() - t0).count();
}

// The notebook's Timer: named steps, each printed as it is measured.
struct Timer {
  std::vector<std::pair<std::string, double>> steps;  // milliseconds
  double record(const std::string& step, double ms, const char* how = "") {
    steps.emplace_back(step, ms);
    std::printf("  %-34s %10.3f ms%s%s\n", step.c_str(), ms, *how ? " " : "", how);
    return ms;
  }
  // A host step, timed once.
  double once(const std::string& step, const std::function<void()>& f) {
    auto t0 = Clock::now();
    f();
    return record(step, ms_since(t0));
  }
  // A GPU step: its mean GPU time over `reps` calls after one warm-up (profiler::benchmark).
  double gpu(const std::string& step, const std::function<void()>& f, int reps) {
    const double ms = cf::profiler::benchmark(f, reps, 1, step).gpu_mean() * 1e3;
    return record(step, ms, ("(mean of " + std::to_string(reps) + ")").c_str());
  }
};

// Host random numbers in [0, 1): splitmix64, fast enough for a billion values.
struct HostRandom {
  uint64_t s;
  double operator()() {
    uint64_t z = (s += 0x9e3779b97f4a7c15ULL);
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
    return double((z ^ (z >> 31)) >> 11) * 0x1.0p-53;
  }
};

static double gb(size_t bytes) { return double(bytes) / (1024.0 * 1024.0 * 1024.0); }

static void basics(bool gpu) {
  std::printf("---- basics\n");
  cf::Array x_gpu0 = cf::array<int64_t>({1, 2, 3, 4, 5});
  cf::Array arr = cf::vstack(std::vector<cf::Array>(5, x_gpu0));  // cp.vstack([x_gpu0] * 5)
  const auto a = arr.to_host<int64_t>();
  std::printf("array: 5 rows of [%lld %lld %lld %lld %lld]\n", (long long)a[0], (long long)a[1], (long long)a[2],
              (long long)a[3], (long long)a[4]);
  // + 0.0: LU's zero pivot can carry a sign; NumPy prints 0.0.
  std::printf("det: %g   (rank 1: 0, as NumPy)\n", cf::linalg::det(arr).item<double>() + 0.0);
  std::printf("norm([1 2 3 4 5]): %.10g   (sqrt(55) = %.10g)\n", cf::linalg::norm(x_gpu0).item<double>(),
              std::sqrt(55.0));

  // Host -> device -> host: from_host is cp.asarray, to_host is cp.asnumpy / .get().
  const std::vector<int64_t> x_cpu{1, 2, 3};
  cf::Array x_gpu = cf::from_host(x_cpu);
  std::printf("round trip host -> %s -> host: %s\n", gpu ? "device" : "host memory (reference backend)",
              x_gpu.to_host<int64_t>() == x_cpu ? "same values" : "DIFFERENT");

  // Memory cell: the pinned pool (cp.get_default_pinned_memory_pool()) serves page-locked host
  // buffers; a transfer from one is asynchronous on the current stream (plain host memory and
  // a plain copy on the reference backend).
  {
    cf::PinnedBuffer h = cf::empty_pinned({1000}, cf::f64);
    for (int64_t i = 0; i < 1000; ++i) h.data_as<double>()[i] = double(i);
    cf::Array d = cf::from_host(h);  // queued on the stream; returns at once
    std::printf("pinned pool: used %zu bytes, holds %zu bytes; sum of the copy: %g (499500)\n",
                cf::memory::pinned_used_bytes(), cf::memory::pinned_total_bytes(), cf::sum(d).item<double>());
  }
  cf::memory::pinned_free_all_blocks();
  std::printf("after pinned_free_all_blocks: holds %zu bytes\n", cf::memory::pinned_total_bytes());
  if (!gpu) {
    std::printf("current device, memory pool: need a CUDA device (skipped)\n");
    return;
  }
  std::printf("x_gpu0 device: %d of %d device(s)\n", x_gpu0.device(), cf::Device::count());
  if (cf::Device::count() >= 2) {
    cf::Array x_gpu1;
    {
      cf::DeviceScope on(1);  // with cp.cuda.Device(1):
      x_gpu1 = cf::array<int64_t>({1, 2, 3, 4, 5});
    }
    std::printf("x_gpu1 device: %d\n", x_gpu1.device());
    cf::DeviceScope on(1);
    try {  // CuPy raises here; cufuse may copy instead: print what happens
      std::printf("x_gpu0 * 2 under device 1: %s\n", (x_gpu0 * 2).eval().str().c_str());
    } catch (const cf::Error& e) {
      std::printf("x_gpu0 * 2 under device 1: %s\n", e.what());
    }
  } else {
    std::printf("one device: the notebook's Device(1) part needs two (skipped)\n");
  }
  std::printf("used memory on device %d [bytes]: %zu\n", cf::Device::current().id(), cf::memory::used_bytes());
}

static void add_vectors(int64_t vec_size, bool gpu) {
  std::printf("\n---- add vectors: %lld float64 elements\n", (long long)vec_size);
  const size_t used_before = gpu ? cf::memory::used_bytes() : 0;
  Timer timer;
  cf::Array vec_a_gpu, vec_b_gpu, vec_c_gpu;
  auto create = [&] {
    vec_a_gpu = cf::random::uniform({vec_size}, cf::f64).eval();  // cp.random.random
    vec_b_gpu = cf::random::uniform({vec_size}, cf::f64).eval();
    vec_c_gpu = cf::empty({vec_size}, cf::f64);
  };
  if (gpu)
    timer.gpu("GPU_create_random_vectors", create, 5);
  else
    create();
  std::unique_ptr<double[]> vec_a_cpu(new double[vec_size]), vec_b_cpu(new double[vec_size]),
      vec_c_cpu(new double[vec_size]);
  timer.once("CPU_create_random_vectors", [&] {
    HostRandom r{1};
    for (int64_t i = 0; i < vec_size; ++i) vec_a_cpu[i] = r();
    for (int64_t i = 0; i < vec_size; ++i) vec_b_cpu[i] = r();
  });
  std::printf("Used mem: %.3f GB\n", gb(vec_a_gpu.nbytes() * 3));

  const cf::ElementwiseKernel add_vec_elem("float64 x, float64 y", "float64 z", "z = x + y", "add_vec_elem");
  double t_gpu = 0;
  if (gpu) {
    t_gpu = timer.gpu(
        "GPU_add_vectors", [&] { vec_c_gpu = add_vec_elem(vec_a_gpu, vec_b_gpu).eval(); }, 10);
    timer.gpu(
        "GPU_add_vectors (plain a + b)", [&] { (vec_a_gpu + vec_b_gpu).eval(); }, 10);
  } else {
    // The reference backend cannot run user code: plain a + b is the same kernel here.
    vec_c_gpu = (vec_a_gpu + vec_b_gpu).eval();
  }
  const double t_cpu = timer.once("CPU_add_vectors", [&] {
    for (int64_t i = 0; i < vec_size; ++i) vec_c_cpu[i] = vec_a_cpu[i] + vec_b_cpu[i];
  });
  if (gpu) std::printf("GPU / CPU: %.0fx faster\n", t_cpu / t_gpu);

  // Check: on the device against a + b, and the first 1000 elements on the host.
  const double dev_err = cf::max(cf::abs(vec_c_gpu - (vec_a_gpu + vec_b_gpu))).item<double>();
  const auto s = cf::slice(0, 1000);
  const auto ha = vec_a_gpu[{s}].to_host<double>(), hb = vec_b_gpu[{s}].to_host<double>(),
             hc = vec_c_gpu[{s}].to_host<double>();
  bool host_ok = true;
  for (size_t i = 0; i < hc.size(); ++i) host_ok = host_ok && hc[i] == ha[i] + hb[i];
  std::printf("check: max |c - (a + b)| = %g, first 1000 against the host: %s\n", dev_err,
              dev_err == 0 && host_ok ? "(match)" : "(MISMATCH)");
  if (!gpu) {
    std::printf(
        "add_vec_elem, planned for a GPU:\n%s",
        cf::plan_dump({add_vec_elem(cf::placeholder(cf::f64, {50000000}), cf::placeholder(cf::f64, {50000000}))}, false)
            .c_str());
    return;
  }
  // Clear memory: dropping the last handle returns the block to the pool.
  vec_a_gpu = vec_b_gpu = vec_c_gpu = cf::Array();
  cf::synchronize();
  std::printf("Used [bytes]: %zu (%zu before this section)\nAllocated [bytes]: %zu\n", cf::memory::used_bytes(),
              used_before, cf::memory::total_bytes());
  cf::memory::free_all_blocks();
  std::printf("after free_all_blocks, Allocated [bytes]: %zu\n", cf::memory::total_bytes());
}

static void something_big(int64_t side, bool gpu) {
  const int64_t n = side * side * side;
  std::printf("\n---- something big: (%lld, %lld, %lld) float64\n", (long long)side, (long long)side, (long long)side);
  const size_t used_before = gpu ? cf::memory::used_bytes() : 0;
  Timer timer;
  cf::Array x_gpu;
  auto create = [&] { x_gpu = cf::random::uniform({side, side, side}, cf::f64).eval(); };
  if (gpu) {
    timer.gpu("GPU_create_random_array", create, 3);
    std::printf("Used [GB]: %.3f (%.3f before this section)\n", gb(cf::memory::used_bytes()), gb(used_before));
  } else {
    create();
  }
  std::unique_ptr<double[]> x_cpu(new double[n]);
  timer.once("CPU_create_random_array", [&] {
    HostRandom r{2};
    for (int64_t i = 0; i < n; ++i) x_cpu[i] = r();
  });

  // Check one application on the first plane, then time repeats (the values grow to inf
  // or shrink to 0 as it repeats: the time does not change).
  const auto before = x_gpu[{0}].to_host<double>();
  auto do_stuff = [&] {
    x_gpu *= 3;
    x_gpu *= x_gpu;
    x_gpu.eval();
  };
  cf::reset_stats();
  do_stuff();
  const auto kernels = cf::stats().kernels_launched;
  const auto after = x_gpu[{0}].to_host<double>();
  bool ok = true;
  for (size_t i = 0; i < after.size(); ++i) ok = ok && after[i] == (3 * before[i]) * (3 * before[i]);
  std::printf("x *= 3; x *= x: %llu kernel(s); first plane against the host: %s\n", (unsigned long long)kernels,
              ok ? "(match)" : "(MISMATCH)");
  double t_gpu = 0;
  if (gpu) t_gpu = timer.gpu("GPU_do_stuff", do_stuff, 5);
  // The notebook's CPU step squares x_gpu by mistake; this squares x_cpu.
  const double t_cpu = timer.once("CPU_do_stuff", [&] {
    for (int64_t i = 0; i < n; ++i) x_cpu[i] *= 3;
    for (int64_t i = 0; i < n; ++i) x_cpu[i] *= x_cpu[i];
  });
  if (gpu) std::printf("GPU / CPU: %.0fx faster\n", t_cpu / t_gpu);
  x_gpu = cf::Array();
  if (gpu) cf::memory::free_all_blocks();
}

static const char* kMulSource = R"(
extern "C" __global__
void mul(const double* in, double* out, const int Z, const int Y, const int X) {
    int x = blockDim.x * blockIdx.x + threadIdx.x;
    int y = blockDim.y * blockIdx.y + threadIdx.y;
    if (x < X && y < Y) {
        out[y*X+x] = 1.;
        for (int z = 0; z < Z; z++)
            out[y*X+x] = out[y*X+x] * in[z*Y*X+y*X+x];
    }
}
)";
static const char* kMulRegSource = R"(
extern "C" __global__
void mulReg(const double* in, double* out, const int Z, const int Y, const int X) {
    int x = blockDim.x * blockIdx.x + threadIdx.x;
    int y = blockDim.y * blockIdx.y + threadIdx.y;
    if (x < X && y < Y) {
        double tmp = 1.;
        for (int z = 0; z < Z; z++)
            tmp = tmp * in[z*Y*X+y*X+x];
        out[y*X+x] = tmp;
    }
}
)";

// max |a - b| and whether every element is bitwise the same.
static std::pair<double, bool> compare(const std::vector<double>& a, const double* b) {
  double e = 0;
  bool same = true;
  for (size_t i = 0; i < a.size(); ++i) {
    e = std::max(e, std::abs(a[i] - b[i]));
    same = same && std::memcmp(&a[i], &b[i], sizeof(double)) == 0;
  }
  return {e, same};
}

static void product_along_axis(int64_t z_dim, int64_t yx, bool gpu) {
  const int64_t Y = yx, X = yx, layer_n = Y * X;
  std::printf("\n---- product along axis 0 of a (%lld, %lld, %lld) float64 stack\n", (long long)z_dim, (long long)Y,
              (long long)X);
  Timer timer;
  std::vector<double> layer(static_cast<size_t>(layer_n));
  // np.stack([layer] * z_dim) in page-locked memory (cupyx.empty_pinned): the copy to the
  // device then runs at the link's speed.
  cf::PinnedBuffer pinned = cf::empty_pinned({z_dim, Y, X}, cf::f64);
  double* arr = pinned.data_as<double>();
  timer.once("CPU_create_array", [&] {
    HostRandom r{3};
    for (auto& v : layer) v = r();
    for (int64_t z = 0; z < z_dim; ++z) std::memcpy(&arr[z * layer_n], layer.data(), layer_n * sizeof(double));
  });
  const cf::RawKernel mul_kernel(kMulSource, "mul");
  const cf::RawKernel mul_kernel_reg(kMulRegSource, "mulReg");
  mul_kernel.compile();  // NVRTC, or a cache hit; works without a GPU
  mul_kernel_reg.compile();
  std::printf("registers per thread: mul %d, mulReg %d\n", mul_kernel.num_regs(), mul_kernel_reg.num_regs());
  const unsigned warp_size = 32;
  const cf::Dim3 g_size((X + warp_size - 1) / warp_size, (Y + warp_size - 1) / warp_size);
  const cf::Dim3 b_size(warp_size, warp_size);
  std::printf("Grid size: (%u, %u)  Block size: (%u, %u)\n", g_size.x, g_size.y, b_size.x, b_size.y);

  cf::Array in_arr;
  auto copy_in = [&] { in_arr = cf::from_host(pinned); };
  if (gpu)
    timer.once("copy host-->dev", [&] {
      copy_in();
      cf::synchronize();
    });
  else
    copy_in();
  std::unique_ptr<double[]> out_cpu(new double[layer_n]);
  timer.once("CPU_calc", [&] {
    std::fill(out_cpu.get(), out_cpu.get() + layer_n, 1.0);
    for (int64_t z = 0; z < z_dim; ++z)
      for (int64_t i = 0; i < layer_n; ++i) out_cpu[i] *= arr[z * layer_n + i];
  });
  int64_t nonzero = 0;
  for (int64_t i = 0; i < layer_n; ++i) nonzero += out_cpu[i] != 0;
  std::printf("(%lld of %lld products are not 0: a value below ~%.3g to the power %lld underflows)\n",
              (long long)nonzero, (long long)layer_n, std::exp(-745.0 / double(z_dim)), (long long)z_dim);

  // assert_array_almost_equal(actual, desired) with decimal=6: |desired - actual| < 1.5e-6.
  const cf::Array desired = cf::from_host(out_cpu.get(), cf::f64, {Y, X});
  auto report = [&](const char* what, const cf::Array& out) {
    const auto [err, same] = compare(out.to_host<double>(), out_cpu.get());
    std::printf("  %-16s max |diff| %.1e%s", what, err, same ? ", bitwise equal" : "");
    try {
      cf::testing::assert_allclose(out, desired, 0, 1.5e-6);
      std::printf("  assert_allclose: passed\n");
    } catch (const cf::AssertionError& e) {
      std::printf("  assert_allclose: FAILED\n%s\n", e.what());
    }
  };
  cf::Array prod_out = cf::prod(in_arr, 0).eval();
  if (!gpu) {
    std::printf("the RawKernels need a GPU; cufuse's own prod(x, 0) on the reference backend:\n");
    report("prod(x, 0)", prod_out);
    return;
  }
  cf::Array out_arr;
  timer.once("GPU__create_empty_output_array", [&] { out_arr = cf::empty({Y, X}, cf::f64); });
  cf::Array out_arr_reg = cf::empty({Y, X}, cf::f64);
  const int Zi = int(z_dim), Yi = int(Y), Xi = int(X);
  const double t_mul = timer.gpu(
      "GPU_calc_mul",
      [&] {
        mul_kernel(g_size, b_size, {in_arr, out_arr, Zi, Yi, Xi});
      },
      5);
  const double t_reg = timer.gpu(
      "GPU_calc_mulReg",
      [&] {
        mul_kernel_reg(g_size, b_size, {in_arr, out_arr_reg, Zi, Yi, Xi});
      },
      5);
  timer.gpu(
      "GPU_calc prod(x, 0) (cufuse)", [&] { prod_out = cf::prod(in_arr, 0).eval(); }, 5);
  std::vector<double> out_gpu;
  timer.once("copy dev-->host", [&] { out_gpu = out_arr.to_host<double>(); });
  std::printf("register accumulation: %.1fx faster than accumulating in global memory\n", t_mul / t_reg);
  std::printf("check against the host loop:\n");
  report("mul", out_arr);
  report("mulReg", out_arr_reg);
  report("prod(x, 0)", prod_out);

  // __cuda_array_interface__: the device address of an array for other code (Array::data_ptr,
  // CuPy's .data.ptr), and memory from other code as an array without a copy
  // (from_device_pointer, CuPy's UnownedMemory); `owner` keeps that memory alive.
  void* ptr = out_arr_reg.data_ptr();
  const cf::Array foreign = cf::from_device_pointer(ptr, cf::f64, {Y, X}, std::nullopt,
                                                    std::shared_ptr<void>(ptr, [keep = out_arr_reg](void*) {}));
  std::printf("from_device_pointer(out_arr_reg.data_ptr()): the same memory: %s; equal to mulReg's output: %s\n",
              foreign.data_ptr() == ptr ? "yes" : "NO",
              cf::array_equal(foreign, out_arr_reg) ? "yes" : "NO");
}

int main() {
  const bool gpu = cf::Device::available();
  try {
    if (gpu) {
      const auto dev = cf::Device::current();
      std::printf("seed 001 on %s (sm_%d, %d SMs)\n\n", dev.name().c_str(), dev.compute_capability(),
                  dev.multiprocessor_count());
      basics(true);
      add_vectors(50000000, true);
      something_big(1024, true);
      product_along_axis(4096, 512, true);
      return 0;
    }
    std::printf("No CUDA device here (%s).\n", cf::Device::unavailable_reason().c_str());
    std::printf("Running small versions on the host reference backend instead (no GPU timings).\n\n");
    cf::BackendScope host(cf::Backend::Reference);
    basics(false);
    add_vectors(100000, false);
    something_big(64, false);
    product_along_axis(64, 32, false);
  } catch (const cf::Error& e) {
    std::printf("cufuse error: %s\n", e.what());
    return 1;
  }
  return 0;
}
