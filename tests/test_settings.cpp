// Project settings (.qcheck.json), baselines and many-folder runs.
#include <array>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <gtest/gtest.h>
#include <nlohmann/json.hpp>
#include <set>
#include <sys/stat.h>
#include <sys/wait.h>

#include "cli_runner.hpp"
#include "qcheck/session.hpp"
#include "qcheck/settings.hpp"

namespace fs = std::filesystem;
using namespace qcheck;
using Json = nlohmann::json;

namespace {

using Out = qcheck::test::CliRun;

Out
qcheck_run(const std::string& args)
{
  return qcheck::test::run_qcheck(args, true);
}

std::string
fixture(const std::string& name)
{
  return std::string(QCHECK_FIXTURES) + "/" + name;
}

class Workspace : public ::testing::Test
{
protected:
  void SetUp() override
  {
    m_dir =
      fs::temp_directory_path() / ("qcheck-settings-" + std::to_string(::getpid()) + "-" +
                                   ::testing::UnitTest::GetInstance()->current_test_info()->name());
    fs::remove_all(m_dir);
    fs::create_directories(m_dir);
  }
  void TearDown() override { fs::remove_all(m_dir); }
  void write(const fs::path& path, const std::string& text) { std::ofstream(path) << text; }
  std::string path(const std::string& rel) const { return (m_dir / rel).string(); }

  fs::path m_dir;
};

} // namespace

TEST(Settings, ParsesEveryKey)
{
  auto s = parse_settings(".qcheck.json", R"({"engines": ["vllm"], "fail_on": "warning",
    "select": ["QC1"], "ignore": ["relies-on-inference"], "severity": {"QC112": "error"}})");
  ASSERT_TRUE(s) << s.error();
  EXPECT_EQ(s->engines, std::vector<Engine>{Engine::vllm});
  EXPECT_EQ(s->fail_on, Severity::warning);
  EXPECT_EQ(s->select, std::vector<std::string>{"QC1"});
  ASSERT_EQ(s->severity.size(), 1u);
  EXPECT_EQ(s->severity[0].first, RuleId::unused_entry);
}

namespace {

Finding
finding_of(RuleId id, std::string message)
{
  Finding f;
  f.rule = id;
  f.severity = rule(id).severity;
  f.message = std::move(message);
  return f;
}

std::vector<std::string>
messages_of(const Report& report)
{
  std::vector<std::string> out;
  for (const Finding& f : report.findings) {
    out.push_back(std::string(to_string(f.severity)) + " " + f.message);
  }
  return out;
}

} // namespace

TEST(Settings, DropsInPlaceAndReordersAfterASeverityOverride)
{
  Report report;
  // Ordered as lint leaves them: errors, warnings, infos.
  report.findings = {finding_of(RuleId::undeclared_unquantized, "a"),
                     finding_of(RuleId::undeclared_unquantized, "e"),
                     finding_of(RuleId::unused_entry, "b"), finding_of(RuleId::unused_entry, "d"),
                     finding_of(RuleId::inferred_exclusions, "c")};
  Report dropped = report;
  Settings drop;
  drop.ignore = {"QC112"};
  apply_settings(drop, dropped);
  EXPECT_EQ(messages_of(dropped), (std::vector<std::string>{"error a", "error e", "info c"}));
  Settings lower;
  lower.severity = {{RuleId::undeclared_unquantized, Severity::info}};
  apply_settings(lower, report);
  EXPECT_EQ(messages_of(report),
            (std::vector<std::string>{"warning b", "warning d", "info a", "info e", "info c"}));
}

TEST(Settings, ErrorsNameTheProblem)
{
  EXPECT_EQ(parse_settings("f", R"({"engine": ["vllm"]})").error(),
            "f: unknown key 'engine' (known: engines, fail_on, select, ignore, severity)");
  EXPECT_EQ(parse_settings("f", R"({"ignore": ["unused-entri"]})").error(),
            "f: unknown rule 'unused-entri'; did you mean 'unused-entry'?");
  EXPECT_EQ(parse_settings("f", R"({"engines": ["tgi"]})").error(),
            "f: unknown engine 'tgi' (vllm, sglang, trtllm)");
  EXPECT_EQ(parse_settings("f", R"({"fail_on": "fatal"})").error(),
            "f: 'fail_on' must be \"error\", \"warning\" or \"info\"");
  EXPECT_EQ(parse_settings("f", "{,}").error(),
            "f: invalid JSON at line 1, column 2: expected a string key or '}'");
}

// Settings naming no engine would check nothing: a CI gate that always passes.
TEST(Settings, EmptyEngineListIsRefused)
{
  EXPECT_EQ(parse_settings("f", R"({"engines": []})").error(),
            "f: 'engines' is empty (name at least one of vllm, sglang, trtllm)");
}

// A baseline whose members have other types is refused with the member's pointer, never thrown
// out of the parser; a version that is not the integer 1 is not a baseline.
TEST(Baseline, MembersOfOtherTypesAreErrors)
{
  const std::string entry = R"("rule": "QC101", "fingerprint": "x")";
  for (const std::string version : {R"("1")", "true", "1.5", "2", "null"}) {
    const auto parsed = parse_baseline("b", R"({"version": )" + version + R"(, "findings": []})");
    ASSERT_FALSE(parsed) << version;
    EXPECT_EQ(parsed.error(), "b: not a qcheck baseline (version 1)");
  }
  for (const std::string member : {"folder", "file", "message"}) {
    for (const std::string value : {"5", "null", "[\"a\"]", "{}"}) {
      const auto parsed =
        parse_baseline("b", R"({"version": 1, "findings": [{)" + entry + R"(}, {)" + entry +
                              R"(, ")" + member + R"(": )" + value + "}]}");
      ASSERT_FALSE(parsed) << member << " " << value;
      EXPECT_EQ(parsed.error(), "b: /findings/1/" + member + " is not a string");
    }
  }
  const auto good = parse_baseline("b", R"({"version": 1, "findings": [{)" + entry +
                                          R"(, "folder": "m", "message": "y"}]})");
  ASSERT_TRUE(good) << good.error();
  ASSERT_EQ(good->size(), 1u);
  EXPECT_EQ((*good)[0].folder, "m");
  EXPECT_EQ((*good)[0].file, "");
  EXPECT_EQ((*good)[0].message, "y");
}

// File names are bytes: a folder or file name that is not UTF-8 is written as U+FFFD, and the
// baseline stays JSON its own parser reads.
TEST(Baseline, NamesThatAreNotUtf8AreReplaced)
{
  Report report;
  report.root = "models/x\xff\xfe";
  Finding f;
  f.rule = RuleId::unindexed_shard;
  f.file = "a\xc3.safetensors";
  f.message = "m";
  report.findings.push_back(f);
  const std::string text = render_baseline({report});
  const auto parsed = parse_baseline("b", text);
  ASSERT_TRUE(parsed) << parsed.error();
  ASSERT_EQ(parsed->size(), 1u);
  EXPECT_EQ((*parsed)[0].folder, "models/x\uFFFD\uFFFD");
  EXPECT_EQ((*parsed)[0].file, "a\uFFFD.safetensors");
  // The next run, under the same raw folder name, finds its finding accepted, nothing stale.
  std::vector<Report> again{report};
  const Report stale = apply_baseline(*parsed, "b", again);
  EXPECT_TRUE(again[0].findings.empty());
  EXPECT_TRUE(stale.findings.empty());
}

namespace {

Report
one_finding(std::vector<Engine> engines)
{
  Report report;
  report.root = "m";
  Finding f;
  f.rule = RuleId::undeclared_unquantized;
  f.file = "config.json";
  f.message = "draft stored unquantized";
  f.modules = {"mtp.fc"};
  f.details = {"vLLM checks 'mtp.fc'"};
  f.engines = std::move(engines);
  report.findings.push_back(f);
  return report;
}

} // namespace

// Each entry records the engines that failed its finding: the same finding failing another
// engine is reported again, its message saying so (in every format: github and SARIF show no
// details), and the entry is not stale.
TEST(Baseline, AcceptsAFindingForTheEnginesItRecorded)
{
  const std::string text = render_baseline({one_finding({Engine::vllm})});
  EXPECT_NE(text.find(R"("engines": [)"), std::string::npos) << text;
  const auto parsed = parse_baseline("b", text);
  ASSERT_TRUE(parsed) << parsed.error();
  ASSERT_EQ(parsed->size(), 1u);
  ASSERT_TRUE((*parsed)[0].engines);
  EXPECT_EQ(*(*parsed)[0].engines, std::vector<Engine>{Engine::vllm});

  std::vector<Report> same{one_finding({Engine::vllm})};
  EXPECT_TRUE(apply_baseline(*parsed, "b", same).findings.empty());
  EXPECT_TRUE(same[0].findings.empty());

  std::vector<Report> more{one_finding({Engine::vllm, Engine::sglang, Engine::trtllm})};
  EXPECT_TRUE(apply_baseline(*parsed, "b", more).findings.empty()); // not stale
  ASSERT_EQ(more[0].findings.size(), 1u);
  EXPECT_EQ(more[0].findings[0].message,
            "draft stored unquantized; the baseline accepts it for vLLM only, not for SGLang and "
            "TensorRT-LLM, which fail it");
  EXPECT_EQ(more[0].findings[0].details, std::vector<std::string>{"vLLM checks 'mtp.fc'"});

  // Fewer engines than recorded: accepted.
  const auto both =
    parse_baseline("b", render_baseline({one_finding({Engine::vllm, Engine::sglang})}));
  ASSERT_TRUE(both) << both.error();
  std::vector<Report> fewer{one_finding({Engine::sglang})};
  EXPECT_TRUE(apply_baseline(*both, "b", fewer).findings.empty());
  EXPECT_TRUE(fewer[0].findings.empty());
  std::vector<Report> third{one_finding({Engine::sglang, Engine::trtllm})};
  apply_baseline(*both, "b", third);
  ASSERT_EQ(third[0].findings.size(), 1u);
  EXPECT_EQ(third[0].findings[0].message,
            "draft stored unquantized; the baseline accepts it for vLLM and SGLang only, not for "
            "TensorRT-LLM, which fails it");
}

// Entries for one finding count together (baselines merged from per-engine runs); a name written
// twice counts once.
TEST(Baseline, EntriesForOneFindingAcceptTheirEnginesTogether)
{
  const std::string print = fingerprint(one_finding({}).findings[0]);
  const auto entry = [&](const std::string& engines) {
    return R"({"rule": "QC101", "folder": "m", "fingerprint": ")" + print + R"(", "engines": )" +
           engines + "}";
  };
  const auto merged =
    parse_baseline("b", R"({"version": 1, "findings": [)" + entry(R"(["vllm", "vllm"])") + ", " +
                          entry(R"(["sglang"])") + "]}");
  ASSERT_TRUE(merged) << merged.error();
  EXPECT_EQ(*(*merged)[0].engines, std::vector<Engine>{Engine::vllm});
  std::vector<Report> two{one_finding({Engine::vllm, Engine::sglang})};
  EXPECT_TRUE(apply_baseline(*merged, "b", two).findings.empty());
  EXPECT_TRUE(two[0].findings.empty());
  std::vector<Report> three{one_finding({Engine::vllm, Engine::sglang, Engine::trtllm})};
  EXPECT_TRUE(apply_baseline(*merged, "b", three).findings.empty());
  ASSERT_EQ(three[0].findings.size(), 1u);
  EXPECT_EQ(three[0].findings[0].message,
            "draft stored unquantized; the baseline accepts it for vLLM and SGLang only, not for "
            "TensorRT-LLM, which fails it");
}

// A baseline without engines (written before they were recorded, or by hand) accepts the
// finding whatever engines fail it; a finding no engine fails records none.
TEST(Baseline, EntriesWithoutEnginesAcceptAnyEngine)
{
  const std::string print = fingerprint(one_finding({}).findings[0]);
  const std::string old_entry =
    R"({"rule": "QC101", "folder": "m", "fingerprint": ")" + print + R"("})";
  const auto parsed = parse_baseline("b", R"({"version": 1, "findings": [)" + old_entry + "]}");
  ASSERT_TRUE(parsed) << parsed.error();
  EXPECT_FALSE((*parsed)[0].engines);
  std::vector<Report> reports{one_finding({Engine::vllm, Engine::sglang, Engine::trtllm})};
  EXPECT_TRUE(apply_baseline(*parsed, "b", reports).findings.empty());
  EXPECT_TRUE(reports[0].findings.empty());
  EXPECT_EQ(render_baseline({one_finding({})}).find("engines"), std::string::npos);
  // Recorded as failing no engine: any engine failing it now is news, unless another entry for
  // it records none.
  const std::string none_entry =
    R"({"rule": "QC101", "folder": "m", "engines": [], "fingerprint": ")" + print + R"("})";
  const auto none = parse_baseline("b", R"({"version": 1, "findings": [)" + none_entry + "]}");
  ASSERT_TRUE(none) << none.error();
  std::vector<Report> failing{one_finding({Engine::trtllm})};
  apply_baseline(*none, "b", failing);
  ASSERT_EQ(failing[0].findings.size(), 1u);
  EXPECT_EQ(failing[0].findings[0].message,
            "draft stored unquantized; the baseline records no engine failing it, and "
            "TensorRT-LLM fails it");
  const auto either =
    parse_baseline("b", R"({"version": 1, "findings": [)" + none_entry + ", " + old_entry + "]}");
  ASSERT_TRUE(either) << either.error();
  std::vector<Report> accepted{one_finding({Engine::trtllm})};
  EXPECT_TRUE(apply_baseline(*either, "b", accepted).findings.empty());
  EXPECT_TRUE(accepted[0].findings.empty());
}

TEST(Baseline, EnginesMustBeAListOfEngineNames)
{
  for (const std::string value :
       {R"("vllm")", "5", "null", R"(["vllm", "tgi"])", R"([1])", R"([["vllm"]])"}) {
    const auto parsed = parse_baseline(
      "b", R"({"version": 1, "findings": [{"rule": "QC101", "fingerprint": "x", "engines": )" +
             value + "}]}");
    ASSERT_FALSE(parsed) << value;
    EXPECT_EQ(parsed.error(),
              "b: /findings/0/engines is not a list of engine names (vllm, sglang, trtllm)");
  }
}

TEST(Settings, FoundUpward)
{
  MemoryFileSystem mem;
  mem.add_file("/repo/.qcheck.json", "{}");
  mem.add_file("/repo/models/a/config.json", "{}");
  EXPECT_EQ(find_settings(mem, "/repo/models/a"), "/repo/.qcheck.json");
  EXPECT_EQ(find_settings(mem, "/elsewhere"), std::nullopt);
}

// The nearest .qcheck.json is found whatever it is, so reading it fails: one that is not a
// regular file is never skipped for a settings file further up.
TEST(Settings, NearestEntryWinsEvenWhenNotARegularFile)
{
  MemoryFileSystem mem;
  mem.add_file("/repo/.qcheck.json", "{}");
  mem.add_file("/repo/a/config.json", "{}");
  mem.add_file("/repo/b/config.json", "{}");
  mem.add_file("/repo/c/config.json", "{}");
  mem.add_directory("/repo/a/.qcheck.json");
  mem.add_special("/repo/b/.qcheck.json", FileKind::special);
  mem.add_special("/repo/c/.qcheck.json", FileKind::broken_link);
  for (const std::string folder : {"/repo/a", "/repo/b", "/repo/c"}) {
    EXPECT_EQ(find_settings(mem, folder), folder + "/.qcheck.json");
  }
}

// A .qcheck.json that is a directory or a FIFO is an unreadable settings file: exit 2 naming
// it, without blocking on the FIFO, and not the parent folder's settings instead.
TEST_F(Workspace, SettingsFileThatIsNotARegularFileExitsTwo)
{
  fs::create_directories(m_dir / "repo");
  fs::copy(fixture("glm-nvfp4-nextn"), m_dir / "repo/model", fs::copy_options::recursive);
  write(m_dir / "repo/.qcheck.json", R"({"ignore": ["QC101"]})");
  const std::string settings = path("repo/model/.qcheck.json");
  fs::create_directory(settings);
  const Out dir = qcheck_run("lint " + path("repo/model"));
  EXPECT_EQ(dir.exit_code, 2) << dir.out;
  EXPECT_EQ(dir.out, "qcheck: error: " + settings + ": is a directory, not a regular file\n");
  fs::remove(settings);
  ASSERT_EQ(::mkfifo(settings.c_str(), 0600), 0);
  // `timeout`: a blocking open of the FIFO would hang; it kills qcheck (exit 124) instead.
  const Out fifo = qcheck::test::run_command("timeout 20 " + std::string(QCHECK_BINARY) + " lint " +
                                             path("repo/model") + " 2>&1");
  EXPECT_EQ(fifo.exit_code, 2) << fifo.out;
  EXPECT_EQ(fifo.out, "qcheck: error: " + settings +
                        ": is a special file (FIFO, socket or device), not a regular file\n");
  // Named with --config, too.
  const Out named =
    qcheck::test::run_command("timeout 20 " + std::string(QCHECK_BINARY) + " lint --config " +
                              settings + " " + path("repo/model") + " 2>&1");
  EXPECT_EQ(named.exit_code, 2) << named.out;
  fs::remove(settings);
  EXPECT_EQ(qcheck_run("lint " + path("repo/model")).exit_code, 0); // the parent's file
}

TEST_F(Workspace, SettingsFileChangesRulesSeverityAndEngines)
{
  fs::copy(fixture("qwen-gptq-mtp-fixed"), m_dir / "model", fs::copy_options::recursive);
  // Default: two info findings (QC116; QC110, SGLang's tower), exit 0.
  EXPECT_EQ(qcheck_run("lint " + path("model")).exit_code, 0);
  write(m_dir / ".qcheck.json", R"({"severity": {"relies-on-inference": "error"}})");
  const Out raised = qcheck_run("lint " + path("model"));
  EXPECT_EQ(raised.exit_code, 1) << raised.out;
  EXPECT_NE(raised.out.find("error: no explicit module list"), std::string::npos);
  write(m_dir / ".qcheck.json", R"({"ignore": ["QC110", "QC116"]})");
  const Out ignored = qcheck_run("lint --format json " + path("model"));
  EXPECT_EQ(Json::parse(ignored.out.substr(ignored.out.find('{')))["findings"].size(), 0u);
  // --no-config and explicit --ignore on the command line.
  EXPECT_EQ(qcheck_run("lint --no-config --fail-on info " + path("model")).exit_code, 1);
  EXPECT_EQ(qcheck_run("lint --no-config --fail-on info --ignore QC116 " + path("model")).exit_code,
            1);
  EXPECT_EQ(
    qcheck_run("lint --no-config --fail-on info --ignore QC110,QC116 " + path("model")).exit_code,
    0);
  write(m_dir / ".qcheck.json", R"({"ignore": ["QC999"]})");
  const Out bad = qcheck_run("lint " + path("model"));
  EXPECT_EQ(bad.exit_code, 2);
  EXPECT_EQ(bad.out, "qcheck: error: " + path(".qcheck.json") +
                       ": unknown rule 'QC999'; did you mean 'QC009'?\n");
}

// A --select entry that matches no rule is refused (exit 2), as it is in a settings file: a
// typo must not select nothing and pass the gate.
TEST(Settings, CommandLineSelectMatchingNoRuleIsRefused)
{
  const std::string m = fixture("glm-nvfp4-nextn");
  for (const std::string entry : {"bogus-name", "QC9", "qc1,QC9"}) {
    const Out r = qcheck_run("lint --no-config --select " + entry + " " + m);
    EXPECT_EQ(r.exit_code, 2) << entry << "\n" << r.out;
    const std::string bad = entry == "qc1,QC9" ? "QC9" : entry;
    EXPECT_EQ(r.out, "qcheck: error: --select entry '" + bad + "' matches no rule\n") << entry;
  }
  // Prefixes of a code (any case) or of a name still select.
  EXPECT_EQ(qcheck_run("lint --no-config --select qc1 " + m).exit_code, 1);
  EXPECT_EQ(qcheck_run("lint --no-config --select undeclared " + m).exit_code, 1);
}

// A command-line --select or --ignore replaces the settings file's list (docs/ci.md): it is not
// added to it. glm-nvfp4-nextn has one finding, a QC101 error.
TEST_F(Workspace, CommandLineSelectAndIgnoreReplaceTheFilesLists)
{
  fs::copy(fixture("glm-nvfp4-nextn"), m_dir / "model", fs::copy_options::recursive);
  const std::string m = path("model");
  write(m_dir / ".qcheck.json", R"({"select": ["QC1"]})");
  EXPECT_EQ(qcheck_run("lint " + m).exit_code, 1);
  const Out selected = qcheck_run("lint --select QC0 " + m);
  EXPECT_EQ(selected.exit_code, 0) << selected.out;
  write(m_dir / ".qcheck.json", R"({"ignore": ["QC101"]})");
  EXPECT_EQ(qcheck_run("lint " + m).exit_code, 0);
  const Out ignored = qcheck_run("lint --ignore QC102 " + m);
  EXPECT_EQ(ignored.exit_code, 1) << ignored.out;
  // The file's other keys still apply.
  write(m_dir / ".qcheck.json", R"({"select": ["QC0"], "severity": {"QC101": "warning"}})");
  EXPECT_EQ(qcheck_run("lint --select QC1 " + m).exit_code, 0);
  EXPECT_EQ(qcheck_run("lint --select QC1 --fail-on warning " + m).exit_code, 1);
}

TEST_F(Workspace, BaselineRoundTrip)
{
  fs::copy(fixture("glm-nvfp4-nextn"), m_dir / "model", fs::copy_options::recursive);
  const std::string baseline = path("baseline.json");
  const Out written = qcheck_run("lint --write-baseline " + baseline + " " + path("model"));
  EXPECT_EQ(written.exit_code, 0) << written.out;
  // Re-run with the baseline: the known finding is accepted.
  const Out accepted = qcheck_run("lint --baseline " + baseline + " " + path("model"));
  EXPECT_EQ(accepted.exit_code, 0) << accepted.out;
  // A new problem: only it is reported.
  std::ofstream(m_dir / "model/stray.safetensors") << "tiny";
  const Out fresh = qcheck_run("lint --format json --baseline " + baseline + " " + path("model"));
  EXPECT_EQ(fresh.exit_code, 1);
  const Json j = Json::parse(fresh.out);
  ASSERT_EQ(j["findings"].size(), 2u) << j.dump(2); // the stray shard (header + unindexed)
  for (const auto& f : j["findings"]) {
    EXPECT_EQ(f["file"], "stray.safetensors");
  }
  fs::remove(m_dir / "model/stray.safetensors");
  // Fix the folder: the baseline entry is now stale and says so.
  fs::copy(fixture("glm-nvfp4-nextn-fixed") + "/config.json", m_dir / "model/config.json",
           fs::copy_options::overwrite_existing);
  fs::copy(fixture("glm-nvfp4-nextn-fixed") + "/hf_quant_config.json",
           m_dir / "model/hf_quant_config.json", fs::copy_options::overwrite_existing);
  const Out stale = qcheck_run("lint --format json --baseline " + baseline + " " + path("model"));
  EXPECT_EQ(stale.exit_code, 0);
  const Json s = Json::parse(stale.out);
  ASSERT_EQ(s["findings"].size(), 1u);
  EXPECT_EQ(s["findings"][0]["rule"], "QC123");
  EXPECT_EQ(s["findings"][0]["folder"], baseline);
}

// A baseline written for vLLM alone does not accept the same draft finding once SGLang is
// checked too (the compressed-tensors draft fails both); it still does for vLLM.
TEST_F(Workspace, BaselineKeepsAFindingMoreEnginesFail)
{
  fs::copy(fixture("qwen-w4a16-mtp"), m_dir / "model", fs::copy_options::recursive);
  const std::string baseline = path("baseline.json");
  EXPECT_EQ(
    qcheck_run("lint --engine vllm --write-baseline " + baseline + " " + path("model")).exit_code,
    0);
  EXPECT_EQ(qcheck_run("lint --engine vllm --baseline " + baseline + " " + path("model")).exit_code,
            0);
  const Out all = qcheck_run("lint --format json --baseline " + baseline + " " + path("model"));
  EXPECT_EQ(all.exit_code, 1) << all.out;
  const Json j = Json::parse(all.out);
  ASSERT_EQ(j["findings"].size(), 1u) << j.dump(2);
  EXPECT_EQ(j["findings"][0]["rule"], "QC101");
  const std::string said = "the baseline accepts it for vLLM only, not for SGLang, which fails it";
  EXPECT_TRUE(j["findings"][0]["message"].get<std::string>().ends_with("; " + said)) << j.dump(2);
  // The CI formats say it too.
  const Out github =
    qcheck_run("lint --format github --baseline " + baseline + " " + path("model"));
  EXPECT_EQ(github.exit_code, 1);
  EXPECT_NE(github.out.find(said), std::string::npos) << github.out;
  const Out sarif = qcheck_run("lint --format sarif --baseline " + baseline + " " + path("model"));
  EXPECT_EQ(sarif.exit_code, 1);
  EXPECT_NE(sarif.out.find(said), std::string::npos) << sarif.out;
}

TEST(Baseline, FolderKeyDropsEmptyAndDotComponentsOnly)
{
  for (const char* spelling :
       {"models/m", "models/m/", "./models/m", "models//m", "models/./m//", "././models/m/."}) {
    EXPECT_EQ(folder_key(spelling), "models/m") << spelling;
  }
  EXPECT_EQ(folder_key("/"), "/");
  EXPECT_EQ(folder_key("//data/./m/"), "/data/m");
  EXPECT_EQ(folder_key(""), ".");
  EXPECT_EQ(folder_key("./"), ".");
  EXPECT_EQ(folder_key("../m/"), "../m");
  // ".." is kept: through a link x, x/../m is another folder than m.
  EXPECT_EQ(folder_key("models/x/../m"), "models/x/../m");
  EXPECT_NE(folder_key("models/m"), folder_key("/work/models/m"));
}

// A baseline written for "model" accepts its findings however the folder is spelled next time
// ("model/", "./model"), and leaves no stale entry behind.
TEST_F(Workspace, BaselineMatchesOtherSpellingsOfTheFolder)
{
  fs::copy(fixture("glm-nvfp4-nextn"), m_dir / "model", fs::copy_options::recursive);
  const std::string baseline = path("baseline.json");
  ASSERT_EQ(qcheck_run("lint --write-baseline " + baseline + " " + path("model")).exit_code, 0);
  for (const std::string spelling : {path("model") + "/", m_dir.string() + "/./model"}) {
    const Out accepted = qcheck_run("lint --format json --baseline " + baseline + " " + spelling);
    EXPECT_EQ(accepted.exit_code, 0) << spelling << "\n" << accepted.out;
    EXPECT_TRUE(Json::parse(accepted.out)["findings"].empty()) << accepted.out;
  }
}

// "x/../model" is not "model" when x is a link: both folders are linted.
TEST_F(Workspace, DotDotThroughALinkIsAnotherFolder)
{
  fs::copy(fixture("glm-nvfp4-nextn"), m_dir / "model", fs::copy_options::recursive);
  fs::create_directories(m_dir / "deep/a");
  fs::copy(fixture("plain-bf16"), m_dir / "deep/model", fs::copy_options::recursive);
  fs::create_directory_symlink(m_dir / "deep/a", m_dir / "x");
  const Out both = qcheck_run("lint --format json " + path("model") + " " + path("x/../model"));
  EXPECT_EQ(both.exit_code, 1) << both.out;
  // The summary counts both folders' findings: glm-nvfp4-nextn's and plain-bf16's (none).
  const Json j = Json::parse(both.out);
  const Json alone = Json::parse(qcheck_run("lint --format json " + path("model")).out);
  const Json plain = Json::parse(qcheck_run("lint --format json " + fixture("plain-bf16")).out);
  EXPECT_EQ(j["findings"].size(), alone["findings"].size() + plain["findings"].size());
  // Each folder has its own summary line in the text report.
  const Out text = qcheck_run("lint " + path("model") + " " + path("x/../model"));
  EXPECT_NE(text.out.find(path("x/../model") + ": 0 errors"), std::string::npos) << text.out;
}

// A folder named twice, under any spelling, is linted once: one report, its findings once.
TEST(ManyFolders, FolderNamedTwiceIsLintedOnce)
{
  const std::string m = fixture("glm-nvfp4-nextn");
  const Out once = qcheck_run("lint --format json " + m);
  const Out twice = qcheck_run("lint --format json " + m + " " + m + "/ " + m + "/.");
  EXPECT_EQ(twice.exit_code, 1);
  EXPECT_EQ(Json::parse(twice.out)["summary"], Json::parse(once.out)["summary"]) << twice.out;
  EXPECT_EQ(Json::parse(twice.out)["findings"].size(), Json::parse(once.out)["findings"].size());
}

TEST(ManyFolders, RecursiveReportsEachFolderUnderItsOwnPath)
{
  const Out r = qcheck_run("lint --format json --recursive " + std::string(QCHECK_FIXTURES));
  EXPECT_EQ(r.exit_code, 1);
  const Json j = Json::parse(r.out);
  std::set<std::string> folders;
  for (const auto& f : j["findings"]) {
    folders.insert(f["folder"]);
  }
  EXPECT_TRUE(folders.contains(fixture("glm-nvfp4-nextn")));
  EXPECT_TRUE(folders.contains(fixture("qwen-w4a16-mtp")));
  EXPECT_TRUE(folders.contains(fixture("formats/modelopt-fp8-deepseek-nextn-unexcluded")));
  EXPECT_FALSE(folders.contains(fixture("glm-nvfp4-nextn-fixed"))); // clean twins add nothing
  // The same finding as a single-folder run, under the folder's own path.
  const Out single = qcheck_run("lint --format json " + fixture("glm-nvfp4-nextn"));
  const Json one = Json::parse(single.out);
  size_t matches = 0;
  for (const auto& f : j["findings"]) {
    if (f["folder"] == fixture("glm-nvfp4-nextn")) {
      EXPECT_EQ(f, one["findings"][0]);
      ++matches;
    }
  }
  EXPECT_EQ(matches, 1u);
}

TEST(ManyFolders, SeveralPathsOneExitCode)
{
  EXPECT_EQ(
    qcheck_run("lint " + fixture("plain-bf16") + " " + fixture("glm-nvfp4-nextn-fixed")).exit_code,
    0);
  EXPECT_EQ(
    qcheck_run("lint " + fixture("plain-bf16") + " " + fixture("glm-nvfp4-nextn")).exit_code, 1);
  EXPECT_EQ(qcheck_run("lint " + fixture("plain-bf16") + " /nonexistent").exit_code, 2);
}

// The library hands back what each report was made from, one run per folder, in folder order.
TEST(ManyFolders, OutcomeKeepsEachFoldersRun)
{
  DiskFileSystem disk;
  LintRequest request;
  request.paths = {fixture("glm-nvfp4-nextn"), fixture("plain-bf16")};
  request.no_config = true;
  const LintOutcome outcome = run_lint_request(disk, request);
  ASSERT_TRUE(outcome.errors.empty()) << outcome.errors[0];
  ASSERT_EQ(outcome.runs.size(), 2u);
  ASSERT_EQ(outcome.reports.size(), 2u);
  for (size_t i = 0; i < 2; ++i) {
    const LintRun& run = outcome.runs[i];
    EXPECT_EQ(run.checkpoint.root, request.paths[i]);
    EXPECT_FALSE(run.checkpoint.tensors.empty());
    EXPECT_FALSE(run.inventory.modules.empty());
    EXPECT_TRUE(run.report.findings.empty()); // moved to outcome.reports
  }
  EXPECT_FALSE(outcome.reports[0].findings.empty());
}
