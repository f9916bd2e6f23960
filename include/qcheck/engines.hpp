// Engine semantics: for a checkpoint module, the prefix each engine (vLLM, SGLang, TensorRT-LLM)
// builds and matches against the declared lists, and the decision "quantized or excluded" that
// engine reaches, format by format (shared/spec/engine-semantics.md §2-§7).
#pragma once

#include <algorithm>
#include <array>
#include <compare>
#include <cstdint>
#include <deque>
#include <initializer_list>
#include <iterator>
#include <memory>
#include <mutex>
#include <optional>
#include <set>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "qcheck/modules.hpp"
#include "qcheck/patterns.hpp"
#include "qcheck/quant_config.hpp"
#include "qcheck/regex.hpp"

namespace qcheck {

enum class Engine : uint8_t
{
  vllm,
  sglang,
  trtllm
};
inline constexpr std::array<Engine, 3> k_all_engines{Engine::vllm, Engine::sglang, Engine::trtllm};
std::string_view to_string(Engine engine);
std::string_view display_name(Engine engine); // "vLLM", "SGLang", "TensorRT-LLM"
// The engines' display names joined for a sentence: "vLLM", "vLLM and SGLang", "vLLM, SGLang
// and TensorRT-LLM". At least one engine.
std::string engines_text(const std::set<Engine>& engines);

// The block an engine reads: vLLM and SGLang prefer config.json, TensorRT-LLM
// hf_quant_config.json. nullptr when the engine sees no quantization.
const ConfigSource* source_for(const Declaration& declaration, Engine engine);

// True when the engine has a loader for this format (TensorRT-LLM: ModelOpt only here).
bool engine_reads(Engine engine, QuantFormat format);

// The key of the list `engine` reads in `source`: its list_key, but for SGLang the empty FP8
// ignored_layers when source.sglang_reads_empty.
std::string_view list_key_read(Engine engine, const ConfigSource& source);

// How the engine builds the layer that holds a module.
enum class LayerKind
{
  linear,       // (possibly fused) Linear: subject to the declared lists
  fused_moe,    // FusedMoE over ...experts
  lm_head,      // ParallelLMHead
  plain_linear, // a drafter's plain nn.Linear: never quantized
  router,       // an MoE router the engine builds with the model's quantization config
};

// The located MTP/NextN draft layers.
struct Drafts
{
  uint64_t declared = 0;          // num_nextn_predict_layers and friends
  std::vector<std::string> roots; // module-name roots, e.g. "model.language_model.layers.45", "mtp"
  // Declared draft indices with no tensor a loader reads: how many, and the first of them (at
  // most k_listed_missing, increasing).
  uint64_t missing_count = 0;
  std::vector<uint64_t> missing;
  static constexpr size_t k_listed_missing = 16;
  // Files the index does not name that hold tensors of a missing layer (loaders skip them).
  std::vector<std::string> unindexed_files;
  // The root a module belongs to, or nullptr.
  const std::string* root_of(std::string_view module) const;
};

// Up to this many declared draft layers are looked up one by one; past it, only those some
// module is stored under (the rest are missing without a lookup each).
inline constexpr uint64_t k_walked_draft_layers = 4096;

// Exclusion entries longer than this many bytes are not evaluated: no matcher accepts them
// (decide, entry_matches) and lint reports each (QC115). Real entries are module names and short
// patterns; a longer one would make every name's comparison cost its length.
inline constexpr size_t k_longest_entry = 4096;

// Finds the draft layers `model` declares among the inventory's modules. With an index, a
// declared layer counts as stored only when one of its tensors is in a file the index names.
Drafts locate_drafts(const ModelInfo& model, const Checkpoint& checkpoint,
                     const Inventory& inventory);

// A fused layer's shard names. Most are the own names of inventory modules, held as module
// indices (4 bytes, where a view takes 16: a million-tensor checkpoint has a quarter of a
// million shards per engine); the others as views of text that outlives them.
class ShardNames
{
public:
  class Iterator
  {
  public:
    using iterator_category = std::forward_iterator_tag;
    using value_type = std::string_view;
    using difference_type = std::ptrdiff_t;
    using pointer = void;
    using reference = std::string_view;

    Iterator() = default;
    Iterator(const ShardNames* names, size_t at) : m_names(names), m_at(at) {}
    std::string_view operator*() const { return (*m_names)[m_at]; }
    Iterator& operator++()
    {
      ++m_at;
      return *this;
    }
    Iterator operator++(int)
    {
      Iterator before = *this;
      ++m_at;
      return before;
    }
    bool operator==(const Iterator& other) const { return m_at == other.m_at; }

  private:
    const ShardNames* m_names = nullptr;
    size_t m_at = 0;
  };

  ShardNames() = default;
  ShardNames(std::initializer_list<std::string_view> names) { assign(names.begin(), names.end()); }
  ShardNames& operator=(const std::vector<std::string_view>& names)
  {
    assign(names.begin(), names.end());
    return *this;
  }
  template<typename It>
  void assign(It begin, It end)
  {
    clear();
    for (; begin != end; ++begin) {
      push_back(std::string_view(*begin));
    }
  }

  // A name kept as a view.
  void push_back(std::string_view name)
  {
    m_items.push_back(k_view | static_cast<uint32_t>(m_views.size()));
    m_views.push_back(name);
  }
  // The name of modules[module], where `modules` (an inventory's, which must outlive this) is
  // the same for every module added.
  void push_module(const Module* modules, uint32_t module)
  {
    if (module >= k_view) {
      push_back(modules[module].name);
      return;
    }
    m_modules = modules;
    m_items.push_back(module);
  }
  void reserve(size_t count) { m_items.reserve(count); }
  // Makes room for `count` names, each then given once by set_module() or set(): a builder that
  // counted them writes each in place (no push_back per name).
  void resize(size_t count) { m_items.resize(count); }
  void set_module(size_t i, const Module* modules, uint32_t module)
  {
    if (module >= k_view) {
      set(i, modules[module].name);
      return;
    }
    m_modules = modules;
    m_items[i] = module;
  }
  void set(size_t i, std::string_view name)
  {
    m_items[i] = k_view | static_cast<uint32_t>(m_views.size());
    m_views.push_back(name);
  }
  void clear()
  {
    m_items.clear();
    m_views.clear();
  }

  size_t size() const { return m_items.size(); }
  bool empty() const { return m_items.empty(); }
  // Whether name i is an inventory module's own name (added by push_module()).
  bool is_module(size_t i) const { return (m_items[i] & k_view) == 0; }
  std::string_view operator[](size_t i) const
  {
    const uint32_t item = m_items[i];
    return (item & k_view) != 0 ? m_views[item & ~k_view] : m_modules[item].name;
  }
  Iterator begin() const { return {this, 0}; }
  Iterator end() const { return {this, m_items.size()}; }
  std::vector<std::string_view> views() const { return {begin(), end()}; }
  // Adds `other`'s names after these; a module's name stays one (same inventory as push_module()).
  void append(const ShardNames& other)
  {
    m_items.reserve(m_items.size() + other.m_items.size());
    for (const uint32_t item : other.m_items) {
      if ((item & k_view) != 0) {
        push_back(other.m_views[item & ~k_view]);
      } else {
        push_module(other.m_modules, item);
      }
    }
  }

private:
  static constexpr uint32_t k_view = uint32_t{1} << 31;
  const Module* m_modules = nullptr;
  std::vector<uint32_t> m_items; // a module index, or k_view | an index into m_views
  std::vector<std::string_view> m_views;
};

// One engine layer: the prefix that engine checks, and the checkpoint modules it loads into it.
struct EngineLayer
{
  std::string prefix; // e.g. "model.layers.45.mlp.experts"
  LayerKind kind = LayerKind::linear;
  // Fused: the shard prefixes ("...q_proj", ...), each checked. They view the inventory's module
  // names, or the names an engine gives draft modules, which `renamed` keeps alive (a layer
  // joined by join_layers() keeps both parts' lists; it points at one).
  ShardNames shards;
  std::vector<uint32_t> modules; // indices into Inventory::modules
  uint32_t quantized = 0;        // how many of them are stored quantized
  bool draft = false;
  // A draft layer the engine builds under a main-model layer's names (vLLM's MiMo MTP layer k is
  // main layer k): a layer of its own beside that one, with the same prefix and shards.
  bool shadows_main = false;
  std::string draft_root;
  std::string namespace_note; // e.g. "the text-only drafter strips 'model.language_model.'"
  std::shared_ptr<const std::deque<std::string>> renamed; // shared by copies

  // Modules that may bear a name of the layer's: the first (a linear layer's prefix is its
  // module's name), and shards[j]'s when shards and modules pair up one to one (most fused
  // layers). A renamed draft layer keeps its modules: compare names before relying on either.
  std::optional<uint32_t> prefix_module() const
  {
    return modules.empty() ? std::nullopt : std::optional(modules.front());
  }
  std::optional<uint32_t> shard_module(size_t j) const
  {
    return shards.size() == modules.size() ? std::optional(modules[j]) : std::nullopt;
  }
};

// True when `engine` builds `layer` as a plain nn.Linear under `format`, which no list quantizes
// and which cannot hold packed weights: every LayerKind::plain_linear layer, except SGLang's
// DeepSeek/GLM NextN `model.eh_proj`, a ReplicatedLinear with the quantization config under
// Quark (spec 6.2, R38).
bool builds_plain_linear(Engine engine, QuantFormat format, const EngineLayer& layer);

// True when no list entry can name the layer `engine` builds for draft module `module` without
// naming main-model layers too: Xiaomi MiMo's MTP layers (model.mtp_layers.{k}), which vLLM
// builds under main layer k's names and SGLang under bare ones (self_attn.X, mlp.X); and those
// modules of Qwen3-Next's MTP layer k that SGLang builds as "model.layers.{k}.X" where main
// layer k holds that module too (an expert: any expert of that MoE layer) in `inventory`.
bool draft_names_unlistable(Engine engine, const ModelInfo& model, const Inventory& inventory,
                            std::string_view module);

// What an engine's matcher compares of a fused layer, a layer with shards (one without shards
// has its prefix alone).
enum class Compared : uint8_t
{
  shards_then_prefix, // each shard; then the prefix, when the shards did not settle it
  shards,             // each shard, never the fused name (vLLM's is_layer_skipped)
  prefix,             // the fused name, never its shards (bitsandbytes; a fused MoE by its prefix)
};

// What `engine` compares of `layer` against a `format` list (by its list; compressed-tensors
// fused MoE layers are decided by their probe names, fused_moe_probe_names(), not by this).
Compared compared_names_of(Engine engine, QuantFormat format, const EngineLayer& layer);

// Why `engine` builds no layer at all for draft module `module`, which other engines load
// (vLLM builds MiMo-V2's MTP layer 0 only); empty for every other module.
std::string unbuilt_draft_note(Engine engine, const ModelInfo& model, std::string_view module);

// The names compressed-tensors engines resolve a fused MoE layer's scheme from, however its
// experts are stored: "{prefix}.0.gate_proj", ".0.up_proj" and ".0.down_proj" (spec 3.4). No
// module has them when the experts are stored fused or named otherwise (w1/w2/w3). Empty for
// every other layer.
std::vector<std::string> fused_moe_probe_names(const EngineLayer& layer);

// Groups every quantizable module into the layers one engine builds. Modules the engine never
// builds as quantizable (norms, embeddings, routers, the heads of SGLang's DeepSeek/GLM NextN
// drafts, whose loader takes the target model's head instead) are left out.
std::vector<EngineLayer> engine_layers(Engine engine, const Inventory& inventory,
                                       const Drafts& drafts, const ModelInfo& model);

// The same for several engines in one pass over the modules (out[i] for engines[i]): what the
// engines see alike in a module (its draft root, its fused siblings) is worked out once.
std::vector<std::vector<EngineLayer>> engine_layers(std::span<const Engine> engines,
                                                    const Inventory& inventory,
                                                    const Drafts& drafts, const ModelInfo& model);

// The same for inventory.modules[begin, end) only (begin <= end <= the module count): layers of the
// modules before `begin` or from `end` on are not made, and a layer whose modules lie on both
// sides is made from this side's only. join_layers() puts adjacent parts back together.
std::vector<std::vector<EngineLayer>> engine_layers(std::span<const Engine> engines,
                                                    const Inventory& inventory,
                                                    const Drafts& drafts, const ModelInfo& model,
                                                    size_t begin, size_t end);

// One engine's layers of modules [a, b) and of [b, c), as engine_layers() made them, joined into
// the layers it makes of [a, c): a layer in both becomes one, its modules and shards in module
// order. `after`'s layers are moved out; what its renamed shards view stays alive.
void join_layers(std::vector<EngineLayer>& before, std::vector<EngineLayer>&& after);

// An entry of a list, a compressed-tensors target or a GPTQ dynamic key that an engine cannot
// evaluate, and why.
struct Unevaluable
{
  enum class Where
  {
    list,        // an exclusion entry
    target,      // a target of config group `group`
    dynamic_key, // a key of GPTQ's dynamic
  };
  std::string entry; // as written
  std::string problem;
  Where where = Where::list;
  std::string group{};
  auto operator<=>(const Unevaluable&) const = default;
};

struct Decision
{
  bool quantized = false;    // the engine allocates quantized parameters
  bool inferred = false;     // the engine asks the checkpoint's dtypes (GPTQ/AWQ inference)
  std::string matched;       // the entry (or rule) that excluded / selected it
  std::string reason;        // one phrase: why quantized / why excluded
  std::string override_note; // a hard-coded engine override decided it
  // What in the checkpoint's files would lift that override, when something does ("" else).
  std::string override_remedy;
  // Excluded by the list, and a hard-coded override would leave it unquantized without the
  // entry too: its note (removing the entry changes nothing for this engine).
  std::string forced_note;
  bool shards_disagree = false;
  std::string shard_detail;        // which shards were excluded
  // AutoRound: a fused layer the engine reads by its name (its exact key; in SGLang also one no
  // packed_modules_mapping key names), quantized with another (bits, group_size, sym) than some
  // shard's: what each is given; "" otherwise.
  std::string fused_name_settings;
  std::vector<Unevaluable> errors; // entries the engine cannot evaluate (bad regex, ...)
  // A layer excluded because every shard is listed, or whose shards disagree by the list: each
  // entry that excluded a shard, once, in list order.
  std::vector<std::string> shard_entries;
};

// Whether AutoRound extra_config key `key` is the one vLLM's INCConfig.get_quant_method reads for
// layer `prefix` before anything else: the prefix itself, or "model." + it. With bits missing or
// 16 and more, vLLM builds the layer unquantized; other keys reach get_layer_config(), which in
// both engines takes only the name itself as an exact key.
bool vllm_first_key(std::string_view key, std::string_view prefix);

// The first key in the block's order that vLLM's get_quant_method takes to leave layer `prefix`
// unquantized (vllm_first_key(), its bits missing or 16 and more); null when none.
const ExtraConfigEntry* vllm_unquantized_key(const ConfigSource& s, std::string_view prefix);

// Whether AutoRound extra_config key `key` applies to `name` in `engine`: the name itself, or one
// holding a regex metacharacter, which vLLM's INC searches for in the name and SGLang's AutoRound
// matches against all of it (re.fullmatch). A fused MoE also takes keys below its prefix; the
// caller checks that.
bool extra_config_key_matches(Engine engine, const std::string& key, std::string_view name);

// The extra_config entry `engine` reads for `name` (get_layer_config's order in both engines): an
// exact key first, else the first key in the block's order whose pattern matches; null when none.
const ExtraConfigEntry* extra_config_entry(Engine engine, const ConfigSource& s,
                                           std::string_view name);

// A block's GPTQ `dynamic` keys compiled once: each key's regex, and from 16 keys on an index of
// their literal starts, so a name tries only the keys whose regex can match at its start
// (re.match). A key's regex is checked when the rules are built and kept compiled from its first
// use on: a block of 10^6 keys matching nothing holds no program. Thread-safe once built.
class DynamicRules
{
public:
  explicit DynamicRules(const std::vector<DynamicRule>& rules);
  DynamicRules(const DynamicRules&) = delete;
  DynamicRules& operator=(const DynamicRules&) = delete;

  // Whether these are the rules of `rules` (the vector they were built from).
  bool built_from(const std::vector<DynamicRule>& rules) const { return m_from == &rules; }
  size_t size() const { return m_from->size(); }
  // Key i's regex, or why qcheck cannot evaluate it.
  const Expected<Regex>& regex(size_t i) const;
  // Whether qcheck can evaluate key i's regex (without compiling it again).
  bool evaluable(size_t i) const
  {
    return !std::binary_search(m_unevaluable.begin(), m_unevaluable.end(), i);
  }
  // Whether a "-:" key's regex finds a match in the text "mtp" (re.search): what vLLM's
  // Qwen3-Next/3.5 drafter asks before it builds mtp.fc, answered when the rules are built.
  bool negative_key_searches_mtp() const { return m_negative_mtp; }
  // Appends to `out`, in key order, the keys whose regex may match `name` with re.match: every
  // key that does, and keys qcheck cannot evaluate.
  void candidates(std::string_view name, std::vector<uint32_t>& out) const;

private:
  struct Compiled
  {
    std::once_flag once;
    std::optional<Expected<Regex>> regex;
  };
  const std::vector<DynamicRule>* m_from;
  std::unique_ptr<Compiled[]> m_compiled;
  std::vector<uint32_t> m_unevaluable; // keys whose regex does not compile, in order
  bool m_negative_mtp = false;
  std::optional<EntryIndex> m_index; // over the others' regexes; none for a few keys
};

class CompiledList;

// Decides one engine layer. `stored_quantized` is used only where the engine itself infers
// from dtypes (GPTQ/AWQ without explicit lists). With `list` (compiled from this engine and
// source), only the entries that can match are tried; the decision is the same.
Decision decide(Engine engine, const ConfigSource& source, const ModelInfo& model,
                const EngineLayer& layer, bool stored_quantized,
                const CompiledList* list = nullptr);

// One block's exclusion list compiled for one engine's matching (see EntryIndex): what makes
// decide() and the unused-entry check cost a few lookups per name instead of a pass over every
// entry (from 16 entries on). A list of entries blind to digits (see blind_to_digits) also
// remembers decide()'s answers per digit signature, whatever its length; one list may serve
// decide() from several threads.
class CompiledList
{
public:
  CompiledList(Engine engine, const ConfigSource& source);
  // The list compiled for several engines at once (out[i] for engines[i]): one index serves them
  // all, searched once per name whichever engine asks first, and the candidates kept for
  // modules (keep_module_candidates(), called on any one of them) are kept for all. `model`:
  // what decide() reads model-specifically (SGLang's Qwen-VL mappers) is indexed too.
  // `dynamic`: the block's GPTQ dynamic keys already compiled (for lists compiled apart that
  // share them); built here when null or another block's.
  static std::vector<CompiledList> compile(std::span<const Engine> engines,
                                           const ConfigSource& source,
                                           const ModelInfo* model = nullptr,
                                           std::shared_ptr<const DynamicRules> dynamic = nullptr);
  CompiledList(CompiledList&&) noexcept;
  CompiledList& operator=(CompiledList&&) noexcept;
  ~CompiledList();

  // Whether candidates() answers: false for a format this engine matches without an index
  // (candidates() then appends nothing; every entry must be tried).
  bool indexed() const;

  // Appends to `out`, sorted and unique, the indices into source.excludes of every entry that
  // entry_matches() may accept for `name` under this engine (or another compiled with it).
  void candidates(std::string_view name, std::vector<uint32_t>& out) const;

  // The same for `name`, when `module` is that name's module in the inventory given to
  // keep_module_candidates(): what decide() (or this call) kept for it, if anything was.
  void candidates(std::string_view name, std::optional<uint32_t> module,
                  std::vector<uint32_t>& out) const;

  // From now on decide() keeps the candidates it finds for the modules of `inventory` it looks
  // up by their own names (a layer's module, its shards), for the call above: the unused-entry
  // check then need not search the index again for them. Call before any decide() with this
  // list; `inventory` must outlive it. Nothing is kept for a list too short to be indexed.
  void keep_module_candidates(const Inventory& inventory);
  // How many modules' candidates are kept so far.
  size_t kept_modules() const;
  // The block's `dynamic` keys compiled with the list, when it has any and they are `source`'s
  // (a list compiled for another block with the same entries is not); else null.
  std::shared_ptr<const DynamicRules> dynamic_rules(const ConfigSource& source) const;

private:
  CompiledList();

  struct Impl;
  std::unique_ptr<Impl> m_impl;
  friend Decision decide(Engine, const ConfigSource&, const ModelInfo&, const EngineLayer&, bool,
                         const CompiledList*);
  friend std::vector<uint32_t> sglang_entries_reaching_draft(const ConfigSource&, const ModelInfo&,
                                                             std::span<const EngineLayer>);
};

// Whether CompiledList::compile() gives engines `a` and `b` one index for this block's list (one
// search per name serving both): when both match it with one; false when either does without.
bool share_list_index(Engine a, Engine b, const ConfigSource& source);

// The names an exclusion entry covers, for `explain --entries` and unused-entry checks:
// true when `entry` excludes `prefix` under the engine's matching for this format. With `model`,
// also the model-specific readings decide() applies (SGLang's Qwen-VL mappers).
bool entry_matches(Engine engine, QuantFormat format, std::string_view entry,
                   std::string_view prefix, const ModelInfo* model = nullptr);

// Whether `entry` lists `shard`, one shard of a fused layer, as `engine` reads shards: SGLang's
// ModelOpt config asks its is_layer_skipped (whole dotted components, no globs, no MLA rule);
// otherwise entry_matches().
bool shard_entry_matches(Engine engine, QuantFormat format, std::string_view entry,
                         std::string_view shard, const ModelInfo* model = nullptr);

// Whether `leaf` is one of the MLA projections SGLang's ModelOpt matcher reads by leaf alone
// (q_a_proj, q_b_proj, kv_a_proj_with_mqa, kv_b_proj): an entry ending in one excludes every
// module whose last component holds it, in any layer.
// The index in s.groups of the compressed-tensors config group whose scheme vLLM gives `layer`
// (find_matched_target over the targets in their first order, a target listed by several
// groups taking the last one's scheme): a target equal to the layer's name or a "re:" target
// matching it (re.match); else a class target ("Linear"); else, for a fused layer, the target
// of its first shard when every shard matches one. An MoE layer is read by expert 0's first
// projection. -1 when none.
int ct_scheme_group(const ConfigSource& s, const EngineLayer& layer);

bool is_mla_leaf(std::string_view leaf);
// q_b_proj and kv_b_proj: the MLA projections no engine fuses with another.
bool is_unfused_mla_leaf(std::string_view leaf);

// Whether SGLang compares fused `layer` by its fused name alone under `format`: its
// compressed-tensors and Quark configs read shards only for names the class's mapping keys
// (compressed_tensors/utils.py, quark/utils.py should_ignore_layer; no fallback table), and
// DeepSeek's holds fused_qkv_a_proj_with_mqa alone, so its gate_up_proj is read by that name.
// False where qcheck does not know the class's mapping, and for drafts.
bool sglang_compares_fused_name(Engine engine, QuantFormat format, const ModelInfo& model,
                                const EngineLayer& layer);

// Whether SGLang's AutoRound compares fused `layer`'s shards (get_layer_config() step 4) rather
// than read its fused name alone: only when a key of the packed_modules_mapping on its
// quantization config occurs in the layer's name. That mapping is empty unless the model class
// assigns it in __init__ (the loader's copy goes into a dict AutoRoundConfig.from_config never
// reads): the DeepSeek-V2 family and the wrappers building it name fused_qkv_a_proj_with_mqa only,
// Qwen3.5's text classes qkv_proj, gate_up_proj, in_proj_qkvz and in_proj_ba, Qwen3-Next qkv_proj
// and gate_up_proj. A draft model gets its own config, which no draft class gives a mapping.
bool sglang_reads_shards(const ModelInfo& model, const EngineLayer& layer);

// True when SGLang builds this draft root as a DeepSeek/GLM NextN layer (an inline root such as
// "model.layers.61" of a DeepSeek-like model): its decoder under "model.decoder", its eh_proj as
// "model.eh_proj", and no layer for its shared_head.head, which it fills from the target's head.
bool sglang_nextn_root(const std::string& root, const ModelInfo& model);

// How an engine spells a draft root in the prefixes it checks: vLLM's text-only drafter strips
// the VLM wrapper, SGLang builds DeepSeek/GLM NextN decoders under "model.decoder", TensorRT-LLM
// keeps the checkpoint name. Empty when the engine builds the root's layers under main-model
// names (SGLang's Qwen3-Next MTP layers: "model.layers.k").
std::string draft_root_spelling(Engine engine, const std::string& root, const ModelInfo& model);

// A name in a list of this format as SGLang's DeepSeek-V3 NextN draft reads it, when that
// differs from the name (nullopt otherwise): that model maps the first "model.layers.61" in each
// name of its ModelOpt, compressed-tensors and FP8 lists to "model.decoder" (61 fixed, whatever
// num_hidden_layers says). decide() applies it to every SGLang draft layer of such a model.
std::optional<std::string> sglang_draft_entry(QuantFormat format, const ModelInfo& model,
                                              std::string_view entry);
// Whether that rule applies to this format and model at all (sglang_draft_entry() may then
// differ from its entry).
bool sglang_maps_draft_entries(QuantFormat format, const ModelInfo& model);

// SGLang's Qwen2-VL, Qwen2.5-VL and Qwen3-VL run their weight-name mapper over compressed-tensors'
// and ModelOpt's lists, which turns "model.X" and "model.language_model.X" into
// "language_model.model.X", a name their text layers do not have (ModelOpt keeps a copy without
// "language_model.", which only Qwen2.5-VL's and Qwen2-VL's model.X meet). For `entry`, a plain
// entry naming one of the model's modules in checkpoint spelling that SGLang so loses: a spelling
// of SGLang's name the mapper leaves alone, the dotted suffix without its root for
// compressed-tensors ("layers.0.mlp.down_proj"), that suffix after "*." for ModelOpt. Empty when
// the format, model or entry is not concerned (the entry reaches SGLang's name as it is).
// Kimi-K2.5 (KimiK25ForConditionalGeneration): the name SGLang gives its text module `name` (a
// checkpoint name, "language_model.layers.X" or "language_model.model.X", or the head
// "language_model.lm_head"): its DeepseekV3ForCausalLM has no prefix ("model.X", "lm_head"), or
// "language_model" for Quark ("language_model.model.X"). "" when the name is kept, and for the
// other engines: vLLM's model file changed its names and mapper between versions (a
// DeepseekV2Model under "language_model" without a mapper, then DeepseekV2ForCausalLM with one),
// and TensorRT-LLM's are not known; their checkpoint names stand.
std::string kimi_k25_name(Engine engine, const ModelInfo& model, std::string_view name);

std::string sglang_unmapped_suffix(QuantFormat format, const ModelInfo& model,
                                   std::string_view entry);
// The entries of `source` (indices into its excludes) that the rule changes and that then
// exclude a draft layer among `layers` (SGLang's) under SGLang's matching. One pass over the
// layers' names with an index over the changed entries.
std::vector<uint32_t> sglang_entries_reaching_draft(const ConfigSource& source,
                                                    const ModelInfo& model,
                                                    std::span<const EngineLayer> layers);

// Checkpoint namespace -> the namespace vLLM's mapper produces for VLM roots:
// model.language_model.X
// -> language_model.model.X; model.visual.X, model.vision_tower.X and
// model.multi_modal_projector.X lose "model." (Qwen-VL, and the Gemma3 / LLaVA layout of
// transformers >= 4.52).
std::string vllm_namespace(std::string_view name);
// The name bitsandbytes' is_layer_skipped_bnb meets in `engine`: its own module name, as
// neither vLLM nor SGLang maps llm_int8_skip_modules. Qwen-VL: vLLM's language_model.model.X
// and visual.X (its hf_to_vllm_mapper, both checkpoint layouts); SGLang's model.X and visual.X
// for Qwen2-VL and Qwen2.5-VL. Else `prefix` as stored.
// (SGLang's tower attention is visual.blocks.N.attn.qkv_proj.)
std::string bnb_name(Engine engine, const ModelInfo* model, std::string_view prefix);
// Whether bnb_name() can differ from the stored names for `model`: its list is then compared
// entry by entry, not through an index of the stored names.
bool bnb_names_differ(const ModelInfo* model);
// The name a GPTQ `dynamic` key meets in `engine` (re.match against the engine's own layer
// prefix, no mapping in either engine): vLLM's vllm_namespace(); SGLang's module name, which for
// Qwen3-VL and Qwen3.5 puts the text model under "model." (model.language_model.X -> model.X),
// else as for compressed-tensors regexes.
std::string dynamic_subject(Engine engine, const ModelInfo* model, std::string_view prefix);
// The first of the block's GPTQ dynamic keys whose regex re.match-es `name` (a
// dynamic_subject()), in the block's order as both engines read them; null when none does (or
// none qcheck can evaluate).
const DynamicRule* first_dynamic_key(const ConfigSource& s, std::string_view name);
// Removes a VLM wrapper: "model.language_model.X" -> "model.X", "language_model.model.X" ->
// "model.X", "language_model.X" -> "X". Returns the name unchanged when there is none.
std::string strip_language_model(std::string_view name);

} // namespace qcheck
