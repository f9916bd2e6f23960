// Tests for text-preserving JSON edits and JSON pointer positions. Expected texts are written out
// in full: equality with them is byte identity outside the edit. nlohmann checks that each result
// still means the original document plus the new entries.
#include <gtest/gtest.h>

#include <fmt/format.h>
#include <nlohmann/json.hpp>
#include <string>
#include <utility>
#include <vector>

#include "builder.hpp"
#include "qcheck/json_text.hpp"

using namespace qcheck;

namespace {

using Json = nlohmann::json;

// A document from (depth, content) lines, indented with `unit` and joined with `eol`.
std::string
lines(const std::string& unit, const std::string& eol,
      const std::vector<std::pair<int, std::string>>& rows, bool final_eol = true)
{
  std::string out;
  for (size_t i = 0; i < rows.size(); ++i) {
    for (int d = 0; d < rows[i].first; ++d) {
      out += unit;
    }
    out += rows[i].second;
    if (i + 1 < rows.size() || final_eol) {
      out += eol;
    }
  }
  return out;
}

std::string
append(const std::string& text, const std::string& pointer, const std::vector<std::string>& entries)
{
  auto result = append_to_string_array(text, pointer, entries);
  EXPECT_TRUE(result) << result.error();
  return result ? *result : std::string();
}

std::string
append_error(const std::string& text, const std::string& pointer,
             const std::vector<std::string>& entries)
{
  auto result = append_to_string_array(text, pointer, entries);
  EXPECT_FALSE(result) << *result;
  return result ? std::string() : result.error();
}

std::string
locate_error(const std::string& text, const std::string& pointer)
{
  auto span = locate(text, pointer);
  EXPECT_FALSE(span);
  return span ? std::string() : span.error();
}

// The result parses to `before` with `added` appended to the array at `pointer` (created when
// missing).
void
expect_reparses(const std::string& before, const std::string& after, const std::string& pointer,
                const std::vector<std::string>& added)
{
  Json expected = Json::parse(before);
  Json& array = expected[Json::json_pointer(pointer)];
  if (array.is_null()) {
    array = Json::array();
  }
  for (const std::string& entry : added) {
    array.push_back(entry);
  }
  EXPECT_EQ(Json::parse(after), expected) << after;
}

// Appends, checks the exact result, that it re-parses, and that a second run changes nothing.
void
expect_append(const std::string& before, const std::string& pointer,
              const std::vector<std::string>& entries, const std::string& expected,
              const std::vector<std::string>& added)
{
  const std::string after = append(before, pointer, entries);
  EXPECT_EQ(after, expected);
  expect_reparses(before, after, pointer, added);
  EXPECT_EQ(append(after, pointer, entries), after) << "second run must change nothing";
}

void
expect_append(const std::string& before, const std::string& pointer,
              const std::vector<std::string>& entries, const std::string& expected)
{
  expect_append(before, pointer, entries, expected, entries);
}

// Bytes before and after the value at `pointer` are the same in both texts.
void
expect_outside_unchanged(const std::string& before, const std::string& after,
                         const std::string& pointer)
{
  auto old_span = locate(before, pointer);
  auto new_span = locate(after, pointer);
  ASSERT_TRUE(old_span) << old_span.error();
  ASSERT_TRUE(new_span) << new_span.error();
  ASSERT_EQ(old_span->begin, new_span->begin);
  EXPECT_EQ(before.substr(0, old_span->begin), after.substr(0, new_span->begin));
  EXPECT_EQ(before.substr(old_span->end), after.substr(new_span->end));
}

// A config.json in Python's json.dumps(indent=...) layout, with values that re-serialising
// would change: 1e-06, 1000000.0, \u00e9, an empty object.
std::string
rich_config(const std::string& unit, const std::string& eol, bool final_eol,
            const std::vector<std::string>& extra)
{
  std::vector<std::pair<int, std::string>> rows{
    {0, "{"},
    {1, R"("architectures": [)"},
    {2, R"("DeepseekV3ForCausalLM")"},
    {1, "],"},
    {1, R"("author": "Ren\u00e9",)"},
    {1, R"("quantization_config": {)"},
    {2, R"("config_groups": {)"},
    {3, R"("group_0": {)"},
    {4, R"("weights": {)"},
    {5, R"("num_bits": 4,)"},
    {5, R"("observer_kwargs": {})"},
    {4, "}"},
    {3, "}"},
    {2, "},"},
    {2, R"("ignore": [)"},
    {3, R"("lm_head",)"},
    {3, R"("re:.*mlp\\.gate$")"},
  };
  for (const std::string& e : extra) {
    rows.back().second += ",";
    rows.push_back({3, e});
  }
  const std::vector<std::pair<int, std::string>> tail{
    {2, "],"},
    {2, R"("quant_method": "compressed-tensors")"},
    {1, "},"},
    {1, R"("rms_norm_eps": 1e-06,)"},
    {1, R"("rope_theta": 1000000.0,)"},
    {1, R"("max_position_embeddings": 163840)"},
    {0, "}"},
  };
  rows.insert(rows.end(), tail.begin(), tail.end());
  return lines(unit, eol, rows, final_eol);
}

} // namespace

// ---- Appending to existing arrays ----

TEST(JsonTextAppend, TwoSpacesOneEntryPerLine)
{
  expect_append("{\n  \"ignore\": [\n    \"lm_head\",\n    \"model.visual*\"\n  ]\n}", "/ignore",
                {"a*", "b*"},
                "{\n  \"ignore\": [\n    \"lm_head\",\n    \"model.visual*\",\n    \"a*\",\n    "
                "\"b*\"\n  ]\n}");
}

TEST(JsonTextAppend, EveryIndentationAndLineEnding)
{
  const std::vector<std::pair<std::string, std::string>> styles{
    {"  ", "\n"}, {"    ", "\n"}, {"\t", "\n"}, {"  ", "\r\n"}, {"\t", "\r\n"}};
  for (const auto& [unit, eol] : styles) {
    for (const bool final_eol : {true, false}) {
      SCOPED_TRACE(testing::Message()
                   << "unit '" << unit << "' eol " << eol.size() << " final " << final_eol);
      const std::string before = rich_config(unit, eol, final_eol, {});
      const std::string expected =
        rich_config(unit, eol, final_eol, {R"("model.layers.61*")", R"("mtp.*")"});
      expect_append(before, "/quantization_config/ignore", {"model.layers.61*", "mtp.*"}, expected);
    }
  }
}

TEST(JsonTextAppend, BytesOutsideTheArrayAreIdentical)
{
  const std::string before = rich_config("  ", "\n", false, {});
  const std::string after =
    append(before, "/quantization_config/ignore", {"model.layers.61*", "caf\xC3\xA9"});
  expect_outside_unchanged(before, after, "/quantization_config/ignore");
  EXPECT_NE(after.find("\"rms_norm_eps\": 1e-06,"), std::string::npos);
  EXPECT_NE(after.find("\"rope_theta\": 1000000.0,"), std::string::npos);
  EXPECT_NE(after.find(R"("author": "Ren\u00e9")"), std::string::npos);
  EXPECT_NE(after.find("\"observer_kwargs\": {}"), std::string::npos);
  EXPECT_EQ(after.back(), '}');
  expect_reparses(before, after, "/quantization_config/ignore",
                  {"model.layers.61*", "caf\xC3\xA9"});
}

TEST(JsonTextAppend, FourSpacesNested)
{
  const std::string before = "{\n"
                             "    \"quantization_config\": {\n"
                             "        \"ignore\": [\n"
                             "            \"lm_head\"\n"
                             "        ],\n"
                             "        \"quant_method\": \"fp8\"\n"
                             "    }\n"
                             "}\n";
  const std::string expected = "{\n"
                               "    \"quantization_config\": {\n"
                               "        \"ignore\": [\n"
                               "            \"lm_head\",\n"
                               "            \"model.mtp*\"\n"
                               "        ],\n"
                               "        \"quant_method\": \"fp8\"\n"
                               "    }\n"
                               "}\n";
  expect_append(before, "/quantization_config/ignore", {"model.mtp*"}, expected);
}

TEST(JsonTextAppend, TabsAndCrlf)
{
  expect_append(
    "{\r\n\t\"q\": {\r\n\t\t\"ignore\": [\r\n\t\t\t\"lm_head\"\r\n\t\t]\r\n\t}\r\n}", "/q/ignore",
    {"a*"},
    "{\r\n\t\"q\": {\r\n\t\t\"ignore\": [\r\n\t\t\t\"lm_head\",\r\n\t\t\t\"a*\"\r\n\t\t]"
    "\r\n\t}\r\n}");
}

TEST(JsonTextAppend, InlineArrayReusesItsSeparator)
{
  expect_append(R"({"ignore": ["lm_head", "x"]})", "/ignore", {"a*"},
                R"({"ignore": ["lm_head", "x", "a*"]})");
  expect_append(R"(["x","y"])", "", {"a*"}, R"(["x","y","a*"])");
  expect_append(R"({"ignore":["x","y"]})", "/ignore", {"a*", "b*"},
                R"({"ignore":["x","y","a*","b*"]})");
  expect_append(R"(["x" , "y"])", "", {"a*"}, R"(["x" , "y" , "a*"])");
}

TEST(JsonTextAppend, InlineSingleElementFollowsTheFile)
{
  expect_append(R"({"bits": 4, "ignore": ["x"]})", "/ignore", {"a*"},
                R"({"bits": 4, "ignore": ["x", "a*"]})");
  expect_append(R"({"bits":4,"ignore":["x"]})", "/ignore", {"a*"},
                R"({"bits":4,"ignore":["x","a*"]})");
  expect_append(R"(["x"])", "", {"a*"}, R"(["x", "a*"])");
}

TEST(JsonTextAppend, InlineArrayInsideMultilineFile)
{
  expect_append("{\n  \"ignore\": [\"lm_head\", \"x\"],\n  \"bits\": 4\n}\n", "/ignore", {"a*"},
                "{\n  \"ignore\": [\"lm_head\", \"x\", \"a*\"],\n  \"bits\": 4\n}\n");
}

TEST(JsonTextAppend, ClosingBracketOnTheLastLine)
{
  expect_append("{\"ignore\": [\n    \"x\"]}", "/ignore", {"a*"},
                "{\"ignore\": [\n    \"x\",\n    \"a*\"]}");
}

// ---- Empty arrays ----

TEST(JsonTextAppend, EmptyArrayOpensUpInTheFilesIndentation)
{
  expect_append("{\n  \"ignore\": []\n}\n", "/ignore", {"a*"},
                "{\n  \"ignore\": [\n    \"a*\"\n  ]\n}\n");
  expect_append("{\n  \"bits\": 4,\n  \"ignore\": [],\n  \"x\": 1\n}", "/ignore", {"a*", "b*"},
                "{\n  \"bits\": 4,\n  \"ignore\": [\n    \"a*\",\n    \"b*\"\n  ],\n  \"x\": 1\n}");
}

TEST(JsonTextAppend, EmptyArrayNestedFourSpaces)
{
  const std::string before = "{\n"
                             "    \"quantization_config\": {\n"
                             "        \"ignore\": [],\n"
                             "        \"quant_method\": \"fp8\"\n"
                             "    }\n"
                             "}";
  const std::string expected = "{\n"
                               "    \"quantization_config\": {\n"
                               "        \"ignore\": [\n"
                               "            \"a*\"\n"
                               "        ],\n"
                               "        \"quant_method\": \"fp8\"\n"
                               "    }\n"
                               "}";
  expect_append(before, "/quantization_config/ignore", {"a*"}, expected);
}

TEST(JsonTextAppend, EmptyArrayTabsCrlf)
{
  expect_append("{\r\n\t\"ignore\": []\r\n}\r\n", "/ignore", {"a*"},
                "{\r\n\t\"ignore\": [\r\n\t\t\"a*\"\r\n\t]\r\n}\r\n");
}

TEST(JsonTextAppend, EmptyArrayWithoutIndentation)
{
  // Python's json.dumps(indent=0).
  expect_append("{\n\"bits\": 4,\n\"ignore\": []\n}", "/ignore", {"a*"},
                "{\n\"bits\": 4,\n\"ignore\": [\n\"a*\"\n]\n}");
}

TEST(JsonTextAppend, EmptyArrayInOneLineFileStaysInline)
{
  expect_append(R"({"ignore": []})", "/ignore", {"a*", "b*"}, R"({"ignore": ["a*", "b*"]})");
  expect_append(R"({"bits":4,"ignore":[]})", "/ignore", {"a*", "b*"},
                R"({"bits":4,"ignore":["a*","b*"]})");
  expect_append(R"({"ignore": [ ]})", "/ignore", {"a*"}, R"({"ignore": ["a*"]})");
  expect_append("[]", "", {"a*", "b*"}, R"(["a*", "b*"])");
  // An inline object in a multi-line file keeps its empty array inline.
  expect_append("{\n  \"q\": {\"ignore\": []}\n}\n", "/q/ignore", {"a*"},
                "{\n  \"q\": {\"ignore\": [\"a*\"]}\n}\n");
}

// ---- Missing keys ----

TEST(JsonTextAppend, MissingKeyAddedAsLastMemberMultiline)
{
  const std::string before = "{\n"
                             "  \"producer\": {\n"
                             "    \"name\": \"modelopt\"\n"
                             "  },\n"
                             "  \"quantization\": {\n"
                             "    \"quant_algo\": \"FP8\",\n"
                             "    \"kv_cache_quant_algo\": null\n"
                             "  }\n"
                             "}\n";
  const std::string expected = "{\n"
                               "  \"producer\": {\n"
                               "    \"name\": \"modelopt\"\n"
                               "  },\n"
                               "  \"quantization\": {\n"
                               "    \"quant_algo\": \"FP8\",\n"
                               "    \"kv_cache_quant_algo\": null,\n"
                               "    \"exclude_modules\": [\n"
                               "      \"lm_head\",\n"
                               "      \"model.mtp*\"\n"
                               "    ]\n"
                               "  }\n"
                               "}\n";
  expect_append(before, "/quantization/exclude_modules", {"lm_head", "model.mtp*"}, expected);
}

TEST(JsonTextAppend, MissingKeyTabsCrlf)
{
  expect_append("{\r\n\t\"q\": {\r\n\t\t\"bits\": 4\r\n\t}\r\n}", "/q/ignore", {"a*"},
                "{\r\n\t\"q\": {\r\n\t\t\"bits\": 4,\r\n\t\t\"ignore\": [\r\n\t\t\t\"a*\"\r\n\t\t]"
                "\r\n\t}\r\n}");
}

TEST(JsonTextAppend, MissingKeyInline)
{
  expect_append(R"({"quantization_config": {"quant_method": "fp8"}})",
                "/quantization_config/ignore", {"a*", "b*"},
                R"({"quantization_config": {"quant_method": "fp8", "ignore": ["a*", "b*"]}})");
  expect_append(R"({"quantization_config":{"quant_method":"fp8"}})", "/quantization_config/ignore",
                {"a*", "b*"},
                R"({"quantization_config":{"quant_method":"fp8","ignore":["a*","b*"]}})");
  expect_append(R"({"a": 1 , "b": 2})", "/ignore", {"x"}, R"({"a": 1 , "b": 2 , "ignore": ["x"]})");
}

TEST(JsonTextAppend, MissingKeyFollowsSiblingArrays)
{
  // The sibling list is written inline, so the new one is too.
  expect_append(
    "{\n  \"q\": {\n    \"bits\": 4,\n    \"modules_to_not_convert\": [\"lm_head\"]\n  }\n}",
    "/q/ignore", {"a*"},
    "{\n  \"q\": {\n    \"bits\": 4,\n    \"modules_to_not_convert\": [\"lm_head\"],\n"
    "    \"ignore\": [\"a*\"]\n  }\n}");
}

TEST(JsonTextAppend, MissingKeyInEmptyObject)
{
  expect_append(
    "{\n  \"quantization_config\": {}\n}\n", "/quantization_config/ignore", {"a*"},
    "{\n  \"quantization_config\": {\n    \"ignore\": [\n      \"a*\"\n    ]\n  }\n}\n");
  expect_append(R"({"quantization_config": {}})", "/quantization_config/ignore", {"a*"},
                R"({"quantization_config": {"ignore": ["a*"]}})");
  expect_append("{}", "/ignore", {"a*"}, R"({"ignore": ["a*"]})");
}

TEST(JsonTextAppend, MissingParentIsAnError)
{
  EXPECT_EQ(
    append_error("{\n  \"model_type\": \"llama\"\n}\n", "/quantization_config/ignore", {"a"}),
    "cannot add /quantization_config/ignore: /quantization_config does not exist");
  EXPECT_EQ(append_error(R"({"a": {}})", "/a/b/c/d", {"x"}),
            "cannot add /a/b/c/d: /a/b does not exist");
  EXPECT_EQ(append_error(R"({"a": [1]})", "/a/5", {"x"}),
            "cannot add /a/5: /a is an array, not an object");
  EXPECT_EQ(append_error(R"({"a": "s"})", "/a/ignore", {"x"}),
            "cannot add /a/ignore: /a is a string, not an object");
}

TEST(JsonTextAppend, WrongTypesAreErrors)
{
  EXPECT_EQ(append_error(R"({"ignore": "lm_head"})", "/ignore", {"x"}),
            "cannot append to /ignore: it is a string, not an array");
  EXPECT_EQ(append_error(R"({"ignore": {}})", "/ignore", {"x"}),
            "cannot append to /ignore: it is an object, not an array");
  EXPECT_EQ(append_error(R"({"ignore": ["a", 1]})", "/ignore", {"x"}),
            "cannot append to /ignore: /ignore/1 is a number, not a string");
  EXPECT_EQ(append_error(R"({"ignore": ["a"]})", "/ignore", {"ok", std::string("\xC3")}),
            "cannot append to /ignore: entry 2 is not valid UTF-8");
  EXPECT_EQ(append_error(R"({"ignore": ["a"]})", "ignore", {"x"}),
            "invalid JSON pointer \"ignore\": it must be empty or start with '/'");
}

// ---- Entries ----

TEST(JsonTextAppend, EntriesAlreadyPresentAreSkipped)
{
  const std::string before = R"({"ignore": ["lm_head", "caf\u00e9", "a\/b"]})";
  EXPECT_EQ(append(before, "/ignore", {"lm_head", "caf\xC3\xA9", "a/b"}), before);
  expect_append(before, "/ignore", {"lm_head", "new", "a/b", "new"},
                R"({"ignore": ["lm_head", "caf\u00e9", "a\/b", "new"]})", {"new"});
}

TEST(JsonTextAppend, NothingToAddLeavesTextUnchanged)
{
  const std::string before = "{\r\n  \"ignore\": [\"x\"]\r\n}";
  EXPECT_EQ(append(before, "/ignore", {}), before);
  EXPECT_EQ(append(before, "/ignore", {"x", "x"}), before);
  // A missing key is not created for nothing, but its parent must exist.
  EXPECT_EQ(append(R"({"q": {}})", "/q/ignore", {}), R"({"q": {}})");
  EXPECT_EQ(append_error(R"({"q": {}})", "/x/ignore", {}),
            "cannot add /x/ignore: /x does not exist");
}

TEST(JsonTextAppend, IdempotentAcrossRuns)
{
  const std::string before = rich_config("    ", "\r\n", true, {});
  const std::vector<std::string> entries{"lm_head", "model.layers.61*", "mtp.*"};
  const std::string once = append(before, "/quantization_config/ignore", entries);
  const std::string twice = append(once, "/quantization_config/ignore", entries);
  EXPECT_EQ(once, twice);
  EXPECT_EQ(once, rich_config("    ", "\r\n", true, {R"("model.layers.61*")", R"("mtp.*")"}));
  const std::string created = append(R"({"q": {"bits": 4}})", "/q/ignore", entries);
  EXPECT_EQ(append(created, "/q/ignore", entries), created);
}

TEST(JsonTextAppend, EntriesAreEscaped)
{
  const std::vector<std::string> entries{
    "a\"b", "c\\d", "e\nf", std::string("g\x01h"), "\xC3\xA9.*", "tab\t", "re:.*\\.mlp$", "s/l"};
  const std::string expected =
    R"(["x", "a\"b", "c\\d", "e\nf", "g\u0001h", "é.*", "tab\t", "re:.*\\.mlp$", "s/l"])";
  expect_append(R"(["x"])", "", entries, expected);
}

TEST(JsonTextAppend, LastDuplicateKeyIsEdited)
{
  expect_append(R"({"ignore": ["a"], "ignore": ["b"]})", "/ignore", {"c"},
                R"({"ignore": ["a"], "ignore": ["b", "c"]})");
}

TEST(JsonTextAppend, PointerThroughArraysAndEscapes)
{
  expect_append(R"({"groups": [{"ignore": ["x"]}, {"ignore": []}]})", "/groups/1/ignore", {"y"},
                R"({"groups": [{"ignore": ["x"]}, {"ignore": ["y"]}]})");
  expect_append(R"({"a/b": {"m~n": ["x"]}})", "/a~1b/m~0n", {"y"},
                R"({"a/b": {"m~n": ["x", "y"]}})");
}

TEST(JsonTextAppend, ByteOrderMarkKept)
{
  const std::string bom = "\xEF\xBB\xBF";
  EXPECT_EQ(append(bom + R"({"ignore": []})", "/ignore", {"a"}), bom + R"({"ignore": ["a"]})");
}

TEST(JsonTextAppend, InvalidDocumentIsAnError)
{
  EXPECT_EQ(append_error("{\"ignore\": [\"a\",]}", "/ignore", {"x"}),
            "invalid JSON at line 1, column 17: trailing comma before ']'");
}

// ---- Object members ----

TEST(JsonTextObject, AppendsToDynamicMultiline)
{
  const std::string before = "{\n"
                             "  \"quantization_config\": {\n"
                             "    \"bits\": 4,\n"
                             "    \"dynamic\": {\n"
                             "      \"-:.*visual.*\": {}\n"
                             "    }\n"
                             "  }\n"
                             "}\n";
  const std::string expected = "{\n"
                               "  \"quantization_config\": {\n"
                               "    \"bits\": 4,\n"
                               "    \"dynamic\": {\n"
                               "      \"-:.*visual.*\": {},\n"
                               "      \"-:.*mtp.*\": {}\n"
                               "    }\n"
                               "  }\n"
                               "}\n";
  auto after = add_object_member(before, "/quantization_config/dynamic", "-:.*mtp.*", "{}");
  ASSERT_TRUE(after) << after.error();
  EXPECT_EQ(*after, expected);
  auto again = add_object_member(*after, "/quantization_config/dynamic", "-:.*mtp.*", "{}");
  ASSERT_TRUE(again);
  EXPECT_EQ(*again, *after);
}

TEST(JsonTextObject, NestedValueLaidOutLikeSiblings)
{
  const std::string before = "{\n"
                             "    \"dynamic\": {\n"
                             "        \"+:.*mlp.*\": {\n"
                             "            \"bits\": 8\n"
                             "        }\n"
                             "    }\n"
                             "}";
  const std::string expected = "{\n"
                               "    \"dynamic\": {\n"
                               "        \"+:.*mlp.*\": {\n"
                               "            \"bits\": 8\n"
                               "        },\n"
                               "        \"+:.*attn.*\": {\n"
                               "            \"bits\": 8,\n"
                               "            \"group_size\": 64,\n"
                               "            \"scales\": [\n"
                               "                1e-06,\n"
                               "                2\n"
                               "            ],\n"
                               "            \"none\": {}\n"
                               "        }\n"
                               "    }\n"
                               "}";
  auto after = add_object_member(before, "/dynamic", "+:.*attn.*",
                                 R"({"bits":8,"group_size":64,"scales":[1e-06,2],"none":{}})");
  ASSERT_TRUE(after) << after.error();
  EXPECT_EQ(*after, expected);
}

TEST(JsonTextObject, InlineSiblingsGiveAnInlineValue)
{
  const std::string before =
    "{\n  \"quantization_config\": {\n    \"extra_config\": {\"a\": {\"bits\": 8}}\n  }\n}\n";
  const std::string expected = "{\n  \"quantization_config\": {\n    \"extra_config\": {\"a\": "
                               "{\"bits\": 8}, \"b\": {\"bits\": 16, \"sym\": true}}\n  }\n}\n";
  auto after = add_object_member(before, "/quantization_config/extra_config", "b",
                                 R"({"bits":16,"sym":true})");
  ASSERT_TRUE(after) << after.error();
  EXPECT_EQ(*after, expected);
  auto compact =
    add_object_member(R"({"e":{"a":{"bits":8}}})", "/e", "b", R"({"bits":16,"sym":true})");
  ASSERT_TRUE(compact) << compact.error();
  EXPECT_EQ(*compact, R"({"e":{"a":{"bits":8},"b":{"bits":16,"sym":true}}})");
}

TEST(JsonTextObject, CreatesMissingObject)
{
  const std::string before = "{\n  \"quantization_config\": {\n    \"bits\": 4\n  }\n}";
  const std::string expected =
    "{\n  \"quantization_config\": {\n    \"bits\": 4,\n    \"dynamic\": "
    "{\n      \"-:.*mtp.*\": {}\n    }\n  }\n}";
  auto after = add_object_member(before, "/quantization_config/dynamic", "-:.*mtp.*", "{}");
  ASSERT_TRUE(after) << after.error();
  EXPECT_EQ(*after, expected);
  auto inline_after = add_object_member(R"({"q": {"bits": 4}})", "/q/dynamic", "-:x", "{}");
  ASSERT_TRUE(inline_after) << inline_after.error();
  EXPECT_EQ(*inline_after, R"({"q": {"bits": 4, "dynamic": {"-:x": {}}}})");
}

TEST(JsonTextObject, FirstPlaceGoesBeforeTheMembers)
{
  constexpr auto first = MemberPlace::first;
  constexpr auto keep = ExistingMember::keep;
  // On their own lines: the new member takes the first one's line and indentation, CRLF kept.
  const std::string before = "{\r\n"
                             "    \"dynamic\": {\r\n"
                             "        \"+:.*mlp.*\": {\r\n"
                             "            \"bits\": 8\r\n"
                             "        }\r\n"
                             "    }\r\n"
                             "}";
  const std::string expected = "{\r\n"
                               "    \"dynamic\": {\r\n"
                               "        \"-:.*mtp.*\": {},\r\n"
                               "        \"+:.*mlp.*\": {\r\n"
                               "            \"bits\": 8\r\n"
                               "        }\r\n"
                               "    }\r\n"
                               "}";
  auto after = add_object_member(before, "/dynamic", "-:.*mtp.*", "{}", keep, first);
  ASSERT_TRUE(after) << after.error();
  EXPECT_EQ(*after, expected);
  // A second one goes before it. One the object has already stays when it is first, else moves
  // there with its value as written.
  auto second = add_object_member(*after, "/dynamic", "-:a$", "{}", keep, first);
  ASSERT_TRUE(second) << second.error();
  std::string both = expected;
  both.insert(both.find("\"-:.*mtp.*\""), "\"-:a$\": {},\r\n        ");
  EXPECT_EQ(*second, both);
  auto kept = add_object_member(*second, "/dynamic", "-:a$", "{}", keep, first);
  ASSERT_TRUE(kept);
  EXPECT_EQ(*kept, *second);
  auto moved = add_object_member(*second, "/dynamic", "+:.*mlp.*", "{}", keep, first);
  ASSERT_TRUE(moved) << moved.error();
  EXPECT_EQ(*moved, "{\r\n"
                    "    \"dynamic\": {\r\n"
                    "        \"+:.*mlp.*\": {\r\n"
                    "            \"bits\": 8\r\n"
                    "        },\r\n"
                    "        \"-:a$\": {},\r\n"
                    "        \"-:.*mtp.*\": {}\r\n"
                    "    }\r\n"
                    "}");
  auto middle = add_object_member(R"({"d": {"+:a": {"bits": 8}, "-:b":{}, "-:c": {}}})", "/d",
                                  "-:b", "{}", keep, first);
  ASSERT_TRUE(middle) << middle.error();
  EXPECT_EQ(*middle, R"({"d": {"-:b":{}, "+:a": {"bits": 8}, "-:c": {}}})");
  // Inline: the separator the members have, or the file's; the colon of the first member.
  auto spaced =
    add_object_member(R"({"d": {"+:a":{"bits":8},  "+:b":{}}})", "/d", "-:c", "{}", keep, first);
  ASSERT_TRUE(spaced) << spaced.error();
  EXPECT_EQ(*spaced, R"({"d": {"-:c":{},  "+:a":{"bits":8},  "+:b":{}}})");
  auto single = add_object_member(R"({"d": {"+:a": {"bits": 8}}})", "/d", "-:c", "{}", keep, first);
  ASSERT_TRUE(single) << single.error();
  EXPECT_EQ(*single, R"({"d": {"-:c": {}, "+:a": {"bits": 8}}})");
  auto compact = add_object_member(R"({"d":{"+:a":{"bits":8}}})", "/d", "-:c", "{}", keep, first);
  ASSERT_TRUE(compact) << compact.error();
  EXPECT_EQ(*compact, R"({"d":{"-:c":{},"+:a":{"bits":8}}})");
  // An empty, null or missing object: as at the end.
  for (const std::string doc : {R"({"d": {}})", R"({"d": null})", R"({"e": 1})"}) {
    EXPECT_EQ(add_object_member(doc, "/d", "-:c", "{}", keep, first).value(),
              add_object_member(doc, "/d", "-:c", "{}", keep).value())
      << doc;
  }
}

TEST(JsonTextObject, EmptyObjects)
{
  auto multi = add_object_member("{\n  \"dynamic\": {}\n}\n", "/dynamic", "-:.*mtp.*", "{}");
  ASSERT_TRUE(multi) << multi.error();
  EXPECT_EQ(*multi, "{\n  \"dynamic\": {\n    \"-:.*mtp.*\": {}\n  }\n}\n");
  auto one_line = add_object_member(R"({"dynamic": {}})", "/dynamic", "-:.*mtp.*", "{}");
  ASSERT_TRUE(one_line) << one_line.error();
  EXPECT_EQ(*one_line, R"({"dynamic": {"-:.*mtp.*": {}}})");
}

TEST(JsonTextObject, ExistingKeyLeavesTextUnchanged)
{
  const std::string before = R"({"dynamic": {"-:.*mtp.*": {"bits": 8}, "+:\\.mlp": {}}})";
  for (const auto& [key, value] :
       std::vector<std::pair<std::string, std::string>>{{"-:.*mtp.*", "{}"}, {"+:\\.mlp", "[1]"}}) {
    auto after = add_object_member(before, "/dynamic", key, value);
    ASSERT_TRUE(after) << after.error();
    EXPECT_EQ(*after, before);
  }
}

// An existing key's value replaced (AutoRound extra_config: the key that declared a float
// module quantized), laid out like its siblings; the key, its neighbours and every other byte
// stay.
TEST(JsonTextObject, ExistingKeyValueIsReplacedWhenAsked)
{
  const std::string before =
    "{\r\n\t\"extra_config\": {\r\n\t\t\"lm_head\": {\r\n\t\t\t\"bits\": 4,"
    "\r\n\t\t\t\"group_size\": 32\r\n\t\t},\r\n\t\t\"a.b\": {\r\n\t\t\t"
    "\"bits\": 8\r\n\t\t}\r\n\t}\r\n}\r\n";
  auto after = add_object_member(before, "/extra_config", "lm_head",
                                 R"({"bits": 16, "data_type": "fp"})", ExistingMember::replace);
  ASSERT_TRUE(after) << after.error();
  EXPECT_EQ(*after, "{\r\n\t\"extra_config\": {\r\n\t\t\"lm_head\": {\r\n\t\t\t\"bits\": 16,"
                    "\r\n\t\t\t\"data_type\": \"fp\"\r\n\t\t},\r\n\t\t\"a.b\": {\r\n\t\t\t"
                    "\"bits\": 8\r\n\t\t}\r\n\t}\r\n}\r\n");
  // A value on the line after its key is laid out from its own line.
  auto next_line =
    add_object_member("{\n  \"e\": {\n    \"a\":\n      {\n        \"bits\": 4\n      }\n  }\n}",
                      "/e", "a", R"({"bits":16,"x":1})", ExistingMember::replace);
  ASSERT_TRUE(next_line) << next_line.error();
  EXPECT_EQ(
    *next_line,
    "{\n  \"e\": {\n    \"a\":\n      {\n        \"bits\": 16,\n        \"x\": 1\n      }\n  }\n}");
  auto inline_after = add_object_member(R"({"e": {"a": {"bits": 4}, "b": 1}})", "/e", "a",
                                        R"({"bits":16})", ExistingMember::replace);
  ASSERT_TRUE(inline_after) << inline_after.error();
  EXPECT_EQ(*inline_after, R"({"e": {"a": {"bits": 16}, "b": 1}})");
  // The default keeps it; a missing key is inserted whatever the policy.
  auto kept = add_object_member(R"({"e": {"a": {"bits": 4}}})", "/e", "a", "{}");
  ASSERT_TRUE(kept);
  EXPECT_EQ(*kept, R"({"e": {"a": {"bits": 4}}})");
  auto inserted = add_object_member(R"({"e": {"a": 1}})", "/e", "b", "2", ExistingMember::replace);
  ASSERT_TRUE(inserted);
  EXPECT_EQ(*inserted, R"({"e": {"a": 1, "b": 2}})");
}

// A null list or object reads as empty in the engines (Python's None): fix replaces it with
// the new value, laid out as an empty one would be.
TEST(JsonTextObject, NullValuesAreReplaced)
{
  EXPECT_EQ(append(R"({"q": {"ignore": null, "b": 1}})", "/q/ignore", {"x", "y"}),
            R"({"q": {"ignore": ["x", "y"], "b": 1}})");
  EXPECT_EQ(append("{\n  \"q\": {\n    \"ignore\": null\n  }\n}\n", "/q/ignore", {"x"}),
            "{\n  \"q\": {\n    \"ignore\": [\n      \"x\"\n    ]\n  }\n}\n");
  auto object = add_object_member("{\n  \"q\": {\n    \"dynamic\": null,\n    \"bits\": 4\n  }\n}",
                                  "/q/dynamic", "-:.*mtp.*", "{}");
  ASSERT_TRUE(object) << object.error();
  EXPECT_EQ(
    *object,
    "{\n  \"q\": {\n    \"dynamic\": {\n      \"-:.*mtp.*\": {}\n    },\n    \"bits\": 4\n  }\n}");
  // Another scalar is still no list.
  EXPECT_EQ(append_error(R"({"ignore": false})", "/ignore", {"x"}),
            "cannot append to /ignore: it is a boolean, not an array");
}

TEST(JsonTextObject, KeyIsEscapedAndResultReparses)
{
  const std::string before = "{\n  \"dynamic\": {\n    \"x\": {}\n  }\n}";
  const std::string key = "+:.*\\.mlp\\..*\"q\"";
  auto after = add_object_member(before, "/dynamic", key, R"({"bits":8})");
  ASSERT_TRUE(after) << after.error();
  EXPECT_NE(after->find(R"("+:.*\\.mlp\\..*\"q\"": {)"), std::string::npos) << *after;
  Json expected = Json::parse(before);
  expected["dynamic"][key] = Json{{"bits", 8}};
  EXPECT_EQ(Json::parse(*after), expected);
  auto again = add_object_member(*after, "/dynamic", key, "{}");
  ASSERT_TRUE(again);
  EXPECT_EQ(*again, *after);
}

// A value read as JSON is added as its value alone: a byte order mark before it (which readers
// skip) does not end up inside the new object (found by fuzz_json_patch).
TEST(JsonTextObject, ValueWithAByteOrderMarkIsAddedWithoutIt)
{
  for (const char* pointer : {"/d", "/e"}) {
    auto added = add_object_member(R"({"d": {}})", pointer, "k", "\xEF\xBB\xBF null ");
    ASSERT_TRUE(added) << pointer << ": " << added.error();
    const Json parsed = Json::parse(*added);
    EXPECT_TRUE(parsed.at(std::string(pointer).substr(1)).at("k").is_null()) << *added;
  }
}

TEST(JsonTextObject, Errors)
{
  auto bad_value = add_object_member(R"({"d": {}})", "/d", "k", "{bad");
  ASSERT_FALSE(bad_value);
  EXPECT_EQ(bad_value.error(),
            "cannot add \"k\" to /d: its value is not JSON: invalid JSON at line 1, "
            "column 2: expected a string key or '}'");
  auto nan_value = add_object_member(R"({"d": {}})", "/d", "k", "[NaN]");
  ASSERT_FALSE(nan_value);
  EXPECT_EQ(nan_value.error(), "cannot add \"k\" to /d: its value contains NaN, which is not JSON");
  auto not_object = add_object_member(R"({"d": []})", "/d", "k", "{}");
  ASSERT_FALSE(not_object);
  EXPECT_EQ(not_object.error(), "cannot add a member to /d: it is an array, not an object");
  auto no_parent = add_object_member(R"({"d": {}})", "/x/d", "k", "{}");
  ASSERT_FALSE(no_parent);
  EXPECT_EQ(no_parent.error(), "cannot add /x/d: /x does not exist");
}

// ---- Locating ----

TEST(JsonTextLocate, SpansAndPositions)
{
  const std::string text = "{\n  \"a\": {\n    \"b\": [1, 2.5e3, \"x\"]\n  },\n  \"c\": null\n}\n";
  struct Row
  {
    std::string pointer;
    std::string value;
    uint32_t line;
    uint32_t column;
  };
  const std::vector<Row> rows{
    {"", text.substr(0, text.size() - 1), 1, 1},
    {"/a", "{\n    \"b\": [1, 2.5e3, \"x\"]\n  }", 2, 8},
    {"/a/b", "[1, 2.5e3, \"x\"]", 3, 10},
    {"/a/b/0", "1", 3, 11},
    {"/a/b/1", "2.5e3", 3, 14},
    {"/a/b/2", "\"x\"", 3, 21},
    {"/c", "null", 5, 8},
  };
  for (const Row& row : rows) {
    auto span = locate(text, row.pointer);
    ASSERT_TRUE(span) << row.pointer << ": " << span.error();
    EXPECT_EQ(text.substr(span->begin, span->end - span->begin), row.value) << row.pointer;
    EXPECT_EQ(span->start.line, row.line) << row.pointer;
    EXPECT_EQ(span->start.column, row.column) << row.pointer;
  }
}

TEST(JsonTextLocate, ColumnsCountBytesAndCrlf)
{
  const std::string text = "{\"\xC3\xA9\": 1,\r\n \"k\": true}";
  auto span = locate(text, "/\xC3\xA9");
  ASSERT_TRUE(span) << span.error();
  EXPECT_EQ(span->start.column, 8u); // the key is 4 bytes wide
  auto second = locate(text, "/k");
  ASSERT_TRUE(second) << second.error();
  EXPECT_EQ(second->start.line, 2u);
  EXPECT_EQ(second->start.column, 7u);
  EXPECT_EQ(text.substr(second->begin, 4), "true");
}

TEST(JsonTextLocate, PointerEscapes)
{
  const std::string text = R"({"a/b": {"m~n": 1, "~1": 2, "": 3}, "a": {"b": 4}})";
  const std::vector<std::pair<std::string, std::string>> rows{
    {"/a~1b/m~0n", "1"}, {"/a~1b/~01", "2"}, {"/a~1b/", "3"}, {"/a/b", "4"}};
  for (const auto& [pointer, value] : rows) {
    auto span = locate(text, pointer);
    ASSERT_TRUE(span) << pointer << ": " << span.error();
    EXPECT_EQ(text.substr(span->begin, span->end - span->begin), value) << pointer;
  }
  EXPECT_EQ(locate_error(text, "/a~2b"),
            "invalid JSON pointer \"/a~2b\": '~' must be followed by '0' or '1'");
  EXPECT_EQ(locate_error(text, "/a~"),
            "invalid JSON pointer \"/a~\": '~' must be followed by '0' or '1'");
  EXPECT_EQ(locate_error(text, "a"),
            "invalid JSON pointer \"a\": it must be empty or start with '/'");
}

TEST(JsonTextLocate, EscapedKeysMatchDecoded)
{
  const std::string text = R"({"caf\u00e9": 1, "\ud83d\ude00": 2, "q\"": 3})";
  EXPECT_TRUE(locate(text, "/caf\xC3\xA9"));
  EXPECT_TRUE(locate(text, "/\xF0\x9F\x98\x80"));
  EXPECT_TRUE(locate(text, "/q\""));
}

TEST(JsonTextLocate, DuplicateKeysLastWins)
{
  const std::string text = R"({"a": 1, "a": 22})";
  auto span = locate(text, "/a");
  ASSERT_TRUE(span);
  EXPECT_EQ(text.substr(span->begin, span->end - span->begin), "22");
}

TEST(JsonTextLocate, NotFoundMessages)
{
  EXPECT_EQ(locate_error(R"({"quantization_config": {"bits": 4}})", "/quantization_config/ignore"),
            "no value at /quantization_config/ignore: /quantization_config has no key \"ignore\"");
  EXPECT_EQ(locate_error("{}", "/x"), "no value at /x: the root has no key \"x\"");
  EXPECT_EQ(locate_error(R"({"a": [1, 2]})", "/a/2"),
            "no value at /a/2: /a has no element \"2\" (it has 2)");
  EXPECT_EQ(locate_error(R"({"a": [1, 2]})", "/a/01"),
            "no value at /a/01: /a has no element \"01\" (it has 2)");
  EXPECT_EQ(locate_error(R"({"a": [1, 2]})", "/a/-"),
            "no value at /a/-: /a has no element \"-\" (it has 2)");
  EXPECT_EQ(locate_error(R"({"a": 1})", "/a/b"),
            "no value at /a/b: /a is a number, not an object or array");
}

// Random JSON for the walk: objects (keys repeated, escaped, holding '/' and '~'), arrays,
// strings holding brackets and escaped quotes, scalars, empty containers, any JSON whitespace;
// `pointers` gets the pointer of every value written.
void
random_json(test::Lcg& next, int depth, const std::string& pointer, std::string& out,
            std::vector<std::string>& pointers)
{
  static const std::vector<std::string> k_spaces{"", " ", "\n", "\r\n  ", "\t", "\n\n    "};
  // Keys as written, and as a pointer names them.
  static const std::vector<std::pair<std::string, std::string>> k_keys{
    {R"("a")", "/a"},      {R"("b")", "/b"},     {R"("a/b")", "/a~1b"},
    {R"("m~n")", "/m~0n"}, {R"("")", "/"},       {R"("caf\u00e9")", "/caf\xC3\xA9"},
    {R"("q\"")", "/q\""},  {R"("\u0061")", "/a"}};
  static const std::vector<std::string> k_scalars{
    R"("x")", R"("[{\"]}")", R"("\\")", "-1.5e3", "0", "true", "false", "null", "[]", "{}"};
  const auto space = [&] { out += k_spaces[next(k_spaces.size())]; };
  pointers.push_back(pointer);
  const size_t kind = depth >= 4 ? 2 : next(3);
  if (kind == 2) {
    out += k_scalars[next(k_scalars.size())];
    return;
  }
  const bool object = kind == 0;
  out += object ? '{' : '[';
  const size_t count = next(5) + 1;
  for (size_t i = 0; i < count; ++i) {
    out += i > 0 ? "," : "";
    space();
    std::string child = pointer + "/" + std::to_string(i);
    if (object) {
      const auto& [written, token] = k_keys[next(k_keys.size())];
      out += written;
      space();
      out += ':';
      space();
      child = pointer + token;
    }
    random_json(next, depth + 1, child, out, pointers);
    space();
  }
  out += object ? '}' : ']';
}

// position_of() on texts of every length up to 80, newlines and '\r' anywhere (the first and
// last byte too), at every offset: the line and column a byte-by-byte count gives.
TEST(JsonTextLocate, PositionOfAgreesWithCountingByteByByte)
{
  test::Lcg next(45);
  for (size_t size = 0; size <= 80; ++size) {
    for (int round = 0; round < 20; ++round) {
      std::string text(size, 'x');
      for (char& c : text) {
        const size_t pick = next(8);
        c = pick == 0 ? '\n' : pick == 1 ? '\r' : 'a';
      }
      uint32_t line = 1;
      size_t line_start = 0;
      for (size_t offset = 0; offset <= size; ++offset) {
        const TextPosition p = position_of(text, offset);
        ASSERT_EQ(p.line, line) << size << " " << offset;
        ASSERT_EQ(p.column, offset - line_start + 1) << size << " " << offset;
        if (offset < size && text[offset] == '\n') {
          ++line;
          line_start = offset + 1;
        }
      }
    }
  }
}

// positions_of() gives position_of() for each offset, in any order, repeated, and past the end
// (the end's position).
TEST(JsonTextLocate, PositionsOfAgreesWithPositionOf)
{
  test::Lcg next(51);
  for (size_t size = 0; size <= 300; size += 13) {
    std::string text(size, 'a');
    for (char& c : text) {
      c = next(6) == 0 ? '\n' : 'a';
    }
    std::vector<size_t> offsets;
    for (int k = 0; k < 12; ++k) {
      offsets.push_back(next(size + 5));
    }
    offsets.push_back(offsets.front());
    const std::vector<TextPosition> got = positions_of(text, offsets);
    ASSERT_EQ(got.size(), offsets.size());
    for (size_t k = 0; k < offsets.size(); ++k) {
      const TextPosition want = position_of(text, offsets[k]);
      EXPECT_EQ(got[k].line, want.line) << size << " " << offsets[k];
      EXPECT_EQ(got[k].column, want.column) << size << " " << offsets[k];
    }
  }
  EXPECT_TRUE(positions_of("abc", {}).empty());
}

// The walk gives locate_all()'s spans and positions for every value of random documents (the last
// of repeated keys), its pointers followed alone, sixteen at a time or all in one pass; pointers
// to nothing get locate_all()'s answers, messages included.
TEST(JsonTextLocate, WalkingAlongPathsAgreesWithTheFullScan)
{
  test::Lcg next(2026);
  size_t walked = 0;
  for (int round = 0; round < 400; ++round) {
    std::string text = round % 7 == 0 ? "\xEF\xBB\xBF" : "";
    std::vector<std::string> pointers;
    random_json(next, 0, "", text, pointers);
    text += round % 3 == 0 ? "\n" : "";
    pointers.push_back("/zz");
    pointers.push_back(pointers[next(pointers.size())] + "/9");
    pointers.push_back(pointers[next(pointers.size())] + "/a");
    const auto full = locate_all(text, pointers);
    const auto compare = [&](size_t first, size_t count) {
      const std::vector<std::string> some(pointers.begin() + static_cast<std::ptrdiff_t>(first),
                                          pointers.begin() +
                                            static_cast<std::ptrdiff_t>(first + count));
      const auto walk = locate_along_paths(text, some);
      ASSERT_EQ(walk.size(), count);
      for (size_t i = 0; i < count; ++i) {
        const auto& expected = full[first + i];
        ASSERT_EQ(bool(walk[i]), bool(expected)) << text << "\n" << some[i];
        if (!expected) {
          EXPECT_EQ(walk[i].error(), expected.error());
          continue;
        }
        ++walked;
        EXPECT_EQ(walk[i]->begin, expected->begin) << text << "\n" << some[i];
        EXPECT_EQ(walk[i]->end, expected->end) << text << "\n" << some[i];
        EXPECT_EQ(walk[i]->start.line, expected->start.line) << text << "\n" << some[i];
        EXPECT_EQ(walk[i]->start.column, expected->start.column) << text << "\n" << some[i];
      }
    };
    for (size_t i = 0; i < pointers.size(); ++i) {
      compare(i, 1);
    }
    for (size_t i = 0; i < pointers.size(); i += 16) {
      compare(i, std::min<size_t>(16, pointers.size() - i));
    }
    compare(0, pointers.size());
  }
  EXPECT_GT(walked, 10000u);
}

// A long list, as finding positions need it: an element near its end, on its own line.
TEST(JsonTextLocate, WalkingFindsTheLastElementsOfALongList)
{
  std::string text = "{\n  \"quantization_config\": {\n    \"bits\": [1, {\"x\": \"]\"}],\n"
                     "    \"ignore\": [\n";
  for (int i = 0; i < 50000; ++i) {
    text += fmt::format("      \"model.layers.{}.mlp\"{}\n", i, i + 1 < 50000 ? "," : "");
  }
  text += "    ]\n  }\n}\n";
  const auto spans = locate_along_paths(
    text, {"/quantization_config/ignore/49999", "/quantization_config/ignore/0"});
  ASSERT_TRUE(spans[0]) << spans[0].error();
  EXPECT_EQ(text.substr(spans[0]->begin, spans[0]->end - spans[0]->begin),
            "\"model.layers.49999.mlp\"");
  EXPECT_EQ(spans[0]->start.line, 50004u);
  EXPECT_EQ(spans[0]->start.column, 7u);
  ASSERT_TRUE(spans[1]) << spans[1].error();
  EXPECT_EQ(spans[1]->start.line, 5u);
  // Every element at once, in reverse order: one pass, whatever their number.
  std::vector<std::string> pointers;
  for (int i = 49999; i >= 0; --i) {
    pointers.push_back(fmt::format("/quantization_config/ignore/{}", i));
  }
  const auto all = locate_along_paths(text, pointers);
  for (int i = 0; i < 50000; ++i) {
    ASSERT_TRUE(all[49999 - i]) << i;
    ASSERT_EQ(all[49999 - i]->start.line, static_cast<uint32_t>(5 + i)) << i;
  }
}

// Runs of strings before the element a path needs are skipped a run at a time: strings holding
// escapes, commas and brackets, space around the commas, elements of other kinds between runs;
// where the list is not JSON (a missing or trailing comma, an unterminated string, too few
// elements) the answer is still the full scan's, as element by element.
TEST(JsonTextLocate, WalkingSkipsRunsOfStringsAsElementByElement)
{
  const std::vector<std::pair<std::string, std::string>> cases{
    {R"(["a", "b\"c", "d\\", "e,]" ,  "f",)"
     "\n"
     R"(   "g", 1, "h", ["x", "]"], {"k": "v"}, "i", "j"])",
     "/11"},
    {R"(["a", "b\"c", "d\\", "e,]", "f"])", "/4"},
    {R"(["a", "b", 2, "c", null, "d"])", "/5"},
    {R"({"l": ["a", "b", "c",], "m": 1})", "/l/2"},
    {R"({"l": ["a", "b", "c",], "m": 1})", "/l/3"},
    {R"(["a" "b", "c"])", "/2"},
    {R"(["a" "1", "c"])", "/1"},
    {R"(["a", "b" 2, "c"])", "/2"},
    {R"(["a", "b)", "/3"},
    {R"(["a", "b"])", "/5"},
    {R"(["a", "b"])", "/1"},
    {R"(["a",)", "/1"},
    {R"(["a", ])", "/1"},
  };
  for (const auto& [text, pointer] : cases) {
    const auto walk = locate_along_paths(text, {pointer});
    const auto full = locate_all(text, {pointer});
    ASSERT_EQ(walk.size(), 1u);
    ASSERT_EQ(bool(walk[0]), bool(full[0])) << text << " " << pointer;
    if (!full[0]) {
      EXPECT_EQ(walk[0].error(), full[0].error()) << text << " " << pointer;
      continue;
    }
    EXPECT_EQ(walk[0]->begin, full[0]->begin) << text << " " << pointer;
    EXPECT_EQ(walk[0]->end, full[0]->end) << text << " " << pointer;
    EXPECT_EQ(walk[0]->start.line, full[0]->start.line) << text << " " << pointer;
    EXPECT_EQ(walk[0]->start.column, full[0]->start.column) << text << " " << pointer;
  }
  const auto last = locate_along_paths(cases[0].first, {cases[0].second});
  ASSERT_TRUE(last[0]);
  EXPECT_EQ(cases[0].first.substr(last[0]->begin, last[0]->end - last[0]->begin), "\"j\"");
}

// Long runs of strings are skipped 16 bytes at a time; a byte replaced anywhere before the wanted
// element (a quote, a backslash, a comma, a bracket, a space, a letter) gives the full scan's
// answer, as element by element: the same span, or the same failure. (A line break put in a
// string is not read by either walk, which takes the strings' insides as they are.)
TEST(JsonTextLocate, WalkingSkipsLongRunsOfStringsAsElementByElement)
{
  const std::vector<std::string> separators{", ", ",\n      ", " ,\t", ",", "\r\n,  "};
  std::string text = "{\"l\": [";
  for (size_t i = 0; i < 40; ++i) {
    // Bytes that no value starts with (the walk skips a value beside its path by its first
    // byte), commas and brackets among them.
    text += "\"" + std::string(i % 23, "rb/,]["[i % 6]) + "\"";
    text += separators[i % separators.size()];
  }
  const size_t target = text.size();
  text += "\"target\", \"after\"]}";
  const std::string pointer = "/l/40";
  const auto clean = locate_along_paths(text, {pointer});
  ASSERT_TRUE(clean[0]) << clean[0].error();
  EXPECT_EQ(clean[0]->begin, target);
  size_t refused = 0;
  for (size_t offset = 8; offset < target; ++offset) {
    for (const char c : {'"', '\\', ',', ']', ' ', 'x'}) {
      std::string damaged = text;
      damaged[offset] = c;
      if (c == '\\' &&
          std::string_view("\"\\/bfnrt").find(text[offset + 1]) == std::string_view::npos) {
        continue; // an escape neither walk reads (the insides of strings are taken as they are)
      }
      const auto walk = locate_along_paths(damaged, {pointer});
      const auto full = locate_all(damaged, {pointer});
      ASSERT_EQ(bool(walk[0]), bool(full[0])) << offset << " " << c << "\n" << damaged;
      if (!full[0]) {
        ++refused;
        EXPECT_EQ(walk[0].error(), full[0].error()) << offset << " " << c;
        continue;
      }
      EXPECT_EQ(walk[0]->begin, full[0]->begin) << offset << " " << c << "\n" << damaged;
      EXPECT_EQ(walk[0]->end, full[0]->end) << offset << " " << c;
      EXPECT_EQ(walk[0]->start.line, full[0]->start.line) << offset << " " << c;
      EXPECT_EQ(walk[0]->start.column, full[0]->start.column) << offset << " " << c;
    }
  }
  EXPECT_GT(refused, 100u); // damage that breaks the list is among the cases
}

// Lines are counted a block at a time, in counters that must not wrap: thousands of line breaks
// in a row (blank lines, CRLF), as many as one counter sees, and around that, as the full scan
// counts them.
TEST(JsonTextLocate, WalkingCountsAnyNumberOfLines)
{
  for (const size_t lines :
       {0, 1, 15, 16, 17, 255, 256, 4079, 4080, 4081, 4095, 4096, 4097, 9000}) {
    for (const std::string_view line_break : {"\n", "\r\n", "\n \n"}) {
      std::string text = "{\"a\": [1,";
      for (size_t i = 0; i < lines; ++i) {
        text += line_break;
      }
      text += "  \"x\"],\n\"b\": 2}";
      const auto walk = locate_along_paths(text, {"/a/1", "/b"});
      const auto full = locate_all(text, {"/a/1", "/b"});
      for (size_t i = 0; i < 2; ++i) {
        ASSERT_TRUE(walk[i]) << lines;
        ASSERT_TRUE(full[i]) << lines;
        EXPECT_EQ(walk[i]->start.line, full[i]->start.line) << lines << " " << i;
        EXPECT_EQ(walk[i]->start.column, full[i]->start.column) << lines << " " << i;
      }
    }
  }
}

// Past the last element a path needs, the rest of the list is skipped by its brackets and quotes
// alone: brackets and escaped quotes inside strings, nested lists and objects, long runs without
// a bracket, none of it ends the list early.
TEST(JsonTextLocate, WalkingSkipsTheRestOfAListByItsBrackets)
{
  std::string text = "{\"list\": [\"first\", \"wanted\"";
  for (int i = 0; i < 40; ++i) {
    text += fmt::format(", \"a]}}{}[\\\"]\", [[{{\"k\": [\"]\"]}}], 1234567890123456789], "
                        "{{\"x\": \"{}\"}}",
                        i, std::string(static_cast<size_t>(i), 'z'));
  }
  text += "],\n  \"after\": [0, \"here\"]}";
  const auto spans = locate_along_paths(text, {"/list/1", "/after/1"});
  ASSERT_TRUE(spans[0]) << spans[0].error();
  EXPECT_EQ(text.substr(spans[0]->begin, spans[0]->end - spans[0]->begin), "\"wanted\"");
  ASSERT_TRUE(spans[1]) << spans[1].error();
  EXPECT_EQ(text.substr(spans[1]->begin, spans[1]->end - spans[1]->begin), "\"here\"");
  EXPECT_EQ(spans[1]->start.line, 2u);
  EXPECT_EQ(spans[1]->start.column, text.size() - text.rfind('\n') - 8);
}

// The walk reads only what its path needs: a text that is not JSON beside the path (a trailing
// comma in another member) still gives the span there, which the full scan refuses.
TEST(JsonTextLocate, WalkingDoesNotCheckTheTextBesideThePath)
{
  const std::string text = R"({"a": {"b": [1, 2,]}, "c": "d"})";
  EXPECT_FALSE(locate(text, "/c"));
  const auto spans = locate_along_paths(text, {"/c"});
  ASSERT_TRUE(spans[0]) << spans[0].error();
  EXPECT_EQ(text.substr(spans[0]->begin, spans[0]->end - spans[0]->begin), "\"d\"");
}

// A key may hold a line break or another control character: messages show the pointer with
// them escaped, so that each stays one line (found by fuzz_json_patch).
TEST(JsonTextLocate, MessagesEscapeControlCharactersOfPointers)
{
  EXPECT_EQ(locate_error(R"({"a": 1})", "/k\nx\x01"),
            "no value at /k\\nx\\u0001: the root has no key \"k\\nx\\u0001\"");
  EXPECT_EQ(locate_error(R"({"a": 1})", "k\t"),
            "invalid JSON pointer \"k\\t\": it must be empty or start with '/'");
  EXPECT_EQ(append_error(R"({"k\nore": []})", "/k\nore", {"\xff"}),
            "cannot append to /k\\nore: entry 1 is not valid UTF-8");
  // Found by fuzz_json_patch: the element that is not a string is named by the same spelling.
  EXPECT_EQ(append_error(R"({"k\nore": [3]})", "/k\nore", {"a"}),
            "cannot append to /k\\nore: /k\\nore/0 is a number, not a string");
}

TEST(JsonTextLocate, PositionOf)
{
  const std::string text = "ab\ncd\r\nef";
  const std::vector<std::pair<size_t, std::pair<uint32_t, uint32_t>>> rows{
    {0, {1, 1}}, {2, {1, 3}}, {3, {2, 1}}, {5, {2, 3}}, {7, {3, 1}}, {9, {3, 3}}, {100, {3, 3}}};
  for (const auto& [offset, expected] : rows) {
    const TextPosition p = position_of(text, offset);
    EXPECT_EQ(p.line, expected.first) << offset;
    EXPECT_EQ(p.column, expected.second) << offset;
  }
  EXPECT_EQ(position_of("", 0).line, 1u);
  EXPECT_EQ(position_of("", 0).column, 1u);
}

// ---- Validation ----

TEST(JsonTextValidate, InvalidJsonMessages)
{
  const std::vector<std::pair<std::string, std::string>> rows{
    {"{\n  \"a\": [\n    1 2\n  ]\n}", "line 3, column 7: expected ',' or ']'"},
    {R"({"a": 1,})", "line 1, column 9: trailing comma before '}'"},
    {"[1, 2,]", "line 1, column 7: trailing comma before ']'"},
    {R"({"a" 1})", "line 1, column 6: expected ':' after the key"},
    {R"({1: 2})", "line 1, column 2: expected a string key or '}'"},
    {R"({"a": 1, 2})", "line 1, column 10: expected a string key"},
    {R"({"a": 1 "b": 2})", "line 1, column 9: expected ',' or '}'"},
    {"", "line 1, column 1: unexpected end of text, expected a value"},
    {"  \n ", "line 2, column 2: unexpected end of text, expected a value"},
    {"[1, 2", "line 1, column 6: unexpected end of text, expected ',' or ']'"},
    {"{\"a\"", "line 1, column 5: unexpected end of text, expected ':' after the key"},
    {"{", "line 1, column 2: unexpected end of text, expected a string key or '}'"},
    {R"({"a": tru})", "line 1, column 7: expected a value"},
    {"['a']", "line 1, column 2: expected a value"},
    {"[01]", "line 1, column 3: expected ',' or ']'"},
    {"[1.]", "line 1, column 4: invalid number: expected a digit after '.'"},
    {"[1e+]", "line 1, column 5: invalid number: expected a digit in the exponent"},
    {"[-]", "line 1, column 3: invalid number: expected a digit"},
    {"[+1]", "line 1, column 2: expected a value"},
    {"[\"abc", "line 1, column 2: unterminated string"},
    {"[\"a\x01\"]", "line 1, column 4: control character in a string (it must be escaped)"},
    {"[\"a\nb\"]", "line 1, column 4: control character in a string (it must be escaped)"},
    {R"(["a\q"])", "line 1, column 4: invalid escape in a string"},
    {R"(["\u12G4"])", "line 1, column 3: invalid \\u escape: expected 4 hex digits"},
    {R"(["\ud800"])", "line 1, column 3: invalid \\u escape: unpaired UTF-16 surrogate"},
    {R"(["\udc00\ud800"])", "line 1, column 3: invalid \\u escape: unpaired UTF-16 surrogate"},
    {"[\"\xFF\"]", "line 1, column 3: invalid UTF-8 in a string"},
    {"[\"\xC0\xAF\"]", "line 1, column 3: invalid UTF-8 in a string"},
    {"[\"\xED\xA0\x80\"]", "line 1, column 3: invalid UTF-8 in a string"},
    {"{} {}", "line 1, column 4: unexpected text after the end of the JSON value"},
    {"[1]\n]", "line 2, column 1: unexpected text after the end of the JSON value"},
  };
  for (const auto& [text, message] : rows) {
    EXPECT_EQ(locate_error(text, ""), "invalid JSON at " + message) << text;
  }
}

TEST(JsonTextValidate, ValidEdgeCasesAccepted)
{
  const std::vector<std::string> texts{"0",
                                       "-0",
                                       "-0.5E+10",
                                       "1e-06",
                                       "\"\"",
                                       "true",
                                       "null",
                                       " \t\r\n[ ] ",
                                       R"(["\ud83d\ude00", "\u00e9", "\/", "\b\f\n\r\t"])",
                                       "[\"\xF0\x9F\x98\x80 \xC3\xA9\"]",
                                       "\xEF\xBB\xBF{}",
                                       R"({"":{"":[]}})"};
  for (const std::string& text : texts) {
    auto span = locate(text, "");
    EXPECT_TRUE(span) << text << ": " << span.error();
  }
}

TEST(JsonTextValidate, DeepNestingIsAnErrorNotACrash)
{
  const std::string deep(1000000, '[');
  EXPECT_EQ(locate_error(deep, ""),
            "invalid JSON at line 1, column 513: nested more than 512 levels deep");
  EXPECT_FALSE(append_to_string_array(deep, "", {"x"}));
  EXPECT_EQ(edit_refusal(deep),
            "invalid JSON at line 1, column 513: nested more than 512 levels deep");
  std::string objects;
  for (int i = 0; i < 100000; ++i) {
    objects += "{\"a\":";
  }
  EXPECT_EQ(locate_error(objects, "/a"),
            "invalid JSON at line 1, column 2561: nested more than 512 levels deep");
  // 512 levels are fine.
  const std::string ok = std::string(512, '[') + std::string(512, ']');
  EXPECT_TRUE(locate(ok, "/0/0/0"));
  const std::string array_of_strings = std::string(511, '[') + "[\"x\"]" + std::string(511, ']');
  std::string pointer;
  for (int i = 0; i < 511; ++i) {
    pointer += "/0";
  }
  auto deep_edit = append_to_string_array(array_of_strings, pointer, {"y"});
  ASSERT_TRUE(deep_edit) << deep_edit.error();
  EXPECT_EQ(*deep_edit, std::string(511, '[') + "[\"x\", \"y\"]" + std::string(511, ']'));
}

// ---- Refusals ----

TEST(JsonTextRefusal, NonFiniteNumbers)
{
  EXPECT_EQ(edit_refusal(R"({"a": NaN})"), "contains NaN, which is not JSON (line 1, column 7)");
  EXPECT_EQ(edit_refusal("{\n  \"a\": [1, Infinity]\n}"),
            "contains Infinity, which is not JSON (line 2, column 12)");
  EXPECT_EQ(edit_refusal(R"([-Infinity])"),
            "contains -Infinity, which is not JSON (line 1, column 2)");
  // They can still be located, for findings.
  auto span = locate(R"({"a": NaN})", "/a");
  ASSERT_TRUE(span);
  EXPECT_EQ(span->begin, 6u);
  EXPECT_EQ(span->end, 9u);
}

TEST(JsonTextRefusal, NumbersOutOfRange)
{
  EXPECT_EQ(edit_refusal(R"({"a": [1e400]})"),
            "contains 1e400, which is out of range for a double (line 1, column 8)");
  EXPECT_EQ(edit_refusal(R"([-1E+999])"),
            "contains -1E+999, which is out of range for a double (line 1, column 2)");
  // Underflow to zero and long integers are what Python and nlohmann read without complaint.
  EXPECT_EQ(edit_refusal(R"([1e-400, -0.0000001e-320, 123456789012345678901234567890])"),
            std::nullopt);
  EXPECT_EQ(edit_refusal(R"([1.7976931348623157e308, 0.001e311, 1e-06, 0])"), std::nullopt);
  EXPECT_EQ(edit_refusal(std::string(R"([0.)") + std::string(400, '9') + "]"), std::nullopt);
  EXPECT_EQ(edit_refusal(R"([1e-99999999999999999999999])"), std::nullopt);
  EXPECT_EQ(edit_refusal(R"([1e99999999999999999999999])"),
            "contains 1e99999999999999999999999, which is out of range for a double (line 1, "
            "column 2)");
  EXPECT_EQ(edit_refusal(R"([100000e304])"),
            "contains 100000e304, which is out of range for a double (line 1, column 2)");
}

TEST(JsonTextRefusal, DuplicateKeys)
{
  EXPECT_EQ(edit_refusal("{\n  \"quantization_config\": {\n    \"ignore\": [],\n    \"ignore\": "
                         "[\"x\"]\n  }\n}"),
            "duplicate key \"ignore\" in /quantization_config (line 4, column 5)");
  EXPECT_EQ(edit_refusal(R"({"a": 1, "a": 2})"),
            "duplicate key \"a\" in the root (line 1, column 10)");
  EXPECT_EQ(edit_refusal(R"({"ab": 1, "a\u0062": 2})"),
            "duplicate key \"ab\" in the root (line 1, column 11)");
  EXPECT_EQ(edit_refusal(R"([{"x":1},{"x":1,"x":2}])"),
            "duplicate key \"x\" in /1 (line 1, column 17)");
  EXPECT_EQ(edit_refusal(R"({"a/b": {"k": 1, "k": 2}})"),
            "duplicate key \"k\" in /a~1b (line 1, column 18)");
}

// check_json: a syntax error fails as locate() fails; valid JSON gives edit_refusal's answer.
TEST(JsonTextRefusal, CheckJsonSeparatesSyntaxFromRefusal)
{
  for (const std::string text : {R"({"a": [1, 2)", "{\n  \"a\": tru\n}", "[1,]", ""}) {
    const auto checked = check_json(text);
    ASSERT_FALSE(checked) << text;
    EXPECT_EQ(checked.error(), locate(text, "").error()) << text;
  }
  for (const std::string text :
       {R"({"a": NaN})", R"({"a": 1, "a": 2})", R"({"a": [1e400]})", R"({"a": [1, 2]})", "[]"}) {
    const auto checked = check_json(text);
    ASSERT_TRUE(checked) << text;
    EXPECT_EQ(*checked, edit_refusal(text)) << text;
  }
  EXPECT_EQ(check_json(R"({"a": 1, "a": 2})").value(),
            "duplicate key \"a\" in the root (line 1, column 10)");
  EXPECT_EQ(check_json(R"({"a": [1, 2]})").value(), std::nullopt);
}

// The value count is bounded before the scan (2^22 values), skipping strings: commas inside a
// string count for nothing, however the strings before it end (an escaped quote, an escaped
// backslash before the closing quote). Counting them would refuse these texts.
TEST(JsonTextValidate, ValueBoundSkipsStringsWhateverTheirEscapes)
{
  const std::string commas((size_t{1} << 22) + 1, ',');
  for (const std::string before : {R"("a\\")", R"("a\"")", R"("\\\"\\")", R"("")"}) {
    const std::string text = "[" + before + ", \"" + commas + "\"]";
    const auto checked = check_json(text);
    ASSERT_TRUE(checked) << before << ": " << checked.error();
    EXPECT_EQ(*checked, std::nullopt) << before;
  }
  // Outside a string the same commas are refused.
  const auto refused = check_json("[1" + commas + "1]");
  ASSERT_FALSE(refused);
  EXPECT_NE(refused.error().find("more than 4194304 JSON values"), std::string::npos)
    << refused.error();
}

// Strings are checked eight bytes at a time while every byte is plain ASCII: a byte that needs a
// look is found wherever it sits in those eight, and beside every other kind of byte.
TEST(JsonTextValidate, EveryStringByteIsCheckedWhereverItSits)
{
  const std::vector<std::pair<std::string, std::string>> bytes{
    {"\x01", "control character in a string (it must be escaped)"},
    {"\x1F", "control character in a string (it must be escaped)"},
    {"\xFF", "invalid UTF-8 in a string"},
    {"\x80", "invalid UTF-8 in a string"},
    {"\xC3\xA9", ""}, // valid UTF-8
    {"\x7F", ""},     // DEL needs no escape
    {"\\\"", ""},     // an escaped quote
    {"\\\\", ""},     // an escaped backslash
    {" ", ""},
  };
  for (size_t at = 0; at < 20; ++at) {
    for (const auto& [byte, message] : bytes) {
      const std::string text =
        "[\"" + std::string(at, 'a') + byte + std::string(20 - at, 'b') + "\", 1]";
      const auto checked = check_json(text);
      if (message.empty()) {
        EXPECT_TRUE(checked) << at << " " << checked.error();
      } else {
        ASSERT_FALSE(checked) << at << " " << byte;
        EXPECT_EQ(checked.error(),
                  "invalid JSON at line 1, column " + std::to_string(at + 3) + ": " + message)
          << at;
      }
    }
  }
  // The closing quote ends the string wherever it sits: "x" then a second element.
  for (size_t at = 0; at < 20; ++at) {
    const std::string text = "[\"" + std::string(at, 'a') + "\"" + std::string(20, 'b') + "]";
    ASSERT_FALSE(check_json(text)) << at;
    EXPECT_EQ(check_json(text).error(),
              "invalid JSON at line 1, column " + std::to_string(at + 4) + ": expected ',' or ']'");
  }
}

TEST(JsonTextRefusal, FirstProblemInTheDocumentIsReported)
{
  EXPECT_EQ(edit_refusal(R"({"x": NaN, "y": {"a": 1, "a": 2}})"),
            "contains NaN, which is not JSON (line 1, column 7)");
  EXPECT_EQ(edit_refusal(R"({"y": {"a": 1, "a": 2}, "x": NaN})"),
            "duplicate key \"a\" in /y (line 1, column 16)");
}

TEST(JsonTextRefusal, FineDocumentsAndInvalidOnes)
{
  EXPECT_EQ(edit_refusal(R"({"a": {"k": 1}, "b": {"k": 1}, "c": [1e-06, "NaN"]})"), std::nullopt);
  EXPECT_EQ(edit_refusal(rich_config("\t", "\r\n", false, {})), std::nullopt);
  EXPECT_EQ(edit_refusal("{\"a\": nan}"), "invalid JSON at line 1, column 7: expected a value");
}

TEST(JsonTextRemove, RemovesElementsKeepingTheLayout)
{
  const std::string multi =
    "{\n  \"ignore\": [\n    \"a\",\n    \"b\",\n    \"c\"\n  ],\n  \"x\": 1e-06\n}\n";
  EXPECT_EQ(*qcheck::remove_from_string_array(multi, "/ignore", {"b"}),
            "{\n  \"ignore\": [\n    \"a\",\n    \"c\"\n  ],\n  \"x\": 1e-06\n}\n");
  EXPECT_EQ(*qcheck::remove_from_string_array(multi, "/ignore", {"a"}),
            "{\n  \"ignore\": [\n    \"b\",\n    \"c\"\n  ],\n  \"x\": 1e-06\n}\n");
  EXPECT_EQ(*qcheck::remove_from_string_array(multi, "/ignore", {"c"}),
            "{\n  \"ignore\": [\n    \"a\",\n    \"b\"\n  ],\n  \"x\": 1e-06\n}\n");
  EXPECT_EQ(*qcheck::remove_from_string_array(multi, "/ignore", {"a", "b", "c"}),
            "{\n  \"ignore\": [],\n  \"x\": 1e-06\n}\n");
  EXPECT_EQ(*qcheck::remove_from_string_array(multi, "/ignore", {"zzz"}), multi);
  const std::string inline_list = R"({"ignore": ["a", "b", "c"]})";
  EXPECT_EQ(*qcheck::remove_from_string_array(inline_list, "/ignore", {"b"}),
            R"({"ignore": ["a", "c"]})");
  const std::string crlf = "{\r\n\t\"ignore\": [\r\n\t\t\"a\",\r\n\t\t\"b\"\r\n\t]\r\n}";
  EXPECT_EQ(*qcheck::remove_from_string_array(crlf, "/ignore", {"a"}),
            "{\r\n\t\"ignore\": [\r\n\t\t\"b\"\r\n\t]\r\n}");
  EXPECT_FALSE(qcheck::remove_from_string_array(inline_list, "/nope", {"a"}));
}

// An element written with escapes is removed by its value (a compressed-tensors "re:" entry
// holds "\\."); each kept element keeps the separator run it had, not the list's first one.
TEST(JsonTextRemove, EscapedElementsAndEachElementsOwnSeparator)
{
  const std::string escaped =
    R"({"ignore": ["lm_head", "re:model\\.layers\\.1\\..*", "a\u002eb", "re:x\\.y"]})";
  EXPECT_EQ(*qcheck::remove_from_string_array(escaped, "/ignore", {"re:model\\.layers\\.1\\..*"}),
            R"({"ignore": ["lm_head", "a\u002eb", "re:x\\.y"]})");
  EXPECT_EQ(*qcheck::remove_from_string_array(escaped, "/ignore", {"a.b", "lm_head"}),
            R"({"ignore": ["re:model\\.layers\\.1\\..*", "re:x\\.y"]})");
  // The raw text of an escaped element is not its value.
  EXPECT_EQ(*qcheck::remove_from_string_array(escaped, "/ignore", {"a\\u002eb"}), escaped);
  const std::string rows = "{\"ignore\": [\n  \"a\", \"b\",\n  \"c\", \"d\",\n  \"e\"\n]}";
  EXPECT_EQ(*qcheck::remove_from_string_array(rows, "/ignore", {"b"}),
            "{\"ignore\": [\n  \"a\",\n  \"c\", \"d\",\n  \"e\"\n]}");
  EXPECT_EQ(*qcheck::remove_from_string_array(rows, "/ignore", {"a", "d"}),
            "{\"ignore\": [\n  \"b\",\n  \"c\",\n  \"e\"\n]}");
}

// Elements are found in one scan, however many commas their strings hold, and a long list
// loses exactly the entries named, wherever they are; the others keep their order.
TEST(JsonTextRemove, CommasInsideStringsAndLongLists)
{
  const std::string commas = R"({"ignore": ["a,b", "c", "d,e,f", ",", "c"], "n": [1, 2]})";
  EXPECT_EQ(*qcheck::remove_from_string_array(commas, "/ignore", {"c"}),
            R"({"ignore": ["a,b", "d,e,f", ","], "n": [1, 2]})");
  EXPECT_EQ(*qcheck::remove_from_string_array(commas, "/ignore", {",", "a,b"}),
            R"({"ignore": ["c", "d,e,f", "c"], "n": [1, 2]})");
  // Nested values and escaped quotes hold commas too; non-string elements are never removed.
  const std::string mixed = R"({"ignore": ["a", [1, [2, 3]], {"k": "v,w]"}, "q\",r", "b", 3]})";
  EXPECT_EQ(*qcheck::remove_from_string_array(mixed, "/ignore", {"b", "3", "a"}),
            R"({"ignore": [[1, [2, 3]], {"k": "v,w]"}, "q\",r", 3]})");
  EXPECT_EQ(*qcheck::remove_from_string_array(R"({"ignore": []})", "/ignore", {"a"}),
            R"({"ignore": []})");
  const auto layout = [](const std::vector<int>& layers) {
    std::string text = "{\n  \"ignore\": [";
    for (size_t k = 0; k < layers.size(); ++k) {
      text += fmt::format("{}\n    \"model.layers.{}.mlp\"", k == 0 ? "" : ",", layers[k]);
    }
    return text + "\n  ]\n}\n";
  };
  std::vector<int> all, kept;
  for (int i = 0; i < 20000; ++i) {
    all.push_back(i);
    if (i != 0 && i != 7777 && i != 19999) {
      kept.push_back(i);
    }
  }
  const std::string list = layout(all);
  const std::string expected = layout(kept);
  const auto out = qcheck::remove_from_string_array(
    list, "/ignore", {"model.layers.0.mlp", "model.layers.7777.mlp", "model.layers.19999.mlp"});
  ASSERT_TRUE(out) << out.error();
  EXPECT_EQ(*out, expected);
}

// Many pointers into one large list or object: the batch indexes children once, and answers as
// a walk would (the last of duplicated keys, escaped keys, missing elements).
TEST(JsonTextLocate, ManyPointersIntoLargeArraysAndObjects)
{
  std::string text = "{\"list\": [";
  for (int i = 0; i < 100; ++i) {
    text += (i ? ", " : "") + std::string("\"e") + std::to_string(i) + "\"";
  }
  text += "], \"map\": {";
  for (int i = 0; i < 50; ++i) {
    text += "\"k" + std::to_string(i) + "\": " + std::to_string(1000 + i) + ", ";
  }
  text += "\"k7\": 7777, \"a\\u0062\": 4242}}";
  const auto found = locate_all(text, {"/list/0", "/list/57", "/list/99", "/list/100", "/map/k3",
                                       "/map/k7", "/map/ab", "/map/zz"});
  ASSERT_EQ(found.size(), 8u);
  const auto at = [&](size_t i) {
    return found[i] ? std::string(text.substr(found[i]->begin, found[i]->end - found[i]->begin))
                    : "error: " + found[i].error();
  };
  EXPECT_EQ(at(0), "\"e0\"");
  EXPECT_EQ(at(1), "\"e57\"");
  EXPECT_EQ(at(2), "\"e99\"");
  EXPECT_EQ(at(3), "error: no value at /list/100: /list has no element \"100\" (it has 100)");
  EXPECT_EQ(at(4), "1003");
  EXPECT_EQ(at(5), "7777"); // the last of a duplicated key
  EXPECT_EQ(at(6), "4242");
  EXPECT_EQ(at(7), "error: no value at /map/zz: /map has no key \"zz\"");
}

// find_string_special stops at the first '"', '\\' or control byte whatever its position
// (32-byte steps where the processor has AVX2, 16-byte ones, the bytes after them), returns the
// end when there is none and reads nothing past it, and flags a byte of 0x80 or above before the
// result.
TEST(JsonTextStrings, SpecialByteFoundAtEveryPosition)
{
  for (size_t length = 0; length < 100; ++length) {
    for (size_t at = 0; at <= length; ++at) {
      for (const char special : {'"', '\\', '\0', '\n', '\x1f'}) {
        std::string text(length, 'a');
        for (size_t i = 0; i < length; ++i) {
          text[i] = static_cast<char>(' ' + (i * 13) % 90); // printable, never '"' nor '\\'
          if (text[i] == '"' || text[i] == '\\') {
            text[i] = 'q';
          }
        }
        if (at < length) {
          text[at] = special;
        }
        // Exactly the range: a sanitizer catches a read past it.
        const auto buffer = std::make_unique<char[]>(length);
        std::copy(text.begin(), text.end(), buffer.get());
        const char* begin = buffer.get();
        unsigned high = 0;
        ASSERT_EQ(find_string_special(begin, begin + length, high) - begin,
                  static_cast<std::ptrdiff_t>(at))
          << length << " " << at << " " << static_cast<int>(special);
        EXPECT_EQ(high, 0u);
        ASSERT_EQ(find_string_special(begin, begin + length) - begin,
                  static_cast<std::ptrdiff_t>(at));
      }
    }
  }
  // A byte of 0x80 or above before the special one is always flagged.
  for (size_t length = 1; length < 100; ++length) {
    for (size_t high_at = 0; high_at + 1 < length; ++high_at) {
      std::string text(length, 'a');
      text[high_at] = '\xc3';
      text[length - 1] = '"';
      unsigned high = 0;
      ASSERT_EQ(find_string_special(text.data(), text.data() + length, high) - text.data(),
                static_cast<std::ptrdiff_t>(length - 1));
      EXPECT_NE(high, 0u) << length << " " << high_at;
    }
  }
}

#if defined(QCHECK_AVX2_DISPATCH)
// The three CPUID queries behind the AVX2 dispatch answer as GCC's probe of every feature does
// (linked into this test only).
TEST(JsonTextStrings, Avx2DetectionAgreesWithTheCompilersProbe)
{
  __builtin_cpu_init();
  EXPECT_EQ(detail::cpu_runs_avx2(), __builtin_cpu_supports("avx2") != 0);
  EXPECT_EQ(detail::k_have_avx2, detail::cpu_runs_avx2());
}
#endif

// skip_json_space stops at the first byte that is not JSON whitespace, whatever the length of
// the run (16-byte steps and the bytes after them), and never reads past the end of its range.
TEST(JsonTextSpace, SkipStopsAtTheFirstOtherByte)
{
  const std::string spaces = " \t\n\r";
  for (size_t run = 0; run < 40; ++run) {
    for (const char after : {'"', '{', 'x', '\0', '\x0b', '\x1f', '\x85', '\xa0'}) {
      std::string text;
      for (size_t i = 0; i < run; ++i) {
        text += spaces[(i * 7 + run) % spaces.size()];
      }
      const std::string whole = text + after + "   ";
      const char* begin = whole.data();
      EXPECT_EQ(skip_json_space(begin, begin + whole.size()) - begin,
                static_cast<std::ptrdiff_t>(run))
        << run << " " << static_cast<int>(after);
      // A range that ends inside the run: the end, and nothing after it is read.
      const auto cut = std::make_unique<char[]>(run);
      std::copy(text.begin(), text.end(), cut.get());
      EXPECT_EQ(skip_json_space(cut.get(), cut.get() + run), cut.get() + run) << run;
    }
  }
}

// A string token is valid JSON whatever the bytes: well-formed UTF-8 passes as is (the shortest
// forms of 2, 3 and 4 bytes), and each byte of an ill-formed sequence becomes \ufffd: a stray
// continuation byte, an overlong form, a UTF-16 surrogate, a code point past U+10FFFF, a lead
// byte cut short by the string's end or by an ASCII byte.
TEST(JsonTextString, BytesThatAreNotUtf8BecomeReplacementCharacters)
{
  const auto token = [](std::string_view s) {
    std::string out;
    append_json_string(out, s);
    return out;
  };
  EXPECT_EQ(token("caf\xc3\xa9 \xe2\x82\xac \xf0\x9f\x98\x80"),
            "\"caf\xc3\xa9 \xe2\x82\xac \xf0\x9f\x98\x80\"");
  EXPECT_EQ(token("\xed\x9f\xbf\xee\x80\x80\xf4\x8f\xbf\xbf"),
            "\"\xed\x9f\xbf\xee\x80\x80\xf4\x8f\xbf\xbf\""); // U+D7FF, U+E000, U+10FFFF
  EXPECT_EQ(token("a\x80z"), "\"a\\ufffdz\"");
  EXPECT_EQ(token("\xc0\xaf"), "\"\\ufffd\\ufffd\"");
  EXPECT_EQ(token("\xe0\x80\xaf"), "\"\\ufffd\\ufffd\\ufffd\"");
  EXPECT_EQ(token("\xed\xa0\x80"), "\"\\ufffd\\ufffd\\ufffd\"");
  EXPECT_EQ(token("\xf4\x90\x80\x80"), "\"\\ufffd\\ufffd\\ufffd\\ufffd\"");
  EXPECT_EQ(token("\xf5"), "\"\\ufffd\"");
  EXPECT_EQ(token("x\xe2\x82"), "\"x\\ufffd\\ufffd\"");
  EXPECT_EQ(token("\xe2\x82.\"q\n"), "\"\\ufffd\\ufffd.\\\"q\\n\"");
  for (const std::string_view s : {"a\x80z", "\xed\xa0\x80", "x\xe2\x82", "\xff\xfe\x01"}) {
    EXPECT_FALSE(Json::parse(token(s), nullptr, false).is_discarded()) << token(s);
  }
}

TEST(JsonTextAppend, StyleFoundAfterTheIndentationUnit)
{
  // The unit is known at the first member; the colon style only at the second (the first's
  // colon is on a line of its own), and a member added to an empty object takes it.
  expect_append("{\n  \"a\"\n    : 1,\n  \"b\" : 2,\n  \"q\" : {}\n}", "/q/ignore", {"x"},
                "{\n  \"a\"\n    : 1,\n  \"b\" : 2,\n  \"q\" : {\n    \"ignore\" : [\n      "
                "\"x\"\n    ]\n  }\n}");
}
