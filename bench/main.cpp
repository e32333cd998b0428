// bench/main.cpp: cufuse-bench's command line. Picks the workloads, runs each (by default in
// its own child process, so that one crash costs one row), prints the table and writes JSON
// after every workload. With no CUDA device it says so, prints W1's plan and exits 0.
#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <string>
#include <vector>

#include <cuda_runtime.h>

#include "cufuse/backend.hpp"
#include "runtime/crash_trace.hpp"
#include "harness.hpp"

namespace bench {

void add_library_workloads(Registry& r);  // library_workloads.cpp: W5, W6, W8, W11
void add_stream_workloads(Registry& r);   // streams_workloads.cpp: S004
void add_signal_workloads(Registry& r);   // signal_workloads.cpp: W10
void add_loop_workloads(Registry& r);     // loop_workloads.cpp: W13-W16, L1-L3
void add_manipulation_workloads(Registry& r);  // manipulation_workloads.cpp: M1-M3 (issue 30)
void add_indexing_workloads(Registry& r); // indexing_workloads.cpp: I1-I3 (issue 30)
void add_statistics_workloads(Registry& r);  // statistics_workloads.cpp: H1, H2 (issue 33)
void add_sorting_workloads(Registry& r);  // sorting_workloads.cpp: SR1-SR6 (issue 33)
void add_fft_workloads(Registry& r);  // fft_workloads.cpp: FF1-FF3 (issue 33)
void add_dist_workloads(Registry& r);  // dist_workloads.cpp: D1-D3, D8, DS (issue 32; 2 GPUs)

const std::vector<std::string>& all_workload_ids() {
  static const std::vector<std::string> ids{"W1",  "W2",  "W3",  "W4",  "W5",  "W6", "W7a", "W7b",
                                            "W8",  "W9",  "W10", "W11", "W12", "W12-softmax", "W12c", "W13", "W14", "W15",
                                            "W16", "L1",  "L2",  "L3",  "R10k", "M1", "M2", "M3", "I1",  "I1-lazy", "I2",  "I3",
                                            "H1",  "H2",
                                            "SR1", "SR2", "SR3", "SR4", "SR5", "SR6", "W1-interp", "W2-interp", "W3-interp",
                                            "W4-interp", "D1",  "D2",  "D3",  "D8",  "DS"};
  return ids;
}

namespace {

void usage() {
  std::printf(
      "usage: cufuse-bench [--only W1,W7a,...] [--quick] [--json FILE] [--no-isolate] [--dump]\n"
      "                    [--child-timeout SECONDS] [--list]\n"
      "Runs the workloads of WORKLOADS.md that cufuse supports (see --list) and prints one row each:\n"
      "time, GB/s or TFLOP/s, the floor measured in this run, %% of floor, kernels per call, result check.\n"
      "  --only       comma-separated workload ids\n"
      "  --quick      fewer repetitions (the GPU check uses this)\n"
      "  --json FILE  one record per workload (rewritten after each workload)\n"
      "  --no-isolate run every workload in this process (default: one child process each)\n"
      "  --dump       print each workload's plan (cufuse::plan_dump) to stderr\n"
      "  --reference  no GPU: run on CUFUSE_BACKEND=reference to test the bench itself (figures mean nothing)\n");
}

std::vector<std::string> split_commas(const std::string& s) {
  std::vector<std::string> out;
  size_t start = 0;
  while (start <= s.size()) {
    size_t end = s.find(',', start);
    if (end == std::string::npos) end = s.size();
    std::string item = s.substr(start, end - start);
    if (!item.empty()) out.push_back(item);
    start = end + 1;
  }
  return out;
}

std::string self_exe(const char* argv0) {
  char buf[4096];
  ssize_t n = readlink("/proc/self/exe", buf, sizeof buf - 1);
  if (n > 0) return std::string(buf, size_t(n));
  return argv0;
}

struct Header {
  std::string device, no_device;
  int cc = 0;
};

void write_json(const Options& opt, const Header& h, const std::vector<std::string>& records) {
  if (opt.json_path.empty()) return;
  std::string tmp = opt.json_path + ".tmp";
  {
    std::ofstream f(tmp);
    f << "{\"tool\":\"cufuse-bench\",\"version\":1";
    f << ",\"device\":" << (h.device.empty() ? "null" : "\"" + json_escape(h.device) + "\"");
    f << ",\"compute_capability\":" << h.cc;
    f << ",\"quick\":" << (opt.quick ? "true" : "false");
    f << ",\"isolated\":" << (opt.isolate ? "true" : "false");
    f << ",\"no_device\":" << (h.no_device.empty() ? "null" : "\"" + json_escape(h.no_device) + "\"");
    f << ",\"workloads\":[";
    for (size_t i = 0; i < records.size(); ++i) f << (i ? ",\n  " : "\n  ") << records[i];
    f << "\n]}\n";
  }
  std::rename(tmp.c_str(), opt.json_path.c_str());
}

// One workload in a child process: its record and row, or a record that says what happened.
void run_isolated(const Options& opt, const Workload& w, std::string& json, std::string& row) {
  std::vector<std::string> args{"--child-workload", w.id};
  if (opt.quick) args.push_back("--quick");
  if (opt.dump) args.push_back("--dump");
  ChildResult c = run_self(opt, args, {}, opt.child_timeout_s);
  auto recs = lines_with_prefix(c.out, "@@record");
  auto rows = lines_with_prefix(c.out, "@@row");
  if (!recs.empty() && !rows.empty()) {
    json = recs.front();
    row = rows.front();
    return;
  }
  Record r;
  r.id = w.id;
  r.description = w.description;
  r.floor_kind = w.floor;
  if (!c.error.empty()) {
    r.status = "error";
    r.notes = c.error;
  } else if (c.timed_out) {
    r.status = "timeout";
    r.notes = strf("no result within %.0f s", opt.child_timeout_s);
  } else if (c.signal) {
    r.status = "crashed";
    r.notes = strf("child killed by signal %d (%s)", c.signal, strsignal(c.signal));
  } else {
    r.status = "crashed";
    r.notes = strf("child exited %d without a record", c.exit_code);
  }
  json = r.to_json();
  row = r.to_row();
}

int run(int argc, char** argv) {
  Options opt;
  bool list = false;
  for (int i = 1; i < argc; ++i) {
    std::string a = argv[i];
    auto value = [&](const char* what) -> std::string {
      if (i + 1 >= argc) {
        std::fprintf(stderr, "cufuse-bench: %s needs a value\n", what);
        std::exit(2);
      }
      return argv[++i];
    };
    if (a == "--only") opt.only = split_commas(value("--only"));
    else if (a.rfind("--only=", 0) == 0) opt.only = split_commas(a.substr(7));
    else if (a == "--quick") opt.quick = true;
    else if (a == "--json") opt.json_path = value("--json");
    else if (a.rfind("--json=", 0) == 0) opt.json_path = a.substr(7);
    else if (a == "--no-isolate") opt.isolate = false;
    else if (a == "--isolate") opt.isolate = true;
    else if (a == "--dump") opt.dump = true;
    else if (a == "--reference") opt.reference = true;
    else if (a == "--child-timeout") opt.child_timeout_s = std::atof(value("--child-timeout").c_str());
    else if (a == "--child-workload") opt.child_workload = value("--child-workload");
    else if (a == "--first-call-child") opt.first_call_child = true;
    else if (a == "--list") list = true;
    else if (a == "-h" || a == "--help") {
      usage();
      return 0;
    } else {
      std::fprintf(stderr, "cufuse-bench: unknown option %s\n", a.c_str());
      usage();
      return 2;
    }
  }
  opt.self_exe = self_exe(argv[0]);
  if (opt.reference) setenv("CUFUSE_BACKEND", "reference", 1);  // before cufuse reads it; children inherit it
  if (opt.first_call_child) return first_call_child_main(opt);

  Registry reg;
  add_elementwise_workloads(reg);
  add_reduction_workloads(reg);
  add_overhead_workloads(reg);
  add_first_call_workloads(reg);
  add_library_workloads(reg);
  add_signal_workloads(reg);
  add_stream_workloads(reg);
  add_loop_workloads(reg);
  add_manipulation_workloads(reg);
  add_indexing_workloads(reg);
  add_statistics_workloads(reg);
  add_sorting_workloads(reg);
  add_fft_workloads(reg);
  add_cold_start_workloads(reg);
  add_tiered_workloads(reg);  // (wraps W1..W4: after them)
  add_dist_workloads(reg);

  if (list) {
    for (const auto& id : all_workload_ids()) {
      auto it = std::find_if(reg.begin(), reg.end(), [&](const Workload& w) { return w.id == id; });
      if (it != reg.end()) std::printf("%-4s %-9s %s\n", id.c_str(), floor_kind_name(it->floor), it->description.c_str());
      else std::printf("%-4s (not in cufuse-bench yet; peers.py runs it)\n", id.c_str());
    }
    return 0;
  }

  // Which workloads.
  std::vector<const Workload*> chosen;
  if (opt.only.empty()) {
    for (const auto& w : reg) chosen.push_back(&w);
  } else {
    for (const auto& id : opt.only) {
      auto it = std::find_if(reg.begin(), reg.end(), [&](const Workload& w) { return w.id == id; });
      if (it != reg.end()) chosen.push_back(&*it);
      else if (std::find(all_workload_ids().begin(), all_workload_ids().end(), id) != all_workload_ids().end())
        std::printf("%s: not in cufuse-bench yet (the library does not support it); skipped\n", id.c_str());
      else {
        std::fprintf(stderr, "cufuse-bench: unknown workload %s (see --list)\n", id.c_str());
        return 2;
      }
    }
  }

  Options child_opt = opt;
  Floors floors;
  Ctx ctx{child_opt, floors};
  if (!opt.child_workload.empty()) {  // a child: one workload, its record on stdout
    auto it = std::find_if(reg.begin(), reg.end(), [&](const Workload& w) { return w.id == opt.child_workload; });
    if (it == reg.end()) {
      std::fprintf(stderr, "cufuse-bench: unknown workload %s\n", opt.child_workload.c_str());
      return 2;
    }
    Record r = run_workload(ctx, *it);
    std::printf("@@record %s\n@@row %s\n", r.to_json().c_str(), r.to_row().c_str());
    std::fflush(stdout);
    return 0;
  }

  // The device, or plainly none.
  Header h;
  int count = 0;
  cudaError_t e = cudaGetDeviceCount(&count);
  if (opt.reference) {
    h.device = "none (reference backend: figures mean nothing)";
  } else if (e != cudaSuccess || count == 0) {
    h.no_device = e != cudaSuccess ? std::string(cudaGetErrorName(e)) + ": " + cudaGetErrorString(e)
                                   : "the CUDA runtime found no device";
    std::printf("cufuse-bench: no CUDA device (%s); nothing measured.\n", h.no_device.c_str());
    try {
      std::printf("W1's plan on this machine (no launch):\n%s\n", elementwise_plan_dump().c_str());
    } catch (const std::exception& ex) {
      std::printf("(W1's plan is not available: %s)\n", ex.what());
    }
    write_json(opt, h, {});
    return 0;
  }
  cudaDeviceProp prop{};
  if (!opt.reference && cudaGetDeviceProperties(&prop, 0) == cudaSuccess) {
    h.device = prop.name;
    h.cc = prop.major * 10 + prop.minor;
  }
  const bool not_cuda = cufuse::current_backend() != cufuse::Backend::Cuda;  // CUFUSE_BACKEND, as parsed
  std::printf("cufuse-bench on %s (sm_%d)%s%s%s\n", h.device.c_str(), h.cc, opt.quick ? ", quick" : "",
              opt.isolate ? ", one process per workload" : "",
              not_cuda ? ", WARNING: CUFUSE_BACKEND is not cuda" : "");
  std::fflush(stdout);

  std::vector<std::string> records, rows;
  int not_ok = 0;
  write_json(opt, h, records);
  for (const Workload* w : chosen) {
    std::string json, row;
    if (opt.isolate) {
      run_isolated(opt, *w, json, row);
    } else {
      Record r = run_workload(ctx, *w);
      json = r.to_json();
      row = r.to_row();
    }
    if (json.find("\"status\":\"ok\"") == std::string::npos) ++not_ok;
    records.push_back(json);
    rows.push_back(row);
    std::printf("%s\n", row.c_str());
    std::fflush(stdout);
    write_json(opt, h, records);
  }

  add_interp_ratios(records, rows);  // W1-interp .. W4-interp against W1 .. W4 of this run
  write_json(opt, h, records);
  std::printf("\n%s\n", table_header().c_str());
  for (const auto& row : rows) std::printf("%s\n", row.c_str());
  if (!opt.json_path.empty()) std::printf("JSON: %s\n", opt.json_path.c_str());
  if (not_ok) std::printf("%d workload(s) not ok (error, crash, timeout or failed check)\n", not_ok);
  return not_ok ? 3 : 0;
}

}  // namespace
}  // namespace bench


int main(int argc, char** argv) {
  // A crashing child (one workload, or a fresh first-call process) prints where it crashed on
  // stderr before it dies, so the parent's "killed by signal" row can be traced.
  cufuse::detail::install_crash_backtrace("cufuse-bench");
  try {
    return bench::run(argc, argv);
  } catch (const std::exception& e) {
    std::fprintf(stderr, "cufuse-bench: %s\n", e.what());
    return 1;
  }
}
