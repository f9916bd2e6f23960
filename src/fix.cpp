#include "qcheck/fix.hpp"

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <fcntl.h>
#include <fmt/format.h>
#include <fmt/ranges.h>
#include <map>
#include <set>
#include <sys/stat.h>
#include <unistd.h>
#include <unordered_set>

#include "qcheck/json_text.hpp"
#include "qcheck/report.hpp"

namespace qcheck {

namespace {

struct Target
{
  std::string file;
  std::string pointer;
  bool object = false; // an object of key -> value (GPTQ dynamic, AutoRound extra_config)
  // An object's member that exists already gets the new value (an AutoRound extra_config key's
  // "bits"); else it is kept (a GPTQ "-:" key skips whatever it holds).
  bool replace = false;
  bool first = false; // new members go before the object's (Finding::entries_first), in order
  std::string label;  // how the log names the object; empty: its key
  bool operator<(const Target& o) const
  {
    return std::tie(file, pointer, object, replace, first) <
           std::tie(o.file, o.pointer, o.object, o.replace, o.first);
  }
};

Target
list_target(std::string file, std::string pointer)
{
  Target t;
  t.file = std::move(file);
  t.pointer = std::move(pointer);
  return t;
}

Target
object_target(std::string file, std::string pointer)
{
  Target t = list_target(std::move(file), std::move(pointer));
  t.object = true;
  return t;
}

std::string
list_pointer(const ConfigSource& s, std::string_view key)
{
  return fmt::format("{}/{}", s.pointer, key);
}

// Splits text into lines, each keeping its line ending.
std::vector<std::string_view>
lines_of(std::string_view text)
{
  std::vector<std::string_view> lines;
  size_t start = 0;
  while (start < text.size()) {
    size_t end = text.find('\n', start);
    end = end == std::string_view::npos ? text.size() : end + 1;
    lines.push_back(text.substr(start, end - start));
    start = end;
  }
  return lines;
}

std::string
diff_line(char mark, std::string_view line)
{
  std::string out(1, mark);
  out += line;
  if (out.back() != '\n') {
    out += "\n\\ No newline at end of file\n";
  }
  return out;
}

std::set<std::string>
modules_of(const Report& report, RuleId id)
{
  std::set<std::string> out;
  for (const Finding& f : report.findings) {
    if (f.rule == id) {
      out.insert(f.modules.begin(), f.modules.end());
    }
  }
  return out;
}

} // namespace

FixPlan
plan_fix(const FileSystem& fs, LintRun& run, const LintOptions& options,
         const FixOptions& fix_options)
{
  FixPlan plan;
  const Declaration& decl = run.declaration;
  std::map<Target, std::vector<std::pair<std::string, std::string>>> additions;
  std::set<QuantFormat> formats_touched;

  std::map<Target, std::vector<std::string>> removals;
  // QC103 findings among plan.remaining: their index there, and identity.
  std::vector<std::pair<size_t, std::string>> disagreeing;
  // The QC101 findings whose entries were added: a patch that changes nothing leaves them.
  std::vector<std::string> suggested_for;
  // A QC101 finding's entries, added to every block of its format.
  const auto add_suggestions = [&](const Finding& f) {
    suggested_for.push_back(f.message);
    const ConfigSource* primary = decl.find(f.file);
    if (!primary) {
      plan.refused.push_back(fmt::format("{}: no declaration to patch", f.file));
      return;
    }
    formats_touched.insert(primary->format);
    for (const ConfigSource& s : decl.sources) {
      if (s.format != primary->format) {
        continue;
      }
      for (const std::string& entry : f.suggested_entries) {
        if (entry.starts_with("-:")) {
          Target t = object_target(s.file, list_pointer(s, "dynamic"));
          t.first = f.entries_first;
          additions[t].emplace_back(entry, "{}");
        } else if (s.format == QuantFormat::auto_round) {
          // A key the block has already gets bits 16, its other settings kept; one that says
          // 16 or more already is left as it is. ("model." + the name is not that key: only
          // vLLM's get_quant_method reads it, and only at 16 bits or more.)
          const auto has = std::find_if(s.extra_config.begin(), s.extra_config.end(),
                                        [&](const ExtraConfigEntry& e) { return e.key == entry; });
          if (has == s.extra_config.end()) {
            additions[object_target(s.file, list_pointer(s, "extra_config"))].emplace_back(
              entry, R"({"bits": 16, "data_type": "fp"})");
          } else if (has->bits < 16) {
            const std::string member =
              fmt::format("{}/{}", list_pointer(s, "extra_config"), escape_pointer_token(has->key));
            additions[{s.file, member, true, true, false,
                       fmt::format("extra_config[{}]", escape_json(has->key))}]
              .emplace_back("bits", "16");
          }
        } else {
          additions[list_target(s.file, list_pointer(s, s.list_key))].emplace_back(entry, "");
        }
      }
    }
  };
  for (const Finding& f : run.report.findings) {
    // QC102, and a QC103 whose shards are all stored quantized: entries to remove.
    const bool removes =
      f.rule == RuleId::excluded_but_quantized || f.rule == RuleId::fused_shards_disagree;
    if (removes && !f.suggested_entries.empty()) {
      const ConfigSource* primary = decl.find(f.file);
      if (!fix_options.remove_excluding || !primary) {
        plan.remaining.push_back(fmt::format("{}: {} [{}]; --remove-excluding would remove {}",
                                             f.file, f.message, rule(f.rule).code,
                                             fmt::join(f.suggested_entries, ", ")));
        continue;
      }
      for (const ConfigSource& s : decl.sources) {
        if (s.format == primary->format && s.has_list) {
          auto& list = removals[list_target(s.file, list_pointer(s, s.list_key))];
          list.insert(list.end(), f.suggested_entries.begin(), f.suggested_entries.end());
        }
      }
      continue;
    }
    if (f.rule != RuleId::undeclared_unquantized || f.suggested_entries.empty()) {
      if (f.severity == Severity::error && !rule(f.rule).fixable) {
        if (f.rule == RuleId::fused_shards_disagree) {
          // An entry --remove-excluding removes may be what split the shards: settled then.
          disagreeing.emplace_back(plan.remaining.size(), fingerprint(f));
        }
        plan.remaining.push_back(
          fmt::format("{}: {} [{}]", f.file.empty() ? "." : f.file, f.message, rule(f.rule).code));
      } else if (f.severity == Severity::error && f.rule != RuleId::config_divergence) {
        plan.refused.push_back(fmt::format("no entry can be derived for: {}", f.message));
      }
      continue;
    }
    add_suggestions(f);
  }
  // Every copy of a list ends with the same entries (R2): add what the others have. A block
  // of the format without the list (config.json with no "ignore") reads as an empty list: it
  // gets the key, with every entry of the others.
  for (QuantFormat format : {QuantFormat::modelopt, QuantFormat::compressed_tensors}) {
    std::vector<const ConfigSource*> copies, listing;
    for (const ConfigSource& s : decl.sources) {
      if (s.format == format && !s.list_key.empty()) {
        copies.push_back(&s);
        if (s.has_list) {
          listing.push_back(&s);
        }
      }
    }
    if (copies.size() < 2 || listing.empty()) {
      continue;
    }
    // Entries --remove-excluding takes out of one copy are not copied into another, nor any entry
    // that excludes a module stored quantized (QC102 names it) for an engine: copied, it would
    // exclude that module for the engines that read the other file too.
    std::unordered_set<std::string_view> removed;
    for (const ConfigSource* s : copies) {
      if (const auto it = removals.find(list_target(s->file, list_pointer(*s, s->list_key)));
          it != removals.end()) {
        removed.insert(it->second.begin(), it->second.end());
      }
    }
    for (const Finding& f : run.report.findings) {
      if (f.rule == RuleId::excluded_but_quantized) {
        removed.insert(f.suggested_entries.begin(), f.suggested_entries.end());
      }
    }
    // Nor an entry too long for qcheck to evaluate (QC115): what it does to the other file's
    // readers could not be verified. The lists then still differ, and the patch is refused.
    for (const ConfigSource* to : copies) {
      const std::unordered_set<std::string_view> has(to->excludes.begin(), to->excludes.end());
      for (const ConfigSource* from : listing) {
        for (const std::string_view e : from->excludes) {
          if (!has.contains(e) && !removed.contains(e) && e.size() <= k_longest_entry) {
            additions[list_target(to->file, list_pointer(*to, to->list_key))].emplace_back(e, "");
          }
        }
      }
    }
  }

  // Patches the texts with `additions` and `removals` into `out` (edits, and refusals), and
  // re-lints the patched configuration in memory (the decisions are all it needs): the report,
  // nullopt when nothing changes.
  const auto patch = [&](FixPlan& out) -> std::optional<Report> {
    std::map<std::string, FileEdit> edits;
    for (const auto& [target, entries] : additions) {
      auto [it, inserted] = edits.try_emplace(target.file);
      FileEdit& edit = it->second;
      if (inserted) {
        const std::string path = join_path(run.checkpoint.root, target.file);
        auto text = fs.read_file(path, k_max_config_size);
        if (!text) {
          out.refused.push_back(text.error());
          edits.erase(it);
          continue;
        }
        if (auto why = edit_refusal(*text)) {
          out.refused.push_back(fmt::format("{}: not edited: {}", target.file, *why));
          edits.erase(it);
          continue;
        }
        const FileInfo info = fs.stat(path);
        edit.file = target.file;
        edit.original = std::move(*text);
        edit.patched = edit.original;
        edit.is_symlink = info.is_symlink;
        edit.mode = info.mode;
      }
      const std::string key =
        !target.label.empty() ? target.label : target.pointer.substr(target.pointer.rfind('/') + 1);
      // The log shows entries as JSON tokens (escape_json): no control character reaches a
      // terminal.
      if (auto removal = removals.find(target); removal != removals.end()) {
        auto patched = remove_from_string_array(edit.patched, target.pointer, removal->second);
        if (!patched) {
          out.refused.push_back(fmt::format("{}: {}", target.file, patched.error()));
        } else if (*patched != edit.patched) {
          for (const auto& e : removal->second) {
            edit.added.push_back(fmt::format("{} -= {}", key, escape_json(e)));
          }
          edit.patched = std::move(*patched);
        }
      }
      if (target.object) {
        // Each member put first goes before those put first already: the last goes in first,
        // and its log line before theirs.
        const size_t logged = edit.added.size();
        for (size_t k = 0; k < entries.size(); ++k) {
          const auto& [name, value] = entries[target.first ? entries.size() - 1 - k : k];
          const bool existed =
            (target.replace || target.first) &&
            locate(edit.patched, target.pointer + "/" + escape_pointer_token(name)).has_value();
          auto patched =
            add_object_member(edit.patched, target.pointer, name, value,
                              target.replace ? ExistingMember::replace : ExistingMember::keep,
                              target.first ? MemberPlace::first : MemberPlace::last);
          if (!patched) {
            out.refused.push_back(fmt::format("{}: {}", target.file, patched.error()));
            continue;
          }
          if (*patched != edit.patched) {
            const std::string shown = escape_json(name);
            edit.added.insert(
              target.first ? edit.added.begin() + static_cast<ptrdiff_t>(logged) : edit.added.end(),
              existed && target.first ? fmt::format("{}: {} moved first", key, shown)
              : existed               ? fmt::format("{}[{}] = {}", key, shown, value)
              : target.first          ? fmt::format("{} += {}: {} (first)", key, shown, value)
                                      : fmt::format("{} += {}: {}", key, shown, value));
            edit.patched = std::move(*patched);
          }
        }
      } else {
        std::vector<std::string> names;
        for (const auto& [name, _] : entries) {
          if (std::find(names.begin(), names.end(), name) == names.end()) {
            names.push_back(name);
          }
        }
        std::vector<std::string> appended; // those the list did not hold
        auto patched = append_to_string_array(edit.patched, target.pointer, names, &appended);
        if (!patched) {
          out.refused.push_back(fmt::format("{}: {}", target.file, patched.error()));
          continue;
        }
        if (*patched != edit.patched) {
          for (const auto& n : appended) {
            edit.added.push_back(fmt::format("{} += {}", key, escape_json(n)));
          }
          edit.patched = std::move(*patched);
        }
      }
    }
    for (auto& [file, edit] : edits) {
      if (edit.patched != edit.original) {
        out.edits.push_back(std::move(edit));
      }
    }
    if (out.edits.empty()) {
      return std::nullopt;
    }
    OverlayFileSystem overlay(fs);
    for (const FileEdit& edit : out.edits) {
      overlay.set(join_path(run.checkpoint.root, edit.file), edit.patched);
    }
    LintOptions verify = options;
    verify.decisions_only = true;
    return relint(overlay, run, verify);
  };

  for (auto& [target, entries] : removals) {
    // Each module of a fused layer names the same entries: each is removed (and logged) once.
    std::unordered_set<std::string> seen;
    std::erase_if(entries, [&](const std::string& e) { return !seen.insert(e).second; });
    additions[target]; // make sure the file is read and patched below
  }
  // Without removals no second round reads the declaration: it goes before the re-lint reads
  // its own, so a long list is not held twice.
  if (removals.empty()) {
    run.declaration = Declaration{};
  }
  FixPlan attempt = plan;
  std::optional<Report> again = patch(attempt);
  // A removed entry may also have excluded modules stored unquantized (AWQ's substring
  // "mlp.down_proj" for a quantized layer 0 and a float layer 1): the re-lint names them
  // (QC101, with entries), which are added, and the whole patch is verified again.
  if (again && !removals.empty()) {
    const std::set<std::string> undeclared_before =
      modules_of(run.report, RuleId::undeclared_unquantized);
    bool named = false;
    for (const Finding& f : again->findings) {
      if (f.rule == RuleId::undeclared_unquantized && !f.suggested_entries.empty() &&
          std::none_of(f.modules.begin(), f.modules.end(),
                       [&](const std::string& m) { return undeclared_before.contains(m); })) {
        add_suggestions(f);
        named = true;
      }
    }
    if (named) {
      attempt = plan;
      again = patch(attempt);
    }
  }
  plan = std::move(attempt);
  run.declaration = Declaration{};
  if (!again && plan.edits.empty() && plan.refused.empty()) {
    // Every entry suggested is listed already (an engine reads another list): no patch helps.
    for (const std::string& message : suggested_for) {
      plan.refused.push_back(
        fmt::format("the lists already hold every entry suggested, still undeclared: {}", message));
    }
  }
  if (again) {
    std::vector<std::string> left;
    const std::vector<std::string> problems =
      patch_problems(run.report, *again, fix_options, &left);
    if (!problems.empty()) {
      plan.refused.insert(plan.refused.end(), problems.begin(), problems.end());
      plan.edits.clear();
    } else {
      // What the patch cannot reach (an engine's hard rule) is left for a human.
      for (const std::string& message : left) {
        plan.remaining.push_back(message);
      }
    }
    if (problems.empty() && !disagreeing.empty()) {
      // Shards the patch made agree (the re-lint decides them all) need no human any more.
      std::set<std::string> still;
      for (const Finding& f : again->findings) {
        if (f.rule == RuleId::fused_shards_disagree) {
          still.insert(fingerprint(f));
        }
      }
      for (auto it = disagreeing.rbegin(); it != disagreeing.rend(); ++it) {
        if (!still.contains(it->second)) {
          plan.remaining.erase(plan.remaining.begin() + static_cast<std::ptrdiff_t>(it->first));
        }
      }
    }
  }
  return plan;
}

std::vector<std::string>
patch_problems(const Report& before, const Report& after, const FixOptions& fix_options,
               std::vector<std::string>* left)
{
  // The modules stored quantized that engines excluded, and those engines: a patch must not add
  // a module or an engine.
  std::map<std::string, std::set<Engine>> excluding_before;
  for (const Finding& f : before.findings) {
    if (f.rule == RuleId::excluded_but_quantized) {
      for (const std::string& m : f.modules) {
        excluding_before[m].insert(f.engines.begin(), f.engines.end());
      }
    }
  }
  // Files already unreadable (an error, not a repeated key's warning): their findings repeat.
  std::set<std::string> before_unreadable;
  for (const Finding& f : before.findings) {
    if (f.rule == RuleId::config_invalid && f.severity == Severity::error) {
      before_unreadable.insert(f.file);
    }
  }
  // Any other error the patch would bring (a fused layer's shards listed apart: QC103), or an
  // engine it would add to one: errors compared by their identity (fingerprint(): rule, file,
  // pointer, modules), as their messages name the engines and counts that a patch may change.
  std::map<std::string, std::set<Engine>> before_errors;
  for (const Finding& f : before.findings) {
    if (f.severity == Severity::error) {
      before_errors[fingerprint(f)].insert(f.engines.begin(), f.engines.end());
    }
  }
  // Whether each module of `f` (an undeclared one) was undeclared before for each of its engines.
  const auto undeclared_before = [&](const Finding& f) {
    return std::all_of(f.modules.begin(), f.modules.end(), [&](const std::string& m) {
      return std::any_of(before.findings.begin(), before.findings.end(), [&](const Finding& b) {
        return b.rule == f.rule && b.file == f.file &&
               std::find(b.modules.begin(), b.modules.end(), m) != b.modules.end() &&
               std::all_of(f.engines.begin(), f.engines.end(), [&](Engine e) {
                 return std::find(b.engines.begin(), b.engines.end(), e) != b.engines.end();
               });
      });
    });
  };
  std::vector<std::string> problems;
  for (const Finding& f : after.findings) {
    if (f.severity != Severity::error || f.rule == RuleId::undeclared_unquantized ||
        f.rule == RuleId::excluded_but_quantized || f.rule == RuleId::config_divergence ||
        f.rule == RuleId::config_invalid) {
      // checked below
    } else if (const auto was = before_errors.find(fingerprint(f)); was == before_errors.end()) {
      problems.push_back(
        fmt::format("the patch would add an error: {} [{}]", f.message, rule(f.rule).code));
    } else if (std::any_of(f.engines.begin(), f.engines.end(),
                           [&](Engine e) { return !was->second.contains(e); })) {
      problems.push_back(fmt::format("the patch would make more engines fail: {} [{}]", f.message,
                                     rule(f.rule).code));
    }
    if (f.rule == RuleId::undeclared_unquantized) {
      const bool unreachable = left != nullptr && f.suggested_entries.empty() &&
                               !f.modules.empty() && undeclared_before(f);
      if (unreachable) {
        left->push_back(fmt::format("{} [{}]; {}", f.message, rule(f.rule).code, f.fix));
      } else {
        problems.push_back(fmt::format("still undeclared after the patch: {}", f.message));
      }
    }
    if (f.rule == RuleId::excluded_but_quantized &&
        std::any_of(f.modules.begin(), f.modules.end(),
                    [&](const std::string& m) { return !excluding_before.contains(m); })) {
      problems.push_back(fmt::format("the patch would exclude a quantized module: {}", f.message));
    } else if (f.rule == RuleId::excluded_but_quantized &&
               std::any_of(f.modules.begin(), f.modules.end(), [&](const std::string& m) {
                 const auto was = excluding_before.find(m);
                 return was != excluding_before.end() &&
                        std::any_of(f.engines.begin(), f.engines.end(),
                                    [&](Engine e) { return !was->second.contains(e); });
               })) {
      problems.push_back(
        fmt::format("the patch would make more engines exclude a quantized module: {}", f.message));
    }
    if (f.rule == RuleId::excluded_but_quantized && fix_options.remove_excluding &&
        !f.suggested_entries.empty()) {
      problems.push_back(fmt::format("still excluded after the patch: {}", f.message));
    }
    if (f.rule == RuleId::fused_shards_disagree && fix_options.remove_excluding &&
        !f.suggested_entries.empty()) {
      problems.push_back(fmt::format("shards still listed apart after the patch: {}", f.message));
    }
    if (f.rule == RuleId::config_divergence) {
      problems.push_back(fmt::format("lists still differ after the patch: {}", f.message));
    }
    if (f.rule == RuleId::config_invalid && f.severity == Severity::error &&
        !before_unreadable.contains(f.file)) {
      problems.push_back(fmt::format("the patch would make {} unreadable: {}", f.file, f.message));
    }
  }
  return problems;
}

std::string
unified_diff(const FileEdit& edit)
{
  const auto a = lines_of(edit.original);
  const auto b = lines_of(edit.patched);
  size_t prefix = 0;
  while (prefix < a.size() && prefix < b.size() && a[prefix] == b[prefix]) {
    ++prefix;
  }
  size_t suffix = 0;
  while (suffix < a.size() - prefix && suffix < b.size() - prefix &&
         a[a.size() - 1 - suffix] == b[b.size() - 1 - suffix]) {
    ++suffix;
  }
  if (prefix == a.size() && prefix == b.size()) {
    return {};
  }
  const size_t context = 3;
  const size_t start = prefix > context ? prefix - context : 0;
  const size_t a_end = std::min(a.size(), a.size() - suffix + context);
  const size_t b_end = std::min(b.size(), b.size() - suffix + context);
  std::string out = fmt::format("--- a/{}\n+++ b/{}\n@@ -{},{} +{},{} @@\n", edit.file, edit.file,
                                start + 1, a_end - start, start + 1, b_end - start);
  for (size_t i = start; i < prefix; ++i) {
    out += diff_line(' ', a[i]);
  }
  for (size_t i = prefix; i < a.size() - suffix; ++i) {
    out += diff_line('-', a[i]);
  }
  for (size_t i = prefix; i < b.size() - suffix; ++i) {
    out += diff_line('+', b[i]);
  }
  for (size_t i = a.size() - suffix; i < a_end; ++i) {
    out += diff_line(' ', a[i]);
  }
  return out;
}

Expected<std::string>
DiskFileWriter::write_temp(const std::string& path, std::string_view contents, uint32_t mode)
{
  const size_t slash = path.rfind('/');
  const std::string dir = slash == std::string::npos ? "." : path.substr(0, slash);
  const std::string base = slash == std::string::npos ? path : path.substr(slash + 1);
  std::string temp = fmt::format("{}/.{}.qcheck-XXXXXX", dir, base);
  const int fd = ::mkstemp(temp.data());
  if (fd < 0) {
    return unexpected(
      fmt::format("{}: cannot create a temporary file: {}", dir, std::strerror(errno)));
  }
  auto fail = [&](const char* what) {
    const int err = errno;
    ::close(fd);
    ::unlink(temp.c_str());
    return unexpected(fmt::format("{}: {}: {}", path, what, std::strerror(err)));
  };
  size_t done = 0;
  while (done < contents.size()) {
    const ssize_t n = ::write(fd, contents.data() + done, contents.size() - done);
    if (n < 0) {
      if (errno == EINTR) {
        continue;
      }
      return fail("write failed");
    }
    done += static_cast<size_t>(n);
  }
  // Run as root, the file keeps the owner and group of the file or link it replaces (a link's
  // own, not its target's): root must not take a user's file. A non-root run's files are its
  // own, as any editor's are (a folder's setgid bit sets their group as usual).
  // Best effort: root in a user namespace, or on NFS with root squashed, cannot give a file an
  // owner it does not map (EINVAL, EPERM); the file is then its own, as before this existed.
  struct stat target;
  struct stat written;
  if (::geteuid() == 0 && ::lstat(path.c_str(), &target) == 0 &&
      (S_ISREG(target.st_mode) || S_ISLNK(target.st_mode)) && ::fstat(fd, &written) == 0 &&
      (written.st_uid != target.st_uid || written.st_gid != target.st_gid)) {
    [[maybe_unused]] const int kept = ::fchown(fd, target.st_uid, target.st_gid);
  }
  // After the owner: a change of owner clears the setuid and setgid bits.
  if (::fchmod(fd, mode != 0 ? mode : 0644) != 0) {
    return fail("cannot set permissions");
  }
  if (::fsync(fd) != 0) {
    return fail("fsync failed");
  }
  ::close(fd);
  return temp;
}

Expected<void>
DiskFileWriter::rename(const std::string& from, const std::string& to)
{
  if (::rename(from.c_str(), to.c_str()) != 0) {
    return unexpected(fmt::format("{}: rename failed: {}", to, std::strerror(errno)));
  }
  return {};
}

void
DiskFileWriter::remove(const std::string& path)
{
  ::unlink(path.c_str());
}

Expected<ApplyResult>
apply_fix(const FileSystem& fs, FileWriter& writer, const std::string& root, const FixPlan& plan,
          const std::string& output_dir)
{
  ApplyResult result;
  const std::string dest_root = output_dir.empty() ? root : output_dir;
  // In place: the file on disk still holds what the plan was made from.
  const auto unchanged = [&](const FileEdit& edit) {
    auto now = fs.read_file(join_path(root, edit.file), k_max_config_size);
    return now && *now == edit.original;
  };
  // Check every file before writing any.
  for (const FileEdit& edit : plan.edits) {
    if (edit.file.ends_with(".safetensors")) {
      return unexpected(fmt::format("{}: refusing to write a safetensors file", edit.file));
    }
    if (!output_dir.empty()) {
      continue;
    }
    const std::string path = join_path(root, edit.file);
    if ((edit.mode & 0222) == 0) {
      return unexpected(
        fmt::format("{}: is read-only (mode {:04o}); nothing was changed", path, edit.mode));
    }
    if (!unchanged(edit)) {
      return unexpected(
        fmt::format("{}: changed on disk since it was read; nothing was changed", path));
    }
  }
  // Patched copies may replace files already in the output folder: what each held, put back if
  // a later rename fails (nullopt: nothing was there, and the copy is removed instead).
  std::vector<std::optional<std::pair<std::string, uint32_t>>> previous(plan.edits.size());
  for (size_t i = 0; i < plan.edits.size() && !output_dir.empty(); ++i) {
    const std::string dest = join_path(dest_root, plan.edits[i].file);
    const FileInfo info = fs.stat(dest);
    if (info.kind == FileKind::missing) {
      continue;
    }
    if (info.kind != FileKind::regular) {
      return unexpected(
        fmt::format("{}: is a {}, not a file; nothing was changed", dest, to_string(info.kind)));
    }
    auto held = fs.read_file(dest, k_max_config_size);
    if (!held) {
      return unexpected(fmt::format("{}; nothing was changed", held.error()));
    }
    previous[i].emplace(std::move(*held), info.mode);
  }
  // Write every temporary file, then rename them all.
  std::vector<std::pair<std::string, std::string>> temps; // temp -> destination
  auto discard = [&] {
    for (const auto& [temp, _] : temps) {
      writer.remove(temp);
    }
  };
  for (const FileEdit& edit : plan.edits) {
    const std::string dest = join_path(dest_root, edit.file);
    auto temp = writer.write_temp(dest, edit.patched, edit.mode);
    if (!temp) {
      discard();
      return unexpected(fmt::format("{}; nothing was changed", temp.error()));
    }
    temps.emplace_back(*temp, dest);
  }
  // Writing (and syncing) takes time: an edit another process saved meanwhile is not replaced.
  for (const FileEdit& edit : plan.edits) {
    if (output_dir.empty() && !unchanged(edit)) {
      discard();
      return unexpected(fmt::format("{}: changed on disk while qcheck wrote; nothing was changed",
                                    join_path(root, edit.file)));
    }
  }
  for (size_t i = 0; i < temps.size(); ++i) {
    if (auto renamed = writer.rename(temps[i].first, temps[i].second); !renamed) {
      // Restore what was already replaced, then drop the remaining temporary files.
      std::vector<std::string> restore_errors, unlinked;
      for (size_t j = 0; j < i; ++j) {
        const FileEdit& edit = plan.edits[j];
        if (!output_dir.empty() && !previous[j]) {
          writer.remove(temps[j].second);
          continue;
        }
        const std::string& held = output_dir.empty() ? edit.original : previous[j]->first;
        auto back = writer.write_temp(temps[j].second, held,
                                      output_dir.empty() ? edit.mode : previous[j]->second);
        if (!back || !writer.rename(*back, temps[j].second)) {
          restore_errors.push_back(temps[j].second);
        } else if (edit.is_symlink && output_dir.empty()) {
          unlinked.push_back(temps[j].second);
        }
      }
      for (size_t j = i; j < temps.size(); ++j) {
        writer.remove(temps[j].first);
      }
      // A link replaced by the patched file comes back as a regular file with its contents.
      const std::string links =
        unlinked.empty()
          ? ""
          : fmt::format(" ({} {} a symbolic link; now a regular file with the "
                        "original contents, the link's target unchanged)",
                        fmt::join(unlinked, ", "), unlinked.size() == 1 ? "was" : "were");
      return unexpected(fmt::format(
        "{}; {}{}", renamed.error(),
        restore_errors.empty()
          ? (output_dir.empty() ? "every file was restored" : "the output folder is as it was")
          : fmt::format("could not restore {}", fmt::join(restore_errors, ", ")),
        links));
    }
    result.written.push_back(temps[i].second);
    if (plan.edits[i].is_symlink && output_dir.empty()) {
      result.notes.push_back(fmt::format("{} was a symbolic link; it is now a regular file with "
                                         "the patched contents, and the link's target is "
                                         "unchanged",
                                         temps[i].second));
    }
  }
  return result;
}

} // namespace qcheck
