// The declared side: quantization blocks read from config.json (quantization_config,
// text_config.quantization_config, compression_config), hf_quant_config.json and
// quantization_config.json, plus the model facts that locate MTP/NextN draft layers.
#pragma once

#include <initializer_list>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "qcheck/input.hpp"

namespace qcheck {

inline constexpr uint64_t k_max_config_size = 64ull << 20;

enum class QuantFormat
{
  modelopt,
  compressed_tensors,
  gptq,
  auto_round,
  awq,
  fp8,
  quark,
  bitsandbytes,
  mxfp4,
  unknown,
};

std::string_view to_string(QuantFormat format);

// The entries of one list of names (an exclusion list can hold tens of thousands): their text
// packed in blocks that never move, or left in the text they were read from (keep_text()), read
// as views in list order. A view stays valid while any list holding it lives and is not written.
// Copies share the entries; writing to a list whose entries are shared copies them first.
class EntryList
{
public:
  using value_type = std::string_view;
  using const_iterator = std::vector<std::string_view>::const_iterator;

  EntryList() = default;
  EntryList(std::initializer_list<std::string_view> entries);
  explicit EntryList(const std::vector<std::string>& entries);

  size_t size() const { return m_entries ? m_entries->views.size() : 0; }
  bool empty() const { return size() == 0; }
  // i < size(); the reference (and data()) until the list is written.
  const std::string_view& operator[](size_t i) const { return m_entries->views[i]; }
  const std::string_view* data() const { return m_entries ? m_entries->views.data() : nullptr; }
  const_iterator begin() const { return m_entries ? m_entries->views.begin() : const_iterator(); }
  const_iterator end() const { return m_entries ? m_entries->views.end() : const_iterator(); }
  std::string_view front() const { return (*this)[0]; }
  std::string_view back() const { return (*this)[size() - 1]; }

  void reserve(size_t entries);
  void push_back(std::string_view entry);
  // Keeps `owner` (what keeps a text's bytes, such as PaddedBytes::owner) alive with the list,
  // so that entries lying in those bytes are kept as views (push_back_kept()), not copied.
  void keep_text(std::shared_ptr<const void> owner);
  // Appends `entry`, which must lie in the bytes of the last keep_text() owner, as a view (on a
  // list that keep_text() was called on and that was not copied since).
  void push_back_kept(std::string_view entry)
  {
    m_entries->read_text = {}; // written: see mark_read_from()
    m_entries->views.push_back(entry);
  }
  // Where in a text a list was read from (mark_read_from()).
  struct TextSpan
  {
    size_t key = 0;   // the member's key token (its opening quote)
    size_t begin = 0; // the array, [begin, end)
    size_t end = 0;
    // The elements the text spells with an escape (copies, not views into the text): each one's
    // string token, by increasing index.
    struct Escaped
    {
      uint32_t index = 0;
      size_t begin = 0; // the token's opening quote
      size_t end = 0;   // past its closing quote
    };
    std::vector<Escaped> escaped{};
  };
  // Records that the list is, as it stands, the JSON array `span` of `text`, the value of the
  // only member of the text with its key, element i being (*this)[i]: a view into the text
  // unless listed in span.escaped. Writing to the list forgets it.
  void mark_read_from(std::string_view text, TextSpan span);
  // mark_read_from()'s span for `text` (the same address and size, not merely equal bytes), or
  // that of a list share_entries() was called on with this list's entries, while the list is
  // not written; null otherwise.
  const TextSpan* read_span(std::string_view text) const;
  // The [begin, end) of element i's string token in `text`, where read_span(text) is known.
  std::optional<std::pair<size_t, size_t>> element_token(std::string_view text, size_t i) const;
  // Forgets where the list was read from (as writing to it would).
  void forget_reading()
  {
    if (m_entries) {
      own();
    }
  }
  // Makes this list hold the entries of `equal`, a list with the same entries (shared, as a copy
  // would), and gives what this list knew of where it was read from to `equal`'s entries (shared
  // with it, though `equal` is const): read_span() and element_token() still answer for that
  // text, on both lists. When `equal` holds no entries at all, that reading is dropped.
  void share_entries(const EntryList& equal);
  // Inserts `entry` before position `at` (at most size()).
  void insert(size_t at, std::string_view entry);

  // The same entries in the same order (lists sharing their entries: at once).
  bool operator==(const EntryList& other) const;
  bool operator==(const std::vector<std::string>& other) const;

private:
  struct Entries
  {
    std::vector<std::string_view> views;
    std::vector<std::unique_ptr<char[]>> blocks;
    std::vector<std::shared_ptr<const void>> texts; // keep_text()'s owners
    std::string_view read_text;                     // mark_read_from()'s, while it holds
    TextSpan read;
    // Entries of equal lists read from other texts (share_entries()), for their positions.
    std::vector<std::shared_ptr<const Entries>> twins;
    char* free = nullptr; // the rest of the last block
    size_t left = 0;
  };
  Entries& own();
  // The entries (these, or a twin's) whose reading is of `text`; null when none is.
  const Entries* reading(std::string_view text) const;

  std::shared_ptr<Entries> m_entries;
};

struct CtGroup
{
  std::string name;
  std::vector<std::string> targets;
  std::string format; // the group's own format, or empty
  int num_bits = 0;
  std::string type; // "int" / "float"
};

struct DynamicRule
{
  std::string key; // as written, e.g. "-:.*mtp.*"
  bool negative = false;
  std::string regex; // key without its "+:" / "-:" prefix
};

// An AutoRound block's or extra_config key's (bits, group_size, sym), each value as Python
// compares it: numbers by value (4 and 4.0 alike), true as 1 and false as 0, a string quoted;
// empty when not written. The engines compare these triples across a fused layer's shards.
struct LayerSettings
{
  std::string bits;
  std::string group_size;
  std::string sym;
  bool operator==(const LayerSettings&) const = default;
};

struct ExtraConfigEntry
{
  std::string key;
  // A number (or a bool, as Python's 1 and 0) read as the engines compare it with 16 (4.5 as 4,
  // 0.5 and a negative as 1); 0 when absent, and when any other value, on which the engines
  // raise (the block's value_errors name it).
  int bits = 0;
  LayerSettings written{};
};

// One quantization block as one file declares it.
struct ConfigSource
{
  std::string file;    // "config.json", "hf_quant_config.json" or "quantization_config.json"
  std::string pointer; // JSON pointer of the block, e.g. "/quantization_config"
  QuantFormat format = QuantFormat::unknown;
  std::string method;    // quant_method as written ("modelopt" when implied)
  std::string algo;      // ModelOpt quant_algo, upper-cased
  std::string list_key;  // key of the exclusion list in this block ("ignore", ...)
  bool has_list = false; // the key is present
  EntryList excludes;    // its entries
  // positions[i]: the index in the JSON list of excludes[i], when an element of another type was
  // left out (see type_errors); empty while they coincide.
  std::vector<uint32_t> positions;
  // compressed-tensors
  std::string ct_format;
  std::vector<CtGroup> groups;
  // GPTQ / GPTQModel
  std::vector<DynamicRule> dynamic;
  std::vector<std::string> modules_in_block;
  // AutoRound
  std::vector<std::string> block_names;
  std::vector<ExtraConfigEntry> extra_config;
  LayerSettings settings; // the block's own bits, group_size and sym
  // Lists some formats carry besides their main one (e.g. modules_to_not_convert).
  std::vector<std::string> not_convert;
  // ModelOpt MIXED_PRECISION: module -> quant_algo
  std::vector<std::pair<std::string, std::string>> quantized_layers;
  int group_size = 0;
  int bits = 0; // GPTQ/AWQ/AutoRound weight bits; 0 when not given
  std::vector<uint64_t> weight_block_size;
  bool lm_head = false; // GPTQ/AWQ "lm_head": true quantizes the output head
  // FP8: ignored_layers is given but empty, which SGLang reads, while vLLM reads excludes
  // (modules_to_not_convert).
  bool sglang_reads_empty = false;
  // A list of this block some engine would be expected to read but that no engine, or only one,
  // reads: (JSON pointer of the key, one line).
  std::vector<std::pair<std::string, std::string>> unread;
  // Lists of names written otherwise (one string, an element that is a number...), one line
  // each; those elements are not in the lists above.
  std::vector<std::string> type_errors;
  // Values the engines raise on when they read them: (JSON pointer of the value, one line).
  std::vector<std::pair<std::string, std::string>> value_errors{};
};

// Facts from config.json that locate draft layers and name the architecture.
struct ModelInfo
{
  std::string model_type;      // top level
  std::string text_model_type; // text_config.model_type
  std::vector<std::string> architectures;
  std::optional<uint64_t> num_hidden_layers;     // text_config first
  uint64_t num_mtp_layers = 0;                   // num_nextn_predict_layers and friends
  std::string mtp_key;                           // which key gave num_mtp_layers
  std::vector<std::string> disable_quant_module; // LongCat
  bool quark = false; // a config declares Quark (SGLang then builds Kimi-K2.5's text under
                      // "language_model")
};

enum class ConfigIssue
{
  invalid,        // not JSON, not an object, unreadable: the file declares nothing
  python_refuses, // read, but Python's json (and so every engine) refuses it: a byte order mark
  duplicate_key,  // valid, but a key repeats (engines keep the last value)
  wrong_type,     // valid, but a list of names holds something else
  unknown_method, // a quantization block qcheck cannot evaluate
  unread_list,    // valid, but a list the engines do not all read (FP8's two list keys)
};

struct ConfigProblem
{
  std::string file;
  std::string message; // one line, without the file name
  ConfigIssue issue = ConfigIssue::invalid;
  std::string pointer{}; // JSON pointer of the value it is about; empty: the file
};

struct Declaration
{
  bool has_config = false; // config.json was found and parsed
  ModelInfo model;
  std::vector<ConfigSource> sources; // file order: config.json, hf_quant_config.json, ...
  std::vector<ConfigProblem> problems;
  // Each configuration file's text as it was parsed (file name, text), for finding positions:
  // they point into what was read, and a long list is not read a second time. A file parsed
  // from a copy of its text (one simdjson does not read as Python does: "-0", a byte order
  // mark) is left out.
  std::vector<std::pair<std::string, PaddedBytes>> texts;

  const ConfigSource* find(std::string_view file) const;
};

// Reads the configs of a model folder. Missing files are fine; unreadable ones are problems.
Declaration read_declaration(const FileSystem& fs, const std::string& root);

// Parses one quantization block (exposed for tests). `text` is the block's JSON.
ConfigSource parse_quant_block(const std::string& file, const std::string& pointer,
                               const std::string& text);

} // namespace qcheck
