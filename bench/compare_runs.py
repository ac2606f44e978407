"""Two benchmark results of the same model on the same GPU, side by side: does
the second run reproduce the first?

Reads two tileinfer-bench-1 JSONs (bench/run_bench.py, or tirun bench --json
with 6 sessions or more: its intervals are over steps below that).
For every runtime and context measured in both, a markdown row with each run's
median [95% interval] and three checks:
- agree: the 95% interval of the shift between the runs (Hodges-Lehmann over
  the group medians the intervals are built from, blocks or sessions, which
  must be the same in both runs; bench/benchstats.py) holds 0. This is the
  test of "the same distribution". The shift is the median of all
  differences between the two runs' groups, so it can differ in sign from
  the difference of the two medians when the groups spread widely.
- overlap: the two intervals overlap.
- inside: the second run's median lies inside the first run's interval. Even
  when both runs measure one distribution this fails about one time in six:
  two medians with equal standard errors s differ by less than 1.96 s only
  with probability P(|Z| < 1.96 / sqrt 2), about 83%.
Then the generation rates of both runs, and per runtime the counts.

  python3 bench/compare_runs.py first.json second.json [--markdown table.md] [--names A,B]

Standard library only, so it runs wherever the results are.
"""
import argparse
import sys

import bench_result
import benchstats
from atomic_file import write_atomically


fail = bench_result.failer("compare_runs")


def by_name(result):
    """name -> runtime entry, for runtimes with measured contexts."""
    return {rt["name"]: rt for rt in result.get("runtimes", []) if rt.get("contexts")}


# The group medians an interval is computed over. Single steps are not a unit
# two runs can be compared by: steps of one process are not independent.
GROUPS = {"blocks": "block_medians_ms", "sessions": "session_medians_ms"}


def groups(name, context, a, b):
    """The two entries' group medians, when both runs grouped the same way."""
    unit_a, unit_b = a.get("interval_over"), b.get("interval_over")
    where = f"{name} at context {context}"
    if unit_a not in GROUPS or unit_b not in GROUPS:
        fail(f"{where}: intervals over {unit_a} and {unit_b}; compare results whose intervals "
             f"are over {' or '.join(GROUPS)} (tirun bench --sessions 6 or more, or run_bench.py)")
    if unit_a != unit_b:
        fail(f"{where}: intervals over {unit_a} in one run and {unit_b} in the other; "
             f"compare runs made the same way")
    ga, gb = a.get(GROUPS[unit_a]), b.get(GROUPS[unit_a])
    if not ga or not gb:
        fail(f"{where}: no {GROUPS[unit_a]} in both results")
    return ga, gb


def row(name, context, a, b):
    """One table row and its (agree, overlap, inside) checks."""
    ia, ib = a["ci95_ms"], b["ci95_ms"]
    ma, mb = a["median_ms"], b["median_ms"]
    try:
        shift, (lo, hi) = benchstats.shift_ci95(*groups(name, context, a, b))
    except ValueError as e:
        fail(f"{name} at context {context}: {e}")
    agree = lo <= 0.0 <= hi
    overlap = ia[0] <= ib[1] and ib[0] <= ia[1]
    inside = ia[0] <= mb <= ia[1]
    yes = lambda flag: "yes" if flag else "no"
    us = lambda ms: f"{1000 * ms:+.1f}"
    text = (f"| {context} | {ma:.3f} [{ia[0]:.3f}, {ia[1]:.3f}] "
            f"| {mb:.3f} [{ib[0]:.3f}, {ib[1]:.3f}] | {100.0 * (mb - ma) / ma:+.2f}% "
            f"| {us(shift)} [{us(lo)}, {us(hi)}] | {yes(agree)} | {yes(overlap)} | {yes(inside)} |")
    return text, (agree, overlap, inside)


def compare(first, second, names):
    ra, rb = by_name(first), by_name(second)
    common = [name for name in ra if name in rb]  # in the first run's order
    if not common:
        fail("the two results share no measured runtime")
    for key in ("model", "device"):
        if first.get(key) != second.get(key):
            fail(f"the two results differ in {key}: {first.get(key)} and {second.get(key)}")
    na, nb = names
    lines = [f"Runs compared: {na} ({first.get('date', '?')}, floor at "
             f"{first.get('bandwidth', {}).get('gbs', 0):.1f} GB/s) and {nb} "
             f"({second.get('date', '?')}, {second.get('bandwidth', {}).get('gbs', 0):.1f} GB/s), "
             f"{first.get('device', '?')}.", ""]
    summary = []
    for name in common:
        a_ctx = {c["context"]: c for c in ra[name]["contexts"] if c.get("ci95_ms")}
        b_ctx = {c["context"]: c for c in rb[name]["contexts"] if c.get("ci95_ms")}
        contexts = sorted(set(a_ctx) & set(b_ctx))
        if not contexts:
            continue
        lines += [f"**{ra[name].get('label', name)}**", "",
                  f"| context | {na} ms [95%] | {nb} ms [95%] | medians {nb} - {na} "
                  f"| shift µs [95%] | agree | overlap | inside |",
                  "|---:|---:|---:|---:|---:|:---:|:---:|:---:|"]
        counts = [0, 0, 0]
        for c in contexts:
            text, checks = row(name, c, a_ctx[c], b_ctx[c])
            lines.append(text)
            counts = [k + flag for k, flag in zip(counts, checks)]
        lines.append("")
        n = len(contexts)
        summary.append(f"{name}: agree at {counts[0]} of {n} contexts, intervals overlap at "
                       f"{counts[1]} of {n}, {nb} median inside {na} interval at "
                       f"{counts[2]} of {n}")
    if not summary:
        fail("no runtime has an interval at a context of both results")
    lines += [f"| runtime | {na} tokens/s | {nb} tokens/s | {nb} - {na} |", "|---|---:|---:|---:|"]
    for name in common:
        ga, gb = ra[name].get("generate") or {}, rb[name].get("generate") or {}
        ta, tb = ga.get("tokens_per_s"), gb.get("tokens_per_s")
        if ta and tb:
            lines.append(f"| {ra[name].get('label', name)} | {ta:.1f} | {tb:.1f} | "
                         f"{100.0 * (tb - ta) / ta:+.1f}% |")
    lines += ["", *summary]
    return "\n".join(lines) + "\n"


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("first")
    ap.add_argument("second")
    ap.add_argument("--names", default="first,second", help="the two runs' names, comma-separated")
    ap.add_argument("--markdown", help="also write the comparison to this file")
    args = ap.parse_args()
    names = args.names.split(",")
    if len(names) != 2 or not all(names):
        fail(f"--names wants two names, got '{args.names}'")
    text = compare(bench_result.load(args.first, fail), bench_result.load(args.second, fail), names)
    if args.markdown:
        try:
            write_atomically(args.markdown, lambda f: f.write(text))
        except OSError as e:
            fail(f"--markdown {args.markdown}: {e.strerror}")
    sys.stdout.write(text)


if __name__ == "__main__":
    main()
