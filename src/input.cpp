#include "qcheck/input.hpp"

#include <algorithm>
#include <array>
#include <atomic>
#include <cerrno>
#include <cstdint>
#include <cstring>
#include <dirent.h>
#include <fcntl.h>
#include <fmt/format.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

namespace qcheck {

std::string_view
to_string(FileKind kind)
{
  switch (kind) {
  case FileKind::missing:
    return "missing";
  case FileKind::regular:
    return "regular file";
  case FileKind::directory:
    return "directory";
  case FileKind::special:
    return "special file (FIFO, socket or device)";
  case FileKind::broken_link:
    return "dangling or looping symbolic link";
  }
  return "unknown";
}

std::string
join_path(const std::string& base, const std::string& name)
{
  if (base.empty() || base == ".") {
    return name;
  }
  if (base.back() == '/') {
    return base + name;
  }
  return base + "/" + name;
}

Expected<std::unique_ptr<ByteSource>>
FileSystem::open_at_most(const std::string& path, uint64_t max_bytes) const
{
  auto source = open(path);
  if (source && (*source)->size() > max_bytes) {
    return unexpected(fmt::format("{}: file is {} bytes, more than the {} bytes allowed", path,
                                  (*source)->size(), max_bytes));
  }
  return source;
}

Expected<std::unique_ptr<ByteSource>>
FileSystem::open_described(const std::string& path, FileInfo& info) const
{
  info = stat(path);
  return open(path);
}

Expected<std::string>
FileSystem::read_file(const std::string& path, uint64_t max_bytes) const
{
  auto source = open_at_most(path, max_bytes);
  if (!source) {
    return unexpected(source.error());
  }
  std::string contents((*source)->size(), '\0');
  if (auto read = (*source)->read_at(0, std::span<char>(contents.data(), contents.size())); !read) {
    return unexpected(read.error());
  }
  return contents;
}

Expected<PaddedBytes>
ByteSource::read_all_padded(size_t padding) const
{
  const uint64_t n = size();
  if (n > SIZE_MAX - padding) {
    return unexpected(fmt::format("blob of {} bytes does not fit in memory", n));
  }
  const auto length = static_cast<size_t>(n);
  std::shared_ptr<char[]> buffer(new char[length + padding]); // not zero-filled: read over
  std::fill_n(buffer.get() + length, padding, '\0');
  if (auto read = read_at(0, std::span<char>(buffer.get(), length)); !read) {
    return unexpected(read.error());
  }
  return PaddedBytes{std::string_view(buffer.get(), length), std::move(buffer)};
}

namespace {

// Live mappings, for mapped_file_at(): a fixed table of lock-free slots, so that a signal
// handler can read it. `begin` is 0 for a free slot and 1 while one is being filled or emptied;
// `version` is odd while the fields change, so that a reader can tell a torn read (seqlock).
// The path belongs to the mapping's owner, which outlives the slot.
struct MappedSlot
{
  std::atomic<uint32_t> version{0};
  std::atomic<uintptr_t> begin{0};
  std::atomic<uintptr_t> end{0};
  std::atomic<const char*> path{nullptr};
};
constexpr size_t k_mapped_slots = 64;
std::array<MappedSlot, k_mapped_slots> g_mapped;

// The slot now describing [begin, end) of `path`, or null when all are taken (the mapping then
// goes unnamed).
MappedSlot*
register_mapping(const void* begin, size_t size, const char* path)
{
  for (MappedSlot& slot : g_mapped) {
    uintptr_t expected = 0;
    if (slot.begin.compare_exchange_strong(expected, 1)) {
      slot.version.fetch_add(1);
      slot.path.store(path);
      slot.end.store(reinterpret_cast<uintptr_t>(begin) + size);
      slot.begin.store(reinterpret_cast<uintptr_t>(begin));
      slot.version.fetch_add(1);
      return &slot;
    }
  }
  return nullptr;
}

void
unregister_mapping(MappedSlot* slot)
{
  if (slot != nullptr) {
    slot->version.fetch_add(1);
    slot->begin.store(1);
    slot->path.store(nullptr);
    slot->end.store(0);
    slot->version.fetch_add(1);
    slot->begin.store(0); // free for the next register_mapping
  }
}

class FdSource final : public ByteSource
{
public:
  FdSource(int fd, uint64_t size, std::string path, bool map_whole)
    : m_fd(fd), m_size(size), m_path(std::move(path)), m_map_whole(map_whole)
  {
  }
  ~FdSource() override { ::close(m_fd); }
  FdSource(const FdSource&) = delete;
  FdSource& operator=(const FdSource&) = delete;

  uint64_t size() const override { return m_size; }

  Expected<void> read_at(uint64_t offset, std::span<char> out) const override
  {
    size_t done = 0;
    while (done < out.size()) {
      const ssize_t n =
        ::pread(m_fd, out.data() + done, out.size() - done, static_cast<off_t>(offset + done));
      if (n < 0) {
        if (errno == EINTR) {
          continue;
        }
        return unexpected(fmt::format("{}: read failed: {}", m_path, std::strerror(errno)));
      }
      if (n == 0) {
        return unexpected(fmt::format("{}: file ended at byte {} while reading {} bytes at {}",
                                      m_path, offset + done, out.size(), offset));
      }
      done += static_cast<size_t>(n);
    }
    return {};
  }

  // Maps the file into an anonymous reservation that is a page or more longer, so the padding
  // reads as zeros (or, when the file system's options say so, reads it into large pages).
  // Reads instead when mapping fails or when the file has shrunk since it was opened (touching a
  // page past its end would raise SIGBUS).
  Expected<PaddedBytes> read_all_padded(size_t padding) const override
  {
    if (!m_map_whole) {
      return read_into_large_pages(padding);
    }
    const auto page = static_cast<uint64_t>(::sysconf(_SC_PAGESIZE));
    if (m_size == 0 || m_size > (uint64_t{1} << 40) || padding > page) {
      return ByteSource::read_all_padded(padding);
    }
    const size_t span = static_cast<size_t>((m_size + padding + page - 1) / page * page);
    // The owner: unmaps the area, and keeps the path for mapped_file_at() while it is mapped.
    // Made first, so that nothing is left mapped if making it throws.
    struct Mapping
    {
      explicit Mapping(std::string p) : path(std::move(p)) {}
      Mapping(const Mapping&) = delete;
      Mapping& operator=(const Mapping&) = delete;
      ~Mapping()
      {
        unregister_mapping(slot);
        if (area != nullptr) {
          ::munmap(area, span);
        }
      }
      std::string path;
      void* area = nullptr;
      size_t span = 0;
      MappedSlot* slot = nullptr;
    };
    const auto mapping = std::make_shared<Mapping>(m_path);
    void* area = ::mmap(nullptr, span, PROT_READ, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    if (area == MAP_FAILED) {
      return ByteSource::read_all_padded(padding);
    }
    mapping->area = area;
    mapping->span = span;
    struct stat now
    {};
    if (::mmap(area, static_cast<size_t>(m_size), PROT_READ, MAP_PRIVATE | MAP_FIXED | MAP_POPULATE,
               m_fd, 0) == MAP_FAILED ||
        ::fstat(m_fd, &now) != 0 || static_cast<uint64_t>(now.st_size) < m_size) {
      return ByteSource::read_all_padded(padding);
    }
    // The whole area: after a truncation the padding in the file's last page faults too.
    mapping->slot = register_mapping(area, span, mapping->path.c_str());
    std::shared_ptr<const void> owner(mapping, area);
    return PaddedBytes{
      std::string_view(static_cast<const char*>(area), static_cast<size_t>(m_size)),
      std::move(owner)};
  }

private:
  // Reads the file into an anonymous area of its own, aligned and advised into 2 MiB pages (the
  // padding is its untouched zeros) and unmapped when the bytes are released. A file under one
  // such page goes to the heap, as does any when the area cannot be had.
  Expected<PaddedBytes> read_into_large_pages(size_t padding) const
  {
    constexpr size_t k_large_page = size_t{2} << 20;
    if (m_size > (uint64_t{1} << 40) || m_size + padding < k_large_page) {
      return ByteSource::read_all_padded(padding);
    }
    const auto length = static_cast<size_t>(m_size);
    const size_t used = (length + padding + k_large_page - 1) / k_large_page * k_large_page;
    const size_t span = used + k_large_page; // room to align the start
    void* area = ::mmap(nullptr, span, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    if (area == MAP_FAILED) {
      return ByteSource::read_all_padded(padding);
    }
    std::shared_ptr<char> owner(static_cast<char*>(area), [span](char* p) { ::munmap(p, span); });
    const auto aligned =
      (reinterpret_cast<uintptr_t>(area) + k_large_page - 1) & ~uintptr_t{k_large_page - 1};
    char* const begin = reinterpret_cast<char*>(aligned);
    ::madvise(begin, used, MADV_HUGEPAGE); // advice: may be refused
    if (auto read = read_at(0, std::span<char>(begin, length)); !read) {
      return unexpected(read.error());
    }
    return PaddedBytes{std::string_view(begin, length), std::shared_ptr<const void>(owner, begin)};
  }

  int m_fd;
  uint64_t m_size;
  std::string m_path;
  bool m_map_whole;
};

class StringSource final : public ByteSource
{
public:
  // Views `data`, kept alive by `owner` (or by the caller when `owner` is null).
  StringSource(std::string_view data, std::shared_ptr<const void> owner, std::string path)
    : m_data(data), m_owner(std::move(owner)), m_path(std::move(path))
  {
  }
  uint64_t size() const override { return m_data.size(); }
  Expected<void> read_at(uint64_t offset, std::span<char> out) const override
  {
    if (offset > m_data.size() || out.size() > m_data.size() - offset) {
      return unexpected(fmt::format("{}: file ended at byte {} while reading {} bytes at {}",
                                    m_path, m_data.size(), out.size(), offset));
    }
    std::memcpy(out.data(), m_data.data() + offset, out.size());
    return {};
  }

private:
  std::string_view m_data;
  std::shared_ptr<const void> m_owner;
  std::string m_path;
};

FileKind
kind_of(mode_t mode)
{
  if (S_ISREG(mode)) {
    return FileKind::regular;
  }
  if (S_ISDIR(mode)) {
    return FileKind::directory;
  }
  return FileKind::special;
}

// What stat() reports of a path that resolves to `st` (is_symlink aside).
void
describe_stat(const struct stat& st, FileInfo& info)
{
  info.kind = kind_of(st.st_mode);
  info.size = info.kind == FileKind::regular ? static_cast<uint64_t>(st.st_size) : 0;
  info.mode = static_cast<uint32_t>(st.st_mode & 07777);
}

} // namespace

FileInfo
DiskFileSystem::stat(const std::string& path) const
{
  FileInfo info;
  struct stat link_st
  {};
  if (::lstat(path.c_str(), &link_st) != 0) {
    return info; // missing
  }
  info.is_symlink = S_ISLNK(link_st.st_mode);
  struct stat st
  {};
  if (::stat(path.c_str(), &st) != 0) {
    info.kind = info.is_symlink ? FileKind::broken_link : FileKind::missing;
    return info;
  }
  describe_stat(st, info);
  return info;
}

Expected<std::unique_ptr<ByteSource>>
DiskFileSystem::open(const std::string& path) const
{
  FileInfo unused;
  return open_file(path, false, unused);
}

Expected<std::unique_ptr<ByteSource>>
DiskFileSystem::open_described(const std::string& path, FileInfo& info) const
{
  return open_file(path, true, info);
}

Expected<std::unique_ptr<ByteSource>>
DiskFileSystem::open_file(const std::string& path, bool describe, FileInfo& info) const
{
  info = FileInfo{};
  // O_NONBLOCK: a FIFO swapped in after a stat() must not block the open. To describe the path,
  // O_NOFOLLOW first: a path that is not a link opens at once and is known not to be one; a link
  // (a shard in a hub cache's blob store) refuses with ELOOP and opens on the second try.
  constexpr int k_flags = O_RDONLY | O_CLOEXEC | O_NONBLOCK;
  int fd = ::open(path.c_str(), k_flags | (describe ? O_NOFOLLOW : 0));
  if (fd < 0 && describe && errno == ELOOP) {
    info.is_symlink = true;
    fd = ::open(path.c_str(), k_flags);
  }
  if (fd < 0) {
    const int err = errno;
    info = stat(path);
    if (info.kind == FileKind::broken_link) {
      return unexpected(fmt::format("{}: is a {}", path,
                                    err == ELOOP ? "symbolic link that loops (or a chain of more "
                                                   "than 40 links)"
                                                 : "dangling symbolic link"));
    }
    return unexpected(fmt::format("{}: cannot open: {}", path, std::strerror(err)));
  }
  struct stat st
  {};
  if (::fstat(fd, &st) != 0) {
    const int err = errno;
    ::close(fd);
    info = stat(path);
    return unexpected(fmt::format("{}: cannot stat: {}", path, std::strerror(err)));
  }
  describe_stat(st, info);
  if (!S_ISREG(st.st_mode)) {
    ::close(fd);
    return unexpected(fmt::format("{}: is a {}, not a regular file", path, to_string(info.kind)));
  }
  return std::unique_ptr<ByteSource>(std::make_unique<FdSource>(
    fd, static_cast<uint64_t>(st.st_size), path, m_options.map_whole_files));
}

Expected<std::vector<std::string>>
DiskFileSystem::list_dir(const std::string& path) const
{
  DIR* dir = ::opendir(path.c_str());
  if (dir == nullptr) {
    return unexpected(fmt::format("{}: cannot list directory: {}", path, std::strerror(errno)));
  }
  std::vector<std::string> names;
  while (const dirent* entry = ::readdir(dir)) {
    std::string name = entry->d_name;
    if (name != "." && name != "..") {
      names.push_back(std::move(name));
    }
  }
  ::closedir(dir);
  std::sort(names.begin(), names.end());
  return names;
}

void
MemoryFileSystem::add_file(const std::string& path, std::string contents)
{
  m_files[path] = std::make_shared<const std::string>(std::move(contents));
}

void
MemoryFileSystem::add_directory(const std::string& path)
{
  m_other[path] = FileKind::directory;
}

void
MemoryFileSystem::add_special(const std::string& path, FileKind kind)
{
  m_other[path] = kind;
}

FileInfo
MemoryFileSystem::stat(const std::string& path) const
{
  FileInfo info;
  if (auto it = m_files.find(path); it != m_files.end()) {
    info.kind = FileKind::regular;
    info.size = it->second->size();
    info.mode = 0644;
    return info;
  }
  if (auto it = m_other.find(path); it != m_other.end()) {
    info.kind = it->second;
    info.is_symlink = it->second == FileKind::broken_link;
    return info;
  }
  const std::string prefix = path.empty() ? "" : path + "/";
  auto it = m_files.lower_bound(prefix);
  if (it != m_files.end() && it->first.compare(0, prefix.size(), prefix) == 0) {
    info.kind = FileKind::directory;
  }
  return info;
}

Expected<std::unique_ptr<ByteSource>>
MemoryFileSystem::open(const std::string& path) const
{
  if (auto it = m_files.find(path); it != m_files.end()) {
    return std::unique_ptr<ByteSource>(
      std::make_unique<StringSource>(*it->second, it->second, path));
  }
  const FileInfo info = stat(path);
  switch (info.kind) {
  case FileKind::missing:
    return unexpected(fmt::format("{}: cannot open: No such file or directory", path));
  case FileKind::broken_link:
    return unexpected(fmt::format("{}: is a dangling symbolic link", path));
  default:
    return unexpected(fmt::format("{}: is a {}, not a regular file", path, to_string(info.kind)));
  }
}

Expected<std::vector<std::string>>
MemoryFileSystem::list_dir(const std::string& path) const
{
  if (stat(path).kind != FileKind::directory) {
    return unexpected(fmt::format("{}: cannot list directory: Not a directory", path));
  }
  const std::string prefix = path.empty() ? "" : path + "/";
  std::vector<std::string> names;
  auto add_child = [&](const std::string& full) {
    if (full.compare(0, prefix.size(), prefix) != 0 || full.size() == prefix.size()) {
      return;
    }
    std::string rest = full.substr(prefix.size());
    names.push_back(rest.substr(0, rest.find('/')));
  };
  for (const auto& [name, _] : m_files) {
    add_child(name);
  }
  for (const auto& [name, _] : m_other) {
    add_child(name);
  }
  std::sort(names.begin(), names.end());
  names.erase(std::unique(names.begin(), names.end()), names.end());
  return names;
}

void
OverlayFileSystem::set(const std::string& path, std::string_view contents)
{
  m_overrides[path] = contents;
}

FileInfo
OverlayFileSystem::stat(const std::string& path) const
{
  FileInfo info = m_base.stat(path);
  if (auto it = m_overrides.find(path); it != m_overrides.end()) {
    info.kind = FileKind::regular;
    info.size = it->second.size();
  }
  return info;
}

Expected<std::unique_ptr<ByteSource>>
OverlayFileSystem::open(const std::string& path) const
{
  if (auto it = m_overrides.find(path); it != m_overrides.end()) {
    return std::unique_ptr<ByteSource>(std::make_unique<StringSource>(it->second, nullptr, path));
  }
  return m_base.open(path);
}

Expected<std::vector<std::string>>
OverlayFileSystem::list_dir(const std::string& path) const
{
  return m_base.list_dir(path);
}

const char*
mapped_file_at(const void* address) noexcept
{
  const auto at = reinterpret_cast<uintptr_t>(address);
  for (const MappedSlot& slot : g_mapped) {
    const uint32_t version = slot.version.load();
    const uintptr_t begin = slot.begin.load();
    const uintptr_t end = slot.end.load();
    const char* path = slot.path.load();
    if (version % 2 == 0 && slot.version.load() == version && begin > 1 && at >= begin &&
        at < end) {
      return path;
    }
  }
  return nullptr;
}

} // namespace qcheck
