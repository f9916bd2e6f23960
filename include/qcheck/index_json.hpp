// The weight_map of a model.safetensors.index.json, read in one pass: the index can list 10^6
// tensors, and only this object matters. The whole text is checked as strict JSON (RFC 8259,
// UTF-8), as Python's json would refuse it; names and paths are views into the text.
#pragma once

#include <cstddef>
#include <cstdint>
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

} // namespace qcheck
