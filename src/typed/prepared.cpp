// src/typed/prepared.cpp: preparing a fuse() entry for the typed run site, and binding a
// call with it (prepared.hpp).
#include "typed/prepared.hpp"

#include <cstring>

#include "exec/binding.hpp"

namespace cufuse::detail {

// The same value, bit for bit (a float's sign of zero and NaN payload included), of two
// scalars of one kind.
static bool same_bits(const Scalar& a, const Scalar& b) {
  switch (a.kind()) {
    case Scalar::Kind::Bool: return a.payload().b == b.payload().b;
    case Scalar::Kind::Int: return a.payload().i == b.payload().i;
    case Scalar::Kind::UInt: return a.payload().u == b.payload().u;
    case Scalar::Kind::Complex: return std::memcmp(&a.payload().c, &b.payload().c, sizeof(Scalar::Pair)) == 0;
    default: return std::memcmp(&a.payload().f, &b.payload().f, sizeof(double)) == 0;
  }
}

std::unique_ptr<Prepared> prepare(std::shared_ptr<Entry> en, const FuseArg* args, const char* const* data) {
  auto p = std::make_unique<Prepared>();
  for (const Step& st : en->ex->steps) p->library = p->library || st.call;
  const std::vector<void*> no_buffers(en->ex->buffers.size(), nullptr);
  for (size_t i = 0; i < en->sig.size(); ++i) {
    if (en->sig[i].is_array) p->arrays.push_back(static_cast<int>(i));
    else p->scalars.emplace_back(static_cast<int>(i), args[i].scalar);
    p->scalar_checks = p->scalar_checks || en->sig[i].by_value;
  }
  p->scalar_checks = p->scalar_checks || !en->fits.empty();
  p->steps.resize(en->steps.size());
  for (size_t s = 0; s < en->steps.size(); ++s) {
    const StepBind& sb = en->steps[s];
    PreparedStep& ps = p->steps[s];
    std::vector<Patch> scalar_patches;
    for (const Patch& q : sb.dynamic) {
      if (q.src == PatchSrc::BufferPtr || q.src == PatchSrc::Workspace) {
        ps.ptrs.push_back({q.offset, q.src, q.index, 0});
      } else if (q.src == PatchSrc::LeafPtr && en->binds[q.index].kind == LeafBind::Kind::ArgData) {
        const LeafBind& b = en->binds[q.index];
        ps.ptrs.push_back({q.offset, q.src, static_cast<uint32_t>(b.slot), b.delta_bytes});
      } else {
        scalar_patches.push_back(q);
      }
    }
    ps.has_scalars = !scalar_patches.empty();
    // The template: fuse's bind of this call (every patch applied), pointers overwritten later.
    if (!p->library) bind_step(*en, s, args, data, no_buffers.data(), nullptr, ps.params);
  }
  p->en = std::move(en);
  return p;
}

bool prepared_matches(const Prepared& p, const FuseArg* args, int nargs, const char** data) {
  const Entry& en = *p.en;
  if (p.scalar_checks || static_cast<int>(en.sig.size()) != nargs) return matches(en, args, nargs, data);
  for (int i : p.arrays)
    if (!array_matches(en.sig[i], *args[i].array, &data[i])) return false;
  return true;
}

bool same_scalars(const Prepared& p, const FuseArg* args) {
  for (const auto& [slot, v] : p.scalars)
    if (!same_bits(args[slot].scalar, v)) return false;
  return true;
}

void bind_prepared(const Prepared& p, size_t s, const FuseArg* args, const char* const* data, bool same,
                   void* const* buffers, void* workspace, std::vector<unsigned char>& out) {
  const PreparedStep& ps = p.steps[s];
  if (ps.has_scalars && !same) {
    bind_step(*p.en, s, args, data, buffers, workspace, out);  // new scalar values: fuse's bind
    return;
  }
  out.assign(ps.params.begin(), ps.params.end());
  unsigned char* b = out.data();
  for (const PtrPatch& q : ps.ptrs) {
    const void* v;
    if (q.src == PatchSrc::LeafPtr) v = data[q.index] + q.delta;
    else if (q.src == PatchSrc::BufferPtr) v = buffers[q.index];
    else v = static_cast<char*>(workspace) + q.index;
    std::memcpy(b + q.offset, &v, sizeof(void*));
  }
}

}  // namespace cufuse::detail
