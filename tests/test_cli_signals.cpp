// The CLI's SIGBUS report: a mapped file that another process shrinks is named on stderr with
// exit code 2 instead of a crash; mapped_file_at() tells which file a live mapping holds.
#include <csignal>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <gtest/gtest.h>
#include <string>
#include <unistd.h>

#include "../src/cli_signals.hpp"
#include "qcheck/input.hpp"

namespace fs = std::filesystem;

namespace {

// Names the folder of a death test's files for the child that runs the test again from its
// start (the "threadsafe" style): the child then writes there instead of in a folder of its
// own, which nothing would remove.
constexpr const char* k_inherited_dir = "QCHECK_SIGNALS_TEST_DIR";

// A file of `size` bytes in a fresh temporary folder (or in the folder a parent test named).
std::string
temp_file(const std::string& name, size_t size)
{
  const char* inherited = std::getenv(k_inherited_dir);
  const fs::path dir = inherited != nullptr
                         ? fs::path(inherited)
                         : fs::temp_directory_path() /
                             ("qcheck-signals-" + std::to_string(::getpid()) + "-" +
                              ::testing::UnitTest::GetInstance()->current_test_info()->name());
  fs::create_directories(dir);
  const fs::path path = dir / name;
  std::ofstream(path, std::ios::binary) << std::string(size, 'x');
  return path.string();
}

} // namespace

TEST(CliSignals, MappedFileAtNamesTheFileOfALiveMapping)
{
  const std::string path = temp_file("config.json", 100000);
  qcheck::DiskFileSystem disk;
  auto source = disk.open(path);
  ASSERT_TRUE(source);
  const char* begin = nullptr;
  {
    auto bytes = (*source)->read_all_padded(64);
    ASSERT_TRUE(bytes);
    begin = bytes->bytes.data();
    ASSERT_NE(qcheck::mapped_file_at(begin), nullptr) << "the file was read, not mapped";
    EXPECT_EQ(std::string(qcheck::mapped_file_at(begin + 5)), path);
    EXPECT_EQ(std::string(qcheck::mapped_file_at(begin + 99999)), path);
    // The padding too: in the file's last page it faults after a truncation.
    EXPECT_EQ(std::string(qcheck::mapped_file_at(begin + 100063)), path);
    const size_t page = static_cast<size_t>(::sysconf(_SC_PAGESIZE));
    const size_t span = (100000 + 64 + page - 1) / page * page;
    EXPECT_EQ(qcheck::mapped_file_at(begin + span), nullptr);
    const int local = 0;
    EXPECT_EQ(qcheck::mapped_file_at(&local), nullptr);
  }
  EXPECT_EQ(qcheck::mapped_file_at(begin + 5), nullptr); // released with its bytes
  fs::remove_all(fs::path(path).parent_path());
}

TEST(CliSignalsDeathTest, AShrunkMappedFileIsNamedInsteadOfACrash)
{
  GTEST_FLAG_SET(death_test_style, "threadsafe");
  const std::string path = temp_file("config.json", 100000);
  ::setenv(k_inherited_dir, fs::path(path).parent_path().c_str(), 1);
  EXPECT_EXIT(
    {
      qcheck::cli::report_shrunk_files(2);
      qcheck::DiskFileSystem disk;
      auto source = disk.open(path);
      auto bytes = (*source)->read_all_padded(64);
      if (::truncate(path.c_str(), 0) != 0) {
        std::exit(3);
      }
      // A byte of the padding, in the file's last page (100000 is not a page boundary).
      const volatile char* byte = bytes->bytes.data() + 100010;
      std::exit(*byte == 0 ? 4 : 5); // the read raises SIGBUS first
    },
    ::testing::ExitedWithCode(2), "qcheck: error: .*config.json: the file shrank");
  ::unsetenv(k_inherited_dir);
  fs::remove_all(fs::path(path).parent_path());
}

TEST(CliSignalsDeathTest, AnyOtherSigbusStillKills)
{
  GTEST_FLAG_SET(death_test_style, "threadsafe");
  EXPECT_EXIT(
    {
      qcheck::cli::report_shrunk_files(2);
      std::raise(SIGBUS);
      std::exit(0);
    },
    ::testing::KilledBySignal(SIGBUS), "");
}
