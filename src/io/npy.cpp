// src/io/npy.cpp: save / load (.npy) and tofile / fromfile (raw bytes): files in and out of
// arrays, through the format of npy_format.hpp and the host bytes of host_bytes.hpp.
#include <algorithm>
#include <cerrno>
#include <cstdio>
#include <cstring>
#include <system_error>

#include <fmt/format.h>

#include "cufuse/io.hpp"
#include "io/byte_source.hpp"
#include "io/file_sink.hpp"
#include "io/host_bytes.hpp"
#include "io/npy_format.hpp"

namespace cufuse {

void save(const std::filesystem::path& file, const Array& a) {
  if (!a.defined()) throw ValueError("save: the Array handle is empty (default-constructed)");
  const auto path = io::with_suffix(file, ".npy");
  const bool fortran = io::fortran_only(a);
  Shape shape = a.shape();
  const std::string header = io::npy_header_bytes(a.dtype(), shape, fortran);
  const auto data = io::host_bytes(a, fortran);
  io::FileSink out(path);
  out.write(header.data(), header.size());
  out.write(data.data(), data.size());
  out.close();
}

Array load(const std::filesystem::path& file) {
  io::FileSource src(file);
  const io::NpyHeader h = io::read_npy_header(src);
  return io::array_from_source(src, h.data_offset, h.dtype, h.shape, h.swap, h.fortran);
}

void tofile(const Array& a, const std::filesystem::path& file) {
  if (!a.defined()) throw ValueError("tofile: the Array handle is empty (default-constructed)");
  const auto data = io::host_bytes(a, false);
  io::FileSink out(file);
  out.write(data.data(), data.size());
  out.close();
}

Array fromfile(const std::filesystem::path& file, DType dtype, int64_t count, int64_t offset) {
  io::FileSource src(file);
  if (count < -1) throw ValueError(fmt::format("fromfile {}: count must be -1 (all) or at least 0, got {}", src.name(), count));
  if (offset < 0 || static_cast<uint64_t>(offset) > src.size())
    throw ValueError(fmt::format("fromfile {}: offset {} lies outside the file ({} bytes)", src.name(), offset, src.size()));
  const uint64_t avail = (src.size() - static_cast<uint64_t>(offset)) / static_cast<uint64_t>(itemsize(dtype));
  // NumPy reads what is there when count asks for more.
  const uint64_t n = count < 0 ? avail : std::min<uint64_t>(avail, static_cast<uint64_t>(count));
  return io::array_from_source(src, static_cast<uint64_t>(offset), dtype, Shape{static_cast<int64_t>(n)}, false, false);
}

}  // namespace cufuse
