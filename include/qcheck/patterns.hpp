// Name patterns as the engines spell them: Python fnmatch globs, and compiled pattern sets that
// answer "which entries match this name" without a per-name loop over every pattern.
#pragma once

#include <array>
#include <cstdint>
#include <span>
#include <string>
#include <string_view>
#include <vector>

namespace qcheck {

// Python fnmatch.fnmatchcase: `*` any run (dots included), `?` one character, `[seq]`, `[!seq]`.
// A `[` without a closing `]` is a literal. Runs in O(pattern × text) at worst, no recursion.
bool fnmatch(std::string_view pattern, std::string_view text);

// True when the text contains any of `*?[` (so fnmatch may differ from equality).
bool has_glob_chars(std::string_view text);

// The length of a glob's literal start: the position of its first `*`, `?`, `[` or `]`, or its
// size when it has none.
size_t first_wildcard(std::string_view text);

// True when `name` lies below `ancestor` in the dotted tree: it starts with `ancestor` and a dot.
bool is_below(std::string_view name, std::string_view ancestor);

// Splits a dotted name into its components.
std::vector<std::string_view> split_dots(std::string_view name);

// The last component of a dotted name (the whole name when it has no dot).
std::string_view leaf_of(std::string_view name);

// What precedes the last ".experts." of a per-expert module's name, with "experts":
// "a.b.experts.7.down_proj" -> "a.b.experts". Empty when the name holds no ".experts.".
std::string_view fused_moe_prefix(std::string_view module);

// The text every match of a Python regex (re.match: anchored at the start) begins with, as far
// as it can be read without interpreting the regex; empty when none is certain.
std::string regex_literal_start(std::string_view regex);

// Writes `name` with each run of ASCII digits replaced by one '\x01' into `out`: names that
// differ only in their numbers (experts, layers) share it. False when `name` holds '\x01'
// itself, which would make the signature ambiguous.
bool digit_signature(std::string_view name, std::string& out);

// True when `a` and `b` differ only in their numbers: each run of ASCII digits taken as one
// mark, they are equal (the signatures above, without writing them).
bool same_digit_signature(std::string_view a, std::string_view b);

// True when no engine's matching of `entry` can tell apart two names with one digit signature:
// the entry holds no digit and none of `?[]`, and is not a "re:" regex. Only `*` may then meet
// a name's numbers, and it takes any run of characters.
bool blind_to_digits(std::string_view entry);

// A set of keys and the values they report: for a text, every key occurring anywhere in it, in
// one pass over the text whatever the number of keys (an Aho-Corasick automaton). Built in time
// linear in the keys' total length once they are sorted.
class SubstringSet
{
public:
  struct Key
  {
    std::string text;
    uint32_t value = 0;
  };

  SubstringSet() = default;
  // With `case_insensitive`, keys and texts are compared in ASCII lower case. An empty key occurs
  // in every text.
  SubstringSet(std::vector<Key> keys, bool case_insensitive);

  // Appends the value of each key occurring in `text`, once per occurrence, in no set order.
  void find_all(std::string_view text, std::vector<uint32_t>& out) const;

  bool empty() const { return m_values.empty() && m_few.empty(); }

private:
  uint32_t child(uint32_t node, unsigned char c) const;

  // Up to this many case-sensitive keys are searched for one by one, without the automaton.
  static constexpr size_t k_few_keys = 8;
  std::vector<Key> m_few;

  bool m_case_insensitive = false;
  // Node n's edges are m_edge_chars/m_edge_targets[m_first_edge[n], m_first_edge[n + 1]),
  // sorted by character; its values are m_values[m_first_value[n], m_first_value[n + 1]).
  std::vector<uint32_t> m_first_edge;
  std::vector<unsigned char> m_edge_chars;
  std::vector<uint32_t> m_edge_targets;
  std::vector<uint32_t> m_first_value;
  std::vector<uint32_t> m_values;
  std::vector<uint32_t> m_fail;   // the longest proper suffix of the node's text that is a node
  std::vector<uint32_t> m_output; // the node or nearest suffix node with values; 0 if none
  std::vector<uint32_t> m_root;   // the root's edges by character (256 slots)
};

// A compiled list of exclusion entries: for a name, a superset of the entries that can match
// it under one family of matching rules, so a matcher runs on a few candidates instead of on
// every entry. Candidates are hashed spellings of the entries; a false candidate only costs a
// matcher call, and no true match is ever left out, whatever the list holds.
class EntryIndex
{
public:
  enum class Mode
  {
    exact,     // a key equals the name
    ancestors, // a key equals the name or a dotted ancestor of it
    dotted,    // a key is a run of whole dotted components of the name
    substring, // a key occurs anywhere in the name
  };
  struct Options
  {
    Mode mode = Mode::exact;
    // `*?[]` are wildcards: the literal text before the first one must occur in the name where
    // a full match would put it (its start, a component start, anywhere). When false, entries
    // are literal text.
    bool globs = false;
    bool case_insensitive = false;
    // Entries starting with "re:" are Python regexes matched at a name's start: indexed by the
    // literal text they begin with (regex_literal_start), or always candidates.
    bool regex_entries = false;
    // Also candidates: entries whose key's leaf (after the last '.') is one of these, for every
    // name whose leaf contains it (SGLang's ModelOpt rule for fused MLA projections).
    std::vector<std::string> leaf_markers{};
    // Also candidates, for names containing `reverse_marker`: entries that contain the name.
    std::string reverse_marker{};
  };

  // One spelling under which an entry is indexed (the entry, its unwrapped form...).
  struct Spelling
  {
    std::string_view text; // read only while the index is built
    uint32_t entry;
    // Text even when it starts with "re:" and `regex_entries` is set: for an index that serves
    // matchers reading such entries as regexes and others reading them as text.
    bool text_only = false;
  };

  EntryIndex() = default;
  // `spellings` of entries 0 .. entries - 1, grouped by entry in increasing order; an entry's
  // first spelling is the entry itself.
  EntryIndex(std::span<const Spelling> spellings, size_t entries, const Options& options);
  // keys[i]: the spellings of entry i.
  EntryIndex(const std::vector<std::vector<std::string>>& keys, const Options& options);

  // Appends the candidates for a name seen under any of `names` (its spellings) to `out`,
  // sorted and unique: list order.
  void candidates(std::span<const std::string_view> names, std::vector<uint32_t>& out) const;

  size_t size() const { return m_size; }

private:
  struct Key
  {
    uint64_t hash;
    uint32_t entry;
    uint32_t run = 0; // m_prefixes: 1 + the index of the key's tail run in m_tail_runs; 0: none
  };
  // Keys grouped by the hash's top bits, with a directory on them: a lookup reads one slot and
  // scans the few keys behind it.
  // A large table also has a bit per (remixed) hash, a filter small enough to stay in cache:
  // most lookups are for absent names, and it answers them without touching the table.
  struct Table
  {
    std::vector<Key> keys;
    std::vector<uint32_t> directory;
    unsigned shift = 64;
    std::vector<uint64_t> filter; // empty: none
    unsigned filter_shift = 64;
    void seal();
    void lookup(uint64_t hash, std::vector<uint32_t>& out) const;
    // The keys of this hash's directory slot: every key with the hash, among others (compare
    // their hashes); empty when the filter rules the hash out.
    std::span<const Key> slot(uint64_t hash) const;
  };

  // Hashes of the first (or last) components of keys, as 4,096 bits: a name's component whose
  // bit is clear starts (ends) no key; a set bit may be a collision: a filter, never an answer.
  class ComponentFilter
  {
  public:
    void add(uint64_t hash) { m_bits[hash >> 58] |= uint64_t{1} << ((hash >> 52) & 63); }
    void pass_all() { m_all = true; }
    bool may_hold(uint64_t hash) const
    {
      return m_all || (m_bits[hash >> 58] >> ((hash >> 52) & 63) & 1) != 0;
    }

  private:
    std::array<uint64_t, 64> m_bits{};
    bool m_all = false;
  };

  Options m_options;
  size_t m_size = 0;
  Table m_literal;  // whole keys, unless anywhere in the name
  Table m_prefixes; // literal start of a glob or of a re: entry, same
  // A glob's longest literal run after its first wildcard: text any name it matches holds
  // after the literal start, so a name without it is no candidate (most often: one glob such
  // as "model.layers.*.mlp.gate" begins every name).
  std::vector<std::string> m_tail_runs;
  void lookup_prefix(std::string_view name, size_t begin, size_t length, uint64_t hash,
                     std::vector<uint32_t>& out) const;
  // Dotted mode: the first components of m_literal's and m_prefixes' keys.
  ComponentFilter m_literal_firsts;
  ComponentFilter m_prefix_firsts;
  // A text with two dots or more that must occur somewhere in a name, found by the run between
  // its first and last dot (whole components of the name).
  struct InnerText
  {
    uint64_t hash; // of the whole text
    uint32_t entry;
    size_t before; // bytes before the run: up to and with the first dot
    size_t after;  // bytes after it: from the last dot on
    uint32_t run;  // a glob's literal start: 1 + its tail run in m_tail_runs, which a name holds
                   // after the text; 0: none
  };
  // Texts that can occur anywhere in a name: whole keys and literal starts in substring mode,
  // and the longest literal run of a glob starting with a wildcard in every mode. Those with two
  // dots or more are in m_inner (its values index m_inner_texts); the others here.
  Table m_inner;
  std::vector<InnerText> m_inner_texts;
  ComponentFilter m_inner_firsts; // the first and last components of m_inner's runs
  ComponentFilter m_inner_lasts;
  SubstringSet m_anywhere;
  // Substring mode: glob literal starts without two dots that have a tail run; its values index
  // m_checked. A name holding the start is a candidate only when it also holds the run.
  struct CheckedText
  {
    uint32_t entry;
    uint32_t run; // 1 + the index in m_tail_runs
  };
  SubstringSet m_anywhere_checked;
  std::vector<CheckedText> m_checked;
  void find_anywhere(std::string_view name, std::vector<uint32_t>& out) const;
  std::vector<std::vector<uint32_t>> m_marked; // [i]: entries whose leaf is leaf_markers[i]
  Table m_reverse;                        // the text that ends with each marker in a key (a window)
  std::vector<uint32_t> m_always;         // no indexable literal part
  std::vector<uint32_t> m_reverse_all;    // every entry holding the marker
  std::vector<uint8_t> m_literal_lengths; // [n]: some key is n bytes long (a byte, not a bit:
  std::vector<uint8_t> m_prefix_lengths;  // asked for every window of every name)
  std::vector<uint8_t> m_inner_lengths;
  std::vector<size_t> m_prefix_length_list; // the lengths m_prefix_lengths marks, increasing
};

} // namespace qcheck
