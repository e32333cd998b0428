// examples/black_scholes.cpp: CuPy's examples/finance/black_scholes.py in C++. Prices 10M
// European options (call and put, float64) with the Black-Scholes formula written as plain
// array statements, as the example's "naive implementation" does; cufuse's lazy evaluation
// runs them as one fused kernel (the bench's W15). Checks every price against the same
// statements on the host, as the example checks CuPy against NumPy, and prints the time and
// the kernels. With no GPU: 20,000 options on the host reference backend.
//
//   black_scholes [n_options]
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <optional>
#include <utility>
#include <vector>

#include <cufuse/cufuse.hpp>

namespace cf = cufuse;

// The example's get_cumulative_normal_distribution, for cufuse arrays.
static cf::Array cnd(const cf::Array& x) {
  const double A1 = 0.31938153, A2 = -0.356563782, A3 = 1.781477937, A4 = -1.821255978, A5 = 1.330274429;
  const double RSQRT2PI = 0.39894228040143267793994605993438, W = 0.2316419;
  const cf::Array k = 1 / (1 + W * cf::abs(x));
  const cf::Array c = RSQRT2PI * cf::exp(-x * x / 2) * (k * (A1 + k * (A2 + k * (A3 + k * (A4 + k * A5)))));
  return cf::where(x > 0, 1 - c, c);
}

// The example's black_scholes(xp, s, x, t, r, v): nothing runs until the prices are needed.
static std::pair<cf::Array, cf::Array> black_scholes(const cf::Array& s, const cf::Array& x, const cf::Array& t,
                                                     double r, double v) {
  const cf::Array sqrt_t = cf::sqrt(t);
  const cf::Array d1 = (cf::log(s / x) + (r + v * v / 2) * t) / (v * sqrt_t);
  const cf::Array d2 = d1 - v * sqrt_t;
  const cf::Array cnd_d1 = cnd(d1), cnd_d2 = cnd(d2);
  const cf::Array exp_rt = cf::exp(-r * t);
  return {s * cnd_d1 - x * exp_rt * cnd_d2, x * exp_rt * (1 - cnd_d2) - s * (1 - cnd_d1)};
}

// The same statements for one option on the host (the example's NumPy run).
static std::pair<double, double> black_scholes_host(double s, double x, double t, double r, double v) {
  auto cnd_host = [](double z) {
    const double k = 1 / (1 + 0.2316419 * std::fabs(z));
    const double c = 0.39894228040143267793994605993438 * std::exp(-z * z / 2) *
                     (k * (0.31938153 + k * (-0.356563782 + k * (1.781477937 + k * (-1.821255978 + k * 1.330274429)))));
    return z > 0 ? 1 - c : c;
  };
  const double sqrt_t = std::sqrt(t);
  const double d1 = (std::log(s / x) + (r + v * v / 2) * t) / (v * sqrt_t);
  const double d2 = d1 - v * sqrt_t;
  const double exp_rt = std::exp(-r * t);
  return {s * cnd_host(d1) - x * exp_rt * cnd_host(d2), x * exp_rt * (1 - cnd_host(d2)) - s * (1 - cnd_host(d1))};
}

int main(int argc, char** argv) {
  const bool gpu = cf::Device::available();
  std::optional<cf::BackendScope> host;
  if (gpu) {
    const auto dev = cf::Device::current();
    std::printf("CuPy's black_scholes.py on %s (sm_%d)\n", dev.name().c_str(), dev.compute_capability());
  } else {
    std::printf("No CUDA device here (%s).\n", cf::Device::unavailable_reason().c_str());
    std::printf("Pricing a few options on the host reference backend instead (timings mean nothing).\n");
    host.emplace(cf::Backend::Reference);
  }
  const int64_t n = argc > 1 ? std::atoll(argv[1]) : (gpu ? 10000000 : 20000);
  auto sync = [&] {
    if (gpu) cf::Device::current().synchronize();
  };
  try {
    // rand_range(m, M): m + (M - m) * rand(n), float64
    auto rand_range = [&](double m, double M, uint64_t seed) {
      return (m + (M - m) * cf::random::uniform({n}, cf::f64, seed)).eval();
    };
    const cf::Array stock_price = rand_range(5, 30, 1), option_strike = rand_range(1, 100, 2),
                    option_years = rand_range(0.25, 10, 3);
    const double risk_free = 0.02, volatility = 0.3;
    std::printf("%lld options\n", static_cast<long long>(n));

    sync();
    cf::reset_stats();
    auto t0 = std::chrono::steady_clock::now();
    auto [call, put] = black_scholes(stock_price, option_strike, option_years, risk_free, volatility);
    cf::eval(call, put);
    sync();
    const double first_ms = std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count();
    const cf::Stats st = cf::stats();
    std::printf(" first call (plans and compiles): %8.3f ms, %llu kernel(s), %llu compiled\n", first_ms,
                static_cast<unsigned long long>(st.kernels_launched),
                static_cast<unsigned long long>(st.kernels_compiled));

    const int reps = gpu ? 50 : 3;
    t0 = std::chrono::steady_clock::now();
    for (int i = 0; i < reps; ++i) {
      auto [c, p] = black_scholes(stock_price, option_strike, option_years, risk_free, volatility);
      cf::eval(c, p);
    }
    sync();
    const double ms = std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count() / reps;
    std::printf(" later calls:                     %8.3f ms each (%.0f GB/s of the %.0f MB that must move)\n", ms,
                5.0 * 8 * double(n) / (ms * 1e-3) / 1e9, 5.0 * 8 * double(n) / 1e6);

    // Check every price against the host, as the example's assert_allclose does.
    const auto s = stock_price.to_host<double>(), x = option_strike.to_host<double>(), t = option_years.to_host<double>();
    const auto hc = call.to_host<double>(), hp = put.to_host<double>();
    size_t bad = 0;
    double max_err = 0;
    for (size_t i = 0; i < s.size(); ++i) {
      const auto [wc, wp] = black_scholes_host(s[i], x[i], t[i], risk_free, volatility);
      const double e = std::max(std::fabs(hc[i] - wc) / std::max(1.0, std::fabs(wc)),
                                std::fabs(hp[i] - wp) / std::max(1.0, std::fabs(wp)));
      max_err = std::max(max_err, e);
      bad += !(e <= 1e-9);
    }
    std::printf(" check against the host: %s (%zu of %zu options off, largest relative error %.3g)\n",
                bad ? "MISMATCH" : "ok", bad, s.size(), max_err);
    std::printf(" option 0: stock %.4f, strike %.4f, years %.4f -> call %.6f, put %.6f\n", s[0], x[0], t[0], hc[0],
                hp[0]);
    return bad ? 1 : 0;
  } catch (const cf::Error& e) {
    std::printf("cufuse error: %s\n", e.what());
    return 1;
  }
}
