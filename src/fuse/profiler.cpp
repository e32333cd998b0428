// src/fuse/profiler.cpp: cufuse::profiler::benchmark (include/cufuse/profiler.hpp), following
// cupyx.profiler._time: warm-up, then per repetition an event on each device's current
// stream, the call timed by the host clock, a second event, both synchronized.
#include "cufuse/profiler.hpp"

#include <chrono>
#include <cmath>
#include <ostream>

#include <fmt/format.h>

#include "cufuse/error.hpp"
#include "cufuse/stream.hpp"

namespace cufuse::profiler {

namespace {

double mean_of(const std::vector<double>& t) {
  double sum = 0;
  for (double v : t) sum += v;
  return t.empty() ? std::nan("") : sum / static_cast<double>(t.size());
}

std::string per_item(const std::string& device_name, const std::vector<double>& t) {
  if (t.empty()) return fmt::format("    {}: (no repetitions)", device_name);
  double lo = t[0], hi = t[0];
  for (double v : t) {
    lo = std::min(lo, v);
    hi = std::max(hi, v);
  }
  const double mean = mean_of(t);
  double var = 0;
  for (double v : t) var += (v - mean) * (v - mean);
  const double sd = std::sqrt(var / static_cast<double>(t.size()));  // NumPy's std (ddof 0)
  std::string s = fmt::format("    {}: {:9.3f} us", device_name, mean * 1e6);
  if (t.size() > 1) s += fmt::format("   +/- {:6.3f} (min: {:9.3f} / max: {:9.3f}) us", sd * 1e6, lo * 1e6, hi * 1e6);
  return s;
}

}  // namespace

std::string BenchmarkResult::to_str(bool show_gpu) const {
  std::string s = per_item("CPU", cpu_times);
  if (show_gpu)
    for (size_t i = 0; i < devices.size() && i < gpu_times.size(); ++i)
      s += " " + per_item(fmt::format("GPU-{}", devices[i]), gpu_times[i]);
  return fmt::format("{:<20s}:{}", name, s);
}

double BenchmarkResult::cpu_mean() const { return mean_of(cpu_times); }
double BenchmarkResult::gpu_mean(size_t i) const { return i < gpu_times.size() ? mean_of(gpu_times[i]) : std::nan(""); }

std::ostream& operator<<(std::ostream& os, const BenchmarkResult& r) { return os << r.to_str(); }

BenchmarkResult benchmark(const std::function<void()>& f, int n_repeat, int n_warmup, const std::string& name,
                          std::vector<int> devices, double max_duration) {
  if (n_repeat < 1) throw ValueError(fmt::format("benchmark: n_repeat must be at least 1 (got {})", n_repeat));
  if (n_warmup < 0) throw ValueError(fmt::format("benchmark: n_warmup must not be negative (got {})", n_warmup));
  if (!Device::available()) throw NoDeviceError("benchmark needs a CUDA device: " + Device::unavailable_reason());
  if (devices.empty()) devices.push_back(Device::current().id());
  BenchmarkResult r;
  r.name = name;
  r.devices = devices;
  r.gpu_times.resize(devices.size());
  std::vector<Event> start, stop;
  for (size_t i = 0; i < devices.size(); ++i) {
    start.emplace_back(true);
    stop.emplace_back(true);
  }
  auto record = [&](std::vector<Event>& ev) {
    for (size_t i = 0; i < devices.size(); ++i) {
      DeviceScope d(devices[i]);
      ev[i].record(Stream::current());
    }
  };
  for (int i = 0; i < n_warmup; ++i) f();
  record(start);
  for (auto& e : start) e.synchronize();
  using clock = std::chrono::steady_clock;
  double duration = 0;
  for (int i = 0; i < n_repeat; ++i) {
    record(start);
    const auto t1 = clock::now();
    f();
    const auto t2 = clock::now();
    r.cpu_times.push_back(std::chrono::duration<double>(t2 - t1).count());
    record(stop);
    for (auto& e : stop) e.synchronize();
    for (size_t d = 0; d < devices.size(); ++d)
      r.gpu_times[d].push_back(static_cast<double>(Event::elapsed_ms(start[d], stop[d])) * 1e-3);
    duration += std::chrono::duration<double>(clock::now() - t1).count();
    if (duration > max_duration) break;
  }
  return r;
}

}  // namespace cufuse::profiler
