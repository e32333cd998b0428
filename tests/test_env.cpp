// tests/test_env.cpp: the environment table (src/runtime/env.cpp) and the runtime context's
// settings: a value a variable does not accept warns once, naming the variable, the value
// and what it accepts, and the default is used; good values parse; README.md's table lists
// exactly the table's variables; nothing else in the library calls getenv.
#include <doctest/doctest.h>
#include <unistd.h>

#include <cstdio>
#include <filesystem>
#include <fstream>
#include <map>
#include <regex>
#include <set>
#include <sstream>
#include <string>

#include "compile/compiler.hpp"
#include "codegen/elementwise_kernel.hpp"
#include "runtime/context.hpp"
#include "runtime/env.hpp"
#include "runtime/log.hpp"
#include "test_sandbox.hpp"

namespace fs = std::filesystem;
namespace d = cufuse::detail;

namespace {

using cufuse_test::ScopedEnv;
using cufuse_test::TempDir;

d::ParsedEnv parse(const std::map<std::string, std::string>& env) {
  return d::parse_env([&](const char* name) -> const char* {
    auto it = env.find(name);
    return it == env.end() ? nullptr : it->second.c_str();
  });
}

const d::EnvVar& row(std::string_view name) {
  for (const auto& v : d::env_variables())
    if (v.name == name) return v;
  FAIL("no row " << name);
  throw;
}

bool has(const std::string& text, std::string_view part) { return text.find(part) != std::string::npos; }

// What `f` writes to stderr.
template <class F>
std::string capture_stderr(F&& f) {
  TempDir dir;
  const fs::path file = dir.path / "stderr.txt";
  std::fflush(stderr);
  const int saved = ::dup(2);
  FILE* out = std::fopen(file.c_str(), "w");
  REQUIRE(out != nullptr);
  ::dup2(::fileno(out), 2);
  f();
  std::fflush(stderr);
  ::dup2(saved, 2);
  ::close(saved);
  std::fclose(out);
  std::ifstream in(file);
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

std::string read_text(const fs::path& p) {
  std::ifstream in(p);
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

}  // namespace

TEST_CASE("env: CUFUSE_LOG=bogus and CUFUSE_EW_UNROLL=99 warn with the accepted values and keep the defaults") {
  auto p = parse({{"CUFUSE_LOG", "bogus"}, {"CUFUSE_EW_UNROLL", "99"}});
  REQUIRE(p.warnings.size() == 2);
  const std::string& log = p.warnings[0];
  CHECK(has(log, "CUFUSE_LOG=bogus"));
  CHECK(has(log, "plan, compile, launch, cache, memory, or all"));
  const std::string& unroll = p.warnings[1];
  CHECK(has(unroll, "CUFUSE_EW_UNROLL=99"));
  CHECK(has(unroll, "an integer 1..8"));
  CHECK(has(unroll, "using 2"));
  CHECK(p.settings.log_mask == 0);
  CHECK(p.settings.ew_unroll == 2);
}

TEST_CASE("env: every variable warns once for a value it does not accept, and keeps its default") {
  const d::Settings defaults;
  for (const auto& v : d::env_variables()) {
    if (v.accepted == "a directory") continue;  // any path is a directory name
    CAPTURE(v.name);
    auto p = parse({{std::string(v.name), "not-a-value"}});
    REQUIRE(p.warnings.size() == 1);
    CHECK(p.warnings[0] == fmt::format("cufuse: warning: {}=not-a-value is not accepted (expected {}); using {}",
                                       v.name, v.accepted, v.fallback));
    const d::Settings& s = p.settings;
    CHECK(s.cache_off == defaults.cache_off);
    CHECK(s.log_mask == defaults.log_mask);
    CHECK((s.backend == defaults.backend));
    CHECK(s.arch == defaults.arch);
    CHECK((s.graphs == defaults.graphs));
    CHECK(s.cse == defaults.cse);
    CHECK(s.tf32 == defaults.tf32);
    CHECK(s.ew_unroll == defaults.ew_unroll);
    CHECK((s.reference_compile == defaults.reference_compile));
    CHECK(s.linalg_errors_ignore == defaults.linalg_errors_ignore);
    CHECK(s.max_kernel_ops == defaults.max_kernel_ops);
    CHECK(s.split_blocks == defaults.split_blocks);
  }
  // Out of range, signs and suffixes are not numbers in range.
  for (const char* bad : {"0", "9", "-1", "2x", " 2", "2.0"}) {
    CAPTURE(bad);
    CHECK(parse({{"CUFUSE_EW_UNROLL", bad}}).warnings.size() == 1);
  }
  CHECK(parse({{"CUFUSE_SPLIT_BLOCKS", "1048577"}}).warnings.size() == 1);
  CHECK(parse({{"CUFUSE_MAX_KERNEL_OPS", "0"}}).warnings.size() == 1);
  CHECK(parse({{"CUFUSE_ARCH", "sm_9"}}).warnings.size() == 1);
}

TEST_CASE("env: accepted values parse; an empty value is unset") {
  auto p = parse({{"CUFUSE_CACHE_DIR", "/c"}, {"CUFUSE_CACHE", "off"}, {"CUFUSE_LOG", "plan,cache"},
                  {"CUFUSE_DUMP_KERNELS", "/dump"}, {"CUFUSE_BACKEND", "host"}, {"CUFUSE_ARCH", "sm_86"},
                  {"CUFUSE_GRAPHS", "all"}, {"CUFUSE_CSE", "1"}, {"CUFUSE_TF32", "1"}, {"CUFUSE_EW_UNROLL", "8"},
                  {"CUFUSE_REFERENCE_COMPILE", "0"}, {"CUFUSE_LINALG_ERRORS", "ignore"},
                  {"CUFUSE_MAX_KERNEL_OPS", "64"}, {"CUFUSE_SPLIT_BLOCKS", "1048576"}, {"HOME", "/h"},
                  {"CUDA_VISIBLE_DEVICES", ""}});
  CHECK(p.warnings.empty());
  const d::Settings& s = p.settings;
  CHECK(s.cache_dir == "/c");
  CHECK(s.cache_off == "off");
  CHECK(s.log_mask == (unsigned(d::LogChannel::Plan) | unsigned(d::LogChannel::Cache)));
  CHECK(s.dump_kernels == "/dump");
  CHECK((s.backend == cufuse::Backend::Reference));
  CHECK(s.arch == 86);
  CHECK((s.graphs == d::GraphsMode::All));
  CHECK(s.cse);
  CHECK(s.tf32);
  CHECK(s.ew_unroll == 8);
  CHECK((s.reference_compile == d::ReferenceCompile::Off));
  CHECK((parse({{"CUFUSE_REFERENCE_COMPILE", "ptx"}}).settings.reference_compile == d::ReferenceCompile::Ptx));
  CHECK((parse({{"CUFUSE_REFERENCE_COMPILE", "1"}}).settings.reference_compile == d::ReferenceCompile::Cubin));
  CHECK(parse({{"CUFUSE_REFERENCE_COMPILE", "PTX"}}).warnings.size() == 1);
  CHECK(s.linalg_errors_ignore);
  CHECK(s.max_kernel_ops == 64);
  CHECK(s.split_blocks == 1048576);
  CHECK((s.home == "/h"));
  CHECK((s.cuda_visible_devices == ""));  // set but empty: quoted as it is
  CHECK_FALSE(s.xdg_cache_home.has_value());

  CHECK(parse({{"CUFUSE_ARCH", "90"}}).settings.arch == 90);
  CHECK(parse({{"CUFUSE_ARCH", "compute_80"}}).settings.arch == 80);
  CHECK(parse({{"CUFUSE_LOG", "all"}}).settings.log_mask == ~0u);
  CHECK(parse({{"CUFUSE_LOG", "1"}}).settings.log_mask == ~0u);
  CHECK((parse({{"CUFUSE_GRAPHS", "0"}}).settings.graphs == d::GraphsMode::Off));
  CHECK(parse({{"CUFUSE_CACHE", "1"}}).settings.cache_off.empty());
  auto empty = parse({{"CUFUSE_EW_UNROLL", ""}, {"CUFUSE_BACKEND", ""}, {"CUFUSE_LOG", ""}});
  CHECK(empty.warnings.empty());
  CHECK(empty.settings.ew_unroll == 2);
}

TEST_CASE("env: CUFUSE_LOG keeps the words it knows and warns about the others") {
  auto p = parse({{"CUFUSE_LOG", "plan,bogus,,memory"}});
  REQUIRE(p.warnings.size() == 1);
  CHECK(has(p.warnings[0], "CUFUSE_LOG=plan,bogus,,memory"));
  CHECK(p.settings.log_mask == (unsigned(d::LogChannel::Plan) | unsigned(d::LogChannel::Memory)));
}

TEST_CASE("env: the runtime context prints a bad value's warning once and uses the default") {
  std::string first, again;
  {
    first = capture_stderr([] {
      ScopedEnv e("CUFUSE_EW_UNROLL", "99");
      CHECK(d::elementwise_unroll() == 2);
      CHECK(d::settings().ew_unroll == 2);
    });
    again = capture_stderr([] {
      ScopedEnv e("CUFUSE_EW_UNROLL", "99");
      d::runtime().reload_settings();
    });
  }
  CHECK(first == "cufuse: warning: CUFUSE_EW_UNROLL=99 is not accepted (expected an integer 1..8); using 2\n");
  CHECK(again.empty());
  {
    ScopedEnv e("CUFUSE_EW_UNROLL", "4");
    CHECK(d::elementwise_unroll() == 4);
  }
  CHECK(d::elementwise_unroll() == d::Settings{}.ew_unroll);  // restored with the variable

  const std::string bad_log = capture_stderr([] {
    ScopedEnv e("CUFUSE_LOG", "bogus");
    CHECK_FALSE(d::log_enabled(d::LogChannel::Plan));
  });
  CHECK(has(bad_log, "cufuse: warning: CUFUSE_LOG=bogus is not accepted"));
  CHECK(has(bad_log, "plan, compile, launch, cache, memory, or all"));
}

TEST_CASE("env: a settings snapshot stays valid after a reload") {
  const d::Settings& before = d::settings();
  const uint64_t gen = before.generation;
  d::runtime().reload_settings();
  CHECK(d::settings().generation == gen + 1);
  CHECK(before.generation == gen);  // the old snapshot is kept, not freed
}

TEST_CASE("env: README.md's environment table lists exactly the variables of runtime/env.cpp") {
  const std::string readme = read_text(fs::path(CUFUSE_SOURCE_DIR) / "README.md");
  const size_t start = readme.find("\n## Environment variables\n");
  REQUIRE(start != std::string::npos);
  // The section runs to the next heading of any level.
  size_t end = readme.find("\n#", start + 1);
  const std::string section = readme.substr(start, end == std::string::npos ? std::string::npos : end - start);
  std::set<std::string> listed;
  std::istringstream lines(section);
  const std::regex name(R"(CUFUSE_[A-Z0-9_]+)");
  for (std::string line; std::getline(lines, line);) {
    if (line.rfind("| `", 0) != 0) continue;  // table rows whose first cell is code
    const std::string cell = line.substr(0, line.find('|', 1));
    for (std::sregex_iterator it(cell.begin(), cell.end(), name), e; it != e; ++it) listed.insert(it->str());
  }
  std::set<std::string> table;
  for (const auto& v : d::env_variables()) table.insert(std::string(v.name));
  CHECK(listed == table);
  for (const auto& v : d::external_env_variables()) {
    CAPTURE(v.name);
    CHECK(has(section, fmt::format("`{}`", v.name)));
  }
}

TEST_CASE("env: nothing in the library but runtime/env.cpp calls getenv") {
  const fs::path root(CUFUSE_SOURCE_DIR);
  std::vector<std::string> offenders;
  for (const char* top : {"src", "codegen", "include"}) {
    if (!fs::exists(root / top)) continue;
    for (const auto& e : fs::recursive_directory_iterator(root / top)) {
      if (!e.is_regular_file()) continue;
      const auto ext = e.path().extension();
      if (ext != ".cpp" && ext != ".hpp" && ext != ".h" && ext != ".inc") continue;
      const std::string rel = fs::relative(e.path(), root).generic_string();
      if (rel == "src/runtime/env.cpp") continue;
      const std::string text = read_text(e.path());
      if (text.find("getenv(") != std::string::npos || text.find("secure_getenv") != std::string::npos)
        offenders.push_back(rel);
    }
  }
  std::string list;
  for (const auto& o : offenders) list += " " + o;
  CHECK_MESSAGE(offenders.empty(), "read the environment through runtime().settings(), not in:" << list);
}

TEST_CASE("env: the table's rows are documented") {
  std::set<std::string_view> seen;
  for (const auto& v : d::env_variables()) {
    CAPTURE(v.name);
    CHECK(v.name.substr(0, 7) == "CUFUSE_");
    CHECK(seen.insert(v.name).second);
    CHECK_FALSE(v.accepted.empty());
    CHECK_FALSE(v.fallback.empty());
    CHECK_FALSE(v.doc.empty());
    CHECK((v.parse != nullptr));
  }
  CHECK(row("CUFUSE_EW_UNROLL").fallback == "2");
}
