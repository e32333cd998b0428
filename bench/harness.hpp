// bench/harness.hpp: what every workload of cufuse-bench shares: options, the registry,
// one result record (printed as a table row and as JSON), timing by the rules of
// WORKLOADS.md, the floors measured in the same run, result checks and child processes.
#pragma once
#include <cmath>
#include <cstdint>
#include <functional>
#include <limits>
#include <string>
#include <vector>

#include "cufuse/array.hpp"

namespace bench {

inline constexpr double kNaN = std::numeric_limits<double>::quiet_NaN();

// ------------------------------------------------------------------ options
struct Options {
  bool quick = false;               // fewer repetitions (the GPU check runs this)
  std::vector<std::string> only;    // workload ids to run; empty: all
  std::string json_path;            // --json FILE
  bool isolate = true;              // each workload in its own child process
  bool dump = false;                // print plan_dump of each workload's expression
  bool reference = false;           // --reference: no GPU, CUFUSE_BACKEND=reference (tests the bench only)
  double child_timeout_s = 180;     // per isolated workload
  std::string self_exe;             // this program, to re-execute as a child
  // Internal modes (set when the bench re-executes itself).
  std::string child_workload;       // --child-workload ID: run one workload, print its record
  bool first_call_child = false;    // --first-call-child: W12's fresh process
};

// ------------------------------------------------------------------ records
enum class FloorKind {
  Bandwidth,  // bytes that must move / device-to-device copy bandwidth
  Launch,     // one tiny kernel's host launch cost
  Gemm,       // flops / cuBLAS rate (measured once W6/W8 exist)
  Compile,    // NVRTC compile of a small elementwise kernel
  None,
};
const char* floor_kind_name(FloorKind k);

struct Check {
  bool done = false;
  bool ok = false;
  std::string detail;
};

// One figure of a workload with several (W12: empty / warm cache; W8: fp32 / tf32).
struct Part {
  std::string label;
  double time_ms = kNaN;
  double floor_ms = kNaN;
  std::vector<double> batch_ms;
  std::string notes;
};

struct Record {
  std::string id, description;
  FloorKind floor_kind = FloorKind::None;
  std::string status = "ok";  // ok | check-failed | error | crashed | timeout
  std::string unit = "ms";    // how the table shows the time: ms or us
  double time_ms = kNaN;      // the headline figure (first part when there are parts)
  std::vector<Part> parts;
  double bytes = kNaN;        // bytes that must move per call
  double flops = kNaN;
  double gbs = kNaN, tflops = kNaN;
  double floor_ms = kNaN, pct_of_floor = kNaN;  // pct: floor / time * 100
  double bandwidth_gbs = kNaN;                  // copy bandwidth measured in this run
  double launch_us = kNaN;                      // tiny-kernel launch cost measured in this run
  double nvrtc_ms = kNaN;                       // NVRTC compile measured in this run
  double kernels_per_call = kNaN;               // from cufuse::stats()
  int reps = 0, batches = 0;
  std::vector<double> batch_ms;
  Check check;
  std::string notes;

  void set_time(double ms);        // time_ms plus the derived GB/s, TFLOP/s and % of floor
  std::string to_json() const;     // one line
  std::string to_row() const;      // one line of the printed table
};
std::string table_header();

// ------------------------------------------------------------------ floors
// Ceilings measured once per process, on first use.
// One NVRTC compile (-minimal, NVRTC's own cache off) of the floor's kernel under a new name,
// in ms: W12's children measure it in the same fresh process as cufuse's first call.
double nvrtc_floor_compile_once_ms();

class Floors {
 public:
  double copy_bandwidth_gbs();  // cudaMemcpyAsync device to device, bytes read + written
  double launch_us();           // an empty NVRTC-compiled kernel, loop of launches then sync
  double nvrtc_ms();            // fastest NVRTC compile of a W7b-sized kernel to CUBIN (plain or -minimal)
  std::string nvrtc_detail;     // both figures, for the notes
  std::string notes;            // what fell back and why ("; " between entries)
  void add_note(const std::string& s) { notes += (notes.empty() ? "" : "; ") + s; }

 private:
  double bw_ = kNaN, launch_ = kNaN, nvrtc_ = kNaN;
  bool bw_done_ = false, launch_done_ = false, nvrtc_done_ = false;
};

// ------------------------------------------------------------------ registry
struct Ctx {
  const Options& opt;
  Floors& floors;
};

struct Workload {
  std::string id;           // "W1"
  std::string description;  // the expression and its size, as WORKLOADS.md gives it
  FloorKind floor = FloorKind::None;
  std::function<void(Ctx&, Record&)> run;  // fills the record; may throw
};
using Registry = std::vector<Workload>;

// One function per group file adds its workloads (W2–W11 join here as they land).
void add_elementwise_workloads(Registry& r);  // elementwise.cpp: W1
void add_reduction_workloads(Registry& r);    // reduction_workloads.cpp: W2, W3, W4, W5, W9, R10k
void add_overhead_workloads(Registry& r);     // overhead.cpp: W7a, W7b
void add_first_call_workloads(Registry& r);   // first_call.cpp: W12
int first_call_child_main(const Options& opt);  // first_call.cpp: W12's fresh process
void add_cold_start_workloads(Registry& r);     // cold_start.cpp: W12c (issue 35)
int cold_start_child_main(const Options& opt);  // cold_start.cpp: W12c's fresh process
// tiered_workloads.cpp: W1-interp .. W4-interp, W1..W4 on the bytecode interpreter (issue 35);
// wraps the registered W1..W4, so it is called after them.
void add_tiered_workloads(Registry& r);
// The interpreter rows' ratio to their specialized rows of the same run (main.cpp, at the end).
void add_interp_ratios(std::vector<std::string>& records, std::vector<std::string>& rows);
std::string elementwise_plan_dump();            // elementwise.cpp: W1's plan on placeholders
// Every workload of WORKLOADS.md, for --only and the "not yet" message.
const std::vector<std::string>& all_workload_ids();

// Runs a workload in this process: never throws; errors land in the record.
Record run_workload(Ctx& ctx, const Workload& w);

// ------------------------------------------------------------------ timing
struct Timing {
  double median_ms = kNaN;        // median of the batch means (per call)
  std::vector<double> batch_ms;   // each batch's mean per call
  int reps = 0, batches = 0;
};
double now_ms();  // steady clock
double median(std::vector<double> v);  // NaN when empty
void device_sync();  // cudaDeviceSynchronize, throws on error (nothing under the reference backend)
// Warm-up calls, then batches of calls each ended by one device synchronize; per-call time is
// the median of the batch means. reps = 0 picks reps so that a batch lasts ~target ms.
Timing time_batches(const Ctx& ctx, const std::function<void()>& call, int reps = 0);
// Two calls timed as time_batches times one, their batches alternating (a b, b a, a b ...):
// a floor measured beside the call it bounds, so that the GPU's clock and temperature drift
// (a minute of large GEMMs moves cuBLAS by 3%) falls on both alike. reps as time_batches.
std::pair<Timing, Timing> time_interleaved(const Ctx& ctx, const std::function<void()>& a,
                                           const std::function<void()>& b, int reps = 0);
// Host-overhead workloads: loops of many calls then one synchronize, time per call.
Timing time_loop(const Ctx& ctx, const std::function<void()>& call);
void apply_timing(Record& r, const Timing& t);
// Floor of a memory-bound workload: bytes that must move / the copy bandwidth of this run.
void set_bandwidth_floor(Ctx& ctx, Record& r, double bytes);

// cufuse::stats().kernels_launched across one call (synchronized).
double kernels_per_call(const std::function<void()>& call);

// ------------------------------------------------------------------ checks
// Compares got[i] with want(i) in double for a strided sample of about max_samples indices
// (first and last always included): |got - want| <= atol + rtol * |want|, NaN never passes.
Check check_sample(const std::vector<float>& got, const std::function<double(size_t)>& want,
                   double rtol, double atol, size_t max_samples = size_t(1) << 20);
Check check_sample(const std::vector<double>& got, const std::function<double(size_t)>& want,
                   double rtol, double atol, size_t max_samples = size_t(1) << 20);
// Merges a sub-check into a record's check (all must pass; details joined, each labelled).
void add_check(Record& r, const Check& c, const std::string& label);
// Host random normals (for inputs that must be on the host first).
std::vector<float> host_normal(size_t n, uint64_t seed);
// f32 arrays to and from the host through the untyped calls (no dtype_of<T> needed).
std::vector<float> to_host_f32(const cufuse::Array& a);
cufuse::Array from_host_f32(const std::vector<float>& v);

// ------------------------------------------------------------------ processes
struct ChildResult {
  int exit_code = -1;     // -1 when killed or not started
  int signal = 0;         // the signal that ended it, if any
  bool timed_out = false;
  std::string out;        // its standard output (its standard error passes through)
  std::string error;      // why it could not start
};
// Runs this program again with args; env entries "K=V" override the environment.
ChildResult run_self(const Options& opt, const std::vector<std::string>& args,
                     const std::vector<std::string>& env, double timeout_s);
// The text after "prefix " on each line of out that starts with it.
std::vector<std::string> lines_with_prefix(const std::string& out, const std::string& prefix);
// A fresh-process child that prints "@@<tag> {json}" (and "@@<tag>-error ..." when it fails):
// its figure line in *json, or why there is none (the run failed, timed out, was killed,
// reported an error, or printed nothing).
std::string child_figure(const ChildResult& c, const std::string& tag, std::string* json);
// A number from a flat JSON object text ({"time_ms": 1.5, ...}); NaN when absent.
double json_number(const std::string& obj, const std::string& key);

// ------------------------------------------------------------------ text
std::string strf(const char* fmt, ...) __attribute__((format(printf, 1, 2)));
std::string json_escape(const std::string& s);

}  // namespace bench
