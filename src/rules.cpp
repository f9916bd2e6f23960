#include "qcheck/rules.hpp"

#include <algorithm>
#include <array>
#include <cctype>
#include <string>
#include <vector>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

namespace qcheck {

namespace {

constexpr std::array<Rule, 36> k_rules{{
  {RuleId::shard_header, "QC001", "invalid-shard-header", Severity::error, false,
   "A safetensors header violates the format",
   "The 8-byte length, the JSON header or a tensor entry (dtype, shape, data_offsets) breaks the "
   "safetensors format. Loaders refuse such a file (safetensors raises InvalidHeaderLength, "
   "InvalidOffset, TensorInvalidInfo ...). Re-export the shard; qcheck cannot repair weights."},
  {RuleId::index_missing_file, "QC002", "index-names-missing-file", Severity::error, false,
   "The index names a shard that is not in the folder",
   "model.safetensors.index.json maps tensors to a file that does not exist, so loading fails "
   "with FileNotFoundError. Upload the missing shard or regenerate the index."},
  {RuleId::index_missing_tensor, "QC003", "index-names-missing-tensor", Severity::error, false,
   "The index maps a tensor to a shard that does not hold it",
   "A loader that trusts the index looks for the tensor in the named shard and fails, or the "
   "parameter is never initialised. Regenerate the index from the shards."},
  {RuleId::unindexed_tensors, "QC004", "tensors-missing-from-index", Severity::warning, false,
   "A shard holds tensors the index does not name",
   "vLLM and SGLang read whole files, so the tensors still load, but tools that follow the index "
   "(transformers, partial downloads) never see them. Add them to weight_map."},
  {RuleId::unindexed_shard, "QC005", "shard-missing-from-index", Severity::warning, false,
   "A *.safetensors file is not named by the index",
   "vLLM and SGLang keep only the files the index names, so every tensor in this file is "
   "silently skipped. If the file holds MTP or other weights the model needs, add its tensors to "
   "weight_map; if it is a leftover (e.g. a consolidated copy), remove it from the upload."},
  {RuleId::duplicate_tensor, "QC006", "duplicate-tensor", Severity::warning, false,
   "The same tensor is stored in two shards",
   "Which copy a loader uses depends on file order; the index picks one. Remove the other copy."},
  {RuleId::index_path_escapes, "QC007", "index-path-escapes", Severity::error, false,
   "An index path is absolute or leaves the model folder",
   "weight_map values must be file names inside the folder. qcheck refuses to open such a path; "
   "a loader might read an arbitrary file. Fix the index."},
  {RuleId::shard_not_regular, "QC008", "shard-not-regular-file", Severity::error, false,
   "A *.safetensors path is a directory, FIFO, device or dangling link",
   "Loaders fail on it (IsADirectoryError, or block forever on a FIFO). qcheck never opens it. "
   "Replace it with the real shard or remove it."},
  {RuleId::config_invalid, "QC009", "invalid-config", Severity::error, false,
   "A config file is not valid JSON, or a list of names in it holds something else",
   "config.json, hf_quant_config.json or quantization_config.json cannot be parsed (NaN, "
   "Infinity, trailing commas and truncation are common causes); engines refuse to start. Also "
   "an exclusion list or a compressed-tensors `targets` list written as one string, or holding "
   "a number, null or a list: engines compare module names with strings (a string is searched or "
   "iterated character by character), so such a list does not mean what it says. qcheck reads a "
   "string list as one entry and leaves other elements out. And an fp8 `weight_block_size` with a "
   "block of 0 elements: engines divide each weight dimension by it; qcheck checks no FP8 block "
   "layout against it. A warning for an fp8 block with both `ignored_layers` and "
   "`modules_to_not_convert`: vLLM reads `ignored_layers` and falls back to the other list only "
   "when it is missing or empty, SGLang reads the first key present even when empty, so a second "
   "list is read by no engine, or by vLLM alone beside an empty `ignored_layers` (SGLang then "
   "quantizes every module; QC101 says which are stored unquantized). A warning too for "
   "GPTQModel's "
   "`dynamic` in an auto-round block: vLLM's INC and SGLang's AutoRound loaders never read it, so "
   "its `-:` keys exclude nothing (give the module `{\"bits\": 16}` in `extra_config`)."},
  {RuleId::unknown_quant_method, "QC010", "unknown-quant-method", Severity::warning, false,
   "The quantization method is not one qcheck knows",
   "qcheck cannot say how engines match this format's lists, so no module checks run for it."},
  {RuleId::no_weights, "QC011", "no-weights", Severity::error, false,
   "The folder has no safetensors weights",
   "No *.safetensors file and no index: there is nothing for an engine to load."},
  {RuleId::undeclared_unquantized, "QC101", "undeclared-unquantized-module", Severity::error, true,
   "A module is stored unquantized but the config declares it quantized",
   "The engine allocates quantized parameters (packed U8/I32, FP8) for the module and then "
   "receives a BF16 tensor: it crashes (`The size of tensor a (256) must match the size of "
   "tensor b (512)`, `There is no module or parameter named 'fc.weight'`) or, for FP8, casts "
   "silently and serves garbage. Typical cause: an MTP/NextN draft layer exported BF16 but left "
   "out of `ignore` / `exclude_modules`. Example: GLM NVFP4 with BF16 layer 45 needs "
   "`model.language_model.layers.45*` and the drafter spelling `model.layers.45*`. Fix: "
   "`qcheck fix --inplace` appends the entries to every file that carries the list (for "
   "experts stored fused under compressed-tensors, expert 0's three projections, the names the "
   "engines look up)."},
  {RuleId::excluded_but_quantized, "QC102", "excluded-but-quantized", Severity::error, false,
   "A module is stored quantized but the config excludes it",
   "The engine builds an unquantized layer and finds weight_packed / qweight / scales it has no "
   "parameter for (`There is no module or parameter named ...weight_scale`). Remove the entry "
   "that catches the module, or re-export the module unquantized."},
  {RuleId::fused_shards_disagree, "QC103", "fused-shards-disagree", Severity::error, false,
   "The shards of one fused layer differ in stored or declared quantization",
   "Engines fuse q/k/v into qkv_proj and gate/up into gate_up_proj and decide once for the fused "
   "layer: `Detected some but not all shards of ... are quantized` (vLLM ModelOpt) or `Found a "
   "different quantization schemes for ...` (compressed-tensors). List all shards, or none; "
   "when every shard is stored quantized, `qcheck fix --remove-excluding` removes the entries "
   "that split them. "
   "AutoRound compares each shard's (or expert's) extra_config bits, group_size and sym, "
   "defaults filled in: `Fused module ... requires consistent quant config` (vLLM INC, "
   "SGLang). Where an engine reads a fused layer by its name (its own key, in both engines; in "
   "SGLang also when its model class gives the config no packed_modules_mapping for it), it "
   "builds the layer with that name's settings, so shards exported with other bits, group_size "
   "or sym do not match: key the fused name with theirs."},
  {RuleId::experts_disagree, "QC104", "experts-disagree", Severity::error, false,
   "Experts of one fused MoE differ in stored quantization",
   "A fused MoE has one quantization method for all experts; mixed storage cannot load."},
  {RuleId::partial_expert_exclusion, "QC105", "partial-expert-exclusion", Severity::warning, false,
   "The exclusion list names only some experts of a fused MoE",
   "vLLM ModelOpt (and vLLM and SGLang FP8) then exclude the whole MoE, SGLang "
   "compressed-tensors looks only at expert 0: engines disagree about the layer. Exclude the MoE "
   "as a whole (`...mlp.experts*`)."},
  {RuleId::config_divergence, "QC106", "config-divergence", Severity::error, true,
   "config.json and hf_quant_config.json disagree",
   "vLLM and SGLang read config.json first; TensorRT-LLM reads hf_quant_config.json first. When "
   "their exclusion lists or quant_algo differ, engines load the same checkpoint differently. "
   "Keep both lists identical (`qcheck fix` edits both)."},
  {RuleId::mtp_missing, "QC107", "mtp-weights-missing", Severity::error, false,
   "The config declares MTP/NextN layers but no draft tensors are stored",
   "vLLM stops with `MTP speculative decoding layer N weights missing from checkpoint`. The "
   "quantizer dropped the draft layer: re-export it (usually BF16) or set the count to 0. With "
   "an index, tensors in a file the index does not name count as missing too (loaders skip "
   "such files, QC005): add them to the index."},
  {RuleId::draft_plain_quantized, "QC108", "draft-plain-linear-quantized", Severity::error, false,
   "A draft projection that engines build as a plain nn.Linear is stored quantized",
   "DeepSeek/GLM `eh_proj` (vLLM; SGLang except under Quark), MiMo `input_proj` and Qwen3.5 "
   "`mtp.fc` (SGLang) are plain nn.Linear layers with no quantized method: packed weights cannot "
   "load. So are MiMo-V2's MTP `eh_proj` (both engines) and, in vLLM, its MTP layer 0's "
   "`self_attn.o_proj`, built without a quantization config. Store them BF16."},
  {RuleId::mtp_partially_quantized, "QC109", "mtp-partially-quantized", Severity::warning, false,
   "The MTP block mixes quantized and unquantized modules",
   "Engines differ in how they build a partly quantized drafter (SGLang's Qwen3.5 Quark path "
   "treats any mtp exclusion as a fully BF16 drafter); both directions have crashed."},
  {RuleId::engine_override, "QC110", "engine-override-only", Severity::info, false,
   "Only a hard-coded engine override makes this module load",
   "An engine forces the module unquantized by special case (e.g. vLLM's mtp.fc for "
   "modelopt_fp4). Other engines, or other versions, will fail; declare the exclusion instead. "
   "Reported at the list of the engine that applies the override, where the entry belongs."},
  {RuleId::broad_substring_entry, "QC111", "broad-substring-entry", Severity::warning, false,
   "An exclusion entry is a short substring that catches unintended modules",
   "vLLM's ModelOpt loader matches entries as substrings: `model.layers.1` also excludes layers "
   "10-19. Use a dotted glob (`model.layers.1.*`) or exact names. (SGLang's compressed-tensors "
   "loader matched substrings too until PR 32736; it now takes an entry whole or as a dotted "
   "suffix.)"},
  {RuleId::unused_entry, "QC112", "unused-entry", Severity::warning, false,
   "An exclusion entry matches no module under any engine",
   "Usually spelling drift (checkpoint vs engine namespace, fused vs shard names): the entry "
   "protects nothing. Correct or remove it. Consecutive dead entries (a list copied from a "
   "larger model), or GPTQ dynamic keys, are one finding spanning them, from json_pointer to "
   "end_json_pointer in "
   "`--format json`. An entry naming a stored parameter that is no weight, bias or scale, bare "
   "(MiniMax-M2's e_score_correction_bias) or in full (Qwen3-Next FP8's "
   "`model.layers.0.linear_attn.A_log`), is deliberate and not reported (a Linear's "
   "`...q_proj.weight` is: it meant the module), nor, under compressed-tensors, one naming "
   "expert 0's "
   "projections of experts stored fused (`...experts.0.gate_proj`): vLLM and SGLang look those "
   "names up to decide the whole MoE."},
  {RuleId::nvfp4_layout, "QC113", "nvfp4-layout", Severity::error, false,
   "An NVFP4 module's tensors do not have the NVFP4 layout",
   "ModelOpt NVFP4 needs U8 weight [out, in/2], F8_E4M3 weight_scale [out, in/16] and F32 "
   "scalar weight_scale_2. A wrong width gives `The size of tensor a (X) must match the size of "
   "tensor b (2X)` at load."},
  {RuleId::fp8_layout, "QC114", "fp8-layout", Severity::error, false,
   "An FP8 module's scale does not match the declared scheme",
   "FP8 block quantization needs weight_scale_inv of [ceil(out/b0), ceil(in/b1)]; a mismatch "
   "fails at load or mis-scales silently."},
  {RuleId::unevaluable_entry, "QC115", "unevaluable-entry", Severity::error, false,
   "An entry uses a construct qcheck cannot evaluate exactly",
   "A `re:` entry or dynamic key uses syntax outside the supported Python-re subset (look-around, "
   "back-references), or an exclusion entry is longer than 4,096 bytes (no module name is; "
   "comparing it with every name would cost its length each time). qcheck refuses to guess; "
   "rewrite the pattern."},
  {RuleId::inferred_exclusions, "QC116", "relies-on-inference", Severity::info, false,
   "The engine infers exclusions from dtypes instead of an explicit list",
   "GPTQ without modules_in_block_to_quantize and AWQ with an empty modules_to_not_convert let "
   "vLLM decide from the stored dtypes; other engines may not (SGLang's GPTQ configs read only "
   "`dynamic`: each unquantized Linear needs a '-:' key there, which QC101 checks). An explicit "
   "list is safer."},
  {RuleId::mixed_precision_algo, "QC117", "mixed-precision-algo-mismatch", Severity::error, false,
   "A quantized_layers entry names an algorithm the stored tensors do not have",
   "ModelOpt MIXED_PRECISION builds each listed layer with its own quant_algo. An entry saying "
   "FP8 for a module stored NVFP4 (or the reverse) allocates the wrong parameters: shape errors "
   "or garbage. Correct the entry's quant_algo."},
  {RuleId::format_mismatch, "QC118", "stored-format-mismatch", Severity::error, false,
   "A module is stored in a different quantization format than the config declares",
   "The config's format (e.g. compressed-tensors pack-quantized, ModelOpt NVFP4) decides which "
   "parameters the engine allocates; tensors of another layout (weight_packed vs weight, "
   "weight_scale vs weight_scale_inv) have no parameter to land on: `There is no module or "
   "parameter named ...`. With several compressed-tensors config groups, each module is "
   "compared with the format of the group whose targets give vLLM's layer its scheme (a target "
   "naming or matching the layer, a fused one by its own name, then a class target such as "
   "Linear, then the fused layer's shards; a target two groups list is the later one's). "
   "Re-export, or correct the declared format."},
  {RuleId::packed_shape, "QC119", "packed-shape-mismatch", Severity::error, false,
   "A quantized tensor's shape does not match its packing",
   "Packed weights have fixed ratios: NVFP4 weight [out, in/2] with weight_scale [out, in/16], "
   "GPTQ qweight [in/8, out] at 4 bits (in * bits / 32 rows: 2, 3, 4 or 8 bits) with scales "
   "[in/group, out], AWQ qweight [in, out/8] with scales [in/group, out] (scales' rows are "
   "compared with group_size where no dynamic or extra_config key can give a module other "
   "settings; group_size -1 is not checked). A mismatch is "
   "exactly `The size of tensor a (X) must match the size of tensor b (2X)` at load."},
  {RuleId::block_prefix_overmatch, "QC120", "block-prefix-overmatch", Severity::warning, false,
   "A block_name_to_quantize entry is a string prefix of unintended modules",
   "AutoRound and vLLM test block names with plain startswith: `model.layers.1` also selects "
   "`model.layers.10`..`19`. End block names at a dot boundary."},
  {RuleId::short_fp8_entry, "QC121", "short-fp8-entry", Severity::warning, false,
   "An FP8 exclusion entry is a short name that vLLM compares exactly",
   "vLLM's FP8 loader compares ignored_layers / modules_to_not_convert exactly against full "
   "prefixes; a leaf like `linear_attn.in_proj_qkv` matches nothing there, so the layer is built "
   "FP8 and the BF16 weight is cast silently (garbage, no crash), while SGLang and transformers "
   "match it by suffix. Use full module names. Entries that reach only modules no engine "
   "quantizes (MoE routers: MiniMax-M2's 'gate') are not reported."},
  {RuleId::regex_checkpoint_namespace, "QC122", "regex-checkpoint-namespace", Severity::warning,
   false, "A re: ignore entry is anchored on a checkpoint root that vLLM renames",
   "vLLM passes exact ignore entries through the model's name mapper but not `re:` entries, and "
   "matches them against its own prefixes: `re:model\\.visual\\..*` never meets "
   "`visual.blocks.0...` "
   "in Qwen-VL style models, so those layers are quantized. Start the regex with `.*` or list "
   "exact names."},
  {RuleId::stale_baseline_entry, "QC123", "stale-baseline-entry", Severity::warning, false,
   "A baseline entry no longer matches any finding",
   "The accepted finding was fixed or changed. Remove the entry (re-run with --write-baseline) "
   "so the baseline cannot hide a future problem with the same identity."},
  {RuleId::fused_draft_shards, "QC124", "fused-draft-shard-entries", Severity::warning, true,
   "The list names the shards of a fused draft layer but not the fused layer",
   "Drafters build q/k/v as qkv_proj and gate/up as gate_up_proj. Shard names (q_proj, ...) "
   "only reach the fused layer through the drafter class's packed_modules_mapping; a drafter "
   "without it matches the fused name literally and quantizes the layer (Qwen3.5 MTP history in "
   "vLLM and SGLang). Add the fused name as well, e.g. `mtp.layers.0.self_attn.qkv_proj`. "
   "Experts listed one by one are not concerned: engines match them expert by expert."},
  {RuleId::quantized_embedding, "QC125", "quantized-embedding", Severity::error, false,
   "A token embedding is stored FP8, but engines build it unquantized",
   "Neither vLLM nor SGLang has an FP8 method for a token embedding (embed_tokens, wte, "
   "word_embeddings): their compressed-tensors, fp8 and ModelOpt paths build it in the model's "
   "dtype, so its scale has no parameter to load into (`There is no module or parameter named "
   "'...embed_tokens.weight_scale'`) or, where a loader skips the scale, the FP8 values are read "
   "as plain numbers; vLLM refuses a compressed-tensors group that gives an embedding FP8 "
   "(`compressed-tensors embeddings only support weight-only INT ...`). (vLLM does build "
   "weight-only INT embeddings a compressed-tensors group "
   "targets, and ModelOpt NVFP4 ones under nvfp4_embed: those are not reported.) Recipes that "
   "quantize every weight not ignored (llm-compressor's model-free PTQ) reach a draft layer's own "
   "embedding (`model.layers.N.embed_tokens`, which vLLM loads for the first draft layer) when "
   "only `model.embed_tokens` is ignored. Re-export the embedding unquantized and add it to the "
   "ignore list."},
}};

std::string
lower(std::string_view s)
{
  std::string out(s);
  std::transform(out.begin(), out.end(), out.begin(),
                 [](unsigned char c) { return static_cast<char>(std::tolower(c)); });
  return out;
}

size_t
edit_distance(std::string_view a, std::string_view b)
{
  std::vector<size_t> row(b.size() + 1);
  for (size_t j = 0; j <= b.size(); ++j) {
    row[j] = j;
  }
  for (size_t i = 1; i <= a.size(); ++i) {
    size_t diagonal = row[0];
    row[0] = i;
    for (size_t j = 1; j <= b.size(); ++j) {
      const size_t up = row[j];
      row[j] = std::min({row[j] + 1, row[j - 1] + 1, diagonal + (a[i - 1] == b[j - 1] ? 0 : 1)});
      diagonal = up;
    }
  }
  return row[b.size()];
}

} // namespace

std::string_view
to_string(Severity severity)
{
  switch (severity) {
  case Severity::info:
    return "info";
  case Severity::warning:
    return "warning";
  case Severity::error:
    return "error";
  }
  return "?";
}

std::optional<Severity>
parse_severity(std::string_view text)
{
  for (auto s : {Severity::info, Severity::warning, Severity::error}) {
    if (to_string(s) == text) {
      return s;
    }
  }
  return std::nullopt;
}

std::span<const Rule>
all_rules()
{
  return k_rules;
}

const Rule&
rule(RuleId id)
{
  return k_rules[static_cast<size_t>(id)];
}

const Rule*
find_rule(std::string_view code_or_name)
{
  const std::string wanted = lower(code_or_name);
  for (const Rule& r : k_rules) {
    if (lower(r.code) == wanted || r.name == wanted) {
      return &r;
    }
  }
  return nullptr;
}

std::string
suggest_rule(std::string_view code_or_name)
{
  const std::string wanted = lower(code_or_name);
  std::string best;
  size_t best_distance = std::max<size_t>(3, wanted.size() / 3) + 1;
  for (const Rule& r : k_rules) {
    for (std::string_view candidate : {r.code, r.name}) {
      const size_t d = edit_distance(wanted, lower(candidate));
      if (d < best_distance) {
        best_distance = d;
        best = std::string(candidate);
      }
    }
  }
  return best;
}

std::string
unknown_rule_message(std::string_view code_or_name)
{
  const std::string hint = suggest_rule(code_or_name);
  return fmt::format("unknown rule '{}'{}", code_or_name,
                     hint.empty() ? "" : fmt::format("; did you mean '{}'?", hint));
}

namespace {

nlohmann::ordered_json
rule_json(const Rule& r)
{
  return {{"code", r.code},       {"name", r.name},       {"severity", to_string(r.severity)},
          {"fixable", r.fixable}, {"summary", r.summary}, {"explanation", r.explanation}};
}

} // namespace

std::string
render_rules_json()
{
  nlohmann::ordered_json rules = nlohmann::ordered_json::array();
  for (const Rule& r : k_rules) {
    rules.push_back(rule_json(r));
  }
  return rules.dump(2) + "\n";
}

std::string
render_rule_json(const Rule& rule)
{
  return rule_json(rule).dump(2) + "\n";
}

std::string
render_rule_markdown(const Rule& r)
{
  return fmt::format("## {}\n\n`{}` · default severity {}{}\n\n{}\n\n{}\n", r.code, r.name,
                     to_string(r.severity), r.fixable ? " · fixable by `qcheck fix`" : "",
                     r.summary, r.explanation);
}

std::string
render_rules_markdown()
{
  std::string out =
    "# qcheck rules\n\nGenerated by `qcheck rules --format markdown`; do not edit.\n\n"
    "| code | name | severity | fixable | summary |\n|---|---|---|---|---|\n";
  for (const Rule& r : k_rules) {
    out += fmt::format("| {} | [{}](#{}) | {} | {} | {} |\n", r.code, r.name, lower(r.code),
                       to_string(r.severity), r.fixable ? "yes" : "no", r.summary);
  }
  for (const Rule& r : k_rules) {
    out += "\n" + render_rule_markdown(r);
  }
  return out;
}

} // namespace qcheck
