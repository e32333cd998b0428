// tests/test_typed.cpp: typed expression templates (cufuse/typed.hpp) on the reference
// backend: values and dtypes equal to the dynamic API's, one trace per expression type and
// shape key (later evaluations replay), kernel counts equal to the dynamic form's (W7,
// reductions, softmax, layernorm), scalars as parameters, run-time axes, tensor_cast's
// errors, views, mixing with lazy arrays, lazy in-place writes.
#include <cmath>
#include <tuple>

#include "cufuse/typed.hpp"
#include "fuse/engine.hpp"
#include "typed/prepared.hpp"
#include "test_core_helpers.hpp"
#include "typed_forms.hpp"

namespace {

std::vector<float> seq(int n, float a, float b) {
  std::vector<float> v(static_cast<size_t>(n));
  for (int i = 0; i < n; ++i) v[i] = a + b * static_cast<float>(i) + 0.25f * static_cast<float>(i % 7);
  return v;
}
template <class T, int N>
cf::Tensor<T, N> tensor(const std::vector<T>& v, const cf::Shape& s) {
  return cf::tensor_cast<T, N>(cf::from_host(v).reshape(s).eval());
}
uint64_t kernels() { return cf::stats().kernels_launched; }
using namespace typed_forms;

}  // namespace

TEST_CASE("typed: W7a and W7b give the dynamic values, one kernel, traced once") {
  cf::BackendScope ref(cf::Backend::Reference);
  for (int round = 0; round < 3; ++round) {
    auto x = tensor<float, 1>(seq(1000, float(round), 0.5f), {1000});
    auto y = tensor<float, 1>(seq(1000, 2.0f, -0.25f * float(round + 1)), {1000});
    cf::reset_stats();
    cf::Tensor<float, 1> a = w7a(x, y);
    cf::Tensor<float, 1> b = w7b(x, y);
    CHECK(kernels() == 2);
    CHECK(a.to_host() == host<float>(w7a(x.array(), y.array())));
    CHECK(b.to_host() == host<float>(w7b(x.array(), y.array())));
  }
  // A replay plans nothing: no plan is built or looked up.
  auto x = tensor<float, 1>(seq(1000, 1, 0.5f), {1000});
  auto y = tensor<float, 1>(seq(1000, 3, 0.25f), {1000});
  cf::reset_stats();
  cf::Tensor<float, 1> b = w7b(x, y);
  CHECK(cf::stats().plans_built == 0);
  CHECK(cf::stats().plan_cache_hits == 0);
  CHECK(kernels() == 1);
  // x read twice is one argument: the engine of this expression type saw 2 arrays + 4 scalars.
  using E = decltype(w7b(x, y));
  static_assert(E::n_leaves == 12);
  static_assert(E::dtype == cf::f32 && E::rank == 1);
}

TEST_CASE("typed: result dtypes follow NumPy 2 with weak scalars, as the dynamic API") {
  cf::BackendScope ref(cf::Backend::Reference);
  auto f = tensor<float, 1>({1, 2, 3, 4}, {4});
  auto i8 = cf::tensor_cast<int8_t, 1>(cf::from_host(std::vector<int8_t>{1, 2, -3, 4}));
  auto u8 = cf::tensor_cast<uint8_t, 1>(cf::from_host(std::vector<uint8_t>{1, 2, 3, 250}));
  auto check = [](const auto& e, const cf::Array& dyn) {
    using E = std::remove_cvref_t<decltype(e)>;
    CHECK(E::dtype == dyn.dtype());
    CHECK(cf::Array(e).dtype() == dyn.dtype());
    cf::Array t = e.eval();
    CHECK(host<double>(t.astype(cf::f64)) == host<double>(dyn.astype(cf::f64)));
  };
  check(i8 + 3, i8.array() + 3);
  check(i8 * 2.5, i8.array() * 2.5);
  check(i8 + u8, i8.array() + u8.array());
  check(i8 / 2, i8.array() / 2);
  check(f / 2, f.array() / 2);
  check(cf::sqrt(u8), cf::sqrt(u8.array()));
  check(cf::arctan2(i8, u8), cf::arctan2(i8.array(), u8.array()));
  check(u8 > 3, u8.array() > 3);
  check(cf::where(f > 2, i8, 7), cf::where(f.array() > 2, i8.array(), 7));
  check(cf::astype<double>(i8) + 1, i8.array().astype(cf::f64) + 1);
  check(cf::logical_and(f, true), cf::logical_and(f.array(), true));
  check(cf::sum(i8), cf::sum(i8.array()));
  check(cf::sum(u8), cf::sum(u8.array()));
  check(cf::mean(i8), cf::mean(i8.array()));
  check(cf::max(u8), cf::max(u8.array()));
  // A weak int that does not fit is NumPy's OverflowError at run time, as in the dynamic API.
  CHECK_THROWS_AS((i8 + 300).eval(), cf::OverflowError);
}

TEST_CASE("typed: scalars are parameters: a new value replays, a new shape traces again") {
  cf::BackendScope ref(cf::Backend::Reference);
  auto x = tensor<float, 1>(seq(64, 1, 1), {64});
  auto f = [&](float s) { return cf::Tensor<float, 1>(x * s + 1); };
  for (float s : {1.0f, 2.0f, -3.5f})
    CHECK(f(s).to_host() == host<float>(x.array() * s + 1));
  auto x2 = tensor<float, 1>(seq(32, 1, 1), {32});
  cf::Tensor<float, 1> r = x2 * 2.0f + 1;
  CHECK(r.to_host() == host<float>(x2.array() * 2.0f + 1));
  // A strided view is a leaf of its own layout.
  auto xs = x(cf::slice(cf::none, cf::none, 2));
  static_assert(std::is_same_v<decltype(xs), cf::Tensor<float, 1>>);
  cf::Tensor<float, 1> s = xs * 2.0f + 1;
  CHECK(s.to_host() == host<float>(xs.array() * 2.0f + 1));
}

TEST_CASE("typed: one array under two names, or two under one expression, binds right") {
  cf::BackendScope ref(cf::Backend::Reference);
  auto x = tensor<float, 1>(seq(50, 1, 1), {50});
  auto y = tensor<float, 1>(seq(50, -1, 2), {50});
  cf::Tensor<float, 1> a = w7a(x, y);
  cf::Tensor<float, 1> b = w7a(x, x);  // the same type, another shape key: x everywhere
  cf::Tensor<float, 1> c = w7a(y, x);
  CHECK(a.to_host() == host<float>(w7a(x.array(), y.array())));
  CHECK(b.to_host() == host<float>(w7a(x.array(), x.array())));
  CHECK(c.to_host() == host<float>(w7a(y.array(), x.array())));
}

TEST_CASE("typed: reductions, row forms and run-time axes take the dynamic form's kernels") {
  cf::BackendScope ref(cf::Backend::Reference);
  auto z = tensor<float, 2>(seq(8 * 33, -3, 0.05f), {8, 33});
  auto zd = z.array();
  auto kernels_of = [](auto&& run) {
    cf::reset_stats();
    run();
    return kernels();
  };
  cf::Tensor<float, 2> sm;
  cf::Array smd;
  const auto kt = kernels_of([&] { sm = softmax(z); });
  const auto kd = kernels_of([&] { smd = softmax_dyn(zd).eval(); });
  CHECK(kt == kd);
  CHECK(sm.to_host() == host<float>(smd));
  {  // e is written once and used twice: its two copies in the type are merged (plan/cse.hpp),
     // so the typed plan's kernels are the dynamic plan's (no reduction computed twice)
    using E = decltype(softmax(z));
    cf::typed::ArgStorage<E::n_leaves> st;
    cf::typed::EvalKey<E> key;
    cf::typed::Collect k{st.get(), key.slot, key.params};
    softmax(z).collect(k);
    const auto& en = *cf::typed::cache_for<E>(key).engine->entries.front();
    const auto dyn = plan_of({softmax_dyn(zd)});
    REQUIRE(en.ex->steps.size() == dyn->steps.size());
    for (size_t s = 0; s < dyn->steps.size(); ++s)
      CHECK(en.ex->steps[s].spec.source.size() == dyn->steps[s].spec.source.size());
  }
  cf::Tensor<float, 2> ln;
  cf::Array lnd;
  CHECK(kernels_of([&] { ln = layernorm(z); }) == kernels_of([&] { lnd = layernorm_dyn(zd).eval(); }));
  CHECK(ln.to_host() == host<float>(lnd));
  // sum over static, all and run-time axes; rank-0 item
  cf::Tensor<float, 1> s0 = cf::sum<0>(z * 2);
  CHECK(s0.to_host() == host<float>(cf::sum(zd * 2, 0)));
  for (int axis : {0, 1, -1}) {
    cf::Tensor<float, 1> s = cf::sum(z * 2, axis);
    CHECK(s.to_host() == host<float>(cf::sum(zd * 2, axis)));
  }
  cf::Tensor<float, 0> all = cf::sum(z, std::array<int, 2>{0, 1});
  CHECK(all.item() == cf::sum(zd).item<float>());
  CHECK(cf::sum(z * z).item() == cf::sum(zd * zd).item<float>());
  const auto kmt = kernels_of([&] { (void)cf::max(z - 1).item(); });
  const auto kmd = kernels_of([&] {
    cf::Array m = cf::max(zd - 1);  // (no handle on zd - 1 alive: it would be kept in memory)
    (void)m.item<float>();
  });
  CHECK(kmt == 1);
  CHECK(kmt == kmd);
}

TEST_CASE("typed: cf::eval of several expressions plans them together") {
  cf::BackendScope ref(cf::Backend::Reference);
  auto x = tensor<float, 1>(seq(100, 1, 1), {100});
  auto y = tensor<float, 1>(seq(100, 0, -1), {100});
  cf::reset_stats();
  auto [a, b] = cf::eval(x + y, cf::sin(x) * y);
  CHECK(kernels() == 1);
  CHECK(a.to_host() == host<float>(x.array() + y.array()));
  CHECK(b.to_host() == host<float>(cf::sin(x.array()) * y.array()));
  auto e = x * 3;  // an lvalue expression picks the typed eval, not the Array one
  cf::Tensor<float, 1> c = cf::eval(e);
  CHECK(c.to_host() == host<float>(x.array() * 3));
}

TEST_CASE("typed: tensor_cast checks dtype and rank; views keep the static rank") {
  cf::BackendScope ref(cf::Backend::Reference);
  cf::Array a = cf::from_host(seq(12, 0, 1)).reshape({3, 4});
  CHECK_THROWS_AS((cf::tensor_cast<double, 2>(a)), cf::TypeError);
  CHECK_THROWS_AS((cf::tensor_cast<float, 1>(a)), cf::ValueError);
  CHECK_THROWS_AS((cf::tensor_cast<float, 1>(cf::Array())), cf::ValueError);
  auto t = cf::tensor_cast<float, 2>(a);
  auto tt = t.transpose();
  CHECK(tt.shape() == cf::Shape{4, 3});
  auto r = t.reshape<3>({2, 3, 2});
  static_assert(decltype(r)::rank == 3);
  CHECK_THROWS_AS(t.reshape<2>({12}), cf::ValueError);
  auto row = t(1, cf::_);
  static_assert(decltype(row)::rank == 1);
  auto col = t(cf::_, cf::newaxis, 2);
  static_assert(decltype(col)::rank == 2);
  CHECK(col.shape() == cf::Shape{3, 1});
  CHECK(row.to_host() == host<float>(a[{1}]));
  cf::Tensor<float, 2> m = tt * 2 + t.transpose();
  CHECK(m.to_host() == host<float>(a.T() * 3));
  cf::Array back = t;  // a Tensor is usable as an Array
  CHECK(back.node() == a.node());
}

TEST_CASE("typed: mixing with lazy arrays and lazy in-place writes") {
  cf::BackendScope ref(cf::Backend::Reference);
  auto x = tensor<float, 1>(seq(40, 1, 1), {40});
  auto y = tensor<float, 1>(seq(40, 2, -1), {40});
  // A typed expression used as an Array is a lazy node fusing with the rest.
  cf::Array l = w7a(x, y);
  CHECK(l.is_lazy());
  cf::reset_stats();
  cf::Array m = (l + 1).eval();
  CHECK(kernels() == 1);
  CHECK(host<float>(m) == host<float>(w7a(x.array(), y.array()) + 1));
  // A lazy leaf: evaluated with the pending work, as the dynamic API would.
  auto lz = cf::tensor_cast<float, 1>(x.array() * 2);
  cf::reset_stats();
  cf::Tensor<float, 1> r = lz + y;
  CHECK(kernels() == 1);
  CHECK(r.to_host() == host<float>(x.array() * 2 + y.array()));
  // y += expr is the dynamic API's lazy write.
  auto acc = tensor<float, 1>(seq(40, 0, 0), {40});
  const std::vector<float> before = acc.to_host();
  cf::Array alias = acc.array();
  acc += x * y;
  acc -= 1;
  CHECK(acc.is_lazy());
  CHECK(host<float>(alias) == host<float>(cf::from_host(before) + x.array() * y.array() - 1));
}

TEST_CASE("typed: a prepared entry binds the bytes fuse's bind_step does (the device's hot path)") {
  cf::BackendScope ref(cf::Backend::Reference);
  auto x = tensor<float, 1>(seq(300, 1, 1), {300});
  auto y = tensor<float, 1>(seq(300, -1, 0.5f), {300});
  auto x2 = tensor<float, 1>(seq(300, 7, 1), {300});
  auto f = [](const auto& a, const auto& b, float k) { return ((a - b) * k + a / 2) * (b * b + 1); };
  cf::Tensor<float, 1> r = f(x, y, 0.75f);  // traces: the cache of this type holds the entry
  CHECK(r.to_host() == host<float>(f(x.array(), y.array(), 0.75f)));
  using E = decltype(f(x, y, 0.75f));
  auto args_of = [&](const E& e, cf::detail::FuseArg* args, cf::typed::EvalKey<E>& key) {
    cf::typed::Collect k{args, key.slot, key.params};
    e.collect(k);
    return k.nargs;
  };
  cf::detail::FuseArg args[E::n_leaves];
  cf::typed::EvalKey<E> key;
  const E e0 = f(x, y, 0.75f);
  const int nargs = args_of(e0, args, key);
  CHECK(nargs == 2 + 3);  // x, y (each read twice, one argument) and the scalars k, 2, 1
  cf::detail::TypedCache& cache = cf::typed::cache_for<E>(key);
  REQUIRE(!cache.engine->entries.empty());
  auto en = cache.engine->entries.front();
  const char* data[16];
  REQUIRE(cf::detail::matches(*en, args, nargs, data));
  auto p = cf::detail::prepare(en, args, data);
  REQUIRE(!p->steps.empty());
  CHECK(cf::detail::same_scalars(*p, args));
  std::vector<void*> bufs(en->ex->buffers.size());
  for (size_t i = 0; i < bufs.size(); ++i) bufs[i] = reinterpret_cast<void*>(0x1000 * (i + 1));
  void* ws = reinterpret_cast<void*>(0x900000);
  auto same_bytes = [&](const cf::detail::FuseArg* a, const char* const* d, bool same) {
    bool all = true;
    for (size_t s = 0; s < p->steps.size(); ++s) {
      if (en->ex->steps[s].call) continue;
      std::vector<unsigned char> got, want;
      cf::detail::bind_prepared(*p, s, a, d, same, bufs.data(), ws, got);
      cf::detail::bind_step(*en, s, a, d, bufs.data(), ws, want);
      all = all && got == want;
    }
    return all;
  };
  CHECK(same_bytes(args, data, true));
  // other arrays of the same signature, other buffers
  const E e1 = f(x2, y, 0.75f);
  cf::detail::FuseArg args1[E::n_leaves];
  cf::typed::EvalKey<E> key1;
  args_of(e1, args1, key1);
  CHECK(key1 == key);
  REQUIRE(cf::detail::matches(*en, args1, nargs, data));
  for (auto& b : bufs) b = static_cast<char*>(b) + 64;
  CHECK(cf::detail::same_scalars(*p, args1));
  CHECK(same_bytes(args1, data, true));
  // another scalar value: not the prepared one, bound by fuse's bind_step
  for (float k : {0.5f, -0.0f, 0.0f}) {
    const E e2 = f(x, y, k);
    cf::detail::FuseArg args2[E::n_leaves];
    cf::typed::EvalKey<E> key2;
    args_of(e2, args2, key2);
    REQUIRE(cf::detail::matches(*en, args2, nargs, data));
    CHECK_FALSE(cf::detail::same_scalars(*p, args2));
    CHECK(same_bytes(args2, data, false));
    CHECK_FALSE(same_bytes(args2, data, true));  // the prepared template holds 0.75: the check can fail
  }
}

TEST_CASE("typed: the composite rows (sinc, round, nan_to_num, isclose): the dynamic dtypes and values") {
  cf::BackendScope ref(cf::Backend::Reference);
  const std::vector<double> vals = {0.0, 1.25, -2.5, 3.75, 100.5, -0.0, 7.0, 2.0};
  auto same = [](const cf::Array& t, const cf::Array& d) {
    CHECK(t.dtype() == d.dtype());
    const auto a = host<double>(t.astype(cf::f64)), b = host<double>(d.astype(cf::f64));
    bool eq = a.size() == b.size();
    for (size_t i = 0; eq && i < a.size(); ++i) eq = a[i] == b[i] || (std::isnan(a[i]) && std::isnan(b[i]));
    CHECK(eq);
  };
  auto check_all = [&](auto t) {
    using Tn = decltype(t);
    const cf::Array a = t.array();
    same(cf::sinc(t).eval(), cf::sinc(a));
    same(cf::nan_to_num(t * 2, 1.5, 9.0).eval(), cf::nan_to_num(a * 2, 1.5, 9.0));
    same(cf::isclose(t, t + 1, 0.5).eval(), cf::isclose(a, a + 1, 0.5));
    if constexpr (Tn::dtype != cf::DType::Bool) {
      for (int d : {0, 1, -1}) same(cf::round(t, d).eval(), cf::round(a, d));
    }
  };
  auto from = [&](cf::DType t) { return cf::from_host(vals).astype(t).eval(); };
  check_all(cf::tensor_cast<float, 1>(from(cf::f32)));
  check_all(cf::tensor_cast<double, 1>(from(cf::f64)));
  check_all(cf::tensor_cast<cf::half, 1>(from(cf::f16)));
  check_all(cf::tensor_cast<int8_t, 1>(from(cf::i8)));
  check_all(cf::tensor_cast<uint16_t, 1>(from(cf::u16)));
  check_all(cf::tensor_cast<bool, 1>(from(cf::bool_)));
  // the parameters are part of the key: another value is another plan, not a stale one
  auto x = cf::tensor_cast<float, 1>(from(cf::f32));
  for (int d : {1, 2, 1}) same(cf::round(x * 3, d).eval(), cf::round(x.array() * 3, d));
}
