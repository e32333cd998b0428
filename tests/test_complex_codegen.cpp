// tests/test_complex_codegen.cpp: complex64 / complex128 kernels compile with NVRTC for sm_90
// (no GPU needed): every op row that takes complex, casts to and from every dtype, scalar
// parameters, reductions (block, row and scan kernels with their warp shuffles of pairs; max,
// min, argmax, argmin in NumPy's order), and
// the preamble carries the pair type only into kernels that use it.
#include <complex>

#include "core/op_table.hpp"
#include "test_core_helpers.hpp"

using namespace cf::detail;

namespace {
const cf::DType kReal[] = {cf::bool_, cf::i8, cf::i16, cf::i32, cf::i64, cf::u8,  cf::u16,
                           cf::u32,   cf::u64, cf::f16, cf::bf16, cf::f32, cf::f64};
}

TEST_CASE("every op that takes complex compiles for complex64 and complex128") {
  for (cf::DType t : {cf::c64, cf::c128}) {
    auto a = cf::placeholder(t, {64});
    auto b = cf::placeholder(t, {64});
    auto c = cf::placeholder(cf::bool_, {64});
    std::vector<cf::Array> outs;
    int refused = 0;
    for (int op = 0; op < kNumOps; ++op) {
      const OpRow& row = op_row(static_cast<Op>(op));
      if (row.id == Op::Cast) continue;
      cf::DType in[3] = {t, t, t};
      if (row.rule == TypeRule::Where) in[0] = cf::bool_;
      try {
        type_op(row.id, in, row.arity);
      } catch (const cf::TypeError&) {
        CHECK((row.accepts & kKC) == 0);
        ++refused;
        continue;
      }
      CHECK((row.accepts & kKC) != 0);
      if (row.arity == 1) outs.push_back(cf::apply(row.name, {a}));
      else if (row.arity == 2) outs.push_back(cf::apply(row.name, {a, b}));
      else outs.push_back(cf::apply(row.name, {c, a, b}));
    }
    INFO("dtype " << cf::name(t) << ", " << outs.size() << " ops");
    CHECK(outs.size() >= 30);
    CHECK(refused > 20);
    outs.push_back(a * cf::Scalar(std::complex<double>(0.5, -2)) + 3);  // complex and real scalar parameters
    auto ex = plan_of(outs, /*compile=*/true);
    CHECK(ex->steps.size() == 1);
    CHECK(ex->steps[0].kernel->cubin.size() > 0);
    CHECK(ex->steps[0].spec.source.find("struct alignas(2 * sizeof(F)) cf_cplx") != std::string::npos);
  }
  // a real kernel's preamble has no pair type
  auto x = cf::placeholder(cf::f32, {64});
  CHECK(plan_of({cf::sin(x) * 2}, true)->steps[0].spec.source.find("cf_cplx") == std::string::npos);
}

TEST_CASE("casts between complex and every dtype compile") {
  for (cf::DType z : {cf::c64, cf::c128}) {
    auto a = cf::placeholder(z, {33});
    std::vector<cf::Array> outs;
    for (cf::DType to : kReal) outs.push_back(a.astype(to));
    outs.push_back(a.astype(cf::c64));
    outs.push_back(a.astype(cf::c128));
    for (cf::DType from : kReal) outs.push_back(cf::placeholder(from, {33}).astype(z));
    auto ex = plan_of(outs, true);
    CHECK(ex->steps.size() == 1);
    CHECK(ex->steps[0].kernel->cubin.size() > 0);
  }
}

TEST_CASE("complex reductions and scans compile (pairs shuffled part by part)") {
  for (cf::DType t : {cf::c64, cf::c128}) {
    auto m = cf::placeholder(t, {300, 257});
    auto full = cf::sum(m * 2);
    auto rows = cf::prod(m, 1);
    auto cols = cf::sum(m, 0);
    auto mean = cf::mean(m, 1);
    auto ex = plan_of({full, rows, cols, mean}, true);
    CHECK(ex->steps.size() >= 1);
    for (auto& s : ex->steps)
      if (s.kernel) CHECK(s.kernel->cubin.size() > 0);
    CHECK(plan_of({full}, true)->steps[0].spec.source.find(".re, ") != std::string::npos);
    auto scan = plan_of({cf::cumsum(m, 1), cf::cumsum(m, 0)}, true);
    for (auto& s : scan->steps)
      if (s.kernel) CHECK(s.kernel->cubin.size() > 0);
    // rows of a tile or more: tiles with a look-back for complex64 (its status word holds 8
    // bytes and the flag), a block per row for complex128
    auto longrow = plan_of({cf::cumprod(cf::placeholder(t, {100000}))}, true);
    CHECK(longrow->steps[0].kernel->cubin.size() > 0);
    CHECK((longrow->steps[0].spec.summary.find("a block per row") != std::string::npos) == (t == cf::c128));
  }
}

TEST_CASE("complex max/min/argmax/argmin reductions compile (NumPy's order, pairs shuffled)") {
  for (cf::DType t : {cf::c64, cf::c128}) {
    auto m = cf::placeholder(t, {300, 257});
    std::vector<cf::Array> outs = {cf::max(m), cf::min(m, 1), cf::nanmax(m, 0), cf::nanmin(m, 1),
                                   cf::argmax(m, 1), cf::argmin(m, 0), cf::argmax(m)};
    for (const auto& o : outs) {
      auto ex = plan_of({o}, true);
      for (auto& s : ex->steps)
        if (s.kernel) CHECK(s.kernel->cubin.size() > 0);
    }
    CHECK(plan_of({cf::nanmax(m)}, true)->steps[0].spec.source.find("cf_red_nanmax") != std::string::npos);
    CHECK(plan_of({cf::max(m, 1)}, true)->steps[0].spec.source.find("cf_red_max") != std::string::npos);
  }
}

namespace {
// Workspace offsets of a step's partials (the Workspace patches after the ticket), in order,
// then the workspace's end.
std::vector<uint64_t> partial_offsets(const cf::Array& r) {
  const auto ex = plan_of({r}, false);
  std::vector<uint64_t> o;
  for (const auto& p : ex->steps.at(0).spec.patches)
    if (p.src == PatchSrc::Workspace && p.index > 0) o.push_back(static_cast<uint64_t>(p.index));
  o.push_back(ex->steps.at(0).spec.workspace_bytes);
  return o;
}
}  // namespace

TEST_CASE("a split complex reduction's partials take their accumulator's size in the workspace") {
  // Few long rows: each row is split over blocks, whose partial values and indices (8 bytes
  // each) meet in the workspace. complex128 partials are 16 bytes: with 8-byte slots they ran
  // into the index partials (argmax over all of a complex128 array read a value's bits as an
  // index on the H200).
  for (cf::DType t : {cf::f64, cf::c64, cf::c128}) {
    const auto o = partial_offsets(cf::argmax(cf::placeholder(t, {4, 1 << 18}), 1));
    REQUIRE(o.size() == 3);  // values, indices, end
    CHECK(o[1] - o[0] == (o[2] - o[1]) * (t == cf::c128 ? 2 : 1));
  }
}
