// `qcheck inspect`: every tensor (name, dtype, shape, shard, scale siblings) and a per-module
// summary. Returns text; the CLI decides where it goes.
#pragma once

#include <string>

#include "qcheck/checkpoint.hpp"
#include "qcheck/modules.hpp"

namespace qcheck {

struct InspectOptions
{
  std::string module_glob; // fnmatch pattern over module names; empty: all
};

std::string render_inspect_text(const Checkpoint& checkpoint, const Inventory& inventory,
                                const InspectOptions& options);
std::string render_inspect_json(const Checkpoint& checkpoint, const Inventory& inventory,
                                const InspectOptions& options);

} // namespace qcheck
