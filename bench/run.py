#!/usr/bin/env python3
"""Benchmark qcheck against the floor (qcheck-bench-floor) and a hand-written Python check.

Generates the synthetic checkpoints (bench/make_checkpoint.py, cached in --work), then for each
checkpoint runs every command once to warm up, then --runs rounds in which each command runs
once (the light ones first, in a shuffled order opened by each in turn, then the Python script
and `qcheck inspect`, after which the next process runs slower: see round_orders), and prints
a Markdown table
of medians. Per run: whole-process wall time (perf_counter around spawn and wait), CPU
time (user + sys of that child, from os.wait4) and peak RSS (ru_maxrss of that child).

Commands: `qcheck inspect DIR --format json`; when `qcheck lint --help` exits 0 (and shows
the subcommand's own help), also
`qcheck lint DIR` and `qcheck lint DIR --format json`; when `qcheck fix --help` does, also
`qcheck fix DIR` (a dry run: the diff goes to stdout, nothing is written);
`qcheck-bench-floor DIR`; `python3 bench/naive_lint.py DIR`. qcheck may exit 0 or 1
(1 = findings); the others must exit 0. Measured stdout goes to /dev/null.

After the table, a Targets section checks the medians against the issue's targets, with PASS or
FAIL (see TARGETS below); --json saves them too.

A profile may carry an ignore-list size: `deepseek:50000` passes --ignore-entries 50000 and is
labelled `deepseek-ignore50000`. A `+fixed` suffix (`deepseek+fixed`, labelled
`deepseek-fixed`) passes --draft-excluded: the same checkpoint with the draft excluded, as
`qcheck fix` leaves it (only the targets on every checkpoint apply to it).

Usage:
  python3 bench/run.py --qcheck build/qcheck --floor build/bench/qcheck-bench-floor \\
      [--runs 5] [--work /tmp/qcheck-bench] [--profiles deepseek,million] [--json FILE]
"""

import argparse
import hashlib
import json
import urllib.request
import os
import platform
import random
import statistics
import subprocess
import sys
import tempfile
import time

HERE = os.path.dirname(os.path.abspath(__file__))
GENERATOR = os.path.join(HERE, "make_checkpoint.py")
NAIVE = os.path.join(HERE, "naive_lint.py")

LINT_ROWS = ("qcheck lint", "qcheck lint --format json")  # the local lint rows
FLOOR_RATIO_MAX = 2.0         # lint wall / floor wall, every checkpoint
PYTHON_RATIO_MIN = 30.0       # Python wall / lint wall, on `deepseek`
PER_TENSOR_RATIO_MAX = 1.3    # per-tensor lint wall, `million` over `deepseek`
IGNORE_RATIO_MAX = 1.2        # lint wall, `X-ignoreN` over `X`
RSS_HEADER_FACTOR = 3         # peak RSS <= 3 x header bytes + 32 MiB, every qcheck row
RSS_SLACK_MIB = 32
ROUND_ORDER_SEED = 6          # the light commands' shuffles (random.Random), fixed for reruns
TARGETS = """Targets (each from this run's medians):
  lint wall / floor wall <= 2, for `qcheck lint` and `qcheck lint --format json`, every checkpoint
  Python wall / lint wall >= 30 on `deepseek`
  per-tensor lint wall of `million` <= 1.3 x that of `deepseek` (when both ran)
  lint wall of `X-ignoreN` <= 1.2 x lint wall of `X` (when both ran)
  peak RSS of every qcheck row <= 3 x header bytes + 32 MiB (the harness RSS is not subtracted)"""


def generator_stamp():
    """Regenerate the cached checkpoints whenever make_checkpoint.py changes."""
    with open(GENERATOR, "rb") as f:
        return hashlib.sha256(f.read()).hexdigest()[:16]


def ensure_checkpoint(work, spec):
    """Generates (or reuses) the checkpoint of a profile spec "name[:ignore][+fixed]"."""
    fixed = spec.endswith("+fixed")
    name, _, ignore = spec.removesuffix("+fixed").partition(":")
    ignore = int(ignore or 0)
    label = name if ignore == 0 else "%s-ignore%d" % (name, ignore)
    label += "-fixed" if fixed else ""
    folder = os.path.join(work, label)
    stamp_path = os.path.join(work, label + ".stamp.json")
    stamp = {"generator": generator_stamp(), "profile": name, "ignore_entries": ignore,
             "draft_excluded": fixed}
    if os.path.exists(stamp_path) and os.path.isdir(folder):
        with open(stamp_path, encoding="utf-8") as f:
            cached = json.load(f)
        if all(cached.get(k) == v for k, v in stamp.items()):
            print("reusing %s" % folder, file=sys.stderr)
            return label, folder, cached
    start = time.perf_counter()
    out = subprocess.run(
        [sys.executable, GENERATOR, "--profile", name, "--out", folder,
         "--ignore-entries", str(ignore)] + (["--draft-excluded"] if fixed else []),
        check=True, stdout=subprocess.PIPE, text=True).stdout
    stamp["generation_s"] = time.perf_counter() - start
    print(out.strip().splitlines()[0], file=sys.stderr)
    for field in out.strip().splitlines()[-1].split():
        key, _, value = field.partition("=")
        stamp[key] = int(value)
    with open(stamp_path, "w", encoding="utf-8") as f:
        json.dump(stamp, f, indent=2)
    return label, folder, stamp


def tail(f, size=4096):
    """The last `size` bytes of a file, as text. Never reads the whole output: see run_once."""
    f.seek(0, os.SEEK_END)
    f.seek(max(0, f.tell() - size))
    return f.read().decode(errors="replace")


def run_once(argv, capture=False):
    """Runs argv; returns (exit code, wall s, cpu s, maxrss KiB, stdout tail or None, stderr
    tail).

    Linux carries the pre-exec memory of the spawning process into the child's ru_maxrss, so
    this process must stay small: outputs go to files and only their tails are read."""
    with tempfile.TemporaryFile() as err, tempfile.TemporaryFile() as out:
        sink = out if capture else subprocess.DEVNULL
        start = time.perf_counter()
        proc = subprocess.Popen(argv, stdin=subprocess.DEVNULL, stdout=sink, stderr=err)
        _, status, usage = os.wait4(proc.pid, 0)
        wall = time.perf_counter() - start
        proc.returncode = os.waitstatus_to_exitcode(status)
        return (proc.returncode, wall, usage.ru_utime + usage.ru_stime, usage.ru_maxrss,
                tail(out) if capture else None, tail(err))


def is_heavy(label):
    """Commands whose run leaves the next process slower: the Python script (hundreds of MB)
    and `qcheck inspect` (its whole JSON listing). On the 2-core VM of stops 44-47 the first
    process after them took up to 2-3x its time (stop 47: `qcheck lint --format json` on
    `million` 214 and 238 ms right after Python, 117-124 ms otherwise)."""
    return label.startswith("python") or label.startswith("qcheck inspect")


def round_orders(labels, runs):
    """The order of each round, as indices into labels: the light commands, then the heavy ones
    (is_heavy). The light command that opens a round (the one after the last round's heavy
    ones) takes each in turn, so none follows them in more than one round of every len(light),
    and no median depends on that; the others come in a shuffled order (fixed seed, the same
    from one bench run to the next), so that no command always follows the same one. A shuffle
    of all commands left some command right after the heavy ones in three rounds of five."""
    light = [i for i, label in enumerate(labels) if not is_heavy(label)]
    heavy = [i for i, label in enumerate(labels) if is_heavy(label)]
    shuffler = random.Random(ROUND_ORDER_SEED)
    orders = []
    for r in range(runs):
        rest = light[:]
        first = [rest.pop(r % len(rest))] if rest else []
        shuffler.shuffle(rest)
        orders.append(first + rest + heavy)
    return orders


def measure_all(commands, runs):
    """Each command's warm-up run (output captured; the heavy ones first, so that the first
    round does not follow them), then `runs` rounds in which every command runs once, in the
    orders of round_orders(). Returns one row per command, in order."""
    labels = [label for label, _, _ in commands]
    rows = [None] * len(commands)
    for i in sorted(range(len(commands)), key=lambda i: not is_heavy(labels[i])):
        label, argv, ok_codes = commands[i]
        code, _, _, _, stdout, stderr = run_once(argv, capture=True)
        if code not in ok_codes:
            sys.exit("%s exited %d:\n%s" % (" ".join(argv), code, stderr))
        rows[i] = {"command": label, "argv": argv, "warmup_stdout_tail": stdout[-300:],
                   "runs": []}
    for order in round_orders(labels, runs):
        for i in order:
            label, argv, ok_codes = commands[i]
            code, wall, cpu, rss, _, stderr = run_once(argv)
            if code not in ok_codes:
                sys.exit("%s exited %d:\n%s" % (" ".join(argv), code, stderr))
            rows[i]["runs"].append({"exit": code, "wall_s": wall, "cpu_s": cpu,
                                    "maxrss_kib": rss})
    for row in rows:
        samples = row["runs"]
        row["median_wall_ms"] = statistics.median(s["wall_s"] for s in samples) * 1000
        row["median_cpu_ms"] = statistics.median(s["cpu_s"] for s in samples) * 1000
        row["peak_rss_mib"] = max(s["maxrss_kib"] for s in samples) / 1024
    return rows


def start_server(root):
    """tests/http_server.py serving ROOT as owner "bench" on 127.0.0.1; (process, endpoint)."""
    script = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "tests",
                          "http_server.py")
    proc = subprocess.Popen([sys.executable, script, "--mount", "bench=" + root],
                            stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True)
    port = int(proc.stdout.readline().strip())
    return proc, "http://127.0.0.1:%d/hub" % port


def has_subcommand(qcheck, name):
    """`qcheck NAME --help` exits 0 and prints the subcommand's help, not the main help (CLI11
    answers an unknown subcommand followed by --help with the main help and exit code 0)."""
    def help_text(argv):
        proc = subprocess.run(argv, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True)
        return proc.returncode, proc.stdout
    try:
        code, text = help_text([qcheck, name, "--help"])
        return code == 0 and text != help_text([qcheck, "--help"])[1]
    except OSError:
        return False


def command_row(result, command):
    return next((r for r in result["commands"] if r["command"] == command), None)


def evaluate_targets(results):
    """Each target of TARGETS that this run can decide, as a dict; `passed` is a bool."""
    targets = []

    def add(name, checkpoint, command, value, op, limit):
        passed = value <= limit if op == "<=" else value >= limit
        targets.append({"target": name, "checkpoint": checkpoint, "command": command,
                         "value": value, "op": op, "limit": limit, "passed": passed})

    by_label = {r["checkpoint"]: r for r in results}
    for r in results:
        for command in LINT_ROWS:
            lint = command_row(r, command)
            if lint is None:
                continue
            add("lint wall / floor wall", r["checkpoint"], command,
                lint["median_wall_ms"] / r["floor_wall_ms"], "<=", FLOOR_RATIO_MAX)
            if r["checkpoint"] == "deepseek":
                add("Python wall / lint wall", r["checkpoint"], command,
                    r["python_wall_ms"] / lint["median_wall_ms"], ">=", PYTHON_RATIO_MIN)
            if r["checkpoint"] == "million" and "deepseek" in by_label:
                small = by_label["deepseek"]
                small_lint = command_row(small, command)
                if small_lint is not None:
                    add("per-tensor lint wall, million / deepseek", r["checkpoint"], command,
                        (lint["median_wall_ms"] / r["tensors"])
                        / (small_lint["median_wall_ms"] / small["tensors"]),
                        "<=", PER_TENSOR_RATIO_MAX)
            base, sep, entries = r["checkpoint"].rpartition("-ignore")
            if sep and entries.isdigit() and base in by_label:
                base_lint = command_row(by_label[base], command)
                if base_lint is not None:
                    add("lint wall, %s / %s" % (r["checkpoint"], base), r["checkpoint"], command,
                        lint["median_wall_ms"] / base_lint["median_wall_ms"], "<=",
                        IGNORE_RATIO_MAX)
        limit_mib = RSS_HEADER_FACTOR * r["header_bytes"] / 2**20 + RSS_SLACK_MIB
        for cmd in r["commands"]:
            if cmd["command"].startswith("qcheck"):
                add("peak RSS MiB <= 3 x header MiB + 32", r["checkpoint"], cmd["command"],
                    cmd["peak_rss_mib"], "<=", limit_mib)
    return targets


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--qcheck", required=True)
    parser.add_argument("--floor", required=True)
    parser.add_argument("--runs", type=int, default=5)
    parser.add_argument("--work", default="/tmp/qcheck-bench")
    parser.add_argument("--profiles", default="deepseek,million")
    parser.add_argument("--json", metavar="FILE", help="save the raw numbers")
    parser.add_argument("--remote", action="store_true",
                        help="also lint each checkpoint as hf://bench/NAME from tests/"
                             "http_server.py on 127.0.0.1, and report the bytes it sent")
    args = parser.parse_args()

    qcheck = os.path.abspath(args.qcheck)
    floor = os.path.abspath(args.floor)
    os.makedirs(args.work, exist_ok=True)
    lint = has_subcommand(qcheck, "lint")
    fix = has_subcommand(qcheck, "fix")
    baseline_rss = min(run_once(["true"])[3] for _ in range(3))
    results = []
    for spec in args.profiles.split(","):
        label, folder, stamp = ensure_checkpoint(args.work, spec.strip())
        commands = [("qcheck inspect --format json",
                     [qcheck, "inspect", folder, "--format", "json"], (0, 1))]
        if lint:
            commands += [("qcheck lint", [qcheck, "lint", folder], (0, 1)),
                         ("qcheck lint --format json",
                          [qcheck, "lint", folder, "--format", "json"], (0, 1))]
        server = None
        if args.remote and lint:
            server, endpoint = start_server(os.path.dirname(os.path.abspath(folder)))
            os.environ["HF_ENDPOINT"] = endpoint
            commands += [("qcheck lint hf:// (loopback)",
                          [qcheck, "lint", "hf://bench/" + os.path.basename(folder)], (0, 1))]
        if fix:
            commands += [("qcheck fix (dry run)", [qcheck, "fix", folder], (0, 1))]
        commands += [("floor", [floor, folder], (0,)),
                     ("python naive_lint.py", [sys.executable, NAIVE, folder], (0,))]
        print("%s: %s ..." % (label, ", ".join(name for name, _, _ in commands)), file=sys.stderr)
        rows = measure_all(commands, args.runs)
        remote_bytes = None
        if server:
            base = os.environ["HF_ENDPOINT"].rsplit("/hub", 1)[0]
            urllib.request.urlopen(base + "/_reset").read()
            run_once([qcheck, "lint", "hf://bench/" + os.path.basename(folder)])
            remote_bytes = json.loads(urllib.request.urlopen(base + "/_stats").read())["bytes_sent"]
            server.stdin.close()
            server.wait(timeout=30)
        floor_row = next(r for r in rows if r["command"] == "floor")
        python_row = next(r for r in rows if r["command"].startswith("python"))
        files, tensors, header_bytes = (int(x) for x in floor_row["warmup_stdout_tail"].split())
        if (files, tensors, header_bytes) != (stamp["shards"], stamp["tensors"],
                                              stamp["header_bytes"]):
            sys.exit("floor counted %d files, %d tensors, %d header bytes; generator wrote %d, "
                     "%d, %d" % (files, tensors, header_bytes, stamp["shards"], stamp["tensors"],
                                 stamp["header_bytes"]))
        results.append({"checkpoint": label, "folder": folder, "tensors": tensors,
                        "shards": files, "header_bytes": header_bytes,
                        "generation_s": stamp.get("generation_s"),
                        "python_finding_count": python_row["warmup_stdout_tail"].strip(),
                        "floor_wall_ms": floor_row["median_wall_ms"],
                        "python_wall_ms": python_row["median_wall_ms"], "commands": rows,
                        "remote_bytes_sent": remote_bytes,
                        "json_bytes": sum(os.path.getsize(os.path.join(folder, f))
                                          for f in os.listdir(folder) if f.endswith(".json"))})

    print()
    print("| checkpoint | tensors | shards | header MiB | command | wall ms | CPU ms | "
          "peak RSS MiB | wall / floor | Python / this |")
    print("|---|---:|---:|---:|---|---:|---:|---:|---:|---:|")
    for r in results:
        for row in r["commands"]:
            py_ratio = ("%.2f" % (r["python_wall_ms"] / row["median_wall_ms"])
                        if row["command"].startswith("qcheck") else "")
            print("| %s | %d | %d | %.1f | `%s` | %.1f | %.1f | %.1f | %.1f | %s |" % (
                r["checkpoint"], r["tensors"], r["shards"], r["header_bytes"] / 2**20,
                row["command"], row["median_wall_ms"], row["median_cpu_ms"],
                row["peak_rss_mib"], row["median_wall_ms"] / r["floor_wall_ms"], py_ratio))
    for r in results:
        if r["remote_bytes_sent"] is not None:
            needed = r["header_bytes"] + r["json_bytes"]
            print("\n%s over loopback: %d bytes sent for %d bytes of headers + JSON (%.3fx), "
                  "HTTP headers included." % (r["checkpoint"], r["remote_bytes_sent"], needed,
                                              r["remote_bytes_sent"] / needed))
    cores = len(os.sched_getaffinity(0))  # what nproc prints
    print()
    print("nproc: %s; runs per command: %d (after one warm-up run, warm page cache); "
          "medians; peak RSS is the largest over the runs." % (cores, args.runs))
    print("RSS floor of this harness: `true` reports %.1f MiB (the spawning process's size is "
          "included in a child's ru_maxrss)." % (baseline_rss / 1024))
    if not lint:
        print("(`qcheck lint` is not available in this build; only inspect was measured.)")
    if not fix:
        print("(`qcheck fix` is not available in this build.)")

    targets = evaluate_targets(results)
    print()
    print("## Targets")
    print()
    print(TARGETS)
    print()
    if targets:
        print("| target | checkpoint | command | value | limit | result |")
        print("|---|---|---|---:|---:|---|")
        for t in targets:
            print("| %s | %s | `%s` | %.2f | %s %.2f | %s |" % (
                t["target"], t["checkpoint"], t["command"], t["value"], t["op"], t["limit"],
                "PASS" if t["passed"] else "FAIL"))
        print()
        print("%d of %d targets pass." % (sum(t["passed"] for t in targets), len(targets)))
    else:
        print("(no target can be decided from this run)")
    print("Peak RSS includes the harness floor above; undecided targets (a checkpoint pair not "
          "run) are left out.")

    if args.json:
        with open(args.json, "w", encoding="utf-8") as f:
            json.dump({"nproc": cores, "machine": platform.platform(), "runs": args.runs,
                       "harness_rss_kib": baseline_rss,
                       "qcheck": qcheck, "floor": floor, "results": results,
                       "targets": targets,
                       "targets_passed": sum(t["passed"] for t in targets),
                       "targets_total": len(targets)}, f, indent=2)


if __name__ == "__main__":
    main()
