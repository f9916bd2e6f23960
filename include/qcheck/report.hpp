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
};

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

} // namespace qcheck
