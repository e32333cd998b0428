// src/io/npy_format.hpp: the .npy format itself, apart from files and arrays: writing a
// header the way NumPy 2 writes it (byte for byte), and reading one defensively (versions
// 1.0-3.0, NumPy's dtype descriptors in either byte order, C or Fortran order), checking
// that the data it announces is there before anyone allocates for it.
#pragma once
#include <cstdint>
#include <string>
#include <string_view>

#include "cufuse/dtype.hpp"
#include "cufuse/shape.hpp"
#include "io/byte_source.hpp"

namespace cufuse::io {

struct NpyHeader {
  int major = 1, minor = 0;
  DType dtype = DType::Float64;
  bool swap = false;     // the data are big-endian: bytes to swap on this (little-endian) host
  bool fortran = false;  // column-major data
  Shape shape;
  uint64_t data_offset = 0;  // where the data start in the source
  uint64_t data_bytes = 0;   // numel(shape) * itemsize
  std::string descr;         // as the file spells it, for messages
};

// The descriptor NumPy writes for a dtype: '|b1', '<i4', '<f2', ...; bfloat16 is 'bfloat16'
// (NumPy reads that name once ml_dtypes is imported; NumPy itself writes ml_dtypes' bfloat16
// as the anonymous '<V2').
std::string npy_descr(DType t);
// Parses a descriptor ('<f4', '>i8', '|b1', '=u2', 'float32', 'bfloat16', ...); throws TypeError
// naming it (and `where`) for what cufuse has no dtype for (complex, object, strings, ...).
DType parse_npy_descr(std::string_view descr, bool& swap, std::string_view where);

// Magic, version, header length and the padded header dict, as np.save writes them: version
// 1.0, or 2.0 when the header does not fit 1.0's 16-bit length.
std::string npy_header_bytes(DType t, const Shape& shape, bool fortran);

// Reads and checks the header at the start of `src`, and that the data it announces are all
// there (ValueError naming the source, the offset and what is wrong otherwise).
NpyHeader read_npy_header(const ByteSource& src);

// Reverses the bytes of each of `count` items of `itemsize` bytes.
void byteswap(void* data, uint64_t count, int itemsize);

}  // namespace cufuse::io
