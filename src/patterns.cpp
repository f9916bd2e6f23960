#include "qcheck/patterns.hpp"

#include <algorithm>
#include <array>
#include <bit>
#include <cctype>
#include <cstring>

#if defined(__SSE2__)
#include <emmintrin.h>
#endif

namespace qcheck {

namespace {

// Matches one bracket expression starting at pattern[p] == '['. Sets `end` past the closing
// bracket. Returns false in `valid` when there is no closing bracket (then '[' is literal).
bool
match_bracket(std::string_view pattern, size_t p, char c, size_t& end, bool& valid)
{
  size_t i = p + 1;
  bool negate = false;
  if (i < pattern.size() && pattern[i] == '!') {
    negate = true;
    ++i;
  }
  const size_t first = i;
  // A ']' right after '[' or '[!' is a literal member.
  if (i < pattern.size() && pattern[i] == ']') {
    ++i;
  }
  while (i < pattern.size() && pattern[i] != ']') {
    ++i;
  }
  if (i >= pattern.size()) {
    valid = false;
    return false;
  }
  valid = true;
  end = i + 1;
  bool found = false;
  for (size_t j = first; j < i; ++j) {
    if (j + 2 < i && pattern[j + 1] == '-') {
      if (pattern[j] <= c && c <= pattern[j + 2]) {
        found = true;
      }
      j += 2;
    } else if (pattern[j] == c) {
      found = true;
    }
  }
  return found != negate;
}

} // namespace

bool
fnmatch(std::string_view pattern, std::string_view text)
{
  // The literal run at the end of the pattern must end the text: most names fail here, before
  // any backtracking over '*'.
  const auto is_meta = [](char c) { return c == '*' || c == '?' || c == '[' || c == ']'; };
  // Each literal character takes one of the text's: a run longer than the text fails without
  // being read to its start (a megabyte-long entry costs the name's length, not its own).
  size_t tail = 0;
  while (tail < pattern.size() && tail <= text.size() &&
         !is_meta(pattern[pattern.size() - 1 - tail])) {
    ++tail;
  }
  if (tail > text.size()) {
    return false;
  }
  if (tail == pattern.size()) {
    return pattern == text;
  }
  if (text.substr(text.size() - tail) != pattern.substr(pattern.size() - tail)) {
    return false;
  }
  // Likewise the literal run at its start must start the text (one compare, not a walk).
  const size_t head = first_wildcard(pattern);
  if (head > text.size() || text.substr(0, head) != pattern.substr(0, head)) {
    return false;
  }
  size_t p = head, t = head;
  size_t star_p = std::string_view::npos, star_t = 0;
  // A '[' with no closing bracket after it is literal, and so is every '[' after that one: each
  // is looked at once, however often a '*' brings the match back before it.
  size_t unclosed_from = std::string_view::npos;
  while (t < text.size()) {
    if (p < pattern.size()) {
      const char pc = pattern[p];
      if (pc == '*') {
        star_p = ++p;
        star_t = t;
        continue;
      }
      if (pc == '?') {
        ++p;
        ++t;
        continue;
      }
      if (pc == '[') {
        size_t end = 0;
        bool valid = false;
        const bool ok = p < unclosed_from && match_bracket(pattern, p, text[t], end, valid);
        if (!valid && p < unclosed_from) {
          unclosed_from = p;
        }
        if (valid) {
          if (ok) {
            p = end;
            ++t;
            continue;
          }
        } else if (text[t] == '[') {
          ++p;
          ++t;
          continue;
        }
      } else if (pc == text[t]) {
        ++p;
        ++t;
        continue;
      }
    }
    if (star_p == std::string_view::npos) {
      return false;
    }
    p = star_p;
    t = ++star_t;
  }
  while (p < pattern.size() && pattern[p] == '*') {
    ++p;
  }
  return p == pattern.size();
}

namespace {

// The position of the first byte of `text` that is one of `k_bytes`, or its size: 16 bytes at a
// time, then a plain loop (find_first_of looks each byte up in the set with memchr).
template<char... k_bytes>
size_t
first_of(std::string_view text)
{
  const char* const begin = text.data();
  const char* p = begin;
  const char* const end = p + text.size();
#if defined(__SSE2__)
  const auto found = [](const char* at) {
    const __m128i bytes = _mm_loadu_si128(reinterpret_cast<const __m128i*>(at));
    return static_cast<unsigned>(
      _mm_movemask_epi8((_mm_cmpeq_epi8(bytes, _mm_set1_epi8(k_bytes)) | ...)));
  };
  for (; end - p >= 16; p += 16) {
    if (const unsigned mask = found(p); mask != 0) {
      return static_cast<size_t>(p - begin) + static_cast<size_t>(std::countr_zero(mask));
    }
  }
  // The last bytes of a text of 16 or more: the 16 that end it, less those looked at already.
  if (p != end && end - begin >= 16) {
    const unsigned mask = found(end - 16) >> (16 - (end - p));
    return mask != 0 ? static_cast<size_t>(p - begin) + static_cast<size_t>(std::countr_zero(mask))
                     : text.size();
  }
#endif
  return static_cast<size_t>(std::find_if(p, end, [](char c) { return ((c == k_bytes) || ...); }) -
                             begin);
}

} // namespace

bool
has_glob_chars(std::string_view text)
{
  // Asked of every candidate entry a matcher tries.
  return first_of<'*', '?', '['>(text) != text.size();
}

size_t
first_wildcard(std::string_view text)
{
  // Every spelling of a long list is scanned once per index built.
  return first_of<'*', '?', '[', ']'>(text);
}

bool
is_below(std::string_view name, std::string_view ancestor)
{
  return name.size() > ancestor.size() && name.starts_with(ancestor) &&
         name[ancestor.size()] == '.';
}

std::string_view
leaf_of(std::string_view name)
{
  // memrchr() compares a vector's worth of bytes at a time; rfind() compares one.
  const void* dot = name.empty() ? nullptr : ::memrchr(name.data(), '.', name.size());
  return dot == nullptr ? name : name.substr(static_cast<const char*>(dot) - name.data() + 1);
}

std::string_view
fused_moe_prefix(std::string_view module)
{
  // Horspool's search run backwards, as rfind() reads: a window's first byte tells how far
  // left the next window that could match starts (most bytes of a name's leaf are in no place
  // of the marker, and the window moves by all of it).
  static constexpr std::string_view k_marker = ".experts.";
  static constexpr auto k_shift = [] {
    std::array<uint8_t, 256> shift{};
    shift.fill(static_cast<uint8_t>(k_marker.size()));
    for (size_t i = k_marker.size() - 1; i >= 1; --i) {
      shift[static_cast<unsigned char>(k_marker[i])] = static_cast<uint8_t>(i);
    }
    return shift;
  }();
  if (module.size() < k_marker.size()) {
    return {};
  }
  for (size_t pos = module.size() - k_marker.size();;) {
    const char first = module[pos];
    if (first == '.' &&
        std::memcmp(module.data() + pos + 1, k_marker.data() + 1, k_marker.size() - 1) == 0) {
      return module.substr(0, pos + k_marker.size() - 1);
    }
    const size_t shift = k_shift[static_cast<unsigned char>(first)];
    if (pos < shift) {
      return {};
    }
    pos -= shift;
  }
}

std::vector<std::string_view>
split_dots(std::string_view name)
{
  std::vector<std::string_view> parts;
  size_t start = 0;
  while (true) {
    const size_t dot = name.find('.', start);
    if (dot == std::string_view::npos) {
      parts.push_back(name.substr(start));
      return parts;
    }
    parts.push_back(name.substr(start, dot - start));
    start = dot + 1;
  }
}

} // namespace qcheck

namespace qcheck {

namespace {

constexpr uint64_t k_base = 0x100000001b3ull;
constexpr size_t k_reverse_window = 24;

bool
is_wildcard(char c)
{
  return c == '*' || c == '?' || c == '[' || c == ']';
}

char
fold(char c, bool case_insensitive)
{
  return case_insensitive && c >= 'A' && c <= 'Z' ? static_cast<char>(c - 'A' + 'a') : c;
}

uint64_t
mix(uint64_t hash, size_t length)
{
  return hash ^ (static_cast<uint64_t>(length) * 0x9e3779b97f4a7c15ull);
}

// The polynomial sum of c[i] * B^(n-1-i), four bytes per step so that the chain through `h`
// costs one multiplication per four bytes; the same value as one byte at a time.
template<bool k_fold>
uint64_t
polynomial(std::string_view text)
{
  constexpr uint64_t k_b2 = k_base * k_base;
  constexpr uint64_t k_b3 = k_b2 * k_base;
  constexpr uint64_t k_b4 = k_b3 * k_base;
  const auto byte = [&](size_t i) {
    return static_cast<uint64_t>(static_cast<unsigned char>(fold(text[i], k_fold)));
  };
  uint64_t h = 0;
  size_t i = 0;
  for (; i + 4 <= text.size(); i += 4) {
    h = h * k_b4 + (byte(i) * k_b3 + byte(i + 1) * k_b2 + byte(i + 2) * k_base + byte(i + 3));
  }
  for (; i < text.size(); ++i) {
    h = h * k_base + byte(i);
  }
  return h;
}

uint64_t
hash_text(std::string_view text, bool case_insensitive)
{
  return mix(case_insensitive ? polynomial<true>(text) : polynomial<false>(text), text.size());
}

// Prefix hashes of one name: the hash of any window in O(1). Uses the thread's buffers, so
// one instance at a time per thread.
class WindowHashes
{
public:
  WindowHashes(std::string_view text, bool case_insensitive)
  {
    thread_local Buffers buffers;
    m_buffers = &buffers;
    compute(text, case_insensitive);
  }
  uint64_t window(size_t begin, size_t end) const
  {
    const std::vector<uint64_t>& prefix = m_buffers->prefix;
    return mix(prefix[end] - prefix[begin] * m_buffers->power[end - begin], end - begin);
  }

private:
  struct Buffers
  {
    std::vector<uint64_t> prefix, power;
    // The text prefix[] was last computed for: prefix[i] depends on text[0, i) alone, so the
    // part a name shares with the one before it (its siblings come in a row) is kept.
    std::string last;
    bool last_case_insensitive = false;
  };

  void compute(std::string_view text, bool case_insensitive)
  {
    Buffers& buffers = *m_buffers;
    std::vector<uint64_t>& power = buffers.power;
    const size_t n = text.size();
    // Powers depend only on the length: kept from one name to the next.
    if (power.size() < n + 1) {
      const size_t from = power.empty() ? 1 : power.size();
      power.resize(n + 1);
      power[0] = 1;
      for (size_t i = from; i <= n; ++i) {
        power[i] = power[i - 1] * k_base;
      }
    }
    const size_t kept = buffers.last_case_insensitive == case_insensitive
                          ? common_prefix_length(text, buffers.last)
                          : 0;
    buffers.prefix.resize(n + 1);
    if (case_insensitive) {
      prefixes<true>(text, kept, buffers.prefix.data());
    } else {
      prefixes<false>(text, kept, buffers.prefix.data());
    }
    buffers.last.assign(text);
    buffers.last_case_insensitive = case_insensitive;
  }

  // The length of the longest common prefix of a and b, eight bytes at a time.
  static size_t common_prefix_length(std::string_view a, std::string_view b)
  {
    const size_t n = std::min(a.size(), b.size());
    size_t i = 0;
    for (; i + 8 <= n; i += 8) {
      uint64_t x, y;
      std::memcpy(&x, a.data() + i, 8);
      std::memcpy(&y, b.data() + i, 8);
      if (x != y) {
        break;
      }
    }
    while (i < n && a[i] == b[i]) {
      ++i;
    }
    return i;
  }

  // prefix[i] = the polynomial of text[0, i), as hash_text has it, for i > from (prefix[0, from]
  // already hold it). Four bytes per step on the multiplication chain; the three prefixes
  // inside a step hang off it.
  template<bool k_fold>
  static void prefixes(std::string_view text, size_t from, uint64_t* prefix)
  {
    constexpr uint64_t k_b2 = k_base * k_base;
    constexpr uint64_t k_b3 = k_b2 * k_base;
    constexpr uint64_t k_b4 = k_b3 * k_base;
    const auto byte = [&](size_t i) {
      return static_cast<uint64_t>(static_cast<unsigned char>(fold(text[i], k_fold)));
    };
    const size_t n = text.size();
    prefix[0] = 0;
    uint64_t h = prefix[from];
    size_t i = from;
    for (; i + 4 <= n; i += 4) {
      const uint64_t ab = byte(i) * k_base + byte(i + 1);
      const uint64_t abc = ab * k_base + byte(i + 2);
      prefix[i + 1] = h * k_base + byte(i);
      prefix[i + 2] = h * k_b2 + ab;
      prefix[i + 3] = h * k_b3 + abc;
      h = h * k_b4 + (abc * k_base + byte(i + 3));
      prefix[i + 4] = h;
    }
    for (; i < n; ++i) {
      h = h * k_base + byte(i);
      prefix[i + 1] = h;
    }
  }

  Buffers* m_buffers;
};

void
mark_length(std::vector<uint8_t>& lengths, size_t length)
{
  if (lengths.size() <= length) {
    lengths.resize(length + 1, 0);
  }
  lengths[length] = 1;
}

bool
has_length(const std::vector<uint8_t>& lengths, size_t length)
{
  return length < lengths.size() && lengths[length] != 0;
}

// The longest run of literal characters of a glob, outside bracket expressions.
std::string_view
longest_glob_run(std::string_view glob)
{
  std::string_view best;
  size_t start = 0;
  const auto close = [&](size_t end) {
    if (end > start && end - start > best.size()) {
      best = glob.substr(start, end - start);
    }
  };
  // Past a '[' that no ']' closes, none is closed: those are not searched again.
  bool unclosed = false;
  for (size_t i = 0; i < glob.size(); ++i) {
    const char c = glob[i];
    if (c == '[') {
      close(i);
      size_t j = i + 1;
      j += j < glob.size() && glob[j] == '!' ? 1 : 0;
      j += j < glob.size() && glob[j] == ']' ? 1 : 0;
      while (!unclosed && j < glob.size() && glob[j] != ']') {
        ++j;
      }
      unclosed = unclosed || j >= glob.size();
      i = unclosed ? i : j;
      start = i + 1;
    } else if (is_wildcard(c)) {
      close(i);
      start = i + 1;
    }
  }
  close(glob.size());
  return best;
}

// name.find(text, from) for a short name, without library calls at each position holding the
// text's first byte (a tail run such as ".mlp.gate" starts at every dot). 16 start positions at
// a time hold the text's first and last bytes where both are; only those are compared whole.
size_t
find_short(std::string_view name, std::string_view text, size_t from = 0)
{
  const size_t m = text.size();
  if (name.size() < m || from > name.size() - m) {
    return std::string_view::npos;
  }
  const size_t last = name.size() - m; // the last start position
  size_t i = from;
  const auto equal_at = [&](size_t at) {
    size_t k = 0;
    while (k < m && name[at + k] == text[k]) {
      ++k;
    }
    return k == m;
  };
#if defined(__SSE2__)
  if (m >= 2) {
    const __m128i first = _mm_set1_epi8(text[0]);
    const __m128i final = _mm_set1_epi8(text[m - 1]);
    // Starts b .. b + 15 read name[b, b + 16) and name[b + m - 1, b + m + 15): inside the name.
    const auto starts_from = [&](size_t b) {
      const __m128i heads = _mm_loadu_si128(reinterpret_cast<const __m128i*>(name.data() + b));
      const __m128i tails =
        _mm_loadu_si128(reinterpret_cast<const __m128i*>(name.data() + b + m - 1));
      return static_cast<unsigned>(_mm_movemask_epi8(
        _mm_and_si128(_mm_cmpeq_epi8(heads, first), _mm_cmpeq_epi8(tails, final))));
    };
    const auto first_equal = [&](size_t b, unsigned both) {
      for (; both != 0; both &= both - 1) {
        const size_t at = b + static_cast<size_t>(std::countr_zero(both));
        if (equal_at(at)) {
          return at;
        }
      }
      return std::string_view::npos;
    };
    if (last >= 15) {
      for (; i <= last - 15; i += 16) {
        if (const size_t at = first_equal(i, starts_from(i)); at != std::string_view::npos) {
          return at;
        }
      }
      // The starts left, i .. last, are the end of one more block: the last 16, overlapping
      // the ones already tried, which are masked off.
      if (i <= last) {
        const size_t b = last - 15;
        return first_equal(b, starts_from(b) & (~0u << (i - b)));
      }
      return std::string_view::npos;
    }
  }
#endif
  for (; i <= last; ++i) {
    if (equal_at(i)) {
      return i;
    }
  }
  return std::string_view::npos;
}

} // namespace

std::string
regex_literal_start(std::string_view regex)
{
  if (regex.find('|') != std::string_view::npos) {
    return {}; // an alternative may start otherwise
  }
  std::string out;
  size_t i = 0;
  while (i < regex.size()) {
    const char c = regex[i];
    // An escaped byte of a multi-byte character is part of one the regex reads whole (and may
    // quantify): it ends the literal start, as an unescaped one does.
    if (c == '\\' && i + 1 < regex.size() && static_cast<unsigned char>(regex[i + 1]) < 0x80 &&
        !std::isalnum(static_cast<unsigned char>(regex[i + 1]))) {
      out += regex[i + 1];
      i += 2;
    } else if (std::string_view(".^$*+?{}[]()|\\").find(c) == std::string_view::npos &&
               static_cast<unsigned char>(c) < 0x80) {
      out += c;
      ++i;
    } else {
      break;
    }
  }
  // A quantifier that allows zero repeats makes the last character optional.
  if (i < regex.size() && (regex[i] == '*' || regex[i] == '?' || regex[i] == '{') && !out.empty()) {
    out.pop_back();
  }
  return out;
}

bool
digit_signature(std::string_view name, std::string& out)
{
  out.resize(name.size());
  char* w = out.data();
  bool in_digits = false;
  for (const char c : name) {
    if (c == '\x01') {
      return false;
    }
    const bool digit = c >= '0' && c <= '9';
    if (!digit) {
      *w++ = c;
    } else if (!in_digits) {
      *w++ = '\x01';
    }
    in_digits = digit;
  }
  out.resize(static_cast<size_t>(w - out.data()));
  return true;
}

bool
same_digit_signature(std::string_view a, std::string_view b)
{
  const auto is_digit = [](char c) { return c >= '0' && c <= '9'; };
  size_t i = 0, j = 0;
  // The usual pair (two experts' projections): a number each, then the same text.
  while (i < a.size() && is_digit(a[i])) {
    ++i;
  }
  while (j < b.size() && is_digit(b[j])) {
    ++j;
  }
  if (i > 0 && j > 0 && a.substr(i) == b.substr(j)) {
    return true;
  }
  i = j = 0;
  for (;;) {
    // A stretch of equal bytes, 8 at a time while it lasts.
    const size_t start = i;
    while (i + 8 <= a.size() && j + 8 <= b.size() && std::memcmp(&a[i], &b[j], 8) == 0) {
      i += 8;
      j += 8;
    }
    while (i < a.size() && j < b.size() && a[i] == b[j]) {
      ++i;
      ++j;
    }
    // A digit run the stretch ends in may go on in one name only: it is taken whole below.
    while (i > start && is_digit(a[i - 1])) {
      --i;
      --j;
    }
    if (i == a.size() || j == b.size() || !is_digit(a[i]) || !is_digit(b[j])) {
      return i == a.size() && j == b.size();
    }
    while (i < a.size() && is_digit(a[i])) {
      ++i;
    }
    while (j < b.size() && is_digit(b[j])) {
      ++j;
    }
  }
}

bool
blind_to_digits(std::string_view entry)
{
  return !entry.starts_with("re:") && std::none_of(entry.begin(), entry.end(), [](char c) {
    return (c >= '0' && c <= '9') || c == '?' || c == '[' || c == ']';
  });
}

SubstringSet::SubstringSet(std::vector<Key> keys, bool case_insensitive)
  : m_case_insensitive(case_insensitive)
{
  if (!case_insensitive && keys.size() <= k_few_keys) {
    m_few = std::move(keys);
    return;
  }
  for (Key& k : keys) {
    for (char& c : k.text) {
      c = fold(c, case_insensitive);
    }
  }
  std::sort(keys.begin(), keys.end(), [](const Key& a, const Key& b) {
    const int order = a.text.compare(b.text); // one pass over the shared prefix, not two
    return order != 0 ? order < 0 : a.value < b.value;
  });
  // The trie, from sorted keys: each key shares the path of its common prefix with the one
  // before and adds a node per further character, so nodes are numbered in depth-first order
  // and a node's children are made in character order. `walk` replays that construction,
  // calling add_edge(parent, node, character) per node made; three replays (count the nodes,
  // count each node's children, place the edges) build the edge arrays without a list of edges.
  const auto walk = [&](auto&& add_edge, auto&& at_key) {
    std::vector<uint32_t> path{0}; // path[i]: the node for the previous key's first i characters
    uint32_t nodes = 1;
    std::string_view previous;
    for (const Key& k : keys) {
      const std::string_view text = k.text;
      size_t common = 0;
      while (common < text.size() && common < previous.size() && text[common] == previous[common]) {
        ++common;
      }
      path.resize(common + 1);
      for (size_t i = common; i < text.size(); ++i) {
        add_edge(path.back(), nodes, static_cast<unsigned char>(text[i]));
        path.push_back(nodes++);
      }
      at_key(path.back());
      previous = text;
    }
    return nodes;
  };
  const auto no_key = [](uint32_t) {};
  const uint32_t nodes = walk([](uint32_t, uint32_t, unsigned char) {}, no_key);
  m_first_edge.assign(nodes + 1, 0);
  std::vector<uint32_t> value_node;
  value_node.reserve(keys.size());
  walk([&](uint32_t parent, uint32_t, unsigned char) { ++m_first_edge[parent + 1]; },
       [&](uint32_t node) { value_node.push_back(node); });
  for (uint32_t n = 0; n < nodes; ++n) {
    m_first_edge[n + 1] += m_first_edge[n];
  }
  m_edge_chars.resize(nodes - 1);
  m_edge_targets.resize(nodes - 1);
  {
    std::vector<uint32_t> fill(m_first_edge.begin(), m_first_edge.end() - 1);
    walk(
      [&](uint32_t parent, uint32_t node, unsigned char c) {
        const uint32_t at = fill[parent]++;
        m_edge_chars[at] = c;
        m_edge_targets[at] = node;
      },
      no_key);
  }
  // Values: keys are sorted, so each node's values are already together.
  m_first_value.assign(nodes + 1, 0);
  for (uint32_t node : value_node) {
    ++m_first_value[node + 1];
  }
  for (uint32_t n = 0; n < nodes; ++n) {
    m_first_value[n + 1] += m_first_value[n];
  }
  m_values.resize(keys.size());
  {
    std::vector<uint32_t> fill(m_first_value.begin(), m_first_value.end() - 1);
    for (size_t i = 0; i < keys.size(); ++i) {
      m_values[fill[value_node[i]]++] = keys[i].value;
    }
  }
  m_root.assign(256, 0);
  for (uint32_t e = m_first_edge[0]; e < m_first_edge[1]; ++e) {
    m_root[m_edge_chars[e]] = m_edge_targets[e];
  }
  // Failure links breadth first: a node's link is found from its parent's.
  m_fail.assign(nodes, 0);
  m_output.assign(nodes, 0);
  std::vector<uint32_t> queue;
  queue.reserve(nodes);
  queue.push_back(0);
  for (size_t q = 0; q < queue.size(); ++q) {
    const uint32_t node = queue[q];
    for (uint32_t e = m_first_edge[node]; e < m_first_edge[node + 1]; ++e) {
      const uint32_t target = m_edge_targets[e];
      uint32_t link = 0;
      if (node != 0) {
        for (uint32_t f = m_fail[node];; f = m_fail[f]) {
          if (const uint32_t next = child(f, m_edge_chars[e]); next != 0) {
            link = next;
            break;
          }
          if (f == 0) {
            break;
          }
        }
      }
      m_fail[target] = link;
      m_output[target] =
        m_first_value[target + 1] > m_first_value[target] ? target : m_output[link];
      queue.push_back(target);
    }
  }
}

uint32_t
SubstringSet::child(uint32_t node, unsigned char c) const
{
  if (node == 0) {
    return m_root[c];
  }
  const uint32_t begin = m_first_edge[node];
  const uint32_t end = m_first_edge[node + 1];
  if (end - begin <= 8) {
    for (uint32_t e = begin; e < end; ++e) {
      if (m_edge_chars[e] == c) {
        return m_edge_targets[e];
      }
    }
    return 0;
  }
  const auto first = m_edge_chars.begin() + begin;
  const auto last = m_edge_chars.begin() + end;
  const auto it = std::lower_bound(first, last, c);
  return it != last && *it == c ? m_edge_targets[static_cast<size_t>(it - m_edge_chars.begin())]
                                : 0;
}

void
SubstringSet::find_all(std::string_view text, std::vector<uint32_t>& out) const
{
  // A few keys: a search for each (memchr, then a compare) beats a walk byte by byte.
  for (const Key& k : m_few) {
    if (k.text.empty()) {
      out.push_back(k.value);
      continue;
    }
    for (size_t at = find_short(text, k.text); at != std::string_view::npos;
         at = find_short(text, k.text, at + 1)) {
      out.push_back(k.value);
    }
  }
  if (m_values.empty()) {
    return;
  }
  out.insert(out.end(), m_values.begin() + m_first_value[0], m_values.begin() + m_first_value[1]);
  uint32_t state = 0;
  for (const char ch : text) {
    const auto c = static_cast<unsigned char>(fold(ch, m_case_insensitive));
    for (;;) {
      if (const uint32_t next = child(state, c); next != 0) {
        state = next;
        break;
      }
      if (state == 0) {
        break;
      }
      state = m_fail[state];
    }
    for (uint32_t t = m_output[state]; t != 0; t = m_output[m_fail[t]]) {
      out.insert(out.end(), m_values.begin() + m_first_value[t],
                 m_values.begin() + m_first_value[t + 1]);
    }
  }
}

namespace {

std::vector<EntryIndex::Spelling>
spellings_of(const std::vector<std::vector<std::string>>& keys)
{
  std::vector<EntryIndex::Spelling> out;
  for (uint32_t entry = 0; entry < keys.size(); ++entry) {
    for (const std::string& key : keys[entry]) {
      out.push_back({key, entry});
    }
  }
  return out;
}

} // namespace

EntryIndex::EntryIndex(const std::vector<std::vector<std::string>>& keys, const Options& options)
  : EntryIndex(spellings_of(keys), keys.size(), options)
{
}

EntryIndex::EntryIndex(std::span<const Spelling> spellings, size_t entries, const Options& options)
  : m_options(options), m_size(entries)
{
  const bool ci = options.case_insensitive;
  const bool anywhere_mode = options.mode == Mode::substring;
  std::vector<SubstringSet::Key> anywhere; // texts that may occur at any place in a name
  // Each spelling adds at most one key to the table its kind goes to: no growth for long lists.
  if (anywhere_mode) {
    m_inner.keys.reserve(spellings.size());
    m_inner_texts.reserve(spellings.size());
  } else {
    m_literal.keys.reserve(spellings.size());
  }
  m_marked.resize(options.leaf_markers.size());
  // Dotted mode: a key's first component must be a whole component of the name where the key
  // starts, so names are looked up only from starts whose component some key begins with.
  const auto note_first_component = [&](ComponentFilter& filter, std::string_view key) {
    if (options.mode == Mode::dotted) {
      filter.add(hash_text(key.substr(0, key.find('.')), ci));
    }
  };
  // A prefix without a dot may end inside the name's component: no filter then.
  const auto note_prefix_first_component = [&](std::string_view prefix) {
    if (prefix.find('.') != std::string_view::npos) {
      note_first_component(m_prefix_firsts, prefix);
    } else if (options.mode == Mode::dotted) {
      m_prefix_firsts.pass_all();
    }
  };
  // A text that occurs somewhere in any name the entry matches. With two dots or more, the run
  // between its first and last dot is whole components wherever it occurs: hashed, one lookup
  // per pair of dots in a name. Other texts go to the substring automaton, which a list of
  // thousands of full names would make megabytes large and slow to build.
  std::vector<SubstringSet::Key> anywhere_checked; // values index m_checked
  const auto add_anywhere = [&](std::string_view text, uint32_t entry, uint32_t run = 0) {
    const size_t first_dot = text.find('.');
    const size_t last_dot = text.rfind('.');
    if (first_dot != std::string_view::npos && last_dot > first_dot + 1) {
      // Four windows of the text, from one pass of prefix hashes.
      const WindowHashes h(text, ci);
      const size_t begin = first_dot + 1;
      const std::string_view inner = text.substr(begin, last_dot - begin);
      const size_t first_end = begin + std::min(inner.find('.'), inner.size());
      const size_t last_begin = last_dot - leaf_of(inner).size();
      m_inner_firsts.add(h.window(begin, first_end));
      m_inner_lasts.add(h.window(last_begin, last_dot));
      m_inner.keys.push_back(
        {h.window(begin, last_dot), static_cast<uint32_t>(m_inner_texts.size())});
      m_inner_texts.push_back(
        {h.window(0, text.size()), entry, begin, text.size() - last_dot, run});
      mark_length(m_inner_lengths, inner.size());
    } else if (run != 0) {
      anywhere_checked.push_back({std::string(text), static_cast<uint32_t>(m_checked.size())});
      m_checked.push_back({entry, run});
    } else {
      anywhere.push_back({std::string(text), entry});
    }
  };
  // A glob's longest literal run after its first wildcard (`wildcard`), without a final ".*":
  // TensorRT-LLM also reads "X.*" as "X" (when X holds none of `*?[`; `]` counts as a wildcard
  // here), and "X" has no dot after X. Registered in m_tail_runs: 1 + its index; 0 for none
  // (or case-insensitive keys).
  const auto tail_run = [&](std::string_view key, size_t wildcard) -> uint32_t {
    if (ci) {
      return 0;
    }
    std::string_view body = key.substr(wildcard);
    if (key.ends_with(".*")) {
      body.remove_suffix(std::min<size_t>(2, body.size()));
    }
    const std::string_view tail = longest_glob_run(body);
    if (tail.empty()) {
      return 0;
    }
    m_tail_runs.emplace_back(tail);
    return static_cast<uint32_t>(m_tail_runs.size());
  };
  // SGLang reads a "re:" entry as text here too: its leaf counts whatever the entry is.
  const auto note_marked = [&](std::string_view key, uint32_t entry) {
    const std::string_view leaf = leaf_of(key);
    for (size_t i = 0; i < options.leaf_markers.size(); ++i) {
      if (leaf == options.leaf_markers[i] && (m_marked[i].empty() || m_marked[i].back() != entry)) {
        m_marked[i].push_back(entry);
      }
    }
  };
  for (size_t first = 0, last = 0; first < spellings.size(); first = last) {
    const uint32_t entry = spellings[first].entry;
    while (last < spellings.size() && spellings[last].entry == entry) {
      ++last;
    }
    bool always = false;
    for (size_t k = first; k < last; ++k) {
      const std::string_view key = spellings[k].text;
      if (options.regex_entries && !spellings[k].text_only && key.starts_with("re:")) {
        note_marked(key, entry);
        // Every engine anchors these at the name's start: its literal start must begin a name.
        const std::string start = regex_literal_start(std::string_view(key).substr(3));
        if (start.empty()) {
          always = true;
        } else if (anywhere_mode) {
          add_anywhere(start, entry);
        } else {
          m_prefixes.keys.push_back({hash_text(start, ci), entry});
          mark_length(m_prefix_lengths, start.size());
          note_prefix_first_component(start);
        }
        continue;
      }
      const size_t wildcard = options.globs ? first_wildcard(key) : key.size();
      // A glob's literal start, without trailing dots: "X.*" may also stand for "X" itself.
      size_t prefix = wildcard;
      while (prefix > 0 && key[prefix - 1] == '.') {
        --prefix;
      }
      if (wildcard == key.size() && anywhere_mode) {
        add_anywhere(key, entry);
      } else if (wildcard == key.size()) {
        m_literal.keys.push_back({hash_text(key, ci), entry});
        mark_length(m_literal_lengths, key.size());
        note_first_component(m_literal_firsts, key);
      } else if (prefix == 0) {
        // "*x*": its longest literal run occurs somewhere in any name it matches. Not counting a
        // final ".*", which TensorRT-LLM also reads as the node itself ("].*" matches "]").
        std::string_view body = key;
        if (!ci && key.ends_with(".*")) {
          body.remove_suffix(2);
        }
        const std::string_view run = longest_glob_run(body);
        if (run.empty()) {
          always = true;
        } else {
          add_anywhere(run, entry);
        }
      } else if (anywhere_mode) {
        add_anywhere(std::string_view(key).substr(0, prefix), entry, tail_run(key, wildcard));
      } else {
        const uint32_t run = tail_run(key, wildcard);
        m_prefixes.keys.push_back(
          {hash_text(std::string_view(key).substr(0, prefix), ci), entry, run});
        mark_length(m_prefix_lengths, prefix);
        note_prefix_first_component(std::string_view(key).substr(0, prefix));
      }
      note_marked(key, entry);
    }
    if (!options.reverse_marker.empty()) {
      const std::string_view key = spellings[first].text;
      for (size_t at = key.find(options.reverse_marker); at != std::string_view::npos;
           at = key.find(options.reverse_marker, at + 1)) {
        const size_t end = at + options.reverse_marker.size();
        if (m_reverse_all.empty() || m_reverse_all.back() != entry) {
          m_reverse_all.push_back(entry);
        }
        if (end >= k_reverse_window) {
          m_reverse.keys.push_back(
            {hash_text(std::string_view(key).substr(end - k_reverse_window, k_reverse_window), ci),
             entry});
        }
      }
    }
    if (always) {
      m_always.push_back(entry);
    }
  }
  for (size_t length = 1; length < m_prefix_lengths.size(); ++length) {
    if (m_prefix_lengths[length]) {
      m_prefix_length_list.push_back(length);
    }
  }
  for (Table* t : {&m_literal, &m_prefixes, &m_inner, &m_reverse}) {
    t->seal();
  }
  m_anywhere = SubstringSet(std::move(anywhere), ci);
  m_anywhere_checked = SubstringSet(std::move(anywhere_checked), ci);
}

namespace {

// Calls `f` with the position of each '.' in `text`, in order. Eight bytes at a time where the
// machine is little-endian: a byte equal to '.' is flagged without a borrow between bytes, so
// every flag is exact, and the lowest flag is the first dot.
template<typename F>
void
for_each_dot(std::string_view text, const F& f)
{
  size_t i = 0;
  if constexpr (std::endian::native == std::endian::little) {
    constexpr uint64_t k_dots = 0x2e2e2e2e2e2e2e2eull;
    constexpr uint64_t k_low7 = 0x7f7f7f7f7f7f7f7full;
    for (; i + 8 <= text.size(); i += 8) {
      uint64_t word;
      std::memcpy(&word, text.data() + i, 8);
      const uint64_t v = word ^ k_dots; // zero bytes: dots
      uint64_t zero = ~(((v & k_low7) + k_low7) | v) & ~k_low7;
      for (; zero != 0; zero &= zero - 1) {
        f(i + static_cast<size_t>(std::countr_zero(zero) / 8));
      }
    }
  }
  for (; i < text.size(); ++i) {
    if (text[i] == '.') {
      f(i);
    }
  }
}

// Tables of this many keys get a filter, of this many bits per key (about 6% false hits).
constexpr size_t k_filter_from = 2048;
constexpr size_t k_filter_bits_per_key = 16;

// The filter's bit for a hash: its top bits after a multiplication, so not the directory's.
uint64_t
filter_bit(uint64_t hash, unsigned shift)
{
  return (hash * 0xff51afd7ed558ccdull) >> shift;
}

} // namespace

void
EntryIndex::Table::seal()
{
  unsigned bits = 1;
  while ((size_t{1} << bits) < keys.size() && bits < 24) {
    ++bits;
  }
  shift = 64 - bits;
  // A counting sort on the directory's bits: a lookup scans its slot's keys whatever their order.
  const size_t slots = size_t{1} << bits;
  directory.assign(slots + 1, 0);
  for (const Key& k : keys) {
    ++directory[(k.hash >> shift) + 1];
  }
  for (size_t slot = 0; slot < slots; ++slot) {
    directory[slot + 1] += directory[slot];
  }
  std::vector<Key> sorted(keys.size());
  std::vector<uint32_t> fill(directory.begin(), directory.end() - 1);
  for (const Key& k : keys) {
    sorted[fill[k.hash >> shift]++] = k;
  }
  keys = std::move(sorted);
  filter.clear();
  if (keys.size() >= k_filter_from) {
    unsigned filter_bits = 6;
    while ((size_t{1} << filter_bits) < keys.size() * k_filter_bits_per_key) {
      ++filter_bits;
    }
    filter_shift = 64 - filter_bits;
    filter.assign(size_t{1} << (filter_bits - 6), 0);
    for (const Key& k : keys) {
      const uint64_t bit = filter_bit(k.hash, filter_shift);
      filter[bit >> 6] |= uint64_t{1} << (bit & 63);
    }
  }
}

void
EntryIndex::Table::lookup(uint64_t hash, std::vector<uint32_t>& out) const
{
  for (const Key& k : slot(hash)) {
    if (k.hash == hash) {
      out.push_back(k.entry);
    }
  }
}

std::span<const EntryIndex::Key>
EntryIndex::Table::slot(uint64_t hash) const
{
  if (keys.empty()) {
    return {};
  }
  if (!filter.empty()) {
    const uint64_t bit = filter_bit(hash, filter_shift);
    if ((filter[bit >> 6] >> (bit & 63) & 1) == 0) {
      return {};
    }
  }
  const size_t at = hash >> shift;
  return std::span(keys).subspan(directory[at], directory[at + 1] - directory[at]);
}

void
EntryIndex::find_anywhere(std::string_view name, std::vector<uint32_t>& out) const
{
  m_anywhere.find_all(name, out);
  if (m_checked.empty()) {
    return;
  }
  thread_local std::vector<uint32_t> hits;
  hits.clear();
  m_anywhere_checked.find_all(name, hits);
  for (const uint32_t k : hits) {
    const CheckedText& c = m_checked[k];
    if (find_short(name, m_tail_runs[c.run - 1]) != std::string_view::npos) {
      out.push_back(c.entry);
    }
  }
}

void
EntryIndex::lookup_prefix(std::string_view name, size_t begin, size_t length, uint64_t hash,
                          std::vector<uint32_t>& out) const
{
  for (const Key& k : m_prefixes.slot(hash)) {
    if (k.hash == hash && (k.run == 0 || find_short(name, m_tail_runs[k.run - 1], begin + length) !=
                                           std::string_view::npos)) {
      out.push_back(k.entry);
    }
  }
}

void
EntryIndex::candidates(std::span<const std::string_view> names, std::vector<uint32_t>& out) const
{
  const size_t first = out.size();
  const bool ci = m_options.case_insensitive;
  // Substring keys alone need no window hashes or dot positions.
  const bool windows = m_options.mode != Mode::substring || !m_prefixes.keys.empty() ||
                       !m_inner.keys.empty() || !m_options.reverse_marker.empty();
  for (size_t spelling = 0; spelling < names.size(); ++spelling) {
    const std::string_view name = names[spelling];
    for (size_t i = 0; i < m_marked.size(); ++i) {
      if (!m_marked[i].empty() &&
          leaf_of(name).find(m_options.leaf_markers[i]) != std::string_view::npos) {
        out.insert(out.end(), m_marked[i].begin(), m_marked[i].end());
      }
    }
    if (!windows) {
      find_anywhere(name, out);
      continue;
    }
    const WindowHashes h(name, ci);
    const size_t n = name.size();
    // Component a is [starts[a], ends[a]), a < parts; a run from it ends at one of ends[a...].
    // Written through pointers: a name has at most n + 1 components.
    thread_local std::vector<size_t> starts_buffer, ends_buffer;
    thread_local std::vector<uint64_t> components_buffer; // their hashes, for the filters
    if (starts_buffer.size() < n + 1) {
      starts_buffer.resize(n + 1);
      ends_buffer.resize(n + 1);
      components_buffer.resize(n + 1);
    }
    size_t* const starts = starts_buffer.data();
    size_t* const ends = ends_buffer.data();
    uint64_t* const components = components_buffer.data();
    size_t parts = 0;
    starts[0] = 0;
    for_each_dot(name, [&](size_t at) {
      ends[parts++] = at;
      starts[parts] = at + 1;
    });
    ends[parts++] = n;
    if (m_options.mode == Mode::dotted || !m_inner.keys.empty()) {
      for (size_t a = 0; a < parts; ++a) {
        components[a] = h.window(starts[a], ends[a]);
      }
    }
    // Whole keys.
    switch (m_options.mode) {
    case Mode::exact:
      m_literal.lookup(h.window(0, n), out);
      break;
    case Mode::ancestors:
      for (size_t b = 0; b < parts; ++b) {
        const size_t end = ends[b];
        if (has_length(m_literal_lengths, end)) {
          m_literal.lookup(h.window(0, end), out);
        }
      }
      break;
    case Mode::dotted:
      for (size_t a = 0; a < parts; ++a) {
        if (!m_literal_firsts.may_hold(components[a])) {
          continue;
        }
        for (size_t b = a; b < parts; ++b) {
          const size_t s = starts[a], e = ends[b];
          if (has_length(m_literal_lengths, e - s)) { // an empty key: an empty component
            m_literal.lookup(h.window(s, e), out);
          }
        }
      }
      break;
    case Mode::substring:
      break; // in m_anywhere
    }
    // Glob prefixes: where a full match puts the literal text before the first wildcard.
    if (!m_prefixes.keys.empty()) {
      for (const size_t length : m_prefix_length_list) {
        if (length > n) {
          break;
        }
        if (m_options.mode == Mode::dotted) {
          for (size_t a = 0; a < parts; ++a) {
            if (starts[a] + length <= n && m_prefix_firsts.may_hold(components[a])) {
              lookup_prefix(name, starts[a], length, h.window(starts[a], starts[a] + length), out);
            }
          }
        } else {
          lookup_prefix(name, 0, length, h.window(0, length), out);
        }
      }
    }
    // Runs of whole components between two dots (after dot a - 1, up to dot b), each hit then
    // checked for its whole text around the run.
    if (!m_inner.keys.empty()) {
      thread_local std::vector<uint32_t> hits;
      for (size_t a = 1; a < parts; ++a) {
        if (!m_inner_firsts.may_hold(components[a])) {
          continue;
        }
        for (size_t b = a; b + 1 < parts; ++b) {
          const size_t s = starts[a], e = ends[b];
          if (e == s || !has_length(m_inner_lengths, e - s) ||
              !m_inner_lasts.may_hold(components[b])) {
            continue;
          }
          hits.clear();
          m_inner.lookup(h.window(s, e), hits);
          for (const uint32_t k : hits) {
            const InnerText& t = m_inner_texts[k];
            if (t.before <= s && t.after <= n - e &&
                h.window(s - t.before, e + t.after) == t.hash &&
                (t.run == 0 ||
                 find_short(name, m_tail_runs[t.run - 1], e + t.after) != std::string_view::npos)) {
              out.push_back(t.entry);
            }
          }
        }
      }
    }
    find_anywhere(name, out);
    if (!m_options.reverse_marker.empty() && spelling == 0) {
      const size_t at = find_short(name, m_options.reverse_marker);
      if (at != std::string_view::npos) {
        const size_t end = at + m_options.reverse_marker.size();
        if (end >= k_reverse_window) {
          m_reverse.lookup(h.window(end - k_reverse_window, end), out);
        } else {
          out.insert(out.end(), m_reverse_all.begin(), m_reverse_all.end());
        }
      }
    }
  }
  out.insert(out.end(), m_always.begin(), m_always.end());
  std::sort(out.begin() + static_cast<std::ptrdiff_t>(first), out.end());
  out.erase(std::unique(out.begin() + static_cast<std::ptrdiff_t>(first), out.end()), out.end());
}

} // namespace qcheck
