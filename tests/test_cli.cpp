// Whole-CLI tests: the qcheck binary on fixture folders, comparing output and exit code.
#include <array>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <gtest/gtest.h>
#include <sstream>
#include <sys/stat.h>
#include <unistd.h>

#include "cli_runner.hpp"
#include <nlohmann/json.hpp>
#include <set>
#include <sys/wait.h>

namespace {

using qcheck::test::CliRun;

CliRun
run(const std::string& args, bool merge_stderr = false)
{
  return qcheck::test::run_qcheck(args, merge_stderr);
}

std::string
fixture(const std::string& name)
{
  return std::string(QCHECK_FIXTURES) + "/" + name;
}

nlohmann::json
lint_json(const std::string& name, int expected_exit)
{
  const CliRun r = run("lint --format json " + fixture(name));
  EXPECT_EQ(r.exit_code, expected_exit) << name << "\n" << r.out;
  return nlohmann::json::parse(r.out);
}

std::vector<nlohmann::json>
findings_of(const nlohmann::json& j, const std::string& rule)
{
  std::vector<nlohmann::json> out;
  for (const auto& f : j["findings"]) {
    if (f["rule"] == rule) {
      out.push_back(f);
    }
  }
  return out;
}

std::set<std::string>
strings(const nlohmann::json& array)
{
  return array.get<std::set<std::string>>();
}

} // namespace

TEST(Cli, GlmNextnLayerMissingFromBothLists)
{
  const auto j = lint_json("glm-nvfp4-nextn", 1);
  ASSERT_EQ(j["findings"].size(), 1u) << j.dump(2);
  const auto f = findings_of(j, "QC101").at(0);
  EXPECT_EQ(f["severity"], "error");
  EXPECT_EQ(strings(f["engines"]), (std::set<std::string>{"vllm", "sglang", "trtllm"}));
  const auto modules = strings(f["modules"]);
  EXPECT_EQ(modules.size(), 21u);
  for (const auto& m : modules) {
    EXPECT_TRUE(m.starts_with("model.language_model.layers.45.")) << m;
  }
  EXPECT_TRUE(modules.contains("model.language_model.layers.45.mlp.experts.0.down_proj"));
  EXPECT_TRUE(modules.contains("model.language_model.layers.45.eh_proj"));
  EXPECT_EQ(f["suggested_entries"],
            nlohmann::json::array({"model.language_model.layers.45*", "model.layers.45*"}));
  EXPECT_TRUE(strings(f["files"]).contains("hf_quant_config.json"));
  EXPECT_TRUE(strings(f["files"]).contains("config.json"));
  const std::string message = f["message"];
  EXPECT_NE(message.find("The size of tensor a"), std::string::npos) << message;
  EXPECT_EQ(j["summary"]["errors"], 1);
}

TEST(Cli, GlmFixedTwinIsClean)
{
  const auto j = lint_json("glm-nvfp4-nextn-fixed", 0);
  EXPECT_TRUE(j["findings"].empty()) << j.dump(2);
}

TEST(Cli, QwenW4a16MtpMissingFromIgnore)
{
  const auto j = lint_json("qwen-w4a16-mtp", 1);
  ASSERT_EQ(j["findings"].size(), 1u) << j.dump(2);
  const auto f = findings_of(j, "QC101").at(0);
  // Packed W4A16: vLLM's error, and what SGLang's loaders do instead (they raise no ValueError).
  const std::string message = f["message"];
  EXPECT_NE(message.find("; vLLM fails with `ValueError: There is no module or parameter named "
                         "'<module>.weight'` (the layer holds packed parameters); SGLang has no "
                         "parameter for the BF16 weight: depending on the model its loader stops "
                         "with a `KeyError` or skips the weight"),
            std::string::npos)
    << message;
  const std::set<std::string> expected{"mtp.fc",
                                       "mtp.layers.0.self_attn.q_proj",
                                       "mtp.layers.0.self_attn.k_proj",
                                       "mtp.layers.0.self_attn.v_proj",
                                       "mtp.layers.0.self_attn.o_proj",
                                       "mtp.layers.0.mlp.gate_proj",
                                       "mtp.layers.0.mlp.up_proj",
                                       "mtp.layers.0.mlp.down_proj"};
  EXPECT_EQ(strings(f["modules"]), expected);
  // The report's eight names plus the fused draft layers (R37).
  auto suggested = expected;
  suggested.insert({"mtp.layers.0.self_attn.qkv_proj", "mtp.layers.0.mlp.gate_up_proj"});
  EXPECT_EQ(strings(f["suggested_entries"]), suggested);
  EXPECT_TRUE(strings(f["engines"]).contains("vllm"));
  EXPECT_TRUE(strings(f["files"]).contains("quantization_config.json"));
  EXPECT_TRUE(strings(f["files"]).contains("model_extra_tensors.safetensors"));
}

TEST(Cli, QwenW4a16FixedTwinHasNoErrorButWarnsAboutShardNames)
{
  // The report's fix lists q/k/v and gate/up shard names only: it loads in vLLM, whose Qwen3.5
  // drafter has packed_modules_mapping, but R37 warns for drafters that lack it.
  const auto j = lint_json("qwen-w4a16-mtp-fixed", 0);
  EXPECT_EQ(j["summary"]["errors"], 0);
  const auto warnings = findings_of(j, "QC124");
  ASSERT_EQ(warnings.size(), 4u) << j.dump(2);
  EXPECT_EQ(j["findings"].size(), 4u);
  EXPECT_EQ(warnings[0]["suggested_entries"],
            nlohmann::json::array({"mtp.layers.0.mlp.gate_up_proj"}));
}

TEST(Cli, QwenGptqQuantizedMtpFc)
{
  const auto j = lint_json("qwen-gptq-mtp", 1);
  const auto plain = findings_of(j, "QC108");
  ASSERT_EQ(plain.size(), 1u) << j.dump(2);
  EXPECT_EQ(plain[0]["modules"], nlohmann::json::array({"mtp.fc"}));
  EXPECT_EQ(plain[0]["engines"], nlohmann::json::array({"sglang"}));
  // SGLang reads dynamic alone (no dtype inference): the BF16 in_proj_b / in_proj_a, its fused
  // in_proj_ba, named under SGLang's "model.layers" (qwen3_vl.py's text model).
  const auto undeclared = findings_of(j, "QC101");
  ASSERT_EQ(undeclared.size(), 1u) << j.dump(2);
  EXPECT_EQ(undeclared[0]["engines"], nlohmann::json::array({"sglang"}));
  EXPECT_EQ(undeclared[0]["modules"],
            nlohmann::json::array({"model.language_model.layers.0.linear_attn.in_proj_a",
                                   "model.language_model.layers.0.linear_attn.in_proj_b"}));
  EXPECT_EQ(undeclared[0]["suggested_entries"],
            nlohmann::json::array({"-:model\\.layers\\.0\\.linear_attn\\.in_proj_ba$"}));
  EXPECT_EQ(j["summary"]["errors"], 2);
  // "+:.mtp." needs a character before "mtp" under re.match: it selects nothing.
  const auto dead = findings_of(j, "QC112");
  ASSERT_EQ(dead.size(), 1u);
  EXPECT_EQ(dead[0]["message"], "dynamic key '+:.mtp.' matches no layer: vLLM applies it with "
                                "re.match (anchored at the start) to prefixes such as 'mtp.fc'");
}

TEST(Cli, QwenGptqFixedTwinHasNoError)
{
  const auto j = lint_json("qwen-gptq-mtp-fixed", 0);
  EXPECT_EQ(j["summary"]["errors"], 0);
  // Qwen3.5's model class is Qwen3-VL's: SGLang builds its BF16 tower without a quantization
  // config (vLLM infers it unquantized from the dtypes).
  const auto tower = findings_of(j, "QC110");
  ASSERT_EQ(tower.size(), 1u) << j.dump(2);
  EXPECT_EQ(tower[0]["engines"], nlohmann::json::array({"sglang"}));
  EXPECT_EQ(tower[0]["modules"], nlohmann::json::array({"model.visual.blocks.0.attn.proj",
                                                        "model.visual.blocks.0.attn.qkv",
                                                        "model.visual.merger.linear_fc1"}));
  EXPECT_EQ(j["summary"]["warnings"], 0);
}

TEST(Cli, PlainBf16ModelWithoutQuantizationIsClean)
{
  EXPECT_TRUE(lint_json("plain-bf16", 0)["findings"].empty());
}

TEST(Cli, TextOutputIsGccShaped)
{
  const CliRun r = run("lint " + fixture("glm-nvfp4-nextn"));
  EXPECT_EQ(r.exit_code, 1);
  const std::string first = r.out.substr(0, r.out.find('\n'));
  EXPECT_TRUE(first.starts_with(fixture("glm-nvfp4-nextn") +
                                "/config.json:34:15: error: MTP/NextN "
                                "draft model.language_model.layers.45: "
                                "21 modules"))
    << first;
  EXPECT_TRUE(first.ends_with("[QC101 undeclared-unquantized-module]")) << first;
  EXPECT_NE(r.out.find("fix: add \"model.language_model.layers.45*\", \"model.layers.45*\" to "
                       "config.json ignore and hf_quant_config.json exclude_modules"),
            std::string::npos)
    << r.out;
  EXPECT_EQ(r.out.find("\x1b["), std::string::npos); // no colour when not a TTY
}

TEST(Cli, MissingPathExitsTwo)
{
  const CliRun r = run("lint /nonexistent/model", true);
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_EQ(r.out, "qcheck: error: /nonexistent/model: no such file or directory\n");
}

TEST(Cli, EmptyPathOrModuleGlobExitsTwo)
{
  for (const char* command : {"lint ''", "fix ''", "inspect ''", "explain '' lm_head"}) {
    const CliRun r = run(command, true);
    EXPECT_EQ(r.exit_code, 2) << command;
    EXPECT_EQ(r.out, "qcheck: error: empty path: give a model folder or a .safetensors file\n")
      << command;
  }
  const CliRun glob = run("inspect " + fixture("plain-bf16") + " --module ''", true);
  EXPECT_EQ(glob.exit_code, 2);
  EXPECT_NE(glob.out.find("needs a glob (an empty one matches no module)"), std::string::npos)
    << glob.out;
}

TEST(Cli, UsageErrorExitsTwo)
{
  EXPECT_EQ(run("lint --format yaml " + fixture("plain-bf16")).exit_code, 2);
  EXPECT_EQ(run("frobnicate").exit_code, 2);
}

TEST(Cli, ExitZeroAndFailOn)
{
  EXPECT_EQ(run("lint --exit-zero " + fixture("glm-nvfp4-nextn")).exit_code, 0);
  // The GPTQ twin has only an info finding: clean by default, failing at --fail-on info.
  EXPECT_EQ(run("lint " + fixture("qwen-gptq-mtp-fixed")).exit_code, 0);
  EXPECT_EQ(run("lint --fail-on info " + fixture("qwen-gptq-mtp-fixed")).exit_code, 1);
}

TEST(Cli, EngineProfileNamesOnlyThatEngine)
{
  const CliRun r = run("lint --format json --engine trtllm " + fixture("glm-nvfp4-nextn"));
  EXPECT_EQ(r.exit_code, 1);
  const auto j = nlohmann::json::parse(r.out);
  EXPECT_EQ(j["findings"][0]["engines"], nlohmann::json::array({"trtllm"}));
}

TEST(Cli, MalformedShardsAreFindingsNotCrashes)
{
  const auto j = lint_json("malformed", 1);
  std::set<std::string> messages;
  for (const auto& f : j["findings"]) {
    messages.insert(f["file"].get<std::string>() + ": " + f["message"].get<std::string>());
  }
  EXPECT_TRUE(messages.contains("length-max.safetensors: header length 18446744073709551615 "
                                "exceeds the format's limit of 100000000 bytes"));
  EXPECT_TRUE(messages.contains("dir.safetensors: is a directory, not a regular file; not read"));
  EXPECT_TRUE(messages.contains("unknown-dtype.safetensors: tensor 'a': unknown dtype 'FP4'"));
  EXPECT_TRUE(messages.contains("short.safetensors: file is 5 bytes, too short to hold the 8-byte "
                                "header length"));
  EXPECT_TRUE(messages.contains("length-beyond-file.safetensors: header length 4096 exceeds the 92 "
                                "bytes that follow it in the file"));
}

TEST(Cli, InspectGlmShowsLayer45Bf16AndExpertsNvfp4)
{
  const CliRun r = run("inspect --format json " + fixture("glm-nvfp4-nextn"));
  ASSERT_EQ(r.exit_code, 0);
  const auto j = nlohmann::json::parse(r.out);
  size_t layer45 = 0, nvfp4_experts = 0;
  for (const auto& m : j["modules"]) {
    const std::string name = m["name"];
    if (name.starts_with("model.language_model.layers.45.") &&
        (m["role"] == "linear" || m["role"] == "expert" || m["role"] == "lm-head")) {
      ++layer45;
      EXPECT_EQ(m["storage"], "unquantized") << name;
      EXPECT_EQ(m["dtypes"], nlohmann::json({{"BF16", 1}})) << name;
    }
    if (name.find(".mlp.experts.") != std::string::npos &&
        !name.starts_with("model.language_model.layers.45.")) {
      ++nvfp4_experts;
      EXPECT_EQ(m["family"], "nvfp4") << name;
    }
  }
  EXPECT_EQ(layer45, 21u);
  EXPECT_EQ(nvfp4_experts, 24u);
  bool checked = false;
  for (const auto& t : j["tensors"]) {
    if (t["name"] == "model.language_model.layers.1.mlp.experts.0.down_proj.weight") {
      EXPECT_EQ(t["dtype"], "U8");
      EXPECT_EQ(strings(t["siblings"]),
                (std::set<std::string>{"weight_scale", "weight_scale_2", "input_scale"}));
      checked = true;
    }
  }
  EXPECT_TRUE(checked);
}

TEST(Cli, InspectModuleFilter)
{
  const CliRun r = run("inspect " + fixture("glm-nvfp4-nextn") +
                       " --module 'model.language_model.layers.45.mlp.experts.0.*'");
  ASSERT_EQ(r.exit_code, 0);
  EXPECT_NE(
    r.out.find(
      "model.language_model.layers.45.mlp.experts.0.down_proj  [expert unquantized] (1 BF16)"),
    std::string::npos)
    << r.out;
  EXPECT_NE(r.out.find("3 tensors in 3 modules, 3 shards"), std::string::npos) << r.out;
}

// inspect shows what it can and exits 1 when that is not everything: a shard it could not read,
// or a --module glob that selects no module (each said on stderr).
TEST(Cli, InspectExitsOneWhenItCannotShowEverything)
{
  const CliRun none = run("inspect " + fixture("glm-nvfp4-nextn") + " --module 'no.such.*'", true);
  EXPECT_EQ(none.exit_code, 1);
  EXPECT_NE(none.out.find("qcheck: warning: no module matches 'no.such.*'"), std::string::npos)
    << none.out;
  EXPECT_NE(none.out.find("0 tensors in 0 modules, 3 shards"), std::string::npos) << none.out;
  const CliRun malformed = run("inspect " + fixture("malformed"), true);
  EXPECT_EQ(malformed.exit_code, 1);
  EXPECT_NE(malformed.out.find("short.safetensors: file is 5 bytes, too short to hold the 8-byte "
                               "header length"),
            std::string::npos)
    << malformed.out;
}

// An empty --output-dir is a usage error, not a silent dry run.
TEST(Cli, FixEmptyOutputDirIsAUsageError)
{
  const CliRun r = run("fix --output-dir '' " + fixture("glm-nvfp4-nextn"), true);
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_NE(r.out.find("needs a folder"), std::string::npos) << r.out;
}

TEST(Cli, RulesListAndExplain)
{
  const CliRun list = run("rules");
  EXPECT_EQ(list.exit_code, 0);
  EXPECT_NE(list.out.find("QC101  undeclared-unquantized-module"), std::string::npos);
  const CliRun one = run("rules undeclared-unquantized-module");
  EXPECT_EQ(one.exit_code, 0);
  EXPECT_TRUE(one.out.starts_with("QC101 undeclared-unquantized-module (error, fixable)"));
  const CliRun typo = run("rules QC1O1", true);
  EXPECT_EQ(typo.exit_code, 2);
  EXPECT_EQ(typo.out, "qcheck: error: unknown rule 'QC1O1'; did you mean 'QC101'?\n");
  // One rule in JSON: the fields the list gives it; in Markdown: its section of docs/rules.md.
  const CliRun json = run("rules QC101 --format json");
  EXPECT_EQ(json.exit_code, 0);
  const auto all = nlohmann::json::parse(run("rules --format json").out);
  EXPECT_EQ(nlohmann::json::parse(json.out), all[11]) << json.out;
  EXPECT_EQ(all[11]["code"], "QC101");
  const CliRun markdown = run("rules undeclared-unquantized-module --format markdown");
  EXPECT_EQ(markdown.exit_code, 0);
  EXPECT_TRUE(markdown.out.starts_with("## QC101\n")) << markdown.out;
  EXPECT_NE(run("rules --format markdown").out.find("\n" + markdown.out), std::string::npos);
}

TEST(Cli, ExplainModuleShowsEachEnginesPrefixAndDecision)
{
  const CliRun r = run("explain " + fixture("glm-nvfp4-nextn") +
                       " model.language_model.layers.45.mlp.experts.0.down_proj");
  ASSERT_EQ(r.exit_code, 0);
  EXPECT_NE(r.out.find("vLLM: checks 'model.layers.45.mlp.experts' (FusedMoE) against config.json "
                       "ignore: QUANTIZED"),
            std::string::npos)
    << r.out;
  EXPECT_NE(r.out.find("TensorRT-LLM: checks 'model.language_model.layers.45.mlp.experts' "
                       "(FusedMoE) against hf_quant_config.json exclude_modules: QUANTIZED"),
            std::string::npos)
    << r.out;
  const CliRun fixed = run("explain " + fixture("glm-nvfp4-nextn-fixed") +
                           " model.language_model.layers.45.mlp.experts.0.down_proj.weight");
  ASSERT_EQ(fixed.exit_code, 0);
  EXPECT_NE(fixed.out.find("vLLM: checks 'model.layers.45.mlp.experts' (FusedMoE) against "
                           "config.json ignore: excluded — 'model.layers.45' in ignore matches"),
            std::string::npos)
    << fixed.out;
}

TEST(Cli, ExplainEntriesShowsWhichSpellingEachEngineUses)
{
  const CliRun r = run("explain --engine vllm " + fixture("glm-nvfp4-nextn-fixed") + " --entries");
  ASSERT_EQ(r.exit_code, 0);
  EXPECT_NE(
    r.out.find("  'model.language_model.layers.45*'\n    vLLM: nothing (it names checkpoint "
               "module model.language_model.layers.45.eh_proj, which this engine checks "
               "under another name)\n"),
    std::string::npos)
    << r.out;
  EXPECT_NE(r.out.find("  'model.layers.45*'\n    vLLM: 7 layers: model.layers.45.eh_proj"),
            std::string::npos)
    << r.out;
}

TEST(Cli, ExplainUnknownModuleSuggests)
{
  const CliRun r = run(
    "explain " + fixture("glm-nvfp4-nextn") + " model.language_model.layers.45.mlp.expert", true);
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_EQ(r.out, "qcheck: error: no module 'model.language_model.layers.45.mlp.expert' in " +
                     fixture("glm-nvfp4-nextn") +
                     "; closest: 'model.language_model.layers.45.mlp.experts.0.down_proj'\n");
}

// A name is a module's or one of its stored tensors': a made-up parameter under a real module
// selects nothing (it did select the module, as a name without a dot selected the module "").
TEST(Cli, ExplainNameOfNoTensorSelectsNothing)
{
  const std::string m = "model.language_model.layers.45.mlp.experts.0.down_proj";
  EXPECT_EQ(run("explain " + fixture("glm-nvfp4-nextn") + " " + m + ".weight").exit_code, 0);
  const CliRun r = run("explain " + fixture("glm-nvfp4-nextn") + " " + m + ".nonexistent", true);
  EXPECT_EQ(r.exit_code, 2) << r.out;
  EXPECT_EQ(r.out.rfind("qcheck: error: no module '" + m + ".nonexistent' in ", 0), 0u) << r.out;
  EXPECT_EQ(run("explain " + fixture("glm-nvfp4-nextn") + " nonexistent").exit_code, 2);
}

// A report that cannot be written to stdout is not a result: exit 2 and a one-line reason on
// stderr, not the lint's exit code. (stderr goes to the pipe read here, stdout to /dev/full.)
TEST(Cli, UnwritableStdoutExitsTwo)
{
  for (const std::string args :
       {std::string("rules"), "lint --format json " + fixture("glm-nvfp4-nextn"),
        "lint --format sarif " + fixture("plain-bf16"), "fix " + fixture("glm-nvfp4-nextn")}) {
    const CliRun r =
      qcheck::test::run_command(std::string(QCHECK_BINARY) + " " + args + " 2>&1 >/dev/full");
    const std::string& err = r.out; // stderr, read through the pipe
    EXPECT_EQ(r.exit_code, 2) << args << "\n" << err;
    EXPECT_NE(err.find("qcheck: error: cannot write to standard output: No space left on device\n"),
              std::string::npos)
      << args << "\n"
      << err;
  }
}

namespace {

// A fresh folder for one test's output files.
std::string
scratch_dir()
{
  const std::string dir = std::filesystem::temp_directory_path().string() + "/qcheck-cli-" +
                          std::to_string(::getpid()) + "-" +
                          ::testing::UnitTest::GetInstance()->current_test_info()->name();
  std::filesystem::remove_all(dir);
  std::filesystem::create_directories(dir);
  return dir;
}

std::string
file_text(const std::string& path)
{
  std::ifstream in(path);
  std::stringstream s;
  s << in.rdbuf();
  return s.str();
}

} // namespace

// -o and --write-baseline replace their file atomically: a write that fails (here the file size
// limit, SIGXFSZ ignored) leaves the previous file as it was and no temporary file, exit 2.
TEST(Cli, FailedReportWriteLeavesThePreviousFile)
{
  const std::string dir = scratch_dir();
  const std::string m = fixture("glm-nvfp4-nextn");
  for (const std::string option : {"--format sarif -o", "--write-baseline"}) {
    const std::string target = dir + "/out.json";
    const std::string previous = "the previous good report\n";
    std::ofstream(target) << previous;
    const CliRun r =
      qcheck::test::run_command("ulimit -f 0; trap '' XFSZ; " + std::string(QCHECK_BINARY) +
                                " lint " + option + " " + target + " " + m + " 2>&1");
    EXPECT_EQ(r.exit_code, 2) << option << "\n" << r.out;
    EXPECT_NE(r.out.find(target + ": write failed: File too large\n"), std::string::npos) << r.out;
    EXPECT_EQ(file_text(target), previous) << option;
    size_t entries = 0;
    for ([[maybe_unused]] const auto& e : std::filesystem::directory_iterator(dir)) {
      ++entries;
    }
    EXPECT_EQ(entries, 1u) << option; // no temporary file left
    // Without the limit, the file is replaced.
    EXPECT_EQ(run("lint " + option + " " + target + " " + m).exit_code,
              option == "--write-baseline" ? 0 : 1);
    EXPECT_TRUE(nlohmann::json::accept(file_text(target))) << option;
  }
  std::filesystem::remove_all(dir);
}

// fix --output-dir into folders that do not exist yet: a write that fails leaves no trace, the
// folders it created included (the README: the folder as it was).
TEST(Cli, FailedFixIntoNewFoldersRemovesThem)
{
  const std::string dir = scratch_dir();
  const std::string out = dir + "/deep/er";
  const CliRun r = qcheck::test::run_command("ulimit -f 0; trap '' XFSZ; " +
                                             std::string(QCHECK_BINARY) + " fix --output-dir " +
                                             out + " " + fixture("glm-nvfp4-nextn") + " 2>&1");
  EXPECT_EQ(r.exit_code, 2) << r.out;
  EXPECT_FALSE(std::filesystem::exists(dir + "/deep")) << r.out;
  // Only what this run made goes: an empty folder reached through "missing/..", and a link
  // that leads nowhere (it cannot be made a folder: an error), stay.
  std::filesystem::create_directory(dir + "/kept");
  const CliRun up = qcheck::test::run_command(
    "ulimit -f 0; trap '' XFSZ; " + std::string(QCHECK_BINARY) + " fix --output-dir " + dir +
    "/missing/../kept/out " + fixture("glm-nvfp4-nextn") + " 2>&1");
  EXPECT_EQ(up.exit_code, 2) << up.out;
  EXPECT_TRUE(std::filesystem::is_directory(dir + "/kept")) << up.out;
  EXPECT_FALSE(std::filesystem::exists(dir + "/kept/out"));
  EXPECT_FALSE(std::filesystem::exists(dir + "/missing"));
  std::filesystem::create_symlink("nowhere", dir + "/dangling");
  const CliRun link =
    run("fix --output-dir " + dir + "/dangling/out " + fixture("glm-nvfp4-nextn"), true);
  EXPECT_EQ(link.exit_code, 2) << link.out;
  EXPECT_TRUE(std::filesystem::is_symlink(dir + "/dangling")) << link.out;
  // Without the limit, they are made and written.
  EXPECT_EQ(run("fix --output-dir " + out + " " + fixture("glm-nvfp4-nextn")).exit_code, 0);
  EXPECT_TRUE(std::filesystem::exists(out + "/config.json"));
  std::filesystem::remove_all(dir);
}

// A FIFO or a directory is refused in one line, exit 2: never opened, so an unread FIFO does not
// hang qcheck (`timeout` would kill it: exit 124).
TEST(Cli, ReportToAFifoOrDirectoryIsRefused)
{
  const std::string dir = scratch_dir();
  const std::string fifo = dir + "/fifo";
  ASSERT_EQ(::mkfifo(fifo.c_str(), 0600), 0);
  const std::string m = fixture("glm-nvfp4-nextn");
  for (const std::string option : {"-o", "--write-baseline"}) {
    const CliRun r = qcheck::test::run_command("timeout 20 " + std::string(QCHECK_BINARY) +
                                               " lint " + option + " " + fifo + " " + m + " 2>&1");
    EXPECT_EQ(r.exit_code, 2) << option << "\n" << r.out;
    EXPECT_EQ(r.out, "qcheck: error: " + fifo + ": is a FIFO, not a regular file; not written\n");
    const CliRun d = run("lint " + option + " " + dir + " " + m, true);
    EXPECT_EQ(d.exit_code, 2) << option << "\n" << d.out;
    EXPECT_EQ(d.out,
              "qcheck: error: " + dir + ": is a directory, not a regular file; not written\n");
  }
  std::filesystem::remove_all(dir);
}

// -o /dev/stdout writes to standard output, a pipe here, as it did when the file was opened.
TEST(Cli, ReportToDevStdoutReachesThePipe)
{
  const CliRun direct = run("lint --format json " + fixture("glm-nvfp4-nextn"));
  const CliRun named = run("lint --format json -o /dev/stdout " + fixture("glm-nvfp4-nextn"));
  EXPECT_EQ(named.exit_code, 1);
  EXPECT_EQ(named.out, direct.out);
  EXPECT_FALSE(named.out.empty());
}

// A file qcheck cannot read is named by its path in the folder, not by the folder as typed: a
// baseline written for `m` holds for `./m/` (the README: one folder).
TEST(Cli, BaselineOfAnUnreadableFileHoldsForTheFolderSpelledOtherwise)
{
  const std::string dir = scratch_dir();
  std::filesystem::copy(fixture("plain-bf16"), dir + "/m",
                        std::filesystem::copy_options::recursive);
  // An index larger than qcheck reads (sparse: no disk).
  std::ofstream(dir + "/m/model.safetensors.index.json") << "{}";
  std::filesystem::resize_file(dir + "/m/model.safetensors.index.json", 300ull << 20);
  const std::string cd = "cd '" + dir + "' && ";
  const CliRun first =
    qcheck::test::run_command(cd + QCHECK_BINARY + " lint m --write-baseline base.json 2>&1");
  ASSERT_EQ(first.exit_code, 0) << first.out;
  const CliRun plain = qcheck::test::run_command(cd + QCHECK_BINARY + " lint m 2>&1");
  EXPECT_NE(plain.out.find("error: model.safetensors.index.json: file is 314572800 bytes"),
            std::string::npos)
    << plain.out;
  const CliRun again =
    qcheck::test::run_command(cd + QCHECK_BINARY + " lint ./m/ --baseline base.json 2>&1");
  EXPECT_EQ(again.exit_code, 0) << again.out;
  std::filesystem::remove_all(dir);
}

// explain escapes control characters in names from the checkpoint (tensor names, list entries)
// as lint and inspect do: a crafted name can neither start a GitHub workflow command ("::error")
// on a line of its own nor send terminal escapes.
TEST(Cli, ExplainEscapesControlCharactersInNames)
{
  const std::string dir = scratch_dir();
  std::ofstream(dir + "/config.json")
    << R"({"architectures": ["LlamaForCausalLM"], "model_type": "llama", "num_hidden_layers": 1,
  "quantization_config": {"quant_method": "fp8", "activation_scheme": "dynamic",
    "ignored_layers": ["x\n::error file=y::entry\u001b[2J"]}})";
  const std::string bad = R"(model.layers.0.mlp.up\u000a::error file=z::tensor\u001b[31m)";
  const std::string header =
    R"({"__metadata__": {"format": "pt"}, "model.layers.0.mlp.down_proj.weight": )"
    R"({"dtype": "F8_E4M3", "shape": [2, 2], "data_offsets": [0, 4]}, ")" +
    bad + R"(.weight": {"dtype": "BF16", "shape": [2, 2], "data_offsets": [4, 12]}})";
  std::string bytes(8, '\0');
  for (size_t i = 0; i < 8; ++i) {
    bytes[i] = static_cast<char>((header.size() >> (8 * i)) & 0xff);
  }
  std::ofstream(dir + "/model.safetensors", std::ios::binary)
    << bytes << header << std::string(12, '\0');
  const auto safe = [](const std::string& out) {
    return out.find('\x1b') == std::string::npos && out.find("\n::") == std::string::npos &&
           !out.starts_with("::");
  };
  const CliRun entries = run("explain " + dir + " --entries");
  EXPECT_EQ(entries.exit_code, 0) << entries.out;
  EXPECT_TRUE(safe(entries.out)) << entries.out;
  EXPECT_NE(entries.out.find("  'x\\x0a::error file=y::entry\\x1b[2J'\n"), std::string::npos)
    << entries.out;
  const CliRun module = run("explain " + dir + " 'model.layers.0.mlp.up*'");
  EXPECT_EQ(module.exit_code, 0) << module.out;
  EXPECT_TRUE(safe(module.out)) << module.out;
  EXPECT_TRUE(module.out.starts_with("model.layers.0.mlp.up\\x0a::error file=z::tensor\\x1b[31m\n"))
    << module.out;
  EXPECT_NE(module.out.find("    model.layers.0.mlp.up\\x0a::error file=z::tensor\\x1b[31m.weight "
                            "BF16 [2, 2]  model.safetensors\n"),
            std::string::npos)
    << module.out;
  // The error naming the closest module, on stderr.
  const CliRun missing = run("explain " + dir + " model.layers.0.mlp.upx", true);
  EXPECT_EQ(missing.exit_code, 2) << missing.out;
  EXPECT_TRUE(safe(missing.out)) << missing.out;
  EXPECT_NE(missing.out.find("closest: 'model.layers.0.mlp.up\\x0a::error"), std::string::npos)
    << missing.out;
  std::filesystem::remove_all(dir);
}

// A single .safetensors file is linted in its folder: every finding names a real file (the shard,
// or the config.json beside it), in every format, not "FOLDER/x.safetensors/x.safetensors".
TEST(Cli, SingleShardFindingsNameRealFiles)
{
  for (const std::string shard : {fixture("malformed/short.safetensors"),
                                  fixture("glm-nvfp4-nextn/model-00003-of-00003.safetensors")}) {
    std::set<std::string> paths;
    const CliRun json = run("lint --format json " + shard);
    EXPECT_EQ(json.exit_code, 1) << shard << "\n" << json.out;
    const auto j = nlohmann::json::parse(json.out);
    ASSERT_FALSE(j["findings"].empty()) << shard;
    for (const auto& f : j["findings"]) {
      EXPECT_EQ(f["folder"], shard.substr(0, shard.rfind('/')));
      paths.insert(f["folder"].get<std::string>() + "/" + f["file"].get<std::string>());
    }
    const auto sarif = nlohmann::json::parse(run("lint --format sarif " + shard).out);
    for (const auto& result : sarif["runs"][0]["results"]) {
      // An absolute path is a file:// URI (the fixtures' path needs no percent-encoding).
      const std::string uri = result["locations"][0]["physicalLocation"]["artifactLocation"]["uri"];
      EXPECT_TRUE(uri.starts_with("file:///")) << uri;
      paths.insert(uri.substr(std::string_view("file://").size()));
    }
    std::istringstream github(run("lint --format github " + shard).out);
    std::istringstream text(run("lint " + shard).out);
    size_t lines = 0;
    for (std::string line; std::getline(github, line);) {
      const size_t begin = line.find("file=") + 5;
      paths.insert(line.substr(begin, line.find_first_of(",:", begin) - begin));
      ++lines;
    }
    for (std::string line; std::getline(text, line);) {
      if (line.find(": error: ") != std::string::npos ||
          line.find(": warning: ") != std::string::npos) {
        paths.insert(line.substr(0, line.find_first_of(":")));
        ++lines;
      }
    }
    EXPECT_EQ(lines, 2 * j["findings"].size()) << shard;
    for (const auto& path : paths) {
      EXPECT_TRUE(std::filesystem::is_regular_file(path)) << shard << ": " << path;
    }
  }
}

// A folder --recursive does not enter for depth is named on stderr; the exit code is unchanged.
TEST(Cli, RecursiveNamesFoldersTooDeepOnStderr)
{
  const std::filesystem::path root =
    std::filesystem::temp_directory_path() / ("qcheck-deep-" + std::to_string(::getpid()));
  std::filesystem::remove_all(root);
  std::filesystem::path deep = root;
  for (int level = 0; level < 33; ++level) {
    deep /= level == 32 ? "d\n::error::x" : "d"; // a name that would forge a line, escaped
  }
  std::filesystem::create_directories(deep);
  std::filesystem::copy(fixture("plain-bf16"), root / "top");
  const CliRun r = qcheck::test::run_command(std::string(QCHECK_BINARY) + " lint --recursive " +
                                             root.string() + " 2>&1 >/dev/null");
  EXPECT_EQ(r.exit_code, 0) << r.out;
  std::string shown = deep.string();
  shown.replace(shown.find('\n'), 1, "\\x0a");
  EXPECT_EQ(r.out, "qcheck: warning: " + shown + ": not searched: more than 32 levels below " +
                     root.string() + " (--recursive's limit)\n");
  std::filesystem::remove_all(root);
}

// explain says on stderr, as lint words it, what it could not read (an invalid config, a shard
// header it cannot read), and exits 1: its explanation lacks that part of the folder.
TEST(Cli, ExplainReportsWhatItCouldNotRead)
{
  const std::string dir = scratch_dir();
  const std::string header =
    R"({"model.layers.0.mlp.down_proj.weight": {"dtype": "BF16", "shape": [2, 2], )"
    R"("data_offsets": [0, 8]}, "__metadata__": {"format": "pt"}})";
  std::string length(8, '\0');
  for (size_t i = 0; i < 8; ++i) {
    length[i] = static_cast<char>((header.size() >> (8 * i)) & 0xff);
  }
  const std::string shard = length + header + std::string(8, '\0');
  struct Case
  {
    std::string name, config, shard, args, stderr_text;
    int exit_code;
  };
  const std::string down = "model.layers.0.mlp.down_proj";
  const std::vector<Case> cases{
    {"cbad", "{\"a\": ", shard, "--entries",
     "qcheck: error: {}/config.json: invalid JSON at line 1, column 7: unexpected end of text, "
     "expected a value [QC009 invalid-config]\n",
     1},
    {"carr", "[1]", shard, down,
     "qcheck: error: {}/config.json: is not a JSON object [QC009 invalid-config]\n", 1},
    {"h0", R"({"model_type": "llama"})", std::string(8, '\0'), "--entries",
     "qcheck: error: {}/model.safetensors: header length 0 is below the minimum of 2 bytes "
     "[QC001 invalid-shard-header]\n",
     1},
    // The module cannot be found when its shard is unreadable: still exit 1, that said first.
    {"h0", R"({"model_type": "llama"})", std::string(8, '\0'), down,
     "qcheck: error: {}/model.safetensors: header length 0 is below the minimum of 2 bytes "
     "[QC001 invalid-shard-header]\nqcheck: error: no module '" +
       down + "' in {}\n",
     1},
    {"ok", R"({"model_type": "llama"})", shard, down, "", 0},
  };
  for (const Case& c : cases) {
    const std::string folder = dir + "/" + c.name;
    std::filesystem::create_directories(folder);
    std::ofstream(folder + "/config.json") << c.config;
    std::ofstream(folder + "/model.safetensors", std::ios::binary) << c.shard;
    const CliRun r = qcheck::test::run_command(std::string(QCHECK_BINARY) + " explain " + folder +
                                               " " + c.args + " 2>&1 >/dev/null");
    std::string expected = c.stderr_text;
    for (size_t at; (at = expected.find("{}")) != std::string::npos;) {
      expected.replace(at, 2, folder);
    }
    EXPECT_EQ(r.out, expected) << c.name << " " << c.args;
    EXPECT_EQ(r.exit_code, c.exit_code) << c.name << " " << c.args;
    if (c.args == down && c.name != "h0") { // the explanation is still printed
      EXPECT_FALSE(run("explain " + folder + " " + c.args).out.empty()) << c.name;
    }
  }
  std::filesystem::remove_all(dir);
}
