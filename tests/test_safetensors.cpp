#include <gtest/gtest.h>

#include <algorithm>
#include <set>
#include <fmt/format.h>
#include <fmt/ranges.h>

#include "builder.hpp"
#include "qcheck/input.hpp"
#include "qcheck/safetensors.hpp"

using namespace qcheck;
using namespace qcheck::test;

namespace {

Header
read_bytes(const std::string& bytes)
{
  MemoryFileSystem fs;
  fs.add_file("x.safetensors", bytes);
  auto source = fs.open("x.safetensors");
  EXPECT_TRUE(source);
  return read_header(**source);
}

// The only problem of a header, asserted exactly.
void
expect_single(const Header& h, HeaderIssue issue, const std::string& message)
{
  ASSERT_EQ(h.problems.size(), 1u) << (h.problems.empty() ? "" : h.problems[0].message);
  EXPECT_EQ(h.problems[0].issue, issue);
  EXPECT_EQ(h.problems[0].message, message);
}

Header
parse(const std::string& json, uint64_t data_size)
{
  return parse_header(json, data_size);
}

} // namespace

TEST(Safetensors, ValidHeader)
{
  const Header h =
    read_bytes(safetensors({{"a.weight", "BF16", {4, 8}}, {"a.weight_scale", "F32", {}}}));
  EXPECT_TRUE(h.readable);
  EXPECT_TRUE(h.problems.empty());
  ASSERT_EQ(h.tensors.size(), 2u);
  EXPECT_EQ(h.tensors[0].name(), "a.weight");
  EXPECT_EQ(h.tensors[0].dtype, Dtype::BF16);
  EXPECT_EQ(std::vector<uint64_t>(h.tensors[0].shape().begin(), h.tensors[0].shape().end()),
            (std::vector<uint64_t>{4, 8}));
  EXPECT_EQ(h.offsets[1].end - h.offsets[1].begin, 4u);
  ASSERT_EQ(h.metadata.size(), 1u);
  EXPECT_EQ(h.metadata[0].second, "pt");
}

// Names read as written (no escape in the header) are said to be so: they go back into JSON
// as they are. An escape anywhere in a name, or a header only the DOM reads, says nothing.
TEST(Safetensors, PlainNamesSaidSo)
{
  EXPECT_TRUE(read_bytes(safetensors({{"a.weight", "BF16", {2}}, {"caf\xc3\xa9", "BF16", {2}}}))
                .plain_names);
  EXPECT_TRUE(read_bytes(safetensors({{"b", "BF16", {2}}, {"a", "BF16", {2}}})).plain_names);
  for (const std::string& name : {R"(a\u002eweight)", R"(a\"b)", R"(a\nb)"}) {
    const Header h = read_bytes(safetensors({{name, "BF16", {2}}}));
    EXPECT_TRUE(h.readable && h.problems.empty()) << name;
    EXPECT_FALSE(h.plain_names) << name;
  }
  EXPECT_FALSE(parse_header_dom(header_json({{"a.weight", "BF16", {2}}}), 4).plain_names);
}

TEST(Safetensors, EveryUpstreamDtypeWithItsBits)
{
  const std::vector<std::pair<std::string, unsigned>> dtypes{
    {"BOOL", 8},    {"U8", 8},      {"I8", 8},          {"U16", 16},        {"I16", 16},
    {"F16", 16},    {"BF16", 16},   {"U32", 32},        {"I32", 32},        {"F32", 32},
    {"U64", 64},    {"I64", 64},    {"F64", 64},        {"C64", 64},        {"F8_E4M3", 8},
    {"F8_E5M2", 8}, {"F8_E8M0", 8}, {"F8_E4M3FNUZ", 8}, {"F8_E5M2FNUZ", 8}, {"F6_E2M3", 6},
    {"F6_E3M2", 6}, {"F4", 4}};
  for (const auto& [name, bits] : dtypes) {
    auto dtype = parse_dtype(name);
    ASSERT_TRUE(dtype) << name;
    EXPECT_EQ(dtype_bits(*dtype), bits) << name;
    EXPECT_EQ(dtype_name(*dtype), name);
    // 8 elements of any dtype fill whole bytes.
    const uint64_t size = 8 * bits / 8;
    const std::string json = R"({"t":{"dtype":")" + name + R"(","shape":[8],"data_offsets":[0,)" +
                             std::to_string(size) + "]}}";
    EXPECT_TRUE(parse(json, size).problems.empty()) << name;
  }
}

// One header with every dtype, each used twice and in two orders: each tensor keeps its own
// (the parser remembers the spellings it has met).
TEST(Safetensors, EveryDtypeInOneHeader)
{
  std::vector<std::string> names;
  for (int i = 0; i <= static_cast<int>(Dtype::F4); ++i) {
    names.emplace_back(dtype_name(static_cast<Dtype>(i)));
  }
  std::vector<std::string> order = names;
  std::reverse(order.begin(), order.end());
  order.insert(order.end(), names.begin(), names.end());
  order.insert(order.begin() + 3, "F8_E4M3"); // met again early
  std::string json = "{";
  uint64_t offset = 0;
  for (size_t i = 0; i < order.size(); ++i) {
    const uint64_t size = dtype_bits(*parse_dtype(order[i])); // 8 elements: bits bytes
    json += fmt::format(R"({}"t{:02}":{{"dtype":"{}","shape":[8],"data_offsets":[{},{}]}})",
                        i == 0 ? "" : ",", i, order[i], offset, offset + size);
    offset += size;
  }
  json += "}";
  const Header h = parse(json, offset);
  EXPECT_TRUE(h.problems.empty());
  ASSERT_EQ(h.tensors.size(), order.size());
  for (size_t i = 0; i < order.size(); ++i) {
    EXPECT_EQ(h.tensors[i].dtype_text(), order[i]) << i;
    EXPECT_EQ(dtype_name(h.tensors[i].dtype), order[i]) << i;
  }
}

TEST(Safetensors, FileShorterThanLength)
{
  expect_single(read_bytes("abcde"), HeaderIssue::file_too_short,
                "file is 5 bytes, too short to hold the 8-byte header length");
}

TEST(Safetensors, LengthMax)
{
  expect_single(read_bytes(std::string(8, '\xff') + "{}"), HeaderIssue::length_over_limit,
                "header length 18446744073709551615 exceeds the format's limit of 100000000 bytes");
}

TEST(Safetensors, LengthBelowMinimum)
{
  expect_single(read_bytes(raw_safetensors("{", 0)), HeaderIssue::length_too_small,
                "header length 1 is below the minimum of 2 bytes");
}

TEST(Safetensors, LengthBeyondFile)
{
  expect_single(read_bytes(raw_safetensors("{}", 0, 4096)), HeaderIssue::length_beyond_file,
                "header length 4096 exceeds the 2 bytes that follow it in the file");
}

TEST(Safetensors, LargeHeaderWarns)
{
  std::string json = "{}" + std::string(k_hub_header_size, ' ');
  const Header h = read_bytes(raw_safetensors(json, 0));
  ASSERT_EQ(h.problems.size(), 1u);
  EXPECT_TRUE(h.problems[0].is_warning);
  EXPECT_EQ(h.problems[0].issue, HeaderIssue::length_large);
  EXPECT_EQ(h.problems[0].message, "header is 25000002 bytes; Hugging Face Hub clients refuse "
                                   "headers above 25000000 bytes");
  EXPECT_TRUE(h.readable);
}

TEST(Safetensors, BadStart)
{
  expect_single(parse(" {}", 0), HeaderIssue::bad_start,
                "header starts with whitespace; the format requires '{' as its first byte");
  expect_single(parse("[1]", 0), HeaderIssue::bad_start, "header does not start with '{'");
}

TEST(Safetensors, InvalidJson)
{
  expect_single(parse("{\"a\":", 0), HeaderIssue::invalid_json,
                "header is not valid JSON: unbalanced brackets, a missing comma, key or value, or "
                "a non-JSON value such as NaN");
  expect_single(parse("{\"a\":tru}", 0), HeaderIssue::invalid_json,
                "header is not valid JSON: an invalid literal (true, false, null; NaN and "
                "Infinity are not JSON)");
}

TEST(Safetensors, InvalidUtf8)
{
  expect_single(parse("{\"a\xff\":1}", 0), HeaderIssue::invalid_json,
                "header is not valid JSON: not valid UTF-8");
}

TEST(Safetensors, DeepNestingIsRefusedNotRecursed)
{
  const std::string json = "{\"a\":" + std::string(100000, '[') + std::string(100000, ']') + "}";
  expect_single(read_bytes(raw_safetensors(json, 0)), HeaderIssue::invalid_json,
                "header is not valid JSON: nested more than 64 levels deep");
}

TEST(Safetensors, TrailingGarbage)
{
  const Header h = parse("{} x", 0);
  ASSERT_EQ(h.problems.size(), 1u);
  EXPECT_EQ(h.problems[0].issue, HeaderIssue::invalid_json);
}

TEST(Safetensors, PaddedWithSpacesIsValid)
{
  EXPECT_TRUE(parse("{}      ", 0).problems.empty());
}

TEST(Safetensors, NotAnObject)
{
  // Starts with '{' is required first; an object is required by the parser too.
  expect_single(parse("{\"t\":1}", 0), HeaderIssue::bad_entry,
                "tensor 't': entry is not an object");
}

TEST(Safetensors, DuplicateTensorName)
{
  const std::string json = R"({"t":{"dtype":"U8","shape":[1],"data_offsets":[0,1]},)"
                           R"("t":{"dtype":"U8","shape":[1],"data_offsets":[1,2]}})";
  const Header h = parse(json, 1);
  ASSERT_GE(h.problems.size(), 1u);
  EXPECT_EQ(h.problems[0].issue, HeaderIssue::duplicate_tensor);
  EXPECT_EQ(h.problems[0].message, "'t' appears more than once in the header");
}

TEST(Safetensors, MissingField)
{
  expect_single(parse(R"({"t":{"dtype":"U8","shape":[1]}})", 0), HeaderIssue::missing_field,
                "tensor 't': missing 'data_offsets'");
}

// serde, which the safetensors loaders use, refuses a field repeated within an entry ("duplicate
// field `dtype`"): the header cannot be loaded, whichever value comes first.
TEST(Safetensors, RepeatedFieldInAnEntry)
{
  for (const std::string& entry : {std::string(R"("dtype":"BF16","dtype":"F32","shape":[2])"),
                                   std::string(R"("dtype":"U8","shape":[2],"shape":[2])")}) {
    expect_single(
      parse(R"({"t":{)" + entry + R"(,"data_offsets":[0,4]}})", 4), HeaderIssue::bad_entry,
      fmt::format("tensor 't': '{}' appears twice; safetensors refuses a header "
                  "with a repeated field",
                  entry.find("\"dtype\":\"F32\"") != std::string::npos ? "dtype" : "shape"));
  }
  expect_single(parse(R"({"t":{"dtype":"U8","shape":[2],"data_offsets":[0,2],)"
                      R"("data_offsets":[0,2]}})",
                      2),
                HeaderIssue::bad_entry,
                "tensor 't': 'data_offsets' appears twice; safetensors refuses a header with a "
                "repeated field");
}

// JSON allows -0 and simdjson reads it as 0; safetensors (serde) reads the float -0.0 and
// refuses it as a usize. A "-0" inside a string is only text.
TEST(Safetensors, NegativeZeroIsRefused)
{
  expect_single(parse(R"({"t":{"dtype":"U8","shape":[-0],"data_offsets":[0,0]}})", 0),
                HeaderIssue::bad_entry,
                "header byte 28 holds the number -0, which safetensors reads as the float -0.0 "
                "and refuses as a shape or offset");
  expect_single(parse(R"({"t": {"dtype": "U8", "shape": [2], "data_offsets": [ -0 , 2]}})", 2),
                HeaderIssue::bad_entry,
                "header byte 54 holds the number -0, which safetensors reads as the float -0.0 "
                "and refuses as a shape or offset");
  const auto named = parse(R"({"t-0":{"dtype":"U8","shape":[2],"data_offsets":[0,2]},)"
                           R"("__metadata__":{"v":"-0"}})",
                           2);
  EXPECT_TRUE(named.problems.empty());
  EXPECT_EQ(named.tensors.size(), 1u);
  // In a field safetensors ignores, -0 is harmless (as 1 would be there).
  const auto ignored = parse(R"({"t":{"dtype":"U8","shape":[2],"x":-0,"y":[-0],)"
                             R"("data_offsets":[0,2]}})",
                             2);
  EXPECT_TRUE(ignored.problems.empty()) << ignored.problems.front().message;
}

TEST(Safetensors, DtypeNotString)
{
  expect_single(parse(R"({"t":{"dtype":8,"shape":[1],"data_offsets":[0,1]}})", 1),
                HeaderIssue::bad_dtype, "tensor 't': dtype is not a string");
}

TEST(Safetensors, UnknownDtypeNamedAndLayoutStillChecked)
{
  const Header h = parse(R"({"t":{"dtype":"FP4","shape":[4],"data_offsets":[0,2]}})", 2);
  expect_single(h, HeaderIssue::unknown_dtype, "tensor 't': unknown dtype 'FP4'");
  ASSERT_EQ(h.tensors.size(), 1u);
  EXPECT_EQ(h.tensors[0].dtype, Dtype::unknown);
  EXPECT_EQ(h.tensors[0].dtype_text(), "FP4");
}

TEST(Safetensors, NegativeShape)
{
  expect_single(parse(R"({"t":{"dtype":"U8","shape":[-1],"data_offsets":[0,1]}})", 1),
                HeaderIssue::bad_shape,
                "tensor 't': shape is not an array of non-negative integers");
}

// A tensor's rank is held in 16 bits: a shape of more dimensions (no real tensor has them) is
// refused and the entry dropped, by the scanner and the DOM reader alike; one of as many as
// that is read whole.
TEST(Safetensors, ShapeOfMoreDimensionsThanHeldIsRefused)
{
  const auto ones = [](size_t rank) {
    std::string dims;
    for (size_t i = 0; i < rank; ++i) {
      dims += i == 0 ? "1" : ",1";
    }
    return dims;
  };
  const size_t limit = TensorInfo::k_max_rank;
  const std::string json = R"({"big":{"dtype":"U8","shape":[)" + ones(limit + 1) +
                           R"(],"data_offsets":[0,1]},"most":{"dtype":"U8","shape":[)" +
                           ones(limit) + R"(],"data_offsets":[1,2]}})";
  for (const Header& h : {parse_header(json, 2), parse_header_dom(json, 2)}) {
    ASSERT_FALSE(h.problems.empty());
    EXPECT_EQ(h.problems[0].issue, HeaderIssue::bad_shape);
    EXPECT_EQ(
      h.problems[0].message,
      fmt::format("tensor 'big': shape has {} dimensions; at most {} are read", limit + 1, limit));
    ASSERT_EQ(h.tensors.size(), 1u);
    EXPECT_EQ(h.tensors[0].name(), "most");
    EXPECT_EQ(h.tensors[0].shape().size(), limit);
  }
}

// Unknown dtypes keep their spellings beside the names, each after its length: spellings of
// any length, next to known dtypes, each read back whole and the names unchanged.
TEST(Safetensors, UnknownDtypeSpellingsOfEveryLengthReadBack)
{
  const std::string long_spelling(70'000, 'Q');
  const std::vector<std::pair<std::string, std::string>> entries{
    {"a", "FP4"}, {"b", "U8"}, {"c", ""}, {"d", long_spelling}, {"e", "BF16"}, {"f", "X"}};
  std::string json = "{";
  for (size_t i = 0; i < entries.size(); ++i) {
    json += fmt::format(R"({}"{}":{{"dtype":"{}","shape":[],"data_offsets":[0,0]}})",
                        i == 0 ? "" : ",", entries[i].first, entries[i].second);
  }
  json += "}";
  for (const Header& h : {parse_header(json, 0), parse_header_dom(json, 0)}) {
    ASSERT_EQ(h.tensors.size(), entries.size());
    for (size_t i = 0; i < entries.size(); ++i) {
      EXPECT_EQ(h.tensors[i].name(), entries[i].first);
      EXPECT_EQ(h.tensors[i].dtype_text(), entries[i].second) << entries[i].first;
    }
  }
}

TEST(Safetensors, ShapeProductOverflow)
{
  const Header h =
    parse(R"({"t":{"dtype":"U8","shape":[4294967296,4294967296,2],"data_offsets":[0,1]}})", 1);
  expect_single(
    h, HeaderIssue::shape_overflow,
    "tensor 't': shape [4294967296, 4294967296, 2] has more elements than fit in 64 bits");
}

TEST(Safetensors, SubBytePartial)
{
  expect_single(parse(R"({"t":{"dtype":"F4","shape":[3],"data_offsets":[0,1]}})", 1),
                HeaderIssue::partial_byte,
                "tensor 't': F4 [3] does not fill a whole number of bytes");
}

TEST(Safetensors, OffsetsNotPair)
{
  expect_single(parse(R"({"t":{"dtype":"U8","shape":[1],"data_offsets":[0]}})", 1),
                HeaderIssue::bad_offsets,
                "tensor 't': data_offsets is not a pair of non-negative integers");
}

TEST(Safetensors, OffsetsReversed)
{
  expect_single(parse(R"({"t":{"dtype":"U8","shape":[0],"data_offsets":[5,2]}})", 0),
                HeaderIssue::bad_offsets, "tensor 't': data_offsets [5, 2] end before they begin");
}

TEST(Safetensors, OffsetsOverflowingSize)
{
  const Header h =
    parse(R"({"t":{"dtype":"U8","shape":[1],"data_offsets":[0,18446744073709551615]}})", 1);
  ASSERT_EQ(h.problems.size(), 2u);
  EXPECT_EQ(h.problems[0].issue, HeaderIssue::size_mismatch);
  EXPECT_EQ(h.problems[0].message,
            "tensor 't': data_offsets [0, 18446744073709551615] hold 18446744073709551615 bytes "
            "but U8 [1] needs 1");
  EXPECT_EQ(h.problems[1].issue, HeaderIssue::data_size_mismatch);
}

TEST(Safetensors, Gap)
{
  const std::string json = R"({"a":{"dtype":"U8","shape":[1],"data_offsets":[0,1]},)"
                           R"("b":{"dtype":"U8","shape":[1],"data_offsets":[3,4]}})";
  expect_single(parse(json, 4), HeaderIssue::gap,
                "tensor 'b': data starts at byte 3, leaving a gap of 2 bytes after 'a'");
}

TEST(Safetensors, GapAtStart)
{
  expect_single(parse(R"({"a":{"dtype":"U8","shape":[1],"data_offsets":[2,3]}})", 3),
                HeaderIssue::gap,
                "tensor 'a': data starts at byte 2, leaving a gap of 2 bytes at the start of the "
                "data region");
}

TEST(Safetensors, Overlap)
{
  const std::string json = R"({"a":{"dtype":"U8","shape":[2],"data_offsets":[0,2]},)"
                           R"("b":{"dtype":"U8","shape":[2],"data_offsets":[1,3]}})";
  expect_single(parse(json, 3), HeaderIssue::overlap,
                "tensor 'b': data [1, 3) overlaps 'a', which ends at byte 2");
}

TEST(Safetensors, TruncatedData)
{
  expect_single(
    parse(R"({"a":{"dtype":"BF16","shape":[4],"data_offsets":[0,8]}})", 4),
    HeaderIssue::data_size_mismatch,
    "tensor data needs 8 bytes but the file holds only 4 after the header (truncated?)");
}

TEST(Safetensors, TrailingData)
{
  expect_single(parse(R"({"a":{"dtype":"BF16","shape":[4],"data_offsets":[0,8]}})", 10),
                HeaderIssue::data_size_mismatch,
                "tensor data ends at byte 8 but the file holds 10 bytes after the header (2 bytes "
                "unaccounted for)");
}

TEST(Safetensors, EmptyAndScalarTensors)
{
  const std::string json = R"({"e":{"dtype":"BF16","shape":[0,4],"data_offsets":[0,0]},)"
                           R"("s":{"dtype":"F32","shape":[],"data_offsets":[0,4]}})";
  EXPECT_TRUE(parse(json, 4).problems.empty());
}

TEST(Safetensors, MetadataMustBeStrings)
{
  expect_single(parse(R"({"__metadata__":{"format":1}})", 0), HeaderIssue::bad_metadata,
                "__metadata__ value 'format' is not a string");
  expect_single(parse(R"({"__metadata__":[]})", 0), HeaderIssue::bad_metadata,
                "__metadata__ is not an object of strings");
}

TEST(Safetensors, ReadsOnlyTheHeader)
{
  // A source that fails any read beyond the header proves the data region is never touched.
  class HeaderOnly final : public ByteSource
  {
  public:
    explicit HeaderOnly(std::string bytes) : m_bytes(std::move(bytes)) {}
    uint64_t size() const override { return m_bytes.size() + (1ull << 40); }
    Expected<void> read_at(uint64_t offset, std::span<char> out) const override
    {
      if (offset + out.size() > m_bytes.size()) {
        return unexpected("read beyond the header");
      }
      std::copy_n(m_bytes.data() + offset, out.size(), out.data());
      return {};
    }

  private:
    std::string m_bytes;
  };
  const std::string json =
    R"({"a":{"dtype":"U8","shape":[1099511627776],"data_offsets":[0,1099511627776]}})";
  const Header h = read_header(HeaderOnly(raw_safetensors(json, 0)));
  EXPECT_TRUE(h.readable);
  EXPECT_TRUE(h.problems.empty()) << h.problems[0].message;
}

// A 100 MB header of zeros fails on its first byte: the rest is neither read nor allocated.
// Whitespace first is read whole (its message needs the '{' after it).
TEST(Safetensors, LongHeaderWithABadFirstByteIsNotRead)
{
  class Counting final : public ByteSource
  {
  public:
    Counting(uint64_t length, char first) : m_length(length), m_first(first) {}
    uint64_t size() const override { return 8 + m_length; }
    Expected<void> read_at(uint64_t offset, std::span<char> out) const override
    {
      m_read += out.size();
      for (size_t i = 0; i < out.size(); ++i) {
        const uint64_t at = offset + i;
        out[i] = at < 8 ? static_cast<char>((m_length >> (8 * at)) & 0xff)
                        : (at == 8 ? m_first : (at == 9 ? '{' : ' '));
      }
      return {};
    }
    mutable uint64_t m_read = 0;

  private:
    uint64_t m_length;
    char m_first;
  };
  const Counting zeros(100'000'000, '\0');
  const Header refused = read_header(zeros);
  ASSERT_EQ(refused.problems.size(), 2u);
  EXPECT_EQ(refused.problems[0].issue, HeaderIssue::length_large); // the Hub's limit, still said
  EXPECT_EQ(refused.problems[1].issue, HeaderIssue::bad_start);
  EXPECT_EQ(refused.problems[1].message, "header does not start with '{'");
  EXPECT_EQ(zeros.m_read, 9u);
  const Counting spaced(2'000'000, ' ');
  expect_single(read_header(spaced), HeaderIssue::bad_start,
                "header starts with whitespace; the format requires '{' as its first byte");
  EXPECT_EQ(spaced.m_read, 9u + 2'000'000u);
}

// Name order, duplicate keys and storage ownership of the header reader.

namespace {

Header
read_bytes_sorted(const std::string& bytes, bool sort_by_name)
{
  MemoryFileSystem fs;
  fs.add_file("x.safetensors", bytes);
  auto source = fs.open("x.safetensors");
  EXPECT_TRUE(source);
  return read_header(**source, sort_by_name);
}

std::vector<std::string>
names(const Header& h)
{
  std::vector<std::string> out;
  for (const auto& t : h.tensors) {
    out.emplace_back(t.name());
  }
  return out;
}

// Every problem message, for failure output.
std::string
all_messages(const Header& h)
{
  std::string out;
  for (const auto& p : h.problems) {
    out += "\n  " + p.message;
  }
  return out;
}

std::vector<uint64_t>
dims(const TensorInfo& t)
{
  return {t.shape().begin(), t.shape().end()};
}

// Three tensors whose dtype, shape and size differ, so an entry that lost its name shows.
const std::vector<TensorSpec> k_unordered{
  {"b.weight", "F32", {2}}, {"a.weight", "BF16", {4, 2}}, {"c.weight", "U8", {3}}};

// A header of U8 entries with the given keys. A key's first occurrence holds 1 byte laid out
// after the previous first occurrences; a repeat is an F32 entry over bytes [0, 4), so keeping a
// repeat instead of the first occurrence changes the dtype and breaks the layout.
std::string
keyed_json(const std::vector<std::string>& keys, uint64_t& data_size)
{
  std::string json = "{";
  std::vector<std::string> seen;
  data_size = 0;
  for (size_t i = 0; i < keys.size(); ++i) {
    const bool repeat = std::find(seen.begin(), seen.end(), keys[i]) != seen.end();
    json += (i ? "," : "") + ("\"" + keys[i] + "\":");
    if (repeat) {
      json += R"({"dtype":"F32","shape":[1],"data_offsets":[0,4]})";
    } else {
      json += R"({"dtype":"U8","shape":[1],"data_offsets":[)" + std::to_string(data_size) + "," +
              std::to_string(data_size + 1) + "]}";
      ++data_size;
      seen.push_back(keys[i]);
    }
  }
  return json + "}";
}

} // namespace

TEST(Safetensors, OutOfOrderKeysComeOutSortedOnRequest)
{
  const Header h = read_bytes_sorted(safetensors(k_unordered), true);
  EXPECT_TRUE(h.problems.empty()) << all_messages(h);
  EXPECT_TRUE(h.sorted);
  EXPECT_EQ(names(h), (std::vector<std::string>{"a.weight", "b.weight", "c.weight"}));
  // Whole entries move with their names.
  EXPECT_EQ(h.tensors[0].dtype, Dtype::BF16);
  EXPECT_EQ(dims(h.tensors[0]), (std::vector<uint64_t>{4, 2}));
  EXPECT_EQ(h.offsets[0].begin, 8u);
  EXPECT_EQ(h.offsets[0].end, 24u);
  EXPECT_EQ(h.tensors[1].dtype, Dtype::F32);
  EXPECT_EQ(dims(h.tensors[1]), (std::vector<uint64_t>{2}));
  EXPECT_EQ(h.offsets[1].begin, 0u);
  EXPECT_EQ(h.offsets[1].end, 8u);
  EXPECT_EQ(h.tensors[2].dtype_text(), "U8");
  EXPECT_EQ(dims(h.tensors[2]), (std::vector<uint64_t>{3}));
  EXPECT_EQ(h.offsets[2].begin, 24u);
}

// Writers group a shard's tensors by dtype, each group in name order: runs of sorted names,
// merged on request (64 runs or fewer) or sorted from scratch (more). Entries move whole.
TEST(Safetensors, SortedRunsComeOutMergedOnRequest)
{
  Lcg random(65);
  for (const size_t runs : {1u, 2u, 3u, 5u, 64u, 65u, 200u}) {
    std::vector<std::vector<std::string>> run_names(runs);
    for (int i = 0; i < 400; ++i) {
      run_names[random(runs)].push_back(fmt::format("t.{:04}.weight", i));
    }
    std::vector<TensorSpec> specs;
    for (const auto& names_of_run : run_names) {
      for (const std::string& name : names_of_run) { // each run in name order
        specs.push_back({name, "U8", {1 + std::stoull(name.substr(2, 4))}});
      }
    }
    const Header h = read_bytes_sorted(safetensors(specs), true);
    ASSERT_TRUE(h.problems.empty()) << all_messages(h);
    ASSERT_TRUE(h.sorted);
    ASSERT_EQ(h.tensors.size(), 400u) << runs;
    for (size_t i = 0; i < h.tensors.size(); ++i) {
      ASSERT_EQ(h.tensors[i].name(), fmt::format("t.{:04}.weight", i)) << runs;
      EXPECT_EQ(dims(h.tensors[i]), (std::vector<uint64_t>{i + 1})) << runs;
      EXPECT_EQ(h.offsets[i].end - h.offsets[i].begin, i + 1) << runs;
    }
  }
}

// The checkpoint loader reads headers without their offsets (16 bytes a tensor): the same
// tensors, and the same layout problems, found while parsing.
TEST(Safetensors, OffsetsLeftOutStillCheckTheLayout)
{
  // Out of order, with a gap before "c", "d" overlapping it and "e" sized wrong.
  const std::string json = R"({"b.w":{"dtype":"BF16","shape":[2],"data_offsets":[0,4]},)"
                           R"("a.w":{"dtype":"F32","shape":[1],"data_offsets":[4,8]},)"
                           R"("c.w":{"dtype":"U8","shape":[4],"data_offsets":[10,14]},)"
                           R"("d.w":{"dtype":"U8","shape":[4],"data_offsets":[12,16]},)"
                           R"("e.w":{"dtype":"F32","shape":[3],"data_offsets":[16,24]}})";
  MemoryFileSystem fs;
  fs.add_file("x.safetensors", raw_safetensors(json, 24));
  const auto read = [&](bool keep_offsets) {
    auto source = fs.open("x.safetensors");
    EXPECT_TRUE(source);
    return read_header(**source, true, keep_offsets);
  };
  const Header kept = read(true);
  const Header left = read(false);
  EXPECT_EQ(kept.offsets.size(), 5u);
  EXPECT_TRUE(left.offsets.empty());
  const auto text = [](const Header& h) {
    std::string out = fmt::format("readable={} sorted={}\n", h.readable, h.sorted);
    for (const TensorInfo& t : h.tensors) {
      out += fmt::format("{} {} [{}]\n", t.name(), t.dtype_text(), fmt::join(t.shape(), ","));
    }
    for (const HeaderProblem& p : h.problems) {
      out += p.message + "\n";
    }
    return out;
  };
  EXPECT_EQ(text(left), text(kept));
  EXPECT_EQ(text(left), "readable=true sorted=true\n"
                        "a.w F32 [1]\nb.w BF16 [2]\nc.w U8 [4]\nd.w U8 [4]\ne.w F32 [3]\n"
                        "tensor 'e.w': data_offsets [16, 24] hold 8 bytes but F32 [3] needs 12\n"
                        "tensor 'c.w': data starts at byte 10, leaving a gap of 2 bytes after "
                        "'a.w'\n"
                        "tensor 'd.w': data [12, 16) overlaps 'c.w', which ends at byte 14\n");
}

// A sorted name that begins the next one views the next one's copy: a module's weight,
// weight_scale and weight_scale_2 take one.
TEST(Safetensors, NamesThatBeginTheNextShareOneCopy)
{
  // As writers lay them out: grouped by dtype, each group in name order.
  const std::vector<TensorSpec> grouped{
    {"a.input_scale", "F32", {}},       {"a.weight_scale_2", "F32", {}},
    {"a.weight_scale", "F8_E4M3", {2}}, {"a.weight", "U8", {4}},
    {"a.weight.x", "U8", {4}},          {"ab.weight", "U8", {4}}};
  const std::vector<std::string> sorted_names{"a.input_scale",  "a.weight",         "a.weight.x",
                                              "a.weight_scale", "a.weight_scale_2", "ab.weight"};
  const Header h = read_bytes_sorted(safetensors(grouped), true);
  ASSERT_TRUE(h.problems.empty()) << all_messages(h);
  ASSERT_EQ(names(h), sorted_names);
  const auto at = [&](size_t i) { return h.tensors[i].name().data(); };
  EXPECT_EQ(at(1), at(2)); // "a.weight" begins "a.weight.x"
  EXPECT_NE(at(2), at(3)); // "a.weight.x" does not begin "a.weight_scale"
  EXPECT_EQ(at(3), at(4));
  EXPECT_NE(at(0), at(1));
  EXPECT_NE(at(4), at(5));
  EXPECT_EQ(h.tensors[3].dtype_text(), "F8_E4M3");

  // In file order (not sorted), each name keeps a copy of its own.
  const Header unsorted = read_bytes_sorted(safetensors(grouped), false);
  ASSERT_FALSE(unsorted.sorted);
  std::set<const char*> starts;
  for (const TensorInfo& t : unsorted.tensors) {
    starts.insert(t.name().data());
  }
  EXPECT_EQ(starts.size(), grouped.size());

  // An unknown dtype's spelling follows its name: no name is shared then.
  std::vector<TensorSpec> odd = grouped;
  odd[3].dtype = "U9";
  const Header with_unknown = read_bytes_sorted(safetensors(odd), true);
  ASSERT_EQ(names(with_unknown), sorted_names);
  EXPECT_EQ(with_unknown.tensors[1].dtype_text(), "U9");
  EXPECT_NE(with_unknown.tensors[1].name().data(), with_unknown.tensors[2].name().data());
  EXPECT_NE(with_unknown.tensors[3].name().data(), with_unknown.tensors[4].name().data());
}

TEST(Safetensors, OutOfOrderKeysKeepFileOrderByDefault)
{
  for (const Header& h :
       {read_bytes(safetensors(k_unordered)), read_bytes_sorted(safetensors(k_unordered), false)}) {
    EXPECT_TRUE(h.problems.empty());
    EXPECT_FALSE(h.sorted);
    EXPECT_EQ(names(h), (std::vector<std::string>{"b.weight", "a.weight", "c.weight"}));
    EXPECT_EQ(h.tensors[0].dtype, Dtype::F32);
    EXPECT_EQ(dims(h.tensors[1]), (std::vector<uint64_t>{4, 2}));
  }
  uint64_t size = 0;
  const std::string json = header_json(k_unordered, &size);
  const Header parsed = parse(json, size);
  EXPECT_FALSE(parsed.sorted);
  EXPECT_EQ(names(parsed), (std::vector<std::string>{"b.weight", "a.weight", "c.weight"}));
}

TEST(Safetensors, InOrderKeysAreSortedAsRead)
{
  const std::vector<TensorSpec> ordered{
    {"a.weight", "BF16", {4, 2}}, {"a.weight_scale", "F32", {}}, {"b.weight", "F32", {2}}};
  for (bool sort_by_name : {false, true}) {
    const Header h = read_bytes_sorted(safetensors(ordered), sort_by_name);
    EXPECT_TRUE(h.problems.empty());
    EXPECT_TRUE(h.sorted) << sort_by_name;
    EXPECT_EQ(names(h), (std::vector<std::string>{"a.weight", "a.weight_scale", "b.weight"}));
    EXPECT_EQ(dims(h.tensors[1]), std::vector<uint64_t>{});
    EXPECT_EQ(h.offsets[1].begin, 16u);
  }
  uint64_t size = 0;
  const std::string json = header_json(ordered, &size);
  EXPECT_TRUE(parse(json, size).sorted);
}

TEST(Safetensors, MetadataBetweenTensorsDoesNotBreakTheOrder)
{
  // "__metadata__" sorts before "a": it must not count as a tensor key out of order.
  const std::string json = R"({"a":{"dtype":"U8","shape":[1],"data_offsets":[0,1]},)"
                           R"("__metadata__":{"format":"pt"},)"
                           R"("b":{"dtype":"U8","shape":[1],"data_offsets":[1,2]}})";
  const Header h = parse(json, 2);
  EXPECT_TRUE(h.problems.empty()) << all_messages(h);
  EXPECT_TRUE(h.sorted);
  EXPECT_EQ(names(h), (std::vector<std::string>{"a", "b"}));
  ASSERT_EQ(h.metadata.size(), 1u);
}

TEST(Safetensors, DuplicateKeysInEitherRegimeReportedOnceFirstKept)
{
  struct Case
  {
    std::vector<std::string> keys;
    std::string repeated;
    std::vector<std::string> kept; // file order
  };
  const std::vector<Case> cases{
    // Keys in order up to the repeat.
    {{"a", "b", "b"}, "b", {"a", "b"}},
    {{"a", "b", "c", "c", "d"}, "c", {"a", "b", "c", "d"}},
    // The repeat comes after the order broke; its first occurrence came before.
    {{"b", "a", "b"}, "b", {"b", "a"}},
    {{"c", "a", "c"}, "c", {"c", "a"}},
    {{"a", "c", "b", "c"}, "c", {"a", "c", "b"}},
    {{"a", "c", "b", "a"}, "a", {"a", "c", "b"}},
    // The key that broke the order is the one repeated.
    {{"b", "c", "a", "d", "a"}, "a", {"b", "c", "a", "d"}},
    // First occurrence after the order broke.
    {{"d", "a", "x", "c", "x"}, "x", {"d", "a", "x", "c"}},
  };
  for (const auto& [keys, repeated, kept] : cases) {
    const std::string where = fmt::format("keys {}", fmt::join(keys, ","));
    uint64_t size = 0;
    const std::string json = keyed_json(keys, size);
    for (bool via_file : {false, true}) {
      const Header h =
        via_file ? read_bytes_sorted(raw_safetensors(json, size), false) : parse(json, size);
      ASSERT_EQ(h.problems.size(), 1u) << where << all_messages(h);
      EXPECT_EQ(h.problems[0].issue, HeaderIssue::duplicate_tensor) << where;
      EXPECT_EQ(h.problems[0].tensor, repeated) << where;
      EXPECT_EQ(h.problems[0].message, "'" + repeated + "' appears more than once in the header")
        << where;
      EXPECT_EQ(names(h), kept) << where;
      for (const auto& t : h.tensors) {
        EXPECT_EQ(t.dtype, Dtype::U8) << where << ": " << t.name(); // the first occurrence
      }
    }
    // Sorted on request, still without the repeat.
    const Header s = read_bytes_sorted(raw_safetensors(json, size), true);
    EXPECT_TRUE(s.sorted);
    auto expected = kept;
    std::sort(expected.begin(), expected.end());
    EXPECT_EQ(names(s), expected) << where;
    EXPECT_EQ(s.problems.size(), 1u) << where;
  }
}

TEST(Safetensors, DuplicateKeyRepeatedThreeTimesReportedTwice)
{
  using Keys = std::vector<std::string>;
  for (const Keys& keys : {Keys{"a", "b", "b", "b"}, Keys{"b", "a", "b", "b"}}) {
    uint64_t size = 0;
    const Header h = parse(keyed_json(keys, size), size);
    ASSERT_EQ(h.problems.size(), 2u) << all_messages(h);
    for (const auto& p : h.problems) {
      EXPECT_EQ(p.issue, HeaderIssue::duplicate_tensor);
      EXPECT_EQ(p.tensor, "b");
    }
    EXPECT_EQ(h.tensors.size(), 2u);
  }
}

TEST(Safetensors, EmptyTensorNameRepeated)
{
  // "" is a legal JSON key; a repeat of it is a duplicate like any other.
  uint64_t size = 0;
  const std::string json = keyed_json({"", ""}, size);
  const Header h = parse(json, size);
  ASSERT_EQ(h.problems.size(), 1u) << all_messages(h);
  EXPECT_EQ(h.problems[0].issue, HeaderIssue::duplicate_tensor) << all_messages(h);
  EXPECT_EQ(h.problems[0].tensor, "");
  EXPECT_EQ(h.tensors.size(), 1u);
}

TEST(Safetensors, RepeatedMetadataKey)
{
  const std::string a0 = R"("a":{"dtype":"U8","shape":[1],"data_offsets":[0,1]})";
  const std::string b0 = R"("b":{"dtype":"U8","shape":[1],"data_offsets":[0,1]})";
  const std::string a1 = R"("a":{"dtype":"U8","shape":[1],"data_offsets":[1,2]})";
  // Tensor keys in order, then out of order, between the two __metadata__.
  for (const std::string& middle : {a0, b0 + "," + a1}) {
    const std::string json = R"({"__metadata__":{"format":"pt"},)" + middle +
                             R"(,"__metadata__":{"format":"np","extra":"x"}})";
    const uint64_t size = middle.find("\"b\"") == std::string::npos ? 1 : 2;
    const Header h = parse(json, size);
    ASSERT_EQ(h.problems.size(), 1u) << all_messages(h);
    EXPECT_EQ(h.problems[0].issue, HeaderIssue::duplicate_tensor);
    EXPECT_EQ(h.problems[0].tensor, "__metadata__");
    EXPECT_EQ(h.problems[0].message, "'__metadata__' appears more than once in the header");
    // The first __metadata__ is kept, and is not a tensor.
    ASSERT_EQ(h.metadata.size(), 1u);
    EXPECT_EQ(h.metadata[0], (std::pair<std::string, std::string>{"format", "pt"}));
    for (const auto& t : h.tensors) {
      EXPECT_NE(t.name(), "__metadata__");
    }
  }
}

TEST(Safetensors, HeaderViewsSurviveMovesAndLaterReads)
{
  // Names longer than any small-string buffer, an unknown dtype spelling and assorted shapes.
  const auto specs = [](int i) {
    const std::string p = fmt::format("model.layers.{}.", i);
    return std::vector<TensorSpec>{
      {p + "self_attn.q_proj.weight", "BF16", {8, uint64_t(i + 1)}},
      {p + "mlp.up_proj.weight_packed", "I32", {uint64_t(i + 2), 3, 1}},
      {p + "mlp.up_proj.weight_scale", "F8_E4M3", {}},
      {p + "a", "F32", {uint64_t(i)}}};
  };
  const auto with_fp4 = [](int i) {
    // One tensor of unknown dtype "FP4": kept, spelling and all.
    const std::string name = fmt::format("model.layers.{}.mlp.down_proj.weight", i);
    return R"({")" + name + R"(":{"dtype":"FP4","shape":[2,)" + std::to_string(i + 4) +
           R"(],"data_offsets":[0,7]}})";
  };
  std::vector<Header> headers;
  std::vector<Header> unknown;
  for (int i = 0; i < 300; ++i) {
    // Every read reuses the reader's buffer: anything still viewing it would be overwritten.
    headers.push_back(read_bytes_sorted(safetensors(specs(i)), i % 2 == 0));
    unknown.push_back(read_bytes_sorted(raw_safetensors(with_fp4(i), 7), i % 3 == 0));
  }
  std::vector<Header> moved;
  for (auto& h : headers) {
    moved.push_back(std::move(h));
  }
  Header assigned;
  assigned = std::move(moved[7]);
  for (int i = 0; i < 300; ++i) {
    const Header& h = i == 7 ? assigned : moved[static_cast<size_t>(i)];
    auto expected = specs(i);
    if (i % 2 == 0) {
      std::sort(expected.begin(), expected.end(),
                [](const TensorSpec& a, const TensorSpec& b) { return a.name < b.name; });
    }
    ASSERT_EQ(h.tensors.size(), expected.size()) << i;
    EXPECT_TRUE(h.problems.empty()) << i << all_messages(h);
    for (size_t k = 0; k < expected.size(); ++k) {
      EXPECT_EQ(h.tensors[k].name(), expected[k].name) << i;
      EXPECT_EQ(h.tensors[k].dtype_text(), expected[k].dtype) << i;
      EXPECT_EQ(dims(h.tensors[k]), expected[k].shape) << i;
    }
    const Header& u = unknown[static_cast<size_t>(i)];
    ASSERT_EQ(u.tensors.size(), 1u) << i;
    EXPECT_EQ(u.tensors[0].name(), fmt::format("model.layers.{}.mlp.down_proj.weight", i));
    EXPECT_EQ(u.tensors[0].dtype, Dtype::unknown);
    EXPECT_EQ(u.tensors[0].dtype_text(), "FP4");
    EXPECT_EQ(dims(u.tensors[0]), (std::vector<uint64_t>{2, uint64_t(i + 4)}));
    ASSERT_EQ(u.problems.size(), 1u);
    EXPECT_EQ(u.problems[0].message,
              fmt::format("tensor 'model.layers.{}.mlp.down_proj.weight': unknown dtype 'FP4'", i));
  }
}

TEST(Safetensors, ParsedHeaderViewsOutliveTheJson)
{
  std::vector<Header> headers;
  for (int i = 0; i < 50; ++i) {
    std::string json = R"({"x.)" + std::to_string(i) +
                       R"(.weight":{"dtype":"MXFP4_custom","shape":[3,5],"data_offsets":[0,1]}})";
    headers.push_back(parse(json, 1));
    std::fill(json.begin(), json.end(), '#'); // the caller's text is gone
  }
  for (int i = 0; i < 50; ++i) {
    const Header& h = headers[static_cast<size_t>(i)];
    ASSERT_EQ(h.tensors.size(), 1u);
    EXPECT_EQ(h.tensors[0].name(), "x." + std::to_string(i) + ".weight");
    EXPECT_EQ(h.tensors[0].dtype_text(), "MXFP4_custom");
    EXPECT_EQ(dims(h.tensors[0]), (std::vector<uint64_t>{3, 5}));
  }
}

// ---- The scanner for the usual header, against simdjson's DOM ----

namespace {

// Everything a Header says, as text, so that the two parse paths can be compared whole.
std::string
describe(const Header& h)
{
  std::string out =
    fmt::format("readable={} sorted={} size={}\n", h.readable, h.sorted, h.header_size);
  EXPECT_EQ(h.offsets.size(), h.tensors.size());
  for (size_t i = 0; i < h.tensors.size(); ++i) {
    const TensorInfo& t = h.tensors[i];
    const DataOffsets o = i < h.offsets.size() ? h.offsets[i] : DataOffsets{};
    out += fmt::format("T {} {} {} [{}] {} {}\n", t.name(), t.dtype_text(),
                       static_cast<int>(t.dtype), fmt::join(t.shape(), ","), o.begin, o.end);
  }
  for (const auto& [key, value] : h.metadata) {
    out += fmt::format("M {}={}\n", key, value);
  }
  for (const HeaderProblem& p : h.problems) {
    out +=
      fmt::format("P {} {} {} {}\n", static_cast<int>(p.issue), p.is_warning, p.tensor, p.message);
  }
  return out;
}

void
expect_same_both_ways(const std::string& json, uint64_t data_size)
{
  EXPECT_EQ(describe(parse_header(json, data_size)), describe(parse_header_dom(json, data_size)))
    << json;
}

constexpr const char* k_usual =
  R"({"__metadata__":{"format":"pt"},"a.weight":{"dtype":"BF16","shape":[2,3],)"
  R"("data_offsets":[0,12]},"a.weight_scale":{"dtype":"F32","shape":[],"data_offsets":[12,16]}})";

} // namespace

TEST(Safetensors, ShapesRepeatedInAHeaderAreStoredOnce)
{
  // 38 distinct shapes of ranks 1 to 4 over 4,000 tensors in a scrambled order, and every
  // 500th tensor one of 10 or 12 dimensions, which are never shared; one name with an escape sends
  // the same header down the DOM path.
  std::vector<std::vector<uint64_t>> shapes;
  for (uint64_t i = 0; i < 38; ++i) {
    std::vector<uint64_t> shape(i % 4 + 1);
    for (size_t d = 0; d < shape.size(); ++d) {
      shape[d] = (i * 7 + d * 3) % 11 + 1;
    }
    shapes.push_back(shape);
  }
  shapes.push_back(std::vector<uint64_t>(10, 1));
  shapes.push_back(std::vector<uint64_t>(12, 1));
  for (const bool escaped : {false, true}) {
    std::string json = "{";
    uint64_t offset = 0;
    std::vector<std::vector<uint64_t>> expected;
    size_t all_dims = 0;  // of the shapes that are shared
    size_t long_dims = 0; // of the others, stored each time
    for (uint64_t i = 0; i < 4000; ++i) {
      const auto& shape =
        i % 500 == 7 ? shapes[38 + i / 500 % 2] : shapes[(i * 2654435761u >> 7) % 38];
      uint64_t bytes = 1;
      for (const uint64_t d : shape) {
        bytes *= d;
      }
      const std::string name = escaped && i == 0 ? "t\\u0030" : fmt::format("t{:04}", i);
      json += fmt::format(R"({}"{}":{{"dtype":"U8","shape":[{}],"data_offsets":[{},{}]}})",
                          i > 0 ? "," : "", name, fmt::join(shape, ","), offset, offset + bytes);
      offset += bytes;
      expected.push_back(shape);
      (shape.size() > 8 ? long_dims : all_dims) += shape.size();
    }
    json += "}";
    const Header h = read_bytes(raw_safetensors(json, offset));
    ASSERT_TRUE(h.readable) << all_messages(h);
    EXPECT_TRUE(h.problems.empty()) << all_messages(h);
    ASSERT_EQ(h.tensors.size(), expected.size());
    for (size_t i = 0; i < expected.size(); ++i) {
      ASSERT_EQ(dims(h.tensors[i]), expected[i]) << "tensor " << i << (escaped ? " (DOM)" : "");
    }
    // Each shape of up to 8 dimensions once (without sharing: about 10,000 dimensions).
    const std::set<std::vector<uint64_t>> distinct(shapes.begin(), shapes.begin() + 38);
    size_t distinct_dims = 0;
    for (const auto& shape : distinct) {
      distinct_dims += shape.size();
    }
    EXPECT_EQ(h.dim_storage.size(), long_dims + distinct_dims) << (escaped ? "DOM" : "scanner");
    EXPECT_GT(all_dims, 10 * distinct_dims);
  }
}

TEST(Safetensors, ScannerReadsTheUsualHeaderAsTheDomDoes)
{
  const Header h = parse_header(k_usual, 16);
  EXPECT_EQ(describe(h), "readable=true sorted=true size=" + std::to_string(strlen(k_usual)) +
                           "\nT a.weight BF16 6 [2,3] 0 12\nT a.weight_scale F32 9 [] 12 16\n"
                           "M format=pt\n");
  expect_same_both_ways(k_usual, 16);
  expect_same_both_ways(k_usual, 17); // data_size_mismatch
}

TEST(Safetensors, ScannerAndDomAgreeOnEveryVariantAndEveryFault)
{
  const std::string t = R"({"dtype":"U8","shape":[2],"data_offsets":[0,2]})";
  const std::vector<std::string> headers = {
    "{}",
    "{ }",
    R"({"__metadata__":{}})",
    R"({"__metadata__":{"format":"pt","k":"v"},"a":)" + t + "}",
    R"({"a":)" + t + R"(,"__metadata__":{"format":"pt"}})",
    R"({"b":)" + t + R"(,"a":{"dtype":"U8","shape":[2],"data_offsets":[2,4]}})",
    R"({"b":{"shape":[2],"data_offsets":[0,2],"dtype":"U8"}})",
    R"({"b":{"data_offsets":[0,2],"dtype":"U8","shape":[2]}})",
    " {\n\t\"a\" :\r\n { \"dtype\" : \"U8\" , \"shape\" : [ 2 ] , \"data_offsets\" : [ 0 , 2 ] } "
    "\n}",
    "{\"a\":" + t + "}   \n",
    R"({"a":{"dtype":"U8","shape":[],"data_offsets":[0,1]}})",
    R"({"a":{"dtype":"U8","shape":[0],"data_offsets":[0,0]}})",
    R"({"a":{"dtype":"U8","shape":[01],"data_offsets":[0,1]}})",
    R"({"a":{"dtype":"U8","shape":[1.0],"data_offsets":[0,1]}})",
    R"({"a":{"dtype":"U8","shape":[1e0],"data_offsets":[0,1]}})",
    R"({"a":{"dtype":"U8","shape":[1E0],"data_offsets":[0,1]}})",
    R"({"a":{"dtype":"U8","shape":[-1],"data_offsets":[0,1]}})",
    R"({"a":{"dtype":"U8","shape":[1,],"data_offsets":[0,1]}})",
    R"({"a":{"dtype":"U8","shape":[18446744073709551615],"data_offsets":[0,1]}})",
    R"({"a":{"dtype":"U8","shape":[18446744073709551616],"data_offsets":[0,1]}})",
    R"({"a":{"dtype":"U8","shape":[9999999999999999999],"data_offsets":[0,1]}})",
    R"({"a":{"dtype":"U8","shape":[2],"data_offsets":[2,0]}})",
    R"({"a":{"dtype":"U8","shape":[2],"data_offsets":[0,2,4]}})",
    R"({"a":{"dtype":"U8","shape":[2],"data_offsets":[0]}})",
    R"({"a":{"dtype":"U8","shape":[2]}})",
    R"({"a":{"dtype":"U8","shape":[2],"data_offsets":[0,2],"extra":1}})",
    R"({"a":{"dtype":"U8","dtype":"F32","shape":[2],"data_offsets":[0,2]}})",
    R"({"a":{"dtype":7,"shape":[2],"data_offsets":[0,2]}})",
    R"({"a":{"dtype":"X9","shape":[2],"data_offsets":[0,2]}})",
    R"({"a":{"dtype":"F4","shape":[3],"data_offsets":[0,2]}})",
    R"({"a":{"dtype":"U8","shape":[3],"data_offsets":[0,2]}})",
    R"({"a":{"dtype":"U8","shape":[2],"data_offsets":[1,3]}})",
    R"({"a":)" + t + R"(,"b":)" + t + "}",
    R"({"a":)" + t + R"(,"a":)" + t + "}",
    R"({"b":)" + t + R"(,"a":)" + t + R"(,"b":)" + t + "}",
    R"({"__metadata__":{},"__metadata__":{}})",
    R"({"__metadata__":{"k":1}})",
    R"({"__metadata__":[]})",
    R"({"a":[]})",
    "[]",
    R"({"a\u002eb":)" + t + "}",
    R"({"a\"b":)" + t + "}",
    "{\"\xc3\xa4\":" + t + "}",
    "{\"a\xff\":" + t + "}",
    "{\"a\":" + t + ",\"__metadata__\":{\"k\":\"\xff\"}}",
    "{\"a\":" + t + ",\"__metadata__\":{\"k\":\"\xc3\xa4\"}}",
    "{\"a\x01\":" + t + "}",
    "{\"a\":" + t + "}x",
    "{\"a\":" + t + ",}",
    "{\"a\":" + t,
    R"({"":)" + t + "}",
    // Near misses of the writers' compact spelling, which a fast path reads.
    R"({"a":{"dtype":"bf16","shape":[1],"data_offsets":[0,2]}})",
    R"({"a":{"dtype":"","shape":[2],"data_offsets":[0,2]}})",
    R"({"a":{"dtype":"U\u0038","shape":[2],"data_offsets":[0,2]}})",
    "{\"a\":{\"dtype\":\"U8\xc3\xa4\",\"shape\":[2],\"data_offsets\":[0,2]}}",
    R"({"a":{"dtype":"U8","shape":[2, 1],"data_offsets":[0,2]}})",
    R"({"a":{"dtype":"U8","shape":[2],"data_offsets":[0, 2]}})",
    R"({"a":{"dtype":"U8","shape":[2],"data_offsets":[0,2] }})",
    R"({"a":{"dtype":"U8","shape":[2],"data_offsets":[0,2]} })",
    R"({"a":{"dtype":"U8","shape":[2],"data_offsets":[0,02]}})",
    R"({"a":{"dtype":"U8","shape":[2],"data_offsets":[0,2.0]}})",
    R"({"a":{"dtype":"U8","shape":[2],"data_offsets":[0,-2]}})",
    R"({"a":{"dtype":"U8","shape":[1234567890123456789],"data_offsets":[0,2]}})",
    R"({"a":{"dtype":"U8","shape":[12345678901234567890],"data_offsets":[0,2]}})",
    R"({"a":{"dtype":"U8","shape":[2],"data_offsets":[0,1234567890123456789]}})",
    R"({"a":{"dtype":"U8","shape":[2],"data_offsets":[0,12345678901234567890]}})",
    R"({"a":{"dtype":"U8","shape":[2],"data_offsets":[3,3]}})",
    R"({"a":{"dtype":"U8","shape":[[2]],"data_offsets":[0,2]}})",
    R"({"a":{"dtype":"U8","shape":[2],"data_offsets":[0,2],"dtype":"U8"}})",
    R"({"a":{"dtype":"U8","shape":[2],"data_offsets":[0,2])",
    R"({"a":{"dtype":"U8","shape":[2],"data_offsets":[0,2)",
    R"({"a":{"dtype":"U8","shape":[2)",
    R"({"a":{"dtype":"U8)",
  };
  for (const std::string& json : headers) {
    for (uint64_t data_size : {0, 2, 4}) {
      expect_same_both_ways(json, data_size);
    }
  }
  // Every prefix of the usual header: truncations stop the scanner anywhere.
  const std::string usual = k_usual;
  for (size_t n = 0; n <= usual.size(); ++n) {
    expect_same_both_ways(usual.substr(0, n), 16);
  }
}

TEST(Safetensors, ScannerReadsNumbersOfEveryLength)
{
  // 1 to 19 digits are read by the scanner; 20 fit in 64 bits only below 2^64.
  uint64_t nines = 0;
  uint64_t power = 1; // 10^(digits - 1)
  for (int digits = 1; digits <= 19; ++digits, power *= 10) {
    nines = nines * 10 + 9;
    for (uint64_t n : {nines, power, power + 7}) {
      const std::string json =
        fmt::format(R"({{"a":{{"dtype":"U8","shape":[{}],"data_offsets":[0,{}]}}}})", n, n);
      const Header h = parse_header(json, n);
      ASSERT_EQ(h.tensors.size(), 1u) << json;
      ASSERT_EQ(h.tensors[0].shape().size(), 1u) << json;
      EXPECT_EQ(h.tensors[0].shape()[0], n) << json;
      EXPECT_EQ(h.offsets[0].end, n) << json;
      // 2^61 bytes and more are more than 2^64 bits: shape_overflow.
      EXPECT_EQ(h.problems.empty(), n < (uint64_t{1} << 61)) << json;
      expect_same_both_ways(json, n);
    }
  }
}

TEST(Safetensors, ScannerAndDomAgreeOnRandomHeaders)
{
  Lcg random(20261201);
  const std::vector<std::string> spaces = {"", "", "", " ", "\n  ", "\t", "\r\n"};
  const std::vector<std::string> dtypes = {"BF16", "F32", "U8", "F8_E4M3", "F4", "I64", "Q9"};
  const std::vector<std::string> names = {"a.weight", "a.weight_scale", "b.bias", "m.\xc3\xa4",
                                          "x\\u0041", "a.weight",       "z"};
  for (int round = 0; round < 3000; ++round) {
    const auto ws = [&] { return spaces[random(spaces.size())]; };
    std::string json = "{" + ws();
    uint64_t offset = 0;
    const size_t count = random(5);
    for (size_t i = 0; i < count; ++i) {
      if (i > 0) {
        json += "," + ws();
      }
      if (random(8) == 0) {
        json += R"("__metadata__":)" + ws() + R"({"format":)" + ws() + R"("pt"})";
        continue;
      }
      uint64_t elements = 1;
      std::string shape = "[";
      const size_t rank = random(3);
      for (size_t d = 0; d < rank; ++d) {
        const uint64_t dim = random(4) == 0 ? random(1'000'000'000) : random(20);
        elements *= dim;
        shape += (d ? "," + ws() : "") + std::to_string(dim);
      }
      shape += "]";
      const std::string dtype = dtypes[random(dtypes.size())];
      const uint64_t size = elements * (dtype == "F32" ? 4 : 2) + random(2);
      std::vector<std::string> fields = {
        R"("dtype":)" + ws() + "\"" + dtype + "\"",
        R"("shape":)" + ws() + shape,
        R"("data_offsets":)" + ws() + fmt::format("[{},{}{}]", offset, ws(), offset + size),
      };
      std::swap(fields[random(3)], fields[random(3)]);
      json += "\"" + names[random(names.size())] + "\"" + ws() + ":" + ws() + "{" + fields[0] +
              "," + ws() + fields[1] + "," + fields[2] + ws() + "}";
      offset += size;
    }
    json += ws() + "}";
    if (random(4) == 0 && !json.empty()) {
      json[random(json.size())] = "{}[],:\"\\0 9x"[random(13)];
    }
    expect_same_both_ways(json, random(3) == 0 ? offset + 1 : offset);
  }
}

// A header as safetensors writes it (dtype groups, short scalar scales first, each group in
// name order) leaves its tables no larger than it needs: they stay in memory for the whole run,
// and a large checkpoint holds millions of entries.
TEST(Safetensors, TablesAreSizedToTheEntries)
{
  std::string json = "{";
  uint64_t offset = 0;
  const auto entry = [&](const std::string& name, const char* dtype, const std::string& shape,
                         uint64_t bytes) {
    json += fmt::format(R"({}"{}":{{"dtype":"{}","shape":{},"data_offsets":[{},{}]}})",
                        json.size() > 1 ? "," : "", name, dtype, shape, offset, offset + bytes);
    offset += bytes;
  };
  for (int i = 0; i < 3000; ++i) {
    entry(fmt::format("model.layers.{}.mlp.experts.{}.down_proj.input_scale", i / 100, i % 100),
          "F32", "[]", 4);
  }
  for (int i = 0; i < 3000; ++i) {
    entry(fmt::format("model.layers.{}.mlp.experts.{}.down_proj.weight", i / 100, i % 100), "BF16",
          "[4,2]", 16);
  }
  json += "}";
  const std::string bytes = raw_safetensors(json, offset);
  for (const bool sorted : {false, true}) {
    const Header h = read_bytes_sorted(bytes, sorted);
    ASSERT_TRUE(h.readable) << all_messages(h);
    ASSERT_EQ(h.tensors.size(), 6000u);
    EXPECT_LE(h.tensors.capacity(), h.tensors.size() + h.tensors.size() / 16 + 8);
    // The 3,000 weights share one shape, stored once.
    EXPECT_EQ(h.dim_storage.size(), 2u);
    EXPECT_LE(h.dim_storage.capacity(), h.dim_storage.size() + h.dim_storage.size() / 16 + 8);
    // The names are copied back to back into name_storage, which holds nothing else.
    size_t name_bytes = 0;
    for (const TensorInfo& t : h.tensors) {
      name_bytes += t.name().size();
    }
    const char* const storage = h.name_storage.get();
    for (const TensorInfo& t : h.tensors) {
      ASSERT_GE(t.name().data(), storage);
      ASSERT_LE(t.name().data() + t.name().size(), storage + name_bytes);
    }
  }
}
