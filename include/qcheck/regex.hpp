// A linear-time matcher for the subset of Python `re` syntax that quantization configs use
// (`re:` ignore entries, GPTQ `dynamic` keys, AutoRound `extra_config` keys).
//
// Patterns come from untrusted files, so matching never backtracks: the pattern compiles to a
// Thompson NFA and the text is scanned once, keeping a set of live states (time O(text × states)).
// Constructs that need backtracking (back-references, look-around, conditionals) are refused at
// compile time with a message naming the construct, never silently mis-matched.
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "qcheck/expected.hpp"

namespace qcheck {

class Regex
{
public:
  // Compiles a Python-syntax pattern. Supported: literals, `.`, escapes (\d \w \s \D \W \S and
  // escaped punctuation, \t \n \r \f \v, \xHH), classes `[a-z_]` `[^...]` with escapes inside,
  // groups `(...)` `(?:...)` `(?P<name>...)`, alternation `|`, quantifiers `* + ? {m} {m,}
  // {m,n} {,n}` with lazy variants treated as greedy, anchors `^ $ \A \Z \b \B`, and
  // the inline flag `(?i)` at the start. Errors name the unsupported construct and its offset.
  static Expected<Regex> compile(std::string_view pattern);

  // re.match: the pattern matches a prefix of text (anchored at the start only).
  bool match(std::string_view text) const;
  // re.fullmatch: the pattern matches all of text.
  bool fullmatch(std::string_view text) const;
  // re.search: the pattern matches somewhere in text.
  bool search(std::string_view text) const;

  const std::string& pattern() const { return m_pattern; }

  struct Program; // compiled NFA, defined in regex.cpp

private:
  enum class Mode
  {
    match,
    fullmatch,
    search
  };
  bool run(std::string_view text, Mode mode) const;
  // False when text cannot match: it lacks a literal run every match holds, or does not end
  // with the run that ends the pattern where the match must reach the end.
  bool may_match(std::string_view text, Mode mode) const;

  std::string m_pattern;
  std::shared_ptr<const Program> m_program;
};

} // namespace qcheck
