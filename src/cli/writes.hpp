// src/cli/writes.hpp: what the program's in-place writes (x += e, x[i] = e, x[i] op= e)
// leave for the report: the evaluations cufuse runs at each write, in order, and the
// memory each placeholder slot stands for. writes.cpp does the writes (Evaluator members).
//
// The tool has no memory: its inputs are placeholders. A write is modeled on them: every
// memory the program reads or writes (an --arg input, a lazy array made memory to be
// written, values evaluated before a write, a temporary) is a placeholder slot, and each
// write makes a new version of its memory, a new slot, which every handle that is a view of
// that memory is rebound to (names are handles, as in Python: y = x; x += 1 and y sees it).
#pragma once
#include <string>
#include <vector>

#include "cufuse/enum_names.hpp"
#include "cli/syntax.hpp"
#include "cli/value.hpp"
#include "cufuse/shape.hpp"

namespace cufuse::cli {

#define CUFUSE_EVALUATION_KINDS(X)                                                                                               \
  X(Materialize, "materialize")  /* the array written is lazy: it is computed into memory of its own first */                    \
  X(Settle, "settle")            /* pending values that read the memory written are computed first (they keep the old values) */ \
  X(Temporary, "temporary")      /* the value reads the memory other than element for element: it goes to a temporary first */   \
  X(Write, "write")              /* the write: one root, computed into the memory through the target's view */
// One evaluation cufuse runs at a write, before the program's results.
struct Evaluation {
  enum class Kind { CUFUSE_EVALUATION_KINDS(CUFUSE_ENUMERATOR) };
  Kind kind = Kind::Write;
  std::string why;                // one line for the report
  Loc loc;                        // the statement that writes
  std::vector<NamedArray> roots;  // what it computes, with the report's names
  std::vector<int> slots;         // per root: the placeholder slot that stands for its memory afterwards
                                  // (Write: the memory's new version)
  // Write: the memory written (its name, the slot read before the write) and the view the
  // root goes through, in elements of that memory.
  std::string memory;
  int target_slot = -1;
  Shape shape;
  Strides strides;
  int64_t offset = 0;
};

inline const char* evaluation_kind_name(Evaluation::Kind k) { return CUFUSE_ENUM_NAME(CUFUSE_EVALUATION_KINDS, k); }  // "materialize", "settle", "temporary", "write"

// What a placeholder slot stands for.
struct MemorySlot {
  std::string label;    // the report's name: "x", "x (after the write at 2:1)", "y (evaluated before the write at 2:1)"
  std::string memory;   // the memory's own name ("x")
  int first_slot = 0;   // the memory's first slot: slots of one memory share it
  int written_by = -1;  // the evaluation (index) whose result this slot is, or -1 (an --arg input)
};

}  // namespace cufuse::cli
