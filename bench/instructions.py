#!/usr/bin/env python3
"""Counts the instructions two qcheck binaries execute to lint the same checkpoints.

Usage: instructions.py OLD NEW DIR[,DIR...] [lint|fix]

Runs `valgrind --tool=callgrind` on `OLD lint DIR` and `NEW lint DIR` (or `fix DIR`, a dry
run) and prints, per folder, the instructions each executed (all threads) and NEW/OLD. Unlike
wall time on a shared VM, the count does not move from one run to the next, so a change of
1-2% is visible; it does not see cache misses, page faults or waiting, so confirm a gain in
time with ab.py. Needs valgrind (the Debian package `valgrind`); standard library only
otherwise.
"""
import os
import re
import shutil
import subprocess
import sys
import tempfile


def instructions(exe, command, folder):
    with tempfile.TemporaryDirectory() as tmp:
        out = os.path.join(tmp, "callgrind.out")
        proc = subprocess.run(["valgrind", "--tool=callgrind", "--callgrind-out-file=" + out,
                               exe, command, folder],
                              stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
        found = re.search(r"Collected : (\d+)", proc.stderr)
        if not found:
            sys.exit("instructions.py: valgrind gave no count for %s on %s:\n%s"
                     % (exe, folder, proc.stderr[-2000:]))
        return int(found.group(1))


def main():
    if len(sys.argv) not in (4, 5) or (len(sys.argv) == 5 and sys.argv[4] not in ("lint", "fix")):
        sys.exit(__doc__.split("\n\n")[1])
    if shutil.which("valgrind") is None:
        sys.exit("instructions.py: valgrind is not installed (apt-get install valgrind)")
    old, new, folders = sys.argv[1], sys.argv[2], sys.argv[3].split(",")
    command = sys.argv[4] if len(sys.argv) == 5 else "lint"
    for folder in folders:
        a = instructions(old, command, folder)
        b = instructions(new, command, folder)
        print("%-24s %16s -> %16s instructions (%.3f)"
              % (os.path.basename(folder.rstrip("/")), f"{a:,}", f"{b:,}", b / a))


if __name__ == "__main__":
    main()
