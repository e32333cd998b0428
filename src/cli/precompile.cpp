// src/cli/precompile.cpp: cufuse-dump-kernels --precompile FILE (cli/precompile.hpp): each
// program planned as the tool plans one (cli/report.hpp, with NVRTC on), so its kernels land
// in the disk cache exactly as a lazy evaluation of the program would compile them.
#include "cli/precompile.hpp"

#include <ostream>
#include <sstream>

#include <fmt/format.h>

#include "cli/evaluator.hpp"
#include "cli/report.hpp"
#include "cli/syntax.hpp"
#include "compile/disk_cache.hpp"
#include "cufuse/error.hpp"
#include "cufuse/eval.hpp"

namespace cufuse::cli {

namespace {

std::string trim(const std::string& s) {
  const auto b = s.find_first_not_of(" \t\r"), e = s.find_last_not_of(" \t\r");
  return b == std::string::npos ? std::string() : s.substr(b, e - b + 1);
}

// The inputs' words: split at spaces outside brackets (a shape may be written "[8, 128]").
std::vector<std::string> words(const std::string& s) {
  std::vector<std::string> w;
  std::string cur;
  int depth = 0;
  for (char c : s) {
    depth += c == '[' ? 1 : c == ']' ? -1 : 0;
    if ((c == ' ' || c == '\t') && depth <= 0) {
      if (!cur.empty()) w.push_back(std::move(cur));
      cur.clear();
    } else {
      cur += c;
    }
  }
  if (!cur.empty()) w.push_back(std::move(cur));
  return w;
}

}  // namespace

std::vector<PrecompileEntry> parse_precompile_file(const std::string& text) {
  std::vector<PrecompileEntry> entries;
  std::istringstream in(text);
  std::string raw, line;
  int lineno = 0, start = 0;
  while (std::getline(in, raw)) {
    ++lineno;
    if (!raw.empty() && raw.back() == '\r') raw.pop_back();
    if (line.empty()) start = lineno;
    if (!raw.empty() && raw.back() == '\\') {  // continues on the next line
      raw.pop_back();
      line += raw + " ";
      continue;
    }
    line += raw;
    const std::string t = trim(line);
    line.clear();
    if (t.empty() || t[0] == '#') continue;
    const auto colon = t.find(':');
    if (colon == std::string::npos)
      throw UsageError(fmt::format("line {}: expected 'INPUTS : PROGRAM' (inputs such as x=f32[64,64]; a program "
                                   "without inputs starts with ':')", start));
    PrecompileEntry e;
    e.line = start;
    e.program = trim(t.substr(colon + 1));
    if (e.program.empty()) throw UsageError(fmt::format("line {}: no program after ':'", start));
    for (auto& w : words(t.substr(0, colon))) {
      if (w.rfind("out=", 0) == 0) {
        std::stringstream ss(w.substr(4));
        std::string part;
        while (std::getline(ss, part, ','))
          if (!trim(part).empty()) e.outs.push_back(trim(part));
        if (e.outs.empty()) throw UsageError(fmt::format("line {}: out= names no result", start));
      } else {
        e.args.push_back(std::move(w));
      }
    }
    entries.push_back(std::move(e));
  }
  if (!trim(line).empty()) throw UsageError(fmt::format("line {}: the file ends inside a continued line", start));
  return entries;
}

int run_precompile(const std::string& path, const std::string& text, int arch, std::ostream& out, std::ostream& err) {
  const detail::DiskCacheSettings cache = detail::disk_cache_settings();
  if (!cache.enabled) {
    err << fmt::format("cufuse-dump-kernels: error: --precompile fills the disk kernel cache, which is off ({})\n",
                       cache.why_off);
    return 2;
  }
  std::vector<PrecompileEntry> entries;
  try {
    entries = parse_precompile_file(text);
  } catch (const UsageError& e) {
    err << fmt::format("cufuse-dump-kernels: error: {}: {}\n", path, e.what());
    return 2;
  }
  int bad = 0, failed = 0;
  uint64_t kernels = 0, compiled = 0, disk = 0, memory = 0;
  for (const auto& en : entries) {
    const std::string where = fmt::format("{} line {}", path, en.line);
    std::vector<NamedArray> results;
    Evaluator ev;
    try {
      for (const auto& a : en.args) {
        try {
          ev.declare(parse_arg_spec(a));
        } catch (const ProgramError& e) {
          err << format_error(a, e, where + " input");
          throw UsageError("");
        }
      }
      try {
        ev.run(parse_program(en.program));
        results = ev.results(en.outs);
      } catch (const ProgramError& e) {
        err << format_error(en.program, e, where);
        throw UsageError("");
      }
      const Stats before = stats();
      ReportOptions opt;
      opt.arch = arch;
      opt.compile = true;
      opt.placeholder_names = ev.placeholder_names();
      opt.slots = ev.slots();
      const Report rep = build_report(ev.evaluations(), results, opt);
      const Stats after = stats();
      const int n = static_cast<int>(rep.kernels.size()) + [&] {
        int c = 0;
        for (const auto& l : rep.library_calls) c += l.has_kernel ? 1 : 0;
        return c;
      }();
      const int f = rep.failed_compiles();
      const uint64_t c = after.kernels_compiled - before.kernels_compiled;
      const uint64_t d = after.disk_cache_hits - before.disk_cache_hits;
      kernels += static_cast<uint64_t>(n);
      compiled += c;
      disk += d;
      memory += static_cast<uint64_t>(n - f) - c - d;
      failed += f;
      out << fmt::format("{}: {} kernel(s): {} compiled, {} from the disk cache, {} already in memory{}\n", where, n, c,
                         d, static_cast<uint64_t>(n - f) - c - d, f ? fmt::format(", {} FAILED", f) : "");
    } catch (const UsageError& e) {
      if (*e.what()) err << fmt::format("cufuse-dump-kernels: error: {}: {}\n", where, e.what());
      ++bad;
    } catch (const Error& e) {
      err << fmt::format("cufuse-dump-kernels: error: {}: {}\n", where, e.what());
      ++bad;
    }
  }
  out << fmt::format("precompiled {} program(s) for sm_{}: {} kernel(s), {} compiled by NVRTC, {} found on disk, {} in "
                     "memory{}; disk cache: {}\n",
                     entries.size() - static_cast<size_t>(bad), arch, kernels, compiled, disk, memory,
                     failed ? fmt::format(", {} failed", failed) : "", cache.dir.string());
  if (bad) return 2;
  return failed ? 1 : 0;
}

}  // namespace cufuse::cli
