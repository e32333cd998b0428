// tests/fuzz_io/fuzz_npy.cpp: libFuzzer target for the .npy reader (src/io/npy_format.cpp):
// any input either parses (and its announced data are read in full) or throws cufuse::Error;
// nothing else (a crash, a sanitizer report, another exception) is allowed.
// Built and run by scripts/fuzz-io.sh; what it finds is kept in tests/io/corpus/npy, which
// tests/test_io_corpus.cpp replays in every CPU test run.
#include <cstddef>
#include <cstdint>
#include <vector>

#include "cufuse/error.hpp"
#include "io/byte_source.hpp"
#include "io/npy_format.hpp"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  cufuse::io::MemorySource src("'fuzz.npy'", data, size);
  try {
    const auto h = cufuse::io::read_npy_header(src);
    std::vector<unsigned char> buf(static_cast<size_t>(h.data_bytes));
    src.read(h.data_offset, buf.data(), buf.size(), "the array data");
    if (h.swap) cufuse::io::byteswap(buf.data(), h.data_bytes / cufuse::itemsize(h.dtype), cufuse::itemsize(h.dtype));
  } catch (const cufuse::Error&) {
  }
  return 0;
}
