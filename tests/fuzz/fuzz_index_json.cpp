// Fuzzes scan_weight_map, the one-pass reader of model.safetensors.index.json, against
// simdjson's DOM parser: the same verdict on whether the input is JSON (numbers out of range
// aside, which Python's json accepts and the DOM refuses) and the same weight_map members.
#include <cstdint>
#include <optional>
#include <simdjson.h>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "fuzz_check.hpp"
#include "qcheck/index_json.hpp"

using namespace qcheck;

extern "C" int
LLVMFuzzerTestOneInput(const uint8_t* data, size_t size)
{
  const std::string json(reinterpret_cast<const char*>(data), size);
  using Members = std::vector<std::pair<std::string, std::optional<std::string>>>;
  Members got;
  const WeightMapScan scan =
    scan_weight_map(
      json,
      [&](std::string_view tensor, const std::string_view* file) {
        got.push_back(
          {std::string(tensor), file ? std::optional<std::string>(*file) : std::nullopt});
      },
      [&] { got.clear(); });
  QCHECK_FUZZ_CHECK(scan.error_offset <= size);

  simdjson::dom::parser parser;
  simdjson::dom::element root;
  const auto error = parser.parse(json).get(root);
  if (error == simdjson::NUMBER_ERROR || error == simdjson::DEPTH_ERROR) {
    return 0; // JSON the DOM refuses for its limits
  }
  QCHECK_FUZZ_CHECK((error != simdjson::SUCCESS) ==
                    (scan.status == WeightMapScan::Status::invalid_json));
  if (error) {
    return 0;
  }
  // The last "weight_map" key counts, as in Python's json (simdjson's lookup finds the first).
  simdjson::dom::object root_object, map;
  simdjson::dom::element last;
  bool seen = false;
  if (!root.get_object().get(root_object)) {
    for (auto field : root_object) {
      if (field.key == "weight_map") {
        last = field.value;
        seen = true;
      }
    }
  }
  if (!seen || last.get_object().get(map)) {
    QCHECK_FUZZ_CHECK(scan.status == WeightMapScan::Status::no_weight_map);
    return 0;
  }
  QCHECK_FUZZ_CHECK(scan.status == WeightMapScan::Status::ok);
  Members expected;
  for (auto field : map) {
    std::string_view file;
    expected.push_back({std::string(field.key), field.value.get_string().get(file)
                                                  ? std::nullopt
                                                  : std::optional<std::string>(file)});
  }
  QCHECK_FUZZ_CHECK(got == expected);
  return 0;
}
