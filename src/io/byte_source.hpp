// src/io/byte_source.hpp: bounded random-access reading of bytes (a file, a memory block, or a
// window of either) for the .npy and .npz readers. Every read is checked against the size
// first, so a reader can never read past the end; the errors name the source and the offset.
#pragma once
#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <filesystem>
#include <memory>
#include <string>
#include <string_view>

namespace cufuse::io {

class ByteSource {
 public:
  explicit ByteSource(std::string name) : name_(std::move(name)) {}
  virtual ~ByteSource() = default;
  ByteSource(const ByteSource&) = delete;
  ByteSource& operator=(const ByteSource&) = delete;

  virtual uint64_t size() const = 0;
  // What messages call it: "'data.npy'" or "'data.npz' entry 'a.npy'".
  const std::string& name() const { return name_; }
  // n bytes at `offset` into dst; throws ValueError ("<name> is truncated: <what> needs bytes
  // [a, b) but it has only N") when they are not all there.
  void read(uint64_t offset, void* dst, size_t n, std::string_view what) const;
  // True when [offset, offset + n) lies inside the source (overflow-safe).
  bool contains(uint64_t offset, uint64_t n) const { return offset <= size() && n <= size() - offset; }

 protected:
  virtual void read_raw(uint64_t offset, void* dst, size_t n) const = 0;  // in range

 private:
  std::string name_;
};

// A file, opened for reading (ValueError naming it and the OS's reason when it cannot be).
class FileSource final : public ByteSource {
 public:
  explicit FileSource(const std::filesystem::path& path);
  ~FileSource() override;
  uint64_t size() const override { return size_; }

 protected:
  void read_raw(uint64_t offset, void* dst, size_t n) const override;

 private:
  int fd_ = -1;
  uint64_t size_ = 0;
};

// Bytes in memory (not owned).
class MemorySource final : public ByteSource {
 public:
  MemorySource(std::string name, const void* data, uint64_t size)
      : ByteSource(std::move(name)), data_(static_cast<const unsigned char*>(data)), size_(size) {}
  uint64_t size() const override { return size_; }

 protected:
  void read_raw(uint64_t offset, void* dst, size_t n) const override;

 private:
  const unsigned char* data_;
  uint64_t size_;
};

// [offset, offset + size) of another source, which must outlive it (offsets are relative).
class WindowSource final : public ByteSource {
 public:
  WindowSource(std::string name, const ByteSource& parent, uint64_t offset, uint64_t size);
  uint64_t size() const override { return size_; }

 protected:
  void read_raw(uint64_t offset, void* dst, size_t n) const override;

 private:
  const ByteSource& parent_;
  uint64_t offset_, size_;
};

// "'<path>'" as messages quote a file.
std::string quoted(const std::filesystem::path& p);

}  // namespace cufuse::io
