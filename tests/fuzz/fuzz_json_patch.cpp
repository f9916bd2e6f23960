// Fuzzes the text patcher of `qcheck fix`. The input is a JSON text, optionally followed by NUL-
// separated strings used as the entries to append (the first two also as the key and the value
// of a new object member). Every array and object of the document, and a missing key in every
// object, is patched in turn; each successful edit must re-parse (nlohmann) to the original
// document plus exactly the new entries, and leave every byte before the edited value's opening
// bracket and after its closing one unchanged. Removing those strings and each array's first
// string from the array must re-parse to the array without them, only the array's text changed.
// locate_along_paths() must agree with locate().
#include <cstdint>
#include <nlohmann/json.hpp>
#include <optional>
#include <set>
#include <string>
#include <string_view>
#include <vector>

#include "fuzz_check.hpp"
#include "qcheck/json_text.hpp"

using namespace qcheck;

namespace {

using Json = nlohmann::json;

constexpr size_t k_max_targets = 24;
constexpr const char* k_new_key = "qcheck_fuzz_new";

struct Target
{
  std::string pointer;
  const Json* value = nullptr; // nullptr: a missing key ...
  std::string parent;          // ... of the object at this pointer
};

struct Targets
{
  std::vector<Target> arrays;
  std::vector<Target> objects;
  std::vector<Target> missing;
  std::vector<Target> nulls; // read as an empty list or object: replaced by the new one
};

std::string
escape_token(std::string_view key)
{
  std::string out;
  for (const char c : key) {
    out += c == '~' ? "~0" : c == '/' ? "~1" : std::string(1, c);
  }
  return out;
}

void
collect(const Json& value, const std::string& pointer, Targets& out)
{
  if (value.is_array()) {
    if (out.arrays.size() < k_max_targets) {
      out.arrays.push_back({pointer, &value, {}});
    }
    for (size_t i = 0; i < value.size(); ++i) {
      collect(value[i], pointer + "/" + std::to_string(i), out);
    }
  } else if (value.is_null()) {
    if (out.nulls.size() < k_max_targets) {
      out.nulls.push_back({pointer, &value, {}});
    }
  } else if (value.is_object()) {
    if (out.objects.size() < k_max_targets) {
      out.objects.push_back({pointer, &value, {}});
    }
    if (out.missing.size() < k_max_targets && !value.contains(k_new_key)) {
      out.missing.push_back({pointer + "/" + k_new_key, nullptr, pointer});
    }
    for (const auto& [key, member] : value.items()) {
      collect(member, pointer + "/" + escape_token(key), out);
    }
  }
}

// The value at a pointer built by collect(), or nullptr.
Json*
at(Json& doc, const std::string& pointer)
{
  Json* current = &doc;
  size_t i = 0;
  while (i < pointer.size()) {
    size_t next = pointer.find('/', i + 1);
    if (next == std::string::npos) {
      next = pointer.size();
    }
    std::string token;
    for (size_t k = i + 1; k < next; ++k) {
      if (pointer[k] == '~') {
        token += pointer[++k] == '0' ? '~' : '/';
      } else {
        token += pointer[k];
      }
    }
    if (current->is_object()) {
      auto it = current->find(token);
      if (it == current->end()) {
        return nullptr;
      }
      current = &*it;
    } else if (current->is_array()) {
      const size_t index = std::stoul(token);
      if (index >= current->size()) {
        return nullptr;
      }
      current = &(*current)[index];
    } else {
      return nullptr;
    }
    i = next;
  }
  return current;
}

bool
valid_utf8(std::string_view s)
{
  size_t i = 0;
  while (i < s.size()) {
    const auto c = static_cast<unsigned char>(s[i]);
    const size_t length = c < 0x80           ? 1
                          : (c >> 5) == 0x6  ? 2
                          : (c >> 4) == 0xE  ? 3
                          : (c >> 3) == 0x1E ? 4
                                             : 0;
    if (length == 0 || i + length > s.size()) {
      return false;
    }
    uint32_t cp = length == 1 ? c : c & (0x7F >> length);
    for (size_t k = 1; k < length; ++k) {
      const auto b = static_cast<unsigned char>(s[i + k]);
      if ((b & 0xC0) != 0x80) {
        return false;
      }
      cp = (cp << 6) | (b & 0x3F);
    }
    const uint32_t min = length == 2 ? 0x80 : length == 3 ? 0x800 : length == 4 ? 0x10000 : 0;
    if (cp < min || cp > 0x10FFFF || (cp >= 0xD800 && cp <= 0xDFFF)) {
      return false;
    }
    i += length;
  }
  return true;
}

bool
one_line(const std::string& message)
{
  return !message.empty() && message.find('\n') == std::string::npos;
}

// `edited` keeps text[0, begin) and text[end, size) byte for byte.
bool
keeps_outside(std::string_view text, std::string_view edited, size_t begin, size_t end)
{
  const size_t tail = text.size() - end;
  return edited.size() >= begin + tail && edited.substr(0, begin) == text.substr(0, begin) &&
         edited.substr(edited.size() - tail) == text.substr(end);
}

void
check_append(std::string_view text, const Json& doc, const Target& target,
             const std::vector<std::string>& entries, bool entries_valid)
{
  const bool creating = target.value == nullptr;
  const std::string& spanned = creating ? target.parent : target.pointer;
  const auto span = locate(text, spanned);
  QCHECK_FUZZ_CHECK(span.has_value());
  const auto result = append_to_string_array(text, target.pointer, entries);

  bool all_strings = true;
  std::set<std::string> present;
  if (!creating) {
    for (const Json& element : *target.value) {
      all_strings &= element.is_string();
      if (element.is_string()) {
        present.insert(element.get<std::string>());
      }
    }
  }
  if (!result) {
    QCHECK_FUZZ_CHECK(one_line(result.error()));
    QCHECK_FUZZ_CHECK(!all_strings || !entries_valid); // nothing else may refuse
    return;
  }
  QCHECK_FUZZ_CHECK(all_strings && entries_valid);
  Json added = Json::array();
  for (const std::string& entry : entries) {
    if (present.insert(entry).second) {
      added.push_back(entry);
    }
  }
  if (added.empty()) {
    QCHECK_FUZZ_CHECK(*result == text);
    return;
  }
  Json expected = doc;
  if (creating) {
    (*at(expected, target.parent))[k_new_key] = added;
  } else {
    Json* array = at(expected, target.pointer);
    for (const Json& entry : added) {
      array->push_back(entry);
    }
  }
  const Json reparsed = Json::parse(*result, nullptr, false);
  QCHECK_FUZZ_CHECK(!reparsed.is_discarded());
  QCHECK_FUZZ_CHECK(reparsed == expected);
  QCHECK_FUZZ_CHECK(keeps_outside(text, *result, span->begin, span->end));
  QCHECK_FUZZ_CHECK(creating || target.value->is_null() ||
                    (*result)[span->begin] == text[span->begin]); // the opening bracket
}

void
check_member(std::string_view text, const Json& doc, const Target& target, const std::string& key,
             const std::string& value_json, ExistingMember existing = ExistingMember::keep)
{
  const bool creating = target.value == nullptr;
  const std::string& spanned = creating ? target.parent : target.pointer;
  const auto span = locate(text, spanned);
  QCHECK_FUZZ_CHECK(span.has_value());
  const auto result = add_object_member(text, target.pointer, key, value_json, existing);
  const Json value = Json::parse(value_json, nullptr, false);
  const bool value_ok = !value.is_discarded() && locate(value_json, "").has_value();
  if (!result) {
    QCHECK_FUZZ_CHECK(one_line(result.error()));
    QCHECK_FUZZ_CHECK(!valid_utf8(key) || !value_ok);
    return;
  }
  QCHECK_FUZZ_CHECK(valid_utf8(key) && !value.is_discarded());
  Json expected = doc;
  if (creating) {
    (*at(expected, target.parent))[k_new_key] = Json::object({{key, value}});
  } else if (target.value->contains(key) && existing == ExistingMember::keep) {
    QCHECK_FUZZ_CHECK(*result == text);
    return;
  } else {
    (*at(expected, target.pointer))[key] = value; // a null becomes an object
  }
  const Json reparsed = Json::parse(*result, nullptr, false);
  QCHECK_FUZZ_CHECK(!reparsed.is_discarded());
  QCHECK_FUZZ_CHECK(reparsed == expected);
  QCHECK_FUZZ_CHECK(keeps_outside(text, *result, span->begin, span->end));
  QCHECK_FUZZ_CHECK(creating || target.value->is_null() ||
                    (*result)[span->begin] == text[span->begin]);
}

// Removing `entries` and the first string element's value (often written with escapes) from
// an array: the re-parse equals the array without every string element of those values, and
// only the array's text changes.
void
check_remove(std::string_view text, const Json& doc, const Target& target,
             std::vector<std::string> entries)
{
  const auto span = locate(text, target.pointer);
  QCHECK_FUZZ_CHECK(span.has_value());
  for (const Json& element : *target.value) {
    if (element.is_string()) {
      entries.push_back(element.get<std::string>());
      break;
    }
  }
  const auto result = remove_from_string_array(text, target.pointer, entries);
  QCHECK_FUZZ_CHECK(result.has_value());
  const std::set<std::string> removed(entries.begin(), entries.end());
  Json expected = doc;
  Json& array = *at(expected, target.pointer);
  Json kept = Json::array();
  for (const Json& element : array) {
    if (!element.is_string() || !removed.contains(element.get<std::string>())) {
      kept.push_back(element);
    }
  }
  if (kept.size() == array.size()) {
    QCHECK_FUZZ_CHECK(*result == text);
    return;
  }
  array = std::move(kept);
  const Json reparsed = Json::parse(*result, nullptr, false);
  QCHECK_FUZZ_CHECK(!reparsed.is_discarded());
  QCHECK_FUZZ_CHECK(reparsed == expected);
  QCHECK_FUZZ_CHECK(keeps_outside(text, *result, span->begin, span->end));
}

} // namespace

extern "C" int
LLVMFuzzerTestOneInput(const uint8_t* data, size_t size)
{
  const std::string_view input(reinterpret_cast<const char*>(data), size);
  const size_t nul = input.find('\0');
  const std::string_view text = input.substr(0, nul);
  std::vector<std::string> entries;
  if (nul != std::string_view::npos) {
    std::string_view rest = input.substr(nul + 1);
    while (entries.size() < 4) {
      const size_t next = rest.find('\0');
      entries.emplace_back(rest.substr(0, next));
      if (next == std::string_view::npos) {
        break;
      }
      rest = rest.substr(next + 1);
    }
  } else {
    entries = {"model.layers.0.mlp.gate", "lm_head"};
  }
  bool entries_valid = true;
  for (const std::string& entry : entries) {
    entries_valid &= valid_utf8(entry);
  }
  const std::string key = entries[0];
  const std::string value_json = entries.size() > 1 ? entries[1] : "{\"bits\":16}";

  // Arbitrary pointer text must fail cleanly or point inside the text; so must the walk along
  // the path, which on valid JSON gives the same span.
  const auto any_span = locate(text, entries[0]);
  if (any_span) {
    QCHECK_FUZZ_CHECK(any_span->begin < any_span->end && any_span->end <= text.size());
  }
  const auto any_walk = locate_along_paths(text, {entries[0]});
  QCHECK_FUZZ_CHECK(any_walk.size() == 1);
  if (any_walk[0]) {
    QCHECK_FUZZ_CHECK(any_walk[0]->begin < any_walk[0]->end && any_walk[0]->end <= text.size());
  }
  if (any_span) {
    QCHECK_FUZZ_CHECK(any_walk[0] && any_walk[0]->begin == any_span->begin &&
                      any_walk[0]->end == any_span->end &&
                      any_walk[0]->start.line == any_span->start.line &&
                      any_walk[0]->start.column == any_span->start.column);
  }

  const std::optional<std::string> refusal = edit_refusal(text);
  const auto root = locate(text, "");
  if (!root) {
    QCHECK_FUZZ_CHECK(refusal.has_value() && *refusal == root.error());
    QCHECK_FUZZ_CHECK(one_line(root.error()));
    QCHECK_FUZZ_CHECK(!append_to_string_array(text, "/ignore", entries));
    QCHECK_FUZZ_CHECK(!add_object_member(text, "/dynamic", key, value_json));
    return 0;
  }
  QCHECK_FUZZ_CHECK(root->end <= text.size());
  const TextPosition start = position_of(text, root->begin);
  QCHECK_FUZZ_CHECK(start.line == root->start.line && start.column == root->start.column);

  const Json doc = Json::parse(text, nullptr, false);
  if (!refusal) {
    QCHECK_FUZZ_CHECK(!doc.is_discarded()); // what fix agrees to edit, every engine can read
  } else {
    QCHECK_FUZZ_CHECK(one_line(*refusal));
  }
  if (doc.is_discarded()) {
    return 0; // NaN, Infinity or an out-of-range number: nothing to compare against
  }
  Targets targets;
  collect(doc, "", targets);
  for (const Target& target : targets.arrays) {
    const auto span = locate(text, target.pointer);
    QCHECK_FUZZ_CHECK(span.has_value());
    const auto walked = locate_along_paths(text, {target.pointer});
    QCHECK_FUZZ_CHECK(walked[0] && walked[0]->begin == span->begin && walked[0]->end == span->end);
    const Json located =
      Json::parse(text.substr(span->begin, span->end - span->begin), nullptr, false);
    QCHECK_FUZZ_CHECK(located == *target.value);
    check_append(text, doc, target, entries, entries_valid);
    check_remove(text, doc, target, entries);
  }
  for (const Target& target : targets.missing) {
    check_append(text, doc, target, entries, entries_valid);
    check_member(text, doc, target, key, value_json);
  }
  for (const Target& target : targets.objects) {
    QCHECK_FUZZ_CHECK(!append_to_string_array(text, target.pointer, entries));
    check_member(text, doc, target, key, value_json);
    check_member(text, doc, target, key, value_json, ExistingMember::replace);
  }
  for (const Target& target : targets.nulls) {
    check_append(text, doc, target, entries, entries_valid);
    check_member(text, doc, target, key, value_json);
  }
  return 0;
}
