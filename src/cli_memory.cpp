#include "cli_memory.hpp"

#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <limits>
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
  void* block = std::malloc(k_large_page_heap);
  if (block == nullptr) {
    // glibc's own values, fixed rather than adaptive: large blocks mapped and unmapped again.
    mallopt(M_MMAP_THRESHOLD, k_glibc_threshold);
    mallopt(M_TRIM_THRESHOLD, k_glibc_threshold);
    return false;
  }
  const auto begin = (reinterpret_cast<uintptr_t>(block) + k_huge_page - 1) & ~(k_huge_page - 1);
  const auto end = (reinterpret_cast<uintptr_t>(block) + k_large_page_heap) & ~(k_huge_page - 1);
  const bool advised = ::madvise(reinterpret_cast<void*>(begin), end - begin, MADV_HUGEPAGE) == 0;
  std::free(block);
  // The freed block's bytes below `begin` (up to 2 MiB, where the randomised start of the heap
  // put them) can only be 4 KiB pages: one block, never touched, holds them, so that the blocks
  // cut next, the run's first large tables among them, start in 2 MiB pages (on deepseek, 20 to
  // 450 faults fewer). With its 16-byte chunk header, asking 8 bytes less than the gap makes the
  // next block start at `begin`.
  if (const uintptr_t gap = begin - reinterpret_cast<uintptr_t>(block); gap >= k_min_filler) {
    // Never read nor freed; volatile, or the compiler drops an allocation nothing reads.
    [[maybe_unused]] static void* volatile filler = nullptr;
    filler = std::malloc(gap - sizeof(size_t));
  }
  // Other threads keep arenas of their own, in 4 KiB pages: with one arena for all, a thread
  // that took a fresh 2 MiB page while holding its lock (a fault of up to milliseconds on a
  // virtual machine) stopped every other thread that allocated meanwhile.
  return advised;
}

} // namespace qcheck::cli
