#include "qcheck/json_text.hpp"

#include <algorithm>
#include <charconv>
#include <cstring>
#include <deque>
#include <fmt/format.h>
#include <limits>
#include <map>
#include <unordered_map>
#include <unordered_set>

#if defined(QCHECK_AVX2_DISPATCH)
#include <cpuid.h>
#endif

namespace qcheck {

#if defined(QCHECK_AVX2_DISPATCH)
// Not __builtin_cpu_supports: it links libgcc's probe of every feature, a dozen CPUID queries at
// start-up, each a trap to the hypervisor on a virtual machine.
bool
detail::cpu_runs_avx2()
{
  constexpr uint32_t k_osxsave = 1u << 27; // leaf 1, ECX: XGETBV enabled by the system
  constexpr uint32_t k_avx = 1u << 28;     // leaf 1, ECX
  constexpr uint32_t k_sse_avx_state = 6u; // XCR0: the system saves SSE and AVX registers
  constexpr uint32_t k_avx2 = 1u << 5;     // leaf 7, subleaf 0, EBX
  uint32_t a = 0;
  uint32_t b = 0;
  uint32_t c = 0;
  uint32_t d = 0;
  if (__get_cpuid_max(0, nullptr) < 7) {
    return false;
  }
  __cpuid(1, a, b, c, d);
  if ((c & (k_osxsave | k_avx)) != (k_osxsave | k_avx)) {
    return false;
  }
  uint32_t xcr0_low = 0;
  uint32_t xcr0_high = 0;
  __asm__ volatile("xgetbv" : "=a"(xcr0_low), "=d"(xcr0_high) : "c"(0));
  if ((xcr0_low & k_sse_avx_state) != k_sse_avx_state) {
    return false;
  }
  __cpuid_count(7, 0, a, b, c, d);
  return (b & k_avx2) != 0;
}
#endif

namespace {

// The scanner keeps its own stack; k_json_max_values bounds its node array (see json_text.hpp).
// Node offsets and links are 32-bit, so texts are shorter than 4 GiB.
constexpr uint32_t k_none = std::numeric_limits<uint32_t>::max();
constexpr size_t k_max_text = k_none - 1;

enum class Kind : uint8_t
{
  object,
  array,
  string,
  number,
  boolean,
  null,
  nonfinite, // NaN, Infinity, -Infinity (Python writes them): located, refused for editing
};

// One value of the document, with its byte span and links to its relatives.
struct Node
{
  Kind kind = Kind::null;
  uint32_t begin = 0;
  uint32_t end = 0;
  uint32_t key_begin = k_none; // key token (quotes included) when the value is an object member
  uint32_t key_end = k_none;
  uint32_t parent = k_none;
  uint32_t first_child = k_none;
  uint32_t last_child = k_none;
  uint32_t prev_sibling = k_none;
  uint32_t next_sibling = k_none;
  uint32_t count = 0;
};

struct Document
{
  std::string_view text;
  std::vector<Node> nodes; // in document order; nodes[0] is the root
};

bool
is_digit(char c)
{
  return c >= '0' && c <= '9';
}

bool
is_container(const Node& node)
{
  return node.kind == Kind::object || node.kind == Kind::array;
}

bool
has_newline(std::string_view s)
{
  return s.find('\n') != std::string_view::npos;
}

// Length of the well-formed UTF-8 sequence starting at s[i], or 0 when it is malformed.
size_t
utf8_sequence(std::string_view s, size_t i)
{
  const auto first = static_cast<unsigned char>(s[i]);
  if (first < 0x80) {
    return 1;
  }
  size_t length = 0;
  unsigned char low = 0x80, high = 0xBF; // bounds of the second byte
  if (first >= 0xC2 && first <= 0xDF) {
    length = 2;
  } else if (first == 0xE0) {
    length = 3;
    low = 0xA0;
  } else if ((first >= 0xE1 && first <= 0xEC) || first == 0xEE || first == 0xEF) {
    length = 3;
  } else if (first == 0xED) {
    length = 3;
    high = 0x9F;
  } else if (first == 0xF0) {
    length = 4;
    low = 0x90;
  } else if (first >= 0xF1 && first <= 0xF3) {
    length = 4;
  } else if (first == 0xF4) {
    length = 4;
    high = 0x8F;
  } else {
    return 0;
  }
  if (i + length > s.size()) {
    return 0;
  }
  for (size_t k = 1; k < length; ++k) {
    const auto byte = static_cast<unsigned char>(s[i + k]);
    if (byte < (k == 1 ? low : 0x80) || byte > (k == 1 ? high : 0xBF)) {
      return 0;
    }
  }
  return length;
}

bool
valid_utf8(std::string_view s)
{
  for (size_t i = 0; i < s.size();) {
    const size_t length = utf8_sequence(s, i);
    if (length == 0) {
      return false;
    }
    i += length;
  }
  return true;
}

// The text of a string token (quotes included) that the scanner accepted.
std::string
decode_string(std::string_view token)
{
  std::string out;
  out.reserve(token.size());
  for (size_t i = 1; i + 1 < token.size(); ++i) {
    const char c = token[i];
    if (c != '\\') {
      out += c;
      continue;
    }
    const char e = token[++i];
    switch (e) {
    case 'b':
      out += '\b';
      break;
    case 'f':
      out += '\f';
      break;
    case 'n':
      out += '\n';
      break;
    case 'r':
      out += '\r';
      break;
    case 't':
      out += '\t';
      break;
    case 'u': {
      unsigned code = 0;
      read_hex4(token, i + 1, code);
      i += 4;
      if (code >= 0xD800 && code <= 0xDBFF) {
        unsigned low = 0;
        read_hex4(token, i + 3, low);
        i += 6;
        code = 0x10000 + ((code - 0xD800) << 10) + (low - 0xDC00);
      }
      append_utf8(out, code);
      break;
    }
    default: // '"', '\\', '/'
      out += e;
      break;
    }
  }
  return out;
}

std::string
json_error(std::string_view text, size_t offset, std::string_view message)
{
  const TextPosition p = position_of(text, offset);
  return fmt::format("invalid JSON at line {}, column {}: {}", p.line, p.column, message);
}

// Validating scanner. Iterative: containers live on m_stack, never on the call stack.
class Scanner
{
public:
  explicit Scanner(std::string_view text) : m_text(text) {}

  Expected<Document> run()
  {
    if (m_text.size() > k_max_text) {
      return unexpected(
        fmt::format("text is {} bytes; at most {} bytes are read", m_text.size(), k_max_text));
    }
    if (m_text.starts_with("\xEF\xBB\xBF")) {
      m_pos = 3; // a UTF-8 byte order mark is skipped, as nlohmann does
    }
    // Sized once, before anything is allocated: a text with too many values is refused here.
    size_t over = 0;
    const size_t bound = value_bound(over);
    if (bound > k_json_max_values) {
      const TextPosition p = position_of(m_text, over);
      return unexpected(fmt::format("more than {} JSON values (line {}, column {}), far more than "
                                    "any configuration holds; not read",
                                    k_json_max_values, p.line, p.column));
    }
    m_nodes.reserve(bound);
    State state = State::value;
    bool after_comma = false;
    while (true) {
      skip_space();
      const bool at_end = m_pos >= m_text.size();
      const char c = at_end ? '\0' : m_text[m_pos];
      switch (state) {
      case State::value:
      case State::value_or_close:
        if (at_end) {
          return error(m_pos, "unexpected end of text, expected a value");
        }
        if (c == ']' && state == State::value_or_close) {
          close();
          state = State::after_value;
        } else if ((c == ']' || c == '}') && after_comma) {
          return error(m_pos, fmt::format("trailing comma before '{}'", c));
        } else if (c == '{' || c == '[') {
          if (m_stack.size() >= k_json_max_depth) {
            return error(m_pos, fmt::format("nested more than {} levels deep", k_json_max_depth));
          }
          const bool object = c == '{';
          m_stack.push_back(add_node(object ? Kind::object : Kind::array, m_pos));
          ++m_pos;
          state = object ? State::key_or_close : State::value_or_close;
        } else if (!scan_scalar()) {
          return error(m_error_offset, m_error);
        } else {
          state = State::after_value;
        }
        after_comma = false;
        break;
      case State::key:
      case State::key_or_close:
        if (c == '}' && state == State::key_or_close) {
          close();
          state = State::after_value;
        } else if (c == '}') {
          return error(m_pos, "trailing comma before '}'");
        } else if (c == '"') {
          m_key_begin = m_pos;
          if (!scan_string()) {
            return error(m_error_offset, m_error);
          }
          m_key_end = m_pos;
          state = State::colon;
        } else {
          return error(m_pos, fmt::format("{}expected a string key{}",
                                          at_end ? "unexpected end of text, " : "",
                                          state == State::key_or_close ? " or '}'" : ""));
        }
        break;
      case State::colon:
        if (c != ':' || at_end) {
          return error(m_pos, fmt::format("{}expected ':' after the key",
                                          at_end ? "unexpected end of text, " : ""));
        }
        ++m_pos;
        state = State::value;
        break;
      case State::after_value: {
        if (m_stack.empty()) {
          if (at_end) {
            return Document{m_text, std::move(m_nodes)};
          }
          return error(m_pos, "unexpected text after the end of the JSON value");
        }
        const bool object = m_nodes[m_stack.back()].kind == Kind::object;
        const char closer = object ? '}' : ']';
        if (!at_end && c == ',') {
          ++m_pos;
          state = object ? State::key : State::value;
          after_comma = true;
        } else if (!at_end && c == closer) {
          close();
        } else {
          return error(m_pos, fmt::format("{}expected ',' or '{}'",
                                          at_end ? "unexpected end of text, " : "", closer));
        }
        break;
      }
      }
    }
  }

private:
  enum class State
  {
    value,
    value_or_close, // right after '['
    key,
    key_or_close, // right after '{'
    colon,
    after_value,
  };

  // An upper bound of the number of values: each follows an opening bracket or a comma, or is
  // the root. Only string tokens are skipped, so this runs before (and whatever) the syntax
  // check. When the bound passes k_json_max_values, `over` is where it did.
  size_t value_bound(size_t& over) const
  {
    size_t bound = 1;
    for (size_t i = m_pos; i < m_text.size(); ++i) {
      const char c = m_text[i];
      if (c == '"') {
        i = string_token_end(m_text, i);
      } else if ((c == ',' || c == '[' || c == '{') && ++bound > k_json_max_values) {
        over = i;
        return bound;
      }
    }
    return bound;
  }

  Unexpected error(size_t offset, std::string_view message) const
  {
    return unexpected(json_error(m_text, offset, message));
  }

  bool fail(size_t offset, std::string message)
  {
    m_error_offset = offset;
    m_error = std::move(message);
    return false;
  }

  void skip_space()
  {
    while (m_pos < m_text.size() && is_json_space(m_text[m_pos])) {
      ++m_pos;
    }
  }

  // Appends a node for a value starting at `begin` and links it into the open container.
  uint32_t add_node(Kind kind, size_t begin)
  {
    const auto index = static_cast<uint32_t>(m_nodes.size());
    Node node;
    node.kind = kind;
    node.begin = static_cast<uint32_t>(begin);
    if (!m_stack.empty()) {
      Node& parent = m_nodes[m_stack.back()];
      node.parent = m_stack.back();
      if (parent.kind == Kind::object) {
        node.key_begin = static_cast<uint32_t>(m_key_begin);
        node.key_end = static_cast<uint32_t>(m_key_end);
      }
      node.prev_sibling = parent.last_child;
      if (parent.last_child != k_none) {
        m_nodes[parent.last_child].next_sibling = index;
      } else {
        parent.first_child = index;
      }
      parent.last_child = index;
      ++parent.count;
    }
    m_nodes.push_back(node);
    return index;
  }

  void close()
  {
    m_nodes[m_stack.back()].end = static_cast<uint32_t>(++m_pos);
    m_stack.pop_back();
  }

  void add_scalar(Kind kind, size_t end)
  {
    m_nodes[add_node(kind, m_pos)].end = static_cast<uint32_t>(end);
    m_pos = end;
  }

  bool scan_scalar()
  {
    const char c = m_text[m_pos];
    if (c == '"') {
      const size_t begin = m_pos;
      if (!scan_string()) {
        return false;
      }
      const size_t end = m_pos;
      m_pos = begin;
      add_scalar(Kind::string, end);
      return true;
    }
    if (c == '-' || is_digit(c)) {
      return scan_number();
    }
    if (c == 't') {
      return scan_word("true", Kind::boolean);
    }
    if (c == 'f') {
      return scan_word("false", Kind::boolean);
    }
    if (c == 'n') {
      return scan_word("null", Kind::null);
    }
    if (c == 'N') {
      return scan_word("NaN", Kind::nonfinite);
    }
    if (c == 'I') {
      return scan_word("Infinity", Kind::nonfinite);
    }
    return fail(m_pos, "expected a value");
  }

  bool scan_word(std::string_view word, Kind kind)
  {
    if (m_text.substr(m_pos, word.size()) != word) {
      return fail(m_pos, "expected a value");
    }
    add_scalar(kind, m_pos + word.size());
    return true;
  }

  bool scan_number()
  {
    size_t i = m_pos;
    if (m_text[i] == '-') {
      ++i;
    }
    if (m_text.substr(i, 8) == "Infinity") {
      add_scalar(Kind::nonfinite, i + 8);
      return true;
    }
    if (i >= m_text.size() || !is_digit(m_text[i])) {
      return fail(i, "invalid number: expected a digit");
    }
    if (m_text[i] == '0') {
      ++i;
    } else {
      while (i < m_text.size() && is_digit(m_text[i])) {
        ++i;
      }
    }
    if (i < m_text.size() && m_text[i] == '.') {
      ++i;
      if (i >= m_text.size() || !is_digit(m_text[i])) {
        return fail(i, "invalid number: expected a digit after '.'");
      }
      while (i < m_text.size() && is_digit(m_text[i])) {
        ++i;
      }
    }
    if (i < m_text.size() && (m_text[i] == 'e' || m_text[i] == 'E')) {
      ++i;
      if (i < m_text.size() && (m_text[i] == '+' || m_text[i] == '-')) {
        ++i;
      }
      if (i >= m_text.size() || !is_digit(m_text[i])) {
        return fail(i, "invalid number: expected a digit in the exponent");
      }
      while (i < m_text.size() && is_digit(m_text[i])) {
        ++i;
      }
    }
    add_scalar(Kind::number, i);
    return true;
  }

  static uint64_t load8(const char* p)
  {
    uint64_t word = 0;
    std::memcpy(&word, p, sizeof word);
    return word;
  }

  // Whether one of the eight bytes of `word` is not is_plain_ascii(): a control character, a
  // byte of 0x80 or more, a quote or a backslash. (A borrow can only flag a byte above one that
  // is flagged itself, so the answer is exact even where the flagged position is not.)
  static bool needs_check(uint64_t word)
  {
    constexpr uint64_t k_ones = 0x0101010101010101;
    constexpr uint64_t k_highs = 0x8080808080808080;
    const auto has_zero = [](uint64_t v) { return (v - k_ones) & ~v & k_highs; };
    const uint64_t below_space = (word - k_ones * 0x20) & ~word & k_highs;
    return ((word & k_highs) | below_space | has_zero(word ^ (k_ones * '"')) |
            has_zero(word ^ (k_ones * '\\'))) != 0;
  }

  // Printable ASCII other than the quote and the backslash: needs no check inside a string.
  static bool is_plain_ascii(char ch)
  {
    const auto c = static_cast<unsigned char>(ch);
    return c >= 0x20 && c < 0x80 && c != '"' && c != '\\';
  }

  // Scans the string token at m_pos and leaves m_pos after its closing quote.
  bool scan_string()
  {
    const size_t begin = m_pos;
    size_t i = m_pos + 1;
    while (true) {
      // Most of a configuration's bytes are plain ASCII inside strings: eight at a time.
      while (i + 8 <= m_text.size() && !needs_check(load8(m_text.data() + i))) {
        i += 8;
      }
      while (i < m_text.size() && is_plain_ascii(m_text[i])) {
        ++i;
      }
      if (i >= m_text.size()) {
        return fail(begin, "unterminated string");
      }
      const auto c = static_cast<unsigned char>(m_text[i]);
      if (c == '"') {
        m_pos = i + 1;
        return true;
      }
      if (c < 0x20) {
        return fail(i, "control character in a string (it must be escaped)");
      }
      if (c == '\\') {
        if (!scan_escape(i)) {
          return false;
        }
        continue;
      }
      const size_t length = utf8_sequence(m_text, i);
      if (length == 0) {
        return fail(i, "invalid UTF-8 in a string");
      }
      i += length;
    }
  }

  // Checks the escape at m_text[i] == '\\' and moves `i` past it.
  bool scan_escape(size_t& i)
  {
    if (i + 1 >= m_text.size()) {
      return fail(i, "unterminated string");
    }
    const char e = m_text[i + 1];
    if (e != 'u') {
      if (std::string_view("\"\\/bfnrt").find(e) == std::string_view::npos) {
        return fail(i, "invalid escape in a string");
      }
      i += 2;
      return true;
    }
    unsigned code = 0;
    if (!read_hex4(m_text, i + 2, code)) {
      return fail(i, "invalid \\u escape: expected 4 hex digits");
    }
    if (code >= 0xDC00 && code <= 0xDFFF) {
      return fail(i, "invalid \\u escape: unpaired UTF-16 surrogate");
    }
    if (code >= 0xD800 && code <= 0xDBFF) {
      unsigned low = 0;
      if (m_text.substr(i + 6, 2) != "\\u" || !read_hex4(m_text, i + 8, low) || low < 0xDC00 ||
          low > 0xDFFF) {
        return fail(i, "invalid \\u escape: unpaired UTF-16 surrogate");
      }
      i += 6;
    }
    i += 6;
    return true;
  }

  std::string_view m_text;
  size_t m_pos = 0;
  std::vector<Node> m_nodes;
  std::vector<uint32_t> m_stack;
  size_t m_key_begin = k_none;
  size_t m_key_end = k_none;
  std::string m_error;
  size_t m_error_offset = 0;
};

Expected<Document>
scan(std::string_view text)
{
  return Scanner(text).run();
}

std::string_view
kind_name(Kind kind)
{
  switch (kind) {
  case Kind::object:
    return "an object";
  case Kind::array:
    return "an array";
  case Kind::string:
    return "a string";
  case Kind::number:
    return "a number";
  case Kind::boolean:
    return "a boolean";
  case Kind::null:
    return "null";
  case Kind::nonfinite:
    return "a non-finite number";
  }
  return "a value";
}

// ---- JSON pointers ----

// A pointer as messages show it: control characters (a key may hold a line break) escaped as
// in a JSON string, so that every message stays on one line.
std::string
shown(std::string_view pointer)
{
  std::string out;
  for (const char c : pointer) {
    const auto byte = static_cast<unsigned char>(c);
    if (c == '\n') {
      out += "\\n";
    } else if (c == '\r') {
      out += "\\r";
    } else if (c == '\t') {
      out += "\\t";
    } else if (byte < 0x20 || byte == 0x7f) {
      out += fmt::format("\\u{:04x}", byte);
    } else {
      out += c;
    }
  }
  return out;
}

// A pointer for messages: "" is the document itself.
std::string
where(std::string_view pointer)
{
  return pointer.empty() ? std::string("the root") : shown(pointer);
}

struct PointerToken
{
  std::string key;    // unescaped
  size_t raw_end = 0; // where the token ends in the pointer text
};

Expected<std::vector<PointerToken>>
parse_pointer(std::string_view pointer)
{
  std::vector<PointerToken> tokens;
  if (pointer.empty()) {
    return tokens;
  }
  if (pointer[0] != '/') {
    return unexpected(fmt::format("invalid JSON pointer \"{}\": it must be empty or start with '/'",
                                  shown(pointer)));
  }
  PointerToken token;
  size_t i = 1;
  while (true) {
    if (i == pointer.size() || pointer[i] == '/') {
      token.raw_end = i;
      tokens.push_back(std::move(token));
      token = {};
      if (i == pointer.size()) {
        return tokens;
      }
      ++i;
    } else if (pointer[i] == '~') {
      const char next = i + 1 < pointer.size() ? pointer[i + 1] : '\0';
      if (next != '0' && next != '1') {
        return unexpected(fmt::format(
          "invalid JSON pointer \"{}\": '~' must be followed by '0' or '1'", shown(pointer)));
      }
      token.key += next == '0' ? '~' : '/';
      i += 2;
    } else {
      token.key += pointer[i++];
    }
  }
}

} // namespace

std::optional<size_t>
array_index(std::string_view token)
{
  if (token.empty() || token.size() > 18 || (token.size() > 1 && token[0] == '0')) {
    return std::nullopt;
  }
  size_t index = 0;
  for (const char c : token) {
    if (!is_digit(c)) {
      return std::nullopt;
    }
    index = index * 10 + static_cast<size_t>(c - '0');
  }
  return index;
}

namespace {

std::string_view
key_token(const Document& doc, const Node& node)
{
  return doc.text.substr(node.key_begin, node.key_end - node.key_begin);
}

bool
key_equals(const Document& doc, const Node& node, std::string_view key)
{
  const std::string_view token = key_token(doc, node);
  const std::string_view raw = token.substr(1, token.size() - 2);
  if (raw.find('\\') == std::string_view::npos) {
    return raw == key;
  }
  return decode_string(token) == key;
}

// The member `key` of an object (the last one when duplicated) or the element of an array.
size_t
find_child(const Document& doc, size_t index, std::string_view key)
{
  const Node& node = doc.nodes[index];
  size_t found = k_none;
  if (node.kind == Kind::object) {
    for (size_t c = node.first_child; c != k_none; c = doc.nodes[c].next_sibling) {
      if (key_equals(doc, doc.nodes[c], key)) {
        found = c;
      }
    }
  } else if (node.kind == Kind::array) {
    const std::optional<size_t> wanted = array_index(key);
    size_t position = 0;
    for (size_t c = node.first_child; wanted && c != k_none; c = doc.nodes[c].next_sibling) {
      if (position++ == *wanted) {
        found = c;
      }
    }
  }
  return found;
}

struct Resolved
{
  size_t node = k_none; // the value, or k_none
  size_t parent = 0;    // when not found: the deepest value found ...
  size_t missing = 0;   // ... and the index of the token it lacks
};

// find_child() for many lookups in one document: a large array or object gets an index of its
// children the first time it is asked, so resolving N pointers into an N-element list is linear.
class ChildIndex
{
public:
  explicit ChildIndex(const Document& doc) : m_doc(doc) {}

  size_t find(size_t index, std::string_view key)
  {
    const Node& node = m_doc.nodes[index];
    if (node.count < k_small) {
      return find_child(m_doc, index, key);
    }
    if (node.kind == Kind::array) {
      auto& children = m_arrays[index];
      if (children.empty()) {
        for (size_t c = node.first_child; c != k_none; c = m_doc.nodes[c].next_sibling) {
          children.push_back(c);
        }
      }
      const std::optional<size_t> wanted = array_index(key);
      return wanted && *wanted < children.size() ? children[*wanted] : k_none;
    }
    if (node.kind == Kind::object) {
      auto& members = m_objects[index];
      if (members.empty()) {
        for (size_t c = node.first_child; c != k_none; c = m_doc.nodes[c].next_sibling) {
          members[decode_string(key_token(m_doc, m_doc.nodes[c]))] = c; // the last one wins
        }
      }
      const auto it = members.find(std::string(key));
      return it == members.end() ? k_none : it->second;
    }
    return k_none;
  }

private:
  static constexpr uint32_t k_small = 32;
  const Document& m_doc;
  std::unordered_map<size_t, std::vector<size_t>> m_arrays;
  std::unordered_map<size_t, std::unordered_map<std::string, size_t>> m_objects;
};

Resolved
resolve(const Document& doc, const std::vector<PointerToken>& tokens,
        ChildIndex* children = nullptr)
{
  size_t current = 0;
  for (size_t i = 0; i < tokens.size(); ++i) {
    const size_t next =
      children ? children->find(current, tokens[i].key) : find_child(doc, current, tokens[i].key);
    if (next == k_none) {
      return {k_none, current, i};
    }
    current = next;
  }
  return {current, 0, 0};
}

// The pointer text up to (excluding) token `i`.
std::string_view
pointer_prefix(std::string_view pointer, const std::vector<PointerToken>& tokens, size_t i)
{
  return pointer.substr(0, i == 0 ? 0 : tokens[i - 1].raw_end);
}

std::string
not_found(const Document& doc, std::string_view pointer, const std::vector<PointerToken>& tokens,
          const Resolved& r)
{
  const Node& parent = doc.nodes[r.parent];
  const std::string at = where(pointer_prefix(pointer, tokens, r.missing));
  const std::string& key = tokens[r.missing].key;
  if (parent.kind == Kind::object) {
    return fmt::format("no value at {}: {} has no key {}", shown(pointer), at, escape_json(key));
  }
  if (parent.kind == Kind::array) {
    return fmt::format("no value at {}: {} has no element {} (it has {})", shown(pointer), at,
                       escape_json(key), parent.count);
  }
  return fmt::format("no value at {}: {} is {}, not an object or array", shown(pointer), at,
                     kind_name(parent.kind));
}

// The pointer of a node, for messages.
std::string
path_of(const Document& doc, size_t index)
{
  std::vector<std::string> parts;
  for (size_t i = index; doc.nodes[i].parent != k_none; i = doc.nodes[i].parent) {
    const Node& node = doc.nodes[i];
    if (node.key_begin != k_none) {
      parts.push_back(escape_pointer_token(decode_string(key_token(doc, node))));
    } else {
      size_t position = 0;
      for (size_t s = node.prev_sibling; s != k_none; s = doc.nodes[s].prev_sibling) {
        ++position;
      }
      parts.push_back(std::to_string(position));
    }
  }
  std::string out;
  for (auto it = parts.rbegin(); it != parts.rend(); ++it) {
    out += '/';
    out += *it;
  }
  return out;
}

// ---- Layout ----

// Where a node's item starts: its key for object members, else the value.
size_t
item_begin(const Node& node)
{
  return node.key_begin != k_none ? node.key_begin : node.begin;
}

// The text between a node's item and the previous item (or the opening bracket).
std::string_view
gap_before(const Document& doc, const Node& node)
{
  const Node& parent = doc.nodes[node.parent];
  const size_t begin =
    node.prev_sibling == k_none ? parent.begin + 1 : doc.nodes[node.prev_sibling].end;
  return doc.text.substr(begin, item_begin(node) - begin);
}

bool
on_own_line(const Document& doc, size_t index)
{
  const Node& node = doc.nodes[index];
  return node.parent != k_none && has_newline(gap_before(doc, node));
}

// The spaces and tabs that start the line holding `offset`.
std::string_view
line_indent(std::string_view text, size_t offset)
{
  const size_t newline = offset == 0 ? std::string_view::npos : text.rfind('\n', offset - 1);
  const size_t start = newline == std::string_view::npos ? 0 : newline + 1;
  size_t end = start;
  while (end < offset && (text[end] == ' ' || text[end] == '\t')) {
    ++end;
  }
  return text.substr(start, end - start);
}

// The line ending used nearest before `offset` (else after it); LF when there is none.
std::string
line_ending_near(std::string_view text, size_t offset)
{
  size_t newline = offset == 0 ? std::string_view::npos : text.rfind('\n', offset - 1);
  if (newline == std::string_view::npos) {
    newline = text.find('\n', offset);
  }
  if (newline != std::string_view::npos && newline > 0 && text[newline - 1] == '\r') {
    return "\r\n";
  }
  return "\n";
}

// How the document writes things, for new text that has no local example.
struct Style
{
  std::string unit = "  "; // one indentation level
  std::string item_sep = ", ";
  std::string colon = ": ";
};

Style
detect_style(const Document& doc)
{
  Style style;
  bool unit_found = false, flat_found = false, sep_found = false, colon_found = false;
  for (size_t i = 1; i < doc.nodes.size(); ++i) {
    const Node& node = doc.nodes[i];
    const std::string_view gap = gap_before(doc, node);
    // Once the unit is known, a gap with a line break tells nothing more: line_indent() is
    // not paid twice per element of a long list laid out one element per line.
    if (has_newline(gap)) {
      const std::string_view inner =
        unit_found ? std::string_view() : line_indent(doc.text, item_begin(node));
      const std::string_view outer =
        unit_found ? std::string_view() : line_indent(doc.text, doc.nodes[node.parent].begin);
      if (!unit_found && inner.starts_with(outer)) {
        if (inner.size() > outer.size()) {
          style.unit = inner.substr(outer.size());
          unit_found = true;
        } else {
          flat_found = true; // Python's indent=0
        }
      }
    } else if (!sep_found && node.prev_sibling != k_none) {
      style.item_sep = gap;
      sep_found = true;
    }
    if (!colon_found && node.key_begin != k_none) {
      const std::string_view colon = doc.text.substr(node.key_end, node.begin - node.key_end);
      if (!has_newline(colon)) {
        style.colon = colon;
        colon_found = true;
      }
    }
    if (unit_found && sep_found && colon_found) {
      break;
    }
  }
  if (!unit_found && flat_found) {
    style.unit.clear();
  }
  if (!sep_found && colon_found && style.colon == ":") {
    style.item_sep = ",";
  }
  if (!colon_found && sep_found && style.item_sep == ",") {
    style.colon = ":";
  }
  return style;
}

// Whether a new value in container `index` should be laid out over several lines: like the
// last non-empty container among its members, else like the container itself.
bool
multiline_values(const Document& doc, size_t index)
{
  const Node& node = doc.nodes[index];
  bool multiline = node.count > 0 ? on_own_line(doc, node.last_child) : on_own_line(doc, index);
  for (size_t c = node.first_child; c != k_none; c = doc.nodes[c].next_sibling) {
    const Node& child = doc.nodes[c];
    if (is_container(child) && child.count > 0) {
      multiline = on_own_line(doc, child.last_child);
    }
  }
  return multiline;
}

struct Layout
{
  bool multiline = false;
  std::string eol = "\n";
  std::string unit = "  ";
  std::string item_sep = ", ";
  std::string colon = ": ";
};

Layout
layout_from(const Style& style, bool multiline, std::string eol)
{
  return Layout{multiline, std::move(eol), style.unit, style.item_sep, style.colon};
}

// Writes value `index` of a parsed snippet in `layout`; `indent` is that of the line where it
// starts. Recursion is bounded by the scanner's depth limit, and snippets come from code.
void
emit(const Document& value, size_t index, const Layout& layout, const std::string& indent,
     std::string& out)
{
  const Node& node = value.nodes[index];
  if (!is_container(node)) {
    out += value.text.substr(node.begin, node.end - node.begin);
    return;
  }
  const bool object = node.kind == Kind::object;
  out += object ? '{' : '[';
  const std::string inner = indent + layout.unit;
  for (size_t c = node.first_child; c != k_none; c = value.nodes[c].next_sibling) {
    const Node& child = value.nodes[c];
    if (layout.multiline) {
      out += child.prev_sibling == k_none ? "" : ",";
      out += layout.eol;
      out += inner;
    } else if (child.prev_sibling != k_none) {
      out += layout.item_sep;
    }
    if (object) {
      out += key_token(value, child);
      out += layout.colon;
    }
    emit(value, c, layout, inner, out);
  }
  if (layout.multiline && node.count > 0) {
    out += layout.eol;
    out += indent;
  }
  out += object ? '}' : ']';
}

std::string
splice(std::string_view text, size_t begin, size_t end, std::string_view replacement)
{
  std::string out;
  out.reserve(text.size() + replacement.size());
  out += text.substr(0, begin);
  out += replacement;
  out += text.substr(end);
  return out;
}

// Inserts `key_json: value` as the last member of object `index`, in the object's layout.
std::string
insert_member(const Document& doc, size_t index, const std::string& key_json, const Document& value)
{
  const Node& object = doc.nodes[index];
  const Style style = detect_style(doc);
  if (object.count > 0) {
    const Node& last = doc.nodes[object.last_child];
    const std::string_view gap = gap_before(doc, last);
    std::string colon(doc.text.substr(last.key_end, last.begin - last.key_end));
    if (has_newline(colon)) {
      colon = style.colon;
    }
    std::string insertion;
    if (has_newline(gap)) {
      const std::string indent(line_indent(doc.text, last.key_begin));
      Layout layout = layout_from(style, multiline_values(doc, index),
                                  line_ending_near(doc.text, last.key_begin));
      layout.colon = colon;
      insertion = "," + layout.eol + indent + key_json + colon;
      emit(value, 0, layout, indent, insertion);
    } else {
      Layout layout = layout_from(style, false, "\n");
      if (last.prev_sibling != k_none) {
        layout.item_sep = gap;
      }
      layout.colon = colon;
      insertion = layout.item_sep + key_json + colon;
      emit(value, 0, layout, "", insertion);
    }
    return splice(doc.text, last.end, last.end, insertion);
  }
  // An empty object opens up when it sits on its own line, in the file's indentation.
  const bool multiline = on_own_line(doc, index);
  const Layout layout = layout_from(style, multiline, line_ending_near(doc.text, object.begin));
  std::string replacement = "{";
  if (multiline) {
    const std::string indent(line_indent(doc.text, object.begin));
    const std::string inner = indent + layout.unit;
    replacement += layout.eol + inner + key_json + layout.colon;
    emit(value, 0, layout, inner, replacement);
    replacement += layout.eol + indent;
  } else {
    replacement += key_json + layout.colon;
    emit(value, 0, layout, "", replacement);
  }
  replacement += "}";
  return splice(doc.text, object.begin, object.end, replacement);
}

// What goes between a member put before the first member of the non-empty object `index` and
// that member: the separator the object's members have, and on its own line the first member's
// line break and indentation.
std::string
separator_before_first(const Document& doc, size_t index)
{
  const Node& first = doc.nodes[doc.nodes[index].first_child];
  const std::string_view gap = gap_before(doc, first);
  if (has_newline(gap)) {
    return "," + std::string(gap);
  }
  if (first.next_sibling != k_none) {
    return std::string(gap_before(doc, doc.nodes[first.next_sibling]));
  }
  return detect_style(doc).item_sep;
}

// Inserts member `key_json`: `value` before the first member of the non-empty object `index`,
// laid out as that member is: on its own line in its indentation, or inline with the separator
// the object's members have.
std::string
insert_member_first(const Document& doc, size_t index, const std::string& key_json,
                    const Document& value)
{
  const Node& first = doc.nodes[doc.nodes[index].first_child];
  const Style style = detect_style(doc);
  std::string colon(doc.text.substr(first.key_end, first.begin - first.key_end));
  if (has_newline(colon)) {
    colon = style.colon;
  }
  std::string insertion = key_json + colon;
  if (has_newline(gap_before(doc, first))) {
    const std::string indent(line_indent(doc.text, first.key_begin));
    Layout layout =
      layout_from(style, multiline_values(doc, index), line_ending_near(doc.text, first.key_begin));
    layout.colon = colon;
    emit(value, 0, layout, indent, insertion);
  } else {
    Layout layout = layout_from(style, false, "\n");
    layout.colon = colon;
    emit(value, 0, layout, "", insertion);
  }
  insertion += separator_before_first(doc, index);
  const size_t at = item_begin(first);
  return splice(doc.text, at, at, insertion);
}

// Moves member `member` (not the first) of object `index` before the first one, its key, colon
// and value as written; the separator before it goes with it.
std::string
move_member_first(const Document& doc, size_t index, size_t member)
{
  const Node& first = doc.nodes[doc.nodes[index].first_child];
  const Node& moved = doc.nodes[member];
  const size_t at = item_begin(first);
  const size_t cut = doc.nodes[moved.prev_sibling].end;
  std::string out(doc.text.substr(0, at));
  out += doc.text.substr(moved.key_begin, moved.end - moved.key_begin);
  out += separator_before_first(doc, index);
  out += doc.text.substr(at, cut - at);
  out += doc.text.substr(moved.end);
  return out;
}

// Puts `value` in the place of value `index` (an empty array, or null), laid out as a new value
// there: over several lines when it sits on its own line.
std::string
lay_out_in_place(const Document& doc, size_t index, const Document& value)
{
  const Node& node = doc.nodes[index];
  const Layout layout =
    layout_from(detect_style(doc), on_own_line(doc, index), line_ending_near(doc.text, node.begin));
  std::string replacement;
  emit(value, 0, layout, std::string(line_indent(doc.text, node.begin)), replacement);
  return splice(doc.text, node.begin, node.end, replacement);
}

// Replaces the value of member `index` with `value`, laid out as a new member of its object
// would be; the key and the text around the value stay.
std::string
replace_member_value(const Document& doc, size_t index, const Document& value)
{
  const Node& member = doc.nodes[index];
  Layout layout = layout_from(detect_style(doc), multiline_values(doc, member.parent),
                              line_ending_near(doc.text, member.begin));
  std::string replacement;
  emit(value, 0, layout, std::string(line_indent(doc.text, member.begin)), replacement);
  return splice(doc.text, member.begin, member.end, replacement);
}

// Appends string tokens to array `index`, following its layout. `value` is the parsed compact
// array of the same tokens, laid out anew when the array is empty.
std::string
append_elements(const Document& doc, size_t index, const std::vector<std::string>& tokens,
                const Document& value)
{
  const Node& array = doc.nodes[index];
  const Style style = detect_style(doc);
  if (array.count == 0) {
    return lay_out_in_place(doc, index, value);
  }
  const Node& last = doc.nodes[array.last_child];
  const std::string_view gap = gap_before(doc, last);
  std::string separator;
  if (has_newline(gap)) {
    separator = "," + line_ending_near(doc.text, last.begin);
    separator += line_indent(doc.text, last.begin);
  } else {
    separator = last.prev_sibling != k_none ? std::string(gap) : style.item_sep;
  }
  std::string insertion;
  for (const std::string& token : tokens) {
    insertion += separator + token;
  }
  return splice(doc.text, last.end, last.end, insertion);
}

// Re-reads an edited text: the edit must leave valid JSON with `kind` at `pointer`.
Expected<std::string>
checked(std::string edited, const std::vector<PointerToken>& tokens, Kind kind)
{
  const auto doc = scan(edited);
  if (!doc) {
    return unexpected("internal error: the edited text is not valid JSON: " + doc.error());
  }
  const Resolved r = resolve(*doc, tokens);
  if (r.node == k_none || doc->nodes[r.node].kind != kind) {
    return unexpected("internal error: the edited text lost the edited value");
  }
  return edited;
}

// Checks that a missing value can be created: only its last token may be missing, in an object.
Expected<void>
creatable(const Document& doc, std::string_view pointer, const std::vector<PointerToken>& tokens,
          const Resolved& r)
{
  if (r.missing + 1 != tokens.size()) {
    return unexpected(fmt::format("cannot add {}: {} does not exist", shown(pointer),
                                  where(pointer_prefix(pointer, tokens, r.missing + 1))));
  }
  const Node& parent = doc.nodes[r.parent];
  if (parent.kind != Kind::object) {
    return unexpected(fmt::format("cannot add {}: {} is {}, not an object", shown(pointer),
                                  where(pointer_prefix(pointer, tokens, r.missing)),
                                  kind_name(parent.kind)));
  }
  return {};
}

// Whether a JSON number is too large for a double (1e400): Python reads it as inf and nlohmann
// refuses the file. Numbers too small (1e-400) read as 0 everywhere and are fine.
bool
overflows_double(std::string_view number)
{
  double parsed = 0;
  const char* end = number.data() + number.size();
  if (std::from_chars(number.data(), end, parsed).ec != std::errc::result_out_of_range) {
    return false;
  }
  // Out of range either way: the sign of the decimal magnitude tells which.
  long magnitude = 0;
  size_t i = number[0] == '-' ? 1 : 0;
  while (i < number.size() && number[i] == '0') {
    ++i;
  }
  bool leading = true; // still in the zeros that start the number
  for (; i < number.size() && is_digit(number[i]); ++i) {
    ++magnitude;
    leading = false;
  }
  if (i < number.size() && number[i] == '.') {
    for (++i; leading && i < number.size() && number[i] == '0'; ++i) {
      --magnitude;
    }
    while (i < number.size() && is_digit(number[i])) {
      ++i;
    }
  }
  long exponent = 0;
  if (i < number.size()) {
    const char* first = number.data() + i + 1;
    const bool negative = *first == '-';
    first += *first == '+' || *first == '-' ? 1 : 0;
    if (std::from_chars(first, end, exponent).ec != std::errc()) {
      exponent = 1000000; // too many digits for a long: far beyond any double
    }
    exponent = negative ? -exponent : exponent;
  }
  return magnitude + exponent > 0;
}

} // namespace

std::string
escape_pointer_token(std::string_view key)
{
  std::string out;
  for (const char c : key) {
    if (c == '~') {
      out += "~0";
    } else if (c == '/') {
      out += "~1";
    } else {
      out += c;
    }
  }
  return out;
}

Expected<JsonSpan>
locate(std::string_view text, std::string_view pointer)
{
  return std::move(locate_all(text, {std::string(pointer)}).front());
}

namespace {

// Where each line of `text` starts: one scan, for the positions of many offsets.
std::vector<size_t>
line_starts(std::string_view text)
{
  std::vector<size_t> starts{0};
  for (size_t at = 0; at < text.size();) {
    const auto* newline =
      static_cast<const char*>(std::memchr(text.data() + at, '\n', text.size() - at));
    if (newline == nullptr) {
      break;
    }
    at = static_cast<size_t>(newline - text.data()) + 1;
    starts.push_back(at);
  }
  return starts;
}

// The position of `offset` in a text whose line_starts() are `lines`.
TextPosition
position_in(const std::vector<size_t>& lines, size_t offset)
{
  const auto line = std::upper_bound(lines.begin(), lines.end(), offset) - 1;
  return TextPosition{static_cast<uint32_t>(line - lines.begin() + 1),
                      static_cast<uint32_t>(offset - *line + 1)};
}

} // namespace

std::vector<Expected<JsonSpan>>
locate_all(std::string_view text, const std::vector<std::string>& pointers)
{
  std::vector<Expected<JsonSpan>> out;
  out.reserve(pointers.size());
  const auto doc = scan(text);
  const std::vector<size_t> lines = line_starts(text);
  std::optional<ChildIndex> children;
  if (doc) {
    children.emplace(*doc);
  }
  for (const std::string& pointer : pointers) {
    if (!doc) {
      out.emplace_back(unexpected(doc.error()));
      continue;
    }
    auto tokens = parse_pointer(pointer);
    if (!tokens) {
      out.emplace_back(unexpected(tokens.error()));
      continue;
    }
    const Resolved r = resolve(*doc, *tokens, &*children);
    if (r.node == k_none) {
      out.emplace_back(unexpected(not_found(*doc, pointer, *tokens, r)));
      continue;
    }
    const Node& node = doc->nodes[r.node];
    out.emplace_back(JsonSpan{node.begin, node.end, position_in(lines, node.begin)});
  }
  return out;
}

namespace {

// Follows pointers through a text read as JSON before, all in one pass: a value on some
// pointer's path is read member by member (or element by element), any other value is skipped
// without being built. A pointer is not found where its path is not there; the walk fails where
// the text is not JSON as far as it reads it (what lies beside the paths is checked only as far
// as skipping needs).
class PathWalk
{
public:
  // `paths`: the tokens of each pointer.
  PathWalk(std::string_view text, const std::vector<std::vector<PointerToken>>& paths)
    : m_text(text), m_steps(1), m_spans(paths.size())
  {
    for (uint32_t p = 0; p < paths.size(); ++p) {
      uint32_t step = 0;
      m_steps[0].below.push_back(p);
      for (const PointerToken& token : paths[p]) {
        step = child(step, token.key);
        m_steps[step].below.push_back(p);
      }
      m_steps[step].ends.push_back(p);
    }
    for (Step& s : m_steps) {
      std::sort(s.indices.begin(), s.indices.end());
    }
  }

  // The [begin, end) of each path's value, nullopt where there is none; nullopt for all when
  // the text is not JSON where the walk read it.
  std::optional<std::vector<std::optional<std::pair<size_t, size_t>>>> run()
  {
    m_pos = m_text.starts_with("\xEF\xBB\xBF") ? 3 : 0;
    skip_space();
    if (!value(0)) {
      return std::nullopt;
    }
    return std::move(m_spans);
  }

private:
  // A node of the paths' tree: the pointers reaching a value, and where they go from it.
  struct Step
  {
    std::map<std::string, uint32_t, std::less<>> keys; // member name -> step
    std::vector<std::pair<size_t, uint32_t>> indices;  // element index -> step, sorted
    std::vector<uint32_t> ends;                        // the pointers naming this value
    std::vector<uint32_t> below;                       // the pointers through it
  };

  // Thousands of pointers into one list or object cost a lookup each, not a pass over the others.
  uint32_t child(uint32_t step, const std::string& key)
  {
    const auto next = static_cast<uint32_t>(m_steps.size());
    const auto [at, added] = m_steps[step].keys.try_emplace(key, next);
    if (!added) {
      return at->second;
    }
    if (const std::optional<size_t> index = array_index(key)) {
      m_steps[step].indices.emplace_back(*index, next);
    }
    m_steps.emplace_back();
    return next;
  }

  bool at(char c) const { return m_pos < m_text.size() && m_text[m_pos] == c; }

  void skip_space()
  {
    m_pos = static_cast<size_t>(
      skip_json_space(m_text.data() + m_pos, m_text.data() + m_text.size()) - m_text.data());
  }

  // At the value reached by `step`: past it, with the spans of the pointers under it.
  bool value(uint32_t step)
  {
    const size_t begin = m_pos;
    const Step& s = m_steps[step];
    bool read = true;
    if (at('{') && !s.keys.empty()) {
      read = object(s);
    } else if (at('[') && !s.indices.empty()) {
      read = array(s);
    } else {
      read = skip_value();
    }
    if (!read) {
      return false;
    }
    for (const uint32_t p : m_steps[step].ends) {
      m_spans[p] = std::pair{begin, m_pos};
    }
    return true;
  }

  // At '{': each member on a path is followed (a later member of the same name replaces what an
  // earlier one gave, as Python and locate_all() read duplicates), the others skipped.
  bool object(const Step& s)
  {
    ++m_pos;
    skip_space();
    if (at('}')) {
      ++m_pos;
      return true;
    }
    for (;;) {
      const size_t key_begin = m_pos;
      if (!at('"') || !skip_string()) {
        return false;
      }
      const std::string_view token = m_text.substr(key_begin, m_pos - key_begin);
      skip_space();
      if (!at(':')) {
        return false;
      }
      ++m_pos;
      skip_space();
      const std::string_view raw = token.substr(1, token.size() - 2);
      std::string decoded;
      if (raw.find('\\') != std::string_view::npos) {
        decoded = decode_string(token);
      }
      const std::string_view key = decoded.empty() ? raw : decoded;
      const auto next = s.keys.find(key);
      if (next == s.keys.end()) {
        if (!skip_value()) {
          return false;
        }
      } else {
        for (const uint32_t p : m_steps[next->second].below) {
          m_spans[p].reset();
        }
        if (!value(next->second)) {
          return false;
        }
      }
      if (!after_item('}')) {
        return false;
      }
      if (m_text[m_pos - 1] == '}') {
        return true;
      }
    }
  }

  // At '[': each element on a path is followed, the others skipped.
  bool array(const Step& s)
  {
    ++m_pos;
    skip_space();
    if (at(']')) {
      ++m_pos;
      return true;
    }
    auto wanted = s.indices.begin();
    for (size_t index = 0;; ++index) {
      while (wanted != s.indices.end() && wanted->first < index) {
        ++wanted;
      }
      if (wanted == s.indices.end()) {
        return skip_nested(); // no pointer goes further into the array
      }
      if (wanted->first > index) {
        index += skip_strings(wanted->first - index);
      }
      if (wanted->first == index) {
        if (!value(wanted->second)) {
          return false;
        }
      } else if (!skip_value()) {
        return false;
      }
      if (!after_item(']')) {
        return false;
      }
      if (m_text[m_pos - 1] == ']') {
        return true;
      }
    }
  }

  // At an element: past at most `count` elements that are strings, each followed by a comma
  // and another element, to the start of the next one; how many. Stops at the first element
  // that is not such a string, where the element-by-element walk reads it (and fails where it
  // would): a long list of names is skipped without a call per element.
  size_t skip_strings(size_t count)
  {
    const char* const text = m_text.data();
    const char* const end = text + m_text.size();
    size_t skipped = skip_plain_strings(count);
    while (skipped < count && m_pos < m_text.size() && text[m_pos] == '"') {
      const size_t close = string_token_end(m_text, m_pos);
      if (close >= m_text.size()) {
        break;
      }
      const char* p = skip_json_space(text + close + 1, end);
      if (p == end || *p != ',') {
        break;
      }
      p = skip_json_space(p + 1, end);
      if (p == end || *p == ']') {
        break;
      }
      m_pos = static_cast<size_t>(p - text);
      ++skipped;
    }
    return skipped;
  }

  // skip_strings() 16 bytes at a time, for runs of strings without escapes: at an element that
  // is a string, past at most `count` strings each followed by a comma and another string, to
  // the start of that one; how many. Stops short (never further than skip_strings() would go)
  // at a backslash, at a byte outside the strings other than space or a comma, at a missing
  // or second comma, and before the text's last 16 bytes; skip_strings() goes on from there.
  size_t skip_plain_strings(size_t count)
  {
    size_t skipped = 0;
#if defined(__SSE2__)
    if (count == 0 || m_pos >= m_text.size() || m_text[m_pos] != '"') {
      return 0;
    }
    enum class State
    {
      in_string,    // after an opening quote
      after_string, // after a closing quote, before the comma
      after_comma,  // before the next string
    };
    State state = State::in_string;
    const char* const text = m_text.data();
    for (size_t block = m_pos + 1; block + 16 <= m_text.size(); block += 16) {
      const __m128i bytes = _mm_loadu_si128(reinterpret_cast<const __m128i*>(text + block));
      const auto mask = [&](char c) {
        return static_cast<uint32_t>(_mm_movemask_epi8(_mm_cmpeq_epi8(bytes, _mm_set1_epi8(c))));
      };
      const uint32_t quotes = mask('"');
      const uint32_t commas = mask(',');
      const uint32_t spaces = json_space_mask(bytes);
      // Bit i: an odd number of quotes before byte i (from the block's start), so byte i is in
      // a string when that parity differs from the state's at the block's start.
      uint32_t before = quotes << 1;
      before ^= before << 1;
      before ^= before << 2;
      before ^= before << 4;
      before ^= before << 8;
      const uint32_t inside = (state == State::in_string ? ~before : before) & 0xFFFF;
      // Bytes past the first backslash or the first other byte outside a string are not read.
      const uint32_t stops = mask('\\') | (~inside & ~quotes & ~commas & ~spaces & 0xFFFF);
      const uint32_t readable = stops == 0 ? 0xFFFF : (stops & -stops) - 1;
      for (uint32_t events = (quotes | (commas & ~inside)) & readable; events != 0;
           events &= events - 1) {
        const bool quote = ((quotes & events & -events) != 0);
        if (state == State::in_string && quote) {
          state = State::after_string;
        } else if (state == State::after_string && !quote) {
          state = State::after_comma;
        } else if (state == State::after_comma && quote) {
          m_pos = block + static_cast<size_t>(__builtin_ctz(events));
          state = State::in_string;
          if (++skipped == count) {
            return skipped;
          }
        } else {
          return skipped; // a quote after a string, or a second comma
        }
      }
      if (readable != 0xFFFF) {
        return skipped;
      }
    }
#else
    (void)count;
#endif
    return skipped;
  }

  // After a member or element: past the comma to the next one, or past `close`.
  bool after_item(char close)
  {
    skip_space();
    if (at(close)) {
      ++m_pos;
      return true;
    }
    if (!at(',')) {
      return false;
    }
    ++m_pos;
    skip_space();
    return m_pos < m_text.size() && m_text[m_pos] != close;
  }

  // At '"': past the closing quote.
  bool skip_string()
  {
    const size_t close = string_token_end(m_text, m_pos);
    if (close >= m_text.size()) {
      return false;
    }
    m_pos = close + 1;
    return true;
  }

  // Inside a container: past the bracket that closes it, brackets counted and strings skipped,
  // nothing else read. Only the brackets and quotes are looked at, 16 bytes at a time.
  bool skip_nested()
  {
    size_t depth = 1;
    const size_t size = m_text.size();
    while (m_pos < size) {
      size_t next = m_pos;
#if defined(__SSE2__)
      for (; next + 16 <= size; next += 16) {
        const __m128i bytes =
          _mm_loadu_si128(reinterpret_cast<const __m128i*>(m_text.data() + next));
        // '[' ']' '{' '}' are 0x5B 0x5D 0x7B 0x7D: with bit 5 cleared, '[' or '{' is 0x5B and
        // ']' or '}' is 0x5D.
        const __m128i folded = _mm_andnot_si128(_mm_set1_epi8(0x20), bytes);
        const __m128i hits =
          _mm_or_si128(_mm_cmpeq_epi8(bytes, _mm_set1_epi8('"')),
                       _mm_or_si128(_mm_cmpeq_epi8(folded, _mm_set1_epi8(0x5B)),
                                    _mm_cmpeq_epi8(folded, _mm_set1_epi8(0x5D))));
        if (const int mask = _mm_movemask_epi8(hits); mask != 0) {
          next += static_cast<size_t>(__builtin_ctz(static_cast<unsigned>(mask)));
          break;
        }
      }
#endif
      while (next < size && m_text[next] != '"' && m_text[next] != '[' && m_text[next] != ']' &&
             m_text[next] != '{' && m_text[next] != '}') {
        ++next;
      }
      m_pos = next;
      if (m_pos >= size) {
        return false;
      }
      const char b = m_text[m_pos];
      if (b == '"') {
        if (!skip_string()) {
          return false;
        }
        continue;
      }
      ++m_pos;
      if (b == '{' || b == '[') {
        ++depth;
      } else if (--depth == 0) {
        return true;
      }
    }
    return false;
  }

  // Past the value here: a string, a container with whatever it nests (brackets counted, strings
  // skipped), or a scalar up to the next delimiter.
  bool skip_value()
  {
    if (m_pos >= m_text.size()) {
      return false;
    }
    const char c = m_text[m_pos];
    if (c == '"') {
      return skip_string();
    }
    if (c == '{' || c == '[') {
      ++m_pos;
      return skip_nested();
    }
    // A number, true, false, null (or NaN, Infinity, which locate_all() also reads).
    if (c != '-' && !is_digit(c) && std::string_view("tfnNI").find(c) == std::string_view::npos) {
      return false;
    }
    while (m_pos < m_text.size() && !is_json_space(m_text[m_pos]) && m_text[m_pos] != ',' &&
           m_text[m_pos] != ']' && m_text[m_pos] != '}') {
      ++m_pos;
    }
    return true;
  }

  std::string_view m_text;
  size_t m_pos = 0;
  std::vector<Step> m_steps; // [0]: the root
  std::vector<std::optional<std::pair<size_t, size_t>>> m_spans;
};

// The '\n' bytes in `text`, 16 bytes at a time.
size_t
count_newlines(std::string_view text)
{
  size_t n = 0;
  size_t i = 0;
#if defined(__SSE2__)
  // Each lane counts down by one per newline (a match compares as -1), at most 255 blocks
  // before the lanes are summed.
  while (i + 16 <= text.size()) {
    const size_t blocks = std::min<size_t>((text.size() - i) / 16, 255);
    __m128i lanes = _mm_setzero_si128();
    for (size_t b = 0; b < blocks; ++b, i += 16) {
      const __m128i bytes = _mm_loadu_si128(reinterpret_cast<const __m128i*>(text.data() + i));
      lanes = _mm_sub_epi8(lanes, _mm_cmpeq_epi8(bytes, _mm_set1_epi8('\n')));
    }
    const __m128i sums = _mm_sad_epu8(lanes, _mm_setzero_si128());
    n += static_cast<size_t>(_mm_cvtsi128_si32(sums)) +
         static_cast<size_t>(_mm_cvtsi128_si32(_mm_unpackhi_epi64(sums, sums)));
  }
#endif
  for (; i < text.size(); ++i) {
    n += text[i] == '\n' ? 1 : 0;
  }
  return n;
}

} // namespace

std::vector<Expected<JsonSpan>>
locate_along_paths(std::string_view text, const std::vector<std::string>& pointers)
{
  if (text.size() > k_max_text) {
    return locate_all(text, pointers);
  }
  std::vector<std::vector<PointerToken>> paths;
  for (const std::string& pointer : pointers) {
    auto tokens = parse_pointer(pointer);
    if (!tokens || tokens->size() > k_json_max_depth) {
      return locate_all(text, pointers); // its messages, for every pointer alike
    }
    paths.push_back(std::move(tokens).value());
  }
  const auto spans = PathWalk(text, paths).run();
  if (!spans || std::any_of(spans->begin(), spans->end(), [](const auto& s) { return !s; })) {
    return locate_all(text, pointers);
  }
  std::vector<size_t> begins;
  for (const auto& span : *spans) {
    begins.push_back(span->first);
  }
  const std::vector<TextPosition> positions = positions_of(text, begins);
  std::vector<Expected<JsonSpan>> out;
  out.reserve(pointers.size());
  for (size_t p = 0; p < spans->size(); ++p) {
    out.emplace_back(JsonSpan{(*spans)[p]->first, (*spans)[p]->second, positions[p]});
  }
  return out;
}

std::vector<TextPosition>
positions_of(std::string_view text, std::span<const size_t> offsets)
{
  // Lines are counted only up to the last offset: one early in a long text reads little.
  std::vector<std::pair<size_t, size_t>> by_offset; // (offset, index)
  for (size_t i = 0; i < offsets.size(); ++i) {
    by_offset.emplace_back(std::min(offsets[i], text.size()), i);
  }
  std::sort(by_offset.begin(), by_offset.end());
  std::vector<TextPosition> positions(offsets.size());
  uint32_t line = 1;
  size_t line_start = 0;
  size_t counted = 0; // newlines before here are counted
  for (const auto& [offset, i] : by_offset) {
    // Counted a block at a time, not a call per line: an offset past a long list is 50,000
    // lines on.
    const std::string_view stretch = text.substr(counted, offset - counted);
    if (const size_t newlines = count_newlines(stretch); newlines > 0) {
      line += static_cast<uint32_t>(newlines);
      line_start = counted + stretch.rfind('\n') + 1;
    }
    counted = offset;
    positions[i] = TextPosition{line, static_cast<uint32_t>(offset - line_start + 1)};
  }
  return positions;
}

TextPosition
position_of(std::string_view text, size_t offset)
{
  offset = std::min(offset, text.size());
  TextPosition position;
  size_t line_start = 0;
  for (size_t i = 0; i < offset; ++i) {
    if (text[i] == '\n') {
      ++position.line;
      line_start = i + 1;
    }
  }
  position.column = static_cast<uint32_t>(offset - line_start + 1);
  return position;
}

Expected<std::string>
append_to_string_array(std::string_view text, std::string_view pointer,
                       const std::vector<std::string>& entries, std::vector<std::string>* appended)
{
  auto tokens = parse_pointer(pointer);
  if (!tokens) {
    return unexpected(tokens.error());
  }
  const auto doc = scan(text);
  if (!doc) {
    return unexpected(doc.error());
  }
  for (size_t i = 0; i < entries.size(); ++i) {
    if (!valid_utf8(entries[i])) {
      return unexpected(
        fmt::format("cannot append to {}: entry {} is not valid UTF-8", where(pointer), i + 1));
    }
  }
  const Resolved r = resolve(*doc, *tokens);
  // The entries not yet listed, in order and once each. The array (thousands of strings) is
  // checked against them, not indexed: a string whose length no entry has cannot be one.
  std::unordered_map<std::string_view, bool> listed; // entry -> found in the array
  std::vector<bool> has_length;
  for (const std::string& entry : entries) {
    listed.emplace(entry, false);
    has_length.resize(std::max(has_length.size(), entry.size() + 1));
    has_length[entry.size()] = true;
  }
  const auto mark = [&](std::string_view value) {
    if (value.size() < has_length.size() && has_length[value.size()]) {
      if (const auto it = listed.find(value); it != listed.end()) {
        it->second = true;
      }
    }
  };
  // A null list reads as an empty one: it is replaced by the new array.
  const bool null_list = r.node != k_none && doc->nodes[r.node].kind == Kind::null;
  if (r.node != k_none && !null_list) {
    const Node& array = doc->nodes[r.node];
    if (array.kind != Kind::array) {
      return unexpected(fmt::format("cannot append to {}: it is {}, not an array", where(pointer),
                                    kind_name(array.kind)));
    }
    size_t position = 0;
    for (size_t c = array.first_child; c != k_none; c = doc->nodes[c].next_sibling, ++position) {
      const Node& element = doc->nodes[c];
      if (element.kind != Kind::string) {
        return unexpected(fmt::format("cannot append to {}: {}/{} is {}, not a string",
                                      where(pointer), shown(pointer), position,
                                      kind_name(element.kind)));
      }
      const std::string_view token = text.substr(element.begin, element.end - element.begin);
      const std::string_view inside = token.substr(1, token.size() - 2);
      if (inside.find('\\') == std::string_view::npos) {
        mark(inside);
      } else {
        mark(decode_string(token));
      }
    }
  } else if (r.node == k_none) {
    if (auto ok = creatable(*doc, pointer, *tokens, r); !ok) {
      return unexpected(ok.error());
    }
  }
  std::vector<std::string> added;
  for (const std::string& entry : entries) {
    const auto it = listed.find(entry);
    if (!it->second) {
      it->second = true; // a repeated entry is added once
      added.push_back(escape_json(entry));
      if (appended != nullptr) {
        appended->push_back(entry);
      }
    }
  }
  if (added.empty()) {
    return std::string(text);
  }
  std::string compact = "[";
  for (size_t i = 0; i < added.size(); ++i) {
    compact += (i == 0 ? "" : ",") + added[i];
  }
  compact += "]";
  const auto value = scan(compact);
  if (!value) {
    return unexpected("internal error: escaped entries are not JSON: " + value.error());
  }
  std::string edited = null_list ? lay_out_in_place(*doc, r.node, *value)
                       : r.node != k_none
                         ? append_elements(*doc, r.node, added, *value)
                         : insert_member(*doc, r.parent, escape_json(tokens->back().key), *value);
  return checked(std::move(edited), *tokens, Kind::array);
}

Expected<std::string>
add_object_member(std::string_view text, std::string_view pointer, const std::string& key,
                  const std::string& value_json, ExistingMember existing, MemberPlace place)
{
  auto tokens = parse_pointer(pointer);
  if (!tokens) {
    return unexpected(tokens.error());
  }
  const auto doc = scan(text);
  if (!doc) {
    return unexpected(doc.error());
  }
  if (!valid_utf8(key)) {
    return unexpected(
      fmt::format("cannot add a member to {}: the key is not valid UTF-8", where(pointer)));
  }
  const auto value = scan(value_json);
  if (!value) {
    return unexpected(fmt::format("cannot add {} to {}: its value is not JSON: {}",
                                  escape_json(key), where(pointer), value.error()));
  }
  for (const Node& node : value->nodes) {
    if (node.kind == Kind::nonfinite) {
      return unexpected(fmt::format("cannot add {} to {}: its value contains {}, which is not JSON",
                                    escape_json(key), where(pointer),
                                    value_json.substr(node.begin, node.end - node.begin)));
    }
    const std::string_view token(value_json.data() + node.begin, node.end - node.begin);
    if (node.kind == Kind::number && overflows_double(token)) {
      return unexpected(fmt::format("cannot add {} to {}: its value contains {}, which is out of "
                                    "range for a double",
                                    escape_json(key), where(pointer), token));
    }
  }
  const Resolved r = resolve(*doc, *tokens);
  // A new object holding the member alone: the value itself, without a byte order mark or
  // spaces around it. The document views `wrapped_text`.
  std::string wrapped_text;
  const auto wrapped = [&]() {
    const Node& root = value->nodes.front();
    wrapped_text =
      fmt::format("{{{}:{}}}", escape_json(key),
                  std::string_view(value_json).substr(root.begin, root.end - root.begin));
    return scan(wrapped_text);
  };
  std::string edited;
  if (r.node != k_none && doc->nodes[r.node].kind == Kind::null) {
    // A null object reads as an empty one: it is replaced by the new object.
    const auto object = wrapped();
    if (!object) {
      return unexpected(object.error());
    }
    edited = lay_out_in_place(*doc, r.node, *object);
  } else if (r.node != k_none) {
    const Node& object = doc->nodes[r.node];
    if (object.kind != Kind::object) {
      return unexpected(fmt::format("cannot add a member to {}: it is {}, not an object",
                                    where(pointer), kind_name(object.kind)));
    }
    if (const size_t member = find_child(*doc, r.node, key); member != k_none) {
      if (existing == ExistingMember::replace) {
        edited = replace_member_value(*doc, member, *value);
      } else if (place == MemberPlace::first && object.first_child != member) {
        edited = move_member_first(*doc, r.node, member);
      } else {
        return std::string(text);
      }
    } else {
      edited = place == MemberPlace::first && object.count > 0
                 ? insert_member_first(*doc, r.node, escape_json(key), *value)
                 : insert_member(*doc, r.node, escape_json(key), *value);
    }
  } else {
    if (auto ok = creatable(*doc, pointer, *tokens, r); !ok) {
      return unexpected(ok.error());
    }
    const auto object = wrapped();
    if (!object) {
      return unexpected(object.error());
    }
    edited = insert_member(*doc, r.parent, escape_json(tokens->back().key), *object);
  }
  return checked(std::move(edited), *tokens, Kind::object);
}

std::optional<std::string>
edit_refusal(std::string_view text)
{
  auto checked = check_json(text);
  return checked ? std::move(checked).value() : checked.error();
}

Expected<std::optional<std::string>>
check_json(std::string_view text)
{
  const auto doc = scan(text);
  if (!doc) {
    return unexpected(doc.error());
  }
  size_t first = k_none;
  std::string reason;
  const auto consider = [&](size_t offset, std::string message) {
    if (offset < first) {
      const TextPosition p = position_of(text, offset);
      first = offset;
      reason = fmt::format("{} (line {}, column {})", message, p.line, p.column);
    }
  };
  for (size_t i = 0; i < doc->nodes.size(); ++i) {
    const Node& node = doc->nodes[i];
    if (node.kind == Kind::nonfinite) {
      consider(node.begin, fmt::format("contains {}, which is not JSON",
                                       text.substr(node.begin, node.end - node.begin)));
    }
    if (node.kind == Kind::number &&
        overflows_double(text.substr(node.begin, node.end - node.begin))) {
      consider(node.begin, fmt::format("contains {}, which is out of range for a double",
                                       text.substr(node.begin, node.end - node.begin)));
    }
    if (node.kind != Kind::object) {
      continue;
    }
    std::unordered_set<std::string> keys;
    for (size_t c = node.first_child; c != k_none; c = doc->nodes[c].next_sibling) {
      std::string key = decode_string(key_token(*doc, doc->nodes[c]));
      if (!keys.insert(key).second) {
        consider(doc->nodes[c].key_begin,
                 fmt::format("duplicate key {} in {}", escape_json(key), where(path_of(*doc, i))));
        break;
      }
    }
  }
  if (first == k_none) {
    return std::optional<std::string>{};
  }
  return std::optional<std::string>{std::move(reason)};
}

namespace {

// Calls f(begin, end) with the span of each element of the array text[open, close) (valid JSON,
// text[open] == '[', text[close - 1] == ']'), in order, from one scan that skips strings whole.
template<typename F>
void
for_each_element(std::string_view text, size_t open, size_t close, const F& f)
{
  size_t depth = 0;
  size_t begin = 0, end = 0;
  bool inside = false; // an element has begun and not yet ended at a comma
  for (size_t i = open + 1; i + 1 < close; ++i) {
    const char c = text[i];
    if (is_json_space(c)) {
      continue;
    }
    if (depth == 0 && c == ',') {
      f(begin, end);
      inside = false;
      continue;
    }
    if (!inside) {
      begin = i;
      inside = true;
    }
    if (c == '"') {
      i = std::min(string_token_end(text, i), close - 1);
    } else if (c == '[' || c == '{') {
      ++depth;
    } else if ((c == ']' || c == '}') && depth > 0) {
      --depth;
    }
    end = i + 1;
  }
  if (inside) {
    f(begin, end);
  }
}

} // namespace

Expected<std::string>
remove_from_string_array(std::string_view text, std::string_view pointer,
                         const std::vector<std::string>& entries)
{
  auto array = locate(text, pointer);
  if (!array) {
    return unexpected(array.error());
  }
  if (array->end - array->begin < 2 || text[array->begin] != '[') {
    return unexpected(fmt::format("{} is not an array", shown(pointer)));
  }
  // The elements are found by scanning the array itself, twice, keeping nothing per element: a
  // pointer per element rescans the whole text each time (minutes for a list of 50,000), and a
  // span or pointer per element is memory a hostile list of millions of elements multiplies.
  // A string element compares as its raw text without quotes, or decoded when it holds an
  // escape (the document was scanned whole, so every token is valid).
  const std::unordered_set<std::string_view> removed(entries.begin(), entries.end());
  const auto removes = [&](size_t begin, size_t end) {
    const std::string_view raw = text.substr(begin, end - begin);
    if (raw.size() < 2 || raw.front() != '"') {
      return false;
    }
    return raw.find('\\') == std::string_view::npos
             ? removed.contains(raw.substr(1, raw.size() - 2))
             : removed.contains(decode_string(raw));
  };
  // The layout to keep: between '[' and the first element; where the last element ends.
  bool first = true;
  bool any = false;
  size_t previous_end = array->begin + 1, last_end = 0;
  std::string_view first_gap;
  for_each_element(text, array->begin, array->end, [&](size_t begin, size_t end) {
    if (first) {
      first_gap = text.substr(previous_end, begin - previous_end);
      first = false;
    }
    any = any || removes(begin, end);
    previous_end = last_end = end;
  });
  if (!any) {
    return std::string(text);
  }
  // Each kept element with the separator run (comma included) that preceded it; the first kept
  // element takes the run that followed '['.
  std::string out(text.substr(0, array->begin + 1));
  size_t kept = 0;
  previous_end = array->begin + 1;
  for_each_element(text, array->begin, array->end, [&](size_t begin, size_t end) {
    const std::string_view gap = text.substr(previous_end, begin - previous_end);
    previous_end = end;
    if (removes(begin, end)) {
      return;
    }
    out += kept == 0 ? first_gap : gap;
    out += text.substr(begin, end - begin);
    ++kept;
  });
  const std::string_view closing = text.substr(last_end, array->end - 1 - last_end);
  if (kept > 0) {
    out += closing;
  }
  out += text.substr(array->end - 1);
  return out;
}

std::string
escape_json(std::string_view s)
{
  std::string out;
  append_json_string(out, s);
  return out;
}

void
append_json_string(std::string& out, std::string_view s)
{
  out += '"';
  size_t plain = 0; // start of the run not yet copied
  for (size_t i = 0; i < s.size(); ++i) {
    const char c = s[i];
    const auto u = static_cast<unsigned char>(c);
    if (u >= 0x80) {
      if (const size_t length = utf8_sequence(s, i); length > 0) {
        i += length - 1;
        continue;
      }
      // Not UTF-8 (a file name can be any bytes): U+FFFD, so the document stays valid JSON.
      out.append(s.substr(plain, i - plain));
      plain = i + 1;
      out += "\\ufffd";
      continue;
    }
    if (c != '"' && c != '\\' && u >= 0x20) {
      continue;
    }
    out.append(s.substr(plain, i - plain));
    plain = i + 1;
    switch (c) {
    case '"':
      out += "\\\"";
      break;
    case '\\':
      out += "\\\\";
      break;
    case '\b':
      out += "\\b";
      break;
    case '\f':
      out += "\\f";
      break;
    case '\n':
      out += "\\n";
      break;
    case '\r':
      out += "\\r";
      break;
    case '\t':
      out += "\\t";
      break;
    default:
      out += fmt::format("\\u{:04x}", static_cast<unsigned>(c));
      break;
    }
  }
  out.append(s.substr(plain));
  out += '"';
}

void
append_json_key(std::string& out, int indent, std::string_view key)
{
  out.append(static_cast<size_t>(indent), ' ');
  append_json_string(out, key);
  out += ": ";
}

void
append_json_object_start(std::string& out, int indent, std::string_view key)
{
  append_json_key(out, indent, key);
  out += "{\n";
}

void
append_json_member(std::string& out, int indent, std::string_view key, std::string_view value)
{
  append_json_key(out, indent, key);
  append_json_string(out, value);
}

void
append_json_array(std::string& out, int indent, size_t count,
                  const std::function<void(size_t)>& item)
{
  if (count == 0) {
    out += "[]";
    return;
  }
  out += "[\n";
  for (size_t i = 0; i < count; ++i) {
    out += i == 0 ? "" : ",\n";
    out.append(static_cast<size_t>(indent + 2), ' ');
    item(i);
  }
  out += '\n';
  out.append(static_cast<size_t>(indent), ' ');
  out += ']';
}

void
append_json_strings(std::string& out, int indent, const std::vector<std::string>& items)
{
  append_json_array(out, indent, items.size(),
                    [&](size_t i) { append_json_string(out, items[i]); });
}

size_t
string_token_end(std::string_view text, size_t open)
{
  const char* const begin = text.data() + open + 1;
  const char* const end = text.data() + text.size();
  for (const char* p = begin; p < end;) {
    const auto* quote = static_cast<const char*>(std::memchr(p, '"', static_cast<size_t>(end - p)));
    if (quote == nullptr) {
      break;
    }
    size_t backslashes = 0;
    for (const char* b = quote; b > begin && b[-1] == '\\'; --b) {
      ++backslashes;
    }
    if (backslashes % 2 == 0) {
      return static_cast<size_t>(quote - text.data());
    }
    p = quote + 1;
  }
  return text.size();
}

void
append_utf8(std::string& out, uint32_t code)
{
  if (code < 0x80) {
    out += static_cast<char>(code);
  } else if (code < 0x800) {
    out += static_cast<char>(0xC0 | (code >> 6));
    out += static_cast<char>(0x80 | (code & 0x3F));
  } else if (code < 0x10000) {
    out += static_cast<char>(0xE0 | (code >> 12));
    out += static_cast<char>(0x80 | ((code >> 6) & 0x3F));
    out += static_cast<char>(0x80 | (code & 0x3F));
  } else {
    out += static_cast<char>(0xF0 | (code >> 18));
    out += static_cast<char>(0x80 | ((code >> 12) & 0x3F));
    out += static_cast<char>(0x80 | ((code >> 6) & 0x3F));
    out += static_cast<char>(0x80 | (code & 0x3F));
  }
}

namespace {

int
hex_digit(char c)
{
  if (c >= '0' && c <= '9') {
    return c - '0';
  }
  if (c >= 'a' && c <= 'f') {
    return c - 'a' + 10;
  }
  if (c >= 'A' && c <= 'F') {
    return c - 'A' + 10;
  }
  return -1;
}

} // namespace

bool
read_hex4(std::string_view s, size_t i, uint32_t& code)
{
  if (i + 4 > s.size()) {
    return false;
  }
  code = 0;
  for (size_t k = 0; k < 4; ++k) {
    const int digit = hex_digit(s[i + k]);
    if (digit < 0) {
      return false;
    }
    code = code * 16 + static_cast<uint32_t>(digit);
  }
  return true;
}

} // namespace qcheck
