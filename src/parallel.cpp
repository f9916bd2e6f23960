#include "qcheck/parallel.hpp"

#include <algorithm>
#include <chrono>
#include <cerrno>
#include <new>
#include <sched.h>
#include <thread>

namespace qcheck {

// What a thread running work given by Workers::launch() tells the work's group.
struct WorkEnded
{
  static void tell(Workers& group) noexcept { group.ended(); }
};

namespace {

struct Work
{
  void* job;
  void (*body)(void*); // runs and destroys job
  Workers* group;      // told when it has
};

struct Start
{
  Work work;
  bool widen;        // the thread starts away from the caller's CPU, then may use all `allowed`
  cpu_set_t allowed; // the starting thread's CPUs
};

// Threads kept for later work (keep_threads()), each parked until work is handed to it.
class Pool
{
public:
  static Pool& get()
  {
    // Never destroyed: kept threads may still be parked on it while the process exits.
    static Pool* const pool = [] {
      auto* p = new Pool;
      pthread_atfork(&Pool::before_fork, &Pool::after_fork_parent, &Pool::after_fork_child);
      return p;
    }();
    return *pool;
  }

  void set_keep(bool keep) { m_keep.store(keep, std::memory_order_relaxed); }
  bool keep() const { return m_keep.load(std::memory_order_relaxed); }

  // Hands the work to a parked thread; false when none is parked.
  bool hand(const Work& work)
  {
    const std::lock_guard lock(m_mutex);
    if (m_parked == 0) {
      return false;
    }
    m_handed.push_back(work);
    m_waiting.fetch_add(1, std::memory_order_release);
    --m_parked;
    m_wake.notify_one();
    return true;
  }

  // A kept thread: its first work, then whatever is handed to it, for as long as the process
  // lives. It is ready for more before its group learns the work has ended, so a pass that
  // follows at once finds it; it looks for more, awake, for k_kept_thread_spin before it sleeps.
  [[noreturn]] void serve(Work work)
  {
    for (;;) {
      work.body(work.job);
      {
        const std::lock_guard lock(m_mutex);
        ++m_parked;
      }
      WorkEnded::tell(*work.group);
      const auto until = std::chrono::steady_clock::now() + k_kept_thread_spin;
      while (m_waiting.load(std::memory_order_acquire) == 0 &&
             std::chrono::steady_clock::now() < until) {
        sched_yield(); // a thread with work on this CPU runs first
      }
      std::unique_lock lock(m_mutex);
      if (m_handed.empty()) {
        m_sleeps.fetch_add(1, std::memory_order_relaxed);
        m_wake.wait(lock, [&] { return !m_handed.empty(); });
      }
      work = m_handed.back();
      m_handed.pop_back();
      m_waiting.fetch_sub(1, std::memory_order_relaxed);
    }
  }

  size_t sleeps() const { return m_sleeps.load(std::memory_order_relaxed); }

private:
  static void before_fork() { get().m_mutex.lock(); }
  static void after_fork_parent() { get().m_mutex.unlock(); }
  // The child has none of the parent's other threads: none is parked.
  static void after_fork_child()
  {
    Pool& pool = get();
    pool.m_parked = 0;
    pool.m_handed.clear();
    pool.m_waiting.store(0, std::memory_order_relaxed);
    new (&pool.m_wake) std::condition_variable; // the parent's waiters are not the child's
    pool.m_mutex.unlock();
  }

  std::atomic<bool> m_keep{false};
  std::mutex m_mutex;
  std::condition_variable m_wake;
  std::vector<Work> m_handed; // handed, not yet taken
  size_t m_parked = 0;        // threads waiting for work, less the work handed to them
  // m_handed's size, read without the lock by threads looking for work awake.
  std::atomic<size_t> m_waiting{0};
  std::atomic<size_t> m_sleeps{0};
};

std::atomic<void (*)()> g_thread_start{nullptr};

extern "C" void*
thread_main(void* arg)
{
  if (void (*const hook)() = g_thread_start.load(std::memory_order_relaxed)) {
    hook();
  }
  Work work{};
  {
    const std::unique_ptr<Start> start(static_cast<Start*>(arg));
    if (start->widen) {
      sched_setaffinity(0, sizeof start->allowed, &start->allowed); // best effort
    }
    work = start->work;
  }
  if (Pool& pool = Pool::get(); pool.keep()) {
    pool.serve(work);
  }
  work.body(work.job);
  WorkEnded::tell(*work.group);
  return nullptr;
}

// Gives the work to a kept thread, or else to a new one; false when no thread could be had.
bool
hand_or_start(const Work& work)
{
  if (Pool& pool = Pool::get(); pool.keep() && pool.hand(work)) {
    return true;
  }
  auto start = std::make_unique<Start>(Start{work, false, {}});
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
  start.release();        // thread_main owns it
  pthread_detach(thread); // the group waits for the work's end, not the thread's
  return true;
}

} // namespace

void
on_thread_start(void (*hook)())
{
  g_thread_start.store(hook, std::memory_order_relaxed);
}

void
keep_threads(bool keep)
{
  Pool::get().set_keep(keep);
}

size_t
kept_thread_sleeps()
{
  return Pool::get().sleeps();
}

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
  {
    const std::lock_guard lock(m_mutex);
    ++m_running;
  }
  bool started = false;
  try {
    started = hand_or_start(Work{job, body, this});
  } catch (...) {
    forget_one();
    throw;
  }
  if (!started) {
    forget_one();
  }
  return started;
}

void
Workers::forget_one() noexcept
{
  const std::lock_guard lock(m_mutex);
  --m_running;
}

void
Workers::ended() noexcept
{
  // Notified under the lock: the waiter cannot see the count reach 0, return and destroy the
  // group before this call is done with it.
  const std::lock_guard lock(m_mutex);
  if (--m_running == 0) {
    m_all_ended.notify_all();
  }
}

} // namespace qcheck
