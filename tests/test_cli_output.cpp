// Report and baseline files of the command line (src/cli_output.hpp): replaced atomically, and
// never a FIFO or a directory.
#include <filesystem>
#include <fstream>
#include <gtest/gtest.h>
#include <sstream>
#include <sys/stat.h>
#include <unistd.h>

#include "../src/cli_output.hpp"

namespace fs = std::filesystem;
using qcheck::cli::write_output_file;

namespace {

class OutputFile : public ::testing::Test
{
protected:
  void SetUp() override
  {
    m_dir =
      fs::temp_directory_path() / ("qcheck-output-" + std::to_string(::getpid()) + "-" +
                                   ::testing::UnitTest::GetInstance()->current_test_info()->name());
    fs::remove_all(m_dir);
    fs::create_directories(m_dir);
    m_umask = ::umask(022);
  }
  void TearDown() override
  {
    ::umask(m_umask);
    fs::remove_all(m_dir);
  }
  std::string path(const std::string& name) const { return (m_dir / name).string(); }
  static std::string read(const std::string& p)
  {
    std::ifstream in(p);
    std::stringstream s;
    s << in.rdbuf();
    return s.str();
  }
  // The names in the folder: no temporary file is left behind.
  std::vector<std::string> names() const
  {
    std::vector<std::string> out;
    for (const auto& e : fs::directory_iterator(m_dir)) {
      out.push_back(e.path().filename().string());
    }
    std::sort(out.begin(), out.end());
    return out;
  }

  fs::path m_dir;
  mode_t m_umask = 0;
};

} // namespace

TEST_F(OutputFile, NewFileGetsTheUmasksMode)
{
  ASSERT_TRUE(write_output_file(path("r.json"), "{}\n"));
  EXPECT_EQ(read(path("r.json")), "{}\n");
  EXPECT_EQ(fs::status(path("r.json")).permissions(),
            fs::perms::owner_read | fs::perms::owner_write | fs::perms::group_read |
              fs::perms::others_read);
  EXPECT_EQ(names(), std::vector<std::string>{"r.json"});
}

TEST_F(OutputFile, ExistingFileIsReplacedKeepingItsMode)
{
  std::ofstream(path("r.json")) << "an older, longer report\n";
  fs::permissions(path("r.json"), fs::perms::owner_read | fs::perms::owner_write);
  ASSERT_TRUE(write_output_file(path("r.json"), "new\n"));
  EXPECT_EQ(read(path("r.json")), "new\n");
  EXPECT_EQ(fs::status(path("r.json")).permissions(),
            fs::perms::owner_read | fs::perms::owner_write);
  EXPECT_EQ(names(), std::vector<std::string>{"r.json"});
}

// Through a link, the file it leads to gets the report (as opening it did); the link stays.
TEST_F(OutputFile, LinkToAFileKeepsTheLink)
{
  std::ofstream(path("real.json")) << "old\n";
  fs::create_symlink("real.json", path("link.json"));
  ASSERT_TRUE(write_output_file(path("link.json"), "new\n"));
  EXPECT_TRUE(fs::is_symlink(path("link.json")));
  EXPECT_EQ(read(path("real.json")), "new\n");
  EXPECT_EQ(names(), (std::vector<std::string>{"link.json", "real.json"}));
}

TEST_F(OutputFile, FifoDirectoryAndDanglingLinkAreRefused)
{
  // A FIFO nobody reads: opening it for writing would block forever.
  ASSERT_EQ(::mkfifo(path("fifo").c_str(), 0600), 0);
  auto fifo = write_output_file(path("fifo"), "x");
  ASSERT_FALSE(fifo);
  EXPECT_EQ(fifo.error(), path("fifo") + ": is a FIFO, not a regular file; not written");
  fs::create_directory(path("dir"));
  auto dir = write_output_file(path("dir"), "x");
  ASSERT_FALSE(dir);
  EXPECT_EQ(dir.error(), path("dir") + ": is a directory, not a regular file; not written");
  EXPECT_TRUE(fs::is_empty(path("dir")));
  fs::create_symlink("nowhere", path("dangling"));
  auto dangling = write_output_file(path("dangling"), "x");
  ASSERT_FALSE(dangling);
  EXPECT_EQ(dangling.error(), path("dangling") + ": is a dangling symbolic link; not written");
  EXPECT_EQ(names(), (std::vector<std::string>{"dangling", "dir", "fifo"}));
}

TEST_F(OutputFile, CharacterDeviceIsWrittenInPlace)
{
  EXPECT_TRUE(write_output_file("/dev/null", "discarded\n"));
  EXPECT_TRUE(fs::is_character_file("/dev/null"));
}

TEST_F(OutputFile, MissingFolderIsAnErrorNamingThePath)
{
  auto missing = write_output_file(path("no/such/r.json"), "x");
  ASSERT_FALSE(missing);
  EXPECT_NE(missing.error().find("No such file or directory"), std::string::npos)
    << missing.error();
}
