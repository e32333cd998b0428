// src/cli/report.hpp: the structured report of what cufuse would run for some arrays: the
// plan's groups with the rule that cut each one, each kernel's source, inputs, outputs and
// NVRTC result, the library calls (cuBLAS, cuSOLVER), and the plan's DAG per
// kernel. build_report makes it through the executor's own machinery (scan_graph,
// build_executable); render_text / render_json / render_dot print it. A program that writes
// in place is several evaluations (writes.hpp): each is planned in order, its kernels tagged
// with it, a write's output with the memory and view it goes into.
#pragma once
#include <string>
#include <vector>

#include "cli/value.hpp"
#include "cli/writes.hpp"
#include "cufuse/dtype.hpp"
#include "cufuse/shape.hpp"

namespace cufuse::cli {

struct ReportOptions {
  int arch = 90;
  bool compile = true;                          // run NVRTC on each kernel
  std::vector<std::string> placeholder_names;   // by Node::placeholder_slot, to name leaves
  std::vector<MemorySlot> slots;                // by slot, when the program writes: which evaluation wrote
                                                // each memory (a result there is in memory)
};

// A value a group writes: which results it is (none for an intermediate that later groups
// read from memory), and its dtype and shape.
struct WrittenValue {
  std::vector<std::string> results;  // the program's names for it (several --out names may share it)
  std::string what;                  // what computes it: "add", "sum over axes (1,)", "matmul"
  DType dtype = DType::Float32;
  Shape shape;
  // A write in place: the memory it goes into, through this view (element strides, offset).
  bool in_place = false;
  std::string memory;
  Strides strides;
  int64_t offset = 0;
};

// What a kernel or call reads: a placeholder or buffer (through strides), a scalar
// parameter, a generator, or an intermediate an earlier group wrote to memory.
struct LeafRead {
  std::string kind;   // "placeholder", "buffer", "scalar", "arange", "linspace", "uniform", "normal", "intermediate"
  std::string label;  // "x", "2.5", "sum over axes (1,) from kernel 0"
  DType dtype = DType::Float32;
  Shape shape;
  Strides strides;    // buffers and generators: element strides as the kernel reads them
  int64_t offset = 0;
};

struct KernelReport {
  int group = 0;                // numbered across the program's evaluations
  int evaluation = 0;           // index into Report::evaluations (0 without writes)
  std::string name;
  std::string kind = "elementwise";  // the group's kind: elementwise, reduction, scan
  std::string rule, rule_doc;   // the planner's rule that made this group (plan/plan.hpp)
  std::vector<std::string> fused;  // rules that fused more work into it (prologue, epilogue ...)
  std::vector<std::string> cuts;   // where rules cut the graph at this kernel, and why (plan.hpp's Cut)
  Shape iteration_shape;
  Axes axes;                    // reduction and scan kernels: the reduced axes of the iteration shape
  std::vector<WrittenValue> outputs;
  std::vector<LeafRead> inputs;
  std::string summary;          // codegen's one-line description (contiguity, vector width ...)
  std::string source;           // complete, as NVRTC compiles it
  size_t preamble_length = 0;   // source starts with a preamble of shared helpers this many characters long
  // NVRTC
  bool compiled = false;
  std::string error;            // the CompileError message when it failed
  std::string error_log;        // NVRTC's log when it failed
  int registers = -1;           // -1: unknown
  int spill_stores = 0, spill_loads = 0, stack_bytes = 0, shared_bytes = 0;
  double compile_ms = 0;
  bool from_disk = false;
};

// A cuBLAS / cuSOLVER / contraction call of the plan.
struct LibraryCallReport {
  int group = 0;
  int evaluation = 0;
  std::string name;    // "matmul"
  std::vector<std::string> cuts;  // where rules cut the graph at this call, and why
  std::string rule, rule_doc;
  std::vector<WrittenValue> outputs;
  std::vector<LeafRead> inputs;
  std::string detail;  // the call's own description (shapes, library, precision)
  bool has_kernel = false;  // a call cufuse runs with a kernel of its own (convolution)
  KernelReport kernel;      // then: that kernel (name, summary, source, NVRTC result)
};

// The plan's DAG for --dot: the nodes each kernel computes (one cluster per kernel; a node
// recomputed by two kernels appears in both) and the leaves they read (outside clusters).
struct GraphNode {
  int id = 0;
  int kernel = -1;          // index into Report::kernels, or -1
  int library_call = -1;    // index into Report::library_calls, or -1 (both -1: a leaf)
  std::string label;        // "multiply\nfloat32 (4096, 4096)"
  std::string kind;         // node kind: "elementwise", "view", "placeholder", "scalar", ...
  std::vector<int> inputs;  // ids of the nodes it reads, in order
  std::vector<std::string> results;  // program results this node is
};

struct ResultReport {
  std::string name;
  DType dtype = DType::Float32;
  Shape shape;
  bool in_memory = false;  // already materialized, or written by an earlier evaluation: nothing to compute
  int kernel = -1;         // the kernel writing it, or
  int library_call = -1;   // the library call writing it
  int written_by = -1;     // in memory: the evaluation that wrote it (a write, or what one computed first)
};

// One evaluation of a program that writes in place (writes.hpp), and the last: its results.
struct EvaluationReport {
  std::string kind;  // "materialize", "settle", "temporary", "write", "results"
  std::string why;
  int line = 0, column = 0;  // the statement (0 for the results)
};

struct Report {
  int arch = 90;
  bool compiled = true;  // NVRTC was asked
  std::vector<ResultReport> results;
  std::vector<EvaluationReport> evaluations;  // empty for a program without writes: one evaluation
  std::vector<KernelReport> kernels;
  std::vector<LibraryCallReport> library_calls;
  std::vector<GraphNode> graph;

  int failed_compiles() const {
    int n = 0;
    for (const auto& k : kernels) n += k.error.empty() ? 0 : 1;
    return n;
  }
};

// Plans (and with opt.compile, compiles) the arrays' pending work. Compile failures are
// recorded per kernel, not thrown; cufuse errors in planning are thrown.
Report build_report(const std::vector<NamedArray>& results, const ReportOptions& opt);
// The same after the evaluations the program's writes run first, each planned in order.
Report build_report(const std::vector<Evaluation>& writes, const std::vector<NamedArray>& results,
                    const ReportOptions& opt);

// How much of each kernel's source the text shows: none, the kernel after its preamble of
// shared helpers (one line says where it went), or all of it.
enum class SourceMode { None, Body, Full };
std::string render_text(const Report& r, SourceMode source);
// {"arch": .., "results": [..], "kernels": [..], "library_calls": [..]}; with_source false
// gives "source": null.
std::string render_json(const Report& r, bool with_source);
// A Graphviz digraph: one cluster per kernel.
std::string render_dot(const Report& r);

// JSON string literal for s (quotes included), escaping per RFC 8259; invalid UTF-8 bytes
// become U+FFFD.
std::string json_string(std::string_view s);

}  // namespace cufuse::cli
