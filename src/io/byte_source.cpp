// src/io/byte_source.cpp: the bounded readers of byte_source.hpp (pread on a file descriptor,
// memcpy from memory), and their truncation messages.
#include "io/byte_source.hpp"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>

#include <fmt/format.h>

#include "cufuse/error.hpp"

namespace cufuse::io {

std::string quoted(const std::filesystem::path& p) { return fmt::format("'{}'", p.string()); }

void ByteSource::read(uint64_t offset, void* dst, size_t n, std::string_view what) const {
  if (!contains(offset, n))
    throw ValueError(fmt::format("{} is truncated: {} needs bytes [{}, {}) but it has only {}", name_, what, offset,
                                 offset + static_cast<uint64_t>(n), size()));
  if (n) read_raw(offset, dst, n);
}

FileSource::FileSource(const std::filesystem::path& path) : ByteSource(quoted(path)) {
  fd_ = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd_ < 0) throw ValueError(fmt::format("cannot open {} for reading: {}", name(), std::strerror(errno)));
  struct stat st {};
  if (::fstat(fd_, &st) != 0 || !S_ISREG(st.st_mode)) {
    const int e = errno;
    ::close(fd_);
    fd_ = -1;
    throw ValueError(fmt::format("cannot read {}: {}", name(), S_ISREG(st.st_mode) ? std::strerror(e) : "not a regular file"));
  }
  size_ = static_cast<uint64_t>(st.st_size);
}

FileSource::~FileSource() {
  if (fd_ >= 0) ::close(fd_);
}

void FileSource::read_raw(uint64_t offset, void* dst, size_t n) const {
  auto* out = static_cast<char*>(dst);
  while (n > 0) {
    const size_t chunk = n < (size_t(1) << 30) ? n : (size_t(1) << 30);
    const ssize_t got = ::pread(fd_, out, chunk, static_cast<off_t>(offset));
    if (got < 0 && errno == EINTR) continue;
    if (got <= 0)
      throw ValueError(fmt::format("cannot read {} at offset {}: {}", name(), offset,
                                   got < 0 ? std::strerror(errno) : "the file shrank while it was read"));
    out += got;
    offset += static_cast<uint64_t>(got);
    n -= static_cast<size_t>(got);
  }
}

void MemorySource::read_raw(uint64_t offset, void* dst, size_t n) const { std::memcpy(dst, data_ + offset, n); }

WindowSource::WindowSource(std::string name, const ByteSource& parent, uint64_t offset, uint64_t size)
    : ByteSource(std::move(name)), parent_(parent), offset_(offset), size_(size) {
  if (!parent.contains(offset, size))
    throw ValueError(fmt::format("{} is truncated: {} needs bytes [{}, {}) but it has only {}", parent.name(),
                                 this->name(), offset, offset + size, parent.size()));
}

void WindowSource::read_raw(uint64_t offset, void* dst, size_t n) const { parent_.read(offset_ + offset, dst, n, name()); }

}  // namespace cufuse::io
