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
