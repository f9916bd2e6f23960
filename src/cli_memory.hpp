// Process-level memory set-up for the qcheck command line (not part of libqcheck, which leaves
// the allocator to the program that links it).
#pragma once

#include <chrono>
#include <cstddef>

namespace qcheck::cli {

// Reserved at start-up for the heap in 2 MiB pages: virtual address space, resident only as it
// is used.
inline constexpr size_t k_large_page_heap = size_t{1} << 30;

// Reserved in each thread's arena by use_large_pages_in_thread(): with 2 threads, the other
// thread's heap reached 30 MiB on million's lint and 38 MiB on the 50,000-entry list's (in 4 KiB
// pages). Under glibc's 64 MiB per arena heap, so that the block is cut from the arena's heap.
inline constexpr size_t k_large_page_thread_heap = size_t{48} << 20;

// Puts every heap block the main thread allocates under 2 GiB in one contiguous heap (large blocks
// included, nothing given back to the kernel before exit; other threads keep arenas of their own,
// in 4 KiB pages unless they call use_large_pages_in_thread()) and asks the kernel to back its
// first k_large_page_heap bytes with transparent huge pages. A run that touches tens of MiB then
// takes tens of page faults instead of thousands; on a virtual machine a fault costs microseconds.
// Changes nothing when the environment sets QCHECK_LARGE_PAGES=0, under AddressSanitizer (which has
// its own allocator), when the kernel's transparent huge pages are off, under an address-space or
// data limit (RLIMIT_AS, RLIMIT_DATA: a heap never trimmed keeps the address space of what it
// freed), or when glibc refuses the settings (before 2.35); when the reservation still fails, only
// the mapping and trimming thresholds stay set, at glibc's default values. Call first in main(),
// before any thread starts. True when the heap was set up and the kernel took the advice; the next
// block allocated then starts at a 2 MiB boundary.
//
// Unless QCHECK_LARGE_PAGES=1, the heap's first 2 MiB page is faulted in at once
// (MADV_POPULATE_WRITE) and the thread CPU time that took is read: over
// k_slowest_first_large_page, the rest of the heap is advised into 4 KiB pages and the call
// returns false (the thresholds stay set). On a virtual machine whose host takes freed memory
// back, such a page costs the host a fault per 4 KiB, milliseconds (docs/performance.md, stop
// 50). Where the kernel cannot (before Linux 5.14), nothing is timed.
bool use_large_pages();

// A first 2 MiB page slower than this falls back to 4 KiB pages (see use_large_pages()).
inline constexpr std::chrono::microseconds k_slowest_first_large_page{1000};
// No timing: large pages whatever the first one took.
inline constexpr std::chrono::microseconds k_no_probe = std::chrono::microseconds::max();

// use_large_pages() with this limit on the first 2 MiB page (k_no_probe: none), whatever
// QCHECK_LARGE_PAGES=1 says; QCHECK_LARGE_PAGES=0 still turns the set-up off.
bool use_large_pages(std::chrono::microseconds slowest_first_page);

// After use_large_pages() returned true, called first in each other thread
// (qcheck::on_thread_start): reserves k_large_page_thread_heap bytes at the top of the thread's own
// arena, advised into 2 MiB pages as the main heap is, except the bytes below the arena's first 2
// MiB boundary (a thread that allocates little takes no 2 MiB page). On deepseek the worker's 4 KiB
// faults were 1,900 of the run's 2,470. A thread that shares another's arena (more threads than
// arenas) reserves in that one.
void use_large_pages_in_thread();

// Whether the kernel gives transparent huge pages to a region that asks (mode "always" or
// "madvise"; not "never", nor a kernel without them).
bool kernel_gives_huge_pages();

} // namespace qcheck::cli
