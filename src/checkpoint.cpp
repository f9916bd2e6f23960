#include "qcheck/checkpoint.hpp"

#include <algorithm>
#include <atomic>
#include <fmt/format.h>
#include <map>
#include <set>
#include <simdjson.h>
#include <thread>
#include <unordered_map>

namespace qcheck {

namespace {

bool
ends_with(std::string_view text, std::string_view suffix)
{
  return text.size() >= suffix.size() && text.substr(text.size() - suffix.size()) == suffix;
}

// weight_map as a sorted vector: tensor -> shard path (paths interned in `files`).
class WeightMap
{
public:
  using Entry = std::pair<std::string, std::string_view>;

  void add(std::string_view tensor, std::string_view file)
  {
    m_entries.emplace_back(std::string(tensor), *m_files.emplace(file).first);
  }
  // Sorts; on a repeated tensor the last occurrence wins, as in Python's json.
  void seal()
  {
    std::stable_sort(m_entries.begin(), m_entries.end(),
                     [](const Entry& a, const Entry& b) { return a.first < b.first; });
    std::vector<Entry> unique;
    unique.reserve(m_entries.size());
    for (auto& e : m_entries) {
      if (!unique.empty() && unique.back().first == e.first) {
        unique.back() = std::move(e);
      } else {
        unique.push_back(std::move(e));
      }
    }
    m_entries = std::move(unique);
  }
  std::vector<Entry>::const_iterator begin() const { return m_entries.begin(); }
  std::vector<Entry>::const_iterator end() const { return m_entries.end(); }
  std::vector<Entry>::const_iterator find(std::string_view tensor) const
  {
    auto it = std::lower_bound(m_entries.begin(), m_entries.end(), tensor,
                               [](const Entry& e, std::string_view t) { return e.first < t; });
    return it != m_entries.end() && it->first == tensor ? it : m_entries.end();
  }
  bool contains(std::string_view tensor) const { return find(tensor) != end(); }

private:
  std::set<std::string, std::less<>> m_files;
  std::vector<Entry> m_entries;
};

struct IndexData
{
  std::string file;
  WeightMap weight_map;
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
    // The index can list 10^6 tensors: simdjson's DOM, one pass, no tree of std::maps.
    thread_local simdjson::dom::parser parser;
    simdjson::dom::element root;
    if (parser.parse(simdjson::padded_string(*text)).get(root)) {
      problem(CheckpointIssue::index_unreadable, index_name, "", "not valid JSON");
      return index;
    }
    simdjson::dom::object weight_map;
    if (root["weight_map"].get_object().get(weight_map)) {
      problem(CheckpointIssue::index_unreadable, index_name, "", "has no 'weight_map' object");
      return index;
    }
    for (auto field : weight_map) {
      const std::string_view tensor = field.key;
      std::string_view path;
      if (field.value.get_string().get(path)) {
        problem(CheckpointIssue::index_unreadable, index_name, std::string(tensor),
                fmt::format("weight_map entry '{}' is not a string", tensor));
        continue;
      }
      if (!is_contained_path(path)) {
        problem(CheckpointIssue::index_path_escapes, index_name, std::string(tensor),
                fmt::format("weight_map sends '{}' to '{}', a path outside the model folder; "
                            "refused",
                            tensor, path));
        continue;
      }
      index.weight_map.add(tensor, path);
    }
    index.weight_map.seal();
    return index;
  }

  void run(const std::vector<std::string>& names, unsigned threads)
  {
    std::optional<IndexData> index = read_index(names);
    std::map<std::string, size_t, std::less<>> by_file;
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
        add_shard(std::string(file), true);
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
    std::map<std::string, size_t, std::less<>> index_counts;
    if (index) {
      for (const auto& [tensor, file] : index->weight_map) {
        ++index_counts[std::string(file)];
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

  // One sort of every tensor by name, then merge walks against the sorted weight_map: no hash
  // table, no per-tensor lookups.
  void collect_tensors(const std::optional<IndexData>& index,
                       const std::map<std::string, size_t, std::less<>>& by_file)
  {
    size_t total = 0;
    for (const auto& shard : m_out.shards) {
      total += shard.header.tensors.size();
    }
    std::vector<Tensor> all;
    all.reserve(total);
    for (uint32_t s = 0; s < m_out.shards.size(); ++s) {
      const ShardFile& shard = m_out.shards[s];
      for (const auto& hp : shard.header.problems) {
        m_out.problems.push_back({hp.issue == HeaderIssue::read_failed
                                    ? CheckpointIssue::shard_unreadable
                                    : CheckpointIssue::header_problem,
                                  hp.is_warning, shard.file, hp.tensor, hp.message, hp.issue});
      }
      for (const TensorInfo& info : shard.header.tensors) {
        all.push_back({&info, s});
      }
    }
    std::sort(all.begin(), all.end(), [](const Tensor& a, const Tensor& b) {
      const int c = a.info->name.compare(b.info->name);
      return c != 0 ? c < 0 : a.shard < b.shard;
    });

    // Tensors of indexed shards that the index does not name, per shard.
    std::vector<size_t> unnamed(m_out.shards.size(), 0);
    std::vector<std::string_view> first_unnamed(m_out.shards.size());
    const WeightMap no_index;
    const WeightMap& weight_map = index ? index->weight_map : no_index;
    auto wm = weight_map.begin();
    const auto wm_end = weight_map.end();

    m_out.tensors.reserve(all.size());
    for (size_t i = 0; i < all.size();) {
      size_t j = i + 1;
      while (j < all.size() && all[j].info->name == all[i].info->name) {
        ++j;
      }
      const std::string& name = all[i].info->name;
      while (wm != wm_end && wm->first < name) {
        ++wm;
      }
      const bool named = wm != wm_end && wm->first == name;
      size_t pick = i;
      if (named) {
        for (size_t k = i; k < j; ++k) {
          if (m_out.shards[all[k].shard].file == wm->second) {
            pick = k;
          }
        }
      }
      for (size_t k = i + 1; k < j; ++k) {
        problem(CheckpointIssue::duplicate_tensor, m_out.shards[all[k].shard].file, name,
                fmt::format("tensor '{}' is stored in both {} and {}; the loader uses {}", name,
                            m_out.shards[all[i].shard].file, m_out.shards[all[k].shard].file,
                            m_out.shards[all[pick].shard].file));
      }
      for (size_t k = i; k < j && index; ++k) {
        const uint32_t s = all[k].shard;
        if (m_out.shards[s].in_index && !named && unnamed[s]++ == 0) {
          first_unnamed[s] = name;
        }
      }
      m_out.tensors.push_back(all[pick]);
      i = j;
    }
    for (size_t s = 0; s < m_out.shards.size(); ++s) {
      if (unnamed[s] > 0) {
        problem(CheckpointIssue::unindexed_tensors, m_out.shards[s].file,
                std::string(first_unnamed[s]),
                fmt::format("holds {} tensor{} the index does not name (first: '{}')", unnamed[s],
                            unnamed[s] == 1 ? "" : "s", first_unnamed[s]));
      }
    }
    if (!index) {
      return;
    }
    auto t = m_out.tensors.begin();
    for (const auto& [tensor, file] : index->weight_map) {
      while (t != m_out.tensors.end() && t->info->name < tensor) {
        ++t;
      }
      const ShardFile& shard = m_out.shards[by_file.find(file)->second];
      if (!shard.header_read) {
        continue; // already reported: missing, not regular or unreadable
      }
      const bool found = t != m_out.tensors.end() && t->info->name == tensor;
      if (!found || m_out.shard_of(*t) != file) {
        problem(CheckpointIssue::index_missing_tensor, index->file, tensor,
                found ? fmt::format("maps '{}' to {}, which does not hold it (it is in {})",
                                    tensor, file, m_out.shard_of(*t))
                      : fmt::format("maps '{}' to {}, which does not hold it", tensor, file));
      }
    }
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
