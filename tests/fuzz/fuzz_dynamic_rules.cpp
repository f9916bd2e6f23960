// Fuzzes DynamicRules, a block's GPTQ `dynamic` keys compiled once with an index of their literal
// starts: for every name, the candidates must hold every evaluable key whose regex matches the
// name (re.match, checked with Regex itself) and every key qcheck cannot evaluate, appended after
// what `out` already held, strictly increasing and below size(); asked twice, before and after
// every regex is compiled, they must be the same. evaluable(i) must agree with regex(i) and with
// compiling the key again, and negative_key_searches_mtp() with the "-:" keys' re.search("mtp").
// The first byte picks the options: bit 0 pads the keys to the length from which the index is
// used, bit 1 puts that padding before the input's keys (shifting their indices), bit 2 reads
// \x01 as a newline in keys and names. The rest is split at newlines into keys ("+:" / "-:"
// prefixes read as the config parser reads them) up to the first empty line, then names.
#include <algorithm>
#include <cstdint>
#include <functional>
#include <string>
#include <string_view>
#include <vector>

#include "fuzz_check.hpp"
#include "qcheck/engines.hpp"
#include "qcheck/quant_config.hpp"
#include "qcheck/regex.hpp"

using namespace qcheck;

namespace {

constexpr size_t k_min_keys = 24; // above the index's threshold (16)
constexpr size_t k_max_keys = 64;
constexpr size_t k_max_names = 16;
constexpr size_t k_max_line = 96;

// A key as the config parser reads a `dynamic` member (src/quant_config.cpp).
DynamicRule
rule_of(std::string key)
{
  DynamicRule rule;
  rule.negative = key.starts_with("-:");
  rule.regex = key.starts_with("-:") || key.starts_with("+:") ? key.substr(2) : key;
  rule.key = std::move(key);
  return rule;
}

std::string
line_text(std::string_view line, bool newlines)
{
  std::string text(line);
  if (newlines) {
    std::replace(text.begin(), text.end(), '\x01', '\n');
  }
  return text;
}

// The keys `rules` appends for `name` after a prefix no key index can hold, checked to be
// appended only, strictly increasing and below size().
std::vector<uint32_t>
checked_candidates(const DynamicRules& rules, std::string_view name)
{
  const std::vector<uint32_t> prefix{static_cast<uint32_t>(rules.size() + 7), 0};
  std::vector<uint32_t> out = prefix;
  rules.candidates(name, out);
  QCHECK_FUZZ_CHECK(out.size() >= prefix.size());
  QCHECK_FUZZ_CHECK(std::equal(prefix.begin(), prefix.end(), out.begin()));
  std::vector<uint32_t> found(out.begin() + static_cast<std::ptrdiff_t>(prefix.size()), out.end());
  QCHECK_FUZZ_CHECK(std::adjacent_find(found.begin(), found.end(), std::greater_equal<>()) ==
                    found.end());
  QCHECK_FUZZ_CHECK(found.empty() || found.back() < rules.size());
  return found;
}

} // namespace

extern "C" int
LLVMFuzzerTestOneInput(const uint8_t* data, size_t size)
{
  if (size == 0) {
    return 0;
  }
  const bool pad = (data[0] & 1) != 0;
  const bool pad_first = (data[0] & 2) != 0;
  const bool newlines = (data[0] & 4) != 0;
  const FuzzLines lines = split_fuzz_lines({reinterpret_cast<const char*>(data) + 1, size - 1},
                                           k_max_line, k_max_keys, k_max_names);
  std::vector<std::string> keys, names;
  for (const std::string_view line : lines.entries) {
    keys.push_back(line_text(line, newlines));
  }
  for (const std::string_view line : lines.names) {
    names.push_back(line_text(line, newlines));
  }
  std::vector<std::string> padding;
  for (size_t i = 0; pad && keys.size() + padding.size() < k_min_keys; ++i) {
    padding.push_back((i % 2 == 0 ? "-:zz\\.unused\\." : "zz.pad.") + std::to_string(i));
  }
  keys.insert(pad_first ? keys.begin() : keys.end(), padding.begin(), padding.end());
  std::vector<DynamicRule> source;
  for (std::string& key : keys) {
    source.push_back(rule_of(std::move(key)));
  }

  const DynamicRules rules(source);
  QCHECK_FUZZ_CHECK(rules.built_from(source));
  QCHECK_FUZZ_CHECK(rules.size() == source.size());
  // Before any key's regex is compiled for use: the index must not depend on it.
  std::vector<std::vector<uint32_t>> first;
  for (const std::string& name : names) {
    first.push_back(checked_candidates(rules, name));
  }

  bool negative_mtp = false;
  for (size_t i = 0; i < source.size(); ++i) {
    const bool evaluable = rules.evaluable(i);
    const Expected<Regex>& re = rules.regex(i);
    QCHECK_FUZZ_CHECK(evaluable == re.has_value());
    QCHECK_FUZZ_CHECK(evaluable == Regex::compile(source[i].regex).has_value());
    QCHECK_FUZZ_CHECK(&re == &rules.regex(i));
    negative_mtp = negative_mtp || (re && source[i].negative && re->search("mtp"));
  }
  QCHECK_FUZZ_CHECK(rules.negative_key_searches_mtp() == negative_mtp);

  for (size_t n = 0; n < names.size(); ++n) {
    const std::vector<uint32_t>& found = first[n];
    QCHECK_FUZZ_CHECK(checked_candidates(rules, names[n]) == found);
    for (uint32_t i = 0; i < source.size(); ++i) {
      const Expected<Regex>& re = rules.regex(i);
      if (!rules.evaluable(i) || re->match(names[n])) {
        QCHECK_FUZZ_CHECK(std::binary_search(found.begin(), found.end(), i));
      }
    }
  }
  return 0;
}
