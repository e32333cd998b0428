// tests/test_io_files.cpp: .npy / .npz / raw files (cufuse/io.hpp) on the reference backend:
// round trips of every dtype, C and Fortran order, 0-d and empty arrays, NumPy's exact header
// bytes, big-endian data, version 2.0 and 3.0 headers, tofile/fromfile, and the errors of bad
// files (truncated data, lying header lengths, unknown and object descriptors, bad zips).
// tests/test_io_oracle.cpp checks the same against files NumPy itself writes and reads.
#include <doctest/doctest.h>

#include <cstring>
#include <numeric>

#include "cufuse/cufuse.hpp"
#include "io/io_test_util.hpp"
#include "io/zip.hpp"

namespace cf = cufuse;
using namespace io_test;

namespace {

const cf::DType kAll[] = {cf::bool_, cf::i8,  cf::i16, cf::i32,  cf::i64, cf::u8,  cf::u16,
                          cf::u32,   cf::u64, cf::f16, cf::bf16, cf::f32, cf::f64};

// A deterministic array of dtype t: arange cast to t (bools alternate).
cf::Array sample(cf::DType t, const cf::Shape& shape) {
  return (cf::arange(cf::numel(shape)).reshape(shape) % 7 - 3).astype(t).eval();
}

}  // namespace

TEST_CASE("io: save/load round trip of every dtype and shape") {
  cf::BackendScope ref(cf::Backend::Reference);
  TempDir dir;
  for (cf::DType t : kAll) {
    for (const cf::Shape& s : {cf::Shape{}, cf::Shape{0}, cf::Shape{5}, cf::Shape{2, 3}, cf::Shape{2, 0, 3}, cf::Shape{2, 3, 4}}) {
      CAPTURE(cf::name(t));
      CAPTURE(cf::to_string(s));
      cf::Array a = sample(t, s);
      const auto path = dir / "a.npy";
      cf::save(path, a);
      cf::Array b = cf::load(path);
      CHECK(b.dtype() == t);
      CHECK(b.shape() == s);
      CHECK(raw(b) == raw(a));
    }
  }
}

TEST_CASE("io: the header is NumPy's, byte for byte") {
  cf::BackendScope ref(cf::Backend::Reference);
  TempDir dir;
  cf::save(dir / "x.npy", cf::array<int32_t>({0, 1, 2}));
  const std::string f = read_file(dir / "x.npy");
  // np.save('x.npy', np.arange(3, dtype=np.int32)) writes these 128 bytes, then the data.
  std::string want = std::string("\x93NUMPY\x01\x00v\x00", 10) + "{'descr': '<i4', 'fortran_order': False, 'shape': (3,), }";
  want.append(127 - want.size(), ' ');
  want += '\n';
  REQUIRE(f.size() == 128 + 12);
  CHECK(f.substr(0, 128) == want);
  // 0-d: no growth padding; bool and bfloat16 descriptors.
  cf::save(dir / "s.npy", cf::full({}, 2.5));
  CHECK(read_file(dir / "s.npy").find("{'descr': '<f8', 'fortran_order': False, 'shape': (), }") == 10);
  cf::save(dir / "b.npy", cf::ones({2, 2}, cf::bool_));
  CHECK(read_file(dir / "b.npy").find("'descr': '|b1'") != std::string::npos);
  cf::save(dir / "h.npy", cf::ones({2}, cf::bf16));
  CHECK(read_file(dir / "h.npy").find("'descr': 'bfloat16'") != std::string::npos);
  CHECK(read_file(dir / "h.npy").size() % 64 == 4);  // the header is padded to 64 bytes
}

TEST_CASE("io: save appends .npy / .npz like NumPy; tofile does not") {
  cf::BackendScope ref(cf::Backend::Reference);
  TempDir dir;
  cf::save(dir / "plain", cf::arange(3));
  CHECK(fs::exists(dir / "plain.npy"));
  cf::savez(dir / "arch", {{"a", cf::arange(3)}});
  CHECK(fs::exists(dir / "arch.npz"));
  cf::tofile(cf::arange(3), dir / "raw");
  CHECK(fs::exists(dir / "raw"));
}

TEST_CASE("io: Fortran order: an F-contiguous array is written column-major and loads as NumPy's view") {
  cf::BackendScope ref(cf::Backend::Reference);
  TempDir dir;
  cf::Array c = sample(cf::f32, {3, 4});
  cf::Array f = c.transpose();  // F-contiguous (4, 3)
  cf::save(dir / "f.npy", f);
  const std::string bytes = read_file(dir / "f.npy");
  CHECK(bytes.find("'fortran_order': True, 'shape': (4, 3), }") != std::string::npos);
  // Column-major data of f are the row-major data of c.
  const auto craw = raw(c);
  CHECK(std::memcmp(bytes.data() + 128, craw.data(), craw.size()) == 0);
  cf::Array g = cf::load(dir / "f.npy");
  CHECK(g.shape() == cf::Shape{4, 3});
  CHECK(raw(g) == raw(f));
  CHECK_FALSE(g.is_contiguous());
  CHECK(g.strides() == cf::Strides{1, 4});
  // A strided view that is neither order is written in C order.
  cf::Array v = sample(cf::i16, {4, 6})(cf::slice(cf::none, cf::none, 2), cf::slice(1, 5));
  cf::save(dir / "v.npy", v);
  CHECK(read_file(dir / "v.npy").find("'fortran_order': False") != std::string::npos);
  CHECK(raw(cf::load(dir / "v.npy")) == raw(v));
  // A lazy expression is computed and saved.
  cf::save(dir / "e.npy", cf::arange(6).reshape({2, 3}) * 2 + 1);
  CHECK(cf::load(dir / "e.npy").to_host<int64_t>() == std::vector<int64_t>{1, 3, 5, 7, 9, 11});
}

TEST_CASE("io: big-endian data, every width") {
  cf::BackendScope ref(cf::Backend::Reference);
  TempDir dir;
  {
    std::string f = npy_prefix("{'descr': '>i4', 'fortran_order': False, 'shape': (2,), }");
    f += std::string("\x00\x00\x01\x02\xff\xff\xff\xfe", 8);
    write_file(dir / "be.npy", f);
    cf::Array a = cf::load(dir / "be.npy");
    CHECK(a.dtype() == cf::i32);
    CHECK(a.to_host<int32_t>() == std::vector<int32_t>{0x0102, -2});
  }
  {
    std::string f = npy_prefix("{'descr': '>f8', 'fortran_order': False, 'shape': (1,), }");
    f += std::string("\x3f\xf8\x00\x00\x00\x00\x00\x00", 8);  // 1.5
    write_file(dir / "bd.npy", f);
    CHECK(cf::load(dir / "bd.npy").to_host<double>() == std::vector<double>{1.5});
  }
  {
    std::string f = npy_prefix("{'descr': '>f2', 'fortran_order': True, 'shape': (2, 2), }");
    // column-major [[1, 2], [3, 4]] as float16 big-endian: 1, 3, 2, 4
    f += std::string("\x3c\x00\x42\x00\x40\x00\x44\x00", 8);
    write_file(dir / "bh.npy", f);
    cf::Array a = cf::load(dir / "bh.npy");
    CHECK(a.astype(cf::f64).to_host<double>() == std::vector<double>{1, 2, 3, 4});
  }
  {
    std::string f = npy_prefix("{'descr': '>u2', 'fortran_order': False, 'shape': (2,), }");
    f += std::string("\x12\x34\xab\xcd", 4);
    write_file(dir / "bu.npy", f);
    CHECK(cf::load(dir / "bu.npy").to_host<uint16_t>() == std::vector<uint16_t>{0x1234, 0xabcd});
  }
  {
    std::string f = npy_prefix("{'descr': '>i8', 'fortran_order': False, 'shape': (1,), }");
    f += std::string("\x01\x02\x03\x04\x05\x06\x07\x08", 8);
    write_file(dir / "bl.npy", f);
    CHECK(cf::load(dir / "bl.npy").to_host<int64_t>() == std::vector<int64_t>{0x0102030405060708});
  }
}

TEST_CASE("io: version 2.0 and 3.0 headers, other spellings NumPy accepts") {
  cf::BackendScope ref(cf::Backend::Reference);
  TempDir dir;
  const std::string data("\x01\x00\x02\x00\x03\x00", 6);
  for (int major : {2, 3}) {
    write_file(dir / "v.npy", npy_prefix("{'descr': '<i2', 'fortran_order': False, 'shape': (3,), }", major) + data);
    CHECK(cf::load(dir / "v.npy").to_host<int16_t>() == std::vector<int16_t>{1, 2, 3});
  }
  // Key order, double quotes, Python 2 longs, names, no trailing comma, a 1-tuple with spaces.
  write_file(dir / "w.npy", npy_prefix("{\"shape\": ( 3L , ), \"fortran_order\": False, \"descr\": \"int16\"}") + data);
  CHECK(cf::load(dir / "w.npy").to_host<int16_t>() == std::vector<int16_t>{1, 2, 3});
  // Bools other than 0/1 in the file read as True.
  write_file(dir / "b.npy", npy_prefix("{'descr': '|b1', 'fortran_order': False, 'shape': (2,), }") + std::string("\x00\x07", 2));
  CHECK(raw(cf::load(dir / "b.npy")) == std::vector<unsigned char>{0, 1});
  // Bytes after the data are ignored, as np.load does.
  write_file(dir / "t.npy", npy_prefix("{'descr': '<i2', 'fortran_order': False, 'shape': (3,), }") + data + "junk");
  CHECK(cf::load(dir / "t.npy").size() == 3);
}

TEST_CASE("io: bad .npy files are errors naming the file, the offset and the problem") {
  cf::BackendScope ref(cf::Backend::Reference);
  TempDir dir;
  const auto p = dir / "bad.npy";
  const std::string good = npy_prefix("{'descr': '<i4', 'fortran_order': False, 'shape': (4,), }");
  auto load_bytes = [&](const std::string& bytes) {
    write_file(p, bytes);
    return [&] { cf::load(p); };
  };
  expect_error(load_bytes(good + std::string(12, '\0')), {"bad.npy", "truncated", "(4,)", "int32", "16 bytes", "offset 128"});
  expect_error(load_bytes(""), {"bad.npy", "not a .npy file"});
  expect_error(load_bytes("hello world, this is text"), {"not a .npy file", "hello"});
  expect_error(load_bytes(std::string("\x93NUM", 4)), {"truncated", "bad.npy"});
  expect_error(load_bytes(std::string("PK\x03\x04", 4) + std::string(40, '\0')), {"zip archive", "load_npz"});
  {
    std::string v = good;
    v[6] = 4;
    expect_error(load_bytes(v), {"version 4.0", "not supported"});
  }
  {
    std::string lie = good;  // header length field says 0x1000 bytes
    lie[8] = 0;
    lie[9] = 0x10;
    expect_error(load_bytes(lie + std::string(16, '\0')), {"header length field", "4096", "offset 8"});
  }
  {
    std::string shortlen = good;  // says 20 bytes: the dict is cut
    shortlen[8] = 20;
    shortlen[9] = 0;
    expect_error(load_bytes(shortlen + std::string(16, '\0')), {"malformed .npy header", "bad.npy"});
  }
  {
    // says 64 bytes more: the data are read as header
    std::string longer = good;
    longer[8] = static_cast<char>(static_cast<unsigned char>(longer[8]) + 16);
    std::string data(16, '\x01');
    expect_error(load_bytes(longer + data), {"malformed .npy header", "bytes after the header dict"});
  }
  auto with = [&](const std::string& dict) { return npy_prefix(dict) + std::string(64, '\0'); };
  expect_error(load_bytes(with("{'descr': '<c32', 'fortran_order': False, 'shape': (2,), }")), {"'<c32'", "complex"});
  // complex64 and complex128 load (issue 33's complex dtypes)
  CHECK(cf::load((write_file(p, with("{'descr': '<c8', 'fortran_order': False, 'shape': (2,), }")), p)).dtype() == cf::c64);
  expect_error(load_bytes(with("{'descr': '|O', 'fortran_order': False, 'shape': (2,), }")), {"object arrays", "'|O'"});
  expect_error(load_bytes(with("{'descr': '<U3', 'fortran_order': False, 'shape': (2,), }")), {"'<U3'", "string"});
  expect_error(load_bytes(with("{'descr': '<x7', 'fortran_order': False, 'shape': (2,), }")), {"'<x7'", "unknown"});
  expect_error(load_bytes(with("{'descr': '<V2', 'fortran_order': False, 'shape': (2,), }")), {"'<V2'", "bfloat16"});
  expect_error(load_bytes(with("{'descr': [('a', '<f4')], 'fortran_order': False, 'shape': (2,), }")), {"structured"});
  expect_error(load_bytes(with("{'descr': '<f4', 'fortran_order': False, 'shape': (-2,), }")), {"negative"});
  expect_error(load_bytes(with("{'descr': '<f4', 'fortran_order': False, 'shape': (2), }")), {"not a tuple"});
  expect_error(load_bytes(with("{'descr': '<f4', 'fortran_order': 0, 'shape': (2,), }")), {"True or False"});
  expect_error(load_bytes(with("{'descr': '<f4', 'shape': (2,), }")), {"no 'fortran_order' key"});
  expect_error(load_bytes(with("{'descr': '<f4', 'fortran_order': False, 'shape': (2,), 'x': 1}")), {"unexpected key 'x'"});
  expect_error(load_bytes(with("{'descr': '<f4', 'descr': '<f4', 'fortran_order': False, 'shape': (2,), }")), {"twice"});
  expect_error(load_bytes(with("{'descr': '<f8', 'fortran_order': False, 'shape': (4294967296, 4294967296), }")),
               {"too large"});
  expect_error(load_bytes(with("{'descr': '<f8', 'fortran_order': False, 'shape': (99999999999999999999,), }")),
               {"too large for int64"});
  expect_error([&] { cf::load(dir / "missing.npy"); }, {"missing.npy", "cannot open", "No such file"});
}

TEST_CASE("io: savez / savez_compressed / load_npz round trips") {
  cf::BackendScope ref(cf::Backend::Reference);
  TempDir dir;
  cf::NamedArrays in;
  for (cf::DType t : kAll) in.emplace_back(std::string(cf::name(t)), sample(t, {3, 5}));
  in.emplace_back("fortran", sample(cf::f64, {4, 3}).transpose());
  in.emplace_back("scalar", cf::full({}, 7, cf::i32));
  in.emplace_back("empty", cf::zeros({0, 4}, cf::f32));
  in.emplace_back("zeros", cf::zeros({1000}, cf::f64));  // compresses well
  for (bool compressed : {false, true}) {
    CAPTURE(compressed);
    const auto path = dir / (compressed ? "c.npz" : "s.npz");
    if (compressed) cf::savez_compressed(path, in);
    else cf::savez(path, in);
    cf::NamedArrays out = cf::load_npz(path);
    REQUIRE(out.size() == in.size());
    for (size_t i = 0; i < in.size(); ++i) {
      CAPTURE(in[i].first);
      CHECK(out[i].first == in[i].first);
      CHECK(out[i].second.dtype() == in[i].second.dtype());
      CHECK(out[i].second.shape() == in[i].second.shape());
      CHECK(raw(out[i].second) == raw(in[i].second));
    }
  }
  CHECK(fs::file_size(dir / "c.npz") < fs::file_size(dir / "s.npz") / 2);
  cf::savez(dir / "none.npz", {});
  CHECK(cf::load_npz(dir / "none.npz").empty());
  expect_error([&] { cf::savez(dir / "d.npz", {{"a", cf::arange(2)}, {"a", cf::arange(3)}}); }, {"'a'", "twice"});
}

namespace {
// Offsets into a stored .npz of one entry 'a.npy' (30-byte local header + 5-byte name).
size_t find_sig(const std::string& z, const char* sig) { return z.rfind(std::string(sig, 4)); }
}  // namespace

TEST_CASE("io: bad .npz archives are errors naming the archive and the entry") {
  cf::BackendScope ref(cf::Backend::Reference);
  TempDir dir;
  cf::savez(dir / "ok.npz", {{"a", cf::arange(100)}});
  cf::savez_compressed(dir / "okc.npz", {{"a", cf::arange(100)}});
  const std::string z = read_file(dir / "ok.npz"), zc = read_file(dir / "okc.npz");
  const auto p = dir / "bad.npz";
  auto load_bytes = [&](const std::string& bytes) {
    write_file(p, bytes);
    return [&] { cf::load_npz(p); };
  };
  expect_error(load_bytes(z.substr(0, z.size() / 2)), {"bad.npz", "not a zip archive"});
  expect_error(load_bytes("short"), {"bad.npz", "too short"});
  {
    std::string flip = z;  // a data byte changed: CRC mismatch
    flip[200] ^= 0x55;
    expect_error(load_bytes(flip), {"entry 'a.npy'", "CRC-32 mismatch"});
  }
  {
    std::string m = z;  // method 12 (bzip2) in the central directory
    const size_t cd = find_sig(m, "PK\x01\x02");
    m[cd + 10] = 12;
    expect_error(load_bytes(m), {"entry 'a.npy'", "compression method 12"});
  }
  {
    std::string m = z;  // the directory's compressed size runs past the end
    const size_t cd = find_sig(m, "PK\x01\x02");
    m[cd + 20] = m[cd + 24] = '\x7f';
    m[cd + 21] = m[cd + 25] = '\x7f';
    expect_error(load_bytes(m), {"entry 'a.npy'", "truncated"});
  }
  {
    std::string m = z;  // the local header offset points at garbage
    const size_t cd = find_sig(m, "PK\x01\x02");
    m[cd + 42] = 3;
    expect_error(load_bytes(m), {"no local header at offset 3"});
  }
  {
    std::string m = z;  // the end record says the directory lies past the end
    const size_t e = find_sig(m, "PK\x05\x06");
    m[e + 16] = '\xff';
    m[e + 17] = '\xff';
    m[e + 18] = '\x0f';
    expect_error(load_bytes(m), {"central directory", "outside the archive"});
  }
  {
    std::string m = zc;  // corrupt deflate data
    const size_t data = 30 + 5;
    for (size_t i = data; i < data + 8; ++i) m[i] = '\xff';
    const std::string msg = expect_error(load_bytes(m), {"entry 'a.npy'"});
    CHECK((msg.find("deflate") != std::string::npos || msg.find("CRC") != std::string::npos));
  }
  {
    std::string m = zc;  // the uncompressed size is a lie (bigger than deflate can make)
    const size_t cd = find_sig(m, "PK\x01\x02");
    m[cd + 27] = '\x70';
    expect_error(load_bytes(m), {"entry 'a.npy'", "more than deflate can produce"});
  }
  {
    // An entry that is not .npy data (np.load would hand back its bytes; we have no bytes type).
    cufuse::io::ZipWriter w(dir / "txt.npz");
    const std::string text = "hello";
    w.add("notes.txt", {{text.data(), text.size()}}, false);
    w.finish();
    expect_error([&] { cf::load_npz(dir / "txt.npz"); }, {"txt.npz", "entry 'notes.txt'", "not a .npy file"});
  }
}

TEST_CASE("io: tofile / fromfile with count and offset, as NumPy") {
  cf::BackendScope ref(cf::Backend::Reference);
  TempDir dir;
  cf::Array a = cf::arange(10).astype(cf::i32).reshape({2, 5}).transpose();  // written in C order
  cf::tofile(a, dir / "r.bin");
  CHECK(fs::file_size(dir / "r.bin") == 40);
  cf::Array b = cf::fromfile(dir / "r.bin", cf::i32);
  CHECK(b.shape() == cf::Shape{10});
  CHECK(raw(b) == raw(a));
  CHECK(cf::fromfile(dir / "r.bin", cf::i32, 3).to_host<int32_t>() == std::vector<int32_t>{0, 5, 1});
  CHECK(cf::fromfile(dir / "r.bin", cf::i32, 2, 8).to_host<int32_t>() == std::vector<int32_t>{1, 6});
  CHECK(cf::fromfile(dir / "r.bin", cf::i32, 100).size() == 10);  // what is there, as NumPy
  CHECK(cf::fromfile(dir / "r.bin", cf::i64).size() == 5);
  CHECK(cf::fromfile(dir / "r.bin", cf::f64, -1, 36).size() == 0);
  expect_error([&] { cf::fromfile(dir / "r.bin", cf::i32, -1, 41); }, {"r.bin", "offset 41", "40 bytes"});
  expect_error([&] { cf::fromfile(dir / "r.bin", cf::i32, -2); }, {"count"});
  expect_error([&] { cf::tofile(a, dir / "no" / "such" / "dir.bin"); }, {"cannot open", "dir.bin"});
}
