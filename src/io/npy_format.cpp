// src/io/npy_format.cpp: .npy headers: NumPy 2's writer (lib/_format_impl.py: sorted keys,
// repr of the values, 21 spare characters for the growth axis, padding to 64 bytes) and a
// small parser for the Python literal the header holds (a dict of a string, a bool and a
// tuple of ints; Python 2's 'L' suffixes accepted), with bounds and overflow checks.
#include "io/npy_format.hpp"

#include <algorithm>
#include <cctype>
#include <cstring>
#include <limits>

#include <fmt/format.h>

#include "cufuse/error.hpp"

namespace cufuse::io {

namespace {
constexpr char kMagic[] = "\x93NUMPY";
constexpr size_t kMagicLen = 6;
constexpr uint64_t kMaxHeader = uint64_t(1) << 20;  // NumPy refuses past 10000 by default
constexpr int kMaxDims = 64;                         // NumPy 2's NPY_MAXDIMS

std::string printable(std::string_view s, size_t max = 24) {
  std::string out;
  for (size_t i = 0; i < s.size() && i < max; ++i) {
    const unsigned char c = static_cast<unsigned char>(s[i]);
    if (c >= 0x20 && c < 0x7f && c != '\\') out += static_cast<char>(c);
    else out += fmt::format("\\x{:02x}", c);
  }
  if (s.size() > max) out += "...";
  return out;
}

// The header literal: {'descr': <str>, 'fortran_order': <bool>, 'shape': <tuple of ints>}.
class HeaderParser {
 public:
  HeaderParser(std::string_view text, uint64_t base, const ByteSource& src) : t_(text), base_(base), src_(src) {}

  void parse(std::string& descr, bool& fortran, Shape& shape) {
    bool have_descr = false, have_fortran = false, have_shape = false;
    ws();
    expect('{', "'{' opening the header dict");
    for (;;) {
      ws();
      if (peek() == '}') { ++p_; break; }
      const size_t key_at = p_;
      std::string key = string_lit("a dict key (a quoted string)");
      ws();
      expect(':', "':' after a dict key");
      ws();
      if (key == "descr") {
        dup(have_descr, key, key_at);
        if (peek() == '[')
          fail(p_, fmt::format("{}: structured dtypes (a list descr) are not supported; cufuse arrays have one "
                               "numeric dtype", src_.name()));
        if (peek() != '\'' && peek() != '"') fail(p_, "descr: expected a dtype string such as '<f4'");
        descr = string_lit("the descr string");
      } else if (key == "fortran_order") {
        dup(have_fortran, key, key_at);
        if (word("True")) fortran = true;
        else if (word("False")) fortran = false;
        else fail(p_, "fortran_order: expected True or False");
      } else if (key == "shape") {
        dup(have_shape, key, key_at);
        shape = tuple();
      } else {
        fail(key_at, fmt::format("unexpected key '{}' (a .npy header has exactly 'descr', 'fortran_order' and "
                                 "'shape')", printable(key)));
      }
      ws();
      if (peek() == ',') { ++p_; continue; }
      ws();
      if (peek() == '}') { ++p_; break; }
      fail(p_, "expected ',' or '}' in the header dict");
    }
    ws();
    if (p_ != t_.size())
      fail(p_, "bytes after the header dict (the header length field may be wrong: the header runs into the data)");
    const char* missing = !have_descr ? "descr" : !have_fortran ? "fortran_order" : !have_shape ? "shape" : nullptr;
    if (missing) fail(p_, fmt::format("the header dict has no '{}' key", missing));
  }

 private:
  [[noreturn]] void fail(size_t at, const std::string& what) const {
    throw ValueError(fmt::format("malformed .npy header in {} at offset {}: {} (found '{}')", src_.name(),
                                 base_ + at, what, printable(t_.substr(std::min(at, t_.size())))));
  }
  char peek() const { return p_ < t_.size() ? t_[p_] : '\0'; }
  void ws() {
    while (p_ < t_.size() && (t_[p_] == ' ' || t_[p_] == '\t' || t_[p_] == '\n' || t_[p_] == '\r')) ++p_;
  }
  void expect(char c, const char* what) {
    if (peek() != c) fail(p_, fmt::format("expected {}", what));
    ++p_;
  }
  bool word(std::string_view w) {
    if (t_.substr(p_, w.size()) != w) return false;
    const char next = p_ + w.size() < t_.size() ? t_[p_ + w.size()] : '\0';
    if (std::isalnum(static_cast<unsigned char>(next)) || next == '_') return false;
    p_ += w.size();
    return true;
  }
  void dup(bool& seen, const std::string& key, size_t at) {
    if (seen) fail(at, fmt::format("the key '{}' appears twice", key));
    seen = true;
  }
  std::string string_lit(const char* what) {
    const char q = peek();
    if (q != '\'' && q != '"') fail(p_, fmt::format("expected {}", what));
    const size_t start = p_++;
    std::string out;
    while (p_ < t_.size() && t_[p_] != q) {
      char c = t_[p_++];
      if (c == '\\') {
        if (p_ >= t_.size()) break;
        c = t_[p_++];
      }
      if (c == '\n') fail(start, "a string runs past the end of its line");
      out += c;
      if (out.size() > 256) fail(start, "a string longer than 256 characters");
    }
    if (p_ >= t_.size()) fail(start, "a string is not closed (the header may be cut short by its length field)");
    ++p_;
    return out;
  }
  int64_t integer() {
    const size_t start = p_;
    if (peek() == '+') ++p_;
    if (peek() == '-') fail(start, "negative dimensions are not allowed");
    if (!std::isdigit(static_cast<unsigned char>(peek()))) fail(start, "expected a dimension (an integer)");
    uint64_t v = 0;
    while (std::isdigit(static_cast<unsigned char>(peek()))) {
      const uint64_t d = static_cast<uint64_t>(t_[p_++] - '0');
      if (v > (uint64_t(std::numeric_limits<int64_t>::max()) - d) / 10) fail(start, "a dimension too large for int64");
      v = v * 10 + d;
    }
    if (peek() == 'L' || peek() == 'l') ++p_;  // Python 2 longs (NumPy's _filter_header)
    return static_cast<int64_t>(v);
  }
  Shape tuple() {
    const size_t start = p_;
    expect('(', "'(' opening the shape tuple");
    Shape s;
    bool comma_after_last = false;
    for (;;) {
      ws();
      if (peek() == ')') { ++p_; break; }
      if (static_cast<int>(s.size()) >= kMaxDims) fail(start, fmt::format("more than {} dimensions", kMaxDims));
      s.push_back(integer());
      ws();
      comma_after_last = false;
      if (peek() == ',') { ++p_; comma_after_last = true; continue; }
      ws();
      if (peek() == ')') { ++p_; break; }
      fail(p_, "expected ',' or ')' in the shape tuple");
    }
    // Python: (3) is the int 3, not a tuple.
    if (s.size() == 1 && !comma_after_last) fail(start, "the shape is not a tuple ('(n)' is an int: write '(n,)')");
    return s;
  }

  std::string_view t_;
  uint64_t base_;
  const ByteSource& src_;
  size_t p_ = 0;
};

}  // namespace

std::string npy_descr(DType t) {
  switch (t) {
    case DType::Bool: return "|b1";
    case DType::Int8: return "|i1";
    case DType::UInt8: return "|u1";
    case DType::Int16: return "<i2";
    case DType::Int32: return "<i4";
    case DType::Int64: return "<i8";
    case DType::UInt16: return "<u2";
    case DType::UInt32: return "<u4";
    case DType::UInt64: return "<u8";
    case DType::Float16: return "<f2";
    case DType::BFloat16: return "bfloat16";
    case DType::Float32: return "<f4";
    case DType::Float64: return "<f8";
    case DType::Complex64: return "<c8";
    case DType::Complex128: return "<c16";
  }
  throw InternalError("npy_descr: unknown dtype");
}

DType parse_npy_descr(std::string_view d, bool& swap, std::string_view where) {
  const std::string_view full = d;
  swap = false;
  char order = '=';
  if (!d.empty() && (d[0] == '<' || d[0] == '>' || d[0] == '|' || d[0] == '=' || d[0] == '!')) {
    order = d[0];
    d.remove_prefix(1);
  }
  auto bad = [&](const std::string& why) -> TypeError {
    return TypeError(fmt::format("{}: dtype descriptor '{}' {}", where, printable(full, 40), why));
  };
  // NumPy's names (np.dtype accepts them; ml_dtypes registers bfloat16).
  static constexpr std::pair<std::string_view, DType> names[] = {
      {"bool", DType::Bool},       {"int8", DType::Int8},       {"int16", DType::Int16},
      {"int32", DType::Int32},     {"int64", DType::Int64},     {"uint8", DType::UInt8},
      {"uint16", DType::UInt16},   {"uint32", DType::UInt32},   {"uint64", DType::UInt64},
      {"float16", DType::Float16}, {"bfloat16", DType::BFloat16}, {"float32", DType::Float32},
      {"float64", DType::Float64}, {"complex64", DType::Complex64}, {"complex128", DType::Complex128}};
  for (const auto& [n, t] : names)
    if (d == n) {
      if (order == '>' || order == '!') swap = itemsize(t) > 1;
      return t;
    }
  if (d.empty()) throw bad("is empty");
  const char kind = d[0];
  int bytes = 0;
  const std::string_view digits = d.substr(1);
  if (digits.empty()) bytes = -1;
  for (char c : digits) {
    if (!std::isdigit(static_cast<unsigned char>(c)) || bytes > 1000) {
      bytes = -2;
      break;
    }
    bytes = bytes * 10 + (c - '0');
  }
  if (kind == 'O') throw ValueError(fmt::format("{}: object arrays (descr '{}') cannot be loaded: they hold pickled "
                                                "Python objects, and cufuse has no object dtype", where, printable(full)));
  if (kind == 'V')
    throw bad("is raw void bytes (NumPy writes ml_dtypes' bfloat16 as '<V2': save it with the descr 'bfloat16', as "
              "cufuse does, or read the data with fromfile(path, bfloat16, count, offset))");
  if (kind == 'U' || kind == 'S' || kind == 'a') throw bad("is a string dtype: cufuse has none");
  if (kind == 'M' || kind == 'm') throw bad("is a datetime/timedelta dtype: cufuse has none");
  DType t;
  if (kind == 'b' && bytes == 1) t = DType::Bool;
  else if (kind == 'i' && bytes == 1) t = DType::Int8;
  else if (kind == 'i' && bytes == 2) t = DType::Int16;
  else if (kind == 'i' && bytes == 4) t = DType::Int32;
  else if (kind == 'i' && bytes == 8) t = DType::Int64;
  else if (kind == 'u' && bytes == 1) t = DType::UInt8;
  else if (kind == 'u' && bytes == 2) t = DType::UInt16;
  else if (kind == 'u' && bytes == 4) t = DType::UInt32;
  else if (kind == 'u' && bytes == 8) t = DType::UInt64;
  else if (kind == 'f' && bytes == 2) t = DType::Float16;
  else if (kind == 'f' && bytes == 4) t = DType::Float32;
  else if (kind == 'f' && bytes == 8) t = DType::Float64;
  else if (kind == 'f' && (bytes == 12 || bytes == 16)) throw bad("is long double: cufuse has no such dtype");
  else if (kind == 'c' && bytes == 8) t = DType::Complex64;
  else if (kind == 'c' && bytes == 16) t = DType::Complex128;
  else if (kind == 'c' && (bytes == 24 || bytes == 32)) throw bad("is complex long double: cufuse has no such dtype");
  else throw bad("is unknown (cufuse reads b1, i1-i8, u1-u8, f2, f4, f8, c8, c16 and bfloat16, in either byte order)");
  swap = (order == '>' || order == '!') && itemsize(t) > 1;
  return t;
}

std::string npy_header_bytes(DType t, const Shape& shape, bool fortran) {
  std::string dict = fmt::format("{{'descr': '{}', 'fortran_order': {}, 'shape': (", npy_descr(t),
                                 fortran ? "True" : "False");
  for (size_t i = 0; i < shape.size(); ++i) dict += (i ? ", " : "") + std::to_string(shape[i]);
  if (shape.size() == 1) dict += ",";
  dict += "), }";
  if (!shape.empty()) {
    const size_t growth = std::to_string(shape[fortran ? shape.size() - 1 : 0]).size();
    dict.append(growth < 21 ? 21 - growth : 0, ' ');
  }
  const size_t hlen = dict.size() + 1;
  for (int major = 1; major <= 2; ++major) {
    const size_t prefix = kMagicLen + 2 + (major == 1 ? 2 : 4);
    const size_t pad = 64 - (prefix + hlen) % 64;
    const uint64_t field = hlen + pad;
    if (major == 1 && field > 0xffff) continue;
    std::string out(kMagic, kMagicLen);
    out += static_cast<char>(major);
    out += '\0';
    for (int b = 0; b < (major == 1 ? 2 : 4); ++b) out += static_cast<char>((field >> (8 * b)) & 0xff);
    out += dict;
    out.append(pad, ' ');
    out += '\n';
    return out;
  }
  throw ValueError("npy header too large");  // 4 GiB of header: unreachable with 64 dims
}

NpyHeader read_npy_header(const ByteSource& src) {
  NpyHeader h;
  unsigned char pre[8] = {};
  const size_t have = src.size() < 8 ? static_cast<size_t>(src.size()) : 8;
  src.read(0, pre, have, "the magic string");
  if (have == 0 || std::memcmp(pre, kMagic, std::min(have, kMagicLen)) != 0) {
    if (have >= 2 && pre[0] == 'P' && pre[1] == 'K')
      throw ValueError(fmt::format("{} is a zip archive (.npz), not a .npy file: read it with load_npz", src.name()));
    throw ValueError(fmt::format("{} is not a .npy file: it starts with '{}', not the magic '\\x93NUMPY'", src.name(),
                                 printable(std::string_view(reinterpret_cast<const char*>(pre), std::min(have, kMagicLen)))));
  }
  src.read(0, pre, 8, "the magic string and format version");
  h.major = pre[6];
  h.minor = pre[7];
  if (!((h.major == 1 || h.major == 2 || h.major == 3) && h.minor == 0))
    throw ValueError(fmt::format("{}: .npy format version {}.{} is not supported (1.0, 2.0 and 3.0 are)", src.name(),
                                 h.major, h.minor));
  const int len_bytes = h.major == 1 ? 2 : 4;
  unsigned char lb[4] = {};
  src.read(8, lb, static_cast<size_t>(len_bytes), "the header length field");
  uint64_t hlen = 0;
  for (int b = 0; b < len_bytes; ++b) hlen |= uint64_t(lb[b]) << (8 * b);
  const uint64_t hstart = 8 + static_cast<uint64_t>(len_bytes);
  if (!src.contains(hstart, hlen))
    throw ValueError(fmt::format("{}: the header length field (offset 8) says {} bytes, but only {} bytes follow it at "
                                 "offset {}", src.name(), hlen, src.size() - hstart, hstart));
  if (hlen > kMaxHeader)
    throw ValueError(fmt::format("{}: the header length field (offset 8) says {} bytes, more than the {} a .npy header "
                                 "may have here", src.name(), hlen, kMaxHeader));
  std::string text(static_cast<size_t>(hlen), '\0');
  src.read(hstart, text.data(), text.size(), "the header");
  HeaderParser(text, hstart, src).parse(h.descr, h.fortran, h.shape);
  h.dtype = parse_npy_descr(h.descr, h.swap, src.name());
  h.data_offset = hstart + hlen;

  // Overflow-safe element and byte counts.
  uint64_t n = 1;
  bool zero = false;
  for (auto d : h.shape) zero = zero || d == 0;
  const uint64_t isz = static_cast<uint64_t>(itemsize(h.dtype));
  for (auto d : h.shape) {
    if (zero) break;
    if (n > (uint64_t(std::numeric_limits<int64_t>::max()) / isz) / static_cast<uint64_t>(d))
      throw ValueError(fmt::format("{}: shape {} of {} is too large (its byte count does not fit in int64)",
                                   src.name(), to_string(h.shape), name(h.dtype)));
    n *= static_cast<uint64_t>(d);
  }
  h.data_bytes = zero ? 0 : n * isz;
  if (!src.contains(h.data_offset, h.data_bytes))
    throw ValueError(fmt::format("{} is truncated: shape {} of {} needs {} bytes of data from offset {}, but only {} "
                                 "are there", src.name(), to_string(h.shape), name(h.dtype), h.data_bytes,
                                 h.data_offset, src.size() - h.data_offset));
  return h;
}

void byteswap(void* data, uint64_t count, int isz) {
  auto* p = static_cast<unsigned char*>(data);
  for (uint64_t i = 0; i < count; ++i, p += isz) std::reverse(p, p + isz);
}

}  // namespace cufuse::io
