// tests/test_reference_evaluator.cpp: the host reference evaluator beyond the NumPy oracle:
// leaves (placeholders, scalars, random generators), the DAG walk (shared nodes, several
// roots, deep chains), errors, HostArray's accessors, the semantics we give where NumPy's
// are undefined or raise (the divergences listed in test_reference_oracle.cpp), device
// buffers where a GPU is present, and speed on a million elements.
#include <doctest/doctest.h>

#include <chrono>
#include <cmath>
#include <cstring>
#include <limits>
#include <vector>

#include <fmt/format.h>

#include "codegen/host_helpers.hpp"
#include "core/node.hpp"
#include "core/op_table.hpp"
#include "cufuse/error.hpp"
#include "reference/evaluator.hpp"
#include "runtime/storage.hpp"
#include "runtime/transfer.hpp"

using namespace cufuse;
using namespace cufuse::detail;

namespace {

template <class T>
NodePtr host_array(DType t, const Shape& shape, const std::vector<T>& v) {
  REQUIRE(static_cast<int64_t>(v.size()) == numel(shape));
  REQUIRE(sizeof(T) == static_cast<size_t>(itemsize(t)));
  auto st = allocate_host(std::max<size_t>(v.size() * sizeof(T), 1));
  if (!v.empty()) std::memcpy(st->ptr, v.data(), v.size() * sizeof(T));  // an empty vector's data() may be null
  return make_buffer(t, contiguous_layout(shape), std::move(st));
}
template <class T>
NodePtr host_vector(DType t, const std::vector<T>& v) {
  return host_array(t, Shape{static_cast<int64_t>(v.size())}, v);
}

NodePtr ew(Op op, std::initializer_list<NodePtr> ins, DType cast_to = DType::Bool) {
  DType dts[3];
  InputVec iv;
  int n = 0;
  for (const auto& i : ins) {
    dts[n++] = i->dtype;
    iv.push_back(i);
  }
  OpTyping ty = type_op(op, dts, n, cast_to);
  const Shape shape = iv[0]->shape();  // before iv is moved from
  return make_elementwise(static_cast<uint16_t>(op), ty.result, shape, std::move(iv));
}

template <class T>
std::vector<T> values(const HostArray& a) {
  REQUIRE(sizeof(T) == static_cast<size_t>(itemsize(a.dtype)));
  std::vector<T> v(static_cast<size_t>(a.size()));
  if (!v.empty()) std::memcpy(v.data(), a.bytes.data(), a.bytes.size());
  return v;
}

}  // namespace

TEST_CASE("reference: a placeholder leaf is an error naming its dtype and shape") {
  NodePtr p = make_placeholder(DType::Float32, Shape{3, 4});
  NodePtr y = ew(Op::Sin, {p});
  try {
    reference_evaluate(y);
    FAIL("evaluating a placeholder did not throw");
  } catch (const ValueError& e) {
    std::string m = e.what();
    CHECK(m.find("float32") != std::string::npos);
    CHECK(m.find("(3, 4)") != std::string::npos);
  }
}

TEST_CASE("reference: scalar leaves hold the value as their dtype, over their shape") {
  auto f16 = values<uint16_t>(reference_evaluate(make_scalar(Scalar(0.1), DType::Float16, Shape{2, 3})));
  CHECK(f16 == std::vector<uint16_t>(6, 0x2e66));  // np.float16(0.1)
  auto bf16 = values<uint16_t>(reference_evaluate(make_scalar(Scalar(0.1), DType::BFloat16, Shape{2})));
  CHECK(bf16 == std::vector<uint16_t>(2, 0x3dcd));  // ml_dtypes.bfloat16(0.1)
  CHECK(values<uint8_t>(reference_evaluate(make_scalar(Scalar(300), DType::UInt8, Shape{3}))) ==
        std::vector<uint8_t>(3, 44));
  CHECK(values<uint16_t>(reference_evaluate(make_scalar(Scalar(-1), DType::UInt16))) == std::vector<uint16_t>{65535});
  CHECK(values<int64_t>(reference_evaluate(make_scalar(Scalar(-7), DType::Int64, Shape{1}))) ==
        std::vector<int64_t>{-7});
  CHECK(values<uint64_t>(reference_evaluate(make_scalar(Scalar(~0ull), DType::UInt64, Shape{1}))) ==
        std::vector<uint64_t>{~0ull});
  CHECK(values<float>(reference_evaluate(make_scalar(Scalar(true), DType::Float32, Shape{2}))) ==
        std::vector<float>{1.f, 1.f});
  CHECK(values<uint8_t>(reference_evaluate(make_scalar(Scalar(0.5), DType::Bool, Shape{1}))) == std::vector<uint8_t>{1});
  CHECK(values<double>(reference_evaluate(make_scalar(Scalar(0.1), DType::Float64))) == std::vector<double>{0.1});
  // A scalar next to an array: x + 0.1 in float16 adds np.float16(0.1).
  NodePtr x = host_vector<uint16_t>(DType::Float16, {0x3c00});  // 1.0
  NodePtr s = make_scalar(Scalar(0.1), DType::Float16, Shape{1});
  CHECK(values<uint16_t>(reference_evaluate(ew(Op::Add, {x, s}))) == std::vector<uint16_t>{0x3c66});  // 1.0996
}

TEST_CASE("reference: shared nodes, several roots and repeated roots") {
  NodePtr x = host_vector<int32_t>(DType::Int32, {1, 2, 3});
  NodePtr y = ew(Op::Multiply, {x, x});
  NodePtr z = ew(Op::Add, {y, y});
  NodePtr w = ew(Op::Subtract, {z, x});
  auto r = reference_evaluate(std::vector<NodePtr>{z, y, w, z, x});
  REQUIRE(r.size() == 5);
  CHECK(values<int32_t>(r[0]) == std::vector<int32_t>{2, 8, 18});
  CHECK(values<int32_t>(r[1]) == std::vector<int32_t>{1, 4, 9});
  CHECK(values<int32_t>(r[2]) == std::vector<int32_t>{1, 6, 15});
  CHECK(values<int32_t>(r[3]) == std::vector<int32_t>{2, 8, 18});
  CHECK(values<int32_t>(r[4]) == std::vector<int32_t>{1, 2, 3});
  CHECK(reference_evaluate(std::vector<NodePtr>{}).empty());
}

TEST_CASE("reference: a long chain is walked without recursion") {
  NodePtr x = host_vector<int64_t>(DType::Int64, {0, 10});
  NodePtr one = make_scalar(Scalar(1), DType::Int64, Shape{2});
  NodePtr cur = x;
  const int depth = 20000;
  for (int i = 0; i < depth; ++i) cur = ew(Op::Add, {cur, one});
  CHECK(values<int64_t>(reference_evaluate(cur)) == std::vector<int64_t>{depth, depth + 10});
  // Unwind the chain iteratively: destroying 20000 nested nodes recursively is the
  // graph's business, not this test's.
  while (cur->inputs.size()) {
    NodePtr next = cur->inputs[0];
    cur->inputs.clear();
    cur = next;
  }
}

TEST_CASE("reference: broadcasting inputs, and inputs that cannot broadcast") {
  NodePtr a = host_array<float>(DType::Float32, Shape{2, 1}, {1, 2});
  NodePtr b = host_array<float>(DType::Float32, Shape{3}, {10, 20, 30});
  InputVec iv{a, b};
  NodePtr s = make_elementwise(static_cast<uint16_t>(Op::Add), DType::Float32, Shape{2, 3}, iv);
  CHECK(values<float>(reference_evaluate(s)) == std::vector<float>{11, 21, 31, 12, 22, 32});
  InputVec bad{host_vector<float>(DType::Float32, {1, 2}), b};
  NodePtr t = make_elementwise(static_cast<uint16_t>(Op::Add), DType::Float32, Shape{3}, bad);
  CHECK_THROWS_AS(reference_evaluate(t), ValueError);
}

TEST_CASE("reference: inconsistent nodes are internal errors, not wrong answers") {
  // A node whose dtype is not type_op's result.
  InputVec iv{host_vector<float>(DType::Float32, {1}), host_vector<float>(DType::Float32, {2})};
  NodePtr n = make_elementwise(static_cast<uint16_t>(Op::Add), DType::Float64, Shape{1}, iv);
  CHECK_THROWS_AS(reference_evaluate(n), InternalError);
  // A buffer layout reaching past its storage.
  auto st = allocate_host(4 * sizeof(float));
  NodePtr past = make_buffer(DType::Float32, Layout{Shape{3}, Strides{2}, 0}, st);
  CHECK_THROWS_AS(reference_evaluate(past), InternalError);
  NodePtr before = make_buffer(DType::Float32, Layout{Shape{2}, Strides{-1}, 0}, st);
  CHECK_THROWS_AS(reference_evaluate(before), InternalError);
  // A view reaching past its input's elements.
  NodePtr v = make_view(host_vector<float>(DType::Float32, {1, 2, 3}), Layout{Shape{2}, Strides{2}, 1});
  CHECK_THROWS_AS(reference_evaluate(v), InternalError);
  // An op NumPy has no loop for.
  InputVec bb{host_vector<uint8_t>(DType::Bool, {1}), host_vector<uint8_t>(DType::Bool, {0})};
  NodePtr sub = make_elementwise(static_cast<uint16_t>(Op::Subtract), DType::Bool, Shape{1}, bb);
  CHECK_THROWS_AS(reference_evaluate(sub), TypeError);
}

TEST_CASE("reference: empty arrays and bool storage bytes other than 0/1") {
  NodePtr e = host_array<float>(DType::Float32, Shape{0, 3}, {});
  HostArray r = reference_evaluate(ew(Op::Exp, {e}));
  CHECK(r.size() == 0);
  CHECK(r.shape == Shape{0, 3});
  NodePtr b = host_vector<uint8_t>(DType::Bool, {0, 1, 2, 255});
  CHECK(values<uint8_t>(reference_evaluate(b)) == std::vector<uint8_t>{0, 1, 1, 1});
  CHECK(values<uint8_t>(reference_evaluate(ew(Op::LogicalNot, {b}))) == std::vector<uint8_t>{1, 0, 0, 0});
}

TEST_CASE("reference: HostArray accessors") {
  HostArray h = reference_evaluate(host_vector<uint16_t>(DType::Float16, {0x3e00, 0xc500, 0x7e00}));  // 1.5, -5, nan
  CHECK(h.get_double(0) == 1.5);
  CHECK(h.get_int64(1) == -5);
  CHECK(std::isnan(h.get_double(2)));
  CHECK(h.get_int64(2) == 0);
  CHECK_THROWS_AS(h.get_double(3), IndexError);
  CHECK_THROWS_AS(h.get_double(-1), IndexError);
  HostArray i = reference_evaluate(host_vector<int64_t>(DType::Int64, {-1, std::numeric_limits<int64_t>::min()}));
  CHECK(i.get_uint64(0) == ~0ull);
  CHECK(i.get_int64(1) == std::numeric_limits<int64_t>::min());
  CHECK(i.get_double(0) == -1.0);
  HostArray u = reference_evaluate(host_vector<uint64_t>(DType::UInt64, {~0ull}));
  CHECK(u.get_uint64(0) == ~0ull);
  CHECK(u.get_double(0) == 18446744073709551615.0);
  HostArray f = reference_evaluate(host_vector<double>(DType::Float64, {2.7, -2.7, 1e300}));
  CHECK(f.get_int64(0) == 2);
  CHECK(f.get_int64(1) == -2);
  CHECK(f.get_int64(2) == std::numeric_limits<int64_t>::max());
  CHECK(f.get_uint64(1) == 0);
  HostArray b = reference_evaluate(host_vector<uint16_t>(DType::BFloat16, {0x3fc0}));  // 1.5
  CHECK(b.get_double(0) == 1.5);
  HostArray t = reference_evaluate(host_vector<uint8_t>(DType::Bool, {1, 0}));
  CHECK(t.get_double(0) == 1.0);
  CHECK(t.get_int64(1) == 0);
  HostArray s = reference_evaluate(host_vector<int8_t>(DType::Int8, {-3}));
  CHECK(s.get_uint64(0) == static_cast<uint64_t>(-3ll));
}

// ------------------------------------------------------------ where NumPy raises or is undefined
TEST_CASE("reference: integer power with a negative exponent truncates (divergence 1)") {
  NodePtr a = host_vector<int32_t>(DType::Int32, {2, 1, -1, -1, 0, 5, -3});
  NodePtr b = host_vector<int32_t>(DType::Int32, {-1, -5, -3, -2, -1, 3, 3});
  CHECK(values<int32_t>(reference_evaluate(ew(Op::Power, {a, b}))) == std::vector<int32_t>{0, 1, -1, 1, 0, 125, -27});
}

TEST_CASE("reference: integer reciprocal of 0 is 0 (divergence 2)") {
  NodePtr a = host_vector<int8_t>(DType::Int8, {0, 1, -1, 2, -128});
  CHECK(values<int8_t>(reference_evaluate(ew(Op::Reciprocal, {a}))) == std::vector<int8_t>{0, 1, -1, 0, 0});
  NodePtr u = host_vector<uint64_t>(DType::UInt64, {0, 1});
  CHECK(values<uint64_t>(reference_evaluate(ew(Op::Reciprocal, {u}))) == std::vector<uint64_t>{0, 1});
}

TEST_CASE("reference: float -> integer casts saturate and send NaN to 0 (divergence 3)") {
  const float inf = std::numeric_limits<float>::infinity(), nan = std::numeric_limits<float>::quiet_NaN();
  NodePtr f = host_vector<float>(DType::Float32, {nan, inf, -inf, 3e9f, -3e9f, -1.5f, 2.99f});
  CHECK(values<int32_t>(reference_evaluate(ew(Op::Cast, {f}, DType::Int32))) ==
        std::vector<int32_t>{0, INT32_MAX, INT32_MIN, INT32_MAX, INT32_MIN, -1, 2});
  CHECK(values<uint8_t>(reference_evaluate(ew(Op::Cast, {f}, DType::UInt8))) ==
        std::vector<uint8_t>{0, 255, 0, 255, 0, 0, 2});
  NodePtr d = host_vector<double>(DType::Float64, {1e30, -1e30, 9.3e18});
  CHECK(values<int64_t>(reference_evaluate(ew(Op::Cast, {d}, DType::Int64))) ==
        std::vector<int64_t>{INT64_MAX, INT64_MIN, INT64_MAX});
  CHECK(values<uint64_t>(reference_evaluate(ew(Op::Cast, {d}, DType::UInt64))) ==
        std::vector<uint64_t>{~0ull, 0, 9300000000000000000ull});
  NodePtr h = host_vector<uint16_t>(DType::Float16, {0x7c00, 0xfe00});  // inf, nan
  CHECK(values<int16_t>(reference_evaluate(ew(Op::Cast, {h}, DType::Int16))) == std::vector<int16_t>{INT16_MAX, 0});
}

TEST_CASE("reference: float64 -> float16/bfloat16 rounds once, other sources through float") {
  // 1 + 2^-8 + 2^-40: halfway between two bfloat16 values plus a little; float32 rounds the
  // little away (a tie, then to even: 1.0); one rounding from double gives 1 + 2^-7.
  NodePtr d = host_vector<double>(DType::Float64, {1.0 + std::ldexp(1.0, -8) + std::ldexp(1.0, -40)});
  CHECK(values<uint16_t>(reference_evaluate(ew(Op::Cast, {d}, DType::BFloat16))) == std::vector<uint16_t>{0x3f81});
  NodePtr h = host_vector<double>(DType::Float64, {1.0 + std::ldexp(1.0, -11) + std::ldexp(1.0, -40)});
  CHECK(values<uint16_t>(reference_evaluate(ew(Op::Cast, {h}, DType::Float16))) == std::vector<uint16_t>{0x3c01});
  // int64 -> bfloat16 goes through float, as NumPy/ml_dtypes do: 2^24 + 2^16 + 1 -> 2^24.
  NodePtr i = host_vector<int64_t>(DType::Int64, {(1ll << 24) + (1ll << 16) + 1});
  CHECK(values<uint16_t>(reference_evaluate(ew(Op::Cast, {i}, DType::BFloat16))) == std::vector<uint16_t>{0x4b80});
}

// ------------------------------------------------------------ random generators
TEST_CASE("reference: Philox4x32-10 matches the Random123 known answer") {
  // Random123 kat_vectors: philox4x32 10 rounds, counter 0, key 0.
  ref_kern::cf_u4 r = ref_kern::cf_philox(0, 0);
  CHECK(r.x == 0x6627e8d5u);
  CHECK(r.y == 0xe169c58du);
  CHECK(r.z == 0xbc57ac4cu);
  CHECK(r.w == 0x9b00dbd8u);
}

TEST_CASE("reference: random generators take pos + counter through the layout, in the dtype's compute type") {
  GenParams p;
  p.seed = 1234;
  p.counter = 1000;
  p.start = -2;
  p.stop = 3;
  Layout l{Shape{3, 4}, Strides{1, 5}, 7};  // positions 7 + i + 5j
  HostArray u = reference_evaluate(make_generator(GenKind::RandomUniform, DType::Float32, l, p));
  HostArray un = reference_evaluate(make_generator(GenKind::RandomNormal, DType::Float64, l, p));
  HostArray uh = reference_evaluate(make_generator(GenKind::RandomUniform, DType::Float16, l, p));
  auto fv = values<float>(u);
  auto dv = values<double>(un);
  auto hv = values<uint16_t>(uh);
  for (int i = 0; i < 3; ++i)
    for (int j = 0; j < 4; ++j) {
      const unsigned long long ctr = 7 + i + 5 * j + 1000;
      float f = ref_kern::cf_random_uniform<float>(1234, ctr, -2.f, 3.f);
      CHECK(fv[i * 4 + j] == f);
      CHECK(f >= -2.f);
      CHECK(f < 3.f);
      CHECK(dv[i * 4 + j] == ref_kern::cf_random_normal<double>(1234, ctr, -2.0, 3.0));
      CHECK(hv[i * 4 + j] == half(f).bits);
    }
  // The same stream with counter 0 shifted by 1000 positions.
  GenParams q = p;
  q.counter = 0;
  HostArray shifted = reference_evaluate(make_generator(GenKind::RandomUniform, DType::Float32,
                                                        Layout{Shape{3, 4}, Strides{1, 5}, 1007}, q));
  CHECK(values<float>(shifted) == fv);
  GenParams bad = p;
  CHECK_THROWS_AS(reference_evaluate(make_generator(GenKind::RandomNormal, DType::Int32, l, bad)), NotSupportedError);
}

TEST_CASE("reference: uniform and normal generators have the right moments") {
  const int64_t n = 200000;
  GenParams p;
  p.seed = 7;
  p.start = 1.0;
  p.stop = 2.0;
  for (DType t : {DType::Float32, DType::Float64}) {
    HostArray u = reference_evaluate(make_generator(GenKind::RandomUniform, t, contiguous_layout({n}), p));
    HostArray g = reference_evaluate(make_generator(GenKind::RandomNormal, t, contiguous_layout({n}), p));
    double su = 0, sg = 0, sg2 = 0, lo = 1e9, hi = -1e9;
    for (int64_t i = 0; i < n; ++i) {
      double x = u.get_double(i), y = g.get_double(i);
      su += x;
      lo = std::min(lo, x);
      hi = std::max(hi, x);
      sg += y;
      sg2 += y * y;
    }
    const double mu = su / n, mg = sg / n, sd = std::sqrt(sg2 / n - mg * mg);
    CHECK(mu == doctest::Approx(1.5).epsilon(0.005));
    CHECK(lo >= 1.0);
    CHECK(hi < 2.0);
    CHECK(mg == doctest::Approx(1.0).epsilon(0.02));  // mean 1, sd 2: error ~ 2/sqrt(n)
    CHECK(sd == doctest::Approx(2.0).epsilon(0.01));
  }
}

// ------------------------------------------------------------ device memory
TEST_CASE("reference: device buffers are read through their layout (needs a GPU)") {
  std::shared_ptr<Storage> st;
  try {
    st = allocate_device(64 * sizeof(float));
  } catch (const NoDeviceError& e) {
    MESSAGE(fmt::format("skipped: no CUDA device ({})", e.what()));
    return;
  }
  std::vector<float> host(64);
  for (int i = 0; i < 64; ++i) host[i] = static_cast<float>(i);
  copy_from_host(st->ptr, host.data(), host.size() * sizeof(float), st->stream);
  // Column 2 of an 8x8 matrix read bottom-up, from element 58 down to element 2.
  NodePtr col = make_buffer(DType::Float32, Layout{Shape{8}, Strides{-8}, 58}, st);
  CHECK(values<float>(reference_evaluate(col)) == std::vector<float>{58, 50, 42, 34, 26, 18, 10, 2});
  NodePtr sq = ew(Op::Multiply, {col, col});
  CHECK(values<float>(reference_evaluate(sq))[7] == 4.f);
}

// ------------------------------------------------------------ speed
TEST_CASE("reference: a million elements through a few ops is quick") {
  const int64_t n = 1 << 20;
  std::vector<float> xs(n);
  std::vector<uint16_t> hs(n);
  for (int64_t i = 0; i < n; ++i) {
    xs[i] = static_cast<float>(i % 1000) * 0.01f - 5.f;
    hs[i] = half(xs[i]).bits;
  }
  NodePtr x = host_vector(DType::Float32, xs);
  NodePtr h = host_vector(DType::Float16, hs);
  auto t0 = std::chrono::steady_clock::now();
  NodePtr k = make_scalar(Scalar(2.5), DType::Float32, Shape{n});
  NodePtr y = ew(Op::Add, {ew(Op::Multiply, {ew(Op::Sin, {x}), k}), ew(Op::Multiply, {x, x})});
  NodePtr z = ew(Op::Exp, {ew(Op::Multiply, {h, h})});  // float16 in and out
  NodePtr strided = make_view(y, Layout{Shape{n / 2}, Strides{2}, 1});
  auto r = reference_evaluate(std::vector<NodePtr>{y, z, strided});
  const double secs = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  MESSAGE(fmt::format("2^20 elements: float32 sin/mul/add, float16 mul/exp, a strided view: {:.3f} s", secs));
  CHECK(r[0].get_double(12345) == doctest::Approx(std::sin(xs[12345]) * 2.5 + xs[12345] * xs[12345]).epsilon(1e-6));
  CHECK(r[2].get_double(10) == r[0].get_double(21));
  CHECK(secs < 5.0);  // about 0.05 s on one core; far slower means per-element dispatch crept in
}
