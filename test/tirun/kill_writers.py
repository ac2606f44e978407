"""Kills tic and tipack with SIGKILL at random points of a run and checks
that the output's final name holds either the file that was there before or
the complete new one, never anything else; and that the next run removes the
temporary files the killed ones left (issue #16).

For each tool: a reference run writes the expected output and is timed; then
each round puts the old file under the output's name, starts the tool, kills
it after a random delay within 1.2x the reference's time (seeded), and
compares the output with the old file and the reference byte for byte. A
last, uninterrupted run must produce the reference and leave no temporary
file (`NAME.tmp.<pid>.XXXXXX`) beside it.

usage: kill_writers.py TIC TIPACK WORKDIR TINY_GRAPH BIG_GRAPH [--rounds N]
"""
import argparse
import filecmp
import glob
import os
import random
import shutil
import signal
import subprocess
import sys
import time

p = argparse.ArgumentParser()
for name in ("tic", "tipack", "work", "tiny_graph", "big_graph"):
    p.add_argument(name)
p.add_argument("--rounds", type=int, default=20)
args = p.parse_args()
rng = random.Random(20261205)
os.makedirs(args.work, exist_ok=True)
w = lambda name: os.path.join(args.work, name)


def run(cmd):
    subprocess.run(cmd, check=True, stdout=subprocess.DEVNULL)


def trial(tool, cmd_for, out, old, reference):
    start = time.monotonic()
    run(cmd_for(reference))
    seconds = time.monotonic() - start
    kept = {"old": 0, "new": 0}
    for _ in range(args.rounds):
        shutil.copyfile(old, out)
        proc = subprocess.Popen(cmd_for(out), stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        time.sleep(rng.uniform(0, 1.2 * seconds))
        proc.send_signal(signal.SIGKILL)
        proc.wait()
        if filecmp.cmp(out, old, shallow=False):
            kept["old"] += 1
        elif filecmp.cmp(out, reference, shallow=False):
            kept["new"] += 1
        else:
            sys.exit(f"{tool}: after SIGKILL, {out} is neither the old file nor the complete new one")
    left = glob.glob(out + ".tmp.*")
    run(cmd_for(out))
    if not filecmp.cmp(out, reference, shallow=False):
        sys.exit(f"{tool}: an uninterrupted run did not write the reference")
    stale = glob.glob(out + ".tmp.*")
    if stale:
        sys.exit(f"{tool}: the next run left {len(stale)} temporary files: {stale[:3]}")
    print(f"{tool}: {args.rounds} kills ({seconds:.2f} s a run): {kept['old']} left the old file, "
          f"{kept['new']} the new one, never another; the next run removed {len(left)} temporary files")


# tic: the big graph's plan, replacing the tiny graph's.
run([args.tic, args.tiny_graph, "-o", w("old.fb")])
trial("tic", lambda out: [args.tic, args.big_graph, "--target", "h200", "-o", out],
      w("plan.fb"), w("old.fb"), w("ref.fb"))
# tipack: the big plan's random weights, replacing another seed's.
run([args.tipack, w("ref.fb"), "--random", "--seed", "2", "-q", "-o", w("old.bin")])
trial("tipack", lambda out: [args.tipack, w("ref.fb"), "--random", "--seed", "1", "-q", "-o", out],
      w("w.bin"), w("old.bin"), w("ref.bin"))
