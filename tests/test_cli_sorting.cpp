// tests/test_cli_sorting.cpp: issue 33's sorting, searching, sets and order statistics in the
// program language of cufuse-dump-kernels (src/cli/functions_sorting.cpp): each function by its
// NumPy name with NumPy's keywords, unique's tuple, q as a number or a list, and a sort planned
// on placeholders as one library node between fused kernels.
#include <doctest/doctest.h>

#include <cmath>
#include <string>

#include "cli/evaluator.hpp"
#include "cli/registry.hpp"
#include "cli/syntax.hpp"
#include "cufuse/cufuse.hpp"

namespace cli = cufuse::cli;
namespace cf = cufuse;

namespace {

cli::Evaluator run(const std::string& src) {
  cli::Evaluator ev;
  ev.run(cli::parse_program(src));
  return ev;
}
cf::Array result(const std::string& src) {
  cli::Evaluator ev = run(src);
  auto r = ev.results({});
  REQUIRE(r.size() == 1);
  return r[0].array;
}
std::vector<int64_t> i64(const cf::Array& a) { return a.astype(cf::i64).to_host<int64_t>(); }
std::vector<double> f64(const cf::Array& a) { return a.astype(cf::f64).to_host<double>(); }

}  // namespace

TEST_CASE("cli: sort, argsort, partition, lexsort, searchsorted, digitize") {
  cf::BackendScope ref(cf::Backend::Reference);
  CHECK(i64(result("x = (arange(6) * 7) % 5; sort(x)")) == std::vector<int64_t>{0, 0, 1, 2, 3, 4});
  CHECK(i64(result("x = (arange(6) * 7) % 5; x.argsort()")) == std::vector<int64_t>{0, 5, 3, 1, 4, 2});
  CHECK(i64(result("np.sort(arange(6).reshape(2, 3) * -1, axis=0)")) == std::vector<int64_t>{-3, -4, -5, 0, -1, -2});
  CHECK(result("sort(arange(6).reshape(2, 3), axis=None)").shape() == cf::Shape{6});
  CHECK(i64(result("partition((arange(5) * 3) % 5, 2)"))[2] == 2);
  CHECK(i64(result("argpartition((arange(5) * 3) % 5, [0, 4])"))[0] == 0);
  CHECK(i64(result("lexsort([arange(4), arange(4) % 2])")) == std::vector<int64_t>{0, 2, 1, 3});
  CHECK(i64(result("searchsorted(arange(5) * 2, arange(3) + 3, side='right')")) == std::vector<int64_t>{2, 3, 3});
  CHECK(i64(result("digitize(arange(4) * 1.5, arange(3) * 2)")) == std::vector<int64_t>{1, 1, 2, 3});
  CHECK(i64(result("msort(arange(4).reshape(2, 2) * -1)")) == std::vector<int64_t>{-2, -3, 0, -1});
}

TEST_CASE("cli: unique, the sets, median and quantiles") {
  cf::BackendScope ref(cf::Backend::Reference);
  CHECK(i64(result("unique(arange(10) % 3)")) == std::vector<int64_t>{0, 1, 2});
  auto ev = run("u = unique(arange(7) % 3, return_counts=True, return_index=True)");
  const cli::Value* u = ev.lookup("u");
  REQUIRE(u != nullptr);
  REQUIRE(u->items.size() == 3);
  CHECK(i64(u->items[1].array) == std::vector<int64_t>{0, 1, 2});
  CHECK(i64(u->items[2].array) == std::vector<int64_t>{3, 2, 2});
  CHECK(i64(result("isin(arange(5), arange(2) * 3)")) == std::vector<int64_t>{1, 0, 0, 1, 0});
  CHECK(i64(result("intersect1d(arange(5), arange(4) + 2)")) == std::vector<int64_t>{2, 3, 4});
  CHECK(i64(result("union1d(arange(2), arange(2) + 3)")) == std::vector<int64_t>{0, 1, 3, 4});
  CHECK(i64(result("setdiff1d(arange(5), arange(2))")) == std::vector<int64_t>{2, 3, 4});
  CHECK(i64(result("setxor1d(arange(3), arange(3) + 1)")) == std::vector<int64_t>{0, 3});
  CHECK(f64(result("median(arange(6).reshape(2, 3), axis=1)")) == std::vector<double>{1, 4});
  CHECK(f64(result("quantile(arange(5), 0.25)")) == std::vector<double>{1});
  CHECK(f64(result("percentile(arange(5), [50, 100], method='lower')")) == std::vector<double>{2, 4});
  CHECK(f64(result("nanmedian(where(arange(4) == 1, nan, arange(4) * 1.0))")) == std::vector<double>{2});
  CHECK(f64(result("nanpercentile(arange(4) * 1.0, 50)")) == std::vector<double>{1.5});
  CHECK_THROWS(result("quantile(arange(4), 2)"));
}

TEST_CASE("cli: a sort plans as a library node on placeholders, its producer and consumer fused") {
  cli::Evaluator ev;
  ev.declare(cli::parse_arg_spec("x=f32[64,256]"));
  ev.run(cli::parse_program("y = sort(exp(x), axis=1) * 2"));
  auto r = ev.results({"y"});
  REQUIRE(r.size() == 1);
  auto plan = cf::plan_dump({r[0].array});
  CHECK(plan.find("sort float32 (64, 256)") != std::string::npos);
  // the producer's kernel writes the node's input, the node, the consumer's one kernel after it
  CHECK(plan.find("3 kernel(s)") != std::string::npos);
  CHECK(plan.find("[rule: library-input") != std::string::npos);
}
