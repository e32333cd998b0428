// src/io/zip.cpp: the zip container (PKWARE APPNOTE 6.3: local headers, central directory,
// end records, zip64 extensions) for .npz files. zlib does the deflating, inflating and
// CRC-32; built without zlib, archives are still written and read as stored entries, and a
// deflated entry is a NotSupportedError. Every field read from an archive is bounds-checked.
#include "io/zip.hpp"

#include <algorithm>
#include <array>
#include <climits>
#include <cstring>
#include <ctime>
#include <system_error>

#include <fmt/format.h>

#include "cufuse/error.hpp"

#ifdef CUFUSE_HAVE_ZLIB
#include <zlib.h>
#endif

namespace cufuse::io {

namespace {
constexpr uint32_t kLocalSig = 0x04034b50, kCentralSig = 0x02014b50, kEndSig = 0x06054b50;
constexpr uint32_t kEnd64Sig = 0x06064b50, kLocator64Sig = 0x07064b50;
constexpr uint64_t k32 = 0xffffffffull;
constexpr size_t kChunk = size_t(1) << 30;  // zlib counts in 32-bit unsigned

uint16_t u16(const unsigned char* p) { return static_cast<uint16_t>(p[0] | (p[1] << 8)); }
uint32_t u32(const unsigned char* p) { return uint32_t(p[0]) | (uint32_t(p[1]) << 8) | (uint32_t(p[2]) << 16) | (uint32_t(p[3]) << 24); }
uint64_t u64(const unsigned char* p) { return uint64_t(u32(p)) | (uint64_t(u32(p + 4)) << 32); }
void put16(std::string& s, uint64_t v) { for (int i = 0; i < 2; ++i) s += static_cast<char>((v >> (8 * i)) & 0xff); }
void put32(std::string& s, uint64_t v) { for (int i = 0; i < 4; ++i) s += static_cast<char>((v >> (8 * i)) & 0xff); }
void put64(std::string& s, uint64_t v) { for (int i = 0; i < 8; ++i) s += static_cast<char>((v >> (8 * i)) & 0xff); }

#ifndef CUFUSE_HAVE_ZLIB
uint32_t crc_table_entry(uint32_t c) {
  for (int k = 0; k < 8; ++k) c = (c & 1) ? 0xedb88320u ^ (c >> 1) : c >> 1;
  return c;
}
#endif

std::string entry_what(const ByteSource& z, const std::string& name) {
  return fmt::format("{} entry '{}'", z.name(), name);
}
}  // namespace

uint32_t crc32_of(const void* data, size_t n, uint32_t crc) {
  const auto* p = static_cast<const unsigned char*>(data);
#ifdef CUFUSE_HAVE_ZLIB
  while (n > 0) {
    const size_t c = std::min(n, kChunk);
    crc = static_cast<uint32_t>(::crc32(crc, p, static_cast<uInt>(c)));
    p += c;
    n -= c;
  }
  return crc;
#else
  static const auto table = [] {
    std::array<uint32_t, 256> t{};
    for (uint32_t i = 0; i < 256; ++i) t[i] = crc_table_entry(i);
    return t;
  }();
  crc = ~crc;
  for (size_t i = 0; i < n; ++i) crc = table[(crc ^ p[i]) & 0xff] ^ (crc >> 8);
  return ~crc;
#endif
}

bool have_deflate() {
#ifdef CUFUSE_HAVE_ZLIB
  return true;
#else
  return false;
#endif
}

// ------------------------------------------------------------------ reading
std::vector<ZipEntry> read_zip_directory(const ByteSource& z) {
  const uint64_t size = z.size();
  if (size < 22)
    throw ValueError(fmt::format("{} is not a zip archive (.npz): {} bytes, too short for its end record", z.name(), size));
  const uint64_t tail_len = std::min<uint64_t>(size, 22 + 65535);
  std::vector<unsigned char> tail(static_cast<size_t>(tail_len));
  z.read(size - tail_len, tail.data(), tail.size(), "the end of central directory record");
  int64_t at = -1;
  for (int64_t i = static_cast<int64_t>(tail_len) - 22; i >= 0; --i) {
    const unsigned char* p = tail.data() + i;
    if (u32(p) == kEndSig && static_cast<uint64_t>(i) + 22 + u16(p + 20) <= tail_len) {
      at = i;
      break;
    }
  }
  if (at < 0)
    throw ValueError(fmt::format("{} is not a zip archive (.npz): no end of central directory record in its last {} bytes",
                                 z.name(), tail_len));
  const uint64_t eocd = size - tail_len + static_cast<uint64_t>(at);
  const unsigned char* e = tail.data() + at;
  uint64_t disk = u16(e + 4), cd_disk = u16(e + 6), n_total = u16(e + 10), cd_size = u32(e + 12), cd_off = u32(e + 16);
  if (n_total == 0xffff || cd_size == k32 || cd_off == k32 || disk == 0xffff) {
    // zip64: a locator just before the end record points at the zip64 end record.
    unsigned char loc[20];
    if (eocd < 20) throw ValueError(fmt::format("{}: zip64 end record locator missing before offset {}", z.name(), eocd));
    z.read(eocd - 20, loc, 20, "the zip64 end of central directory locator");
    if (u32(loc) != kLocator64Sig)
      throw ValueError(fmt::format("{}: the end record at offset {} needs a zip64 locator at offset {}, which is not there",
                                   z.name(), eocd, eocd - 20));
    const uint64_t rec = u64(loc + 8);
    unsigned char r[56];
    z.read(rec, r, 56, "the zip64 end of central directory record");
    if (u32(r) != kEnd64Sig)
      throw ValueError(fmt::format("{}: no zip64 end of central directory record at offset {}", z.name(), rec));
    disk = u32(r + 16);
    cd_disk = u32(r + 20);
    n_total = u64(r + 32);
    cd_size = u64(r + 40);
    cd_off = u64(r + 48);
  }
  if (disk != 0 || cd_disk != 0)
    throw ValueError(fmt::format("{}: multi-disk (split) zip archives are not supported", z.name()));
  if (!z.contains(cd_off, cd_size))
    throw ValueError(fmt::format("{}: the central directory of {} bytes at offset {} lies outside the archive ({} bytes)",
                                 z.name(), cd_size, cd_off, size));
  if (n_total > cd_size / 46)
    throw ValueError(fmt::format("{}: the end record counts {} entries, but the central directory has room for only {}",
                                 z.name(), n_total, cd_size / 46));
  std::vector<unsigned char> cd(static_cast<size_t>(cd_size));
  z.read(cd_off, cd.data(), cd.size(), "the central directory");

  std::vector<ZipEntry> out;
  size_t pos = 0;
  for (uint64_t k = 0; k < n_total; ++k) {
    const uint64_t here = cd_off + pos;
    if (pos + 46 > cd.size() || u32(cd.data() + pos) != kCentralSig)
      throw ValueError(fmt::format("{}: central directory entry {} at offset {} is missing or malformed", z.name(), k, here));
    const unsigned char* c = cd.data() + pos;
    const uint16_t flags = u16(c + 8), method = u16(c + 10);
    const size_t nlen = u16(c + 28), elen = u16(c + 30), clen = u16(c + 32);
    if (pos + 46 + nlen + elen + clen > cd.size())
      throw ValueError(fmt::format("{}: central directory entry {} at offset {} runs past the directory's end", z.name(),
                                   k, here));
    ZipEntry en;
    en.name.assign(reinterpret_cast<const char*>(c + 46), nlen);
    en.method = method;
    en.crc = u32(c + 16);
    en.compressed = u32(c + 20);
    en.uncompressed = u32(c + 24);
    uint64_t lho = u32(c + 42);
    uint64_t edisk = u16(c + 34);
    // The zip64 extra field holds, in this order, the fields that are all ones above.
    const unsigned char* x = c + 46 + nlen;
    size_t xp = 0;
    while (xp + 4 <= elen) {
      const uint16_t id = u16(x + xp), len = u16(x + xp + 2);
      if (xp + 4 + len > elen)
        throw ValueError(fmt::format("{}: an extra field of entry '{}' (offset {}) runs past its end", z.name(), en.name, here));
      if (id == 1) {
        size_t q = xp + 4;
        const size_t qend = xp + 4 + len;
        auto take = [&](uint64_t& field, bool wide) {
          const size_t w = wide ? 8 : 4;
          if (q + w > qend)
            throw ValueError(fmt::format("{}: the zip64 extra field of entry '{}' (offset {}) is too short", z.name(),
                                         en.name, here));
          field = wide ? u64(x + q) : u32(x + q);
          q += w;
        };
        if (en.uncompressed == k32) take(en.uncompressed, true);
        if (en.compressed == k32) take(en.compressed, true);
        if (lho == k32) take(lho, true);
        if (edisk == 0xffff) take(edisk, false);
      }
      xp += 4 + len;
    }
    if (edisk != 0) throw ValueError(fmt::format("{}: entry '{}' lies on another disk (split archive)", z.name(), en.name));
    if (flags & 1) throw ValueError(fmt::format("{} is encrypted: encrypted entries are not supported", entry_what(z, en.name)));
    if (method != 0 && method != 8)
      throw ValueError(fmt::format("{} uses compression method {}: only stored (0) and deflated (8) entries are supported",
                                   entry_what(z, en.name), method));
    if (method == 0 && en.compressed != en.uncompressed)
      throw ValueError(fmt::format("{} is stored, but its directory says {} bytes compressed and {} uncompressed",
                                   entry_what(z, en.name), en.compressed, en.uncompressed));
    unsigned char lh[30];
    z.read(lho, lh, 30, fmt::format("the local header of entry '{}'", en.name));
    if (u32(lh) != kLocalSig)
      throw ValueError(fmt::format("{}: no local header at offset {}, where the directory puts it", entry_what(z, en.name), lho));
    en.data_offset = lho + 30 + u16(lh + 26) + u16(lh + 28);
    if (!z.contains(en.data_offset, en.compressed))
      throw ValueError(fmt::format("{} is truncated: its {} bytes of data from offset {} run past the archive's end ({} bytes)",
                                   entry_what(z, en.name), en.compressed, en.data_offset, size));
    out.push_back(std::move(en));
    pos += 46 + nlen + elen + clen;
  }
  return out;
}

std::vector<unsigned char> read_zip_entry(const ByteSource& z, const ZipEntry& e) {
  const std::string what = entry_what(z, e.name);
  std::vector<unsigned char> out;
  if (e.method == 0) {
    out.resize(static_cast<size_t>(e.uncompressed));
    z.read(e.data_offset, out.data(), out.size(), what);
  } else {
#ifdef CUFUSE_HAVE_ZLIB
    // Deflate expands at most ~1032:1: a directory that claims more lies (and would make us
    // allocate what it claims).
    if (e.uncompressed / 1032 > e.compressed + 64)
      throw ValueError(fmt::format("{} claims {} bytes uncompressed from {} compressed: more than deflate can produce",
                                   what, e.uncompressed, e.compressed));
    std::vector<unsigned char> in(static_cast<size_t>(e.compressed));
    z.read(e.data_offset, in.data(), in.size(), what);
    out.resize(static_cast<size_t>(e.uncompressed));
    z_stream zs{};
    if (inflateInit2(&zs, -15) != Z_OK) throw InternalError("inflateInit2 failed");
    size_t in_pos = 0, out_pos = 0;
    int rc = Z_OK;
    for (;;) {
      if (zs.avail_in == 0 && in_pos < in.size()) {
        const size_t c = std::min(in.size() - in_pos, kChunk);
        zs.next_in = in.data() + in_pos;
        zs.avail_in = static_cast<uInt>(c);
        in_pos += c;
      }
      unsigned char spare;
      const bool full = out_pos == out.size();
      const size_t oc = full ? 1 : std::min(out.size() - out_pos, kChunk);
      zs.next_out = full ? &spare : out.data() + out_pos;
      zs.avail_out = static_cast<uInt>(oc);
      rc = inflate(&zs, Z_NO_FLUSH);
      const size_t produced = oc - zs.avail_out;
      if (full && produced > 0) {
        inflateEnd(&zs);
        throw ValueError(fmt::format("{} inflates to more than the {} bytes its directory says", what, e.uncompressed));
      }
      out_pos += produced;
      if (rc == Z_STREAM_END) break;
      if (rc == Z_BUF_ERROR && zs.avail_in == 0 && in_pos == in.size()) {
        inflateEnd(&zs);
        throw ValueError(fmt::format("{}: its deflate data are cut short ({} bytes inflated of {})", what, out_pos,
                                     e.uncompressed));
      }
      if (rc != Z_OK && rc != Z_BUF_ERROR) {
        const std::string msg = zs.msg ? zs.msg : "error " + std::to_string(rc);
        inflateEnd(&zs);
        throw ValueError(fmt::format("{}: corrupt deflate data ({}) after {} bytes inflated", what, msg, out_pos));
      }
    }
    inflateEnd(&zs);
    if (out_pos != out.size())
      throw ValueError(fmt::format("{} inflates to {} bytes, but its directory says {}", what, out_pos, e.uncompressed));
#else
    throw NotSupportedError(fmt::format("{} is deflated, and this cufuse was built without zlib", what));
#endif
  }
  const uint32_t crc = crc32_of(out.data(), out.size());
  if (crc != e.crc)
    throw ValueError(fmt::format("{}: CRC-32 mismatch (directory {:08x}, data {:08x}): the entry is corrupt", what, e.crc, crc));
  return out;
}

// ------------------------------------------------------------------ writing
ZipWriter::ZipWriter(const std::filesystem::path& path) : path_(path) {
  f_ = std::fopen(path.c_str(), "wb");
  if (!f_) throw ValueError(fmt::format("cannot open {} for writing: {}", quoted(path), std::strerror(errno)));
}

ZipWriter::~ZipWriter() {
  if (f_) {
    std::fclose(f_);
    std::error_code ec;
    std::filesystem::remove(path_, ec);
  }
}

void ZipWriter::write(const void* p, size_t n) {
  if (n && std::fwrite(p, 1, n, f_) != n)
    throw ValueError(fmt::format("cannot write {} at offset {}: {}", quoted(path_), offset_, std::strerror(errno)));
  offset_ += n;
}

void ZipWriter::add(const std::string& name, const std::vector<std::pair<const void*, size_t>>& parts, bool deflate) {
  if (name.size() > 0xffff) throw ValueError(fmt::format("zip entry name of {} bytes is too long", name.size()));
  ZipEntry en;
  en.name = name;
  en.method = deflate ? 8 : 0;
  for (const auto& [p, n] : parts) {
    en.crc = crc32_of(p, n, en.crc);
    en.uncompressed += n;
  }
  std::vector<unsigned char> packed;
  if (deflate) {
#ifdef CUFUSE_HAVE_ZLIB
    z_stream zs{};
    if (deflateInit2(&zs, 6, Z_DEFLATED, -15, 8, Z_DEFAULT_STRATEGY) != Z_OK) throw InternalError("deflateInit2 failed");
    packed.resize(64 + en.uncompressed + en.uncompressed / 1000 + 5 * (en.uncompressed / 16000 + 1));
    size_t out_pos = 0;
    auto pump = [&](const unsigned char* p, size_t n, bool last) {
      do {
        const size_t c = std::min(n, kChunk);
        zs.next_in = const_cast<unsigned char*>(p);
        zs.avail_in = static_cast<uInt>(c);
        p += c;
        n -= c;
        const int flush = (last && n == 0) ? Z_FINISH : Z_NO_FLUSH;
        int rc;
        do {
          if (out_pos == packed.size()) packed.resize(packed.size() * 2);
          const size_t oc = std::min(packed.size() - out_pos, kChunk);
          zs.next_out = packed.data() + out_pos;
          zs.avail_out = static_cast<uInt>(oc);
          rc = ::deflate(&zs, flush);
          out_pos += oc - zs.avail_out;
          if (rc == Z_STREAM_ERROR) {
            deflateEnd(&zs);
            throw InternalError("deflate failed");
          }
        } while (zs.avail_out == 0 || (flush == Z_FINISH && rc != Z_STREAM_END));
      } while (n > 0);
    };
    if (parts.empty()) pump(nullptr, 0, true);
    for (size_t i = 0; i < parts.size(); ++i)
      pump(static_cast<const unsigned char*>(parts[i].first), parts[i].second, i + 1 == parts.size());
    deflateEnd(&zs);
    packed.resize(out_pos);
    en.compressed = out_pos;
#else
    throw NotSupportedError("savez_compressed: this cufuse was built without zlib, which deflates");
#endif
  } else {
    en.compressed = en.uncompressed;
  }
  const bool z64 = en.uncompressed >= k32 || en.compressed >= k32;
  bool utf8 = false;
  for (unsigned char ch : name) utf8 = utf8 || ch >= 0x80;
  const std::time_t now = std::time(nullptr);
  std::tm tm{};
  localtime_r(&now, &tm);
  const uint32_t dos = (uint32_t(std::max(tm.tm_year - 80, 0)) << 25) | (uint32_t(tm.tm_mon + 1) << 21) |
                       (uint32_t(tm.tm_mday) << 16) | (uint32_t(tm.tm_hour) << 11) | (uint32_t(tm.tm_min) << 5) |
                       uint32_t(tm.tm_sec / 2);
  std::string h;
  put32(h, kLocalSig);
  put16(h, z64 ? 45 : 20);
  put16(h, utf8 ? 0x800 : 0);
  put16(h, en.method);
  put32(h, dos);
  put32(h, en.crc);
  put32(h, z64 ? k32 : en.compressed);
  put32(h, z64 ? k32 : en.uncompressed);
  put16(h, name.size());
  put16(h, z64 ? 20 : 0);
  h += name;
  if (z64) {
    put16(h, 1);
    put16(h, 16);
    put64(h, en.uncompressed);
    put64(h, en.compressed);
  }
  en.data_offset = offset_;  // the local header's offset, for the central directory
  write(h.data(), h.size());
  if (deflate) write(packed.data(), packed.size());
  else
    for (const auto& [p, n] : parts) write(p, n);
  entries_.push_back(std::move(en));
  dostime_.push_back(dos);
}

void ZipWriter::finish() {
  const uint64_t cd_off = offset_;
  std::string cd;
  for (size_t i = 0; i < entries_.size(); ++i) {
    const ZipEntry& en = entries_[i];
    std::string extra;
    if (en.uncompressed >= k32) put64(extra, en.uncompressed);
    if (en.compressed >= k32) put64(extra, en.compressed);
    if (en.data_offset >= k32) put64(extra, en.data_offset);
    if (!extra.empty()) {
      std::string hdr;
      put16(hdr, 1);
      put16(hdr, extra.size());
      extra = hdr + extra;
    }
    bool utf8 = false;
    for (unsigned char ch : en.name) utf8 = utf8 || ch >= 0x80;
    const uint16_t ver = extra.empty() ? 20 : 45;
    put32(cd, kCentralSig);
    put16(cd, ver | (3 << 8));  // made by: Unix
    put16(cd, ver);
    put16(cd, utf8 ? 0x800 : 0);
    put16(cd, en.method);
    put32(cd, dostime_[i]);
    put32(cd, en.crc);
    put32(cd, std::min(en.compressed, k32));
    put32(cd, std::min(en.uncompressed, k32));
    put16(cd, en.name.size());
    put16(cd, extra.size());
    put16(cd, 0);  // comment
    put16(cd, 0);  // disk
    put16(cd, 0);  // internal attributes
    put32(cd, uint32_t(0100644) << 16);  // external: a regular file, rw-r--r--
    put32(cd, std::min(en.data_offset, k32));
    cd += en.name;
    cd += extra;
  }
  write(cd.data(), cd.size());
  const uint64_t n = entries_.size(), cd_size = cd.size();
  std::string end;
  if (n >= 0xffff || cd_size >= k32 || cd_off >= k32) {
    const uint64_t rec = offset_;
    put32(end, kEnd64Sig);
    put64(end, 44);
    put16(end, 45 | (3 << 8));
    put16(end, 45);
    put32(end, 0);
    put32(end, 0);
    put64(end, n);
    put64(end, n);
    put64(end, cd_size);
    put64(end, cd_off);
    put32(end, kLocator64Sig);
    put32(end, 0);
    put64(end, rec);
    put32(end, 1);
  }
  put32(end, kEndSig);
  put16(end, 0);
  put16(end, 0);
  put16(end, std::min<uint64_t>(n, 0xffff));
  put16(end, std::min<uint64_t>(n, 0xffff));
  put32(end, std::min(cd_size, k32));
  put32(end, std::min(cd_off, k32));
  put16(end, 0);
  write(end.data(), end.size());
  std::FILE* f = f_;
  f_ = nullptr;
  if (std::fclose(f) != 0) {
    std::error_code ec;
    std::filesystem::remove(path_, ec);
    throw ValueError(fmt::format("cannot finish writing {}: {}", quoted(path_), std::strerror(errno)));
  }
}

}  // namespace cufuse::io
