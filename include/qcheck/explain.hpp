// `qcheck explain`: why a module is (not) excluded under each engine, and what every declared
// entry covers. Returns text; the CLI prints it.
#pragma once

#include <string>

#include "qcheck/lint.hpp"

namespace qcheck {

// The module's stored tensors, then for each engine the layer prefix it checks, the block it
// reads, and the entry that decides (or why none does). `name` may be a module name, a tensor
// name or an fnmatch glob over module names. Fails with a one-line message (and a suggestion)
// when nothing matches.
Expected<std::string> explain_module(const LintRun& run, const std::string& name,
                                     const std::vector<Engine>& engines);

// Every declared entry (exclusion entries, dynamic keys, extra_config keys, quantized_layers)
// expanded into the engine layers it covers, per engine. Entries covering nothing are marked.
std::string explain_entries(const LintRun& run, const std::vector<Engine>& engines);

} // namespace qcheck
