// tests/test_cli_surface.cpp: issue 30's functions in the program language of
// cufuse-dump-kernels (src/cli/functions_surface.cpp): eye, identity, tri, triu, tril, diag,
// meshgrid, logspace, allclose, array_equal and np.testing's asserts, by their NumPy names.
#include "test_cli_helpers.hpp"

namespace cli = cufuse::cli;
namespace cf = cufuse;

namespace {

using cli_test::result;
using cli_test::value_of;

}  // namespace

TEST_CASE("cli: matrix and grid creation by NumPy's names") {
  cf::BackendScope ref(cf::Backend::Reference);
  auto e = result("np.eye(3, 4, k=1, dtype=np.float32)");
  CHECK(e.dtype() == cf::f32);
  CHECK(e.shape() == cf::Shape{3, 4});
  CHECK(cf::array_equal(e, cf::eye(3, 4, 1, cf::f32)));
  CHECK(cf::array_equal(result("identity(3)"), cf::identity(3)));
  CHECK(cf::array_equal(result("tri(3, 2, -1)"), cf::tri(3, 2, -1)));
  CHECK(cf::array_equal(result("triu(arange(9).reshape(3, 3), 1)"), cf::triu(cf::arange(9).reshape({3, 3}), 1)));
  CHECK(cf::array_equal(result("tril(arange(9).reshape(3, 3))"), cf::tril(cf::arange(9).reshape({3, 3}))));
  CHECK(cf::array_equal(result("diag(arange(3), -1)"), cf::diag(cf::arange(3), -1)));
  CHECK(cf::allclose(result("logspace(0, 2, 3)"), cf::logspace(0, 2, 3)));
  auto g = value_of("g = meshgrid(arange(3), arange(2), indexing='ij')", "g");
  REQUIRE(g.items.size() == 2);
  CHECK(g.items[0].array.shape() == cf::Shape{3, 2});
}

TEST_CASE("cli: allclose, array_equal and np.testing") {
  cf::BackendScope ref(cf::Backend::Reference);
  CHECK(value_of("r = allclose(arange(3), arange(3) + 1e-9)", "r").number.to_bool());
  CHECK_FALSE(value_of("r = array_equal(arange(3), arange(4))", "r").number.to_bool());
  CHECK_NOTHROW(value_of("r = np.testing.assert_allclose(arange(3.0), arange(3.0))", "r"));
  CHECK_THROWS(value_of("r = np.testing.assert_array_equal(arange(3), arange(3) + 1)", "r"));
}
