// codegen/user_kernel.hpp: user-written ops inside generated kernels. Owns the registry of
// user ops (ElementwiseKernel outputs, ReductionKernel map / reduce / post-map steps), each
// with its types resolved, and the CUDA each becomes where the emitters meet one:
//   - an Elementwise node whose op is a user op id (>= kUserOpBase) -> user_op_value, called
//     from ExprEmitter::op_value, so user code fuses with the lazy ops around it;
//   - a Reduce node with ReduceOp::User (its op is a user op id) -> the identity and combine
//     of codegen/reduction_kernel.cpp.
// An id stands for one definition, compared in full (name, types, code): equal definitions
// share an id, so plan and kernel caches keyed on op ids never mix two user ops.
// The host reference cannot run user CUDA: it throws NotSupportedError naming the kernel.
#pragma once
#include <cstdint>
#include <string>
#include <vector>

#include "core/node.hpp"
#include "cufuse/dtype.hpp"

namespace cufuse::detail {

class ExprEmitter;

struct UserVar {
  std::string name;  // the name the user's code uses
  DType dtype;       // its resolved dtype (declared with its compute type: float for half types)
  int init = -1;     // outputs: the node input holding its initial value, or -1 (zero)
  bool operator==(const UserVar& o) const { return name == o.name && dtype == o.dtype && init == o.init; }
};

struct UserOp {
  enum class Kind : uint8_t {
    Elementwise,  // statements assigning the outputs; the node yields outs[result]
    Map,          // ReductionKernel map_expr: an expression, converted to the reduce type
    PostMap,      // ReductionKernel post_map_expr: statements reading `a`, assigning outs[result]
    Reduce,       // ReductionKernel reduce_expr over `a` and `b`, with `identity`
  };
  Kind kind = Kind::Elementwise;
  std::string name;          // the user's kernel name (messages, comments in the source)
  std::string typedefs;      // "typedef float T; " for each placeholder type bound
  std::vector<UserVar> vars; // the node's inputs, in order, as the code names them
  std::vector<UserVar> outs; // Elementwise / PostMap: the output variables
  int result = 0;            // which of outs the node yields
  std::string code;          // operation / map_expr / post_map_expr / reduce_expr
  std::string identity;      // Reduce
  DType reduce_type = DType::Float32;  // Reduce: the accumulator's dtype

  bool operator==(const UserOp& o) const;
};

// The id of `op` (registering it the first time); throws NotSupportedError past 32768 ids.
uint16_t intern_user_op(const UserOp& op);
// The op behind an id (is_user_op(id) must hold).
const UserOp& user_op(uint16_t id);
// An Elementwise or Reduce node running user code.
bool is_user_node(const Node& n);
// The NotSupportedError the host reference throws for such a node.
[[noreturn]] void throw_user_node_on_host(const Node& n);

// The value of user Elementwise node n given its inputs' values (register names).
std::string user_op_value(ExprEmitter& e, const Node* n, const std::string* in);
// A user reduction's identity, as an expression of register type T.
std::string user_reduce_identity(const Node* red, const std::string& T);
// acc = reduce_expr(a = acc, b = v), as statements.
std::string user_reduce_combine(const Node* red, const std::string& T, const std::string& acc, const std::string& v);

}  // namespace cufuse::detail
