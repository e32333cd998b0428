// tests/test_manipulation_random.cpp: random integers, exponential, poisson, choice,
// permutation, shuffle and the Generator object on the host reference backend: ranges,
// dtypes, errors with NumPy's types, determinism by seed, statistical sanity (moments within
// several standard errors), permutations that are permutations, and that they fuse.
#include <algorithm>
#include <cmath>
#include <numeric>
#include <set>

#include "test_core_helpers.hpp"

#include "test_values.hpp"

namespace {
using test_values::f64;
double mean_of(const std::vector<double>& v) { return std::accumulate(v.begin(), v.end(), 0.0) / double(v.size()); }
double var_of(const std::vector<double>& v) {
  const double m = mean_of(v);
  double s = 0;
  for (double x : v) s += (x - m) * (x - m);
  return s / double(v.size());
}
bool is_permutation_of_n(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  for (size_t i = 0; i < v.size(); ++i)
    if (v[i] != double(i)) return false;
  return true;
}
}  // namespace

TEST_CASE("random::integers: range, dtypes, determinism, errors") {
  cf::BackendScope ref(cf::Backend::Reference);
  auto a = cf::random::integers(-3, 5, {20000}, cf::i64, 42);
  CHECK(a.dtype() == cf::i64);
  auto h = f64(a);
  CHECK(*std::min_element(h.begin(), h.end()) == -3);
  CHECK(*std::max_element(h.begin(), h.end()) == 4);
  CHECK(mean_of(h) == doctest::Approx(0.5).epsilon(0.05));
  CHECK(h == f64(cf::random::integers(-3, 5, {20000}, cf::i64, 42)));
  CHECK(h != f64(cf::random::integers(-3, 5, {20000}, cf::i64, 43)));
  for (auto t : {cf::i8, cf::i16, cf::i32, cf::u8, cf::u16, cf::u32, cf::u64, cf::bool_}) {
    auto r = cf::random::integers(0, 2, {1000}, t, 1);
    CHECK(r.dtype() == t);
    auto v = f64(r);
    CHECK(std::count(v.begin(), v.end(), 0.0) + std::count(v.begin(), v.end(), 1.0) == 1000);
    CHECK(std::count(v.begin(), v.end(), 1.0) > 400);
  }
  auto big = f64(cf::random::integers(INT64_MIN, INT64_MAX, {1000}, cf::i64, 5));
  CHECK(std::count_if(big.begin(), big.end(), [](double x) { return x < 0; }) > 400);
  CHECK_THROWS_AS(cf::random::integers(5, 5, {3}), cf::ValueError);
  CHECK_THROWS_AS(cf::random::integers(-1, 5, {3}, cf::u8), cf::ValueError);
  CHECK_THROWS_AS(cf::random::integers(0, 257, {3}, cf::u8), cf::ValueError);
  CHECK_NOTHROW(cf::random::integers(0, 256, {3}, cf::u8));
  CHECK_THROWS_AS(cf::random::integers(0, 5, {3}, cf::f32), cf::TypeError);
}

TEST_CASE("random::exponential and poisson: moments and errors") {
  cf::BackendScope ref(cf::Backend::Reference);
  const int n = 40000;
  auto e = f64(cf::random::exponential(2.0, {n}, cf::f64, 3));
  CHECK(*std::min_element(e.begin(), e.end()) >= 0);
  CHECK(mean_of(e) == doctest::Approx(2.0).epsilon(0.04));
  CHECK(var_of(e) == doctest::Approx(4.0).epsilon(0.1));
  CHECK(cf::random::exponential(1.0, {4}, cf::f32, 3).dtype() == cf::f32);
  CHECK_THROWS_AS(cf::random::exponential(-1.0, {4}), cf::ValueError);
  CHECK_THROWS_AS(cf::random::exponential(1.0, {4}, cf::i32), cf::TypeError);
  for (double lam : {0.5, 4.0, 25.0, 1000.0}) {
    auto p = f64(cf::random::poisson(lam, {n}, cf::i64, 11));
    CHECK(*std::min_element(p.begin(), p.end()) >= 0);
    CHECK(mean_of(p) == doctest::Approx(lam).epsilon(5 * std::sqrt(lam / n) / lam + 1e-3));
    CHECK(var_of(p) == doctest::Approx(lam).epsilon(0.06));
  }
  CHECK(f64(cf::random::poisson(0.0, {5}, cf::i32)) == std::vector<double>(5, 0.0));
  CHECK_THROWS_AS(cf::random::poisson(-1.0, {4}), cf::ValueError);
  CHECK_THROWS_AS(cf::random::poisson(1e30, {4}), cf::ValueError);
  CHECK_THROWS_AS(cf::random::poisson(1.0, {4}, cf::f64), cf::TypeError);
}

TEST_CASE("permutation, choice and shuffle are permutations, by seed") {
  cf::BackendScope ref(cf::Backend::Reference);
  for (int64_t n : {0, 1, 2, 3, 10, 1000, 4097}) {
    auto p = cf::random::permutation(n, 9);
    CHECK(p.dtype() == cf::i64);
    CHECK(is_permutation_of_n(f64(p)));
  }
  auto p = f64(cf::random::permutation(1000, 9));
  CHECK(p == f64(cf::random::permutation(1000, 9)));
  CHECK(p != f64(cf::random::permutation(1000, 10)));
  int fixed = 0;
  for (size_t i = 0; i < p.size(); ++i) fixed += p[i] == double(i);
  CHECK(fixed < 10);  // a random permutation fixes about one point
  // a permuted array is the array at the permutation's positions
  auto x = cf::arange(1000).astype(cf::f32) * 2;
  auto px = f64(cf::random::permutation(x, 9));
  for (size_t i = 0; i < px.size(); ++i) CHECK(px[i] == 2 * p[i]);
  auto rows = cf::arange(12).reshape({4, 3});
  auto pr = f64(cf::random::permutation(rows, 5));
  auto p4 = f64(cf::random::permutation(4, 5));
  for (int i = 0; i < 4; ++i)
    for (int j = 0; j < 3; ++j) CHECK(pr[i * 3 + j] == p4[i] * 3 + j);
  auto c = f64(cf::random::choice(50, {50}, false, 2));
  CHECK(is_permutation_of_n(c));
  auto c2 = cf::random::choice(10, {3, 2}, false, 2);
  CHECK(c2.shape() == cf::Shape{3, 2});
  auto cv = f64(c2);
  CHECK(std::set<double>(cv.begin(), cv.end()).size() == 6);
  auto cr = f64(cf::random::choice(3, {1000}, true, 2));
  CHECK(*std::max_element(cr.begin(), cr.end()) == 2);
  CHECK_THROWS_AS(cf::random::choice(3, {4}, false), cf::ValueError);
  CHECK_THROWS_AS(cf::random::choice(-1, {4}), cf::ValueError);
  CHECK_THROWS_AS(cf::random::permutation(-1), cf::ValueError);
  auto s = cf::arange(100).astype(cf::f64);
  s.eval();
  auto before = f64(s);
  cf::random::shuffle(s, 4);
  auto after = f64(s);
  CHECK(after != before);
  CHECK(is_permutation_of_n(after));
  CHECK_THROWS_AS(cf::random::shuffle(s = cf::full({}, 1.0)), cf::ValueError);
}

TEST_CASE("Generator: default_rng(seed) gives one sequence per seed") {
  cf::BackendScope ref(cf::Backend::Reference);
  auto g1 = cf::random::default_rng(123), g2 = cf::random::default_rng(123);
  auto a1 = f64(g1.normal(0, 1, {100})), a2 = f64(g2.normal(0, 1, {100}));
  CHECK(a1 == a2);
  auto b1 = f64(g1.normal(0, 1, {100}));
  CHECK(b1 != a1);  // the next draw takes fresh counters
  CHECK(f64(g2.normal(0, 1, {100})) == b1);
  CHECK(f64(g1.integers(10, {50})) == f64(g2.integers(10, {50})));
  auto u = f64(g1.random({1000}));
  CHECK(*std::min_element(u.begin(), u.end()) >= 0);
  CHECK(*std::max_element(u.begin(), u.end()) < 1);
  auto un = f64(g1.uniform(-2, 2, {1000}, cf::f32));
  CHECK(*std::min_element(un.begin(), un.end()) >= -2);
  CHECK(mean_of(f64(g1.exponential(3.0, {20000}))) == doctest::Approx(3.0).epsilon(0.05));
  CHECK(mean_of(f64(g1.poisson(7.0, {20000}))) == doctest::Approx(7.0).epsilon(0.05));
  CHECK(is_permutation_of_n(f64(g1.permutation(77))));
  CHECK(is_permutation_of_n(f64(g1.choice(20, {20}, false))));
  auto arr = cf::arange(30).astype(cf::i32);
  arr.eval();
  g1.shuffle(arr);
  CHECK(is_permutation_of_n(f64(arr)));
  CHECK_THROWS_AS(g1.normal(0, -1, {3}), cf::ValueError);
  CHECK(cf::random::default_rng().seed() != cf::random::default_rng().seed());
}

TEST_CASE("the new random arrays fuse into their consumers and compile") {
  auto x = cf::placeholder(cf::f32, {256});
  CHECK(plan_of({x + cf::random::exponential(1.0, {256}, cf::f32, 1)}, true)->steps.size() == 1);
  CHECK(plan_of({x * cf::random::poisson(30.0, {256}, cf::i32, 1)}, true)->steps.size() == 1);
  CHECK(plan_of({x + cf::random::integers(0, 7, {256}, cf::i16, 1)}, true)->steps.size() == 1);
  CHECK(plan_of({cf::sum(cf::random::permutation(256, 3))}, true)->steps.size() == 1);
  CHECK(plan_of({cf::random::permutation(x * 2, 3) + 1}, true)->steps.size() == 1);
  CHECK(plan_of({cf::random::integers(0, 2, {256}, cf::bool_, 1) & (x > 0)}, true)->steps.size() == 1);
}
