// src/cli/render.cpp: the Report (report.hpp) as text for people, JSON for tools (written by
// hand, RFC 8259 escaping, no JSON library), and a Graphviz graph with one cluster per kernel.
#include <algorithm>
#include <cmath>

#include <fmt/format.h>

#include "cli/report.hpp"

namespace cufuse::cli {

namespace {

std::string dims(const Shape& s) { return to_string(s); }
std::string strides_text(const Strides& s) {
  if (s.size() == 1) return fmt::format("({},)", s[0]);
  return fmt::format("({})", fmt::join(s.begin(), s.end(), ", "));
}
bool plain_strides(const LeafRead& l) { return l.strides.empty() || l.strides == contiguous_strides(l.shape); }

std::string written_text(const WrittenValue& w) {
  std::string names = w.results.empty() ? fmt::format("[intermediate] {}", w.what) : fmt::format("{}", fmt::join(w.results, " = "));
  std::string s = fmt::format("{}: {} {}", names, name(w.dtype), dims(w.shape));
  if (w.in_place) {
    s += fmt::format(" [in place into {}", w.memory);
    if (!(w.strides == contiguous_strides(w.shape))) s += fmt::format(", strides {}", strides_text(w.strides));
    if (w.offset) s += fmt::format(", offset {}", w.offset);
    s += "]";
  }
  return s;
}

std::string leaf_text(const LeafRead& l) {
  if (l.kind == "scalar") return fmt::format("scalar {} ({}, a kernel parameter)", l.label, name(l.dtype));
  std::string s = fmt::format("{}: {} {}", l.label, name(l.dtype), dims(l.shape));
  if (l.kind == "intermediate") return fmt::format("{}: {} {} [memory]", l.label, name(l.dtype), dims(l.shape));
  if (l.kind != "placeholder" && l.kind != "buffer") s = fmt::format("{} [generator]", s);
  if (!plain_strides(l)) s += fmt::format(", strides {}", strides_text(l.strides));
  if (l.offset) s += fmt::format(", offset {}", l.offset);
  return s;
}

std::string indent(const std::string& text, const char* pad) {
  std::string out;
  size_t b = 0;
  while (b < text.size()) {
    size_t e = text.find('\n', b);
    if (e == std::string::npos) e = text.size();
    out += e > b ? pad + text.substr(b, e - b) : "";
    out += '\n';
    b = e + 1;
  }
  return out;
}

// ------------------------------------------------------------------ JSON
std::string j(std::string_view s) { return json_string(s); }
std::string j_shape(const Shape& s) { return fmt::format("[{}]", fmt::join(s.begin(), s.end(), ", ")); }
std::string j_strides(const Strides& s) { return fmt::format("[{}]", fmt::join(s.begin(), s.end(), ", ")); }
std::string j_names(const std::vector<std::string>& v) {
  std::string s = "[";
  for (size_t i = 0; i < v.size(); ++i) s += (i ? ", " : "") + j(v[i]);
  return s + "]";
}
std::string j_number(double v) { return std::isfinite(v) ? fmt::format("{:.3f}", v) : "null"; }
std::string j_written(const std::vector<WrittenValue>& ws) {
  std::string s = "[";
  for (size_t i = 0; i < ws.size(); ++i) {
    const auto& w = ws[i];
    const std::string in_place =
        w.in_place ? fmt::format("{{\"memory\": {}, \"strides\": {}, \"offset\": {}}}", j(w.memory), j_strides(w.strides), w.offset)
                   : "null";
    s += fmt::format("{}{{\"results\": {}, \"what\": {}, \"dtype\": {}, \"shape\": {}, \"in_place\": {}}}",
                     i ? ", " : "", j_names(w.results), j(w.what), j(name(w.dtype)), j_shape(w.shape), in_place);
  }
  return s + "]";
}
std::string j_reads(const std::vector<LeafRead>& rs) {
  std::string s = "[";
  for (size_t o = 0; o < rs.size(); ++o) {
    const auto& l = rs[o];
    s += fmt::format("{}{{\"kind\": {}, \"label\": {}, \"dtype\": {}, \"shape\": {}, \"strides\": {}, \"offset\": {}}}",
                     o ? ", " : "", j(l.kind), j(l.label), j(name(l.dtype)), j_shape(l.shape), j_strides(l.strides),
                     l.offset);
  }
  return s + "]";
}

// ------------------------------------------------------------------ DOT
std::string dot_string(std::string_view s) {
  std::string out = "\"";
  for (char c : s) {
    if (c == '"' || c == '\\') {
      out += '\\';
      out += c;
    } else if (c == '\n') {
      out += "\\n";
    } else if (static_cast<unsigned char>(c) < 0x20) {
      out += ' ';
    } else {
      out += c;
    }
  }
  return out + "\"";
}

}  // namespace

std::string json_string(std::string_view s) {
  std::string out = "\"";
  for (size_t i = 0; i < s.size(); ++i) {
    const unsigned char c = static_cast<unsigned char>(s[i]);
    switch (c) {
      case '"': out += "\\\""; continue;
      case '\\': out += "\\\\"; continue;
      case '\n': out += "\\n"; continue;
      case '\r': out += "\\r"; continue;
      case '\t': out += "\\t"; continue;
      case '\b': out += "\\b"; continue;
      case '\f': out += "\\f"; continue;
      default: break;
    }
    if (c < 0x20 || c == 0x7f) {
      out += fmt::format("\\u{:04x}", c);
      continue;
    }
    if (c < 0x80) {
      out += static_cast<char>(c);
      continue;
    }
    // Multi-byte UTF-8: copy a well-formed sequence, replace anything else with U+FFFD.
    int len = (c & 0xE0) == 0xC0 ? 2 : (c & 0xF0) == 0xE0 ? 3 : (c & 0xF8) == 0xF0 ? 4 : 0;
    bool ok = len > 0 && i + static_cast<size_t>(len) <= s.size() && c >= 0xC2 && c <= 0xF4;
    for (int k = 1; ok && k < len; ++k) ok = (static_cast<unsigned char>(s[i + static_cast<size_t>(k)]) & 0xC0) == 0x80;
    if (ok && len == 3) {
      const unsigned char c1 = static_cast<unsigned char>(s[i + 1]);
      ok = !(c == 0xE0 && c1 < 0xA0) && !(c == 0xED && c1 >= 0xA0);  // overlong, surrogates
    }
    if (ok && len == 4) {
      const unsigned char c1 = static_cast<unsigned char>(s[i + 1]);
      ok = !(c == 0xF0 && c1 < 0x90) && !(c == 0xF4 && c1 >= 0x90);
    }
    if (ok) {
      out.append(s.substr(i, static_cast<size_t>(len)));
      i += static_cast<size_t>(len) - 1;
    } else {
      out += "\\ufffd";
    }
  }
  return out + "\"";
}

std::string render_text(const Report& r, SourceMode source) {
  std::string s;
  s += fmt::format("cufuse-dump-kernels: sm_{}, {} kernel{}, {} library call{}", r.arch, r.kernels.size(),
                   r.kernels.size() == 1 ? "" : "s", r.library_calls.size(), r.library_calls.size() == 1 ? "" : "s");
  s += r.evaluations.empty() ? "\n" : fmt::format(" in {} evaluations (the program writes in place)\n", r.evaluations.size());
  s += "\nresults:\n";
  for (const auto& res : r.results) {
    const std::string by = res.kernel >= 0 ? fmt::format("kernel {}", res.kernel)
                           : res.library_call >= 0 ? fmt::format("library call {}", res.library_call)
                                                   : "?";
    std::string where = res.written_by >= 0 ? fmt::format("in memory, written by {} (evaluation {})", by, res.written_by)
                        : res.in_memory ? "already in memory"
                                        : by;
    s += fmt::format("  {}: {} {}  <- {}\n", res.name, name(res.dtype), dims(res.shape), where);
  }
  if (!r.evaluations.empty()) {
    s += "\nevaluations, in order (a write runs when the program reaches it):\n";
    for (size_t e = 0; e < r.evaluations.size(); ++e)
      s += fmt::format("  {}. {}: {}\n", e, r.evaluations[e].kind, r.evaluations[e].why);
  }
  const size_t groups = r.kernels.size() + r.library_calls.size();
  if (groups == 0) {
    s += "\nplan: nothing to compute (every result is in memory)\n";
    return s;
  }
  s += fmt::format("\nplan: {} group{} in execution order\n", groups, groups == 1 ? "" : "s");
  int shown_evaluation = -1;
  auto evaluation_head = [&](int e) {
    if (r.evaluations.empty() || e == shown_evaluation) return;
    shown_evaluation = e;
    const auto& ev = r.evaluations[static_cast<size_t>(e)];
    s += fmt::format("\n== evaluation {} ({}){}\n", e, ev.kind,
                     ev.line > 0 ? fmt::format(", at {}:{}", ev.line, ev.column) : std::string());
  };
  auto lines = [&](const char* head, const std::vector<std::string>& items) {
    for (size_t o = 0; o < items.size(); ++o)
      s += fmt::format("  {}{}\n", o == 0 ? head : "           ", items[o]);
  };
  // code summary, NVRTC result and source of a kernel (a group's, or a library call's own)
  auto kernel_tail = [&](const KernelReport& k) {
    if (!k.summary.empty()) s += fmt::format("  code:      {}\n", k.summary);
    if (!r.compiled) {
      s += "  nvrtc:     not compiled (--no-compile)\n";
    } else if (!k.error.empty()) {
      s += fmt::format("  nvrtc:     FAILED for sm_{}\n", r.arch);
      s += indent(k.error, "    ");
      if (!k.error_log.empty() && k.error.find(k.error_log) == std::string::npos) s += indent(k.error_log, "    ");
    } else {
      std::string regs = k.registers >= 0 ? fmt::format("{} registers", k.registers) : "registers unknown";
      s += fmt::format("  nvrtc:     sm_{}: {}, {} B spill stores, {} B spill loads, {} B stack, {}\n", r.arch, regs,
                       k.spill_stores, k.spill_loads, k.stack_bytes,
                       k.from_disk ? "from the disk cache" : fmt::format("compiled in {:.1f} ms", k.compile_ms));
    }
    if (source != SourceMode::None) {
      s += fmt::format("\n  ---- source of {} ----\n", k.name);
      if (source == SourceMode::Body && k.preamble_length > 0) {
        const std::string_view pre(k.source.data(), k.preamble_length);
        const auto nlines = std::count(pre.begin(), pre.end(), '\n');
        s += fmt::format("  // [{} lines of preamble: the shared helpers this kernel uses (codegen/preamble.cpp); "
                         "--full-source shows them]\n", nlines);
        s += indent(k.source.substr(k.preamble_length), "  ");
      } else {
        s += indent(k.source, "  ");
      }
      s += fmt::format("  ---- end of {} ----\n", k.name);
    }
  };
  size_t ki = 0, li = 0;
  while (ki < r.kernels.size() || li < r.library_calls.size()) {
    const bool kernel_next = li >= r.library_calls.size() ||
                             (ki < r.kernels.size() && r.kernels[ki].group < r.library_calls[li].group);
    std::vector<std::string> outs, ins;
    if (!kernel_next) {
      const auto& l = r.library_calls[li];
      evaluation_head(l.evaluation);
      s += fmt::format("\nlibrary call {}: {}  (group {})\n", li, l.name, l.group);
      s += fmt::format("  rule:      {}: {}\n", l.rule, l.rule_doc);
      for (const auto& c : l.cuts) s += fmt::format("  {}\n", c);
      if (!l.detail.empty()) s += fmt::format("  call:      {}\n", l.detail);
      for (const auto& w : l.outputs) outs.push_back(written_text(w));
      for (const auto& x : l.inputs) ins.push_back(leaf_text(x));
      lines("writes:    ", outs);
      lines("reads:     ", ins);
      if (l.has_kernel) {
        s += fmt::format("  kernel:    {}\n", l.kernel.name);
        kernel_tail(l.kernel);
      }
      ++li;
      continue;
    }
    const auto& k = r.kernels[ki];
    evaluation_head(k.evaluation);
    s += fmt::format("\nkernel {}: {}  (group {}, {})\n", ki, k.name, k.group, k.kind);
    s += fmt::format("  rule:      {}: {}\n", k.rule, k.rule_doc);
    if (!k.fused.empty()) s += fmt::format("  fused:     {}\n", fmt::join(k.fused, ", "));
    for (const auto& c : k.cuts) s += fmt::format("  {}\n", c);
    s += fmt::format("  iterates:  {}{}\n", dims(k.iteration_shape),
                     k.axes.empty() ? std::string()
                                   : fmt::format(", {} {}", k.kind == "scan" ? "scanning axis" : "reducing axes",
                                                 k.kind == "scan" && k.axes.size() == 1 ? std::to_string(k.axes[0])
                                                                                        : dims(Shape(k.axes.begin(), k.axes.end()))));
    for (const auto& w : k.outputs) outs.push_back(written_text(w));
    for (const auto& x : k.inputs) ins.push_back(leaf_text(x));
    lines("writes:    ", outs);
    lines("reads:     ", ins);
    kernel_tail(k);
    ++ki;
  }
  return s;
}

std::string render_json(const Report& r, bool with_source) {
  std::string s = "{\n";
  s += fmt::format("  \"tool\": \"cufuse-dump-kernels\",\n  \"arch\": {},\n  \"compiled\": {},\n", r.arch,
                   r.compiled ? "true" : "false");
  s += "  \"results\": [";
  for (size_t i = 0; i < r.results.size(); ++i) {
    const auto& res = r.results[i];
    s += fmt::format("{}\n    {{\"name\": {}, \"dtype\": {}, \"shape\": {}, \"in_memory\": {}, \"kernel\": {}, "
                     "\"library_call\": {}, \"written_by\": {}}}",
                     i ? "," : "", j(res.name), j(name(res.dtype)), j_shape(res.shape), res.in_memory ? "true" : "false",
                     res.kernel >= 0 ? std::to_string(res.kernel) : "null",
                     res.library_call >= 0 ? std::to_string(res.library_call) : "null",
                     res.written_by >= 0 ? std::to_string(res.written_by) : "null");
  }
  s += r.results.empty() ? "],\n" : "\n  ],\n";
  s += "  \"evaluations\": [";
  for (size_t i = 0; i < r.evaluations.size(); ++i) {
    const auto& e = r.evaluations[i];
    s += fmt::format("{}\n    {{\"kind\": {}, \"why\": {}, \"line\": {}, \"column\": {}}}", i ? "," : "", j(e.kind),
                     j(e.why), e.line, e.column);
  }
  s += r.evaluations.empty() ? "],\n" : "\n  ],\n";
  s += "  \"kernels\": [";
  for (size_t i = 0; i < r.kernels.size(); ++i) {
    const auto& k = r.kernels[i];
    s += i ? ",\n    {\n" : "\n    {\n";
    s += fmt::format("      \"name\": {},\n      \"group\": {},\n      \"evaluation\": {},\n      \"kind\": {},\n", j(k.name),
                     k.group, k.evaluation, j(k.kind));
    s += fmt::format("      \"rule\": {},\n      \"rule_doc\": {},\n", j(k.rule), j(k.rule_doc));
    s += fmt::format("      \"fused\": {},\n", j_names(k.fused));
    s += fmt::format("      \"cuts\": {},\n", j_names(k.cuts));
    s += fmt::format("      \"iteration_shape\": {},\n", j_shape(k.iteration_shape));
    s += fmt::format("      \"axes\": [{}],\n", fmt::join(k.axes.begin(), k.axes.end(), ", "));
    s += fmt::format("      \"outputs\": {},\n", j_written(k.outputs));
    s += fmt::format("      \"inputs\": {},\n", j_reads(k.inputs));
    s += fmt::format("      \"summary\": {},\n", j(k.summary));
    s += fmt::format("      \"source\": {},\n", with_source ? j(k.source) : "null");
    const bool ok = r.compiled && k.error.empty();
    s += fmt::format("      \"compiled\": {},\n", ok ? "true" : "false");
    s += fmt::format("      \"registers\": {},\n", ok && k.registers >= 0 ? std::to_string(k.registers) : "null");
    s += fmt::format("      \"spill_stores\": {},\n      \"spill_loads\": {},\n",
                     ok ? std::to_string(k.spill_stores) : "null", ok ? std::to_string(k.spill_loads) : "null");
    s += fmt::format("      \"stack_bytes\": {},\n      \"shared_bytes\": {},\n",
                     ok ? std::to_string(k.stack_bytes) : "null", ok ? std::to_string(k.shared_bytes) : "null");
    s += fmt::format("      \"compile_ms\": {},\n      \"from_disk\": {},\n", ok ? j_number(k.compile_ms) : "null",
                     k.from_disk ? "true" : "false");
    s += fmt::format("      \"error\": {},\n", k.error.empty() ? "null" : j(k.error));
    s += fmt::format("      \"error_log\": {}\n", k.error_log.empty() ? "null" : j(k.error_log));
    s += "    }";
  }
  s += r.kernels.empty() ? "],\n" : "\n  ],\n";
  s += "  \"library_calls\": [";
  for (size_t i = 0; i < r.library_calls.size(); ++i) {
    const auto& l = r.library_calls[i];
    s += fmt::format("{}\n    {{\"name\": {}, \"group\": {}, \"evaluation\": {}, \"rule\": {}, \"rule_doc\": {}, "
                     "\"cuts\": {}, \"detail\": {}, \"outputs\": {}, \"inputs\": {}, \"kernel\": {}}}",
                     i ? "," : "", j(l.name), l.group, l.evaluation, j(l.rule), j(l.rule_doc), j_names(l.cuts), j(l.detail), j_written(l.outputs),
                     j_reads(l.inputs),
                     l.has_kernel ? fmt::format("{{\"name\": {}, \"summary\": {}, \"source\": {}}}", j(l.kernel.name),
                                                j(l.kernel.summary), with_source ? j(l.kernel.source) : "null")
                                  : "null");
  }
  s += r.library_calls.empty() ? "]\n" : "\n  ]\n";
  s += "}\n";
  return s;
}

std::string render_dot(const Report& r) {
  std::string s = "digraph cufuse_plan {\n";
  s += "  rankdir=TB;\n  compound=true;\n";
  s += "  node [shape=box, style=\"rounded\", fontname=\"monospace\", fontsize=10];\n";
  s += "  edge [color=\"#555555\"];\n";
  // Leaves, outside every cluster.
  for (const auto& n : r.graph) {
    if (n.kernel >= 0 || n.library_call >= 0) continue;
    const char* fill = n.kind == "placeholder" || n.kind == "buffer" ? "#dde8ff" : (n.kind == "scalar" ? "#f2f2f2" : "#e6f5e6");
    s += fmt::format("  n{} [label={}, shape={}, style=filled, fillcolor=\"{}\"];\n", n.id, dot_string(n.label),
                     n.kind == "scalar" ? "plaintext" : "ellipse", fill);
  }
  for (size_t ki = 0; ki < r.kernels.size(); ++ki) {
    const auto& k = r.kernels[ki];
    s += fmt::format("  subgraph cluster_kernel{} {{\n", ki);
    const std::string ev = r.evaluations.empty() ? std::string()
                           : fmt::format("evaluation {} ({}): ", k.evaluation, r.evaluations[static_cast<size_t>(k.evaluation)].kind);
    s += fmt::format("    label={};\n", dot_string(fmt::format("{}kernel {}: {}\nrule: {}  iterates {}", ev, ki, k.name, k.rule,
                                                               to_string(k.iteration_shape))));
    s += "    style=\"rounded,filled\";\n    fillcolor=\"#fff8e6\";\n    color=\"#c08000\";\n";
    for (const auto& n : r.graph) {
      if (n.kernel != static_cast<int>(ki)) continue;
      std::string label = n.label;
      if (!n.results.empty()) label += fmt::format("\n=> {}", fmt::join(n.results, ", "));
      s += fmt::format("    n{} [label={}{}];\n", n.id, dot_string(label), n.results.empty() ? "" : ", penwidth=2");
    }
    s += "  }\n";
  }
  for (size_t li = 0; li < r.library_calls.size(); ++li) {
    const auto& l = r.library_calls[li];
    s += fmt::format("  subgraph cluster_call{} {{\n", li);
    const std::string ev = r.evaluations.empty() ? std::string()
                           : fmt::format("evaluation {} ({}): ", l.evaluation, r.evaluations[static_cast<size_t>(l.evaluation)].kind);
    s += fmt::format("    label={};\n", dot_string(fmt::format("{}library call {}: {}\nrule: {}", ev, li, l.detail, l.rule)));
    s += "    style=\"rounded,filled\";\n    fillcolor=\"#eef6ff\";\n    color=\"#3070c0\";\n";
    for (const auto& n : r.graph) {
      if (n.library_call != static_cast<int>(li)) continue;
      std::string label = n.label;
      if (!n.results.empty()) label += fmt::format("\n=> {}", fmt::join(n.results, ", "));
      s += fmt::format("    n{} [label={}, shape=box3d{}];\n", n.id, dot_string(label), n.results.empty() ? "" : ", penwidth=2");
    }
    s += "  }\n";
  }
  for (const auto& n : r.graph)
    for (size_t i = 0; i < n.inputs.size(); ++i)
      s += fmt::format("  n{} -> n{}{};\n", n.inputs[i], n.id,
                       n.inputs.size() > 1 ? fmt::format(" [taillabel=\"\", headlabel=\"{}\", fontsize=8]", i) : "");
  s += "}\n";
  return s;
}

}  // namespace cufuse::cli
