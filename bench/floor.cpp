// qcheck-bench-floor: the least work any header linter must do, as a baseline for qcheck. Lists
// DIR/*.safetensors and, one thread per core, preads each shard's 8-byte length and JSON header
// and parses it with simdjson's DOM parser, counting tensors. No validation, no grouping, no
// matching, no index or config.
//
// Usage: qcheck-bench-floor DIR
// Prints "files tensors header_bytes" (header_bytes excludes the 8-byte length prefixes).
#include <algorithm>
#include <atomic>
#include <cerrno>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <dirent.h>
#include <fcntl.h>
#include <simdjson.h>
#include <string>
#include <string_view>
#include <thread>
#include <unistd.h>
#include <vector>

namespace {

constexpr uint64_t k_max_header = 100ull << 20; // the safetensors limit
constexpr std::string_view k_suffix = ".safetensors";

struct Totals
{
  std::atomic<uint64_t> tensors{0};
  std::atomic<uint64_t> header_bytes{0};
  std::atomic<bool> failed{false};
};

bool
read_exact(int fd, char* out, size_t size, uint64_t offset)
{
  size_t done = 0;
  while (done < size) {
    const ssize_t n = ::pread(fd, out + done, size - done, static_cast<off_t>(offset + done));
    if (n < 0 && errno == EINTR) {
      continue;
    }
    if (n <= 0) {
      return false;
    }
    done += static_cast<size_t>(n);
  }
  return true;
}

bool
fail(const std::string& path, const char* what)
{
  std::fprintf(stderr, "qcheck-bench-floor: %s: %s\n", path.c_str(), what);
  return false;
}

// Reads and parses one shard's header; adds its tensor count and header length to the totals.
bool
scan_shard(const std::string& path, Totals& totals)
{
  thread_local simdjson::dom::parser parser;
  const int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) {
    return fail(path, std::strerror(errno));
  }
  unsigned char prefix[8];
  bool ok = read_exact(fd, reinterpret_cast<char*>(prefix), sizeof prefix, 0);
  uint64_t length = 0;
  for (int i = 7; i >= 0; --i) {
    length = (length << 8) | prefix[i];
  }
  if (!ok || length < 2 || length > k_max_header) {
    ::close(fd);
    return fail(path, "bad header length");
  }
  simdjson::padded_string header(static_cast<size_t>(length));
  ok = read_exact(fd, header.data(), header.size(), sizeof prefix);
  ::close(fd);
  if (!ok) {
    return fail(path, "short read");
  }
  simdjson::dom::object object;
  if (parser.parse(header).get_object().get(object)) {
    return fail(path, "header is not a JSON object");
  }
  uint64_t count = 0;
  for (auto field : object) {
    count += field.key != "__metadata__";
  }
  totals.tensors += count;
  totals.header_bytes += length;
  return true;
}

std::vector<std::string>
list_shards(const std::string& dir)
{
  std::vector<std::string> paths;
  DIR* handle = ::opendir(dir.c_str());
  if (handle == nullptr) {
    return paths;
  }
  while (const dirent* entry = ::readdir(handle)) {
    const std::string_view name = entry->d_name;
    if (name.size() > k_suffix.size() && name.ends_with(k_suffix)) {
      paths.push_back(dir + "/" + std::string(name));
    }
  }
  ::closedir(handle);
  return paths;
}

} // namespace

int
main(int argc, char** argv)
{
  if (argc != 2) {
    std::fprintf(stderr, "usage: qcheck-bench-floor DIR\n");
    return 2;
  }
  const std::vector<std::string> paths = list_shards(argv[1]);
  if (paths.empty()) {
    std::fprintf(stderr, "qcheck-bench-floor: %s: no *.safetensors files\n", argv[1]);
    return 2;
  }
  Totals totals;
  std::atomic<size_t> next{0};
  auto worker = [&] {
    for (size_t i = next++; i < paths.size(); i = next++) {
      if (!scan_shard(paths[i], totals)) {
        totals.failed = true;
      }
    }
  };
  const unsigned cores = std::max(1u, std::thread::hardware_concurrency());
  const unsigned count = std::min<unsigned>(cores, static_cast<unsigned>(paths.size()));
  std::vector<std::thread> pool;
  for (unsigned i = 1; i < count; ++i) {
    pool.emplace_back(worker);
  }
  worker();
  for (auto& thread : pool) {
    thread.join();
  }
  std::printf("%zu %llu %llu\n", paths.size(), static_cast<unsigned long long>(totals.tensors),
              static_cast<unsigned long long>(totals.header_bytes));
  return totals.failed ? 1 : 0;
}
