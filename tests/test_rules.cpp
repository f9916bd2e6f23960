// The rule registry: one entry per RuleId in enum order, unique codes and names, docs in sync.
#include <fstream>
#include <gtest/gtest.h>
#include <nlohmann/json.hpp>
#include <set>

#include "qcheck/rules.hpp"

using namespace qcheck;

TEST(Rules, RegistryMatchesTheEnumAndIsUnique)
{
  std::set<std::string_view> codes, names;
  size_t index = 0;
  for (const Rule& r : all_rules()) {
    EXPECT_EQ(static_cast<size_t>(r.id), index++) << r.code;
    EXPECT_EQ(&rule(r.id), &r);
    EXPECT_TRUE(codes.insert(r.code).second) << r.code;
    EXPECT_TRUE(names.insert(r.name).second) << r.name;
    EXPECT_FALSE(r.summary.empty()) << r.code;
    EXPECT_GT(r.explanation.size(), r.summary.size()) << r.code;
    for (char c : r.name) {
      EXPECT_TRUE((c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') || c == '-') << r.name;
    }
  }
}

TEST(Rules, LookupByCodeOrNameAndSuggestion)
{
  EXPECT_EQ(find_rule("qc101"), &rule(RuleId::undeclared_unquantized));
  EXPECT_EQ(find_rule("undeclared-unquantized-module"), &rule(RuleId::undeclared_unquantized));
  EXPECT_EQ(find_rule("nope"), nullptr);
  EXPECT_EQ(suggest_rule("undeclared-unquantised-module"), "undeclared-unquantized-module");
  EXPECT_EQ(suggest_rule("zzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzz"), "");
}

TEST(Rules, JsonListsEveryRule)
{
  const auto j = nlohmann::json::parse(render_rules_json());
  ASSERT_EQ(j.size(), all_rules().size());
  EXPECT_EQ(j[0]["code"], "QC001");
}

TEST(Rules, DocsAreGeneratedFromTheRegistry)
{
  std::ifstream in(std::string(QCHECK_SOURCE_DIR) + "/docs/rules.md");
  const std::string docs(std::istreambuf_iterator<char>(in), {});
  EXPECT_EQ(docs, render_rules_markdown())
    << "docs/rules.md is stale: run ./build/qcheck rules --format markdown > docs/rules.md";
}
