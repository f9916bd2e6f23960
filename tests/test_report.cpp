// Output formats: SARIF 2.1.0 structure, GitHub workflow-command escaping, positions.
#include <array>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <gtest/gtest.h>
#include <nlohmann/json.hpp>
#include <random>
#include <set>
#include <sys/wait.h>

#include "builder.hpp"
#include "cli_runner.hpp"
#include "qcheck/lint.hpp"
#include "qcheck/report.hpp"

namespace fs = std::filesystem;
using namespace qcheck;
using Json = nlohmann::json;

namespace {

// A QC112 warning in config.json at line:column (the shape the renderers are tested on).
Finding
warning_at(std::string message, uint32_t line, uint32_t column)
{
  Finding f;
  f.rule = RuleId::unused_entry;
  f.severity = Severity::warning;
  f.file = "config.json";
  f.message = std::move(message);
  f.line = line;
  f.column = column;
  return f;
}

std::string
run_stdout(const std::string& args, const std::string& cwd = "")
{
  return qcheck::test::run_qcheck(args, false, cwd).out;
}

std::string
fixture(const std::string& name)
{
  return std::string(QCHECK_FIXTURES) + "/" + name;
}

void
expect_keys_within(const Json& object, const std::set<std::string>& allowed,
                   const std::string& what)
{
  ASSERT_TRUE(object.is_object()) << what;
  for (const auto& [key, _] : object.items()) {
    EXPECT_TRUE(allowed.contains(key)) << what << " has key '" << key << "' outside the schema";
  }
}

// Line and column (1-based) of the first occurrence of `needle` in `text`, plus `offset` bytes.
std::pair<uint32_t, uint32_t>
find_position(const std::string& text, const std::string& needle, size_t offset)
{
  const size_t at = text.find(needle) + offset;
  uint32_t line = 1, column = 1;
  for (size_t i = 0; i < at; ++i) {
    if (text[i] == '\n') {
      ++line;
      column = 1;
    } else {
      ++column;
    }
  }
  return {line, column};
}

} // namespace

TEST(Report, GithubEscaping)
{
  EXPECT_EQ(github_escape_data("100% done\r\nnext: a,b"), "100%25 done%0D%0Anext: a,b");
  EXPECT_EQ(github_escape_property("model.layers.0,a:b%\n"), "model.layers.0%2Ca%3Ab%25%0A");
}

TEST(Report, GithubCommandEscapesNamesWithCommasColonsPercentAndNewlines)
{
  Report report;
  report.root = "models/x,y:z%";
  report.findings.push_back(warning_at("entry 'a,b:c%' matches nothing\nsecond line", 3, 5));
  EXPECT_EQ(render_github({report}),
            "::warning file=models/x%2Cy%3Az%25/config.json,line=3,col=5,title=QC112 "
            "unused-entry::entry 'a,b:c%25' matches nothing%0Asecond line\n");
}

// A span on one line ends at its column; over several lines, at its last line (and column when
// known), in SARIF and in GitHub annotations alike; a span's last value's pointer goes with it.
TEST(Report, SpansEndWhereTheirLastValueEnds)
{
  struct Case
  {
    uint32_t end_line, end_column;
    std::string region_end, github_end;
  };
  const std::vector<Case> cases{
    {0, 0, "", ""},
    {7, 9, R"(,"endLine":7,"endColumn":9)", ",endColumn=9"},
    {9, 40, R"(,"endLine":9,"endColumn":40)", ",endLine=9"},
    {9, 0, R"(,"endLine":9)", ",endLine=9"},
  };
  for (const Case& c : cases) {
    Report report;
    report.root = "m";
    Finding f = warning_at("dead", 7, 5);
    f.end_line = c.end_line;
    f.end_column = c.end_column;
    f.pointer = "/ignore/2";
    f.end_pointer = c.end_line > f.line ? "/ignore/4" : "";
    report.findings.push_back(f);
    const auto sarif = nlohmann::ordered_json::parse(render_sarif({report}));
    EXPECT_EQ(sarif["runs"][0]["results"][0]["locations"][0]["physicalLocation"]["region"].dump(),
              R"({"startLine":7,"startColumn":5)" + c.region_end + "}")
      << c.end_line;
    EXPECT_EQ(render_github({report}), "::warning file=m/config.json,line=7,col=5" + c.github_end +
                                         ",title=QC112 unused-entry::dead\n")
      << c.end_line;
    const auto json = nlohmann::json::parse(render_json({report}));
    EXPECT_EQ(json["findings"][0]["end_line"], c.end_line);
    EXPECT_EQ(json["findings"][0]["end_column"], c.end_column);
    EXPECT_EQ(json["findings"][0]["end_json_pointer"], f.end_pointer);
    const auto& properties = sarif["runs"][0]["results"][0]["properties"];
    EXPECT_EQ(properties.value("end_json_pointer", ""), f.end_pointer);
    EXPECT_EQ(properties.contains("end_json_pointer"), !f.end_pointer.empty());
  }
}

TEST(Report, FingerprintIgnoresPositionAndCountsButNotModules)
{
  Finding a;
  a.rule = RuleId::undeclared_unquantized;
  a.file = "config.json";
  a.pointer = "/quantization_config/ignore";
  a.modules = {"mtp.fc"};
  a.message = "1 module";
  Finding b = a;
  b.line = 40;
  b.message = "1 module, other wording";
  EXPECT_EQ(fingerprint(a), fingerprint(b));
  b.modules.push_back("mtp.layers.0.mlp.down_proj");
  EXPECT_NE(fingerprint(a), fingerprint(b));
}

TEST(Report, SarifZeroResultsIsAValidLog)
{
  const Json log = Json::parse(run_stdout("lint --format sarif " + fixture("plain-bf16")));
  expect_keys_within(log, {"version", "$schema", "runs"}, "log");
  EXPECT_EQ(log["version"], "2.1.0");
  ASSERT_EQ(log["runs"].size(), 1u);
  EXPECT_EQ(log["runs"][0]["tool"]["driver"]["name"], "qcheck");
  EXPECT_TRUE(log["runs"][0]["results"].is_array());
  EXPECT_TRUE(log["runs"][0]["results"].empty());
}

TEST(Report, SarifStructureFieldByField)
{
  const Json log = Json::parse(run_stdout("lint --format sarif " + fixture("qwen-gptq-mtp")));
  const Json& run = log["runs"][0];
  expect_keys_within(run, {"tool", "columnKind", "results"}, "run");
  EXPECT_EQ(run["columnKind"], "utf16CodeUnits"); // SHALL be present in a run with results
  const Json& driver = run["tool"]["driver"];
  expect_keys_within(driver, {"name", "version", "rules"}, "driver");
  std::set<std::string> ids;
  for (const Json& r : driver["rules"]) {
    expect_keys_within(r,
                       {"id", "name", "shortDescription", "fullDescription", "help",
                        "defaultConfiguration", "properties"},
                       "rule");
    EXPECT_TRUE(r["shortDescription"]["text"].is_string());
    EXPECT_TRUE(r["fullDescription"]["text"].is_string());
    EXPECT_TRUE(r["help"]["text"].is_string());
    const std::string level = r["defaultConfiguration"]["level"];
    EXPECT_TRUE(level == "error" || level == "warning" || level == "note") << level;
    ids.insert(r["id"]);
  }
  EXPECT_EQ(ids, (std::set<std::string>{"QC101", "QC108", "QC110", "QC112", "QC116"}));
  ASSERT_EQ(run["results"].size(), 5u);
  for (const Json& result : run["results"]) {
    expect_keys_within(
      result,
      {"ruleId", "ruleIndex", "level", "message", "locations", "partialFingerprints", "properties"},
      "result");
    EXPECT_EQ(driver["rules"][result["ruleIndex"].get<size_t>()]["id"], result["ruleId"]);
    EXPECT_TRUE(result["message"]["text"].is_string());
    const Json& location = result["locations"][0]["physicalLocation"];
    expect_keys_within(location, {"artifactLocation", "region"}, "physicalLocation");
    // An absolute folder: a file:// URI.
    const std::string uri = location["artifactLocation"]["uri"];
    EXPECT_TRUE(uri.starts_with("file:///")) << uri;
    EXPECT_TRUE(uri.starts_with(uri_reference(fixture("qwen-gptq-mtp")) + "/")) << uri;
    if (location.contains("region")) {
      const Json& region = location["region"];
      expect_keys_within(region, {"startLine", "startColumn", "endLine", "endColumn"}, "region");
      EXPECT_GE(region["startLine"].get<int>(), 1);
      EXPECT_GE(region["startColumn"].get<int>(), 1);
      if (region.contains("endLine")) {
        EXPECT_GE(region["endLine"].get<int>(), region["startLine"].get<int>());
      }
      if (region.contains("endColumn") && region["endLine"] == region["startLine"]) {
        EXPECT_GT(region["endColumn"].get<int>(), region["startColumn"].get<int>());
      }
    }
    EXPECT_EQ(result["partialFingerprints"]["qcheck/v1"].get<std::string>().size(), 16u);
  }
  // Stable across runs.
  const Json again = Json::parse(run_stdout("lint --format sarif " + fixture("qwen-gptq-mtp")));
  EXPECT_EQ(again["runs"][0]["results"], run["results"]);
}

TEST(Report, SarifUrisAreRelativeToTheFolderAsGiven)
{
  // Run from the fixtures' parent so the folder is given relatively, as in a CI checkout.
  const std::string parent = fs::path(QCHECK_FIXTURES).parent_path().string();
  for (const std::string folder : {"fixtures/glm-nvfp4-nextn", "./fixtures/glm-nvfp4-nextn/"}) {
    const Json log = Json::parse(run_stdout("lint --format sarif " + folder, parent));
    const Json& location = log["runs"][0]["results"][0]["locations"][0]["physicalLocation"];
    EXPECT_EQ(location["artifactLocation"]["uri"], "fixtures/glm-nvfp4-nextn/config.json");
    EXPECT_EQ(location["region"]["startLine"], 34);
    EXPECT_EQ(location["region"]["startColumn"], 15);
  }
}

TEST(Report, UriReferencesArePercentEncodedSegments)
{
  const std::vector<std::pair<std::string, std::string>> cases{
    {"m/config.json", "m/config.json"},
    {"a-b_c.d~e/config.json", "a-b_c.d~e/config.json"},
    {"we,ird:%25 \xc3\xbc/config.json", "./we%2Cird%3A%2525%20%C3%BC/config.json"},
    {"ab:c d/config.json", "./ab%3Ac%20d/config.json"},
    {"m/ab:c", "m/ab%3Ac"}, // only a first segment can read as a scheme
    {"nl\nname/config.json", "nl%0Aname/config.json"},
    {"bad\xffname/x?#[]@!$&'()*+;=", "bad%FFname/x%3F%23%5B%5D%40%21%24%26%27%28%29%2A%2B%3B%3D"},
    {"../m//config.json", "../m/config.json"},
    {"/tmp/m/config.json", "file:///tmp/m/config.json"},
    {"//tmp/a b:c", "file:///tmp/a%20b%3Ac"},
    {"/", "file:///"},
    {".", "."},
    {"", "."},
  };
  for (const auto& [path, uri] : cases) {
    EXPECT_EQ(uri_reference(path), uri) << path;
  }
}

// Folder names that are not URI characters, run from their parent as CI runs.
TEST(Report, SarifUrisOfOddFolderNamesAreValidUriReferences)
{
  const fs::path dir = fs::temp_directory_path() / ("qcheck-uri-" + std::to_string(::getpid()));
  fs::remove_all(dir);
  const std::vector<std::pair<std::string, std::string>> cases{
    {"we,ird:%25 \xc3\xbc", "./we%2Cird%3A%2525%20%C3%BC/config.json"},
    {"ab:c d", "./ab%3Ac%20d/config.json"},
    {"nl\nname", "nl%0Aname/config.json"},
  };
  std::string args = "lint --format sarif";
  for (const auto& [folder, _] : cases) {
    fs::create_directories(dir / folder);
    fs::copy(fixture("glm-nvfp4-nextn"), dir / folder, fs::copy_options::recursive);
    args += " '" + folder + "'";
  }
  const Json log = Json::parse(run_stdout(args, dir.string()));
  std::set<std::string> uris;
  for (const Json& result : log["runs"][0]["results"]) {
    uris.insert(result["locations"][0]["physicalLocation"]["artifactLocation"]["uri"]);
  }
  EXPECT_EQ(uris, (std::set<std::string>{cases[0].second, cases[1].second, cases[2].second}));
  fs::remove_all(dir);
}

TEST(Report, Utf16LengthCountsCodeUnits)
{
  EXPECT_EQ(utf16_length(""), 0u);
  EXPECT_EQ(utf16_length("abc"), 3u);
  EXPECT_EQ(utf16_length("\xc3\xa9"), 1u);         // é
  EXPECT_EQ(utf16_length("\xe2\x82\xac"), 1u);     // €
  EXPECT_EQ(utf16_length("\xf0\x9f\x98\x80"), 2u); // 😀: a surrogate pair
  EXPECT_EQ(utf16_length("\xc3\xa9\xc3\xa9\xc3\xa9\xf0\x9f\x98\x80"), 5u);
  EXPECT_EQ(utf16_length("\xff"), 1u); // not UTF-8: one replacement character per byte
  EXPECT_EQ(utf16_length("\xf0\x9f"
                         "a"),
            3u); // a truncated sequence
}

// SARIF columns count UTF-16 code units (the run says so); the other formats keep bytes.
TEST(Report, SarifColumnsCountUtf16CodeUnits)
{
  Report report;
  report.root = "m";
  Finding f = warning_at("dead", 1, 14);
  f.end_line = 1;
  f.end_column = 20;
  f.column_utf16 = 9;
  f.end_column_utf16 = 14;
  report.findings.push_back(f);
  const auto sarif = nlohmann::ordered_json::parse(render_sarif({report}));
  EXPECT_EQ(sarif["runs"][0]["columnKind"], "utf16CodeUnits");
  EXPECT_EQ(sarif["runs"][0]["results"][0]["locations"][0]["physicalLocation"]["region"].dump(),
            R"({"startLine":1,"startColumn":9,"endLine":1,"endColumn":14})");
  EXPECT_EQ(
    render_github({report}),
    "::warning file=m/config.json,line=1,col=14,endColumn=20,title=QC112 unused-entry::dead\n");

  // Through the CLI: "ééé😀" (10 bytes, 5 UTF-16 units) before the list on its line.
  const fs::path dir = fs::temp_directory_path() / ("qcheck-utf16-" + std::to_string(::getpid()));
  fs::remove_all(dir);
  fs::create_directories(dir);
  const std::string config =
    "{\"model_type\":\"llama\",\"note\":\"\xc3\xa9\xc3\xa9\xc3\xa9\xf0\x9f\x98\x80\","
    "\"quantization_config\":{\"quant_method\":\"fp8\",\"activation_scheme\":\"dynamic\","
    "\"ignored_layers\":[\"zz.unused\"]}}";
  std::ofstream(dir / "config.json") << config;
  std::ofstream(dir / "model.safetensors", std::ios::binary)
    << qcheck::test::safetensors({{"model.layers.0.mlp.down_proj.weight", "BF16", {4, 4}}});
  const Json json = Json::parse(run_stdout("lint --format json " + dir.string()));
  const Json log = Json::parse(run_stdout("lint --format sarif " + dir.string()));
  ASSERT_EQ(json["findings"].size(), 2u);
  ASSERT_EQ(log["runs"][0]["results"].size(), 2u);
  const size_t list = config.find("[\"zz.unused\"]");
  for (size_t i = 0; i < 2; ++i) {
    const Json& finding = json["findings"][i];
    const Json& region = log["runs"][0]["results"][i]["locations"][0]["physicalLocation"]["region"];
    // The list (QC101) or its entry (QC112), in bytes in JSON.
    const size_t begin = finding["rule"] == "QC101" ? list : list + 1;
    const size_t end = finding["rule"] == "QC101" ? config.find(']', list) + 1 : list + 12;
    EXPECT_EQ(finding["column"], begin + 1) << finding["rule"];
    EXPECT_EQ(finding["end_column"], end + 1) << finding["rule"];
    EXPECT_EQ(region["startColumn"], begin + 1 - 5) << finding["rule"];
    EXPECT_EQ(region["endColumn"], end + 1 - 5) << finding["rule"];
  }
  fs::remove_all(dir);
}

TEST(Report, PositionsPointAtTheListInTwoAndFourSpaceConfigs)
{
  const fs::path dir = fs::temp_directory_path() / ("qcheck-pos-" + std::to_string(::getpid()));
  fs::remove_all(dir);
  fs::copy(fixture("glm-nvfp4-nextn"), dir, fs::copy_options::recursive);
  for (int indent : {2, 4}) {
    for (const std::string file : {"config.json", "hf_quant_config.json"}) {
      std::ifstream in(fixture("glm-nvfp4-nextn") + "/" + file);
      const Json j = Json::parse(in);
      std::ofstream(dir / file) << j.dump(indent) << "\n";
    }
    const std::string text = [&] {
      std::ifstream in(dir / "config.json");
      return std::string(std::istreambuf_iterator<char>(in), {});
    }();
    const auto [line, column] = find_position(text, "\"ignore\": [", 10);
    const Json out = Json::parse(run_stdout("lint --format json " + dir.string()));
    ASSERT_EQ(out["findings"].size(), 1u);
    EXPECT_EQ(out["findings"][0]["json_pointer"], "/quantization_config/ignore");
    EXPECT_EQ(out["findings"][0]["line"], line) << "indent " << indent;
    EXPECT_EQ(out["findings"][0]["column"], column) << "indent " << indent;
    const std::string gh = run_stdout("lint --format github " + dir.string());
    EXPECT_NE(gh.find(",line=" + std::to_string(line) + ",col=" + std::to_string(column) + ","),
              std::string::npos)
      << gh;
  }
  fs::remove_all(dir);
}

TEST(Report, OutputFileOption)
{
  const fs::path out =
    fs::temp_directory_path() / ("qcheck-out-" + std::to_string(::getpid()) + ".sarif");
  EXPECT_EQ(run_stdout("lint --format sarif -o " + out.string() + " " + fixture("plain-bf16")), "");
  std::ifstream in(out);
  EXPECT_EQ(Json::parse(in)["version"], "2.1.0");
  fs::remove(out);
}

TEST(Report, ControlCharactersCannotForgeLinesOrReachTheTerminal)
{
  Report report;
  report.root = "m";
  Finding f;
  f.rule = RuleId::shard_header;
  f.severity = Severity::error;
  f.file = "x.safetensors";
  f.message = "tensor 'a\nm/config.json:1:1: error: fake\x1b[2J': unknown dtype 'FP4'";
  report.findings.push_back(f);
  const std::string text = render_text(report);
  EXPECT_EQ(
    text.substr(0, text.find('\n') + 1),
    "m/x.safetensors: error: tensor 'a\\x0am/config.json:1:1: error: fake\\x1b[2J': unknown "
    "dtype 'FP4' [QC001 invalid-shard-header]\n");
  EXPECT_EQ(github_escape_data("a\x1b[2J"), "a%1B[2J");
  // The folder's name, in the finding lines and the summary line alike.
  report.root = "tree/nl\nx\x1b[2J";
  f.message = "bad";
  report.findings = {f};
  EXPECT_EQ(render_text(report),
            "tree/nl\\x0ax\\x1b[2J/x.safetensors: error: bad [QC001 invalid-shard-header]\n"
            "tree/nl\\x0ax\\x1b[2J: 1 error, 0 warnings, 0 info\n");
}

namespace {

// What render_json printed when it built one nlohmann value: the reference for write_json.
std::string
reference_json(const std::vector<Report>& reports)
{
  nlohmann::ordered_json findings = nlohmann::ordered_json::array();
  Summary total;
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
      nlohmann::ordered_json one = {{"rule", r.code},
                                    {"name", r.name},
                                    {"severity", to_string(f.severity)},
                                    {"folder", report.root},
                                    {"file", f.file},
                                    {"message", f.message},
                                    {"details", f.details},
                                    {"modules", f.modules},
                                    {"files", f.files},
                                    {"engines", engines},
                                    {"suggested_entries", f.suggested_entries}};
      if (f.entries_first) {
        one["entries_first"] = true;
      }
      one.update(nlohmann::ordered_json{{"fix", f.fix},
                                        {"json_pointer", f.pointer},
                                        {"end_json_pointer", f.end_pointer},
                                        {"line", f.line},
                                        {"column", f.column},
                                        {"end_line", f.end_line},
                                        {"end_column", f.end_column},
                                        {"fingerprint", fingerprint(f)},
                                        {"fixable", r.fixable}});
      findings.push_back(std::move(one));
    }
  }
  nlohmann::ordered_json root = {
    {"findings", findings},
    {"summary", {{"errors", total.errors}, {"warnings", total.warnings}, {"infos", total.infos}}}};
  return root.dump(2) + "\n";
}

// The report of every fixture folder (those with a config.json), linted with default options.
std::vector<Report>
fixture_reports()
{
  std::vector<Report> out;
  DiskFileSystem disk;
  for (const auto& entry :
       std::filesystem::recursive_directory_iterator(std::string(QCHECK_FIXTURES))) {
    if (entry.is_directory() && std::filesystem::exists(entry.path() / "config.json")) {
      auto run = lint_path(disk, entry.path().string(), {});
      if (!run) {
        ADD_FAILURE() << entry.path() << ": " << run.error();
        continue;
      }
      out.push_back(run->report);
    }
  }
  return out;
}

} // namespace

// write_json streams the layout nlohmann's dump(2) printed: every fixture's report (many rules,
// positions, engines, empty and full lists), all of them at once, none, and escapes.
TEST(Report, JsonIsWhatTheDomDumpPrinted)
{
  const std::vector<Report> all = fixture_reports();
  for (const Report& report : all) {
    EXPECT_EQ(render_json({report}), reference_json({report})) << report.root;
  }
  ASSERT_GT(all.size(), 8u);
  EXPECT_EQ(render_json(all), reference_json(all));
  EXPECT_EQ(render_json({}), reference_json({}));
  Report odd;
  odd.root = "dir\\with \"quotes\"";
  Finding f;
  f.rule = RuleId::unused_entry;
  f.severity = Severity::warning;
  f.file = "config.json";
  f.message = "tab\there, newline\nthere, \x01 control, caf\xc3\xa9";
  f.details = {"one", ""};
  f.engines = {Engine::vllm, Engine::trtllm};
  odd.findings.push_back(f);
  f.suggested_entries = {"-:a$"};
  f.entries_first = true;
  odd.findings.push_back(f);
  EXPECT_EQ(render_json({odd}), reference_json({odd}));
  EXPECT_EQ(nlohmann::json::parse(render_json({odd}))["findings"][1]["entries_first"], true);
  size_t pieces = 0;
  std::string streamed;
  write_json(all, [&](std::string_view piece) {
    ++pieces;
    streamed += piece;
  });
  EXPECT_EQ(streamed, reference_json(all));
}

// write_sarif lays the log out exactly as nlohmann's dump(2) does (parsing it and dumping it
// again gives the same bytes; the fields themselves are checked above), for every fixture's
// report, all of them, none, and a finding with a region and escapes; in pieces.
TEST(Report, SarifIsLaidOutAsTheDomDumpWas)
{
  const std::vector<Report> all = fixture_reports();
  Report odd;
  odd.root = "./dir/";
  Finding f;
  f.rule = RuleId::unused_entry;
  f.severity = Severity::warning;
  f.file = "config.json";
  f.message = "quote \" tab\t caf\xc3\xa9";
  f.fix = "drop it";
  f.pointer = "/quantization_config/ignore/3";
  f.line = 7;
  f.column = 5;
  f.end_column = 9;
  f.suggested_entries = {"x"};
  odd.findings.push_back(f);
  f.engines = {Engine::vllm, Engine::trtllm};
  f.modules = {"a.b", "c"};
  f.line = 0;
  f.pointer.clear();
  f.entries_first = true;
  odd.findings.push_back(f);
  const auto results = nlohmann::json::parse(render_sarif({odd}))["runs"][0]["results"];
  EXPECT_FALSE(results[0]["properties"].contains("entries_first"));
  EXPECT_EQ(results[1]["properties"]["entries_first"], true);
  std::vector<std::vector<Report>> cases{{}, all, {odd}};
  for (const Report& r : all) {
    cases.push_back({r});
  }
  for (const auto& reports : cases) {
    const std::string sarif = render_sarif(reports);
    EXPECT_EQ(nlohmann::ordered_json::parse(sarif).dump(2) + "\n", sarif);
    std::string streamed;
    write_sarif(reports, [&](std::string_view piece) { streamed += piece; });
    EXPECT_EQ(streamed, sarif);
  }
}

TEST(Report, OrderBySeverityIsAStableSort)
{
  std::mt19937 random(7);
  for (int round = 0; round < 200; ++round) {
    std::vector<Finding> findings(random() % 40);
    for (size_t i = 0; i < findings.size(); ++i) {
      findings[i].severity = static_cast<Severity>(random() % 3);
      findings[i].message = std::to_string(i);
      findings[i].modules = {std::string(i, 'm')}; // a member that must move along
    }
    std::vector<Finding> expected = findings;
    std::stable_sort(expected.begin(), expected.end(),
                     [](const Finding& a, const Finding& b) { return a.severity > b.severity; });
    order_by_severity(findings);
    ASSERT_EQ(findings.size(), expected.size());
    for (size_t i = 0; i < findings.size(); ++i) {
      EXPECT_EQ(findings[i].severity, expected[i].severity);
      EXPECT_EQ(findings[i].message, expected[i].message);
      EXPECT_EQ(findings[i].modules, expected[i].modules);
    }
  }
}

// Text comes in pieces for a long report; colour wraps the severity and "fix:" only.
TEST(Report, TextIsWrittenInPiecesAndPaintsOnlyWhenAsked)
{
  Report report;
  report.root = "m";
  for (int i = 0; i < 3000; ++i) {
    Finding f;
    f.rule = RuleId::unused_entry;
    f.severity = i % 2 ? Severity::warning : Severity::error;
    f.file = "config.json";
    f.message = "entry " + std::to_string(i) + " matches nothing";
    f.line = static_cast<uint32_t>(i + 1);
    f.column = 3;
    f.details = {"detail"};
    f.fix = "drop it";
    report.findings.push_back(f);
  }
  size_t pieces = 0;
  std::string streamed;
  write_text(report, {}, [&](std::string_view piece) {
    ++pieces;
    streamed += piece;
  });
  EXPECT_GT(pieces, 1u);
  EXPECT_EQ(streamed, render_text(report));
  EXPECT_TRUE(streamed.starts_with("m/config.json:1:3: error: entry 0 matches nothing [QC112 "
                                   "unused-entry]\n    detail\n    fix: drop it\n"))
    << streamed.substr(0, 200);
  EXPECT_TRUE(streamed.ends_with("m: 1500 errors, 1500 warnings, 0 info\n"));
  EXPECT_EQ(streamed.find('\x1b'), std::string::npos);
  const std::string painted = render_text(report, {true});
  EXPECT_TRUE(painted.starts_with("m/config.json:1:3: \x1b[1;31merror\x1b[0m: entry 0 matches "
                                  "nothing [QC112 unused-entry]\n    detail\n    \x1b[1;32mfix:"
                                  "\x1b[0m drop it\n"))
    << painted.substr(0, 200);
}

// A quoted entry is cut after 200 bytes (or the limit given), never inside a UTF-8 sequence.
TEST(Report, ClippedCutsLongTextAtACharacterBoundary)
{
  EXPECT_EQ(clipped("short"), "short");
  EXPECT_EQ(clipped(std::string(200, 'a')), std::string(200, 'a'));
  EXPECT_EQ(clipped(std::string(201, 'a')), std::string(200, 'a') + "...");
  EXPECT_EQ(clipped("abcdef", 3), "abc...");
  EXPECT_EQ(clipped("ab\xc3\xa9xyz", 3), "ab...");         // é would be cut in two: left out whole
  EXPECT_EQ(clipped("ab\xc3\xa9xyz", 4), "ab\xc3\xa9..."); // whole at 4
}
