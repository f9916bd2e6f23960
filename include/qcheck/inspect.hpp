// `qcheck inspect`: every tensor (name, dtype, shape, shard, scale siblings) and a per-module
// summary, as text or JSON; the CLI decides where it goes.
#pragma once

#include <string>

#include "qcheck/checkpoint.hpp"
#include "qcheck/modules.hpp"
#include "qcheck/report.hpp"

namespace qcheck {

struct InspectOptions
{
  std::string module_glob; // fnmatch pattern over module names; empty: all
};

// Write the report piece by piece, so memory stays flat whatever the number of tensors. The
// JSON is laid out as nlohmann's dump(2) lays it out (2-space indent, one value per line).
void write_inspect_text(const Checkpoint& checkpoint, const Inventory& inventory,
                        const InspectOptions& options, const TextSink& sink);
void write_inspect_json(const Checkpoint& checkpoint, const Inventory& inventory,
                        const InspectOptions& options, const TextSink& sink);

// How many modules `options` selects (all of them without a glob).
size_t count_selected(const Inventory& inventory, const InspectOptions& options);

// The same, as one string.
std::string render_inspect_text(const Checkpoint& checkpoint, const Inventory& inventory,
                                const InspectOptions& options);
std::string render_inspect_json(const Checkpoint& checkpoint, const Inventory& inventory,
                                const InspectOptions& options);

} // namespace qcheck
