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

TEST(OverlayFileSystem, ShowsTheViewedContentsOverTheBase)
{
  MemoryFileSystem base;
  base.add_file("m/config.json", "{}");
  base.add_file("m/a.safetensors", "abc");
  std::string patched = R"({"ignore": []})";
  OverlayFileSystem overlay(base);
  overlay.set("m/config.json", patched);
  EXPECT_EQ(overlay.stat("m/config.json").size, patched.size());
  EXPECT_EQ(overlay.read_file("m/config.json", 100).value(), patched);
  EXPECT_EQ(overlay.read_file("m/a.safetensors", 100).value(), "abc");
  EXPECT_EQ(base.read_file("m/config.json", 100).value(), "{}");
  // A view, not a copy: what the overlay shows is the caller's string as it is now.
  patched[2] = 'I';
  EXPECT_EQ(overlay.read_file("m/config.json", 100).value(), R"({"Ignore": []})");
  auto short_read = overlay.read_file("m/config.json", 3);
  ASSERT_FALSE(short_read);
  EXPECT_EQ(short_read.error(), "m/config.json: file is 14 bytes, more than the 3 bytes allowed");
}

// The overlay keeps a view: a temporary string would dangle, so it does not compile.
template<typename Text>
constexpr bool k_can_set = requires(OverlayFileSystem& overlay, Text&& text)
{
  overlay.set("m/config.json", std::forward<Text>(text));
};
static_assert(k_can_set<const std::string&>);
static_assert(k_can_set<std::string_view>);
static_assert(!k_can_set<std::string>);
