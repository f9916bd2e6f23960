#include "qcheck/explain.hpp"

#include <algorithm>
#include <fmt/format.h>
#include <fmt/ranges.h>

#include "qcheck/patterns.hpp"
#include "qcheck/regex.hpp"

namespace qcheck {

namespace {

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

Expected<std::string>
explain_module(const LintRun& run, const std::string& name, const std::vector<Engine>& engines)
{
  const std::vector<size_t> selected = select_modules(run.checkpoint, run.inventory, name);
  if (selected.empty()) {
    const std::string hint = closest_module(run.inventory, name);
    return unexpected(fmt::format("no module '{}' in {}{}", name, run.checkpoint.root,
                                  hint.empty() ? "" : fmt::format("; closest: '{}'", hint)));
  }
  std::string out;
  std::vector<std::pair<Engine, std::vector<EngineLayer>>> layers;
  for (const Engine engine : engines) {
    layers.emplace_back(engine,
                        engine_layers(engine, run.inventory, run.drafts, run.declaration.model));
  }
  for (size_t index : selected) {
    const Module& m = run.inventory.modules[index];
    out +=
      fmt::format("{}\n  stored: {} {} ({}){}\n", m.name, to_string(m.role), to_string(m.storage),
                  m.family == QuantFamily::none ? "float" : to_string(m.family),
                  run.drafts.root_of(m.name)
                    ? fmt::format(", MTP/NextN draft '{}'", *run.drafts.root_of(m.name))
                    : "");
    for (uint32_t t : m.tensors) {
      const Tensor& tensor = run.checkpoint.tensors[t];
      out += fmt::format("    {} {} [{}]  {}\n", tensor.info->name(), tensor.info->dtype_text(),
                         fmt::join(tensor.info->shape(), ", "), run.checkpoint.shard_of(tensor));
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
          out += fmt::format("  {}: builds the draft's head as 'model.shared_head.head' and fills "
                             "it from the target model's head, never from this tensor\n",
                             display_name(engine));
        } else {
          out += fmt::format("  {}: not a quantizable layer ({})\n", display_name(engine),
                             to_string(m.role));
        }
        continue;
      }
      if (!source || !engine_reads(engine, source->format)) {
        out += fmt::format("  {}: checks '{}' ({}); reads no quantization config it knows\n",
                           display_name(engine), it->prefix, kind_text(it->kind));
        continue;
      }
      const Decision d = decide(engine, *source, run.declaration.model, *it, it->quantized > 0);
      // SGLang's NextN eh_proj under Quark is a ReplicatedLinear with the config.
      const std::string_view kind =
        it->kind == LayerKind::plain_linear && !builds_plain_linear(engine, source->format, *it)
          ? "ReplicatedLinear"
          : kind_text(it->kind);
      out += fmt::format(
        "  {}: checks '{}' ({}) against {} {}: {}{}\n", display_name(engine), it->prefix, kind,
        source->file, source->list_key.empty() ? "" : source->list_key,
        d.quantized ? "QUANTIZED" : "excluded",
        d.override_note.empty() ? (d.reason.empty() ? "" : fmt::format(" — {}", d.reason))
                                : fmt::format(" — {}", d.override_note));
      if (!it->namespace_note.empty()) {
        out += fmt::format("    {}\n", it->namespace_note);
      }
      if (d.shards_disagree) {
        out += fmt::format("    shards disagree: {}\n", d.shard_detail);
      }
    }
  }
  return out;
}

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
  auto show = [&](const std::vector<std::string>& covered) {
    if (covered.empty()) {
      return std::string("nothing");
    }
    const size_t shown = std::min<size_t>(covered.size(), 4);
    return fmt::format("{} layer{}: {}{}", covered.size(), covered.size() == 1 ? "" : "s",
                       fmt::join(covered.begin(), covered.begin() + static_cast<long>(shown), ", "),
                       covered.size() > shown ? ", ..." : "");
  };
  for (const ConfigSource& s : run.declaration.sources) {
    out += fmt::format("{} ({}, {}):\n", s.file, to_string(s.format), s.list_key);
    std::vector<std::string> keys(s.excludes.begin(), s.excludes.end());
    for (const auto& rule : s.dynamic) {
      keys.push_back(rule.key);
    }
    for (const auto& e : s.extra_config) {
      keys.push_back(e.key);
    }
    if (keys.empty()) {
      out += "  (no entries)\n";
    }
    for (const std::string& key : keys) {
      out += fmt::format("  '{}'\n", key);
      for (size_t at = 0; at < layers.size(); ++at) {
        const Engine engine = layers[at].first;
        if (!engine_reads(engine, s.format)) {
          continue;
        }
        std::vector<std::string> covered;
        for (size_t l = 0; l < layers[at].second.size(); ++l) {
          const EngineLayer& layer = layers[at].second[l];
          bool hit = false;
          if (key.starts_with("-:") || key.starts_with("+:")) {
            const auto re = Regex::compile(key.substr(2));
            hit = re && re->match(vllm_namespace(layer.prefix));
          } else if (s.format == QuantFormat::gptq || s.format == QuantFormat::auto_round) {
            hit = layer.prefix == key || layer.prefix.starts_with(key + ".");
          } else {
            // SGLang's DeepSeek-V3 NextN draft reads some entries renamed.
            const auto mapped = engine == Engine::sglang && layer.draft
                                  ? sglang_draft_entry(s.format, run.declaration.model, key)
                                  : std::nullopt;
            const std::string_view read = mapped ? std::string_view(*mapped) : key;
            const auto matches = [&](std::string_view name) {
              return entry_matches(engine, s.format, read, name);
            };
            // compressed-tensors decides a fused MoE layer by its probe names alone.
            const std::vector<std::string>& probes = moe_probes[at][l];
            hit = s.format == QuantFormat::compressed_tensors && !probes.empty()
                    ? std::ranges::any_of(probes, matches)
                    : matches(layer.prefix) ||
                        std::any_of(layer.shards.begin(), layer.shards.end(), matches);
          }
          if (hit) {
            covered.push_back(layer.prefix);
          }
        }
        if (covered.empty()) {
          // Entries for routers or embeddings name real modules that are simply not quantizable.
          const auto other = std::find_if(
            run.inventory.modules.begin(), run.inventory.modules.end(), [&](const Module& m) {
              return !s.excludes.empty() && entry_matches(engine, s.format, key, m.name);
            });
          if (other != run.inventory.modules.end()) {
            const bool quantizable =
              other->role == ModuleRole::linear || other->role == ModuleRole::expert ||
              other->role == ModuleRole::fused_experts || other->role == ModuleRole::lm_head;
            out += quantizable
                     ? fmt::format("    {}: nothing (it names checkpoint module {}, which this "
                                   "engine checks under another name)\n",
                                   display_name(engine), other->name)
                     : fmt::format("    {}: no quantizable layer (names {} modules such as {})\n",
                                   display_name(engine), to_string(other->role), other->name);
            continue;
          }
        }
        out += fmt::format("    {}: {}\n", display_name(engine), show(covered));
      }
    }
  }
  return out;
}

} // namespace qcheck
