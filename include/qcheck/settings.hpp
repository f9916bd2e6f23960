// Project settings and baselines: which rules run and at what severity, which engines, and
// which known findings are accepted. JSON files, because JSON and safetensors cannot carry
// comments (no inline suppressions).
//
// Settings file: `.qcheck.json`, found by searching upward from the model folder (the first one
// wins), or given with --config:
//   {
//     "engines": ["vllm", "sglang", "trtllm"],   // default: all
//     "fail_on": "error",                        // error | warning | info
//     "select": ["QC1"],                         // only rules whose code or name starts so
//     "ignore": ["QC116", "unused-entry"],       // rules never reported
//     "severity": {"QC112": "error"}             // per-rule severity
//   }
// Baseline file (--write-baseline / --baseline): accepted findings by rule, folder and
// fingerprint, and the engines each one failed then; an entry that no longer matches is itself
// reported (QC123).
#pragma once

#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "qcheck/engines.hpp"
#include "qcheck/input.hpp"
#include "qcheck/report.hpp"

namespace qcheck {

inline constexpr const char* k_settings_name = ".qcheck.json";

struct Settings
{
  std::string file; // where they came from ("" = defaults)
  std::vector<Engine> engines{k_all_engines.begin(), k_all_engines.end()};
  std::optional<Severity> fail_on;
  std::vector<std::string> select; // code or name prefixes; empty = all
  std::vector<std::string> ignore; // codes or names
  std::vector<std::pair<RuleId, Severity>> severity;
};

// Whether a 'select' entry (a settings file's or --select's) selects some rule: a rule whose code
// (compared in upper case) or name starts with `prefix`.
bool selects_some_rule(const std::string& prefix);

// Parses a settings file's text. Errors name the key and suggest rule names.
Expected<Settings> parse_settings(const std::string& file, std::string_view text);

// Finds `.qcheck.json` in `folder` or its ancestors (the folder as an absolute, normalised
// path, or a relative one whose ancestors are its string prefixes); nullopt when none. The
// nearest entry of that name is returned whatever its kind (a directory, FIFO or dangling link
// too, which reading then refuses), so it is never skipped for one further up.
std::optional<std::string> find_settings(const FileSystem& fs, const std::string& folder);

// Drops ignored/unselected findings and applies severity overrides; the findings stay ordered
// most severe first (their order kept within a severity).
void apply_settings(const Settings& settings, Report& report);

struct BaselineEntry
{
  std::string rule; // code
  std::string folder;
  std::string file;
  std::string fingerprint;
  std::string message; // for humans reading the file
  // The engines the finding failed when it was accepted; nullopt: any (written before qcheck
  // recorded them, or a finding no engine fails).
  std::optional<std::vector<Engine>> engines;
};

// A folder path as baselines compare it and as a lint run de-duplicates the folders it is given:
// without empty and "." components ("M", "M/", "./M" and "M//." are one folder). ".." is kept
// ("x/../M" is another folder when x is a link), and nothing is resolved on disk (a baseline is
// shared between machines, whose absolute paths differ).
std::string folder_key(std::string_view folder);

std::string render_baseline(const std::vector<Report>& reports);
Expected<std::vector<BaselineEntry>> parse_baseline(const std::string& file, std::string_view text);

// Removes findings the baseline accepts; reports baseline entries that matched nothing as QC123
// findings in an extra report for the baseline file. Returns that report (possibly empty). A
// finding with the identity of entries but failing an engine none of them records (an entry
// without engines accepts any) is kept, its message saying so; those entries are not stale.
Report apply_baseline(const std::vector<BaselineEntry>& baseline, const std::string& baseline_file,
                      std::vector<Report>& reports);

} // namespace qcheck
