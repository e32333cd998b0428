// src/dist/darray_ops.hpp: what the dist ops share: the same-mesh check and finishing a
// partial result (reducescatter over the axes a wanted sharding splits, allreduce over the
// rest, then the mean's scale).
#pragma once
#include <string>
#include <string_view>

#include "dist/state.hpp"

namespace cufuse::dist::detail {

void check_same_mesh(const Mesh& a, const Mesh& b, std::string_view what);
// d whole: a partial result combined (want: the sharding the consumer wants, or null); else d.
DArray finish_partial(const DArray& d, const Sharding* want, const std::string& why);

}  // namespace cufuse::dist::detail
