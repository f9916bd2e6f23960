#include "qcheck/modules.hpp"

#include <algorithm>
#include <array>
#include <atomic>
#include <cstring>
#if defined(__SSE2__)
#include <emmintrin.h>
#endif
#include <memory>
#include <fmt/format.h>
#include <fmt/ranges.h>

#include "qcheck/parallel.hpp"
#include "qcheck/patterns.hpp"

namespace qcheck {

namespace {

// The first `Needle` in `text`, by Horspool's skips: most names hold none, and find() stops at
// every '.' (one call to memchr each).
template<const std::string_view& Needle>
size_t
find_by_skips(std::string_view text)
{
  static constexpr size_t k_size = Needle.size();
  static constexpr auto k_skip = [] {
    std::array<uint8_t, 256> skip{};
    skip.fill(static_cast<uint8_t>(k_size));
    for (size_t i = 0; i + 1 < k_size; ++i) {
      skip[static_cast<unsigned char>(Needle[i])] = static_cast<uint8_t>(k_size - 1 - i);
    }
    return skip;
  }();
  for (size_t i = 0; i + k_size <= text.size();) {
    const char last = text[i + k_size - 1];
    if (last == Needle.back() && text.compare(i, k_size, Needle) == 0) {
      return i;
    }
    i += k_skip[static_cast<unsigned char>(last)];
  }
  return std::string_view::npos;
}

constexpr std::string_view k_weight_dot = ".weight.";
constexpr std::string_view k_dot_weight = ".weight";
constexpr std::string_view k_dot_experts_dot = ".experts.";

bool
ends_with(std::string_view text, std::string_view suffix)
{
  return text.size() >= suffix.size() && text.substr(text.size() - suffix.size()) == suffix;
}

bool
is_digits(std::string_view s)
{
  return !s.empty() && std::all_of(s.begin(), s.end(), [](char c) { return c >= '0' && c <= '9'; });
}

// "...experts.{digits}.proj" -> true
bool
is_expert_projection(std::string_view module)
{
  const size_t pos = find_by_skips<k_dot_experts_dot>(module);
  if (pos == std::string_view::npos) {
    return false;
  }
  std::string_view rest = module.substr(pos + 9);
  const size_t dot = rest.find('.');
  return dot != std::string_view::npos && is_digits(rest.substr(0, dot));
}

bool
is_quant_marker(std::string_view param)
{
  static constexpr std::array<std::string_view, 11> k_markers{"weight_packed",
                                                              "qweight",
                                                              "weight_scale",
                                                              "weight_scale_inv",
                                                              "weight_scale_2",
                                                              "weight_global_scale",
                                                              "qzeros",
                                                              "absmax",
                                                              "SCB",
                                                              "weight_zero_point",
                                                              "weight_g_idx"};
  if (std::find(k_markers.begin(), k_markers.end(), param) != k_markers.end()) {
    return true;
  }
  return ends_with(param, "_blocks") || param.starts_with("quant_state") || param == "quant_map" ||
         param == "nested_absmax" || param == "nested_quant_map";
}

// A module's tensors by parameter name, split once. Modules rarely hold more than a handful of
// tensors: those fit in place.
struct Params
{
  static constexpr size_t k_inline = 12;
  std::array<std::pair<std::string_view, const TensorInfo*>, k_inline> inline_items;
  std::vector<std::pair<std::string_view, const TensorInfo*>> more;
  std::span<const std::pair<std::string_view, const TensorInfo*>> items;

  Params(const Checkpoint& checkpoint, const Module& module)
  {
    auto* out = inline_items.data();
    if (module.tensors.size() > k_inline) {
      more.resize(module.tensors.size());
      out = more.data();
    }
    for (size_t i = 0; i < module.tensors.size(); ++i) {
      const TensorInfo* t = checkpoint.tensors[module.tensors[i]].info;
      out[i] = {param_of(module, t->name()), t};
    }
    items = {out, module.tensors.size()};
  }
  const TensorInfo* get(std::string_view param) const
  {
    for (const auto& [name, t] : items) {
      if (name == param) {
        return t;
      }
    }
    return nullptr;
  }
};

std::string
describe(const TensorInfo& t, std::string_view param)
{
  return fmt::format("{} {} [{}]", param, t.dtype_text(), fmt::join(t.shape(), ", "));
}

bool
is_weight_like(std::string_view param)
{
  return param == "weight" || param == "gate_up_proj" || param == "down_proj" ||
         param == "gate_proj" || param == "up_proj";
}

void
classify(const Checkpoint& checkpoint, Module& module)
{
  // The tensors the family is told by: the first of each parameter name, found in the one pass.
  struct Known
  {
    const TensorInfo* weight = nullptr;
    const TensorInfo* weight_scale = nullptr;
    const TensorInfo* weight_scale_2 = nullptr;
    const TensorInfo* weight_scale_inv = nullptr;
    const TensorInfo* weight_packed = nullptr;
    const TensorInfo* weight_global_scale = nullptr;
    const TensorInfo* qweight = nullptr;
    const TensorInfo* scales = nullptr;
    const TensorInfo* bitsandbytes = nullptr; // absmax, SCB or quant_map
  } known;
  const auto keep = [](const TensorInfo*& slot, const TensorInfo* t) {
    if (slot == nullptr) {
      slot = t;
    }
  };
  // keep(), and a key parameter's first tensor also noted by its place in the module.
  const auto note = [&](KeyParam key, const TensorInfo*& slot, const TensorInfo* t, size_t i) {
    if (slot == nullptr) {
      module.key_params[static_cast<size_t>(key)] =
        i < Module::k_param_beyond ? static_cast<uint16_t>(i) : Module::k_param_beyond;
    }
    keep(slot, t);
  };
  bool has_marker = false;
  bool has_float_weight = false;
  bool has_narrow_weight = false;
  bool has_blocks = false;
  size_t weight_rank = 0;
  for (size_t i = 0; i < module.tensors.size(); ++i) {
    const TensorInfo& t = *checkpoint.tensors[module.tensors[i]].info;
    const std::string_view param = param_of(module, t.name());
    // The commonest names first, one comparison each; the rest go through the predicates.
    if (param == "weight_scale") {
      note(KeyParam::weight_scale, known.weight_scale, &t, i);
      has_marker = true;
      continue;
    }
    if (param == "weight_scale_2") {
      note(KeyParam::weight_scale_2, known.weight_scale_2, &t, i);
      has_marker = true;
      continue;
    }
    if (param == "input_scale" || is_activation_scale(param)) {
      continue;
    }
    if (is_weight_like(param)) {
      if (param == "weight") {
        note(KeyParam::weight, known.weight, &t, i);
      }
      weight_rank = std::max(weight_rank, t.shape().size());
      (is_wide_float(t.dtype) ? has_float_weight : has_narrow_weight) = true;
    } else if (is_quant_marker(param)) {
      has_marker = true;
      has_blocks |= ends_with(param, "_blocks");
      if (param == "qweight") {
        note(KeyParam::qweight, known.qweight, &t, i);
        weight_rank = std::max(weight_rank, t.shape().size());
      } else if (param == "weight_packed") {
        keep(known.weight_packed, &t);
        weight_rank = std::max(weight_rank, t.shape().size());
      } else if (param == "weight_scale_inv") {
        note(KeyParam::weight_scale_inv, known.weight_scale_inv, &t, i);
      } else if (param == "weight_global_scale") {
        keep(known.weight_global_scale, &t);
      } else if (param == "absmax" || param == "SCB" || param == "quant_map") {
        keep(known.bitsandbytes, &t);
      }
    } else if (param == "scales") {
      note(KeyParam::scales, known.scales, &t, i);
    }
  }
  if (has_marker || has_narrow_weight) {
    module.storage = Storage::quantized;
  } else if (has_float_weight) {
    module.storage = Storage::unquantized;
  } else {
    module.storage = Storage::no_weight;
  }

  // Family.
  if (module.storage == Storage::quantized) {
    const TensorInfo* weight = known.weight;
    const TensorInfo* scale = known.weight_scale;
    const TensorInfo* packed = known.weight_packed;
    const TensorInfo* qweight = known.qweight;
    const auto dtype_of = [](const TensorInfo* t) { return t ? t->dtype : Dtype::unknown; };
    const bool is_f8 = dtype_of(weight) == Dtype::F8_E4M3 || dtype_of(weight) == Dtype::F8_E5M2 ||
                       dtype_of(weight) == Dtype::F8_E4M3FNUZ;
    if (packed) {
      if (packed->dtype == Dtype::I32) {
        module.family = QuantFamily::ct_pack;
      } else if (known.weight_global_scale) {
        module.family = QuantFamily::ct_nvfp4_pack;
      } else {
        module.family = QuantFamily::ct_mxfp4_pack;
      }
    } else if (qweight) {
      const TensorInfo* scales = known.scales;
      const bool along_output = scales && qweight->shape().size() == 2 &&
                                scales->shape().size() == 2 &&
                                qweight->shape()[1] != scales->shape()[1];
      module.family = along_output ? QuantFamily::awq : QuantFamily::gptq;
    } else if (has_blocks) {
      module.family = QuantFamily::mxfp4;
    } else if (known.bitsandbytes) {
      module.family = QuantFamily::bitsandbytes;
    } else if (dtype_of(weight) == Dtype::U8 && known.weight_scale_2) {
      module.family = QuantFamily::modelopt_nvfp4;
    } else if (is_f8 && known.weight_scale_inv) {
      module.family = QuantFamily::fp8_block;
    } else if (is_f8 && scale && (scale->dtype == Dtype::U8 || scale->dtype == Dtype::F8_E8M0)) {
      module.family = QuantFamily::mxfp8;
    } else if (is_f8 && scale) {
      module.family = QuantFamily::fp8_per_tensor;
    } else if (dtype_of(weight) == Dtype::I8 && scale) {
      module.family = QuantFamily::int8_scaled;
    } else {
      module.family = QuantFamily::unknown;
    }
  }

  // Role.
  const std::string_view name = module.name;
  const std::string_view last = leaf_of(name);
  // Every leaf the next four tests name ends in one of these letters; most leaves ("down_proj",
  // "input_layernorm") end in another, and skip them.
  const char end = last.empty() ? '\0' : last.back();
  const bool named_role = end == 'd' || end == 'e' || end == 'g' || end == 'r' || end == 's';
  if (named_role && (last == "embed_tokens" || last == "wte" || last == "wpe" ||
                     ends_with(last, "embed") || ends_with(last, "embeds") ||
                     ends_with(last, "embedding") || ends_with(last, "embeddings"))) {
    module.role = ModuleRole::embedding;
  } else if (named_role && (last == "lm_head" || ends_with(name, "shared_head.head"))) {
    module.role = ModuleRole::lm_head;
  } else if (named_role && (last == "gate" || last == "router" || last == "shared_expert_gate")) {
    module.role = ModuleRole::router;
  } else if (named_role && last == "experts") {
    module.role = ModuleRole::fused_experts;
  } else if (is_expert_projection(name)) {
    module.role = ModuleRole::expert;
  } else if (end == 'j' && ends_with(name, ".indexer.weights_proj")) {
    module.role = ModuleRole::unquantized_linear;
  } else if (module.storage == Storage::quantized || weight_rank == 2) {
    module.role = ModuleRole::linear;
  } else if (weight_rank == 1) {
    module.role = ModuleRole::norm;
  } else {
    module.role = ModuleRole::other;
  }
}

} // namespace

std::string_view
to_string(Storage storage)
{
  switch (storage) {
  case Storage::unquantized:
    return "unquantized";
  case Storage::quantized:
    return "quantized";
  case Storage::no_weight:
    return "no-weight";
  }
  return "?";
}

std::string_view
to_string(QuantFamily family)
{
  switch (family) {
  case QuantFamily::none:
    return "none";
  case QuantFamily::modelopt_nvfp4:
    return "nvfp4";
  case QuantFamily::fp8_per_tensor:
    return "fp8";
  case QuantFamily::fp8_block:
    return "fp8-block";
  case QuantFamily::mxfp8:
    return "mxfp8";
  case QuantFamily::int8_scaled:
    return "int8";
  case QuantFamily::ct_pack:
    return "ct-pack";
  case QuantFamily::ct_nvfp4_pack:
    return "ct-nvfp4-pack";
  case QuantFamily::ct_mxfp4_pack:
    return "ct-mxfp4-pack";
  case QuantFamily::gptq:
    return "gptq";
  case QuantFamily::awq:
    return "awq";
  case QuantFamily::mxfp4:
    return "mxfp4";
  case QuantFamily::bitsandbytes:
    return "bitsandbytes";
  case QuantFamily::unknown:
    return "unknown";
  }
  return "?";
}

std::string_view
to_string(ModuleRole role)
{
  switch (role) {
  case ModuleRole::linear:
    return "linear";
  case ModuleRole::expert:
    return "expert";
  case ModuleRole::fused_experts:
    return "fused-experts";
  case ModuleRole::router:
    return "router";
  case ModuleRole::unquantized_linear:
    return "unquantized-linear";
  case ModuleRole::lm_head:
    return "lm-head";
  case ModuleRole::embedding:
    return "embedding";
  case ModuleRole::norm:
    return "norm";
  case ModuleRole::other:
    return "other";
  }
  return "?";
}

bool
is_token_embedding(std::string_view module)
{
  const std::string_view leaf = leaf_of(module);
  return leaf == "embed_tokens" || leaf == "wte" || leaf == "word_embeddings" ||
         leaf == "tok_embeddings";
}

std::pair<std::string_view, std::string_view>
split_tensor_name(std::string_view name)
{
  const size_t weight = find_by_skips<k_weight_dot>(name);
  for (std::string_view marker : {".weight.absmax", ".weight.quant_map", ".weight.nested_absmax",
                                  ".weight.nested_quant_map", ".weight.quant_state."}) {
    if (weight == std::string_view::npos) {
      break; // every bitsandbytes marker starts with ".weight."
    }
    if (name.compare(weight, marker.size(), marker) == 0) {
      return {name.substr(0, weight), name.substr(weight + 8)};
    }
  }
  const void* found = name.empty() ? nullptr : ::memrchr(name.data(), '.', name.size());
  if (found == nullptr) {
    return {std::string_view(), name};
  }
  const auto dot = static_cast<size_t>(static_cast<const char*>(found) - name.data());
  return {name.substr(0, dot), name.substr(dot + 1)};
}

bool
is_activation_scale(std::string_view param)
{
  return param == "k_scale" || param == "v_scale" || param == "q_scale" || param == "input_scale" ||
         param == "output_scale" || param == "input_global_scale" || param == "k_zero_point" ||
         param == "v_zero_point" || param == "pre_quant_scale";
}

int64_t
Inventory::find(std::string_view name) const
{
  auto it = std::lower_bound(modules.begin(), modules.end(), name,
                             [](const Module& m, std::string_view n) { return m.name < n; });
  if (it == modules.end() || it->name != name) {
    return -1;
  }
  return it - modules.begin();
}

std::span<const Module>
Inventory::with_prefix(std::string_view prefix) const
{
  // The names starting with `prefix` sort together, from the first not before it.
  const auto begin =
    std::lower_bound(modules.begin(), modules.end(), prefix,
                     [](const Module& m, std::string_view text) { return m.name < text; });
  const auto end = std::partition_point(
    begin, modules.end(), [&](const Module& m) { return m.name.starts_with(prefix); });
  return {begin, end};
}

std::span<const Module>
Inventory::under(std::string_view ancestor) const
{
  return with_prefix(std::string(ancestor) + '.');
}

const TensorInfo*
find_param(const Checkpoint& checkpoint, const Module& module, std::string_view param)
{
  for (const uint32_t i : module.tensors) {
    const TensorInfo* t = checkpoint.tensors[i].info;
    if (param_of(module, t->name()) == param) {
      return t;
    }
  }
  return nullptr;
}

const TensorInfo*
find_param(const Checkpoint& checkpoint, const Module& module, KeyParam param)
{
  const uint16_t at = module.key_params[static_cast<size_t>(param)];
  if (at == Module::k_param_absent) {
    return nullptr;
  }
  if (at == Module::k_param_beyond) {
    return find_param(checkpoint, module, to_string(param));
  }
  return checkpoint.tensors[module.tensors[at]].info;
}

std::string_view
to_string(KeyParam param)
{
  switch (param) {
  case KeyParam::weight:
    return "weight";
  case KeyParam::weight_scale:
    return "weight_scale";
  case KeyParam::weight_scale_2:
    return "weight_scale_2";
  case KeyParam::weight_scale_inv:
    return "weight_scale_inv";
  case KeyParam::qweight:
    return "qweight";
  case KeyParam::scales:
    return "scales";
  }
  return "";
}

namespace {

// Whether `module` holds no ".weight": then no name "module.x" with no dot in x holds
// ".weight.", where split_tensor_name looks for bitsandbytes markers.
bool
is_plain_module(std::string_view module)
{
  return find_by_skips<k_dot_weight>(module) == std::string_view::npos;
}

// Whether `name` is "module.x" with no dot in x: for a plain module, split_tensor_name(name) is
// then {module, x}.
bool
continues_module(std::string_view name, std::string_view module)
{
  const size_t m = module.size();
  const size_t n = name.size();
  if (n <= m || name[m] != '.') {
    return false;
  }
#if defined(__SSE2__)
  // Asked of every tensor: 16 bytes at a time without a library call, the last 16 of the module
  // overlapping those before; then the bytes after the module's dot, as the 16 ending the name.
  const auto equal_16 = [](const char* a, const char* b) {
    const __m128i x = _mm_loadu_si128(reinterpret_cast<const __m128i*>(a));
    const __m128i y = _mm_loadu_si128(reinterpret_cast<const __m128i*>(b));
    return _mm_movemask_epi8(_mm_cmpeq_epi8(x, y)) == 0xFFFF;
  };
  if (m >= 16 && n - m - 1 < 16) {
    for (size_t i = 0; i + 16 < m; i += 16) {
      if (!equal_16(name.data() + i, module.data() + i)) {
        return false;
      }
    }
    if (!equal_16(name.data() + m - 16, module.data() + m - 16)) {
      return false;
    }
    const __m128i tail = _mm_loadu_si128(reinterpret_cast<const __m128i*>(name.data() + n - 16));
    const auto dots =
      static_cast<unsigned>(_mm_movemask_epi8(_mm_cmpeq_epi8(tail, _mm_set1_epi8('.'))));
    // Bit k is byte n - 16 + k: those after the module's dot are the top n - m - 1 bits.
    return (dots >> (16 - (n - m - 1))) == 0;
  }
#endif
  return name.starts_with(module) && name.find('.', m + 1) == std::string_view::npos;
}

// Tensor t's module name: the first module_sizes[t] bytes of its own (from the first pass).
std::string_view
module_of(const Checkpoint& checkpoint, const uint32_t* module_sizes, uint32_t t)
{
  return checkpoint.tensors[t].info->name().substr(0, module_sizes[t]);
}

// Groups tensors whose modules are out of name order, from the first pass's module name sizes
// and order signs (the comparison of each tensor's module with the one before it). Order breaks
// where a module's tensors surround a submodule's ("x.A_log", "x.conv.weight", "x.dt_bias"): the
// tensors that sort before the last one kept are set apart, sorted, and merged back. A module's
// tensors kept all come before its tensors set apart, so this is the order a stable sort gives.
// Names are compared again only next to a break. Fills the storage.
void
group_out_of_order(const Checkpoint& checkpoint, const uint32_t* module_sizes, const int8_t* order,
                   Inventory& inventory)
{
  const auto count = static_cast<uint32_t>(checkpoint.tensors.size());
  const auto module = [&](uint32_t t) { return module_of(checkpoint, module_sizes, t); };
  // The tensors kept in place are written to the storage's front as they come (a tensor's
  // slot is never before its own index); those set apart, few, to a vector of their own.
  auto& storage = inventory.tensor_storage;
  std::vector<uint32_t> apart;
  uint32_t kept = 0;
  for (uint32_t t = 0; t < count; ++t) {
    const bool in_place =
      kept == 0 ||
      (storage[kept - 1] + 1 == t ? order[t] <= 0 : module(storage[kept - 1]) <= module(t));
    if (in_place) {
      storage[kept++] = t;
    } else {
      apart.push_back(t);
    }
  }
  const auto by_module = [&](uint32_t a, uint32_t b) { return module(a) < module(b); };
  std::stable_sort(apart.begin(), apart.end(), by_module);
  // Merged from the back into the same storage: each tensor set apart goes after the kept
  // tensors whose module is not greater than its own. Breaks are local, so the kept tensors
  // that follow it are found by galloping back from the last one placed.
  uint32_t out = count;
  for (auto a = apart.rbegin(); a != apart.rend(); ++a) {
    const uint32_t t = *a;
    // How many of the last kept tensors have modules greater than t's: at least `low`, fewer
    // than `step`.
    size_t low = 0;
    size_t step = 1;
    while (step <= kept && by_module(t, storage[kept - step])) {
      low = step;
      step *= 2;
    }
    const size_t most = std::min<size_t>(step - 1, kept);
    const auto first =
      std::upper_bound(storage.begin() + static_cast<ptrdiff_t>(kept - most),
                       storage.begin() + static_cast<ptrdiff_t>(kept - low), t, by_module);
    const auto greater = static_cast<uint32_t>(storage.begin() + kept - first);
    for (uint32_t i = 0; i < greater; ++i) {
      storage[--out] = storage[--kept];
    }
    storage[--out] = t;
  }
}

// Where each module's tensors start among storage[begin, end), once grouped: a tensor starts
// a module unless it has the module of the one before it.
std::vector<uint32_t>
module_starts(const Checkpoint& checkpoint, const uint32_t* module_sizes, const int8_t* order,
              std::span<const uint32_t> storage, size_t begin, size_t end)
{
  const auto module = [&](uint32_t t) { return module_of(checkpoint, module_sizes, t); };
  std::vector<uint32_t> starts;
  for (size_t i = begin; i < end; ++i) {
    const uint32_t t = storage[i];
    const uint32_t before = i > 0 ? storage[i - 1] : 0;
    const bool same = i > 0 && (before + 1 == t ? order[t] == 0 : module(before) == module(t));
    if (!same) {
      starts.push_back(static_cast<uint32_t>(i));
    }
  }
  return starts;
}

} // namespace

Inventory
build_inventory(const Checkpoint& checkpoint, unsigned threads)
{
  // Tensors come sorted by name, so a module's tensors are usually adjacent and the modules
  // arrive in order: one pass in slices, one per core, notes where modules start. Only when modules
  // are out of order are they sorted.
  const size_t count = checkpoint.tensors.size();
  Inventory inventory;
  // Unwritten until the slices fill them.
  inventory.tensor_storage.resize(count);
  // Per tensor, the size of its module's name (a prefix of its own), and the sign of the
  // comparison of its module with the one before (for modules out of order).
  const std::unique_ptr<uint32_t[]> module_sizes(new uint32_t[count]);
  const std::unique_ptr<int8_t[]> order_signs(new int8_t[count]);
  // Per slice, where in storage each module's tensors start.
  std::vector<std::vector<uint32_t>> slice_starts(slice_count(count, threads));
  std::atomic<bool> in_order = true;
  in_slices(count, slice_starts.size(), [&](size_t slice, size_t begin, size_t end) {
    // Filled here and moved out at the end: the slices' vectors share a cache line, and a
    // push_back on one would take the line from the other thread.
    std::vector<uint32_t> starts;
    starts.reserve((end - begin) / 2 + 1);
    // A slice compares its first module with the one before it.
    std::string_view previous;
    bool plain = false; // `previous` holds no ".weight" (see continues_module)
    if (begin > 0) {
      previous = split_tensor_name(checkpoint.tensors[begin - 1].info->name()).first;
      plain = is_plain_module(previous);
    }
    bool ordered = true;
    for (size_t i = begin; i < end; ++i) {
      const std::string_view name = checkpoint.tensors[i].info->name();
      inventory.tensor_storage[i] = static_cast<uint32_t>(i);
      // Most tensors follow one of their module's: no split, no comparison.
      if (plain && continues_module(name, previous)) {
        module_sizes[i] = static_cast<uint32_t>(previous.size());
        order_signs[i] = 0;
        continue;
      }
      const std::string_view module = split_tensor_name(name).first;
      // One comparison tells the order and where a module starts.
      const int order = i == 0 ? -1 : previous.compare(module);
      ordered = ordered && order <= 0;
      if (order != 0) {
        starts.push_back(static_cast<uint32_t>(i));
        plain = is_plain_module(module);
      }
      module_sizes[i] = static_cast<uint32_t>(module.size());
      order_signs[i] = static_cast<int8_t>(order < 0 ? -1 : order > 0 ? 1 : 0);
      previous = module;
    }
    if (!ordered) {
      in_order = false;
    }
    slice_starts[slice] = std::move(starts);
  });
  if (!in_order) {
    group_out_of_order(checkpoint, module_sizes.get(), order_signs.get(), inventory);
    in_slices(count, slice_starts.size(), [&](size_t slice, size_t begin, size_t end) {
      slice_starts[slice] = module_starts(checkpoint, module_sizes.get(), order_signs.get(),
                                          inventory.tensor_storage, begin, end);
    });
  }
  std::vector<uint32_t> joined;
  if (slice_starts.size() > 1) {
    for (const auto& starts : slice_starts) {
      joined.insert(joined.end(), starts.begin(), starts.end());
    }
  }
  const std::vector<uint32_t>& starts = slice_starts.size() > 1 ? joined : slice_starts.front();
  // Each module runs from its start to the next one's; modules are built and classified
  // independently, in slices.
  inventory.modules.resize(starts.size());
  const std::span<const uint32_t> all(inventory.tensor_storage);
  const bool some_unlisted =
    checkpoint.has_index && std::any_of(checkpoint.shards.begin(), checkpoint.shards.end(),
                                        [](const ShardFile& shard) { return !shard.in_index; });
  in_slices(
    starts.size(), slice_count(starts.size(), threads), [&](size_t, size_t begin, size_t end) {
      for (size_t m = begin; m < end; ++m) {
        const uint32_t start = starts[m];
        const uint32_t size = (m + 1 < starts.size() ? starts[m + 1] : count) - start;
        const uint32_t t = all[start];
        const std::string_view name = module_of(checkpoint, module_sizes.get(), t);
        Module& module = inventory.modules[m];
        module = Module{};
        module.name = name;
        module.tensors = all.subspan(start, size);
        classify(checkpoint, module);
        if (some_unlisted) {
          module.loaded =
            std::any_of(module.tensors.begin(), module.tensors.end(), [&](uint32_t i) {
              return checkpoint.shards[checkpoint.shard_index(checkpoint.tensors[i])].in_index;
            });
        }
      }
    });
  return inventory;
}

std::string
module_evidence(const Checkpoint& checkpoint, const Module& module)
{
  const Params p(checkpoint, module);
  std::vector<std::string> evidence;
  bool narrow_or_marker = false;
  for (const auto& [param, t] : p.items) {
    if (is_activation_scale(param)) {
      continue;
    }
    if (is_weight_like(param) ? !is_wide_float(t->dtype) : is_quant_marker(param)) {
      evidence.push_back(describe(*t, param));
      narrow_or_marker = true;
    }
  }
  if (!narrow_or_marker && module.storage == Storage::unquantized) {
    if (const TensorInfo* w = p.get("weight")) {
      evidence.push_back(describe(*w, "weight"));
    }
  }
  return fmt::format("{}", fmt::join(evidence, ", "));
}

} // namespace qcheck
