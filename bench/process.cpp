// bench/process.cpp: re-running this program as a child (an isolated workload, W12's fresh
// process) with extra environment, a time limit, and its standard output captured.
#include <spawn.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <sstream>
#include <thread>

#include "harness.hpp"

extern char** environ;

namespace bench {

ChildResult run_self(const Options& opt, const std::vector<std::string>& args, const std::vector<std::string>& env,
                     double timeout_s) {
  ChildResult res;
  char out_path[] = "/tmp/cufuse-bench-child-XXXXXX";
  int fd = mkstemp(out_path);
  if (fd < 0) {
    res.error = std::string("mkstemp: ") + std::strerror(errno);
    return res;
  }

  std::vector<std::string> argv_s{opt.self_exe};
  argv_s.insert(argv_s.end(), args.begin(), args.end());
  std::vector<char*> argv;
  for (auto& s : argv_s) argv.push_back(s.data());
  argv.push_back(nullptr);

  // The environment: ours, with each K=V of env replacing K.
  std::vector<std::string> env_s;
  for (char** e = environ; *e; ++e) {
    std::string kv = *e;
    std::string key = kv.substr(0, kv.find('='));
    bool replaced = false;
    for (auto& o : env)
      if (o.substr(0, o.find('=')) == key) replaced = true;
    if (!replaced) env_s.push_back(kv);
  }
  env_s.insert(env_s.end(), env.begin(), env.end());
  std::vector<char*> envp;
  for (auto& s : env_s) envp.push_back(s.data());
  envp.push_back(nullptr);

  posix_spawn_file_actions_t fa;
  posix_spawn_file_actions_init(&fa);
  posix_spawn_file_actions_adddup2(&fa, fd, STDOUT_FILENO);
  posix_spawn_file_actions_addclose(&fa, fd);
  std::fflush(stdout);
  std::fflush(stderr);
  pid_t pid = 0;
  int rc = posix_spawn(&pid, opt.self_exe.c_str(), &fa, nullptr, argv.data(), envp.data());
  posix_spawn_file_actions_destroy(&fa);
  close(fd);
  if (rc != 0) {
    res.error = std::string("posix_spawn ") + opt.self_exe + ": " + std::strerror(rc);
    unlink(out_path);
    return res;
  }

  int status = 0;
  double t0 = now_ms();
  for (;;) {
    pid_t w = waitpid(pid, &status, WNOHANG);
    if (w == pid) break;
    if (w < 0 && errno != EINTR) {
      res.error = std::string("waitpid: ") + std::strerror(errno);
      break;
    }
    if (now_ms() - t0 > timeout_s * 1e3) {
      kill(pid, SIGKILL);
      waitpid(pid, &status, 0);
      res.timed_out = true;
      break;
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(5));
  }
  if (!res.timed_out && res.error.empty()) {
    if (WIFEXITED(status)) res.exit_code = WEXITSTATUS(status);
    if (WIFSIGNALED(status)) res.signal = WTERMSIG(status);
  }
  std::ifstream in(out_path, std::ios::binary);
  std::stringstream ss;
  ss << in.rdbuf();
  res.out = ss.str();
  unlink(out_path);
  return res;
}

std::string child_figure(const ChildResult& c, const std::string& tag, std::string* json) {
  auto lines = lines_with_prefix(c.out, "@@" + tag);
  auto errors = lines_with_prefix(c.out, "@@" + tag + "-error");
  if (!c.error.empty()) return c.error;
  if (c.timed_out) return "child timed out";
  if (c.signal) return "child killed by signal " + std::to_string(c.signal);
  if (!errors.empty()) return errors.front();
  if (lines.empty()) return "child printed no figure (exit " + std::to_string(c.exit_code) + ")";
  *json = lines.front();
  return {};
}

std::vector<std::string> lines_with_prefix(const std::string& out, const std::string& prefix) {
  std::vector<std::string> r;
  std::istringstream in(out);
  std::string line;
  const std::string p = prefix + " ";
  while (std::getline(in, line))
    if (line.rfind(p, 0) == 0) r.push_back(line.substr(p.size()));
  return r;
}

double json_number(const std::string& obj, const std::string& key) {
  std::string k = "\"" + key + "\":";
  size_t at = obj.find(k);
  if (at == std::string::npos) return kNaN;
  const char* s = obj.c_str() + at + k.size();
  while (*s == ' ') ++s;
  if (std::strncmp(s, "null", 4) == 0) return kNaN;
  char* end = nullptr;
  double v = std::strtod(s, &end);
  return end == s ? kNaN : v;
}

}  // namespace bench
