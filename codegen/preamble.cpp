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

// Names looked up by string_view (no string made per identifier of a kernel's body).
struct NameHash {
  using is_transparent = void;
  size_t operator()(std::string_view s) const noexcept { return std::hash<std::string_view>{}(s); }
};

struct Chunks {
  std::vector<Chunk> list;
  std::unordered_map<std::string, std::vector<size_t>, NameHash, std::equal_to<>> by_name;
  std::vector<std::vector<size_t>> deps;  // per chunk: the chunks its text names, found once
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
      if (!r.list[i].name.empty()) r.by_name[r.list[i].name].push_back(i);
      r.list[i].outline = r.list[i].text.find("CF_FN_OUTLINE") != std::string::npos;
    }
    // Each chunk's dependencies, so a kernel's preamble scans only its body (a warm first
    // call makes its source before the launch: the chunks' texts were scanned every time).
    r.deps.resize(r.list.size());
    for (size_t i = 0; i < r.list.size(); ++i)
      for_each_cf_name(r.list[i].text, [&](std::string_view n) {
        if (auto it = r.by_name.find(n); it != r.by_name.end())
          for (size_t j : it->second)
            if (j != i) r.deps[i].push_back(j);
      });
    return r;
  }();
  return c;
}

}  // namespace

std::string kernel_preamble(std::string_view body) {
  const Chunks& c = chunks();
  std::vector<char> used(c.list.size(), 0);
  std::vector<size_t> todo;
  auto use = [&](size_t i) {
    if (!used[i]) {
      used[i] = 1;
      todo.push_back(i);
    }
  };
  for_each_cf_name(body, [&](std::string_view name) {
    if (auto it = c.by_name.find(name); it != c.by_name.end())
      for (size_t i : it->second) use(i);
  });
  while (!todo.empty()) {
    const size_t i = todo.back();
    todo.pop_back();
    for (size_t j : c.deps[i]) use(j);
  }
  std::string_view head(kHead), outline_head(kOutlineHead), end(kPreambleEnd);
  bool outline = false;
  size_t bytes = head.size() + end.size();
  for (size_t i = 0; i < c.list.size(); ++i)
    if (used[i]) {
      outline |= c.list[i].outline;
      bytes += c.list[i].text.size();
    }
  if (outline) bytes += outline_head.size();
  std::string out;
  out.reserve(bytes);
  out += head;
  if (outline) out += outline_head;
  for (size_t i = 0; i < c.list.size(); ++i)
    if (used[i]) out += c.list[i].text;
  out += end;
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
