// One `qcheck lint` invocation: the folders (given or found with --recursive), each folder's
// settings (nearest .qcheck.json, each value the command line gives replacing the file's), the
// parallel runs, and the baseline. Returns reports and errors; the CLI renders them and computes
// the exit code.
#pragma once

#include <functional>
#include <optional>
#include <string>
#include <vector>

#include "qcheck/lint.hpp"
#include "qcheck/settings.hpp"

namespace qcheck {

struct LintRequest
{
  std::vector<std::string> paths;
  std::string recursive;             // root to search for model folders, or ""
  std::optional<std::string> engine; // "all", "vllm", ...
  std::optional<Severity> fail_on;
  std::string config; // explicit settings file, or ""
  bool no_config = false;
  // Non-empty: replaces the settings file's list of the same name.
  std::vector<std::string> select;
  std::vector<std::string> ignore;
  std::string baseline; // accept the findings recorded here
};

struct LintOutcome
{
  std::vector<Report> reports;
  std::vector<Severity> thresholds; // per report: the lowest severity that fails
  // Folders that could not be linted, or (--recursive) searched: one line each.
  std::vector<std::string> errors;
  // Lines for stderr that do not change the exit code: folders --recursive did not enter
  // because they lie too deep.
  std::vector<std::string> warnings;
  bool usage_error = false;         // bad settings/baseline/paths: nothing was linted
  // What each linted folder's report was made from (checkpoint, inventory, declaration), in
  // folder order; their `report` is empty, moved to `reports`.
  std::vector<LintRun> runs;

  // 0, 1 or 2 as documented for `qcheck lint`.
  int exit_code(bool exit_zero) const;
};

// Engines named by a profile: "all" or one engine.
std::vector<Engine> engines_for(const std::string& profile);

LintOutcome run_lint_request(const FileSystem& fs, const LintRequest& request,
                             const std::function<void(size_t, size_t)>& progress = {});

} // namespace qcheck
