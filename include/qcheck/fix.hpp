// `qcheck fix`: plans the smallest set of entries that makes every stored-unquantized module
// excluded under every engine, writes them into every file that carries the list (text edits,
// not re-serialisation), verifies the plan by re-linting the patched files in memory, and commits
// all files or none through atomic writes. Never opens a *.safetensors file for writing.
#pragma once

#include <string>
#include <string_view>
#include <vector>

#include "qcheck/lint.hpp"

namespace qcheck {

struct FileEdit
{
  std::string file;               // relative to the model folder
  std::string original;           // bytes as read
  std::string patched;            // bytes to write
  std::vector<std::string> added; // human-readable: "ignore += \"x\""
  bool is_symlink = false;
  uint32_t mode = 0;
};

struct FixPlan
{
  std::vector<FileEdit> edits;        // files that change
  std::vector<std::string> remaining; // errors metadata cannot repair (one line each)
  std::vector<std::string> refused;   // why a fixable finding was not patched
};

struct FixOptions
{
  // Also remove the entries that exclude modules stored quantized (QC102). Off by default:
  // such an entry may be deliberate and the module re-exported later.
  bool remove_excluding = false;
};

// Plans the edits for a linted folder. `fs` reads the config files (and re-lints the patched
// ones through an overlay). The plan is verified: no fixable error remains and no module stored
// quantized becomes excluded; otherwise the unverifiable part is listed in `refused`. A fused
// layer's disagreeing shards (QC103) that a verified patch settles are not left in `remaining`.
// Once the edits are planned, `run.declaration` is released (left empty): the verification reads
// the patched files into a declaration of its own, and a long list is not held twice (with
// `remove_excluding` removals it is kept until a second round may add entries). The rest of
// `run` is unchanged.
FixPlan plan_fix(const FileSystem& fs, LintRun& run, const LintOptions& options,
                 const FixOptions& fix_options = {});

// Why a patch is refused, one line each (empty: it holds), from the report before it and the
// re-lint of the patched files: a module still undeclared, a module stored quantized newly
// excluded, lists that still differ, a config the re-lint cannot read (invalid JSON, not an
// object) that was readable, any other error the report before lacks or that names an engine
// more (errors compared by fingerprint()), and with `remove_excluding` an exclusion left in
// place. A module still undeclared where no entry can reach it (the finding suggests none: an
// engine's hard rule, such as SGLang's quantized GPTQ fused MoE) and that was undeclared before
// for those engines at least is no problem: when `left` is given, the finding's message is
// appended there (work for a human), else it is a problem too.
std::vector<std::string> patch_problems(const Report& before, const Report& after,
                                        const FixOptions& fix_options,
                                        std::vector<std::string>* left = nullptr);

// A unified diff (a/FILE b/FILE) of one edit, 3 lines of context.
std::string unified_diff(const FileEdit& edit);

// Writing, behind an interface so tests can inject faults (disk full, failed rename).
class FileWriter
{
public:
  virtual ~FileWriter() = default;
  // Creates a temporary file in the directory of `path`, writes and fsyncs `contents` with
  // permission bits `mode` and, when run as root, the owner and group of the file or link at
  // `path` (the link's own) where the system lets it give them; returns the temporary file's
  // path.
  virtual Expected<std::string> write_temp(const std::string& path, std::string_view contents,
                                           uint32_t mode) = 0;
  // Atomically replaces `to` (a symlink at `to` is replaced, its target untouched).
  virtual Expected<void> rename(const std::string& from, const std::string& to) = 0;
  virtual void remove(const std::string& path) = 0;
};

class DiskFileWriter final : public FileWriter
{
public:
  Expected<std::string> write_temp(const std::string& path, std::string_view contents,
                                   uint32_t mode) override;
  Expected<void> rename(const std::string& from, const std::string& to) override;
  void remove(const std::string& path) override;
};

struct ApplyResult
{
  std::vector<std::string> written; // paths written
  std::vector<std::string> notes;   // e.g. "config.json was a symlink; replaced by a file"
};

// Writes every edit into `root` (in place) or into `output_dir` (patched copies; it must not be
// `root`). All files or none: every file is checked first (read-only mode bits, changed on disk
// since it was read, *.safetensors), temporary files are written next to their targets, each
// target is checked again for changes, then all are renamed; if a rename fails, files already
// replaced are restored (a replaced link comes back as a regular file, and the error says so;
// in `output_dir`, each file there before gets back what it held, and a new copy is removed).
// A target in `output_dir` that is not a regular file is refused before anything is written.
// On failure no temporary file is left behind.
Expected<ApplyResult> apply_fix(const FileSystem& fs, FileWriter& writer, const std::string& root,
                                const FixPlan& plan, const std::string& output_dir = {});

} // namespace qcheck
