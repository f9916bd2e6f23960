#include "qcheck/parallel.hpp"

#include <algorithm>
#include <cerrno>
#include <sched.h>

namespace qcheck {

namespace {

struct Start
{
  void* job;
  void (*run)(void*);
  bool widen;        // the thread starts on one CPU; it may then run on any of `allowed`
  cpu_set_t allowed; // the starting thread's CPUs
};

extern "C" void*
thread_main(void* arg)
{
  const std::unique_ptr<Start> start(static_cast<Start*>(arg));
  if (start->widen) {
    sched_setaffinity(0, sizeof start->allowed, &start->allowed); // best effort
  }
  start->run(start->job);
  return nullptr;
}

} // namespace

unsigned
thread_count(unsigned threads)
{
  return threads != 0 ? threads : std::max(1u, std::thread::hardware_concurrency());
}

int
start_cpu(const cpu_set_t& allowed, int here, size_t index)
{
  int others = 0;
  for (int cpu = 0; cpu < CPU_SETSIZE; ++cpu) {
    others += CPU_ISSET(cpu, &allowed) && cpu != here ? 1 : 0;
  }
  if (others == 0 || (here < 0 && others < 2)) {
    return -1;
  }
  size_t skip = index % static_cast<size_t>(others);
  for (int cpu = 0; cpu < CPU_SETSIZE; ++cpu) {
    if (CPU_ISSET(cpu, &allowed) && cpu != here && skip-- == 0) {
      return cpu;
    }
  }
  return -1;
}

bool
Workers::launch(void* job, void (*body)(void*))
{
  m_threads.reserve(m_threads.size() + 1); // no allocation once the thread runs
  auto start = std::make_unique<Start>(Start{job, body, false, {}});
  pthread_attr_t attr;
  if (pthread_attr_init(&attr) != 0) {
    return false;
  }
  if (sched_getaffinity(0, sizeof start->allowed, &start->allowed) == 0) {
    const int cpu = start_cpu(start->allowed, sched_getcpu(), m_threads.size());
    if (cpu >= 0) {
      cpu_set_t one;
      CPU_ZERO(&one);
      CPU_SET(cpu, &one);
      start->widen = pthread_attr_setaffinity_np(&attr, sizeof one, &one) == 0;
    }
  }
  pthread_t thread;
  int failed = pthread_create(&thread, &attr, thread_main, start.get());
  pthread_attr_destroy(&attr);
  if (failed == EINVAL && start->widen) { // the CPU went away meanwhile: anywhere, then
    start->widen = false;
    failed = pthread_create(&thread, nullptr, thread_main, start.get());
  }
  if (failed != 0) {
    return false;
  }
  start.release(); // thread_main owns it
  m_threads.push_back(thread);
  return true;
}

} // namespace qcheck
