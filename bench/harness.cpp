// bench/harness.cpp: records (table row and JSON), timing by WORKLOADS.md's rules,
// sampled result checks, and running one workload without letting it throw.
#include "harness.hpp"

#include <algorithm>
#include <chrono>
#include <cstdarg>
#include <cstdio>
#include <random>
#include <stdexcept>

#include <cuda_runtime.h>

#include "cufuse/backend.hpp"
#include "cufuse/creation.hpp"
#include "cufuse/error.hpp"
#include "cufuse/eval.hpp"
#include "exec/tiered.hpp"

namespace bench {

// ------------------------------------------------------------------ text
std::string strf(const char* fmt, ...) {
  va_list ap, ap2;
  va_start(ap, fmt);
  va_copy(ap2, ap);
  int n = std::vsnprintf(nullptr, 0, fmt, ap);
  va_end(ap);
  std::string s(n > 0 ? size_t(n) : 0, '\0');
  if (n > 0) std::vsnprintf(s.data(), s.size() + 1, fmt, ap2);
  va_end(ap2);
  return s;
}

std::string json_escape(const std::string& s) {
  std::string o;
  o.reserve(s.size() + 8);
  for (unsigned char c : s) {
    switch (c) {
      case '"': o += "\\\""; break;
      case '\\': o += "\\\\"; break;
      case '\n': o += "\\n"; break;
      case '\r': o += "\\r"; break;
      case '\t': o += "\\t"; break;
      default:
        if (c < 0x20) o += strf("\\u%04x", c);
        else o += char(c);
    }
  }
  return o;
}

namespace {
std::string jnum(double v) {
  if (!std::isfinite(v)) return "null";
  return strf("%.6g", v);
}
std::string jstr(const std::string& s) { return "\"" + json_escape(s) + "\""; }
std::string jarr(const std::vector<double>& v) {
  std::string o = "[";
  for (size_t i = 0; i < v.size(); ++i) o += (i ? "," : "") + jnum(v[i]);
  return o + "]";
}
std::string fmt_time(double ms, const std::string& unit) {
  if (!std::isfinite(ms)) return "-";
  if (unit == "us") return strf("%.2f us", ms * 1e3);
  if (ms >= 100) return strf("%.1f ms", ms);
  if (ms >= 1) return strf("%.2f ms", ms);
  return strf("%.3f ms", ms);
}
}  // namespace

const char* floor_kind_name(FloorKind k) {
  switch (k) {
    case FloorKind::Bandwidth: return "bandwidth";
    case FloorKind::Launch: return "launch";
    case FloorKind::Gemm: return "gemm";
    case FloorKind::Compile: return "compile";
    case FloorKind::None: return "none";
  }
  return "none";
}

void Record::set_time(double ms) {
  time_ms = ms;
  if (std::isfinite(bytes) && ms > 0) gbs = bytes / (ms * 1e-3) / 1e9;
  if (std::isfinite(flops) && ms > 0) tflops = flops / (ms * 1e-3) / 1e12;
  if (std::isfinite(floor_ms) && ms > 0) pct_of_floor = floor_ms / ms * 100.0;
}

std::string Record::to_json() const {
  std::string o = "{";
  o += "\"id\":" + jstr(id);
  o += ",\"description\":" + jstr(description);
  o += ",\"floor_kind\":" + jstr(floor_kind_name(floor_kind));
  o += ",\"status\":" + jstr(status);
  o += ",\"unit\":" + jstr(unit);
  o += ",\"time_ms\":" + jnum(time_ms);
  o += ",\"time_us\":" + jnum(time_ms * 1e3);
  o += ",\"gbs\":" + jnum(gbs);
  o += ",\"tflops\":" + jnum(tflops);
  o += ",\"floor_ms\":" + jnum(floor_ms);
  o += ",\"pct_of_floor\":" + jnum(pct_of_floor);
  o += ",\"bytes\":" + jnum(bytes);
  o += ",\"flops\":" + jnum(flops);
  o += ",\"bandwidth_gbs\":" + jnum(bandwidth_gbs);
  o += ",\"launch_us\":" + jnum(launch_us);
  o += ",\"nvrtc_ms\":" + jnum(nvrtc_ms);
  o += ",\"kernels_per_call\":" + jnum(kernels_per_call);
  o += ",\"reps\":" + std::to_string(reps);
  o += ",\"batches\":" + std::to_string(batches);
  o += ",\"batch_ms\":" + jarr(batch_ms);
  o += ",\"parts\":[";
  for (size_t i = 0; i < parts.size(); ++i) {
    const Part& p = parts[i];
    o += (i ? "," : "");
    o += "{\"label\":" + jstr(p.label) + ",\"time_ms\":" + jnum(p.time_ms) +
         ",\"floor_ms\":" + jnum(p.floor_ms) + ",\"batch_ms\":" + jarr(p.batch_ms) +
         ",\"notes\":" + jstr(p.notes) + "}";
  }
  o += "]";
  o += ",\"check\":{\"done\":" + std::string(check.done ? "true" : "false") +
       ",\"ok\":" + std::string(check.ok ? "true" : "false") + ",\"detail\":" + jstr(check.detail) + "}";
  o += ",\"notes\":" + jstr(notes);
  return o + "}";
}

std::string table_header() {
  return strf("%-5s %-21s %-11s %-11s %-7s %-7s %-6s %s", "id", "time", "rate", "floor", "%floor",
              "kern", "check", "status / notes");
}

std::string Record::to_row() const {
  std::string t;
  if (parts.size() > 1) {
    for (size_t i = 0; i < parts.size(); ++i) t += (i ? " / " : "") + fmt_time(parts[i].time_ms, unit);
  } else {
    t = fmt_time(time_ms, unit);
  }
  std::string rate = std::isfinite(tflops) ? strf("%.1f TF/s", tflops)
                     : std::isfinite(gbs)  ? strf("%.0f GB/s", gbs)
                                           : "-";
  std::string fl = fmt_time(floor_ms, unit);
  std::string pct = std::isfinite(pct_of_floor) ? strf("%.1f%%", pct_of_floor) : "-";
  std::string kern = std::isfinite(kernels_per_call) ? strf("%.0f", kernels_per_call) : "-";
  std::string chk = !check.done ? "-" : check.ok ? "ok" : "FAIL";
  std::string tail = status;
  if (!notes.empty()) tail += ": " + notes;
  if (check.done && !check.ok) tail += " [" + check.detail + "]";
  if (tail.size() > 160) tail = tail.substr(0, 157) + "...";
  return strf("%-5s %-21s %-11s %-11s %-7s %-7s %-6s %s", id.c_str(), t.c_str(), rate.c_str(), fl.c_str(),
              pct.c_str(), kern.c_str(), chk.c_str(), tail.c_str());
}

// ------------------------------------------------------------------ running one workload
Record run_workload(Ctx& ctx, const Workload& w) {
  Record r;
  const size_t floor_notes_before = ctx.floors.notes.size();
  r.id = w.id;
  r.description = w.description;
  r.floor_kind = w.floor;
  try {
    w.run(ctx, r);
    if (r.check.done && !r.check.ok && r.status == "ok") r.status = "check-failed";
  } catch (const cufuse::Error& e) {
    r.status = "error";
    r.notes += (r.notes.empty() ? "" : "; ") + std::string("cufuse::Error: ") + e.what();
  } catch (const std::exception& e) {
    r.status = "error";
    r.notes += (r.notes.empty() ? "" : "; ") + std::string(e.what());
  }
  if (ctx.floors.notes.size() > floor_notes_before) {
    std::string extra = ctx.floors.notes.substr(floor_notes_before);
    if (extra.rfind("; ", 0) == 0) extra = extra.substr(2);
    r.notes += (r.notes.empty() ? "" : "; ") + extra;
  }
  return r;
}

// ------------------------------------------------------------------ timing
double now_ms() {
  using namespace std::chrono;
  return duration<double, std::milli>(steady_clock::now().time_since_epoch()).count();
}

void device_sync() {
  if (cufuse::current_backend() == cufuse::Backend::Reference) return;
  cudaError_t e = cudaDeviceSynchronize();
  if (e != cudaSuccess)
    throw std::runtime_error(std::string("cudaDeviceSynchronize: ") + cudaGetErrorString(e));
}

double median(std::vector<double> v) {
  if (v.empty()) return kNaN;
  std::sort(v.begin(), v.end());
  size_t n = v.size();
  return n % 2 ? v[n / 2] : 0.5 * (v[n / 2 - 1] + v[n / 2]);
}

namespace {

// Warm-up, then `reps` per batch (picked from the fastest of 3 calls of the first when 0),
// then `batches` rounds in which each call runs one batch, the order alternating per round.
std::vector<Timing> time_rounds(const Ctx& ctx, const std::vector<const std::function<void()>*>& calls, int reps) {
  const bool quick = ctx.opt.quick;
  const int warmup = quick ? 2 : 5;
  const int batches = quick ? 5 : 15;
  const double target_ms = quick ? 20 : 100;
  const int max_reps = quick ? 200 : 1000;
  for (const auto* c : calls)
    for (int i = 0; i < warmup; ++i) (*c)();
  // Tiered first calls (issue 35): warm-up may have run on the interpreter while the kernels
  // compiled in the background; wait for them, then one more call each swaps them in.
  cufuse::detail::wait_for_background_compiles();
  for (const auto* c : calls) (*c)();
  device_sync();
  if (reps <= 0) {
    double est = 1e30;
    for (int i = 0; i < 3; ++i) {
      double t0 = now_ms();
      (*calls[0])();
      device_sync();
      est = std::min(est, now_ms() - t0);
    }
    reps = int(std::clamp(target_ms / std::max(est, 1e-3), 1.0, double(max_reps)));
  }
  std::vector<Timing> t(calls.size());
  for (auto& x : t) {
    x.reps = reps;
    x.batches = batches;
  }
  for (int b = 0; b < batches; ++b) {
    for (size_t k = 0; k < calls.size(); ++k) {
      const size_t c = b % 2 ? calls.size() - 1 - k : k;
      double t0 = now_ms();
      for (int i = 0; i < reps; ++i) (*calls[c])();
      device_sync();
      t[c].batch_ms.push_back((now_ms() - t0) / reps);
    }
  }
  for (auto& x : t) x.median_ms = median(x.batch_ms);
  return t;
}

}  // namespace

Timing time_batches(const Ctx& ctx, const std::function<void()>& call, int reps) {
  return time_rounds(ctx, {&call}, reps)[0];
}

std::pair<Timing, Timing> time_interleaved(const Ctx& ctx, const std::function<void()>& a,
                                           const std::function<void()>& b, int reps) {
  auto t = time_rounds(ctx, {&a, &b}, reps);
  return {t[0], t[1]};
}

Timing time_loop(const Ctx& ctx, const std::function<void()>& call) {
  const bool quick = ctx.opt.quick;
  const int calls = quick ? 2000 : 10000;
  const int loops = quick ? 5 : 11;
  for (int i = 0; i < 200; ++i) call();
  device_sync();
  Timing t;
  t.reps = calls;
  t.batches = loops;
  for (int b = 0; b < loops; ++b) {
    double t0 = now_ms();
    for (int i = 0; i < calls; ++i) call();
    device_sync();
    t.batch_ms.push_back((now_ms() - t0) / calls);
  }
  t.median_ms = median(t.batch_ms);
  return t;
}

void apply_timing(Record& r, const Timing& t) {
  r.reps = t.reps;
  r.batches = t.batches;
  r.batch_ms = t.batch_ms;
  r.set_time(t.median_ms);
}

void set_bandwidth_floor(Ctx& ctx, Record& r, double bytes) {
  r.bytes = bytes;
  r.bandwidth_gbs = ctx.floors.copy_bandwidth_gbs();
  if (std::isfinite(r.bandwidth_gbs)) r.floor_ms = bytes / (r.bandwidth_gbs * 1e9) * 1e3;
}

double kernels_per_call(const std::function<void()>& call) {
  device_sync();
  uint64_t before = cufuse::stats().kernels_launched;
  call();
  device_sync();
  return double(cufuse::stats().kernels_launched - before);
}

// ------------------------------------------------------------------ checks
namespace {
template <class T>
Check check_sample_of(const std::vector<T>& got, const std::function<double(size_t)>& want, double rtol,
                      double atol, size_t max_samples) {
  Check c;
  c.done = true;
  const size_t n = got.size();
  if (n == 0) {
    c.ok = false;
    c.detail = "empty result";
    return c;
  }
  size_t stride = std::max<size_t>(1, n / std::max<size_t>(1, max_samples));
  // An odd stride walks through all residues of power-of-two tilings (vector lanes, blocks).
  if (stride > 1 && stride % 2 == 0) stride += 1;
  size_t checked = 0, bad = 0, first_bad = 0;
  double max_err = 0, worst_got = 0, worst_want = 0;
  auto visit = [&](size_t i) {
    double w = want(i), g = got[i];
    double err = std::fabs(g - w);
    bool ok = std::isfinite(g) == std::isfinite(w) && (!std::isfinite(w) ? g == w : err <= atol + rtol * std::fabs(w));
    ++checked;
    if (!ok) {
      if (bad == 0) {
        first_bad = i;
        worst_got = g;
        worst_want = w;
      }
      ++bad;
    }
    if (std::isfinite(err)) max_err = std::max(max_err, err);
  };
  for (size_t i = 0; i < n; i += stride) visit(i);
  if ((n - 1) % stride != 0) visit(n - 1);
  c.ok = bad == 0;
  if (c.ok)
    c.detail = strf("%zu of %zu elements match (max abs err %.3g)", checked, n, max_err);
  else
    c.detail = strf("%zu of %zu sampled elements differ; first at [%zu]: got %.9g, want %.9g", bad, checked,
                    first_bad, worst_got, worst_want);
  return c;
}
}  // namespace

Check check_sample(const std::vector<float>& got, const std::function<double(size_t)>& want, double rtol,
                   double atol, size_t max_samples) {
  return check_sample_of(got, want, rtol, atol, max_samples);
}

Check check_sample(const std::vector<double>& got, const std::function<double(size_t)>& want, double rtol,
                   double atol, size_t max_samples) {
  return check_sample_of(got, want, rtol, atol, max_samples);
}

void add_check(Record& r, const Check& c, const std::string& label) {
  r.check.done = true;
  const bool first = r.check.detail.empty();
  r.check.ok = (first || r.check.ok) && c.ok;
  r.check.detail += (first ? "" : "; ") + label + ": " + c.detail;
}

std::vector<float> host_normal(size_t n, uint64_t seed) {
  std::mt19937_64 g(seed);
  std::normal_distribution<float> d(0.0f, 1.0f);
  std::vector<float> v(n);
  for (auto& x : v) x = d(g);
  return v;
}

std::vector<float> to_host_f32(const cufuse::Array& a) {
  if (a.dtype() != cufuse::f32)
    throw std::runtime_error("expected a float32 result, got " + std::string(cufuse::name(a.dtype())));
  std::vector<float> v(static_cast<size_t>(a.size()));
  a.copy_to_host(v.data(), v.size() * sizeof(float));
  return v;
}

cufuse::Array from_host_f32(const std::vector<float>& v) {
  return cufuse::from_host(v.data(), cufuse::f32, cufuse::Shape{static_cast<int64_t>(v.size())});
}

}  // namespace bench
