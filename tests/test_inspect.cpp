// write_inspect_json streams what nlohmann's dump(2) printed when inspect built one JSON value:
// compared with that construction (kept here as the reference) on every fixture, on a module
// filter, and on names that need escapes.
#include <gtest/gtest.h>

#include <algorithm>
#include <filesystem>
#include <map>
#include <nlohmann/json.hpp>
#include <string>

#include "builder.hpp"
#include "qcheck/inspect.hpp"
#include "qcheck/patterns.hpp"

using namespace qcheck;

namespace {

std::string
reference_json(const Checkpoint& checkpoint, const Inventory& inventory,
               const InspectOptions& options)
{
  using Json = nlohmann::ordered_json;
  Json tensors = Json::array();
  Json modules = Json::array();
  for (const Module& module : inventory.modules) {
    if (!options.module_glob.empty() && !fnmatch(options.module_glob, module.name)) {
      continue;
    }
    Json counts = Json::object();
    std::map<std::string_view, size_t> by_dtype;
    for (uint32_t index : module.tensors) {
      ++by_dtype[checkpoint.tensors[index].info->dtype_text()];
    }
    for (const auto& [dtype, n] : by_dtype) {
      counts[dtype] = n;
    }
    modules.push_back({{"name", module.name},
                       {"role", to_string(module.role)},
                       {"storage", to_string(module.storage)},
                       {"family", to_string(module.family)},
                       {"tensors", module.tensors.size()},
                       {"dtypes", counts},
                       {"evidence", module_evidence(checkpoint, module)}});
    for (uint32_t index : module.tensors) {
      const Tensor& tensor = checkpoint.tensors[index];
      std::vector<std::string> siblings;
      for (uint32_t other : module.tensors) {
        if (other != index) {
          siblings.emplace_back(split_tensor_name(checkpoint.tensors[other].info->name()).second);
        }
      }
      tensors.push_back({{"name", tensor.info->name()},
                         {"module", module.name},
                         {"dtype", tensor.info->dtype_text()},
                         {"shape", tensor.info->shape()},
                         {"shard", checkpoint.shard_of(tensor)},
                         {"siblings", siblings}});
    }
  }
  Json shards = Json::array();
  for (const ShardFile& shard : checkpoint.shards) {
    shards.push_back({{"file", shard.file},
                      {"in_index", shard.in_index},
                      {"header_bytes", shard.header.header_size},
                      {"tensors", shard.header.tensors.size()}});
  }
  return Json{{"shards", shards}, {"modules", modules}, {"tensors", tensors}}.dump(2) + "\n";
}

void
expect_same(const FileSystem& fs, const std::string& path, const InspectOptions& options)
{
  auto checkpoint = load_checkpoint(fs, path);
  ASSERT_TRUE(checkpoint) << path;
  const Inventory inventory = build_inventory(*checkpoint);
  size_t pieces = 0;
  std::string streamed;
  write_inspect_json(*checkpoint, inventory, options, [&](std::string_view piece) {
    ++pieces;
    streamed += piece;
  });
  EXPECT_EQ(streamed, reference_json(*checkpoint, inventory, options)) << path;
  EXPECT_EQ(render_inspect_json(*checkpoint, inventory, options), streamed);
  EXPECT_GE(pieces, 1u);
}

} // namespace

TEST(Inspect, JsonIsWhatTheDomDumpPrintedOnEveryFixture)
{
  DiskFileSystem disk;
  size_t folders = 0;
  for (const auto& entry :
       std::filesystem::recursive_directory_iterator(std::string(QCHECK_FIXTURES))) {
    if (entry.is_directory() && std::filesystem::exists(entry.path() / "config.json")) {
      expect_same(disk, entry.path().string(), {});
      ++folders;
    }
  }
  EXPECT_GT(folders, 8u);
  expect_same(disk, std::string(QCHECK_FIXTURES) + "/glm-nvfp4-nextn", {"*.experts.1*"});
  expect_same(disk, std::string(QCHECK_FIXTURES) + "/glm-nvfp4-nextn", {"no.such.module"});
}

TEST(Inspect, JsonEscapesNamesAsTheDomDumpDid)
{
  // The builder pastes names into the header as they are: these are JSON-escaped spellings.
  MemoryFileSystem fs;
  fs.add_file("m/model.safetensors", test::safetensors({{R"(a.\"q\\uote\".weight)", "BF16", {2, 3}},
                                                        {R"(b.tab\t\u0001.weight)", "F32", {}},
                                                        {R"(c.\u00e9t\u00e9.weight)", "U8", {4}}}));
  auto checkpoint = load_checkpoint(fs, "m");
  ASSERT_TRUE(checkpoint);
  ASSERT_EQ(checkpoint->tensors.size(), 3u);
  const std::string json = render_inspect_json(*checkpoint, build_inventory(*checkpoint), {});
  EXPECT_NE(json.find(R"("a.\"q\\uote\".weight")"), std::string::npos) << json;
  EXPECT_NE(json.find(R"("b.tab\t\u0001.weight")"), std::string::npos) << json;
  EXPECT_NE(json.find("\"c.\xc3\xa9t\xc3\xa9.weight\""), std::string::npos) << json;
  expect_same(fs, "m", {});
}

// A large inventory comes out in many pieces, each about the flush size.
TEST(Inspect, JsonIsHandedOverInPieces)
{
  std::vector<test::TensorSpec> tensors;
  for (int i = 0; i < 3000; ++i) {
    tensors.push_back(
      {"model.layers." + std::to_string(i) + ".mlp.down_proj.weight", "BF16", {8, 8}});
  }
  MemoryFileSystem fs;
  fs.add_file("m/model.safetensors", test::safetensors(tensors));
  auto checkpoint = load_checkpoint(fs, "m");
  ASSERT_TRUE(checkpoint);
  const Inventory inventory = build_inventory(*checkpoint);
  size_t pieces = 0, largest = 0, total = 0;
  write_inspect_json(*checkpoint, inventory, {}, [&](std::string_view piece) {
    ++pieces;
    largest = std::max(largest, piece.size());
    total += piece.size();
  });
  EXPECT_GT(pieces, 10u);
  EXPECT_LT(largest, 80u * 1024);
  EXPECT_EQ(total, render_inspect_json(*checkpoint, inventory, {}).size());
}

TEST(Inspect, TextSummaryCountsInTheRightNumber)
{
  MemoryFileSystem one;
  one.add_file("m/model.safetensors", test::safetensors({{"lm_head.weight", "BF16", {2, 3}}}));
  auto checkpoint = load_checkpoint(one, "m");
  ASSERT_TRUE(checkpoint);
  std::string text = render_inspect_text(*checkpoint, build_inventory(*checkpoint), {});
  EXPECT_TRUE(text.ends_with("1 tensor in 1 module, 1 shard\n")) << text;

  MemoryFileSystem two;
  two.add_file("m/model.safetensors", test::safetensors({{"lm_head.weight", "BF16", {2, 3}},
                                                         {"embed.weight", "BF16", {2, 3}}}));
  checkpoint = load_checkpoint(two, "m");
  ASSERT_TRUE(checkpoint);
  text = render_inspect_text(*checkpoint, build_inventory(*checkpoint), {});
  EXPECT_TRUE(text.ends_with("2 tensors in 2 modules, 1 shard\n")) << text;
}

// Names and dtypes come from the files: a line break or ESC in them is shown as \xNN, so they
// can neither forge a line of output nor reach the terminal (as lint's text output does).
TEST(Inspect, TextShowsControlCharactersEscaped)
{
  MemoryFileSystem fs;
  // JSON-escaped spellings: a line break and ESC in names, a line break in an unknown dtype.
  fs.add_file("m/model.safetensors", test::safetensors({{R"(a\n: error: FAKE.weight)", "BF16", {2}},
                                                        {R"(b\u001b[31m.weight)", "BF16", {2}},
                                                        {"c.weight", R"(X\nY)", {2}}}));
  auto checkpoint = load_checkpoint(fs, "m");
  ASSERT_TRUE(checkpoint);
  const std::string text = render_inspect_text(*checkpoint, build_inventory(*checkpoint), {});
  EXPECT_EQ(text.find('\x1b'), std::string::npos) << text;
  EXPECT_NE(text.find(R"(a\x0a: error: FAKE  [)"), std::string::npos) << text;
  EXPECT_NE(text.find(R"(b\x1b[31m  [)"), std::string::npos) << text;
  EXPECT_NE(text.find(R"(X\x0aY)"), std::string::npos) << text;
  // One line per module and per tensor, and the summary.
  EXPECT_EQ(std::count(text.begin(), text.end(), '\n'), 7) << text;
}
