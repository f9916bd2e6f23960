#include "qcheck/engines.hpp"

#include <algorithm>
#include <array>
#include <atomic>
#include <charconv>
#include <cstring>
#include <deque>
#include <fmt/format.h>
#include <fmt/ranges.h>
#include <limits>
#include <map>
#include <memory>
#include <mutex>
#include <numeric>
#include <unordered_map>
#include <utility>

#include "qcheck/patterns.hpp"
#include "qcheck/regex.hpp"

namespace qcheck {

namespace {

bool
contains(std::string_view text, std::string_view part)
{
  return text.find(part) != std::string_view::npos;
}

// name.starts_with(prefix) for a literal: its length known here, so compared without a call
// (these run for every name a compiled list is asked about).
template<size_t k_size>
bool
starts_with_literal(std::string_view name, const char (&prefix)[k_size])
{
  return name.size() >= k_size - 1 && std::memcmp(name.data(), prefix, k_size - 1) == 0;
}

// Whether strip_language_model() or vllm_namespace() can change a name.
bool
has_language_model_wrapper(std::string_view name)
{
  return starts_with_literal(name, "model.language_model.") ||
         starts_with_literal(name, "language_model.");
}

bool
vllm_renames(std::string_view name)
{
  return starts_with_literal(name, "model.language_model.") ||
         starts_with_literal(name, "model.visual.") ||
         starts_with_literal(name, "model.vision_tower.") ||
         starts_with_literal(name, "model.multi_modal_projector.");
}

// A VLM name with its roots' layouts folded together: transformers >= 4.52 names modules
// model.visual.X, model.language_model.X in memory (where llm-compressor took ignore entries
// from) but saves them as visual.X, model.X for Qwen-VL and others; the engines' mappers bring
// both to one name. "" when `name` has no VLM root to fold.
std::string
vlm_canonical(std::string_view name)
{
  if (!has_language_model_wrapper(name) && !vllm_renames(name)) {
    return {};
  }
  return strip_language_model(vllm_namespace(name));
}

std::string_view
parent_of(std::string_view name)
{
  const size_t dot = name.rfind('.');
  return dot == std::string_view::npos ? std::string_view() : name.substr(0, dot);
}

std::string
with_leaf(std::string_view name, std::string_view leaf)
{
  const std::string_view parent = parent_of(name);
  return parent.empty() ? std::string(leaf) : fmt::format("{}.{}", parent, leaf);
}

// Compiled regexes, cached per thread (configs repeat the same few patterns).
const Expected<Regex>&
cached_regex(const std::string& pattern)
{
  thread_local std::unordered_map<std::string, Expected<Regex>> cache;
  auto it = cache.find(pattern);
  if (it == cache.end()) {
    it = cache.emplace(pattern, Regex::compile(pattern)).first;
  }
  return it->second;
}

bool
is_draft_family_deepseek_like(const ModelInfo& model)
{
  for (const std::string& t : {model.model_type, model.text_model_type}) {
    if (t == "deepseek_v3" || t == "deepseek_v32" || t == "glm4_moe" || t == "glm4_moe_lite" ||
        t == "glm_moe_dsa" || t == "kimi_k2") {
      return true;
    }
  }
  return false;
}

bool
is_qwen_mtp_family(const ModelInfo& model)
{
  for (const std::string& t : {model.model_type, model.text_model_type}) {
    if (t.starts_with("qwen3_5") || t.starts_with("qwen3_next") || t.starts_with("qwen3_6")) {
      return true;
    }
  }
  return false;
}

// Qwen3-Next's own class (not Qwen3.5's): its attention and MTP loader have SGLang special cases.
bool
is_qwen3_next_class(const ModelInfo& model)
{
  return !model.architectures.empty() && model.architectures.front() == "Qwen3NextForCausalLM";
}

bool
is_qwen35_family(const ModelInfo& model)
{
  for (const std::string& t : {model.model_type, model.text_model_type}) {
    if (t.starts_with("qwen3_5") || t.starts_with("qwen3_6")) {
      return true;
    }
  }
  return false;
}

bool
is_nvfp4_algo(const ConfigSource& s)
{
  return s.format == QuantFormat::modelopt && contains(s.algo, "FP4");
}

// Fused Linear groups: shard leaf -> (fused leaf for vLLM/TRT-LLM, fused leaf for SGLang, group).
struct FusedGroup
{
  std::vector<std::string_view> shards;
  std::string_view vllm;
  std::string_view sglang;
};

const std::vector<FusedGroup>&
fused_groups()
{
  static const std::vector<FusedGroup> k_groups{
    {{"q_proj", "k_proj", "v_proj"}, "qkv_proj", "qkv_proj"},
    {{"gate_proj", "up_proj"}, "gate_up_proj", "gate_up_proj"},
    {{"q_a_proj", "kv_a_proj_with_mqa"}, "fused_qkv_a_proj", "fused_qkv_a_proj_with_mqa"},
    {{"in_proj_qkv", "in_proj_z"}, "in_proj_qkvz", "in_proj_qkvz"},
    {{"in_proj_b", "in_proj_a"}, "in_proj_ba", "in_proj_ba"},
  };
  return k_groups;
}

// SGLang/vLLM dotted-boundary test: entry equals name, is a dotted prefix, or a whole run of
// dotted components inside it.
bool
dotted_match(std::string_view entry, std::string_view name)
{
  if (entry.empty()) {
    return false;
  }
  for (size_t pos = name.find(entry); pos != std::string_view::npos;
       pos = name.find(entry, pos + 1)) {
    const size_t end = pos + entry.size();
    if ((pos == 0 || name[pos - 1] == '.') && (end == name.size() || name[end] == '.')) {
      return true;
    }
  }
  return false;
}

// SGLang's glob: only '*' is special, and it must match the whole string.
bool
star_match(std::string_view pattern, std::string_view text)
{
  size_t p = 0, t = 0, star = std::string_view::npos, mark = 0;
  while (t < text.size()) {
    if (p < pattern.size() && pattern[p] == '*') {
      star = ++p;
      mark = t;
    } else if (p < pattern.size() && pattern[p] == text[t]) {
      ++p;
      ++t;
    } else if (star != std::string_view::npos) {
      p = star;
      t = ++mark;
    } else {
      return false;
    }
  }
  while (p < pattern.size() && pattern[p] == '*') {
    ++p;
  }
  return p == pattern.size();
}

bool
icontains(std::string_view text, std::string_view part)
{
  auto it = std::search(text.begin(), text.end(), part.begin(), part.end(), [](char a, char b) {
    return std::tolower(static_cast<unsigned char>(a)) ==
           std::tolower(static_cast<unsigned char>(b));
  });
  return it != text.end();
}

// re: entry against a name with Python re.match / fullmatch; errors go to `errors`.
bool
regex_entry(std::string_view entry, std::string_view name, bool full,
            std::vector<Unevaluable>* errors)
{
  const Expected<Regex>& re = cached_regex(std::string(entry.substr(3)));
  if (!re) {
    if (errors) {
      errors->push_back({std::string(entry), re.error()});
    }
    return false;
  }
  return full ? re->fullmatch(name) : re->match(name);
}

// ---- per-format, per-engine matchers: does `entry` exclude `prefix`? ----

// vLLM ModelOpt (R11), for one already-expanded entry.
bool
modelopt_vllm_entry(std::string_view entry, std::string_view prefix)
{
  if (entry == prefix) {
    return true;
  }
  if (contains(prefix, entry) || contains(strip_language_model(prefix), entry)) {
    return true;
  }
  if (fnmatch(entry, prefix)) {
    return true;
  }
  return contains(prefix, "experts") && contains(entry, "experts") && contains(entry, prefix);
}

// Whether `test` holds for an entry as vLLM reads it: it splits "X*" (not "X.*") into "X" and
// "X.*", tried in that order; any other entry is itself.
template<typename Test>
bool
any_vllm_spelling(std::string_view entry, const Test& test)
{
  if (entry.size() < 2 || entry.back() != '*' || entry[entry.size() - 2] == '.') {
    return test(entry);
  }
  const std::string_view base = entry.substr(0, entry.size() - 1);
  return test(base) || test(std::string(base) + ".*");
}

// Every entry as vLLM splits it, but those over k_longest_entry; origin[i] is the index in
// `list` of expanded[i]. A spelling is a view into its entry, or into `split` for the "X.*" half
// of a split entry: `expanded` lives no longer than `list` and `split`.
void
expand_for_vllm(const EntryList& list, std::vector<std::string_view>& expanded,
                std::vector<uint32_t>& origin, std::deque<std::string>& split)
{
  expanded.reserve(list.size());
  origin.reserve(list.size());
  for (uint32_t i = 0; i < list.size(); ++i) {
    const std::string_view entry = list[i];
    if (entry.size() > k_longest_entry) {
      continue;
    }
    any_vllm_spelling(entry, [&](std::string_view spelling) {
      const bool in_entry = spelling.data() >= entry.data() &&
                            spelling.data() + spelling.size() <= entry.data() + entry.size();
      expanded.push_back(in_entry ? spelling : std::string_view(split.emplace_back(spelling)));
      origin.push_back(i);
      return false;
    });
  }
}

// The MLA projections SGLang's ModelOpt matcher also matches by leaf: an entry ending in one
// of them also excludes every name whose leaf contains that leaf, in any layer
// (modelopt_quant.py is_layer_excluded compares the two leaves alone).
constexpr std::array<std::string_view, 4> k_mla_leaves{"q_a_proj", "q_b_proj", "kv_a_proj_with_mqa",
                                                       "kv_b_proj"};

bool
modelopt_sglang_one(std::string_view e, std::string_view n)
{
  const bool glob = has_glob_chars(e);
  if (!glob && dotted_match(e, n)) {
    return true;
  }
  // star_match() anchors at the name's start: a glob's text before its first '*' must begin it
  // (one compare, not a walk; most names of a long checkpoint fail here).
  if (glob) {
    const size_t literal = std::min(e.find('*'), e.size());
    if (n.substr(0, std::min(literal, n.size())) == e.substr(0, std::min(literal, n.size())) &&
        star_match(e, n)) {
      return true;
    }
  } else if (star_match(e, n)) {
    return true;
  }
  // A component can only match an entry without dots.
  if (e.find('.') == std::string_view::npos) {
    size_t start = 0;
    while (start <= n.size()) {
      size_t dot = n.find('.', start);
      if (dot == std::string_view::npos) {
        dot = n.size();
      }
      if (star_match(e, n.substr(start, dot - start))) {
        return true;
      }
      start = dot + 1;
    }
  }
  const std::string_view e_leaf = leaf_of(e);
  return std::find(k_mla_leaves.begin(), k_mla_leaves.end(), e_leaf) != k_mla_leaves.end() &&
         contains(leaf_of(n), e_leaf);
}

// SGLang's is_layer_skipped (quantization/utils.py _module_path_match), which alone reads a
// fused layer's shards: the entry is a run of whole components of the name. No globs, no
// single-component match, no MLA rule. (It also drops an entry's trailing dots, which qcheck
// does not model here or for the other formats.)
bool
sglang_skipped_one(std::string_view e, std::string_view n)
{
  return dotted_match(e, n);
}

bool
modelopt_sglang_entry(std::string_view entry, std::string_view prefix)
{
  const bool entry_wrapped = has_language_model_wrapper(entry);
  const bool prefix_wrapped = has_language_model_wrapper(prefix);
  if (modelopt_sglang_one(entry, prefix)) {
    return true;
  }
  const std::string e2 = entry_wrapped ? strip_language_model(entry) : std::string();
  const std::string n2 = prefix_wrapped ? strip_language_model(prefix) : std::string();
  if (prefix_wrapped && modelopt_sglang_one(entry, n2)) {
    return true;
  }
  if (entry_wrapped && modelopt_sglang_one(e2, prefix)) {
    return true;
  }
  return entry_wrapped && prefix_wrapped && modelopt_sglang_one(e2, n2);
}

// A fused layer's shard as SGLang's ModelOpt config reads it (is_layer_skipped alone; the fused
// name itself then goes through is_layer_excluded too).
bool
modelopt_sglang_shard(std::string_view entry, std::string_view shard)
{
  // is_layer_skipped takes the name as it is; the list holds entries without their wrapper too.
  return sglang_skipped_one(entry, shard) ||
         (has_language_model_wrapper(entry) &&
          sglang_skipped_one(strip_language_model(entry), shard));
}

bool
modelopt_trtllm_entry(std::string_view entry, std::string_view name)
{
  // A "re:" entry is a regex, fully matched: its ".*" is regex syntax, not the glob suffix that
  // also stands for the node itself.
  const bool regex = entry.starts_with("re:");
  if (!regex) {
    // Every node long enough starts as the name does, and a glob's text before its first
    // wildcard must start the node: a name that leaves it before either ends has no match.
    const size_t n = std::min(first_wildcard(entry), name.size());
    if (n > 0 && std::memcmp(name.data(), entry.data(), n) != 0) {
      return false;
    }
  }
  std::string_view node = name;
  while (!node.empty()) {
    if (regex) {
      if (regex_entry(entry, node, true, nullptr)) {
        return true;
      }
    } else if (fnmatch(entry, node)) {
      return true;
    } else if (entry.size() > 2 && entry.ends_with(".*") &&
               entry.substr(0, entry.size() - 2) == node &&
               !has_glob_chars(entry.substr(0, entry.size() - 2))) {
      return true;
    }
    node = parent_of(node);
  }
  return false;
}

// SGLang's Qwen2-VL and Qwen2.5-VL: the tower is visual.X, the language model model.X, and the
// model's mapper brings ignore entries to those names (qwen2_vl.py, qwen2_5_vl.py).
bool
sglang_qwen2_vl(const ModelInfo* model)
{
  return model != nullptr && (model->model_type == "qwen2_5_vl" || model->model_type == "qwen2_vl");
}

// SGLang builds these with Qwen3-VL's model class (qwen3_vl.py; qwen3_vl_moe.py and qwen3_5.py
// inherit it): the vision tower without a quantization config, the text model under "model.".
bool
sglang_qwen3_vl_class(const ModelInfo& model)
{
  return model.model_type == "qwen3_vl" || model.model_type == "qwen3_vl_moe" ||
         is_qwen35_family(model);
}

bool
is_kimi_k25(const ModelInfo* model)
{
  return model != nullptr && (model->model_type == "kimi_k25" ||
                              (!model->architectures.empty() &&
                               model->architectures.front() == "KimiK25ForConditionalGeneration"));
}

// The name a compressed-tensors regex meets: the engine's own module name. vLLM: vllm_namespace()
// for every model (its mapper renames exact entries the same way, so those are compared in
// checkpoint namespace). SGLang: its model file's prefixes where qcheck knows them to differ from
// the checkpoint's (gemma3_mm.py, and mistral.py's renames: vision_tower.X,
// multi_modal_projector.X, language_model.model.X; qwen2_vl.py and qwen2_5_vl.py: visual.X and
// model.X); else the checkpoint name. (SGLang's exact entries meet it for the Qwen-VL models,
// below, and the checkpoint name for the others.)
std::string
regex_subject(Engine engine, const ModelInfo* model, std::string_view prefix)
{
  if (engine == Engine::vllm) {
    return vllm_namespace(prefix);
  }
  if (engine == Engine::sglang && model != nullptr) {
    if (model->model_type == "gemma3" || model->model_type == "mistral3") {
      return vllm_namespace(prefix);
    }
    if (sglang_qwen2_vl(model)) {
      return prefix.starts_with("model.visual.") ? std::string(prefix.substr(6))
                                                 : strip_language_model(prefix);
    }
  }
  return std::string(prefix);
}

// SGLang's Qwen2-VL, Qwen2.5-VL and Qwen3-VL (and Qwen3-VL-MoE, which inherits it): the loader
// runs the model's hf_to_sglang_mapper over compressed-tensors' ignore list (loader.py,
// apply_weight_name_mapper). Its prefixes give text entries a name none of the text layers has.
bool
sglang_maps_qwen_vl_entries(const ModelInfo* model)
{
  if (model == nullptr || !model->model_type.starts_with('q')) { // asked for every layer
    return false;
  }
  return sglang_qwen2_vl(model) || model->model_type == "qwen3_vl" ||
         model->model_type == "qwen3_vl_moe";
}

// Kimi-K2.5's hf_to_sglang_mapper (kimi_k25.py) runs over the lists too: "language_model.layers."
// becomes "language_model.model.layers.".
bool
sglang_maps_entries(const ModelInfo* model)
{
  return sglang_maps_qwen_vl_entries(model) || is_kimi_k25(model);
}

// A plain entry as that mapper leaves it: the longest of its prefixes the entry starts with
// replaced. (Its one substring rule, "attn.qkv" -> "attn.qkv_proj", renames the tower's qkv
// names alike on both sides; it is not modelled.)
std::string sglang_qwen_vl_mapped(std::string_view entry);

std::string
kimi_sglang_mapped(std::string_view entry)
{
  constexpr std::string_view k_from = "language_model.layers.";
  return entry.starts_with(k_from)
           ? fmt::format("language_model.model.layers.{}", entry.substr(k_from.size()))
           : std::string(entry);
}

// An entry as the model's SGLang mapper leaves it (sglang_maps_entries()).
std::string
sglang_mapped(const ModelInfo* model, std::string_view entry)
{
  return is_kimi_k25(model) ? kimi_sglang_mapped(entry) : sglang_qwen_vl_mapped(entry);
}

std::string
sglang_qwen_vl_mapped(std::string_view entry)
{
  static constexpr std::array<std::pair<std::string_view, std::string_view>, 4> k_prefixes{{
    {"model.language_model.", "language_model.model."},
    {"lm_head.", "language_model.lm_head."},
    {"model.visual.", "visual."},
    {"model.", "language_model.model."},
  }};
  for (const auto& [from, to] : k_prefixes) {
    if (entry.starts_with(from)) {
      return fmt::format("{}{}", to, entry.substr(from.size()));
    }
  }
  return std::string(entry);
}

// Whether `tail` is a run of whole dotted components ending `name` (not all of it).
bool
ends_with_components(std::string_view name, std::string_view tail)
{
  return name.size() > tail.size() && name.ends_with(tail) &&
         name[name.size() - tail.size() - 1] == '.';
}

bool
ct_entry(Engine engine, std::string_view entry, std::string_view prefix,
         std::vector<Unevaluable>* errors, const ModelInfo* model = nullptr)
{
  if (engine == Engine::sglang && !entry.starts_with("re:") && sglang_maps_entries(model)) {
    // Exact or as a dotted suffix (below), the mapped entry against SGLang's own name.
    const std::string e = sglang_mapped(model, entry);
    const std::string n = regex_subject(engine, model, prefix);
    return e == n || ends_with_components(n, e);
  }
  if (entry.starts_with("re:")) {
    // vLLM maps exact entries through the model's mapper but not regexes: a regex meets the
    // renamed prefix (visual.X, vision_tower.X, language_model.model.X).
    return regex_entry(entry, regex_subject(engine, model, prefix), false, errors);
  }
  if (entry == prefix) {
    return true;
  }
  // vLLM maps an exact entry and the checkpoint's names through the model's mapper: entries in
  // either VLM layout meet tensors in either (SGLang's Qwen-VL mappers are read above).
  if (engine == Engine::vllm) {
    // Either side as it is when it has no VLM root (entry != prefix here: one was folded).
    const std::string e = vlm_canonical(entry);
    const std::string p = vlm_canonical(prefix);
    if ((e.empty() ? entry : std::string_view(e)) == (p.empty() ? prefix : std::string_view(p))) {
      return true;
    }
  }
  // SGLang also takes a plain entry as a dotted suffix ("self_attn.kv_b_proj"), never as a prefix
  // or a substring (compressed_tensors/utils.py since f69af7b, PR 32736; spec 3.4 predates it).
  return engine == Engine::sglang && ends_with_components(prefix, entry);
}

// An exact name or a "re:" regex (re.match) in both engines; a glob in vLLM only (PR 48606).
// SGLang's should_ignore_layer (quark/utils.py) compares exactly or by regex: a glob is text there.
bool
quark_entry(Engine engine, std::string_view entry, std::string_view prefix,
            std::vector<Unevaluable>* errors, const ModelInfo* model = nullptr)
{
  if (engine == Engine::sglang && is_kimi_k25(model) && !entry.starts_with("re:")) {
    return sglang_mapped(model, entry) == prefix; // its mapper runs over the list too
  }
  if (entry.starts_with("re:")) {
    // vLLM's apply_vllm_mapper renames exact entries, not regexes: they meet its own prefixes.
    if (engine == Engine::vllm && vllm_renames(prefix)) {
      return regex_entry(entry, vllm_namespace(prefix), false, errors);
    }
    return regex_entry(entry, prefix, false, errors);
  }
  return entry == prefix ||
         (engine != Engine::sglang && has_glob_chars(entry) && fnmatch(entry, prefix));
}

bool
bnb_entry(std::string_view entry, std::string_view prefix)
{
  for (auto part : split_dots(prefix)) {
    if (part == entry) {
      return true;
    }
  }
  return prefix == entry || prefix.starts_with(fmt::format("{}.", entry));
}

// Whether compressed-tensors target `target` selects vLLM's Linear layers by their class, as
// find_matched_target compares class names once no target matches the layer's name: a "re:"
// target matching one of those classes' names (re.match), another naming "linear" (the class
// names contain it; "Linear" is llm-compressor's usual target).
bool
ct_class_target(std::string_view target)
{
  static constexpr std::array<std::string_view, 5> k_classes{
    "QKVParallelLinear", "MergedColumnParallelLinear", "RowParallelLinear", "ColumnParallelLinear",
    "ReplicatedLinear"};
  if (target.starts_with("re:")) {
    return std::any_of(k_classes.begin(), k_classes.end(),
                       [&](std::string_view c) { return regex_entry(target, c, false, nullptr); });
  }
  return icontains(target, "linear");
}

} // namespace

int
ct_scheme_group(const ConfigSource& s, const EngineLayer& layer)
{
  // vLLM's target_scheme_map: each target once, where it first appears, with the scheme of the
  // last group listing it.
  std::vector<std::pair<std::string_view, int>> targets;
  for (size_t g = 0; g < s.groups.size(); ++g) {
    for (const std::string& target : s.groups[g].targets) {
      const auto seen = std::find_if(targets.begin(), targets.end(),
                                     [&](const auto& t) { return t.first == target; });
      if (seen == targets.end()) {
        targets.emplace_back(target, static_cast<int>(g));
      } else {
        seen->second = static_cast<int>(g);
      }
    }
  }
  const auto by_name = [&](std::string_view name) {
    for (const auto& [target, group] : targets) {
      if (target == name ||
          (target.starts_with("re:") && regex_entry(target, name, false, nullptr))) {
        return group;
      }
    }
    return -1;
  };
  const std::vector<std::string> probes =
    layer.kind == LayerKind::fused_moe ? fused_moe_probe_names(layer) : std::vector<std::string>{};
  if (const int g = by_name(probes.empty() ? std::string_view(layer.prefix) : probes.front());
      g >= 0) {
    return g;
  }
  for (const auto& [target, group] : targets) {
    if (ct_class_target(target)) {
      return group;
    }
  }
  if (!layer.shards.empty() &&
      std::all_of(layer.shards.begin(), layer.shards.end(),
                  [&](std::string_view shard) { return by_name(shard) >= 0; })) {
    return by_name(layer.shards[0]);
  }
  return -1;
}

bool
bnb_names_differ(const ModelInfo* model)
{
  return sglang_maps_qwen_vl_entries(model);
}

std::string
bnb_name(Engine engine, const ModelInfo* model, std::string_view prefix)
{
  if (engine == Engine::vllm && sglang_maps_qwen_vl_entries(model)) {
    return sglang_qwen_vl_mapped(prefix);
  }
  if (engine == Engine::sglang && sglang_qwen2_vl(model)) {
    std::string name = regex_subject(engine, model, prefix);
    // SGLang's VisionAttention names its projection qkv_proj (attention/vision.py).
    if (name.starts_with("visual.") && name.ends_with(".attn.qkv")) {
      name += "_proj";
    }
    return name;
  }
  return std::string(prefix);
}

namespace {

// vLLM's is_layer_skipped (quantization/utils/quant_utils.py): an entry equal to the prefix or,
// for a prefix holding "experts" (a fused MoE layer, a shared expert's projection), one that
// contains it. SGLang's (quantization/utils.py): dotted module-path boundaries (PR 23467), and
// the same rule for a prefix holding "experts" (an entry holding "experts" that contains it).
// Fused shards are compared with fp8_shard_entry().
bool
fp8_entry(Engine engine, std::string_view entry, std::string_view prefix)
{
  const bool experts =
    contains(prefix, "experts") && entry.size() > prefix.size() && contains(entry, prefix);
  if (engine != Engine::vllm) {
    return dotted_match(entry, prefix) || experts;
  }
  return entry == prefix || experts;
}

// A fused layer's shard as the engines compare it: vLLM exactly (its experts branch is for
// prefixes it does not split), SGLang on dotted boundaries.
bool
fp8_shard_entry(Engine engine, std::string_view entry, std::string_view shard)
{
  return engine == Engine::vllm ? entry == shard : dotted_match(entry, shard);
}

// Shard prefixes of a fused layer, or just the prefix.
std::vector<std::string_view>
names_to_check(const EngineLayer& layer)
{
  return layer.shards.empty() ? std::vector<std::string_view>{layer.prefix} : layer.shards.views();
}

// The candidates decide() found for module names, kept for the unused-entry check. Threads
// deciding side by side keep and read them: each module's slot is claimed once, by whichever
// finds its candidates first, and read only once complete.
class KeptCandidates
{
public:
  explicit KeptCandidates(const Inventory& inventory)
    : m_inventory(inventory), m_slots(std::make_unique<Slot[]>(inventory.modules.size()))
  {
  }

  // The candidates kept for `module` when `name` is its name; nullopt otherwise.
  std::optional<std::span<const uint32_t>> find(std::optional<uint32_t> module,
                                                std::string_view name) const
  {
    if (!holds(module, name)) {
      return std::nullopt;
    }
    const Slot& slot = m_slots[*module];
    const uint32_t state = slot.state.load(std::memory_order_acquire);
    if (state == k_empty || state == k_busy) {
      return std::nullopt;
    }
    return std::span(slot.entries.data(), state - 1);
  }

  // Keeps `found` as the candidates of `module`, when `name` is its name and they are few.
  void keep(std::optional<uint32_t> module, std::string_view name, std::span<const uint32_t> found)
  {
    if (found.size() > k_kept || !holds(module, name)) {
      return;
    }
    Slot& slot = m_slots[*module];
    uint32_t expected = k_empty;
    if (slot.state.compare_exchange_strong(expected, k_busy, std::memory_order_acquire)) {
      std::copy(found.begin(), found.end(), slot.entries.begin());
      slot.state.store(static_cast<uint32_t>(found.size()) + 1, std::memory_order_release);
    }
  }

  // Counted when asked (tests ask): a counter bumped per module by the threads deciding side
  // by side was one more cache line they took from each other.
  size_t size() const
  {
    size_t kept = 0;
    for (size_t m = 0; m < m_inventory.modules.size(); ++m) {
      const uint32_t state = m_slots[m].state.load(std::memory_order_acquire);
      kept += state != k_empty && state != k_busy ? 1 : 0;
    }
    return kept;
  }

private:
  // A name matches entries of a long list seldom more than once or twice; a module with more
  // candidates is searched again.
  static constexpr size_t k_kept = 3;
  static constexpr uint32_t k_empty = 0;
  static constexpr uint32_t k_busy = ~uint32_t{0};
  struct Slot
  {
    std::atomic<uint32_t> state{k_empty}; // else busy, or 1 + the count kept
    std::array<uint32_t, k_kept> entries{};
  };

  // Most often `name` is a view of the module's own name: no bytes compared then.
  bool holds(std::optional<uint32_t> module, std::string_view name) const
  {
    if (!module || *module >= m_inventory.modules.size()) {
      return false;
    }
    const std::string_view own = m_inventory.modules[*module].name;
    return (own.data() == name.data() && own.size() == name.size()) || own == name;
  }

  const Inventory& m_inventory;
  std::unique_ptr<Slot[]> m_slots;
};

// One block's list indexed for the engines compiled together, numbered as source.excludes: its
// candidates for a name are a superset of what each of those engines' own index would give (the
// widest mode, every option, every spelling of entries and names any of them reads), so one
// search per name serves them all. The candidates found for module names are kept, once, for
// whichever engine or check asks next.
struct SharedIndex
{
  EntryIndex index;
  bool strip = false;     // also the name without its VLM wrapper
  bool mapped = false;    // also the name as vLLM's mapper renames it (for its regexes)
  bool canonical = false; // also vlm_canonical(name) (compressed-tensors exact entries)
  std::unique_ptr<KeptCandidates> kept; // set before any search, when modules are kept

  // Appends the candidates for `name` to `out`, sorted and unique; those kept when `module` is
  // that name's module, else searched (and kept).
  void candidates(std::string_view name, std::optional<uint32_t> module,
                  std::vector<uint32_t>& out) const
  {
    if (kept) {
      if (const auto found = kept->find(module, name)) {
        out.insert(out.end(), found->begin(), found->end());
        return;
      }
    }
    const size_t first = out.size();
    std::array<std::string_view, 4> names{name, name, name, name};
    std::string unwrapped, renamed, folded;
    size_t count = 1;
    // Most names are neither wrapped nor renamed: no copies for them.
    if (strip && has_language_model_wrapper(name) &&
        (unwrapped = strip_language_model(name)) != name) {
      names[count++] = unwrapped;
    }
    if (mapped && vllm_renames(name) && (renamed = vllm_namespace(name)) != name) {
      names[count++] = renamed;
    }
    if (canonical && !(folded = vlm_canonical(name)).empty() && folded != name) {
      names[count++] = folded;
    }
    index.candidates(std::span(names.data(), count), out);
    if (kept) {
      kept->keep(module, name, std::span(out).subspan(first));
    }
  }
};

// One matcher's view of a SharedIndex: candidates numbered as the matcher's list (the block's
// entries, or vLLM's split spellings of them), and that matcher's answers remembered. Each
// instance serves one matcher.
struct IndexedList
{
  // First matches among the entries blind to digits, by digit signature (-1: none).
  struct Memo
  {
    std::mutex mutex;
    std::unordered_map<std::string, int32_t> first;
  };

  std::shared_ptr<const SharedIndex> shared; // shared by copies and by other engines' lists
  // With vLLM's split spellings: entry i of the block is list[first[i], first[i + 1]).
  const std::vector<uint32_t>* first = nullptr;
  bool use_index = false; // long enough for candidates to beat trying every entry
  // Some entries are blind to digits (see blind_to_digits()) and the others few: the blind
  // ones' answers are memoized per digit signature, the others tried on every name.
  bool blind_to_digits = false;
  std::vector<uint32_t> sighted; // with blind_to_digits: the entries that see digits, in order
  std::unique_ptr<Memo> memo = std::make_unique<Memo>();

  IndexedList() = default;
  template<typename List>
  IndexedList(std::shared_ptr<const SharedIndex> index, const List& list,
              const std::vector<uint32_t>* firsts)
    : shared(std::move(index)), first(firsts), use_index(list.size() >= k_index_threshold)
  {
    for (uint32_t e = 0; e < list.size() && sighted.size() < k_index_threshold; ++e) {
      if (!qcheck::blind_to_digits(list[e])) {
        sighted.push_back(e);
      }
    }
    blind_to_digits = sighted.size() < std::min(list.size(), k_index_threshold);
    if (!blind_to_digits) {
      sighted.clear();
    }
  }
  // A copy starts with no answers: it may serve another matcher.
  IndexedList(const IndexedList& o)
    : shared(o.shared), first(o.first), use_index(o.use_index), blind_to_digits(o.blind_to_digits),
      sighted(o.sighted)
  {
  }
  // Whether entry `e` sees digits (with blind_to_digits).
  bool sees_digits(uint32_t e) const
  {
    return std::binary_search(sighted.begin(), sighted.end(), e);
  }
  IndexedList& operator=(const IndexedList& o)
  {
    *this = IndexedList(o);
    return *this;
  }
  IndexedList(IndexedList&&) noexcept = default;
  IndexedList& operator=(IndexedList&&) noexcept = default;
  ~IndexedList() = default;

  // Appends to `out`, sorted and unique, the candidates for `name` in the list's numbering
  // (kept for `module` when it is the name's module).
  void candidates(std::string_view name, std::optional<uint32_t> module,
                  std::vector<uint32_t>& out) const
  {
    if (first == nullptr) {
      shared->candidates(name, module, out);
      return;
    }
    thread_local std::vector<uint32_t> found;
    found.clear();
    shared->candidates(name, module, found);
    for (const uint32_t i : found) {
      for (uint32_t k = (*first)[i]; k < (*first)[i + 1]; ++k) {
        out.push_back(k);
      }
    }
  }

  static constexpr size_t k_index_threshold = 16;
};

// The compiled form of one block's list for one engine.
struct ListIndexes
{
  bool compiled = false;                  // the matchers below are set
  std::vector<std::string_view> expanded; // vLLM ModelOpt: each entry as vLLM splits it
  std::deque<std::string> split;          // the "X.*" spellings `expanded` views
  std::vector<uint32_t> origin;           // expanded[i] comes from excludes[origin[i]]
  std::vector<uint32_t> first;            // excludes[i] is expanded[first[i], first[i + 1])
  IndexedList shard;                      // the matcher for fused shards
  IndexedList whole;                      // the matcher for whole prefixes
  std::shared_ptr<const DynamicRules> dynamic; // the block's GPTQ dynamic keys, if any
};

// Finds the first entry of `list` that matches `name` under `match`. With an index: among its
// candidates only (the same entry: candidates are a superset, tried in list order), kept for
// `module` when it is the module of that name. With `blind_only`, among the entries blind to
// digits only (indexed->blind_to_digits), and for those once per digit signature (fused MoE
// shards share a handful).
template<typename List, typename Match>
const typename List::value_type*
first_blind_or_any_match(const List& list, std::string_view name, Match match,
                         const IndexedList* indexed, std::optional<uint32_t> module,
                         bool blind_only)
{
  using Entry = typename List::value_type;
  const bool skip_sighted = blind_only && !indexed->sighted.empty();
  const auto tried = [&](uint32_t i) {
    return list[i].size() <= k_longest_entry && (!skip_sighted || !indexed->sees_digits(i)) &&
           match(list[i], name);
  };
  const auto search = [&]() -> const Entry* {
    if (indexed != nullptr && indexed->use_index) {
      thread_local std::vector<uint32_t> found;
      found.clear();
      indexed->candidates(name, module, found);
      for (uint32_t i : found) {
        if (tried(i)) {
          return &list[i];
        }
      }
      return nullptr;
    }
    for (uint32_t i = 0; i < list.size(); ++i) {
      if (tried(i)) {
        return &list[i];
      }
    }
    return nullptr;
  };
  thread_local std::string signature;
  if (!blind_only || !digit_signature(name, signature)) {
    return search();
  }
  IndexedList::Memo& memo = *indexed->memo;
  {
    const std::lock_guard lock(memo.mutex);
    if (const auto it = memo.first.find(signature); it != memo.first.end()) {
      return it->second < 0 ? nullptr : &list[static_cast<size_t>(it->second)];
    }
  }
  const Entry* hit = search();
  const std::lock_guard lock(memo.mutex);
  memo.first.emplace(signature, hit != nullptr ? static_cast<int32_t>(hit - list.data()) : -1);
  return hit;
}

// The first entry matching `name` among `blind_hit` (the first match among the entries blind to
// digits, or null) and the entries that see digits before it.
template<typename List, typename Match>
const typename List::value_type*
first_sighted_before(const List& list, std::string_view name, Match match,
                     const IndexedList& indexed, const typename List::value_type* blind_hit)
{
  const size_t limit =
    blind_hit != nullptr ? static_cast<size_t>(blind_hit - list.data()) : list.size();
  for (const uint32_t i : indexed.sighted) {
    if (i >= limit) {
      break;
    }
    if (list[i].size() <= k_longest_entry && match(list[i], name)) {
      return &list[i];
    }
  }
  return blind_hit;
}

// The first entry of `list` that matches `name` under `match` (see first_blind_or_any_match).
template<typename List, typename Match>
const typename List::value_type*
first_match(const List& list, std::string_view name, Match match,
            const IndexedList* indexed = nullptr, std::optional<uint32_t> module = std::nullopt)
{
  if (indexed == nullptr || !indexed->blind_to_digits) {
    return first_blind_or_any_match(list, name, match, indexed, module, false);
  }
  const auto* hit = first_blind_or_any_match(list, name, match, indexed, module, true);
  return indexed->sighted.empty() ? hit : first_sighted_before(list, name, match, *indexed, hit);
}

// Shard-aware exclusion: a fused layer is excluded when all shards are, and disagreement is
// recorded; `whole` is then tried on the fused prefix itself, as `compared` says. Each of
// `indexes`' matchers must be given the same match function on every call: it remembers that
// function's answers. A layer excluded because every shard is listed, or whose shards disagree,
// gets the entries that excluded a shard in d.shard_entries, or with `entry_indices` their
// indices in `list` there instead (for a caller that maps them back to the list's spelling).
template<typename List, typename ShardMatch, typename WholeMatch>
void
decide_by_list(Decision& d, const EngineLayer& layer, const List& list, std::string_view list_name,
               ShardMatch shard_match, WholeMatch whole_match, const ListIndexes* indexes = nullptr,
               Compared compared = Compared::shards_then_prefix,
               std::vector<uint32_t>* entry_indices = nullptr)
{
  using Entry = typename List::value_type;
  d.quantized = true;
  const bool prefix_compared = layer.shards.empty() || compared != Compared::shards;
  if (!layer.shards.empty() && compared != Compared::prefix) {
    // Per shard, the entry that matched it (null: none); the names are listed only when shards
    // disagree, the entries only when all of them are listed.
    thread_local std::vector<const Entry*> matched;
    matched.assign(layer.shards.size(), nullptr);
    size_t hits = 0;
    const Entry* entry = nullptr;
    // The entries blind to digits answer shards alike up to their numbers (one expert's
    // projections and the next one's): each kind is matched once per layer, the entries that
    // see digits on every shard.
    const IndexedList* indexed = indexes ? &indexes->shard : nullptr;
    const bool blind = indexed != nullptr && indexed->blind_to_digits;
    // Shards below the layer's prefix (experts) are compared after it.
    struct Answer
    {
      bool below = false;
      std::string_view rest;
      const Entry* entry = nullptr;
    };
    std::array<Answer, 4> answered;
    size_t answers = 0;
    size_t next_kind = 0;
    for (size_t j = 0; j < layer.shards.size(); ++j) {
      const std::string_view shard = layer.shards[j];
      const Entry* e = nullptr;
      if (blind) {
        const bool below = is_below(shard, layer.prefix);
        const std::string_view rest =
          below ? std::string_view(shard).substr(layer.prefix.size() + 1) : shard;
        // Shards come in cycles (each expert's down, gate, up): the kind after the last one
        // found is tried first.
        const Answer* known = nullptr;
        for (size_t k = 0; k < answers && known == nullptr; ++k) {
          const size_t at = (next_kind + k) % answers;
          if (answered[at].below == below && same_digit_signature(answered[at].rest, rest)) {
            known = &answered[at];
            next_kind = at + 1;
          }
        }
        if (known != nullptr) {
          e = known->entry;
        } else {
          e = first_blind_or_any_match(list, shard, shard_match, indexed, layer.shard_module(j),
                                       true);
          if (answers < answered.size()) {
            answered[answers++] = {below, rest, e};
          }
        }
        if (!indexed->sighted.empty()) {
          e = first_sighted_before(list, shard, shard_match, *indexed, e);
        }
      } else {
        e = first_match(list, shard, shard_match, indexed, layer.shard_module(j));
      }
      if (e != nullptr) {
        matched[j] = e;
        ++hits;
        entry = e;
      }
    }
    // The entries that excluded a shard, once each, in list order (they are elements of
    // `list`).
    const auto keep_entries = [&] {
      std::sort(matched.begin(), matched.end());
      matched.erase(std::unique(matched.begin(), matched.end()), matched.end());
      for (const Entry* e : matched) {
        if (e == nullptr) {
          continue;
        }
        if (entry_indices != nullptr) {
          entry_indices->push_back(static_cast<uint32_t>(e - list.data()));
        } else {
          d.shard_entries.emplace_back(*e);
        }
      }
    };
    if (hits > 0 && hits < layer.shards.size()) {
      std::vector<std::string_view> hit, miss;
      for (size_t j = 0; j < layer.shards.size(); ++j) {
        (matched[j] != nullptr ? hit : miss).push_back(layer.shards[j]);
      }
      d.shards_disagree = true;
      d.shard_detail =
        fmt::format("{} excluded, {} not", fmt::join(hit, ", "), fmt::join(miss, ", "));
      keep_entries();
    } else if (hits == layer.shards.size()) {
      d.quantized = false;
      d.matched = *entry;
      d.reason = fmt::format("every shard is listed in {}", list_name);
      keep_entries();
      return;
    }
  }
  if (const Entry* e = prefix_compared
                         ? first_match(list, layer.prefix, whole_match,
                                       indexes ? &indexes->whole : nullptr, layer.prefix_module())
                         : nullptr) {
    d.quantized = false;
    d.matched = *e;
    d.reason = fmt::format("'{}' in {} matches '{}'", *e, list_name, layer.prefix);
    return;
  }
  if (d.quantized) {
    d.reason = fmt::format("no entry of {} matches '{}'", list_name, layer.prefix);
  }
}

// SGLang's ModelOpt configs for the Qwen-VL models above: the mapper runs over the list too, and
// each mapped entry starting with "language_model." is also kept without it
// (modelopt_quant.py apply_weight_name_mapper); both meet SGLang's own names.
template<typename One>
bool
modelopt_sglang_qwen_vl_read(const ModelInfo& model, std::string_view entry,
                             std::string_view prefix, const One& one)
{
  const std::string e = sglang_mapped(&model, entry);
  const std::string n = regex_subject(Engine::sglang, &model, prefix);
  constexpr std::string_view k_root = "language_model.";
  return one(e, n) || (e.starts_with(k_root) && one(std::string_view(e).substr(k_root.size()), n));
}

bool
modelopt_sglang_qwen_vl_entry(const ModelInfo& model, std::string_view entry,
                              std::string_view prefix)
{
  return modelopt_sglang_qwen_vl_read(model, entry, prefix, modelopt_sglang_one);
}

void
decide_modelopt(Decision& d, Engine engine, const ConfigSource& s, const ModelInfo& model,
                const EngineLayer& layer, const ListIndexes* ix)
{
  const std::string list_name = s.list_key;
  if (engine == Engine::vllm) {
    std::vector<std::string_view> own_expanded;
    std::vector<uint32_t> own_origin;
    std::deque<std::string> own_split;
    if (ix == nullptr) {
      expand_for_vllm(s.excludes, own_expanded, own_origin, own_split);
    }
    const auto& expanded = ix ? ix->expanded : own_expanded;
    const auto& origin = ix ? ix->origin : own_origin;
    std::vector<uint32_t> shard_entries; // indices into `expanded`
    decide_by_list(
      d, layer, expanded, list_name, [](std::string_view e, std::string_view n) { return e == n; },
      modelopt_vllm_entry, ix, Compared::shards_then_prefix, &shard_entries);
    if (!d.matched.empty()) {
      const auto it = std::find(expanded.begin(), expanded.end(), d.matched);
      if (it != expanded.end()) {
        d.matched = s.excludes[origin[static_cast<size_t>(it - expanded.begin())]];
      }
    }
    // The list's entries they come from, once each, in list order (origin is increasing).
    for (const uint32_t i : shard_entries) {
      const std::string_view entry = s.excludes[origin[i]];
      if (d.shard_entries.empty() || d.shard_entries.back() != entry) {
        d.shard_entries.emplace_back(entry);
      }
    }
    if (contains(layer.prefix, "vision_tower") || contains(layer.prefix, "vision_model") ||
        contains(layer.prefix, "visual")) {
      // Unquantized whatever the list says: an entry excluding it changes nothing here.
      (d.quantized ? d.override_note : d.forced_note) =
        "vLLM treats vision modules as unquantized for ModelOpt";
      d.quantized = false;
    }
  } else if (engine == Engine::sglang && sglang_maps_entries(&model)) {
    const auto shard = [&](std::string_view e, std::string_view n) {
      return modelopt_sglang_qwen_vl_read(model, e, n, sglang_skipped_one);
    };
    const auto match = [&](std::string_view e, std::string_view n) {
      return modelopt_sglang_qwen_vl_entry(model, e, n);
    };
    decide_by_list(d, layer, s.excludes, list_name, shard, match, ix);
  } else if (engine == Engine::sglang) {
    decide_by_list(d, layer, s.excludes, list_name, modelopt_sglang_shard, modelopt_sglang_entry,
                   ix);
  } else {
    decide_by_list(d, layer, s.excludes, list_name, modelopt_trtllm_entry, modelopt_trtllm_entry,
                   ix);
  }
  // An entry naming one layer's MLA projection that excluded another layer's: said why.
  if (engine == Engine::sglang && !d.quantized && !has_glob_chars(d.matched) &&
      d.reason.find(" matches ") != std::string::npos) {
    const std::string_view leaf = leaf_of(d.matched);
    if (std::find(k_mla_leaves.begin(), k_mla_leaves.end(), leaf) != k_mla_leaves.end() &&
        parent_of(d.matched) != parent_of(layer.prefix)) {
      d.reason += fmt::format(" (SGLang's ModelOpt matcher reads an entry ending in '{}' as "
                              "every module whose last component holds it, in any layer)",
                              leaf);
    }
  }
  if (!d.quantized || s.algo != "MIXED_PRECISION") {
    return;
  }
  // MIXED_PRECISION is an allow-list (R14).
  bool listed = false;
  for (const auto& name : names_to_check(layer)) {
    for (const auto& [key, algo] : s.quantized_layers) {
      const bool hit =
        engine == Engine::trtllm
          ? fnmatch(key, name)
          : (key == name || vllm_namespace(key) == vllm_namespace(name) ||
             (layer.kind == LayerKind::fused_moe && key.starts_with(fmt::format("{}.", name))));
      if (hit) {
        listed = true;
        d.matched = key;
      }
    }
  }
  if (!listed) {
    d.quantized = false;
    d.reason = fmt::format("'{}' is not in quantized_layers", layer.prefix);
  } else {
    d.reason = fmt::format("quantized_layers lists '{}'", d.matched);
  }
}

// The projections of expert 0 that both engines resolve a compressed-tensors MoE layer from.
constexpr std::array<const char*, 3> k_moe_probe_projections{"gate_proj", "up_proj", "down_proj"};

// The fused names whose shards SGLang's quantization config reads for the model's class, or
// null when qcheck does not know the class's mapping.
const std::array<std::string_view, 4>*
sglang_mapping_keys(const ModelInfo& model)
{
  // The classes that call update_packed_modules_mapping() or assign the mapping in __init__, and
  // a wrapper that builds one of them with its own quantization config under the checkpoint's
  // names (sglang main, b98d472: deepseek_v2.py, qwen3_5_text.py, qwen3_next.py, kimi_vl.py).
  // DeepSeek's is the class's own dict, which holds fused_qkv_a_proj_with_mqa when q_lora_rank
  // is set, the only case with that layer; Kimi-K2.5 builds one with its quantization config
  // (kimi_k25.py; its names: kimi_k25_name()). dots.vlm, DeepSeek-OCR and Pixtral also build
  // DeepSeek, but under other names than their checkpoints', which qcheck does not model: they
  // are left out.
  struct Mapping
  {
    std::string_view architecture;
    std::array<std::string_view, 4> keys;
  };
  static constexpr std::string_view k_mla = "fused_qkv_a_proj_with_mqa";
  static constexpr std::array<Mapping, 10> k_mappings{{
    {"DeepseekV2ForCausalLM", {k_mla}},
    {"KimiK25ForConditionalGeneration", {k_mla}},
    {"DeepseekV3ForCausalLM", {k_mla}},
    {"DeepseekV32ForCausalLM", {k_mla}},
    {"GlmMoeDsaForCausalLM", {k_mla}},
    {"MistralLarge3ForCausalLM", {k_mla}},
    {"KimiVLForConditionalGeneration", {k_mla}},
    {"Qwen3_5ForCausalLM", {"qkv_proj", "gate_up_proj", "in_proj_qkvz", "in_proj_ba"}},
    {"Qwen3_5MoeForCausalLM", {"qkv_proj", "gate_up_proj", "in_proj_qkvz", "in_proj_ba"}},
    {"Qwen3NextForCausalLM", {"qkv_proj", "gate_up_proj"}},
  }};
  if (model.architectures.empty() || model.architectures.front().empty()) {
    return nullptr;
  }
  const auto m = std::find_if(k_mappings.begin(), k_mappings.end(), [&](const Mapping& x) {
    return x.architecture == model.architectures.front();
  });
  return m != k_mappings.end() ? &m->keys : nullptr;
}

void
decide_ct(Decision& d, Engine engine, const ConfigSource& s, const ModelInfo& model,
          const EngineLayer& layer, const ListIndexes* ix)
{
  auto match = [&](std::string_view e, std::string_view n) {
    return ct_entry(engine, e, n, &d.errors, &model);
  };
  if (layer.kind == LayerKind::fused_moe) {
    // Both engines probe expert 0's projections, never the fused prefix itself (vLLM's
    // CompressedTensorsMoEMethod.get_moe_method, SGLang's get_moe_scheme).
    // By name, whatever the experts' storage: stored fused, or per expert as w1/w2/w3.
    const std::vector<std::string> probed = fused_moe_probe_names(layer);
    std::vector<std::string_view> children(probed.begin(), probed.end());
    EngineLayer probe = layer;
    probe.shards = children;
    decide_by_list(d, probe, s.excludes, "ignore", match, match, ix, Compared::shards);
  } else {
    decide_by_list(d, layer, s.excludes, "ignore", match, match, ix,
                   sglang_compares_fused_name(engine, s.format, model, layer)
                     ? Compared::prefix
                     : Compared::shards_then_prefix);
  }
  if (!d.quantized) {
    return;
  }
  // A target's regex, its errors said to be the group's.
  const auto target_regex = [&](const CtGroup& group, const std::string& target,
                                std::string_view name) {
    const size_t known = d.errors.size();
    const bool hit = regex_entry(target, name, false, &d.errors);
    for (size_t i = known; i < d.errors.size(); ++i) {
      d.errors[i].where = Unevaluable::Where::target;
      d.errors[i].group = group.name;
    }
    return hit;
  };
  // Targets: a Linear-like layer matches the class names "Linear"/"LinearBase" or an exact/re:
  // target; MoE layers inherit Linear targets.
  for (const auto& group : s.groups) {
    for (const auto& target : group.targets) {
      const bool class_target = ct_class_target(target) || target == "FusedMoE";
      const bool hit = (class_target && layer.kind != LayerKind::lm_head) ||
                       (target.starts_with("re:") && target_regex(group, target, layer.prefix)) ||
                       target == layer.prefix;
      if (hit) {
        d.matched = target;
        d.reason =
          fmt::format("target '{}' of {} matches and no ignore entry does", target, group.name);
        return;
      }
    }
  }
  // Then the parts (R20): a fused layer is targeted when each part is, by name or re:. Both
  // engines resolve an MoE layer's scheme from expert 0's three projections.
  std::vector<std::string> parts;
  if (layer.kind == LayerKind::fused_moe) {
    for (const char* proj : k_moe_probe_projections) {
      parts.push_back(fmt::format("{}.0.{}", layer.prefix, proj));
    }
  } else if (layer.kind != LayerKind::lm_head) {
    parts.assign(layer.shards.begin(), layer.shards.end());
  }
  const auto part_target =
    [&](std::string_view part) -> std::pair<const CtGroup*, const std::string*> {
    for (const auto& group : s.groups) {
      for (const auto& target : group.targets) {
        if (target == part || (target.starts_with("re:") && target_regex(group, target, part))) {
          return {&group, &target};
        }
      }
    }
    return {nullptr, nullptr};
  };
  const auto [group, target] =
    parts.empty() ? std::pair<const CtGroup*, const std::string*>() : part_target(parts.front());
  if (target != nullptr &&
      std::all_of(parts.begin() + 1, parts.end(),
                  [&](const std::string& part) { return part_target(part).second != nullptr; })) {
    d.matched = *target;
    d.reason = fmt::format("target '{}' of {} matches '{}' and each other part, and no ignore "
                           "entry does",
                           *target, group->name, parts.front());
    return;
  }
  d.quantized = false;
  d.reason = "no config_groups target matches";
}

// The first of the block's dynamic keys whose regex matches `name` (re.match), as vLLM reads
// them in order; the keys before it that qcheck cannot evaluate go to `errors`. `rules`: the keys
// compiled (used when they are this block's).
const DynamicRule*
first_dynamic_match(const ConfigSource& s, std::string_view name, const DynamicRules* rules,
                    std::vector<Unevaluable>& errors)
{
  const auto matches = [&](size_t i, const Expected<Regex>& re) {
    if (!re) {
      errors.push_back({s.dynamic[i].key, re.error(), Unevaluable::Where::dynamic_key});
      return false;
    }
    return re->match(name);
  };
  if (rules == nullptr || !rules->built_from(s.dynamic)) {
    for (size_t i = 0; i < s.dynamic.size(); ++i) {
      if (matches(i, cached_regex(s.dynamic[i].regex))) {
        return &s.dynamic[i];
      }
    }
    return nullptr;
  }
  thread_local std::vector<uint32_t> found;
  found.clear();
  rules->candidates(name, found);
  for (const uint32_t i : found) {
    if (matches(i, rules->regex(i))) {
      return &s.dynamic[i];
    }
  }
  return nullptr;
}

void
decide_gptq(Decision& d, Engine engine, const ConfigSource& s, const ModelInfo& model,
            const EngineLayer& layer, bool stored_quantized, const DynamicRules* rules)
{
  // SGLang's GPTQMarlinConfig gives every FusedMoE its Marlin MoE method before any dynamic
  // key is read (GPTQConfig refuses MoE): no key leaves a GPTQ fused MoE unquantized there.
  if (engine == Engine::sglang && layer.kind == LayerKind::fused_moe) {
    d.quantized = true;
    d.reason = "SGLang builds a GPTQ fused MoE quantized whatever dynamic says";
    return;
  }
  // vLLM's is_layer_gptq_quantized runs first: modules_in_block_to_quantize against each shard
  // of a fused layer (its own names, the entries maybe in its spelling too), which must agree
  // whatever dynamic says.
  std::vector<std::string_view> named, unnamed;
  const std::string* first = nullptr;
  std::string_view first_name;
  if (engine != Engine::sglang && layer.kind != LayerKind::fused_moe &&
      !s.modules_in_block.empty()) {
    for (const auto& n : names_to_check(layer)) {
      const std::string own = vllm_namespace(n);
      const auto m = std::find_if(
        s.modules_in_block.begin(), s.modules_in_block.end(), [&](const std::string& e) {
          return contains(n, e) || contains(own, e) || contains(own, vllm_namespace(e));
        });
      (m != s.modules_in_block.end() ? named : unnamed).push_back(n);
      if (m != s.modules_in_block.end() && first == nullptr) {
        first = &*m;
        first_name = n;
      }
    }
    if (!named.empty() && !unnamed.empty()) {
      // The load stops here (QC103); as stored, so that nothing else is reported of it.
      d.quantized = stored_quantized;
      d.shards_disagree = true;
      d.shard_detail = fmt::format("modules_in_block_to_quantize names {}, not {}",
                                   fmt::join(named, ", "), fmt::join(unnamed, ", "));
      d.reason = "modules_in_block_to_quantize names some of its shards only";
      return;
    }
  }
  const std::string name = dynamic_subject(engine, &model, layer.prefix);
  const DynamicRule* rule = first_dynamic_match(s, name, rules, d.errors);
  // A '-:' key leaves the layer unquantized in both engines; a positive one decides it in SGLang,
  // while vLLM takes only its settings and still asks whether the layer is quantized at all
  // (is_layer_gptq_quantized: the list, or the stored dtypes).
  if (rule != nullptr && (rule->negative || engine == Engine::sglang)) {
    d.quantized = !rule->negative;
    d.matched = rule->key;
    d.reason = fmt::format("dynamic key '{}' matches '{}' first", rule->key, name);
    return;
  }
  const std::string positive =
    rule != nullptr ? fmt::format(" (dynamic key '{}' matches first: its settings only)", rule->key)
                    : std::string();
  // SGLang's get_linear_quant_method asks dynamic alone: its GPTQ configs never read
  // modules_in_block_to_quantize, and nothing there looks at the stored dtypes.
  if (engine == Engine::sglang) {
    d.quantized = true;
    d.reason = fmt::format("no '-:' dynamic key matches '{}'; SGLang builds every other GPTQ "
                           "Linear quantized (it reads neither modules_in_block_to_quantize nor "
                           "the stored dtypes)",
                           name);
    return;
  }
  if (layer.kind == LayerKind::fused_moe) {
    d.quantized = true;
    d.reason = fmt::format("fused MoE is quantized unless a '-:' dynamic key matches '{}'{}", name,
                           positive);
    return;
  }
  if (!s.modules_in_block.empty()) {
    if (first != nullptr) {
      d.quantized = true;
      d.matched = *first;
      d.reason = fmt::format("modules_in_block_to_quantize entry '{}' occurs in '{}'{}", *first,
                             first_name, positive);
      return;
    }
    d.quantized = false;
    d.reason = "no modules_in_block_to_quantize entry occurs in the prefix" + positive;
    return;
  }
  d.inferred = true;
  d.quantized = stored_quantized;
  d.reason = "vLLM infers GPTQ Linear layers from the stored dtypes" + positive;
}

} // namespace

bool
sglang_compares_fused_name(Engine engine, QuantFormat format, const ModelInfo& model,
                           const EngineLayer& layer)
{
  if (engine != Engine::sglang || layer.draft || layer.shards.empty() ||
      format != QuantFormat::compressed_tensors) {
    return false;
  }
  const std::array<std::string_view, 4>* keys = sglang_mapping_keys(model);
  return keys != nullptr && std::none_of(keys->begin(), keys->end(), [&](std::string_view k) {
           return !k.empty() && leaf_of(layer.prefix) == k;
         });
}

bool
sglang_reads_shards(const ModelInfo& model, const EngineLayer& layer)
{
  // The NextN and MTP drafts (deepseek_nextn.py, qwen3_next_mtp.py, qwen3_5_mtp.py) start from
  // nn.Module.__init__, and so set none.
  if (layer.draft) {
    return false;
  }
  const std::array<std::string_view, 4>* keys = sglang_mapping_keys(model);
  return keys != nullptr && std::any_of(keys->begin(), keys->end(), [&](std::string_view k) {
           return !k.empty() && layer.prefix.find(k) != std::string::npos;
         });
}

bool
vllm_first_key(std::string_view key, std::string_view prefix)
{
  return key == prefix || (key.starts_with("model.") && key.substr(6) == prefix);
}

const ExtraConfigEntry*
vllm_unquantized_key(const ConfigSource& s, std::string_view prefix)
{
  for (const auto& e : s.extra_config) {
    if ((e.bits == 0 || e.bits >= 16) && vllm_first_key(e.key, prefix)) {
      return &e;
    }
  }
  return nullptr;
}

bool
extra_config_key_matches(Engine engine, const std::string& key, std::string_view name)
{
  if (key == name) {
    return true;
  }
  if (key.find_first_of("*+?^$()[]{}|\\") == std::string::npos) {
    return false;
  }
  // vLLM's INC searches the name with the pattern; SGLang's AutoRound must match all of it.
  const Expected<Regex>& re = cached_regex(key);
  return re && (engine == Engine::sglang ? re->fullmatch(name) : re->search(name));
}

DynamicRules::DynamicRules(const std::vector<DynamicRule>& rules)
  : m_from(&rules), m_compiled(std::make_unique<Compiled[]>(rules.size()))
{
  for (uint32_t i = 0; i < rules.size(); ++i) {
    // Checked now, compiled again on first use: most keys of a long block never are.
    const Expected<Regex> re = Regex::compile(rules[i].regex);
    m_negative_mtp = m_negative_mtp || (re && rules[i].negative && re->search("mtp"));
    if (!re) {
      m_unevaluable.push_back(i);
    }
  }
  // As for exclusion lists: below this, trying every key costs less than a lookup.
  constexpr size_t k_index_threshold = 16;
  if (rules.size() < k_index_threshold) {
    return;
  }
  // Each evaluable key as a "re:" entry, which the index reads as anchored at a name's start.
  std::vector<std::string> texts(rules.size());
  std::vector<EntryIndex::Spelling> spellings;
  spellings.reserve(rules.size());
  for (uint32_t i = 0; i < rules.size(); ++i) {
    if (evaluable(i)) {
      texts[i] = "re:" + rules[i].regex;
      spellings.push_back({texts[i], i});
    }
  }
  EntryIndex::Options options;
  options.mode = EntryIndex::Mode::exact;
  options.regex_entries = true;
  m_index.emplace(spellings, rules.size(), options);
}

const Expected<Regex>&
DynamicRules::regex(size_t i) const
{
  Compiled& c = m_compiled[i];
  std::call_once(c.once, [&] { c.regex.emplace(Regex::compile((*m_from)[i].regex)); });
  return *c.regex;
}

void
DynamicRules::candidates(std::string_view name, std::vector<uint32_t>& out) const
{
  if (!m_index) {
    const size_t count = out.size();
    out.resize(count + size());
    std::iota(out.begin() + static_cast<std::ptrdiff_t>(count), out.end(), 0u);
    return;
  }
  const auto first = static_cast<std::ptrdiff_t>(out.size());
  m_index->candidates(std::span(&name, 1), out);
  if (!m_unevaluable.empty()) {
    const auto middle = static_cast<std::ptrdiff_t>(out.size());
    out.insert(out.end(), m_unevaluable.begin(), m_unevaluable.end());
    std::inplace_merge(out.begin() + first, out.begin() + middle, out.end());
  }
}

namespace {

// How `engine` decides the output head `prefix`, a ParallelLMHead built with the quant config:
// get_layer_config() reads it as any layer, but quantized by default only within
// block_name_to_quantize (step 2). In vLLM, get_quant_method's own key first (vllm_first_key(),
// bits missing or 16 and more: float); then its exact key (AutoRound's --quant_lm_head; a missing
// bits there is the model's), else the first pattern matching it (a missing bits: the default),
// else the default.
struct HeadDecision
{
  bool quantized = false;
  const ExtraConfigEntry* key = nullptr; // the key read, if any
  const std::string* block = nullptr;    // the block_name_to_quantize entry starting it, if any
};

// The first block_name_to_quantize entry starting `prefix`, or null.
const std::string*
block_starting(const ConfigSource& s, std::string_view prefix)
{
  const auto b = std::find_if(s.block_names.begin(), s.block_names.end(),
                              [&](const std::string& name) { return prefix.starts_with(name); });
  return b == s.block_names.end() ? nullptr : &*b;
}

HeadDecision
auto_round_head(Engine engine, const ConfigSource& s, std::string_view prefix)
{
  HeadDecision out;
  out.block = block_starting(s, prefix);
  if (engine == Engine::vllm) {
    out.key = vllm_unquantized_key(s, prefix);
    if (out.key != nullptr) {
      return out;
    }
  }
  out.key = extra_config_entry(engine, s, prefix);
  if (out.key == nullptr) {
    out.quantized = out.block != nullptr;
  } else if (out.key->bits != 0) {
    out.quantized = out.key->bits < 16;
  } else if (out.key->key == prefix) {
    out.quantized = true;
  } else {
    out.quantized = out.block != nullptr;
  }
  return out;
}

} // namespace

const ExtraConfigEntry*
extra_config_entry(Engine engine, const ConfigSource& s, std::string_view name)
{
  for (const auto& e : s.extra_config) {
    if (e.key == name) {
      return &e;
    }
  }
  for (const auto& e : s.extra_config) {
    if (extra_config_key_matches(engine, e.key, name)) {
      return &e;
    }
  }
  return nullptr;
}

namespace {

// What get_config() returns for a name under key `e` (null: none): the key's settings, each
// missing one the block's when the layer is quantized, else (16, -1, True).
LayerSettings
effective_settings(const ExtraConfigEntry* e, const ConfigSource& s, bool quantized)
{
  LayerSettings out = e != nullptr ? e->written : LayerSettings{};
  if (out.bits.empty()) {
    out.bits = quantized ? s.settings.bits : "16";
  }
  if (out.group_size.empty()) {
    out.group_size = quantized ? s.settings.group_size : "-1";
  }
  if (out.sym.empty()) {
    out.sym = quantized ? s.settings.sym : "1";
  }
  return out;
}

std::string_view
or_unset(const std::string& value)
{
  return value.empty() ? std::string_view("unset") : std::string_view(value);
}

// Whether SGLang builds this model's text layers under other names than the checkpoint's, which
// qcheck does not model (dots.vlm, DeepSeek-OCR and Pixtral build DeepSeek under their own
// prefixes): advice naming a key would be wrong there.
bool
sglang_names_not_modelled(const ModelInfo& model)
{
  static constexpr std::array<std::string_view, 3> k_classes{
    "DotsVLMForCausalLM", "DeepseekOCRForCausalLM", "PixtralForConditionalGeneration"};
  return !model.architectures.empty() && std::find(k_classes.begin(), k_classes.end(),
                                                   model.architectures.front()) != k_classes.end();
}

// "(bits, group_size, sym)" as Python prints the tuple.
std::string
settings_text(const LayerSettings& t)
{
  const std::string_view sym = t.sym == "1" ? "True" : t.sym == "0" ? "False" : or_unset(t.sym);
  return fmt::format("({}, {}, {})", or_unset(t.bits), or_unset(t.group_size), sym);
}

void
decide_auto_round_layer(Decision& d, Engine engine, const ConfigSource& s, const ModelInfo& model,
                        const EngineLayer& layer)
{
  const auto sets = [&](const ExtraConfigEntry& e) {
    d.matched = e.key;
    d.reason = fmt::format("extra_config '{}' sets bits {}", e.key, e.bits);
  };
  // vLLM's INCConfig.get_quant_method first takes the layer's own key, or "model." + it, whose
  // bits are missing (read as 16) or 16 and more: unquantized, before get_layer_config().
  if (engine == Engine::vllm) {
    if (const ExtraConfigEntry* e = vllm_unquantized_key(s, layer.prefix)) {
      d.quantized = false;
      d.matched = e->key;
      if (e->bits == 0) {
        d.reason = fmt::format("extra_config '{}' gives no bits, which vLLM reads as 16", e->key);
      } else {
        sets(*e);
      }
      return;
    }
  }
  // decide() lets the head through only when auto_round_head() quantizes it.
  if (layer.kind == LayerKind::lm_head) {
    const HeadDecision head = auto_round_head(engine, s, layer.prefix);
    d.quantized = head.quantized;
    d.reason = "LM head";
    if (head.key != nullptr && head.key->bits != 0) {
      sets(*head.key);
    } else if (head.key != nullptr && head.key->key == layer.prefix) {
      d.matched = head.key->key;
      d.reason =
        fmt::format("extra_config '{}' gives no bits: the model's {}", head.key->key, s.bits);
    } else if (head.block != nullptr) {
      d.matched = *head.block;
      d.reason = fmt::format("block_name_to_quantize '{}' starts '{}'", *head.block, layer.prefix);
    }
    return;
  }
  // Without a key of its own: quantized, within block_name_to_quantize when it is given.
  const std::string* block = block_starting(s, layer.prefix);
  const bool by_block = s.block_names.empty() || block != nullptr;
  const auto by_default = [&] {
    d.quantized = by_block;
    if (block != nullptr) {
      d.matched = *block;
      d.reason = fmt::format("block_name_to_quantize '{}' starts '{}'", *block, layer.prefix);
    } else {
      d.reason = by_block ? "no extra_config entry gives it 16 bits"
                          : "no block_name_to_quantize entry starts the prefix";
    }
  };
  // One key's answer: quantized (1), not (0), or the default (-1, no bits given).
  const auto answer = [&](const ExtraConfigEntry& e) { return e.bits >= 16 ? 0 : e.bits > 0; };
  // The layer's own exact key decides first.
  if (const auto own =
        std::find_if(s.extra_config.begin(), s.extra_config.end(),
                     [&](const ExtraConfigEntry& e) { return e.key == layer.prefix; });
      own != s.extra_config.end()) {
    if (own->bits == 0) {
      d.quantized = true; // an exact key's missing bits are the model's
      d.matched = own->key;
      d.reason = fmt::format("extra_config '{}' gives no bits: the model's {}", own->key, s.bits);
    } else {
      d.quantized = answer(*own) == 1;
      sets(*own);
    }
    return;
  }
  // A fused MoE: every key below its prefix, which must agree; a fused linear: each shard's key,
  // which must agree too (both engines raise otherwise).
  std::vector<const ExtraConfigEntry*> keys;
  if (layer.kind == LayerKind::fused_moe) {
    for (const auto& e : s.extra_config) {
      if (e.key.starts_with(layer.prefix) && e.key.size() > layer.prefix.size() &&
          e.key[layer.prefix.size()] == '.') {
        keys.push_back(&e);
      }
    }
    if (keys.empty()) {
      keys.push_back(extra_config_entry(engine, s, layer.prefix));
    }
  } else if (!layer.shards.empty() &&
             (engine != Engine::sglang || sglang_reads_shards(model, layer))) {
    for (const auto& shard : layer.shards) {
      keys.push_back(extra_config_entry(engine, s, shard));
    }
  } else {
    keys.push_back(extra_config_entry(engine, s, layer.prefix));
  }
  std::vector<int> answers;
  const ExtraConfigEntry* first = nullptr;
  for (const ExtraConfigEntry* e : keys) {
    const int a = e == nullptr || e->bits == 0 ? int{by_block} : answer(*e);
    answers.push_back(a);
    if (e != nullptr && first == nullptr) {
      first = e;
    }
  }
  if (first == nullptr) {
    by_default();
    if (!layer.shards.empty() && layer.kind != LayerKind::fused_moe && keys.size() == 1) {
      d.reason += " (SGLang reads the fused name alone here: no packed_modules_mapping key on its "
                  "AutoRound config names this layer)";
    }
    return;
  }
  if (std::adjacent_find(answers.begin(), answers.end(), std::not_equal_to<>()) != answers.end()) {
    // Both engines raise ("requires consistent quant config"): reported as shards that disagree.
    d.quantized = true;
    d.matched = first->key;
    d.reason = fmt::format("extra_config keys disagree on its {}; both engines refuse the layer",
                           layer.kind == LayerKind::fused_moe ? "experts" : "shards");
    std::vector<std::string_view> quantized, unquantized;
    for (size_t i = 0; i < keys.size(); ++i) {
      const std::string_view what = layer.kind == LayerKind::fused_moe || layer.shards.empty()
                                      ? std::string_view(keys[i] ? keys[i]->key : layer.prefix)
                                      : std::string_view(layer.shards[i]);
      (answers[i] == 1 ? quantized : unquantized).push_back(what);
    }
    d.shards_disagree = true;
    d.shard_detail = fmt::format("extra_config makes {} unquantized, {} not",
                                 fmt::join(unquantized, ", "), fmt::join(quantized, ", "));
    return;
  }
  // Alike on quantization, the shards must also agree on (bits, group_size, sym), defaults
  // filled in as get_config() does, or both engines raise.
  if (keys.size() > 1) {
    std::vector<std::pair<LayerSettings, std::vector<std::string_view>>> groups; // with names
    for (size_t i = 0; i < keys.size(); ++i) {
      const LayerSettings triple = effective_settings(keys[i], s, by_block);
      const std::string_view what = layer.kind == LayerKind::fused_moe || layer.shards.empty()
                                      ? std::string_view(keys[i] ? keys[i]->key : layer.prefix)
                                      : std::string_view(layer.shards[i]);
      const auto group = std::find_if(groups.begin(), groups.end(),
                                      [&](const auto& g) { return g.first == triple; });
      if (group == groups.end()) {
        groups.push_back({triple, {what}});
      } else {
        group->second.push_back(what);
      }
    }
    if (groups.size() > 1) {
      d.quantized = answers.front() == 1;
      d.matched = first->key;
      d.reason = fmt::format("extra_config gives its {} different settings; both engines refuse "
                             "the layer",
                             layer.kind == LayerKind::fused_moe ? "experts" : "shards");
      std::vector<std::string> parts;
      for (const auto& [triple, names] : groups) {
        parts.push_back(fmt::format("{} for {}", settings_text(triple), fmt::join(names, ", ")));
      }
      d.shards_disagree = true;
      d.shard_detail =
        fmt::format("extra_config gives (bits, group_size, sym) {}", fmt::join(parts, "; "));
      return;
    }
  }
  d.quantized = answers.front() == 1;
  if (first->bits == 0) {
    d.matched = first->key;
    d.reason = fmt::format("extra_config '{}' gives no bits: {}", first->key,
                           by_block ? "quantized" : "outside block_name_to_quantize");
  } else {
    sets(*first);
  }
}

void
decide_auto_round(Decision& d, Engine engine, const ConfigSource& s, const ModelInfo& model,
                  const EngineLayer& layer)
{
  decide_auto_round_layer(d, engine, s, model, layer);
  // A fused linear layer read by its name (its own exact key, in both engines; in SGLang, any
  // layer no packed_modules_mapping key names) is built with that name's settings. Shards
  // exported with others (a mixed-bit export keys each shard) do not match what is allocated:
  // other bits or group_size do not fit, another sym computes with the wrong zero points.
  if (!d.quantized || d.shards_disagree || layer.shards.empty() ||
      layer.kind == LayerKind::fused_moe || layer.renamed != nullptr ||
      layer.quantized != layer.modules.size() || !s.value_errors.empty() ||
      sglang_names_not_modelled(model)) {
    return;
  }
  const ExtraConfigEntry* own = extra_config_entry(engine, s, layer.prefix);
  const bool own_exact = own != nullptr && own->key == layer.prefix;
  if (!own_exact && (engine != Engine::sglang || sglang_reads_shards(model, layer))) {
    return;
  }
  const bool by_block = s.block_names.empty() || block_starting(s, layer.prefix) != nullptr;
  // get_config(name, quantized): an exact key is quantized, a pattern or none as its block.
  const auto settings = [&](const ExtraConfigEntry* e, std::string_view name) {
    return effective_settings(e, s, (e != nullptr && e->key == name) || by_block);
  };
  const LayerSettings fused = settings(own, layer.prefix);
  std::vector<std::string_view> other;
  std::optional<LayerSettings> first_other;
  for (const auto& shard : layer.shards) {
    const ExtraConfigEntry* e = extra_config_entry(engine, s, shard);
    const bool quantized = e == nullptr   ? by_block
                           : e->bits == 0 ? e->key == shard || by_block
                                          : e->bits < 16;
    if (!quantized) {
      return; // a shard declared float, stored quantized: QC102's matter
    }
    const LayerSettings t = settings(e, shard);
    if (t != fused) {
      other.push_back(shard);
      first_other = first_other ? first_other : t;
    }
  }
  if (!other.empty()) {
    d.fused_name_settings = fmt::format(
      "{} builds it at {} ({}); {} give{} {}", display_name(engine), settings_text(fused),
      own_exact ? fmt::format("its key '{}'", own->key)
      : own     ? fmt::format("pattern key '{}'", own->key)
                : std::string("the block's"),
      fmt::join(other, ", "), other.size() == 1 ? "s" : "", settings_text(*first_other));
  }
}

// Llama-4's multimodal model (Llama4ForConditionalGeneration), whose vision model and projector
// neither vLLM nor SGLang quantizes.
bool
is_llama4_vlm(const ModelInfo& model)
{
  return model.model_type == "llama4" ||
         (!model.architectures.empty() &&
          model.architectures.front() == "Llama4ForConditionalGeneration");
}

// A vision tower or projector the engine builds with no quantization config, whatever the list
// says: the note naming it, or "" for any other layer.
std::string
tower_override(Engine engine, const ConfigSource& s, const ModelInfo& model,
               const EngineLayer& layer)
{
  // Kimi-K2.5 (kimi_k25.py): SGLang gives its MoonViT tower a quantization config for ModelSlim
  // only and its projector none; vLLM gives neither one for compressed-tensors; TensorRT-LLM's
  // vision model keeps only the KV cache's algorithm (modeling_kimi_k25.py), for both.
  if ((model.model_type == "kimi_k25" ||
       (!model.architectures.empty() &&
        model.architectures.front() == "KimiK25ForConditionalGeneration")) &&
      (layer.prefix.starts_with("vision_tower.") || layer.prefix.starts_with("mm_projector."))) {
    if (engine == Engine::sglang) {
      return "SGLang builds Kimi-K2.5's vision tower and projector without a quantization config";
    }
    if (engine == Engine::vllm && s.format == QuantFormat::compressed_tensors) {
      return "vLLM builds Kimi-K2.5's vision tower and projector without a quantization config "
             "for compressed-tensors";
    }
    if (engine == Engine::trtllm) {
      return "TensorRT-LLM builds Kimi-K2.5's vision tower and projector without weight "
             "quantization";
    }
  }
  // Llama-4 (mllama4.py of both engines): vLLM builds the vision model and the projector with
  // quant_config=None, SGLang with no quantization config at all; the checkpoint names them at
  // its top level or, in transformers' newer layout, under "model.".
  if ((engine == Engine::vllm || engine == Engine::sglang) && is_llama4_vlm(model) &&
      (layer.prefix.starts_with("vision_model.") ||
       layer.prefix.starts_with("multi_modal_projector.") ||
       layer.prefix.starts_with("model.vision_model.") ||
       layer.prefix.starts_with("model.multi_modal_projector."))) {
    return fmt::format("{} builds Llama-4's vision model and projector without a quantization "
                       "config",
                       engine == Engine::vllm ? "vLLM" : "SGLang");
  }
  // SGLang's Qwen3-VL models pass quant_config=None to their vision model (qwen3_vl.py since
  // PR 18926; qwen3_vl_moe.py inherits it, and so do Qwen3.5's, qwen3_5.py).
  if (engine == Engine::sglang && sglang_qwen3_vl_class(model) &&
      layer.prefix.starts_with("model.visual.")) {
    return is_qwen35_family(model)
             ? "SGLang builds Qwen3.5's vision tower (Qwen3-VL's) without a quantization config"
             : "SGLang builds Qwen3-VL's vision tower without a quantization config";
  }
  // SGLang's LLaVA and Mistral3 take their projector class from transformers (llava.py,
  // mistral.py): plain nn.Linear layers.
  if (engine == Engine::sglang && (model.model_type == "llava" || model.model_type == "mistral3") &&
      (layer.prefix.starts_with("model.multi_modal_projector.") ||
       layer.prefix.starts_with("multi_modal_projector."))) {
    return "SGLang builds the multimodal projector from transformers' class, without a "
           "quantization config";
  }
  return {};
}

// Hard-coded overrides of main and draft layers alike: the note, or empty. SGLang's Qwen3-Next
// attention builds qkv_proj with no quantization config for modelopt_fp4 (qwen3_next.py, "qkv_proj
// is not quantized for fp4"); its MTP layer is that attention too. Qwen3.5's main layers build
// all their attention so.
std::string
layer_override(Engine engine, const ConfigSource& s, const ModelInfo& model,
               const EngineLayer& layer)
{
  if (engine == Engine::sglang && is_nvfp4_algo(s) && is_qwen3_next_class(model) &&
      layer.prefix.ends_with(".self_attn.qkv_proj")) {
    return "SGLang builds Qwen3-Next's attention qkv_proj unquantized for modelopt_fp4";
  }
  // qwen3_5.py: its decoder layers give the linear attention and the full attention's qkv_proj
  // and o_proj no quantization config for modelopt_fp4 (the MTP: draft_override()).
  if (engine == Engine::sglang && is_nvfp4_algo(s) && is_qwen35_family(model) && !layer.draft &&
      (layer.prefix.ends_with(".self_attn.qkv_proj") ||
       layer.prefix.ends_with(".self_attn.o_proj") ||
       layer.prefix.find(".linear_attn.") != std::string::npos)) {
    return "SGLang builds Qwen3.5's attention (linear and full) unquantized for modelopt_fp4";
  }
  return {};
}

// A hard-coded engine override: the note naming it, and what in the checkpoint's files lifts it
// ("" when it is in the engine's code alone).
struct EngineOverride
{
  std::string note;
  std::string remedy{};
};

// Hard-coded drafter overrides (R35): the special case that builds this draft layer unquantized,
// or an empty note.
EngineOverride
draft_override(Engine engine, const ConfigSource& s, const ModelInfo& model,
               const EngineLayer& layer, const DynamicRules* rules)
{
  if (!layer.draft) {
    return {};
  }
  const bool mtp_root = layer.draft_root == "mtp";
  if (engine == Engine::vllm && mtp_root && layer.prefix == "mtp.fc" && is_qwen_mtp_family(model)) {
    if (is_nvfp4_algo(s)) {
      return {"vLLM forces mtp.fc unquantized for modelopt_fp4 (Qwen3-Next/3.5)"};
    }
    const auto searches_mtp = [&](const DynamicRule& rule) {
      const Expected<Regex>& re = cached_regex(rule.regex);
      return rule.negative && re && re->search("mtp");
    };
    if (rules != nullptr && rules->built_from(s.dynamic)
          ? rules->negative_key_searches_mtp()
          : std::any_of(s.dynamic.begin(), s.dynamic.end(), searches_mtp)) {
      return {"vLLM builds mtp.fc unquantized when a '-:' dynamic key mentions mtp"};
    }
  }
  if (engine == Engine::sglang && !mtp_root && is_draft_family_deepseek_like(model) &&
      is_nvfp4_algo(s)) {
    return {"SGLang builds the whole NextN layer unquantized for modelopt_fp4"};
  }
  if (engine == Engine::sglang && mtp_root && is_qwen35_family(model) &&
      (is_nvfp4_algo(s) || s.algo == "MIXED_PRECISION")) {
    return {"SGLang builds the Qwen3.5 MTP unquantized for this ModelOpt algorithm"};
  }
  if (engine == Engine::sglang && mtp_root && is_qwen35_family(model) &&
      s.format == QuantFormat::quark &&
      std::any_of(s.excludes.begin(), s.excludes.end(),
                  [](std::string_view e) { return e.starts_with("mtp."); })) {
    return {"SGLang builds the whole Qwen3.5 MTP unquantized for Quark when any mtp.* entry is "
            "excluded"};
  }
  // longcat_flash_mtp.py: the one override a config key sets.
  if (engine == Engine::vllm &&
      std::find(model.disable_quant_module.begin(), model.disable_quant_module.end(), "mtp") !=
        model.disable_quant_module.end()) {
    return {"disable_quant_module lists \"mtp\"",
            "remove \"mtp\" from disable_quant_module in config.json"};
  }
  return {};
}

} // namespace

std::string_view
to_string(Engine engine)
{
  switch (engine) {
  case Engine::vllm:
    return "vllm";
  case Engine::sglang:
    return "sglang";
  case Engine::trtllm:
    return "trtllm";
  }
  return "?";
}

std::string_view
display_name(Engine engine)
{
  switch (engine) {
  case Engine::vllm:
    return "vLLM";
  case Engine::sglang:
    return "SGLang";
  case Engine::trtllm:
    return "TensorRT-LLM";
  }
  return "?";
}

std::string
engines_text(const std::set<Engine>& engines)
{
  std::vector<std::string_view> names;
  for (Engine e : engines) {
    names.push_back(display_name(e));
  }
  if (names.size() == 1) {
    return std::string(names[0]);
  }
  return fmt::format("{} and {}", fmt::join(names.begin(), names.end() - 1, ", "), names.back());
}

std::string
strip_language_model(std::string_view name)
{
  if (name.starts_with("model.language_model.")) {
    return fmt::format("model.{}", name.substr(21));
  }
  if (name.starts_with("language_model.model.")) {
    return fmt::format("model.{}", name.substr(21));
  }
  if (name.starts_with("language_model.")) {
    return std::string(name.substr(15));
  }
  return std::string(name);
}

bool
sglang_nextn_root(const std::string& root, const ModelInfo& model)
{
  return root.find("layers.") != std::string::npos && is_draft_family_deepseek_like(model);
}

namespace {

// SGLang's Qwen3-Next MTP draft (Qwen3NextForCausalLMMTP, qwen3_next_mtp.py) is a one-layer
// Qwen3NextModel under "model": its loader reads "mtp.layers.0.X" as "model.layers.0.X", main
// layer 0's names. "" for a module of MTP layer 1 and after, which it never builds (the config
// it loads has num_nextn_predict_layers 1, the model num_hidden_layers 1). Nullopt for any
// other engine, model or module.
std::optional<std::string>
qwen3_next_mtp_name(Engine engine, const ModelInfo& model, std::string_view module)
{
  static constexpr std::string_view k_root = "mtp.layers.";
  if (engine != Engine::sglang || !is_qwen3_next_class(model) || !module.starts_with(k_root)) {
    return std::nullopt;
  }
  if (!module.substr(k_root.size()).starts_with("0.")) {
    return std::string();
  }
  return fmt::format("model.{}", module.substr(4));
}

// Whether main layer 0 holds `renamed` (a draft module's name in SGLang, above) too: the module
// itself, modules below it (per-expert experts below a fused experts module), or, for an
// expert, its fused MoE layer in either storage.
bool
main_layer_holds(const Inventory& inventory, std::string_view renamed)
{
  const auto holds = [&](std::string_view name) {
    return inventory.find(name) >= 0 || !inventory.under(name).empty();
  };
  const std::string_view moe = fused_moe_prefix(renamed);
  return holds(renamed) || (!moe.empty() && holds(moe));
}

} // namespace

std::string
draft_root_spelling(Engine engine, const std::string& root, const ModelInfo& model)
{
  switch (engine) {
  case Engine::vllm:
    return strip_language_model(root);
  case Engine::sglang:
    if (sglang_nextn_root(root, model)) {
      return "model.decoder";
    }
    if (root == "mtp" && is_qwen3_next_class(model)) {
      return ""; // its layers bear main layer names (qwen3_next_mtp_name())
    }
    return strip_language_model(root);
  case Engine::trtllm:
    return root;
  }
  return root;
}

const DynamicRule*
first_dynamic_key(const ConfigSource& s, std::string_view name)
{
  std::vector<Unevaluable> unevaluable;
  return first_dynamic_match(s, name, nullptr, unevaluable);
}

std::string
dynamic_subject(Engine engine, const ModelInfo* model, std::string_view prefix)
{
  if (engine == Engine::vllm) {
    return vllm_namespace(prefix);
  }
  // Its load_weights maps model.language_model.X to model.X.
  if (engine == Engine::sglang && model != nullptr && prefix.starts_with("model.language_model.") &&
      sglang_qwen3_vl_class(*model)) {
    return strip_language_model(prefix);
  }
  return regex_subject(engine, model, prefix);
}

std::string
vllm_namespace(std::string_view name)
{
  if (name.starts_with("model.language_model.")) {
    return fmt::format("language_model.model.{}", name.substr(21));
  }
  if (name.starts_with("model.visual.") || name.starts_with("model.vision_tower.") ||
      name.starts_with("model.multi_modal_projector.")) {
    return std::string(name.substr(6));
  }
  return std::string(name);
}

std::vector<std::string>
fused_moe_probe_names(const EngineLayer& layer)
{
  std::vector<std::string> out;
  if (layer.kind != LayerKind::fused_moe) {
    return out;
  }
  for (const char* proj : k_moe_probe_projections) {
    out.push_back(fmt::format("{}.0.{}", layer.prefix, proj));
  }
  return out;
}

bool
builds_plain_linear(Engine engine, QuantFormat format, const EngineLayer& layer)
{
  // SGLang's DeepSeek/GLM NextN eh_proj (its draft root "model.layers.N"), not MiMo-V2's.
  return layer.kind == LayerKind::plain_linear &&
         !(engine == Engine::sglang && format == QuantFormat::quark &&
           layer.prefix == "model.eh_proj" &&
           layer.draft_root.find("layers.") != std::string::npos);
}

bool
engine_reads(Engine engine, QuantFormat format)
{
  if (format == QuantFormat::unknown) {
    return false;
  }
  return engine != Engine::trtllm || format == QuantFormat::modelopt;
}

std::string_view
list_key_read(Engine engine, const ConfigSource& source)
{
  return engine == Engine::sglang && source.sglang_reads_empty ? "ignored_layers"
                                                               : std::string_view(source.list_key);
}

const ConfigSource*
source_for(const Declaration& declaration, Engine engine)
{
  const ConfigSource* config = declaration.find("config.json");
  const ConfigSource* hf = declaration.find("hf_quant_config.json");
  const ConfigSource* qc = declaration.find("quantization_config.json");
  if (engine == Engine::trtllm) {
    if (hf && !hf->algo.empty()) {
      return hf;
    }
    return config;
  }
  if (config) {
    return config;
  }
  return hf ? hf : qc;
}

const std::string*
Drafts::root_of(std::string_view module) const
{
  for (const auto& root : roots) {
    if (module == root || is_below(module, root)) {
      return &root;
    }
  }
  return nullptr;
}

Drafts
locate_drafts(const ModelInfo& model, const Checkpoint& checkpoint, const Inventory& inventory)
{
  Drafts drafts;
  drafts.declared = model.num_mtp_layers;
  // Whether a loader reads a tensor under `root`; if not, the files that hold them go to `files`.
  const auto loaded_under = [&](const std::string& root, std::vector<std::string>& files) {
    for (const Module& m : inventory.under(root)) {
      for (uint32_t t : m.tensors) {
        const ShardFile& shard = checkpoint.shards[checkpoint.shard_index(checkpoint.tensors[t])];
        if (!checkpoint.has_index || shard.in_index) {
          return true;
        }
        if (std::find(files.begin(), files.end(), shard.file) == files.end()) {
          files.push_back(shard.file);
        }
      }
    }
    return false;
  };
  static constexpr std::array<const char*, 3> k_bases{"model.layers", "model.language_model.layers",
                                                      "language_model.model.layers"};
  if (model.num_hidden_layers) {
    const uint64_t first = *model.num_hidden_layers;
    const uint64_t count =
      std::min<uint64_t>(model.num_mtp_layers, std::numeric_limits<uint64_t>::max() - first);
    // The draft indices to look up: each declared one, or for a count too large to walk (a
    // typo, a hostile config) the declared ones some module is stored under.
    std::vector<uint64_t> candidates;
    const bool walk = count <= k_walked_draft_layers;
    if (walk) {
      for (uint64_t k = 0; k < count; ++k) {
        candidates.push_back(first + k);
      }
    } else {
      for (const char* base : k_bases) {
        const std::string dotted = fmt::format("{}.", base);
        for (const Module& m : inventory.under(base)) {
          uint64_t n = 0;
          const std::string_view rest = m.name.substr(dotted.size());
          const auto [end, ec] = std::from_chars(rest.data(), rest.data() + rest.size(), n);
          if (ec == std::errc() && (end == rest.data() + rest.size() || *end == '.') &&
              n >= first && n - first < count) {
            candidates.push_back(n);
          }
        }
      }
      std::sort(candidates.begin(), candidates.end());
      candidates.erase(std::unique(candidates.begin(), candidates.end()), candidates.end());
    }
    std::vector<uint64_t> found_layers;
    for (const uint64_t layer : candidates) {
      bool found = false;
      std::vector<std::string> unindexed;
      for (const char* base : k_bases) {
        const std::string root = fmt::format("{}.{}", base, layer);
        if (!inventory.under(root).empty()) {
          drafts.roots.push_back(root);
          found = found || loaded_under(root, unindexed);
        }
      }
      if (found) {
        found_layers.push_back(layer);
        continue;
      }
      for (std::string& file : unindexed) {
        if (std::find(drafts.unindexed_files.begin(), drafts.unindexed_files.end(), file) ==
            drafts.unindexed_files.end()) {
          drafts.unindexed_files.push_back(std::move(file));
        }
      }
    }
    // The missing ones: counted, and the first few listed.
    drafts.missing_count = count - found_layers.size();
    for (uint64_t k = 0, f = 0; k < count && drafts.missing.size() < Drafts::k_listed_missing;
         ++k) {
      if (f < found_layers.size() && found_layers[f] == first + k) {
        ++f;
      } else {
        drafts.missing.push_back(first + k);
      }
    }
  }
  for (const char* root : {"mtp", "model.mtp", "model.mtp_layers", "model.mtp_block",
                           "language_model.mtp", "model.language_model.mtp"}) {
    if (!inventory.under(root).empty()) {
      drafts.roots.emplace_back(root);
    }
  }
  // Drafts stored under their own root (mtp.*) are not numbered after the decoder layers.
  if (std::any_of(drafts.roots.begin(), drafts.roots.end(),
                  [](const std::string& r) { return r.find("layers.") == std::string::npos; })) {
    drafts.missing.clear();
    drafts.missing_count = 0;
    drafts.unindexed_files.clear();
  }
  return drafts;
}

namespace {

// Whether the engine builds this model's MoE routers ("...gate") with the model's quantization
// config, so that the lists decide them: vLLM's Qwen3-MoE block (qwen3_moe.py, reused by Qwen3-VL-
// MoE, Qwen3-Omni-MoE, Intern-S1-Pro), lfm2_moe.py and arctic.py. Most models, and SGLang's
// Qwen3-MoE, build routers unquantized.
bool
router_quantizable(Engine engine, const ModelInfo& model)
{
  const std::string& type = model.model_type;
  return engine == Engine::vllm &&
         (type == "qwen3_moe" || type == "qwen3_vl_moe" || type == "qwen3_omni_moe" ||
          type == "interns1_pro" || type == "lfm2_moe" || type == "arctic");
}

} // namespace

namespace {

// How an engine builds one module of a MiMo-V2 MTP layer (model.mtp.layers.{k}.X).
struct MimoV2Layer
{
  bool built = true;  // false: the engine loads no such module
  std::string name;   // the engine's name for it, when not the checkpoint's
  bool plain = false; // built without a quantization config
  std::string note;
};

// MiMo-V2 (Flash, V2.5, Pro): vLLM builds only MTP layer 0, under its checkpoint names, with
// eh_proj and self_attn.o_proj unquantized whatever the lists say (mimo_v2_mtp.py, and
// mimo_v2.py's attention, which drops the quantization config for "mtp.layers" prefixes).
// SGLang builds each MTP layer as its own draft under "model.decoder" (mimo_v2_nextn.py), its
// eh_proj a plain nn.Linear, and does not map the lists. Empty for other models and modules.
std::optional<MimoV2Layer>
mimo_v2_layer(Engine engine, const ModelInfo& model, std::string_view module)
{
  static constexpr std::string_view k_layers = "model.mtp.layers.";
  if (model.architectures.empty() || !module.starts_with(k_layers)) {
    return std::nullopt;
  }
  const std::string& arch = model.architectures.front();
  const bool sglang_draft = arch == "MiMoV2FlashForCausalLM" || arch == "MiMoV2ForCausalLM";
  const bool vllm_draft = sglang_draft || arch == "MiMoV2OmniForCausalLM";
  if (!(engine == Engine::vllm ? vllm_draft : engine == Engine::sglang && sglang_draft)) {
    return std::nullopt;
  }
  const std::string_view in_layer = module.substr(k_layers.size());
  const size_t dot = in_layer.find('.');
  if (dot == std::string_view::npos || dot == 0) {
    return std::nullopt;
  }
  const std::string_view index = in_layer.substr(0, dot);
  const std::string_view rest = in_layer.substr(dot + 1);
  MimoV2Layer out;
  if (engine == Engine::vllm) {
    out.built = index == "0";
    out.plain = rest == "eh_proj" || rest == "self_attn.o_proj";
    out.note = "vLLM builds MiMo-V2's MTP layer 0 only, its eh_proj and self_attn.o_proj "
               "unquantized";
    return out;
  }
  out.plain = rest == "eh_proj";
  out.name = out.plain ? "model.eh_proj" : fmt::format("model.decoder.{}", rest);
  out.note = "SGLang builds each MiMo-V2 MTP layer under 'model.decoder'";
  return out;
}

} // namespace

Compared
compared_names_of(Engine engine, QuantFormat format, const EngineLayer& layer)
{
  switch (format) {
  case QuantFormat::fp8:
    // vLLM's is_layer_skipped: a fused MoE by its prefix, another fused layer by its shards.
    // SGLang's Fp8Config asks is_layer_skipped for a FusedMoE's prefix too ("experts" is no key
    // of its fused mappings); in both, an entry naming one expert's projection contains it.
    if (layer.kind == LayerKind::fused_moe) {
      return Compared::prefix;
    }
    return engine == Engine::vllm ? Compared::shards : Compared::shards_then_prefix;
  case QuantFormat::awq:
    // vLLM's is_layer_skipped (substrings) likewise; SGLang's is_layer_skipped_awq the prefix.
    return engine == Engine::vllm && layer.kind != LayerKind::fused_moe ? Compared::shards
                                                                        : Compared::prefix;
  case QuantFormat::bitsandbytes:
    return Compared::prefix; // is_layer_skipped_bnb has no fused mapping
  default:
    return Compared::shards_then_prefix;
  }
}

std::string
unbuilt_draft_note(Engine engine, const ModelInfo& model, std::string_view module)
{
  const std::optional<MimoV2Layer> layer = mimo_v2_layer(engine, model, module);
  return layer && !layer->built ? "it builds MiMo-V2's MTP layer 0 only and loads none of this "
                                  "layer's weights"
                                : std::string();
}

namespace {

// Xiaomi MiMo (MiMoForCausalLM; not MiMo-V2): the name an engine gives a module of MTP layer k
// (model.mtp_layers.{k}.X), or nullopt. vLLM's drafter config has num_hidden_layers 0, so MTP
// layer k is built as "model.layers.{k}" (mimo_mtp.py, speculative.py hf_config_override);
// SGLang builds it with no prefix at all (mimo_mtp.py: MiMoMTP's prefix is "").
std::optional<std::string>
mimo_mtp_name(Engine engine, const ModelInfo& model, std::string_view module)
{
  static constexpr std::string_view k_root = "model.mtp_layers.";
  if (model.architectures.empty() || model.architectures.front() != "MiMoForCausalLM" ||
      !module.starts_with(k_root) || engine == Engine::trtllm) {
    return std::nullopt;
  }
  const std::string_view in_layer = module.substr(k_root.size());
  const size_t dot = in_layer.find('.');
  if (dot == std::string_view::npos || dot == 0) {
    return std::nullopt;
  }
  if (engine == Engine::vllm) {
    return fmt::format("model.layers.{}", in_layer);
  }
  return std::string(in_layer.substr(dot + 1));
}

// The order of an engine's layers: by prefix, a layer shadowing a main layer after it. One
// comparison of the prefixes (a tuple's < makes two when the first is not less).
bool
layer_order(const EngineLayer& a, const EngineLayer& b)
{
  const int c = a.prefix.compare(b.prefix);
  return c < 0 || (c == 0 && !a.shadows_main && b.shadows_main);
}

// One engine's layers while engine_layers() builds them.
class LayerBuilder
{
public:
  // `modules`: how many modules at most are added.
  LayerBuilder(Engine engine, const ModelInfo& model, const Inventory& inventory, size_t modules)
    : m_engine(engine), m_quantizable_routers(router_quantizable(engine, model)),
      m_inventory(&inventory)
  {
    m_placed.reserve(modules);
    m_shard_names.reserve(modules);
  }

  Engine engine() const { return m_engine; }
  bool quantizable_routers() const { return m_quantizable_routers; }

  // Module `module` joins the layer `prefix` (created on first use) as `shard` (if not empty).
  // `renamed`: `shard` views a name this engine gives the module, stored here; otherwise a
  // shard is the module's own name. `root`: the module belongs to that draft root.
  // `shadows_main`: the layer bears a main layer's names but is a layer of its own.
  void add(uint32_t module, std::string_view prefix, LayerKind kind, bool quantized,
           std::string_view shard, bool renamed, const std::string* root, const std::string& note,
           bool shadows_main = false)
  {
    // Modules arrive sorted, so a fused layer's modules (experts, q/k/v) mostly come in a row.
    if (m_layers.empty() || m_layers[m_last].prefix != prefix ||
        m_layers[m_last].shadows_main != shadows_main) {
      std::string key(prefix);
      if (shadows_main) {
        key.push_back('\0'); // no name holds a NUL
      }
      auto [it, inserted] = m_index.try_emplace(std::move(key), m_layers.size());
      if (inserted) {
        EngineLayer& added = m_layers.emplace_back();
        added.prefix = prefix;
        added.shadows_main = shadows_main;
      }
      m_last = static_cast<uint32_t>(it->second);
    }
    EngineLayer& layer = m_layers[m_last];
    layer.kind = kind;
    layer.quantized += quantized ? 1 : 0;
    ShardName shard_name = ShardName::none;
    if (!shard.empty()) {
      shard_name = ShardName::own;
      if (renamed) {
        shard_name = ShardName::renamed;
        m_renamed_shards.push_back(m_renamed_names->emplace_back(shard));
        layer.renamed = m_renamed_names;
      }
    }
    m_placed.push_back({m_last, module});
    m_shard_names.push_back(shard_name);
    if (root) {
      layer.draft = true;
      layer.draft_root = *root;
      layer.namespace_note = note;
    }
  }

  // The layers, sorted by prefix, each with its modules and shards in module order.
  std::vector<EngineLayer> finish()
  {
    std::vector<std::pair<size_t, size_t>> sizes(m_layers.size()); // modules, shards
    for (size_t i = 0; i < m_placed.size(); ++i) {
      ++sizes[m_placed[i].layer].first;
      sizes[m_placed[i].layer].second += m_shard_names[i] == ShardName::none ? 0 : 1;
    }
    for (size_t l = 0; l < m_layers.size(); ++l) {
      m_layers[l].modules.resize(sizes[l].first);
      m_layers[l].shards.resize(sizes[l].second);
      sizes[l] = {0, 0}; // now: how many modules and shards are in place
    }
    auto renamed = m_renamed_shards.begin();
    for (size_t i = 0; i < m_placed.size(); ++i) {
      const Placed& p = m_placed[i];
      EngineLayer& layer = m_layers[p.layer];
      auto& [modules, shards] = sizes[p.layer];
      layer.modules[modules++] = p.module;
      if (m_shard_names[i] == ShardName::own) {
        layer.shards.set_module(shards++, m_inventory->modules.data(), p.module);
      } else if (m_shard_names[i] == ShardName::renamed) {
        layer.shards.set(shards++, *renamed++);
      }
    }
    std::vector<EngineLayer> out = std::move(m_layers);
    std::sort(out.begin(), out.end(), layer_order);
    return out;
  }

private:
  // A module's place, and its shard's name, take 9 bytes per module and engine (they took 24
  // with the shard's view: a million tensors have a quarter of a million modules).
  struct Placed
  {
    uint32_t layer;
    uint32_t module;
  };
  enum class ShardName : uint8_t
  {
    none,
    own,     // the module's name
    renamed, // the next of m_renamed_shards
  };
  Engine m_engine;
  bool m_quantizable_routers;
  const Inventory* m_inventory;
  std::vector<EngineLayer> m_layers;
  std::unordered_map<std::string, size_t> m_index; // prefix -> index into m_layers
  std::vector<Placed> m_placed;                    // in module order
  std::vector<ShardName> m_shard_names;            // of each of m_placed
  uint32_t m_last = 0;                             // the layer the last module joined
  std::shared_ptr<std::deque<std::string>> m_renamed_names =
    std::make_shared<std::deque<std::string>>();  // what renamed shards view
  std::vector<std::string_view> m_renamed_shards; // in the order of m_placed
};

} // namespace

std::string
kimi_k25_name(Engine engine, const ModelInfo& model, std::string_view name)
{
  if (engine != Engine::sglang || !is_kimi_k25(&model)) {
    return {};
  }
  const bool head = name == "language_model.lm_head";
  std::string_view rest; // "layers.X" and the text model's other modules
  if (name.starts_with("language_model.model.")) {
    rest = name.substr(21);
  } else if (name.starts_with("language_model.layers.")) {
    rest = name.substr(15);
  } else if (!head) {
    return {};
  }
  std::string out;
  if (model.quark) {
    out = head ? std::string(name) : fmt::format("language_model.model.{}", rest);
  } else {
    out = head ? std::string("lm_head") : fmt::format("model.{}", rest);
  }
  return out == name ? std::string() : out;
}

std::vector<std::vector<EngineLayer>>
engine_layers(std::span<const Engine> engines, const Inventory& inventory, const Drafts& drafts,
              const ModelInfo& model)
{
  return engine_layers(engines, inventory, drafts, model, 0, inventory.modules.size());
}

std::vector<std::vector<EngineLayer>>
engine_layers(std::span<const Engine> engines, const Inventory& inventory, const Drafts& drafts,
              const ModelInfo& model, size_t begin, size_t end)
{
  std::vector<LayerBuilder> builders;
  bool any_routers = false;
  for (const Engine engine : engines) {
    builders.emplace_back(engine, model, inventory, end - begin);
    any_routers = any_routers || builders.back().quantizable_routers();
  }
  // Sibling lookup for fused groups.
  auto exists = [&](const std::string& name) { return inventory.find(name) >= 0; };
  // Each draft root's modules, as a range of module indices (names below a root sort together).
  struct RootRange
  {
    const std::string* root;
    size_t begin, end;
  };
  std::vector<RootRange> root_ranges;
  for (const std::string& root : drafts.roots) {
    const std::span<const Module> below = inventory.under(root);
    const auto at = [&](const Module* m) {
      return static_cast<size_t>(m - inventory.modules.data());
    };
    root_ranges.push_back({&root, at(below.data()), at(below.data() + below.size())});
    if (const int64_t self = inventory.find(root); self >= 0) {
      root_ranges.push_back({&root, static_cast<size_t>(self), static_cast<size_t>(self) + 1});
    }
  }
  const auto root_of = [&](size_t i) -> const std::string* {
    for (const RootRange& r : root_ranges) {
      if (i >= r.begin && i < r.end) {
        return r.root;
      }
    }
    return nullptr;
  };
  const bool kimi = is_kimi_k25(&model);
  for (auto i = static_cast<uint32_t>(begin); i < end; ++i) {
    const Module& m = inventory.modules[i];
    const bool maybe_router = m.role == ModuleRole::router && any_routers;
    if ((m.role != ModuleRole::linear && m.role != ModuleRole::expert &&
         m.role != ModuleRole::fused_experts && m.role != ModuleRole::lm_head && !maybe_router) ||
        !m.loaded) {
      continue;
    }
    // What every engine sees alike: the draft root, the leaf, the fused group of siblings.
    const std::string* root = root_of(i);
    const std::string_view leaf = m.role == ModuleRole::expert && root == nullptr
                                    ? std::string_view() // not needed
                                    : leaf_of(m.name);
    const bool gate_router = maybe_router && leaf == "gate";
    const FusedGroup* group = nullptr;
    if (m.role == ModuleRole::linear) {
      for (const auto& g : fused_groups()) {
        if (std::find(g.shards.begin(), g.shards.end(), leaf) == g.shards.end()) {
          continue;
        }
        size_t present = 0;
        for (auto sibling : g.shards) {
          present += exists(with_leaf(m.name, sibling)) ? 1 : 0;
        }
        group = present >= 2 ? &g : nullptr;
        break;
      }
    }
    // An expert's fused MoE layer, under its own name (the engines that do not rename it).
    const std::string_view moe_prefix =
      m.role == ModuleRole::expert ? fused_moe_prefix(m.name) : std::string_view();
    for (LayerBuilder& b : builders) {
      const Engine engine = b.engine();
      const bool router = gate_router && b.quantizable_routers();
      if (m.role == ModuleRole::router && !router) {
        continue;
      }
      std::string renamed; // set when this engine renames the module
      std::string_view name = m.name;
      std::string note;
      LayerKind kind = m.role == ModuleRole::lm_head ? LayerKind::lm_head
                       : router                      ? LayerKind::router
                                                     : LayerKind::linear;
      // MiMo-V2's MTP layers (model.mtp.layers.{k}.X): each engine builds them its own way.
      const std::optional<MimoV2Layer> mimo_v2 = root && *root == "model.mtp"
                                                   ? mimo_v2_layer(engine, model, m.name)
                                                   : std::optional<MimoV2Layer>();
      if (mimo_v2 && !mimo_v2->built) {
        continue;
      }
      bool shadows_main = false;
      if (const std::optional<std::string> mimo = root && *root == "model.mtp_layers"
                                                    ? mimo_mtp_name(engine, model, m.name)
                                                    : std::nullopt) {
        name = renamed = *mimo;
        shadows_main = engine == Engine::vllm;
        note = engine == Engine::vllm
                 ? "vLLM builds MiMo's MTP layer k under main layer k's names ('model.layers.k'): "
                   "no list entry excludes one without the other"
                 : "SGLang builds MiMo's MTP layer under bare names ('self_attn.X', 'mlp.X'): an "
                   "entry for them names every main layer's too";
        if (leaf == "input_proj") {
          kind = LayerKind::plain_linear;
        }
      } else if (const std::optional<std::string> qwen3_next =
                   root && *root == "mtp" ? qwen3_next_mtp_name(engine, model, m.name)
                                          : std::nullopt) {
        if (qwen3_next->empty()) {
          continue; // SGLang builds MTP layer 0 alone
        }
        name = renamed = *qwen3_next;
        shadows_main = true;
        note = "SGLang builds Qwen3-Next's MTP layer 0 under main layer 0's names "
               "('model.layers.0'): no list entry excludes a module both have in one without "
               "the other";
      } else if (mimo_v2) {
        if (!mimo_v2->name.empty()) {
          name = renamed = mimo_v2->name;
        }
        note = mimo_v2->note;
        if (mimo_v2->plain) {
          kind = LayerKind::plain_linear;
        }
      } else if (root) {
        const bool inline_root = root->find("layers.") != std::string::npos;
        if (engine == Engine::vllm) {
          name = renamed = strip_language_model(m.name);
          if (name != m.name) {
            note = "vLLM builds the drafter as a text-only model, without 'model.language_model.'";
          }
          if ((inline_root && leaf == "eh_proj") || leaf == "input_proj") {
            kind = LayerKind::plain_linear;
          }
        } else if (engine == Engine::sglang) {
          if (sglang_nextn_root(*root, model)) {
            // SGLang's NextN loader skips the draft's shared_head.head: the target's head
            // serves it (deepseek_nextn.py load_weights).
            if (m.role == ModuleRole::lm_head) {
              continue;
            }
            // The root becomes "model.decoder" (a module at the root itself, its tensors named
            // "<root>.weight", becomes "model.decoder"), except for eh_proj: "model.eh_proj".
            if (leaf == "eh_proj") {
              renamed = "model.eh_proj";
              kind = LayerKind::plain_linear;
              note = "SGLang builds the NextN's eh_proj as 'model.eh_proj'";
            } else {
              renamed = m.name.size() > root->size()
                          ? fmt::format("model.decoder.{}", m.name.substr(root->size() + 1))
                          : std::string("model.decoder");
              note = "SGLang builds the NextN decoder under 'model.decoder'";
            }
            name = renamed;
          } else {
            name = renamed = strip_language_model(m.name);
          }
          if (m.name == "mtp.fc") {
            kind = LayerKind::plain_linear;
          }
        }
      }
      if (root == nullptr && kimi) {
        if (std::string k = kimi_k25_name(engine, model, m.name); !k.empty()) {
          name = renamed = std::move(k);
        }
      }
      std::string fused; // the fused name, when this module is one shard of it
      std::string_view prefix = name;
      std::string_view shard;
      if (m.role == ModuleRole::expert) {
        prefix = name.data() == m.name.data() ? moe_prefix : fused_moe_prefix(name);
        kind = LayerKind::fused_moe;
        shard = name;
      } else if (m.role == ModuleRole::fused_experts) {
        kind = LayerKind::fused_moe;
      } else if (kind == LayerKind::linear && group != nullptr) {
        fused = with_leaf(name, engine == Engine::sglang ? group->sglang : group->vllm);
        prefix = fused;
        shard = name;
      }
      b.add(i, prefix, kind, m.storage == Storage::quantized, shard, !renamed.empty(), root, note,
            shadows_main);
    }
  }
  std::vector<std::vector<EngineLayer>> out;
  for (LayerBuilder& b : builders) {
    out.push_back(b.finish());
  }
  return out;
}

void
join_layers(std::vector<EngineLayer>& before, std::vector<EngineLayer>&& after)
{
  if (after.empty()) {
    return;
  }
  // Both are sorted by prefix, each prefix once: a merge, a prefix in both joined. A layer made
  // by both sides takes what LayerBuilder::add() leaves to its last module from `after`.
  const auto join = [](EngineLayer& into, EngineLayer&& from) {
    into.kind = from.kind;
    into.quantized += from.quantized;
    into.modules.insert(into.modules.end(), from.modules.begin(), from.modules.end());
    into.shards.append(from.shards);
    if (from.draft) {
      into.draft = true;
      into.draft_root = std::move(from.draft_root);
      into.namespace_note = std::move(from.namespace_note);
    }
    if (from.renamed && from.renamed != into.renamed) {
      // `from`'s renamed shards view its list: one owner keeps it and `into`'s (if any) alive.
      using Names = std::shared_ptr<const std::deque<std::string>>;
      auto both = std::make_shared<std::pair<Names, Names>>(into.renamed, from.renamed);
      const std::deque<std::string>* shown = into.renamed ? into.renamed.get() : from.renamed.get();
      into.renamed = Names(both, shown);
    }
  };
  std::vector<EngineLayer> out;
  out.reserve(before.size() + after.size());
  auto a = before.begin();
  auto b = after.begin();
  const auto less = layer_order;
  while (a != before.end() || b != after.end()) {
    if (b == after.end() || (a != before.end() && less(*a, *b))) {
      out.push_back(std::move(*a++));
    } else if (a == before.end() || less(*b, *a)) {
      out.push_back(std::move(*b++));
    } else {
      join(*a, std::move(*b++));
      out.push_back(std::move(*a++));
    }
  }
  before = std::move(out);
  after.clear();
}

bool
draft_names_unlistable(Engine engine, const ModelInfo& model, const Inventory& inventory,
                       std::string_view module)
{
  if (mimo_mtp_name(engine, model, module)) {
    return true;
  }
  const std::optional<std::string> name = qwen3_next_mtp_name(engine, model, module);
  return name && !name->empty() && main_layer_holds(inventory, *name);
}

std::vector<EngineLayer>
engine_layers(Engine engine, const Inventory& inventory, const Drafts& drafts,
              const ModelInfo& model)
{
  return std::move(engine_layers(std::span(&engine, 1), inventory, drafts, model).front());
}

namespace {

// SGLang's DeepSeek-V3 NextN model (DeepseekV3ForCausalLMNextN, the draft of DeepseekV3ForCausalLM
// and DeepseekV32ForCausalLM checkpoints, Kimi-K2's among them) maps the names in its quantization
// config with one substring rule, "model.layers.61" -> "model.decoder" (the first occurrence in
// each name; 61 is fixed, whatever num_hidden_layers says): ModelOpt's exclude_modules and
// quantized_layers, compressed-tensors' ignore and targets, FP8's ignored_layers (sglang
// deepseek_nextn.py, model_loader/loader.py, PR 19425). Quark's excludes are mapped too; that
// format has its own path in decide().
constexpr std::string_view k_sglang_mapped_text = "model.layers.61";

} // namespace

bool
sglang_maps_draft_entries(QuantFormat format, const ModelInfo& model)
{
  return (format == QuantFormat::modelopt || format == QuantFormat::compressed_tensors ||
          format == QuantFormat::fp8) &&
         !model.architectures.empty() &&
         (model.architectures.front() == "DeepseekV3ForCausalLM" ||
          model.architectures.front() == "DeepseekV32ForCausalLM");
}

namespace {

std::string
sglang_map_name(std::string_view name)
{
  const size_t at = name.find(k_sglang_mapped_text);
  if (at == std::string_view::npos) {
    return std::string(name);
  }
  return fmt::format("{}model.decoder{}", name.substr(0, at),
                     name.substr(at + k_sglang_mapped_text.size()));
}

// Looks for "61" first (few names hold a '6'; most start with 'm'), then for what precedes it.
bool
holds_sglang_mapped_text(std::string_view name)
{
  constexpr std::string_view k_before = k_sglang_mapped_text.substr(0, 13); // "model.layers."
  static_assert(k_sglang_mapped_text.substr(13) == "61");
  for (size_t at = name.find("61", k_before.size()); at != std::string_view::npos;
       at = name.find("61", at + 1)) {
    if (name.substr(at - k_before.size(), k_before.size()) == k_before) {
      return true;
    }
  }
  return false;
}

// `s` as that rule maps it, keeping of its entries only `picked` (in list order): the block
// SGLang's draft reads, cut to the entries that can meet one layer.
ConfigSource
sglang_mapped_source(const ConfigSource& s, std::span<const uint32_t> picked)
{
  ConfigSource out = s;
  out.positions.clear();
  std::vector<std::string> entries;
  entries.reserve(picked.size());
  for (const uint32_t i : picked) {
    entries.push_back(sglang_map_name(s.excludes[i]));
  }
  out.excludes = EntryList(entries);
  for (auto& [key, algo] : out.quantized_layers) {
    key = sglang_map_name(key);
  }
  for (CtGroup& g : out.groups) {
    for (std::string& t : g.targets) {
      t = sglang_map_name(t);
    }
  }
  return out;
}

// Where that rule changes a block's names.
struct SglangMapping
{
  const ConfigSource* from = nullptr; // the block
  std::vector<uint32_t> changed;      // its entries the rule changes
  bool selecting = false;             // it changes a quantized_layers key or a target
  // When asked for and some entry changes: the changed entries mapped (entry k maps the
  // block's entry changed[k]) and their list compiled for SGLang; null otherwise.
  std::shared_ptr<const ConfigSource> changed_source;
  std::shared_ptr<const CompiledList> changed_list;
};

SglangMapping
sglang_mapping(const ConfigSource& s, bool compile)
{
  SglangMapping out{&s, {}, false, nullptr, nullptr};
  for (uint32_t i = 0; i < s.excludes.size(); ++i) {
    if (holds_sglang_mapped_text(s.excludes[i])) {
      out.changed.push_back(i);
    }
  }
  out.selecting =
    std::any_of(s.quantized_layers.begin(), s.quantized_layers.end(),
                [](const auto& layer) { return holds_sglang_mapped_text(layer.first); }) ||
    std::any_of(s.groups.begin(), s.groups.end(), [](const CtGroup& g) {
      return std::any_of(g.targets.begin(), g.targets.end(), holds_sglang_mapped_text);
    });
  if (compile && !out.changed.empty()) {
    out.changed_source = std::make_shared<const ConfigSource>(sglang_mapped_source(s, out.changed));
    out.changed_list = std::make_shared<const CompiledList>(Engine::sglang, *out.changed_source);
  }
  return out;
}

// The names decide() compares a layer's entries with: its prefix, its shards and, for fused
// experts, expert 0's projections (decide_ct() probes those, made up when the experts are
// stored fused).
std::vector<std::string>
compared_names(const EngineLayer& layer)
{
  std::vector<std::string> out{layer.prefix};
  out.insert(out.end(), layer.shards.begin(), layer.shards.end());
  if (layer.kind == LayerKind::fused_moe) {
    for (const char* proj : k_moe_probe_projections) {
      out.push_back(fmt::format("{}.0.{}", layer.prefix, proj));
    }
  }
  return out;
}

} // namespace

std::optional<std::string>
sglang_draft_entry(QuantFormat format, const ModelInfo& model, std::string_view entry)
{
  if (!sglang_maps_draft_entries(format, model) || !holds_sglang_mapped_text(entry)) {
    return std::nullopt;
  }
  return sglang_map_name(entry);
}

struct CompiledList::Impl
{
  ListIndexes indexes;
  std::shared_ptr<SharedIndex> shared; // the index of the lists compiled with this one
  // Made by the first decide() of a draft layer SGLang maps the names for.
  std::once_flag sglang_once;
  SglangMapping sglang_mapping;
};

// A draft layer SGLang renames (model.decoder.X, model.eh_proj) spelled as the checkpoint names
// it, under its draft root; nullopt for any other layer.
std::optional<EngineLayer>
checkpoint_spelling(const EngineLayer& layer)
{
  if (!layer.draft || layer.draft_root.empty()) {
    return std::nullopt;
  }
  const auto original = [&](std::string_view name) -> std::optional<std::string> {
    for (const std::string_view renamed : {"model.decoder.", "model."}) {
      if (name.starts_with(renamed)) {
        return fmt::format("{}.{}", layer.draft_root, name.substr(renamed.size()));
      }
    }
    return std::nullopt;
  };
  if (!layer.prefix.starts_with("model.decoder.") && layer.prefix != "model.eh_proj") {
    return std::nullopt;
  }
  EngineLayer out = layer;
  out.prefix = *original(layer.prefix);
  auto names = std::make_shared<std::deque<std::string>>();
  out.shards.clear();
  for (const std::string_view shard : layer.shards) {
    names->push_back(original(shard).value_or(std::string(shard)));
    out.shards.push_back(names->back());
  }
  out.renamed = std::move(names);
  return out;
}

namespace {

Decision
decide_layer(Engine engine, const ConfigSource& s, const ModelInfo& model, const EngineLayer& layer,
             bool stored_quantized, const ListIndexes* ix)
{
  Decision d;
  if (builds_plain_linear(engine, s.format, layer)) {
    d.quantized = false;
    d.reason = "the drafter builds it as a plain nn.Linear, never quantized";
    return d;
  }
  // Only ModelOpt quantizes the output head by default; GPTQ/AWQ need "lm_head": true and
  // compressed-tensors an explicit target (ParallelLMHead is not a Linear class). Quark's
  // get_quant_method has no case for ParallelLMHead (vLLM and SGLang quark.py): unquantized.
  if (layer.kind == LayerKind::lm_head && s.format != QuantFormat::modelopt &&
      s.format != QuantFormat::compressed_tensors &&
      !((s.format == QuantFormat::gptq || s.format == QuantFormat::awq) && s.lm_head) &&
      !(s.format == QuantFormat::auto_round &&
        auto_round_head(engine, s, layer.prefix).quantized)) {
    d.quantized = false;
    d.reason = "this format leaves the output head unquantized";
    return d;
  }
  // Routers are judged where the format's list decides them as it does any Linear.
  if (layer.kind == LayerKind::router && s.format != QuantFormat::modelopt &&
      s.format != QuantFormat::compressed_tensors && s.format != QuantFormat::fp8 &&
      s.format != QuantFormat::quark) {
    d.quantized = false;
    d.reason = "qcheck does not judge MoE routers for this format";
    return d;
  }
  switch (s.format) {
  case QuantFormat::modelopt:
    decide_modelopt(d, engine, s, model, layer, ix);
    break;
  case QuantFormat::compressed_tensors:
    decide_ct(d, engine, s, model, layer, ix);
    break;
  case QuantFormat::gptq:
    decide_gptq(d, engine, s, model, layer, stored_quantized, ix ? ix->dynamic.get() : nullptr);
    break;
  case QuantFormat::auto_round:
    // INCConfig (vLLM) and AutoRoundConfig (SGLang) never read "dynamic" (QC009 says so).
    decide_auto_round(d, engine, s, model, layer);
    break;
  case QuantFormat::awq:
    // Substrings. vLLM infers an empty list from the stored dtypes (maybe_update_config) and
    // compares a fused layer's shards alone, a fused MoE's prefix; SGLang infers nothing and
    // compares the prefix alone (is_layer_skipped_awq).
    if (s.excludes.empty() && engine == Engine::vllm) {
      d.inferred = true;
      d.quantized = stored_quantized;
      d.reason = "modules_to_not_convert is empty; vLLM infers exclusions from dtypes";
    } else {
      decide_by_list(
        d, layer, s.excludes, "modules_to_not_convert",
        [](std::string_view e, std::string_view n) { return contains(n, e); },
        [](std::string_view e, std::string_view n) { return contains(n, e); }, ix,
        compared_names_of(engine, s.format, layer));
    }
    break;
  case QuantFormat::fp8: {
    if (engine == Engine::sglang && s.sglang_reads_empty) {
      d.quantized = true;
      d.reason = "SGLang reads ignored_layers, which is empty, and never modules_to_not_convert";
      break;
    }
    const auto shard = [&](std::string_view e, std::string_view n) {
      return fp8_shard_entry(engine, e, n);
    };
    const auto whole = [&](std::string_view e, std::string_view n) {
      return fp8_entry(engine, e, n);
    };
    // vLLM's Fp8Config asks is_layer_skipped for a fused MoE layer's prefix alone (an entry
    // naming any one of its experts contains it, and skips the whole layer), and for another
    // fused layer its shards alone.
    decide_by_list(d, layer, s.excludes, s.list_key, shard, whole, ix,
                   compared_names_of(engine, s.format, layer));
    break;
  }
  case QuantFormat::quark: {
    auto match = [&](std::string_view e, std::string_view n) {
      return quark_entry(engine, e, n, &d.errors, &model);
    };
    decide_by_list(d, layer, s.excludes, "exclude", match, match, ix,
                   sglang_compares_fused_name(engine, s.format, model, layer)
                     ? Compared::prefix
                     : Compared::shards_then_prefix);
    // SGLang rewrites Quark's excludes for a NextN draft (PRs 23219, 30265; spec 6.2): entries
    // for model.layers.{N}.X reach model.decoder.X. It rewrites the entries' text (DeepSeek's
    // substring mapper, GLM-5's rewrite of entries under the root), so only an entry holding
    // the root's text does; an escaped regex keeps its spelling and reaches nothing (nor does a
    // glob: `match` reads it as text for SGLang).
    if (const auto original = engine == Engine::sglang && d.quantized
                                ? checkpoint_spelling(layer)
                                : std::optional<EngineLayer>();
        original) {
      std::vector<std::string_view> rewritten;
      for (const auto& e : s.excludes) {
        const std::string_view text = e;
        if (text.find(layer.draft_root) != std::string_view::npos) {
          rewritten.push_back(e);
        }
      }
      Decision o;
      decide_by_list(o, *original, rewritten, "exclude", match, match);
      if (!o.quantized) {
        o.reason +=
          fmt::format(" (SGLang maps '{}' onto '{}' for Quark)", original->prefix, layer.prefix);
        d = std::move(o);
      }
    }
    break;
  }
  case QuantFormat::bitsandbytes:
    if (layer.kind == LayerKind::fused_moe) {
      d.quantized = true;
      d.reason = "bitsandbytes never skips fused MoE layers";
    } else {
      // is_layer_skipped_bnb has no fused mapping: a fused layer by its own name alone.
      const Compared compared = compared_names_of(engine, s.format, layer);
      if (!bnb_names_differ(&model)) {
        decide_by_list(d, layer, s.excludes, "llm_int8_skip_modules", bnb_entry, bnb_entry, ix,
                       compared);
      } else { // entries compared with the engine's name, one by one (the index has the other)
        const auto match = [&](std::string_view entry, std::string_view name) {
          return bnb_entry(entry, bnb_name(engine, &model, name));
        };
        decide_by_list(d, layer, s.excludes, "llm_int8_skip_modules", match, match, nullptr,
                       compared);
        if (const std::string own = bnb_name(engine, &model, layer.prefix); own != layer.prefix) {
          d.reason += fmt::format(" (compared as '{}', its name in {})", own, display_name(engine));
        }
      }
    }
    break;
  case QuantFormat::mxfp4:
    d.quantized = layer.kind == LayerKind::fused_moe;
    d.reason = d.quantized ? "MXFP4 quantizes MoE experts; vLLM ignores the exclusion list"
                           : "MXFP4 quantizes only MoE experts";
    break;
  case QuantFormat::unknown:
    break;
  }
  if (d.quantized || !d.inferred) {
    EngineOverride o = draft_override(engine, s, model, layer, ix ? ix->dynamic.get() : nullptr);
    if (o.note.empty()) {
      o.note = tower_override(engine, s, model, layer);
    }
    if (o.note.empty()) {
      o.note = layer_override(engine, s, model, layer);
    }
    if (!o.note.empty() && d.quantized) {
      d.quantized = false;
      d.override_note = std::move(o.note);
      d.override_remedy = std::move(o.remedy);
    } else if (!o.note.empty()) {
      d.forced_note = std::move(o.note);
    }
  }
  return d;
}

// The name of `s` that `name`, a name of `mapped` (sglang_mapped_source(s, picked)), was mapped
// from; empty when `mapped` holds no such name. A target is looked for first when `reason` says
// one matched.
std::string_view
sglang_original_name(const ConfigSource& s, const ConfigSource& mapped,
                     std::span<const uint32_t> picked, std::string_view name,
                     std::string_view reason)
{
  const auto target = [&]() -> std::string_view {
    for (size_t g = 0; g < mapped.groups.size(); ++g) {
      for (size_t t = 0; t < mapped.groups[g].targets.size(); ++t) {
        if (mapped.groups[g].targets[t] == name) {
          return s.groups[g].targets[t];
        }
      }
    }
    return {};
  };
  if (reason.starts_with("target '")) {
    if (const std::string_view found = target(); !found.empty()) {
      return found;
    }
  }
  for (size_t i = 0; i < mapped.excludes.size(); ++i) {
    if (mapped.excludes[i] == name) {
      return s.excludes[picked[i]];
    }
  }
  for (size_t i = 0; i < mapped.quantized_layers.size(); ++i) {
    if (mapped.quantized_layers[i].first == name) {
      return s.quantized_layers[i].first;
    }
  }
  return target();
}

} // namespace

Decision
decide(Engine engine, const ConfigSource& s, const ModelInfo& model, const EngineLayer& layer,
       bool stored_quantized, const CompiledList* list)
{
  const ListIndexes* ix = list ? &list->m_impl->indexes : nullptr;
  if (engine != Engine::sglang || !layer.draft || !sglang_maps_draft_entries(s.format, model)) {
    return decide_layer(engine, s, model, layer, stored_quantized, ix);
  }
  SglangMapping own;
  const SglangMapping* mapping = nullptr;
  if (list != nullptr) {
    CompiledList::Impl& impl = *list->m_impl;
    std::call_once(impl.sglang_once, [&] { impl.sglang_mapping = sglang_mapping(s, true); });
    mapping = &impl.sglang_mapping;
  }
  if (mapping == nullptr || mapping->from != &s) { // a list another block with these entries shares
    own = sglang_mapping(s, false);
    mapping = &own;
  }
  if (mapping->changed.empty() && !mapping->selecting) {
    return decide_layer(engine, s, model, layer, stored_quantized, ix);
  }
  // The entries that can meet this layer's names once mapped: the index's candidates for them
  // (an unchanged entry reads the same) and the changed entries' index's; all of a list not
  // indexed.
  std::vector<uint32_t> picked;
  if (ix != nullptr && ix->compiled) {
    const bool changed_indexed =
      mapping->changed_list && mapping->changed_list->m_impl->indexes.compiled;
    if (!changed_indexed) {
      picked = mapping->changed;
    }
    std::vector<uint32_t> found;
    for (const std::string& name : compared_names(layer)) {
      list->candidates(name, picked);
      if (changed_indexed) {
        found.clear();
        mapping->changed_list->candidates(name, found);
        for (const uint32_t k : found) {
          picked.push_back(mapping->changed[k]);
        }
      }
    }
    std::sort(picked.begin(), picked.end());
    picked.erase(std::unique(picked.begin(), picked.end()), picked.end());
  } else {
    picked.resize(s.excludes.size());
    std::iota(picked.begin(), picked.end(), 0u);
  }
  const ConfigSource mapped = sglang_mapped_source(s, picked);
  Decision d = decide_layer(engine, mapped, model, layer, stored_quantized, nullptr);
  if (const std::string_view original =
        sglang_original_name(s, mapped, picked, d.matched, d.reason);
      !original.empty() && original != d.matched) {
    const std::string quoted = fmt::format("'{}'", d.matched);
    const std::string spelled =
      fmt::format("'{}' (SGLang's DeepSeek NextN loader reads it as '{}')", original, d.matched);
    if (const size_t at = d.reason.find(quoted); at != std::string::npos) {
      d.reason.replace(at, quoted.size(), spelled);
    } else {
      d.reason += fmt::format(" ({})", spelled);
    }
    d.matched = std::string(original);
  }
  for (std::string& entry : d.shard_entries) {
    if (const std::string_view original = sglang_original_name(s, mapped, picked, entry, "");
        !original.empty()) {
      entry = std::string(original);
    }
  }
  // A regex is unevaluable as written, not as rewritten: one error per entry of the file whose
  // rewritten text failed (several entries may read the same once rewritten).
  std::vector<Unevaluable> as_written;
  const auto add_original = [&](const Unevaluable& e, std::string_view original) {
    Unevaluable o = e;
    if (original != e.entry) {
      const Expected<Regex>& re = cached_regex(std::string(original.substr(3)));
      o.problem = !re ? re.error()
                      : fmt::format("as SGLang's DeepSeek NextN loader reads it ('{}'): {}",
                                    e.entry, e.problem);
      o.entry = std::string(original);
    }
    as_written.push_back(std::move(o));
  };
  for (const Unevaluable& e : d.errors) {
    const size_t known = as_written.size();
    if (e.where == Unevaluable::Where::list) {
      for (size_t i = 0; i < mapped.excludes.size(); ++i) {
        if (mapped.excludes[i] == e.entry && s.excludes[picked[i]].starts_with("re:")) {
          add_original(e, s.excludes[picked[i]]);
        }
      }
    } else if (e.where == Unevaluable::Where::target) {
      for (size_t g = 0; g < std::min(mapped.groups.size(), s.groups.size()); ++g) {
        if (mapped.groups[g].name != e.group) {
          continue;
        }
        for (size_t t = 0; t < mapped.groups[g].targets.size(); ++t) {
          if (mapped.groups[g].targets[t] == e.entry && s.groups[g].targets[t].starts_with("re:")) {
            add_original(e, s.groups[g].targets[t]);
          }
        }
      }
    }
    if (as_written.size() == known) {
      as_written.push_back(e);
    }
  }
  d.errors = std::move(as_written); // lint reports each (entry, list) once
  return d;
}

std::string
sglang_unmapped_suffix(QuantFormat format, const ModelInfo& model, std::string_view entry)
{
  if ((format != QuantFormat::compressed_tensors && format != QuantFormat::modelopt) ||
      entry.starts_with("re:") || !sglang_maps_qwen_vl_entries(&model)) {
    return {};
  }
  const std::string name = regex_subject(Engine::sglang, &model, entry);
  const size_t dot = name.find('.');
  if (dot == std::string::npos) {
    return {};
  }
  if (format == QuantFormat::compressed_tensors) {
    // Taken whole or as a dotted suffix.
    return sglang_qwen_vl_mapped(entry) == name ? std::string() : name.substr(dot + 1);
  }
  // ModelOpt's globs are matched whole (or against one component): a leading "*." stands for
  // the root the mapper would rename.
  return modelopt_sglang_qwen_vl_entry(model, entry, entry)
           ? std::string()
           : fmt::format("*.{}", std::string_view(name).substr(dot + 1));
}

std::vector<uint32_t>
sglang_entries_reaching_draft(const ConfigSource& source, const ModelInfo& model,
                              std::span<const EngineLayer> layers)
{
  std::vector<uint32_t> out;
  if (!sglang_maps_draft_entries(source.format, model)) {
    return out;
  }
  const SglangMapping mapping = sglang_mapping(source, true);
  if (mapping.changed.empty()) {
    return out;
  }
  const ConfigSource& mapped = *mapping.changed_source;
  const bool indexed = mapping.changed_list->m_impl->indexes.compiled;
  std::vector<char> reached(mapping.changed.size(), 0);
  std::vector<uint32_t> found;
  for (const EngineLayer& layer : layers) {
    if (!layer.draft) {
      continue;
    }
    for (const std::string& name : compared_names(layer)) {
      found.clear();
      if (indexed) {
        mapping.changed_list->candidates(name, found);
      } else {
        found.resize(mapping.changed.size());
        std::iota(found.begin(), found.end(), 0u);
      }
      for (const uint32_t k : found) {
        if (!reached[k] && entry_matches(Engine::sglang, source.format, mapped.excludes[k], name)) {
          reached[k] = 1;
        }
      }
    }
  }
  for (size_t k = 0; k < reached.size(); ++k) {
    if (reached[k]) {
      out.push_back(mapping.changed[k]);
    }
  }
  return out;
}

namespace {

// What one engine's matchers need of an index over a block's list.
struct IndexNeeds
{
  EntryIndex::Options options;
  bool strip = false;      // entries and names also without their VLM wrapper
  bool vllm_split = false; // entries also as vLLM's ModelOpt loader splits them
  bool mapped = false;     // names also as vLLM's mapper renames them
  bool canonical = false;  // entries and names also folded by vlm_canonical()
  bool text_regex = false; // a matcher reads "re:" entries as text
  bool kimi = false;       // entries also as Kimi-K2.5's SGLang mapper renames them
};

// Nullopt when the engine matches this format's list without an index.
std::optional<IndexNeeds>
index_needs(Engine engine, const ConfigSource& source, const ModelInfo* model = nullptr)
{
  using Mode = EntryIndex::Mode;
  IndexNeeds n;
  switch (source.format) {
  case QuantFormat::modelopt:
    if (engine == Engine::vllm) {
      // Exact for shards; for prefixes a substring of the name or its unwrapped form, a glob,
      // or (both holding "experts") an entry that contains the name.
      n.options = {.mode = Mode::substring, .globs = true, .reverse_marker = "experts"};
      n.strip = true;
      n.vllm_split = true;
    } else if (engine == Engine::sglang) {
      // Dotted runs of the name or its unwrapped form, for the entry or its unwrapped form;
      // MLA shards by their leaf.
      n.options = {.mode = Mode::dotted,
                   .globs = true,
                   .leaf_markers = {k_mla_leaves.begin(), k_mla_leaves.end()}};
      n.strip = true;
      // The Qwen-VL mappers bring model.visual.X entries to visual.X names.
      n.canonical = sglang_maps_entries(model);
    } else {
      n.options = {.mode = Mode::ancestors, .globs = true, .regex_entries = true};
    }
    break;
  case QuantFormat::compressed_tensors:
    // SGLang's dotted suffixes are among the dotted runs. SGLang's regexes meet vLLM's renamed
    // names for some models (regex_subject): its candidates include that spelling too.
    n.options = {.mode = engine == Engine::sglang ? Mode::dotted : Mode::exact,
                 .regex_entries = true};
    n.mapped = engine != Engine::trtllm;
    n.canonical = true;
    break;
  case QuantFormat::quark:
    n.options = {.mode = Mode::exact, .globs = true, .regex_entries = true};
    n.mapped = engine == Engine::vllm; // its regexes meet its renamed VLM prefixes
    n.kimi = engine == Engine::sglang && is_kimi_k25(model);
    break;
  case QuantFormat::bitsandbytes:
    n.options = {.mode = Mode::dotted};
    break;
  case QuantFormat::fp8:
    // vLLM: exact, SGLang: dotted runs; both, for names holding "experts", entries that
    // contain the name.
    n.options = engine == Engine::vllm
                  ? EntryIndex::Options{.mode = Mode::exact, .reverse_marker = "experts"}
                  : EntryIndex::Options{.mode = Mode::dotted, .reverse_marker = "experts"};
    break;
  case QuantFormat::awq:
    n.options = {.mode = Mode::substring};
    break;
  default:
    return std::nullopt;
  }
  n.text_regex = !n.options.regex_entries;
  return n;
}

// The needs of two engines' matchers at once: candidates for either. Each mode's keys are
// among the next one's (exact, ancestors, dotted runs, substrings), and a glob's literal start
// and tail run, where a mode looks for them, are in any text the entry equals there. (Globs
// stay cheap in the widest mode: a substring index offers "model.layers.*.mlp.gate" only to
// names holding ".mlp.gate", not to every name to matchers that walk each ancestor.)
IndexNeeds
merge(IndexNeeds a, const IndexNeeds& b)
{
  EntryIndex::Options& o = a.options;
  o.mode = std::max(o.mode, b.options.mode);
  o.globs = o.globs || b.options.globs;
  o.case_insensitive = o.case_insensitive || b.options.case_insensitive;
  o.regex_entries = o.regex_entries || b.options.regex_entries;
  for (const std::string& m : b.options.leaf_markers) {
    if (std::find(o.leaf_markers.begin(), o.leaf_markers.end(), m) == o.leaf_markers.end()) {
      o.leaf_markers.push_back(m);
    }
  }
  if (o.reverse_marker.empty()) { // only vLLM's ModelOpt and FP8 matchers have one, "experts"
    o.reverse_marker = b.options.reverse_marker;
  }
  a.strip = a.strip || b.strip;
  a.vllm_split = a.vllm_split || b.vllm_split;
  a.mapped = a.mapped || b.mapped;
  a.canonical = a.canonical || b.canonical;
  a.text_regex = a.text_regex || b.text_regex;
  a.kimi = a.kimi || b.kimi;
  return a;
}

// Each entry of `excludes`, then every other spelling `needs` asks for where it differs.
std::shared_ptr<SharedIndex>
build_shared_index(const IndexNeeds& needs, const EntryList& excludes)
{
  std::deque<std::string> forms; // spellings that are not entries, kept while the index is built
  std::vector<EntryIndex::Spelling> spellings;
  spellings.reserve(excludes.size());
  const auto add_unwrapped = [&](std::string_view e, uint32_t i, bool text_only) {
    if (needs.strip && !e.starts_with("re:") && has_language_model_wrapper(e)) {
      std::string u = strip_language_model(e);
      if (u != e) {
        spellings.push_back({forms.emplace_back(std::move(u)), i, text_only});
      }
    }
  };
  for (uint32_t i = 0; i < excludes.size(); ++i) {
    const std::string_view e = excludes[i];
    const bool regex = e.starts_with("re:");
    spellings.push_back({e, i});
    if (regex && needs.options.regex_entries && needs.text_regex) {
      spellings.push_back({e, i, true});
    }
    add_unwrapped(e, i, false);
    if (needs.canonical && !regex) {
      std::string c = vlm_canonical(e);
      if (!c.empty() && c != e) {
        spellings.push_back({forms.emplace_back(std::move(c)), i});
      }
    }
    if (needs.kimi && !regex) {
      if (std::string k = kimi_sglang_mapped(e); k != e) {
        spellings.push_back({forms.emplace_back(std::move(k)), i});
      }
    }
    if (needs.vllm_split && e.size() <= k_longest_entry) {
      // vLLM reads these as text, "re:" or not.
      any_vllm_spelling(e, [&](std::string_view v) {
        if (v != e) {
          spellings.push_back({forms.emplace_back(v), i, true});
          add_unwrapped(forms.back(), i, true);
        }
        return false;
      });
    }
  }
  auto shared = std::make_shared<SharedIndex>();
  shared->index = EntryIndex(spellings, excludes.size(), needs.options);
  shared->strip = needs.strip;
  shared->mapped = needs.mapped;
  shared->canonical = needs.canonical;
  return shared;
}

// One engine's matchers over `shared`, for the list of `source`.
void
fill_list_indexes(ListIndexes& ix, const IndexNeeds& needs, std::shared_ptr<SharedIndex> shared,
                  const ConfigSource& source)
{
  const std::vector<uint32_t>* firsts = nullptr;
  if (needs.vllm_split) {
    expand_for_vllm(source.excludes, ix.expanded, ix.origin, ix.split);
    ix.first.assign(source.excludes.size() + 1, 0);
    for (const uint32_t o : ix.origin) {
      ++ix.first[o + 1];
    }
    std::partial_sum(ix.first.begin(), ix.first.end(), ix.first.begin());
    firsts = &ix.first;
    ix.whole = IndexedList(std::move(shared), ix.expanded, firsts);
  } else {
    ix.whole = IndexedList(std::move(shared), source.excludes, firsts);
  }
  ix.compiled = true;
  ix.shard = ix.whole; // a copy: its own answers
}

} // namespace

bool
share_list_index(Engine a, Engine b, const ConfigSource& source)
{
  return index_needs(a, source) && index_needs(b, source);
}

std::vector<CompiledList>
CompiledList::compile(std::span<const Engine> engines, const ConfigSource& source,
                      const ModelInfo* model, std::shared_ptr<const DynamicRules> dynamic)
{
  std::vector<std::optional<IndexNeeds>> needs;
  std::optional<IndexNeeds> all;
  for (const Engine engine : engines) {
    needs.push_back(index_needs(engine, source, model));
    if (needs.back()) {
      all = all ? merge(*all, *needs.back()) : *needs.back();
    }
  }
  const std::shared_ptr<SharedIndex> shared =
    all ? build_shared_index(*all, source.excludes) : nullptr;
  if (source.format != QuantFormat::gptq || source.dynamic.empty()) {
    dynamic = nullptr;
  } else if (dynamic == nullptr || !dynamic->built_from(source.dynamic)) {
    dynamic = std::make_shared<const DynamicRules>(source.dynamic);
  }
  std::vector<CompiledList> out;
  out.reserve(engines.size());
  for (const auto& n : needs) {
    CompiledList list;
    if (n) {
      fill_list_indexes(list.m_impl->indexes, *n, shared, source);
    }
    list.m_impl->shared = shared;
    list.m_impl->indexes.dynamic = dynamic;
    out.push_back(std::move(list));
  }
  return out;
}

CompiledList::CompiledList() : m_impl(std::make_unique<Impl>()) {}

CompiledList::CompiledList(Engine engine, const ConfigSource& source)
  : CompiledList(std::move(compile(std::span(&engine, 1), source).front()))
{
}

CompiledList::CompiledList(CompiledList&&) noexcept = default;
CompiledList& CompiledList::operator=(CompiledList&&) noexcept = default;
CompiledList::~CompiledList() = default;

bool
CompiledList::indexed() const
{
  return m_impl->indexes.compiled;
}

void
CompiledList::candidates(std::string_view name, std::vector<uint32_t>& out) const
{
  candidates(name, std::nullopt, out);
}

void
CompiledList::candidates(std::string_view name, std::optional<uint32_t> module,
                         std::vector<uint32_t>& out) const
{
  if (m_impl->indexes.compiled) {
    m_impl->shared->candidates(name, module, out);
  }
}

std::shared_ptr<const DynamicRules>
CompiledList::dynamic_rules(const ConfigSource& source) const
{
  const auto& rules = m_impl->indexes.dynamic;
  return rules != nullptr && rules->built_from(source.dynamic) ? rules : nullptr;
}

size_t
CompiledList::kept_modules() const
{
  return m_impl->indexes.compiled && m_impl->shared->kept ? m_impl->shared->kept->size() : 0;
}

void
CompiledList::keep_module_candidates(const Inventory& inventory)
{
  // A short list is tried entry by entry: decide() keeps nothing, and the slots (16 bytes a
  // module, zeroed: 4 MB for a million tensors) would be written for nothing.
  const ListIndexes& ix = m_impl->indexes;
  if (m_impl->shared && !m_impl->shared->kept && ix.compiled &&
      (ix.whole.use_index || ix.shard.use_index)) {
    m_impl->shared->kept = std::make_unique<KeptCandidates>(inventory);
  }
}

bool
entry_matches(Engine engine, QuantFormat format, std::string_view entry, std::string_view prefix,
              const ModelInfo* model)
{
  if (entry.size() > k_longest_entry) {
    return false;
  }
  switch (format) {
  case QuantFormat::modelopt:
    if (engine == Engine::vllm) {
      return any_vllm_spelling(entry,
                               [&](std::string_view e) { return modelopt_vllm_entry(e, prefix); });
    }
    if (engine == Engine::sglang && sglang_maps_entries(model)) {
      return modelopt_sglang_qwen_vl_entry(*model, entry, prefix);
    }
    return engine == Engine::sglang ? modelopt_sglang_entry(entry, prefix)
                                    : modelopt_trtllm_entry(entry, prefix);
  case QuantFormat::compressed_tensors:
    return ct_entry(engine, entry, prefix, nullptr, model);
  case QuantFormat::quark:
    return quark_entry(engine, entry, prefix, nullptr, model);
  case QuantFormat::bitsandbytes:
    // (No copy of the name for the models whose names the engines keep: this runs per entry
    // and module when a short list's entries are checked.)
    return bnb_names_differ(model) ? bnb_entry(entry, bnb_name(engine, model, prefix))
                                   : bnb_entry(entry, prefix);
  case QuantFormat::fp8:
    return fp8_entry(engine, entry, prefix);
  case QuantFormat::awq:
    return contains(prefix, entry);
  default:
    return false;
  }
}

bool
shard_entry_matches(Engine engine, QuantFormat format, std::string_view entry,
                    std::string_view shard, const ModelInfo* model)
{
  if (engine != Engine::sglang || format != QuantFormat::modelopt) {
    return entry_matches(engine, format, entry, shard, model);
  }
  if (entry.size() > k_longest_entry) {
    return false;
  }
  return sglang_maps_entries(model)
           ? modelopt_sglang_qwen_vl_read(*model, entry, shard, sglang_skipped_one)
           : modelopt_sglang_shard(entry, shard);
}

bool
is_unfused_mla_leaf(std::string_view leaf)
{
  return leaf == "q_b_proj" || leaf == "kv_b_proj";
}

bool
is_mla_leaf(std::string_view leaf)
{
  return std::find(k_mla_leaves.begin(), k_mla_leaves.end(), leaf) != k_mla_leaves.end();
}

} // namespace qcheck
