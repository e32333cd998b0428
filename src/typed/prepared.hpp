// src/typed/prepared.hpp: a fuse() entry made ready for the typed layer's run site
// (src/typed/typed_call.cpp): per kernel step the parameter template with the fixed patches
// and one call's scalar values applied, and the pointer patches every call writes. Binding a
// call copies the template and writes the pointers; where a scalar's value differs from the
// prepared one, fuse's bind_step binds the step instead. Immutable once made (shared by
// threads). tests/test_typed.cpp checks the bytes against fuse's bind_step.
#pragma once
#include <atomic>
#include <memory>
#include <mutex>
#include <vector>

#include "fuse/engine.hpp"

namespace cufuse::detail {

struct PtrPatch {
  uint32_t offset;
  PatchSrc src;  // LeafPtr (argument `index` + delta), BufferPtr (buffer `index`), Workspace (+ index)
  uint32_t index;
  int64_t delta;
};
struct PreparedStep {
  std::vector<unsigned char> params;  // fixed patches and the prepared scalars applied
  std::vector<PtrPatch> ptrs;
  bool has_scalars = false;
};
struct Prepared {
  std::shared_ptr<Entry> en;
  bool library = false;  // a library step: every call goes through fuse_call
  std::vector<PreparedStep> steps;
  std::vector<std::pair<int, Scalar>> scalars;  // argument slot -> the value the templates hold
  std::vector<int> arrays;                      // the array arguments' slots
  bool scalar_checks = false;                   // scalars the signature checks (by value, fits a dtype)
};

// Prepares `en` with the values of a call it matches (`data`: matches()'s addresses).
std::unique_ptr<Prepared> prepare(std::shared_ptr<Entry> en, const FuseArg* args, const char* const* data);
// fuse's matches() for a call of the prepared entry's expression type: the scalars' kinds
// are the type's, so only the arrays are checked (and scalars the signature holds by value).
bool prepared_matches(const Prepared& p, const FuseArg* args, int nargs, const char** data);
// Do the call's scalars hold the prepared values, bit for bit? (Their kinds are the type's.)
bool same_scalars(const Prepared& p, const FuseArg* args);
// Kernel step `s`'s parameter bytes for a call (`same`: same_scalars of the call).
void bind_prepared(const Prepared& p, size_t s, const FuseArg* args, const char* const* data, bool same,
                   void* const* buffers, void* workspace, std::vector<unsigned char>& out);

// The traces of one tuple of expression types and shape key (include/cufuse/typed_eval.hpp).
struct TypedCache {
  std::shared_ptr<FuseEngine> engine;
  std::atomic<Prepared*> last{nullptr};
  std::mutex mu;
  std::vector<std::unique_ptr<Prepared>> prepared;  // kept: `last` may point at any
};

}  // namespace cufuse::detail
