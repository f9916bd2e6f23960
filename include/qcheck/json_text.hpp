// JSON as text: locate values by JSON pointer with their byte spans and line/column, and edit
// string arrays in place so that every byte outside the edited array stays identical (key order,
// indentation, number spelling, escapes, CRLF, trailing newline). Used by `fix` and for finding
// positions. Never re-serialises a document.
#pragma once

#include <cstdint>
#include <functional>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "qcheck/expected.hpp"

#if defined(__SSE2__)
#include <emmintrin.h>
#endif
#if defined(__x86_64__) && defined(__GNUC__)
#include <immintrin.h>
#define QCHECK_AVX2_DISPATCH 1
#endif

namespace qcheck {

struct TextPosition
{
  uint32_t line = 1;   // 1-based
  uint32_t column = 1; // 1-based, in bytes
};

struct JsonSpan
{
  size_t begin = 0; // offset of the value's first byte
  size_t end = 0;   // one past its last byte
  TextPosition start;
};

// Finds the value at an RFC 6901 pointer ("" = root, "/quantization_config/ignore"). Fails with
// a one-line message when the text is not valid JSON or the pointer names nothing. Duplicate
// keys: the last one wins (as Python's json and nlohmann do).
Expected<JsonSpan> locate(std::string_view text, std::string_view pointer);

// The offset of the quote that closes the string token whose opening quote is at `open`, or
// text.size() when none does. A quote is escaped when an odd number of backslashes precede it
// inside the token. Finds quotes with memchr: it does not check the string's contents.
size_t string_token_end(std::string_view text, size_t open);

namespace detail {
// A byte that ends a string's plain text: '"', '\\' or a control character.
inline bool
is_string_special(unsigned char c)
{
  return c == '"' || c == '\\' || c < 0x20;
}

#if defined(QCHECK_AVX2_DISPATCH)
// Whether the processor runs AVX2 and the system saves its registers (read with CPUID).
bool cpu_runs_avx2();
// cpu_runs_avx2(), read once, at start-up.
inline const bool k_have_avx2 = cpu_runs_avx2();

// 32 bytes at a time while 32 are left; returns where it stopped (a special byte, or fewer than
// 32 bytes left).
template<bool k_track_high>
__attribute__((target("avx2"))) inline const char*
find_string_special_avx2(const char* p, const char* end, unsigned& high)
{
  const __m256i quote = _mm256_set1_epi8('"');
  const __m256i backslash = _mm256_set1_epi8('\\');
  const __m256i top_control = _mm256_set1_epi8(0x1F);
  for (; end - p >= 32; p += 32) {
    const __m256i bytes = _mm256_loadu_si256(reinterpret_cast<const __m256i*>(p));
    if constexpr (k_track_high) {
      high |= static_cast<unsigned>(_mm256_movemask_epi8(bytes));
    }
    const __m256i control = _mm256_cmpeq_epi8(_mm256_max_epu8(bytes, top_control), top_control);
    const auto mask = static_cast<unsigned>(_mm256_movemask_epi8(_mm256_or_si256(
      _mm256_or_si256(_mm256_cmpeq_epi8(bytes, quote), _mm256_cmpeq_epi8(bytes, backslash)),
      control)));
    if (mask != 0) {
      return p + __builtin_ctz(mask);
    }
  }
  return p;
}
#endif

template<bool k_track_high>
inline const char*
find_string_special(const char* p, const char* end, unsigned& high)
{
#if defined(QCHECK_AVX2_DISPATCH)
  if (k_have_avx2 && end - p >= 32) {
    p = find_string_special_avx2<k_track_high>(p, end, high);
    if (p < end && is_string_special(static_cast<unsigned char>(*p))) {
      return p;
    }
  }
#endif
#if defined(__SSE2__)
  const __m128i quote = _mm_set1_epi8('"');
  const __m128i backslash = _mm_set1_epi8('\\');
  const __m128i top_control = _mm_set1_epi8(0x1F);
  for (; end - p >= 16; p += 16) {
    const __m128i bytes = _mm_loadu_si128(reinterpret_cast<const __m128i*>(p));
    if constexpr (k_track_high) {
      high |= static_cast<unsigned>(_mm_movemask_epi8(bytes));
    }
    const __m128i control = _mm_cmpeq_epi8(_mm_max_epu8(bytes, top_control), top_control);
    const int mask = _mm_movemask_epi8(_mm_or_si128(
      _mm_or_si128(_mm_cmpeq_epi8(bytes, quote), _mm_cmpeq_epi8(bytes, backslash)), control));
    if (mask != 0) {
      return p + __builtin_ctz(static_cast<unsigned>(mask));
    }
  }
#endif
  for (; p < end; ++p) {
    const auto c = static_cast<unsigned char>(*p);
    if constexpr (k_track_high) {
      high |= c & 0x80u;
    }
    if (is_string_special(c)) {
      return p;
    }
  }
  return end;
}
} // namespace detail

// JSON whitespace: space, tab, line feed, carriage return.
inline bool
is_json_space(char c)
{
  return c == ' ' || c == '\n' || c == '\r' || c == '\t';
}

#if defined(__SSE2__)
// Bit i set: byte i of `bytes` is JSON whitespace.
inline unsigned
json_space_mask(__m128i bytes)
{
  const __m128i space = _mm_or_si128(_mm_or_si128(_mm_cmpeq_epi8(bytes, _mm_set1_epi8(' ')),
                                                  _mm_cmpeq_epi8(bytes, _mm_set1_epi8('\n'))),
                                     _mm_or_si128(_mm_cmpeq_epi8(bytes, _mm_set1_epi8('\r')),
                                                  _mm_cmpeq_epi8(bytes, _mm_set1_epi8('\t'))));
  return static_cast<unsigned>(_mm_movemask_epi8(space));
}
#endif

// The first byte in [p, end) that is not JSON whitespace, or end. Reads nothing outside the
// range.
inline const char*
skip_json_space(const char* p, const char* end)
{
  if (p == end || static_cast<unsigned char>(*p) > ' ') {
    return p; // most calls: a token at once
  }
#if defined(__SSE2__)
  // Indented text: runs of spaces, 16 bytes at a time.
  for (; end - p >= 16; p += 16) {
    const unsigned other =
      ~json_space_mask(_mm_loadu_si128(reinterpret_cast<const __m128i*>(p))) & 0xFFFFu;
    if (other != 0) {
      return p + __builtin_ctz(other);
    }
  }
#endif
  while (p < end && is_json_space(*p)) {
    ++p;
  }
  return p;
}

// The first '"', '\\' or control character (below 0x20) in [p, end), or end: where the text of
// a JSON string token starting at p stops being plain bytes. Reads nothing outside the range.
inline const char*
find_string_special(const char* p, const char* end)
{
  unsigned unused = 0;
  return detail::find_string_special<false>(p, end, unused);
}

// The same, and `high` becomes nonzero when a byte read (up to 31 past the one returned) is
// 0x80 or above: no non-ASCII text before the result when it stays 0.
inline const char*
find_string_special(const char* p, const char* end, unsigned& high)
{
  return detail::find_string_special<true>(p, end, high);
}

// Appends a Unicode code point (at most 0x10FFFF) as UTF-8.
void append_utf8(std::string& out, uint32_t code);
// Reads the 4 hex digits of a \u escape at s[i]; false when they are not there.
bool read_hex4(std::string_view s, size_t i, uint32_t& code);

// Appends `s` as a JSON string token: quoted, with '"', '\\' and control characters escaped
// as nlohmann's dump() does; well-formed non-ASCII UTF-8 as is, and each byte of anything else
// (a file name need not be UTF-8) as \ufffd, so the token is always valid JSON.
void append_json_string(std::string& out, std::string_view s);
// append_json_string()'s token as a string.
std::string escape_json(std::string_view s);

// Pieces of JSON laid out as nlohmann's dump(2) lays it out (one member or item per line, two
// spaces per level), for output written while it is produced. `indent` spaces, then `"key": `.
void append_json_key(std::string& out, int indent, std::string_view key);
// The same key opening an object: `"key": {` and a line break, for members at indent + 2.
void append_json_object_start(std::string& out, int indent, std::string_view key);
// The same key followed by `value` as a JSON string (no separator after it).
void append_json_member(std::string& out, int indent, std::string_view key, std::string_view value);
// An array whose `count` items (each written by `item(i)`) go one per line at indent + 2, its
// closing bracket at `indent`; "[]" when empty.
void append_json_array(std::string& out, int indent, size_t count,
                       const std::function<void(size_t)>& item);
// The same for an array of strings.
void append_json_strings(std::string& out, int indent, const std::vector<std::string>& items);

// Escapes one JSON pointer token (RFC 6901: '~' -> "~0", '/' -> "~1").
std::string escape_pointer_token(std::string_view key);

// locate() for many pointers with one scan of the text (and one line table): what finding
// positions need when a config yields thousands of findings.
std::vector<Expected<JsonSpan>> locate_all(std::string_view text,
                                           const std::vector<std::string>& pointers);

// locate_all() for positions in a text read as JSON before (where findings point in a config):
// every pointer is followed in one pass through the text, the values beside their paths skipped
// without being built, so a list of 50,000 entries costs a pass and no node per value. The text
// beside the paths is checked only as far as skipping needs: a text that is not JSON may give
// spans where locate_all() fails. When some pointer is not found, or is not a pointer, all get
// locate_all()'s answers.
std::vector<Expected<JsonSpan>> locate_along_paths(std::string_view text,
                                                   const std::vector<std::string>& pointers);

// The index an RFC 6901 pointer token names in an array: digits without a leading zero (at most
// 18); nullopt for any other token.
std::optional<size_t> array_index(std::string_view token);

// The 1-based line and column of a byte offset.
TextPosition position_of(std::string_view text, size_t offset);

// position_of() for each of `offsets` (an offset past the text's end counts as its end, as
// there), in one pass over the text up to the largest.
std::vector<TextPosition> positions_of(std::string_view text, std::span<const size_t> offsets);

// Appends `entries` (as JSON strings, escaped) to the array of strings at `pointer`, following
// the array's existing style: one entry per line with the indentation of its last element, or
// inline with the separator it uses; the file's line ending (LF or CRLF) is kept. When the key
// is missing, the last pointer component is created as a new key at the end of its parent
// object, in the object's style; a null value there (read as an empty list) is replaced by the
// array. Entries already present are not added again; those added go to `appended`, when
// given, in order. Returns the new text; every byte outside the edited array (or the inserted
// key) is unchanged.
Expected<std::string> append_to_string_array(std::string_view text, std::string_view pointer,
                                             const std::vector<std::string>& entries,
                                             std::vector<std::string>* appended = nullptr);

// What add_object_member() does when the object already has the key.
enum class ExistingMember
{
  keep,    // the text is returned unchanged (with MemberPlace::first, the member is moved first)
  replace, // the member's value is replaced, its key and place kept
};

// Where add_object_member() puts a new member.
enum class MemberPlace
{
  last,  // after the object's members
  first, // before them (a GPTQ `dynamic` key the engines must read before the others)
};

// Inserts `key: value_json` in the object at `pointer` (used for GPTQ `dynamic` and AutoRound
// `extra_config`): at the end of the object (or its start, `place`), formatted in the object's
// style (value_json is compact JSON; nested objects are laid out like their siblings). A missing
// object is created as append_to_string_array() creates a list, and a null one (read as empty)
// is replaced by the new object. Every byte outside the inserted member (or the replaced value)
// is unchanged.
Expected<std::string> add_object_member(std::string_view text, std::string_view pointer,
                                        const std::string& key, const std::string& value_json,
                                        ExistingMember existing = ExistingMember::keep,
                                        MemberPlace place = MemberPlace::last);

// Removes the string elements whose value (escapes decoded) equals any of `entries` from the
// array at `pointer`, with the separator and whitespace that preceded each; every kept element
// keeps the run before it (the first kept one, the run after '['), so the array keeps its
// layout. Every other byte is unchanged; the text is returned unchanged when nothing matches.
Expected<std::string> remove_from_string_array(std::string_view text, std::string_view pointer,
                                               const std::vector<std::string>& entries);

// Refuses documents fix must not edit: NaN/Infinity literals, duplicate keys. Returns the
// reason, or nullopt when the document is fine to edit.
std::optional<std::string> edit_refusal(std::string_view text);

// One scan for a reader: fails with the syntax error (line, column; deep nesting refused) when
// the text is not JSON, else returns what edit_refusal() would. Files are untrusted: the scan
// refuses nesting deeper than k_json_max_depth and more than k_json_max_values values.
Expected<std::optional<std::string>> check_json(std::string_view text);
inline constexpr size_t k_json_max_depth = 512;
// Several times what the largest real configuration holds (a ModelOpt quantized_layers map of
// every expert Linear of a trillion-parameter model); bounds the scanner's node array to 176 MiB,
// where a 64 MiB file of `0,0,0,...` would otherwise need 1.4 GiB.
inline constexpr size_t k_json_max_values = size_t{1} << 22;

} // namespace qcheck
