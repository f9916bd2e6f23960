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

// The entries of text[begin, end) read as entries indented as json.dumps(indent=2) writes them
// (find_indented_entries, IndentedEntryMatcher), by a plain reader of its own: names without
// '"', '\\', control characters or invalid UTF-8, files in printable ASCII without '"' or
// '\\'. nullopt when the stretch is not such entries.
inline std::optional<std::vector<std::pair<std::string, std::string>>>
indented_entries_of(const std::string& text, size_t begin, size_t end)
{
  std::vector<std::pair<std::string, std::string>> out;
  size_t at = begin;
  const auto take = [&](std::string_view what) {
    if (at + what.size() > end || text.compare(at, what.size(), what) != 0) {
      return false;
    }
    at += what.size();
    return true;
  };
  const auto string = [&](bool file, std::string& to) {
    const size_t close = text.find('"', at);
    if (close == std::string::npos || close >= end) {
      return false;
    }
    to = text.substr(at, close - at);
    for (const char c : to) {
      const auto byte = static_cast<unsigned char>(c);
      if (byte < 0x20 || c == '\\' || (file && byte > 0x7E)) {
        return false;
      }
    }
    at = close;
    return simdjson::validate_utf8(to.data(), to.size());
  };
  while (at < end) {
    std::pair<std::string, std::string> entry;
    if (!take(out.empty() ? "\n    \"" : ",\n    \"") || !string(false, entry.first) ||
        !take("\": \"") || !string(true, entry.second) || !take("\"")) {
      return std::nullopt;
    }
    out.push_back(std::move(entry));
  }
  return out;
}

} // namespace qcheck::test
