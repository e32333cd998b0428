// tests/test_manipulation_cli.cpp: issue 30's joining, splitting, rearranging and random
// functions in the program language of cufuse-dump-kernels (src/cli/functions_manipulation.cpp),
// by their NumPy names, with the results the library gives.
#include "test_cli_helpers.hpp"

namespace cli = cufuse::cli;
namespace cf = cufuse;

namespace {

using cli_test::result;
using cli_test::value_of;

}  // namespace

TEST_CASE("cli: joining and rearranging by NumPy's names") {
  cf::BackendScope ref(cf::Backend::Reference);
  const auto a = cf::arange(6).reshape({2, 3});
  CHECK(cf::array_equal(result("np.concatenate([arange(6).reshape(2, 3) * 2, arange(3).reshape(1, 3)])"),
                        cf::concatenate({a * 2, cf::arange(3).reshape({1, 3})})));
  CHECK(cf::array_equal(result("concatenate((arange(3), arange(2)), axis=None)"),
                        cf::concatenate({cf::arange(3), cf::arange(2)}, std::nullopt)));
  CHECK(cf::array_equal(result("stack([arange(3), arange(3)], axis=1)"), cf::stack({cf::arange(3), cf::arange(3)}, 1)));
  CHECK(result("vstack([arange(3), arange(3)])").shape() == cf::Shape{2, 3});
  CHECK(result("hstack([arange(3), arange(3)])").shape() == cf::Shape{6});
  CHECK(result("dstack([arange(3), arange(3)])").shape() == cf::Shape{1, 3, 2});
  CHECK(result("column_stack([arange(3), arange(3)])").shape() == cf::Shape{3, 2});
  CHECK(cf::array_equal(result("tile(arange(3), (2, 2))"), cf::tile(cf::arange(3), {2, 2})));
  CHECK(cf::array_equal(result("repeat(arange(3), 2)"), cf::repeat(cf::arange(3), 2)));
  CHECK(cf::array_equal(result("arange(3).repeat([1, 0, 2])"), cf::repeat(cf::arange(3), std::vector<int64_t>{1, 0, 2})));
  CHECK(cf::array_equal(result("flip(arange(6).reshape(2, 3), axis=1)"), cf::flip(a, 1)));
  CHECK(cf::array_equal(result("fliplr(arange(6).reshape(2, 3))"), cf::fliplr(a)));
  CHECK(cf::array_equal(result("flipud(arange(6).reshape(2, 3))"), cf::flipud(a)));
  CHECK(cf::array_equal(result("roll(arange(6).reshape(2, 3), 1)"), cf::roll(a, 1)));
  CHECK(cf::array_equal(result("roll(arange(6).reshape(2, 3), (1, -1), axis=(0, 1))"), cf::roll(a, {1, -1}, {0, 1})));
  CHECK(cf::array_equal(result("rot90(arange(6).reshape(2, 3), 3)"), cf::rot90(a, 3)));
  CHECK(cf::array_equal(result("pad(arange(6).reshape(2, 3), 2, mode='reflect')"), cf::pad(a, 2, "reflect")));
  CHECK(cf::array_equal(result("pad(arange(6).reshape(2, 3), ((1, 0), (0, 2)), constant_values=7)"),
                        cf::pad(a, {{1, 0}, {0, 2}}, "constant", 7)));
  CHECK(cf::array_equal(result("pad(arange(3), (1, 2), 'wrap')"), cf::pad(cf::arange(3), {1, 2}, "wrap")));
  CHECK(result("atleast_2d(arange(3))").shape() == cf::Shape{1, 3});
  CHECK(result("atleast_3d(arange(3))").shape() == cf::Shape{1, 3, 1});
  auto parts = value_of("p = split(arange(6), 3)", "p");
  REQUIRE(parts.items.size() == 3);
  CHECK(parts.items[2].array.shape() == cf::Shape{2});
  auto q = value_of("q = array_split(arange(7), [2, 5])", "q");
  REQUIRE(q.items.size() == 3);
  CHECK(q.items[1].array.shape() == cf::Shape{3});
  CHECK(value_of("h = hsplit(arange(6).reshape(2, 3), 3)", "h").items.size() == 3);
  CHECK_THROWS(result("split(arange(7), 3)"));
  CHECK_THROWS(result("concatenate([zeros((2, 3)), zeros((2, 4))])"));
}

TEST_CASE("cli: np.random's additions") {
  cf::BackendScope ref(cf::Backend::Reference);
  CHECK(cf::array_equal(result("np.random.integers(0, 10, size=(4,), seed=3)"), cf::random::integers(0, 10, {4}, cf::i64, 3)));
  CHECK(cf::array_equal(result("random.integers(5, size=7, seed=1)"), cf::random::integers(0, 5, {7}, cf::i64, 1)));
  CHECK(cf::array_equal(result("random.permutation(10, seed=2)"), cf::random::permutation(10, 2)));
  CHECK(cf::array_equal(result("random.choice(10, size=3, replace=False, seed=2)"),
                        cf::random::choice(10, {3}, false, 2)));
  CHECK(cf::array_equal(result("random.poisson(3.0, size=5, seed=2)"), cf::random::poisson(3.0, {5}, cf::i64, 2)));
  CHECK(cf::allclose(result("random.exponential(2.0, size=5, seed=2)"), cf::random::exponential(2.0, {5}, cf::f64, 2)));
  CHECK(cf::allclose(result("random.normal(1.0, 2.0, size=5, seed=2)"), cf::random::normal({5}, cf::f64, 2, 1.0, 2.0)));
  CHECK(cf::allclose(result("random.uniform(size=5, seed=2)"), cf::random::uniform({5}, cf::f64, 2)));
}
