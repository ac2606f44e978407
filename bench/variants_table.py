"""Variants of one model's decode step, side by side: a plan made from another
target file, or run by another build of tirun, against the first variant,
over rounds run alternately in one machine start.

A performance step compares a change with main's plan on the same GPU. Two
processes in a row differ by about a percent (clocks, the floor each process
measures), so each variant runs once a round, the variants in turn, and the
table gives every round's median step beside its share of that process's
floor; then, per variant, the median over the rounds and its change against
the first variant's (positive: slower). scripts/device/variants-check.sh runs
the rounds on the lent GPU and calls this.

  python3 bench/variants_table.py NAME=result.json [NAME=result.json ...] [--markdown table.md]

Each result is a tileinfer-bench-1 JSON of `tirun bench --json` with one
runtime; a NAME given more than once is that variant's next round, in order.
Every result must be of the same model on the same device. Standard library
only, so it runs wherever the results are.
"""
import argparse
import statistics
import sys

import bench_result
from atomic_file import write_atomically


fail = bench_result.failer("variants_table")


def parse_runs(pairs):
    """[(name, [result, ...])] in the order the names first appear."""
    runs = {}
    for pair in pairs:
        name, sep, path = pair.partition("=")
        if not sep or not name or not path:
            fail(f"'{pair}' is not NAME=result.json")
        runs.setdefault(name, []).append((path, bench_result.load(path, fail)))
    return list(runs.items())


def check_same_run(runs):
    """The model and device every result shares."""
    first = None
    for _, rounds in runs:
        for path, result in rounds:
            key = (result.get("model"), result.get("device"))
            if first is None:
                first = key
            elif key != first:
                fail(f"{path}: {key[0]} on {key[1]}, where the first result is "
                     f"{first[0]} on {first[1]}")
            runtimes = [rt for rt in result.get("runtimes", []) if rt.get("contexts")]
            if len(runtimes) != 1:
                fail(f"{path}: {len(runtimes)} runtimes with measured contexts, not one")
    return first


def cells(result):
    """context -> (median ms, share of floor) of the result's one runtime."""
    rt = next(rt for rt in result["runtimes"] if rt.get("contexts"))
    return {c["context"]: (c["median_ms"], c["share_of_floor"]) for c in rt["contexts"]}


def table_rows(runs):
    """One row per context and variant: name, context, rounds' cells, median
    ms, median share, change against the first variant (None where either
    lacks the context)."""
    per = [(name, [cells(r) for _, r in rounds]) for name, rounds in runs]
    contexts = sorted({c for _, rounds in per for cs in rounds for c in cs})
    rounds = max(len(rs) for _, rs in per)
    rows = []
    for context in contexts:
        base = None
        for i, (name, rs) in enumerate(per):
            got = [cs[context] for cs in rs if context in cs]
            ms = statistics.median(m for m, _ in got) if got else None
            share = statistics.median(s for _, s in got) if got else None
            if i == 0:
                base = ms
            change = ms / base - 1 if ms is not None and base and i > 0 else None
            each = [cs.get(context) for cs in rs] + [None] * (rounds - len(rs))
            rows.append((name, context, each, ms, share, change))
    return rounds, rows


def fmt_cell(cell):
    return f"{cell[0]:.4f} ({100 * cell[1]:.1f}%)" if cell else "-"


def fmt_change(change):
    return f"{100 * change:+.1f}%" if change is not None else "-"


def text(model, device, rounds, rows, baseline):
    width = max(len("variant"), *(len(r[0]) for r in rows))
    lines = [f"variants of {model} on {device}: {rounds} round(s), the floor measured in "
             f"each process; change against {baseline} (positive: slower)"]
    head = f"{'context':>7}  {'variant':<{width}}"
    for k in range(rounds):
        head += f"  {'round ' + str(k + 1):>16}"
    lines.append(head + f"  {'median ms':>9}  {'of floor':>8}  {'change':>7}")
    for name, context, each, ms, share, change in rows:
        line = f"{context:>7}  {name:<{width}}"
        for cell in each:
            line += f"  {fmt_cell(cell):>16}"
        line += f"  {ms:>9.4f}" if ms is not None else f"  {'-':>9}"
        line += f"  {100 * share:>7.1f}%" if share is not None else f"  {'-':>8}"
        lines.append(line + f"  {fmt_change(change):>7}")
    return "\n".join(lines) + "\n"


def markdown(rounds, rows, baseline):
    head = "| context | variant | " + " | ".join(f"round {k + 1} ms (of floor)"
                                               for k in range(rounds))
    lines = [head + f" | median ms | of floor | change against {baseline} |",
             "|---:|---|" + "---:|" * rounds + "---:|---:|---:|"]
    for name, context, each, ms, share, change in rows:
        cols = [str(context), name] + [fmt_cell(c) for c in each]
        cols.append(f"{ms:.4f}" if ms is not None else "-")
        cols.append(f"{100 * share:.1f}%" if share is not None else "-")
        cols.append(fmt_change(change))
        lines.append("| " + " | ".join(cols) + " |")
    return "\n".join(lines) + "\n"


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("runs", nargs="+", metavar="NAME=result.json")
    parser.add_argument("--markdown", help="also write the table as markdown here")
    args = parser.parse_args(argv)
    runs = parse_runs(args.runs)
    model, device = check_same_run(runs)
    rounds, rows = table_rows(runs)
    baseline = runs[0][0]
    sys.stdout.write(text(model, device, rounds, rows, baseline))
    if args.markdown:
        try:
            write_atomically(args.markdown, lambda f: f.write(markdown(rounds, rows, baseline)))
        except OSError as e:
            fail(f"--markdown {args.markdown}: {e.strerror}")


if __name__ == "__main__":
    main()
