// `qcheck explain`: why a module is (not) excluded under each engine, and what every declared
// entry covers. Returns text; the CLI prints it.
#pragma once

#include <string>
#include <vector>

#include "qcheck/lint.hpp"

namespace qcheck {

// The module's stored tensors, then for each engine the layer prefix it checks, the block it
// reads, and the entry that decides (or why none does). `name` may be a module name, a tensor
// name or an fnmatch glob over module names. Fails with a one-line message (and a suggestion)
// when nothing matches.
Expected<std::string> explain_module(const LintRun& run, const std::string& name,
                                     const std::vector<Engine>& engines);

// A problem reading the folder explained: a shard, the index or a config file lint reports
// under a QC0xx rule (an invalid header or config, a shard that is not a regular file...).
struct InputProblem
{
  Severity severity;
  // As lint's text words it: "FOLDER/FILE: MESSAGE [QC009 invalid-config]", control characters
  // escaped.
  std::string line;
};

// The input problems of `run` (its report's QC0xx findings), in the report's order. One of
// severity error means explain shows less than the folder declares or stores.
std::vector<InputProblem> input_problems(const LintRun& run);

// Every declared entry (exclusion entries, dynamic keys, extra_config keys, quantized_layers)
// expanded into the engine layers it covers, per engine. Entries covering nothing are marked.
std::string explain_entries(const LintRun& run, const std::vector<Engine>& engines);

} // namespace qcheck
