"""Damages a plan or a weights file in many ways and runs tirun on each result.

Every run must end with exit status 0 (the damage happened to be harmless,
e.g. a flipped byte inside a name) or 1 with exactly one line on standard
error that starts with "tirun: error: " -- never a crash, a hang, a sanitizer
report or a second line.

usage: fault_driver.py TIRUN PLAN WEIGHTS OTHER_WEIGHTS WORKDIR
"""
import os
import random
import subprocess
import sys

tirun, plan, weights, other, work = sys.argv[1:6]
rng = random.Random(20261129)
counts = {"refused": 0, "ran": 0}


def run(plan_path, weights_path, what):
    res = subprocess.run([tirun, plan_path, weights_path, "--prompt-tokens", "1,5", "-n", "2",
                          "--threads", "1"],
                         capture_output=True, text=True, timeout=120)
    err = [l for l in res.stderr.splitlines() if l.strip()]
    if res.returncode == 0:
        counts["ran"] += 1
        return
    if res.returncode != 1 or len(err) != 1 or not err[0].startswith("tirun: error: "):
        sys.exit(f"{what}: exit {res.returncode}, stderr:\n{res.stderr}")
    counts["refused"] += 1
    return err[0]


def damaged(src, name, mutate):
    data = bytearray(open(src, "rb").read())
    data = mutate(data)
    path = os.path.join(work, name)
    with open(path, "wb") as f:
        f.write(data)
    return path


plan_bytes = os.path.getsize(plan)
weights_bytes = os.path.getsize(weights)

# Random flips in the plan: one byte, then bursts of several.
for i in range(150):
    def flip(d, n=1 + (i % 5)):
        for _ in range(n):
            pos = rng.randrange(len(d))
            d[pos] ^= 1 << rng.randrange(8)
        return d
    run(damaged(plan, "flipped.fb", flip), weights, f"plan flip #{i}")

# Truncated plans.
for cut in sorted({0, 1, 7, 8, 64, plan_bytes // 3, plan_bytes // 2, plan_bytes - 1}):
    msg = run(damaged(plan, "short.fb", lambda d: d[:cut]), weights, f"plan cut at {cut}")
    if msg is None:
        sys.exit(f"a plan cut at {cut} of {plan_bytes} bytes was accepted")

# Truncated weights, flipped weight headers, a wrong magic.
for cut in sorted({0, 7, 40, 4096, weights_bytes // 2, weights_bytes - 1}):
    msg = run(plan, damaged(weights, "short.bin", lambda d: d[:cut]), f"weights cut at {cut}")
    if msg is None:
        sys.exit(f"weights cut at {cut} of {weights_bytes} bytes were accepted")
for i in range(60):
    def flip_header(d):
        pos = rng.randrange(min(len(d), 4096))
        d[pos] ^= 1 << rng.randrange(8)
        return d
    run(plan, damaged(weights, "hflip.bin", flip_header), f"weights header flip #{i}")
msg = run(plan, damaged(weights, "magic.bin", lambda d: b"NOTWEIGH" + d[8:]), "wrong magic")
assert msg and "bad magic" in msg, msg

# Weights packed for another plan.
msg = run(plan, other, "weights of another plan")
assert msg and "another plan" in msg, msg

print(f"fault runs: {counts['refused']} refused with one line, {counts['ran']} harmless")
