// tests/test_cli_report.cpp: the report of cufuse-dump-kernels (src/cli/report.hpp) built
// through the executor's machinery from parsed programs, and its renderers: text, JSON
// (checked by a strict validator here, and escaping byte by byte), Graphviz.
#include <doctest/doctest.h>

#include <cctype>
#include <string>

#include <fmt/format.h>

#include "cli/evaluator.hpp"
#include "cli/report.hpp"
#include "cli/syntax.hpp"
#include "core/library_call.hpp"
#include "core/node.hpp"
#include "cufuse/cufuse.hpp"
#include "reference/host_data.hpp"

namespace cli = cufuse::cli;

namespace {

cli::Report report_of(const std::string& src, const std::vector<std::string>& args,
                      const std::vector<std::string>& out = {}, bool compile = false, int arch = 90) {
  cli::Evaluator ev;
  for (const auto& a : args) ev.declare(cli::parse_arg_spec(a));
  ev.run(cli::parse_program(src));
  cli::ReportOptions opt;
  opt.arch = arch;
  opt.compile = compile;
  opt.placeholder_names = ev.placeholder_names();
  return cli::build_report(ev.results(out), opt);
}

// A strict RFC 8259 validator: true when `s` is exactly one JSON value.
class JsonCheck {
 public:
  explicit JsonCheck(const std::string& s) : s_(s) {}
  bool ok() {
    ws();
    if (!value()) return false;
    ws();
    return i_ == s_.size();
  }

 private:
  const std::string& s_;
  size_t i_ = 0;
  void ws() {
    while (i_ < s_.size() && (s_[i_] == ' ' || s_[i_] == '\n' || s_[i_] == '\t' || s_[i_] == '\r')) ++i_;
  }
  bool lit(const char* w) {
    size_t n = std::char_traits<char>::length(w);
    if (s_.compare(i_, n, w) != 0) return false;
    i_ += n;
    return true;
  }
  bool value() {
    if (i_ >= s_.size()) return false;
    char c = s_[i_];
    if (c == '{') return object();
    if (c == '[') return array();
    if (c == '"') return string();
    if (c == 't') return lit("true");
    if (c == 'f') return lit("false");
    if (c == 'n') return lit("null");
    return number();
  }
  bool object() {
    ++i_;
    ws();
    if (i_ < s_.size() && s_[i_] == '}') return ++i_, true;
    for (;;) {
      ws();
      if (!string()) return false;
      ws();
      if (i_ >= s_.size() || s_[i_++] != ':') return false;
      ws();
      if (!value()) return false;
      ws();
      if (i_ >= s_.size()) return false;
      if (s_[i_] == ',') { ++i_; continue; }
      if (s_[i_] == '}') return ++i_, true;
      return false;
    }
  }
  bool array() {
    ++i_;
    ws();
    if (i_ < s_.size() && s_[i_] == ']') return ++i_, true;
    for (;;) {
      ws();
      if (!value()) return false;
      ws();
      if (i_ >= s_.size()) return false;
      if (s_[i_] == ',') { ++i_; continue; }
      if (s_[i_] == ']') return ++i_, true;
      return false;
    }
  }
  bool string() {
    if (i_ >= s_.size() || s_[i_] != '"') return false;
    ++i_;
    while (i_ < s_.size()) {
      unsigned char c = static_cast<unsigned char>(s_[i_]);
      if (c == '"') return ++i_, true;
      if (c < 0x20) return false;
      if (c == '\\') {
        ++i_;
        if (i_ >= s_.size()) return false;
        char e = s_[i_];
        if (e == 'u') {
          for (int k = 1; k <= 4; ++k)
            if (i_ + k >= s_.size() || !std::isxdigit(static_cast<unsigned char>(s_[i_ + k]))) return false;
          i_ += 4;
        } else if (std::string("\"\\/bfnrt").find(e) == std::string::npos) {
          return false;
        }
      }
      ++i_;
    }
    return false;
  }
  bool number() {
    size_t b = i_;
    if (i_ < s_.size() && s_[i_] == '-') ++i_;
    if (i_ >= s_.size() || !std::isdigit(static_cast<unsigned char>(s_[i_]))) return false;
    if (s_[i_] == '0') ++i_;
    else while (i_ < s_.size() && std::isdigit(static_cast<unsigned char>(s_[i_]))) ++i_;
    if (i_ < s_.size() && s_[i_] == '.') {
      ++i_;
      if (i_ >= s_.size() || !std::isdigit(static_cast<unsigned char>(s_[i_]))) return false;
      while (i_ < s_.size() && std::isdigit(static_cast<unsigned char>(s_[i_]))) ++i_;
    }
    if (i_ < s_.size() && (s_[i_] == 'e' || s_[i_] == 'E')) {
      ++i_;
      if (i_ < s_.size() && (s_[i_] == '+' || s_[i_] == '-')) ++i_;
      if (i_ >= s_.size() || !std::isdigit(static_cast<unsigned char>(s_[i_]))) return false;
      while (i_ < s_.size() && std::isdigit(static_cast<unsigned char>(s_[i_]))) ++i_;
    }
    return i_ > b;
  }
};

bool contains(const std::string& s, const std::string& part) { return s.find(part) != std::string::npos; }
size_t count(const std::string& s, const std::string& part) {
  size_t n = 0;
  for (size_t p = s.find(part); p != std::string::npos; p = s.find(part, p + 1)) ++n;
  return n;
}

}  // namespace

TEST_CASE("cli report: the issue's example is one kernel") {
  auto r = report_of("sqrt(x*x + y)", {"x=f32[4096,4096]", "y=f32[4096]"});
  REQUIRE(r.kernels.size() == 1);
  CHECK(r.library_calls.empty());
  const auto& k = r.kernels[0];
  CHECK(k.rule == "output");
  CHECK(!k.rule_doc.empty());
  CHECK(k.iteration_shape == cufuse::Shape{4096, 4096});
  REQUIRE(k.outputs.size() == 1);
  CHECK(k.outputs[0].results == std::vector<std::string>{"sqrt(x*x + y)"});
  CHECK(k.outputs[0].dtype == cufuse::f32);
  REQUIRE(k.inputs.size() == 2);
  CHECK(k.inputs[0].label == "x");
  CHECK(k.inputs[0].kind == "placeholder");
  CHECK(k.inputs[1].label == "y");
  CHECK(k.inputs[1].strides == cufuse::Strides{0, 1});  // broadcast over rows
  CHECK(contains(k.source, "extern \"C\" __global__"));
  CHECK(contains(k.source, "cf_fma("));  // x*x + y contracted (contract-multiply-add)
  CHECK(contains(k.source, k.name));
  CHECK(k.preamble_length > 0);
  CHECK(!k.compiled);
  REQUIRE(r.results.size() == 1);
  CHECK(r.results[0].kernel == 0);
  // The DAG: 2 placeholder leaves outside, fma (x*x + y, contracted) and sqrt inside kernel 0.
  int leaves = 0, inner = 0;
  for (const auto& n : r.graph) (n.kernel < 0 ? leaves : inner)++;
  CHECK(leaves == 2);
  CHECK(inner == 2);
}

TEST_CASE("cli report: results of one shape share one kernel, others get their own") {
  auto r = report_of("a = x * 2; b = exp(x); c = x[0] + 1", {"x=f32[64,64]"}, {"a", "b"});
  REQUIRE(r.kernels.size() == 1);
  CHECK(r.kernels[0].outputs.size() == 2);
  CHECK(r.kernels[0].outputs[0].results == std::vector<std::string>{"a"});
  CHECK(r.kernels[0].outputs[1].results == std::vector<std::string>{"b"});
  CHECK(r.kernels[0].inputs.size() == 2);  // x and the scalar 2

  r = report_of("a = x * 2; c = x[0] + 1", {"x=f32[64,64]"}, {"a", "c"});
  REQUIRE(r.kernels.size() == 2);
  CHECK(r.kernels[0].rule == "iteration-space");
  CHECK(r.kernels[1].iteration_shape == cufuse::Shape{64});
  CHECK(r.results[1].kernel == 1);

  // One array under two names is one output with both names.
  r = report_of("a = x + 1; b = a", {"x=f32[8]"}, {"a", "b"});
  REQUIRE(r.kernels.size() == 1);
  REQUIRE(r.kernels[0].outputs.size() == 1);
  CHECK(r.kernels[0].outputs[0].results == std::vector<std::string>{"a", "b"});
  CHECK(r.results.size() == 2);

  // A result that is a placeholder's view is a copy kernel.
  r = report_of("x.T", {"x=f32[8,4]"});
  REQUIRE(r.kernels.size() == 1);
  CHECK(r.kernels[0].inputs[0].strides == cufuse::Strides{1, 4});
}

TEST_CASE("cli report: reductions, scans and intermediates read from memory") {
  // softmax: one row kernel, its prologue and rows fused.
  auto r = report_of("e = exp(x - x.max(axis=1, keepdims=True)); e / e.sum(axis=1, keepdims=True)", {"x=f32[64,256]"});
  REQUIRE(r.kernels.size() == 1);
  CHECK(r.kernels[0].kind == "reduction");
  CHECK(r.kernels[0].axes == cufuse::Axes{1});
  CHECK(r.kernels[0].iteration_shape == cufuse::Shape{64, 256});
  CHECK(r.kernels[0].inputs.size() == 1);
  CHECK(contains(cli::render_text(r, cli::SourceMode::None), "reducing axes (1,)"));

  // A full reduction feeding a scan: the scan is its own kernel and reads m from memory.
  r = report_of("m = x.max(); c = cumsum(x / m, axis=1)", {"x=f32[64,128]"}, {"m", "c"});
  REQUIRE(r.kernels.size() == 2);
  CHECK(r.kernels[0].kind == "reduction");
  CHECK(r.kernels[1].kind == "scan");
  CHECK(r.results[0].kernel == 0);
  CHECK(r.results[1].kernel == 1);
  bool reads_m = false;
  for (const auto& in : r.kernels[1].inputs) reads_m |= in.kind == "intermediate" && in.label == "m (from kernel 0)";
  CHECK(reads_m);
  // The DAG has an edge from kernel 0's node into kernel 1's cluster.
  bool cross = false;
  for (const auto& n : r.graph)
    for (int in : n.inputs) cross |= n.kernel == 1 && r.graph[static_cast<size_t>(in)].kernel == 0;
  CHECK(cross);
  const std::string text = cli::render_text(r, cli::SourceMode::None);
  CHECK(contains(text, "scanning axis 1"));
  CHECK(contains(text, "m (from kernel 0): float32 () [memory]"));
  CHECK(JsonCheck(cli::render_json(r, false)).ok());
  CHECK(count(cli::render_dot(r), "subgraph cluster_kernel") == 2);
  // The cut: m is written to memory for the scan, which reads it; named by its --dot node id.
  REQUIRE(r.kernels[0].cuts.size() == 1);
  CHECK(contains(r.kernels[0].cuts[0], ": materialize, read by 1 group (read by cumsum along axis 1"));
  int m_id = -1;
  for (const auto& n : r.graph)
    if (n.kernel == 0 && n.results == std::vector<std::string>{"m"}) m_id = n.id;
  REQUIRE(m_id >= 0);
  CHECK(r.kernels[0].cuts[0].rfind(fmt::format("cut at n{} max over axes", m_id), 0) == 0);
  CHECK(contains(text, "  cut at n"));
  CHECK(contains(cli::render_json(r, false), "\"cuts\": [\"cut at n"));
  CHECK(r.kernels[1].cuts.empty());
}

namespace {
// A library call that only describes itself: enough to plan around.
class FakeCall : public cufuse::detail::LibraryCall {
 public:
  std::string describe() const override { return "fake float32 (8,) -> (8,), for tests"; }
  int num_outputs() const override { return 1; }
  cufuse::DType output_dtype(int) const override { return cufuse::f32; }
  cufuse::Shape output_shape(int) const override { return {8}; }
  void run(const std::vector<cufuse::detail::TensorRef>&, const std::vector<cufuse::detail::TensorRef>&,
           void*) const override {}
  void run_reference(const std::vector<const cufuse::detail::HostArray*>&,
                     std::vector<cufuse::detail::HostArray>&) const override {}
  uint64_t attributes_hash() const override { return 77; }
};
}  // namespace

TEST_CASE("cli report: library calls are groups of their own, in execution order") {
  namespace d = cufuse::detail;
  cufuse::Array x(d::make_placeholder(cufuse::f32, {8}, 0));
  cufuse::Array x2 = x * 2;
  d::InputVec ins;
  ins.push_back(x2.node());
  cufuse::Array called(d::make_library_nodes(std::make_shared<FakeCall>(), std::move(ins))[0]);
  cufuse::Array y = called + 1;
  cli::ReportOptions opt;
  opt.compile = false;
  opt.placeholder_names = {"x"};
  auto r = cli::build_report({{"y", y}}, opt);
  REQUIRE(r.library_calls.size() == 1);
  const auto& l = r.library_calls[0];
  CHECK(l.name == "fake");
  CHECK(l.detail == "fake float32 (8,) -> (8,), for tests");
  CHECK(!l.rule.empty());
  REQUIRE(l.inputs.size() == 1);
  // x * 2 is computed before the call (into memory, or read as-is if the planner folds it).
  REQUIRE(!r.kernels.empty());
  CHECK(r.kernels.back().group > l.group);  // the +1 runs after the call
  CHECK(r.results[0].kernel == static_cast<int>(r.kernels.size()) - 1);
  bool reads_call = false;
  for (const auto& in : r.kernels.back().inputs) reads_call |= in.kind == "intermediate" && contains(in.label, "library call 0");
  CHECK(reads_call);
  const std::string text = cli::render_text(r, cli::SourceMode::None);
  CHECK(contains(text, "library call 0: fake"));
  CHECK(contains(text, "call:      fake float32 (8,) -> (8,), for tests"));
  CHECK(text.find("library call 0: fake") < text.find(fmt::format("kernel {}: ", r.kernels.size() - 1)));
  const std::string js = cli::render_json(r, true);
  CHECK(JsonCheck(js).ok());
  CHECK(contains(js, "\"library_calls\": [\n    {\"name\": \"fake\""));
  const std::string dot = cli::render_dot(r);
  CHECK(contains(dot, "subgraph cluster_call0"));
  CHECK(contains(dot, "shape=box3d"));
}

TEST_CASE("cli report: NVRTC results, and a failure that does not stop the report") {
  auto r = report_of("a = x * 2; c = x[0] + 1", {"x=f32[64,64]"}, {"a", "c"}, /*compile=*/true, 80);
  REQUIRE(r.kernels.size() == 2);
  for (const auto& k : r.kernels) {
    CHECK(k.error.empty());
    CHECK(k.compiled);
    CHECK(k.registers > 0);
    CHECK(k.spill_stores == 0);
  }
  CHECK(r.failed_compiles() == 0);
  CHECK(contains(cli::render_text(r, cli::SourceMode::None), "sm_80:"));

  // An arch NVRTC rejects: every kernel reports the error, none is lost.
  r = report_of("a = x * 2; c = x[0] + 1", {"x=f32[64,64]"}, {"a", "c"}, true, 11);
  REQUIRE(r.kernels.size() == 2);
  CHECK(r.failed_compiles() == 2);
  for (const auto& k : r.kernels) CHECK(!k.error.empty());
  const std::string text = cli::render_text(r, cli::SourceMode::None);
  CHECK(count(text, "FAILED for sm_11") == 2);
  const std::string json = cli::render_json(r, true);
  CHECK(JsonCheck(json).ok());
  CHECK(contains(json, "\"registers\": null"));
}

TEST_CASE("cli report: text rendering") {
  auto r = report_of("a = x * 2; b = exp(x)", {"x=f16[16,16]"}, {"a", "b"});
  std::string t = cli::render_text(r, cli::SourceMode::Body);
  CHECK(contains(t, "1 kernel, 0 library calls"));
  CHECK(contains(t, "rule:      output: "));
  CHECK(contains(t, "writes:    a: float16 (16, 16)"));
  CHECK(contains(t, "           b: float16 (16, 16)"));
  CHECK(contains(t, "reads:     x: float16 (16, 16)"));
  CHECK(contains(t, "scalar 2 (float16, a kernel parameter)"));
  CHECK(contains(t, "nvrtc:     not compiled"));
  CHECK(contains(t, "lines of preamble: the shared helpers this kernel uses"));
  CHECK(contains(t, "extern \"C\" __global__"));
  CHECK(!contains(t, "#define CF_FN"));
  CHECK(contains(cli::render_text(r, cli::SourceMode::Full), "#define CF_FN"));
  CHECK(!contains(cli::render_text(r, cli::SourceMode::None), "---- source"));
}

TEST_CASE("cli report: JSON") {
  auto r = report_of("a = where(x > 0, x, 0.5 * x); b = -x", {"x=f32[128]"}, {"a", "b"});
  std::string js = cli::render_json(r, true);
  CHECK(JsonCheck(js).ok());
  CHECK(contains(js, "\"kernels\": ["));
  CHECK(contains(js, "\"library_calls\": []"));
  for (const char* key : {"\"name\"", "\"source\"", "\"rule\"", "\"iteration_shape\": [128]", "\"outputs\"",
                          "\"registers\"", "\"spill_stores\"", "\"spill_loads\"", "\"compile_ms\""})
    CHECK_MESSAGE(contains(js, key), key);
  CHECK(contains(js, "\"results\": [\"a\"]"));
  std::string nosrc = cli::render_json(r, false);
  CHECK(JsonCheck(nosrc).ok());
  CHECK(contains(nosrc, "\"source\": null"));
  // Nothing to compute is still valid JSON.
  cli::Report empty;
  CHECK(JsonCheck(cli::render_json(empty, true)).ok());
}

TEST_CASE("cli report: JSON string escaping") {
  CHECK(cli::json_string("plain") == "\"plain\"");
  CHECK(cli::json_string("a\"b\\c") == "\"a\\\"b\\\\c\"");
  CHECK(cli::json_string("l1\nl2\tx\r") == "\"l1\\nl2\\tx\\r\"");
  CHECK(cli::json_string(std::string("\x01\x1f\x7f", 3)) == "\"\\u0001\\u001f\\u007f\"");
  CHECK(cli::json_string(std::string("nul\0x", 5)) == "\"nul\\u0000x\"");
  CHECK(cli::json_string("caf\xc3\xa9 \xe2\x86\x92 \xf0\x9f\x98\x80") == "\"caf\xc3\xa9 \xe2\x86\x92 \xf0\x9f\x98\x80\"");
  CHECK(cli::json_string("bad \xff \xc3 end") == "\"bad \\ufffd \\ufffd end\"");
  CHECK(cli::json_string("\xed\xa0\x80") == "\"\\ufffd\\ufffd\\ufffd\"");  // a UTF-16 surrogate
  CHECK(cli::json_string("\xc0\xaf") == "\"\\ufffd\\ufffd\"");             // overlong
  CHECK(JsonCheck(cli::json_string("a\"\\\n\x01\xff")).ok());
}

TEST_CASE("cli report: Graphviz") {
  auto r = report_of("a = x * 2; c = x[0] + y", {"x=f32[64,64]", "y=f32[]"}, {"a", "c"});
  std::string d = cli::render_dot(r);
  CHECK(d.rfind("digraph cufuse_plan {", 0) == 0);
  CHECK(d.back() == '\n');
  CHECK(count(d, "subgraph cluster_kernel") == 2);
  CHECK(contains(d, "rule: iteration-space"));
  CHECK(contains(d, "=> a"));
  CHECK(contains(d, "=> c"));
  // Each leaf once, outside the clusters; every edge's ends exist.
  size_t edges = 0;
  for (const auto& n : r.graph) edges += n.inputs.size();
  CHECK(count(d, " -> ") == edges);
  CHECK(count(d, "shape=ellipse") == 3);  // x, x[0] (a strided view), y
  // Quotes in a result name are escaped.
  auto q = report_of("x + 1", {"x=f32[2]"});
  q.kernels[0].name = "k\"1";
  CHECK(contains(cli::render_dot(q), "k\\\"1"));
}

namespace {

// The entries of the JSON's "kernels" and "library_calls" lists (render_json writes each
// kernel as "    {\n      \"name\"" and each call as one "    {\"name\"" line).
struct JsonCounts {
  size_t kernels = 0, library_calls = 0;
  std::string first_call;
};
JsonCounts json_counts(const std::string& js) {
  JsonCounts c;
  const size_t k = js.find("\"kernels\": ["), l = js.find("\"library_calls\": [");
  REQUIRE(k != std::string::npos);
  REQUIRE(l != std::string::npos);
  REQUIRE(k < l);
  c.kernels = count(js.substr(k, l - k), "\n    {\n      \"name\": ");
  const std::string calls = js.substr(l);
  c.library_calls = count(calls, "\n    {\"name\": ");
  const size_t n = calls.find("{\"name\": \"");
  if (n != std::string::npos) c.first_call = calls.substr(n + 10, calls.find('"', n + 10) - (n + 10));
  return c;
}

}  // namespace

TEST_CASE("cli report: seed 000's distance matrix is one GEMM and at most two kernels") {
  auto r = report_of("sqrt(maximum(sum(q*q,1)[:,None] - 2*q@p.T + sum(p*p,1)[None,:], 0))",
                     {"q=f32[100,64]", "p=f32[100,64]"});
  REQUIRE(r.library_calls.size() == 1);
  CHECK(r.library_calls[0].name == "matmul");
  CHECK(contains(r.library_calls[0].detail, "alpha 2"));  // the 2 is the GEMM's alpha, not a kernel
  CHECK(r.kernels.size() <= 2);
  CHECK(r.results[0].kernel == static_cast<int>(r.kernels.size()) - 1);  // the epilogue kernel writes it
  const std::string js = cli::render_json(r, false);
  CHECK(JsonCheck(js).ok());
  auto c = json_counts(js);
  CHECK(c.library_calls == 1);
  CHECK(c.first_call == "matmul");
  CHECK(c.kernels == r.kernels.size());
  CHECK(c.kernels <= 2);
}

TEST_CASE("cli report: contractions and linear algebra from the program") {
  const std::vector<std::string> args = {"a=f32[64,64]", "b=f32[64,64]", "x=f64[32,32]"};
  // Nothing to multiply as matrices: one fused kernel, no GEMM.
  auto r = report_of("einsum('ij,ij->i', a, b)", args);
  CHECK(r.library_calls.empty());
  CHECK(r.kernels.size() == 1);
  auto c = json_counts(cli::render_json(r, false));
  CHECK(c.library_calls == 0);
  CHECK(c.kernels == 1);
  // A transposed operand is read through the GEMM's op flags: one call, no kernel.
  r = report_of("a @ b.T", args);
  REQUIRE(r.library_calls.size() == 1);
  CHECK(r.library_calls[0].name == "matmul");
  CHECK(r.kernels.empty());
  CHECK(r.results[0].library_call == 0);
  // Each solver routine is one library call (plus kernels for triangles, signs, products).
  for (const char* prog : {"linalg.inv(x)", "linalg.solve(x, x[:, 0])", "linalg.qr(x)", "linalg.svd(x)",
                           "linalg.eigh(x)", "linalg.det(x)", "np.linalg.norm(x, 'nuc')", "linalg.cholesky(x)",
                           "linalg.eigvalsh(x)", "linalg.svdvals(x)", "linalg.slogdet(x)", "linalg.matrix_rank(x)"}) {
    CAPTURE(prog);
    r = report_of(prog, args);
    CHECK(r.library_calls.size() == 1);
    const std::string js = cli::render_json(r, false);
    CHECK(JsonCheck(js).ok());
    CHECK(json_counts(js).library_calls == 1);
  }
  // The Frobenius norm is a reduction: one kernel, no library call.
  r = report_of("linalg.norm(x, 'fro')", args);
  CHECK(r.library_calls.empty());
  CHECK(r.kernels.size() == 1);
  CHECK(r.kernels[0].kind == "reduction");
}

TEST_CASE("cli report: a convolution is a library call that shows its own generated kernel") {
  const std::vector<std::string> args = {"x=f64[2048,2048]", "k=f64[15,15]", "v=f32[1000]"};
  for (const char* prog : {"signal.convolve2d(x, k)", "scipy.signal.correlate2d(x, k, 'same', 'wrap')",
                           "convolve2d(x, k, boundary='symm', fillvalue=1)"}) {
    CAPTURE(prog);
    auto r = report_of(prog, args, {}, /*compile=*/true);
    REQUIRE(r.library_calls.size() == 1);
    CHECK(r.kernels.empty());
    const auto& l = r.library_calls[0];
    CHECK(l.has_kernel);
    CHECK(l.kernel.compiled);
    CHECK(l.kernel.error.empty());
    CHECK(l.kernel.source.find("__global__") != std::string::npos);
    const std::string text = cli::render_text(r, cli::SourceMode::Body);
    CHECK(text.find("kernel:    " + l.kernel.name) != std::string::npos);
    CHECK(text.find("---- source of " + l.kernel.name) != std::string::npos);
    const std::string js = cli::render_json(r, true);
    CHECK(JsonCheck(js).ok());
  }
  // np.convolve, then elementwise work: the call, then one kernel reading its result.
  auto r = report_of("y = convolve(v, v[:15], 'same'); y * 2 + 1", args);
  CHECK(r.library_calls.size() == 1);
  CHECK(r.kernels.size() == 1);
  // A bad mode is an error at the call, with SciPy's message.
  CHECK_THROWS_WITH(report_of("signal.convolve2d(x, k, 'middle')", args), doctest::Contains("Acceptable mode flags"));
  CHECK_THROWS_WITH(report_of("signal.convolve(x, k)", args), doctest::Contains("has no attribute 'convolve'"));
}
