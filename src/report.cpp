#include "qcheck/report.hpp"

#include <algorithm>
#include <array>
#include <fmt/format.h>
#include <fmt/ranges.h>
#include <iterator>
#include <nlohmann/json.hpp>

#include "qcheck/json_text.hpp"

namespace qcheck {

void
order_by_severity(std::vector<Finding>& findings)
{
  std::array<size_t, 3> next{};
  for (const Finding& f : findings) {
    ++next[static_cast<size_t>(f.severity)];
  }
  // Destination of each severity's first finding: errors, then warnings, then infos.
  next = {next[2] + next[1], next[2], 0};
  std::vector<size_t> to(findings.size());
  for (size_t i = 0; i < findings.size(); ++i) {
    to[i] = next[static_cast<size_t>(findings[i].severity)]++;
  }
  for (size_t i = 0; i < findings.size(); ++i) {
    while (to[i] != i) {
      const size_t j = to[i];
      std::swap(findings[i], findings[j]);
      std::swap(to[i], to[j]);
    }
  }
}

Summary
Report::summary() const
{
  Summary s;
  for (const Finding& f : findings) {
    switch (f.severity) {
    case Severity::error:
      ++s.errors;
      break;
    case Severity::warning:
      ++s.warnings;
      break;
    case Severity::info:
      ++s.infos;
      break;
    }
  }
  return s;
}

bool
Report::has_at_least(Severity severity) const
{
  for (const Finding& f : findings) {
    if (f.severity >= severity) {
      return true;
    }
  }
  return false;
}

std::string
clipped(std::string_view text, size_t limit)
{
  if (text.size() <= limit) {
    return std::string(text);
  }
  size_t cut = limit;
  while (cut > 0 && (static_cast<unsigned char>(text[cut]) & 0xC0) == 0x80) {
    --cut;
  }
  return fmt::format("{}...", text.substr(0, cut));
}

size_t
utf16_length(std::string_view text)
{
  size_t units = 0;
  for (size_t i = 0; i < text.size();) {
    const auto lead = static_cast<unsigned char>(text[i]);
    const size_t length = lead < 0x80                    ? 1
                          : lead >= 0xC2 && lead <= 0xDF ? 2
                          : lead >= 0xE0 && lead <= 0xEF ? 3
                          : lead >= 0xF0 && lead <= 0xF4 ? 4
                                                         : 0;
    size_t next = i + 1;
    if (length > 1 && i + length <= text.size()) {
      next = i + length;
      for (size_t k = i + 1; k < next; ++k) {
        if ((static_cast<unsigned char>(text[k]) & 0xC0) != 0x80) {
          next = i + 1; // a truncated sequence: its lead byte alone
          break;
        }
      }
    }
    units += next - i == 4 ? 2 : 1;
    i = next;
  }
  return units;
}

std::string
printable(std::string_view text)
{
  std::string out;
  out.reserve(text.size());
  for (char c : text) {
    const auto u = static_cast<unsigned char>(c);
    if (u < 0x20 || u == 0x7f) {
      out += fmt::format("\\x{:02x}", u);
    } else {
      out += c;
    }
  }
  return out;
}

std::string
finding_path(const Report& report, const Finding& f)
{
  std::string root = report.root;
  while (root.size() > 1 && root.back() == '/') {
    root.pop_back();
  }
  if (root.starts_with("./")) {
    root = root.substr(2);
  }
  if (f.file.empty()) {
    return root;
  }
  return root.empty() || root == "." ? f.file : fmt::format("{}/{}", root, f.file);
}

namespace {

std::string_view
sarif_level(Severity severity)
{
  switch (severity) {
  case Severity::error:
    return "error";
  case Severity::warning:
    return "warning";
  case Severity::info:
    return "note";
  }
  return "none";
}

} // namespace

std::string
uri_reference(std::string_view path)
{
  constexpr std::string_view k_hex = "0123456789ABCDEF";
  const bool absolute = path.starts_with('/');
  std::string out = absolute ? "file://" : "";
  bool first = true;
  size_t at = 0;
  while (at <= path.size()) {
    const size_t slash = std::min(path.find('/', at), path.size());
    const std::string_view segment = path.substr(at, slash - at);
    at = slash + 1;
    if (segment.empty()) {
      continue; // "a//b" is "a/b"; the leading '/' of an absolute path is written below
    }
    if (absolute || !first) {
      out += '/';
    } else if (segment.find(':') != std::string_view::npos) {
      out += "./"; // else "ab:c" reads as a scheme
    }
    first = false;
    for (const char c : segment) {
      const auto u = static_cast<unsigned char>(c);
      if ((c >= 'A' && c <= 'Z') || (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') || c == '-' ||
          c == '.' || c == '_' || c == '~') {
        out += c;
      } else {
        out += '%';
        out += k_hex[u >> 4];
        out += k_hex[u & 0xf];
      }
    }
  }
  if (first) {
    out += absolute ? "/" : ".";
  }
  return out;
}

std::string
fingerprint(const Finding& finding)
{
  // FNV-1a 64 over the identifying fields.
  uint64_t hash = 1469598103934665603ull;
  auto feed = [&](std::string_view text) {
    for (unsigned char c : text) {
      hash = (hash ^ c) * 1099511628211ull;
    }
    hash = (hash ^ 0xff) * 1099511628211ull;
  };
  feed(rule(finding.rule).code);
  feed(finding.file);
  feed(finding.subject.empty() ? finding.pointer : finding.subject);
  if (finding.modules.empty() && finding.subject.empty()) {
    feed(finding.message);
  }
  for (const auto& m : finding.modules) {
    feed(m);
  }
  return fmt::format("{:016x}", hash);
}

std::string
github_escape_data(std::string_view text)
{
  std::string out;
  for (char c : text) {
    switch (c) {
    case '%':
      out += "%25";
      break;
    case '\r':
      out += "%0D";
      break;
    case '\n':
      out += "%0A";
      break;
    default:
      if (static_cast<unsigned char>(c) < 0x20 || c == 0x7f) {
        out += fmt::format("%{:02X}", static_cast<unsigned char>(c));
      } else {
        out += c;
      }
    }
  }
  return out;
}

std::string
github_escape_property(std::string_view text)
{
  std::string out;
  for (char c : github_escape_data(text)) {
    if (c == ':') {
      out += "%3A";
    } else if (c == ',') {
      out += "%2C";
    } else {
      out += c;
    }
  }
  return out;
}

void
write_sarif(const std::vector<Report>& reports, const TextSink& sink)
{
  using Json = nlohmann::ordered_json;
  std::vector<RuleId> used;
  for (const Report& report : reports) {
    for (const Finding& f : report.findings) {
      if (std::find(used.begin(), used.end(), f.rule) == used.end()) {
        used.push_back(f.rule);
      }
    }
  }
  std::sort(used.begin(), used.end());
  SinkBuffer output(sink);
  std::string& out = output.buffer();
  // A value laid out by dump(2) as it would be `indent` spaces deep in the whole log.
  const auto nested = [&](const Json& value, int indent) {
    for (const char c : value.dump(2)) {
      out += c;
      if (c == '\n') {
        out.append(static_cast<size_t>(indent), ' ');
      }
    }
  };
  out += "{\n";
  append_json_member(out, 2, "version", "2.1.0");
  out += ",\n";
  append_json_member(out, 2, "$schema", "https://json.schemastore.org/sarif-2.1.0.json");
  out += ",\n";
  append_json_key(out, 2, "runs");
  out += "[\n    {\n";
  append_json_object_start(out, 6, "tool");
  append_json_object_start(out, 8, "driver");
  append_json_member(out, 10, "name", "qcheck");
  out += ",\n";
  append_json_member(out, 10, "version", QCHECK_VERSION);
  out += ",\n";
  append_json_key(out, 10, "rules");
  append_json_array(out, 10, used.size(), [&](size_t i) {
    const Rule& r = rule(used[i]);
    nested(Json{{"id", r.code},
                {"name", r.name},
                {"shortDescription", {{"text", r.summary}}},
                {"fullDescription", {{"text", r.explanation}}},
                {"help", {{"text", fmt::format("{}\n\nqcheck rules {}", r.explanation, r.code)}}},
                {"defaultConfiguration", {{"level", sarif_level(r.severity)}}},
                {"properties", {{"fixable", r.fixable}}}},
           12);
  });
  out += "\n        }\n      },\n";
  // Columns count UTF-16 code units (§3.14.27; what GitHub code scanning assumes).
  append_json_member(out, 6, "columnKind", "utf16CodeUnits");
  out += ",\n";
  append_json_key(out, 6, "results");
  // Each result as dump(2) lays it out 8 spaces deep, written directly: a log can hold 10^5.
  size_t count = 0;
  for (const Report& report : reports) {
    for (const Finding& f : report.findings) {
      const Rule& r = rule(f.rule);
      const auto index = std::find(used.begin(), used.end(), f.rule) - used.begin();
      out += count++ == 0 ? "[\n        {\n" : ",\n        {\n";
      append_json_member(out, 10, "ruleId", r.code);
      fmt::format_to(std::back_inserter(out), ",\n          \"ruleIndex\": {},\n", index);
      append_json_member(out, 10, "level", sarif_level(f.severity));
      out += ",\n";
      append_json_object_start(out, 10, "message");
      append_json_member(out, 12, "text",
                         f.fix.empty() ? f.message : fmt::format("{} Fix: {}", f.message, f.fix));
      out += "\n          },\n";
      append_json_key(out, 10, "locations");
      out += "[\n            {\n";
      append_json_object_start(out, 14, "physicalLocation");
      append_json_object_start(out, 16, "artifactLocation");
      append_json_member(out, 18, "uri", uri_reference(finding_path(report, f)));
      out += "\n                }";
      if (f.line > 0) {
        out += ",\n";
        append_json_key(out, 16, "region");
        fmt::format_to(std::back_inserter(out),
                       "{{\n                  \"startLine\": {},\n"
                       "                  \"startColumn\": {}",
                       f.line,
                       std::max<uint32_t>(1, f.column_utf16 > 0 ? f.column_utf16 : f.column));
        // A span over lines ends at its last line (and column, when known); a span on one line
        // at its column.
        const bool lines = f.end_line > f.line;
        if (lines || f.end_column > f.column) {
          fmt::format_to(std::back_inserter(out), ",\n                  \"endLine\": {}",
                         lines ? f.end_line : f.line);
        }
        if ((lines && f.end_column > 0) || (!lines && f.end_column > f.column)) {
          fmt::format_to(std::back_inserter(out), ",\n                  \"endColumn\": {}",
                         f.end_column_utf16 > 0 ? f.end_column_utf16 : f.end_column);
        }
        out += "\n                }";
      }
      out += "\n              }\n            }\n          ],\n";
      append_json_object_start(out, 10, "partialFingerprints");
      append_json_member(out, 12, "qcheck/v1", fingerprint(f));
      out += "\n          },\n";
      append_json_object_start(out, 10, "properties");
      append_json_key(out, 12, "modules");
      append_json_strings(out, 12, f.modules);
      out += ",\n";
      append_json_key(out, 12, "engines");
      append_json_array(out, 12, f.engines.size(),
                        [&](size_t i) { append_json_string(out, to_string(f.engines[i])); });
      out += ",\n";
      append_json_key(out, 12, "files");
      append_json_strings(out, 12, f.files);
      if (!f.pointer.empty()) {
        out += ",\n";
        append_json_member(out, 12, "json_pointer", f.pointer);
      }
      if (!f.end_pointer.empty()) {
        out += ",\n";
        append_json_member(out, 12, "end_json_pointer", f.end_pointer);
      }
      if (!f.suggested_entries.empty()) {
        out += ",\n";
        append_json_key(out, 12, "suggested_entries");
        append_json_strings(out, 12, f.suggested_entries);
        if (f.entries_first) {
          out += ",\n";
          append_json_key(out, 12, "entries_first");
          out += "true";
        }
      }
      out += "\n          }\n        }";
      output.maybe_flush();
    }
  }
  out += count == 0 ? "[]" : "\n      ]";
  out += "\n    }\n  ]\n}\n";
}

std::string
render_sarif(const std::vector<Report>& reports)
{
  std::string out;
  write_sarif(reports, [&](std::string_view piece) { out += piece; });
  return out;
}

std::string
render_github(const std::vector<Report>& reports)
{
  std::string out;
  for (const Report& report : reports) {
    for (const Finding& f : report.findings) {
      const std::string_view command = f.severity == Severity::error     ? "error"
                                       : f.severity == Severity::warning ? "warning"
                                                                         : "notice";
      std::string props = fmt::format("file={}", github_escape_property(finding_path(report, f)));
      if (f.line > 0) {
        props += fmt::format(",line={},col={}", f.line, std::max<uint32_t>(1, f.column));
        if (f.end_line > f.line) {
          props += fmt::format(",endLine={}", f.end_line);
        } else if (f.end_column > f.column) {
          props += fmt::format(",endColumn={}", f.end_column);
        }
      }
      const Rule& r = rule(f.rule);
      props +=
        fmt::format(",title={}", github_escape_property(fmt::format("{} {}", r.code, r.name)));
      std::string message = f.message;
      if (!f.fix.empty()) {
        message += fmt::format("\nfix: {}", f.fix);
      }
      out += fmt::format("::{} {}::{}\n", command, props, github_escape_data(message));
    }
  }
  return out;
}

void
write_text(const Report& report, const RenderOptions& options, const TextSink& sink)
{
  SinkBuffer output(sink);
  std::string& out = output.buffer();
  const auto paint = [&](std::string_view code, std::string_view text) {
    if (options.color) {
      fmt::format_to(std::back_inserter(out), "\x1b[{}m{}\x1b[0m", code, text);
    } else {
      out += text;
    }
  };
  for (const Finding& f : report.findings) {
    const Rule& r = rule(f.rule);
    const std::string_view colour = f.severity == Severity::error     ? "1;31"
                                    : f.severity == Severity::warning ? "1;33"
                                                                      : "1;36";
    std::string path = finding_path(report, f);
    if (f.line > 0) {
      fmt::format_to(std::back_inserter(path), ":{}:{}", f.line, std::max<uint32_t>(1, f.column));
    }
    out += printable(path);
    out += ": ";
    paint(colour, to_string(f.severity));
    fmt::format_to(std::back_inserter(out), ": {} [{} {}]\n", printable(f.message), r.code, r.name);
    for (const auto& d : f.details) {
      out += "    ";
      out += printable(d);
      out += '\n';
    }
    if (!f.fix.empty()) {
      out += "    ";
      paint("1;32", "fix:");
      out += ' ';
      out += printable(f.fix);
      out += '\n';
    }
    output.maybe_flush();
  }
  const Summary s = report.summary();
  fmt::format_to(std::back_inserter(out), "{}: {} error{}, {} warning{}, {} info\n",
                 printable(report.root), s.errors, s.errors == 1 ? "" : "s", s.warnings,
                 s.warnings == 1 ? "" : "s", s.infos);
}

std::string
render_text(const Report& report, const RenderOptions& options)
{
  std::string out;
  write_text(report, options, [&](std::string_view piece) { out += piece; });
  return out;
}

SinkBuffer::SinkBuffer(const TextSink& sink) : m_sink(sink)
{
  m_buffer.reserve(k_piece + 4096);
}

SinkBuffer::~SinkBuffer()
{
  flush();
}

void
SinkBuffer::maybe_flush()
{
  if (m_buffer.size() >= k_piece) {
    flush();
  }
}

void
SinkBuffer::flush()
{
  if (!m_buffer.empty()) {
    m_sink(m_buffer);
    m_buffer.clear();
  }
}

void
write_json(const std::vector<Report>& reports, const TextSink& sink)
{
  SinkBuffer output(sink);
  std::string& out = output.buffer();
  const auto member = [&](std::string_view key, std::string_view value) {
    append_json_member(out, 6, key, value);
    out += ",\n";
  };
  const auto strings = [&](std::string_view key, const std::vector<std::string>& values) {
    append_json_key(out, 6, key);
    append_json_strings(out, 6, values);
    out += ",\n";
  };
  Summary total;
  size_t count = 0;
  out += "{\n";
  append_json_key(out, 2, "findings");
  for (const Report& report : reports) {
    const Summary s = report.summary();
    total.errors += s.errors;
    total.warnings += s.warnings;
    total.infos += s.infos;
    for (const Finding& f : report.findings) {
      const Rule& r = rule(f.rule);
      std::vector<std::string> engines;
      for (Engine e : f.engines) {
        engines.emplace_back(to_string(e));
      }
      out += count++ == 0 ? "[\n    {\n" : ",\n    {\n";
      member("rule", r.code);
      member("name", r.name);
      member("severity", to_string(f.severity));
      member("folder", report.root);
      member("file", f.file);
      member("message", f.message);
      strings("details", f.details);
      strings("modules", f.modules);
      strings("files", f.files);
      strings("engines", engines);
      strings("suggested_entries", f.suggested_entries);
      if (f.entries_first) {
        out += "      \"entries_first\": true,\n";
      }
      member("fix", f.fix);
      member("json_pointer", f.pointer);
      member("end_json_pointer", f.end_pointer);
      fmt::format_to(std::back_inserter(out),
                     "      \"line\": {},\n      \"column\": {},\n      \"end_line\": {},\n"
                     "      \"end_column\": {},\n",
                     f.line, f.column, f.end_line, f.end_column);
      member("fingerprint", fingerprint(f));
      out += r.fixable ? "      \"fixable\": true\n    }" : "      \"fixable\": false\n    }";
      output.maybe_flush();
    }
  }
  out += count == 0 ? "[],\n" : "\n  ],\n";
  append_json_key(out, 2, "summary");
  fmt::format_to(std::back_inserter(out),
                 "{{\n    \"errors\": {},\n    \"warnings\": {},\n    \"infos\": {}\n  }}\n}}\n",
                 total.errors, total.warnings, total.infos);
}

std::string
render_json(const std::vector<Report>& reports)
{
  std::string out;
  write_json(reports, [&](std::string_view piece) { out += piece; });
  return out;
}

} // namespace qcheck
