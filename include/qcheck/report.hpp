// Findings and their rendering. Findings are data: rules append them to a Report, the run never
// stops at the first one, and the exit code is computed once from the whole report.
#pragma once

#include <string>
#include <vector>

#include "qcheck/engines.hpp"
#include "qcheck/rules.hpp"

namespace qcheck {

struct Finding
{
  RuleId rule;
  Severity severity;
  std::string file;                  // primary file, relative to the model folder ("" = folder)
  std::string message;               // one line
  std::vector<std::string> details;  // extra lines for humans (per engine, evidence)
  std::vector<std::string> modules;  // every checkpoint module the finding covers
  std::vector<std::string> files;    // every file involved
  std::vector<Engine> engines;       // engines that fail (empty: engine-independent)
  std::vector<std::string> suggested_entries; // what `fix` would add, in the list's syntax
  std::string fix;                   // one line for humans
  std::string pointer;               // JSON pointer into `file` (config or shard header), or ""
  uint32_t line = 0;                 // 1-based position of `pointer` in `file`; 0 = unknown
  uint32_t column = 0;
  uint32_t end_column = 0;           // exclusive, on `line`
};

// A stable identity for baselines and SARIF partialFingerprints: rule, file, pointer and the
// modules (or, without modules, the message). Line numbers and counts do not enter it.
std::string fingerprint(const Finding& finding);

struct Summary
{
  size_t errors = 0;
  size_t warnings = 0;
  size_t infos = 0;
};

struct Report
{
  std::string root; // the model folder as given
  std::vector<Finding> findings;

  Summary summary() const;
  bool has_at_least(Severity severity) const;
};

struct RenderOptions
{
  bool color = false;
};

std::string render_text(const Report& report, const RenderOptions& options = {});
std::string render_json(const std::vector<Report>& reports);
// SARIF 2.1.0: one run, the rules that occurred, folder-relative URIs (the folder as given joined
// with the file), regions when known, stable partialFingerprints. Valid with zero results.
std::string render_sarif(const std::vector<Report>& reports);
// GitHub workflow commands: ::error file=F,line=L,col=C,title=T::message
std::string render_github(const std::vector<Report>& reports);
// Escaping for workflow commands: data (message) and property values.
std::string github_escape_data(std::string_view text);
std::string github_escape_property(std::string_view text);

} // namespace qcheck
