// tests/test_ptx_patterns.cpp: the PTX NVRTC makes of generated kernels avoids instruction
// patterns that ptxas (CUDA 13.0, sm_90) miscompiles. Runs without a GPU: the kernels are
// compiled to PTX here, with the options of src/compile/compiler.cpp, and the text is scanned.
#include <nvrtc.h>

#include <algorithm>
#include <map>

#include "compile/compiler.hpp"
#include "core/op_table.hpp"
#include "op_cases.hpp"
#include "test_core_helpers.hpp"

namespace {

// `source` compiled by NVRTC to PTX for compute_90 with cufuse's own options.
std::string ptx_of(const std::string& source) {
  std::vector<std::string> opts = cf::detail::base_compile_options(90);
  opts.erase(std::remove_if(opts.begin(), opts.end(), [](const std::string& o) { return o.rfind("--ptxas", 0) == 0; }),
             opts.end());
  for (auto& o : opts)
    if (o.rfind("-arch=", 0) == 0) o = "-arch=compute_90";
  std::vector<const char*> argv;
  for (const auto& o : opts) argv.push_back(o.c_str());
  nvrtcProgram prog = nullptr;
  REQUIRE(nvrtcCreateProgram(&prog, source.c_str(), "k.cu", 0, nullptr, nullptr) == NVRTC_SUCCESS);
  const nvrtcResult r = nvrtcCompileProgram(prog, static_cast<int>(argv.size()), argv.data());
  size_t log_size = 0;
  nvrtcGetProgramLogSize(prog, &log_size);
  std::string log(log_size, '\0');
  nvrtcGetProgramLog(prog, log.data());
  INFO(log);
  REQUIRE(r == NVRTC_SUCCESS);
  size_t n = 0;
  REQUIRE(nvrtcGetPTXSize(prog, &n) == NVRTC_SUCCESS);
  std::string ptx(n, '\0');
  REQUIRE(nvrtcGetPTX(prog, ptx.data()) == NVRTC_SUCCESS);
  nvrtcDestroyProgram(&prog);
  return ptx;
}

std::string sources_of(const std::vector<cf::Array>& outs) {
  const auto ex = plan_of(outs);
  std::string all;
  for (const auto& s : ex->steps) all += s.spec.source;
  return all;
}

}  // namespace

TEST_CASE("ptx: int16 arithmetic never becomes neg.s16 or abs.s16") {
  // ptxas takes the result of a neg.s16 as already sign-extended: -(-32768) widened to int came
  // out +32768 on the H100 (fuzz seed 890965425964: max(-x) over int16 gave -32768). NVVM makes
  // neg.s16 of 0 - x, x * -1, ~x + 1 and abs too, so int16 + - * are inline PTX in 32 bits.
  // The scanner itself: a plain 16-bit negation, widened, does give neg.s16.
  const std::string plain = ptx_of(
      "extern \"C\" __global__ void k(const short* a, int* o) { o[threadIdx.x] = (int)(short)(0u - (unsigned)a[threadIdx.x]); }");
  REQUIRE(plain.find("neg.s16") != std::string::npos);

  auto x = cf::placeholder(cf::i16, {1000});
  auto y = cf::placeholder(cf::i16, {1000});
  auto i32 = cf::placeholder(cf::i32, {1000});
  const std::vector<std::pair<const char*, cf::Array>> cases = {
      {"max(-x)", cf::max(-x)},
      {"-x > 0", (-x) > 0},
      {"abs(x) as int32", cf::abs(x).astype(cf::i32)},
      {"-x + int32", -x + i32},
      {"(x - x) - y, widened", ((x - x) - y).astype(cf::i64)},
      {"~x + 1, widened", (~x + (x == x).astype(cf::i16)).astype(cf::f32)},  // NVVM folds x == x to 1
      {"x * -1, widened", (x * ~(y - y)).astype(cf::i32)},                   // and ~(y - y) to -1
      {"floor_divide(x, y) < 0", cf::floor_divide(x, y) < 0},
      {"-x, stored", -x},
  };
  for (const auto& [what, v] : cases) {
    INFO(std::string(what));
    const std::string src = sources_of({v});
    CHECK(src.find("cf_s16_") != std::string::npos);
    const std::string ptx = ptx_of(src);
    CHECK(ptx.find("neg.s16") == std::string::npos);
    CHECK(ptx.find("abs.s16") == std::string::npos);
  }
}

TEST_CASE("ptx: no op of the op table on int16 makes neg.s16 or abs.s16, its result widened") {
  // Every op that takes int16 operands (and int16 with an int16 scalar), its result cast to
  // int64, all as outputs of one kernel: a new op that negates int16 without the helpers shows.
  auto x = cf::placeholder(cf::i16, {1000});
  auto y = cf::placeholder(cf::i16, {1000});
  std::vector<cf::Array> outs;
  std::vector<std::string> names;
  for (int k = 0; k < cf::detail::kNumOps; ++k) {
    const auto& row = cf::detail::op_row(static_cast<cf::detail::Op>(k));
    std::vector<std::vector<cf::Operand>> forms;
    if (row.arity == 1) forms = {{x}};
    if (row.arity == 2) forms = {{x, y}, {x, cf::Operand(int64_t(-3))}, {cf::Operand(int64_t(-3)), x}};
    if (row.arity == 3) forms = {{x > y, x, y}};
    for (const auto& f : forms) {
      try {
        cf::Array r = cf::apply(row.name, f);
        outs.push_back(cf::is_float(r.dtype()) ? r : r.astype(cf::i64));
        names.push_back(row.name);
      } catch (const cf::Error&) {  // the op does not take int16 (or this form)
      }
    }
  }
  MESSAGE(outs.size() << " int16 forms of " << cf::detail::kNumOps << " ops");
  REQUIRE(outs.size() > 60);
  for (const char* must : {"negative", "absolute", "floor_divide", "multiply", "subtract"})
    CHECK(std::find(names.begin(), names.end(), std::string(must)) != names.end());
  const std::string ptx = ptx_of(sources_of(outs));
  CHECK(ptx.find("neg.s16") == std::string::npos);
  CHECK(ptx.find("abs.s16") == std::string::npos);
}

TEST_CASE("ptx: max and min reductions read their input (their identity is not folded through)") {
  // NVVM folded cf_red_max(-1/0, x) to -1/0: the complex max kernel over rows stored its
  // identity (-inf, -inf) for every row and loaded nothing (H200, and this PTX). Infinity now
  // comes from its bits (device_helpers.inc: cf_inf).
  for (cf::DType t : {cf::c64, cf::c128, cf::f32, cf::f64}) {
    auto x = cf::placeholder(t, {67, 300});
    for (const cf::Array& r : {cf::max(x, 1), cf::min(x, 1), cf::max(x, 0), cf::max(x)}) {
      const std::string ptx = ptx_of(sources_of({r}));
      CAPTURE(cf::name(t));
      CHECK(ptx.find("ld.global") != std::string::npos);
    }
  }
}

namespace {

// In a kernel whose integers are all 8-bit, a value that 16-bit wrapping arithmetic made
// (add/sub/mul/neg/shl, or the shift/add/xor idiom of |x|) must be re-extended from its low
// byte before it is widened: each conversion of a 16-bit register to float or to 32/64 bits is
// traced to the line that defines its source, which must not be such an instruction. Returns
// the conversions that are (with their defining line).
std::vector<std::string> unextended_byte_converts(const std::string& ptx) {
  std::vector<std::string> lines;
  for (size_t p = 0, e; p < ptx.size(); p = e + 1) {
    e = ptx.find('\n', p);
    if (e == std::string::npos) e = ptx.size();
    lines.push_back(ptx.substr(p, e - p));
  }
  auto opcode = [](const std::string& l) {
    const size_t b = l.find_first_not_of(" \t");
    if (b == std::string::npos) return std::string();
    return l.substr(b, l.find_first_of(" \t", b) - b);
  };
  const std::vector<std::string> widen = {"cvt.rn.f32.s16", "cvt.rn.f32.u16", "cvt.rn.f64.s16", "cvt.rn.f64.u16",
                                          "cvt.s32.s16",    "cvt.u32.u16",    "cvt.s64.s16",    "cvt.u64.u16"};
  const std::vector<std::string> wrapping = {"add.s16", "sub.s16", "mul.lo.s16", "neg.s16", "shl.b16", "xor.b16",
                                             "add.u16", "sub.u16", "mul.lo.u16"};
  std::vector<std::string> bad;
  for (const auto& l : lines) {
    if (std::find(widen.begin(), widen.end(), opcode(l)) == widen.end()) continue;
    const std::string src = l.substr(l.rfind('%'), l.find(';') - l.rfind('%'));
    for (const auto& d : lines) {  // the line that defines src (its first operand)
      const size_t t = d.find('\t', d.find_first_not_of(" \t"));
      if (t == std::string::npos || d.compare(t + 1, src.size() + 1, src + ",") != 0) continue;
      const std::string op = opcode(d);
      // (xor with a constant, ~x of an extended byte, stays extended; |x|'s xor takes a register)
      const bool xor_const = op == "xor.b16" && d.find('%', d.rfind(',')) == std::string::npos;
      if (std::find(wrapping.begin(), wrapping.end(), op) != wrapping.end() && !xor_const) bad.push_back(l + "  <-" + d);
    }
  }
  return bad;
}

}  // namespace

TEST_CASE("ptx: an int8 value is sign-extended before it becomes a float") {
  // Fuzz seed 786083882611 (issue 38): max(3 * hypot(max(|v4|, 0), |v4|), axis=1) over int8
  // v4 came out 23008 where 394.5 is right, on every device run. NVVM (CUDA 13.0) made |x| of a
  // byte taken from a 16-byte vector load with the shift/add/xor idiom on the 16-bit register
  // that also held the next byte, and converted it to float without sign-extending it first
  // (cvt.rn.f32.s16 of the low byte with the high byte's bits: hypot saw |x| + 256 * next).
  // -G compiled it right; ptxas -O0 did not. int8 and int16 absolute values now go through
  // the 64-bit select (cf_sel64, inline PTX), where NVVM cannot use that idiom.
  // The scanner itself, on the lines of the failing kernel's PTX (and their fixed form).
  CHECK(unextended_byte_converts("\tadd.s16 \t%rs69, %rs65, %rs68;\n\txor.b16  \t%rs121, %rs69, %rs68;\n"
                                 "\tcvt.rn.f32.s16 \t%f70, %rs121;\n").size() == 1);
  CHECK(unextended_byte_converts("\txor.b16  \t%rs121, %rs69, %rs68;\n\tcvt.s16.s8 \t%rs130, %rs121;\n"
                                 "\tcvt.rn.f32.s16 \t%f70, %rs130;\n\txor.b16 \t%rs5, %rs4, 255;\n"
                                 "\tcvt.rn.f32.u16 \t%f71, %rs5;\n").empty());
  auto v4 = cf::placeholder(cf::i8, {130, 16});
  const cf::Array v5 = cf::abs(v4);
  const cf::Array v15 = cf::max(cf::multiply(3, cf::hypot(cf::max(v5, 0), v5)), 1);
  const auto ex = plan_of({v15});
  REQUIRE(ex->steps.size() == 2);  // max over axis 0 of |v4|, then the f16 row max (the one)
  const std::string ptx = ptx_of(ex->steps[1].spec.source);
  const auto bad = unextended_byte_converts(ptx);
  for (const auto& l : bad) MESSAGE("not sign-extended: " << l);
  CHECK(bad.empty());
  // every op of |x| on int8 through a vector load, converted: the same idiom must not show
  auto x = cf::placeholder(cf::i8, {64, 64});
  CHECK(unextended_byte_converts(ptx_of(sources_of({cf::sum(cf::abs(x).astype(cf::f32), 1)}))).empty());
}

TEST_CASE("ptx: no op of the op table on 8-bit ints from vector loads widens a wrapped byte") {
  // Seed 786's pattern for every op that takes int8 or uint8 operands: each result, cast to float32,
  // summed over rows of 16 bytes (one 16-byte vector load a row, as the failing kernel read).
  int checked = 0;
  std::vector<std::string> bad_ops;
  for (cf::DType t8 : {cf::i8, cf::u8})
  for (int k = 0; k < cf::detail::kNumOps; ++k) {
    auto x = cf::placeholder(t8, {64, 16});
    auto y = cf::placeholder(t8, {64, 16});
    const auto& row = cf::detail::op_row(static_cast<cf::detail::Op>(k));
    std::vector<std::vector<cf::Operand>> forms;
    if (row.arity == 1) forms = {{x}};
    if (row.arity == 2) forms = {{x, y}, {x, cf::Operand(int64_t(-3))}};
    for (const auto& f : forms) {
      cf::Array r;
      try {
        r = cf::apply(row.name, f);
      } catch (const cf::Error&) {  // the op does not take int8 (or this form)
        continue;
      }
      if (r.dtype() != t8) continue;  // only 8-bit results are this pattern's
      const auto ex = plan_of({cf::sum(r.astype(cf::f32), 1)});
      ++checked;
      for (const auto& s : ex->steps)
        for (const auto& b : unextended_byte_converts(ptx_of(s.spec.source))) bad_ops.push_back(std::string(row.name) + ": " + b);
    }
  }
  MESSAGE(checked << " 8-bit forms checked");
  CHECK(checked > 40);
  for (const auto& b : bad_ops) MESSAGE("a wrapped byte widened: " << b);
  CHECK(bad_ops.empty());
}

TEST_CASE("ptx: kernels that round float64 to float16 or bfloat16 build for sm_80 as for sm_90") {
  // cvt.rn.bf16.f64 is an sm_90 instruction: ptxas refused every A100 kernel (and the
  // interpreter's sm_80 and PTX images) that cast float64 to bfloat16. Before sm_90 the
  // preamble rounds to odd into float, then to nearest even (codegen/preamble_device.inc).
  auto x = cf::placeholder(cf::f64, {1000});
  auto h = cf::placeholder(cf::f16, {1000});
  const std::vector<std::pair<const char*, cf::Array>> cases = {
      {"astype bfloat16", x.astype(cf::bf16)},
      {"astype float16", x.astype(cf::f16)},
      {"x * 2 + bfloat16", x * 2 + cf::placeholder(cf::bf16, {1000})},
      {"float16 + float64, as bfloat16", (h + x).astype(cf::bf16)},
  };
  for (const auto& [what, v] : cases) {
    INFO(std::string(what));
    const auto ex = plan_of({v});
    for (const auto& s : ex->steps) {
      if (s.spec.source.empty()) continue;
      for (int arch : {80, 90}) {
        INFO("sm_" << arch);
        CHECK_NOTHROW(cf::detail::compile_kernel(s.spec.source, s.spec.name, arch));
      }
    }
  }
}

TEST_CASE("sm_80: every op row on every dtype, and every cast, builds for the A100") {
  // ptxas for sm_80 over the generated code of the whole op table (the interpreter's cases are
  // the same expressions and helpers): an instruction newer than sm_80 fails here, not on a
  // user's A100. One multi-output kernel per dtype (and per source dtype of the casts).
  std::map<cf::DType, std::vector<cf::Array>> outs;
  cufuse_test::for_each_op_case([&](const cf::detail::OpRow& row, cf::DType t, const cf::DType* in, const cf::detail::OpTyping&) {
    std::vector<cf::Operand> args;
    for (int k = 0; k < row.arity; ++k) args.push_back(cf::placeholder(in[k], {1000}));
    outs[t].push_back(cf::apply(row.name, args));
  });
  for (cf::DType from : cufuse_test::kAllDTypes)
    for (cf::DType to : cufuse_test::kAllDTypes) outs[from].push_back(cf::placeholder(from, {1000}).astype(to));
  int kernels = 0;
  for (const auto& [t, o] : outs) {
    INFO(cf::name(t));
    const auto ex = plan_of(o);
    for (const auto& s : ex->steps) {
      if (s.spec.source.empty()) continue;
      ++kernels;
      CHECK_NOTHROW(cf::detail::compile_kernel(s.spec.source, s.spec.name, 80));
    }
  }
  CHECK(kernels >= static_cast<int>(outs.size()));
}
