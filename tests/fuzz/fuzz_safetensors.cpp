// Fuzzes the safetensors header reader: the input is a whole file (8-byte little-endian length,
// header JSON, data), read through MemoryFileSystem with read_header; its header part is also
// parsed directly with parse_header (the unpadded path) and with parse_header_dom, which must
// agree, and read again sorted by name. Checks the Header invariants.
#include <algorithm>
#include <cstdint>
#include <map>
#include <set>
#include <string>
#include <string_view>
#include <vector>

#include "fuzz_check.hpp"
#include "qcheck/input.hpp"
#include "qcheck/safetensors.hpp"

using namespace qcheck;

namespace {

void
check_header(const Header& header)
{
  if (!header.readable) {
    QCHECK_FUZZ_CHECK(header.tensors.empty());
    QCHECK_FUZZ_CHECK(!header.problems.empty());
  }
  for (const HeaderProblem& problem : header.problems) {
    QCHECK_FUZZ_CHECK(!problem.message.empty());
    QCHECK_FUZZ_CHECK(problem.is_warning == (problem.issue == HeaderIssue::length_large));
  }
  std::set<std::string_view> names;
  QCHECK_FUZZ_CHECK(header.offsets.size() == header.tensors.size());
  for (const DataOffsets& offsets : header.offsets) {
    QCHECK_FUZZ_CHECK(offsets.begin <= offsets.end);
  }
  for (const TensorInfo& tensor : header.tensors) {
    QCHECK_FUZZ_CHECK(names.insert(tensor.name()).second);
    if (tensor.dtype != Dtype::unknown) {
      QCHECK_FUZZ_CHECK(tensor.dtype_text() == dtype_name(tensor.dtype));
      QCHECK_FUZZ_CHECK(dtype_bits(tensor.dtype) > 0);
    }
  }
}

// The scanner for the usual header and simdjson's DOM must give the same Header.
void
check_same(const Header& a, const Header& b)
{
  QCHECK_FUZZ_CHECK(a.readable == b.readable && a.sorted == b.sorted);
  QCHECK_FUZZ_CHECK(a.tensors.size() == b.tensors.size());
  for (size_t i = 0; i < a.tensors.size(); ++i) {
    const TensorInfo& x = a.tensors[i];
    const TensorInfo& y = b.tensors[i];
    QCHECK_FUZZ_CHECK(x.name() == y.name() && x.dtype_text() == y.dtype_text() &&
                      x.dtype == y.dtype);
    QCHECK_FUZZ_CHECK(
      std::equal(x.shape().begin(), x.shape().end(), y.shape().begin(), y.shape().end()));
    QCHECK_FUZZ_CHECK(a.offsets[i].begin == b.offsets[i].begin &&
                      a.offsets[i].end == b.offsets[i].end);
  }
  QCHECK_FUZZ_CHECK(a.metadata == b.metadata);
  QCHECK_FUZZ_CHECK(a.problems.size() == b.problems.size());
  for (size_t i = 0; i < a.problems.size(); ++i) {
    QCHECK_FUZZ_CHECK(a.problems[i].issue == b.problems[i].issue);
    QCHECK_FUZZ_CHECK(a.problems[i].tensor == b.problems[i].tensor);
    QCHECK_FUZZ_CHECK(a.problems[i].message == b.problems[i].message);
  }
}

// Whether read_header got past the length checks and parsed the JSON.
bool
reached_json(const Header& header)
{
  if (header.problems.empty()) {
    return true;
  }
  switch (header.problems.front().issue) {
  case HeaderIssue::file_too_short:
  case HeaderIssue::length_too_small:
  case HeaderIssue::length_over_limit:
  case HeaderIssue::length_beyond_file:
  case HeaderIssue::length_large:
  case HeaderIssue::read_failed:
    return false;
  default:
    return true;
  }
}

} // namespace

extern "C" int
LLVMFuzzerTestOneInput(const uint8_t* data, size_t size)
{
  const std::string_view bytes(reinterpret_cast<const char*>(data), size);

  MemoryFileSystem fs;
  fs.add_file("model.safetensors", std::string(bytes));
  auto source = fs.open("model.safetensors");
  QCHECK_FUZZ_CHECK(source.has_value());
  const Header header = read_header(**source);
  check_header(header);
  QCHECK_FUZZ_CHECK(header.file_size == size);
  if (header.readable) {
    QCHECK_FUZZ_CHECK(header.header_size >= 2 && header.header_size <= k_max_header_size);
    QCHECK_FUZZ_CHECK(header.header_size <= size - 8);
  }

  // Sorted by name, as the checkpoint loader reads it: the same tensors and problems, and the
  // names strictly increasing.
  const Header by_name = read_header(**source, true);
  check_header(by_name);
  QCHECK_FUZZ_CHECK(by_name.readable == header.readable);
  QCHECK_FUZZ_CHECK(by_name.problems.size() == header.problems.size());
  for (size_t i = 0; i < header.problems.size(); ++i) {
    QCHECK_FUZZ_CHECK(by_name.problems[i].message == header.problems[i].message);
  }
  if (by_name.readable) {
    QCHECK_FUZZ_CHECK(by_name.sorted);
  }
  std::vector<std::string_view> names, sorted_names;
  for (const TensorInfo& tensor : header.tensors) {
    names.push_back(tensor.name());
  }
  for (const TensorInfo& tensor : by_name.tensors) {
    sorted_names.push_back(tensor.name());
  }
  std::sort(names.begin(), names.end());
  QCHECK_FUZZ_CHECK(names == sorted_names);
  // Offsets move with their names.
  std::map<std::string_view, std::pair<uint64_t, uint64_t>> offsets_of;
  for (size_t i = 0; i < header.tensors.size(); ++i) {
    offsets_of[header.tensors[i].name()] = {header.offsets[i].begin, header.offsets[i].end};
  }
  for (size_t i = 0; i < by_name.tensors.size(); ++i) {
    QCHECK_FUZZ_CHECK(offsets_of[by_name.tensors[i].name()] ==
                      std::make_pair(by_name.offsets[i].begin, by_name.offsets[i].end));
  }
  // As the checkpoint loader reads it, without offsets: the same tensors and problems.
  const Header lean = read_header(**source, true, false);
  QCHECK_FUZZ_CHECK(lean.offsets.empty());
  QCHECK_FUZZ_CHECK(lean.readable == by_name.readable && lean.sorted == by_name.sorted);
  QCHECK_FUZZ_CHECK(lean.tensors.size() == by_name.tensors.size());
  for (size_t i = 0; i < lean.tensors.size(); ++i) {
    QCHECK_FUZZ_CHECK(lean.tensors[i].name() == by_name.tensors[i].name());
  }
  QCHECK_FUZZ_CHECK(lean.problems.size() == by_name.problems.size());
  for (size_t i = 0; i < lean.problems.size(); ++i) {
    QCHECK_FUZZ_CHECK(lean.problems[i].message == by_name.problems[i].message);
  }

  // The header part on its own, whatever the length field says.
  if (size >= 8) {
    const std::string_view json = bytes.substr(8);
    const uint64_t declared = header.header_size;
    const std::string_view part = declared <= json.size() ? json.substr(0, declared) : json;
    const Header parsed = parse_header(part, json.size() - part.size());
    check_header(parsed);
    check_same(parsed, parse_header_dom(part, json.size() - part.size()));
    QCHECK_FUZZ_CHECK(parsed.header_size == part.size());
    if (reached_json(header)) {
      // Same bytes, same data size: the padded and unpadded paths must agree.
      QCHECK_FUZZ_CHECK(parsed.readable == header.readable);
      QCHECK_FUZZ_CHECK(parsed.tensors.size() == header.tensors.size());
      QCHECK_FUZZ_CHECK(parsed.problems.size() == header.problems.size());
      for (size_t i = 0; i < parsed.problems.size(); ++i) {
        QCHECK_FUZZ_CHECK(parsed.problems[i].message == header.problems[i].message);
      }
    }
  }
  return 0;
}
