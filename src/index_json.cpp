#include "qcheck/index_json.hpp"

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <memory>
#include <string>
#include <simdjson.h>

#include "qcheck/json_text.hpp"

namespace qcheck {

namespace {

constexpr int k_max_depth = 1024; // as simdjson's DOM parser allows
// How far ahead of the reader the weight map's text is prefetched. An index read from a mapping
// sits in 4 KiB pages, which the hardware prefetcher does not cross: touching the next pages
// early overlaps their TLB and cache misses with the work on this one (on a 2-core VM, the
// scan of a mapped 96 MB index fell from 111 to 81 ms, median of 15).
constexpr ptrdiff_t k_prefetch_distance = 2048;

// The part of a text read a window at a time that is in memory: one of two buffers, each
// filled in turn, so that the one before stays as it was until the next fill.
struct Window
{
  const TextReader& read;
  uint64_t size;    // the whole text's
  uint64_t next;    // the first byte not read yet
  char* buffers[2]; // `capacity` bytes each
  unsigned filled;  // the buffer read into last
  size_t capacity;
  ptrdiff_t margin; // the bytes ahead of the reader below which it reads on
};

// A recursive-descent reader over the text; every method returns false on invalid JSON and
// leaves m_at where reading stopped. Over a window, false also when a member of the root object
// or of weight_map runs past the window's end.
class Reader
{
public:
  Reader(std::string_view json, WeightMapScan& out,
         const std::function<void(std::string_view, const std::string_view*)>& member,
         const std::function<void()>& restart)
    : m_begin(json.data()), m_at(json.data()), m_end(json.data() + json.size()), m_out(out),
      m_member(member), m_restart(restart)
  {
  }
  Reader(Window& window, WeightMapScan& out,
         const std::function<void(std::string_view, const std::string_view*)>& member,
         const std::function<void()>& restart)
    : m_begin(window.buffers[0]), m_at(window.buffers[0]), m_end(window.buffers[0]),
      m_window(&window), m_out(out), m_member(member), m_restart(restart)
  {
  }

  bool document(bool& found)
  {
    if (!refill(true)) {
      return false;
    }
    skip_space();
    if (m_at < m_end && *m_at == '{') {
      if (!root_object(found)) {
        return false;
      }
    } else if (!value(0)) {
      return false;
    }
    for (;;) { // only space may follow, to the text's end
      skip_space();
      if (m_at != m_end) {
        return false;
      }
      if (m_window == nullptr || m_window->next == m_window->size) {
        return true;
      }
      if (!refill(true)) {
        return false;
      }
    }
  }

  size_t offset() const { return static_cast<size_t>(m_at - m_begin); }
  // No string read so far held a byte of 0x80 or above (one outside a string stops the reader).
  bool ascii_so_far() const { return m_high == 0; }

private:
  void skip_space() { m_at = skip_json_space(m_at, m_end); }

  // Over a window, when fewer than its margin bytes are left (any number with `all_read`) and
  // the text has more: copies the bytes left to the other buffer's start and reads on after
  // them there. Views into the buffer before stay valid until the next fill (m_refills counts).
  bool refill(bool all_read)
  {
    Window* const w = m_window;
    if (w == nullptr || w->next == w->size || (!all_read && m_end - m_at >= w->margin)) {
      return true;
    }
    w->filled ^= 1u;
    char* const buffer = w->buffers[w->filled];
    const auto kept = static_cast<size_t>(m_end - m_at);
    if (kept > 0) {
      std::memcpy(buffer, m_at, kept);
    }
    const auto n = static_cast<size_t>(std::min<uint64_t>(w->capacity - kept, w->size - w->next));
    if (!w->read(w->next, std::span<char>(buffer + kept, n))) {
      return false;
    }
    w->next += n;
    m_begin = m_at = buffer;
    m_end = buffer + kept + n;
    ++m_refills;
    return true;
  }

  bool expect(char c)
  {
    skip_space();
    if (m_at < m_end && *m_at == c) {
      ++m_at;
      return true;
    }
    return false;
  }

  // At '"': the string's text, a view into the document unless it holds escapes.
  bool string(std::string_view& out)
  {
    const char* const start = ++m_at;
    const char* const special = find_string_special(start, m_end, m_high);
    if (special < m_end && *special == '"') {
      out = std::string_view(start, static_cast<size_t>(special - start));
      m_at = special + 1;
      return true;
    }
    if (special < m_end && *special == '\\') {
      return decode(start, out);
    }
    m_at = special; // a control character, or no closing quote
    return false;
  }

  bool decode(const char* p, std::string_view& out)
  {
    std::string text;
    while (p < m_end && *p != '"') {
      const auto c = static_cast<unsigned char>(*p);
      if (c < 0x20) {
        m_at = p;
        return false;
      }
      if (c != '\\') {
        m_high |= c & 0x80u;
        text += *p++;
        continue;
      }
      if (++p == m_end) {
        m_at = p;
        return false;
      }
      switch (*p++) {
      case '"':
        text += '"';
        break;
      case '\\':
        text += '\\';
        break;
      case '/':
        text += '/';
        break;
      case 'b':
        text += '\b';
        break;
      case 'f':
        text += '\f';
        break;
      case 'n':
        text += '\n';
        break;
      case 'r':
        text += '\r';
        break;
      case 't':
        text += '\t';
        break;
      case 'u': {
        uint32_t code = 0;
        if (!hex4(p, code)) {
          m_at = p;
          return false;
        }
        if (code >= 0xD800 && code <= 0xDBFF) { // a high surrogate needs its low half
          uint32_t low = 0;
          if (m_end - p < 2 || p[0] != '\\' || p[1] != 'u' || !(p += 2, hex4(p, low)) ||
              low < 0xDC00 || low > 0xDFFF) {
            m_at = p;
            return false;
          }
          code = 0x10000 + ((code - 0xD800) << 10) + (low - 0xDC00);
        } else if (code >= 0xDC00 && code <= 0xDFFF) {
          m_at = p;
          return false;
        }
        append_utf8(text, code);
        break;
      }
      default:
        m_at = p - 1;
        return false;
      }
    }
    if (p == m_end) {
      m_at = p;
      return false;
    }
    m_at = p + 1;
    out = m_out.decoded.emplace_back(std::move(text));
    return true;
  }

  // The 4 hex digits of a \u escape at p, which then moves past them.
  bool hex4(const char*& p, uint32_t& code)
  {
    if (!read_hex4(std::string_view(p, static_cast<size_t>(m_end - p)), 0, code)) {
      return false;
    }
    p += 4;
    return true;
  }

  bool digits()
  {
    const char* start = m_at;
    while (m_at < m_end && *m_at >= '0' && *m_at <= '9') {
      ++m_at;
    }
    return m_at > start;
  }

  bool number()
  {
    if (*m_at == '-') {
      ++m_at;
    }
    if (m_at < m_end && *m_at == '0') {
      ++m_at;
    } else if (!digits()) {
      return false;
    }
    if (m_at < m_end && *m_at == '.') {
      ++m_at;
      if (!digits()) {
        return false;
      }
    }
    if (m_at < m_end && (*m_at == 'e' || *m_at == 'E')) {
      ++m_at;
      if (m_at < m_end && (*m_at == '+' || *m_at == '-')) {
        ++m_at;
      }
      if (!digits()) {
        return false;
      }
    }
    return true;
  }

  bool literal(std::string_view word)
  {
    if (static_cast<size_t>(m_end - m_at) < word.size() ||
        std::string_view(m_at, word.size()) != word) {
      return false;
    }
    m_at += word.size();
    return true;
  }

  // Any value, checked and skipped.
  bool value(int depth)
  {
    skip_space();
    if (m_at == m_end) {
      return false;
    }
    switch (*m_at) {
    case '"': {
      std::string_view ignored;
      return string(ignored);
    }
    case '{':
      return depth < k_max_depth &&
             items('}', true, [&](std::string_view) { return value(depth + 1); });
    case '[':
      return depth < k_max_depth &&
             items(']', false, [&](std::string_view) { return value(depth + 1); });
    case 't':
      return literal("true");
    case 'f':
      return literal("false");
    case 'n':
      return literal("null");
    default:
      return (*m_at == '-' || (*m_at >= '0' && *m_at <= '9')) && number();
    }
  }

  // At '{' or '[': each item in turn, `item(key)` reading its value (the key is empty in an
  // array), separated by commas up to `close`. `whole()`, asked first at each item, reads the
  // whole item when it can (false: nothing read).
  // `resumable`: over a window, it is read on before each item (whose views stay valid).
  template<typename Item, typename Whole = bool (*)()>
  bool items(
    char close, bool object, Item item, bool resumable = false, Whole whole = [] { return false; })
  {
    ++m_at;
    skip_space();
    if (m_at < m_end && *m_at == close) {
      ++m_at;
      return true;
    }
    for (;;) {
      if (resumable && !refill(false)) {
        return false;
      }
      if (!whole()) {
        std::string_view key;
        if (object) {
          skip_space();
          if (m_at == m_end || *m_at != '"' || !string(key) || !expect(':')) {
            return false;
          }
          if (m_at < m_end && *m_at == ' ') { // the usual ": ", past without a scan
            ++m_at;
          }
        }
        skip_space();
        if (!item(key)) {
          return false;
        }
      }
      skip_space();
      if (m_at < m_end && *m_at == ',') {
        ++m_at;
        continue;
      }
      if (m_at < m_end && *m_at == close) {
        ++m_at;
        return true;
      }
      return false;
    }
  }

  // The root object: its "weight_map" member, when an object, is read member by member. A key
  // that occurs again replaces the earlier value, as in Python's json.
  bool root_object(bool& found)
  {
    return items(
      '}', true,
      [&](std::string_view key) {
        if (key != "weight_map") {
          return value(1);
        }
        if (found) {
          m_restart();
        }
        found = m_at < m_end && *m_at == '{';
        return found ? weight_map() : value(1);
      },
      true);
  }

  // Writers list a shard's tensors in a row: a file spelled as the one before, whose text held
  // no escape (so neither does this), is recognized by its bytes and handed out as that view.
  // Members spelled as Python's json.dumps(indent=2) writes them are read by usual_member();
  // any other spelling, member by member, as items() reads an object.
  bool weight_map()
  {
    std::string_view last_file; // empty, or a view into the text
    unsigned last_refills = m_refills;
    const auto usual = [&] {
      if (m_end - m_at > k_prefetch_distance) {
        __builtin_prefetch(m_at + k_prefetch_distance);
      }
      if (last_refills != m_refills) { // the window moved: hand out views into the new buffer
        last_file = {};
        last_refills = m_refills;
      }
      return usual_member(last_file);
    };
    const auto member = [&](std::string_view tensor) { return member_value(tensor, last_file); };
    return items('}', true, member, true, usual);
  }

  // A member's value, at its first byte, handed out with the member.
  bool member_value(std::string_view tensor, std::string_view& last_file)
  {
    if (m_at < m_end && *m_at == '"') {
      std::string_view file;
      if (!same_file(last_file)) {
        if (!string(file)) {
          return false;
        }
        const bool in_text = file.data() >= m_begin && file.data() < m_end;
        last_file = in_text ? file : std::string_view();
      }
      m_member(tensor, last_file.empty() ? &file : &last_file);
      return true;
    }
    if (!value(2)) {
      return false;
    }
    m_member(tensor, nullptr);
    return true;
  }

  // At a string's opening quote: whether it is `last_file` spelled alike, then passed.
  bool same_file(std::string_view last_file)
  {
    const size_t n = last_file.size();
    if (n > 0 && static_cast<size_t>(m_end - m_at) > n + 1 && m_at[n + 1] == '"' &&
        std::memcmp(m_at + 1, last_file.data(), n) == 0) {
      m_at += n + 2;
      return true;
    }
    return false;
  }

  // A member spelled `\n    "name": "file"` (the name without escapes), read and handed out
  // with no scan but the name's; false, nothing read, for any other spelling. The member's
  // bytes lie in the window: refill() leaves at least its margin ahead, or the text's end.
  bool usual_member(std::string_view& last_file)
  {
    constexpr std::string_view k_indent = IndentedEntryMatcher::k_start;
    const char* const start = m_at;
    if (static_cast<size_t>(m_end - start) < k_indent.size() + 4 ||
        std::memcmp(start, k_indent.data(), k_indent.size()) != 0) {
      return false;
    }
    const char* const name = start + k_indent.size();
    const char* const quote = find_string_special(name, m_end, m_high);
    if (m_end - quote < 4 || std::memcmp(quote, "\": \"", 4) != 0) {
      return false;
    }
    const std::string_view tensor(name, static_cast<size_t>(quote - name));
    m_at = quote + 3;
    if (!member_value(tensor, last_file)) {
      m_at = start;
      return false;
    }
    return true;
  }

  const char* m_begin;
  const char* m_at;
  const char* m_end;
  Window* m_window = nullptr; // null: the whole text is in [m_begin, m_end)
  unsigned m_refills = 0;
  WeightMapScan& m_out;
  const std::function<void(std::string_view, const std::string_view*)>& m_member;
  const std::function<void()>& m_restart;
  unsigned m_high = 0; // nonzero once a string held a byte of 0x80 or above
};

} // namespace

WeightMapScan
scan_weight_map(
  std::string_view json,
  const std::function<void(std::string_view tensor, const std::string_view* file)>& member,
  const std::function<void()>& restart)
{
  WeightMapScan out;
  Reader reader(json, out, member, restart);
  bool found = false;
  const bool read = reader.document(found);
  // Invalid UTF-8 anywhere makes the text invalid, with no offset. All-ASCII text, the usual
  // index, is not checked again.
  if ((!read || !reader.ascii_so_far()) && !simdjson::validate_utf8(json.data(), json.size())) {
    out.status = WeightMapScan::Status::invalid_json;
    return out;
  }
  if (!read) {
    out.status = WeightMapScan::Status::invalid_json;
    out.error_offset = reader.offset();
    return out;
  }
  out.status = found ? WeightMapScan::Status::ok : WeightMapScan::Status::no_weight_map;
  return out;
}

std::optional<WeightMapScan>
stream_weight_map(
  uint64_t size, const TextReader& read, size_t window,
  const std::function<void(std::string_view tensor, const std::string_view* file)>& member,
  const std::function<void()>& restart)
{
  window = std::max<size_t>(window, 64);
  const auto buffers = std::make_unique_for_overwrite<char[]>(2 * window);
  Window w{read,
           size,
           0,
           {buffers.get(), buffers.get() + window},
           1,
           window,
           static_cast<ptrdiff_t>(window / 16)};
  WeightMapScan out;
  Reader reader(w, out, member, restart);
  bool found = false;
  if (!reader.document(found) || !reader.ascii_so_far()) {
    return std::nullopt;
  }
  out.status = found ? WeightMapScan::Status::ok : WeightMapScan::Status::no_weight_map;
  return out;
}

namespace {

// Whether names sampled across the entries [begin, end) of a text, a few bytes at evenly spaced
// places, increase: the first name starting in each sample, after a newline and four spaces
// (where entries begin when indented). A sample holding no whole name, one with an escape, or
// the name the sample before found, tells nothing.
bool
samples_increase(const TextReader& read, uint64_t begin, uint64_t end)
{
  constexpr size_t k_samples = 16;
  constexpr size_t k_sample_size = 512;
  constexpr std::string_view k_entry = IndentedEntryMatcher::k_start;
  std::string last;
  uint64_t last_at = 0; // where `last` starts (samples can overlap)
  std::string sample;
  for (size_t k = 0; k < k_samples; ++k) {
    const uint64_t at = begin + (end - begin) / k_samples * k;
    sample.resize(static_cast<size_t>(std::min<uint64_t>(k_sample_size, end - at)));
    if (!read(at, sample)) {
      return true; // the comparison will read it, and say
    }
    const size_t start = sample.find(k_entry);
    const size_t close =
      start == std::string::npos ? start : sample.find('"', start + k_entry.size());
    if (close == std::string::npos || (!last.empty() && at + start <= last_at)) {
      continue;
    }
    const std::string_view name =
      std::string_view(sample).substr(start + k_entry.size(), close - start - k_entry.size());
    if (name.find('\\') != std::string_view::npos) {
      continue;
    }
    if (!last.empty() && name <= last) {
      return false;
    }
    last = name;
    last_at = at + start;
  }
  return true;
}

} // namespace

std::optional<IndentedEntries>
find_indented_entries(uint64_t size, const TextReader& read, size_t head)
{
  constexpr std::string_view k_open = "\"weight_map\": {";
  constexpr std::string_view k_entry = IndentedEntryMatcher::k_start;
  std::string front(static_cast<size_t>(std::min<uint64_t>(size, head)), '\0');
  if (!read(0, front)) {
    return std::nullopt;
  }
  const size_t open = front.find(std::string(k_open) + std::string(k_entry));
  if (open == std::string::npos) {
    return std::nullopt;
  }
  const uint64_t begin = open + k_open.size();
  std::string back(static_cast<size_t>(std::min<uint64_t>(size, 64)), '\0');
  const uint64_t back_at = size - back.size();
  if (!read(back_at, back)) {
    return std::nullopt;
  }
  // From the end: whitespace, the root's '}', whitespace, weight_map's '}', whitespace. (This
  // finds the end; the scan below decides.)
  size_t i = back.size();
  const auto skip_space = [&] {
    while (i > 0 && is_json_space(back[i - 1])) {
      --i;
    }
  };
  for (int brace = 0; brace < 2; ++brace) {
    skip_space();
    if (i == 0 || back[--i] != '}') {
      return std::nullopt;
    }
  }
  skip_space();
  const uint64_t end = back_at + i;
  if (i == 0 || end <= begin) {
    return std::nullopt;
  }
  // The text around the entries, with one entry between: that entry, found where it was put,
  // must be all that weight_map holds.
  std::string around = front.substr(0, begin);
  const size_t name_at = around.size() + k_entry.size();
  around += k_entry;
  around += "a\": \"b\"";
  around.append(back, i);
  // The last member reported is that entry (no weight_map can follow it, to drop it).
  bool ours = false;
  const auto member = [&](std::string_view tensor, const std::string_view* file) {
    ours = tensor.data() == around.data() + name_at && tensor.size() == 1 && file != nullptr &&
           *file == "b";
  };
  const auto restart = [] {};
  const WeightMapScan scan = scan_weight_map(around, member, restart);
  if (scan.status != WeightMapScan::Status::ok || !ours || !samples_increase(read, begin, end)) {
    return std::nullopt;
  }
  return IndentedEntries{begin, end};
}

std::optional<std::string>
indented_value(std::string_view file)
{
  for (const char c : file) {
    const auto byte = static_cast<unsigned char>(c);
    if (byte < 0x20 || byte > 0x7E || c == '"' || c == '\\') {
      return std::nullopt;
    }
  }
  std::string value = "\": \"";
  value += file;
  value += '"';
  return value;
}

IndentedEntryMatcher::IndentedEntryMatcher(const TextReader& read, uint64_t at, uint64_t end,
                                           bool first, std::span<char> buffer)
  : m_read(read), m_next(at), m_stop(std::max(at, end)), m_buffer(buffer), m_at(buffer.data()),
    m_end(buffer.data()), m_first(first)
{
}

bool
IndentedEntryMatcher::refill(size_t need)
{
  const auto kept = static_cast<size_t>(m_end - m_at);
  if (need > m_buffer.size()) {
    return false;
  }
  std::memmove(m_buffer.data(), m_at, kept);
  const auto more =
    static_cast<size_t>(std::min<uint64_t>(m_buffer.size() - kept, m_stop - m_next));
  if (more > 0 && !m_read(m_next, m_buffer.subspan(kept, more))) {
    return false;
  }
  m_next += more;
  m_at = m_buffer.data();
  m_end = m_buffer.data() + kept + more;
  return kept + more >= need;
}

} // namespace qcheck
