#include "cli_memory.hpp"

#include <chrono>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <ctime>
#include <limits>
#include <optional>
#include <string_view>
#include <malloc.h>
#include <sys/mman.h>
#include <sys/resource.h>

namespace qcheck::cli {

namespace {

constexpr uintptr_t k_huge_page = uintptr_t{2} << 20;
constexpr int k_glibc_threshold = 128 * 1024; // M_MMAP_THRESHOLD's and M_TRIM_THRESHOLD's default
// Below this, the bytes before the first 2 MiB page are left to the next blocks (a page at most).
constexpr uintptr_t k_min_filler = 4096;

#ifndef MADV_POPULATE_WRITE
#define MADV_POPULATE_WRITE 23 // Linux 5.14; glibc's headers name it from 2.35 on
#endif

bool
sanitized()
{
#if defined(__SANITIZE_ADDRESS__)
  return true;
#elif defined(__has_feature)
#if __has_feature(address_sanitizer)
  return true;
#else
  return false;
#endif
#else
  return false;
#endif
}

// Whether an address-space or data limit is set that a heap never trimmed could run into: a
// block freed in the heap keeps its address space, where a mapped one would give it back.
bool
memory_is_limited()
{
  for (const int resource : {RLIMIT_AS, RLIMIT_DATA}) {
    rlimit limit{};
    if (::getrlimit(resource, &limit) == 0 && limit.rlim_cur != RLIM_INFINITY) {
      return true;
    }
  }
  return false;
}

struct AdvisedRange
{
  uintptr_t begin = 0;
  uintptr_t end = 0; // begin == end: nothing advised
};

// Cuts a block of `size` bytes from the top of the calling thread's heap, advises its part in
// whole 2 MiB pages into huge pages and frees it: with trimming off, the heap keeps it as its
// free top, from which later blocks are cut. The bytes below the first 2 MiB boundary (up to
// 2 MiB, where the heap's start put them) can only be 4 KiB pages; with `skip_gap`, one block,
// never touched, holds them, so that the blocks cut next start in 2 MiB pages (on deepseek, 20
// to 450 faults fewer in the main heap). What was advised (empty when the kernel refused the
// advice); nullopt when the block could not be had.
std::optional<AdvisedRange>
reserve_large_pages(size_t size, bool skip_gap)
{
  void* block = std::malloc(size);
  if (block == nullptr) {
    return std::nullopt;
  }
  const auto begin = (reinterpret_cast<uintptr_t>(block) + k_huge_page - 1) & ~(k_huge_page - 1);
  const auto end = (reinterpret_cast<uintptr_t>(block) + size) & ~(k_huge_page - 1);
  const bool advised =
    end > begin && ::madvise(reinterpret_cast<void*>(begin), end - begin, MADV_HUGEPAGE) == 0;
  std::free(block);
  // With its 16-byte chunk header, asking 8 bytes less than the gap makes the next block start
  // at `begin`. The filler is never read nor freed.
  if (const uintptr_t gap = begin - reinterpret_cast<uintptr_t>(block);
      skip_gap && gap >= k_min_filler) {
    // volatile, or the compiler drops an allocation nothing reads.
    [[maybe_unused]] static void* volatile filler = nullptr;
    filler = std::malloc(gap - sizeof(size_t));
  }
  return advised ? AdvisedRange{begin, end} : AdvisedRange{};
}

// The calling thread's CPU time: a fault the host makes slow is spent in the kernel for the
// thread, while time the thread waits for its core (a busy machine) is not counted.
std::chrono::nanoseconds
thread_cpu_time()
{
  timespec now{};
  ::clock_gettime(CLOCK_THREAD_CPUTIME_ID, &now);
  return std::chrono::seconds{now.tv_sec} + std::chrono::nanoseconds{now.tv_nsec};
}

// How long the kernel took to fault in the heap's first 2 MiB page (the first block cut from the
// heap starts there), for writing; nullopt when it cannot (MADV_POPULATE_WRITE: Linux 5.14).
std::optional<std::chrono::microseconds>
first_large_page_took(const AdvisedRange& range)
{
  const std::chrono::nanoseconds start = thread_cpu_time();
  if (::madvise(reinterpret_cast<void*>(range.begin), k_huge_page, MADV_POPULATE_WRITE) != 0) {
    return std::nullopt;
  }
  return std::chrono::duration_cast<std::chrono::microseconds>(thread_cpu_time() - start);
}

} // namespace

bool
kernel_gives_huge_pages()
{
  std::FILE* file = std::fopen("/sys/kernel/mm/transparent_hugepage/enabled", "re");
  if (file == nullptr) {
    return false;
  }
  char modes[128] = {};
  const size_t n = std::fread(modes, 1, sizeof modes - 1, file);
  std::fclose(file);
  const std::string_view text(modes, n);
  return text.find("[always]") != std::string_view::npos ||
         text.find("[madvise]") != std::string_view::npos;
}

bool
use_large_pages()
{
  const char* setting = std::getenv("QCHECK_LARGE_PAGES");
  const bool forced = setting != nullptr && std::strcmp(setting, "1") == 0;
  return use_large_pages(forced ? k_no_probe : k_slowest_first_large_page);
}

bool
use_large_pages(std::chrono::microseconds slowest_first_page)
{
  const char* setting = std::getenv("QCHECK_LARGE_PAGES");
  if (sanitized() || (setting != nullptr && std::strcmp(setting, "0") == 0) ||
      !kernel_gives_huge_pages() || memory_is_limited()) {
    return false;
  }
  // Every block under 2 GiB (mallopt takes an int) from the heap, none given a mapping of its
  // own, and the heap never trimmed. The threshold goes first: glibc before 2.35 refuses one
  // over 32 MiB, and then nothing here is changed.
  constexpr int k_limit = std::numeric_limits<int>::max();
  if (mallopt(M_MMAP_THRESHOLD, k_limit) == 0 || mallopt(M_TRIM_THRESHOLD, k_limit) == 0) {
    return false;
  }
  // Grows the heap by the whole reservation; freed, the block becomes the heap's free top,
  // from which later blocks are cut.
  const std::optional<AdvisedRange> advised = reserve_large_pages(k_large_page_heap, true);
  if (!advised) {
    // glibc's own values, fixed rather than adaptive: large blocks mapped and unmapped again.
    mallopt(M_MMAP_THRESHOLD, k_glibc_threshold);
    mallopt(M_TRIM_THRESHOLD, k_glibc_threshold);
    return false;
  }
  if (advised->begin == advised->end) {
    return false;
  }
  if (slowest_first_page != k_no_probe) {
    const std::optional<std::chrono::microseconds> took = first_large_page_took(*advised);
    if (took && *took > slowest_first_page) {
      // The rest of the heap in 4 KiB pages; the first 2 MiB page stays. Refused, the advice
      // stands: large pages, as before the timing.
      return ::madvise(reinterpret_cast<void*>(advised->begin + k_huge_page),
                       advised->end - advised->begin - k_huge_page, MADV_NOHUGEPAGE) != 0;
    }
  }
  // Other threads keep arenas of their own (use_large_pages_in_thread()): with one arena for
  // all, a thread that took a fresh 2 MiB page while holding its lock (a fault of up to
  // milliseconds on a virtual machine) stopped every other thread that allocated meanwhile.
  return true;
}

void
use_large_pages_in_thread()
{
  // The thread's first block makes its arena; the reservation is cut from that arena's heap.
  // Its first bytes, up to the first 2 MiB boundary, stay in 4 KiB pages: a thread that
  // allocates little (a small checkpoint's) takes no 2 MiB page.
  reserve_large_pages(k_large_page_thread_heap, false);
}

} // namespace qcheck::cli
