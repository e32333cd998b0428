// src/reference/eval_elementwise.cpp: Elementwise and View nodes on the host.
//
// Elementwise: type_op gives each input's compute dtype (NumPy's loop); inputs are
// converted to their compute C types (float for float16/bfloat16), the op table's host
// reference (the very expression the kernels paste in) runs over chunks of elements, and
// the result is stored into the node's dtype (half types rounded to nearest even). astype
// from float64 to float16/bfloat16 rounds once, from double. Inputs of another shape are
// broadcast NumPy-style first.
// View: pos = offset + sum(idx * strides) is a row-major index into the input's logical
// shape, which is exactly the input's row-major HostArray element number.
#include <vector>

#include <fmt/format.h>

#include "core/op_table.hpp"
#include "reference/eval_nodes.hpp"
#include "reference/host_data.hpp"
#include "reference/op_reference.hpp"

namespace cufuse::detail::ref {

static_assert(sizeof(bool) == 1, "bool results are written straight into 0/1 bool storage");

namespace {

constexpr int64_t kChunk = 4096;

// `in` broadcast to `shape` (NumPy's rules), as a new row-major array.
HostArray broadcast_to(const HostArray& in, const Shape& shape, const char* op) {
  const int nd = shape.ndim(), ind = in.shape.ndim();
  bool ok = ind <= nd;
  Layout l{shape, Strides(static_cast<size_t>(nd), 0), 0};
  const Strides inst = contiguous_strides(in.shape);
  for (int d = 0; ok && d < nd; ++d) {
    const int j = d - (nd - ind);
    if (j < 0) continue;
    if (in.shape[j] == shape[d]) l.strides[d] = in.shape[j] == 1 ? 0 : inst[j];
    else if (in.shape[j] != 1) ok = false;
  }
  if (!ok)
    throw ValueError(fmt::format("reference evaluator: {} input of shape {} cannot be broadcast to {}", op,
                                 to_string(in.shape), to_string(shape)));
  HostArray out = make_host_array(in.dtype, shape);
  gather(in.bytes.data(), 0, in.size(), itemsize(in.dtype), l, out.bytes.data(), "a broadcast input");
  return out;
}

std::string dtype_list(const DType* d, int n) {
  std::string s;
  for (int i = 0; i < n; ++i) s += (i ? ", " : "") + std::string(name(d[i]));
  return s;
}

}  // namespace

HostArray eval_elementwise(const Node& n, const HostArray* const* inputs) {
  if (n.op >= kNumOps) throw InternalError(fmt::format("reference evaluator: unknown elementwise op id {}", n.op));
  const OpRow& row = op_row(n.op);
  const int nin = static_cast<int>(n.inputs.size());
  if (nin != row.arity)
    throw InternalError(fmt::format("reference evaluator: {} node with {} inputs (takes {})", row.name, nin, row.arity));
  DType in_dt[3] = {};
  for (int i = 0; i < nin; ++i) in_dt[i] = inputs[i]->dtype;
  const OpTyping ty = type_op(row.id, in_dt, nin, n.dtype);
  if (ty.result != n.dtype)
    throw InternalError(fmt::format("reference evaluator: {}({}) gives {} but the node says {}", row.name,
                                    dtype_list(in_dt, nin), name(ty.result), name(n.dtype)));

  HostArray out = make_host_array(n.dtype, n.shape());
  const int64_t total = out.size();
  if (total == 0) return out;

  HostArray broadcast[3];
  const unsigned char* src[3] = {};
  for (int i = 0; i < nin; ++i) {
    if (inputs[i]->shape == n.shape()) {
      src[i] = inputs[i]->bytes.data();
    } else {
      broadcast[i] = broadcast_to(*inputs[i], n.shape(), row.name);
      src[i] = broadcast[i].bytes.data();
    }
  }

  // An input already in its compute representation is read in place; so is the output.
  bool in_place[3] = {};
  std::vector<unsigned char> cbuf[3];
  for (int i = 0; i < nin; ++i) {
    in_place[i] = in_dt[i] == ty.compute[i] && !is_half(in_dt[i]);
    if (!in_place[i]) cbuf[i].resize(static_cast<size_t>(kChunk) * compute_size(ty.compute[i]));
  }
  const bool out_in_place = !is_half(n.dtype);
  std::vector<unsigned char> obuf(out_in_place ? 0 : static_cast<size_t>(kChunk) * sizeof(float));
  const bool cast_f64_to_half = row.rule == TypeRule::Cast && in_dt[0] == DType::Float64 && is_half(n.dtype);
  const DType compute = row.rule == TypeRule::Where ? ty.compute[1] : ty.compute[0];
  const int osz = itemsize(n.dtype);

  for (int64_t off = 0; off < total; off += kChunk) {
    const int64_t cnt = std::min(kChunk, total - off);
    const void* args[3] = {};
    for (int i = 0; i < nin; ++i) {
      const unsigned char* p = src[i] + off * itemsize(in_dt[i]);
      if (in_place[i]) {
        args[i] = p;
      } else {
        to_compute(in_dt[i], p, ty.compute[i], cbuf[i].data(), cnt);
        args[i] = cbuf[i].data();
      }
    }
    unsigned char* o = out.bytes.data() + off * osz;
    if (cast_f64_to_half) {
      f64_to_half_storage(n.dtype, static_cast<const double*>(args[0]), reinterpret_cast<uint16_t*>(o), cnt);
    } else if (out_in_place) {
      op_reference(row.id)(compute, ty.result, args, o, cnt);
    } else {
      op_reference(row.id)(compute, ty.result, args, obuf.data(), cnt);
      compute_to_storage(n.dtype, obuf.data(), o, cnt);
    }
  }
  return out;
}

HostArray eval_view(const Node& n, const HostArray& in) {
  if (in.dtype != n.dtype)
    throw InternalError(fmt::format("reference evaluator: a {} view of a {} input", name(n.dtype), name(in.dtype)));
  if (has_attrs(n.attrs)) return eval_mapped_view(n, in);  // an index map (graph/index_map.hpp)
  HostArray out = make_host_array(n.dtype, n.shape());
  gather(in.bytes.data(), 0, in.size(), itemsize(n.dtype), n.layout, out.bytes.data(), "a view");
  return out;
}

}  // namespace cufuse::detail::ref
