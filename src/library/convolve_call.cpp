// src/library/convolve_call.cpp: the direct convolution node: its plan-dump line, hash and
// output shape, the device run (one generated kernel, codegen/conv_kernel) and the host
// reference (float64 sums, uint64 wrapping sums for integer and bool results).
#include "library/convolve_call.hpp"

#include <bit>
#include <cstring>
#include <vector>

#include <fmt/format.h>

#include "compile/compiler.hpp"
#include "cufuse/error.hpp"
#include "reference/evaluator.hpp"
#include "reference/host_data.hpp"
#include "runtime/device.hpp"
#include "runtime/launch.hpp"

namespace cufuse::detail {

namespace {

// The image index that position i (any integer) reads under a boundary rule, or -1 for the
// fill value.
int64_t ext_index(int64_t i, int64_t n, ConvBoundary b) {
  if (i >= 0 && i < n) return i;
  if (b == ConvBoundary::Fill || n <= 0) return -1;
  if (b == ConvBoundary::Wrap) {
    int64_t r = i % n;
    return r < 0 ? r + n : r;
  }
  int64_t r = i % (2 * n);
  if (r < 0) r += 2 * n;
  return r < n ? r : 2 * n - 1 - r;
}

}  // namespace

ConvolveCall::ConvolveCall(ConvSpec s, DType image_dtype, DType filter_dtype, Shape image_shape, Shape filter_shape)
    : s_(std::move(s)), img_t_(image_dtype), flt_t_(filter_dtype), img_shape_(std::move(image_shape)),
      flt_shape_(std::move(filter_shape)) {
  uint64_t h = hash_mix(0x636f6e76, static_cast<uint64_t>(s_.out_dtype));
  h = hash_mix(h, static_cast<uint64_t>(s_.boundary) | (s_.flip ? 4u : 0u) | (s_.one_row ? 8u : 0u) |
                      static_cast<uint64_t>(s_.image_input) << 4);
  for (int64_t v : {s_.out_rows, s_.out_cols, s_.row0, s_.col0}) h = hash_mix(h, static_cast<uint64_t>(v));
  // The fill value is part of what the call computes: plans with different fills must differ.
  uint64_t bits = 0;
  switch (s_.fill.kind()) {
    case Scalar::Kind::Float: bits = std::bit_cast<uint64_t>(s_.fill.to_double()); break;
    case Scalar::Kind::Complex:
      bits = std::bit_cast<uint64_t>(s_.fill.to_complex().real()) ^
             (std::bit_cast<uint64_t>(s_.fill.to_complex().imag()) * 0x9E3779B97F4A7C15ull);
      break;
    case Scalar::Kind::Bool: bits = s_.fill.to_bool() ? 1 : 0; break;
    case Scalar::Kind::Int: bits = static_cast<uint64_t>(s_.fill.to_int64()); break;
    case Scalar::Kind::UInt: bits = s_.fill.to_uint64(); break;
  }
  h = hash_mix(h, bits);
  h = hash_mix(h, static_cast<uint64_t>(s_.fill.kind()));
  hash_ = h;
}

Shape ConvolveCall::output_shape(int) const {
  return s_.one_row ? Shape{s_.out_cols} : Shape{s_.out_rows, s_.out_cols};
}

std::string ConvolveCall::describe() const {
  return fmt::format("{} {} image {} {} filter {} {}, mode {}, {} boundary{} -> {}, generated direct kernel", s_.what,
                     name(s_.out_dtype), name(img_t_), to_string(img_shape_), name(flt_t_), to_string(flt_shape_),
                     s_.mode, boundary_name(s_.boundary),
                     s_.boundary == ConvBoundary::Fill ? fmt::format(" (fill value {})", s_.fill.str()) : "",
                     to_string(output_shape(0)));
}

ConvProblem ConvolveCall::problem(const std::vector<TensorRef>& inputs, void* out) const {
  if (inputs.size() != 2) throw InternalError("convolve: two inputs expected");
  const TensorRef& img = inputs[static_cast<size_t>(s_.image_input)];
  const TensorRef& flt = inputs[static_cast<size_t>(1 - s_.image_input)];
  ConvProblem p;
  p.img_dtype = img.dtype;
  p.flt_dtype = flt.dtype;
  p.out_dtype = s_.out_dtype;
  p.boundary = s_.boundary;
  p.flip = s_.flip;
  p.img = img.ptr;
  p.flt = flt.ptr;
  p.out = out;
  if (s_.one_row) {
    p.img_rows = 1, p.img_cols = img.shape[0], p.img_row_stride = 0, p.img_col_stride = img.strides[0];
    p.kh = 1, p.kw = flt.shape[0], p.flt_row_stride = 0, p.flt_col_stride = flt.strides[0];
  } else {
    p.img_rows = img.shape[0], p.img_cols = img.shape[1];
    p.img_row_stride = img.strides[0], p.img_col_stride = img.strides[1];
    p.kh = flt.shape[0], p.kw = flt.shape[1];
    p.flt_row_stride = flt.strides[0], p.flt_col_stride = flt.strides[1];
  }
  p.out_rows = s_.out_rows, p.out_cols = s_.out_cols;
  p.row0 = s_.row0, p.col0 = s_.col0;
  p.fill = s_.fill.to_double();
  p.fill_bits = s_.out_dtype == DType::Bool ? (s_.fill.to_bool() ? 1u : 0u)
                : is_unsigned_int(s_.out_dtype) ? s_.fill.to_uint64()
                                                : static_cast<uint64_t>(s_.fill.to_int64());
  return p;
}

std::shared_ptr<const ConvolveCall::Compiled> ConvolveCall::compiled(const ConvProblem& p) const {
  const int arch = default_arch();
  std::lock_guard<std::mutex> lk(mu_);
  if (!compiled_ || compiled_->arch != arch) {
    auto c = std::make_shared<Compiled>();
    c->arch = arch;
    c->spec = emit_conv_kernel(p);
    c->kernel = compile_kernel(c->spec.source, c->spec.name, arch);
    compiled_ = std::move(c);
  }
  return compiled_;
}

void ConvolveCall::run(const std::vector<TensorRef>& inputs, const std::vector<TensorRef>& outputs, void* stream) const {
  const ConvProblem p = problem(inputs, outputs.at(0).ptr);
  if (p.out_rows * p.out_cols == 0) return;
  const std::shared_ptr<const Compiled> k = compiled(p);
  std::vector<unsigned char> params = conv_param_bytes(p);
  launch_kernel(k->kernel->kernel_for(current_device()), k->spec.dims, params.data(), stream);
}

bool ConvolveCall::generated_kernel(KernelSpec& k) const {
  std::vector<TensorRef> refs(2);
  refs[static_cast<size_t>(s_.image_input)] = TensorRef{nullptr, img_t_, img_shape_, contiguous_strides(img_shape_)};
  refs[static_cast<size_t>(1 - s_.image_input)] = TensorRef{nullptr, flt_t_, flt_shape_, contiguous_strides(flt_shape_)};
  k = emit_conv_kernel(problem(refs, nullptr));
  return true;
}

void ConvolveCall::run_reference(const std::vector<const HostArray*>& inputs, std::vector<HostArray>& outputs) const {
  // Row-major host arrays: strides follow from the shapes.
  std::vector<TensorRef> refs;
  for (const HostArray* a : inputs) {
    TensorRef t;
    t.dtype = a->dtype;
    t.shape = a->shape;
    t.strides = contiguous_strides(a->shape);
    refs.push_back(std::move(t));
  }
  const ConvProblem p = problem(refs, nullptr);
  const HostArray& img = *inputs[static_cast<size_t>(s_.image_input)];
  const HostArray& flt = *inputs[static_cast<size_t>(1 - s_.image_input)];
  HostArray& out = outputs.at(0);
  const int64_t n_out = p.out_rows * p.out_cols;
  const bool floating = is_float(s_.out_dtype);

  // Each input element once, in the type the sums use.
  std::vector<double> fi, ff;
  std::vector<uint64_t> ui, uf;
  auto pos = [](int64_t r, int64_t c, int64_t rs, int64_t cs) { return r * rs + c * cs; };
  if (floating) {
    fi.resize(static_cast<size_t>(img.size()));
    ff.resize(static_cast<size_t>(flt.size()));
    for (int64_t i = 0; i < img.size(); ++i) fi[static_cast<size_t>(i)] = img.get_double(i);
    for (int64_t i = 0; i < flt.size(); ++i) ff[static_cast<size_t>(i)] = flt.get_double(i);
  } else {
    ui.resize(static_cast<size_t>(img.size()));
    uf.resize(static_cast<size_t>(flt.size()));
    for (int64_t i = 0; i < img.size(); ++i) ui[static_cast<size_t>(i)] = img.get_uint64(i);
    for (int64_t i = 0; i < flt.size(); ++i) uf[static_cast<size_t>(i)] = flt.get_uint64(i);
  }
  std::vector<double> fo(floating ? static_cast<size_t>(n_out) : 0);
  std::vector<uint64_t> uo(floating ? 0 : static_cast<size_t>(n_out));
  for (int64_t i = 0; i < p.out_rows; ++i) {
    for (int64_t j = 0; j < p.out_cols; ++j) {
      double fs = 0;
      uint64_t us = 0;
      for (int64_t a = 0; a < p.kh; ++a) {
        const int64_t r = ext_index(i + p.row0 + a, p.img_rows, p.boundary);
        for (int64_t b = 0; b < p.kw; ++b) {
          const int64_t c = ext_index(j + p.col0 + b, p.img_cols, p.boundary);
          const int64_t fr = p.flip ? p.kh - 1 - a : a, fc = p.flip ? p.kw - 1 - b : b;
          const int64_t fpos = pos(fr, fc, p.flt_row_stride, p.flt_col_stride);
          const bool in = r >= 0 && c >= 0;
          const int64_t ipos = in ? pos(r, c, p.img_row_stride, p.img_col_stride) : 0;
          if (floating) fs += (in ? fi[static_cast<size_t>(ipos)] : p.fill) * ff[static_cast<size_t>(fpos)];
          else us += (in ? ui[static_cast<size_t>(ipos)] : p.fill_bits) * uf[static_cast<size_t>(fpos)];
        }
      }
      if (floating) fo[static_cast<size_t>(i * p.out_cols + j)] = fs;
      else uo[static_cast<size_t>(i * p.out_cols + j)] = us;
    }
  }
  // Into the result dtype: floats rounded once from float64; integers truncated (wrapping).
  if (floating) {
    if (is_half(s_.out_dtype)) {
      ref::f64_to_half_storage(s_.out_dtype, fo.data(), out.data<uint16_t>(), n_out);
    } else if (s_.out_dtype == DType::Float32) {
      for (int64_t i = 0; i < n_out; ++i) out.data<float>()[i] = static_cast<float>(fo[static_cast<size_t>(i)]);
    } else {
      if (n_out > 0) std::memcpy(out.data<double>(), fo.data(), static_cast<size_t>(n_out) * sizeof(double));  // an empty result: no memory
    }
    return;
  }
  ref::with_storage_type(s_.out_dtype, [&](auto tag) {
    using S = typename decltype(tag)::type;
    S* o = out.data<S>();
    for (int64_t i = 0; i < n_out; ++i) {
      const uint64_t u = uo[static_cast<size_t>(i)];
      o[i] = s_.out_dtype == DType::Bool ? static_cast<S>(u != 0) : static_cast<S>(u);
    }
  });
}

}  // namespace cufuse::detail
