// tests/test_cli_indexing.cpp: issue 30's advanced indexing in the program language of
// cufuse-dump-kernels (src/cli/functions_indexing.cpp, the subscripts of src/cli/evaluator.cpp):
// take, take_along_axis, x[idx], x[i, 1:], x[mask], nonzero, argwhere, flatnonzero, extract,
// compress, put by their NumPy names and add_at; a gather plans as one fused kernel on
// placeholders; a selection's lazy mask and values are computed in its passes; writes through
// index arrays are refused with a message.
#include "test_cli_helpers.hpp"
#include "test_sandbox.hpp"

namespace cli = cufuse::cli;
namespace cf = cufuse;

namespace {

using cli_test::result;
using cli_test::run;

std::vector<int64_t> i64(const cf::Array& a) { return a.astype(cf::i64).to_host<int64_t>(); }

}  // namespace

TEST_CASE("cli: gathers and subscripts with index arrays") {
  cf::BackendScope ref(cf::Backend::Reference);
  CHECK(i64(result("take(arange(10) * 2, arange(3) - 4)")) == std::vector<int64_t>{12, 14, 16});
  CHECK(i64(result("np.take(arange(6).reshape(2, 3), arange(2) * -2 + 2, axis=1)")) == std::vector<int64_t>{2, 0, 5, 3});
  CHECK(i64(result("x = arange(12).reshape(3, 4); x[arange(2) * -2 + 2, 1:]")) ==
        std::vector<int64_t>{9, 10, 11, 1, 2, 3});
  CHECK(i64(result("x = arange(6).reshape(2, 3); take_along_axis(x, (arange(2) * -2 + 2).reshape(2, 1), 1)")) ==
        std::vector<int64_t>{2, 3});
  CHECK_THROWS(result("x = arange(5); x[[1, 2]]"));  // lists: index with an array
}

TEST_CASE("cli: masks and selections read their data") {
  cf::BackendScope ref(cf::Backend::Reference);
  CHECK(i64(result("x = arange(6); x[x > 3]")) == std::vector<int64_t>{4, 5});
  CHECK(i64(result("flatnonzero(arange(5) % 2)")) == std::vector<int64_t>{1, 3});
  CHECK(i64(result("argwhere(arange(4).reshape(2, 2))")) == std::vector<int64_t>{0, 1, 1, 0, 1, 1});
  CHECK(i64(result("extract(arange(4) > 1, arange(4) * 10)")) == std::vector<int64_t>{20, 30});
  CHECK(i64(result("compress(arange(2) > 0, arange(4).reshape(2, 2), axis=0)")) ==
        std::vector<int64_t>{2, 3});
  auto ev = run("n = nonzero(arange(4).reshape(2, 2))");
  const cli::Value* n = ev.lookup("n");
  REQUIRE(n != nullptr);
  REQUIRE(n->items.size() == 2);
  CHECK(i64(n->items[1].array) == std::vector<int64_t>{1, 0, 1});
}

TEST_CASE("cli: put and add_at write their array; subscript writes with arrays are refused") {
  cf::BackendScope ref(cf::Backend::Reference);
  CHECK(i64(result("a = zeros(4, dtype=np.int64); put(a, arange(2) * 3, 7); a")) == std::vector<int64_t>{7, 0, 0, 7});
  CHECK(i64(result("a = zeros(4, dtype=np.int64); put(a, arange(2) * 5 - 3, 7, mode='clip'); a")) ==
        std::vector<int64_t>{7, 0, 7, 0});
  CHECK(i64(result("take(arange(5), arange(3) * 4 - 3, mode='wrap')")) == std::vector<int64_t>{2, 1, 0});
  CHECK(i64(result("np.take(arange(5), arange(3) * 4 - 3, None, 'clip')")) == std::vector<int64_t>{0, 1, 4});
  CHECK(i64(result("a = zeros(3, dtype=np.int64); add_at(a, (arange(3) + 2) // 2, 1); a")) ==
        std::vector<int64_t>{0, 2, 1});
  CHECK_THROWS(run("a = zeros(3); a[arange(1)] = 2"));
}

TEST_CASE("cli: a gather plans as one kernel on placeholders") {
  cli::Evaluator ev;
  ev.declare(cli::parse_arg_spec("x=f32[1024]"));
  ev.declare(cli::parse_arg_spec("i=i64[256]"));
  ev.run(cli::parse_program("y = take(exp(x), i) * 2"));
  auto r = ev.results({"y"});
  REQUIRE(r.size() == 1);
  auto plan = cf::plan_dump({r[0].array});
  CHECK(plan.find("1 kernel") != std::string::npos);
}

TEST_CASE("cli: a lazy mask and lazy values are computed in the selection's kernels (rule fused-input)") {
  cf::BackendScope ref(cf::Backend::Reference);
  {  // two passes: the compaction is left to plan (its count ran while the program was read)
    cufuse_test::ScopedEnv two("CUFUSE_SELECT_ONE_PASS_BYTES", "0");
    auto ev = run("x = arange(20000) * 0.5; y = extract(sin(x) > 0.5, x * 2)");
    auto r = ev.results({"y"});
    REQUIRE(r.size() == 1);
    const std::string plan = cf::plan_dump({r[0].array});
    CHECK(plan.find("1 kernel") != std::string::npos);  // the compaction alone: no mask or values written first
    CHECK(plan.find("selection by mask in two passes, 2: compaction") != std::string::npos);
    CHECK(plan.find("fused-input") != std::string::npos);
    CHECK(plan.find("computed by their fused producer") != std::string::npos);
  }
  // one pass: the selection ran while the program was read (its shape is its count); its plan,
  // as CUFUSE_DUMP_KERNELS writes it, is one kernel computing mask and values
  cufuse_test::TempDir dir;
  std::string plans;
  {
    cufuse_test::ScopedEnv dump("CUFUSE_DUMP_KERNELS", dir.path.string());
    auto ev = run("x = arange(20011) * 0.5; y = extract(sin(x) > 0.5, x * 2)");
    auto r = ev.results({"y"});
    REQUIRE(r.size() == 1);
    CHECK(cf::plan_dump({r[0].array}).find("nothing to compute") != std::string::npos);
    plans = cufuse_test::read_plan_files(dir.path);
  }
  CHECK(plans.find("selection by mask in one pass") != std::string::npos);
  CHECK(plans.find("fused-input") != std::string::npos);
  CHECK(plans.find("values computed by their fused producer") != std::string::npos);
}
