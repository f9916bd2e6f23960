#include "cli_output.hpp"

#include <cerrno>
#include <cstdio>
#include <cstring>
#include <fcntl.h>
#include <filesystem>
#include <fmt/format.h>
#include <sys/stat.h>
#include <unistd.h>

#include "qcheck/fix.hpp"

namespace qcheck::cli {

namespace {

std::string
cannot_write(const std::string& path, int err)
{
  return fmt::format("{}: cannot write: {}", path, std::strerror(err));
}

bool
is_file_of(const struct stat& st, int fd)
{
  struct stat other
  {};
  return ::fstat(fd, &other) == 0 && other.st_dev == st.st_dev && other.st_ino == st.st_ino;
}

std::string_view
kind_of(mode_t mode)
{
  if (S_ISDIR(mode)) {
    return "directory";
  }
  if (S_ISFIFO(mode)) {
    return "FIFO";
  }
  if (S_ISSOCK(mode)) {
    return "socket";
  }
  if (S_ISBLK(mode)) {
    return "block device";
  }
  return "special file";
}

// Permission bits of a new file: what fopen() would give it.
uint32_t
new_file_mode()
{
  const mode_t mask = ::umask(0);
  ::umask(mask);
  return 0666u & ~static_cast<uint32_t>(mask);
}

Expected<void>
replace_atomically(const std::string& target, std::string_view text, uint32_t mode)
{
  DiskFileWriter writer;
  auto temp = writer.write_temp(target, text, mode); // removes its file when it fails
  if (!temp) {
    return unexpected(temp.error());
  }
  if (auto renamed = writer.rename(*temp, target); !renamed) {
    writer.remove(*temp);
    return unexpected(renamed.error());
  }
  return {};
}

Expected<void>
write_in_place(const std::string& path, std::string_view text)
{
  const int fd = ::open(path.c_str(), O_WRONLY | O_NOCTTY | O_CLOEXEC);
  if (fd < 0) {
    return unexpected(cannot_write(path, errno));
  }
  for (size_t done = 0; done < text.size();) {
    const ssize_t n = ::write(fd, text.data() + done, text.size() - done);
    if (n < 0 && errno == EINTR) {
      continue;
    }
    if (n < 0) {
      const int err = errno;
      ::close(fd);
      return unexpected(cannot_write(path, err));
    }
    done += static_cast<size_t>(n);
  }
  if (::close(fd) != 0) {
    return unexpected(cannot_write(path, errno));
  }
  return {};
}

} // namespace

Expected<void>
write_output_file(const std::string& path, std::string_view text)
{
  struct stat st
  {};
  if (::stat(path.c_str(), &st) != 0) {
    const int err = errno;
    struct stat link
    {};
    if (err == ENOENT && ::lstat(path.c_str(), &link) == 0) {
      return unexpected(fmt::format("{}: is a dangling symbolic link; not written", path));
    }
    if (err != ENOENT) {
      return unexpected(cannot_write(path, err));
    }
    return replace_atomically(path, text, new_file_mode());
  }
  if (is_file_of(st, STDOUT_FILENO)) {
    if (std::fwrite(text.data(), 1, text.size(), stdout) != text.size() ||
        std::fflush(stdout) != 0) {
      return unexpected(cannot_write(path, errno));
    }
    return {};
  }
  if (S_ISCHR(st.st_mode)) {
    return write_in_place(path, text);
  }
  if (!S_ISREG(st.st_mode)) {
    return unexpected(
      fmt::format("{}: is a {}, not a regular file; not written", path, kind_of(st.st_mode)));
  }
  if (::access(path.c_str(), W_OK) != 0) {
    return unexpected(cannot_write(path, errno));
  }
  // Through a link, the file it leads to is replaced; the link stays.
  std::string target = path;
  struct stat link
  {};
  if (::lstat(path.c_str(), &link) == 0 && S_ISLNK(link.st_mode)) {
    std::error_code error;
    target = std::filesystem::canonical(path, error).string();
    if (error) {
      return unexpected(cannot_write(path, error.value()));
    }
  }
  return replace_atomically(target, text, st.st_mode & 07777);
}

} // namespace qcheck::cli
