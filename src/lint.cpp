#include "qcheck/lint.hpp"

#include <algorithm>
#include <array>
#include <atomic>
#include <deque>
#include <thread>
#include <fmt/format.h>
#include <fmt/ranges.h>
#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <set>
#include <span>
#include <tuple>
#include <unordered_map>
#include <unordered_set>

#include "qcheck/json_text.hpp"
#include "qcheck/name_set.hpp"
#include "qcheck/parallel.hpp"
#include "qcheck/patterns.hpp"
#include "qcheck/regex.hpp"

namespace qcheck {

namespace {

RuleId
rule_for(CheckpointIssue issue)
{
  switch (issue) {
  case CheckpointIssue::no_weights:
    return RuleId::no_weights;
  case CheckpointIssue::index_unreadable:
    return RuleId::config_invalid;
  case CheckpointIssue::index_path_escapes:
    return RuleId::index_path_escapes;
  case CheckpointIssue::index_missing_file:
    return RuleId::index_missing_file;
  case CheckpointIssue::index_missing_tensor:
    return RuleId::index_missing_tensor;
  case CheckpointIssue::unindexed_tensors:
    return RuleId::unindexed_tensors;
  case CheckpointIssue::unindexed_shard:
    return RuleId::unindexed_shard;
  case CheckpointIssue::duplicate_tensor:
    return RuleId::duplicate_tensor;
  case CheckpointIssue::shard_not_regular:
    return RuleId::shard_not_regular;
  case CheckpointIssue::shard_unreadable:
  case CheckpointIssue::header_problem:
    return RuleId::shard_header;
  }
  return RuleId::shard_header;
}

std::string
regex_escape(std::string_view text)
{
  std::string out;
  for (char c : text) {
    if (std::string_view(".^$*+?()[]{}|\\").find(c) != std::string_view::npos) {
      out += '\\';
    }
    out += c;
  }
  return out;
}

// "model.language_model.layers.3.mlp.experts.0.up_proj" -> "model.language_model.layers.3"
std::string
group_key(std::string_view module)
{
  const size_t pos = module.find("layers.");
  if (pos != std::string_view::npos) {
    const size_t end = module.find('.', pos + 7);
    return std::string(module.substr(0, end));
  }
  const size_t dot = module.find('.');
  return std::string(module.substr(0, dot));
}

std::string
format_description(const ConfigSource& s)
{
  if (!s.algo.empty()) {
    return fmt::format("{} {}", s.method, s.algo);
  }
  return s.method;
}

// Whether a compressed-tensors block quantizes weights to 8 bits in every group (FP8, INT8):
// the layers then hold a `weight` parameter of that type, not packed ones.
bool
ct_unpacked(const ConfigSource& s)
{
  return s.format == QuantFormat::compressed_tensors && !s.groups.empty() &&
         std::all_of(s.groups.begin(), s.groups.end(),
                     [](const CtGroup& g) { return g.num_bits >= 8; });
}

// The error an engine prints when it allocates quantized parameters for a BF16 tensor.
std::string
engine_error(const ConfigSource& s)
{
  if (ct_unpacked(s)) {
    return "8-bit parameters receive BF16 values: no crash, garbage output";
  }
  switch (s.format) {
  case QuantFormat::modelopt:
    return s.algo.find("FP8") != std::string::npos
             ? "FP8 parameters receive BF16 values: no crash, garbage output"
             : "`RuntimeError: The size of tensor a (N) must match the size of tensor b (2N)`";
  case QuantFormat::compressed_tensors:
  case QuantFormat::gptq:
  case QuantFormat::auto_round:
  case QuantFormat::awq:
    return "`ValueError: There is no module or parameter named '<module>.weight'` (the layer "
           "holds packed parameters)";
  case QuantFormat::fp8:
    return "FP8 parameters receive BF16 values: no crash, garbage output";
  default:
    return "a shape or parameter-name mismatch at load";
  }
}

// What `engines` do with BF16 modules they build quantized, for QC101's message: "vLLM fails
// with ..." and the like. For the packed formats SGLang's model loaders index a fused layer's
// parameter directly (llama.py) or skip it silently (qwen3_5.py), and skip any other name they
// have no parameter for with a logged warning, where vLLM's refuse.
std::string
engines_outcome(const ConfigSource& s, const std::set<Engine>& engines)
{
  const bool packed = (s.format == QuantFormat::compressed_tensors && !ct_unpacked(s)) ||
                      s.format == QuantFormat::gptq || s.format == QuantFormat::auto_round ||
                      s.format == QuantFormat::awq;
  if (!packed || !engines.contains(Engine::sglang)) {
    return fmt::format("{} {} with {}", engines_text(engines),
                       engines.size() == 1 ? "fails" : "fail", engine_error(s));
  }
  constexpr std::string_view k_sglang =
    "SGLang has no parameter for the BF16 weight: depending on the model its loader stops with "
    "a `KeyError` or skips the weight (logging `Parameter <module>.weight not found in "
    "params_dict`, or silently), the packed layer left unloaded (garbage output)";
  std::set<Engine> others = engines;
  others.erase(Engine::sglang);
  if (others.empty()) {
    return std::string(k_sglang);
  }
  return fmt::format("{} {} with {}; {}", engines_text(others),
                     others.size() == 1 ? "fails" : "fail", engine_error(s), k_sglang);
}

// Two blocks whose lists every check reads alike: the same format and the same entries
// (config.json and hf_quant_config.json most often). What is decided or compiled for one
// serves the other.
bool
same_list(const ConfigSource& a, const ConfigSource& b)
{
  return a.format == b.format && a.excludes == b.excludes;
}

// Where a block's exclusion list is (or, when absent, the block itself).
std::string
list_pointer(const ConfigSource& s)
{
  return s.has_list ? fmt::format("{}/{}", s.pointer, escape_pointer_token(s.list_key)) : s.pointer;
}

// The index in the JSON list of s.excludes[index] (elements of another type are left out).
size_t
json_index(const ConfigSource& s, size_t index)
{
  return index < s.positions.size() ? s.positions[index] : index;
}

std::string
entry_pointer(const ConfigSource& s, size_t index)
{
  return s.has_list ? fmt::format("{}/{}", list_pointer(s), json_index(s, index)) : list_pointer(s);
}

struct Miss
{
  std::set<Engine> engines;
  std::vector<std::string> details;
  std::set<std::string> entries;        // list entries that decided it
  std::set<Engine> unremovable;         // engines whose choice no entry's removal changes
  std::set<std::string> remedies;       // what lifts an override that decided it (config keys)
  std::set<Engine> remedied;            // the engines such a remedy concerns
  const ConfigSource* source = nullptr; // the block holding `entries`
};

class Linter
{
public:
  Linter(const Checkpoint& checkpoint, const Inventory& inventory, const Declaration& declaration,
         const LintOptions& options)
    : m_checkpoint(checkpoint), m_inventory(inventory), m_declaration(declaration),
      m_options(options), m_drafts(locate_drafts(declaration.model, checkpoint, inventory))
  {
  }

  // The largest tables left after run(), each engine's layers and decisions, moved out: freeing
  // them takes a run on 10^6 tensors about a millisecond, which a caller that exits soon after
  // need not spend.
  std::shared_ptr<const void> take_tables()
  {
    struct Tables
    {
      std::map<Engine, std::vector<EngineLayer>> layers;
      std::map<Engine, std::vector<Decision>> decisions;
    };
    auto tables = std::make_shared<Tables>();
    tables->layers = std::move(m_layers);
    tables->decisions = std::move(m_decisions);
    return tables;
  }

  Report run()
  {
    input_problems();
    divergence();
    drafts();
    prepare_engines();
    // Two strands that share only what they read (prepare_engines() left every engine's layers
    // in m_layers: layers_for() adds none): the engines' findings, and the verdicts on the
    // lists' entries (with the experts each list names), whose findings follow.
    std::vector<DecidedList> decided;
    // A patch's verification (decisions_only) has no second strand: no thread for it. Else the
    // verdicts, the longer strand, are task 0, taken first: when the kept thread wakes late, the
    // calling thread has started them and the kept thread still takes the findings beside them.
    const bool verdicts = !m_options.decisions_only;
    run_tasks(verdicts ? 2 : 1, thread_count(m_options.threads), [&](size_t task) {
      if (verdicts && task == 0) {
        decided = decide_lists();
        count_listed_experts();
      } else {
        engine_findings();
      }
    });
    if (!m_options.decisions_only) {
      other_checks(decided);
    }
    attach_shards();
    order_by_severity(m_report.findings);
    return std::move(m_report);
  }

private:
  struct DecidedList; // what decide_entries() found about one list

  // What each selected engine decides against what is stored, reported.
  void engine_findings()
  {
    for (Engine engine : m_options.engines) {
      check_engine(engine);
    }
    find_quantized_embeddings();
    emit_undeclared();
    if (!m_options.decisions_only) {
      emit_stored_mixtures();
    }
  }

  // What a patch's verification skips (LintOptions::decisions_only), after decide_lists() and
  // count_listed_experts().
  void other_checks(const std::vector<DecidedList>& decided)
  {
    write_entries(decided);
    release_list_indexes();
    layouts();
    mixed_precision();
    partial_experts();
    m_known = {};
    m_known_modules.reset();
    m_known_entries.clear();
    dynamic_keys();
    block_names();
    fused_draft_shards();
  }

  static Finding make_finding(RuleId id, std::string file, std::string message)
  {
    Finding f;
    f.rule = id;
    f.severity = rule(id).severity;
    f.file = std::move(file);
    f.message = std::move(message);
    if (!f.file.empty()) {
      f.files.push_back(f.file);
    }
    return f;
  }

  Finding& add(RuleId id, std::string file, std::string message)
  {
    return add_to(m_report.findings, id, std::move(file), std::move(message));
  }

  static Finding& add_to(std::vector<Finding>& out, RuleId id, std::string file,
                         std::string message)
  {
    return out.emplace_back(make_finding(id, std::move(file), std::move(message)));
  }

  // A message that begins with the file's path under the folder as given ("./m/x.json: ..."):
  // with its name in the folder instead, so that `m` and `./m` give one fingerprint.
  std::string folder_relative(const std::string& file, const std::string& message) const
  {
    const std::string path = join_path(m_checkpoint.root, file);
    if (!file.empty() && path != file && message.starts_with(path + ":")) {
      return file + message.substr(path.size());
    }
    return message;
  }

  void input_problems()
  {
    for (const auto& p : m_checkpoint.problems) {
      Finding& f = add(rule_for(p.issue), p.file, folder_relative(p.file, p.message));
      if (!p.tensor.empty()) {
        f.pointer = p.file.ends_with(".json")
                      ? fmt::format("/weight_map/{}", escape_pointer_token(p.tensor))
                      : fmt::format("/{}", escape_pointer_token(p.tensor));
      }
      if (p.is_warning) {
        f.severity = Severity::warning;
      }
    }
    for (const auto& p : m_declaration.problems) {
      Finding& f = add(p.issue == ConfigIssue::unknown_method ? RuleId::unknown_quant_method
                                                              : RuleId::config_invalid,
                       p.file, folder_relative(p.file, p.message));
      if (p.issue == ConfigIssue::duplicate_key || p.issue == ConfigIssue::unread_list) {
        f.severity = Severity::warning;
      }
      if (!p.pointer.empty()) {
        f.pointer = p.pointer;
      }
    }
  }

  void divergence()
  {
    const ConfigSource* config = m_declaration.find("config.json");
    const ConfigSource* hf = m_declaration.find("hf_quant_config.json");
    if (!config || !hf || config->format != QuantFormat::modelopt ||
        hf->format != QuantFormat::modelopt) {
      return;
    }
    if (!config->algo.empty() && !hf->algo.empty() && config->algo != hf->algo) {
      Finding& f = add(RuleId::config_divergence, "hf_quant_config.json",
                       fmt::format("quant_algo is {} here but {} in config.json; TensorRT-LLM "
                                   "reads this file, vLLM and SGLang read config.json",
                                   hf->algo, config->algo));
      f.pointer = fmt::format("{}/quant_algo", hf->pointer);
      f.files.push_back("config.json");
    }
    if (config->excludes == hf->excludes) {
      return;
    }
    const auto distinct = [](const EntryList& list) {
      std::vector<std::string_view> out(list.begin(), list.end());
      std::sort(out.begin(), out.end());
      out.erase(std::unique(out.begin(), out.end()), out.end());
      return out;
    };
    const std::vector<std::string_view> a = distinct(config->excludes);
    const std::vector<std::string_view> b = distinct(hf->excludes);
    if (a != b) {
      std::vector<std::string_view> only_config, only_hf;
      std::set_difference(a.begin(), a.end(), b.begin(), b.end(), std::back_inserter(only_config));
      std::set_difference(b.begin(), b.end(), a.begin(), a.end(), std::back_inserter(only_hf));
      Finding& f = add(RuleId::config_divergence, "hf_quant_config.json",
                       fmt::format("exclude_modules differs from config.json's {}: {} entr{} only "
                                   "in config.json, {} only here",
                                   config->list_key, only_config.size(),
                                   only_config.size() == 1 ? "y" : "ies", only_hf.size()));
      f.files.push_back("config.json");
      f.pointer = list_pointer(*hf);
      for (const auto& e : only_config) {
        f.details.push_back(fmt::format("only in config.json: '{}'", e));
      }
      for (const auto& e : only_hf) {
        f.details.push_back(fmt::format("only in hf_quant_config.json: '{}'", e));
      }
      f.suggested_entries.assign(only_config.begin(), only_config.end());
      f.fix = "make both lists identical";
    }
  }

  bool quantized_declared() const
  {
    return std::any_of(m_declaration.sources.begin(), m_declaration.sources.end(),
                       [](const ConfigSource& s) { return s.format != QuantFormat::unknown; });
  }

  void drafts()
  {
    if (!m_drafts.missing.empty() && !m_checkpoint.tensors.empty()) {
      std::string key = m_declaration.model.mtp_key;
      std::replace(key.begin(), key.end(), '.', '/');
      const bool one = m_drafts.missing_count == 1;
      const std::string listed =
        m_drafts.missing_count > m_drafts.missing.size()
          ? fmt::format("{}, ... ({} in all)", fmt::join(m_drafts.missing, ", "),
                        m_drafts.missing_count)
          : fmt::format("{}", fmt::join(m_drafts.missing, ", "));
      const std::string where =
        m_drafts.unindexed_files.empty()
          ? "is stored"
          : fmt::format("is in a file the index names ({} hold{} {}, and loaders skip files the "
                        "index does not name)",
                        fmt::join(m_drafts.unindexed_files, ", "),
                        m_drafts.unindexed_files.size() == 1 ? "s" : "", one ? "it" : "them");
      Finding& f = add(
        RuleId::mtp_missing, "config.json",
        fmt::format("{} = {} declares draft layer{} {} but no tensor of {} {}; vLLM stops with "
                    "`MTP speculative decoding layer {} weights missing from checkpoint`",
                    m_declaration.model.mtp_key, m_declaration.model.num_mtp_layers, one ? "" : "s",
                    listed, one ? "it" : "them", where, m_drafts.missing.front()));
      f.pointer = "/" + key;
      f.files.insert(f.files.end(), m_drafts.unindexed_files.begin(),
                     m_drafts.unindexed_files.end());
    }
    if (!quantized_declared()) {
      return;
    }
    for (const auto& root : m_drafts.roots) {
      // The draft's projections: the modules at or below the root that no earlier root holds.
      size_t quantized = 0, unquantized = 0;
      const auto count = [&](const Module& m) {
        if (*m_drafts.root_of(m.name) == root &&
            (m.role == ModuleRole::linear || m.role == ModuleRole::expert ||
             m.role == ModuleRole::fused_experts)) {
          (m.storage == Storage::quantized ? quantized : unquantized) += 1;
        }
      };
      if (const int64_t at = m_inventory.find(root); at >= 0) {
        count(m_inventory.modules[static_cast<size_t>(at)]);
      }
      for (const Module& m : m_inventory.under(root)) {
        count(m);
      }
      // A mix is legal where every engine builds each module as declared; SGLang's Qwen3.5
      // Quark path does not: any mtp.* exclusion makes it build the whole drafter BF16.
      const ConfigSource* sglang = source_for(m_declaration, Engine::sglang);
      const std::string& type = m_declaration.model.text_model_type.empty()
                                  ? m_declaration.model.model_type
                                  : m_declaration.model.text_model_type;
      const bool sglang_all_or_nothing =
        sglang && sglang->format == QuantFormat::quark && root == "mtp" &&
        (type.starts_with("qwen3_5") || type.starts_with("qwen3_6")) &&
        std::any_of(sglang->excludes.begin(), sglang->excludes.end(),
                    [](std::string_view e) { return e.starts_with("mtp."); });
      if (quantized > 0 && unquantized > 0 && sglang_all_or_nothing) {
        add(RuleId::mtp_partially_quantized, "",
            fmt::format("draft '{}' stores {} projection{} quantized and {} unquantized; SGLang "
                        "builds the whole Qwen3.5 drafter BF16 when any mtp.* entry is excluded",
                        root, quantized, quantized == 1 ? "" : "s", unquantized));
      }
    }
  }

  // QC125: neither vLLM nor SGLang has a method for an FP8 token embedding (TensorRT-LLM is not
  // modelled). Other embeddings may load: vLLM's compressed-tensors builds weight-only INT ones a
  // group targets, ModelOpt NVFP4 ones under nvfp4_embed. A draft's own embedding counts where
  // the engine loads it: vLLM's DeepSeek-style drafters read the first draft layer's
  // (model.layers.N, N = num_hidden_layers) as the shared model.embed_tokens and skip the later
  // ones'; SGLang's NextN loaders skip it for the target's.
  void find_quantized_embeddings()
  {
    std::vector<Engine> engines;
    for (const Engine engine : m_options.engines) {
      const ConfigSource* source = source_for(m_declaration, engine);
      if (engine != Engine::trtllm && source && engine_reads(engine, source->format)) {
        engines.push_back(engine);
      }
    }
    if (engines.empty()) {
      return;
    }
    const std::string first_draft =
      m_declaration.model.num_hidden_layers
        ? fmt::format("model.layers.{}", *m_declaration.model.num_hidden_layers)
        : std::string();
    for (const Module& m : m_inventory.modules) {
      if (m.role != ModuleRole::embedding || m.storage != Storage::quantized ||
          (m.family != QuantFamily::fp8_per_tensor && m.family != QuantFamily::fp8_block) ||
          !is_token_embedding(m.name)) {
        continue;
      }
      const std::string* draft = m_drafts.root_of(m.name);
      for (const Engine engine : engines) {
        if (draft == nullptr ||
            (engine == Engine::vllm && !first_draft.empty() && *draft == first_draft)) {
          m_quantized_embeddings[std::string(m.name)].insert(engine);
        }
      }
    }
  }

  // Those of `entries` that `source`'s list holds as written.
  template<typename Strings>
  std::vector<std::string_view> listed_entries(const ConfigSource& source, const Strings& entries)
  {
    auto& listed = m_listed[&source];
    if (listed.empty()) {
      listed.insert(source.excludes.begin(), source.excludes.end());
    }
    std::vector<std::string_view> out;
    for (const auto& e : entries) {
      if (listed.contains(std::string_view(e))) {
        out.emplace_back(e);
      }
    }
    return out;
  }

  void check_engine(Engine engine)
  {
    const ConfigSource* source = source_for(m_declaration, engine);
    if (!source || !engine_reads(engine, source->format)) {
      return;
    }
    for (const EngineLayer& layer : layers_for(engine)) {
      const size_t quantized = layer.quantized;
      const bool all_quantized = quantized == layer.modules.size();
      const bool none_quantized = quantized == 0;
      if (!all_quantized && !none_quantized) {
        // One finding per group of modules, whatever each engine calls the layer.
        std::vector<uint32_t> key = layer.modules;
        std::sort(key.begin(), key.end());
        m_mixed.emplace(std::move(key), layer);
      }
      const Decision& d =
        m_decisions.at(engine)[static_cast<size_t>(&layer - layers_for(engine).data())];
      for (const auto& e : d.errors) {
        m_unevaluable[{e, source}].insert(engine);
      }
      // This engine's part in a QC103 on the layer.
      const auto disagree = [&](ShardDisagreement& into, std::string detail) {
        into.engines.insert(engine);
        into.details.push_back(std::move(detail));
        for (const uint32_t i : layer.modules) {
          into.modules.insert(m_inventory.modules[i].name);
        }
      };
      // (An engine that builds the layer unquantized whatever the list says, by an override,
      // reads no shard apart.)
      if (d.shards_disagree && d.override_note.empty() && d.forced_note.empty()) {
        ShardDisagreement& split = m_shard_disagree[layer.prefix];
        split.moe = layer.kind == LayerKind::fused_moe;
        disagree(split,
                 fmt::format("{}: {} ({})", display_name(engine), d.shard_detail, layer.prefix));
        // Stored quantized, the shards agree once the entries that split them are gone.
        const auto unlistable = [&](uint32_t i) {
          return draft_names_unlistable(engine, m_declaration.model, m_inventory,
                                        m_inventory.modules[i].name);
        };
        // Each entry that catches a shard the first ones caught, not only the first.
        std::vector<std::string_view> caught;
        for (const std::string_view shard : layer.shards) {
          const size_t from = caught.size();
          bool excluded = false; // by one of d.shard_entries
          for_each_entry_matching(engine, *source, shard, [&](std::string_view e) {
            caught.push_back(e);
            excluded = excluded || std::find(d.shard_entries.begin(), d.shard_entries.end(), e) !=
                                     d.shard_entries.end();
          });
          if (!excluded) {
            caught.resize(from);
          }
        }
        caught.insert(caught.end(), d.shard_entries.begin(), d.shard_entries.end());
        const std::vector<std::string_view> entries = listed_entries(*source, caught);
        if (!all_quantized || entries.empty() ||
            (layer.draft && std::any_of(layer.modules.begin(), layer.modules.end(), unlistable))) {
          split.removable = false;
        } else {
          split.entries.insert(entries.begin(), entries.end());
        }
      }
      if (!d.fused_name_settings.empty()) {
        disagree(m_fused_name_settings[layer.prefix], d.fused_name_settings);
      }
      // Formatted only for the layers reported.
      const auto detail = [&](std::string_view why) {
        return fmt::format("{} checks '{}': {}", display_name(engine), layer.prefix, why);
      };
      if (builds_plain_linear(engine, source->format, layer) && quantized > 0) {
        for (uint32_t i : layer.modules) {
          // A name several draft layers share (SGLang's model.eh_proj) holds BF16 ones too.
          if (m_inventory.modules[i].storage == Storage::quantized) {
            m_plain[std::string(m_inventory.modules[i].name)].engines.insert(engine);
          }
        }
        continue;
      }
      if (none_quantized && d.quantized && !d.inferred) {
        // One line for the layer's modules (a draft's fused MoE layer holds thousands).
        const auto reported = static_cast<uint32_t>(m_reported.size());
        m_reported.push_back({engine, layer.prefix, detail(d.reason)});
        for (uint32_t i : layer.modules) {
          m_undeclared.emplace_back(i, reported);
        }
        if (!layer.namespace_note.empty()) {
          m_notes[layer.draft_root].insert(layer.namespace_note);
        }
        m_source_for[engine] = source;
      } else if (all_quantized && !d.quantized && (!d.inferred || !d.override_note.empty())) {
        // (An inferred decision follows the stored dtypes: only an override turns it.)
        const std::string reported = detail(
          !d.override_note.empty() ? d.override_note
          : d.forced_note.empty()  ? d.reason
                                   : fmt::format("{}; without it, {}", d.reason, d.forced_note));
        // The entries that excluded the layer and are in the list as written: for a fused
        // layer each shard's, as one left in the list keeps the shards disagreeing (QC103).
        std::vector<std::string_view> entries;
        if (d.override_note.empty()) {
          entries.assign(d.shard_entries.begin(), d.shard_entries.end());
          if (!d.matched.empty()) {
            entries.push_back(d.matched);
          }
          // Excluded by its prefix: every entry that matches it excludes it, not only the first
          // (two experts named under vLLM's containment rule): each must go.
          if (d.shard_entries.empty() && !d.matched.empty()) {
            for_each_entry_matching(engine, *source, layer.prefix,
                                    [&](std::string_view e) { entries.push_back(e); });
          }
          entries = listed_entries(*source, entries);
        }
        for (uint32_t i : layer.modules) {
          const std::string_view module = m_inventory.modules[i].name;
          auto& miss = m_excluded[std::string(module)];
          miss.engines.insert(engine);
          // A draft module under a main module's name: removing the entry would quantize the
          // main one too (SGLang's Qwen3-Next MTP).
          if (!d.override_remedy.empty()) {
            miss.remedies.insert(d.override_remedy);
            miss.remedied.insert(engine);
          }
          if (!d.override_note.empty() || !d.forced_note.empty() ||
              (layer.draft &&
               draft_names_unlistable(engine, m_declaration.model, m_inventory, module))) {
            miss.unremovable.insert(engine);
          } else if (!entries.empty()) {
            miss.entries.insert(entries.begin(), entries.end());
            miss.source = source;
          }
          miss.details.push_back(reported);
        }
      } else if (none_quantized && !d.override_note.empty()) {
        Override& o = m_overrides[d.override_note];
        o.engines.insert(engine);
        o.source = source;
        // A draft layer under a main layer's name is shown by its checkpoint modules.
        if (layer.shadows_main) {
          for (uint32_t i : layer.modules) {
            o.modules.insert(std::string(m_inventory.modules[i].name));
          }
        } else {
          o.modules.insert(layer.prefix);
        }
      }
      if (d.inferred && engine == Engine::vllm) {
        m_inferred = true;
      }
    }
  }

  // Calls `f` with each entry of `source`'s list that `engine` matches against `name` (the
  // candidates of the list compiled for it, when there is one; else every entry).
  template<typename F>
  void for_each_entry_matching(Engine engine, const ConfigSource& source, std::string_view name,
                               const F& f) const
  {
    // The lists prepare_engines() compiled: the verdicts strand, running beside this one,
    // adds to m_compiled.
    const auto it = m_prepared_lists.find({engine, &source});
    const CompiledList* list = it != m_prepared_lists.end() ? it->second : nullptr;
    const auto try_entry = [&](uint32_t i) {
      if (entry_matches(engine, source.format, source.excludes[i], name, &m_declaration.model)) {
        f(source.excludes[i]);
      }
    };
    if (list != nullptr && list->indexed()) {
      std::vector<uint32_t> found;
      list->candidates(name, found);
      for (const uint32_t i : found) {
        try_entry(i);
      }
      return;
    }
    for (uint32_t i = 0; i < source.excludes.size(); ++i) {
      try_entry(i);
    }
  }

  // SGLang reads Quark entries as exact names or "re:" regexes: a glob of its list that would
  // name one of `modules` (up to 256 of them) as a glob, said so; empty when none does. A hint
  // with a budget of glob matches per run (m_glob_note_budget), so thousands of globs against
  // thousands of findings cost milliseconds, not seconds.
  std::string sglang_quark_glob_note(const std::set<Engine>& engines,
                                     const std::vector<std::string>& modules)
  {
    const ConfigSource* s = source_for(m_declaration, Engine::sglang);
    if (!engines.contains(Engine::sglang) || !s || s->format != QuantFormat::quark) {
      return {};
    }
    constexpr size_t k_modules_tried = 256;
    const size_t tried = std::min(modules.size(), k_modules_tried);
    for (const auto& e : s->excludes) {
      const std::string_view entry = e;
      if (entry.starts_with("re:") || entry.size() > k_longest_entry || !has_glob_chars(entry)) {
        continue;
      }
      for (size_t i = 0; i < tried; ++i) {
        if (m_glob_note_budget == 0) {
          return {};
        }
        --m_glob_note_budget;
        if (fnmatch(entry, modules[i])) {
          return fmt::format("'{}' would name '{}' as a glob, but SGLang reads Quark entries as "
                             "exact names or \"re:\" regexes",
                             entry, modules[i]);
        }
      }
    }
    return {};
  }

  void emit_undeclared()
  {
    // Each module's layers together (in module order, which is name order), each module's in
    // the order the engines were checked; then grouped by draft root or layer.
    std::stable_sort(m_undeclared.begin(), m_undeclared.end(),
                     [](const auto& a, const auto& b) { return a.first < b.first; });
    struct Group
    {
      std::set<Engine> engines;                    // that fail
      std::vector<std::pair<size_t, size_t>> runs; // a module's stretch of m_undeclared each
    };
    std::map<std::string, Group> groups;
    for (size_t begin = 0, end = 0; begin < m_undeclared.size(); begin = end) {
      const uint32_t module = m_undeclared[begin].first;
      end = begin + 1;
      while (end < m_undeclared.size() && m_undeclared[end].first == module) {
        ++end;
      }
      const std::string_view name = m_inventory.modules[module].name;
      const std::string* root = m_drafts.root_of(name);
      Group& group = groups[root ? *root : group_key(name)];
      for (size_t k = begin; k < end; ++k) {
        group.engines.insert(m_reported[m_undeclared[k].second].engine);
      }
      group.runs.emplace_back(begin, end);
    }
    for (const auto& [where, group] : groups) {
      const std::set<Engine>& engines = group.engines;
      const auto module_of = [&](const std::pair<size_t, size_t>& run) -> const Module& {
        return m_inventory.modules[m_undeclared[run.first].first];
      };
      std::vector<std::string> modules;
      modules.reserve(group.runs.size());
      for (const auto& run : group.runs) {
        modules.emplace_back(module_of(run).name);
      }
      const bool is_draft = m_drafts.root_of(modules.front()) != nullptr;
      // Modules outside any layer grouped under "model": the message names their deepest
      // common ancestor instead (a VLM tower saved as model.visual.X).
      std::string_view label = where;
      if (!is_draft && where == "model") {
        std::string_view common = modules.front();
        for (const std::string& m : modules) {
          const auto end = std::mismatch(common.begin(), common.end(), m.begin(), m.end()).first;
          common = common.substr(0, static_cast<size_t>(end - common.begin()));
        }
        // The common text up to a whole component boundary of every module, above each one.
        const size_t dot = common.rfind('.');
        const size_t cut = std::all_of(modules.begin(), modules.end(),
                                       [&](const std::string& m) {
                                         return m.size() > common.size() && m[common.size()] == '.';
                                       })
                             ? common.size()
                             : dot;
        if (cut != std::string_view::npos && cut > where.size()) {
          label = common.substr(0, cut);
        }
      }
      const ConfigSource& source = *m_source_for.at(*engines.begin());
      size_t tensors = 0;
      // Shards by index (their files sort as the shards do), dtypes as viewed: a draft layer
      // holds thousands of tensors, and copying each one's file name cost milliseconds.
      std::vector<bool> in_shard(m_checkpoint.shards.size());
      std::set<std::string_view> dtypes;
      for (const auto& run : group.runs) {
        const Module& m = module_of(run);
        tensors += m.tensors.size();
        for (uint32_t t : m.tensors) {
          in_shard[m_checkpoint.shard_index(m_checkpoint.tensors[t])] = true;
          dtypes.insert(m_checkpoint.tensors[t].info->dtype_text());
        }
      }
      std::vector<std::string> files;
      for (size_t s = 0; s < in_shard.size(); ++s) {
        if (in_shard[s]) {
          files.push_back(m_checkpoint.shards[s].file);
        }
      }
      std::vector<std::string> list_files;
      for (const auto& s : m_declaration.sources) {
        if (s.format == source.format) {
          list_files.push_back(s.file);
        }
      }
      Finding& f =
        add(RuleId::undeclared_unquantized, source.file,
            fmt::format("{}{}: {} module{} ({} tensor{}, {}) stored unquantized but declared {} "
                        "quantized; {}",
                        is_draft ? "MTP/NextN draft " : "", label, modules.size(),
                        modules.size() == 1 ? "" : "s", tensors, tensors == 1 ? "" : "s",
                        fmt::join(dtypes, "/"), format_description(source),
                        engines_outcome(source, engines)));
      f.modules = std::move(modules);
      f.pointer = list_pointer(source);
      f.engines.assign(engines.begin(), engines.end());
      f.files = list_files;
      f.files.insert(f.files.end(), files.begin(), files.end());
      std::vector<bool> reported(m_reported.size()); // each layer's line is looked at once
      std::set<std::string_view> seen;               // views m_reported's details
      for (const auto& [begin, end] : group.runs) {
        for (size_t k = begin; k < end; ++k) {
          const uint32_t r = m_undeclared[k].second;
          if (!reported[r]) {
            reported[r] = true;
            if (seen.insert(m_reported[r].detail).second && seen.size() <= 6) {
              f.details.push_back(m_reported[r].detail);
            }
          }
        }
      }
      if (seen.size() > 6) {
        f.details.push_back(fmt::format("... and {} more engine prefix{}", seen.size() - 6,
                                        seen.size() - 6 == 1 ? "" : "es"));
      }
      for (const auto& note : m_notes[where]) {
        f.details.push_back(note);
      }
      if (std::string note = sglang_quark_glob_note(engines, f.modules); !note.empty()) {
        f.details.push_back(std::move(note));
      }
      suggest(f, source, where, is_draft, group.runs);
    }
    for (const auto& [module, miss] : m_excluded) {
      // No entry caught it: the engine leaves it unquantized by its own rule (no target matches
      // an output head, a hard-coded override, a config key), which the details name.
      const bool by_entry = !miss.entries.empty();
      Finding& f =
        add(RuleId::excluded_but_quantized, "",
            fmt::format("'{}' is stored quantized but {} {}", module, engines_text(miss.engines),
                        by_entry ? (miss.engines.size() == 1 ? "excludes it" : "exclude it")
                                 : (miss.engines.size() == 1 ? "builds it unquantized"
                                                             : "build it unquantized")));
      f.modules = {module};
      f.engines.assign(miss.engines.begin(), miss.engines.end());
      f.details = miss.details;
      f.suggested_entries.assign(miss.entries.begin(), miss.entries.end());
      if (miss.source) {
        f.file = miss.source->file;
        f.pointer = list_pointer(*miss.source);
      }
      std::set<Engine> removable;
      std::set_difference(miss.engines.begin(), miss.engines.end(), miss.unremovable.begin(),
                          miss.unremovable.end(), std::inserter(removable, removable.end()));
      // SGLang's ModelOpt reading of another layer's MLA projection entry: "X*" keeps X's own.
      const bool mla_elsewhere =
        miss.source != nullptr && miss.source->format == QuantFormat::modelopt &&
        !miss.entries.empty() && miss.unremovable.empty() &&
        std::all_of(miss.entries.begin(), miss.entries.end(), [&](const std::string& e) {
          const std::string_view leaf = leaf_of(e);
          return !has_glob_chars(e) && is_unfused_mla_leaf(leaf) &&
                 !std::string_view(module).starts_with(e.substr(0, e.size() - leaf.size()));
        });
      const auto starred = [&] {
        std::vector<std::string> out;
        for (const std::string& e : miss.entries) {
          out.push_back(fmt::format("'{}*'", e));
        }
        return out;
      };
      // A remedy is offered when it concerns every engine that fails.
      f.fix = mla_elsewhere
                ? fmt::format("spell {} as {}: SGLang reads an entry ending in an MLA projection "
                              "as that projection in every layer; or store the module unquantized",
                              fmt::join(miss.entries, ", "), fmt::join(starred(), ", "))
              : miss.entries.empty() && !miss.remedies.empty() && miss.remedied == miss.engines
                ? fmt::format("store the module unquantized, or {}; no list entry can change the "
                              "engine's choice",
                              fmt::join(miss.remedies, ", or "))
              : miss.entries.empty()
                ? "store the module unquantized; no list entry can change the engine's choice"
              : miss.unremovable.empty()
                ? fmt::format("remove {} from the list (qcheck fix --remove-excluding), or store "
                              "the module unquantized",
                              fmt::join(miss.entries, ", "))
                : fmt::format("store the module unquantized (no list entry changes {}'s "
                              "choice), or, for {} alone, remove {} from the list (qcheck fix "
                              "--remove-excluding)",
                              engines_text(miss.unremovable), engines_text(removable),
                              fmt::join(miss.entries, ", "));
    }
    for (const auto& [module, miss] : m_plain) {
      Finding& f =
        add(RuleId::draft_plain_quantized, "",
            fmt::format("draft projection '{}' is stored quantized, but {} build{} it as a plain "
                        "nn.Linear that cannot load packed weights",
                        module, engines_text(miss.engines), miss.engines.size() == 1 ? "s" : ""));
      f.modules = {module};
      f.engines.assign(miss.engines.begin(), miss.engines.end());
      f.fix = "store the draft projection unquantized (BF16)";
    }
    for (const auto& [module, engines] : m_quantized_embeddings) {
      Finding& f = add(RuleId::quantized_embedding, "",
                       fmt::format("token embedding '{}' is stored FP8, but {} build{} it "
                                   "unquantized and cannot load it",
                                   module, engines_text(engines), engines.size() == 1 ? "s" : ""));
      f.modules = {module};
      f.engines.assign(engines.begin(), engines.end());
      f.fix = "store the embedding unquantized (BF16) and add it to the ignore list";
    }
    for (const auto& [note, o] : m_overrides) {
      // Located at the list that leaves the modules out: the exclusion goes there.
      Finding& f = add(RuleId::engine_override, o.source->file,
                       fmt::format("{} load{} only because {}", fmt::join(o.modules, ", "),
                                   o.modules.size() == 1 ? "s" : "", note));
      f.pointer = list_pointer(*o.source);
      f.modules.assign(o.modules.begin(), o.modules.end());
      f.engines.assign(o.engines.begin(), o.engines.end());
      f.fix = "declare the exclusion so every engine agrees";
    }
    // A QC103's engines, modules and details; located at the block's list: the fix goes there,
    // and the identity (fingerprint()) differs from a stored mixture's QC103 on the same modules.
    const auto place = [&](Finding& f, const ShardDisagreement& miss, const ConfigSource* s) {
      f.details = miss.details;
      f.engines.assign(miss.engines.begin(), miss.engines.end());
      f.modules.assign(miss.modules.begin(), miss.modules.end());
      if (s != nullptr) {
        f.file = s->file;
        f.pointer = list_pointer(*s);
      }
    };
    for (const auto& [prefix, miss] : m_shard_disagree) {
      const ConfigSource* s = source_for(m_declaration, *miss.engines.begin());
      const bool ct =
        s && (s->format == QuantFormat::compressed_tensors || s->format == QuantFormat::quark);
      const bool auto_round = s && s->format == QuantFormat::auto_round;
      const bool gptq = s && s->format == QuantFormat::gptq; // modules_in_block_to_quantize
      // Each format's own error (AutoRound: get_layer_config in vLLM's INC and SGLang).
      const std::string error =
        ct ? fmt::format("`Found a different quantization schemes for ... in {}`", prefix)
        : !auto_round
          ? fmt::format("`Detected some but not all shards of {} are quantized`", prefix)
        : miss.moe
          ? fmt::format("`Fused MoE layer '{}' requires consistent quant config for all "
                        "sub-layers`",
                        prefix)
          : fmt::format("`Fused module '{}' requires consistent quant config for [...]`", prefix);
      Finding& f =
        add(RuleId::fused_shards_disagree, "",
            fmt::format("the shards of fused layer '{}' are not {} alike; {} stop{} "
                        "with {}",
                        prefix,
                        auto_round ? "configured"
                        : gptq     ? "listed"
                                   : "excluded",
                        engines_text(miss.engines), miss.engines.size() == 1 ? "s" : "", error));
      place(f, miss, s);
      if (miss.removable && !miss.entries.empty() && s != nullptr && !auto_round) {
        // Every shard is stored quantized: listing none is the remedy.
        f.suggested_entries.assign(miss.entries.begin(), miss.entries.end());
        f.fix = fmt::format("every shard is stored quantized: remove {} from the list (qcheck fix "
                            "--remove-excluding)",
                            fmt::join(miss.entries, ", "));
      } else {
        f.fix = auto_round ? "give every shard of the fused layer the same bits, group_size and "
                             "sym in extra_config"
                : gptq ? "name every shard of the fused layer in modules_in_block_to_quantize, or "
                         "none"
                       : "list every shard of the fused layer, or none";
      }
    }
    for (const auto& [prefix, miss] : m_fused_name_settings) {
      const ConfigSource* s = source_for(m_declaration, *miss.engines.begin());
      Finding& f =
        add(RuleId::fused_shards_disagree, "",
            fmt::format("{} read{} fused layer '{}' by its name, with bits, group_size or "
                        "sym other than its shards': the layer it allocates does not match "
                        "the packed weights",
                        engines_text(miss.engines), miss.engines.size() == 1 ? "s" : "", prefix));
      place(f, miss, s);
      f.fix =
        fmt::format("key '{}' in extra_config with its shards' bits, group_size and sym", prefix);
    }
    for (const auto& [key, engines] : m_unevaluable) {
      const auto& [error, s] = key;
      using Where = Unevaluable::Where;
      Finding& f = add(RuleId::unevaluable_entry, s->file,
                       fmt::format("cannot evaluate {}'{}' exactly ({}); modules it was meant "
                                   "to match are treated as unmatched",
                                   error.where == Where::dynamic_key ? "dynamic key "
                                   : error.where == Where::target
                                     ? fmt::format("target of config group {} ", error.group)
                                     : "",
                                   clipped(error.entry), error.problem));
      f.engines.assign(engines.begin(), engines.end());
      // At the entry where the list holds it as written (an entry an engine renames before
      // matching is not): else at the list. Identified by its text, not its index (which a
      // patch removing an earlier entry changes) nor its list (which a patch may add).
      const auto entry_at = [&] {
        const auto at = std::find(s->excludes.begin(), s->excludes.end(), error.entry);
        return at != s->excludes.end()
                 ? entry_pointer(*s, static_cast<size_t>(at - s->excludes.begin()))
                 : list_pointer(*s);
      };
      f.pointer = error.where == Where::dynamic_key
                    ? fmt::format("{}/dynamic/{}", s->pointer, escape_pointer_token(error.entry))
                  : error.where == Where::target
                    ? fmt::format("{}/config_groups/{}/targets", s->pointer,
                                  escape_pointer_token(error.group))
                    : entry_at();
      // The group's length first: a ':' in a group name cannot make two subjects one.
      f.subject = fmt::format("{}:{}:{}:{}", static_cast<int>(error.where), error.group.size(),
                              error.group, error.entry);
    }
    if (m_inferred) {
      const ConfigSource* s = vllm_source();
      add(RuleId::inferred_exclusions, s ? s->file : "config.json",
          "no explicit module list: vLLM infers which Linear layers are quantized from the "
          "stored dtypes")
        .pointer = s ? s->pointer : "";
    }
  }

  // The layers that would quantize the modules of `runs` (stretches of m_undeclared), module by
  // module, each module's by engine, then prefix.
  std::vector<std::tuple<std::string_view, Engine, std::string_view>> undeclared_layers(
    std::span<const std::pair<size_t, size_t>> runs) const
  {
    std::vector<std::tuple<std::string_view, Engine, std::string_view>> out;
    for (const auto& [begin, end] : runs) {
      const std::string_view module = m_inventory.modules[m_undeclared[begin].first].name;
      const size_t first = out.size();
      for (size_t k = begin; k < end; ++k) {
        const Reported& r = m_reported[m_undeclared[k].second];
        out.emplace_back(module, r.engine, r.prefix);
      }
      std::sort(out.begin() + static_cast<std::ptrdiff_t>(first), out.end());
      out.erase(std::unique(out.begin() + static_cast<std::ptrdiff_t>(first), out.end()),
                out.end());
    }
    return out;
  }

  // f.modules: the modules of `runs`.
  void suggest(Finding& f, const ConfigSource& source, const std::string& where, bool is_draft,
               std::span<const std::pair<size_t, size_t>> runs)
  {
    const std::vector<std::string>& modules = f.modules;
    // Whole subtree unquantized? Then one pattern per spelling.
    const std::span<const Module> below = m_inventory.under(where);
    const bool whole = std::none_of(
      below.begin(), below.end(), [](const Module& m) { return m.storage == Storage::quantized; });
    // One spelling per namespace the failing engines check the draft under.
    std::vector<std::string> spellings{where};
    std::set<Engine> main_named; // failing engines that build the draft under main-model names
    // SGLang's DeepSeek-V3 NextN draft reads "model.layers.61" as "model.decoder": the
    // checkpoint's spelling serves it.
    const auto sglang_reads = [&](Engine e, std::string_view entry) {
      auto mapped = is_draft && e == Engine::sglang
                      ? sglang_draft_entry(source.format, m_declaration.model, entry)
                      : std::nullopt;
      return mapped ? std::move(*mapped) : std::string(entry);
    };
    if (is_draft) {
      // No spelling of the root for engines that build its layers under main-model names:
      // name_uncovered_layers() names those it can. The checkpoint's is kept for any other.
      for (Engine e : f.engines) {
        const std::string spelling = draft_root_spelling(e, where, m_declaration.model);
        if (spelling.empty()) {
          main_named.insert(e);
          continue;
        }
        if (sglang_reads(e, where) == spelling) {
          continue;
        }
        if (std::find(spellings.begin(), spellings.end(), spelling) == spellings.end()) {
          spellings.push_back(spelling);
        }
      }
      if (main_named.size() == f.engines.size()) {
        spellings.clear();
      }
    } else {
      // Kimi-K2.5: SGLang builds its text model under names of its own (kimi_k25_name()):
      // each failing engine's spelling, unless one already taken reaches that engine's name
      // (SGLang's ModelOpt mapper brings "language_model.layers.X" to "model.layers.X").
      std::vector<std::string> own;
      for (Engine e : f.engines) {
        std::string k = kimi_k25_name(e, m_declaration.model, where);
        if (k.empty()) {
          k = where;
        }
        if (std::none_of(own.begin(), own.end(), [&](const std::string& taken) {
              return taken == k || entry_matches(e, source.format, taken, k, &m_declaration.model);
            })) {
          own.push_back(std::move(k));
        }
      }
      if (!own.empty()) {
        spellings = std::move(own);
      }
    }
    // In order of first appearance; a draft layer can hold thousands of modules, and a whole
    // subtree needs none of them.
    // With `moe_probes`, a fused MoE layer is also named as compressed-tensors engines look it
    // up: expert 0's projections (fused_moe_probe_names()); experts stored fused only so.
    // A module's MoE layer prefix: the fused experts module itself, or an expert's parent; ""
    // for any other module.
    const auto moe_prefix_of = [&](std::string_view module) -> std::string_view {
      const int64_t k = m_inventory.find(module);
      const ModuleRole role =
        k >= 0 ? m_inventory.modules[static_cast<size_t>(k)].role : ModuleRole::other;
      return role == ModuleRole::fused_experts ? module
             : role == ModuleRole::expert      ? fused_moe_prefix(module)
                                               : std::string_view();
    };
    const auto module_spellings = [&](bool moe_probes = false) {
      std::vector<std::string> out;
      std::unordered_set<std::string> spelled;
      const auto spell = [&](std::string name) {
        if (spelled.insert(name).second) {
          out.push_back(std::move(name));
        }
      };
      for (const auto& m : modules) {
        const std::string_view moe = moe_probes ? moe_prefix_of(m) : std::string_view();
        for (const auto& s : spellings) {
          // An expert stored on its own is named too: every expert listed, no QC105.
          if (moe.size() != m.size()) { // not the fused experts module itself
            spell(s + m.substr(where.size()));
          }
          if (moe.empty()) {
            continue;
          }
          EngineLayer layer;
          layer.prefix = s + std::string(moe.substr(where.size()));
          layer.kind = LayerKind::fused_moe;
          for (std::string& probe : fused_moe_probe_names(layer)) {
            spell(std::move(probe));
          }
        }
      }
      return out;
    };
    // Engines that build the draft under names no entry can hold alone (MiMo's MTP layers,
    // SGLang's Qwen3-Next MTP MLP).
    const auto unlistable = [&](Engine e, std::string_view module) {
      return is_draft && draft_names_unlistable(e, m_declaration.model, m_inventory, module);
    };
    // SGLang builds every GPTQ fused MoE quantized: no key reaches experts there.
    const auto is_expert = [&](std::string_view m) { return !moe_prefix_of(m).empty(); };
    const bool sglang_gptq =
      source.format == QuantFormat::gptq &&
      std::find(f.engines.begin(), f.engines.end(), Engine::sglang) != f.engines.end();
    const bool gptq_experts =
      sglang_gptq && !modules.empty() && std::all_of(modules.begin(), modules.end(), is_expert);
    const bool some_gptq_experts =
      sglang_gptq && std::any_of(modules.begin(), modules.end(), is_expert);
    // Engines for which some module (`unlisted`), or every one (`all_unlisted`), has no entry.
    std::vector<Engine> unlisted;
    size_t all_unlisted = 0;
    for (Engine e : f.engines) {
      const bool gptq = gptq_experts && e == Engine::sglang;
      const auto none = static_cast<size_t>(std::count_if(
        modules.begin(), modules.end(), [&](const std::string& m) { return unlistable(e, m); }));
      if (gptq || none > 0) {
        unlisted.push_back(e);
        all_unlisted += gptq || none == modules.size() ? 1 : 0;
      }
    }
    const std::string experts_fix = "no dynamic key leaves a GPTQ fused MoE unquantized in "
                                    "SGLang: store its experts GPTQ-packed as the main layers' are";
    const std::string unlisted_fix =
      unlisted.empty() ? (some_gptq_experts ? experts_fix : std::string())
      : gptq_experts   ? experts_fix
                       : fmt::format("no list entry excludes this draft alone for {} (see "
                                       "above): store it quantized as the main layers are",
                                     engines_text({unlisted.begin(), unlisted.end()}));
    if (!f.engines.empty() && all_unlisted == f.engines.size()) {
      f.fix = unlisted_fix;
      return;
    }
    // GPTQ: positive dynamic keys an engine reads first for some of the layers (no key appended
    // after them is read), said in the fix.
    std::string order_fix;
    // Layers an engine builds outside every spelled root and module (SGLang's model.eh_proj
    // under Quark, its model.decoder.X for MiMo-V2's MTP) are named exactly. Each layer once: a
    // fused MoE layer is every expert's prefix.
    const auto name_uncovered_layers = [&] {
      std::set<std::pair<Engine, std::string_view>> checked;
      for (const auto& [module, engine, layer_prefix] : undeclared_layers(runs)) {
        const std::string_view prefix = layer_prefix; // clang 14 cannot capture a binding
        const std::vector<EngineLayer>& layers = layers_for(engine);
        auto at =
          std::lower_bound(layers.begin(), layers.end(), prefix,
                           [](const EngineLayer& l, std::string_view p) { return l.prefix < p; });
        // A fused layer the engine compares by its own name alone (SGLang's AWQ, bitsandbytes)
        // is named whatever root holds it: its modules' names do not reach it.
        const bool by_name_alone =
          at != layers.end() && at->prefix == prefix && !at->shards.empty() &&
          compared_names_of(engine, source.format, *at) == Compared::prefix;
        // SGLang may not read a fused layer inside a spelled root through its shards: its
        // ModelOpt config reads them without globs (MLA entries end in '*'), its
        // compressed-tensors and Quark configs only for the class's mapped names.
        const bool sglang_shards =
          engine == Engine::sglang && at != layers.end() && at->prefix == prefix &&
          !at->shards.empty() &&
          (source.format == QuantFormat::modelopt ||
           sglang_compares_fused_name(engine, source.format, m_declaration.model, *at));
        if (unlistable(engine, module) ||
            (!by_name_alone && !sglang_shards &&
             std::any_of(
               spellings.begin(), spellings.end(),
               [&](const std::string& s) { return prefix == s || is_below(prefix, s); })) ||
            !checked.emplace(engine, layer_prefix).second) {
          continue;
        }
        const Engine reader = engine; // clang 14 cannot capture a binding
        const auto listed = [&](std::string_view name) {
          return std::any_of(f.suggested_entries.begin(), f.suggested_entries.end(),
                             [&](const std::string& e) {
                               return entry_matches(reader, source.format, sglang_reads(reader, e),
                                                    name, &m_declaration.model);
                             });
        };
        const auto listed_shard = [&](std::string_view name) {
          return std::any_of(
            f.suggested_entries.begin(), f.suggested_entries.end(), [&](const std::string& e) {
              return shard_entry_matches(reader, source.format, sglang_reads(reader, e), name,
                                         &m_declaration.model);
            });
        };
        // Covered as decide() sees it: the prefix, or every shard (compressed-tensors: every
        // probe name of a fused MoE layer).
        bool covered = listed(prefix);
        for (; !covered && !by_name_alone && at != layers.end() && at->prefix == prefix; ++at) {
          const std::vector<std::string> probes = source.format == QuantFormat::compressed_tensors
                                                    ? fused_moe_probe_names(*at)
                                                    : std::vector<std::string>();
          covered =
            probes.empty()
              ? !at->shards.empty() &&
                  !sglang_compares_fused_name(reader, source.format, m_declaration.model, *at) &&
                  std::all_of(at->shards.begin(), at->shards.end(), listed_shard)
              : std::all_of(probes.begin(), probes.end(), listed);
        }
        if (!covered) {
          f.suggested_entries.emplace_back(layer_prefix);
        }
      }
    };
    // SGLang's Qwen-VL mapper renames the checkpoint's spellings away: a spelling it keeps too.
    const auto add_sglang_suffixes = [&] {
      if (std::find(f.engines.begin(), f.engines.end(), Engine::sglang) == f.engines.end()) {
        return;
      }
      const size_t spelled = f.suggested_entries.size();
      for (size_t i = 0; i < spelled; ++i) {
        std::string suffix =
          sglang_unmapped_suffix(source.format, m_declaration.model, f.suggested_entries[i]);
        if (!suffix.empty() && std::find(f.suggested_entries.begin(), f.suggested_entries.end(),
                                         suffix) == f.suggested_entries.end()) {
          f.suggested_entries.push_back(std::move(suffix));
        }
      }
    };
    switch (source.format) {
    case QuantFormat::modelopt:
      if (whole) {
        for (const auto& s : spellings) {
          // "X*" also names modules whose names merely continue X ("model.layers.3*" names
          // layer 30): "X.*" then (were X a module too, fix's verification would refuse it).
          const size_t itself = m_inventory.find(s) >= 0 ? 1 : 0;
          const bool continued =
            m_inventory.with_prefix(s).size() > m_inventory.under(s).size() + itself;
          f.suggested_entries.push_back(s + (continued ? ".*" : "*"));
        }
      } else {
        f.suggested_entries = module_spellings();
        // SGLang reads an entry ending in an MLA projection as that projection in every layer;
        // "X*" names X alone in every engine for the unfused ones (vLLM fnmatches it; it would
        // not list a shard of vLLM's fused_qkv_a_proj, which it compares exactly).
        for (std::string& e : f.suggested_entries) {
          if (is_unfused_mla_leaf(leaf_of(e))) {
            e.push_back('*');
          }
        }
      }
      add_sglang_suffixes();
      name_uncovered_layers();
      break;
    case QuantFormat::quark:
      // SGLang reads Quark entries as exact names or "re:" regexes, never globs (vLLM reads
      // globs since PR 48606 only): a whole root is a start-anchored regex ending at its dot.
      // vLLM maps Quark's exact entries into its VLM namespace but not its regexes, which meet
      // its renamed prefixes (language_model.model.X): a root renamed there gets both spellings.
      if (whole) {
        for (const auto& s : spellings) {
          f.suggested_entries.push_back(fmt::format("re:{}\\.", regex_escape(s)));
          if (const std::string renamed = vllm_namespace(s); renamed != s) {
            f.suggested_entries.push_back(fmt::format("re:{}\\.", regex_escape(renamed)));
          }
        }
      } else {
        f.suggested_entries = module_spellings();
      }
      name_uncovered_layers();
      break;
    case QuantFormat::compressed_tensors:
      f.suggested_entries = module_spellings(true);
      add_sglang_suffixes();
      if (is_draft) {
        // Name the fused draft layers too (R37): drafters without packed_modules_mapping match
        // the fused name literally.
        for (const auto& [module, engine, layer_prefix] : undeclared_layers(runs)) {
          // A fused MoE layer is decided by its probe names, never by its prefix.
          if (engine == Engine::vllm && layer_prefix != module && moe_prefix_of(module).empty() &&
              !unlistable(engine, module) &&
              std::find(f.suggested_entries.begin(), f.suggested_entries.end(), layer_prefix) ==
                f.suggested_entries.end()) {
            f.suggested_entries.emplace_back(layer_prefix);
          }
        }
      }
      name_uncovered_layers();
      break;
    case QuantFormat::awq:
      // AWQ entries are substrings: a whole subtree is one per spelling, ending at the root's
      // dot ("model.layers.1" is inside "model.layers.12"), unless the root is a module itself.
      // An entry is a substring of every name: a root inside a quantized module's name
      // ("layers.1." in "vision_encoder.transformer.layers.1.") would exclude that one too, and
      // the modules are named instead. A spelling inside another offered one covers it.
      if (whole) {
        const bool module_root = std::find(modules.begin(), modules.end(), where) != modules.end();
        std::vector<std::string> roots;
        for (const auto& sp : spellings) {
          roots.push_back(module_root ? sp : sp + ".");
        }
        const bool reaches_quantized =
          std::any_of(m_inventory.modules.begin(), m_inventory.modules.end(), [&](const Module& m) {
            return m.storage == Storage::quantized &&
                   std::any_of(roots.begin(), roots.end(), [&](const std::string& r) {
                     return m.name.find(r) != std::string::npos;
                   });
          });
        if (reaches_quantized) {
          f.suggested_entries = module_spellings();
        } else {
          for (const std::string& r : roots) {
            if (std::none_of(roots.begin(), roots.end(), [&](const std::string& other) {
                  return other != r && r.find(other) != std::string::npos;
                })) {
              f.suggested_entries.push_back(r);
            }
          }
        }
      } else {
        f.suggested_entries = module_spellings();
      }
      name_uncovered_layers();
      break;
    case QuantFormat::fp8:
      f.suggested_entries = module_spellings();
      name_uncovered_layers();
      break;
    case QuantFormat::bitsandbytes: {
      static constexpr std::array<std::string_view, 2> k_tower_roots{"model.visual", "visual"};
      // Neither engine maps the list: each failing one's own name (Qwen-VL) of the modules, or
      // of a whole subtree's root, which excludes everything below it (a dotted prefix).
      const auto add_own = [&](const std::string& spelled, bool root) {
        for (Engine e : f.engines) {
          std::string own = bnb_name(e, &m_declaration.model, root ? spelled + "." : spelled);
          if (root) {
            own.pop_back();
          }
          if (std::find(f.suggested_entries.begin(), f.suggested_entries.end(), own) ==
              f.suggested_entries.end()) {
            f.suggested_entries.push_back(std::move(own));
          }
        }
      };
      // A Qwen-VL tower unquantized whole, whichever layout: "visual", a component of both
      // engines' names of it.
      const auto whole_tower = [&] {
        return std::any_of(k_tower_roots.begin(), k_tower_roots.end(), [&](std::string_view root) {
          const std::span<const Module> tower = m_inventory.under(root);
          return std::all_of(modules.begin(), modules.end(),
                             [&](const std::string& m) {
                               return m.starts_with(root) && m.size() > root.size() &&
                                      m[root.size()] == '.';
                             }) &&
                 std::none_of(tower.begin(), tower.end(),
                              [](const Module& m) { return m.storage == Storage::quantized; });
        });
      };
      if (bnb_names_differ(&m_declaration.model) && whole_tower()) {
        f.suggested_entries.push_back("visual");
      } else if (whole) {
        for (const auto& s : spellings) {
          add_own(s, true);
        }
      } else {
        for (const std::string& spelled : module_spellings()) {
          add_own(spelled, false);
        }
      }
      name_uncovered_layers();
      break;
    }
    case QuantFormat::gptq: {
      const auto add_key = [&](std::string key) {
        if (std::find(f.suggested_entries.begin(), f.suggested_entries.end(), key) ==
            f.suggested_entries.end()) {
          f.suggested_entries.push_back(std::move(key));
        }
      };
      // Each failing engine's name: the keys meet its own layer prefixes.
      const ModelInfo* model = &m_declaration.model;
      // A positive key an engine reads first for a layer hides any key appended after it: the
      // keys then go before every key (entries_first), where fix puts them.
      std::set<std::string> ahead;
      std::set<Engine> hidden_engines;
      for (const auto& [module, engine, layer_prefix] : undeclared_layers(runs)) {
        if (engine == Engine::sglang && is_expert(module)) {
          continue; // SGLang's GPTQ experts have no key (experts_fix)
        }
        const std::string name = dynamic_subject(engine, model, layer_prefix);
        if (const DynamicRule* r = first_dynamic_key(source, name); r != nullptr && !r->negative) {
          ahead.insert(r->key);
          hidden_engines.insert(engine);
        }
      }
      if (!ahead.empty()) {
        std::vector<std::string> quoted;
        for (const std::string& k : ahead) {
          quoted.push_back(fmt::format("'{}'", k));
        }
        f.entries_first = true;
        order_fix =
          fmt::format("{} {} dynamic keys in order and {} matches first: a key after it "
                      "is never read",
                      engines_text(hidden_engines), hidden_engines.size() == 1 ? "reads" : "read",
                      fmt::join(quoted, ", "));
      }
      if (whole) {
        // A root that is a module itself (lm_head, with "lm_head": true) is its layer's name.
        const bool module_root = std::find(modules.begin(), modules.end(), where) != modules.end();
        for (const auto& s : spellings) {
          for (const Engine e : f.engines) {
            const std::string name = regex_escape(dynamic_subject(e, model, s));
            add_key(module_root ? fmt::format("-:{}$", name) : fmt::format("-:{}\\..*", name));
          }
        }
      } else {
        // Beside quantized modules (Qwen3.5's in_proj_a and in_proj_b next to in_proj_qkv), each
        // engine layer's own key: the keys are matched against layer prefixes, fused names too.
        for (const auto& [module, engine, layer_prefix] : undeclared_layers(runs)) {
          if (!(engine == Engine::sglang && is_expert(module))) {
            add_key(
              fmt::format("-:{}$", regex_escape(dynamic_subject(engine, model, layer_prefix))));
          }
        }
      }
      break;
    }
    case QuantFormat::auto_round:
      // extra_config keys are exact names, or regexes when they hold metacharacters: vLLM
      // searches the name with one, SGLang must match all of it, so the key runs to the end.
      if (whole && is_draft) {
        for (const auto& sp : spellings) {
          f.suggested_entries.push_back(fmt::format("^{}\\..*", regex_escape(sp)));
        }
        // A module the engines read another key for first: its exact key, which fix gives bits
        // 16, or (behind an earlier pattern, which other layers may share) a new exact key for
        // it, which both engines read before any pattern.
        for (const auto& m : modules) {
          for (const Engine e : f.engines) {
            const ExtraConfigEntry* key = extra_config_entry(e, source, m);
            if (key == nullptr || key->bits >= 16) {
              continue;
            }
            if (std::find(f.suggested_entries.begin(), f.suggested_entries.end(), m) ==
                f.suggested_entries.end()) {
              f.suggested_entries.push_back(m);
            }
          }
        }
      } else {
        // Each module's own key (fix gives bits 16 to one the block has already).
        f.suggested_entries = module_spellings();
      }
      // A draft layer an engine builds under main-model names (no root spelling serves it:
      // SGLang's Qwen3-Next MTP), where no main layer has it: its own exact key.
      for (const auto& [module, engine, layer_prefix] : undeclared_layers(runs)) {
        const std::string_view prefix = layer_prefix; // clang 14 cannot capture a binding
        const Engine reader = engine;                 // clang 14 cannot capture a binding
        if (main_named.contains(engine) && !unlistable(engine, module) &&
            std::none_of(
              f.suggested_entries.begin(), f.suggested_entries.end(),
              [&](const std::string& e) { return extra_config_key_matches(reader, e, prefix); })) {
          f.suggested_entries.emplace_back(prefix);
        }
      }
      // A fused layer SGLang reads by its fused name alone (no packed_modules_mapping key names
      // it): that name's own exact key, which vLLM's get_quant_method reads first too.
      {
        const std::vector<EngineLayer>& layers = layers_for(Engine::sglang);
        std::vector<std::string> fused;     // the fused names added
        std::set<std::string_view> reached; // modules they settle
        for (const auto& [module, engine, layer_prefix] : undeclared_layers(runs)) {
          const std::string_view prefix = layer_prefix; // clang 14 cannot capture a binding
          const auto at =
            std::lower_bound(layers.begin(), layers.end(), prefix,
                             [](const EngineLayer& l, std::string_view p) { return l.prefix < p; });
          if (engine != Engine::sglang || at == layers.end() || at->prefix != prefix ||
              at->shards.empty() || at->kind == LayerKind::fused_moe ||
              sglang_reads_shards(m_declaration.model, *at)) {
            continue;
          }
          reached.insert(module);
          if (std::none_of(f.suggested_entries.begin(), f.suggested_entries.end(),
                           [&](const std::string& e) {
                             return extra_config_key_matches(Engine::sglang, e, prefix);
                           })) {
            f.suggested_entries.emplace_back(prefix);
            fused.emplace_back(prefix);
          }
        }
        // For SGLang alone, the fused names do: the shards' keys would change nothing.
        if (!fused.empty() && f.engines == std::vector<Engine>{Engine::sglang} &&
            reached.size() == modules.size()) {
          f.suggested_entries = fused;
        }
      }
      break;
    default:
      break;
    }
    // The entries every list already holds (one engine reads them, another does not reach the
    // layer through them) are not offered again: fix would not add them.
    std::vector<std::string> quoted;
    std::vector<std::string> keyed; // AutoRound keys the block has: fix gives them bits 16
    std::vector<std::string> lists;
    for (const auto& e : f.suggested_entries) {
      const bool held = std::all_of(
        m_declaration.sources.begin(), m_declaration.sources.end(), [&](const ConfigSource& s) {
          return s.format != source.format ||
                 std::find(s.excludes.begin(), s.excludes.end(), e) != s.excludes.end();
        });
      const bool key = std::any_of(source.extra_config.begin(), source.extra_config.end(),
                                   [&](const ExtraConfigEntry& x) { return x.key == e; });
      if (key) {
        keyed.push_back(escape_json(e));
      } else if (!held) {
        quoted.push_back(escape_json(e)); // as it is written in the file: pasted, it parses
      }
    }
    if (!quoted.empty() || !keyed.empty()) {
      for (const auto& s : m_declaration.sources) {
        if (s.format == source.format) {
          lists.push_back(fmt::format("{} {}", s.file, s.list_key));
        }
      }
      const std::string lists_text = fmt::format("{}", fmt::join(lists, " and "));
      const std::string set =
        keyed.empty() ? "" : fmt::format("set \"bits\": 16 in {}", fmt::join(keyed, ", "));
      f.fix = quoted.empty() ? fmt::format("{} of {} (qcheck fix --inplace)", set, lists_text)
              : set.empty()  ? fmt::format("{} {} {} {} (qcheck fix --inplace)",
                                          f.entries_first ? "put" : "add", fmt::join(quoted, ", "),
                                          f.entries_first ? "at the start of" : "to", lists_text)
                             : fmt::format("add {} to {} and {} there (qcheck fix --inplace)",
                                           fmt::join(quoted, ", "), lists_text, set);
    }
    if (!unlisted_fix.empty()) {
      f.fix = f.fix.empty() ? unlisted_fix : fmt::format("{}; {}", f.fix, unlisted_fix);
    }
    if (!order_fix.empty()) {
      f.fix = f.fix.empty() ? order_fix : fmt::format("{}; {}", f.fix, order_fix);
    }
    if (source.sglang_reads_empty &&
        std::find(f.engines.begin(), f.engines.end(), Engine::sglang) != f.engines.end()) {
      const std::string_view empty_fix = "SGLang reads the empty ignored_layers: move "
                                         "modules_to_not_convert's entries there, or remove it";
      f.fix = f.fix.empty() ? std::string(empty_fix) : fmt::format("{}; {}", f.fix, empty_fix);
    }
  }

  void emit_stored_mixtures()
  {
    for (const auto& [members, layer] : m_mixed) {
      const std::string& prefix = layer.prefix;
      std::vector<std::string> q, u;
      for (uint32_t i : layer.modules) {
        const Module& m = m_inventory.modules[i];
        (m.storage == Storage::quantized ? q : u).emplace_back(m.name);
      }
      const bool moe = layer.kind == LayerKind::fused_moe;
      // No shards: one name several draft layers share (SGLang's MiMo-V2 model.decoder.X).
      const bool shared = !moe && layer.shards.empty();
      Finding& f = add(
        moe ? RuleId::experts_disagree : RuleId::fused_shards_disagree, "",
        shared ? fmt::format("draft layers built as one name '{}' mix stored quantized ({}) and "
                             "unquantized ({}) modules; one list entry decides them all",
                             prefix, q.size(), u.size())
               : fmt::format("{} '{}' mixes stored quantized ({}) and unquantized ({}) members; "
                             "engines decide once for the fused layer",
                             moe ? "fused MoE" : "fused layer", prefix, q.size(), u.size()));
      f.modules = q;
      f.modules.insert(f.modules.end(), u.begin(), u.end());
      f.details.push_back(fmt::format("unquantized: {}", fmt::join(u, ", ")));
    }
  }

  // Whether decide_lists() will build the known names: for a long list with entry checks.
  bool will_need_known_names() const
  {
    return !m_options.decisions_only &&
           std::any_of(m_declaration.sources.begin(), m_declaration.sources.end(),
                       [](const ConfigSource& s) {
                         return has_entry_checks(s) && s.excludes.size() >= k_compile_threshold;
                       });
  }

  // Names listed with their dotted ancestors, and added to a NameSet a batch at a time
  // (insert_all() overlaps the table's cache misses). In name order a name shares most
  // ancestors with the name before: its walk stops at the first of those, listed already (a
  // name listed twice goes in once).
  class AncestorFiller
  {
  public:
    explicit AncestorFiller(NameSet& out) : m_out(out) { m_batch.reserve(k_batch); }

    // Adds the names listed so far to the set (add() does when its batch is full): call it after
    // the last add().
    void finish()
    {
      m_out.insert_all(m_batch);
      m_batch.clear();
    }

    void add(std::string_view name)
    {
      const std::string_view walked = name;
      while (!name.empty() && name != m_before && !is_below(m_before, name)) {
        if (m_batch.size() == k_batch) {
          finish();
        }
        m_batch.push_back(name);
        const size_t dot = name.rfind('.');
        name = dot == std::string_view::npos ? std::string_view() : name.substr(0, dot);
      }
      m_before = walked;
    }

  private:
    static constexpr size_t k_batch = 4096; // names: a buffer that stays in cache

    NameSet& m_out;
    std::vector<std::string_view> m_batch;
    std::string_view m_before;
  };

  // The module names and all their ancestors: known_names()' part that needs no engine's
  // layers, which prepare_engines() starts early when decide_lists() will need it.
  NameSet known_module_names() const
  {
    // About a third more names than modules (DeepSeek: 46,124 modules, 62,762 names).
    NameSet out(m_inventory.modules.size() + m_inventory.modules.size() / 2);
    AncestorFiller filler(out);
    for (const Module& m : m_inventory.modules) {
      filler.add(m.name);
    }
    filler.finish();
    return out;
  }

  // Entries that match no module under any engine, and short substring entries.
  // Module names, engine layer prefixes and shards, and every dotted ancestor of them.
  NameSet known_names()
  {
    NameSet out = m_known_modules ? std::move(*m_known_modules) : known_module_names();
    m_known_modules.reset();
    AncestorFiller filler(out);
    // Most shards are their own module's name, already in: those are skipped unhashed.
    for (Engine e : m_options.engines) {
      for (const EngineLayer& layer : layers_for(e)) {
        filler.add(layer.prefix);
        for (size_t j = 0; j < layer.shards.size(); ++j) {
          if (!layer.shards.is_module(j)) {
            filler.add(layer.shards[j]);
          }
        }
      }
    }
    filler.finish();
    return out;
  }

  // Names in order, or one per digit signature, sieved only as far as a search reads: an entry
  // that matches early does not pay for the whole list.
  class NameList
  {
  public:
    NameList(std::vector<std::string_view> all, bool one_per_signature)
      : m_all(std::move(all)), m_one_per_signature(one_per_signature)
    {
    }
    // The k-th name, or nullptr past the end; sieves only as far as k.
    const std::string_view* at(size_t k)
    {
      if (!m_one_per_signature) {
        return k < m_all.size() ? &m_all[k] : nullptr;
      }
      while (k >= m_kept.size() && m_next < m_all.size()) {
        const std::string_view name = m_all[m_next++];
        if (!digit_signature(name, m_signature) || m_seen.insert(m_signature).second) {
          m_kept.push_back(name);
        }
      }
      return k < m_kept.size() ? &m_kept[k] : nullptr;
    }

  private:
    std::vector<std::string_view> m_all;
    bool m_one_per_signature;
    std::vector<std::string_view> m_kept;
    size_t m_next = 0;
    std::unordered_set<std::string> m_seen;
    std::string m_signature;
  };

  // Whether a plain entry names a stored parameter that is no weight, bias or scale: bare
  // (MiniMax-M2's e_score_correction_bias) or as the full name of a stored tensor (Qwen3-Next
  // FP8 lists each layer's linear_attn.A_log and dt_bias). No engine matches parameters, but the
  // entry says on purpose that the tensor stays unquantized. A Linear's "x.weight", or a bare
  // "weight", is still a mistake QC112 reports: it meant the module.
  bool names_a_stored_parameter(std::string_view entry)
  {
    const size_t dot = entry.rfind('.');
    const std::string_view param = dot == std::string_view::npos ? entry : entry.substr(dot + 1);
    if (param == "bias" || param.starts_with("weight") || param.starts_with("qweight") ||
        param == "qzeros" || param == "scales" || param == "g_idx" || is_activation_scale(param)) {
      return false;
    }
    if (dot != std::string_view::npos) {
      // The known names (a hash set for a long list) rule most entries out without a search.
      const std::string_view parent = entry.substr(0, dot);
      const int64_t m = is_known(parent) ? m_inventory.find(parent) : -1;
      if (m < 0) {
        return false;
      }
      return find_param(m_checkpoint, m_inventory.modules[static_cast<size_t>(m)], param) !=
             nullptr;
    }
    // A checkpoint has a few parameter names: a flat list of the distinct ones.
    if (!m_param_names) {
      m_param_names.emplace();
      std::vector<std::string_view> previous;
      std::vector<std::string_view> params;
      for (const Module& m : m_inventory.modules) {
        params.clear();
        for (size_t i = 0; i < m.tensors.size(); ++i) {
          params.push_back(param_of(m_checkpoint, m, i));
        }
        // Neighbours mostly store the same parameters.
        if (params == previous) {
          continue;
        }
        std::swap(previous, params);
        for (const std::string_view stored : previous) {
          if (std::find(m_param_names->begin(), m_param_names->end(), stored) ==
              m_param_names->end()) {
            m_param_names->push_back(stored);
          }
        }
      }
    }
    return std::find(m_param_names->begin(), m_param_names->end(), entry) != m_param_names->end();
  }

  // Whether an FP8 entry reaches, by SGLang's and transformers' dotted rule, a module vLLM
  // builds quantized: QC121 is about those. What vLLM builds is its engine layers: a Linear, a
  // fused MoE, a router that takes the model's config (LayerKind::router); not a draft's plain
  // nn.Linear, most routers, or the output head.
  bool reaches_a_quantizable_module(std::string_view entry)
  {
    if (m_vllm_quantizable.empty()) {
      m_vllm_quantizable.assign(m_inventory.modules.size(), false);
      for (const EngineLayer& layer : layers_for(Engine::vllm)) {
        if (layer.kind == LayerKind::linear || layer.kind == LayerKind::fused_moe ||
            layer.kind == LayerKind::router) {
          for (const uint32_t i : layer.modules) {
            m_vllm_quantizable[i] = true;
          }
        }
      }
    }
    // An entry that reaches no stored module (a fused name such as self_attn.qkv_proj) keeps
    // its QC121: what it was meant for is quantized.
    if (entry.find('.') != std::string_view::npos) {
      bool reaches = false;
      for (size_t i = 0; i < m_inventory.modules.size(); ++i) {
        if (entry_matches(Engine::sglang, QuantFormat::fp8, entry, m_inventory.modules[i].name)) {
          if (m_vllm_quantizable[i]) {
            return true;
          }
          reaches = true;
        }
      }
      if (reaches) {
        return false;
      }
      // Written for a name SGLang gives a draft layer (model.decoder.X): SGLang's spelling, which
      // vLLM needs no part of.
      for (const EngineLayer& layer : layers_for(Engine::sglang)) {
        if (layer.draft &&
            (entry_matches(Engine::sglang, QuantFormat::fp8, entry, layer.prefix) ||
             std::any_of(layer.shards.begin(), layer.shards.end(), [&](std::string_view s) {
               return entry_matches(Engine::sglang, QuantFormat::fp8, entry, s);
             }))) {
          return false;
        }
      }
      return true;
    }
    // Each component of a module's name: whether it is one of a quantizable module's. Built once.
    if (!m_components) {
      m_components.emplace();
      for (size_t i = 0; i < m_inventory.modules.size(); ++i) {
        for (const std::string_view part : split_dots(m_inventory.modules[i].name)) {
          bool& of_quantizable = (*m_components)[part];
          of_quantizable = of_quantizable || m_vllm_quantizable[i];
        }
      }
    }
    const auto it = m_components->find(entry);
    return it == m_components->end() || it->second;
  }

  // Every module name, or (`one_per_signature`) one per digit signature: what an entry blind to
  // digits needs to be tried on. Built once per run.
  NameList& module_names(bool one_per_signature)
  {
    auto& names = m_module_names[one_per_signature ? 1 : 0];
    if (!names) {
      std::vector<std::string_view> all;
      all.reserve(m_inventory.modules.size());
      for (const Module& m : m_inventory.modules) {
        all.push_back(m.name);
      }
      names.emplace(std::move(all), one_per_signature);
    }
    return *names;
  }

  // Whether one of the first modules whose names start with the entry's text before its first
  // wildcard matches it under some engine: where most entries' matches are, found by binary
  // search instead of a scan. False says nothing.
  bool matches_a_module_named_like_it(QuantFormat format, std::string_view entry) const
  {
    if (entry.starts_with("re:")) {
      return false;
    }
    const std::string_view literal = std::string_view(entry).substr(0, entry.find_first_of("*?["));
    if (literal.empty()) {
      return false;
    }
    const std::span<const Module> named = m_inventory.with_prefix(literal);
    return std::any_of(named.begin(), named.begin() + std::min(named.size(), k_named_like_tries),
                       [&](const Module& m) {
                         return std::any_of(
                           k_all_engines.begin(), k_all_engines.end(), [&](Engine e) {
                             return entry_matches(e, format, entry, m.name, &m_declaration.model);
                           });
                       });
  }

  // An engine's layer prefixes and fused shards, in layer order; likewise.
  NameList& layer_names(Engine engine, bool one_per_signature)
  {
    auto it = m_layer_names.find({engine, one_per_signature});
    if (it == m_layer_names.end()) {
      std::vector<std::string_view> all;
      for (const EngineLayer& layer : layers_for(engine)) {
        all.push_back(layer.prefix);
        all.insert(all.end(), layer.shards.begin(), layer.shards.end());
      }
      it = m_layer_names.try_emplace({engine, one_per_signature}, std::move(all), one_per_signature)
             .first;
    }
    return it->second;
  }

  // Whether a plain entry names a module, an engine layer or fused shard, or a dotted ancestor
  // of one. Modules answer by binary search; the other names by a scan, until enough entries
  // have asked that one hash set of every name and ancestor is cheaper.
  bool is_known(std::string_view entry)
  {
    if (!m_known.empty()) {
      return m_known.contains(entry); // modules, layers, shards and all their ancestors
    }
    if (m_inventory.find(entry) >= 0 || !m_inventory.under(entry).empty()) {
      return true;
    }
    if (m_known.empty() && ++m_known_scans <= k_known_scan_limit) {
      const auto names = [&](std::string_view name) {
        return name == entry || is_below(name, entry);
      };
      for (Engine e : m_options.engines) {
        for (const EngineLayer& layer : layers_for(e)) {
          if (names(layer.prefix) || std::any_of(layer.shards.begin(), layer.shards.end(), names)) {
            return true;
          }
        }
      }
      return false;
    }
    m_known = known_names();
    return m_known.contains(entry);
  }

  // is_known() of entry `index` of the block's list, asked once per entry: blocks holding the
  // same list (config.json and hf_quant_config.json) share the answers, and so do entries()
  // and partial_experts().
  bool is_known_entry(const ConfigSource& s, size_t index)
  {
    int8_t& known = known_answers(s)[index];
    if (known < 0) {
      known = is_known(s.excludes[index]) ? 1 : 0;
    }
    return known == 1;
  }

  // The block's is_known() answers so far, per entry: 1, 0, or -1 when not asked yet.
  std::vector<int8_t>& known_answers(const ConfigSource& s)
  {
    for (auto& [source, known] : m_known_entries) {
      if (source == &s) {
        return known;
      }
    }
    // Whether an entry names a module does not depend on the format: the entries suffice.
    const auto same = std::find_if(m_known_entries.begin(), m_known_entries.end(),
                                   [&](const auto& c) { return c.first->excludes == s.excludes; });
    return m_known_entries
      .emplace_back(&s, same != m_known_entries.end() ? same->second
                                                      : std::vector<int8_t>(s.excludes.size(), -1))
      .second;
  }

  // is_known_entry() of every plain entry of a long list at once, from the set of all names
  // without the scans first: most entries of a long list that its pass does not see match are
  // asked, and this runs beside that pass instead of after it.
  void answer_plain_entries(const ConfigSource& s)
  {
    std::vector<int8_t>& answers = known_answers(s);
    if (m_known.empty()) {
      m_known = known_names();
    }
    // Asked a batch at a time (contains_all() overlaps the table's cache misses), in buffers
    // that stay in cache.
    constexpr size_t k_batch = 4096;
    std::vector<uint32_t> asked(k_batch);
    std::vector<std::string_view> entries(k_batch);
    std::vector<char> known(k_batch);
    size_t n = 0;
    const auto answer = [&] {
      m_known.contains_all(std::span(entries).first(n), known);
      for (size_t k = 0; k < n; ++k) {
        answers[asked[k]] = known[k] != 0 ? 1 : 0;
      }
      n = 0;
    };
    for (size_t i = 0; i < s.excludes.size(); ++i) {
      const std::string_view entry = s.excludes[i];
      if (answers[i] < 0 && !has_glob_chars(entry) && !entry.starts_with("re:")) {
        asked[n] = static_cast<uint32_t>(i);
        entries[n++] = entry;
        if (n == k_batch) {
          answer();
        }
      }
    }
    answer();
  }

  // Per-engine work is cut in this many parts, so that two cores share three engines evenly.
  static constexpr size_t k_halves = 2;

  struct EntryUse
  {
    std::vector<char> matched;              // nonzero: the entry matches some name
    std::vector<std::string_view> examples; // substring formats: a module it overmatches, or ""
  };

  // Which entries of a long list match a module (under any engine) or a layer prefix or fused
  // shard of an engine that reads the list: what the per-entry scan in entries() answers, from
  // one pass over the names and their candidates. For the formats some engine matches as
  // substrings, the same pass finds overmatch_example() of each entry: that engine's
  // candidates for a module hold every entry occurring in its name.
  // Also marks the entries that match one of `probes` under its engine: names no module or
  // layer has that an entry may still be written for.
  // `beside` runs as one more task beside the passes.
  struct Probe
  {
    Engine engine;
    std::string_view name;
  };
  EntryUse entry_use(const ConfigSource& s, const std::vector<Engine>& engines,
                     std::span<const Probe> probes, const std::function<void()>& beside)
  {
    std::optional<Engine> substring_engine;
    if (s.format == QuantFormat::modelopt) {
      substring_engine = Engine::vllm;
    }
    // Layer prefixes and shards are mostly module names, already visited: most often the name
    // of the layer's own module (a shard per module when every module is a shard).
    const auto is_module = [&](std::string_view name, std::optional<uint32_t> module) {
      return (module && m_inventory.modules[*module].name == name) || m_inventory.find(name) >= 0;
    };
    // Independent passes, run side by side: the module names under each engine (in two
    // halves, so that two cores share three engines evenly), and each reading engine's layer
    // names. Each pass marks the entries it sees match; the substring engine's module passes
    // also keep each entry's first overmatched module.
    struct Pass
    {
      Engine engine;
      const CompiledList* list;
      const std::vector<EngineLayer>* layers; // null: modules [begin, end), or `names`
      size_t begin = 0;
      size_t end = 0;
      std::vector<std::string_view> names{}; // when not empty: these names only
      std::vector<char> matched{};
      std::vector<char> exampled{};                          // the entry has an example here
      std::vector<std::pair<uint32_t, uint32_t>> examples{}; // (entry, module), module order
    };
    std::vector<Pass> passes;
    const size_t module_count = m_inventory.modules.size();
    for (Engine e : k_all_engines) {
      for (size_t half = 0; half < k_halves; ++half) {
        passes.push_back({e, compiled(e, s), nullptr, module_count * half / k_halves,
                          module_count * (half + 1) / k_halves});
      }
    }
    for (Engine e : engines) {
      passes.push_back({e, compiled(e, s), &layers_for(e)});
    }
    for (Engine e : k_all_engines) {
      Pass pass{e, compiled(e, s), nullptr};
      for (const Probe& probe : probes) {
        if (probe.engine == e) {
          pass.names.push_back(probe.name);
        }
      }
      if (!pass.names.empty()) {
        passes.push_back(std::move(pass));
      }
    }
    const auto run_pass = [&](Pass& pass) {
      pass.matched.assign(s.excludes.size(), 0);
      const bool examples = pass.layers == nullptr && pass.engine == substring_engine;
      if (examples) {
        pass.exampled.assign(s.excludes.size(), 0);
      }
      std::vector<uint32_t> found;
      // A module's candidates may have been kept while its layer was decided.
      const auto visit = [&](std::string_view name, std::optional<uint32_t> module) {
        found.clear();
        pass.list->candidates(name, module, found);
        for (uint32_t i : found) {
          if (!pass.matched[i] &&
              entry_matches(pass.engine, s.format, s.excludes[i], name, &m_declaration.model)) {
            pass.matched[i] = 1;
          }
        }
      };
      if (!pass.names.empty()) {
        for (const std::string_view name : pass.names) {
          visit(name, std::nullopt);
        }
        return;
      }
      if (pass.layers == nullptr) {
        for (size_t k = pass.begin; k < pass.end; ++k) {
          const Module& m = m_inventory.modules[k];
          visit(m.name, static_cast<uint32_t>(k));
          if (!examples) {
            continue;
          }
          for (uint32_t i : found) {
            if (!pass.exampled[i] && overmatches(s.excludes[i], m.name)) {
              pass.exampled[i] = 1;
              pass.examples.emplace_back(i, static_cast<uint32_t>(k));
            }
          }
        }
        return;
      }
      for (const EngineLayer& layer : *pass.layers) {
        if (!is_module(layer.prefix, layer.prefix_module())) {
          visit(layer.prefix, std::nullopt);
        }
        for (size_t j = 0; j < layer.shards.size(); ++j) {
          if (!layer.shards.is_module(j) && !is_module(layer.shards[j], layer.shard_module(j))) {
            visit(layer.shards[j], std::nullopt);
          }
        }
      }
    };
    run_tasks(passes.size() + 1, thread_count(m_options.threads), [&](size_t i) {
      if (i == 0) {
        beside();
      } else {
        run_pass(passes[i - 1]);
      }
    });
    EntryUse use;
    use.matched.assign(s.excludes.size(), 0);
    for (Pass& pass : passes) {
      // Through pointers: a char store through the vector could alias its own bounds, which
      // keeps the compiler from vectorizing the loop.
      char* const to = use.matched.data();
      const char* const from = pass.matched.data();
      for (size_t i = 0, n = pass.matched.size(); i < n; ++i) {
        to[i] |= from[i];
      }
      // Passes in module order: an earlier half's example comes first.
      if (!pass.exampled.empty() && use.examples.empty()) {
        use.examples.resize(s.excludes.size());
      }
      for (const auto& [entry, module] : pass.examples) {
        if (use.examples[entry].empty()) {
          use.examples[entry] = m_inventory.modules[module].name;
        }
      }
    }
    return use;
  }

  // A run of `count` dead entries or keys in `f`'s details: the first few quoted (`text(i)`:
  // the i-th), then how many more.
  template<typename Text>
  static void spell_run(Finding& f, size_t count, const Text& text)
  {
    constexpr size_t k_shown = 5;
    const size_t shown = count <= k_shown + 1 ? count : k_shown;
    for (size_t i = 0; i < shown; ++i) {
      f.details.push_back(fmt::format("'{}'", text(i)));
    }
    if (shown < count) {
      f.details.push_back(fmt::format("... and {} more", count - shown));
    }
  }

  // QC112 for one list: each run of consecutive dead entries is one finding, added where the
  // run starts and widened while it grows (a list copied from a larger model can hold tens of
  // thousands in a row; one line each would bury every other finding).
  class DeadRuns
  {
  public:
    DeadRuns(Linter& linter, const ConfigSource& source) : m_linter(linter), m_source(source) {}
    DeadRuns(const DeadRuns&) = delete;
    DeadRuns& operator=(const DeadRuns&) = delete;
    ~DeadRuns() { close(); }

    void add(size_t index)
    {
      if (m_count > 0 && m_first + m_count == index) {
        ++m_count;
        return;
      }
      close();
      const std::string_view entry = m_source.excludes[index];
      Finding& f = m_linter.add(
        RuleId::unused_entry, m_source.file,
        fmt::format("{} entry '{}' matches no module of the checkpoint", m_source.list_key, entry));
      f.pointer = entry_pointer(m_source, index);
      m_finding = m_linter.m_report.findings.size() - 1;
      m_first = index;
      m_count = 1;
    }

  private:
    void close()
    {
      if (m_count == 0) {
        return;
      }
      Finding& f = m_linter.m_report.findings[m_finding];
      const auto run =
        std::span(m_source.excludes.data(), m_source.excludes.size()).subspan(m_first, m_count);
      if (m_count == 1) {
        f.suggested_entries = {std::string(run.front())};
      } else { // the span is pointer..end_pointer: no second copy of a long list
        f.message =
          fmt::format("{} {} entries in a row match no module of the checkpoint, from '{}' to '{}'",
                      m_count, m_source.list_key, run.front(), run.back());
        f.end_pointer = entry_pointer(m_source, m_first + m_count - 1);
        spell_run(f, m_count, [&](size_t i) { return std::string(run[i]); });
      }
      m_count = 0;
    }

    Linter& m_linter;
    const ConfigSource& m_source;
    size_t m_finding = 0;
    size_t m_first = 0;
    size_t m_count = 0;
  };

  static bool has_entry_checks(const ConfigSource& s)
  {
    return s.format == QuantFormat::modelopt || s.format == QuantFormat::compressed_tensors ||
           s.format == QuantFormat::quark || s.format == QuantFormat::fp8 ||
           s.format == QuantFormat::awq || s.format == QuantFormat::bitsandbytes;
  }

  // Each list's entries decided, once per list: config.json and hf_quant_config.json often
  // carry the same one.
  std::vector<DecidedList> decide_lists()
  {
    std::vector<DecidedList> decided;
    for (const ConfigSource& s : m_declaration.sources) {
      if (has_entry_checks(s) &&
          std::none_of(decided.begin(), decided.end(),
                       [&](const DecidedList& d) { return same_list(*d.source, s); })) {
        decided.push_back(decide_entries(s));
      }
    }
    return decided;
  }

  // The entries' findings, block by block.
  void write_entries(const std::vector<DecidedList>& decided)
  {
    for (const ConfigSource& s : m_declaration.sources) {
      if (!has_entry_checks(s)) {
        continue;
      }
      const auto same = std::find_if(decided.begin(), decided.end(),
                                     [&](const DecidedList& d) { return same_list(*d.source, s); });
      write_entry_findings(s, *same);
    }
  }

  // What entries() found about each entry of a list; the findings follow from it per block.
  enum EntryVerdict : uint8_t
  {
    k_entry_unchecked = 1,     // a class name, or a regex QC115 reports
    k_entry_used = 2,          // matches a module, an engine layer or a fused shard (else QC112)
    k_entry_renamed_regex = 4, // QC122: a compressed-tensors regex in checkpoint namespace
    k_entry_short_fp8 = 8,     // QC121: used, but not a whole module name
    k_entry_broad = 16,        // QC111: a substring engine also excludes a module it does not name
    k_entry_too_long = 32,     // QC115: longer than k_longest_entry, not evaluated
  };
  struct DecidedList
  {
    const ConfigSource* source;
    std::vector<uint8_t> verdicts;          // EntryVerdict bits, per entry
    std::vector<std::string_view> examples; // per entry: a module it overmatches, or ""
  };

  DecidedList decide_entries(const ConfigSource& s)
  {
    std::vector<Engine> engines;
    for (Engine e : m_options.engines) {
      if (engine_reads(e, s.format) && list_key_read(e, s) == s.list_key) {
        engines.push_back(e);
      }
    }
    DecidedList out{&s, std::vector<uint8_t>(s.excludes.size(), 0), {}};
    const bool stores_lm_head =
      std::any_of(m_inventory.modules.begin(), m_inventory.modules.end(), [](const Module& m) {
        return m.role == ModuleRole::lm_head &&
               (m.name == "lm_head" || m.name.ends_with(".lm_head"));
      });
    // SGLang builds a DeepSeek/GLM NextN draft's head as "model.shared_head.head" but fills it
    // from the target's head, never from the checkpoint, so no layer of qcheck's names it.
    const bool sglang_draft_head =
      std::find(engines.begin(), engines.end(), Engine::sglang) != engines.end() &&
      std::any_of(m_drafts.roots.begin(), m_drafts.roots.end(), [&](const std::string& root) {
        return sglang_nextn_root(root, m_declaration.model);
      });
    // A checkpoint that stores no LM head ties it to the embeddings: the engines still build
    // an lm_head module, and llm-compressor lists it by default. An entry for SGLang's draft
    // head (earlier versions of qcheck fix wrote one) is deliberate.
    std::vector<Probe> probes;
    if (!stores_lm_head) {
      for (Engine e : k_all_engines) {
        probes.push_back({e, "lm_head"});
      }
    }
    if (sglang_draft_head) {
      probes.push_back({Engine::sglang, "model.shared_head.head"});
    }
    // Experts stored fused: compressed-tensors engines look up names of expert 0 that no
    // module has, and an entry naming one decides the whole MoE.
    std::deque<std::string> moe_probes;
    if (s.format == QuantFormat::compressed_tensors) {
      for (Engine e : engines) {
        for (const EngineLayer& layer : layers_for(e)) {
          for (std::string& name : fused_moe_probe_names(layer)) {
            probes.push_back({e, moe_probes.emplace_back(std::move(name))});
          }
        }
      }
    }
    // A long list is checked the other way round: each name's candidates, once.
    EntryUse use;
    // (bitsandbytes on a model whose names the engines change: the index holds the stored names.)
    if (s.excludes.size() >= k_compile_threshold &&
        !(s.format == QuantFormat::bitsandbytes && bnb_names_differ(&m_declaration.model))) {
      use = entry_use(s, engines, probes, [&] { answer_plain_entries(s); });
      out.examples = std::move(use.examples);
    }
    const bool long_examples = !out.examples.empty();
    out.examples.resize(s.excludes.size());
    const std::vector<char>& matched = use.matched;
    // SGLang's DeepSeek-V3 NextN draft reads some entries renamed (sglang_draft_entry()): one
    // that reaches a layer of that draft so is used.
    std::vector<char> reaches_sglang_draft;
    if (std::find(engines.begin(), engines.end(), Engine::sglang) != engines.end() &&
        sglang_maps_draft_entries(s.format, m_declaration.model)) {
      reaches_sglang_draft.assign(s.excludes.size(), 0);
      for (const uint32_t i :
           sglang_entries_reaching_draft(s, m_declaration.model, layers_for(Engine::sglang))) {
        reaches_sglang_draft[i] = 1;
      }
    }
    for (size_t index = 0; index < s.excludes.size(); ++index) {
      const std::string_view entry = s.excludes[index];
      uint8_t& verdict = out.verdicts[index];
      if (entry.size() > k_longest_entry) {
        verdict = k_entry_unchecked | k_entry_too_long;
        continue;
      }
      const bool regex = entry.starts_with("re:");
      if (!regex && !entry.empty() && entry.find('.') == std::string::npos &&
          s.format == QuantFormat::compressed_tensors &&
          std::isupper(static_cast<unsigned char>(entry[0]))) {
        verdict = k_entry_unchecked; // a class name: cannot be checked from tensor names
        continue;
      }
      if (regex && !Regex::compile(entry.substr(3))) {
        verdict = k_entry_unchecked; // QC115 already says qcheck cannot evaluate it
        continue;
      }
      const bool glob = has_glob_chars(entry);
      // Fast path: the long list's pass saw the entry match, or a plain entry names a module,
      // a layer or an ancestor of either.
      bool used = !matched.empty() && matched[index] != 0;
      used = used || (!glob && !regex && is_known_entry(s, index));
      if (!used && matched.empty()) {
        used =
          entry_used_by_scan(s, engines, entry) ||
          std::any_of(probes.begin(), probes.end(), [&](const Probe& probe) {
            return entry_matches(probe.engine, s.format, entry, probe.name, &m_declaration.model);
          });
      }
      used = used || (!reaches_sglang_draft.empty() && reaches_sglang_draft[index] != 0);
      // MiniMax-M2 lists its routers' e_score_correction_bias: a stored parameter, not a module;
      // the entry is deliberate, not stale.
      const bool parameter = !used && !glob && !regex && names_a_stored_parameter(entry);
      used = used || parameter;
      if (s.format == QuantFormat::compressed_tensors && regex &&
          misses_renamed_prefixes(s, index)) {
        verdict |= k_entry_renamed_regex;
      }
      if (used) {
        verdict |= k_entry_used;
      }
      if (s.format == QuantFormat::fp8 && used && !parameter &&
          std::none_of(
            m_inventory.modules.begin(), m_inventory.modules.end(),
            [&](const Module& m) { return m.name == entry || vllm_namespace(m.name) == entry; }) &&
          !names_a_vllm_moe(s, entry) && reaches_a_quantizable_module(entry)) {
        verdict |= k_entry_short_fp8;
      }
      const bool substring_engine = s.format == QuantFormat::modelopt;
      if (substring_engine && !glob) {
        if (!long_examples) {
          out.examples[index] = overmatch_example(entry);
        }
        if (!out.examples[index].empty()) {
          verdict |= k_entry_broad;
        }
      }
    }
    return out;
  }

  // Whether a short list's entry matches a module (entries for routers and embeddings name real
  // modules the engines never quantize), then each reading engine's layer prefixes and fused
  // shards; for an entry blind to digits, one name per digit signature.
  bool entry_used_by_scan(const ConfigSource& s, const std::vector<Engine>& engines,
                          std::string_view entry)
  {
    if (matches_a_module_named_like_it(s.format, entry)) {
      return true;
    }
    const bool blind = blind_to_digits(entry);
    NameList& names = module_names(blind);
    for (size_t k = 0; const std::string_view* name = names.at(k); ++k) {
      if (std::any_of(k_all_engines.begin(), k_all_engines.end(), [&](Engine e) {
            return entry_matches(e, s.format, entry, *name, &m_declaration.model);
          })) {
        return true;
      }
    }
    for (Engine e : engines) {
      NameList& layers = layer_names(e, blind);
      for (size_t k = 0; const std::string_view* name = layers.at(k); ++k) {
        if (entry_matches(e, s.format, entry, *name, &m_declaration.model)) {
          return true;
        }
      }
    }
    return false;
  }

  // True when vLLM's FP8 matcher takes `entry` for one of its fused MoE layers (the layer's
  // prefix, or an entry containing it): a name vLLM uses, though no module bears it.
  bool names_a_vllm_moe(const ConfigSource& s, std::string_view entry)
  {
    const std::vector<EngineLayer>& layers = layers_for(Engine::vllm);
    return std::any_of(layers.begin(), layers.end(), [&](const EngineLayer& l) {
      return l.kind == LayerKind::fused_moe &&
             entry_matches(Engine::vllm, s.format, entry, l.prefix);
    });
  }

  void write_entry_findings(const ConfigSource& s, const DecidedList& list)
  {
    DeadRuns dead(*this, s);
    for (size_t index = 0; index < s.excludes.size(); ++index) {
      const uint8_t verdict = list.verdicts[index];
      const std::string_view entry = s.excludes[index];
      if ((verdict & k_entry_too_long) != 0) {
        // Its first 40 bytes (the JSON output must stay UTF-8).
        Finding& f =
          add(RuleId::unevaluable_entry, s.file,
              fmt::format("{} entry {} is {} bytes long ('{}'); qcheck evaluates entries of "
                          "up to {} bytes and treats it as matching nothing",
                          s.list_key, json_index(s, index), entry.size(), clipped(entry, 40),
                          k_longest_entry));
        f.pointer = entry_pointer(s, index);
        // Its text identifies it: the index in the pointer and the message moves when a patch
        // removes an earlier entry.
        f.subject = entry;
      }
      if ((verdict & k_entry_unchecked) != 0) {
        continue;
      }
      if ((verdict & k_entry_renamed_regex) != 0) {
        add(RuleId::regex_checkpoint_namespace, s.file,
            fmt::format("ignore entry '{}' is written in checkpoint namespace; vLLM does not map "
                        "regexes, and matches them against renamed prefixes (visual.X, "
                        "vision_tower.X, language_model.model.X)",
                        entry))
          .pointer = entry_pointer(s, index);
      }
      if ((verdict & k_entry_used) == 0) {
        dead.add(index);
      }
      if ((verdict & k_entry_short_fp8) != 0) {
        add(RuleId::short_fp8_entry, s.file,
            fmt::format("{} entry '{}' is not a full module name: vLLM compares exactly and "
                        "quantizes the layer anyway (BF16 cast to FP8, no error)",
                        s.list_key, entry))
          .pointer = entry_pointer(s, index);
      }
      if ((verdict & k_entry_broad) != 0) {
        add(RuleId::broad_substring_entry, s.file,
            fmt::format("{} entry '{}' is matched as a substring by vLLM and also excludes {}",
                        s.list_key, entry, list.examples[index]))
          .pointer = entry_pointer(s, index);
      }
    }
  }

  // Findings about stored modules point at the shard and header entry of the module's weight.
  void attach_shards()
  {
    for (Finding& f : m_report.findings) {
      if (!f.file.empty() || f.modules.empty()) {
        continue;
      }
      const int64_t index = m_inventory.find(f.modules.front());
      if (index < 0) {
        continue;
      }
      const Module& m = m_inventory.modules[static_cast<size_t>(index)];
      uint32_t chosen = m.tensors.front();
      for (uint32_t i : m.tensors) {
        const std::string_view param =
          split_tensor_name(m_checkpoint.tensors[i].info->name()).second;
        if (param == "weight" || param == "qweight" || param == "weight_packed") {
          chosen = i;
          break;
        }
      }
      const Tensor& t = m_checkpoint.tensors[chosen];
      f.file = m_checkpoint.shard_of(t);
      f.pointer = fmt::format("/{}", escape_pointer_token(t.info->name()));
      if (std::find(f.files.begin(), f.files.end(), f.file) == f.files.end()) {
        f.files.insert(f.files.begin(), f.file);
      }
    }
  }

  const ConfigSource* vllm_source() const { return source_for(m_declaration, Engine::vllm); }

  // Every engine's layers, and each selected engine's decision for each of its layers, computed
  // side by side: the work only reads the inventory and the declaration.
  void prepare_engines()
  {
    struct Work
    {
      Engine engine{};
      const ConfigSource* source = nullptr; // set when the engine is selected and reads it
      const CompiledList* list = nullptr;
      std::unique_ptr<CompiledList> built{}; // a list compiled here
      std::vector<EngineLayer> layers{};
      std::vector<Decision> decisions{};
    };
    std::vector<Work> work(k_all_engines.size());
    for (size_t i = 0; i < work.size(); ++i) {
      Work& w = work[i];
      w.engine = k_all_engines[i];
      const ConfigSource* source = source_for(m_declaration, w.engine);
      const bool selected = std::find(m_options.engines.begin(), m_options.engines.end(),
                                      w.engine) != m_options.engines.end();
      if (selected && source && engine_reads(w.engine, source->format)) {
        w.source = source;
        w.list = find_compiled(w.engine, *source);
      }
    }
    // The engines reading one list (config.json and hf_quant_config.json often carry the same
    // one) have it compiled together where they can share an index: one search per name.
    struct ListGroup
    {
      const ConfigSource* source;
      std::vector<size_t> work; // indices into `work`
    };
    std::vector<ListGroup> list_groups;
    // A block's GPTQ dynamic keys, compiled once for the groups that read it.
    std::map<const ConfigSource*, std::shared_ptr<const DynamicRules>> dynamic;
    for (size_t i = 0; i < work.size(); ++i) {
      if (work[i].source == nullptr || work[i].list != nullptr) {
        continue;
      }
      const auto same =
        std::find_if(list_groups.begin(), list_groups.end(), [&](const ListGroup& g) {
          return same_list(*g.source, *work[i].source) &&
                 share_list_index(work[g.work.front()].engine, work[i].engine, *work[i].source);
        });
      if (same == list_groups.end()) {
        list_groups.push_back({work[i].source, {i}});
      } else {
        same->work.push_back(i);
      }
      const ConfigSource& source = *work[i].source;
      if (source.format == QuantFormat::gptq && !source.dynamic.empty() &&
          !dynamic.contains(&source)) {
        dynamic[&source] = std::make_shared<const DynamicRules>(source.dynamic);
      }
    }
    // First the lists (a task each: a long list takes the longest to compile), the
    // engines' layers (two tasks, each one pass over half of the modules for every engine: the
    // draft root, leaf and fused siblings of a module are worked out once; the halves' layers
    // are joined after) and the layout checks, which need neither (slices of the modules, for
    // the cores the layers and a long list's compiling leave). Then the decisions, each engine's
    // in two halves. (Without the wait between the two, decisions beside the compiling of the
    // other lists cost a 50,000-entry list 8-25% more CPU time and up to 16% more wall time.)
    const size_t engines = work.size();
    const size_t list_tasks = list_groups.size();
    const ConfigSource* layout_source = m_options.decisions_only ? nullptr : vllm_source();
    // Families by config group are checked on the engines' layers, in layouts().
    std::set<QuantFamily> allowed;
    if (layout_source != nullptr) {
      if (AllowedFamilies a = allowed_layouts(*layout_source); a.per_group.empty()) {
        allowed = std::move(a.all);
      }
      m_layout_found.emplace(slice_count(m_inventory.modules.size(), m_options.threads));
    }
    const size_t layout_slices = m_layout_found ? m_layout_found->size() : 0;
    // Layer task p builds every engine's layers of the modules' part p.
    constexpr size_t k_layer_tasks = 2;
    std::array<std::vector<std::vector<EngineLayer>>, k_layer_tasks> layer_parts;
    // Last, the scans for the entries' overmatch examples (each reads every module name), for
    // decide_lists(): they too fill what the layers leave of a core.
    const std::vector<const std::string_view*> overmatch = overmatch_candidates();
    std::vector<std::string_view> examples(overmatch.size());
    const size_t first_scan = list_tasks + k_layer_tasks + layout_slices;
    // And, when decide_lists() will want the known names, their modules' part, which needs no
    // layers: a long list's compiling leaves the other core time for it.
    const bool known_early = will_need_known_names();
    const size_t tasks = first_scan + overmatch.size() + (known_early ? 1 : 0);
    run_tasks(tasks, thread_count(m_options.threads), [&](size_t task) {
      if (known_early && task == tasks - 1) {
        m_known_modules = known_module_names();
        return;
      }
      if (task >= first_scan) {
        examples[task - first_scan] = find_overmatch(*overmatch[task - first_scan]);
        return;
      }
      if (task >= list_tasks && task < list_tasks + k_layer_tasks) {
        const size_t part = task - list_tasks;
        const size_t count = m_inventory.modules.size();
        layer_parts[part] =
          engine_layers(k_all_engines, m_inventory, m_drafts, m_declaration.model,
                        count * part / k_layer_tasks, count * (part + 1) / k_layer_tasks);
        return;
      }
      if (task >= list_tasks + k_layer_tasks) {
        const size_t slice = task - list_tasks - k_layer_tasks;
        const size_t count = m_inventory.modules.size();
        for (size_t i = count * slice / layout_slices; i < count * (slice + 1) / layout_slices;
             ++i) {
          check_layout(m_inventory.modules[i], *layout_source, allowed, (*m_layout_found)[slice]);
        }
        return;
      }
      const ListGroup& g = list_groups[task];
      std::vector<Engine> readers;
      for (const size_t i : g.work) {
        readers.push_back(work[i].engine);
      }
      const auto rules = dynamic.find(g.source);
      std::vector<CompiledList> lists = CompiledList::compile(
        readers, *g.source, &m_declaration.model, rules != dynamic.end() ? rules->second : nullptr);
      lists.front().keep_module_candidates(m_inventory);
      for (size_t k = 0; k < g.work.size(); ++k) {
        Work& w = work[g.work[k]];
        w.built = std::make_unique<CompiledList>(std::move(lists[k]));
        w.list = w.built.get();
      }
    });
    for (size_t i = 0; i < engines; ++i) {
      Work& w = work[i];
      w.layers = std::move(layer_parts[0][i]);
      for (size_t part = 1; part < k_layer_tasks; ++part) {
        join_layers(w.layers, std::move(layer_parts[part][i]));
      }
      if (w.source != nullptr) {
        w.decisions.resize(w.layers.size());
      }
    }
    // Tasks taken side by side decide different halves: the engine after takes the names the
    // one before searched from the candidates kept.
    run_tasks(engines * k_halves, thread_count(m_options.threads), [&](size_t task) {
      Work& w = work[task % engines];
      if (w.source == nullptr) {
        return;
      }
      const size_t half = (task / engines + task % engines) % k_halves;
      const size_t begin = w.layers.size() * half / k_halves;
      const size_t end = w.layers.size() * (half + 1) / k_halves;
      for (size_t i = begin; i < end; ++i) {
        const EngineLayer& layer = w.layers[i];
        w.decisions[i] =
          decide(w.engine, *w.source, m_declaration.model, layer, layer.quantized > 0, w.list);
      }
    });
    for (size_t i = 0; i < overmatch.size(); ++i) {
      m_overmatch_examples.try_emplace(std::string(*overmatch[i]), examples[i]);
    }
    for (Work& w : work) {
      if (w.engine == Engine::vllm && w.list != nullptr) { // for dynamic_keys()
        m_dynamic_rules = w.list->dynamic_rules(*w.source);
      }
      if (w.built) {
        m_compiled_lists.push_back(std::move(w.built));
        m_compiled[{w.engine, w.source}] = w.list;
      }
      m_layers[w.engine] = std::move(w.layers);
      m_decisions[w.engine] = std::move(w.decisions);
    }
    m_prepared_lists = m_compiled;
  }

  // The compiled lists serve the list checks only; a long list's indexes are the largest thing
  // a run builds, so they go before the checks that follow, whose memory they become (memory
  // the process has not touched yet costs more than memory freed). (The known-name set,
  // smaller, goes after partial_experts(), its last user.)
  void release_list_indexes()
  {
    m_prepared_lists.clear();
    m_compiled.clear();
    m_compiled_lists.clear();
  }

  // A list compiled for one engine, once per run; a block holding the same list as another
  // (config.json and hf_quant_config.json) shares its compiled form.
  const CompiledList* compiled(Engine engine, const ConfigSource& source)
  {
    if (const CompiledList* list = find_compiled(engine, source)) {
      return list;
    }
    m_compiled_lists.push_back(std::make_unique<CompiledList>(engine, source));
    return m_compiled[{engine, &source}] = m_compiled_lists.back().get();
  }

  // The list already compiled for the block, or for one with the same list; null if none.
  const CompiledList* find_compiled(Engine engine, const ConfigSource& source)
  {
    const auto key = std::pair{engine, &source};
    if (const auto it = m_compiled.find(key); it != m_compiled.end()) {
      return it->second;
    }
    for (const auto& [other, list] : m_compiled) {
      if (other.first == engine && same_list(*other.second, source)) {
        return m_compiled[key] = list;
      }
    }
    return nullptr;
  }

  // Each engine's layers, built once per run.
  const std::vector<EngineLayer>& layers_for(Engine engine)
  {
    auto it = m_layers.find(engine);
    if (it == m_layers.end()) {
      it =
        m_layers.emplace(engine, engine_layers(engine, m_inventory, m_drafts, m_declaration.model))
          .first;
    }
    return it->second;
  }

  // Quantized families a declared format allows; empty: do not check.
  std::set<QuantFamily> allowed_families(const ConfigSource& s) const
  {
    switch (s.format) {
    case QuantFormat::modelopt:
      if (s.algo == "MIXED_PRECISION") {
        return {};
      }
      if (s.algo.find("FP4") != std::string::npos) {
        return {QuantFamily::modelopt_nvfp4};
      }
      if (s.algo == "MXFP8") {
        return {QuantFamily::mxfp8};
      }
      if (s.algo.starts_with("FP8")) {
        return {QuantFamily::fp8_per_tensor};
      }
      return {};
    case QuantFormat::compressed_tensors: {
      std::set<QuantFamily> out;
      for (const CtGroup& g : s.groups) {
        const std::set<QuantFamily> own = ct_group_families(s, g);
        if (own.empty()) {
          return {}; // an unknown format: anything goes
        }
        out.insert(own.begin(), own.end());
      }
      return out;
    }
    case QuantFormat::gptq:
    case QuantFormat::auto_round:
      return {QuantFamily::gptq, QuantFamily::awq};
    case QuantFormat::awq:
      return {QuantFamily::awq, QuantFamily::gptq};
    case QuantFormat::fp8:
      return {QuantFamily::fp8_block, QuantFamily::fp8_per_tensor};
    case QuantFormat::mxfp4:
      return {QuantFamily::mxfp4};
    default:
      return {};
    }
  }

  // The families a compressed-tensors group's format stores; empty for a format qcheck does not
  // know (anything goes).
  static std::set<QuantFamily> ct_group_families(const ConfigSource& s, const CtGroup& g)
  {
    const std::string& format = g.format.empty() ? s.ct_format : g.format;
    if (format == "pack-quantized" || format == "marlin-24") {
      return {QuantFamily::ct_pack};
    }
    if (format == "nvfp4-pack-quantized") {
      return {QuantFamily::ct_nvfp4_pack};
    }
    if (format == "mxfp4-pack-quantized") {
      return {QuantFamily::ct_mxfp4_pack};
    }
    if (format == "float-quantized" || format == "naive-quantized" || format == "int-quantized") {
      return {QuantFamily::fp8_per_tensor, QuantFamily::int8_scaled};
    }
    if (format == "mxfp8-quantized") {
      return {QuantFamily::mxfp8};
    }
    return {};
  }

  // What layouts() checks a module's family against: the block's, or, for a compressed-tensors
  // block whose groups store different families, the group vLLM gives the module its scheme
  // from (its layer allocates that group's parameters alone).
  struct AllowedFamilies
  {
    std::set<QuantFamily> all;                    // empty: anything goes
    std::vector<std::set<QuantFamily>> per_group; // empty: `all` for every module
  };

  AllowedFamilies allowed_layouts(const ConfigSource& s) const
  {
    AllowedFamilies out{allowed_families(s), {}};
    if (s.format != QuantFormat::compressed_tensors || out.all.empty()) {
      return out;
    }
    for (const CtGroup& g : s.groups) {
      out.per_group.push_back(ct_group_families(s, g));
    }
    if (std::all_of(out.per_group.begin(), out.per_group.end(),
                    [&](const auto& f) { return f == out.per_group.front(); })) {
      out.per_group.clear();
    }
    return out;
  }

  // What layouts() finds in a stretch of modules.
  struct LayoutFindings
  {
    std::vector<Finding> findings;
    // By family stored and the group (index in the block's groups) that declares another; -1:
    // the block as a whole.
    std::map<std::pair<QuantFamily, int>, std::vector<std::string>> wrong_family;
  };

  // R15, R16, R21, R36: tensor layouts of stored-quantized modules, as prepare_engines() found
  // them (checked in slices beside the engines' layers; nothing when no block is vLLM's). The
  // findings keep the module order.
  void layouts()
  {
    const ConfigSource* s = vllm_source();
    if (!s || !m_layout_found) {
      return;
    }
    std::vector<LayoutFindings> found = std::move(*m_layout_found);
    m_layout_found.reset();
    std::map<std::pair<QuantFamily, int>, std::vector<std::string>> wrong_family;
    for (LayoutFindings& f : found) {
      std::move(f.findings.begin(), f.findings.end(), std::back_inserter(m_report.findings));
      for (auto& [key, modules] : f.wrong_family) {
        auto& all = wrong_family[key];
        all.insert(all.end(), std::make_move_iterator(modules.begin()),
                   std::make_move_iterator(modules.end()));
      }
    }
    per_group_families(*s, wrong_family);
    for (const auto& [key, modules] : wrong_family) {
      const auto [family, group] = key;
      std::string declared = format_description(*s);
      if (group >= 0) {
        const CtGroup& g = s->groups[static_cast<size_t>(group)];
        declared = fmt::format("{} in {}, whose targets give them their scheme",
                               g.format.empty() ? s->ct_format : g.format, g.name);
      }
      Finding& f =
        add(RuleId::format_mismatch, s->file,
            fmt::format("{} module{} stored as {} but {} declares {}: {}{}", modules.size(),
                        modules.size() == 1 ? "" : "s", to_string(family), s->file, declared,
                        fmt::join(modules.begin(),
                                  modules.begin() + std::min<size_t>(3, modules.size()), ", "),
                        modules.size() > 3 ? ", ..." : ""));
      f.modules = modules;
    }
  }

  // The family check of a compressed-tensors block whose groups store different families:
  // each vLLM layer's stored-quantized modules against the group that gives the layer its
  // scheme (ct_scheme_group), or against every group's when none does; in module order.
  void per_group_families(const ConfigSource& s,
                          std::map<std::pair<QuantFamily, int>, std::vector<std::string>>& wrong)
  {
    const AllowedFamilies allowed = allowed_layouts(s);
    if (allowed.per_group.empty()) {
      return;
    }
    std::vector<int> group_of(m_inventory.modules.size(), -1);
    for (const EngineLayer& layer : layers_for(Engine::vllm)) {
      const int g = ct_scheme_group(s, layer);
      for (const uint32_t i : layer.modules) {
        group_of[i] = g;
      }
    }
    for (size_t i = 0; i < m_inventory.modules.size(); ++i) {
      const Module& m = m_inventory.modules[i];
      if (m.storage != Storage::quantized || !m.loaded || m.family == QuantFamily::unknown) {
        continue;
      }
      const int g = group_of[i];
      const std::set<QuantFamily>& own =
        g >= 0 ? allowed.per_group[static_cast<size_t>(g)] : allowed.all;
      if (!own.contains(m.family)) {
        wrong[{m.family, g}].emplace_back(m.name);
      }
    }
  }

  // layouts() for one module.
  void check_layout(const Module& m, const ConfigSource& s, const std::set<QuantFamily>& allowed,
                    LayoutFindings& found) const
  {
    if (m.storage != Storage::quantized || !m.loaded) {
      return;
    }
    const uint64_t group = s.group_size > 0 ? static_cast<uint64_t>(s.group_size) : 16;
    if (!allowed.empty() && !allowed.contains(m.family) && m.family != QuantFamily::unknown) {
      found.wrong_family[{m.family, -1}].emplace_back(m.name);
    }
    const TensorInfo* weight = find_param(m_checkpoint, m, KeyParam::weight);
    auto shape_text = [](const TensorInfo* t) {
      return t ? fmt::format("[{}]", fmt::join(t->shape(), ", ")) : std::string("missing");
    };
    if (m.family == QuantFamily::modelopt_nvfp4 && weight && weight->shape().size() == 2) {
      const TensorInfo* scale = find_param(m_checkpoint, m, KeyParam::weight_scale);
      const uint64_t out = weight->shape()[0];
      const uint64_t in = weight->shape()[1] * 2;
      const uint64_t nvfp4_group = s.format == QuantFormat::modelopt ? group : 16;
      const bool scale_ok = scale && scale->dtype == Dtype::F8_E4M3 && scale->shape().size() == 2 &&
                            scale->shape()[0] == out && in % nvfp4_group == 0 &&
                            scale->shape()[1] == in / nvfp4_group;
      if (!scale_ok) {
        Finding& f = add_to(found.findings, RuleId::nvfp4_layout, "",
                            fmt::format("'{}': NVFP4 weight U8 [{}, {}] (in = {}) needs "
                                        "weight_scale F8_E4M3 [{}, {}], found {} {}",
                                        m.name, out, in / 2, in, out, in / nvfp4_group,
                                        scale ? scale->dtype_text() : "", shape_text(scale)));
        f.modules = {std::string(m.name)};
      }
      const TensorInfo* scale2 = find_param(m_checkpoint, m, KeyParam::weight_scale_2);
      if (!scale2 || scale2->shape().size() > 1 ||
          (scale2->shape().size() == 1 && scale2->shape()[0] != 1)) {
        Finding& f = add_to(found.findings, RuleId::nvfp4_layout, "",
                            fmt::format("'{}': NVFP4 needs an F32 scalar weight_scale_2, found {}",
                                        m.name, shape_text(scale2)));
        f.modules = {std::string(m.name)};
      }
    }
    const uint64_t b0 = s.weight_block_size.size() == 2 ? s.weight_block_size[0] : 128;
    const uint64_t b1 = s.weight_block_size.size() == 2 ? s.weight_block_size[1] : 128;
    // A block of 0 elements is reported with the configuration (QC009): no layout follows.
    if (m.family == QuantFamily::fp8_block && weight && weight->shape().size() == 2 && b0 > 0 &&
        b1 > 0) {
      const TensorInfo* inv = find_param(m_checkpoint, m, KeyParam::weight_scale_inv);
      // Blocks per dimension, rounded up without overflow for any block size.
      const auto blocks = [](uint64_t n, uint64_t b) { return n / b + (n % b != 0 ? 1 : 0); };
      const std::vector<uint64_t> expected{blocks(weight->shape()[0], b0),
                                           blocks(weight->shape()[1], b1)};
      if (!inv || !std::ranges::equal(inv->shape(), expected)) {
        Finding& f =
          add_to(found.findings, RuleId::fp8_layout, "",
                 fmt::format("'{}': FP8 block weight [{}, {}] with blocks [{}, {}] needs "
                             "weight_scale_inv [{}, {}], found {}",
                             m.name, weight->shape()[0], weight->shape()[1], b0, b1, expected[0],
                             expected[1], shape_text(inv)));
        f.modules = {std::string(m.name)};
      }
    }
    if (m.family == QuantFamily::gptq || m.family == QuantFamily::awq) {
      packed_shapes(m, s, found.findings);
    }
    if (m.family == QuantFamily::fp8_per_tensor && weight && weight->shape().size() == 2) {
      const TensorInfo* scale = find_param(m_checkpoint, m, KeyParam::weight_scale);
      const uint64_t out = weight->shape()[0], in = weight->shape()[1];
      const auto is = [&](std::initializer_list<uint64_t> dims) {
        return std::ranges::equal(scale->shape(), dims);
      };
      const bool ok = scale->shape().empty() || is({1}) || is({out}) || is({out, 1}) ||
                      is({(out + 127) / 128, (in + 127) / 128}) ||
                      is({(out + 127) / 128, 1, (in + 127) / 128, 1});
      if (!ok) {
        Finding& f = add_to(found.findings, RuleId::fp8_layout, "",
                            fmt::format("'{}': FP8 weight [{}, {}] needs a scalar, [{}] or a "
                                        "128-block weight_scale, found {}",
                                        m.name, out, in, out, shape_text(scale)));
        f.modules = {std::string(m.name)};
      }
    }
    if (m.family == QuantFamily::ct_pack && !find_param(m_checkpoint, m, "weight_shape")) {
      Finding& f = add_to(found.findings, RuleId::format_mismatch, "",
                          fmt::format("'{}': pack-quantized needs weight_packed, weight_scale and "
                                      "weight_shape; weight_shape is missing",
                                      m.name));
      f.modules = {std::string(m.name)};
    }
  }

  // R36 for GPTQ/AWQ: qweight, scales and g_idx agree on packing `bits`-bit values into 32-bit
  // words: GPTQ at 2, 3, 4 or 8 bits (3-bit values straddle words: 32 inputs take 3 words), AWQ
  // at 2, 4 or 8. The bits are read from the shapes, since per-module overrides (dynamic,
  // extra_config) may change the bits of single layers.
  void packed_shapes(const Module& m, const ConfigSource& s, std::vector<Finding>& out) const
  {
    const TensorInfo* q = find_param(m_checkpoint, m, KeyParam::qweight);
    const TensorInfo* scales = find_param(m_checkpoint, m, KeyParam::scales);
    const TensorInfo* g_idx = find_param(m_checkpoint, m, "g_idx");
    if (!q || q->shape().size() != 2 || q->shape()[0] == 0 || q->shape()[1] == 0) {
      return;
    }
    const bool gptq = m.family == QuantFamily::gptq;
    // Without per-module overrides the config's bits fix the packing.
    // An auto-round block's dynamic is read by no engine.
    const bool uniform = s.bits > 0 && (s.dynamic.empty() || s.format == QuantFormat::auto_round) &&
                         s.extra_config.empty();
    const auto packs = [](uint64_t whole, uint64_t packed, uint64_t bits) {
      unsigned long long stored = 0, needed = 0;
      return checked_mul(whole, bits, needed) && checked_mul(packed, 32, stored) &&
             stored == needed;
    };
    auto valid_pack = [&](uint64_t whole, uint64_t packed) {
      if (packed == 0) {
        return false;
      }
      if (uniform) {
        return packs(whole, packed, static_cast<uint64_t>(s.bits));
      }
      return packs(whole, packed, 2) || packs(whole, packed, 4) || packs(whole, packed, 8) ||
             (gptq && packs(whole, packed, 3));
    };
    const std::string bits_text = uniform ? fmt::format("{} bits", s.bits)
                                  : gptq  ? "2, 3, 4 or 8 bits"
                                          : "2, 4 or 8 bits";
    // The engines allocate scales [in / group_size, out]: with uniform settings, the stored rows
    // must be that many (input rows: g_idx's, else what qweight packs at the block's bits).
    const auto group_rows_problem = [&](uint64_t in) -> std::string {
      if (!uniform || s.group_size <= 0 || !scales || scales->shape().size() != 2) {
        return {};
      }
      const auto group = static_cast<uint64_t>(s.group_size);
      if (in % group == 0 && scales->shape()[0] == in / group) {
        return {};
      }
      return in % group != 0
               ? fmt::format("its {} input rows are not a multiple of group_size {}", in, group)
               : fmt::format("scales [{}, {}] where {} input rows at group_size {} need {} rows",
                             scales->shape()[0], scales->shape()[1], in, group, in / group);
    };
    std::string problem;
    if (gptq) {
      if (g_idx && g_idx->shape().size() == 1 && !valid_pack(g_idx->shape()[0], q->shape()[0])) {
        problem = fmt::format("qweight [{}, {}] cannot pack the {} input rows g_idx lists at {}",
                              q->shape()[0], q->shape()[1], g_idx->shape()[0], bits_text);
      } else if (scales && scales->shape().size() == 2 && scales->shape()[1] != q->shape()[1]) {
        problem = fmt::format("qweight [{}, {}] and scales [{}, {}] disagree on the output width",
                              q->shape()[0], q->shape()[1], scales->shape()[0], scales->shape()[1]);
      } else if (g_idx && g_idx->shape().size() == 1) {
        problem = group_rows_problem(g_idx->shape()[0]);
      } else if (uniform) {
        // qweight's rows hold 32 / bits input rows each (checked: a header's shape is untrusted).
        unsigned long long bits32 = 0;
        if (checked_mul(q->shape()[0], 32, bits32) && bits32 % static_cast<uint64_t>(s.bits) == 0) {
          problem = group_rows_problem(bits32 / static_cast<uint64_t>(s.bits));
        }
      }
    } else if (scales && scales->shape().size() == 2 &&
               !valid_pack(scales->shape()[1], q->shape()[1])) {
      problem = fmt::format("AWQ qweight [{}, {}] cannot pack the {} outputs of scales [{}, {}] "
                            "at {}",
                            q->shape()[0], q->shape()[1], scales->shape()[1], scales->shape()[0],
                            scales->shape()[1], bits_text);
    } else {
      problem = group_rows_problem(q->shape()[0]); // AWQ qweight [in, out * bits / 32]
    }
    if (!problem.empty()) {
      Finding& f = add_to(out, RuleId::packed_shape, "", fmt::format("'{}': {}", m.name, problem));
      f.modules = {std::string(m.name)};
    }
  }

  // R14: MIXED_PRECISION entries against stored families.
  void mixed_precision()
  {
    const ConfigSource* s = vllm_source();
    if (!s || s->format != QuantFormat::modelopt || s->algo != "MIXED_PRECISION") {
      return;
    }
    if (s->quantized_layers.empty()) {
      add(RuleId::mixed_precision_algo, s->file,
          "MIXED_PRECISION needs a non-empty quantized_layers; vLLM refuses the checkpoint");
      return;
    }
    for (const auto& [key, algo] : s->quantized_layers) {
      for (const Module& m : m_inventory.modules) {
        if (m.name != key && !m.name.starts_with(key + ".")) {
          continue;
        }
        if (m.storage != Storage::quantized) {
          continue; // a BF16 module the engines quantize is QC101, decided with the list first
        }
        const bool fp4 = algo.find("FP4") != std::string::npos;
        const bool fp8 = algo.starts_with("FP8");
        const bool ok = (fp4 && m.family == QuantFamily::modelopt_nvfp4) ||
                        (fp8 && (m.family == QuantFamily::fp8_per_tensor ||
                                 m.family == QuantFamily::fp8_block)) ||
                        (!fp4 && !fp8);
        if (!ok) {
          Finding& f = add(RuleId::mixed_precision_algo, s->file,
                           fmt::format("quantized_layers gives '{}' quant_algo {} but '{}' is "
                                       "stored {}",
                                       key, algo, m.name, to_string(m.family)));
          f.modules = {std::string(m.name)};
        }
      }
    }
  }

  // R10 (warning half): an exclusion list naming only some experts of a fused MoE.
  // How many of each vLLM fused MoE layer's projections the list names, for partial_experts():
  // counted while the compiled lists are alive, whose candidates decide() kept per module.
  void count_listed_experts()
  {
    const ConfigSource* s = vllm_source();
    if (!s || s->excludes.empty()) {
      return;
    }
    // Globs only where vLLM reads them (ModelOpt, Quark; not FP8's or AWQ's lists).
    const bool globs = s->format == QuantFormat::modelopt || s->format == QuantFormat::quark;
    auto names = [&](std::string_view entry, std::string_view module) {
      return entry == module || (globs && has_glob_chars(entry) && fnmatch(entry, module)) ||
             is_below(module, entry);
    };
    // Entries naming experts. An entry without wildcards names only the module it spells and
    // those below it, so one that is no known name names none.
    std::vector<uint8_t> is_expert_entry(s->excludes.size(), 0);
    std::vector<EntryIndex::Spelling> expert_entries; // entry: its own number here
    const std::vector<int8_t>& known = known_answers(*s);
    for (size_t i = 0; i < s->excludes.size(); ++i) {
      const std::string_view e = s->excludes[i];
      // Most entries of a long list were answered, and most of those are no known name.
      if (known[i] == 0 && !has_glob_chars(e)) {
        continue;
      }
      if (e.size() <= k_longest_entry && e.find("experts.") != std::string::npos &&
          (has_glob_chars(e) || is_known_entry(*s, i))) {
        is_expert_entry[i] = 1;
        expert_entries.push_back({e, static_cast<uint32_t>(expert_entries.size())});
      }
    }
    // A long run of them is looked up: for ModelOpt among the candidates vLLM's compiled list
    // gives the module (indexed for substrings and globs: whatever `names` accepts occurs in
    // the name), else in an index of their own (a name or ancestor, or a glob's literal start).
    const bool looked_up = expert_entries.size() >= k_compile_threshold;
    const CompiledList* list =
      looked_up && s->format == QuantFormat::modelopt ? find_compiled(Engine::vllm, *s) : nullptr;
    std::optional<EntryIndex> index;
    if (looked_up && list == nullptr) {
      index.emplace(expert_entries, expert_entries.size(),
                    EntryIndex::Options{.mode = EntryIndex::Mode::ancestors, .globs = true});
    }
    const auto listed_module = [&](uint32_t module) {
      const std::string_view name = m_inventory.modules[module].name;
      thread_local std::vector<uint32_t> found;
      found.clear();
      if (list != nullptr) {
        list->candidates(name, module, found);
        return std::any_of(found.begin(), found.end(), [&](uint32_t i) {
          return is_expert_entry[i] != 0 && names(s->excludes[i], name);
        });
      }
      if (!index) {
        return std::any_of(expert_entries.begin(), expert_entries.end(),
                           [&](const auto& e) { return names(e.text, name); });
      }
      index->candidates(std::span(&name, 1), found);
      return std::any_of(found.begin(), found.end(),
                         [&](uint32_t i) { return names(expert_entries[i].text, name); });
    };
    // Per fused MoE layer, how many of its projections the list names; layers side by side
    // when the entries are looked up (tens of thousands of expert modules).
    const std::vector<EngineLayer>& layers = layers_for(Engine::vllm);
    m_listed_experts.assign(layers.size(), 0);
    const auto count_listed = [&](size_t l) {
      const EngineLayer& layer = layers[l];
      if (layer.kind == LayerKind::fused_moe && layer.modules.size() >= 2) {
        // Counted here, stored once: neighbouring layers' counts share a cache line, and their
        // tasks run side by side.
        size_t listed = 0;
        for (uint32_t i : layer.modules) {
          listed += listed_module(i) ? 1 : 0;
        }
        m_listed_experts[l] = listed;
      }
    };
    run_tasks(layers.size(), looked_up ? thread_count(m_options.threads) : 1, count_listed);
  }

  // A list naming some but not all expert projections of a fused MoE layer.
  void partial_experts()
  {
    const ConfigSource* s = vllm_source();
    if (!s || s->excludes.empty()) {
      return;
    }
    const std::vector<EngineLayer>& layers = layers_for(Engine::vllm);
    const std::vector<size_t>& listed = m_listed_experts;
    if (listed.size() != layers.size()) {
      return;
    }
    for (size_t l = 0; l < layers.size(); ++l) {
      const EngineLayer& layer = layers[l];
      if (listed[l] > 0 && listed[l] < layer.modules.size()) {
        // What the engines then do depends on the format (spec 2.2.1, 3.3, 3.4).
        const std::string consequence =
          s->format == QuantFormat::fp8
            ? "vLLM and SGLang then exclude the whole MoE (their FP8 rule for entries naming "
              "experts)"
          : s->format == QuantFormat::modelopt
            ? "vLLM then excludes the whole MoE (its ModelOpt rule for entries naming experts)"
          : s->format == QuantFormat::compressed_tensors
            ? "vLLM and SGLang decide the whole MoE from expert 0's projections alone"
            : "the engines decide the fused MoE as one layer";
        Finding& f =
          add(RuleId::partial_expert_exclusion, s->file,
              fmt::format("{} names {} of the {} expert projections of '{}'; {}", s->list_key,
                          listed[l], layer.modules.size(), layer.prefix, consequence));
        f.modules = {layer.prefix};
      }
    }
  }

  // Dead GPTQ `dynamic` keys (QC112 for regex lists).
  void dynamic_keys()
  {
    const ConfigSource* s = vllm_source();
    // An auto-round block's dynamic is read by no engine (QC009 says so).
    if (!s || s->format != QuantFormat::gptq) {
      return;
    }
    // Each reading engine's layer names (SGLang's differ for some VLMs: dynamic_subject()); both
    // match a fused layer by its own name, never its shards'. Not SGLang's layers built without
    // a quantization config (a Qwen3.5 tower), which read no key.
    std::vector<std::string> names;
    for (const Engine engine : {Engine::vllm, Engine::sglang}) {
      const auto decided = m_decisions.find(engine);
      if (engine == Engine::sglang &&
          (source_for(m_declaration, engine) != s || decided == m_decisions.end())) {
        continue;
      }
      const std::vector<EngineLayer>& layers = layers_for(engine);
      for (size_t i = 0; i < layers.size(); ++i) {
        // (forced_note: a key excluded it, and the override would have without one.)
        if (engine == Engine::sglang && i < decided->second.size() &&
            !decided->second[i].quantized &&
            (!decided->second[i].override_note.empty() ||
             !decided->second[i].forced_note.empty())) {
          continue;
        }
        names.push_back(dynamic_subject(engine, &m_declaration.model, layers[i].prefix));
      }
    }
    std::sort(names.begin(), names.end());
    names.erase(std::unique(names.begin(), names.end()), names.end());
    // Each name tries only the keys that can match it: a block of 10^5 keys is not 10^5 passes
    // over the names. Compiled with vLLM's list when it was.
    const std::shared_ptr<const DynamicRules> compiled =
      m_dynamic_rules ? m_dynamic_rules : std::make_shared<const DynamicRules>(s->dynamic);
    const DynamicRules& rules = *compiled;
    std::vector<char> used(rules.size(), 0);
    std::vector<uint32_t> found;
    for (const std::string& n : names) {
      found.clear();
      rules.candidates(n, found);
      for (const uint32_t i : found) {
        if (used[i] == 0 && rules.evaluable(i) && rules.regex(i)->match(n)) {
          used[i] = 1;
        }
      }
    }
    // One finding per run of consecutive dead keys (keys qcheck cannot evaluate, reported as
    // such by the engine pass, end a run), as for a list's entries.
    for (size_t first = 0; first < rules.size();) {
      if (used[first] != 0 || !rules.evaluable(first)) {
        ++first;
        continue;
      }
      size_t last = first + 1;
      while (last < rules.size() && used[last] == 0 && rules.evaluable(last)) {
        ++last;
      }
      add_dead_keys(*s, first, last, names);
      first = last;
    }
  }

  // QC112 for dynamic keys [first, last) of `s`, which match none of `names`.
  void add_dead_keys(const ConfigSource& s, size_t first, size_t last,
                     const std::vector<std::string>& names)
  {
    const DynamicRule& rule = s.dynamic[first];
    // Show a prefix the author probably meant: one containing the first key's longest literal.
    std::string literal, run;
    for (char c : rule.regex + ".") {
      if (std::isalnum(static_cast<unsigned char>(c)) || c == '_') {
        run += c;
      } else {
        literal = run.size() > literal.size() ? run : literal;
        run.clear();
      }
    }
    std::string example = names.empty() ? "" : names.front();
    for (const auto& n : names) {
      if (!literal.empty() && n.find(literal) != std::string::npos) {
        example = n;
        break;
      }
    }
    const auto pointer = [&](size_t i) {
      return fmt::format("{}/dynamic/{}", s.pointer, escape_pointer_token(s.dynamic[i].key));
    };
    const size_t count = last - first;
    Finding& f =
      add(RuleId::unused_entry, s.file,
          count == 1
            ? fmt::format("dynamic key '{}' matches no layer: vLLM applies it with "
                          "re.match (anchored at the start) to prefixes such as '{}'",
                          clipped(rule.key), example)
            : fmt::format("{} dynamic keys in a row match no layer, from '{}' to '{}': "
                          "vLLM applies them with re.match (anchored at the start) to "
                          "prefixes such as '{}'",
                          count, clipped(rule.key), clipped(s.dynamic[last - 1].key), example));
    f.pointer = pointer(first);
    if (count == 1) {
      f.suggested_entries = {rule.key};
      return;
    }
    f.end_pointer = pointer(last - 1);
    spell_run(f, count, [&](size_t i) { return clipped(s.dynamic[first + i].key); });
  }

  // R37: exact entries for the shards of a fused draft layer, without the fused name.
  void fused_draft_shards()
  {
    for (const ConfigSource& s : m_declaration.sources) {
      if (s.format != QuantFormat::compressed_tensors && s.format != QuantFormat::quark) {
        continue;
      }
      const std::set<std::string, std::less<>> listed(s.excludes.begin(), s.excludes.end());
      std::set<std::string> reported;
      for (const EngineLayer& layer : layers_for(Engine::vllm)) {
        // Experts are matched one by one whatever the drafter declares (Quark's check_children,
        // compressed-tensors' expert-0 probe, spec 5.3 and 3.3): R37 is about fused linears.
        if (!layer.draft || layer.shards.empty() || layer.kind == LayerKind::fused_moe ||
            reported.contains(layer.prefix)) {
          continue;
        }
        std::vector<std::string> named;
        for (const auto& shard : layer.shards) {
          if (listed.contains(shard)) {
            named.emplace_back(shard.substr(shard.rfind('.') + 1));
          }
        }
        const bool fused_listed =
          std::any_of(s.excludes.begin(), s.excludes.end(), [&](const auto& e) {
            return entry_matches(Engine::vllm, s.format, e, layer.prefix);
          });
        if (named.empty() || fused_listed) {
          continue;
        }
        reported.insert(layer.prefix);
        Finding& f =
          add(RuleId::fused_draft_shards, s.file,
              fmt::format("{} names {} of draft layer '{}' but not the fused name; a "
                          "drafter without packed_modules_mapping matches '{}' "
                          "literally",
                          s.list_key, fmt::join(named, ", "), layer.prefix, layer.prefix));
        f.pointer = list_pointer(s);
        f.suggested_entries = {layer.prefix};
        for (uint32_t i : layer.modules) {
          f.modules.emplace_back(m_inventory.modules[i].name);
        }
      }
    }
  }

  // R26: block_name_to_quantize entries that are string prefixes of unintended modules.
  void block_names()
  {
    const ConfigSource* s = vllm_source();
    if (!s || s->block_names.empty()) {
      return;
    }
    for (const auto& b : s->block_names) {
      for (const Module& m : m_inventory.modules) {
        if (!b.empty() && m.name.starts_with(b) && m.name.size() > b.size() &&
            m.name[b.size()] != '.' && std::isdigit(static_cast<unsigned char>(b.back())) != 0) {
          add(RuleId::block_prefix_overmatch, s->file,
              fmt::format("block_name_to_quantize entry '{}' also selects '{}' (plain startswith)",
                          b, m.name));
          break;
        }
      }
    }
  }

  // A regex that matches some renamed module in checkpoint namespace but not as vLLM names it.
  // A module another entry of the list excludes under vLLM does not count: llm-compressor's
  // examples carry both spellings (re:visual.* and re:model\.visual\..*) on purpose.
  bool misses_renamed_prefixes(const ConfigSource& s, size_t index)
  {
    const std::string_view entry = s.excludes[index];
    const auto re = Regex::compile(entry.substr(3));
    if (!re) {
      return false;
    }
    // The other entries that may exclude a module for vLLM: a long list's candidates, else all.
    const CompiledList* list =
      s.excludes.size() >= k_compile_threshold ? compiled(Engine::vllm, s) : nullptr;
    std::vector<uint32_t> found;
    for (const Module& m : m_inventory.modules) {
      const std::string renamed = vllm_namespace(m.name);
      if (renamed == m.name || !re->match(m.name) || re->match(renamed)) {
        continue;
      }
      found.clear();
      if (list != nullptr) {
        list->candidates(m.name, found);
      } else {
        for (uint32_t i = 0; i < s.excludes.size(); ++i) {
          found.push_back(i);
        }
      }
      if (std::none_of(found.begin(), found.end(), [&](uint32_t other) {
            return other != index &&
                   entry_matches(Engine::vllm, s.format, s.excludes[other], m.name);
          })) {
        return true;
      }
    }
    return false;
  }

  // "model.layers.1" is a substring of "model.layers.10...": report when a module shows it.
  // Whether an occurrence of `size` bytes at `pos` of `name` (npos: none) is not a run of whole
  // dotted components.
  static bool partial_occurrence(std::string_view name, size_t pos, size_t size)
  {
    if (pos == std::string_view::npos) {
      return false;
    }
    const size_t end = pos + size;
    return !((pos == 0 || name[pos - 1] == '.') && (end == name.size() || name[end] == '.'));
  }

  // Whether the first occurrence of `entry` in `name` is not a run of whole dotted components.
  static bool overmatches(std::string_view entry, std::string_view name)
  {
    return partial_occurrence(name, name.find(entry), entry.size());
  }

  // The first module overmatches() says `entry` excludes, or "". Remembered: config.json and
  // hf_quant_config.json often carry the same entries, and each answer scans every module.
  const std::string& overmatch_example(std::string_view entry)
  {
    auto [it, added] = m_overmatch_examples.try_emplace(std::string(entry));
    if (added) {
      it->second = find_overmatch(entry);
    }
    return it->second;
  }

  std::string_view find_overmatch(std::string_view entry) const
  {
    const std::boyer_moore_horspool_searcher search(entry.begin(), entry.end());
    for (const Module& m : m_inventory.modules) {
      const auto found = search(m.name.begin(), m.name.end()).first;
      const size_t pos = found == m.name.end() ? std::string_view::npos
                                               : static_cast<size_t>(found - m.name.begin());
      if (partial_occurrence(m.name, pos, entry.size())) {
        return m.name;
      }
    }
    return {};
  }

  // The entries decide_entries() will ask overmatch_example() about: a short ModelOpt list's
  // entries without wildcards, each once (decide_lists() may ask about fewer).
  std::vector<const std::string_view*> overmatch_candidates() const
  {
    std::vector<const std::string_view*> out;
    if (m_options.decisions_only) {
      return out;
    }
    for (const ConfigSource& s : m_declaration.sources) {
      if (s.format != QuantFormat::modelopt || s.excludes.size() >= k_compile_threshold) {
        continue;
      }
      for (const std::string_view& entry : s.excludes) {
        if (entry.size() <= k_longest_entry && !has_glob_chars(entry) &&
            std::none_of(out.begin(), out.end(),
                         [&](const std::string_view* e) { return *e == entry; })) {
          out.push_back(&entry);
        }
      }
    }
    return out;
  }

  // A scan of every layer and shard name costs about a quarter of building the set of all names
  // and ancestors (deepseek: 0.9 ms over 137,982 names, against 3.8-4.2 ms for 62,762): after
  // two, the set. A long list builds the set at once (answer_plain_entries()).
  static constexpr size_t k_known_scan_limit = 2;
  static constexpr size_t k_named_like_tries = 64;
  NameSet m_known;                        // built once scans stop paying
  std::optional<NameSet> m_known_modules; // known_module_names(), when built early
  size_t m_glob_note_budget = 1u << 20;   // fnmatch calls left for sglang_quark_glob_note()
  std::vector<size_t> m_listed_experts;   // per vLLM layer, from count_listed_experts()
  std::deque<std::pair<const ConfigSource*, std::vector<int8_t>>> m_known_entries;
  std::unordered_map<std::string, std::string> m_overmatch_examples;
  size_t m_known_scans = 0;
  const Checkpoint& m_checkpoint;
  const Inventory& m_inventory;
  const Declaration& m_declaration;
  const LintOptions& m_options;
  Drafts m_drafts;
  Report m_report;
  // A layer that would quantize modules stored unquantized, no list excluding it (QC101).
  struct Reported
  {
    Engine engine;
    std::string_view prefix; // views m_layers
    std::string detail;      // the finding's line for it
  };
  std::vector<Reported> m_reported;
  // (module, index into m_reported) per engine holding a module of such a layer; sorted by
  // module in emit_undeclared().
  std::vector<std::pair<uint32_t, uint32_t>> m_undeclared;
  std::map<std::string, Miss> m_excluded;
  std::map<std::string, Miss> m_plain;
  // QC125: token embeddings stored FP8, and the engines that build them unquantized.
  std::map<std::string, std::set<Engine>> m_quantized_embeddings;
  // Per fused layer whose shards the list excludes apart: the engines, their lines, and the
  // checkpoint modules of its shards (the finding's modules: its identity for baselines and for
  // fix's verification, which the engines named in the message are not).
  struct ShardDisagreement
  {
    std::set<Engine> engines;
    std::vector<std::string> details;
    std::set<std::string_view> modules; // views the inventory
    bool moe = false;                   // a fused MoE's experts
    // Every shard stored quantized, for every engine: the listed entries that excluded some of
    // them, which fix --remove-excluding removes (empty when that is not the remedy).
    std::set<std::string> entries;
    bool removable = true;
  };
  std::map<std::string, ShardDisagreement> m_shard_disagree;
  std::map<std::string, ShardDisagreement> m_fused_name_settings; // Decision::fused_name_settings
  // QC115: each entry an engine cannot evaluate, in the list that holds it, and those engines.
  std::map<std::pair<Unevaluable, const ConfigSource*>, std::set<Engine>> m_unevaluable;
  // A list's entries, for QC102's suggestions; built at the first.
  std::map<const ConfigSource*, std::unordered_set<std::string_view>> m_listed;
  std::optional<std::vector<std::string_view>> m_param_names; // distinct, lazily
  std::vector<bool> m_vllm_quantizable; // per module, lazily (see reaches_a_quantizable_module)
  // Each module-name component: whether in a quantizable module's name; lazily.
  std::optional<std::unordered_map<std::string_view, bool>> m_components;
  // QC110, per override note: the modules it alone keeps loadable, the engines applying it (one,
  // as each note names its engine) and the list that leaves them out.
  struct Override
  {
    std::set<std::string> modules;
    std::set<Engine> engines;
    const ConfigSource* source = nullptr;
  };
  std::map<std::string, Override> m_overrides;
  std::map<std::string, std::set<std::string>> m_notes;
  std::map<std::vector<uint32_t>, EngineLayer> m_mixed;
  std::map<Engine, const ConfigSource*> m_source_for;
  std::map<Engine, std::vector<EngineLayer>> m_layers;
  std::map<Engine, std::vector<Decision>> m_decisions; // per layer of m_layers, selected engines
  // What check_layout() found, per slice of the modules, until layouts() reports it.
  std::optional<std::vector<LayoutFindings>> m_layout_found;
  static constexpr size_t k_compile_threshold = 16;
  std::array<std::optional<NameList>, 2> m_module_names;
  std::map<std::pair<Engine, bool>, NameList> m_layer_names;
  std::vector<std::unique_ptr<CompiledList>> m_compiled_lists;
  // vLLM's block's GPTQ dynamic keys as prepare_engines() compiled them (null: not compiled);
  // kept past release_list_indexes() for dynamic_keys().
  std::shared_ptr<const DynamicRules> m_dynamic_rules;
  std::map<std::pair<Engine, const ConfigSource*>, const CompiledList*> m_compiled;
  // m_compiled as prepare_engines() left it, read by the engines' findings (never written then).
  std::map<std::pair<Engine, const ConfigSource*>, const CompiledList*> m_prepared_lists;
  bool m_inferred = false;
};

} // namespace

Report
lint(const Checkpoint& checkpoint, const Inventory& inventory, const Declaration& declaration,
     const LintOptions& options)
{
  return Linter(checkpoint, inventory, declaration, options).run();
}

Report
lint(const Checkpoint& checkpoint, const Inventory& inventory, const Declaration& declaration,
     const LintOptions& options, std::shared_ptr<const void>& tables)
{
  Linter linter(checkpoint, inventory, declaration, options);
  Report report = linter.run();
  tables = linter.take_tables();
  return report;
}

namespace {

// The spans of `pointers` in `file`'s `text`: those naming an exclusion list of `sources` read
// from this very text (EntryList::read_span()), or one of its elements, found without a walk;
// the others by locate_along_paths().
std::vector<Expected<JsonSpan>>
locate_in_config(std::string_view text, const std::string& file,
                 std::span<const ConfigSource> sources, const std::vector<std::string>& pointers)
{
  // The lists read from this text, each with its pointer: a block's list is its list_key's.
  struct Read
  {
    const EntryList* list;
    const EntryList::TextSpan* span;
    std::string pointer;
  };
  std::vector<Read> lists;
  for (const ConfigSource& s : sources) {
    if (s.file == file && s.has_list && s.positions.empty()) {
      const EntryList::TextSpan* span = s.excludes.read_span(text);
      if (span != nullptr &&
          text.substr(span->key, s.list_key.size() + 2) == fmt::format("\"{}\"", s.list_key)) {
        lists.push_back({&s.excludes, span, list_pointer(s)});
      }
    }
  }
  std::vector<size_t> begins(pointers.size());
  std::vector<size_t> ends(pointers.size());
  std::vector<std::string> others;
  std::vector<size_t> other_at; // index in `pointers` of each of `others`
  for (size_t p = 0; p < pointers.size(); ++p) {
    const std::string& pointer = pointers[p];
    std::optional<std::pair<size_t, size_t>> found;
    for (const Read& read : lists) {
      if (pointer == read.pointer) {
        found = std::pair{read.span->begin, read.span->end};
        break;
      }
      if (pointer.size() > read.pointer.size() && pointer.starts_with(read.pointer) &&
          pointer[read.pointer.size()] == '/') {
        if (const auto index =
              array_index(std::string_view(pointer).substr(read.pointer.size() + 1))) {
          found = read.list->element_token(text, *index);
          break;
        }
      }
    }
    if (found) {
      begins[p] = found->first;
      ends[p] = found->second;
    } else {
      others.push_back(pointer);
      other_at.push_back(p);
    }
  }
  if (others.size() == pointers.size()) {
    return locate_along_paths(text, pointers);
  }
  const std::vector<TextPosition> positions = positions_of(text, begins);
  std::vector<Expected<JsonSpan>> out;
  for (size_t p = 0; p < pointers.size(); ++p) {
    out.emplace_back(JsonSpan{begins[p], ends[p], positions[p]});
  }
  if (!others.empty()) {
    std::vector<Expected<JsonSpan>> walked = locate_along_paths(text, others);
    for (size_t k = 0; k < others.size(); ++k) {
      out[other_at[k]] = std::move(walked[k]);
    }
  }
  return out;
}

} // namespace

void
resolve_positions(const FileSystem& fs, const std::string& root, Report& report, unsigned threads,
                  std::span<const std::pair<std::string, PaddedBytes>> texts,
                  std::span<const ConfigSource> sources)
{
  // One scan per file, however many findings point into it; files side by side (a long list is
  // in config.json and hf_quant_config.json, megabytes each).
  std::map<std::string, std::vector<Finding*>> grouped;
  for (Finding& f : report.findings) {
    if (!f.pointer.empty() && f.file.ends_with(".json")) {
      grouped[f.file].push_back(&f);
    }
  }
  const std::vector<std::pair<std::string, std::vector<Finding*>>> by_file(grouped.begin(),
                                                                           grouped.end());
  run_tasks(by_file.size(), thread_count(threads), [&](size_t task) {
    const auto& [file, findings] = by_file[task];
    const auto known =
      std::find_if(texts.begin(), texts.end(), [&](const auto& t) { return t.first == file; });
    std::string read; // when not known
    std::string_view text = known != texts.end() ? known->second.bytes : std::string_view();
    if (known == texts.end()) {
      auto bytes = fs.read_file(join_path(root, file), k_max_config_size);
      if (!bytes) {
        return;
      }
      read = std::move(*bytes);
      text = read;
    }
    // Each finding's pointer, then the end pointers of those that span several values.
    std::vector<std::string> pointers;
    std::vector<size_t> spanning;
    for (const Finding* f : findings) {
      pointers.push_back(f->pointer);
    }
    for (size_t i = 0; i < findings.size(); ++i) {
      if (!findings[i]->end_pointer.empty()) {
        pointers.push_back(findings[i]->end_pointer);
        spanning.push_back(i);
      }
    }
    const auto spans = known != texts.end() ? locate_in_config(text, file, sources, pointers)
                                            : locate_along_paths(text, pointers);
    // The UTF-16 column of each span's begin, the spans taken in text order: each line is
    // counted once however many spans it holds (a minified file is one line).
    std::vector<uint32_t> utf16_column(spans.size(), 0);
    {
      std::vector<size_t> order;
      for (size_t i = 0; i < spans.size(); ++i) {
        if (spans[i]) {
          order.push_back(i);
        }
      }
      std::sort(order.begin(), order.end(),
                [&](size_t a, size_t b) { return spans[a]->begin < spans[b]->begin; });
      size_t line = std::string_view::npos, counted_to = 0, units = 0;
      for (const size_t i : order) {
        const size_t begin = spans[i]->begin;
        if (const size_t line_start = begin - (spans[i]->start.column - 1); line_start != line) {
          line = counted_to = line_start;
          units = 0;
        }
        units += utf16_length(text.substr(counted_to, begin - counted_to));
        counted_to = begin;
        utf16_column[i] = static_cast<uint32_t>(1 + units);
      }
    }
    for (size_t i = 0; i < findings.size(); ++i) {
      if (!spans[i]) {
        continue;
      }
      Finding& f = *findings[i];
      f.line = spans[i]->start.line;
      f.column = spans[i]->start.column;
      f.column_utf16 = utf16_column[i];
      const std::string_view value(text.data() + spans[i]->begin, spans[i]->end - spans[i]->begin);
      if (value.find('\n') == std::string_view::npos) {
        f.end_line = f.line;
        f.end_column = f.column + static_cast<uint32_t>(value.size());
        f.end_column_utf16 = f.column_utf16 + static_cast<uint32_t>(utf16_length(value));
      }
    }
    // A span ends where its last value ends (the column only when that value is on one line).
    for (size_t k = 0; k < spanning.size(); ++k) {
      Finding& f = *findings[spanning[k]];
      const auto& end = spans[findings.size() + k];
      if (f.line == 0 || !end) {
        f.end_line = f.end_column = f.end_column_utf16 = 0;
        continue;
      }
      const std::string_view value(text.data() + end->begin, end->end - end->begin);
      const auto newlines = static_cast<uint32_t>(std::count(value.begin(), value.end(), '\n'));
      f.end_line = end->start.line + newlines;
      f.end_column = newlines == 0 ? end->start.column + static_cast<uint32_t>(value.size()) : 0;
      f.end_column_utf16 = newlines == 0 ? utf16_column[findings.size() + k] +
                                             static_cast<uint32_t>(utf16_length(value))
                                         : 0;
    }
  });
}

std::vector<Expected<LintRun>>
lint_all(const FileSystem& fs, const std::vector<std::string>& paths,
         const std::function<LintOptions(const std::string&)>& options_for,
         const std::function<void(size_t, size_t)>& progress)
{
  std::vector<std::optional<Expected<LintRun>>> slots(paths.size());
  std::atomic<size_t> done{0};
  run_tasks(paths.size(), thread_count(0), [&](size_t i) {
    LintOptions options = options_for(paths[i]);
    if (paths.size() > 1) {
      options.threads = 1; // parallel across folders instead
    }
    slots[i].emplace(lint_path(fs, paths[i], options));
    if (progress) {
      progress(++done, paths.size());
    }
  });
  std::vector<Expected<LintRun>> out;
  out.reserve(paths.size());
  for (auto& slot : slots) {
    out.push_back(std::move(*slot));
  }
  return out;
}

FolderSearch
find_model_folders(const FileSystem& fs, const std::string& root)
{
  FolderSearch search;
  std::vector<std::pair<std::string, int>> stack{{root, 0}};
  while (!stack.empty()) {
    auto [dir, depth] = stack.back();
    stack.pop_back();
    auto names = fs.list_dir(dir);
    if (!names) {
      search.errors.push_back(names.error());
      continue;
    }
    bool config = false, weights = false;
    for (const auto& name : *names) {
      const std::string path = join_path(dir, name);
      if (name == "config.json") {
        config = true;
      } else if (name.ends_with(".safetensors") || name.ends_with(".safetensors.index.json")) {
        weights = true;
      } else if (!name.starts_with(".")) {
        // Links to folders are not followed (as find without -L): a link to an ancestor would
        // walk the same folders again and again.
        const FileInfo info = fs.stat(path);
        if (info.kind == FileKind::directory && !info.is_symlink) {
          if (depth < k_max_search_depth) {
            stack.emplace_back(path, depth + 1);
          } else {
            search.too_deep.push_back(path);
          }
        }
      }
    }
    if (config && weights) {
      search.folders.push_back(dir);
    }
  }
  std::sort(search.folders.begin(), search.folders.end());
  std::sort(search.errors.begin(), search.errors.end());
  std::sort(search.too_deep.begin(), search.too_deep.end());
  return search;
}

Expected<LintRun>
lint_path(const FileSystem& fs, const std::string& path, const LintOptions& options)
{
  // The configuration is read while the shard headers are.
  Declaration declaration;
  LoadOptions load{options.threads};
  load.alongside = [&](const std::string& root) { declaration = read_declaration(fs, root); };
  auto checkpoint = load_checkpoint(fs, path, load);
  if (!checkpoint) {
    return unexpected(checkpoint.error());
  }
  LintRun run;
  run.checkpoint = std::move(checkpoint).value();
  run.inventory = build_inventory(run.checkpoint, options.threads);
  run.declaration = std::move(declaration);
  run.drafts = locate_drafts(run.declaration.model, run.checkpoint, run.inventory);
  run.report = lint(run.checkpoint, run.inventory, run.declaration, options, run.tables);
  run.report.root = run.checkpoint.root; // a single shard's folder: findings name its files
  resolve_positions(fs, run.checkpoint.root, run.report, options.threads, run.declaration.texts,
                    run.declaration.sources);
  return run;
}

Report
relint(const FileSystem& fs, const LintRun& run, const LintOptions& options)
{
  const Declaration declaration = read_declaration(fs, run.checkpoint.root);
  Report report = lint(run.checkpoint, run.inventory, declaration, options);
  report.root = run.report.root;
  return report;
}

} // namespace qcheck
