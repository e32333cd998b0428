// codegen/expr_emitter.hpp: what every kernel emitter shares: the parameter struct being
// built (with patches), SSA value naming, and the code for one node's value: elementwise
// ops from the op table, generator formulas, index-remapping View chains, and loads from
// memory (Buffer leaves, or results an earlier kernel of the plan wrote).
#pragma once
#include <functional>
#include <set>
#include <string>
#include <vector>

#include "codegen/kernel.hpp"
#include "core/node.hpp"

namespace cufuse::detail {

struct IndexMap;  // graph/index_map.hpp

// How a kernel refers to what it reads.
struct LeafBinding {
  std::function<int(const Node*)> leaf_index;     // the executable's index of a leaf node
  std::function<bool(const Node*)> is_aligned16;  // a Buffer leaf's data pointer is 16-byte aligned
  std::function<int(const Node*)> buffer_of;      // buffer holding a node an earlier kernel wrote, or -1
};

// True for nodes a kernel reads from memory: Buffer leaves and results of earlier kernels.
bool reads_memory(const Node* n, const LeafBinding& bind);
// The layout a memory node is read with (its own for a Buffer leaf, contiguous for a result).
Layout memory_layout(const Node* n, const LeafBinding& bind);
// A View that reads memory through plain strides: its input reads memory, the View's offset
// is 0, and the input is an earlier kernel's (contiguous) result or a 1-D leaf, so the View's
// row-major position maps to the element at position * (1 or the leaf's stride). `strides`:
// the View's strides so composed. (`sum(q*q, 1)[:, None]` is such a View once the sum is
// written: read as a broadcast buffer, not through a per-element index remap.)
bool strided_memory_view(const Node* view, const LeafBinding& bind, Strides& strides);

std::string storage_type(DType t);
std::string reg_type(DType t);
std::string load_expr(DType t, const std::string& lvalue);   // storage -> register
std::string store_expr(DType t, const std::string& value);   // register -> storage
std::string round_half(DType t, const std::string& v);
int64_t span_of(const Shape& s, const Strides& st, int64_t off = 0);
// The index span a View chain reaches (for choosing 32- or 64-bit indexing).
int64_t chain_span(const Node* view);

class ExprEmitter {
 public:
  ExprEmitter(const LeafBinding& b, bool i64) : bind(b), i64_(i64), I(i64 ? "long long" : "int") {}

  const LeafBinding& bind;
  ParamLayout pl;
  std::vector<Patch> patches;
  std::string code;

  bool i64() const { return i64_; }
  const std::string& idx() const { return I; }
  void line(const std::string& l, int indent = 6) { code += std::string(static_cast<size_t>(indent), ' ') + l + "\n"; }
  std::string fresh() { return "v" + std::to_string(nval_++); }

  // ---- parameters
  size_t idx_size() const { return i64_ ? 8 : 4; }
  void add_patch(size_t off, PatchSrc src, DType t, int index);
  void add_idx(const std::string& name, int64_t v);
  void add_idx_array(const std::string& name, const SmallVec<int64_t, 8>& v);  // nothing for an empty one
  // A pointer parameter to what memory node n holds (leaf pointer or earlier result).
  void add_memory_ptr(const std::string& name, const Node* n, bool restrict_ptr);
  void add_scalar(const std::string& name, const Node* s);
  // Creates a parameter block once: returns false when `key` was already created.
  bool once(const std::string& key) { return created_.insert(key).second; }

  // ---- values (each returns the name of a register value holding the node's value)
  // An elementwise node given its inputs' values.
  std::string op_value(const Node* n, const std::string* in);
  // A generator at logical position `pos`; its parameters are `pfx_*` (created once).
  std::string gen_value(const Node* g, const std::string& pfx, const std::string& pos);
  // Gather view g (graph/gather.hpp) given its index values e[d] (integer registers): its
  // source at that multi-index, each index wrapped once when negative and checked where the
  // gather says (out of bounds: recorded in the device error word, the value 0); parameters `pfx_*`.
  std::string gather_value(const Node* g, const std::string& pfx, const std::vector<std::string>& e);
  // A condition an element's out-of-bounds record waits for (plain pairs: the element is in
  // range), or empty.
  std::string index_guard;
  // The checked, wrapped index lines shared by gathers and scatters: declares `ok` (all in
  // range) and i<d> per dim; returns the name of the ok flag. sizes/axes: parameter arrays.
  std::string checked_indices(const std::string& pfx, const std::vector<std::string>& e, const SmallVec<int64_t, 8>& size,
                              const SmallVec<int64_t, 8>& axis, const Node* err);
  // The input of View `view` at its row-major position `pos`; parameters `pfx_<level>_*`.
  // With `coords`, the caller knows the coordinates in the view's input's shape instead (an
  // identity view over a mapped view, graph/index_map.hpp): no unravelling.
  std::string chain_value(const Node* view, const std::string& pfx, const std::string& pos, int level = 0,
                          const std::vector<std::string>* coords = nullptr);
  // True for a View that shows its input unchanged (same shape, row-major strides, offset 0):
  // its input's coordinates are its own.
  static bool identity_view(const Node* view);
  // A mapped view's input coordinates from its own (`m`), its map's parameters `lp_m*`.
  std::vector<std::string> map_coordinates(const IndexMap& map, const std::vector<std::string>& m,
                                           const std::string& lp);

 private:
  bool i64_;
  std::string I;
  int nval_ = 0;
  std::set<std::string> created_;
  void add_gen_params(const std::string& pfx, const Node* g);
};

}  // namespace cufuse::detail
