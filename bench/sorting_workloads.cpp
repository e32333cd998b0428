// bench/sorting_workloads.cpp: issue 33's sorting workloads (peers: bench/peers_sort.py).
//   SR1  sort(x), x f32[2^26]: the sort node (CUB's one-sweep radix sort of the floats themselves,
//        reading x and writing the result; CUB maps the bits to keys with NumPy's NaN order).
//   SR2  sort(x, axis=1), x f32[8192, 8192]: 8192 rows of 8192, one segmented sort.
//   SR3  argsort(x), x f32[2^26] (int64 indices; CUB sorts int32 ones, widened after).
//   SR4  argsort(x, axis=1), x f32[8192, 8192].
//   SR5  unique(v), v int32[2^26] with 2^16 distinct values: counted, not sorted (its range is
//        narrower than its length): min and max read back, a scatter-add into the counters,
//        flatnonzero of them (one count read back), the values from their positions.
//   SR6  median(x, axis=1), x f32[8192, 8192]: a segmented sort, then the middle two per row.
// Floors: reading the input and writing the result once (a sort moves the data several times:
// these floors are far below what any radix sort reaches; the peers are the measure).
#include <algorithm>
#include <cmath>
#include <cstdio>

#include "cufuse/array.hpp"
#include "cufuse/creation.hpp"
#include "cufuse/eval.hpp"
#include "cufuse/indexing.hpp"
#include "cufuse/ops.hpp"
#include "cufuse/random.hpp"
#include "cufuse/sorting.hpp"
#include "harness.hpp"

namespace cf = cufuse;

namespace bench {
namespace {

constexpr int64_t kN = int64_t(1) << 26;
constexpr int64_t kRows = 8192, kCols = 8192;
constexpr int64_t kDistinct = int64_t(1) << 16;

// Sortedness of a sample of rows (or the whole vector) and, for argsort, that the indices read
// back the sorted values.
Check check_sorted_rows(const std::vector<float>& s, int64_t rows, int64_t cols) {
  for (int64_t r : {int64_t(0), rows / 2, rows - 1})
    for (int64_t c = 1; c < cols; ++c)
      if (s[static_cast<size_t>(r * cols + c - 1)] > s[static_cast<size_t>(r * cols + c)])
        return Check{true, false, strf("row %lld not sorted at %lld", (long long)r, (long long)c)};
  return Check{true, true, "sampled rows sorted"};
}

void run_sort(Ctx& ctx, Record& r, bool rows, bool arg) {
  const cf::Shape shape = rows ? cf::Shape{kRows, kCols} : cf::Shape{kN};
  set_bandwidth_floor(ctx, r, double(kN) * 4 + double(kN) * (arg ? 8 : 4));
  cf::Array x = cf::random::normal(shape, cf::f32, rows ? 41 : 42);
  x.eval();
  const int64_t nr = rows ? kRows : 1, nc = rows ? kCols : kN;
  auto op = [&] { return arg ? cf::argsort(x, -1) : cf::sort(x, -1); };
  {
    cf::Array y = op();
    if (arg) {
      cf::Array v = cf::take_along_axis(x, y, x.ndim() - 1);
      r.check = check_sorted_rows(to_host_f32(v), nr, nc);
    } else {
      r.check = check_sorted_rows(to_host_f32(y), nr, nc);
    }
  }
  auto call = [&] {
    cf::Array y = op();
    y.eval();
  };
  r.kernels_per_call = kernels_per_call(call);
  apply_timing(r, time_batches(ctx, call));
  r.notes = rows ? (arg ? "key + int32 iota kernel, CUB segmented sort of (key, int32 index) pairs, widening kernel"
                        : "key kernel, CUB segmented sort, store kernel")
                 : (arg ? "int32 iota kernel, CUB radix sort of (element, int32 index) pairs, widening kernel"
                        : "CUB radix sort of the elements");
}

void run_sr5(Ctx& ctx, Record& r) {
  set_bandwidth_floor(ctx, r, double(kN) * 4 + double(kDistinct) * 4);
  cf::Array v = cf::astype(cf::floor(cf::random::uniform({kN}, cf::f64, 51) * double(kDistinct)), cf::i32);
  v.eval();
  {
    cf::Array u = cf::unique_values(v);
    const std::vector<int64_t> hu = u.astype(cf::i64).to_host<int64_t>();
    bool ok = static_cast<int64_t>(hu.size()) <= kDistinct && hu.size() > kDistinct * 9 / 10;
    for (size_t i = 1; i < hu.size() && ok; ++i) ok = hu[i - 1] < hu[i];
    r.check = Check{true, ok, strf("%zu distinct values, strictly increasing", hu.size())};
  }
  auto call = [&] {
    cf::Array u = cf::unique_values(v);
    u.eval();
  };
  r.kernels_per_call = kernels_per_call(call);
  apply_timing(r, time_batches(ctx, call));
  r.notes = "counted: min/max read back, one scatter-add into 2^16 counters, flatnonzero of them (count read back)";
}

void run_sr6(Ctx& ctx, Record& r) {
  set_bandwidth_floor(ctx, r, double(kN) * 4 + double(kRows) * 4);
  cf::Array x = cf::random::normal({kRows, kCols}, cf::f32, 61);
  x.eval();
  {
    cf::Array m = cf::median(x, 1);
    const std::vector<float> hm = to_host_f32(m);
    std::vector<float> row = to_host_f32(x.index({0}));
    std::sort(row.begin(), row.end());
    const double want = (double(row[kCols / 2 - 1]) + double(row[kCols / 2])) / 2;
    r.check = check_sample(std::vector<float>{hm[0]}, [&](size_t) { return want; }, 1e-6, 0);
  }
  auto call = [&] {
    cf::Array m = cf::median(x, 1);
    m.eval();
  };
  r.kernels_per_call = kernels_per_call(call);
  apply_timing(r, time_batches(ctx, call));
  r.notes = "segmented sort of the rows, then one kernel for the middle two of each row";
}

}  // namespace

void add_sorting_workloads(Registry& r) {
  r.push_back({"SR1", "sort(x), x f32[2^26]", FloorKind::Bandwidth, [](Ctx& c, Record& x) { run_sort(c, x, false, false); }});
  r.push_back({"SR2", "sort(x, axis=1), x f32[8192,8192]", FloorKind::Bandwidth,
               [](Ctx& c, Record& x) { run_sort(c, x, true, false); }});
  r.push_back({"SR3", "argsort(x), x f32[2^26]", FloorKind::Bandwidth, [](Ctx& c, Record& x) { run_sort(c, x, false, true); }});
  r.push_back({"SR4", "argsort(x, axis=1), x f32[8192,8192]", FloorKind::Bandwidth,
               [](Ctx& c, Record& x) { run_sort(c, x, true, true); }});
  r.push_back({"SR5", "unique(v), v int32[2^26] with 2^16 distinct values", FloorKind::Bandwidth, run_sr5});
  r.push_back({"SR6", "median(x, axis=1), x f32[8192,8192]", FloorKind::Bandwidth, run_sr6});
}

}  // namespace bench
