// Fuzzes the name matchers. The input is split at its first NUL byte into a pattern and a text
// (without a NUL, the input is both). Regex::compile must fail cleanly or give a matcher whose
// answers are consistent (fullmatch implies match implies search); fnmatch must agree with the
// Regex translation of the same glob on the inputs where the two are meant to coincide.
#include <cstdint>
#include <string>
#include <string_view>

#include "fuzz_check.hpp"
#include "qcheck/patterns.hpp"
#include "qcheck/regex.hpp"

using namespace qcheck;

namespace {

bool
is_plain_ascii(std::string_view text)
{
  for (const char c : text) {
    if (c < 0x20 || c > 0x7e) {
      return false;
    }
  }
  return true;
}

bool
is_alnum(char c)
{
  return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9');
}

// A glob without bracket expressions as a Python regex, as fnmatch.translate writes it.
std::string
glob_to_regex(std::string_view glob)
{
  std::string out;
  for (const char c : glob) {
    if (c == '*') {
      out += ".*";
    } else if (c == '?') {
      out += '.';
    } else if (is_alnum(c) || c == '_') {
      out += c;
    } else {
      out += '\\';
      out += c;
    }
  }
  return out;
}

void
check_regex(std::string_view pattern, std::string_view text)
{
  const auto regex = Regex::compile(pattern);
  if (!regex) {
    QCHECK_FUZZ_CHECK(!regex.error().empty());
    QCHECK_FUZZ_CHECK(regex.error().find('\n') == std::string::npos);
    return;
  }
  QCHECK_FUZZ_CHECK(regex->pattern() == pattern);
  const bool full = regex->fullmatch(text);
  const bool prefix = regex->match(text);
  const bool anywhere = regex->search(text);
  QCHECK_FUZZ_CHECK(!full || prefix);
  QCHECK_FUZZ_CHECK(!prefix || anywhere);
}

void
check_fnmatch(std::string_view pattern, std::string_view text)
{
  const bool matched = fnmatch(pattern, text);
  QCHECK_FUZZ_CHECK(fnmatch("*", text));
  QCHECK_FUZZ_CHECK(fnmatch(text, text) || has_glob_chars(text));
  if (pattern.find('[') == std::string_view::npos && is_plain_ascii(pattern) &&
      is_plain_ascii(text)) {
    const auto regex = Regex::compile(glob_to_regex(pattern));
    // Only the instruction limit may refuse a translated glob.
    if (regex) {
      QCHECK_FUZZ_CHECK(regex->fullmatch(text) == matched);
    }
  }
  const auto parts = split_dots(text);
  std::string joined;
  for (size_t i = 0; i < parts.size(); ++i) {
    joined += i == 0 ? "" : ".";
    joined += parts[i];
  }
  QCHECK_FUZZ_CHECK(joined == text);
}

} // namespace

extern "C" int
LLVMFuzzerTestOneInput(const uint8_t* data, size_t size)
{
  const std::string_view input(reinterpret_cast<const char*>(data), size);
  const size_t nul = input.find('\0');
  const std::string_view pattern = nul == std::string_view::npos ? input : input.substr(0, nul);
  const std::string_view text = nul == std::string_view::npos ? input : input.substr(nul + 1);
  check_regex(pattern, text);
  check_fnmatch(pattern, text);
  return 0;
}
