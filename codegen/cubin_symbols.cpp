// codegen/cubin_symbols.cpp: ELF64 symbol-table reading for cubin_symbols.hpp. Every offset
// and size is checked against the buffer before it is read: a damaged CUBIN gives nullopt.
#include "codegen/cubin_symbols.hpp"

#include <cstdint>
#include <cstring>

namespace cufuse::detail {

namespace {

struct Elf64Header {
  unsigned char ident[16];
  uint16_t type, machine;
  uint32_t version;
  uint64_t entry, phoff, shoff;
  uint32_t flags;
  uint16_t ehsize, phentsize, phnum, shentsize, shnum, shstrndx;
};
struct Elf64Section {
  uint32_t name, type;
  uint64_t flags, addr, offset, size;
  uint32_t link, info;
  uint64_t addralign, entsize;
};
struct Elf64Symbol {
  uint32_t name;
  unsigned char info, other;
  uint16_t shndx;
  uint64_t value, size;
};
static_assert(sizeof(Elf64Header) == 64 && sizeof(Elf64Section) == 64 && sizeof(Elf64Symbol) == 24);

constexpr uint32_t kSymtab = 2;          // SHT_SYMTAB
constexpr unsigned char kFunc = 2;       // STT_FUNC
constexpr unsigned char kCudaEntry = 0x10;  // st_other: a __global__ function (STO_CUDA_ENTRY)

template <class T>
bool read_at(const std::vector<char>& b, uint64_t off, T& out) {
  if (off > b.size() || b.size() - off < sizeof(T)) return false;
  std::memcpy(&out, b.data() + off, sizeof(T));
  return true;
}

}  // namespace

std::optional<std::vector<std::string>> cubin_entry_names(const std::vector<char>& cubin) {
  Elf64Header h;
  if (!read_at(cubin, 0, h)) return std::nullopt;
  if (std::memcmp(h.ident, "\x7f" "ELF", 4) != 0 || h.ident[4] != 2 /* 64-bit */ || h.ident[5] != 1 /* LE */)
    return std::nullopt;
  if (h.shentsize != sizeof(Elf64Section) || h.shnum == 0) return std::nullopt;
  std::vector<std::string> names;
  bool found_symtab = false;
  for (uint64_t i = 0; i < h.shnum; ++i) {
    Elf64Section s;
    if (!read_at(cubin, h.shoff + i * sizeof(Elf64Section), s)) return std::nullopt;
    if (s.type != kSymtab) continue;
    found_symtab = true;
    Elf64Section str;
    if (s.link >= h.shnum || !read_at(cubin, h.shoff + uint64_t(s.link) * sizeof(Elf64Section), str)) return std::nullopt;
    if (str.offset > cubin.size() || cubin.size() - str.offset < str.size) return std::nullopt;
    const uint64_t n = s.entsize == sizeof(Elf64Symbol) ? s.size / sizeof(Elf64Symbol) : 0;
    for (uint64_t k = 0; k < n; ++k) {
      Elf64Symbol sym;
      if (!read_at(cubin, s.offset + k * sizeof(Elf64Symbol), sym)) return std::nullopt;
      if ((sym.info & 0xf) != kFunc || !(sym.other & kCudaEntry) || sym.name >= str.size) continue;
      const char* p = cubin.data() + str.offset + sym.name;
      names.emplace_back(p, strnlen(p, str.size - sym.name));
    }
  }
  if (!found_symtab) return std::nullopt;
  return names;
}

}  // namespace cufuse::detail
