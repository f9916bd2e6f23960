#!/usr/bin/env python3
"""Writes seed corpora for the fuzz targets from the fixture checkpoints.

Usage: make_seeds.py FIXTURES_DIR OUT_DIR

OUT_DIR/<target>/ receives one file per seed, named by the SHA-1 of its bytes (as libFuzzer
names corpus units), so re-running is idempotent:

  fuzz_safetensors  the 8-byte length, the header and at most 64 data bytes of every shard
  fuzz_config       every config.json, hf_quant_config.json and quantization_config.json
  fuzz_json_patch   the same files, alone and followed by NUL-separated entries to append
  fuzz_regex        each `re:` entry, GPTQ `dynamic` key and glob of the configs, a NUL, and a
                    module name of the same checkpoint (one it matches, one it does not)
"""

import fnmatch
import hashlib
import json
import pathlib
import re
import struct
import sys

MAX_HEADER = 24000  # larger headers (the nested-bracket fixture) would raise -max_len
CONFIG_NAMES = ("config.json", "hf_quant_config.json", "quantization_config.json")
LIST_KEYS = ("ignore", "exclude_modules", "modules_to_not_convert", "ignored_layers", "exclude",
             "llm_int8_skip_modules")


def write_seed(out_dir, data):
    out_dir.mkdir(parents=True, exist_ok=True)
    (out_dir / hashlib.sha1(data).hexdigest()).write_bytes(data)


def shard_seed(path):
    with open(path, "rb") as f:
        prefix = f.read(8)
        if len(prefix) < 8:
            return prefix
        (length,) = struct.unpack("<Q", prefix)
        if length > MAX_HEADER:
            return None
        return prefix + f.read(length + 64)


def module_names(folder):
    names = set()
    index = folder / "model.safetensors.index.json"
    if index.is_file():
        for tensor in json.loads(index.read_text()).get("weight_map", {}):
            names.add(tensor.rsplit(".", 1)[0])
    return sorted(names)


def list_entries(value, out):
    """Exclusion-list entries and dynamic keys anywhere in a config."""
    if isinstance(value, dict):
        for key, member in value.items():
            if key in LIST_KEYS and isinstance(member, list):
                out.extend(e for e in member if isinstance(e, str))
            elif key in ("dynamic", "extra_config") and isinstance(member, dict):
                out.extend(member)
            else:
                list_entries(member, out)
    elif isinstance(value, list):
        for member in value:
            list_entries(member, out)


def matcher(entry):
    """(pattern for the fuzz target, Python predicate) for one entry."""
    for prefix in ("re:", "+:", "-:"):
        if entry.startswith(prefix):
            body = entry[len(prefix):]
            try:
                compiled = re.compile(body)
            except re.error:
                return body, lambda name: False
            return body, lambda name: compiled.match(name) is not None
    return entry, lambda name: fnmatch.fnmatchcase(name, entry)


def regex_seeds(folder, configs, out_dir):
    names = module_names(folder)
    entries = []
    for config in configs:
        try:
            list_entries(json.loads(config.read_text()), entries)
        except ValueError:
            continue
    for entry in sorted(set(entries)):
        pattern, predicate = matcher(entry)
        hit = next((n for n in names if predicate(n)), None)
        miss = next((n for n in names if not predicate(n)), None)
        for name in (hit, miss):
            if name is not None:
                write_seed(out_dir, pattern.encode() + b"\0" + name.encode())


def main():
    fixtures, out = pathlib.Path(sys.argv[1]), pathlib.Path(sys.argv[2])
    for shard in sorted(fixtures.rglob("*.safetensors")):
        if shard.is_file():
            seed = shard_seed(shard)
            if seed is not None:
                write_seed(out / "fuzz_safetensors", seed)
    folders = {}
    for config in sorted(fixtures.rglob("*.json")):
        if config.name in CONFIG_NAMES:
            folders.setdefault(config.parent, []).append(config)
            data = config.read_bytes()
            write_seed(out / "fuzz_config", data)
            write_seed(out / "fuzz_json_patch", data)
            write_seed(out / "fuzz_json_patch", data + b"\0model.layers.45*\0{\"bits\":16}")
    for folder, configs in sorted(folders.items()):
        regex_seeds(folder, configs, out / "fuzz_regex")


if __name__ == "__main__":
    main()
