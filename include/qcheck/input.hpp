// Input abstraction: everything qcheck reads goes through FileSystem and ByteSource, so tests can
// use in-memory files and a remote reader (HTTP range requests) can slot in later.
//
// Paths are strings joined with '/'. Nothing here writes; writing lives in fix.
#pragma once

#include <cstdint>
#include <map>
#include <memory>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "qcheck/expected.hpp"

namespace qcheck {

// A blob's bytes in memory, followed by at least the padding asked for (readable, zero), for
// parsers that read past the end; `owner` keeps them alive.
struct PaddedBytes
{
  std::string_view bytes;
  std::shared_ptr<const void> owner;
};

// A readable blob of known size. read_at reads exactly out.size() bytes or fails.
class ByteSource
{
public:
  virtual ~ByteSource() = default;
  virtual uint64_t size() const = 0;
  virtual Expected<void> read_at(uint64_t offset, std::span<char> out) const = 0;
  // The whole blob and `padding` bytes after it. By default read into a new buffer; a disk file
  // may be mapped instead (DiskFileSystem::Options).
  virtual Expected<PaddedBytes> read_all_padded(size_t padding) const;
};

enum class FileKind
{
  missing,     // nothing at this path
  regular,     // a regular file (after following links)
  directory,   // a directory (after following links)
  special,     // FIFO, socket, device: never opened
  broken_link, // a symbolic link whose target does not exist, or that leads back to itself
};

struct FileInfo
{
  FileKind kind = FileKind::missing;
  uint64_t size = 0;       // bytes, for regular files
  bool is_symlink = false; // the path itself is a symbolic link
  uint32_t mode = 0;       // permission bits of the target (0 when unknown)
};

std::string_view to_string(FileKind kind);

class FileSystem
{
public:
  virtual ~FileSystem() = default;

  // Describes the path, following symbolic links; never fails (kind = missing instead).
  virtual FileInfo stat(const std::string& path) const = 0;

  // Opens a regular file for reading. Refuses anything else without blocking (a FIFO is
  // never opened for reading by a blocking open).
  virtual Expected<std::unique_ptr<ByteSource>> open(const std::string& path) const = 0;

  // Names (not paths) of the entries of a directory, sorted.
  virtual Expected<std::vector<std::string>> list_dir(const std::string& path) const = 0;

  // Opens as open() does and sets `info` to what stat() says of the path: a shard costs one
  // call where the file system can do both at once (DiskFileSystem: two system calls for a
  // regular file, not four). This default calls both.
  virtual Expected<std::unique_ptr<ByteSource>> open_described(const std::string& path,
                                                               FileInfo& info) const;

  // Opens a regular file of at most max_bytes bytes; a larger one is an error naming both sizes.
  Expected<std::unique_ptr<ByteSource>> open_at_most(const std::string& path,
                                                     uint64_t max_bytes) const;

  // Reads a whole regular file of at most max_bytes bytes.
  Expected<std::string> read_file(const std::string& path, uint64_t max_bytes) const;
};

// The real disk, through open/pread.
class DiskFileSystem final : public FileSystem
{
public:
  struct Options
  {
    // read_all_padded() maps a file (no copy, no fresh memory to fault in) when true. When
    // false, it reads a file of 2 MiB or more into fresh memory advised into 2 MiB pages,
    // unmapped when released: a pass to copy the bytes, then scans that do not miss the TLB at
    // every 4 KiB page (about twice as fast on a 2-core VM: README, Performance).
    bool map_whole_files = true;
  };

  DiskFileSystem() = default;
  explicit DiskFileSystem(Options options) : m_options(options) {}

  FileInfo stat(const std::string& path) const override;
  Expected<std::unique_ptr<ByteSource>> open(const std::string& path) const override;
  Expected<std::vector<std::string>> list_dir(const std::string& path) const override;
  Expected<std::unique_ptr<ByteSource>> open_described(const std::string& path,
                                                       FileInfo& info) const override;

private:
  // open(), and with `describe` open_described().
  Expected<std::unique_ptr<ByteSource>> open_file(const std::string& path, bool describe,
                                                  FileInfo& info) const;
  Options m_options;
};

// An in-memory tree for tests. Directories are implied by the files' paths and can be added
// explicitly; special files and broken links can be simulated.
class MemoryFileSystem final : public FileSystem
{
public:
  void add_file(const std::string& path, std::string contents);
  void add_directory(const std::string& path);
  void add_special(const std::string& path, FileKind kind);

  FileInfo stat(const std::string& path) const override;
  Expected<std::unique_ptr<ByteSource>> open(const std::string& path) const override;
  Expected<std::vector<std::string>> list_dir(const std::string& path) const override;

private:
  std::map<std::string, std::shared_ptr<const std::string>> m_files;
  std::map<std::string, FileKind> m_other; // directories and special entries
};

// A FileSystem that shows `overrides` (path -> contents) in place of the files below it: how
// `fix` re-lints a patched configuration before anything is written.
class OverlayFileSystem final : public FileSystem
{
public:
  explicit OverlayFileSystem(const FileSystem& base) : m_base(base) {}
  // Shows `contents` at `path`. The overlay views `contents`, which must outlive it: a patched
  // configuration is not copied (a long list makes it megabytes).
  void set(const std::string& path, std::string_view contents);
  void set(const std::string& path, std::string&& contents) = delete;

  FileInfo stat(const std::string& path) const override;
  Expected<std::unique_ptr<ByteSource>> open(const std::string& path) const override;
  Expected<std::vector<std::string>> list_dir(const std::string& path) const override;

private:
  const FileSystem& m_base;
  std::map<std::string, std::string_view> m_overrides;
};

// The path of the file whose live mapping (made by a disk file's read_all_padded) holds
// `address`, or null. A mapped file that another process shrinks raises SIGBUS at the next read
// of a page past its new end: this lets a SIGBUS handler name it. Async-signal-safe.
const char* mapped_file_at(const void* address) noexcept;

// Joins two path pieces with exactly one '/'. An empty base yields the name.
std::string join_path(const std::string& base, const std::string& name);

} // namespace qcheck
