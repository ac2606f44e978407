"""best_of.py N LIMIT CMD...: runs CMD N times; fails unless it succeeds every
time and its fastest run takes at most LIMIT seconds."""
import subprocess
import sys
import time

n, limit, cmd = int(sys.argv[1]), float(sys.argv[2]), sys.argv[3:]
best = float("inf")
for _ in range(n):
    start = time.perf_counter()
    subprocess.run(cmd, check=True)
    best = min(best, time.perf_counter() - start)
print(f"best of {n}: {best:.3f} s (limit {limit} s)")
sys.exit(0 if best <= limit else 1)
