// Work spread over threads: the few shapes qcheck uses, each joining its threads before it
// returns. What a task throws, on any thread, reaches the caller once every thread has ended;
// a thread the system cannot start is not an error: the calling thread does its work.
#pragma once

#include <algorithm>
#include <atomic>
#include <chrono>
#include <condition_variable>
#include <cstddef>
#include <exception>
#include <memory>
#include <mutex>
#include <pthread.h>
#include <utility>
#include <vector>

namespace qcheck {

// `threads`, or one per core when it is 0: how many threads a `threads` option means.
unsigned thread_count(unsigned threads);

// Where a thread started from CPU `here` may begin: the CPUs of `allowed` but `here`. False when
// that excludes nothing or leaves nothing (`here` unknown, -1, or not in `allowed`; `allowed`
// holding `here` alone): the kernel then places the thread as it likes.
bool start_cpus(const cpu_set_t& allowed, int here, cpu_set_t& out);

// Whether threads started by Workers stay, once their work is done, for work given later
// (by any group) instead of ending. Off at start. A program that makes many short passes over
// its cores (the command line: about seven per lint of a large checkpoint) turns it on: on a
// virtual machine, starting and joining a thread took 50 us in a tight loop, more when it waits
// for an idle virtual CPU to wake; a kept one is woken instead.
// Threads kept are never ended; a child made by fork() starts with none.
void keep_threads(bool keep);

// How long a kept thread that has finished its work looks for more, awake (yielding its CPU to
// any other thread that has work there), before it sleeps. On the 2-core bench VM waking a
// sleeping thread took 1-4 us, but 1.3-3.8 ms about once in 40 wake-ups; a lint's passes follow
// one another well within this time, so its kept threads are not put to sleep between them.
// A pass costs at most this much more CPU time.
inline constexpr std::chrono::microseconds k_kept_thread_spin{1000};

// How many times kept threads went to sleep waiting for work since the process started (for
// tests and measurements).
size_t kept_thread_sleeps();

// Called first by every thread Workers starts, before its first work; null (the default): nothing.
// For the program to set up what each of its threads keeps, such as its allocator's arena.
// Set it before any thread starts.
void on_thread_start(void (*hook)());

// Threads working beside the calling one. The first exception thrown by work given to start()
// or run() is kept; join() waits until every piece of work has ended, then rethrows it. The
// destructor waits too (and drops what was kept), so no work outlives the group, even while an
// exception unwinds.
class Workers
{
public:
  Workers() = default;
  Workers(const Workers&) = delete;
  Workers& operator=(const Workers&) = delete;
  ~Workers() { wait(); }

  // Runs fn() on a kept thread waiting for work (keep_threads()), or else on a new thread.
  // False, with nothing started, when the system has no thread to give: the caller then does
  // that work itself. Throws only std::bad_alloc.
  // The thread starts on another CPU than the calling thread's (start_cpus()), then may run on
  // any CPU the caller may: left to itself, the kernel often queues a new thread behind its
  // busy parent for milliseconds while the other cores idle.
  template<typename Fn>
  bool start(Fn fn)
  {
    auto job = std::make_unique<Job<Fn>>(this, std::move(fn));
    if (!launch(job.get(), &Job<Fn>::run)) {
      return false;
    }
    job.release(); // the thread owns it now
    return true;
  }

  // Runs fn() on the calling thread, keeping what it throws as start() does.
  template<typename Fn>
  void run(Fn&& fn)
  {
    guarded(fn);
  }

  // Whether some work has thrown: loops over many items stop taking new ones.
  bool failed() const { return m_failed.load(std::memory_order_relaxed); }

  // Waits for every thread, then rethrows the first exception kept, if any.
  void join()
  {
    wait();
    if (m_error) {
      std::rethrow_exception(std::exchange(m_error, nullptr));
    }
  }

private:
  friend struct WorkEnded; // parallel.cpp: the threads that run work given by launch()

  template<typename Fn>
  struct Job
  {
    Job(Workers* w, Fn f) : workers(w), fn(std::move(f)) {}
    Workers* workers;
    Fn fn;
    static void run(void* job)
    {
      const std::unique_ptr<Job> owned(static_cast<Job*>(job));
      owned->workers->guarded(owned->fn);
    }
  };

  // Has a thread run body(job), then ended(); false when no thread could be had.
  bool launch(void* job, void (*body)(void*));
  // Takes back the count launch() added for work no thread took.
  void forget_one() noexcept;
  // Work given by launch() has ended, its job destroyed. The group may be gone once this returns.
  void ended() noexcept;

  template<typename Fn>
  void guarded(Fn& fn) noexcept
  {
    try {
      fn();
    } catch (...) {
      const std::lock_guard lock(m_mutex);
      if (!m_error) {
        m_error = std::current_exception();
      }
      m_failed.store(true, std::memory_order_relaxed);
    }
  }

  void wait() noexcept
  {
    std::unique_lock lock(m_mutex);
    m_all_ended.wait(lock, [&] { return m_running == 0; });
  }

  size_t m_running = 0; // work given to threads and not ended, under m_mutex
  std::condition_variable m_all_ended;
  std::mutex m_mutex;
  std::exception_ptr m_error;
  std::atomic<bool> m_failed{false};
};

// Runs task(0) .. task(count - 1) on up to `threads` threads, the calling one included; each
// thread takes the next index as it finishes one. After a task throws, no new index is taken.
template<typename Task>
void
run_tasks(size_t count, unsigned threads, const Task& task)
{
  std::atomic<size_t> next{0};
  Workers workers;
  const auto worker = [&] {
    for (size_t i = next++; i < count && !workers.failed(); i = next++) {
      task(i);
    }
  };
  for (size_t i = 1; i < std::min<size_t>(threads, count); ++i) {
    if (!workers.start(worker)) {
      break;
    }
  }
  workers.run(worker);
  workers.join();
}

// Fewer items than this are not worth a thread: one slice.
inline constexpr size_t k_parallel_items = 8192;

// How many slices to cut `count` items into: one per thread, or one when few. Asked once per
// cut: with `threads` 0 the answer follows the cores online, which may change.
inline size_t
slice_count(size_t count, unsigned threads)
{
  return count < k_parallel_items ? 1 : thread_count(threads);
}

// Runs fn(slice, begin, end) over [0, count) cut into `slices` (at least 1) contiguous slices
// of about equal size, one thread each, the calling thread taking the first and any slice no
// thread could be started for.
template<typename Fn>
void
in_slices(size_t count, size_t slices, const Fn& fn)
{
  const size_t n = std::max<size_t>(slices, 1);
  const auto bounds = [&](size_t i) { return std::pair{count * i / n, count * (i + 1) / n}; };
  Workers workers;
  size_t started = 1;
  while (started < n && workers.start([&fn, i = started, range = bounds(started)] {
    fn(i, range.first, range.second);
  })) {
    ++started;
  }
  workers.run([&] { fn(size_t{0}, size_t{0}, bounds(0).second); });
  for (size_t i = started; i < n && !workers.failed(); ++i) {
    workers.run([&] { fn(i, bounds(i).first, bounds(i).second); });
  }
  workers.join();
}

} // namespace qcheck
