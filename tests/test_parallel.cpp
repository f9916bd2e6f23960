// Unit tests for parallel.hpp: every index runs once, slices cover the range in order.
#include <gtest/gtest.h>

#include <atomic>
#include <mutex>
#include <vector>

#include "qcheck/parallel.hpp"

using namespace qcheck;

TEST(Parallel, ThreadCountIsTheOptionOrOnePerCore)
{
  EXPECT_EQ(thread_count(3), 3u);
  EXPECT_EQ(thread_count(1), 1u);
  EXPECT_GE(thread_count(0), 1u);
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
