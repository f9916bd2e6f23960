// `qcheck lint`: the declared quantization against the stored tensors, as each engine reads it,
// MTP/NextN drafts included. Pure: takes what was read, returns a Report.
#pragma once

#include <functional>
#include <memory>
#include <span>
#include <string>
#include <utility>
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
  // true keeps only what `fix` reads to verify a patch: the input's problems (QC009 among
  // them), the lists' divergence (QC106), the draft layers and the engines' decisions (QC101,
  // QC102); every later check is skipped, the entry checks included.
  bool decisions_only = false;
};

// Everything one lint run read and found; `fix` and `explain` reuse it.
struct LintRun
{
  Checkpoint checkpoint;
  Inventory inventory;
  Declaration declaration;
  Drafts drafts;
  Report report;
  // The linter's largest working tables (each engine's layers and decisions), freed with the
  // run: a caller that keeps its runs until exit never frees them one by one. Declared last, so
  // freed first: they view the inventory.
  std::shared_ptr<const void> tables;
};

Report lint(const Checkpoint& checkpoint, const Inventory& inventory,
            const Declaration& declaration, const LintOptions& options);
// The same, its working tables handed to `tables` instead of freed (see LintRun::tables).
Report lint(const Checkpoint& checkpoint, const Inventory& inventory,
            const Declaration& declaration, const LintOptions& options,
            std::shared_ptr<const void>& tables);

// Fills the positions (columns in bytes and in UTF-16 code units) of findings whose pointer names
// a value in a JSON file of the folder; reads up to `threads` files at once (0: one per core). A
// file named in `texts` (by its name in the folder, as Declaration::texts holds them) is read
// there instead of from `fs`; in such a text, an exclusion list of `sources` (the same
// Declaration's: a reading is known by the text's address) marked as read from it, and its
// entries, are located from that reading, without a walk through the text (only its lines are
// counted).
void resolve_positions(const FileSystem& fs, const std::string& root, Report& report,
                       unsigned threads = 0,
                       std::span<const std::pair<std::string, PaddedBytes>> texts = {},
                       std::span<const ConfigSource> sources = {});

// Reads a folder (or one shard) and lints it. Fails only when the path cannot be read at all.
Expected<LintRun> lint_path(const FileSystem& fs, const std::string& path,
                            const LintOptions& options);

// Lints `run`'s checkpoint again with the configuration files as `fs` has them now (an overlay
// holding patched configuration, say). The checkpoint and inventory are reused, not read again;
// positions are not resolved.
Report relint(const FileSystem& fs, const LintRun& run, const LintOptions& options);

// Lints several folders in parallel (one worker per core, each folder's shards read by that
// worker). `options_for` gives each folder its options; `progress(done, total)` is called from
// the workers after each folder (may be empty). Results are in the order of `paths`.
std::vector<Expected<LintRun>> lint_all(
  const FileSystem& fs, const std::vector<std::string>& paths,
  const std::function<LintOptions(const std::string&)>& options_for,
  const std::function<void(size_t, size_t)>& progress = {});

// How deep find_model_folders() goes: folders this many levels below the root are searched, the
// folders inside them are not.
constexpr int k_max_search_depth = 32;

// What find_model_folders() found, and what it could not search.
struct FolderSearch
{
  std::vector<std::string> folders; // sorted
  // One line per folder that could not be listed (the root among them): what it holds is unknown.
  std::vector<std::string> errors;
  // Folders not entered because they lie deeper than k_max_search_depth levels, sorted.
  std::vector<std::string> too_deep;
};

// Every folder under `root` (itself included) holding a config.json and safetensors weights or
// an index. Hidden folders (".git", ...) and links to folders are skipped (`root` may be one).
FolderSearch find_model_folders(const FileSystem& fs, const std::string& root);

} // namespace qcheck
