#include "cli_signals.hpp"

#include <csignal>
#include <cstring>
#include <unistd.h>

#include "qcheck/input.hpp"

namespace qcheck::cli {

namespace {

volatile sig_atomic_t g_exit_code = 2;

void
write_all(const char* text)
{
  size_t left = std::strlen(text);
  while (left > 0) {
    const ssize_t n = ::write(STDERR_FILENO, text, left);
    if (n <= 0) {
      return;
    }
    text += n;
    left -= static_cast<size_t>(n);
  }
}

void
on_sigbus(int signal, siginfo_t* info, void*)
{
  // Only a fault the kernel raised (si_code > 0) has an address; kill() and raise() do not.
  const char* path = info != nullptr && info->si_code > 0 ? mapped_file_at(info->si_addr) : nullptr;
  if (path == nullptr) {
    ::signal(signal, SIG_DFL); // not a mapped file of ours: crash as usual
    ::raise(signal);
    return;
  }
  write_all("qcheck: error: ");
  write_all(path);
  write_all(": the file shrank while qcheck read it (another process is writing it?); run "
            "again once it is complete\n");
  ::_exit(g_exit_code);
}

} // namespace

void
report_shrunk_files(int exit_code)
{
  g_exit_code = exit_code;
  struct sigaction action
  {};
  action.sa_sigaction = on_sigbus;
  action.sa_flags = SA_SIGINFO;
  sigemptyset(&action.sa_mask);
  ::sigaction(SIGBUS, &action, nullptr);
}

} // namespace qcheck::cli
