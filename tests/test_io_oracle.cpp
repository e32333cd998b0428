// tests/test_io_oracle.cpp: .npy and .npz files against NumPy itself. tests/oracle/io_cases.py
// (CTest `oracle_io_cases`, run first) writes files with np.save, np.lib.format.write_array
// (versions 2.0 and 3.0), np.savez and np.savez_compressed, and the expected elements of each;
// this test loads them all (and refuses the object, complex, structured, string and '<V2'
// ones with the right words), then saves what it loaded to <dir>/cufuse, which
// `oracle_io_check` (run after) reads back with np.load, comparing bits, and with np.save's
// bytes. The directory comes from CUFUSE_IO_ORACLE_DIR (set by tests/io_oracle.cmake).
#include <doctest/doctest.h>

#include <cstdlib>
#include <fstream>
#include <map>
#include <sstream>

#include "cufuse/cufuse.hpp"
#include "io/io_test_util.hpp"

namespace cf = cufuse;
using namespace io_test;

namespace {

fs::path oracle_dir() {
  if (const char* d = std::getenv("CUFUSE_IO_ORACLE_DIR")) return d;
  return fs::path(CUFUSE_TEST_BINARY_DIR) / "io_oracle";
}

struct NpyCase {
  cf::DType dtype;
  cf::Shape shape;
  bool roundtrip;
};

}  // namespace

TEST_CASE("io oracle: NumPy's files load, cufuse's files go back") {
  cf::BackendScope ref(cf::Backend::Reference);
  const fs::path dir = oracle_dir();
  std::ifstream mf(dir / "manifest.txt");
  REQUIRE_MESSAGE(mf.good(), "no " << (dir / "manifest.txt").string()
                                   << ": run `ctest -R oracle_io` (or python3 tests/oracle/io_cases.py gen --out "
                                   << dir.string() << ")");
  fs::create_directories(dir / "cufuse");
  std::map<std::string, NpyCase> npy;
  std::map<std::string, cf::Array> loaded;
  std::string line;
  int n_npy = 0, n_bad = 0, n_npz = 0;
  while (std::getline(mf, line)) {
    std::istringstream in(line);
    std::string kind, name;
    in >> kind >> name;
    CAPTURE(line);
    if (kind == "npy") {
      std::string dt;
      int ndim = 0, rt = 0;
      in >> dt >> ndim;
      cf::Shape shape;
      for (int i = 0; i < ndim; ++i) {
        int64_t d;
        in >> d;
        shape.push_back(d);
      }
      in >> rt;
      const cf::DType t = cf::parse_dtype(dt);
      npy[name] = NpyCase{t, shape, rt != 0};
      cf::Array a = cf::load(dir / "numpy" / (name + ".npy"));
      CHECK(a.dtype() == t);
      CHECK(a.shape() == shape);
      CHECK(raw(a) == raw(cf::fromfile(dir / "numpy" / (name + ".bin"), t)));
      loaded[name] = a;
      if (rt) cf::save(dir / "cufuse" / (name + ".npy"), a);
      ++n_npy;
    } else if (kind == "bad") {
      std::string msg;
      try {
        cf::load(dir / "numpy" / (name + ".npy"));
      } catch (const cf::Error& e) {
        msg = e.what();
      }
      INFO("message: " << msg);
      CHECK(msg.find(name + ".npy") != std::string::npos);
      std::string word;
      while (in >> word) {
        for (char& c : word)
          if (c == '_') c = ' ';
        CHECK_MESSAGE(msg.find(word) != std::string::npos, "missing '" << word << "'");
      }
      ++n_bad;
    } else if (kind == "npz") {
      std::vector<std::string> names;
      for (std::string w; in >> w;) names.push_back(w);
      cf::NamedArrays got = cf::load_npz(dir / "numpy" / (name + ".npz"));
      REQUIRE(got.size() == names.size());
      cf::NamedArrays back;
      for (size_t i = 0; i < names.size(); ++i) {
        CAPTURE(names[i]);
        CHECK(got[i].first == names[i]);
        const NpyCase& c = npy.at(names[i]);
        CHECK(got[i].second.dtype() == c.dtype);
        CHECK(got[i].second.shape() == c.shape);
        CHECK(raw(got[i].second) == raw(loaded.at(names[i])));
        back.push_back(got[i]);
      }
      if (name == "compressed") cf::savez_compressed(dir / "cufuse" / "compressed.npz", back);
      else cf::savez(dir / "cufuse" / "stored.npz", back);
      ++n_npz;
    }
  }
  CHECK(n_npy >= 20);
  CHECK(n_bad >= 5);
  CHECK(n_npz == 2);
}
