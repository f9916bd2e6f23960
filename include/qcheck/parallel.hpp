// Work spread over threads: the few shapes qcheck uses, each joining its threads before it
// returns. Tasks must not throw.
#pragma once

#include <algorithm>
#include <atomic>
#include <cstddef>
#include <thread>
#include <vector>

namespace qcheck {

// `threads`, or one per core when it is 0: how many threads a `threads` option means.
unsigned thread_count(unsigned threads);

// Runs task(0) .. task(count - 1) on up to `threads` threads, the calling one included; each
// thread takes the next index as it finishes one.
template<typename Task>
void
run_tasks(size_t count, unsigned threads, const Task& task)
{
  std::atomic<size_t> next{0};
  const auto worker = [&] {
    for (size_t i = next++; i < count; i = next++) {
      task(i);
    }
  };
  std::vector<std::thread> pool;
  for (size_t i = 1; i < std::min<size_t>(threads, count); ++i) {
    pool.emplace_back(worker);
  }
  worker();
  for (auto& t : pool) {
    t.join();
  }
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
// of about equal size, one thread each, the calling thread taking the first.
template<typename Fn>
void
in_slices(size_t count, size_t slices, const Fn& fn)
{
  const size_t n = std::max<size_t>(slices, 1);
  std::vector<std::thread> pool;
  for (size_t i = 1; i < n; ++i) {
    pool.emplace_back(fn, i, count * i / n, count * (i + 1) / n);
  }
  fn(size_t{0}, size_t{0}, count / n);
  for (auto& t : pool) {
    t.join();
  }
}

} // namespace qcheck
