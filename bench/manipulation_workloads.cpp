// bench/manipulation_workloads.cpp: issue 30's joining and padding workloads, each a lazy
// expression built and evaluated once per call (peers: bench/peers_manip.py):
//   M1  concatenate([x*2, exp(y)]), x, y f32[4096,4096]: one kernel selecting each element's part
//   M2  stack([x, y]), x, y f32[4096,4096]
//   M3  pad(x, 1, "reflect"), x f32[8192,8192]: an index map read by the copy kernel
// Floor: bytes that must move (each input read once, the result written once) / copy bandwidth.
#include <cmath>
#include <cstdio>

#include "cufuse/cufuse.hpp"
#include "harness.hpp"

namespace cf = cufuse;

namespace bench {
namespace {

constexpr int64_t kJoin = 4096, kPad = 8192;

// Rows r of `got` (a 2-D result) against want_row(r), in double.
template <class Want>
Check check_rows(const cf::Array& got, const std::vector<int64_t>& rows, Want&& want_row) {
  std::vector<float> g;
  std::vector<double> w;
  for (int64_t r : rows) {
    auto row = to_host_f32(got.index({r}));
    g.insert(g.end(), row.begin(), row.end());
    auto wr = want_row(r);
    w.insert(w.end(), wr.begin(), wr.end());
  }
  if (g.size() != w.size()) return Check{true, false, "row lengths differ"};
  return check_sample(g, [&](size_t i) { return w[i]; }, 1e-6, 1e-30);
}

std::vector<double> host_row(const cf::Array& a, int64_t r) {
  auto f = to_host_f32(a.index({r}));
  return std::vector<double>(f.begin(), f.end());
}

void run_join(Ctx& ctx, Record& r, bool stack) {
  const int64_t n = kJoin;
  set_bandwidth_floor(ctx, r, 4.0 * double(n * n) * 4.0);  // read x and y, write twice their size
  cf::Array x = cf::random::normal({n, n}, cf::f32, 1), y = cf::random::normal({n, n}, cf::f32, 2);
  cf::eval(x, y);
  auto expr = [&] { return stack ? cf::stack({x, y}) : cf::concatenate({x * 2, cf::exp(y)}); };
  if (ctx.opt.dump) std::fprintf(stderr, "--- %s plan\n%s\n", r.id.c_str(), cf::plan_dump({expr()}).c_str());
  {
    cf::Array out = expr();
    out.eval();
    const cf::Array flat = out.reshape({2 * n, n});
    r.check = check_rows(flat, {0, n / 2, n - 1, n, n + 1, 2 * n - 1}, [&](int64_t row) {
      auto v = host_row(row < n ? x : y, row % n);
      if (!stack)
        for (auto& e : v) e = row < n ? e * 2 : std::exp(e);
      return v;
    });
  }
  auto call = [&] {
    cf::Array out = expr();
    out.eval();
  };
  r.kernels_per_call = kernels_per_call(call);
  apply_timing(r, time_batches(ctx, call));
  r.notes = stack ? "one kernel: each element reads the part its coordinate falls in"
                  : "one kernel: each part's expression inline, selected by the row coordinate";
}

void run_pad(Ctx& ctx, Record& r) {
  const int64_t n = kPad;
  set_bandwidth_floor(ctx, r, (double(n * n) + double((n + 2) * (n + 2))) * 4.0);
  cf::Array x = cf::random::normal({n, n}, cf::f32, 3);
  x.eval();
  auto expr = [&] { return cf::pad(x, 1, "reflect"); };
  if (ctx.opt.dump) std::fprintf(stderr, "--- M3 plan\n%s\n", cf::plan_dump({expr()}).c_str());
  {
    cf::Array out = expr();
    out.eval();
    r.check = check_rows(out, {0, 1, 2, n / 2, n, n + 1}, [&](int64_t row) {
      const int64_t src = row == 0 ? 1 : (row == n + 1 ? n - 2 : row - 1);  // reflect: no edge repeat
      auto v = host_row(x, src);
      std::vector<double> p{v[1]};
      p.insert(p.end(), v.begin(), v.end());
      p.push_back(v[static_cast<size_t>(n - 2)]);
      return p;
    });
  }
  auto call = [&] {
    cf::Array out = expr();
    out.eval();
  };
  r.kernels_per_call = kernels_per_call(call);
  apply_timing(r, time_batches(ctx, call));
  r.notes = "an index map (reflect) read by one copy kernel";
}

}  // namespace

void add_manipulation_workloads(Registry& r) {
  r.push_back({"M1", "concatenate([x*2, exp(y)]), x,y f32[4096,4096]", FloorKind::Bandwidth,
               [](Ctx& c, Record& rec) { run_join(c, rec, false); }});
  r.push_back({"M2", "stack([x, y]), x,y f32[4096,4096]", FloorKind::Bandwidth,
               [](Ctx& c, Record& rec) { run_join(c, rec, true); }});
  r.push_back({"M3", "pad(x, 1, 'reflect'), x f32[8192,8192]", FloorKind::Bandwidth, run_pad});
}

}  // namespace bench
