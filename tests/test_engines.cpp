// Engine matching semantics, entry by entry (shared/spec/engine-semantics.md R11-R30).
#include <gtest/gtest.h>

#include <algorithm>
#include <map>
#include <cctype>
#include <fmt/format.h>

#include "builder.hpp"
#include "qcheck/checkpoint.hpp"
#include "qcheck/engines.hpp"
#include "qcheck/patterns.hpp"
#include "qcheck/quant_config.hpp"

using namespace qcheck;

namespace {

bool
vllm_mo(std::string_view entry, std::string_view prefix)
{
  return entry_matches(Engine::vllm, QuantFormat::modelopt, entry, prefix);
}
bool
sglang_mo(std::string_view entry, std::string_view prefix)
{
  return entry_matches(Engine::sglang, QuantFormat::modelopt, entry, prefix);
}
bool
trt_mo(std::string_view entry, std::string_view prefix)
{
  return entry_matches(Engine::trtllm, QuantFormat::modelopt, entry, prefix);
}

ConfigSource
source(const std::string& json)
{
  return parse_quant_block("config.json", "/quantization_config", json);
}

EngineLayer
layer(std::string prefix, LayerKind kind = LayerKind::linear, std::vector<std::string> shards = {})
{
  EngineLayer l;
  l.prefix = std::move(prefix);
  l.kind = kind;
  auto names = std::make_shared<std::deque<std::string>>(shards.begin(), shards.end());
  l.shards.assign(names->begin(), names->end());
  l.renamed = std::move(names); // what the shards view
  return l;
}

} // namespace

// Which shards are modules' own names: those added by module index, not a view of the same text.
TEST(ShardNames, SaysWhichNamesAreModules)
{
  std::vector<Module> modules(2);
  modules[0].name = "m.q_proj";
  modules[1].name = "m.k_proj";
  ShardNames shards;
  shards.push_module(modules.data(), 1);
  shards.push_back(modules[0].name);
  shards.push_module(modules.data(), 0);
  EXPECT_TRUE(shards.is_module(0));
  EXPECT_FALSE(shards.is_module(1));
  EXPECT_TRUE(shards.is_module(2));
  const ShardNames views = {"m.q_proj"};
  EXPECT_FALSE(views.is_module(0));
}

// A layer's shards: module indices for the inventory's own names, views for the others, in the
// order added, through every way the checks read them.
TEST(ShardNames, ModulesAndViewsReadBackInOrder)
{
  std::vector<Module> modules(3);
  modules[0].name = "m.experts.0.gate_proj";
  modules[1].name = "m.experts.0.up_proj";
  modules[2].name = "m.experts.1.gate_proj";
  const std::string renamed = "model.decoder.mlp.experts.0.down_proj";
  ShardNames shards;
  EXPECT_TRUE(shards.empty());
  shards.push_module(modules.data(), 2);
  shards.push_back(renamed);
  shards.push_module(modules.data(), 0);
  const std::vector<std::string_view> expected{modules[2].name, renamed, modules[0].name};
  ASSERT_EQ(shards.size(), 3u);
  EXPECT_EQ(shards.views(), expected);
  EXPECT_EQ(shards[1].data(), renamed.data()); // a view, not a copy
  EXPECT_EQ(shards[2].data(), modules[0].name.data());
  std::vector<std::string_view> walked(shards.begin(), shards.end());
  EXPECT_EQ(walked, expected);
  const ShardNames copy = shards;
  EXPECT_EQ(copy.views(), expected);
  ShardNames assigned;
  assigned = std::vector<std::string_view>{"a", "b"};
  EXPECT_EQ(assigned.views(), (std::vector<std::string_view>{"a", "b"}));
  assigned.clear();
  EXPECT_TRUE(assigned.empty());
  EXPECT_EQ(assigned.begin(), assigned.end());
}

TEST(Patterns, FnmatchIsPythonFnmatchcase)
{
  EXPECT_TRUE(fnmatch("model.layers.45*", "model.layers.45.mlp.experts"));
  EXPECT_TRUE(fnmatch("*mlp.gate", "model.layers.3.mlp.gate"));
  EXPECT_FALSE(fnmatch("*mlp.gate", "model.layers.3.mlp.gate_up_proj"));
  EXPECT_TRUE(fnmatch("model.layers.?.mlp", "model.layers.7.mlp"));
  EXPECT_TRUE(fnmatch("model.layers.[0-4].x", "model.layers.3.x"));
  EXPECT_FALSE(fnmatch("model.layers.[!0-4].x", "model.layers.3.x"));
  EXPECT_TRUE(fnmatch("a[b", "a[b"));          // unclosed bracket is a literal
  EXPECT_FALSE(fnmatch("Lm_head", "lm_head")); // case-sensitive
  EXPECT_TRUE(fnmatch("*", ""));
  EXPECT_FALSE(fnmatch("a*b*c", std::string(10000, 'a') + "b")); // no blow-up
  // Past an unclosed '[' every '[' is literal, however often '*' comes back before them.
  EXPECT_TRUE(fnmatch("*[a[b", "x[a[b"));
  EXPECT_TRUE(fnmatch("*[!]", "x[!]"));
  EXPECT_TRUE(fnmatch("*[[]", "x["));
  EXPECT_TRUE(fnmatch("*" + std::string(3000, '['), std::string(3001, '[')));
  EXPECT_FALSE(fnmatch("*" + std::string(3000, '['), std::string(2999, '[')));
  // A literal run longer than the text fails, wildcards before it or not.
  EXPECT_FALSE(fnmatch("*" + std::string(100, 'x'), std::string(99, 'x')));
  EXPECT_FALSE(fnmatch(std::string(100, 'x'), std::string(99, 'x')));
  EXPECT_TRUE(fnmatch("?" + std::string(99, 'x'), std::string(100, 'x')));
}

namespace {

// Python's fnmatchcase by its definition, by plain recursion: the reference for fnmatch().
bool
reference_fnmatch(std::string_view p, std::string_view t)
{
  if (p.empty()) {
    return t.empty();
  }
  if (p[0] == '*') {
    for (size_t i = 0; i <= t.size(); ++i) {
      if (reference_fnmatch(p.substr(1), t.substr(i))) {
        return true;
      }
    }
    return false;
  }
  if (t.empty()) {
    return false;
  }
  if (p[0] == '?') {
    return reference_fnmatch(p.substr(1), t.substr(1));
  }
  if (p[0] == '[') {
    size_t i = 1;
    const bool negate = i < p.size() && p[i] == '!';
    i += negate ? 1 : 0;
    const size_t first = i;
    if (i < p.size() && p[i] == ']') {
      ++i;
    }
    while (i < p.size() && p[i] != ']') {
      ++i;
    }
    if (i < p.size()) {
      bool found = false;
      for (size_t j = first; j < i; ++j) {
        if (j + 2 < i && p[j + 1] == '-') {
          found |= p[j] <= t[0] && t[0] <= p[j + 2];
          j += 2;
        } else {
          found |= p[j] == t[0];
        }
      }
      return found != negate && reference_fnmatch(p.substr(i + 1), t.substr(1));
    }
  }
  return p[0] == t[0] && reference_fnmatch(p.substr(1), t.substr(1));
}

} // namespace

// fnmatch() rejects on the pattern's literal tail first; random patterns over the characters
// that matter must still agree with the definition.
TEST(Patterns, FnmatchAgreesWithTheDefinitionOnRandomPatterns)
{
  const std::string alphabet = "ab.*?[]!-";
  test::Lcg next(12345);
  size_t matches = 0;
  for (int round = 0; round < 20000; ++round) {
    std::string pattern, text;
    for (size_t i = next(7); i > 0; --i) {
      pattern += alphabet[next(alphabet.size())];
    }
    for (size_t i = next(7); i > 0; --i) {
      text += alphabet[next(4) == 0 ? next(alphabet.size()) : next(3)];
    }
    const bool expected = reference_fnmatch(pattern, text);
    matches += expected ? 1 : 0;
    ASSERT_EQ(fnmatch(pattern, text), expected)
      << "pattern '" << pattern << "' text '" << text << "'";
  }
  EXPECT_GT(matches, 500u); // the random cases include plenty of matches
}

// A word of up to `max` characters drawn from `alphabet`.
std::string
random_word(test::Lcg& next, std::string_view alphabet, size_t max)
{
  std::string w;
  for (size_t i = next(max + 1); i > 0; --i) {
    w += alphabet[next(alphabet.size())];
  }
  return w;
}

// Each key's value once per occurrence, by trying every position.
std::vector<uint32_t>
occurrences_by_search(const std::vector<SubstringSet::Key>& keys, std::string text, bool ci)
{
  const auto lower = [&](std::string s) {
    for (char& c : s) {
      c = ci ? static_cast<char>(std::tolower(static_cast<unsigned char>(c))) : c;
    }
    return s;
  };
  text = lower(text);
  std::vector<uint32_t> out;
  for (const auto& k : keys) {
    const std::string key = lower(k.text);
    if (key.empty()) {
      out.push_back(k.value);
      continue;
    }
    for (size_t at = text.find(key); at != std::string::npos; at = text.find(key, at + 1)) {
      out.push_back(k.value);
    }
  }
  std::sort(out.begin(), out.end());
  return out;
}

TEST(Patterns, SubstringSetFindsEveryOccurrenceOfEveryKey)
{
  const SubstringSet set({{"he", 1}, {"she", 2}, {"his", 3}, {"hers", 4}, {"he", 5}, {"", 6}},
                         false);
  std::vector<uint32_t> found;
  set.find_all("ushers", found);
  std::sort(found.begin(), found.end());
  EXPECT_EQ(found, (std::vector<uint32_t>{1, 2, 4, 5, 6}));
  found.clear();
  set.find_all("", found);
  EXPECT_EQ(found, (std::vector<uint32_t>{6})); // the empty key occurs in the empty text
  found.clear();
  SubstringSet({}, false).find_all("abc", found);
  EXPECT_TRUE(found.empty());
}

// Random keys and texts over a small alphabet (keys inside keys, repeats, suffix chains) against
// a search at every position, case-sensitive and not.
TEST(Patterns, SubstringSetAgreesWithSearchingEveryPosition)
{
  test::Lcg next(777);
  const auto word = [&](size_t max) { return random_word(next, "abAB.\xff", max); };
  size_t hits = 0;
  for (int round = 0; round < 3000; ++round) {
    std::vector<SubstringSet::Key> keys;
    for (size_t i = next(12); i > 0; --i) {
      keys.push_back({word(round % 50 == 0 ? 0 : 5), static_cast<uint32_t>(next(6))});
    }
    const bool ci = next(2) == 0;
    const SubstringSet set(keys, ci);
    for (int t = 0; t < 5; ++t) {
      const std::string text = word(20);
      std::vector<uint32_t> found;
      set.find_all(text, found);
      std::sort(found.begin(), found.end());
      const auto expected = occurrences_by_search(keys, text, ci);
      hits += expected.size();
      ASSERT_EQ(found, expected) << "round " << round << " text '" << text << "' ci " << ci;
    }
  }
  EXPECT_GT(hits, 10000u);
}

// Up to eight case-sensitive keys are searched for one at a time, 16 start positions per step:
// texts long enough for several steps and a last, partial one, keys long enough to reach past it.
TEST(Patterns, SubstringSetWithFewKeysAgreesOnLongTexts)
{
  test::Lcg next(4242);
  size_t hits = 0;
  for (int round = 0; round < 3000; ++round) {
    std::vector<SubstringSet::Key> keys;
    for (size_t i = 1 + next(8); i > 0; --i) {
      keys.push_back({random_word(next, "ab.", 1 + next(round % 3 == 0 ? 20 : 4)),
                      static_cast<uint32_t>(next(6))});
    }
    const SubstringSet set(keys, false);
    for (int t = 0; t < 5; ++t) {
      const std::string text = random_word(next, "ab.", 90);
      std::vector<uint32_t> found;
      set.find_all(text, found);
      std::sort(found.begin(), found.end());
      const auto expected = occurrences_by_search(keys, text, false);
      hits += expected.size();
      ASSERT_EQ(found, expected) << "round " << round << " text '" << text << "'";
    }
  }
  EXPECT_GT(hits, 100000u);
}

// The candidates an EntryIndex gives one name.
std::vector<uint32_t>
candidates_of(const EntryIndex& index, std::string_view name)
{
  std::vector<uint32_t> out;
  index.candidates(std::span(&name, 1), out);
  return out;
}

// Substring keys with two dots or more are looked up by the run between their first and last
// dot, the others by the automaton: together exactly the keys that occur in the name.
TEST(Patterns, EntryIndexFindsDottedSubstringsByTheirInnerRun)
{
  const EntryIndex index({{"layers.1.mlp"}, {"mlp.experts.1.down"}, {"gate"}, {"s.1.m"}, {"x.y"}},
                         {.mode = EntryIndex::Mode::substring});
  const auto found = [&](std::string_view name) { return candidates_of(index, name); };
  EXPECT_EQ(found("model.layers.1.mlp.experts.1.down_proj"), (std::vector<uint32_t>{0, 1, 3}));
  EXPECT_EQ(found("model.layers.11.mlp.gate"), (std::vector<uint32_t>{2}));
  EXPECT_EQ(found("x.y.z"), (std::vector<uint32_t>{4}));
  EXPECT_EQ(found("model.layers.1.mlpx"), (std::vector<uint32_t>{0, 3}));
  EXPECT_EQ(found("model.layers.1.xmlp"), (std::vector<uint32_t>{})); // the run, not the text
}

// Random keys and names over a small alphabet with dots (empty components, leading and trailing
// dots), case-sensitive and not: the candidates are the keys found by searching every position.
TEST(Patterns, EntryIndexSubstringModeAgreesWithSearchingEveryPosition)
{
  test::Lcg next(4242);
  const auto word = [&](size_t max) { return random_word(next, "abA..", max); };
  size_t hits = 0;
  for (int round = 0; round < 2000; ++round) {
    std::vector<std::vector<std::string>> keys;
    std::vector<SubstringSet::Key> searched; // entry k's key, valued k
    for (size_t i = next(12); i > 0; --i) {
      keys.push_back({word(7)});
      searched.push_back({keys.back()[0], static_cast<uint32_t>(searched.size())});
    }
    const bool ci = next(2) == 0;
    const EntryIndex index(keys, {.mode = EntryIndex::Mode::substring, .case_insensitive = ci});
    for (int t = 0; t < 5; ++t) {
      const std::string text = word(20);
      // Each entry once, however often its key occurs.
      std::vector<uint32_t> expected = occurrences_by_search(searched, text, ci);
      expected.erase(std::unique(expected.begin(), expected.end()), expected.end());
      hits += expected.size();
      ASSERT_EQ(candidates_of(index, text), expected)
        << "round " << round << " text '" << text << "' ci " << ci;
    }
  }
  EXPECT_GT(hits, 10000u);
}

// Literal keys in ancestor and dotted mode, over bytes that sit next to '.' in value ('/' is
// '.' + 1, 0xae is '.' with the high bit) and names long enough to be read eight bytes at a
// time: exactly the keys that are the name or an ancestor, or a run of whole components (an
// empty key is one where the name has an empty component).
TEST(Patterns, EntryIndexFindsDotsWhateverTheBytesAroundThem)
{
  test::Lcg next(777);
  const auto word = [&](size_t max) { return random_word(next, "a./.\xae-", max); };
  size_t hits = 0;
  for (int round = 0; round < 1500; ++round) {
    std::vector<std::vector<std::string>> keys;
    for (size_t i = next(10) + 1; i > 0; --i) {
      keys.push_back({word(6)});
    }
    const EntryIndex ancestors(keys, {.mode = EntryIndex::Mode::ancestors});
    const EntryIndex dotted(keys, {.mode = EntryIndex::Mode::dotted});
    for (int t = 0; t < 4; ++t) {
      const std::string name = word(40);
      std::vector<uint32_t> expected_ancestors, expected_dotted;
      for (uint32_t k = 0; k < keys.size(); ++k) {
        const std::string& key = keys[k][0];
        if (name == key || name.starts_with(key + ".")) {
          expected_ancestors.push_back(k);
        }
        for (size_t at = name.find(key); at != std::string::npos; at = name.find(key, at + 1)) {
          const size_t end = at + key.size();
          if ((at == 0 || name[at - 1] == '.') && (end == name.size() || name[end] == '.')) {
            expected_dotted.push_back(k);
            break;
          }
        }
      }
      hits += expected_ancestors.size() + expected_dotted.size();
      ASSERT_EQ(candidates_of(ancestors, name), expected_ancestors) << "'" << name << "'";
      ASSERT_EQ(candidates_of(dotted, name), expected_dotted) << "'" << name << "'";
    }
  }
  EXPECT_GT(hits, 1000u);
}

// Dotted mode looks a name up only from components that begin some key: a key's first
// component, or any component for a glob whose literal start has no dot ("mod*" may end inside
// one).
TEST(Patterns, EntryIndexDottedModeStartsAtComponentsKeysBeginWith)
{
  const EntryIndex index({{"mod*"}, {"layers.0.mlp"}, {"x.lay*"}, {"0"}},
                         {.mode = EntryIndex::Mode::dotted, .globs = true});
  const auto found = [&](std::string_view name) { return candidates_of(index, name); };
  EXPECT_EQ(found("model.layers.0.mlp"), (std::vector<uint32_t>{0, 1, 3}));
  EXPECT_EQ(found("a.x.layers"), (std::vector<uint32_t>{2}));
  EXPECT_EQ(found("a.modern"), (std::vector<uint32_t>{0}));
  EXPECT_EQ(found("a.b.c"), (std::vector<uint32_t>{}));
}

// Long lists: tables large enough for their filter. Every key is still found, whole, as an
// ancestor and as a dotted run, in both cases; and a name that is no key finds none.
TEST(Patterns, EntryIndexLongListFindsEveryKey)
{
  std::vector<std::vector<std::string>> keys;
  for (int layer = 0; keys.size() < 6000; ++layer) {
    for (const char* leaf : {"gate_proj", "up_proj", "down_proj"}) {
      keys.push_back(
        {fmt::format("model.layers.{}.mlp.experts.{}.{}", layer / 64, layer % 64, leaf)});
    }
  }
  for (const bool ci : {false, true}) {
    const EntryIndex exact(keys, {.mode = EntryIndex::Mode::exact, .case_insensitive = ci});
    const EntryIndex ancestors(keys, {.mode = EntryIndex::Mode::ancestors, .case_insensitive = ci});
    const EntryIndex dotted(keys, {.mode = EntryIndex::Mode::dotted, .case_insensitive = ci});
    for (uint32_t i = 0; i < keys.size(); ++i) {
      const std::string& key = keys[i][0];
      const std::vector<uint32_t> self{i};
      ASSERT_EQ(candidates_of(exact, ci ? "MODEL" + key.substr(5) : key), self) << key;
      ASSERT_EQ(candidates_of(ancestors, key + ".weight"), self) << key;
      ASSERT_EQ(candidates_of(dotted, "outer." + key + ".weight"), self) << key;
    }
    EXPECT_TRUE(candidates_of(exact, "model.layers.0.mlp.experts.0.proj").empty());
    EXPECT_TRUE(candidates_of(ancestors, "model.layers.999.mlp.experts.0.up_proj").empty());
  }
}

// A glob's literal start begins most names ("model.layers."); the literal run after its first
// wildcard decides whether it is offered, searched for after the start.
TEST(Patterns, EntryIndexOffersAGlobOnlyToNamesHoldingItsTailRun)
{
  const std::vector<std::vector<std::string>> keys{
    {"model.layers.*.mlp.gate"}, {"model.*"}, {"model.layers.[0-9].mlp?gate_up"}};
  for (const auto mode :
       {EntryIndex::Mode::exact, EntryIndex::Mode::ancestors, EntryIndex::Mode::dotted}) {
    const EntryIndex index(keys, {.mode = mode, .globs = true});
    const auto found = [&](std::string_view name) { return candidates_of(index, name); };
    EXPECT_EQ(found("model.layers.3.mlp.gate"), (std::vector<uint32_t>{0, 1}));
    EXPECT_EQ(found("model.layers.3.mlp.experts.0.up_proj"), (std::vector<uint32_t>{1}));
    if (mode == EntryIndex::Mode::dotted) { // the run must follow the literal start
      EXPECT_EQ(found("a.mlp.gate.model.layers.3"), (std::vector<uint32_t>{1}));
    }
    EXPECT_EQ(found("model.layers.3.mlp_gate_up"), (std::vector<uint32_t>{1, 2}));
    EXPECT_EQ(found("model.layers.3.mlp_gate"), (std::vector<uint32_t>{1}));
  }
}

// In substring mode a glob's literal start may occur anywhere, and "model.layers." occurs in most
// names: a name is offered the glob only when it also holds the run after the first wildcard
// (after the start, for a start of two dots or more, found with its position; anywhere in the
// name for one the automaton finds).
TEST(Patterns, EntryIndexSubstringModeOffersAGlobOnlyToNamesHoldingItsTailRun)
{
  const std::vector<std::vector<std::string>> keys{
    {"model.layers.*.mlp.gate"}, {"x.model.layers.*.mlp.gate"}, {"model.*"}, {"lm_head*"}};
  const EntryIndex index(keys, {.mode = EntryIndex::Mode::substring, .globs = true});
  const auto found = [&](std::string_view name) { return candidates_of(index, name); };
  EXPECT_EQ(found("model.layers.3.mlp.gate"), (std::vector<uint32_t>{0, 2}));
  EXPECT_EQ(found("model.layers.3.self_attn.q_proj"), (std::vector<uint32_t>{2}));
  EXPECT_EQ(found("a.x.model.layers.3.mlp.gate"), (std::vector<uint32_t>{0, 1, 2}));
  EXPECT_EQ(found("a.mlp.gate.x.model.layers.3"), (std::vector<uint32_t>{0, 2}));
  EXPECT_EQ(found("lm_head"), (std::vector<uint32_t>{3}));
}

// With `leaf_markers`, an entry whose leaf is one of them is offered to every name whose leaf
// contains it, whatever either's parent (SGLang's ModelOpt rule for MLA projections); no other
// entry is.
TEST(Patterns, EntryIndexOffersEntriesEndingInAMarkerToNamesWhoseLeafHoldsIt)
{
  const std::vector<std::vector<std::string>> keys{{"a.b.kv_a_proj_with_mqa"},    {"a.b.o_proj"},
                                                   {"kv_a_proj_with_mqa"},        {"x.*.kv_b_proj"},
                                                   {"re:c\\.kv_a_proj_with_mqa"}, {"q_a_proj"}};
  const EntryIndex none(keys, {.mode = EntryIndex::Mode::dotted});
  EXPECT_TRUE(candidates_of(none, "z.fused_qkv_a_proj_with_mqa").empty());
  const EntryIndex some(keys, {.mode = EntryIndex::Mode::dotted,
                               .globs = true,
                               .leaf_markers = {"kv_b_proj", "kv_a_proj_with_mqa"}});
  EXPECT_EQ(candidates_of(some, "z.fused_qkv_a_proj_with_mqa"), (std::vector<uint32_t>{0, 2, 4}));
  EXPECT_TRUE(candidates_of(some, "fused_qkv_a_proj").empty());
  EXPECT_EQ(candidates_of(some, "y.layers.9.self_attn.kv_b_proj"), (std::vector<uint32_t>{3}));
  EXPECT_TRUE(candidates_of(some, "a.kv_b_proj_x.fc").empty()); // the leaf only
  EXPECT_EQ(candidates_of(some, "a.b.o_proj"), (std::vector<uint32_t>{1}));
}

// The tail run is searched for 16 start positions at a time (its first and last bytes, then the
// whole run): wherever it lies in a name of any length, next to near misses (its first or last
// byte alone, or both with a middle byte changed), it is found exactly where find() finds it.
TEST(Patterns, EntryIndexFindsATailRunAnywhereInALongName)
{
  for (size_t m = 1; m <= 20; ++m) {
    std::string run;
    for (size_t k = 0; k < m; ++k) {
      run += static_cast<char>('a' + (k * 7) % 26);
    }
    const EntryIndex index({{"s*" + run + "*"}}, {.mode = EntryIndex::Mode::exact, .globs = true});
    std::vector<std::string> pieces{run, run.substr(0, 1), run.substr(m - 1)};
    if (m >= 3) {
      std::string miss = run;
      miss[m / 2] = '#';
      pieces.push_back(miss);
    }
    for (const std::string& piece : pieces) {
      for (size_t before = 0; before <= 40; ++before) {
        for (const size_t after : {size_t{0}, size_t{1}, size_t{15}, size_t{16}, size_t{33}}) {
          // Filler of the run's first and last bytes: partial matches everywhere.
          std::string name = "s";
          for (size_t k = 0; k < before; ++k) {
            name += k % 2 == 0 ? run.front() : run.back();
          }
          name += piece + std::string(after, run.back());
          const bool holds = std::string_view(name).find(run, 1) != std::string_view::npos;
          EXPECT_EQ(candidates_of(index, name),
                    holds ? std::vector<uint32_t>{0} : std::vector<uint32_t>{})
            << name << " / " << run;
        }
      }
    }
  }
}

// A glob's literal start ends at its first wildcard (`*?[]`), found 16 bytes at a time: at
// every position of a long key, the glob is offered to a name beginning with the text before it
// (and not equal to the key) and not to one that differs in the last byte of that text.
TEST(Patterns, EntryIndexEndsAGlobsLiteralStartAtItsFirstWildcard)
{
  for (const auto& [wildcard, rest] : std::vector<std::pair<std::string, std::string>>{
         {"*", "bx"}, {"?", "bx"}, {"[b]", "bx"}, {"]", "]x"}}) {
    for (size_t k = 1; k <= 40; ++k) {
      const std::string start(k, 'a');
      const EntryIndex index({{start + wildcard}},
                             {.mode = EntryIndex::Mode::exact, .globs = true});
      EXPECT_EQ(candidates_of(index, start + rest), std::vector<uint32_t>{0})
        << wildcard << " after " << k;
      EXPECT_TRUE(candidates_of(index, start.substr(0, k - 1) + "c" + rest).empty())
        << wildcard << " after " << k;
    }
  }
}

// Names come in runs that share most of their text (siblings, then the next layer), and a
// name's prefix hashes are kept for the part it shares with the name before it, case-sensitive
// or not. Each name is checked against a search, alternating between a case-sensitive and a
// case-insensitive index over the same keys.
TEST(Patterns, EntryIndexAnswersNamesSharingTheirStartWithTheNameBefore)
{
  test::Lcg next(31337);
  const auto word = [&](size_t max) { return random_word(next, "abA.", max); };
  size_t hits = 0;
  for (int round = 0; round < 300; ++round) {
    std::vector<std::vector<std::string>> keys;
    std::vector<SubstringSet::Key> searched;
    for (size_t i = next(10) + 1; i > 0; --i) {
      keys.push_back({word(6)});
      searched.push_back({keys.back()[0], static_cast<uint32_t>(searched.size())});
    }
    const EntryIndex plain(keys, {.mode = EntryIndex::Mode::substring});
    const EntryIndex folded(keys, {.mode = EntryIndex::Mode::substring, .case_insensitive = true});
    std::string name = word(30);
    for (int t = 0; t < 40; ++t) {
      // The next name keeps a random start of this one, sometimes all of it.
      name = name.substr(0, next(name.size() + 1)) + (t % 5 == 0 ? "" : word(12));
      const bool ci = next(2) == 0;
      std::vector<uint32_t> expected = occurrences_by_search(searched, name, ci);
      expected.erase(std::unique(expected.begin(), expected.end()), expected.end());
      hits += expected.size();
      ASSERT_EQ(candidates_of(ci ? folded : plain, name), expected)
        << "round " << round << " name '" << name << "' ci " << ci;
    }
  }
  EXPECT_GT(hits, 5000u);
}

TEST(Patterns, RegexLiteralStartStopsWhereTheRegexMayDiffer)
{
  EXPECT_EQ(regex_literal_start(R"(model\.layers\.3\.mlp\.experts\..*)"),
            "model.layers.3.mlp.experts.");
  EXPECT_EQ(regex_literal_start("mtp.*"), "mtp");      // '.' is any character
  EXPECT_EQ(regex_literal_start("model_?x"), "model"); // '?' makes '_' optional
  EXPECT_EQ(regex_literal_start(R"(a\.{2}b)"), "a");   // so does {2} (it may be {0})
  EXPECT_EQ(regex_literal_start("ab+c"), "ab");        // one 'b' at least
  EXPECT_EQ(regex_literal_start("ab\\\xc3\xa9?c"), "ab"); // an escaped 2-byte character ends it
  EXPECT_EQ(regex_literal_start("lm_head|mtp"), "");   // an alternative starts otherwise
  EXPECT_EQ(regex_literal_start("(?i)model"), "");
  EXPECT_EQ(regex_literal_start(R"(\dlayer)"), ""); // a class, not a literal
  EXPECT_EQ(regex_literal_start("[ab]c"), "");
}

TEST(Engines, VllmModelOptSplitsStarIntoPrefixAndSubstring)
{
  // "model.layers.45*" -> "model.layers.45" (substring) and "model.layers.45.*" (glob).
  EXPECT_TRUE(vllm_mo("model.layers.45*", "model.layers.45.mlp.experts"));
  // The substring rule over-matches: layers.4 is inside layers.45.
  EXPECT_TRUE(vllm_mo("model.layers.4*", "model.layers.45.mlp.experts"));
  EXPECT_TRUE(vllm_mo("model.layers.1", "model.layers.10.self_attn.qkv_proj"));
  // language_model. stripped for the substring rule.
  EXPECT_TRUE(vllm_mo("model.layers.3.mlp", "language_model.model.layers.3.mlp.experts"));
  // One per-expert entry marks the whole fused MoE (the "experts" special case).
  EXPECT_TRUE(vllm_mo("model.layers.3.mlp.experts.7.down_proj", "model.layers.3.mlp.experts"));
  EXPECT_FALSE(vllm_mo("model.language_model.layers.45*", "model.layers.45.mlp.experts"));
  EXPECT_FALSE(vllm_mo("lm_head", "model.layers.45.shared_head.head"));
}

TEST(Engines, SglangModelOptUsesDottedBoundariesAndComponentGlobs)
{
  EXPECT_TRUE(sglang_mo("mtp*", "mtp.fc")); // component glob
  EXPECT_TRUE(sglang_mo("model.layers.3", "model.layers.3.mlp.experts"));
  EXPECT_FALSE(sglang_mo("model.layers.1", "model.layers.10.mlp.experts"));
  EXPECT_FALSE(sglang_mo("mlp.gate", "model.layers.1.mlp.gate_up_proj")); // PR 23467
  EXPECT_TRUE(sglang_mo("model.language_model.layers.45*", "model.layers.45.mlp.experts"));
  EXPECT_TRUE(sglang_mo("model.layers.0.self_attn.kv_a_proj_with_mqa",
                        "model.layers.0.self_attn.fused_qkv_a_proj_with_mqa")); // MLA tail rule
  // The MLA rule compares leaves alone: one layer's entry excludes the projection in every layer.
  EXPECT_TRUE(sglang_mo("model.layers.0.self_attn.kv_a_proj_with_mqa",
                        "model.layers.7.self_attn.fused_qkv_a_proj_with_mqa"));
  // "fused_qkv_a_proj_with_mqa" holds "kv_a_proj_with_mqa", not "q_a_proj".
  EXPECT_FALSE(sglang_mo("model.layers.7.self_attn.q_a_proj",
                         "model.layers.7.self_attn.fused_qkv_a_proj_with_mqa"));
  EXPECT_TRUE(
    sglang_mo("model.layers.61.self_attn.kv_b_proj", "model.layers.3.self_attn.kv_b_proj"));
  EXPECT_TRUE(sglang_mo("q_b_proj", "model.layers.3.self_attn.q_b_proj"));
  EXPECT_FALSE(sglang_mo("model.layers.0.self_attn.o_proj", "model.layers.7.self_attn.o_proj"));
  EXPECT_FALSE(
    sglang_mo("model.layers.0.self_attn.q_a_proj", "model.layers.7.self_attn.q_a_proj.x"));
  // A fused layer's shard goes through is_layer_skipped alone: whole dotted components of the
  // name as it is (no "language_model." taken off it), no globs, no MLA rule.
  const auto shard = [](std::string_view e, std::string_view n) {
    return shard_entry_matches(Engine::sglang, QuantFormat::modelopt, e, n);
  };
  EXPECT_TRUE(
    sglang_mo("model.layers.0.mlp.gate_proj", "model.language_model.layers.0.mlp.gate_proj"));
  EXPECT_FALSE(
    shard("model.layers.0.mlp.gate_proj", "model.language_model.layers.0.mlp.gate_proj"));
  EXPECT_TRUE(shard("layers.0.mlp.gate_proj", "model.language_model.layers.0.mlp.gate_proj"));
  EXPECT_FALSE(shard("model.layers.0.mlp.gate_pro*", "model.layers.0.mlp.gate_proj"));
  EXPECT_FALSE(shard("model.layers.1.self_attn.kv_a_proj_with_mqa",
                     "model.layers.0.self_attn.kv_a_proj_with_mqa"));
  EXPECT_TRUE(shard("model.layers.0.self_attn.kv_a_proj_with_mqa",
                    "model.layers.0.self_attn.kv_a_proj_with_mqa"));
}

TEST(Engines, TrtllmMatchesAncestorsAndRegex)
{
  EXPECT_TRUE(trt_mo("model.layers.61", "model.layers.61.mlp.experts"));
  EXPECT_TRUE(trt_mo("model.layers.61.*", "model.layers.61")); // trailing .* matches the parent
  EXPECT_TRUE(trt_mo("re:model\\.layers\\.6[01]\\..*", "model.layers.61.mlp.experts"));
  EXPECT_FALSE(trt_mo("model.layers.6", "model.layers.61.mlp.experts")); // no substring
  EXPECT_FALSE(trt_mo("model.layers.45*", "model.language_model.layers.45.mlp.experts"));
}

// SGLang takes a plain entry whole or as a dotted suffix, case-sensitively, never as a prefix or
// substring (compressed_tensors/utils.py since PR 32736).
TEST(Engines, CompressedTensorsRegexIsStartAnchoredAndSglangAddsDottedSuffixes)
{
  auto vllm = [](auto e, auto p) {
    return entry_matches(Engine::vllm, QuantFormat::compressed_tensors, e, p);
  };
  auto sglang = [](auto e, auto p) {
    return entry_matches(Engine::sglang, QuantFormat::compressed_tensors, e, p);
  };
  EXPECT_TRUE(vllm("re:.*mlp\\.gate$", "model.layers.0.mlp.gate"));
  EXPECT_FALSE(vllm("re:mlp\\.gate", "model.layers.0.mlp.gate")); // match, not search
  EXPECT_FALSE(vllm("lm_head", "model.lm_head"));
  EXPECT_TRUE(sglang("lm_head", "model.lm_head"));
  EXPECT_TRUE(sglang("self_attn.kv_b_proj", "model.layers.0.self_attn.kv_b_proj"));
  EXPECT_FALSE(sglang("mtp", "mtp.fc")); // a prefix
  EXPECT_FALSE(sglang("model.layers.0.mlp", "model.layers.0.mlp.down_proj"));
  EXPECT_FALSE(sglang("layers.1", "model.layers.10"));                          // a substring
  EXPECT_FALSE(sglang("attn.kv_b_proj", "model.layers.0.self_attn.kv_b_proj")); // not dotted
  EXPECT_FALSE(sglang("LM_HEAD", "model.lm_head"));                             // case-sensitive
  EXPECT_FALSE(vllm("mtp", "mtp.fc"));
}

TEST(Engines, FusedShardsMustAgree)
{
  const ConfigSource s = source(R"({"quant_method":"modelopt","quant_algo":"FP8",
    "ignore":["model.layers.0.self_attn.q_proj"]})");
  const EngineLayer l = layer("model.layers.0.self_attn.qkv_proj", LayerKind::linear,
                              {"model.layers.0.self_attn.q_proj", "model.layers.0.self_attn.k_proj",
                               "model.layers.0.self_attn.v_proj"});
  const Decision d = decide(Engine::vllm, s, {}, l, false);
  EXPECT_TRUE(d.shards_disagree);
  EXPECT_EQ(d.shard_detail, "model.layers.0.self_attn.q_proj excluded, "
                            "model.layers.0.self_attn.k_proj, model.layers.0.self_attn.v_proj not");
}

// compressed-tensors targets (R20): a fused layer no target names is targeted when each of its
// parts is; an MoE layer by expert 0's gate, up and down projections.
TEST(Engines, CompressedTensorsTargetsReachAFusedLayerThroughEachPart)
{
  const auto ct = [](const std::string& targets) {
    return source(fmt::format(R"({{"quant_method":"compressed-tensors","format":"pack-quantized",
      "ignore":["lm_head"],"config_groups":{{"group_0":{{"targets":{},
      "weights":{{"num_bits":4,"type":"int","strategy":"group","group_size":128}}}}}}}})",
                              targets));
  };
  const EngineLayer gate_up = layer("model.layers.0.mlp.gate_up_proj", LayerKind::linear,
                                    {"model.layers.0.mlp.gate_proj", "model.layers.0.mlp.up_proj"});
  const EngineLayer experts =
    layer("model.layers.0.mlp.experts", LayerKind::fused_moe,
          {"model.layers.0.mlp.experts.0.gate_proj", "model.layers.0.mlp.experts.0.up_proj",
           "model.layers.0.mlp.experts.0.down_proj"});
  const EngineLayer down = layer("model.layers.0.mlp.down_proj");
  for (Engine engine : {Engine::vllm, Engine::sglang}) {
    SCOPED_TRACE(to_string(engine));
    const ConfigSource mlp = ct(R"(["re:.*mlp\\.(gate|up|down)_proj$"])");
    Decision d = decide(engine, mlp, {}, gate_up, true);
    EXPECT_TRUE(d.quantized) << d.reason;
    EXPECT_EQ(d.matched, R"(re:.*mlp\.(gate|up|down)_proj$)");
    EXPECT_TRUE(decide(engine, mlp, {}, down, true).quantized);
    // One part left out: the fused layer is not targeted.
    d = decide(engine, ct(R"(["re:.*mlp\\.(gate|down)_proj$"])"), {}, gate_up, true);
    EXPECT_FALSE(d.quantized);
    EXPECT_EQ(d.reason, "no config_groups target matches");
    // Exact names of the parts count as well.
    EXPECT_TRUE(decide(engine,
                       ct(R"(["model.layers.0.mlp.gate_proj", "model.layers.0.mlp.up_proj"])"), {},
                       gate_up, true)
                  .quantized);
    d = decide(engine, ct(R"(["re:.*mlp\\.experts.*_proj$"])"), {}, experts, true);
    EXPECT_TRUE(d.quantized) << d.reason;
    EXPECT_NE(d.reason.find("model.layers.0.mlp.experts.0.gate_proj"), std::string::npos);
    // The engines probe the three projections by these names, whatever the shards are called.
    EXPECT_FALSE(
      decide(engine, ct(R"(["re:.*experts.*(gate|up)_proj$"])"), {}, experts, true).quantized);
    // Parts are not matched by a class name the whole layer's name would not match either.
    EXPECT_FALSE(decide(engine, ct(R"(["re:.*self_attn.*"])"), {}, gate_up, true).quantized);
  }
}

TEST(Engines, GptqDynamicFirstMatchWins)
{
  const ConfigSource s = source(R"({"quant_method":"gptq","bits":4,
    "dynamic":{"+:.*mtp\\.fc":{"bits":8},"-:.*mtp.*":{}}})");
  // A positive key decides SGLang; vLLM takes its settings and still asks whether the layer is
  // quantized at all (is_layer_gptq_quantized: here the stored dtypes).
  const Decision sglang_fc = decide(Engine::sglang, s, {}, layer("mtp.fc"), false);
  EXPECT_TRUE(sglang_fc.quantized);
  EXPECT_EQ(sglang_fc.matched, "+:.*mtp\\.fc");
  const Decision fc = decide(Engine::vllm, s, {}, layer("mtp.fc"), true);
  EXPECT_TRUE(fc.quantized);
  EXPECT_TRUE(fc.inferred);
  EXPECT_NE(fc.reason.find("dynamic key '+:.*mtp\\.fc' matches first: its settings only"),
            std::string::npos)
    << fc.reason;
  const Decision bf16_fc = decide(Engine::vllm, s, {}, layer("mtp.fc"), false);
  EXPECT_FALSE(bf16_fc.quantized);
  EXPECT_TRUE(bf16_fc.matched.empty());
  const Decision moe =
    decide(Engine::vllm, s, {}, layer("mtp.layers.0.mlp.experts", LayerKind::fused_moe), false);
  EXPECT_FALSE(moe.quantized);
  EXPECT_EQ(moe.matched, "-:.*mtp.*");
  // Fused MoE without a negative key is quantized whatever is stored (no dtype inference).
  const ConfigSource plain = source(R"({"quant_method":"gptq","bits":4})");
  EXPECT_TRUE(
    decide(Engine::vllm, plain, {}, layer("mtp.layers.0.mlp.experts", LayerKind::fused_moe), false)
      .quantized);
  // Linear layers are inferred from dtypes when modules_in_block_to_quantize is absent.
  const Decision linear = decide(Engine::vllm, plain, {}, layer("mtp.fc"), false);
  EXPECT_TRUE(linear.inferred);
  EXPECT_FALSE(linear.quantized);
}

TEST(Engines, AutoRoundBlockNamesUseStartswithAndExtraConfigBits)
{
  const ConfigSource s = source(R"({"quant_method":"auto-round","bits":4,
    "block_name_to_quantize":["model.language_model.layers"],
    "extra_config":{"model.language_model.layers.0.linear_attn.in_proj_a":{"bits":16}}})");
  EXPECT_TRUE(
    decide(Engine::vllm, s, {}, layer("model.language_model.layers.3.mlp.down_proj"), true)
      .quantized);
  EXPECT_FALSE(decide(Engine::vllm, s, {}, layer("mtp.fc"), false).quantized);
  const Decision a = decide(Engine::vllm, s, {},
                            layer("model.language_model.layers.0.linear_attn.in_proj_a"), false);
  EXPECT_FALSE(a.quantized);
  EXPECT_EQ(a.matched, "model.language_model.layers.0.linear_attn.in_proj_a");
}

// extra_config values as the engines compare them: bits against 16 (a float, true as 1, a
// string not at all), and (bits, group_size, sym) between shards as Python values.
TEST(Engines, AutoRoundExtraConfigValuesReadAsPythonComparesThem)
{
  const ConfigSource s = source(R"({"quant_method":"auto-round","bits":4,"group_size":128,
    "sym":true,"extra_config":{"a":{"bits":16.0},"b":{"bits":15.9},"c":{"bits":0.5},
    "d":{"bits":true},"e":{"bits":"4"},"f":{"bits":-2},"g":{"bits":1e300},
    "h":{"bits":4,"group_size":-1,"sym":false},"i":{"group_size":128.0,"sym":"yes"},
    "j":{"bits":null,"group_size":[1],"sym":{}}}})");
  ASSERT_EQ(s.extra_config.size(), 10u);
  std::vector<int> bits;
  for (const auto& e : s.extra_config) {
    bits.push_back(e.bits);
  }
  EXPECT_EQ(bits, (std::vector<int>{16, 15, 1, 1, 0, 1, 1'000'000'000, 4, 0, 0}));
  EXPECT_EQ(s.settings, (LayerSettings{"4", "128", "1"}));
  EXPECT_EQ(s.extra_config[0].written, (LayerSettings{"16", "", ""}));
  EXPECT_EQ(s.extra_config[1].written.bits, "15.9");
  EXPECT_EQ(s.extra_config[4].written.bits, "'4'");
  EXPECT_EQ(s.extra_config[7].written, (LayerSettings{"4", "-1", "0"}));
  EXPECT_EQ(s.extra_config[8].written, (LayerSettings{"", "128", "'yes'"}));
  EXPECT_EQ(s.extra_config[9].written, (LayerSettings{"None", "[...]", "{...}"}));
}

TEST(Engines, AwqSubstringAndFp8Exact)
{
  EXPECT_TRUE(
    entry_matches(Engine::vllm, QuantFormat::awq, "visual", "model.visual.blocks.0.attn.qkv"));
  EXPECT_FALSE(entry_matches(Engine::vllm, QuantFormat::fp8, "linear_attn.in_proj_qkv",
                             "model.layers.0.linear_attn.in_proj_qkv"));
  EXPECT_TRUE(entry_matches(Engine::sglang, QuantFormat::fp8, "linear_attn.in_proj_qkv",
                            "model.layers.0.linear_attn.in_proj_qkv"));
}

TEST(Engines, BitsandbytesComponentOrDottedPrefix)
{
  auto bnb = [](auto e, auto p) {
    return entry_matches(Engine::vllm, QuantFormat::bitsandbytes, e, p);
  };
  EXPECT_TRUE(bnb("lm_head", "lm_head"));
  EXPECT_TRUE(bnb("visual", "model.visual.blocks.0.attn.qkv"));
  EXPECT_TRUE(bnb("model.visual", "model.visual.blocks.0.attn.qkv"));
  EXPECT_FALSE(bnb("q_proj", "model.layers.0.self_attn.qkv_proj"));
}

// Neither engine maps llm_int8_skip_modules: each compares it with its own module names, which
// for Qwen-VL are not the checkpoint's (vLLM: language_model.model.X and visual.X in both
// layouts; SGLang: model.X and visual.X).
TEST(Engines, BitsandbytesComparesEachEnginesOwnQwenVlName)
{
  ModelInfo qwen2_vl;
  qwen2_vl.model_type = "qwen2_vl";
  EXPECT_EQ(bnb_name(Engine::vllm, &qwen2_vl, "model.layers.1.mlp.down_proj"),
            "language_model.model.layers.1.mlp.down_proj");
  EXPECT_EQ(bnb_name(Engine::vllm, &qwen2_vl, "model.language_model.layers.1.mlp.down_proj"),
            "language_model.model.layers.1.mlp.down_proj");
  EXPECT_EQ(bnb_name(Engine::vllm, &qwen2_vl, "model.visual.blocks.0.attn.qkv"),
            "visual.blocks.0.attn.qkv");
  EXPECT_EQ(bnb_name(Engine::sglang, &qwen2_vl, "model.language_model.layers.1.mlp.down_proj"),
            "model.layers.1.mlp.down_proj");
  EXPECT_EQ(bnb_name(Engine::sglang, &qwen2_vl, "model.visual.blocks.0.attn.qkv"),
            "visual.blocks.0.attn.qkv_proj"); // SGLang's VisionAttention
  EXPECT_EQ(bnb_name(Engine::sglang, &qwen2_vl, "visual.blocks.0.attn.proj"),
            "visual.blocks.0.attn.proj");
  const ModelInfo llama;
  EXPECT_EQ(bnb_name(Engine::vllm, &llama, "model.layers.1.mlp.down_proj"),
            "model.layers.1.mlp.down_proj");

  const auto skips = [&](Engine e, const char* entry, const char* name) {
    return entry_matches(e, QuantFormat::bitsandbytes, entry, name, &qwen2_vl);
  };
  EXPECT_FALSE(skips(Engine::vllm, "model.layers.1.mlp.down_proj", "model.layers.1.mlp.down_proj"));
  EXPECT_TRUE(
    skips(Engine::sglang, "model.layers.1.mlp.down_proj", "model.layers.1.mlp.down_proj"));
  EXPECT_TRUE(skips(Engine::vllm, "language_model.model.layers.1", "model.layers.1.mlp.down_proj"));
  for (const Engine e : {Engine::vllm, Engine::sglang}) {
    EXPECT_FALSE(skips(e, "model.visual", "model.visual.blocks.0.attn.qkv"));
    EXPECT_TRUE(skips(e, "visual", "model.visual.blocks.0.attn.qkv"));
  }
  EXPECT_TRUE(skips(Engine::vllm, "visual.blocks.0.attn.qkv", "visual.blocks.0.attn.qkv"));
  EXPECT_FALSE(skips(Engine::sglang, "visual.blocks.0.attn.qkv", "visual.blocks.0.attn.qkv"));
  EXPECT_TRUE(skips(Engine::sglang, "visual.blocks.0.attn.qkv_proj", "visual.blocks.0.attn.qkv"));

  const ConfigSource dotted = source(
    R"({"quant_method":"bitsandbytes","llm_int8_skip_modules":["model.layers.1.mlp.down_proj"]})");
  const EngineLayer down = layer("model.layers.1.mlp.down_proj");
  const Decision in_vllm = decide(Engine::vllm, dotted, qwen2_vl, down, false);
  EXPECT_TRUE(in_vllm.quantized);
  EXPECT_NE(in_vllm.reason.find("compared as 'language_model.model.layers.1.mlp.down_proj'"),
            std::string::npos)
    << in_vllm.reason;
  EXPECT_FALSE(decide(Engine::sglang, dotted, qwen2_vl, down, false).quantized);
  EXPECT_FALSE(decide(Engine::vllm, dotted, llama, down, false).quantized);
}

TEST(Engines, QuarkExactRegexAndGlob)
{
  auto quark = [](auto e, auto p) { return entry_matches(Engine::vllm, QuantFormat::quark, e, p); };
  EXPECT_TRUE(quark("*layers.78.*", "model.layers.78.mlp.experts"));
  EXPECT_TRUE(quark("re:model\\.layers\\.78\\..*", "model.layers.78.eh_proj"));
  EXPECT_FALSE(quark("layers.78", "model.layers.78.eh_proj"));
}

TEST(Engines, SourcePrecedence)
{
  Declaration d;
  d.sources.push_back(source(R"({"quant_method":"modelopt","quant_algo":"NVFP4","ignore":[]})"));
  ConfigSource hf = parse_quant_block(
    "hf_quant_config.json", "/quantization",
    R"({"producer":{"name":"modelopt"},"quantization":{"quant_algo":"NVFP4","exclude_modules":["x"]}})");
  d.sources.push_back(hf);
  EXPECT_EQ(source_for(d, Engine::vllm)->file, "config.json");
  EXPECT_EQ(source_for(d, Engine::sglang)->file, "config.json");
  EXPECT_EQ(source_for(d, Engine::trtllm)->file, "hf_quant_config.json");
  EXPECT_EQ(source_for(d, Engine::trtllm)->excludes, std::vector<std::string>{"x"});
  EXPECT_EQ(source_for(d, Engine::trtllm)->list_key, "exclude_modules");
}

// A block reads the same whichever parser reads it: simdjson, or nlohmann for what simdjson
// reads differently (a byte order mark, an integer past 64 bits, "-0"). Repeated keys keep the
// last value; escapes are decoded.
TEST(Engines, BlockReadsTheSameWhicheverParserReadsIt)
{
  const std::string body =
    R"("quant_method": "modelopt", "quant_algo": "nvfp4", "group_size": 16,
       "ignore": ["stale"], "ignore": ["lm_head", "model.layers.0.\u00e9*", "a\\b\"c"])";
  for (const std::string text :
       {"{" + body + "}", "\xEF\xBB\xBF{" + body + "}", "{" + body + R"(, "x": -0})",
        "{" + body + R"(, "x": 18446744073709551616})",
        "{" + body + R"(, "x": [[{"y": -1.5e-3}]]})"}) {
    const ConfigSource s = source(text);
    EXPECT_EQ(s.format, QuantFormat::modelopt) << text;
    EXPECT_EQ(s.algo, "NVFP4") << text;
    EXPECT_EQ(s.group_size, 16) << text;
    EXPECT_EQ(s.excludes,
              (std::vector<std::string>{"lm_head", "model.layers.0.\xC3\xA9*", "a\\b\"c"}))
      << text;
  }
  EXPECT_EQ(source(R"({"quant_method": "modelopt", "quant_algo": NaN})").format,
            QuantFormat::unknown);
}

namespace {

template<typename List>
std::string
joined(const List& items)
{
  std::string out = "[";
  for (const auto& item : items) {
    out += "'" + std::string(item) + "' ";
  }
  return out + "]";
}

// Every field of a declaration, as text.
std::string
describe(const Declaration& d)
{
  const ModelInfo& m = d.model;
  std::string out = fmt::format(
    "config={} model_type={} text={} architectures={} layers={} mtp={} ({}) disable={}\n",
    d.has_config, m.model_type, m.text_model_type, joined(m.architectures),
    m.num_hidden_layers ? std::to_string(*m.num_hidden_layers) : "none", m.num_mtp_layers,
    m.mtp_key, joined(m.disable_quant_module));
  for (const ConfigSource& s : d.sources) {
    out += fmt::format("{}{} {} method={} algo={} {}={} {} ct={} group_size={} bits={} lm_head={} "
                       "in_block={} blocks={} not_convert={}\n",
                       s.file, s.pointer, to_string(s.format), s.method, s.algo, s.list_key,
                       s.has_list, joined(s.excludes), s.ct_format, s.group_size, s.bits, s.lm_head,
                       joined(s.modules_in_block), joined(s.block_names), joined(s.not_convert));
    for (const CtGroup& g : s.groups) {
      out += fmt::format("  group {} {} {} {} {}\n", g.name, joined(g.targets), g.format,
                         g.num_bits, g.type);
    }
    for (const DynamicRule& r : s.dynamic) {
      out += fmt::format("  dynamic {} {} {}\n", r.key, r.negative, r.regex);
    }
    for (const ExtraConfigEntry& e : s.extra_config) {
      out += fmt::format("  extra {} {}\n", e.key, e.bits);
    }
    for (const auto& [name, algo] : s.quantized_layers) {
      out += fmt::format("  layer {} {}\n", name, algo);
    }
    for (const uint64_t size : s.weight_block_size) {
      out += fmt::format("  block {}\n", size);
    }
  }
  for (const ConfigProblem& p : d.problems) {
    out += fmt::format("problem {} {} {}\n", p.file, p.message, static_cast<int>(p.issue));
  }
  return out;
}

// The text with a member simdjson is never asked to read ("-0"), or a byte order mark: what
// nlohmann reads.
std::string
for_nlohmann(const std::string& text, bool bom)
{
  if (bom || text.find('{') == std::string::npos) {
    return "\xEF\xBB\xBF" + text;
  }
  const size_t open = text.find('{');
  return text.substr(0, open + 1) + R"("qcheck_pad": "-0", )" + text.substr(open + 1);
}

} // namespace

// read_declaration() reads clean text from simdjson's DOM and other text from an ordered_json
// tree: every field comes out the same from both, for every kind of value each block holds
// (numbers signed, unsigned, past int64, fractional; lists of lists; comma-separated strings;
// nested objects in document order).
TEST(Engines, DeclarationReadsTheSameWhicheverParserReadsIt)
{
  // Keys and values spelled with escapes, an empty key, a NUL inside a string.
  const std::map<std::string, std::string> escaped{
    {"config.json",
     R"({"model\u005ftype": "ll\u0061ma", "": {"": 1}, "quantization_config": {
          "quant\u005fmethod": "fp8", "\u0069gnored_layers": ["a\u0000b", "", "\u00e9"],
          "modules_to_not_convert": "x,\u002cy"}})"}};
  const std::vector<std::map<std::string, std::string>> folders{
    {{"config.json",
      R"({"model_type": "deepseek_v3", "architectures": ["A", 7, "B"], "num_hidden_layers": 61,
          "text_config": {"model_type": "t", "num_hidden_layers": -3, "num_nextn_predict_layers": 0},
          "mtp_config": {"num_nextn_predict_layers": 2}, "num_mtp_modules": 1.0,
          "disable_quant_module": ",a,,b,",
          "quantization_config": {"quant_method": "modelopt", "quant_algo": "mixed_precision",
            "group_size": 16, "bits": -4, "w_bit": 4, "lm_head": true,
            "modules_to_not_convert": [["x", 1, "y"], "z", null],
            "ignore": ["lm_head", "model.layers.61*"],
            "quantized_layers": {"model.layers.0.mlp": {"quant_algo": "fp8"},
                                 "model.layers.1.mlp": {"quant_algo": 3}, "q": [] }}})"},
     {"hf_quant_config.json",
      R"({"producer": {"name": "modelopt"}, "quantization": {"quant_algo": "nvfp4",
          "group_size": 16.0, "exclude_modules": ["lm_head", "a\u00e9\\b"]}})"},
     {"quantization_config.json",
      R"({"quant_method": "auto-round", "bits": 18446744073709551615, "group_size": 128,
          "block_name_to_quantize": "model.layers,mtp.layers",
          "dynamic": {"-:.*mtp.*": {}, "+:.*mlp.*": {"bits": 8}, "plain": 1},
          "extra_config": {"model.layers.0.mlp.gate": {"bits": 16}, "lm_head": {"bits": "16"},
                           "x": 5}})"}},
    {{"config.json",
      R"({"model_type": "qwen3", "num_hidden_layers": 2, "compression_config": {
          "quant_method": "compressed-tensors", "format": "float-quantized",
          "ignore": ["lm_head", "re:.*mlp.gate$"],
          "config_groups": {"group_0": {"targets": ["Linear"], "format": "nvfp4-pack-quantized",
                                        "weights": {"num_bits": 4, "type": "float"}},
                            "group_1": {"targets": "Linear,Embedding", "weights": [4]},
                            "group_2": 5}}})"}},
    {{"config.json",
      R"({"model_type": "qwen3_next", "text_config": {"model_type": "qwen3_next_text",
          "mtp_num_hidden_layers": 1, "quantization_config": {"quant_method": "fp8",
          "ignored_layers": ["a"], "modules_to_not_convert": ["b"],
          "weight_block_size": [128, -128, 1.5, 18446744073709551615, "128"]}}})"}},
    {{"config.json",
      R"({"model_type": "llama", "quantization_config": {"quant_method": "gptq", "bits": 4,
          "lm_head": false, "dynamic": {"-:model.layers.1.*": {}},
          "modules_in_block_to_quantize": [["self_attn.q_proj", "self_attn.k_proj"], ["mlp.up_proj"]]}})"},
     {"hf_quant_config.json", R"(["not", "an", "object"])"},
     {"quantization_config.json", R"({"quant_method": "quark", "exclude": null})"}},
    escaped,
    // Nested 300 deep (past the DOM's 256, within the scan's 512): read from the tree.
    {{"config.json",
      R"({"model_type": "llama", "deep": )" + std::string(300, '[') + std::string(300, ']') +
        R"(, "quantization_config": {"quant_method": "awq", "modules_to_not_convert": ["v"]}})"}},
    {{"config.json", R"({"quantization_config": {"quant_method": "AWQ", "lm_head": 1,
          "modules_to_not_convert": ["visual"]}, "text_config": 3, "mtp_config": [1]})"}},
  };
  for (const auto& files : folders) {
    std::vector<std::string> described;
    for (int variant = 0; variant < 3; ++variant) {
      MemoryFileSystem fs;
      for (const auto& [name, text] : files) {
        fs.add_file("m/" + name, variant == 0 ? text : for_nlohmann(text, variant == 2));
      }
      std::string text = describe(read_declaration(fs, "m"));
      // A byte order mark is reported (Python's json refuses it), once per file that has one;
      // the rest reads the same.
      for (const auto& [name, given] : files) {
        if (variant != 0 && for_nlohmann(given, variant == 2).starts_with("\xEF\xBB\xBF")) {
          const std::string line = fmt::format(
            "problem {} starts with a UTF-8 byte order mark, which Python's json (and so "
            "transformers and every engine) refuses; save it without one 1\n",
            name);
          const size_t at = text.find(line);
          ASSERT_NE(at, std::string::npos) << name << "\n" << text;
          text.erase(at, line.size());
        }
      }
      described.push_back(text);
    }
    EXPECT_EQ(described[0], described[1]);
    EXPECT_EQ(described[0], described[2]);
  }
  // The escaped spellings are read as what they decode to, from the DOM as from the tree.
  MemoryFileSystem fs;
  fs.add_file("m/config.json", escaped.at("config.json"));
  const Declaration d = read_declaration(fs, "m");
  EXPECT_EQ(d.model.model_type, "llama");
  ASSERT_EQ(d.sources.size(), 1u);
  EXPECT_EQ(d.sources[0].format, QuantFormat::fp8);
  // The escaped key is ignored_layers, not empty: the engines read it alone, and the second
  // list (a string) is reported as read by none.
  EXPECT_EQ(d.sources[0].list_key, "ignored_layers");
  EXPECT_EQ(d.sources[0].excludes,
            (std::vector<std::string>{std::string("a\0b", 3), "", "\xC3\xA9"}));
  ASSERT_EQ(d.problems.size(), 1u);
  EXPECT_EQ(d.problems[0].issue, ConfigIssue::unread_list);
  EXPECT_EQ(d.problems[0].message,
            "quantization_config: modules_to_not_convert is read by no engine: vLLM and SGLang "
            "read ignored_layers, which is given and not empty");
  EXPECT_EQ(d.problems[0].pointer, "/quantization_config/modules_to_not_convert");
}

// read_declaration() keeps the text of each file it parsed, as read (for finding positions):
// from the DOM and from the tree replayed from it (a repeated key); not a file that is not an
// object, nor one that is not JSON, nor one parsed from a copy (simdjson does not read "-0" as
// Python does) whose reading is released.
TEST(Engines, DeclarationKeepsTheTextsItParsed)
{
  const std::map<std::string, std::string> files{
    {"config.json", R"({"model_type": "llama", "quantization_config": {"quant_method": "fp8",
                        "ignored_layers": ["lm_head"]}})"},
    {"hf_quant_config.json",
     R"({"quantization": {"quant_algo": "NVFP4", "quant_algo": "NVFP4", "exclude_modules": []}})"},
    {"quantization_config.json", R"({"quant_method": "auto-round", )"},
  };
  for (const std::string replaced : {"", "[1, 2]", R"({"quantization_config": {"bits": -0}})"}) {
    const bool object = replaced.empty();
    MemoryFileSystem fs;
    for (const auto& [name, text] : files) {
      fs.add_file("m/" + name, object || name != "config.json" ? text : replaced);
    }
    const Declaration d = read_declaration(fs, "m");
    std::map<std::string, std::string> kept;
    for (const auto& [name, text] : d.texts) {
      kept.emplace(name, std::string(text.bytes));
    }
    std::map<std::string, std::string> expected{
      {"hf_quant_config.json", files.at("hf_quant_config.json")}};
    if (object) {
      expected.emplace("config.json", files.at("config.json"));
    }
    EXPECT_EQ(kept, expected) << replaced;
  }
}

// An EntryList's views point into blocks that never move: a view taken early still reads its
// entry after the list has grown past many blocks (an entry longer than a block included).
TEST(EntryList, ViewsStayValidWhileTheListGrows)
{
  EntryList list;
  std::vector<std::string> expected;
  std::vector<std::string_view> early;
  for (size_t i = 0; i < 20'000; ++i) {
    expected.push_back(i == 7 ? std::string(100'000, 'x') : "model.layers." + std::to_string(i));
    list.push_back(expected.back());
    if (i < 10) {
      early.push_back(list[i]);
    }
  }
  ASSERT_EQ(list.size(), expected.size());
  EXPECT_TRUE(list == expected);
  for (size_t i = 0; i < early.size(); ++i) {
    EXPECT_EQ(early[i], expected[i]);
  }
  EXPECT_EQ(list.front(), "model.layers.0");
  EXPECT_EQ(list.back(), "model.layers.19999");
  EXPECT_TRUE(EntryList().empty());
  EXPECT_TRUE(EntryList() == EntryList());
}

// Copies share the entries; writing to one copies them first, and the other list, with the
// views into it, is left as it was.
TEST(EntryList, CopiesShareTheEntriesUntilOneIsWritten)
{
  const EntryList a{"lm_head", "model.layers.61*", ""};
  EntryList b = a;
  EXPECT_EQ(a.data(), b.data());
  EXPECT_TRUE(a == b);
  const std::string_view kept = a[1];
  b.push_back("mtp.fc");
  b.insert(0, "model.visual");
  EXPECT_NE(a.data(), b.data());
  EXPECT_TRUE(a == (std::vector<std::string>{"lm_head", "model.layers.61*", ""}));
  EXPECT_TRUE(
    b == (std::vector<std::string>{"model.visual", "lm_head", "model.layers.61*", "", "mtp.fc"}));
  EXPECT_FALSE(a == b);
  EXPECT_EQ(kept, "model.layers.61*");
  EXPECT_EQ(kept.data(), a[1].data());
}

// config.json and hf_quant_config.json carrying the same list keep it once; different lists
// stay apart.
TEST(EntryList, TheSameListInTwoFilesIsKeptOnce)
{
  for (const bool same : {true, false}) {
    MemoryFileSystem fs;
    fs.add_file("m/config.json",
                R"({"model_type":"deepseek_v3","quantization_config":{"quant_method":"modelopt",)"
                R"("quant_algo":"NVFP4","ignore":["lm_head","model.layers.61*"]}})");
    fs.add_file("m/hf_quant_config.json",
                std::string(R"({"producer":{"name":"modelopt"},"quantization":{)"
                            R"("quant_algo":"NVFP4","exclude_modules":["lm_head",)") +
                  (same ? R"("model.layers.61*"]}})" : R"("model.layers.6*"]}})"));
    const Declaration d = read_declaration(fs, "m");
    ASSERT_EQ(d.sources.size(), 2u);
    EXPECT_EQ(d.sources[0].excludes.data() == d.sources[1].excludes.data(), same);
    EXPECT_EQ(d.sources[0].excludes == d.sources[1].excludes, same);
    EXPECT_EQ(d.sources[1].excludes.back(), same ? "model.layers.61*" : "model.layers.6*");
  }
}

// A list read from a configuration's text keeps each entry the text spells without an escape as
// a view into that text (Declaration::texts keeps it), copies the others, and knows where the
// array and each element's string token are.
TEST(EntryList, ReadInPlaceKeepsViewsIntoTheConfigText)
{
  MemoryFileSystem fs;
  fs.add_file("m/config.json",
              "{\"model_type\": \"deepseek_v3\",\n \"quantization_config\": {\"quant_method\": "
              "\"modelopt\", \"quant_algo\": \"NVFP4\",\n  \"ignore\" :\t[ \"lm_head\",\n"
              "   \"re:model\\\\.layers\\\\.7\\\\..*\" ,\"model.layers.\\u0039.mlp\",\"\", "
              "\"model.layers.61*\"\r\n]}}");
  const Declaration d = read_declaration(fs, "m");
  ASSERT_EQ(d.sources.size(), 1u);
  ASSERT_EQ(d.texts.size(), 1u);
  const std::string_view text = d.texts[0].second.bytes;
  const EntryList& list = d.sources[0].excludes;
  ASSERT_TRUE(list == (std::vector<std::string>{"lm_head", R"(re:model\.layers\.7\..*)",
                                                "model.layers.9.mlp", "", "model.layers.61*"}));
  const auto in_text = [&](std::string_view entry) {
    return entry.data() >= text.data() && entry.data() + entry.size() <= text.data() + text.size();
  };
  EXPECT_TRUE(in_text(list[0]));
  EXPECT_FALSE(in_text(list[1])); // escaped: a copy
  EXPECT_FALSE(in_text(list[2]));
  EXPECT_TRUE(in_text(list[4]));
  const EntryList::TextSpan* span = list.read_span(text);
  ASSERT_NE(span, nullptr);
  EXPECT_TRUE(text.substr(span->key).starts_with("\"ignore\" :"));
  EXPECT_EQ(text.substr(span->begin, 1), "[");
  EXPECT_EQ(span->end, text.rfind(']') + 1);
  const std::vector<std::string_view> tokens{"\"lm_head\"", R"("re:model\\.layers\\.7\\..*")",
                                             R"("model.layers.\u0039.mlp")", "\"\"",
                                             "\"model.layers.61*\""};
  for (size_t i = 0; i < tokens.size(); ++i) {
    const auto token = list.element_token(text, i);
    ASSERT_TRUE(token) << i;
    EXPECT_EQ(text.substr(token->first, token->second - token->first), tokens[i]) << i;
  }
  EXPECT_FALSE(list.element_token(text, tokens.size()));
  // Another text, even with the same bytes, is not the one read.
  const std::string copy(text);
  EXPECT_EQ(list.read_span(copy), nullptr);
  EXPECT_FALSE(list.element_token(copy, 0));
}

// Writing to a list (or a copy of it) forgets where it was read; the lists it shared its entries
// with keep knowing.
TEST(EntryList, WritingForgetsWhereTheListWasRead)
{
  MemoryFileSystem fs;
  fs.add_file("m/config.json",
              R"({"quantization_config": {"quant_method": "modelopt", "quant_algo": "NVFP4", )"
              R"("ignore": ["lm_head", "model.layers.61*"]}})");
  const Declaration d = read_declaration(fs, "m");
  ASSERT_EQ(d.sources.size(), 1u);
  const std::string_view text = d.texts.at(0).second.bytes;
  EntryList a = d.sources[0].excludes;
  EntryList b = a;
  ASSERT_NE(a.read_span(text), nullptr);
  ASSERT_NE(b.read_span(text), nullptr);
  b.push_back("mtp.fc");
  EXPECT_EQ(b.read_span(text), nullptr);
  EXPECT_FALSE(b.element_token(text, 0));
  EXPECT_NE(a.read_span(text), nullptr);
  EXPECT_NE(d.sources[0].excludes.read_span(text), nullptr);
  EntryList c = d.sources[0].excludes;
  c.insert(0, "model.visual");
  EXPECT_EQ(c.read_span(text), nullptr);
  a.forget_reading();
  EXPECT_EQ(a.read_span(text), nullptr);
  EXPECT_NE(d.sources[0].excludes.read_span(text), nullptr);
  EXPECT_TRUE(a == d.sources[0].excludes);
  // A list holding its entries alone is written in place, and forgets too.
  Declaration alone = read_declaration(fs, "m");
  EntryList& list = alone.sources.at(0).excludes;
  const std::string_view its_text = alone.texts.at(0).second.bytes;
  ASSERT_NE(list.read_span(its_text), nullptr);
  list.insert(2, "mtp.fc");
  EXPECT_EQ(list.read_span(its_text), nullptr);
  EXPECT_FALSE(list.element_token(its_text, 0));
  EXPECT_TRUE(list == (std::vector<std::string>{"lm_head", "model.layers.61*", "mtp.fc"}));
}

// config.json and hf_quant_config.json holding one list keep its entries once, and both texts'
// readings: each file's elements are found in that file's text.
TEST(EntryList, OneListInTwoFilesKnowsBothReadings)
{
  MemoryFileSystem fs;
  fs.add_file("m/config.json",
              R"({"model_type":"deepseek_v3","quantization_config":{"quant_method":"modelopt",)"
              R"("quant_algo":"NVFP4","ignore":["lm_head","model.layers.61*"]}})");
  fs.add_file("m/hf_quant_config.json",
              "{\"producer\": {\"name\": \"modelopt\"},\n  \"quantization\": {\n    "
              "\"quant_algo\": \"NVFP4\",\n    \"exclude_modules\": [\n      \"lm_head\",\n"
              "      \"model.layers.61*\"\n    ]\n  }\n}\n");
  const Declaration d = read_declaration(fs, "m");
  ASSERT_EQ(d.sources.size(), 2u);
  ASSERT_EQ(d.texts.size(), 2u);
  EXPECT_EQ(d.sources[0].excludes.data(), d.sources[1].excludes.data());
  for (const auto& [file, bytes] : d.texts) {
    const std::string_view text = bytes.bytes;
    for (const ConfigSource& s : d.sources) {
      const EntryList::TextSpan* span = s.excludes.read_span(text);
      ASSERT_NE(span, nullptr) << file;
      EXPECT_TRUE(text.substr(span->key).starts_with(
        file == "config.json" ? "\"ignore\"" : "\"exclude_modules\""));
      const auto token = s.excludes.element_token(text, 1);
      ASSERT_TRUE(token) << file;
      EXPECT_EQ(text.substr(token->first, token->second - token->first), "\"model.layers.61*\"");
      EXPECT_EQ(text.substr(0, token->first).find('\n') == std::string_view::npos,
                file == "config.json");
    }
  }
}

TEST(Engines, NamespaceHelpers)
{
  EXPECT_EQ(strip_language_model("model.language_model.layers.45.eh_proj"),
            "model.layers.45.eh_proj");
  EXPECT_EQ(strip_language_model("language_model.model.layers.1"), "model.layers.1");
  EXPECT_EQ(strip_language_model("mtp.fc"), "mtp.fc");
  EXPECT_EQ(vllm_namespace("model.language_model.layers.0.mlp"),
            "language_model.model.layers.0.mlp");
  EXPECT_EQ(vllm_namespace("model.visual.blocks.0"), "visual.blocks.0");
}

// How each engine compares a fused layer's names, per format (what the loaders' own
// is_layer_skipped functions read): AWQ substrings, vLLM on the shards alone and SGLang on the
// fused name alone; bitsandbytes the fused name alone in both (no fused mapping); vLLM FP8 the
// shards exactly, a fused MoE by its prefix, which an entry naming one expert contains.
TEST(Engines, FusedLayersAreComparedAsEachLoaderDoes)
{
  const EngineLayer gate_up = layer("model.layers.1.mlp.gate_up_proj", LayerKind::linear,
                                    {"model.layers.1.mlp.gate_proj", "model.layers.1.mlp.up_proj"});
  const auto quantized = [&](Engine engine, const std::string& config, const EngineLayer& l) {
    return decide(engine, source(config), {}, l, false).quantized;
  };
  const std::string awq_shards =
    R"({"quant_method":"awq","modules_to_not_convert":["mlp.gate_proj","mlp.up_proj"]})";
  EXPECT_FALSE(quantized(Engine::vllm, awq_shards, gate_up));
  EXPECT_TRUE(quantized(Engine::sglang, awq_shards, gate_up));
  const std::string awq_fused =
    R"({"quant_method":"awq","modules_to_not_convert":["mlp.gate_up_proj"]})";
  EXPECT_TRUE(quantized(Engine::vllm, awq_fused, gate_up));
  EXPECT_FALSE(quantized(Engine::sglang, awq_fused, gate_up));
  // SGLang infers nothing from an empty list: everything is quantized.
  const std::string awq_empty = R"({"quant_method":"awq","modules_to_not_convert":[]})";
  EXPECT_TRUE(decide(Engine::vllm, source(awq_empty), {}, gate_up, false).inferred);
  EXPECT_TRUE(quantized(Engine::sglang, awq_empty, gate_up));

  // bitsandbytes: a shard's leaf alone neither skips the fused layer nor splits it.
  const std::string bnb_leaf =
    R"({"quant_method":"bitsandbytes","llm_int8_skip_modules":["gate_proj"]})";
  for (const Engine engine : {Engine::vllm, Engine::sglang}) {
    const Decision d = decide(engine, source(bnb_leaf), {}, gate_up, false);
    EXPECT_TRUE(d.quantized);
    EXPECT_FALSE(d.shards_disagree);
  }
  EXPECT_FALSE(quantized(
    Engine::vllm, R"({"quant_method":"bitsandbytes","llm_int8_skip_modules":["mlp"]})", gate_up));

  const EngineLayer moe =
    layer("model.layers.1.mlp.experts", LayerKind::fused_moe,
          {"model.layers.1.mlp.experts.0.gate_proj", "model.layers.1.mlp.experts.0.up_proj"});
  const std::string fp8_one_expert =
    R"({"quant_method":"fp8","modules_to_not_convert":["model.layers.1.mlp.experts.0.gate_proj"]})";
  EXPECT_FALSE(quantized(Engine::vllm, fp8_one_expert, moe));
  const std::string fp8_fused =
    R"({"quant_method":"fp8","modules_to_not_convert":["model.layers.1.mlp.gate_up_proj"]})";
  EXPECT_TRUE(quantized(Engine::vllm, fp8_fused, gate_up));
}

TEST(Engines, DraftOverridesAreNamed)
{
  ModelInfo qwen;
  qwen.model_type = "qwen3_5";
  EngineLayer fc = layer("mtp.fc");
  fc.draft = true;
  fc.draft_root = "mtp";
  const ConfigSource nvfp4 =
    source(R"({"quant_method":"modelopt","quant_algo":"NVFP4","ignore":[]})");
  const Decision d = decide(Engine::vllm, nvfp4, qwen, fc, false);
  EXPECT_FALSE(d.quantized);
  EXPECT_EQ(d.override_note, "vLLM forces mtp.fc unquantized for modelopt_fp4 (Qwen3-Next/3.5)");
  // Not a Qwen MTP family: no override.
  EXPECT_TRUE(decide(Engine::vllm, nvfp4, {}, fc, false).quantized);
}

// SGLang's DeepSeek-V3 NextN draft maps "model.layers.61" in list names to "model.decoder": its
// draft layers are decided against the mapped names, with or without a compiled list (and a list
// compiled for another block with the same entries maps this block's own names); other engines,
// main-model layers, other architectures and Quark are not mapped.
TEST(Engines, SglangMapsDeepseekLayer61ForItsDraft)
{
  ModelInfo deepseek;
  deepseek.architectures = {"DeepseekV3ForCausalLM"};
  deepseek.model_type = "deepseek_v3";
  ModelInfo glm;
  glm.architectures = {"Glm4MoeForCausalLM"};
  glm.model_type = "glm4_moe";
  EngineLayer draft = layer("model.decoder.self_attn.o_proj");
  draft.draft = true;
  draft.draft_root = "model.layers.61";
  const EngineLayer main = layer("model.decoder.self_attn.o_proj"); // not a draft
  const ConfigSource fp8 =
    source(R"({"quant_method":"modelopt","quant_algo":"FP8","ignore":["model.layers.61*"]})");
  const Decision d = decide(Engine::sglang, fp8, deepseek, draft, false);
  EXPECT_FALSE(d.quantized);
  EXPECT_EQ(d.matched, "model.layers.61*");
  EXPECT_NE(d.reason.find("'model.layers.61*' (SGLang's DeepSeek NextN loader reads it as "
                          "'model.decoder*')"),
            std::string::npos)
    << d.reason;
  const CompiledList compiled(Engine::sglang, fp8);
  EXPECT_FALSE(decide(Engine::sglang, fp8, deepseek, draft, false, &compiled).quantized);
  EXPECT_TRUE(decide(Engine::sglang, fp8, deepseek, main, false).quantized);
  EXPECT_TRUE(decide(Engine::sglang, fp8, glm, draft, false).quantized);
  EXPECT_TRUE(decide(Engine::vllm, fp8, deepseek, draft, false).quantized);
  ConfigSource quark = fp8;
  quark.format = QuantFormat::quark;
  EXPECT_TRUE(decide(Engine::sglang, quark, deepseek, draft, false).quantized);
  EXPECT_EQ(sglang_draft_entry(QuantFormat::modelopt, deepseek, "a.model.layers.61.b"),
            "a.model.decoder.b");
  EXPECT_EQ(sglang_draft_entry(QuantFormat::modelopt, deepseek, "model.layers.6"), std::nullopt);
  EXPECT_EQ(sglang_draft_entry(QuantFormat::quark, deepseek, "model.layers.61"), std::nullopt);
  EXPECT_EQ(sglang_draft_entry(QuantFormat::fp8, glm, "model.layers.61"), std::nullopt);
  // MIXED_PRECISION: two blocks with the same excludes share a compiled list; one selects the
  // draft's layer under its mapped name, the other under the name SGLang builds. The list's
  // mapping, made for the block decided first, does not decide the other.
  const ConfigSource mapped_key =
    source(R"({"quant_method":"modelopt","quant_algo":"MIXED_PRECISION","ignore":["lm_head"],)"
           R"("quantized_layers":{"model.layers.61.self_attn.o_proj":{"quant_algo":"FP8"}}})");
  const ConfigSource engine_key =
    source(R"({"quant_method":"modelopt","quant_algo":"MIXED_PRECISION","ignore":["lm_head"],)"
           R"("quantized_layers":{"model.decoder.mlp.down_proj":{"quant_algo":"FP8"}}})");
  EXPECT_TRUE(decide(Engine::sglang, mapped_key, deepseek, draft, false).quantized);
  EXPECT_FALSE(decide(Engine::sglang, engine_key, deepseek, draft, false).quantized);
  const CompiledList shared(Engine::sglang, engine_key);
  EXPECT_FALSE(decide(Engine::sglang, engine_key, deepseek, draft, false, &shared).quantized);
  EXPECT_TRUE(decide(Engine::sglang, mapped_key, deepseek, draft, false, &shared).quantized);
  // compressed-tensors decides fused experts stored fused from expert 0's projections, names no
  // shard holds: a long list's entries for them are still offered to the mapped decision.
  EngineLayer experts = layer("model.decoder.mlp.experts", LayerKind::fused_moe);
  experts.draft = true;
  experts.draft_root = "model.layers.61";
  std::string ignore = R"("lm_head", "model.layers.61.eh_proj")";
  for (int i = 0; i < 20; ++i) {
    ignore += fmt::format(R"(, "model.layers.0.mlp.experts.{}.down_proj")", i);
  }
  for (const char* proj : {"gate_proj", "up_proj", "down_proj"}) {
    ignore += fmt::format(R"(, "model.decoder.mlp.experts.0.{}")", proj);
  }
  const ConfigSource ct =
    source(R"({"quant_method":"compressed-tensors","format":"float-quantized","config_groups":)"
           R"({"group_0":{"targets":["Linear"],"weights":{"num_bits":8,"type":"float",)"
           R"("strategy":"tensor"}}},"ignore":[)" +
           ignore + "]}");
  EXPECT_FALSE(decide(Engine::sglang, ct, deepseek, experts, false).quantized);
  const CompiledList ct_list(Engine::sglang, ct);
  EXPECT_FALSE(decide(Engine::sglang, ct, deepseek, experts, false, &ct_list).quantized);
  // A target that selects the experts once mapped is named as written, though an ignore entry
  // (which cannot match a fused MoE layer's prefix) reads like its mapped text.
  const ConfigSource targeted =
    source(R"({"quant_method":"compressed-tensors","format":"float-quantized","config_groups":)"
           R"({"group_0":{"targets":["model.layers.61.mlp.experts"],"weights":{"num_bits":8,)"
           R"("type":"float","strategy":"tensor"}}},"ignore":["model.decoder.mlp.experts"]})");
  const Decision by_target = decide(Engine::sglang, targeted, deepseek, experts, true);
  EXPECT_TRUE(by_target.quantized);
  EXPECT_EQ(by_target.matched, "model.layers.61.mlp.experts");
  EXPECT_NE(by_target.reason.find("target 'model.layers.61.mlp.experts' (SGLang's DeepSeek NextN "
                                  "loader reads it as 'model.decoder.mlp.experts') of group_0"),
            std::string::npos)
    << by_target.reason;
}

namespace {

// Random dotted names and entries over the spellings the matchers treat specially.
struct NameMaker
{
  test::Lcg next{99};
  std::string name()
  {
    static const std::vector<std::string> k_roots{"model",
                                                  "model.language_model",
                                                  "language_model.model",
                                                  "language_model",
                                                  "mtp",
                                                  "model.visual",
                                                  "Model"};
    static const std::vector<std::string> k_parts{"layers",
                                                  "0",
                                                  "1",
                                                  "45",
                                                  "mlp",
                                                  "experts",
                                                  "7",
                                                  "down_proj",
                                                  "gate",
                                                  "q_a_proj",
                                                  "fused_qkv_a_proj_with_mqa",
                                                  "kv_b_proj",
                                                  "self_attn",
                                                  "shared_experts",
                                                  "Down_Proj",
                                                  "lm_head",
                                                  "fc",
                                                  "experts.0"};
    std::string out = k_roots[next(k_roots.size())];
    for (size_t i = next(5); i > 0; --i) {
      out += "." + k_parts[next(k_parts.size())];
    }
    return out;
  }
  std::vector<std::string> names(size_t count)
  {
    std::vector<std::string> out;
    for (size_t i = 0; i < count; ++i) {
      out.push_back(name());
    }
    return out;
  }
  std::string entry(const std::vector<std::string>& names)
  {
    std::string e = next(2) ? names[next(names.size())] : name();
    switch (next(9)) {
    case 0: // a substring cut anywhere
      if (e.size() > 2) {
        const size_t a = next(e.size() - 1);
        e = e.substr(a, 1 + next(e.size() - a));
      }
      break;
    case 1:
      e += "*";
      break;
    case 2:
      e = e.substr(0, next(e.size() + 1)) + "*" + e.substr(next(e.size() + 1) % (e.size() + 1));
      break;
    case 3:
      e = "*" + e.substr(e.size() / 2);
      break;
    case 4:
      if (!e.empty()) {
        e[next(e.size())] = "?[]"[next(3)];
      }
      break;
    case 5:
      e = "re:" + e.substr(0, e.size() / 2) + ".*";
      break;
    case 6:
      e += ".*";
      break;
    case 7: // a shard of a fused MLA projection: same parent, another leaf
      e = e.substr(0, e.rfind('.') + 1) + (next(2) ? "q_a_proj" : "kv_a_proj_with_mqa");
      break;
    default:
      break;
    }
    return e;
  }
};

// The formats whose exclusion lists engines match entry by entry.
constexpr std::array k_list_formats{QuantFormat::modelopt, QuantFormat::compressed_tensors,
                                    QuantFormat::quark,    QuantFormat::bitsandbytes,
                                    QuantFormat::fp8,      QuantFormat::awq};

// Each engine's list of `s` compiled apart, then each compiled with the others' (one index for
// engines that share one, searched once per name): every check of a compiled list runs on both.
struct EngineLists
{
  std::vector<CompiledList> apart;
  std::vector<CompiledList> together;
  std::vector<std::pair<Engine, const CompiledList*>> lists;
  auto begin() const { return lists.begin(); }
  auto end() const { return lists.end(); }
};

EngineLists
engine_lists(const ConfigSource& s)
{
  EngineLists out;
  for (Engine engine : k_all_engines) {
    out.apart.emplace_back(engine, s);
  }
  out.together = CompiledList::compile(k_all_engines, s);
  for (const auto* lists : {&out.apart, &out.together}) {
    for (size_t i = 0; i < k_all_engines.size(); ++i) {
      out.lists.emplace_back(k_all_engines[i], &(*lists)[i]);
    }
  }
  return out;
}

} // namespace

// A compiled list may only skip entries that cannot match: every entry entry_matches() accepts
// for a name must be among the candidates, for every format and engine.
TEST(Engines, CompiledListCandidatesIncludeEveryMatch)
{
  NameMaker maker;
  const std::vector<std::string> names = maker.names(300);
  size_t matches = 0;
  for (QuantFormat format : k_list_formats) {
    // Mixed lists, and lists of plain names only (substring engines then index no glob at all).
    for (const bool literal_only : {false, true}) {
      ConfigSource s;
      s.format = format;
      while (s.excludes.size() < 400) {
        std::string e = maker.entry(names);
        if (!literal_only ||
            (e.find_first_of("*?[]") == std::string::npos && !e.starts_with("re:"))) {
          s.excludes.push_back(std::move(e));
        }
      }
      for (const auto& [engine, compiled] : engine_lists(s)) {
        const CompiledList& list = *compiled;
        std::vector<uint32_t> found;
        for (const std::string& name : names) {
          found.clear();
          list.candidates(name, found);
          ASSERT_TRUE(std::is_sorted(found.begin(), found.end()));
          for (uint32_t i = 0; i < s.excludes.size(); ++i) {
            if (entry_matches(engine, format, s.excludes[i], name)) {
              ++matches;
              ASSERT_TRUE(std::binary_search(found.begin(), found.end(), i))
                << to_string(engine) << " format " << static_cast<int>(format) << ": entry '"
                << s.excludes[i] << "' matches '" << name << "' but is not a candidate";
            }
          }
        }
      }
    }
  }
  EXPECT_GT(matches, 10000u);
}

namespace {

// A block of `format` quantizing every Linear but the `entries` entries of its ignore list, made
// from `names`.
ConfigSource
listing_block(QuantFormat format, NameMaker& maker, const std::vector<std::string>& names,
              size_t entries)
{
  ConfigSource s;
  s.format = format;
  s.list_key = "ignore";
  s.groups.push_back({"group_0", {"Linear"}, {}});
  while (s.excludes.size() < entries) {
    s.excludes.push_back(maker.entry(names));
  }
  return s;
}

// decide() with and without a compiled list: the same decision, entry, reason and shard detail.
// `plain` is the decision without it.
void
decide_both_ways(Engine engine, const ConfigSource& s, const EngineLayer& l,
                 const CompiledList& list, Decision& plain)
{
  const ModelInfo model;
  plain = decide(engine, s, model, l, true);
  const Decision fast = decide(engine, s, model, l, true, &list);
  ASSERT_EQ(fast.quantized, plain.quantized) << l.prefix;
  ASSERT_EQ(fast.matched, plain.matched) << l.prefix;
  ASSERT_EQ(fast.reason, plain.reason) << l.prefix;
  ASSERT_EQ(fast.shard_detail, plain.shard_detail) << l.prefix;
}

} // namespace

// Short and long lists, with and without digits, decided with a compiled list (whose answers
// from entries blind to digits are remembered per digit signature when the other entries are
// few) and without: the same decisions, over families of names that differ only in their
// numbers.
TEST(Engines, DecideRemembersAnswersOnlyWhereDigitsCannotMatter)
{
  NameMaker maker;
  const auto renumber = [&](const std::string& name) {
    std::string out;
    for (size_t i = 0; i < name.size(); ++i) {
      if (std::isdigit(static_cast<unsigned char>(name[i]))) {
        while (i + 1 < name.size() && std::isdigit(static_cast<unsigned char>(name[i + 1]))) {
          ++i;
        }
        out += std::to_string(maker.next(3) == 0 ? 0 : maker.next(300));
      } else {
        out += name[i];
      }
    }
    return out;
  };
  std::vector<std::string> bases = maker.names(60);
  bases.push_back("model.layers.1.mlp.down_proj");
  bases.push_back("model.layers.1.mlp.experts.2.up_proj");
  size_t blind_lists = 0, mixed_lists = 0, excluded = 0;
  for (int round = 0; round < 60; ++round) {
    for (QuantFormat format : k_list_formats) {
      ConfigSource s;
      s.format = format;
      s.list_key = "ignore";
      s.groups.push_back({"group_0", {"Linear"}, {}});
      // Every entry without digits, every entry as made, or a few with them among the others.
      const int kind = round % 3;
      for (size_t i = 1 + maker.next(round % 4 == 0 ? 40 : 6); i > 0; --i) {
        std::string e = maker.entry(bases);
        if (kind == 0 || (kind == 2 && maker.next(4) != 0)) {
          std::erase_if(e, [](char c) { return std::isdigit(static_cast<unsigned char>(c)); });
        }
        s.excludes.push_back(e);
      }
      if (kind != 1 && maker.next(2) == 0) {
        s.excludes.push_back("*layers.?.mlp*"); // no digit, yet "?" tells 7 from 17
      }
      if (kind == 2) { // entries that name one number among their siblings
        s.excludes.insert(maker.next(2), renumber(bases[maker.next(bases.size())]));
        s.excludes.push_back(renumber(bases[maker.next(bases.size())]) + "*");
      }
      const auto blind = std::count_if(s.excludes.begin(), s.excludes.end(),
                                       [](std::string_view e) { return blind_to_digits(e); });
      blind_lists += static_cast<size_t>(blind) == s.excludes.size() ? 1 : 0;
      mixed_lists += blind > 0 && static_cast<size_t>(blind) < s.excludes.size() ? 1 : 0;
      for (const auto& [engine, compiled] : engine_lists(s)) {
        const CompiledList& list = *compiled;
        for (int i = 0; i < 30; ++i) {
          const std::string& base = bases[maker.next(bases.size())];
          const std::string& shard = bases[maker.next(bases.size())];
          EngineLayer l = layer(renumber(base), i % 2 ? LayerKind::fused_moe : LayerKind::linear,
                                {renumber(shard), renumber(shard), renumber(shard)});
          Decision plain;
          ASSERT_NO_FATAL_FAILURE(decide_both_ways(engine, s, l, list, plain));
          excluded += plain.quantized ? 0 : 1;
        }
      }
    }
  }
  EXPECT_GT(blind_lists, 20u);
  EXPECT_GT(mixed_lists, 20u);
  EXPECT_GT(excluded, 500u);
}

// What lets the unused-entry check try an entry blind to digits on one name per signature:
// entry_matches() gives every name of a signature the same answer, in every format and engine.
TEST(Engines, EntryMatchesIsBlindToDigitsWhereTheEntryIs)
{
  NameMaker maker;
  std::vector<std::string> names = maker.names(300);
  names.push_back("model.layers.1.mlp.down_proj");
  size_t blind = 0, hits = 0;
  for (int i = 0; i < 3000; ++i) {
    std::string entry = maker.entry(names);
    std::erase_if(entry, [](char c) { return std::isdigit(static_cast<unsigned char>(c)); });
    if (i % 10 == 0) {
      entry = "*layers.?.mlp*";
    }
    const std::string& name = names[maker.next(names.size())];
    std::string other;
    for (char c : name) { // the name with every digit run one digit longer
      other += c;
      if (std::isdigit(static_cast<unsigned char>(c))) {
        other += '9';
      }
    }
    std::string a, b;
    if (!digit_signature(name, a) || !digit_signature(other, b) || a != b || name == other) {
      continue;
    }
    for (QuantFormat format : k_list_formats) {
      for (Engine engine : k_all_engines) {
        const bool x = entry_matches(engine, format, entry, name);
        const bool y = entry_matches(engine, format, entry, other);
        hits += x ? 1 : 0;
        if (blind_to_digits(entry)) {
          ++blind;
          ASSERT_EQ(x, y) << to_string(engine) << " format " << static_cast<int>(format)
                          << " entry '" << entry << "' names '" << name << "', '" << other << "'";
        }
      }
    }
  }
  EXPECT_GT(blind, 5000u);
  EXPECT_GT(hits, 300u);
}

TEST(Patterns, DigitSignatureFoldsEachRunOfDigits)
{
  std::string a, b;
  ASSERT_TRUE(digit_signature("model.layers.3.mlp.experts.17.w1", a));
  ASSERT_TRUE(digit_signature("model.layers.45.mlp.experts.0.w9", b));
  EXPECT_EQ(a, b);
  EXPECT_EQ(a, "model.layers.\x01.mlp.experts.\x01.w\x01");
  ASSERT_TRUE(digit_signature("model.layers.3a", b));
  EXPECT_NE(a, b);
  EXPECT_FALSE(digit_signature("odd\x01name", a)); // would be ambiguous
  for (const auto& [name, signature] : std::vector<std::pair<std::string, std::string>>{
         {"12x345", "\x01x\x01"}, {"a9", "a\x01"}, {"", ""}, {"/:.", "/:."}, {"0", "\x01"}}) {
    ASSERT_TRUE(digit_signature(name, a)) << name;
    EXPECT_EQ(a, signature) << name;
  }
  EXPECT_TRUE(blind_to_digits("*mlp.gate"));
  EXPECT_TRUE(blind_to_digits("lm_head"));
  EXPECT_FALSE(blind_to_digits("model.layers.1"));
  EXPECT_FALSE(blind_to_digits("model.layers.?.mlp"));
  EXPECT_FALSE(blind_to_digits("model.layers.[ab].mlp"));
  EXPECT_FALSE(blind_to_digits("re:.*gate"));
  EXPECT_FALSE(blind_to_digits("lm_head]"));
  EXPECT_FALSE(blind_to_digits("9"));
  EXPECT_TRUE(blind_to_digits(""));
}

// same_digit_signature() compares as digit_signature() would, without writing signatures.
namespace {

// A name of up to `most` - 1 pieces drawn from `pieces`.
std::string
name_of_pieces(test::Lcg& next, const std::vector<std::string>& pieces, size_t most)
{
  std::string name;
  for (size_t n = next(most); n > 0; --n) {
    name += pieces[next(pieces.size())];
  }
  return name;
}

} // namespace

// The last ".experts." of a name, found as rfind() finds it, on names built of pieces that
// make near misses ("experts" first or last, "xexperts", "experts.experts", "..experts").
TEST(Patterns, FusedMoePrefixIsWhatPrecedesTheLastExpertsMarker)
{
  EXPECT_EQ(fused_moe_prefix("model.layers.3.mlp.experts.17.down_proj"),
            "model.layers.3.mlp.experts");
  EXPECT_EQ(fused_moe_prefix("experts.1.w1"), "");
  EXPECT_EQ(fused_moe_prefix("a.experts."), "a.experts");
  EXPECT_EQ(fused_moe_prefix(".experts."), ".experts");
  EXPECT_EQ(fused_moe_prefix("a.experts"), "");
  EXPECT_EQ(fused_moe_prefix("a.experts.experts.1"), "a.experts.experts");
  EXPECT_EQ(fused_moe_prefix(""), "");
  static const std::vector<std::string> k_pieces{".",  "experts", "expert", "s",         "x", "7",
                                                 ".e", "xperts.", "mlp",    ".experts.", "s."};
  test::Lcg next{5};
  for (int i = 0; i < 50000; ++i) {
    const std::string name = name_of_pieces(next, k_pieces, 9);
    const size_t pos = name.rfind(".experts.");
    const std::string_view expected =
      pos == std::string::npos ? std::string_view() : std::string_view(name).substr(0, pos + 8);
    const std::string_view found = fused_moe_prefix(name);
    ASSERT_EQ(found, expected) << name;
    ASSERT_TRUE(found.empty() || found.data() == name.data()) << name; // a view of the name
  }
}

// leaf_of() against rfind('.'), on random dotted names (empty components, a dot first or last).
TEST(Patterns, LeafOfIsWhatFollowsTheLastDot)
{
  EXPECT_EQ(leaf_of("model.layers.3.mlp"), "mlp");
  EXPECT_EQ(leaf_of("lm_head"), "lm_head");
  EXPECT_EQ(leaf_of("a."), "");
  EXPECT_EQ(leaf_of(""), "");
  static const std::vector<std::string> k_pieces{".", "layers", "7", "x", "..", "down_proj"};
  test::Lcg next{11};
  for (int i = 0; i < 20000; ++i) {
    const std::string name = name_of_pieces(next, k_pieces, 12);
    const size_t dot = name.rfind('.');
    const std::string_view expected =
      dot == std::string::npos ? std::string_view(name) : std::string_view(name).substr(dot + 1);
    const std::string_view found = leaf_of(name);
    ASSERT_EQ(found, expected) << name;
    ASSERT_EQ(found.data() + found.size(), name.data() + name.size()) << name;
  }
}

TEST(Patterns, SameDigitSignatureComparesSignatures)
{
  EXPECT_TRUE(
    same_digit_signature("model.layers.3.mlp.experts.17.w1", "model.layers.45.mlp.experts.0.w9"));
  EXPECT_FALSE(same_digit_signature("model.layers.3.mlp", "model.layers.3a.mlp"));
  EXPECT_TRUE(same_digit_signature("a1", "a12")); // the common prefix ends inside a run
  EXPECT_TRUE(same_digit_signature("12x", "3x"));
  EXPECT_FALSE(same_digit_signature("1", ""));
  EXPECT_FALSE(same_digit_signature("a", "a1"));
  EXPECT_TRUE(same_digit_signature("", ""));
  // Names that start with a number (the shards of an expert layer below its prefix).
  EXPECT_TRUE(same_digit_signature("17.down_proj", "3.down_proj"));
  EXPECT_TRUE(same_digit_signature("17.w1", "3.w2"));
  EXPECT_FALSE(same_digit_signature("17.w1", "3.w"));
  EXPECT_FALSE(same_digit_signature("17.down_proj", "3.up_proj"));
  EXPECT_TRUE(same_digit_signature("12", "3"));
  EXPECT_FALSE(same_digit_signature("12", "3a"));
  EXPECT_FALSE(same_digit_signature("12a", "a"));
  NameMaker maker;
  const std::vector<std::string> names = maker.names(400);
  size_t alike = 0;
  for (size_t i = 0; i < 20000; ++i) {
    const std::string& a = names[maker.next(names.size())];
    std::string b = names[maker.next(names.size())];
    if (i % 2 == 0) { // often the same name with other numbers
      b.clear();
      for (char c : a) {
        b += c;
        if (std::isdigit(static_cast<unsigned char>(c)) && maker.next(2) == 0) {
          b += std::to_string(maker.next(100));
        }
      }
    }
    std::string a_numbered;
    if (i % 4 < 2) { // both start with a number, as an expert's shards below their layer do
      a_numbered = std::to_string(maker.next(300)) + "." + a;
      b = std::to_string(maker.next(300)) + (maker.next(8) == 0 ? "" : ".") + b;
    }
    const std::string& a_used = a_numbered.empty() ? a : a_numbered;
    std::string x, y;
    ASSERT_TRUE(digit_signature(a_used, x) && digit_signature(b, y));
    ASSERT_EQ(same_digit_signature(a_used, b), x == y) << a_used << " / " << b;
    ASSERT_EQ(same_digit_signature(b, a_used), x == y) << a_used << " / " << b;
    alike += x == y ? 1 : 0;
  }
  EXPECT_GT(alike, 5000u);
  EXPECT_LT(alike, 15000u);
}

// decide_by_list() matches the shards of a layer that are alike up to their numbers once, with
// a list blind to digits: the answers are those of matching every shard.
TEST(Engines, DecideAnswersAlikeShardsOfALayerOnce)
{
  NameMaker maker;
  const std::vector<std::string> lists[] = {
    {"*gate_proj"},
    {"up_proj", "*experts.*.down_proj"},
    {"*mlp.experts*"},
    {"lm_head", "*shared_experts*", "*up_proj", "*.gate_proj"},
  };
  size_t disagree = 0, excluded = 0;
  for (const auto& entries : lists) {
    ConfigSource s;
    s.format = QuantFormat::modelopt;
    s.list_key = "exclude_modules";
    s.excludes = EntryList(entries);
    for (int i = 0; i < 17; ++i) { // long enough to be compiled
      s.excludes.push_back(fmt::format("absent_{}", std::string(static_cast<size_t>(i), 'x')));
    }
    for (const auto& [engine, compiled] : engine_lists(s)) {
      const CompiledList& list = *compiled;
      for (int round = 0; round < 40; ++round) {
        const std::string prefix = fmt::format("model.layers.{}.mlp.experts", maker.next(70));
        std::vector<std::string> shards;
        for (size_t n = 1 + maker.next(12); n > 0; --n) {
          static const char* k_leaves[] = {"down_proj", "gate_proj", "up_proj"};
          const size_t expert = maker.next(300);
          shards.push_back(maker.next(8) == 0
                             ? fmt::format("model.layers.{}.mlp.shared_experts.{}", expert,
                                           k_leaves[maker.next(3)])
                             : fmt::format("{}.{}.{}", prefix, expert, k_leaves[maker.next(3)]));
        }
        const EngineLayer l = layer(prefix, LayerKind::fused_moe, shards);
        Decision plain;
        ASSERT_NO_FATAL_FAILURE(decide_both_ways(engine, s, l, list, plain));
        disagree += plain.shards_disagree ? 1 : 0;
        excluded += plain.quantized ? 0 : 1;
      }
    }
  }
  EXPECT_GT(disagree, 100u);
  EXPECT_GT(excluded, 50u);
}

// engine_layers() marks the modules of a draft as draft layers: those below the draft's root
// and a module at the root itself, and nothing after them.
TEST(Engines, LayersKnowTheirDraftRoot)
{
  MemoryFileSystem fs;
  fs.add_file("m/model.safetensors",
              test::safetensors({{"model.layers.0.mlp.down_proj.weight", "BF16", {8, 8}},
                                 {"model.layers.1.weight", "BF16", {8, 8}},
                                 {"model.layers.1.eh_proj.weight", "BF16", {8, 16}},
                                 {"model.layers.1x.o_proj.weight", "BF16", {8, 8}},
                                 {"model.layers.2.o_proj.weight", "BF16", {8, 8}}}));
  auto checkpoint = load_checkpoint(fs, "m");
  ASSERT_TRUE(checkpoint);
  const Inventory inventory = build_inventory(*checkpoint);
  ModelInfo model;
  model.num_hidden_layers = 1;
  model.num_mtp_layers = 1;
  const Drafts drafts = locate_drafts(model, *checkpoint, inventory);
  ASSERT_EQ(drafts.roots, std::vector<std::string>{"model.layers.1"});
  for (Engine engine : k_all_engines) {
    std::map<std::string, std::string> roots;
    for (const EngineLayer& l : engine_layers(engine, inventory, drafts, model)) {
      roots[l.prefix] = l.draft ? l.draft_root : "-";
    }
    EXPECT_EQ(roots,
              (std::map<std::string, std::string>{{"model.layers.0.mlp.down_proj", "-"},
                                                  {"model.layers.1", "model.layers.1"},
                                                  {"model.layers.1.eh_proj", "model.layers.1"},
                                                  {"model.layers.1x.o_proj", "-"},
                                                  {"model.layers.2.o_proj", "-"}}))
      << to_string(engine);
  }
}

namespace {

// A checkpoint whose layers the three engines build differently: a router only vLLM quantizes
// (qwen3_moe), a fused group SGLang names otherwise (q_a_proj + kv_a_proj_with_mqa), and a NextN
// draft each engine spells its own way.
struct EnginesDisagree
{
  MemoryFileSystem fs;
  Checkpoint checkpoint;
  Inventory inventory;
  ModelInfo model;
  Drafts drafts;

  EnginesDisagree()
  {
    std::vector<test::TensorSpec> tensors;
    for (const char* m :
         {"model.layers.0.self_attn.q_a_proj", "model.layers.0.self_attn.kv_a_proj_with_mqa",
          "model.layers.0.self_attn.o_proj", "model.layers.0.mlp.gate",
          "model.layers.0.mlp.experts.0.down_proj", "model.layers.0.mlp.experts.1.down_proj",
          "model.layers.1.eh_proj", "model.layers.1.self_attn.q_a_proj",
          "model.layers.1.self_attn.kv_a_proj_with_mqa", "model.layers.1.shared_head.head",
          "lm_head"}) {
      tensors.push_back({std::string(m) + ".weight", "BF16", {8, 8}});
    }
    fs.add_file("m/model.safetensors", test::safetensors(tensors));
    checkpoint = std::move(load_checkpoint(fs, "m")).value();
    inventory = build_inventory(checkpoint);
    model.model_type = "qwen3_moe";
    model.text_model_type = "deepseek_v3";
    model.num_hidden_layers = 1;
    model.num_mtp_layers = 1;
    drafts = locate_drafts(model, checkpoint, inventory);
  }
};

// Every field of each layer, one line each.
std::vector<std::string>
describe(const std::vector<EngineLayer>& layers)
{
  std::vector<std::string> out;
  for (const EngineLayer& l : layers) {
    out.push_back(fmt::format("{} kind={} modules={} shards={} quantized={} draft={} root={} "
                              "note={} shadows={}",
                              l.prefix, static_cast<int>(l.kind), fmt::join(l.modules, ","),
                              fmt::join(l.shards, ","), l.quantized, l.draft, l.draft_root,
                              l.namespace_note, l.shadows_main));
  }
  return out;
}

bool
has_prefix(const std::vector<EngineLayer>& layers, std::string_view prefix)
{
  return std::any_of(layers.begin(), layers.end(),
                     [&](const EngineLayer& l) { return l.prefix == prefix; });
}

} // namespace

// Each engine builds its own layers from the same modules: the differences the fixture is made
// of all show.
TEST(Engines, EnginesBuildTheirOwnLayers)
{
  const EnginesDisagree c;
  ASSERT_EQ(c.drafts.roots, std::vector<std::string>{"model.layers.1"});
  const auto vllm = engine_layers(Engine::vllm, c.inventory, c.drafts, c.model);
  const auto sglang = engine_layers(Engine::sglang, c.inventory, c.drafts, c.model);
  const auto trtllm = engine_layers(Engine::trtllm, c.inventory, c.drafts, c.model);
  EXPECT_TRUE(has_prefix(vllm, "model.layers.0.mlp.gate"));
  EXPECT_FALSE(has_prefix(sglang, "model.layers.0.mlp.gate"));
  EXPECT_FALSE(has_prefix(trtllm, "model.layers.0.mlp.gate"));
  EXPECT_TRUE(has_prefix(vllm, "model.layers.0.self_attn.fused_qkv_a_proj"));
  EXPECT_TRUE(has_prefix(trtllm, "model.layers.0.self_attn.fused_qkv_a_proj"));
  EXPECT_TRUE(has_prefix(sglang, "model.layers.0.self_attn.fused_qkv_a_proj_with_mqa"));
  EXPECT_TRUE(has_prefix(sglang, "model.decoder.self_attn.fused_qkv_a_proj_with_mqa"));
  EXPECT_TRUE(has_prefix(vllm, "model.layers.1.self_attn.fused_qkv_a_proj"));
  EXPECT_TRUE(has_prefix(vllm, "model.layers.0.mlp.experts"));
  const auto kind_of = [](const std::vector<EngineLayer>& layers, std::string_view prefix) {
    for (const EngineLayer& l : layers) {
      if (l.prefix == prefix) {
        return static_cast<int>(l.kind);
      }
    }
    return -1;
  };
  EXPECT_EQ(kind_of(vllm, "model.layers.1.eh_proj"), static_cast<int>(LayerKind::plain_linear));
  EXPECT_EQ(kind_of(trtllm, "model.layers.1.eh_proj"), static_cast<int>(LayerKind::linear));
  EXPECT_EQ(kind_of(sglang, "model.eh_proj"), static_cast<int>(LayerKind::plain_linear));
  EXPECT_FALSE(has_prefix(sglang, "model.decoder.eh_proj"));
  // SGLang's NextN loader skips the draft's head (the target's serves); the others load it.
  EXPECT_EQ(kind_of(vllm, "model.layers.1.shared_head.head"), static_cast<int>(LayerKind::lm_head));
  EXPECT_EQ(kind_of(trtllm, "model.layers.1.shared_head.head"),
            static_cast<int>(LayerKind::lm_head));
  for (const EngineLayer& l : sglang) {
    EXPECT_EQ(l.prefix.find("shared_head"), std::string::npos) << l.prefix;
  }
}

// Several engines' layers built in one pass are each engine's own, in whatever order the
// engines are asked: nothing one engine works out for a module leaks into another's layers.
TEST(Engines, OnePassGivesEachEngineItsOwnLayers)
{
  const EnginesDisagree c;
  const std::vector<std::vector<Engine>> orders = {{Engine::vllm, Engine::sglang, Engine::trtllm},
                                                   {Engine::trtllm, Engine::sglang, Engine::vllm},
                                                   {Engine::sglang, Engine::vllm},
                                                   {Engine::trtllm}};
  for (const auto& order : orders) {
    const auto together = engine_layers(order, c.inventory, c.drafts, c.model);
    ASSERT_EQ(together.size(), order.size());
    for (size_t i = 0; i < order.size(); ++i) {
      EXPECT_EQ(describe(together[i]),
                describe(engine_layers(order[i], c.inventory, c.drafts, c.model)))
        << to_string(order[i]) << " asked at " << i << " of " << order.size();
    }
  }
}

namespace {

// Every split of the modules into two parts, each part's layers made apart and joined, for every
// engine: the layers of one pass in every field (each shard's name and whether it is a module's
// own), read after the parts are destroyed (their renamed shards' names must outlive them).
void
expect_parts_join_as_one_pass(const std::vector<test::TensorSpec>& tensors, const ModelInfo& model,
                              size_t draft_roots)
{
  MemoryFileSystem fs;
  fs.add_file("m/model.safetensors", test::safetensors(tensors));
  const Checkpoint checkpoint = std::move(load_checkpoint(fs, "m")).value();
  const Inventory inventory = build_inventory(checkpoint);
  const Drafts drafts = locate_drafts(model, checkpoint, inventory);
  ASSERT_EQ(drafts.roots.size(), draft_roots);
  const size_t count = inventory.modules.size();
  const auto whole = engine_layers(k_all_engines, inventory, drafts, model);
  const auto module_shards = [](const std::vector<EngineLayer>& layers) {
    std::vector<bool> out;
    for (const EngineLayer& l : layers) {
      for (size_t j = 0; j < l.shards.size(); ++j) {
        out.push_back(l.shards.is_module(j));
      }
    }
    return out;
  };
  for (size_t split = 0; split <= count; ++split) {
    std::vector<std::vector<EngineLayer>> joined;
    {
      auto first = engine_layers(k_all_engines, inventory, drafts, model, 0, split);
      auto second = engine_layers(k_all_engines, inventory, drafts, model, split, count);
      for (size_t e = 0; e < k_all_engines.size(); ++e) {
        join_layers(first[e], std::move(second[e]));
        EXPECT_TRUE(second[e].empty());
      }
      joined = std::move(first);
    }
    for (size_t e = 0; e < k_all_engines.size(); ++e) {
      EXPECT_EQ(describe(joined[e]), describe(whole[e]))
        << to_string(k_all_engines[e]) << ", parts meeting at module " << split << " of " << count;
      EXPECT_EQ(module_shards(joined[e]), module_shards(whole[e]))
        << to_string(k_all_engines[e]) << ", parts meeting at module " << split;
    }
  }
}

ModelInfo
model_of(const std::string& type, uint64_t hidden_layers, uint64_t draft_layers)
{
  ModelInfo model;
  model.model_type = type;
  model.text_model_type = type;
  model.num_hidden_layers = hidden_layers;
  model.num_mtp_layers = draft_layers;
  return model;
}

std::vector<test::TensorSpec>
bf16_modules(std::initializer_list<const char*> modules)
{
  std::vector<test::TensorSpec> tensors;
  for (const char* m : modules) {
    tensors.push_back({std::string(m) + ".weight", "BF16", {8, 8}});
  }
  return tensors;
}

} // namespace

// Layers made of two adjacent parts of the modules and joined are the layers of one pass over
// both, wherever the parts meet: inside a fused group, among an MoE layer's experts, inside a
// draft layer an engine renames.
TEST(Engines, LayersOfTwoPartsJoinAsOnePass)
{
  std::vector<test::TensorSpec> tensors;
  const auto fp8 = [&](const std::string& m) {
    tensors.push_back({m + ".weight", "F8_E4M3", {8, 8}});
    tensors.push_back({m + ".weight_scale", "F32", {}});
  };
  const auto bf16 = [&](const std::string& m) {
    tensors.push_back({m + ".weight", "BF16", {8, 8}});
  };
  for (const std::string layer : {"model.layers.0", "model.layers.1"}) {
    fp8(layer + ".self_attn.q_a_proj");
    fp8(layer + ".self_attn.kv_a_proj_with_mqa");
    bf16(layer + ".self_attn.o_proj");
    bf16(layer + ".mlp.gate");
    for (int e = 0; e < 3; ++e) {
      fp8(fmt::format("{}.mlp.experts.{}.down_proj", layer, e));
      bf16(fmt::format("{}.mlp.experts.{}.up_proj", layer, e));
    }
  }
  bf16("model.layers.1.eh_proj");
  bf16("model.layers.1.shared_head.head");
  bf16("lm_head");
  expect_parts_join_as_one_pass(tensors, model_of("deepseek_v3", 1, 1), 1);
}

// Xiaomi MiMo's MTP layer k (model.mtp_layers.k): vLLM builds it under main layer k's names, a
// layer of its own beside main layer k's (shadows_main: never joined with it, whichever part
// holds which); SGLang builds it under bare names; input_proj is a plain nn.Linear in both.
TEST(Engines, MimoMtpLayerShadowsMainLayerInVllm)
{
  std::vector<test::TensorSpec> tensors;
  for (const std::string layer : {"model.layers.0", "model.mtp_layers.0"}) {
    for (const char* p : {"self_attn.q_proj", "self_attn.k_proj", "self_attn.v_proj",
                          "self_attn.o_proj", "mlp.down_proj"}) {
      tensors.push_back({layer + "." + p + ".weight", "BF16", {8, 8}});
    }
  }
  tensors.push_back({"model.mtp_layers.0.input_proj.weight", "BF16", {8, 16}});
  ModelInfo model = model_of("mimo", 1, 1);
  model.architectures = {"MiMoForCausalLM"};
  expect_parts_join_as_one_pass(tensors, model, 1);

  MemoryFileSystem fs;
  fs.add_file("m/model.safetensors", test::safetensors(tensors));
  const Checkpoint checkpoint = std::move(load_checkpoint(fs, "m")).value();
  const Inventory inventory = build_inventory(checkpoint);
  const Drafts drafts = locate_drafts(model, checkpoint, inventory);
  const auto vllm = engine_layers(Engine::vllm, inventory, drafts, model);
  std::vector<std::pair<bool, bool>> qkv; // (draft, shadows_main) of each qkv_proj layer
  for (const EngineLayer& l : vllm) {
    if (l.prefix == "model.layers.0.self_attn.qkv_proj") {
      qkv.emplace_back(l.draft, l.shadows_main);
      EXPECT_EQ(l.modules.size(), 3u);
    }
  }
  EXPECT_EQ(qkv, (std::vector<std::pair<bool, bool>>{{false, false}, {true, true}}));
  const auto sglang = engine_layers(Engine::sglang, inventory, drafts, model);
  EXPECT_TRUE(has_prefix(sglang, "self_attn.qkv_proj"));
  EXPECT_TRUE(has_prefix(sglang, "mlp.down_proj"));
  for (const auto* layers : {&vllm, &sglang}) {
    for (const EngineLayer& l : *layers) {
      if (l.modules.size() == 1 &&
          inventory.modules[l.modules.front()].name == "model.mtp_layers.0.input_proj") {
        EXPECT_EQ(l.kind, LayerKind::plain_linear) << l.prefix;
      }
    }
  }
  // Another model's mtp_layers keep their names.
  const ModelInfo other = model_of("mimo", 1, 1);
  EXPECT_TRUE(has_prefix(engine_layers(Engine::vllm, inventory, drafts, other),
                         "model.mtp_layers.0.self_attn.qkv_proj"));
}

// SGLang builds Qwen3-Next's MTP layer 0 as "model.layers.0" (qwen3_next_mtp.py), beside main
// layer 0 (here linear attention with an MoE); vLLM and TensorRT-LLM keep "mtp.layers.0". The
// draft's attention names are its own; its experts share main layer 0's fused MoE layer names.
TEST(Engines, Qwen3NextMtpLayerBearsMainLayerNamesInSglang)
{
  std::vector<test::TensorSpec> tensors =
    bf16_modules({"model.layers.0.linear_attn.out_proj", "model.layers.0.mlp.experts.0.up_proj",
                  "mtp.fc", "mtp.layers.0.self_attn.q_proj", "mtp.layers.0.self_attn.k_proj",
                  "mtp.layers.0.self_attn.v_proj", "mtp.layers.0.mlp.experts.0.up_proj"});
  ModelInfo model = model_of("qwen3_next", 1, 1);
  model.architectures = {"Qwen3NextForCausalLM"};
  expect_parts_join_as_one_pass(tensors, model, 1);

  MemoryFileSystem fs;
  fs.add_file("m/model.safetensors", test::safetensors(tensors));
  const Checkpoint checkpoint = std::move(load_checkpoint(fs, "m")).value();
  const Inventory inventory = build_inventory(checkpoint);
  const Drafts drafts = locate_drafts(model, checkpoint, inventory);
  const auto sglang = engine_layers(Engine::sglang, inventory, drafts, model);
  std::vector<std::tuple<std::string, bool, bool>> seen; // (prefix, draft, shadows_main)
  for (const EngineLayer& l : sglang) {
    seen.emplace_back(l.prefix, l.draft, l.shadows_main);
  }
  // mtp.fc, a plain nn.Linear in SGLang's drafter, keeps its checkpoint name here.
  EXPECT_EQ(seen, (std::vector<std::tuple<std::string, bool, bool>>{
                    {"model.layers.0.linear_attn.out_proj", false, false},
                    {"model.layers.0.mlp.experts", false, false},
                    {"model.layers.0.mlp.experts", true, true},
                    {"model.layers.0.self_attn.qkv_proj", true, true},
                    {"mtp.fc", true, false}}));
  EXPECT_EQ(sglang.back().kind, LayerKind::plain_linear);
  for (const Engine e : {Engine::vllm, Engine::trtllm}) {
    const auto layers = engine_layers(e, inventory, drafts, model);
    EXPECT_TRUE(has_prefix(layers, "mtp.layers.0.self_attn.qkv_proj")) << to_string(e);
    EXPECT_FALSE(has_prefix(layers, "model.layers.0.self_attn.qkv_proj")) << to_string(e);
  }
  // Unlistable in SGLang where main layer 0 bears the name: the experts, not the attention.
  EXPECT_TRUE(
    draft_names_unlistable(Engine::sglang, model, inventory, "mtp.layers.0.mlp.experts.0.up_proj"));
  EXPECT_FALSE(
    draft_names_unlistable(Engine::sglang, model, inventory, "mtp.layers.0.self_attn.q_proj"));
  EXPECT_FALSE(
    draft_names_unlistable(Engine::vllm, model, inventory, "mtp.layers.0.mlp.experts.0.up_proj"));
  // Another architecture's mtp.layers keep their names in SGLang too.
  ModelInfo other = model;
  other.architectures = {"Qwen3_5ForCausalLM"};
  EXPECT_TRUE(has_prefix(
    engine_layers(Engine::sglang, inventory, locate_drafts(other, checkpoint, inventory), other),
    "mtp.layers.0.self_attn.qkv_proj"));
}

// A layer whose modules differ in what LayerBuilder::add() leaves to the last one: SGLang builds
// Qwen3-Next's "language_model.mtp.fc" and "mtp.fc" as one layer "mtp.fc", a linear one for
// the first and a plain nn.Linear for the second; DeepSeek's two NextN layers' eh_proj become
// one "model.eh_proj" under two draft roots. The joined layer takes the second part's.
TEST(Engines, JoinedLayersTakeWhatTheLastModuleSets)
{
  expect_parts_join_as_one_pass(bf16_modules({"language_model.mtp.fc", "mtp.fc"}),
                                model_of("qwen3_next", 1, 1), 2);
  expect_parts_join_as_one_pass(bf16_modules({"model.layers.0.self_attn.o_proj",
                                              "model.layers.1.eh_proj", "model.layers.2.eh_proj"}),
                                model_of("deepseek_v3", 1, 2), 2);
}

// SGLang replaces a NextN root with "model.decoder": a module named as the root itself (its
// tensor "model.layers.1.weight") is SGLang's "model.decoder", in layers made in any parts.
TEST(Engines, ModuleAtANextnRootIsSglangsDecoder)
{
  MemoryFileSystem fs;
  fs.add_file("m/model.safetensors",
              test::safetensors(bf16_modules(
                {"model.layers.0.self_attn.o_proj", "model.layers.1", "model.layers.1.eh_proj"})));
  const Checkpoint checkpoint = std::move(load_checkpoint(fs, "m")).value();
  const Inventory inventory = build_inventory(checkpoint);
  const ModelInfo model = model_of("deepseek_v3", 1, 1);
  const Drafts drafts = locate_drafts(model, checkpoint, inventory);
  ASSERT_EQ(drafts.roots, std::vector<std::string>{"model.layers.1"});
  const auto root = inventory.find("model.layers.1");
  ASSERT_GE(root, 0);
  for (size_t split = 0; split <= inventory.modules.size(); ++split) {
    auto layers = engine_layers(k_all_engines, inventory, drafts, model, 0, split);
    auto rest =
      engine_layers(k_all_engines, inventory, drafts, model, split, inventory.modules.size());
    join_layers(layers[1], std::move(rest[1]));
    const auto decoder = std::find_if(layers[1].begin(), layers[1].end(), [](const EngineLayer& l) {
      return l.prefix == "model.decoder";
    });
    ASSERT_NE(decoder, layers[1].end()) << "split at " << split;
    EXPECT_EQ(decoder->modules, std::vector<uint32_t>{static_cast<uint32_t>(root)});
    EXPECT_TRUE(decoder->draft);
  }
}

TEST(Engines, BelowMeansAWholeComponentFurtherDown)
{
  EXPECT_TRUE(is_below("model.layers.1.mlp", "model.layers.1"));
  EXPECT_TRUE(is_below("model.layers.1.mlp", "model"));
  EXPECT_FALSE(is_below("model.layers.10.mlp", "model.layers.1"));
  EXPECT_FALSE(is_below("model.layers.1", "model.layers.1"));
  EXPECT_FALSE(is_below("model", "model.layers"));
  EXPECT_FALSE(is_below("", ""));
}

TEST(Engines, GlobCharactersAreStarQuestionMarkAndBracket)
{
  for (const char* glob : {"*", "a?", "x[0]", "model.layers.1*", "[", "re:x*"}) {
    EXPECT_TRUE(has_glob_chars(glob)) << glob;
  }
  for (const char* plain : {"", "lm_head", "a]b", "model.layers.0.mlp", "re:a.+b"}) {
    EXPECT_FALSE(has_glob_chars(plain)) << plain;
  }
  // Anywhere in a long entry: in the first 16 bytes, past them, or in the last few.
  for (size_t size = 1; size < 40; ++size) {
    const std::string plain(size, 'a');
    EXPECT_FALSE(has_glob_chars(plain)) << size;
    for (size_t at = 0; at < size; ++at) {
      for (const char c : {'*', '?', '['}) {
        std::string glob = plain;
        glob[at] = c;
        EXPECT_TRUE(has_glob_chars(glob)) << glob;
        // The byte after the view is not read as its own.
        EXPECT_FALSE(has_glob_chars(std::string_view(glob).substr(0, at))) << glob;
      }
    }
  }
}

// The first of `*?[]` wherever it is (the first 16 bytes, past them, the last few, which are
// read with the 16 bytes that end the text), before any later one; the size when there is none.
TEST(Patterns, FirstWildcardIsTheFirstOfStarQuestionMarkAndBrackets)
{
  for (size_t size = 0; size < 50; ++size) {
    const std::string plain(size, 'a');
    EXPECT_EQ(first_wildcard(plain), size);
    for (size_t at = 0; at < size; ++at) {
      for (const char c : {'*', '?', '[', ']'}) {
        std::string glob = plain;
        glob[at] = c;
        for (size_t later = at + 1; later < size; later += 7) {
          glob[later] = '*';
        }
        EXPECT_EQ(first_wildcard(glob), at) << glob;
        EXPECT_EQ(first_wildcard(std::string_view(glob).substr(0, at)), at) << glob;
        if (at > 0) { // a view that does not start the string
          EXPECT_EQ(first_wildcard(std::string_view(glob).substr(1)), at - 1) << glob;
        }
      }
    }
  }
}

// An empty entry occurs in every name: where an engine matches by substring it excludes
// everything, and a compiled list must offer it as a candidate like any other entry.
TEST(Engines, CompiledListOffersAnEmptyEntryWhereItMatches)
{
  for (QuantFormat format : k_list_formats) {
    ConfigSource s;
    s.format = format;
    for (int i = 0; i < 20; ++i) {
      s.excludes.push_back(i == 5 ? "" : fmt::format("model.layers.{}.self_attn", 40 + i));
    }
    for (const auto& [engine, compiled] : engine_lists(s)) {
      const CompiledList& list = *compiled;
      for (const std::string name : {"model.layers.0.mlp.gate_proj", "lm_head", ""}) {
        std::vector<uint32_t> found;
        list.candidates(name, found);
        if (entry_matches(engine, format, "", name)) {
          EXPECT_TRUE(std::binary_search(found.begin(), found.end(), 5u))
            << to_string(engine) << " format " << static_cast<int>(format) << " name '" << name
            << "'";
        }
      }
    }
  }
  EXPECT_TRUE(entry_matches(Engine::vllm, QuantFormat::modelopt, "", "model.layers.0.mlp"));
}

// Globs whose text a match need not hold in full: TensorRT-LLM reads "X.*" as X itself too
// (when X holds none of `*?[`, so "a]b" qualifies while the index takes `]` for a wildcard),
// and the entry must still be offered for the name "a]b", which has no ".". Every entry that
// matches a name is among its candidates, for each format and engine of a long list.
TEST(Engines, CompiledListOffersGlobsWhoseLastDotAMatchMayLack)
{
  // "].*" (found by fuzz_compiled_list): a ']' first, so no literal start; its run "." is not
  // in "]", which TensorRT-LLM's "X.*" = "X" reading matches.
  const std::vector<std::string> globs{"a]b.*", "x.[a]b.*", "m.y]z.*", "q?r]s.*", "k.*", "].*"};
  const std::vector<std::string> names{"a]b",   "a]b.c", "x.[a]b", "m.y]z", "q?r]s",
                                       "qzr]s", "k",     "k.v",    "]",     "].x"};
  size_t matches = 0;
  for (QuantFormat format : k_list_formats) {
    ConfigSource s;
    s.format = format;
    for (int i = 0; i < 20; ++i) {
      s.excludes.push_back(fmt::format("model.layers.{}.self_attn", 40 + i));
    }
    for (const std::string& glob : globs) {
      s.excludes.push_back(glob);
    }
    for (const auto& [engine, compiled] : engine_lists(s)) {
      const CompiledList& list = *compiled;
      for (const std::string& name : names) {
        std::vector<uint32_t> found;
        list.candidates(name, found);
        for (uint32_t i = 0; i < s.excludes.size(); ++i) {
          if (entry_matches(engine, format, s.excludes[i], name)) {
            ++matches;
            EXPECT_TRUE(std::binary_search(found.begin(), found.end(), i))
              << to_string(engine) << " format " << static_cast<int>(format) << ": '"
              << s.excludes[i] << "' matches '" << name << "' but is not a candidate";
          }
        }
      }
    }
  }
  EXPECT_TRUE(entry_matches(Engine::trtllm, QuantFormat::modelopt, "a]b.*", "a]b"));
  EXPECT_TRUE(entry_matches(Engine::trtllm, QuantFormat::modelopt, "].*", "]"));
  EXPECT_GT(matches, 10u);
}

namespace {

// A ModelOpt block listing 20 attention layers no test names: a list long enough to be indexed.
ConfigSource
padded_modelopt_block()
{
  ConfigSource s;
  s.format = QuantFormat::modelopt;
  for (int i = 0; i < 20; ++i) {
    s.excludes.push_back(fmt::format("model.layers.{}.self_attn", 40 + i));
  }
  return s;
}

} // namespace

// Found by fuzz_compiled_list. SGLang reads an entry without its VLM wrapper too, and
// "language_model." unwrapped is empty: it matches a name's empty component (a name ending in
// '.', or holding ".."), so a long list must offer it there.
TEST(Engines, CompiledListOffersAnEntryWhoseUnwrappedSpellingIsEmpty)
{
  ConfigSource s = padded_modelopt_block();
  s.excludes.push_back("language_model.");
  const CompiledList list(Engine::sglang, s);
  for (const std::string name : {"e*model.", "a..b", ".x"}) {
    ASSERT_TRUE(entry_matches(Engine::sglang, QuantFormat::modelopt, "language_model.", name));
    std::vector<uint32_t> found;
    list.candidates(name, found);
    EXPECT_TRUE(std::binary_search(found.begin(), found.end(), 20u)) << name;
  }
}

// TensorRT-LLM's trailing ".*" that also stands for the node itself is glob syntax: a "re:"
// entry is a regex, fully matched, and its ".*" is the regex's.
TEST(Engines, TensorRTReadsATrailingDotStarAsTheNodeOnlyInGlobs)
{
  EXPECT_TRUE(entry_matches(Engine::trtllm, QuantFormat::modelopt, "model.mtp.*", "model.mtp"));
  EXPECT_FALSE(
    entry_matches(Engine::trtllm, QuantFormat::modelopt, "re:model.mtp.*", "re:model.mtp"));
  EXPECT_TRUE(
    entry_matches(Engine::trtllm, QuantFormat::modelopt, R"(re:model\.mtp\..*)", "model.mtp.fc"));
  EXPECT_FALSE(
    entry_matches(Engine::trtllm, QuantFormat::modelopt, R"(re:model\.mtp\..*)", "model.mtp"));
}

namespace {

// Decides a layer per module of `names` and a fused layer over the next two with `list` (whose
// candidates are kept for `names`' modules), then checks the candidates read back by module
// against `fresh`'s for the name; adds the modules kept to `kept`.
void
check_kept_candidates(Engine engine, const ConfigSource& s, const std::vector<std::string>& names,
                      const CompiledList& list, const CompiledList& fresh, size_t& kept)
{
  for (uint32_t i = 0; i + 3 < names.size(); i += 3) {
    EngineLayer own = layer(names[i]);
    own.modules = {i};
    EngineLayer fused = layer(names[i] + ".fused", i % 2 ? LayerKind::fused_moe : LayerKind::linear,
                              {names[i + 1], names[i + 2]});
    fused.modules = {i + 1, i + 2};
    Decision plain;
    ASSERT_NO_FATAL_FAILURE(decide_both_ways(engine, s, own, list, plain));
    ASSERT_NO_FATAL_FAILURE(decide_both_ways(engine, s, fused, list, plain));
  }
  kept += list.kept_modules();
  std::vector<uint32_t> by_module, by_name;
  for (uint32_t k = 0; k < names.size(); ++k) {
    for (const std::string& name : {names[k], names[(k + 1) % names.size()]}) {
      by_module.clear();
      by_name.clear();
      list.candidates(name, k, by_module);
      fresh.candidates(name, by_name);
      ASSERT_EQ(by_module, by_name)
        << to_string(engine) << " format " << static_cast<int>(s.format) << ": '" << name << "'";
    }
  }
}

} // namespace

// decide() keeps the candidates it finds for a layer's own module and for its shards' modules;
// the unused-entry check reads them back by module: what the index gives for the name, in every
// format and engine, and never a module's for a name that is not its own. Lists compiled
// together keep what any of them found, for all of them.
TEST(Engines, CompiledListKeepsTheCandidatesDecideFound)
{
  NameMaker maker;
  std::vector<std::string> names = maker.names(200);
  std::sort(names.begin(), names.end());
  names.erase(std::unique(names.begin(), names.end()), names.end());
  Inventory inventory;
  for (const std::string& name : names) {
    inventory.modules.push_back(Module{.name = name});
  }
  size_t kept = 0, kept_together = 0;
  for (QuantFormat format : k_list_formats) {
    const ConfigSource s = listing_block(format, maker, names, 150);
    for (Engine engine : k_all_engines) {
      CompiledList list(engine, s);
      list.keep_module_candidates(inventory);
      const CompiledList fresh(engine, s);
      ASSERT_NO_FATAL_FAILURE(check_kept_candidates(engine, s, names, list, fresh, kept));
    }
    std::vector<CompiledList> lists = CompiledList::compile(k_all_engines, s);
    lists.front().keep_module_candidates(inventory);
    const std::vector<CompiledList> fresh = CompiledList::compile(k_all_engines, s);
    for (size_t i = 0; i < k_all_engines.size(); ++i) {
      ASSERT_NO_FATAL_FAILURE(
        check_kept_candidates(k_all_engines[i], s, names, lists[i], fresh[i], kept_together));
    }
  }
  // bitsandbytes, SGLang AWQ and both engines' FP8 fused MoE layers search no shards.
  EXPECT_GT(kept, 700u);
  EXPECT_GT(kept_together, 1000u);
}

// The engines a list is compiled for together share one index (the widest matching of theirs,
// a substring one in ModelOpt's case, with every option and spelling any of them needs); what
// one of them finds for a module is kept for the others: one search per name. Formats matched
// without an index share none.
TEST(Engines, ListsCompiledTogetherShareOneIndex)
{
  ConfigSource s = padded_modelopt_block();
  EXPECT_TRUE(share_list_index(Engine::sglang, Engine::trtllm, s));
  EXPECT_TRUE(share_list_index(Engine::vllm, Engine::sglang, s));
  EXPECT_TRUE(share_list_index(Engine::vllm, Engine::trtllm, s));
  ConfigSource ct = s;
  ct.format = QuantFormat::compressed_tensors;
  EXPECT_TRUE(share_list_index(Engine::vllm, Engine::sglang, ct));
  ConfigSource gptq = s;
  gptq.format = QuantFormat::gptq;
  EXPECT_FALSE(share_list_index(Engine::vllm, Engine::sglang, gptq));

  std::vector<std::string> names;
  for (int i = 0; i < 10; ++i) {
    names.push_back(fmt::format("model.layers.{}.mlp.down_proj", i));
  }
  Inventory inventory;
  for (const std::string& name : names) {
    inventory.modules.push_back(Module{.name = name});
  }
  std::vector<CompiledList> lists = CompiledList::compile(k_all_engines, s);
  lists.front().keep_module_candidates(inventory);
  const ModelInfo model;
  for (uint32_t i = 0; i < names.size(); ++i) {
    if (i == 4) { // four kept so far, counted alike by each engine's list
      for (const CompiledList& list : lists) {
        EXPECT_EQ(list.kept_modules(), 4u);
      }
    }
    EngineLayer l = layer(names[i]);
    l.modules = {i};
    decide(Engine::sglang, s, model, l, true, &lists[1]);
  }
  for (const CompiledList& list : lists) { // kept for vLLM and TensorRT-LLM too
    EXPECT_EQ(list.kept_modules(), inventory.modules.size());
  }
}

// SGLang reads a ModelOpt "re:" entry as text and TensorRT-LLM as a regex: their shared index
// offers it for the names either reads it in ("re:foo.bar" is a dotted run of the first name,
// and the regex "foo.bar" matches the start of the second).
TEST(Engines, ListsCompiledTogetherOfferARegexEntryAsTextWhereAnEngineReadsIt)
{
  ConfigSource s = padded_modelopt_block();
  s.excludes.push_back("re:foo.bar");
  const std::vector<CompiledList> lists =
    CompiledList::compile(std::array{Engine::sglang, Engine::trtllm}, s);
  const std::string as_text = "re:foo.bar.baz", as_regex = "foo-bar.baz";
  ASSERT_TRUE(entry_matches(Engine::sglang, s.format, s.excludes.back(), as_text));
  ASSERT_TRUE(entry_matches(Engine::trtllm, s.format, s.excludes.back(), as_regex));
  for (const CompiledList& list : lists) {
    for (const std::string& name : {as_text, as_regex}) {
      std::vector<uint32_t> found;
      list.candidates(name, found);
      EXPECT_TRUE(std::binary_search(found.begin(), found.end(), 20u)) << name;
    }
  }
  const ModelInfo model;
  for (const auto& [engine, list] :
       {std::pair{Engine::sglang, &lists[0]}, std::pair{Engine::trtllm, &lists[1]}}) {
    const std::string& name = engine == Engine::sglang ? as_text : as_regex;
    const Decision d = decide(engine, s, model, layer(name), true, list);
    EXPECT_FALSE(d.quantized) << to_string(engine);
    EXPECT_EQ(d.matched, "re:foo.bar") << to_string(engine);
  }
}

// decide() with a compiled list reaches the same decision, entry and reason as without.
TEST(Engines, DecideWithACompiledListDecidesTheSame)
{
  NameMaker maker;
  const std::vector<std::string> names = maker.names(200);
  size_t excluded = 0;
  for (QuantFormat format : k_list_formats) {
    const ConfigSource s = listing_block(format, maker, names, 150);
    for (const auto& [engine, compiled] : engine_lists(s)) {
      const CompiledList& list = *compiled;
      for (size_t i = 0; i + 3 < names.size(); i += 3) {
        EngineLayer l = layer(names[i], i % 2 ? LayerKind::fused_moe : LayerKind::linear,
                              {names[i + 1], names[i + 2]});
        Decision plain;
        ASSERT_NO_FATAL_FAILURE(decide_both_ways(engine, s, l, list, plain));
        excluded += plain.quantized ? 0 : 1;
      }
    }
  }
  EXPECT_GT(excluded, 50u);
}

namespace {

std::vector<DynamicRule>
dynamic_rules(const std::vector<std::string>& keys)
{
  std::vector<DynamicRule> rules;
  for (const std::string& key : keys) {
    DynamicRule r;
    r.key = key;
    r.negative = key.starts_with("-:");
    r.regex = key.starts_with("-:") || key.starts_with("+:") ? key.substr(2) : key;
    rules.push_back(std::move(r));
  }
  return rules;
}

// Keys with literal starts, none, alternations, case folding, quantified starts and one regex
// qcheck cannot evaluate (a look-behind).
const std::vector<std::string> k_dynamic_keys = {
  "-:model\\.layers\\.1\\..*",
  "+:model\\.layers\\.[0-9]+\\.mlp\\..*",
  "-:.*mtp.*",
  "-:(?i)MODEL\\.EMBED",
  "+:lm_head|model\\.norm",
  "-:mod?el\\.layers\\.2",
  "-:(?<!x)model",
  "+:model\\.layers\\.10\\.self_attn",
  "-:model\\.layers\\.1",
  "-:mtp\\.fc",
  "+:model\\.layers\\.3\\.mlp\\.experts\\.[0-9]+\\.up_proj",
  "-:visual",
  "-:model\\.visual\\.blocks\\.0",
  "+:x*model",
  "-:model\\.layers\\.4",
  "-:model\\.layers\\.40\\.mlp",
  "-:model\\.layers\\.5\\.mlp\\.down_proj$",
};

const std::vector<std::string> k_dynamic_names = {
  "model.layers.1.mlp.down_proj",
  "model.layers.10.self_attn.o_proj",
  "model.layers.2.mlp",
  "mdel.layers.2",
  "model.embed_tokens",
  "lm_head",
  "model.norm",
  "mtp.fc",
  "mtp.layers.0.mlp.gate",
  "model.layers.3.mlp.experts.7.up_proj",
  "model.visual.blocks.0.attn",
  "xxmodel.layers.4",
  "model.layers.40.mlp.up_proj",
  "model.layers.5.mlp.down_proj",
  "model.layers.5.mlp.down_proj_x",
  "visual.blocks.1",
  "",
};

} // namespace

// The index offers every key whose regex re.match-es a name, and every key qcheck cannot
// evaluate, in key order: a name tries those alone, and the first to match is vLLM's.
TEST(Engines, DynamicRulesOfferEveryKeyThatMatchesInKeyOrder)
{
  const std::vector<DynamicRule> rules = dynamic_rules(k_dynamic_keys);
  ASSERT_GE(rules.size(), 16u); // indexed
  const DynamicRules compiled(rules);
  ASSERT_TRUE(compiled.built_from(rules));
  ASSERT_EQ(compiled.size(), rules.size());
  size_t offered_total = 0;
  for (const std::string& name : k_dynamic_names) {
    std::vector<uint32_t> offered;
    compiled.candidates(name, offered);
    EXPECT_TRUE(std::is_sorted(offered.begin(), offered.end())) << name;
    EXPECT_EQ(std::adjacent_find(offered.begin(), offered.end()), offered.end()) << name;
    offered_total += offered.size();
    for (uint32_t i = 0; i < rules.size(); ++i) {
      const Expected<Regex> re = Regex::compile(rules[i].regex);
      EXPECT_EQ(compiled.evaluable(i), static_cast<bool>(re)) << rules[i].key;
      if (!re || re->match(name)) {
        EXPECT_TRUE(std::binary_search(offered.begin(), offered.end(), i))
          << name << " not offered " << rules[i].key;
      }
    }
  }
  // An index, not every key for every name.
  EXPECT_LT(offered_total, k_dynamic_names.size() * rules.size() / 2);
}

TEST(Engines, DynamicRulesBelowTheIndexThresholdOfferEveryKey)
{
  const std::vector<DynamicRule> rules = dynamic_rules({"-:a", "+:b", "-:(?<!x)c"});
  const DynamicRules compiled(rules);
  std::vector<uint32_t> offered;
  compiled.candidates("z", offered);
  EXPECT_EQ(offered, (std::vector<uint32_t>{0, 1, 2}));
  EXPECT_FALSE(compiled.evaluable(2));
  EXPECT_FALSE(compiled.regex(2));
  ASSERT_TRUE(compiled.regex(1));
  EXPECT_TRUE(compiled.regex(1)->match("bx"));
}

// vLLM's Qwen3-Next/3.5 drafter builds mtp.fc unquantized when a "-:" key's regex finds a match
// in "mtp" (re.search); "+:" keys do not count.
TEST(Engines, DynamicRulesAnswerWhetherANegativeKeySearchesMtp)
{
  EXPECT_TRUE(DynamicRules(dynamic_rules({"+:a", "-:.*tp"})).negative_key_searches_mtp());
  EXPECT_TRUE(DynamicRules(dynamic_rules({"-:m"})).negative_key_searches_mtp());
  EXPECT_FALSE(DynamicRules(dynamic_rules({"+:mtp", "-:model"})).negative_key_searches_mtp());
  EXPECT_FALSE(DynamicRules(dynamic_rules({"-:(?<!x)mtp"})).negative_key_searches_mtp());
}

// decide() with the block's keys compiled (the index) decides each layer as without them.
TEST(Engines, DecideWithCompiledDynamicKeysDecidesTheSame)
{
  ConfigSource s;
  s.file = "config.json";
  s.format = QuantFormat::gptq;
  s.dynamic = dynamic_rules(k_dynamic_keys);
  const ModelInfo model;
  for (const Engine engine : {Engine::vllm, Engine::sglang}) {
    const CompiledList list(engine, s);
    ASSERT_NE(list.dynamic_rules(s), nullptr);
    ConfigSource other = s; // the same keys, another block: not its rules
    EXPECT_EQ(list.dynamic_rules(other), nullptr);
    for (const std::string& name : k_dynamic_names) {
      EngineLayer layer;
      layer.prefix = name;
      const Decision plain = decide(engine, s, model, layer, true);
      const Decision indexed = decide(engine, s, model, layer, true, &list);
      EXPECT_EQ(indexed.quantized, plain.quantized) << name;
      EXPECT_EQ(indexed.matched, plain.matched) << name;
      EXPECT_EQ(indexed.reason, plain.reason) << name;
      ASSERT_EQ(indexed.errors.size(), plain.errors.size()) << name;
      for (size_t i = 0; i < plain.errors.size(); ++i) {
        EXPECT_EQ(indexed.errors[i].entry, plain.errors[i].entry) << name;
        EXPECT_EQ(indexed.errors[i].problem, plain.errors[i].problem) << name;
      }
    }
  }
}

// An escaped non-ASCII character is one character to the regex, which a quantifier may make
// optional: the literal start ends before it (a review found the key never offered).
TEST(Engines, DynamicRulesOfferAKeyWhoseEscapedNonAsciiStartIsOptional)
{
  std::vector<std::string> keys = {"-:\\\xc3\xa9?model\\.layers\\.0\\.mlp", "+:\\\xc3\xa9*x",
                                   "+:a\\\xc3\xa9{0}b"};
  for (int i = 0; i < 16; ++i) {
    keys.push_back(fmt::format("-:model\\.zzz{}", i));
  }
  const std::vector<DynamicRule> rules = dynamic_rules(keys);
  const DynamicRules compiled(rules);
  for (const auto& [name, key] : std::vector<std::pair<std::string, uint32_t>>{
         {"model.layers.0.mlp.down_proj", 0}, {"x", 1}, {"ab", 2}}) {
    ASSERT_TRUE(Regex::compile(rules[key].regex)->match(name)) << name;
    std::vector<uint32_t> offered;
    compiled.candidates(name, offered);
    EXPECT_TRUE(std::binary_search(offered.begin(), offered.end(), key)) << name;
  }
  ConfigSource s;
  s.file = "config.json";
  s.format = QuantFormat::gptq;
  s.dynamic = rules;
  const CompiledList list(Engine::vllm, s);
  EngineLayer layer;
  layer.prefix = "model.layers.0.mlp.down_proj";
  const Decision plain = decide(Engine::vllm, s, ModelInfo{}, layer, true);
  const Decision indexed = decide(Engine::vllm, s, ModelInfo{}, layer, true, &list);
  EXPECT_FALSE(plain.quantized);
  EXPECT_EQ(indexed.quantized, plain.quantized);
  EXPECT_EQ(indexed.matched, plain.matched);
}
