// cufuse/io.hpp: arrays to and from files, as NumPy's np.save / np.load / np.savez /
// np.savez_compressed / ndarray.tofile / np.fromfile do it.
//
//   .npy  save writes format 1.0 (2.0 when the header needs it) exactly as NumPy 2 does; an
//         F-contiguous array is written in Fortran order. load reads versions 1.0-3.0, every
//         dtype cufuse has, C or Fortran order (a Fortran-order file loads as the transposed
//         view NumPy gives), little- or big-endian. bfloat16 is written with the descr
//         'bfloat16' (NumPy reads it once ml_dtypes is imported).
//   .npz  a zip of .npy entries: savez stores them, savez_compressed deflates them (zlib);
//         load_npz returns every entry in archive order, names without '.npy'.
//   raw   tofile writes the bytes in C order; fromfile reads `count` items (-1: all there are)
//         from `offset` bytes in.
// As NumPy does, save and savez append '.npy' / '.npz' to a path that lacks it.
// Arrays are loaded into the current backend's memory (the current device, or host memory
// under the reference backend). Every malformed file (truncated data, a header that lies
// about its length, an unknown dtype descriptor, object arrays, a bad zip entry) is a
// cufuse::Error naming the file, the offset and what is wrong.
#pragma once
#include <cstdint>
#include <filesystem>
#include <string>
#include <utility>
#include <vector>

#include "cufuse/array.hpp"

namespace cufuse {

using NamedArrays = std::vector<std::pair<std::string, Array>>;

void save(const std::filesystem::path& file, const Array& a);
Array load(const std::filesystem::path& file);
void savez(const std::filesystem::path& file, const NamedArrays& arrays);
void savez_compressed(const std::filesystem::path& file, const NamedArrays& arrays);
NamedArrays load_npz(const std::filesystem::path& file);
void tofile(const Array& a, const std::filesystem::path& file);
Array fromfile(const std::filesystem::path& file, DType dtype, int64_t count = -1, int64_t offset = 0);

}  // namespace cufuse
