#!/usr/bin/env python3
"""Per-wave accounting of one traced step (tirun --trace trace.json).

For each wave: its time from the previous wave's release to its own release
(the grid barrier's last departure), the slowest and median task, the median
barrier wait, its weight bytes and their ideal streaming time at the given
bandwidth. Then the same summed by opcode, and the step's total.

  python3 bench/trace_summary.py trace.json --bandwidth-gbs 4471 [--waves]
"""
import argparse
import json
import statistics
from collections import defaultdict


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("trace")
    ap.add_argument("--bandwidth-gbs", type=float, required=True)
    ap.add_argument("--waves", action="store_true", help="print every wave")
    args = ap.parse_args()
    events = [e for e in json.load(open(args.trace))["traceEvents"] if e.get("ph") == "X"]
    tasks = defaultdict(list)     # wave -> task events
    barriers = defaultdict(list)  # wave -> barrier events
    names = {}
    start = min(e["ts"] for e in events)
    for e in events:
        if e["cat"] == "barrier":
            barriers[e["args"]["wave"]].append(e)
        elif e["cat"] != "select":
            w = e["args"]["wave"]
            tasks[w].append(e)
            names[w] = (e["name"], e["cat"])
    end = max(e["ts"] + e["dur"] for e in events)
    waves = sorted(set(tasks) | set(barriers))
    prev = start
    rows = []
    for w in waves:
        ts = tasks.get(w, [])
        bs = barriers.get(w, [])
        release = max((b["ts"] + b["dur"] for b in bs), default=None)
        if release is None:
            continue  # No barrier: its time is in the next wave's.
        durs = [t["dur"] for t in ts]
        bytes_ = sum(t["args"]["weight_bytes"] for t in ts)
        waits = [b["dur"] for b in bs]
        name, cat = names.get(w, ("(end of step)", "barrier"))
        rows.append(dict(wave=w, name=name, cat=cat, time=release - prev,
                         task_max=max(durs, default=0), task_med=statistics.median(durs) if durs else 0,
                         wait_med=statistics.median(waits) if waits else 0,
                         ideal=bytes_ / (args.bandwidth_gbs * 1e3), bytes=bytes_))
        prev = release
    if args.waves:
        print(f"{'wave':>5} {'name':<22} {'opcode':<17} {'time us':>8} {'ideal':>7} {'task max':>8} {'task med':>8} {'wait med':>8}")
        for r in rows:
            print(f"{r['wave']:>5} {r['name']:<22} {r['cat']:<17} {r['time']:8.2f} {r['ideal']:7.2f} {r['task_max']:8.2f} {r['task_med']:8.2f} {r['wait_med']:8.2f}")
    by = defaultdict(lambda: [0, 0.0, 0.0, 0.0])
    for r in rows:
        b = by[r["cat"]]
        b[0] += 1; b[1] += r["time"]; b[2] += r["ideal"]; b[3] += r["time"] - r["task_max"]
    total = end - start
    print(f"step: {total:.1f} us over {len(rows)} barriers; ideal streaming {sum(r['ideal'] for r in rows):.1f} us")
    print(f"{'opcode':<17} {'waves':>5} {'time us':>9} {'ideal us':>9} {'after slowest task':>19}")
    for cat, (n, t, i, tail) in sorted(by.items(), key=lambda kv: -kv[1][1]):
        print(f"{cat:<17} {n:>5} {t:9.1f} {i:9.1f} {tail:19.1f}")


if __name__ == "__main__":
    main()
