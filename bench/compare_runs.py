"""Two benchmark results of the same model on the same GPU, side by side: does
the second run reproduce the first?

Reads two tileinfer-bench-1 JSONs (bench/run_bench.py or tirun bench --json).
For every runtime and context measured in both, a markdown row with each run's
median [95% interval] and three checks:
- agree: the 95% interval of the shift between the runs (Hodges-Lehmann over
  the group medians the intervals are built from: blocks, sessions or samples;
  bench/benchstats.py) holds 0. This is the test of "the same distribution".
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


def inside(x, interval):
    return interval[0] <= x <= interval[1]


GROUPS = {"blocks": "block_medians_ms", "sessions": "session_medians_ms", "samples": "samples_ms"}


def groups(entry):
    """The values the entry's interval was computed over."""
    return entry.get(GROUPS.get(entry.get("interval_over", "samples"), "samples_ms")) or []


def row(context, a, b):
    """One table row and its (agree, overlap, inside) checks."""
    ia, ib = a["ci95_ms"], b["ci95_ms"]
    ma, mb = a["median_ms"], b["median_ms"]
    shift, (lo, hi) = benchstats.shift_ci95(groups(a), groups(b))
    agree = lo <= 0.0 <= hi
    overlap = ia[0] <= ib[1] and ib[0] <= ia[1]
    inside = ia[0] <= mb <= ia[1]
    yes = lambda flag: "yes" if flag else "no"
    text = (f"| {context} | {ma:.3f} [{ia[0]:.3f}, {ia[1]:.3f}] | {mb:.3f} [{ib[0]:.3f}, {ib[1]:.3f}] "
            f"| {100.0 * (mb - ma) / ma:+.2f}% | {1000 * shift:+.1f} [{1000 * lo:+.1f}, {1000 * hi:+.1f}] "
            f"| {yes(agree)} | {yes(overlap)} | {yes(inside)} |")
    return text, (agree, overlap, inside)


def compare(first, second, names):
    ra, rb = by_name(first), by_name(second)
    common = [name for name in ra if name in rb]  # in the first run's order
    if not common:
        fail("the two results share no measured runtime")
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
            text, checks = row(c, a_ctx[c], b_ctx[c])
            lines.append(text)
            counts = [k + flag for k, flag in zip(counts, checks)]
        lines.append("")
        n = len(contexts)
        summary.append(f"{name}: agree at {counts[0]} of {n} contexts, intervals overlap at "
                       f"{counts[1]} of {n}, {nb} median inside {na} interval at {counts[2]} of {n}")
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
    sys.stdout.write(text)
    if args.markdown:
        write_atomically(args.markdown, lambda f: f.write(text))


if __name__ == "__main__":
    main()
