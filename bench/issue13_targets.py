"""Issue #13's "done when" figures in one table, each beside its target.

  python3 bench/issue13_targets.py [--decode-1b A.json] [--stream-only-1b B.json ...]
      [--decode-8b C.json] [--baselines-1b D.json] [--baselines-8b E.json]

Every input is a result file of docs/benchmarking.md: `tirun bench --json`
for the decode runs (the floor measured in the same process), and
`bench/run_bench.py --out` with TileInfer and torch.compile for the
baselines, whose ratio is taken within that one file (the same run, as the
issue asks). --stream-only-1b may be given more than once (launches of one
step and of several: the row names the steps a launch when more than one).
A file left out leaves its rows out (at least one is needed). The table says, row by
row, whether the measured figure meets the issue's target; it reports and
does not judge the run, so the exit status is 0 unless an input is
unreadable (one line, exit 1).
"""
import argparse
import json
import sys

# The targets: (model, context) -> the share of the floor it asks for.
SHARE_TARGETS = {("1B", 1): 0.88, ("8B", 1): 0.93, ("8B", 4096): 0.88}
SHARE_TARGET_1B_ANY = 0.85  # at every context up to 4,096
STREAM_ONLY_TARGET = 1.00
GENERATE_TARGET = 1500.0  # tokens per second, 64 greedy tokens of the 1B
COMPILE_TARGETS = {"1B": 2.3, "8B": 1.5}  # times faster, context 1


def load(path):
    with open(path) as f:
        result = json.load(f)
    if not isinstance(result.get("runtimes"), list):
        raise ValueError(f"{path}: no runtimes (not a tileinfer-bench-1 result)")
    return result


def runtime(result, name, path):
    for r in result["runtimes"]:
        if r.get("name") == name:
            if r.get("error"):
                raise ValueError(f"{path}: {name} failed: {r['error']}")
            return r
    raise ValueError(f"{path}: no runtime '{name}'")


def verdict(value, target):
    return "met" if value >= target else "MISSED"


def decode_rows(model, result, path, mode="full"):
    rows = []
    rt = runtime(result, "tileinfer", path)
    steps = rt.get("steps_per_launch", 1)
    for c in rt["contexts"]:
        ctx, share = c["context"], c["share_of_floor"]
        what = f"{model}, context {ctx:,}" + ("" if mode == "full" else f", {mode}")
        if steps > 1:
            what += f", {steps} steps a launch"
        if mode == "stream-only":
            target = STREAM_ONLY_TARGET if ctx == 1 else None
        else:
            target = SHARE_TARGETS.get((model, ctx))
            if model == "1B" and ctx <= 4096:
                target = max(target or 0.0, SHARE_TARGET_1B_ANY)
        measured = f"{c['median_ms']:.4f} ms, {100 * share:.1f}% of the floor"
        if target is None:
            rows.append((what, measured, "", ""))
        else:
            rows.append((what, measured, f">= {100 * target:.0f}%", verdict(share, target)))
    return rows


def generate_row(result, path):
    gen = runtime(result, "tileinfer", path).get("generate") or {}
    if not gen.get("tokens_per_s"):
        return []
    rate = gen["tokens_per_s"]
    return [(f"1B, {gen.get('tokens', '?')} greedy tokens", f"{rate:,.1f} tokens/s",
             f">= {GENERATE_TARGET:,.0f}", verdict(rate, GENERATE_TARGET))]


def baseline_rows(model, result, path):
    ours = {c["context"]: c["median_ms"] for c in runtime(result, "tileinfer", path)["contexts"]}
    theirs = {c["context"]: c["median_ms"] for c in runtime(result, "compile", path)["contexts"]}
    rows = []
    for ctx in sorted(set(ours) & set(theirs)):
        ratio = theirs[ctx] / ours[ctx]
        measured = f"{ratio:.2f}x ({ours[ctx]:.4f} against {theirs[ctx]:.4f} ms)"
        what = f"{model} against torch.compile, context {ctx:,}"
        if ctx == 1:
            target = COMPILE_TARGETS[model]
            rows.append((what, measured, f">= {target}x", verdict(ratio, target)))
        else:
            rows.append((what, measured, "", ""))
    return rows


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--decode-1b", help="tirun bench --json of the 1B, full mode")
    ap.add_argument("--stream-only-1b", action="append", default=[],
                    help="tirun bench --json of the 1B, --worker-mode stream-only (repeatable)")
    ap.add_argument("--decode-8b", help="tirun bench --json of the 8B, full mode")
    ap.add_argument("--baselines-1b", help="run_bench.py --out with tileinfer and compile, the 1B")
    ap.add_argument("--baselines-8b", help="run_bench.py --out with tileinfer and compile, the 8B")
    args = ap.parse_args(argv)
    inputs = [("decode", "1B", args.decode_1b)]
    inputs += [("stream-only", "1B", path) for path in args.stream_only_1b]
    inputs += [("decode", "8B", args.decode_8b), ("baselines", "1B", args.baselines_1b),
               ("baselines", "8B", args.baselines_8b)]
    inputs = [i for i in inputs if i[2]]
    if not inputs:
        ap.error("no result file given")
    rows = []
    try:
        results = [(kind, model, path, load(path)) for kind, model, path in inputs]
        for kind, model, path, r in results:
            if kind == "baselines":
                rows += baseline_rows(model, r, path)
            elif kind == "stream-only":
                rows += decode_rows(model, r, path, "stream-only")
            else:
                rows += decode_rows(model, r, path)
                if model == "1B":
                    rows += generate_row(r, path)
    except (OSError, ValueError, KeyError, TypeError, ZeroDivisionError) as e:
        print(f"issue13_targets: error: {e}", file=sys.stderr)
        return 1
    first = results[0][3]
    device, gbs = first.get("device", "?"), first.get("bandwidth", {}).get("gbs")
    header = ("what", "measured", "target", "")
    widths = [max(len(row[i]) for row in rows + [header]) for i in range(4)]
    print(f"# {device}; the floor at {gbs} GB/s ({results[0][2]}), measured in the same process")
    for row in [header] + rows:
        print("  ".join(cell.ljust(w) for cell, w in zip(row, widths)).rstrip())
    return 0


if __name__ == "__main__":
    sys.exit(main())
