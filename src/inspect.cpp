#include "qcheck/inspect.hpp"

#include <algorithm>
#include <fmt/format.h>
#include <fmt/ranges.h>
#include <iterator>
#include <map>

#include "qcheck/json_text.hpp"
#include "qcheck/patterns.hpp"
#include "qcheck/report.hpp"

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
      out.emplace_back(split_tensor_name(other.name()).second);
    }
  }
  return out;
}

std::map<std::string_view, size_t>
dtype_counts(const Checkpoint& checkpoint, const Module& module)
{
  std::map<std::string_view, size_t> counts;
  for (uint32_t index : module.tensors) {
    ++counts[checkpoint.tensors[index].info->dtype_text()];
  }
  return counts;
}

} // namespace

size_t
count_selected(const Inventory& inventory, const InspectOptions& options)
{
  return static_cast<size_t>(std::count_if(inventory.modules.begin(), inventory.modules.end(),
                                           [&](const Module& m) { return selected(m, options); }));
}

void
write_inspect_text(const Checkpoint& checkpoint, const Inventory& inventory,
                   const InspectOptions& options, const TextSink& sink)
{
  SinkBuffer output(sink);
  std::string& out = output.buffer();
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
    // Names and dtypes come from the files: control characters are shown escaped.
    fmt::format_to(std::back_inserter(out), "{}  [{} {}{}{}] ({})\n",
                   module.name.empty() ? "<root>" : printable(module.name), to_string(module.role),
                   to_string(module.storage), module.family == QuantFamily::none ? "" : " ",
                   module.family == QuantFamily::none ? "" : to_string(module.family),
                   printable(fmt::format("{}", fmt::join(counts, ", "))));
    for (uint32_t index : module.tensors) {
      const Tensor& tensor = checkpoint.tensors[index];
      const TensorInfo& info = *tensor.info;
      ++tensor_count;
      fmt::format_to(std::back_inserter(out), "  {:<24} {:<8} [{}]  {}",
                     printable(split_tensor_name(info.name()).second), printable(info.dtype_text()),
                     fmt::join(info.shape(), ", "), printable(checkpoint.shard_of(tensor)));
      const auto sib = siblings(checkpoint, module, info);
      if (sib.empty()) {
        out += '\n';
      } else {
        fmt::format_to(std::back_inserter(out), "  siblings: {}\n",
                       printable(fmt::format("{}", fmt::join(sib, ", "))));
      }
    }
    output.maybe_flush();
  }
  const auto plural = [](size_t n) { return n == 1 ? "" : "s"; };
  fmt::format_to(std::back_inserter(out), "{} tensor{} in {} module{}, {} shard{}\n", tensor_count,
                 plural(tensor_count), module_count, plural(module_count), checkpoint.shards.size(),
                 plural(checkpoint.shards.size()));
}

void
write_inspect_json(const Checkpoint& checkpoint, const Inventory& inventory,
                   const InspectOptions& options, const TextSink& sink)
{
  SinkBuffer output(sink);
  std::string& out = output.buffer();
  const auto number = [&](uint64_t n) { fmt::format_to(std::back_inserter(out), "{}", n); };
  out += "{\n";
  append_json_key(out, 2, "shards");
  append_json_array(out, 2, checkpoint.shards.size(), [&](size_t i) {
    const ShardFile& shard = checkpoint.shards[i];
    out += "{\n";
    append_json_member(out, 6, "file", shard.file);
    out += ",\n";
    append_json_key(out, 6, "in_index");
    out += shard.in_index ? "true" : "false";
    out += ",\n";
    append_json_key(out, 6, "header_bytes");
    number(shard.header.header_size);
    out += ",\n";
    append_json_key(out, 6, "tensors");
    number(shard.header.tensors.size());
    out += "\n    }";
  });
  out += ",\n";
  std::vector<const Module*> modules;
  for (const Module& module : inventory.modules) {
    if (selected(module, options)) {
      modules.push_back(&module);
    }
  }
  append_json_key(out, 2, "modules");
  append_json_array(out, 2, modules.size(), [&](size_t i) {
    const Module* module = modules[i];
    out += "{\n";
    append_json_member(out, 6, "name", module->name);
    out += ",\n";
    append_json_member(out, 6, "role", to_string(module->role));
    out += ",\n";
    append_json_member(out, 6, "storage", to_string(module->storage));
    out += ",\n";
    append_json_member(out, 6, "family", to_string(module->family));
    out += ",\n";
    append_json_key(out, 6, "tensors");
    number(module->tensors.size());
    out += ",\n";
    append_json_key(out, 6, "dtypes");
    const auto counts = dtype_counts(checkpoint, *module);
    if (counts.empty()) {
      out += "{}";
    } else {
      out += "{\n";
      bool first = true;
      for (const auto& [dtype, n] : counts) {
        out += first ? "" : ",\n";
        first = false;
        append_json_key(out, 8, dtype);
        number(n);
      }
      out += "\n      }";
    }
    out += ",\n";
    append_json_member(out, 6, "evidence", module_evidence(checkpoint, *module));
    out += "\n    }";
    output.maybe_flush();
  });
  out += ",\n";
  append_json_key(out, 2, "tensors");
  if (std::none_of(modules.begin(), modules.end(),
                   [](const Module* m) { return !m->tensors.empty(); })) {
    out += "[]";
  } else {
    out += "[\n";
    bool first = true;
    for (const Module* module : modules) {
      for (uint32_t index : module->tensors) {
        const Tensor& tensor = checkpoint.tensors[index];
        const TensorInfo& info = *tensor.info;
        out += first ? "    {\n" : ",\n    {\n";
        first = false;
        append_json_member(out, 6, "name", info.name());
        out += ",\n";
        append_json_member(out, 6, "module", module->name);
        out += ",\n";
        append_json_member(out, 6, "dtype", info.dtype_text());
        out += ",\n";
        append_json_key(out, 6, "shape");
        append_json_array(out, 6, info.shape().size(), [&](size_t i) { number(info.shape()[i]); });
        out += ",\n";
        append_json_member(out, 6, "shard", checkpoint.shard_of(tensor));
        out += ",\n";
        append_json_key(out, 6, "siblings");
        append_json_strings(out, 6, siblings(checkpoint, *module, info));
        out += "\n    }";
        output.maybe_flush();
      }
    }
    out += "\n  ]";
  }
  out += "\n}\n";
}

std::string
render_inspect_text(const Checkpoint& checkpoint, const Inventory& inventory,
                    const InspectOptions& options)
{
  std::string out;
  write_inspect_text(checkpoint, inventory, options, [&](std::string_view piece) { out += piece; });
  return out;
}

std::string
render_inspect_json(const Checkpoint& checkpoint, const Inventory& inventory,
                    const InspectOptions& options)
{
  std::string out;
  write_inspect_json(checkpoint, inventory, options, [&](std::string_view piece) { out += piece; });
  return out;
}

} // namespace qcheck
