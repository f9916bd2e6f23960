// qcheck command line: CLI11 wiring, output destinations and exit codes over libqcheck.
#include <CLI/CLI.hpp>
#include <cstdio>
#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <memory>
#include <fmt/format.h>
#include <spdlog/sinks/stdout_color_sinks.h>
#include <spdlog/spdlog.h>
#include <unistd.h>
#include <vector>

#include "cli_memory.hpp"
#include "cli_output.hpp"
#include "cli_signals.hpp"
#include "qcheck/explain.hpp"
#include "qcheck/fix.hpp"
#include "qcheck/inspect.hpp"
#include "qcheck/lint.hpp"
#include "qcheck/parallel.hpp"
#include "qcheck/remote.hpp"
#include "qcheck/rules.hpp"
#include "qcheck/session.hpp"

namespace {

constexpr int k_exit_clean = 0;
constexpr int k_exit_findings = 1;
constexpr int k_exit_usage = 2;

// How the disk is read: whole files are mapped unless this process uses large pages (main()).
qcheck::DiskFileSystem::Options&
disk_options()
{
  static qcheck::DiskFileSystem::Options options;
  return options;
}

void
write_stdout(std::string_view text)
{
  std::fwrite(text.data(), 1, text.size(), stdout);
}

bool
write_file(const std::string& path, const std::string& text)
{
  if (auto written = qcheck::cli::write_output_file(path, text); !written) {
    spdlog::error("{}", written.error());
    return false;
  }
  return true;
}

// Hands `value` to the end of the process unfreed. A linted checkpoint is millions of small
// allocations that free() takes back one by one (a tenth of a run on 10^6 tensors); the OS takes
// the whole heap back at exit at once, as mold relies on. A static root keeps it reachable, so
// leak checkers stay quiet.
template<typename T>
T&
keep_until_exit(T value)
{
  static auto* kept = new std::vector<std::shared_ptr<const void>>();
  auto owned = std::make_shared<T>(std::move(value));
  kept->push_back(owned);
  return *owned;
}

bool
use_color()
{
  return std::getenv("NO_COLOR") == nullptr && ::isatty(STDOUT_FILENO) != 0;
}

// --- remote models (issue 8; the logic is in qcheck/remote.hpp) ---------------------------------
// hf://OWNER/NAME[@REV] and http(s):// paths are read through `fs`; OWNER/NAME with no such
// local folder becomes its snapshot in the local Hugging Face cache.
bool
resolve_model_paths(const qcheck::FileSystem& fs, const qcheck::HubEnvironment& hub,
                    std::vector<std::string>& paths)
{
  for (auto& path : paths) {
    auto resolved = qcheck::resolve_model_argument(fs, path, hub);
    if (!resolved) {
      spdlog::error("{}", resolved.error());
      return false;
    }
    path = std::move(*resolved);
  }
  return true;
}

void
report_remote(const qcheck::RoutingFileSystem& fs)
{
  for (const auto& line : fs.remote_errors()) {
    spdlog::error("{}", line);
  }
  for (const auto& line : fs.remote_notes()) {
    spdlog::info("{}", line);
  }
}
// --- end of remote models ------------------------------------------------------------------------

struct LintArgs
{
  std::vector<std::string> paths;
  std::string recursive;
  std::string format = "text";
  std::string output;
  std::string engine;
  std::string fail_on;
  bool exit_zero = false;
  std::string config;
  bool no_config = false;
  std::vector<std::string> select;
  std::vector<std::string> ignore;
  std::string baseline;
  std::string write_baseline;
};

int
run_lint(const LintArgs& args)
{
  const qcheck::HubEnvironment hub = qcheck::hub_environment(); // remote models (issue 8)
  qcheck::RoutingFileSystem fs(qcheck::http_options(hub), disk_options());
  qcheck::LintRequest request;
  request.paths = args.paths;
  if (!resolve_model_paths(fs, hub, request.paths)) {
    return k_exit_usage;
  }
  request.recursive = args.recursive;
  if (!args.engine.empty()) {
    request.engine = args.engine;
  }
  request.fail_on = qcheck::parse_severity(args.fail_on);
  request.config = args.config;
  request.no_config = args.no_config;
  request.select = args.select;
  request.ignore = args.ignore;
  request.baseline = args.write_baseline.empty() ? args.baseline : "";
  const bool show_progress = ::isatty(STDERR_FILENO) != 0;
  const qcheck::LintOutcome& outcome =
    keep_until_exit(qcheck::run_lint_request(fs, request, [&](size_t done, size_t total) {
      if (show_progress && total > 1) {
        std::fprintf(stderr, "\rqcheck: linted %zu/%zu folders%s", done, total,
                     done == total ? "\n" : "");
      }
    }));
  report_remote(fs); // remote models (issue 8)
  // They may quote folder names: escaped, as the report's are, so none forges a line.
  for (const auto& warning : outcome.warnings) {
    spdlog::warn("{}", qcheck::printable(warning));
  }
  for (const auto& error : outcome.errors) {
    spdlog::error("{}", qcheck::printable(error));
  }
  if (outcome.usage_error) {
    return k_exit_usage;
  }
  if (!args.write_baseline.empty()) {
    if (!write_file(args.write_baseline, qcheck::render_baseline(outcome.reports))) {
      return k_exit_usage;
    }
    spdlog::info("recorded the findings in {}", args.write_baseline);
    return outcome.errors.empty() ? k_exit_clean : k_exit_usage;
  }
  std::string text;
  if (args.format != "github" && args.output.empty()) {
    if (args.format == "json") {
      qcheck::write_json(outcome.reports, write_stdout);
    } else if (args.format == "sarif") {
      qcheck::write_sarif(outcome.reports, write_stdout);
    } else {
      for (const auto& report : outcome.reports) {
        qcheck::write_text(report, {use_color()}, write_stdout);
      }
    }
    return outcome.exit_code(args.exit_zero);
  }
  if (args.format == "json") {
    text = qcheck::render_json(outcome.reports);
  } else if (args.format == "sarif") {
    text = qcheck::render_sarif(outcome.reports);
  } else if (args.format == "github") {
    text = qcheck::render_github(outcome.reports);
  } else {
    for (const auto& report : outcome.reports) {
      text += qcheck::render_text(report); // to a file: no colour
    }
  }
  if (!args.output.empty()) {
    if (!write_file(args.output, text)) {
      return k_exit_usage;
    }
  } else {
    write_stdout(text);
  }
  return outcome.exit_code(args.exit_zero);
}

int
run_explain(const std::string& path, const std::string& module, bool entries,
            const std::string& engine)
{
  qcheck::DiskFileSystem fs(disk_options());
  qcheck::LintOptions options;
  options.engines = qcheck::engines_for(engine);
  if (!entries && module.empty()) {
    spdlog::error("explain needs a module name or --entries");
    return k_exit_usage;
  }
  auto run = qcheck::lint_path(fs, path, options);
  if (!run) {
    spdlog::error("{}", run.error());
    return k_exit_usage;
  }
  // What could not be read is said first: the explanation below lacks it.
  bool unread = false;
  for (const auto& problem : qcheck::input_problems(*run)) {
    const bool error = problem.severity == qcheck::Severity::error;
    unread = unread || error;
    if (error) {
      spdlog::error("{}", problem.line);
    } else {
      spdlog::warn("{}", problem.line);
    }
  }
  const int done = unread ? k_exit_findings : k_exit_clean;
  if (entries) {
    write_stdout(qcheck::explain_entries(*run, options.engines));
    return done;
  }
  auto text = qcheck::explain_module(*run, module, options.engines);
  if (!text) {
    spdlog::error("{}", text.error());
    return unread ? k_exit_findings : k_exit_usage;
  }
  write_stdout(*text);
  return done;
}

struct FixArgs
{
  std::string path = ".";
  bool inplace = false;
  bool remove_excluding = false;
  std::string output_dir;
  std::string engine = "all";
};

int
run_fix(const FixArgs& args)
{
  qcheck::DiskFileSystem fs(disk_options());
  qcheck::LintOptions options;
  options.engines = qcheck::engines_for(args.engine);
  auto& run = keep_until_exit(qcheck::lint_path(fs, args.path, options));
  if (!run) {
    spdlog::error("{}", run.error());
    return k_exit_usage;
  }
  const qcheck::FixPlan plan =
    qcheck::plan_fix(fs, *run, options, qcheck::FixOptions{args.remove_excluding});
  for (const auto& why : plan.refused) {
    spdlog::warn("not fixed: {}", why);
  }
  if (plan.edits.empty() && plan.refused.empty()) {
    spdlog::info("nothing to fix in {}", args.path);
  } else if (plan.edits.empty()) {
    spdlog::warn("{} left unchanged (see above)", args.path);
  }
  for (const auto& edit : plan.edits) {
    for (const auto& added : edit.added) {
      spdlog::info("{}: {}", edit.file, added);
    }
  }
  if (!args.inplace && args.output_dir.empty()) {
    for (const auto& edit : plan.edits) {
      write_stdout(qcheck::unified_diff(edit));
    }
  } else if (!plan.edits.empty()) {
    std::error_code error;
    std::string output_dir = args.output_dir;
    // The model folder itself, however it is spelled (a link, "m/../m"), is an edit in place,
    // with the checks that go with it.
    if (!output_dir.empty() &&
        std::filesystem::equivalent(output_dir, run->checkpoint.root, error)) {
      output_dir.clear();
    }
    // The folders are made one by one, as create_directories() would, and those this run made
    // noted: a failed write takes them out again, nothing that was there before.
    std::vector<std::filesystem::path> created;
    error.clear();
    if (!output_dir.empty()) {
      std::filesystem::path made;
      for (const auto& part : std::filesystem::path(output_dir)) {
        made /= part;
        if (std::filesystem::create_directory(made, error)) {
          created.push_back(made);
        } else if (error) {
          break;
        }
      }
    }
    const auto remove_created = [&] {
      for (auto p = created.rbegin(); p != created.rend(); ++p) {
        std::error_code ignored;
        std::filesystem::remove(*p, ignored); // empty folders only
      }
    };
    if (error) {
      spdlog::error("{}: cannot create: {}", output_dir, error.message());
      remove_created();
      return k_exit_usage;
    }
    qcheck::DiskFileWriter writer;
    auto applied = qcheck::apply_fix(fs, writer, run->checkpoint.root, plan, output_dir);
    if (!applied) {
      spdlog::error("{}", applied.error());
      remove_created();
      return k_exit_usage;
    }
    for (const auto& path : applied->written) {
      spdlog::info("wrote {}", path);
    }
    for (const auto& note : applied->notes) {
      spdlog::warn("{}", note);
    }
  }
  for (const auto& line : plan.remaining) {
    spdlog::warn("needs a human: {}", line);
  }
  return plan.remaining.empty() && plan.refused.empty() ? k_exit_clean : k_exit_findings;
}

int
run_inspect(std::string path, const std::string& format, const std::string& module_glob)
{
  const qcheck::HubEnvironment hub = qcheck::hub_environment(); // remote models (issue 8)
  qcheck::RoutingFileSystem fs(qcheck::http_options(hub), disk_options());
  std::vector<std::string> paths{path};
  if (!resolve_model_paths(fs, hub, paths)) {
    return k_exit_usage;
  }
  path = paths.front();
  const auto& checkpoint = keep_until_exit(qcheck::load_checkpoint(fs, path));
  report_remote(fs);
  if (!checkpoint) {
    spdlog::error("{}", checkpoint.error());
    return k_exit_usage;
  }
  // What cannot be shown (a shard not read, a glob that selects nothing) makes the exit code 1.
  bool incomplete = false;
  for (const auto& problem : checkpoint->problems) {
    spdlog::warn("{}: {}", qcheck::printable(problem.file.empty() ? path : problem.file),
                 qcheck::printable(problem.message));
    incomplete = incomplete || !problem.is_warning;
  }
  const auto& inventory = keep_until_exit(qcheck::build_inventory(*checkpoint));
  const qcheck::InspectOptions options{module_glob};
  if (!module_glob.empty() && qcheck::count_selected(inventory, options) == 0) {
    spdlog::warn("no module matches '{}'", qcheck::printable(module_glob));
    incomplete = true;
  }
  if (format == "json") {
    qcheck::write_inspect_json(*checkpoint, inventory, options, write_stdout);
  } else {
    qcheck::write_inspect_text(*checkpoint, inventory, options, write_stdout);
  }
  return incomplete ? k_exit_findings : k_exit_clean;
}

int
run_rules(const std::string& which, const std::string& format)
{
  if (which.empty()) {
    if (format == "json") {
      write_stdout(qcheck::render_rules_json());
    } else if (format == "markdown") {
      write_stdout(qcheck::render_rules_markdown());
    } else {
      for (const auto& r : qcheck::all_rules()) {
        write_stdout(fmt::format("{}  {:<32} {:<8} {}{}\n", r.code, r.name,
                                 qcheck::to_string(r.severity), r.summary,
                                 r.fixable ? " (fixable)" : ""));
      }
    }
    return k_exit_clean;
  }
  const qcheck::Rule* r = qcheck::find_rule(which);
  if (!r) {
    spdlog::error("{}", qcheck::unknown_rule_message(which));
    return k_exit_usage;
  }
  if (format == "json") {
    write_stdout(qcheck::render_rule_json(*r));
  } else if (format == "markdown") {
    write_stdout(qcheck::render_rule_markdown(*r));
  } else {
    write_stdout(fmt::format("{} {} ({}{})\n\n{}\n\n{}\n", r->code, r->name,
                             qcheck::to_string(r->severity), r->fixable ? ", fixable" : "",
                             r->summary, r->explanation));
  }
  return k_exit_clean;
}

} // namespace

int
run_main(int argc, char** argv)
{
  spdlog::set_default_logger(spdlog::stderr_color_mt("qcheck"));
  spdlog::set_pattern("qcheck: %l: %v");

  CLI::App app{"qcheck: lint the quantization metadata of LLM checkpoints"};
  app.set_version_flag("--version", QCHECK_VERSION);
  app.require_subcommand(1);

  LintArgs lint_args;
  auto* lint = app.add_subcommand("lint", "Check declared quantization against stored tensors");
  lint->add_option("paths", lint_args.paths, "Model folders (or .safetensors files)");
  lint->add_option("-r,--recursive", lint_args.recursive,
                   "Lint every folder below ROOT holding a config.json and weights");
  lint->add_option("--format", lint_args.format, "Output format")
    ->check(CLI::IsMember({"text", "json", "sarif", "github"}));
  lint->add_option("-o,--output", lint_args.output, "Write the report to this file");
  lint->add_option("--engine", lint_args.engine, "Engine profile (default: all)")
    ->check(CLI::IsMember({"all", "vllm", "sglang", "trtllm"}));
  lint->add_option("--fail-on", lint_args.fail_on, "Lowest severity that fails (default: error)")
    ->check(CLI::IsMember({"error", "warning", "info"}));
  lint->add_flag("--exit-zero", lint_args.exit_zero, "Exit 0 even with findings");
  lint->add_option("--config", lint_args.config, "Settings file (default: nearest .qcheck.json)");
  lint->add_flag("--no-config", lint_args.no_config, "Ignore .qcheck.json files");
  lint->add_option("--select", lint_args.select, "Only rules whose code or name starts so")
    ->delimiter(',')
    ->allow_extra_args(false);
  lint->add_option("--ignore", lint_args.ignore, "Never report these rules")
    ->delimiter(',')
    ->allow_extra_args(false);
  lint->add_option("--baseline", lint_args.baseline, "Accept the findings recorded in FILE");
  lint->add_option("--write-baseline", lint_args.write_baseline,
                   "Record the current findings in FILE and exit 0");

  std::string path, format = "text", module_glob;
  auto* inspect = app.add_subcommand("inspect", "Show every tensor and a per-module summary");
  inspect->add_option("path", path, "Model folder or .safetensors file")->required();
  inspect->add_option("--format", format, "Output format")->check(CLI::IsMember({"text", "json"}));
  inspect->add_option("--module", module_glob, "Only modules matching this fnmatch glob")
    ->check([](const std::string& glob) {
      return glob.empty() ? std::string("needs a glob (an empty one matches no module)")
                          : std::string();
    });

  std::string explain_path, explain_module, explain_engine = "all";
  bool explain_entries = false;
  auto* explain = app.add_subcommand("explain", "Why a module is (not) excluded, per engine");
  explain->add_option("path", explain_path, "Model folder")->required();
  explain->add_option("module", explain_module, "Module or tensor name, or an fnmatch glob");
  explain->add_flag("--entries", explain_entries, "Expand every declared entry instead");
  explain->add_option("--engine", explain_engine, "Engine profile")
    ->check(CLI::IsMember({"all", "vllm", "sglang", "trtllm"}));

  FixArgs fix_args;
  auto* fix = app.add_subcommand("fix", "Append the missing exclusion entries to every list");
  fix->add_option("path", fix_args.path, "Model folder (default: the current directory)");
  auto* inplace = fix->add_flag("--inplace", fix_args.inplace, "Write the files in place");
  fix->add_option("--output-dir", fix_args.output_dir, "Write patched copies into this folder")
    ->excludes(inplace)
    ->check([](const std::string& dir) {
      return dir.empty() ? std::string("needs a folder (an empty one would be a dry run)")
                         : std::string();
    });
  fix->add_flag("--remove-excluding", fix_args.remove_excluding,
                "Also remove entries that exclude modules stored quantized");
  fix->add_option("--engine", fix_args.engine, "Engine profile")
    ->check(CLI::IsMember({"all", "vllm", "sglang", "trtllm"}));

  std::string which_rule, rules_format = "text";
  auto* rules = app.add_subcommand("rules", "List the rules, or explain one");
  rules->add_option("rule", which_rule, "Rule ID or name");
  rules->add_option("--format", rules_format, "Output format")
    ->check(CLI::IsMember({"text", "json", "markdown"}));

  try {
    app.parse(argc, argv);
  } catch (const CLI::CallForHelp& e) {
    return app.exit(e);
  } catch (const CLI::CallForAllHelp& e) {
    return app.exit(e);
  } catch (const CLI::CallForVersion& e) {
    return app.exit(e);
  } catch (const CLI::ParseError& e) {
    app.exit(e);
    return k_exit_usage;
  }
  if (lint->parsed()) {
    return run_lint(lint_args);
  }
  if (inspect->parsed()) {
    return run_inspect(path, format, module_glob);
  }
  if (fix->parsed()) {
    return run_fix(fix_args);
  }
  if (explain->parsed()) {
    return run_explain(explain_path, explain_module, explain_entries, explain_engine);
  }
  if (rules->parsed()) {
    return run_rules(which_rule, rules_format);
  }
  return k_exit_usage;
}

int
main(int argc, char** argv)
{
  // Where 2 MiB pages are used, a whole file (the index) read into them scans faster than its
  // mapping; QCHECK_LARGE_PAGES=0 keeps both to 4 KiB pages, as does a first 2 MiB page slow to
  // fault in (see use_large_pages()).
  const bool large_pages = qcheck::cli::use_large_pages();
  disk_options().map_whole_files = !large_pages;
  if (large_pages) {
    qcheck::on_thread_start(&qcheck::cli::use_large_pages_in_thread);
  }
  qcheck::cli::report_shrunk_files(k_exit_usage);
  // A lint of a large checkpoint makes about seven passes over the cores: each finds the thread
  // of the one before.
  qcheck::keep_threads(true);
  int code = k_exit_usage;
  try {
    code = run_main(argc, argv);
  } catch (const std::bad_alloc&) {
    std::fputs("qcheck: error: out of memory\n", stderr);
    return k_exit_usage;
  } catch (const std::exception& e) {
    std::fprintf(stderr, "qcheck: error: %s\n", e.what());
    return k_exit_usage;
  }
  // A report that did not reach stdout (a full disk, a closed pipe with SIGPIPE ignored) is not
  // a result: exit 2, as for an unwritable -o file.
  if (std::fflush(stdout) != 0 || std::ferror(stdout) != 0) {
    std::fprintf(stderr, "qcheck: error: cannot write to standard output: %s\n",
                 std::strerror(errno));
    return k_exit_usage;
  }
  return code;
}
