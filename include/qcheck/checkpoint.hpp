// Checkpoint discovery: what a loader would load from a model folder. Reads the index and every
// shard header (in parallel), then cross-checks them. Problems are data; load_checkpoint fails
// only when the folder itself cannot be read.
#pragma once

#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "qcheck/expected.hpp"
#include "qcheck/input.hpp"
#include "qcheck/safetensors.hpp"

namespace qcheck {

inline constexpr const char* k_index_name = "model.safetensors.index.json";
inline constexpr uint64_t k_max_index_size = 256ull << 20;

struct ShardFile
{
  std::string file; // path relative to the model folder
  FileInfo info;
  bool in_index = false; // the index names this file (a loader with an index skips others)
  bool header_read = false;
  Header header;
};

enum class CheckpointIssue
{
  no_weights,           // no *.safetensors and no index
  index_unreadable,     // index file not JSON / no weight_map
  index_path_escapes,   // a weight_map path is absolute or leaves the folder
  index_missing_file,   // the index names a file that is not there
  index_missing_tensor, // the index maps a tensor to a shard that does not hold it
  unindexed_tensors,    // an indexed shard holds tensors the index does not name
  unindexed_shard,      // a *.safetensors file the index does not name at all
  duplicate_tensor,     // one tensor name in two shards
  shard_not_regular,    // a *.safetensors that is a directory, FIFO, dangling link...
  shard_unreadable,     // I/O error or unusable header
  header_problem,       // a HeaderProblem of one shard (see header_issue)
};

struct CheckpointProblem
{
  CheckpointIssue issue;
  bool is_warning = false;
  std::string file;    // relative path of the file concerned
  std::string tensor;  // tensor concerned, if any
  std::string message; // one line, without the file name
  std::optional<HeaderIssue> header_issue;
};

// An allocator that leaves the elements a resize adds unwritten (T must be an implicit-lifetime
// type, such as a trivially copyable struct): arrays that several threads fill are not first
// zero-filled, and faulted in, page by page by one thread.
template<typename T>
struct UnwrittenAllocator : std::allocator<T>
{
  template<typename U>
  struct rebind
  {
    using other = UnwrittenAllocator<U>;
  };
  UnwrittenAllocator() = default;
  template<typename U>
  UnwrittenAllocator(const UnwrittenAllocator<U>&) noexcept
  {
  }
  template<typename U>
  void construct(U*) noexcept
  {
  }
  template<typename U, typename... Args>
  void construct(U* p, Args&&... args)
  {
    ::new (static_cast<void*>(p)) U(std::forward<Args>(args)...);
  }
};

// One tensor of the checkpoint as a loader sees it: 8 bytes, a million of them in the largest
// checkpoints. Its shard is the one whose header holds the entry (Checkpoint::shard_index).
struct Tensor
{
  const TensorInfo* info = nullptr; // owned by one of Checkpoint::shards' headers
};

struct Checkpoint
{
  std::string root;
  bool has_index = false;
  std::vector<ShardFile> shards;
  // One per name, sorted by name; the index's pick on duplicates.
  std::vector<Tensor, UnwrittenAllocator<Tensor>> tensors;
  std::vector<CheckpointProblem> problems;

  // The index into `shards` of the shard whose header holds `tensor`'s entry: a binary search
  // among the shards' tables. Valid once index_shards() ran (load_checkpoint() runs it).
  uint32_t shard_index(const Tensor& tensor) const;
  const std::string& shard_of(const Tensor& tensor) const
  {
    return shards[shard_index(tensor)].file;
  }
  // Whether shards[shard]'s header holds `tensor`'s entry.
  bool holds(uint32_t shard, const Tensor& tensor) const;
  // Notes where each shard's tensor table lies, for shard_index(); call again after a shard's
  // header changes.
  void index_shards();

private:
  // Each non-empty table's first entry's address and its shard, by address.
  std::vector<std::pair<uintptr_t, uint32_t>> m_tables;
};

struct LoadOptions
{
  unsigned threads = 0; // 0: one per core
  // Called once with the model folder, while the index and the shard headers are read:
  // independent work (reading the configuration) overlaps the reading. It runs on whichever
  // loading thread is free first (the calling thread or another), beside the index's reading.
  std::function<void(const std::string& root)> alongside{};
};

// An index is read this many bytes at a time, into one of two buffers. Any member of up to 1/16
// of it (64 KiB) fits; a longer one has the index read whole.
inline constexpr size_t k_index_window = size_t{1} << 20;
// An index written as json.dumps(indent=2) writes it is compared with the tensors this many
// bytes at a time, by each of up to two threads. An entry longer has the index read whole.
inline constexpr size_t k_indented_window = size_t{64} << 10;

// Loads a model folder, or a single *.safetensors file. Fails only when `path` is neither.
Expected<Checkpoint> load_checkpoint(const FileSystem& fs, const std::string& path,
                                     const LoadOptions& options = {});

// True when a weight_map path stays inside the folder (relative, no "..", no empty part).
bool is_contained_path(std::string_view path);
// Why is_contained_path() refuses `path` ("an absolute path", ...); empty when it does not.
std::string_view uncontained_reason(std::string_view path);

} // namespace qcheck
