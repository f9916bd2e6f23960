#include "qcheck/checkpoint.hpp"

#include <algorithm>
#include <atomic>
#include <cassert>
#include <cstring>
#include <deque>
#include <fmt/format.h>
#include <functional>
#include <memory>
#include <unordered_map>

#include "qcheck/index_json.hpp"
#include "qcheck/parallel.hpp"
#include "qcheck/text_hash.hpp"

namespace qcheck {

namespace {

bool
ends_with(std::string_view text, std::string_view suffix)
{
  return text.size() >= suffix.size() && text.substr(text.size() - suffix.size()) == suffix;
}

// A contained path (is_contained_path) without its "." components: "./a/./b" names "a/b".
std::string
without_dot_parts(std::string_view path)
{
  if (path != "." && !path.starts_with("./") && path.find("/./") == std::string_view::npos &&
      !path.ends_with("/.")) {
    return std::string(path);
  }
  std::string out;
  size_t start = 0;
  while (start <= path.size()) {
    size_t end = path.find('/', start);
    if (end == std::string_view::npos) {
      end = path.size();
    }
    if (const std::string_view part = path.substr(start, end - start); part != ".") {
      out += out.empty() ? "" : "/";
      out += part;
    }
    start = end + 1;
  }
  return out.empty() ? std::string(path) : out; // "." is left to name the folder
}

// weight_map, in one of two forms. Named (add()): a vector sorted by tensor name, names viewing
// the parser's strings. Hashed (add_hashed()): no entry kept, only the entries' count, a digest
// of their names in order and the runs of entries naming one file, for an index to be compared
// with the sorted tensors as a whole. Paths are interned either way (the index repeats each path
// thousands of times).
class WeightMap
{
public:
  // 16 bytes: the index names every tensor. Names are shorter than the index (k_max_index_size).
  struct Entry
  {
    const char* name = nullptr;
    uint32_t size = 0;
    uint32_t file = 0; // into files()
    std::string_view tensor() const { return {name, size}; }
  };
  // Hashed entries [first, next run's first) name files()[file].
  struct FileRun
  {
    size_t first;
    uint32_t file;
  };

  void reserve(size_t entries) { m_entries.reserve(entries); }
  // `same_file`: the file is the one of the entry added last (entries mostly come in runs of
  // one file). `tensor` must stay valid through the next call and, for add(), while the map is
  // used.
  void add(std::string_view tensor, std::string_view file, bool same_file)
  {
    push(tensor, file, same_file).name = tensor.data();
  }
  // Counts the entry and adds its name (hashed under `key`) to the digest at its position; keeps
  // nothing of the name. Not to be mixed with add().
  void add_hashed(std::string_view tensor, uint64_t key, std::string_view file, bool same_file)
  {
    m_hashed = true;
    note_order(tensor);
    const uint32_t f = file_id(file, same_file);
    if (m_runs.empty() || m_runs.back().file != f) {
      m_runs.push_back({m_hashed_count, f});
    }
    m_digest += digest_of(keyed_hash(tensor, key), m_hashed_count);
    ++m_hashed_count;
  }
  // What an entry whose name hashed to `hash` adds to the digest at `position`: a sum of these
  // tells apart two sequences of names (a swap, a name for another) about as well as a random
  // 64-bit number.
  static uint64_t digest_of(uint64_t hash, size_t position)
  {
    uint64_t x = hash + (position + 1) * 0x9E3779B97F4A7C15ull;
    x = (x ^ (x >> 30)) * 0xBF58476D1CE4E5B9ull;
    x = (x ^ (x >> 27)) * 0x94D049BB133111EBull;
    return x ^ (x >> 31);
  }
  bool hashed() const { return m_hashed; }
  // Each tensor added sorts after the one before.
  bool increasing() const { return m_increasing; }
  // Entries added, in either form.
  size_t size() const { return m_hashed ? m_hashed_count : m_entries.size(); }
  // Hashed: the sum of digest_of() over the entries.
  uint64_t digest() const { return m_digest; }
  // Hashed: the runs of entries naming one file, in entry order.
  const std::vector<FileRun>& runs() const { return m_runs; }

  // Sorts; on a repeated tensor the last occurrence wins, as in Python's json. Hashed entries
  // must be increasing already.
  void seal()
  {
    const auto by_name = [](const Entry& a, const Entry& b) { return a.tensor() < b.tensor(); };
    if (m_increasing) {
      return; // strictly increasing already: what every writer produces
    }
    assert(!m_hashed);
    std::stable_sort(m_entries.begin(), m_entries.end(), by_name);
    std::vector<Entry> unique;
    unique.reserve(m_entries.size());
    for (const auto& e : m_entries) {
      if (!unique.empty() && unique.back().tensor() == e.tensor()) {
        unique.back() = e;
      } else {
        unique.push_back(e);
      }
    }
    m_entries = std::move(unique);
    m_counts.assign(m_files.size(), 0);
    for (const auto& e : m_entries) {
      ++m_counts[e.file];
    }
  }
  const std::vector<Entry>& entries() const { return m_entries; }
  const std::vector<std::string>& files() const { return m_files; }
  // Entries per file, by files() index (after seal(): the entries kept).
  const std::vector<size_t>& counts() const { return m_counts; }

private:
  Entry& push(std::string_view tensor, std::string_view file, bool same_file)
  {
    note_order(tensor);
    const uint32_t f = file_id(file, same_file);
    m_entries.push_back({});
    Entry& e = m_entries.back();
    e.size = static_cast<uint32_t>(tensor.size());
    e.file = f;
    return e;
  }

  // `tensor` must stay valid through the next call.
  void note_order(std::string_view tensor)
  {
    m_increasing = m_increasing && (size() == 0 || m_last_tensor < tensor);
    m_last_tensor = tensor;
  }

  // The index of `file` in files() (the last one's when `same_file`), counting one more entry.
  uint32_t file_id(std::string_view file, bool same_file)
  {
    assert(!same_file || !m_files.empty());
    if (!same_file) {
      // By hash: an index can name thousands of files.
      if (const auto it = m_by_file.find(file); it != m_by_file.end()) {
        m_last_file = it->second;
      } else {
        m_last_file = static_cast<uint32_t>(m_files.size());
        m_by_file.emplace(std::string(file), m_last_file);
        m_files.emplace_back(file);
        m_counts.push_back(0);
      }
    }
    ++m_counts[m_last_file];
    return m_last_file;
  }

  struct TextHash
  {
    using is_transparent = void;
    size_t operator()(std::string_view text) const { return std::hash<std::string_view>{}(text); }
  };
  std::vector<std::string> m_files;
  std::unordered_map<std::string, uint32_t, TextHash, std::equal_to<>>
    m_by_file; // file as add() was given it
  std::vector<size_t> m_counts;
  uint32_t m_last_file = 0;
  std::vector<Entry> m_entries;
  std::string_view m_last_tensor;
  bool m_increasing = true; // each tensor added sorts after the one before
  bool m_hashed = false;
  size_t m_hashed_count = 0;
  uint64_t m_digest = 0;
  std::vector<FileRun> m_runs;
};

struct IndexData
{
  std::string file;
  // Written as json.dumps(indent=2) writes it: its entries are compared as text with the
  // tensors' (Loader::match_indented) and read otherwise only when they differ. `source` stays
  // open till then.
  std::optional<IndentedEntries> indented;
  std::unique_ptr<ByteSource> source;
  bool matched = false; // the entries are the tensors', one each, with their shards' files
  PaddedBytes text;     // the index, when read whole; weight_map views its names
  std::deque<std::string> decoded; // names and paths that held escapes, viewed likewise
  uint64_t key = 0;                // of weight_map's hashes, while it has them
  WeightMap weight_map;
  bool readable = true; // false: unreadable, not JSON, or no weight_map (reported)
};

// Reads the header of every regular shard in `shards[first..]`, `threads` at a time, the calling
// thread included. Each of `before` is taken, in order, by the first thread free, ahead of any
// shard: the index and the configuration, each long for a long file, run side by side and
// beside the shards, never one after the other on one thread while another idles.
void
read_shards(const FileSystem& fs, const std::string& root, std::vector<ShardFile>& shards,
            size_t first, unsigned threads, std::span<const std::function<void()>> before = {})
{
  std::atomic<size_t> next{0};
  Workers workers;
  const size_t jobs = before.size() + (shards.size() > first ? shards.size() - first : 0);
  auto worker = [&] {
    for (size_t job = next++; job < jobs && !workers.failed(); job = next++) {
      if (job < before.size()) {
        before[job]();
        continue;
      }
      ShardFile& shard = shards[first + job - before.size()];
      const std::string path = join_path(root, shard.file);
      auto source = fs.open_described(path, shard.info);
      if (!source) {
        if (shard.info.kind == FileKind::regular) { // else reported by its kind
          shard.header.problems.push_back({HeaderIssue::read_failed, false, "", source.error()});
        }
        continue;
      }
      shard.header = read_header(**source, true, false);
      shard.header_read = shard.header.readable;
    }
  };
  const auto helpers = static_cast<unsigned>(std::min<size_t>(std::max(1u, threads) - 1, jobs));
  for (unsigned i = 0; i < helpers; ++i) {
    if (!workers.start(worker)) {
      break; // no thread to be had: the calling thread does the rest
    }
  }
  workers.run(worker);
  workers.join();
}

// A sorted run of tensors: what is left of one shard's.
struct Run
{
  const TensorInfo* next;
  const TensorInfo* end;
  uint32_t shard;
};

// Runs merged into out[0 .. their total), sorted by (name, shard). Runs usually hold long
// stretches of consecutive names, so each stretch is found by galloping and copied whole: close
// to linear in practice, n log(runs) comparisons at worst. Each stretch [first, last) of one
// run is also given, in order, to stretch(first, last, shard).
template<typename Stretch>
void
merge_runs(std::vector<Run> heap, Tensor* out, const Stretch& stretch)
{
  std::erase_if(heap, [](const Run& r) { return r.next == r.end; });
  // `a` sorts after `b`: a min-heap on (head name, shard).
  const auto after = [](const Run& a, const Run& b) {
    const int c = a.next->name().compare(b.next->name());
    return c != 0 ? c > 0 : a.shard > b.shard;
  };
  std::make_heap(heap.begin(), heap.end(), after);
  while (!heap.empty()) {
    std::pop_heap(heap.begin(), heap.end(), after);
    Run& run = heap.back();
    const TensorInfo* stop = run.end;
    if (heap.size() > 1) {
      const Run& rival = heap.front();
      const auto before_rival = [&](const TensorInfo& t) {
        const int c = t.name().compare(rival.next->name());
        return c < 0 || (c == 0 && run.shard < rival.shard);
      };
      // The first tensor of `run` not before the rival's head: gallop, then bisect. The head
      // itself is before it.
      const size_t n = static_cast<size_t>(run.end - run.next);
      size_t low = 1, high = 1;
      while (high < n && before_rival(run.next[high])) {
        low = high + 1;
        high = std::min(n, high * 2);
      }
      stop = std::partition_point(run.next + low, run.next + std::max(low, high), before_rival);
    }
    for (const TensorInfo* t = run.next; t != stop; ++t) {
      *out++ = {t};
    }
    stretch(run.next, stop, run.shard);
    run.next = stop;
    if (run.next == run.end) {
      heap.pop_back();
    } else {
      std::push_heap(heap.begin(), heap.end(), after);
    }
  }
}

// Every shard's tensors as runs, cut in two at one name for two threads (`before` holds the
// tensors named before it, `from` the rest): each name's tensors stay on one side. The name is
// the median of the runs' middle names, which halves a checkpoint whose shards hold ranges of
// names of similar sizes. Only checkpoints of `split_from` tensors or more are cut; `from` is
// empty otherwise.
struct MergePlan
{
  std::vector<Run> before;
  std::vector<Run> from;
  std::string_view pivot; // the first name of `from`
  size_t before_total = 0;
  size_t total = 0;
};

MergePlan
plan_merge(const std::vector<ShardFile>& shards, size_t split_from)
{
  MergePlan plan;
  for (uint32_t s = 0; s < shards.size(); ++s) {
    const auto& tensors = shards[s].header.tensors;
    if (!tensors.empty()) {
      plan.before.push_back({tensors.data(), tensors.data() + tensors.size(), s});
      plan.total += tensors.size();
    }
  }
  plan.before_total = plan.total;
  if (plan.total < split_from || plan.before.size() < 2) {
    return plan;
  }
  std::vector<std::string_view> middles;
  for (const Run& r : plan.before) {
    middles.push_back(r.next[(r.end - r.next) / 2].name());
  }
  const auto median = middles.begin() + static_cast<std::ptrdiff_t>(middles.size() / 2);
  std::nth_element(middles.begin(), median, middles.end());
  const std::string_view pivot = *median;
  plan.pivot = pivot;
  plan.before_total = 0;
  for (Run& r : plan.before) {
    const TensorInfo* cut =
      std::partition_point(r.next, r.end, [&](const TensorInfo& t) { return t.name() < pivot; });
    plan.from.push_back({cut, r.end, r.shard});
    r.end = cut;
    plan.before_total += static_cast<size_t>(cut - r.next);
  }
  return plan;
}

class Loader
{
public:
  Loader(const FileSystem& fs, Checkpoint& out,
         const std::function<void(const std::string&)>& alongside)
    : m_fs(fs), m_out(out), m_alongside(alongside)
  {
  }

  void problem(CheckpointIssue issue, std::string file, std::string tensor, std::string message,
               bool is_warning = false)
  {
    m_out.problems.push_back(
      {issue, is_warning, std::move(file), std::move(tensor), std::move(message), std::nullopt});
  }

  static std::string index_name(const std::vector<std::string>& names)
  {
    if (std::find(names.begin(), names.end(), k_index_name) != names.end()) {
      return k_index_name;
    }
    for (const auto& name : names) {
      if (ends_with(name, ".safetensors.index.json")) {
        return name;
      }
    }
    return "";
  }

  // Problems found while reading are kept aside: the index is read beside the shards, and its
  // problems come first in the report, as when it was read alone.
  IndexData read_index(const std::string& index_name, std::vector<CheckpointProblem>& problems)
  {
    IndexData index;
    index.file = index_name;
    auto source = m_fs.open_at_most(join_path(m_out.root, index_name), k_max_index_size);
    if (!source) {
      index.readable = false;
      problems.push_back(
        {CheckpointIssue::index_unreadable, false, index_name, "", source.error(), std::nullopt});
      return index;
    }
    const TextReader read = [&](uint64_t offset, std::span<char> out) {
      return (*source)->read_at(offset, out).has_value();
    };
    index.indented = find_indented_entries((*source)->size(), read);
    if (index.indented) {
      index.source = std::move(*source);
      return index; // compared once the shards are read
    }
    read_by_entries(**source, index, problems);
    return index;
  }

  void read_by_entries(const ByteSource& bytes, IndexData& index,
                       std::vector<CheckpointProblem>& problems) const
  {
    if (!stream_index(bytes, index)) {
      read_whole_index(bytes, index, problems);
    }
  }

  enum class Match
  {
    same,          // the index names each tensor once, in the shard that holds it, and no other
    differs,       // the text is not what it would be then
    not_comparable // a name or file name that would need escapes: nothing compared
  };

  // For an index of IndentedEntries: merges the shards' tensors into m_out.tensors, comparing
  // the entries each name would have (its shard's file as the value) with the index's, in name
  // order. Unless `same`, the tensors are to be merged again.
  Match match_indented(const IndexData& index, unsigned threads)
  {
    std::vector<std::string> values(m_out.shards.size());
    for (size_t s = 0; s < m_out.shards.size(); ++s) {
      const Header& header = m_out.shards[s].header;
      if (header.tensors.empty()) {
        continue;
      }
      auto value = indented_value(m_out.shards[s].file);
      if (!header.plain_names || !value) {
        return Match::not_comparable;
      }
      values[s] = std::move(*value);
    }
    const MergePlan plan = plan_merge(m_out.shards, threads > 1 ? k_parallel_tensors : SIZE_MAX);
    auto& all = m_out.tensors;
    all.resize(plan.total);
    const bool halves = !plan.from.empty();
    const TextReader read = [&](uint64_t offset, std::span<char> out) {
      return index.source->read_at(offset, out).has_value();
    };
    const IndentedEntries entries = *index.indented;
    const size_t count = halves ? 2 : 1;
    bool matched[2] = {false, false};
    uint64_t begins[2] = {entries.begin, 0};
    uint64_t last_end = 0; // where the last half's entries ended
    const auto half = [&](size_t h) {
      if (h == 1) {
        // After the first half's entries: a comma but before the first, a newline, four
        // spaces, the name in quotes and the value.
        uint64_t first_half = 0;
        for (const Run& r : plan.before) {
          for (const TensorInfo* t = r.next; t != r.end; ++t) {
            first_half += t->name().size();
          }
          first_half += static_cast<uint64_t>(r.end - r.next) * (values[r.shard].size() + 7);
        }
        begins[1] = entries.begin + (plan.before_total > 0 ? first_half - 1 : 0);
      }
      const auto buffer = std::make_unique_for_overwrite<char[]>(k_indented_window);
      IndentedEntryMatcher matcher(read, begins[h], entries.end, h == 0 || plan.before_total == 0,
                                   {buffer.get(), k_indented_window});
      std::string_view last; // the name matched last
      bool same = true;
      const auto stretch = [&](const TensorInfo* first, const TensorInfo* stop, uint32_t shard) {
        // Names repeat only across shards, each shard's being distinct.
        same = same && first->name() != last;
        const std::string& value = values[shard];
        for (const TensorInfo* t = first; same && t != stop; ++t) {
          same = matcher.next(t->name(), value);
        }
        last = (stop - 1)->name();
      };
      merge_runs(h == 0 ? plan.before : plan.from, all.data() + (h == 0 ? 0 : plan.before_total),
                 stretch);
      matched[h] = same;
      if (h + 1 == count) {
        last_end = matcher.offset();
      }
    };
    in_slices(count, count, [&](size_t h, size_t, size_t) { half(h); });
    // The first half's entries end where the second's begin, by how that was found.
    return matched[0] && (!halves || matched[1]) && last_end == entries.end ? Match::same
                                                                            : Match::differs;
  }

  // The index a window at a time, its names kept only in a digest: the text is never held
  // whole, and the names, about half its bytes, are neither copied nor stored; collect_tensors()
  // compares the digest with the sorted tensors' names. False, `index` to be read whole, unless
  // the text is JSON whose weight_map is strictly increasing with no entry to report.
  bool stream_index(const ByteSource& bytes, IndexData& index) const
  {
    index.key = random_key();
    bool usable = true;
    std::optional<std::string_view> last_path; // of the entry before
    const auto member = [&](std::string_view tensor, const std::string_view* path) {
      if (!usable || path == nullptr) {
        usable = false; // reported by the whole-text reader
        return;
      }
      const bool same_file = same_path(last_path, *path);
      if (!same_file && !is_contained_path(*path)) {
        usable = false;
        return;
      }
      index.weight_map.add_hashed(tensor, index.key, *path, same_file);
      last_path = *path;
    };
    const auto restart = [&] {
      index.weight_map = WeightMap();
      usable = true;
      last_path.reset();
    };
    const TextReader read = [&](uint64_t offset, std::span<char> out) {
      return bytes.read_at(offset, out).has_value();
    };
    std::optional<WeightMapScan> scan =
      stream_weight_map(bytes.size(), read, k_index_window, member, restart);
    if (!scan || scan->status != WeightMapScan::Status::ok || !usable ||
        !index.weight_map.increasing()) {
      index.weight_map = WeightMap();
      return false;
    }
    return true;
  }

  // Paths repeat: one equal to the last accepted is not checked again. The reader hands out a
  // path spelled as the one before as that same view.
  static bool same_path(const std::optional<std::string_view>& last, std::string_view path)
  {
    return last && ((path.data() == last->data() && path.size() == last->size()) || path == *last);
  }

  // A real entry (a dotted name, a shard file name, quotes) takes 40 bytes or more: reserving
  // for that many touches only the memory the entries fill; a denser index grows.
  static size_t expected_entries(const ByteSource& bytes)
  {
    return static_cast<size_t>(bytes.size() / 40);
  }

  // The index held whole, its names viewed in the text.
  void read_whole_index(const ByteSource& bytes, IndexData& index,
                        std::vector<CheckpointProblem>& problems) const
  {
    index.weight_map = WeightMap();
    index.key = 0;
    const auto fail = [&](std::string message) {
      index.readable = false;
      problems.push_back({CheckpointIssue::index_unreadable, false, index.file, "",
                          std::move(message), std::nullopt});
    };
    // Mapped, not copied, where the file system can: the index can be tens of MB.
    auto text = bytes.read_all_padded(0);
    if (!text) {
      fail(text.error());
      return;
    }
    index.text = std::move(*text);
    index.weight_map.reserve(expected_entries(bytes));
    // Problems wait until the whole text is known to be JSON.
    std::vector<CheckpointProblem> entry_problems;
    std::optional<std::string_view> last_path; // of the entry added last
    const auto member = [&](std::string_view tensor, const std::string_view* path) {
      const auto entry_problem = [&](std::string message, CheckpointIssue issue) {
        entry_problems.push_back(
          {issue, false, index.file, std::string(tensor), std::move(message), std::nullopt});
      };
      if (path == nullptr) {
        entry_problem(fmt::format("weight_map entry '{}' is not a string", tensor),
                      CheckpointIssue::index_unreadable);
        return;
      }
      const bool same_file = same_path(last_path, *path);
      if (!same_file && !is_contained_path(*path)) {
        entry_problem(fmt::format("weight_map sends '{}' to '{}', {}; refused", tensor, *path,
                                  uncontained_reason(*path)),
                      CheckpointIssue::index_path_escapes);
        return;
      }
      index.weight_map.add(tensor, *path, same_file);
      last_path = *path;
    };
    const auto restart = [&] {
      index.weight_map = WeightMap();
      index.weight_map.reserve(expected_entries(bytes));
      entry_problems.clear();
      last_path.reset();
    };
    WeightMapScan scan = scan_weight_map(index.text.bytes, member, restart);
    if (scan.status == WeightMapScan::Status::invalid_json) {
      index.weight_map = WeightMap();
      fail("not valid JSON");
      return;
    }
    if (scan.status == WeightMapScan::Status::no_weight_map) {
      fail("has no 'weight_map' object");
      return;
    }
    index.decoded = std::move(scan.decoded);
    problems.insert(problems.end(), entry_problems.begin(), entry_problems.end());
    index.weight_map.seal();
  }

  void run(const std::vector<std::string>& names, unsigned threads)
  {
    // The shards the folder lists are read while the index is parsed; shards only the index
    // names (in a subfolder, or missing) are looked at afterwards.
    for (const auto& name : names) {
      if (ends_with(name, ".safetensors")) {
        m_out.shards.push_back({name, {}, false, false, {}});
      }
    }
    const std::string index_file = index_name(names);
    std::optional<IndexData> index;
    std::vector<CheckpointProblem> index_problems;
    const auto read_the_index = [&] {
      if (!index_file.empty()) {
        index = read_index(index_file, index_problems);
      }
    };
    const auto read_alongside = [&] {
      if (m_alongside) {
        m_alongside(m_out.root);
      }
    };
    const std::array<std::function<void()>, 2> beside{read_the_index, read_alongside};
    read_shards(m_fs, m_out.root, m_out.shards, 0, threads, beside);
    if (index && index->indented) {
      // Text that differs names other tensors or files (a spelling of its own is rare): the
      // whole text is needed to tell which.
      const Match match = match_indented(*index, threads);
      index->matched = match == Match::same;
      if (!index->matched) {
        m_out.tensors.clear();
      }
      if (match == Match::differs) {
        read_whole_index(*index->source, *index, index_problems);
      } else if (match == Match::not_comparable) {
        read_by_entries(*index->source, *index, index_problems);
      }
      index->source.reset();
    }
    // An index no loader can read is reported; the shards are then judged as without one
    // (not each "missing from the index", nor draft layers "in files the index does not name").
    if (index && !index->readable) {
      index.reset();
    }
    m_out.has_index = index.has_value();
    m_out.problems.insert(m_out.problems.begin(), index_problems.begin(), index_problems.end());

    std::unordered_map<std::string_view, size_t> by_name;
    for (size_t i = 0; i < m_out.shards.size(); ++i) {
      by_name.emplace(m_out.shards[i].file, i);
    }
    const size_t listed = m_out.shards.size();
    // The index's files as the shards are named: one shard per file however the index spells
    // it ("./x", "x").
    std::vector<std::string> index_files;
    if (index) {
      for (const std::string& spelled : index->weight_map.files()) {
        index_files.push_back(without_dot_parts(spelled));
      }
    }
    for (ShardFile& shard : m_out.shards) {
      shard.in_index = index && index->matched && !shard.header.tensors.empty();
    }
    std::vector<std::string> index_only;
    for (size_t f = 0; f < index_files.size(); ++f) {
      const std::string& file = index_files[f];
      if (index->weight_map.counts()[f] == 0) {
        continue; // named only by entries a later copy of the same tensor replaced
      }
      if (auto it = by_name.find(file); it != by_name.end()) {
        m_out.shards[it->second].in_index = true;
      } else {
        index_only.push_back(file);
      }
    }
    std::sort(index_only.begin(), index_only.end());
    index_only.erase(std::unique(index_only.begin(), index_only.end()), index_only.end());
    // Appended only now: by_name views the names of the shards already listed.
    for (auto& file : index_only) {
      m_out.shards.push_back({std::move(file), {}, true, false, {}});
    }
    if (m_out.shards.empty() && index_file.empty()) {
      problem(CheckpointIssue::no_weights, "", "",
              "no *.safetensors files and no model.safetensors.index.json");
      return;
    }
    read_shards(m_fs, m_out.root, m_out.shards, listed, threads);
    std::sort(m_out.shards.begin(), m_out.shards.end(),
              [](const ShardFile& a, const ShardFile& b) { return a.file < b.file; });
    // Index file id -> shard.
    std::vector<uint32_t> shard_of_file;
    for (const std::string& file : index_files) {
      const auto it =
        std::lower_bound(m_out.shards.begin(), m_out.shards.end(), file,
                         [](const ShardFile& s, const std::string& f) { return s.file < f; });
      shard_of_file.push_back(static_cast<uint32_t>(it - m_out.shards.begin()));
    }
    check_shard_files(index, shard_of_file);
    collect_tensors(index, shard_of_file, threads);
  }

private:
  void check_shard_files(const std::optional<IndexData>& index,
                         const std::vector<uint32_t>& shard_of_file)
  {
    std::vector<size_t> index_counts(m_out.shards.size(), 0);
    size_t missing_files = 0;
    if (index) {
      for (size_t f = 0; f < shard_of_file.size(); ++f) {
        if (const size_t count = index->weight_map.counts()[f]; count > 0) {
          index_counts[shard_of_file[f]] += count; // a file no entry names may have no shard
        }
      }
    }
    for (size_t s = 0; s < m_out.shards.size(); ++s) {
      const ShardFile& shard = m_out.shards[s];
      switch (shard.info.kind) {
      case FileKind::regular:
        break;
      case FileKind::missing:
        if (!shard.in_index) { // only the folder's listing names it
          problem(CheckpointIssue::shard_unreadable, shard.file, "",
                  "is in the folder's listing but cannot be examined (removed meanwhile, or no "
                  "permission to search the folder); not read");
          break;
        }
        if (++missing_files > k_listed_problems) {
          break; // counted below
        }
        problem(CheckpointIssue::index_missing_file, shard.file, "",
                fmt::format("named by {} for {} tensor{}, but the file does not exist",
                            index ? index->file : k_index_name, index_counts[s],
                            index_counts[s] == 1 ? "" : "s"));
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
    if (missing_files > k_listed_problems) {
      problem(CheckpointIssue::index_missing_file, index ? index->file : k_index_name, "",
              fmt::format("names {} more files that do not exist (the first {} are listed)",
                          missing_files - k_listed_problems, k_listed_problems));
    }
  }

  // What one walk over a stretch of the merged tensors and the index entries finds.
  struct Walk
  {
    size_t tensors = 0;                        // written: one per name, the index's pick
    std::vector<CheckpointProblem> duplicates; // in name order
    std::vector<CheckpointProblem> missing;    // index_missing_tensor, in entry order
    size_t duplicates_more = 0;                // past k_listed_problems: counted only
    size_t missing_more = 0;
    std::vector<size_t> unnamed;                 // per shard: tensors the index does not name
    std::vector<std::string_view> first_unnamed; // per shard
  };

  // Walks tensors all[begin, end) (sorted by name, whole runs of one name) beside the index
  // entries [wm, wm_end) that sort before the next stretch: one merge join. Compacts the range
  // in place: one tensor per name, the index's pick, from `begin` on (a run is read before its
  // pick is written, at or before where the run started).
  Walk walk(decltype(Checkpoint::tensors)& all, size_t begin, size_t end,
            const std::optional<IndexData>& index, const std::vector<uint32_t>& shard_of_file,
            std::vector<WeightMap::Entry>::const_iterator wm,
            std::vector<WeightMap::Entry>::const_iterator wm_end) const
  {
    Walk out;
    out.unnamed.assign(m_out.shards.size(), 0);
    out.first_unnamed.resize(m_out.shards.size());
    Tensor* const picked = all.data() + begin;
    const auto missing = [&](const WeightMap::Entry& e, const Tensor* found) {
      check_entry(out, *index, shard_of_file, e.tensor(), e.file, found);
    };
    for (size_t i = begin; i < end;) {
      const std::string_view name = all[i].info->name();
      size_t j = i + 1;
      while (j < end && all[j].info->name() == name) {
        ++j;
      }
      // An attached entry views the very name it was checked against: no bytes to compare.
      const auto order = [&](const WeightMap::Entry& e) {
        return e.name == name.data() && e.size == name.size() ? 0 : e.tensor().compare(name);
      };
      int c = -1;
      while (wm != wm_end && (c = order(*wm)) < 0) {
        missing(*wm, nullptr);
        ++wm;
      }
      const bool named = wm != wm_end && c == 0;
      size_t pick = i;
      if (named) {
        for (size_t k = i; k < j; ++k) {
          if (m_out.holds(shard_of_file[wm->file], all[k])) {
            pick = k;
          }
        }
      }
      for (size_t k = i + 1; k < j; ++k) {
        if (out.duplicates.size() == k_listed_problems) {
          out.duplicates_more += j - k;
          break;
        }
        out.duplicates.push_back(
          {CheckpointIssue::duplicate_tensor, false, m_out.shard_of(all[k]), std::string(name),
           fmt::format("tensor '{}' is stored in both {} and {}; the loader uses {}", name,
                       m_out.shard_of(all[i]), m_out.shard_of(all[k]), m_out.shard_of(all[pick])),
           std::nullopt});
      }
      for (size_t k = i; k < j && index && !named; ++k) {
        const uint32_t s = m_out.shard_index(all[k]);
        if (m_out.shards[s].in_index && out.unnamed[s]++ == 0) {
          out.first_unnamed[s] = name;
        }
      }
      picked[out.tensors] = all[pick];
      if (named) {
        missing(*wm, &picked[out.tensors]);
        ++wm;
      }
      ++out.tensors;
      i = j;
    }
    for (; wm != wm_end; ++wm) {
      missing(*wm, nullptr);
    }
    return out;
  }

  // Reports the index's entry for `tensor`, sending it to files()[file], unless the tensor it
  // names (`found`, or none) is there. Asked of every tensor: the report is out of line.
  void check_entry(Walk& out, const IndexData& index, const std::vector<uint32_t>& shard_of_file,
                   std::string_view tensor, uint32_t file, const Tensor* found) const
  {
    const uint32_t s = shard_of_file[file];
    // A missing, irregular or unreadable shard is reported already.
    if (m_out.shards[s].header_read && (found == nullptr || !m_out.holds(s, *found))) {
      report_entry(out, index, tensor, file, found);
    }
  }

  [[gnu::cold, gnu::noinline]] void report_entry(Walk& out, const IndexData& index,
                                                 std::string_view tensor, uint32_t file,
                                                 const Tensor* found) const
  {
    if (out.missing.size() == k_listed_problems) {
      ++out.missing_more;
      return;
    }
    const std::string& path = index.weight_map.files()[file];
    out.missing.push_back(
      {CheckpointIssue::index_missing_tensor, false, index.file, std::string(tensor),
       found ? fmt::format("maps '{}' to {}, which does not hold it (it is in {})", tensor, path,
                           m_out.shard_of(*found))
             : fmt::format("maps '{}' to {}, which does not hold it", tensor, path),
       std::nullopt});
  }

  // walk() for a hashed index taken to name tensors all[begin, end) one each, in order: each is
  // checked against the file its entry names, nothing is compacted, and `digest` is the range's
  // part of the index's digest were that so.
  Walk walk_hashed(const decltype(Checkpoint::tensors)& all, size_t begin, size_t end,
                   const IndexData& index, const std::vector<uint32_t>& shard_of_file,
                   uint64_t& digest) const
  {
    Walk out;
    out.tensors = end - begin;
    out.unnamed.assign(m_out.shards.size(), 0);
    out.first_unnamed.resize(m_out.shards.size());
    const auto& runs = index.weight_map.runs();
    auto run = std::upper_bound(runs.begin(), runs.end(), begin,
                                [](size_t k, const WeightMap::FileRun& r) { return k < r.first; });
    if (run == runs.begin()) {
      return out; // no entries: no tensors either
    }
    --run;
    // Summed here, stored once: the two halves' sums share a cache line.
    uint64_t sum = 0;
    for (size_t k = begin; k < end; ++k) {
      while (run + 1 != runs.end() && (run + 1)->first <= k) {
        ++run;
      }
      const std::string_view name = all[k].info->name();
      check_entry(out, index, shard_of_file, name, run->file, &all[k]);
      sum += WeightMap::digest_of(keyed_hash(name, index.key), k);
    }
    digest += sum;
    return out;
  }

  // A hashed weight_map whose names are not the shards' cannot say which differ: the index is
  // read again, whole. If it now reads otherwise (it changed meanwhile), that is reported and the
  // tensors are not joined with it.
  void reread_index(std::optional<IndexData>& index)
  {
    std::vector<CheckpointProblem> problems;
    IndexData whole;
    whole.file = index->file;
    auto source = m_fs.open_at_most(join_path(m_out.root, index->file), k_max_index_size);
    if (source) {
      read_whole_index(**source, whole, problems);
    }
    if (source && whole.readable && problems.empty() &&
        whole.weight_map.files() == index->weight_map.files() &&
        whole.weight_map.counts() == index->weight_map.counts()) {
      *index = std::move(whole);
      return;
    }
    problem(CheckpointIssue::index_unreadable, index->file, "",
            "changed while it was read; its entries are not compared with the shards");
    index.reset();
  }

  // Every shard's tensors come sorted from the reader: a merge orders them all, then a merge
  // join against the sorted weight_map; for large checkpoints both in two halves of the names
  // side by side. No hash table, no per-tensor lookups.
  void collect_tensors(std::optional<IndexData>& index, const std::vector<uint32_t>& shard_of_file,
                       unsigned threads)
  {
    m_out.index_shards(); // the shards' tables are final
    for (const ShardFile& shard : m_out.shards) {
      for (const auto& hp : shard.header.problems) {
        m_out.problems.push_back({hp.issue == HeaderIssue::read_failed
                                    ? CheckpointIssue::shard_unreadable
                                    : CheckpointIssue::header_problem,
                                  hp.is_warning, shard.file, hp.tensor, hp.message, hp.issue});
      }
    }
    if (index && index->matched) {
      return; // merged already, and nothing to report
    }
    // Each half of the names is merged, then walked, on its own thread; the second half's
    // index entries are those from its first name on.
    const MergePlan plan = plan_merge(m_out.shards, threads > 1 ? k_parallel_tensors : SIZE_MAX);
    auto& all = m_out.tensors;
    all.resize(plan.total);                 // unwritten: the merges fill it
    const bool halves = !plan.from.empty(); // it holds the pivot's tensors at least
    const size_t mid = halves ? plan.before_total : plan.total;
    // A hashed index names the shards' tensors when it holds one entry per tensor, in the same
    // order: the digest of the tensors' names, each half's part taken as it merges, equals the
    // index's. Any other index is read again whole, and joined by name.
    if (index && index->weight_map.hashed() && index->weight_map.size() != plan.total) {
      reread_index(index);
    }
    bool hashed = index && index->weight_map.hashed();
    static const std::vector<WeightMap::Entry> no_entries;
    using EntryIt = std::vector<WeightMap::Entry>::const_iterator;
    EntryIt entry_begin, entry_mid, entry_end;
    const auto split_entries = [&] {
      const auto& entries = index ? index->weight_map.entries() : no_entries;
      entry_begin = entries.begin();
      entry_end = entries.end();
      entry_mid = !halves ? entry_end
                          : std::lower_bound(entry_begin, entry_end, plan.pivot,
                                             [](const WeightMap::Entry& e, std::string_view n) {
                                               return e.tensor() < n;
                                             });
    };
    split_entries();
    // Each half compacts its own range; the second's picks then move up to follow the first's.
    Walk walks[2];
    uint64_t digests[2] = {0, 0};
    // Half h: merged (on the first pass), walked: against a hashed index, as if it named each
    // tensor in turn (kept only if the digests agree).
    const auto half = [&](size_t h, bool merge) {
      const size_t begin = h == 0 ? 0 : mid;
      const size_t end = h == 0 ? mid : all.size();
      if (merge) {
        merge_runs(h == 0 ? plan.before : plan.from, all.data() + begin,
                   [](const TensorInfo*, const TensorInfo*, uint32_t) {});
      }
      if (hashed) {
        walks[h] = walk_hashed(all, begin, end, *index, shard_of_file, digests[h]);
        return;
      }
      walks[h] = walk(all, begin, end, index, shard_of_file, h == 0 ? entry_begin : entry_mid,
                      h == 0 ? entry_mid : entry_end);
    };
    const size_t half_count = halves ? 2 : 1;
    in_slices(half_count, half_count, [&](size_t h, size_t, size_t) { half(h, true); });
    if (hashed && digests[0] + digests[1] != index->weight_map.digest()) {
      // A name differs: the walks start again, on the same order (the walks against the hashed
      // index left it as it was).
      reread_index(index);
      hashed = false;
      split_entries();
      walks[0] = walks[1] = Walk();
      in_slices(half_count, half_count, [&](size_t h, size_t, size_t) { half(h, false); });
    }
    Walk& first = walks[0];
    Walk& second = walks[1];
    if (first.tensors < mid) { // the first half dropped some: the second's picks move up
      const auto second_begin = all.begin() + static_cast<std::ptrdiff_t>(mid);
      std::copy(second_begin, second_begin + static_cast<std::ptrdiff_t>(second.tensors),
                all.begin() + static_cast<std::ptrdiff_t>(first.tensors));
    }
    all.resize(first.tensors + second.tensors);
    const auto append = [&](std::vector<CheckpointProblem>& problems) {
      m_out.problems.insert(m_out.problems.end(), std::make_move_iterator(problems.begin()),
                            std::make_move_iterator(problems.end()));
    };
    // Past k_listed_problems of a kind, one line says how many more there are.
    const auto listed = [&](Walk& a, Walk& b, auto member, size_t more) {
      std::vector<CheckpointProblem>& first_list = a.*member;
      std::vector<CheckpointProblem>& second_list = b.*member;
      const size_t room = k_listed_problems - std::min(k_listed_problems, first_list.size());
      if (second_list.size() > room) {
        more += second_list.size() - room;
        second_list.resize(room);
      }
      append(first_list);
      append(second_list);
      return more;
    };
    if (const size_t more =
          listed(first, second, &Walk::duplicates, first.duplicates_more + second.duplicates_more);
        more > 0) {
      const CheckpointProblem& last = m_out.problems.back();
      m_out.problems.push_back({CheckpointIssue::duplicate_tensor, false, last.file, "",
                                fmt::format("{} more tensors are stored in more than one file "
                                            "(the first {} are listed)",
                                            more, k_listed_problems),
                                std::nullopt});
    }
    for (size_t s = 0; s < m_out.shards.size(); ++s) {
      const size_t unnamed = first.unnamed[s] + (second.unnamed.empty() ? 0 : second.unnamed[s]);
      if (unnamed > 0) {
        const std::string_view example =
          first.unnamed[s] > 0 ? first.first_unnamed[s] : second.first_unnamed[s];
        problem(CheckpointIssue::unindexed_tensors, m_out.shards[s].file, std::string(example),
                fmt::format("holds {} tensor{} the index does not name (first: '{}')", unnamed,
                            unnamed == 1 ? "" : "s", example));
      }
    }
    if (const size_t more =
          listed(first, second, &Walk::missing, first.missing_more + second.missing_more);
        more > 0) {
      m_out.problems.push_back({CheckpointIssue::index_missing_tensor, false, index->file, "",
                                fmt::format("maps {} more tensors to files that do not hold them "
                                            "(the first {} are listed)",
                                            more, k_listed_problems),
                                std::nullopt});
    }
  }

  static constexpr size_t k_parallel_tensors = 16384;
  // Problems of one kind kept one by one: an index can name millions of tensors, and a line each
  // would cost gigabytes; past this many they are counted.
  static constexpr size_t k_listed_problems = 1000;

  const FileSystem& m_fs;
  Checkpoint& m_out;
  const std::function<void(const std::string&)>& m_alongside;
};

} // namespace

bool
is_contained_path(std::string_view path)
{
  return uncontained_reason(path).empty();
}

std::string_view
uncontained_reason(std::string_view path)
{
  if (path.empty()) {
    return "an empty file name";
  }
  if (path.find('\0') != std::string_view::npos) {
    return "a name holding a NUL byte";
  }
  if (path.front() == '/') {
    return "an absolute path, outside the model folder";
  }
  if (path.find('\\') != std::string_view::npos) {
    return "a path holding a backslash";
  }
  // Where the path goes counts before how it is written.
  bool empty_part = false;
  bool parent = false;
  int64_t depth = 0;
  bool escapes = false;
  size_t start = 0;
  while (start <= path.size()) {
    size_t end = path.find('/', start);
    if (end == std::string_view::npos) {
      end = path.size();
    }
    const std::string_view part = path.substr(start, end - start);
    if (part == "..") {
      parent = true;
      escapes = escapes || --depth < 0;
    } else if (part.empty()) {
      empty_part = true;
    } else if (part != ".") {
      ++depth;
    }
    start = end + 1;
  }
  if (escapes) {
    return "a path outside the model folder";
  }
  if (parent) {
    return "a path with a '..' component";
  }
  if (empty_part) {
    return "a path with an empty component ('//' or a final '/')";
  }
  return {};
}

uint32_t
Checkpoint::shard_index(const Tensor& tensor) const
{
  const auto at = reinterpret_cast<uintptr_t>(tensor.info);
  // The last table starting at or before the entry.
  const auto it = std::upper_bound(m_tables.begin(), m_tables.end(), at,
                                   [](uintptr_t a, const auto& table) { return a < table.first; });
  return it == m_tables.begin() ? 0 : std::prev(it)->second;
}

bool
Checkpoint::holds(uint32_t shard, const Tensor& tensor) const
{
  const auto& table = shards[shard].header.tensors;
  const auto at = reinterpret_cast<uintptr_t>(tensor.info);
  const auto begin = reinterpret_cast<uintptr_t>(table.data());
  return at >= begin && at < begin + table.size() * sizeof(TensorInfo);
}

void
Checkpoint::index_shards()
{
  m_tables.clear();
  for (uint32_t s = 0; s < shards.size(); ++s) {
    if (!shards[s].header.tensors.empty()) {
      m_tables.emplace_back(reinterpret_cast<uintptr_t>(shards[s].header.tensors.data()), s);
    }
  }
  std::sort(m_tables.begin(), m_tables.end());
}

Expected<Checkpoint>
load_checkpoint(const FileSystem& fs, const std::string& path, const LoadOptions& options)
{
  if (path.empty()) {
    return unexpected(std::string("empty path: give a model folder or a .safetensors file"));
  }
  Checkpoint checkpoint;
  const FileInfo info = fs.stat(path);
  const unsigned threads = thread_count(options.threads);
  if (info.kind == FileKind::regular && ends_with(path, ".safetensors")) {
    // A single shard: read it alone, with no index and no sibling files.
    const size_t slash = path.rfind('/');
    checkpoint.root = slash == std::string::npos ? "." : path.substr(0, slash);
    Loader(fs, checkpoint, options.alongside)
      .run({path.substr(slash == std::string::npos ? 0 : slash + 1)}, 1);
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
  Loader(fs, checkpoint, options.alongside).run(*names, threads);
  return checkpoint;
}

} // namespace qcheck
