#include "qcheck/inspect.hpp"

#include <fmt/format.h>
#include <fmt/ranges.h>
#include <map>
#include <nlohmann/json.hpp>

#include "qcheck/patterns.hpp"

namespace qcheck {

namespace {

bool
selected(const Module& module, const InspectOptions& options)
{
  return options.module_glob.empty() || fnmatch(options.module_glob, module.name);
}

std::vector<std::string>
siblings(const Checkpoint& checkpoint, const Module& module, const TensorInfo& tensor)
{
  std::vector<std::string> out;
  for (uint32_t index : module.tensors) {
    const TensorInfo& other = *checkpoint.tensors[index].info;
    if (&other != &tensor) {
      out.emplace_back(split_tensor_name(other.name).second);
    }
  }
  return out;
}

std::map<std::string_view, size_t>
dtype_counts(const Checkpoint& checkpoint, const Module& module)
{
  std::map<std::string_view, size_t> counts;
  for (uint32_t index : module.tensors) {
    ++counts[checkpoint.tensors[index].info->dtype_name];
  }
  return counts;
}

} // namespace

std::string
render_inspect_text(const Checkpoint& checkpoint, const Inventory& inventory,
                    const InspectOptions& options)
{
  std::string out;
  size_t tensor_count = 0, module_count = 0;
  for (const Module& module : inventory.modules) {
    if (!selected(module, options)) {
      continue;
    }
    ++module_count;
    std::vector<std::string> counts;
    for (const auto& [dtype, n] : dtype_counts(checkpoint, module)) {
      counts.push_back(fmt::format("{} {}", n, dtype));
    }
    out += fmt::format("{}  [{} {}{}{}] ({})\n", module.name.empty() ? "<root>" : module.name,
                       to_string(module.role), to_string(module.storage),
                       module.family == QuantFamily::none ? "" : " ",
                       module.family == QuantFamily::none ? "" : to_string(module.family),
                       fmt::join(counts, ", "));
    for (uint32_t index : module.tensors) {
      const Tensor& tensor = checkpoint.tensors[index];
      const TensorInfo& info = *tensor.info;
      ++tensor_count;
      out += fmt::format("  {:<24} {:<8} [{}]  {}", split_tensor_name(info.name).second,
                         info.dtype_name, fmt::join(info.shape, ", "), checkpoint.shard_of(tensor));
      const auto sib = siblings(checkpoint, module, info);
      out += sib.empty() ? "\n" : fmt::format("  siblings: {}\n", fmt::join(sib, ", "));
    }
  }
  out += fmt::format("{} tensors in {} modules, {} shards\n", tensor_count, module_count,
                     checkpoint.shards.size());
  return out;
}

std::string
render_inspect_json(const Checkpoint& checkpoint, const Inventory& inventory,
                    const InspectOptions& options)
{
  nlohmann::ordered_json tensors = nlohmann::ordered_json::array();
  nlohmann::ordered_json modules = nlohmann::ordered_json::array();
  for (const Module& module : inventory.modules) {
    if (!selected(module, options)) {
      continue;
    }
    nlohmann::ordered_json counts = nlohmann::ordered_json::object();
    for (const auto& [dtype, n] : dtype_counts(checkpoint, module)) {
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
      const TensorInfo& info = *tensor.info;
      tensors.push_back({{"name", info.name},
                         {"module", module.name},
                         {"dtype", info.dtype_name},
                         {"shape", info.shape},
                         {"shard", checkpoint.shard_of(tensor)},
                         {"siblings", siblings(checkpoint, module, info)}});
    }
  }
  nlohmann::ordered_json shards = nlohmann::ordered_json::array();
  for (const ShardFile& shard : checkpoint.shards) {
    shards.push_back({{"file", shard.file},
                      {"in_index", shard.in_index},
                      {"header_bytes", shard.header.header_size},
                      {"tensors", shard.header.tensors.size()}});
  }
  nlohmann::ordered_json root = {{"shards", shards}, {"modules", modules}, {"tensors", tensors}};
  return root.dump(2) + "\n";
}

} // namespace qcheck
