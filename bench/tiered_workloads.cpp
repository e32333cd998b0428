// bench/tiered_workloads.cpp: the bytecode interpreter's own speed (issue 35): W1-interp ..
// W4-interp run the registered W1 .. W4 with CUFUSE_TIERED=interpret, so every group the
// interpreter can run runs on it (and is never compiled); groups it cannot run compile as
// before, which the notes say (W2's full reduction, one row of 2^27, runs split over blocks:
// codegen/bytecode_rows.cpp). At the end of
// a run, main.cpp adds each row's ratio to the specialized kernel's row of the same run
// (add_interp_ratios): run W1,W1-interp together for it. In its own process (the default):
// the plan cache must not hold W1's compiled plan already.
#include <cstdlib>
#include <string>

#include "cufuse/eval.hpp"
#include "harness.hpp"
#include "runtime/context.hpp"

namespace bench {

void add_tiered_workloads(Registry& r) {
  for (const char* id : {"W1", "W2", "W3", "W4"}) {
    const Workload* base = nullptr;
    for (const auto& w : r)
      if (w.id == id) base = &w;
    if (!base) continue;
    Workload w;
    w.id = std::string(id) + "-interp";
    w.description = base->description + ", on the bytecode interpreter (CUFUSE_TIERED=interpret)";
    w.floor = base->floor;
    w.run = [run = base->run](Ctx& ctx, Record& rec) {
      const char* before = std::getenv("CUFUSE_TIERED");
      const std::string saved = before ? before : "";
      ::setenv("CUFUSE_TIERED", "interpret", 1);
      cufuse::detail::runtime().reload_settings();
      cufuse::reset_stats();
      try {
        run(ctx, rec);
      } catch (...) {
        before ? (void)::setenv("CUFUSE_TIERED", saved.c_str(), 1) : (void)::unsetenv("CUFUSE_TIERED");
        cufuse::detail::runtime().reload_settings();
        throw;
      }
      const cufuse::Stats s = cufuse::stats();
      // (--no-isolate: the workloads after this one run as before)
      before ? (void)::setenv("CUFUSE_TIERED", saved.c_str(), 1) : (void)::unsetenv("CUFUSE_TIERED");
      cufuse::detail::runtime().reload_settings();
      rec.notes += std::string(rec.notes.empty() ? "" : "; ") + (s.interpreted_launches > 0
                       ? strf("%llu interpreted launches, %llu kernels compiled (groups the interpreter refuses)",
                              (unsigned long long)s.interpreted_launches, (unsigned long long)s.kernels_compiled)
                       : std::string("NOT INTERPRETED: the interpreter refuses this group (see CUFUSE_LOG=plan's "
                                     "tier line), so it ran the compiled kernel"));
    };
    r.push_back(std::move(w));
  }
}

void add_interp_ratios(std::vector<std::string>& records, std::vector<std::string>& rows) {
  auto id_of = [](const std::string& j) {
    const auto at = j.find("\"id\":\"");
    if (at == std::string::npos) return std::string();
    const auto b = at + 6, e = j.find('"', b);
    return j.substr(b, e - b);
  };
  for (size_t i = 0; i < records.size(); ++i) {
    const std::string id = id_of(records[i]);
    if (id.size() < 8 || id.compare(id.size() - 7, 7, "-interp") != 0) continue;
    const std::string base = id.substr(0, id.size() - 7);
    for (size_t k = 0; k < records.size(); ++k) {
      if (id_of(records[k]) != base) continue;
      const double ti = json_number(records[i], "time_ms"), tb = json_number(records[k], "time_ms");
      if (!(ti > 0) || !(tb > 0)) break;
      const std::string note = strf("%.2fx the specialized kernel's time (%s in this run)", ti / tb, base.c_str());
      const auto at = records[i].find("\"notes\":\"");
      if (at != std::string::npos) {
        const bool empty = records[i].compare(at + 9, 1, "\"") == 0;
        records[i].insert(at + 9, note + (empty ? "" : "; "));
      }
      rows[i] += "; " + note;
      break;
    }
  }
}

}  // namespace bench
