// Fuzzes scan_weight_map, the one-pass reader of model.safetensors.index.json, against
// simdjson's DOM parser: the same verdict on whether the input is JSON (numbers out of range
// aside, which Python's json accepts and the DOM refuses) and the same weight_map members.
// stream_weight_map, the same reader a window at a time, must agree with it whenever it answers.
// Where find_indented_entries finds entries written as json.dumps(indent=2) writes them, and
// they are such entries, IndentedEntryMatcher must take them and the scan must read exactly them.
#include "fuzz_check.hpp"
#include "qcheck/index_json.hpp"
#include "weight_map_oracle.hpp"

#include <algorithm>
#include <cstdint>
#include <optional>
#include <simdjson.h>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

using namespace qcheck;

extern "C" int
LLVMFuzzerTestOneInput(const uint8_t* data, size_t size)
{
  const std::string json(reinterpret_cast<const char*>(data), size);
  using Members = std::vector<std::pair<std::string, std::optional<std::string>>>;
  Members got;
  const WeightMapScan scan = scan_weight_map(
    json,
    [&](std::string_view tensor, const std::string_view* file) {
      got.push_back({std::string(tensor), file ? std::optional<std::string>(*file) : std::nullopt});
    },
    [&] { got.clear(); });
  QCHECK_FUZZ_CHECK(scan.error_offset <= size);

  const TextReader read = [&](uint64_t offset, std::span<char> out) {
    QCHECK_FUZZ_CHECK(offset <= size && out.size() <= size - offset);
    std::copy_n(json.data() + offset, out.size(), out.data());
    return true;
  };
  for (const size_t window : {64 + size % 193, size + 64}) {
    Members streamed;
    const std::optional<WeightMapScan> answer = stream_weight_map(
      size, read, window,
      [&](std::string_view tensor, const std::string_view* file) {
        streamed.push_back(
          {std::string(tensor), file ? std::optional<std::string>(*file) : std::nullopt});
      },
      [&] { streamed.clear(); });
    if (answer) {
      QCHECK_FUZZ_CHECK(answer->status == scan.status && streamed == got);
    }
  }

  if (const auto indented = find_indented_entries(size, read, 64 + size % 4096); indented) {
    QCHECK_FUZZ_CHECK(indented->begin <= indented->end && indented->end <= size);
    if (const auto entries = test::indented_entries_of(json, indented->begin, indented->end)) {
      std::vector<char> buffer(size + 8);
      IndentedEntryMatcher matcher(read, indented->begin, indented->end, true, buffer);
      Members expected;
      for (const auto& [name, file] : *entries) {
        const std::optional<std::string> value = indented_value(file);
        QCHECK_FUZZ_CHECK(value && matcher.next(name, *value));
        expected.push_back({name, file});
      }
      QCHECK_FUZZ_CHECK(matcher.offset() == indented->end);
      QCHECK_FUZZ_CHECK(scan.status == WeightMapScan::Status::ok && got == expected);
    }
  }

  const test::DomWeightMap dom = test::dom_weight_map(json);
  if (dom.error == simdjson::NUMBER_ERROR || dom.error == simdjson::DEPTH_ERROR) {
    return 0; // JSON the DOM refuses for its limits
  }
  QCHECK_FUZZ_CHECK((dom.error != simdjson::SUCCESS) ==
                    (scan.status == WeightMapScan::Status::invalid_json));
  if (dom.error) {
    return 0;
  }
  if (!dom.found) {
    QCHECK_FUZZ_CHECK(scan.status == WeightMapScan::Status::no_weight_map);
    return 0;
  }
  QCHECK_FUZZ_CHECK(scan.status == WeightMapScan::Status::ok);
  QCHECK_FUZZ_CHECK(got == dom.members);
  return 0;
}
