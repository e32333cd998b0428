// tests/io/io_test_util.hpp: what the file-format tests share: a scratch directory, files
// written from bytes, an array's raw bytes, and a check that a call throws a cufuse::Error
// whose message holds given pieces.
#pragma once
#include <unistd.h>

#include <atomic>
#include <cstdint>
#include <filesystem>
#include <fstream>
#include <initializer_list>
#include <string>
#include <vector>

#include <doctest/doctest.h>

#include "cufuse/cufuse.hpp"

namespace io_test {

namespace fs = std::filesystem;

// A fresh directory under the system temp dir, removed at the end.
class TempDir {
 public:
  TempDir() {
    static std::atomic<int> n{0};
    path_ = fs::temp_directory_path() / ("cufuse-io-" + std::to_string(::getpid()) + "-" + std::to_string(n++));
    fs::remove_all(path_);
    fs::create_directories(path_);
  }
  ~TempDir() {
    std::error_code ec;
    fs::remove_all(path_, ec);
  }
  fs::path operator/(const std::string& name) const { return path_ / name; }
  const fs::path& path() const { return path_; }

 private:
  fs::path path_;
};

inline void write_file(const fs::path& p, const std::string& bytes) {
  std::ofstream f(p, std::ios::binary);
  f.write(bytes.data(), static_cast<std::streamsize>(bytes.size()));
}
inline std::string read_file(const fs::path& p) {
  std::ifstream f(p, std::ios::binary);
  return std::string(std::istreambuf_iterator<char>(f), std::istreambuf_iterator<char>());
}

inline std::vector<unsigned char> raw(const cufuse::Array& a) {
  std::vector<unsigned char> v(static_cast<size_t>(a.nbytes()));
  if (!v.empty()) a.copy_to_host(v.data(), v.size());
  return v;
}

// A .npy header as NumPy pads it (version 1.0 unless told), around a dict literal.
inline std::string npy_prefix(const std::string& dict, int major = 1) {
  const size_t prefix = 8 + (major == 1 ? 2 : 4);
  std::string h = dict;
  while ((prefix + h.size() + 1) % 64 != 0) h += ' ';
  h += '\n';
  std::string out = "\x93NUMPY";
  out += static_cast<char>(major);
  out += '\0';
  for (int b = 0; b < (major == 1 ? 2 : 4); ++b) out += static_cast<char>((h.size() >> (8 * b)) & 0xff);
  return out + h;
}

// Runs f, which must throw a cufuse::Error whose message contains every piece.
template <class F>
std::string expect_error(F&& f, std::initializer_list<const char*> pieces) {
  std::string msg;
  try {
    f();
  } catch (const cufuse::Error& e) {
    msg = e.what();
  }
  INFO("message: " << msg);
  CHECK_FALSE(msg.empty());
  for (const char* p : pieces) CHECK_MESSAGE(msg.find(p) != std::string::npos, "missing '" << std::string(p) << "'");
  return msg;
}

}  // namespace io_test
