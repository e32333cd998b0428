// tests/test_io_interop.cpp: memory shared with other code, on the reference backend (host
// memory): from_device_pointer on host pointers (strides in bytes, negative strides, offsets,
// the owner's lifetime, writes landing in the foreign memory), data_ptr, DLPack round trips
// with kDLCPU tensors (strides, byte_offset, every dtype, the deleter's timing, refusals),
// and pinned buffers (which are plain host memory where there is no device).
#include <doctest/doctest.h>

#include <cstring>
#include <memory>
#include <numeric>
#include <vector>

#include "cufuse/cufuse.hpp"
#include "io/io_test_util.hpp"

namespace cf = cufuse;
using io_test::expect_error;
using io_test::raw;

TEST_CASE("foreign: from_device_pointer on host memory, zero copy, strides in bytes") {
  cf::BackendScope ref(cf::Backend::Reference);
  std::vector<float> mem(12);
  std::iota(mem.begin(), mem.end(), 0.f);
  cf::Array a = cf::from_device_pointer(mem.data(), cf::f32, {3, 4}, std::nullopt, nullptr, -1);
  CHECK(a.device() == -1);
  CHECK(a.to_host<float>() == mem);
  CHECK(a.data_ptr() == mem.data());
  // Column view through byte strides: shape (4, 3), strides (4, 16) bytes.
  cf::Array t = cf::from_device_pointer(mem.data(), cf::f32, {4, 3}, std::vector<int64_t>{4, 16}, nullptr, -1);
  CHECK(t.to_host<float>() == std::vector<float>{0, 4, 8, 1, 5, 9, 2, 6, 10, 3, 7, 11});
  // Negative strides: the last row, backwards.
  cf::Array r = cf::from_device_pointer(&mem[11], cf::f32, {4}, std::vector<int64_t>{-4}, nullptr, -1);
  CHECK(r.to_host<float>() == std::vector<float>{11, 10, 9, 8});
  CHECK(r.data_ptr() == &mem[11]);
  // Broadcast (stride 0) reads; such a view is not writable, as in NumPy.
  cf::Array b = cf::from_device_pointer(mem.data(), cf::f32, {3}, std::vector<int64_t>{0}, nullptr, -1);
  CHECK(b.to_host<float>() == std::vector<float>{0, 0, 0});
  // Under the reference backend the default device is the host.
  CHECK(cf::from_device_pointer(mem.data(), cf::f32, {12}).device() == -1);

  expect_error([&] { cf::from_device_pointer(mem.data(), cf::f32, {3}, std::vector<int64_t>{6}, nullptr, -1); },
               {"stride 6 bytes", "itemsize 4"});
  expect_error([&] { cf::from_device_pointer(mem.data(), cf::f32, {3, 4}, std::vector<int64_t>{4}, nullptr, -1); },
               {"1 strides", "(3, 4)"});
  expect_error([&] { cf::from_device_pointer(reinterpret_cast<char*>(mem.data()) + 2, cf::f32, {2}, std::nullopt, nullptr, -1); },
               {"not aligned", "float32"});
  expect_error([&] { cf::from_device_pointer(nullptr, cf::f32, {2}, std::nullopt, nullptr, -1); }, {"null pointer"});
  CHECK(cf::from_device_pointer(nullptr, cf::f32, {0}, std::nullopt, nullptr, -1).size() == 0);
}

TEST_CASE("foreign: writes land in the foreign memory and are never dropped") {
  cf::BackendScope ref(cf::Backend::Reference);
  std::vector<int32_t> mem(6, 1);
  {
    cf::Array a = cf::from_device_pointer(mem.data(), cf::i32, {2, 3}, std::nullopt, nullptr, -1);
    a *= 5;
    a(0, cf::_) += 1;
    // data_ptr settles the pending writes before it hands the address out.
    CHECK(a.data_ptr() == mem.data());
    CHECK(mem == std::vector<int32_t>{6, 6, 6, 5, 5, 5});
  }
  {
    // The handle goes away with its write still pending: the write is carried out anyway at
    // the next materialization point (the owner reads the memory behind cufuse's back).
    auto a = std::make_unique<cf::Array>(cf::from_device_pointer(mem.data(), cf::i32, {6}, std::nullopt, nullptr, -1));
    *a += 10;
    a.reset();
    (cf::arange(3) + 1).eval();  // any materialization point carries out this thread's pending writes
    CHECK(mem == std::vector<int32_t>{16, 16, 16, 15, 15, 15});
  }
}

TEST_CASE("foreign: the owner lives until the last array on the memory is gone") {
  cf::BackendScope ref(cf::Backend::Reference);
  auto mem = std::make_shared<std::vector<double>>(8, 2.0);
  std::weak_ptr<std::vector<double>> watch = mem;
  {
    cf::Array a = cf::from_device_pointer(mem->data(), cf::f64, {8}, std::nullopt, mem, -1);
    mem.reset();
    CHECK_FALSE(watch.expired());
    cf::Array v = a(cf::slice(2, 6));
    cf::Array lazy = v * 3;
    a = cf::Array();
    CHECK_FALSE(watch.expired());  // the view holds it
    v = cf::Array();
    CHECK_FALSE(watch.expired());  // the lazy expression reads it
    CHECK(lazy.to_host<double>() == std::vector<double>{6, 6, 6, 6});
  }
  CHECK(watch.expired());
}

TEST_CASE("data_ptr: materializes, points at element 0 of views, settles writes made through other handles") {
  cf::BackendScope ref(cf::Backend::Reference);
  cf::Array a = cf::arange(12).astype(cf::f32).reshape({3, 4});
  auto* p = static_cast<float*>(a.data_ptr());
  CHECK(p[5] == 5.f);
  cf::Array v = a(1, cf::slice(1, cf::none));
  CHECK(static_cast<float*>(v.data_ptr()) == p + 5);
  v += 100;  // a pending write into a's memory through the view
  CHECK(a.data_ptr() == p);
  CHECK(p[5] == 105.f);
  expect_error([&] { cf::placeholder(cf::f32, {2}).data_ptr(); }, {"placeholder"});
}

// A view of a lazy array (the reshape of a lazy astype above) exports the memory of the array it
// views, its home from then on: a write through the handle, or into that array, lands there.
TEST_CASE("data_ptr of a view of a lazy array: the pointer stays the array's through later writes") {
  cf::BackendScope ref(cf::Backend::Reference);
  cf::Array a = cf::arange(12).astype(cf::f32).reshape({3, 4});
  auto* p = static_cast<float*>(a.data_ptr());
  a += 100;
  CHECK(a.data_ptr() == p);
  CHECK(p[5] == 105.f);
  cf::Array y = cf::arange(12).astype(cf::f32);
  cf::Array b = y.T().reshape({3, 4});
  auto* q = static_cast<float*>(b.data_ptr());
  y += 100;
  CHECK(b.data_ptr() == q);
  CHECK(q[5] == 105.f);
  CHECK(y.data_ptr() == q);
}

// is_contiguous answers for the memory data_ptr then names: a column slice of a lazy array is
// strided in that array's memory, not the contiguous copy evaluating it alone would make (a
// collective read nbytes from data_ptr() of such a shard after is_contiguous() said yes).
TEST_CASE("is_contiguous of a view of a lazy array agrees with data_ptr and strides") {
  cf::BackendScope ref(cf::Backend::Reference);
  cf::Array y = cf::arange(24).astype(cf::f32).reshape({4, 6});
  cf::Array v = y.index({cf::slice(cf::none, cf::none), cf::slice(2, 5)});
  CHECK_FALSE(v.is_contiguous());
  auto* p = static_cast<float*>(v.data_ptr());
  CHECK(v.strides() == cf::Strides{6, 1});
  CHECK(p[0] == 2.f);
  CHECK(p[6] == 8.f);  // the next row of the base, not v[0, 1]'s neighbour in a copy
  cf::Array rows = cf::arange(24).astype(cf::f32).reshape({4, 6}).index({cf::slice(1, 3)});
  CHECK(rows.is_contiguous());
  CHECK(static_cast<float*>(rows.data_ptr())[0] == 6.f);
}

#if __has_include(<dlpack/dlpack.h>)
TEST_CASE("dlpack: to_dlpack of a host array, then from_dlpack, every dtype") {
  cf::BackendScope ref(cf::Backend::Reference);
  const cf::DType all[] = {cf::bool_, cf::i8, cf::i16, cf::i32, cf::i64, cf::u8, cf::u16,
                           cf::u32, cf::u64, cf::f16, cf::bf16, cf::f32, cf::f64};
  for (cf::DType t : all) {
    CAPTURE(cf::name(t));
    cf::Array a = (cf::arange(6) % 4).astype(t).reshape({2, 3});
    DLManagedTensor* m = cf::to_dlpack(a);
    REQUIRE(m != nullptr);
    CHECK(m->dl_tensor.device.device_type == kDLCPU);
    CHECK(m->dl_tensor.ndim == 2);
    CHECK(m->dl_tensor.shape[0] == 2);
    CHECK(m->dl_tensor.shape[1] == 3);
    CHECK(m->dl_tensor.dtype.bits == cf::itemsize(t) * 8);
    CHECK(m->dl_tensor.dtype.lanes == 1);
    CHECK(m->dl_tensor.data == a.data_ptr());
    cf::Array b = cf::from_dlpack(m);  // b owns m now
    CHECK(b.dtype() == t);
    CHECK(b.shape() == a.shape());
    CHECK(b.data_ptr() == a.data_ptr());  // zero copy both ways
    CHECK(raw(b) == raw(a));
  }
}

namespace {
// A DLPack producer of our own: a tensor over a vector, with a deleter that counts.
struct Producer {
  std::vector<int16_t> data;
  std::vector<int64_t> shape, strides;
  int* deleted;
};
DLManagedTensor* make_tensor(std::vector<int16_t> data, std::vector<int64_t> shape, std::vector<int64_t> strides,
                             uint64_t byte_offset, int* deleted, DLDataType dt = DLDataType{kDLInt, 16, 1}) {
  auto* p = new Producer{std::move(data), std::move(shape), std::move(strides), deleted};
  auto* m = new DLManagedTensor{};
  m->dl_tensor.data = p->data.data();
  m->dl_tensor.device = DLDevice{kDLCPU, 0};
  m->dl_tensor.ndim = static_cast<int>(p->shape.size());
  m->dl_tensor.dtype = dt;
  m->dl_tensor.shape = p->shape.data();
  m->dl_tensor.strides = p->strides.empty() ? nullptr : p->strides.data();
  m->dl_tensor.byte_offset = byte_offset;
  m->manager_ctx = p;
  m->deleter = [](DLManagedTensor* self) {
    auto* pp = static_cast<Producer*>(self->manager_ctx);
    ++*pp->deleted;
    delete pp;
    delete self;
  };
  return m;
}
}  // namespace

TEST_CASE("dlpack: from_dlpack honours strides and byte_offset and calls the deleter once, at the end") {
  cf::BackendScope ref(cf::Backend::Reference);
  int deleted = 0;
  {
    std::vector<int16_t> d(20);
    std::iota(d.begin(), d.end(), int16_t(0));
    // Elements from byte 4 (element 2), shape (3, 2), strides (5, -1) in elements: rows of
    // two, each backwards.
    DLManagedTensor* m = make_tensor(d, {3, 2}, {5, -1}, 4 + 2, &deleted);  // element 3
    cf::Array a = cf::from_dlpack(m);
    CHECK(a.to_host<int16_t>() == std::vector<int16_t>{3, 2, 8, 7, 13, 12});
    cf::Array b = a * 2;
    a = cf::Array();
    CHECK(deleted == 0);
    CHECK(b.to_host<int16_t>() == std::vector<int16_t>{6, 4, 16, 14, 26, 24});
    b = cf::Array();
    CHECK(deleted == 1);
  }
  {
    // Writes through cufuse reach the producer's memory; exported again, the consumer sees them.
    DLManagedTensor* m = make_tensor(std::vector<int16_t>(4, 1), {4}, {}, 0, &deleted);
    auto* producer_data = static_cast<int16_t*>(m->dl_tensor.data);
    cf::Array a = cf::from_dlpack(m);
    a += 41;
    DLManagedTensor* back = cf::to_dlpack(a);  // settles the write first
    CHECK(back->dl_tensor.data == producer_data);
    CHECK(producer_data[3] == 42);
    a = cf::Array();
    CHECK(deleted == 1);  // the exported tensor still holds the memory
    back->deleter(back);
    CHECK(deleted == 2);
  }
  {
    // A zero-size tensor may have no data pointer.
    DLManagedTensor* m = make_tensor({}, {0, 3}, {}, 0, &deleted);
    m->dl_tensor.data = nullptr;
    CHECK(cf::from_dlpack(m).shape() == cf::Shape{0, 3});
    CHECK(deleted == 3);
  }
}

TEST_CASE("dlpack: refusals name the problem and still hand the tensor back") {
  cf::BackendScope ref(cf::Backend::Reference);
  int deleted = 0;
  expect_error([&] { cf::from_dlpack(make_tensor({1, 2}, {1}, {}, 0, &deleted, DLDataType{kDLComplex, 32, 1})); },
               {"bit width"});
  expect_error([&] { cf::from_dlpack(make_tensor({1, 2}, {1}, {}, 0, &deleted, DLDataType{kDLFloat, 32, 4})); },
               {"lanes"});
  expect_error([&] { cf::from_dlpack(make_tensor({1, 2}, {1}, {}, 0, &deleted, DLDataType{kDLFloat, 8, 1})); },
               {"bit width"});
  {
    DLManagedTensor* m = make_tensor({1, 2}, {2}, {}, 0, &deleted);
    m->dl_tensor.device = DLDevice{kDLOpenCL, 0};
    expect_error([&] { cf::from_dlpack(m); }, {"device type 4"});
  }
  CHECK(deleted == 4);
  expect_error([&] { cf::from_dlpack(static_cast<DLManagedTensor*>(nullptr)); }, {"null"});
}
#endif

TEST_CASE("pinned: buffers, their pool, and copies to and from arrays") {
  cf::BackendScope ref(cf::Backend::Reference);
  cf::memory::pinned_free_all_blocks();
  const size_t used0 = cf::memory::pinned_used_bytes();
  {
    cf::PinnedBuffer h = cf::empty_pinned({2, 3}, cf::f32);
    CHECK(h.shape() == cf::Shape{2, 3});
    CHECK(h.nbytes() == 24);
    CHECK(cf::memory::pinned_used_bytes() == used0 + 512);  // rounded to the pool's 512 bytes
    float* p = h.data_as<float>();
    for (int i = 0; i < 6; ++i) p[i] = static_cast<float>(i);
    cf::Array a = cf::from_host(h);
    CHECK(a.shape() == cf::Shape{2, 3});
    CHECK(a.to_host<float>() == std::vector<float>{0, 1, 2, 3, 4, 5});
    cf::Array b = (a * 2).T();
    cf::PinnedBuffer out = cf::zeros_pinned({3, 2}, cf::f32);
    b.copy_to_host(out);
    out.synchronize();
    CHECK(out.ready());
    CHECK(std::vector<float>(out.data_as<float>(), out.data_as<float>() + 6) == std::vector<float>{0, 6, 2, 8, 4, 10});
    expect_error([&] { (void)h.data_as<double>(); }, {"float64", "float32"});
    expect_error([&] { a.astype(cf::f64).copy_to_host(out); }, {"float64", "float32"});
    expect_error([&] { cf::arange(5).astype(cf::f32).copy_to_host(out); }, {"5 elements", "6"});
  }
  CHECK(cf::memory::pinned_used_bytes() == used0);
  CHECK(cf::memory::pinned_total_bytes() >= 1024);
  {
    cf::PinnedBuffer again = cf::empty_pinned({100}, cf::u8);  // reuses a free 512-byte block
    CHECK(cf::memory::pinned_total_bytes() >= 1024);
  }
  cf::memory::pinned_free_all_blocks();
  CHECK(cf::memory::pinned_total_bytes() == cf::memory::pinned_used_bytes());
  expect_error([&] { cf::from_host(cf::PinnedBuffer()); }, {"empty"});
}
