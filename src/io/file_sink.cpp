// src/io/file_sink.cpp: FileSink (see file_sink.hpp).
#include "io/file_sink.hpp"

#include <cerrno>
#include <cstring>
#include <system_error>

#include <fmt/format.h>

#include "cufuse/error.hpp"
#include "io/byte_source.hpp"

namespace cufuse::io {

FileSink::FileSink(const std::filesystem::path& path) : path_(path) {
  f_ = std::fopen(path.c_str(), "wb");
  if (!f_) throw ValueError(fmt::format("cannot open {} for writing: {}", quoted(path), std::strerror(errno)));
}

FileSink::~FileSink() {
  if (!f_) return;
  std::fclose(f_);
  std::error_code ec;
  std::filesystem::remove(path_, ec);
}

void FileSink::write(const void* p, size_t n) {
  if (n && std::fwrite(p, 1, n, f_) != n)
    throw ValueError(fmt::format("cannot write {} at offset {}: {}", quoted(path_), offset_, std::strerror(errno)));
  offset_ += n;
}

void FileSink::close() {
  std::FILE* f = f_;
  f_ = nullptr;
  if (f && std::fclose(f) != 0) {
    const int e = errno;
    std::error_code ec;
    std::filesystem::remove(path_, ec);
    throw ValueError(fmt::format("cannot finish writing {}: {}", quoted(path_), std::strerror(e)));
  }
}

std::filesystem::path with_suffix(const std::filesystem::path& p, const char* suffix) {
  if (p.extension() == suffix) return p;
  std::filesystem::path q = p;
  q += suffix;
  return q;
}

}  // namespace cufuse::io
