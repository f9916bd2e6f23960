// DiskFileSystem on a real temporary folder: links followed for reading, non-regular files
// reported and never opened blocking.
#include <filesystem>
#include <fstream>
#include <gtest/gtest.h>
#include <sys/stat.h>

#include "builder.hpp"
#include "qcheck/checkpoint.hpp"
#include "qcheck/lint.hpp"
#include "qcheck/session.hpp"

namespace fs = std::filesystem;
using namespace qcheck;

namespace {

// A MemoryFileSystem whose listing of one folder fails, as opendir() does on a folder without
// read permission (which root, running the tests, can read anyway).
class UnlistableFolder final : public FileSystem
{
public:
  UnlistableFolder(const MemoryFileSystem& base, std::string locked)
    : m_base(base), m_locked(std::move(locked))
  {
  }
  FileInfo stat(const std::string& path) const override { return m_base.stat(path); }
  Expected<std::unique_ptr<ByteSource>> open(const std::string& path) const override
  {
    return m_base.open(path);
  }
  Expected<std::vector<std::string>> list_dir(const std::string& path) const override
  {
    if (path == m_locked) {
      return unexpected(path + ": cannot list directory: Permission denied");
    }
    return m_base.list_dir(path);
  }

private:
  const MemoryFileSystem& m_base;
  std::string m_locked;
};

void
add_model(MemoryFileSystem& fs, const std::string& folder)
{
  fs.add_file(folder + "/config.json", R"({"model_type": "llama"})");
  fs.add_file(folder + "/model.safetensors", test::safetensors({{"a.weight", "BF16", {2}}}));
}

class DiskFolder : public ::testing::Test
{
protected:
  void SetUp() override
  {
    m_root =
      fs::temp_directory_path() / ("qcheck-disk-" + std::to_string(::getpid()) + "-" +
                                   ::testing::UnitTest::GetInstance()->current_test_info()->name());
    fs::remove_all(m_root);
    fs::create_directories(m_root / "model");
    fs::create_directories(m_root / "blobs");
  }
  void TearDown() override { fs::remove_all(m_root); }

  void write(const fs::path& path, const std::string& bytes)
  {
    std::ofstream(path, std::ios::binary) << bytes;
  }
  // Writes `size` bytes of a repeating alphabet to m_root/blob<size>; returns them.
  std::string write_blob(size_t size, fs::path& path)
  {
    std::string bytes(size, '\0');
    for (size_t i = 0; i < size; ++i) {
      bytes[i] = static_cast<char>('a' + i % 26);
    }
    path = m_root / ("blob" + std::to_string(size));
    write(path, bytes);
    return bytes;
  }
  // read_all_padded(padding) of `source` holds `bytes`, then `padding` zeros.
  static void expect_padded(const ByteSource& source, const std::string& bytes, size_t padding,
                            PaddedBytes& out)
  {
    auto all = source.read_all_padded(padding);
    ASSERT_TRUE(all) << all.error();
    EXPECT_EQ(all->bytes, bytes);
    for (size_t i = 0; i < padding; ++i) {
      ASSERT_EQ(all->bytes.data()[bytes.size() + i], '\0') << i;
    }
    out = std::move(*all);
  }

  fs::path m_root;
};

std::vector<std::string>
messages(const Checkpoint& c)
{
  std::vector<std::string> out;
  for (const auto& p : c.problems) {
    out.push_back(p.file + ": " + p.message);
  }
  return out;
}

} // namespace

TEST_F(DiskFolder, SymlinkedShardIntoABlobStoreIsRead)
{
  write(m_root / "blobs/abc123", test::safetensors({{"a.weight", "BF16", {2, 2}}}));
  fs::create_symlink(m_root / "blobs/abc123", m_root / "model/model.safetensors");
  DiskFileSystem disk;
  auto c = load_checkpoint(disk, (m_root / "model").string());
  ASSERT_TRUE(c);
  EXPECT_TRUE(c->problems.empty());
  ASSERT_EQ(c->tensors.size(), 1u);
  EXPECT_TRUE(c->shards[0].info.is_symlink);
}

// --recursive does not follow links to folders: a link back to an ancestor (`a -> .`) would
// otherwise find the same model once per level down to the depth limit, and two such links
// (`a`, `b`) would walk 2^32 paths. A model folder
// named by a link is found when the link is the root itself.
TEST_F(DiskFolder, RecursiveSearchDoesNotFollowLinkedFolders)
{
  write(m_root / "model/config.json", "{}");
  write(m_root / "model/model.safetensors", test::safetensors({{"a.weight", "BF16", {2}}}));
  fs::create_directories(m_root / "zoo/inner");
  fs::create_symlink(m_root / "zoo", m_root / "zoo/inner/up");
  fs::create_directory_symlink(".", m_root / "a");
  fs::create_directory_symlink(m_root / "model", m_root / "zoo/linked-model");
  DiskFileSystem disk;
  EXPECT_EQ(find_model_folders(disk, m_root.string()).folders,
            std::vector<std::string>{(m_root / "model").string()});
  EXPECT_EQ(find_model_folders(disk, (m_root / "zoo/linked-model").string()).folders,
            std::vector<std::string>{(m_root / "zoo/linked-model").string()});
}

TEST_F(DiskFolder, FifoDirectoryAndDanglingLinkAreReportedNotOpened)
{
  write(m_root / "model/model.safetensors", test::safetensors({{"a.weight", "BF16", {2, 2}}}));
  ASSERT_EQ(::mkfifo((m_root / "model/fifo.safetensors").c_str(), 0600), 0);
  fs::create_directories(m_root / "model/dir.safetensors");
  fs::create_symlink(m_root / "blobs/missing", m_root / "model/dangling.safetensors");
  DiskFileSystem disk;
  auto c = load_checkpoint(disk, (m_root / "model").string());
  ASSERT_TRUE(c);
  EXPECT_EQ(messages(*c),
            (std::vector<std::string>{
              "dangling.safetensors: is a dangling or looping symbolic link, not a regular file; "
              "not read",
              "dir.safetensors: is a directory, not a regular file; not read",
              "fifo.safetensors: is a special file (FIFO, socket or device), not a regular file; "
              "not read"}));
  EXPECT_EQ(c->tensors.size(), 1u);
}

// A link that leads back to itself is named as such when opened, described or not (a review
// found it called dangling); stat() counts it with dangling links.
TEST_F(DiskFolder, LoopingLinkIsSaidToLoop)
{
  fs::create_symlink(m_root / "model" / "config.json", m_root / "model" / "config.json");
  const DiskFileSystem disk;
  const std::string loops = (m_root / "model" / "config.json").string() +
                            ": is a symbolic link that loops (or a chain of more than 40 links)";
  const auto opened = disk.open((m_root / "model" / "config.json").string());
  ASSERT_FALSE(opened);
  EXPECT_EQ(opened.error(), loops);
  FileInfo info;
  const auto described = disk.open_described((m_root / "model" / "config.json").string(), info);
  ASSERT_FALSE(described);
  EXPECT_EQ(described.error(), loops);
  EXPECT_TRUE(info.is_symlink);
  EXPECT_EQ(disk.stat((m_root / "model" / "config.json").string()).kind, FileKind::broken_link);
  fs::create_symlink(m_root / "blobs" / "gone", m_root / "model" / "dangling");
  const auto dangling = disk.open((m_root / "model" / "dangling").string());
  ASSERT_FALSE(dangling);
  EXPECT_EQ(dangling.error(),
            (m_root / "model" / "dangling").string() + ": is a dangling symbolic link");
}

TEST_F(DiskFolder, OpenRefusesAFifoWithoutBlocking)
{
  ASSERT_EQ(::mkfifo((m_root / "model/x.safetensors").c_str(), 0600), 0);
  DiskFileSystem disk;
  auto source = disk.open((m_root / "model/x.safetensors").string());
  ASSERT_FALSE(source);
  EXPECT_EQ(source.error(), (m_root / "model/x.safetensors").string() +
                              ": is a special file (FIFO, socket or device), not a regular file");
}

// The whole file and zero padding after it, mapped or read, for sizes around a page boundary
// (a file of exactly one page has its padding in the next, anonymous page).
TEST_F(DiskFolder, ReadAllPaddedGivesTheBytesAndZeroPadding)
{
  const size_t page = static_cast<size_t>(::sysconf(_SC_PAGESIZE));
  DiskFileSystem disk;
  MemoryFileSystem memory;
  for (const size_t size : {size_t{1}, page - 1, page, page + 1, 3 * page}) {
    SCOPED_TRACE(size);
    fs::path path;
    const std::string bytes = write_blob(size, path);
    memory.add_file(path.string(), bytes);
    for (const FileSystem* files :
         {static_cast<const FileSystem*>(&disk), static_cast<const FileSystem*>(&memory)}) {
      auto source = files->open(path.string());
      ASSERT_TRUE(source);
      PaddedBytes all;
      expect_padded(**source, bytes, 64, all);
      if (files == &disk) { // mapped, so the bytes start a page
        EXPECT_EQ(reinterpret_cast<uintptr_t>(all.bytes.data()) % page, 0u);
      }
    }
  }
}

// Without mapping (the CLI's choice where it uses large pages): a file of 2 MiB or more is read
// into an area of its own that starts a 2 MiB page, a smaller one into the heap; neither is a
// file mapping, and both end in zeros.
TEST_F(DiskFolder, ReadAllPaddedWithoutMappingReadsIntoLargePages)
{
  constexpr size_t k_large_page = size_t{2} << 20;
  const DiskFileSystem reading({.map_whole_files = false});
  for (const size_t size : {size_t{100}, k_large_page - 64, k_large_page, 3 * k_large_page + 5}) {
    SCOPED_TRACE(size);
    fs::path path;
    const std::string bytes = write_blob(size, path);
    auto source = reading.open(path.string());
    ASSERT_TRUE(source);
    PaddedBytes all;
    expect_padded(**source, bytes, 64, all);
    EXPECT_EQ(mapped_file_at(all.bytes.data()), nullptr);
    if (size + 64 >= k_large_page) {
      EXPECT_EQ(reinterpret_cast<uintptr_t>(all.bytes.data()) % k_large_page, 0u);
    }
    // The default maps it.
    auto mapped = DiskFileSystem().open(path.string());
    ASSERT_TRUE(mapped);
    auto view = (*mapped)->read_all_padded(64);
    ASSERT_TRUE(view);
    EXPECT_NE(mapped_file_at(view->bytes.data()), nullptr);
  }
}

// A file that shrinks after it was opened: the read fails with a message naming it.
TEST_F(DiskFolder, ReadAllPaddedWithoutMappingOfAShrunkFileFails)
{
  const fs::path path = m_root / "shrinks";
  write(path, std::string(3 << 20, 'x'));
  auto source = DiskFileSystem({.map_whole_files = false}).open(path.string());
  ASSERT_TRUE(source);
  fs::resize_file(path, 1 << 20);
  auto all = (*source)->read_all_padded(64);
  ASSERT_FALSE(all);
  EXPECT_NE(all.error().find("shrinks"), std::string::npos) << all.error();
}

// An empty file has no mapping: read, with its padding.
TEST_F(DiskFolder, ReadAllPaddedOfAnEmptyFile)
{
  write(m_root / "empty", "");
  auto source = DiskFileSystem().open((m_root / "empty").string());
  ASSERT_TRUE(source);
  auto all = (*source)->read_all_padded(64);
  ASSERT_TRUE(all);
  EXPECT_TRUE(all->bytes.empty());
  EXPECT_EQ(all->bytes.data()[63], '\0');
}

// open_described() gives what stat() says of every kind of path, with the source exactly when
// open() gives one: a regular file, a link to one, a folder, a link to a folder, a FIFO, a
// dangling link, nothing.
TEST_F(DiskFolder, OpenDescribedAgreesWithStatAndOpen)
{
  const DiskFileSystem disk;
  write(m_root / "blobs" / "data", "0123456789");
  fs::create_symlink(m_root / "blobs" / "data", m_root / "model" / "linked");
  fs::create_symlink(m_root / "blobs", m_root / "model" / "linked-folder");
  fs::create_symlink(m_root / "blobs" / "gone", m_root / "model" / "dangling");
  ASSERT_EQ(::mkfifo((m_root / "model" / "fifo").c_str(), 0644), 0);
  ::chmod((m_root / "blobs" / "data").c_str(), 0640);
  for (const fs::path& path :
       {m_root / "blobs" / "data", m_root / "model" / "linked", m_root / "blobs",
        m_root / "model" / "linked-folder", m_root / "model" / "fifo",
        m_root / "model" / "dangling", m_root / "model" / "missing"}) {
    FileInfo info;
    info.size = 99; // overwritten
    const auto described = disk.open_described(path.string(), info);
    const FileInfo expected = disk.stat(path.string());
    EXPECT_EQ(info.kind, expected.kind) << path;
    EXPECT_EQ(info.size, expected.size) << path;
    EXPECT_EQ(info.is_symlink, expected.is_symlink) << path;
    EXPECT_EQ(info.mode, expected.mode) << path;
    const auto opened = disk.open(path.string());
    ASSERT_EQ(described.has_value(), opened.has_value()) << path;
    if (opened) {
      EXPECT_EQ((*described)->size(), (*opened)->size()) << path;
    } else {
      EXPECT_EQ(described.error(), opened.error()) << path;
    }
  }
}

// --recursive reports a folder it cannot list (exit 2, the others still linted) instead of
// passing over the models it may hold; the root unlisted is an error with nothing linted.
TEST(RecursiveSearch, AnUnlistableFolderIsAnError)
{
  MemoryFileSystem memory;
  add_model(memory, "/r/ok");
  add_model(memory, "/r/locked/hidden-model");
  const UnlistableFolder fs(memory, "/r/locked");
  const FolderSearch search = find_model_folders(fs, "/r");
  EXPECT_EQ(search.folders, std::vector<std::string>{"/r/ok"});
  EXPECT_EQ(search.errors,
            std::vector<std::string>{"/r/locked: cannot list directory: Permission denied"});
  EXPECT_TRUE(search.too_deep.empty());

  LintRequest request;
  request.recursive = "/r";
  request.no_config = true;
  const LintOutcome outcome = run_lint_request(fs, request);
  EXPECT_EQ(outcome.errors,
            std::vector<std::string>{"/r/locked: cannot list directory: Permission denied "
                                     "(--recursive could not search it)"});
  ASSERT_EQ(outcome.reports.size(), 1u);
  EXPECT_EQ(outcome.reports[0].root, "/r/ok");
  EXPECT_EQ(outcome.exit_code(false), 2);
  EXPECT_EQ(outcome.exit_code(true), 2);

  const UnlistableFolder root_locked(memory, "/r");
  const LintOutcome none = run_lint_request(root_locked, request);
  EXPECT_EQ(none.errors, std::vector<std::string>{"/r: cannot list directory: Permission denied "
                                                  "(--recursive could not search it)"});
  EXPECT_TRUE(none.usage_error);
  EXPECT_TRUE(none.reports.empty());
}

// Hidden folders are skipped silently; folders past the depth limit are named in a warning.
TEST(RecursiveSearch, FoldersTooDeepAreNamed)
{
  MemoryFileSystem fs;
  add_model(fs, "/r/top");
  add_model(fs, "/r/.cache/model");
  std::string deep = "/r";
  for (int level = 1; level <= k_max_search_depth; ++level) {
    deep += "/d";
  }
  add_model(fs, deep);          // k_max_search_depth levels down: found
  add_model(fs, deep + "/x/m"); // below it: not searched
  const FolderSearch search = find_model_folders(fs, "/r");
  EXPECT_EQ(search.folders, (std::vector<std::string>{deep, "/r/top"}));
  EXPECT_TRUE(search.errors.empty());
  EXPECT_EQ(search.too_deep, std::vector<std::string>{deep + "/x"});

  LintRequest request;
  request.recursive = "/r";
  request.no_config = true;
  const LintOutcome outcome = run_lint_request(fs, request);
  EXPECT_TRUE(outcome.errors.empty());
  EXPECT_EQ(outcome.warnings,
            std::vector<std::string>{deep + "/x: not searched: more than 32 levels below /r "
                                            "(--recursive's limit)"});
  EXPECT_EQ(outcome.reports.size(), 2u);
  EXPECT_EQ(outcome.exit_code(false), 0);
}
