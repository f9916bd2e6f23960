#include "qcheck/patterns.hpp"

#include <algorithm>
#include <cctype>

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

namespace qcheck {

namespace {

constexpr uint64_t k_base = 0x100000001b3ull;
constexpr size_t k_reverse_window = 24;

bool
is_wildcard(char c)
{
  return c == '*' || c == '?' || c == '[' || c == ']';
}

char
fold(char c, bool case_insensitive)
{
  return case_insensitive && c >= 'A' && c <= 'Z' ? static_cast<char>(c - 'A' + 'a') : c;
}

uint64_t
mix(uint64_t hash, size_t length)
{
  return hash ^ (static_cast<uint64_t>(length) * 0x9e3779b97f4a7c15ull);
}

uint64_t
hash_text(std::string_view text, bool case_insensitive)
{
  uint64_t h = 0;
  for (char c : text) {
    h = h * k_base + static_cast<unsigned char>(fold(c, case_insensitive));
  }
  return mix(h, text.size());
}

// Prefix hashes of one name: the hash of any window in O(1). Uses the thread's buffers, so
// one instance at a time per thread.
class WindowHashes
{
public:
  WindowHashes(std::string_view text, bool case_insensitive)
  {
    thread_local std::vector<uint64_t> prefix, power;
    m_prefix = &prefix;
    m_power = &power;
    compute(text, case_insensitive);
  }
  uint64_t window(size_t begin, size_t end) const
  {
    return mix((*m_prefix)[end] - (*m_prefix)[begin] * (*m_power)[end - begin], end - begin);
  }

private:
  void compute(std::string_view text, bool case_insensitive)
  {
    std::vector<uint64_t>& prefix = *m_prefix;
    std::vector<uint64_t>& power = *m_power;
    prefix.resize(text.size() + 1);
    power.resize(text.size() + 1);
    prefix[0] = 0;
    power[0] = 1;
    for (size_t i = 0; i < text.size(); ++i) {
      prefix[i + 1] = prefix[i] * k_base + static_cast<unsigned char>(fold(text[i], case_insensitive));
      power[i + 1] = power[i] * k_base;
    }
  }

  std::vector<uint64_t>* m_prefix;
  std::vector<uint64_t>* m_power;
};

void
mark_length(std::vector<bool>& lengths, size_t length)
{
  if (lengths.size() <= length) {
    lengths.resize(length + 1, false);
  }
  lengths[length] = true;
}

bool
has_length(const std::vector<bool>& lengths, size_t length)
{
  return length < lengths.size() && lengths[length];
}

// The longest run of literal characters of a glob, outside bracket expressions.
std::string_view
longest_glob_run(std::string_view glob)
{
  std::string_view best;
  size_t start = 0;
  const auto close = [&](size_t end) {
    if (end > start && end - start > best.size()) {
      best = glob.substr(start, end - start);
    }
  };
  for (size_t i = 0; i < glob.size(); ++i) {
    const char c = glob[i];
    if (c == '[') {
      close(i);
      size_t j = i + 1;
      j += j < glob.size() && glob[j] == '!' ? 1 : 0;
      j += j < glob.size() && glob[j] == ']' ? 1 : 0;
      while (j < glob.size() && glob[j] != ']') {
        ++j;
      }
      i = j < glob.size() ? j : i;
      start = i + 1;
    } else if (is_wildcard(c)) {
      close(i);
      start = i + 1;
    }
  }
  close(glob.size());
  return best;
}

} // namespace

std::string
regex_literal_start(std::string_view regex)
{
  if (regex.find('|') != std::string_view::npos) {
    return {}; // an alternative may start otherwise
  }
  std::string out;
  size_t i = 0;
  while (i < regex.size()) {
    const char c = regex[i];
    if (c == '\\' && i + 1 < regex.size() &&
        !std::isalnum(static_cast<unsigned char>(regex[i + 1]))) {
      out += regex[i + 1];
      i += 2;
    } else if (std::string_view(".^$*+?{}[]()|\\").find(c) == std::string_view::npos &&
               static_cast<unsigned char>(c) < 0x80) {
      out += c;
      ++i;
    } else {
      break;
    }
  }
  // A quantifier that allows zero repeats makes the last character optional.
  if (i < regex.size() && (regex[i] == '*' || regex[i] == '?' || regex[i] == '{') &&
      !out.empty()) {
    out.pop_back();
  }
  return out;
}

EntryIndex::EntryIndex(const std::vector<std::vector<std::string>>& keys, const Options& options)
  : m_options(options), m_size(keys.size())
{
  const bool ci = options.case_insensitive;
  for (uint32_t entry = 0; entry < keys.size(); ++entry) {
    bool always = false;
    for (const std::string& key : keys[entry]) {
      if (options.regex_entries && key.starts_with("re:")) {
        // Every engine anchors these at the name's start: its literal start must begin a name.
        const std::string start = regex_literal_start(std::string_view(key).substr(3));
        if (start.empty()) {
          always = true;
        } else {
          m_prefixes.keys.push_back({hash_text(start, ci), entry});
          mark_length(m_prefix_lengths, start.size());
        }
        continue;
      }
      const size_t wildcard =
        options.globs ? static_cast<size_t>(std::find_if(key.begin(), key.end(), is_wildcard) -
                                            key.begin())
                      : key.size();
      // A glob's literal start, without trailing dots: "X.*" may also stand for "X" itself.
      size_t prefix = wildcard;
      while (prefix > 0 && key[prefix - 1] == '.') {
        --prefix;
      }
      if (wildcard == key.size()) {
        m_literal.keys.push_back({hash_text(key, ci), entry});
        mark_length(m_literal_lengths, key.size());
      } else if (prefix == 0) {
        // "*x*": its longest literal run occurs somewhere in any name it matches.
        const std::string_view run = longest_glob_run(key);
        if (run.empty()) {
          always = true;
        } else {
          m_runs.keys.push_back({hash_text(run, ci), entry});
          mark_length(m_run_lengths, run.size());
        }
      } else {
        m_prefixes.keys.push_back({hash_text(std::string_view(key).substr(0, prefix), ci), entry});
        mark_length(m_prefix_lengths, prefix);
      }
      if (options.parents) {
        const size_t dot = key.rfind('.');
        m_parents.keys.push_back(
          {hash_text(dot == std::string::npos ? std::string_view() : std::string_view(key).substr(0, dot), ci),
           entry});
      }
    }
    if (!options.reverse_marker.empty() && !keys[entry].empty()) {
      const std::string& key = keys[entry].front();
      for (size_t at = key.find(options.reverse_marker); at != std::string::npos;
           at = key.find(options.reverse_marker, at + 1)) {
        const size_t end = at + options.reverse_marker.size();
        if (m_reverse_all.empty() || m_reverse_all.back() != entry) {
          m_reverse_all.push_back(entry);
        }
        if (end >= k_reverse_window) {
          m_reverse.keys.push_back(
            {hash_text(std::string_view(key).substr(end - k_reverse_window, k_reverse_window), ci),
             entry});
        }
      }
    }
    if (always) {
      m_always.push_back(entry);
    }
  }
  for (Table* t : {&m_literal, &m_prefixes, &m_runs, &m_parents, &m_reverse}) {
    t->seal();
  }
}

void
EntryIndex::Table::seal()
{
  std::sort(keys.begin(), keys.end());
  unsigned bits = 1;
  while ((size_t{1} << bits) < keys.size() && bits < 24) {
    ++bits;
  }
  shift = 64 - bits;
  directory.assign((size_t{1} << bits) + 1, 0);
  size_t k = 0;
  for (size_t slot = 0; slot < directory.size(); ++slot) {
    while (k < keys.size() && (keys[k].hash >> shift) < slot) {
      ++k;
    }
    directory[slot] = static_cast<uint32_t>(k);
  }
}

void
EntryIndex::Table::lookup(uint64_t hash, std::vector<uint32_t>& out) const
{
  if (keys.empty()) {
    return;
  }
  const size_t slot = hash >> shift;
  for (uint32_t k = directory[slot]; k < directory[slot + 1]; ++k) {
    if (keys[k].hash == hash) {
      out.push_back(keys[k].entry);
    }
  }
}

void
EntryIndex::candidates(std::span<const std::string_view> names, std::vector<uint32_t>& out) const
{
  const size_t first = out.size();
  const bool ci = m_options.case_insensitive;
  for (const std::string_view name : names) {
    const WindowHashes h(name, ci);
    const size_t n = name.size();
    thread_local std::vector<size_t> starts, ends;
    starts.assign(1, 0);
    ends.clear();
    for (size_t i = 0; i < n; ++i) {
      if (name[i] == '.') {
        ends.push_back(i);
        starts.push_back(i + 1);
      }
    }
    ends.push_back(n);
    // Whole keys.
    switch (m_options.mode) {
    case Mode::exact:
      m_literal.lookup(h.window(0, n), out);
      break;
    case Mode::ancestors:
      for (size_t end : ends) {
        if (has_length(m_literal_lengths, end)) {
          m_literal.lookup(h.window(0, end), out);
        }
      }
      break;
    case Mode::dotted:
      for (size_t s : starts) {
        for (size_t e : ends) {
          if (e > s && has_length(m_literal_lengths, e - s)) {
            m_literal.lookup(h.window(s, e), out);
          }
        }
      }
      break;
    case Mode::substring:
      for (size_t length = 1; length <= n && length < m_literal_lengths.size(); ++length) {
        if (m_literal_lengths[length]) {
          for (size_t s = 0; s + length <= n; ++s) {
            m_literal.lookup(h.window(s, s + length), out);
          }
        }
      }
      break;
    }
    // Glob prefixes: where a full match puts the literal text before the first wildcard.
    if (!m_prefixes.keys.empty()) {
      for (size_t length = 1; length <= n && length < m_prefix_lengths.size(); ++length) {
        if (!m_prefix_lengths[length]) {
          continue;
        }
        if (m_options.mode == Mode::substring) {
          for (size_t s = 0; s + length <= n; ++s) {
            m_prefixes.lookup(h.window(s, s + length), out);
          }
        } else if (m_options.mode == Mode::dotted) {
          for (size_t s : starts) {
            if (s + length <= n) {
              m_prefixes.lookup(h.window(s, s + length), out);
            }
          }
        } else {
          m_prefixes.lookup(h.window(0, length), out);
        }
      }
    }
    for (size_t length = 1; length <= n && length < m_run_lengths.size(); ++length) {
      if (m_run_lengths[length]) {
        for (size_t s = 0; s + length <= n; ++s) {
          m_runs.lookup(h.window(s, s + length), out);
        }
      }
    }
    if (m_options.parents) {
      m_parents.lookup(h.window(0, ends.size() > 1 ? ends[ends.size() - 2] : 0), out);
    }
    if (!m_options.reverse_marker.empty() && name == names.front()) {
      const size_t at = name.find(m_options.reverse_marker);
      if (at != std::string_view::npos) {
        const size_t end = at + m_options.reverse_marker.size();
        if (end >= k_reverse_window) {
          m_reverse.lookup(h.window(end - k_reverse_window, end), out);
        } else {
          out.insert(out.end(), m_reverse_all.begin(), m_reverse_all.end());
        }
      }
    }
  }
  out.insert(out.end(), m_always.begin(), m_always.end());
  std::sort(out.begin() + static_cast<std::ptrdiff_t>(first), out.end());
  out.erase(std::unique(out.begin() + static_cast<std::ptrdiff_t>(first), out.end()), out.end());
}

} // namespace qcheck
