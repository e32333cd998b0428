// tests/test_size_checks.cpp: shapes and sizes a user gives are checked where the shape is
// made (graph/size_check.hpp), issue 38: a product past int64 or past any allocation is a
// ValueError naming the shape, a Python-style integer out of a dtype's range an
// OverflowError, a null host pointer a ValueError, and the reference backend's allocation
// failures an OutOfMemoryError; never a wrapped product, a crash or a std:: exception.
#include <sys/resource.h>

#include <algorithm>
#include <climits>

#include "test_core_helpers.hpp"

namespace {
constexpr int64_t kBig = int64_t(1) << 62;

template <class E, class F>
std::string message_of(F&& f) {
  try {
    f();
  } catch (const E& e) {
    return e.what();
  }
  return "(no error)";
}
}  // namespace

TEST_CASE("size checks: products past int64 or past any allocation are ValueErrors naming the shape") {
  cf::BackendScope ref(cf::Backend::Reference);
  CHECK(message_of<cf::ValueError>([] { cf::zeros({kBig, kBig}); }).find("array is too big; shape (4611686018427387904, 4611686018427387904)") != std::string::npos);
  CHECK(message_of<cf::ValueError>([] { cf::ones({3, kBig}, cf::f64); }).find("array is too big") != std::string::npos);
  CHECK(message_of<cf::ValueError>([] { cf::empty({int64_t(1) << 61}, cf::f64); }).find("array is too big") != std::string::npos);
  CHECK_NOTHROW(cf::empty({int64_t(1) << 20}, cf::f64));
  CHECK_NOTHROW(cf::zeros({0, kBig, kBig}));  // no elements: NumPy allows it
  CHECK(message_of<cf::ValueError>([] { cf::zeros({-1, 3}); }).find("negative dimensions are not allowed") != std::string::npos);
  CHECK(message_of<cf::ValueError>([] { cf::full({}, 1.0).broadcast_to({kBig, kBig}); }).find("broadcast_to: array is too big") != std::string::npos);
  CHECK(message_of<cf::ValueError>([] { cf::sum(cf::full({}, 1.0).broadcast_to({kBig, kBig})); }).find("array is too big") != std::string::npos);
  auto col = cf::zeros({int64_t(1) << 40, 1}, cf::u8), row = cf::zeros({1, int64_t(1) << 40}, cf::u8);
  CHECK(message_of<cf::ValueError>([&] { (void)(col + row); }).find("array is too big") != std::string::npos);
  CHECK(message_of<cf::ValueError>([] { cf::zeros({0}).reshape({int64_t(1) << 32, int64_t(1) << 32, 0}); }).find("(no error)") == 0);
  CHECK(message_of<cf::ValueError>([] { cf::zeros({4}).reshape({int64_t(1) << 40, int64_t(1) << 40, -1}); }).find("array is too big") != std::string::npos);
}

TEST_CASE("size checks: arange and linspace lengths") {
  cf::BackendScope ref(cf::Backend::Reference);
  CHECK(message_of<cf::ValueError>([] { cf::arange(cf::Scalar(INT64_MIN), cf::Scalar(INT64_MAX), cf::Scalar(1)); }).find("arange: array is too big") != std::string::npos);
  CHECK(message_of<cf::ValueError>([] { cf::arange(cf::Scalar(0.0), cf::Scalar(1e300), cf::Scalar(1.0)); }).find("arange: array is too big") != std::string::npos);
  CHECK(message_of<cf::ValueError>([] { cf::arange(cf::Scalar(0), cf::Scalar(INT64_MAX), cf::Scalar(1)); }).find("array is too big") != std::string::npos);
  CHECK(message_of<cf::ValueError>([] { cf::linspace(0, 1, kBig); }).find("linspace: array is too big") != std::string::npos);
  // lengths near the ends of int64 that are fine: computed without overflow
  CHECK(cf::arange(cf::Scalar(INT64_MAX - 5), cf::Scalar(INT64_MAX), cf::Scalar(2)).size() == 3);
  CHECK(cf::arange(cf::Scalar(INT64_MIN + 5), cf::Scalar(INT64_MIN), cf::Scalar(-2)).size() == 3);
  CHECK(cf::arange(cf::Scalar(INT64_MIN), cf::Scalar(INT64_MAX), cf::Scalar(INT64_MAX)).size() == 3);
}

TEST_CASE("size checks: full with an integer out of range, a null host pointer, host memory exhausted") {
  cf::BackendScope ref(cf::Backend::Reference);
  CHECK(message_of<cf::OverflowError>([] { cf::full({3}, 300, cf::u8); }) == "full: Python integer 300 out of bounds for uint8");
  CHECK(message_of<cf::OverflowError>([] { cf::full({3}, -1, cf::u32); }).find("out of bounds for uint32") != std::string::npos);
  CHECK(cf::full({3}, 255, cf::u8).to_host<uint8_t>()[2] == 255);
  CHECK(cf::full({2}, 300, cf::f32).to_host<float>()[0] == 300.0f);
  CHECK(cf::full({2}, 3.7, cf::i32).to_host<int32_t>()[0] == 3);  // a float truncates, as NumPy's full does
  CHECK(cf::full({2}, 300, cf::bool_).astype(cf::i32).to_host<int32_t>()[0] == 1);
  CHECK(message_of<cf::ValueError>([] { cf::from_host(nullptr, cf::f64, {3}); }).find("data pointer is null") != std::string::npos);
  CHECK_NOTHROW(cf::from_host(nullptr, cf::f64, {0}));
  auto u = cf::zeros({2}, cf::u32).eval();
  CHECK(message_of<cf::OverflowError>([&] { u.assign(cf::Scalar(-2)); }) == "Python integer -2 out of bounds for uint32 (in assign)");
  CHECK(message_of<cf::OverflowError>([&] { u.assign(cf::Scalar(int64_t(1) << 40)); }).find("out of bounds for uint32") != std::string::npos);
  u.assign(cf::Scalar(7));
  CHECK(u.to_host<uint32_t>()[1] == 7);
#if !defined(__SANITIZE_ADDRESS__) && !defined(__SANITIZE_THREAD__)  // their shadow memory needs the address space
  {
    // 8 TiB under a 64 GiB address-space limit: the GPU machine overcommits memory, and its
    // kernel killed the test touching 8 TiB it had been given
    struct rlimit old {};
    REQUIRE(getrlimit(RLIMIT_AS, &old) == 0);
    struct rlimit cap = old;
    cap.rlim_cur = std::min<rlim_t>(old.rlim_max, rlim_t(64) << 30);
    REQUIRE(setrlimit(RLIMIT_AS, &cap) == 0);
    const std::string m = message_of<cf::OutOfMemoryError>([] { cf::zeros({int64_t(1) << 40}).eval(); });
    REQUIRE(setrlimit(RLIMIT_AS, &old) == 0);
    CHECK(m.find("out of host memory") != std::string::npos);
  }
#endif
}

TEST_CASE("size checks: reshape keeps NumPy's errors around zero dimensions") {
  cf::BackendScope ref(cf::Backend::Reference);
  CHECK(message_of<cf::ValueError>([] { cf::zeros({4}).reshape({0, 4}); }) == "cannot reshape array of size 4 into shape (0, 4)");
  CHECK(cf::zeros({0, 3}).reshape({3, 0, 5}).shape() == cf::Shape{3, 0, 5});
  CHECK(message_of<cf::ValueError>([] { cf::zeros({0, 3}).reshape({-1, 0}); }).find("cannot reshape array of size 0") != std::string::npos);
}
