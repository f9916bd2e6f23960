#include "qcheck/checkpoint.hpp"

#include <algorithm>
#include <atomic>
#include <fmt/format.h>
#include <map>
#include <nlohmann/json.hpp>
#include <thread>
#include <unordered_map>

namespace qcheck {

namespace {

bool
ends_with(std::string_view text, std::string_view suffix)
{
  return text.size() >= suffix.size() && text.substr(text.size() - suffix.size()) == suffix;
}

struct IndexData
{
  std::string file;
  std::map<std::string, std::string> weight_map; // tensor -> shard path
};

void
read_shards(const FileSystem& fs, const std::string& root, std::vector<ShardFile>& shards,
            unsigned threads)
{
  std::atomic<size_t> next{0};
  auto worker = [&] {
    for (size_t i = next++; i < shards.size(); i = next++) {
      ShardFile& shard = shards[i];
      if (shard.info.kind != FileKind::regular) {
        continue;
      }
      auto source = fs.open(join_path(root, shard.file));
      if (!source) {
        shard.header.problems.push_back({HeaderIssue::read_failed, false, "", source.error()});
        continue;
      }
      shard.header = read_header(**source);
      shard.header_read = shard.header.readable;
    }
  };
  const unsigned count =
    std::max(1u, std::min<unsigned>(threads, static_cast<unsigned>(shards.size())));
  std::vector<std::thread> pool;
  for (unsigned i = 1; i < count; ++i) {
    pool.emplace_back(worker);
  }
  worker();
  for (auto& t : pool) {
    t.join();
  }
}

class Loader
{
public:
  Loader(const FileSystem& fs, Checkpoint& out) : m_fs(fs), m_out(out) {}

  void problem(CheckpointIssue issue, std::string file, std::string tensor, std::string message,
               bool is_warning = false)
  {
    m_out.problems.push_back(
      {issue, is_warning, std::move(file), std::move(tensor), std::move(message), std::nullopt});
  }

  std::optional<IndexData> read_index(const std::vector<std::string>& names)
  {
    std::string index_name;
    if (std::find(names.begin(), names.end(), k_index_name) != names.end()) {
      index_name = k_index_name;
    } else {
      for (const auto& name : names) {
        if (ends_with(name, ".safetensors.index.json")) {
          index_name = name;
          break;
        }
      }
    }
    if (index_name.empty()) {
      return std::nullopt;
    }
    m_out.has_index = true;
    IndexData index;
    index.file = index_name;
    auto text = m_fs.read_file(join_path(m_out.root, index_name), k_max_index_size);
    if (!text) {
      problem(CheckpointIssue::index_unreadable, index_name, "", text.error());
      return index;
    }
    auto json = nlohmann::json::parse(*text, nullptr, false);
    if (json.is_discarded()) {
      problem(CheckpointIssue::index_unreadable, index_name, "", "not valid JSON");
      return index;
    }
    if (!json.is_object() || !json.contains("weight_map") || !json["weight_map"].is_object()) {
      problem(CheckpointIssue::index_unreadable, index_name, "", "has no 'weight_map' object");
      return index;
    }
    for (const auto& [tensor, file] : json["weight_map"].items()) {
      if (!file.is_string()) {
        problem(CheckpointIssue::index_unreadable, index_name, tensor,
                fmt::format("weight_map entry '{}' is not a string", tensor));
        continue;
      }
      const auto& path = file.get_ref<const std::string&>();
      if (!is_contained_path(path)) {
        problem(CheckpointIssue::index_path_escapes, index_name, tensor,
                fmt::format("weight_map sends '{}' to '{}', a path outside the model folder; "
                            "refused",
                            tensor, path));
        continue;
      }
      index.weight_map.emplace(tensor, path);
    }
    return index;
  }

  void run(const std::vector<std::string>& names, unsigned threads)
  {
    std::optional<IndexData> index = read_index(names);
    std::map<std::string, size_t> by_file;
    auto add_shard = [&](const std::string& file, bool in_index) {
      auto [it, inserted] = by_file.emplace(file, m_out.shards.size());
      if (inserted) {
        ShardFile shard;
        shard.file = file;
        shard.info = m_fs.stat(join_path(m_out.root, file));
        m_out.shards.push_back(std::move(shard));
      }
      m_out.shards[it->second].in_index |= in_index;
    };
    if (index) {
      for (const auto& [tensor, file] : index->weight_map) {
        add_shard(file, true);
      }
    }
    for (const auto& name : names) {
      if (ends_with(name, ".safetensors")) {
        add_shard(name, false);
      }
    }
    if (m_out.shards.empty() && !index) {
      problem(CheckpointIssue::no_weights, "", "",
              "no *.safetensors files and no model.safetensors.index.json");
      return;
    }
    std::sort(m_out.shards.begin(), m_out.shards.end(),
              [](const ShardFile& a, const ShardFile& b) { return a.file < b.file; });
    for (size_t i = 0; i < m_out.shards.size(); ++i) {
      by_file[m_out.shards[i].file] = i;
    }
    check_shard_files(index);
    read_shards(m_fs, m_out.root, m_out.shards, threads);
    collect_tensors(index, by_file);
  }

private:
  void check_shard_files(const std::optional<IndexData>& index)
  {
    std::map<std::string, size_t> index_counts;
    if (index) {
      for (const auto& [tensor, file] : index->weight_map) {
        ++index_counts[file];
      }
    }
    for (const ShardFile& shard : m_out.shards) {
      switch (shard.info.kind) {
      case FileKind::regular:
        break;
      case FileKind::missing:
        problem(CheckpointIssue::index_missing_file, shard.file, "",
                fmt::format("named by {} for {} tensors, but the file does not exist",
                            index ? index->file : k_index_name, index_counts[shard.file]));
        break;
      default:
        problem(CheckpointIssue::shard_not_regular, shard.file, "",
                fmt::format("is a {}, not a regular file; not read", to_string(shard.info.kind)));
        break;
      }
      if (index && !shard.in_index && shard.info.kind == FileKind::regular) {
        problem(CheckpointIssue::unindexed_shard, shard.file, "",
                fmt::format("is not named in {}; vLLM and SGLang load only the files the index "
                            "names, so its tensors are never loaded",
                            index->file));
      }
    }
  }

  void collect_tensors(const std::optional<IndexData>& index,
                       const std::map<std::string, size_t>& by_file)
  {
    std::unordered_map<std::string_view, Tensor> chosen;
    size_t total = 0;
    for (const auto& shard : m_out.shards) {
      total += shard.header.tensors.size();
    }
    chosen.reserve(total);
    for (uint32_t s = 0; s < m_out.shards.size(); ++s) {
      ShardFile& shard = m_out.shards[s];
      for (auto& hp : shard.header.problems) {
        m_out.problems.push_back({hp.issue == HeaderIssue::read_failed
                                    ? CheckpointIssue::shard_unreadable
                                    : CheckpointIssue::header_problem,
                                  hp.is_warning, shard.file, hp.tensor, hp.message, hp.issue});
      }
      size_t unnamed = 0;
      std::string first_unnamed;
      for (const TensorInfo& info : shard.header.tensors) {
        const Tensor tensor{&info, s};
        auto [it, inserted] = chosen.emplace(info.name, tensor);
        if (!inserted) {
          const std::string& other = m_out.shards[it->second.shard].file;
          std::string pick = other;
          if (index) {
            if (auto w = index->weight_map.find(info.name); w != index->weight_map.end()) {
              pick = w->second;
              if (pick == shard.file) {
                it->second = tensor;
              }
            }
          }
          problem(CheckpointIssue::duplicate_tensor, shard.file, info.name,
                  fmt::format("tensor '{}' is stored in both {} and {}; the loader uses {}",
                              info.name, other, shard.file, pick));
        }
        if (index && shard.in_index && !index->weight_map.contains(info.name)) {
          if (unnamed++ == 0) {
            first_unnamed = info.name;
          }
        }
      }
      if (unnamed > 0) {
        problem(CheckpointIssue::unindexed_tensors, shard.file, first_unnamed,
                fmt::format("holds {} tensor{} the index does not name (first: '{}')", unnamed,
                            unnamed == 1 ? "" : "s", first_unnamed));
      }
    }
    if (index) {
      for (const auto& [tensor, file] : index->weight_map) {
        const auto it = by_file.find(file);
        const ShardFile& shard = m_out.shards[it->second];
        if (!shard.header_read) {
          continue; // already reported: missing, not regular or unreadable
        }
        auto found = chosen.find(tensor);
        if (found == chosen.end() || m_out.shards[found->second.shard].file != file) {
          const bool elsewhere = found != chosen.end();
          problem(CheckpointIssue::index_missing_tensor, index->file, tensor,
                  elsewhere ? fmt::format("maps '{}' to {}, which does not hold it (it is in {})",
                                          tensor, file, m_out.shard_of(found->second))
                            : fmt::format("maps '{}' to {}, which does not hold it", tensor,
                                          file));
        }
      }
    }
    m_out.tensors.reserve(chosen.size());
    for (const auto& [name, tensor] : chosen) {
      m_out.tensors.push_back(tensor);
    }
    std::sort(m_out.tensors.begin(), m_out.tensors.end(), [](const Tensor& a, const Tensor& b) {
      return a.info->name < b.info->name;
    });
  }

  const FileSystem& m_fs;
  Checkpoint& m_out;
};

} // namespace

bool
is_contained_path(std::string_view path)
{
  if (path.empty() || path.front() == '/' || path.find('\\') != std::string_view::npos ||
      path.find('\0') != std::string_view::npos) {
    return false;
  }
  size_t start = 0;
  while (start <= path.size()) {
    size_t end = path.find('/', start);
    if (end == std::string_view::npos) {
      end = path.size();
    }
    const std::string_view part = path.substr(start, end - start);
    if (part.empty() || part == "..") {
      return false;
    }
    start = end + 1;
  }
  return true;
}

Expected<Checkpoint>
load_checkpoint(const FileSystem& fs, const std::string& path, const LoadOptions& options)
{
  Checkpoint checkpoint;
  const FileInfo info = fs.stat(path);
  const unsigned threads =
    options.threads != 0 ? options.threads : std::max(1u, std::thread::hardware_concurrency());
  if (info.kind == FileKind::regular && ends_with(path, ".safetensors")) {
    // A single shard: read it alone, with no index and no sibling files.
    const size_t slash = path.rfind('/');
    checkpoint.root = slash == std::string::npos ? "." : path.substr(0, slash);
    Loader(fs, checkpoint).run({path.substr(slash == std::string::npos ? 0 : slash + 1)}, 1);
    return checkpoint;
  }
  if (info.kind != FileKind::directory) {
    if (info.kind == FileKind::missing) {
      return unexpected(fmt::format("{}: no such file or directory", path));
    }
    return unexpected(fmt::format("{}: is a {}, not a model folder or .safetensors file", path,
                                  to_string(info.kind)));
  }
  auto names = fs.list_dir(path);
  if (!names) {
    return unexpected(names.error());
  }
  checkpoint.root = path;
  Loader(fs, checkpoint).run(*names, threads);
  return checkpoint;
}

} // namespace qcheck
