// codegen/elementwise_parts.cpp: rule block-partitioned-parts (see elementwise_parts.hpp): finding
// a join's parts under an output, rebuilding each over its own shape without the join's maps,
// and one kernel that runs each part's piece on its own range of blocks.
#include "codegen/elementwise_parts.hpp"

#include <algorithm>
#include <unordered_map>

#include <fmt/format.h>

#include "codegen/preamble.hpp"
#include "core/op_table.hpp"
#include "core/walk.hpp"
#include "graph/gather.hpp"
#include "graph/index_map.hpp"
#include "graph/manip_support.hpp"
#include "runtime/context.hpp"

namespace cufuse::detail {

bool is_part_select(const Node* n) {
  if (n->k() != NodeKind::Elementwise || is_user_op(n->op) || static_cast<Op>(n->op) != Op::Where) return false;
  if (n->inputs[1]->dtype != n->dtype || n->inputs[2]->dtype != n->dtype) return false;
  const Node* c = n->inputs[0].get();
  if (c->k() != NodeKind::Elementwise || is_user_op(c->op) || static_cast<Op>(c->op) != Op::Less) return false;
  const Node* g = c->inputs[0].get();
  // only the coordinate of graph/manipulation.cpp's joins: its bound is in the graph key
  // (plan/scalar_forms.hpp: part_bound), a user's `arange(n) < i` keeps i a parameter
  return is_join_coordinate(*g) && c->inputs[1]->k() == NodeKind::Scalar;
}

namespace {

constexpr int64_t kMinRun = 32;  // fewest consecutive output elements of one part (find_join)

// A join under an output: the ops above it (each with one operand that is not a Scalar leaf),
// then its parts, part k at coordinates [lo[k], lo[k + 1]) of `axis`.
struct Join {
  std::vector<const NodePtr*> above;  // from the output down, the join's select last excluded
  std::vector<const NodePtr*> parts;
  std::vector<int64_t> lo;
  int axis = -1;
};

bool computed_here(const Node* n, const LeafBinding& bind) {
  return n->k() == NodeKind::Elementwise && !reads_memory(n, bind) && !is_gather(*n) && !is_scatter(*n);
}

// The coordinate iota of graph/manipulation.cpp's joins along `axis` of S (its value is the
// coordinate: start 0, step 1), or -1.
int coordinate_axis(const Node* g, const Shape& S) {
  if (g->dtype != DType::Int64 || g->layout.shape != S || g->layout.offset != 0) return -1;
  if (g->gen.istart != 0 || g->gen.istep_second != 1) return -1;
  int axis = -1;
  for (int d = 0; d < S.ndim(); ++d) {
    const int64_t st = g->layout.strides[d];
    if (st == 1 && axis < 0) axis = d;
    else if (st != 0) return -1;
  }
  return axis;
}

bool find_join(const NodePtr& root, const Shape& S, const LeafBinding& bind, Join& j) {
  const NodePtr* n = &root;
  while (!is_part_select(n->get())) {
    if (!computed_here(n->get(), bind)) return false;
    const NodePtr* next = nullptr;
    for (const auto& in : (*n)->inputs) {
      if (in->k() == NodeKind::Scalar) continue;
      if (next) return false;
      next = &in;
    }
    if (!next || (*next)->shape() != S) return false;
    j.above.push_back(n);
    n = next;
  }
  const Node* coord = nullptr;
  j.lo.push_back(0);
  while (is_part_select(n->get()) && !reads_memory(n->get(), bind)) {
    const Node* c = (*n)->inputs[0].get();
    const Node* s = c->inputs[1].get();
    if (reads_memory(c, bind) || (coord && c->inputs[0].get() != coord)) return false;
    coord = c->inputs[0].get();
    // (plan/signature.cpp keys the bound's value: a plan made for one never serves another)
    if (s->varies || (s->scalar.kind() != Scalar::Kind::Int && s->scalar.kind() != Scalar::Kind::UInt)) return false;
    const int64_t end = s->scalar.to_int64();
    if (end <= j.lo.back()) return false;
    j.lo.push_back(end);
    j.parts.push_back(&(*n)->inputs[1]);
    n = &(*n)->inputs[2];
  }
  if (j.parts.empty()) return false;
  j.parts.push_back(n);
  j.axis = coordinate_axis(coord, S);
  if (j.axis < 0 || j.lo.back() >= S[j.axis]) return false;
  j.lo.push_back(S[j.axis]);
  // Each part's runs of consecutive output elements (len x the extents after the axis) long
  // enough that its piece's stores are whole sectors: a stack along the last axis interleaves
  // its parts element by element, which one kernel walking the output writes better.
  int64_t inner = 1;
  for (int d = j.axis + 1; d < S.ndim(); ++d) inner *= S[d];
  for (size_t k = 0; k + 1 < j.lo.size(); ++k)
    if ((j.lo[k + 1] - j.lo[k]) * inner < kMinRun) return false;
  return true;
}

// x where v is View(contiguous S) over a map of x that is the identity but on `axis`, a Clamp
// shifted by `lo` over x's `len` (a join's part, graph/index_map.cpp: mapped_leaf), else null.
const NodePtr* part_leaf(const Node* v, const Shape& S, int axis, int64_t lo, int64_t len) {
  if (v->k() != NodeKind::View || is_gather(*v) || index_map_of(*v)) return nullptr;
  if (v->layout.shape != S || v->layout.offset != 0 || v->layout.strides != contiguous_strides(S)) return nullptr;
  const Node* m = v->inputs[0].get();
  const IndexMap* map = index_map_of(*m);
  if (!map || static_cast<int>(map->axes.size()) != S.ndim()) return nullptr;
  for (int d = 0; d < S.ndim(); ++d) {
    const AxisMap& a = map->axes[d];
    const bool ok = d == axis ? a.kind == AxisMapKind::Clamp && a.shift == lo && a.n == len
                              : a.kind == AxisMapKind::Identity && a.n == S[d];
    if (!ok) return nullptr;
  }
  const NodePtr& x = m->inputs[0];
  Shape want = S;
  want[axis] = len;
  return x->shape() == want ? &x : nullptr;
}

// Part k's value over its own shape: the part's elementwise nodes and the ops above the join
// rebuilt with that shape, each map of the join replaced by its input; Scalar leaves kept (the
// binding knows them). Null where the part holds anything else.
NodePtr rebuild_part(const Join& j, size_t k, const Shape& S, const LeafBinding& bind) {
  const int64_t lo = j.lo[k], len = j.lo[k + 1] - j.lo[k];
  Shape Sk = S;
  Sk[j.axis] = len;
  auto remade = [&](const Node* n, const std::unordered_map<const Node*, NodePtr>& memo) {
    NodePtr e = new_elementwise(n->op, n->dtype, Sk);
    for (const auto& in : n->inputs) {
      auto it = memo.find(in.get());
      e->inputs.push_back(it != memo.end() ? it->second : in);  // (a Scalar leaf of an op above)
    }
    e->attrs = n->attrs;
    finish_node(*e);
    return e;
  };
  std::unordered_map<const Node*, NodePtr> memo;
  bool ok = true;
  walk_post_order(
      *j.parts[k], [&](const NodePtr& n) { return !ok || memo.count(n.get()) != 0; },
      [&](const NodePtr& n) { return computed_here(n.get(), bind); },
      [&](const NodePtr& n) {
        if (n->k() == NodeKind::Scalar) {
          memo.emplace(n.get(), n);
        } else if (computed_here(n.get(), bind)) {
          memo.emplace(n.get(), remade(n.get(), memo));
        } else if (const NodePtr* x = part_leaf(n.get(), S, j.axis, lo, len)) {
          memo.emplace(n.get(), *x);
        } else {
          ok = false;
        }
      });
  if (!ok) return nullptr;
  NodePtr r = memo.at(j.parts[k]->get());
  for (size_t a = j.above.size(); a-- > 0;) {
    const Node* n = j.above[a]->get();
    std::unordered_map<const Node*, NodePtr> one;  // its operand that is not a Scalar leaf: the op below, or the join
    for (const auto& in : n->inputs)
      if (in->k() != NodeKind::Scalar) one.emplace(in.get(), r);
    r = remade(n, one);
  }
  return r;
}

}  // namespace

std::optional<KernelSpec> emit_partitioned_kernel(const Shape& S, const std::vector<EwOutput>& outputs,
                                                  const LeafBinding& bind) {
  if (!settings().ew_parts || outputs.size() != 1 || S.ndim() == 0) return std::nullopt;
  const EwOutput& out = outputs[0];
  Join j;
  if (out.node->shape() != S || out.layout.shape != S || !find_join(out.node, S, bind, j)) return std::nullopt;
  const int64_t isz = itemsize(out.node->dtype);
  std::vector<EwPiece> pieces;
  std::vector<NodePtr> keep;  // the rebuilt parts live until their pieces are emitted
  for (size_t k = 0; k < j.parts.size(); ++k) {
    NodePtr part = rebuild_part(j, k, S, bind);
    if (!part) return std::nullopt;
    EwOutput o = out;
    o.node = part;
    o.layout.shape = part->shape();
    o.shift = out.shift + j.lo[k] * out.layout.strides[j.axis];
    o.aligned16 = out.aligned16 && (o.shift * isz) % 16 == 0;
    pieces.push_back(emit_elementwise_piece(part->shape(), {o}, bind));
    keep.push_back(std::move(part));
    if (!pieces.back().ok) return std::nullopt;
  }
  // Piece k's struct and function, then the kernel's struct (the pieces' structs and their
  // block ranges) and the kernel choosing a piece by its block.
  std::string text, all;
  int64_t blocks = 0;
  int min_blocks = 0;
  for (const auto& pc : pieces) {
    all += pc.decl + pc.body;
    blocks += pc.grid_x * pc.grid_y;
    min_blocks = std::max(min_blocks, pc.min_blocks);
  }
  if (blocks > 0x7fffffffLL) return std::nullopt;
  KernelSpec spec;
  spec.name = kernel_name("ew", {out.node->dtype}, std::hash<std::string>{}(all + std::to_string(min_blocks)));
  const std::string& N = spec.name;
  ParamLayout pl;
  std::string choose = "  unsigned cf_b = blockIdx.x;\n";
  std::string summary = fmt::format("{} parts by block ranges along dim {} (rule block-partitioned-parts):", pieces.size(), j.axis);
  std::vector<size_t> at;
  for (size_t k = 0; k < pieces.size(); ++k) {
    const EwPiece& pc = pieces[k];
    const std::string K = std::to_string(k);
    text += fmt::format("struct alignas(16) {0}_p{1} {{\n{2}}};\n\n__device__ __forceinline__ void {0}_part{1}(const {0}_p{1}& p, "
                        "const unsigned cf_bx, const unsigned cf_by, const unsigned cf_gx, const unsigned cf_gy) {{\n"
                        "  (void)cf_bx; (void)cf_by; (void)cf_gx; (void)cf_gy;\n{3}}}\n\n",
                        N, K, pc.decl, pc.body);
    at.push_back(pl.add_struct(fmt::format("{}_p{}", N, K), pc.params, 16, "q" + K));
    for (Patch p : pc.patches) {
      p.offset += static_cast<uint32_t>(at.back());
      spec.patches.push_back(p);
    }
    const std::string call = fmt::format("{0}_part{1}(p.q{1}, cf_b % p.gx{1}, cf_b / p.gx{1}, p.gx{1}, p.nb{1} / p.gx{1});", N, K);
    if (k + 1 < pieces.size())
      choose += fmt::format("  if (cf_b < p.nb{0}) {{\n    {1}\n    return;\n  }}\n  cf_b -= p.nb{0};\n", K, call);
    else
      choose += "  " + call + "\n";
    summary += fmt::format(" [{} blocks] {};", pc.grid_x * pc.grid_y, pc.summary);
  }
  for (size_t k = 0; k < pieces.size(); ++k) {
    pl.set<unsigned>(pl.add("unsigned", 4, "nb" + std::to_string(k)), static_cast<unsigned>(pieces[k].grid_x * pieces[k].grid_y));
    pl.set<unsigned>(pl.add("unsigned", 4, "gx" + std::to_string(k)), static_cast<unsigned>(pieces[k].grid_x));
  }
  const std::string kernel = kernel_source(N, pl.decl(), kEwBlock, choose, min_blocks);
  const size_t cut = kernel.find(kPreambleEnd) + kPreambleEnd.size();
  // The pieces' text goes between the preamble and the kernel's struct, the preamble made for
  // all of it.
  spec.source = kernel_preamble(text + kernel.substr(cut)) + text + kernel.substr(cut);
  spec.params = pl.bytes();
  spec.numel = numel(S);
  spec.dims.grid[0] = static_cast<unsigned>(blocks);
  spec.dims.block[0] = kEwBlock;
  summary.pop_back();
  spec.summary = std::move(summary);
  return spec;
}

}  // namespace cufuse::detail
