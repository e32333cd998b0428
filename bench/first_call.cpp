// bench/first_call.cpp: W12, the first call of a new fused elementwise function in a new
// process whose CUDA context is already up: once with an empty disk cache (NVRTC compiles)
// and once with the disk cache that run left (a new process, so the memory cache is empty).
// W12-softmax: the same for W3's row softmax (a reduction group: its first call runs on the
// interpreter's row kernel while NVRTC compiles).
// The bench re-executes itself (--first-call-child) with CUFUSE_CACHE_DIR set and
// CUFUSE_BENCH_FIRST_CALL naming the function (w7b, softmax; cold-start: cold_start.cpp);
// each child prints one "@@first-call {json}" line. Floor: one NVRTC compile, measured in
// this run.
#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <filesystem>

#include <cuda_runtime.h>

#include "cufuse/array.hpp"
#include "cufuse/backend.hpp"
#include "cufuse/creation.hpp"
#include "cufuse/eval.hpp"
#include "cufuse/ops.hpp"
#include "cufuse/reduce.hpp"
#include "core/counters.hpp"
#include "exec/tiered.hpp"
#include "harness.hpp"

namespace cf = cufuse;
namespace fs = std::filesystem;

namespace bench {
namespace {

constexpr int64_t kFirstCallN = int64_t(1) << 20;

// The same function as W7b and as peers.py's W12 (cupy.fuse, torch.compile).
cf::Array first_call_expr(const cf::Array& x, const cf::Array& y) {
  return ((x - y) * (x + y) * 0.5 + x * 3 - y / 2) * (x * x + 1);
}
double first_call_host(double x, double y) { return ((x - y) * (x + y) * 0.5 + x * 3 - y / 2) * (x * x + 1); }
// The process's first fused function: a different kernel, so the measured one is still new.
cf::Array start_up_expr(const cf::Array& x, const cf::Array& y) { return (x + y) * 0.5; }

struct ChildFigure {
  bool ok = false;
  double time_ms = kNaN, first_ms = kNaN, compiled = kNaN, disk_hits = kNaN, memory_hits = kNaN;
  double compile_ms = kNaN;     // NVRTC's part of time_ms (cufuse::stats)
  double floor_here_ms = kNaN;  // the floor's kernel compiled right after, in the same process
  double interpreted = kNaN;    // launches of the bytecode interpreter in the call (CUFUSE_TIERED)
  double takeover_ms = kNaN;    // from the call's start until its compiled kernel was ready
  // Where the call's time goes: until eval() returned (the host's part, the launch included),
  // of that the executable's building (the counter build_ns), and a new block of the
  // result's size taken from the device's pool afterwards (what the result's allocation cost).
  double eval_ms = kNaN, build_ms = kNaN, alloc_ms = kNaN;
  bool check_ok = false;
  std::string check_detail, error;
};

// W3's softmax rows (a smaller matrix on the reference backend).
// (--reference reaches the children as CUFUSE_BACKEND=reference, not as the flag)
bool on_host(const Options& opt) { return opt.reference || cf::current_backend() == cf::Backend::Reference; }
int64_t softmax_rows(const Options& opt) { return on_host(opt) ? 64 : 8192; }
int64_t softmax_cols(const Options& opt) { return on_host(opt) ? 1024 : 8192; }
cf::Array softmax_expr(const cf::Array& a) {
  cf::Array e = cf::exp(a - cf::max(a, 1, true));
  return e / cf::sum(e, 1, true);
}

ChildFigure run_child(const Options& opt, const std::string& cache_dir, const std::string& which) {
  ChildFigure f;
  // CUDA_CACHE_DISABLE=1: NVRTC's own cache (12.9+, on by default) would answer a compile
  // an earlier trial or run on this machine made, so "empty disk cache" would not be a real
  // first compile; the warm-cache child must be served by cufuse's disk cache alone.
  ChildResult c = run_self(opt, {"--first-call-child"},
                           {"CUFUSE_CACHE_DIR=" + cache_dir, "CUDA_CACHE_DISABLE=1", "CUFUSE_BENCH_FIRST_CALL=" + which},
                           120);
  auto checks = lines_with_prefix(c.out, "@@first-call-check");
  std::string j;
  f.error = child_figure(c, "first-call", &j);
  if (!f.error.empty()) return f;
  f.ok = true;
  f.time_ms = json_number(j, "time_ms");
  f.first_ms = json_number(j, "first_ms");
  f.compiled = json_number(j, "kernels_compiled");
  f.disk_hits = json_number(j, "disk_cache_hits");
  f.memory_hits = json_number(j, "memory_cache_hits");
  f.compile_ms = json_number(j, "compile_ms");
  f.floor_here_ms = json_number(j, "floor_here_ms");
  f.interpreted = json_number(j, "interpreted");
  f.takeover_ms = json_number(j, "takeover_ms");
  f.eval_ms = json_number(j, "eval_ms");
  f.build_ms = json_number(j, "build_ms");
  f.alloc_ms = json_number(j, "alloc_ms");
  f.check_ok = json_number(j, "check_ok") == 1;
  f.check_detail = checks.empty() ? "" : checks.front();
  return f;
}


size_t files_under(const std::string& dir) {
  size_t n = 0;
  std::error_code ec;
  for (auto it = fs::recursive_directory_iterator(dir, ec); !ec && it != fs::recursive_directory_iterator();
       it.increment(ec))
    if (it->is_regular_file(ec)) ++n;
  return n;
}

void run_w12_of(Ctx& ctx, Record& r, const std::string& which) {
  const int trials = ctx.opt.quick ? 3 : 5;
  std::vector<double> cold, warm, cold_first, warm_first, cold_nvrtc, cold_rest, cold_floor_here, cold_takeover;
  std::vector<double> cold_eval, cold_build, cold_alloc, warm_eval, warm_build;
  int cold_interpreted = 0;
  std::vector<std::string> problems;
  double cold_compiled = 0, warm_compiled = 0, warm_disk_hits = 0;
  size_t cache_files = 0;
  bool all_checks_ok = true;
  std::string check_detail;
  for (int t = 0; t < trials; ++t) {
    char tmpl[] = "/tmp/cufuse-bench-w12-XXXXXX";
    if (!mkdtemp(tmpl)) throw std::runtime_error("W12: mkdtemp failed");
    std::string dir = tmpl;
    ChildFigure a = run_child(ctx.opt, dir, which);
    cache_files = std::max(cache_files, files_under(dir));
    ChildFigure b = a.ok ? run_child(ctx.opt, dir, which) : ChildFigure{};
    std::error_code ec;
    fs::remove_all(dir, ec);
    if (!a.ok) {
      problems.push_back("empty-cache child: " + a.error);
      break;
    }
    if (!b.ok) {
      problems.push_back("warm-cache child: " + b.error);
      break;
    }
    cold.push_back(a.time_ms);
    warm.push_back(b.time_ms);
    cold_first.push_back(a.first_ms);
    if (std::isfinite(a.compile_ms)) {
      cold_nvrtc.push_back(a.compile_ms);
      cold_rest.push_back(a.time_ms - a.compile_ms);
    }
    if (std::isfinite(a.floor_here_ms)) cold_floor_here.push_back(a.floor_here_ms);
    if (a.interpreted > 0) ++cold_interpreted;
    if (std::isfinite(a.takeover_ms)) cold_takeover.push_back(a.takeover_ms);
    for (auto [v, into] : {std::pair{a.eval_ms, &cold_eval}, {a.build_ms, &cold_build}, {a.alloc_ms, &cold_alloc},
                           {b.eval_ms, &warm_eval}, {b.build_ms, &warm_build}})
      if (std::isfinite(v)) into->push_back(v);
    warm_first.push_back(b.first_ms);
    cold_compiled = std::max(cold_compiled, a.compiled);
    warm_compiled = std::max(warm_compiled, b.compiled);
    warm_disk_hits = std::max(warm_disk_hits, b.disk_hits);
    for (const ChildFigure* f : {&a, &b}) {
      if (!f->check_ok) all_checks_ok = false;
      if (check_detail.empty() || !f->check_ok) check_detail = f->check_detail;
    }
  }
  if (!problems.empty()) {
    r.status = "error";
    r.notes = problems.front();
    return;
  }
  // The floor is measured after the trials: on a freshly started machine NVRTC runs 3-6x
  // slower in the first seconds (seen on the H100 machine), which would flatter cufuse.
  r.nvrtc_ms = ctx.floors.nvrtc_ms();
  r.check.done = true;
  r.check.ok = all_checks_ok;
  r.check.detail = check_detail;
  Part pc{"empty cache", median(cold), r.nvrtc_ms, cold, ""};
  Part pw{"warm cache", median(warm), kNaN, warm, ""};
  r.parts = {pc, pw};
  r.floor_ms = r.nvrtc_ms;
  r.batches = int(cold.size());
  r.reps = 1;
  r.batch_ms = cold;
  r.set_time(pc.time_ms);
  const std::string what = which == "softmax"
                               ? strf("W3's row softmax on f32[%lld,%lld]", (long long)softmax_rows(ctx.opt),
                                      (long long)softmax_cols(ctx.opt))
                               : std::string("plain lazy expression (W7b's) on f32[2^20]");
  r.notes = strf("median of %d fresh processes each, NVRTC's own cache off (CUDA_CACHE_DISABLE=1); %s, the "
                 "process's second new function; its first (library start-up included): %.3g / %.3g ms; "
                 "kernels compiled: empty %.0f, warm %.0f; warm disk-cache hits %.0f; %zu cache files",
                 trials, what.c_str(), median(cold_first), median(warm_first), cold_compiled, warm_compiled,
                 warm_disk_hits, cache_files);
  // Where the empty-cache time goes, in the same children: NVRTC's part of it, and the floor's
  // kernel compiled right after it (the floor below is the fastest compile in a warm process).
  if (!cold_nvrtc.empty())
    r.notes += strf("; empty-cache children (medians): NVRTC %.3g ms of the call, the rest %.3g ms", median(cold_nvrtc),
                    median(cold_rest));
  if (!cold_floor_here.empty())
    r.notes += strf("; the floor's kernel compiled right after in the same processes: %.3g ms", median(cold_floor_here));
  // Tiered first calls (issue 35): the call ran on the bytecode interpreter while NVRTC compiled
  // its kernel in the background; the time until that kernel was ready to take over.
  r.notes += strf("; interpreted first call in %d of %zu empty-cache children", cold_interpreted, cold.size());
  if (!cold_takeover.empty())
    r.notes += strf(", the compiled kernel ready %.3g ms after the call started (median)", median(cold_takeover));
  if (!cold_eval.empty() && !warm_eval.empty())
    r.notes += strf("; eval() returned after %.3g ms empty / %.3g ms warm (building the executable %.3g / %.3g ms), "
                    "a new block of the result's size from the pool %.3g ms (medians)",
                    median(cold_eval), median(warm_eval), median(cold_build), median(warm_build),
                    cold_alloc.empty() ? kNaN : median(cold_alloc));
  if (!ctx.floors.nvrtc_detail.empty()) r.notes += "; floor: " + ctx.floors.nvrtc_detail;
  if (warm_compiled > 0) r.notes += "; WARM RUN COMPILED (disk cache missed)";
  if (cache_files == 0 && !ctx.opt.reference) r.notes += "; NOTHING WRITTEN TO CUFUSE_CACHE_DIR";
}

void run_w12(Ctx& ctx, Record& r) { run_w12_of(ctx, r, "w7b"); }
void run_w12_softmax(Ctx& ctx, Record& r) { run_w12_of(ctx, r, "softmax"); }

}  // namespace

int first_call_child_main(const Options& opt) {
  const char* which_env = std::getenv("CUFUSE_BENCH_FIRST_CALL");
  const std::string which = which_env ? which_env : "w7b";
  if (which == "cold-start") return cold_start_child_main(opt);
  const bool softmax = which == "softmax";
  try {
    if (cf::current_backend() == cf::Backend::Cuda) {
      cudaError_t e = cudaFree(nullptr);  // the context is up before the clock starts
      if (e != cudaSuccess) throw std::runtime_error(std::string("cudaFree(0): ") + cudaGetErrorString(e));
    }
    std::vector<float> hx = host_normal(kFirstCallN, 5), hy = host_normal(kFirstCallN, 6);
    cf::Array x = from_host_f32(hx), y = from_host_f32(hy);
    device_sync();

    double f0 = now_ms();  // the process's first fused call: library start-up included
    cf::Array w = start_up_expr(x, y);
    w.eval();
    device_sync();
    double first_ms = now_ms() - f0;

    const int64_t M = softmax_rows(opt), N = softmax_cols(opt);
    std::vector<float> ha;
    cf::Array a;
    if (softmax) {
      ha = host_normal(static_cast<size_t>(M * N), 7);
      a = from_host_f32(ha).reshape({M, N});
      device_sync();
    }

    cf::Stats s0 = cf::stats();
    const uint64_t build0 = cf::detail::counters().build_ns.load();
    double t0 = now_ms();
    cf::Array z = softmax ? softmax_expr(a) : first_call_expr(x, y);
    z.eval();
    const double te = now_ms();
    device_sync();
    double t1 = now_ms();
    cf::Stats s1 = cf::stats();
    const double build_ms = static_cast<double>(cf::detail::counters().build_ns.load() - build0) / 1e6;

    // Tiered (issue 35): the call ran interpreted; its kernel compiles in the background. Wait for
    // it (the warm-cache child needs it on disk) and time when it was ready to take over.
    double takeover = kNaN;
    if (s1.interpreted_launches > s0.interpreted_launches) {
      cf::detail::wait_for_background_compiles();
      takeover = now_ms() - t0;
    }
    const cf::Stats s2 = cf::stats();

    // The floor's kernel, compiled by NVRTC directly in this same fresh process (its third compile).
    double floor_here = kNaN;
    if (s2.kernels_compiled > s0.kernels_compiled) {
      try {
        floor_here = nvrtc_floor_compile_once_ms();
      } catch (const std::exception&) {
      }
    }

    // The result's allocation, again: a new block of its size (the pool has none free).
    double alloc_ms = kNaN;
    if (cf::current_backend() == cf::Backend::Cuda) {
      cudaMemPool_t pool = nullptr;
      void* p = nullptr;
      const size_t bytes = static_cast<size_t>(z.size()) * sizeof(float);
      if (cudaDeviceGetDefaultMemPool(&pool, 0) == cudaSuccess) {
        const double a0 = now_ms();
        if (cudaMallocFromPoolAsync(&p, bytes, pool, nullptr) == cudaSuccess) {
          alloc_ms = now_ms() - a0;
          (void)cudaFreeAsync(p, nullptr);
        }
        device_sync();
      }
    }

    std::vector<float> hz = to_host_f32(z.reshape({-1}));
    std::vector<double> row_max(static_cast<size_t>(softmax ? M : 0), kNaN), row_sum(row_max.size(), kNaN);
    auto softmax_host = [&](size_t i) {  // each sampled row's max and sum once, in double
      const size_t row = i / static_cast<size_t>(N);
      if (std::isnan(row_max[row])) {
        double m = -1e300, t = 0;
        for (int64_t j = 0; j < N; ++j) m = std::max(m, double(ha[row * N + j]));
        for (int64_t j = 0; j < N; ++j) t += std::exp(double(ha[row * N + j]) - m);
        row_max[row] = m;
        row_sum[row] = t;
      }
      return std::exp(double(ha[i]) - row_max[row]) / row_sum[row];
    };
    Check c = softmax ? check_sample(hz, softmax_host, 1e-4, 1e-7, 4096)
                      : check_sample(hz, [&](size_t i) { return first_call_host(hx[i], hy[i]); }, 1e-4, 1e-3);
    std::printf("@@first-call {\"time_ms\":%.6f,\"first_ms\":%.6f,\"kernels_compiled\":%llu,\"disk_cache_hits\":%llu,"
                "\"memory_cache_hits\":%llu,\"kernels_launched\":%llu,\"check_ok\":%d,\"compile_ms\":%.6f,"
                "\"floor_here_ms\":%.6f,\"interpreted\":%llu,\"takeover_ms\":%.6f,\"eval_ms\":%.6f,"
                "\"build_ms\":%.6f,\"alloc_ms\":%.6f}\n",
                t1 - t0, first_ms, (unsigned long long)(s1.kernels_compiled - s0.kernels_compiled),
                (unsigned long long)(s1.disk_cache_hits - s0.disk_cache_hits),
                (unsigned long long)(s1.memory_cache_hits - s0.memory_cache_hits),
                (unsigned long long)(s1.kernels_launched - s0.kernels_launched), c.ok ? 1 : 0,
                s1.compile_ms - s0.compile_ms, floor_here,
                (unsigned long long)(s1.interpreted_launches - s0.interpreted_launches), takeover, te - t0,
                build_ms, alloc_ms);
    std::printf("@@first-call-check %s\n", c.detail.c_str());
    std::fflush(stdout);
    return 0;
  } catch (const std::exception& e) {
    std::string msg = e.what();
    std::replace(msg.begin(), msg.end(), '\n', ' ');
    std::printf("@@first-call-error %s\n", msg.c_str());
    std::fflush(stdout);
    return 1;
  }
}

void add_first_call_workloads(Registry& r) {
  r.push_back({"W12",
               "first call of a new fused elementwise function (context up): empty disk cache / warm disk cache "
               "in a new process",
               FloorKind::Compile, run_w12});
  r.push_back({"W12-softmax",
               "first call of W3's row softmax f32[8192,8192] (context up): empty disk cache / warm disk cache in a "
               "new process",
               FloorKind::Compile, run_w12_softmax});
}

}  // namespace bench
