#include <gtest/gtest.h>

#include <algorithm>
#include <chrono>
#include <climits>
#include <condition_variable>
#include <fmt/format.h>
#include <map>
#include <mutex>
#include <random>
#include <set>
#include <thread>

#include "builder.hpp"
#include "qcheck/checkpoint.hpp"

using namespace qcheck;
using namespace qcheck::test;

namespace {

const std::vector<TensorSpec> k_shard1{{"a.weight", "BF16", {2, 2}}, {"b.weight", "BF16", {2}}};
const std::vector<TensorSpec> k_shard2{{"c.weight", "BF16", {2, 2}}};

std::string
index_json(const std::vector<std::pair<std::string, std::string>>& map)
{
  std::string json = R"({"metadata":{},"weight_map":{)";
  for (size_t i = 0; i < map.size(); ++i) {
    json += (i ? "," : "") + ("\"" + map[i].first + "\":\"" + map[i].second + "\"");
  }
  return json + "}}";
}

// The index as Python's json.dumps(index, indent=2, sort_keys=True) writes it (transformers'
// save_pretrained), entries in the order given.
std::string
indented_index_json(const std::vector<std::pair<std::string, std::string>>& map)
{
  std::string json = "{\n  \"metadata\": {\n    \"total_size\": 1234\n  },\n  \"weight_map\": {";
  for (size_t i = 0; i < map.size(); ++i) {
    json += (i ? "," : "") + ("\n    \"" + map[i].first + "\": \"" + map[i].second + "\"");
  }
  return json + "\n  }\n}\n";
}

Checkpoint
load(const MemoryFileSystem& fs)
{
  auto checkpoint = load_checkpoint(fs, "m", LoadOptions{2});
  EXPECT_TRUE(checkpoint);
  return std::move(checkpoint).value();
}

std::vector<std::string>
messages(const Checkpoint& c)
{
  std::vector<std::string> out;
  for (const auto& p : c.problems) {
    out.push_back(p.file + ": " + p.message);
  }
  return out;
}

MemoryFileSystem
two_shards()
{
  MemoryFileSystem fs;
  fs.add_file("m/model-00001-of-00002.safetensors", safetensors(k_shard1));
  fs.add_file("m/model-00002-of-00002.safetensors", safetensors(k_shard2));
  return fs;
}

const std::vector<std::pair<std::string, std::string>> k_full_map{
  {"a.weight", "model-00001-of-00002.safetensors"},
  {"b.weight", "model-00001-of-00002.safetensors"},
  {"c.weight", "model-00002-of-00002.safetensors"}};

} // namespace

TEST(Checkpoint, IndexedShardsLoadCleanly)
{
  auto fs = two_shards();
  fs.add_file("m/model.safetensors.index.json", index_json(k_full_map));
  const Checkpoint c = load(fs);
  EXPECT_TRUE(c.has_index);
  EXPECT_TRUE(c.problems.empty()) << messages(c)[0];
  ASSERT_EQ(c.tensors.size(), 3u);
  EXPECT_EQ(c.tensors[2].info->name(), "c.weight");
  EXPECT_EQ(c.shard_of(c.tensors[2]), "model-00002-of-00002.safetensors");
}

TEST(Checkpoint, SingleFileWithoutIndex)
{
  MemoryFileSystem fs;
  fs.add_file("m/model.safetensors", safetensors(k_shard1));
  fs.add_file("m/config.json", "{}");
  const Checkpoint c = load(fs);
  EXPECT_FALSE(c.has_index);
  EXPECT_TRUE(c.problems.empty());
  EXPECT_EQ(c.tensors.size(), 2u);
}

TEST(Checkpoint, LoadsOneShardFile)
{
  MemoryFileSystem fs;
  fs.add_file("m/model-00001-of-00002.safetensors", safetensors(k_shard1));
  fs.add_file("m/model-00002-of-00002.safetensors", safetensors(k_shard2));
  auto c = load_checkpoint(fs, "m/model-00002-of-00002.safetensors");
  ASSERT_TRUE(c);
  ASSERT_EQ(c->tensors.size(), 1u);
  EXPECT_EQ(c->tensors[0].info->name(), "c.weight");
}

TEST(Checkpoint, ExtraShardsOutsideTheNamingScheme)
{
  auto fs = two_shards();
  fs.add_file("m/model_extra_tensors.safetensors",
              safetensors({{"mtp.fc.weight", "BF16", {2, 4}}}));
  auto map = k_full_map;
  map.emplace_back("mtp.fc.weight", "model_extra_tensors.safetensors");
  fs.add_file("m/model.safetensors.index.json", index_json(map));
  const Checkpoint c = load(fs);
  EXPECT_TRUE(c.problems.empty());
  EXPECT_EQ(c.tensors.size(), 4u);
}

// Python's json (every engine) keeps the last of repeated keys: a stale weight_map followed by
// the right one is read as the right one, its problems forgotten.
TEST(Checkpoint, LastWeightMapKeyCounts)
{
  auto fs = two_shards();
  std::string right = index_json(k_full_map);
  right = right.substr(right.find("\"weight_map\""));
  fs.add_file("m/model.safetensors.index.json",
              R"({"weight_map": {"a.weight": "../elsewhere.safetensors", "z": "gone.safetensors"},
                  )" +
                right);
  Checkpoint c = load(fs);
  EXPECT_TRUE(c.problems.empty()) << messages(c)[0];
  EXPECT_EQ(c.tensors.size(), 3u);

  fs.add_file("m/model.safetensors.index.json",
              index_json(k_full_map).insert(1, R"("weight_map": {"x": "y.safetensors"}, )"));
  c = load(fs);
  EXPECT_TRUE(c.problems.empty()) << messages(c)[0];

  std::string stale = index_json(k_full_map);
  stale.insert(stale.size() - 1,
               R"(, "weight_map": {"c.weight": "model-00001-of-00002.safetensors"})");
  fs.add_file("m/model.safetensors.index.json", stale);
  c = load(fs);
  const auto m = messages(c);
  EXPECT_TRUE(std::any_of(m.begin(), m.end(),
                          [](const std::string& line) {
                            return line.starts_with(
                              "model.safetensors.index.json: maps 'c.weight' to "
                              "model-00001-of-00002.safetensors, which does not hold it");
                          }))
    << m[0];
}

TEST(Checkpoint, IndexNamesMissingFile)
{
  MemoryFileSystem fs;
  fs.add_file("m/model-00001-of-00002.safetensors", safetensors(k_shard1));
  fs.add_file("m/model.safetensors.index.json", index_json(k_full_map));
  const Checkpoint c = load(fs);
  ASSERT_EQ(c.problems.size(), 1u);
  EXPECT_EQ(c.problems[0].issue, CheckpointIssue::index_missing_file);
  EXPECT_EQ(messages(c)[0], "model-00002-of-00002.safetensors: named by "
                            "model.safetensors.index.json for 1 tensor, but the file does not "
                            "exist");
}

TEST(Checkpoint, IndexNamesTensorTheShardLacks)
{
  auto fs = two_shards();
  auto map = k_full_map;
  map.emplace_back("d.weight", "model-00002-of-00002.safetensors");
  fs.add_file("m/model.safetensors.index.json", index_json(map));
  const Checkpoint c = load(fs);
  ASSERT_EQ(c.problems.size(), 1u);
  EXPECT_EQ(c.problems[0].issue, CheckpointIssue::index_missing_tensor);
  EXPECT_EQ(messages(c)[0], "model.safetensors.index.json: maps 'd.weight' to "
                            "model-00002-of-00002.safetensors, which does not hold it");
}

TEST(Checkpoint, ShardHoldsTensorsTheIndexDoesNotName)
{
  auto fs = two_shards();
  auto map = k_full_map;
  map.erase(map.begin() + 1); // b.weight
  fs.add_file("m/model.safetensors.index.json", index_json(map));
  const Checkpoint c = load(fs);
  ASSERT_EQ(c.problems.size(), 1u);
  EXPECT_EQ(c.problems[0].issue, CheckpointIssue::unindexed_tensors);
  EXPECT_EQ(messages(c)[0], "model-00001-of-00002.safetensors: holds 1 tensor the index does not "
                            "name (first: 'b.weight')");
}

TEST(Checkpoint, ShardTheIndexDoesNotName)
{
  auto fs = two_shards();
  fs.add_file("m/mtp.safetensors",
              safetensors({{"model.layers.92.eh_proj.weight", "BF16", {2, 4}}}));
  fs.add_file("m/model.safetensors.index.json", index_json(k_full_map));
  const Checkpoint c = load(fs);
  ASSERT_EQ(c.problems.size(), 1u);
  EXPECT_EQ(c.problems[0].issue, CheckpointIssue::unindexed_shard);
  EXPECT_EQ(messages(c)[0], "mtp.safetensors: is not named in model.safetensors.index.json; vLLM "
                            "and SGLang load only the files the index names, so its tensors are "
                            "never loaded");
}

// An index naming 150 files in turn: each entry finds its file again (by hash), and each file
// is named for the right number of tensors.
TEST(Checkpoint, IndexNamingHundredsOfFilesInTurn)
{
  MemoryFileSystem fs;
  std::vector<std::pair<std::string, std::string>> map;
  constexpr int k_files = 150;
  for (int f = 0; f < k_files; ++f) {
    std::vector<TensorSpec> tensors;
    for (int k = f; k < 3 * k_files; k += k_files) {
      tensors.push_back({fmt::format("w{:03}.weight", k), "BF16", {2}});
    }
    fs.add_file(fmt::format("m/part-{}.safetensors", f), safetensors(tensors));
  }
  for (int k = 0; k < 3 * k_files; ++k) { // name order: the file changes at every entry
    map.emplace_back(fmt::format("w{:03}.weight", k),
                     fmt::format("part-{}.safetensors", k % k_files));
  }
  // Two files the index names that do not exist, one of them twice, late and apart.
  map.emplace_back("x0.weight", "gone-a.safetensors");
  map.emplace_back("x1.weight", "gone-b.safetensors");
  map.emplace_back("x2.weight", "gone-a.safetensors");
  fs.add_file("m/model.safetensors.index.json", index_json(map));
  const Checkpoint c = load(fs);
  EXPECT_EQ(messages(c),
            (std::vector<std::string>{
              "gone-a.safetensors: named by model.safetensors.index.json for 2 tensors, but the "
              "file does not exist",
              "gone-b.safetensors: named by model.safetensors.index.json for 1 tensor, but the "
              "file does not exist"}));
  ASSERT_EQ(c.tensors.size(), static_cast<size_t>(3 * k_files));
  for (int k = 0; k < 3 * k_files; ++k) {
    const Tensor& t = c.tensors[static_cast<size_t>(k)];
    EXPECT_EQ(t.info->name(), fmt::format("w{:03}.weight", k));
    EXPECT_EQ(c.shard_of(t), fmt::format("part-{}.safetensors", k % k_files));
    EXPECT_TRUE(c.shards[c.shard_index(t)].in_index);
  }
}

// "./x" and "x" (and "sub/./y", "sub/y") in weight_map name one file each: one shard, no tensor
// stored twice, nothing missing.
TEST(Checkpoint, DotComponentsNameTheSameShard)
{
  auto fs = two_shards();
  fs.add_file("m/sub/extra.safetensors",
              safetensors({{"e.weight", "BF16", {2}}, {"f.weight", "BF16", {2}}}));
  fs.add_file("m/model.safetensors.index.json",
              index_json({{"a.weight", "./model-00001-of-00002.safetensors"},
                          {"b.weight", "model-00001-of-00002.safetensors"},
                          {"c.weight", "./model-00002-of-00002.safetensors"},
                          {"e.weight", "sub/./extra.safetensors"},
                          {"f.weight", "./sub/extra.safetensors"}}));
  const Checkpoint c = load(fs);
  EXPECT_TRUE(c.problems.empty()) << messages(c).front();
  ASSERT_EQ(c.shards.size(), 3u);
  EXPECT_EQ(c.shards[2].file, "sub/extra.safetensors");
  ASSERT_EQ(c.tensors.size(), 5u);
  for (const auto& shard : c.shards) {
    EXPECT_TRUE(shard.in_index) << shard.file;
  }
}

// A file the folder's listing names but that cannot be examined (no search permission on the
// folder for this user, or removed meanwhile) is reported as such, not as "named by the index
// ... does not exist".
TEST(Checkpoint, ListedFileThatCannotBeExamined)
{
  MemoryFileSystem fs;
  fs.add_file("m/model-00001-of-00001.safetensors", safetensors(k_shard1));
  fs.add_special("m/model-00002-of-00002.safetensors", FileKind::missing); // listed, not there
  const Checkpoint c = load(fs);
  EXPECT_EQ(messages(c), std::vector<std::string>{
                           "model-00002-of-00002.safetensors: is in the folder's listing but "
                           "cannot be examined (removed meanwhile, or no permission to search "
                           "the folder); not read"});
  EXPECT_EQ(c.problems[0].issue, CheckpointIssue::shard_unreadable);
}

TEST(Checkpoint, SameTensorInTwoShards)
{
  MemoryFileSystem fs;
  fs.add_file("m/model-00001-of-00002.safetensors", safetensors(k_shard1));
  fs.add_file("m/model-00002-of-00002.safetensors", safetensors({{"a.weight", "BF16", {2, 2}}}));
  fs.add_file("m/model.safetensors.index.json",
              index_json({{"a.weight", "model-00002-of-00002.safetensors"},
                          {"b.weight", "model-00001-of-00002.safetensors"}}));
  const Checkpoint c = load(fs);
  ASSERT_EQ(c.problems.size(), 1u);
  EXPECT_EQ(c.problems[0].issue, CheckpointIssue::duplicate_tensor);
  EXPECT_EQ(messages(c)[0],
            "model-00002-of-00002.safetensors: tensor 'a.weight' is stored in both "
            "model-00001-of-00002.safetensors and model-00002-of-00002.safetensors; "
            "the loader uses model-00002-of-00002.safetensors");
  EXPECT_EQ(c.shard_of(c.tensors[0]), "model-00002-of-00002.safetensors");
}

// The reason a refused path's message gives.
TEST(Checkpoint, UncontainedReasonNamesWhatIsWrong)
{
  EXPECT_EQ(uncontained_reason("a/b.safetensors"), "");
  EXPECT_EQ(uncontained_reason("./a.safetensors"), "");
  EXPECT_EQ(uncontained_reason(std::string_view("a\0b", 3)), "a name holding a NUL byte");
  EXPECT_EQ(uncontained_reason("a\\b.safetensors"), "a path holding a backslash");
  EXPECT_EQ(uncontained_reason("/x"), "an absolute path, outside the model folder");
  EXPECT_EQ(uncontained_reason("a/../.."), "a path outside the model folder");
  EXPECT_EQ(uncontained_reason("a//b"), "a path with an empty component ('//' or a final '/')");
  // Where it goes before how it is written (a review's "a//../../x" was called empty-parted).
  EXPECT_EQ(uncontained_reason("a//../../x"), "a path outside the model folder");
  EXPECT_EQ(uncontained_reason("./../x"), "a path outside the model folder");
  EXPECT_EQ(uncontained_reason("a/../b.safetensors"), "a path with a '..' component");
  EXPECT_EQ(uncontained_reason("x/..//y"), "a path with a '..' component");
  EXPECT_EQ(uncontained_reason(""), "an empty file name");
  EXPECT_FALSE(is_contained_path("a/"));
  EXPECT_TRUE(is_contained_path("a/b"));
}

TEST(Checkpoint, IndexPathLeavingTheFolderIsRefused)
{
  // Last in the map, and first, where no path was accepted before it (the empty path too).
  const std::map<std::string, std::string> reasons = {
    {"../../etc/passwd", "a path outside the model folder"},
    {"/etc/passwd", "an absolute path, outside the model folder"},
    {"a/../../x.safetensors", "a path outside the model folder"},
    {"a/../x.safetensors", "a path with a '..' component"},
    {"a//b.safetensors", "a path with an empty component ('//' or a final '/')"},
    {"a/", "a path with an empty component ('//' or a final '/')"},
    {"", "an empty file name"}};
  for (const bool first : {false, true}) {
    for (const auto& [path, reason] : reasons) {
      auto fs = two_shards();
      auto map = k_full_map;
      map.insert(first ? map.begin() : map.end(), {"evil.weight", path});
      fs.add_file("m/model.safetensors.index.json", index_json(map));
      const Checkpoint c = load(fs);
      ASSERT_EQ(c.problems.size(), 1u) << path << " " << first;
      EXPECT_EQ(c.problems[0].issue, CheckpointIssue::index_path_escapes);
      EXPECT_EQ(messages(c)[0], "model.safetensors.index.json: weight_map sends 'evil.weight' "
                                "to '" +
                                  path + "', " + reason + "; refused");
      EXPECT_EQ(c.shards.size(), 2u); // never opened
    }
  }
}

// A second "weight_map" key replaces the first (as Python's json reads it) and is read as if it
// came alone: its first entry's path is checked, and its first file is not taken for the last
// one of the first map.
TEST(Checkpoint, RepeatedWeightMapIsReadAfresh)
{
  const std::string second = R"(,"weight_map":{"c.weight":"model-00002-of-00002.safetensors",)"
                             R"("a.weight":"model-00001-of-00002.safetensors",)"
                             R"("b.weight":"model-00001-of-00002.safetensors"})";
  for (const bool evil : {false, true}) {
    auto fs = two_shards();
    std::string json = index_json(k_full_map); // its last entry names the second shard
    json.insert(json.size() - 1,
                evil ? R"(,"weight_map":{"evil.weight":"",)" + second.substr(15) : second);
    fs.add_file("m/model.safetensors.index.json", json);
    const Checkpoint c = load(fs);
    if (!evil) {
      EXPECT_TRUE(c.problems.empty()) << json;
      ASSERT_EQ(c.tensors.size(), 3u);
      EXPECT_EQ(c.shard_of(c.tensors[2]), "model-00002-of-00002.safetensors");
      continue;
    }
    ASSERT_EQ(c.problems.size(), 1u) << json;
    EXPECT_EQ(c.problems[0].issue, CheckpointIssue::index_path_escapes);
    EXPECT_EQ(messages(c)[0], "model.safetensors.index.json: weight_map sends 'evil.weight' to "
                              "'', an empty file name; refused");
  }
}

TEST(Checkpoint, ContainedPaths)
{
  EXPECT_TRUE(is_contained_path("model.safetensors"));
  EXPECT_TRUE(is_contained_path("sub/model.safetensors"));
  EXPECT_FALSE(is_contained_path(""));
  EXPECT_FALSE(is_contained_path(".."));
  EXPECT_FALSE(is_contained_path("a\\..\\b"));
}

// An index no loader can read is the one problem: the shards are then read as without an index,
// not each reported as missing from it.
TEST(Checkpoint, IndexNotJson)
{
  for (const std::string text : {"{\"weight_map\": ", "{\"metadata\": {}}"}) {
    auto fs = two_shards();
    fs.add_file("m/model.safetensors.index.json", text);
    const Checkpoint c = load(fs);
    ASSERT_EQ(c.problems.size(), 1u) << messages(c).back();
    EXPECT_EQ(c.problems[0].issue, CheckpointIssue::index_unreadable);
    EXPECT_EQ(messages(c)[0], text.starts_with("{\"w")
                                ? "model.safetensors.index.json: not valid JSON"
                                : "model.safetensors.index.json: has no 'weight_map' object");
    EXPECT_FALSE(c.has_index);
    EXPECT_EQ(c.tensors.size(), 3u);
  }
  // With no shard beside it, the unreadable index is still the one problem.
  MemoryFileSystem alone;
  alone.add_file("m/model.safetensors.index.json", "[");
  const Checkpoint c = load(alone);
  EXPECT_EQ(messages(c), std::vector<std::string>{"model.safetensors.index.json: not valid JSON"});
}

TEST(Checkpoint, ShardThatIsNotARegularFile)
{
  for (auto kind : {FileKind::directory, FileKind::special, FileKind::broken_link}) {
    MemoryFileSystem fs;
    fs.add_file("m/model-00001-of-00002.safetensors", safetensors(k_shard1));
    fs.add_special("m/x.safetensors", kind);
    const Checkpoint c = load(fs);
    ASSERT_EQ(c.problems.size(), 1u);
    EXPECT_EQ(c.problems[0].issue, CheckpointIssue::shard_not_regular);
    EXPECT_EQ(messages(c)[0], "x.safetensors: is a " + std::string(to_string(kind)) +
                                ", not a regular file; not read");
  }
}

TEST(Checkpoint, HeaderProblemsCarryTheFile)
{
  MemoryFileSystem fs;
  fs.add_file("m/bad.safetensors", "short");
  const Checkpoint c = load(fs);
  ASSERT_EQ(c.problems.size(), 1u);
  EXPECT_EQ(c.problems[0].issue, CheckpointIssue::header_problem);
  EXPECT_EQ(c.problems[0].header_issue, HeaderIssue::file_too_short);
  EXPECT_EQ(messages(c)[0], "bad.safetensors: file is 5 bytes, too short to hold the 8-byte header "
                            "length");
}

TEST(Checkpoint, NoWeights)
{
  MemoryFileSystem fs;
  fs.add_file("m/config.json", "{}");
  const Checkpoint c = load(fs);
  ASSERT_EQ(c.problems.size(), 1u);
  EXPECT_EQ(c.problems[0].issue, CheckpointIssue::no_weights);
}

// The work given to run alongside runs once, on one of the loading threads, with the folder:
// for a folder with an index, a folder of no weights, and one shard file; never for a missing
// path.
TEST(Checkpoint, AlongsideRunsOnceOnALoadingThread)
{
  auto fs = two_shards();
  fs.add_file("m/model.safetensors.index.json", index_json(k_full_map));
  fs.add_file("empty/config.json", "{}");
  const std::vector<std::pair<std::string, std::string>> cases{
    {"m", "m"}, {"empty", "empty"}, {"m/model-00002-of-00002.safetensors", "m"}};
  for (const auto& [path, root] : cases) {
    std::vector<std::string> roots;
    std::vector<std::thread::id> threads;
    LoadOptions options{2};
    options.alongside = [&](const std::string& folder) {
      roots.push_back(folder);
      threads.push_back(std::this_thread::get_id());
    };
    ASSERT_TRUE(load_checkpoint(fs, path, options)) << path;
    EXPECT_EQ(roots, std::vector<std::string>{root}) << path;
    ASSERT_EQ(threads.size(), 1u) << path;
  }
  // One thread: the calling one does everything.
  std::vector<std::thread::id> threads;
  LoadOptions one{1};
  one.alongside = [&](const std::string&) { threads.push_back(std::this_thread::get_id()); };
  ASSERT_TRUE(load_checkpoint(fs, "m", one));
  EXPECT_EQ(threads, std::vector<std::thread::id>{std::this_thread::get_id()});
  LoadOptions options;
  bool called = false;
  options.alongside = [&](const std::string&) { called = true; };
  EXPECT_FALSE(load_checkpoint(fs, "nope", options));
  EXPECT_FALSE(called);
}

namespace {

// Shows a MemoryFileSystem whose index cannot be opened until open_gate() is called (or, so that
// a test fails instead of hanging, until a few seconds pass).
class IndexGate final : public FileSystem
{
public:
  IndexGate(const MemoryFileSystem& base, std::string index)
    : m_base(base), m_index(std::move(index))
  {
  }
  void open_gate()
  {
    const std::lock_guard lock(m_mutex);
    m_open = true;
    m_changed.notify_all();
  }
  // Whether every opening of the index found the gate open in time.
  bool opened_in_time() const
  {
    const std::lock_guard lock(m_mutex);
    return m_in_time;
  }

  FileInfo stat(const std::string& path) const override { return m_base.stat(path); }
  Expected<std::vector<std::string>> list_dir(const std::string& path) const override
  {
    return m_base.list_dir(path);
  }
  Expected<std::unique_ptr<ByteSource>> open(const std::string& path) const override
  {
    if (path == m_index) {
      std::unique_lock lock(m_mutex);
      if (!m_changed.wait_for(lock, std::chrono::seconds(5), [&] { return m_open; })) {
        m_in_time = false;
      }
    }
    return m_base.open(path);
  }

private:
  const MemoryFileSystem& m_base;
  std::string m_index;
  mutable std::mutex m_mutex;
  mutable std::condition_variable m_changed;
  bool m_open = false;
  mutable bool m_in_time = true;
};

} // namespace

// With two threads, the index and the work alongside are read side by side: the index waits
// here until that work has begun (read one after the other on one thread, as before, a long
// configuration held the loading back while the other thread idled).
TEST(Checkpoint, AlongsideRunsBesideTheIndex)
{
  auto fs = two_shards();
  fs.add_file("m/model.safetensors.index.json", index_json(k_full_map));
  IndexGate gate(fs, "m/model.safetensors.index.json");
  LoadOptions options{2};
  int calls = 0;
  options.alongside = [&](const std::string&) {
    ++calls;
    gate.open_gate();
  };
  const auto c = load_checkpoint(gate, "m", options);
  ASSERT_TRUE(c);
  EXPECT_TRUE(gate.opened_in_time());
  EXPECT_EQ(calls, 1);
  EXPECT_TRUE(c->has_index);
  EXPECT_TRUE(c->problems.empty());
}

TEST(Checkpoint, MissingFolderIsAnError)
{
  MemoryFileSystem fs;
  auto c = load_checkpoint(fs, "nope");
  ASSERT_FALSE(c);
  EXPECT_EQ(c.error(), "nope: no such file or directory");
  // An empty path is named as such, not as a file that is missing.
  fs.add_directory("");
  auto empty = load_checkpoint(fs, "");
  ASSERT_FALSE(empty);
  EXPECT_EQ(empty.error(), "empty path: give a model folder or a .safetensors file");
}

// Merging the shards' sorted runs, duplicates across shards, and the index read beside them.

namespace {

// name -> shard file, the loader's choice.
std::vector<std::pair<std::string, std::string>>
placement(const Checkpoint& c)
{
  std::vector<std::pair<std::string, std::string>> out;
  for (const auto& t : c.tensors) {
    out.emplace_back(std::string(t.info->name()), c.shard_of(t));
  }
  return out;
}

std::string
joined(const std::vector<std::string>& lines)
{
  std::string out;
  for (const auto& line : lines) {
    out += "\n  " + line;
  }
  return out;
}

// The TensorInfo a Tensor points at lives in the header of the shard shard_index() names, and
// no other shard holds it.
void
expect_info_in_its_shard(const Checkpoint& c)
{
  for (const auto& t : c.tensors) {
    const uint32_t shard = c.shard_index(t);
    ASSERT_LT(shard, c.shards.size());
    const auto& own = c.shards[shard].header.tensors;
    EXPECT_TRUE(!own.empty() && t.info >= own.data() && t.info < own.data() + own.size())
      << t.info->name();
    for (uint32_t s = 0; s < c.shards.size(); ++s) {
      EXPECT_EQ(c.holds(s, t), s == shard) << t.info->name() << " " << c.shards[s].file;
    }
  }
}

// Shard A: a.0, a.2, c.1; B: a.1, b.0, c.0; C: a.3, b.1. Written out of order in A and B; every
// tensor's shape is [1 + its position in the merged order] so a misattributed entry shows.
MemoryFileSystem
interleaved_shards()
{
  MemoryFileSystem fs;
  fs.add_file("m/model-A.safetensors",
              safetensors({{"c.1", "BF16", {8}}, {"a.0", "BF16", {1}}, {"a.2", "BF16", {3}}}));
  fs.add_file("m/model-B.safetensors",
              safetensors({{"b.0", "BF16", {5}}, {"a.1", "BF16", {2}}, {"c.0", "BF16", {7}}}));
  fs.add_file("m/model-C.safetensors", safetensors({{"a.3", "BF16", {4}}, {"b.1", "BF16", {6}}}));
  return fs;
}

const std::vector<std::pair<std::string, std::string>> k_interleaved{
  {"a.0", "model-A.safetensors"}, {"a.1", "model-B.safetensors"}, {"a.2", "model-A.safetensors"},
  {"a.3", "model-C.safetensors"}, {"b.0", "model-B.safetensors"}, {"b.1", "model-C.safetensors"},
  {"c.0", "model-B.safetensors"}, {"c.1", "model-A.safetensors"}};

Checkpoint
load_with(const MemoryFileSystem& fs, unsigned threads)
{
  auto checkpoint = load_checkpoint(fs, "m", LoadOptions{threads});
  EXPECT_TRUE(checkpoint);
  return std::move(checkpoint).value();
}

} // namespace

TEST(Checkpoint, InterleavedShardsMergeIntoOneSortedList)
{
  for (bool with_index : {false, true}) {
    for (unsigned threads : {1u, 2u, 8u}) {
      auto fs = interleaved_shards();
      if (with_index) {
        fs.add_file("m/model.safetensors.index.json", index_json(k_interleaved));
      }
      const Checkpoint c = load_with(fs, threads);
      EXPECT_EQ(c.has_index, with_index);
      EXPECT_TRUE(c.problems.empty()) << joined(messages(c));
      EXPECT_EQ(placement(c), k_interleaved) << "threads " << threads << " index " << with_index;
      for (size_t i = 0; i < c.tensors.size(); ++i) {
        EXPECT_EQ(std::vector<uint64_t>(c.tensors[i].info->shape().begin(),
                                        c.tensors[i].info->shape().end()),
                  std::vector<uint64_t>{i + 1})
          << c.tensors[i].info->name();
      }
      expect_info_in_its_shard(c);
    }
  }
}

TEST(Checkpoint, TensorInTwoShardsWithoutIndexUsesTheFirstFile)
{
  auto fs = interleaved_shards();
  fs.add_file("m/model-C.safetensors",
              safetensors({{"a.3", "BF16", {4}}, {"b.1", "BF16", {6}}, {"b.0", "F32", {5}}}));
  const Checkpoint c = load(fs);
  ASSERT_EQ(c.problems.size(), 1u) << joined(messages(c));
  EXPECT_EQ(c.problems[0].issue, CheckpointIssue::duplicate_tensor);
  EXPECT_EQ(c.problems[0].tensor, "b.0");
  EXPECT_EQ(messages(c)[0], "model-C.safetensors: tensor 'b.0' is stored in both "
                            "model-B.safetensors and model-C.safetensors; the loader uses "
                            "model-B.safetensors");
  EXPECT_EQ(placement(c), k_interleaved);
  EXPECT_EQ(c.tensors[4].info->dtype, Dtype::BF16); // B's copy, not C's F32 one
  expect_info_in_its_shard(c);
}

TEST(Checkpoint, TensorInTwoShardsTheIndexPicks)
{
  // b.0 is in B (BF16) and C (F32); the index sends it to either.
  for (const std::string pick : {"model-B.safetensors", "model-C.safetensors"}) {
    auto fs = interleaved_shards();
    fs.add_file("m/model-C.safetensors",
                safetensors({{"a.3", "BF16", {4}}, {"b.0", "F32", {5}}, {"b.1", "BF16", {6}}}));
    auto map = k_interleaved;
    map[4].second = pick;
    fs.add_file("m/model.safetensors.index.json", index_json(map));
    const Checkpoint c = load(fs);
    ASSERT_EQ(c.problems.size(), 1u) << pick << joined(messages(c));
    EXPECT_EQ(c.problems[0].issue, CheckpointIssue::duplicate_tensor);
    EXPECT_EQ(messages(c)[0], "model-C.safetensors: tensor 'b.0' is stored in both "
                              "model-B.safetensors and model-C.safetensors; the loader uses " +
                                pick);
    EXPECT_EQ(placement(c), map);
    ASSERT_EQ(c.tensors[4].info->name(), "b.0");
    EXPECT_EQ(c.shard_of(c.tensors[4]), pick);
    EXPECT_EQ(c.tensors[4].info->dtype, pick == "model-B.safetensors" ? Dtype::BF16 : Dtype::F32);
    expect_info_in_its_shard(c);
  }
}

namespace {

// 40 shards holding `k_tensors` names (interleaved one by one, and in blocks), some stored twice,
// in three orders per shard; loaded with `threads`, with no index and with one naming either
// copy, they merge as a brute-force sort places them.
void
expect_merge_like_a_brute_force_sort(size_t k_tensors, unsigned threads)
{
  static constexpr size_t k_shards = 40;
  const auto file = [](size_t s) {
    return fmt::format("model-{:05}-of-{:05}.safetensors", s + 1, k_shards);
  };
  // Names in a shuffled order; the first half dealt round-robin, the second half in blocks, so
  // runs interleave one by one and also hold long stretches of consecutive names.
  std::vector<std::string> names;
  for (size_t i = 0; i < k_tensors; ++i) {
    names.push_back(fmt::format("model.layers.{}.mlp.w{}", i % 97, i / 97));
  }
  std::mt19937 random(1234);
  std::shuffle(names.begin(), names.begin() + k_tensors / 2, random);
  std::sort(names.begin() + k_tensors / 2, names.end());
  std::vector<std::vector<TensorSpec>> shards(k_shards);
  std::vector<std::pair<std::string, size_t>> expected; // name -> shard
  for (size_t i = 0; i < k_tensors; ++i) {
    const size_t s =
      i < k_tensors / 2 ? i % k_shards : (i - k_tensors / 2) * k_shards / (k_tensors / 2);
    shards[s].push_back({names[i], "BF16", {i % 64 + 1}}); // small: the data is built
    expected.emplace_back(names[i], s);
  }
  // Some names stored a second time, in another shard, as F32.
  std::vector<std::pair<std::string, size_t>> copies;
  for (size_t i = 0; i < k_tensors; i += 37) {
    const size_t other = (expected[i].second + 7 + i % 5) % k_shards;
    shards[other].push_back({names[i], "F32", {i % 64 + 1}});
    copies.emplace_back(names[i], other);
  }
  for (size_t s = 0; s < k_shards; ++s) {
    if (s % 3 == 0) {
      std::sort(shards[s].begin(), shards[s].end(),
                [](const TensorSpec& a, const TensorSpec& b) { return a.name < b.name; });
    } else if (s % 3 == 1) {
      std::reverse(shards[s].begin(), shards[s].end());
    } // else as dealt
  }
  std::sort(expected.begin(), expected.end());

  for (int mode = 0; mode < 3; ++mode) {
    // 0: no index, the first file wins; 1: index naming the first copy; 2: index naming the
    // second copy.
    MemoryFileSystem fs;
    for (size_t s = 0; s < k_shards; ++s) {
      fs.add_file("m/" + file(s), safetensors(shards[s]));
    }
    std::vector<std::pair<std::string, std::string>> want;
    for (const auto& [name, s] : expected) {
      want.emplace_back(name, file(s));
    }
    for (const auto& [name, other] : copies) {
      auto it = std::lower_bound(want.begin(), want.end(), std::pair{name, std::string()});
      ASSERT_EQ(it->first, name);
      const std::string first = std::min(it->second, file(other));
      const std::string second = std::max(it->second, file(other));
      it->second = mode == 2 ? second : first;
    }
    if (mode > 0) {
      auto map = want;
      std::shuffle(map.begin(), map.end(), random); // index order is not the loader's concern
      fs.add_file("m/model.safetensors.index.json", index_json(map));
    }
    const Checkpoint c = load_with(fs, threads);
    EXPECT_EQ(c.shards.size(), k_shards);
    ASSERT_EQ(c.tensors.size(), k_tensors) << "mode " << mode;
    EXPECT_EQ(placement(c), want) << "mode " << mode << ", " << k_tensors << " tensors";
    size_t duplicates = 0;
    for (const auto& p : c.problems) {
      duplicates += p.issue == CheckpointIssue::duplicate_tensor;
    }
    EXPECT_EQ(duplicates, copies.size()) << "mode " << mode;
    EXPECT_EQ(c.problems.size(), copies.size()) << "mode " << mode << joined(messages(c));
    const std::map<std::string, size_t, std::less<>> copy_shard(copies.begin(), copies.end());
    for (const auto& t : c.tensors) {
      // Which copy was used shows in its dtype: the F32 ones are the copies.
      const bool is_copy = t.info->dtype == Dtype::F32;
      const auto it = copy_shard.find(t.info->name());
      if (it == copy_shard.end()) {
        EXPECT_FALSE(is_copy) << t.info->name();
      } else {
        EXPECT_EQ(is_copy, file(it->second) == c.shard_of(t)) << t.info->name();
      }
    }
    expect_info_in_its_shard(c);
  }
}

} // namespace

TEST(Checkpoint, ManyShardsMergeLikeABruteForceSort)
{
  expect_merge_like_a_brute_force_sort(1000, 4);
}

// Past 16,384 tensors two threads merge and walk a half of the names each, cut at one name.
TEST(Checkpoint, ManyShardsMergeLikeABruteForceSortInHalves)
{
  expect_merge_like_a_brute_force_sort(20000, 2);
}

// Read in one pass, an index must be in name order: one that is not, or repeats a name, is read
// whole and joined by name. The pass checks the order of the names' first 16 bytes; names that
// only differ later (the usual case: "model.layers.0.mlp.experts.") are told apart by the digest,
// and the index read a second time: either way the same problems and placement.
TEST(Checkpoint, IndexOutOfOrderWithRepeatedKeysActsAsSorted)
{
  const std::string s1 = "model-00001-of-00002.safetensors";
  const std::string s2 = "model-00002-of-00002.safetensors";
  struct Case
  {
    std::string name;
    std::vector<std::pair<std::string, std::string>> raw;    // in the index's order
    std::vector<std::pair<std::string, std::string>> sorted; // the same map, as Python reads it
  };
  const std::vector<Case> cases{
    {"complete, reversed, a repeated; the last a is right",
     {{"c", s2}, {"a", s2}, {"b", s1}, {"a", s1}},
     {{"a", s1}, {"b", s1}, {"c", s2}}},
    {"the last a is wrong",
     {{"a", s1}, {"c", s2}, {"b", s1}, {"a", s2}},
     {{"a", s2}, {"b", s1}, {"c", s2}}},
    {"b missing, c repeated", {{"c", s2}, {"a", s1}, {"c", s2}}, {{"a", s1}, {"c", s2}}},
    {"an extra d, out of order, repeated with two files",
     {{"d", s1}, {"c", s2}, {"b", s1}, {"a", s1}, {"d", s2}},
     {{"a", s1}, {"b", s1}, {"c", s2}, {"d", s2}}},
    {"a file no kept entry names, not in the folder: not reported missing",
     {{"a", "model-00009-of-00009.safetensors"}, {"c", s2}, {"b", s1}, {"a", s1}},
     {{"a", s1}, {"b", s1}, {"c", s2}}},
    {"a repeated three times, in order around it",
     {{"a", s2}, {"a", s2}, {"a", s1}, {"b", s1}, {"c", s2}},
     {{"a", s1}, {"b", s1}, {"c", s2}}},
    {"b before a", {{"b", s1}, {"a", s1}, {"c", s2}}, {{"a", s1}, {"b", s1}, {"c", s2}}},
  };
  for (const std::string prefix : {"", "model.layers.0.mlp.experts.7."}) {
    const auto named = [&](const std::vector<std::pair<std::string, std::string>>& map) {
      std::string json;
      for (const auto& [tensor, file] : map) {
        json += (json.empty() ? "" : ",") + ("\"" + prefix + tensor + ".weight\":\"" + file + "\"");
      }
      return json;
    };
    const auto shards = [&] {
      MemoryFileSystem fs;
      fs.add_file("m/" + s1, safetensors({{prefix + "a.weight", "BF16", {2, 2}},
                                          {prefix + "b.weight", "BF16", {2}}}));
      fs.add_file("m/" + s2, safetensors({{prefix + "c.weight", "BF16", {2, 2}}}));
      return fs;
    };
    for (const auto& [name, raw_map, sorted] : cases) {
      auto raw = shards();
      raw.add_file("m/model.safetensors.index.json",
                   R"({"metadata":{"total_size":28},"weight_map":{)" + named(raw_map) + "}}");
      auto reference = shards();
      reference.add_file("m/model.safetensors.index.json",
                         R"({"metadata":{},"weight_map":{)" + named(sorted) + "}}");
      const Checkpoint c = load(raw);
      const Checkpoint r = load(reference);
      EXPECT_TRUE(r.problems.size() <= 1) << joined(messages(r));
      EXPECT_EQ(messages(c), messages(r)) << prefix << name << joined(messages(c));
      EXPECT_EQ(placement(c), placement(r)) << prefix << name;
    }
  }
  const auto entry = [](const std::string& tensor, const std::string& file) {
    return "\"" + tensor + "\":\"" + file + "\"";
  };
  // And what those problems are.
  auto fs = two_shards();
  fs.add_file("m/model.safetensors.index.json",
              "{\"weight_map\":{" + entry("a.weight", s1) + "," + entry("c.weight", s2) + "," +
                entry("b.weight", s1) + "," + entry("a.weight", s2) + "}}");
  const Checkpoint c = load(fs);
  ASSERT_EQ(c.problems.size(), 1u) << joined(messages(c));
  EXPECT_EQ(c.problems[0].issue, CheckpointIssue::index_missing_tensor);
  EXPECT_EQ(messages(c)[0], "model.safetensors.index.json: maps 'a.weight' to " + s2 +
                              ", which does not hold it (it is in " + s1 + ")");

  auto missing_b = two_shards();
  missing_b.add_file("m/model.safetensors.index.json", "{\"weight_map\":{" + entry("c.weight", s2) +
                                                         "," + entry("a.weight", s1) + "," +
                                                         entry("c.weight", s2) + "}}");
  const Checkpoint m = load(missing_b);
  ASSERT_EQ(m.problems.size(), 1u) << joined(messages(m));
  EXPECT_EQ(m.problems[0].issue, CheckpointIssue::unindexed_tensors);
  EXPECT_EQ(messages(m)[0], s1 + ": holds 1 tensor the index does not name (first: 'b.weight')");

  auto extra_d = two_shards();
  extra_d.add_file("m/model.safetensors.index.json",
                   "{\"weight_map\":{" + entry("d.weight", s1) + "," + entry("c.weight", s2) + "," +
                     entry("b.weight", s1) + "," + entry("a.weight", s1) + "," +
                     entry("d.weight", s2) + "}}");
  const Checkpoint d = load(extra_d);
  ASSERT_EQ(d.problems.size(), 1u) << joined(messages(d));
  EXPECT_EQ(d.problems[0].issue, CheckpointIssue::index_missing_tensor);
  EXPECT_EQ(messages(d)[0],
            "model.safetensors.index.json: maps 'd.weight' to " + s2 + ", which does not hold it");
}

TEST(Checkpoint, OverriddenIndexEntryNamesNoFile)
{
  // The first a.weight names a file that is not there; the last one wins, so nothing is missing.
  auto fs = two_shards();
  fs.add_file("m/model.safetensors.index.json",
              R"({"weight_map":{"a.weight":"ghost.safetensors","c.weight":)"
              R"("model-00002-of-00002.safetensors","b.weight":"model-00001-of-00002.safetensors",)"
              R"("a.weight":"model-00001-of-00002.safetensors"}})");
  const Checkpoint c = load(fs);
  EXPECT_TRUE(c.problems.empty()) << joined(messages(c));
  EXPECT_EQ(c.shards.size(), 2u);
  EXPECT_EQ(c.tensors.size(), 3u);
}

TEST(Checkpoint, IndexNamesShardInSubfolder)
{
  auto fs = two_shards();
  fs.add_file("m/sub/model-1.safetensors",
              safetensors({{"d.weight", "F32", {3}}, {"aa.weight", "BF16", {5}}}));
  auto map = k_full_map;
  map.emplace_back("d.weight", "sub/model-1.safetensors");
  map.emplace_back("aa.weight", "sub/model-1.safetensors");
  fs.add_file("m/model.safetensors.index.json", index_json(map));
  const Checkpoint c = load(fs);
  EXPECT_TRUE(c.problems.empty()) << joined(messages(c));
  ASSERT_EQ(c.shards.size(), 3u);
  EXPECT_EQ(c.shards[2].file, "sub/model-1.safetensors");
  EXPECT_TRUE(c.shards[2].in_index);
  EXPECT_TRUE(c.shards[2].header_read);
  EXPECT_EQ(placement(c), (std::vector<std::pair<std::string, std::string>>{
                            {"a.weight", "model-00001-of-00002.safetensors"},
                            {"aa.weight", "sub/model-1.safetensors"},
                            {"b.weight", "model-00001-of-00002.safetensors"},
                            {"c.weight", "model-00002-of-00002.safetensors"},
                            {"d.weight", "sub/model-1.safetensors"}}));
  expect_info_in_its_shard(c);
}

TEST(Checkpoint, IndexNamesMissingShardInSubfolder)
{
  auto fs = two_shards();
  auto map = k_full_map;
  map.emplace_back("d.weight", "sub/model-2.safetensors");
  map.emplace_back("e.weight", "sub/model-2.safetensors");
  fs.add_file("m/model.safetensors.index.json", index_json(map));
  const Checkpoint c = load(fs);
  ASSERT_EQ(c.problems.size(), 1u) << joined(messages(c));
  EXPECT_EQ(c.problems[0].issue, CheckpointIssue::index_missing_file);
  EXPECT_EQ(messages(c)[0], "sub/model-2.safetensors: named by model.safetensors.index.json for 2 "
                            "tensors, but the file does not exist");
  EXPECT_EQ(c.tensors.size(), 3u);
}

TEST(Checkpoint, IndexOnlyShardsBesideShortNamedShards)
{
  // Shards the folder lists, with names short enough to live inside a std::string, and shards
  // only the index names (a subfolder, a missing file) listed first in the index: adding the
  // index-only shards must not lose track of the listed ones.
  for (size_t listed : {1u, 2u, 4u, 8u, 16u}) {
    MemoryFileSystem fs;
    std::vector<std::pair<std::string, std::string>> map;
    map.emplace_back("0.sub", "sub/extra-tensors.safetensors");
    map.emplace_back("1.gone", "sub/missing-tensors.safetensors");
    fs.add_file("m/sub/extra-tensors.safetensors", safetensors({{"0.sub", "BF16", {2}}}));
    for (size_t s = 0; s < listed; ++s) {
      const std::string file = fmt::format("s{}.safetensors", s);
      const std::string tensor = fmt::format("t.{:02}", s);
      fs.add_file("m/" + file, safetensors({{tensor, "BF16", {s + 1}}}));
      map.emplace_back(tensor, file);
    }
    fs.add_file("m/model.safetensors.index.json", index_json(map));
    const Checkpoint c = load(fs);
    EXPECT_EQ(messages(c), std::vector<std::string>{"sub/missing-tensors.safetensors: named by "
                                                    "model.safetensors.index.json for 1 tensor, "
                                                    "but the file does not exist"})
      << listed << " listed shards" << joined(messages(c));
    EXPECT_EQ(c.shards.size(), listed + 2);
    EXPECT_EQ(c.tensors.size(), listed + 1);
    for (const auto& shard : c.shards) {
      EXPECT_TRUE(shard.in_index) << shard.file;
    }
  }
}

// A large checkpoint is merged and matched against its index in two halves side by side, cut at
// a name near the middle: with duplicates, tensors the index misses and entries the shards miss
// all over the names (thick around the middle, wherever the cut falls), one thread and two
// report the same problems, in the same order, and pick alike.
// An index that names 30,000 tensors no shard holds, and 1,300 tensors stored twice: the first
// 1,000 of each kind are listed one by one, then one line counts the rest, with one thread or
// two (the halves' lists are joined before they are cut).
TEST(Checkpoint, ProblemsPastAThousandOfAKindAreCounted)
{
  std::vector<TensorSpec> first, second;
  std::vector<std::pair<std::string, std::string>> map;
  for (int t = 0; t < 40000; ++t) {
    const std::string name = fmt::format("model.layers.{:05}.weight", t);
    if (t % 4 != 0) { // three in four are named but stored nowhere
      map.emplace_back(name, "model-00001-of-00002.safetensors");
      continue;
    }
    first.push_back({name, "BF16", {2}});
    map.emplace_back(name, "model-00001-of-00002.safetensors");
    if (t < 4 * 1300) {
      second.push_back({name, "BF16", {2}});
    }
  }
  MemoryFileSystem fs;
  fs.add_file("m/model-00001-of-00002.safetensors", safetensors(first));
  fs.add_file("m/model-00002-of-00002.safetensors", safetensors(second));
  fs.add_file("m/model.safetensors.index.json", index_json(map));
  for (unsigned threads : {1u, 2u}) {
    auto c = load_checkpoint(fs, "m", LoadOptions{threads});
    ASSERT_TRUE(c);
    size_t duplicates = 0, missing = 0;
    std::vector<std::string> counted;
    for (const auto& p : c->problems) {
      if (p.issue == CheckpointIssue::unindexed_shard) {
        continue; // the second file holds only copies
      }
      if (p.tensor.empty()) {
        counted.push_back(p.file + ": " + p.message);
      } else if (p.issue == CheckpointIssue::duplicate_tensor) {
        ++duplicates;
      } else if (p.issue == CheckpointIssue::index_missing_tensor) {
        ++missing;
      }
    }
    EXPECT_EQ(duplicates, 1000u);
    EXPECT_EQ(missing, 1000u);
    EXPECT_EQ(counted, (std::vector<std::string>{
                         "model-00002-of-00002.safetensors: 300 more tensors are stored in more "
                         "than one file (the first 1000 are listed)",
                         "model.safetensors.index.json: maps 29000 more tensors to files that do "
                         "not hold them (the first 1000 are listed)"}));
  }
}

// An index naming 1,100 files that do not exist: 1,000 lines, then one that counts the rest.
TEST(Checkpoint, MissingFilesPastAThousandAreCounted)
{
  MemoryFileSystem fs;
  fs.add_file("m/model-00001-of-00001.safetensors", safetensors({{"a.weight", "BF16", {2}}}));
  std::vector<std::pair<std::string, std::string>> map{
    {"a.weight", "model-00001-of-00001.safetensors"}};
  for (int f = 0; f < 1100; ++f) {
    map.emplace_back(fmt::format("b{:04}.weight", f), fmt::format("gone-{:04}.safetensors", f));
  }
  fs.add_file("m/model.safetensors.index.json", index_json(map));
  const Checkpoint c = load(fs);
  const std::vector<std::string> all = messages(c);
  ASSERT_EQ(all.size(), 1001u);
  EXPECT_EQ(all.front(), "gone-0000.safetensors: named by model.safetensors.index.json for 1 "
                         "tensor, but the file does not exist");
  EXPECT_EQ(all.back(), "model.safetensors.index.json: names 100 more files that do not exist "
                        "(the first 1000 are listed)");
}

TEST(Checkpoint, LargeCheckpointsMatchTheirIndexAlikeWhateverTheThreads)
{
  test::Lcg next(17);
  const std::vector<std::string> files{"model-00001-of-00003.safetensors",
                                       "model-00002-of-00003.safetensors",
                                       "model-00003-of-00003.safetensors"};
  std::vector<std::vector<TensorSpec>> shards(files.size());
  std::vector<std::pair<std::string, std::string>> map;
  for (size_t t = 0; t < 20000; ++t) {
    const std::string name = fmt::format("model.layers.{:05}.weight", t);
    const size_t home = next(files.size());
    const bool seam = t >= 9700 && t < 10300;
    size_t kind = seam ? next(4) : next(400); // 0-3: something wrong
    if (kind == 3 && home == 2 && t < 10000) {
      kind = 4; // the third shard's unnamed tensors are all in the second half
    }
    if (kind != 1) { // 1: stored nowhere
      shards[home].push_back({name, "BF16", {2}});
    }
    if (kind == 2) { // stored twice
      shards[(home + 1) % files.size()].push_back({name, "BF16", {2}});
    }
    if (kind != 3) { // 3: the index does not name it
      map.emplace_back(name, files[kind == 0 ? (home + 1) % files.size() : home]); // 0: wrong
    }
  }
  MemoryFileSystem fs;
  for (size_t s = 0; s < files.size(); ++s) {
    fs.add_file("m/" + files[s], safetensors(shards[s]));
  }
  fs.add_file("m/model.safetensors.index.json", index_json(map));
  auto one = load_checkpoint(fs, "m", LoadOptions{1});
  auto two = load_checkpoint(fs, "m", LoadOptions{2});
  ASSERT_TRUE(one && two);
  EXPECT_GT(one->problems.size(), 50u);
  EXPECT_EQ(messages(*one), messages(*two));
  ASSERT_EQ(one->tensors.size(), two->tensors.size());
  for (size_t i = 0; i < one->tensors.size(); ++i) {
    ASSERT_EQ(one->tensors[i].info->name(), two->tensors[i].info->name());
    ASSERT_EQ(one->shard_of(one->tensors[i]), two->shard_of(two->tensors[i]))
      << one->tensors[i].info->name();
  }
  std::set<CheckpointIssue> issues;
  for (const auto& p : one->problems) {
    issues.insert(p.issue);
  }
  EXPECT_EQ(issues, (std::set<CheckpointIssue>{CheckpointIssue::index_missing_tensor,
                                               CheckpointIssue::unindexed_tensors,
                                               CheckpointIssue::duplicate_tensor}));
}

namespace {

// Shows a MemoryFileSystem and counts how its index is read; from the index's second opening on
// it can show another file's text there (an index replaced while qcheck runs).
class IndexWatcher final : public FileSystem
{
public:
  IndexWatcher(const MemoryFileSystem& base, std::string index)
    : m_base(base), m_index(std::move(index))
  {
  }
  void show_later(std::string path) { m_later = std::move(path); }

  FileInfo stat(const std::string& path) const override { return m_base.stat(path); }
  Expected<std::vector<std::string>> list_dir(const std::string& path) const override
  {
    return m_base.list_dir(path);
  }
  Expected<std::unique_ptr<ByteSource>> open(const std::string& path) const override
  {
    if (path != m_index) {
      return m_base.open(path);
    }
    auto source = m_base.open(++opens > 1 && !m_later.empty() ? m_later : path);
    if (!source) {
      return source;
    }
    return std::unique_ptr<ByteSource>(std::make_unique<Counted>(std::move(*source), *this));
  }

  mutable int opens = 0;
  mutable int whole_reads = 0;     // read_all_padded
  mutable int window_reads = 0;    // read_at (two threads may read at once: counted under a lock)
  mutable size_t largest_read = 0; // of read_at's
  mutable std::mutex reads_lock;

private:
  class Counted final : public ByteSource
  {
  public:
    Counted(std::unique_ptr<ByteSource> inner, const IndexWatcher& watcher)
      : m_inner(std::move(inner)), m_watcher(watcher)
    {
    }
    uint64_t size() const override { return m_inner->size(); }
    Expected<void> read_at(uint64_t offset, std::span<char> out) const override
    {
      {
        const std::lock_guard lock(m_watcher.reads_lock);
        ++m_watcher.window_reads;
        m_watcher.largest_read = std::max(m_watcher.largest_read, out.size());
      }
      return m_inner->read_at(offset, out);
    }
    Expected<PaddedBytes> read_all_padded(size_t padding) const override
    {
      ++m_watcher.whole_reads;
      return m_inner->read_all_padded(padding);
    }

  private:
    std::unique_ptr<ByteSource> m_inner;
    const IndexWatcher& m_watcher;
  };

  const MemoryFileSystem& m_base;
  std::string m_index;
  std::string m_later;
};

// `count` tensors in three shards (in turn), with names long enough that their index is read in
// several windows.
struct LongIndex
{
  MemoryFileSystem fs;
  std::vector<std::pair<std::string, std::string>> map; // in name order
};

LongIndex
long_index(size_t count)
{
  LongIndex out;
  std::vector<std::vector<TensorSpec>> shards(3);
  for (size_t t = 0; t < count; ++t) {
    const std::string name =
      fmt::format("model.layers.{:03}.mlp.experts.{:03}.down_proj.weight", t / 256, t % 256);
    shards[t % 3].push_back({name, "BF16", {2}});
    out.map.emplace_back(name, fmt::format("model-{:05}-of-00003.safetensors", t % 3 + 1));
  }
  for (size_t s = 0; s < shards.size(); ++s) {
    out.fs.add_file(fmt::format("m/model-{:05}-of-00003.safetensors", s + 1),
                    safetensors(shards[s]));
  }
  return out;
}

// What loading says when `file` holds `held` and the index names `named` in its place.
std::vector<std::string>
renamed_tensor_messages(const std::string& file, const std::string& held, const std::string& named)
{
  return {file + ": holds 1 tensor the index does not name (first: '" + held + "')",
          "model.safetensors.index.json: maps '" + named + "' to " + file +
            ", which does not hold it"};
}

} // namespace

namespace {

// Loads long_index(count) with its index written by `write` on one and two threads (the
// larger count in halves): no problems, the shards' placement, the index opened once and never
// read whole. Gives the fewest and most window reads seen, to be checked against the reader's.
std::pair<int, int>
index_read_once(size_t count,
                std::string (*write)(const std::vector<std::pair<std::string, std::string>>&),
                std::string& text)
{
  LongIndex c = long_index(count);
  text = write(c.map);
  c.fs.add_file("m/model.safetensors.index.json", text);
  std::pair<int, int> reads{INT_MAX, 0};
  for (const unsigned threads : {1u, 2u}) {
    const IndexWatcher watcher(c.fs, "m/model.safetensors.index.json");
    auto loaded = load_checkpoint(watcher, "m", LoadOptions{threads});
    EXPECT_TRUE(loaded);
    if (!loaded) {
      continue;
    }
    EXPECT_TRUE(loaded->problems.empty()) << joined(messages(*loaded));
    EXPECT_EQ(placement(*loaded), c.map);
    EXPECT_TRUE(loaded->has_index);
    EXPECT_EQ(watcher.opens, 1);
    EXPECT_EQ(watcher.whole_reads, 0);
    reads = {std::min(reads.first, watcher.window_reads),
             std::max(reads.second, watcher.window_reads)};
  }
  return reads;
}

// Loads one shard holding `map`'s tensors, all in the file map[0] names, with `map` as its
// index written by `write` (one thread): no problems, the index's placement. Gives how many
// times the index was read whole.
int
one_shard_whole_reads(const std::vector<std::pair<std::string, std::string>>& map,
                      std::string (*write)(const std::vector<std::pair<std::string, std::string>>&))
{
  std::vector<TensorSpec> specs;
  for (const auto& [tensor, file] : map) {
    specs.push_back({tensor, "BF16", {2}});
  }
  MemoryFileSystem fs;
  fs.add_file("m/" + map[0].second, safetensors(specs));
  fs.add_file("m/model.safetensors.index.json", write(map));
  const IndexWatcher watcher(fs, "m/model.safetensors.index.json");
  auto loaded = load_checkpoint(watcher, "m", LoadOptions{1});
  EXPECT_TRUE(loaded);
  if (loaded) {
    EXPECT_TRUE(loaded->problems.empty()) << joined(messages(*loaded));
    EXPECT_EQ(placement(*loaded), map);
  }
  return watcher.whole_reads;
}

} // namespace

// An index in name order that names what the shards hold is read once, a window at a time,
// never whole: its names are checked against the shards' by hash. (Not indented as
// json.dumps(indent=2) indents: the first bytes are read once more, to tell.)
TEST(Checkpoint, IndexInNameOrderIsReadOnceAWindowAtATime)
{
  for (const size_t count : {size_t{3}, size_t{20000}}) { // the second: > 1 MiB
    std::string text;
    const auto [fewest_seen, most_seen] = index_read_once(count, &index_json, text);
    // The first window is read full; each after it keeps under 1/16 of a window unread.
    const size_t fewest = 1 + (text.size() + k_index_window - 1) / k_index_window;
    const size_t later = k_index_window - k_index_window / 16;
    const size_t most =
      2 + (text.size() - std::min(text.size(), k_index_window) + later - 1) / later;
    EXPECT_GE(fewest_seen, static_cast<int>(fewest)) << count;
    EXPECT_LE(most_seen, static_cast<int>(most)) << count;
  }
  // A tensor sent to the wrong file needs no second reading.
  LongIndex c = long_index(5);
  c.map[1].second = c.map[0].second;
  c.fs.add_file("m/model.safetensors.index.json", index_json(c.map));
  const IndexWatcher watcher(c.fs, "m/model.safetensors.index.json");
  auto loaded = load_checkpoint(watcher, "m", LoadOptions{2});
  ASSERT_TRUE(loaded);
  EXPECT_EQ(messages(*loaded),
            std::vector<std::string>{fmt::format(
              "model.safetensors.index.json: maps '{}' to model-00001-of-00003.safetensors, which "
              "does not hold it (it is in model-00002-of-00003.safetensors)",
              c.map[1].first)});
  EXPECT_EQ(watcher.opens, 1);
  EXPECT_EQ(watcher.whole_reads, 0);
}

// A name longer than a window (real ones are under 200 bytes) leaves the windowed reading to
// the whole-text reader, which loads the same placement.
TEST(Checkpoint, IndexNameLongerThanAWindowIsReadWhole)
{
  for (const size_t length : {k_index_window / 16 - 64, k_index_window + 1}) {
    const std::string name = "model.embed." + std::string(length, 'x') + ".weight";
    // After enough short entries that the long one starts late in the first window.
    std::vector<std::pair<std::string, std::string>> map;
    for (int i = 0; i < 1000; ++i) {
      map.emplace_back(fmt::format("a.{:04}.weight", i), "model-00001-of-00001.safetensors");
    }
    map.emplace_back(name, "model-00001-of-00001.safetensors");
    // A member of up to 1/16 of a window always fits one; one longer than a window never does.
    EXPECT_EQ(one_shard_whole_reads(map, &index_json), length < k_index_window ? 0 : 1) << length;
  }
}

// An index whose names differ from the shards' in one byte, wherever it is and whatever the
// name's length, is read again whole and joined by name: the hashes see every byte.
TEST(Checkpoint, IndexNamingOtherTensorsIsReadAgainWhole)
{
  const std::string file = "model.safetensors";
  for (const size_t length : {1, 2, 7, 8, 9, 15, 16, 17, 24, 31, 32, 33, 47, 48, 49}) {
    for (size_t at = 0; at < length; ++at) {
      const std::string name(length, 'n');
      std::string other = name;
      other[at] = 'o';
      MemoryFileSystem fs;
      fs.add_file("m/" + file, safetensors({{"a", "BF16", {2}}, {name, "BF16", {2}}}));
      fs.add_file("m/model.safetensors.index.json", index_json({{"a", file}, {other, file}}));
      const IndexWatcher watcher(fs, "m/model.safetensors.index.json");
      auto loaded = load_checkpoint(watcher, "m", LoadOptions{1});
      ASSERT_TRUE(loaded);
      ASSERT_EQ(messages(*loaded), renamed_tensor_messages(file, name, other))
        << length << " " << at;
      EXPECT_EQ(watcher.opens, 2);
      EXPECT_EQ(watcher.whole_reads, 1);
    }
  }
  // More entries than tensors: read whole without trying the names.
  auto fs = two_shards();
  auto map = k_full_map;
  map.emplace_back("d.weight", "model-00002-of-00002.safetensors");
  fs.add_file("m/model.safetensors.index.json", index_json(map));
  const IndexWatcher watcher(fs, "m/model.safetensors.index.json");
  auto loaded = load_checkpoint(watcher, "m", LoadOptions{2});
  ASSERT_TRUE(loaded);
  EXPECT_EQ(messages(*loaded),
            std::vector<std::string>{"model.safetensors.index.json: maps 'd.weight' to "
                                     "model-00002-of-00002.safetensors, which does not hold it"});
  EXPECT_EQ(watcher.whole_reads, 1);
}

// Long names in name order, each sharing most of its start with the one before: a byte that
// differs from the shard's name is seen wherever it is, in names of hundreds of bytes too.
TEST(Checkpoint, LongIndexNamesDifferingInOneByteAreReadAgainWhole)
{
  const std::string file = "model.safetensors";
  for (const size_t length : {15, 16, 17, 31, 32, 33, 48, 49, 239, 240, 241, 256, 300}) {
    const std::string start(length, 'n');
    const std::string first = start;
    const std::string second = start + "a";
    const std::string third = start + "b";
    const auto checkpoint = [&](const std::string& last) {
      MemoryFileSystem fs;
      fs.add_file("m/" + file,
                  safetensors({{first, "BF16", {2}}, {second, "BF16", {2}}, {third, "BF16", {2}}}));
      fs.add_file("m/model.safetensors.index.json",
                  index_json({{first, file}, {second, file}, {last, file}}));
      return fs;
    };
    // The same names: joined from the hashes, one reading.
    {
      const MemoryFileSystem fs = checkpoint(third);
      const IndexWatcher watcher(fs, "m/model.safetensors.index.json");
      auto loaded = load_checkpoint(watcher, "m", LoadOptions{1});
      ASSERT_TRUE(loaded);
      EXPECT_TRUE(loaded->problems.empty()) << joined(messages(*loaded));
      EXPECT_EQ(watcher.whole_reads, 0) << length;
    }
    for (size_t at = 0; at < length; at += at < 50 || at + 20 > length ? 1 : 7) {
      // The last name differs from the shard's at `at`, inside the start it shares with the
      // one before, and still sorts after it: the index is read a window at a time first
      // (after its first bytes, read to tell whether it is indented).
      std::string other = third;
      other[at] = 'o';
      const MemoryFileSystem fs = checkpoint(other);
      const IndexWatcher watcher(fs, "m/model.safetensors.index.json");
      auto loaded = load_checkpoint(watcher, "m", LoadOptions{1});
      ASSERT_TRUE(loaded);
      EXPECT_EQ(watcher.window_reads, 2) << length << " " << at;
      EXPECT_EQ(watcher.whole_reads, 1) << length << " " << at;
      EXPECT_EQ(messages(*loaded), renamed_tensor_messages(file, third, other))
        << length << " " << at;
    }
  }
}

// An index written as json.dumps(indent=2) writes it, naming what the shards hold, is compared
// with the merged tensors as text: read once, a window at a time by each half, never whole.
TEST(Checkpoint, IndentedIndexIsComparedAsText)
{
  for (const size_t count : {size_t{3}, size_t{20000}}) {
    std::string text;
    const auto [fewest_seen, most_seen] = index_read_once(count, &indented_index_json, text);
    // 18 reads tell the form (the start, the end, 16 samples of names); then each half reads
    // its entries, the first perhaps a window past them.
    const size_t windows = (text.size() + k_indented_window - 1) / k_indented_window;
    EXPECT_GE(fewest_seen, static_cast<int>(18 + windows)) << count;
    EXPECT_LE(most_seen, static_cast<int>(20 + windows)) << count;
  }
}

// Whatever differs between an indented index and the shards, the text is read whole and joined
// by name: the report is the one the same entries give written compactly (read by entries).
TEST(Checkpoint, IndentedIndexThatDiffersReportsAsWrittenAnyOtherWay)
{
  using Map = std::vector<std::pair<std::string, std::string>>;
  for (const size_t count : {size_t{5}, size_t{20000}}) {
    const LongIndex c = long_index(count);
    // The second half (two threads) starts at the 10000th name.
    const std::vector<size_t> places =
      count == 5 ? std::vector<size_t>{0, 1, 2, 3, 4} : std::vector<size_t>{0, 9999, 10000, 19999};
    struct Variant
    {
      std::string what;
      Map map;
      bool reported; // whether it gives problems: a repeat or a swap is still the same map
    };
    std::vector<Variant> variants;
    for (const size_t k : places) {
      const auto with = [&](const std::string& what, const auto& change, bool reported = true) {
        Map map = c.map;
        change(map);
        variants.push_back({fmt::format("{} at {}", what, k), std::move(map), reported});
      };
      for (const size_t at : {size_t{0}, size_t{20}, c.map[k].first.size() - 1}) {
        with(fmt::format("byte {} of the name", at), [&](Map& m) { m[k].first[at] ^= 1; });
      }
      with("another shard", [&](Map& m) { m[k].second = c.map[(k + 1) % count].second; });
      with("a file not there", [&](Map& m) { m[k].second = "model-00009-of-00003.safetensors"; });
      with("dropped", [&](Map& m) { m.erase(m.begin() + static_cast<std::ptrdiff_t>(k)); });
      with(
        "named twice", [&](Map& m) { m.insert(m.begin() + static_cast<std::ptrdiff_t>(k), m[k]); },
        false);
      with("named twice, last elsewhere", [&](Map& m) {
        m.insert(m.begin() + static_cast<std::ptrdiff_t>(k) + 1, m[k]);
        m[k + 1].second = c.map[(k + 1) % count].second;
      });
      with("one more after", [&](Map& m) {
        m.insert(m.begin() + static_cast<std::ptrdiff_t>(k) + 1, {m[k].first + "x", m[k].second});
      });
      if (k + 1 < count) {
        with(
          "swapped with the next", [&](Map& m) { std::swap(m[k], m[k + 1]); }, false);
      }
    }
    for (const auto& [what, map, reported] : variants) {
      for (const unsigned threads : {1u, 2u}) {
        MemoryFileSystem compact = c.fs;
        compact.add_file("m/model.safetensors.index.json", index_json(map));
        MemoryFileSystem indented = c.fs;
        indented.add_file("m/model.safetensors.index.json", indented_index_json(map));
        const IndexWatcher watcher(indented, "m/model.safetensors.index.json");
        auto expected = load_checkpoint(compact, "m", LoadOptions{threads});
        auto loaded = load_checkpoint(watcher, "m", LoadOptions{threads});
        ASSERT_TRUE(expected && loaded);
        EXPECT_EQ(expected->problems.empty(), !reported) << what;
        EXPECT_EQ(messages(*loaded), messages(*expected)) << what << ", " << threads;
        EXPECT_EQ(placement(*loaded), placement(*expected)) << what << ", " << threads;
        EXPECT_EQ(watcher.whole_reads, 1) << what << ", " << threads;
      }
    }
  }
}

// Names or file names that JSON would spell with escapes are never compared as text: a name
// holding a quote and a newline would write, unescaped, entries for other tensors. Such an
// index is read by entries, as when written compactly.
TEST(Checkpoint, IndentedIndexWithNamesNeedingEscapesIsReadByEntries)
{
  struct Case
  {
    std::string what;
    std::vector<std::pair<std::string, std::vector<TensorSpec>>> shards;
    std::string index;   // indented: what the unescaped names would write
    std::string compact; // the same entries, as JSON reads them
  };
  const std::string quoted = R"(a\": \"model.safetensors\",\n    \"b)"; // in the header's JSON
  const std::string file = "x.safetensors\",\n    \"u\": \"x.safetensors";
  const std::vector<Case> cases{
    {"a name",
     {{"model.safetensors", {{"a", "BF16", {2}}, {quoted, "BF16", {2}}}}},
     indented_index_json(
       {{"a", "model.safetensors"}, {"a\": \"model.safetensors\",\n    \"b", "model.safetensors"}}),
     index_json({{"a", "model.safetensors"}, {"b", "model.safetensors"}})},
    {"a file name",
     {{file, {{"t", "BF16", {2}}}}},
     indented_index_json({{"t", file}}),
     index_json({{"t", "x.safetensors"}, {"u", "x.safetensors"}})},
  };
  for (const Case& k : cases) {
    MemoryFileSystem indented, compact;
    for (const auto& [name, specs] : k.shards) {
      indented.add_file("m/" + name, safetensors(specs));
      compact.add_file("m/" + name, safetensors(specs));
    }
    indented.add_file("m/model.safetensors.index.json", k.index);
    compact.add_file("m/model.safetensors.index.json", k.compact);
    auto expected = load_checkpoint(compact, "m", LoadOptions{1});
    auto loaded = load_checkpoint(indented, "m", LoadOptions{1});
    ASSERT_TRUE(expected && loaded);
    EXPECT_FALSE(expected->problems.empty()) << k.what;
    EXPECT_EQ(messages(*loaded), messages(*expected)) << k.what;
    EXPECT_EQ(placement(*loaded), placement(*expected)) << k.what;
  }
  // An escaped name that reads as a plain one: the entries are read, and agree.
  MemoryFileSystem fs;
  fs.add_file("m/model.safetensors", safetensors({{R"(a\u002eweight)", "BF16", {2}}}));
  fs.add_file("m/model.safetensors.index.json",
              indented_index_json({{"a.weight", "model.safetensors"}}));
  const IndexWatcher watcher(fs, "m/model.safetensors.index.json");
  auto loaded = load_checkpoint(watcher, "m", LoadOptions{1});
  ASSERT_TRUE(loaded);
  EXPECT_TRUE(loaded->problems.empty()) << joined(messages(*loaded));
  EXPECT_EQ(placement(*loaded),
            (std::vector<std::pair<std::string, std::string>>{{"a.weight", "model.safetensors"}}));
  EXPECT_EQ(watcher.whole_reads, 0);
}

// An indented index in file order (as huggingface_hub's example writes one) is never compared
// with the tensors, which come in name order: it is read at once by entries, as before.
TEST(Checkpoint, IndentedIndexInFileOrderIsReadByEntries)
{
  LongIndex c = long_index(20000);
  std::stable_sort(c.map.begin(), c.map.end(),
                   [](const auto& a, const auto& b) { return a.second < b.second; });
  const std::string text = indented_index_json(c.map);
  c.fs.add_file("m/model.safetensors.index.json", text);
  const IndexWatcher watcher(c.fs, "m/model.safetensors.index.json");
  auto loaded = load_checkpoint(watcher, "m", LoadOptions{2});
  ASSERT_TRUE(loaded);
  EXPECT_TRUE(loaded->problems.empty()) << joined(messages(*loaded));
  std::sort(c.map.begin(), c.map.end());
  EXPECT_EQ(placement(*loaded), c.map);
  EXPECT_EQ(watcher.opens, 1);
  EXPECT_EQ(watcher.whole_reads, 1);
  // Read by entries (a window of k_index_window at a time), not compared (k_indented_window).
  EXPECT_EQ(watcher.largest_read, k_index_window);
}

// A tensor in two shards writes two entries of one name, of which JSON keeps the last: such a
// text is read whole, and the copy the index picks is reported as any other way.
TEST(Checkpoint, IndentedIndexOfATensorInTwoShardsIsReadWhole)
{
  MemoryFileSystem indented, compact;
  for (MemoryFileSystem* fs : {&indented, &compact}) {
    fs->add_file("m/model-00001-of-00002.safetensors", safetensors(k_shard1));
    fs->add_file("m/model-00002-of-00002.safetensors",
                 safetensors({{"b.weight", "BF16", {2}}, {"c.weight", "BF16", {2, 2}}}));
  }
  const std::vector<std::pair<std::string, std::string>> map{
    {"a.weight", "model-00001-of-00002.safetensors"},
    {"b.weight", "model-00001-of-00002.safetensors"},
    {"b.weight", "model-00002-of-00002.safetensors"},
    {"c.weight", "model-00002-of-00002.safetensors"}};
  indented.add_file("m/model.safetensors.index.json", indented_index_json(map));
  compact.add_file("m/model.safetensors.index.json", index_json(map));
  const IndexWatcher watcher(indented, "m/model.safetensors.index.json");
  auto expected = load_checkpoint(compact, "m", LoadOptions{1});
  auto loaded = load_checkpoint(watcher, "m", LoadOptions{1});
  ASSERT_TRUE(expected && loaded);
  EXPECT_EQ(messages(*expected),
            std::vector<std::string>{"model-00002-of-00002.safetensors: tensor 'b.weight' is "
                                     "stored in both model-00001-of-00002.safetensors and "
                                     "model-00002-of-00002.safetensors; the loader uses "
                                     "model-00002-of-00002.safetensors"});
  EXPECT_EQ(messages(*loaded), messages(*expected));
  EXPECT_EQ(placement(*loaded), placement(*expected));
  EXPECT_EQ(watcher.whole_reads, 1);
}

// An entry longer than the comparison's window has the index read whole, which agrees.
TEST(Checkpoint, IndentedIndexEntryLongerThanAWindowIsReadWhole)
{
  for (const size_t length : {k_indented_window - 64, k_indented_window + 1}) {
    std::vector<std::pair<std::string, std::string>> map{
      {"a.weight", "model.safetensors"},
      {"b." + std::string(length, 'x') + ".weight", "model.safetensors"},
      {"c.weight", "model.safetensors"}};
    EXPECT_EQ(one_shard_whole_reads(map, &indented_index_json), length < k_indented_window ? 0 : 1)
      << length;
  }
}

// Names out of order, or in a weight_map that needs the whole text to tell (not ASCII), are read
// whole at once.
TEST(Checkpoint, IndexOutOfOrderOrNotAsciiIsReadWhole)
{
  for (const std::string& text : std::vector<std::string>{
         index_json({k_full_map[1], k_full_map[0], k_full_map[2]}),
         R"({"weight_map":{"a.weight":"model-00001-of-00002.safetensors",)"
         R"("b.weight":"model-00001-of-00002.safetensors",)"
         R"("c.weight":"model-00002-of-00002.safetensors"},"n":"\u00e9 é"})"}) {
    auto fs = two_shards();
    fs.add_file("m/model.safetensors.index.json", text);
    const IndexWatcher watcher(fs, "m/model.safetensors.index.json");
    auto loaded = load_checkpoint(watcher, "m", LoadOptions{2});
    ASSERT_TRUE(loaded);
    EXPECT_TRUE(loaded->problems.empty()) << joined(messages(*loaded));
    EXPECT_EQ(placement(*loaded), k_full_map);
    EXPECT_EQ(watcher.opens, 1);
    EXPECT_EQ(watcher.whole_reads, 1);
  }
}

// Bytes compare unsigned, as Python orders names: "...\xc3\xa9" (é) sorts after "...a", so an
// index listing it first is out of order and is sorted before the join.
TEST(Checkpoint, IndexOrderedByUnsignedBytes)
{
  const std::string prefix = "model.layers.0.mlp.experts.";
  const std::string file = "model.safetensors";
  const std::string accented = prefix + "\xc3\xa9.weight";
  const std::string plain = prefix + "a.weight";
  const std::vector<std::pair<std::string, std::string>> sorted{{plain, file}, {accented, file}};
  for (const bool reversed : {false, true}) {
    MemoryFileSystem fs;
    fs.add_file("m/" + file, safetensors({{accented, "BF16", {2}}, {plain, "BF16", {2}}}));
    auto map = sorted;
    if (reversed) {
      std::swap(map[0], map[1]);
    }
    fs.add_file("m/model.safetensors.index.json", index_json(map));
    const Checkpoint c = load(fs);
    EXPECT_TRUE(c.problems.empty()) << reversed << joined(messages(c));
    EXPECT_EQ(placement(c), sorted) << reversed;
  }
}

// The second reading finds other files: the index changed meanwhile. That is said, and the
// tensors are not joined with either reading.
TEST(Checkpoint, IndexChangedBetweenItsReadingsIsReported)
{
  auto fs = two_shards();
  auto map = k_full_map;
  map[2].first = "d.weight"; // as many entries as tensors, one name other: read again
  fs.add_file("m/model.safetensors.index.json", index_json(map));
  fs.add_file("elsewhere/index.json", index_json({{"a.weight", "model-9.safetensors"}}));
  IndexWatcher watcher(fs, "m/model.safetensors.index.json");
  watcher.show_later("elsewhere/index.json");
  auto loaded = load_checkpoint(watcher, "m", LoadOptions{2});
  ASSERT_TRUE(loaded);
  EXPECT_EQ(messages(*loaded),
            std::vector<std::string>{"model.safetensors.index.json: changed while it was read; its "
                                     "entries are not compared with the shards"});
  EXPECT_EQ(loaded->problems[0].issue, CheckpointIssue::index_unreadable);
  EXPECT_EQ(placement(*loaded), k_full_map);
  EXPECT_EQ(watcher.opens, 2);
}
