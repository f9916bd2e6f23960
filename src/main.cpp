// qcheck command line: CLI11 wiring and exit codes over libqcheck.
#include <CLI/CLI.hpp>
#include <cstdio>
#include <spdlog/sinks/stdout_color_sinks.h>
#include <spdlog/spdlog.h>

#include "qcheck/checkpoint.hpp"
#include "qcheck/inspect.hpp"
#include "qcheck/modules.hpp"

namespace {

constexpr int k_exit_usage = 2;

void
write_stdout(const std::string& text)
{
  std::fwrite(text.data(), 1, text.size(), stdout);
}

int
run_inspect(const std::string& path, const std::string& format, const std::string& module_glob)
{
  qcheck::DiskFileSystem fs;
  auto checkpoint = qcheck::load_checkpoint(fs, path);
  if (!checkpoint) {
    spdlog::error("{}", checkpoint.error());
    return k_exit_usage;
  }
  for (const auto& problem : checkpoint->problems) {
    spdlog::warn("{}: {}", problem.file.empty() ? path : problem.file, problem.message);
  }
  const auto inventory = qcheck::build_inventory(*checkpoint);
  const qcheck::InspectOptions options{module_glob};
  write_stdout(format == "json" ? qcheck::render_inspect_json(*checkpoint, inventory, options)
                                : qcheck::render_inspect_text(*checkpoint, inventory, options));
  return 0;
}

} // namespace

int
main(int argc, char** argv)
{
  spdlog::set_default_logger(spdlog::stderr_color_mt("qcheck"));
  spdlog::set_pattern("qcheck: %l: %v");

  CLI::App app{"qcheck: lint the quantization metadata of LLM checkpoints"};
  app.set_version_flag("--version", QCHECK_VERSION);
  app.require_subcommand(1);

  std::string path;
  std::string format = "text";
  std::string module_glob;
  auto* inspect = app.add_subcommand("inspect", "Show every tensor and a per-module summary");
  inspect->add_option("path", path, "Model folder or .safetensors file")->required();
  inspect->add_option("--format", format, "Output format")->check(CLI::IsMember({"text", "json"}));
  inspect->add_option("--module", module_glob, "Only modules matching this fnmatch glob");

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
  if (inspect->parsed()) {
    return run_inspect(path, format, module_glob);
  }
  return k_exit_usage;
}
