// The rule matrix: for every rule of the registry (QC001-QC125) one positive case (the finding
// appears, its exact message asserted) and one negative case (a near-identical correct input
// gives no such finding). Inputs are built in memory with real naming conventions.
//
// Expectations come from the rule's documented meaning (src/rules.cpp) and
// shared/spec/engine-semantics.md (section or rule R1-R38 cited), not from what qcheck prints.
// Where qcheck disagrees, the test keeps the documented answer and is skipped with the evidence
// ("qcheck bug: ...").
#include <algorithm>
#include <cstdlib>
#include <fmt/format.h>
#include <gtest/gtest.h>
#include <functional>
#include <limits>
#include <map>
#include <memory>
#include <mutex>
#include <set>
#include <string>
#include <vector>

#include "builder.hpp"
#include "qcheck/explain.hpp"
#include "qcheck/fix.hpp"
#include "qcheck/input.hpp"
#include "qcheck/lint.hpp"
#include "qcheck/report.hpp"
#include "qcheck/rules.hpp"
#include "qcheck/settings.hpp"

using namespace qcheck;
using test::TensorSpec;

namespace {

using Tensors = std::vector<TensorSpec>;
using Strings = std::vector<std::string>;

Tensors
operator+(Tensors a, const Tensors& b)
{
  a.insert(a.end(), b.begin(), b.end());
  return a;
}

// ---- stored modules, one layout each ------------------------------------------------------

Tensors
bf16(const std::string& module, uint64_t out = 64, uint64_t in = 64)
{
  return {{module + ".weight", "BF16", {out, in}}};
}

// 1-D weight: a norm.
Tensors
norm(const std::string& module, uint64_t width = 64)
{
  return {{module + ".weight", "BF16", {width}}};
}

// ModelOpt NVFP4 W4A4 (spec 2.6): U8 [out, in/2], F8_E4M3 [out, in/16], F32 scalars.
Tensors
nvfp4(const std::string& module, uint64_t out = 64, uint64_t in = 64)
{
  return {{module + ".weight", "U8", {out, in / 2}},
          {module + ".weight_scale", "F8_E4M3", {out, in / 16}},
          {module + ".weight_scale_2", "F32", {}},
          {module + ".input_scale", "F32", {}}};
}

// FP8 per tensor (ModelOpt FP8, Quark FP8): F8_E4M3 weight, F32 scalar scales.
Tensors
fp8(const std::string& module, uint64_t out = 64, uint64_t in = 64)
{
  return {{module + ".weight", "F8_E4M3", {out, in}},
          {module + ".weight_scale", "F32", {}},
          {module + ".input_scale", "F32", {}}};
}

// compressed-tensors float-quantized, channel strategy (spec 3.5): weight_scale [out, 1].
Tensors
ct_fp8(const std::string& module, uint64_t out = 64, uint64_t in = 64)
{
  return {{module + ".weight", "F8_E4M3", {out, in}}, {module + ".weight_scale", "F32", {out, 1}}};
}

// HF fine-grained FP8 (spec 5.1): weight_scale_inv [ceil(out/128), ceil(in/128)].
Tensors
fp8_block(const std::string& module, uint64_t out = 128, uint64_t in = 128)
{
  return {{module + ".weight", "F8_E4M3", {out, in}},
          {module + ".weight_scale_inv", "F32", {(out + 127) / 128, (in + 127) / 128}}};
}

// GPTQ 4-bit, group 64 (spec 4.5): qweight [in/8, out], qzeros [in/64, out/8],
// scales [in/64, out], g_idx [in].
Tensors
gptq(const std::string& module, uint64_t out = 64, uint64_t in = 64, uint64_t g_idx = 0)
{
  return {{module + ".qweight", "I32", {in / 8, out}},
          {module + ".qzeros", "I32", {in / 64, out / 8}},
          {module + ".scales", "F16", {in / 64, out}},
          {module + ".g_idx", "I32", {g_idx ? g_idx : in}}};
}

// AWQ GEMM 4-bit, group 64, a 64x64 layer: qweight [in, out/8], qzeros [in/64, out/8],
// scales [in/64, out].
Tensors
awq(const std::string& module)
{
  return {{module + ".qweight", "I32", {64, 8}},
          {module + ".qzeros", "I32", {1, 8}},
          {module + ".scales", "F16", {1, 64}}};
}

// compressed-tensors pack-quantized W4A16, group 32 (spec 3.5).
Tensors
ct_pack(const std::string& module, uint64_t out = 64, uint64_t in = 64, bool shape = true)
{
  Tensors t{{module + ".weight_packed", "I32", {out, in / 8}},
            {module + ".weight_scale", "BF16", {out, in / 32}}};
  if (shape) {
    t.push_back({module + ".weight_shape", "I64", {2}});
  }
  return t;
}

// compressed-tensors nvfp4-pack-quantized (spec 3.5).
Tensors
ct_nvfp4(const std::string& module, uint64_t out = 64, uint64_t in = 64)
{
  return {{module + ".weight_packed", "U8", {out, in / 2}},
          {module + ".weight_scale", "F8_E4M3", {out, in / 16}},
          {module + ".weight_global_scale", "F32", {1}},
          {module + ".input_global_scale", "F32", {1}}};
}

// Per-expert projections of a fused MoE: experts.{first..last}.{gate,up,down}_proj.
template<typename Layout>
Tensors
experts(const std::string& moe, int first, int last, Layout layout)
{
  Tensors out;
  for (int e = first; e <= last; ++e) {
    for (const char* p : {"gate_proj", "up_proj", "down_proj"}) {
      out = out + layout(moe + "." + std::to_string(e) + "." + p, 64, 64);
    }
  }
  return out;
}

// ---- configs and folders -----------------------------------------------------------------

// `list` and `count` more entries, `pattern` formatted with 1, 2, ...: at 16 entries or more a
// list is searched through its compiled index.
Strings
padded(Strings list, size_t count, std::string_view pattern)
{
  for (size_t i = 0; i < count; ++i) {
    list.push_back(fmt::format(fmt::runtime(pattern), i + 1));
  }
  return list;
}

std::string
json_list(const Strings& items)
{
  std::string out = "[";
  for (size_t i = 0; i < items.size(); ++i) {
    out += (i ? ", \"" : "\"") + items[i] + "\"";
  }
  return out + "]";
}

// A config.json: model facts (JSON members without braces) and a quantization_config block.
std::string
config(const std::string& model, const std::string& quantization = "")
{
  std::string out = "{\n  " + model;
  if (!quantization.empty()) {
    out += ",\n  \"quantization_config\": " + quantization;
  }
  return out + "\n}\n";
}

const std::string k_llama =
  R"("architectures": ["LlamaForCausalLM"], "model_type": "llama", "num_hidden_layers": 2)";

// ModelOpt flat block as ModelOpt >= 0.31 writes it into config.json (spec 2.1).
std::string
modelopt(const std::string& algo, const Strings& ignore)
{
  return R"({"quant_method": "modelopt", "quant_algo": ")" + algo +
         R"(", "group_size": 16, "kv_cache_scheme": null, "ignore": )" + json_list(ignore) + "}";
}

// Legacy hf_quant_config.json (spec 2.1).
std::string
hf_quant_config(const std::string& algo, const Strings& exclude)
{
  return R"({"producer": {"name": "modelopt", "version": "0.29.0"}, )"
         R"("quantization": {"quant_algo": ")" +
         algo + R"(", "kv_cache_quant_algo": null, "group_size": 16, "exclude_modules": )" +
         json_list(exclude) + "}}\n";
}

// A model folder "m" with config.json and one model.safetensors.
MemoryFileSystem
folder(const std::string& config_json, const Tensors& tensors)
{
  MemoryFileSystem fs;
  fs.add_file("m/config.json", config_json);
  fs.add_file("m/model.safetensors", test::safetensors(tensors));
  return fs;
}

std::string
index_json(const std::vector<std::pair<std::string, std::string>>& map)
{
  std::string out = R"({"metadata": {"total_size": 0}, "weight_map": {)";
  for (size_t i = 0; i < map.size(); ++i) {
    out += (i ? ", \"" : "\"") + map[i].first + "\": \"" + map[i].second + "\"";
  }
  return out + "}}\n";
}

// ---- running and inspecting ----------------------------------------------------------------

Report
lint_folder(const FileSystem& fs)
{
  auto run = lint_path(fs, "m", LintOptions{});
  EXPECT_TRUE(run) << (run ? "" : run.error());
  if (!run) {
    return {};
  }
  return std::move(run->report);
}

// The folder with the plan's edits applied, linted again.
Report
lint_patched(const FileSystem& fs, const FixPlan& plan)
{
  OverlayFileSystem patched(fs);
  for (const FileEdit& edit : plan.edits) {
    patched.set("m/" + edit.file, edit.patched);
  }
  return lint_folder(patched);
}

std::vector<Finding>
findings(const Report& report, RuleId id)
{
  std::vector<Finding> out;
  for (const Finding& f : report.findings) {
    if (f.rule == id) {
      out.push_back(f);
    }
  }
  return out;
}

Strings
messages(const Report& report, RuleId id)
{
  Strings out;
  for (const Finding& f : findings(report, id)) {
    out.push_back(f.message);
  }
  return out;
}

std::set<Engine>
engines(const Finding& f)
{
  return {f.engines.begin(), f.engines.end()};
}

std::string
text(const Report& report)
{
  return render_text(report);
}

const std::set<Engine> k_every_engine{Engine::vllm, Engine::sglang, Engine::trtllm};

// The one finding of a rule, with its exact message and default severity.
Finding
only(const Report& report, RuleId id, const std::string& message)
{
  const auto found = findings(report, id);
  EXPECT_EQ(messages(report, id), Strings{message}) << text(report);
  if (found.empty()) {
    return {};
  }
  EXPECT_EQ(found[0].severity, rule(id).severity);
  return found[0];
}

// ---- recurring checkpoints -----------------------------------------------------------------

// Two Llama layers, layer 0 NVFP4 and layer 1 (o_proj, down_proj) BF16, BF16 lm_head.
Tensors
llama_nvfp4_with_bf16_layer1()
{
  return nvfp4("model.layers.0.self_attn.o_proj") + nvfp4("model.layers.0.mlp.down_proj") +
         bf16("model.layers.1.self_attn.o_proj") + bf16("model.layers.1.mlp.down_proj") +
         bf16("lm_head") + norm("model.norm");
}

// DeepSeek-V3 style: one decoder layer and NextN layer 1 (spec 6.2), ModelOpt FP8.
const std::string k_deepseek = R"("architectures": ["DeepseekV3ForCausalLM"], )"
                               R"("model_type": "deepseek_v3", "num_hidden_layers": 1, )"
                               R"("num_nextn_predict_layers": 1, "q_lora_rank": 64)";

// Its tensors: `main` stores layer 0's projections, `draft` the NextN layer's; eh_proj is BF16
// unless `eh_proj_quantized`. Each maker takes a module name and optional (out, in).
template<typename Main, typename Draft>
Tensors
deepseek_nextn(const Main& main, const Draft& draft, bool eh_proj_quantized = false,
               int draft_layer = 1)
{
  const std::string d = fmt::format("model.layers.{}.", draft_layer);
  return main("model.layers.0.self_attn.o_proj") + main("model.layers.0.mlp.down_proj") +
         (eh_proj_quantized ? draft(d + "eh_proj", 64, 128) : bf16(d + "eh_proj", 64, 128)) +
         norm(d + "enorm") + norm(d + "hnorm") + norm(d + "shared_head.norm") +
         bf16(d + "shared_head.head") + draft(d + "self_attn.o_proj") + draft(d + "mlp.down_proj") +
         bf16("lm_head");
}

// The makers as callables deepseek_nextn can pass dimensions to.
const auto make_fp8 = [](const std::string& m, auto... dims) { return fp8(m, dims...); };
const auto make_fp8_block = [](const std::string& m, auto... dims) {
  return fp8_block(m, dims...);
};
const auto make_bf16 = [](const std::string& m, auto... dims) { return bf16(m, dims...); };
const auto make_ct_nvfp4 = [](const std::string& m, auto... dims) { return ct_nvfp4(m, dims...); };
const auto make_ct_fp8 = [](const std::string& m, auto... dims) { return ct_fp8(m, dims...); };

// The same model with 61 layers, its NextN at model.layers.61: the index SGLang's DeepSeek-V3
// NextN draft maps in list names.
const std::string k_deepseek61 = R"("architectures": ["DeepseekV3ForCausalLM"], )"
                                 R"("model_type": "deepseek_v3", "num_hidden_layers": 61, )"
                                 R"("num_nextn_predict_layers": 1, "q_lora_rank": 64)";

// DeepSeek-V3 with `layers` decoder layers, MLA's q_lora_rank set and no NextN layer.
std::string
deepseek_layers(int layers)
{
  return fmt::format(R"("architectures": ["DeepseekV3ForCausalLM"], )"
                     R"("model_type": "deepseek_v3", "num_hidden_layers": {}, )"
                     R"("q_lora_rank": 64)",
                     layers);
}

Tensors
deepseek_fp8(bool eh_proj_quantized)
{
  return deepseek_nextn(make_fp8, make_fp8, eh_proj_quantized);
}

// Qwen3.5 MoE VLM with a top-level mtp.* drafter (spec 6.2), Quark FP8.
const std::string k_qwen35 =
  R"("architectures": ["Qwen3_5MoeForConditionalGeneration"], "model_type": "qwen3_5_moe", )"
  R"("text_config": {"model_type": "qwen3_5_moe_text", "num_hidden_layers": 1, )"
  R"("mtp_num_hidden_layers": 1})";

std::string
quark(const Strings& exclude)
{
  return R"({"quant_method": "quark", "export": {"kv_cache_group": []}, "global_quant_config": )"
         R"({"weight": {"dtype": "fp8_e4m3", "qscheme": "per_tensor"}}, "exclude": )" +
         json_list(exclude) + "}";
}

Tensors
qwen35_quark(bool mtp_quantized)
{
  auto draft = [&](const std::string& m) { return mtp_quantized ? fp8(m) : bf16(m); };
  return fp8("model.language_model.layers.0.self_attn.o_proj") +
         fp8("model.language_model.layers.0.mlp.down_proj") + bf16("lm_head") +
         bf16("mtp.fc", 64, 128) + norm("mtp.pre_fc_norm_embedding") +
         norm("mtp.pre_fc_norm_hidden") + draft("mtp.layers.0.self_attn.o_proj") +
         experts("mtp.layers.0.mlp.experts", 0, 0,
                 [&](const std::string& m, uint64_t, uint64_t) { return draft(m); });
}

// An explicit GPTQ module list (no dtype inference, R23).
const std::string k_gptq_listed =
  R"(, "modules_in_block_to_quantize": [["self_attn.o_proj", "mlp.down_proj"]])";

// GPTQ 4-bit block.
std::string
gptq_config(const std::string& extra = "")
{
  return R"({"quant_method": "gptq", "bits": 4, "group_size": 64, "desc_act": false, )"
         R"("sym": true, "lm_head": false)" +
         extra + "}";
}

} // namespace

// =============================================================================================
// QC001-QC011: the folder, the index and the config files
// =============================================================================================

// QC001: a header length that claims more bytes than the file holds (truncated download).
TEST(RuleCases, QC001Positive)
{
  const Tensors t = bf16("model.layers.0.mlp.down_proj");
  const std::string header = test::header_json(t);
  MemoryFileSystem fs;
  fs.add_file("m/config.json", config(k_llama));
  fs.add_file("m/model.safetensors", test::raw_safetensors(header, 0, header.size() + 100));
  const Report r = lint_folder(fs);
  const Finding f = only(r, RuleId::shard_header,
                         "header length " + std::to_string(header.size() + 100) + " exceeds the " +
                           std::to_string(header.size()) + " bytes that follow it in the file");
  EXPECT_EQ(f.file, "model.safetensors");
}

TEST(RuleCases, QC001Negative)
{
  const Report r = lint_folder(folder(config(k_llama), bf16("model.layers.0.mlp.down_proj")));
  EXPECT_TRUE(r.findings.empty()) << text(r);
}

namespace {

// Two shards and an index; `index_map` says where the index sends each tensor.
MemoryFileSystem
sharded(const std::vector<std::pair<std::string, std::string>>& index_map, bool second = true)
{
  MemoryFileSystem fs;
  fs.add_file("m/config.json", config(k_llama));
  fs.add_file("m/model-00001-of-00002.safetensors",
              test::safetensors(bf16("model.layers.0.self_attn.o_proj") +
                                bf16("model.layers.0.mlp.down_proj")));
  if (second) {
    fs.add_file("m/model-00002-of-00002.safetensors",
                test::safetensors(bf16("lm_head") + norm("model.norm")));
  }
  fs.add_file("m/model.safetensors.index.json", index_json(index_map));
  return fs;
}

const std::vector<std::pair<std::string, std::string>> k_full_index{
  {"lm_head.weight", "model-00002-of-00002.safetensors"},
  {"model.layers.0.mlp.down_proj.weight", "model-00001-of-00002.safetensors"},
  {"model.layers.0.self_attn.o_proj.weight", "model-00001-of-00002.safetensors"},
  {"model.norm.weight", "model-00002-of-00002.safetensors"}};

} // namespace

// QC002: the index names a shard that was never uploaded.
TEST(RuleCases, QC002Positive)
{
  const Report r = lint_folder(sharded(k_full_index, false));
  const Finding f =
    only(r, RuleId::index_missing_file,
         "named by model.safetensors.index.json for 2 tensors, but the file does not exist");
  EXPECT_EQ(f.file, "model-00002-of-00002.safetensors");
}

TEST(RuleCases, QC002Negative)
{
  const Report r = lint_folder(sharded(k_full_index));
  EXPECT_TRUE(r.findings.empty()) << text(r);
}

// QC003: the index maps model.norm.weight to the first shard, which does not hold it.
TEST(RuleCases, QC003Positive)
{
  auto map = k_full_index;
  map.back().second = "model-00001-of-00002.safetensors";
  const Report r = lint_folder(sharded(map));
  const Finding f = only(r, RuleId::index_missing_tensor,
                         "maps 'model.norm.weight' to model-00001-of-00002.safetensors, which "
                         "does not hold it (it is in model-00002-of-00002.safetensors)");
  EXPECT_EQ(f.file, "model.safetensors.index.json");
  EXPECT_EQ(f.pointer, "/weight_map/model.norm.weight");
}

TEST(RuleCases, QC003Negative)
{
  const Report r = lint_folder(sharded(k_full_index));
  EXPECT_TRUE(findings(r, RuleId::index_missing_tensor).empty()) << text(r);
}

// QC004: a shard holds a tensor the index leaves out.
TEST(RuleCases, QC004Positive)
{
  auto map = k_full_index;
  map.pop_back(); // model.norm.weight
  const Report r = lint_folder(sharded(map));
  const Finding f = only(r, RuleId::unindexed_tensors,
                         "holds 1 tensor the index does not name (first: 'model.norm.weight')");
  EXPECT_EQ(f.file, "model-00002-of-00002.safetensors");
}

TEST(RuleCases, QC004Negative)
{
  const Report r = lint_folder(sharded(k_full_index));
  EXPECT_TRUE(findings(r, RuleId::unindexed_tensors).empty()) << text(r);
}

// QC005: mtp.safetensors uploaded next to the shards but not named by the index (the GLM-4.7
// "lost mtp.safetensors" incident, spec 2.5).
TEST(RuleCases, QC005Positive)
{
  MemoryFileSystem fs = sharded(k_full_index);
  fs.add_file("m/mtp.safetensors", test::safetensors(bf16("model.layers.2.eh_proj", 64, 128)));
  const Report r = lint_folder(fs);
  const Finding f = only(r, RuleId::unindexed_shard,
                         "is not named in model.safetensors.index.json; vLLM and SGLang load "
                         "only the files the index names, so its tensors are never loaded");
  EXPECT_EQ(f.file, "mtp.safetensors");
}

TEST(RuleCases, QC005Negative)
{
  auto map = k_full_index;
  map.emplace_back("model.layers.2.eh_proj.weight", "mtp.safetensors");
  MemoryFileSystem fs = sharded(map);
  fs.add_file("m/mtp.safetensors", test::safetensors(bf16("model.layers.2.eh_proj", 64, 128)));
  const Report r = lint_folder(fs);
  EXPECT_TRUE(r.findings.empty()) << text(r);
}

// QC005 and nothing else: a Mistral-style repository ships the native consolidated.safetensors
// beside the indexed shards. Loaders never read it, so its BF16 modules are not judged against
// the declared quantization (no QC101); named in the index, the same file's modules are.
TEST(RuleCases, QC005UnloadedModulesAreNotJudged)
{
  const auto make = [](bool listed) {
    MemoryFileSystem fs;
    fs.add_file("m/config.json", config(k_llama, modelopt("NVFP4", {"lm_head"})));
    fs.add_file("m/model-00001-of-00001.safetensors",
                test::safetensors(nvfp4("model.layers.0.self_attn.o_proj") + bf16("lm_head")));
    fs.add_file("m/consolidated.safetensors",
                test::safetensors(bf16("layers.0.attention.wo") + bf16("output", 128)));
    std::vector<std::pair<std::string, std::string>> map{
      {"lm_head.weight", "model-00001-of-00001.safetensors"},
      {"model.layers.0.self_attn.o_proj.input_scale", "model-00001-of-00001.safetensors"},
      {"model.layers.0.self_attn.o_proj.weight", "model-00001-of-00001.safetensors"},
      {"model.layers.0.self_attn.o_proj.weight_scale", "model-00001-of-00001.safetensors"},
      {"model.layers.0.self_attn.o_proj.weight_scale_2", "model-00001-of-00001.safetensors"}};
    if (listed) {
      map.insert(map.begin(), {"layers.0.attention.wo.weight", "consolidated.safetensors"});
      map.insert(map.begin() + 2, {"output.weight", "consolidated.safetensors"});
    }
    fs.add_file("m/model.safetensors.index.json", index_json(map));
    return fs;
  };
  const Report r = lint_folder(make(false));
  only(r, RuleId::unindexed_shard,
       "is not named in model.safetensors.index.json; vLLM and SGLang load only the files the "
       "index names, so its tensors are never loaded");
  EXPECT_EQ(r.findings.size(), 1u) << text(r);
  const Report listed = lint_folder(make(true));
  EXPECT_TRUE(findings(listed, RuleId::unindexed_shard).empty()) << text(listed);
  EXPECT_FALSE(findings(listed, RuleId::undeclared_unquantized).empty()) << text(listed);
}

// QC006: model.norm.weight stored in both shards; the index picks the second.
TEST(RuleCases, QC006Positive)
{
  MemoryFileSystem fs = sharded(k_full_index);
  fs.add_file("m/model-00001-of-00002.safetensors",
              test::safetensors(bf16("model.layers.0.self_attn.o_proj") +
                                bf16("model.layers.0.mlp.down_proj") + norm("model.norm")));
  const Report r = lint_folder(fs);
  const Finding f = only(r, RuleId::duplicate_tensor,
                         "tensor 'model.norm.weight' is stored in both "
                         "model-00001-of-00002.safetensors and model-00002-of-00002.safetensors; "
                         "the loader uses model-00002-of-00002.safetensors");
  EXPECT_EQ(f.file, "model-00002-of-00002.safetensors");
}

TEST(RuleCases, QC006Negative)
{
  const Report r = lint_folder(sharded(k_full_index));
  EXPECT_TRUE(findings(r, RuleId::duplicate_tensor).empty()) << text(r);
}

// QC007: a weight_map value that leaves the folder.
TEST(RuleCases, QC007Positive)
{
  auto map = k_full_index;
  map.back().second = "../shared/model-00002-of-00002.safetensors";
  const Report r = lint_folder(sharded(map));
  const Finding f = only(r, RuleId::index_path_escapes,
                         "weight_map sends 'model.norm.weight' to "
                         "'../shared/model-00002-of-00002.safetensors', a path outside the model "
                         "folder; refused");
  EXPECT_EQ(f.file, "model.safetensors.index.json");
  EXPECT_EQ(f.severity, Severity::error);
}

TEST(RuleCases, QC007Negative)
{
  const Report r = lint_folder(sharded(k_full_index));
  EXPECT_TRUE(findings(r, RuleId::index_path_escapes).empty()) << text(r);
}

// QC008: the second shard is a directory (an unpacked archive, a failed download).
TEST(RuleCases, QC008Positive)
{
  MemoryFileSystem fs;
  fs.add_file("m/config.json", config(k_llama));
  fs.add_file("m/model-00001-of-00002.safetensors",
              test::safetensors(bf16("model.layers.0.self_attn.o_proj") +
                                bf16("model.layers.0.mlp.down_proj")));
  fs.add_directory("m/model-00002-of-00002.safetensors");
  fs.add_file("m/model.safetensors.index.json", index_json(k_full_index));
  const Report r = lint_folder(fs);
  const Finding f =
    only(r, RuleId::shard_not_regular, "is a directory, not a regular file; not read");
  EXPECT_EQ(f.file, "model-00002-of-00002.safetensors");
}

TEST(RuleCases, QC008Negative)
{
  const Report r = lint_folder(sharded(k_full_index));
  EXPECT_TRUE(findings(r, RuleId::shard_not_regular).empty()) << text(r);
}

// QC009: a trailing comma in config.json (a common hand-edit mistake).
TEST(RuleCases, QC009Positive)
{
  const Report r = lint_folder(
    folder("{\n  \"model_type\": \"llama\",\n}\n", bf16("model.layers.0.mlp.down_proj")));
  const Finding f =
    only(r, RuleId::config_invalid, "invalid JSON at line 3, column 1: trailing comma before '}'");
  EXPECT_EQ(f.file, "config.json");
}

TEST(RuleCases, QC009Negative)
{
  const Report r = lint_folder(
    folder("{\n  \"model_type\": \"llama\"\n}\n", bf16("model.layers.0.mlp.down_proj")));
  EXPECT_TRUE(r.findings.empty()) << text(r);
}

// QC009: a quantization_config that is not an object (a string, a number, a list): transformers
// and the engines read its keys and stop. null reads as no quantization, as in transformers.
TEST(RuleCases, QC009QuantizationConfigOfTheWrongType)
{
  const Tensors stored = bf16("model.layers.0.mlp.down_proj");
  for (const auto& [value, kind] : std::vector<std::pair<std::string, std::string>>{
         {R"("modelopt")", "a string"}, {"4", "a number"}, {R"(["fp8"])", "a list"}}) {
    const Report r = lint_folder(folder(config(k_llama, value), stored));
    const Finding f = only(r, RuleId::config_invalid,
                           "'quantization_config' is " + kind +
                             ", not an object: transformers and the engines read its keys and "
                             "stop");
    EXPECT_EQ(f.file, "config.json");
  }
  EXPECT_TRUE(lint_folder(folder(config(k_llama, "null"), stored)).findings.empty());
}

// QC009: a UTF-8 byte order mark before config.json's text. simdjson and nlohmann skip it, but
// Python's json.loads refuses it ("Unexpected UTF-8 BOM"), and transformers reads config.json
// with it. The rest is still read: the ModelOpt list's findings stay.
TEST(RuleCases, QC009PositiveByteOrderMark)
{
  const Report r =
    lint_folder(folder("\xEF\xBB\xBF" + config(k_llama, modelopt("NVFP4", {"lm_head"})),
                       llama_nvfp4_with_bf16_layer1()));
  const Finding f = only(r, RuleId::config_invalid,
                         "starts with a UTF-8 byte order mark, which Python's json (and so "
                         "transformers and every engine) refuses; save it without one");
  EXPECT_EQ(f.file, "config.json");
  EXPECT_FALSE(findings(r, RuleId::undeclared_unquantized).empty()) << text(r);
}

// QC010: a method qcheck has no semantics for (HQQ).
TEST(RuleCases, QC010Positive)
{
  const Report r = lint_folder(folder(config(k_llama, R"({"quant_method": "hqq", "nbits": 4})"),
                                      bf16("model.layers.0.mlp.down_proj")));
  const Finding f = only(r, RuleId::unknown_quant_method,
                         "unknown quant_method 'hqq'; its quantization cannot be checked");
  EXPECT_EQ(f.file, "config.json");
}

TEST(RuleCases, QC010Negative)
{
  const Report r =
    lint_folder(folder(config(k_llama, R"({"quant_method": "fp8", "activation_scheme": "dynamic", )"
                                       R"("weight_block_size": [128, 128]})"),
                       fp8_block("model.layers.0.mlp.down_proj") + bf16("lm_head")));
  EXPECT_TRUE(r.findings.empty()) << text(r);
}

// QC011: only the config was uploaded.
TEST(RuleCases, QC011Positive)
{
  MemoryFileSystem fs;
  fs.add_file("m/config.json", config(k_llama));
  const Report r = lint_folder(fs);
  const Finding f =
    only(r, RuleId::no_weights, "no *.safetensors files and no model.safetensors.index.json");
  EXPECT_EQ(f.file, "");
}

TEST(RuleCases, QC011Negative)
{
  const Report r = lint_folder(folder(config(k_llama), bf16("model.layers.0.mlp.down_proj")));
  EXPECT_TRUE(findings(r, RuleId::no_weights).empty()) << text(r);
}

// =============================================================================================
// QC101-QC123: declared against stored, per engine
// =============================================================================================

// QC101 (R7): layer 1 stored BF16 but not in `ignore`: every engine builds NVFP4 parameters.
TEST(RuleCases, QC101Positive)
{
  const Report r = lint_folder(
    folder(config(k_llama, modelopt("NVFP4", {"lm_head"})), llama_nvfp4_with_bf16_layer1()));
  const Finding f =
    only(r, RuleId::undeclared_unquantized,
         "model.layers.1: 2 modules (2 tensors, BF16) stored unquantized but declared modelopt "
         "NVFP4 quantized; vLLM, SGLang and TensorRT-LLM fail with `RuntimeError: The size of "
         "tensor a (N) must match the size of tensor b (2N)`");
  EXPECT_EQ(engines(f), k_every_engine);
  EXPECT_EQ(f.modules,
            (Strings{"model.layers.1.mlp.down_proj", "model.layers.1.self_attn.o_proj"}));
  EXPECT_EQ(f.suggested_entries, Strings{"model.layers.1*"});
  EXPECT_EQ(f.file, "config.json");
  EXPECT_EQ(f.pointer, "/quantization_config/ignore");
}

// fix makes copies of a list equal, but never copies an entry too long to evaluate (QC115) into
// the other file: what TensorRT-LLM's fnmatch would make of it there cannot be verified (this one
// matches layer 0's o_proj, stored NVFP4). The lists then still differ: the patch is refused.
TEST(RuleCases, FixDoesNotCopyAnEntryItCannotEvaluate)
{
  const std::string long_entry = "model.layers.0.self_attn.o_proj" + std::string(4100, '*');
  MemoryFileSystem fs = folder(config(k_llama, modelopt("NVFP4", {"lm_head", long_entry})),
                               llama_nvfp4_with_bf16_layer1());
  fs.add_file("m/hf_quant_config.json", hf_quant_config("NVFP4", {"lm_head"}));
  auto run = lint_path(fs, "m", LintOptions{});
  ASSERT_TRUE(run) << run.error();
  const FixPlan plan = plan_fix(fs, *run, LintOptions{});
  for (const FileEdit& edit : plan.edits) {
    EXPECT_EQ(edit.patched.find(long_entry), edit.original.find(long_entry)) << edit.file;
  }
  EXPECT_TRUE(std::any_of(
    plan.refused.begin(), plan.refused.end(),
    [](const std::string& r) { return r.starts_with("lists still differ after the patch"); }))
    << fmt::format("{}", fmt::join(plan.refused, "\n"));
}

// fix's log names each entry it adds, also one whose text the file holds elsewhere (a note).
TEST(RuleCases, FixLogNamesAnEntryTheFileMentionsOutsideTheList)
{
  const std::string model = k_llama + R"(, "_note": "model.layers.1*")";
  const MemoryFileSystem fs =
    folder(config(model, modelopt("NVFP4", {"lm_head"})), llama_nvfp4_with_bf16_layer1());
  auto run = lint_path(fs, "m", LintOptions{});
  ASSERT_TRUE(run) << run.error();
  const FixPlan plan = plan_fix(fs, *run, LintOptions{});
  ASSERT_EQ(plan.edits.size(), 1u);
  EXPECT_EQ(plan.edits[0].added, Strings{R"(ignore += "model.layers.1*")"});
}

// QC101 for a whole layer whose number begins others' (layer 1 of twelve): "model.layers.1*"
// would also exclude layers 10 and 11, stored NVFP4, so the suggestion ends at the dot, and fix
// writes it.
TEST(RuleCases, QC101PositiveWholeLayerBeginningOtherNumbers)
{
  Tensors t = bf16("lm_head") + norm("model.norm");
  for (int i = 0; i < 12; ++i) {
    const std::string layer = fmt::format("model.layers.{}.", i);
    t = t + (i == 1 ? bf16(layer + "self_attn.o_proj") + bf16(layer + "mlp.down_proj")
                    : nvfp4(layer + "self_attn.o_proj") + nvfp4(layer + "mlp.down_proj"));
  }
  const std::string model =
    R"("architectures": ["LlamaForCausalLM"], "model_type": "llama", "num_hidden_layers": 12)";
  const MemoryFileSystem fs = folder(config(model, modelopt("NVFP4", {"lm_head"})), t);
  auto run = lint_path(fs, "m", LintOptions{});
  ASSERT_TRUE(run) << run.error();
  const auto found = findings(run->report, RuleId::undeclared_unquantized);
  ASSERT_EQ(found.size(), 1u) << text(run->report);
  EXPECT_EQ(found[0].suggested_entries, Strings{"model.layers.1.*"});
  const FixPlan plan = plan_fix(fs, *run, LintOptions{});
  EXPECT_TRUE(plan.refused.empty()) << fmt::format("{}", fmt::join(plan.refused, "\n"));
  ASSERT_EQ(plan.edits.size(), 1u);
  const Report after = lint_patched(fs, plan);
  EXPECT_TRUE(findings(after, RuleId::undeclared_unquantized).empty()) << text(after);
  EXPECT_TRUE(findings(after, RuleId::excluded_but_quantized).empty()) << text(after);
}

// QC101 for part of a layer: the rest of layer 1 is quantized, so a "layer 1" pattern would
// exclude too much; the suggestion names the unquantized module.
TEST(RuleCases, QC101PositivePartOfALayer)
{
  const Report r = lint_folder(
    folder(config(k_llama, modelopt("NVFP4", {"lm_head"})),
           nvfp4("model.layers.0.self_attn.o_proj") + nvfp4("model.layers.0.mlp.down_proj") +
             nvfp4("model.layers.1.self_attn.o_proj") + bf16("model.layers.1.mlp.down_proj") +
             bf16("lm_head") + norm("model.norm")));
  const auto found = findings(r, RuleId::undeclared_unquantized);
  ASSERT_EQ(found.size(), 1u) << text(r);
  EXPECT_EQ(found[0].modules, Strings{"model.layers.1.mlp.down_proj"});
  EXPECT_EQ(found[0].suggested_entries, Strings{"model.layers.1.mlp.down_proj"});
}

// QC101's details: one line per engine and layer, module by module in name order and each
// module's in the engines' order, the first six spelled out and the rest counted.
TEST(RuleCases, QC101PositiveDetailsNameSixEngineLayersThenCountTheRest)
{
  Tensors t = nvfp4("model.layers.0.self_attn.o_proj") + bf16("lm_head") + norm("model.norm");
  // Layer 1 BF16: four layers per engine (down_proj, the fused gate/up, o_proj, the fused qkv).
  for (const char* m : {"mlp.down_proj", "mlp.gate_proj", "mlp.up_proj", "self_attn.k_proj",
                        "self_attn.o_proj", "self_attn.q_proj", "self_attn.v_proj"}) {
    t = t + bf16(std::string("model.layers.1.") + m);
  }
  const Report r = lint_folder(folder(config(k_llama, modelopt("NVFP4", {"lm_head"})), t));
  const auto found = findings(r, RuleId::undeclared_unquantized);
  ASSERT_EQ(found.size(), 1u) << text(r);
  const Finding& f = found[0];
  EXPECT_EQ(f.modules.size(), 7u);
  EXPECT_EQ(f.modules.front(), "model.layers.1.mlp.down_proj");
  ASSERT_EQ(f.details.size(), 7u) << text(r);
  const char* const engines[] = {"vLLM", "SGLang", "TensorRT-LLM"};
  for (size_t i = 0; i < 3; ++i) { // the first module's line from each engine, in order
    EXPECT_TRUE(
      f.details[i].starts_with(std::string(engines[i]) + " checks 'model.layers.1.mlp.down_proj'"))
      << f.details[i];
  }
  EXPECT_EQ(std::set<std::string>(f.details.begin(), f.details.begin() + 6).size(), 6u);
  EXPECT_EQ(f.details.back(), "... and 6 more engine prefixes"); // 3 engines x 4 layers, 6 shown
  EXPECT_EQ(f.suggested_entries, Strings{"model.layers.1*"});
}

TEST(RuleCases, QC101Negative)
{
  const Report r =
    lint_folder(folder(config(k_llama, modelopt("NVFP4", {"lm_head", "model.layers.1*"})),
                       llama_nvfp4_with_bf16_layer1()));
  EXPECT_TRUE(r.findings.empty()) << text(r);
}

namespace {

// GLM-5.3-Flash style VLM (spec 2.5, 6.2, 6.3): NextN layer model.language_model.layers.1,
// which vLLM's text-only drafter checks as model.layers.1.
const std::string k_glm_vlm =
  R"("architectures": ["Glm5NextForConditionalGeneration"], "model_type": "glm5_next", )"
  R"("num_nextn_predict_layers": 1, "text_config": {"model_type": "glm5_next_text", )"
  R"("num_hidden_layers": 1})";

Tensors
glm_vlm_nvfp4()
{
  const std::string d = "model.language_model.layers.1.";
  return nvfp4("model.language_model.layers.0.self_attn.o_proj") +
         nvfp4("model.language_model.layers.0.mlp.down_proj") + bf16(d + "self_attn.o_proj") +
         bf16(d + "mlp.down_proj") + norm(d + "input_layernorm") + bf16("lm_head");
}

} // namespace

// QC101 (R32, registry example): the draft excluded only in checkpoint namespace; vLLM's
// drafter strips 'model.language_model.' and its substring rule misses model.layers.1.
// QC101 negative (spec 6.2, DeepSeek and GLM-5 rows): a Quark NextN layer excluded module by
// module in checkpoint names. SGLang builds it under model.decoder but maps the checkpoint
// names onto it before reading the excludes (PRs 23219, 30265): every engine leaves it BF16.
// One module left out is reported for both engines that read Quark, SGLang included.
TEST(RuleCases, QC101NegativeQuarkNextnListedModuleByModule)
{
  const std::string d = "model.layers.1.";
  const Tensors stored = deepseek_nextn(make_fp8, make_bf16);
  const Strings every{"lm_head", d + "eh_proj", d + "shared_head.head", d + "self_attn.o_proj",
                      d + "mlp.down_proj"};
  const Report r = lint_folder(folder(config(k_deepseek, quark(every)), stored));
  EXPECT_TRUE(findings(r, RuleId::undeclared_unquantized).empty()) << text(r);
  Strings partial = every;
  partial.pop_back();
  const Report missing = lint_folder(folder(config(k_deepseek, quark(partial)), stored));
  const auto found = findings(missing, RuleId::undeclared_unquantized);
  ASSERT_EQ(found.size(), 1u) << text(missing);
  EXPECT_EQ(found[0].modules, Strings{d + "mlp.down_proj"});
  EXPECT_EQ(engines(found[0]), (std::set<Engine>{Engine::vllm, Engine::sglang})); // Quark readers
}

// QC101 negative: Quark's get_quant_method has no case for ParallelLMHead (vLLM and SGLang
// quark.py), so a BF16 output head, the model's or a NextN draft's, loads whether or not the
// exclude list names it. The draft's decoder modules still need their entries.
TEST(RuleCases, QC101NegativeQuarkLeavesHeadsUnquantized)
{
  const std::string d = "model.layers.1.";
  const Tensors stored = deepseek_nextn(make_fp8, make_bf16);
  const Report r = lint_folder(
    folder(config(k_deepseek, quark({d + "eh_proj", d + "self_attn.o_proj", d + "mlp.down_proj"})),
           stored));
  EXPECT_TRUE(findings(r, RuleId::undeclared_unquantized).empty()) << text(r);
  const Report missing =
    lint_folder(folder(config(k_deepseek, quark({d + "eh_proj", d + "self_attn.o_proj"})), stored));
  const auto found = findings(missing, RuleId::undeclared_unquantized);
  ASSERT_EQ(found.size(), 1u) << text(missing);
  EXPECT_EQ(found[0].modules, Strings{d + "mlp.down_proj"});
}

// Under Quark only SGLang builds the NextN eh_proj quantizable (a ReplicatedLinear with the
// config, spec 6.2); vLLM's is an nn.Linear whatever the format. A BF16 eh_proj the list misses
// is SGLang's problem alone, and stored quantized it is vLLM's alone (QC108).
TEST(RuleCases, QuarkNextnEhProjIsQuantizableInSglangOnly)
{
  const std::string d = "model.layers.1.";
  const Report bf16_proj = lint_folder(
    folder(config(k_deepseek, quark({"lm_head", d + "self_attn.o_proj", d + "mlp.down_proj"})),
           deepseek_nextn(make_fp8, make_bf16)));
  const auto found = findings(bf16_proj, RuleId::undeclared_unquantized);
  ASSERT_EQ(found.size(), 1u) << text(bf16_proj);
  EXPECT_EQ(found[0].modules, Strings{d + "eh_proj"});
  EXPECT_EQ(engines(found[0]), std::set<Engine>{Engine::sglang});
  EXPECT_TRUE(findings(bf16_proj, RuleId::draft_plain_quantized).empty()) << text(bf16_proj);

  const Report fp8_proj =
    lint_folder(folder(config(k_deepseek, quark({"lm_head"})), deepseek_fp8(true)));
  const Finding f = only(fp8_proj, RuleId::draft_plain_quantized,
                         "draft projection 'model.layers.1.eh_proj' is stored quantized, but vLLM "
                         "builds it as a plain nn.Linear that cannot load packed weights");
  EXPECT_EQ(engines(f), std::set<Engine>{Engine::vllm});
}

// SGLang rewrites the text of Quark entries that hold the NextN root ("model.layers.1") onto
// model.decoder, and matches Quark entries exactly or as "re:" regexes: a glob (rewritten or
// not) or an escaped regex (its text does not hold the root) excludes nothing there. vLLM
// matches them against the checkpoint names it keeps. (json_list()
// copies entries into the JSON as written: the regex's backslashes are escaped for it.)
TEST(RuleCases, QC101QuarkNextnEntriesSglangDoesNotRewrite)
{
  const Tensors stored = deepseek_nextn(make_fp8, make_bf16);
  for (const std::string entry :
       {"*layers.1.*", "model.layers.1.*", "re:model\\\\.layers\\\\.1\\\\..*"}) {
    const Report r = lint_folder(folder(config(k_deepseek, quark({"lm_head", entry})), stored));
    const auto found = findings(r, RuleId::undeclared_unquantized);
    ASSERT_EQ(found.size(), 1u) << entry << "\n" << text(r);
    EXPECT_EQ(engines(found[0]), std::set<Engine>{Engine::sglang}) << entry;
  }
  const Report plain =
    lint_folder(folder(config(k_deepseek, quark({"lm_head", "re:model.layers.1.*"})), stored));
  EXPECT_TRUE(findings(plain, RuleId::undeclared_unquantized).empty()) << text(plain);
}

namespace {

// Llama: every Linear of layer 0 FP8 (its q/k/v and gate/up fused by the engines), lm_head BF16.
Tensors
llama_fp8_layer0()
{
  Tensors tensors = bf16("lm_head", 64, 64) + norm("model.norm");
  for (const char* p : {"self_attn.q_proj", "self_attn.k_proj", "self_attn.v_proj",
                        "self_attn.o_proj", "mlp.gate_proj", "mlp.up_proj", "mlp.down_proj"}) {
    tensors = tensors + fp8(std::string("model.layers.0.") + p);
  }
  return tensors;
}

// Llama: layer 0 Quark FP8, layer 1 BF16.
Tensors
llama_fp8_with_bf16_layer1()
{
  return fp8("model.layers.0.self_attn.o_proj") + fp8("model.layers.0.mlp.down_proj") +
         bf16("model.layers.1.self_attn.o_proj") + bf16("model.layers.1.mlp.down_proj") +
         bf16("lm_head");
}

} // namespace

// SGLang's Quark should_ignore_layer compares entries exactly or as "re:" regexes (quark/utils.py);
// vLLM also reads fnmatch globs (PR 48606). A layer excluded by a glob alone fails in SGLang,
// the glob is named in the finding, and fix adds a start-anchored regex both engines read, after
// which nothing fails.
TEST(RuleCases, QC101QuarkGlobExcludesNothingInSglang)
{
  for (const std::string glob : {"model.layers.1.*", "*layers.1.*", "model.layers.[1]*"}) {
    MemoryFileSystem fs =
      folder(config(k_llama, quark({"lm_head", glob})), llama_fp8_with_bf16_layer1());
    const Report r = lint_folder(fs);
    const auto found = findings(r, RuleId::undeclared_unquantized);
    ASSERT_EQ(found.size(), 1u) << glob << "\n" << text(r);
    EXPECT_EQ(engines(found[0]), std::set<Engine>{Engine::sglang}) << glob;
    EXPECT_EQ(found[0].modules,
              (Strings{"model.layers.1.mlp.down_proj", "model.layers.1.self_attn.o_proj"}));
    EXPECT_EQ(found[0].details.back(),
              "'" + glob +
                "' would name 'model.layers.1.mlp.down_proj' as a glob, but SGLang reads Quark "
                "entries as exact names or \"re:\" regexes");
    EXPECT_EQ(found[0].suggested_entries, Strings{"re:model\\.layers\\.1\\."});
    // The fix line quotes the entry as the file holds it: pasted into the list, it parses.
    EXPECT_EQ(
      found[0].fix,
      "add \"re:model\\\\.layers\\\\.1\\\\.\" to config.json exclude (qcheck fix --inplace)");
    auto run = lint_path(fs, "m", {});
    ASSERT_TRUE(run);
    const FixPlan plan = plan_fix(fs, *run, {});
    EXPECT_TRUE(plan.refused.empty()) << fmt::format("{}", fmt::join(plan.refused, "\n"));
    ASSERT_EQ(plan.edits.size(), 1u);
    EXPECT_EQ(plan.edits[0].added, Strings{"exclude += \"re:model\\\\.layers\\\\.1\\\\.\""});
  }
  // The same layer named by the regex (JSON-escaped here), or module by module: nothing fails.
  for (const Strings& listed :
       {Strings{"lm_head", "re:model\\\\.layers\\\\.1\\\\."},
        Strings{"lm_head", "model.layers.1.self_attn.o_proj", "model.layers.1.mlp.down_proj"}}) {
    const Report r =
      lint_folder(folder(config(k_llama, quark(listed)), llama_fp8_with_bf16_layer1()));
    EXPECT_TRUE(r.findings.empty()) << text(r);
  }
}

// vLLM maps Quark's exact entries into its VLM namespace, not its regexes, which meet its
// renamed prefixes (language_model.model.X): a regex in checkpoint names excludes the layer for
// SGLang alone. fix writes the root in both namespaces, and the patched folder lints clean.
TEST(RuleCases, QC101QuarkVlmRegexMeetsVllmRenamedPrefixes)
{
  const std::string qwen35_vlm =
    R"("architectures": ["Qwen3_5MoeForConditionalGeneration"], "model_type": "qwen3_5_moe", )"
    R"("text_config": {"model_type": "qwen3_5_moe_text", "num_hidden_layers": 2})";
  const std::string l = "model.language_model.layers.";
  const Tensors stored = fp8(l + "0.self_attn.o_proj") + fp8(l + "0.mlp.down_proj") +
                         bf16(l + "1.self_attn.o_proj") + bf16(l + "1.mlp.down_proj") +
                         bf16("lm_head");
  MemoryFileSystem fs = folder(config(qwen35_vlm, quark({"lm_head"})), stored);
  auto run = lint_path(fs, "m", {});
  ASSERT_TRUE(run);
  const auto found = findings(run->report, RuleId::undeclared_unquantized);
  ASSERT_EQ(found.size(), 1u) << text(run->report);
  EXPECT_EQ(found[0].suggested_entries, (Strings{"re:model\\.language_model\\.layers\\.1\\.",
                                                 "re:language_model\\.model\\.layers\\.1\\."}));
  const FixPlan plan = plan_fix(fs, *run, {});
  EXPECT_TRUE(plan.refused.empty()) << fmt::format("{}", fmt::join(plan.refused, "\n"));
  EXPECT_EQ(plan.edits.size(), 1u);
  // Each spelling alone: the checkpoint's for SGLang only, vLLM's for vLLM only.
  const Report checkpoint_names = lint_folder(folder(
    config(qwen35_vlm, quark({"lm_head", "re:model\\\\.language_model\\\\.layers\\\\.1\\\\."})),
    stored));
  const auto in_vllm = findings(checkpoint_names, RuleId::undeclared_unquantized);
  ASSERT_EQ(in_vllm.size(), 1u) << text(checkpoint_names);
  EXPECT_EQ(engines(in_vllm[0]), std::set<Engine>{Engine::vllm});
  const Report vllm_names = lint_folder(folder(
    config(qwen35_vlm, quark({"lm_head", "re:language_model\\\\.model\\\\.layers\\\\.1\\\\."})),
    stored));
  const auto in_sglang = findings(vllm_names, RuleId::undeclared_unquantized);
  ASSERT_EQ(in_sglang.size(), 1u) << text(vllm_names);
  EXPECT_EQ(engines(in_sglang[0]), std::set<Engine>{Engine::sglang});
}

// A whole NextN draft under Quark: vLLM checks its checkpoint names, SGLang model.decoder.X and
// model.eh_proj. fix names each root by a regex (a glob would exclude nothing in SGLang) and the
// eh_proj exactly; the patched folder lints clean.
TEST(RuleCases, QC101QuarkNextnFixNamesRootsByRegex)
{
  MemoryFileSystem fs =
    folder(config(k_deepseek, quark({"lm_head"})), deepseek_nextn(make_fp8, make_bf16));
  auto run = lint_path(fs, "m", {});
  ASSERT_TRUE(run);
  const auto found = findings(run->report, RuleId::undeclared_unquantized);
  ASSERT_EQ(found.size(), 1u) << text(run->report);
  EXPECT_EQ(found[0].suggested_entries,
            (Strings{"re:model\\.layers\\.1\\.", "re:model\\.decoder\\.", "model.eh_proj"}));
  const FixPlan plan = plan_fix(fs, *run, {});
  EXPECT_TRUE(plan.refused.empty()) << fmt::format("{}", fmt::join(plan.refused, "\n"));
  EXPECT_EQ(plan.edits.size(), 1u);
}

// SGLang's DeepSeek-V3 NextN draft maps "model.layers.61" in its ModelOpt, compressed-tensors and
// FP8 lists to "model.decoder" (a fixed 61, DeepseekV3ForCausalLM and DeepseekV32ForCausalLM
// only): with 61 layers, an exclusion in the checkpoint's spelling excludes SGLang's decoder too,
// and fix needs no "model.decoder*". GLM's NextN has no such mapper, nor does a layer 3 (the
// fixture modelopt-fp8-deepseek-nextn-sglang-gap).
TEST(RuleCases, QC101SglangMapsDeepseekLayer61)
{
  const std::string d = "model.layers.61.";
  const Tensors stored = deepseek_nextn(make_fp8, make_bf16, false, 61);
  const std::string ct_head =
    R"({"quant_method": "compressed-tensors", "format": "float-quantized", "config_groups": )"
    R"({"group_0": {"targets": ["Linear"], "weights": {"num_bits": 8, "type": "float", )"
    R"("strategy": "tensor"}}}, "ignore": )";
  for (const Strings& list :
       {Strings{"lm_head", "model.layers.61*"}, Strings{"lm_head", "model.layers.61"},
        Strings{"lm_head", d + "eh_proj", d + "shared_head.head", d + "self_attn.o_proj",
                d + "mlp.down_proj"}}) {
    const Report r = lint_folder(folder(config(k_deepseek61, modelopt("FP8", list)), stored));
    EXPECT_TRUE(findings(r, RuleId::undeclared_unquantized).empty()) << list[1] << "\n" << text(r);
  }
  // compressed-tensors: exact names are mapped and met; a parent name is not (no prefix match).
  const Report ct = lint_folder(
    folder(config(k_deepseek61, ct_head +
                                  json_list({"lm_head", d + "eh_proj", d + "shared_head.head",
                                             d + "self_attn.o_proj", d + "mlp.down_proj"}) +
                                  "}"),
           stored));
  EXPECT_TRUE(findings(ct, RuleId::undeclared_unquantized).empty()) << text(ct);
  // explain names the entry as written, and how SGLang reads it.
  MemoryFileSystem fs =
    folder(config(k_deepseek61, modelopt("FP8", {"lm_head", "model.layers.61*"})), stored);
  auto run = lint_path(fs, "m", {});
  ASSERT_TRUE(run);
  const auto explained = explain_module(*run, d + "self_attn.o_proj", {Engine::sglang});
  ASSERT_TRUE(explained) << explained.error();
  EXPECT_NE(explained->find("  SGLang: checks 'model.decoder.self_attn.o_proj' (Linear) against "
                            "config.json ignore: excluded — 'model.layers.61*' (SGLang's DeepSeek "
                            "NextN loader reads it as 'model.decoder*') in ignore matches "
                            "'model.decoder.self_attn.o_proj'\n"),
            std::string::npos)
    << *explained;
  // A long list (16 entries or more) is decided through its compiled index, the mapped one too.
  Strings long_list{"lm_head"};
  for (int i = 0; i < 20; ++i) {
    long_list.push_back(fmt::format("model.layers.0.mlp.experts.{}.down_proj", i));
  }
  long_list.push_back("model.layers.61*");
  const Report long_run =
    lint_folder(folder(config(k_deepseek61, modelopt("FP8", long_list)), stored));
  EXPECT_TRUE(findings(long_run, RuleId::undeclared_unquantized).empty()) << text(long_run);
  // Without the entry: SGLang still misses the decoder, and fix adds the checkpoint's spelling
  // alone.
  const Report missing =
    lint_folder(folder(config(k_deepseek61, modelopt("FP8", {"lm_head"})), stored));
  const auto found = findings(missing, RuleId::undeclared_unquantized);
  ASSERT_EQ(found.size(), 1u) << text(missing);
  EXPECT_TRUE(engines(found[0]).count(Engine::sglang)) << text(missing);
  EXPECT_EQ(found[0].suggested_entries, Strings{"model.layers.61*"});
  // GLM-4.5's NextN draft maps nothing: SGLang needs its own spelling (fix lists the
  // checkpoint's with it, as for every draft).
  const std::string glm61 = R"("architectures": ["Glm4MoeForCausalLM"], "model_type": "glm4_moe", )"
                            R"("num_hidden_layers": 61, "num_nextn_predict_layers": 1)";
  const Report glm =
    lint_folder(folder(config(glm61, modelopt("FP8", {"lm_head", "model.layers.61*"})), stored));
  const auto glm_found = findings(glm, RuleId::undeclared_unquantized);
  ASSERT_EQ(glm_found.size(), 1u) << text(glm);
  EXPECT_EQ(engines(glm_found[0]), std::set<Engine>{Engine::sglang});
  EXPECT_EQ(glm_found[0].suggested_entries, (Strings{"model.layers.61*", "model.decoder*"}));
}

// The same mapping reaches the names that select: ModelOpt MIXED_PRECISION's quantized_layers and
// compressed-tensors' targets. A draft stored FP8 and selected as model.layers.61.X is what
// SGLang builds quantized; read unmapped, SGLang would build it unquantized (a false finding).
TEST(RuleCases, SglangMapsDeepseekLayer61InSelectingNames)
{
  const std::string d = "model.layers.61.";
  const Tensors stored = deepseek_nextn(make_fp8, make_fp8, false, 61);
  const std::string ignore = json_list({"lm_head", d + "eh_proj", d + "shared_head.head"});
  std::string layers;
  for (const std::string& m :
       Strings{"model.layers.0.self_attn.o_proj", "model.layers.0.mlp.down_proj",
               d + "self_attn.o_proj", d + "mlp.down_proj"}) {
    layers += fmt::format(R"("{}": {{"quant_algo": "FP8"}}, )", m);
  }
  layers.resize(layers.size() - 2);
  const Report mixed = lint_folder(
    folder(config(k_deepseek61,
                  R"({"quant_method": "modelopt", "quant_algo": "MIXED_PRECISION", "ignore": )" +
                    ignore + R"(, "quantized_layers": {)" + layers + "}}"),
           stored));
  EXPECT_TRUE(mixed.findings.empty()) << text(mixed);
  const Tensors ct_stored = deepseek_nextn(make_ct_fp8, make_ct_fp8, false, 61);
  const Report ct = lint_folder(folder(
    config(
      k_deepseek61,
      R"({"quant_method": "compressed-tensors", "format": "float-quantized", "config_groups": )"
      R"({"group_0": {"targets": ["re:model[.]layers[.]0[.].*", "re:.*model.layers.61.*"], )"
      R"("weights": {"num_bits": 8, "type": "float", "strategy": "tensor"}}}, "ignore": )" +
        ignore + "}"),
    ct_stored));
  EXPECT_TRUE(ct.findings.empty()) << text(ct);
}

// The mapping is text: a DeepSeek draft at layer 3 excluded by a list copied from the 61-layer
// model ("model.layers.61*") is excluded in SGLang. The entry is then in use (no QC112, short
// list or long), and a draft stored FP8 is QC102 for SGLang alone.
TEST(RuleCases, SglangMappedEntryIsUsedByTheDraft)
{
  const Tensors stored = deepseek_nextn(make_fp8, make_fp8);
  Strings list{"lm_head", "model.layers.61*"};
  const Strings dead_padding{
    "16 ignore entries in a row match no module of the checkpoint, from "
    "'model.layers.0.mlp.experts.0.down_proj' to 'model.layers.0.mlp.experts.15.down_proj'"};
  for (int round = 0; round < 2; ++round) {
    const Report r = lint_folder(folder(config(k_deepseek, modelopt("FP8", list)), stored));
    EXPECT_EQ(messages(r, RuleId::unused_entry), round == 0 ? Strings{} : dead_padding) << text(r);
    const auto wrong = findings(r, RuleId::excluded_but_quantized);
    EXPECT_EQ(wrong.size(), 2u) << text(r); // the draft's o_proj and down_proj
    for (const Finding& f : wrong) {
      EXPECT_EQ(engines(f), std::set<Engine>{Engine::sglang}) << f.message;
    }
    for (int i = 0; i < 16; ++i) {
      list.push_back(fmt::format("model.layers.0.mlp.experts.{}.down_proj", i)); // long list
    }
  }
}

// explain --entries lists what a mapped entry reaches in SGLang, and explain names a
// compressed-tensors target as written.
TEST(RuleCases, ExplainSglangMappedEntries)
{
  const std::string d = "model.layers.61.";
  MemoryFileSystem fs =
    folder(config(k_deepseek61, modelopt("FP8", {"lm_head", "model.layers.61*"})),
           deepseek_nextn(make_fp8, make_bf16, false, 61));
  auto run = lint_path(fs, "m", {});
  ASSERT_TRUE(run);
  const std::string entries = explain_entries(*run, {Engine::sglang});
  EXPECT_NE(entries.find("  'model.layers.61*'\n    SGLang: 2 layers: model.decoder.mlp.down_proj, "
                         "model.decoder.self_attn.o_proj\n"),
            std::string::npos)
    << entries;
  const Tensors ct_stored = deepseek_nextn(make_ct_fp8, make_ct_fp8, false, 61);
  MemoryFileSystem ct_fs = folder(
    config(
      k_deepseek61,
      R"({"quant_method": "compressed-tensors", "format": "float-quantized", "config_groups": )"
      R"({"group_0": {"targets": ["re:model[.]layers[.]0[.].*", "re:.*model.layers.61.*"], )"
      R"("weights": {"num_bits": 8, "type": "float", "strategy": "tensor"}}}, "ignore": )" +
        json_list({"lm_head", d + "eh_proj", d + "shared_head.head"}) + "}"),
    ct_stored);
  auto ct_run = lint_path(ct_fs, "m", {});
  ASSERT_TRUE(ct_run);
  const auto proj = explain_module(*ct_run, d + "self_attn.o_proj", {Engine::sglang});
  ASSERT_TRUE(proj) << proj.error();
  EXPECT_NE(proj->find("'re:.*model.layers.61.*' (SGLang's DeepSeek NextN loader reads it as "
                       "'re:.*model.decoder.*')"),
            std::string::npos)
    << *proj;
}

TEST(RuleCases, QC101PositiveVlmDraft)
{
  const Report r = lint_folder(
    folder(config(k_glm_vlm, modelopt("NVFP4", {"lm_head", "model.language_model.layers.1*"})),
           glm_vlm_nvfp4()));
  const Finding f =
    only(r, RuleId::undeclared_unquantized,
         "MTP/NextN draft model.language_model.layers.1: 2 modules (2 tensors, BF16) stored "
         "unquantized but declared modelopt NVFP4 quantized; vLLM fails with `RuntimeError: The "
         "size of tensor a (N) must match the size of tensor b (2N)`");
  EXPECT_EQ(engines(f), std::set<Engine>{Engine::vllm});
  EXPECT_EQ(f.suggested_entries, (Strings{"model.language_model.layers.1*", "model.layers.1*"}));
}

TEST(RuleCases, QC101NegativeVlmDraft)
{
  const Report r = lint_folder(folder(
    config(k_glm_vlm,
           modelopt("NVFP4", {"lm_head", "model.language_model.layers.1*", "model.layers.1*"})),
    glm_vlm_nvfp4()));
  EXPECT_TRUE(r.findings.empty()) << text(r);
}

// Spec 2.2.2: for MIXED_PRECISION "the exclude list still applies first". A BF16 module that
// quantized_layers still lists but `ignore` excludes is built unquantized by every engine.
TEST(RuleCases, QC101NegativeMixedPrecisionExcluded)
{
  const Report r = lint_folder(
    folder(config(k_llama, R"({"quant_method": "modelopt", "quant_algo": "MIXED_PRECISION", )"
                           R"("ignore": ["lm_head", "model.layers.1*"], "quantized_layers": {)"
                           R"("model.layers.0.self_attn.o_proj": {"quant_algo": "NVFP4"}, )"
                           R"("model.layers.0.mlp.down_proj": {"quant_algo": "NVFP4"}, )"
                           R"("model.layers.1.mlp.down_proj": {"quant_algo": "NVFP4"}}})"),
           llama_nvfp4_with_bf16_layer1()));
  EXPECT_TRUE(findings(r, RuleId::undeclared_unquantized).empty()) << text(r);
}

// QC102 (R8): the list excludes a module that is stored NVFP4.
TEST(RuleCases, QC102Positive)
{
  const Report r =
    lint_folder(folder(config(k_llama, modelopt("NVFP4", {"lm_head", "model.layers.0.mlp.down_proj",
                                                          "model.layers.1.mlp.down_proj",
                                                          "model.layers.1.self_attn.o_proj"})),
                       llama_nvfp4_with_bf16_layer1()));
  const Finding f = only(r, RuleId::excluded_but_quantized,
                         "'model.layers.0.mlp.down_proj' is stored quantized but vLLM, SGLang "
                         "and TensorRT-LLM exclude it");
  EXPECT_EQ(engines(f), k_every_engine);
  EXPECT_EQ(f.modules, Strings{"model.layers.0.mlp.down_proj"});
}

TEST(RuleCases, QC102Negative)
{
  const Report r =
    lint_folder(folder(config(k_llama, modelopt("NVFP4", {"lm_head", "model.layers.1.mlp.down_proj",
                                                          "model.layers.1.self_attn.o_proj"})),
                       llama_nvfp4_with_bf16_layer1()));
  EXPECT_TRUE(r.findings.empty()) << text(r);
}

// compressed-tensors W4A16 whose targets are regexes naming the parts of fused layers (the
// MLP's gate/up/down, the experts' projections); attention BF16 and ignored by a regex.
std::string
ct_w4a16_targets(const Strings& targets)
{
  return R"({"quant_method": "compressed-tensors", "format": "pack-quantized", )"
         R"("config_groups": {"group_0": {"targets": )" +
         json_list(targets) +
         R"(, "weights": {"num_bits": 4, "type": "int", "symmetric": true, "strategy": "group", )"
         R"("group_size": 32}}}, "ignore": ["lm_head", "re:.*self_attn.*"]})";
}

const std::string k_qwen3_moe_ct =
  R"("architectures": ["Qwen3MoeForCausalLM"], "model_type": "qwen3_moe", "num_hidden_layers": 1)";

Tensors
qwen3_moe_ct_mlp()
{
  const std::string l = "model.layers.0.";
  return bf16(l + "self_attn.q_proj") + bf16(l + "self_attn.k_proj") +
         bf16(l + "self_attn.v_proj") + bf16(l + "self_attn.o_proj") +
         experts(l + "mlp.experts", 0, 1,
                 [](const std::string& m, uint64_t, uint64_t) { return ct_pack(m); }) +
         bf16(l + "mlp.gate", 2, 64) + ct_pack(l + "mlp.shared_expert.gate_proj") +
         ct_pack(l + "mlp.shared_expert.up_proj") + ct_pack(l + "mlp.shared_expert.down_proj") +
         bf16("lm_head");
}

// QC102 negative (spec 3.3 targets, R20): both engines target a fused layer whose every part a
// target names (gate_up_proj from gate_proj and up_proj, q/k/v likewise), and an MoE layer by
// expert 0's projections; stored quantized, nothing to report.
TEST(RuleCases, QC102NegativeRegexTargetsNameTheParts)
{
  const Report r = lint_folder(folder(
    config(k_qwen3_moe_ct, ct_w4a16_targets({"re:.*mlp\\\\.experts.*_proj$",
                                             "re:.*shared_expert\\\\.(gate|up|down)_proj$"})),
    qwen3_moe_ct_mlp()));
  EXPECT_TRUE(r.findings.empty()) << text(r);
}

// QC102 positive: one part of the fused gate_up_proj left out of the targets leaves the fused
// layer untargeted (unquantized) while both parts are stored W4A16.
TEST(RuleCases, QC102PositiveRegexTargetsMissAPart)
{
  const Report r = lint_folder(
    folder(config(k_qwen3_moe_ct, ct_w4a16_targets({"re:.*mlp\\\\.experts.*_proj$",
                                                    "re:.*shared_expert\\\\.(gate|down)_proj$"})),
           qwen3_moe_ct_mlp()));
  const auto excluded = findings(r, RuleId::excluded_but_quantized);
  Strings modules;
  for (const Finding& f : excluded) {
    modules.insert(modules.end(), f.modules.begin(), f.modules.end());
  }
  std::sort(modules.begin(), modules.end());
  EXPECT_EQ(modules, (Strings{"model.layers.0.mlp.shared_expert.gate_proj",
                              "model.layers.0.mlp.shared_expert.up_proj"}))
    << text(r);
}

// QC102 (spec 6.2 Qwen3.5 row, 6.4 "4096 vs 2048 (reverse)"): SGLang's Qwen3.5 drafter returns
// no quant config for Quark when any mtp.* entry is excluded, so the FP8 draft attention and
// experts are built BF16 - the same R8 error qcheck reports for the ModelOpt NVFP4 variant
// (test_formats ModelOptNvfp4Qwen35DraftMixBreaksSglang).
TEST(RuleCases, QC102PositiveQwen35QuarkDraftMix)
{
  Tensors t = qwen35_quark(true);
  const Report r = lint_folder(folder(config(k_qwen35, quark({"lm_head", "mtp.fc"})), t));
  std::set<std::string> modules;
  for (const Finding& f : findings(r, RuleId::excluded_but_quantized)) {
    EXPECT_EQ(engines(f), std::set<Engine>{Engine::sglang});
    modules.insert(f.modules.begin(), f.modules.end());
  }
  EXPECT_EQ(modules, (std::set<std::string>{"mtp.layers.0.mlp.experts.0.down_proj",
                                            "mtp.layers.0.mlp.experts.0.gate_proj",
                                            "mtp.layers.0.mlp.experts.0.up_proj",
                                            "mtp.layers.0.self_attn.o_proj"}))
    << text(r);
}

// QC103 (R9, stored half): q_proj exported NVFP4, k_proj and v_proj BF16.
TEST(RuleCases, QC103Positive)
{
  const std::string a = "model.layers.0.self_attn.";
  const Report r =
    lint_folder(folder(config(k_llama, modelopt("NVFP4", {"lm_head"})),
                       nvfp4(a + "q_proj") + bf16(a + "k_proj") + bf16(a + "v_proj") +
                         nvfp4(a + "o_proj") + bf16("lm_head")));
  const Finding f = only(r, RuleId::fused_shards_disagree,
                         "fused layer 'model.layers.0.self_attn.qkv_proj' mixes stored quantized "
                         "(1) and unquantized (2) members; engines decide once for the fused "
                         "layer");
  EXPECT_EQ(f.modules, (Strings{a + "q_proj", a + "k_proj", a + "v_proj"}));
}

TEST(RuleCases, QC103Negative)
{
  const std::string a = "model.layers.0.self_attn.";
  const Report r =
    lint_folder(folder(config(k_llama, modelopt("NVFP4", {"lm_head"})),
                       nvfp4(a + "q_proj") + nvfp4(a + "k_proj") + nvfp4(a + "v_proj") +
                         nvfp4(a + "o_proj") + bf16("lm_head")));
  EXPECT_TRUE(r.findings.empty()) << text(r);
}

// QC103 (R9, declared half): attention kept BF16, but the list forgot v_proj (2.2.1).
TEST(RuleCases, QC103PositiveDeclared)
{
  const std::string a = "model.layers.0.self_attn.";
  const Report r =
    lint_folder(folder(config(k_llama, modelopt("NVFP4", {"lm_head", a + "q_proj", a + "k_proj"})),
                       bf16(a + "q_proj") + bf16(a + "k_proj") + bf16(a + "v_proj") +
                         nvfp4(a + "o_proj") + bf16("lm_head")));
  const Finding f =
    only(r, RuleId::fused_shards_disagree,
         "the shards of fused layer 'model.layers.0.self_attn.qkv_proj' are not excluded alike; "
         "vLLM, SGLang and TensorRT-LLM stop with `Detected some but not all shards of "
         "model.layers.0.self_attn.qkv_proj are quantized`");
  EXPECT_EQ(engines(f), k_every_engine);
}

TEST(RuleCases, QC103NegativeDeclared)
{
  const std::string a = "model.layers.0.self_attn.";
  const Report r = lint_folder(folder(
    config(k_llama, modelopt("NVFP4", {"lm_head", a + "q_proj", a + "k_proj", a + "v_proj"})),
    bf16(a + "q_proj") + bf16(a + "k_proj") + bf16(a + "v_proj") + nvfp4(a + "o_proj") +
      bf16("lm_head")));
  EXPECT_TRUE(r.findings.empty()) << text(r);
}

// One stored mixture is one problem: SGLang spells the MLA fused layer
// fused_qkv_a_proj_with_mqa, vLLM fused_qkv_a_proj (spec 7.2); the finding must not repeat
// per spelling.
TEST(RuleCases, QC103StoredMixtureReportedOncePerLayer)
{
  const std::string a = "model.layers.0.self_attn.";
  const std::string deepseek = deepseek_layers(1);
  const Report r =
    lint_folder(folder(config(deepseek, modelopt("FP8", {"lm_head"})),
                       fp8(a + "q_a_proj") + bf16(a + "kv_a_proj_with_mqa") + fp8(a + "q_b_proj") +
                         fp8(a + "kv_b_proj") + fp8(a + "o_proj") + bf16("lm_head")));
  EXPECT_EQ(findings(r, RuleId::fused_shards_disagree).size(), 1u) << text(r);
}

// SGLang's ModelOpt matcher compares an MLA projection entry's leaf with the module's leaf
// alone (is_layer_excluded): the draft layer's kv_b_proj, listed by name, also excludes layer
// 0's, stored FP8. vLLM (substring) and TensorRT-LLM (ancestors) exclude only the draft's.
TEST(RuleCases, QC102SglangModelOptMlaEntryExcludesEveryLayersProjection)
{
  const std::string a = "model.layers.0.self_attn.";
  const std::string d = "model.layers.1.";
  const Tensors stored =
    deepseek_nextn(make_fp8, make_bf16) + fp8(a + "kv_b_proj") + bf16(d + "self_attn.kv_b_proj");
  const auto list = [&](const std::string& last) {
    return Strings{
      "lm_head",           d + "eh_proj", d + "shared_head.head", d + "self_attn.o_proj",
      d + "mlp.down_proj", d + last};
  };
  // Short lists are matched entry by entry, long ones through their compiled index.
  for (const size_t extra : {0, 20}) {
    const Report r = lint_folder(
      folder(config(k_deepseek,
                    modelopt("FP8", padded(list("self_attn.kv_b_proj"), extra, "x.{}.down_proj"))),
             stored));
    const auto found = findings(r, RuleId::excluded_but_quantized);
    ASSERT_EQ(found.size(), 1u) << text(r);
    EXPECT_EQ(found[0].modules, Strings{a + "kv_b_proj"});
    EXPECT_EQ(engines(found[0]), std::set<Engine>{Engine::sglang});
    EXPECT_NE(text(r).find("'model.layers.1.self_attn.kv_b_proj' in ignore matches "
                           "'model.layers.0.self_attn.kv_b_proj' (SGLang's ModelOpt matcher reads "
                           "an entry ending in 'kv_b_proj' as every module whose last component "
                           "holds it, in any layer)"),
              std::string::npos)
      << text(r);
    EXPECT_EQ(found[0].fix,
              "spell model.layers.1.self_attn.kv_b_proj as "
              "'model.layers.1.self_attn.kv_b_proj*': SGLang reads an entry ending in "
              "an MLA projection as that projection in every layer; or store the "
              "module unquantized");
  }
  // Listed by its layer (a parent name), nothing reaches layer 0.
  const Report parent =
    lint_folder(folder(config(k_deepseek, modelopt("FP8", list("self_attn"))), stored));
  EXPECT_TRUE(findings(parent, RuleId::excluded_but_quantized).empty()) << text(parent);
}

// SGLang reads a fused layer's shards through is_layer_skipped alone (whole dotted components:
// no globs, no MLA rule), then the fused name through is_layer_excluded too. The draft layer's
// kv_a_proj_with_mqa entry reaches layer 0's fused_qkv_a_proj_with_mqa by its name, not by one
// of its shards: no shard disagreement (QC103), the fused layer excluded (QC102, SGLang).
// Globs naming layer 0's two shards reach neither: SGLang builds the fused layer quantized.
TEST(RuleCases, QC101SglangModelOptReadsFusedShardsWithoutGlobsOrTheMlaRule)
{
  const std::string a = "model.layers.0.self_attn.";
  const std::string d = "model.layers.1.";
  const std::string deepseek = deepseek_layers(2);
  Tensors stored = bf16("lm_head");
  for (const char* p : {"q_a_proj", "kv_a_proj_with_mqa", "q_b_proj", "kv_b_proj", "o_proj"}) {
    stored = stored + fp8(a + p) + bf16(d + "self_attn." + p);
  }
  const Strings draft{"lm_head", d + "self_attn.o_proj", d + "self_attn.q_b_proj*",
                      d + "self_attn.kv_b_proj*"};
  Strings mla = draft;
  mla.push_back(d + "self_attn.q_a_proj");
  mla.push_back(d + "self_attn.kv_a_proj_with_mqa");
  const Report r = lint_folder(folder(config(deepseek, modelopt("FP8", mla)), stored));
  EXPECT_TRUE(findings(r, RuleId::fused_shards_disagree).empty()) << text(r);
  const auto found = findings(r, RuleId::excluded_but_quantized);
  ASSERT_EQ(found.size(), 2u) << text(r);
  for (const Finding& f : found) {
    EXPECT_EQ(engines(f), std::set<Engine>{Engine::sglang});
    EXPECT_EQ(f.details.front(), "SGLang checks '" + a + "fused_qkv_a_proj_with_mqa': '" + d +
                                   "self_attn.kv_a_proj_with_mqa' in ignore matches '" + a +
                                   "fused_qkv_a_proj_with_mqa' (SGLang's ModelOpt matcher reads "
                                   "an entry ending in 'kv_a_proj_with_mqa' as every module "
                                   "whose last component holds it, in any layer)");
  }
  EXPECT_EQ(found[0].modules, Strings{a + "kv_a_proj_with_mqa"});
  EXPECT_EQ(found[1].modules, Strings{a + "q_a_proj"});
  // No spelling of a shard of vLLM's fused_qkv_a_proj escapes SGLang's rule: no respelling.
  EXPECT_EQ(found[0].fix, "remove " + d +
                            "self_attn.kv_a_proj_with_mqa from the list (qcheck "
                            "fix --remove-excluding), or store the module unquantized");
  // One shard listed as a glob, the other by name: is_layer_skipped reads the second alone,
  // and SGLang stops on the draft's fused layer.
  Strings mixed = draft;
  mixed.push_back(d + "self_attn.q_a_proj*");
  mixed.push_back(d + "self_attn.kv_a_proj_with_mqa");
  const Report m = lint_folder(folder(config(deepseek, modelopt("FP8", mixed)), stored));
  const auto disagree = findings(m, RuleId::fused_shards_disagree);
  ASSERT_EQ(disagree.size(), 1u) << text(m);
  EXPECT_EQ(engines(disagree[0]), std::set<Engine>{Engine::sglang});
  // Both layer-1 shards listed as globs: SGLang's is_layer_skipped reads neither, and the
  // fused name matches no glob. vLLM (which splits "X*" into "X" and "X.*") and TensorRT-LLM
  // (fnmatch) exclude it.
  Strings globs = draft;
  globs.push_back(d + "self_attn.q_a_proj*");
  globs.push_back(d + "self_attn.kv_a_proj_with_mqa*");
  const Report g = lint_folder(folder(config(deepseek, modelopt("FP8", globs)), stored));
  EXPECT_TRUE(findings(g, RuleId::excluded_but_quantized).empty()) << text(g);
  const auto undeclared = findings(g, RuleId::undeclared_unquantized);
  ASSERT_EQ(undeclared.size(), 1u) << text(g);
  EXPECT_EQ(engines(undeclared[0]), std::set<Engine>{Engine::sglang});
  EXPECT_NE(text(g).find("SGLang checks '" + d +
                         "self_attn.fused_qkv_a_proj_with_mqa': no entry of ignore matches"),
            std::string::npos)
    << text(g);
}

// fix spells q_b_proj and kv_b_proj "X*" for ModelOpt: SGLang would read "X" as that projection
// in every layer (layer 0's, stored FP8, too); "X*" names X alone in every engine. (Not the
// shards of the fused q_a_proj + kv_a_proj_with_mqa layer: vLLM compares those exactly.)
TEST(RuleCases, QC101FixSpellsMlaProjectionsSoSglangReadsOneLayer)
{
  const std::string a = "model.layers.0.self_attn.";
  const std::string b = "model.layers.1.self_attn.";
  const std::string deepseek = deepseek_layers(2);
  Tensors stored =
    bf16("lm_head") + fp8("model.layers.0.mlp.down_proj") + fp8("model.layers.1.mlp.down_proj");
  for (const char* p : {"q_a_proj", "kv_a_proj_with_mqa"}) {
    stored = stored + fp8(a + p) + fp8(b + p);
  }
  for (const char* p : {"q_b_proj", "kv_b_proj", "o_proj"}) {
    stored = stored + fp8(a + p) + bf16(b + p);
  }
  MemoryFileSystem fs = folder(config(deepseek, modelopt("FP8", {"lm_head"})), stored);
  auto run = lint_path(fs, "m", {});
  ASSERT_TRUE(run);
  const auto found = findings(run->report, RuleId::undeclared_unquantized);
  ASSERT_EQ(found.size(), 1u) << text(run->report);
  EXPECT_EQ(found[0].suggested_entries, (Strings{b + "kv_b_proj*", b + "o_proj", b + "q_b_proj*"}));
  const FixPlan plan = plan_fix(fs, *run, {});
  EXPECT_TRUE(plan.refused.empty()) << fmt::format("{}", fmt::join(plan.refused, "\n"));
  EXPECT_EQ(plan.edits.size(), 1u);
}

// compressed-tensors names its own error for a fused layer whose shards disagree (spec 3.3,
// registry QC103): quoting ModelOpt's text for it misleads.
TEST(RuleCases, QC103DeclaredQuotesTheFormatsError)
{
  const std::string a = "model.layers.0.self_attn.";
  const Report r = lint_folder(folder(
    config(k_llama, R"({"quant_method": "compressed-tensors", "format": "float-quantized", )"
                    R"("config_groups": {"group_0": {"targets": ["Linear"], "weights": )"
                    R"({"num_bits": 8, "type": "float", "strategy": "channel"}}}, "ignore": )" +
                      json_list({"lm_head", a + "q_proj", a + "k_proj"}) + "}"),
    bf16(a + "q_proj") + bf16(a + "k_proj") + bf16(a + "v_proj") + ct_fp8(a + "o_proj") +
      bf16("lm_head")));
  const auto found = findings(r, RuleId::fused_shards_disagree);
  ASSERT_EQ(found.size(), 1u) << text(r);
  EXPECT_NE(found[0].message.find("Found a different quantization schemes"), std::string::npos)
    << found[0].message;
  EXPECT_EQ(found[0].message.find("Detected some but not all shards"), std::string::npos)
    << found[0].message;
}

namespace {

// A MoE layer: BF16 router, two experts in the given layouts.
template<typename Layout0, typename Layout1>
Tensors
moe_layer(Layout0 expert0, Layout1 expert1)
{
  const std::string moe = "model.layers.0.mlp.experts";
  return experts(moe, 0, 0, expert0) + experts(moe, 1, 1, expert1) +
         bf16("model.layers.0.mlp.gate", 2, 64) + nvfp4("model.layers.0.self_attn.o_proj") +
         bf16("lm_head");
}

const std::string k_qwen3_moe =
  R"("architectures": ["Qwen3MoeForCausalLM"], "model_type": "qwen3_moe", "num_hidden_layers": 1)";

} // namespace

// QC104 (R10, error half): expert 1 exported BF16 while expert 0 is NVFP4.
TEST(RuleCases, QC104Positive)
{
  const Report r = lint_folder(folder(
    config(k_qwen3_moe, modelopt("NVFP4", {"lm_head", "*mlp.gate"})), moe_layer(nvfp4, bf16)));
  const Finding f = only(r, RuleId::experts_disagree,
                         "fused MoE 'model.layers.0.mlp.experts' mixes stored quantized (3) and "
                         "unquantized (3) members; engines decide once for the fused layer");
  EXPECT_EQ(f.modules.size(), 6u);
}

TEST(RuleCases, QC104Negative)
{
  const Report r = lint_folder(folder(
    config(k_qwen3_moe, modelopt("NVFP4", {"lm_head", "*mlp.gate"})), moe_layer(nvfp4, nvfp4)));
  EXPECT_TRUE(r.findings.empty()) << text(r);
}

// One stored MoE mixture in a DeepSeek NextN layer: vLLM checks model.layers.1.mlp.experts,
// SGLang model.decoder.mlp.experts (spec 6.2); it is still one problem.
TEST(RuleCases, QC104StoredMixtureReportedOncePerMoe)
{
  const std::string d = "model.layers.1.";
  const Report r = lint_folder(
    folder(config(k_deepseek, modelopt("FP8", {"lm_head", d + "eh_proj", d + "shared_head.head"})),
           fp8("model.layers.0.mlp.down_proj") + bf16(d + "eh_proj", 64, 128) + norm(d + "enorm") +
             bf16(d + "shared_head.head") + experts(d + "mlp.experts", 0, 0, fp8) +
             experts(d + "mlp.experts", 1, 1, bf16) + bf16("lm_head")));
  EXPECT_EQ(findings(r, RuleId::experts_disagree).size(), 1u) << text(r);
}

// QC105 (R10, warning half): the MoE is BF16 but the list names only expert 0 (spec 2.2.1).
TEST(RuleCases, QC105Positive)
{
  const std::string e0 = "model.layers.0.mlp.experts.0.";
  const Report r = lint_folder(
    folder(config(k_qwen3_moe, modelopt("NVFP4", {"lm_head", "*mlp.gate", e0 + "gate_proj",
                                                  e0 + "up_proj", e0 + "down_proj"})),
           moe_layer(bf16, bf16)));
  const Finding f = only(r, RuleId::partial_expert_exclusion,
                         "ignore names 3 of the 6 expert projections of "
                         "'model.layers.0.mlp.experts'; vLLM then excludes the whole MoE (its "
                         "ModelOpt rule for entries naming experts)");
  EXPECT_EQ(f.modules, Strings{"model.layers.0.mlp.experts"});
}

// An over-long entry naming experts is not evaluated here either (QC115 says so): no QC105.
TEST(RuleCases, QC105NegativeEntryLongerThanTheLimit)
{
  const std::string e0 = "model.layers.0.mlp.experts.0.";
  const Report r = lint_folder(folder(
    config(k_qwen3_moe,
           modelopt("NVFP4", {"lm_head", "*mlp.gate", e0 + std::string(k_longest_entry, '*')})),
    moe_layer(bf16, bf16)));
  EXPECT_TRUE(findings(r, RuleId::partial_expert_exclusion).empty()) << text(r);
  EXPECT_EQ(findings(r, RuleId::unevaluable_entry).size(), 1u) << text(r);
}

// With 16+ entries naming experts, the rule asks an index per module: the same count. Entries
// naming experts of a layer the checkpoint lacks are left out of it; globs stay in (here one
// names two of the three projections).
TEST(RuleCases, QC105PositiveInALongList)
{
  const std::string e0 = "model.layers.0.mlp.experts.0.";
  Strings list{"lm_head", "*mlp.gate", e0 + "gate_proj", e0 + "[ud]*_proj"};
  for (int i = 0; i < 16; ++i) {
    list.push_back("model.layers.9.mlp.experts." + std::to_string(i) + ".down_proj");
    list.push_back("*experts." + std::to_string(i) + ".unused*");
  }
  const Report r =
    lint_folder(folder(config(k_qwen3_moe, modelopt("NVFP4", list)), moe_layer(bf16, bf16)));
  only(r, RuleId::partial_expert_exclusion,
       "ignore names 3 of the 6 expert projections of 'model.layers.0.mlp.experts'; vLLM then "
       "excludes the whole MoE (its ModelOpt rule for entries naming experts)");
}

// The index is asked for several MoE layers side by side: each layer's own count, in layer
// order, and nothing for a layer the list does not name.
TEST(RuleCases, QC105PositiveInALongListForEachLayer)
{
  Tensors tensors = bf16("lm_head");
  for (int layer = 0; layer < 3; ++layer) {
    const std::string moe = "model.layers." + std::to_string(layer) + ".mlp.experts";
    tensors = tensors + experts(moe, 0, 0, bf16) + experts(moe, 1, 1, bf16) +
              bf16("model.layers." + std::to_string(layer) + ".mlp.gate", 2, 64);
  }
  Strings list{"lm_head", "*mlp.gate", "model.layers.0.mlp.experts.0",
               "model.layers.1.mlp.experts.1.up_proj"};
  for (int i = 0; i < 16; ++i) {
    list.push_back("*experts." + std::to_string(i) + ".unused*");
  }
  const std::string k_qwen3_moe_3 = R"("architectures": ["Qwen3MoeForCausalLM"], )"
                                    R"("model_type": "qwen3_moe", "num_hidden_layers": 3)";
  const Report r = lint_folder(folder(config(k_qwen3_moe_3, modelopt("NVFP4", list)), tensors));
  EXPECT_EQ(messages(r, RuleId::partial_expert_exclusion),
            (Strings{"ignore names 3 of the 6 expert projections of 'model.layers.0.mlp.experts'; "
                     "vLLM then excludes the whole MoE (its ModelOpt rule for entries naming "
                     "experts)",
                     "ignore names 1 of the 6 expert projections of 'model.layers.1.mlp.experts'; "
                     "vLLM then excludes the whole MoE (its ModelOpt rule for entries naming "
                     "experts)"}))
    << text(r);
}

TEST(RuleCases, QC105Negative)
{
  const Report r = lint_folder(folder(
    config(k_qwen3_moe, modelopt("NVFP4", {"lm_head", "*mlp.gate", "model.layers.0.mlp.experts*"})),
    moe_layer(bf16, bf16)));
  EXPECT_TRUE(r.findings.empty()) << text(r);
}

// lint_path() hands the linter's largest tables to the run (freed with it: the CLI keeps its
// runs until exit) and reports what lint() does, which frees them; so does lint() handing them
// to its caller.
TEST(RuleCases, ARunKeepsTheLintersTablesAndReportsAlike)
{
  const MemoryFileSystem fs =
    folder(config(k_llama, modelopt("NVFP4", {"lm_head"})), llama_nvfp4_with_bf16_layer1());
  auto run = lint_path(fs, "m", {});
  ASSERT_TRUE(run);
  EXPECT_NE(run->tables, nullptr);
  EXPECT_EQ(run->tables.use_count(), 1);
  Report freed = lint(run->checkpoint, run->inventory, run->declaration, {});
  freed.root = run->report.root;
  resolve_positions(fs, run->checkpoint.root, freed);
  ASSERT_FALSE(freed.findings.empty());
  EXPECT_EQ(render_json({freed}), render_json({run->report}));
  std::shared_ptr<const void> tables;
  Report handed = lint(run->checkpoint, run->inventory, run->declaration, {}, tables);
  EXPECT_NE(tables, nullptr);
  handed.root = run->report.root;
  resolve_positions(fs, run->checkpoint.root, handed);
  EXPECT_EQ(render_json({handed}), render_json({run->report}));
}

// A file system that counts the opens of each path.
class OpenCounter final : public FileSystem
{
public:
  explicit OpenCounter(const FileSystem& base) : m_base(base) {}
  FileInfo stat(const std::string& path) const override { return m_base.stat(path); }
  Expected<std::vector<std::string>> list_dir(const std::string& path) const override
  {
    return m_base.list_dir(path);
  }
  Expected<std::unique_ptr<ByteSource>> open(const std::string& path) const override
  {
    const std::lock_guard lock(m_lock);
    ++m_opens[path];
    return m_base.open(path);
  }
  int opens(const std::string& path) const
  {
    const std::lock_guard lock(m_lock);
    const auto it = m_opens.find(path);
    return it == m_opens.end() ? 0 : it->second;
  }

private:
  const FileSystem& m_base;
  mutable std::mutex m_lock;
  mutable std::map<std::string, int> m_opens;
};

// Finding positions are found in the configuration texts the lint parsed (Declaration::texts):
// each file is opened once, however many findings point into it, and a position follows the
// text that was read, not what the file holds later.
TEST(RuleCases, PositionsComeFromTheConfigurationTextsRead)
{
  MemoryFileSystem fs =
    folder(config(k_llama, modelopt("NVFP4", {"lm_head", "model.layers.9.mlp"})),
           llama_nvfp4_with_bf16_layer1());
  fs.add_file("m/hf_quant_config.json", hf_quant_config("NVFP4", {"lm_head"}));
  const OpenCounter counting(fs);
  auto run = lint_path(counting, "m", {});
  ASSERT_TRUE(run);
  std::map<std::string, uint32_t> lines; // file -> the line of its first finding
  for (const Finding& f : run->report.findings) {
    if (!f.pointer.empty() && f.line > 0) {
      lines.try_emplace(f.file, f.line);
    }
  }
  ASSERT_EQ(lines.size(), 2u) << text(run->report);
  for (const std::string file : {"config.json", "hf_quant_config.json"}) {
    EXPECT_EQ(counting.opens("m/" + file), 1) << file;
    const auto kept = std::find_if(run->declaration.texts.begin(), run->declaration.texts.end(),
                                   [&](const auto& t) { return t.first == file; });
    ASSERT_NE(kept, run->declaration.texts.end()) << file;
    EXPECT_EQ(kept->second.bytes, *fs.read_file("m/" + file, 1 << 20)) << file;
  }
  // config.json's text read with two more lines at its start: its findings two lines lower.
  const auto kept = std::find_if(run->declaration.texts.begin(), run->declaration.texts.end(),
                                 [](const auto& t) { return t.first == "config.json"; });
  const std::string shifted = "\n\n" + std::string(kept->second.bytes);
  const std::vector<std::pair<std::string, PaddedBytes>> texts{
    {"config.json", PaddedBytes{shifted, nullptr}}};
  Report again = run->report;
  resolve_positions(fs, run->checkpoint.root, again, 0, texts);
  bool seen = false;
  for (const Finding& f : again.findings) {
    if (!f.pointer.empty() && f.line > 0 && !seen && f.file == "config.json") {
      EXPECT_EQ(f.line, lines["config.json"] + 2);
      seen = true;
    }
  }
  EXPECT_TRUE(seen);
}

// Findings in a list read in place (EntryList::read_span()) are located from that reading, not
// by a walk through the text: the same lines and columns as the walk, for entries written with
// escapes, in two files sharing one list and in two with different lists. Where the reading
// cannot be trusted to be the list the pointers name (its key in another object too, before or
// after it, or written with a \u escape; any \u escape outside the list) it is not marked, and
// the walk answers. Settings nested under "quantization" in config.json, and a "quantization" in
// hf_quant_config.json that is no object (the list then read at the top level), are read in
// place: the pointers name the lists read, and both ways give their findings positions.
// A list nested under "quantization" in config.json's block, or at the top of an
// hf_quant_config.json whose "quantization" is null, is the list fix edits: the plan is made and
// verified (it was refused: the edit went to a pointer that names no list, or a null object).
TEST(RuleCases, FixEditsListsWhereTheyWereRead)
{
  std::string flat_hf = hf_quant_config("NVFP4", {"lm_head"});
  flat_hf.replace(flat_hf.find("\"quantization\": {"), 17, "\"quantization\": null, ");
  flat_hf.erase(flat_hf.rfind('}'), 1);
  struct Case
  {
    std::string config_json, hf, file, added;
  };
  const std::vector<Case> cases{
    {config(k_llama, R"({"quant_method": "modelopt", "quantization": {"quant_algo": "NVFP4", )"
                     R"("exclude_modules": ["lm_head"]}})"),
     "", "config.json", "exclude_modules += \"model.layers.1*\""},
    {config(k_llama, modelopt("NVFP4", {"lm_head", "model.layers.1*"})), flat_hf,
     "hf_quant_config.json", "exclude_modules += \"model.layers.1*\""},
  };
  for (const Case& c : cases) {
    MemoryFileSystem fs = folder(c.config_json, llama_nvfp4_with_bf16_layer1());
    if (!c.hf.empty()) {
      fs.add_file("m/hf_quant_config.json", c.hf);
    }
    auto run = lint_path(fs, "m", {});
    ASSERT_TRUE(run);
    const FixPlan plan = plan_fix(fs, *run, {});
    EXPECT_TRUE(plan.refused.empty()) << fmt::format("{}", fmt::join(plan.refused, "\n"));
    EXPECT_TRUE(plan.remaining.empty()) << fmt::format("{}", fmt::join(plan.remaining, "\n"));
    ASSERT_EQ(plan.edits.size(), 1u) << c.file;
    EXPECT_EQ(plan.edits[0].file, c.file);
    EXPECT_EQ(plan.edits[0].added, Strings{c.added});
  }
}

TEST(RuleCases, PositionsOfListEntriesAgreeWithTheWalk)
{
  const Strings list{"lm_head", "model.layers.9.mlp", R"(re:model\\.layers\\.7\\..*)",
                     R"(model.layers.\u0038.x)"};
  const Strings other{"lm_head", "model.layers.9.mlp.gate"};
  const std::string block = modelopt("NVFP4", list);
  std::string crlf = config(k_llama, block);
  for (size_t at = crlf.find('\n'); at != std::string::npos; at = crlf.find('\n', at + 2)) {
    crlf.replace(at, 1, "\r\n");
  }
  std::string escaped_key = block;
  escaped_key.replace(escaped_key.find("\"ignore\""), 8, R"("ign\u006fre")");
  std::string flat_hf = hf_quant_config("NVFP4", other);
  flat_hf.replace(flat_hf.find("\"quantization\": {"), 17, "\"quantization\": null, ");
  flat_hf.erase(flat_hf.rfind('}'), 1);
  struct Case
  {
    std::string name;
    std::string config_json;
    std::string hf; // hf_quant_config.json, or ""
    bool read;      // config.json's list read in place
    bool hf_read = true;
  };
  const std::vector<Case> cases{
    {"plain", config(k_llama, block), "", true},
    {"crlf", crlf, "", true},
    {"shared with hf_quant_config.json", config(k_llama, block), hf_quant_config("NVFP4", list),
     true},
    {"apart from hf_quant_config.json", config(k_llama, block), hf_quant_config("NVFP4", other),
     true},
    {"key before", config(k_llama + R"(, "text_config": {"ignore": ["x"]})", block), "", false},
    {"key after", config(k_llama, block), "", false},
    {"key spelled with an escape",
     config(k_llama + R"(, "extra": {"ignore": )" + json_list(list) + "}", escaped_key), "", false},
    {"escape elsewhere", config(k_llama + R"(, "_name_or_path": "caf\u00e9")", block), "", false},
    {"nested",
     config(k_llama, R"({"quant_method": "modelopt", "quantization": {"quant_algo": )"
                     R"("NVFP4", "exclude_modules": )" +
                       json_list(list) + "}}"),
     "", true},
    {"hf_quant_config.json without a quantization object", config(k_llama, block), flat_hf, true,
     true},
  };
  for (Case c : cases) {
    if (c.name == "key after") { // the same key later in the file, in an object of its own
      c.config_json.insert(c.config_json.rfind('}'), R"(, "later": {"ignore": []})");
    }
    MemoryFileSystem fs = folder(c.config_json, llama_nvfp4_with_bf16_layer1());
    if (!c.hf.empty()) {
      fs.add_file("m/hf_quant_config.json", c.hf);
    }
    auto run = lint_path(fs, "m", {});
    ASSERT_TRUE(run) << c.name;
    for (const ConfigSource& s : run->declaration.sources) {
      const auto kept = std::find_if(run->declaration.texts.begin(), run->declaration.texts.end(),
                                     [&](const auto& t) { return t.first == s.file; });
      ASSERT_NE(kept, run->declaration.texts.end()) << c.name;
      EXPECT_EQ(s.excludes.read_span(kept->second.bytes) != nullptr,
                s.file == "config.json" ? c.read : c.hf_read)
        << c.name << " " << s.file;
    }
    Report walked = run->report;
    for (Finding& f : walked.findings) {
      f.line = f.column = f.end_line = f.end_column = 0;
    }
    resolve_positions(fs, run->checkpoint.root, walked, 0, run->declaration.texts);
    size_t in_lists = 0;
    for (size_t i = 0; i < walked.findings.size(); ++i) {
      const Finding& got = run->report.findings[i];
      const Finding& want = walked.findings[i];
      EXPECT_EQ(std::tuple(got.line, got.column, got.end_line, got.end_column),
                std::tuple(want.line, want.column, want.end_line, want.end_column))
        << c.name << " " << got.file << " " << got.pointer << " " << got.end_pointer;
      const bool listed = got.pointer.ends_with("/ignore") ||
                          got.pointer.ends_with("/exclude_modules") ||
                          got.pointer.find("/ignore/") != std::string::npos ||
                          got.pointer.find("/exclude_modules/") != std::string::npos;
      in_lists += listed && got.line > 0 ? 1 : 0;
    }
    EXPECT_GE(in_lists, 2u) << c.name << "\n" << text(run->report);
  }
}

// QC106's fix: each copy of the list gets the entries only the other has (once each), however
// long the lists.
TEST(RuleCases, QC106FixGivesEachCopyTheOthersEntries)
{
  Strings shared{"lm_head"};
  for (int i = 0; i < 3000; ++i) {
    shared.push_back("model.layers.1.mlp.down_proj.n" + std::to_string(i));
  }
  Strings in_config = shared, in_hf = shared;
  in_config.push_back("model.layers.1*");
  in_hf.push_back("model.layers.1.mlp*");
  in_hf.push_back("model.layers.1.mlp*"); // repeated: added once
  MemoryFileSystem fs =
    folder(config(k_llama, modelopt("NVFP4", in_config)), llama_nvfp4_with_bf16_layer1());
  fs.add_file("m/hf_quant_config.json", hf_quant_config("NVFP4", in_hf));
  auto run = lint_path(fs, "m", {});
  ASSERT_TRUE(run);
  const FixPlan plan = plan_fix(fs, *run, {});
  std::map<std::string, std::vector<std::string>> added;
  for (const FileEdit& edit : plan.edits) {
    added[edit.file] = edit.added;
  }
  EXPECT_EQ(added["config.json"], (Strings{"ignore += \"model.layers.1.mlp*\""}));
  EXPECT_EQ(added["hf_quant_config.json"], (Strings{"exclude_modules += \"model.layers.1*\""}));
}

// fix's log shows an entry as the config spells it: a control character escaped (here ESC,
// which a terminal would act on; json_list() copies the JSON escape as written), never raw.
TEST(RuleCases, FixLogShowsEntriesEscaped)
{
  MemoryFileSystem fs =
    folder(config(k_llama, modelopt("NVFP4", {"lm_head", "model.layers.1*", "odd\\u001b[2Jentry"})),
           llama_nvfp4_with_bf16_layer1());
  fs.add_file("m/hf_quant_config.json", hf_quant_config("NVFP4", {"lm_head", "model.layers.1*"}));
  auto run = lint_path(fs, "m", {});
  ASSERT_TRUE(run);
  const FixPlan plan = plan_fix(fs, *run, {});
  ASSERT_EQ(plan.edits.size(), 1u);
  EXPECT_EQ(plan.edits[0].file, "hf_quant_config.json");
  EXPECT_EQ(plan.edits[0].added, Strings{"exclude_modules += \"odd\\u001b[2Jentry\""});
}

// QC106 (R2): config.json excludes layer 1, hf_quant_config.json (read by TensorRT-LLM) not.
TEST(RuleCases, QC106Positive)
{
  MemoryFileSystem fs = folder(config(k_llama, modelopt("NVFP4", {"lm_head", "model.layers.1*"})),
                               llama_nvfp4_with_bf16_layer1());
  fs.add_file("m/hf_quant_config.json", hf_quant_config("NVFP4", {"lm_head"}));
  const Report r = lint_folder(fs);
  const Finding f = only(r, RuleId::config_divergence,
                         "exclude_modules differs from config.json's ignore: 1 entry only in "
                         "config.json, 0 only here");
  EXPECT_EQ(f.file, "hf_quant_config.json");
  EXPECT_EQ(f.pointer, "/quantization/exclude_modules");
  EXPECT_EQ(f.suggested_entries, Strings{"model.layers.1*"});
}

TEST(RuleCases, QC106Negative)
{
  MemoryFileSystem fs = folder(config(k_llama, modelopt("NVFP4", {"lm_head", "model.layers.1*"})),
                               llama_nvfp4_with_bf16_layer1());
  fs.add_file("m/hf_quant_config.json", hf_quant_config("NVFP4", {"model.layers.1*", "lm_head"}));
  const Report r = lint_folder(fs);
  EXPECT_TRUE(r.findings.empty()) << text(r);
  // The lists are compared as sets: a repeated entry is no difference.
  fs.add_file("m/hf_quant_config.json",
              hf_quant_config("NVFP4", {"lm_head", "model.layers.1*", "lm_head"}));
  const Report repeated = lint_folder(fs);
  EXPECT_TRUE(findings(repeated, RuleId::config_divergence).empty()) << text(repeated);
}

// QC106: entries only in either file, each listed once, sorted.
TEST(RuleCases, QC106ListsEachSide)
{
  MemoryFileSystem fs =
    folder(config(k_llama, modelopt("NVFP4", {"lm_head", "model.layers.1*", "b", "a", "a"})),
           llama_nvfp4_with_bf16_layer1());
  fs.add_file("m/hf_quant_config.json",
              hf_quant_config("NVFP4", {"lm_head", "model.layers.1*", "z", "y", "z"}));
  const Report r = lint_folder(fs);
  const Finding f = only(r, RuleId::config_divergence,
                         "exclude_modules differs from config.json's ignore: 2 entries only in "
                         "config.json, 2 only here");
  EXPECT_EQ(f.details,
            (Strings{"only in config.json: 'a'", "only in config.json: 'b'",
                     "only in hf_quant_config.json: 'y'", "only in hf_quant_config.json: 'z'"}));
  EXPECT_EQ(f.suggested_entries, (Strings{"a", "b"}));
}

// QC106 (R2): quant_algo differs between the files.
TEST(RuleCases, QC106PositiveAlgo)
{
  MemoryFileSystem fs = folder(config(k_llama, modelopt("NVFP4", {"lm_head", "model.layers.1*"})),
                               llama_nvfp4_with_bf16_layer1());
  fs.add_file("m/hf_quant_config.json", hf_quant_config("FP8", {"lm_head", "model.layers.1*"}));
  const Report r = lint_folder(fs);
  const Finding f = only(r, RuleId::config_divergence,
                         "quant_algo is FP8 here but NVFP4 in config.json; TensorRT-LLM reads "
                         "this file, vLLM and SGLang read config.json");
  EXPECT_EQ(f.pointer, "/quantization/quant_algo");
}

// QC107 (R31): DeepSeek declares NextN layer 1 but the quantizer dropped it.
TEST(RuleCases, QC107Positive)
{
  const Report r = lint_folder(
    folder(config(k_deepseek), bf16("model.layers.0.self_attn.o_proj") + bf16("lm_head")));
  const Finding f = only(r, RuleId::mtp_missing,
                         "num_nextn_predict_layers = 1 declares draft layer 1 but no tensor of it "
                         "is stored; vLLM stops with `MTP speculative decoding layer 1 weights "
                         "missing from checkpoint`");
  EXPECT_EQ(f.file, "config.json");
  EXPECT_EQ(f.pointer, "/num_nextn_predict_layers");
}

// QC107 with a declared count far past what is stored (a typo, or a hostile config): only the
// layers some module is stored under are looked up, the rest are counted, and the first few
// named. Stored layers 2 and 5 of "num_nextn_predict_layers": 2000000000 are not missing.
TEST(RuleCases, QC107PositiveHugeCountNamesTheFirstMissingLayers)
{
  for (const uint64_t count :
       {uint64_t{5000}, uint64_t{2'000'000'000}, std::numeric_limits<uint64_t>::max()}) {
    std::string model = k_deepseek;
    model.replace(model.find("\"num_nextn_predict_layers\": 1"),
                  std::string_view("\"num_nextn_predict_layers\": 1").size(),
                  fmt::format("\"num_nextn_predict_layers\": {}", count));
    const Report r = lint_folder(folder(config(model), bf16("model.layers.0.self_attn.o_proj") +
                                                         bf16("model.layers.2.eh_proj", 64, 128) +
                                                         bf16("model.layers.5.eh_proj", 64, 128) +
                                                         bf16("lm_head")));
    only(r, RuleId::mtp_missing,
         fmt::format("num_nextn_predict_layers = {} declares draft layers 1, 3, 4, 6, 7, 8, 9, 10, "
                     "11, 12, 13, 14, 15, 16, 17, 18, ... ({} in all) but no tensor of them is "
                     "stored; vLLM stops with `MTP speculative decoding layer 1 weights missing "
                     "from checkpoint`",
                     count, std::min(count, std::numeric_limits<uint64_t>::max() - 1) - 2));
  }
}

TEST(RuleCases, QC107Negative)
{
  const Report r =
    lint_folder(folder(config(k_deepseek), bf16("model.layers.0.self_attn.o_proj") +
                                             bf16("model.layers.1.eh_proj", 64, 128) +
                                             norm("model.layers.1.enorm") + bf16("lm_head")));
  EXPECT_TRUE(r.findings.empty()) << text(r);
}

// QC005's own explanation: vLLM and SGLang load only the files the index names. A NextN layer
// whose only copy sits in an unindexed mtp.safetensors (GLM-4.7 "lost mtp.safetensors", spec 2.5)
// is missing for them: vLLM stops with the R31 error.
TEST(RuleCases, QC107PositiveDraftOnlyInUnindexedShard)
{
  MemoryFileSystem fs = sharded(k_full_index);
  fs.add_file("m/config.json", config(k_deepseek));
  fs.add_file("m/mtp.safetensors", test::safetensors(bf16("model.layers.1.eh_proj", 64, 128) +
                                                     norm("model.layers.1.enorm")));
  const Report r = lint_folder(fs);
  EXPECT_EQ(findings(r, RuleId::unindexed_shard).size(), 1u) << text(r);
  const Finding f =
    only(r, RuleId::mtp_missing,
         "num_nextn_predict_layers = 1 declares draft layer 1 but no tensor of it is in a file "
         "the index names (mtp.safetensors holds it, and loaders skip files the index does not "
         "name); vLLM stops with `MTP speculative decoding layer 1 weights missing from "
         "checkpoint`");
  EXPECT_EQ(f.files, (Strings{"config.json", "mtp.safetensors"}));
}

// The same layer in a file the index does name is stored.
TEST(RuleCases, QC107NegativeDraftInIndexedShard)
{
  auto index = k_full_index;
  index.emplace_back("model.layers.1.eh_proj.weight", "mtp.safetensors");
  index.emplace_back("model.layers.1.enorm.weight", "mtp.safetensors");
  MemoryFileSystem fs = sharded(index);
  fs.add_file("m/config.json", config(k_deepseek));
  fs.add_file("m/mtp.safetensors", test::safetensors(bf16("model.layers.1.eh_proj", 64, 128) +
                                                     norm("model.layers.1.enorm")));
  const Report r = lint_folder(fs);
  EXPECT_TRUE(findings(r, RuleId::mtp_missing).empty()) << text(r);
  EXPECT_TRUE(findings(r, RuleId::unindexed_shard).empty()) << text(r);
}

// QC108 (R38): DeepSeek NextN eh_proj exported FP8; vLLM and SGLang build it as nn.Linear.
// TensorRT-LLM builds it as a quantizable Linear (spec 6.1), so it is not named.
TEST(RuleCases, QC108Positive)
{
  const Report r = lint_folder(
    folder(config(k_deepseek, modelopt("FP8", {"lm_head", "model.layers.1.shared_head.head"})),
           deepseek_fp8(true)));
  const Finding f = only(r, RuleId::draft_plain_quantized,
                         "draft projection 'model.layers.1.eh_proj' is stored quantized, but vLLM "
                         "and SGLang build it as a plain nn.Linear that cannot load packed "
                         "weights");
  EXPECT_EQ(engines(f), (std::set<Engine>{Engine::vllm, Engine::sglang}));
}

TEST(RuleCases, QC108Negative)
{
  const Report r = lint_folder(
    folder(config(k_deepseek, modelopt("FP8", {"lm_head", "model.layers.1.shared_head.head",
                                               "model.layers.1.eh_proj"})),
           deepseek_fp8(false)));
  EXPECT_TRUE(r.findings.empty()) << text(r);
}

// attach_shards() documents that findings about a stored module "point at the shard and header
// entry of the module's weight"; the first tensor by name is input_scale, not the weight.
TEST(RuleCases, QC108PointsAtTheWeight)
{
  const Report r = lint_folder(
    folder(config(k_deepseek, modelopt("FP8", {"lm_head", "model.layers.1.shared_head.head"})),
           deepseek_fp8(true)));
  const auto found = findings(r, RuleId::draft_plain_quantized);
  ASSERT_EQ(found.size(), 1u) << text(r);
  EXPECT_EQ(found[0].file, "model.safetensors");
  EXPECT_EQ(found[0].pointer, "/model.layers.1.eh_proj.weight");
}

// QC109 (R33): Qwen3.5 Quark draft with mtp.fc excluded and the rest FP8.
TEST(RuleCases, QC109Positive)
{
  const Report r =
    lint_folder(folder(config(k_qwen35, quark({"lm_head", "mtp.fc"})), qwen35_quark(true)));
  only(r, RuleId::mtp_partially_quantized,
       "draft 'mtp' stores 4 projections quantized and 1 unquantized; SGLang builds the whole "
       "Qwen3.5 drafter BF16 when any mtp.* entry is excluded");
  // SGLang's rule takes entries starting with "mtp.": one holding it further on ("*mtp.fc", a
  // glob vLLM reads) leaves SGLang building the drafter module by module, no all-or-nothing.
  const Report inner =
    lint_folder(folder(config(k_qwen35, quark({"lm_head", "*mtp.fc"})), qwen35_quark(true)));
  EXPECT_TRUE(findings(inner, RuleId::mtp_partially_quantized).empty()) << text(inner);
}

// The whole drafter BF16 and "mtp.*" excluded: no mix, nothing fails. SGLang reads the glob as
// text, and builds the drafter BF16 because some entry starts with "mtp." (QC110 says so).
TEST(RuleCases, QC109Negative)
{
  const Report r =
    lint_folder(folder(config(k_qwen35, quark({"lm_head", "mtp.*"})), qwen35_quark(false)));
  EXPECT_TRUE(findings(r, RuleId::mtp_partially_quantized).empty()) << text(r);
  EXPECT_EQ(r.summary().errors + r.summary().warnings, 0u) << text(r);
  const Finding f = only(r, RuleId::engine_override,
                         "mtp.layers.0.mlp.experts, mtp.layers.0.self_attn.o_proj load only "
                         "because SGLang builds the whole Qwen3.5 MTP unquantized for Quark when "
                         "any mtp.* entry is excluded");
  EXPECT_EQ(f.severity, Severity::info);
}

// Project decision (test_formats ModelOptNvfp4Qwen3NextDraftMix): QC109 is kept only where an
// engine builds the drafter all-or-nothing, i.e. SGLang's Qwen3.5 path (spec 6.2, qwen3_5_mtp.py).
// A Qwen3-Next Quark draft mix is legal and must not be told "SGLang builds the whole Qwen3.5
// drafter BF16".
TEST(RuleCases, QC109NegativeQwen3NextQuark)
{
  const std::string qwen3_next =
    R"("architectures": ["Qwen3NextForCausalLM"], "model_type": "qwen3_next", )"
    R"("num_hidden_layers": 1, "num_nextn_predict_layers": 1)";
  Tensors t;
  for (const auto& spec : qwen35_quark(true)) {
    TensorSpec s = spec;
    if (s.name.starts_with("model.language_model.")) {
      s.name = "model." + s.name.substr(21);
    }
    t.push_back(s);
  }
  const Report r = lint_folder(folder(config(qwen3_next, quark({"lm_head", "mtp.fc"})), t));
  EXPECT_TRUE(findings(r, RuleId::mtp_partially_quantized).empty()) << text(r);
}

namespace {

// Qwen3-Next with a BF16 mtp.* draft (the nvidia/Qwen3.5 NVFP4 incident shape, spec 6.4).
const std::string k_qwen3_next =
  R"("architectures": ["Qwen3NextForCausalLM"], "model_type": "qwen3_next", )"
  R"("num_hidden_layers": 1, "num_nextn_predict_layers": 1)";

Tensors
qwen3_next_bf16_draft()
{
  return nvfp4("model.layers.0.self_attn.o_proj") + nvfp4("model.layers.0.mlp.down_proj") +
         bf16("lm_head") + bf16("mtp.fc", 64, 128) + bf16("mtp.layers.0.self_attn.o_proj") +
         bf16("mtp.layers.0.mlp.down_proj") + norm("mtp.norm");
}

} // namespace

// QC110 (R35): the list covers mtp.layers.0 but not mtp.fc; only vLLM's hard-coded
// modelopt_fp4 override saves it there (TensorRT-LLM still fails: QC101). SGLang builds mtp.fc
// as a plain nn.Linear, but the draft layer under main layer 0's names, which 'mtp.layers.0*'
// does not reach and no entry can name alone here (main layer 0 holds the same modules).
TEST(RuleCases, QC110Positive)
{
  const Report r =
    lint_folder(folder(config(k_qwen3_next, modelopt("NVFP4", {"lm_head", "mtp.layers.0*"})),
                       qwen3_next_bf16_draft()));
  const Finding f = only(r, RuleId::engine_override,
                         "mtp.fc loads only because vLLM forces mtp.fc unquantized for "
                         "modelopt_fp4 (Qwen3-Next/3.5)");
  EXPECT_EQ(f.modules, Strings{"mtp.fc"});
  // Located at the list the exclusion belongs in, for the engine applying the override.
  EXPECT_EQ(engines(f), std::set<Engine>{Engine::vllm});
  EXPECT_EQ(f.file, "config.json");
  EXPECT_EQ(f.pointer, "/quantization_config/ignore");
  const auto undeclared = findings(r, RuleId::undeclared_unquantized);
  ASSERT_EQ(undeclared.size(), 1u) << text(r);
  EXPECT_EQ(engines(undeclared[0]), (std::set<Engine>{Engine::sglang, Engine::trtllm}));
  EXPECT_EQ(undeclared[0].modules,
            (Strings{"mtp.fc", "mtp.layers.0.mlp.down_proj", "mtp.layers.0.self_attn.o_proj"}));
  EXPECT_EQ(undeclared[0].suggested_entries, Strings{"mtp*"});
}

TEST(RuleCases, QC110Negative)
{
  const Report r = lint_folder(
    folder(config(k_qwen3_next, modelopt("NVFP4", {"lm_head", "mtp.fc", "mtp.layers.0*"})),
           qwen3_next_bf16_draft()));
  EXPECT_TRUE(findings(r, RuleId::engine_override).empty()) << text(r);
  const auto undeclared = findings(r, RuleId::undeclared_unquantized);
  ASSERT_EQ(undeclared.size(), 1u) << text(r);
  EXPECT_EQ(engines(undeclared[0]), std::set<Engine>{Engine::sglang});
  EXPECT_TRUE(undeclared[0].suggested_entries.empty());
  EXPECT_EQ(r.findings.size(), 1u) << text(r);
}

namespace {

// Layers 1 and 10: layer 1 kept BF16, layer 10 NVFP4.
Tensors
layers_1_and_10()
{
  return nvfp4("model.layers.0.mlp.down_proj") + bf16("model.layers.1.mlp.down_proj") +
         nvfp4("model.layers.10.mlp.down_proj") + bf16("lm_head");
}

const std::string k_llama_11 =
  R"("architectures": ["LlamaForCausalLM"], "model_type": "llama", "num_hidden_layers": 11)";

} // namespace

// QC111 (R17): `model.layers.1` is a vLLM substring of model.layers.10.
TEST(RuleCases, QC111Positive)
{
  const Report r = lint_folder(folder(
    config(k_llama_11, modelopt("NVFP4", {"lm_head", "model.layers.1"})), layers_1_and_10()));
  const Finding f = only(r, RuleId::broad_substring_entry,
                         "ignore entry 'model.layers.1' is matched as a substring by vLLM and "
                         "also excludes model.layers.10.mlp.down_proj");
  EXPECT_EQ(f.pointer, "/quantization_config/ignore/1");
  // The consequence: vLLM alone builds layer 10 unquantized (2.2 vs 2.3, 2.4).
  const auto excluded = findings(r, RuleId::excluded_but_quantized);
  ASSERT_EQ(excluded.size(), 1u) << text(r);
  EXPECT_EQ(excluded[0].modules, Strings{"model.layers.10.mlp.down_proj"});
  EXPECT_EQ(engines(excluded[0]), std::set<Engine>{Engine::vllm});
}

// The same finding from a list long enough to be compiled (16+ entries): the substring example
// and the pointer come from the per-module pass.
TEST(RuleCases, QC111PositiveInALongList)
{
  std::vector<std::string> list{"lm_head", "model.layers.1"};
  for (int i = 0; i < 20; ++i) {
    list.push_back("model.layers." + std::to_string(20 + i) + ".mlp.down_proj");
  }
  const Report r =
    lint_folder(folder(config(k_llama_11, modelopt("NVFP4", list)), layers_1_and_10()));
  const Finding f = only(r, RuleId::broad_substring_entry,
                         "ignore entry 'model.layers.1' is matched as a substring by vLLM and "
                         "also excludes model.layers.10.mlp.down_proj");
  EXPECT_EQ(f.pointer, "/quantization_config/ignore/1");
  // The 20 dead entries are in a row: one finding spanning them, five spelled out for humans.
  const Finding dead = only(r, RuleId::unused_entry,
                            "20 ignore entries in a row match no module of the checkpoint, from "
                            "'model.layers.20.mlp.down_proj' to 'model.layers.39.mlp.down_proj'");
  EXPECT_EQ(dead.pointer, "/quantization_config/ignore/2");
  EXPECT_EQ(dead.end_pointer, "/quantization_config/ignore/21");
  EXPECT_TRUE(dead.suggested_entries.empty()); // the span, not a copy of the list
  EXPECT_EQ(dead.details,
            (Strings{"'model.layers.20.mlp.down_proj'", "'model.layers.21.mlp.down_proj'",
                     "'model.layers.22.mlp.down_proj'", "'model.layers.23.mlp.down_proj'",
                     "'model.layers.24.mlp.down_proj'", "... and 15 more"}));
  EXPECT_EQ(findings(r, RuleId::excluded_but_quantized).size(), 1u) << text(r);
}

// A long list finds each entry's overmatch example in the same pass as its matches: the
// examples (and pointers) are those the per-entry scan of a short list gives, whatever entries
// follow. compressed-tensors has no substring matcher left (SGLang's PR 32736): none either way.
TEST(RuleCases, QC111LongListGivesTheShortListsExamples)
{
  const Strings entries{"lm_head",     "model.layers.1", "layers.1",     "mlp.down",
                        "ayers.0.mlp", "self_attn",      "LAYERS.1.MLP", "down_proj"};
  Strings padded = entries;
  for (int i = 0; i < 16; ++i) {
    padded.push_back("model.layers." + std::to_string(90 + i) + ".mlp.down_proj");
  }
  const auto ct = [](const Strings& list) {
    return R"({"quant_method": "compressed-tensors", "format": "nvfp4-pack-quantized", )"
           R"("config_groups": {"group_0": {"targets": ["Linear"], "weights": {"num_bits": 4, )"
           R"("type": "float", "group_size": 16}}}, "ignore": )" +
           json_list(list) + "}";
  };
  const auto modelopt_nvfp4 = [](const Strings& list) { return modelopt("NVFP4", list); };
  for (const auto& block : {std::function<std::string(const Strings&)>(modelopt_nvfp4),
                            std::function<std::string(const Strings&)>(ct)}) {
    const auto overmatches = [&](const Strings& list) {
      Strings out;
      const Report r = lint_folder(folder(config(k_llama_11, block(list)), layers_1_and_10()));
      for (const Finding& f : findings(r, RuleId::broad_substring_entry)) {
        out.push_back(f.pointer + " " + f.message);
      }
      return out;
    };
    const Strings short_list = overmatches(entries);
    EXPECT_EQ(overmatches(padded), short_list);
    if (block(entries).find("modelopt") != std::string::npos) {
      EXPECT_GE(short_list.size(), 4u);
    } else {
      EXPECT_TRUE(short_list.empty());
    }
  }
}

TEST(RuleCases, QC111Negative)
{
  const Report r = lint_folder(folder(
    config(k_llama_11, modelopt("NVFP4", {"lm_head", "model.layers.1.*"})), layers_1_and_10()));
  EXPECT_TRUE(r.findings.empty()) << text(r);
}

// Spec 3.4 and R17 name SGLang compressed-tensors as the other substring matcher; since PR 32736
// SGLang takes a plain entry whole or as a dotted suffix: `ignore: ["model.layers.1"]` excludes
// neither model.layers.10 nor model.layers.1's own BF16 projection there (a prefix), so the
// projection is QC101 for both engines and nothing is QC111.
TEST(RuleCases, QC111NegativeCompressedTensorsSglangPrefix)
{
  const Report r = lint_folder(folder(
    config(k_llama_11, R"({"quant_method": "compressed-tensors", )"
                       R"("format": "nvfp4-pack-quantized", "config_groups": {"group_0": )"
                       R"({"targets": ["Linear"], "weights": {"num_bits": 4, "type": "float", )"
                       R"("group_size": 16}}}, "ignore": )" +
                         json_list({"lm_head", "model.layers.1"}) + "}"),
    ct_nvfp4("model.layers.0.mlp.down_proj") + bf16("model.layers.1.mlp.down_proj") +
      ct_nvfp4("model.layers.10.mlp.down_proj") + bf16("lm_head")));
  EXPECT_TRUE(findings(r, RuleId::broad_substring_entry).empty()) << text(r);
  const auto undeclared = findings(r, RuleId::undeclared_unquantized);
  ASSERT_EQ(undeclared.size(), 1u) << text(r);
  EXPECT_EQ(undeclared[0].modules, Strings{"model.layers.1.mlp.down_proj"});
  EXPECT_EQ(engines(undeclared[0]), (std::set<Engine>{Engine::vllm, Engine::sglang}));
}

// QC112: an entry for a layer the checkpoint does not have (typo: 7 for 1).
TEST(RuleCases, QC112Positive)
{
  const Report r =
    lint_folder(folder(config(k_llama, modelopt("NVFP4", {"lm_head", "model.layers.1*",
                                                          "model.layers.7.mlp.down_proj"})),
                       llama_nvfp4_with_bf16_layer1()));
  const Finding f = only(r, RuleId::unused_entry,
                         "ignore entry 'model.layers.7.mlp.down_proj' matches no module of the "
                         "checkpoint");
  EXPECT_EQ(f.suggested_entries, Strings{"model.layers.7.mlp.down_proj"});
  EXPECT_EQ(f.pointer, "/quantization_config/ignore/2");
  EXPECT_EQ(f.end_pointer, "");
  EXPECT_TRUE(f.details.empty());
  EXPECT_EQ(f.end_line, f.line);
  EXPECT_EQ(f.end_column, f.column + 30); // the quoted entry
}

// QC112 negative: SGLang builds a DeepSeek NextN draft's head as model.shared_head.head, filled
// from the target's head (no layer of qcheck's names it); an entry for it, as earlier versions
// of qcheck fix wrote, is deliberate. Without such a draft the same entry is dead.
TEST(RuleCases, QC112NegativeSglangDraftHead)
{
  const Report r = lint_folder(
    folder(config(k_deepseek, modelopt("FP8", {"lm_head", "model.layers.1*", "model.decoder*",
                                               "model.shared_head.head"})),
           deepseek_nextn(make_fp8, make_bf16)));
  EXPECT_TRUE(r.findings.empty()) << text(r);
  const Report dead = lint_folder(folder(
    config(k_llama, modelopt("NVFP4", {"lm_head", "model.layers.1*", "model.shared_head.head"})),
    llama_nvfp4_with_bf16_layer1()));
  only(dead, RuleId::unused_entry,
       "ignore entry 'model.shared_head.head' matches no module of the checkpoint");
}

// explain says what SGLang does with a DeepSeek NextN draft's head (loads the target's into
// it) and names its Quark eh_proj a ReplicatedLinear, vLLM's a plain nn.Linear.
TEST(RuleCases, ExplainSglangNextnHeadAndQuarkEhProj)
{
  const std::string d = "model.layers.1.";
  MemoryFileSystem fs =
    folder(config(k_deepseek, quark({"lm_head"})), deepseek_nextn(make_fp8, make_bf16));
  auto run = lint_path(fs, "m", {});
  ASSERT_TRUE(run);
  const std::vector<Engine> engines{Engine::vllm, Engine::sglang};
  const auto head = explain_module(*run, d + "shared_head.head", engines);
  ASSERT_TRUE(head) << head.error();
  EXPECT_NE(head->find("  SGLang: builds the draft's head as 'model.shared_head.head' and fills "
                       "it from the target model's head, never from this tensor\n"),
            std::string::npos)
    << *head;
  const auto proj = explain_module(*run, d + "eh_proj", engines);
  ASSERT_TRUE(proj) << proj.error();
  EXPECT_NE(proj->find("  SGLang: checks 'model.eh_proj' (ReplicatedLinear) against config.json "
                       "exclude: QUANTIZED"),
            std::string::npos)
    << *proj;
  EXPECT_NE(proj->find("  vLLM: checks 'model.layers.1.eh_proj' (plain nn.Linear) against "
                       "config.json exclude: excluded"),
            std::string::npos)
    << *proj;
}

// QC112 negative: a model that ties its LM head to the embeddings stores no lm_head, yet the
// engines build one, and llm-compressor lists it by default (ignore: ["lm_head"]). A stored
// NextN shared_head.head is a draft's head, not the model's: the entry is still in use.
TEST(RuleCases, QC112NegativeTiedLmHead)
{
  const std::string tied =
    R"("architectures": ["LlamaForCausalLM"], "model_type": "llama", "num_hidden_layers": 1, )"
    R"("tie_word_embeddings": true)";
  const Tensors stored = nvfp4("model.layers.0.self_attn.o_proj") +
                         nvfp4("model.layers.0.mlp.down_proj") +
                         bf16("model.embed_tokens", 128, 64) + norm("model.norm");
  for (const Strings& list : {Strings{"lm_head"}, Strings{"re:.*lm_head"}, Strings{"*lm_head"}}) {
    const bool ct = list.front().starts_with("re:");
    const Report r = lint_folder(folder(
      config(tied,
             ct ? R"({"quant_method": "compressed-tensors", "format": "nvfp4-pack-quantized", )"
                  R"("config_groups": {"group_0": {"targets": ["Linear"], "weights": )"
                  R"({"num_bits": 4, "type": "float", "strategy": "tensor_group", )"
                  R"("group_size": 16}}}, "ignore": )" +
                    json_list(list) + "}"
                : modelopt("NVFP4", list)),
      ct ? ct_nvfp4("model.layers.0.self_attn.o_proj") + ct_nvfp4("model.layers.0.mlp.down_proj") +
             bf16("model.embed_tokens", 128, 64) + norm("model.norm")
         : stored));
    EXPECT_TRUE(findings(r, RuleId::unused_entry).empty()) << list.front() << "\n" << text(r);
  }
  // The LM head is stored: an entry for another head is still reported.
  const Report stored_head = lint_folder(folder(
    config(tied, modelopt("NVFP4", {"lm_head", "model.lm_head"})), stored + bf16("lm_head", 128)));
  only(stored_head, RuleId::unused_entry,
       "ignore entry 'model.lm_head' matches no module of the checkpoint");
}

// The same two negatives in a long list (16 entries or more), which is checked from each name's
// candidates: the head names no module or layer has are looked up too. Only the padding, the
// run of 16 entries before them, is dead.
TEST(RuleCases, QC112LongListKnowsTiedLmHeadAndSglangDraftHead)
{
  Strings padding;
  for (int i = 0; i < 16; ++i) {
    padding.push_back(fmt::format("model.nowhere.{}", i));
  }
  const auto padded = [&](const Strings& tail) {
    Strings list = padding;
    list.insert(list.end(), tail.begin(), tail.end());
    return list;
  };
  const Strings only_padding{"16 ignore entries in a row match no module of the checkpoint, from "
                             "'model.nowhere.0' to 'model.nowhere.15'"};
  const Report draft_head = lint_folder(folder(
    config(k_deepseek, modelopt("FP8", padded({"lm_head", "model.layers.1*", "model.decoder*",
                                               "model.shared_head.head"}))),
    deepseek_nextn(make_fp8, make_bf16)));
  EXPECT_EQ(messages(draft_head, RuleId::unused_entry), only_padding) << text(draft_head);
  const std::string tied =
    R"("architectures": ["LlamaForCausalLM"], "model_type": "llama", "num_hidden_layers": 1, )"
    R"("tie_word_embeddings": true)";
  const Tensors stored = nvfp4("model.layers.0.self_attn.o_proj") +
                         nvfp4("model.layers.0.mlp.down_proj") +
                         bf16("model.embed_tokens", 128, 64) + norm("model.norm");
  for (const std::string& head : {"lm_head", "*lm_head"}) {
    const Report r = lint_folder(folder(config(tied, modelopt("NVFP4", padded({head}))), stored));
    EXPECT_EQ(messages(r, RuleId::unused_entry), only_padding) << head << "\n" << text(r);
  }
  const Report ct = lint_folder(folder(
    config(tied, R"({"quant_method": "compressed-tensors", "format": "nvfp4-pack-quantized", )"
                 R"("config_groups": {"group_0": {"targets": ["Linear"], "weights": )"
                 R"({"num_bits": 4, "type": "float", "strategy": "tensor_group", )"
                 R"("group_size": 16}}}, "ignore": )" +
                   json_list(padded({"re:.*lm_head"})) + "}"),
    ct_nvfp4("model.layers.0.self_attn.o_proj") + ct_nvfp4("model.layers.0.mlp.down_proj") +
      bf16("model.embed_tokens", 128, 64) + norm("model.norm")));
  EXPECT_EQ(messages(ct, RuleId::unused_entry), only_padding) << text(ct);
  // A stored LM head: an entry for another head is dead, and extends the run.
  const Report stored_head =
    lint_folder(folder(config(tied, modelopt("NVFP4", padded({"lm_head", "model.lm_head"}))),
                       stored + bf16("lm_head", 128)));
  EXPECT_EQ(messages(stored_head, RuleId::unused_entry),
            (Strings{"16 ignore entries in a row match no module of the checkpoint, from "
                     "'model.nowhere.0' to 'model.nowhere.15'",
                     "ignore entry 'model.lm_head' matches no module of the checkpoint"}))
    << text(stored_head);
}

// An MoE whose experts are stored fused (experts.gate_up_proj, experts.down_proj: no module per
// expert), stored BF16 beside FP8 attention, under a compressed-tensors config.
std::string
ct_fused_experts_config(const Strings& ignore)
{
  return config(
    R"("architectures": ["GptOssForCausalLM"], "model_type": "gpt_oss", "num_hidden_layers": 1)",
    R"({"quant_method": "compressed-tensors", "format": "float-quantized", "config_groups": )"
    R"({"group_0": {"targets": ["Linear"], "weights": {"num_bits": 8, "type": "float", )"
    R"("strategy": "channel"}}}, "ignore": )" +
      json_list(ignore) + "}");
}

Tensors
ct_fused_experts_tensors()
{
  return ct_fp8("model.layers.0.self_attn.q_proj") + ct_fp8("model.layers.0.self_attn.o_proj") +
         Tensors{{"model.layers.0.mlp.experts.gate_up_proj", "BF16", {4, 64, 128}},
                 {"model.layers.0.mlp.experts.down_proj", "BF16", {4, 64, 64}}} +
         bf16("model.layers.0.mlp.router", 4, 64) + bf16("lm_head", 128);
}

const Strings k_expert0_probes{"model.layers.0.mlp.experts.0.gate_proj",
                               "model.layers.0.mlp.experts.0.up_proj",
                               "model.layers.0.mlp.experts.0.down_proj"};

// QC112 negative: for experts stored fused, vLLM and SGLang resolve the compressed-tensors scheme
// from expert 0's three projections, names no module has. Entries naming them are what keeps the
// BF16 experts loading (without them: QC101), not stale; in a short list and in a long one.
TEST(RuleCases, QC112NegativeCtExpertZeroProbesOfFusedExperts)
{
  Strings list{"lm_head"};
  list.insert(list.end(), k_expert0_probes.begin(), k_expert0_probes.end());
  const Report r = lint_folder(folder(ct_fused_experts_config(list), ct_fused_experts_tensors()));
  EXPECT_TRUE(r.findings.empty()) << text(r);
  Strings padded = list;
  for (int i = 0; i < 16; ++i) {
    padded.push_back(fmt::format("model.nowhere.{}", i));
  }
  const Report long_list =
    lint_folder(folder(ct_fused_experts_config(padded), ct_fused_experts_tensors()));
  EXPECT_EQ(messages(long_list, RuleId::unused_entry),
            (Strings{"16 ignore entries in a row match no module of the checkpoint, from "
                     "'model.nowhere.0' to 'model.nowhere.15'"}))
    << text(long_list);
  // Another expert's projections are probed by no engine.
  const Report other = lint_folder(
    folder(ct_fused_experts_config({"lm_head", "model.layers.0.mlp.experts.1.gate_proj"}),
           ct_fused_experts_tensors()));
  EXPECT_EQ(messages(other, RuleId::unused_entry),
            (Strings{"ignore entry 'model.layers.0.mlp.experts.1.gate_proj' matches no module of "
                     "the checkpoint"}))
    << text(other);
}

// QC101 on experts stored fused under compressed-tensors: the fix names expert 0's projections,
// the names the engines look up (the fused module's own name ignores nothing), and the patch
// verifies. explain --entries shows each such entry deciding the MoE layer.
TEST(RuleCases, QC101CtFusedExpertsFixNamesExpertZeroProbes)
{
  MemoryFileSystem fs = folder(ct_fused_experts_config({"lm_head"}), ct_fused_experts_tensors());
  auto run = lint_path(fs, "m", {});
  ASSERT_TRUE(run);
  const Finding f = only(run->report, RuleId::undeclared_unquantized,
                         "model.layers.0: 1 module (2 tensors, BF16) stored unquantized but "
                         "declared compressed-tensors quantized; vLLM and SGLang fail with "
                         "8-bit parameters receive BF16 values: no crash, garbage output");
  EXPECT_EQ(f.suggested_entries, k_expert0_probes);
  const FixPlan plan = plan_fix(fs, *run, {});
  EXPECT_TRUE(plan.refused.empty()) << fmt::format("{}", fmt::join(plan.refused, "\n"));
  ASSERT_EQ(plan.edits.size(), 1u);
  EXPECT_EQ(plan.edits[0].added, (Strings{"ignore += \"model.layers.0.mlp.experts.0.gate_proj\"",
                                          "ignore += \"model.layers.0.mlp.experts.0.up_proj\"",
                                          "ignore += \"model.layers.0.mlp.experts.0.down_proj\""}));

  Strings list{"lm_head"};
  list.insert(list.end(), k_expert0_probes.begin(), k_expert0_probes.end());
  MemoryFileSystem fixed = folder(ct_fused_experts_config(list), ct_fused_experts_tensors());
  auto fixed_run = lint_path(fixed, "m", {});
  ASSERT_TRUE(fixed_run);
  const std::string entries = explain_entries(*fixed_run, {Engine::vllm, Engine::sglang});
  for (const std::string& probe : k_expert0_probes) {
    EXPECT_NE(entries.find(fmt::format("  '{}'\n    vLLM: 1 layer: model.layers.0.mlp.experts\n"
                                       "    SGLang: 1 layer: model.layers.0.mlp.experts\n",
                                       probe)),
              std::string::npos)
      << entries;
  }
}

// compressed-tensors engines look expert 0 up as gate_proj, up_proj and down_proj whatever the
// checkpoint calls its experts: Mixtral's per-expert w1/w2/w3, listed in full, exclude nothing,
// and the BF16 experts are quantized (QC101). The fix names the probes as well as each expert,
// and verifies.
TEST(RuleCases, QC101CtMixtralExpertsAreProbedByProjectionNames)
{
  const std::string moe = "model.layers.0.block_sparse_moe.experts";
  Tensors tensors = ct_fp8("model.layers.0.self_attn.o_proj") + bf16("lm_head", 128) +
                    bf16("model.layers.0.block_sparse_moe.gate", 2, 64);
  Strings w_names{"lm_head"};
  for (int e = 0; e < 2; ++e) {
    for (const char* w : {"w1", "w2", "w3"}) {
      const std::string name = fmt::format("{}.{}.{}", moe, e, w);
      tensors = tensors + bf16(name);
      w_names.push_back(name);
    }
  }
  const std::string mixtral =
    R"("architectures": ["MixtralForCausalLM"], "model_type": "mixtral", "num_hidden_layers": 1)";
  const auto ct = [&](const Strings& ignore) {
    return config(mixtral,
                  R"({"quant_method": "compressed-tensors", "format": "float-quantized", )"
                  R"("config_groups": {"group_0": {"targets": ["Linear"], "weights": )"
                  R"({"num_bits": 8, "type": "float", "strategy": "channel"}}}, "ignore": )" +
                    json_list(ignore) + "}");
  };
  MemoryFileSystem fs = folder(ct(w_names), tensors);
  auto run = lint_path(fs, "m", {});
  ASSERT_TRUE(run);
  const auto undeclared = findings(run->report, RuleId::undeclared_unquantized);
  ASSERT_EQ(undeclared.size(), 1u) << text(run->report);
  EXPECT_EQ(engines(undeclared[0]), (std::set<Engine>{Engine::vllm, Engine::sglang}));
  const Strings probes{moe + ".0.gate_proj", moe + ".0.up_proj", moe + ".0.down_proj"};
  // The probes, and beside them each expert as stored (an expert named on its own is listed
  // with all of its siblings, so no QC105).
  Strings expected = probes;
  expected.insert(expected.end(), w_names.begin() + 1, w_names.end());
  for (const std::string& name : expected) {
    EXPECT_NE(std::find(undeclared[0].suggested_entries.begin(),
                        undeclared[0].suggested_entries.end(), name),
              undeclared[0].suggested_entries.end())
      << name << "\n"
      << text(run->report);
  }
  const FixPlan plan = plan_fix(fs, *run, {});
  EXPECT_TRUE(plan.refused.empty()) << fmt::format("{}", fmt::join(plan.refused, "\n"));
  // The probes alone are what the engines read: listed, the experts load BF16.
  Strings fixed{"lm_head"};
  fixed.insert(fixed.end(), probes.begin(), probes.end());
  const Report clean = lint_folder(folder(ct(fixed), tensors));
  EXPECT_TRUE(clean.findings.empty()) << text(clean);
}

// QC102 on experts stored quantized per expert while the list names expert 0's three
// projections (compressed-tensors engines decide the whole MoE from them): every module's
// finding names all three entries, as removing one leaves the shards disagreeing (QC103), and
// fix --remove-excluding removes all three; the patch verifies and lints clean.
TEST(RuleCases, QC102CtExpertProbesAreRemovedTogether)
{
  const std::string moe = "model.layers.0.mlp.experts";
  Tensors tensors = ct_fp8("model.layers.0.self_attn.o_proj") + bf16("lm_head", 128) +
                    bf16("model.layers.0.mlp.gate", 2, 64);
  for (int e = 0; e < 2; ++e) {
    for (const char* w : {"gate_proj", "up_proj", "down_proj"}) {
      tensors = tensors + ct_fp8(fmt::format("{}.{}.{}", moe, e, w));
    }
  }
  const std::string qwen = R"("architectures": ["Qwen3MoeForCausalLM"], "model_type": )"
                           R"("qwen3_moe", "num_hidden_layers": 1)";
  const auto ct = [&](const Strings& ignore) {
    return config(qwen, R"({"quant_method": "compressed-tensors", "format": "float-quantized", )"
                        R"("config_groups": {"group_0": {"targets": ["Linear"], "weights": )"
                        R"({"num_bits": 8, "type": "float", "strategy": "channel"}}}, "ignore": )" +
                          json_list(ignore) + "}");
  };
  const Strings probes{moe + ".0.gate_proj", moe + ".0.up_proj", moe + ".0.down_proj"};
  Strings listed{"lm_head", "model.layers.0.mlp.gate"};
  listed.insert(listed.end(), probes.begin(), probes.end());
  MemoryFileSystem fs = folder(ct(listed), tensors);
  auto run = lint_path(fs, "m", {});
  ASSERT_TRUE(run);
  const auto excluded = findings(run->report, RuleId::excluded_but_quantized);
  ASSERT_EQ(excluded.size(), 6u) << text(run->report);
  const Strings sorted{moe + ".0.down_proj", moe + ".0.gate_proj", moe + ".0.up_proj"};
  for (const Finding& f : excluded) {
    EXPECT_EQ(f.suggested_entries, sorted) << f.message;
  }
  const FixPlan plan = plan_fix(fs, *run, LintOptions{}, FixOptions{true});
  EXPECT_TRUE(plan.refused.empty()) << fmt::format("{}", fmt::join(plan.refused, "\n"));
  ASSERT_EQ(plan.edits.size(), 1u);
  for (const std::string& probe : probes) {
    EXPECT_EQ(plan.edits[0].patched.find(probe), std::string::npos) << plan.edits[0].patched;
  }
  const Report after = lint_folder(folder(ct({"lm_head", "model.layers.0.mlp.gate"}), tensors));
  EXPECT_TRUE(after.findings.empty()) << text(after);
}

// One shard of a fused layer stored quantized is listed twice, exactly (the first entry vLLM and
// TensorRT-LLM meet) and as a glob (TensorRT-LLM's second): QC103 names both, and
// fix --remove-excluding removes every entry that split the shards, not only the first; each
// entry several QC102 findings name is removed, and logged, once.
TEST(RuleCases, RemoveExcludingRemovesEveryEntryThatSplitsTheShards)
{
  const Tensors tensors = llama_fp8_layer0();
  const std::string llama =
    R"("architectures": ["LlamaForCausalLM"], "model_type": "llama", "num_hidden_layers": 1)";
  MemoryFileSystem fs = folder(config(llama, modelopt("FP8", {"model.layers.0.mlp.gate_proj",
                                                              "model.layers.[0-9].mlp.gate_proj",
                                                              "model.language_model.layers"})),
                               tensors);
  auto run = lint_path(fs, "m", {});
  ASSERT_TRUE(run);
  const auto disagree = findings(run->report, RuleId::fused_shards_disagree);
  ASSERT_EQ(disagree.size(), 1u) << text(run->report);
  EXPECT_EQ(disagree[0].modules,
            (Strings{"model.layers.0.mlp.gate_proj", "model.layers.0.mlp.up_proj"}));
  EXPECT_EQ(engines(disagree[0]), (std::set<Engine>{Engine::vllm, Engine::trtllm}));
  EXPECT_EQ(disagree[0].suggested_entries,
            (Strings{"model.layers.0.mlp.gate_proj", "model.layers.[0-9].mlp.gate_proj"}));
  // Without --remove-excluding the shards are left to a human, the entries named.
  // (plan_fix() takes the run's declaration: each plan gets a run of its own.)
  auto first = lint_path(fs, "m", {});
  ASSERT_TRUE(first);
  const FixPlan kept = plan_fix(fs, *first, LintOptions{}, FixOptions{});
  EXPECT_TRUE(std::any_of(
    kept.remaining.begin(), kept.remaining.end(),
    [](const std::string& m) {
      return m.find("[QC103]; --remove-excluding would remove model.layers.0.mlp.gate_proj, "
                    "model.layers.[0-9].mlp.gate_proj") != std::string::npos;
    }))
    << fmt::format("{}", fmt::join(kept.remaining, "\n"));
  const FixPlan plan = plan_fix(fs, *run, LintOptions{}, FixOptions{true});
  EXPECT_TRUE(plan.refused.empty()) << fmt::format("{}", fmt::join(plan.refused, "\n"));
  ASSERT_EQ(plan.edits.size(), 1u);
  Strings removed;
  for (const std::string& line : plan.edits[0].added) {
    if (line.starts_with("ignore -= ")) {
      removed.push_back(line);
    }
  }
  EXPECT_EQ(removed, (Strings{"ignore -= \"model.language_model.layers\"",
                              "ignore -= \"model.layers.0.mlp.gate_proj\"",
                              "ignore -= \"model.layers.[0-9].mlp.gate_proj\""}));
  EXPECT_TRUE(plan.remaining.empty()) << fmt::format("{}", fmt::join(plan.remaining, "\n"));
  const Report after = lint_patched(fs, plan);
  EXPECT_TRUE(findings(after, RuleId::fused_shards_disagree).empty()) << text(after);
  EXPECT_TRUE(findings(after, RuleId::excluded_but_quantized).empty()) << text(after);
}

// Every shard stored quantized, one listed by a regex (compressed-tensors): QC103 says to remove
// it, and fix --remove-excluding does; the shards stored BF16 with one left out are QC101's
// (fix adds the others), not a removal.
TEST(RuleCases, QC103StoredQuantizedSuggestsRemovingTheEntry)
{
  const auto ct = [&](const Strings& ignore) {
    return config(k_llama, R"({"quant_method": "compressed-tensors", "format": "float-quantized", )"
                           R"("config_groups": {"group_0": {"targets": ["Linear"], "weights": )"
                           R"({"num_bits": 8, "type": "float", "strategy": "channel"}}}, )"
                           R"("ignore": )" +
                             json_list(ignore) + "}");
  };
  const std::string a = "model.layers.0.self_attn.";
  Tensors tensors = bf16("lm_head", 64, 64) + norm("model.norm");
  for (const char* p : {"q_proj", "k_proj", "v_proj", "o_proj"}) {
    tensors = tensors + ct_fp8(a + p);
  }
  MemoryFileSystem fs = folder(ct({"lm_head", "re:.*layers[.]0[.]self_attn[.]q_proj"}), tensors);
  auto run = lint_path(fs, "m", {});
  ASSERT_TRUE(run);
  const Finding f = only(run->report, RuleId::fused_shards_disagree,
                         "the shards of fused layer 'model.layers.0.self_attn.qkv_proj' are not "
                         "excluded alike; vLLM and SGLang stop with `Found a different "
                         "quantization schemes for ... in model.layers.0.self_attn.qkv_proj`");
  EXPECT_EQ(f.suggested_entries, Strings{"re:.*layers[.]0[.]self_attn[.]q_proj"});
  EXPECT_EQ(f.fix, "every shard is stored quantized: remove re:.*layers[.]0[.]self_attn[.]q_proj "
                   "from the list (qcheck fix --remove-excluding)");
  const FixPlan plan = plan_fix(fs, *run, LintOptions{}, FixOptions{true});
  EXPECT_TRUE(plan.refused.empty()) << fmt::format("{}", fmt::join(plan.refused, "\n"));
  ASSERT_EQ(plan.edits.size(), 1u);
  EXPECT_TRUE(plan.remaining.empty()) << fmt::format("{}", fmt::join(plan.remaining, "\n"));
  EXPECT_TRUE(lint_patched(fs, plan).findings.empty()) << text(lint_patched(fs, plan));

  // Stored BF16, the list forgetting v_proj: no removal suggested.
  Tensors plain = bf16("lm_head", 64, 64) + norm("model.norm") + ct_fp8(a + "o_proj");
  for (const char* p : {"q_proj", "k_proj", "v_proj"}) {
    plain = plain + bf16(a + p, 64, 64);
  }
  const Report r = lint_folder(folder(ct({"lm_head", a + "q_proj", a + "k_proj"}), plain));
  const auto split = findings(r, RuleId::fused_shards_disagree);
  ASSERT_EQ(split.size(), 1u) << text(r);
  EXPECT_TRUE(split[0].suggested_entries.empty()) << text(r);
  EXPECT_EQ(split[0].fix, "list every shard of the fused layer, or none");
}

// vLLM reads a ModelOpt entry "X*" as two ("X", "X.*"): the entries of a fused layer's shards
// are mapped back to the list's own, whatever the split entries before them.
TEST(RuleCases, QC102ModeloptShardEntriesAreTheListsOwn)
{
  Tensors tensors = bf16("lm_head", 64, 64);
  for (const char* p : {"self_attn.o_proj", "mlp.gate_proj", "mlp.up_proj", "mlp.down_proj"}) {
    tensors = tensors + fp8(std::string("model.layers.0.") + p);
  }
  const std::string llama =
    R"("architectures": ["LlamaForCausalLM"], "model_type": "llama", "num_hidden_layers": 1)";
  MemoryFileSystem fs = folder(
    config(llama, modelopt("FP8", {"lm_head*", "model.embed*", "model.layers.0.mlp.gate_proj",
                                   "model.layers.0.mlp.up_proj"})),
    tensors);
  LintOptions vllm_only;
  vllm_only.engines = {Engine::vllm};
  auto run = lint_path(fs, "m", vllm_only);
  ASSERT_TRUE(run);
  const Report& r = run->report;
  const auto excluded = findings(r, RuleId::excluded_but_quantized);
  ASSERT_EQ(excluded.size(), 2u) << text(r);
  for (const Finding& f : excluded) {
    EXPECT_EQ(engines(f), std::set<Engine>{Engine::vllm}) << f.message;
    EXPECT_EQ(f.suggested_entries,
              (Strings{"model.layers.0.mlp.gate_proj", "model.layers.0.mlp.up_proj"}))
      << f.message;
  }
}

// A fused layer stored mixed (q and v BF16, k FP8) whose list also excludes q and v apart has two
// QC103 findings on the same modules: the stored mixture at the shard, the shards listed apart
// at the list. Their identities (fingerprint(), which baselines match) differ, so a baseline
// taken before the list changed does not hide the second.
TEST(RuleCases, Qc103ListedApartIsNotTheStoredMixture)
{
  const Tensors tensors = bf16("lm_head", 64, 64) + bf16("model.layers.0.self_attn.q_proj") +
                          fp8("model.layers.0.self_attn.k_proj") +
                          bf16("model.layers.0.self_attn.v_proj") +
                          fp8("model.layers.0.self_attn.o_proj");
  const std::string llama =
    R"("architectures": ["LlamaForCausalLM"], "model_type": "llama", "num_hidden_layers": 1)";
  const Report r =
    lint_folder(folder(config(llama, modelopt("FP8", {"lm_head", "model.layers.0.self_attn.q_proj",
                                                      "model.layers.0.self_attn.v_proj"})),
                       tensors));
  const auto both = findings(r, RuleId::fused_shards_disagree);
  ASSERT_EQ(both.size(), 2u) << text(r);
  EXPECT_EQ(both[0].modules, both[1].modules);
  EXPECT_NE(fingerprint(both[0]), fingerprint(both[1]));
  const auto listed =
    std::find_if(both.begin(), both.end(), [](const Finding& f) { return !f.engines.empty(); });
  ASSERT_NE(listed, both.end());
  EXPECT_EQ(listed->file, "config.json");
  EXPECT_EQ(listed->pointer, "/quantization_config/ignore");
}

// fix --remove-excluding removes an entry written with escapes (a compressed-tensors regex holds
// "\\." in its JSON text) by its value: before, no element's raw text equalled it, nothing was
// removed, and the plan was refused as leaving the exclusion in place.
TEST(RuleCases, QC102RemovesAnEntryWrittenWithEscapes)
{
  const Tensors tensors = ct_fp8("model.layers.0.self_attn.o_proj") +
                          ct_fp8("model.layers.0.mlp.down_proj") + bf16("lm_head", 128);
  const std::string regex = "re:model\\.layers\\.0\\.self_attn\\.o_proj";
  const std::string written = R"(re:model\\.layers\\.0\\.self_attn\\.o_proj)"; // in JSON
  MemoryFileSystem fs = folder(ct_fused_experts_config({"lm_head", written}), tensors);
  auto run = lint_path(fs, "m", {});
  ASSERT_TRUE(run);
  const Finding f = only(run->report, RuleId::excluded_but_quantized,
                         "'model.layers.0.self_attn.o_proj' is stored quantized but vLLM and "
                         "SGLang exclude it");
  EXPECT_EQ(f.suggested_entries, Strings{regex});
  const FixPlan plan = plan_fix(fs, *run, LintOptions{}, FixOptions{true});
  EXPECT_TRUE(plan.refused.empty()) << fmt::format("{}", fmt::join(plan.refused, "\n"));
  ASSERT_EQ(plan.edits.size(), 1u);
  EXPECT_EQ(plan.edits[0].patched.find("re:"), std::string::npos) << plan.edits[0].patched;
  EXPECT_TRUE(lint_folder(folder(ct_fused_experts_config({"lm_head"}), tensors)).findings.empty());
}

// explain --entries agrees with the decisions: a compressed-tensors entry naming the fused MoE
// prefix decides nothing (the engines look up expert 0's projections only).
TEST(RuleCases, ExplainCtFusedMoePrefixEntryDecidesNothing)
{
  MemoryFileSystem fs = folder(ct_fused_experts_config({"lm_head", "model.layers.0.mlp.experts"}),
                               ct_fused_experts_tensors());
  auto run = lint_path(fs, "m", {});
  ASSERT_TRUE(run);
  EXPECT_EQ(findings(run->report, RuleId::undeclared_unquantized).size(), 1u) << text(run->report);
  const std::string entries = explain_entries(*run, {Engine::vllm});
  EXPECT_NE(entries.find("  'model.layers.0.mlp.experts'\n    vLLM: nothing"), std::string::npos)
    << entries;
}

// Consecutive dead entries are one finding that spans them, from the first entry's line and
// column to the end of the last (pointer to end_pointer); up to six are spelled out.
TEST(RuleCases, QC112ConsecutiveDeadEntriesAreOneFinding)
{
  const std::string quantization =
    "{\"quant_method\": \"modelopt\", \"quant_algo\": \"NVFP4\", \"group_size\": 16,\n"
    "    \"ignore\": [\n      \"lm_head\",\n      \"model.layers.1*\",\n"
    "      \"model.layers.7.mlp.down_proj\",\n      \"model.layers.8.mlp.down_proj\",\n"
    "      \"model.layers.9.self_attn.o_proj\"\n    ]}";
  const Report r =
    lint_folder(folder(config(k_llama, quantization), llama_nvfp4_with_bf16_layer1()));
  const Finding f = only(r, RuleId::unused_entry,
                         "3 ignore entries in a row match no module of the checkpoint, from "
                         "'model.layers.7.mlp.down_proj' to 'model.layers.9.self_attn.o_proj'");
  EXPECT_EQ(f.pointer, "/quantization_config/ignore/2");
  EXPECT_EQ(f.end_pointer, "/quantization_config/ignore/4");
  EXPECT_TRUE(f.suggested_entries.empty());
  EXPECT_EQ(f.details, (Strings{"'model.layers.7.mlp.down_proj'", "'model.layers.8.mlp.down_proj'",
                                "'model.layers.9.self_attn.o_proj'"}));
  EXPECT_EQ(f.line, 7u);
  EXPECT_EQ(f.column, 7u);
  EXPECT_EQ(f.end_line, 9u);
  EXPECT_EQ(f.end_column, 40u); // after the closing quote of the last entry
}

// A used entry ends a run: dead, used, dead, dead is two findings.
TEST(RuleCases, QC112UsedEntryEndsARun)
{
  const Report r = lint_folder(
    folder(config(k_llama, modelopt("NVFP4", {"model.layers.7.a", "lm_head", "model.layers.7.b",
                                              "model.layers.7.c", "model.layers.1*"})),
           llama_nvfp4_with_bf16_layer1()));
  EXPECT_EQ(messages(r, RuleId::unused_entry),
            (Strings{"ignore entry 'model.layers.7.a' matches no module of the checkpoint",
                     "2 ignore entries in a row match no module of the checkpoint, from "
                     "'model.layers.7.b' to 'model.layers.7.c'"}))
    << text(r);
}

// A glob whose text before the wildcard starts many module names is looked for among those
// modules first; when none matches, it is still dead.
TEST(RuleCases, QC112GlobStartingLikeModulesThatMatchesNone)
{
  const Report r = lint_folder(folder(
    config(k_llama, modelopt("NVFP4", {"lm_head", "model.layers.1*.bogus", "model.layers.1*"})),
    llama_nvfp4_with_bf16_layer1()));
  EXPECT_EQ(messages(r, RuleId::unused_entry),
            (Strings{"ignore entry 'model.layers.1*.bogus' matches no module of the checkpoint"}))
    << text(r);
}

// Past eight entries that are not modules or their ancestors (here vLLM substrings), the
// unused-entry check answers from one set of every name and ancestor: same answers.
TEST(RuleCases, QC112PositiveAmongManyAncestorEntries)
{
  const Report r = lint_folder(folder(
    config(k_llama,
           modelopt("NVFP4", {"lm_head", "model.layers.1*", "model.layers.1.m", "model.layers.1.ml",
                              "model.layers.1.s", "model.layers.1.se", "model.layers.1.sel",
                              "model.layers.1.self", "model.layers.1.mlp.d",
                              "model.layers.1.mlp.do", "model.layers.1.mlp.dow", "model.layers.1",
                              "model.layers.1.self_attn", "model.norm",
                              "model.layers.1.mlp.down_proj", "model.layers.7.mlp.down_proj"})),
    llama_nvfp4_with_bf16_layer1()));
  const auto unused = messages(r, RuleId::unused_entry);
  EXPECT_EQ(unused, (Strings{"ignore entry 'model.layers.7.mlp.down_proj' matches no module of "
                             "the checkpoint"}))
    << text(r);
}

// A repeated dead entry is reported at each of its positions.
TEST(RuleCases, QC112RepeatedEntryPointsAtEachCopy)
{
  const Report r = lint_folder(
    folder(config(k_llama, modelopt("NVFP4", {"lm_head", "model.layers.7.mlp.down_proj",
                                              "model.layers.1*", "model.layers.7.mlp.down_proj"})),
           llama_nvfp4_with_bf16_layer1()));
  const auto unused = findings(r, RuleId::unused_entry);
  ASSERT_EQ(unused.size(), 2u) << text(r);
  EXPECT_EQ(unused[0].pointer, "/quantization_config/ignore/1");
  EXPECT_EQ(unused[1].pointer, "/quantization_config/ignore/3");
}

// config.json and hf_quant_config.json carrying long lists: one check serves both when they are
// equal; lists that differ are each checked on their own.
TEST(RuleCases, QC112LongListsInBothFilesAreEachReported)
{
  Strings list{"lm_head", "model.layers.1*"};
  for (int i = 0; i < 16; ++i) {
    list.push_back("model.layers.1." + std::string(i % 2 ? "mlp" : "self_attn"));
  }
  Strings dead = list, live = list;
  dead.push_back("model.layers.7.mlp.*");
  live.push_back("ayers.0.mlp"); // a substring only vLLM's matching finds
  const std::string config_dead = "config.json /quantization_config/ignore/18 model.layers.7.mlp.*";
  const std::string hf_dead =
    "hf_quant_config.json /quantization/exclude_modules/18 model.layers.7.mlp.*";
  const std::vector<std::pair<Strings, Strings>> cases{
    {dead, {config_dead, hf_dead}}, // the same list: both files report the dead entry
    {live, {config_dead}},          // hf_quant_config.json's entry 18 matches under vLLM
  };
  for (const auto& [second, expected] : cases) {
    MemoryFileSystem fs =
      folder(config(k_llama, modelopt("NVFP4", dead)), llama_nvfp4_with_bf16_layer1());
    fs.add_file("m/hf_quant_config.json", hf_quant_config("NVFP4", second));
    const Report r = lint_folder(fs);
    Strings got;
    for (const Finding& f : findings(r, RuleId::unused_entry)) {
      got.push_back(f.file + " " + f.pointer + " " + f.suggested_entries.at(0));
    }
    EXPECT_EQ(got, expected) << text(r);
  }
}

// A short list in both files is decided once as well: each file still gets its own findings,
// with its own key, pointers, file and positions, in entry order.
TEST(RuleCases, QC111AndQC112ShortListInBothFilesAreEachReported)
{
  const Strings list{"lm_head", "model.layers.1", "model.layers.7.mlp.down_proj"};
  MemoryFileSystem fs = folder(config(k_llama_11, modelopt("NVFP4", list)), layers_1_and_10());
  fs.add_file("m/hf_quant_config.json", hf_quant_config("NVFP4", list));
  const Report r = lint_folder(fs);
  Strings got;
  for (const Finding& f : r.findings) {
    if (f.rule == RuleId::broad_substring_entry || f.rule == RuleId::unused_entry) {
      got.push_back(f.file + " " + f.pointer + " " + f.message);
      EXPECT_GT(f.line, 0u) << f.file << " " << f.pointer; // each file's positions are read
    }
  }
  std::sort(got.begin(), got.end());
  EXPECT_EQ(got, (Strings{
                   "config.json /quantization_config/ignore/1 ignore entry 'model.layers.1' is "
                   "matched as a substring by vLLM and also excludes "
                   "model.layers.10.mlp.down_proj",
                   "config.json /quantization_config/ignore/2 ignore entry "
                   "'model.layers.7.mlp.down_proj' matches no module of the checkpoint",
                   "hf_quant_config.json /quantization/exclude_modules/1 exclude_modules entry "
                   "'model.layers.1' is matched as a substring by vLLM and also excludes "
                   "model.layers.10.mlp.down_proj",
                   "hf_quant_config.json /quantization/exclude_modules/2 exclude_modules entry "
                   "'model.layers.7.mlp.down_proj' matches no module of the checkpoint",
                 }))
    << text(r);
}

// Whether an entry names a known module is asked once per entry of a list; a different list
// in the other file is asked again, whatever the first list held at the same place.
TEST(RuleCases, QC112DifferentListsInBothFilesAreEachAsked)
{
  MemoryFileSystem fs = folder(config(k_llama, modelopt("NVFP4", {"lm_head", "model.layers.1*",
                                                                  "model.layers.1.mlp.down_proj"})),
                               llama_nvfp4_with_bf16_layer1());
  fs.add_file("m/hf_quant_config.json", hf_quant_config("NVFP4", {"lm_head", "model.layers.1*",
                                                                  "model.layers.7.mlp.down_proj"}));
  const Report r = lint_folder(fs);
  Strings got;
  for (const Finding& f : findings(r, RuleId::unused_entry)) {
    got.push_back(f.file + " " + f.pointer);
  }
  EXPECT_EQ(got, Strings{"hf_quant_config.json /quantization/exclude_modules/2"}) << text(r);
}

// In a long list, an entry that only a fused layer's name shows (vLLM's qkv_proj, matched as a
// substring) is used: the check reads each engine's layer names, not just the modules.
TEST(RuleCases, QC112NegativeFusedNameInALongList)
{
  Strings list{"lm_head", "model.layers.1*", "attn.qkv"};
  for (int i = 0; i < 16; ++i) {
    list.push_back("model.layers.1.self_attn");
  }
  const Report r = lint_folder(
    folder(config(k_llama, modelopt("NVFP4", list)),
           llama_nvfp4_with_bf16_layer1() + bf16("model.layers.1.self_attn.q_proj") +
             bf16("model.layers.1.self_attn.k_proj") + bf16("model.layers.1.self_attn.v_proj")));
  EXPECT_TRUE(findings(r, RuleId::unused_entry).empty()) << text(r);
}

// In a long list of exact names (compressed-tensors), an entry naming only an ancestor of
// modules is used: qcheck's known names hold every module and its ancestors, those of modules no
// engine builds as a layer (norms) as well as the layers'. An entry naming nothing is reported.
// The known names are built in two parts (the modules' early, beside the list's compiling; the
// layers' later): each must hold.
TEST(RuleCases, QC112LongListOfExactNamesKnowsModulesAndAncestors)
{
  Strings list{"lm_head", "model.visual", "model.layers.1", "model.layers.1.mlp.down_proj",
               "model.layers.9.mlp.down_proj"};
  for (int i = 0; i < 16; ++i) {
    list.push_back("model.layers.1.mlp.down_proj");
  }
  const std::string quantization =
    R"({"quant_method": "compressed-tensors", "format": "nvfp4-pack-quantized", )"
    R"("config_groups": {"group_0": {"targets": ["Linear"], "weights": {"num_bits": 4, )"
    R"("type": "float", "strategy": "tensor_group", "group_size": 16}}}, "ignore": )" +
    json_list(list) + "}";
  const Report r = lint_folder(
    folder(config(k_llama, quantization),
           ct_nvfp4("model.layers.0.self_attn.o_proj") + ct_nvfp4("model.layers.0.mlp.down_proj") +
             bf16("model.layers.1.self_attn.o_proj") + bf16("model.layers.1.mlp.down_proj") +
             bf16("lm_head") + norm("model.visual.post_norm")));
  EXPECT_EQ(messages(r, RuleId::unused_entry),
            (Strings{"ignore entry 'model.layers.9.mlp.down_proj' matches no module of the "
                     "checkpoint"}))
    << text(r);
}

// The known names' layers part: in a long list of exact names, an entry naming only an ancestor
// of a name an engine gives a layer (SGLang builds a DeepSeek NextN layer under model.decoder) is
// known, though no module bears that name nor lies below it.
TEST(RuleCases, QC112LongListOfExactNamesKnowsEngineLayerNames)
{
  const std::string d = "model.layers.1.";
  Strings list{"lm_head", "model.decoder", d + "eh_proj", d + "shared_head.head", "model.nowhere"};
  for (int i = 0; i < 16; ++i) {
    list.push_back(d + "mlp.down_proj");
  }
  const std::string quantization =
    R"({"quant_method": "compressed-tensors", "format": "nvfp4-pack-quantized", )"
    R"("config_groups": {"group_0": {"targets": ["Linear"], "weights": {"num_bits": 4, )"
    R"("type": "float", "strategy": "tensor_group", "group_size": 16}}}, "ignore": )" +
    json_list(list) + "}";
  const Report r =
    lint_folder(folder(config(k_deepseek, quantization), deepseek_nextn(make_ct_nvfp4, make_bf16)));
  EXPECT_EQ(messages(r, RuleId::unused_entry),
            (Strings{"ignore entry 'model.nowhere' matches no module of the checkpoint"}))
    << text(r);
}

TEST(RuleCases, QC112Negative)
{
  const Report r =
    lint_folder(folder(config(k_llama, modelopt("NVFP4", {"lm_head", "model.layers.1*",
                                                          "model.layers.1.mlp.down_proj"})),
                       llama_nvfp4_with_bf16_layer1()));
  EXPECT_TRUE(r.findings.empty()) << text(r);
}

namespace {

// Qwen3.5 text model, GPTQ main layers and a BF16 mtp.* draft.
Tensors
qwen35_gptq()
{
  return gptq("model.layers.0.self_attn.o_proj") + gptq("model.layers.0.mlp.down_proj") +
         bf16("lm_head") + bf16("mtp.fc", 64, 128) + bf16("mtp.layers.0.mlp.down_proj");
}

const std::string k_qwen35_text =
  R"("architectures": ["Qwen3_5ForCausalLM"], "model_type": "qwen3_5_text", )"
  R"("num_hidden_layers": 1, "mtp_num_hidden_layers": 1)";

} // namespace

// QC112 (R23): a GPTQ dynamic key written for the wrong root never re.match-es.
TEST(RuleCases, QC112PositiveDynamicKey)
{
  const Report r = lint_folder(
    folder(config(k_qwen35_text,
                  gptq_config(k_gptq_listed + R"(, "dynamic": {"-:model\\.mtp\\..*": {}})")),
           qwen35_gptq()));
  const Finding f = only(r, RuleId::unused_entry,
                         "dynamic key '-:model\\.mtp\\..*' matches no layer: vLLM applies it with "
                         "re.match (anchored at the start) to prefixes such as "
                         "'model.layers.0.mlp.down_proj'");
  EXPECT_EQ(f.pointer, "/quantization_config/dynamic/-:model\\.mtp\\..*");
}

// QC115 for a GPTQ dynamic key whose regex qcheck cannot evaluate: located at the key.
TEST(RuleCases, QC115PositiveDynamicKey)
{
  const Report r = lint_folder(folder(
    config(k_qwen35_text, gptq_config(k_gptq_listed + R"(, "dynamic": {"-:(?<!x)mtp\\..*": {}})")),
    qwen35_gptq()));
  const auto found = findings(r, RuleId::unevaluable_entry);
  ASSERT_EQ(found.size(), 1u) << text(r);
  EXPECT_TRUE(
    found[0].message.starts_with("cannot evaluate dynamic key '-:(?<!x)mtp\\..*' exactly ("))
    << found[0].message;
  EXPECT_EQ(engines(found[0]), (std::set<Engine>{Engine::vllm, Engine::sglang}));
  EXPECT_EQ(found[0].file, "config.json");
  EXPECT_EQ(found[0].pointer, "/quantization_config/dynamic/-:(?<!x)mtp\\..*");
}

// A 100,000-byte key qcheck cannot evaluate is quoted by its first 200 bytes (a fuzz review's
// key made a 100 KB line).
TEST(RuleCases, QC115LongDynamicKeyIsQuotedClipped)
{
  const std::string key = "-:" + std::string(50000, '(') + std::string(50000, ')') + "(?<!x)";
  const Report r = lint_folder(folder(
    config(k_qwen35_text, gptq_config(k_gptq_listed + R"(, "dynamic": {")" + key + R"(": {}})")),
    qwen35_gptq()));
  const auto found = findings(r, RuleId::unevaluable_entry);
  ASSERT_EQ(found.size(), 1u) << text(r).substr(0, 2000);
  EXPECT_TRUE(found[0].message.starts_with(
    "cannot evaluate dynamic key '-:" + std::string(198, '(') + "...' exactly ("))
    << found[0].message.substr(0, 400);
  EXPECT_LT(found[0].message.size(), 500u);
}

TEST(RuleCases, QC112NegativeDynamicKey)
{
  const Report r = lint_folder(
    folder(config(k_qwen35_text, gptq_config(k_gptq_listed + R"(, "dynamic": {"-:mtp\\..*": {}})")),
           qwen35_gptq()));
  EXPECT_TRUE(r.findings.empty()) << text(r);
}

// A block's dead dynamic keys in a row are one QC112 (a config copied from a larger model can
// hold thousands); a key that matches, or one qcheck cannot evaluate, ends the run. With 24 keys
// the block is indexed: the first key still decides the draft.
TEST(RuleCases, QC112DynamicKeysInARowAreOneFinding)
{
  std::string keys = R"("-:mtp\\..*": {})";
  for (int i = 0; i < 20; ++i) {
    keys += fmt::format(R"(, "-:model\\.mtp{}\\..*": {{}})", i);
  }
  keys += R"(, "-:(?<!x)model": {}, "-:model\\.mtpA": {}, "-:model\\.mtpB": {})";
  const Report r = lint_folder(
    folder(config(k_qwen35_text, gptq_config(k_gptq_listed + R"(, "dynamic": {)" + keys + "}")),
           qwen35_gptq()));
  const auto dead = findings(r, RuleId::unused_entry);
  ASSERT_EQ(dead.size(), 2u) << text(r);
  EXPECT_EQ(dead[0].message,
            "20 dynamic keys in a row match no layer, from '-:model\\.mtp0\\..*' to "
            "'-:model\\.mtp19\\..*': vLLM applies them with re.match (anchored at the start) to "
            "prefixes such as 'model.layers.0.mlp.down_proj'");
  EXPECT_EQ(dead[0].pointer, "/quantization_config/dynamic/-:model\\.mtp0\\..*");
  EXPECT_EQ(dead[0].end_pointer, "/quantization_config/dynamic/-:model\\.mtp19\\..*");
  EXPECT_EQ(dead[0].details,
            (Strings{"'-:model\\.mtp0\\..*'", "'-:model\\.mtp1\\..*'", "'-:model\\.mtp2\\..*'",
                     "'-:model\\.mtp3\\..*'", "'-:model\\.mtp4\\..*'", "... and 15 more"}));
  EXPECT_TRUE(dead[0].suggested_entries.empty());
  EXPECT_TRUE(dead[1].message.starts_with(
    "2 dynamic keys in a row match no layer, from '-:model\\.mtpA' to '-:model\\.mtpB': "))
    << dead[1].message;
  EXPECT_EQ(findings(r, RuleId::unevaluable_entry).size(), 1u) << text(r);
  // Everything else is right: "-:mtp\\..*" leaves the BF16 draft unquantized.
  EXPECT_EQ(r.findings.size(), 3u) << text(r);
}

// A block of 20,000 dead keys: one finding, each name trying only the keys its start allows.
TEST(RuleCases, QC112TwentyThousandDynamicKeysAreOneFinding)
{
  std::string keys = R"("-:mtp\\..*": {})";
  for (int i = 0; i < 20000; ++i) {
    keys += fmt::format(R"(, "-:model\\.layers\\.{}\\.x": {{}})", i + 1);
  }
  const Report r = lint_folder(
    folder(config(k_qwen35_text, gptq_config(k_gptq_listed + R"(, "dynamic": {)" + keys + "}")),
           qwen35_gptq()));
  const auto dead = findings(r, RuleId::unused_entry);
  ASSERT_EQ(dead.size(), 1u) << text(r);
  EXPECT_TRUE(dead[0].message.starts_with("20000 dynamic keys in a row match no layer, from "
                                          "'-:model\\.layers\\.1\\.x' to "
                                          "'-:model\\.layers\\.20000\\.x'"))
    << dead[0].message;
  EXPECT_EQ(r.findings.size(), 1u) << text(r);
}

// QC113 (R15): weight_scale [out, in/8] (a group of 8) and a per-row weight_scale_2.
TEST(RuleCases, QC113Positive)
{
  const std::string m = "model.layers.0.mlp.down_proj";
  Tensors t = nvfp4("model.layers.0.self_attn.o_proj") + bf16("lm_head");
  t = t + Tensors{{m + ".weight", "U8", {64, 32}},
                  {m + ".weight_scale", "F8_E4M3", {64, 8}},
                  {m + ".weight_scale_2", "F32", {64}},
                  {m + ".input_scale", "F32", {}}};
  const Report r = lint_folder(folder(config(k_llama, modelopt("NVFP4", {"lm_head"})), t));
  EXPECT_EQ(messages(r, RuleId::nvfp4_layout),
            (Strings{"'model.layers.0.mlp.down_proj': NVFP4 weight U8 [64, 32] (in = 64) needs "
                     "weight_scale F8_E4M3 [64, 4], found F8_E4M3 [64, 8]",
                     "'model.layers.0.mlp.down_proj': NVFP4 needs an F32 scalar weight_scale_2, "
                     "found [64]"}))
    << text(r);
  for (const Finding& f : findings(r, RuleId::nvfp4_layout)) {
    EXPECT_EQ(f.severity, Severity::error);
    EXPECT_EQ(f.modules, Strings{m});
  }
}

// QC113 and a stored family the config does not declare, over enough modules to be checked in
// slices, one per core: the same findings, in module order, whatever the number of threads.
TEST(RuleCases, QC113InSlicesKeepsModuleOrder)
{
  Tensors t = bf16("lm_head");
  Strings bad, foreign;
  for (int i = 0; i < 9000; ++i) {
    const std::string m =
      fmt::format("model.layers.{:02}.mlp.experts.{:03}.down_proj", i / 200, i % 200);
    if (i % 997 == 5) {
      t.insert(t.end(), {{m + ".weight", "U8", {64, 32}},
                         {m + ".weight_scale", "F8_E4M3", {64, 8}},
                         {m + ".weight_scale_2", "F32", {}},
                         {m + ".input_scale", "F32", {}}});
      bad.push_back("'" + m + "': NVFP4 weight U8 [64, 32] (in = 64) needs weight_scale F8_E4M3 " +
                    "[64, 4], found F8_E4M3 [64, 8]");
    } else if (i % 1500 == 7) {
      const Tensors more = fp8(m);
      t.insert(t.end(), more.begin(), more.end());
      foreign.push_back(m);
    } else {
      const Tensors more = nvfp4(m);
      t.insert(t.end(), more.begin(), more.end());
    }
  }
  const MemoryFileSystem fs = folder(config(k_llama, modelopt("NVFP4", {"lm_head"})), t);
  std::vector<Report> reports;
  for (const unsigned threads : {1u, 2u, 3u}) {
    LintOptions options;
    options.threads = threads;
    auto run = lint_path(fs, "m", options);
    ASSERT_TRUE(run) << run.error();
    reports.push_back(std::move(run->report));
  }
  EXPECT_EQ(messages(reports[0], RuleId::nvfp4_layout), bad) << text(reports[0]);
  ASSERT_EQ(findings(reports[0], RuleId::format_mismatch).size(), 1u) << text(reports[0]);
  EXPECT_EQ(findings(reports[0], RuleId::format_mismatch)[0].modules, foreign);
  for (size_t i = 1; i < reports.size(); ++i) {
    EXPECT_EQ(render_json({reports[i]}), render_json({reports[0]})) << i;
  }
}

TEST(RuleCases, QC113Negative)
{
  const Report r = lint_folder(folder(config(k_llama, modelopt("NVFP4", {"lm_head"})),
                                      nvfp4("model.layers.0.self_attn.o_proj") +
                                        nvfp4("model.layers.0.mlp.down_proj") + bf16("lm_head")));
  EXPECT_TRUE(r.findings.empty()) << text(r);
}

namespace {

const std::string k_fp8_block =
  R"({"quant_method": "fp8", "activation_scheme": "dynamic", "weight_block_size": [128, 128]})";

} // namespace

// QC101 negative: DeepSeek-V3.2 as released (HF FP8 block, no exclusion list) stores each
// layer's self_attn.indexer.weights_proj BF16; vLLM's and SGLang's Indexer build it with
// quant_config=None, so it is never quantized and nothing is missing. wq_b and wk are FP8.
TEST(RuleCases, QC101NegativeDeepseekV32IndexerWeightsProj)
{
  const std::string v32 =
    R"("architectures": ["DeepseekV32ForCausalLM"], "model_type": "deepseek_v32", )"
    R"("num_hidden_layers": 1, "q_lora_rank": 128, "index_n_heads": 64)";
  const std::string a = "model.layers.0.self_attn.";
  const Tensors stored = fp8_block(a + "q_a_proj") + fp8_block(a + "o_proj") +
                         fp8_block(a + "indexer.wq_b") + fp8_block(a + "indexer.wk") +
                         norm(a + "indexer.k_norm", 128) +
                         fp8_block("model.layers.0.mlp.down_proj") + bf16("lm_head", 128, 128);
  const Report r = lint_folder(
    folder(config(v32, k_fp8_block), stored + bf16(a + "indexer.weights_proj", 64, 128)));
  EXPECT_TRUE(r.findings.empty()) << text(r);
  // Another projection of the indexer stored BF16 is still declared FP8.
  const Report wk = lint_folder(
    folder(config(v32, k_fp8_block),
           fp8_block(a + "q_a_proj") + fp8_block(a + "o_proj") + fp8_block(a + "indexer.wq_b") +
             bf16(a + "indexer.wk", 128, 128) + bf16(a + "indexer.weights_proj", 64, 128) +
             fp8_block("model.layers.0.mlp.down_proj") + bf16("lm_head", 128, 128)));
  const auto missing = findings(wk, RuleId::undeclared_unquantized);
  ASSERT_EQ(missing.size(), 1u) << text(wk);
  EXPECT_EQ(missing[0].modules, Strings{a + "indexer.wk"});
}

// QC114 (R28): weight_scale_inv stored transposed for a non-square weight.
TEST(RuleCases, QC114Positive)
{
  const std::string m = "model.layers.0.mlp.down_proj";
  const Tensors t =
    fp8_block("model.layers.0.self_attn.o_proj") + bf16("lm_head") +
    Tensors{{m + ".weight", "F8_E4M3", {256, 384}}, {m + ".weight_scale_inv", "F32", {3, 2}}};
  const Report r = lint_folder(folder(config(k_llama, k_fp8_block), t));
  const Finding f = only(r, RuleId::fp8_layout,
                         "'model.layers.0.mlp.down_proj': FP8 block weight [256, 384] with blocks "
                         "[128, 128] needs weight_scale_inv [2, 3], found [3, 2]");
  EXPECT_EQ(f.modules, Strings{m});
}

TEST(RuleCases, QC114Negative)
{
  const Report r = lint_folder(folder(
    config(k_llama, k_fp8_block), fp8_block("model.layers.0.self_attn.o_proj") + bf16("lm_head") +
                                    fp8_block("model.layers.0.mlp.down_proj", 256, 384)));
  EXPECT_TRUE(r.findings.empty()) << text(r);
}

// QC114 (R16): a ModelOpt FP8 weight_scale that is neither scalar, per-channel nor 128-block.
TEST(RuleCases, QC114PositivePerTensor)
{
  const std::string m = "model.layers.0.mlp.down_proj";
  const Report r = lint_folder(folder(config(k_llama, modelopt("FP8", {"lm_head"})),
                                      fp8("model.layers.0.self_attn.o_proj") + bf16("lm_head") +
                                        Tensors{{m + ".weight", "F8_E4M3", {64, 64}},
                                                {m + ".weight_scale", "F32", {32}},
                                                {m + ".input_scale", "F32", {}}}));
  only(r, RuleId::fp8_layout,
       "'model.layers.0.mlp.down_proj': FP8 weight [64, 64] needs a scalar, [64] or a 128-block "
       "weight_scale, found [32]");
}

TEST(RuleCases, QC114NegativePerTensor)
{
  const std::string m = "model.layers.0.mlp.down_proj";
  const Report r =
    lint_folder(folder(config(k_llama, modelopt("FP8_PER_CHANNEL_PER_TOKEN", {"lm_head"})),
                       bf16("lm_head") + Tensors{{m + ".weight", "F8_E4M3", {64, 64}},
                                                 {m + ".weight_scale", "F32", {64}}}));
  EXPECT_TRUE(r.findings.empty()) << text(r);
}

namespace {

// compressed-tensors W4A16 on a Qwen3.5 text model with a BF16 mtp.* draft.
std::string
ct_w4a16(const Strings& ignore)
{
  return R"({"quant_method": "compressed-tensors", "format": "pack-quantized", )"
         R"("config_groups": {"group_0": {"targets": ["Linear"], "weights": {"num_bits": 4, )"
         R"("type": "int", "symmetric": true, "strategy": "group", "group_size": 32}}}, )"
         R"("ignore": )" +
         json_list(ignore) + "}";
}

Tensors
qwen35_ct_pack()
{
  return ct_pack("model.layers.0.self_attn.o_proj") + ct_pack("model.layers.0.mlp.down_proj") +
         bf16("lm_head") + bf16("mtp.fc", 64, 128) + bf16("mtp.layers.0.mlp.down_proj");
}

} // namespace

// QC009: names written as anything but strings. Each element is one line; the strings around
// them still count (the draft is excluded by its regex, so no QC101).
TEST(RuleCases, QC009PositiveListElementsOfTheWrongType)
{
  const std::string block =
    R"({"quant_method": "compressed-tensors", "format": "pack-quantized", )"
    R"("config_groups": {"group_0": {"targets": ["Linear"], "weights": {"num_bits": 4, )"
    R"("type": "int", "symmetric": true, "strategy": "group", "group_size": 32}}}, )"
    R"("ignore": ["lm_head", 7, null, ["mtp.fc"], "re:mtp\\..*"]})";
  const Report r = lint_folder(folder(config(k_qwen35_text, block), qwen35_ct_pack()));
  EXPECT_EQ(messages(r, RuleId::config_invalid),
            (Strings{"quantization_config: 'ignore' element 1 is a number, not a name; engines "
                     "compare module names with strings only",
                     "quantization_config: 'ignore' element 2 is null, not a name; engines "
                     "compare module names with strings only",
                     "quantization_config: 'ignore' element 3 is a list, not a name; engines "
                     "compare module names with strings only"}))
    << text(r);
  EXPECT_TRUE(findings(r, RuleId::undeclared_unquantized).empty()) << text(r);
}

// A ModelOpt exclude list written as one string is reported, and read as that one entry.
TEST(RuleCases, QC009PositiveListWrittenAsAString)
{
  const std::string block = R"({"quant_method": "modelopt", "quant_algo": "NVFP4", )"
                            R"("ignore": "lm_head"})";
  const Report r = lint_folder(folder(config(k_llama, block), llama_nvfp4_with_bf16_layer1()));
  EXPECT_EQ(messages(r, RuleId::config_invalid),
            Strings{"quantization_config: 'ignore' is a string, not a list of names; engines "
                    "compare module names with strings only"})
    << text(r);
}

// FP8's two list keys: vLLM reads ignored_layers and falls back to modules_to_not_convert
// when it is missing or empty; SGLang reads the first key present, even an empty one.
namespace {

std::string
fp8_lists(const std::string& lists)
{
  return R"({"quant_method": "fp8", "activation_scheme": "dynamic", )" + lists + "}";
}

} // namespace

// A non-empty ignored_layers is all either engine reads: layer 1, listed only in
// modules_to_not_convert, is quantized by both (it was taken as excluded when qcheck joined
// the two lists), and the unread list is reported where it is.
TEST(RuleCases, QC009PositiveFp8ListNoEngineReads)
{
  const Report r = lint_folder(folder(
    config(k_llama,
           fp8_lists(
             R"("ignored_layers": ["lm_head"], )"
             R"("modules_to_not_convert": )"
             R"(["lm_head", "model.layers.1.self_attn.o_proj", "model.layers.1.mlp.down_proj"])")),
    llama_fp8_with_bf16_layer1()));
  EXPECT_EQ(messages(r, RuleId::config_invalid),
            Strings{"quantization_config: modules_to_not_convert is read by no engine: vLLM and "
                    "SGLang read ignored_layers, which is given and not empty"})
    << text(r);
  ASSERT_EQ(findings(r, RuleId::config_invalid).size(), 1u);
  const Finding f = findings(r, RuleId::config_invalid)[0];
  EXPECT_EQ(f.severity, Severity::warning);
  EXPECT_EQ(f.pointer, "/quantization_config/modules_to_not_convert");
  const auto undeclared = findings(r, RuleId::undeclared_unquantized);
  ASSERT_EQ(undeclared.size(), 1u) << text(r);
  EXPECT_EQ(undeclared[0].modules,
            (Strings{"model.layers.1.mlp.down_proj", "model.layers.1.self_attn.o_proj"}));
  EXPECT_EQ(engines(undeclared[0]), (std::set<Engine>{Engine::vllm, Engine::sglang}));
  EXPECT_EQ(undeclared[0].pointer, "/quantization_config/ignored_layers");
}

// An empty (or null) ignored_layers beside modules_to_not_convert: vLLM reads the second list,
// SGLang the empty first one, and quantizes layer 1 (neither engine quantizes lm_head for FP8).
TEST(RuleCases, QC009PositiveFp8EmptyListSGLangReads)
{
  for (const std::string empty : {"[]", "null"}) {
    const Report r = lint_folder(folder(
      config(
        k_llama,
        fp8_lists(
          R"("ignored_layers": )" + empty +
          R"(, "modules_to_not_convert": ["lm_head", "model.layers.1.self_attn.o_proj", "model.layers.1.mlp.down_proj"])")),
      llama_fp8_with_bf16_layer1()));
    EXPECT_EQ(messages(r, RuleId::config_invalid),
              Strings{fmt::format("quantization_config: ignored_layers is {}: SGLang reads it and "
                                  "excludes no module, vLLM falls back to modules_to_not_convert",
                                  empty == "null" ? "null" : "empty")})
      << text(r);
    ASSERT_EQ(findings(r, RuleId::config_invalid).size(), 1u);
    const Finding f = findings(r, RuleId::config_invalid)[0];
    EXPECT_EQ(f.severity, Severity::warning);
    EXPECT_EQ(f.pointer, "/quantization_config/ignored_layers");
    const auto undeclared = findings(r, RuleId::undeclared_unquantized);
    ASSERT_FALSE(undeclared.empty()) << text(r);
    Strings modules;
    for (const Finding& u : undeclared) {
      EXPECT_EQ(engines(u), std::set<Engine>{Engine::sglang}) << text(r);
      modules.insert(modules.end(), u.modules.begin(), u.modules.end());
    }
    std::sort(modules.begin(), modules.end());
    EXPECT_EQ(modules, (Strings{"model.layers.1.mlp.down_proj", "model.layers.1.self_attn.o_proj"}))
      << text(r);
    EXPECT_NE(text(r).find("SGLang reads ignored_layers, which is empty, and never "
                           "modules_to_not_convert"),
              std::string::npos)
      << text(r);
    // fix appends to the list vLLM reads, which SGLang still ignores: its re-lint refuses it.
    MemoryFileSystem fs =
      folder(config(k_llama, fp8_lists(R"("ignored_layers": )" + empty +
                                       R"(, "modules_to_not_convert": ["lm_head"])")),
             llama_fp8_with_bf16_layer1());
    auto run = lint_path(fs, "m", {});
    ASSERT_TRUE(run);
    const FixPlan plan = plan_fix(fs, *run, {});
    ASSERT_EQ(plan.refused.size(), 1u) << fmt::format("{}", fmt::join(plan.refused, "\n"));
    EXPECT_TRUE(plan.refused[0].starts_with("still undeclared after the patch: model.layers.1: "))
      << plan.refused[0];
    EXPECT_NE(plan.refused[0].find("; SGLang fails with"), std::string::npos) << plan.refused[0];
  }
}

// Both lists empty (or the second null): both engines exclude nothing, and fix appends to
// ignored_layers, which both then read: the patched folder lints clean. Values Python reads as
// false ({}, 0.0) are empty too: vLLM falls back, SGLang reads them.
TEST(RuleCases, Fp8BothListsEmptyFixWritesIgnoredLayers)
{
  for (const std::string second : {"[]", "null"}) {
    MemoryFileSystem fs = folder(
      config(k_llama, fp8_lists(R"("ignored_layers": [], "modules_to_not_convert": )" + second)),
      llama_fp8_with_bf16_layer1());
    auto run = lint_path(fs, "m", {});
    ASSERT_TRUE(run);
    const auto found = findings(run->report, RuleId::undeclared_unquantized);
    ASSERT_EQ(found.size(), 1u) << text(run->report);
    EXPECT_EQ(engines(found[0]), (std::set<Engine>{Engine::vllm, Engine::sglang}));
    EXPECT_EQ(found[0].pointer, "/quantization_config/ignored_layers");
    EXPECT_TRUE(findings(run->report, RuleId::config_invalid).empty()) << text(run->report);
    const FixPlan plan = plan_fix(fs, *run, {});
    EXPECT_TRUE(plan.refused.empty()) << fmt::format("{}", fmt::join(plan.refused, "\n"));
    ASSERT_EQ(plan.edits.size(), 1u);
    EXPECT_EQ(plan.edits[0].added,
              (Strings{"ignored_layers += \"model.layers.1.mlp.down_proj\"",
                       "ignored_layers += \"model.layers.1.self_attn.o_proj\""}));
    const Report after = lint_patched(fs, plan);
    EXPECT_TRUE(after.findings.empty()) << text(after);
  }
  for (const std::string falsy : {"{}", "0.0", "0", "\"\"", "false"}) {
    const Report r = lint_folder(
      folder(config(k_llama,
                    fp8_lists(R"("ignored_layers": )" + falsy +
                              R"(, "modules_to_not_convert": ["model.layers.1.self_attn.o_proj", )"
                              R"("model.layers.1.mlp.down_proj"])")),
             llama_fp8_with_bf16_layer1()));
    const auto found = findings(r, RuleId::undeclared_unquantized);
    ASSERT_EQ(found.size(), 1u) << falsy << "\n" << text(r);
    EXPECT_EQ(engines(found[0]), std::set<Engine>{Engine::sglang}) << falsy;
  }
}

// SGLang alone fails and every entry it would need is listed already, in the list vLLM reads:
// the fix line says what to do, explain says SGLang reads none of the entries, and fix refuses
// (it used to print "nothing to fix" and exit 0 with the error left).
TEST(RuleCases, Fp8EmptyIgnoredLayersNoPatchHelps)
{
  MemoryFileSystem fs = folder(
    config(k_llama,
           fp8_lists(R"("ignored_layers": [], "modules_to_not_convert": ["lm_head", )"
                     R"("model.layers.1.self_attn.o_proj", "model.layers.1.mlp.down_proj"])")),
    llama_fp8_with_bf16_layer1());
  auto run = lint_path(fs, "m", {});
  ASSERT_TRUE(run);
  const auto found = findings(run->report, RuleId::undeclared_unquantized);
  ASSERT_EQ(found.size(), 1u) << text(run->report);
  EXPECT_EQ(engines(found[0]), std::set<Engine>{Engine::sglang});
  EXPECT_EQ(found[0].fix, "SGLang reads the empty ignored_layers: move modules_to_not_convert's "
                          "entries there, or remove it");
  const std::string entries = explain_entries(*run, {Engine::vllm, Engine::sglang});
  EXPECT_NE(entries.find("  'model.layers.1.mlp.down_proj'\n    vLLM: 1 layer: "
                         "model.layers.1.mlp.down_proj\n    SGLang: nothing: it reads "
                         "ignored_layers, which is empty\n"),
            std::string::npos)
    << entries;
  const FixPlan plan = plan_fix(fs, *run, {});
  EXPECT_TRUE(plan.edits.empty());
  ASSERT_EQ(plan.refused.size(), 1u);
  EXPECT_TRUE(plan.refused[0].starts_with(
    "the lists already hold every entry suggested, still undeclared: model.layers.1: "))
    << plan.refused[0];
}

// FBGEMM's FP8 config reads modules_to_not_convert alone, in both engines: an ignored_layers
// beside it changes nothing. Nor does a second list that holds only what the first holds.
TEST(RuleCases, Fp8ListsReadAloneAreNotReported)
{
  const std::string full =
    R"(["lm_head", "model.layers.1.self_attn.o_proj", "model.layers.1.mlp.down_proj"])";
  for (const std::string& block :
       {R"({"quant_method": "fbgemm_fp8", "activation_scale_ub": 1200.0, )"
        R"("ignored_layers": ["lm_head"], "modules_to_not_convert": )" +
          full + "}",
        R"({"quant_method": "fbgemm_fp8", "ignored_layers": [], "modules_to_not_convert": )" +
          full + "}",
        fp8_lists(R"("ignored_layers": )" + full + R"(, "modules_to_not_convert": )" + full),
        fp8_lists(R"("ignored_layers": )" + full +
                  R"(, "modules_to_not_convert": ["model.layers.1.mlp.down_proj"])")}) {
    const Report r = lint_folder(folder(config(k_llama, block), llama_fp8_with_bf16_layer1()));
    EXPECT_TRUE(r.findings.empty()) << block << "\n" << text(r);
  }
}

// One list, whichever key, or an empty ignored_layers with no second list: both engines read
// the same entries, and nothing is reported.
TEST(RuleCases, QC009NegativeFp8OneList)
{
  for (
    const std::string lists :
    {R"("ignored_layers": ["lm_head", "model.layers.1.self_attn.o_proj", "model.layers.1.mlp.down_proj"])",
     R"("modules_to_not_convert": ["lm_head", "model.layers.1.self_attn.o_proj", "model.layers.1.mlp.down_proj"])",
     R"("ignored_layers": ["lm_head", "model.layers.1.self_attn.o_proj", "model.layers.1.mlp.down_proj"], "modules_to_not_convert": [])",
     R"("ignored_layers": ["lm_head", "model.layers.1.self_attn.o_proj", "model.layers.1.mlp.down_proj"], "modules_to_not_convert": null)"}) {
    const Report r =
      lint_folder(folder(config(k_llama, fp8_lists(lists)), llama_fp8_with_bf16_layer1()));
    EXPECT_TRUE(r.findings.empty()) << lists << "\n" << text(r);
  }
  const Report r = lint_folder(folder(config(k_llama, fp8_lists(R"("ignored_layers": [])")),
                                      fp8("model.layers.0.mlp.down_proj")));
  EXPECT_TRUE(r.findings.empty()) << text(r);
}

// QC115: a look-behind (unsupported by qcheck's regex subset) in an ignore regex.
TEST(RuleCases, QC115Positive)
{
  const Report r = lint_folder(folder(
    config(k_qwen35_text, ct_w4a16({"lm_head", "re:(?<![a-z_])mtp\\\\..*"})), qwen35_ct_pack()));
  const Finding f =
    only(r, RuleId::unevaluable_entry,
         "cannot evaluate 're:(?<![a-z_])mtp\\..*' exactly (unsupported construct at "
         "offset 0: negative look-behind '(?<!'); modules it was meant to "
         "match are treated as unmatched");
  EXPECT_EQ(engines(f), (std::set<Engine>{Engine::vllm, Engine::sglang}));
  EXPECT_EQ(f.file, "config.json"); // at the entry, as a GitHub annotation or SARIF shows it
  EXPECT_EQ(f.pointer, "/quantization_config/ignore/1");
}

TEST(RuleCases, QC115Negative)
{
  const Report r = lint_folder(
    folder(config(k_qwen35_text, ct_w4a16({"lm_head", "re:mtp\\\\..*"})), qwen35_ct_pack()));
  EXPECT_TRUE(r.findings.empty()) << text(r);
}

// QC115: an entry longer than k_longest_entry is not evaluated, and says so where it is; no
// QC112 for it. In a ModelOpt list 5,000 '*' would be a glob matching every module: treated as
// matching nothing, it leaves layer 1 (stored BF16) declared quantized, in a short list and in a
// list long enough to be compiled (candidates, then the matcher).
TEST(RuleCases, QC115PositiveEntryLongerThanTheLimit)
{
  const std::string stars(5000, '*');
  Strings entries{"lm_head", stars};
  for (const size_t padding : {0, 20}) {
    for (size_t i = 0; i < padding; ++i) {
      entries.push_back(fmt::format("model.layers.{}.mlp.down_proj", i + 5));
    }
    const Report r = lint_folder(
      folder(config(k_llama, modelopt("NVFP4", entries)), llama_nvfp4_with_bf16_layer1()));
    const Finding f = only(
      r, RuleId::unevaluable_entry,
      "ignore entry 1 is 5000 bytes long ('" + stars.substr(0, 40) +
        "...'); qcheck evaluates entries of up to 4096 bytes and treats it as matching nothing");
    EXPECT_EQ(f.file, "config.json");
    EXPECT_EQ(f.pointer, "/quantization_config/ignore/1");
    const auto undeclared = findings(r, RuleId::undeclared_unquantized);
    ASSERT_EQ(undeclared.size(), 1u) << padding << text(r);
    EXPECT_EQ(engines(undeclared[0]),
              (std::set<Engine>{Engine::vllm, Engine::sglang, Engine::trtllm}))
      << padding;
  }
  const Report r =
    lint_folder(folder(config(k_qwen35_text, ct_w4a16({"lm_head", stars})), qwen35_ct_pack()));
  EXPECT_EQ(findings(r, RuleId::unevaluable_entry).size(), 1u) << text(r);
  EXPECT_TRUE(findings(r, RuleId::unused_entry).empty()) << text(r);
  // The quote stops before a UTF-8 sequence it would cut ('\xC3\xA9' straddles byte 40).
  std::string accents(39, 'a');
  for (int i = 0; i < 3000; ++i) {
    accents += "\xC3\xA9";
  }
  const Report utf8 =
    lint_folder(folder(config(k_qwen35_text, ct_w4a16({"lm_head", accents})), qwen35_ct_pack()));
  only(utf8, RuleId::unevaluable_entry,
       "ignore entry 1 is 6039 bytes long ('" + std::string(39, 'a') +
         "...'); qcheck evaluates entries of up to 4096 bytes and treats it as matching nothing");
}

// QC115 is identified by the entry's text, not its index: removing an earlier entry (fix
// --remove-excluding) moves the bad regex up a place without making it a new error.
TEST(RuleCases, QC115StaysTheSameErrorWhenAnEarlierEntryIsRemoved)
{
  MemoryFileSystem fs =
    folder(config(k_llama, ct_w4a16({"lm_head", "model.layers.0.mlp.down_proj", "re:(?<!x)foo"})),
           ct_pack("model.layers.0.self_attn.o_proj") + ct_pack("model.layers.0.mlp.down_proj") +
             bf16("lm_head"));
  auto run = lint_path(fs, "m", {});
  ASSERT_TRUE(run);
  const auto bad = findings(run->report, RuleId::unevaluable_entry);
  ASSERT_EQ(bad.size(), 1u) << text(run->report);
  EXPECT_EQ(bad[0].pointer, "/quantization_config/ignore/2");
  const FixPlan plan = plan_fix(fs, *run, LintOptions{}, FixOptions{true});
  EXPECT_TRUE(plan.refused.empty()) << fmt::format("{}", fmt::join(plan.refused, "\n"));
  ASSERT_EQ(plan.edits.size(), 1u);
  const Report after = lint_patched(fs, plan);
  const auto still = findings(after, RuleId::unevaluable_entry);
  ASSERT_EQ(still.size(), 1u) << text(after);
  EXPECT_EQ(still[0].pointer, "/quantization_config/ignore/1");
  EXPECT_EQ(fingerprint(still[0]), fingerprint(bad[0]));
  EXPECT_TRUE(findings(after, RuleId::excluded_but_quantized).empty()) << text(after);
}

// A target's regex that qcheck cannot evaluate: QC115 at the group's targets, not at the ignore
// list; and fix may add the missing ignore list beside it (the finding does not move with it).
TEST(RuleCases, QC115AtTheTargetsOfItsGroup)
{
  const std::string quantization =
    R"({"quant_method": "compressed-tensors", "format": "pack-quantized", "config_groups": {)"
    R"("group_0": {"targets": ["re:.*(?<!x)gate_proj"], "weights": {"num_bits": 4, )"
    R"("type": "int", "symmetric": true, "strategy": "group", "group_size": 32}}, )"
    R"("group_1": {"targets": ["Linear"], "weights": {"num_bits": 4, "type": "int", )"
    R"("symmetric": true, "strategy": "group", "group_size": 32}}}})";
  MemoryFileSystem fs =
    folder(config(k_llama, quantization), ct_pack("model.layers.0.self_attn.o_proj") +
                                            bf16("model.layers.0.mlp.down_proj") + bf16("lm_head"));
  auto run = lint_path(fs, "m", {});
  ASSERT_TRUE(run);
  const auto bad = findings(run->report, RuleId::unevaluable_entry);
  ASSERT_EQ(bad.size(), 1u) << text(run->report);
  EXPECT_TRUE(bad[0].message.starts_with(
    "cannot evaluate target of config group group_0 're:.*(?<!x)gate_proj' exactly ("))
    << bad[0].message;
  EXPECT_EQ(bad[0].file, "config.json");
  EXPECT_EQ(bad[0].pointer, "/quantization_config/config_groups/group_0/targets");
  const FixPlan plan = plan_fix(fs, *run, LintOptions{}, FixOptions{});
  EXPECT_TRUE(plan.refused.empty()) << fmt::format("{}", fmt::join(plan.refused, "\n"));
  ASSERT_EQ(plan.edits.size(), 1u);
  const Report after = lint_patched(fs, plan);
  EXPECT_TRUE(findings(after, RuleId::undeclared_unquantized).empty()) << text(after);
  ASSERT_EQ(findings(after, RuleId::unevaluable_entry).size(), 1u) << text(after);
}

// Two bad target regexes in groups whose names and texts would spell one subject if joined
// with ':' ("x:re:(" + "re:(" and "x" + "re:(:re:("): two identities (a baseline accepting one
// must not hide the other).
TEST(RuleCases, QC115TargetsOfTwoGroupsAreTwoFindings)
{
  const std::string weights =
    R"("weights": {"num_bits": 4, "type": "int", "symmetric": true, "strategy": "group", )"
    R"("group_size": 32})";
  const std::string quantization =
    R"({"quant_method": "compressed-tensors", "format": "pack-quantized", "config_groups": {)"
    R"("x:re:(": {"targets": ["re:("], )" +
    weights + R"(}, "x": {"targets": ["re:(:re:(", "Linear"], )" + weights +
    R"(}}, "ignore": ["lm_head"]})";
  const Report r = lint_folder(folder(
    config(k_llama, quantization), ct_pack("model.layers.0.self_attn.o_proj") + bf16("lm_head")));
  const auto bad = findings(r, RuleId::unevaluable_entry);
  ASSERT_EQ(bad.size(), 2u) << text(r);
  EXPECT_NE(fingerprint(bad[0]), fingerprint(bad[1]));
}

// An entry of exactly k_longest_entry bytes is evaluated: it matches nothing here (QC112).
TEST(RuleCases, QC115NegativeEntryAtTheLimit)
{
  const std::string long_entry(k_longest_entry, 'x');
  const Report r = lint_folder(folder(
    config(k_qwen35_text, ct_w4a16({"lm_head", "re:mtp\\\\..*", long_entry})), qwen35_ct_pack()));
  EXPECT_TRUE(findings(r, RuleId::unevaluable_entry).empty()) << text(r);
  EXPECT_EQ(findings(r, RuleId::unused_entry).size(), 1u) << text(r);
  EXPECT_TRUE(findings(r, RuleId::undeclared_unquantized).empty()) << text(r);
}

// QC115 says qcheck "refuses to guess" about an entry it cannot evaluate; declaring the same
// entry dead (QC112) is a guess, and a wrong one: Python's re.match of this look-behind at
// position 0 matches 'mtp.fc'.
TEST(RuleCases, QC112NegativeUnevaluableEntry)
{
  const Report r = lint_folder(folder(
    config(k_qwen35_text, ct_w4a16({"lm_head", "re:(?<![a-z_])mtp\\\\..*"})), qwen35_ct_pack()));
  EXPECT_EQ(findings(r, RuleId::unevaluable_entry).size(), 1u) << text(r);
  EXPECT_TRUE(findings(r, RuleId::unused_entry).empty()) << text(r);
}

// QC116 (R23, R25): GPTQ without modules_in_block_to_quantize.
TEST(RuleCases, QC116Positive)
{
  const Report r = lint_folder(folder(config(k_llama, gptq_config()),
                                      gptq("model.layers.0.self_attn.o_proj") +
                                        gptq("model.layers.0.mlp.down_proj") + bf16("lm_head")));
  const Finding f = only(r, RuleId::inferred_exclusions,
                         "no explicit module list: vLLM infers which Linear layers are quantized "
                         "from the stored dtypes");
  EXPECT_EQ(f.file, "config.json");
  EXPECT_EQ(f.pointer, "/quantization_config");
}

TEST(RuleCases, QC116Negative)
{
  const Report r = lint_folder(folder(config(k_llama, gptq_config(k_gptq_listed)),
                                      gptq("model.layers.0.self_attn.o_proj") +
                                        gptq("model.layers.0.mlp.down_proj") + bf16("lm_head")));
  EXPECT_TRUE(r.findings.empty()) << text(r);
}

// SGLang's GPTQ configs read `dynamic` alone (get_linear_quant_method): a BF16 Linear that vLLM
// leaves unquantized, by its dtypes or because modules_in_block_to_quantize does not name it,
// is built GPTQ there unless a '-:' key matches its name. The suggested key is a layer's own
// (o_proj stays quantized beside the BF16 gate_up_proj), and with it the folder is clean.
TEST(RuleCases, GptqSglangReadsDynamicAlone)
{
  const std::string l = "model.layers.0.";
  const Tensors tensors = gptq(l + "self_attn.o_proj") + gptq(l + "mlp.down_proj") +
                          bf16(l + "mlp.gate_proj") + bf16(l + "mlp.up_proj") + bf16("lm_head");
  for (const std::string& extra : {std::string(), k_gptq_listed}) {
    const Report r = lint_folder(folder(config(k_llama, gptq_config(extra)), tensors));
    const auto undeclared = findings(r, RuleId::undeclared_unquantized);
    ASSERT_EQ(undeclared.size(), 1u) << text(r);
    EXPECT_EQ(engines(undeclared[0]), std::set<Engine>{Engine::sglang}) << text(r);
    EXPECT_EQ(undeclared[0].modules, (Strings{l + "mlp.gate_proj", l + "mlp.up_proj"}));
    EXPECT_EQ(undeclared[0].suggested_entries,
              Strings{"-:model\\.layers\\.0\\.mlp\\.gate_up_proj$"});
  }
  const Report keyed = lint_folder(folder(
    config(k_llama,
           gptq_config(k_gptq_listed +
                       R"(, "dynamic": {"-:model\\.layers\\.0\\.mlp\\.gate_up_proj$": {}})")),
    tensors));
  EXPECT_TRUE(keyed.findings.empty()) << text(keyed);
}

// "lm_head": true: SGLang builds the head GPTQ too (ParallelLMHead); its key names the module
// itself, "-:lm_head$" ("lm_head\..*" would not match "lm_head"), and fix's patch lints clean.
TEST(RuleCases, GptqSglangLmHeadKeyNamesTheModule)
{
  const std::string l = "model.layers.0.";
  MemoryFileSystem fs =
    folder(config(k_llama, R"({"quant_method": "gptq", "bits": 4, "group_size": 64, )"
                           R"("desc_act": false, "sym": true, "lm_head": true})"),
           gptq(l + "self_attn.o_proj") + gptq(l + "mlp.down_proj") + bf16("lm_head"));
  auto run = lint_path(fs, "m", {});
  ASSERT_TRUE(run);
  const auto undeclared = findings(run->report, RuleId::undeclared_unquantized);
  ASSERT_EQ(undeclared.size(), 1u) << text(run->report);
  EXPECT_EQ(undeclared[0].suggested_entries, Strings{"-:lm_head$"});
  const FixPlan plan = plan_fix(fs, *run, {});
  EXPECT_TRUE(plan.refused.empty()) << fmt::format("{}", fmt::join(plan.refused, "\n"));
  ASSERT_EQ(plan.edits.size(), 1u);
  EXPECT_TRUE(findings(lint_patched(fs, plan), RuleId::undeclared_unquantized).empty());
}

// A GPTQ layer 0 (named from `l`) whose MLP's gate and up projections are stored BF16.
Tensors
gptq_layer0_bf16_gate_up(const std::string& l = "model.layers.0.")
{
  return gptq(l + "self_attn.o_proj") + gptq(l + "mlp.down_proj") + bf16(l + "mlp.gate_proj") +
         bf16(l + "mlp.up_proj") + bf16("lm_head");
}

// A positive key matching first decides SGLang (quantized), and a '-:' key appended after it
// is never read: the key is suggested to go before it (entries_first). vLLM takes the key's
// settings only and leaves the BF16 layers unquantized by their dtypes: no finding for vLLM.
TEST(RuleCases, GptqPositiveKeyFirstHidesAnAppendedKey)
{
  const Report r = lint_folder(
    folder(config(k_llama, gptq_config(R"(, "dynamic": {"+:.*\\.mlp\\..*": {"bits": 8}})")),
           gptq_layer0_bf16_gate_up()));
  const auto undeclared = findings(r, RuleId::undeclared_unquantized);
  ASSERT_EQ(undeclared.size(), 1u) << text(r);
  EXPECT_EQ(engines(undeclared[0]), std::set<Engine>{Engine::sglang});
  EXPECT_EQ(undeclared[0].suggested_entries, Strings{"-:model\\.layers\\.0\\.mlp\\.gate_up_proj$"});
  EXPECT_TRUE(undeclared[0].entries_first);
  EXPECT_EQ(
    undeclared[0].fix,
    "put \"-:model\\\\.layers\\\\.0\\\\.mlp\\\\.gate_up_proj$\" at the start of config.json "
    "dynamic (qcheck fix --inplace); SGLang reads dynamic keys in order and "
    "'+:.*\\.mlp\\..*' matches first: a key after it is never read");
}

// fix puts such keys before the object's keys, and the patch lints clean.
TEST(RuleCases, FixPutsAKeyBeforeThePositiveKeyThatHidesIt)
{
  MemoryFileSystem fs =
    folder(config(k_llama, gptq_config(R"(, "dynamic": {"+:.*\\.mlp\\..*": {"bits": 8}})")),
           gptq_layer0_bf16_gate_up());
  auto run = lint_path(fs, "m", {});
  ASSERT_TRUE(run);
  const FixPlan plan = plan_fix(fs, *run, LintOptions{}, FixOptions{});
  EXPECT_TRUE(plan.refused.empty()) << fmt::format("{}", fmt::join(plan.refused, "\n"));
  ASSERT_EQ(plan.edits.size(), 1u);
  const std::string& patched = plan.edits[0].patched;
  const size_t added = patched.find(R"("-:model\\.layers\\.0\\.mlp\\.gate_up_proj$": {})");
  ASSERT_NE(added, std::string::npos) << patched;
  EXPECT_LT(added, patched.find(R"("+:.*\\.mlp\\..*")")) << patched;
  const Report after = lint_patched(fs, plan);
  EXPECT_FALSE(after.has_at_least(Severity::warning)) << text(after); // QC116 (info) stays
  // The key written after the positive key already: moved before it.
  MemoryFileSystem behind =
    folder(config(k_llama, gptq_config(R"(, "dynamic": {"+:.*\\.mlp\\..*": {"bits": 8}, )"
                                       R"("-:model\\.layers\\.0\\.mlp\\.gate_up_proj$": {}})")),
           gptq_layer0_bf16_gate_up());
  auto late = lint_path(behind, "m", {});
  ASSERT_TRUE(late);
  const FixPlan moving = plan_fix(behind, *late, LintOptions{}, FixOptions{});
  EXPECT_TRUE(moving.refused.empty()) << fmt::format("{}", fmt::join(moving.refused, "\n"));
  ASSERT_EQ(moving.edits.size(), 1u);
  EXPECT_NE(moving.edits[0].patched.find(R"({"-:model\\.layers\\.0\\.mlp\\.gate_up_proj$": {}, )"
                                         R"("+:.*\\.mlp\\..*": {"bits": 8}})"),
            std::string::npos)
    << moving.edits[0].patched;
  EXPECT_EQ(moving.edits[0].added,
            Strings{R"(dynamic: "-:model\\.layers\\.0\\.mlp\\.gate_up_proj$" moved first)"});
  EXPECT_EQ(plan.edits[0].added,
            Strings{R"(dynamic += "-:model\\.layers\\.0\\.mlp\\.gate_up_proj$": {} (first))"});
  EXPECT_FALSE(lint_patched(behind, moving).has_at_least(Severity::warning))
    << text(lint_patched(behind, moving));
}

// QC112 for dynamic keys: both engines match a fused layer by its own name, so a key for one of
// its shards is dead ("gate_proj$"), and one its fused name also ends with is not ("up_proj$":
// gate_up_proj).
TEST(RuleCases, GptqDeadKeyForAShard)
{
  const Report shards = lint_folder(folder(
    config(k_llama, gptq_config(R"(, "dynamic": {"-:.*gate_proj$": {}, "-:.*up_proj$": {}})")),
    gptq_layer0_bf16_gate_up()));
  const auto dead = findings(shards, RuleId::unused_entry);
  ASSERT_EQ(dead.size(), 1u) << text(shards);
  EXPECT_TRUE(dead[0].message.starts_with("dynamic key '-:.*gate_proj$' matches no layer"))
    << dead[0].message;
  EXPECT_TRUE(findings(shards, RuleId::undeclared_unquantized).empty()) << text(shards);
}

// config.json and hf_quant_config.json differ (QC106): only the latter lists one shard of a
// fused layer stored FP8 (QC103 for TensorRT-LLM, which reads it). fix --remove-excluding takes
// the entry out and does not copy it back into config.json while making the lists equal; the
// patch lints clean.
TEST(RuleCases, RemoveExcludingIsNotUndoneByTheListSync)
{
  const Tensors tensors = llama_fp8_layer0();
  MemoryFileSystem fs = folder(config(k_llama, modelopt("FP8", {"lm_head"})), tensors);
  fs.add_file("m/hf_quant_config.json",
              hf_quant_config("FP8", {"lm_head", "model.layers.0.self_attn.q_proj"}));
  auto run = lint_path(fs, "m", {});
  ASSERT_TRUE(run);
  ASSERT_EQ(findings(run->report, RuleId::fused_shards_disagree).size(), 1u) << text(run->report);
  const FixPlan plan = plan_fix(fs, *run, LintOptions{}, FixOptions{true});
  EXPECT_TRUE(plan.refused.empty()) << fmt::format("{}", fmt::join(plan.refused, "\n"));
  ASSERT_EQ(plan.edits.size(), 1u);
  EXPECT_EQ(plan.edits[0].file, "hf_quant_config.json");
  EXPECT_TRUE(lint_patched(fs, plan).findings.empty()) << text(lint_patched(fs, plan));
}

// vLLM's is_layer_gptq_quantized checks a fused layer's shards each against
// modules_in_block_to_quantize and refuses them apart ("Detected some but not all shards"):
// QC103 for vLLM when the list names q_proj but not k_proj and v_proj.
TEST(RuleCases, QC103GptqModulesInBlockNameSomeShards)
{
  const std::string a = "model.layers.0.self_attn.";
  const Report r = lint_folder(folder(
    config(k_llama,
           gptq_config(
             R"(, "modules_in_block_to_quantize": [["self_attn.q_proj", "self_attn.o_proj"]])")),
    gptq(a + "q_proj") + gptq(a + "k_proj") + gptq(a + "v_proj") + gptq(a + "o_proj") +
      bf16("lm_head")));
  const Finding f = only(r, RuleId::fused_shards_disagree,
                         "the shards of fused layer 'model.layers.0.self_attn.qkv_proj' are not "
                         "listed alike; vLLM stops with `Detected some but not all shards of "
                         "model.layers.0.self_attn.qkv_proj are quantized`");
  EXPECT_EQ(f.fix, "name every shard of the fused layer in modules_in_block_to_quantize, or none");
  EXPECT_EQ(f.details, (Strings{"vLLM: modules_in_block_to_quantize names "
                                "model.layers.0.self_attn.q_proj, not "
                                "model.layers.0.self_attn.k_proj, model.layers.0.self_attn.v_proj "
                                "(model.layers.0.self_attn.qkv_proj)"}));
}

// QC116 (R25): AWQ with an empty modules_to_not_convert.
TEST(RuleCases, QC116PositiveAwq)
{
  const std::string m = "model.layers.0.mlp.down_proj";
  const Report r =
    lint_folder(folder(config(k_llama, R"({"quant_method": "awq", "bits": 4, "group_size": 64, )"
                                       R"("zero_point": true, "version": "gemm", )"
                                       R"("modules_to_not_convert": []})"),
                       awq(m) + bf16("lm_head")));
  only(r, RuleId::inferred_exclusions,
       "no explicit module list: vLLM infers which Linear layers are quantized from the stored "
       "dtypes");
}

// vLLM infers an empty AWQ list from the dtypes; SGLang infers nothing and quantizes a float
// layer it cannot load (QC101 for SGLang alone); fix names it, and vLLM, now reading the list,
// agrees.
TEST(RuleCases, QC101AwqEmptyListFailsInSglang)
{
  const std::string m = "model.layers.0.mlp.down_proj";
  MemoryFileSystem fs =
    folder(config(k_llama, R"({"quant_method": "awq", "bits": 4, "group_size": 64, )"
                           R"("zero_point": true, "version": "gemm", )"
                           R"("modules_to_not_convert": []})"),
           awq(m) + bf16("model.layers.1.mlp.down_proj") + bf16("lm_head"));
  auto run = lint_path(fs, "m", {});
  ASSERT_TRUE(run);
  const auto found = findings(run->report, RuleId::undeclared_unquantized);
  ASSERT_EQ(found.size(), 1u) << text(run->report);
  EXPECT_EQ(engines(found[0]), std::set<Engine>{Engine::sglang});
  EXPECT_EQ(found[0].suggested_entries, Strings{"model.layers.1."});
  const FixPlan plan = plan_fix(fs, *run, {});
  EXPECT_TRUE(plan.refused.empty()) << fmt::format("{}", fmt::join(plan.refused, "\n"));
  EXPECT_EQ(plan.edits.size(), 1u);
}

// A fused layer SGLang's AWQ loader (and bitsandbytes in both engines) compares by its own name
// alone: its modules' names, even all listed, leave it quantized there. fix adds the fused name
// and the patched folder lints clean; explain --entries says the modules' entries reach no
// layer in those engines.
TEST(RuleCases, QC101FusedLayerComparedByNameAloneIsNamedByFix)
{
  const std::string m = "model.layers.0.mlp.down_proj";
  const Tensors stored = awq(m) + bf16("model.layers.1.mlp.gate_proj") +
                         bf16("model.layers.1.mlp.up_proj") + bf16("lm_head");
  MemoryFileSystem fs =
    folder(config(k_llama, R"({"quant_method": "awq", "bits": 4, "group_size": 64, )"
                           R"("zero_point": true, "version": "gemm", "modules_to_not_convert": )"
                           R"(["model.layers.1.mlp.gate_proj", "model.layers.1.mlp.up_proj"]})"),
           stored);
  auto run = lint_path(fs, "m", {});
  ASSERT_TRUE(run);
  const auto found = findings(run->report, RuleId::undeclared_unquantized);
  ASSERT_EQ(found.size(), 1u) << text(run->report);
  EXPECT_EQ(engines(found[0]), std::set<Engine>{Engine::sglang});
  // The layer is unquantized whole: its root as a substring reaches the fused name too.
  EXPECT_EQ(found[0].suggested_entries, Strings{"model.layers.1."});
  const auto entries = explain_entries(*run, {Engine::vllm, Engine::sglang});
  EXPECT_NE(entries.find("  'model.layers.1.mlp.gate_proj'\n    vLLM: 1 layer: "
                         "model.layers.1.mlp.gate_up_proj\n    SGLang: nothing"),
            std::string::npos)
    << entries;
  const FixPlan plan = plan_fix(fs, *run, {});
  EXPECT_TRUE(plan.refused.empty()) << fmt::format("{}", fmt::join(plan.refused, "\n"));
  ASSERT_EQ(plan.edits.size(), 1u);
  const Report after = lint_patched(fs, plan);
  EXPECT_TRUE(findings(after, RuleId::undeclared_unquantized).empty()) << text(after);
}

// A layer unquantized whole is one AWQ entry, its root ending at the dot: "model.layers.1."
// reaches layer 1's modules, not layer 12's (quantized), and the patched folder lints clean.
// A vision tower is one entry too; a root that is a module itself is named as it is.
TEST(RuleCases, QC101AwqWholeLayerIsOneEntry)
{
  const std::string model = R"("architectures": ["LlamaForCausalLM"], "model_type": "llama", )"
                            R"("num_hidden_layers": 13)";
  const std::string block = R"({"quant_method": "awq", "bits": 4, "group_size": 64, )"
                            R"("zero_point": true, "version": "gemm", )"
                            R"("modules_to_not_convert": ["lm_head"]})";
  Tensors stored = awq("model.layers.0.mlp.down_proj") + awq("model.layers.12.mlp.down_proj") +
                   awq("model.layers.12.self_attn.o_proj") + bf16("lm_head");
  for (const char* m : {"mlp.down_proj", "mlp.gate_proj", "mlp.up_proj", "self_attn.o_proj"}) {
    stored = stored + bf16(fmt::format("model.layers.1.{}", m));
  }
  MemoryFileSystem fs = folder(config(model, block), stored);
  auto run = lint_path(fs, "m", {});
  ASSERT_TRUE(run);
  const auto found = findings(run->report, RuleId::undeclared_unquantized);
  ASSERT_EQ(found.size(), 1u) << text(run->report);
  EXPECT_EQ(found[0].modules.size(), 4u);
  EXPECT_EQ(found[0].suggested_entries, Strings{"model.layers.1."});
  const FixPlan plan = plan_fix(fs, *run, {});
  EXPECT_TRUE(plan.refused.empty()) << fmt::format("{}", fmt::join(plan.refused, "\n"));
  ASSERT_EQ(plan.edits.size(), 1u);
  const Report after = lint_patched(fs, plan);
  EXPECT_TRUE(after.findings.empty()) << text(after);

  // A vision tower stored unquantized is "visual.", not each of its modules; a top-level module
  // is its own name.
  for (const auto& [extra, expected] :
       {std::pair{bf16("visual.blocks.0.attn.proj") + bf16("visual.blocks.0.mlp.fc1") +
                    bf16("visual.merger.mlp.0"),
                  Strings{"visual."}},
        std::pair{bf16("mm_projector"), Strings{"mm_projector"}}}) {
    const Report r = lint_folder(
      folder(config(model, block), awq("model.layers.0.mlp.down_proj") + extra + bf16("lm_head")));
    const auto root_found = findings(r, RuleId::undeclared_unquantized);
    ASSERT_EQ(root_found.size(), 1u) << text(r);
    EXPECT_EQ(root_found[0].suggested_entries, expected) << text(r);
  }
}

// The root's substring must reach no quantized module elsewhere: in Mistral's native layout,
// "layers.1." is inside the quantized "vision_encoder.transformer.layers.1.*", so the float
// modules are named one by one and fix still lints clean. Of two spellings of a draft's root,
// one inside the other ("model.layers.1." inside "model.language_model.layers.1."), the inner
// one alone is offered.
TEST(RuleCases, QC101AwqRootEntryReachesNoQuantizedModule)
{
  const std::string block = R"({"quant_method": "awq", "bits": 4, "group_size": 64, )"
                            R"("zero_point": true, "version": "gemm", )"
                            R"("modules_to_not_convert": ["lm_head"]})";
  const std::string mistral = R"("architectures": ["LlamaForCausalLM"], "model_type": "llama", )"
                              R"("num_hidden_layers": 2)";
  MemoryFileSystem fs = folder(
    config(mistral, block),
    awq("layers.0.attention.wq") + bf16("layers.1.attention.wq") + bf16("layers.1.attention.wo") +
      bf16("layers.1.feed_forward.w2") + awq("vision_encoder.transformer.layers.1.attention.wk") +
      awq("vision_encoder.transformer.layers.1.feed_forward.w1") + bf16("lm_head"));
  auto run = lint_path(fs, "m", {});
  ASSERT_TRUE(run);
  const auto found = findings(run->report, RuleId::undeclared_unquantized);
  ASSERT_EQ(found.size(), 1u) << text(run->report);
  EXPECT_EQ(found[0].suggested_entries,
            (Strings{"layers.1.attention.wo", "layers.1.attention.wq", "layers.1.feed_forward.w2"}))
    << text(run->report);
  const FixPlan plan = plan_fix(fs, *run, {});
  EXPECT_TRUE(plan.refused.empty()) << fmt::format("{}", fmt::join(plan.refused, "\n"));

  const std::string glm = R"("architectures": ["Glm5NextForConditionalGeneration"], )"
                          R"("model_type": "glm5_next", "num_nextn_predict_layers": 1, )"
                          R"("text_config": {"model_type": "glm5_next_text", )"
                          R"("num_hidden_layers": 1})";
  const std::string l = "model.language_model.layers.";
  MemoryFileSystem draft =
    folder(config(glm, block), awq(l + "0.self_attn.o_proj") + awq(l + "0.mlp.down_proj") +
                                 bf16(l + "1.self_attn.o_proj") + bf16(l + "1.mlp.down_proj") +
                                 bf16(l + "1.eh_proj") + awq("model.visual.blocks.0.attn.proj") +
                                 bf16("lm_head"));
  auto draft_run = lint_path(draft, "m", {});
  ASSERT_TRUE(draft_run);
  const auto draft_found = findings(draft_run->report, RuleId::undeclared_unquantized);
  ASSERT_EQ(draft_found.size(), 1u) << text(draft_run->report);
  EXPECT_EQ(draft_found[0].suggested_entries, Strings{"model.layers.1."})
    << text(draft_run->report);
  const FixPlan draft_plan = plan_fix(draft, *draft_run, {});
  EXPECT_TRUE(draft_plan.refused.empty()) << fmt::format("{}", fmt::join(draft_plan.refused, "\n"));
  ASSERT_EQ(draft_plan.edits.size(), 1u);
  const Report after = lint_patched(draft, draft_plan);
  EXPECT_TRUE(findings(after, RuleId::undeclared_unquantized).empty()) << text(after);
}

// AWQ's substring "mlp.gate" (meant for MoE routers) reaches a dense layer's gate_proj: vLLM
// excludes one shard of gate_up_proj (QC103), SGLang the fused layer stored quantized (QC102).
// fix --remove-excluding removes it, and the QC103 it settles is not left as "needs a human".
TEST(RuleCases, RemovingTheEntryThatSplitTheShardsSettlesQC103)
{
  const std::string mlp = "model.layers.0.mlp.";
  MemoryFileSystem fs = folder(
    config(k_llama, R"({"quant_method": "awq", "bits": 4, "group_size": 64, "zero_point": true, )"
                    R"("version": "gemm", "modules_to_not_convert": ["mlp.gate"]})"),
    awq(mlp + "gate_proj") + awq(mlp + "up_proj") + awq(mlp + "down_proj") + bf16("lm_head"));
  auto run = lint_path(fs, "m", {});
  ASSERT_TRUE(run);
  ASSERT_EQ(findings(run->report, RuleId::fused_shards_disagree).size(), 1u) << text(run->report);
  ASSERT_FALSE(findings(run->report, RuleId::excluded_but_quantized).empty()) << text(run->report);
  const FixPlan plan = plan_fix(fs, *run, LintOptions{}, FixOptions{true});
  EXPECT_TRUE(plan.refused.empty()) << fmt::format("{}", fmt::join(plan.refused, "\n"));
  ASSERT_EQ(plan.edits.size(), 1u);
  EXPECT_TRUE(plan.remaining.empty()) << fmt::format("{}", fmt::join(plan.remaining, "\n"));
}

namespace {

std::string
mixed_precision(const std::string& down_proj_algo)
{
  return R"({"quant_method": "modelopt", "quant_algo": "MIXED_PRECISION", )"
         R"("kv_cache_scheme": null, "ignore": ["lm_head"], "quantized_layers": {)"
         R"("model.layers.0.self_attn.o_proj": {"quant_algo": "NVFP4", "group_size": 16}, )"
         R"("model.layers.0.mlp.down_proj": {"quant_algo": ")" +
         down_proj_algo + R"("}}})";
}

} // namespace

// QC117 (R14): quantized_layers says FP8 for a module stored NVFP4.
TEST(RuleCases, QC117Positive)
{
  const Report r = lint_folder(folder(config(k_llama, mixed_precision("FP8")),
                                      nvfp4("model.layers.0.self_attn.o_proj") +
                                        nvfp4("model.layers.0.mlp.down_proj") + bf16("lm_head")));
  const Finding f = only(r, RuleId::mixed_precision_algo,
                         "quantized_layers gives 'model.layers.0.mlp.down_proj' quant_algo FP8 but "
                         "'model.layers.0.mlp.down_proj' is stored nvfp4");
  EXPECT_EQ(f.modules, Strings{"model.layers.0.mlp.down_proj"});
}

TEST(RuleCases, QC117Negative)
{
  const Report r = lint_folder(folder(config(k_llama, mixed_precision("NVFP4")),
                                      nvfp4("model.layers.0.self_attn.o_proj") +
                                        nvfp4("model.layers.0.mlp.down_proj") + bf16("lm_head")));
  EXPECT_TRUE(r.findings.empty()) << text(r);
}

// QC117 (spec 2.2.2): an empty quantized_layers is refused by vLLM.
TEST(RuleCases, QC117PositiveEmpty)
{
  const Report r = lint_folder(
    folder(config(k_llama, R"({"quant_method": "modelopt", "quant_algo": "MIXED_PRECISION", )"
                           R"("ignore": ["lm_head"], "quantized_layers": {}})"),
           nvfp4("model.layers.0.mlp.down_proj") + bf16("lm_head")));
  EXPECT_EQ(messages(r, RuleId::mixed_precision_algo),
            Strings{"MIXED_PRECISION needs a non-empty quantized_layers; vLLM refuses the "
                    "checkpoint"})
    << text(r);
}

// QC118 (R21): one projection stored FP8 in an NVFP4 checkpoint.
TEST(RuleCases, QC118Positive)
{
  const Report r = lint_folder(folder(config(k_llama, modelopt("NVFP4", {"lm_head"})),
                                      fp8("model.layers.0.self_attn.o_proj") +
                                        nvfp4("model.layers.0.mlp.down_proj") + bf16("lm_head")));
  const Finding f = only(r, RuleId::format_mismatch,
                         "1 module stored as fp8 but config.json declares modelopt NVFP4: "
                         "model.layers.0.self_attn.o_proj");
  EXPECT_EQ(f.modules, Strings{"model.layers.0.self_attn.o_proj"});
  EXPECT_EQ(f.file, "config.json");
}

TEST(RuleCases, QC118Negative)
{
  const Report r = lint_folder(folder(config(k_llama, modelopt("NVFP4", {"lm_head"})),
                                      nvfp4("model.layers.0.self_attn.o_proj") +
                                        nvfp4("model.layers.0.mlp.down_proj") + bf16("lm_head")));
  EXPECT_TRUE(r.findings.empty()) << text(r);
}

// llm-compressor's mixed precision: FP8 attention, W4A16 MLP, each group its own format.
std::string
ct_mixed(const std::string& first_targets, const std::string& second_targets)
{
  return R"({"quant_method": "compressed-tensors", "format": "mixed-precision", )"
         R"("config_groups": {"group_0": {"targets": )" +
         first_targets +
         R"(, "format": "float-quantized", "weights": {"num_bits": 8, "type": "float", )"
         R"("strategy": "channel"}, "input_activations": {"num_bits": 8, "type": "float", )"
         R"("dynamic": true}}, "group_1": {"targets": )" +
         second_targets +
         R"(, "format": "pack-quantized", "weights": {"num_bits": 4, "type": "int", )"
         R"("symmetric": true, "strategy": "group", "group_size": 32}}}, "ignore": ["lm_head"]})";
}

Tensors
ct_mixed_layer(bool swapped)
{
  const std::string l = "model.layers.0.";
  Tensors t = bf16("lm_head");
  for (const char* p : {"q_proj", "k_proj", "v_proj", "o_proj"}) {
    t = t + (swapped ? ct_pack(l + "self_attn." + p) : ct_fp8(l + "self_attn." + p));
  }
  for (const char* p : {"gate_proj", "up_proj", "down_proj"}) {
    t = t + (swapped ? ct_fp8(l + "mlp." + p) : ct_pack(l + "mlp." + p));
  }
  return t;
}

// QC118 (R21) with several config groups: each module is checked against the group whose
// targets give it its scheme (vLLM's find_matched_target), not against every group's format.
TEST(RuleCases, QC118PerConfigGroup)
{
  const std::string attn = R"(["re:.*self_attn.*"])", mlp = R"(["re:.*mlp.*"])";
  const Report ok =
    lint_folder(folder(config(k_llama, ct_mixed(attn, mlp)), ct_mixed_layer(false)));
  EXPECT_TRUE(ok.findings.empty()) << text(ok);
  const Report swapped =
    lint_folder(folder(config(k_llama, ct_mixed(attn, mlp)), ct_mixed_layer(true)));
  EXPECT_EQ(messages(swapped, RuleId::format_mismatch),
            (Strings{"3 modules stored as fp8 but config.json declares pack-quantized in group_1, "
                     "whose targets give them their scheme: model.layers.0.mlp.down_proj, "
                     "model.layers.0.mlp.gate_proj, model.layers.0.mlp.up_proj",
                     "4 modules stored as ct-pack but config.json declares float-quantized in "
                     "group_0, whose targets give them their scheme: "
                     "model.layers.0.self_attn.k_proj, model.layers.0.self_attn.o_proj, "
                     "model.layers.0.self_attn.q_proj, ..."}))
    << text(swapped);
  // A name target wins over a class target in an earlier group: the MLP's scheme is group_1's.
  const Report by_name =
    lint_folder(folder(config(k_llama, ct_mixed(R"(["Linear"])", mlp)), ct_mixed_layer(false)));
  EXPECT_TRUE(by_name.findings.empty()) << text(by_name);
  // The group is the one of vLLM's layer: a fused qkv_proj, which no exact q/k/v target names,
  // takes the class target ("Linear", group_0: FP8 here, as its shards are stored) before its
  // shards' names are tried; o_proj is named (group_1, W4A16: stored FP8), the MLP is Linear.
  const std::string l = "model.layers.0.self_attn.";
  const std::string by_shard =
    R"([")" + l + R"(q_proj", ")" + l + R"(k_proj", ")" + l + R"(v_proj", ")" + l + R"(o_proj"])";
  const Report fused = lint_folder(
    folder(config(k_llama, ct_mixed(R"(["Linear"])", by_shard)), ct_mixed_layer(false)));
  EXPECT_EQ(messages(fused, RuleId::format_mismatch),
            (Strings{"1 module stored as fp8 but config.json declares pack-quantized in group_1, "
                     "whose targets give them their scheme: model.layers.0.self_attn.o_proj",
                     "3 modules stored as ct-pack but config.json declares float-quantized in "
                     "group_0, whose targets give them their scheme: "
                     "model.layers.0.mlp.down_proj, model.layers.0.mlp.gate_proj, "
                     "model.layers.0.mlp.up_proj"}))
    << text(fused);
  // A "re:" target that merely holds "linear" is no class target: it must match the class name
  // (QKVParallelLinear...) as a regex; these layers fall through to group_1's "Linear".
  Tensors packed = bf16("lm_head");
  for (const char* p : {"self_attn.q_proj", "self_attn.k_proj", "self_attn.v_proj",
                        "self_attn.o_proj", "mlp.gate_proj", "mlp.up_proj", "mlp.down_proj"}) {
    packed = packed + ct_pack(std::string("model.layers.0.") + p);
  }
  const Report regex_text = lint_folder(
    folder(config(k_llama, ct_mixed(R"(["re:.*linear_attn.*"])", R"(["Linear"])")), packed));
  EXPECT_TRUE(regex_text.findings.empty()) << text(regex_text);
  const Report regex_class = lint_folder(
    folder(config(k_llama, ct_mixed(R"(["re:.*ParallelLinear$"])", R"(["Linear"])")), packed));
  EXPECT_EQ(findings(regex_class, RuleId::format_mismatch).size(), 1u) << text(regex_class);
  // A target two groups list takes the later group's scheme (a dict keyed by target).
  const Report twice =
    lint_folder(folder(config(k_llama, ct_mixed(attn, R"(["re:.*mlp.*", "re:.*self_attn.*"])")),
                       ct_mixed_layer(false)));
  EXPECT_EQ(messages(twice, RuleId::format_mismatch),
            (Strings{"4 modules stored as fp8 but config.json declares pack-quantized in group_1, "
                     "whose targets give them their scheme: model.layers.0.self_attn.k_proj, "
                     "model.layers.0.self_attn.o_proj, model.layers.0.self_attn.q_proj, ..."}))
    << text(twice);
}

// QC118 (R21): pack-quantized without weight_shape.
TEST(RuleCases, QC118PositivePackWithoutShape)
{
  const Report r =
    lint_folder(folder(config(k_llama, ct_w4a16({"lm_head"})),
                       ct_pack("model.layers.0.self_attn.o_proj") +
                         ct_pack("model.layers.0.mlp.down_proj", 64, 64, false) + bf16("lm_head")));
  only(r, RuleId::format_mismatch,
       "'model.layers.0.mlp.down_proj': pack-quantized needs weight_packed, weight_scale and "
       "weight_shape; weight_shape is missing");
}

TEST(RuleCases, QC118NegativePackWithShape)
{
  const Report r = lint_folder(folder(config(k_llama, ct_w4a16({"lm_head"})),
                                      ct_pack("model.layers.0.self_attn.o_proj") +
                                        ct_pack("model.layers.0.mlp.down_proj") + bf16("lm_head")));
  EXPECT_TRUE(r.findings.empty()) << text(r);
}

// QC119 (R36): GPTQ g_idx with 48 entries for a qweight that packs 64 input rows at 4 bits.
TEST(RuleCases, QC119Positive)
{
  const Report r =
    lint_folder(folder(config(k_llama, gptq_config(k_gptq_listed)),
                       gptq("model.layers.0.self_attn.o_proj") +
                         gptq("model.layers.0.mlp.down_proj", 64, 64, 48) + bf16("lm_head")));
  const Finding f = only(r, RuleId::packed_shape,
                         "'model.layers.0.mlp.down_proj': qweight [8, 64] cannot pack the 48 input "
                         "rows g_idx lists at 4 bits");
  EXPECT_EQ(f.modules, Strings{"model.layers.0.mlp.down_proj"});
}

// GPTQ at 3 bits (spec 4.5, pack = 32/bits; vLLM's gptq takes 2, 3, 4 and 8): 32 input rows fill
// three 32-bit words, so qweight holds in * 3 / 32 rows.
Tensors
gptq3(const std::string& module, uint64_t rows)
{
  return {{module + ".qweight", "I32", {rows, 64}},
          {module + ".qzeros", "I32", {2, 6}},
          {module + ".scales", "F16", {2, 64}},
          {module + ".g_idx", "I32", {128}}};
}

TEST(RuleCases, QC119NegativeThreeBits)
{
  const std::string three_bits = R"({"quant_method": "gptq", "bits": 3, "group_size": 64, )"
                                 R"("desc_act": false, "sym": true, "lm_head": false)" +
                                 k_gptq_listed + "}";
  const Report r = lint_folder(folder(
    config(k_llama, three_bits), gptq3("model.layers.0.self_attn.o_proj", 12) +
                                   gptq3("model.layers.0.mlp.down_proj", 12) + bf16("lm_head")));
  EXPECT_TRUE(findings(r, RuleId::packed_shape).empty()) << text(r);
  // 16 rows would be 4-bit packing, which the config does not declare.
  const Report wrong = lint_folder(folder(
    config(k_llama, three_bits), gptq3("model.layers.0.self_attn.o_proj", 12) +
                                   gptq3("model.layers.0.mlp.down_proj", 16) + bf16("lm_head")));
  only(wrong, RuleId::packed_shape,
       "'model.layers.0.mlp.down_proj': qweight [16, 64] cannot pack the 128 input rows g_idx "
       "lists at 3 bits");
  // With per-module overrides any of 2, 3, 4 and 8 bits is read from the shapes.
  const std::string dynamic = R"({"quant_method": "gptq", "bits": 4, "group_size": 64, )"
                              R"("desc_act": false, "sym": true, "lm_head": false, )"
                              R"("dynamic": {"+:.*down_proj": {"bits": 3}})" +
                              k_gptq_listed + "}";
  const Report mixed = lint_folder(folder(
    config(k_llama, dynamic), gptq("model.layers.0.self_attn.o_proj", 64, 128) +
                                gptq3("model.layers.0.mlp.down_proj", 12) + bf16("lm_head")));
  EXPECT_TRUE(findings(mixed, RuleId::packed_shape).empty()) << text(mixed);
  const Report odd = lint_folder(folder(
    config(k_llama, dynamic), gptq("model.layers.0.self_attn.o_proj", 64, 128) +
                                gptq3("model.layers.0.mlp.down_proj", 13) + bf16("lm_head")));
  only(odd, RuleId::packed_shape,
       "'model.layers.0.mlp.down_proj': qweight [13, 64] cannot pack the 128 input rows g_idx "
       "lists at 2, 3, 4 or 8 bits");
}

TEST(RuleCases, QC119Negative)
{
  const Report r = lint_folder(folder(config(k_llama, gptq_config(k_gptq_listed)),
                                      gptq("model.layers.0.self_attn.o_proj") +
                                        gptq("model.layers.0.mlp.down_proj") + bf16("lm_head")));
  EXPECT_TRUE(r.findings.empty()) << text(r);
}

// Registry QC119 / R36: "GPTQ qweight [in/8, out]" at the declared 4 bits. No dynamic key
// overrides this module's bits, so g_idx's 128 rows need qweight [16, 64]; [8, 64] would be 2-bit
// packing, which the config does not declare.
TEST(RuleCases, QC119PositiveDeclaredBits)
{
  const Report r =
    lint_folder(folder(config(k_llama, gptq_config(k_gptq_listed)),
                       gptq("model.layers.0.self_attn.o_proj") +
                         gptq("model.layers.0.mlp.down_proj", 64, 64, 128) + bf16("lm_head")));
  EXPECT_EQ(findings(r, RuleId::packed_shape).size(), 1u) << text(r);
}

// Registry QC119 / R36: "scales [in/group, out]". The engines allocate in / group_size rows of
// scales: a checkpoint exported at group 128 under a config that says 32 does not load.
TEST(RuleCases, QC119PositiveScalesRowsAgainstGroupSize)
{
  const auto at_group = [](int group) {
    return fmt::format(R"({{"quant_method": "gptq", "bits": 4, "group_size": {}, )"
                       R"("desc_act": false, "sym": true, "lm_head": false{}}})",
                       group, k_gptq_listed);
  };
  // gptq(): 64 input rows, scales [1, 64], i.e. group 64.
  const Tensors tensors = gptq("model.layers.0.self_attn.o_proj") +
                          gptq("model.layers.0.mlp.down_proj") + bf16("lm_head");
  EXPECT_TRUE(lint_folder(folder(config(k_llama, at_group(64)), tensors)).findings.empty());
  const Report r = lint_folder(folder(config(k_llama, at_group(32)), tensors));
  EXPECT_EQ(messages(r, RuleId::packed_shape),
            (Strings{"'model.layers.0.mlp.down_proj': scales [1, 64] where 64 input rows at "
                     "group_size 32 need 2 rows",
                     "'model.layers.0.self_attn.o_proj': scales [1, 64] where 64 input rows at "
                     "group_size 32 need 2 rows"}))
    << text(r);
  // Input rows that are no multiple of the group.
  EXPECT_EQ(
    messages(lint_folder(folder(config(k_llama, at_group(48)), tensors)), RuleId::packed_shape)
      .front(),
    "'model.layers.0.mlp.down_proj': its 64 input rows are not a multiple of group_size 48");
  // Without g_idx the input rows are what qweight packs at the declared bits.
  Tensors no_g_idx;
  for (const auto& t : tensors) {
    if (!t.name.ends_with(".g_idx")) {
      no_g_idx.push_back(t);
    }
  }
  EXPECT_EQ(
    findings(lint_folder(folder(config(k_llama, at_group(32)), no_g_idx)), RuleId::packed_shape)
      .size(),
    2u);
  EXPECT_TRUE(
    findings(lint_folder(folder(config(k_llama, at_group(64)), no_g_idx)), RuleId::packed_shape)
      .empty());
  // group_size -1 (one row per column) is not checked; nor are modules a dynamic key may give
  // another group_size.
  EXPECT_TRUE(lint_folder(folder(config(k_llama, at_group(-1)), tensors)).findings.empty());
  // AWQ: qweight [in, out / 8]; awq(): 64 input rows, scales [1, 64].
  const std::string m = "model.layers.0.mlp.down_proj";
  const auto awq_at = [](int group) {
    return fmt::format(R"({{"quant_method": "awq", "bits": 4, "group_size": {}, )"
                       R"("zero_point": true, "version": "gemm", "modules_to_not_convert": )"
                       R"(["lm_head"]}})",
                       group);
  };
  EXPECT_TRUE(findings(lint_folder(folder(config(k_llama, awq_at(64)), awq(m) + bf16("lm_head"))),
                       RuleId::packed_shape)
                .empty());
  EXPECT_EQ(messages(lint_folder(folder(config(k_llama, awq_at(16)), awq(m) + bf16("lm_head"))),
                     RuleId::packed_shape),
            Strings{"'model.layers.0.mlp.down_proj': scales [1, 64] where 64 input rows at "
                    "group_size 16 need 4 rows"});
}

namespace {

// Twelve layers: 0 and 1 GPTQ-packed by AutoRound, 2-11 left BF16.
Tensors
autoround_two_blocks()
{
  Tensors t = gptq("model.layers.0.mlp.down_proj") + gptq("model.layers.1.mlp.down_proj");
  for (int i = 2; i < 12; ++i) {
    t = t + bf16("model.layers." + std::to_string(i) + ".mlp.down_proj");
  }
  return t + bf16("lm_head");
}

std::string
autoround(const Strings& blocks)
{
  return R"({"quant_method": "auto-round", "bits": 4, "group_size": 64, "sym": true, )"
         R"("packing_format": "auto_round:auto_gptq", "block_name_to_quantize": )" +
         json_list(blocks) + "}";
}

const std::string k_llama_12 =
  R"("architectures": ["LlamaForCausalLM"], "model_type": "llama", "num_hidden_layers": 12)";

} // namespace

// QC120 (R26): block name "model.layers.1" also starts model.layers.10 and 11.
TEST(RuleCases, QC120Positive)
{
  const Report r = lint_folder(folder(
    config(k_llama_12, autoround({"model.layers.0", "model.layers.1"})), autoround_two_blocks()));
  const Finding f = only(r, RuleId::block_prefix_overmatch,
                         "block_name_to_quantize entry 'model.layers.1' also selects "
                         "'model.layers.10.mlp.down_proj' (plain startswith)");
  EXPECT_EQ(f.file, "config.json");
}

TEST(RuleCases, QC120Negative)
{
  const Report r = lint_folder(folder(
    config(k_llama_12, autoround({"model.layers.0.", "model.layers.1."})), autoround_two_blocks()));
  EXPECT_TRUE(r.findings.empty()) << text(r);
}

// QC101 for AutoRound outside a whole draft layer: extra_config keys are exact module names,
// so the fix names each BF16 module of the quantized block, never the block.
TEST(RuleCases, QC101PositiveAutoRoundModules)
{
  const Report r = lint_folder(
    folder(config(k_llama, autoround({"model.layers.0.", "model.layers.1."})),
           gptq("model.layers.0.self_attn.o_proj") + bf16("model.layers.0.mlp.down_proj") +
             bf16("model.layers.1.self_attn.o_proj") + bf16("model.layers.1.mlp.down_proj") +
             bf16("lm_head")));
  const auto found = findings(r, RuleId::undeclared_unquantized);
  ASSERT_EQ(found.size(), 2u) << text(r);
  EXPECT_EQ(found[0].suggested_entries, Strings{"model.layers.0.mlp.down_proj"}) << text(r);
  EXPECT_EQ(found[1].suggested_entries,
            (Strings{"model.layers.1.mlp.down_proj", "model.layers.1.self_attn.o_proj"}))
    << text(r);
}

// AutoRound's --quant_lm_head writes the head's exact name into extra_config with its bits; the
// engines read an exact key before their default for the head (vLLM's INC get_layer_config,
// SGLang's AutoRound): a quantized head is declared so (it was a false QC102), a float one
// with that key fails (QC101). The head's key without bits, or with 16, leaves it float.
TEST(RuleCases, AutoRoundQuantizedLmHeadIsDeclaredByItsExactKey)
{
  const auto block = [](const std::string& head) {
    return R"({"quant_method": "auto-round", "bits": 4, "group_size": 64, "sym": true, )"
           R"("packing_format": "auto_round:auto_gptq", "extra_config": {"lm_head": )" +
           head + "}}";
  };
  const Tensors layers =
    gptq("model.layers.0.mlp.down_proj") + gptq("model.layers.1.mlp.down_proj");
  const std::string bits4 = R"({"bits": 4, "group_size": 64, "data_type": "int"})";
  const Report quantized =
    lint_folder(folder(config(k_llama, block(bits4)), layers + gptq("lm_head")));
  EXPECT_TRUE(quantized.findings.empty()) << text(quantized);
  const Report float_head =
    lint_folder(folder(config(k_llama, block(bits4)), layers + bf16("lm_head")));
  const auto found = findings(float_head, RuleId::undeclared_unquantized);
  ASSERT_EQ(found.size(), 1u) << text(float_head);
  EXPECT_EQ(found[0].modules, Strings{"lm_head"});
  // fix gives that key bits 16, its other settings kept (it refused with the key already
  // there), and the patched folder lints clean.
  for (const std::string key : {"lm_head"}) {
    const std::string named = R"({"quant_method": "auto-round", "bits": 4, "group_size": 64, )"
                              R"("sym": true, "packing_format": "auto_round:auto_gptq", )"
                              R"("extra_config": {")" +
                              key + R"(": )" + bits4 + "}}";
    const MemoryFileSystem fs = folder(config(k_llama, named), layers + bf16("lm_head"));
    auto run = lint_path(fs, "m", {});
    ASSERT_TRUE(run);
    const auto undeclared = findings(run->report, RuleId::undeclared_unquantized);
    ASSERT_EQ(undeclared.size(), 1u) << text(run->report);
    EXPECT_EQ(undeclared[0].suggested_entries, Strings{key});
    const FixPlan plan = plan_fix(fs, *run, {});
    EXPECT_TRUE(plan.refused.empty()) << fmt::format("{}", fmt::join(plan.refused, "\n"));
    ASSERT_EQ(plan.edits.size(), 1u);
    const std::string& patched = plan.edits[0].patched;
    EXPECT_NE(patched.find(R"("extra_config": {")" + key +
                           R"(": {"bits": 16, "group_size": 64, "data_type": "int"}}})"),
              std::string::npos)
      << patched;
    EXPECT_EQ(plan.edits[0].added, Strings{fmt::format(R"(extra_config["{}"]["bits"] = 16)", key)});
    const Report after = lint_patched(fs, plan);
    EXPECT_TRUE(after.findings.empty()) << text(after);
  }
  // "model.lm_head" is no key for the head in get_layer_config (an exact key is the name
  // itself; vLLM's get_quant_method reads "model." + it only at 16 bits or more): at 4 bits it
  // leaves the head float by default, in both engines.
  {
    const std::string named = R"({"quant_method": "auto-round", "bits": 4, "group_size": 64, )"
                              R"("sym": true, "packing_format": "auto_round:auto_gptq", )"
                              R"("extra_config": {"model.lm_head": )" +
                              bits4 + "}}";
    const Report r = lint_folder(folder(config(k_llama, named), layers + bf16("lm_head")));
    EXPECT_TRUE(r.findings.empty()) << text(r);
  }
  // Two blocks: config.json's with "lm_head" at 4 bits (the engines read that one), and
  // quantization_config.json's with "model.lm_head" at 4 bits: the head's own key "lm_head" gets
  // bits 16 in both, a new key beside "model.lm_head" in the second.
  {
    const std::string named = R"({"quant_method": "auto-round", "bits": 4, "group_size": 64, )"
                              R"("sym": true, "packing_format": "auto_round:auto_gptq", )"
                              R"("extra_config": {"model.lm_head": )" +
                              bits4 + "}}";
    MemoryFileSystem fs = folder(config(k_llama, block(bits4)), layers + bf16("lm_head"));
    fs.add_file("m/quantization_config.json", named + "\n");
    auto run = lint_path(fs, "m", {});
    ASSERT_TRUE(run);
    const FixPlan plan = plan_fix(fs, *run, {});
    EXPECT_TRUE(plan.refused.empty()) << fmt::format("{}", fmt::join(plan.refused, "\n"));
    ASSERT_EQ(plan.edits.size(), 2u);
    EXPECT_EQ(plan.edits[0].file, "config.json");
    EXPECT_EQ(plan.edits[0].added, Strings{R"(extra_config["lm_head"]["bits"] = 16)"});
    EXPECT_EQ(plan.edits[1].file, "quantization_config.json");
    EXPECT_EQ(plan.edits[1].added,
              Strings{R"(extra_config += "lm_head": {"bits": 16, "data_type": "fp"})"});
    EXPECT_NE(plan.edits[1].patched.find(R"("model.lm_head": {"bits": 4)"), std::string::npos)
      << plan.edits[1].patched;
    const Report after = lint_patched(fs, plan);
    EXPECT_TRUE(after.findings.empty()) << text(after);
  }
  // Of two blocks, only the one whose key quantizes the head is edited (quantization_config.json
  // says 32, float too: its settings stay as written).
  {
    const std::string float_key = R"({"bits": 32, "data_type": "float", "group_size": 128})";
    MemoryFileSystem fs = folder(config(k_llama, block(bits4)), layers + bf16("lm_head"));
    const std::string second =
      R"({"quant_method": "auto-round", "bits": 4, "group_size": 64, "sym": true, )"
      R"("packing_format": "auto_round:auto_gptq", "extra_config": {"lm_head": )" +
      float_key + "}}\n";
    fs.add_file("m/quantization_config.json", second);
    auto run = lint_path(fs, "m", {});
    ASSERT_TRUE(run);
    const FixPlan plan = plan_fix(fs, *run, {});
    EXPECT_TRUE(plan.refused.empty()) << fmt::format("{}", fmt::join(plan.refused, "\n"));
    ASSERT_EQ(plan.edits.size(), 1u);
    EXPECT_EQ(plan.edits[0].file, "config.json");
  }
  {
    const std::string head = R"({"bits": 16})";
    const Report r = lint_folder(folder(config(k_llama, block(head)), layers + bf16("lm_head")));
    EXPECT_TRUE(r.findings.empty()) << text(r);
    const Report stored =
      lint_folder(folder(config(k_llama, block(head)), layers + gptq("lm_head")));
    const auto excluded = findings(stored, RuleId::excluded_but_quantized);
    ASSERT_EQ(excluded.size(), 1u) << text(stored);
    EXPECT_EQ(engines(excluded[0]), (std::set<Engine>{Engine::vllm, Engine::sglang}));
  }
  // Without bits the engines part: vLLM's get_quant_method reads the exact key as 16 bits,
  // SGLang's get_layer_config gives it the model's (get_config() with quantized=True).
  {
    const std::string head = R"({"group_size": 64})";
    const Report r = lint_folder(folder(config(k_llama, block(head)), layers + bf16("lm_head")));
    const auto undeclared = findings(r, RuleId::undeclared_unquantized);
    ASSERT_EQ(undeclared.size(), 1u) << text(r);
    EXPECT_EQ(engines(undeclared[0]), (std::set<Engine>{Engine::sglang}));
    const Report stored =
      lint_folder(folder(config(k_llama, block(head)), layers + gptq("lm_head")));
    const auto excluded = findings(stored, RuleId::excluded_but_quantized);
    ASSERT_EQ(excluded.size(), 1u) << text(stored);
    EXPECT_EQ(engines(excluded[0]), (std::set<Engine>{Engine::vllm}));
  }
}

// vLLM's INCConfig.get_quant_method reads "model." + a layer's prefix as its key, but only to
// leave it float at 16 bits or more; get_layer_config, in both engines, takes the name itself
// alone. So "model.<prefix>" at 16 bits keeps a layer float in vLLM and quantized in SGLang.
TEST(RuleCases, AutoRoundModelDotKeyIsReadByVllmAloneAtSixteenBits)
{
  const auto block = [](const std::string& extra) {
    return R"({"quant_method": "auto-round", "bits": 4, "group_size": 64, "sym": true, )"
           R"("packing_format": "auto_round:auto_gptq", "extra_config": {)" +
           extra + "}}";
  };
  const std::string down = "model.layers.0.mlp.down_proj";
  const Tensors others =
    gptq("model.layers.0.self_attn.o_proj") + gptq("model.layers.1.mlp.down_proj");
  const std::string alias = R"("model.model.layers.0.mlp.down_proj": {"bits": 16})";
  // Stored float: SGLang builds it quantized (QC101, SGLang alone); fix writes the name's own
  // key, which both engines read, and the patched folder lints clean.
  {
    const MemoryFileSystem fs = folder(config(k_llama, block(alias)), others + bf16(down));
    auto run = lint_path(fs, "m", {});
    ASSERT_TRUE(run);
    const auto undeclared = findings(run->report, RuleId::undeclared_unquantized);
    ASSERT_EQ(undeclared.size(), 1u) << text(run->report);
    EXPECT_EQ(engines(undeclared[0]), (std::set<Engine>{Engine::sglang}));
    EXPECT_EQ(undeclared[0].suggested_entries, Strings{down});
    const std::string entries = explain_entries(*run, {Engine::vllm, Engine::sglang});
    EXPECT_NE(entries.find("  'model.model.layers.0.mlp.down_proj'\n    vLLM: 1 layer: "
                           "model.layers.0.mlp.down_proj\n    SGLang: "),
              std::string::npos)
      << entries;
    EXPECT_EQ(entries.find("SGLang: 1 layer"), std::string::npos) << entries;
    const FixPlan plan = plan_fix(fs, *run, {});
    EXPECT_TRUE(plan.refused.empty()) << fmt::format("{}", fmt::join(plan.refused, "\n"));
    ASSERT_EQ(plan.edits.size(), 1u);
    const Report after = lint_patched(fs, plan);
    EXPECT_TRUE(after.findings.empty()) << text(after);
  }
  // Stored quantized: vLLM alone builds it float (QC102).
  {
    const Report r = lint_folder(folder(config(k_llama, block(alias)), others + gptq(down)));
    const auto excluded = findings(r, RuleId::excluded_but_quantized);
    ASSERT_EQ(excluded.size(), 1u) << text(r);
    EXPECT_EQ(engines(excluded[0]), (std::set<Engine>{Engine::vllm}));
  }
  // At 4 bits the key reaches neither engine: a quantized layer is fine, as without the key.
  {
    const std::string four = R"("model.model.layers.0.mlp.down_proj": {"bits": 4})";
    const Report r = lint_folder(folder(config(k_llama, block(four)), others + gptq(down)));
    EXPECT_TRUE(r.findings.empty()) << text(r);
  }
}

// get_layer_config() quantizes any layer, the head included, that a block_name_to_quantize entry
// starts (step 2; DeepSeek's MTP head model.layers.N.shared_head.head under "model.layers" is
// one): the head was taken as float whatever the block names said.
TEST(RuleCases, AutoRoundHeadInsideBlockNamesIsQuantized)
{
  const auto block = [](const std::string& names, const std::string& extra) {
    return R"({"quant_method": "auto-round", "bits": 4, "group_size": 64, "sym": true, )"
           R"("packing_format": "auto_round:auto_gptq", "block_name_to_quantize": )" +
           names + R"(, "extra_config": )" + extra + "}";
  };
  const Tensors layers =
    gptq("model.layers.0.mlp.down_proj") + gptq("model.layers.1.mlp.down_proj");
  const Report inside = lint_folder(folder(
    config(k_llama, block(R"(["model.layers", "lm_head"])", "{}")), layers + bf16("lm_head")));
  const auto found = findings(inside, RuleId::undeclared_unquantized);
  ASSERT_EQ(found.size(), 1u) << text(inside);
  EXPECT_EQ(found[0].modules, Strings{"lm_head"});
  EXPECT_EQ(engines(found[0]), (std::set<Engine>{Engine::vllm, Engine::sglang}));
  EXPECT_NE(text(inside).find("block_name_to_quantize 'lm_head' starts 'lm_head'"),
            std::string::npos)
    << text(inside);
  // A pattern key without bits takes the default, here quantized; outside the block names, float.
  const Report pattern = lint_folder(
    folder(config(k_llama, block(R"(["model.layers", "lm_head"])", R"({"^lm_head$": {}})")),
           layers + bf16("lm_head")));
  EXPECT_EQ(findings(pattern, RuleId::undeclared_unquantized).size(), 1u) << text(pattern);
  const Report outside =
    lint_folder(folder(config(k_llama, block(R"(["model.layers"])", R"({"^lm_head$": {}})")),
                       layers + bf16("lm_head")));
  EXPECT_TRUE(outside.findings.empty()) << text(outside);
}

// A pattern key matching the head quantizes it when it gives bits under 16: the engines read the
// head's layer config as any layer's, with 16 as its default (get_config(..., quantized=False));
// qcheck kept the head float unless its own exact key said otherwise. Without bits, the pattern
// leaves it float.
TEST(RuleCases, AutoRoundPatternKeyQuantizesTheHead)
{
  const auto block = [](const std::string& key) {
    return R"({"quant_method": "auto-round", "bits": 4, "group_size": 64, "sym": true, )"
           R"("packing_format": "auto_round:auto_gptq", "extra_config": {"^lm_head$": )" +
           key + "}}";
  };
  const Tensors layers =
    gptq("model.layers.0.mlp.down_proj") + gptq("model.layers.1.mlp.down_proj");
  const Report float_head =
    lint_folder(folder(config(k_llama, block(R"({"bits": 8})")), layers + bf16("lm_head")));
  const auto found = findings(float_head, RuleId::undeclared_unquantized);
  ASSERT_EQ(found.size(), 1u) << text(float_head);
  EXPECT_EQ(found[0].modules, Strings{"lm_head"});
  EXPECT_EQ(engines(found[0]), (std::set<Engine>{Engine::vllm, Engine::sglang}));
  // fix gives the head an exact key of its own, which both engines read before any pattern.
  const MemoryFileSystem fs =
    folder(config(k_llama, block(R"({"bits": 8})")), layers + bf16("lm_head"));
  auto run = lint_path(fs, "m", {});
  ASSERT_TRUE(run);
  const FixPlan plan = plan_fix(fs, *run, {});
  EXPECT_TRUE(plan.refused.empty()) << fmt::format("{}", fmt::join(plan.refused, "\n"));
  ASSERT_EQ(plan.edits.size(), 1u);
  EXPECT_NE(plan.edits[0].patched.find(R"("lm_head": {"bits": 16, "data_type": "fp"})"),
            std::string::npos)
    << plan.edits[0].patched;
  const Report after = lint_patched(fs, plan);
  EXPECT_TRUE(after.findings.empty()) << text(after);
  const Report quantized =
    lint_folder(folder(config(k_llama, block(R"({"bits": 4})")), layers + gptq("lm_head")));
  EXPECT_TRUE(quantized.findings.empty()) << text(quantized);
  const Report no_bits =
    lint_folder(folder(config(k_llama, block(R"({"group_size": 64})")), layers + bf16("lm_head")));
  EXPECT_TRUE(no_bits.findings.empty()) << text(no_bits);
}

// Both engines read AutoRound keys in get_layer_config's order: the layer's exact key first, else
// the first pattern in the dict's order that matches, whatever bits either gives (qcheck took any
// key giving 16 or more). A correct checkpoint with both kinds of keys is clean (it was a false
// QC102); a float layer an earlier 8-bit pattern reaches is QC101, fixed by its exact key.
TEST(RuleCases, AutoRoundKeysAreReadInTheEnginesOrder)
{
  const std::string o = "model.layers.0.self_attn.o_proj";
  const Tensors eight_bit{{o + ".qweight", "I32", {16, 64}},
                          {o + ".qzeros", "I32", {1, 16}},
                          {o + ".scales", "F16", {1, 64}},
                          {o + ".g_idx", "I32", {64}}};
  const auto block = [](const std::string& extra) {
    return R"({"quant_method": "auto-round", "bits": 4, "group_size": 64, "sym": true, )"
           R"("packing_format": "auto_round:auto_gptq", "extra_config": {)" +
           extra + "}}";
  };
  const Report exact_first = lint_folder(
    folder(config(k_llama, block(R"("model\\.layers\\.0\\.self_attn\\.o_.*": {"bits": 16}, )"
                                 R"("model.layers.0.self_attn.o_proj": {"bits": 8}, )"
                                 R"("model.layers.1.mlp.down_proj": {"bits": 16})")),
           eight_bit + gptq("model.layers.0.mlp.down_proj") + bf16("model.layers.1.mlp.down_proj") +
             bf16("lm_head")));
  EXPECT_TRUE(exact_first.findings.empty()) << text(exact_first);

  const MemoryFileSystem fs = folder(
    config(k_llama, block(R"(".*down_proj": {"bits": 8}, ".*layers\\.1\\..*": {"bits": 16})")),
    gptq("model.layers.0.mlp.down_proj") + bf16("model.layers.1.mlp.down_proj") + bf16("lm_head"));
  auto run = lint_path(fs, "m", {});
  ASSERT_TRUE(run);
  const auto undeclared = findings(run->report, RuleId::undeclared_unquantized);
  ASSERT_EQ(undeclared.size(), 1u) << text(run->report);
  EXPECT_EQ(engines(undeclared[0]), (std::set<Engine>{Engine::vllm, Engine::sglang}));
  EXPECT_EQ(undeclared[0].suggested_entries, Strings{"model.layers.1.mlp.down_proj"});
  const FixPlan plan = plan_fix(fs, *run, {});
  EXPECT_TRUE(plan.refused.empty()) << fmt::format("{}", fmt::join(plan.refused, "\n"));
  const Report after = lint_patched(fs, plan);
  EXPECT_TRUE(after.findings.empty()) << text(after);

  // A pattern naming the shards of a fused layer decides it where the engine reads the shards,
  // and explain --entries says so (it compared the pattern with the fused name alone): vLLM
  // always, SGLang only for a model that gives its AutoRound config the packed_modules_mapping
  // (Qwen3-Next here). For Llama SGLang reads the fused name alone: QC101, and fix writes that
  // name's own key, which both engines read first.
  const std::string shards_key = R"(".*layers\\.1\\.mlp\\.(gate|up)_proj")";
  const Tensors mlp = gptq("model.layers.0.mlp.gate_proj") + gptq("model.layers.0.mlp.up_proj") +
                      bf16("model.layers.1.mlp.gate_proj") + bf16("model.layers.1.mlp.up_proj") +
                      bf16("lm_head");
  const std::string qwen3_next = R"("architectures": ["Qwen3NextForCausalLM"], )"
                                 R"("model_type": "qwen3_next", "num_hidden_layers": 2)";
  auto mapped =
    lint_path(folder(config(qwen3_next, block(shards_key + R"(: {"bits": 16})")), mlp), "m", {});
  ASSERT_TRUE(mapped);
  EXPECT_TRUE(mapped->report.findings.empty()) << text(mapped->report);
  const std::string entries = explain_entries(*mapped, {Engine::vllm, Engine::sglang});
  EXPECT_NE(entries.find("    vLLM: 1 layer: model.layers.1.mlp.gate_up_proj\n"), std::string::npos)
    << entries;
  EXPECT_NE(entries.find("    SGLang: 1 layer: model.layers.1.mlp.gate_up_proj\n"),
            std::string::npos)
    << entries;

  const MemoryFileSystem llama =
    folder(config(k_llama, block(shards_key + R"(: {"bits": 16})")), mlp);
  auto fused = lint_path(llama, "m", {});
  ASSERT_TRUE(fused);
  const auto by_name = findings(fused->report, RuleId::undeclared_unquantized);
  ASSERT_EQ(by_name.size(), 1u) << text(fused->report);
  EXPECT_EQ(engines(by_name[0]), (std::set<Engine>{Engine::sglang}));
  EXPECT_EQ(by_name[0].suggested_entries, Strings{"model.layers.1.mlp.gate_up_proj"});
  EXPECT_EQ(explain_entries(*fused, {Engine::sglang}).find("SGLang: 1 layer"), std::string::npos);
  const FixPlan fused_plan = plan_fix(llama, *fused, {});
  EXPECT_TRUE(fused_plan.refused.empty()) << fmt::format("{}", fmt::join(fused_plan.refused, "\n"));
  const Report fused_after = lint_patched(llama, fused_plan);
  EXPECT_TRUE(fused_after.findings.empty()) << text(fused_after);
}

// Shards of a fused layer (or experts of a fused MoE) whose keys disagree: both engines raise
// ("requires consistent quant config"), QC103 (the rewrite of decide_auto_round() reported
// nothing with the modules stored quantized).
TEST(RuleCases, QC103AutoRoundShardKeysDisagree)
{
  const std::string block =
    R"({"quant_method": "auto-round", "bits": 4, "group_size": 64, "sym": true, )"
    R"("packing_format": "auto_round:auto_gptq", "extra_config": )"
    R"({"model.layers.1.self_attn.q_proj": {"bits": 16}}})";
  Tensors stored = bf16("lm_head");
  for (const char* m : {"q_proj", "k_proj", "v_proj"}) {
    stored = stored + gptq(fmt::format("model.layers.0.self_attn.{}", m)) +
             gptq(fmt::format("model.layers.1.self_attn.{}", m));
  }
  const Report r = lint_folder(folder(config(k_llama, block), stored));
  const auto disagree = findings(r, RuleId::fused_shards_disagree);
  ASSERT_EQ(disagree.size(), 1u) << text(r);
  // SGLang reads a Llama's fused name alone (no packed_modules_mapping on its AutoRound config):
  // vLLM alone stops.
  EXPECT_EQ(engines(disagree[0]), (std::set<Engine>{Engine::vllm}));
  EXPECT_NE(text(r).find("extra_config makes model.layers.1.self_attn.q_proj unquantized, "
                         "model.layers.1.self_attn.k_proj, model.layers.1.self_attn.v_proj not"),
            std::string::npos)
    << text(r);
}

// Shards that agree on being quantized but not on (bits, group_size, sym): get_layer_config()
// compares the three, defaults filled in, and raises where it reads the shards (qcheck compared
// only whether each shard is quantized, and said nothing).
TEST(RuleCases, QC103AutoRoundShardSettingsDisagree)
{
  const std::string block =
    R"({"quant_method": "auto-round", "bits": 4, "group_size": 64, "sym": true, )"
    R"("packing_format": "auto_round:auto_gptq", "extra_config": )"
    R"({"model.layers.1.self_attn.q_proj": {"bits": 4, "group_size": 32}}})";
  Tensors stored = bf16("lm_head");
  for (const char* m : {"q_proj", "k_proj", "v_proj"}) {
    stored = stored + gptq(fmt::format("model.layers.0.self_attn.{}", m)) +
             gptq(fmt::format("model.layers.1.self_attn.{}", m));
  }
  // SGLang compares the shards only for a model that gives its config the packed_modules_mapping
  // (Qwen3-Next); for a Llama it reads the fused name alone, built at the block's settings,
  // which q_proj's do not match (a second QC103, for SGLang).
  const std::string qwen3_next = R"("architectures": ["Qwen3NextForCausalLM"], )"
                                 R"("model_type": "qwen3_next", "num_hidden_layers": 2)";
  for (const auto& [model, engines_text, stopping] :
       std::vector<std::tuple<std::string, std::string, std::set<Engine>>>{
         {k_llama, "vLLM stops", {Engine::vllm}},
         {qwen3_next, "vLLM and SGLang stop", {Engine::vllm, Engine::sglang}}}) {
    const Report r = lint_folder(folder(config(model, block), stored));
    const auto disagree = findings(r, RuleId::fused_shards_disagree);
    ASSERT_EQ(disagree.size(), model == k_llama ? 2u : 1u) << text(r);
    if (model == k_llama) {
      EXPECT_EQ(engines(disagree[1]), std::set<Engine>{Engine::sglang});
      EXPECT_NE(disagree[1].message.find("by its name"), std::string::npos) << text(r);
    }
    EXPECT_EQ(engines(disagree[0]), stopping);
    EXPECT_EQ(disagree[0].message,
              "the shards of fused layer 'model.layers.1.self_attn.qkv_proj' are not configured "
              "alike; " +
                engines_text +
                " with `Fused module 'model.layers.1.self_attn.qkv_proj' requires consistent "
                "quant config for [...]`");
    EXPECT_NE(text(r).find("extra_config gives (bits, group_size, sym) (4, 64, True) for "
                           "model.layers.1.self_attn.k_proj, model.layers.1.self_attn.v_proj; "
                           "(4, 32, True) for model.layers.1.self_attn.q_proj"),
              std::string::npos)
      << text(r);
    EXPECT_EQ(disagree[0].fix, "give every shard of the fused layer the same bits, group_size and "
                               "sym in extra_config");
  }
}

// Attention kept BF16 by a key per shard, as AutoRound writes them: vLLM reads the shards (its
// packed_modules_mapping), SGLang's AutoRound config has none for a Llama and reads the fused
// name alone, which no key names: it builds qkv_proj quantized (QC101, SGLang). fix writes the
// fused name's key; with it, both engines pass. For Qwen3-Next (and Qwen3.5's text classes)
// SGLang reads the shards too.
TEST(RuleCases, QC101AutoRoundSglangReadsTheFusedNameAlone)
{
  const std::string a = "model.layers.1.self_attn.";
  const auto block = [&](const std::string& more) {
    return R"({"quant_method": "auto-round", "bits": 4, "group_size": 64, "sym": true, )"
           R"("packing_format": "auto_round:auto_gptq", "extra_config": {")" +
           a + R"(q_proj": {"bits": 16}, ")" + a + R"(k_proj": {"bits": 16}, ")" + a +
           R"(v_proj": {"bits": 16})" + more + "}}";
  };
  Tensors stored = bf16("lm_head");
  for (const char* m : {"q_proj", "k_proj", "v_proj"}) {
    stored = stored + gptq(fmt::format("model.layers.0.self_attn.{}", m)) + bf16(a + m);
  }
  const MemoryFileSystem fs = folder(config(k_llama, block("")), stored);
  auto run = lint_path(fs, "m", {});
  ASSERT_TRUE(run);
  const auto undeclared = findings(run->report, RuleId::undeclared_unquantized);
  ASSERT_EQ(undeclared.size(), 1u) << text(run->report);
  EXPECT_EQ(engines(undeclared[0]), (std::set<Engine>{Engine::sglang}));
  EXPECT_EQ(undeclared[0].suggested_entries, Strings{a + "qkv_proj"});
  EXPECT_NE(text(run->report).find("SGLang reads the fused name alone here"), std::string::npos)
    << text(run->report);
  const FixPlan plan = plan_fix(fs, *run, {});
  EXPECT_TRUE(plan.refused.empty()) << fmt::format("{}", fmt::join(plan.refused, "\n"));
  ASSERT_EQ(plan.edits.size(), 1u);
  EXPECT_NE(plan.edits[0].patched.find("\"" + a + R"(qkv_proj": {"bits": 16, "data_type": "fp"})"),
            std::string::npos)
    << plan.edits[0].patched;
  const Report after = lint_patched(fs, plan);
  EXPECT_TRUE(after.findings.empty()) << text(after);
  // Written by hand, the fused key passes too; and a model that gives SGLang the mapping needs
  // none.
  const Report keyed =
    lint_folder(folder(config(k_llama, block(", \"" + a + R"(qkv_proj": {"bits": 16})")), stored));
  EXPECT_TRUE(keyed.findings.empty()) << text(keyed);
  const std::string qwen3_next = R"("architectures": ["Qwen3NextForCausalLM"], )"
                                 R"("model_type": "qwen3_next", "num_hidden_layers": 2)";
  const Report mapped = lint_folder(folder(config(qwen3_next, block("")), stored));
  EXPECT_TRUE(mapped.findings.empty()) << text(mapped);
}

// SGLang compares a fused layer's shards only where a key of its config's packed_modules_mapping
// occurs in the layer's name, and that mapping is per class: DeepSeek's names
// fused_qkv_a_proj_with_mqa alone (its gate_up_proj is read by the fused name), a draft model's
// config has none (Qwen3.5's MTP reads qkv_proj by name), and a wrapper building DeepSeek
// (Kimi-VL) gets DeepSeek's. A yes/no per architecture missed the first two and flagged the
// third (false QC101).
TEST(RuleCases, QC101AutoRoundSglangMappingIsPerClassAndFusedName)
{
  const auto block = [](const Strings& names) {
    std::string keys;
    for (const auto& n : names) {
      keys += (keys.empty() ? "" : ", ") + fmt::format(R"("{}": {{"bits": 16}})", n);
    }
    return R"({"quant_method": "auto-round", "bits": 4, "group_size": 64, "sym": true, )"
           R"("packing_format": "auto_round:auto_gptq", "extra_config": {)" +
           keys + "}}";
  };
  // Lints, expects one QC101 for SGLang alone suggesting `fused`, and checks that fix's patch
  // lints clean.
  const auto sglang_reads_fused_name = [&](const MemoryFileSystem& fs, const std::string& fused) {
    auto run = lint_path(fs, "m", {});
    ASSERT_TRUE(run);
    const auto undeclared = findings(run->report, RuleId::undeclared_unquantized);
    ASSERT_EQ(undeclared.size(), 1u) << text(run->report);
    EXPECT_EQ(engines(undeclared[0]), (std::set<Engine>{Engine::sglang}));
    EXPECT_EQ(undeclared[0].suggested_entries, Strings{fused});
    const FixPlan plan = plan_fix(fs, *run, {});
    EXPECT_TRUE(plan.refused.empty()) << fmt::format("{}", fmt::join(plan.refused, "\n"));
    const Report after = lint_patched(fs, plan);
    EXPECT_TRUE(after.findings.empty()) << text(after);
  };
  const std::string l = "model.layers.0.";
  const std::string d = "model.layers.1.";
  const Tensors deepseek = bf16("lm_head") + gptq(l + "self_attn.o_proj") +
                           gptq(l + "mlp.down_proj") + bf16(d + "eh_proj", 64, 128) +
                           norm(d + "enorm") + norm(d + "hnorm") + norm(d + "shared_head.norm") +
                           bf16(d + "shared_head.head") + gptq(d + "self_attn.o_proj") +
                           gptq(d + "mlp.down_proj");
  const Strings mla{l + "self_attn.q_a_proj", l + "self_attn.kv_a_proj_with_mqa"};
  // DeepSeek-V3: the MLA shards' keys reach SGLang, the MLP's do not.
  {
    const Report r = lint_folder(folder(config(k_deepseek, block({mla[0], mla[1], d + "eh_proj"})),
                                        deepseek + bf16(mla[0]) + bf16(mla[1]) +
                                          gptq(l + "mlp.gate_proj") + gptq(l + "mlp.up_proj")));
    EXPECT_TRUE(r.findings.empty()) << text(r);
    const Strings mlp{l + "mlp.gate_proj", l + "mlp.up_proj"};
    sglang_reads_fused_name(
      folder(config(k_deepseek, block({mlp[0], mlp[1], d + "eh_proj"})),
             deepseek + gptq(mla[0]) + gptq(mla[1]) + bf16(mlp[0]) + bf16(mlp[1])),
      l + "mlp.gate_up_proj");
  }
  // Qwen3.5's text model maps qkv_proj; its MTP draft's config has no mapping.
  {
    const std::string qwen35_text =
      R"("architectures": ["Qwen3_5ForCausalLM"], "model_type": "qwen3_5_text", )"
      R"("num_hidden_layers": 1, "mtp_num_hidden_layers": 1)";
    const std::string a = "model.layers.0.self_attn.";
    const std::string m = "mtp.layers.0.self_attn.";
    const Tensors main = gptq("model.layers.0.mlp.down_proj") + bf16("lm_head") +
                         bf16("mtp.fc", 64, 128) + gptq("mtp.layers.0.self_attn.o_proj") +
                         gptq("mtp.layers.0.mlp.down_proj") + norm("mtp.norm");
    const Report mapped = lint_folder(
      folder(config(qwen35_text, block({"mtp.fc", a + "q_proj", a + "k_proj", a + "v_proj"})),
             main + bf16(a + "q_proj") + bf16(a + "k_proj") + bf16(a + "v_proj") +
               gptq(m + "q_proj") + gptq(m + "k_proj") + gptq(m + "v_proj")));
    EXPECT_TRUE(mapped.findings.empty()) << text(mapped);
    // Without those keys: QC101 in both, fixed by the shards' keys alone (no fused-name key,
    // which only a layer SGLang reads by name needs).
    const Report unkeyed =
      lint_folder(folder(config(qwen35_text, block({"mtp.fc"})),
                         main + bf16(a + "q_proj") + bf16(a + "k_proj") + bf16(a + "v_proj") +
                           gptq(m + "q_proj") + gptq(m + "k_proj") + gptq(m + "v_proj")));
    const auto undeclared = findings(unkeyed, RuleId::undeclared_unquantized);
    ASSERT_EQ(undeclared.size(), 1u) << text(unkeyed);
    EXPECT_EQ(engines(undeclared[0]), (std::set<Engine>{Engine::vllm, Engine::sglang}));
    EXPECT_EQ(undeclared[0].suggested_entries, (Strings{a + "k_proj", a + "q_proj", a + "v_proj"}));
    // A pattern naming the fused layer is not read where its shards are (explain --entries
    // agrees with the decision).
    const std::string fused_pattern = R"(model\\.layers\\.0\\.self_attn\\.qkv_proj)";
    auto patterned =
      lint_path(folder(config(qwen35_text, block({"mtp.fc", fused_pattern})),
                       main + gptq(a + "q_proj") + gptq(a + "k_proj") + gptq(a + "v_proj") +
                         gptq(m + "q_proj") + gptq(m + "k_proj") + gptq(m + "v_proj")),
                "m", {});
    ASSERT_TRUE(patterned);
    EXPECT_TRUE(patterned->report.findings.empty()) << text(patterned->report);
    const std::string entries = explain_entries(*patterned, {Engine::vllm, Engine::sglang});
    EXPECT_EQ(entries.find("1 layer: model.layers.0.self_attn.qkv_proj"), std::string::npos)
      << entries;
    sglang_reads_fused_name(
      folder(config(qwen35_text, block({"mtp.fc", m + "q_proj", m + "k_proj", m + "v_proj"})),
             main + gptq(a + "q_proj") + gptq(a + "k_proj") + gptq(a + "v_proj") +
               bf16(m + "q_proj") + bf16(m + "k_proj") + bf16(m + "v_proj")),
      m + "qkv_proj");
  }
  // Kimi-VL builds DeepseekV2ForCausalLM with its quantization config, under the checkpoint's
  // names: the MLA shards' keys reach SGLang.
  {
    const std::string kimi_vl =
      R"("architectures": ["KimiVLForConditionalGeneration"], "model_type": "kimi_vl", )"
      R"("text_config": {"model_type": "deepseek_v3", "num_hidden_layers": 1, "q_lora_rank": 64})";
    const std::string k = "language_model.model.layers.0.";
    const Report r = lint_folder(folder(
      config(kimi_vl, block({k + "self_attn.q_a_proj", k + "self_attn.kv_a_proj_with_mqa"})),
      bf16("language_model.lm_head") + gptq(k + "self_attn.o_proj") + gptq(k + "mlp.down_proj") +
        bf16(k + "self_attn.q_a_proj") + bf16(k + "self_attn.kv_a_proj_with_mqa") +
        gptq(k + "mlp.gate_proj") + gptq(k + "mlp.up_proj")));
    EXPECT_TRUE(r.findings.empty()) << text(r);
  }
}

// Mixed-bit AutoRound exports key each shard: SGLang, reading a Llama's qkv_proj by its name
// alone, builds it with the block's settings, so 8-bit shards do not fit (a weight-shape error
// at load). QC103 naming the engine that reads the name; a key for the fused name with the
// shards' settings fixes it.
TEST(RuleCases, QC103AutoRoundFusedNameReadWithOtherSettings)
{
  const std::string a = "model.layers.1.self_attn.";
  const auto block = [&](const Strings& shards, const std::string& shard, const std::string& more) {
    std::string keys;
    for (const auto& m : shards) {
      keys += fmt::format(R"({}"{}{}": {})", keys.empty() ? "" : ", ", a, m, shard);
    }
    return R"({"quant_method": "auto-round", "bits": 4, "group_size": 64, "sym": true, )"
           R"("packing_format": "auto_round:auto_gptq", "extra_config": {)" +
           keys + more + "}}";
  };
  const Strings qkv{"q_proj", "k_proj", "v_proj"};
  Tensors stored = bf16("lm_head");
  for (const auto& m : qkv) {
    stored = stored + gptq("model.layers.0.self_attn." + m) + gptq(a + m);
  }
  // The finding reading the fused name, if any.
  const auto by_name = [](const Report& r) -> std::optional<Finding> {
    for (const Finding& f : findings(r, RuleId::fused_shards_disagree)) {
      if (f.message.find("by its name") != std::string::npos) {
        return f;
      }
    }
    return std::nullopt;
  };
  const std::string bits8 = R"({"bits": 8, "data_type": "int"})";
  {
    const Report r = lint_folder(folder(config(k_llama, block(qkv, bits8, "")), stored));
    const auto f = by_name(r);
    ASSERT_TRUE(f) << text(r);
    EXPECT_EQ(r.findings.size(), 1u) << text(r);
    EXPECT_EQ(engines(*f), (std::set<Engine>{Engine::sglang}));
    EXPECT_EQ(
      f->message,
      "SGLang reads fused layer 'model.layers.1.self_attn.qkv_proj' by its name, with bits, "
      "group_size or sym other than its shards': the layer it allocates does not match the "
      "packed weights");
    EXPECT_EQ(f->details,
              Strings{"SGLang builds it at (4, 64, True) (the block's); "
                      "model.layers.1.self_attn.k_proj, model.layers.1.self_attn.q_proj, "
                      "model.layers.1.self_attn.v_proj give (8, 64, True)"});
    EXPECT_EQ(f->fix, "key 'model.layers.1.self_attn.qkv_proj' in extra_config with its shards' "
                      "bits, group_size and sym");
    // explain says it too.
    auto run = lint_path(folder(config(k_llama, block(qkv, bits8, "")), stored), "m", {});
    ASSERT_TRUE(run);
    const auto explained = explain_module(*run, a + "q_proj", {Engine::sglang});
    ASSERT_TRUE(explained) << explained.error();
    EXPECT_NE(explained->find("    read by its name: SGLang builds it at (4, 64, True)"),
              std::string::npos)
      << *explained;
  }
  // One shard keyed: SGLang still builds the block's 4 bits (vLLM refuses the shards apart).
  {
    const Report r = lint_folder(folder(config(k_llama, block({"q_proj"}, bits8, "")), stored));
    const auto f = by_name(r);
    ASSERT_TRUE(f) << text(r);
    EXPECT_EQ(engines(*f), (std::set<Engine>{Engine::sglang}));
    EXPECT_EQ(f->details, Strings{"SGLang builds it at (4, 64, True) (the block's); "
                                  "model.layers.1.self_attn.q_proj gives (8, 64, True)"});
  }
  // The fused name's own key at 4 bits: both engines read it first.
  {
    const Report r = lint_folder(
      folder(config(k_llama, block(qkv, bits8, fmt::format(R"(, "{}qkv_proj": {{"bits": 4}})", a))),
             stored));
    const auto f = by_name(r);
    ASSERT_TRUE(f) << text(r);
    EXPECT_EQ(engines(*f), (std::set<Engine>{Engine::vllm, Engine::sglang}));
  }
  // group_size alone differs: the same.
  const Report grouped = lint_folder(
    folder(config(k_llama, block(qkv, R"({"bits": 4, "group_size": 32})", "")), stored));
  EXPECT_TRUE(by_name(grouped)) << text(grouped);
  // Clean: the fused name's key with the shards' settings; shard keys that spell the block's
  // settings; a model whose SGLang class maps qkv_proj (Qwen3-Next).
  for (const std::string& clean :
       {block(qkv, bits8, fmt::format(R"(, "{}qkv_proj": {})", a, bits8)),
        block(qkv, R"({"bits": 4.0, "group_size": 64, "sym": 1, "data_type": "int"})", "")}) {
    const Report ok = lint_folder(folder(config(k_llama, clean), stored));
    EXPECT_TRUE(ok.findings.empty()) << text(ok);
  }
  const std::string qwen3_next = R"("architectures": ["Qwen3NextForCausalLM"], )"
                                 R"("model_type": "qwen3_next", "num_hidden_layers": 2)";
  const Report mapped = lint_folder(folder(config(qwen3_next, block(qkv, bits8, "")), stored));
  EXPECT_TRUE(mapped.findings.empty()) << text(mapped);
  // A shard stored BF16 under the 8-bit keys is QC101's matter alone.
  Tensors one_float =
    bf16("lm_head") + bf16(a + "q_proj") + gptq(a + "k_proj") + gptq(a + "v_proj");
  for (const auto& m : qkv) {
    one_float = one_float + gptq("model.layers.0.self_attn." + m);
  }
  const Report float_shard = lint_folder(folder(config(k_llama, block(qkv, bits8, "")), one_float));
  EXPECT_FALSE(by_name(float_shard)) << text(float_shard);
  // A fused MoE is decided by its experts' keys in both engines: not concerned.
  const std::string moe_keys =
    R"({"quant_method": "auto-round", "bits": 4, "group_size": 64, "sym": true, )"
    R"("packing_format": "auto_round:auto_gptq", "extra_config": )"
    R"({"model.layers.0.mlp.experts.0.down_proj": {"bits": 8}, )"
    R"("model.layers.0.mlp.experts.1.down_proj": {"bits": 8}}})";
  const Report moe = lint_folder(
    folder(config(k_qwen3_moe, moe_keys),
           bf16("lm_head") + bf16("model.layers.0.mlp.gate", 2, 64) +
             experts("model.layers.0.mlp.experts", 0, 1,
                     [](const std::string& m, uint64_t o, uint64_t i) { return gptq(m, o, i); })));
  EXPECT_FALSE(by_name(moe)) << text(moe);
}

// The same settings written otherwise are the same to Python: 4.0 is 4, 1 is True. A fused
// layer whose one shard spells the block's settings out is consistent.
TEST(RuleCases, QC103AutoRoundSettingsComparedAsPythonValues)
{
  const std::string block =
    R"({"quant_method": "auto-round", "bits": 4, "group_size": 64, "sym": true, )"
    R"("packing_format": "auto_round:auto_gptq", "extra_config": )"
    R"({"model.layers.1.self_attn.q_proj": {"bits": 4.0, "group_size": 64, "sym": 1}}})";
  Tensors stored = bf16("lm_head");
  for (const char* m : {"q_proj", "k_proj", "v_proj"}) {
    stored = stored + gptq(fmt::format("model.layers.0.self_attn.{}", m)) +
             gptq(fmt::format("model.layers.1.self_attn.{}", m));
  }
  const Report r = lint_folder(folder(config(k_llama, block), stored));
  EXPECT_TRUE(r.findings.empty()) << text(r);
}

// A fused MoE's expert keys that differ in group_size: "Fused MoE layer ... requires consistent
// quant config for all sub-layers" in both engines.
TEST(RuleCases, QC103AutoRoundExpertSettingsDisagree)
{
  const std::string block =
    R"({"quant_method": "auto-round", "bits": 4, "group_size": 64, "sym": true, )"
    R"("packing_format": "auto_round:auto_gptq", "extra_config": )"
    R"({"model.layers.0.mlp.experts.0.down_proj": {"bits": 4, "group_size": 32}, )"
    R"("model.layers.0.mlp.experts.1.down_proj": {"bits": 4}}})";
  const Tensors stored =
    bf16("lm_head") + bf16("model.layers.0.mlp.gate", 2, 64) +
    experts("model.layers.0.mlp.experts", 0, 1,
            [](const std::string& m, uint64_t o, uint64_t i) { return gptq(m, o, i); });
  const Report r = lint_folder(folder(config(k_qwen3_moe, block), stored));
  const auto disagree = findings(r, RuleId::fused_shards_disagree);
  ASSERT_EQ(disagree.size(), 1u) << text(r);
  EXPECT_EQ(engines(disagree[0]), (std::set<Engine>{Engine::vllm, Engine::sglang}));
  EXPECT_NE(disagree[0].message.find("`Fused MoE layer 'model.layers.0.mlp.experts' requires "
                                     "consistent quant config for all sub-layers`"),
            std::string::npos)
    << disagree[0].message;
  EXPECT_NE(text(r).find("(4, 32, True) for model.layers.0.mlp.experts.0.down_proj; (4, 64, "
                         "True) for model.layers.0.mlp.experts.1.down_proj"),
            std::string::npos)
    << text(r);
}

// bits written 16.0 is 16 to the engines (check_quantized: bits < 16), so the key excludes the
// module in both; it used to read as missing, which SGLang fills with the model's 4 (a false
// QC101 for SGLang).
TEST(RuleCases, QC101AutoRoundBitsWrittenAsFloat)
{
  const std::string block =
    R"({"quant_method": "auto-round", "bits": 4, "group_size": 64, "sym": true, )"
    R"("packing_format": "auto_round:auto_gptq", "extra_config": )"
    R"({"model.layers.1.mlp.down_proj": {"bits": 16.0, "data_type": "fp"}}})";
  const Report r = lint_folder(
    folder(config(k_llama, block), gptq("model.layers.0.mlp.down_proj") +
                                     bf16("model.layers.1.mlp.down_proj") + bf16("lm_head")));
  EXPECT_TRUE(r.findings.empty()) << text(r);
}

// bits written as anything but a number: check_quantized() compares it with 16 and raises
// TypeError in both engines (QC009, at the value); a number never is.
TEST(RuleCases, QC009AutoRoundBitsThatAreNoNumber)
{
  const auto block = [](const std::string& bits) {
    return R"({"quant_method": "auto-round", "bits": 4, "group_size": 64, "sym": true, )"
           R"("packing_format": "auto_round:auto_gptq", "extra_config": )"
           R"({"model.layers.1.mlp.down_proj": {"bits": )" +
           bits + "}}}";
  };
  const Tensors stored =
    gptq("model.layers.0.mlp.down_proj") + bf16("model.layers.1.mlp.down_proj") + bf16("lm_head");
  for (const auto& [bits, kind] : std::vector<std::pair<std::string, std::string>>{
         {R"("16")", "a string"}, {"null", "null"}, {"[16]", "a list"}}) {
    const Report r = lint_folder(folder(config(k_llama, block(bits)), stored));
    const auto invalid = findings(r, RuleId::config_invalid);
    ASSERT_EQ(invalid.size(), 1u) << bits << "\n" << text(r);
    EXPECT_EQ(invalid[0].message,
              "quantization_config: extra_config[\"model.layers.1.mlp.down_proj\"] gives bits as " +
                kind +
                ": vLLM's INC and SGLang's AutoRound compare it with 16 and raise TypeError");
    EXPECT_EQ(invalid[0].pointer,
              "/quantization_config/extra_config/model.layers.1.mlp.down_proj/bits");
    EXPECT_EQ(invalid[0].severity, Severity::error);
  }
  for (const std::string bits : {"16", "16.0", "true"}) {
    EXPECT_TRUE(
      findings(lint_folder(folder(config(k_llama, block(bits)), stored)), RuleId::config_invalid)
        .empty())
      << bits;
  }
}

// A key spelled without "model." is no exact key for "model.X" in either engine: fix adds
// "model.layers.1.mlp.down_proj" and leaves "layers.1.mlp.down_proj" as it is (it set bits 16 in
// that one and then refused).
TEST(RuleCases, QC101AutoRoundFixLeavesAKeyNoEngineReads)
{
  const std::string block =
    R"({"quant_method": "auto-round", "bits": 4, "group_size": 64, "sym": true, )"
    R"("packing_format": "auto_round:auto_gptq", "extra_config": )"
    R"({"layers.1.mlp.down_proj": {"bits": 4}}})";
  const MemoryFileSystem fs =
    folder(config(k_llama, block), gptq("model.layers.0.mlp.down_proj") +
                                     bf16("model.layers.1.mlp.down_proj") + bf16("lm_head"));
  auto run = lint_path(fs, "m", {});
  ASSERT_TRUE(run);
  const FixPlan plan = plan_fix(fs, *run, {});
  EXPECT_TRUE(plan.refused.empty()) << fmt::format("{}", fmt::join(plan.refused, "\n"));
  ASSERT_EQ(plan.edits.size(), 1u);
  EXPECT_NE(plan.edits[0].patched.find(R"("layers.1.mlp.down_proj": {"bits": 4})"),
            std::string::npos)
    << plan.edits[0].patched;
  const Report after = lint_patched(fs, plan);
  EXPECT_TRUE(after.findings.empty()) << text(after);
}

// A whole BF16 draft behind keys the engines read before a new pattern: the draft's own exact
// 4-bit key is named (fix gives it bits 16); behind an earlier pattern, which the main layers may
// share, each module gets an exact key of its own (read before any pattern). The patched folder
// lints clean (fix wrote "^mtp\..*" alone and passed it).
TEST(RuleCases, QC101AutoRoundDraftBehindEarlierKeysNamesThem)
{
  const Tensors stored =
    gptq("model.language_model.layers.0.self_attn.o_proj") +
    gptq("model.language_model.layers.0.mlp.down_proj") + bf16("lm_head") +
    bf16("mtp.fc", 64, 128) + norm("mtp.pre_fc_norm_embedding") + norm("mtp.pre_fc_norm_hidden") +
    bf16("mtp.layers.0.self_attn.o_proj") +
    experts("mtp.layers.0.mlp.experts", 0, 0,
            [](const std::string& m, uint64_t o, uint64_t i) { return bf16(m, o, i); });
  struct Case
  {
    std::string extra;
    Strings suggested;
    std::string fix;
  };
  const std::vector<Case> cases{
    {R"("mtp.layers.0.self_attn.o_proj": {"bits": 4})",
     {R"(^mtp\..*)", "mtp.layers.0.self_attn.o_proj"},
     R"(set "bits": 16 in "mtp.layers.0.self_attn.o_proj")"},
    {R"(".*self_attn.*": {"bits": 4})",
     {R"(^mtp\..*)", "mtp.layers.0.self_attn.o_proj"},
     R"(add "^mtp\\..*", "mtp.layers.0.self_attn.o_proj" to config.json extra_config)"},
  };
  for (const Case& c : cases) {
    const std::string block =
      R"({"quant_method": "auto-round", "bits": 4, "group_size": 64, "sym": true, )"
      R"("packing_format": "auto_round:auto_gptq", "extra_config": {"lm_head": {"bits": 16}, )" +
      c.extra + "}}";
    const MemoryFileSystem fs = folder(config(k_qwen35, block), stored);
    auto run = lint_path(fs, "m", {});
    ASSERT_TRUE(run);
    const auto undeclared = findings(run->report, RuleId::undeclared_unquantized);
    ASSERT_EQ(undeclared.size(), 1u) << text(run->report);
    EXPECT_EQ(undeclared[0].suggested_entries, c.suggested) << c.extra;
    EXPECT_NE(undeclared[0].fix.find(c.fix), std::string::npos) << undeclared[0].fix;
    const FixPlan plan = plan_fix(fs, *run, {});
    EXPECT_TRUE(plan.refused.empty()) << fmt::format("{}", fmt::join(plan.refused, "\n"));
    const Report after = lint_patched(fs, plan);
    EXPECT_TRUE(after.findings.empty()) << c.extra << "\n" << text(after);
  }
}

// check to "any width" as for GPTQ).
TEST(RuleCases, QC119AutoRoundDynamicBitsDoNotCount)
{
  const std::string o = "model.layers.0.self_attn.o_proj";
  const Tensors eight_bit{{o + ".qweight", "I32", {16, 64}},
                          {o + ".qzeros", "I32", {1, 16}},
                          {o + ".scales", "F16", {1, 64}},
                          {o + ".g_idx", "I32", {64}}};
  const Tensors stored = eight_bit + gptq("model.layers.0.mlp.down_proj") + bf16("lm_head");
  const std::string block =
    R"({"quant_method": "auto-round", "bits": 4, "group_size": 64, "sym": true, )"
    R"("packing_format": "auto_round:auto_gptq", "dynamic": {"+:.*o_proj": {"bits": 8}}})";
  const Report r = lint_folder(folder(config(k_llama, block), stored));
  const auto packed = findings(r, RuleId::packed_shape);
  ASSERT_EQ(packed.size(), 1u) << text(r);
  EXPECT_EQ(packed[0].modules, Strings{o});
  // Read by GPTQ, the same dynamic allows the width.
  const Report gptq_read = lint_folder(
    folder(config(k_llama, gptq_config(R"(, "dynamic": {"+:.*o_proj": {"bits": 8}})")), stored));
  EXPECT_TRUE(findings(gptq_read, RuleId::packed_shape).empty()) << text(gptq_read);
}

// An AutoRound extra_config key holding a regex metacharacter is a pattern: vLLM's INC searches
// the name with it (re.search), SGLang's AutoRound must match the whole name (re.fullmatch).
// "^mtp\." leaves the BF16 Qwen3.5 draft float in vLLM only; the key fix suggests for a whole
// draft runs to the end of the name, and the patched folder lints clean in both.
TEST(RuleCases, QC101AutoRoundRegexKeyMustMatchTheWholeNameInSglang)
{
  const auto block = [](const std::string& extra) {
    return R"({"quant_method": "auto-round", "bits": 4, "group_size": 64, "sym": true, )"
           R"("packing_format": "auto_round:auto_gptq", "extra_config": {"lm_head": )"
           R"({"bits": 16, "data_type": "fp"})" +
           extra + "}}";
  };
  const Tensors stored =
    gptq("model.language_model.layers.0.self_attn.o_proj") +
    gptq("model.language_model.layers.0.mlp.down_proj") + bf16("lm_head") +
    bf16("mtp.fc", 64, 128) + norm("mtp.pre_fc_norm_embedding") + norm("mtp.pre_fc_norm_hidden") +
    bf16("mtp.layers.0.self_attn.o_proj") +
    experts("mtp.layers.0.mlp.experts", 0, 0,
            [](const std::string& m, uint64_t o, uint64_t i) { return bf16(m, o, i); });
  const MemoryFileSystem searched_fs =
    folder(config(k_qwen35, block(R"(, "^mtp\\.": {"bits": 16, "data_type": "fp"})")), stored);
  auto searched_run = lint_path(searched_fs, "m", {});
  ASSERT_TRUE(searched_run);
  const Report& searched = searched_run->report;
  const auto sglang_only = findings(searched, RuleId::undeclared_unquantized);
  ASSERT_EQ(sglang_only.size(), 1u) << text(searched);
  EXPECT_EQ(engines(sglang_only[0]), std::set<Engine>{Engine::sglang});
  EXPECT_EQ(sglang_only[0].suggested_entries, Strings{R"(^mtp\..*)"});
  // explain --entries reads the key as each engine does (it read keys as prefixes).
  const std::string entries = explain_entries(*searched_run, {Engine::vllm, Engine::sglang});
  EXPECT_NE(entries.find("  '^mtp\\.'\n    vLLM: 3 layers: mtp.fc, mtp.layers.0.mlp.experts, "
                         "mtp.layers.0.self_attn.o_proj\n    SGLang: nothing\n"),
            std::string::npos)
    << entries;

  const MemoryFileSystem fs = folder(config(k_qwen35, block("")), stored);
  auto run = lint_path(fs, "m", {});
  ASSERT_TRUE(run);
  const auto both = findings(run->report, RuleId::undeclared_unquantized);
  ASSERT_EQ(both.size(), 1u) << text(run->report);
  EXPECT_EQ(engines(both[0]), (std::set<Engine>{Engine::vllm, Engine::sglang}));
  EXPECT_EQ(both[0].suggested_entries, Strings{R"(^mtp\..*)"});
  const FixPlan plan = plan_fix(fs, *run, {});
  EXPECT_TRUE(plan.refused.empty()) << fmt::format("{}", fmt::join(plan.refused, "\n"));
  const Report after = lint_patched(fs, plan);
  EXPECT_TRUE(after.findings.empty()) << text(after);
}

// A GPTQ draft whose finding mixes Linear layers (a "-:" key helps both engines) and fused MoE
// experts (SGLang builds them quantized whatever the keys say): the fix line says both, and fix
// writes the key and leaves the experts to a human (it refused the whole patch).
TEST(RuleCases, QC101GptqDraftMixingLinearsAndExpertsIsFixedInPart)
{
  const Tensors stored =
    gptq("model.language_model.layers.0.self_attn.o_proj") +
    experts("model.language_model.layers.0.mlp.experts", 0, 0,
            [](const std::string& m, uint64_t o, uint64_t i) { return gptq(m, o, i); }) +
    bf16("lm_head") + bf16("mtp.fc", 64, 128) + norm("mtp.pre_fc_norm_embedding") +
    norm("mtp.pre_fc_norm_hidden") + bf16("mtp.layers.0.self_attn.o_proj") +
    experts("mtp.layers.0.mlp.experts", 0, 0,
            [](const std::string& m, uint64_t o, uint64_t i) { return bf16(m, o, i); });
  const MemoryFileSystem fs = folder(
    config(k_qwen35, gptq_config(R"(, "modules_in_block_to_quantize": [["self_attn.o_proj"]])")),
    stored);
  auto run = lint_path(fs, "m", {});
  ASSERT_TRUE(run);
  const auto undeclared = findings(run->report, RuleId::undeclared_unquantized);
  ASSERT_EQ(undeclared.size(), 1u) << text(run->report);
  EXPECT_NE(undeclared[0].fix.find("no dynamic key leaves a GPTQ fused MoE unquantized in SGLang"),
            std::string::npos)
    << undeclared[0].fix;
  const FixPlan plan = plan_fix(fs, *run, {});
  EXPECT_TRUE(plan.refused.empty()) << fmt::format("{}", fmt::join(plan.refused, "\n"));
  ASSERT_EQ(plan.edits.size(), 1u);
  ASSERT_EQ(plan.remaining.size(), 1u);
  EXPECT_NE(plan.remaining[0].find("store its experts GPTQ-packed"), std::string::npos)
    << plan.remaining[0];
  const Report after = lint_patched(fs, plan);
  const auto left = findings(after, RuleId::undeclared_unquantized);
  ASSERT_EQ(left.size(), 1u) << text(after);
  EXPECT_EQ(engines(left[0]), std::set<Engine>{Engine::sglang});
}

// GPTQModel's "dynamic" in an auto-round block: vLLM's INCConfig and SGLang's AutoRoundConfig
// never read it, so its "-:" key leaves layer 1 quantized in both (qcheck decided the block as
// GPTQ and took the layer as excluded). The key is reported as read by no engine, and fix
// gives the layer an extra_config key, after which only that warning stays.
TEST(RuleCases, QC009AutoRoundDynamicIsReadByNoEngine)
{
  const std::string block =
    R"({"quant_method": "auto-round", "bits": 4, "group_size": 64, "sym": true, )"
    R"("packing_format": "auto_round:auto_gptq", "dynamic": {"-:.*layers[.]1[.].*": {}}})";
  const MemoryFileSystem fs =
    folder(config(k_llama, block), gptq("model.layers.0.mlp.down_proj") +
                                     bf16("model.layers.1.mlp.down_proj") + bf16("lm_head"));
  auto run = lint_path(fs, "m", {});
  ASSERT_TRUE(run);
  const Report& r = run->report;
  EXPECT_EQ(messages(r, RuleId::config_invalid),
            Strings{"quantization_config: dynamic is read by no engine for auto-round: vLLM's "
                    "INC and SGLang's AutoRound loaders decide by extra_config and "
                    "block_name_to_quantize, so its keys change no layer"})
    << text(r);
  ASSERT_EQ(findings(r, RuleId::config_invalid).size(), 1u);
  EXPECT_EQ(findings(r, RuleId::config_invalid)[0].pointer, "/quantization_config/dynamic");
  EXPECT_EQ(findings(r, RuleId::config_invalid)[0].severity, Severity::warning);
  const auto undeclared = findings(r, RuleId::undeclared_unquantized);
  ASSERT_EQ(undeclared.size(), 1u) << text(r);
  EXPECT_EQ(undeclared[0].modules, Strings{"model.layers.1.mlp.down_proj"});
  EXPECT_EQ(engines(undeclared[0]), (std::set<Engine>{Engine::vllm, Engine::sglang}));
  // explain --entries says the same of the key.
  const std::string entries = explain_entries(*run, {Engine::vllm, Engine::sglang});
  EXPECT_NE(entries.find("  '-:.*layers[.]1[.].*'\n    vLLM: nothing: it reads no dynamic for "
                         "auto-round\n    SGLang: nothing: it reads no dynamic for auto-round\n"),
            std::string::npos)
    << entries;
  const FixPlan plan = plan_fix(fs, *run, {});
  EXPECT_TRUE(plan.refused.empty()) << fmt::format("{}", fmt::join(plan.refused, "\n"));
  ASSERT_EQ(plan.edits.size(), 1u);
  const Report after = lint_patched(fs, plan);
  EXPECT_EQ(after.findings.size(), 1u) << text(after);
  EXPECT_EQ(findings(after, RuleId::config_invalid).size(), 1u) << text(after);
}

// AutoRound writes only what differs from the defaults: an exact extra_config key without
// bits. vLLM's INCConfig.get_quant_method reads its missing bits as 16 and builds the layer
// unquantized; SGLang (and vLLM's own layer config) use the model's bits. Stored quantized, the
// layer fails in vLLM; stored float, in SGLang.
TEST(RuleCases, AutoRoundExactKeyWithoutBitsIsFloatInVllm)
{
  const std::string block =
    R"({"quant_method": "auto-round", "bits": 4, "group_size": 64, "sym": true, )"
    R"("packing_format": "auto_round:auto_gptq", "extra_config": )"
    R"({"model.layers.1.mlp.down_proj": {"group_size": 32}}})";
  const Report quantized = lint_folder(
    folder(config(k_llama, block), gptq("model.layers.0.mlp.down_proj") +
                                     gptq("model.layers.1.mlp.down_proj") + bf16("lm_head")));
  const auto excluded = findings(quantized, RuleId::excluded_but_quantized);
  ASSERT_EQ(excluded.size(), 1u) << text(quantized);
  EXPECT_EQ(engines(excluded[0]), std::set<Engine>{Engine::vllm});
  EXPECT_NE(text(quantized).find("extra_config 'model.layers.1.mlp.down_proj' gives no bits, "
                                 "which vLLM reads as 16"),
            std::string::npos)
    << text(quantized);
  const Report float_layer = lint_folder(
    folder(config(k_llama, block), gptq("model.layers.0.mlp.down_proj") +
                                     bf16("model.layers.1.mlp.down_proj") + bf16("lm_head")));
  const auto undeclared = findings(float_layer, RuleId::undeclared_unquantized);
  ASSERT_EQ(undeclared.size(), 1u) << text(float_layer);
  EXPECT_EQ(engines(undeclared[0]), std::set<Engine>{Engine::sglang});
  // fix gives the key its bits (16): both engines then read the layer as float.
  const MemoryFileSystem fs =
    folder(config(k_llama, block), gptq("model.layers.0.mlp.down_proj") +
                                     bf16("model.layers.1.mlp.down_proj") + bf16("lm_head"));
  auto run = lint_path(fs, "m", {});
  ASSERT_TRUE(run);
  const FixPlan plan = plan_fix(fs, *run, {});
  EXPECT_TRUE(plan.refused.empty()) << fmt::format("{}", fmt::join(plan.refused, "\n"));
  const Report after = lint_patched(fs, plan);
  EXPECT_TRUE(after.findings.empty()) << text(after);
}

// A null list reads as an empty one in the engines (Python's None): fix puts the entries in its
// place (it refused: "it is null, not an array"), as for a GPTQ "dynamic": null, and the
// patched folder lints clean.
TEST(RuleCases, QC101FixReplacesANullList)
{
  const Tensors stored = ct_pack("model.layers.0.mlp.down_proj") +
                         bf16("model.layers.1.mlp.down_proj") + bf16("lm_head");
  const std::string ct =
    R"({"quant_method": "compressed-tensors", "format": "pack-quantized", "config_groups": )"
    R"({"group_0": {"targets": ["Linear"], "weights": {"num_bits": 4, "type": "int", )"
    R"("symmetric": true, "strategy": "group", "group_size": 32}}}, "ignore": null})";
  const std::string gptq_null = gptq_config(k_gptq_listed + R"(, "dynamic": null)");
  for (const auto& [block, tensors] :
       {std::pair{ct, stored},
        std::pair{gptq_null, gptq("model.layers.0.mlp.down_proj") +
                               bf16("model.layers.1.mlp.down_proj") + bf16("lm_head")}}) {
    const MemoryFileSystem fs = folder(config(k_llama, block), tensors);
    auto run = lint_path(fs, "m", {});
    ASSERT_TRUE(run);
    ASSERT_EQ(findings(run->report, RuleId::undeclared_unquantized).size(), 1u)
      << block << "\n"
      << text(run->report);
    const FixPlan plan = plan_fix(fs, *run, {});
    EXPECT_TRUE(plan.refused.empty()) << fmt::format("{}", fmt::join(plan.refused, "\n"));
    ASSERT_EQ(plan.edits.size(), 1u) << block;
    EXPECT_EQ(plan.edits[0].patched.find("null"), std::string::npos) << plan.edits[0].patched;
    const Report after = lint_patched(fs, plan);
    EXPECT_TRUE(after.findings.empty()) << text(after);
  }
}

namespace {

// Qwen3-Next linear attention kept BF16 in an FP8 block checkpoint (spec 5.1, R27).
Tensors
qwen3_next_fp8()
{
  const std::string a = "model.layers.0.linear_attn.";
  return bf16(a + "in_proj_qkv", 128, 64) + bf16(a + "in_proj_z", 64, 64) +
         fp8_block(a + "out_proj") + fp8_block("model.layers.0.mlp.down_proj") + bf16("lm_head");
}

std::string
fp8_not_convert(const Strings& entries)
{
  return R"({"quant_method": "fp8", "activation_scheme": "dynamic", "weight_block_size": )"
         R"([128, 128], "modules_to_not_convert": )" +
         json_list(entries) + "}";
}

// Without MTP tensors, so without num_nextn_predict_layers (QC107 would fire).
const std::string k_qwen3_next_fp8 =
  R"("architectures": ["Qwen3NextForCausalLM"], "model_type": "qwen3_next", )"
  R"("num_hidden_layers": 1)";

} // namespace

// QC121 (R27): leaf names in modules_to_not_convert; vLLM compares exactly.
TEST(RuleCases, QC121Positive)
{
  const Report r = lint_folder(
    folder(config(k_qwen3_next_fp8,
                  fp8_not_convert({"lm_head", "linear_attn.in_proj_qkv", "linear_attn.in_proj_z"})),
           qwen3_next_fp8()));
  EXPECT_EQ(messages(r, RuleId::short_fp8_entry),
            (Strings{"modules_to_not_convert entry 'linear_attn.in_proj_qkv' is not a full module "
                     "name: vLLM compares exactly and quantizes the layer anyway (BF16 cast to "
                     "FP8, no error)",
                     "modules_to_not_convert entry 'linear_attn.in_proj_z' is not a full module "
                     "name: vLLM compares exactly and quantizes the layer anyway (BF16 cast to "
                     "FP8, no error)"}))
    << text(r);
  // The consequence: vLLM alone quantizes the fused in_proj_qkvz. The fix names both modules
  // in full, as vLLM compares them.
  const auto undeclared = findings(r, RuleId::undeclared_unquantized);
  ASSERT_EQ(undeclared.size(), 1u) << text(r);
  EXPECT_EQ(engines(undeclared[0]), std::set<Engine>{Engine::vllm});
  EXPECT_EQ(undeclared[0].suggested_entries, (Strings{"model.layers.0.linear_attn.in_proj_qkv",
                                                      "model.layers.0.linear_attn.in_proj_z"}));
}

// MiMo-V2-Flash as Xiaomi publishes it in FP8 (spec 6.2): three MTP layers stored as
// model.mtp.layers.{k}, FP8 except eh_proj and self_attn.o_proj; modules_to_not_convert lists the
// main layers' o_proj and SGLang's name for the draft's, 'model.decoder.self_attn.o_proj'.
const std::string k_mimo_v2 =
  R"("architectures": ["MiMoV2FlashForCausalLM"], "model_type": "mimo_v2_flash", )"
  R"("num_hidden_layers": 1, "num_nextn_predict_layers": 3)";

Tensors
mimo_v2_fp8(bool mtp_o_proj_fp8 = false)
{
  Tensors t = bf16("lm_head", 128, 128);
  for (const std::string layer :
       {"model.layers.0", "model.mtp.layers.0", "model.mtp.layers.1", "model.mtp.layers.2"}) {
    const bool mtp = layer.starts_with("model.mtp.");
    for (const char* p : {"self_attn.q_proj", "self_attn.k_proj", "self_attn.v_proj",
                          "mlp.gate_proj", "mlp.up_proj", "mlp.down_proj"}) {
      t = t + fp8_block(layer + "." + p);
    }
    t = t + (mtp && mtp_o_proj_fp8 ? fp8_block(layer + ".self_attn.o_proj")
                                   : bf16(layer + ".self_attn.o_proj", 128, 128));
    if (mtp) {
      t = t + bf16(layer + ".eh_proj", 128, 256) + norm(layer + ".enorm", 128) +
          norm(layer + ".hnorm", 128);
    }
  }
  return t;
}

// Correct as published: vLLM builds MTP layer 0 only, its eh_proj and o_proj unquantized
// whatever the list says; SGLang builds each MTP layer under model.decoder and reads the list
// as written. No QC101, no unused entry, no short FP8 entry.
TEST(RuleCases, MimoV2PublishedFp8ListIsClean)
{
  const Report r =
    lint_folder(folder(config(k_mimo_v2, fp8_not_convert({"model.layers.0.self_attn.o_proj",
                                                          "model.decoder.self_attn.o_proj"})),
                       mimo_v2_fp8()));
  EXPECT_TRUE(r.findings.empty()) << text(r);
}

namespace {

// Qwen3-MoE in HF FP8 blocks: attention FP8, the router BF16, two experts in `layout`.
template<typename Layout>
Tensors
fp8_moe_layer(Layout layout)
{
  return experts("model.layers.0.mlp.experts", 0, 1, layout) +
         bf16("model.layers.0.mlp.gate", 2, 64) + fp8_block("model.layers.0.self_attn.o_proj") +
         bf16("lm_head");
}

const auto make_fp8_block_expert = [](const std::string& m, auto... dims) {
  return fp8_block(m, dims...);
};

Strings
every_expert_projection()
{
  Strings out;
  for (const char* e : {"0", "1"}) {
    for (const char* p : {"gate_proj", "up_proj", "down_proj"}) {
      out.push_back(fmt::format("model.layers.0.mlp.experts.{}.{}", e, p));
    }
  }
  return out;
}

} // namespace

// vLLM's and SGLang's Fp8Config ask is_layer_skipped for fused MoE layers too ("...mlp.experts",
// no key of their fused mappings), and both skip a prefix holding "experts" when an entry holding
// "experts" contains it (vLLM's quant_utils.py; SGLang's quantization/utils.py keeps the branch
// after PR 23467's dotted matching). BF16 experts listed one by one load in both (qcheck said
// vLLM quantizes every MoE under FP8: a false QC101); unlisted they fail in both.
TEST(RuleCases, Fp8MoeListedExpertByExpertLoadsInVllm)
{
  Strings listed = every_expert_projection();
  listed.push_back("model.layers.0.mlp.gate");
  listed.push_back("lm_head");
  const Report r =
    lint_folder(folder(config(k_qwen3_moe, fp8_not_convert(listed)), fp8_moe_layer(make_bf16)));
  EXPECT_TRUE(r.findings.empty()) << text(r);
  // The whole fused layer named once: the same for vLLM (exactly; SGLang reads it as a dotted
  // ancestor of every expert).
  const Report whole =
    lint_folder(folder(config(k_qwen3_moe, fp8_not_convert({"model.layers.0.mlp.experts",
                                                            "model.layers.0.mlp.gate", "lm_head"})),
                       fp8_moe_layer(make_bf16)));
  EXPECT_TRUE(whole.findings.empty()) << text(whole);
  const Report unlisted =
    lint_folder(folder(config(k_qwen3_moe, fp8_not_convert({"model.layers.0.mlp.gate", "lm_head"})),
                       fp8_moe_layer(make_bf16)));
  const auto found = findings(unlisted, RuleId::undeclared_unquantized);
  ASSERT_EQ(found.size(), 1u) << text(unlisted);
  EXPECT_EQ(engines(found[0]), (std::set<Engine>{Engine::vllm, Engine::sglang}));
}

// One expert projection listed while the experts are stored FP8: vLLM and SGLang build the whole
// MoE unquantized (the entry contains its prefix), which cannot load them (QC102), and QC105 says
// why.
TEST(RuleCases, Fp8OneListedExpertExcludesTheWholeMoeInVllm)
{
  // Short, and padded past the length from which the list is indexed (the index offers an entry
  // holding "experts" to the names it contains).
  for (const size_t padding : {0, 40}) {
    Strings listed{"model.layers.0.mlp.experts.0.gate_proj", "model.layers.0.mlp.gate", "lm_head"};
    for (size_t i = 0; i < padding; ++i) {
      listed.push_back(fmt::format("model.layers.0.self_attn.o_proj.pad{}", i));
    }
    const Report r = lint_folder(
      folder(config(k_qwen3_moe, fp8_not_convert(listed)), fp8_moe_layer(make_fp8_block_expert)));
    const auto excluded = findings(r, RuleId::excluded_but_quantized);
    ASSERT_FALSE(excluded.empty()) << padding << "\n" << text(r);
    std::set<Engine> failing;
    for (const Finding& f : excluded) {
      failing.insert(f.engines.begin(), f.engines.end());
    }
    EXPECT_TRUE(failing.contains(Engine::vllm)) << padding << "\n" << text(r);
    EXPECT_EQ(failing, (std::set<Engine>{Engine::vllm, Engine::sglang})) << padding << "\n"
                                                                         << text(r);
    const Finding partial =
      only(r, RuleId::partial_expert_exclusion,
           "modules_to_not_convert names 1 of the 6 expert projections of "
           "'model.layers.0.mlp.experts'; vLLM and SGLang then exclude the whole MoE (their FP8 "
           "rule for entries naming experts)");
    EXPECT_EQ(partial.severity, Severity::warning);
  }
}

// Two experts named: each entry contains the MoE's prefix, so each excludes it in vLLM; QC102
// names both and fix --remove-excluding removes both (it refused its own plan when it removed
// the first alone). Short and indexed lists.
TEST(RuleCases, Fp8EveryEntryExcludingAMoeIsRemoved)
{
  for (const size_t padding : {0, 40}) {
    Strings listed{"model.layers.0.mlp.gate", "lm_head", "model.layers.0.mlp.experts.0.gate_proj",
                   "model.layers.0.mlp.experts.1.up_proj"};
    for (size_t i = 0; i < padding; ++i) {
      listed.push_back(fmt::format("model.layers.0.self_attn.o_proj.pad{}", i));
    }
    MemoryFileSystem fs =
      folder(config(k_qwen3_moe, fp8_not_convert(listed)), fp8_moe_layer(make_fp8_block_expert));
    auto run = lint_path(fs, "m", {});
    ASSERT_TRUE(run);
    std::set<std::string> removed;
    for (const Finding& f : findings(run->report, RuleId::excluded_but_quantized)) {
      removed.insert(f.suggested_entries.begin(), f.suggested_entries.end());
    }
    EXPECT_EQ(removed, (std::set<std::string>{"model.layers.0.mlp.experts.0.gate_proj",
                                              "model.layers.0.mlp.experts.1.up_proj"}))
      << padding << "\n"
      << text(run->report);
    const FixPlan plan = plan_fix(fs, *run, LintOptions{}, FixOptions{true});
    EXPECT_TRUE(plan.refused.empty()) << padding << "\n"
                                      << fmt::format("{}", fmt::join(plan.refused, "\n"));
    EXPECT_EQ(plan.edits.size(), 1u) << padding;
  }
}

// FP8 lists are read without globs by both engines: a glob naming an expert names nothing, so
// it is no partial exclusion of the experts (QC105), only an unused entry (QC112).
TEST(RuleCases, Fp8GlobNamesNoExpert)
{
  const Report r = lint_folder(
    folder(config(k_qwen3_moe, fp8_not_convert({"model.layers.0.mlp.gate", "lm_head",
                                                "model.layers.*.mlp.experts.0.gate_proj"})),
           fp8_moe_layer(make_fp8_block_expert)));
  EXPECT_TRUE(findings(r, RuleId::partial_expert_exclusion).empty()) << text(r);
  EXPECT_TRUE(findings(r, RuleId::excluded_but_quantized).empty()) << text(r);
  EXPECT_EQ(findings(r, RuleId::unused_entry).size(), 1u) << text(r);
}

// explain on a module of MTP layer 1: vLLM loads no layer of it (layer 0 only), which explain
// says rather than calling the Linear "not a quantizable layer"; SGLang's draft decides it under
// model.decoder. Layer 0's module is checked by both.
TEST(RuleCases, ExplainMimoV2SaysVllmBuildsMtpLayer0Only)
{
  MemoryFileSystem fs = folder(
    config(k_mimo_v2,
           fp8_not_convert({"model.layers.0.self_attn.o_proj", "model.decoder.self_attn.o_proj"})),
    mimo_v2_fp8());
  auto run = lint_path(fs, "m", {});
  ASSERT_TRUE(run);
  const std::vector<Engine> engines{Engine::vllm, Engine::sglang};
  const auto later = explain_module(*run, "model.mtp.layers.1.mlp.down_proj", engines);
  ASSERT_TRUE(later) << later.error();
  EXPECT_NE(later->find("  vLLM: builds no layer for it: it builds MiMo-V2's MTP layer 0 only and "
                        "loads none of this layer's weights\n"),
            std::string::npos)
    << *later;
  EXPECT_EQ(later->find("not a quantizable layer"), std::string::npos) << *later;
  EXPECT_NE(later->find("  SGLang: checks 'model.decoder.mlp.down_proj'"), std::string::npos)
    << *later;
  const auto first = explain_module(*run, "model.mtp.layers.0.mlp.down_proj", engines);
  ASSERT_TRUE(first) << first.error();
  EXPECT_NE(first->find("  vLLM: checks 'model.mtp.layers.0.mlp.down_proj'"), std::string::npos)
    << *first;
  // A norm of that layer: vLLM loads none of it either; SGLang builds it, not quantizable.
  const auto norm_module = explain_module(*run, "model.mtp.layers.1.enorm", engines);
  ASSERT_TRUE(norm_module) << norm_module.error();
  EXPECT_NE(norm_module->find("  vLLM: builds no layer for it: it builds MiMo-V2's MTP layer 0"),
            std::string::npos)
    << *norm_module;
  EXPECT_NE(norm_module->find("  SGLang: not a quantizable layer (norm)"), std::string::npos)
    << *norm_module;
}

// Without SGLang's name the draft's BF16 o_proj is quantized there (QC101, SGLang alone): the
// fix names it as SGLang builds it, and verifies. An MTP o_proj stored FP8 is one vLLM builds
// unquantized (QC108) for layer 0, the only one it loads.
TEST(RuleCases, QC101MimoV2SglangNamesTheDraftModelDecoder)
{
  MemoryFileSystem fs =
    folder(config(k_mimo_v2, fp8_not_convert({"model.layers.0.self_attn.o_proj"})), mimo_v2_fp8());
  auto run = lint_path(fs, "m", {});
  ASSERT_TRUE(run);
  const auto undeclared = findings(run->report, RuleId::undeclared_unquantized);
  ASSERT_EQ(undeclared.size(), 1u) << text(run->report);
  EXPECT_EQ(engines(undeclared[0]), std::set<Engine>{Engine::sglang});
  EXPECT_EQ(undeclared[0].suggested_entries.back(), "model.decoder.self_attn.o_proj");
  const FixPlan plan = plan_fix(fs, *run, {});
  EXPECT_TRUE(plan.refused.empty()) << fmt::format("{}", fmt::join(plan.refused, "\n"));
  ASSERT_EQ(plan.edits.size(), 1u);
  EXPECT_EQ(plan.edits[0].added.back(),
            "modules_to_not_convert += \"model.decoder.self_attn.o_proj\"");

  const Report quantized_o_proj = lint_folder(folder(
    config(k_mimo_v2, fp8_not_convert({"model.layers.0.self_attn.o_proj"})), mimo_v2_fp8(true)));
  const auto plain = findings(quantized_o_proj, RuleId::draft_plain_quantized);
  ASSERT_EQ(plain.size(), 1u) << text(quantized_o_proj);
  EXPECT_EQ(plain[0].modules, Strings{"model.mtp.layers.0.self_attn.o_proj"});
  EXPECT_EQ(engines(plain[0]), std::set<Engine>{Engine::vllm});
}

// Under Quark too SGLang builds MiMo-V2's MTP eh_proj as a plain nn.Linear (the quantizable
// ReplicatedLinear is DeepSeek's and GLM's NextN eh_proj): BF16 as published it is no QC101, and
// one stored FP8 is QC108 for SGLang as well, for that module alone (the others share its name).
TEST(RuleCases, MimoV2SglangEhProjIsPlainUnderQuark)
{
  const auto tensors = [](int fp8_eh_proj) {
    Tensors t = bf16("lm_head", 64, 64) + fp8("model.layers.0.self_attn.q_proj") +
                bf16("model.layers.0.self_attn.o_proj");
    for (int k = 0; k < 3; ++k) {
      const std::string layer = fmt::format("model.mtp.layers.{}", k);
      t = t + fp8(layer + ".self_attn.q_proj") + bf16(layer + ".self_attn.o_proj") +
          (k == fp8_eh_proj ? fp8(layer + ".eh_proj", 64, 128) : bf16(layer + ".eh_proj", 64, 128));
    }
    return t;
  };
  const std::string list =
    quark({"lm_head", "model.layers.0.self_attn.o_proj", "model.decoder.self_attn.o_proj"});
  const Report published = lint_folder(folder(config(k_mimo_v2, list), tensors(-1)));
  EXPECT_TRUE(published.findings.empty()) << text(published);
  const Report one_fp8 = lint_folder(folder(config(k_mimo_v2, list), tensors(1)));
  const auto plain = findings(one_fp8, RuleId::draft_plain_quantized);
  ASSERT_EQ(plain.size(), 1u) << text(one_fp8);
  EXPECT_EQ(plain[0].modules, Strings{"model.mtp.layers.1.eh_proj"});
  EXPECT_EQ(engines(plain[0]), std::set<Engine>{Engine::sglang}); // vLLM loads MTP layer 0 only
  EXPECT_EQ(messages(one_fp8, RuleId::fused_shards_disagree),
            Strings{"draft layers built as one name 'model.eh_proj' mix stored quantized (1) and "
                    "unquantized (2) modules; one list entry decides them all"})
    << text(one_fp8);
}

// MiMo-V2 with its MTP stored BF16 throughout: fix's own patch names SGLang's model.decoder.X,
// and those entries are neither short FP8 entries (QC121) nor unused.
TEST(RuleCases, MimoV2FixPatchLintsClean)
{
  Tensors tensors = bf16("lm_head", 128, 128) + fp8_block("model.layers.0.self_attn.q_proj") +
                    bf16("model.layers.0.self_attn.o_proj", 128, 128);
  for (int k = 0; k < 3; ++k) {
    const std::string layer = fmt::format("model.mtp.layers.{}", k);
    for (const char* p : {"self_attn.q_proj", "self_attn.k_proj", "self_attn.v_proj",
                          "self_attn.o_proj", "mlp.down_proj"}) {
      tensors = tensors + bf16(layer + "." + p, 128, 128);
    }
  }
  MemoryFileSystem fs = folder(
    config(k_mimo_v2, fp8_not_convert({"lm_head", "model.layers.0.self_attn.o_proj"})), tensors);
  auto run = lint_path(fs, "m", {});
  ASSERT_TRUE(run);
  const FixPlan plan = plan_fix(fs, *run, {});
  EXPECT_TRUE(plan.refused.empty()) << fmt::format("{}", fmt::join(plan.refused, "\n"));
  ASSERT_EQ(plan.edits.size(), 1u);
  Strings patched{"lm_head", "model.layers.0.self_attn.o_proj"};
  for (const std::string& added : plan.edits[0].added) {
    const size_t open = added.find('"');
    patched.push_back(added.substr(open + 1, added.size() - open - 2));
  }
  EXPECT_NE(std::find(patched.begin(), patched.end(), "model.decoder.self_attn.qkv_proj"),
            patched.end());
  const Report after = lint_folder(folder(config(k_mimo_v2, fp8_not_convert(patched)), tensors));
  EXPECT_TRUE(after.findings.empty()) << text(after);
}

// A layer an engine builds outside the spelled roots is named in the fix only when the
// suggested entries do not already cover it as decide() sees it: SGLang's fused
// model.decoder.self_attn.fused_qkv_a_proj_with_mqa is covered by its two shards' entries
// (mapped from model.layers.61), so the fix adds no entry for it (one QC121 would flag).
TEST(RuleCases, FixNamesNoFusedLayerItsShardEntriesCover)
{
  const std::string d = "model.layers.61.";
  const Tensors tensors = fp8_block("model.layers.0.self_attn.o_proj") + bf16("lm_head", 128) +
                          bf16(d + "self_attn.q_a_proj") +
                          bf16(d + "self_attn.kv_a_proj_with_mqa") + bf16(d + "self_attn.o_proj") +
                          bf16(d + "eh_proj", 64, 128);
  MemoryFileSystem fs = folder(config(k_deepseek61, fp8_not_convert({"lm_head"})), tensors);
  auto run = lint_path(fs, "m", {});
  ASSERT_TRUE(run);
  const FixPlan plan = plan_fix(fs, *run, {});
  EXPECT_TRUE(plan.refused.empty()) << fmt::format("{}", fmt::join(plan.refused, "\n"));
  ASSERT_EQ(plan.edits.size(), 1u);
  for (const std::string& added : plan.edits[0].added) {
    EXPECT_EQ(added.find("model.decoder"), std::string::npos) << added;
  }
}

// Xiaomi MiMo (7B) with its MTP layer stored BF16 under a quantized main model: 'model.mtp_layers*'
// excludes it for no engine that loads it. vLLM builds MTP layer k under main layer k's names and
// SGLang under bare ones, so no entry excludes the draft alone: QC101 for both, no entry
// suggested (qcheck fix changes nothing), and no QC103 from the names vLLM shares.
TEST(RuleCases, QC101MimoMtpCannotBeExcludedAlone)
{
  const std::string mimo =
    R"("architectures": ["MiMoForCausalLM"], "model_type": "mimo", "num_hidden_layers": 1, )"
    R"("num_nextn_predict_layers": 1)";
  Tensors tensors = bf16("lm_head", 64, 64);
  for (const char* p : {"self_attn.q_proj", "self_attn.k_proj", "self_attn.v_proj",
                        "self_attn.o_proj", "mlp.down_proj"}) {
    tensors = tensors + fp8(fmt::format("model.layers.0.{}", p)) +
              bf16(fmt::format("model.mtp_layers.0.{}", p));
  }
  tensors = tensors + bf16("model.mtp_layers.0.input_proj", 64, 128);
  MemoryFileSystem fs =
    folder(config(mimo, modelopt("FP8", {"lm_head", "model.mtp_layers*"})), tensors);
  auto run = lint_path(fs, "m", {});
  ASSERT_TRUE(run);
  const auto undeclared = findings(run->report, RuleId::undeclared_unquantized);
  ASSERT_EQ(undeclared.size(), 1u) << text(run->report);
  EXPECT_EQ(engines(undeclared[0]), (std::set<Engine>{Engine::vllm, Engine::sglang}));
  EXPECT_TRUE(undeclared[0].suggested_entries.empty());
  EXPECT_NE(undeclared[0].fix.find("no list entry excludes this draft alone for vLLM and SGLang"),
            std::string::npos)
    << undeclared[0].fix;
  EXPECT_TRUE(findings(run->report, RuleId::fused_shards_disagree).empty()) << text(run->report);
  const FixPlan plan = plan_fix(fs, *run, {});
  EXPECT_TRUE(plan.edits.empty());
}

// SGLang builds Qwen3-Next's MTP layer 0 under main layer 0's names (qwen3_next_mtp.py: a
// one-layer Qwen3NextModel under "model"; its loader reads "mtp.layers.0.X" as
// "model.layers.0.X"), so 'mtp*' excludes the BF16 draft for vLLM and TensorRT-LLM alone. Main
// layer 0 is linear attention: the draft's self_attn names are its own, and the fix names them;
// its MLP bears main layer 0's names, which no entry can exclude alone (the fix says so).
// ModelOpt FP8: SGLang's NVFP4-only qkv_proj override stays out of the way.
namespace {

const std::string k_qwen3_next_mtp =
  R"("architectures": ["Qwen3NextForCausalLM"], "model_type": "qwen3_next", )"
  R"("num_hidden_layers": 1, "num_nextn_predict_layers": 1)";

// Main layer 0: linear attention and one expert, stored with `main`; MTP layer 0: attention and
// the same expert, BF16, and mtp.fc.
Tensors
qwen3_next_with_mtp(Tensors (*main)(const std::string&, uint64_t, uint64_t))
{
  Tensors tensors = bf16("lm_head", 128, 64) + main("model.layers.0.linear_attn.out_proj", 64, 64);
  for (const char* p :
       {"self_attn.q_proj", "self_attn.k_proj", "self_attn.v_proj", "self_attn.o_proj",
        "mlp.experts.0.gate_proj", "mlp.experts.0.up_proj", "mlp.experts.0.down_proj"}) {
    if (std::string_view(p).starts_with("mlp.")) {
      tensors = tensors + main(fmt::format("model.layers.0.{}", p), 64, 64);
    }
    tensors = tensors + bf16(fmt::format("mtp.layers.0.{}", p));
  }
  return tensors + bf16("mtp.fc", 64, 128);
}

LintRun
lint_run(const MemoryFileSystem& fs)
{
  auto run = lint_path(fs, "m", {});
  EXPECT_TRUE(run) << (run ? "" : run.error());
  return std::move(*run);
}

} // namespace

TEST(RuleCases, QC101Qwen3NextMtpBuiltUnderMainLayerNamesInSglang)
{
  const Tensors tensors = qwen3_next_with_mtp(fp8);
  const auto lint_with = [&](const Strings& ignore) {
    return lint_run(folder(config(k_qwen3_next_mtp, modelopt("FP8", ignore)), tensors));
  };
  const LintRun run = lint_with({"lm_head", "mtp*"});
  const auto undeclared = findings(run.report, RuleId::undeclared_unquantized);
  ASSERT_EQ(undeclared.size(), 1u) << text(run.report);
  EXPECT_EQ(engines(undeclared[0]), std::set<Engine>{Engine::sglang});
  // Nothing under the checkpoint's root ('mtp*' reaches no layer SGLang builds).
  EXPECT_EQ(undeclared[0].suggested_entries,
            (Strings{"model.layers.0.self_attn.qkv_proj", "model.layers.0.self_attn.o_proj"}));
  EXPECT_EQ(undeclared[0].fix,
            "add \"model.layers.0.self_attn.qkv_proj\", \"model.layers.0.self_attn.o_proj\" to "
            "config.json ignore (qcheck fix --inplace); no list entry excludes this draft alone "
            "for SGLang (see above): store it quantized as the main layers are");
  EXPECT_NE(std::find(undeclared[0].details.begin(), undeclared[0].details.end(),
                      "SGLang builds Qwen3-Next's MTP layer 0 under main layer 0's names "
                      "('model.layers.0'): no list entry excludes a module both have in one "
                      "without the other"),
            undeclared[0].details.end())
    << text(run.report);
  // With the draft's attention named as SGLang builds it, only its MLP remains, and nothing is
  // suggested for it.
  const LintRun named = lint_with(
    {"lm_head", "mtp*", "model.layers.0.self_attn.qkv_proj", "model.layers.0.self_attn.o_proj"});
  const auto left = findings(named.report, RuleId::undeclared_unquantized);
  ASSERT_EQ(left.size(), 1u) << text(named.report);
  EXPECT_EQ(engines(left[0]), std::set<Engine>{Engine::sglang});
  EXPECT_TRUE(left[0].suggested_entries.empty());
  EXPECT_TRUE(findings(named.report, RuleId::unused_entry).empty()) << text(named.report);
  // Another architecture's mtp.layers keep their names: 'mtp*' excludes them everywhere.
  std::string other = k_qwen3_next_mtp;
  other.replace(other.find("Qwen3NextForCausalLM"), 20, "Qwen3NextForCausalLX");
  const LintRun plain =
    lint_run(folder(config(other, modelopt("FP8", {"lm_head", "mtp*"})), tensors));
  EXPECT_TRUE(findings(plain.report, RuleId::undeclared_unquantized).empty()) << text(plain.report);
}

// SGLang's Qwen3-Next attention builds qkv_proj without a quantization config for modelopt_fp4
// (qwen3_next.py), main layers and the MTP layer alike: main q/k/v stored NVFP4 fail there
// (QC102), and the draft's BF16 q/k/v need no entry there (QC110 says what saves them).
TEST(RuleCases, QC102Qwen3NextNvfp4QkvProjUnquantizedInSglang)
{
  Tensors tensors = qwen3_next_with_mtp(nvfp4);
  for (const char* p : {"q_proj", "k_proj", "v_proj"}) {
    tensors = tensors + nvfp4(fmt::format("model.layers.1.self_attn.{}", p));
  }
  std::string two_layers = k_qwen3_next_mtp;
  two_layers.replace(two_layers.find("\"num_hidden_layers\": 1"), 22, "\"num_hidden_layers\": 2");
  const LintRun run =
    lint_run(folder(config(two_layers, modelopt("NVFP4", {"lm_head", "mtp*"})), tensors));
  const auto excluded = findings(run.report, RuleId::excluded_but_quantized);
  ASSERT_EQ(excluded.size(), 3u) << text(run.report);
  for (const Finding& f : excluded) {
    EXPECT_EQ(engines(f), std::set<Engine>{Engine::sglang});
    EXPECT_TRUE(f.modules.front().starts_with("model.layers.1.self_attn.")) << f.modules.front();
    EXPECT_EQ(f.details, Strings{"SGLang checks 'model.layers.1.self_attn.qkv_proj': SGLang "
                                 "builds Qwen3-Next's attention qkv_proj unquantized for "
                                 "modelopt_fp4"});
  }
  const auto undeclared = findings(run.report, RuleId::undeclared_unquantized);
  ASSERT_EQ(undeclared.size(), 1u) << text(run.report);
  EXPECT_EQ(undeclared[0].suggested_entries, Strings{"model.layers.0.self_attn.o_proj"});
  // Named by the draft's checkpoint modules, not by main layer 0's name SGLang gives them.
  only(run.report, RuleId::engine_override,
       "mtp.layers.0.self_attn.k_proj, mtp.layers.0.self_attn.q_proj, "
       "mtp.layers.0.self_attn.v_proj load only because SGLang builds Qwen3-Next's attention "
       "qkv_proj unquantized for modelopt_fp4");
  // ModelOpt FP8 builds it quantized: no override, and FP8 q/k/v load everywhere.
  Tensors fp8_tensors = qwen3_next_with_mtp(fp8);
  for (const char* p : {"q_proj", "k_proj", "v_proj"}) {
    fp8_tensors = fp8_tensors + fp8(fmt::format("model.layers.1.self_attn.{}", p));
  }
  const LintRun fp8_run =
    lint_run(folder(config(two_layers, modelopt("FP8", {"lm_head", "mtp*"})), fp8_tensors));
  EXPECT_TRUE(findings(fp8_run.report, RuleId::engine_override).empty()) << text(fp8_run.report);
  EXPECT_TRUE(findings(fp8_run.report, RuleId::excluded_but_quantized).empty())
    << text(fp8_run.report);
}

// The same NVFP4 q/k/v also listed: vLLM and TensorRT-LLM exclude them by the entries, SGLang
// by the entries and by its override. Removing the entries serves the first two alone; the
// finding says so, and SGLang's line names the override.
TEST(RuleCases, QC102Qwen3NextNvfp4QkvListedRemovalServesOtherEnginesAlone)
{
  Tensors tensors = qwen3_next_with_mtp(nvfp4);
  Strings ignore{"lm_head", "mtp*"};
  for (const char* p : {"q_proj", "k_proj", "v_proj"}) {
    tensors = tensors + nvfp4(fmt::format("model.layers.1.self_attn.{}", p));
    ignore.push_back(fmt::format("model.layers.1.self_attn.{}", p));
  }
  std::string two_layers = k_qwen3_next_mtp;
  two_layers.replace(two_layers.find("\"num_hidden_layers\": 1"), 22, "\"num_hidden_layers\": 2");
  const LintRun run = lint_run(folder(config(two_layers, modelopt("NVFP4", ignore)), tensors));
  const auto excluded = findings(run.report, RuleId::excluded_but_quantized);
  ASSERT_EQ(excluded.size(), 3u) << text(run.report);
  for (const Finding& f : excluded) {
    EXPECT_EQ(engines(f), (std::set<Engine>{Engine::vllm, Engine::sglang, Engine::trtllm}));
    // Each shard's entry: one left in the list keeps vLLM's qkv_proj shards disagreeing.
    EXPECT_EQ(f.suggested_entries,
              (Strings{"model.layers.1.self_attn.k_proj", "model.layers.1.self_attn.q_proj",
                       "model.layers.1.self_attn.v_proj"}));
    EXPECT_EQ(f.fix, "store the module unquantized (no list entry changes SGLang's choice), or, "
                     "for vLLM and TensorRT-LLM alone, remove model.layers.1.self_attn.k_proj, "
                     "model.layers.1.self_attn.q_proj, model.layers.1.self_attn.v_proj from the "
                     "list (qcheck fix --remove-excluding)");
    EXPECT_NE(std::find(f.details.begin(), f.details.end(),
                        "SGLang checks 'model.layers.1.self_attn.qkv_proj': every shard is listed "
                        "in ignore; without it, SGLang builds Qwen3-Next's attention qkv_proj "
                        "unquantized for modelopt_fp4"),
              f.details.end())
      << fmt::format("{}", fmt::join(f.details, "\n"));
  }
  const auto explained = explain_module(run, "model.layers.1.self_attn.q_proj", {Engine::sglang});
  ASSERT_TRUE(explained) << explained.error();
  EXPECT_NE(explained->find("    without the entry too: SGLang builds Qwen3-Next's attention "
                            "qkv_proj unquantized for modelopt_fp4\n"),
            std::string::npos)
    << *explained;
}

// The draft's experts stored fused (one 'mtp.layers.0.mlp.experts' module) beside main layer
// 0's per-expert ones: SGLang's fused MoE layer 'model.layers.0.mlp.experts' is main layer 0's
// too, so it is not offered as an entry (it would exclude main layer 0's FP8 experts).
TEST(RuleCases, QC101Qwen3NextFusedDraftExpertsNotNamedAfterMainLayer)
{
  Tensors tensors = qwen3_next_with_mtp(fp8);
  std::erase_if(tensors,
                [](const TensorSpec& t) { return t.name.starts_with("mtp.layers.0.mlp."); });
  tensors.push_back({"mtp.layers.0.mlp.experts.gate_up_proj", "BF16", {1, 128, 64}});
  tensors.push_back({"mtp.layers.0.mlp.experts.down_proj", "BF16", {1, 64, 64}});
  const LintRun run =
    lint_run(folder(config(k_qwen3_next_mtp, modelopt("FP8", {"lm_head", "mtp*"})), tensors));
  const auto undeclared = findings(run.report, RuleId::undeclared_unquantized);
  ASSERT_EQ(undeclared.size(), 1u) << text(run.report);
  EXPECT_NE(std::find(undeclared[0].modules.begin(), undeclared[0].modules.end(),
                      "mtp.layers.0.mlp.experts"),
            undeclared[0].modules.end())
    << text(run.report);
  EXPECT_EQ(undeclared[0].suggested_entries,
            (Strings{"model.layers.0.self_attn.qkv_proj", "model.layers.0.self_attn.o_proj"}));
}

// Main layer 0's experts kept BF16 by 'model.layers.0.mlp.experts*', the draft's stored FP8:
// SGLang excludes the draft's too (QC102), and removing the entry would quantize main layer 0's
// BF16 experts, so the finding offers no entry to remove.
TEST(RuleCases, QC102Qwen3NextDraftUnderMainEntryOffersNoRemoval)
{
  Tensors tensors = bf16("lm_head", 128, 64) + fp8("model.layers.0.linear_attn.out_proj") +
                    fp8("mtp.layers.0.self_attn.o_proj") + fp8("mtp.fc", 64, 128);
  for (const char* p : {"gate_proj", "up_proj", "down_proj"}) {
    tensors = tensors + bf16(fmt::format("model.layers.0.mlp.experts.0.{}", p)) +
              fp8(fmt::format("mtp.layers.0.mlp.experts.0.{}", p));
  }
  const LintRun run = lint_run(
    folder(config(k_qwen3_next_mtp, modelopt("FP8", {"lm_head", "model.layers.0.mlp.experts*"})),
           tensors));
  const auto excluded = findings(run.report, RuleId::excluded_but_quantized);
  ASSERT_EQ(excluded.size(), 3u) << text(run.report);
  for (const Finding& f : excluded) {
    EXPECT_EQ(engines(f), std::set<Engine>{Engine::sglang});
    EXPECT_TRUE(f.modules.front().starts_with("mtp.layers.0.mlp.experts.0.")) << f.modules.front();
    EXPECT_TRUE(f.suggested_entries.empty());
    EXPECT_EQ(f.fix, "store the module unquantized; no list entry can change the engine's choice");
  }
  // With 'mtp*' too, vLLM and TensorRT-LLM exclude the draft's experts by it: its removal is
  // offered for them alone.
  const LintRun both = lint_run(folder(
    config(k_qwen3_next_mtp, modelopt("FP8", {"lm_head", "model.layers.0.mlp.experts*", "mtp*"})),
    tensors));
  size_t experts = 0;
  for (const Finding& f : findings(both.report, RuleId::excluded_but_quantized)) {
    if (!f.modules.front().starts_with("mtp.layers.0.mlp.experts.0.")) {
      continue; // mtp.fc and o_proj: every engine excludes them by 'mtp*' alone
    }
    ++experts;
    EXPECT_EQ(engines(f), (std::set<Engine>{Engine::vllm, Engine::sglang, Engine::trtllm}));
    EXPECT_EQ(f.suggested_entries, Strings{"mtp*"});
    EXPECT_EQ(f.fix, "store the module unquantized (no list entry changes SGLang's choice), or, "
                     "for vLLM and TensorRT-LLM alone, remove mtp* from the list (qcheck fix "
                     "--remove-excluding)");
  }
  EXPECT_EQ(experts, 3u) << text(both.report);
}

// AutoRound: the draft's o_proj, which SGLang builds as 'model.layers.0.self_attn.o_proj' and
// reads by that exact key, is offered as one, as its fused qkv_proj is.
TEST(RuleCases, QC101Qwen3NextMtpAutoRoundKeysUnderSglangNames)
{
  const std::string block =
    R"({"quant_method": "auto-round", "bits": 4, "group_size": 64, "sym": true, )"
    R"("packing_format": "auto_round:auto_gptq", "extra_config": {"^mtp\\..*": {"bits": 16}}})";
  Tensors tensors = bf16("lm_head", 128, 64) + gptq("model.layers.0.linear_attn.out_proj");
  for (const char* p : {"q_proj", "k_proj", "v_proj", "o_proj"}) {
    tensors = tensors + bf16(fmt::format("mtp.layers.0.self_attn.{}", p));
  }
  const LintRun run = lint_run(folder(config(k_qwen3_next_mtp, block), tensors));
  const auto undeclared = findings(run.report, RuleId::undeclared_unquantized);
  ASSERT_EQ(undeclared.size(), 1u) << text(run.report);
  EXPECT_EQ(engines(undeclared[0]), std::set<Engine>{Engine::sglang});
  EXPECT_EQ(undeclared[0].suggested_entries,
            (Strings{"model.layers.0.self_attn.qkv_proj", "model.layers.0.self_attn.o_proj"}));
}

// SGLang builds MTP layer 0 alone: a second MTP layer gets no SGLang layer and no entry.
TEST(RuleCases, QC101Qwen3NextSecondMtpLayerNotBuiltBySglang)
{
  Tensors tensors = qwen3_next_with_mtp(fp8);
  for (const char* p : {"q_proj", "k_proj", "v_proj", "o_proj"}) {
    tensors = tensors + bf16(fmt::format("mtp.layers.1.self_attn.{}", p));
  }
  std::string two = k_qwen3_next_mtp;
  two.replace(two.find("\"num_nextn_predict_layers\": 1"), 29, "\"num_nextn_predict_layers\": 2");
  const LintRun run = lint_run(folder(config(two, modelopt("FP8", {"lm_head", "mtp*"})), tensors));
  const auto undeclared = findings(run.report, RuleId::undeclared_unquantized);
  ASSERT_EQ(undeclared.size(), 1u) << text(run.report);
  for (const std::string& m : undeclared[0].modules) {
    EXPECT_FALSE(m.starts_with("mtp.layers.1.")) << m;
  }
  EXPECT_EQ(undeclared[0].suggested_entries,
            (Strings{"model.layers.0.self_attn.qkv_proj", "model.layers.0.self_attn.o_proj"}));
}

TEST(RuleCases, QC121Negative)
{
  const Report r = lint_folder(folder(
    config(k_qwen3_next_fp8, fp8_not_convert({"lm_head", "model.layers.0.linear_attn.in_proj_qkv",
                                              "model.layers.0.linear_attn.in_proj_z"})),
    qwen3_next_fp8()));
  EXPECT_TRUE(r.findings.empty()) << text(r);
}

// vLLM's Qwen3-MoE builds its router with the model's quantization config (qwen3_moe.py): the
// short 'mlp.gate' leaves it FP8 there, so QC121 stays.
TEST(RuleCases, QC121PositiveQwen3MoeRouter)
{
  const std::string k_qwen3_moe_fp8 =
    R"("architectures": ["Qwen3MoeForCausalLM"], "model_type": "qwen3_moe", )"
    R"("num_hidden_layers": 1)";
  const Tensors tensors = fp8_block("model.layers.0.self_attn.o_proj") + bf16("lm_head") +
                          bf16("model.layers.0.mlp.gate", 4, 64) +
                          fp8_block("model.layers.0.mlp.experts.0.down_proj") +
                          fp8_block("model.layers.0.mlp.experts.0.gate_proj") +
                          fp8_block("model.layers.0.mlp.experts.0.up_proj");
  const Report r =
    lint_folder(folder(config(k_qwen3_moe_fp8, fp8_not_convert({"lm_head", "mlp.gate"})), tensors));
  EXPECT_EQ(messages(r, RuleId::short_fp8_entry),
            Strings{"modules_to_not_convert entry 'mlp.gate' is not a full module name: vLLM "
                    "compares exactly and quantizes the layer anyway (BF16 cast to FP8, no error)"})
    << text(r);
}

// MiniMax-M2 as released: modules_to_not_convert ["gate", "e_score_correction_bias",
// "lm_head"], num_mtp_modules 3. 'gate' reaches only routers, which no engine quantizes (no QC121),
// and e_score_correction_bias is a stored parameter of the MoE block (no QC112).
TEST(RuleCases, QC121NegativeMiniMaxRouterAndBiasEntries)
{
  // num_mtp_modules as released, with no MTP weights: no engine builds a MiniMax-M2 drafter
  // (vLLM's minimax_m2.py skips those layers), so no QC107 either.
  const std::string k_minimax =
    R"("architectures": ["MiniMaxM2ForCausalLM"], "model_type": "minimax_m2", )"
    R"("num_hidden_layers": 1, "num_mtp_modules": 3, "use_mtp": true)";
  const std::string moe = "model.layers.0.block_sparse_moe.";
  Tensors tensors =
    fp8_block("model.layers.0.self_attn.q_proj") + fp8_block("model.layers.0.self_attn.o_proj") +
    bf16("lm_head") +
    Tensors{{moe + "gate.weight", "F32", {4, 64}}, {moe + "e_score_correction_bias", "F32", {4}}};
  for (const char* expert : {"0", "1"}) {
    for (const char* w : {"w1", "w2", "w3"}) {
      tensors = tensors + fp8_block(fmt::format("{}experts.{}.{}", moe, expert, w));
    }
  }
  const Report r = lint_folder(folder(
    config(k_minimax, fp8_not_convert({"gate", "e_score_correction_bias", "lm_head"})), tensors));
  EXPECT_TRUE(r.findings.empty()) << text(r);
  // A parameter name no module stores is still dead, and so are a tensor's full name and a
  // bare "weight": no engine matches parameters.
  const Report typo = lint_folder(
    folder(config(k_minimax, fp8_not_convert({"gate", "e_score_correction_biass", "lm_head",
                                              "model.layers.0.self_attn.q_proj.weight", "weight"})),
           tensors));
  EXPECT_EQ(messages(typo, RuleId::unused_entry),
            (Strings{"modules_to_not_convert entry 'e_score_correction_biass' matches no module of "
                     "the checkpoint",
                     "2 modules_to_not_convert entries in a row match no module of the "
                     "checkpoint, from 'model.layers.0.self_attn.q_proj.weight' to 'weight'"}))
    << text(typo);
}

// Qwen3-Next FP8 as Qwen releases it: modules_to_not_convert names each linear-attention
// layer's A_log and dt_bias, stored parameters of linear_attn, in full. Deliberate (no QC112);
// a misspelt one, or one of a layer the checkpoint does not have, is dead.
TEST(RuleCases, QC112NegativeFullNameOfAStoredParameter)
{
  const std::string a = "model.layers.0.linear_attn.";
  const Tensors tensors = qwen3_next_fp8() + bf16(a + "conv1d", 64, 4) +
                          Tensors{{a + "A_log", "F32", {4}}, {a + "dt_bias", "BF16", {4}}};
  const Strings listed{"lm_head",     a + "A_log",       a + "conv1d",
                       a + "dt_bias", a + "in_proj_qkv", a + "in_proj_z"};
  const Report r = lint_folder(folder(config(k_qwen3_next_fp8, fp8_not_convert(listed)), tensors));
  EXPECT_TRUE(r.findings.empty()) << text(r);
  Strings typos = listed;
  typos.push_back(a + "A_logg");
  typos.push_back("lm_head.weight");
  typos.push_back("model.layers.1.linear_attn.dt_bias");
  const Report dead =
    lint_folder(folder(config(k_qwen3_next_fp8, fp8_not_convert(typos)), tensors));
  EXPECT_EQ(messages(dead, RuleId::unused_entry),
            Strings{"3 modules_to_not_convert entries in a row match no module of the checkpoint, "
                    "from 'model.layers.0.linear_attn.A_logg' to "
                    "'model.layers.1.linear_attn.dt_bias'"})
    << text(dead);
}

// DeepSeek's NextN eh_proj is a plain nn.Linear in both engines (deepseek_mtp.py,
// deepseek_nextn.py): a short 'eh_proj' entry costs nothing in vLLM, so no QC121.
TEST(RuleCases, QC121NegativeDraftPlainLinear)
{
  const Tensors tensors = deepseek_nextn(make_fp8_block, make_fp8_block);
  const Report r =
    lint_folder(folder(config(k_deepseek, fp8_not_convert({"lm_head", "eh_proj"})), tensors));
  EXPECT_TRUE(findings(r, RuleId::short_fp8_entry).empty()) << text(r);
}

// An element of another type is left out of the list, and the findings about the entries after
// it still point at their own elements.
TEST(RuleCases, QC112PointsPastElementsOfAnotherType)
{
  const std::string block =
    R"({"quant_method": "fp8", "activation_scheme": "dynamic", "weight_block_size": )"
    R"([128, 128], "modules_to_not_convert": ["lm_head", 7, "model.layers.9.mlp.down_proj"]})";
  const Report r = lint_folder(folder(config(k_qwen3_next_fp8, block), qwen3_next_fp8()));
  const Finding f = only(r, RuleId::unused_entry,
                         "modules_to_not_convert entry 'model.layers.9.mlp.down_proj' matches no "
                         "module of the checkpoint");
  EXPECT_EQ(f.pointer, "/quantization_config/modules_to_not_convert/2");
  EXPECT_EQ(findings(r, RuleId::config_invalid).size(), 1u) << text(r);
}

// A fused name reaches no stored module (q/k/v are stored): vLLM quantizes the fused layer, so
// the short entry keeps its QC121. Qwen3-VL-MoE's router takes the model's config in vLLM
// (Qwen3MoeSparseMoeBlock), so 'mlp.gate' does too.
TEST(RuleCases, QC121PositiveFusedNameAndQwen3VlMoeRouter)
{
  const std::string k_qwen3_vl_moe_fp8 =
    R"("architectures": ["Qwen3VLMoeForConditionalGeneration"], "model_type": "qwen3_vl_moe", )"
    R"("num_hidden_layers": 1)";
  const Tensors tensors =
    bf16("model.layers.0.self_attn.q_proj") + bf16("model.layers.0.self_attn.k_proj") +
    bf16("model.layers.0.self_attn.v_proj") + fp8_block("model.layers.0.self_attn.o_proj") +
    bf16("lm_head") + bf16("model.layers.0.mlp.gate", 4, 64) +
    fp8_block("model.layers.0.mlp.experts.0.down_proj") +
    fp8_block("model.layers.0.mlp.experts.0.gate_proj") +
    fp8_block("model.layers.0.mlp.experts.0.up_proj");
  const Report r = lint_folder(folder(
    config(k_qwen3_vl_moe_fp8, fp8_not_convert({"lm_head", "self_attn.qkv_proj", "mlp.gate"})),
    tensors));
  EXPECT_EQ(messages(r, RuleId::short_fp8_entry).size(), 2u) << text(r);
}

namespace {

// Qwen2.5-VL style checkpoint, compressed-tensors FP8 channel, BF16 vision tower.
const std::string k_qwen_vl =
  R"("architectures": ["Qwen2_5_VLForConditionalGeneration"], "model_type": "qwen2_5_vl", )"
  R"("text_config": {"model_type": "qwen2_5_vl_text", "num_hidden_layers": 1})";

std::string
ct_fp8_config(const Strings& ignore)
{
  return R"({"quant_method": "compressed-tensors", "format": "float-quantized", )"
         R"("config_groups": {"group_0": {"targets": ["Linear"], "weights": {"num_bits": 8, )"
         R"("type": "float", "strategy": "channel"}}}, "ignore": )" +
         json_list(ignore) + "}";
}

Tensors
qwen_vl_fp8()
{
  return bf16("model.visual.blocks.0.attn.qkv", 192, 64) + bf16("model.visual.blocks.0.attn.proj") +
         ct_fp8("model.language_model.layers.0.self_attn.o_proj") +
         ct_fp8("model.language_model.layers.0.mlp.down_proj") + bf16("lm_head");
}

} // namespace

// QC122 (R22, spec 3.3): the regex names the checkpoint root; vLLM matches `visual.X`.
TEST(RuleCases, QC122Positive)
{
  const Report r = lint_folder(folder(
    config(k_qwen_vl, ct_fp8_config({"lm_head", "re:model\\\\.visual\\\\..*"})), qwen_vl_fp8()));
  const Finding f = only(r, RuleId::regex_checkpoint_namespace,
                         "ignore entry 're:model\\.visual\\..*' is written in checkpoint "
                         "namespace; vLLM does not map regexes, and matches them against renamed "
                         "prefixes (visual.X, vision_tower.X, language_model.model.X)");
  EXPECT_EQ(f.pointer, "/quantization_config/ignore/1");
  // The consequence: both engines quantize the BF16 vision tower (SGLang's Qwen2.5-VL names it
  // visual.X too).
  const auto undeclared = findings(r, RuleId::undeclared_unquantized);
  ASSERT_EQ(undeclared.size(), 1u) << text(r);
  EXPECT_EQ(engines(undeclared[0]), (std::set<Engine>{Engine::vllm, Engine::sglang}));
}

TEST(RuleCases, QC122Negative)
{
  const Report r = lint_folder(
    folder(config(k_qwen_vl, ct_fp8_config({"lm_head", "re:.*visual\\\\..*"})), qwen_vl_fp8()));
  EXPECT_TRUE(r.findings.empty()) << text(r);
}

// llm-compressor's Qwen-VL examples list both spellings: the checkpoint-namespace regex is dead
// for vLLM, but every module it meant is excluded there by the other one, so no QC122.
TEST(RuleCases, QC122NegativeOtherEntryCoversVllm)
{
  const Report r = lint_folder(folder(
    config(k_qwen_vl, ct_fp8_config({"lm_head", "re:visual.*", "re:model\\\\.visual\\\\..*"})),
    qwen_vl_fp8()));
  EXPECT_TRUE(r.findings.empty()) << text(r);
}

// The same two answers from a list long enough to be compiled (the other entries that may cover
// a module are its candidates).
TEST(RuleCases, QC122InALongList)
{
  const auto qc122 = [](Strings list) {
    for (int i = 0; i < 20; ++i) {
      list.push_back(fmt::format("model.language_model.layers.{}.mlp.gate", i + 1));
    }
    const Report r = lint_folder(folder(config(k_qwen_vl, ct_fp8_config(list)), qwen_vl_fp8()));
    return findings(r, RuleId::regex_checkpoint_namespace).size();
  };
  EXPECT_EQ(qc122({"lm_head", "re:model\\\\.visual\\\\..*"}), 1u);
  EXPECT_EQ(qc122({"lm_head", "re:model\\\\.visual\\\\..*", "re:visual.*"}), 0u);
}

// Registry QC122: the warning is for a regex that "never meets `visual.blocks.0...`". This one
// meets both spellings (vLLM's re.match on visual.blocks.0.attn.qkv succeeds).
TEST(RuleCases, QC122NegativeRegexCoversBothNamespaces)
{
  const Report r = lint_folder(
    folder(config(k_qwen_vl, ct_fp8_config({"lm_head", "re:(model\\\\.visual|visual)\\\\..*"})),
           qwen_vl_fp8()));
  EXPECT_TRUE(r.findings.empty()) << text(r);
}

namespace {

const std::string k_qwen3_vl =
  R"("architectures": ["Qwen3VLForConditionalGeneration"], "model_type": "qwen3_vl", )"
  R"("text_config": {"model_type": "qwen3_vl_text", "num_hidden_layers": 1})";

const std::string k_gemma3 =
  R"("architectures": ["Gemma3ForConditionalGeneration"], "model_type": "gemma3", )"
  R"("text_config": {"model_type": "gemma3_text", "num_hidden_layers": 1})";

// Gemma3 in the transformers >= 4.50 layout: a BF16 SigLIP tower and projector under "model.".
Tensors
gemma3_fp8()
{
  const std::string layer = "model.vision_tower.vision_model.encoder.layers.0.";
  return bf16(layer + "self_attn.q_proj") + bf16(layer + "self_attn.k_proj") +
         bf16(layer + "self_attn.v_proj") + bf16(layer + "self_attn.out_proj") +
         bf16(layer + "mlp.fc1") + bf16(layer + "mlp.fc2") +
         ct_fp8("model.language_model.layers.0.self_attn.o_proj") +
         ct_fp8("model.language_model.layers.0.mlp.down_proj");
}

} // namespace

// SGLang's Qwen3-VL builds its vision tower with no quantization config (qwen3_vl.py since PR
// 18926), so a tower the list names only in vLLM's namespace loads there too: no QC101, and an
// info that SGLang relies on its own rule.
TEST(RuleCases, QC101NegativeQwen3VlTowerSglangBuildsUnquantized)
{
  const Report r = lint_folder(
    folder(config(k_qwen3_vl, ct_fp8_config({"lm_head", "re:visual.*"})), qwen_vl_fp8()));
  EXPECT_TRUE(findings(r, RuleId::undeclared_unquantized).empty()) << text(r);
  const auto overrides = findings(r, RuleId::engine_override);
  ASSERT_EQ(overrides.size(), 1u) << text(r);
  EXPECT_NE(overrides[0].message.find("SGLang builds Qwen3-VL's vision tower without a "
                                      "quantization config"),
            std::string::npos)
    << overrides[0].message;
}

// Qwen2.5-VL: SGLang quantizes that tower, under its own name visual.X (qwen2_5_vl.py), which
// the regex meets as vLLM's renamed prefix does.
TEST(RuleCases, QC101NegativeQwen25VlTowerRegexInEngineNamespace)
{
  const Report r = lint_folder(
    folder(config(k_qwen_vl, ct_fp8_config({"lm_head", "re:visual.*"})), qwen_vl_fp8()));
  EXPECT_TRUE(r.findings.empty()) << text(r);
  // Qwen2-VL: the same names in SGLang (qwen2_vl.py).
  const std::string k_qwen2_vl =
    R"("architectures": ["Qwen2VLForConditionalGeneration"], "model_type": "qwen2_vl", )"
    R"("text_config": {"model_type": "qwen2_vl_text", "num_hidden_layers": 1})";
  const Report qwen2 = lint_folder(
    folder(config(k_qwen2_vl, ct_fp8_config({"lm_head", "re:visual.*"})), qwen_vl_fp8()));
  EXPECT_TRUE(qwen2.findings.empty()) << text(qwen2);
}

// bitsandbytes on Qwen2.5-VL saved in transformers >= 4.52's layout: "model.visual" names no
// module either engine builds (both call the tower visual.X and map no list), so the BF16 tower
// is built 8-bit in both. fix writes "visual", a component of both engines' names of the tower
// (SGLang's attention is attn.qkv_proj, vLLM's attn.qkv), and the patched folder lints clean.
TEST(RuleCases, QC101BitsandbytesQwenVlListInCheckpointNames)
{
  const auto bnb8 = [](const std::string& m) {
    return Tensors{{m + ".weight", "I8", {64, 64}}, {m + ".SCB", "F32", {64}}};
  };
  const Tensors stored = bf16("model.visual.blocks.0.attn.qkv", 192, 64) +
                         bf16("model.visual.blocks.0.attn.proj") +
                         bnb8("model.language_model.layers.0.self_attn.o_proj") +
                         bnb8("model.language_model.layers.0.mlp.down_proj") + bf16("lm_head");
  const auto block = [](const std::string& skip) {
    return R"({"quant_method": "bitsandbytes", "load_in_8bit": true, "load_in_4bit": false, )"
           R"("llm_int8_skip_modules": )" +
           skip + "}";
  };
  const MemoryFileSystem fs =
    folder(config(k_qwen_vl, block(R"(["lm_head", "model.visual"])")), stored);
  auto run = lint_path(fs, "m", LintOptions{});
  ASSERT_TRUE(run) << run.error();
  const auto found = findings(run->report, RuleId::undeclared_unquantized);
  ASSERT_EQ(found.size(), 1u) << text(run->report);
  EXPECT_EQ(engines(found[0]), (std::set<Engine>{Engine::vllm, Engine::sglang}));
  EXPECT_EQ(found[0].modules,
            (Strings{"model.visual.blocks.0.attn.proj", "model.visual.blocks.0.attn.qkv"}));
  EXPECT_EQ(found[0].suggested_entries, Strings{"visual"});
  // Grouped under "model" with the text layers, it is named by its modules' deepest ancestor.
  EXPECT_TRUE(found[0].message.starts_with("model.visual.blocks.0.attn: 2 modules"))
    << found[0].message;
  const FixPlan plan = plan_fix(fs, *run, LintOptions{});
  EXPECT_TRUE(plan.refused.empty()) << fmt::format("{}", fmt::join(plan.refused, "\n"));
  ASSERT_EQ(plan.edits.size(), 1u);
  const Report after = lint_patched(fs, plan);
  EXPECT_TRUE(findings(after, RuleId::undeclared_unquantized).empty()) << text(after);
  const Report right =
    lint_folder(folder(config(k_qwen_vl, block(R"(["lm_head", "visual"])")), stored));
  EXPECT_TRUE(findings(right, RuleId::undeclared_unquantized).empty()) << text(right);
  // Saved in the older layout, the tower is a root of its own: one entry, the name both engines
  // give it; a text layer unquantized whole is its root in each engine's spelling.
  const Tensors old_layout =
    bf16("visual.blocks.0.attn.qkv", 192, 64) + bf16("visual.blocks.0.attn.proj") +
    bnb8("model.layers.0.self_attn.o_proj") + bnb8("model.layers.0.mlp.down_proj") +
    bf16("model.layers.1.mlp.down_proj") + bf16("model.layers.1.self_attn.o_proj") +
    bf16("lm_head");
  const Report old = lint_folder(folder(config(k_qwen_vl, block(R"(["lm_head"])")), old_layout));
  const auto undeclared = findings(old, RuleId::undeclared_unquantized);
  ASSERT_EQ(undeclared.size(), 2u) << text(old);
  EXPECT_EQ(undeclared[0].suggested_entries,
            (Strings{"language_model.model.layers.1", "model.layers.1"}));
  EXPECT_EQ(undeclared[1].suggested_entries, Strings{"visual"});
  // Those entries in a long list (compiled for other formats): each is used by an engine, and
  // only the padding is reported unused.
  std::string long_list = R"(["lm_head", "visual", "language_model.model.layers.1", )"
                          R"("model.layers.1")";
  for (int i = 0; i < 20; ++i) {
    long_list += fmt::format(R"(, "zz.pad{}")", i);
  }
  long_list += "]";
  const Report padded = lint_folder(folder(config(k_qwen_vl, block(long_list)), old_layout));
  EXPECT_TRUE(findings(padded, RuleId::undeclared_unquantized).empty()) << text(padded);
  const auto unused = findings(padded, RuleId::unused_entry);
  ASSERT_EQ(unused.size(), 1u) << text(padded);
  EXPECT_NE(unused[0].message.find("from 'zz.pad0' to 'zz.pad19'"), std::string::npos)
    << unused[0].message;
}

// transformers >= 4.52 saves Qwen2.5-VL as visual.X / model.X but names the modules
// model.visual.X / model.language_model.X in memory, where llm-compressor took its ignore entries
// from. vLLM's mapper and SGLang's (for the tower) fold both layouts to one name: such a list
// excludes the tower in a short list and a compiled one, and the reverse mix too.
TEST(RuleCases, QC101NegativeQwen25VlEntriesInTheOtherLayout)
{
  const Tensors old_layout = bf16("visual.blocks.0.attn.qkv", 192, 64) +
                             bf16("visual.blocks.0.attn.proj") +
                             ct_fp8("model.layers.0.self_attn.o_proj") +
                             ct_fp8("model.layers.0.mlp.down_proj") + bf16("lm_head");
  Strings in_memory{"lm_head", "model.visual.blocks.0.attn.qkv", "model.visual.blocks.0.attn.proj"};
  for (const size_t padding : {0, 20}) {
    for (size_t i = 0; i < padding; ++i) {
      in_memory.push_back(fmt::format("model.language_model.layers.{}.mlp.gate", i + 1));
    }
    const Report r = lint_folder(folder(config(k_qwen_vl, ct_fp8_config(in_memory)), old_layout));
    EXPECT_TRUE(findings(r, RuleId::undeclared_unquantized).empty()) << padding << text(r);
  }
  const Report reverse =
    lint_folder(folder(config(k_qwen_vl, ct_fp8_config({"lm_head", "visual.blocks.0.attn.qkv",
                                                        "visual.blocks.0.attn.proj"})),
                       qwen_vl_fp8()));
  EXPECT_TRUE(reverse.findings.empty()) << text(reverse);
}

// Gemma3: vLLM's mapper and SGLang's own names put the tower at vision_tower.X, which
// llm-compressor's usual regexes name (spec 7.4; gemma3_mm.py of both engines).
TEST(RuleCases, QC101NegativeGemma3TowerRegexInEngineNamespace)
{
  const Report r = lint_folder(folder(
    config(k_gemma3, ct_fp8_config({"lm_head", "re:vision_tower.*", "re:multi_modal_projector.*"})),
    gemma3_fp8()));
  EXPECT_TRUE(findings(r, RuleId::undeclared_unquantized).empty()) << text(r);
  EXPECT_TRUE(findings(r, RuleId::regex_checkpoint_namespace).empty()) << text(r);
  // A list long enough to be compiled finds the regexes through the renamed names too.
  Strings ignore{"lm_head", "re:vision_tower.*", "re:multi_modal_projector.*"};
  for (int i = 0; i < 20; ++i) {
    ignore.push_back(fmt::format("model.language_model.layers.{}.mlp.gate", i + 1));
  }
  const Report compiled =
    lint_folder(folder(config(k_gemma3, ct_fp8_config(ignore)), gemma3_fp8()));
  EXPECT_TRUE(findings(compiled, RuleId::undeclared_unquantized).empty()) << text(compiled);
}

// Both engines build Gemma3's language model as language_model.model.X: a regex in that
// namespace excludes a quantized layer for both (QC102), in a short list and a compiled one.
TEST(RuleCases, QC102PositiveGemma3RegexInEngineNamespace)
{
  Strings ignore{"lm_head", "re:vision_tower.*",
                 "re:language_model\\\\.model\\\\.layers\\\\.0\\\\.mlp\\\\..*"};
  for (const size_t padding : {0, 20}) {
    for (size_t i = 0; i < padding; ++i) {
      ignore.push_back(fmt::format("model.language_model.layers.{}.mlp.gate", i + 1));
    }
    const Report r = lint_folder(folder(config(k_gemma3, ct_fp8_config(ignore)), gemma3_fp8()));
    const auto excluded = findings(r, RuleId::excluded_but_quantized);
    ASSERT_EQ(excluded.size(), 1u) << padding << "\n" << text(r);
    EXPECT_EQ(engines(excluded[0]), (std::set<Engine>{Engine::vllm, Engine::sglang}));
    EXPECT_EQ(excluded[0].modules, Strings{"model.language_model.layers.0.mlp.down_proj"});
  }
}

// vLLM builds Qwen3-MoE's router with the model's quantization config (qwen3_moe.py; SGLang's
// does not): a BF16 gate the ignore list does not name exactly is QC101 for vLLM alone, and
// llm-compressor's usual regex clears it.
TEST(RuleCases, QC101PositiveQwen3MoeRouterForVllm)
{
  const std::string k_qwen3_moe_ct =
    R"("architectures": ["Qwen3MoeForCausalLM"], "model_type": "qwen3_moe", )"
    R"("num_hidden_layers": 1)";
  const Tensors tensors = ct_fp8("model.layers.0.self_attn.o_proj") +
                          bf16("model.layers.0.mlp.gate", 4, 64) +
                          ct_fp8("model.layers.0.mlp.experts.0.down_proj") +
                          ct_fp8("model.layers.0.mlp.experts.0.gate_proj") +
                          ct_fp8("model.layers.0.mlp.experts.0.up_proj") + bf16("lm_head");
  const Report r =
    lint_folder(folder(config(k_qwen3_moe_ct, ct_fp8_config({"lm_head", "mlp.gate"})), tensors));
  const auto undeclared = findings(r, RuleId::undeclared_unquantized);
  ASSERT_EQ(undeclared.size(), 1u) << text(r);
  EXPECT_EQ(engines(undeclared[0]), std::set<Engine>{Engine::vllm});
  EXPECT_EQ(undeclared[0].modules, Strings{"model.layers.0.mlp.gate"});
  const Report cleared = lint_folder(
    folder(config(k_qwen3_moe_ct, ct_fp8_config({"lm_head", "re:.*mlp.gate$"})), tensors));
  EXPECT_TRUE(cleared.findings.empty()) << text(cleared);
}

// compressed-tensors MoE: both engines decide from expert 0's projections, never the fused
// prefix (vLLM's get_moe_method, SGLang's get_moe_scheme). An entry naming the fused layer excludes
// nothing: quantized experts are fine (no QC102), BF16 ones are QC101 for both.
TEST(RuleCases, QC102NegativeCompressedTensorsFusedMoePrefixEntry)
{
  const std::string k_qwen3_moe_ct =
    R"("architectures": ["Qwen3MoeForCausalLM"], "model_type": "qwen3_moe", )"
    R"("num_hidden_layers": 1)";
  const std::string e = "model.layers.0.mlp.experts.";
  const auto moe = [&](auto make) {
    return ct_fp8("model.layers.0.self_attn.o_proj") + bf16("model.layers.0.mlp.gate", 4, 64) +
           make(e + "0.down_proj") + make(e + "0.gate_proj") + make(e + "0.up_proj") +
           make(e + "1.down_proj") + make(e + "1.gate_proj") + make(e + "1.up_proj") +
           bf16("lm_head");
  };
  const std::string block =
    ct_fp8_config({"lm_head", "re:.*mlp.gate$", "model.layers.0.mlp.experts"});
  const Report quantized = lint_folder(
    folder(config(k_qwen3_moe_ct, block), moe([](const std::string& m) { return ct_fp8(m); })));
  EXPECT_TRUE(quantized.findings.empty()) << text(quantized);
  const Report unquantized = lint_folder(
    folder(config(k_qwen3_moe_ct, block), moe([](const std::string& m) { return bf16(m); })));
  const auto undeclared = findings(unquantized, RuleId::undeclared_unquantized);
  ASSERT_EQ(undeclared.size(), 1u) << text(unquantized);
  EXPECT_EQ(engines(undeclared[0]), (std::set<Engine>{Engine::vllm, Engine::sglang}));
}

// For compressed-tensors the consequence named is that format's: expert 0 decides.
TEST(RuleCases, QC105PositiveCompressedTensorsSaysExpertZeroDecides)
{
  const std::string e0 = "model.layers.0.mlp.experts.0.";
  const Report r = lint_folder(
    folder(config(k_qwen3_moe, ct_fp8_config({"lm_head", "re:.*mlp.gate$", e0 + "gate_proj",
                                              e0 + "up_proj", e0 + "down_proj"})),
           moe_layer(bf16, bf16)));
  only(r, RuleId::partial_expert_exclusion,
       "ignore names 3 of the 6 expert projections of 'model.layers.0.mlp.experts'; vLLM and "
       "SGLang decide the whole MoE from expert 0's projections alone");
}

// Mistral3 (new layout): SGLang renames its weights to vision_tower.X and
// multi_modal_projector.X (mistral.py) and builds the projector from transformers' class; vLLM's
// mapper gives the same names. llm-compressor's usual regexes then exclude everything stored BF16.
TEST(RuleCases, QC101NegativeMistral3RegexInEngineNamespace)
{
  const std::string k_mistral3 =
    R"("architectures": ["Mistral3ForConditionalGeneration"], "model_type": "mistral3", )"
    R"("text_config": {"model_type": "mistral", "num_hidden_layers": 1})";
  const std::string tower = "model.vision_tower.transformer.layers.0.";
  const Tensors tensors = bf16(tower + "attention.q_proj") + bf16(tower + "attention.k_proj") +
                          bf16(tower + "attention.v_proj") + bf16(tower + "attention.o_proj") +
                          bf16("model.multi_modal_projector.linear_1") +
                          bf16("model.multi_modal_projector.linear_2") +
                          ct_fp8("model.language_model.layers.0.self_attn.o_proj") +
                          ct_fp8("model.language_model.layers.0.mlp.down_proj") + bf16("lm_head");
  const Report r = lint_folder(
    folder(config(k_mistral3,
                  ct_fp8_config({"lm_head", "re:vision_tower.*", "re:multi_modal_projector.*"})),
           tensors));
  EXPECT_TRUE(r.findings.empty()) << text(r);
}

// LLaVA (saved layout): a projector the list does not name is quantized by vLLM, not by SGLang,
// which takes the projector class from transformers (llava.py).
TEST(RuleCases, QC101PositiveLlavaProjectorForVllmOnly)
{
  const std::string k_llava =
    R"("architectures": ["LlavaForConditionalGeneration"], "model_type": "llava", )"
    R"("text_config": {"model_type": "llama", "num_hidden_layers": 1})";
  const Tensors tensors =
    bf16("vision_tower.vision_model.encoder.layers.0.mlp.fc1") +
    bf16("multi_modal_projector.linear_1") + bf16("multi_modal_projector.linear_2") +
    ct_fp8("language_model.model.layers.0.mlp.down_proj") + bf16("language_model.lm_head");
  const Report r = lint_folder(folder(
    config(k_llava, ct_fp8_config({"language_model.lm_head", "re:vision_tower.*"})), tensors));
  const auto undeclared = findings(r, RuleId::undeclared_unquantized);
  ASSERT_EQ(undeclared.size(), 1u) << text(r);
  EXPECT_EQ(engines(undeclared[0]), std::set<Engine>{Engine::vllm});
  EXPECT_EQ(undeclared[0].modules,
            (Strings{"multi_modal_projector.linear_1", "multi_modal_projector.linear_2"}));
}

// Llama-4 (mllama4.py of both engines): vLLM builds the vision model and the projector with
// quant_config=None, SGLang with none at all. An llm-compressor list that leaves them out, stored
// BF16, loads in both: no QC101, an info per engine; a text module left out is still found. In
// both of the checkpoint's layouts (top-level roots, and transformers' newer "model." ones).
TEST(RuleCases, QC101NegativeLlama4VisionModelBuiltUnquantized)
{
  const std::string k_llama4 =
    R"("architectures": ["Llama4ForConditionalGeneration"], "model_type": "llama4", )"
    R"("text_config": {"model_type": "llama4_text", "num_hidden_layers": 1})";
  for (const std::string root : {"", "model."}) {
    const std::string lm = root.empty() ? "language_model.model." : "model.language_model.";
    const std::string head = root.empty() ? "language_model.lm_head" : "lm_head";
    const Tensors tower = bf16(root + "vision_model.model.layers.0.self_attn.q_proj") +
                          bf16(root + "vision_model.model.layers.0.mlp.fc1") +
                          bf16(root + "vision_model.patch_embedding.linear") +
                          bf16(root + "multi_modal_projector.linear_1");
    const Tensors stored = tower + ct_fp8(lm + "layers.0.self_attn.o_proj") +
                           ct_fp8(lm + "layers.0.feed_forward.down_proj") + bf16(head);
    const Report r = lint_folder(folder(config(k_llama4, ct_fp8_config({head})), stored));
    EXPECT_TRUE(findings(r, RuleId::undeclared_unquantized).empty()) << text(r);
    const auto overrides = findings(r, RuleId::engine_override);
    ASSERT_EQ(overrides.size(), 2u) << text(r);
    std::string notes;
    for (const Finding& f : overrides) {
      notes += f.message + "\n";
    }
    EXPECT_NE(notes.find(root + "multi_modal_projector.linear_1"), std::string::npos) << notes;
    EXPECT_NE(notes.find(root + "vision_model.patch_embedding.linear"), std::string::npos) << notes;
    for (const char* engine : {"vLLM", "SGLang"}) {
      EXPECT_NE(notes.find(std::string(engine) + " builds Llama-4's vision model and projector "
                                                 "without a quantization config"),
                std::string::npos)
        << notes;
    }
    const Report text_left_out =
      lint_folder(folder(config(k_llama4, ct_fp8_config({head})),
                         tower + bf16(lm + "layers.0.self_attn.o_proj") +
                           ct_fp8(lm + "layers.0.feed_forward.down_proj") + bf16(head)));
    const auto found = findings(text_left_out, RuleId::undeclared_unquantized);
    ASSERT_EQ(found.size(), 1u) << text(text_left_out);
    EXPECT_EQ(found[0].modules, Strings{lm + "layers.0.self_attn.o_proj"});
    EXPECT_EQ(engines(found[0]), (std::set<Engine>{Engine::vllm, Engine::sglang}));
  }
}

// The checkpoint's own root in a regex meets neither engine's name.
TEST(RuleCases, QC122PositiveGemma3TowerRegexInCheckpointNamespace)
{
  const Report r = lint_folder(
    folder(config(k_gemma3, ct_fp8_config({"lm_head", "re:model\\\\.vision_tower\\\\..*"})),
           gemma3_fp8()));
  EXPECT_EQ(findings(r, RuleId::regex_checkpoint_namespace).size(), 1u) << text(r);
  const auto undeclared = findings(r, RuleId::undeclared_unquantized);
  ASSERT_EQ(undeclared.size(), 1u) << text(r);
  EXPECT_EQ(engines(undeclared[0]), (std::set<Engine>{Engine::vllm, Engine::sglang}));
}

namespace {

MemoryFileSystem
qc112_folder(bool typo)
{
  Strings ignore{"lm_head", "model.layers.1*"};
  if (typo) {
    ignore.push_back("model.layers.7.mlp.down_proj");
  }
  return folder(config(k_llama, modelopt("NVFP4", ignore)), llama_nvfp4_with_bf16_layer1());
}

} // namespace

// QC123: the baseline accepted the QC112 finding; the typo was fixed since.
TEST(RuleCases, QC123Positive)
{
  const std::string written = render_baseline({lint_folder(qc112_folder(true))});
  const auto baseline = parse_baseline("baseline.json", written);
  ASSERT_TRUE(baseline) << baseline.error();
  std::vector<Report> reports{lint_folder(qc112_folder(false))};
  const Report stale = apply_baseline(*baseline, "baseline.json", reports);
  EXPECT_EQ(stale.root, "baseline.json");
  const Finding f = only(stale, RuleId::stale_baseline_entry,
                         "baseline entry QC112 for m/config.json matches no finding any more: "
                         "\"ignore entry 'model.layers.7.mlp.down_proj' matches no module of the "
                         "checkpoint\"");
  EXPECT_EQ(f.pointer, "/findings/0");
  EXPECT_TRUE(reports[0].findings.empty()) << text(reports[0]);
}

TEST(RuleCases, QC123Negative)
{
  const std::string written = render_baseline({lint_folder(qc112_folder(true))});
  const auto baseline = parse_baseline("baseline.json", written);
  ASSERT_TRUE(baseline) << baseline.error();
  std::vector<Report> reports{lint_folder(qc112_folder(true))};
  const Report stale = apply_baseline(*baseline, "baseline.json", reports);
  EXPECT_TRUE(stale.findings.empty()) << text(stale);
  EXPECT_TRUE(reports[0].findings.empty()) << text(reports[0]); // accepted by the baseline
}

namespace {

// Qwen3.5 compressed-tensors W4A16 with a BF16 mtp.* draft whose attention the drafter fuses.
Tensors
qwen35_ct_draft_attention()
{
  const std::string a = "mtp.layers.0.self_attn.";
  return ct_pack("model.layers.0.self_attn.o_proj") + ct_pack("model.layers.0.mlp.down_proj") +
         bf16("lm_head") + bf16("mtp.fc", 64, 128) + bf16(a + "q_proj") + bf16(a + "k_proj") +
         bf16(a + "v_proj") + bf16(a + "o_proj");
}

const Strings k_draft_ignore{"lm_head",
                             "mtp.fc",
                             "mtp.layers.0.self_attn.q_proj",
                             "mtp.layers.0.self_attn.k_proj",
                             "mtp.layers.0.self_attn.v_proj",
                             "mtp.layers.0.self_attn.o_proj"};

} // namespace

// QC125: neither vLLM nor SGLang has an FP8 method for a token embedding (compressed-tensors',
// fp8's and ModelOpt's get_quant_method give it nothing FP8; vLLM's compressed-tensors embedding
// method refuses FP8), so an embedding stored FP8 cannot load. A DeepSeek-style draft's own
// embedding is read by vLLM for the first draft layer (deepseek_mtp.py renames
// model.layers.N.embed_tokens to the shared model.embed_tokens, later layers skipped) and
// skipped by SGLang's NextN loader ("use shared head and embed weights from target model").
TEST(RuleCases, QC125Positive)
{
  const Report r = lint_folder(
    folder(config(k_deepseek, ct_fp8_config({"lm_head", "re:.*shared_head.*", "re:.*eh_proj"})),
           deepseek_nextn(make_ct_fp8, make_ct_fp8) + ct_fp8("model.embed_tokens", 256, 64) +
             ct_fp8("model.layers.1.embed_tokens", 256, 64)));
  const auto found = findings(r, RuleId::quantized_embedding);
  ASSERT_EQ(found.size(), 2u) << text(r);
  EXPECT_EQ(found[0].message, "token embedding 'model.embed_tokens' is stored FP8, but vLLM and "
                              "SGLang build it unquantized and cannot load it");
  EXPECT_EQ(engines(found[0]), (std::set<Engine>{Engine::vllm, Engine::sglang}));
  EXPECT_EQ(found[1].message, "token embedding 'model.layers.1.embed_tokens' is stored FP8, but "
                              "vLLM builds it unquantized and cannot load it");
  EXPECT_EQ(engines(found[1]), std::set<Engine>{Engine::vllm});
  // Located at the embedding's weight, as other findings about a stored module.
  EXPECT_EQ(found[0].file, "model.safetensors");
  EXPECT_EQ(r.findings.size(), 2u) << text(r);
}

// No finding for: embeddings stored BF16; a quantized embedding that is not a vocabulary one (a
// position embedding); a weight-only INT one (vLLM's compressed-tensors builds those a group
// targets); an NVFP4 one (vLLM's ModelOpt builds those under nvfp4_embed); a second draft
// layer's own embedding, which vLLM skips for the first one's.
TEST(RuleCases, QC125Negative)
{
  const Strings ignore{"lm_head", "re:.*shared_head.*", "re:.*eh_proj"};
  const Tensors body = deepseek_nextn(make_ct_fp8, make_ct_fp8);
  const Report r = lint_folder(folder(config(k_deepseek, ct_fp8_config(ignore)),
                                      body + bf16("model.embed_tokens", 256, 64) +
                                        bf16("model.layers.1.embed_tokens", 256, 64)));
  EXPECT_TRUE(r.findings.empty()) << text(r);
  for (const Tensors& embeddings :
       {bf16("model.embed_tokens", 256, 64) + ct_fp8("model.embed_positions", 256, 64),
        ct_pack("model.embed_tokens", 256, 64), nvfp4("model.embed_tokens", 256, 64)}) {
    const Report other =
      lint_folder(folder(config(k_deepseek, ct_fp8_config(ignore)), body + embeddings));
    EXPECT_TRUE(findings(other, RuleId::quantized_embedding).empty()) << text(other);
  }
  const std::string two_drafts = R"("architectures": ["DeepseekV3ForCausalLM"], )"
                                 R"("model_type": "deepseek_v3", "num_hidden_layers": 1, )"
                                 R"("num_nextn_predict_layers": 2, "q_lora_rank": 64)";
  const Tensors second = bf16("model.layers.2.eh_proj", 64, 128) + norm("model.layers.2.enorm") +
                         norm("model.layers.2.hnorm") + norm("model.layers.2.shared_head.norm") +
                         bf16("model.layers.2.shared_head.head") +
                         ct_fp8("model.layers.2.self_attn.o_proj") +
                         ct_fp8("model.layers.2.mlp.down_proj");
  const Report drafts = lint_folder(folder(config(two_drafts, ct_fp8_config(ignore)),
                                           body + second + bf16("model.embed_tokens", 256, 64) +
                                             ct_fp8("model.layers.1.embed_tokens", 256, 64) +
                                             ct_fp8("model.layers.2.embed_tokens", 256, 64)));
  const auto found = findings(drafts, RuleId::quantized_embedding);
  ASSERT_EQ(found.size(), 1u) << text(drafts);
  EXPECT_EQ(found[0].modules, Strings{"model.layers.1.embed_tokens"});
}

// QC124 (R37): the draft's q/k/v are listed, the fused qkv_proj is not.
TEST(RuleCases, QC124Positive)
{
  const Report r = lint_folder(
    folder(config(k_qwen35_text, ct_w4a16(k_draft_ignore)), qwen35_ct_draft_attention()));
  const Finding f = only(r, RuleId::fused_draft_shards,
                         "ignore names k_proj, q_proj, v_proj of draft layer "
                         "'mtp.layers.0.self_attn.qkv_proj' but not the fused name; a drafter "
                         "without packed_modules_mapping matches "
                         "'mtp.layers.0.self_attn.qkv_proj' literally");
  EXPECT_EQ(f.suggested_entries, Strings{"mtp.layers.0.self_attn.qkv_proj"});
  EXPECT_EQ(f.file, "config.json");
  EXPECT_EQ(f.pointer, "/quantization_config/ignore");
}

TEST(RuleCases, QC124Negative)
{
  Strings ignore = k_draft_ignore;
  ignore.push_back("mtp.layers.0.self_attn.qkv_proj");
  const Report r =
    lint_folder(folder(config(k_qwen35_text, ct_w4a16(ignore)), qwen35_ct_draft_attention()));
  EXPECT_TRUE(r.findings.empty()) << text(r);
}

// QC124 is about fused linears: a draft MoE whose experts are listed one by one is matched
// expert by expert (Quark's check_children, spec 5.3; compressed-tensors' expert-0 probe, 3.3).
// Its q/k/v without qkv_proj are still reported.
TEST(RuleCases, QC124NegativeDraftExpertsListedOneByOne)
{
  const std::string a = "mtp.layers.0.self_attn.";
  const std::string moe = "mtp.layers.0.mlp.experts";
  Strings ignore = k_draft_ignore;
  for (int e = 0; e <= 1; ++e) {
    for (const char* p : {"gate_proj", "up_proj", "down_proj"}) {
      ignore.push_back(fmt::format("{}.{}.{}", moe, e, p));
    }
  }
  const Report r = lint_folder(
    folder(config(k_qwen35_text, ct_w4a16(ignore)),
           qwen35_ct_draft_attention() +
             experts(moe, 0, 1, [](const std::string& m, uint64_t, uint64_t) { return bf16(m); })));
  only(r, RuleId::fused_draft_shards,
       "ignore names k_proj, q_proj, v_proj of draft layer 'mtp.layers.0.self_attn.qkv_proj' but "
       "not the fused name; a drafter without packed_modules_mapping matches "
       "'mtp.layers.0.self_attn.qkv_proj' literally");
}

// Every rule of the registry has its pair above.
TEST(RuleCases, EveryRuleHasAPositiveAndANegativeCase)
{
  const ::testing::UnitTest& unit = *::testing::UnitTest::GetInstance();
  std::set<std::string> names;
  for (int i = 0; i < unit.total_test_suite_count(); ++i) {
    const ::testing::TestSuite& suite = *unit.GetTestSuite(i);
    if (std::string(suite.name()) != "RuleCases") {
      continue;
    }
    for (int j = 0; j < suite.total_test_count(); ++j) {
      names.insert(suite.GetTestInfo(j)->name());
    }
  }
  for (const Rule& r : all_rules()) {
    EXPECT_TRUE(names.contains(std::string(r.code) + "Positive")) << r.code;
    EXPECT_TRUE(names.contains(std::string(r.code) + "Negative")) << r.code;
  }
}

// What explain --entries says of each exclusion entry, found the slow way: every entry against
// every layer's names (a compressed-tensors fused MoE's probe names alone; SGLang's NextN draft
// reading renamed entries), and an entry deciding none against every module.
std::string
entries_by_scan(const LintRun& run, const std::vector<Engine>& engines)
{
  std::string out;
  for (const ConfigSource& s : run.declaration.sources) {
    out += fmt::format("{} ({}, {}):\n", s.file, to_string(s.format), s.list_key);
    for (const std::string_view key : s.excludes) {
      out += fmt::format("  '{}'\n", key);
      for (const Engine engine : engines) {
        if (!engine_reads(engine, s.format)) {
          continue;
        }
        Strings covered;
        for (const EngineLayer& layer :
             engine_layers(engine, run.inventory, run.drafts, run.declaration.model)) {
          const auto mapped = engine == Engine::sglang && layer.draft
                                ? sglang_draft_entry(s.format, run.declaration.model, key)
                                : std::nullopt;
          const std::string_view read = mapped ? std::string_view(*mapped) : key;
          Strings names = fused_moe_probe_names(layer);
          if (s.format != QuantFormat::compressed_tensors || names.empty()) {
            names = {layer.prefix};
            for (size_t j = 0; j < layer.shards.size(); ++j) {
              names.emplace_back(layer.shards[j]);
            }
          }
          if (std::any_of(names.begin(), names.end(), [&](const std::string& name) {
                return entry_matches(engine, s.format, read, name);
              })) {
            covered.push_back(layer.prefix);
          }
        }
        const auto other = std::find_if(
          run.inventory.modules.begin(), run.inventory.modules.end(),
          [&](const Module& m) { return entry_matches(engine, s.format, key, m.name); });
        if (covered.empty() && other != run.inventory.modules.end() &&
            s.format == QuantFormat::compressed_tensors && other->role == ModuleRole::expert) {
          // The probe names of the MoE layer holding it.
          const auto k = static_cast<uint32_t>(other - run.inventory.modules.begin());
          for (const EngineLayer& layer :
               engine_layers(engine, run.inventory, run.drafts, run.declaration.model)) {
            if (std::find(layer.modules.begin(), layer.modules.end(), k) != layer.modules.end() &&
                !fused_moe_probe_names(layer).empty()) {
              out += fmt::format("    {}: nothing (it names expert module {}; {} decides its "
                                 "MoE by {} alone)\n",
                                 display_name(engine), other->name, display_name(engine),
                                 fmt::join(fused_moe_probe_names(layer), ", "));
              covered.push_back(""); // said
              break;
            }
          }
          if (!covered.empty()) {
            continue;
          }
        }
        if (covered.empty() && other != run.inventory.modules.end()) {
          const bool quantizable =
            other->role == ModuleRole::linear || other->role == ModuleRole::expert ||
            other->role == ModuleRole::fused_experts || other->role == ModuleRole::lm_head;
          out += quantizable
                   ? fmt::format("    {}: nothing (it names checkpoint module {}, which "
                                 "this engine checks under another name)\n",
                                 display_name(engine), other->name)
                   : fmt::format("    {}: no quantizable layer (names {} modules such "
                                 "as {})\n",
                                 display_name(engine), to_string(other->role), other->name);
          continue;
        }
        const size_t shown = std::min<size_t>(covered.size(), 4);
        out += covered.empty()
                 ? fmt::format("    {}: nothing\n", display_name(engine))
                 : fmt::format("    {}: {} layer{}: {}{}\n", display_name(engine), covered.size(),
                               covered.size() == 1 ? "" : "s",
                               fmt::join(covered.begin(), covered.begin() + shown, ", "),
                               covered.size() > shown ? ", ..." : "");
      }
    }
  }
  return out;
}

// explain --entries finds what each entry decides from the list's index (each layer's and
// module's names searched once): the same text as the slow way, for ModelOpt (globs,
// substrings, SGLang's renamed NextN entries), compressed-tensors (regexes, a fused MoE's probe
// names, an entry for an expert the engines never look up) and FP8 lists, each also padded past
// lint's index threshold.
TEST(RuleCases, ExplainEntriesAgreeWithTheScanOfEveryEntry)
{
  const auto padded = [](Strings list) {
    for (int i = 0; i < 20; ++i) {
      list.push_back(fmt::format("model.nowhere.{}", i));
    }
    return list;
  };
  const std::vector<Engine> all{Engine::vllm, Engine::sglang, Engine::trtllm};
  const auto compare = [&](const std::function<MemoryFileSystem(const Strings&)>& make,
                           const Strings& list, const std::string& expected_line) {
    for (const Strings& entries : {list, padded(list)}) {
      MemoryFileSystem fs = make(entries);
      auto run = lint_path(fs, "m", {});
      ASSERT_TRUE(run);
      const std::string text = explain_entries(*run, all);
      EXPECT_EQ(text, entries_by_scan(*run, all));
      EXPECT_NE(text.find(expected_line), std::string::npos) << text;
    }
  };
  const std::string d = "model.layers.61.";
  compare(
    [&](const Strings& list) {
      return folder(config(k_deepseek61, modelopt("FP8", list)),
                    deepseek_nextn(make_fp8, make_bf16, false, 61));
    },
    {"lm_head", "model.layers.61*", d + "mlp.down_proj", "self_attn", "*o_proj",
     "model.layers.0.mlp.gate", "model.embed_tokens", "layers.6"},
    "  'model.layers.61*'\n    vLLM: 4 layers: model.layers.61.eh_proj, "
    "model.layers.61.mlp.down_proj, model.layers.61.self_attn.o_proj, "
    "model.layers.61.shared_head.head\n    SGLang: 2 layers: model.decoder.mlp.down_proj, "
    "model.decoder.self_attn.o_proj\n");
  compare(
    [&](const Strings& list) {
      return folder(ct_fused_experts_config(list), ct_fused_experts_tensors());
    },
    {"lm_head", "model.layers.0.mlp.experts.0.gate_proj", "model.layers.0.mlp.experts.0.up_proj",
     "model.layers.0.mlp.experts.0.down_proj", "model.layers.0.mlp.experts",
     "model.layers.0.mlp.router", R"(re:.*self_attn\\..*)", "re:.*experts.*"},
    "  'model.layers.0.mlp.experts.0.up_proj'\n    vLLM: 1 layer: model.layers.0.mlp.experts\n");
  // A one-layer MoE of two experts stored one by one, compressed-tensors FP8.
  const auto per_expert = [](const std::string& model, const std::string& moe,
                             const Strings& projections) {
    Tensors tensors = ct_fp8("model.layers.0.self_attn.o_proj") + bf16("lm_head", 128);
    for (int e = 0; e < 2; ++e) {
      for (const std::string& w : projections) {
        tensors = tensors + ct_fp8(fmt::format("{}.{}.{}", moe, e, w));
      }
    }
    return [=](const Strings& list) {
      return folder(
        config(model, R"({"quant_method": "compressed-tensors", "format": "float-quantized", )"
                      R"("config_groups": {"group_0": {"targets": ["Linear"], "weights": )"
                      R"({"num_bits": 8, "type": "float", "strategy": "channel"}}}, "ignore": )" +
                        json_list(list) + "}"),
        tensors);
    };
  };
  // Qwen3-MoE: an entry for expert 1 decides nothing.
  const std::string moe = "model.layers.0.mlp.experts";
  compare(per_expert(R"("architectures": ["Qwen3MoeForCausalLM"], "model_type": "qwen3_moe", )"
                     R"("num_hidden_layers": 1)",
                     moe, {"gate_proj", "up_proj", "down_proj"}),
          {"lm_head", moe + ".1.gate_proj", moe + ".0.up_proj"},
          "  'model.layers.0.mlp.experts.1.gate_proj'\n    vLLM: nothing (it names expert module "
          "model.layers.0.mlp.experts.1.gate_proj; vLLM decides its MoE by "
          "model.layers.0.mlp.experts.0.gate_proj, model.layers.0.mlp.experts.0.up_proj, "
          "model.layers.0.mlp.experts.0.down_proj alone)\n");
  // Mixtral's experts (w1, w2, w3) are looked up as gate_proj, up_proj and down_proj: an entry
  // for expert 0's w1 decides nothing either.
  const std::string mixtral_moe = "model.layers.0.block_sparse_moe.experts";
  compare(per_expert(R"("architectures": ["MixtralForCausalLM"], "model_type": "mixtral", )"
                     R"("num_hidden_layers": 1)",
                     mixtral_moe, {"w1", "w2", "w3"}),
          {"lm_head", mixtral_moe + ".0.w1"},
          "    vLLM: nothing (it names expert module model.layers.0.block_sparse_moe.experts.0.w1; "
          "vLLM decides its MoE by model.layers.0.block_sparse_moe.experts.0.gate_proj, "
          "model.layers.0.block_sparse_moe.experts.0.up_proj, "
          "model.layers.0.block_sparse_moe.experts.0.down_proj alone)\n");
  compare(
    [&](const Strings& list) {
      return folder(config(k_deepseek61, fp8_not_convert(list)),
                    deepseek_nextn(make_fp8, make_bf16, false, 61));
    },
    {"lm_head", d + "eh_proj", d + "self_attn.o_proj", d + "mlp", "model.layers.0.self_attn"},
    "  'model.layers.61.eh_proj'\n    vLLM: 1 layer: model.layers.61.eh_proj\n");
}

namespace {

// LongCat-Flash with "mtp" in disable_quant_module (vLLM builds the whole drafter unquantized,
// longcat_flash_mtp.py), AWQ with an empty modules_to_not_convert (vLLM infers the rest from the
// stored dtypes).
Report
lint_longcat_awq(const Tensors& draft)
{
  return lint_folder(
    folder(config(R"("architectures": ["LongcatFlashForCausalLM"], "model_type": "longcat_flash", )"
                  R"("num_hidden_layers": 1, "num_nextn_predict_layers": 1, )"
                  R"("disable_quant_module": ["mtp"])",
                  R"({"quant_method": "awq", "bits": 4, "group_size": 64, "zero_point": true, )"
                  R"("version": "gemm", "modules_to_not_convert": []})"),
           awq("model.layers.0.mlp.down_proj") + draft + bf16("lm_head")));
}

} // namespace

// QC102 (R35): a hard-coded override on a layer vLLM would otherwise take from the stored dtypes.
// The drafter stored AWQ is built unquantized: its qweight has no parameter to load into.
TEST(RuleCases, QC102PositiveOverrideOnALayerInferredFromDtypes)
{
  const Report r = lint_longcat_awq(awq("model.mtp.layers.0.self_attn.o_proj"));
  const Finding f = only(r, RuleId::excluded_but_quantized,
                         "'model.mtp.layers.0.self_attn.o_proj' is stored quantized but vLLM "
                         "builds it unquantized");
  EXPECT_EQ(f.details, Strings{"vLLM checks 'model.mtp.layers.0.self_attn.o_proj': "
                               "disable_quant_module lists \"mtp\""});
  // The override is a config key's: lifting it is the other remedy.
  EXPECT_EQ(f.fix, "store the module unquantized, or remove \"mtp\" from disable_quant_module in "
                   "config.json; no list entry can change the engine's choice");
}

TEST(RuleCases, QC102NegativeOverrideOnALayerInferredFromDtypes)
{
  const Report r = lint_longcat_awq(bf16("model.mtp.layers.0.self_attn.o_proj"));
  EXPECT_TRUE(findings(r, RuleId::excluded_but_quantized).empty()) << text(r);
  for (const Finding& f : findings(r, RuleId::undeclared_unquantized)) {
    EXPECT_FALSE(engines(f).contains(Engine::vllm)) << text(r);
  }
}

// QC115 once for a regex SGLang's DeepSeek NextN loader rewrites: the rewritten text fails the
// same way, and the finding quotes the entry as written, at its place in the list.
TEST(RuleCases, QC115OnceForARegexSglangRewritesForTheNextNDraft)
{
  const Tensors stored = deepseek_nextn(make_ct_fp8, make_ct_fp8, false, 61);
  const std::string bad = "re:(?<!x)model.layers.61.mlp.*";
  const auto ct_config = [](const Strings& targets, const Strings& ignore) {
    return R"({"quant_method": "compressed-tensors", "format": "float-quantized", )"
           R"("config_groups": {"group_0": {"targets": )" +
           json_list(targets) +
           R"(, "weights": {"num_bits": 8, "type": "float", "strategy": "tensor"}}}, )"
           R"("ignore": )" +
           json_list(ignore) + "}";
  };
  const Report r =
    lint_folder(folder(config(k_deepseek61, ct_config({"Linear"}, {"lm_head", bad})), stored));
  const auto found = findings(r, RuleId::unevaluable_entry);
  ASSERT_EQ(found.size(), 1u) << text(r);
  EXPECT_NE(found[0].message.find("'" + bad + "'"), std::string::npos) << found[0].message;
  EXPECT_EQ(found[0].pointer, "/quantization_config/ignore/1");
  // Two entries that read the same once rewritten, reached by SGLang's draft alone (the first two
  // regexes take the main layers and vLLM's draft): both are reported, each where it is.
  const Report two = lint_folder(folder(
    config(k_deepseek61,
           ct_config({"Linear"},
                     {"lm_head", "re:model\\\\.layers\\\\.([0-9]|[1-5][0-9]|60)\\\\..*",
                      "re:model\\\\.layers\\\\.6[1]\\\\..*", bad, "re:(?<!x)model.decoder.mlp.*"})),
    stored));
  std::set<std::string> pointers;
  for (const Finding& f : findings(two, RuleId::unevaluable_entry)) {
    pointers.insert(f.pointer);
  }
  EXPECT_EQ(pointers, (std::set<std::string>{"/quantization_config/ignore/3",
                                             "/quantization_config/ignore/4"}))
    << text(two);
  // The same for a target regex, at its group's targets.
  const Report t =
    lint_folder(folder(config(k_deepseek61, ct_config({"Linear", bad}, {"lm_head"})), stored));
  const auto target = findings(t, RuleId::unevaluable_entry);
  ASSERT_EQ(target.size(), 1u) << text(t);
  EXPECT_NE(target[0].message.find("'" + bad + "'"), std::string::npos) << target[0].message;
  EXPECT_EQ(target[0].pointer, "/quantization_config/config_groups/group_0/targets");
}

namespace {

// Kimi-K2.5 as moonshotai stores it: compressed-tensors W4A16 under text_config, BF16 attention,
// shared experts, dense MLP, head, MoonViT tower and projector; INT4 routed experts.
// Kimi-K2.5's model keys, for a config.json whose quantization block is its top level's.
std::string
kimi_k25_model(int layers)
{
  return fmt::format(
    R"("architectures": ["KimiK25ForConditionalGeneration"], "model_type": "kimi_k25", )"
    R"("text_config": {{"architectures": ["DeepseekV3ForCausalLM"], "model_type": "kimi_k2", )"
    R"("num_hidden_layers": {}, "num_nextn_predict_layers": 0}})",
    layers);
}

std::string
kimi_k25_config(const std::string& quantization)
{
  return R"({"architectures": ["KimiK25ForConditionalGeneration"], "model_type": "kimi_k25", )"
         R"("text_config": {"architectures": ["DeepseekV3ForCausalLM"], "model_type": "kimi_k2", )"
         R"("num_hidden_layers": 2, "num_nextn_predict_layers": 0, "quantization_config": )" +
         quantization + "}}\n";
}

Tensors
kimi_k25_tensors()
{
  const std::string l = "language_model.model.layers.";
  Tensors t = bf16(l + "0.self_attn.o_proj") + bf16(l + "0.mlp.down_proj") +
              bf16(l + "0.mlp.gate_proj") + bf16(l + "0.mlp.up_proj") +
              bf16(l + "1.self_attn.o_proj") + bf16(l + "1.mlp.shared_experts.down_proj") +
              bf16(l + "1.mlp.gate", 2, 64) + bf16("language_model.lm_head");
  for (int e = 0; e < 2; ++e) {
    for (const char* p : {"gate_proj", "up_proj", "down_proj"}) {
      t = t + ct_pack(fmt::format("{}1.mlp.experts.{}.{}", l, e, p));
    }
  }
  const std::string b = "vision_tower.encoder.blocks.0.";
  return t + bf16(b + "wqkv", 192, 64) + bf16(b + "wo") + bf16(b + "mlp.fc0") +
         bf16(b + "mlp.fc1") + bf16("mm_projector.proj.0", 256, 256) +
         bf16("mm_projector.proj.2", 64, 256);
}

} // namespace

// Kimi-K2.5 (kimi_k25.py of both engines): SGLang builds the MoonViT tower and the projector
// with no quantization config (the tower gets one for ModelSlim only), vLLM both for
// compressed-tensors. A list without vision entries loads in both: no QC101, an info per
// engine instead.
TEST(RuleCases, QC101NegativeKimiK25TowerAndProjectorBuiltUnquantized)
{
  const Report r = lint_folder(
    folder(kimi_k25_config(ct_w4a16({"lm_head", "re:.*self_attn.*", "re:.*shared_experts.*",
                                     "re:.*mlp\\\\.(gate|up|gate_up|down)_proj.*"})),
           kimi_k25_tensors()));
  EXPECT_TRUE(findings(r, RuleId::undeclared_unquantized).empty()) << text(r);
  const auto overrides = findings(r, RuleId::engine_override);
  std::string notes;
  for (const Finding& f : overrides) {
    notes += f.message + "\n";
  }
  EXPECT_NE(notes.find("vision_tower.encoder.blocks.0.wqkv"), std::string::npos) << notes;
  EXPECT_NE(notes.find("mm_projector.proj.0"), std::string::npos) << notes;
  EXPECT_NE(notes.find("SGLang builds Kimi-K2.5's vision tower and projector without a "
                       "quantization config"),
            std::string::npos)
    << notes;
  EXPECT_NE(notes.find("vLLM builds Kimi-K2.5's vision tower and projector without a "
                       "quantization config for compressed-tensors"),
            std::string::npos)
    << notes;
}

// Listed, they raise nothing at all; the override reaches no text module: routed experts
// stored BF16 are still found for both engines.
TEST(RuleCases, QC101PositiveKimiK25TextModuleStillChecked)
{
  const Strings ignore{"lm_head",
                       "re:.*self_attn.*",
                       "re:.*shared_experts.*",
                       "re:.*mlp\\\\.(gate|up|gate_up|down)_proj.*",
                       "re:vision_tower.*",
                       "re:mm_projector.*"};
  const Report clean = lint_folder(folder(kimi_k25_config(ct_w4a16(ignore)), kimi_k25_tensors()));
  EXPECT_TRUE(clean.findings.empty()) << text(clean);
  Tensors stored = kimi_k25_tensors();
  std::erase_if(stored,
                [](const TensorSpec& t) { return t.name.find(".experts.") != std::string::npos; });
  for (int e = 0; e < 2; ++e) {
    for (const char* p : {"gate_proj", "up_proj", "down_proj"}) {
      stored = stored + bf16(fmt::format("language_model.model.layers.1.mlp.experts.{}.{}", e, p));
    }
  }
  const Report r = lint_folder(folder(kimi_k25_config(ct_w4a16(ignore)), stored));
  const auto found = findings(r, RuleId::undeclared_unquantized);
  ASSERT_EQ(found.size(), 1u) << text(r);
  EXPECT_EQ(engines(found[0]), (std::set<Engine>{Engine::vllm, Engine::sglang})) << text(r);
  EXPECT_NE(found[0].message.find("language_model.model.layers.1: 6 modules"), std::string::npos)
    << found[0].message;
}

// SGLang builds Kimi-K2.5's text model without a prefix (kimi_k25.py: DeepseekV3ForCausalLM,
// "model.layers.X") and maps compressed-tensors' list ("language_model.layers." becomes
// "language_model.model.layers."), then compares exact names and dotted suffixes: the official
// INT4 layout's own spelling "language_model.model.layers.X" does not reach it. (vLLM is read
// under the checkpoint's names, folded as for other VLMs: its Kimi-K2.5 file changed its names
// and mapper between versions.)
TEST(RuleCases, QC101KimiK25TextEntriesMeetSglangsOwnNames)
{
  const std::string shared = "layers.1.mlp.shared_experts.down_proj";
  const Strings regexes{"lm_head", "re:.*self_attn.*", "re:.*mlp\\\\.(gate|up|gate_up|down)_proj.*",
                        "re:vision_tower.*", "re:mm_projector.*"};
  const auto lint_with = [&](const Strings& entries) {
    Strings ignore = regexes;
    ignore.insert(ignore.end(), entries.begin(), entries.end());
    return lint_folder(folder(kimi_k25_config(ct_w4a16(ignore)), kimi_k25_tensors()));
  };
  const auto failing = [&](const Report& r) {
    const auto found = findings(r, RuleId::undeclared_unquantized);
    EXPECT_LE(found.size(), 1u) << text(r);
    return found.empty() ? std::set<Engine>{} : engines(found[0]);
  };
  const std::set<Engine> sglang{Engine::sglang};
  EXPECT_EQ(failing(lint_with({"language_model.model." + shared})), sglang);
  EXPECT_EQ(failing(lint_with({"language_model." + shared})),
            (std::set<Engine>{Engine::vllm, Engine::sglang}));
  EXPECT_EQ(failing(lint_with({shared})), std::set<Engine>{Engine::vllm}); // SGLang: a suffix
  EXPECT_EQ(
    failing(lint_with({"re:language_model\\\\.model\\\\.layers\\\\.1\\\\.mlp\\\\.shared.*"})),
    sglang);
  const Report fine = lint_with({"model." + shared});
  EXPECT_TRUE(fine.findings.empty()) << text(fine);
  // Unlisted: SGLang checks its own name, and fix writes its spelling beside the checkpoint's
  // (its plan is verified by linting it).
  MemoryFileSystem fs = folder(kimi_k25_config(ct_w4a16(regexes)), kimi_k25_tensors());
  auto run = lint_path(fs, "m", {});
  ASSERT_TRUE(run);
  const auto found = findings(run->report, RuleId::undeclared_unquantized);
  ASSERT_EQ(found.size(), 1u) << text(run->report);
  EXPECT_EQ(found[0].suggested_entries,
            (Strings{"language_model.model." + shared, "model." + shared}));
  EXPECT_NE(text(run->report).find("SGLang checks 'model." + shared + "'"), std::string::npos)
    << text(run->report);
  const FixPlan plan = plan_fix(fs, *run, {});
  EXPECT_TRUE(plan.refused.empty()) << fmt::format("{}", fmt::join(plan.refused, "\n"));
  EXPECT_EQ(plan.edits.size(), 1u);
}

// Kimi-K2.5-NVFP4's layout (language_model.layers.X): SGLang's ModelOpt config maps the list
// and keeps each mapped entry without "language_model." too, so the checkpoint's spelling and
// SGLang's own ("model.layers.0.self_attn*") both reach "model.layers.0.self_attn.o_proj";
// vLLM (substrings) takes the second too, not "language_model.model.layers.0.self_attn*".
// TensorRT-LLM is read under the checkpoint's names.
TEST(RuleCases, QC101KimiK25ModelOptListsInEachSpelling)
{
  const std::string kimi = kimi_k25_model(2);
  const std::string l = "language_model.layers.";
  const Tensors stored = bf16(l + "0.self_attn.o_proj") + fp8(l + "0.mlp.down_proj") +
                         bf16(l + "1.self_attn.o_proj") + fp8(l + "1.mlp.down_proj") +
                         bf16("language_model.lm_head");
  const auto lint_with = [&](const std::string& root) {
    return lint_folder(
      folder(config(kimi, modelopt("FP8", {root + "0.self_attn*", root + "1.self_attn*",
                                           "language_model.lm_head"})),
             stored));
  };
  const auto failing = [&](const Report& r) {
    std::set<Engine> out;
    for (const Finding& f : findings(r, RuleId::undeclared_unquantized)) {
      for (const Engine e : engines(f)) {
        out.insert(e);
      }
    }
    return out;
  };
  const Report own = lint_with(l);
  EXPECT_TRUE(own.findings.empty()) << text(own);
  const Report sglang = lint_with("model.layers.");
  EXPECT_EQ(failing(sglang), std::set<Engine>{Engine::trtllm}) << text(sglang);
  const Report vllm = lint_with("language_model.model.layers.");
  EXPECT_EQ(failing(vllm), (std::set<Engine>{Engine::vllm, Engine::trtllm})) << text(vllm);
  EXPECT_TRUE(findings(vllm, RuleId::unused_entry).empty()) << text(vllm); // SGLang's
}

// For Quark, SGLang builds Kimi-K2.5's text model under "language_model"
// ("language_model.model.layers.X") and maps the list ("language_model.layers." becomes
// "language_model.model.layers."): the NVFP4-style layout's own spelling reaches it, in a short
// list and through a long list's index alike; vLLM compares its own "language_model.layers.X".
TEST(RuleCases, QC101KimiK25QuarkListMappedBySglang)
{
  const std::string kimi = kimi_k25_model(1);
  const std::string l = "language_model.layers.0.";
  const Tensors stored =
    bf16(l + "self_attn.o_proj") + fp8(l + "mlp.down_proj") + bf16("language_model.lm_head");
  for (const size_t padding : {0, 20}) {
    const Report own = lint_folder(
      folder(config(kimi, quark(padded({l + "self_attn.o_proj"}, padding, "x.{}"))), stored));
    EXPECT_TRUE(findings(own, RuleId::undeclared_unquantized).empty()) << padding << text(own);
    const Report sglang = lint_folder(folder(
      config(kimi,
             quark(padded({"language_model.model.layers.0.self_attn.o_proj"}, padding, "x.{}"))),
      stored));
    const auto found = findings(sglang, RuleId::undeclared_unquantized);
    ASSERT_EQ(found.size(), 1u) << padding << text(sglang);
    EXPECT_EQ(engines(found[0]), std::set<Engine>{Engine::vllm}) << text(sglang);
  }
}

// SGLang's compressed-tensors config reads a fused layer's shards only for the names the
// model class's mapping keys; DeepSeek's (deepseek_v2.py update_packed_modules_mapping) holds
// fused_qkv_a_proj_with_mqa alone, so a dense gate_up_proj is compared by that name: listing
// its shards excludes it in vLLM (whose mapping has it), not in SGLang. fix names it too.
TEST(RuleCases, QC101SglangCompressedTensorsReadsDeepseekGateUpByItsName)
{
  const std::string deepseek = deepseek_layers(1);
  const std::string m = "model.layers.0.mlp.";
  const Tensors stored = ct_fp8("model.layers.0.self_attn.o_proj") + bf16(m + "gate_proj") +
                         bf16(m + "up_proj") + ct_fp8(m + "down_proj") + bf16("lm_head");
  const Report shards = lint_folder(
    folder(config(deepseek, ct_fp8_config({"lm_head", m + "gate_proj", m + "up_proj"})), stored));
  const auto found = findings(shards, RuleId::undeclared_unquantized);
  ASSERT_EQ(found.size(), 1u) << text(shards);
  EXPECT_EQ(engines(found[0]), std::set<Engine>{Engine::sglang});
  const Report named = lint_folder(
    folder(config(deepseek,
                  ct_fp8_config({"lm_head", m + "gate_proj", m + "up_proj", m + "gate_up_proj"})),
           stored));
  EXPECT_TRUE(named.findings.empty()) << text(named);
  MemoryFileSystem fs = folder(config(deepseek, ct_fp8_config({"lm_head"})), stored);
  auto run = lint_path(fs, "m", {});
  ASSERT_TRUE(run);
  const auto unlisted = findings(run->report, RuleId::undeclared_unquantized);
  ASSERT_EQ(unlisted.size(), 1u) << text(run->report);
  EXPECT_EQ(unlisted[0].suggested_entries,
            (Strings{m + "gate_proj", m + "up_proj", m + "gate_up_proj"}));
  const FixPlan plan = plan_fix(fs, *run, {});
  EXPECT_TRUE(plan.refused.empty()) << fmt::format("{}", fmt::join(plan.refused, "\n"));
  EXPECT_EQ(plan.edits.size(), 1u);
}

// SGLang's Qwen2-VL, Qwen2.5-VL and Qwen3-VL run their hf_to_sglang_mapper over the ignore list
// (loader.py, compressed_tensors.py apply_weight_name_mapper): "model.X" and
// "model.language_model.X" become "language_model.model.X", a name none of their text layers
// has (model.X; model.language_model.X for Qwen3-VL). An exact text entry excludes nothing
// there; vLLM, whose layers bear that name, is fine. Unprefixed suffixes, "lm_head" and tower
// entries still work.
TEST(RuleCases, QC101PositiveQwenVlTextEntryMappedAwayBySglang)
{
  const Tensors old_layout = bf16("visual.blocks.0.attn.qkv", 192, 64) +
                             bf16("visual.blocks.0.attn.proj") +
                             ct_fp8("model.layers.0.self_attn.o_proj") +
                             bf16("model.layers.0.mlp.down_proj") + bf16("lm_head");
  for (const size_t padding : {0, 20}) {
    const Strings ignore = padded({"lm_head", "re:visual.*", "model.layers.0.mlp.down_proj"},
                                  padding, "model.layers.{}.mlp.gate_proj");
    const Report r = lint_folder(folder(config(k_qwen_vl, ct_fp8_config(ignore)), old_layout));
    const auto found = findings(r, RuleId::undeclared_unquantized);
    ASSERT_EQ(found.size(), 1u) << padding << text(r);
    EXPECT_EQ(engines(found[0]), std::set<Engine>{Engine::sglang}) << text(r);
    EXPECT_EQ(found[0].modules, Strings{"model.layers.0.mlp.down_proj"}) << text(r);
  }
  // A dotted suffix without the root is not mapped, and meets SGLang's name (vLLM compares
  // exactly: it fails there).
  const Report suffix = lint_folder(
    folder(config(k_qwen_vl, ct_fp8_config({"lm_head", "re:visual.*", "layers.0.mlp.down_proj"})),
           old_layout));
  const auto by_suffix = findings(suffix, RuleId::undeclared_unquantized);
  ASSERT_EQ(by_suffix.size(), 1u) << text(suffix);
  EXPECT_EQ(engines(by_suffix[0]), std::set<Engine>{Engine::vllm}) << text(suffix);
  // Qwen3-VL: model.language_model.X is mapped to language_model.model.X too.
  const Tensors qwen3 = bf16("model.visual.blocks.0.attn.qkv", 192, 64) +
                        ct_fp8("model.language_model.layers.0.self_attn.o_proj") +
                        bf16("model.language_model.layers.0.mlp.down_proj") + bf16("lm_head");
  const Report q3 = lint_folder(
    folder(config(k_qwen3_vl, ct_fp8_config({"lm_head", "re:.*visual.*",
                                             "model.language_model.layers.0.mlp.down_proj"})),
           qwen3));
  const auto q3_found = findings(q3, RuleId::undeclared_unquantized);
  ASSERT_EQ(q3_found.size(), 1u) << text(q3);
  EXPECT_EQ(engines(q3_found[0]), std::set<Engine>{Engine::sglang}) << text(q3);
}

// fix adds, beside the checkpoint's spelling (vLLM), the dotted suffix SGLang's Qwen-VL mapper
// leaves alone; the plan is accepted (its verification lints it). Qwen3-VL-MoE's experts are
// named by their probe names in both spellings.
TEST(RuleCases, QC101QwenVlFixAddsTheSuffixSglangKeeps)
{
  const Tensors old_layout = bf16("visual.blocks.0.attn.qkv", 192, 64) +
                             ct_fp8("model.layers.0.self_attn.o_proj") +
                             bf16("model.layers.0.mlp.down_proj") + bf16("lm_head");
  MemoryFileSystem fs =
    folder(config(k_qwen_vl, ct_fp8_config({"lm_head", "re:visual.*"})), old_layout);
  auto run = lint_path(fs, "m", {});
  ASSERT_TRUE(run);
  const auto found = findings(run->report, RuleId::undeclared_unquantized);
  ASSERT_EQ(found.size(), 1u) << text(run->report);
  EXPECT_EQ(found[0].suggested_entries,
            (Strings{"model.layers.0.mlp.down_proj", "layers.0.mlp.down_proj"}));
  const FixPlan plan = plan_fix(fs, *run, {});
  EXPECT_TRUE(plan.refused.empty()) << fmt::format("{}", fmt::join(plan.refused, "\n"));
  EXPECT_EQ(plan.edits.size(), 1u);
  const std::string moe =
    R"("architectures": ["Qwen3VLMoeForConditionalGeneration"], "model_type": "qwen3_vl_moe", )"
    R"("text_config": {"model_type": "qwen3_vl_moe_text", "num_hidden_layers": 1})";
  const std::string l = "model.language_model.layers.0.mlp.";
  Tensors stored = ct_fp8("model.language_model.layers.0.self_attn.o_proj") +
                   bf16(l + "gate", 2, 64) + bf16("lm_head");
  for (const char* p : {"gate_proj", "up_proj", "down_proj"}) {
    stored = stored + bf16(l + "experts.0." + p);
  }
  MemoryFileSystem moe_fs =
    folder(config(moe, ct_fp8_config({"lm_head", "re:.*visual.*", "re:.*mlp.gate$"})), stored);
  auto moe_run = lint_path(moe_fs, "m", {});
  ASSERT_TRUE(moe_run);
  const auto moe_found = findings(moe_run->report, RuleId::undeclared_unquantized);
  ASSERT_EQ(moe_found.size(), 1u) << text(moe_run->report);
  const Strings& entries = moe_found[0].suggested_entries;
  for (const char* p : {"gate_proj", "up_proj", "down_proj"}) {
    const std::string name = l + "experts.0." + p;
    EXPECT_NE(std::find(entries.begin(), entries.end(), name), entries.end()) << name;
    EXPECT_NE(std::find(entries.begin(), entries.end(), name.substr(6)), entries.end()) << name;
  }
  const FixPlan moe_plan = plan_fix(moe_fs, *moe_run, {});
  EXPECT_TRUE(moe_plan.refused.empty()) << fmt::format("{}", fmt::join(moe_plan.refused, "\n"));
  EXPECT_EQ(moe_plan.edits.size(), 1u);
}

// Kimi-K2.5 NVFP4 (ModelOpt, as nvidia's release stores it: language_model.layers.X) without
// vision entries: vLLM quantizes the projector (its ModelOpt config reaches it) and fails there;
// its tower is vLLM's hard-coded ModelOpt exclusion, SGLang builds neither quantized, nor does
// TensorRT-LLM's vision model.
TEST(RuleCases, QC101KimiK25NvFp4ProjectorFailsInVllmOnly)
{
  const std::string l = "language_model.layers.";
  const std::string b = "vision_tower.encoder.blocks.0.";
  const Tensors stored = bf16(l + "0.self_attn.o_proj") + nvfp4(l + "0.mlp.down_proj") +
                         bf16("language_model.lm_head") + bf16(b + "wqkv", 192, 64) +
                         bf16(b + "wo") + bf16("mm_projector.proj.0", 256, 256) +
                         bf16("mm_projector.proj.2", 64, 256);
  const std::string cfg =
    R"({"architectures": ["KimiK25ForConditionalGeneration"], "model_type": "kimi_k25", )"
    R"("text_config": {"model_type": "kimi_k2", "num_hidden_layers": 1, )"
    R"("num_nextn_predict_layers": 0}})";
  MemoryFileSystem fs;
  fs.add_file("m/config.json", cfg);
  fs.add_file("m/hf_quant_config.json",
              R"({"quantization": {"quant_algo": "NVFP4", "group_size": 16, "exclude_modules": )"
              R"(["language_model.lm_head", "language_model.layers.*.self_attn*"]}})");
  fs.add_file("m/model.safetensors", test::safetensors(stored));
  auto run = lint_path(fs, "m", {});
  ASSERT_TRUE(run);
  const auto found = findings(run->report, RuleId::undeclared_unquantized);
  ASSERT_EQ(found.size(), 1u) << text(run->report);
  EXPECT_EQ(engines(found[0]), std::set<Engine>{Engine::vllm}) << text(run->report);
  EXPECT_EQ(found[0].modules, (Strings{"mm_projector.proj.0", "mm_projector.proj.2"}));
}

// A tower stored NVFP4 and excluded: every engine builds it unquantized whatever the list says
// (vLLM's ModelOpt loader treats vision modules so), so no removal is offered for any of them.
TEST(RuleCases, QC102KimiK25QuantizedTowerNoEntryHelps)
{
  const std::string b = "vision_tower.encoder.blocks.0.";
  const Tensors stored =
    bf16("language_model.layers.0.self_attn.o_proj") +
    nvfp4("language_model.layers.0.mlp.down_proj") + bf16("language_model.lm_head") +
    nvfp4(b + "wo") + bf16("mm_projector.proj.0", 256, 256) + bf16("mm_projector.proj.2", 64, 256);
  MemoryFileSystem fs;
  fs.add_file("m/config.json",
              R"({"architectures": ["KimiK25ForConditionalGeneration"], "model_type": "kimi_k25", )"
              R"("text_config": {"model_type": "kimi_k2", "num_hidden_layers": 1, )"
              R"("num_nextn_predict_layers": 0}})");
  fs.add_file(
    "m/hf_quant_config.json",
    R"({"quantization": {"quant_algo": "NVFP4", "group_size": 16, "exclude_modules": )"
    R"(["language_model.lm_head", "language_model.layers.*.self_attn*", "vision_tower*", )"
    R"("mm_projector*"]}})");
  fs.add_file("m/model.safetensors", test::safetensors(stored));
  auto run = lint_path(fs, "m", {});
  ASSERT_TRUE(run);
  const auto found = findings(run->report, RuleId::excluded_but_quantized);
  ASSERT_EQ(found.size(), 1u) << text(run->report);
  EXPECT_EQ(found[0].modules, Strings{b + "wo"});
  EXPECT_EQ(found[0].fix,
            "store the module unquantized; no list entry can change the engine's choice")
    << text(run->report);
}

// SGLang's ModelOpt configs run the same mapper over exclude_modules and add each mapped entry
// without "language_model." (modelopt_quant.py apply_weight_name_mapper): a Qwen2.5-VL text entry
// comes back as model.X, SGLang's name; a Qwen3-VL one does not (its layers are
// model.language_model.X), exact or glob, in a short list and a compiled one.
TEST(RuleCases, QC101PositiveQwen3VlModelOptTextEntryMappedAwayBySglang)
{
  const std::string l = "model.language_model.layers.0.";
  const Tensors qwen3 = bf16("model.visual.blocks.0.attn.qkv", 192, 64) +
                        nvfp4(l + "self_attn.o_proj") + bf16(l + "mlp.down_proj") + bf16("lm_head");
  for (const std::string& entry : {l + "mlp.down_proj", l + "mlp.down*"}) {
    for (const size_t padding : {0, 20}) {
      const Strings exclude = padded({"lm_head", "model.visual*", entry}, padding,
                                     "model.language_model.layers.{}.mlp.gate");
      const Report r = lint_folder(folder(config(k_qwen3_vl, modelopt("NVFP4", exclude)), qwen3));
      const auto found = findings(r, RuleId::undeclared_unquantized);
      ASSERT_EQ(found.size(), 1u) << entry << " " << padding << text(r);
      EXPECT_EQ(engines(found[0]), std::set<Engine>{Engine::sglang}) << text(r);
      EXPECT_EQ(found[0].modules, Strings{l + "mlp.down_proj"}) << text(r);
    }
  }
  // fix adds "*." and the suffix without the root beside the checkpoint's spelling; the patch
  // is accepted (its verification lints it clean).
  MemoryFileSystem fs =
    folder(config(k_qwen3_vl, modelopt("NVFP4", {"lm_head", "model.visual*"})), qwen3);
  auto run = lint_path(fs, "m", {});
  ASSERT_TRUE(run);
  const auto unfixed = findings(run->report, RuleId::undeclared_unquantized);
  ASSERT_EQ(unfixed.size(), 1u) << text(run->report);
  EXPECT_EQ(unfixed[0].suggested_entries,
            (Strings{l + "mlp.down_proj", "*.language_model.layers.0.mlp.down_proj"}));
  const FixPlan plan = plan_fix(fs, *run, {});
  EXPECT_TRUE(plan.refused.empty()) << fmt::format("{}", fmt::join(plan.refused, "\n"));
  EXPECT_EQ(plan.edits.size(), 1u);
  // Qwen2.5-VL (old layout): the entry without its new root is SGLang's name.
  const Tensors qwen25 = bf16("visual.blocks.0.attn.qkv", 192, 64) +
                         nvfp4("model.layers.0.self_attn.o_proj") +
                         bf16("model.layers.0.mlp.down_proj") + bf16("lm_head");
  const Report r25 = lint_folder(folder(
    config(k_qwen_vl, modelopt("NVFP4", {"lm_head", "visual*", "model.layers.0.mlp.down_proj"})),
    qwen25));
  EXPECT_TRUE(findings(r25, RuleId::undeclared_unquantized).empty()) << text(r25);
}

// explain --entries and QC102's removal read SGLang's Qwen-VL list as decide() does: the
// checkpoint's text spelling reaches nothing there, so only the suffix is SGLang's to remove.
TEST(RuleCases, QC102QwenVlSglangRemovesOnlyTheEntryItReads)
{
  const Tensors stored = bf16("visual.blocks.0.attn.qkv", 192, 64) +
                         ct_fp8("model.layers.0.self_attn.o_proj") +
                         ct_fp8("model.layers.0.mlp.down_proj") + bf16("lm_head");
  MemoryFileSystem fs = folder(
    config(k_qwen_vl, ct_fp8_config({"lm_head", "re:visual.*", "model.layers.0.mlp.down_proj",
                                     "layers.0.mlp.down_proj"})),
    stored);
  auto run = lint_path(fs, "m", {});
  ASSERT_TRUE(run);
  const std::string entries = explain_entries(*run, {Engine::sglang});
  EXPECT_NE(entries.find("  'model.layers.0.mlp.down_proj'\n    SGLang: nothing\n"),
            std::string::npos)
    << entries;
  const auto found = findings(run->report, RuleId::excluded_but_quantized);
  ASSERT_EQ(found.size(), 1u) << text(run->report);
  EXPECT_EQ(found[0].fix,
            "remove layers.0.mlp.down_proj, model.layers.0.mlp.down_proj from the list (qcheck "
            "fix --remove-excluding), or store the module unquantized")
    << text(run->report);
  LintOptions sglang_only;
  sglang_only.engines = {Engine::sglang};
  auto sglang_run = lint_path(fs, "m", sglang_only);
  ASSERT_TRUE(sglang_run);
  const auto in_sglang = findings(sglang_run->report, RuleId::excluded_but_quantized);
  ASSERT_EQ(in_sglang.size(), 1u) << text(sglang_run->report);
  EXPECT_EQ(in_sglang[0].fix,
            "remove layers.0.mlp.down_proj from the list (qcheck fix --remove-excluding), or store "
            "the module unquantized")
    << text(sglang_run->report);
}

// A Qwen2.5-VL tower entry in the other layout (model.visual.X for tensors saved as visual.X):
// SGLang's ModelOpt mapper brings it to SGLang's name, in a short list and in one long enough to
// be compiled (the index offers it to the tower's names too).
TEST(RuleCases, QC101NegativeQwen25VlModelOptTowerEntryOtherLayoutLongList)
{
  const Tensors stored = bf16("visual.blocks.0.attn.qkv", 192, 64) +
                         bf16("visual.blocks.0.attn.proj") +
                         nvfp4("model.layers.0.self_attn.o_proj") + bf16("lm_head");
  for (const size_t padding : {0, 20}) {
    const Strings exclude =
      padded({"lm_head", "model.visual.blocks.0.attn.qkv", "model.visual.blocks.0.attn.proj"},
             padding, "model.layers.{}.mlp.gate");
    const Report r = lint_folder(folder(config(k_qwen_vl, modelopt("NVFP4", exclude)), stored));
    for (const Finding& f : findings(r, RuleId::undeclared_unquantized)) {
      EXPECT_EQ(std::count(f.engines.begin(), f.engines.end(), Engine::sglang), 0)
        << padding << text(r);
    }
    for (const Finding& f : findings(r, RuleId::unused_entry)) {
      EXPECT_EQ(f.message.find("model.visual"), std::string::npos) << padding << text(r);
    }
  }
}

// vLLM's is_layer_gptq_quantized runs before dynamic is read: modules_in_block_to_quantize
// naming q_proj but not k_proj and v_proj stops the load even where a '-:' key matches the
// fused layer. One finding, QC103 (not also QC101 for the BF16 shards).
TEST(RuleCases, QC103GptqModulesInBlockCheckedBeforeDynamic)
{
  const std::string a = "model.layers.0.self_attn.";
  const Report r = lint_folder(folder(
    config(k_llama,
           gptq_config(R"(, "modules_in_block_to_quantize": ["self_attn.q_proj", )"
                       R"("self_attn.o_proj", "mlp"], )"
                       R"("dynamic": {"-:model\\.layers\\.0\\.self_attn\\.qkv_proj$": {}})")),
    bf16(a + "q_proj") + bf16(a + "k_proj") + bf16(a + "v_proj") + gptq(a + "o_proj") +
      gptq("model.layers.0.mlp.down_proj") + bf16("lm_head")));
  const Finding f = only(r, RuleId::fused_shards_disagree,
                         "the shards of fused layer 'model.layers.0.self_attn.qkv_proj' are not "
                         "listed alike; vLLM stops with `Detected some but not all shards of "
                         "model.layers.0.self_attn.qkv_proj are quantized`");
  EXPECT_EQ(r.findings.size(), 1u) << text(r);
}

// vLLM compares modules_in_block_to_quantize with its own layer names: entries already in its
// spelling of a Qwen3-VL text model (language_model.model.X) name the stored modules.
TEST(RuleCases, GptqModulesInBlockInVllmSpelling)
{
  const std::string l = "model.language_model.layers.0.";
  const Report r = lint_folder(
    folder(config(k_qwen3_vl, gptq_config(R"(, "modules_in_block_to_quantize": [)"
                                          R"("language_model.model.layers.0.self_attn.o_proj", )"
                                          R"("language_model.model.layers.0.mlp.down_proj"])")),
           gptq(l + "self_attn.o_proj") + gptq(l + "mlp.down_proj") + bf16("lm_head")));
  EXPECT_TRUE(findings(r, RuleId::excluded_but_quantized).empty()) << text(r);
  EXPECT_TRUE(findings(r, RuleId::undeclared_unquantized).empty()) << text(r);
}

// SGLang builds Qwen3.5's attention without a quantization config for ModelOpt NVFP4: a list
// naming q_proj alone stops vLLM and TensorRT-LLM (QC103), not SGLang.
TEST(RuleCases, QC103NotForAnEngineThatBuildsTheLayerUnquantized)
{
  const std::string a = "model.language_model.layers.0.self_attn.";
  const Report r = lint_folder(
    folder(config(k_qwen35, modelopt("NVFP4", {"lm_head", a + "q_proj", a + "o_proj"})),
           bf16(a + "q_proj") + bf16(a + "k_proj") + bf16(a + "v_proj") + bf16(a + "o_proj") +
             nvfp4("model.language_model.layers.0.mlp.shared_expert.down_proj") + bf16("lm_head")));
  const auto split = findings(r, RuleId::fused_shards_disagree);
  ASSERT_EQ(split.size(), 1u) << text(r);
  EXPECT_EQ(engines(split[0]), (std::set<Engine>{Engine::vllm, Engine::trtllm})) << text(r);
}

// The lists differ: hf_quant_config.json alone excludes down_proj, which is stored FP8 (QC102
// for TensorRT-LLM, which reads that file). Making the lists equal must not copy that entry into
// config.json, where vLLM and SGLang would exclude down_proj too: plain fix writes nothing and
// leaves it to --remove-excluding, which takes it out. (Two guards: the list sync skips entries
// QC102 names, and the verification refuses a patch that makes more engines exclude a module
// stored quantized; the test fails only with both undone.)
TEST(RuleCases, FixDoesNotSpreadAnEntryThatExcludesAQuantizedModule)
{
  const Tensors tensors = llama_fp8_layer0();
  MemoryFileSystem fs = folder(config(k_llama, modelopt("FP8", {"lm_head"})), tensors);
  fs.add_file("m/hf_quant_config.json",
              hf_quant_config("FP8", {"lm_head", "model.layers.0.mlp.down_proj"}));
  auto run = lint_path(fs, "m", {});
  ASSERT_TRUE(run);
  const FixPlan plain = plan_fix(fs, *run, {});
  for (const FileEdit& e : plain.edits) {
    EXPECT_EQ(e.patched.find("mlp.down_proj"), e.original.find("mlp.down_proj")) << e.file;
  }
  EXPECT_TRUE(
    std::any_of(plain.remaining.begin(), plain.remaining.end(),
                [](const std::string& m) {
                  return m.find("--remove-excluding would remove model.layers.0.mlp.down_proj") !=
                         std::string::npos;
                }))
    << fmt::format("{}", fmt::join(plain.remaining, "\n"));
  auto again = lint_path(fs, "m", {});
  ASSERT_TRUE(again);
  const FixPlan removing = plan_fix(fs, *again, LintOptions{}, FixOptions{true});
  EXPECT_TRUE(removing.refused.empty()) << fmt::format("{}", fmt::join(removing.refused, "\n"));
  ASSERT_EQ(removing.edits.size(), 1u);
  EXPECT_TRUE(lint_patched(fs, removing).findings.empty()) << text(lint_patched(fs, removing));
}

// A positive key only vLLM's name of a Qwen3-VL layer meets (language_model.model.X) hides a key
// appended for vLLM: each engine's key is suggested, to go first, and the fix says which key
// vLLM meets first.
TEST(RuleCases, GptqPositiveKeyHidesOnlyTheEngineWhoseNameItMeets)
{
  const Report r = lint_folder(
    folder(config(k_qwen3_vl,
                  gptq_config(
                    R"(, "modules_in_block_to_quantize": ["self_attn.o_proj", "mlp"], )"
                    R"("dynamic": {"+:language_model\\.model\\.layers\\.0\\..*": {"bits": 4}})")),
           gptq_layer0_bf16_gate_up("model.language_model.layers.0.")));
  const auto undeclared = findings(r, RuleId::undeclared_unquantized);
  ASSERT_EQ(undeclared.size(), 1u) << text(r);
  EXPECT_EQ(engines(undeclared[0]), (std::set<Engine>{Engine::vllm, Engine::sglang}));
  EXPECT_EQ(undeclared[0].suggested_entries,
            (Strings{"-:language_model\\.model\\.layers\\.0\\.mlp\\.gate_up_proj$",
                     "-:model\\.layers\\.0\\.mlp\\.gate_up_proj$"}));
  EXPECT_TRUE(undeclared[0].entries_first);
  EXPECT_NE(undeclared[0].fix.find("vLLM reads dynamic keys in order and "
                                   "'+:language_model\\.model\\.layers\\.0\\..*' matches first"),
            std::string::npos)
    << undeclared[0].fix;
}
