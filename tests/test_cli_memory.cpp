// The command line's heap in 2 MiB pages (src/cli_memory.hpp): counted in page faults, which
// do not drift with the machine's load as times do.
#include <chrono>
#include <cstdio>
#include <fcntl.h>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <gnu/libc-version.h>
#include <gtest/gtest.h>
#include <string>
#include <sys/mman.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <thread>
#include <type_traits>
#include <unistd.h>
#include <utility>

#include "../src/cli_memory.hpp"
#include "sanitizers.hpp"

namespace {

namespace fs = std::filesystem;

// Minor page faults of one `qcheck lint DIR`, with QCHECK_LARGE_PAGES set to `setting` (unset
// when empty); -1 when the run did not exit with 0 or 1.
long
lint_page_faults(const fs::path& dir, const char* setting)
{
  const pid_t pid = ::fork();
  if (pid == 0) {
    if (*setting != '\0') {
      ::setenv("QCHECK_LARGE_PAGES", setting, 1);
    } else {
      ::unsetenv("QCHECK_LARGE_PAGES");
    }
    std::freopen("/dev/null", "w", stdout);
    std::freopen("/dev/null", "w", stderr);
    ::execl(QCHECK_BINARY, "qcheck", "lint", dir.c_str(), static_cast<char*>(nullptr));
    ::_exit(127);
  }
  int status = 0;
  rusage usage{};
  if (pid < 0 || ::wait4(pid, &status, 0, &usage) != pid || !WIFEXITED(status) ||
      WEXITSTATUS(status) > 1) {
    return -1;
  }
  return usage.ru_minflt;
}

// glibc 2.35 or later: earlier ones refuse the heap set-up, which then changes nothing.
bool
glibc_takes_the_settings()
{
  unsigned major = 0, minor = 0;
  return std::sscanf(::gnu_get_libc_version(), "%u.%u", &major, &minor) == 2 &&
         (major > 2 || (major == 2 && minor >= 35));
}

// Why the heap set-up cannot be tested here, or null: its effect is not this process's to see.
const char*
set_up_untestable()
{
#ifdef QCHECK_TEST_ASAN
  return "AddressSanitizer's allocator ignores the set-up";
#endif
  if (!qcheck::cli::kernel_gives_huge_pages()) {
    return "this kernel gives no transparent huge pages";
  }
  if (!glibc_takes_the_settings()) {
    return "glibc before 2.35 refuses the settings";
  }
  return nullptr;
}

// `shards` shards of `count` BF16 tensors in all, unindexed, no config: about 80 bytes of header
// each.
fs::path
write_checkpoint(size_t count, size_t shards = 1)
{
  const fs::path dir =
    fs::temp_directory_path() / ("qcheck_cli_memory_" + std::to_string(::getpid()));
  fs::create_directories(dir);
  for (size_t s = 0; s < shards; ++s) {
    const size_t first = count * s / shards;
    const size_t end = count * (s + 1) / shards;
    std::string header = "{";
    for (size_t i = first; i < end; ++i) {
      header += (i == first ? "\"" : ",\"") + std::string("model.layers.") +
                std::to_string(i / 64) + ".mlp.experts." + std::to_string(i % 64) +
                ".up_proj.weight\":{\"dtype\":\"BF16\",\"shape\":[1],\"data_offsets\":[" +
                std::to_string(2 * (i - first)) + "," + std::to_string(2 * (i - first) + 2) + "]}";
    }
    header += "}";
    header.append((8 - header.size() % 8) % 8, ' ');
    const std::string name = shards == 1 ? "model.safetensors"
                                         : "model-" + std::to_string(s + 1) + "-of-" +
                                             std::to_string(shards) + ".safetensors";
    std::ofstream out(dir / name, std::ios::binary);
    uint64_t length = header.size();
    for (int i = 0; i < 8; ++i) {
      out.put(static_cast<char>((length >> (8 * i)) & 0xff));
    }
    out << header << std::string(2 * (end - first), '\0');
  }
  return dir;
}

// The page faults of a lint of write_checkpoint(count, shards) in 4 KiB pages
// (QCHECK_LARGE_PAGES=0), then with the heap set-up whatever its first 2 MiB page took
// (QCHECK_LARGE_PAGES=1): -1 for a run that failed.
std::pair<long, long>
page_faults_both_ways(size_t count, size_t shards)
{
  const fs::path dir = write_checkpoint(count, shards);
  const long small_pages = lint_page_faults(dir, "0");
  const long large_pages = lint_page_faults(dir, "1");
  fs::remove_all(dir);
  return {small_pages, large_pages};
}

} // namespace

TEST(CliMemory, HeapInLargePagesTakesFarFewerPageFaults)
{
  if (const char* why = set_up_untestable()) {
    GTEST_SKIP() << why;
  }
  const auto [small_pages, large_pages] = page_faults_both_ways(30'000, 1);
  ASSERT_GT(small_pages, 0);
  ASSERT_GT(large_pages, 0);
  EXPECT_LT(large_pages * 3, small_pages);
}

// With shards read on two threads, the other thread's blocks are in 2 MiB pages too
// (use_large_pages_in_thread(), set by main() for every thread the library starts): without
// them, that thread's half of the names and entries took one 4 KiB fault each.
TEST(CliMemory, ShardsReadOnAnotherThreadTakeFarFewerPageFaultsToo)
{
  if (const char* why = set_up_untestable()) {
    GTEST_SKIP() << why;
  }
  if (std::thread::hardware_concurrency() < 2) {
    GTEST_SKIP() << "one core: the shards are read on one thread";
  }
  const auto [small_pages, large_pages] = page_faults_both_ways(60'000, 2);
  ASSERT_GT(small_pages, 0);
  ASSERT_GT(large_pages, 0);
  EXPECT_LT(large_pages * 4, small_pages);
}

namespace {

// Minor page faults of this process so far.
long
own_page_faults()
{
  rusage usage{};
  ::getrusage(RUSAGE_SELF, &usage);
  return usage.ru_minflt;
}

// Writes `size` bytes at `block`, writes the compiler may not drop: nothing reads the block.
void
write_all(char* block, size_t size)
{
  std::memset(block, 1, size);
  asm volatile("" : : "r"(block) : "memory");
}

// Set in the environment of the process status_after_set_up() starts for a check: the limit on
// the first 2 MiB page, in microseconds.
constexpr const char* k_fresh_heap = "QCHECK_TEST_FRESH_HEAP";

// The exit status of a process that runs the heap set-up (which changes a process's allocator for
// good) with `slowest_first_page`, then `check(set_up)` (set_up: what the set-up returned): 77
// when it was refused and `check` takes no argument, -1 when the process did not exit or could
// not start. The process is this test alone, in this program started again: a child forked from
// this one would inherit the blocks earlier tests freed, and cut its blocks from them. That
// process runs the test's first status_after_set_up() call, with this call's limit.
template<typename Check>
int
status_after_set_up(Check check,
                    std::chrono::microseconds slowest_first_page = qcheck::cli::k_no_probe)
{
  if (const char* limit = std::getenv(k_fresh_heap)) { // in that process
    const bool set_up =
      qcheck::cli::use_large_pages(std::chrono::microseconds{std::strtoll(limit, nullptr, 10)});
    if constexpr (std::is_invocable_v<Check, bool>) {
      ::_exit(check(set_up));
    } else {
      if (!set_up) {
        ::_exit(77);
      }
      ::_exit(check());
    }
  }
  const ::testing::TestInfo* test = ::testing::UnitTest::GetInstance()->current_test_info();
  const std::string filter =
    std::string("--gtest_filter=") + test->test_suite_name() + "." + test->name();
  const pid_t pid = ::fork();
  if (pid == 0) {
    ::setenv(k_fresh_heap, std::to_string(slowest_first_page.count()).c_str(), 1);
    std::freopen("/dev/null", "w", stdout);
    ::execl("/proc/self/exe", "qcheck_tests", filter.c_str(), static_cast<char*>(nullptr));
    ::_exit(126);
  }
  int status = 0;
  if (::waitpid(pid, &status, 0) != pid || !WIFEXITED(status) || WEXITSTATUS(status) == 126) {
    return -1;
  }
  return WEXITSTATUS(status);
}

} // namespace

// The heap's first bytes are where the randomised start of the heap puts them, below a 2 MiB
// boundary: the set-up keeps them out of later blocks, the first of which starts on the boundary
// and is written in a few 2 MiB faults, not up to 512 of 4 KiB.
TEST(CliMemory, FirstBlockAfterTheSetUpStartsInALargePage)
{
  if (const char* why = set_up_untestable()) {
    GTEST_SKIP() << why;
  }
  const int status = status_after_set_up([] {
    constexpr size_t k_block = size_t{8} << 20;
    auto* block = static_cast<char*>(std::malloc(k_block));
    const long before = own_page_faults();
    write_all(block, k_block);
    const long faults = own_page_faults() - before;
    const bool aligned = reinterpret_cast<uintptr_t>(block) % (uintptr_t{2} << 20) == 0;
    return (aligned ? 0 : 1) | (faults <= 16 ? 0 : 2);
  });
  ASSERT_GE(status, 0);
  if (status == 77) {
    GTEST_SKIP() << "the kernel refused the advice";
  }
  EXPECT_EQ(status & 1, 0) << "the block does not start at a 2 MiB boundary";
  EXPECT_EQ(status & 2, 0) << "writing 8 MiB took more than 16 page faults";
}

namespace {

// Page faults of writing a fresh 8 MiB block.
long
faults_writing_8_mib()
{
  constexpr size_t k_block = size_t{8} << 20;
  auto* block = static_cast<char*>(std::malloc(k_block));
  const long before = own_page_faults();
  write_all(block, k_block);
  return own_page_faults() - before;
}

// Whether this kernel faults a range in on request (MADV_POPULATE_WRITE, Linux 5.14), which
// the timing of the first 2 MiB page needs.
bool
kernel_populates()
{
  constexpr size_t k_size = 4096;
  void* area = ::mmap(nullptr, k_size, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
  if (area == MAP_FAILED) {
    return false;
  }
  const bool populated = ::madvise(area, k_size, 23 /* MADV_POPULATE_WRITE */) == 0;
  ::munmap(area, k_size);
  return populated;
}

// What a fresh process's heap set-up says and does unprobed (k_no_probe), then with `limit` on
// its first 2 MiB page: bit 0, the set-up stood; bit 1, writing 8 MiB then took 1,024 page faults
// or more (4 KiB pages); bit 2, 16 or fewer (2 MiB pages). -1 for a process that failed.
std::pair<int, int>
set_up_unprobed_then_with(std::chrono::microseconds limit)
{
  const auto check = [](bool set_up) {
    const long faults = faults_writing_8_mib();
    return (set_up ? 1 : 0) | (faults >= 1024 ? 2 : 0) | (faults <= 16 ? 4 : 0);
  };
  return {status_after_set_up(check, qcheck::cli::k_no_probe), status_after_set_up(check, limit)};
}

} // namespace

// The heap's first 2 MiB page is faulted in and timed: slower than the limit (here any time at
// all), the set-up says no and the rest of the heap stays in 4 KiB pages, 512 faults per 2 MiB.
TEST(CliMemory, SlowFirstLargePageLeavesTheHeapInSmallPages)
{
  if (const char* why = set_up_untestable()) {
    GTEST_SKIP() << why;
  }
  if (!kernel_populates()) {
    GTEST_SKIP() << "this kernel cannot fault a range in on request (MADV_POPULATE_WRITE)";
  }
  const auto [unprobed, slow] = set_up_unprobed_then_with(std::chrono::microseconds{0});
  ASSERT_GE(unprobed, 0);
  ASSERT_GE(slow, 0);
  if ((unprobed & 1) == 0) {
    GTEST_SKIP() << "the kernel refused the advice";
  }
  EXPECT_EQ(slow & 1, 0) << "a first 2 MiB page over the limit kept the set-up";
  EXPECT_EQ(slow & 2, 2) << "after it, writing 8 MiB took fewer than 1,024 page faults";
}

// Under the limit (any time under 10 s), the set-up stands as it does unprobed: 8 MiB are
// written in a few 2 MiB faults.
TEST(CliMemory, FirstLargePageUnderTheLimitKeepsTheSetUp)
{
  if (const char* why = set_up_untestable()) {
    GTEST_SKIP() << why;
  }
  const auto [unprobed, probed] = set_up_unprobed_then_with(std::chrono::seconds{10});
  ASSERT_GE(unprobed, 0);
  ASSERT_GE(probed, 0);
  if ((unprobed & 1) == 0) {
    GTEST_SKIP() << "the kernel refused the advice";
  }
  EXPECT_EQ(probed & 1, 1) << "a first 2 MiB page under the limit undid the set-up";
  EXPECT_EQ(probed & 4, 4) << "under the limit, writing 8 MiB took more than 16 page faults";
}

// Only the main thread's blocks come from the main heap: another thread allocates from an arena
// of its own (a mapping above the heap's end; in 2 MiB pages once the thread calls
// use_large_pages_in_thread()), whose lock the main thread never waits for.
TEST(CliMemory, OtherThreadsAllocateOutsideTheMainHeap)
{
  if (const char* why = set_up_untestable()) {
    GTEST_SKIP() << why;
  }
  const int status = status_after_set_up([] {
    void* const own = std::malloc(64);
    const auto heap_end = reinterpret_cast<uintptr_t>(::sbrk(0));
    void* other = nullptr;
    std::thread([&] { other = std::malloc(64); }).join();
    const bool own_in_heap = reinterpret_cast<uintptr_t>(own) < heap_end;
    const bool other_outside = reinterpret_cast<uintptr_t>(other) >= heap_end;
    return (own_in_heap ? 0 : 1) | (other_outside ? 0 : 2);
  });
  ASSERT_GE(status, 0);
  if (status == 77) {
    GTEST_SKIP() << "the kernel refused the advice";
  }
  EXPECT_EQ(status & 1, 0) << "the main thread's block is not in the heap";
  EXPECT_EQ(status & 2, 0) << "another thread's block is in the main heap";
}

namespace {

// AnonHugePages of /proc/self/smaps_rollup, in KiB; -1 when it cannot be read. Allocates
// nothing, so that the count it reads is not its own doing.
long
huge_page_kib()
{
  char text[8192];
  const int fd = ::open("/proc/self/smaps_rollup", O_RDONLY | O_CLOEXEC);
  if (fd < 0) {
    return -1;
  }
  const ssize_t n = ::read(fd, text, sizeof text - 1);
  ::close(fd);
  if (n <= 0) {
    return -1;
  }
  text[n] = '\0';
  const char* key = std::strstr(text, "AnonHugePages:");
  return key == nullptr ? -1 : std::strtol(key + std::strlen("AnonHugePages:"), nullptr, 10);
}

} // namespace

// Another thread that calls use_large_pages_in_thread() allocates from its own arena as before,
// but in 2 MiB pages past the arena's first 2 MiB boundary: a 16 MiB block is written in at most
// the 512 faults of the bytes below it plus one per 2 MiB, not 4,096. A thread that allocates
// little takes no 2 MiB page.
TEST(CliMemory, AnotherThreadsLargeBlocksAreInLargePagesAndSmallOnesNot)
{
  if (const char* why = set_up_untestable()) {
    GTEST_SKIP() << why;
  }
  const int status = status_after_set_up([] {
    int result = 0;
    const auto thread_faults = [] {
      rusage usage{};
      ::getrusage(RUSAGE_THREAD, &usage);
      return usage.ru_minflt;
    };
    std::thread([&] {
      qcheck::cli::use_large_pages_in_thread();
      const long huge_before = huge_page_kib();
      auto* small = static_cast<char*>(std::malloc(64 << 10));
      write_all(small, 64 << 10);
      if (huge_before < 0 || huge_page_kib() != huge_before) {
        result |= 1;
      }
      constexpr size_t k_block = size_t{16} << 20;
      auto* block = static_cast<char*>(std::malloc(k_block));
      const long before = thread_faults();
      write_all(block, k_block);
      if (thread_faults() - before > 512 + 16) {
        result |= 2;
      }
      if (reinterpret_cast<uintptr_t>(block) < reinterpret_cast<uintptr_t>(::sbrk(0))) {
        result |= 4;
      }
    }).join();
    return result;
  });
  ASSERT_GE(status, 0);
  if (status == 77) {
    GTEST_SKIP() << "the kernel refused the advice";
  }
  EXPECT_EQ(status & 1, 0) << "64 KiB written after the set-up took a 2 MiB page";
  EXPECT_EQ(status & 2, 0) << "writing 16 MiB took more than 528 page faults";
  EXPECT_EQ(status & 4, 0) << "the thread's block is in the main heap";
}

// The kernel's THP mode as the file says it: "always" or "madvise"
// in brackets (the mode in force) gives huge pages, "never" none; no file, none.
TEST(CliMemory, HugePagesAsTheKernelModeSays)
{
  std::ifstream in("/sys/kernel/mm/transparent_hugepage/enabled");
  std::string modes;
  if (!in || !std::getline(in, modes)) {
    EXPECT_FALSE(qcheck::cli::kernel_gives_huge_pages());
    return;
  }
  const bool expected =
    modes.find("[always]") != std::string::npos || modes.find("[madvise]") != std::string::npos;
  ASSERT_TRUE(expected || modes.find("[never]") != std::string::npos) << modes;
  EXPECT_EQ(qcheck::cli::kernel_gives_huge_pages(), expected) << modes;
}
