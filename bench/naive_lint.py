#!/usr/bin/env python3
"""The check a publisher would write by hand, as a baseline for qcheck.

Reads every *.safetensors header in DIR (struct + json), groups tensors into modules (tensor
name minus its last component), calls a module unquantized when it has a BF16/F16/F32 `weight`
and no weight_scale/weight_packed/qweight, and matches the unquantized modules with a 2-D
weight against the config's ignore list with fnmatch semantics. Token embeddings are skipped:
they are not Linear layers, so no ignore list names them.

Each pattern is compiled once (fnmatch.translate + re.compile, what fnmatch.fnmatch does on
POSIX). Calling fnmatch.fnmatch directly would recompile on every call once the list outgrows
its 32,768-entry pattern cache: about 120 us per call, over an hour for a 50,000-entry list.

Usage: naive_lint.py DIR
Prints the number of unquantized modules the ignore list does not exclude.
"""

import fnmatch
import json
import os
import re
import struct
import sys

FLOAT_DTYPES = {"BF16", "F16", "F32"}
QUANT_PARAMS = {"weight_scale", "weight_packed", "qweight"}


def read_header(path):
    with open(path, "rb") as f:
        (length,) = struct.unpack("<Q", f.read(8))
        return json.loads(f.read(length))


def ignore_list(folder):
    with open(os.path.join(folder, "config.json"), encoding="utf-8") as f:
        config = json.load(f)
    quant = config.get("quantization_config", {})
    for key in ("ignore", "modules_to_not_convert", "exclude_modules"):
        if quant.get(key):
            return quant[key]
    path = os.path.join(folder, "hf_quant_config.json")
    if os.path.exists(path):
        with open(path, encoding="utf-8") as f:
            return json.load(f).get("quantization", {}).get("exclude_modules", [])
    return []


def main():
    if len(sys.argv) != 2:
        sys.exit("usage: naive_lint.py DIR")
    folder = sys.argv[1]
    modules = {}
    for name in sorted(os.listdir(folder)):
        if not name.endswith(".safetensors"):
            continue
        for tensor, entry in read_header(os.path.join(folder, name)).items():
            if tensor == "__metadata__":
                continue
            module, _, param = tensor.rpartition(".")
            modules.setdefault(module, {})[param] = entry

    ignore = [re.compile(fnmatch.translate(p)).match for p in ignore_list(folder)]
    missing = []
    for module, params in sorted(modules.items()):
        weight = params.get("weight")
        if weight is None or weight["dtype"] not in FLOAT_DTYPES:
            continue
        if QUANT_PARAMS & params.keys() or len(weight["shape"]) != 2:
            continue
        if module.endswith("embed_tokens"):
            continue
        if not any(match(module) for match in ignore):
            missing.append(module)
    print(len(missing))


if __name__ == "__main__":
    main()
