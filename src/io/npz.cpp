// src/io/npz.cpp: savez / savez_compressed / load_npz: .npy entries in a zip archive
// (zip.hpp), named '<name>.npy' as np.savez names them.
#include <set>

#include <fmt/format.h>

#include "cufuse/io.hpp"
#include "io/byte_source.hpp"
#include "io/file_sink.hpp"
#include "io/host_bytes.hpp"
#include "io/npy_format.hpp"
#include "io/zip.hpp"

namespace cufuse {

static void write_npz(const std::filesystem::path& file, const NamedArrays& arrays, bool deflate, const char* what) {
  std::set<std::string> seen;
  for (const auto& [name, a] : arrays) {
    if (!a.defined()) throw ValueError(fmt::format("{}: the array '{}' is an empty handle", what, name));
    if (!seen.insert(name).second) throw ValueError(fmt::format("{}: the name '{}' appears twice", what, name));
  }
  io::ZipWriter zip(io::with_suffix(file, ".npz"));
  for (const auto& [name, a] : arrays) {
    const bool fortran = io::fortran_only(a);
    const std::string header = io::npy_header_bytes(a.dtype(), a.shape(), fortran);
    const auto data = io::host_bytes(a, fortran);
    zip.add(name + ".npy", {{header.data(), header.size()}, {data.data(), data.size()}}, deflate);
  }
  zip.finish();
}

void savez(const std::filesystem::path& file, const NamedArrays& arrays) { write_npz(file, arrays, false, "savez"); }
void savez_compressed(const std::filesystem::path& file, const NamedArrays& arrays) {
  write_npz(file, arrays, true, "savez_compressed");
}

NamedArrays load_npz(const std::filesystem::path& file) {
  io::FileSource zip(file);
  const auto entries = io::read_zip_directory(zip);
  NamedArrays out;
  for (const auto& e : entries) {
    std::string key = e.name;
    if (key.size() >= 4 && key.compare(key.size() - 4, 4, ".npy") == 0) key.resize(key.size() - 4);
    const std::string what = fmt::format("{} entry '{}'", zip.name(), e.name);
    const auto bytes = io::read_zip_entry(zip, e);  // inflated where deflated; CRC-32 checked
    io::MemorySource mem(what, bytes.data(), bytes.size());
    const io::NpyHeader h = io::read_npy_header(mem);
    out.emplace_back(key, io::array_from_source(mem, h.data_offset, h.dtype, h.shape, h.swap, h.fortran));
  }
  return out;
}

}  // namespace cufuse
