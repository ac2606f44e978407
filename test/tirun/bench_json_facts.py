"""Prints the facts bench-cpu.test checks in a tirun bench --json file."""
import json
import statistics
import sys

r = json.load(open(sys.argv[1]))
print(f"schema {r['schema']}, model {r['model']}, device {r['device']}")
t = r["runtimes"][0]
cs = t["contexts"]
print(f"{t['name']} {t['backend']}: contexts {[c['context'] for c in cs]}, n {[c['n'] for c in cs]}, "
      f"sessions {[c['sessions'] for c in cs]}, interval over {[c['interval_over'] for c in cs]}")
print(f"floor bytes {[c['floor_bytes'] for c in cs]}")
gbs = r["bandwidth"]["gbs"]
floor_ok = all(abs(c["floor_ms"] - c["floor_bytes"] / gbs / 1e6) < 1e-12 for c in cs)
share_ok = all(abs(c["share_of_floor"] - c["floor_ms"] / c["median_ms"]) < 1e-12 for c in cs)
inside = all(c["ci95_ms"][0] <= c["median_ms"] <= c["ci95_ms"][1] for c in cs)
print(f"floor_ms = floor_bytes / bandwidth: {floor_ok}; share = floor / median: {share_ok}; "
      f"median inside its interval: {inside}")
of_sessions = all(c["median_ms"] == statistics.median(c["session_medians_ms"]) for c in cs)
minmax = all(c["ci95_ms"] == [min(c["session_medians_ms"]), max(c["session_medians_ms"])] for c in cs)
print(f"median = median of the session medians: {of_sessions}; "
      f"interval = [min, max] of {len(cs[0]['session_medians_ms'])} session medians: {minmax}")
print(f"generate: {t['generate']['tokens']} tokens")
