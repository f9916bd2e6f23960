#include "qcheck/safetensors.hpp"

#include <algorithm>
#include <array>
#include <bit>
#include <cstring>
#include <fmt/format.h>
#include <fmt/ranges.h>
#include <memory>
#include <new>
#include <numeric>
#include <simdjson.h>
#include <unordered_set>

#include "qcheck/json_text.hpp"

namespace qcheck {

namespace {

struct DtypeRow
{
  std::string_view name;
  Dtype dtype;
  unsigned bits;
};

constexpr std::array<DtypeRow, 22> k_dtypes{{
  {"BOOL", Dtype::BOOL, 8},
  {"U8", Dtype::U8, 8},
  {"I8", Dtype::I8, 8},
  {"U16", Dtype::U16, 16},
  {"I16", Dtype::I16, 16},
  {"F16", Dtype::F16, 16},
  {"BF16", Dtype::BF16, 16},
  {"U32", Dtype::U32, 32},
  {"I32", Dtype::I32, 32},
  {"F32", Dtype::F32, 32},
  {"U64", Dtype::U64, 64},
  {"I64", Dtype::I64, 64},
  {"F64", Dtype::F64, 64},
  {"C64", Dtype::C64, 64},
  {"F8_E4M3", Dtype::F8_E4M3, 8},
  {"F8_E5M2", Dtype::F8_E5M2, 8},
  {"F8_E8M0", Dtype::F8_E8M0, 8},
  {"F8_E4M3FNUZ", Dtype::F8_E4M3FNUZ, 8},
  {"F8_E5M2FNUZ", Dtype::F8_E5M2FNUZ, 8},
  {"F6_E2M3", Dtype::F6_E2M3, 6},
  {"F6_E3M2", Dtype::F6_E3M2, 6},
  {"F4", Dtype::F4, 4},
}};

// Rows in the enum's order: a dtype is its row's index.
constexpr bool
rows_in_enum_order()
{
  for (size_t i = 0; i < k_dtypes.size(); ++i) {
    if (static_cast<size_t>(k_dtypes[i].dtype) != i) {
      return false;
    }
  }
  return k_dtypes.size() == static_cast<size_t>(Dtype::unknown);
}
static_assert(rows_in_enum_order());

std::string
shape_text(std::span<const uint64_t> shape)
{
  return fmt::format("[{}]", fmt::join(shape, ", "));
}

// Reads the usual header's tokens for HeaderParser::parse_plain. Every method returns false on
// anything outside the subset it knows, without saying why: the DOM path then gives the message.
class PlainCursor
{
public:
  explicit PlainCursor(std::string_view text)
    : m_begin(text.data()), m_p(text.data()), m_end(text.data() + text.size())
  {
  }

  size_t offset() const { return static_cast<size_t>(m_p - m_begin); }

  // Whether a string read so far may hold a byte above 0x7F. Outside strings, the tokens read
  // are ASCII; so when this is false the text read is valid UTF-8.
  bool maybe_non_ascii() const { return m_high != 0; }

  bool at_end()
  {
    skip_space();
    return m_p == m_end;
  }

  // Consumes `c`, after any whitespace.
  bool take(char c)
  {
    if (m_p == m_end || *m_p != c) {
      skip_space();
      if (m_p == m_end || *m_p != c) {
        return false;
      }
    }
    ++m_p;
    return true;
  }

  // Consumes `text` when it comes next, after any whitespace.
  template<size_t N>
  bool take_literal(const char (&text)[N])
  {
    skip_space();
    if (static_cast<size_t>(m_end - m_p) >= N - 1 && std::memcmp(m_p, text, N - 1) == 0) {
      m_p += N - 1;
      return true;
    }
    return false;
  }

  // A string token without escapes or control characters; `out` views its contents.
  bool string(std::string_view& out)
  {
    if (!take('"')) {
      return false;
    }
    const char* const start = m_p;
    m_p = find_string_special(m_p, m_end, m_high);
    if (m_p == m_end || *m_p != '"') {
      return false;
    }
    out = std::string_view(start, static_cast<size_t>(m_p - start));
    ++m_p;
    return true;
  }

  // The digits of an integer without sign or leading zero, at most 19 so that it fits in 64
  // bits.
  bool uint(uint64_t& out)
  {
    skip_space();
    return read_uint(m_p, m_end, out);
  }

  // An entry's value as safetensors writers spell it, with no whitespace and the fields in
  // their order: {"dtype":"F8_E4M3","shape":[7168,2048],"data_offsets":[0,14680064]}. Read in
  // one pass: the dtype's text (letters, digits, '_'), the dimensions appended to `dims`, the
  // offsets (end not below begin). Numbers are read as uint() reads them. False, with the
  // cursor and `dims` as they were, on any other spelling: the general reader takes it.
  bool compact_entry(std::string_view& dtype, std::vector<uint64_t>& dims, uint64_t& begin,
                     uint64_t& end)
  {
    const char* p = m_p;
    const size_t dims_before = dims.size();
    const auto literal = [&]<size_t N>(const char(&text)[N]) {
      if (static_cast<size_t>(m_end - p) < N - 1 || std::memcmp(p, text, N - 1) != 0) {
        return false;
      }
      p += N - 1;
      return true;
    };
    const auto number = [&](uint64_t& out) { return read_uint(p, m_end, out); };
    const auto fail = [&] {
      dims.resize(dims_before);
      return false;
    };
    if (!literal("{\"dtype\":\"")) {
      return false;
    }
    const char* const dtype_start = p;
    while (p < m_end && is_dtype_char(*p)) {
      ++p;
    }
    if (p == dtype_start) {
      return false;
    }
    dtype = std::string_view(dtype_start, static_cast<size_t>(p - dtype_start));
    if (!literal("\",\"shape\":[")) {
      return false;
    }
    if (p < m_end && *p == ']') {
      ++p;
    } else {
      for (;;) {
        uint64_t dim = 0;
        if (!number(dim)) {
          return fail();
        }
        dims.push_back(dim);
        if (p < m_end && *p == ',') {
          ++p;
          continue;
        }
        if (p < m_end && *p == ']') {
          ++p;
          break;
        }
        return fail();
      }
    }
    if (!literal(",\"data_offsets\":[") || !number(begin) || !literal(",") || !number(end) ||
        !literal("]}") || end < begin) {
      return fail();
    }
    m_p = p;
    return true;
  }

private:
  // A letter, digit or '_': one table lookup per byte of every tensor's dtype.
  static bool is_dtype_char(char c) { return k_dtype_chars[static_cast<unsigned char>(c)]; }

  static constexpr std::array<bool, 256> k_dtype_chars = [] {
    std::array<bool, 256> table{};
    for (unsigned c = 0; c < table.size(); ++c) {
      table[c] =
        (c >= 'A' && c <= 'Z') || (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') || c == '_';
    }
    return table;
  }();

  static constexpr uint64_t k_powers[9] = {1,      10,      100,      1000,     10000,
                                           100000, 1000000, 10000000, 100000000};

  static bool is_digit(char c) { return static_cast<unsigned char>(c - '0') < 10; }

  // The digits of an integer at `p`, which moves past them: without sign or leading zero, at
  // most 19 so that it fits in 64 bits. A fraction or exponent stops the caller, who expects
  // ',' or ']' next.
  // Inlined into its few callers: a call's register saves cost a third of the usual read.
  [[gnu::always_inline]] static bool read_uint(const char*& p, const char* end, uint64_t& out)
  {
    // Up to 15 digits (every dimension and offset of a real header) from two 8-byte loads, no
    // loop; read_long_uint() takes the rest and says what is wrong.
    if constexpr (std::endian::native == std::endian::little) {
      if (end - p >= 16) {
        uint64_t high = 0, low = 0;
        std::memcpy(&high, p, 8);
        std::memcpy(&low, p + 8, 8);
        high -= k_zero_bytes;
        low -= k_zero_bytes;
        const size_t high_digits = digit_count(high);
        const size_t digits = high_digits < 8 ? high_digits : 8 + digit_count(low);
        if (digits >= 1 && digits <= 15 && (digits == 1 || (high & 0xFF) != 0)) {
          out = digits <= 8 ? eight_digits(high << (8 * (8 - digits)))
                            : eight_digits(high) * k_powers[digits - 8] +
                                eight_digits(low << (8 * (16 - digits)));
          p += digits;
          return true;
        }
      }
    }
    return read_long_uint(p, end, out);
  }

  static constexpr uint64_t k_zero_bytes = 0x3030303030303030ull; // '0' in every byte

  // How many of a word's bytes, less '0' each, are digits from the first on. A borrow only
  // crosses out of a byte that is no digit; a byte is a digit when it is now 0..9: high nibble
  // clear, and still clear after adding 6.
  static size_t digit_count(uint64_t word)
  {
    const uint64_t other = (word | (word + 0x0606060606060606ull)) & 0xF0F0F0F0F0F0F0F0ull;
    return other == 0 ? 8 : static_cast<size_t>(std::countr_zero(other)) / 8;
  }

  // read_uint() for any length, 8 digits at a time.
  [[gnu::noinline]] static bool read_long_uint(const char*& p, const char* end, uint64_t& out)
  {
    const char* const start = p;
    uint64_t value = 0;
    for (;;) {
      uint64_t word = 0;
      size_t digits = 0;
      if (!leading_digits(p, end, word, digits)) {
        for (; p < end && is_digit(*p); ++p) {
          value = value * 10 + static_cast<uint64_t>(*p - '0');
        }
        break;
      }
      if (digits == 0) {
        break;
      }
      value = value * k_powers[digits] + eight_digits(word << (8 * (8 - digits)));
      p += digits;
      if (digits < 8 || p - start > 19) {
        break;
      }
    }
    const auto digits = p - start;
    if (digits == 0 || digits > 19 || (digits > 1 && *start == '0')) {
      return false;
    }
    out = value;
    return true;
  }

  // With 8 bytes readable at p (little-endian only): `word` holds them less '0' each, and
  // `digits` how many of them, from the first, are digits.
  static bool leading_digits(const char* p, const char* end, uint64_t& word, size_t& digits)
  {
    if constexpr (std::endian::native != std::endian::little) {
      return false;
    }
    if (end - p < 8) {
      return false;
    }
    std::memcpy(&word, p, 8);
    word -= k_zero_bytes;
    digits = digit_count(word);
    return true;
  }

  // The number whose 8 decimal digits (0..9, most significant first) are the bytes of `word`.
  static uint64_t eight_digits(uint64_t word)
  {
    word = (word * 10) + (word >> 8);
    return (((word & 0x000000FF000000FFull) * (100 + (1000000ull << 32))) +
            (((word >> 16) & 0x000000FF000000FFull) * (1 + (10000ull << 32)))) >>
           32;
  }

  void skip_space()
  {
    while (m_p < m_end && (*m_p == ' ' || *m_p == '\n' || *m_p == '\r' || *m_p == '\t')) {
      ++m_p;
    }
  }

  const char* m_begin;
  const char* m_p;
  const char* m_end;
  unsigned m_high = 0;
};

// Sorts by name. Writers list a shard's tensors grouped by dtype, each group in name order: the
// runs already in order are merged pairwise, n log(runs) instead of n log(n) comparisons. Many
// runs are sorted from scratch.
template<typename T, typename NameOf>
void
sort_by_name_in_runs(std::vector<T>& tensors, NameOf name_of)
{
  constexpr size_t k_max_runs = 64;
  const auto by_name = [&](const T& a, const T& b) { return name_of(a) < name_of(b); };
  std::vector<size_t> bounds{0}; // where each run starts, then the end
  for (size_t i = 1; i < tensors.size(); ++i) {
    if (by_name(tensors[i], tensors[i - 1])) {
      bounds.push_back(i);
      if (bounds.size() > k_max_runs) {
        std::sort(tensors.begin(), tensors.end(), by_name);
        return;
      }
    }
  }
  bounds.push_back(tensors.size());
  const auto at = [&](size_t offset) {
    return tensors.begin() + static_cast<std::ptrdiff_t>(offset);
  };
  while (bounds.size() > 2) {
    std::vector<size_t> merged{0};
    size_t r = 0;
    for (; r + 2 < bounds.size(); r += 2) {
      std::inplace_merge(at(bounds[r]), at(bounds[r + 1]), at(bounds[r + 2]), by_name);
      merged.push_back(bounds[r + 2]);
    }
    if (r + 1 < bounds.size()) {
      merged.push_back(bounds[r + 1]); // an odd run out, merged in the next round
    }
    bounds = std::move(merged);
  }
}

// Whether a header's tensor keys repeat, for the DOM path, which drops each repeat as it comes.
// None can while keys arrive in increasing order; from the first key out of order on, a hash
// set of every key seen.
class RepeatedKeys
{
public:
  // Whether `key` came before. `earlier(set)` inserts every tensor key before this one into
  // `set`; it is called once, at the first key out of order.
  template<typename Earlier>
  bool repeated(std::string_view key, const Earlier& earlier)
  {
    if (m_in_order && m_previous && key <= *m_previous) {
      m_in_order = false;
      earlier(m_seen);
    }
    m_previous = key;
    return !m_in_order && !m_seen.insert(key).second;
  }

  // The keys so far came in strictly increasing order.
  bool in_order() const { return m_in_order; }

private:
  bool m_in_order = true;
  std::optional<std::string_view> m_previous;
  std::unordered_set<std::string_view> m_seen;
};

class HeaderParser
{
public:
  // With `plain_first`, the usual header is read by parse_plain and only other headers by
  // simdjson's DOM; without it every header goes through the DOM. With `sort_by_name` the
  // tensors end sorted by name.
  HeaderParser(Header& out, uint64_t data_size, bool plain_first, bool sort_by_name,
               bool keep_offsets = true)
    : m_out(out), m_data_size(data_size), m_plain_first(plain_first), m_sort_by_name(sort_by_name),
      m_keep_offsets(keep_offsets)
  {
  }

  void problem(HeaderIssue issue, std::string tensor, std::string message)
  {
    m_dropped |= issue != HeaderIssue::unknown_dtype && issue != HeaderIssue::size_mismatch &&
                 issue != HeaderIssue::shape_overflow && issue != HeaderIssue::partial_byte;
    m_out.problems.push_back({issue, false, std::move(tensor), std::move(message)});
  }

  // `json` must be followed by simdjson::SIMDJSON_PADDING readable bytes when `padded`.
  void parse(std::string_view json, bool padded)
  {
    const size_t first = json.find_first_not_of(" \t\r\n");
    if (json.empty() || json[0] != '{') {
      problem(HeaderIssue::bad_start, "",
              first != std::string_view::npos && json[first] == '{'
                ? "header starts with whitespace; the format requires '{' as its first byte"
                : "header does not start with '{'");
      return;
    }
    // The padding is not parsed: simdjson reserves about 13 bytes per byte it is given, so a
    // header of "{}" padded to the 100 MB limit would reserve 1.3 GB.
    json = json.substr(0, json.find_last_not_of(" \t\r\n") + 1);
    if (m_plain_first) {
      bool in_order = true;
      try {
        if (parse_plain(json, in_order)) {
          finish(in_order);
          if (in_order || names_distinct()) {
            m_out.plain_names = true;
            return;
          }
        }
        clear();
      } catch (const std::bad_alloc&) {
        // The DOM path needs more memory than this one: it reports the shortage.
        clear();
        m_out.tensors.shrink_to_fit();
        m_out.dim_storage.shrink_to_fit();
        m_shapes.shrink_to_fit();
        m_offsets.shrink_to_fit();
      }
    }
    simdjson::dom::parser& parser = thread_parser();
    // A header is at most 3 levels deep. Growing the parser costs about 13 bytes per byte, so
    // deep nesting is refused before the parser sizes itself; a parser already large enough
    // parses first, and a failure is then checked for depth so the message is the same.
    if (json.size() > parser.capacity()) {
      if (nesting_exceeds(json, k_max_depth)) {
        problem(HeaderIssue::invalid_json, "", depth_message());
        return;
      }
      if (parser.allocate(json.size(), k_max_depth) != simdjson::SUCCESS) {
        problem(HeaderIssue::read_failed, "",
                fmt::format("not enough memory to parse the {}-byte header", json.size()));
        return;
      }
    }
    simdjson::dom::element root;
    if (auto error = parser.parse(json.data(), json.size(), !padded).get(root); error) {
      if (error == simdjson::MEMALLOC) {
        problem(HeaderIssue::read_failed, "",
                fmt::format("not enough memory to parse the {}-byte header", json.size()));
        return;
      }
      problem(HeaderIssue::invalid_json, "",
              nesting_exceeds(json, k_max_depth)
                ? depth_message()
                : fmt::format("header is not valid JSON: {}", describe(error)));
      return;
    }
    simdjson::dom::object object;
    if (root.get_object().get(object)) {
      problem(HeaderIssue::not_an_object, "", "header is not a JSON object");
      return;
    }
    if (const size_t at = negative_zero_at(json); at != std::string_view::npos) {
      problem(HeaderIssue::bad_entry, "",
              fmt::format("header byte {} holds the number -0, which safetensors reads as the "
                          "float -0.0 and refuses as a shape or offset",
                          at));
      return;
    }
    reserve(object.size());
    RepeatedKeys keys;
    bool has_metadata = false;
    for (auto field : object) {
      const std::string_view key = field.key;
      const bool is_metadata = key == "__metadata__";
      const auto earlier = [&](std::unordered_set<std::string_view>& seen) {
        seen.reserve(object.size());
        for (auto before : object) {
          if (before.key.data() == key.data()) {
            break;
          }
          seen.insert(before.key);
        }
      };
      const bool repeated = is_metadata ? has_metadata : keys.repeated(key, earlier);
      if (repeated) {
        problem(HeaderIssue::duplicate_tensor, std::string(key),
                fmt::format("'{}' appears more than once in the header", key));
        continue;
      }
      if (is_metadata) {
        has_metadata = true;
        parse_metadata(field.value);
      } else {
        parse_tensor(key, field.value);
      }
    }
    finish(keys.in_order());
  }

private:
  // Sets the shapes' spans (dim_storage has stopped growing), checks the data layout, sorts
  // on request (offsets alike) and copies the names out of the parsed text.
  void finish(bool in_order)
  {
    m_out.readable = true;
    // A table kept for the whole run larger than its entries costs more than one copy.
    fit(m_out.tensors);
    fit(m_out.dim_storage);
    const std::span<const uint64_t> dims(m_out.dim_storage);
    for (size_t i = 0; i < m_shapes.size(); ++i) {
      m_out.tensors[i].set_shape(dims.subspan(m_shapes[i].at, m_shapes[i].rank));
    }
    check_layout();
    // Unknown dtypes' spellings are placed by file order; then names are not shared.
    const bool share_names = m_unknown_dtypes.empty();
    if (!share_names) {
      keep_names(false);
    }
    // Dropped entries keep the order of the rest: strictly increasing while in_order held.
    m_out.sorted = in_order;
    const bool sort = m_sort_by_name && !in_order;
    if (m_keep_offsets) {
      fit(m_offsets);
      m_out.offsets = std::move(m_offsets);
      if (sort) {
        sort_with_offsets();
      }
    } else if (sort) {
      sort_by_name_in_runs(m_out.tensors, [](const TensorInfo& t) { return t.name(); });
    }
    m_out.sorted = m_out.sorted || sort;
    if (share_names) {
      keep_names(m_out.sorted);
    }
  }

  // Sorts the tensors by name and their offsets alike.
  void sort_with_offsets()
  {
    std::vector<std::pair<TensorInfo, DataOffsets>> both;
    both.reserve(m_out.tensors.size());
    for (size_t i = 0; i < m_out.tensors.size(); ++i) {
      both.emplace_back(m_out.tensors[i], m_out.offsets[i]);
    }
    sort_by_name_in_runs(both, [](const auto& p) { return p.first.name(); });
    for (size_t i = 0; i < both.size(); ++i) {
      m_out.tensors[i] = both[i].first;
      m_out.offsets[i] = both[i].second;
    }
  }

  template<typename T>
  static void fit(std::vector<T>& table)
  {
    if (table.capacity() - table.size() > table.size() / 16 + 8) {
      table.shrink_to_fit();
    }
  }

  // Whether no two tensors share a name: parse_plain leaves repeated keys to this check, which
  // needs no hash set (the names are sorted, or a copy of them is).
  bool names_distinct() const
  {
    const auto& tensors = m_out.tensors;
    if (m_out.sorted) {
      return std::adjacent_find(tensors.begin(), tensors.end(),
                                [](const TensorInfo& a, const TensorInfo& b) {
                                  return a.name() == b.name();
                                }) == tensors.end();
    }
    std::vector<std::string_view> names;
    names.reserve(tensors.size());
    for (const TensorInfo& t : tensors) {
      names.push_back(t.name());
    }
    std::sort(names.begin(), names.end());
    return std::adjacent_find(names.begin(), names.end()) == names.end();
  }

  void reserve(size_t tensors)
  {
    m_out.tensors.reserve(tensors);
    m_shapes.reserve(tensors);
    m_offsets.reserve(tensors);
  }

  // Forgets what a parse_plain that gave up had added.
  void clear()
  {
    m_out.readable = false;
    m_out.sorted = false;
    m_out.tensors.clear();
    m_out.offsets.clear();
    m_offsets.clear();
    m_out.metadata.clear();
    m_out.problems.clear();
    m_out.name_storage.reset();
    m_out.dim_storage.clear();
    m_shapes.clear();
    m_shape_cache = {};
    m_shapes_cached = 0;
    m_unknown_dtypes.clear();
    m_dropped = false;
    m_dtype_count = 0;
  }

  // The usual header without a DOM: one pass, no allocation beyond the results. Gives up
  // (false) on escapes, control characters, fields other than dtype, shape and data_offsets or
  // one of them repeated or missing, numbers that are not plain digits, __metadata__ that is
  // not an object of strings, reversed offsets, and invalid UTF-8; a repeated key is found by
  // names_distinct afterwards. What it accepts it reads exactly as the DOM path does, problems
  // included. `in_order`: the keys came in strictly increasing order.
  bool parse_plain(std::string_view json, bool& in_order)
  {
    PlainCursor in(json);
    if (!in.take('{')) {
      return false;
    }
    std::string_view previous;
    bool has_metadata = false;
    size_t tensor_bytes = 0; // the tensor entries' text so far
    if (!in.take('}')) {
      do {
        const size_t entry_start = in.offset();
        std::string_view key;
        if (!in.string(key) || !in.take(':')) {
          return false;
        }
        if (key == "__metadata__") {
          if (has_metadata || !plain_metadata(in)) {
            return false;
          }
          has_metadata = true;
          continue;
        }
        in_order = in_order && (m_out.tensors.empty() || previous < key);
        previous = key;
        if (!compact_tensor(in, key) && !plain_tensor(in, key)) {
          return false;
        }
        tensor_bytes += in.offset() - entry_start;
        // From the 64th entry on, whenever the tables are full, the mean entry length so far
        // predicts how many entries are left (finish() returns what is over).
        const size_t count = m_out.tensors.size();
        if (count >= k_entries_to_estimate && count == m_out.tensors.capacity()) {
          const size_t left =
            (json.size() - in.offset()) / std::max<size_t>(tensor_bytes / count, 32);
          reserve(count + std::max(left + left / 16, count / 8) + 8);
        }
      } while (in.take(','));
      if (!in.take('}')) {
        return false;
      }
    }
    return in.at_end() &&
           (!in.maybe_non_ascii() || simdjson::validate_utf8(json.data(), json.size()));
  }

  bool plain_metadata(PlainCursor& in)
  {
    if (!in.take('{')) {
      return false;
    }
    if (in.take('}')) {
      return true;
    }
    do {
      std::string_view key, value;
      if (!in.string(key) || !in.take(':') || !in.string(value)) {
        return false;
      }
      m_out.metadata.emplace_back(std::string(key), std::string(value));
    } while (in.take(','));
    return in.take('}');
  }

  // The usual spelling of an entry, read by PlainCursor::compact_entry; false, with nothing
  // consumed or added, for plain_tensor to read any other.
  bool compact_tensor(PlainCursor& in, std::string_view key)
  {
    std::string_view dtype_text;
    const size_t dims_start = m_out.dim_storage.size();
    uint64_t begin = 0, end = 0;
    if (!in.compact_entry(dtype_text, m_out.dim_storage, begin, end)) {
      return false;
    }
    add_tensor(key, checked_dtype(key, dtype_text), dtype_text, dims_start, begin, end);
    return true;
  }

  bool plain_tensor(PlainCursor& in, std::string_view key)
  {
    if (!in.take('{')) {
      return false;
    }
    std::string_view dtype_text;
    const size_t dims_start = m_out.dim_storage.size();
    uint64_t begin = 0, end = 0;
    bool has_dtype = false, has_shape = false, has_offsets = false;
    enum class Field
    {
      dtype,
      shape,
      offsets,
      other,
    };
    do {
      // The writers' spelling of a field name is matched as one literal.
      Field field = Field::other;
      if (in.take_literal("\"dtype\":")) {
        field = Field::dtype;
      } else if (in.take_literal("\"shape\":")) {
        field = Field::shape;
      } else if (in.take_literal("\"data_offsets\":")) {
        field = Field::offsets;
      } else {
        std::string_view name;
        if (!in.string(name) || !in.take(':')) {
          return false;
        }
        field = name == "dtype"          ? Field::dtype
                : name == "shape"        ? Field::shape
                : name == "data_offsets" ? Field::offsets
                                         : Field::other;
      }
      if (field == Field::dtype && !has_dtype) {
        has_dtype = in.string(dtype_text);
        if (!has_dtype) {
          return false;
        }
      } else if (field == Field::shape && !has_shape) {
        if (!in.take('[')) {
          return false;
        }
        if (!in.take(']')) {
          do {
            uint64_t dim = 0;
            if (!in.uint(dim)) {
              return false;
            }
            m_out.dim_storage.push_back(dim);
          } while (in.take(','));
          if (!in.take(']')) {
            return false;
          }
        }
        has_shape = true;
      } else if (field == Field::offsets && !has_offsets) {
        if (!in.take('[') || !in.uint(begin) || !in.take(',') || !in.uint(end) || !in.take(']')) {
          return false;
        }
        has_offsets = true;
      } else {
        return false;
      }
    } while (in.take(','));
    if (!in.take('}') || !has_dtype || !has_shape || !has_offsets || end < begin) {
      return false;
    }
    add_tensor(key, checked_dtype(key, dtype_text), dtype_text, dims_start, begin, end);
    return true;
  }

  // The dtype a spelling names; an unknown one is a problem, and the tensor is kept.
  // Inlined, its problem out of line: run once per tensor, a call with the message's
  // formatting in it cost more than the lookup.
  [[gnu::always_inline]] std::optional<Dtype> checked_dtype(std::string_view key,
                                                            std::string_view text)
  {
    const std::optional<Dtype> dtype = dtype_of(text);
    if (!dtype) [[unlikely]] {
      unknown_dtype(key, text);
    }
    return dtype;
  }

  [[gnu::cold, gnu::noinline]] void unknown_dtype(std::string_view key, std::string_view text)
  {
    problem(HeaderIssue::unknown_dtype, std::string(key),
            fmt::format("tensor '{}': unknown dtype '{}'", key, text));
  }

  // Appends a tensor whose shape is dim_storage from dims_start on.
  // Inlined as checked_dtype() is; its problems out of line.
  [[gnu::always_inline]] void add_tensor(std::string_view key, std::optional<Dtype> dtype,
                                         std::string_view dtype_text, size_t dims_start,
                                         uint64_t begin, uint64_t end)
  {
    const size_t rank = m_out.dim_storage.size() - dims_start;
    if (rank > TensorInfo::k_max_rank) [[unlikely]] {
      too_many_dimensions(key, dims_start);
      return;
    }
    TensorInfo tensor;
    tensor.set_name(key); // views the parsed text until keep_names() copies it
    tensor.dtype = dtype.value_or(Dtype::unknown);
    if (!dtype) {
      m_unknown_dtypes.emplace_back(m_out.tensors.size(), dtype_text);
    }
    if (tensor.dtype != Dtype::unknown) {
      check_size(tensor, {begin, end},
                 std::span<const uint64_t>(m_out.dim_storage).subspan(dims_start));
    }
    m_shapes.push_back(keep_shape(dims_start, rank));
    m_offsets.push_back({begin, end});
    m_out.tensors.push_back(tensor);
  }

  // A shape's place in dim_storage.
  struct ShapeAt
  {
    uint32_t at = 0;
    uint32_t rank = 0; // 0: an empty slot of m_shape_cache
  };

  // Where a tensor's shape, just appended to dim_storage at dims_start, is kept: a shape
  // already stored by an earlier tensor of this header is shared (a shard holds a few
  // distinct shapes among thousands of tensors), the copy taken back. 8 bytes a dimension
  // were about 5% of a large checkpoint's memory.
  [[gnu::always_inline]] ShapeAt keep_shape(size_t dims_start, size_t rank)
  {
    // A header holds fewer than 2^32 bytes, so fewer dimensions.
    const ShapeAt here{static_cast<uint32_t>(dims_start), static_cast<uint32_t>(rank)};
    if (rank == 0 || rank > k_shared_rank) {
      return here;
    }
    const uint64_t* const shape = m_out.dim_storage.data() + dims_start;
    uint64_t hash = rank;
    for (size_t d = 0; d < rank; ++d) {
      hash = (hash ^ shape[d]) * 0x9E3779B97F4A7C15ull;
    }
    // Linear probing; full past 3/4, after which new shapes are stored as they come.
    constexpr size_t k_slots = size_t{1} << k_shape_cache_bits;
    for (size_t i = hash >> (64 - k_shape_cache_bits);; i = (i + 1) % k_slots) {
      ShapeAt& slot = m_shape_cache[i];
      if (slot.rank == 0) {
        if (m_shapes_cached < k_slots / 4 * 3) {
          slot = here;
          ++m_shapes_cached;
        }
        return here;
      }
      if (slot.rank == rank && same_dims(shape, m_out.dim_storage.data() + slot.at, rank)) {
        m_out.dim_storage.resize(dims_start);
        return slot;
      }
    }
  }

  // A loop, not std::equal: that calls memcmp, costly for the usual one to four dimensions.
  static bool same_dims(const uint64_t* a, const uint64_t* b, size_t rank)
  {
    for (size_t d = 0; d < rank; ++d) {
      if (a[d] != b[d]) {
        return false;
      }
    }
    return true;
  }

  [[gnu::cold, gnu::noinline]] void too_many_dimensions(std::string_view key, size_t dims_start)
  {
    const size_t rank = m_out.dim_storage.size() - dims_start;
    m_out.dim_storage.resize(dims_start);
    problem(HeaderIssue::bad_shape, std::string(key),
            fmt::format("tensor '{}': shape has {} dimensions; at most {} are read", key, rank,
                        TensorInfo::k_max_rank));
  }

  static constexpr size_t k_max_depth = 64;
  static constexpr size_t k_entries_to_estimate = 64;

  static std::string depth_message()
  {
    return fmt::format("header is not valid JSON: nested more than {} levels deep", k_max_depth);
  }

  // Skips strings with memchr: most of a header's bytes are inside names.
  static bool nesting_exceeds(std::string_view json, size_t limit)
  {
    size_t depth = 0;
    const char* p = json.data();
    const char* const end = p + json.size();
    while (p < end) {
      const char c = *p++;
      if (c == '"') {
        const size_t close = string_token_end(json, static_cast<size_t>(p - 1 - json.data()));
        if (close == json.size()) {
          return false; // unterminated: the parser says so
        }
        p = json.data() + close + 1;
      } else if (c == '{' || c == '[') {
        if (++depth > limit) {
          return true;
        }
      } else if ((c == '}' || c == ']') && depth > 0) {
        --depth;
      }
    }
    return false;
  }

  // The offset of a number written -0 in a "shape" or "data_offsets" list, or npos. JSON allows
  // it and simdjson reads it as 0; serde reads the float -0.0, which no shape or offset may be.
  // (Elsewhere, in a field safetensors ignores, it is harmless.)
  static size_t negative_zero_at(std::string_view json)
  {
    if (json.find("-0") == std::string_view::npos) {
      return std::string_view::npos;
    }
    bool after_key = false; // the last token was "shape" or "data_offsets" (then ':')
    bool in_list = false;   // inside that key's list
    for (size_t i = 0; i < json.size(); ++i) {
      const char c = json[i];
      if (c == '"') {
        const size_t close = string_token_end(json, i);
        const std::string_view text = json.substr(i + 1, close - std::min(close, i + 1));
        after_key = !in_list && (text == "shape" || text == "data_offsets");
        i = close;
      } else if (c == ':' || c == ' ' || c == '\t' || c == '\r' || c == '\n') {
        continue;
      } else if (c == '[') {
        in_list = after_key;
        after_key = false;
      } else if (c == ']') {
        in_list = false;
      } else {
        after_key = false;
        if (in_list && c == '-' && i + 1 < json.size() && json[i + 1] == '0' &&
            (i + 2 == json.size() ||
             std::string_view(",] \t\r\n").find(json[i + 2]) != std::string_view::npos)) {
          return i;
        }
      }
    }
    return std::string_view::npos;
  }

  static simdjson::dom::parser& thread_parser()
  {
    thread_local simdjson::dom::parser parser;
    return parser;
  }

  static std::string describe(simdjson::error_code error)
  {
    switch (error) {
    case simdjson::UTF8_ERROR:
      return "not valid UTF-8";
    case simdjson::DEPTH_ERROR:
      return fmt::format("nested more than {} levels deep", k_max_depth);
    case simdjson::NUMBER_ERROR:
      return "a number is malformed or does not fit in 64 bits";
    case simdjson::STRING_ERROR:
    case simdjson::UNCLOSED_STRING:
      return "a string is malformed";
    case simdjson::UNESCAPED_CHARS:
      return "a string contains an unescaped control character";
    case simdjson::TAPE_ERROR:
    case simdjson::INCOMPLETE_ARRAY_OR_OBJECT:
      return "unbalanced brackets, a missing comma, key or value, or a non-JSON value such as NaN";
    case simdjson::T_ATOM_ERROR:
    case simdjson::F_ATOM_ERROR:
    case simdjson::N_ATOM_ERROR:
      return "an invalid literal (true, false, null; NaN and Infinity are not JSON)";
    default:
      return simdjson::error_message(error);
    }
  }

  void parse_metadata(simdjson::dom::element value)
  {
    simdjson::dom::object object;
    if (value.get_object().get(object)) {
      problem(HeaderIssue::bad_metadata, "", "__metadata__ is not an object of strings");
      return;
    }
    for (auto field : object) {
      std::string_view text;
      if (field.value.get_string().get(text)) {
        problem(HeaderIssue::bad_metadata, "",
                fmt::format("__metadata__ value '{}' is not a string", field.key));
        continue;
      }
      m_out.metadata.emplace_back(std::string(field.key), std::string(text));
    }
  }

  // Whether `name` is a proper prefix of `next`. Sorted neighbours share long starts, so their
  // last 8 bytes are compared first.
  static bool begins(std::string_view name, std::string_view next)
  {
    const size_t n = name.size();
    if (n >= next.size()) {
      return false;
    }
    if (n >= 8) {
      uint64_t a = 0, b = 0;
      std::memcpy(&a, name.data() + n - 8, 8);
      std::memcpy(&b, next.data() + n - 8, 8);
      return a == b && std::memcmp(name.data(), next.data(), n - 8) == 0;
    }
    return next.starts_with(name);
  }

  // Copies every name, and after it any unknown dtype's spelling (where dtype_text() finds
  // it), into name_storage, sized to fit exactly, and points the tensors at the copies. Until
  // then names view the parsed text, which lives as long as parse(). With `share_prefixes`
  // (sorted names, no unknown dtype), a name that begins the next one views the next one's
  // copy: "x.weight", "x.weight_scale" and "x.weight_scale_2" take one copy, about half of a
  // quantized checkpoint's name bytes.
  void keep_names(bool share_prefixes)
  {
    auto& tensors = m_out.tensors;
    const size_t n = tensors.size();
    // Bit i: name i views the next one's copy.
    const std::unique_ptr<uint64_t[]> shared(new uint64_t[share_prefixes ? n / 64 + 1 : 0]());
    size_t total = 0;
    for (size_t i = 0; i < n; ++i) {
      const std::string_view name = tensors[i].name();
      if (share_prefixes && i + 1 < n && begins(name, tensors[i + 1].name())) {
        shared[i / 64] |= uint64_t{1} << (i % 64);
        continue;
      }
      total += name.size();
    }
    for (const auto& [index, spelling] : m_unknown_dtypes) {
      total += sizeof(uint32_t) + spelling.size();
    }
    // Left unwritten until filled: no pass to zero it first.
    m_out.name_storage.reset(new char[total]);
    char* at = m_out.name_storage.get();
    auto unknown = m_unknown_dtypes.begin();
    for (size_t i = 0; i < n; ++i) {
      TensorInfo& t = tensors[i];
      const std::string_view name = t.name();
      if (share_prefixes && (shared[i / 64] >> (i % 64) & 1) != 0) {
        // The next name not shared is copied at `at`, and begins with this one.
        t.set_name({at, name.size()});
        continue;
      }
      std::memcpy(at, name.data(), name.size());
      t.set_name({at, name.size()});
      at += name.size();
      if (unknown != m_unknown_dtypes.end() && unknown->first == i) {
        // Where dtype_text() reads it: the length, then the spelling (shorter than the header).
        const auto size = static_cast<uint32_t>(unknown->second.size());
        std::memcpy(at, &size, sizeof size);
        at += sizeof size;
        std::memcpy(at, unknown->second.data(), size);
        at += size;
        ++unknown;
      }
    }
  }

  void parse_tensor(std::string_view key, simdjson::dom::element value)
  {
    simdjson::dom::object entry;
    if (value.get_object().get(entry)) {
      problem(HeaderIssue::bad_entry, std::string(key),
              fmt::format("tensor '{}': entry is not an object", key));
      return;
    }
    // One pass over the entry's fields. A repeated one makes the header unreadable upstream
    // (serde refuses a duplicate field), so the tensor is reported and skipped.
    simdjson::dom::element dtype_el, shape_el, offsets_el;
    bool has_dtype = false, has_shape = false, has_offsets = false;
    for (auto field : entry) {
      const std::string_view name = field.key;
      if ((has_dtype && name == "dtype") || (has_shape && name == "shape") ||
          (has_offsets && name == "data_offsets")) {
        problem(HeaderIssue::bad_entry, std::string(key),
                fmt::format("tensor '{}': '{}' appears twice; safetensors refuses a header with "
                            "a repeated field",
                            key, name));
        return;
      }
      if (!has_dtype && name == "dtype") {
        dtype_el = field.value;
        has_dtype = true;
      } else if (!has_shape && name == "shape") {
        shape_el = field.value;
        has_shape = true;
      } else if (!has_offsets && name == "data_offsets") {
        offsets_el = field.value;
        has_offsets = true;
      }
    }
    for (auto [field, present] : {std::pair{"dtype", has_dtype}, std::pair{"shape", has_shape},
                                  std::pair{"data_offsets", has_offsets}}) {
      if (!present) {
        problem(HeaderIssue::missing_field, std::string(key),
                fmt::format("tensor '{}': missing '{}'", key, field));
        return;
      }
    }
    std::string_view dtype_text;
    if (dtype_el.get_string().get(dtype_text)) {
      problem(HeaderIssue::bad_dtype, std::string(key),
              fmt::format("tensor '{}': dtype is not a string", key));
      return;
    }
    const size_t dims_start = m_out.dim_storage.size();
    simdjson::dom::array shape;
    bool shape_ok = !shape_el.get_array().get(shape);
    if (shape_ok) {
      for (auto dim : shape) {
        uint64_t n = 0;
        if (dim.get_uint64().get(n)) {
          shape_ok = false;
          break;
        }
        m_out.dim_storage.push_back(n);
      }
    }
    const std::optional<Dtype> dtype = checked_dtype(key, dtype_text);
    if (!shape_ok) {
      m_out.dim_storage.resize(dims_start);
      problem(HeaderIssue::bad_shape, std::string(key),
              fmt::format("tensor '{}': shape is not an array of non-negative integers", key));
      return;
    }
    simdjson::dom::array offsets;
    uint64_t begin = 0, end = 0;
    if (offsets_el.get_array().get(offsets) || offsets.size() != 2 ||
        offsets.at(0).get_uint64().get(begin) || offsets.at(1).get_uint64().get(end)) {
      m_out.dim_storage.resize(dims_start);
      problem(HeaderIssue::bad_offsets, std::string(key),
              fmt::format("tensor '{}': data_offsets is not a pair of non-negative integers", key));
      return;
    }
    if (end < begin) {
      m_out.dim_storage.resize(dims_start);
      problem(
        HeaderIssue::bad_offsets, std::string(key),
        fmt::format("tensor '{}': data_offsets [{}, {}] end before they begin", key, begin, end));
      return;
    }
    add_tensor(key, dtype, dtype_text, dims_start, begin, end);
  }

  // Whether the data_offsets hold exactly what the dtype and shape need; inlined, and any
  // problem left to size_problem() out of line.
  [[gnu::always_inline]] void check_size(const TensorInfo& tensor, DataOffsets offsets,
                                         std::span<const uint64_t> shape)
  {
    unsigned long long elements = 1;
    bool fits = true;
    for (uint64_t dim : shape) {
      fits = checked_mul(elements, dim, elements) && fits;
    }
    unsigned long long bits = 0;
    if (!fits || !checked_mul(elements, dtype_bits(tensor.dtype), bits) || bits % 8 != 0 ||
        offsets.end - offsets.begin != bits / 8) [[unlikely]] {
      size_problem(tensor, offsets, shape);
    }
  }

  // The first of check_size()'s conditions that fails, reported.
  [[gnu::cold, gnu::noinline]] void size_problem(const TensorInfo& tensor, DataOffsets offsets,
                                                 std::span<const uint64_t> shape)
  {
    unsigned long long elements = 1;
    for (uint64_t dim : shape) {
      if (!checked_mul(elements, dim, elements)) {
        problem(HeaderIssue::shape_overflow, std::string(tensor.name()),
                fmt::format("tensor '{}': shape {} has more elements than fit in 64 bits",
                            tensor.name(), shape_text(shape)));
        return;
      }
    }
    unsigned long long bits = 0;
    if (!checked_mul(elements, dtype_bits(tensor.dtype), bits)) {
      problem(HeaderIssue::shape_overflow, std::string(tensor.name()),
              fmt::format("tensor '{}': {} {} is larger than 2^64 bits", tensor.name(),
                          tensor.dtype_text(), shape_text(shape)));
      return;
    }
    if (bits % 8 != 0) {
      problem(HeaderIssue::partial_byte, std::string(tensor.name()),
              fmt::format("tensor '{}': {} {} does not fill a whole number of bytes", tensor.name(),
                          tensor.dtype_text(), shape_text(shape)));
      return;
    }
    const uint64_t span = offsets.end - offsets.begin;
    if (span != bits / 8) {
      problem(HeaderIssue::size_mismatch, std::string(tensor.name()),
              fmt::format("tensor '{}': data_offsets [{}, {}] hold {} bytes but {} {} needs {}",
                          tensor.name(), offsets.begin, offsets.end, span, tensor.dtype_text(),
                          shape_text(shape), bits / 8));
    }
  }

  void check_layout()
  {
    // Tensor indices in offset order (a header holds fewer than 2^32 tensors).
    std::vector<uint32_t> order(m_offsets.size());
    std::iota(order.begin(), order.end(), 0u);
    const auto by_offset = [&](uint32_t a, uint32_t b) {
      const DataOffsets& x = m_offsets[a];
      const DataOffsets& y = m_offsets[b];
      return x.begin != y.begin ? x.begin < y.begin : x.end < y.end;
    };
    if (!std::is_sorted(order.begin(), order.end(), by_offset)) {
      std::sort(order.begin(), order.end(), by_offset);
    }
    uint64_t expected = 0;
    const TensorInfo* previous = nullptr;
    for (const uint32_t i : order) {
      const TensorInfo* t = &m_out.tensors[i];
      const DataOffsets& o = m_offsets[i];
      if (o.begin > expected) {
        problem(HeaderIssue::gap, std::string(t->name()),
                previous ? fmt::format("tensor '{}': data starts at byte {}, leaving a gap of {} "
                                       "bytes after '{}'",
                                       t->name(), o.begin, o.begin - expected, previous->name())
                         : fmt::format("tensor '{}': data starts at byte {}, leaving a gap of {} "
                                       "bytes at the start of the data region",
                                       t->name(), o.begin, o.begin));
      } else if (o.begin < expected) {
        problem(HeaderIssue::overlap, std::string(t->name()),
                fmt::format("tensor '{}': data [{}, {}) overlaps '{}', which ends at byte {}",
                            t->name(), o.begin, o.end, previous->name(), expected));
      }
      if (o.end >= expected) {
        expected = o.end;
        previous = t;
      }
    }
    // With an entry dropped, its bytes are unaccounted for: the total says nothing more.
    if (expected != m_data_size && !m_dropped) {
      problem(HeaderIssue::data_size_mismatch, "",
              expected > m_data_size
                ? fmt::format("tensor data needs {} bytes but the file holds only {} after the "
                              "header (truncated?)",
                              expected, m_data_size)
                : fmt::format("tensor data ends at byte {} but the file holds {} bytes after the "
                              "header ({} bytes unaccounted for)",
                              expected, m_data_size, m_data_size - expected));
    }
  }

  // Headers use a handful of dtypes: the spellings met so far are compared first.
  std::optional<Dtype> dtype_of(std::string_view text)
  {
    // Spellings are a few bytes: compared inline, not by a call to memcmp per tensor.
    const auto same = [](std::string_view a, std::string_view b) {
      if (a.size() != b.size()) {
        return false;
      }
      for (size_t i = 0; i < a.size(); ++i) {
        if (a[i] != b[i]) {
          return false;
        }
      }
      return true;
    };
    for (size_t i = 0; i < m_dtype_count; ++i) {
      if (same(m_dtypes_seen[i].first, text)) {
        return m_dtypes_seen[i].second;
      }
    }
    const std::optional<Dtype> dtype = parse_dtype(text);
    if (dtype && m_dtype_count < m_dtypes_seen.size()) {
      m_dtypes_seen[m_dtype_count++] = {text, *dtype};
    }
    return dtype;
  }

  Header& m_out;
  uint64_t m_data_size;
  std::array<std::pair<std::string_view, Dtype>, 6> m_dtypes_seen; // view the parsed document
  size_t m_dtype_count = 0;
  bool m_plain_first;
  bool m_sort_by_name;
  // The index and spelling of each tensor with an unknown dtype, in tensor order.
  std::vector<std::pair<size_t, std::string_view>> m_unknown_dtypes;
  // Per tensor, where in dim_storage its shape is and its rank; spans are set once
  // dim_storage stops growing.
  std::vector<ShapeAt> m_shapes;
  // Per tensor, its data_offsets: moved to Header::offsets when kept.
  std::vector<DataOffsets> m_offsets;
  bool m_keep_offsets;
  // The distinct shapes of up to k_shared_rank dimensions stored so far (the first 384), by a
  // hash of their dimensions.
  static constexpr size_t k_shared_rank = 8;
  static constexpr unsigned k_shape_cache_bits = 9;
  std::array<ShapeAt, size_t{1} << k_shape_cache_bits> m_shape_cache{};
  size_t m_shapes_cached = 0;
  bool m_dropped = false; // a tensor entry could not be read
};

constexpr std::string_view k_lfs_pointer = "version https://git-lfs.github.com/spec/";

// Why a header length is over the limit. Text where the length belongs means the file is not
// safetensors at all: most often a Git LFS pointer left by a clone without LFS.
std::string
over_limit_message(const ByteSource& source, const std::array<char, 8>& prefix, uint64_t length)
{
  const auto is_text = [](char c) {
    return (c >= 0x20 && c < 0x7f) || c == '\t' || c == '\n' || c == '\r';
  };
  if (!std::all_of(prefix.begin(), prefix.end(), is_text)) {
    return fmt::format("header length {} exceeds the format's limit of {} bytes", length,
                       k_max_header_size);
  }
  std::string start(std::min<uint64_t>(source.size(), k_lfs_pointer.size()), '\0');
  if (source.read_at(0, std::span<char>(start.data(), start.size())) && start == k_lfs_pointer) {
    return "is a Git LFS pointer, not the tensor file: fetch the data with `git lfs pull`";
  }
  std::string shown;
  for (const char c : prefix) {
    shown += c == '\t'   ? "\\t"
             : c == '\n' ? "\\n"
             : c == '\r' ? "\\r"
             : c == '"'  ? "\\\""
                         : std::string(1, c);
  }
  return fmt::format("starts with the text \"{}\" where the 8-byte header length belongs; not a "
                     "safetensors file",
                     shown);
}

} // namespace

std::optional<Dtype>
parse_dtype(std::string_view name)
{
  for (const auto& row : k_dtypes) {
    if (row.name == name) {
      return row.dtype;
    }
  }
  return std::nullopt;
}

std::string_view
dtype_name(Dtype dtype)
{
  const auto at = static_cast<size_t>(dtype);
  return at < k_dtypes.size() ? k_dtypes[at].name : "unknown";
}

unsigned
dtype_bits(Dtype dtype)
{
  const auto at = static_cast<size_t>(dtype);
  return at < k_dtypes.size() ? k_dtypes[at].bits : 0;
}

bool
is_wide_float(Dtype dtype)
{
  return dtype == Dtype::F16 || dtype == Dtype::BF16 || dtype == Dtype::F32 || dtype == Dtype::F64;
}

Header
parse_header(std::string_view json, uint64_t data_size)
{
  Header header;
  header.header_size = json.size();
  HeaderParser(header, data_size, true, false).parse(json, false);
  return header;
}

Header
parse_header_dom(std::string_view json, uint64_t data_size)
{
  Header header;
  header.header_size = json.size();
  HeaderParser(header, data_size, false, false).parse(json, false);
  return header;
}

Header
read_header(const ByteSource& source, bool sort_by_name, bool keep_offsets)
{
  const auto hub_size_message = [](uint64_t length) {
    return fmt::format("header is {} bytes; Hugging Face Hub clients refuse headers above {} bytes",
                       length, k_hub_header_size);
  };
  constexpr uint64_t k_early_start_check = 1u << 20;
  Header header;
  header.file_size = source.size();
  auto fail = [&](HeaderIssue issue, std::string message) {
    header.problems.push_back({issue, false, "", std::move(message)});
    return std::move(header);
  };
  if (header.file_size < 8) {
    return fail(HeaderIssue::file_too_short,
                fmt::format("file is {} bytes, too short to hold the 8-byte header length",
                            header.file_size));
  }
  std::array<char, 8> prefix{};
  if (auto read = source.read_at(0, prefix); !read) {
    return fail(HeaderIssue::read_failed, read.error());
  }
  uint64_t length = 0;
  for (int i = 7; i >= 0; --i) {
    length = (length << 8) | static_cast<unsigned char>(prefix[static_cast<size_t>(i)]);
  }
  header.header_size = length;
  if (length < 2) {
    return fail(HeaderIssue::length_too_small,
                fmt::format("header length {} is below the minimum of 2 bytes", length));
  }
  if (length > k_max_header_size) {
    return fail(HeaderIssue::length_over_limit, over_limit_message(source, prefix, length));
  }
  if (length > header.file_size - 8) {
    return fail(HeaderIssue::length_beyond_file,
                fmt::format("header length {} exceeds the {} bytes that follow it in the file",
                            length, header.file_size - 8));
  }
  // A long header whose first byte already fails is not read (nor its buffer allocated): one
  // byte says so. Whitespace first is read whole, for the message that tells it apart.
  if (length > k_early_start_check) {
    std::array<char, 1> first{};
    if (auto read = source.read_at(8, first); !read) {
      return fail(HeaderIssue::read_failed, read.error());
    }
    if (first[0] != '{' && std::string_view(" \t\r\n").find(first[0]) == std::string_view::npos) {
      if (length > k_hub_header_size) {
        header.problems.push_back({HeaderIssue::length_large, true, "", hub_size_message(length)});
      }
      return fail(HeaderIssue::bad_start, "header does not start with '{'");
    }
  }
  // Read straight into a padded buffer, reused by the thread for the next header: its pages are
  // touched once, and nothing is zero-filled.
  constexpr size_t k_kept_buffer = 16u << 20;
  thread_local std::unique_ptr<char[]> buffer;
  thread_local size_t capacity = 0;
  if (capacity < length + simdjson::SIMDJSON_PADDING) {
    capacity = std::max<size_t>(length + simdjson::SIMDJSON_PADDING,
                                std::min<size_t>(2 * capacity, k_kept_buffer));
    buffer.reset(new char[capacity]);
  }
  // Only an ordinary header's buffer is kept for the next one.
  struct Release
  {
    ~Release()
    {
      if (capacity > k_kept_buffer) {
        buffer.reset();
        capacity = 0;
      }
    }
  } release;
  char* const json = buffer.get();
  std::fill_n(json + length, simdjson::SIMDJSON_PADDING, '\0');
  if (auto read = source.read_at(8, std::span<char>(json, length)); !read) {
    return fail(HeaderIssue::read_failed, read.error());
  }
  Header parsed;
  parsed.header_size = length;
  HeaderParser(parsed, header.file_size - 8 - length, true, sort_by_name, keep_offsets)
    .parse(std::string_view(json, length), true);
  parsed.file_size = header.file_size;
  if (length > k_hub_header_size) {
    parsed.problems.insert(parsed.problems.begin(),
                           {HeaderIssue::length_large, true, "", hub_size_message(length)});
  }
  return parsed;
}

} // namespace qcheck
