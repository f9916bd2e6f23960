// Test helper: runs the qcheck binary and captures its output and exit code.
#pragma once

#include <array>
#include <cstdio>
#include <string>
#include <sys/wait.h>

namespace qcheck::test {

struct CliRun
{
  int exit_code = -1;
  std::string out;
};

// Runs a shell command; `out` is what it writes to stdout, exit_code -1 when it did not exit.
inline CliRun
run_command(const std::string& command)
{
  CliRun r;
  FILE* pipe = ::popen(command.c_str(), "r");
  if (pipe == nullptr) {
    return r;
  }
  std::array<char, 4096> buffer{};
  size_t n = 0;
  while ((n = std::fread(buffer.data(), 1, buffer.size(), pipe)) > 0) {
    r.out.append(buffer.data(), n);
  }
  const int status = ::pclose(pipe);
  r.exit_code = WIFEXITED(status) ? WEXITSTATUS(status) : -1;
  return r;
}

// Runs `qcheck ARGS` (in `cwd` when given). stderr is merged into `out` or discarded.
inline CliRun
run_qcheck(const std::string& args, bool merge_stderr = false, const std::string& cwd = "")
{
  return run_command((cwd.empty() ? "" : "cd '" + cwd + "' && ") + std::string(QCHECK_BINARY) +
                     " " + args + (merge_stderr ? " 2>&1" : " 2>/dev/null"));
}

} // namespace qcheck::test
