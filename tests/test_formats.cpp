// Format coverage: the qcheck binary on fixtures/formats/ (written by scripts/make_fixtures.py),
// one correct checkpoint and one or more broken variants per quantization format.
//
// Every expectation is taken from ../shared/spec/engine-semantics.md (section or rule cited at
// each test), not from what qcheck prints. Where qcheck disagrees with the spec, the test keeps
// the spec's answer and is skipped with the reason ("qcheck bug: ...").
#include <algorithm>
#include <array>
#include <cstdio>
#include <gtest/gtest.h>

#include "cli_runner.hpp"
#include <nlohmann/json.hpp>
#include <set>
#include <string>
#include <sys/wait.h>
#include <vector>

namespace {

using Names = std::set<std::string>;

const Names all_engines{"vllm", "sglang", "trtllm"};

struct Lint
{
  int exit_code = -1;
  nlohmann::json j;
};

// `qcheck lint --format json fixtures/formats/NAME`.
Lint
lint(const std::string& name)
{
  const auto run = qcheck::test::run_qcheck("lint --format json " + std::string(QCHECK_FIXTURES) +
                                            "/formats/" + name);
  Lint r;
  r.exit_code = run.exit_code;
  r.j = nlohmann::json::parse(run.out);
  return r;
}

// Rule codes of all findings (every severity).
Names
codes(const nlohmann::json& j)
{
  Names out;
  for (const auto& f : j["findings"]) {
    out.insert(f["rule"].get<std::string>());
  }
  return out;
}

// Rule codes of the findings of one severity.
Names
codes_at(const nlohmann::json& j, const std::string& severity)
{
  Names out;
  for (const auto& f : j["findings"]) {
    if (f["severity"] == severity) {
      out.insert(f["rule"].get<std::string>());
    }
  }
  return out;
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

// Union of a string-array field ("modules", "engines") over the findings of one rule.
Names
union_of(const nlohmann::json& j, const std::string& rule, const char* field)
{
  Names out;
  for (const auto& f : findings_of(j, rule)) {
    for (const auto& s : f[field]) {
      out.insert(s.get<std::string>());
    }
  }
  return out;
}

// The spec gives the semantics of some formats for only some engines: `required` must be
// named, and nothing outside `allowed`.
void
expect_engines(const Names& engines, const Names& required, const Names& allowed)
{
  for (const auto& e : required) {
    EXPECT_TRUE(engines.contains(e)) << "engine " << e << " not named";
  }
  for (const auto& e : engines) {
    EXPECT_TRUE(allowed.contains(e)) << "engine " << e << " should not be named";
  }
}

// Warnings that are not `rule_other_than` and name `needle` in their message, details or
// modules: used for spec rules qcheck has no rule code for (R22, R37).
size_t
warnings_naming(const nlohmann::json& j, const std::string& needle,
                const std::string& rule_other_than)
{
  size_t n = 0;
  for (const auto& f : j["findings"]) {
    if (f["severity"] != "warning" || f["rule"] == rule_other_than) {
      continue;
    }
    bool hit = f["message"].get<std::string>().find(needle) != std::string::npos;
    for (const auto& field : {"details", "modules", "suggested_entries"}) {
      for (const auto& s : f[field]) {
        hit = hit || s.get<std::string>().find(needle) != std::string::npos;
      }
    }
    n += hit ? 1 : 0;
  }
  return n;
}

Names
with_prefix(const std::string& prefix, const std::vector<std::string>& leaves)
{
  Names out;
  for (const auto& l : leaves) {
    out.insert(prefix + l);
  }
  return out;
}

// Routed experts 0..3 of a fused MoE, as checkpoint module names.
Names
experts(const std::string& moe)
{
  Names out;
  for (int e = 0; e < 4; ++e) {
    for (const char* m : {"gate_proj", "up_proj", "down_proj"}) {
      out.insert(moe + "." + std::to_string(e) + "." + m);
    }
  }
  return out;
}

Names
operator+(Names a, const Names& b)
{
  a.insert(b.begin(), b.end());
  return a;
}

// DeepSeek NextN layer model.layers.3: the 20 decoder modules every engine builds quantizable
// (MLA attention, routed and shared experts), without eh_proj and shared_head.head.
Names
deepseek_nextn_decoder_modules()
{
  const std::string p = "model.layers.3.";
  return with_prefix(p + "self_attn.",
                     {"q_a_proj", "q_b_proj", "kv_a_proj_with_mqa", "kv_b_proj", "o_proj"}) +
         experts(p + "mlp.experts") +
         with_prefix(p + "mlp.shared_experts.", {"gate_proj", "up_proj", "down_proj"});
}

// The 21 that vLLM and TensorRT-LLM build quantizable: the decoder's and the draft's head, which
// SGLang's NextN loader never reads (it serves the draft with the target's head).
Names
deepseek_nextn_modules()
{
  return deepseek_nextn_decoder_modules() + Names{"model.layers.3.shared_head.head"};
}

// Qwen3-Next / Qwen3.5 draft mtp.layers.0 MoE: routed experts and the shared expert.
Names
mtp_moe_modules()
{
  return experts("mtp.layers.0.mlp.experts") +
         with_prefix("mtp.layers.0.mlp.shared_expert.", {"gate_proj", "up_proj", "down_proj"});
}

} // namespace

// ---------------------------------------------------------------------------------------------
// 1. ModelOpt FP8 per-tensor, DeepSeek-V3 naming, BF16 NextN at model.layers.3
// ---------------------------------------------------------------------------------------------

// The NextN layer is excluded in every engine's namespace: `model.layers.3*` (vLLM, TRT-LLM:
// 2.2, 2.4, 6.1) and `model.decoder*` (SGLang's NextN decoder, 6.2).
// Routers are covered by `*.mlp.gate` (fnmatch in vLLM and TRT-LLM, full-match glob in SGLang).
TEST(Formats, ModelOptFp8DeepSeekNextnExcludedIsClean)
{
  const auto r = lint("modelopt-fp8-deepseek-nextn");
  EXPECT_EQ(r.exit_code, 0);
  EXPECT_TRUE(r.j["findings"].empty()) << r.j.dump(2);
}

// With only `model.layers.3*`, SGLang still checks `model.decoder.*` (6.2 DeepSeek row; no SGLang
// mapper rewrites the list for layer 3, 2.3) and finds no entry: FP8 has no SGLang NextN
// override (that is modelopt_fp4 only, R35). eh_proj is a plain nn.Linear in SGLang, and its
// loader skips the draft's shared_head.head.
TEST(Formats, ModelOptFp8DeepSeekNextnOnlyCheckpointNamespaceMissesSglang)
{
  const auto r = lint("modelopt-fp8-deepseek-nextn-sglang-gap");
  EXPECT_EQ(r.exit_code, 1);
  EXPECT_EQ(codes(r.j), Names{"QC101"}) << r.j.dump(2);
  EXPECT_EQ(union_of(r.j, "QC101", "engines"), Names{"sglang"});
  EXPECT_EQ(union_of(r.j, "QC101", "modules"), deepseek_nextn_decoder_modules());
  // Seven decoder layers, six shown.
  const auto details = findings_of(r.j, "QC101").at(0)["details"];
  EXPECT_NE(std::find(details.begin(), details.end(), "... and 1 more engine prefix"),
            details.end())
    << details.dump(2);
}

// No NextN entry: R7/R32 for all three engines. eh_proj is plain in vLLM and SGLang (6.2) but a
// Linear of the extra decoder layer in TRT-LLM's one-model MTP (6.1), so it is in the union.
TEST(Formats, ModelOptFp8DeepSeekNextnUnexcluded)
{
  const auto r = lint("modelopt-fp8-deepseek-nextn-unexcluded");
  EXPECT_EQ(r.exit_code, 1);
  EXPECT_EQ(codes(r.j), Names{"QC101"}) << r.j.dump(2);
  EXPECT_EQ(union_of(r.j, "QC101", "engines"), all_engines);
  EXPECT_EQ(union_of(r.j, "QC101", "modules"),
            deepseek_nextn_modules() + Names{"model.layers.3.eh_proj"});
  EXPECT_EQ(r.j["summary"]["errors"], 1);
}

// ---------------------------------------------------------------------------------------------
// 2. ModelOpt NVFP4, DeepSeek-V3 naming
// ---------------------------------------------------------------------------------------------

// `model.layers.3*` covers vLLM and TRT-LLM; SGLang's `model.decoder.*` is covered only by its
// hard-coded "NextN unquantized for modelopt_fp4" (6.2): R35 asks for an info, not an error.
TEST(Formats, ModelOptNvfp4DeepSeekNextnExcludedIsClean)
{
  const auto r = lint("modelopt-nvfp4-deepseek-nextn");
  EXPECT_EQ(r.exit_code, 0);
  EXPECT_EQ(codes(r.j), Names{"QC110"}) << r.j.dump(2);
  for (const auto& f : findings_of(r.j, "QC110")) {
    EXPECT_NE(f["message"].get<std::string>().find("SGLang"), std::string::npos);
  }
  EXPECT_EQ(r.j["summary"]["errors"], 0);
  EXPECT_EQ(r.j["summary"]["warnings"], 0);
}

TEST(Formats, ModelOptNvfp4DeepSeekNextnUnexcluded)
{
  const auto r = lint("modelopt-nvfp4-deepseek-nextn-unexcluded");
  EXPECT_EQ(r.exit_code, 1);
  EXPECT_EQ(codes(r.j), (Names{"QC101", "QC110"})) << r.j.dump(2);
  EXPECT_EQ(union_of(r.j, "QC101", "engines"), (Names{"vllm", "trtllm"}));
  EXPECT_EQ(union_of(r.j, "QC101", "modules"),
            deepseek_nextn_modules() + Names{"model.layers.3.eh_proj"});
  const std::string message = findings_of(r.j, "QC101").at(0)["message"];
  EXPECT_NE(message.find("The size of tensor a"), std::string::npos) << message;
}

// ---------------------------------------------------------------------------------------------
// 3. ModelOpt MIXED_PRECISION (allow-list)
// ---------------------------------------------------------------------------------------------

// Every stored-quantized module is in quantized_layers with its algorithm; BF16 attention of
// layer 1 (which still carries KV-cache k_scale/v_scale, R4), routers and lm_head are not (2.2.2).
TEST(Formats, ModelOptMixedPrecisionIsClean)
{
  const auto r = lint("modelopt-mixed-qwen3-moe");
  EXPECT_EQ(r.exit_code, 0);
  EXPECT_TRUE(r.j["findings"].empty()) << r.j.dump(2);
}

// R14: a stored-quantized module missing from quantized_layers is an R8 error in every engine.
TEST(Formats, ModelOptMixedPrecisionUnlistedModule)
{
  const auto r = lint("modelopt-mixed-qwen3-moe-unlisted");
  EXPECT_EQ(r.exit_code, 1);
  EXPECT_EQ(codes(r.j), Names{"QC102"}) << r.j.dump(2);
  EXPECT_EQ(union_of(r.j, "QC102", "modules"), Names{"model.layers.1.self_attn.o_proj"});
  expect_engines(union_of(r.j, "QC102", "engines"), {"vllm", "trtllm"}, all_engines);
}

// ---------------------------------------------------------------------------------------------
// 4. compressed-tensors nvfp4-pack-quantized, Qwen3-Next with an mtp.* draft
// ---------------------------------------------------------------------------------------------

// `re:mtp\..*` re.match-es every draft prefix vLLM checks (it keeps the mtp root, 6.2), so no
// R22 warning; `re:.*mlp\.gate$` is end-anchored and spares gate_up_proj (3.3). SGLang builds
// the draft layer under main layer 0's names (qwen3_next_mtp.py: "mtp" read as "model"), which
// the regex does not reach: QC101 for SGLang alone. The fix names the draft's attention, which
// main layer 0 (linear attention) does not have; nothing can name its MLP alone.
TEST(Formats, CompressedTensorsNvfp4MtpIgnoredFailsInSglangOnly)
{
  const auto r = lint("ct-nvfp4-qwen3-next-mtp");
  EXPECT_EQ(r.exit_code, 1);
  EXPECT_EQ(codes(r.j), Names{"QC101"}) << r.j.dump(2);
  EXPECT_EQ(union_of(r.j, "QC101", "engines"), Names{"sglang"});
  EXPECT_EQ(union_of(r.j, "QC101", "modules"),
            with_prefix("mtp.layers.0.self_attn.", {"q_proj", "k_proj", "v_proj", "o_proj"}) +
              mtp_moe_modules());
  EXPECT_EQ(union_of(r.j, "QC101", "suggested_entries"),
            (Names{"model.layers.0.self_attn.qkv_proj", "model.layers.0.self_attn.o_proj"}));
}

// Without it the BF16 draft Linears and MoE match the `Linear` target (3.3, 3.4). Routers stay
// ignored by the two router regexes.
TEST(Formats, CompressedTensorsNvfp4MtpUnignored)
{
  const auto r = lint("ct-nvfp4-qwen3-next-mtp-unignored");
  EXPECT_EQ(r.exit_code, 1);
  EXPECT_EQ(codes(r.j), Names{"QC101"}) << r.j.dump(2);
  expect_engines(union_of(r.j, "QC101", "engines"), {"vllm", "sglang"}, all_engines);
  EXPECT_EQ(union_of(r.j, "QC101", "modules"),
            Names{"mtp.fc"} +
              with_prefix("mtp.layers.0.self_attn.", {"q_proj", "k_proj", "v_proj", "o_proj"}) +
              mtp_moe_modules());
}

// ---------------------------------------------------------------------------------------------
// 5. compressed-tensors float-quantized FP8, Qwen3-VL naming
// ---------------------------------------------------------------------------------------------

// `re:.*visual\..*` and `re:.*lm_head` match both the checkpoint names and vLLM's renamed
// prefixes (`visual.*`, `language_model.lm_head`, 7.4).
TEST(Formats, CompressedTensorsFp8VlmIsClean)
{
  const auto r = lint("ct-fp8-qwen3-vl");
  EXPECT_EQ(r.exit_code, 0);
  EXPECT_TRUE(r.j["findings"].empty()) << r.j.dump(2);
}

// vLLM builds the vision tower as `visual.*` (7.4) and does not pass `re:` entries through its
// mapper (3.3), so `re:model\.visual\..*` misses and the `Linear` target quantizes the six BF16
// vision Linears: R7 for vLLM, plus the R22 warning on the entry.
TEST(Formats, CompressedTensorsFp8VlmCheckpointNamespaceRegex)
{
  const auto r = lint("ct-fp8-qwen3-vl-checkpoint-regex");
  EXPECT_EQ(r.exit_code, 1);
  EXPECT_EQ(codes_at(r.j, "error"), Names{"QC101"}) << r.j.dump(2);
  expect_engines(union_of(r.j, "QC101", "engines"), {"vllm"}, all_engines);
  EXPECT_EQ(union_of(r.j, "QC101", "modules"),
            with_prefix("model.visual.",
                        {"blocks.0.attn.qkv", "blocks.0.attn.proj", "blocks.0.mlp.linear_fc1",
                         "blocks.0.mlp.linear_fc2", "merger.linear_fc1", "merger.linear_fc2"}));
  EXPECT_GE(warnings_naming(r.j, "re:model\\.visual\\..*", ""), 1u) << "R22";
}

// ---------------------------------------------------------------------------------------------
// 6. GPTQ with dynamic `-:` keys, BF16 draft with routed experts
// ---------------------------------------------------------------------------------------------

// `-:.*mtp.*` matches `mtp.layers.0.mlp.experts` in vLLM (R24); draft Linears are BF16 and
// inferred unquantized (4.2). SGLang's GPTQMarlinConfig builds every fused MoE quantized before
// reading dynamic (sglang gptq/gptq.py): the 12 BF16 draft experts fail there alone.
TEST(Formats, GptqDynamicNegativeMtpKeyFailsInSglangOnly)
{
  const auto r = lint("gptq-qwen3.5-moe-mtp");
  EXPECT_EQ(r.exit_code, 1);
  EXPECT_EQ(codes(r.j), (Names{"QC101", "QC116"})) << r.j.dump(2);
  EXPECT_EQ(union_of(r.j, "QC101", "engines"), Names{"sglang"}) << r.j.dump(2);
  EXPECT_EQ(union_of(r.j, "QC101", "modules"), experts("mtp.layers.0.mlp.experts"));
  // explain --entries: the key reaches the experts in vLLM only.
  const auto entries = qcheck::test::run_qcheck(
    "explain --entries " + std::string(QCHECK_FIXTURES) + "/formats/gptq-qwen3.5-moe-mtp");
  EXPECT_NE(entries.out.find("    vLLM: 6 layers: mtp.fc, mtp.layers.0.mlp.experts, "),
            std::string::npos)
    << entries.out;
  EXPECT_NE(entries.out.find("    SGLang: 5 layers: mtp.fc, mtp.layers.0.mlp.shared_expert."),
            std::string::npos)
    << entries.out;
}

// R24: fused MoE is quantized unless a `-:` key matches; there is no dtype inference for MoE,
// so exactly the 12 draft experts fail in vLLM, and in SGLang whatever the keys say. SGLang
// infers nothing for Linear layers either: the draft's attention and shared expert fail there
// too (its mtp.fc is a plain nn.Linear).
TEST(Formats, GptqWithoutNegativeMtpKey)
{
  const auto r = lint("gptq-qwen3.5-moe-mtp-no-negative-key");
  EXPECT_EQ(r.exit_code, 1);
  EXPECT_EQ(codes(r.j), (Names{"QC101", "QC116"})) << r.j.dump(2);
  EXPECT_EQ(union_of(r.j, "QC101", "engines"), (Names{"vllm", "sglang"})) << r.j.dump(2);
  Names expected = experts("mtp.layers.0.mlp.experts");
  for (const char* m :
       {"mlp.shared_expert.down_proj", "mlp.shared_expert.gate_proj", "mlp.shared_expert.up_proj",
        "self_attn.k_proj", "self_attn.o_proj", "self_attn.q_proj", "self_attn.v_proj"}) {
    expected.insert(std::string("mtp.layers.0.") + m);
  }
  EXPECT_EQ(union_of(r.j, "QC101", "modules"), expected);
  // vLLM's part: the experts alone (its draft Linears are inferred from their dtypes).
  for (const auto& f : r.j["findings"]) {
    if (f["rule"] != "QC101") {
      continue;
    }
    for (const auto& d : f["details"]) {
      const std::string line = d.get<std::string>();
      if (line.starts_with("vLLM checks")) {
        EXPECT_NE(line.find("mtp.layers.0.mlp.experts'"), std::string::npos) << line;
      }
    }
  }
}

// ---------------------------------------------------------------------------------------------
// 7. AutoRound
// ---------------------------------------------------------------------------------------------

// extra_config: o_proj of layer 0 at 8 bits (qweight [in/4, out], R36 with the per-layer bits),
// down_proj of layer 1 at 16 bits (unquantized, 4.4); lm_head is not in block_name_to_quantize.
TEST(Formats, AutoRoundExtraConfigIsClean)
{
  const auto r = lint("autoround-qwen3");
  EXPECT_EQ(r.exit_code, 0);
  EXPECT_TRUE(r.j["findings"].empty()) << r.j.dump(2);
}

TEST(Formats, AutoRoundBf16ModuleWithoutExtraConfig)
{
  const auto r = lint("autoround-qwen3-missing-extra-config");
  EXPECT_EQ(r.exit_code, 1);
  EXPECT_EQ(codes(r.j), Names{"QC101"}) << r.j.dump(2);
  expect_engines(union_of(r.j, "QC101", "engines"), {"vllm"}, all_engines);
  EXPECT_EQ(union_of(r.j, "QC101", "modules"), Names{"model.layers.1.mlp.down_proj"});
}

// ---------------------------------------------------------------------------------------------
// 8. AWQ
// ---------------------------------------------------------------------------------------------

// modules_to_not_convert names the F16 down_proj in full (substring match, 4.3). The LM head is
// quantized only when the config sets `lm_head` (4.3: "and LM head when `lm_head` is
// quantized"); this config does not, so the F16 lm_head is fine.
TEST(Formats, AwqModulesToNotConvertIsClean)
{
  const auto r = lint("awq-qwen2");
  EXPECT_EQ(r.exit_code, 0);
  EXPECT_TRUE(r.j["findings"].empty()) << r.j.dump(2);
}

// `mlp.down_proj` is a substring of both layers' down_proj (R25): layer 0's AWQ down_proj is
// declared unquantized (R8).
TEST(Formats, AwqSubstringEntryExcludesQuantizedModule)
{
  const auto r = lint("awq-qwen2-substring");
  EXPECT_EQ(r.exit_code, 1);
  EXPECT_EQ(codes(r.j), Names{"QC102"}) << r.j.dump(2);
  EXPECT_EQ(union_of(r.j, "QC102", "modules"), Names{"model.layers.0.mlp.down_proj"});
  expect_engines(union_of(r.j, "QC102", "engines"), {"vllm"}, all_engines);
}

// ---------------------------------------------------------------------------------------------
// 9. HF FP8 block (quant_method fp8, weight_block_size [128, 128])
// ---------------------------------------------------------------------------------------------

TEST(Formats, Fp8BlockFullNamesIsClean)
{
  const auto r = lint("fp8-block-qwen3-next");
  EXPECT_EQ(r.exit_code, 0);
  EXPECT_TRUE(r.j["findings"].empty()) << r.j.dump(2);
}

// R27: vLLM compares exactly, so `linear_attn.out_proj` leaves the BF16 out_proj FP8-declared
// (R7, silent garbage, 5.1); SGLang's dotted-boundary match excludes it (2.3), hence vLLM only.
TEST(Formats, Fp8BlockShortLeafName)
{
  const auto r = lint("fp8-block-qwen3-next-short-names");
  EXPECT_EQ(r.exit_code, 1);
  EXPECT_EQ(codes(r.j), (Names{"QC101", "QC121"})) << r.j.dump(2);
  expect_engines(union_of(r.j, "QC101", "engines"), {"vllm"}, {"vllm", "trtllm"});
  EXPECT_EQ(union_of(r.j, "QC101", "modules"), Names{"model.layers.0.linear_attn.out_proj"});
  const auto shorts = findings_of(r.j, "QC121");
  ASSERT_EQ(shorts.size(), 1u);
  EXPECT_NE(shorts[0]["message"].get<std::string>().find("'linear_attn.out_proj'"),
            std::string::npos);
}

// `mlp.gate` and `mlp.shared_expert_gate` name the routers under SGLang's dotted-boundary match
// (2.3) and transformers' suffix match (5.1), so they are not dead entries; and vLLM builds
// Qwen3-Next's routers with quant_config=None (qwen3_next.py), so the short names cost nothing
// there: no QC121 (R27 is about layers vLLM would quantize).
TEST(Formats, Fp8BlockShortRouterNames)
{
  const auto r = lint("fp8-block-qwen3-next-short-router-names");
  EXPECT_EQ(r.exit_code, 0);
  EXPECT_TRUE(r.j["findings"].empty()) << r.j.dump(2);
}

// ---------------------------------------------------------------------------------------------
// 10. MXFP4, gpt-oss layout
// ---------------------------------------------------------------------------------------------

// vLLM's Mxfp4Config quantizes only the MoE experts and ignores the list (5.4): attention,
// router, embeddings and lm_head are BF16 and unquantized anyway.
TEST(Formats, Mxfp4GptOssIsClean)
{
  const auto r = lint("mxfp4-gpt-oss");
  EXPECT_EQ(r.exit_code, 0);
  EXPECT_TRUE(r.j["findings"].empty()) << r.j.dump(2);
}

// Listing the BF16 experts does not help vLLM: it ignores the list (5.4).
TEST(Formats, Mxfp4GptOssBf16ExpertsListedButIgnoredByVllm)
{
  const auto r = lint("mxfp4-gpt-oss-bf16-experts");
  EXPECT_EQ(r.exit_code, 1);
  EXPECT_EQ(codes(r.j), Names{"QC101"}) << r.j.dump(2);
  expect_engines(union_of(r.j, "QC101", "engines"), {"vllm"}, all_engines);
  EXPECT_EQ(union_of(r.j, "QC101", "modules"), Names{"model.layers.1.mlp.experts"});
}

// ---------------------------------------------------------------------------------------------
// 11. ModelOpt NVFP4 draft mixing NVFP4 experts with BF16 attention and fc
// ---------------------------------------------------------------------------------------------

// vLLM and TensorRT-LLM build each module as declared (vLLM's mtp.fc override is not needed,
// 6.2). The spec also asks for two warnings: R33 (partially quantized draft) and R37 (the list
// names q/k/v_proj of a draft attention the drafter builds as fused qkv_proj; without
// packed_modules_mapping the fused name is matched literally).
// Project decision (issue 3): a legal mix is not a finding. R33's warning is kept only where an
// engine builds the drafter all-or-nothing (SGLang's Qwen3.5 Quark path), and R37 is not
// reported: vLLM's Qwen3.5 drafter accepted shard names in report 002.
// SGLang, though, builds the draft's attention under main layer 0's names (qwen3_next_mtp.py),
// which the exact mtp.* names do not reach, and builds every Qwen3-Next qkv_proj unquantized for
// modelopt_fp4 (qwen3_next.py). So the draft's BF16 q/k/v load there only through that override
// (QC110, naming them), its BF16 o_proj is quantized (QC101, fixed by
// 'model.layers.0.self_attn.o_proj': main layer 0 is linear attention), and main layer 1's NVFP4
// q/k/v cannot load (QC102).
TEST(Formats, ModelOptNvfp4Qwen3NextDraftMix)
{
  const auto r = lint("modelopt-nvfp4-qwen3-next-mtp-mix");
  EXPECT_EQ(r.exit_code, 1);
  EXPECT_EQ(codes(r.j), (Names{"QC101", "QC102", "QC110"})) << r.j.dump(2);
  EXPECT_EQ(union_of(r.j, "QC101", "engines"), Names{"sglang"});
  EXPECT_EQ(union_of(r.j, "QC101", "modules"), Names{"mtp.layers.0.self_attn.o_proj"});
  EXPECT_EQ(union_of(r.j, "QC101", "suggested_entries"), Names{"model.layers.0.self_attn.o_proj"});
  EXPECT_EQ(union_of(r.j, "QC102", "engines"), Names{"sglang"});
  EXPECT_EQ(union_of(r.j, "QC102", "modules"),
            with_prefix("model.layers.1.self_attn.", {"q_proj", "k_proj", "v_proj"}));
  // Named by its checkpoint modules, not by main layer 0's name SGLang gives it.
  EXPECT_EQ(union_of(r.j, "QC110", "modules"),
            with_prefix("mtp.layers.0.self_attn.", {"q_proj", "k_proj", "v_proj"}));
}

// Same draft mix on Qwen3.5: SGLang's `_mtp_quant_config` returns None for serialized
// modelopt_fp4 (6.2 Qwen3.5 row), so it builds the draft MoE unquantized while the experts are
// stored NVFP4 - R8 for SGLang (the "4096 vs 2048 (reverse)" incident of 6.4) - plus R33, R37.
// Its main decoder layers (qwen3_5.py) give the linear attention and the full attention's
// qkv_proj and o_proj no quantization config for modelopt_fp4 either: stored NVFP4 here, QC102.
TEST(Formats, ModelOptNvfp4Qwen35DraftMixBreaksSglang)
{
  const auto r = lint("modelopt-nvfp4-qwen3.5-moe-mtp-mix");
  EXPECT_EQ(r.exit_code, 1);
  EXPECT_EQ(codes_at(r.j, "error"), Names{"QC102"}) << r.j.dump(2);
  EXPECT_EQ(union_of(r.j, "QC102", "engines"), Names{"sglang"});
  Names expected = mtp_moe_modules();
  for (const char* m :
       {"layers.0.linear_attn.in_proj_qkv", "layers.0.linear_attn.in_proj_z",
        "layers.0.linear_attn.out_proj", "layers.1.self_attn.q_proj", "layers.1.self_attn.k_proj",
        "layers.1.self_attn.v_proj", "layers.1.self_attn.o_proj"}) {
    expected.insert(std::string("model.language_model.") + m);
  }
  EXPECT_EQ(union_of(r.j, "QC102", "modules"), expected);
}

// The fix for a DeepSeek NextN layer names it in every namespace an engine checks: the
// checkpoint root (vLLM, TensorRT-LLM) and SGLang's model.decoder (6.2). Not SGLang's
// model.shared_head.head, a layer whose weights SGLang never loads from the draft.
TEST(Formats, DeepSeekNextnSuggestionCoversEveryEngineNamespace)
{
  const auto r = lint("modelopt-fp8-deepseek-nextn-unexcluded");
  const auto f = findings_of(r.j, "QC101").at(0);
  EXPECT_EQ(f["suggested_entries"], nlohmann::json::array({"model.layers.3*", "model.decoder*"}));
}
