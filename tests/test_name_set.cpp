#include <gtest/gtest.h>

#include <set>
#include <string>
#include <vector>

#include "builder.hpp"
#include "qcheck/name_set.hpp"
#include "qcheck/text_hash.hpp"

using namespace qcheck;

TEST(NameSet, InsertsEachNameOnce)
{
  NameSet set;
  EXPECT_TRUE(set.empty());
  EXPECT_FALSE(set.contains("model.layers.0"));
  EXPECT_TRUE(set.insert("model.layers.0"));
  EXPECT_FALSE(set.insert("model.layers.0"));
  EXPECT_TRUE(set.insert("model.layers.0.mlp"));
  EXPECT_TRUE(set.insert("model.layers"));
  EXPECT_EQ(set.size(), 3u);
  EXPECT_TRUE(set.contains("model.layers.0"));
  EXPECT_TRUE(set.contains("model.layers"));
  EXPECT_FALSE(set.contains("model.layers.1"));
  EXPECT_FALSE(set.contains("model"));
}

TEST(NameSet, HoldsTheEmptyName)
{
  NameSet set(4);
  EXPECT_FALSE(set.contains(""));
  EXPECT_TRUE(set.insert(std::string_view()));
  EXPECT_TRUE(set.contains(""));
  EXPECT_FALSE(set.insert(""));
  EXPECT_EQ(set.size(), 1u);
}

// Names that share prefixes and lengths, inserted twice over, through many rehashes and with a
// reserve made too small: the set agrees with std::set on every name and on names left out.
TEST(NameSet, AgreesWithStdSetThroughGrowth)
{
  test::Lcg next(99);
  std::vector<std::string> names;
  for (int i = 0; i < 20000; ++i) {
    names.push_back("m.l." + std::to_string(next(3000)) + ".e." + std::to_string(next(8)));
  }
  NameSet set(100);
  std::set<std::string> expected;
  for (const std::string& name : names) {
    ASSERT_EQ(set.insert(name), expected.insert(name).second) << name;
  }
  EXPECT_EQ(set.size(), expected.size());
  for (int i = 0; i < 20000; ++i) {
    const std::string name = "m.l." + std::to_string(next(3500)) + ".e." + std::to_string(next(9));
    ASSERT_EQ(set.contains(name), expected.count(name) == 1) << name;
  }
}

// insert_all() and contains_all() give, name by name, what insert() and contains() give:
// batches shorter and longer than the names fetched ahead, with repeats inside a batch and
// across batches, into sets grown from empty and from a reserve too small.
TEST(NameSet, BatchesAgreeWithOneNameAtATime)
{
  test::Lcg next(7);
  std::vector<std::vector<std::string>> kept; // the sets view the names
  for (const size_t batch : {size_t{1}, size_t{3}, size_t{8}, size_t{9}, size_t{500}}) {
    NameSet one, all(batch == 500 ? 10 : 0);
    size_t added = 0;
    for (int round = 0; round < 20; ++round) {
      std::vector<std::string> texts;
      for (size_t i = 0; i < batch; ++i) {
        texts.push_back("m.l." + std::to_string(next(400)) + ".e." + std::to_string(next(5)));
      }
      const std::vector<std::string_view> names(texts.begin(), texts.end());
      size_t expected = 0;
      for (const std::string_view name : names) {
        expected += one.insert(name) ? 1 : 0;
      }
      ASSERT_EQ(all.insert_all(names), expected) << batch << " " << round;
      added += expected;
      kept.push_back(std::move(texts));
    }
    EXPECT_EQ(all.size(), added);
    EXPECT_EQ(all.size(), one.size());
    std::vector<std::string> asked_texts;
    for (int i = 0; i < 3000; ++i) {
      asked_texts.push_back("m.l." + std::to_string(next(450)) + ".e." + std::to_string(next(6)));
    }
    const std::vector<std::string_view> asked(asked_texts.begin(), asked_texts.end());
    std::vector<char> found(asked.size(), 2);
    all.contains_all(asked, found);
    for (size_t i = 0; i < asked.size(); ++i) {
      ASSERT_EQ(found[i], one.contains(asked[i]) ? 1 : 0) << asked[i];
    }
  }
  // An empty set answers no to all, an empty batch adds nothing.
  NameSet empty;
  const std::vector<std::string_view> asked{"a", "b"};
  std::vector<char> found(2, 2);
  empty.contains_all(asked, found);
  EXPECT_EQ(found, (std::vector<char>{0, 0}));
  EXPECT_EQ(empty.insert_all({}), 0u);
  EXPECT_TRUE(empty.empty());
}

// The hash behind NameSet (and the index's names): texts of every length up to 40 that differ in
// one byte, wherever it is, or only in length, hash apart; one text hashes apart under two keys.
TEST(TextHash, KeyedHashTellsApartTextsThatDifferInOneByteOrInLength)
{
  const std::string base = "model.layers.17.mlp.experts.203.down_proj.weight";
  for (const uint64_t key : {uint64_t{0}, uint64_t{0x5eed}, random_key()}) {
    std::set<uint64_t> by_length;
    for (size_t size = 0; size <= 40; ++size) {
      const std::string text = base.substr(0, size);
      const uint64_t hash = keyed_hash(text, key);
      EXPECT_TRUE(by_length.insert(hash).second) << size;
      for (size_t at = 0; at < size; ++at) {
        std::string other = text;
        other[at] = static_cast<char>(other[at] ^ 1);
        EXPECT_NE(keyed_hash(other, key), hash) << other;
      }
    }
    EXPECT_NE(keyed_hash(base, key), keyed_hash(base, key + 1));
  }
}
