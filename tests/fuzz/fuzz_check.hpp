// Shared by the fuzz targets: a property check that names itself before trapping, so a crash
// report says which property failed, and the split of an input into entries and names.
#pragma once

#include <algorithm>
#include <cstdint>
#include <cstdio>
#include <string_view>
#include <vector>

#define QCHECK_FUZZ_CHECK(condition)                                                               \
  do {                                                                                             \
    if (!(condition)) {                                                                            \
      std::fprintf(stderr, "property violated: %s (%s:%d)\n", #condition, __FILE__, __LINE__);     \
      __builtin_trap();                                                                            \
    }                                                                                              \
  } while (false)

// An input's lines up to its first empty line (entries, keys) and after it (names), each cut to
// `max_line` bytes; lines past `max_entries` entries or `max_names` names are dropped.
struct FuzzLines
{
  std::vector<std::string_view> entries;
  std::vector<std::string_view> names;
};

inline FuzzLines
split_fuzz_lines(std::string_view rest, size_t max_line = SIZE_MAX, size_t max_entries = SIZE_MAX,
                 size_t max_names = SIZE_MAX)
{
  FuzzLines out;
  bool in_names = false;
  while (!rest.empty()) {
    const size_t newline = std::min(rest.find('\n'), rest.size());
    const std::string_view line = rest.substr(0, std::min(newline, max_line));
    rest.remove_prefix(std::min(newline + 1, rest.size()));
    if (!in_names && line.empty()) {
      in_names = true;
    } else if (in_names && out.names.size() < max_names) {
      out.names.push_back(line);
    } else if (!in_names && out.entries.size() < max_entries) {
      out.entries.push_back(line);
    }
  }
  return out;
}
