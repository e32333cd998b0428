// src/runtime/context.cpp: RuntimeContext's construction, the settings snapshots and the
// slow path of its state slots.
#include "runtime/context.hpp"

#include <cstdio>

namespace cufuse::detail {

RuntimeContext::RuntimeContext() = default;

const Settings& RuntimeContext::first_settings() {
  std::lock_guard<std::mutex> lk(mu_);
  if (settings_.load(std::memory_order_acquire) == nullptr) publish(parse_process_env());
  return *settings_.load(std::memory_order_acquire);
}

void RuntimeContext::reload_settings() {
  ParsedEnv parsed = parse_process_env();
  std::lock_guard<std::mutex> lk(mu_);
  publish(std::move(parsed));
}

void RuntimeContext::publish(ParsedEnv parsed) {
  for (const std::string& w : parsed.warnings)
    if (warned_.insert(w).second) std::fprintf(stderr, "%s\n", w.c_str());
  parsed.settings.generation = ++generation_;
  snapshots_.push_back(std::make_unique<const Settings>(std::move(parsed.settings)));
  settings_.store(snapshots_.back().get(), std::memory_order_release);
}

void* RuntimeContext::make_state(size_t slot, void* (*make)()) {
  std::lock_guard<std::recursive_mutex> lk(slots_mu_);
  void* p = slots_[slot].load(std::memory_order_acquire);
  if (p == nullptr) {
    p = make();
    slots_[slot].store(p, std::memory_order_release);
  }
  return p;
}

}  // namespace cufuse::detail
