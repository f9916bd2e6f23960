#include <gtest/gtest.h>

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
  EXPECT_EQ(c.tensors[2].info->name, "c.weight");
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
  EXPECT_EQ(c->tensors[0].info->name, "c.weight");
}

TEST(Checkpoint, ExtraShardsOutsideTheNamingScheme)
{
  auto fs = two_shards();
  fs.add_file("m/model_extra_tensors.safetensors", safetensors({{"mtp.fc.weight", "BF16", {2, 4}}}));
  auto map = k_full_map;
  map.emplace_back("mtp.fc.weight", "model_extra_tensors.safetensors");
  fs.add_file("m/model.safetensors.index.json", index_json(map));
  const Checkpoint c = load(fs);
  EXPECT_TRUE(c.problems.empty());
  EXPECT_EQ(c.tensors.size(), 4u);
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
                            "model.safetensors.index.json for 1 tensors, but the file does not "
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
  fs.add_file("m/mtp.safetensors", safetensors({{"model.layers.92.eh_proj.weight", "BF16", {2, 4}}}));
  fs.add_file("m/model.safetensors.index.json", index_json(k_full_map));
  const Checkpoint c = load(fs);
  ASSERT_EQ(c.problems.size(), 1u);
  EXPECT_EQ(c.problems[0].issue, CheckpointIssue::unindexed_shard);
  EXPECT_EQ(messages(c)[0], "mtp.safetensors: is not named in model.safetensors.index.json; vLLM "
                            "and SGLang load only the files the index names, so its tensors are "
                            "never loaded");
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
  EXPECT_EQ(messages(c)[0], "model-00002-of-00002.safetensors: tensor 'a.weight' is stored in both "
                            "model-00001-of-00002.safetensors and model-00002-of-00002.safetensors; "
                            "the loader uses model-00002-of-00002.safetensors");
  EXPECT_EQ(c.shard_of(c.tensors[0]), "model-00002-of-00002.safetensors");
}

TEST(Checkpoint, IndexPathLeavingTheFolderIsRefused)
{
  for (const std::string path : {"../../etc/passwd", "/etc/passwd", "a/../../x.safetensors",
                                 "a//b.safetensors"}) {
    auto fs = two_shards();
    auto map = k_full_map;
    map.emplace_back("evil.weight", path);
    fs.add_file("m/model.safetensors.index.json", index_json(map));
    const Checkpoint c = load(fs);
    ASSERT_EQ(c.problems.size(), 1u) << path;
    EXPECT_EQ(c.problems[0].issue, CheckpointIssue::index_path_escapes);
    EXPECT_EQ(messages(c)[0], "model.safetensors.index.json: weight_map sends 'evil.weight' to '" +
                                path + "', a path outside the model folder; refused");
    EXPECT_EQ(c.shards.size(), 2u); // never opened
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

TEST(Checkpoint, IndexNotJson)
{
  auto fs = two_shards();
  fs.add_file("m/model.safetensors.index.json", "{\"weight_map\": ");
  const Checkpoint c = load(fs);
  ASSERT_GE(c.problems.size(), 1u);
  EXPECT_EQ(c.problems[0].issue, CheckpointIssue::index_unreadable);
  EXPECT_EQ(messages(c)[0], "model.safetensors.index.json: not valid JSON");
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

TEST(Checkpoint, MissingFolderIsAnError)
{
  MemoryFileSystem fs;
  auto c = load_checkpoint(fs, "nope");
  ASSERT_FALSE(c);
  EXPECT_EQ(c.error(), "nope: no such file or directory");
}
