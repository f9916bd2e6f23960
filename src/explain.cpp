#include "qcheck/explain.hpp"

#include <algorithm>
#include <array>
#include <limits>
#include <numeric>
#include <fmt/format.h>
#include <fmt/ranges.h>

#include "qcheck/patterns.hpp"
#include "qcheck/regex.hpp"

namespace qcheck {

namespace {

// Appends one line: control characters in it (a tensor name's, an entry's) escaped as lint and
// inspect escape them, so no name can forge a line (a CI workflow command) or send escapes.
void
add_line(std::string& out, std::string_view line)
{
  out += printable(line);
  out += '\n';
}

std::string_view
kind_text(LayerKind kind)
{
  switch (kind) {
  case LayerKind::linear:
    return "Linear";
  case LayerKind::fused_moe:
    return "FusedMoE";
  case LayerKind::lm_head:
    return "ParallelLMHead";
  case LayerKind::plain_linear:
    return "plain nn.Linear";
  case LayerKind::router:
    return "ReplicatedLinear router";
  }
  return "?";
}

// The modules `name` selects: the module of that name, the module holding a tensor of that
// name, or (a glob) every module it matches.
std::vector<size_t>
select_modules(const Checkpoint& checkpoint, const Inventory& inventory, const std::string& name)
{
  const auto holds_tensor = [&](const Module& m) {
    return std::any_of(m.tensors.begin(), m.tensors.end(),
                       [&](uint32_t t) { return checkpoint.tensors[t].info->name() == name; });
  };
  std::vector<size_t> out;
  for (size_t i = 0; i < inventory.modules.size(); ++i) {
    const Module& module = inventory.modules[i];
    const std::string_view m = module.name;
    if (m == name || (m == split_tensor_name(name).first && holds_tensor(module)) ||
        (has_glob_chars(name) && fnmatch(name, m))) {
      out.push_back(i);
    }
  }
  return out;
}

std::string
closest_module(const Inventory& inventory, const std::string& name)
{
  std::string best;
  size_t best_common = 0;
  for (const Module& m : inventory.modules) {
    size_t common = 0;
    while (common < m.name.size() && common < name.size() && m.name[common] == name[common]) {
      ++common;
    }
    if (common > best_common) {
      best_common = common;
      best = m.name;
    }
  }
  return best;
}

} // namespace

std::vector<InputProblem>
input_problems(const LintRun& run)
{
  std::vector<InputProblem> out;
  for (const Finding& f : run.report.findings) {
    const Rule& r = rule(f.rule);
    if (r.code.starts_with("QC0")) {
      out.push_back(
        {f.severity, printable(fmt::format("{}: {} [{} {}]", finding_path(run.report, f), f.message,
                                           r.code, r.name))});
    }
  }
  return out;
}

Expected<std::string>
explain_module(const LintRun& run, const std::string& name, const std::vector<Engine>& engines)
{
  const std::vector<size_t> selected = select_modules(run.checkpoint, run.inventory, name);
  if (selected.empty()) {
    const std::string hint = closest_module(run.inventory, name);
    return unexpected(
      printable(fmt::format("no module '{}' in {}{}", name, run.checkpoint.root,
                            hint.empty() ? "" : fmt::format("; closest: '{}'", hint))));
  }
  std::string out;
  std::vector<std::pair<Engine, std::vector<EngineLayer>>> layers;
  for (const Engine engine : engines) {
    layers.emplace_back(engine,
                        engine_layers(engine, run.inventory, run.drafts, run.declaration.model));
  }
  for (size_t index : selected) {
    const Module& m = run.inventory.modules[index];
    add_line(out, m.name);
    add_line(out, fmt::format("  stored: {} {} ({}){}", to_string(m.role), to_string(m.storage),
                              m.family == QuantFamily::none ? "float" : to_string(m.family),
                              run.drafts.root_of(m.name)
                                ? fmt::format(", MTP/NextN draft '{}'", *run.drafts.root_of(m.name))
                                : ""));
    for (uint32_t t : m.tensors) {
      const Tensor& tensor = run.checkpoint.tensors[t];
      add_line(out,
               fmt::format("    {} {} [{}]  {}", tensor.info->name(), tensor.info->dtype_text(),
                           fmt::join(tensor.info->shape(), ", "), run.checkpoint.shard_of(tensor)));
    }
    for (const auto& [engine, engine_layer_list] : layers) {
      const ConfigSource* source = source_for(run.declaration, engine);
      auto it =
        std::find_if(engine_layer_list.begin(), engine_layer_list.end(), [&](const EngineLayer& l) {
          return std::find(l.modules.begin(), l.modules.end(), index) != l.modules.end();
        });
      if (it == engine_layer_list.end()) {
        const bool draft_head =
          engine == Engine::sglang && m.role == ModuleRole::lm_head &&
          std::any_of(run.drafts.roots.begin(), run.drafts.roots.end(), [&](const auto& root) {
            return m.name.starts_with(root + ".") && sglang_nextn_root(root, run.declaration.model);
          });
        if (draft_head) {
          add_line(
            out, fmt::format("  {}: builds the draft's head as 'model.shared_head.head' and fills "
                             "it from the target model's head, never from this tensor",
                             display_name(engine)));
        } else if (const std::string unbuilt =
                     unbuilt_draft_note(engine, run.declaration.model, m.name);
                   !unbuilt.empty()) {
          add_line(out,
                   fmt::format("  {}: builds no layer for it: {}", display_name(engine), unbuilt));
        } else {
          add_line(out, fmt::format("  {}: not a quantizable layer ({})", display_name(engine),
                                    to_string(m.role)));
        }
        continue;
      }
      if (!source || !engine_reads(engine, source->format)) {
        add_line(out, fmt::format("  {}: checks '{}' ({}); reads no quantization config it knows",
                                  display_name(engine), it->prefix, kind_text(it->kind)));
        continue;
      }
      const Decision d = decide(engine, *source, run.declaration.model, *it, it->quantized > 0);
      // SGLang's NextN eh_proj under Quark is a ReplicatedLinear with the config.
      const std::string_view kind =
        it->kind == LayerKind::plain_linear && !builds_plain_linear(engine, source->format, *it)
          ? "ReplicatedLinear"
          : kind_text(it->kind);
      add_line(out, fmt::format("  {}: checks '{}' ({}) against {} {}: {}{}", display_name(engine),
                                it->prefix, kind, source->file, list_key_read(engine, *source),
                                d.quantized ? "QUANTIZED" : "excluded",
                                d.override_note.empty()
                                  ? (d.reason.empty() ? "" : fmt::format(" — {}", d.reason))
                                  : fmt::format(" — {}", d.override_note)));
      if (!it->namespace_note.empty()) {
        add_line(out, fmt::format("    {}", it->namespace_note));
      }
      if (!d.forced_note.empty()) {
        add_line(out, fmt::format("    without the entry too: {}", d.forced_note));
      }
      if (d.shards_disagree) {
        add_line(out, fmt::format("    shards disagree: {}", d.shard_detail));
      }
      if (!d.fused_name_settings.empty()) {
        add_line(out, fmt::format("    read by its name: {}", d.fused_name_settings));
      }
    }
  }
  return out;
}

namespace {

// What one engine's layers decide of one block's exclusion entries: per entry, how many layers
// and the first four; for an entry deciding none, the first module of the inventory it names.
struct EntryCover
{
  uint32_t layers = 0;
  std::array<uint32_t, 4> first{};
  uint32_t last = std::numeric_limits<uint32_t>::max(); // the layer counted last
  int64_t module = -1;
};

// Each layer's names (its prefix and shards, or a compressed-tensors fused MoE's probe names)
// and each module's name are searched in the list's index once: the candidates only are matched
// (every entry where the engine matches this format without an index).
std::vector<EntryCover>
cover_entries(const LintRun& run, Engine engine, const ConfigSource& s,
              const std::vector<EngineLayer>& layers,
              const std::vector<std::vector<std::string>>& probes)
{
  std::vector<EntryCover> cover(s.excludes.size());
  const auto count = [&](uint32_t entry, uint32_t layer) {
    EntryCover& c = cover[entry];
    if (c.layers < c.first.size()) {
      c.first[c.layers] = layer;
    }
    ++c.layers;
    c.last = layer;
  };
  // SGLang's DeepSeek-V3 NextN draft reads some entries renamed: on its draft layers those are
  // matched as read, not through the index.
  std::vector<std::pair<uint32_t, std::string>> renamed;
  std::vector<char> is_renamed(s.excludes.size(), 0);
  if (engine == Engine::sglang) {
    for (uint32_t i = 0; i < s.excludes.size(); ++i) {
      if (auto read = sglang_draft_entry(s.format, run.declaration.model, s.excludes[i])) {
        renamed.emplace_back(i, std::move(*read));
        is_renamed[i] = 1;
      }
    }
  }
  const CompiledList list(engine, s);
  std::vector<uint32_t> found;
  const auto search = [&](std::string_view name) {
    found.clear();
    if (list.indexed()) {
      list.candidates(name, found);
    } else {
      found.resize(s.excludes.size());
      std::iota(found.begin(), found.end(), 0u);
    }
  };
  std::vector<std::string_view> names;
  for (uint32_t l = 0; l < layers.size(); ++l) {
    const EngineLayer& layer = layers[l];
    names.clear();
    if (s.format == QuantFormat::compressed_tensors && !probes[l].empty()) {
      names.assign(probes[l].begin(), probes[l].end());
    } else {
      // The names the engine compares (decide()'s: the shards, the prefix, or both).
      const Compared compared = compared_names_of(engine, s.format, layer);
      if (layer.shards.empty() || compared != Compared::shards) {
        names.push_back(layer.prefix);
      }
      for (size_t j = 0; compared != Compared::prefix && j < layer.shards.size(); ++j) {
        names.push_back(layer.shards[j]);
      }
    }
    const bool reads_renamed = engine == Engine::sglang && layer.draft;
    for (const std::string_view name : names) {
      search(name);
      for (const uint32_t i : found) {
        if (cover[i].last != l && !(reads_renamed && is_renamed[i]) &&
            entry_matches(engine, s.format, s.excludes[i], name, &run.declaration.model)) {
          count(i, l);
        }
      }
    }
    if (reads_renamed) {
      for (const auto& [i, read] : renamed) {
        if (std::any_of(names.begin(), names.end(), [&](std::string_view name) {
              return entry_matches(engine, s.format, read, name, &run.declaration.model);
            })) {
          count(i, l);
        }
      }
    }
  }
  size_t uncovered = static_cast<size_t>(
    std::count_if(cover.begin(), cover.end(), [](const EntryCover& c) { return c.layers == 0; }));
  for (size_t k = 0; k < run.inventory.modules.size() && uncovered > 0; ++k) {
    const std::string_view name = run.inventory.modules[k].name;
    search(name);
    for (const uint32_t i : found) {
      if (cover[i].layers == 0 && cover[i].module < 0 &&
          entry_matches(engine, s.format, s.excludes[i], name, &run.declaration.model)) {
        cover[i].module = static_cast<int64_t>(k);
        --uncovered;
      }
    }
  }
  return cover;
}

std::string
covered_text(size_t count, const std::vector<std::string_view>& first)
{
  if (count == 0) {
    return "nothing";
  }
  return fmt::format("{} layer{}: {}{}", count, count == 1 ? "" : "s", fmt::join(first, ", "),
                     count > first.size() ? ", ..." : "");
}

// The line for an entry that decides no layer of the engine's but names checkpoint module
// `other` (entries for routers or embeddings name real modules the engines never quantize).
// `probes`: the names a compressed-tensors engine decides that module's MoE by, if any.
std::string
named_module_text(Engine engine, QuantFormat format, const Module& other,
                  const std::vector<std::string>& probes)
{
  if (format == QuantFormat::compressed_tensors && other.role == ModuleRole::expert &&
      !probes.empty()) {
    // The engines look a MoE's scheme up under these names, never under this one.
    return fmt::format("    {}: nothing (it names expert module {}; {} decides its MoE by {} "
                       "alone)",
                       display_name(engine), other.name, display_name(engine),
                       fmt::join(probes, ", "));
  }
  const bool quantizable = other.role == ModuleRole::linear || other.role == ModuleRole::expert ||
                           other.role == ModuleRole::fused_experts ||
                           other.role == ModuleRole::lm_head;
  return quantizable ? fmt::format("    {}: nothing (it names checkpoint module {}, which this "
                                   "engine checks under another name)",
                                   display_name(engine), other.name)
                     : fmt::format("    {}: no quantizable layer (names {} modules such as {})",
                                   display_name(engine), to_string(other.role), other.name);
}

} // namespace

std::string
explain_entries(const LintRun& run, const std::vector<Engine>& engines)
{
  std::string out;
  std::vector<std::pair<Engine, std::vector<EngineLayer>>> layers;
  // Per engine and layer: the names compressed-tensors decides a fused MoE layer by.
  std::vector<std::vector<std::vector<std::string>>> moe_probes;
  for (const Engine engine : engines) {
    layers.emplace_back(engine,
                        engine_layers(engine, run.inventory, run.drafts, run.declaration.model));
    auto& probes = moe_probes.emplace_back();
    for (const EngineLayer& layer : layers.back().second) {
      probes.push_back(fused_moe_probe_names(layer));
    }
  }
  // Per engine, each module's layer (-1: none), built when first asked.
  std::vector<std::vector<int64_t>> layer_of(layers.size());
  const auto probes_of = [&](size_t at, size_t module) -> const std::vector<std::string>& {
    static const std::vector<std::string> k_none;
    if (layer_of[at].empty()) {
      layer_of[at].assign(run.inventory.modules.size(), -1);
      for (size_t l = 0; l < layers[at].second.size(); ++l) {
        for (const uint32_t i : layers[at].second[l].modules) {
          layer_of[at][i] = static_cast<int64_t>(l);
        }
      }
    }
    const int64_t l = layer_of[at][module];
    return l < 0 ? k_none : moe_probes[at][static_cast<size_t>(l)];
  };
  for (const ConfigSource& s : run.declaration.sources) {
    add_line(out, fmt::format("{} ({}, {}):", s.file, to_string(s.format), s.list_key));
    std::vector<std::string> keys(s.excludes.begin(), s.excludes.end());
    for (const auto& rule : s.dynamic) {
      keys.push_back(rule.key);
    }
    for (const auto& e : s.extra_config) {
      keys.push_back(e.key);
    }
    if (keys.empty()) {
      add_line(out, "  (no entries)");
    }
    // The exclusion entries, per engine, from one pass over the layers and modules; the other
    // keys (dynamic rules, extra_config, prefix-matched formats) layer by layer.
    const bool by_prefix = s.format == QuantFormat::gptq || s.format == QuantFormat::auto_round;
    std::vector<std::vector<EntryCover>> covers(layers.size());
    for (size_t at = 0; at < layers.size(); ++at) {
      if (!by_prefix && engine_reads(layers[at].first, s.format) &&
          list_key_read(layers[at].first, s) == s.list_key) {
        covers[at] = cover_entries(run, layers[at].first, s, layers[at].second, moe_probes[at]);
      }
    }
    for (size_t index = 0; index < keys.size(); ++index) {
      const std::string& key = keys[index];
      add_line(out, fmt::format("  '{}'", key));
      const bool rule_key = key.starts_with("-:") || key.starts_with("+:");
      const bool dynamic_key =
        index >= s.excludes.size() && index < s.excludes.size() + s.dynamic.size();
      for (size_t at = 0; at < layers.size(); ++at) {
        const Engine engine = layers[at].first;
        if (!engine_reads(engine, s.format)) {
          continue;
        }
        if (dynamic_key && s.format == QuantFormat::auto_round) {
          add_line(out, fmt::format("    {}: nothing: it reads no dynamic for auto-round",
                                    display_name(engine)));
          continue;
        }
        if (const std::string_view read = list_key_read(engine, s); read != s.list_key) {
          add_line(out, fmt::format("    {}: nothing: it reads {}, which is empty",
                                    display_name(engine), read));
          continue;
        }
        const std::vector<EngineLayer>& engine_layers = layers[at].second;
        if (index < s.excludes.size() && !by_prefix && !rule_key) {
          const EntryCover& c = covers[at][index];
          if (c.layers == 0 && c.module >= 0) {
            const auto k = static_cast<size_t>(c.module);
            add_line(
              out, named_module_text(engine, s.format, run.inventory.modules[k], probes_of(at, k)));
            continue;
          }
          std::vector<std::string_view> first;
          for (uint32_t k = 0; k < std::min<uint32_t>(c.layers, c.first.size()); ++k) {
            first.push_back(engine_layers[c.first[k]].prefix);
          }
          add_line(out,
                   fmt::format("    {}: {}", display_name(engine), covered_text(c.layers, first)));
          continue;
        }
        size_t count = 0;
        std::vector<std::string_view> first;
        for (const EngineLayer& layer : engine_layers) {
          // Here: a "-:" / "+:" rule, or a GPTQ / AutoRound key (the only formats with dynamic
          // and extra_config keys), matched as a prefix.
          bool hit = false;
          if (rule_key && engine == Engine::sglang && s.format == QuantFormat::gptq &&
              layer.kind == LayerKind::fused_moe) {
            continue; // SGLang reads no dynamic key for a GPTQ fused MoE
          }
          if (rule_key) {
            const auto re = Regex::compile(key.substr(2));
            hit = re && re->match(dynamic_subject(engine, &run.declaration.model, layer.prefix));
          } else if (s.format == QuantFormat::auto_round) {
            // The layer's own name (in vLLM also "model." + it at 16 bits or more), a fused
            // layer's shards (in SGLang only where its mapping names the layer), a fused MoE's
            // keys below it.
            // Where the shards are read, a pattern is tried on them alone.
            const bool shards =
              engine != Engine::sglang || sglang_reads_shards(run.declaration.model, layer);
            const bool by_shards =
              shards && !layer.shards.empty() && layer.kind != LayerKind::fused_moe;
            const ExtraConfigEntry& entry =
              s.extra_config[index - s.excludes.size() - s.dynamic.size()];
            hit = key == layer.prefix ||
                  (!by_shards && extra_config_key_matches(engine, key, layer.prefix)) ||
                  (engine == Engine::vllm && (entry.bits == 0 || entry.bits >= 16) &&
                   vllm_first_key(key, layer.prefix)) ||
                  (shards && std::any_of(layer.shards.begin(), layer.shards.end(),
                                         [&](const auto& shard) {
                                           return extra_config_key_matches(engine, key, shard);
                                         })) ||
                  (layer.kind == LayerKind::fused_moe && key.starts_with(layer.prefix + "."));
          } else {
            hit = layer.prefix == key || layer.prefix.starts_with(key + ".");
          }
          if (hit && ++count <= 4) {
            first.push_back(layer.prefix);
          }
        }
        if (count == 0 && !s.excludes.empty()) {
          const auto other = std::find_if(
            run.inventory.modules.begin(), run.inventory.modules.end(), [&](const Module& m) {
              return entry_matches(engine, s.format, key, m.name, &run.declaration.model);
            });
          if (other != run.inventory.modules.end()) {
            const auto k = static_cast<size_t>(other - run.inventory.modules.begin());
            add_line(out, named_module_text(engine, s.format, *other, probes_of(at, k)));
            continue;
          }
        }
        add_line(out, fmt::format("    {}: {}", display_name(engine), covered_text(count, first)));
      }
    }
  }
  return out;
}

} // namespace qcheck
