// src/compile/interp_images.cpp: choosing the interpreter's image for a device (see
// interp_images.hpp; the images themselves are the generated interp_images.cpp).
#include "compile/interp_images.hpp"

namespace cufuse::detail {

const InterpImage* interp_image_for(int cc) {
  const InterpImage* best = nullptr;
  for (const auto& im : interp_images())
    if (!im.ptx && im.data && cubin_runs_on(im.arch, cc) && (!best || im.arch > best->arch))
      best = &im;
  if (best) return best;
  for (const auto& im : interp_images())
    if (im.ptx && im.data && im.arch <= cc && (!best || im.arch > best->arch)) best = &im;
  return best;
}

}  // namespace cufuse::detail
