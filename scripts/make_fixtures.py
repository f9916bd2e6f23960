#!/usr/bin/env python3
"""Generate the tiny checkpoint folders under fixtures/ used by qcheck's tests.

Every fixture is metadata only: config JSON files, a model.safetensors.index.json
where the real checkpoint has one, and safetensors shards whose headers describe
the real tensor layout at toy sizes and whose data regions are all zero bytes.
Output is byte-for-byte deterministic (standard library only, no network).

    python3 scripts/make_fixtures.py            # (re)write fixtures/
    python3 scripts/make_fixtures.py --out DIR  # write somewhere else
    python3 scripts/make_fixtures.py --check    # exit 1 if fixtures/ is stale

See fixtures/README.md (also written by this script) for what each folder mirrors, and
fixtures/formats/README.md for the per-format correct/broken pairs.
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
        # SGLang reads dynamic alone: the BF16 in_proj_b / in_proj_a (its fused in_proj_ba)
        # need a key of their own there.
        quantization_config["dynamic"] = {"-:.*mtp.*": {}, "-:.*linear_attn\\.in_proj_ba$": {}}
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
# fixtures/formats/: one correct checkpoint per storage format, plus broken variants
# ---------------------------------------------------------------------------

# More per-format layouts of one Linear module M with weight [out, in]


def modelopt_fp8_linear(m, out, inp):
    """ModelOpt FP8 per-tensor (static activations): F32 scalar weight and input scales."""
    return [
        tensor(f"{m}.weight", "F8_E4M3", [out, inp]),
        tensor(f"{m}.weight_scale", "F32", []),
        tensor(f"{m}.input_scale", "F32", []),
    ]


def ct_nvfp4_linear(m, out, inp):
    """compressed-tensors nvfp4-pack-quantized (W4A4, group 16, static global input scale)."""
    assert inp % 16 == 0
    return [
        tensor(f"{m}.weight_packed", "U8", [out, inp // 2]),
        tensor(f"{m}.weight_scale", "F8_E4M3", [out, inp // 16]),
        tensor(f"{m}.weight_global_scale", "F32", [1]),
        tensor(f"{m}.input_global_scale", "F32", [1]),
    ]


def ct_fp8_linear(m, out, inp):
    """compressed-tensors float-quantized FP8: per-channel weight scale, dynamic activations."""
    return [
        tensor(f"{m}.weight", "F8_E4M3", [out, inp]),
        tensor(f"{m}.weight_scale", "BF16", [out, 1]),
    ]


def gptq_packed(bits, group):
    """GPTQ (auto_gptq packing) with `bits` per weight, packed along the input dimension."""
    pack = 32 // bits

    def linear(m, out, inp):
        assert inp % group == 0 and inp % pack == 0 and out % pack == 0
        return [
            tensor(f"{m}.qweight", "I32", [inp // pack, out]),
            tensor(f"{m}.qzeros", "I32", [inp // group, out // pack]),
            tensor(f"{m}.scales", "F16", [inp // group, out]),
            tensor(f"{m}.g_idx", "I32", [inp]),
        ]

    return linear


def awq_linear(m, out, inp):
    """AWQ GEMM 4-bit, group 32, packed along the output dimension."""
    assert inp % 32 == 0 and out % 8 == 0
    return [
        tensor(f"{m}.qweight", "I32", [inp, out // 8]),
        tensor(f"{m}.qzeros", "I32", [inp // 32, out // 8]),
        tensor(f"{m}.scales", "F16", [inp // 32, out]),
    ]


FP8_BLOCK = 128  # weight_block_size [128, 128]


def fp8_block_linear(m, out, inp):
    """HF fine-grained FP8: F8_E4M3 weight, F32 weight_scale_inv per 128x128 block."""
    return [
        tensor(f"{m}.weight", "F8_E4M3", [out, inp]),
        tensor(
            f"{m}.weight_scale_inv",
            "F32",
            [math.ceil(out / FP8_BLOCK), math.ceil(inp / FP8_BLOCK)],
        ),
    ]


def f16_linear(m, out, inp):
    return [tensor(f"{m}.weight", "F16", [out, inp])]


def per_module(default, overrides):
    """A `linear` storing module m with overrides[m] when present, else with default."""

    def linear(m, out, inp):
        return overrides.get(m, default)(m, out, inp)

    return linear


def with_bias(linear, dtype="BF16"):
    """`linear` plus a `bias` [out] in dtype."""

    def biased(m, out, inp):
        return linear(m, out, inp) + [tensor(f"{m}.bias", dtype, [out])]

    return biased


# ModelOpt configs: the nested hf_quant_config.json and the flat config.json copy.

MODELOPT_PRODUCER = {"name": "modelopt", "version": "0.37.0"}


def modelopt_quant(algo, exclude, kv_algo=None, quantized_layers=None):
    """(config.json quantization_config, hf_quant_config.json) as ModelOpt exports them."""
    quantization = {"quant_algo": algo, "kv_cache_quant_algo": kv_algo}
    if algo == "NVFP4":
        quantization["group_size"] = 16
    quantization["exclude_modules"] = list(exclude)
    if quantized_layers is not None:
        quantization["quantized_layers"] = quantized_layers
    hf_quant_config = {"producer": dict(MODELOPT_PRODUCER), "quantization": quantization}

    inline = {}
    if algo == "NVFP4":
        scheme = {"dynamic": False, "num_bits": 4, "type": "float", "group_size": 16}
    elif algo == "FP8":
        scheme = {"dynamic": False, "num_bits": 8, "type": "float"}
    else:
        scheme = None
    if scheme:
        inline["config_groups"] = {
            "group_0": {
                "input_activations": dict(scheme),
                "weights": dict(scheme),
                "targets": ["Linear"],
            }
        }
    inline["ignore"] = list(exclude)
    inline["quant_algo"] = algo
    if kv_algo:
        inline["kv_cache_scheme"] = {"dynamic": False, "num_bits": 8, "type": "float"}
    if quantized_layers is not None:
        inline["quantized_layers"] = quantized_layers
    inline["producer"] = dict(MODELOPT_PRODUCER)
    inline["quant_method"] = "modelopt"
    return inline, hf_quant_config


def modelopt_checkpoint(out, config, algo, exclude, shards, **kw):
    inline, hf_quant_config = modelopt_quant(algo, exclude, **kw)
    config = dict(config, quantization_config=inline)
    write_checkpoint(out, shards, {"config.json": config, "hf_quant_config.json": hf_quant_config})


# DeepSeek-V3 style: MLA attention, dense layer 0, MoE layers 1-2, NextN at model.layers.3.

DS_LAYERS = 3  # num_hidden_layers
DS_HEADS = 4
DS_Q_LORA = 32
DS_KV_LORA = 32
DS_NOPE = 16  # qk_nope_head_dim
DS_ROPE = 8  # qk_rope_head_dim
DS_V = 16  # v_head_dim
DS_NEXTN = f"model.layers.{DS_LAYERS}"


def mla_attention(p, linear):
    a = f"{p}self_attn"
    ts = linear(f"{a}.q_a_proj", DS_Q_LORA, H) + norm(f"{a}.q_a_layernorm", DS_Q_LORA)
    ts += linear(f"{a}.q_b_proj", DS_HEADS * (DS_NOPE + DS_ROPE), DS_Q_LORA)
    ts += linear(f"{a}.kv_a_proj_with_mqa", DS_KV_LORA + DS_ROPE, H)
    ts += norm(f"{a}.kv_a_layernorm", DS_KV_LORA)
    ts += linear(f"{a}.kv_b_proj", DS_HEADS * (DS_NOPE + DS_V), DS_KV_LORA)
    ts += linear(f"{a}.o_proj", H, DS_HEADS * DS_V)
    return ts


def deepseek_layer(i, linear):
    p = f"model.layers.{i}."
    ts = mla_attention(p, linear) + layernorms(p)
    if i == 0:  # first_k_dense_replace: 1
        return ts + mlp(f"{p}mlp", linear, DENSE_FFN)
    return ts + routed_experts(p, linear) + moe_rest(p, linear)


def deepseek_nextn_bf16():
    """The NextN layer as DeepSeek ships it: a full MoE decoder layer plus the MTP extras."""
    p = f"{DS_NEXTN}."
    ts = [tensor(f"{p}embed_tokens.weight", "BF16", [VOCAB, H])]
    ts += norm(f"{p}enorm") + norm(f"{p}hnorm") + bf16_linear(f"{p}eh_proj", H, 2 * H)
    ts += deepseek_layer(DS_LAYERS, bf16_linear)
    ts += norm(f"{p}shared_head.norm") + bf16_linear(f"{p}shared_head.head", VOCAB, H)
    return ts


def deepseek_config():
    return {
        "architectures": ["DeepseekV3ForCausalLM"],
        "model_type": "deepseek_v3",
        "hidden_size": H,
        "intermediate_size": DENSE_FFN,
        "moe_intermediate_size": EXPERT_FFN,
        "num_hidden_layers": DS_LAYERS,
        "num_nextn_predict_layers": 1,
        "first_k_dense_replace": 1,
        "n_routed_experts": N_EXPERTS,
        "n_shared_experts": 1,
        "num_experts_per_tok": 2,
        "num_attention_heads": DS_HEADS,
        "num_key_value_heads": DS_HEADS,
        "q_lora_rank": DS_Q_LORA,
        "kv_lora_rank": DS_KV_LORA,
        "qk_nope_head_dim": DS_NOPE,
        "qk_rope_head_dim": DS_ROPE,
        "v_head_dim": DS_V,
        "vocab_size": VOCAB,
        "tie_word_embeddings": False,
        "torch_dtype": "bfloat16",
    }


DS_EXCLUDE = ["lm_head", "*.mlp.gate"]
DS_EXCLUDE_NEXTN = [f"{DS_NEXTN}*"]
# SGLang builds the NextN decoder under model.decoder; it loads no draft head (the target's serves).
DS_EXCLUDE_SGLANG = ["model.decoder*"]


def modelopt_deepseek(out: Path, algo, exclude):
    linear = nvfp4_linear if algo == "NVFP4" else modelopt_fp8_linear
    shard1 = [tensor("model.embed_tokens.weight", "BF16", [VOCAB, H])]
    shard1 += deepseek_layer(0, linear) + deepseek_layer(1, linear)
    shard2 = deepseek_layer(2, linear) + norm("model.norm") + bf16_linear("lm_head", VOCAB, H)
    modelopt_checkpoint(
        out,
        deepseek_config(),
        algo,
        exclude,
        {
            "model-00001-of-00003.safetensors": shard1,
            "model-00002-of-00003.safetensors": shard2,
            "model-00003-of-00003.safetensors": deepseek_nextn_bf16(),
        },
    )


# Qwen3-Next style: layer 0 linear attention, layer 1 full attention, MoE with a shared
# expert in both, top-level mtp.* draft.

QN_LA_HEADS = 8  # value heads of the gated-delta-net layer
QN_LA_QKVZ = 192  # in_proj_qkvz: q, k (4 heads x 8), v, z (8 heads x 8)
QN_LA_BA = 2 * QN_LA_HEADS  # in_proj_ba: b and a, one per value head
QN_LA_CONV = 128  # conv1d channels: q, k, v
QN_Q_OUT = 2 * Q_OUT  # full-attention q_proj carries the output gate


def qn_linear_attention(p, linear):
    la = f"{p}linear_attn"
    ts = linear(f"{la}.in_proj_qkvz", QN_LA_QKVZ, H)
    ts += linear(f"{la}.in_proj_ba", QN_LA_BA, H)
    ts += linear(f"{la}.out_proj", H, H)
    ts += norm(f"{la}.norm", H // QN_LA_HEADS)
    ts += [
        tensor(f"{la}.A_log", "F32", [QN_LA_HEADS]),
        tensor(f"{la}.dt_bias", "BF16", [QN_LA_HEADS]),
        tensor(f"{la}.conv1d.weight", "BF16", [QN_LA_CONV, 1, 4]),
    ]
    return ts


def qn_full_attention(p, linear, kv_scales=False):
    a = f"{p}self_attn"
    ts = linear(f"{a}.q_proj", QN_Q_OUT, H)
    ts += linear(f"{a}.k_proj", KV_OUT, H) + linear(f"{a}.v_proj", KV_OUT, H)
    ts += linear(f"{a}.o_proj", H, Q_OUT) + qk_norms(p)
    if kv_scales:
        ts += [tensor(f"{a}.k_proj.k_scale", "F32", []), tensor(f"{a}.v_proj.v_scale", "F32", [])]
    return ts


def qwen_moe(p, linear):
    """Routed experts, one shared expert, BF16 router and shared-expert gate."""
    ts = routed_experts(p, linear) + mlp(f"{p}mlp.shared_expert", linear, EXPERT_FFN)
    ts += [
        tensor(f"{p}mlp.gate.weight", "BF16", [N_EXPERTS, H]),
        tensor(f"{p}mlp.shared_expert_gate.weight", "BF16", [1, H]),
    ]
    return ts


def qwen3_next_config(quantization_config, mtp=True):
    config = {
        "architectures": ["Qwen3NextForCausalLM"],
        "model_type": "qwen3_next",
        "hidden_size": H,
        "num_hidden_layers": 2,
        "full_attention_interval": 2,
        "num_attention_heads": Q_OUT // HEAD_DIM,
        "num_key_value_heads": KV_OUT // HEAD_DIM,
        "head_dim": HEAD_DIM,
        "linear_num_key_heads": 4,
        "linear_num_value_heads": QN_LA_HEADS,
        "linear_key_head_dim": 8,
        "linear_value_head_dim": 8,
        "num_experts": N_EXPERTS,
        "num_experts_per_tok": 2,
        "moe_intermediate_size": EXPERT_FFN,
        "shared_expert_intermediate_size": EXPERT_FFN,
        "vocab_size": VOCAB,
        "tie_word_embeddings": False,
        "torch_dtype": "bfloat16",
    }
    if mtp:
        config["num_nextn_predict_layers"] = 1
    config["quantization_config"] = quantization_config
    return config


def qwen3_next_shards(main, mtp_fc=None, mtp_attn=None, mtp_moe=None, kv_scales=False):
    """Two shards; `main` stores the main-model Linears, mtp_* the draft (None: no draft)."""
    p0, p1 = "model.layers.0.", "model.layers.1."
    shard1 = [tensor("model.embed_tokens.weight", "BF16", [VOCAB, H])]
    shard1 += qn_linear_attention(p0, main) + qwen_moe(p0, main) + layernorms(p0)
    shard2 = qn_full_attention(p1, main, kv_scales) + qwen_moe(p1, main) + layernorms(p1)
    shard2 += norm("model.norm") + bf16_linear("lm_head", VOCAB, H)
    if mtp_fc:
        p = "mtp.layers.0."
        shard2 += mtp_fc("mtp.fc", H, 2 * H)
        shard2 += qn_full_attention(p, mtp_attn) + qwen_moe(p, mtp_moe) + layernorms(p)
        shard2 += norm("mtp.norm") + norm("mtp.pre_fc_norm_embedding")
        shard2 += norm("mtp.pre_fc_norm_hidden")
    return {
        "model-00001-of-00002.safetensors": shard1,
        "model-00002-of-00002.safetensors": shard2,
    }


# Fixture: ModelOpt MIXED_PRECISION (FP8 attention in layer 0, NVFP4 experts), Qwen3-MoE.

MIX_O_PROJ_1 = "model.layers.1.self_attn.o_proj"


def modelopt_mixed(out: Path, unlisted_fp8: bool):
    quantized_layers = {}
    storage = {}
    for m in ["q_proj", "k_proj", "v_proj", "o_proj"]:
        name = f"model.layers.0.self_attn.{m}"
        quantized_layers[name] = {"quant_algo": "FP8"}
        storage[name] = modelopt_fp8_linear
    if unlisted_fp8:
        storage[MIX_O_PROJ_1] = modelopt_fp8_linear
    for i in range(2):
        for e in range(N_EXPERTS):
            for m in ["gate_proj", "up_proj", "down_proj"]:
                name = f"model.layers.{i}.mlp.experts.{e}.{m}"
                quantized_layers[name] = {"quant_algo": "NVFP4", "group_size": 16}
                storage[name] = nvfp4_linear
    linear = per_module(bf16_linear, storage)
    shards = {}
    for i in range(2):
        p = f"model.layers.{i}."
        ts = [tensor("model.embed_tokens.weight", "BF16", [VOCAB, H])] if i == 0 else []
        ts += attention(p, linear, kv_scales=True) + qk_norms(p) + layernorms(p)
        ts += routed_experts(p, linear) + [tensor(f"{p}mlp.gate.weight", "BF16", [N_EXPERTS, H])]
        if i == 1:
            ts += norm("model.norm") + bf16_linear("lm_head", VOCAB, H)
        shards[f"model-0000{i + 1}-of-00002.safetensors"] = ts
    config = {
        "architectures": ["Qwen3MoeForCausalLM"],
        "model_type": "qwen3_moe",
        "hidden_size": H,
        "num_hidden_layers": 2,
        "num_attention_heads": Q_OUT // HEAD_DIM,
        "num_key_value_heads": KV_OUT // HEAD_DIM,
        "head_dim": HEAD_DIM,
        "num_experts": N_EXPERTS,
        "num_experts_per_tok": 2,
        "moe_intermediate_size": EXPERT_FFN,
        "vocab_size": VOCAB,
        "tie_word_embeddings": False,
        "torch_dtype": "bfloat16",
    }
    modelopt_checkpoint(
        out,
        config,
        "MIXED_PRECISION",
        ["lm_head"],
        shards,
        kv_algo="FP8",
        quantized_layers=dict(sorted(quantized_layers.items())),
    )


# Fixture: compressed-tensors nvfp4-pack-quantized, Qwen3-Next with a BF16 mtp.* draft.

CT_NVFP4_SCHEME = {
    "num_bits": 4,
    "type": "float",
    "symmetric": True,
    "strategy": "tensor_group",
    "group_size": 16,
    "dynamic": False,
    "observer": "minmax",
}
CT_NVFP4_IGNORE = [
    "lm_head",
    "re:.*mlp\\.gate$",
    "re:.*shared_expert_gate$",
    "re:.*linear_attn.*",
]
CT_NVFP4_IGNORE_MTP = ["re:mtp\\..*"]


def ct_nvfp4_qwen3_next(out: Path, ignore):
    quantization_config = {
        "quant_method": "compressed-tensors",
        "format": "nvfp4-pack-quantized",
        "quantization_status": "compressed",
        "config_groups": {
            "group_0": {
                "targets": ["Linear"],
                "weights": dict(CT_NVFP4_SCHEME),
                "input_activations": dict(CT_NVFP4_SCHEME, dynamic="local"),
                "output_activations": None,
                "format": "nvfp4-pack-quantized",
            }
        },
        "ignore": ignore,
        "kv_cache_scheme": None,
        "sparsity_config": {},
        "transform_config": {},
        "version": "0.12.2",
    }
    p0 = "model.layers.0.linear_attn."
    bf16 = {f"{p0}{m}": bf16_linear for m in ["in_proj_qkvz", "in_proj_ba", "out_proj"]}
    main = per_module(ct_nvfp4_linear, bf16)
    shards = qwen3_next_shards(main, bf16_linear, bf16_linear, bf16_linear)
    write_checkpoint(out, shards, {"config.json": qwen3_next_config(quantization_config)})


# Fixture: compressed-tensors float-quantized FP8 (dynamic), Qwen3-VL with a BF16 vision tower.

VL_VISUAL = "model.visual."


def qwen3_vl_visual():
    v = VL_VISUAL
    b = f"{v}blocks.0."
    lin = with_bias(bf16_linear)
    ts = [
        tensor(f"{v}patch_embed.proj.weight", "BF16", [H, 3, 2, 2, 2]),
        tensor(f"{v}patch_embed.proj.bias", "BF16", [H]),
        tensor(f"{v}pos_embed.weight", "BF16", [16, H]),
    ]
    for n in ["norm1", "norm2"]:
        ts += [tensor(f"{b}{n}.weight", "BF16", [H]), tensor(f"{b}{n}.bias", "BF16", [H])]
    ts += lin(f"{b}attn.qkv", 3 * H, H) + lin(f"{b}attn.proj", H, H)
    ts += lin(f"{b}mlp.linear_fc1", DENSE_FFN, H) + lin(f"{b}mlp.linear_fc2", H, DENSE_FFN)
    ts += [tensor(f"{v}merger.norm.{n}", "BF16", [H]) for n in ["weight", "bias"]]
    ts += lin(f"{v}merger.linear_fc1", 4 * H, 4 * H) + lin(f"{v}merger.linear_fc2", H, 4 * H)
    return ts


def ct_fp8_qwen3_vl(out: Path, ignore):
    quantization_config = {
        "quant_method": "compressed-tensors",
        "format": "float-quantized",
        "quantization_status": "compressed",
        "config_groups": {
            "group_0": {
                "targets": ["Linear"],
                "weights": {
                    "num_bits": 8,
                    "type": "float",
                    "symmetric": True,
                    "strategy": "channel",
                    "dynamic": False,
                    "observer": "minmax",
                },
                "input_activations": {
                    "num_bits": 8,
                    "type": "float",
                    "symmetric": True,
                    "strategy": "token",
                    "dynamic": True,
                    "observer": None,
                },
                "output_activations": None,
                "format": "float-quantized",
            }
        },
        "ignore": ignore,
        "kv_cache_scheme": None,
        "sparsity_config": {},
        "transform_config": {},
        "version": "0.12.2",
    }
    config = {
        "architectures": ["Qwen3VLForConditionalGeneration"],
        "model_type": "qwen3_vl",
        "text_config": {
            "model_type": "qwen3_vl_text",
            "hidden_size": H,
            "intermediate_size": DENSE_FFN,
            "num_hidden_layers": 2,
            "num_attention_heads": Q_OUT // HEAD_DIM,
            "num_key_value_heads": KV_OUT // HEAD_DIM,
            "head_dim": HEAD_DIM,
            "vocab_size": VOCAB,
        },
        "vision_config": {
            "model_type": "qwen3_vl",
            "depth": 1,
            "hidden_size": H,
            "out_hidden_size": H,
        },
        "tie_word_embeddings": False,
        "quantization_config": quantization_config,
    }
    lm = "model.language_model."
    shard1 = qwen3_vl_visual() + [tensor(f"{lm}embed_tokens.weight", "BF16", [VOCAB, H])]
    shard2 = []
    for i in range(2):
        p = f"{lm}layers.{i}."
        shard2 += attention(p, ct_fp8_linear) + qk_norms(p)
        shard2 += mlp(f"{p}mlp", ct_fp8_linear, DENSE_FFN) + layernorms(p)
    shard2 += norm(f"{lm}norm") + bf16_linear("lm_head", VOCAB, H)
    write_checkpoint(
        out,
        {"model-00001-of-00002.safetensors": shard1, "model-00002-of-00002.safetensors": shard2},
        {"config.json": config},
    )


# Qwen3.5-MoE VLM: layer 0 linear attention, layer 1 full attention, MoE with a shared expert,
# top-level mtp.* draft whose fc and attention are BF16.


def qwen35_moe_config(quantization_config):
    return {
        "architectures": ["Qwen3_5MoeForConditionalGeneration"],
        "model_type": "qwen3_5_moe",
        "text_config": {
            "model_type": "qwen3_5_moe_text",
            "num_hidden_layers": 2,
            "mtp_num_hidden_layers": 1,
            "hidden_size": H,
            "num_experts": N_EXPERTS,
            "num_experts_per_tok": 2,
            "moe_intermediate_size": EXPERT_FFN,
            "shared_expert_intermediate_size": EXPERT_FFN,
            "layer_types": ["linear_attention", "full_attention"],
        },
        "quantization_config": quantization_config,
    }


def qwen35_moe_shards(main, mtp_moe, kv_scales=False):
    """`main` stores the text model's Linears (in_proj_a/b, vision, routers, lm_head stay BF16);
    the draft keeps mtp.fc and its attention BF16 and stores its MoE with `mtp_moe`."""
    lm = QWEN_LM
    p0, p1 = f"{lm}layers.0.", f"{lm}layers.1."
    la = f"{p0}linear_attn"
    shard1 = [tensor(f"{lm}embed_tokens.weight", "BF16", [VOCAB, H])]
    for m, o, i in QWEN_VISUAL_LINEARS:
        shard1 += bf16_linear(m, o, i)
    shard1 += main(f"{la}.in_proj_qkv", LINEAR_ATTN_QKV, H)
    shard1 += main(f"{la}.in_proj_z", H, H)
    shard1 += main(f"{la}.out_proj", H, H)
    shard1 += bf16_linear(f"{la}.in_proj_a", LINEAR_ATTN_HEADS, H)
    shard1 += bf16_linear(f"{la}.in_proj_b", LINEAR_ATTN_HEADS, H)
    shard1 += norm(f"{la}.norm", H // LINEAR_ATTN_HEADS)
    shard1 += [
        tensor(f"{la}.A_log", "F32", [LINEAR_ATTN_HEADS]),
        tensor(f"{la}.dt_bias", "BF16", [LINEAR_ATTN_HEADS]),
        tensor(f"{la}.conv1d.weight", "BF16", [LINEAR_ATTN_QKV, 1, 4]),
    ]
    shard1 += qwen_moe(p0, main) + layernorms(p0)
    shard2 = attention(p1, main, kv_scales) + qk_norms(p1) + qwen_moe(p1, main) + layernorms(p1)
    shard2 += norm(f"{lm}norm") + bf16_linear("lm_head", VOCAB, H)
    p = "mtp.layers.0."
    shard2 += bf16_linear("mtp.fc", H, 2 * H) + attention(p, bf16_linear) + qk_norms(p)
    shard2 += qwen_moe(p, mtp_moe) + layernorms(p)
    shard2 += norm("mtp.norm") + norm("mtp.pre_fc_norm_embedding") + norm("mtp.pre_fc_norm_hidden")
    return {
        "model-00001-of-00002.safetensors": shard1,
        "model-00002-of-00002.safetensors": shard2,
    }


# Fixture: GPTQ (GPTQModel) Qwen3.5-MoE whose BF16 draft holds routed experts.


def qwen35_moe_gptq(out: Path, dynamic):
    quantization_config = {
        "quant_method": "gptq",
        "bits": 4,
        "group_size": 32,
        "sym": True,
        "desc_act": False,
        "checkpoint_format": "gptq",
        "lm_head": False,
        "true_sequential": True,
        "damp_percent": 0.01,
        "static_groups": False,
        "meta": {"quantizer": ["gptqmodel:4.2.5"]},
        "dynamic": dynamic,
    }
    write_checkpoint(
        out,
        qwen35_moe_shards(gptq_packed(4, 32), bf16_linear),
        {"config.json": qwen35_moe_config(quantization_config)},
    )


# Fixture: AutoRound (auto_round:auto_gptq packing), Qwen3 dense, per-layer extra_config.

AR_O_PROJ_0 = "model.layers.0.self_attn.o_proj"  # 8-bit
AR_DOWN_PROJ_1 = "model.layers.1.mlp.down_proj"  # kept BF16


def qwen3_dense_config(quantization_config):
    return {
        "architectures": ["Qwen3ForCausalLM"],
        "model_type": "qwen3",
        "hidden_size": H,
        "intermediate_size": DENSE_FFN,
        "num_hidden_layers": 2,
        "num_attention_heads": Q_OUT // HEAD_DIM,
        "num_key_value_heads": KV_OUT // HEAD_DIM,
        "head_dim": HEAD_DIM,
        "vocab_size": VOCAB,
        "tie_word_embeddings": False,
        "torch_dtype": "bfloat16",
        "quantization_config": quantization_config,
    }


def autoround_qwen3(out: Path, declare_bf16: bool):
    extra_config = {AR_O_PROJ_0: {"bits": 8, "group_size": 32, "sym": True}}
    if declare_bf16:
        extra_config[AR_DOWN_PROJ_1] = {"bits": 16, "data_type": "float"}
    quantization_config = {
        "quant_method": "auto-round",
        "packing_format": "auto_round:auto_gptq",
        "bits": 4,
        "group_size": 32,
        "sym": True,
        "data_type": "int",
        "iters": 200,
        "autoround_version": "0.8.0",
        "block_name_to_quantize": "model.layers",
        "extra_config": extra_config,
    }
    linear = per_module(
        gptq_packed(4, 32), {AR_O_PROJ_0: gptq_packed(8, 32), AR_DOWN_PROJ_1: bf16_linear}
    )
    ts = [tensor("model.embed_tokens.weight", "BF16", [VOCAB, H])]
    for i in range(2):
        p = f"model.layers.{i}."
        ts += attention(p, linear) + qk_norms(p) + mlp(f"{p}mlp", linear, DENSE_FFN) + layernorms(p)
    ts += norm("model.norm") + bf16_linear("lm_head", VOCAB, H)
    write_checkpoint(
        out,
        {"model.safetensors": ts},
        {
            "config.json": qwen3_dense_config(quantization_config),
            "quantization_config.json": quantization_config,
        },
        index=False,
    )


# Fixture: AWQ GEMM, Qwen2 dense (F16), one MLP kept unquantized.

AWQ_DOWN_PROJ_1 = "model.layers.1.mlp.down_proj"
AWQ_NORMS = ["input_layernorm", "post_attention_layernorm"]


def awq_qwen2(out: Path, modules_to_not_convert):
    quantization_config = {
        "quant_method": "awq",
        "bits": 4,
        "group_size": 32,
        "zero_point": True,
        "version": "gemm",
        "modules_to_not_convert": modules_to_not_convert,
    }
    config = {
        "architectures": ["Qwen2ForCausalLM"],
        "model_type": "qwen2",
        "hidden_size": H,
        "intermediate_size": DENSE_FFN,
        "num_hidden_layers": 2,
        "num_attention_heads": Q_OUT // HEAD_DIM,
        "num_key_value_heads": KV_OUT // HEAD_DIM,
        "vocab_size": VOCAB,
        "tie_word_embeddings": False,
        "torch_dtype": "float16",
        "quantization_config": quantization_config,
    }
    linear = per_module(awq_linear, {AWQ_DOWN_PROJ_1: f16_linear})
    qkv = with_bias(awq_linear, "F16")
    ts = [tensor("model.embed_tokens.weight", "F16", [VOCAB, H])]
    for i in range(2):
        p = f"model.layers.{i}."
        a = f"{p}self_attn"
        ts += qkv(f"{a}.q_proj", Q_OUT, H) + qkv(f"{a}.k_proj", KV_OUT, H)
        ts += qkv(f"{a}.v_proj", KV_OUT, H) + awq_linear(f"{a}.o_proj", H, Q_OUT)
        ts += mlp(f"{p}mlp", linear, DENSE_FFN)
        ts += [tensor(f"{p}{n}.weight", "F16", [H]) for n in AWQ_NORMS]
    ts += [tensor("model.norm.weight", "F16", [H])] + f16_linear("lm_head", VOCAB, H)
    write_checkpoint(
        out,
        {
            "model-00001-of-00002.safetensors": ts[: len(ts) // 2],
            "model-00002-of-00002.safetensors": ts[len(ts) // 2 :],
        },
        {"config.json": config},
    )


# Fixture: HF fine-grained FP8 (block 128x128), Qwen3-Next without a draft.

FP8_OUT_PROJ_0 = "model.layers.0.linear_attn.out_proj"  # kept BF16
FP8_ROUTERS = [
    f"model.layers.{i}.mlp.{m}" for i in range(2) for m in ["gate", "shared_expert_gate"]
]
FP8_NOT_CONVERT = ["lm_head", FP8_OUT_PROJ_0] + FP8_ROUTERS
FP8_NOT_CONVERT_SHORT = ["lm_head", "linear_attn.out_proj"] + FP8_ROUTERS
FP8_NOT_CONVERT_SHORT_ROUTERS = ["lm_head", FP8_OUT_PROJ_0, "mlp.gate", "mlp.shared_expert_gate"]


def fp8_block_qwen3_next(out: Path, modules_to_not_convert):
    quantization_config = {
        "quant_method": "fp8",
        "fmt": "e4m3",
        "activation_scheme": "dynamic",
        "weight_block_size": [FP8_BLOCK, FP8_BLOCK],
        "modules_to_not_convert": modules_to_not_convert,
    }
    main = per_module(fp8_block_linear, {FP8_OUT_PROJ_0: bf16_linear})
    write_checkpoint(
        out,
        qwen3_next_shards(main),
        {"config.json": qwen3_next_config(quantization_config, mtp=False)},
    )


# Fixture: MXFP4, gpt-oss layout (fused expert blocks/scales/bias per layer).

MXFP4_NOT_CONVERT = [
    "model.layers.*.self_attn",
    "model.layers.*.mlp.router",
    "model.embed_tokens",
    "lm_head",
]


def mxfp4_experts(p):
    e = f"{p}mlp.experts"
    return [
        tensor(f"{e}.gate_up_proj_blocks", "U8", [N_EXPERTS, 2 * EXPERT_FFN, H // 32, 16]),
        tensor(f"{e}.gate_up_proj_scales", "U8", [N_EXPERTS, 2 * EXPERT_FFN, H // 32]),
        tensor(f"{e}.gate_up_proj_bias", "BF16", [N_EXPERTS, 2 * EXPERT_FFN]),
        tensor(f"{e}.down_proj_blocks", "U8", [N_EXPERTS, H, EXPERT_FFN // 32, 16]),
        tensor(f"{e}.down_proj_scales", "U8", [N_EXPERTS, H, EXPERT_FFN // 32]),
        tensor(f"{e}.down_proj_bias", "BF16", [N_EXPERTS, H]),
    ]


def bf16_fused_experts(p):
    """transformers' dequantized gpt-oss experts: 3-D gate_up_proj / down_proj."""
    e = f"{p}mlp.experts"
    return [
        tensor(f"{e}.gate_up_proj", "BF16", [N_EXPERTS, H, 2 * EXPERT_FFN]),
        tensor(f"{e}.gate_up_proj_bias", "BF16", [N_EXPERTS, 2 * EXPERT_FFN]),
        tensor(f"{e}.down_proj", "BF16", [N_EXPERTS, EXPERT_FFN, H]),
        tensor(f"{e}.down_proj_bias", "BF16", [N_EXPERTS, H]),
    ]


def mxfp4_gpt_oss(out: Path, bf16_layer=None):
    not_convert = list(MXFP4_NOT_CONVERT)
    if bf16_layer is not None:
        not_convert.append(f"model.layers.{bf16_layer}.mlp.experts")
    config = {
        "architectures": ["GptOssForCausalLM"],
        "model_type": "gpt_oss",
        "hidden_size": H,
        "intermediate_size": EXPERT_FFN,
        "num_hidden_layers": 2,
        "num_local_experts": N_EXPERTS,
        "num_experts_per_tok": 2,
        "num_attention_heads": Q_OUT // HEAD_DIM,
        "num_key_value_heads": KV_OUT // HEAD_DIM,
        "head_dim": HEAD_DIM,
        "layer_types": ["sliding_attention", "full_attention"],
        "sliding_window": 128,
        "vocab_size": VOCAB,
        "tie_word_embeddings": False,
        "torch_dtype": "bfloat16",
        "quantization_config": {"quant_method": "mxfp4", "modules_to_not_convert": not_convert},
    }
    lin = with_bias(bf16_linear)
    shards = {}
    for i in range(2):
        p = f"model.layers.{i}."
        a = f"{p}self_attn"
        ts = [tensor("model.embed_tokens.weight", "BF16", [VOCAB, H])] if i == 0 else []
        ts += lin(f"{a}.q_proj", Q_OUT, H) + lin(f"{a}.k_proj", KV_OUT, H)
        ts += lin(f"{a}.v_proj", KV_OUT, H) + lin(f"{a}.o_proj", H, Q_OUT)
        ts += [tensor(f"{a}.sinks", "BF16", [Q_OUT // HEAD_DIM])]
        ts += lin(f"{p}mlp.router", N_EXPERTS, H) + layernorms(p)
        ts += bf16_fused_experts(p) if i == bf16_layer else mxfp4_experts(p)
        if i == 1:
            ts += norm("model.norm") + bf16_linear("lm_head", VOCAB, H)
        shards[f"model-0000{i}-of-00001.safetensors"] = ts  # gpt-oss numbers shards from 0
    write_checkpoint(out, shards, {"config.json": config})


# Fixture: ModelOpt NVFP4 Qwen3-Next whose draft mixes NVFP4 experts and BF16 attention/fc.

MIX_MTP_BF16 = ["mtp.fc"] + [
    f"mtp.layers.0.self_attn.{m}" for m in ["q_proj", "k_proj", "v_proj", "o_proj"]
]


def modelopt_nvfp4_qwen3_next_mix(out: Path):
    exclude = ["lm_head", "*.mlp.gate", "*.mlp.shared_expert_gate"] + MIX_MTP_BF16
    shards = qwen3_next_shards(nvfp4_linear, bf16_linear, bf16_linear, nvfp4_linear, kv_scales=True)
    modelopt_checkpoint(out, qwen3_next_config(None), "NVFP4", exclude, shards, kv_algo="FP8")


def modelopt_nvfp4_qwen35_moe_mix(out: Path):
    la = f"{QWEN_LM}layers.0.linear_attn"
    exclude = ["lm_head", "model.visual*", "*.mlp.gate", "*.mlp.shared_expert_gate"]
    exclude += [f"{la}.in_proj_a", f"{la}.in_proj_b"] + MIX_MTP_BF16
    shards = qwen35_moe_shards(nvfp4_linear, nvfp4_linear, kv_scales=True)
    modelopt_checkpoint(out, qwen35_moe_config(None), "NVFP4", exclude, shards, kv_algo="FP8")


FORMATS = {
    "modelopt-fp8-deepseek-nextn": lambda d: modelopt_deepseek(
        d, "FP8", DS_EXCLUDE + DS_EXCLUDE_NEXTN + DS_EXCLUDE_SGLANG
    ),
    "modelopt-fp8-deepseek-nextn-sglang-gap": lambda d: modelopt_deepseek(
        d, "FP8", DS_EXCLUDE + DS_EXCLUDE_NEXTN
    ),
    "modelopt-fp8-deepseek-nextn-unexcluded": lambda d: modelopt_deepseek(d, "FP8", DS_EXCLUDE),
    "modelopt-nvfp4-deepseek-nextn": lambda d: modelopt_deepseek(
        d, "NVFP4", DS_EXCLUDE + DS_EXCLUDE_NEXTN
    ),
    "modelopt-nvfp4-deepseek-nextn-unexcluded": lambda d: modelopt_deepseek(d, "NVFP4", DS_EXCLUDE),
    "modelopt-mixed-qwen3-moe": lambda d: modelopt_mixed(d, unlisted_fp8=False),
    "modelopt-mixed-qwen3-moe-unlisted": lambda d: modelopt_mixed(d, unlisted_fp8=True),
    "modelopt-nvfp4-qwen3-next-mtp-mix": modelopt_nvfp4_qwen3_next_mix,
    "modelopt-nvfp4-qwen3.5-moe-mtp-mix": modelopt_nvfp4_qwen35_moe_mix,
    "ct-nvfp4-qwen3-next-mtp": lambda d: ct_nvfp4_qwen3_next(
        d, CT_NVFP4_IGNORE + CT_NVFP4_IGNORE_MTP
    ),
    "ct-nvfp4-qwen3-next-mtp-unignored": lambda d: ct_nvfp4_qwen3_next(d, CT_NVFP4_IGNORE),
    "ct-fp8-qwen3-vl": lambda d: ct_fp8_qwen3_vl(d, ["re:.*lm_head", "re:.*visual\\..*"]),
    "ct-fp8-qwen3-vl-checkpoint-regex": lambda d: ct_fp8_qwen3_vl(
        d, ["re:.*lm_head", "re:model\\.visual\\..*"]
    ),
    "gptq-qwen3.5-moe-mtp": lambda d: qwen35_moe_gptq(
        d, {"-:.*visual.*": {}, "-:.*linear_attn\\.in_proj_ba$": {}, "-:.*mtp.*": {}}
    ),
    "gptq-qwen3.5-moe-mtp-no-negative-key": lambda d: qwen35_moe_gptq(
        d, {"-:.*visual.*": {}, "-:.*linear_attn\\.in_proj_ba$": {}}
    ),
    "autoround-qwen3": lambda d: autoround_qwen3(d, declare_bf16=True),
    "autoround-qwen3-missing-extra-config": lambda d: autoround_qwen3(d, declare_bf16=False),
    "awq-qwen2": lambda d: awq_qwen2(d, [AWQ_DOWN_PROJ_1]),
    "awq-qwen2-substring": lambda d: awq_qwen2(d, ["mlp.down_proj"]),
    "fp8-block-qwen3-next": lambda d: fp8_block_qwen3_next(d, FP8_NOT_CONVERT),
    "fp8-block-qwen3-next-short-names": lambda d: fp8_block_qwen3_next(d, FP8_NOT_CONVERT_SHORT),
    "fp8-block-qwen3-next-short-router-names": lambda d: fp8_block_qwen3_next(
        d, FP8_NOT_CONVERT_SHORT_ROUTERS
    ),
    "mxfp4-gpt-oss": lambda d: mxfp4_gpt_oss(d),
    "mxfp4-gpt-oss-bf16-experts": lambda d: mxfp4_gpt_oss(d, bf16_layer=1),
}


def formats(out: Path):
    for name, build in FORMATS.items():
        build(out / name)
    write_bytes(out / "README.md", FORMATS_README.encode("utf-8"))


FORMATS_README = """\
# qcheck format fixtures

Generated by `scripts/make_fixtures.py` (with the rest of `fixtures/`) — do not edit by hand.
Same toy sizes and zero-filled data as the fixtures one level up. Each format has a correct
checkpoint (must lint clean: a finding there is a false positive) and broken variants that
each carry one defect. Expected results follow `engine-semantics.md` (section and rule in the
last column); `tests/test_formats.cpp` asserts them.

| folder | format, model layout | what is stored / declared | expected (spec) |
|---|---|---|---|
| `modelopt-fp8-deepseek-nextn` | ModelOpt FP8 per-tensor (`weight` F8_E4M3, scalar F32 `weight_scale` and `input_scale`), `deepseek_v3`: MLA (`q_a_proj`, `q_b_proj`, `kv_a_proj_with_mqa`, `kv_b_proj`, `o_proj`), dense layer 0, per-expert MoE in layers 1-2, `num_hidden_layers` 3 | NextN `model.layers.3.*` (attention, MoE, `eh_proj`, `enorm`, `hnorm`, `shared_head.{head,norm}`, `embed_tokens`) BF16; both lists: `lm_head`, `*.mlp.gate`, `model.layers.3*`, plus SGLang's NextN decoder `model.decoder*` | clean (2.2-2.4, 6.2) |
| `modelopt-fp8-deepseek-nextn-sglang-gap` | same | lists cover the NextN only as `model.layers.3*` | QC101 for SGLang only: it builds the NextN decoder under `model.decoder` (6.2); 20 modules, not `eh_proj` (plain Linear) nor `shared_head.head` (SGLang takes the target's head) |
| `modelopt-fp8-deepseek-nextn-unexcluded` | same | no NextN entry | QC101, vLLM + SGLang + TensorRT-LLM, 22 modules (R7, R32) |
| `modelopt-nvfp4-deepseek-nextn` | ModelOpt NVFP4, same model | lists: `lm_head`, `*.mlp.gate`, `model.layers.3*` | no error/warning; QC110: SGLang's `modelopt_fp4` NextN override is what covers `model.decoder.*` (R35) |
| `modelopt-nvfp4-deepseek-nextn-unexcluded` | same | no NextN entry | QC101 for vLLM + TensorRT-LLM (22 modules), SGLang rescued (QC110) |
| `modelopt-mixed-qwen3-moe` | ModelOpt `MIXED_PRECISION`, `qwen3_moe`; KV cache FP8 (`k_proj.k_scale`, `v_proj.v_scale` on every attention) | layer 0 attention FP8, all experts NVFP4, each listed in `quantized_layers`; layer 1 attention, routers, `lm_head` BF16 and not listed | clean (2.2.2, R14, R4) |
| `modelopt-mixed-qwen3-moe-unlisted` | same | layer 1 `o_proj` stored FP8 but not in `quantized_layers` | QC102 for `model.layers.1.self_attn.o_proj` (R14) |
| `modelopt-nvfp4-qwen3-next-mtp-mix` | ModelOpt NVFP4, `qwen3_next` (linear + full attention, MoE with shared expert), `mtp.*` draft | draft experts and shared expert NVFP4 (declared); `mtp.fc` and draft q/k/v/o BF16, excluded by exact names | SGLang alone fails: QC101 for the draft's `o_proj`, which it builds as `model.layers.0.self_attn.o_proj` (`qwen3_next_mtp.py`); QC102 for main layer 1's NVFP4 q/k/v and QC110 for the draft's, as it builds every Qwen3-Next `qkv_proj` unquantized for `modelopt_fp4` (`qwen3_next.py`); no R33/R37 warning (project decision) |
| `modelopt-nvfp4-qwen3.5-moe-mtp-mix` | ModelOpt NVFP4, `qwen3_5_moe` VLM, same draft mix | as above, plus `model.visual*` and layer 0 `in_proj_a`/`in_proj_b` excluded | QC102 for SGLang on the draft experts: it builds the Qwen3.5 drafter unquantized for serialized `modelopt_fp4` (6.2, R8), and on the main layers' attention stored NVFP4, which its `qwen3_5.py` also builds unquantized for `modelopt_fp4`; plus R33, R37 |
| `ct-nvfp4-qwen3-next-mtp` | compressed-tensors `nvfp4-pack-quantized` (`weight_packed` U8, `weight_scale` F8_E4M3, `weight_global_scale`, `input_global_scale`), `qwen3_next` | linear attention, routers, `lm_head`, whole `mtp.*` draft BF16; ignore `lm_head`, `re:.*mlp\\.gate$`, `re:.*shared_expert_gate$`, `re:.*linear_attn.*`, `re:mtp\\..*` | QC101 for SGLang alone, which builds the draft under main layer 0's names; the regexes otherwise hold (3.3, 3.4, R18-R21) |
| `ct-nvfp4-qwen3-next-mtp-unignored` | same | no `re:mtp\\..*` | QC101, vLLM + SGLang, 20 draft modules |
| `ct-fp8-qwen3-vl` | compressed-tensors `float-quantized` FP8 (channel `weight_scale` BF16 `[out, 1]`), `qwen3_vl`: `model.visual.*` and `model.language_model.layers.*` | vision tower and `lm_head` BF16; ignore `re:.*lm_head`, `re:.*visual\\..*` | clean |
| `ct-fp8-qwen3-vl-checkpoint-regex` | same | ignore `re:.*lm_head`, `re:model\\.visual\\..*` | QC101 for vLLM on the 6 vision Linears (vLLM prefix `visual.*`, regexes not mapped: 3.3, 7.4, R22) plus the R22 warning |
| `gptq-qwen3.5-moe-mtp` | GPTQ 4-bit group 32 (GPTQModel), `qwen3_5_moe` VLM | main experts GPTQ; draft (`mtp.fc`, attention, per-expert MoE, shared expert) BF16; `dynamic` `-:.*visual.*`, `-:.*linear_attn\\.in_proj_ba$` (the BF16 `in_proj_b`/`in_proj_a`, which SGLang would build as GPTQ without it), `-:.*mtp.*` | QC101 for SGLang alone on the 12 draft experts: its GPTQ-Marlin config builds every fused MoE quantized before reading `dynamic`, so no key helps (fix refuses, says so); QC116 info (4.2, R23, R24) |
| `gptq-qwen3.5-moe-mtp-no-negative-key` | same | no `-:.*mtp.*` | QC101 for vLLM and SGLang on the draft (R24): vLLM on the 12 experts (its draft Linears are rescued by dtype inference), SGLang on those and the draft's Linears (it reads `dynamic` alone); fix adds `-:mtp\\..*` and leaves SGLang's experts to a human |
| `autoround-qwen3` | AutoRound `auto_round:auto_gptq`, 4-bit group 32, `qwen3` dense, single `model.safetensors` plus `quantization_config.json` | layer 0 `o_proj` 8-bit (`qweight` `[in/4, out]`), layer 1 `down_proj` BF16, both in `extra_config`; `block_name_to_quantize: "model.layers"` | clean (4.4, R26, R36) |
| `autoround-qwen3-missing-extra-config` | same | layer 1 `down_proj` BF16 without its `bits: 16` entry | QC101 for vLLM on `model.layers.1.mlp.down_proj` |
| `awq-qwen2` | AWQ GEMM 4-bit group 32 (`qweight` `[in, out/8]`), `qwen2` in F16 with q/k/v biases | layer 1 `down_proj` F16, `modules_to_not_convert` names it in full; `lm_head` F16 | clean (4.3, R25: the LM head is quantized only with `lm_head: true`) |
| `awq-qwen2-substring` | same | `modules_to_not_convert: ["mlp.down_proj"]` | QC102 for `model.layers.0.mlp.down_proj` (substring match, R25) |
| `fp8-block-qwen3-next` | HF FP8 block 128x128 (`weight_scale_inv` `[ceil(out/128), ceil(in/128)]`), `qwen3_next` without draft | layer 0 `linear_attn.out_proj`, routers, `lm_head` BF16; `modules_to_not_convert` with full names | clean (5.1, R28) |
| `fp8-block-qwen3-next-short-names` | same | `linear_attn.out_proj` instead of the full name | QC101 for vLLM only (exact match; SGLang matches on dotted boundaries) and QC121 (R27) |
| `fp8-block-qwen3-next-short-router-names` | same | routers listed as `mlp.gate`, `mlp.shared_expert_gate` | clean: they do name modules (SGLang, transformers), so no QC112, and vLLM builds Qwen3-Next's routers with `quant_config=None`, so no QC121 either |
| `mxfp4-gpt-oss` | MXFP4, `gpt_oss`: fused `mlp.experts.{gate_up,down}_proj_{blocks,scales,bias}`, attention with biases and `sinks`, `mlp.router` | attention, router, embeddings, `lm_head` BF16; the stock gpt-oss `modules_to_not_convert` | clean (5.4) |
| `mxfp4-gpt-oss-bf16-experts` | same | layer 1 experts stored BF16 (`gate_up_proj` `[E, H, 2I]`, `down_proj` `[E, I, H]`), listed in `modules_to_not_convert` | QC101 for vLLM on `model.layers.1.mlp.experts`: vLLM's MXFP4 ignores the list (5.4) |
"""


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
| `qwen-gptq-mtp` | Qwen3.5 VLM, GPTQ 4-bit group 64 produced by AutoRound — report 002, second part | `dynamic: {"+:.mtp.": ...}` quantizes the MTP block (`mtp.fc` and the 7 `mtp.layers.0` Linears stored as `qweight`/`qzeros`/`scales`/`g_idx`), which the vLLM drafter cannot load | the 8 MTP Linears are stored BF16 `weight [out, in]`; `quantization_config` gains `modules_to_not_convert: ["mtp", "visual", "lm_head"]` and `dynamic` becomes `{"-:.*mtp.*": {}, "-:.*linear_attn\\.in_proj_ba$": {}}` (SGLang reads `dynamic` alone: without the second key it builds the BF16 `in_proj_ba` as GPTQ) |
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
    "formats": formats,
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
