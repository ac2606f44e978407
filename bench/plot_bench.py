"""A benchmark result (docs/benchmarking.md) as a chart and a markdown table.

Reads the JSON of bench/run_bench.py or of tirun bench --json (one runtime or
many). The chart: ms per token against context, one series per runtime with its
95% interval, the floor (bytes per token over the measured bandwidth) as a
line, and each TileInfer point labelled with its share of the floor. The
table: per context each runtime's median [95% interval], the floor and
TileInfer's share of it; then per runtime the generation rate and whether its
greedy tokens agree with TileInfer's.

  python3 bench/plot_bench.py result.json [--png chart.png] [--markdown table.md] [--title T]
"""
import argparse
import sys

import bench_result
from atomic_file import write_atomically

REFERENCE = "tileinfer"


fail = bench_result.failer("plot_bench")


def load(path):
    result = bench_result.load(path, fail)
    if not result.get("runtimes"):
        fail(f"{path}: no runtimes")
    return result


def floors(result):
    """context -> floor ms, from TileInfer's entries (or any runtime's)."""
    out = {}
    for rt in sorted(result["runtimes"], key=lambda r: r["name"] != REFERENCE):
        for c in rt.get("contexts", []):
            if c.get("floor_ms") is not None:
                out.setdefault(c["context"], c["floor_ms"])
    return out


def measured(result):
    return [rt for rt in result["runtimes"] if rt.get("contexts")]


def title_of(result, title):
    return title or f"{result.get('model', '?')} on {result.get('device', '?')}"


def markdown(result, title):
    runs = measured(result)
    floor = floors(result)
    contexts = sorted({c["context"] for rt in runs for c in rt["contexts"]})
    ours = {c["context"]: c for rt in runs if rt["name"] == REFERENCE for c in rt["contexts"]}
    lines = [f"### {title_of(result, title)}", ""]
    bw = result.get("bandwidth")
    if bw:
        units = {c.get("interval_over", "samples") for rt in runs for c in rt["contexts"]}
        unit = units.pop() if len(units) == 1 else "samples"
        lines += [f"Median ms per token [95% interval], over the {unit}. Floor: the bytes a "
                  f"token reads over {bw['gbs']:.1f} GB/s, the streaming-read bandwidth measured "
                  f"in the same run.", ""]
    header = ["context"] + [f"{rt['label']} ms" for rt in runs] + ["floor ms"]
    if ours:
        header.append("TileInfer share of floor")
    lines.append("| " + " | ".join(header) + " |")
    lines.append("|" + "---:|" * len(header))
    for n in contexts:
        row = [str(n)]
        for rt in runs:
            c = next((c for c in rt["contexts"] if c["context"] == n), None)
            if c is None:
                row.append("-")
            elif c.get("ci95_ms"):
                row.append(f"{c['median_ms']:.3f} [{c['ci95_ms'][0]:.3f}, {c['ci95_ms'][1]:.3f}]")
            else:
                row.append(f"{c['median_ms']:.3f}")
        row.append(f"{floor[n]:.3f}" if n in floor else "-")
        if ours:
            share = ours.get(n, {}).get("share_of_floor")
            row.append(f"{100 * share:.1f}%" if share is not None else "-")
        lines.append("| " + " | ".join(row) + " |")

    checks = result.get("tokens_check", {}).get("runtimes", {})
    lines += ["", "| runtime | generation tokens/s | greedy tokens |", "|---|---:|---|"]
    for rt in result["runtimes"]:
        gen = rt.get("generate")
        rate = f"{gen['tokens_per_s']:.1f}" if gen else "-"
        lines.append(f"| {rt['label']} | {rate} | {token_note(rt, checks.get(rt['name']))} |")
    return "\n".join(lines) + "\n"


def token_note(rt, check):
    if rt.get("error"):
        note = f"error: {rt['error']}"
        return note if check is None else f"{check_note(rt, check)}; {note}"
    return "-" if check is None else check_note(rt, check)


def check_note(rt, check):
    if rt["name"] == REFERENCE:
        note = f"reference ({check['tokens']} tokens)"
    elif check["agree"]:
        note = f"agree ({check['tokens']} tokens)"
    else:
        d = check["first_difference"]
        pairs = (("TileInfer", d["reference_top2_gap"]), ("this", d["top2_gap"]))
        gaps = ", ".join(f"{who} {gap:.3g}" for who, gap in pairs if gap is not None)
        note = f"differ from step {d['step']} (top-2 gaps: {gaps})"
    return note if check["deterministic"] else note + "; not the same in every run"


def chart(result, path, title):
    import matplotlib
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    from matplotlib.ticker import FuncFormatter

    fig, ax = plt.subplots(figsize=(9, 5))
    for rt in measured(result):
        cs = sorted(rt["contexts"], key=lambda c: c["context"])
        x = [c["context"] for c in cs]
        y = [c["median_ms"] for c in cs]
        err = [[c["median_ms"] - c["ci95_ms"][0] if c.get("ci95_ms") else 0 for c in cs],
               [c["ci95_ms"][1] - c["median_ms"] if c.get("ci95_ms") else 0 for c in cs]]
        ax.errorbar(x, y, yerr=err, marker="o", capsize=3, label=rt["label"])
        if rt["name"] == REFERENCE:
            for c in cs:
                if c.get("share_of_floor") is not None:
                    ax.annotate(f"{100 * c['share_of_floor']:.1f}%", (c["context"], c["median_ms"]),
                                textcoords="offset points", xytext=(0, 8), ha="center", fontsize=8)
    floor = sorted(floors(result).items())
    if floor:
        ax.plot([n for n, _ in floor], [f for _, f in floor], "k--", label="floor")
    ax.set_xscale("log", base=2)
    ax.set_yscale("log")
    ax.set_xticks(sorted({c["context"] for rt in measured(result) for c in rt["contexts"]}))
    plain = FuncFormatter(lambda v, _: f"{v:g}")
    for axis in (ax.xaxis, ax.yaxis):
        axis.set_major_formatter(plain)
    ax.set_xlabel("context (positions in the K/V cache)")
    ax.set_ylabel("ms per token (median, 95% interval)")
    note = " (TileInfer labelled with floor / time)" if floor else ""
    ax.set_title(title_of(result, title) + note, fontsize=10)
    ax.grid(True, which="both", alpha=0.3)
    ax.legend(fontsize=8, loc="upper left", bbox_to_anchor=(1.01, 1))
    write_atomically(path, lambda f: fig.savefig(f, format="png", dpi=120, bbox_inches="tight"),
                     binary=True)
    plt.close(fig)


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.error = fail
    ap.add_argument("result", help="the JSON of run_bench.py or tirun bench --json")
    ap.add_argument("--png", help="write the chart here")
    ap.add_argument("--markdown", help="write the table here (default: standard output)")
    ap.add_argument("--title")
    args = ap.parse_args()
    result = load(args.result)
    try:
        table = markdown(result, args.title)
        if args.png:
            chart(result, args.png, args.title)
    except (KeyError, TypeError, IndexError) as e:
        fail(f"{args.result}: malformed result ({type(e).__name__}: {e})")
    except (ImportError, OSError) as e:
        fail(f"{args.png}: {type(e).__name__}: {e}")
    if args.markdown:
        try:
            write_atomically(args.markdown, lambda f: f.write(table))
        except OSError as e:
            fail(f"{args.markdown}: {e}")
    else:
        sys.stdout.write(table)


if __name__ == "__main__":
    main()
