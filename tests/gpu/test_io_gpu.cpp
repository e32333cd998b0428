// tests/gpu/test_io_gpu.cpp: data in and out on a device: .npy/.npz round trips through
// device memory, DLPack round trips of kDLCUDA tensors (ours and a foreign one on cudaMalloc
// memory, with strides and byte_offset, the deleter after the queued work), from_device_pointer
// and data_ptr (writes reaching the foreign memory, the owner's lifetime), and pinned buffers
// (asynchronous copies on a stream, the pool's statistics and reuse).
#include <doctest/doctest.h>

#include <cuda_runtime_api.h>

#include <cstring>
#include <memory>
#include <numeric>
#include <vector>

#include "cufuse/cufuse.hpp"
#include "io/io_test_util.hpp"

namespace cf = cufuse;
using io_test::raw;

namespace {
#define CHECK_CUDA(x) REQUIRE((x) == cudaSuccess)
std::shared_ptr<void> device_alloc(size_t n, int* freed = nullptr) {
  void* p = nullptr;
  CHECK_CUDA(cudaMalloc(&p, n));
  return std::shared_ptr<void>(p, [freed](void* q) {
    cudaFree(q);
    if (freed) ++*freed;
  });
}
}  // namespace

TEST_CASE("gpu io: save/load and savez_compressed/load_npz through device memory") {
  io_test::TempDir dir;
  cf::Array a = (cf::arange(24).astype(cf::f32).reshape({2, 3, 4}) * 0.5).eval();
  cf::save(dir / "a.npy", a);
  cf::Array b = cf::load(dir / "a.npy");
  CHECK(b.device() == cf::Device::current().id());
  CHECK(raw(b) == raw(a));
  cf::Array f = cf::arange(6).reshape({2, 3}).T().eval();
  cf::savez_compressed(dir / "z.npz", {{"a", a}, {"f", f}});
  auto z = cf::load_npz(dir / "z.npz");
  REQUIRE(z.size() == 2);
  CHECK(raw(z[0].second) == raw(a));
  CHECK(raw(z[1].second) == raw(f));
  // The loaded array keeps the saved one's memory order (a Fortran-order file is a transposed view).
  CHECK_MESSAGE(z[1].second.strides() == f.strides(),
                "loaded " << cf::to_string(z[1].second.strides()) << ", saved " << cf::to_string(f.strides()));
}

TEST_CASE("gpu foreign: from_device_pointer on cudaMalloc memory, data_ptr, writes and the owner") {
  int freed = 0;
  {
    auto mem = device_alloc(16 * sizeof(float), &freed);
    std::vector<float> host(16);
    std::iota(host.begin(), host.end(), 0.f);
    CHECK_CUDA(cudaMemcpy(mem.get(), host.data(), 64, cudaMemcpyHostToDevice));
    cf::Array a = cf::from_device_pointer(mem.get(), cf::f32, {4, 4}, std::nullopt, mem);
    CHECK(a.device() == cf::Device::current().id());
    CHECK(a.data_ptr() == mem.get());
    // A transposed view through byte strides.
    cf::Array t = cf::from_device_pointer(mem.get(), cf::f32, {4, 4}, std::vector<int64_t>{4, 16}, mem);
    CHECK((t * 1).to_host<float>()[1] == 4.f);
    void* raw_ptr = mem.get();
    mem.reset();
    a += 1;
    a(0, cf::_) = 100;
    CHECK(a.data_ptr() == raw_ptr);  // settles both writes into the foreign memory
    CHECK_CUDA(cudaDeviceSynchronize());
    CHECK_CUDA(cudaMemcpy(host.data(), raw_ptr, 64, cudaMemcpyDeviceToHost));
    CHECK(host[0] == 100.f);
    CHECK(host[5] == 6.f);
    CHECK(freed == 0);
    cf::Array lazy = cf::sum(t);
    a = cf::Array();
    t = cf::Array();
    CHECK(freed == 0);  // the lazy sum reads it
    CHECK(lazy.item<float>() == doctest::Approx(400 + (5 + 16) * 12 / 2));  // row 0 is 100, the rest 5..16
    lazy = cf::Array();
    CHECK(freed == 1);
  }
}

#if __has_include(<dlpack/dlpack.h>)
TEST_CASE("gpu dlpack: kDLCUDA round trip, a foreign tensor with strides and byte_offset") {
  cf::Array a = (cf::arange(12).astype(cf::f64).reshape({3, 4}) * 2).eval();
  DLManagedTensor* m = cf::to_dlpack(a);
  CHECK(m->dl_tensor.device.device_type == kDLCUDA);
  CHECK(m->dl_tensor.device.device_id == a.device());
  CHECK(m->dl_tensor.data == a.data_ptr());
  cf::Array b = cf::from_dlpack(m);
  CHECK(b.data_ptr() == a.data_ptr());
  CHECK(raw(b) == raw(a));

  struct Ctx {
    std::shared_ptr<void> mem;
    int64_t shape[2] = {2, 3};
    int64_t strides[2] = {1, 4};  // a transposed (4-wide) int32 block
    int* deleted;
  };
  int deleted = 0;
  auto mem = device_alloc(64);
  std::vector<int32_t> host(16);
  std::iota(host.begin(), host.end(), 0);
  CHECK_CUDA(cudaMemcpy(mem.get(), host.data(), 64, cudaMemcpyHostToDevice));
  auto* ctx = new Ctx{mem, {2, 3}, {1, 4}, &deleted};
  auto* t = new DLManagedTensor{};
  t->dl_tensor.data = mem.get();
  t->dl_tensor.byte_offset = 4;  // from element 1
  t->dl_tensor.device = DLDevice{kDLCUDA, cf::Device::current().id()};
  t->dl_tensor.ndim = 2;
  t->dl_tensor.dtype = DLDataType{kDLInt, 32, 1};
  t->dl_tensor.shape = ctx->shape;
  t->dl_tensor.strides = ctx->strides;
  t->manager_ctx = ctx;
  t->deleter = [](DLManagedTensor* self) {
    auto* c = static_cast<Ctx*>(self->manager_ctx);
    ++*c->deleted;
    delete c;
    delete self;
  };
  {
    cf::Array x = cf::from_dlpack(t);
    CHECK(x.to_host<int32_t>() == std::vector<int32_t>{1, 5, 9, 2, 6, 10});
    cf::Array y = cf::sum(x * 3);
    x = cf::Array();
    CHECK(deleted == 0);
    CHECK(y.item<int64_t>() == 3 * (1 + 5 + 9 + 2 + 6 + 10));
  }
  CHECK(deleted == 1);
}
#endif

TEST_CASE("gpu pinned: asynchronous copies on a stream, the pool") {
  cf::memory::pinned_free_all_blocks();
  const size_t n = 1 << 20;
  {
    cf::PinnedBuffer h = cf::empty_pinned({static_cast<int64_t>(n)}, cf::f32);
    CHECK(h.is_pinned());
    CHECK(cf::memory::pinned_used_bytes() >= n * 4);
    float* p = h.data_as<float>();
    for (size_t i = 0; i < n; ++i) p[i] = static_cast<float>(i % 1000);
    cf::Stream s;
    cf::StreamScope scope(s);
    cf::Array d = cf::from_host(h);  // queued on s
    d = d * 2 + 1;
    cf::PinnedBuffer out = cf::empty_pinned({static_cast<int64_t>(n)}, cf::f32);
    d.copy_to_host(out);  // queued on s
    out.synchronize();
    CHECK(out.ready());
    const float* q = out.data_as<float>();
    bool all = true;
    for (size_t i = 0; i < n; ++i) all = all && q[i] == static_cast<float>(i % 1000) * 2 + 1;
    CHECK(all);
    // A copy issued on another stream waits for the first.
    cf::Stream s2;
    {
      cf::StreamScope scope2(s2);
      (d - 1).copy_to_host(out);
    }
    out.synchronize();
    CHECK(out.data_as<float>()[3] == 6.f);
  }
  CHECK(cf::memory::pinned_used_bytes() == 0);
  const size_t total = cf::memory::pinned_total_bytes();
  CHECK(total >= 2 * n * 4);
  {
    cf::PinnedBuffer again = cf::empty_pinned({static_cast<int64_t>(n)}, cf::f32);  // reused
    CHECK(cf::memory::pinned_total_bytes() == total);
  }
  cf::memory::pinned_free_all_blocks();
  CHECK(cf::memory::pinned_total_bytes() == 0);
}
