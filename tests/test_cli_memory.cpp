// The command line's heap in 2 MiB pages (src/cli_memory.hpp): counted in page faults, which
// do not drift with the machine's load as times do.
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <gnu/libc-version.h>
#include <gtest/gtest.h>
#include <string>
#include <sys/resource.h>
#include <sys/wait.h>
#include <thread>
#include <unistd.h>

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

// One shard of `count` BF16 tensors, unindexed, no config: about 80 bytes of header each.
fs::path
write_checkpoint(size_t count)
{
  const fs::path dir =
    fs::temp_directory_path() / ("qcheck_cli_memory_" + std::to_string(::getpid()));
  fs::create_directories(dir);
  std::string header = "{";
  for (size_t i = 0; i < count; ++i) {
    header += (i == 0 ? "\"" : ",\"") + std::string("model.layers.") + std::to_string(i / 64) +
              ".mlp.experts." + std::to_string(i % 64) + ".up_proj.weight\":{\"dtype\":\"BF16\"," +
              "\"shape\":[1],\"data_offsets\":[" + std::to_string(2 * i) + "," +
              std::to_string(2 * i + 2) + "]}";
  }
  header += "}";
  header.append((8 - header.size() % 8) % 8, ' ');
  std::ofstream out(dir / "model.safetensors", std::ios::binary);
  uint64_t length = header.size();
  for (int i = 0; i < 8; ++i) {
    out.put(static_cast<char>((length >> (8 * i)) & 0xff));
  }
  out << header << std::string(2 * count, '\0');
  return dir;
}

} // namespace

TEST(CliMemory, HeapInLargePagesTakesFarFewerPageFaults)
{
  if (const char* why = set_up_untestable()) {
    GTEST_SKIP() << why;
  }
  const fs::path dir = write_checkpoint(30'000);
  const long small_pages = lint_page_faults(dir, "0");
  const long large_pages = lint_page_faults(dir, "");
  fs::remove_all(dir);
  ASSERT_GT(small_pages, 0);
  ASSERT_GT(large_pages, 0);
  EXPECT_LT(large_pages * 3, small_pages);
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

// The exit status of a child that runs the heap set-up (which changes a process's allocator for
// good), then `check()`: 77 when the set-up was refused, -1 when the child did not exit.
template<typename Check>
int
status_after_set_up(Check check)
{
  const pid_t pid = ::fork();
  if (pid == 0) {
    if (!qcheck::cli::use_large_pages()) {
      ::_exit(77);
    }
    ::_exit(check());
  }
  int status = 0;
  if (::waitpid(pid, &status, 0) != pid || !WIFEXITED(status)) {
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
    std::memset(block, 1, k_block);
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

// Only the main thread's blocks come from the heap in 2 MiB pages: another thread allocates
// from an arena of its own (a mapping above the heap's end), whose lock the main thread never
// waits for.
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
