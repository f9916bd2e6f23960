#include "qcheck/safetensors.hpp"

#include <algorithm>
#include <array>
#include <cstring>
#include <fmt/format.h>
#include <fmt/ranges.h>
#include <memory>
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

class HeaderParser
{
public:
  HeaderParser(Header& out, uint64_t data_size) : m_out(out), m_data_size(data_size) {}

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
    m_out.readable = true;
    m_out.tensors.reserve(object.size());
    // Names are copied once into one buffer that never grows (decoded keys are never longer
    // than the JSON that holds them), so TensorInfo can view it.
    m_out.name_storage.reserve(json.size());
    // Duplicate keys: while tensor keys arrive in increasing order (the usual case) none can
    // repeat; from the first key out of order on, a hash set of every key seen.
    std::unordered_set<std::string_view> seen;
    bool in_order = true;
    bool has_metadata = false;
    std::optional<std::string_view> previous;
    for (auto field : object) {
      const std::string_view key = field.key;
      const bool is_metadata = key == "__metadata__";
      bool repeated = is_metadata && has_metadata;
      if (!is_metadata && in_order && previous && key <= *previous) {
        in_order = false;
        seen.reserve(object.size());
        for (auto earlier : object) {
          if (earlier.key.data() == key.data()) {
            break;
          }
          seen.insert(earlier.key);
        }
      }
      if (!is_metadata) {
        previous = key;
        repeated = !in_order && !seen.insert(key).second;
      }
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
    for (auto& [tensor, range] : m_shapes) {
      m_out.tensors[tensor].shape =
        std::span<const uint64_t>(m_out.dim_storage).subspan(range.first, range.second);
    }
    check_layout();
    // Dropped entries keep the order of the rest: strictly increasing while in_order held.
    m_out.sorted = in_order;
  }

private:
  static constexpr size_t k_max_depth = 64;

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

  // Copies text into name_storage, which parse() reserved large enough for every copy.
  std::string_view keep(std::string_view text)
  {
    auto& storage = m_out.name_storage;
    const size_t start = storage.size();
    storage.insert(storage.end(), text.begin(), text.end());
    return {storage.data() + start, text.size()};
  }

  void parse_tensor(std::string_view key, simdjson::dom::element value)
  {
    simdjson::dom::object entry;
    if (value.get_object().get(entry)) {
      problem(HeaderIssue::bad_entry, std::string(key),
              fmt::format("tensor '{}': entry is not an object", key));
      return;
    }
    // One pass over the entry's fields; the first of a repeated field counts, as at_key has it.
    simdjson::dom::element dtype_el, shape_el, offsets_el;
    bool has_dtype = false, has_shape = false, has_offsets = false;
    for (auto field : entry) {
      const std::string_view name = field.key;
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
    const auto dims = [&] {
      return std::span<const uint64_t>(m_out.dim_storage).subspan(dims_start);
    };
    TensorInfo tensor;
    const std::optional<Dtype> dtype = dtype_of(dtype_text);
    if (!dtype) {
      problem(HeaderIssue::unknown_dtype, std::string(key),
              fmt::format("tensor '{}': unknown dtype '{}'", key, dtype_text));
    }
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
    tensor.name = keep(key);
    tensor.dtype = dtype.value_or(Dtype::unknown);
    tensor.dtype_name = dtype ? dtype_name(*dtype) : keep(dtype_text);
    tensor.begin = begin;
    tensor.end = end;
    if (tensor.dtype != Dtype::unknown) {
      check_size(tensor, dims());
    }
    m_shapes.emplace_back(m_out.tensors.size(), std::pair{dims_start, dims().size()});
    m_out.tensors.push_back(tensor);
  }

  void check_size(const TensorInfo& tensor, std::span<const uint64_t> shape)
  {
    unsigned long long elements = 1;
    for (uint64_t dim : shape) {
      if (!checked_mul(elements, dim, elements)) {
        problem(HeaderIssue::shape_overflow, std::string(tensor.name),
                fmt::format("tensor '{}': shape {} has more elements than fit in 64 bits",
                            tensor.name, shape_text(shape)));
        return;
      }
    }
    unsigned long long bits = 0;
    if (!checked_mul(elements, dtype_bits(tensor.dtype), bits)) {
      problem(HeaderIssue::shape_overflow, std::string(tensor.name),
              fmt::format("tensor '{}': {} {} is larger than 2^64 bits", tensor.name,
                          tensor.dtype_name, shape_text(shape)));
      return;
    }
    if (bits % 8 != 0) {
      problem(HeaderIssue::partial_byte, std::string(tensor.name),
              fmt::format("tensor '{}': {} {} does not fill a whole number of bytes", tensor.name,
                          tensor.dtype_name, shape_text(shape)));
      return;
    }
    const uint64_t span = tensor.end - tensor.begin;
    if (span != bits / 8) {
      problem(HeaderIssue::size_mismatch, std::string(tensor.name),
              fmt::format("tensor '{}': data_offsets [{}, {}] hold {} bytes but {} {} needs {}",
                          tensor.name, tensor.begin, tensor.end, span, tensor.dtype_name,
                          shape_text(shape), bits / 8));
    }
  }

  void check_layout()
  {
    std::vector<const TensorInfo*> order;
    order.reserve(m_out.tensors.size());
    for (const auto& t : m_out.tensors) {
      order.push_back(&t);
    }
    const auto by_offset = [](const TensorInfo* a, const TensorInfo* b) {
      return a->begin != b->begin ? a->begin < b->begin : a->end < b->end;
    };
    if (!std::is_sorted(order.begin(), order.end(), by_offset)) {
      std::sort(order.begin(), order.end(), by_offset);
    }
    uint64_t expected = 0;
    const TensorInfo* previous = nullptr;
    for (const TensorInfo* t : order) {
      if (t->begin > expected) {
        problem(HeaderIssue::gap, std::string(t->name),
                previous ? fmt::format("tensor '{}': data starts at byte {}, leaving a gap of {} "
                                       "bytes after '{}'",
                                       t->name, t->begin, t->begin - expected, previous->name)
                         : fmt::format("tensor '{}': data starts at byte {}, leaving a gap of {} "
                                       "bytes at the start of the data region",
                                       t->name, t->begin, t->begin));
      } else if (t->begin < expected) {
        problem(HeaderIssue::overlap, std::string(t->name),
                fmt::format("tensor '{}': data [{}, {}) overlaps '{}', which ends at byte {}",
                            t->name, t->begin, t->end, previous->name, expected));
      }
      if (t->end >= expected) {
        expected = t->end;
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
    for (size_t i = 0; i < m_dtype_count; ++i) {
      if (m_dtypes_seen[i].first == text) {
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
  // Per tensor, its shape's range in dim_storage; spans are set once storage stops growing.
  std::vector<std::pair<size_t, std::pair<size_t, size_t>>> m_shapes;
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
  HeaderParser(header, data_size).parse(json, false);
  return header;
}

Header
read_header(const ByteSource& source, bool sort_by_name)
{
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
  HeaderParser(parsed, header.file_size - 8 - length).parse(std::string_view(json, length), true);
  parsed.file_size = header.file_size;
  if (sort_by_name && !parsed.sorted) {
    std::sort(parsed.tensors.begin(), parsed.tensors.end(),
              [](const TensorInfo& a, const TensorInfo& b) { return a.name < b.name; });
    parsed.sorted = true;
  }
  if (length > k_hub_header_size) {
    parsed.problems.insert(parsed.problems.begin(),
                           {HeaderIssue::length_large, true, "",
                            fmt::format("header is {} bytes; Hugging Face Hub clients refuse "
                                        "headers above {} bytes",
                                        length, k_hub_header_size)});
  }
  return parsed;
}

} // namespace qcheck
