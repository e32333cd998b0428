// src/io/host_bytes.hpp: what the file formats need of arrays: an array's bytes on the host
// in C or Fortran order, and an array made from bytes read out of a source (into host memory
// directly under the reference backend, else uploaded to the current device).
#pragma once
#include <cstdint>
#include <vector>

#include "cufuse/array.hpp"
#include "io/byte_source.hpp"

namespace cufuse::io {

// NumPy's choice of fortran_order for np.save: the array is F-contiguous and not C-contiguous
// (materializes a lazy array, which comes out C-contiguous).
bool fortran_only(const Array& a);
// The array's elements, little-endian, in C order (in Fortran order when `fortran`).
std::vector<unsigned char> host_bytes(const Array& a, bool fortran);
// `numel(shape) * itemsize` bytes at `offset` of `src` as an array: byte-swapped when `swap`,
// bools normalized to 0/1, and a Fortran-order block returned as the transposed view of its
// C-order reading, as NumPy returns it. The caller has checked that the bytes are there.
Array array_from_source(const ByteSource& src, uint64_t offset, DType dtype, const Shape& shape, bool swap,
                        bool fortran);

}  // namespace cufuse::io
