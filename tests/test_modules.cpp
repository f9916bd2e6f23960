#include <gtest/gtest.h>

#include <fmt/format.h>

#include <map>
#include <set>

#include "builder.hpp"
#include "qcheck/modules.hpp"

using namespace qcheck;
using namespace qcheck::test;

namespace {

struct Loaded
{
  MemoryFileSystem fs;
  Checkpoint checkpoint;
  Inventory inventory;
};

std::unique_ptr<Loaded>
load(const std::vector<TensorSpec>& tensors)
{
  auto out = std::make_unique<Loaded>();
  out->fs.add_file("m/model.safetensors", safetensors(tensors));
  auto c = load_checkpoint(out->fs, "m");
  EXPECT_TRUE(c);
  out->checkpoint = std::move(c).value();
  EXPECT_TRUE(out->checkpoint.problems.empty());
  out->inventory = build_inventory(out->checkpoint);
  return out;
}

// One small BF16 tensor per name, in name order.
std::vector<TensorSpec>
bf16_tensors(const std::set<std::string>& names)
{
  std::vector<TensorSpec> tensors;
  for (const std::string& name : names) {
    tensors.push_back({name, "BF16", {2}});
  }
  return tensors;
}

// The grouping by brute force: module -> its tensor names, in name order.
std::map<std::string, std::vector<std::string>>
by_module(const std::set<std::string>& names)
{
  std::map<std::string, std::vector<std::string>> out;
  for (const std::string& name : names) {
    out[std::string(split_tensor_name(name).first)].push_back(name);
  }
  return out;
}

// Each module holds exactly its tensors (`expected`: module -> tensor names), in name order, with
// each tensor's parameter name, and modules come sorted.
void
expect_grouped(const Loaded& l, const Inventory& inventory,
               const std::map<std::string, std::vector<std::string>>& expected,
               const std::string& label)
{
  std::map<std::string, std::vector<std::string>> got;
  std::vector<std::string> order;
  for (const Module& m : inventory.modules) {
    order.emplace_back(m.name);
    for (size_t i = 0; i < m.tensors.size(); ++i) {
      const std::string_view name = l.checkpoint.tensors[m.tensors[i]].info->name();
      got[std::string(m.name)].push_back(std::string(name));
      EXPECT_EQ(param_of(m, name), split_tensor_name(name).second) << label;
    }
  }
  ASSERT_EQ(got, expected) << label;
  ASSERT_TRUE(std::is_sorted(order.begin(), order.end())) << label;
  ASSERT_EQ(order.size(), expected.size()) << label;
}

// Up to `most` distinct names "m.P1[.P2[.P3[.P4]]]" made of `parts`.
std::set<std::string>
random_names(test::Lcg& next, const std::vector<std::string>& parts, size_t most)
{
  std::set<std::string> names;
  for (size_t i = 1 + next(most); i > 0; --i) {
    std::string name = "m";
    for (size_t d = 1 + next(4); d > 0; --d) {
      name += "." + parts[next(parts.size())];
    }
    names.insert(name);
  }
  return names;
}

const Module&
module(const Loaded& l, std::string_view name)
{
  const int64_t i = l.inventory.find(name);
  EXPECT_GE(i, 0) << name;
  return l.inventory.modules.at(static_cast<size_t>(i));
}

struct FamilyCase
{
  const char* label;
  std::vector<TensorSpec> tensors;
  QuantFamily family;
};

} // namespace

TEST(Modules, SplitTensorName)
{
  EXPECT_EQ(split_tensor_name("a.b.weight"),
            (std::pair<std::string_view, std::string_view>{"a.b", "weight"}));
  EXPECT_EQ(split_tensor_name("a.weight.absmax").first, "a");
  EXPECT_EQ(split_tensor_name("a.weight.quant_state.bitsandbytes__nf4").first, "a");
  EXPECT_EQ(split_tensor_name("bias").first, "");
  // Only the first ".weight." counts, wherever it sits.
  EXPECT_EQ(split_tensor_name("x.weight.weight.absmax").first, "x.weight.weight");
  EXPECT_EQ(split_tensor_name("weight.absmax").first, "weight");
  EXPECT_EQ(split_tensor_name("t.weight.nested_quant_map").first, "t");
}

// split_tensor_name() against its definition with std::string_view::find, on names made of
// the pieces that matter.
TEST(Modules, SplitTensorNameFindsTheFirstWeightComponent)
{
  const std::vector<std::string> pieces{
    "weight", "absmax", "quant_state", "quant_map", "t",       "w", "nested_absmax",
    "we",     "h.",     "weightt",     "",          "experts", "0"};
  test::Lcg next(7);
  size_t markers = 0;
  for (int i = 0; i < 20000; ++i) {
    std::string name = pieces[next(pieces.size())];
    for (size_t n = next(7); n > 0; --n) {
      name += "." + pieces[next(pieces.size())];
    }
    std::pair<std::string_view, std::string_view> expected;
    const std::string_view view = name;
    const size_t weight = view.find(".weight.");
    bool marker = false;
    for (std::string_view m : {".weight.absmax", ".weight.quant_map", ".weight.nested_absmax",
                               ".weight.nested_quant_map", ".weight.quant_state."}) {
      if (weight != std::string_view::npos && view.substr(weight).starts_with(m)) {
        expected = {view.substr(0, weight), view.substr(weight + 8)};
        marker = true;
        break;
      }
    }
    if (!marker) {
      const size_t dot = view.rfind('.');
      expected = dot == std::string_view::npos
                   ? std::pair<std::string_view, std::string_view>{{}, view}
                   : std::pair{view.substr(0, dot), view.substr(dot + 1)};
    }
    markers += marker ? 1 : 0;
    ASSERT_EQ(split_tensor_name(name), expected) << name;
    // The inventory keeps no parameter names: param_of() finds them again.
    Module module;
    module.name = expected.first;
    ASSERT_EQ(param_of(module, name), expected.second) << name;
  }
  EXPECT_GT(markers, 500u);
}

// The modules below an ancestor: whole components only ("a.b" is not below "a.b" or "a.bc"),
// in name order, empty when none.
// find_param() by KeyParam answers from the places build_inventory() noted; by name it looks
// at every tensor: the two agree on every key of every module, in modules holding each key
// parameter or not, twice, beside bitsandbytes markers and parameters out of name order.
TEST(Modules, KeyParametersAreFoundWhereTheScanFindsThem)
{
  std::set<std::string> names;
  const std::vector<std::string> params{
    "weight",      "weight_scale", "weight_scale_2", "weight_scale_inv", "qweight",      "scales",
    "input_scale", "g_idx",        "weight.absmax",  "weight.quant_map", "weight_packed"};
  Lcg next(41);
  for (int m = 0; m < 300; ++m) {
    for (const std::string& param : params) {
      if (next(3) == 0) {
        names.insert(fmt::format("model.layers.{}.proj.{}", m, param));
      }
    }
    if (next(5) == 0) { // a submodule between its tensors
      names.insert(fmt::format("model.layers.{}.proj.inner.weight", m));
    }
  }
  const auto l = load(bf16_tensors(names));
  size_t found = 0;
  for (const Module& m : l->inventory.modules) {
    for (size_t k = 0; k < k_key_params; ++k) {
      const auto key = static_cast<KeyParam>(k);
      const TensorInfo* by_key = find_param(l->checkpoint, m, key);
      ASSERT_EQ(by_key, find_param(l->checkpoint, m, to_string(key))) << m.name << " " << k;
      found += by_key != nullptr ? 1 : 0;
    }
  }
  EXPECT_GT(found, 300u);
}

// A key parameter's place is noted in 16 bits: one further into its module is looked for.
TEST(Modules, KeyParameterPastSixteenBitsIsStillFound)
{
  std::set<std::string> names;
  for (int i = 0; i < 70'000; ++i) {
    names.insert(fmt::format("m.p{:05}", i));
  }
  names.insert("m.weight"); // sorts after every "m.p..."
  const auto l = load(bf16_tensors(names));
  ASSERT_EQ(l->inventory.modules.size(), 1u);
  const Module& m = l->inventory.modules[0];
  EXPECT_EQ(m.key_params[static_cast<size_t>(KeyParam::weight)], Module::k_param_beyond);
  const TensorInfo* weight = find_param(l->checkpoint, m, KeyParam::weight);
  ASSERT_NE(weight, nullptr);
  EXPECT_EQ(weight->name(), "m.weight");
  EXPECT_EQ(find_param(l->checkpoint, m, KeyParam::scales), nullptr);
}

TEST(Modules, ModulesUnderAnAncestor)
{
  auto l = load({{"a.b.weight", "BF16", {8}},
                 {"a.b.c.weight", "BF16", {8}},
                 {"a.b.d.e.weight", "BF16", {8}},
                 {"a.bc.weight", "BF16", {8}},
                 {"a.b-x.weight", "BF16", {8}},
                 {"z.weight", "BF16", {8}}});
  const auto names = [&](std::string_view ancestor) {
    std::vector<std::string_view> out;
    for (const Module& m : l->inventory.under(ancestor)) {
      out.push_back(m.name);
    }
    return out;
  };
  EXPECT_EQ(names("a.b"), (std::vector<std::string_view>{"a.b.c", "a.b.d.e"}));
  EXPECT_EQ(names("a").size(), 5u);
  EXPECT_TRUE(names("a.b.c").empty());
  EXPECT_TRUE(names("a.b.d.e.f").empty());
  EXPECT_TRUE(names("y").empty());
  EXPECT_EQ(names("z"), std::vector<std::string_view>{});
  // A prefix need not end at a dot.
  const auto prefixed = [&](std::string_view prefix) {
    std::vector<std::string_view> out;
    for (const Module& m : l->inventory.with_prefix(prefix)) {
      out.push_back(m.name);
    }
    return out;
  };
  EXPECT_EQ(prefixed("a.b"),
            (std::vector<std::string_view>{"a.b", "a.b-x", "a.b.c", "a.b.d.e", "a.bc"}));
  EXPECT_EQ(prefixed("a.b."), (std::vector<std::string_view>{"a.b.c", "a.b.d.e"}));
  EXPECT_EQ(prefixed("z"), (std::vector<std::string_view>{"z"}));
  EXPECT_TRUE(prefixed("b").empty());
}

TEST(Modules, UnquantizedFloatWeight)
{
  auto l = load({{"m.q_proj.weight", "BF16", {8, 8}}, {"m.q_proj.bias", "BF16", {8}}});
  const Module& m = module(*l, "m.q_proj");
  EXPECT_EQ(m.storage, Storage::unquantized);
  EXPECT_EQ(m.family, QuantFamily::none);
  EXPECT_EQ(m.role, ModuleRole::linear);
  EXPECT_EQ(module_evidence(l->checkpoint, m), "weight BF16 [8, 8]");
}

TEST(Modules, EveryStorageFamily)
{
  const std::vector<FamilyCase> cases{
    {"modelopt nvfp4",
     {{"p.weight", "U8", {8, 16}},
      {"p.weight_scale", "F8_E4M3", {8, 2}},
      {"p.weight_scale_2", "F32", {}},
      {"p.input_scale", "F32", {}}},
     QuantFamily::modelopt_nvfp4},
    {"fp8 per tensor",
     {{"p.weight", "F8_E4M3", {8, 8}}, {"p.weight_scale", "F32", {}}},
     QuantFamily::fp8_per_tensor},
    {"fp8 block",
     {{"p.weight", "F8_E4M3", {256, 256}}, {"p.weight_scale_inv", "F32", {2, 2}}},
     QuantFamily::fp8_block},
    {"mxfp8",
     {{"p.weight", "F8_E4M3", {8, 64}}, {"p.weight_scale", "U8", {8, 2}}},
     QuantFamily::mxfp8},
    {"int8",
     {{"p.weight", "I8", {8, 8}}, {"p.weight_scale", "F32", {8, 1}}},
     QuantFamily::int8_scaled},
    {"ct pack",
     {{"p.weight_packed", "I32", {8, 4}},
      {"p.weight_scale", "BF16", {8, 1}},
      {"p.weight_shape", "I64", {2}}},
     QuantFamily::ct_pack},
    {"ct nvfp4 pack",
     {{"p.weight_packed", "U8", {8, 16}},
      {"p.weight_scale", "F8_E4M3", {8, 2}},
      {"p.weight_global_scale", "F32", {1}}},
     QuantFamily::ct_nvfp4_pack},
    {"ct mxfp4 pack",
     {{"p.weight_packed", "U8", {8, 16}}, {"p.weight_scale", "U8", {8, 1}}},
     QuantFamily::ct_mxfp4_pack},
    {"gptq",
     {{"p.qweight", "I32", {8, 64}},
      {"p.qzeros", "I32", {1, 8}},
      {"p.scales", "F16", {1, 64}},
      {"p.g_idx", "I32", {64}}},
     QuantFamily::gptq},
    {"awq",
     {{"p.qweight", "I32", {64, 8}}, {"p.qzeros", "I32", {1, 8}}, {"p.scales", "F16", {1, 64}}},
     QuantFamily::awq},
    {"mxfp4 experts",
     {{"p.experts.gate_up_proj_blocks", "U8", {4, 16, 2, 16}},
      {"p.experts.gate_up_proj_scales", "U8", {4, 16, 2}}},
     QuantFamily::mxfp4},
    {"bitsandbytes 4-bit",
     {{"p.weight", "U8", {32, 1}},
      {"p.weight.absmax", "F32", {4}},
      {"p.weight.quant_map", "F32", {16}}},
     QuantFamily::bitsandbytes},
    {"bitsandbytes 8-bit",
     {{"p.weight", "I8", {8, 8}}, {"p.SCB", "F32", {8}}},
     QuantFamily::bitsandbytes},
    {"bitsandbytes 4-bit, absmax alone",
     {{"p.weight", "U8", {32, 1}}, {"p.weight.absmax", "F32", {4}}},
     QuantFamily::bitsandbytes},
    {"bitsandbytes 4-bit, quant_map alone",
     {{"p.weight", "U8", {32, 1}}, {"p.weight.quant_map", "F32", {16}}},
     QuantFamily::bitsandbytes},
    {"nvfp4 without its second scale",
     {{"p.weight", "U8", {8, 16}}, {"p.weight_scale", "F8_E4M3", {8, 2}}},
     QuantFamily::unknown},
    {"unknown", {{"p.weight", "I8", {8, 8}}}, QuantFamily::unknown},
  };
  for (const auto& c : cases) {
    auto l = load(c.tensors);
    ASSERT_EQ(l->inventory.modules.size(), 1u) << c.label;
    const Module& m = l->inventory.modules[0];
    EXPECT_EQ(m.storage, Storage::quantized) << c.label;
    EXPECT_EQ(m.family, c.family) << c.label << ": got " << to_string(m.family);
  }
}

// A weight scale marks a module quantized whatever its weight's dtype, and without a weight;
// an input scale alone does not.
TEST(Modules, WeightScalesMarkAModuleQuantized)
{
  auto l = load({{"a.k_proj.weight", "BF16", {8, 8}},
                 {"a.k_proj.weight_scale", "F32", {}},
                 {"a.o_proj.weight_scale_2", "F32", {}},
                 {"a.q_proj.input_scale", "F32", {}},
                 {"a.q_proj.weight", "BF16", {8, 8}}});
  EXPECT_EQ(module(*l, "a.k_proj").storage, Storage::quantized);
  EXPECT_EQ(module(*l, "a.o_proj").storage, Storage::quantized);
  EXPECT_EQ(module(*l, "a.q_proj").storage, Storage::unquantized);
}

TEST(Modules, KvCacheScalesDoNotMakeAProjectionQuantized)
{
  auto l = load({{"a.k_proj.weight", "BF16", {8, 8}},
                 {"a.k_proj.k_scale", "F32", {}},
                 {"a.v_proj.weight", "BF16", {8, 8}},
                 {"a.v_proj.v_scale", "F32", {}},
                 {"a.o_proj.weight", "BF16", {8, 8}},
                 {"a.o_proj.input_scale", "F32", {}}});
  for (auto name : {"a.k_proj", "a.v_proj", "a.o_proj"}) {
    EXPECT_EQ(module(*l, name).storage, Storage::unquantized) << name;
  }
}

TEST(Modules, Roles)
{
  auto l = load({{"model.embed_tokens.weight", "BF16", {16, 8}},
                 {"model.layers.0.input_layernorm.weight", "BF16", {8}},
                 {"model.layers.0.mlp.gate.weight", "BF16", {4, 8}},
                 {"model.layers.0.mlp.experts.3.down_proj.weight", "BF16", {8, 4}},
                 {"model.layers.0.mlp.shared_experts.down_proj.weight", "BF16", {8, 4}},
                 {"model.layers.1.mlp.experts.gate_up_proj", "BF16", {4, 8, 8}},
                 {"model.layers.61.shared_head.head.weight", "BF16", {16, 8}},
                 {"lm_head.weight", "BF16", {16, 8}},
                 {"model.visual.patch_embed.proj.weight", "BF16", {8, 3, 2, 2}},
                 {"model.visual.pos_embed.weight", "BF16", {16, 8}}});
  EXPECT_EQ(module(*l, "model.embed_tokens").role, ModuleRole::embedding);
  EXPECT_EQ(module(*l, "model.layers.0.input_layernorm").role, ModuleRole::norm);
  EXPECT_EQ(module(*l, "model.layers.0.mlp.gate").role, ModuleRole::router);
  EXPECT_EQ(module(*l, "model.layers.0.mlp.experts.3.down_proj").role, ModuleRole::expert);
  EXPECT_EQ(module(*l, "model.layers.0.mlp.shared_experts.down_proj").role, ModuleRole::linear);
  EXPECT_EQ(module(*l, "model.layers.1.mlp.experts").role, ModuleRole::fused_experts);
  EXPECT_EQ(module(*l, "model.layers.1.mlp.experts").storage, Storage::unquantized);
  EXPECT_EQ(module(*l, "model.layers.61.shared_head.head").role, ModuleRole::lm_head);
  EXPECT_EQ(module(*l, "lm_head").role, ModuleRole::lm_head);
  EXPECT_EQ(module(*l, "model.visual.patch_embed.proj").role, ModuleRole::other);
  EXPECT_EQ(module(*l, "model.visual.pos_embed").role, ModuleRole::embedding);
}

// "…experts.{digits}.proj" is an expert wherever ".experts." begins, and near misses are not:
// the search skips ahead by the bytes it reads, so every offset and every byte of the needle
// is tried (a wrong skip misses some).
TEST(Modules, ExpertProjectionFoundAtEveryOffset)
{
  for (size_t length = 0; length < 24; ++length) {
    std::string prefix = "m";
    for (size_t i = 0; i < length; ++i) {
      prefix += "experts."[i % 8]; // fragments of the needle itself, as in "model.experts_x"
    }
    for (const auto& [middle, expert] :
         std::vector<std::pair<std::string, bool>>{{".experts.7.down_proj", true},
                                                   {".experts.12.w1", true},
                                                   {".expert.7.down_proj", false},
                                                   {"experts.7.down_proj", false},
                                                   {".experts.x.down_proj", false},
                                                   {".eexperts.7.down_proj", false},
                                                   {".experts.7", false}}) {
      const std::string name = prefix + middle;
      auto l = load({{name + ".weight", "BF16", {8, 4}}});
      const bool found = module(*l, name).role == ModuleRole::expert;
      // What a plain search says: ".experts." then digits then '.'.
      const size_t at = name.find(".experts.");
      const size_t dot = at == std::string::npos ? at : name.find('.', at + 9);
      const bool expected = dot != std::string::npos && dot > at + 9 &&
                            name.find_first_not_of("0123456789", at + 9) == dot;
      EXPECT_EQ(found, expected) << name;
      if (length == 0) {
        EXPECT_EQ(found, expert) << name;
      }
    }
  }
}

// Each leaf name that gives a role, and names that only look like one.
TEST(Modules, EveryNamedRole)
{
  const std::vector<std::pair<std::string, ModuleRole>> cases{
    {"t.wte", ModuleRole::embedding},
    {"t.wpe", ModuleRole::embedding},
    {"t.embed_tokens", ModuleRole::embedding},
    {"t.tok_embed", ModuleRole::embedding},
    {"t.inputs_embeds", ModuleRole::embedding},
    {"t.word_embedding", ModuleRole::embedding},
    {"t.position_embeddings", ModuleRole::embedding},
    {"t.lm_head", ModuleRole::lm_head},
    {"t.mtp.shared_head.head", ModuleRole::lm_head},
    {"t.mlp.gate", ModuleRole::router},
    {"t.mlp.router", ModuleRole::router},
    {"t.mlp.shared_expert_gate", ModuleRole::router},
    {"t.mlp.gate_proj", ModuleRole::linear},
    {"t.mlp.router_proj", ModuleRole::linear},
    {"t.embedding_proj", ModuleRole::linear},
    {"t.head", ModuleRole::linear},
    {"t.self_attn.indexer.weights_proj", ModuleRole::unquantized_linear},
    {"t.self_attn.indexer.wk", ModuleRole::linear},
    {"t.self_attn.weights_proj", ModuleRole::linear},
  };
  std::vector<TensorSpec> tensors;
  for (const auto& [name, role] : cases) {
    tensors.push_back({name + ".weight", "BF16", {8, 8}});
  }
  auto l = load(tensors);
  for (const auto& [name, role] : cases) {
    EXPECT_EQ(module(*l, name).role, role) << name << ": got " << to_string(module(*l, name).role);
  }
}

// Past a few thousand modules classification runs in slices on several threads: every module
// still gets its own storage, family and role.
TEST(Modules, LargeInventoryIsClassifiedModuleByModule)
{
  std::vector<TensorSpec> tensors;
  const size_t count = 12000;
  for (size_t i = 0; i < count; ++i) {
    const std::string m = "model.layers." + std::to_string(i / 100) + ".mlp.experts." +
                          std::to_string(i % 100) + ".down_proj";
    if (i % 3 == 0) {
      tensors.push_back({m + ".weight", "BF16", {8, 8}});
    } else {
      tensors.push_back({m + ".weight", "U8", {8, 4}});
      tensors.push_back({m + ".weight_scale", "F8_E4M3", {8, 1}});
      tensors.push_back({m + ".weight_scale_2", "F32", {}});
    }
  }
  auto l = load(tensors);
  ASSERT_EQ(l->inventory.modules.size(), count);
  size_t unquantized = 0;
  for (const Module& m : l->inventory.modules) {
    const std::string name(m.name);
    const size_t i = std::stoul(name.substr(name.rfind("experts.") + 8)) +
                     100 * std::stoul(name.substr(13, name.find(".mlp") - 13));
    EXPECT_EQ(m.storage, i % 3 == 0 ? Storage::unquantized : Storage::quantized) << m.name;
    EXPECT_EQ(m.family, i % 3 == 0 ? QuantFamily::none : QuantFamily::modelopt_nvfp4) << m.name;
    EXPECT_EQ(m.role, ModuleRole::expert) << m.name;
    unquantized += m.storage == Storage::unquantized ? 1 : 0;
  }
  EXPECT_EQ(unquantized, count / 3);
  // Any number of slices classifies alike (one when folders are linted in parallel).
  for (const unsigned threads : {1u, 3u, 7u}) {
    const Inventory again = build_inventory(l->checkpoint, threads);
    ASSERT_EQ(again.modules.size(), count);
    for (size_t i = 0; i < count; ++i) {
      const Module& a = again.modules[i];
      const Module& b = l->inventory.modules[i];
      ASSERT_EQ(a.name, b.name);
      EXPECT_EQ(a.storage, b.storage) << threads << " " << a.name;
      EXPECT_EQ(a.family, b.family) << threads << " " << a.name;
      EXPECT_EQ(a.role, b.role) << threads << " " << a.name;
    }
  }
}

// Tensors are split into modules in slices, one per core: a module's tensors that surround a
// submodule's exactly where two slices meet are still grouped.
TEST(Modules, GroupingAcrossTheSlicesOfALargeCheckpoint)
{
  std::vector<TensorSpec> tensors;
  for (int k = 0; k < 4498; ++k) {
    tensors.push_back({fmt::format("m.a{:05}.weight", k), "BF16", {2}});
  }
  // Indices 4498-4500: the order breaks between 4499 and 4500, where two slices of 9000 meet.
  for (const char* name : {"m.z.A_log", "m.z.conv.weight", "m.z.dt_bias"}) {
    tensors.push_back({name, "BF16", {2}});
  }
  for (int k = 0; k < 4499; ++k) {
    tensors.push_back({fmt::format("m.zz{:05}.weight", k), "BF16", {2}});
  }
  auto l = load(tensors);
  ASSERT_EQ(l->checkpoint.tensors.size(), 9000u);
  ASSERT_EQ(l->checkpoint.tensors[4500].info->name(), "m.z.dt_bias");
  for (const unsigned threads : {1u, 2u, 3u}) {
    const Inventory inventory = build_inventory(l->checkpoint, threads);
    ASSERT_EQ(inventory.modules.size(), 4498u + 2u + 4499u) << threads;
    const int64_t z = inventory.find("m.z");
    ASSERT_GE(z, 0) << threads;
    const Module& m = inventory.modules[static_cast<size_t>(z)];
    ASSERT_EQ(m.tensors.size(), 2u) << threads;
    EXPECT_EQ(param_of(l->checkpoint, m, 0), "A_log");
    EXPECT_EQ(param_of(l->checkpoint, m, 1), "dt_bias");
    EXPECT_TRUE(std::is_sorted(inventory.modules.begin(), inventory.modules.end(),
                               [](const Module& a, const Module& b) { return a.name < b.name; }));
  }
}

// Modules whose tensors surround a submodule's, in random mixes: each module holds exactly its
// tensors, in name order, and modules come sorted, as a grouping by brute force says.
TEST(Modules, GroupingMatchesABruteForceGroupingWhateverTheOrder)
{
  test::Lcg next(4242);
  const std::vector<std::string> parts{"a", "b", "conv", "x", "A_log", "dt_bias", "weight", "bias"};
  for (int round = 0; round < 200; ++round) {
    const std::set<std::string> names = random_names(next, parts, 40);
    auto l = load(bf16_tensors(names));
    expect_grouped(*l, l->inventory, by_module(names), fmt::format("round {}", round));
  }
}

// bitsandbytes names ("a.weight.absmax" belongs to "a"), mixed with modules named like them
// ("a.weight", "a.weight.weight"): grouped as split_tensor_name says, whatever comes before.
TEST(Modules, GroupingOfBitsandbytesNamesMatchesABruteForceGrouping)
{
  // "m.a.weight.a" is a tensor of module "m.a.weight"; the next name is one of "m.a".
  const std::set<std::string> fixed{
    "m.a.weight.a", "m.a.weight.absmax", "m.a.weight.bias",       "m.a.weight",
    "m.weight.a",   "m.weight.weight.a", "m.weight.weight.absmax"};
  auto l = load(bf16_tensors(fixed));
  expect_grouped(*l, l->inventory, by_module(fixed), "fixed");
  test::Lcg next(2024);
  const std::vector<std::string> parts{"a", "weight", "absmax", "quant_state", "bias", "weights"};
  for (int round = 0; round < 300; ++round) {
    const std::set<std::string> names = random_names(next, parts, 30);
    l = load(bf16_tensors(names));
    expect_grouped(*l, l->inventory, by_module(names), fmt::format("round {}", round));
  }
}

// Modules of 14 to 40 bytes (compared 16 bytes at a time) that differ in one byte anywhere, with
// leaves of every length up to 18, some holding a dot: grouped as a brute force groups them.
TEST(Modules, GroupingOfLongNamesMatchesABruteForceGrouping)
{
  test::Lcg next(1616);
  for (int round = 0; round < 200; ++round) {
    std::set<std::string> names;
    while (names.size() < 40) {
      std::string module(14 + next(27), 'a');
      module[next(module.size())] = "bc."[next(3)];
      std::string leaf(next(19), 'w');
      if (!leaf.empty() && next(3) == 0) {
        leaf[next(leaf.size())] = '.';
      }
      names.insert(module + "." + leaf);
    }
    auto l = load(bf16_tensors(names));
    expect_grouped(*l, l->inventory, by_module(names), fmt::format("round {}", round));
  }
}

// A slice that starts at "m.N.weight.absmax", after "m.N.weight.a" (a tensor of module
// "m.N.weight"): its first name is split, not taken as the previous module's.
TEST(Modules, BitsandbytesNameAtTheStartOfASlice)
{
  std::set<std::string> names{"a.weight"}; // one name before the pairs: slices start inside them
  for (int k = 0; k < 4500; ++k) {
    names.insert(fmt::format("m.{:05}.weight.a", k));
    names.insert(fmt::format("m.{:05}.weight.absmax", k));
  }
  auto l = load(bf16_tensors(names));
  const auto expected = by_module(names);
  for (const unsigned threads : {2u, 3u}) {
    const Inventory inventory = build_inventory(l->checkpoint, threads);
    expect_grouped(*l, inventory, expected, fmt::format("{} threads", threads));
  }
}

// The same in checkpoints large enough to be split in slices, one per core.
TEST(Modules, GroupingMatchesABruteForceGroupingInSlices)
{
  test::Lcg next(777);
  const std::vector<std::string> parts{"a", "conv", "x", "A_log", "dt_bias", "weight", "bias"};
  for (int round = 0; round < 3; ++round) {
    std::set<std::string> names;
    while (names.size() < 12000) {
      std::string name = fmt::format("m.{}", next(3000));
      for (size_t d = 1 + next(3); d > 0; --d) {
        name += "." + parts[next(parts.size())];
      }
      names.insert(name);
    }
    auto l = load(bf16_tensors(names));
    const auto expected = by_module(names);
    for (const unsigned threads : {1u, 2u, 3u}) {
      const Inventory inventory = build_inventory(l->checkpoint, threads);
      expect_grouped(*l, inventory, expected, fmt::format("round {}, {} threads", round, threads));
    }
  }
}
