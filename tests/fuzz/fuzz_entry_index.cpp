// Fuzzes EntryIndex, the hashed index that hands each name its candidate entries. The first byte
// picks the mode and case folding; the rest is split at newlines into entries up to the first
// empty line, then names. With literal entries (no wildcards, no re:) the candidates must hold
// every entry that matches the name under the mode's rule, sorted and unique; in substring
// mode, where the index is exact, they must be exactly those entries.
#include <algorithm>
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "fuzz_check.hpp"
#include "qcheck/patterns.hpp"

using namespace qcheck;

namespace {

std::string
folded(std::string_view text, bool ci)
{
  std::string out(text);
  for (char& c : out) {
    if (ci && c >= 'A' && c <= 'Z') {
      c = static_cast<char>(c - 'A' + 'a');
    }
  }
  return out;
}

// Whether `key` matches `name` under the mode's rule for a literal entry.
bool
matches(EntryIndex::Mode mode, const std::string& key, const std::string& name)
{
  const std::string dotted = "." + key + ".";
  switch (mode) {
  case EntryIndex::Mode::exact:
    return name == key;
  case EntryIndex::Mode::ancestors:
    return name == key || name.starts_with(key + ".");
  case EntryIndex::Mode::dotted:
    return ("." + name + ".").find(dotted) != std::string::npos;
  case EntryIndex::Mode::substring:
    return name.find(key) != std::string::npos;
  }
  return false;
}

} // namespace

extern "C" int
LLVMFuzzerTestOneInput(const uint8_t* data, size_t size)
{
  if (size == 0) {
    return 0;
  }
  const auto mode = static_cast<EntryIndex::Mode>(data[0] % 4);
  const bool ci = (data[0] & 4) != 0;
  const FuzzLines lines = split_fuzz_lines({reinterpret_cast<const char*>(data) + 1, size - 1});
  const std::vector<std::string> names(lines.names.begin(), lines.names.end());
  std::vector<std::string> entries;
  for (const std::string_view line : lines.entries) {
    if (line.find_first_of("*?[]") == std::string_view::npos && !line.starts_with("re:")) {
      entries.emplace_back(line);
    }
  }
  std::vector<std::vector<std::string>> keys;
  for (const std::string& e : entries) {
    keys.push_back({e});
  }
  const EntryIndex index(keys, {.mode = mode, .case_insensitive = ci});
  for (const std::string& name : names) {
    const std::string_view view = name;
    std::vector<uint32_t> found;
    index.candidates(std::span(&view, 1), found);
    QCHECK_FUZZ_CHECK(std::is_sorted(found.begin(), found.end()));
    QCHECK_FUZZ_CHECK(std::adjacent_find(found.begin(), found.end()) == found.end());
    std::vector<uint32_t> expected;
    for (uint32_t i = 0; i < entries.size(); ++i) {
      if (matches(mode, folded(entries[i], ci), folded(name, ci))) {
        expected.push_back(i);
        QCHECK_FUZZ_CHECK(std::binary_search(found.begin(), found.end(), i));
      }
    }
    if (mode == EntryIndex::Mode::substring) {
      QCHECK_FUZZ_CHECK(found == expected);
    }
  }
  return 0;
}
