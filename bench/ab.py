#!/usr/bin/env python3
"""Compares two qcheck binaries on the same checkpoints, run in alternation.

Usage: ab.py [--hog MIB] [--pause SECONDS] OLD NEW DIR[,DIR...] [ROUNDS] [lint|fix]

Each round runs `OLD lint DIR` and `NEW lint DIR` (or `fix DIR`, a dry run), OLD first in even
rounds and NEW first in odd ones (the first program after another runs slower), after one
warm-up round; both see the same machine state, and a VM that drifts by 20-30% over minutes
moves both alike. Prints, per folder, the median wall time, CPU time (user + system) and peak
RSS of each, and NEW/OLD. With --pause, every run starts after the machine has been idle that
many seconds: on the 2-core bench VM, whose guest reports each free 2 MiB block to the host at
once (virtio_balloon free page reporting), such a run pays again for each 2 MiB page it touches
first (docs/performance.md, "Fresh memory" and "Cold runs"). With --hog, each run follows a
Python process that wrote MIB of memory and exited (then the pause): memory the guest frees and
reports to the host while the run waits, as after the bench's Python script.
Standard library only.
"""
import os
import statistics
import subprocess
import sys
import time


# Writes a byte in every 4 KiB page of MIB mebibytes, then exits.
HOG = "block = bytearray(%d << 20)\nfor i in range(0, len(block), 4096):\n    block[i] = 1\n"


def run(exe, command, folder):
    start = time.perf_counter()
    child = subprocess.Popen([exe, command, folder], stdout=subprocess.DEVNULL,
                             stderr=subprocess.DEVNULL)
    _, _, usage = os.wait4(child.pid, 0)
    wall = (time.perf_counter() - start) * 1000
    return wall, (usage.ru_utime + usage.ru_stime) * 1000, usage.ru_maxrss / 1024


def main():
    args = sys.argv[1:]
    pause = 0.0
    hog = 0
    while len(args) >= 2 and args[0] in ("--pause", "--hog"):
        if args[0] == "--pause":
            pause = float(args[1])
        else:
            hog = int(args[1])
        args = args[2:]
    if len(args) not in (3, 4, 5) or (len(args) == 5 and args[4] not in ("lint", "fix")):
        sys.exit(__doc__.split("\n\n")[1])
    old, new, folders = args[0], args[1], args[2].split(",")
    rounds = int(args[3]) if len(args) >= 4 else 10
    command = args[4] if len(args) == 5 else "lint"
    for folder in folders:
        samples = {old: [], new: []}
        for i in range(rounds + 1):
            for exe in ((old, new) if i % 2 == 0 else (new, old)):
                if hog:
                    subprocess.run([sys.executable, "-c", HOG % hog], check=True)
                time.sleep(pause)
                result = run(exe, command, folder)
                if i > 0:
                    samples[exe].append(result)

        def median(exe, k):
            return statistics.median(s[k] for s in samples[exe])

        print("%-24s wall %7.1f -> %7.1f ms (%.2f)  cpu %7.1f -> %7.1f ms (%.2f)  "
              "rss %6.1f -> %6.1f MiB" % (
                  os.path.basename(folder.rstrip("/")), median(old, 0), median(new, 0),
                  median(new, 0) / median(old, 0), median(old, 1), median(new, 1),
                  median(new, 1) / median(old, 1), median(old, 2), median(new, 2)))


if __name__ == "__main__":
    main()
