#include "qcheck/report.hpp"

#include <fmt/format.h>
#include <fmt/ranges.h>
#include <nlohmann/json.hpp>

namespace qcheck {

Summary
Report::summary() const
{
  Summary s;
  for (const Finding& f : findings) {
    switch (f.severity) {
    case Severity::error:
      ++s.errors;
      break;
    case Severity::warning:
      ++s.warnings;
      break;
    case Severity::info:
      ++s.infos;
      break;
    }
  }
  return s;
}

bool
Report::has_at_least(Severity severity) const
{
  for (const Finding& f : findings) {
    if (f.severity >= severity) {
      return true;
    }
  }
  return false;
}

std::string
render_text(const Report& report, const RenderOptions& options)
{
  auto paint = [&](std::string_view code, std::string_view text) {
    return options.color ? fmt::format("\x1b[{}m{}\x1b[0m", code, text) : std::string(text);
  };
  std::string out;
  for (const Finding& f : report.findings) {
    const Rule& r = rule(f.rule);
    const std::string_view colour =
      f.severity == Severity::error ? "1;31" : f.severity == Severity::warning ? "1;33" : "1;36";
    const std::string path = f.file.empty() ? report.root : fmt::format("{}/{}", report.root, f.file);
    out += fmt::format("{}: {}: {} [{} {}]\n", path, paint(colour, to_string(f.severity)),
                       f.message, r.code, r.name);
    for (const auto& d : f.details) {
      out += fmt::format("    {}\n", d);
    }
    if (!f.fix.empty()) {
      out += fmt::format("    {} {}\n", paint("1;32", "fix:"), f.fix);
    }
  }
  const Summary s = report.summary();
  out += fmt::format("{}: {} error{}, {} warning{}, {} info\n", report.root, s.errors,
                     s.errors == 1 ? "" : "s", s.warnings, s.warnings == 1 ? "" : "s", s.infos);
  return out;
}

std::string
render_json(const std::vector<Report>& reports)
{
  nlohmann::ordered_json findings = nlohmann::ordered_json::array();
  Summary total;
  for (const Report& report : reports) {
    const Summary s = report.summary();
    total.errors += s.errors;
    total.warnings += s.warnings;
    total.infos += s.infos;
    for (const Finding& f : report.findings) {
      const Rule& r = rule(f.rule);
      std::vector<std::string> engines;
      for (Engine e : f.engines) {
        engines.emplace_back(to_string(e));
      }
      findings.push_back({{"rule", r.code},
                          {"name", r.name},
                          {"severity", to_string(f.severity)},
                          {"folder", report.root},
                          {"file", f.file},
                          {"message", f.message},
                          {"details", f.details},
                          {"modules", f.modules},
                          {"files", f.files},
                          {"engines", engines},
                          {"suggested_entries", f.suggested_entries},
                          {"fix", f.fix},
                          {"fixable", r.fixable}});
    }
  }
  nlohmann::ordered_json root = {
    {"findings", findings},
    {"summary", {{"errors", total.errors}, {"warnings", total.warnings}, {"infos", total.infos}}}};
  return root.dump(2) + "\n";
}

} // namespace qcheck
