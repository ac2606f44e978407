"""Prints what a run_bench.py result's intervals are over, for run-bench-cpu.test."""
import json
import os
import sys

sys.path.insert(0, os.path.join(os.path.dirname(__file__), "..", "..", "..", "bench"))
import benchstats  # noqa: E402

result = json.load(open(sys.argv[1]))
settings = result["settings"]
print(f"sessions {settings['sessions']}, orders {' '.join(settings['spawn_orders'])}")
for c in result["runtimes"][0]["contexts"]:
    units = c["session_medians_ms"] if c["interval_over"] == "sessions" else c["block_medians_ms"]
    theirs = "theirs" if c["median_ms"] == benchstats.median(units) else "NOT theirs"
    print(f"context {c['context']}: interval over {c['interval_over']}, {c['sessions']} sessions, "
          f"{c['blocks']} blocks, {len(c['session_medians_ms'])} session medians, median is {theirs}")
