#include "qcheck/patterns.hpp"

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
  size_t tail = 0;
  while (tail < pattern.size() && !is_meta(pattern[pattern.size() - 1 - tail])) {
    ++tail;
  }
  if (tail == pattern.size()) {
    return pattern == text;
  }
  if (tail > text.size() ||
      text.substr(text.size() - tail) != pattern.substr(pattern.size() - tail)) {
    return false;
  }
  size_t p = 0, t = 0;
  size_t star_p = std::string_view::npos, star_t = 0;
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
        const bool ok = match_bracket(pattern, p, text[t], end, valid);
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

bool
has_glob_chars(std::string_view text)
{
  return text.find_first_of("*?[") != std::string_view::npos;
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
