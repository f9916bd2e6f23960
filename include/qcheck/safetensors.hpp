// The safetensors header reader. Reads the 8-byte little-endian length and the JSON header,
// never the tensor data, and validates every field against the format. Violations become
// HeaderProblem values (data, not aborts); a header that cannot be read at all is marked
// unreadable but still returns whatever problems explain why.
#pragma once

#include <cstdint>
#include <cstring>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "qcheck/input.hpp"

namespace qcheck {

// Every dtype of the upstream format. `unknown` keeps its spelling in TensorInfo::dtype_name.
enum class Dtype : uint8_t
{
  BOOL,
  U8,
  I8,
  U16,
  I16,
  F16,
  BF16,
  U32,
  I32,
  F32,
  U64,
  I64,
  F64,
  C64,
  F8_E4M3,
  F8_E5M2,
  F8_E8M0,
  F8_E4M3FNUZ,
  F8_E5M2FNUZ,
  F6_E2M3,
  F6_E3M2,
  F4,
  unknown,
};

std::optional<Dtype> parse_dtype(std::string_view name);
std::string_view dtype_name(Dtype dtype);
// Bits per element (sub-byte types included); 0 for unknown.
unsigned dtype_bits(Dtype dtype);
// F16, BF16, F32 or F64: what an unquantized floating-point weight is stored as.
bool is_wide_float(Dtype dtype);

// A tensor's data_offsets: its bytes [begin, end) of the data region.
struct DataOffsets
{
  uint64_t begin = 0;
  uint64_t end = 0;
};

// One tensor entry. name(), shape() and dtype_text() view storage owned by the Header that
// holds the entry (or static storage), so they live as long as that Header.
class TensorInfo
{
public:
  // A shape of more dimensions is refused (HeaderIssue::bad_shape).
  static constexpr size_t k_max_rank = UINT16_MAX;

  std::string_view name() const { return {m_name, m_name_size}; }
  std::span<const uint64_t> shape() const { return {m_dims, m_rank}; }
  // `name` shorter than 4 GiB (a header is at most k_max_header_size bytes).
  void set_name(std::string_view name)
  {
    m_name = name.data();
    m_name_size = static_cast<uint32_t>(name.size());
  }
  // At most k_max_rank dimensions.
  void set_shape(std::span<const uint64_t> shape)
  {
    m_dims = shape.data();
    m_rank = static_cast<uint16_t>(shape.size());
  }

  // The dtype as the file spells it. An unknown dtype's spelling is stored right after the
  // name, after its length (4 bytes, native order).
  std::string_view dtype_text() const
  {
    if (dtype != Dtype::unknown) {
      return dtype_name(dtype);
    }
    const char* const after = m_name + m_name_size;
    uint32_t size = 0;
    std::memcpy(&size, after, sizeof size);
    return {after + sizeof size, size};
  }

private:
  const char* m_name = nullptr;
  const uint64_t* m_dims = nullptr;
  uint32_t m_name_size = 0;
  uint16_t m_rank = 0;

public:
  Dtype dtype = Dtype::unknown;
};
// 24 bytes: a checkpoint holds a million of them (its data_offsets are in Header::offsets).
static_assert(sizeof(TensorInfo) <= 24);

enum class HeaderIssue
{
  file_too_short,
  length_too_small,
  length_over_limit,
  length_beyond_file,
  length_large,
  bad_start,
  invalid_json,
  not_an_object,
  duplicate_tensor,
  bad_entry,
  missing_field,
  bad_dtype,
  unknown_dtype,
  bad_shape,
  shape_overflow,
  partial_byte,
  bad_offsets,
  size_mismatch,
  gap,
  overlap,
  data_size_mismatch,
  bad_metadata,
  read_failed,
};

struct HeaderProblem
{
  HeaderIssue issue;
  bool is_warning = false; // only `length_large` is a warning
  std::string tensor;      // empty when the problem is not about one tensor
  std::string message;     // one line, without the file name
};

// A parsed header. Move-only: `tensors` view `name_storage` and `dim_storage`, whose buffers a
// move keeps.
struct Header
{
  Header() = default;
  Header(Header&&) = default;
  Header& operator=(Header&&) = default;
  Header(const Header&) = delete;
  Header& operator=(const Header&) = delete;

  bool readable = false; // false: the tensor list could not be read at all
  bool sorted = false;   // `tensors` are in strictly increasing name order
  // Every name was read as written, no escape in it: none holds '"', '\\' or a control
  // character, so each is written back into JSON as it is.
  bool plain_names = false;
  uint64_t file_size = 0;
  uint64_t header_size = 0;        // N, the JSON length
  std::vector<TensorInfo> tensors; // in file order unless `sorted` was requested
  // offsets[i]: the data_offsets of tensors[i]; empty when the reader was asked not to keep
  // them (the layout is checked while parsing either way).
  std::vector<DataOffsets> offsets;
  std::vector<std::pair<std::string, std::string>> metadata;
  std::vector<HeaderProblem> problems;

  std::unique_ptr<char[]> name_storage; // decoded names and unknown dtype spellings
  std::vector<uint64_t> dim_storage;    // every shape, back to back
};

inline constexpr uint64_t k_max_header_size = 100'000'000;
inline constexpr uint64_t k_hub_header_size = 25'000'000;

// Parses header JSON (the N bytes after the length) for a file whose data region holds
// data_size bytes. Never throws; every violation is a problem in the result.
Header parse_header(std::string_view json, uint64_t data_size);

// parse_header with simdjson's DOM for every header. parse_header reads the usual header with a
// single-pass scanner of its own and leaves the rest to this path; both give the same Header
// for every input, which the tests and the fuzzer check.
Header parse_header_dom(std::string_view json, uint64_t data_size);

// Reads and parses the header of a whole safetensors file. With `sort_by_name`, `tensors` come
// out sorted by name (and Header::sorted is set) instead of in file order. Without
// `keep_offsets`, Header::offsets is left empty: 16 bytes a tensor a caller that only needs
// the layout checked (the checkpoint loader) does not hold.
Header read_header(const ByteSource& source, bool sort_by_name = false, bool keep_offsets = true);

} // namespace qcheck
