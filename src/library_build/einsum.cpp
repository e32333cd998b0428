// src/library_build/einsum.cpp: NumPy's einsum. The subscripts are parsed (explicit and implicit
// output, '...', letters only), repeated labels of an operand become diagonal views, labels
// no one else needs are summed out early, and operands are contracted pairwise in a greedy
// order (the pair with the smallest result first). A pair with a label to contract and
// free labels on both sides is a GEMM (matmul over its batch labels, the transposes views
// the GEMM reads through its op flags where it can); any other pair is an elementwise
// product and a sum: with the views, one fused kernel and no GEMM (ij,ij->i; ij->j; ii->i).
#include <algorithm>
#include <map>
#include <set>

#include <fmt/format.h>

#include "cufuse/linalg.hpp"
#include "cufuse/ops.hpp"
#include "cufuse/reduce.hpp"
#include "library_build/contract.hpp"

namespace cufuse {

namespace {

constexpr int kEll = 1000;  // labels kEll + j are the j-th broadcast ('...') dim

struct Term {
  std::vector<int> labels;  // letters
  int ell_pos = -1;         // where '...' stands among the letters, or -1
};

Term parse_term(std::string_view s, const std::string& where) {
  Term t;
  for (size_t i = 0; i < s.size(); ++i) {
    const char c = s[i];
    if (c == ' ') continue;
    if (c == '.') {
      if (s.substr(i, 3) != "..." || t.ell_pos >= 0)
        throw ValueError(fmt::format("einstein sum subscripts string contains a '.' that is not part of an "
                                     "ellipsis ('...') in {}", where));
      t.ell_pos = static_cast<int>(t.labels.size());
      i += 2;
    } else if ((c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z')) {
      t.labels.push_back(c);
    } else {
      throw ValueError(fmt::format("invalid subscript '{}' in einstein sum subscripts string, subscripts must be "
                                   "letters", c));
    }
  }
  return t;
}

std::string label_name(int l) { return l >= kEll ? "..." : std::string(1, static_cast<char>(l)); }

struct Labelled {
  Array x;
  std::vector<int> labels;  // one per axis, no repeats once diagonals are taken
};

bool has(const std::vector<int>& v, int l) { return std::find(v.begin(), v.end(), l) != v.end(); }
int index_of(const std::vector<int>& v, int l) {
  return static_cast<int>(std::find(v.begin(), v.end(), l) - v.begin());
}

struct Einsum {
  DType t;
  std::map<int, int64_t> size;  // the broadcast size of each label

  Array reduce(const Array& x, const Axes& axes) const {
    if (axes.empty()) return x;
    if (t == DType::Bool) return any(x, AxisArg(axes));
    return sum(x, AxisArg(axes), false, t);
  }

  // Sums out the labels of `op` that `keep` does not name.
  void sum_out(Labelled& op, const std::set<int>& keep) const {
    Axes axes;
    std::vector<int> rest;
    for (size_t i = 0; i < op.labels.size(); ++i) {
      if (keep.count(op.labels[i])) rest.push_back(op.labels[i]);
      else axes.push_back(static_cast<int>(i));
    }
    if (axes.empty()) return;
    op.x = reduce(op.x, axes);
    op.labels = rest;
  }

  // op's axes in the order of `order` (labels op lacks become size-1 axes).
  static Array aligned(const Labelled& op, const std::vector<int>& order) {
    Axes perm;
    for (int l : order)
      if (has(op.labels, l)) perm.push_back(index_of(op.labels, l));
    Array y = op.x;
    bool identity = true;
    for (int i = 0; i < perm.ndim(); ++i) identity &= perm[i] == i;
    if (!identity) y = y.transpose(perm);
    Shape s;
    for (int l : order) s.push_back(has(op.labels, l) ? op.x.shape()[index_of(op.labels, l)] : 1);
    return s == y.shape() ? y : y.reshape(s);
  }

  Labelled contract(Labelled X, Labelled Y, const std::set<int>& needed) const {
    std::set<int> keep_x = needed, keep_y = needed;
    for (int l : Y.labels) keep_x.insert(l);
    for (int l : X.labels) keep_y.insert(l);
    sum_out(X, keep_x);
    sum_out(Y, keep_y);
    // A contracted label of length 1 on one side does not vary there: it is summed out of
    // the other side first and dropped from this one. (Broadcast instead, the GEMM's input
    // would be written out whole: 2 x 20011 x 20011 for 'bij,bjk->bik' of (2,3,20011) and
    // (2,1,20011), found by tests/gpu/test_fuzz_gpu, seed 91232296.)
    for (int l : std::vector<int>(X.labels)) {
      if (needed.count(l) || !has(Y.labels, l)) continue;
      const int64_t dx = X.x.shape()[index_of(X.labels, l)], dy = Y.x.shape()[index_of(Y.labels, l)];
      if (dx == dy) continue;
      Labelled& wide = dx == 1 ? Y : X;
      Labelled& one = dx == 1 ? X : Y;
      const int wi = index_of(wide.labels, l), oi = index_of(one.labels, l);
      wide.x = reduce(wide.x, Axes{wi});
      wide.labels.erase(wide.labels.begin() + wi);
      one.x = one.x.squeeze(Axes{oi});
      one.labels.erase(one.labels.begin() + oi);
    }
    std::vector<int> batch, con, xf, yf;
    for (int l : X.labels) {
      if (has(Y.labels, l)) (needed.count(l) ? batch : con).push_back(l);
      else xf.push_back(l);
    }
    for (int l : Y.labels)
      if (!has(X.labels, l)) yf.push_back(l);
    std::vector<int> result = batch;
    result.insert(result.end(), xf.begin(), xf.end());
    result.insert(result.end(), yf.begin(), yf.end());
    if (con.empty() || xf.empty() || yf.empty()) {
      // Nothing to multiply as matrices: an elementwise product and a sum.
      std::vector<int> order = result;
      order.insert(order.end(), con.begin(), con.end());
      Array p = multiply(aligned(X, order), aligned(Y, order));
      Axes axes;
      for (size_t i = result.size(); i < order.size(); ++i) axes.push_back(static_cast<int>(i));
      return Labelled{reduce(p, axes), result};
    }
    // A GEMM over the batch labels: (batch, M, K) @ (batch, K, N).
    auto dim = [](const Labelled& o, int l) { return o.x.shape()[index_of(o.labels, l)]; };
    std::vector<int> ox = batch, oy = batch;
    ox.insert(ox.end(), xf.begin(), xf.end());
    ox.insert(ox.end(), con.begin(), con.end());
    oy.insert(oy.end(), con.begin(), con.end());
    oy.insert(oy.end(), yf.begin(), yf.end());
    Array xa = aligned(X, ox), ya = aligned(Y, oy);
    // Contracted labels have one length on both sides here (see the loop above).
    const Shape sx = xa.shape(), sy = ya.shape();
    int64_t M = 1, N = 1, K = 1;
    Shape outs;
    for (int l : batch) outs.push_back(std::max(dim(X, l), dim(Y, l)));
    for (int l : con) K *= dim(X, l);
    for (int l : xf) {
      M *= dim(X, l);
      outs.push_back(dim(X, l));
    }
    for (int l : yf) {
      N *= dim(Y, l);
      outs.push_back(dim(Y, l));
    }
    Shape mx(sx.begin(), sx.begin() + static_cast<long>(batch.size()));
    Shape my(sy.begin(), sy.begin() + static_cast<long>(batch.size()));
    mx.push_back(M);
    mx.push_back(K);
    my.push_back(K);
    my.push_back(N);
    Array r = detail::matmul_shaped(xa.shape() == mx ? xa : xa.reshape(mx), ya.shape() == my ? ya : ya.reshape(my), outs);
    return Labelled{r, result};
  }
};

}  // namespace

Array einsum(std::string_view subscripts, const std::vector<Array>& operands) {
  if (operands.empty()) throw ValueError("einsum: no operands given");
  for (const auto& a : operands)
    if (!a.defined()) throw ValueError("einsum: an operand is an empty Array handle");
  const size_t arrow = subscripts.find("->");
  const std::string_view lhs = subscripts.substr(0, arrow);
  std::vector<Term> terms;
  size_t start = 0;
  for (;;) {
    const size_t comma = lhs.find(',', start);
    terms.push_back(parse_term(lhs.substr(start, comma == std::string_view::npos ? lhs.npos : comma - start),
                               fmt::format("operand {}", terms.size())));
    if (comma == std::string_view::npos) break;
    start = comma + 1;
  }
  if (terms.size() > operands.size())
    throw ValueError("fewer operands provided to einstein sum function than specified in the subscripts string");
  if (terms.size() < operands.size())
    throw ValueError("more operands provided to einstein sum function than specified in the subscripts string");
  // '...' dims: right-aligned across operands, labelled kEll + j.
  int E = 0;
  for (size_t i = 0; i < terms.size(); ++i) {
    const int extra = operands[i].ndim() - static_cast<int>(terms[i].labels.size());
    if (extra < 0)
      throw ValueError(fmt::format("einstein sum subscripts string contains too many subscripts for operand {}", i));
    if (extra > 0 && terms[i].ell_pos < 0)
      throw ValueError("operand has more dimensions than subscripts given in einstein sum, but no '...' ellipsis "
                       "provided to broadcast the extra dimensions.");
    E = std::max(E, extra);
  }
  Einsum es{};
  std::vector<Labelled> ops;
  std::map<int, int> count;
  for (size_t i = 0; i < terms.size(); ++i) {
    const Term& tm = terms[i];
    const int extra = operands[i].ndim() - static_cast<int>(tm.labels.size());
    std::vector<int> labels;
    for (int p = 0; p <= static_cast<int>(tm.labels.size()); ++p) {
      if (p == tm.ell_pos)
        for (int j = 0; j < extra; ++j) labels.push_back(kEll + E - extra + j);
      if (p < static_cast<int>(tm.labels.size())) labels.push_back(tm.labels[p]);
    }
    Labelled op{operands[i], labels};
    for (int l : labels) count[l]++;
    // Repeated labels: the diagonal over their axes.
    for (;;) {
      int p = -1, q = -1;
      for (size_t a = 0; a < op.labels.size() && p < 0; ++a)
        for (size_t b = a + 1; b < op.labels.size(); ++b)
          if (op.labels[a] == op.labels[b]) {
            p = static_cast<int>(a);
            q = static_cast<int>(b);
            break;
          }
      if (p < 0) break;
      const int64_t n1 = op.x.shape()[p], n2 = op.x.shape()[q];
      if (n1 != n2)
        throw ValueError(fmt::format("dimensions in operand {} for collapsing index '{}' don't match ({} != {})", i,
                                     label_name(op.labels[p]), n1, n2));
      const int l = op.labels[p];
      op.x = diagonal(op.x, 0, p, q);
      op.labels.erase(op.labels.begin() + q);
      op.labels.erase(op.labels.begin() + p);
      op.labels.push_back(l);
    }
    for (size_t a = 0; a < op.labels.size(); ++a) {
      const int l = op.labels[a];
      const int64_t n = op.x.shape()[a];
      auto it = es.size.find(l);
      if (it == es.size.end() || it->second == 1) es.size[l] = n;
      else if (n != 1 && n != it->second)
        throw ValueError(fmt::format("operands could not be broadcast together: einsum label '{}' has size {} in "
                                     "operand {} and {} elsewhere ('{}')", label_name(l), n, i, it->second,
                                     std::string(subscripts)));
    }
    ops.push_back(std::move(op));
  }
  // The output labels.
  std::vector<int> out;
  if (arrow != std::string_view::npos) {
    const Term ot = parse_term(subscripts.substr(arrow + 2), "the output subscripts");
    if (ot.ell_pos < 0 && E > 0)
      throw ValueError("output has more dimensions than subscripts given in einstein sum, but no '...' ellipsis "
                       "provided to broadcast the extra dimensions.");
    for (int p = 0; p <= static_cast<int>(ot.labels.size()); ++p) {
      if (p == ot.ell_pos)
        for (int j = 0; j < E; ++j) out.push_back(kEll + j);
      if (p == static_cast<int>(ot.labels.size())) break;
      const int l = ot.labels[p];
      if (!count.count(l))
        throw ValueError(fmt::format("einstein sum subscripts string included output subscript '{}' which never "
                                     "appeared in an input", label_name(l)));
      if (has(out, l))
        throw ValueError(fmt::format("einstein sum subscripts string includes output subscript '{}' multiple times",
                                     label_name(l)));
      out.push_back(l);
    }
  } else {
    for (int j = 0; j < E; ++j) out.push_back(kEll + j);
    for (const auto& [l, c] : count)  // std::map: ascending character codes, as NumPy
      if (l < kEll && c == 1) out.push_back(l);
  }
  DType t = operands[0].dtype();
  for (const auto& a : operands) t = promote_types(t, a.dtype());
  es.t = t;
  for (auto& op : ops)
    if (op.x.dtype() != t) op.x = op.x.astype(t);

  const std::set<int> outset(out.begin(), out.end());
  auto needed_except = [&](size_t i, size_t j) {
    std::set<int> need = outset;
    for (size_t k = 0; k < ops.size(); ++k)
      if (k != i && k != j) need.insert(ops[k].labels.begin(), ops[k].labels.end());
    return need;
  };
  // Labels only one operand has and the output does not: summed out first.
  for (size_t i = 0; i < ops.size(); ++i) es.sum_out(ops[i], needed_except(i, i));
  while (ops.size() > 1) {
    size_t bi = 0, bj = 1;
    double best = -1;
    for (size_t i = 0; i < ops.size(); ++i)
      for (size_t j = i + 1; j < ops.size(); ++j) {
        const std::set<int> need = needed_except(i, j);
        std::set<int> res;
        for (const Labelled* o : {&ops[i], &ops[j]})
          for (int l : o->labels)
            if (need.count(l)) res.insert(l);
        double cost = 1;
        for (int l : res) cost *= static_cast<double>(es.size.at(l));
        if (best < 0 || cost < best) {
          best = cost;
          bi = i;
          bj = j;
        }
      }
    Labelled r = es.contract(ops[bi], ops[bj], needed_except(bi, bj));
    ops.erase(ops.begin() + static_cast<long>(bj));
    ops[bi] = std::move(r);
  }
  Labelled& f = ops[0];
  es.sum_out(f, outset);
  Axes perm;
  for (int l : out) perm.push_back(index_of(f.labels, l));
  bool identity = true;
  for (int i = 0; i < perm.ndim(); ++i) identity &= perm[i] == i;
  return identity ? f.x : f.x.transpose(perm);
}

}  // namespace cufuse
