// Unit tests for parallel.hpp: every index runs once, slices cover the range in order, and what
// a task throws on any thread reaches the caller after every thread has ended.
#include <gtest/gtest.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <mutex>
#include <new>
#include <optional>
#include <sched.h>
#include <set>
#include <stdexcept>
#include <sys/wait.h>
#include <thread>
#include <unistd.h>
#include <vector>

#include "qcheck/parallel.hpp"
#include "sanitizers.hpp"

using namespace qcheck;

TEST(Parallel, ThreadCountIsTheOptionOrOnePerCore)
{
  EXPECT_EQ(thread_count(3), 3u);
  EXPECT_EQ(thread_count(1), 1u);
  EXPECT_GE(thread_count(0), 1u);
}

namespace {

cpu_set_t
cpus(std::initializer_list<int> list)
{
  cpu_set_t set;
  CPU_ZERO(&set);
  for (const int cpu : list) {
    CPU_SET(cpu, &set);
  }
  return set;
}

// The CPUs a started thread may begin on, or none when excluding the caller's CPU excludes
// nothing or leaves nothing.
std::optional<cpu_set_t>
start_on(const cpu_set_t& allowed, int here)
{
  cpu_set_t out;
  CPU_ZERO(&out);
  return start_cpus(allowed, here, out) ? std::optional(out) : std::nullopt;
}

bool
same(const std::optional<cpu_set_t>& a, const cpu_set_t& b)
{
  return a.has_value() && CPU_EQUAL(&*a, &b);
}

} // namespace

TEST(Parallel, ThreadsStartOnTheCpusTheCallerIsNotOn)
{
  EXPECT_TRUE(same(start_on(cpus({0, 1}), 0), cpus({1})));
  EXPECT_TRUE(same(start_on(cpus({0, 1}), 1), cpus({0})));
  EXPECT_TRUE(same(start_on(cpus({0, 1, 2, 3}), 1), cpus({0, 2, 3})));
  EXPECT_TRUE(same(start_on(cpus({4, 9}), 9), cpus({4})));
}

TEST(Parallel, NoOtherCpuLeavesThePlacementToTheKernel)
{
  EXPECT_FALSE(start_on(cpus({3}), 3));        // nothing left
  EXPECT_FALSE(start_on(cpus({2, 7}), 5));     // nothing excluded: not on an allowed CPU
  EXPECT_FALSE(start_on(cpus({0, 1}), -1));    // where the caller runs is not known
  EXPECT_FALSE(start_on(cpus({0, 1}), 70000)); // out of the set's range
}

// A started thread may run wherever the thread that started it may: it begins away from the
// caller's CPU, then its mask is widened back (else it would stay off that CPU). With a single CPU
// allowed the thread starts unpinned and still runs.
TEST(Parallel, StartedThreadsMayRunWhereTheCallerMay)
{
  cpu_set_t mine;
  ASSERT_EQ(sched_getaffinity(0, sizeof mine, &mine), 0);
  const auto affinity_of_a_started_thread = [] {
    cpu_set_t seen;
    CPU_ZERO(&seen);
    Workers workers;
    EXPECT_TRUE(workers.start([&] { sched_getaffinity(0, sizeof seen, &seen); }));
    workers.join();
    return seen;
  };
  cpu_set_t seen = affinity_of_a_started_thread();
  EXPECT_TRUE(CPU_EQUAL(&seen, &mine)) << CPU_COUNT(&seen) << " CPUs of " << CPU_COUNT(&mine);

  const int here = sched_getcpu();
  ASSERT_GE(here, 0);
  const cpu_set_t one = cpus({here});
  ASSERT_EQ(sched_setaffinity(0, sizeof one, &one), 0);
  seen = affinity_of_a_started_thread();
  sched_setaffinity(0, sizeof mine, &mine);
  EXPECT_TRUE(CPU_EQUAL(&seen, &one)) << CPU_COUNT(&seen) << " CPUs";
}

TEST(Parallel, RunTasksRunsEachIndexOnce)
{
  for (const size_t count : {size_t{0}, size_t{1}, size_t{7}, size_t{1000}}) {
    for (const unsigned threads : {1u, 2u, 5u}) {
      std::vector<std::atomic<int>> runs(count);
      run_tasks(count, threads, [&](size_t i) { ++runs[i]; });
      for (size_t i = 0; i < count; ++i) {
        EXPECT_EQ(runs[i].load(), 1) << count << " tasks, " << threads << " threads, task " << i;
      }
    }
  }
}

TEST(Parallel, SlicesCoverTheRangeInOrder)
{
  EXPECT_EQ(slice_count(k_parallel_items - 1, 4), 1u);
  EXPECT_EQ(slice_count(k_parallel_items, 4), 4u);
  EXPECT_EQ(slice_count(k_parallel_items, 1), 1u);
  EXPECT_EQ(slice_count(k_parallel_items, 0), thread_count(0));
  for (const size_t count : {size_t{0}, size_t{5}, k_parallel_items, k_parallel_items * 3 + 1}) {
    for (const unsigned threads : {1u, 2u, 3u}) {
      std::mutex mutex;
      std::vector<std::pair<size_t, size_t>> bounds(slice_count(count, threads), {1, 0});
      in_slices(count, bounds.size(), [&](size_t slice, size_t begin, size_t end) {
        const std::lock_guard lock(mutex);
        bounds.at(slice) = {begin, end};
      });
      size_t next = 0;
      for (const auto& [begin, end] : bounds) {
        EXPECT_EQ(begin, next) << count << " items, " << threads << " threads";
        EXPECT_LE(begin, end);
        next = end;
      }
      EXPECT_EQ(next, count) << count << " items, " << threads << " threads";
    }
  }
}

namespace {

// Waits, up to 10 seconds, until `flag` is set.
void
wait_for(const std::atomic<bool>& flag)
{
  const auto give_up = std::chrono::steady_clock::now() + std::chrono::seconds(10);
  while (!flag && std::chrono::steady_clock::now() < give_up) {
    std::this_thread::sleep_for(std::chrono::milliseconds(1));
  }
}

} // namespace

TEST(Parallel, RunTasksRethrowsWhatAnotherThreadThrew)
{
  const auto caller = std::this_thread::get_id();
  std::atomic<bool> thrown{false};
  std::atomic<size_t> ran{0};
  EXPECT_THROW(run_tasks(1000, 3,
                         [&](size_t) {
                           ++ran;
                           if (std::this_thread::get_id() != caller) {
                             thrown = true;
                             throw std::bad_alloc();
                           }
                           // The calling thread's tasks outlast the throw, and each takes
                           // a millisecond: the thread that threw records the exception
                           // while it unwinds, which can take milliseconds (ASan), and the
                           // calling thread must not run all 1,000 tasks meanwhile.
                           wait_for(thrown);
                           std::this_thread::sleep_for(std::chrono::milliseconds(1));
                         }),
               std::bad_alloc);
  EXPECT_TRUE(thrown);
  EXPECT_LT(ran.load(), 1000u); // no index is taken after the throw
}

TEST(Parallel, RunTasksJoinsItsThreadsWhenTheCallingThreadThrows)
{
  const auto caller = std::this_thread::get_id();
  std::atomic<bool> started{false};
  std::atomic<int> running{0};
  try {
    run_tasks(4, 2, [&](size_t) {
      if (std::this_thread::get_id() == caller) {
        wait_for(started);
        throw std::runtime_error("calling thread");
      }
      ++running;
      started = true;
      std::this_thread::sleep_for(std::chrono::milliseconds(50));
      --running;
    });
    ADD_FAILURE() << "nothing thrown";
  } catch (const std::runtime_error& e) {
    EXPECT_STREQ(e.what(), "calling thread");
  }
  EXPECT_TRUE(started);
  EXPECT_EQ(running.load(), 0); // the helper's task ended before run_tasks returned
}

TEST(Parallel, InSlicesRethrowsWhatASliceThrew)
{
  for (const size_t thrower : {size_t{0}, size_t{2}}) {
    std::vector<std::atomic<int>> runs(4);
    try {
      in_slices(400, runs.size(), [&](size_t slice, size_t, size_t) {
        ++runs[slice];
        if (slice == thrower) {
          throw std::runtime_error("slice " + std::to_string(slice));
        }
      });
      ADD_FAILURE() << "nothing thrown";
    } catch (const std::runtime_error& e) {
      EXPECT_EQ(e.what(), "slice " + std::to_string(thrower));
    }
    for (size_t s = 0; s < runs.size(); ++s) {
      EXPECT_LE(runs[s].load(), 1) << "slice " << s;
    }
    EXPECT_EQ(runs[thrower].load(), 1);
  }
}

TEST(Parallel, WorkersKeepTheFirstExceptionAndJoinOnDestruction)
{
  std::atomic<bool> finished{false};
  {
    Workers workers;
    ASSERT_TRUE(workers.start([&] {
      std::this_thread::sleep_for(std::chrono::milliseconds(50));
      finished = true;
    }));
    workers.run([] { throw std::runtime_error("first"); });
    EXPECT_TRUE(workers.failed());
    workers.run([] { throw std::runtime_error("second"); });
    try {
      workers.join();
      ADD_FAILURE() << "nothing thrown";
    } catch (const std::runtime_error& e) {
      EXPECT_STREQ(e.what(), "first");
    }
    EXPECT_TRUE(finished);
    workers.join(); // what was kept is rethrown once
  }
  std::atomic<bool> outlived{false};
  try {
    Workers workers;
    ASSERT_TRUE(workers.start([&] {
      std::this_thread::sleep_for(std::chrono::milliseconds(50));
      outlived = true;
    }));
    throw std::runtime_error("unwinding");
  } catch (const std::runtime_error&) {
    EXPECT_TRUE(outlived); // the destructor joined the thread
  }
}

namespace {

// Called by each task of a pass on two threads: the first two wait (5 s at most) until both have
// begun, so that both threads take part.
void
wait_for_both_threads(std::atomic<int>& begun)
{
  if (begun.fetch_add(1) < 2) {
    const auto until = std::chrono::steady_clock::now() + std::chrono::seconds(5);
    while (begun.load() < 2 && std::chrono::steady_clock::now() < until) {
      std::this_thread::yield();
    }
  }
}

// The kernel's ids of the threads other than this one that ran a pass of `tasks` tasks on two
// threads. Each task waits until both threads have begun one, so both take part.
std::set<pid_t>
helpers_of_a_pass(size_t tasks)
{
  std::mutex mutex;
  std::set<pid_t> seen;
  std::atomic<int> begun{0};
  const pid_t caller = ::gettid();
  run_tasks(tasks, 2, [&](size_t) {
    wait_for_both_threads(begun);
    if (::gettid() != caller) {
      const std::lock_guard lock(mutex);
      seen.insert(::gettid());
    }
  });
  return seen;
}

// Ends kept threads' use when a test ends, however it ends.
struct KeepThreads
{
  KeepThreads() { keep_threads(true); }
  ~KeepThreads() { keep_threads(false); }
};

} // namespace

// With threads kept, a later pass runs on the thread an earlier one started, not on a new one;
// what a task throws there still reaches the caller, and the thread serves the pass after.
TEST(Parallel, KeptThreadsTakeLaterPasses)
{
  const KeepThreads keep;
  const std::set<pid_t> first = helpers_of_a_pass(4);
  ASSERT_EQ(first.size(), 1u);
  EXPECT_EQ(helpers_of_a_pass(4), first);

  Workers workers;
  pid_t thrower = 0;
  ASSERT_TRUE(workers.start([&] {
    thrower = ::gettid();
    throw std::runtime_error("kept");
  }));
  EXPECT_THROW(workers.join(), std::runtime_error);
  EXPECT_EQ(std::set<pid_t>{thrower}, first);
  EXPECT_EQ(helpers_of_a_pass(4), first);
}

// A kept thread looks for more work awake for a while before it sleeps: passes that follow one
// another at once find it awake, not asleep (a wake-up can take milliseconds on a virtual
// machine). Without that, it sleeps after every pass.
TEST(Parallel, KeptThreadsTakePassesThatFollowAtOnceWithoutSleeping)
{
  const KeepThreads keep;
  ASSERT_EQ(helpers_of_a_pass(4).size(), 1u); // one thread kept
  const size_t before = kept_thread_sleeps();
  for (int pass = 0; pass < 50; ++pass) {
    std::atomic<int> runs{0};
    run_tasks(2, 2, [&](size_t) { ++runs; });
    ASSERT_EQ(runs.load(), 2);
  }
  EXPECT_LT(kept_thread_sleeps() - before, 25u);
}

// Without keeping, each pass has threads of its own.
TEST(Parallel, ThreadsNotKeptEndWithTheirPass)
{
  const std::set<pid_t> first = helpers_of_a_pass(4);
  ASSERT_EQ(first.size(), 1u);
  const std::set<pid_t> second = helpers_of_a_pass(4);
  ASSERT_EQ(second.size(), 1u);
  EXPECT_NE(second, first);
}

// A child made by fork() has none of the parent's kept threads: its passes start threads of their
// own instead of handing work to a thread that is not there (which would never end).
TEST(Parallel, AForkedChildStartsItsOwnThreads)
{
#ifdef QCHECK_TEST_TSAN
  GTEST_SKIP() << "ThreadSanitizer refuses threads in a child forked with threads running";
#endif
  const KeepThreads keep;
  ASSERT_EQ(helpers_of_a_pass(4).size(), 1u); // one thread kept, waiting
  const pid_t pid = ::fork();
  if (pid == 0) {
    ::alarm(20); // a pass that never ends fails the test instead of hanging it
    std::atomic<int> runs{0};
    run_tasks(100, 2, [&](size_t) { ++runs; });
    ::_exit(runs.load() == 100 && helpers_of_a_pass(4).size() == 1 ? 0 : 1);
  }
  int status = 0;
  ASSERT_EQ(::waitpid(pid, &status, 0), pid);
  EXPECT_TRUE(WIFEXITED(status) && WEXITSTATUS(status) == 0)
    << (WIFSIGNALED(status) ? "killed by signal " + std::to_string(WTERMSIG(status)) : "");
}

namespace {

std::mutex g_hooked_mutex;
std::vector<pid_t> g_hooked; // the threads that ran the start hook, in order

void
note_hooked_thread()
{
  const std::lock_guard lock(g_hooked_mutex);
  g_hooked.push_back(::gettid());
}

// Clears the hook when a test ends, however it ends.
struct ThreadStartHook
{
  ThreadStartHook()
  {
    const std::lock_guard lock(g_hooked_mutex);
    g_hooked.clear();
    on_thread_start(&note_hooked_thread);
  }
  ~ThreadStartHook() { on_thread_start(nullptr); }
};

} // namespace

// Each thread Workers starts runs the hook once, before its work; a kept thread that takes later
// passes does not run it again; the calling thread never does.
TEST(Parallel, EachStartedThreadRunsTheStartHookOnceBeforeItsWork)
{
  const ThreadStartHook hook;
  {
    std::mutex mutex;
    std::vector<std::pair<pid_t, size_t>> hooked_before; // a task's thread, its hooks by then
    std::atomic<int> begun{0};
    run_tasks(4, 2, [&](size_t) {
      size_t seen = 0;
      {
        const std::lock_guard lock(g_hooked_mutex);
        seen = static_cast<size_t>(std::count(g_hooked.begin(), g_hooked.end(), ::gettid()));
      }
      wait_for_both_threads(begun);
      const std::lock_guard lock(mutex);
      hooked_before.emplace_back(::gettid(), seen);
    });
    std::set<pid_t> threads;
    for (const auto& [thread, seen] : hooked_before) {
      threads.insert(thread);
      EXPECT_EQ(seen, thread == ::gettid() ? 0u : 1u) << "thread " << thread;
    }
    EXPECT_EQ(threads.size(), 2u);
  }
  {
    // The kept thread may be one an earlier test left, started before the hook was set.
    const auto hooks_of = [](pid_t thread) {
      const std::lock_guard lock(g_hooked_mutex);
      return std::count(g_hooked.begin(), g_hooked.end(), thread);
    };
    const KeepThreads keep;
    const std::set<pid_t> first = helpers_of_a_pass(4);
    ASSERT_EQ(first.size(), 1u);
    const auto after_first = hooks_of(*first.begin());
    EXPECT_LE(after_first, 1);
    EXPECT_EQ(helpers_of_a_pass(4), first); // the kept thread again
    EXPECT_EQ(hooks_of(*first.begin()), after_first);
    EXPECT_EQ(hooks_of(::gettid()), 0);
  }
}
