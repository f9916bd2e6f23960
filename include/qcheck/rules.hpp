// The single static rule registry: it drives `qcheck rules`, SARIF driver.rules, the docs and
// "did you mean". IDs are stable and opaque; names are kebab-case; both are accepted on the CLI.
#pragma once

#include <optional>
#include <span>
#include <string>
#include <string_view>

namespace qcheck {

enum class Severity
{
  info,
  warning,
  error
};
std::string_view to_string(Severity severity);
std::optional<Severity> parse_severity(std::string_view text);

enum class RuleId
{
  shard_header,               // QC001
  index_missing_file,         // QC002
  index_missing_tensor,       // QC003
  unindexed_tensors,          // QC004
  unindexed_shard,            // QC005
  duplicate_tensor,           // QC006
  index_path_escapes,         // QC007
  shard_not_regular,          // QC008
  config_invalid,             // QC009
  unknown_quant_method,       // QC010
  no_weights,                 // QC011
  undeclared_unquantized,     // QC101
  excluded_but_quantized,     // QC102
  fused_shards_disagree,      // QC103
  experts_disagree,           // QC104
  partial_expert_exclusion,   // QC105
  config_divergence,          // QC106
  mtp_missing,                // QC107
  draft_plain_quantized,      // QC108
  mtp_partially_quantized,    // QC109
  engine_override,            // QC110
  broad_substring_entry,      // QC111
  unused_entry,               // QC112
  nvfp4_layout,               // QC113
  fp8_layout,                 // QC114
  unevaluable_entry,          // QC115
  inferred_exclusions,        // QC116
  mixed_precision_algo,       // QC117
  format_mismatch,            // QC118
  packed_shape,               // QC119
  block_prefix_overmatch,     // QC120
  short_fp8_entry,            // QC121
  regex_checkpoint_namespace, // QC122
  stale_baseline_entry,       // QC123
  fused_draft_shards,         // QC124
  quantized_embedding,        // QC125
};

struct Rule
{
  RuleId id;
  std::string_view code;        // "QC101"
  std::string_view name;        // "undeclared-unquantized-module"
  Severity severity;            // default
  bool fixable;                 // `qcheck fix` can repair it in metadata
  std::string_view summary;     // one line
  std::string_view explanation; // what, why, the engine error it prevents, example, fix
};

std::span<const Rule> all_rules();
const Rule& rule(RuleId id);
// By code ("QC101", case-insensitive) or name.
const Rule* find_rule(std::string_view code_or_name);
// The closest code or name to a mistyped one, or empty.
std::string suggest_rule(std::string_view code_or_name);

// "unknown rule 'X'" with "; did you mean 'Y'?" when a rule is close.
std::string unknown_rule_message(std::string_view code_or_name);

// The registry as JSON (for tools) and as Markdown (docs/rules.md is this output).
std::string render_rules_json();
std::string render_rules_markdown();
// One rule (`qcheck rules ID --format ...`): its object of render_rules_json() as a document of
// its own, and its section of render_rules_markdown().
std::string render_rule_json(const Rule& rule);
std::string render_rule_markdown(const Rule& rule);

} // namespace qcheck
