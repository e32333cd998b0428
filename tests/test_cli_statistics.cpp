// tests/test_cli_statistics.cpp: issue 33's statistics in the program language of
// cufuse-dump-kernels (src/cli/functions_statistics.cpp), by their NumPy names and keywords,
// with the results the library gives; the counting functions refuse placeholders (they need
// the values), the composites plan on them as fused kernels.
#include <doctest/doctest.h>

#include <string>

#include "cli/evaluator.hpp"
#include "cli/registry.hpp"
#include "cli/syntax.hpp"
#include "cufuse/cufuse.hpp"
#include "test_values.hpp"

namespace cli = cufuse::cli;
namespace cf = cufuse;

namespace {

using test_values::f64;
using test_values::i64;

// The value of the expression `src` (a tuple for functions with several results).
cli::Value value(const std::string& src) {
  cli::Evaluator ev;
  ev.run(cli::parse_program("v = " + src));
  const cli::Value* v = ev.lookup("v");
  REQUIRE(v != nullptr);
  return *v;
}
cf::Array result(const std::string& src) { return value(src).array; }

}  // namespace

TEST_CASE("cli: bincount and the histograms") {
  cf::BackendScope ref(cf::Backend::Reference);
  CHECK(i64(result("bincount(arange(5) % 3)")) == std::vector<int64_t>{2, 2, 1});
  CHECK(i64(result("np.bincount(arange(3), minlength=5)")) == std::vector<int64_t>{1, 1, 1, 0, 0});
  CHECK(f64(result("bincount(arange(3), weights=arange(3) * 0.5)")) == std::vector<double>{0, 0.5, 1.0});
  auto h = value("histogram(arange(10) * 1.0, bins=4, range=(0, 8))");
  REQUIRE(h.items.size() == 2);
  CHECK(i64(h.items[0].array) == std::vector<int64_t>{2, 2, 2, 3});
  CHECK(f64(h.items[1].array) == std::vector<double>{0, 2, 4, 6, 8});
  auto e = value("histogram(arange(6), bins=[0, 1, 5, 6])");
  CHECK(i64(e.items[0].array) == std::vector<int64_t>{1, 4, 1});
  CHECK(f64(result("histogram_bin_edges(arange(4), 2)")) == std::vector<double>{0, 1.5, 3});
  auto h2 = value("histogram2d(arange(4) * 1.0, arange(4) * 1.0, bins=2)");
  REQUIRE(h2.items.size() == 3);
  CHECK(f64(h2.items[0].array) == std::vector<double>{2, 0, 0, 2});
  CHECK_THROWS(value("bincount(arange(3) - 1)"));
}

TEST_CASE("cli: moments, differences and integrals") {
  cf::BackendScope ref(cf::Backend::Reference);
  CHECK(f64(result("average(arange(4), weights=arange(4))")) == std::vector<double>{14.0 / 6});
  auto r = value("average(arange(6).reshape(2, 3), axis=1, returned=True)");
  REQUIRE(r.items.size() == 2);
  CHECK(f64(r.items[1].array) == std::vector<double>{3, 3});
  CHECK(f64(result("cov(arange(6).reshape(2, 3))")) == std::vector<double>{1, 1, 1, 1});
  CHECK(f64(result("corrcoef(arange(6).reshape(2, 3), rowvar=True)")) == std::vector<double>{1, 1, 1, 1});
  CHECK(f64(result("nanvar(arange(4) * 1.0, ddof=1)")) == std::vector<double>{5.0 / 3});
  CHECK(f64(result("nanstd(arange(3) * 1.0)"))[0] == doctest::Approx(std::sqrt(2.0 / 3)));
  CHECK(f64(result("nanprod(arange(1, 4) * 1.0)")) == std::vector<double>{6});
  CHECK(i64(result("nanargmax(arange(4) % 3)")) == std::vector<int64_t>{2});
  CHECK(i64(result("diff(arange(5) ** 2, n=2)")) == std::vector<int64_t>{2, 2, 2});
  CHECK(i64(result("diff(arange(3), prepend=7)")) == std::vector<int64_t>{-7, 1, 1});
  CHECK(i64(result("ediff1d(arange(3), to_end=[9], to_begin=0)")) == std::vector<int64_t>{0, 1, 1, 9});
  CHECK(f64(result("gradient(arange(4) ** 2 * 1.0, 2.0)")) == std::vector<double>{0.5, 1, 2, 2.5});
  auto g = value("gradient(arange(6).reshape(2, 3) * 1.0)");
  CHECK(g.items.size() == 2);
  CHECK(f64(result("trapezoid(arange(3) * 1.0, dx=2.0)")) == std::vector<double>{4});
  CHECK(i64(result("cumulative_sum(arange(3), include_initial=True)")) == std::vector<int64_t>{0, 0, 1, 3});
}

TEST_CASE("cli: placeholders: diff plans as one kernel, histogram needs values") {
  cli::Evaluator ev;
  ev.declare(cli::parse_arg_spec("x=f32[1024]"));
  ev.run(cli::parse_program("y = diff(exp(x) * 2, n=2)"));
  auto r = ev.results({"y"});
  REQUIRE(r.size() == 1);
  CHECK(cf::plan_dump({r[0].array}).find("1 kernel") != std::string::npos);
  cli::Evaluator ev2;
  ev2.declare(cli::parse_arg_spec("x=f32[1024]"));
  CHECK_THROWS(ev2.run(cli::parse_program("h = histogram(x, 10, range=(0, 1))")));
}
