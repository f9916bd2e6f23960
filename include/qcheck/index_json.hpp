// The weight_map of a model.safetensors.index.json, read in one pass: the index can list 10^6
// tensors, and only this object matters. The whole text is checked as strict JSON (RFC 8259,
// UTF-8), as Python's json would refuse it; names and paths are views into the text.
#pragma once

#include <cstddef>
#include <cstdint>
#include <cstring>
#include <deque>
#include <functional>
#include <optional>
#include <span>
#include <string>
#include <string_view>

namespace qcheck {

struct WeightMapScan
{
  enum class Status
  {
    ok,
    invalid_json,  // the text is not JSON: nothing may be used
    no_weight_map, // valid JSON, but the root has no "weight_map" object
  };
  Status status = Status::ok;
  size_t error_offset = 0; // for invalid_json: the byte where reading stopped
  // Strings that held escapes, decoded: the views handed out for them point here.
  std::deque<std::string> decoded;
};

// Calls `member(tensor, file)` for each member of the root's "weight_map" object, in text order;
// `file` is null when the value is not a string. When the root holds "weight_map" more than
// once, the last one counts, as in Python's json (and so in every engine): `restart()` is called
// before a later one is read, and the members reported until then must be dropped. The views
// stay valid while `json` and the result live. When the result is invalid_json, members already
// reported must be dropped.
WeightMapScan scan_weight_map(
  std::string_view json,
  const std::function<void(std::string_view tensor, const std::string_view* file)>& member,
  const std::function<void()>& restart);

// Fills `out` with the text's bytes from `offset` on; false when the read fails.
using TextReader = std::function<bool(uint64_t offset, std::span<char> out)>;

// scan_weight_map over a text of `size` bytes that `read` supplies a window at a time, so the
// text is never held whole: two buffers of `window` bytes (at least 64) are. A view handed to
// `member` stays valid through the next call of `member`, no longer (views of strings that held
// escapes: while the result lives). Gives ok or no_weight_map, the verdict the whole text would
// get, or nullopt when only scan_weight_map over the whole text can tell: the text is not JSON
// (that reader gives the offset), a string held a byte of 0x80 or above (UTF-8 is checked over
// the whole text), a read failed, or a member of the root object or of weight_map (or a root
// that is not an object) ran past the bytes in memory when it began: one of window / 16 bytes
// or less always fits. Members reported before a nullopt must be dropped.
std::optional<WeightMapScan> stream_weight_map(
  uint64_t size, const TextReader& read, size_t window,
  const std::function<void(std::string_view tensor, const std::string_view* file)>& member,
  const std::function<void()>& restart);

// Where the entries of an index written as Python's json.dumps(indent=2) writes it (transformers'
// save_pretrained, huggingface_hub) lie: "weight_map" is the root's last member, its entries
// one per line indented by four spaces, and only the two closing braces and whitespace follow.
// `begin` is the offset just after weight_map's '{', `end` just after its last entry.
struct IndentedEntries
{
  uint64_t begin = 0;
  uint64_t end = 0;
};

// Finds IndentedEntries in a text of `size` bytes, reading its first `head` bytes and its last
// 64, and checks the text around them: it is returned only when the whole text, were
// [begin, end) one or more members as IndentedEntryMatcher compares them, would be JSON whose
// weight_map scan_weight_map reads as exactly those members. nullopt otherwise, when a read
// fails, or when names sampled across the entries (16 places, 512 bytes each) do not increase:
// entries not in name order are never the merged tensors' (the text is then read another way).
std::optional<IndentedEntries> find_indented_entries(uint64_t size, const TextReader& read,
                                                     size_t head = size_t{16} << 10);

// What follows a name in an indented entry whose value is `file`: `": "file"`. nullopt when
// `file` holds a byte outside printable ASCII, '"' or '\\' (it would need escapes).
std::optional<std::string> indented_value(std::string_view file);

// Compares a stretch of IndentedEntries with the entries it should hold, one at a time, reading
// the text a window at a time into `buffer`. Names given must be JSON string contents that need
// no escape (no '"', '\\' or control character; UTF-8).
class IndentedEntryMatcher
{
public:
  // How an indented entry starts, after the comma of the one before: a newline, four spaces and
  // the name's opening quote.
  static constexpr std::string_view k_start = "\n    \"";

  // The stretch [at, end) of the text; `first`: the entry at `at` is weight_map's first (no
  // comma before it).
  IndentedEntryMatcher(const TextReader& read, uint64_t at, uint64_t end, bool first,
                       std::span<char> buffer);
  // Whether the next entry in the text is `name` with `value` (from indented_value()). After a
  // false every call gives false.
  bool next(std::string_view name, std::string_view value)
  {
    const size_t need = name.size() + value.size() + k_start.size() + (m_first ? 0 : 1);
    if (!m_matching || (static_cast<size_t>(m_end - m_at) < need && !refill(need))) {
      return m_matching = false;
    }
    const char* p = m_at;
    if (!m_first && *p++ != ',') {
      return m_matching = false;
    }
    m_first = false;
    const char* const name_at = p + k_start.size();
    if (std::memcmp(p, k_start.data(), k_start.size()) != 0 ||
        std::memcmp(name_at, name.data(), name.size()) != 0 ||
        std::memcmp(name_at + name.size(), value.data(), value.size()) != 0) {
      return m_matching = false;
    }
    m_at += need;
    return true;
  }
  // The offset of the first byte not matched yet.
  uint64_t offset() const { return m_next - static_cast<uint64_t>(m_end - m_at); }

private:
  bool refill(size_t need);

  const TextReader& m_read;
  uint64_t m_next; // the first byte not read into the buffer
  uint64_t m_stop; // the stretch's end
  std::span<char> m_buffer;
  const char* m_at;  // the next byte to compare, in the buffer
  const char* m_end; // the end of the bytes read
  bool m_first;
  bool m_matching = true;
};

} // namespace qcheck
