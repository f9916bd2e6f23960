// scan_weight_map: the index's weight_map read in one pass, checked as strict JSON; compared
// with simdjson's DOM parser on random documents and random damage to them.
#include <gtest/gtest.h>

#include <algorithm>
#include <fmt/format.h>
#include <functional>
#include <optional>
#include <simdjson.h>
#include <string>
#include <utility>
#include <vector>

#include "builder.hpp"
#include "fuzz/weight_map_oracle.hpp"
#include "qcheck/index_json.hpp"

using namespace qcheck;

namespace {

using Members = std::vector<std::pair<std::string, std::optional<std::string>>>;

struct Scanned
{
  WeightMapScan::Status status;
  Members members;
};

Scanned
scan(const std::string& json)
{
  Scanned out;
  const WeightMapScan result = scan_weight_map(
    json,
    [&](std::string_view tensor, const std::string_view* file) {
      out.members.push_back(
        {std::string(tensor), file ? std::optional<std::string>(*file) : std::nullopt});
    },
    [&] { out.members.clear(); });
  out.status = result.status;
  return out;
}

// What the DOM says: nullopt when the text is not JSON. `number_refused`: the DOM refused a
// number that is JSON but out of a double's or 64-bit integer's range, which Python's json
// (and the scan) accept.
std::optional<Scanned>
by_dom(const std::string& json, bool& number_refused)
{
  const test::DomWeightMap dom = test::dom_weight_map(json);
  number_refused = dom.error == simdjson::NUMBER_ERROR;
  if (dom.error) {
    return std::nullopt;
  }
  return Scanned{dom.found ? WeightMapScan::Status::ok : WeightMapScan::Status::no_weight_map,
                 dom.members};
}

} // namespace

TEST(IndexJson, MembersInTextOrderAsViews)
{
  const std::string json = R"({"metadata": {"total_size": 12, "x": [1, -2.5e3, true, null]},
    "weight_map": {"b.weight": "model-2.safetensors", "a.weight": "model-1.safetensors",
                   "c": 7, "d\u00e9\n": "f\"g"}})";
  std::vector<const char*> starts;
  const WeightMapScan result = scan_weight_map(
    json,
    [&](std::string_view tensor, const std::string_view*) { starts.push_back(tensor.data()); },
    [] { FAIL() << "one weight_map: no restart"; });
  ASSERT_EQ(result.status, WeightMapScan::Status::ok);
  ASSERT_EQ(starts.size(), 4u);
  EXPECT_EQ(starts[0], json.data() + json.find("b.weight")); // plain names are not copied
  EXPECT_EQ(result.decoded.size(), 2u);                      // escaped ones are
  const Scanned s = scan(json);
  EXPECT_EQ(s.members, (Members{{"b.weight", "model-2.safetensors"},
                                {"a.weight", "model-1.safetensors"},
                                {"c", std::nullopt},
                                {"d\xc3\xa9\n", "f\"g"}}));
}

// A file spelled like the one before is recognized by its bytes: only when the earlier one held
// no escape, and only when the string ends where the earlier one did.
TEST(IndexJson, RepeatedFilesReadAsTheirText)
{
  const Scanned s = scan(
    R"({"weight_map": {"a": "m1", "b": "m1", "c": "m1x", "d": "m1", "e": "m\u0031", "f": "m1",)"
    R"( "g": "", "h": "", "i": "m", "j": "m1", "k": "a\"b", "l": "a\"b", "m": "a\\b"}})");
  EXPECT_EQ(s.status, WeightMapScan::Status::ok);
  EXPECT_EQ(s.members, (Members{{"a", "m1"},
                                {"b", "m1"},
                                {"c", "m1x"},
                                {"d", "m1"},
                                {"e", "m1"},
                                {"f", "m1"},
                                {"g", ""},
                                {"h", ""},
                                {"i", "m"},
                                {"j", "m1"},
                                {"k", "a\"b"},
                                {"l", "a\"b"},
                                {"m", "a\\b"}}));
  // After an escaped "a\"b", the raw bytes a"b are no string.
  EXPECT_EQ(scan(R"({"weight_map": {"x": "a\"b", "y": "a"b"}})").status,
            WeightMapScan::Status::invalid_json);
  EXPECT_EQ(scan(R"({"weight_map": {"x": "m1", "y": "m1)").status,
            WeightMapScan::Status::invalid_json);
  EXPECT_EQ(scan(R"({"weight_map": {"x": "m1", "y": "m1")").status,
            WeightMapScan::Status::invalid_json);
}

// Files of the usual length, 16 bytes and more: one that differs from the file before in a
// single byte, wherever it is, is read as its own text, not as the file before.
TEST(IndexJson, FilesThatDifferInOneByteFromTheOneBeforeReadAsTheirText)
{
  const std::string base = "model-00001-of-00163.safetensors.more.bytes";
  for (size_t size = 16; size <= base.size(); ++size) {
    const std::string file = base.substr(0, size);
    for (size_t at = 0; at < size; ++at) {
      std::string other = file;
      other[at] = other[at] == 'x' ? 'y' : 'x';
      const Scanned s = scan(R"({"weight_map": {"a": ")" + file + R"(", "b": ")" + other +
                             R"(", "c": ")" + file + R"(", "d": ")" + file + R"("}})");
      ASSERT_EQ(s.status, WeightMapScan::Status::ok) << other;
      EXPECT_EQ(s.members, (Members{{"a", file}, {"b", other}, {"c", file}, {"d", file}})) << other;
    }
  }
}

TEST(IndexJson, NoWeightMapObject)
{
  for (const std::string json :
       {"[]", "{}", R"({"weight_map": []})", R"({"metadata": {}})", "7", R"("weight_map")"}) {
    EXPECT_EQ(scan(json).status, WeightMapScan::Status::no_weight_map) << json;
  }
  // The last weight_map key counts, as in Python's json.
  EXPECT_EQ(scan(R"({"weight_map": {"a": "x"}, "weight_map": {"b": "y"}})").members,
            (Members{{"b", "y"}}));
  const Scanned to_number = scan(R"({"weight_map": {"a": "x"}, "m": 1, "weight_map": 0})");
  EXPECT_EQ(to_number.status, WeightMapScan::Status::no_weight_map);
  EXPECT_TRUE(to_number.members.empty());
  EXPECT_EQ(scan(R"({"weight_map": 0, "weight_map": {"b": "y"}})").members, (Members{{"b", "y"}}));
  EXPECT_EQ(scan(R"({"weight_map": 0, "weight_map": {"b": "y"}})").status,
            WeightMapScan::Status::ok);
}

TEST(IndexJson, InvalidJsonIsRefused)
{
  for (const std::string json :
       std::vector<std::string>{"",
                                " ",
                                "{",
                                R"({"weight_map": {"a": "x"})",
                                R"({"weight_map": {"a": "x"}} x)",
                                R"({"weight_map": {"a": "x",}})",
                                R"({"weight_map": {"a" "x"}})",
                                R"({"weight_map": {"a": "x\q"}})",
                                "{\"weight_map\": {\"a\": \"x\ty\"}}",
                                R"({"weight_map": {"a": "\ud800"}})",
                                R"({"weight_map": {"a": "\udc00x"}})",
                                R"({"weight_map": {"a": "\u12"}})",
                                "{\"weight_map\": {\"a\xff\": \"x\"}}",
                                "{\"weight_map\": {\"a\\n\xff\": \"x\"}}",
                                "{\"weight_map\": {\"a\": \"x\"}}\xff",
                                R"({"n": 01})",
                                R"({"n": 1.})",
                                R"({"n": -})",
                                R"({"n": 1e})",
                                R"({"n": .5})",
                                R"({"n": tru})",
                                R"({"n": nul})",
                                R"({"n": NaN})",
                                R"({'a': 1})",
                                R"({"a": 1,})",
                                R"({"weight_map": {"a": "unterminated})",
                                "{\"a\": [" + std::string(2000, '[') + "]}"}) {
    EXPECT_EQ(scan(json).status, WeightMapScan::Status::invalid_json) << json;
  }
}

namespace {

// `json` with `round % 3` bytes changed, inserted or removed.
std::string
damaged(test::Lcg& next, int round, std::string json)
{
  static const std::string damage = "{}[]\",:\\ \t\n0e.-tuxa\x01\xc3\xff";
  for (size_t d = round % 3; d > 0 && !json.empty(); --d) {
    const size_t at = next(json.size());
    switch (next(3)) {
    case 0:
      json[at] = damage[next(damage.size())];
      break;
    case 1:
      json.insert(at, 1, damage[next(damage.size())]);
      break;
    default:
      json.erase(at, 1);
      break;
    }
  }
  return json;
}

// A random document around a weight_map (or now and then any JSON value), damaged by
// `round % 3` bytes changed, inserted or removed.
std::string
random_document(test::Lcg& next, int round)
{
  static const std::vector<std::string> strings{R"("model.layers.0.mlp.down_proj.weight")",
                                                R"("model-00001-of-00002.safetensors")",
                                                R"("a\"b")",
                                                R"("\u00e9\ud83d\ude00")",
                                                R"("")",
                                                R"("x\\y\/z\n")",
                                                R"("weight_map")"};
  static const std::vector<std::string> scalars{"0",    "-1",    "2.5",  "1e3",   "-0.0E-2",
                                                "true", "false", "null", "123456"};
  std::function<std::string(int)> value = [&](int depth) -> std::string {
    const size_t kind = next(depth > 2 ? 2 : 4);
    if (kind == 0) {
      return strings[next(strings.size())];
    }
    if (kind == 1) {
      return scalars[next(scalars.size())];
    }
    std::string out = kind == 2 ? "[" : "{";
    for (size_t i = next(4); i > 0; --i) {
      if (kind == 3) {
        out += strings[next(strings.size())] + ":";
      }
      out += value(depth + 1) + (i > 1 ? ", " : "");
    }
    return out + (kind == 2 ? "]" : "}");
  };
  std::string map = "{";
  for (size_t i = next(6); i > 0; --i) {
    map += strings[next(strings.size())] + ": " +
           (next(5) ? strings[next(strings.size())] : value(2)) + (i > 1 ? ", " : "");
  }
  map += "}";
  std::string json =
    next(8) ? R"({"metadata": )" + value(1) + R"(, "weight_map": )" + map + "}" : value(0);
  return damaged(next, round, std::move(json));
}

} // namespace

// A weight_map as Python's json.dumps(indent=2) writes it (each member `\n    "name": "file"`,
// the spelling the reader takes in one step), its names and files now and then escaped, not
// ASCII, empty or long, its values now and then no string, its spaces now and then others;
// damaged like random_document().
std::string
indented_document(test::Lcg& next, int round)
{
  static const std::vector<std::string> names{
    R"("model.layers.0.mlp.experts.12.down_proj.weight")",
    R"("model.layers.0.mlp.experts.12.down_proj.weight_scale")",
    R"("model.layers.0.mlp.experts.3.up_proj.weight")",
    R"("lm_head.weight")",
    R"("a\"b")",
    R"("x\u00e9y")",
    "\"caf\xc3\xa9\"",
    R"("")",
    R"("weight_map")"};
  static const std::vector<std::string> files{
    R"("model-00001-of-00002.safetensors")", R"("model-00002-of-00002.safetensors")",
    R"("model-00001-of-00002.safetensors\u0000")", R"("m\/1")", R"("")"};
  static const std::vector<std::string> others{
    "0", "true", "null", "[]", "{}", "[\n      1,\n      2\n    ]", "{\n      \"a\": \"b\"\n    }"};
  static const std::vector<std::string> gaps{"\n    ",   "\n    ", "\n    ", "\n   ",
                                             "\r\n    ", "\n\t",   " ",      ""};
  std::string map = "{";
  std::string file = files[0];
  for (size_t i = next(7); i > 0; --i) {
    if (next(3) == 0) {
      file = files[next(files.size())];
    }
    const std::string name =
      next(10) ? names[next(names.size())] : "\"" + std::string(next(200), 'n') + "\"";
    map += gaps[next(gaps.size())] + name + (next(12) ? ": " : " :") +
           (next(8) ? file : others[next(others.size())]) + (i > 1 ? "," : "");
  }
  map += next(6) ? "\n  }" : "}";
  std::string json =
    "{\n  \"metadata\": {\n    \"total_size\": 28\n  },\n  \"weight_map\": " + map + "\n}" +
    (next(2) ? "\n" : "");
  return damaged(next, round, std::move(json));
}

namespace {

// Scans 20,000 documents from `document` against the DOM: invalid exactly when it says so,
// else the same verdict and members. Counts the valid ones, and those with more than
// `members` members.
void
agree_with_dom(std::string (*document)(test::Lcg&, int), uint64_t seed, size_t members,
               size_t& valid, size_t& with_members)
{
  test::Lcg next(seed);
  valid = with_members = 0;
  for (int round = 0; round < 20000; ++round) {
    const std::string json = document(next, round);
    bool number_refused = false;
    const std::optional<Scanned> expected = by_dom(json, number_refused);
    const Scanned got = scan(json);
    if (number_refused) {
      continue;
    }
    if (!expected) {
      ASSERT_EQ(got.status, WeightMapScan::Status::invalid_json) << json;
      continue;
    }
    ++valid;
    with_members += expected->members.size() > members ? 1 : 0;
    ASSERT_EQ(got.status, expected->status) << json;
    ASSERT_EQ(got.members, expected->members) << json;
  }
}

} // namespace

// Random documents around a weight_map, and the same with a byte changed, inserted or removed:
// valid exactly when simdjson's DOM says so, with the same members.
TEST(IndexJson, AgreesWithTheDomParserOnRandomAndDamagedDocuments)
{
  size_t valid = 0, with_members = 0;
  ASSERT_NO_FATAL_FAILURE(agree_with_dom(&random_document, 2024, 0, valid, with_members));
  EXPECT_GT(valid, 7500u);
  EXPECT_GT(with_members, 5000u);
}

// Indented as Python writes an index, and damaged: the same verdicts and members as the DOM.
TEST(IndexJson, AgreesWithTheDomParserOnIndentedAndDamagedDocuments)
{
  size_t valid = 0, with_members = 0;
  ASSERT_NO_FATAL_FAILURE(agree_with_dom(&indented_document, 4242, 2, valid, with_members));
  EXPECT_GT(valid, 6000u);
  EXPECT_GT(with_members, 3000u);
}

namespace {

// stream_weight_map over `json` in windows of `window` bytes; nullopt when it leaves the verdict
// to the whole-text reader. `fail_reads`: every read fails.
std::optional<Scanned>
stream(const std::string& json, size_t window, bool fail_reads = false)
{
  Scanned out;
  const TextReader read = [&](uint64_t offset, std::span<char> to) {
    if (fail_reads || offset > json.size() || to.size() > json.size() - offset) {
      return false;
    }
    std::copy_n(json.data() + offset, to.size(), to.data());
    return true;
  };
  const std::optional<WeightMapScan> result = stream_weight_map(
    json.size(), read, window,
    [&](std::string_view tensor, const std::string_view* file) {
      out.members.push_back(
        {std::string(tensor), file ? std::optional<std::string>(*file) : std::nullopt});
    },
    [&] { out.members.clear(); });
  if (!result) {
    return std::nullopt;
  }
  out.status = result->status;
  return out;
}

bool
is_ascii(const std::string& text)
{
  return std::all_of(text.begin(), text.end(),
                     [](char c) { return static_cast<unsigned char>(c) < 0x80; });
}

// `count` members, each after a newline and `indent` spaces.
std::string
many_members(size_t count, size_t indent = 2)
{
  std::string json = R"({"metadata": {"total_size": 1}, "weight_map": {)";
  const std::string gap = "\n" + std::string(indent, ' ');
  for (size_t i = 0; i < count; ++i) {
    json += (i ? "," : "") + gap +
            ("\"layers." + std::to_string(i) + ".w\": \"model-" + std::to_string(i / 100) +
             ".safetensors\"");
  }
  return json + "\n}}\n";
}

} // namespace

// Read a window at a time, a document gets the verdict and members the whole text gets, or
// none; with the whole text in one window, every ASCII document the whole text accepts gets one.
// Compact documents and indented ones.
TEST(IndexJson, StreamedAgreesWithTheWholeText)
{
  for (const auto document : {&random_document, &indented_document}) {
    test::Lcg next(77);
    size_t answered_in_small_windows = 0;
    for (int round = 0; round < 20000; ++round) {
      const std::string json = document(next, round);
      const Scanned whole = scan(json);
      for (const size_t window : {size_t{64}, size_t{96}, size_t{160}, json.size() + 64}) {
        const std::optional<Scanned> streamed = stream(json, window);
        if (!streamed) {
          ASSERT_FALSE(window > json.size() &&
                       whole.status != WeightMapScan::Status::invalid_json && is_ascii(json))
            << json;
          continue;
        }
        answered_in_small_windows += window < json.size() ? 1 : 0;
        ASSERT_NE(streamed->status, WeightMapScan::Status::invalid_json) << json;
        ASSERT_EQ(streamed->status, whole.status) << window << " " << json;
        ASSERT_EQ(streamed->members, whole.members) << window << " " << json;
      }
    }
    EXPECT_GT(answered_in_small_windows, 1000u);
  }
}

// A long weight_map in small windows: read once, in order, a window at a time; each view stays
// valid through the next member's call.
TEST(IndexJson, StreamedViewsLastThroughTheNextMember)
{
  for (const size_t indent : {2, 4}) { // 4: as Python writes an index, read in one step
    const std::string json = many_members(5000, indent);
    constexpr size_t k_window = 1024;
    std::vector<std::pair<uint64_t, size_t>> reads;
    std::string_view last_tensor, last_file;
    std::string last_tensor_copy, last_file_copy;
    size_t members = 0;
    const TextReader read = [&](uint64_t offset, std::span<char> to) {
      reads.emplace_back(offset, to.size());
      std::copy_n(json.data() + offset, to.size(), to.data());
      return true;
    };
    const std::optional<WeightMapScan> result = stream_weight_map(
      json.size(), read, k_window,
      [&](std::string_view tensor, const std::string_view* file) {
        ASSERT_NE(file, nullptr);
        EXPECT_EQ(last_tensor, last_tensor_copy) << members;
        EXPECT_EQ(last_file, last_file_copy) << members;
        EXPECT_EQ(tensor, "layers." + std::to_string(members) + ".w");
        EXPECT_EQ(*file, "model-" + std::to_string(members / 100) + ".safetensors");
        last_tensor = tensor;
        last_file = *file;
        last_tensor_copy = tensor;
        last_file_copy = *file;
        ++members;
      },
      [] { FAIL() << "one weight_map: no restart"; });
    ASSERT_TRUE(result);
    EXPECT_EQ(result->status, WeightMapScan::Status::ok);
    EXPECT_EQ(members, 5000u);
    ASSERT_GT(reads.size(), json.size() / k_window);
    uint64_t next = 0;
    for (const auto& [offset, size] : reads) {
      EXPECT_EQ(offset, next);
      EXPECT_LE(size, k_window);
      next = offset + size;
    }
    EXPECT_EQ(next, json.size());
  }
}

// What only the whole text can tell is left to it: invalid JSON, bytes of 0x80 or above, a
// member longer than a window, a failed read.
TEST(IndexJson, StreamedLeavesToTheWholeTextWhatOnlyItCanTell)
{
  const std::string good = many_members(50); // members of up to 36 bytes: 1024 / 16 or less
  ASSERT_TRUE(stream(good, 1024));
  EXPECT_EQ(stream(good, 1024)->members.size(), 50u);
  EXPECT_FALSE(stream(good.substr(0, good.size() - 3), 1024)); // cut short
  EXPECT_FALSE(stream(good, 1024, true));                      // the read fails
  std::string high = good;
  high.insert(high.find("layers.7."), "\xc3\xa9");
  EXPECT_EQ(scan(high).status, WeightMapScan::Status::ok);
  EXPECT_FALSE(stream(high, 1 << 20));
  std::string long_name = good;
  long_name.insert(long_name.find("layers.7."), std::string(2000, 'x'));
  EXPECT_EQ(scan(long_name).status, WeightMapScan::Status::ok);
  EXPECT_FALSE(stream(long_name, 1024));
  EXPECT_TRUE(stream(long_name, 1 << 20)); // fits one window
  // Space alone may follow the root, however long, across windows.
  EXPECT_TRUE(stream(good + std::string(5000, ' '), 1024));
  EXPECT_FALSE(stream(good + std::string(5000, ' ') + "x", 1024));
}

namespace {

// A TextReader over `text`; `fail_reads`: every read fails.
TextReader
reader_of(const std::string& text, bool fail_reads = false)
{
  return [&text, fail_reads](uint64_t offset, std::span<char> to) {
    if (fail_reads || offset > text.size() || to.size() > text.size() - offset) {
      return false;
    }
    std::copy_n(text.data() + offset, to.size(), to.data());
    return true;
  };
}

std::optional<IndentedEntries>
indented_entries(const std::string& text, size_t head = size_t{16} << 10)
{
  return find_indented_entries(text.size(), reader_of(text), head);
}

// The entries as json.dumps(indent=2) writes them, between weight_map's braces.
std::string
indented_body(const std::vector<std::pair<std::string, std::string>>& entries)
{
  std::string body;
  for (size_t i = 0; i < entries.size(); ++i) {
    body += (i ? ",\n    \"" : "\n    \"") + entries[i].first + "\": \"" + entries[i].second + "\"";
  }
  return body;
}

const std::string k_indented_start =
  "{\n  \"metadata\": {\n    \"total_size\": 12\n  },\n  \"weight_map\": {";

// Whether IndentedEntryMatcher, over text[at, end) in a buffer of `window` bytes, finds
// `entries` there and nothing after them.
bool
matches(const std::string& text, uint64_t at, uint64_t end, bool first,
        const std::vector<std::pair<std::string, std::string>>& entries, size_t window,
        bool fail_reads = false)
{
  const TextReader read = reader_of(text, fail_reads);
  std::vector<char> buffer(window);
  IndentedEntryMatcher matcher(read, at, end, first, buffer);
  for (const auto& [name, file] : entries) {
    const std::optional<std::string> value = indented_value(file);
    if (!value || !matcher.next(name, *value)) {
      return false;
    }
  }
  return matcher.offset() == end;
}

} // namespace

// The text as json.dumps(indent=2) writes an index: the entries lie between weight_map's '{'
// and the newline before its '}', whatever the metadata and the whitespace after the root.
TEST(IndexJson, IndentedEntriesFoundWherePythonWritesThem)
{
  const std::string body = indented_body({{"a.weight", "model-00001-of-00002.safetensors"},
                                          {"b.weight", "model-00002-of-00002.safetensors"}});
  for (const std::string& start :
       {k_indented_start, std::string("{\n  \"weight_map\": {"),
        std::string("{\n  \"metadata\": {\n    \"total_parameters\": 7,\n    \"x\": [\n      "
                    "1\n    ]\n  },\n  \"weight_map\": {"),
        std::string("{\"weight_map\": {\"q\": \"r\"}, \"weight_map\": {")}) { // the last counts
    for (const std::string end : {"\n  }\n}", "\n  }\n}\n", "\n  }}  \n\n", "}}", "\t\r\n }\n}"}) {
      const std::string text = start + body + end;
      const auto found = indented_entries(text);
      ASSERT_TRUE(found) << text;
      EXPECT_EQ(found->begin, start.size());
      EXPECT_EQ(found->end, start.size() + body.size());
    }
  }
}

// Text that is not so, or that only looks so, is left to the other readers.
TEST(IndexJson, IndentedEntriesRefusedWhereTheTextSaysOtherwise)
{
  const std::string body = indented_body({{"a", "b"}});
  for (const std::string& text : std::vector<std::string>{
         R"({"weight_map": {"a": "b"}})",                                    // compact
         "{\n  \"weight_map\": {\r\n    \"a\": \"b\"\r\n  }\r\n}",           // CRLF
         "{\n  \"weight_map\": {}\n}",                                       // empty
         "{\n  \"weight_map\": {\n      \"a\": \"b\"\n  }\n}",               // six spaces
         k_indented_start + body + "\n  },\n  \"z\": 1\n}",                  // not the last member
         k_indented_start + body + "\n  }\n}x",                              // after the root
         "{\n  \"metadata\": {,},\n  \"weight_map\": {" + body + "\n  }\n}", // not JSON
         "[\n  \"weight_map\": {" + body + "\n  }\n}",                       // not an object
         "{\n  \"m\": {\n  \"weight_map\": {" + body + "\n  }\n}\n}",        // nested
         // A key that ends as "weight_map" does, after the real weight_map: the entries found
         // would be those of another member.
         "{\"weight_map\": {\"a\": \"b\"}, \"x\\\"weight_map\": {" + body + "\n  }\n}",
         "{\"x\\\"weight_map\": {" + body + "\n  }\n}"}) {
    EXPECT_FALSE(indented_entries(text)) << text;
  }
  // Where the text around is right but what lies between is not entries, the stretch is found
  // and no entries match it.
  for (const std::string& text :
       std::vector<std::string>{k_indented_start + body + "\n  }\n}\n}",  // a brace too many
                                k_indented_start + body + "x\n  }\n}",    // not an entry's end
                                k_indented_start + body + ",\n  }\n}"}) { // a comma after the last
    const auto found = indented_entries(text);
    ASSERT_TRUE(found) << text;
    EXPECT_FALSE(matches(text, found->begin, found->end, true, {{"a", "b"}}, 4096)) << text;
    EXPECT_FALSE(test::indented_entries_of(text, found->begin, found->end)) << text;
  }
  const std::string good = k_indented_start + body + "\n  }\n}\n";
  ASSERT_TRUE(indented_entries(good));
  EXPECT_FALSE(indented_entries(good, 20)); // weight_map's '{' past the first bytes read
  EXPECT_FALSE(find_indented_entries(good.size(), reader_of(good, true)));
}

// Entries that cannot be in name order are not taken for indented entries: the tensors are
// compared in name order, and such an index is better read at once by the other readers. Names
// are sampled at 16 places; a sample that finds the same entry as the one before tells nothing.
TEST(IndexJson, IndentedEntriesOutOfNameOrderAreLeftToTheOtherReaders)
{
  for (const size_t count : {size_t{1}, size_t{3}, size_t{5}, size_t{2000}}) {
    std::vector<std::pair<std::string, std::string>> entries;
    for (size_t i = 0; i < count; ++i) {
      entries.emplace_back(fmt::format("model.layers.{:04}.w", i),
                           fmt::format("model-{:05}.safetensors", i % 2));
    }
    const auto text = [&] { return k_indented_start + indented_body(entries) + "\n  }\n}\n"; };
    EXPECT_TRUE(indented_entries(text())) << count;
    if (count < 3) {
      continue;
    }
    // By file, as huggingface_hub's example writes them; then backwards.
    std::stable_sort(entries.begin(), entries.end(),
                     [](const auto& a, const auto& b) { return a.second < b.second; });
    EXPECT_FALSE(indented_entries(text())) << count;
    std::sort(entries.begin(), entries.end());
    std::reverse(entries.begin(), entries.end());
    EXPECT_FALSE(indented_entries(text())) << count;
  }
}

namespace {

// An index as Python writes it, or close: metadata of random JSON, now and then an earlier
// weight_map or a key ending as "weight_map" does; entries in name order (repeats too) with
// names now and then escaped, not ASCII or empty; now and then a member after weight_map.
// Damaged like random_document().
std::string
python_index_document(test::Lcg& next, int round)
{
  static const std::vector<std::string> names{"model.layers.0.mlp.experts.12.down_proj.weight",
                                              "model.layers.0.mlp.experts.3.up_proj.weight",
                                              "lm_head.weight",
                                              R"(a"b)",
                                              R"(xéy)",
                                              "caf\xc3\xa9",
                                              "",
                                              "weight_map"};
  static const std::vector<std::string> files{"model-00001-of-00002.safetensors",
                                              "model-00002-of-00002.safetensors", R"(m\/1)"};
  static const std::vector<std::string> metadata{"{}", "{\n    \"total_size\": 28\n  }",
                                                 R"({"a": [1, {"weight_map": {"q": "r"}}]})",
                                                 R"("weight_map\": {")"};
  std::string json = "{\n  \"metadata\": " + metadata[next(metadata.size())] + ",\n  ";
  if (next(6) == 0) {
    json += next(2) ? R"("weight_map": {"q": "r"}, )" : R"("x\"weight_map": {"q": "r"}, )";
  }
  json += next(8) ? "\"weight_map\": {" : "\"x\\\"weight_map\": {";
  std::vector<std::string> chosen(1 + next(5)); // in order, as an index is written
  for (std::string& name : chosen) {
    name = names[next(names.size())];
  }
  std::sort(chosen.begin(), chosen.end());
  for (size_t i = 0; i < chosen.size(); ++i) {
    json +=
      (i ? ",\n    \"" : "\n    \"") + chosen[i] + "\": \"" + files[next(files.size())] + "\"";
  }
  json += next(8) ? "\n  }\n}" : "\n  },\n  \"z\": 1\n}";
  json += next(2) ? "\n" : "";
  return damaged(next, round, std::move(json));
}

} // namespace

// Random indexes as Python writes them, damaged or not: whenever the entries are found and are
// entries as the matcher compares them, the whole text is JSON whose weight_map holds exactly
// them.
TEST(IndexJson, IndentedEntriesFoundOnlyWhereTheWholeScanAgrees)
{
  test::Lcg next(5150);
  size_t found = 0, compared = 0;
  for (int round = 0; round < 20000; ++round) {
    const std::string json = python_index_document(next, round);
    const auto entries = indented_entries(json);
    if (!entries) {
      continue;
    }
    ++found;
    const auto reference = test::indented_entries_of(json, entries->begin, entries->end);
    if (!reference) {
      continue;
    }
    ++compared;
    ASSERT_TRUE(matches(json, entries->begin, entries->end, true, *reference, 4096)) << json;
    const Scanned whole = scan(json);
    ASSERT_EQ(whole.status, WeightMapScan::Status::ok) << json;
    Members members;
    for (const auto& [name, file] : *reference) {
      members.push_back({name, file});
    }
    ASSERT_EQ(whole.members, members) << json;
  }
  EXPECT_GT(found, 6000u) << compared;
  EXPECT_GT(compared, 1500u) << found;
}

// Entries compared one by one, across windows as small as the longest entry: any byte changed
// in the text, or an entry more or less, is seen.
TEST(IndexJson, IndentedEntriesComparedOneByOne)
{
  std::vector<std::pair<std::string, std::string>> entries;
  for (int i = 0; i < 12; ++i) {
    entries.emplace_back("model.layers." + std::to_string(i * 7) + ".w",
                         "model-0000" + std::to_string(i % 3) + ".safetensors");
  }
  const std::string body = indented_body(entries);
  const std::string text = k_indented_start + body + "\n  }\n}\n";
  const uint64_t begin = k_indented_start.size();
  const uint64_t end = begin + body.size();
  size_t longest = 0; // a comma, a newline and four spaces, the quoted name and its value
  for (const auto& [name, file] : entries) {
    longest = std::max(longest, 7 + name.size() + indented_value(file)->size());
  }
  for (const size_t window : {longest, longest + 1, longest + 7, size_t{4096}}) {
    EXPECT_TRUE(matches(text, begin, end, true, entries, window)) << window;
    // From an entry's start but the first: with its comma.
    const uint64_t third = begin + indented_body({entries[0], entries[1]}).size();
    EXPECT_TRUE(matches(text, third, end, false, {entries.begin() + 2, entries.end()}, window));
    EXPECT_FALSE(matches(text, third, end, true, {entries.begin() + 2, entries.end()}, window));
    auto fewer = entries;
    fewer.pop_back();
    EXPECT_FALSE(matches(text, begin, end, true, fewer, window)) << window;
    auto more = entries;
    more.emplace_back("model.layers.99.w", "model-00000.safetensors");
    EXPECT_FALSE(matches(text, begin, end, true, more, window)) << window;
    for (uint64_t at = begin; at < end; ++at) {
      std::string changed = text;
      changed[at] ^= 0x20;
      EXPECT_FALSE(matches(changed, begin, end, true, entries, window)) << at << " " << window;
    }
    EXPECT_FALSE(matches(text, begin, end, true, entries, window, true)); // reads fail
  }
  EXPECT_FALSE(matches(text, begin, end, true, entries, longest - 1)); // an entry never fits
}

// A file goes into an entry as it is only when JSON needs no escape for it.
TEST(IndexJson, IndentedValueOnlyForFilesWithoutEscapes)
{
  EXPECT_EQ(indented_value("model-00001-of-00002.safetensors"),
            "\": \"model-00001-of-00002.safetensors\"");
  EXPECT_EQ(indented_value("sub dir/x~.safetensors"), "\": \"sub dir/x~.safetensors\"");
  for (const std::string& file : std::vector<std::string>{
         "a\"b", "a\\b", "a\nb", std::string("a\0b", 3), "a\x7f", "caf\xc3\xa9.safetensors"}) {
    EXPECT_FALSE(indented_value(file)) << file;
  }
}
