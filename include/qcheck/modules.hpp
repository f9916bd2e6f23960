// The module inventory: tensors grouped into modules (tensor name minus its parameter name) and
// each module's storage classified from its tensors alone: unquantized float weight, or quantized
// with the family the tensors show (scales, packing, dtypes).
#pragma once

#include <array>
#include <cstdint>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "qcheck/checkpoint.hpp"

namespace qcheck {

enum class Storage : uint8_t
{
  unquantized, // float weight (F16/BF16/F32/F64), no quantization evidence
  quantized,   // at least one piece of quantization evidence
  no_weight,   // nothing that is a weight (buffers, scales alone, ...)
};

enum class QuantFamily : uint8_t
{
  none,
  modelopt_nvfp4, // U8 weight + F8_E4M3 weight_scale + F32 weight_scale_2
  fp8_per_tensor, // F8_E4M3 weight + weight_scale (ModelOpt FP8, compressed-tensors float)
  fp8_block,      // F8_E4M3 weight + weight_scale_inv (HF fine-grained FP8, DeepSeek)
  mxfp8,          // F8_E4M3 weight + E8M0 (U8/F8_E8M0) weight_scale
  int8_scaled,    // I8 weight + weight_scale (compressed-tensors int-quantized)
  ct_pack,        // I32 weight_packed (compressed-tensors pack-quantized)
  ct_nvfp4_pack,  // U8 weight_packed + weight_global_scale
  ct_mxfp4_pack,  // U8 weight_packed + U8 weight_scale, no global scale
  gptq,           // I32 qweight packed along the input dimension
  awq,            // I32 qweight packed along the output dimension
  mxfp4,          // *_blocks + *_scales (gpt-oss experts)
  bitsandbytes,   // absmax / quant_state / SCB
  unknown,        // quantized, but no known layout
};

enum class ModuleRole : uint8_t
{
  linear,        // a projection an engine builds as a (possibly quantized) Linear
  expert,        // one expert's projection inside a fused MoE (...experts.{e}.{proj})
  fused_experts, // all experts in one module (...mlp.experts with 3-D or *_blocks tensors)
  router,        // MoE router (mlp.gate, router, shared_expert_gate)
  // A projection every engine builds without a quantization config: DeepSeek-V3.2's
  // self_attn.indexer.weights_proj (vLLM's and SGLang's Indexer pass quant_config=None).
  unquantized_linear,
  lm_head,   // output head (lm_head, shared_head.head)
  embedding, // token embeddings
  norm,      // 1-D weights (layer norms, RMS norms)
  other,     // convolutions, buffers, anything else
};

std::string_view to_string(Storage storage);
std::string_view to_string(QuantFamily family);
std::string_view to_string(ModuleRole role);

// The parameters whose first tensor build_inventory() notes in every module, for find_param()
// to answer without a look at the module's tensors.
enum class KeyParam : uint8_t
{
  weight,
  weight_scale,
  weight_scale_2,
  weight_scale_inv,
  qweight,
  scales, // the last: k_key_params counts them
};
inline constexpr size_t k_key_params = static_cast<size_t>(KeyParam::scales) + 1;
// The name of a KeyParam ("weight_scale_inv").
std::string_view to_string(KeyParam param);

struct Module
{
  // In Module::key_params: no tensor of that parameter, or one placed past what 16 bits hold.
  static constexpr uint16_t k_param_absent = UINT16_MAX;
  static constexpr uint16_t k_param_beyond = UINT16_MAX - 1;

  std::string_view name;             // views the tensor names in Checkpoint::shards' headers
  std::span<const uint32_t> tensors; // indices into Checkpoint::tensors, in Inventory storage
  // Per KeyParam, where in `tensors` the first tensor of that parameter is.
  std::array<uint16_t, k_key_params> key_params = [] {
    std::array<uint16_t, k_key_params> none;
    none.fill(k_param_absent);
    return none;
  }();
  Storage storage = Storage::no_weight;
  QuantFamily family = QuantFamily::none;
  ModuleRole role = ModuleRole::other;
  // Some tensor is in a file a loader reads: with an index, only the files it names (a module
  // stored only elsewhere is never loaded, QC005).
  bool loaded = true;
};
// 48 bytes: a checkpoint of a million tensors has a quarter of a million modules.
static_assert(sizeof(Module) <= 48);

// Move-only: modules view `tensor_storage`, whose buffer a move keeps.
struct Inventory
{
  Inventory() = default;
  Inventory(Inventory&&) = default;
  Inventory& operator=(Inventory&&) = default;
  Inventory(const Inventory&) = delete;
  Inventory& operator=(const Inventory&) = delete;

  std::vector<Module, UnwrittenAllocator<Module>> modules; // sorted by name
  std::vector<uint32_t, UnwrittenAllocator<uint32_t>> tensor_storage;
  // Index into modules, or -1.
  int64_t find(std::string_view name) const;
  // The modules whose names start with `prefix`, in order.
  std::span<const Module> with_prefix(std::string_view prefix) const;
  // The modules below `ancestor` in the dotted tree (names starting with "ancestor."), in order.
  std::span<const Module> under(std::string_view ancestor) const;
};

// Whether `module` is a token embedding by its last component (embed_tokens, wte, word_embeddings,
// tok_embeddings): what engines build as a vocabulary embedding, never quantized. Position and
// patch embeddings are not.
bool is_token_embedding(std::string_view module);

// Splits a tensor name into module and parameter name ("a.b.weight" -> "a.b", "weight").
// bitsandbytes' "a.weight.absmax" and "a.weight.quant_state.x" belong to module "a".
std::pair<std::string_view, std::string_view> split_tensor_name(std::string_view name);

// True for parameter names that describe KV-cache or activation quantization only and say
// nothing about the weight (k_scale, v_scale, q_scale, input_scale, ...).
bool is_activation_scale(std::string_view param);

// Groups the checkpoint's tensors into modules and classifies them; `threads` at most (0: one
// per core) for large checkpoints.
Inventory build_inventory(const Checkpoint& checkpoint, unsigned threads = 0);

// Why a module is classified so, e.g. "weight U8 [64, 32], weight_scale F8_E4M3 [64, 2]".
std::string module_evidence(const Checkpoint& checkpoint, const Module& module);

// The parameter name ("weight_scale") of `tensor`, the name of one of `module`'s tensors, as
// split_tensor_name() gives it: what follows the module's name and its dot (a name without a
// dot is its own parameter's), less the "weight." of a bitsandbytes marker ("a.weight.absmax":
// "absmax"), the only split that leaves a dot in the parameter.
inline std::string_view
param_of(const Module& module, std::string_view tensor)
{
  const size_t size = module.name.size();
  const std::string_view rest =
    tensor.substr(size < tensor.size() && tensor[size] == '.' ? size + 1 : size);
  // Only that split leaves a dot, and only after "weight".
  return rest.size() > 7 && rest[6] == '.' ? rest.substr(7) : rest;
}

// The parameter name of the module's tensor `i` (an index into module.tensors).
inline std::string_view
param_of(const Checkpoint& checkpoint, const Module& module, size_t i)
{
  return param_of(module, checkpoint.tensors[module.tensors[i]].info->name());
}

// The first tensor of a module with that parameter name, e.g. "weight_scale" (nullptr if
// absent).
const TensorInfo* find_param(const Checkpoint& checkpoint, const Module& module,
                             std::string_view param);
const TensorInfo* find_param(const Checkpoint& checkpoint, const Module& module, KeyParam param);

} // namespace qcheck
