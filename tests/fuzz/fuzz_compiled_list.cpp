// Fuzzes CompiledList, an exclusion list compiled for one engine's matching: for every name,
// every entry that entry_matches() accepts must be among its candidates (the index may offer
// more, never fewer). Unlike fuzz_entry_index, entries may be globs and "re:" regexes, checked
// against the engines' own matchers. The first byte picks the format, the second the engine and
// whether its list is compiled alone or with the other engines' (sharing an index); the rest is
// split at newlines into entries up to the first empty line, then names. The list
// is padded to the length from which the index is used.
#include <algorithm>
#include <array>
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "fuzz_check.hpp"
#include "qcheck/engines.hpp"
#include "qcheck/quant_config.hpp"

using namespace qcheck;

namespace {

constexpr std::array k_formats{QuantFormat::modelopt, QuantFormat::compressed_tensors,
                               QuantFormat::quark,    QuantFormat::bitsandbytes,
                               QuantFormat::fp8,      QuantFormat::awq};
constexpr size_t k_min_entries = 24; // above the index's threshold (16)
constexpr size_t k_max_entries = 64;
constexpr size_t k_max_names = 16;
constexpr size_t k_max_line = 96;

} // namespace

extern "C" int
LLVMFuzzerTestOneInput(const uint8_t* data, size_t size)
{
  if (size < 2) {
    return 0;
  }
  ConfigSource source;
  source.format = k_formats[data[0] % k_formats.size()];
  const size_t engine_index = data[1] % k_all_engines.size();
  const Engine engine = k_all_engines[engine_index];
  const bool together = (data[1] / k_all_engines.size()) % 2 == 1;
  const FuzzLines lines = split_fuzz_lines({reinterpret_cast<const char*>(data) + 2, size - 2},
                                           k_max_line, k_max_entries, k_max_names);
  const std::vector<std::string> names(lines.names.begin(), lines.names.end());
  for (const std::string_view line : lines.entries) {
    source.excludes.push_back(line);
  }
  for (size_t i = 0; source.excludes.size() < k_min_entries; ++i) {
    source.excludes.push_back("zz.unused." + std::to_string(i));
  }
  std::vector<CompiledList> lists;
  if (together) {
    lists = CompiledList::compile(k_all_engines, source);
  } else {
    lists.emplace_back(engine, source);
  }
  const CompiledList& list = lists[together ? engine_index : 0];
  for (const std::string& name : names) {
    std::vector<uint32_t> found;
    list.candidates(name, found);
    QCHECK_FUZZ_CHECK(std::is_sorted(found.begin(), found.end()));
    for (uint32_t i = 0; i < source.excludes.size(); ++i) {
      if (entry_matches(engine, source.format, source.excludes[i], name)) {
        QCHECK_FUZZ_CHECK(std::binary_search(found.begin(), found.end(), i));
      }
    }
  }
  return 0;
}
