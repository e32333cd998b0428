// tests/test_io_corpus.cpp: replays the fuzzing corpus of the .npy and .npz readers
// (tests/io/corpus/{npy,npz}, grown by scripts/fuzz-io.sh with libFuzzer, crashers included)
// through cf::load and cf::load_npz: every file either loads or throws a cufuse::Error.
#include <doctest/doctest.h>

#include <filesystem>
#include <string>

#include "cufuse/cufuse.hpp"

namespace cf = cufuse;
namespace fs = std::filesystem;

namespace {
int replay(const char* kind, bool npz, int& ok) {
  const fs::path dir = fs::path(CUFUSE_SOURCE_DIR) / "tests" / "io" / "corpus" / kind;
  int n = 0;
  for (const auto& e : fs::directory_iterator(dir)) {
    if (!e.is_regular_file()) continue;
    ++n;
    CAPTURE(e.path().string());
    try {
      if (npz) {
        for (auto& [name, a] : cf::load_npz(e.path())) (void)a.nbytes();
      } else {
        (void)cf::load(e.path()).nbytes();
      }
      ++ok;
    } catch (const cf::Error&) {
      // a clear refusal is what a bad file must get
    } catch (const std::exception& x) {
      FAIL("not a cufuse::Error: " << x.what());
    }
  }
  return n;
}
}  // namespace

TEST_CASE("io corpus: every fuzzed .npy and .npz file loads or is a cufuse::Error") {
  cf::BackendScope ref(cf::Backend::Reference);
  int ok_npy = 0, ok_npz = 0;
  const int n_npy = replay("npy", false, ok_npy);
  const int n_npz = replay("npz", true, ok_npz);
  MESSAGE("corpus: " << n_npy << " .npy (" << ok_npy << " load), " << n_npz << " .npz (" << ok_npz << " load)");
  CHECK(n_npy >= 9);
  CHECK(n_npz >= 4);
  CHECK(ok_npy >= 9);  // the seeds NumPy wrote load
  CHECK(ok_npz >= 4);
}
