// src/io/file_sink.hpp: a file written from the start, whose every failure (open, write,
// close) is a ValueError naming it and the OS's reason; a sink that is not closed removes its
// half-written file.
#pragma once
#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <filesystem>

namespace cufuse::io {

class FileSink {
 public:
  explicit FileSink(const std::filesystem::path& path);
  ~FileSink();
  FileSink(const FileSink&) = delete;
  FileSink& operator=(const FileSink&) = delete;
  void write(const void* p, size_t n);
  void close();

 private:
  std::filesystem::path path_;
  std::FILE* f_ = nullptr;
  uint64_t offset_ = 0;
};

// `p`, with `suffix` ('.npy') appended unless it already ends so (NumPy's rule for save).
std::filesystem::path with_suffix(const std::filesystem::path& p, const char* suffix);

}  // namespace cufuse::io
