#include "qcheck/settings.hpp"

#include <algorithm>
#include <fmt/format.h>
#include <map>
#include <nlohmann/json.hpp>
#include <set>
#include <span>

#include "qcheck/json_text.hpp"

namespace qcheck {

namespace {

using Json = nlohmann::ordered_json;

Expected<const Rule*>
rule_named(const std::string& file, const std::string& name)
{
  if (const Rule* r = find_rule(name)) {
    return r;
  }
  return unexpected(fmt::format("{}: {}", file, unknown_rule_message(name)));
}

bool
rule_matches_prefix(const Rule& r, const std::string& prefix)
{
  std::string upper = prefix;
  std::transform(upper.begin(), upper.end(), upper.begin(),
                 [](unsigned char c) { return static_cast<char>(std::toupper(c)); });
  return std::string_view(r.code).starts_with(upper) ||
         std::string_view(r.name).starts_with(prefix);
}

Expected<std::vector<std::string>>
string_list(const std::string& file, const Json& j, const char* key)
{
  std::vector<std::string> out;
  if (!j.contains(key)) {
    return out;
  }
  if (!j[key].is_array()) {
    return unexpected(fmt::format("{}: '{}' must be a list of strings", file, key));
  }
  for (const auto& e : j[key]) {
    if (!e.is_string()) {
      return unexpected(fmt::format("{}: '{}' must be a list of strings", file, key));
    }
    out.push_back(e.get<std::string>());
  }
  return out;
}

} // namespace

bool
selects_some_rule(const std::string& prefix)
{
  return std::any_of(all_rules().begin(), all_rules().end(),
                     [&](const Rule& r) { return rule_matches_prefix(r, prefix); });
}

Expected<Settings>
parse_settings(const std::string& file, std::string_view text)
{
  if (auto span = locate(text, ""); !span) {
    return unexpected(fmt::format("{}: {}", file, span.error()));
  }
  const Json j = Json::parse(text, nullptr, false);
  if (j.is_discarded() || !j.is_object()) {
    return unexpected(fmt::format("{}: must be a JSON object", file));
  }
  Settings s;
  s.file = file;
  static const std::set<std::string> k_keys{"engines", "fail_on", "select", "ignore", "severity"};
  for (const auto& [key, _] : j.items()) {
    if (!k_keys.contains(key)) {
      return unexpected(fmt::format("{}: unknown key '{}' (known: engines, fail_on, select, "
                                    "ignore, severity)",
                                    file, key));
    }
  }
  auto engines = string_list(file, j, "engines");
  if (!engines) {
    return unexpected(engines.error());
  }
  if (j.contains("engines")) {
    s.engines.clear();
    for (const auto& name : *engines) {
      auto it = std::find_if(k_all_engines.begin(), k_all_engines.end(),
                             [&](Engine e) { return to_string(e) == name; });
      if (it == k_all_engines.end()) {
        return unexpected(
          fmt::format("{}: unknown engine '{}' (vllm, sglang, trtllm)", file, name));
      }
      s.engines.push_back(*it);
    }
    if (s.engines.empty()) {
      // No engine would mean no check at all: a gate that always passes.
      return unexpected(fmt::format("{}: 'engines' is empty (name at least one of vllm, sglang, "
                                    "trtllm)",
                                    file));
    }
  }
  if (j.contains("fail_on")) {
    const auto severity =
      j["fail_on"].is_string() ? parse_severity(j["fail_on"].get<std::string>()) : std::nullopt;
    if (!severity) {
      return unexpected(
        fmt::format("{}: 'fail_on' must be \"error\", \"warning\" or \"info\"", file));
    }
    s.fail_on = severity;
  }
  auto select = string_list(file, j, "select");
  auto ignore = string_list(file, j, "ignore");
  if (!select) {
    return unexpected(select.error());
  }
  if (!ignore) {
    return unexpected(ignore.error());
  }
  for (const auto& prefix : *select) {
    if (!selects_some_rule(prefix)) {
      return unexpected(fmt::format("{}: 'select' entry '{}' matches no rule", file, prefix));
    }
  }
  for (const auto& name : *ignore) {
    if (auto r = rule_named(file, name); !r) {
      return unexpected(r.error());
    }
  }
  s.select = *select;
  s.ignore = *ignore;
  if (j.contains("severity")) {
    if (!j["severity"].is_object()) {
      return unexpected(fmt::format("{}: 'severity' must map rule names to severities", file));
    }
    for (const auto& [name, value] : j["severity"].items()) {
      auto r = rule_named(file, name);
      if (!r) {
        return unexpected(r.error());
      }
      const auto severity =
        value.is_string() ? parse_severity(value.get<std::string>()) : std::nullopt;
      if (!severity) {
        return unexpected(fmt::format("{}: severity of '{}' must be \"error\", \"warning\" or "
                                      "\"info\"",
                                      file, name));
      }
      s.severity.emplace_back((*r)->id, *severity);
    }
  }
  return s;
}

std::optional<std::string>
find_settings(const FileSystem& fs, const std::string& folder)
{
  std::string dir = folder;
  while (!dir.empty()) {
    const std::string candidate =
      dir == "/" ? std::string("/") + k_settings_name : join_path(dir, k_settings_name);
    // The nearest one there is wins, whatever it is: a directory or FIFO in its place is an
    // unreadable settings file (the caller's read refuses it), not a reason to look further up.
    if (fs.stat(candidate).kind != FileKind::missing) {
      return candidate;
    }
    if (dir == "/") {
      break;
    }
    const size_t slash = dir.rfind('/');
    dir = slash == std::string::npos ? std::string() : slash == 0 ? "/" : dir.substr(0, slash);
  }
  return std::nullopt;
}

void
apply_settings(const Settings& settings, Report& report)
{
  std::vector<Finding>& findings = report.findings;
  size_t kept = 0;
  bool reordered = false;
  for (size_t i = 0; i < findings.size(); ++i) {
    Finding& f = findings[i];
    const Rule& r = rule(f.rule);
    if (!settings.select.empty() &&
        std::none_of(settings.select.begin(), settings.select.end(),
                     [&](const std::string& p) { return rule_matches_prefix(r, p); })) {
      continue;
    }
    if (std::any_of(settings.ignore.begin(), settings.ignore.end(),
                    [&](const std::string& name) { return find_rule(name) == &r; })) {
      continue;
    }
    for (const auto& [id, severity] : settings.severity) {
      if (id == f.rule && f.severity != severity) {
        f.severity = severity;
        reordered = true;
      }
    }
    if (kept != i) {
      findings[kept] = std::move(f);
    }
    ++kept;
  }
  findings.erase(findings.begin() + static_cast<std::ptrdiff_t>(kept), findings.end());
  if (reordered) {
    order_by_severity(findings);
  }
}

namespace {

// `s` as a baseline holds it after a round trip through JSON: bytes that are not UTF-8 replaced
// as render_baseline() replaces them.
std::string
as_written(std::string_view s)
{
  const std::string dumped =
    Json(std::string(s)).dump(-1, ' ', false, Json::error_handler_t::replace);
  return Json::parse(dumped).get<std::string>();
}

// What a finding with the identity of baseline entries is told when engines fail it that none
// of them records (`accepted`: the engines they record together).
std::string
outgrown_note(const std::set<Engine>& accepted, std::span<const Engine> failing)
{
  std::set<Engine> added;
  for (const Engine e : failing) {
    if (!accepted.contains(e)) {
      added.insert(e);
    }
  }
  const std::string_view verb = added.size() == 1 ? "fails" : "fail";
  if (accepted.empty()) {
    return fmt::format("the baseline records no engine failing it, and {} {} it",
                       engines_text(added), verb);
  }
  return fmt::format("the baseline accepts it for {} only, not for {}, which {} it",
                     engines_text(accepted), engines_text(added), verb);
}

} // namespace

std::string
folder_key(std::string_view folder)
{
  // Empty and "." components go; ".." stays: "x/../M" is not "M" when x is a link.
  std::string key = folder.starts_with('/') ? "/" : "";
  size_t parts = 0;
  for (size_t begin = 0; begin <= folder.size();) {
    const size_t end = std::min(folder.find('/', begin), folder.size());
    const std::string_view part = folder.substr(begin, end - begin);
    if (!part.empty() && part != ".") {
      key += parts++ == 0 ? "" : "/";
      key += part;
    }
    begin = end + 1;
  }
  return key.empty() ? "." : key;
}

std::string
render_baseline(const std::vector<Report>& reports)
{
  Json entries = Json::array();
  for (const Report& report : reports) {
    for (const Finding& f : report.findings) {
      Json entry{{"rule", rule(f.rule).code},
                 {"folder", report.root},
                 {"file", f.file},
                 {"fingerprint", fingerprint(f)},
                 {"message", f.message}};
      if (!f.engines.empty()) {
        Json engines = Json::array();
        for (const Engine e : f.engines) {
          engines.push_back(to_string(e));
        }
        entry["engines"] = std::move(engines);
      }
      entries.push_back(std::move(entry));
    }
  }
  // Names need not be UTF-8 (file names are bytes): such bytes become U+FFFD.
  return Json{{"version", 1}, {"findings", entries}}.dump(2, ' ', false,
                                                          Json::error_handler_t::replace) +
         "\n";
}

Expected<std::vector<BaselineEntry>>
parse_baseline(const std::string& file, std::string_view text)
{
  if (auto span = locate(text, ""); !span) {
    return unexpected(fmt::format("{}: {}", file, span.error()));
  }
  const Json j = Json::parse(text, nullptr, false);
  if (j.is_discarded() || !j.is_object() || !j.contains("version") ||
      !j["version"].is_number_integer() || j["version"] != 1 || !j.contains("findings") ||
      !j["findings"].is_array()) {
    return unexpected(fmt::format("{}: not a qcheck baseline (version 1)", file));
  }
  std::vector<BaselineEntry> out;
  for (size_t i = 0; i < j["findings"].size(); ++i) {
    const Json& e = j["findings"][i];
    if (!e.is_object() || !e.contains("rule") || !e.contains("fingerprint") ||
        !e["rule"].is_string() || !e["fingerprint"].is_string()) {
      return unexpected(fmt::format("{}: each finding needs 'rule' and 'fingerprint'", file));
    }
    // The optional members: absent, or strings.
    std::string optional[3];
    const char* const keys[3] = {"folder", "file", "message"};
    for (size_t k = 0; k < 3; ++k) {
      if (!e.contains(keys[k])) {
        continue;
      }
      if (!e[keys[k]].is_string()) {
        return unexpected(fmt::format("{}: /findings/{}/{} is not a string", file, i, keys[k]));
      }
      optional[k] = e[keys[k]].get<std::string>();
    }
    std::optional<std::vector<Engine>> engines;
    if (e.contains("engines")) {
      const Json& list = e["engines"];
      engines.emplace();
      bool names = list.is_array();
      for (size_t k = 0; names && k < list.size(); ++k) {
        const auto it = std::find_if(k_all_engines.begin(), k_all_engines.end(), [&](Engine x) {
          return list[k].is_string() && to_string(x) == list[k].get<std::string>();
        });
        names = it != k_all_engines.end();
        if (names && std::find(engines->begin(), engines->end(), *it) == engines->end()) {
          engines->push_back(*it); // each once, however often written
        }
      }
      if (!names) {
        return unexpected(fmt::format(
          "{}: /findings/{}/engines is not a list of engine names (vllm, sglang, trtllm)", file,
          i));
      }
    }
    out.push_back({e["rule"].get<std::string>(), std::move(optional[0]), std::move(optional[1]),
                   e["fingerprint"].get<std::string>(), std::move(optional[2]),
                   std::move(engines)});
  }
  return out;
}

Report
apply_baseline(const std::vector<BaselineEntry>& baseline, const std::string& baseline_file,
               std::vector<Report>& reports)
{
  std::vector<bool> used(baseline.size(), false);
  std::vector<std::string> baseline_folders;
  for (const BaselineEntry& entry : baseline) {
    baseline_folders.push_back(folder_key(entry.folder));
  }
  for (Report& report : reports) {
    const std::string folder = folder_key(as_written(report.root));
    std::vector<Finding> kept;
    for (Finding& f : report.findings) {
      const std::string print = fingerprint(f);
      // The entries with its identity: any that records no engines accepts it; the others
      // together accept the engines they record.
      bool matched = false, any_engine = false;
      std::set<Engine> recorded;
      for (size_t i = 0; i < baseline.size(); ++i) {
        if (baseline[i].fingerprint == print && baseline[i].rule == rule(f.rule).code &&
            baseline_folders[i] == folder) {
          used[i] = true;
          matched = true;
          if (!baseline[i].engines) {
            any_engine = true;
            continue;
          }
          recorded.insert(baseline[i].engines->begin(), baseline[i].engines->end());
        }
      }
      const bool accepted =
        matched && (any_engine || std::all_of(f.engines.begin(), f.engines.end(),
                                              [&](Engine e) { return recorded.contains(e); }));
      if (!accepted) {
        if (matched) {
          // In the message: the CI formats (github, SARIF) show no details.
          f.message += "; " + outgrown_note(recorded, f.engines);
        }
        kept.push_back(std::move(f));
      }
    }
    report.findings = std::move(kept);
  }
  Report stale;
  stale.root = baseline_file;
  for (size_t i = 0; i < baseline.size(); ++i) {
    if (used[i]) {
      continue;
    }
    Finding f;
    f.rule = RuleId::stale_baseline_entry;
    f.severity = rule(f.rule).severity;
    f.message =
      fmt::format("baseline entry {} for {}{} matches no finding any more: \"{}\"",
                  baseline[i].rule, baseline[i].folder,
                  baseline[i].file.empty() ? "" : "/" + baseline[i].file, baseline[i].message);
    f.pointer = fmt::format("/findings/{}", i);
    stale.findings.push_back(std::move(f));
  }
  return stale;
}

} // namespace qcheck
