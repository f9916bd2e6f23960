// Name patterns as the engines spell them: Python fnmatch globs, and compiled pattern sets that
// answer "which entries match this name" without a per-name loop over every pattern.
#pragma once

#include <string>
#include <string_view>
#include <vector>

namespace qcheck {

// Python fnmatch.fnmatchcase: `*` any run (dots included), `?` one character, `[seq]`, `[!seq]`.
// A `[` without a closing `]` is a literal. Runs in O(pattern × text) at worst, no recursion.
bool fnmatch(std::string_view pattern, std::string_view text);

// True when the text contains any of `*?[` (so fnmatch may differ from equality).
bool has_glob_chars(std::string_view text);

// Splits a dotted name into its components.
std::vector<std::string_view> split_dots(std::string_view name);

} // namespace qcheck
