// src/cli/precompile.hpp: cufuse-dump-kernels --precompile FILE (issue 35): compiles the
// kernels of every program in FILE into the disk cache, so that a service ships a warm cache
// (the C++ API is cufuse::precompile, include/cufuse/precompile.hpp).
//
// FILE: one program per line, its inputs before a ':' (the --arg specs, separated by spaces)
// and the program after it, in the tool's syntax (statements separated by ';'); `out=a,b`
// among the inputs names the results (--out); a line ending in '\' continues on the next;
// '#' starts a comment line; blank lines are skipped. A program without inputs starts with
// ':'.
//
//   # softmax rows, and a fused elementwise chain
//   x=f32[8192,8192] : e = exp(x - max(x, axis=1, keepdims=True)); e / sum(e, axis=1, keepdims=True)
//   x=f32[4096,4096] y=f32[4096] : sqrt(x*x + y)
//   x=f16[1024,1024] out=a,b : a = x * 2; b = exp(x)
#pragma once
#include <iosfwd>
#include <string>
#include <vector>

namespace cufuse::cli {

// One program of a precompile file.
struct PrecompileEntry {
  int line = 0;                    // where it starts in the file (1-based)
  std::vector<std::string> args;   // NAME=DTYPE[SHAPE], as --arg takes them
  std::vector<std::string> outs;   // out=a,b: results by name (empty: the last statement's value)
  std::string program;
};

// Splits the file's text into entries. Throws UsageError naming the line of a malformed one.
std::vector<PrecompileEntry> parse_precompile_file(const std::string& text);

// Compiles every entry's kernels for `arch` (into the memory and disk caches), printing a line
// per program and a summary to `out`, errors to `err`. Exit status as the tool's: 0, 1 when a
// kernel failed to compile, 2 for a bad file or program (the others are still compiled).
int run_precompile(const std::string& path, const std::string& text, int arch, std::ostream& out, std::ostream& err);

}  // namespace cufuse::cli
