#include <gtest/gtest.h>

#include "qcheck/input.hpp"

using namespace qcheck;

TEST(MemoryFileSystem, StatListAndRead)
{
  MemoryFileSystem fs;
  fs.add_file("m/config.json", "{}");
  fs.add_file("m/a.safetensors", "abc");
  EXPECT_EQ(fs.stat("m").kind, FileKind::directory);
  EXPECT_EQ(fs.stat("m/a.safetensors").size, 3u);
  EXPECT_EQ(fs.stat("m/none").kind, FileKind::missing);
  auto names = fs.list_dir("m");
  ASSERT_TRUE(names);
  EXPECT_EQ(*names, (std::vector<std::string>{"a.safetensors", "config.json"}));
  auto text = fs.read_file("m/a.safetensors", 10);
  ASSERT_TRUE(text);
  EXPECT_EQ(*text, "abc");
  auto too_big = fs.read_file("m/a.safetensors", 2);
  ASSERT_FALSE(too_big);
  EXPECT_EQ(too_big.error(), "m/a.safetensors: file is 3 bytes, more than the 2 bytes allowed");
}
