#!/usr/bin/env python3
"""Generate a synthetic, sparse ModelOpt NVFP4 checkpoint for benchmarking qcheck.

Each shard is written as the 8-byte little-endian header length plus the JSON header (padded
with spaces to a multiple of 8), then truncated to its full size: the data region is a hole and
costs no disk. The folder also gets model.safetensors.index.json, config.json and
hf_quant_config.json.

The quantization config does not exclude the NextN layer (model.layers.61), which is stored
entirely in BF16: the finding a linter must report.

Profiles:
  deepseek  DeepSeek-V3 scale: 61 layers + 1 NextN layer, 256 experts, about 180,000 tensors,
            163 shards
  million   the same structure with 1,432 experts per MoE layer: about 1,000,000 tensors,
            600 shards

Usage: make_checkpoint.py --profile deepseek --out DIR [--ignore-entries N]
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

PROFILES = {
    "deepseek": {"experts": 256, "shards": 163},
    "million": {"experts": 1432, "shards": 600},
}

DTYPE_BITS = {"BF16": 16, "F32": 32, "U8": 8, "F8_E4M3": 8}

BASE_IGNORE = ["lm_head", "model.layers.*.mlp.gate"]

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


def extra_ignore(count, experts):
    """`count` exact entries (router names, then non-existent expert projections), 500 globs
    and 100 regexes, none of which changes which modules are excluded."""
    if count <= 0:
        return []
    out = []
    for layer in range(DENSE_LAYERS, LAYERS + 1):
        if len(out) == count:
            break
        out.append("model.layers.%d.mlp.gate" % layer)
    layer, e = DENSE_LAYERS, 0
    while len(out) < count:
        out.append("model.layers.%d.mlp.experts.%d.unused_proj" % (layer, e))
        layer += 1
        if layer > LAYERS:
            layer, e = DENSE_LAYERS, e + 1
    moe_layers = LAYERS + 1 - DENSE_LAYERS
    for i in range(500):
        out.append("model.layers.%d.mlp.experts.%d.unused*"
                   % (DENSE_LAYERS + i % moe_layers, (i // moe_layers) % experts))
    for i in range(100):
        out.append(r"re:model\.layers\.%d\.mlp\.experts\.%d\.unused_.*"
                   % (DENSE_LAYERS + i % moe_layers, (i // moe_layers) % experts))
    return out


def write_json(path, value, indent=None):
    with open(path, "w", encoding="utf-8") as f:
        if indent is None:
            json.dump(value, f, separators=(",", ":"))
        else:
            json.dump(value, f, indent=indent)
        f.write("\n")


def write_shard(path, tensors):
    """Writes one sparse shard; returns the header length (padding included)."""
    header = {"__metadata__": {"format": "pt"}}
    offset = 0
    for name, dtype, shape in sorted(tensors):
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
    args = parser.parse_args()

    start = time.perf_counter()
    profile = PROFILES[args.profile]
    experts, shard_count = profile["experts"], profile["shards"]
    os.makedirs(args.out, exist_ok=True)

    tensors = all_tensors(experts)
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

    ignore = BASE_IGNORE + extra_ignore(args.ignore_entries, experts)
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
        "quantization_config": {
            "quant_method": "modelopt",
            "quant_algo": "NVFP4",
            "group_size": GROUP_SIZE,
            "kv_cache_scheme": {"type": "float", "num_bits": 8},
            "ignore": ignore,
        },
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
