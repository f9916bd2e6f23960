// qcheck fix: plans verified by re-linting, byte-preserving edits, all-or-nothing writes.
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <functional>
#include <gtest/gtest.h>
#include <utility>
#include <nlohmann/json.hpp>
#include <set>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "builder.hpp"
#include "cli_runner.hpp"
#include "qcheck/fix.hpp"

namespace fs = std::filesystem;
using namespace qcheck;

namespace {

std::string
read(const fs::path& path)
{
  std::ifstream in(path, std::ios::binary);
  return std::string(std::istreambuf_iterator<char>(in), {});
}

std::string
fixture(const std::string& name)
{
  return std::string(QCHECK_FIXTURES) + "/" + name;
}

LintRun
lint_or_die(const FileSystem& files, const std::string& path)
{
  auto run = lint_path(files, path, LintOptions{});
  EXPECT_TRUE(run) << (run ? "" : run.error());
  return std::move(run).value();
}

// Lints `path` and plans its fix with the default options.
FixPlan
plan_for(const FileSystem& files, const std::string& path)
{
  LintRun run = lint_or_die(files, path);
  return plan_fix(files, run, LintOptions{});
}

const FileEdit*
edit_for(const FixPlan& plan, const std::string& file)
{
  for (const auto& e : plan.edits) {
    if (e.file == file) {
      return &e;
    }
  }
  return nullptr;
}

// A copy of a fixture folder in a temporary directory.
class FixFolder : public ::testing::Test
{
protected:
  void copy_fixture(const std::string& name)
  {
    m_dir =
      fs::temp_directory_path() / ("qcheck-fix-" + std::to_string(::getpid()) + "-" +
                                   ::testing::UnitTest::GetInstance()->current_test_info()->name());
    fs::remove_all(m_dir);
    fs::create_directories(m_dir);
    fs::copy(fixture(name), m_dir / "model", fs::copy_options::recursive);
  }
  void TearDown() override { fs::remove_all(m_dir); }

  std::string model() const { return (m_dir / "model").string(); }

  std::vector<std::string> listing() const
  {
    std::vector<std::string> names;
    for (const auto& e : fs::directory_iterator(m_dir / "model")) {
      names.push_back(e.path().filename().string());
    }
    std::sort(names.begin(), names.end());
    return names;
  }

  // config.json as a link into blobs/ (as in the Hugging Face cache); returns its contents.
  std::string link_config_into_blobs()
  {
    fs::create_directories(m_dir / "blobs");
    fs::rename(m_dir / "model/config.json", m_dir / "blobs/3f2a");
    fs::create_symlink(m_dir / "blobs/3f2a", m_dir / "model/config.json");
    return read(m_dir / "blobs/3f2a");
  }

  fs::path m_dir;
};

// Fails the n-th rename, or every temporary write.
class FaultyWriter final : public FileWriter
{
public:
  int fail_rename_at = -1;
  bool fail_writes = false;
  DiskFileWriter disk;
  int renames = 0;
  std::function<void()> after_write; // runs after each temporary file is written

  Expected<std::string> write_temp(const std::string& path, std::string_view contents,
                                   uint32_t mode) override
  {
    if (fail_writes) {
      return unexpected(path + ": write failed: No space left on device");
    }
    auto temp = disk.write_temp(path, contents, mode);
    if (after_write) {
      after_write();
    }
    return temp;
  }
  Expected<void> rename(const std::string& from, const std::string& to) override
  {
    if (renames++ == fail_rename_at) {
      return unexpected(to + ": rename failed: Input/output error");
    }
    return disk.rename(from, to);
  }
  void remove(const std::string& path) override { disk.remove(path); }
};

} // namespace

TEST(Fix, GlmPatchEqualsTheCorrectedTwinByteForByte)
{
  DiskFileSystem disk;
  LintRun run = lint_or_die(disk, fixture("glm-nvfp4-nextn"));
  const FixPlan plan = plan_fix(disk, run, LintOptions{});
  ASSERT_EQ(plan.edits.size(), 2u);
  EXPECT_TRUE(plan.refused.empty());
  EXPECT_TRUE(plan.remaining.empty());
  for (const std::string file : {"config.json", "hf_quant_config.json"}) {
    const FileEdit* edit = edit_for(plan, file);
    ASSERT_NE(edit, nullptr) << file;
    EXPECT_EQ(edit->patched, read(fixture("glm-nvfp4-nextn-fixed") + "/" + file)) << file;
  }
  EXPECT_EQ(edit_for(plan, "config.json")->added,
            (std::vector<std::string>{"ignore += \"model.language_model.layers.45*\"",
                                      "ignore += \"model.layers.45*\""}));
}

TEST(Fix, QwenPatchAddsTheEightMtpLinearsToBothFiles)
{
  DiskFileSystem disk;
  LintRun run = lint_or_die(disk, fixture("qwen-w4a16-mtp"));
  const FixPlan plan = plan_fix(disk, run, LintOptions{});
  ASSERT_EQ(plan.edits.size(), 2u);
  for (const std::string file : {"config.json", "quantization_config.json"}) {
    const FileEdit* edit = edit_for(plan, file);
    ASSERT_NE(edit, nullptr);
    const auto ours = nlohmann::json::parse(edit->patched);
    const auto twin = nlohmann::json::parse(read(fixture("qwen-w4a16-mtp-fixed") + "/" + file));
    const auto& a = file == "config.json" ? ours["quantization_config"] : ours;
    const auto& b = file == "config.json" ? twin["quantization_config"] : twin;
    auto expected = b["ignore"].get<std::set<std::string>>();
    expected.insert({"mtp.layers.0.self_attn.qkv_proj", "mtp.layers.0.mlp.gate_up_proj"});
    EXPECT_EQ(a["ignore"].get<std::set<std::string>>(), expected);
    // Bytes before the ignore list's end are unchanged.
    const size_t last_old = edit->original.find("\"model.visual.merger.linear_fc1\"");
    ASSERT_NE(last_old, std::string::npos);
    EXPECT_EQ(edit->patched.substr(0, last_old), edit->original.substr(0, last_old));
  }
}

TEST(Fix, EveryFixtureLintsWithoutFixableErrorsAfterTheFix)
{
  DiskFileSystem disk;
  size_t folders = 0;
  for (const auto& entry : fs::recursive_directory_iterator(QCHECK_FIXTURES)) {
    if (entry.path().filename() != "config.json") {
      continue;
    }
    const std::string folder = entry.path().parent_path().string();
    ++folders;
    LintRun run = lint_or_die(disk, folder);
    const FixPlan plan = plan_fix(disk, run, LintOptions{}, FixOptions{true});
    OverlayFileSystem patched(disk);
    for (const auto& e : plan.edits) {
      patched.set(folder + "/" + e.file, e.patched);
    }
    const LintRun after = lint_or_die(patched, folder);
    for (const auto& f : after.report.findings) {
      // Fixable: an error for which lint derived entries (MXFP4 experts, say, are not).
      EXPECT_FALSE(f.severity == Severity::error && !f.suggested_entries.empty())
        << folder << ": " << f.message;
    }
  }
  EXPECT_GE(folders, 7u);
}

// Records which files are opened, forwarding to another FileSystem.
class RecordingFileSystem final : public FileSystem
{
public:
  explicit RecordingFileSystem(const FileSystem& base) : m_base(base) {}
  FileInfo stat(const std::string& path) const override { return m_base.stat(path); }
  Expected<std::unique_ptr<ByteSource>> open(const std::string& path) const override
  {
    opened.push_back(path);
    return m_base.open(path);
  }
  Expected<std::vector<std::string>> list_dir(const std::string& path) const override
  {
    return m_base.list_dir(path);
  }
  mutable std::vector<std::string> opened;

private:
  const FileSystem& m_base;
};

std::vector<std::string>
rules_and_messages(const Report& report)
{
  std::vector<std::string> out;
  for (const Finding& f : report.findings) {
    out.push_back(std::string(rule(f.rule).code) + " " + f.file + " " + f.message);
  }
  return out;
}

TEST(Fix, RelintOfAPatchedConfigEqualsAFullLint)
{
  DiskFileSystem disk;
  size_t patched_folders = 0;
  for (const auto& entry : fs::recursive_directory_iterator(QCHECK_FIXTURES)) {
    if (entry.path().filename() != "config.json") {
      continue;
    }
    const std::string folder = entry.path().parent_path().string();
    LintRun run = lint_or_die(disk, folder);
    const FixPlan plan = plan_fix(disk, run, LintOptions{}, FixOptions{true});
    OverlayFileSystem patched(disk);
    for (const auto& e : plan.edits) {
      patched.set(folder + "/" + e.file, e.patched);
    }
    patched_folders += plan.edits.empty() ? 0 : 1;
    const LintRun full = lint_or_die(patched, folder);
    EXPECT_EQ(rules_and_messages(relint(patched, run, LintOptions{})),
              rules_and_messages(full.report))
      << folder;
  }
  EXPECT_GE(patched_folders, 3u);
}

// The verification lints for the decisions only: it keeps every finding of the rules a patch is
// judged by, changes none, and drops at least the later checks' findings.
TEST(Fix, LintForDecisionsOnlyKeepsWhatVerificationReads)
{
  DiskFileSystem disk;
  const std::set<std::string> read{std::string(rule(RuleId::config_invalid).code),
                                   std::string(rule(RuleId::config_divergence).code),
                                   std::string(rule(RuleId::undeclared_unquantized).code),
                                   std::string(rule(RuleId::excluded_but_quantized).code)};
  std::set<std::string> kept, dropped;
  for (const auto& entry : fs::recursive_directory_iterator(QCHECK_FIXTURES)) {
    if (entry.path().filename() != "config.json") {
      continue;
    }
    const std::string folder = entry.path().parent_path().string();
    const LintRun full = lint_or_die(disk, folder);
    LintOptions options;
    options.decisions_only = true;
    auto decisions = lint_path(disk, folder, options);
    ASSERT_TRUE(decisions) << folder;
    const std::vector<std::string> all = rules_and_messages(full.report);
    const std::vector<std::string> only = rules_and_messages(decisions->report);
    // A subsequence of the full lint's findings, holding each of the rules read.
    auto at = all.begin();
    for (const std::string& line : only) {
      at = std::find(at, all.end(), line);
      ASSERT_NE(at, all.end()) << folder << ": " << line;
      ++at;
    }
    for (const std::string& line : all) {
      const std::string code = line.substr(0, line.find(' '));
      const bool in_only = std::find(only.begin(), only.end(), line) != only.end();
      if (read.contains(code)) {
        EXPECT_TRUE(in_only) << folder << ": " << line;
        kept.insert(code);
      } else if (!in_only) {
        dropped.insert(code);
      }
    }
  }
  // The fixtures exercise two of the rules read and the skipped checks: neither side is vacuous.
  EXPECT_EQ(kept, (std::set<std::string>{"QC101", "QC102"}));
  for (const char* code : {"QC112", "QC121", "QC122"}) {
    EXPECT_TRUE(dropped.contains(code)) << code;
  }
}

TEST(Fix, VerificationReadsNoShardAgain)
{
  DiskFileSystem disk;
  LintRun run = lint_or_die(disk, fixture("glm-nvfp4-nextn"));
  RecordingFileSystem recording(disk);
  const FixPlan plan = plan_fix(recording, run, LintOptions{});
  ASSERT_EQ(plan.edits.size(), 2u);
  EXPECT_TRUE(plan.refused.empty());
  ASSERT_FALSE(recording.opened.empty());
  for (const std::string& path : recording.opened) {
    EXPECT_FALSE(path.ends_with(".safetensors")) << path;
    EXPECT_FALSE(path.ends_with(".index.json")) << path;
  }
}

TEST(Fix, RemovingAnEntryThatExcludesAQuantizedModuleNeedsTheOption)
{
  DiskFileSystem disk;
  LintRun run = lint_or_die(disk, fixture("formats/awq-qwen2-substring"));
  const FixPlan cautious = plan_fix(disk, run, LintOptions{});
  EXPECT_TRUE(cautious.edits.empty());
  ASSERT_EQ(cautious.remaining.size(), 1u);
  EXPECT_NE(cautious.remaining[0].find("--remove-excluding would remove"), std::string::npos)
    << cautious.remaining[0];
  // The first plan released the run's declaration: planning again needs a new lint.
  EXPECT_TRUE(run.declaration.sources.empty());
  run = lint_or_die(disk, fixture("formats/awq-qwen2-substring"));
  const FixPlan plan = plan_fix(disk, run, LintOptions{}, FixOptions{true});
  ASSERT_EQ(plan.edits.size(), 1u) << (plan.refused.empty() ? "" : plan.refused[0]);
  OverlayFileSystem patched(disk);
  patched.set(fixture("formats/awq-qwen2-substring") + "/" + plan.edits[0].file,
              plan.edits[0].patched);
  const LintRun after = lint_or_die(patched, fixture("formats/awq-qwen2-substring"));
  for (const auto& f : after.report.findings) {
    EXPECT_NE(f.severity, Severity::error) << f.message;
  }
}

TEST(Fix, IdempotentOnTheFixedTwins)
{
  DiskFileSystem disk;
  for (const std::string name : {"glm-nvfp4-nextn-fixed", "qwen-w4a16-mtp-fixed", "plain-bf16"}) {
    LintRun run = lint_or_die(disk, fixture(name));
    EXPECT_TRUE(plan_fix(disk, run, LintOptions{}).edits.empty()) << name;
  }
}

TEST(Fix, KeepsEveryByteOutsideTheList)
{
  // CRLF, tabs, 1e-06, 1000000.0, a \u00e9 escape, no trailing newline.
  const std::string config =
    "{\r\n\t\"rms_norm_eps\": 1e-06,\r\n\t\"rope_theta\": 1000000.0,\r\n\t\"name\": "
    "\"caf\\u00e9\",\r\n\t\"num_hidden_layers\": 1,\r\n\t\"num_nextn_predict_layers\": 1,\r\n"
    "\t\"quantization_config\": {\r\n\t\t\"quant_method\": \"modelopt\",\r\n\t\t\"quant_algo\": "
    "\"FP8\",\r\n\t\t\"ignore\": [\r\n\t\t\t\"lm_head\"\r\n\t\t]\r\n\t}\r\n}";
  MemoryFileSystem mem;
  mem.add_file("m/config.json", config);
  mem.add_file("m/model.safetensors",
               test::safetensors({{"model.layers.0.mlp.down_proj.weight", "F8_E4M3", {4, 4}},
                                  {"model.layers.0.mlp.down_proj.weight_scale", "F32", {}},
                                  {"model.layers.0.mlp.down_proj.input_scale", "F32", {}},
                                  {"model.layers.1.eh_proj.weight", "BF16", {4, 8}},
                                  {"model.layers.1.mlp.down_proj.weight", "BF16", {4, 4}}}));
  LintRun run = lint_or_die(mem, "m");
  const FixPlan plan = plan_fix(mem, run, LintOptions{});
  ASSERT_EQ(plan.edits.size(), 1u) << (plan.refused.empty() ? "" : plan.refused[0]);
  const std::string& patched = plan.edits[0].patched;
  const std::string expected =
    "{\r\n\t\"rms_norm_eps\": 1e-06,\r\n\t\"rope_theta\": 1000000.0,\r\n\t\"name\": "
    "\"caf\\u00e9\",\r\n\t\"num_hidden_layers\": 1,\r\n\t\"num_nextn_predict_layers\": 1,\r\n"
    "\t\"quantization_config\": {\r\n\t\t\"quant_method\": \"modelopt\",\r\n\t\t\"quant_algo\": "
    "\"FP8\",\r\n\t\t\"ignore\": [\r\n\t\t\t\"lm_head\",\r\n\t\t\t\"model.layers.1*\"\r\n\t\t]\r\n"
    "\t}\r\n}";
  EXPECT_EQ(patched, expected);
}

// The re-lint of a patch finding a config unreadable refuses it, unless that config was
// unreadable before the patch; a repeated key's warning is not a reason.
TEST(Fix, RefusesAPatchThatLeavesAConfigUnreadable)
{
  Finding unreadable;
  unreadable.rule = RuleId::config_invalid;
  unreadable.severity = Severity::error;
  unreadable.file = "config.json";
  unreadable.message = "not valid JSON: line 3, column 5: expected ','";
  Report before, after;
  after.findings = {unreadable};
  EXPECT_EQ(patch_problems(before, after, {}),
            std::vector<std::string>{"the patch would make config.json unreadable: not valid "
                                     "JSON: line 3, column 5: expected ','"});
  before.findings = {unreadable};
  EXPECT_TRUE(patch_problems(before, after, {}).empty());
  Finding repeated = unreadable;
  repeated.severity = Severity::warning;
  repeated.message = "duplicate key 'ignore' at line 9";
  before.findings.clear();
  after.findings = {repeated};
  EXPECT_TRUE(patch_problems(before, after, {}).empty());
  // A repeated key's warning before does not cover an error after.
  before.findings = {repeated};
  after.findings = {repeated, unreadable};
  EXPECT_EQ(patch_problems(before, after, {}).size(), 1u);
  // Another file's error does not cover this one.
  Finding other = unreadable;
  other.file = "hf_quant_config.json";
  before.findings = {other};
  after.findings = {other, unreadable};
  EXPECT_EQ(patch_problems(before, after, {}).size(), 1u);
}

// A module still undeclared after the patch refuses it, unless no entry reaches it (the finding
// suggests none) and it was undeclared before for those engines: then it is left for a human.
TEST(Fix, UndeclaredModuleNoEntryReachesIsLeftForAHuman)
{
  Finding undeclared;
  undeclared.rule = RuleId::undeclared_unquantized;
  undeclared.severity = Severity::error;
  undeclared.file = "config.json";
  undeclared.modules = {"mtp.layers.0.mlp.experts.0.down_proj"};
  undeclared.engines = {Engine::vllm, Engine::sglang};
  undeclared.suggested_entries = {"-:mtp\\..*"};
  undeclared.message = "draft experts";
  undeclared.fix = "no key reaches them";
  Finding sglang_only = undeclared;
  sglang_only.engines = {Engine::sglang};
  sglang_only.suggested_entries.clear();
  Report before, after;
  before.findings = {undeclared};
  after.findings = {sglang_only};
  std::vector<std::string> left;
  EXPECT_TRUE(patch_problems(before, after, {}, &left).empty());
  EXPECT_EQ(left, std::vector<std::string>{"draft experts [QC101]; no key reaches them"});
  // Without a place to leave it, or with an entry it still suggests, or an engine it adds, or
  // undeclared only since the patch, it refuses.
  EXPECT_EQ(patch_problems(before, after, {}).size(), 1u);
  Finding suggests = sglang_only;
  suggests.suggested_entries = {"-:x"};
  after.findings = {suggests};
  left.clear();
  EXPECT_EQ(patch_problems(before, after, {}, &left).size(), 1u);
  Finding more = sglang_only;
  more.engines = {Engine::sglang, Engine::trtllm};
  after.findings = {more};
  EXPECT_EQ(patch_problems(before, after, {}, &left).size(), 1u);
  before.findings.clear();
  after.findings = {sglang_only};
  EXPECT_EQ(patch_problems(before, after, {}, &left).size(), 1u);
  EXPECT_TRUE(left.empty());
}

// Any other error the re-lint finds that was not there before refuses the patch (a fused
// layer's shards listed apart, QC103), as does an engine added to one; errors are the same when
// their rule, file, pointer and modules are (the message names engines a patch may remove).
TEST(Fix, RefusesAPatchThatAddsAnError)
{
  Finding disagree;
  disagree.rule = RuleId::fused_shards_disagree;
  disagree.severity = Severity::error;
  disagree.message = "the shards of fused layer 'model.layers.0.mlp.gate_up_proj' are not "
                     "excluded alike; vLLM and TensorRT-LLM stop";
  disagree.modules = {"model.layers.0.mlp.gate_proj", "model.layers.0.mlp.up_proj"};
  disagree.engines = {Engine::vllm, Engine::trtllm};
  Report before, after;
  after.findings = {disagree};
  EXPECT_EQ(patch_problems(before, after, {}),
            std::vector<std::string>{"the patch would add an error: the shards of fused layer "
                                     "'model.layers.0.mlp.gate_up_proj' are not excluded alike; "
                                     "vLLM and TensorRT-LLM stop [QC103]"});
  before.findings = {disagree};
  EXPECT_TRUE(patch_problems(before, after, {}).empty());
  // One engine fewer, so another message: the same error.
  Finding fewer = disagree;
  fewer.message = "the shards of fused layer 'model.layers.0.mlp.gate_up_proj' are not "
                  "excluded alike; TensorRT-LLM stops";
  fewer.engines = {Engine::trtllm};
  after.findings = {fewer};
  EXPECT_TRUE(patch_problems(before, after, {}).empty());
  // An engine more: refused.
  Finding more = disagree;
  more.engines = {Engine::vllm, Engine::sglang, Engine::trtllm};
  after.findings = {more};
  EXPECT_EQ(patch_problems(before, after, {}),
            std::vector<std::string>{"the patch would make more engines fail: the shards of fused "
                                     "layer 'model.layers.0.mlp.gate_up_proj' are not excluded "
                                     "alike; vLLM and TensorRT-LLM stop [QC103]"});
  // Another layer's modules: another error.
  Finding other = disagree;
  other.modules = {"model.layers.1.mlp.gate_proj", "model.layers.1.mlp.up_proj"};
  after.findings = {disagree, other};
  EXPECT_EQ(patch_problems(before, after, {}).size(), 1u);
  Finding warning = other;
  warning.rule = RuleId::partial_expert_exclusion;
  warning.severity = Severity::warning;
  after.findings = {disagree, warning};
  EXPECT_TRUE(patch_problems(before, after, {}).empty());
}

TEST(Fix, RefusesConfigsWithNaN)
{
  MemoryFileSystem mem;
  mem.add_file("m/config.json",
               R"({"num_hidden_layers": 1, "num_nextn_predict_layers": 1, "x": NaN,
                   "quantization_config": {"quant_method": "modelopt", "quant_algo": "FP8", "ignore": []}})");
  mem.add_file("m/model.safetensors",
               test::safetensors({{"model.layers.1.mlp.down_proj.weight", "BF16", {4, 4}}}));
  auto run = lint_path(mem, "m", LintOptions{});
  ASSERT_TRUE(run);
  const FixPlan plan = plan_fix(mem, *run, LintOptions{});
  EXPECT_TRUE(plan.edits.empty());
}

TEST_F(FixFolder, InplaceWritesBothFilesAndLintIsCleanAfterwards)
{
  copy_fixture("glm-nvfp4-nextn");
  DiskFileSystem disk;
  LintRun run = lint_or_die(disk, model());
  const FixPlan plan = plan_fix(disk, run, LintOptions{});
  DiskFileWriter writer;
  auto applied = apply_fix(disk, writer, model(), plan);
  ASSERT_TRUE(applied) << applied.error();
  EXPECT_EQ(applied->written.size(), 2u);
  EXPECT_TRUE(lint_or_die(disk, model()).report.findings.empty());
  // No temporary or backup file left in the model folder.
  EXPECT_EQ(listing(), (std::vector<std::string>{
                         "config.json", "hf_quant_config.json", "model-00001-of-00003.safetensors",
                         "model-00002-of-00003.safetensors", "model-00003-of-00003.safetensors",
                         "model.safetensors.index.json"}));
}

TEST_F(FixFolder, FailedRenameRestoresEveryFile)
{
  copy_fixture("glm-nvfp4-nextn");
  const std::string before_config = read(m_dir / "model/config.json");
  const std::string before_hf = read(m_dir / "model/hf_quant_config.json");
  DiskFileSystem disk;
  const FixPlan plan = plan_for(disk, model());
  FaultyWriter writer;
  writer.fail_rename_at = 1; // the second file
  auto applied = apply_fix(disk, writer, model(), plan);
  ASSERT_FALSE(applied);
  EXPECT_EQ(applied.error(), model() + "/hf_quant_config.json: rename failed: Input/output error; "
                                       "every file was restored");
  EXPECT_EQ(read(m_dir / "model/config.json"), before_config);
  EXPECT_EQ(read(m_dir / "model/hf_quant_config.json"), before_hf);
  EXPECT_EQ(listing().size(), 6u);
}

// Patched copies into an output folder that already holds a config.json: when a later rename
// fails, that file gets back what it held (not the model's original), the copy made of a file
// that was not there is removed, and no temporary file is left.
TEST_F(FixFolder, FailedRenameInOutputFolderPutsBackWhatWasThere)
{
  copy_fixture("glm-nvfp4-nextn");
  const fs::path out = m_dir / "out";
  fs::create_directories(out);
  std::ofstream(out / "config.json") << "PREVIOUS\n";
  fs::permissions(out / "config.json", fs::perms(0600));
  DiskFileSystem disk;
  const FixPlan plan = plan_for(disk, model());
  ASSERT_EQ(plan.edits.size(), 2u);
  ASSERT_EQ(plan.edits[1].file, "hf_quant_config.json");
  FaultyWriter writer;
  writer.fail_rename_at = 1;
  auto applied = apply_fix(disk, writer, model(), plan, out.string());
  ASSERT_FALSE(applied);
  EXPECT_EQ(applied.error(), (out / "hf_quant_config.json").string() +
                               ": rename failed: Input/output error; the output folder is as it "
                               "was");
  EXPECT_EQ(read(out / "config.json"), "PREVIOUS\n");
  EXPECT_EQ(fs::status(out / "config.json").permissions(), fs::perms(0600));
  std::vector<std::string> names;
  for (const auto& e : fs::directory_iterator(out)) {
    names.push_back(e.path().filename().string());
  }
  EXPECT_EQ(names, std::vector<std::string>{"config.json"});
  // Without the fault, both copies land.
  DiskFileWriter disk_writer;
  ASSERT_TRUE(apply_fix(disk, disk_writer, model(), plan, out.string()));
  EXPECT_EQ(read(out / "config.json"), plan.edits[0].patched);
  EXPECT_EQ(read(out / "hf_quant_config.json"), plan.edits[1].patched);
}

// A target in the output folder that is not a file is refused before anything is written.
TEST_F(FixFolder, OutputFolderTargetThatIsADirectoryIsRefused)
{
  copy_fixture("glm-nvfp4-nextn");
  const fs::path out = m_dir / "out";
  fs::create_directories(out / "hf_quant_config.json");
  std::ofstream(out / "config.json") << "PREVIOUS\n";
  DiskFileSystem disk;
  const FixPlan plan = plan_for(disk, model());
  FaultyWriter writer;
  auto applied = apply_fix(disk, writer, model(), plan, out.string());
  ASSERT_FALSE(applied);
  EXPECT_EQ(applied.error(), (out / "hf_quant_config.json").string() +
                               ": is a directory, not a file; nothing was changed");
  EXPECT_EQ(writer.renames, 0);
  EXPECT_EQ(read(out / "config.json"), "PREVIOUS\n");
}

// Run as root, a patched file keeps the owner and group of the file it replaces: root must not
// take a user's config. (Changing a file's owner needs root: skipped otherwise; a non-root run's
// files are its own, as before.)
TEST_F(FixFolder, InPlaceKeepsOwnerAndGroup)
{
  if (::geteuid() != 0) {
    GTEST_SKIP() << "needs root to give the files another owner";
  }
  copy_fixture("glm-nvfp4-nextn");
  for (const char* name : {"config.json", "hf_quant_config.json"}) {
    ASSERT_EQ(::chown((m_dir / "model" / name).c_str(), 65534, 65533), 0);
  }
  // The mode too, setgid bit included (a change of owner would clear it after a chmod).
  ASSERT_EQ(::chmod((m_dir / "model/config.json").c_str(), 02775), 0);
  DiskFileSystem disk;
  const FixPlan plan = plan_for(disk, model());
  DiskFileWriter writer;
  auto applied = apply_fix(disk, writer, model(), plan);
  ASSERT_TRUE(applied) << applied.error();
  for (const char* name : {"config.json", "hf_quant_config.json"}) {
    struct stat st;
    ASSERT_EQ(::stat((m_dir / "model" / name).c_str(), &st), 0);
    EXPECT_EQ(st.st_uid, 65534u) << name;
    EXPECT_EQ(st.st_gid, 65533u) << name;
  }
  struct stat mode;
  ASSERT_EQ(::stat((m_dir / "model/config.json").c_str(), &mode), 0);
  EXPECT_EQ(mode.st_mode & 07777, 02775u);
  EXPECT_EQ(read(m_dir / "model/config.json"), plan.edits[0].patched);
}

// Root in a user namespace (a rootless container) cannot give a file an owner it does not map:
// the fix is still written, as before owners were kept. Skipped where user namespaces are off.
TEST_F(FixFolder, InPlaceAsRootOfAUserNamespaceStillWrites)
{
  if (std::system("unshare -r true >/dev/null 2>&1") != 0) {
    GTEST_SKIP() << "no user namespaces here";
  }
  copy_fixture("glm-nvfp4-nextn");
  const std::string chown =
    "chown -R 1234:1234 '" + model() + "' && chmod -R a+rwX '" + m_dir.string() + "'";
  ASSERT_EQ(std::system(chown.c_str()), 0);
  const std::string command =
    "unshare -r " + std::string(QCHECK_BINARY) + " fix --inplace '" + model() + "' 2>/dev/null";
  const int status = std::system(command.c_str());
  ASSERT_TRUE(WIFEXITED(status));
  EXPECT_EQ(WEXITSTATUS(status), 0);
  EXPECT_EQ(read(m_dir / "model/config.json"),
            read(fs::path(fixture("glm-nvfp4-nextn-fixed")) / "config.json"));
}

// A linked config (the Hugging Face cache's layout) is replaced by a file with the link's owner,
// not its target's; the target is untouched.
TEST_F(FixFolder, InPlaceGivesALinksReplacementTheLinksOwner)
{
  if (::geteuid() != 0) {
    GTEST_SKIP() << "needs root to give the link another owner";
  }
  copy_fixture("glm-nvfp4-nextn");
  const std::string blob = link_config_into_blobs();
  ASSERT_EQ(::lchown((m_dir / "model/config.json").c_str(), 65534, 65533), 0);
  DiskFileSystem disk;
  const FixPlan plan = plan_for(disk, model());
  DiskFileWriter writer;
  auto applied = apply_fix(disk, writer, model(), plan);
  ASSERT_TRUE(applied) << applied.error();
  struct stat st;
  ASSERT_EQ(::lstat((m_dir / "model/config.json").c_str(), &st), 0);
  EXPECT_TRUE(S_ISREG(st.st_mode));
  EXPECT_EQ(st.st_uid, 65534u);
  EXPECT_EQ(st.st_gid, 65533u);
  ASSERT_EQ(::stat((m_dir / "blobs/3f2a").c_str(), &st), 0);
  EXPECT_EQ(st.st_uid, 0u);
  EXPECT_EQ(read(m_dir / "blobs/3f2a"), blob);
}

// Another process saves config.json while the patched files are written (and synced): its edit
// is kept, nothing is replaced, and no temporary file is left.
TEST_F(FixFolder, EditSavedWhileWritingIsNotReplaced)
{
  copy_fixture("glm-nvfp4-nextn");
  const std::string before_hf = read(m_dir / "model/hf_quant_config.json");
  DiskFileSystem disk;
  const FixPlan plan = plan_for(disk, model());
  FaultyWriter writer;
  bool saved_once = false;
  writer.after_write = [&] {
    if (!std::exchange(saved_once, true)) {
      std::ofstream(m_dir / "model/config.json", std::ios::app) << "\n";
    }
  };
  const std::string saved = read(m_dir / "model/config.json") + "\n";
  auto applied = apply_fix(disk, writer, model(), plan);
  ASSERT_FALSE(applied);
  EXPECT_EQ(applied.error(),
            model() + "/config.json: changed on disk while qcheck wrote; nothing was changed");
  EXPECT_EQ(writer.renames, 0);
  EXPECT_EQ(read(m_dir / "model/config.json"), saved);
  EXPECT_EQ(read(m_dir / "model/hf_quant_config.json"), before_hf);
  EXPECT_EQ(listing().size(), 6u);
}

// A rename fails after a linked config.json was replaced: it is restored as a regular file with
// its original contents (the link's target untouched), and the error says so.
TEST_F(FixFolder, FailedRenameSaysALinkCameBackAsAFile)
{
  copy_fixture("glm-nvfp4-nextn");
  const std::string blob = link_config_into_blobs();
  DiskFileSystem disk;
  const FixPlan plan = plan_for(disk, model());
  FaultyWriter writer;
  writer.fail_rename_at = 1;
  auto applied = apply_fix(disk, writer, model(), plan);
  ASSERT_FALSE(applied);
  EXPECT_EQ(applied.error(), model() +
                               "/hf_quant_config.json: rename failed: Input/output error; "
                               "every file was restored (" +
                               model() +
                               "/config.json was a symbolic link; now a regular file with the "
                               "original contents, the link's target unchanged)");
  EXPECT_EQ(read(m_dir / "model/config.json"), blob);
  EXPECT_EQ(read(m_dir / "blobs/3f2a"), blob);
}

// config.json's quantization_config without "ignore" reads as an empty list beside
// hf_quant_config.json's exclude_modules (R2): fix adds the key, with every entry of the other
// list and the missing ones, and the folder then lints clean.
TEST_F(FixFolder, ConfigWithoutItsListGetsTheKey)
{
  copy_fixture("glm-nvfp4-nextn");
  std::string config = read(m_dir / "model/config.json");
  const size_t at = config.find("    \"ignore\": [");
  ASSERT_NE(at, std::string::npos);
  const size_t end = config.find("],\n", at);
  ASSERT_NE(end, std::string::npos);
  config.erase(at, end + 3 - at);
  std::ofstream(m_dir / "model/config.json", std::ios::binary) << config;
  DiskFileSystem disk;
  const FixPlan plan = plan_for(disk, model());
  EXPECT_TRUE(plan.refused.empty()) << (plan.refused.empty() ? "" : plan.refused.front());
  ASSERT_EQ(plan.edits.size(), 2u);
  DiskFileWriter writer;
  auto applied = apply_fix(disk, writer, model(), plan);
  ASSERT_TRUE(applied) << applied.error();
  LintRun after = lint_or_die(disk, model());
  EXPECT_TRUE(after.report.findings.empty()) << render_text(after.report);
  const auto& sources = after.declaration.sources;
  ASSERT_EQ(sources.size(), 2u);
  std::set<std::string> a(sources[0].excludes.begin(), sources[0].excludes.end());
  std::set<std::string> b(sources[1].excludes.begin(), sources[1].excludes.end());
  EXPECT_EQ(a, b);
  EXPECT_TRUE(a.contains("model.language_model.layers.*.mlp.gate"));
}

TEST_F(FixFolder, DiskFullChangesNothing)
{
  copy_fixture("glm-nvfp4-nextn");
  const std::string before = read(m_dir / "model/config.json");
  DiskFileSystem disk;
  const FixPlan plan = plan_for(disk, model());
  FaultyWriter writer;
  writer.fail_writes = true;
  auto applied = apply_fix(disk, writer, model(), plan);
  ASSERT_FALSE(applied);
  EXPECT_EQ(applied.error(),
            model() + "/config.json: write failed: No space left on device; nothing was changed");
  EXPECT_EQ(read(m_dir / "model/config.json"), before);
  EXPECT_EQ(listing().size(), 6u);
}

TEST_F(FixFolder, ReadOnlyConfigIsRefused)
{
  copy_fixture("glm-nvfp4-nextn");
  fs::permissions(m_dir / "model/config.json", fs::perms(0444));
  const std::string before = read(m_dir / "model/config.json");
  DiskFileSystem disk;
  const FixPlan plan = plan_for(disk, model());
  DiskFileWriter writer;
  auto applied = apply_fix(disk, writer, model(), plan);
  ASSERT_FALSE(applied);
  EXPECT_EQ(applied.error(),
            model() + "/config.json: is read-only (mode 0444); nothing was changed");
  EXPECT_EQ(read(m_dir / "model/config.json"), before);
  EXPECT_EQ(read(m_dir / "model/hf_quant_config.json"),
            read(fixture("glm-nvfp4-nextn") + "/hf_quant_config.json"));
}

TEST_F(FixFolder, FileChangedOnDiskIsNotOverwritten)
{
  copy_fixture("glm-nvfp4-nextn");
  DiskFileSystem disk;
  const FixPlan plan = plan_for(disk, model());
  std::ofstream(m_dir / "model/hf_quant_config.json", std::ios::app) << " ";
  const std::string changed = read(m_dir / "model/hf_quant_config.json");
  DiskFileWriter writer;
  auto applied = apply_fix(disk, writer, model(), plan);
  ASSERT_FALSE(applied);
  EXPECT_EQ(applied.error(), model() + "/hf_quant_config.json: changed on disk since it was read; "
                                       "nothing was changed");
  EXPECT_EQ(read(m_dir / "model/hf_quant_config.json"), changed);
  EXPECT_EQ(read(m_dir / "model/config.json"), read(fixture("glm-nvfp4-nextn") + "/config.json"));
}

TEST_F(FixFolder, SymlinkedConfigIsReplacedAndItsTargetUntouched)
{
  copy_fixture("glm-nvfp4-nextn");
  const std::string blob = link_config_into_blobs();
  DiskFileSystem disk;
  const FixPlan plan = plan_for(disk, model());
  DiskFileWriter writer;
  auto applied = apply_fix(disk, writer, model(), plan);
  ASSERT_TRUE(applied) << applied.error();
  EXPECT_EQ(read(m_dir / "blobs/3f2a"), blob);
  EXPECT_FALSE(fs::is_symlink(m_dir / "model/config.json"));
  EXPECT_EQ(read(m_dir / "model/config.json"),
            read(fixture("glm-nvfp4-nextn-fixed") + "/config.json"));
  ASSERT_EQ(applied->notes.size(), 1u);
  EXPECT_EQ(applied->notes[0], model() + "/config.json was a symbolic link; it is now a regular "
                                         "file with the patched contents, and the link's target "
                                         "is unchanged");
}

TEST(Fix, NeverWritesSafetensors)
{
  FixPlan plan;
  plan.edits.push_back({"model.safetensors", "a", "b", {}, false, 0644});
  MemoryFileSystem mem;
  DiskFileWriter writer;
  auto applied = apply_fix(mem, writer, "/nonexistent", plan);
  ASSERT_FALSE(applied);
  EXPECT_EQ(applied.error(), "model.safetensors: refusing to write a safetensors file");
}

TEST(Fix, UnifiedDiff)
{
  FileEdit edit{"config.json",
                "{\n  \"a\": [\n    \"x\"\n  ]\n}\n",
                "{\n  \"a\": [\n    \"x\",\n    \"y\"\n  ]\n}\n",
                {},
                false,
                0644};
  EXPECT_EQ(unified_diff(edit), "--- a/config.json\n+++ b/config.json\n@@ -1,5 +1,6 @@\n {\n"
                                "   \"a\": [\n-    \"x\"\n+    \"x\",\n+    \"y\"\n   ]\n }\n");
}

namespace {

using CliOut = qcheck::test::CliRun;

CliOut
run_in(const std::string& cwd, const std::string& args)
{
  return qcheck::test::run_qcheck(args, false, cwd);
}

} // namespace

TEST_F(FixFolder, CliDryRunPrintsTheDiffAndChangesNothing)
{
  copy_fixture("glm-nvfp4-nextn");
  const std::string before = read(m_dir / "model/config.json");
  const CliOut r = run_in(model(), "fix");
  EXPECT_EQ(r.exit_code, 0);
  EXPECT_NE(r.out.find("--- a/config.json\n+++ b/config.json\n"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("+      \"model.layers.45*\"\n"), std::string::npos) << r.out;
  EXPECT_EQ(read(m_dir / "model/config.json"), before);
}

TEST_F(FixFolder, CliInplaceWithoutAFolderUsesTheCurrentDirectory)
{
  copy_fixture("glm-nvfp4-nextn");
  EXPECT_EQ(run_in(model(), "fix --inplace").exit_code, 0);
  EXPECT_EQ(read(m_dir / "model/config.json"),
            read(fixture("glm-nvfp4-nextn-fixed") + "/config.json"));
  EXPECT_EQ(run_in(model(), "lint .").exit_code, 0);
  // A second run changes nothing.
  EXPECT_EQ(run_in(model(), "fix --inplace").exit_code, 0);
  EXPECT_EQ(read(m_dir / "model/config.json"),
            read(fixture("glm-nvfp4-nextn-fixed") + "/config.json"));
}

TEST_F(FixFolder, CliOutputDirWritesPatchedCopiesOnly)
{
  copy_fixture("qwen-w4a16-mtp");
  const std::string before = read(m_dir / "model/config.json");
  EXPECT_EQ(run_in(model(), "fix --output-dir ../patched").exit_code, 0);
  EXPECT_EQ(read(m_dir / "model/config.json"), before);
  std::vector<std::string> written;
  for (const auto& e : fs::directory_iterator(m_dir / "patched")) {
    written.push_back(e.path().filename().string());
  }
  std::sort(written.begin(), written.end());
  EXPECT_EQ(written, (std::vector<std::string>{"config.json", "quantization_config.json"}));
}

// --output-dir naming the model folder itself, however spelled, edits in place with the
// in-place checks: a read-only config.json is refused, not overwritten.
TEST_F(FixFolder, CliOutputDirThatIsTheModelFolderIsAnEditInPlace)
{
  copy_fixture("glm-nvfp4-nextn");
  fs::create_directory_symlink(m_dir / "model", m_dir / "alias");
  fs::permissions(m_dir / "model/config.json", fs::perms(0444));
  const std::string before = read(m_dir / "model/config.json");
  for (const std::string dir : {".", "../model", "../alias"}) {
    const CliOut r = qcheck::test::run_qcheck("fix --output-dir " + dir, true, model());
    EXPECT_EQ(r.exit_code, 2) << dir;
    EXPECT_NE(r.out.find("config.json: is read-only (mode 0444); nothing was changed"),
              std::string::npos)
      << r.out;
    EXPECT_EQ(read(m_dir / "model/config.json"), before) << dir;
  }
  fs::permissions(m_dir / "model/config.json", fs::perms(0644));
  EXPECT_EQ(run_in(model(), "fix --output-dir ../alias").exit_code, 0);
  EXPECT_EQ(read(m_dir / "model/config.json"),
            read(fixture("glm-nvfp4-nextn-fixed") + "/config.json"));
}

// A patch that settles one engine (vLLM: a "-:" key for the GPTQ draft experts) is written; what
// no key can reach (SGLang builds GPTQ fused MoE quantized) is left for a human: exit 1. Where
// nothing can be patched, fix refuses.
TEST_F(FixFolder, CliWritesWhatItCanAndLeavesAnEnginesHardRule)
{
  copy_fixture("formats/gptq-qwen3.5-moe-mtp-no-negative-key");
  const CliOut r = qcheck::test::run_qcheck("fix --inplace", true, model());
  EXPECT_EQ(r.exit_code, 1);
  EXPECT_NE(r.out.find(R"(config.json: dynamic += "-:mtp\\..*": {})"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("needs a human: MTP/NextN draft mtp: 12 modules"), std::string::npos)
    << r.out;
  EXPECT_NE(r.out.find("no dynamic key leaves a GPTQ fused MoE unquantized in SGLang"),
            std::string::npos)
    << r.out;
  const auto after = qcheck::test::run_qcheck("lint --format json " + model());
  const nlohmann::json j = nlohmann::json::parse(after.out);
  ASSERT_EQ(j["findings"].size(), 2u) << after.out;
  for (const auto& f : j["findings"]) {
    if (f["rule"] == "QC101") {
      EXPECT_EQ(f["engines"], nlohmann::json::array({"sglang"})) << after.out;
    }
  }
  copy_fixture("formats/gptq-qwen3.5-moe-mtp");
  const CliOut none = qcheck::test::run_qcheck("fix", true, model());
  EXPECT_EQ(none.exit_code, 1);
  EXPECT_EQ(none.out.find("+++"), std::string::npos) << none.out;
  EXPECT_NE(none.out.find("not fixed: no entry can be derived"), std::string::npos) << none.out;
}

// A dynamic key in the checkpoint's spelling of Qwen3.5's tower (model.visual.X) is dead:
// vLLM names the tower visual.X and SGLang builds it without a quantization config, reading no
// key (QC112).
TEST_F(FixFolder, GptqKeyForQwen35TowerIsDead)
{
  copy_fixture("qwen-gptq-mtp-fixed");
  const fs::path config = fs::path(model()) / "config.json";
  nlohmann::ordered_json j = nlohmann::ordered_json::parse(std::ifstream(config));
  j["quantization_config"]["dynamic"]["-:model\\.visual\\..*"] = nlohmann::json::object();
  std::ofstream(config) << j.dump(2);
  const auto r = qcheck::test::run_qcheck("lint --format json " + model());
  const nlohmann::json out = nlohmann::json::parse(r.out);
  std::vector<std::string> dead;
  for (const auto& f : out["findings"]) {
    if (f["rule"] == "QC112") {
      dead.push_back(f["message"]);
    }
  }
  ASSERT_EQ(dead.size(), 1u) << r.out;
  EXPECT_TRUE(dead[0].starts_with("dynamic key '-:model\\.visual\\..*' matches no layer"))
    << dead[0];
}

TEST_F(FixFolder, CliReportsWhatNeedsAHuman)
{
  copy_fixture("qwen-gptq-mtp");
  const CliOut r = run_in(model(), "fix");
  EXPECT_EQ(r.exit_code, 1); // QC108: quantized mtp.fc cannot be fixed in metadata
  // What can be: SGLang's key for the BF16 in_proj_ba, the diff's one added line.
  EXPECT_NE(
    r.out.find("\n+      \"-:model\\\\.layers\\\\.0\\\\.linear_attn\\\\.in_proj_ba$\": {}\n"),
    std::string::npos)
    << r.out;
  EXPECT_EQ(r.out.find("\"-:.*mtp"), std::string::npos) << r.out; // nothing for the draft
  EXPECT_EQ(r.out.find("\"-:mtp"), std::string::npos) << r.out;
}
