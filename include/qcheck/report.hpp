// Findings and their rendering. Findings are data: rules append them to a Report, the run never
// stops at the first one, and the exit code is computed once from the whole report.
#pragma once

#include <functional>
#include <string>
#include <string_view>
#include <vector>

#include "qcheck/engines.hpp"
#include "qcheck/rules.hpp"

namespace qcheck {

struct Finding
{
  RuleId rule;
  Severity severity;
  std::string file;                 // primary file, relative to the model folder ("" = folder)
  std::string message;              // one line
  std::vector<std::string> details; // extra lines for humans (per engine, evidence)
  std::vector<std::string> modules; // every checkpoint module the finding covers
  std::vector<std::string> files;   // every file involved
  std::vector<Engine> engines;      // engines that fail (empty: engine-independent)
  std::vector<std::string> suggested_entries; // what `fix` would add, in the list's syntax
  // The suggested GPTQ `dynamic` keys go before the object's keys, not after them: a key the
  // engines read first would hide them there.
  bool entries_first = false;
  std::string fix;                            // one line for humans
  std::string pointer; // JSON pointer into `file` (config or shard header), or ""
  // For a finding about several consecutive values (a run of list entries): the pointer of the
  // last one; "" when the finding is about `pointer`'s value alone.
  std::string end_pointer;
  uint32_t line = 0; // 1-based position of `pointer` in `file`; 0 = unknown
  uint32_t column = 0;
  uint32_t end_line = 0;   // where the span ends: `line`, or the line of `end_pointer`'s value
  uint32_t end_column = 0; // exclusive, on `end_line`; 0 = unknown
  // `column` and `end_column` counted in UTF-16 code units instead of bytes (SARIF's columnKind),
  // set where positions are resolved; 0 = not computed: the byte column stands (equal on a line
  // of ASCII).
  uint32_t column_utf16 = 0;
  uint32_t end_column_utf16 = 0;
  // What the finding is about when `pointer` moves with edits elsewhere in the file (an entry's
  // index in its list, which removing an earlier entry changes): identifies it instead of
  // `pointer` and the message, which may quote that index. "" for most findings.
  std::string subject;
};

// A stable identity for baselines and SARIF partialFingerprints: rule, file, the subject when set
// (else the pointer), the modules, and without modules or subject the message. Line numbers and
// counts do not enter it.
std::string fingerprint(const Finding& finding);

struct Summary
{
  size_t errors = 0;
  size_t warnings = 0;
  size_t infos = 0;
};

struct Report
{
  std::string root; // the model folder as given
  std::vector<Finding> findings;

  Summary summary() const;
  bool has_at_least(Severity severity) const;
};

// Where a finding is, as every format names it: the folder as given (without a trailing '/' or a
// leading "./") joined with the finding's file.
std::string finding_path(const Report& report, const Finding& finding);

// Orders findings most severe first, keeping their order within a severity (a stable sort), in
// place: no second array of findings.
void order_by_severity(std::vector<Finding>& findings);

struct RenderOptions
{
  bool color = false;
};

// Receives output in pieces, in order (the CLI writes each to stdout).
using TextSink = std::function<void(std::string_view)>;

// Gathers appends to buffer() and hands them to a sink in pieces of about 64 KiB: call
// maybe_flush() between records; the rest goes on destruction.
class SinkBuffer
{
public:
  explicit SinkBuffer(const TextSink& sink);
  ~SinkBuffer();
  SinkBuffer(const SinkBuffer&) = delete;
  SinkBuffer& operator=(const SinkBuffer&) = delete;

  std::string& buffer() { return m_buffer; }
  void maybe_flush();

private:
  void flush();

  static constexpr size_t k_piece = 64 * 1024;
  const TextSink& m_sink;
  std::string m_buffer;
};

// One line per finding (path:line:column: severity: message [code name]), its details and fix
// indented below, then the folder's summary line; written piece by piece.
void write_text(const Report& report, const RenderOptions& options, const TextSink& sink);
std::string render_text(const Report& report, const RenderOptions& options = {});
// The findings and a summary, laid out as nlohmann's dump(2); written piece by piece.
void write_json(const std::vector<Report>& reports, const TextSink& sink);
std::string render_json(const std::vector<Report>& reports);
// SARIF 2.1.0: one run (columnKind utf16CodeUnits: the columns are column_utf16 and
// end_column_utf16 where set), the rules that occurred, folder-relative URIs (the folder as given
// joined with the file, as uri_reference() writes it), regions when known, stable
// partialFingerprints. Valid with zero results. write_sarif streams it: each result is built and
// laid out on its own.
void write_sarif(const std::vector<Report>& reports, const TextSink& sink);
std::string render_sarif(const std::vector<Report>& reports);
// A path as an RFC 3986 URI reference, for SARIF's artifactLocation.uri: each segment
// percent-encoded (every byte outside A-Z a-z 0-9 - . _ ~, UTF-8 bytes included), '/' kept, empty
// segments dropped; "./" before a first segment holding ':' (else it reads as a scheme); an
// absolute path as a file:// URI ("/tmp/m" -> "file:///tmp/m"). "" is ".".
std::string uri_reference(std::string_view path);
// GitHub workflow commands: ::error file=F,line=L,col=C,title=T::message
std::string render_github(const std::vector<Report>& reports);
// An entry or key quoted in a message: its first `limit` bytes (not cutting a UTF-8 sequence)
// and "..." when it is longer, so that a 100 KB key does not make a 100 KB line.
std::string clipped(std::string_view text, size_t limit = 200);
// How many UTF-16 code units `text` (UTF-8) takes: one per character, two for one above U+FFFF.
// A byte that starts no valid sequence counts as one (a replacement character).
size_t utf16_length(std::string_view text);
// Text for a terminal: control characters (ESC, line breaks...) as \xNN, so that a tensor name
// or an entry can neither forge a line nor send escape sequences.
std::string printable(std::string_view text);
// Escaping for workflow commands: data (message) and property values.
std::string github_escape_data(std::string_view text);
std::string github_escape_property(std::string_view text);

} // namespace qcheck
