#include "qcheck/regex.hpp"

#include <algorithm>
#include <array>
#include <cassert>
#include <fmt/format.h>
#include <iterator>
#include <limits>
#include <unordered_set>
#include <utility>

// Text and pattern are UTF-8 and are matched code point by code point, so `.` and `[^x]` consume
// one character as in Python. Classes, `\b` and case folding are ASCII-only: the semantics are
// those of Python `re` with the re.ASCII flag, which equal the default ones on ASCII text.

namespace qcheck {

struct Regex::Program
{
  enum class Op : uint8_t
  {
    literal,      // arg: code point
    literal_fold, // arg: lower-case ASCII letter, matches either case
    any,          // any character except '\n'
    char_class,   // arg: index into classes
    split,        // continue at arg and at alt
    jump,         // continue at arg
    assertion,    // arg: Assertion; continue at the next instruction when it holds
    match,
  };

  struct Inst
  {
    Op op;
    uint32_t arg = 0;
    uint32_t alt = 0;
  };

  struct Range
  {
    uint32_t lo;
    uint32_t hi;
  };

  struct CharClass
  {
    std::array<uint64_t, 2> ascii{}; // membership of 0..127, negation applied
    std::vector<Range> wide;         // sorted ranges at or above 128, negation not applied
    bool negated = false;

    bool contains(uint32_t c) const
    {
      if (c < 128) {
        return (ascii[c >> 6] >> (c & 63)) & 1;
      }
      auto it = std::upper_bound(wide.begin(), wide.end(), c,
                                 [](uint32_t value, const Range& r) { return value < r.lo; });
      const bool inside = it != wide.begin() && c <= std::prev(it)->hi;
      return inside != negated;
    }
  };

  // What any matching text holds, read from the pattern's top level (nothing under (?i)).
  struct Literals
  {
    std::vector<std::string> runs; // runs of ASCII literals: each occurs in the text
    // runs.back() ends the pattern, before nothing or only end anchors: a fullmatch, or a
    // match ending at an anchor, ends with it (for `$` alone, or with it and a final newline).
    bool last_run_ends = false;
    bool anchored = false;
    bool newline_allowed = false;
  };

  std::vector<Inst> insts;
  std::vector<CharClass> classes;
  Literals literals;
};

namespace {

using Program = Regex::Program;
using Op = Program::Op;
using Range = Program::Range;

enum class Assertion : uint32_t
{
  begin,            // ^ and \A
  end_or_newline,   // $: end, or before a final '\n'
  end,              // \Z
  word_boundary,    // \b
  not_word_boundary // \B
};

constexpr size_t k_max_instructions = 20000;
constexpr size_t k_max_depth = 200;
// Python's MAXREPEAT: repetition counts must stay below it.
constexpr uint64_t k_max_repeat = 4294967295u;
constexpr uint32_t k_unbounded = std::numeric_limits<uint32_t>::max();
// Invalid UTF-8 bytes in the text decode to k_invalid_base + byte: no literal equals them.
constexpr uint32_t k_invalid_base = 0x110000;
constexpr uint32_t k_max_unit = k_invalid_base + 0xFF;
constexpr uint32_t k_none = std::numeric_limits<uint32_t>::max();

// Decodes the code point at text[pos] and sets `width`. Returns k_none on invalid UTF-8.
uint32_t
decode_utf8(std::string_view text, size_t pos, size_t& width)
{
  const auto byte = [&](size_t i) { return static_cast<uint8_t>(text[i]); };
  const uint8_t lead = byte(pos);
  width = 1;
  if (lead < 0x80) {
    return lead;
  }
  size_t length = 0;
  uint32_t cp = 0;
  uint32_t min = 0;
  if (lead >= 0xC2 && lead <= 0xDF) {
    length = 2;
    cp = lead & 0x1F;
    min = 0x80;
  } else if (lead >= 0xE0 && lead <= 0xEF) {
    length = 3;
    cp = lead & 0x0F;
    min = 0x800;
  } else if (lead >= 0xF0 && lead <= 0xF4) {
    length = 4;
    cp = lead & 0x07;
    min = 0x10000;
  } else {
    return k_none;
  }
  if (pos + length > text.size()) {
    return k_none;
  }
  for (size_t i = 1; i < length; ++i) {
    const uint8_t b = byte(pos + i);
    if ((b & 0xC0) != 0x80) {
      return k_none;
    }
    cp = (cp << 6) | (b & 0x3F);
  }
  if (cp < min || cp > 0x10FFFF || (cp >= 0xD800 && cp <= 0xDFFF)) {
    return k_none;
  }
  width = length;
  return cp;
}

bool
is_word_byte(char c)
{
  return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '_';
}

bool
is_ascii_letter(uint32_t c)
{
  return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z');
}

bool
is_digit(uint32_t c)
{
  return c >= '0' && c <= '9';
}

bool
is_octal_digit(uint32_t c)
{
  return c >= '0' && c <= '7';
}

int
hex_value(uint32_t c)
{
  if (c >= '0' && c <= '9') {
    return static_cast<int>(c - '0');
  }
  if (c >= 'a' && c <= 'f') {
    return static_cast<int>(c - 'a' + 10);
  }
  if (c >= 'A' && c <= 'F') {
    return static_cast<int>(c - 'A' + 10);
  }
  return -1;
}

uint32_t
ascii_lower(uint32_t c)
{
  return c >= 'A' && c <= 'Z' ? c + 32 : c;
}

// Sorts and merges ranges in place.
void
normalize(std::vector<Range>& ranges)
{
  std::sort(ranges.begin(), ranges.end(),
            [](const Range& a, const Range& b) { return a.lo < b.lo; });
  std::vector<Range> merged;
  for (const Range& r : ranges) {
    if (!merged.empty() && r.lo <= merged.back().hi + 1) {
      merged.back().hi = std::max(merged.back().hi, r.hi);
    } else {
      merged.push_back(r);
    }
  }
  ranges = std::move(merged);
}

// The complement of normalized ranges over every unit the text can produce.
std::vector<Range>
complement(const std::vector<Range>& ranges)
{
  std::vector<Range> out;
  uint32_t next = 0;
  for (const Range& r : ranges) {
    if (r.lo > next) {
      out.push_back({next, r.lo - 1});
    }
    next = r.hi + 1;
  }
  if (next <= k_max_unit) {
    out.push_back({next, k_max_unit});
  }
  return out;
}

// Ranges of \d \w \s (ASCII) and their upper-case negations.
std::vector<Range>
category_ranges(uint32_t letter)
{
  std::vector<Range> ranges;
  switch (ascii_lower(letter)) {
  case 'd':
    ranges = {{'0', '9'}};
    break;
  case 'w':
    ranges = {{'0', '9'}, {'A', 'Z'}, {'_', '_'}, {'a', 'z'}};
    break;
  default: // 's'
    ranges = {{'\t', '\r'}, {' ', ' '}};
    break;
  }
  return letter >= 'a' ? ranges : complement(ranges);
}

Program::CharClass
make_class(std::vector<Range> ranges, bool negated, bool fold_case)
{
  normalize(ranges);
  if (fold_case) {
    const size_t count = ranges.size();
    for (size_t i = 0; i < count; ++i) {
      const Range r = ranges[i];
      // Lower-case part shifted up to upper case, and upper-case part shifted down.
      if (r.lo <= 'z' && r.hi >= 'a') {
        ranges.push_back({std::max<uint32_t>(r.lo, 'a') - 32, std::min<uint32_t>(r.hi, 'z') - 32});
      }
      if (r.lo <= 'Z' && r.hi >= 'A') {
        ranges.push_back({std::max<uint32_t>(r.lo, 'A') + 32, std::min<uint32_t>(r.hi, 'Z') + 32});
      }
    }
    normalize(ranges);
  }
  Program::CharClass cls;
  cls.negated = negated;
  for (const Range& r : ranges) {
    for (uint32_t c = r.lo; c <= std::min(r.hi, 127u); ++c) {
      cls.ascii[c >> 6] |= uint64_t{1} << (c & 63);
    }
    if (r.hi >= 128) {
      cls.wide.push_back({std::max(r.lo, 128u), r.hi});
    }
  }
  if (negated) {
    cls.ascii[0] = ~cls.ascii[0];
    cls.ascii[1] = ~cls.ascii[1];
  }
  return cls;
}

std::string
too_large_message()
{
  return fmt::format(
    "pattern is too large after expanding repetitions (more than {} NFA instructions)",
    k_max_instructions);
}

enum class NodeKind : uint8_t
{
  empty,
  literal,
  any,
  char_class,
  assertion,
  concat,
  alternate,
  repeat,
};

struct Node
{
  NodeKind kind = NodeKind::empty;
  uint32_t value = 0; // literal code point, class index or Assertion
  uint32_t min = 0;   // repeat bounds; max may be k_unbounded
  uint32_t max = 0;
  uint32_t size = 0; // instructions it compiles to, capped at k_max_instructions + 1
  std::vector<uint32_t> children;
};

// What the last item of a sequence is, for the "nothing to repeat" and "multiple repeat" rules.
enum class ItemKind
{
  atom,
  assertion,
  repeat
};

constexpr uint32_t k_failed = std::numeric_limits<uint32_t>::max();
constexpr uint32_t k_skipped = k_failed - 1; // comment or flag group: no item

// Recursive-descent parser producing a syntax tree; mirrors CPython's sre_parse.
class Parser
{
public:
  Parser(std::string_view pattern, Program& program) : m_pattern(pattern), m_program(program)
  {
    m_nodes.reserve(pattern.size() + 2); // about a node per character
  }

  const std::string& error() const { return m_error; }
  const std::vector<Node>& nodes() const { return m_nodes; }
  bool fold_case() const { return m_fold_case; }

  // Returns the root node, or k_failed with error() set.
  uint32_t parse()
  {
    if (!decode()) {
      return k_failed;
    }
    const uint32_t root = parse_alternation(0);
    if (root == k_failed) {
      return k_failed;
    }
    if (m_pos < m_units.size()) {
      return fail(m_pos, "unbalanced parenthesis");
    }
    return root;
  }

private:
  bool decode()
  {
    size_t pos = 0;
    while (pos < m_pattern.size()) {
      size_t width = 0;
      const uint32_t cp = decode_utf8(m_pattern, pos, width);
      if (cp == k_none) {
        m_error = fmt::format("syntax error at offset {}: invalid UTF-8", pos);
        return false;
      }
      m_units.push_back(cp);
      m_offsets.push_back(pos);
      pos += width;
    }
    m_offsets.push_back(pos);
    return true;
  }

  bool at_end() const { return m_pos >= m_units.size(); }
  uint32_t peek() const { return at_end() ? k_none : m_units[m_pos]; }
  uint32_t next() { return m_units[m_pos++]; }

  bool accept(uint32_t c)
  {
    if (peek() == c) {
      ++m_pos;
      return true;
    }
    return false;
  }

  // Pattern text of units [from, to).
  std::string_view text(size_t from, size_t to) const
  {
    return m_pattern.substr(m_offsets[from], m_offsets[to] - m_offsets[from]);
  }

  // Pattern text of units [from, to) for a message: control characters escaped, one line.
  std::string shown(size_t from, size_t to) const
  {
    std::string out;
    for (char c : text(from, to)) {
      if (c == '\n') {
        out += "\\n";
      } else if (c == '\t') {
        out += "\\t";
      } else if (static_cast<uint8_t>(c) < 0x20 || c == 0x7F) {
        out += fmt::format("\\x{:02x}", static_cast<uint8_t>(c));
      } else {
        out.push_back(c);
      }
    }
    return out;
  }

  uint32_t fail(size_t pos, std::string_view message)
  {
    m_error = fmt::format("syntax error at offset {}: {}", m_offsets[pos], message);
    return k_failed;
  }

  uint32_t unsupported(size_t pos, std::string_view what)
  {
    m_error = fmt::format("unsupported construct at offset {}: {}", m_offsets[pos], what);
    return k_failed;
  }

  uint32_t add_node(Node node)
  {
    if (node.size > k_max_instructions) {
      m_error = too_large_message();
      return k_failed;
    }
    m_nodes.push_back(std::move(node));
    return static_cast<uint32_t>(m_nodes.size() - 1);
  }

  uint32_t add_leaf(NodeKind kind, uint32_t value)
  {
    Node node;
    node.kind = kind;
    node.value = value;
    node.size = 1;
    return add_node(std::move(node));
  }

  uint32_t add_class(std::vector<Range> ranges, bool negated)
  {
    m_program.classes.push_back(make_class(std::move(ranges), negated, m_fold_case));
    return add_leaf(NodeKind::char_class, static_cast<uint32_t>(m_program.classes.size() - 1));
  }

  uint32_t parse_alternation(size_t depth)
  {
    std::vector<uint32_t> branches;
    do {
      const uint32_t branch = parse_sequence(depth, branches.empty());
      if (branch == k_failed) {
        return k_failed;
      }
      branches.push_back(branch);
    } while (accept('|'));
    if (branches.size() == 1) {
      return branches[0];
    }
    Node node;
    node.kind = NodeKind::alternate;
    uint64_t size = 2 * (branches.size() - 1);
    for (uint32_t b : branches) {
      size += m_nodes[b].size;
    }
    node.size = static_cast<uint32_t>(std::min<uint64_t>(size, k_max_instructions + 1));
    node.children = std::move(branches);
    return add_node(std::move(node));
  }

  uint32_t parse_sequence(size_t depth, bool first_branch)
  {
    std::vector<uint32_t> items;
    ItemKind last = ItemKind::atom;
    while (!at_end() && peek() != '|' && peek() != ')') {
      const size_t start = m_pos;
      const uint32_t c = next();
      uint32_t item = k_failed;
      ItemKind kind = ItemKind::atom;
      switch (c) {
      case '\\':
        item = parse_escape(start, kind);
        break;
      case '[':
        item = parse_class(start);
        break;
      case '.':
        item = add_leaf(NodeKind::any, 0);
        break;
      case '^':
        item = add_leaf(NodeKind::assertion, static_cast<uint32_t>(Assertion::begin));
        kind = ItemKind::assertion;
        break;
      case '$':
        item = add_leaf(NodeKind::assertion, static_cast<uint32_t>(Assertion::end_or_newline));
        kind = ItemKind::assertion;
        break;
      case '(':
        item = parse_group(start, depth, first_branch && depth == 0 && items.empty());
        break;
      case '*':
      case '+':
      case '?':
      case '{': {
        uint32_t min = 0;
        uint32_t max = 0;
        bool literal = false;
        if (!parse_quantifier(start, min, max, literal)) {
          return k_failed;
        }
        if (literal) {
          item = add_leaf(NodeKind::literal, '{');
          break;
        }
        if (items.empty() || last == ItemKind::assertion) {
          return fail(start, "nothing to repeat");
        }
        if (last == ItemKind::repeat) {
          return fail(start, "multiple repeat");
        }
        if (peek() == '+') {
          return unsupported(start,
                             fmt::format("possessive quantifier '{}+'", shown(start, m_pos)));
        }
        accept('?'); // lazy: the same boolean result as greedy
        const uint32_t repeated = add_repeat(items.back(), min, max);
        if (repeated == k_failed) {
          return k_failed;
        }
        items.back() = repeated;
        last = ItemKind::repeat;
        continue;
      }
      default:
        item = add_leaf(NodeKind::literal, c);
        break;
      }
      if (item == k_failed) {
        return k_failed;
      }
      if (item != k_skipped) {
        items.push_back(item);
        last = kind;
      }
    }
    return add_concat(std::move(items));
  }

  // Parses the quantifier whose first character is at `start`. A '{' that does not form one
  // sets `literal` and leaves the position just after the '{'.
  bool parse_quantifier(size_t start, uint32_t& min, uint32_t& max, bool& literal)
  {
    switch (m_units[start]) {
    case '*':
      min = 0;
      max = k_unbounded;
      return true;
    case '+':
      min = 1;
      max = k_unbounded;
      return true;
    case '?':
      min = 0;
      max = 1;
      return true;
    default:
      break;
    }
    if (peek() == '}') {
      literal = true;
      return true;
    }
    const auto read_number = [&](bool& present) {
      uint64_t value = 0;
      present = false;
      while (is_digit(peek())) {
        value = std::min<uint64_t>(value * 10 + (next() - '0'), k_max_repeat);
        present = true;
      }
      return value;
    };
    bool has_lo = false;
    bool has_hi = false;
    const uint64_t lo = read_number(has_lo);
    uint64_t hi = lo;
    has_hi = has_lo;
    if (accept(',')) {
      hi = read_number(has_hi);
    }
    if (!accept('}')) {
      literal = true;
      m_pos = start + 1;
      return true;
    }
    if (lo >= k_max_repeat || hi >= k_max_repeat) {
      fail(start, "the repetition number is too large");
      return false;
    }
    min = static_cast<uint32_t>(lo);
    max = has_hi ? static_cast<uint32_t>(hi) : k_unbounded;
    if (max < min) {
      fail(start, "min repeat greater than max repeat");
      return false;
    }
    return true;
  }

  uint32_t add_repeat(uint32_t child, uint32_t min, uint32_t max)
  {
    const uint64_t body = m_nodes[child].size;
    uint64_t size = 0;
    if (body > 0) {
      size = uint64_t{min} * body;
      if (max == k_unbounded) {
        size += min > 0 ? 1 : body + 2;
      } else {
        size += uint64_t{max - min} * (body + 1);
      }
    }
    Node node;
    node.kind = NodeKind::repeat;
    node.min = min;
    node.max = max;
    node.size = static_cast<uint32_t>(std::min<uint64_t>(size, k_max_instructions + 1));
    node.children = {child};
    return add_node(std::move(node));
  }

  // Drops items that compile to nothing; a single item stands for itself.
  uint32_t add_concat(std::vector<uint32_t> items)
  {
    std::erase_if(items, [&](uint32_t i) { return m_nodes[i].size == 0; });
    if (items.size() == 1) {
      return items[0];
    }
    Node node;
    node.kind = items.empty() ? NodeKind::empty : NodeKind::concat;
    uint64_t size = 0;
    for (uint32_t i : items) {
      size += m_nodes[i].size;
    }
    node.size = static_cast<uint32_t>(std::min<uint64_t>(size, k_max_instructions + 1));
    node.children = std::move(items);
    return add_node(std::move(node));
  }

  // After '(' at `start`.
  uint32_t parse_group(size_t start, size_t depth, bool may_set_flags)
  {
    if (depth >= k_max_depth) {
      return fail(start, fmt::format("groups are nested more than {} levels deep", k_max_depth));
    }
    if (accept('?')) {
      if (at_end()) {
        return fail(m_pos, "unexpected end of pattern");
      }
      const size_t at = m_pos;
      const uint32_t c = next();
      switch (c) {
      case 'P':
        if (accept('<')) {
          if (!parse_group_name()) {
            return k_failed;
          }
          break;
        }
        if (accept('=')) {
          return unsupported(start, "named back-reference '(?P='");
        }
        if (at_end()) {
          return fail(m_pos, "unexpected end of pattern");
        }
        ++m_pos;
        return fail(at - 1, fmt::format("unknown extension ?{}", shown(at, m_pos)));
      case ':':
        break;
      case '#':
        return skip_comment(start);
      case '=':
        return unsupported(start, "look-ahead '(?='");
      case '!':
        return unsupported(start, "negative look-ahead '(?!'");
      case '<':
        if (accept('=')) {
          return unsupported(start, "look-behind '(?<='");
        }
        if (accept('!')) {
          return unsupported(start, "negative look-behind '(?<!'");
        }
        if (at_end()) {
          return fail(m_pos, "unexpected end of pattern");
        }
        ++m_pos;
        return fail(at - 1, fmt::format("unknown extension ?{}", shown(at, m_pos)));
      case '(':
        return unsupported(start, "conditional '(?('");
      case '>':
        return unsupported(start, "atomic group '(?>'");
      default:
        if (is_flag(c) || c == '-') {
          --m_pos;
          return parse_flags(start, may_set_flags);
        }
        return fail(at - 1, fmt::format("unknown extension ?{}", shown(at, m_pos)));
      }
    }
    const uint32_t body = parse_alternation(depth + 1);
    if (body == k_failed) {
      return k_failed;
    }
    if (!accept(')')) {
      return fail(start, "missing ), unterminated subpattern");
    }
    return body;
  }

  // After '(?P<': the name, its '>' and a check against earlier names.
  bool parse_group_name()
  {
    const size_t begin = m_pos;
    while (!at_end() && peek() != '>') {
      ++m_pos;
    }
    if (m_pos == begin) {
      fail(begin, "missing group name");
      return false;
    }
    if (at_end()) {
      fail(begin, "missing >, unterminated name");
      return false;
    }
    const std::string_view name = text(begin, m_pos);
    // Identifier: a letter or '_' first, then letters, digits or '_'; non-ASCII is accepted.
    bool valid = !is_digit(m_units[begin]);
    for (size_t i = begin; i < m_pos; ++i) {
      const uint32_t c = m_units[i];
      valid = valid && (is_ascii_letter(c) || is_digit(c) || c == '_' || c >= 0x80);
    }
    if (!valid) {
      fail(begin, fmt::format("bad character in group name '{}'", shown(begin, m_pos)));
      return false;
    }
    if (!m_names.insert(name).second) {
      fail(begin, fmt::format("redefinition of group name '{}'", shown(begin, m_pos)));
      return false;
    }
    ++m_pos; // '>'
    return true;
  }

  // After '(?#': everything up to the first unescaped ')'.
  uint32_t skip_comment(size_t start)
  {
    while (!at_end()) {
      const uint32_t c = next();
      if (c == ')') {
        return k_skipped;
      }
      if (c == '\\') {
        if (at_end()) {
          return fail(m_pos - 1, "bad escape (end of pattern)");
        }
        ++m_pos;
      }
    }
    return fail(start, "missing ), unterminated comment");
  }

  // CPython says "unknown flag" for a letter and `fallback` for anything else.
  static const char* flag_error(uint32_t c, const char* fallback)
  {
    return is_ascii_letter(c) || c >= 0x80 ? "unknown flag" : fallback;
  }

  static bool is_flag(uint32_t c)
  {
    return c == 'a' || c == 'i' || c == 'L' || c == 'm' || c == 's' || c == 'u' || c == 'x';
  }

  // At the first flag letter (or '-') after '(?'. Only a leading `(?i)` is supported.
  uint32_t parse_flags(size_t start, bool may_set_flags)
  {
    std::string added;
    std::string removed;
    uint32_t c = next();
    if (c != '-') {
      while (true) {
        if (c == 'L') {
          return fail(m_pos - 1, "bad inline flag: cannot use 'L' flag with a str pattern");
        }
        added.push_back(static_cast<char>(c));
        if (added.find('a') != std::string::npos && added.find('u') != std::string::npos) {
          return fail(m_pos - 1, "bad inline flag: flags 'a', 'u' and 'L' are incompatible");
        }
        if (at_end()) {
          return fail(m_pos, "missing -, : or )");
        }
        c = next();
        if (c == ')' || c == '-' || c == ':') {
          break;
        }
        if (!is_flag(c)) {
          return fail(m_pos - 1, flag_error(c, "missing -, : or )"));
        }
      }
    }
    if (c == ')') {
      if (!may_set_flags) {
        return fail(start, "global flags not at the start of the expression");
      }
      if (added.find_first_not_of('i') != std::string::npos) {
        const std::string flags = shown(start, m_pos);
        return unsupported(
          start, fmt::format("inline flag '{}'; only a leading '(?i)' is supported", flags));
      }
      m_fold_case = true;
      return k_skipped;
    }
    if (c == '-') {
      if (at_end()) {
        return fail(m_pos, "missing flag");
      }
      c = next();
      if (!is_flag(c)) {
        return fail(m_pos - 1, flag_error(c, "missing flag"));
      }
      while (true) {
        if (c == 'a' || c == 'u' || c == 'L') {
          return fail(m_pos - 1, "bad inline flag: cannot turn off flags 'a', 'u' and 'L'");
        }
        removed.push_back(static_cast<char>(c));
        if (at_end()) {
          return fail(m_pos, "missing :");
        }
        c = next();
        if (c == ':') {
          break;
        }
        if (!is_flag(c)) {
          return fail(m_pos - 1, flag_error(c, "missing :"));
        }
      }
    }
    for (char f : added) {
      if (removed.find(f) != std::string::npos) {
        return fail(start, "bad inline flag: flag turned on and off");
      }
    }
    return unsupported(start, fmt::format("scoped inline flags '{}'", shown(start, m_pos)));
  }

  // Reads up to `count` hex digits after `\x`, `\u` or `\U` at `start`; all are required.
  bool read_hex(size_t start, size_t count, uint32_t& value)
  {
    value = 0;
    size_t digits = 0;
    while (digits < count && hex_value(peek()) >= 0) {
      value = value * 16 + static_cast<uint32_t>(hex_value(next()));
      ++digits;
    }
    if (digits != count) {
      fail(start, fmt::format("incomplete escape {}", shown(start, m_pos)));
      return false;
    }
    if (value > 0x10FFFF) {
      fail(start, fmt::format("bad escape {}", shown(start, m_pos)));
      return false;
    }
    return true;
  }

  // Escapes that mean one character in and out of classes. Returns false when `c` is not one
  // of them; sets `failed` on a malformed escape.
  bool simple_escape(size_t start, uint32_t c, uint32_t& value, bool& failed)
  {
    switch (c) {
    case 'a':
      value = 7;
      return true;
    case 'f':
      value = 12;
      return true;
    case 'n':
      value = 10;
      return true;
    case 'r':
      value = 13;
      return true;
    case 't':
      value = 9;
      return true;
    case 'v':
      value = 11;
      return true;
    case 'x':
    case 'u':
    case 'U':
      failed = !read_hex(start, c == 'x' ? 2 : c == 'u' ? 4 : 8, value);
      return true;
    default:
      return false;
    }
  }

  // After '\' at `start`, outside a class.
  uint32_t parse_escape(size_t start, ItemKind& kind)
  {
    if (at_end()) {
      return fail(start, "bad escape (end of pattern)");
    }
    const uint32_t c = next();
    const auto assertion = [&](Assertion a) {
      kind = ItemKind::assertion;
      return add_leaf(NodeKind::assertion, static_cast<uint32_t>(a));
    };
    switch (c) {
    case 'A':
      return assertion(Assertion::begin);
    case 'Z':
      return assertion(Assertion::end);
    case 'b':
      return assertion(Assertion::word_boundary);
    case 'B':
      return assertion(Assertion::not_word_boundary);
    case 'd':
    case 'D':
    case 's':
    case 'S':
    case 'w':
    case 'W':
      return add_class(category_ranges(c), false);
    case 'N':
      return unsupported(start, "named Unicode escape '\\N'");
    default:
      break;
    }
    uint32_t value = 0;
    bool failed = false;
    if (simple_escape(start, c, value, failed)) {
      return failed ? k_failed : add_literal(value);
    }
    if (c == '0') {
      value = 0;
      for (int i = 0; i < 2 && is_octal_digit(peek()); ++i) {
        value = value * 8 + (next() - '0');
      }
      return add_literal(value);
    }
    if (is_digit(c)) {
      // Three octal digits make an octal escape; anything else is a group reference.
      if (is_digit(peek())) {
        const uint32_t second = next();
        if (is_octal_digit(c) && is_octal_digit(second) && is_octal_digit(peek())) {
          value = ((c - '0') * 8 + (second - '0')) * 8 + (next() - '0');
          if (value > 0377) {
            return fail(start, fmt::format("octal escape value {} outside of range 0-0o377",
                                           shown(start, m_pos)));
          }
          return add_literal(value);
        }
      }
      return unsupported(start, fmt::format("back-reference '{}'", shown(start, m_pos)));
    }
    if (is_ascii_letter(c)) {
      return fail(start, fmt::format("bad escape {}", shown(start, m_pos)));
    }
    return add_literal(c);
  }

  uint32_t add_literal(uint32_t c) { return add_leaf(NodeKind::literal, c); }

  // One member of a class after its first unit (at `start`) was read: a character, or the
  // ranges of a category escape in `ranges` with `is_set`.
  bool parse_class_item(size_t start, uint32_t c, uint32_t& value, std::vector<Range>& ranges,
                        bool& is_set)
  {
    is_set = false;
    if (c != '\\') {
      value = c;
      return true;
    }
    if (at_end()) {
      fail(start, "bad escape (end of pattern)");
      return false;
    }
    c = next();
    bool failed = false;
    if (simple_escape(start, c, value, failed)) {
      return !failed;
    }
    switch (c) {
    case 'b':
      value = 8;
      return true;
    case 'd':
    case 'D':
    case 's':
    case 'S':
    case 'w':
    case 'W':
      ranges = category_ranges(c);
      is_set = true;
      return true;
    case 'N':
      unsupported(start, "named Unicode escape '\\N'");
      return false;
    default:
      break;
    }
    if (is_octal_digit(c)) {
      value = c - '0';
      for (int i = 0; i < 2 && is_octal_digit(peek()); ++i) {
        value = value * 8 + (next() - '0');
      }
      if (value > 0377) {
        fail(start,
             fmt::format("octal escape value {} outside of range 0-0o377", shown(start, m_pos)));
        return false;
      }
      return true;
    }
    if (is_digit(c) || is_ascii_letter(c)) {
      fail(start, fmt::format("bad escape {}", shown(start, m_pos)));
      return false;
    }
    value = c;
    return true;
  }

  // After '[' at `start`.
  uint32_t parse_class(size_t start)
  {
    const bool negated = accept('^');
    std::vector<Range> ranges;
    bool empty = true;
    while (true) {
      if (at_end()) {
        return fail(start, "unterminated character set");
      }
      const size_t first = m_pos;
      const uint32_t c = next();
      if (c == ']' && !empty) {
        break;
      }
      empty = false;
      uint32_t lo = 0;
      std::vector<Range> set;
      bool lo_is_set = false;
      if (!parse_class_item(first, c, lo, set, lo_is_set)) {
        return k_failed;
      }
      const auto add_first = [&] {
        if (lo_is_set) {
          ranges.insert(ranges.end(), set.begin(), set.end());
        } else {
          ranges.push_back({lo, lo});
        }
      };
      if (!accept('-')) {
        add_first();
        continue;
      }
      if (at_end()) {
        return fail(start, "unterminated character set");
      }
      const size_t second = m_pos;
      const uint32_t d = next();
      if (d == ']') {
        add_first();
        ranges.push_back({'-', '-'});
        break;
      }
      uint32_t hi = 0;
      bool hi_is_set = false;
      if (!parse_class_item(second, d, hi, set, hi_is_set)) {
        return k_failed;
      }
      if (lo_is_set || hi_is_set || hi < lo) {
        return fail(first, fmt::format("bad character range {}", shown(first, m_pos)));
      }
      ranges.push_back({lo, hi});
    }
    return add_class(std::move(ranges), negated);
  }

  std::string_view m_pattern;
  Program& m_program;
  std::vector<uint32_t> m_units; // code points of the pattern
  std::vector<size_t> m_offsets; // byte offset of each unit, plus the pattern size
  size_t m_pos = 0;
  std::vector<Node> m_nodes;
  std::unordered_set<std::string_view> m_names; // group names seen so far
  bool m_fold_case = false;
  std::string m_error;
};

// Emits a Thompson NFA for a syntax tree whose sizes are known to fit.
class Emitter
{
public:
  Emitter(const std::vector<Node>& nodes, bool fold_case, std::vector<Program::Inst>& out)
    : m_nodes(nodes), m_fold_case(fold_case), m_out(out)
  {
  }

  void emit(uint32_t index)
  {
    const Node& node = m_nodes[index];
    if (node.size == 0) {
      return;
    }
    switch (node.kind) {
    case NodeKind::empty:
      break;
    case NodeKind::literal:
      if (m_fold_case && is_ascii_letter(node.value)) {
        push(Op::literal_fold, ascii_lower(node.value));
      } else {
        push(Op::literal, node.value);
      }
      break;
    case NodeKind::any:
      push(Op::any);
      break;
    case NodeKind::char_class:
      push(Op::char_class, node.value);
      break;
    case NodeKind::assertion:
      push(Op::assertion, node.value);
      break;
    case NodeKind::concat:
      for (uint32_t child : node.children) {
        emit(child);
      }
      break;
    case NodeKind::alternate:
      emit_alternate(node);
      break;
    case NodeKind::repeat:
      emit_repeat(node);
      break;
    }
  }

private:
  uint32_t push(Op op, uint32_t arg = 0, uint32_t alt = 0)
  {
    m_out.push_back({op, arg, alt});
    return here() - 1;
  }

  uint32_t here() const { return static_cast<uint32_t>(m_out.size()); }

  void emit_alternate(const Node& node)
  {
    std::vector<uint32_t> jumps;
    for (size_t i = 0; i < node.children.size(); ++i) {
      if (i + 1 == node.children.size()) {
        emit(node.children[i]);
        break;
      }
      const uint32_t split = push(Op::split, here() + 1);
      emit(node.children[i]);
      jumps.push_back(push(Op::jump));
      m_out[split].alt = here();
    }
    for (uint32_t jump : jumps) {
      m_out[jump].arg = here();
    }
  }

  void emit_repeat(const Node& node)
  {
    const uint32_t child = node.children[0];
    for (uint32_t i = 0; i < node.min; ++i) {
      const uint32_t start = here();
      emit(child);
      if (i + 1 == node.min && node.max == k_unbounded) {
        push(Op::split, start, here() + 1); // x+
      }
    }
    if (node.max == k_unbounded) {
      if (node.min == 0) {
        const uint32_t split = push(Op::split, here() + 1); // x*
        emit(child);
        push(Op::jump, split);
        m_out[split].alt = here();
      }
      return;
    }
    // Optional copies, each skipping to the end: x{0,3} = (x(x(x)?)?)?.
    std::vector<uint32_t> splits;
    for (uint32_t i = node.min; i < node.max; ++i) {
      splits.push_back(push(Op::split, here() + 1));
      emit(child);
    }
    for (uint32_t split : splits) {
      m_out[split].alt = here();
    }
  }

  const std::vector<Node>& m_nodes;
  bool m_fold_case;
  std::vector<Program::Inst>& m_out;
};

// A set of instruction indexes with O(1) insert, lookup and clear.
class StateSet
{
public:
  explicit StateSet(size_t capacity) : m_sparse(capacity), m_dense(capacity) {}

  bool contains(uint32_t pc) const
  {
    const uint32_t i = m_sparse[pc];
    return i < m_size && m_dense[i] == pc;
  }
  void insert(uint32_t pc)
  {
    m_sparse[pc] = m_size;
    m_dense[m_size++] = pc;
  }
  void clear() { m_size = 0; }
  bool empty() const { return m_size == 0; }
  uint32_t size() const { return m_size; }
  uint32_t operator[](uint32_t i) const { return m_dense[i]; }

private:
  std::vector<uint32_t> m_sparse;
  std::vector<uint32_t> m_dense;
  uint32_t m_size = 0;
};

bool
assertion_holds(Assertion assertion, std::string_view text, size_t pos)
{
  switch (assertion) {
  case Assertion::begin:
    return pos == 0;
  case Assertion::end_or_newline:
    return pos == text.size() || (pos + 1 == text.size() && text[pos] == '\n');
  case Assertion::end:
    return pos == text.size();
  case Assertion::word_boundary:
  case Assertion::not_word_boundary: {
    // As in CPython, neither matches in an empty string.
    if (text.empty()) {
      return false;
    }
    const bool before = pos > 0 && is_word_byte(text[pos - 1]);
    const bool after = pos < text.size() && is_word_byte(text[pos]);
    return (before != after) == (assertion == Assertion::word_boundary);
  }
  }
  return false;
}

// Adds `pc` and every state reachable from it without consuming input at `pos`. Returns true
// when the match state is reached.
bool
add_closure(const Program& program, StateSet& set, std::vector<uint32_t>& stack, uint32_t pc,
            std::string_view text, size_t pos)
{
  bool matched = false;
  stack.push_back(pc);
  while (!stack.empty()) {
    pc = stack.back();
    stack.pop_back();
    if (set.contains(pc)) {
      continue;
    }
    set.insert(pc);
    const Program::Inst& inst = program.insts[pc];
    switch (inst.op) {
    case Op::jump:
      stack.push_back(inst.arg);
      break;
    case Op::split:
      stack.push_back(inst.alt);
      stack.push_back(inst.arg);
      break;
    case Op::assertion:
      if (assertion_holds(static_cast<Assertion>(inst.arg), text, pos)) {
        stack.push_back(pc + 1);
      }
      break;
    case Op::match:
      matched = true;
      break;
    default:
      break;
    }
  }
  return matched;
}

bool
consumes(const Program& program, const Program::Inst& inst, uint32_t c)
{
  switch (inst.op) {
  case Op::literal:
    return c == inst.arg;
  case Op::literal_fold:
    return ascii_lower(c) == inst.arg;
  case Op::any:
    return c != '\n';
  case Op::char_class:
    return program.classes[inst.arg].contains(c);
  default:
    return false;
  }
}

// Program::Literals of a pattern's syntax tree.
Program::Literals
literals_of(const std::vector<Node>& nodes, uint32_t root)
{
  const Node& top = nodes[root];
  const std::vector<uint32_t> items =
    top.kind == NodeKind::concat ? top.children : std::vector<uint32_t>{root};
  const auto ascii = [&](uint32_t i) {
    return nodes[i].kind == NodeKind::literal && nodes[i].value < 0x80;
  };
  const auto anchor = [&](uint32_t i) {
    return nodes[i].kind == NodeKind::assertion &&
           (nodes[i].value == static_cast<uint32_t>(Assertion::end) ||
            nodes[i].value == static_cast<uint32_t>(Assertion::end_or_newline));
  };
  Program::Literals out;
  std::string run;
  for (const uint32_t i : items) {
    if (ascii(i)) {
      run.push_back(static_cast<char>(nodes[i].value));
    } else if (!run.empty()) {
      out.runs.push_back(std::move(run));
      run.clear();
    }
  }
  if (!run.empty()) {
    out.runs.push_back(std::move(run));
  }
  size_t end = items.size();
  bool only_dollar = true;
  while (end > 0 && anchor(items[end - 1])) {
    out.anchored = true;
    only_dollar = only_dollar &&
                  nodes[items[end - 1]].value == static_cast<uint32_t>(Assertion::end_or_newline);
    --end;
  }
  out.newline_allowed = out.anchored && only_dollar;
  out.last_run_ends = end > 0 && ascii(items[end - 1]);
  return out;
}

} // namespace

Expected<Regex>
Regex::compile(std::string_view pattern)
{
  auto program = std::make_shared<Program>();
  Parser parser(pattern, *program);
  const uint32_t root = parser.parse();
  if (root == k_failed) {
    return unexpected(parser.error());
  }
  const size_t size = parser.nodes()[root].size + 1;
  if (size > k_max_instructions) {
    return unexpected(too_large_message());
  }
  program->insts.reserve(size);
  Emitter(parser.nodes(), parser.fold_case(), program->insts).emit(root);
  program->insts.push_back({Op::match, 0, 0});
  if (!parser.fold_case()) {
    program->literals = literals_of(parser.nodes(), root);
  }
  assert(program->insts.size() == size);
  Regex regex;
  regex.m_pattern = std::string(pattern);
  regex.m_program = std::move(program);
  return regex;
}

bool
Regex::match(std::string_view text) const
{
  return run(text, Mode::match);
}

bool
Regex::fullmatch(std::string_view text) const
{
  return run(text, Mode::fullmatch);
}

bool
Regex::search(std::string_view text) const
{
  return run(text, Mode::search);
}

bool
Regex::may_match(std::string_view text, Mode mode) const
{
  const Program::Literals& literals = m_program->literals;
  for (const std::string& run : literals.runs) {
    if (text.find(run) == std::string_view::npos) {
      return false;
    }
  }
  if (!literals.last_run_ends || (mode != Mode::fullmatch && !literals.anchored)) {
    return true;
  }
  const std::string& last = literals.runs.back();
  if (text.ends_with(last)) {
    return true;
  }
  // `$` also holds before a final newline, except in a fullmatch, which must consume it.
  return mode != Mode::fullmatch && literals.newline_allowed && text.ends_with('\n') &&
         text.substr(0, text.size() - 1).ends_with(last);
}

// Pike-style simulation: one pass over the text, each state visited at most once per position.
bool
Regex::run(std::string_view text, Mode mode) const
{
  if (!m_program || !may_match(text, mode)) {
    return false;
  }
  const Program& program = *m_program;
  const size_t count = program.insts.size();
  StateSet current(count);
  StateSet following(count);
  std::vector<uint32_t> stack;
  stack.reserve(count);
  bool matched = add_closure(program, current, stack, 0, text, 0);
  size_t pos = 0;
  while (true) {
    if (matched && (mode != Mode::fullmatch || pos == text.size())) {
      return true;
    }
    if (pos == text.size() || (current.empty() && mode != Mode::search)) {
      return false;
    }
    size_t width = 1;
    uint32_t c = decode_utf8(text, pos, width);
    if (c == k_none) {
      c = k_invalid_base + static_cast<uint8_t>(text[pos]);
    }
    const size_t after = pos + width;
    following.clear();
    matched = false;
    for (uint32_t i = 0; i < current.size(); ++i) {
      const uint32_t pc = current[i];
      if (consumes(program, program.insts[pc], c)) {
        matched = add_closure(program, following, stack, pc + 1, text, after) || matched;
      }
    }
    std::swap(current, following);
    pos = after;
    if (mode == Mode::search) {
      matched = add_closure(program, current, stack, 0, text, pos) || matched;
    }
  }
}

} // namespace qcheck
