// codegen/preamble.cpp: the preamble of a generated kernel (see preamble.hpp): the helper
// texts cut into top-level declarations, and the closure of those a kernel body names.
#include "codegen/preamble.hpp"

#include <string>
#include <unordered_map>
#include <vector>

#include <fmt/format.h>

#include "codegen/preamble_device.inc"

namespace cufuse::detail {

namespace {

const char* kHelpers =
#include "device_helpers_str.inc"
    ;


bool ident_char(char c) { return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '_'; }

// Every cf_ identifier in `text`, in order (repeats included).
template <class F>
void for_each_cf_name(std::string_view text, F&& f) {
  for (size_t p = text.find("cf_"); p != std::string_view::npos; p = text.find("cf_", p + 3)) {
    if (p > 0 && ident_char(text[p - 1])) continue;
    size_t e = p + 3;
    while (e < text.size() && ident_char(text[e])) ++e;
    f(text.substr(p, e - p));
  }
}

// The name a top-level declaration's first line declares: the first cf_ identifier after
// `struct`, or the last one before a function's `(`, past a template argument list
// (cf_st<cf_f16>(float v) declares cf_st).
std::string declared_name(std::string_view line) {
  std::string name;
  if (size_t s = line.find("struct "); s != std::string_view::npos) {
    for_each_cf_name(line.substr(s), [&](std::string_view n) {
      if (name.empty()) name = n;
    });
    return name;
  }
  std::string_view head = line.substr(0, line.find('('));
  while (!head.empty() && head.back() == ' ') head.remove_suffix(1);
  if (!head.empty() && head.back() == '>') {
    int depth = 0;
    size_t k = head.size();
    while (k > 0) {
      const char ch = head[--k];
      if (ch == '>') ++depth;
      else if (ch == '<' && --depth == 0) break;
    }
    head = head.substr(0, k);
  }
  for_each_cf_name(head, [&](std::string_view n) { name = n; });
  return name;
}

struct Chunk {
  std::string text;
  std::string name;
  bool outline = false;  // declared CF_FN_OUTLINE: its kernel's preamble defines kOutlineHead
};

struct Chunks {
  std::vector<Chunk> list;
  std::unordered_multimap<std::string, size_t> by_name;
  std::string all;
};

bool starts_declaration(std::string_view line) {
  for (std::string_view k : {"template", "CF_FN", "struct", "__device__"})
    if (line.substr(0, k.size()) == k) return true;
  return false;
}

const Chunks& chunks() {
  static const Chunks c = [] {
    Chunks r;
    const std::string text = std::string(kFirst) + kHelpers + kTypes;
    r.all = std::string(kHead) + std::string(kOutlineHead) + text;
    std::string pending;  // column-0 comments and blank lines: they go with what follows
    size_t pos = 0;
    while (pos < text.size()) {
      size_t nl = text.find('\n', pos);
      const size_t end = nl == std::string::npos ? text.size() : nl + 1;
      const std::string_view line(text.data() + pos, end - pos);
      pos = end;
      if (line.substr(0, 2) == "//" || line.find_first_not_of(" \t\r\n") == std::string_view::npos) {
        pending += line;
      } else if (starts_declaration(line)) {
        r.list.push_back(Chunk{pending + std::string(line), declared_name(line)});
        pending.clear();
      } else if (!r.list.empty()) {  // inside the declaration above
        r.list.back().text += pending;
        r.list.back().text += line;
        pending.clear();
      }
    }
    for (size_t i = 0; i < r.list.size(); ++i) {
      if (!r.list[i].name.empty()) r.by_name.emplace(r.list[i].name, i);
      r.list[i].outline = r.list[i].text.find("CF_FN_OUTLINE") != std::string::npos;
    }
    return r;
  }();
  return c;
}

}  // namespace

std::string kernel_preamble(std::string_view body) {
  const Chunks& c = chunks();
  std::vector<char> used(c.list.size(), 0);
  std::vector<size_t> todo;
  auto want = [&](std::string_view name) {
    auto [b, e] = c.by_name.equal_range(std::string(name));
    for (auto it = b; it != e; ++it)
      if (!used[it->second]) {
        used[it->second] = 1;
        todo.push_back(it->second);
      }
  };
  for_each_cf_name(body, want);
  while (!todo.empty()) {
    const size_t i = todo.back();
    todo.pop_back();
    for_each_cf_name(c.list[i].text, want);
  }
  std::string out(kHead);
  bool outline = false;
  for (size_t i = 0; i < c.list.size(); ++i) outline |= used[i] && c.list[i].outline;
  if (outline) out += kOutlineHead;
  for (size_t i = 0; i < c.list.size(); ++i)
    if (used[i]) out += c.list[i].text;
  out += kPreambleEnd;
  return out;
}

std::string kernel_name(std::string_view kind, const std::vector<DType>& outputs, uint64_t hash) {
  std::string types;
  for (size_t i = 0; i < outputs.size();) {
    size_t j = i;
    while (j < outputs.size() && outputs[j] == outputs[i]) ++j;
    const std::string_view t = info(outputs[i]).short_name;
    if (j - i > 2) types += fmt::format("{}x{}", t, j - i);
    else for (size_t k = i; k < j; ++k) types += t;
    i = j;
  }
  return fmt::format("cf_{}_{}_{:016x}", kind, types, hash);
}

std::string kernel_source(std::string_view name, std::string_view params_decl, int block, std::string_view body,
                          int min_blocks) {
  const std::string bounds = min_blocks > 0 ? fmt::format("{}, {}", block, min_blocks) : std::to_string(block);
  const std::string text = fmt::format("\nstruct {}_params {{\n{}}};\n\nextern \"C\" __global__ void __launch_bounds__({}) "
                                       "{}(const {}_params p) {{\n{}}}\n",
                                       name, params_decl, bounds, name, name, body);
  return kernel_preamble(text) + text;
}

const std::string& full_preamble() { return chunks().all; }

}  // namespace cufuse::detail
