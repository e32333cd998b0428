// cufuse/profiler.hpp: cufuse::profiler::benchmark, as cupyx.profiler.benchmark does it:
// n_warmup calls, then n_repeat calls each timed on the host (steady clock around the call)
// and on every device asked for (an event recorded on its current stream before and after
// the call, synchronized each repetition). Printing a result gives CuPy's line:
//   sqdiff              :    CPU:    13.713 us   +/-  1.001 (min:    12.743 / max:    15.499) us     GPU-0:    18.432 us   +/-  1.832 (min:    16.384 / max:    22.528) us
#pragma once
#include <functional>
#include <iosfwd>
#include <limits>
#include <string>
#include <vector>

namespace cufuse::profiler {

struct BenchmarkResult {
  std::string name;
  std::vector<double> cpu_times;               // seconds, per repetition
  std::vector<int> devices;                    // the devices timed
  std::vector<std::vector<double>> gpu_times;  // seconds, per device, per repetition

  // CuPy's format; without GPU columns when show_gpu is false.
  std::string to_str(bool show_gpu = true) const;
  std::string str() const { return to_str(); }
  // Mean seconds per call: on the host, and on the i-th device timed (NaN without repetitions).
  double cpu_mean() const;
  double gpu_mean(size_t i = 0) const;
};
std::ostream& operator<<(std::ostream& os, const BenchmarkResult& r);

// Times f. devices: which to time (empty: the current device); max_duration: stop repeating
// once this many seconds have passed (CuPy's max_duration). Needs a CUDA device.
BenchmarkResult benchmark(const std::function<void()>& f, int n_repeat = 10000, int n_warmup = 10,
                          const std::string& name = "function", std::vector<int> devices = {},
                          double max_duration = std::numeric_limits<double>::infinity());

}  // namespace cufuse::profiler
