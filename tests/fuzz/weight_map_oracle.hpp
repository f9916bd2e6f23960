// The oracle of scan_weight_map's differential test and fuzz target: the index's weight_map as
// simdjson's DOM parser reads it, the last "weight_map" key counting, as in Python's json
// (simdjson's own lookup finds the first).
#pragma once

#include <optional>
#include <simdjson.h>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace qcheck::test {

struct DomWeightMap
{
  simdjson::error_code error =
    simdjson::SUCCESS; // the parse's verdict; nothing else is set on error
  bool found = false;  // the root's (last) "weight_map" is an object
  // Its members in text order; nullopt where the value is not a string.
  std::vector<std::pair<std::string, std::optional<std::string>>> members;
};

inline DomWeightMap
dom_weight_map(const std::string& json)
{
  DomWeightMap out;
  simdjson::dom::parser parser;
  simdjson::dom::element root;
  out.error = parser.parse(json).get(root);
  if (out.error) {
    return out;
  }
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
    return out;
  }
  out.found = true;
  for (auto field : map) {
    std::string_view file;
    out.members.push_back({std::string(field.key), field.value.get_string().get(file)
                                                     ? std::nullopt
                                                     : std::optional<std::string>(file)});
  }
  return out;
}

} // namespace qcheck::test
