#!/usr/bin/env python3
"""Generate a synthetic, sparse ModelOpt NVFP4 checkpoint for benchmarking qcheck.

Each shard is written as the 8-byte little-endian header length plus the JSON header (padded
with spaces to a multiple of 8), then truncated to its full size: the data region is a hole and
costs no disk. The folder also gets model.safetensors.index.json, config.json and
hf_quant_config.json.

The quantization config does not exclude the multi-token-prediction draft, which is stored
entirely in BF16: the finding a linter must report. Everything else is either NVFP4 or named by
the ignore list. With --draft-excluded, both lists end with the entry `qcheck fix` appends for
the draft (model.layers.61* or mtp*): the checkpoint as it is published once fixed, which a
linter must pass.

Profiles:
  deepseek  DeepSeek-V3 scale: 61 layers + 1 NextN layer (model.layers.61, the undeclared
            draft), 256 experts, about 180,000 tensors, 163 shards
  million   the same structure with 1,432 experts per MoE layer: about 1,000,000 tensors,
            600 shards
  qwen35    Qwen3.5-397B-A17B scale VLM (Qwen3_5MoeForConditionalGeneration): 60 hybrid layers
            (Gated DeltaNet linear attention, full attention every 4th layer) under
            model.language_model, 512 per-expert experts plus a shared expert, a BF16 vision
            tower model.visual (excluded) and a BF16 MTP draft mtp.* (the undeclared draft):
            about 372,000 tensors, 94 shards

Usage: make_checkpoint.py --profile deepseek --out DIR [--ignore-entries N] [--draft-excluded]
The last line printed is machine-readable: "tensors=T shards=S header_bytes=B" (B counts the
JSON headers, padding included, without the 8-byte length prefixes).
"""

import argparse
import json
import os
import re
import struct
import sys
import time

HIDDEN = 7168
VOCAB = 129280
LAYERS = 61  # num_hidden_layers; the NextN layer is model.layers.61
DENSE_LAYERS = 3
INTERMEDIATE = 18432
MOE_INTERMEDIATE = 2048
Q_LORA_RANK = 1536
KV_LORA_RANK = 512
QK_ROPE_DIM = 64
HEADS = 128
QK_HEAD_DIM = 192  # nope 128 + rope 64
V_HEAD_DIM = 128
GROUP_SIZE = 16

# The entry `qcheck fix` appends to exclude each family's draft.
DRAFT_ENTRY = {"deepseek": "model.layers.%d*" % LAYERS, "qwen35": "mtp*"}

PROFILES = {
    "deepseek": {"family": "deepseek", "experts": 256, "shards": 163},
    "deepseek-single": {"family": "deepseek", "experts": 256, "shards": 1},
    "million": {"family": "deepseek", "experts": 1432, "shards": 600},
    "qwen35": {"family": "qwen35", "experts": 512, "shards": 94},
}

DTYPE_BITS = {"BF16": 16, "F32": 32, "U8": 8, "F8_E4M3": 8}

BASE_IGNORE = ["lm_head", "model.layers.*.mlp.gate"]

# Qwen3.5-397B-A17B (text_config / vision_config of Qwen3_5MoeForConditionalGeneration).
QWEN_HIDDEN = 4096
QWEN_VOCAB = 248320
QWEN_LAYERS = 60
QWEN_FULL_ATTENTION_INTERVAL = 4  # layers 3, 7, ..., 59 use full attention
QWEN_HEADS = 32
QWEN_KV_HEADS = 2
QWEN_HEAD_DIM = 256
QWEN_LINEAR_KEY_HEADS = 16
QWEN_LINEAR_VALUE_HEADS = 64
QWEN_LINEAR_KEY_DIM = 128
QWEN_LINEAR_VALUE_DIM = 128
QWEN_CONV_KERNEL = 4
QWEN_MOE_INTERMEDIATE = 1024
QWEN_SHARED_INTERMEDIATE = 1024
QWEN_EXPERTS_PER_TOKEN = 10
QWEN_MTP_LAYERS = 1
VISION_DEPTH = 27
VISION_HIDDEN = 1152
VISION_INTERMEDIATE = 4304
VISION_HEADS = 16
VISION_PATCH = 16
VISION_TEMPORAL_PATCH = 2
VISION_MERGE = 2
VISION_POSITIONS = 2304

QWEN_PREFIX = "model.language_model.layers."
# The routers (mlp.gate, shared_expert_gate) and lm_head stay BF16; the vision tower is BF16.
# Norms, conv1d, A_log and dt_bias are not Linear layers and need no entry.
QWEN_BASE_IGNORE = ["lm_head", "*mlp.gate", "*mlp.shared_expert_gate", "model.visual*"]

# (name, [out, in]) of the attention projections of every layer.
ATTENTION = [
    ("q_a_proj", [Q_LORA_RANK, HIDDEN]),
    ("q_b_proj", [HEADS * QK_HEAD_DIM, Q_LORA_RANK]),
    ("kv_a_proj_with_mqa", [KV_LORA_RANK + QK_ROPE_DIM, HIDDEN]),
    ("kv_b_proj", [HEADS * (QK_HEAD_DIM - QK_ROPE_DIM + V_HEAD_DIM), KV_LORA_RANK]),
    ("o_proj", [HIDDEN, HEADS * V_HEAD_DIM]),
]

NORMS = {
    "q_a_layernorm": Q_LORA_RANK,
    "kv_a_layernorm": KV_LORA_RANK,
}


def mlp_shapes(intermediate):
    return [
        ("down_proj", [HIDDEN, intermediate]),
        ("gate_proj", [intermediate, HIDDEN]),
        ("up_proj", [intermediate, HIDDEN]),
    ]


def linear(prefix, shape, quantized):
    """Tensors of one Linear: NVFP4 (ModelOpt) when quantized, else a BF16 weight."""
    out_features, in_features = shape
    if not quantized:
        return [(prefix + ".weight", "BF16", [out_features, in_features])]
    return [
        (prefix + ".input_scale", "F32", []),
        (prefix + ".weight", "U8", [out_features, in_features // 2]),
        (prefix + ".weight_scale", "F8_E4M3", [out_features, in_features // GROUP_SIZE]),
        (prefix + ".weight_scale_2", "F32", []),
    ]


def layer_tensors(layer, experts):
    """Every tensor of decoder layer `layer`; the NextN layer is all BF16."""
    nextn = layer == LAYERS
    quantized = not nextn
    p = "model.layers.%d" % layer
    out = [
        (p + ".input_layernorm.weight", "BF16", [HIDDEN]),
        (p + ".post_attention_layernorm.weight", "BF16", [HIDDEN]),
    ]
    for name, size in NORMS.items():
        out.append((p + ".self_attn." + name + ".weight", "BF16", [size]))
    for name, shape in ATTENTION:
        out += linear(p + ".self_attn." + name, shape, quantized)
    if layer < DENSE_LAYERS:
        for name, shape in mlp_shapes(INTERMEDIATE):
            out += linear(p + ".mlp." + name, shape, quantized)
    else:
        out.append((p + ".mlp.gate.weight", "BF16", [experts, HIDDEN]))
        out.append((p + ".mlp.gate.e_score_correction_bias", "F32", [experts]))
        proj = mlp_shapes(MOE_INTERMEDIATE)
        for e in range(experts):
            for name, shape in proj:
                out += linear("%s.mlp.experts.%d.%s" % (p, e, name), shape, quantized)
        for name, shape in proj:
            out += linear(p + ".mlp.shared_experts." + name, shape, quantized)
    if nextn:
        out += [
            (p + ".eh_proj.weight", "BF16", [HIDDEN, 2 * HIDDEN]),
            (p + ".enorm.weight", "BF16", [HIDDEN]),
            (p + ".hnorm.weight", "BF16", [HIDDEN]),
            (p + ".shared_head.norm.weight", "BF16", [HIDDEN]),
            (p + ".shared_head.head.weight", "BF16", [VOCAB, HIDDEN]),
            (p + ".embed_tokens.weight", "BF16", [VOCAB, HIDDEN]),
        ]
    out.sort()
    return out


def all_tensors(experts):
    """All tensors, in shard order: embeddings, layers 0..61, final norm, head."""
    out = [("model.embed_tokens.weight", "BF16", [VOCAB, HIDDEN])]
    for layer in range(LAYERS + 1):
        out += layer_tensors(layer, experts)
    out.append(("model.norm.weight", "BF16", [HIDDEN]))
    out.append(("lm_head.weight", "BF16", [VOCAB, HIDDEN]))
    return out


def byte_size(dtype, shape):
    n = 1
    for d in shape:
        n *= d
    return n * DTYPE_BITS[dtype] // 8


def extra_ignore(count, experts, prefix, moe_layers, absent_layer):
    """`count` exact entries, 500 globs and 100 regexes, none of which changes which modules
    any engine excludes. `prefix` is the layer prefix ("model.layers."), `moe_layers` the
    layer numbers holding experts, `absent_layer` the first layer number past the checkpoint.

    The exact entries are the router names (already excluded by the base list), then expert
    projections of layers the checkpoint does not have. No entry may contain the name of an
    existing fused MoE layer ("model.layers.3.mlp.experts"): vLLM's ModelOpt matcher excludes
    a whole FusedMoE layer when any exclude entry contains its prefix, so an entry naming even
    a non-existent expert of layer 3 would turn off quantization for all of layer 3's experts.
    Hence the globs start with "*layers." and the regexes escape their dots."""
    if count <= 0:
        return []
    out = []
    for layer in moe_layers:
        if len(out) == count:
            break
        out.append("%s%d.mlp.gate" % (prefix, layer))
    projections = ("gate_proj", "up_proj", "down_proj")
    per_layer = experts * len(projections)
    i = 0
    while len(out) < count:
        out.append("%s%d.mlp.experts.%d.%s" % (prefix, absent_layer + i // per_layer,
                                               (i // len(projections)) % experts,
                                               projections[i % len(projections)]))
        i += 1
    pattern = prefix.replace(".", r"\.")
    n = len(moe_layers)
    for i in range(500):
        out.append("*layers.%d.mlp.experts.%d.unused*" % (moe_layers[i % n], (i // n) % experts))
    for i in range(100):
        out.append(r"re:%s%d\.mlp\.experts\.%d\.unused_.*"
                   % (pattern, moe_layers[i % n], (i // n) % experts))
    return out


def deepseek_checkpoint(experts, ignore_entries):
    """(tensors in shard order, config.json, ignore list) of the deepseek/million profiles."""
    ignore = BASE_IGNORE + extra_ignore(ignore_entries, experts, "model.layers.",
                                        list(range(DENSE_LAYERS, LAYERS + 1)), LAYERS + 1)
    config = {
        "architectures": ["DeepseekV3ForCausalLM"],
        "model_type": "deepseek_v3",
        "num_hidden_layers": LAYERS,
        "num_nextn_predict_layers": 1,
        "hidden_size": HIDDEN,
        "intermediate_size": INTERMEDIATE,
        "moe_intermediate_size": MOE_INTERMEDIATE,
        "n_routed_experts": experts,
        "n_shared_experts": 1,
        "first_k_dense_replace": DENSE_LAYERS,
        "vocab_size": VOCAB,
        "torch_dtype": "bfloat16",
    }
    return all_tensors(experts), config, ignore


def bf16_linear(prefix, shape, bias=False):
    """A BF16 Linear [out, in], with its bias when `bias`."""
    out = [(prefix + ".weight", "BF16", shape)]
    if bias:
        out.append((prefix + ".bias", "BF16", [shape[0]]))
    return out


def qwen_full_attention(p, quantized):
    """Gated full attention: q_proj holds query and gate (2 x heads x head_dim rows)."""
    out = [
        (p + ".q_norm.weight", "BF16", [QWEN_HEAD_DIM]),
        (p + ".k_norm.weight", "BF16", [QWEN_HEAD_DIM]),
    ]
    for name, shape in [
            ("q_proj", [2 * QWEN_HEADS * QWEN_HEAD_DIM, QWEN_HIDDEN]),
            ("k_proj", [QWEN_KV_HEADS * QWEN_HEAD_DIM, QWEN_HIDDEN]),
            ("v_proj", [QWEN_KV_HEADS * QWEN_HEAD_DIM, QWEN_HIDDEN]),
            ("o_proj", [QWEN_HIDDEN, QWEN_HEADS * QWEN_HEAD_DIM])]:
        out += linear(p + "." + name, shape, quantized)
    return out


def qwen_linear_attention(p, quantized):
    """Gated DeltaNet: separate in_proj_qkv / in_proj_z / in_proj_b / in_proj_a (Qwen3.5; vLLM
    loads them fused as in_proj_qkvz and in_proj_ba), a depthwise conv1d, A_log, dt_bias and a
    gated RMSNorm over the value head dimension."""
    key_dim = QWEN_LINEAR_KEY_HEADS * QWEN_LINEAR_KEY_DIM
    value_dim = QWEN_LINEAR_VALUE_HEADS * QWEN_LINEAR_VALUE_DIM
    conv_dim = 2 * key_dim + value_dim
    out = [
        (p + ".conv1d.weight", "BF16", [conv_dim, 1, QWEN_CONV_KERNEL]),
        (p + ".A_log", "F32", [QWEN_LINEAR_VALUE_HEADS]),
        (p + ".dt_bias", "BF16", [QWEN_LINEAR_VALUE_HEADS]),
        (p + ".norm.weight", "BF16", [QWEN_LINEAR_VALUE_DIM]),
    ]
    for name, shape in [
            ("in_proj_qkv", [conv_dim, QWEN_HIDDEN]),
            ("in_proj_z", [value_dim, QWEN_HIDDEN]),
            ("in_proj_b", [QWEN_LINEAR_VALUE_HEADS, QWEN_HIDDEN]),
            ("in_proj_a", [QWEN_LINEAR_VALUE_HEADS, QWEN_HIDDEN]),
            ("out_proj", [QWEN_HIDDEN, value_dim])]:
        out += linear(p + "." + name, shape, quantized)
    return out


def qwen_moe(p, experts, quantized):
    """Sparse MoE block: BF16 router, per-expert projections, shared expert and its gate."""
    def proj(intermediate):
        return [("gate_proj", [intermediate, QWEN_HIDDEN]),
                ("up_proj", [intermediate, QWEN_HIDDEN]),
                ("down_proj", [QWEN_HIDDEN, intermediate])]
    out = [
        (p + ".gate.weight", "BF16", [experts, QWEN_HIDDEN]),
        (p + ".shared_expert_gate.weight", "BF16", [1, QWEN_HIDDEN]),
    ]
    for e in range(experts):
        for name, shape in proj(QWEN_MOE_INTERMEDIATE):
            out += linear("%s.experts.%d.%s" % (p, e, name), shape, quantized)
    for name, shape in proj(QWEN_SHARED_INTERMEDIATE):
        out += linear(p + ".shared_expert." + name, shape, quantized)
    return out


def qwen_layer(p, full_attention, experts, quantized):
    out = [
        (p + ".input_layernorm.weight", "BF16", [QWEN_HIDDEN]),
        (p + ".post_attention_layernorm.weight", "BF16", [QWEN_HIDDEN]),
    ]
    if full_attention:
        out += qwen_full_attention(p + ".self_attn", quantized)
    else:
        out += qwen_linear_attention(p + ".linear_attn", quantized)
    out += qwen_moe(p + ".mlp", experts, quantized)
    out.sort()
    return out


def qwen_vision():
    """The BF16 vision tower (Qwen3-VL style, no deepstack mergers)."""
    p = "model.visual"
    h, merged = VISION_HIDDEN, VISION_HIDDEN * VISION_MERGE ** 2
    out = [
        (p + ".patch_embed.proj.weight", "BF16",
         [h, 3, VISION_TEMPORAL_PATCH, VISION_PATCH, VISION_PATCH]),
        (p + ".patch_embed.proj.bias", "BF16", [h]),
        (p + ".pos_embed.weight", "BF16", [VISION_POSITIONS, h]),
    ]
    for block in range(VISION_DEPTH):
        b = "%s.blocks.%d" % (p, block)
        for norm in ("norm1", "norm2"):
            out += [(b + "." + norm + ".weight", "BF16", [h]),
                    (b + "." + norm + ".bias", "BF16", [h])]
        out += bf16_linear(b + ".attn.qkv", [3 * h, h], bias=True)
        out += bf16_linear(b + ".attn.proj", [h, h], bias=True)
        out += bf16_linear(b + ".mlp.linear_fc1", [VISION_INTERMEDIATE, h], bias=True)
        out += bf16_linear(b + ".mlp.linear_fc2", [h, VISION_INTERMEDIATE], bias=True)
    out += [(p + ".merger.norm.weight", "BF16", [h]), (p + ".merger.norm.bias", "BF16", [h])]
    out += bf16_linear(p + ".merger.linear_fc1", [merged, merged], bias=True)
    out += bf16_linear(p + ".merger.linear_fc2", [QWEN_HIDDEN, merged], bias=True)
    out.sort()
    return out


def qwen_is_full_attention(layer):
    return (layer + 1) % QWEN_FULL_ATTENTION_INTERVAL == 0


def qwen35_checkpoint(experts, ignore_entries):
    """(tensors in shard order, config.json, ignore list) of the qwen35 profile. Shard order:
    embeddings, layers 0..59, final norm, lm_head, the MTP draft (all BF16), the vision
    tower."""
    lm = "model.language_model"
    tensors = [(lm + ".embed_tokens.weight", "BF16", [QWEN_VOCAB, QWEN_HIDDEN])]
    for layer in range(QWEN_LAYERS):
        tensors += qwen_layer("%s%d" % (QWEN_PREFIX, layer), qwen_is_full_attention(layer),
                              experts, True)
    tensors.append((lm + ".norm.weight", "BF16", [QWEN_HIDDEN]))
    tensors.append(("lm_head.weight", "BF16", [QWEN_VOCAB, QWEN_HIDDEN]))
    mtp = [
        ("mtp.fc.weight", "BF16", [QWEN_HIDDEN, 2 * QWEN_HIDDEN]),
        ("mtp.pre_fc_norm_embedding.weight", "BF16", [QWEN_HIDDEN]),
        ("mtp.pre_fc_norm_hidden.weight", "BF16", [QWEN_HIDDEN]),
        ("mtp.norm.weight", "BF16", [QWEN_HIDDEN]),
    ]
    for layer in range(QWEN_MTP_LAYERS):
        mtp += qwen_layer("mtp.layers.%d" % layer, True, experts, False)
    tensors += sorted(mtp)
    tensors += qwen_vision()

    ignore = QWEN_BASE_IGNORE + extra_ignore(ignore_entries, experts, QWEN_PREFIX,
                                             list(range(QWEN_LAYERS)), QWEN_LAYERS)
    text_config = {
        "model_type": "qwen3_5_moe_text",
        "hidden_size": QWEN_HIDDEN,
        "num_hidden_layers": QWEN_LAYERS,
        "num_attention_heads": QWEN_HEADS,
        "num_key_value_heads": QWEN_KV_HEADS,
        "head_dim": QWEN_HEAD_DIM,
        "linear_conv_kernel_dim": QWEN_CONV_KERNEL,
        "linear_key_head_dim": QWEN_LINEAR_KEY_DIM,
        "linear_value_head_dim": QWEN_LINEAR_VALUE_DIM,
        "linear_num_key_heads": QWEN_LINEAR_KEY_HEADS,
        "linear_num_value_heads": QWEN_LINEAR_VALUE_HEADS,
        "full_attention_interval": QWEN_FULL_ATTENTION_INTERVAL,
        "layer_types": ["full_attention" if qwen_is_full_attention(i) else "linear_attention"
                        for i in range(QWEN_LAYERS)],
        "num_experts": experts,
        "num_experts_per_tok": QWEN_EXPERTS_PER_TOKEN,
        "moe_intermediate_size": QWEN_MOE_INTERMEDIATE,
        "shared_expert_intermediate_size": QWEN_SHARED_INTERMEDIATE,
        "mtp_num_hidden_layers": QWEN_MTP_LAYERS,
        "vocab_size": QWEN_VOCAB,
        "max_position_embeddings": 262144,
        "rms_norm_eps": 1e-06,
        "hidden_act": "silu",
        "tie_word_embeddings": False,
        "dtype": "bfloat16",
    }
    vision_config = {
        "model_type": "qwen3_5_moe_vision",
        "depth": VISION_DEPTH,
        "hidden_size": VISION_HIDDEN,
        "intermediate_size": VISION_INTERMEDIATE,
        "num_heads": VISION_HEADS,
        "in_channels": 3,
        "patch_size": VISION_PATCH,
        "temporal_patch_size": VISION_TEMPORAL_PATCH,
        "spatial_merge_size": VISION_MERGE,
        "out_hidden_size": QWEN_HIDDEN,
        "num_position_embeddings": VISION_POSITIONS,
        "hidden_act": "gelu_pytorch_tanh",
    }
    config = {
        "architectures": ["Qwen3_5MoeForConditionalGeneration"],
        "model_type": "qwen3_5_moe",
        "text_config": text_config,
        "vision_config": vision_config,
        "image_token_id": 248056,
        "video_token_id": 248057,
        "vision_start_token_id": 248053,
        "vision_end_token_id": 248054,
        "tie_word_embeddings": False,
    }
    return tensors, config, ignore


def write_json(path, value, indent=None):
    with open(path, "w", encoding="utf-8") as f:
        if indent is None:
            json.dump(value, f, separators=(",", ":"))
        else:
            json.dump(value, f, indent=indent)
        f.write("\n")


# safetensors' serializer lays a file out by dtype, descending in its Dtype enum order (F32,
# BF16, F8_E4M3, U8 here), then by name, and lists the header in that order: a shard's names
# come as a few sorted runs, not in one name order.
WRITE_RANK = {"F32": 0, "BF16": 1, "F8_E4M3": 2, "U8": 3}


def write_shard(path, tensors):
    """Writes one sparse shard; returns the header length (padding included)."""
    header = {"__metadata__": {"format": "pt"}}
    offset = 0
    for name, dtype, shape in sorted(tensors, key=lambda t: (WRITE_RANK[t[1]], t[0])):
        size = byte_size(dtype, shape)
        header[name] = {"dtype": dtype, "shape": shape, "data_offsets": [offset, offset + size]}
        offset += size
    text = json.dumps(header, separators=(",", ":")).encode("utf-8")
    text += b" " * (-len(text) % 8)
    with open(path, "wb") as f:
        f.write(struct.pack("<Q", len(text)))
        f.write(text)
        f.truncate(8 + len(text) + offset)
    return len(text), offset


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--profile", choices=sorted(PROFILES), required=True)
    parser.add_argument("--out", required=True, help="output folder (created if missing)")
    parser.add_argument("--ignore-entries", type=int, default=0, metavar="N",
                        help="append N exact ignore entries plus 500 globs and 100 re: entries")
    parser.add_argument("--draft-excluded", action="store_true",
                        help="end the ignore lists with the entry that excludes the draft")
    args = parser.parse_args()

    start = time.perf_counter()
    profile = PROFILES[args.profile]
    experts, shard_count = profile["experts"], profile["shards"]
    os.makedirs(args.out, exist_ok=True)

    build = deepseek_checkpoint if profile["family"] == "deepseek" else qwen35_checkpoint
    tensors, config, ignore = build(experts, args.ignore_entries)
    if args.draft_excluded:
        ignore = ignore + [DRAFT_ENTRY[profile["family"]]]
    names = set()
    for name, _, _ in tensors:
        if name in names:
            sys.exit("duplicate tensor name %s" % name)
        names.add(name)

    # Layer-contiguous assignment: consecutive runs of the shard order, of near-equal count.
    files = ["model-%05d-of-%05d.safetensors" % (i + 1, shard_count) for i in range(shard_count)]
    stale = re.compile(r"model-\d{5}-of-\d{5}\.safetensors")
    for name in os.listdir(args.out):
        if stale.fullmatch(name) and name not in files:
            os.remove(os.path.join(args.out, name))

    weight_map = {}
    header_bytes = 0
    total_size = 0
    total = len(tensors)
    for i, file in enumerate(files):
        chunk = tensors[i * total // shard_count:(i + 1) * total // shard_count]
        length, data = write_shard(os.path.join(args.out, file), chunk)
        header_bytes += length
        total_size += data
        for name, _, _ in chunk:
            weight_map[name] = file

    index = {"metadata": {"total_size": total_size},
             "weight_map": dict(sorted(weight_map.items()))}
    write_json(os.path.join(args.out, "model.safetensors.index.json"), index, indent=2)

    config["quantization_config"] = {
        "quant_method": "modelopt",
        "quant_algo": "NVFP4",
        "group_size": GROUP_SIZE,
        "kv_cache_scheme": {"type": "float", "num_bits": 8},
        "ignore": ignore,
    }
    write_json(os.path.join(args.out, "config.json"), config, indent=2)
    hf_quant = {
        "producer": {"name": "modelopt", "version": "0.41.0"},
        "quantization": {
            "quant_algo": "NVFP4",
            "kv_cache_quant_algo": "FP8",
            "group_size": GROUP_SIZE,
            "exclude_modules": ignore,
        },
    }
    write_json(os.path.join(args.out, "hf_quant_config.json"), hf_quant, indent=2)

    elapsed = time.perf_counter() - start
    print("%s: %d tensors in %d shards, %.1f MiB of headers, %.1f GiB of (sparse) data, "
          "%d ignore entries, %.1f s" % (args.out, total, shard_count, header_bytes / 2**20,
                                          total_size / 2**30, len(ignore), elapsed))
    print("tensors=%d shards=%d header_bytes=%d" % (total, shard_count, header_bytes))


if __name__ == "__main__":
    main()
