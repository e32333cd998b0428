// src/plan/rules.hpp: the planner's rules, in one table: each rule's name, one-line doc and
// place in the order the planner applies them. The plan dump, the CLI's report and its
// --json name a group's rule, the rules that fused work into it, and the cuts each made
// (plan.hpp's Cut) from this table. The rules themselves are the files plan/rules_*.cpp.
#pragma once
#include <cstdint>
#include <string>
#include <string_view>

namespace cufuse::detail {

enum class Rule : uint8_t {
  Library,         // rules_library.cpp
  LibraryInput,    // rules_library.cpp
  FusedInput,      // rules_library.cpp
  Prologue,        // rules_reduction.cpp
  Siblings,        // rules_reduction.cpp
  Rows,            // rules_reduction.cpp
  MultiPass,       // rules_reduction.cpp
  Epilogue,        // rules_reduction.cpp (and rules_library.cpp: a GEMM's cuBLASLt epilogue)
  Scan,            // rules_reduction.cpp
  Materialize,     // planner.cpp: results read from memory by other groups
  Output,          // rules_elementwise.cpp
  IterationSpace,  // rules_elementwise.cpp
  ParamSpace,      // rules_elementwise.cpp with plan/param_budget.hpp
  KernelSize,      // rules_elementwise.cpp with plan/kernel_size.hpp
  Count
};

struct RuleInfo {
  Rule id;
  std::string_view name;  // as the dump prints it: "iteration-space"
  std::string_view doc;   // one line
};

// In the order the planner applies them (Rule's order).
inline constexpr RuleInfo kRules[] = {
    {Rule::Library, "library",
     "a matmul, contraction, solver, convolution, sort or selection-by-mask call runs on its own (cuBLAS, cuSOLVER, "
     "CUB, or its generated kernel); "
     "a bias add or GELU over one GEMM result becomes its cuBLASLt epilogue"},
    {Rule::LibraryInput, "library-input",
     "a library input whose layout the call cannot read is written contiguously by one kernel first"},
    {Rule::FusedInput, "fused-input",
     "a call whose generated kernel computes an input element by element (a selection by mask: its mask and values) "
     "takes that input's elementwise producer into its kernel instead of reading it from memory"},
    {Rule::Prologue, "prologue", "the elementwise producers of a reduction are computed inside it"},
    {Rule::Siblings, "siblings", "reductions over the same input shape and axes share one kernel"},
    {Rule::Rows, "rows",
     "a reduction broadcast back over its rows and reduced or mapped again is one row kernel (a row-shaped result "
     "whose rows that kernel would read across threads gets a kernel of its own)"},
    {Rule::MultiPass, "multi-pass", "rows too long for one block: each reduction runs as its own kernel"},
    {Rule::Epilogue, "epilogue", "elementwise consumers over a reduction's output are computed after it, in its kernel"},
    {Rule::Scan, "scan", "a cumulative sum/product is its own kernel with its elementwise producers fused"},
    {Rule::Materialize, "materialize",
     "a reduction or call result read other than by broadcast-back or epilogue is written to memory"},
    {Rule::Output, "output",
     "elementwise, view, scalar and generator work under a result fuses into the kernel writing it"},
    {Rule::IterationSpace, "iteration-space",
     "results over one shape share a kernel; results over other shapes get their own"},
    {Rule::ParamSpace, "param-space",
     "a kernel's parameters must fit CUDA's 32 KB: work that would pass that is cut out and written to memory by a "
     "kernel of its own, or starts another kernel"},
    {Rule::KernelSize, "kernel-size",
     "a kernel computes at most CUFUSE_MAX_KERNEL_OPS elementwise ops and views (NVRTC's time grows faster than the "
     "code): work that would pass that is cut out and written to memory by a kernel of its own, or starts another "
     "kernel"},
};

constexpr bool rules_in_order() {
  for (int i = 0; i < static_cast<int>(Rule::Count); ++i)
    if (static_cast<int>(kRules[i].id) != i) return false;
  return sizeof(kRules) / sizeof(kRules[0]) == static_cast<size_t>(Rule::Count);
}
static_assert(rules_in_order(), "kRules lists every Rule once, in Rule's order");

constexpr const RuleInfo& rule_info(Rule r) { return kRules[static_cast<int>(r)]; }
inline const char* rule_name(Rule r) { return rule_info(r).name.data(); }
inline const char* rule_doc(Rule r) { return rule_info(r).doc.data(); }
// The limit behind a rule's cut, as a plan dump prints it after the rule's name ("" for a
// rule without one): "limit 1024 ops a kernel".
std::string rule_limit(Rule r);

}  // namespace cufuse::detail
