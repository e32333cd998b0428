// src/io/zip.hpp: the zip container of .npz files: a writer of stored or deflated entries
// (zip64 where sizes or offsets need it, as Python's zipfile) and a defensive reader of the
// central directory (zip64 included; stored and deflated entries; CRC-32 checked). Deflate,
// inflate and CRC-32 come from zlib; only the container's headers are written here.
#pragma once
#include <cstdint>
#include <cstdio>
#include <filesystem>
#include <string>
#include <vector>

#include "io/byte_source.hpp"

namespace cufuse::io {

struct ZipEntry {
  std::string name;
  uint16_t method = 0;  // 0 stored, 8 deflated
  uint32_t crc = 0;
  uint64_t compressed = 0, uncompressed = 0;
  uint64_t data_offset = 0;  // of the entry's (compressed) bytes in the archive
};

// The entries of the archive in `src`, in central-directory order; each entry's data range is
// checked to lie inside the archive. ValueError naming the archive, the entry and the offset
// for anything malformed or unsupported (encryption, multi-disk, other compression methods).
std::vector<ZipEntry> read_zip_directory(const ByteSource& zip);

// The uncompressed bytes of `e` (inflated for a deflated entry; the CRC-32 checked).
std::vector<unsigned char> read_zip_entry(const ByteSource& zip, const ZipEntry& e);

// True when the library can deflate and inflate (built with zlib).
bool have_deflate();

// Writes a zip archive entry by entry to a file (ValueError naming it on any I/O failure).
class ZipWriter {
 public:
  explicit ZipWriter(const std::filesystem::path& path);
  ~ZipWriter();  // an unfinished archive is closed and removed
  ZipWriter(const ZipWriter&) = delete;
  ZipWriter& operator=(const ZipWriter&) = delete;
  // One entry from `parts` (concatenated), stored or deflated (zlib, level 6 as zipfile).
  void add(const std::string& name, const std::vector<std::pair<const void*, size_t>>& parts, bool deflate);
  void finish();  // the central directory; closes the file

 private:
  void write(const void* p, size_t n);
  std::filesystem::path path_;
  std::FILE* f_ = nullptr;
  uint64_t offset_ = 0;
  std::vector<ZipEntry> entries_;  // data_offset here: the local header's offset
  std::vector<uint32_t> dostime_;
};

uint32_t crc32_of(const void* data, size_t n, uint32_t crc = 0);

}  // namespace cufuse::io
