#!/usr/bin/env python3
"""Generate the tiny checkpoint folders under fixtures/ used by qcheck's tests.

Every fixture is metadata only: config JSON files, a model.safetensors.index.json
where the real checkpoint has one, and safetensors shards whose headers describe
the real tensor layout at toy sizes and whose data regions are all zero bytes.
Output is byte-for-byte deterministic (standard library only, no network).

    python3 scripts/make_fixtures.py            # (re)write fixtures/
    python3 scripts/make_fixtures.py --out DIR  # write somewhere else
    python3 scripts/make_fixtures.py --check    # exit 1 if fixtures/ is stale

See fixtures/README.md (also written by this script) for what each folder mirrors.
"""

import argparse
import filecmp
import json
import math
import os
import shutil
import struct
import sys
import tempfile
from pathlib import Path

REPO_ROOT = Path(__file__).resolve().parent.parent
DEFAULT_OUT = REPO_ROOT / "fixtures"

# ---------------------------------------------------------------------------
# Toy dimensions shared by every fixture
# ---------------------------------------------------------------------------

H = 64  # hidden size
DENSE_FFN = 128  # intermediate size of a dense MLP
EXPERT_FFN = 32  # intermediate size of one routed (or shared) expert
N_EXPERTS = 4  # routed experts per MoE layer
Q_OUT = 64  # q_proj / o_proj width (4 heads x 16)
KV_OUT = 16  # k_proj / v_proj width (1 KV head x 16)
HEAD_DIM = 16
VOCAB = 128

# Bits per element of the dtypes the fixtures use.
DTYPE_BITS = {
    "U8": 8,
    "I8": 8,
    "F8_E4M3": 8,
    "BF16": 16,
    "F16": 16,
    "F32": 32,
    "I32": 32,
    "I64": 64,
}

# ---------------------------------------------------------------------------
# Safetensors, index and JSON writers
# ---------------------------------------------------------------------------


def tensor(name, dtype, shape):
    """One tensor description: (name, dtype, shape)."""
    return (name, dtype, list(shape))


def nbytes(dtype, shape):
    bits = math.prod(shape) * DTYPE_BITS[dtype]
    assert bits % 8 == 0, (dtype, shape)
    return bits // 8


def pad_header(header: bytes) -> bytes:
    """Right-pad a header with spaces to a multiple of 8 bytes."""
    return header + b" " * (-len(header) % 8)


def compact_json(obj) -> bytes:
    return json.dumps(obj, separators=(",", ":")).encode("utf-8")


def safetensors_bytes(tensors):
    """A complete safetensors file: sorted header, contiguous offsets, zero data."""
    names = [t[0] for t in tensors]
    assert len(names) == len(set(names)), "duplicate tensor name"
    header = {"__metadata__": {"format": "pt"}}
    offset = 0
    for name, dtype, shape in sorted(tensors):
        size = nbytes(dtype, shape)
        header[name] = {"dtype": dtype, "shape": shape, "data_offsets": [offset, offset + size]}
        offset += size
    raw = pad_header(compact_json(header))
    return struct.pack("<Q", len(raw)) + raw + bytes(offset)


def json_text(obj) -> bytes:
    return (json.dumps(obj, indent=2) + "\n").encode("utf-8")


def write_bytes(path: Path, data: bytes):
    path.parent.mkdir(parents=True, exist_ok=True)
    with open(path, "wb") as f:
        f.write(data)


def write_json(path: Path, obj):
    write_bytes(path, json_text(obj))


def write_checkpoint(folder: Path, shards, json_files, index=True):
    """Write shards ({file name: [tensor]}), JSON files ({file name: obj}) and the index."""
    for file_name, obj in json_files.items():
        write_json(folder / file_name, obj)
    weight_map = {}
    total = 0
    for file_name, tensors in shards.items():
        write_bytes(folder / file_name, safetensors_bytes(tensors))
        for name, dtype, shape in tensors:
            assert name not in weight_map, f"{name} is in two shards"
            weight_map[name] = file_name
            total += nbytes(dtype, shape)
    if index:
        write_json(
            folder / "model.safetensors.index.json",
            {"metadata": {"total_size": total}, "weight_map": dict(sorted(weight_map.items()))},
        )


# ---------------------------------------------------------------------------
# Per-format tensor layouts of one Linear module M with weight [out, in]
# ---------------------------------------------------------------------------


def bf16_linear(m, out, inp):
    return [tensor(f"{m}.weight", "BF16", [out, inp])]


def nvfp4_linear(m, out, inp):
    """ModelOpt NVFP4 (W4A4, group 16)."""
    assert inp % 16 == 0
    return [
        tensor(f"{m}.weight", "U8", [out, inp // 2]),
        tensor(f"{m}.weight_scale", "F8_E4M3", [out, inp // 16]),
        tensor(f"{m}.weight_scale_2", "F32", []),
        tensor(f"{m}.input_scale", "F32", []),
    ]


def ct_w4a16_linear(m, out, inp):
    """compressed-tensors pack-quantized, int4 symmetric, group 32."""
    assert inp % 32 == 0
    return [
        tensor(f"{m}.weight_packed", "I32", [out, inp // 8]),
        tensor(f"{m}.weight_scale", "BF16", [out, inp // 32]),
        tensor(f"{m}.weight_shape", "I64", [2]),
    ]


def gptq_linear(m, out, inp):
    """GPTQ 4-bit, group 64, packed along the input dimension."""
    assert inp % 64 == 0 and out % 8 == 0
    return [
        tensor(f"{m}.qweight", "I32", [inp // 8, out]),
        tensor(f"{m}.qzeros", "I32", [inp // 64, out // 8]),
        tensor(f"{m}.scales", "F16", [inp // 64, out]),
        tensor(f"{m}.g_idx", "I32", [inp]),
    ]


def norm(name, size=H):
    return [tensor(f"{name}.weight", "BF16", [size])]


# ---------------------------------------------------------------------------
# Building blocks (a `linear` argument picks the storage format)
# ---------------------------------------------------------------------------


def attention(p, linear, kv_scales=False):
    """self_attn q/k/v/o under prefix p (e.g. '...layers.3.')."""
    a = f"{p}self_attn"
    out = []
    out += linear(f"{a}.q_proj", Q_OUT, H)
    out += linear(f"{a}.k_proj", KV_OUT, H)
    out += linear(f"{a}.v_proj", KV_OUT, H)
    out += linear(f"{a}.o_proj", H, Q_OUT)
    if kv_scales:  # ModelOpt FP8 KV cache scales
        out += [tensor(f"{a}.k_proj.k_scale", "F32", []), tensor(f"{a}.v_proj.v_scale", "F32", [])]
    return out


def qk_norms(p):
    return norm(f"{p}self_attn.q_norm", HEAD_DIM) + norm(f"{p}self_attn.k_norm", HEAD_DIM)


def mlp(m, linear, ffn):
    """gate/up/down projections of one (dense, expert or shared) MLP under module m."""
    return (
        linear(f"{m}.gate_proj", ffn, H)
        + linear(f"{m}.up_proj", ffn, H)
        + linear(f"{m}.down_proj", H, ffn)
    )


def routed_experts(p, linear):
    out = []
    for e in range(N_EXPERTS):
        out += mlp(f"{p}mlp.experts.{e}", linear, EXPERT_FFN)
    return out


def moe_rest(p, linear):
    """Shared experts (format `linear`) plus the BF16 router with its F32 bias."""
    return mlp(f"{p}mlp.shared_experts", linear, EXPERT_FFN) + [
        tensor(f"{p}mlp.gate.weight", "BF16", [N_EXPERTS, H]),
        tensor(f"{p}mlp.gate.e_score_correction_bias", "F32", [N_EXPERTS]),
    ]


def layernorms(p):
    return norm(f"{p}input_layernorm") + norm(f"{p}post_attention_layernorm")


# ---------------------------------------------------------------------------
# Fixture 1: GLM-5.3-Flash-style NVFP4 with an undeclared BF16 NextN layer
# ---------------------------------------------------------------------------

GLM_IGNORE = ["lm_head", "model.language_model.layers.*.mlp.gate", "model.visual*"]
GLM_IGNORE_FIX = ["model.language_model.layers.45*", "model.layers.45*"]


def glm_nvfp4_nextn(out: Path, fixed: bool):
    ignore = GLM_IGNORE + (GLM_IGNORE_FIX if fixed else [])
    lm = "model.language_model."
    config = {
        "architectures": ["Glm5NextForConditionalGeneration"],
        "model_type": "glm5_next",
        "text_config": {
            "model_type": "glm5_next_text",
            "num_hidden_layers": 45,
            "num_nextn_predict_layers": 1,
            "hidden_size": H,
            "n_routed_experts": N_EXPERTS,
            "first_k_dense_replace": 1,
        },
        "quantization_config": {
            "config_groups": {
                "group_0": {
                    "input_activations": {
                        "dynamic": False,
                        "num_bits": 4,
                        "type": "float",
                        "group_size": 16,
                    },
                    "weights": {"dynamic": False, "num_bits": 4, "type": "float", "group_size": 16},
                    "targets": ["Linear"],
                }
            },
            "ignore": ignore,
            "quant_algo": "NVFP4",
            "kv_cache_scheme": {"dynamic": False, "num_bits": 8, "type": "float"},
            "producer": {"name": "modelopt", "version": "0.41.0"},
            "quant_method": "modelopt",
        },
    }
    hf_quant_config = {
        "producer": {"name": "modelopt", "version": "0.41.0"},
        "quantization": {
            "quant_algo": "NVFP4",
            "kv_cache_quant_algo": "FP8",
            "group_size": 16,
            "exclude_modules": list(ignore),
        },
    }

    def quantized_layer(i, moe):
        p = f"{lm}layers.{i}."
        ts = attention(p, nvfp4_linear, kv_scales=True) + layernorms(p)
        if moe:
            ts += routed_experts(p, nvfp4_linear) + moe_rest(p, nvfp4_linear)
        else:
            ts += mlp(f"{p}mlp", nvfp4_linear, DENSE_FFN)
        return ts

    nextn = f"{lm}layers.45."
    shard1 = [tensor(f"{lm}embed_tokens.weight", "BF16", [VOCAB, H])]
    shard1 += bf16_linear("model.visual.blocks.0.attn.qkv", 3 * H, H)
    shard1 += bf16_linear("model.visual.blocks.0.attn.proj", H, H)
    shard1 += quantized_layer(0, moe=False) + quantized_layer(1, moe=True)
    shard2 = quantized_layer(44, moe=True) + routed_experts(nextn, bf16_linear)
    shard3 = attention(nextn, bf16_linear) + layernorms(nextn) + moe_rest(nextn, bf16_linear)
    shard3 += bf16_linear(f"{nextn}eh_proj", H, 2 * H)
    shard3 += norm(f"{nextn}enorm") + norm(f"{nextn}hnorm") + norm(f"{nextn}shared_head.norm")
    shard3 += bf16_linear(f"{nextn}shared_head.head", VOCAB, H)
    shard3 += norm(f"{lm}norm") + bf16_linear("lm_head", VOCAB, H)

    write_checkpoint(
        out,
        {
            "model-00001-of-00003.safetensors": shard1,
            "model-00002-of-00003.safetensors": shard2,
            "model-00003-of-00003.safetensors": shard3,
        },
        {"config.json": config, "hf_quant_config.json": hf_quant_config},
    )


# ---------------------------------------------------------------------------
# Fixtures 2 and 3: Qwen3.5-style VLM with a top-level mtp.* draft block
# ---------------------------------------------------------------------------

QWEN_LM = "model.language_model."
QWEN_VISUAL_LINEARS = [
    ("model.visual.blocks.0.attn.qkv", 3 * H, H),
    ("model.visual.blocks.0.attn.proj", H, H),
    ("model.visual.merger.linear_fc1", H, H),
]
LINEAR_ATTN_HEADS = 8  # value heads of the gated-delta-net layer
LINEAR_ATTN_QKV = 3 * H  # q, k and v of the linear attention, concatenated
MTP_LINEARS = [
    "mtp.fc",
    "mtp.layers.0.self_attn.q_proj",
    "mtp.layers.0.self_attn.k_proj",
    "mtp.layers.0.self_attn.v_proj",
    "mtp.layers.0.self_attn.o_proj",
    "mtp.layers.0.mlp.gate_proj",
    "mtp.layers.0.mlp.up_proj",
    "mtp.layers.0.mlp.down_proj",
]


def qwen_config(quantization_config):
    return {
        "architectures": ["Qwen3_5ForConditionalGeneration"],
        "model_type": "qwen3_5",
        "text_config": {
            "model_type": "qwen3_5_text",
            "num_hidden_layers": 2,
            "mtp_num_hidden_layers": 1,
            "hidden_size": H,
            "layer_types": ["linear_attention", "full_attention"],
        },
        "quantization_config": quantization_config,
    }


def qwen_main(linear):
    """The main model, split over two shards; `linear` stores the quantized Linears.

    in_proj_a/b, the vision tower and lm_head are always BF16.
    """
    p0 = f"{QWEN_LM}layers.0."
    la = f"{p0}linear_attn"
    shard1 = [tensor(f"{QWEN_LM}embed_tokens.weight", "BF16", [VOCAB, H])]
    for m, o, i in QWEN_VISUAL_LINEARS:
        shard1 += bf16_linear(m, o, i)
    shard1 += linear(f"{la}.in_proj_qkv", LINEAR_ATTN_QKV, H)
    shard1 += linear(f"{la}.in_proj_z", H, H)
    shard1 += linear(f"{la}.out_proj", H, H)
    shard1 += bf16_linear(f"{la}.in_proj_a", LINEAR_ATTN_HEADS, H)
    shard1 += bf16_linear(f"{la}.in_proj_b", LINEAR_ATTN_HEADS, H)
    shard1 += norm(f"{la}.norm", H // LINEAR_ATTN_HEADS)
    shard1 += [
        tensor(f"{la}.A_log", "F32", [LINEAR_ATTN_HEADS]),
        tensor(f"{la}.dt_bias", "BF16", [LINEAR_ATTN_HEADS]),
        tensor(f"{la}.conv1d.weight", "BF16", [LINEAR_ATTN_QKV, 1, 4]),
    ]
    shard1 += mlp(f"{p0}mlp", linear, DENSE_FFN) + layernorms(p0)

    p1 = f"{QWEN_LM}layers.1."
    shard2 = attention(p1, linear) + qk_norms(p1)
    shard2 += mlp(f"{p1}mlp", linear, DENSE_FFN) + layernorms(p1)
    shard2 += norm(f"{QWEN_LM}norm") + bf16_linear("lm_head", VOCAB, H)
    return shard1, shard2


def qwen_mtp(linear):
    """The 8 MTP Linears stored with `linear`, plus the 7 MTP norms (BF16)."""
    p = "mtp.layers.0."
    ts = linear("mtp.fc", H, 2 * H) + attention(p, linear) + mlp(f"{p}mlp", linear, DENSE_FFN)
    ts += norm("mtp.norm") + norm("mtp.pre_fc_norm_embedding") + norm("mtp.pre_fc_norm_hidden")
    ts += layernorms(p) + qk_norms(p)
    return ts


def qwen_w4a16_mtp(out: Path, fixed: bool):
    la = f"{QWEN_LM}layers.0.linear_attn"
    ignore = sorted(
        ["lm_head", f"{la}.in_proj_a", f"{la}.in_proj_b"] + [m for m, _, _ in QWEN_VISUAL_LINEARS]
    )
    if fixed:
        ignore += MTP_LINEARS
    quantization_config = {
        "quant_method": "compressed-tensors",
        "format": "pack-quantized",
        "quantization_status": "compressed",
        "config_groups": {
            "group_0": {
                "targets": ["Linear"],
                "weights": {
                    "num_bits": 4,
                    "type": "int",
                    "symmetric": True,
                    "strategy": "group",
                    "group_size": 32,
                },
                "input_activations": None,
                "output_activations": None,
                "format": "pack-quantized",
            }
        },
        "ignore": ignore,
        "provider": "auto-round",
    }
    shard1, shard2 = qwen_main(ct_w4a16_linear)
    mtp = qwen_mtp(bf16_linear)
    assert len(mtp) == 15
    write_checkpoint(
        out,
        {
            "model-00001-of-00002.safetensors": shard1,
            "model-00002-of-00002.safetensors": shard2,
            "model_extra_tensors.safetensors": mtp,
        },
        {
            "config.json": qwen_config(quantization_config),
            "quantization_config.json": quantization_config,
        },
    )


def qwen_gptq_mtp(out: Path, fixed: bool):
    quantization_config = {
        "quant_method": "gptq",
        "bits": 4,
        "group_size": 64,
        "sym": True,
        "desc_act": False,
        "checkpoint_format": "gptq",
        "autoround_version": "0.9.1",
        "lm_head": False,
        "dynamic": {"+:.mtp.": {"bits": 4, "group_size": 64}},
    }
    if fixed:
        quantization_config["modules_to_not_convert"] = ["mtp", "visual", "lm_head"]
        quantization_config["dynamic"] = {"-:.*mtp.*": {}}
    shard1, shard2 = qwen_main(gptq_linear)
    shard2 += qwen_mtp(bf16_linear if fixed else gptq_linear)
    write_checkpoint(
        out,
        {
            "model-00001-of-00002.safetensors": shard1,
            "model-00002-of-00002.safetensors": shard2,
        },
        {"config.json": qwen_config(quantization_config)},
    )


# ---------------------------------------------------------------------------
# Fixture 4: plain BF16 Llama, single file
# ---------------------------------------------------------------------------


def plain_bf16(out: Path):
    config = {
        "architectures": ["LlamaForCausalLM"],
        "model_type": "llama",
        "hidden_size": H,
        "intermediate_size": DENSE_FFN,
        "num_hidden_layers": 2,
        "num_attention_heads": Q_OUT // HEAD_DIM,
        "num_key_value_heads": KV_OUT // HEAD_DIM,
        "head_dim": HEAD_DIM,
        "vocab_size": VOCAB,
        "torch_dtype": "bfloat16",
    }
    ts = [tensor("model.embed_tokens.weight", "BF16", [VOCAB, H])]
    for i in range(2):
        p = f"model.layers.{i}."
        ts += attention(p, bf16_linear) + mlp(f"{p}mlp", bf16_linear, DENSE_FFN) + layernorms(p)
    ts += norm("model.norm") + bf16_linear("lm_head", VOCAB, H)
    write_checkpoint(out, {"model.safetensors": ts}, {"config.json": config}, index=False)


# ---------------------------------------------------------------------------
# Fixture 5: malformed safetensors files for the header reader
# ---------------------------------------------------------------------------


def with_length(header: bytes, data_size=0):
    """Length prefix + header bytes (taken as given) + data_size zero bytes."""
    return struct.pack("<Q", len(header)) + header + bytes(data_size)


def raw_safetensors(header_obj, data_size):
    """A file with an arbitrary (possibly inconsistent) header and data_size zero bytes."""
    return with_length(pad_header(compact_json(header_obj)), data_size)


def entry(dtype, shape, begin, end):
    return {"dtype": dtype, "shape": shape, "data_offsets": [begin, end]}


def malformed(out: Path):
    meta = {"__metadata__": {"format": "pt"}}
    files = {}
    # Header length 2^64-1: far over the 100,000,000-byte limit.
    files["length-max.safetensors"] = b"\xff" * 8 + pad_header(b"{}")
    # Header length 4096, but only 92 bytes follow it (file is 100 bytes).
    body = compact_json(meta)
    files["length-beyond-file.safetensors"] = struct.pack("<Q", 4096) + body.ljust(92, b" ")
    # Valid header for BF16 [64, 64] (8192 bytes), only half of the data present.
    files["truncated.safetensors"] = raw_safetensors(
        {**meta, "a": entry("BF16", [64, 64], 0, 8192)}, 4096
    )
    # Consistent length, but the JSON nests 100,000 arrays and never closes.
    files["nested.safetensors"] = with_length(pad_header(b'{"a":' + b"[" * 100_000))
    # data_offsets end = 2^64-1: sizes must be computed without overflow.
    files["overflow-offsets.safetensors"] = raw_safetensors(
        {**meta, "a": entry("U8", [4], 0, 2**64 - 1)}, 4
    )
    # A dtype spelling seen in the wild but not in the format, next to a valid tensor.
    files["unknown-dtype.safetensors"] = raw_safetensors(
        {**meta, "a": entry("FP4", [64, 64], 0, 2048), "b": entry("BF16", [4], 2048, 2056)}, 2056
    )
    # 8 unused bytes between the two tensors.
    files["gap.safetensors"] = raw_safetensors(
        {**meta, "a": entry("BF16", [4], 0, 8), "b": entry("BF16", [4], 16, 24)}, 24
    )
    # The second tensor starts inside the first.
    files["overlap.safetensors"] = raw_safetensors(
        {**meta, "a": entry("BF16", [4], 0, 8), "b": entry("BF16", [4], 4, 12)}, 12
    )
    # Too short to hold the 8-byte length.
    files["short.safetensors"] = b"\x10\x00\x00\x00\x00"
    for name, data in files.items():
        write_bytes(out / name, data)
    # A directory whose name looks like a shard.
    write_bytes(out / "dir.safetensors" / ".keep", b"")


# ---------------------------------------------------------------------------
# README
# ---------------------------------------------------------------------------

README = """\
# qcheck test fixtures

Generated by `scripts/make_fixtures.py` — do not edit by hand (this file included).
Regenerate with

    python3 scripts/make_fixtures.py          # rewrites every folder below
    python3 scripts/make_fixtures.py --check  # exit 1 and list files that differ

Each checkpoint folder holds real-looking metadata (config JSON files, a
`model.safetensors.index.json` where the original has one, safetensors shards)
at toy sizes: hidden 64, dense FFN 128, expert FFN 32, 4 routed experts,
q/o width 64, k/v width 16, vocab 128. Tensor data is all zero bytes; only the
headers matter. Layouts follow the qcheck spec (`engine-semantics.md`
sections 2.6 ModelOpt NVFP4, 3.5 compressed-tensors pack-quantized, 4.5 GPTQ).

Each broken checkpoint has a `-fixed` twin that differs only as described.

| folder | mirrors | defect | what the `-fixed` twin changes |
|---|---|---|---|
| `glm-nvfp4-nextn` | GLM-5.3-Flash-NVFP4 (ModelOpt 0.41.0, VLM) — bug reports 000 and 001 | NextN/MTP layer `model.language_model.layers.45.*` is stored entirely BF16 (router bias F32, no scales) while `config_groups.group_0` targets every `Linear` with NVFP4 and neither `quantization_config.ignore` (config.json) nor `exclude_modules` (hf_quant_config.json) covers layer 45 | both lists gain `model.language_model.layers.45*` and `model.layers.45*` (appended, in that order) |
| `qwen-w4a16-mtp` | Qwen3.5 VLM, compressed-tensors W4A16 (pack-quantized, group 32) exported by AutoRound — report 002, first part | the 15 `mtp.*` tensors in `model_extra_tensors.safetensors` are BF16, but `ignore` (config.json and quantization_config.json) names no `mtp.*` Linear, so `mtp.fc` etc. are declared W4A16 | `ignore` in both files gains the 8 MTP Linears (`mtp.fc`, `mtp.layers.0.self_attn.{q,k,v,o}_proj`, `mtp.layers.0.mlp.{gate,up,down}_proj`), appended |
| `qwen-gptq-mtp` | Qwen3.5 VLM, GPTQ 4-bit group 64 produced by AutoRound — report 002, second part | `dynamic: {"+:.mtp.": ...}` quantizes the MTP block (`mtp.fc` and the 7 `mtp.layers.0` Linears stored as `qweight`/`qzeros`/`scales`/`g_idx`), which the vLLM drafter cannot load | the 8 MTP Linears are stored BF16 `weight [out, in]`; `quantization_config` gains `modules_to_not_convert: ["mtp", "visual", "lm_head"]` and `dynamic` becomes `{"-:.*mtp.*": {}}` |
| `plain-bf16` | small Llama, no quantization | none (no `quantization_config`, single `model.safetensors`, no index) | — |
| `malformed/` | inputs for the safetensors header reader | one defect per file, see below | — |

Details:

* `glm-nvfp4-nextn`: only layers 0 (dense MLP), 1 and 44 (MoE: 4 routed
  experts, shared experts, BF16 router `mlp.gate` with F32
  `e_score_correction_bias`) of the 45 main layers are stored, all Linears
  NVFP4 (`weight` U8 `[out, in/2]`, `weight_scale` F8_E4M3 `[out, in/16]`,
  `weight_scale_2` and `input_scale` F32 scalars) plus `k_proj.k_scale` /
  `v_proj.v_scale`. Layer 45 has the same attention + MoE layout in BF16
  plus `eh_proj` `[64, 128]`, `enorm`, `hnorm`, `shared_head.norm`,
  `shared_head.head` `[128, 64]`. Ignore list: `lm_head`,
  `model.language_model.layers.*.mlp.gate`, `model.visual*`. Shards: 00001
  (embed, visual, layers 0–1), 00002 (layer 44, layer 45 routed experts),
  00003 (rest of layer 45, final norm, lm_head).
* `qwen-w4a16-mtp` / `qwen-gptq-mtp`: layer 0 is linear attention
  (`in_proj_qkv`, `in_proj_z`, `out_proj` quantized; `in_proj_a`/`in_proj_b`
  BF16 `[8, 64]`; `norm`, `A_log` F32, `dt_bias`, `conv1d` `[192, 1, 4]`),
  layer 1 full attention with `q_norm`/`k_norm` `[16]`; both have a dense
  quantized MLP. Vision Linears and `lm_head` are BF16. The W4A16 `ignore`
  lists those exactly: `lm_head`, layer 0 `in_proj_a`/`in_proj_b`, and the
  three vision Linears. The GPTQ fixtures have no `quantization_config.json`
  and keep the MTP block in `model-00002-of-00002.safetensors`.
* `malformed/`:
  * `length-max.safetensors` — header length bytes all `0xFF` (2^64−1).
  * `length-beyond-file.safetensors` — header length 4096, file 100 bytes.
  * `truncated.safetensors` — valid header for BF16 `[64, 64]` (8192 bytes), 4096 data bytes.
  * `nested.safetensors` — correct length; the header is `{"a":` followed by 100,000 `[`.
  * `overflow-offsets.safetensors` — U8 `[4]` with `data_offsets [0, 18446744073709551615]`.
  * `unknown-dtype.safetensors` — tensor `a` with dtype `FP4` (not upstream) beside a
    valid BF16 tensor `b`.
  * `gap.safetensors` — two BF16 `[4]` tensors at `[0, 8)` and `[16, 24)`.
  * `overlap.safetensors` — two BF16 `[4]` tensors at `[0, 8)` and `[4, 12)`.
  * `short.safetensors` — 5 bytes.
  * `dir.safetensors/` — a directory (holds `.keep` so git tracks it).
"""


def write_readme(out: Path):
    write_bytes(out / "README.md", README.encode("utf-8"))


# ---------------------------------------------------------------------------
# Driver
# ---------------------------------------------------------------------------

# Top-level entry of fixtures/ -> function writing it. These entries are owned by
# this script: they are deleted and rewritten on every run.
FIXTURES = {
    "glm-nvfp4-nextn": lambda d: glm_nvfp4_nextn(d, fixed=False),
    "glm-nvfp4-nextn-fixed": lambda d: glm_nvfp4_nextn(d, fixed=True),
    "qwen-w4a16-mtp": lambda d: qwen_w4a16_mtp(d, fixed=False),
    "qwen-w4a16-mtp-fixed": lambda d: qwen_w4a16_mtp(d, fixed=True),
    "qwen-gptq-mtp": lambda d: qwen_gptq_mtp(d, fixed=False),
    "qwen-gptq-mtp-fixed": lambda d: qwen_gptq_mtp(d, fixed=True),
    "plain-bf16": plain_bf16,
    "malformed": malformed,
}


def generate(out: Path):
    out.mkdir(parents=True, exist_ok=True)
    for name, build in FIXTURES.items():
        target = out / name
        if target.exists():
            shutil.rmtree(target)
        build(target)
    write_readme(out)


def files_under(root: Path):
    """Relative paths of all regular files of the owned entries below root."""
    found = set()
    for name in list(FIXTURES) + ["README.md"]:
        top = root / name
        if top.is_file():
            found.add(name)
        elif top.is_dir():
            for dirpath, _, filenames in os.walk(top):
                for f in filenames:
                    found.add(str((Path(dirpath) / f).relative_to(root)))
    return found


def check(out: Path) -> int:
    with tempfile.TemporaryDirectory(prefix="qcheck-fixtures-") as tmp:
        fresh = Path(tmp)
        generate(fresh)
        expected = files_under(fresh)
        present = files_under(out)
        problems = []
        for rel in sorted(expected | present):
            if rel not in present:
                problems.append(f"missing: {rel}")
            elif rel not in expected:
                problems.append(f"not generated (stale?): {rel}")
            elif not filecmp.cmp(fresh / rel, out / rel, shallow=False):
                problems.append(f"differs: {rel}")
    if problems:
        print(f"{out}: fixtures are out of date; run scripts/make_fixtures.py", file=sys.stderr)
        for p in problems:
            print(f"  {p}", file=sys.stderr)
        return 1
    print(f"{out}: {len(expected)} files up to date")
    return 0


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument(
        "--out", type=Path, default=DEFAULT_OUT, help="output folder (default: %(default)s)"
    )
    parser.add_argument(
        "--check",
        action="store_true",
        help="regenerate into a temp dir and exit 1 if any file differs from --out",
    )
    args = parser.parse_args(argv)
    if args.check:
        return check(args.out)
    generate(args.out)
    print(f"wrote {len(files_under(args.out))} files under {args.out}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
