// `qcheck lint`: the declared quantization against the stored tensors, as each engine reads it,
// MTP/NextN drafts included. Pure: takes what was read, returns a Report.
#pragma once

#include <vector>

#include "qcheck/checkpoint.hpp"
#include "qcheck/engines.hpp"
#include "qcheck/modules.hpp"
#include "qcheck/quant_config.hpp"
#include "qcheck/report.hpp"

namespace qcheck {

struct LintOptions
{
  std::vector<Engine> engines{k_all_engines.begin(), k_all_engines.end()};
  unsigned threads = 0;
};

// Everything one lint run read and found; `fix` and `explain` reuse it.
struct LintRun
{
  Checkpoint checkpoint;
  Inventory inventory;
  Declaration declaration;
  Drafts drafts;
  Report report;
};

Report lint(const Checkpoint& checkpoint, const Inventory& inventory,
            const Declaration& declaration, const LintOptions& options);

// Fills line/column of findings whose pointer names a value in a JSON file of the folder.
void resolve_positions(const FileSystem& fs, const std::string& root, Report& report);

// Reads a folder (or one shard) and lints it. Fails only when the path cannot be read at all.
Expected<LintRun> lint_path(const FileSystem& fs, const std::string& path,
                            const LintOptions& options);

} // namespace qcheck
