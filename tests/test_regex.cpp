// Tests for the linear-time regex. Every expected boolean below was checked with CPython 3.11:
// re.match / re.fullmatch / re.search with the re.ASCII flag. Text is UTF-8 and is matched code
// point by code point, but classes (\d \w \s), \b and (?i) are ASCII-only, so on non-ASCII text
// the results are those of re.ASCII; rows where Python's default flags differ say so.
#include <gtest/gtest.h>

#include <string>
#include <string_view>
#include <vector>

#include "builder.hpp"
#include "qcheck/regex.hpp"

using namespace qcheck;

namespace {

struct Case
{
  const char* pattern;
  const char* text;
  bool match;
  bool fullmatch;
  bool search;
};

void
check(const std::vector<Case>& cases)
{
  for (const Case& c : cases) {
    auto re = Regex::compile(c.pattern);
    ASSERT_TRUE(re) << c.pattern << ": " << re.error();
    EXPECT_EQ(re->match(c.text), c.match) << "match '" << c.pattern << "' on '" << c.text << "'";
    EXPECT_EQ(re->fullmatch(c.text), c.fullmatch)
      << "fullmatch '" << c.pattern << "' on '" << c.text << "'";
    EXPECT_EQ(re->search(c.text), c.search) << "search '" << c.pattern << "' on '" << c.text << "'";
  }
}

std::string
error_of(std::string_view pattern)
{
  auto re = Regex::compile(pattern);
  return re ? "<compiled>" : re.error();
}

} // namespace

// Columns: pattern, text, match, fullmatch, search.

TEST(RegexLiterals, MatchFullmatchAndSearchDiffer)
{
  check({
    {"mtp", "model.mtp.fc", false, false, true},
    {"mtp", "mtp", true, true, true},
    {"mtp", "mtp.fc", true, false, true},
    {"", "", true, true, true},
    {"", "abc", true, false, true},
    {"a.b", "a.b", true, true, true},
    {R"(a\.b)", "axb", false, false, false},
    {R"(a\.b)", "a.b", true, true, true},
    {"lm_head", "model.lm_head", false, false, true},
  });
}

TEST(RegexDot, AnyCharacterButNewline)
{
  check({
    {".", "\n", false, false, false},
    {"a.c", "abc", true, true, true},
    {".*", "ab\ncd", true, false, true},
    {"a.b", "aéb", true, true, true},
    {"...", "aé\t", true, true, true},
  });
}

TEST(RegexAnchors, StartEndAndFinalNewline)
{
  check({
    {"^a", "ba", false, false, false},
    {"a$", "a\n", true, false, true},
    {"a$", "a\n\n", false, false, false},
    {R"(a\Z)", "a\n", false, false, false},
    {R"(a\Z)", "a", true, true, true},
    {R"(\Aab)", "xab", false, false, false},
    {"$", "", true, true, true},
    {"^$", "\n", true, false, true},
    {"x^", "x", false, false, false},
    {"^", "abc", true, false, true},
    {"mlp$", "mlp\n", true, false, true},
    {"b$", "ab\nb", false, false, true},
  });
}

TEST(RegexWordBoundary, AsciiWordCharacters)
{
  check({
    {R"(\bmlp\b)", "model.mlp.up", false, false, true},
    {R"(\bmlp\b)", "model.mlps", false, false, false},
    {R"(\b)", "", false, false, false},
    {R"(\B)", "", false, false, false},
    {R"(\Bp)", "mlp", false, false, true},
    {R"(\b_proj)", "q_proj", false, false, false},
    {R"(\b\d+\b)", "layers.12.mlp", false, false, true},
    // Python default flags: false false false
    {R"(\bx)", "éx", false, false, true},
  });
}

TEST(RegexCaseInsensitive, LeadingFlagFoldsAscii)
{
  check({
    {"(?i)MLP", "model.mlp", false, false, true},
    {"MLP", "model.mlp", false, false, false},
    {"(?i)[a-c]+", "ABC", true, true, true},
    {"(?i)[^a]", "A", false, false, false},
    {"(?i)(?i)Gate", "GATE", true, true, true},
    {"(?#note)(?i)gate", "GATE", true, true, true},
    {"(?i)[Z-a]", "z", true, true, true},
    {R"((?i)\w+)", "AbC_1", true, true, true},
    // Python default flags: true true true
    {"(?i)é", "É", false, false, false},
  });
}

TEST(RegexEscapes, CategoriesAndCharacterEscapes)
{
  check({
    {R"(\d+)", "123", true, true, true},
    {R"(\D)", "1", false, false, false},
    {R"(\w+)", "a_1", true, true, true},
    {R"(\W)", ".", true, true, true},
    {R"(\s)", "\t", true, true, true},
    {R"(\S)", " ", false, false, false},
    {R"(\x41)", "A", true, true, true},
    {R"(\t)", "\t", true, true, true},
    {R"(\.)", ".", true, true, true},
    {R"(\-)", "-", true, true, true},
    {R"(\101)", "A", true, true, true},
    {R"(\u00e9)", "é", true, true, true},
    {R"(\n)", "\n", true, true, true},
    // Python default flags: true true true
    {R"(\d)", "٣", false, false, false},
  });
}

TEST(RegexClasses, RangesNegationAndEscapes)
{
  check({
    {R"([\w.]+)", "model.layers.0", true, true, true},
    {R"([\w.]+)", "model/layers", true, false, true},
    {"[a-z_]+", "gate_proj", true, true, true},
    {"[^0-9]", "5", false, false, false},
    {"[]a]", "]", true, true, true},
    {"[a-]", "-", true, true, true},
    {"[-a]", "-", true, true, true},
    {R"([\d-]+)", "1-2", true, true, true},
    {"[é-ê]", "ê", true, true, true},
    {"[^é]", "é", false, false, false},
    {R"([\]])", "]", true, true, true},
    {"[.]", "a", false, false, false},
    {R"([\b])", "\b", true, true, true},
    {"[^\n]", "\n", false, false, false},
    {"[[]", "[", true, true, true},
    {R"([\x41-\x43]+)", "ABC", true, true, true},
  });
}

TEST(RegexAlternation, LowestPrecedenceAndAllBranchesTried)
{
  check({
    {"a|b", "b", true, true, true},
    {"ab|cd", "abd", true, false, true},
    {"^a|b$", "xb", false, false, true},
    {R"(model\.(q|k|v)_proj)", "model.k_proj", true, true, true},
    {"a|ab", "ab", true, true, true},
    {"(|a)b", "ab", true, true, true},
    {"a|", "", true, true, true},
    {"x(a|b)*y", "xababy", true, true, true},
    {"gate|up_proj", "up_proj", true, true, true},
  });
}

TEST(RegexGroups, CapturingNamedNonCapturingAndComments)
{
  check({
    {"((a|b)c)+", "acbc", true, true, true},
    {"(?:ab)+", "abab", true, true, true},
    {R"((?P<layer>\d+)\.mlp)", "12.mlp", true, true, true},
    {"(?#comment)abc", "abc", true, true, true},
    {"a(?#x)*", "aaa", true, true, true},
    {"(((a)))", "a", true, true, true},
    {"(a*)*", "aaa", true, true, true},
    {"(?:)*", "a", true, false, true},
    {"(^)*a", "a", true, true, true},
    {R"((?:\b)*x)", "x", true, true, true},
  });
}

TEST(RegexRepetition, QuantifiersAndCountedBounds)
{
  check({
    {"a{3}", "aa", false, false, false},      {"a{3}", "aaa", true, true, true},
    {"a{3}", "aaaa", true, false, true},      {"a{2,3}", "aaaa", true, false, true},
    {"a{,2}", "", true, true, true},          {"a{2,}", "aaaaa", true, true, true},
    {"a{,}", "aaa", true, true, true},        {"a{0}", "", true, true, true},
    {"a{2,3}?", "aaa", true, true, true},     {"a*?", "aaa", true, true, true},
    {"a+?", "aa", true, true, true},          {"a??", "a", true, true, true},
    {"a{", "a{", true, true, true},           {"a{1,x}", "a{1,x}", true, true, true},
    {"a{}", "a{}", true, true, true},         {"{", "{", true, true, true},
    {"x{2}y", "xxy", true, true, true},       {"(?:ab){2}", "abab", true, true, true},
    {"a{1,3}b", "aaaab", false, false, true}, {"a+", "", false, false, false},
  });
}

TEST(RegexRealConfigs, IgnoreEntriesAndDynamicKeys)
{
  // compressed-tensors `re:` entries (prefix stripped), GPTQModel `dynamic` keys (`+:`/`-:`
  // stripped), AutoRound-style layer names.
  check({
    {R"(.*mlp\.gate$)", "model.layers.3.mlp.gate", true, true, true},
    {R"(.*mlp\.gate$)", "model.layers.3.mlp.gate_proj", false, false, false},
    {R"(model\.layers\.(4[5-9]|5\d)\..*)", "model.layers.47.self_attn.q_proj", true, true, true},
    {R"(model\.layers\.(4[5-9]|5\d)\..*)", "model.layers.44.mlp", false, false, false},
    {R"(model\.layers\.(4[5-9]|5\d)\..*)", "model.layers.59.mlp", true, true, true},
    {R"(model\.layers\.(4[5-9]|5\d)\..*)", "model.layers.60.mlp", false, false, false},
    {".*mtp.*", "model.mtp.fc", true, true, true},
    {R"(.*\.1[0-5]\..*)", "model.layers.12.mlp", true, true, true},
    {R"(.*\.1[0-5]\..*)", "model.layers.16.mlp", false, false, false},
    {R"(.*\.1[0-5]\..*)", "model.layers.112.mlp", false, false, false},
    {R"(.*\.(gate|up|down)_proj)", "model.layers.0.mlp.experts.7.down_proj", true, true, true},
    {R"(.*self_attn\.(q|k|v|o)_proj$)", "model.layers.0.self_attn.o_proj", true, true, true},
    {R"(model\.layers\.\d+\.mlp\.experts\.\d+\..*)", "model.layers.3.mlp.experts.127.up_proj", true,
     true, true},
    {R"(.*\.mlp\.gate$)", "model.layers.3.mlp.shared_expert_gate", false, false, false},
    {"(?i).*LM_HEAD", "lm_head", true, true, true},
  });
}

TEST(RegexNonAscii, CodePointsAndAsciiClasses)
{
  check({
    {"a.b", "aéb", true, true, true},
    {"[^x]", "é", true, true, true},
    // Python default flags: true true true
    {R"(\w)", "é", false, false, false},
    // Python default flags: false false false
    {R"(\W)", "é", true, true, true},
    {R"(\xe9)", "é", true, true, true},
    {"é+", "éé", true, true, true},
    {".", "中", true, true, true},
    {R"([\u4e00-\u9fff]+)", "中文", true, true, true},
  });
}

TEST(RegexNonAscii, InvalidUtf8)
{
  // Each invalid byte of the text is one character that only `.`, negated classes and negated
  // categories match.
  const std::string bad = "a\xff"
                          "b";
  auto dot = Regex::compile("a.b");
  ASSERT_TRUE(dot);
  EXPECT_TRUE(dot->fullmatch(bad));
  auto not_x = Regex::compile("a[^x]b");
  ASSERT_TRUE(not_x);
  EXPECT_TRUE(not_x->fullmatch(bad));
  auto latin = Regex::compile(R"(a\xffb)"); // U+00FF, encoded as two bytes
  ASSERT_TRUE(latin);
  EXPECT_FALSE(latin->fullmatch(bad));
  EXPECT_TRUE(latin->fullmatch("a\u00ffb"));
  EXPECT_EQ(error_of("a\xff"), "syntax error at offset 1: invalid UTF-8");
}

TEST(RegexErrors, RefusedConstructsNameThemselvesAndTheirOffset)
{
  const std::vector<std::pair<std::string, std::string>> cases = {
    {"(?=a)", "unsupported construct at offset 0: look-ahead '(?='"},
    {"a(?!b)", "unsupported construct at offset 1: negative look-ahead '(?!'"},
    {"(?<=a)b", "unsupported construct at offset 0: look-behind '(?<='"},
    {"(?<!a)b", "unsupported construct at offset 0: negative look-behind '(?<!'"},
    {R"((a)\1)", R"(unsupported construct at offset 3: back-reference '\1')"},
    {R"((a)(b)\2c)", R"(unsupported construct at offset 6: back-reference '\2')"},
    {"(?P<x>a)(?P=x)", "unsupported construct at offset 8: named back-reference '(?P='"},
    {"(?(1)a|b)", "unsupported construct at offset 0: conditional '(?('"},
    {"(?>a)", "unsupported construct at offset 0: atomic group '(?>'"},
    {"(?s).*", "unsupported construct at offset 0: inline flag '(?s)'; only a leading '(?i)' is "
               "supported"},
    {"(?is)a", "unsupported construct at offset 0: inline flag '(?is)'; only a leading '(?i)' is "
               "supported"},
    {"x(?i:a)", "unsupported construct at offset 1: scoped inline flags '(?i:'"},
    {"(?-i:a)", "unsupported construct at offset 0: scoped inline flags '(?-i:'"},
    {"a*+", "unsupported construct at offset 1: possessive quantifier '*+'"},
    {"a++", "unsupported construct at offset 1: possessive quantifier '++'"},
    {"a?+", "unsupported construct at offset 1: possessive quantifier '?+'"},
    {"a{1,2}+", "unsupported construct at offset 1: possessive quantifier '{1,2}+'"},
    {R"(\N{DIGIT ONE})", R"(unsupported construct at offset 0: named Unicode escape '\N')"},
  };
  for (const auto& [pattern, message] : cases) {
    EXPECT_EQ(error_of(pattern), message) << pattern;
  }
}

TEST(RegexErrors, SyntaxErrorsAsPythonReportsThem)
{
  const std::vector<std::pair<std::string, std::string>> cases = {
    {"(a", "syntax error at offset 0: missing ), unterminated subpattern"},
    {"a)", "syntax error at offset 1: unbalanced parenthesis"},
    {"*a", "syntax error at offset 0: nothing to repeat"},
    {"^*", "syntax error at offset 1: nothing to repeat"},
    {"a|+", "syntax error at offset 2: nothing to repeat"},
    {"a**", "syntax error at offset 2: multiple repeat"},
    {"a{2}{3}", "syntax error at offset 4: multiple repeat"},
    {"[z-a]", "syntax error at offset 1: bad character range z-a"},
    {R"([\d-z])", R"(syntax error at offset 1: bad character range \d-z)"},
    {"[a", "syntax error at offset 0: unterminated character set"},
    {"a\\", "syntax error at offset 1: bad escape (end of pattern)"},
    {R"(\q)", R"(syntax error at offset 0: bad escape \q)"},
    {R"(\x4)", R"(syntax error at offset 0: incomplete escape \x4)"},
    {R"(\400)", R"(syntax error at offset 0: octal escape value \400 outside of range 0-0o377)"},
    {"a{3,2}", "syntax error at offset 1: min repeat greater than max repeat"},
    {"a{4294967295}", "syntax error at offset 1: the repetition number is too large"},
    {"a(?i)", "syntax error at offset 1: global flags not at the start of the expression"},
    {"(?P<1>a)", "syntax error at offset 4: bad character in group name '1'"},
    {"(?P<x>a)(?P<x>b)", "syntax error at offset 12: redefinition of group name 'x'"},
    {"(?<n>a)", "syntax error at offset 1: unknown extension ?<n"},
    {"(?", "syntax error at offset 2: unexpected end of pattern"},
    {"(?#abc", "syntax error at offset 0: missing ), unterminated comment"},
    {"[z-\n]", "syntax error at offset 1: bad character range z-\\n"},
  };
  for (const auto& [pattern, message] : cases) {
    const std::string error = error_of(pattern);
    EXPECT_EQ(error, message) << pattern;
    EXPECT_EQ(error.find('\n'), std::string::npos) << "not one line: " << error;
  }
}

TEST(RegexErrors, ProgramSizeAndNestingAreCapped)
{
  const std::string too_large =
    "pattern is too large after expanding repetitions (more than 20000 NFA instructions)";
  EXPECT_EQ(error_of("a{20001}"), too_large);
  EXPECT_EQ(error_of("(?:a{1000}){1000}"), too_large);
  EXPECT_EQ(error_of("((a{10}){10}){10}.{19000}"), too_large);
  EXPECT_TRUE(Regex::compile("a{19999}")); // plus the match instruction: exactly the cap
  // Repeating an empty group costs nothing, however large the count.
  auto empty = Regex::compile("(?:){4294967294}x");
  ASSERT_TRUE(empty);
  EXPECT_TRUE(empty->fullmatch("x"));

  const std::string deep_ok = std::string(200, '(') + "a" + std::string(200, ')');
  auto ok = Regex::compile(deep_ok);
  ASSERT_TRUE(ok);
  EXPECT_TRUE(ok->fullmatch("a"));
  const std::string too_deep = std::string(201, '(') + "a" + std::string(201, ')');
  EXPECT_EQ(error_of(too_deep),
            "syntax error at offset 200: groups are nested more than 200 levels deep");
}

TEST(RegexPerformance, PathologicalPatternsRunInLinearTime)
{
  // Exponential for a backtracking engine; one pass over the text here. No timing assertion:
  // the test simply would not finish with backtracking.
  const std::string as(100000, 'a');
  const std::string xs(100000, 'x');
  for (const auto& [pattern, text] : {std::pair<const char*, const std::string*>{"(a*)*b", &as},
                                      {"(a|a)*c", &as},
                                      {"(x+x+)+y", &xs}}) {
    auto re = Regex::compile(pattern);
    ASSERT_TRUE(re) << re.error();
    EXPECT_FALSE(re->match(*text)) << pattern;
    EXPECT_FALSE(re->fullmatch(*text)) << pattern;
    EXPECT_FALSE(re->search(*text)) << pattern;
  }
  auto pairs = Regex::compile("(a|aa)*");
  ASSERT_TRUE(pairs);
  EXPECT_TRUE(pairs->fullmatch(as));
  auto counted = Regex::compile("(.*a){20}");
  ASSERT_TRUE(counted);
  EXPECT_TRUE(counted->fullmatch(as));
  EXPECT_FALSE(counted->fullmatch(as + "b"));
  EXPECT_TRUE(counted->search(as + "b"));
}

TEST(RegexApi, KeepsPatternAndCopies)
{
  auto re = Regex::compile(R"(.*\.mlp\.gate$)");
  ASSERT_TRUE(re);
  EXPECT_EQ(re->pattern(), R"(.*\.mlp\.gate$)");
  const Regex copy = *re;
  EXPECT_TRUE(copy.match("model.layers.0.mlp.gate"));
  EXPECT_EQ(copy.pattern(), re->pattern());
}

// The literal runs a pattern's top level must find in the text (and the run that must end it)
// only reject texts that cannot match: random patterns answer as the same pattern does behind
// a never-matching alternative ("|\\b\\B"), which leaves no literal to pre-check.
TEST(RegexLiterals, FastRejectAgreesWithTheSimulation)
{
  test::Lcg next(2024);
  const std::vector<std::string> tokens{"a",    "b",   "ab", ".",  "\\.", "\n",  "$",   "\\Z",
                                        "^",    "*",   "+",  "?",  "(",   ")",   "(?:", "|",
                                        "[ab]", "\\b", "x",  "x$", "ab$", "(?i)"};
  size_t compiled = 0;
  size_t rejected = 0;
  for (int round = 0; round < 20000; ++round) {
    std::string pattern;
    for (size_t i = next(6) + 1; i > 0; --i) {
      pattern += tokens[next(tokens.size())];
    }
    const auto re = Regex::compile(pattern);
    if (!re) {
      continue;
    }
    std::string body = pattern;
    const bool fold = body.starts_with("(?i)");
    while (body.starts_with("(?i)")) {
      body.erase(0, 4);
    }
    const auto plain = Regex::compile((fold ? "(?i)" : "") + ("(?:" + body + ")|\\b\\B"));
    ASSERT_TRUE(plain) << pattern;
    ++compiled;
    for (int t = 0; t < 8; ++t) {
      std::string text;
      for (size_t i = next(8); i > 0; --i) {
        text += "ab.x\n"[next(5)];
      }
      ASSERT_EQ(re->match(text), plain->match(text)) << pattern << " on '" << text << "'";
      ASSERT_EQ(re->fullmatch(text), plain->fullmatch(text)) << pattern << " on '" << text << "'";
      ASSERT_EQ(re->search(text), plain->search(text)) << pattern << " on '" << text << "'";
      rejected += re->search(text) ? 0 : 1;
    }
  }
  EXPECT_GT(compiled, 5000u);
  EXPECT_GT(rejected, 10000u);
}

TEST(RegexLiterals, EndAnchorsKeepTheirMeaningBehindTheFastReject)
{
  const auto dollar = Regex::compile(R"(.*mlp\.gate$)");
  ASSERT_TRUE(dollar);
  EXPECT_TRUE(dollar->match("model.layers.1.mlp.gate"));
  EXPECT_TRUE(dollar->match("model.layers.1.mlp.gate\n")); // `$` before a final newline
  EXPECT_FALSE(dollar->fullmatch("model.layers.1.mlp.gate\n"));
  EXPECT_FALSE(dollar->match("model.layers.1.mlp.gate_proj"));
  EXPECT_TRUE(dollar->search("x.mlp.gate"));
  const auto end = Regex::compile(R"(.*mlp\.gate\Z)");
  ASSERT_TRUE(end);
  EXPECT_FALSE(end->match("model.layers.1.mlp.gate\n"));
  const auto open = Regex::compile(R"(model\.layers\.1)");
  ASSERT_TRUE(open);
  EXPECT_TRUE(open->match("model.layers.10.mlp")); // a match need not reach the end
  EXPECT_FALSE(open->fullmatch("model.layers.10"));
  const auto folded = Regex::compile("(?i)MODEL");
  ASSERT_TRUE(folded);
  EXPECT_TRUE(folded->match("model.layers"));
}
