// src/library/fft_call.cpp: the FFT node's shapes, key and description, and its host
// reference on FFTW (see fft_call.hpp); the device call is library/fft_cuda.cpp.
#include "library/fft_call.hpp"

#ifdef CUFUSE_HAVE_FFTW
#include <fftw3.h>
#endif

#include <cstring>
#include <mutex>
#include <vector>

#include <fmt/format.h>

#include "cufuse/error.hpp"
#include "library/blas_runtime.hpp"
#include "reference/evaluator.hpp"
#include "reference/host_data.hpp"

namespace cufuse::detail {

FftCall::FftCall(FftKind kind, bool inverse, DType cdtype, Shape in_shape, std::vector<int64_t> n)
    : kind_(kind), inverse_(kind == FftKind::C2C ? inverse : kind == FftKind::C2R), cdtype_(cdtype),
      in_shape_(std::move(in_shape)), n_(std::move(n)) {
  const int rank = static_cast<int>(n_.size());
  if (rank < 1 || rank > 3 || rank > in_shape_.ndim() || !(is_complex(cdtype_) || cdtype_ == DType::Float16))
    throw InternalError(fmt::format("FFT call of rank {} over shape {} in {}", rank, to_string(in_shape_), name(cdtype_)));
  for (int d = 0; d + rank < in_shape_.ndim(); ++d) batch_ *= in_shape_[d];
}

std::shared_ptr<FftCall> FftCall::columns(bool inverse, DType cdtype, Shape in_shape) {
  if (in_shape.ndim() < 2 || !is_complex(cdtype))
    throw InternalError(fmt::format("FFT along columns of shape {} in {}", to_string(in_shape), name(cdtype)));
  const int64_t n = in_shape[in_shape.ndim() - 2];
  auto c = std::make_shared<FftCall>(FftKind::C2C, inverse, cdtype, in_shape, std::vector<int64_t>{n});
  c->columns_ = true;
  c->batch_ = c->batch_ * in_shape[in_shape.ndim() - 1];
  return c;
}

int64_t FftCall::matrices() const {
  int64_t m = 1;
  for (int d = 0; d + 2 < in_shape_.ndim(); ++d) m *= in_shape_[d];
  return m;
}

Shape FftCall::output_shape(int) const {
  Shape s = in_shape_;
  const int last = s.ndim() - 1;
  if (columns_) {
    std::swap(s[last], s[last - 1]);
    return s;
  }
  if (kind_ == FftKind::R2C) s[last] = n_.back() / 2 + 1;
  if (kind_ == FftKind::C2R) s[last] = n_.back();
  if (half() && kind_ != FftKind::C2R) s.push_back(2);  // complex32 as float16 pairs
  return s;
}

int64_t FftCall::in_dist() const {
  int64_t d = 1;
  for (size_t i = 0; i + 1 < n_.size(); ++i) d *= n_[i];
  return d * (kind_ == FftKind::C2R ? n_.back() / 2 + 1 : n_.back());
}
int64_t FftCall::out_dist() const {
  int64_t d = 1;
  for (size_t i = 0; i + 1 < n_.size(); ++i) d *= n_[i];
  return d * (kind_ == FftKind::R2C ? n_.back() / 2 + 1 : n_.back());
}

std::string FftCall::describe() const {
  static const char* kinds[] = {"c2c", "r2c", "c2r"};
  if (columns_)
    return fmt::format("fft c2c{} {} along columns: size {} x {} columns x {} matrices, written transform axis last, "
                       "cuFFT (host: FFTW)",
                       inverse_ ? " inverse" : " forward", name(cdtype_), n_[0], width(), matrices());
  return fmt::format("fft {}{} {} sizes ({}) x batch {}, cuFFT (host: FFTW)", kinds[static_cast<int>(kind_)],
                     kind_ == FftKind::C2C ? (inverse_ ? " inverse" : " forward") : "",
                     half() ? "complex32 (float16 pairs)" : name(cdtype_),
                     fmt::join(n_, ", "), batch_);
}

uint64_t FftCall::attributes_hash() const {
  uint64_t h = hash_mix(0x666674, static_cast<uint64_t>(kind_) * 2 + (inverse_ ? 1 : 0));
  h = hash_mix(h, static_cast<uint64_t>(cdtype_));
  for (int64_t v : n_) h = hash_mix(h, static_cast<uint64_t>(v));
  h = hash_mix(h, columns_ ? 0x636f6cu : 0u);
  return hash_mix(h, static_cast<uint64_t>(batch_));
}

#ifdef CUFUSE_HAVE_FFTW
namespace {

// One FFTW transform of the call, in precision P (fftw_ or fftwf_ through the traits below).
template <class Real, class Cplx, class Plan, class Traits>
void fftw_run(const FftCall& c, const void* in, void* out) {
  if (c.along_columns()) {  // each matrix: W transforms of stride W, written contiguous, one after another
    int n[1] = {static_cast<int>(c.sizes()[0])};
    const int w = static_cast<int>(c.width());
    const int64_t per = c.sizes()[0] * c.width();
    for (int64_t m = 0; m < c.matrices(); ++m) {
      auto* src = const_cast<Cplx*>(static_cast<const Cplx*>(in)) + m * per;
      auto* dst = static_cast<Cplx*>(out) + m * per;
      Plan p;
      {
        std::lock_guard<std::mutex> lk(fftw_planner_mutex());
        p = Traits::c2c_strided(n, w, src, w, 1, dst, 1, n[0], c.inverse() ? FFTW_BACKWARD : FFTW_FORWARD);
      }
      if (!p) throw InternalError(fmt::format("FFTW could not plan {}", c.describe()));
      Traits::execute(p);
      std::lock_guard<std::mutex> lk(fftw_planner_mutex());
      Traits::destroy(p);
    }
    return;
  }
  int n[3];
  const int rank = static_cast<int>(c.sizes().size());
  for (int i = 0; i < rank; ++i) n[i] = static_cast<int>(c.sizes()[static_cast<size_t>(i)]);
  const int howmany = static_cast<int>(c.batch());
  const int idist = static_cast<int>(c.in_dist()), odist = static_cast<int>(c.out_dist());
  // FFTW's c2r overwrites its input (multi-dimensional ones always): it runs on a copy.
  std::vector<unsigned char> copy;
  void* src = const_cast<void*>(in);
  if (c.kind() == FftKind::C2R) {
    copy.resize(static_cast<size_t>(c.in_dist() * c.batch()) * sizeof(Cplx));
    std::memcpy(copy.data(), in, copy.size());
    src = copy.data();
  }
  Plan p;
  {
    std::lock_guard<std::mutex> lk(fftw_planner_mutex());  // FFTW's planner is not thread-safe
    switch (c.kind()) {
      case FftKind::C2C:
        p = Traits::c2c(rank, n, howmany, static_cast<Cplx*>(src), idist, static_cast<Cplx*>(out), odist,
                        c.inverse() ? FFTW_BACKWARD : FFTW_FORWARD);
        break;
      case FftKind::R2C:
        p = Traits::r2c(rank, n, howmany, static_cast<Real*>(src), idist, static_cast<Cplx*>(out), odist);
        break;
      default:
        p = Traits::c2r(rank, n, howmany, static_cast<Cplx*>(src), idist, static_cast<Real*>(out), odist);
        break;
    }
  }
  if (!p) throw InternalError(fmt::format("FFTW could not plan {}", c.describe()));
  Traits::execute(p);
  std::lock_guard<std::mutex> lk(fftw_planner_mutex());
  Traits::destroy(p);
}

struct FftwDouble {
  static fftw_plan c2c(int r, int* n, int b, fftw_complex* i, int id, fftw_complex* o, int od, int sign) {
    return fftw_plan_many_dft(r, n, b, i, nullptr, 1, id, o, nullptr, 1, od, sign, FFTW_ESTIMATE);
  }
  static fftw_plan c2c_strided(int* n, int b, fftw_complex* i, int is, int id, fftw_complex* o, int os, int od,
                               int sign) {
    return fftw_plan_many_dft(1, n, b, i, nullptr, is, id, o, nullptr, os, od, sign, FFTW_ESTIMATE);
  }
  static fftw_plan r2c(int r, int* n, int b, double* i, int id, fftw_complex* o, int od) {
    return fftw_plan_many_dft_r2c(r, n, b, i, nullptr, 1, id, o, nullptr, 1, od, FFTW_ESTIMATE);
  }
  static fftw_plan c2r(int r, int* n, int b, fftw_complex* i, int id, double* o, int od) {
    return fftw_plan_many_dft_c2r(r, n, b, i, nullptr, 1, id, o, nullptr, 1, od, FFTW_ESTIMATE);
  }
  static void execute(fftw_plan p) { fftw_execute(p); }
  static void destroy(fftw_plan p) { fftw_destroy_plan(p); }
};
struct FftwFloat {
  static fftwf_plan c2c(int r, int* n, int b, fftwf_complex* i, int id, fftwf_complex* o, int od, int sign) {
    return fftwf_plan_many_dft(r, n, b, i, nullptr, 1, id, o, nullptr, 1, od, sign, FFTW_ESTIMATE);
  }
  static fftwf_plan c2c_strided(int* n, int b, fftwf_complex* i, int is, int id, fftwf_complex* o, int os, int od,
                                int sign) {
    return fftwf_plan_many_dft(1, n, b, i, nullptr, is, id, o, nullptr, os, od, sign, FFTW_ESTIMATE);
  }
  static fftwf_plan r2c(int r, int* n, int b, float* i, int id, fftwf_complex* o, int od) {
    return fftwf_plan_many_dft_r2c(r, n, b, i, nullptr, 1, id, o, nullptr, 1, od, FFTW_ESTIMATE);
  }
  static fftwf_plan c2r(int r, int* n, int b, fftwf_complex* i, int id, float* o, int od) {
    return fftwf_plan_many_dft_c2r(r, n, b, i, nullptr, 1, id, o, nullptr, 1, od, FFTW_ESTIMATE);
  }
  static void execute(fftwf_plan p) { fftwf_execute(p); }
  static void destroy(fftwf_plan p) { fftwf_destroy_plan(p); }
};

}  // namespace

void FftCall::run_reference(const std::vector<const HostArray*>& inputs, std::vector<HostArray>& outputs) const {
  if (batch_ == 0 || outputs.at(0).size() == 0) return;
  for (int64_t v : n_)
    if (v > INT32_MAX || batch_ * in_dist() > INT32_MAX || batch_ * out_dist() > INT32_MAX)
      throw NotSupportedError(fmt::format("{}: the host reference takes 32-bit sizes", describe()));
  const void* in = inputs.at(0)->bytes.data();
  void* out = outputs.at(0).bytes.data();
  if (half()) {  // float32 from the float16 values, FFTW in float32, each result rounded to float16 once
    const int64_t n_in = batch_ * in_dist() * (kind_ == FftKind::R2C ? 1 : 2);
    const int64_t n_out = batch_ * out_dist() * (kind_ == FftKind::C2R ? 1 : 2);
    std::vector<float> fin(static_cast<size_t>(n_in)), fout(static_cast<size_t>(n_out));
    const auto* hin = static_cast<const uint16_t*>(in);
    for (int64_t i = 0; i < n_in; ++i) fin[static_cast<size_t>(i)] = ref::f16_to_float(hin[i]);
    fftw_run<float, fftwf_complex, fftwf_plan, FftwFloat>(*this, fin.data(), fout.data());
    auto* hout = static_cast<uint16_t*>(out);
    for (int64_t i = 0; i < n_out; ++i) hout[i] = ref::float_to_f16(fout[static_cast<size_t>(i)]);
  } else if (cdtype_ == DType::Complex64) {
    fftw_run<float, fftwf_complex, fftwf_plan, FftwFloat>(*this, in, out);
  } else {
    fftw_run<double, fftw_complex, fftw_plan, FftwDouble>(*this, in, out);
  }
}
#else
void FftCall::run_reference(const std::vector<const HostArray*>&, std::vector<HostArray>&) const {
  throw NotSupportedError(fmt::format("{}: the reference backend's FFT needs FFTW (libfftw3-dev), "
                                      "which this build did not find", describe()));
}
#endif

}  // namespace cufuse::detail
