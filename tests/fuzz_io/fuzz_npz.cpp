// tests/fuzz_io/fuzz_npz.cpp: libFuzzer target for the .npz reader (src/io/zip.cpp, then the
// .npy reader on each entry): any input either reads or throws cufuse::Error, nothing else.
// Built and run by scripts/fuzz-io.sh; what it finds is kept in tests/io/corpus/npz.
#include <cstddef>
#include <cstdint>
#include <vector>

#include "cufuse/error.hpp"
#include "io/byte_source.hpp"
#include "io/npy_format.hpp"
#include "io/zip.hpp"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  cufuse::io::MemorySource zip("'fuzz.npz'", data, size);
  try {
    for (const auto& e : cufuse::io::read_zip_directory(zip)) {
      try {
        const auto bytes = cufuse::io::read_zip_entry(zip, e);
        cufuse::io::MemorySource entry("entry", bytes.data(), bytes.size());
        const auto h = cufuse::io::read_npy_header(entry);
        std::vector<unsigned char> buf(static_cast<size_t>(h.data_bytes));
        entry.read(h.data_offset, buf.data(), buf.size(), "the array data");
      } catch (const cufuse::Error&) {
      }
    }
  } catch (const cufuse::Error&) {
  }
  return 0;
}
