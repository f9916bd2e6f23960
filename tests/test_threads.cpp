// When the system cannot start a thread (a pids cgroup full, RLIMIT_NPROC reached), qcheck does
// the work on the threads it has and reports the same. A separate binary: it replaces
// pthread_create, which Workers calls, to refuse threads on demand.
#include <algorithm>
#include <atomic>
#include <cerrno>
#include <dlfcn.h>
#include <fmt/format.h>
#include <gtest/gtest.h>
#include <mutex>
#include <pthread.h>
#include <sched.h>
#include <set>
#include <string>
#include <vector>

#include "builder.hpp"
#include "qcheck/engines.hpp"
#include "qcheck/input.hpp"
#include "qcheck/lint.hpp"
#include "qcheck/parallel.hpp"
#include "qcheck/report.hpp"

namespace {

// Threads pthread_create may still start; negative: any number.
std::atomic<int> g_allowed{-1};
std::atomic<int> g_refused{0};
// When set, a thread asked for with attributes (Workers passes them only to place it on a CPU)
// is refused with EPERM, as a sandbox that forbids setting affinity does; one without starts.
std::atomic<bool> g_refuse_placement{false};
std::atomic<int> g_placements_refused{0};
std::atomic<int> g_started{0}; // calls passed on to the real pthread_create

// Sets how many threads may start from now on, and clears the count of refusals.
void
allow_threads(int count)
{
  g_allowed = count;
  g_refused = 0;
}

} // namespace

extern "C" int
pthread_create(pthread_t* thread, const pthread_attr_t* attr, void* (*start)(void*), void* arg)
{
  using Create = int (*)(pthread_t*, const pthread_attr_t*, void* (*)(void*), void*);
  static const auto real = reinterpret_cast<Create>(dlsym(RTLD_NEXT, "pthread_create"));
  if (attr != nullptr && g_refuse_placement) {
    ++g_placements_refused;
    return EPERM;
  }
  int allowed = g_allowed.load();
  while (allowed >= 0) {
    if (allowed == 0) {
      ++g_refused;
      return EAGAIN;
    }
    if (g_allowed.compare_exchange_weak(allowed, allowed - 1)) {
      break;
    }
  }
  ++g_started;
  return real(thread, attr, start, arg);
}

using namespace qcheck;
using test::TensorSpec;

TEST(ThreadStart, RunTasksRunsEveryTaskWhenNoThreadStarts)
{
  allow_threads(0);
  std::vector<std::atomic<int>> runs(1000);
  run_tasks(runs.size(), 4, [&](size_t i) { ++runs[i]; });
  EXPECT_EQ(g_refused.load(), 1); // the first refusal ends the attempts
  allow_threads(-1);
  for (size_t i = 0; i < runs.size(); ++i) {
    ASSERT_EQ(runs[i].load(), 1) << "task " << i;
  }
}

// Where placing a thread on a CPU is refused, the thread starts without a placement: the work
// still spreads over threads instead of falling back to the calling thread alone.
TEST(ThreadStart, ThreadsStartWherePlacementIsRefused)
{
  g_refuse_placement = true;
  g_placements_refused = 0;
  g_started = 0;
  std::vector<std::atomic<int>> runs(100);
  run_tasks(runs.size(), 4, [&](size_t i) { ++runs[i]; });
  g_refuse_placement = false;
  EXPECT_EQ(g_started.load(), 3); // every helper, without a placement
  cpu_set_t mine;
  ASSERT_EQ(sched_getaffinity(0, sizeof mine, &mine), 0);
  if (CPU_COUNT(&mine) > 1) { // with one CPU no placement is asked for
    EXPECT_EQ(g_placements_refused.load(), 3);
  }
  for (size_t i = 0; i < runs.size(); ++i) {
    ASSERT_EQ(runs[i].load(), 1) << "task " << i;
  }
}

TEST(ThreadStart, InSlicesRunsTheSlicesNoThreadStartedFor)
{
  allow_threads(1);
  std::mutex mutex;
  std::vector<std::vector<std::pair<size_t, size_t>>> seen(4);
  in_slices(100, seen.size(), [&](size_t slice, size_t begin, size_t end) {
    const std::lock_guard lock(mutex);
    seen.at(slice).emplace_back(begin, end);
  });
  EXPECT_EQ(g_refused.load(), 1);
  allow_threads(-1);
  const std::vector<std::pair<size_t, size_t>> bounds{{0, 25}, {25, 50}, {50, 75}, {75, 100}};
  for (size_t s = 0; s < seen.size(); ++s) {
    EXPECT_EQ(seen[s], std::vector{bounds[s]}) << "slice " << s;
  }
}

namespace {

// DeepSeek-style ModelOpt NVFP4: 48 layers of 64 experts in four shards with an index, NextN
// layer 48 stored BF16 and not excluded. Large enough that every parallel step splits its work.
MemoryFileSystem
large_checkpoint()
{
  std::vector<std::vector<TensorSpec>> shards(4);
  std::vector<std::pair<std::string, std::string>> map;
  const auto add = [&](size_t layer, const std::string& name, const std::string& dtype,
                       std::vector<uint64_t> shape) {
    const size_t shard = layer * shards.size() / 49;
    shards[shard].push_back({name, dtype, std::move(shape)});
    map.emplace_back(name, fmt::format("model-{:05}-of-00004.safetensors", shard + 1));
  };
  for (size_t layer = 0; layer < 48; ++layer) {
    for (int e = 0; e < 64; ++e) {
      for (const char* p : {"gate_proj", "up_proj", "down_proj"}) {
        const std::string m = fmt::format("model.layers.{}.mlp.experts.{}.{}", layer, e, p);
        add(layer, m + ".weight", "U8", {64, 32});
        add(layer, m + ".weight_scale", "F8_E4M3", {64, 4});
        add(layer, m + ".weight_scale_2", "F32", {});
        add(layer, m + ".input_scale", "F32", {});
      }
    }
  }
  for (const char* m : {"eh_proj", "self_attn.o_proj", "mlp.down_proj", "shared_head.head"}) {
    add(48, fmt::format("model.layers.48.{}.weight", m), "BF16", {64, 64});
  }
  MemoryFileSystem fs;
  for (size_t s = 0; s < shards.size(); ++s) {
    fs.add_file(fmt::format("m/model-{:05}-of-00004.safetensors", s + 1),
                test::safetensors(shards[s]));
  }
  std::string index = R"({"metadata": {"total_size": 0}, "weight_map": {)";
  for (size_t i = 0; i < map.size(); ++i) {
    index += (i ? ", \"" : "\"") + map[i].first + "\": \"" + map[i].second + "\"";
  }
  fs.add_file("m/model.safetensors.index.json", index + "}}\n");
  fs.add_file("m/config.json",
              R"({"architectures": ["DeepseekV3ForCausalLM"], "model_type": "deepseek_v3", )"
              R"("num_hidden_layers": 48, "num_nextn_predict_layers": 1, )"
              R"("quantization_config": {"quant_method": "modelopt", "quant_algo": "NVFP4", )"
              R"("group_size": 16, "ignore": ["lm_head"]}})");
  return fs;
}

std::string
lint_json(const FileSystem& fs, unsigned threads)
{
  LintOptions options;
  options.threads = threads;
  auto run = lint_path(fs, "m", options);
  EXPECT_TRUE(run) << (run ? "" : run.error());
  return run ? render_json({run->report}) : "";
}

} // namespace

TEST(ThreadStart, ACheckpointLintsAlikeWhicheverThreadsStart)
{
  const MemoryFileSystem fs = large_checkpoint();
  const std::string alone = lint_json(fs, 1);
  EXPECT_NE(alone.find("\"QC101\""), std::string::npos) << alone;
  EXPECT_NE(alone.find("model.layers.48.eh_proj"), std::string::npos) << alone;
  EXPECT_EQ(lint_json(fs, 4), alone);
  for (const int allowed : {0, 1, 2}) {
    allow_threads(allowed);
    const std::string refused = lint_json(fs, 4);
    const int refusals = g_refused.load();
    allow_threads(-1);
    EXPECT_GT(refusals, 0) << allowed << " threads allowed";
    EXPECT_EQ(refused, alone) << allowed << " threads allowed";
  }
}

namespace {

// Lints folder "m" of `fs` on `threads` threads: the modules of the findings of `rule`, in
// report order, and the whole report as JSON.
std::pair<std::vector<std::string>, std::string>
lint_on_threads(const MemoryFileSystem& fs, unsigned threads, RuleId rule)
{
  LintOptions options;
  options.threads = threads;
  auto run = lint_path(fs, "m", options);
  EXPECT_TRUE(run) << (run ? "" : run.error());
  std::vector<std::string> modules;
  for (const Finding& f : run ? run->report.findings : std::vector<Finding>{}) {
    if (f.rule == rule) {
      modules.insert(modules.end(), f.modules.begin(), f.modules.end());
    }
  }
  return {modules, run ? render_json({run->report}) : ""};
}

// The modules of `rule`'s findings on one thread, after checking that the whole report is the
// same on `more` threads and when no thread, or one, can start.
std::vector<std::string>
reported_alike(const MemoryFileSystem& fs, unsigned more, RuleId rule)
{
  const auto [modules, alone] = lint_on_threads(fs, 1, rule);
  EXPECT_EQ(lint_on_threads(fs, more, rule).second, alone) << more << " threads";
  for (const int allowed : {0, 1}) {
    allow_threads(allowed);
    const std::string refused = lint_on_threads(fs, 2, rule).second;
    allow_threads(-1);
    EXPECT_EQ(refused, alone) << allowed << " threads allowed";
  }
  return modules;
}

// A Llama config.json declaring ModelOpt NVFP4 with this ignore list (JSON array elements).
std::string
llama_nvfp4_config(size_t layers, const std::string& ignore)
{
  return fmt::format(R"({{"architectures": ["LlamaForCausalLM"], "model_type": "llama", )"
                     R"("num_hidden_layers": {}, "quantization_config": {{"quant_method": )"
                     R"("modelopt", "quant_algo": "NVFP4", "group_size": 16, "ignore": [{}]}}}})",
                     layers, ignore);
}

} // namespace

// Each engine's decisions are split between threads: with 400 layers per engine and decisions
// that differ from layer to layer, every thread count gives the same report, and the
// unquantized layers the list leaves out are exactly the ones reported.
TEST(ThreadStart, ManyLayersAreDecidedAlikeWhicheverThreadsStart)
{
  // Every module stored BF16, every third layer listed: each layer left out is reported.
  std::vector<TensorSpec> tensors;
  std::string ignore = R"("lm_head")";
  std::set<std::string> expected;
  for (size_t layer = 0; layer < 200; ++layer) {
    for (const char* p : {"self_attn.o_proj", "mlp.down_proj"}) {
      const std::string m = fmt::format("model.layers.{}.{}", layer, p);
      tensors.push_back({m + ".weight", "BF16", {64, 64}});
      if (layer % 3 == 0) {
        ignore += fmt::format(R"(, "{}")", m);
      } else {
        expected.insert(m);
      }
    }
  }
  MemoryFileSystem fs;
  fs.add_file("m/model.safetensors", test::safetensors(tensors));
  fs.add_file("m/config.json", llama_nvfp4_config(200, ignore));
  const auto modules = reported_alike(fs, 4, RuleId::undeclared_unquantized);
  EXPECT_EQ(std::set<std::string>(modules.begin(), modules.end()), expected);
}

// The layout checks run in slices beside the engines' layers and lists: over 9,000 modules, the
// same layout findings, in module order, whichever threads start.
TEST(ThreadStart, LayoutChecksBesideTheLayersReportAlikeWhicheverThreadsStart)
{
  std::vector<TensorSpec> tensors{{"lm_head.weight", "BF16", {64, 64}}};
  std::vector<std::string> expected;
  for (int i = 0; i < 9000; ++i) {
    const std::string m =
      fmt::format("model.layers.{:02}.mlp.experts.{:03}.down_proj", i / 200, i % 200);
    const bool bad = i % 997 == 5;
    tensors.push_back({m + ".weight", "U8", {64, 32}});
    tensors.push_back({m + ".weight_scale", "F8_E4M3", {64, bad ? 8u : 4u}});
    tensors.push_back({m + ".weight_scale_2", "F32", {}});
    tensors.push_back({m + ".input_scale", "F32", {}});
    if (bad) {
      expected.push_back(m);
    }
  }
  MemoryFileSystem fs;
  fs.add_file("m/model.safetensors", test::safetensors(tensors));
  fs.add_file("m/config.json", llama_nvfp4_config(45, R"("lm_head")"));
  EXPECT_EQ(reported_alike(fs, 3, RuleId::nvfp4_layout), expected);
}

// The engines' findings and the verdicts on the list's entries are worked out side by side: the
// same report, the entries' findings after the engines', whichever threads start.
TEST(ThreadStart, EngineFindingsBesideTheEntryVerdictsReportAlikeWhicheverThreadsStart)
{
  std::vector<TensorSpec> tensors{{"lm_head.weight", "BF16", {64, 64}}};
  std::string ignore = R"("lm_head")";
  std::set<std::string> undeclared;
  for (int layer = 0; layer < 40; ++layer) {
    const std::string attention = fmt::format("model.layers.{}.self_attn.o_proj", layer);
    tensors.push_back({attention + ".weight", "BF16", {64, 64}});
    if (layer % 4 == 0) {
      ignore += fmt::format(R"(, "{}")", attention);
    } else {
      undeclared.insert(attention);
    }
    for (int expert = 0; expert < 64; ++expert) {
      const std::string m = fmt::format("model.layers.{}.mlp.experts.{}.down_proj", layer, expert);
      tensors.push_back({m + ".weight", "U8", {64, 32}});
      tensors.push_back({m + ".weight_scale", "F8_E4M3", {64, 4}});
      tensors.push_back({m + ".weight_scale_2", "F32", {}});
      tensors.push_back({m + ".input_scale", "F32", {}});
    }
  }
  // Twenty of layer 3's experts (enough to be looked up), and a run of entries naming nothing.
  for (int expert = 0; expert < 20; ++expert) {
    ignore += fmt::format(R"(, "model.layers.3.mlp.experts.{}.down_proj")", expert);
  }
  for (int i = 0; i < 30; ++i) {
    ignore += fmt::format(R"(, "model.layers.{}.self_attn.o_proj")", 100 + i);
  }
  ignore += fmt::format(R"(, "{}")", std::string(k_longest_entry + 1, 'x')); // an error, QC115
  MemoryFileSystem fs;
  fs.add_file("m/model.safetensors", test::safetensors(tensors));
  fs.add_file("m/config.json", llama_nvfp4_config(40, ignore));
  const auto modules = reported_alike(fs, 2, RuleId::undeclared_unquantized);
  EXPECT_EQ(std::set<std::string>(modules.begin(), modules.end()), undeclared);
  EXPECT_EQ(reported_alike(fs, 2, RuleId::partial_expert_exclusion),
            std::vector<std::string>{"model.layers.3.mlp.experts"});
  // The unused run is one finding; the long entry's error follows every error of the engines'.
  LintOptions options;
  options.threads = 2;
  auto run = lint_path(fs, "m", options);
  ASSERT_TRUE(run) << run.error();
  const auto& findings = run->report.findings;
  const auto unused = std::find_if(findings.begin(), findings.end(),
                                   [](const Finding& f) { return f.rule == RuleId::unused_entry; });
  ASSERT_NE(unused, findings.end());
  EXPECT_NE(unused->message.find("30 ignore entries in a row"), std::string::npos)
    << unused->message;
  EXPECT_EQ(std::count_if(findings.begin(), findings.end(),
                          [](const Finding& f) { return f.rule == RuleId::unused_entry; }),
            1);
  const auto too_long = std::find_if(findings.begin(), findings.end(), [](const Finding& f) {
    return f.rule == RuleId::unevaluable_entry;
  });
  ASSERT_NE(too_long, findings.end());
  EXPECT_NE(too_long->message.find("4097 bytes long"), std::string::npos) << too_long->message;
  const auto is_undeclared = [](const Finding& f) {
    return f.rule == RuleId::undeclared_unquantized;
  };
  const auto undeclared_findings = std::count_if(findings.begin(), findings.end(), is_undeclared);
  EXPECT_GT(undeclared_findings, 0);
  EXPECT_EQ(std::count_if(findings.begin(), too_long, is_undeclared), undeclared_findings);
}

// The scans for QC111's examples run beside the engines' layers: over 9,000 modules, each entry
// names the first module (in name order) that it overmatches, whichever threads start.
TEST(ThreadStart, OvermatchExamplesBesideTheLayersReportAlikeWhicheverThreadsStart)
{
  std::vector<TensorSpec> tensors{{"lm_head.weight", "BF16", {64, 64}}};
  for (int i = 0; i < 9000; ++i) {
    const std::string m = fmt::format("model.layers.{}.mlp.experts.{}.down_proj", i / 200, i % 200);
    tensors.push_back({m + ".weight", "U8", {64, 32}});
    tensors.push_back({m + ".weight_scale", "F8_E4M3", {64, 4}});
    tensors.push_back({m + ".weight_scale_2", "F32", {}});
    tensors.push_back({m + ".input_scale", "F32", {}});
  }
  MemoryFileSystem fs;
  fs.add_file("m/model.safetensors", test::safetensors(tensors));
  // "layers.4" first overmatches in layer 40; "experts.19" at expert 190 of layer 0; the glob
  // and "lm_head" overmatch nothing.
  fs.add_file("m/config.json",
              llama_nvfp4_config(
                45, R"("lm_head", "model.layers.4", "experts.19", "model.layers.4*.mlp.gate")"));
  const auto [modules, alone] = lint_on_threads(fs, 1, RuleId::broad_substring_entry);
  EXPECT_EQ(reported_alike(fs, 2, RuleId::broad_substring_entry), modules);
  LintOptions options;
  options.threads = 2;
  auto run = lint_path(fs, "m", options);
  ASSERT_TRUE(run) << run.error();
  std::vector<std::string> messages;
  for (const Finding& f : run->report.findings) {
    if (f.rule == RuleId::broad_substring_entry) {
      messages.push_back(f.message);
    }
  }
  EXPECT_EQ(messages, (std::vector<std::string>{
                        "ignore entry 'model.layers.4' is matched as a substring by vLLM and also "
                        "excludes model.layers.40.mlp.experts.0.down_proj",
                        "ignore entry 'experts.19' is matched as a substring by vLLM and also "
                        "excludes model.layers.0.mlp.experts.190.down_proj"}))
    << alone;
}
