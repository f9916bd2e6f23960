#include "qcheck/session.hpp"

#include <algorithm>
#include <filesystem>
#include <fmt/format.h>
#include <unordered_set>

namespace qcheck {

namespace {

Expected<Settings>
settings_for(const FileSystem& fs, const LintRequest& request, const std::string& folder)
{
  Settings settings;
  std::string file = request.config;
  if (file.empty() && !request.no_config) {
    std::error_code error;
    const auto absolute = std::filesystem::absolute(folder, error);
    if (!error) {
      file = find_settings(fs, absolute.lexically_normal().string()).value_or("");
    }
  }
  if (!file.empty()) {
    auto text = fs.read_file(file, 1 << 20);
    if (!text) {
      return unexpected(text.error());
    }
    auto parsed = parse_settings(file, *text);
    if (!parsed) {
      return parsed;
    }
    settings = std::move(*parsed);
  }
  if (request.engine) {
    settings.engines = engines_for(*request.engine);
  }
  if (request.fail_on) {
    settings.fail_on = request.fail_on;
  }
  for (const auto& prefix : request.select) {
    if (!selects_some_rule(prefix)) {
      return unexpected(fmt::format("--select entry '{}' matches no rule", prefix));
    }
  }
  // A command-line list replaces the file's, as --engine and --fail-on replace theirs.
  if (!request.select.empty()) {
    settings.select = request.select;
  }
  for (const auto& name : request.ignore) {
    if (!find_rule(name)) {
      return unexpected(unknown_rule_message(name));
    }
  }
  if (!request.ignore.empty()) {
    settings.ignore = request.ignore;
  }
  return settings;
}

} // namespace

std::vector<Engine>
engines_for(const std::string& profile)
{
  std::vector<Engine> out;
  for (Engine e : k_all_engines) {
    if (profile == "all" || to_string(e) == profile) {
      out.push_back(e);
    }
  }
  return out;
}

int
LintOutcome::exit_code(bool exit_zero) const
{
  if (usage_error || !errors.empty()) {
    return 2;
  }
  for (size_t i = 0; i < reports.size(); ++i) {
    if (reports[i].has_at_least(thresholds[i]) && !exit_zero) {
      return 1;
    }
  }
  return 0;
}

LintOutcome
run_lint_request(const FileSystem& fs, const LintRequest& request,
                 const std::function<void(size_t, size_t)>& progress)
{
  LintOutcome outcome;
  auto fail = [&](std::string message) {
    outcome.errors.push_back(std::move(message));
    outcome.usage_error = true;
    return std::move(outcome);
  };
  std::vector<std::string> paths = request.paths;
  if (!request.recursive.empty()) {
    if (fs.stat(request.recursive).kind != FileKind::directory) {
      return fail(fmt::format("{}: not a directory", request.recursive));
    }
    const FolderSearch found = find_model_folders(fs, request.recursive);
    // A folder that cannot be listed may hold models: an error (exit 2), the others still linted.
    for (const auto& error : found.errors) {
      outcome.errors.push_back(fmt::format("{} (--recursive could not search it)", error));
    }
    constexpr size_t k_listed = 1000;
    for (size_t i = 0; i < found.too_deep.size() && i < k_listed; ++i) {
      outcome.warnings.push_back(
        fmt::format("{}: not searched: more than {} levels below {} (--recursive's limit)",
                    found.too_deep[i], k_max_search_depth, request.recursive));
    }
    if (found.too_deep.size() > k_listed) {
      outcome.warnings.push_back(fmt::format("... and {} more folders not searched for depth",
                                             found.too_deep.size() - k_listed));
    }
    if (found.folders.empty()) {
      if (!found.errors.empty()) {
        outcome.usage_error = true;
        return outcome;
      }
      return fail(fmt::format("{}: no folder with a config.json and safetensors weights below it",
                              request.recursive));
    }
    paths.insert(paths.end(), found.folders.begin(), found.folders.end());
  }
  if (paths.empty()) {
    return fail("lint needs a model folder (or --recursive ROOT)");
  }
  // A folder named twice ("M M/", or named and found by --recursive) is linted once, under the
  // first spelling.
  std::unordered_set<std::string> keys;
  std::vector<std::string> distinct;
  for (std::string& path : paths) {
    if (keys.insert(folder_key(path)).second) {
      distinct.push_back(std::move(path));
    }
  }
  paths = std::move(distinct);
  // Settings are read before any work so a bad file stops the run at once.
  std::vector<Settings> settings;
  for (const auto& path : paths) {
    auto s = settings_for(fs, request, path);
    if (!s) {
      return fail(s.error());
    }
    settings.push_back(std::move(*s));
  }
  auto runs = lint_all(
    fs, paths,
    [&](const std::string& path) {
      const auto i =
        static_cast<size_t>(std::find(paths.begin(), paths.end(), path) - paths.begin());
      LintOptions options;
      options.engines = settings[i].engines;
      return options;
    },
    progress);
  for (size_t i = 0; i < runs.size(); ++i) {
    if (!runs[i]) {
      outcome.errors.push_back(runs[i].error());
      continue;
    }
    apply_settings(settings[i], runs[i]->report);
    outcome.reports.push_back(std::move(runs[i]->report));
    outcome.thresholds.push_back(settings[i].fail_on.value_or(Severity::error));
    outcome.runs.push_back(std::move(*runs[i]));
  }
  if (!request.baseline.empty()) {
    auto text = fs.read_file(request.baseline, 256u << 20);
    if (!text) {
      return fail(text.error());
    }
    auto baseline = parse_baseline(request.baseline, *text);
    if (!baseline) {
      return fail(baseline.error());
    }
    Report stale = apply_baseline(*baseline, request.baseline, outcome.reports);
    if (!stale.findings.empty()) {
      outcome.reports.push_back(std::move(stale));
      outcome.thresholds.push_back(Severity::error);
    }
  }
  return outcome;
}

} // namespace qcheck
