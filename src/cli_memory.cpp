#include "cli_memory.hpp"

#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <limits>
#include <malloc.h>
#include <sys/mman.h>

namespace qcheck::cli {

namespace {

constexpr uintptr_t k_huge_page = uintptr_t{2} << 20;

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

} // namespace

void
use_large_pages()
{
  const char* setting = std::getenv("QCHECK_LARGE_PAGES");
  if (sanitized() || (setting != nullptr && std::strcmp(setting, "0") == 0)) {
    return;
  }
  // Threads would otherwise get arenas of their own, and every block over 128 KiB a mapping
  // of its own; now only blocks of 2 GiB or more do (mallopt takes an int).
  constexpr int k_limit = std::numeric_limits<int>::max();
  if (mallopt(M_ARENA_MAX, 1) == 0 || mallopt(M_MMAP_THRESHOLD, k_limit) == 0 ||
      mallopt(M_TRIM_THRESHOLD, k_limit) == 0) {
    return;
  }
  // Grows the heap by the whole reservation; freed, the block becomes the heap's free top,
  // from which later blocks are cut.
  void* block = std::malloc(k_large_page_heap);
  if (block == nullptr) {
    return;
  }
  const auto begin = (reinterpret_cast<uintptr_t>(block) + k_huge_page - 1) & ~(k_huge_page - 1);
  const auto end = (reinterpret_cast<uintptr_t>(block) + k_large_page_heap) & ~(k_huge_page - 1);
  ::madvise(reinterpret_cast<void*>(begin), end - begin, MADV_HUGEPAGE); // advice: may be refused
  std::free(block);
}

} // namespace qcheck::cli
