#include "qcheck/lint.hpp"

#include <algorithm>
#include <fmt/format.h>
#include <fmt/ranges.h>
#include <map>
#include <set>

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

// The error an engine prints when it allocates quantized parameters for a BF16 tensor.
std::string
engine_error(const ConfigSource& s)
{
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

struct Miss
{
  std::set<Engine> engines;
  std::vector<std::string> details;
};

class Linter
{
public:
  Linter(const Checkpoint& checkpoint, const Inventory& inventory, const Declaration& declaration,
         const LintOptions& options)
    : m_checkpoint(checkpoint), m_inventory(inventory), m_declaration(declaration),
      m_options(options), m_drafts(locate_drafts(declaration.model, inventory))
  {
  }

  Report run()
  {
    input_problems();
    divergence();
    drafts();
    for (Engine engine : m_options.engines) {
      check_engine(engine);
    }
    emit_undeclared();
    emit_stored_mixtures();
    entries();
    std::stable_sort(m_report.findings.begin(), m_report.findings.end(),
                     [](const Finding& a, const Finding& b) { return a.severity > b.severity; });
    return std::move(m_report);
  }

private:
  Finding& add(RuleId id, std::string file, std::string message)
  {
    Finding f;
    f.rule = id;
    f.severity = rule(id).severity;
    f.file = std::move(file);
    f.message = std::move(message);
    if (!f.file.empty()) {
      f.files.push_back(f.file);
    }
    m_report.findings.push_back(std::move(f));
    return m_report.findings.back();
  }

  void input_problems()
  {
    for (const auto& p : m_checkpoint.problems) {
      Finding& f = add(rule_for(p.issue), p.file, p.message);
      if (p.is_warning) {
        f.severity = Severity::warning;
      }
    }
    for (const auto& p : m_declaration.problems) {
      add(p.is_warning ? RuleId::unknown_quant_method : RuleId::config_invalid, p.file, p.message);
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
      f.files.push_back("config.json");
    }
    const std::set<std::string> a(config->excludes.begin(), config->excludes.end());
    const std::set<std::string> b(hf->excludes.begin(), hf->excludes.end());
    if (a != b) {
      std::vector<std::string> only_config, only_hf;
      std::set_difference(a.begin(), a.end(), b.begin(), b.end(), std::back_inserter(only_config));
      std::set_difference(b.begin(), b.end(), a.begin(), a.end(), std::back_inserter(only_hf));
      Finding& f = add(RuleId::config_divergence, "hf_quant_config.json",
                       fmt::format("exclude_modules differs from config.json's {}: {} entr{} only "
                                   "in config.json, {} only here",
                                   config->list_key, only_config.size(),
                                   only_config.size() == 1 ? "y" : "ies", only_hf.size()));
      f.files.push_back("config.json");
      for (const auto& e : only_config) {
        f.details.push_back(fmt::format("only in config.json: '{}'", e));
      }
      for (const auto& e : only_hf) {
        f.details.push_back(fmt::format("only in hf_quant_config.json: '{}'", e));
      }
      f.suggested_entries = only_config;
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
      add(RuleId::mtp_missing, "config.json",
          fmt::format("{} = {} declares draft layer{} {} but no tensor of {} is stored; vLLM "
                      "stops with `MTP speculative decoding layer {} weights missing from "
                      "checkpoint`",
                      m_declaration.model.mtp_key, m_declaration.model.num_mtp_layers,
                      m_drafts.missing.size() == 1 ? "" : "s", fmt::join(m_drafts.missing, ", "),
                      m_drafts.missing.size() == 1 ? "it" : "them", m_drafts.missing.front()));
    }
    if (!quantized_declared()) {
      return;
    }
    for (const auto& root : m_drafts.roots) {
      size_t quantized = 0, unquantized = 0;
      for (const Module& m : m_inventory.modules) {
        if (m_drafts.root_of(m.name) != nullptr && *m_drafts.root_of(m.name) == root &&
            (m.role == ModuleRole::linear || m.role == ModuleRole::expert ||
             m.role == ModuleRole::fused_experts)) {
          (m.storage == Storage::quantized ? quantized : unquantized) += 1;
        }
      }
      if (quantized > 0 && unquantized > 0) {
        add(RuleId::mtp_partially_quantized, "",
            fmt::format("draft '{}' stores {} projection{} quantized and {} unquantized", root,
                        quantized, quantized == 1 ? "" : "s", unquantized));
      }
    }
  }

  void check_engine(Engine engine)
  {
    const ConfigSource* source = source_for(m_declaration, engine);
    if (!source || !engine_reads(engine, source->format)) {
      return;
    }
    const ModelInfo& model = m_declaration.model;
    for (const EngineLayer& layer : engine_layers(engine, m_inventory, m_drafts, model)) {
      size_t quantized = 0;
      for (uint32_t i : layer.modules) {
        quantized += m_inventory.modules[i].storage == Storage::quantized ? 1 : 0;
      }
      const bool all_quantized = quantized == layer.modules.size();
      const bool none_quantized = quantized == 0;
      if (!all_quantized && !none_quantized) {
        m_mixed.emplace(layer.prefix, layer);
      }
      const Decision d = decide(engine, *source, model, layer, quantized > 0);
      for (const auto& e : d.errors) {
        m_unevaluable[e].insert(engine);
      }
      if (d.shards_disagree) {
        m_shard_disagree[layer.prefix].engines.insert(engine);
        m_shard_disagree[layer.prefix].details.push_back(
          fmt::format("{}: {} ({})", display_name(engine), d.shard_detail, layer.prefix));
      }
      const std::string where = fmt::format("{} checks '{}'", display_name(engine), layer.prefix);
      if (layer.kind == LayerKind::plain_linear && quantized > 0) {
        for (uint32_t i : layer.modules) {
          auto& miss = m_plain[m_inventory.modules[i].name];
          miss.engines.insert(engine);
        }
        continue;
      }
      if (none_quantized && d.quantized && !d.inferred) {
        for (uint32_t i : layer.modules) {
          auto& miss = m_undeclared[m_inventory.modules[i].name];
          miss.engines.insert(engine);
          miss.details.push_back(fmt::format("{}: {}", where, d.reason));
        }
        if (!layer.namespace_note.empty()) {
          m_notes[layer.draft_root].insert(layer.namespace_note);
        }
        m_source_for[engine] = source;
      } else if (all_quantized && !d.quantized && !d.inferred && d.override_note.empty()) {
        for (uint32_t i : layer.modules) {
          auto& miss = m_excluded[m_inventory.modules[i].name];
          miss.engines.insert(engine);
          miss.details.push_back(fmt::format("{}: {}", where, d.reason));
        }
      } else if (none_quantized && !d.override_note.empty()) {
        m_overrides[d.override_note].insert(layer.prefix);
      }
      if (d.inferred && engine == Engine::vllm) {
        m_inferred = true;
      }
    }
  }

  void emit_undeclared()
  {
    // Group by draft root or layer, and by the set of failing engines.
    std::map<std::string, std::pair<std::set<Engine>, std::vector<std::string>>> groups;
    for (const auto& [module, miss] : m_undeclared) {
      const std::string* root = m_drafts.root_of(module);
      auto& [engines, modules] = groups[root ? *root : group_key(module)];
      engines.insert(miss.engines.begin(), miss.engines.end());
      modules.push_back(module);
    }
    for (const auto& [where, group] : groups) {
      const auto& [engines, modules] = group;
      const bool is_draft = m_drafts.root_of(modules.front()) != nullptr;
      const ConfigSource& source = *m_source_for.at(*engines.begin());
      size_t tensors = 0;
      std::set<std::string> files, dtypes;
      for (const auto& name : modules) {
        const Module& m = m_inventory.modules[static_cast<size_t>(m_inventory.find(name))];
        tensors += m.tensors.size();
        for (uint32_t t : m.tensors) {
          files.insert(m_checkpoint.shard_of(m_checkpoint.tensors[t]));
          dtypes.insert(m_checkpoint.tensors[t].info->dtype_name);
        }
      }
      std::vector<std::string> list_files;
      for (const auto& s : m_declaration.sources) {
        if (s.format == source.format) {
          list_files.push_back(s.file);
        }
      }
      Finding& f = add(
        RuleId::undeclared_unquantized, source.file,
        fmt::format("{}{}: {} module{} ({} tensors, {}) stored unquantized but declared {} "
                    "quantized; {} {} with {}",
                    is_draft ? "MTP/NextN draft " : "", where, modules.size(),
                    modules.size() == 1 ? "" : "s", tensors, fmt::join(dtypes, "/"),
                    format_description(source), engines_text(engines),
                    engines.size() == 1 ? "fails" : "fail", engine_error(source)));
      f.modules = modules;
      f.engines.assign(engines.begin(), engines.end());
      f.files = list_files;
      f.files.insert(f.files.end(), files.begin(), files.end());
      std::set<std::string> seen;
      for (const auto& name : modules) {
        for (const auto& d : m_undeclared.at(name).details) {
          if (seen.insert(d).second && seen.size() <= 6) {
            f.details.push_back(d);
          }
        }
      }
      if (seen.size() > 6) {
        f.details.push_back(fmt::format("... and {} more engine prefixes", seen.size() - 6));
      }
      for (const auto& note : m_notes[where]) {
        f.details.push_back(note);
      }
      suggest(f, source, where, is_draft, modules);
    }
    for (const auto& [module, miss] : m_excluded) {
      Finding& f = add(RuleId::excluded_but_quantized, "",
                       fmt::format("'{}' is stored quantized but {} exclude{} it", module,
                                   engines_text(miss.engines),
                                   miss.engines.size() == 1 ? "s" : ""));
      f.modules = {module};
      f.engines.assign(miss.engines.begin(), miss.engines.end());
      f.details = miss.details;
      f.fix = "remove the entry that catches it, or store the module unquantized";
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
    for (const auto& [note, prefixes] : m_overrides) {
      Finding& f = add(RuleId::engine_override, "",
                       fmt::format("{} load{} only because {}", fmt::join(prefixes, ", "),
                                   prefixes.size() == 1 ? "s" : "", note));
      f.modules.assign(prefixes.begin(), prefixes.end());
      f.fix = "declare the exclusion so every engine agrees";
    }
    for (const auto& [prefix, miss] : m_shard_disagree) {
      Finding& f = add(RuleId::fused_shards_disagree, "",
                       fmt::format("the shards of fused layer '{}' are not excluded alike; {} "
                                   "stop{} with `Detected some but not all shards of {} are "
                                   "quantized`",
                                   prefix, engines_text(miss.engines),
                                   miss.engines.size() == 1 ? "s" : "", prefix));
      f.details = miss.details;
      f.engines.assign(miss.engines.begin(), miss.engines.end());
      f.fix = "list every shard of the fused layer, or none";
    }
    for (const auto& [entry, engines] : m_unevaluable) {
      Finding& f = add(RuleId::unevaluable_entry, "",
                       fmt::format("cannot evaluate {} exactly; modules it was meant to match "
                                   "are treated as unmatched",
                                   entry));
      f.engines.assign(engines.begin(), engines.end());
    }
    if (m_inferred) {
      add(RuleId::inferred_exclusions, "config.json",
          "no explicit module list: vLLM infers which Linear layers are quantized from the "
          "stored dtypes");
    }
  }

  void suggest(Finding& f, const ConfigSource& source, const std::string& where, bool is_draft,
               const std::vector<std::string>& modules)
  {
    // Whole subtree unquantized? Then one pattern per spelling.
    bool whole = true;
    const std::string prefix = where + ".";
    for (const Module& m : m_inventory.modules) {
      if (m.name.starts_with(prefix) && m.storage == Storage::quantized) {
        whole = false;
        break;
      }
    }
    std::vector<std::string> spellings{where};
    if (is_draft && strip_language_model(where) != where) {
      spellings.push_back(strip_language_model(where));
    }
    switch (source.format) {
    case QuantFormat::modelopt:
    case QuantFormat::quark:
      if (whole) {
        for (const auto& s : spellings) {
          f.suggested_entries.push_back(s + "*");
        }
      } else {
        f.suggested_entries = modules;
      }
      break;
    case QuantFormat::compressed_tensors:
    case QuantFormat::fp8:
    case QuantFormat::awq:
    case QuantFormat::bitsandbytes:
      f.suggested_entries = modules;
      break;
    case QuantFormat::gptq:
      f.suggested_entries.push_back(fmt::format("-:{}\\..*", regex_escape(vllm_namespace(where))));
      break;
    case QuantFormat::auto_round:
      for (const auto& s : spellings) {
        f.suggested_entries.push_back(s);
      }
      break;
    default:
      break;
    }
    if (!f.suggested_entries.empty()) {
      std::vector<std::string> quoted;
      for (const auto& e : f.suggested_entries) {
        quoted.push_back(fmt::format("\"{}\"", e));
      }
      std::vector<std::string> lists;
      for (const auto& s : m_declaration.sources) {
        if (s.format == source.format) {
          lists.push_back(fmt::format("{} {}", s.file, s.list_key));
        }
      }
      f.fix = fmt::format("add {} to {} (qcheck fix --inplace)", fmt::join(quoted, ", "),
                          fmt::join(lists, " and "));
    }
  }

  void emit_stored_mixtures()
  {
    for (const auto& [prefix, layer] : m_mixed) {
      std::vector<std::string> q, u;
      for (uint32_t i : layer.modules) {
        const Module& m = m_inventory.modules[i];
        (m.storage == Storage::quantized ? q : u).push_back(m.name);
      }
      const bool moe = layer.kind == LayerKind::fused_moe;
      Finding& f = add(moe ? RuleId::experts_disagree : RuleId::fused_shards_disagree, "",
                       fmt::format("{} '{}' mixes stored quantized ({}) and unquantized ({}) "
                                   "members; engines decide once for the fused layer",
                                   moe ? "fused MoE" : "fused layer", prefix, q.size(), u.size()));
      f.modules = q;
      f.modules.insert(f.modules.end(), u.begin(), u.end());
      f.details.push_back(fmt::format("unquantized: {}", fmt::join(u, ", ")));
    }
  }

  // Entries that match no module under any engine, and short substring entries.
  void entries()
  {
    for (const ConfigSource& s : m_declaration.sources) {
      if (s.format != QuantFormat::modelopt && s.format != QuantFormat::compressed_tensors &&
          s.format != QuantFormat::quark && s.format != QuantFormat::fp8 &&
          s.format != QuantFormat::awq && s.format != QuantFormat::bitsandbytes) {
        continue;
      }
      std::vector<std::vector<EngineLayer>> layers;
      std::vector<Engine> engines;
      for (Engine e : m_options.engines) {
        if (engine_reads(e, s.format)) {
          engines.push_back(e);
          layers.push_back(engine_layers(e, m_inventory, m_drafts, m_declaration.model));
        }
      }
      for (const std::string& entry : s.excludes) {
        if (!entry.starts_with("re:") && entry.find('.') == std::string::npos &&
            s.format == QuantFormat::compressed_tensors &&
            std::isupper(static_cast<unsigned char>(entry[0]))) {
          continue; // a class name: cannot be checked from tensor names
        }
        bool used = false;
        for (size_t i = 0; i < engines.size() && !used; ++i) {
          for (const EngineLayer& layer : layers[i]) {
            std::vector<std::string> names{layer.prefix};
            names.insert(names.end(), layer.shards.begin(), layer.shards.end());
            for (uint32_t m : layer.modules) {
              names.push_back(m_inventory.modules[m].name);
            }
            if (std::any_of(names.begin(), names.end(), [&](const std::string& n) {
                  return entry_matches(engines[i], s.format, entry, n);
                })) {
              used = true;
              break;
            }
          }
        }
        // Entries for modules engines never quantize (routers, embeddings) still name real
        // modules: only an entry that matches no module name at all is dead.
        if (!used) {
          for (const Module& m : m_inventory.modules) {
            if (entry_matches(engines.empty() ? Engine::vllm : engines[0], s.format, entry,
                              m.name)) {
              used = true;
              break;
            }
          }
        }
        if (!used) {
          Finding& f = add(RuleId::unused_entry, s.file,
                           fmt::format("{} entry '{}' matches no module of the checkpoint",
                                       s.list_key, entry));
          f.suggested_entries = {entry};
        }
        if (s.format == QuantFormat::modelopt && !has_glob(entry) && is_short_substring(entry)) {
          add(RuleId::broad_substring_entry, s.file,
              fmt::format("{} entry '{}' is matched as a substring by vLLM and also excludes {}",
                          s.list_key, entry, overmatch_example(entry)));
        }
      }
    }
  }

  static bool has_glob(std::string_view e) { return e.find_first_of("*?[") != std::string::npos; }

  // "model.layers.1" is a substring of "model.layers.10...": report when a module shows it.
  bool is_short_substring(const std::string& entry) const { return !overmatch_example(entry).empty(); }

  std::string overmatch_example(const std::string& entry) const
  {
    for (const Module& m : m_inventory.modules) {
      const size_t pos = m.name.find(entry);
      if (pos == std::string::npos) {
        continue;
      }
      const size_t end = pos + entry.size();
      const bool left_ok = pos == 0 || m.name[pos - 1] == '.';
      const bool right_ok = end == m.name.size() || m.name[end] == '.';
      if (!left_ok || !right_ok) {
        return m.name;
      }
    }
    return {};
  }

  const Checkpoint& m_checkpoint;
  const Inventory& m_inventory;
  const Declaration& m_declaration;
  const LintOptions& m_options;
  Drafts m_drafts;
  Report m_report;
  std::map<std::string, Miss> m_undeclared;
  std::map<std::string, Miss> m_excluded;
  std::map<std::string, Miss> m_plain;
  std::map<std::string, Miss> m_shard_disagree;
  std::map<std::string, std::set<Engine>> m_unevaluable;
  std::map<std::string, std::set<std::string>> m_overrides;
  std::map<std::string, std::set<std::string>> m_notes;
  std::map<std::string, EngineLayer> m_mixed;
  std::map<Engine, const ConfigSource*> m_source_for;
  bool m_inferred = false;
};

} // namespace

Report
lint(const Checkpoint& checkpoint, const Inventory& inventory, const Declaration& declaration,
     const LintOptions& options)
{
  return Linter(checkpoint, inventory, declaration, options).run();
}

Expected<LintRun>
lint_path(const FileSystem& fs, const std::string& path, const LintOptions& options)
{
  auto checkpoint = load_checkpoint(fs, path, LoadOptions{options.threads});
  if (!checkpoint) {
    return unexpected(checkpoint.error());
  }
  LintRun run;
  run.checkpoint = std::move(checkpoint).value();
  run.inventory = build_inventory(run.checkpoint);
  run.declaration = read_declaration(fs, run.checkpoint.root);
  run.drafts = locate_drafts(run.declaration.model, run.inventory);
  run.report = lint(run.checkpoint, run.inventory, run.declaration, options);
  run.report.root = path;
  return run;
}

} // namespace qcheck
