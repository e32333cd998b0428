// tests/consumer/main.cpp: uses the installed public API only; runs with or without a GPU.
#include <cstdio>

#include <cufuse/cufuse.hpp>

int main() {
  namespace cf = cufuse;
  auto x = cf::placeholder(cf::f32, {1024});
  auto y = cf::sqrt(x * x + 1);
  const std::string plan = cf::plan_dump({y}, false);
  std::printf("%s", plan.c_str());
  return plan.find("1 kernel") != std::string::npos ? 0 : 1;
}
