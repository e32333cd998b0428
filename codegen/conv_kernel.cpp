// codegen/conv_kernel.cpp: the direct convolution kernel (see conv_kernel.hpp): its tile
// configuration, CUDA source and parameter struct.
#include "codegen/conv_kernel.hpp"

#include <algorithm>

#include <fmt/format.h>

#include "codegen/expr_emitter.hpp"
#include "codegen/preamble.hpp"
#include "cufuse/error.hpp"

namespace cufuse::detail {

DType conv_accumulate_dtype(DType out) {
  if (out == DType::Float64) return DType::Float64;
  if (is_float(out)) return DType::Float32;
  return DType::UInt64;
}

namespace {

// The tile: TW x TY threads; each thread owns RY consecutive output rows of one column, so a
// block writes (TY * RY) x TW outputs. KHC filter rows and KWC filter columns are staged at
// a time (KHC = kh exactly when kh <= 32: the p-loop then needs no bound). One-row problems
// (NumPy's 1-D convolve) instead give each of TW threads RX consecutive outputs of the row
// (RX odd, so that the threads' shared-memory reads fall in distinct banks).
struct Tile {
  int tw, ty, ry, khc, kwc;
  bool exact_rows;
  int rx = 0;  // one-row kernel: outputs per thread (0: the 2-D kernel)
};

Tile choose_tile(const ConvProblem& c) {
  Tile t{};
  t.exact_rows = c.kh <= 32;
  t.khc = t.exact_rows ? static_cast<int>(std::max<int64_t>(c.kh, 1)) : 32;
  t.kwc = static_cast<int>(std::min<int64_t>((std::max<int64_t>(c.kw, 1) + 7) / 8 * 8, 32));
  // One row of one filter row (NumPy's 1-D convolve): a wide row of threads. An empty filter
  // (kh = 0: SciPy's 'valid' of two (0, n) inputs is (1, 1)) takes the 2-D kernel, whose
  // filter-row loop runs no times; the row kernel stages filter row 0 unconditionally.
  if (c.out_rows <= 1 && c.kh == 1) {
    t.tw = 256, t.ty = 1, t.ry = 1, t.rx = 5;
  } else {
    t.tw = 32, t.ty = 4, t.ry = 16;
    // Keep the staged tile within 48 KB of static shared memory.
    const int acc = itemsize(conv_accumulate_dtype(c.out_dtype));
    while (t.ry > 1 && ((t.ty * t.ry + t.khc - 1) * (t.tw + t.kwc - 1) + t.khc * t.kwc) * acc > 46 * 1024) t.ry /= 2;
  }
  return t;
}

// ext(img)[r, c] as the accumulation type, for one boundary rule.
std::string load_image_expr(const ConvProblem& c, const std::string& acc) {
  const std::string elem = load_expr(c.img_dtype, "p.img[r * p.is0 + q * p.is1]");
  switch (c.boundary) {
    case ConvBoundary::Fill:
      return fmt::format(
          "    {} v = p.fill;\n"
          "    if (r >= 0 && r < p.m1 && q >= 0 && q < p.n1) v = cf_cast<{}>({});\n",
          acc, acc, elem);
    case ConvBoundary::Wrap:
      return fmt::format(
          "    if (r < 0 || r >= p.m1) {{ r %= p.m1; if (r < 0) r += p.m1; }}\n"
          "    if (q < 0 || q >= p.n1) {{ q %= p.n1; if (q < 0) q += p.n1; }}\n"
          "    const {} v = cf_cast<{}>({});\n",
          acc, acc, elem);
    case ConvBoundary::Symm:
      return fmt::format(
          "    if (r < 0 || r >= p.m1) {{ r %= 2 * p.m1; if (r < 0) r += 2 * p.m1; if (r >= p.m1) r = 2 * p.m1 - 1 - r; }}\n"
          "    if (q < 0 || q >= p.n1) {{ q %= 2 * p.n1; if (q < 0) q += 2 * p.n1; if (q >= p.n1) q = 2 * p.n1 - 1 - q; }}\n"
          "    const {} v = cf_cast<{}>({});\n",
          acc, acc, elem);
  }
  throw InternalError("conv kernel: bad boundary");
}

// `a = a + x * w` in the accumulation type: fused for floats (as cuBLAS does), wrapping for integers.
std::string mac(DType acc_t, const std::string& a, const std::string& x, const std::string& w) {
  if (acc_t == DType::Float64) return fmt::format("{} = __fma_rn({}, {}, {});", a, x, w, a);
  if (acc_t == DType::Float32) return fmt::format("{} = __fmaf_rn({}, {}, {});", a, x, w, a);
  return fmt::format("{} += {} * {};", a, x, w);
}

// The filter value wf[fr, fc] (fr, fc: chunk-relative in p0 + ea, q0 + eb) into v.
std::string load_filter(const ConvProblem& c, const std::string& acc) {
  return fmt::format("      long long fr = p0 + ea, fc = q0 + eb;\n"
                     "      {}\n"
                     "      v = cf_cast<{}>({});\n",
                     c.flip ? "fr = p.kh - 1 - fr; fc = p.kw - 1 - fc;" : "", acc,
                     load_expr(c.flt_dtype, "p.flt[fr * p.fs0 + fc * p.fs1]"));
}

std::string out_value(const ConvProblem& c, const std::string& v) {
  return store_expr(c.out_dtype, is_half(c.out_dtype) ? v : fmt::format("cf_cast<{}>({})", reg_type(c.out_dtype), v));
}

// Staging of one chunk, shared by both kernels: the input tile rows [i0 + row0 + p0, + SH)
// and columns [j0 + col0 + q0, + SW) of the extended image into s_in, the chunk's ch x cw
// filter taps (as read in correlation form; zero past the filter) into s_w, then a barrier.
std::string stage(const ConvProblem& c, const std::string& acc) {
  return fmt::format(
      "    for (int e = threadIdx.x; e < SH * SW; e += TW * TY) {{\n"
      "     const int ea = e / SW, eb = e % SW;\n"
      "     long long r = i0 + p.row0 + p0 + ea, q = j0 + p.col0 + q0 + eb;\n"
      "{}"
      "     s_in[ea][eb] = v;\n"
      "    }}\n"
      "    for (int e = threadIdx.x; e < KHC * KWC; e += TW * TY) {{\n"
      "     const int ea = e / KWC, eb = e % KWC;\n"
      "     acc_t v = acc_t(0);\n"
      "     if (ea < ch && eb < cw) {{\n"
      "{}"
      "     }}\n"
      "     s_w[ea][eb] = v;\n"
      "    }}\n"
      "    __syncthreads();\n",
      load_image_expr(c, acc), load_filter(c, acc));
}

// One row: thread t owns outputs t*RX .. t*RX+RX-1 of the block's TW*RX and keeps a window
// of RX staged inputs in registers, sliding it one input per filter tap: per tap one
// shared load of the input, one broadcast load of the tap, RX multiply-adds. The results
// go out through shared memory, coalesced.
std::string body_row(const ConvProblem& c, const Tile& t) {
  const DType acc_t = conv_accumulate_dtype(c.out_dtype);
  const std::string acc = reg_type(acc_t);
  return fmt::format(
      "  typedef {acc} acc_t;\n"
      "  constexpr int TW = {tw}, TY = 1, RX = {rx}, KHC = 1, KWC = {kwc};\n"
      "  constexpr int SH = 1, SW = TW * RX + KWC - 1;\n"
      "  __shared__ acc_t s_in[SH][SW];\n"
      "  __shared__ acc_t s_w[KHC][KWC];\n"
      "  const long long i0 = 0, j0 = (long long)blockIdx.x * (TW * RX), p0 = 0;\n"
      "  const int ch = 1;\n"
      "  acc_t a[RX];\n"
      "#pragma unroll\n"
      "  for (int r = 0; r < RX; ++r) a[r] = acc_t(0);\n"
      "  for (long long q0 = 0; q0 < p.kw; q0 += KWC) {{\n"
      "    const int cw = (int)(p.kw - q0 < KWC ? p.kw - q0 : KWC);\n"
      "{stage}"
      "    acc_t x[RX];\n"
      "#pragma unroll\n"
      "    for (int r = 0; r < RX; ++r) x[r] = s_in[0][threadIdx.x * RX + r];\n"
      "    for (int q = 0; q < cw; ++q) {{\n"
      "     const acc_t w = s_w[0][q];\n"
      "#pragma unroll\n"
      "     for (int r = 0; r < RX; ++r) {mac}\n"
      "#pragma unroll\n"
      "     for (int r = 0; r + 1 < RX; ++r) x[r] = x[r + 1];\n"
      "     if (q + 1 < cw) x[RX - 1] = s_in[0][threadIdx.x * RX + RX + q];\n"
      "    }}\n"
      "    __syncthreads();\n"
      "  }}\n"
      "#pragma unroll\n"
      "  for (int r = 0; r < RX; ++r) s_in[0][threadIdx.x * RX + r] = a[r];\n"
      "  __syncthreads();\n"
      "  for (int e = threadIdx.x; e < TW * RX; e += TW) {{\n"
      "   const long long j = j0 + e;\n"
      "   if (j < p.n_out) p.out[j] = {store};\n"
      "  }}\n",
      fmt::arg("acc", acc), fmt::arg("tw", t.tw), fmt::arg("rx", t.rx), fmt::arg("kwc", t.kwc),
      fmt::arg("stage", stage(c, acc)), fmt::arg("mac", mac(acc_t, "a[r]", "x[r]", "w")),
      fmt::arg("store", out_value(c, "s_in[0][e]")));
}

std::string body(const ConvProblem& c, const Tile& t) {
  if (t.rx > 0) return body_row(c, t);
  const DType acc_t = conv_accumulate_dtype(c.out_dtype);
  const std::string acc = reg_type(acc_t);
  return fmt::format(
      "  typedef {acc} acc_t;\n"
      "  constexpr int TW = {tw}, TY = {ty}, RY = {ry}, KHC = {khc}, KWC = {kwc};\n"
      "  constexpr int SH = TY * RY + KHC - 1, SW = TW + KWC - 1;\n"
      "  __shared__ {acc} s_in[SH][SW];\n"
      "  __shared__ {acc} s_w[KHC][KWC];\n"
      "  const int tx = threadIdx.x % TW, ty = threadIdx.x / TW;\n"
      "  const long long i0 = (long long)blockIdx.y * (TY * RY), j0 = (long long)blockIdx.x * TW;\n"
      "  {acc} a[RY];\n"
      "#pragma unroll\n"
      "  for (int r = 0; r < RY; ++r) a[r] = acc_t(0);\n"
      "  for (long long p0 = 0; p0 < p.kh; p0 += KHC) {{\n"
      "   const int ch = (int)(p.kh - p0 < KHC ? p.kh - p0 : KHC);\n"
      "   for (long long q0 = 0; q0 < p.kw; q0 += KWC) {{\n"
      "    const int cw = (int)(p.kw - q0 < KWC ? p.kw - q0 : KWC);\n"
      "{stage}"
      "    for (int q = 0; q < cw; ++q) {{\n"
      "     {acc} w[KHC];\n"
      "#pragma unroll\n"
      "     for (int k = 0; k < KHC; ++k) w[k] = s_w[k][q];\n"
      "#pragma unroll\n"
      "     for (int t = 0; t < RY + KHC - 1; ++t) {{\n"
      "      const {acc} v = s_in[ty * RY + t][tx + q];\n"
      "#pragma unroll\n"
      "      for (int r = 0; r < RY; ++r) {{\n"
      "       const int k = t - r;\n"
      "       if (k >= 0 && k < KHC{bound}) {mac}\n"
      "      }}\n"
      "     }}\n"
      "    }}\n"
      "    __syncthreads();\n"
      "   }}\n"
      "  }}\n"
      "  const long long j = j0 + tx;\n"
      "  if (j >= p.n_out) return;\n"
      "#pragma unroll\n"
      "  for (int r = 0; r < RY; ++r) {{\n"
      "   const long long i = i0 + ty * RY + r;\n"
      "   if (i < p.m_out) p.out[i * p.n_out + j] = {store};\n"
      "  }}\n",
      fmt::arg("tw", t.tw), fmt::arg("ty", t.ty), fmt::arg("ry", t.ry), fmt::arg("khc", t.khc),
      fmt::arg("kwc", t.kwc), fmt::arg("acc", acc),
      fmt::arg("stage", stage(c, acc)),
      fmt::arg("bound", t.exact_rows ? "" : " && k < ch"), fmt::arg("mac", mac(acc_t, "a[r]", "v", "w[k]")),
      fmt::arg("store", out_value(c, "a[r]")));
}

// The parameter struct: its declaration and, for c's pointers and sizes, its bytes.
ParamLayout conv_params_of(const ConvProblem& c) {
  const DType acc_t = conv_accumulate_dtype(c.out_dtype);
  const std::string acc = reg_type(acc_t);
  ParamLayout pl;
  const size_t o_img = pl.add(fmt::format("const {}*", storage_type(c.img_dtype)), 8, "img");
  const size_t o_flt = pl.add(fmt::format("const {}*", storage_type(c.flt_dtype)), 8, "flt");
  const size_t o_out = pl.add(fmt::format("{}*", storage_type(c.out_dtype)), 8, "out");
  const size_t o_is0 = pl.add("long long", 8, "is0"), o_is1 = pl.add("long long", 8, "is1");
  const size_t o_m1 = pl.add("long long", 8, "m1"), o_n1 = pl.add("long long", 8, "n1");
  const size_t o_fs0 = pl.add("long long", 8, "fs0"), o_fs1 = pl.add("long long", 8, "fs1");
  const size_t o_kh = pl.add("long long", 8, "kh"), o_kw = pl.add("long long", 8, "kw");
  const size_t o_mo = pl.add("long long", 8, "m_out"), o_no = pl.add("long long", 8, "n_out");
  const size_t o_r0 = pl.add("long long", 8, "row0"), o_c0 = pl.add("long long", 8, "col0");
  const size_t o_fill = pl.add(acc, static_cast<size_t>(itemsize(acc_t)), "fill");
  pl.set(o_img, c.img);
  pl.set(o_flt, c.flt);
  pl.set(o_out, c.out);
  pl.set(o_is0, static_cast<long long>(c.img_row_stride));
  pl.set(o_is1, static_cast<long long>(c.img_col_stride));
  pl.set(o_m1, static_cast<long long>(c.img_rows));
  pl.set(o_n1, static_cast<long long>(c.img_cols));
  pl.set(o_fs0, static_cast<long long>(c.flt_row_stride));
  pl.set(o_fs1, static_cast<long long>(c.flt_col_stride));
  pl.set(o_kh, static_cast<long long>(c.kh));
  pl.set(o_kw, static_cast<long long>(c.kw));
  pl.set(o_mo, static_cast<long long>(c.out_rows));
  pl.set(o_no, static_cast<long long>(c.out_cols));
  pl.set(o_r0, static_cast<long long>(c.row0));
  pl.set(o_c0, static_cast<long long>(c.col0));
  if (acc_t == DType::Float64) pl.set(o_fill, c.fill);
  else if (acc_t == DType::Float32) pl.set(o_fill, static_cast<float>(c.fill));
  else pl.set(o_fill, static_cast<unsigned long long>(c.fill_bits));
  return pl;
}

}  // namespace

std::vector<unsigned char> conv_param_bytes(const ConvProblem& c) { return conv_params_of(c).bytes(); }

KernelSpec emit_conv_kernel(const ConvProblem& c) {
  if ((c.boundary != ConvBoundary::Fill) && (c.img_rows <= 0 || c.img_cols <= 0) && c.out_rows * c.out_cols > 0)
    throw InternalError("conv kernel: a wrapped or symmetric boundary needs a non-empty image");
  const Tile t = choose_tile(c);
  KernelSpec k;
  k.name = fmt::format("cf_conv_{}_{}_{}_{}{}_{}x{}{}_{}x{}x{}{}", name(c.img_dtype), name(c.flt_dtype),
                       name(c.out_dtype), c.flip ? "conv" : "corr", boundary_name(c.boundary), t.khc,
                       t.kwc, t.exact_rows ? "" : "c", t.tw, t.ty, t.ry, t.rx > 0 ? fmt::format("_row{}", t.rx) : "");
  const ParamLayout pl = conv_params_of(c);
  k.source = kernel_source(k.name, pl.decl(), t.tw * t.ty, body(c, t));
  k.params = pl.bytes();
  const int64_t row_tiles = (c.out_rows + t.ty * t.ry - 1) / (t.ty * t.ry);
  const int64_t cols_per_block = t.tw * std::max(t.rx, 1);
  const int64_t col_tiles = (c.out_cols + cols_per_block - 1) / cols_per_block;
  if (row_tiles > 65535) throw ValueError(fmt::format("convolution: {} output rows exceed the kernel's grid", c.out_rows));
  k.dims.grid[0] = static_cast<unsigned>(col_tiles);
  k.dims.grid[1] = static_cast<unsigned>(row_tiles);
  k.dims.block[0] = static_cast<unsigned>(t.tw * t.ty);
  k.numel = c.out_rows * c.out_cols;
  k.summary = fmt::format("direct {}, {} boundary, tile {}x{} outputs{}, filter chunk {}x{}{}",
                          c.flip ? "convolution" : "correlation", boundary_name(c.boundary), t.ty * t.ry,
                          cols_per_block, t.rx > 0 ? fmt::format(" ({} per thread, a sliding window)", t.rx) : "",
                          t.khc, t.kwc, t.exact_rows ? "" : " (row-chunked)");
  return k;
}

}  // namespace cufuse::detail
