#include "qcheck/parallel.hpp"

#include <algorithm>
#include <cerrno>
#include <sched.h>
#include <thread>

namespace qcheck {

namespace {

struct Start
{
  void* job;
  void (*run)(void*);
  bool widen;        // the thread starts away from the caller's CPU, then may use all `allowed`
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

bool
start_cpus(const cpu_set_t& allowed, int here, cpu_set_t& out)
{
  if (here < 0 || here >= CPU_SETSIZE || !CPU_ISSET(here, &allowed) || CPU_COUNT(&allowed) < 2) {
    return false;
  }
  out = allowed;
  CPU_CLR(here, &out);
  return true;
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
  cpu_set_t others;
  if (sched_getaffinity(0, sizeof start->allowed, &start->allowed) == 0 &&
      start_cpus(start->allowed, sched_getcpu(), others)) {
    start->widen = pthread_attr_setaffinity_np(&attr, sizeof others, &others) == 0;
  }
  pthread_t thread;
  int failed = pthread_create(&thread, start->widen ? &attr : nullptr, thread_main, start.get());
  pthread_attr_destroy(&attr);
  // Placement refused (a CPU went offline meanwhile; a sandbox that forbids setting affinity):
  // the thread starts anywhere instead. EAGAIN means no thread can be had at all.
  if (failed != 0 && failed != EAGAIN && start->widen) {
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
