// tests/test_reference_oracle.cpp: the host reference evaluator, the type rules, matmul's
// scalar factors, every reduction and scan (result dtype, shape, values, NaN handling,
// empty axes, errors), the contractions (einsum, matmul, dot, tensordot, trace, ...),
// numpy.linalg's functions and np.convolve/correlate against NumPy 2 (with ml_dtypes'
// bfloat16), and signal::convolve2d/correlate2d against SciPy's scipy.signal (skipped, saying
// so, where gen_cases.py found no SciPy), from the cases tests/oracle/gen_cases.py writes.
//
// CTest runs gen_cases.py first (tests/oracle.cmake, fixture `cufuse_oracle`) and points
// CUFUSE_ORACLE_DIR at its output; without that variable the cases are looked for in
// <build>/tests/oracle. Missing cases fail every test here, saying how to make them.
//
// How results are compared:
//   by each op's precision class, from its row of the op table (cufuse/op_rows.hpp):
//   EXACT: bitwise (NaN equals NaN whatever its payload and sign); so are integer and
//   bool results and astype. EXACT_PM0 (maximum/minimum/fmax/fmin/sign): -0.0 equals +0.0
//   besides: on a tie of zeros NumPy's own loops disagree on which zero they return (its
//   float16 loops the first operand, its float32/float64 SIMD loops the second), and
//   ml_dtypes' bfloat16 sign(-0.0) is -0.0 where NumPy's is 0.0; ours (the kernels'
//   cf_maximum, cf_sign ...) are the same for every dtype. ULPS(n) (the transcendental
//   ops): within compare_ulps() units in the last place (2n for float32/float64, 2 for
//   float16 and bfloat16, which compute in float and round once): NumPy calls SIMD variants
//   of libm (SVML on AVX-512 machines, its own float32 kernels elsewhere), the reference
//   calls glibc. Infinities and NaNs must agree exactly there too. The test prints the
//   largest ulp difference it accepted per op (on the machine this was written on: 2).
//
// Deliberate divergences from NumPy (gen_cases.py marks exactly these inputs as skipped;
// the semantics we give instead are checked in tests/test_reference_evaluator.cpp):
//   1. Integer power with a negative exponent: NumPy raises ValueError for the whole
//      array; we give the truncated value (1 for base 1, +-1 for base -1, else 0).
//   2. Integer reciprocal of 0: NumPy converts 1.0/0 = inf to the integer type
//      (undefined in C, garbage in practice); we give 0, what integer floor_divide by 0
//      gives in NumPy.
//   3. astype from float to an integer of NaN, +-inf or a value out of the target's
//      range: undefined in NumPy (C's conversion); we saturate and map NaN to 0, as the
//      GPU's cvt instruction does.
//   4. astype float64 -> bfloat16: ml_dtypes rounds through float32 (twice: 1 + 2^-8 +
//      2^-40 becomes 1.0); we round once from double, as NumPy does for float64 ->
//      float16. Where the two differ the NumPy value is skipped and the `cast_exact`
//      cases check our value against an exact rounding done in Python; bfloat16
//      linspace is checked the same way.
//   5. where(c, x, y) with x/y of bfloat16 and float16/int16/uint16/int32+ : NumPy has
//      no common dtype and raises; like promote_types we take the dtype ml_dtypes'
//      ufunc loops give (float32 or float64).
//   6. The op table's comparison rows compute a signed integer against uint64 in float64,
//      where NumPy 2 compares them exactly (loops (int64, uint64) -> bool): at the table's
//      level 2**53 + 1 == 2**53 is True. The graph builder rewrites every such comparison
//      into an exact one (exact_int_compare, src/graph/elementwise.cpp; checked in
//      tests/test_core_promotion.cpp), so the public API agrees with NumPy; these tests,
//      which check the table itself, report those loop dtypes as a known difference and
//      skip only the pairs float64 gets wrong.
//   7. matmul of bfloat16: ml_dtypes registers no matmul loop, so NumPy computes in float32
//      and returns float32; we return bfloat16 (accumulated in float32), as float16 gives
//      float16 in NumPy and bfloat16 gives bfloat16 in PyTorch and JAX. gen_cases.py leaves
//      bfloat16 out of the matmul cases.
//   8. signal::convolve2d/correlate2d with a bool, float16 or bfloat16 result: SciPy has no
//      such loop and raises ValueError ("convolve2d not available for this type"); we give
//      bool as any of (a AND b), as np.convolve does, and sum the half types in float32
//      (cufuse/signal.hpp). gen_cases.py expects exactly that, computed by SciPy's int64 and
//      float32 loops.
//   9. The composite rows (sinc, round, nan_to_num, isclose: NumPy functions written in
//      Python over ufuncs) have no bfloat16 cases: ml_dtypes' bfloat16 is not an np.inexact,
//      so NumPy's nan_to_num leaves its NaNs alone and sinc and isclose promote it to
//      float64 on the way; we treat bfloat16 as the float it is (bfloat16 results).
//  10. logaddexp and logaddexp2 of float32 compute in float64 (codegen/device_helpers.inc):
//      where the result is near 0 NumPy's float32 formula cancels (up to 255 ulps off the
//      float64 value); ours is within 1 ulp. gen_cases.py skips the inputs where NumPy's
//      float32 result is more than 4 ulps off its own float64 one.
#include <doctest/doctest.h>

#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <functional>
#include <limits>
#include <map>
#include <optional>
#include <set>
#include <sstream>
#include <string>
#include <vector>

#include <fmt/format.h>

#include "core/node.hpp"
#include "core/op_table.hpp"
#include "cufuse/cufuse.hpp"
#include "cufuse/error.hpp"
#include "reference/evaluator.hpp"
#include "reference/host_data.hpp"
#include "runtime/storage.hpp"

using namespace cufuse;
using namespace cufuse::detail;

namespace {

// gen_cases.py's dtypes: the real ones (complex64/complex128 are tests/test_complex_oracle.cpp's).
constexpr int kOracleDTypes = 13;

// ------------------------------------------------------------ the oracle files
std::string oracle_dir() {
  if (const char* e = std::getenv("CUFUSE_ORACLE_DIR"); e && *e) return e;
  return std::string(CUFUSE_TEST_BINARY_DIR) + "/oracle";
}

struct Oracle {
  std::vector<std::vector<std::string>> lines;
  std::vector<unsigned char> data;
  std::string error;
};

const Oracle& oracle() {
  static const Oracle o = [] {
    Oracle r;
    const std::string dir = oracle_dir();
    std::ifstream m(dir + "/manifest.txt");
    std::ifstream d(dir + "/data.bin", std::ios::binary);
    if (!m || !d) {
      r.error = fmt::format(
          "NumPy oracle cases not found in {0} (manifest.txt, data.bin). They are generated by "
          "`ctest` (test `oracle_cases` runs first), or by hand: python3 {1}/tests/oracle/gen_cases.py "
          "--src {1} --out {0}  (needs numpy>=2 and ml_dtypes, and scipy for convolve2d: pip install numpy ml_dtypes scipy)",
          dir, CUFUSE_SOURCE_DIR);
      return r;
    }
    std::string line;
    while (std::getline(m, line)) {
      std::istringstream ss(line);
      std::vector<std::string> tok;
      for (std::string t; ss >> t;) tok.push_back(t);
      if (!tok.empty()) r.lines.push_back(std::move(tok));
    }
    r.data.assign(std::istreambuf_iterator<char>(d), std::istreambuf_iterator<char>());
    if (r.lines.empty() || r.lines[0][0] != "meta") r.error = "oracle manifest.txt is empty or malformed";
    return r;
  }();
  return o;
}

// Fails the calling test loudly when the cases are missing.
#define REQUIRE_ORACLE()                          \
  do {                                            \
    if (!oracle().error.empty()) FAIL(oracle().error); \
  } while (0)

struct Tok {
  const std::vector<std::string>& t;
  size_t i = 1;
  const std::string& str() {
    if (i >= t.size()) throw std::runtime_error("oracle manifest line too short: " + t[0]);
    return t[i++];
  }
  int64_t i64() { return std::stoll(str()); }
  uint64_t u64() { return std::stoull(str()); }
  double f64() { return std::strtod(str().c_str(), nullptr); }
  DType dt() { return parse_dtype(str()); }
  Shape shape() {
    int nd = static_cast<int>(i64());
    Shape s;
    for (int k = 0; k < nd; ++k) s.push_back(i64());
    return s;
  }
  Strides strides(int nd) {
    Strides s;
    for (int k = 0; k < nd; ++k) s.push_back(i64());
    return s;
  }
  Layout layout() {
    Layout l;
    l.shape = shape();
    l.strides = strides(l.shape.ndim());
    l.offset = i64();
    return l;
  }
  // An array of the data file: offset and element count; nullptr for "-1 0".
  const unsigned char* arr(int64_t* count = nullptr) {
    int64_t off = i64(), n = i64();
    if (count) *count = n;
    if (off < 0) return nullptr;
    if (static_cast<size_t>(off) > oracle().data.size()) throw std::runtime_error("oracle array past data.bin");
    return oracle().data.data() + off;
  }
};

// ------------------------------------------------------------ nodes over host data
// A buffer leaf over a host copy of `shape`'s elements, read through `layout` (default:
// the contiguous layout of `shape`).
NodePtr host_buffer(DType t, const Shape& shape, const void* bytes, std::optional<Layout> layout = std::nullopt) {
  const size_t nbytes = static_cast<size_t>(numel(shape)) * itemsize(t);
  auto st = allocate_host(std::max<size_t>(nbytes, 1));
  if (nbytes) std::memcpy(st->ptr, bytes, nbytes);
  return make_buffer(t, layout ? *layout : contiguous_layout(shape), std::move(st));
}

// ------------------------------------------------------------ comparison
// The op's precision class, from its row of the op table (astype: exact).
Precision precision_of(const std::string& op) {
  const OpFunction* f = find_function(op);
  return f ? f->precision : Precision{Precision::Exact, 0};
}

double elem_double(DType t, const unsigned char* p, int64_t i) {
  return ref::with_storage_type(t, [&](auto ts) -> double {
    using S = typename decltype(ts)::type;
    S s;
    std::memcpy(&s, p + i * sizeof(S), sizeof(S));
    if constexpr (ref::is_cplx_v<S>) {  // (no complex cases here: test_complex_oracle.cpp's)
      return static_cast<double>(s.re);
    } else {
      if (is_half(t)) return ref::half_bits_to_float(t, static_cast<uint16_t>(s));
      return static_cast<double>(s);
    }
  });
}

// The float as an integer that orders like the value (for ulp distances).
int64_t ordered(DType t, const unsigned char* p, int64_t i) {
  int64_t v;
  switch (itemsize(t)) {
    case 2: { int16_t b; std::memcpy(&b, p + i * 2, 2); v = b; break; }
    case 4: { int32_t b; std::memcpy(&b, p + i * 4, 4); v = b; break; }
    default: { int64_t b; std::memcpy(&b, p + i * 8, 8); v = b; break; }
  }
  if (v < 0) v = std::numeric_limits<int64_t>::min() - v;  // negative floats count down from -0
  return v;
}

std::string show(DType t, const unsigned char* p, int64_t i) {
  const int isz = itemsize(t);
  uint64_t bits = 0;
  std::memcpy(&bits, p + i * isz, isz);
  if (is_float(t)) return fmt::format("{} (0x{:0{}x})", elem_double(t, p, i), bits, isz * 2);
  if (t == DType::Bool) return bits ? "True" : "False";
  if (is_signed_int(t)) {
    int64_t v = static_cast<int64_t>(bits << (64 - 8 * isz)) >> (64 - 8 * isz);
    return std::to_string(v);
  }
  return std::to_string(bits);
}

// The largest ulp distance seen per "op dtype" among accepted transcendental results.
std::map<std::string, int64_t>& max_ulps_seen() {
  static std::map<std::string, int64_t> m;
  return m;
}

struct Mismatches {
  int64_t count = 0, skipped = 0;
  std::string first;
  void add(const std::string& what) {
    if (count++ < 8) first += "\n    " + what;
  }
};

// Compares n elements of got against expected (both dtype t storage).
void compare(const std::string& op, DType t, const unsigned char* got, const unsigned char* exp, int64_t n,
             const unsigned char* skip, Mismatches& mm,
             const std::function<std::string(int64_t)>& inputs) {
  const int isz = itemsize(t);
  const Precision prec = precision_of(op);
  const int tol = compare_ulps(prec, t);
  const bool zero_free = prec.kind == Precision::ExactPm0;
  for (int64_t i = 0; i < n; ++i) {
    if (skip && skip[i]) {
      mm.skipped++;
      continue;
    }
    if (std::memcmp(got + i * isz, exp + i * isz, isz) == 0) continue;
    bool ok = false;
    if (is_float(t)) {
      double g = elem_double(t, got, i), e = elem_double(t, exp, i);
      if (std::isnan(g) && std::isnan(e)) ok = true;
      else if (zero_free && g == 0 && e == 0) ok = true;
      else if (tol > 0 && std::isfinite(g) && std::isfinite(e)) {
        int64_t d = ordered(t, got, i) - ordered(t, exp, i);
        d = d < 0 ? -d : d;
        ok = d <= tol;
        if (ok) {
          int64_t& seen = max_ulps_seen()[fmt::format("{}({})", op, name(t))];
          seen = std::max(seen, d);
        }
      }
    }
    if (!ok)
      mm.add(fmt::format("[{}] {}: got {}, NumPy {}", i, inputs(i), show(t, got, i), show(t, exp, i)));
  }
}

// ------------------------------------------------------------ the value cases
struct ValueCase {
  std::string op;
  int n = 0;
  DType in[3];
  DType out;
  Shape out_shape;
  int64_t count = 0;
  const unsigned char* skip = nullptr;
  Shape in_shape[3];
  const unsigned char* in_data[3] = {};
  const unsigned char* expected = nullptr;
};

ValueCase parse_values(const std::vector<std::string>& line) {
  Tok tk{line};
  ValueCase c;
  c.op = tk.str();
  c.n = static_cast<int>(tk.i64());
  for (int k = 0; k < c.n; ++k) c.in[k] = tk.dt();
  c.out = tk.dt();
  c.out_shape = tk.shape();
  c.count = tk.i64();
  c.skip = tk.arr();
  for (int k = 0; k < c.n; ++k) {
    c.in_shape[k] = tk.shape();
    c.in_data[k] = tk.arr();
  }
  c.expected = tk.arr();
  return c;
}

std::string case_name(const ValueCase& c) {
  std::string s = c.op + "(";
  for (int k = 0; k < c.n; ++k) s += (k ? ", " : "") + std::string(name(c.in[k]));
  return s + ")";
}

// Runs one values case; returns a failure description or "".
std::string run_values(const ValueCase& c, int64_t& skipped) {
  const Op op = *find_op(c.op);
  OpTyping ty;
  try {
    ty = type_op(op, c.in, c.n, c.out);
  } catch (const Error& e) {
    return fmt::format("{}: NumPy gives {}, type_op throws: {}", case_name(c), name(c.out), e.what());
  }
  if (ty.result != c.out)
    return fmt::format("{}: NumPy gives {}, type_op gives {}", case_name(c), name(c.out), name(ty.result));
  InputVec ins;
  for (int k = 0; k < c.n; ++k) ins.push_back(host_buffer(c.in[k], c.in_shape[k], c.in_data[k]));
  NodePtr node = make_elementwise(static_cast<uint16_t>(op), c.out, c.out_shape, std::move(ins));
  HostArray got;
  try {
    got = reference_evaluate(node);
  } catch (const std::exception& e) {
    return fmt::format("{}: reference_evaluate threw: {}", case_name(c), e.what());
  }
  if (got.dtype != c.out || got.shape != c.out_shape || got.size() != c.count)
    return fmt::format("{}: result {} {} instead of {} {}", case_name(c), name(got.dtype), to_string(got.shape),
                       name(c.out), to_string(c.out_shape));
  // Inputs of another shape are shown by their own flat index only when shapes agree.
  auto inputs = [&](int64_t i) {
    std::string s;
    for (int k = 0; k < c.n; ++k) {
      if (c.in_shape[k] != c.out_shape) return std::string("(broadcast inputs)");
      s += (k ? ", " : "") + show(c.in[k], c.in_data[k], i);
    }
    return "(" + s + ")";
  };
  Mismatches mm;
  compare(c.op, c.out, got.bytes.data(), c.expected, c.count, c.skip, mm, inputs);
  skipped += mm.skipped;
  if (mm.count == 0) return "";
  return fmt::format("{} -> {}: {} of {} elements differ:{}", case_name(c), name(c.out), mm.count, c.count, mm.first);
}

void run_value_lines(bool casts) {
  REQUIRE_ORACLE();
  int cases = 0, failed = 0;
  int64_t skipped = 0, elements = 0;
  std::string report;
  std::map<std::string, std::set<DType>> covered;  // op -> dtypes of its same-dtype cases
  for (const auto& line : oracle().lines) {
    if (line[0] != "values") continue;
    ValueCase c = parse_values(line);
    if ((c.op == "astype") != casts) continue;
    ++cases;
    elements += c.count;
    if (c.n == 1 || c.in[0] == c.in[1]) covered[c.op].insert(c.in[c.n - 1]);
    std::string f = run_values(c, skipped);
    if (!f.empty()) {
      ++failed;
      if (failed <= 60) report += "\n  " + f;
    }
  }
  MESSAGE(fmt::format("{} {} cases, {} elements, {} inputs skipped as documented divergences",
                      cases, casts ? "astype" : "ufunc", elements, skipped));
  CHECK_MESSAGE(cases > 0, "no value cases in the oracle manifest");
  CHECK_MESSAGE(failed == 0, fmt::format("{} of {} cases differ from NumPy:{}", failed, cases, report));
  if (!casts) {
    std::string ulps;
    for (const auto& [k, v] : max_ulps_seen())
      if (v) ulps += fmt::format(" {}:{}", k, v);
    MESSAGE(fmt::format("largest ulp differences from NumPy accepted:{}", ulps.empty() ? " none" : ulps));
    // Every op of the table has cases for every dtype type_op accepts it on.
    std::string missing;
    for (int o = 0; o < kNumOps; ++o) {
      const OpRow& row = op_row(static_cast<Op>(o));
      if (row.rule == TypeRule::Cast) continue;
      for (int d = 0; d < kOracleDTypes; ++d) {
        DType dts[3] = {DType(d), DType(d), DType(d)};
        bool accepted = true;
        try {
          type_op(row.id, dts, row.arity);
        } catch (const TypeError&) {
          accepted = false;
        }
        if (accepted && !covered[row.name].count(DType(d))) missing += fmt::format(" {}({})", row.name, name(DType(d)));
      }
    }
    CHECK_MESSAGE(missing.empty(), fmt::format("ops without NumPy value cases:{}", missing));
  }
}

// ------------------------------------------------------------ outcomes and values
// What a case did, as the NumPy error class it raised: "ok" when it returned.
template <class F>
std::string outcome(F&& run) {
  try {
    run();
    return "ok";
  } catch (const cufuse::IndexError&) {
    return "IndexError";
  } catch (const cufuse::ValueError&) {
    return "ValueError";
  } catch (const cufuse::TypeError&) {
    return "TypeError";
  } catch (const cufuse::OverflowError&) {
    return "OverflowError";
  } catch (const std::exception& e) {
    return std::string("other: ") + e.what();
  }
}
// NumPy's AxisError is both a ValueError and an IndexError.
bool same_error(const std::string& numpy, const std::string& ours) {
  return ours == numpy || (numpy == "AxisError" && (ours == "IndexError" || ours == "ValueError"));
}
// Elements of `got` off NumPy's `want` (as float64): NaN where NumPy has NaN, the same
// infinity, else within tol(i). `first` describes the first one.
template <class Tol>
int64_t count_differing(const HostArray& got, const double* want, int64_t n, Tol tol, std::string& first) {
  int64_t bad = 0;
  for (int64_t i = 0; i < n; ++i) {
    const double g = got.get_double(i), e = want[i];
    const bool ok = std::isnan(e) ? std::isnan(g) : std::isinf(e) ? g == e : std::fabs(g - e) <= tol(i);
    if (!ok && bad++ == 0) first = fmt::format("[{}] cufuse {} NumPy {}", i, g, e);
  }
  return bad;
}

// What every record checks before its values; each returns true when that decides the case,
// counting a difference in `bad` (and reporting the first 30 of a test). An error record:
// NumPy's error class, read from tk, against ours.
bool error_record(Tok& tk, const std::string& status, const std::string& got, const std::string& what, int& bad) {
  if (status != "error") return false;
  const std::string cls = tk.str();
  if (!same_error(cls, got) && bad++ < 30) FAIL_CHECK(what << ": NumPy raises " << cls << ", cufuse: " << got);
  return true;
}
// A value record: cufuse must have returned, with NumPy's dtype and shape where given.
bool wrong_result(const std::string& got, const HostArray& h, std::optional<DType> rt, const Shape* rshape,
                  const std::string& what, int& bad) {
  std::string numpy = rt ? std::string(name(*rt)) : std::string();
  if (rshape) numpy += (numpy.empty() ? "" : " ") + to_string(*rshape);
  if (numpy.empty()) numpy = "a result";
  if (got != "ok") {
    if (bad++ < 30) FAIL_CHECK(what << ": NumPy gives " << numpy << ", cufuse: " << got);
    return true;
  }
  if ((rt && h.dtype != *rt) || (rshape && !(h.shape == *rshape))) {
    if (bad++ < 30) FAIL_CHECK(what << ": NumPy gives " << numpy << ", cufuse " << name(h.dtype) << " " << to_string(h.shape));
    return true;
  }
  return false;
}

// The `contract` and `linalg` records: operands, then NumPy's result (dtype, shape, values as
// float64) or error class. make(kind, param, operands) builds cufuse's result; a value may
// be off by tol(result dtype, largest finite expected magnitude). Counts the cases and those
// that differ (the first 30 reported).
struct Tally {
  int cases = 0, bad = 0;
};
template <class Make, class Tol>
Tally check_operand_cases(const std::string& record, Make make, Tol tol) {
  Tally tally;
  for (const auto& line : oracle().lines) {
    if (line[0] != record) continue;
    Tok tk{line};
    const std::string kind = tk.str();
    const std::string param = tk.str();
    const int n = static_cast<int>(tk.i64());
    std::vector<Array> in;
    std::string what = kind + "(" + param;
    for (int k = 0; k < n; ++k) {
      const DType t = tk.dt();
      const Shape s = tk.shape();
      in.push_back(from_host(tk.arr(), t, s));
      what += fmt::format(", {} {}", name(t), to_string(s));
    }
    what += ")";
    const std::string status = tk.str();
    ++tally.cases;
    HostArray got;
    const std::string o = outcome([&] { got = reference_evaluate(make(kind, param, in).node()); });
    if (error_record(tk, status, o, what, tally.bad)) continue;
    const DType rt = tk.dt();
    const Shape rshape = tk.shape();
    int64_t rn = 0;
    const auto* want = reinterpret_cast<const double*>(tk.arr(&rn));
    if (wrong_result(o, got, rt, &rshape, what, tally.bad)) continue;
    double scale = 0;
    for (int64_t i = 0; i < rn; ++i)
      if (std::isfinite(want[i])) scale = std::max(scale, std::fabs(want[i]));
    const double t = tol(rt, scale);
    std::string first;
    const int64_t bad = count_differing(got, want, rn, [t](int64_t) { return t; }, first);
    if (bad && tally.bad++ < 30) FAIL_CHECK(what << ": " << bad << " of " << rn << " elements differ, first " << first);
  }
  return tally;
}

// A `linalg` record of scipy.signal.convolve2d/correlate2d, param `mode;boundary;fill;views`
// (gen_cases.py's gen_conv2d): the fill value as i:/u: an integer, f: a double, b: a bool
// (weak, as the Python scalar SciPy was given) or d:<dtype>:<value> (strong, as a NumPy
// scalar); one view letter per operand, applied to the stored operand: c as it is, t
// transposed, r rows reversed, s every other column.
Array conv2d_case(const std::string& kind, const std::string& param, const Array& in1, const Array& in2) {
  std::vector<std::string> f;
  std::stringstream ss(param);
  for (std::string p; std::getline(ss, p, ';');) f.push_back(p);
  if (f.size() != 4 || f[2].size() < 2 || f[3].size() != 2) throw std::runtime_error("oracle: bad convolve2d param " + param);
  auto weak = [](char k, const std::string& v) {
    return k == 'i' ? Scalar(static_cast<int64_t>(std::stoll(v)))
           : k == 'u' ? Scalar(static_cast<uint64_t>(std::stoull(v)))
           : k == 'b' ? Scalar(v == "1" || v == "True")
                      : Scalar(std::stod(v));
  };
  Scalar fill;
  if (f[2][0] == 'd') {  // d:<dtype>:<value as Python prints it>
    const auto colon = f[2].find(':', 2);
    const DType t = parse_dtype(f[2].substr(2, colon - 2));
    const std::string v = f[2].substr(colon + 1);
    fill = Scalar::typed(weak(is_float(t) ? 'f' : t == DType::Bool ? 'b' : v[0] == '-' ? 'i' : 'u', v), t);
  } else {
    fill = weak(f[2][0], f[2].substr(2));
  }
  auto view = [](char c, const Array& x) -> Array {
    if (c == 't') return x.T();
    if (c == 'r') return x[{slice(std::nullopt, std::nullopt, -1)}];
    if (c == 's') return x[{slice(std::nullopt, std::nullopt), slice(std::nullopt, std::nullopt, 2)}];
    return x;
  };
  const Array a = view(f[3][0], in1), b = view(f[3][1], in2);
  return kind == "convolve2d" ? signal::convolve2d(a, b, f[0], f[1], fill) : signal::correlate2d(a, b, f[0], f[1], fill);
}

}  // namespace

// ============================================================ type rules
TEST_CASE("oracle: promote_types is NumPy 2's table, and ml_dtypes' ufunc loops where NumPy has no common dtype") {
  REQUIRE_ORACLE();
  int pairs = 0;
  std::string bad;
  for (const auto& line : oracle().lines) {
    if (line[0] != "promote") continue;
    Tok tk{line};
    DType a = tk.dt(), b = tk.dt();
    std::string np_promote = tk.str();
    DType ufunc = tk.dt();
    DType ours = promote_types(a, b);
    ++pairs;
    if (ours != ufunc) bad += fmt::format("\n  ({}, {}): ours {}, np.add gives {}", name(a), name(b), name(ours), name(ufunc));
    if (np_promote != "ERR" && parse_dtype(np_promote) != ours)
      bad += fmt::format("\n  ({}, {}): ours {}, np.promote_types gives {}", name(a), name(b), name(ours), np_promote);
    if (can_cast_safe(a, b) != (ours == b)) bad += fmt::format("\n  can_cast_safe({}, {})", name(a), name(b));
  }
  CHECK(pairs == kOracleDTypes * kOracleDTypes);
  CHECK_MESSAGE(bad.empty(), fmt::format("promotion differs from NumPy:{}", bad));
}

TEST_CASE("oracle: float_for is the loop NumPy picks for float-only ufuncs (np.sqrt)") {
  REQUIRE_ORACLE();
  int n = 0;
  for (const auto& line : oracle().lines) {
    if (line[0] != "float_for") continue;
    Tok tk{line};
    DType a = tk.dt(), f = tk.dt();
    ++n;
    CHECK_MESSAGE(float_for(a) == f, fmt::format("float_for({}) = {}, NumPy sqrt loop {}", name(a), name(float_for(a)), name(f)));
  }
  CHECK(n == kOracleDTypes);
}

TEST_CASE("oracle: type_op gives NumPy's result dtype, or TypeError, for every op and dtype tuple") {
  REQUIRE_ORACLE();
  std::map<std::string, DType> no_common;  // "a b" -> ufunc result where np.promote_types fails
  for (const auto& line : oracle().lines)
    if (line[0] == "promote" && line[3] == "ERR") no_common[line[1] + " " + line[2]] = parse_dtype(line[4]);
  int checked = 0, known_bug = 0, where_no_common = 0;
  std::string bad;
  std::set<std::string> ops_seen;
  for (const auto& line : oracle().lines) {
    if (line[0] != "type") continue;
    Tok tk{line};
    const std::string opname = tk.str();
    const int n = static_cast<int>(tk.i64());
    DType in[3];
    for (int k = 0; k < n; ++k) in[k] = tk.dt();
    const std::string res = tk.str();
    auto op = find_op(opname);
    REQUIRE_MESSAGE(op.has_value(), fmt::format("op table has no op {}", opname));
    ops_seen.insert(opname);
    const OpRow& row = op_row(*op);
    ++checked;
    std::string sig = opname + "(";
    for (int k = 0; k < n; ++k) sig += (k ? ", " : "") + std::string(name(in[k]));
    sig += ")";
    OpTyping ty;
    bool threw = false;
    try {
      ty = type_op(*op, in, n);
    } catch (const TypeError&) {
      threw = true;
    }
    if (res == "REJECT") {
      // Divergence 5: where over a pair NumPy cannot promote takes the ufunc-loop dtype.
      auto nc = n == 3 ? no_common.find(std::string(name(in[1])) + " " + std::string(name(in[2]))) : no_common.end();
      if (row.rule == TypeRule::Where && nc != no_common.end() && !threw && ty.result == nc->second) {
        ++where_no_common;
        continue;
      }
      if (!threw) bad += fmt::format("\n  {}: NumPy rejects it, type_op gives {}", sig, name(ty.result));
      continue;
    }
    if (threw) {
      bad += fmt::format("\n  {}: NumPy gives {}, type_op throws TypeError", sig, res);
      continue;
    }
    if (ty.result != parse_dtype(res)) bad += fmt::format("\n  {}: NumPy gives {}, type_op {}", sig, res, name(ty.result));
    // Loop (compute) dtypes, where ours mean the same thing as NumPy's: logical ops take
    // truth values (NumPy has a loop per dtype) and predicates read the input as is.
    const bool loops_comparable = row.rule == TypeRule::Same || row.rule == TypeRule::Float ||
                                  row.rule == TypeRule::TrueDivide || row.rule == TypeRule::Compare;
    if (loops_comparable && tk.i < line.size()) {
      bool differ = false;
      std::string np_loops;
      std::set<DType> loop_set;
      for (int k = 0; k < n; ++k) {
        DType l = tk.dt();
        np_loops += (k ? ", " : "") + std::string(name(l));
        loop_set.insert(l);
        differ |= l != ty.compute[k];
      }
      if (differ && row.rule == TypeRule::Compare && loop_set == std::set<DType>{DType::Int64, DType::UInt64} &&
          ty.compute[0] == DType::Float64) {
        ++known_bug;  // divergence 6
      } else if (differ) {
        std::string ours;
        for (int k = 0; k < n; ++k) ours += (k ? ", " : "") + std::string(name(ty.compute[k]));
        bad += fmt::format("\n  {}: NumPy's loop ({}), type_op computes in ({})", sig, np_loops, ours);
      }
    }
  }
  MESSAGE(fmt::format("{} dtype tuples checked; {} where() pairs follow the ufunc rule (divergence 5); "
                      "{} signed-int/uint64 comparisons computed in float64 (known bug 6)",
                      checked, where_no_common, known_bug));
  for (int o = 0; o < kNumOps; ++o) {
    const OpRow& row = op_row(static_cast<Op>(o));
    if (row.rule != TypeRule::Cast) CHECK_MESSAGE(ops_seen.count(row.name), fmt::format("no type cases for {}", row.name));
  }
  CHECK_MESSAGE(bad.empty(), fmt::format("type rules differ from NumPy:{}", bad));
}

// ============================================================ values
TEST_CASE("oracle: every op of the table on every dtype it takes, edge and random values, vs NumPy") {
  run_value_lines(false);
}

// A `call` record's parameters: "rtol=0.1;equal_nan=True" or "-".
std::vector<std::pair<std::string, Scalar>> parse_params(const std::string& text) {
  std::vector<std::pair<std::string, Scalar>> out;
  if (text == "-") return out;
  std::stringstream ss(text);
  for (std::string kv; std::getline(ss, kv, ';');) {
    const size_t eq = kv.find('=');
    const std::string k = kv.substr(0, eq), v = kv.substr(eq + 1);
    if (v == "True" || v == "False") out.emplace_back(k, Scalar(v == "True"));
    else if (v.find_first_of(".eEn") != std::string::npos) out.emplace_back(k, Scalar(std::strtod(v.c_str(), nullptr)));
    else out.emplace_back(k, Scalar(static_cast<int64_t>(std::stoll(v))));
  }
  return out;
}

TEST_CASE("oracle: every composite row (sinc, round, nan_to_num, isclose) through apply(), vs NumPy's functions") {
  // Each composite of the op table on every dtype (pairs for isclose) with NumPy's defaults
  // and other parameters: the result dtype, shape and values within the row's precision, or
  // NumPy's error class. Called by name with the parameters by name, as the CLI calls them.
  REQUIRE_ORACLE();
  BackendScope ref(Backend::Reference);
  int cases = 0, bad = 0;
  int64_t skipped = 0;
  std::map<std::string, std::set<DType>> covered;
  for (const auto& line : oracle().lines) {
    if (line[0] != "call") continue;
    Tok tk{line};
    const std::string op = tk.str();
    const std::string ptext = tk.str();
    const int n = static_cast<int>(tk.i64());
    std::vector<Operand> in;
    std::vector<DType> dts;
    std::vector<const unsigned char*> raw;
    std::string what = op + "(";
    for (int k = 0; k < n; ++k) {
      const DType t = tk.dt();
      const Shape sh = tk.shape();
      raw.push_back(tk.arr());
      in.push_back(from_host(raw.back(), t, sh));
      dts.push_back(t);
      what += fmt::format("{}{} {}", k ? ", " : "", name(t), to_string(sh));
    }
    what += ptext == "-" ? ")" : ", " + ptext + ")";
    const unsigned char* skip = tk.arr();
    const std::string status = tk.str();
    const auto kv = parse_params(ptext);
    std::vector<OpParam> params;
    for (const auto& [k, v] : kv) params.push_back(OpParam{k, v});
    ++cases;
    covered[op].insert(dts[0]);
    HostArray got;
    const std::string o = outcome([&] { got = reference_evaluate(apply(op, in, params).node()); });
    if (error_record(tk, status, o, what, bad)) continue;
    const DType rt = tk.dt();
    const Shape rshape = tk.shape();
    int64_t rn = 0;
    const unsigned char* want = tk.arr(&rn);
    if (wrong_result(o, got, rt, &rshape, what, bad)) continue;
    Mismatches mm;
    compare(op, rt, got.bytes.data(), want, rn, skip, mm, [&](int64_t i) {
      std::string s;
      for (int k = 0; k < n; ++k) s += (k ? ", " : "") + show(dts[k], raw[k], i);
      return "(" + s + ")";
    });
    skipped += mm.skipped;
    if (mm.count && bad++ < 30) FAIL_CHECK(what << " -> " << name(rt) << ": " << mm.count << " of " << rn << " differ:" << mm.first);
  }
  MESSAGE(cases << " composite cases; " << bad << " differ; " << skipped << " inputs skipped as documented divergences");
  CHECK(bad == 0);
  // Every composite row has cases on every dtype but bfloat16 (divergence 9).
  for (const OpFunction& f : op_functions()) {
    if (f.kind != OpFunction::Composite) continue;
    for (int d = 0; d < kOracleDTypes; ++d)
      if (DType(d) != DType::BFloat16)
        CHECK_MESSAGE(covered[f.name].count(DType(d)), fmt::format("no NumPy cases for {}({})", f.name, name(DType(d))));
  }
}

TEST_CASE("oracle: every ULPS(n) row is within n ulps of NumPy's float64 value (float32), one ulp (float16, bfloat16)") {
  // The precision class against float64 itself, not against another float32 implementation:
  // the row's expression on float32/float16/bfloat16 inputs, against NumPy's float64 result of
  // the same inputs rounded once to the dtype. Infinities (an overflow past the dtype's range
  // included) count as the value after the largest finite one.
  REQUIRE_ORACLE();
  int cases = 0, bad = 0;
  std::map<std::string, int64_t> worst;
  for (const auto& line : oracle().lines) {
    if (line[0] != "ulps64") continue;
    Tok tk{line};
    const std::string op = tk.str();
    const int n = static_cast<int>(tk.i64());
    const DType t = tk.dt();
    const int64_t count = tk.i64();
    InputVec ins;
    std::vector<const unsigned char*> raw;
    for (int k = 0; k < n; ++k) {
      raw.push_back(tk.arr());
      ins.push_back(host_buffer(t, Shape{count}, raw.back()));
    }
    const double* want = reinterpret_cast<const double*>(tk.arr());
    const OpRow& row = op_row(*find_op(op));
    const DType in[2] = {t, t};
    const DType rt = type_op(row.id, in, n).result;
    REQUIRE(rt == t);
    HostArray got = reference_evaluate(make_elementwise(static_cast<uint16_t>(row.id), rt, Shape{count}, std::move(ins)));
    // NumPy's float64 value rounded once to the dtype, as storage bytes.
    InputVec one;
    one.push_back(host_buffer(DType::Float64, Shape{count}, want));
    HostArray rounded = reference_evaluate(make_elementwise(static_cast<uint16_t>(Op::Cast), t, Shape{count}, std::move(one)));
    const int64_t allowed = is_half(t) ? 1 : row.precision.ulps;
    ++cases;
    int64_t over = 0;
    std::string first;
    for (int64_t i = 0; i < count; ++i) {
      const double g = got.get_double(i), e = rounded.get_double(i);
      if (std::isnan(e) || std::isnan(g)) {
        if (std::isnan(e) != std::isnan(g) && over++ == 0) first = fmt::format("[{}] got {}, float64 {}", i, g, want[i]);
        continue;
      }
      int64_t d = ordered(t, got.bytes.data(), i) - ordered(t, rounded.bytes.data(), i);
      d = d < 0 ? -d : d;
      int64_t& wst = worst[fmt::format("{}({})", op, name(t))];
      wst = std::max(wst, d);
      if (d > allowed && over++ == 0) first = fmt::format("[{}] got {}, float64 {} ({} ulps)", i, g, want[i], d);
    }
    if (over && bad++ < 30)
      FAIL_CHECK(op << "(" << name(t) << "): " << over << " of " << count << " beyond " << allowed << " ulps: " << first);
  }
  std::string ulps;
  for (const auto& [k, v] : worst)
    if (v) ulps += fmt::format(" {}:{}", k, v);
  MESSAGE(cases << " ULPS rows x dtypes against float64; largest distances:" << ulps);
  CHECK(cases > 0);
  CHECK(bad == 0);
}

TEST_CASE("oracle: astype between all dtype pairs; every float16/bfloat16 bit pattern; rounding ties") {
  run_value_lines(true);
}

TEST_CASE("oracle: float64 -> bfloat16 rounds once (against an exact rounding)") {
  REQUIRE_ORACLE();
  int cases = 0;
  for (const auto& line : oracle().lines) {
    if (line[0] != "cast_exact") continue;
    Tok tk{line};
    DType from = tk.dt(), to = tk.dt();
    int64_t n = tk.i64(), cnt;
    const unsigned char* src = tk.arr(&cnt);
    const unsigned char* exp = tk.arr();
    ++cases;
    InputVec ins;
    ins.push_back(host_buffer(from, Shape{n}, src));
    HostArray got = reference_evaluate(make_elementwise(static_cast<uint16_t>(Op::Cast), to, Shape{n}, std::move(ins)));
    Mismatches mm;
    compare("astype", to, got.bytes.data(), exp, n, nullptr, mm,
            [&](int64_t i) { return show(from, src, i); });
    CHECK_MESSAGE(mm.count == 0, fmt::format("{} -> {}: {} of {} differ from exact rounding:{}", name(from), name(to),
                                             mm.count, n, mm.first));
    // The library's scalar conversion agrees (Scalar::typed, bfloat16_t(double)).
    for (int64_t i = 0; i < n; i += 97) {
      double v;
      std::memcpy(&v, src + i * 8, 8);
      uint16_t e;
      std::memcpy(&e, exp + i * 2, 2);
      if (!std::isnan(v)) CHECK(bfloat16_t(v).bits == e);
    }
  }
  CHECK(cases > 0);
}

TEST_CASE("oracle: the reference's float -> half roundings agree with cufuse::half and bfloat16_t") {
  // Every float16/bfloat16 tie and its neighbours in float32, and a sweep of bit patterns.
  int64_t bad = 0;
  for (uint32_t hb = 0; hb < 0x7c00; ++hb) {
    float lo = ref::f16_to_float(static_cast<uint16_t>(hb)), hi = ref::f16_to_float(static_cast<uint16_t>(hb + 1));
    float mid = static_cast<float>((static_cast<double>(lo) + hi) / 2);
    for (float f : {mid, std::nextafter(mid, 0.f), std::nextafter(mid, 1e30f), -mid})
      bad += ref::float_to_f16(f) != half(f).bits;
  }
  for (uint64_t u = 0; u < (1ull << 32); u += 65521) {
    float f;
    uint32_t b = static_cast<uint32_t>(u);
    std::memcpy(&f, &b, 4);
    bool nan = std::isnan(f);
    bad += !nan && ref::float_to_bf16(f) != bfloat16_t(f).bits;
    bad += nan && (ref::float_to_bf16(f) & 0x7fff) <= 0x7f80;
    bad += !nan && ref::float_to_f16(f) != half(f).bits;
  }
  CHECK(bad == 0);
}

// ============================================================ generators and layouts
TEST_CASE("oracle: arange and linspace generators vs np.arange / np.linspace") {
  REQUIRE_ORACLE();
  int cases = 0;
  for (const auto& line : oracle().lines) {
    const bool ar = line[0] == "arange", ls = line[0] == "linspace";
    if (!ar && !ls) continue;
    Tok tk{line};
    DType t = tk.dt();
    GenParams p;
    std::string desc;
    if (ar) {
      std::string first = tk.str(), second = tk.str();
      if (is_float(t)) {
        p.start = std::strtod(first.c_str(), nullptr);
        p.step = std::strtod(second.c_str(), nullptr);
      } else {  // integer values as the dtype's two's complement bits
        p.istart = first[0] == '-' ? std::stoll(first) : static_cast<int64_t>(std::stoull(first));
        p.istep_second = second[0] == '-' ? std::stoll(second) : static_cast<int64_t>(std::stoull(second));
      }
      desc = fmt::format("arange {} first {} second {}", name(t), first, second);
    } else {
      p.start = tk.f64();
      p.stop = tk.f64();
      p.num = tk.i64();
      p.endpoint = tk.i64() != 0;
      p.step = tk.f64();
      desc = fmt::format("linspace {} ({}, {}, num={}, endpoint={})", name(t), p.start, p.stop, p.num, p.endpoint);
    }
    Layout l = tk.layout();
    const unsigned char* exp = tk.arr();
    ++cases;
    HostArray got = reference_evaluate(make_generator(ar ? GenKind::Arange : GenKind::Linspace, t, l, p));
    REQUIRE(got.shape == l.shape);
    Mismatches mm;
    compare(ar ? "arange" : "linspace", t, got.bytes.data(), exp, got.size(), nullptr, mm,
            [&](int64_t) { return desc; });
    CHECK_MESSAGE(mm.count == 0, fmt::format("{} over shape {} strides ({}) offset {}:{}", desc, to_string(l.shape),
                                             fmt::join(l.strides.begin(), l.strides.end(), ","), l.offset, mm.first));
  }
  CHECK(cases > 50);
}

TEST_CASE("oracle: strided buffer leaves and View nodes vs NumPy slicing, transposes, reshapes, broadcasts") {
  REQUIRE_ORACLE();
  int cases = 0;
  for (const auto& line : oracle().lines) {
    const bool gather = line[0] == "gather", view = line[0] == "view";
    if (!gather && !view) continue;
    Tok tk{line};
    DType t = tk.dt();
    int64_t nbase;
    const unsigned char* base = tk.arr(&nbase);
    Layout in = tk.layout();
    Layout vl;
    if (view) vl = tk.layout();
    const unsigned char* exp = tk.arr();
    ++cases;
    NodePtr leaf = host_buffer(t, Shape{nbase}, base, in);
    NodePtr node = view ? make_view(leaf, vl) : leaf;
    HostArray got = reference_evaluate(node);
    REQUIRE(got.shape == node->shape());
    CHECK_MESSAGE((got.bytes.empty() || std::memcmp(got.bytes.data(), exp, got.bytes.size()) == 0),  // empty: data() may be null
                  fmt::format("{} {} over shape {} strides ({}) offset {}", line[0], name(t), to_string(in.shape),
                              fmt::join(in.strides.begin(), in.strides.end(), ","), in.offset));
  }
  CHECK(cases > 40);
}

TEST_CASE("oracle: a scalar factor on a matmul operand, (a * c) @ b and (a / c) @ b, vs NumPy") {
  // cufuse folds some factors into the GEMM's alpha; NumPy scales the operand. Zero, infinite
  // and NaN factors (0 * inf, 0 / 0 in the operand) and overflowing ones must not change the
  // NaNs and infinities; finite values agree within the product's rounding.
  REQUIRE_ORACLE();
  BackendScope ref(Backend::Reference);
  int cases = 0;
  for (const auto& line : oracle().lines) {
    if (line[0] != "matmul_factor") continue;
    Tok tk{line};
    const DType t = tk.dt();
    const std::string op = tk.str();
    const double c = tk.f64();
    const Shape sa = tk.shape();
    const unsigned char* a = tk.arr();
    const Shape sb = tk.shape();
    const unsigned char* b = tk.arr();
    const auto* exp = reinterpret_cast<const double*>(tk.arr());
    const auto* mag = reinterpret_cast<const double*>(tk.arr());
    ++cases;
    Array A = from_host(a, t, sa), B = from_host(b, t, sb);
    Array r = matmul(op == "multiply" ? A * c : A / c, B);
    REQUIRE(r.dtype() == t);
    const std::vector<double> got = r.astype(DType::Float64).to_host<double>();
    const double eps = t == DType::Float16 ? 0x1p-11 : t == DType::Float32 ? 0x1p-24 : 0x1p-53;
    const double rel = 2.0 * static_cast<double>(sa[1] + 2) * eps;
    int bad = 0;
    std::string first;
    for (size_t i = 0; i < got.size(); ++i) {
      const double g = got[i], e = exp[i];
      const bool ok = std::isnan(e) ? std::isnan(g)
                      : std::isinf(e) ? g == e
                                      : std::isfinite(g) && std::fabs(g - e) <= rel * mag[i] + 1e-300;
      if (!ok && bad++ == 0) first = fmt::format("[{}] cufuse {} NumPy {}", i, g, e);
    }
    CHECK_MESSAGE(bad == 0, fmt::format("({} a, {} by {}) @ b: {} elements differ, first {}", name(t), op, c, bad,
                                        first));
  }
  CHECK(cases >= 80);
}

TEST_CASE("oracle: every reduction and scan, dtype, axis set, keepdims, dtype= and ddof vs NumPy") {
  // Integer and bool results (argmax/argmin, count_nonzero, any/all, integer sums, products
  // and scans) bitwise; float results with NaN and infinities exactly where NumPy has them
  // and finite values within the summation's rounding (NumPy sums pairwise, float16 in
  // float16; cufuse in float32 and in its own order): |got - want| <= 8 (n + 2) eps mag, mag
  // the magnitudes reduced. Errors: the same class (ValueError, TypeError).
  REQUIRE_ORACLE();
  BackendScope ref(Backend::Reference);
  int cases = 0, errors = 0, bad_cases = 0;
  std::map<std::string, int> per_op;
  for (const auto& line : oracle().lines) {
    if (line[0] != "reduce") continue;
    Tok tk{line};
    const std::string op = tk.str();
    const DType t = tk.dt();
    const Shape shape = tk.shape();
    const unsigned char* x = tk.arr();
    const std::string ax = tk.str();
    const bool keepdims = tk.i64() != 0;
    const std::string dts = tk.str();
    const int ddof = static_cast<int>(tk.i64());
    const std::string status = tk.str();
    std::optional<DType> dt;
    if (dts != "-") dt = parse_dtype(dts);
    Axes axes;
    if (ax != "none") {
      std::stringstream ss(ax);
      for (std::string a; std::getline(ss, a, ',');) axes.push_back(std::stoi(a));
    }
    const AxisArg axis = ax == "none" ? AxisArg() : AxisArg(axes);
    const std::optional<int> one = ax == "none" ? std::nullopt : std::optional<int>(axes[0]);
    const std::string what = fmt::format("{}({} {}, axis={}, keepdims={}, dtype={}, ddof={})", op, name(t),
                                         to_string(shape), ax, keepdims, dts, ddof);
    ++cases;
    ++per_op[op];
    auto run = [&]() -> HostArray {
      Array a = from_host(x, t, shape);
      Array r;
      if (op == "sum") r = sum(a, axis, keepdims, dt);
      else if (op == "prod") r = prod(a, axis, keepdims, dt);
      else if (op == "mean") r = mean(a, axis, keepdims, dt);
      else if (op == "max") r = max(a, axis, keepdims);
      else if (op == "min") r = min(a, axis, keepdims);
      else if (op == "argmax") r = argmax(a, one, keepdims);
      else if (op == "argmin") r = argmin(a, one, keepdims);
      else if (op == "any") r = any(a, axis, keepdims);
      else if (op == "all") r = all(a, axis, keepdims);
      else if (op == "var") r = var(a, axis, ddof, keepdims);
      else if (op == "std") r = cufuse::std(a, axis, ddof, keepdims);
      else if (op == "ptp") r = ptp(a, axis, keepdims);
      else if (op == "count_nonzero") r = count_nonzero(a, axis, keepdims);
      else if (op == "nansum") r = nansum(a, axis, keepdims, dt);
      else if (op == "nanmean") r = nanmean(a, axis, keepdims, dt);
      else if (op == "nanmax") r = nanmax(a, axis, keepdims);
      else if (op == "nanmin") r = nanmin(a, axis, keepdims);
      else if (op == "cumsum") r = cumsum(a, one, dt);
      else if (op == "cumprod") r = cumprod(a, one, dt);
      else throw std::runtime_error("oracle: unknown reduction " + op);
      return reference_evaluate(r.node());  // node by node: no planning, no NVRTC (fast on CI)
    };
    HostArray got;
    const std::string o = outcome([&] { got = run(); });
    if (error_record(tk, status, o, what, bad_cases)) {
      ++errors;
      continue;
    }
    const DType rt = tk.dt();
    const Shape rshape = tk.shape();
    int64_t rn = 0;
    const unsigned char* want = tk.arr(&rn);
    const auto* mag = reinterpret_cast<const double*>(tk.arr());
    if (wrong_result(o, got, rt, &rshape, what, bad_cases)) continue;
    int64_t bad = 0;
    std::string first;
    if (!is_float(rt)) {
      const size_t item = static_cast<size_t>(itemsize(rt));
      for (int64_t i = 0; i < rn; ++i)
        if (std::memcmp(got.bytes.data() + i * item, want + i * item, item) != 0 && bad++ == 0)
          first = fmt::format("[{}] cufuse {} NumPy {}", i, got.get_double(i), HostArray{rt, rshape, std::vector<unsigned char>(want + i * item, want + (i + 1) * item)}.get_double(0));
    } else {
      const double eps = rt == DType::Float16 ? 0x1p-10 : rt == DType::Float32 ? 0x1p-23 : 0x1p-52;
      const double reduced = static_cast<double>(std::max<int64_t>(1, numel(shape) / std::max<int64_t>(1, rn)));
      const double rel = 8.0 * (reduced + 2) * eps;
      const HostArray w{rt, rshape, std::vector<unsigned char>(want, want + rn * itemsize(rt))};
      std::vector<double> wd(static_cast<size_t>(rn));
      for (int64_t i = 0; i < rn; ++i) wd[static_cast<size_t>(i)] = w.get_double(i);
      bad = count_differing(got, wd.data(), rn, [&](int64_t i) { return rel * mag[i] + 1e-300; }, first);
    }
    if (bad && bad_cases++ < 30) FAIL_CHECK(what << ": " << bad << " of " << rn << " elements differ, first " << first);
  }
  MESSAGE(cases << " reduction cases (" << errors << " errors) over " << per_op.size() << " ops; " << bad_cases << " differ");
  CHECK(bad_cases == 0);
  CHECK(cases > 20000);
}

TEST_CASE("oracle: einsum, matmul, dot, inner, outer, vdot, tensordot, trace and diagonal vs NumPy") {
  // Small integer values: every result is exact in its dtype, so values compare exactly (as
  // float64); dtype and shape exactly; NumPy's errors by class.
  REQUIRE_ORACLE();
  BackendScope ref(Backend::Reference);
  auto ints = [](const std::string& s) {
    std::vector<int64_t> v;
    std::stringstream ss(s);
    for (std::string a; std::getline(ss, a, ',');) v.push_back(std::stoll(a));
    return v;
  };
  auto make = [&](const std::string& kind, const std::string& param, const std::vector<Array>& in) -> Array {
    if (kind == "einsum") return einsum(param, in);
    if (kind == "matmul") return matmul(in.at(0), in.at(1));
    if (kind == "dot") return dot(in.at(0), in.at(1));
    if (kind == "inner") return inner(in.at(0), in.at(1));
    if (kind == "outer") return outer(in.at(0), in.at(1));
    if (kind == "vdot") return vdot(in.at(0), in.at(1));
    if (kind == "tensordot") {
      const auto semi = param.find(';');
      if (semi == std::string::npos) return tensordot(in.at(0), in.at(1), static_cast<int>(std::stoll(param)));
      Axes a, b;
      for (auto v : ints(param.substr(0, semi))) a.push_back(static_cast<int>(v));
      for (auto v : ints(param.substr(semi + 1))) b.push_back(static_cast<int>(v));
      return tensordot(in.at(0), in.at(1), a, b);
    }
    const auto p = ints(param);
    return kind == "trace" ? trace(in.at(0), p[0], static_cast<int>(p[1]), static_cast<int>(p[2]))
                           : diagonal(in.at(0), p[0], static_cast<int>(p[1]), static_cast<int>(p[2]));
  };
  const Tally t = check_operand_cases("contract", make, [](DType, double) { return 0.0; });
  MESSAGE(t.cases << " contraction cases; " << t.bad << " differ");
  CHECK(t.bad == 0);
  CHECK(t.cases > 120);
}

TEST_CASE("oracle: numpy.linalg (det, slogdet, inv, solve, cholesky, eigvalsh, svdvals, pinv, lstsq, rank, norms), convolve, correlate, scipy.signal.convolve2d, correlate2d") {
  // Well-conditioned inputs (random + n I; SPD for cholesky/eigvalsh), 2-D, batched, 1x1,
  // 0x0, rectangular, singular, float16, 1-D: dtype and shape exactly, values within
  // 1e-4 (float32) / 1e-10 (float64) of the largest result magnitude, NumPy's errors by class
  // (LinAlgError is a ValueError). The reference backend's solvers (solver_reference.cpp)
  // are what the GPU's cuSOLVER results are compared with. convolve2d/correlate2d: SciPy's
  // values, its result dtypes, its ValueErrors (divergence 8 aside), through conv2d_case.
  REQUIRE_ORACLE();
  BackendScope ref(Backend::Reference);
  namespace la = cufuse::linalg;
  int conv2d = 0;
  auto make = [&conv2d](const std::string& kind, const std::string& param, const std::vector<Array>& in) -> Array {
    Array r;
    const Array& a = in.at(0);
    if (kind == "det") r = la::det(a);
    else if (kind == "slogdet_sign") r = la::slogdet(a).sign;
    else if (kind == "slogdet_log") r = la::slogdet(a).logabsdet;
    else if (kind == "inv") r = la::inv(a);
    else if (kind == "solve") r = la::solve(a, in.at(1));
    else if (kind == "cholesky") r = la::cholesky(a);
    else if (kind == "eigvalsh") r = la::eigvalsh(a);
    else if (kind == "svdvals") r = la::svdvals(a);
    else if (kind == "pinv") r = la::pinv(a);
    else if (kind == "lstsq") r = la::lstsq(a, in.at(1)).x;
    else if (kind == "matrix_rank") r = la::matrix_rank(a);
    else if (kind == "matrix_norm") {
      if (param == "fro" || param == "nuc") r = la::matrix_norm(a, param);
      else {
        const double o = param == "inf" ? INFINITY : param == "-inf" ? -INFINITY : std::stod(param);
        r = la::norm(a, o, Axes{-2, -1});
      }
    } else if (kind == "convolve") {
      r = convolve(a, in.at(1), param);
    } else if (kind == "correlate") {
      r = correlate(a, in.at(1), param);
    } else if (kind == "convolve2d" || kind == "correlate2d") {
      ++conv2d;
      r = conv2d_case(kind, param, a, in.at(1));
    } else if (kind == "vector_norm") {  // ord;axis;keepdims
      const auto s1 = param.find(';'), s2 = param.rfind(';');
      const std::string o = param.substr(0, s1), ax = param.substr(s1 + 1, s2 - s1 - 1);
      const std::optional<double> ord = o == "none" ? std::nullopt
                                        : o == "inf"  ? std::optional<double>(INFINITY)
                                        : o == "-inf" ? std::optional<double>(-INFINITY)
                                                      : std::optional<double>(std::stod(o));
      r = la::norm(a, ord, ax == "none" ? AxisArg() : AxisArg(std::stoi(ax)), param.substr(s2 + 1) == "1");
    } else {
      throw std::runtime_error("oracle: unknown linalg case " + kind);
    }
    r.eval();  // data-dependent errors (singular, not positive definite) come at evaluation
    return r;
  };
  const Tally t = check_operand_cases("linalg", make, [](DType rt, double scale) {
    return (rt == DType::Float32 ? 1e-4 : 1e-10) * std::max(1.0, scale);
  });
  MESSAGE(t.cases << " linalg cases (" << conv2d << " of scipy.signal.convolve2d/correlate2d"
                   << std::string(conv2d ? "" : ": gen_cases.py found no SciPy") << "); " << t.bad << " differ");
  CHECK(t.bad == 0);
  CHECK(t.cases > 250);
}

TEST_CASE("oracle: in-place operators a op= b (every dtype pair, Python scalars) cast back as NumPy's same_kind") {
  REQUIRE_ORACLE();
  BackendScope ref(Backend::Reference);
  int cases = 0, bad_cases = 0;
  for (const auto& line : oracle().lines) {
    if (line[0] != "inplace") continue;
    Tok tk{line};
    const std::string op = tk.str();
    const DType ta = tk.dt();
    const std::string tb = tk.str();
    const unsigned char* av = tk.arr();
    const unsigned char* bv = tk.arr();
    const std::string status = tk.str();
    const std::string what = fmt::format("{} {}= {}", name(ta), op, tb);
    ++cases;
    HostArray h;
    const std::string got = outcome([&] {
      Array a = from_host(av, ta, Shape{6});
      const auto colon = tb.find(':');
      const Operand b = colon == std::string::npos ? Operand(from_host(bv, parse_dtype(tb), Shape{6}))
                        : tb.compare(0, colon, "int") == 0   ? Operand(std::stoll(tb.substr(colon + 1)))
                        : tb.compare(0, colon, "float") == 0 ? Operand(std::stod(tb.substr(colon + 1)))
                                                             : Operand(true);
      if (op == "add") a += b;
      else if (op == "subtract") a -= b;
      else if (op == "multiply") a *= b;
      else if (op == "true_divide") a /= b;
      else if (op == "remainder") a %= b;
      else if (op == "bitwise_and") a &= b;
      else if (op == "bitwise_or") a |= b;
      else if (op == "bitwise_xor") a ^= b;
      else if (op == "left_shift") a <<= b;
      else if (op == "right_shift") a >>= b;
      else throw std::runtime_error("oracle: unknown in-place op " + op);
      h = reference_evaluate(a.node());
    });
    if (error_record(tk, status, got, what, bad_cases)) continue;
    int64_t n = 0;
    const auto* want = reinterpret_cast<const double*>(tk.arr(&n));
    if (wrong_result(got, h, std::nullopt, nullptr, what, bad_cases)) continue;
    std::string first;
    const int64_t bad = count_differing(h, want, n, [&](int64_t i) { return 1e-3 * std::fabs(want[i]); }, first);
    if (bad && bad_cases++ < 30) FAIL_CHECK(what << ": " << bad << " of " << n << " values differ, first " << first);
  }
  MESSAGE(cases << " in-place cases; " << bad_cases << " differ");
  CHECK(bad_cases == 0);
  CHECK(cases > 1500);
}

TEST_CASE("oracle: every binary op with a Python scalar (int, large int, negative int, float, bool) on either side") {
  // NEP 50: the result dtype, the values (exact, or within 4 ulps of the result dtype for
  // the transcendental ops), or the error class NumPy raises.
  REQUIRE_ORACLE();
  BackendScope ref(Backend::Reference);
  int cases = 0, bad_cases = 0;
  for (const auto& line : oracle().lines) {
    if (line[0] != "weak") continue;
    Tok tk{line};
    const std::string op = tk.str();
    const DType t = tk.dt();
    const std::string kind = tk.str();
    const std::string value = tk.str();
    const bool left = tk.i64() != 0;
    const unsigned char* av = tk.arr();
    const std::string status = tk.str();
    const std::string what = fmt::format("{}({}{} {}, {}{})", op, left ? "" : name(t), left ? kind : "", left ? value : "",
                                         left ? name(t) : kind, left ? "" : " " + value);
    ++cases;
    HostArray h;
    const std::string got = outcome([&] {
      const Operand s = kind == "int"     ? Operand(std::stoll(value))
                        : kind == "float" ? Operand(std::stod(value))
                                          : Operand(value == "True");
      const Operand a(from_host(av, t, Shape{3}));
      std::vector<Operand> args = left ? std::vector<Operand>{s, a} : std::vector<Operand>{a, s};
      h = reference_evaluate(cufuse::apply(op, args).node());
    });
    if (error_record(tk, status, got, what, bad_cases)) continue;
    const DType rt = tk.dt();
    int64_t n = 0;
    const auto* want = reinterpret_cast<const double*>(tk.arr(&n));
    if (wrong_result(got, h, rt, nullptr, what, bad_cases)) continue;
    const double eps = rt == DType::Float16 ? 0x1p-10 : rt == DType::BFloat16 ? 0x1p-7 : rt == DType::Float32 ? 0x1p-23 : 0x1p-52;
    std::string first;
    const int64_t bad = count_differing(h, want, n, [&](int64_t i) { return 4 * eps * std::fabs(want[i]); }, first);
    if (bad && bad_cases++ < 30) FAIL_CHECK(what << ": " << bad << " of " << n << " values differ, first " << first);
  }
  MESSAGE(cases << " Python-scalar cases; " << bad_cases << " differ");
  CHECK(bad_cases == 0);
  CHECK(cases > 4000);
}

TEST_CASE("oracle: basic indexing and the view functions (reshape, transpose, swapaxes, moveaxis, squeeze, expand_dims, broadcast_to, ravel)") {
  // arange data: the result's shape and every value exactly, or NumPy's error class (an
  // AxisError, which NumPy makes both a ValueError and an IndexError, accepts either).
  REQUIRE_ORACLE();
  BackendScope ref(Backend::Reference);
  int cases = 0, bad_cases = 0;
  auto ints = [](const std::string& s) {
    std::vector<int64_t> v;
    std::stringstream ss(s);
    for (std::string a; std::getline(ss, a, ',');) v.push_back(std::stoll(a));
    return v;
  };
  auto opt = [](const std::string& s) { return s == "_" ? std::optional<int64_t>() : std::optional<int64_t>(std::stoll(s)); };
  for (const auto& line : oracle().lines) {
    if (line[0] != "viewop") continue;
    Tok tk{line};
    const std::string kind = tk.str();
    const std::string param = tk.str();
    const Shape shape = tk.shape();
    const unsigned char* xv = tk.arr();
    const std::string status = tk.str();
    const std::string what = fmt::format("{}({}) of {}", kind, param, to_string(shape));
    ++cases;
    HostArray h;
    const std::string got = outcome([&] {
      const Array x = from_host(xv, DType::Int32, shape);
      Array r;
      if (kind == "index") {
        std::vector<Index> idx;
        if (param != "empty") {
          std::stringstream ss(param);
          for (std::string it; std::getline(ss, it, '|');) {
            if (it[0] == 'i') idx.emplace_back(static_cast<int64_t>(std::stoll(it.substr(1))));
            else if (it == "n") idx.emplace_back(newaxis);
            else if (it == "e") idx.emplace_back(ellipsis);
            else {
              const auto c1 = it.find(':'), c2 = it.rfind(':');
              const auto step = opt(it.substr(c2 + 1));
              idx.emplace_back(slice(opt(it.substr(1, c1 - 1)), opt(it.substr(c1 + 1, c2 - c1 - 1)), step.value_or(1)));
            }
          }
        }
        r = x.index(idx);
      } else if (kind == "reshape") {
        const auto v = ints(param);
        r = x.reshape(Shape(v.begin(), v.end()));
      } else if (kind == "transpose") {
        if (param == "none") r = x.transpose();
        else {
          Axes a;
          for (auto v : ints(param)) a.push_back(static_cast<int>(v));
          r = x.transpose(a);
        }
      } else if (kind == "swapaxes" || kind == "moveaxis") {
        const auto v = ints(param);
        r = kind == "swapaxes" ? x.swapaxes(static_cast<int>(v[0]), static_cast<int>(v[1]))
                               : x.moveaxis(static_cast<int>(v[0]), static_cast<int>(v[1]));
      } else if (kind == "squeeze") {
        if (param == "none") r = x.squeeze();
        else {
          Axes a;
          for (auto v : ints(param)) a.push_back(static_cast<int>(v));
          r = x.squeeze(a);
        }
      } else if (kind == "expand_dims") {
        r = x.expand_dims(std::stoi(param));
      } else if (kind == "broadcast_to") {
        const auto v = param == "scalar" ? std::vector<int64_t>{} : ints(param);
        r = x.broadcast_to(Shape(v.begin(), v.end()));
      } else if (kind == "ravel") {
        r = x.ravel();
      } else {
        throw std::runtime_error("oracle: unknown view op " + kind);
      }
      h = reference_evaluate(r.node());
    });
    if (error_record(tk, status, got, what, bad_cases)) continue;
    const Shape rshape = tk.shape();
    int64_t n = 0;
    const auto* want = reinterpret_cast<const int64_t*>(tk.arr(&n));
    if (wrong_result(got, h, std::nullopt, &rshape, what, bad_cases)) continue;
    int64_t bad = 0;
    for (int64_t i = 0; i < n; ++i) bad += static_cast<int64_t>(h.get_double(i)) != want[i];
    if (bad && bad_cases++ < 30) FAIL_CHECK(what << ": " << bad << " of " << n << " values differ");
  }
  MESSAGE(cases << " view cases; " << bad_cases << " differ");
  CHECK(bad_cases == 0);
  CHECK(cases > 500);
}
