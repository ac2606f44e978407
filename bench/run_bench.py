"""TileInfer and its baselines, measured in one run on one GPU (docs/benchmarking.md).

Builds (or reuses, in --work) the plan, the weights and the random checkpoint
they come from; starts one worker per runtime (tirun bench --serve, and
bench/hf_worker.py for each Transformers variant), which load and compile
concurrently; then, per context, interleaves measurement blocks: round r asks
every worker for one block of --block steps, in spawn order on even rounds and
reversed on odd ones, so that drift and thermal state fall on all runtimes
alike. Greedy generation is interleaved the same way; then every worker's
tokens with their top-2 gaps, checked against TileInfer's. The whole session
runs --sessions times, every worker a fresh process each time, spawned in
--runtimes order in the first session and reversed in the next, alternating;
the blocks of all sessions are pooled.

TileInfer loads its plan into fresh GPU memory before each of its blocks
(`reload`): where the weights land moves its time more than anything within
one load, so the blocks must sample that too. Per runtime and context: the
median of the block medians and its 95% interval over them (bench/benchstats.py);
with 6 sessions or more, the median of the session medians and the interval
over those, since a fresh process moves the time more than a reload does;
the floor (TileInfer's bytes per token over the bandwidth it measured, median
of all its samples) and the share of it; the medians per spawn order; and, for
each baseline, the paired difference from TileInfer (per-round block medians).

  python3 bench/run_bench.py --bin build/bin --work /tmp/bench --out bench.json
  python3 bench/run_bench.py --bin build/bin --work /tmp/b --graph models/tiny.graph \\
      --weights random --runtimes tileinfer --backend cpu --contexts 1,16 --out b.json
"""
import argparse
import datetime
import json
import os
import queue
import re
import subprocess
import sys
import threading

import benchstats
from atomic_file import write_atomically

HERE = os.path.dirname(os.path.abspath(__file__))
REFERENCE = "tileinfer"
LABELS = {
    "tileinfer": "TileInfer",
    "eager": "Transformers eager",
    "sdpa": "Transformers SDPA",
    "cuda_graph": "Transformers SDPA + CUDA graph",
    "compile": "torch.compile reduce-overhead",
}
PROMPT_TOKENS = 6  # generate starts from the standard sequence's first 6 tokens.


def fail(message):
    print(f"run_bench: error: {message}", file=sys.stderr)
    sys.exit(1)


def progress(message):
    print(message, file=sys.stderr, flush=True)


class WorkerError(Exception):
    pass


class Worker:
    """One runtime's process: a command line in, one JSON answer out."""

    def __init__(self, argv, timeout):
        self.timeout = timeout
        self.proc = subprocess.Popen(argv, stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                                     text=True, bufsize=1)
        self.lines = queue.Queue()
        threading.Thread(target=self._read, daemon=True).start()

    def _read(self):
        for line in self.proc.stdout:
            self.lines.put(line)
        self.lines.put(None)

    def read(self):
        while True:
            try:
                line = self.lines.get(timeout=self.timeout)
            except queue.Empty:
                raise WorkerError(f"no answer in {self.timeout} s") from None
            if line is None:
                raise WorkerError(f"exited with status {self.proc.wait()}")
            if line.strip():
                break
        try:
            return json.loads(line)
        except ValueError:
            raise WorkerError(f"not a JSON answer: {line.strip()[:200]}") from None

    def ask(self, command):
        try:
            self.proc.stdin.write(command + "\n")
            self.proc.stdin.flush()
        except OSError as e:
            raise WorkerError(f"'{command}': {e}") from None
        got = self.read()
        if "error" in got:
            raise WorkerError(f"'{command}': {got['error']}")
        return got

    def close(self):
        try:
            self.proc.stdin.write("quit\n")
            self.proc.stdin.close()
            self.proc.wait(timeout=30)
        except (OSError, subprocess.TimeoutExpired):
            self.proc.kill()
            self.proc.wait()


def parse_args(argv):
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.error = fail
    ap.add_argument("--bin", required=True, help="the folder holding tic, tipack and tirun")
    ap.add_argument("--work", required=True, help="checkpoint, plan and weights, kept and reused")
    ap.add_argument("--graph", default=os.path.normpath(os.path.join(HERE, "..", "models",
                                                                      "llama32-1b.graph")))
    ap.add_argument("--target", default="h200", help="tic's built-in target")
    ap.add_argument("--target-file", default=None,
                    help="a target description for tic instead of --target (a plan "
                         "decision under test, before it becomes the built-in's)")
    ap.add_argument("--contexts", default="1,128,512,1024,2048,4096",
                    help="positions in the K/V cache at each measurement")
    ap.add_argument("--rounds", type=int, default=6, help="measured blocks per context and worker")
    ap.add_argument("--block", type=int, default=20, help="timed steps per block")
    ap.add_argument("--warmup", type=int, default=1, help="untimed blocks after a context change")
    ap.add_argument("--generate", type=int, default=64, help="tokens per generation run")
    ap.add_argument("--generate-reps", type=int, default=5, help="generation rounds (0: none)")
    ap.add_argument("--runtimes", default="tileinfer,eager,sdpa,cuda_graph,compile",
                    help=f"from {', '.join(LABELS)}; {REFERENCE} is required")
    ap.add_argument("--sessions", type=int, default=2,
                    help="fresh worker processes for every runtime, spawned in --runtimes order "
                         "and reversed, alternating; with 6 or more the interval is over sessions")
    ap.add_argument("--weights", choices=("checkpoint", "random"), default="checkpoint",
                    help="random: tipack --random, for tileinfer alone (CI, no torch)")
    ap.add_argument("--backend", choices=("auto", "cpu", "cuda"), default="auto",
                    help="tirun's backend")
    ap.add_argument("--static-cache", choices=("max", "per-context"), default="per-context",
                    help="cuda_graph and compile: one cache sized to each context (per-context) "
                         "or one of the largest context (max); hf_worker.py --static-cache")
    ap.add_argument("--seed", type=int, default=1234, help="of the random checkpoint")
    ap.add_argument("--timeout", type=int, default=1800, help="seconds to wait for one answer")
    ap.add_argument("--out", required=True, help="the result JSON")
    args = ap.parse_args(argv)

    try:
        args.contexts = [int(c) for c in args.contexts.split(",")]
    except ValueError:
        fail(f"--contexts: '{args.contexts}' is not a comma-separated list of integers")
    if min(args.contexts) < 1:
        fail("--contexts: every context must be at least 1")
    args.runtimes = args.runtimes.split(",")
    for name in args.runtimes:
        if name not in LABELS:
            fail(f"--runtimes: unknown runtime '{name}' (known: {', '.join(LABELS)})")
    if len(set(args.runtimes)) != len(args.runtimes):
        fail("--runtimes: a runtime is listed twice")
    if REFERENCE not in args.runtimes:
        fail(f"--runtimes must include {REFERENCE}: it gives the floor and the reference tokens")
    if args.weights == "random" and args.runtimes != [REFERENCE]:
        fail("--weights random: only tileinfer can run random weights (the baselines need "
             "the checkpoint)")
    for flag, value, least in (("--rounds", args.rounds, 1), ("--block", args.block, 1),
                               ("--warmup", args.warmup, 0), ("--generate", args.generate, 1),
                               ("--generate-reps", args.generate_reps, 0),
                               ("--timeout", args.timeout, 1), ("--sessions", args.sessions, 1)):
        if value < least:
            fail(f"{flag} must be at least {least}")
    args.spawn_orders = [("forward", "reverse")[i % 2] for i in range(args.sessions)]
    for tool in ("tic", "tipack", "tirun"):
        if not os.access(os.path.join(args.bin, tool), os.X_OK):
            fail(f"--bin: no executable {tool} in {args.bin}")
    if not os.path.isfile(args.graph):
        fail(f"--graph: no file {args.graph}")
    return args


def stale(output, inputs):
    """make's rule: output is missing or older than one of inputs."""
    if not os.path.exists(output):
        return True
    return any(os.path.getmtime(i) > os.path.getmtime(output) for i in inputs)


def prepare(args, commands):
    """The plan and the weights (and the checkpoint), rebuilt only when stale.
    Returns (model name, plan, weights, checkpoint or None)."""
    from llama_checkpoint import graph_name  # Needs no torch.
    try:
        model = graph_name(args.graph)
    except ValueError:
        fail(f"--graph: {args.graph} names no graph")
    os.makedirs(args.work, exist_ok=True)
    target = (os.path.splitext(os.path.basename(args.target_file))[0] if args.target_file
              else args.target)
    stem = os.path.join(args.work, f"{model}-{target}")
    tic, tipack = (os.path.join(args.bin, t) for t in ("tic", "tipack"))

    def run(argv):
        commands.append(" ".join(argv))
        progress("run_bench: " + " ".join(argv))
        if subprocess.run(argv, stdout=sys.stderr).returncode:
            fail(f"{os.path.basename(argv[0])} failed")

    plan = stem + ".fb"
    choice = ["--target-file", args.target_file] if args.target_file else ["--target", args.target]
    if stale(plan, [args.graph, tic] + ([args.target_file] if args.target_file else [])):
        run([tic, args.graph, *choice, "-o", plan])
    checkpoint = None
    if args.weights == "random":
        weights = stem + "-random.bin"
        if stale(weights, [plan, tipack]):
            run([tipack, plan, "--random", "--seed", "1", "-o", weights])
    else:
        from llama_checkpoint import MARKER, build_checkpoint
        checkpoint = os.path.join(args.work, f"checkpoint-{model}")
        try:
            build_checkpoint(checkpoint, args.seed, log=progress, model=model)
        except Exception as e:
            fail(f"the checkpoint: {type(e).__name__}: {e}")
        weights = stem + "-checkpoint.bin"
        if stale(weights, [plan, tipack, os.path.join(checkpoint, MARKER)]):
            run([tipack, plan, "--checkpoint", checkpoint, "-o", weights])
    return model, plan, weights, checkpoint


class Runtime:
    """What one runtime gathers over all sessions."""

    def __init__(self, name):
        self.name = name
        self.error = None
        self.ready = {}
        self.blocks = {}   # context -> {(session, round): [ms]}
        self.orders = {}   # context -> {spawn order: [ms]}
        self.floor_bytes = {}
        self.generations = []  # (tokens, seconds) of each timed run
        self.token_runs = []   # the tokens of every generate and gaps answer
        self.gaps = None       # the first session's {"tokens", "top2_gap"}

    def record_error(self, session, stage, message):
        if self.error is None:
            self.error = f"{session} session, {stage}: {message}"
        progress(f"run_bench: {self.name} left out of the {session} session at {stage}: {message}")


def worker_argv(name, args, plan, weights, checkpoint):
    if name == REFERENCE:
        return [os.path.join(args.bin, "tirun"), "bench", plan, weights, "--serve",
                "--backend", args.backend]
    room = max(max(args.contexts), PROMPT_TOKENS + args.generate)
    argv = [sys.executable, os.path.join(HERE, "hf_worker.py"), "--variant", name,
            "--checkpoint", checkpoint, "--max-context", str(room)]
    if name in ("cuda_graph", "compile"):
        argv += ["--static-cache", args.static_cache]
    return argv


def session(index, names, args, paths, runtimes, bandwidth, commands):
    """One run over every context and the generation, workers spawned in names' order."""
    order = args.spawn_orders[index]
    label = f"{index + 1} {order}"  # Shown in progress lines and errors.
    workers = {}
    try:
        for name in names:
            argv = worker_argv(name, args, *paths)
            commands.append(" ".join(argv))
            workers[name] = Worker(argv, args.timeout)
        alive = []
        for name in names:  # They load concurrently; collect the answers in order.
            try:
                ready = workers[name].read()
                if not ready.get("ready"):
                    raise WorkerError(ready.get("error", "not ready"))
            except WorkerError as e:
                runtimes[name].record_error(label, "start-up", str(e))
                workers.pop(name).close()
                continue
            runtimes[name].ready = ready
            progress(f"run_bench: [{label}] {name} ready: {ready.get('detail', '')}")
            alive.append(name)
        if REFERENCE not in alive:
            fail(f"{REFERENCE} did not start: {runtimes[REFERENCE].error}")

        stage = "bandwidth"

        def ask(name, command):
            """The answer, or None when the worker fails (it is then left out)."""
            if name not in alive:
                return None
            try:
                return workers[name].ask(command)
            except WorkerError as e:
                if name == REFERENCE:
                    fail(f"{REFERENCE}, {stage}: {e}")
                runtimes[name].record_error(label, stage, str(e))
                workers.pop(name).close()
                alive.remove(name)
                return None

        def in_turn(round_index):
            return list(alive) if round_index % 2 == 0 else list(reversed(alive))

        bandwidth.append(dict(ask(REFERENCE, "bandwidth"), session=label, when="start"))
        for n in args.contexts:
            stage = f"context {n}"
            for name in list(alive):
                ask(name, f"context {n}")
            for _ in range(args.warmup):
                for name in list(alive):
                    ask(name, f"measure {args.block}")
            for r in range(args.rounds):
                shown = []
                for name in in_turn(r):
                    # A fresh load of TileInfer's plan for every block: where its
                    # weights land moves its time more than anything within one
                    # load, so the blocks' spread, and the interval, include it.
                    if runtimes[name].ready.get("reload") and (
                            ask(name, "reload") is None or ask(name, "measure 2") is None):
                        continue  # (The two steps after a reload are not timed.)
                    got = ask(name, f"measure {args.block}")
                    if got is None:
                        continue
                    rt = runtimes[name]
                    rt.blocks.setdefault(n, {})[(index, r)] = got["ms"]
                    rt.orders.setdefault(n, {}).setdefault(order, []).extend(got["ms"])
                    if "floor_bytes" in got:
                        rt.floor_bytes[n] = got["floor_bytes"]
                    shown.append(f"{name} {benchstats.median(got['ms']):.3f}")
                progress(f"[{label} ctx {n} round {r + 1}/{args.rounds}] ms: {', '.join(shown)}")
        stage = "generation"
        if args.generate_reps:
            for name in list(alive):  # Untimed: first-call costs stay out of the rates.
                ask(name, f"generate {args.generate}")
        for r in range(args.generate_reps):
            shown = []
            for name in in_turn(r):
                got = ask(name, f"generate {args.generate}")
                if got is not None:
                    runtimes[name].generations.append((got["tokens"], got["seconds"]))
                    runtimes[name].token_runs.append(got["tokens"])
                    shown.append(f"{name} {len(got['tokens']) / got['seconds']:.1f}")
            progress(f"[{label} generation {r + 1}/{args.generate_reps}] tokens/s: "
                     f"{', '.join(shown)}")
        stage = "gaps"
        for name in list(alive):
            got = ask(name, f"gaps {args.generate}")
            if got is not None:
                runtimes[name].token_runs.append(got["tokens"])
                if runtimes[name].gaps is None:
                    runtimes[name].gaps = got
        stage = "bandwidth"
        bandwidth.append(dict(ask(REFERENCE, "bandwidth"), session=label, when="end"))
    finally:
        for worker in workers.values():
            worker.close()


def context_entry(rt, n, reference, gbs):
    """The blocks are the units: steps within a block share their moment (and,
    for TileInfer, one load of the plan), so the median and its interval are
    those of the block medians. A session shares one process, which moves the
    time more than a reload within it; with enough sessions (6) they become the
    units: the median of the session medians (each the median of its blocks)
    and the interval over them. The samples are kept too."""
    samples = [x for order in rt.orders[n].values() for x in order]
    block_medians, per_session = [], {}
    for (index, _), ms in sorted(rt.blocks[n].items()):
        block_medians.append(benchstats.median(ms))
        per_session.setdefault(index, []).append(block_medians[-1])
    session_medians = [benchstats.median(v) for _, v in sorted(per_session.items())]
    over_sessions = len(session_medians) >= benchstats.MIN_SAMPLES
    units = session_medians if over_sessions else block_medians
    floor_bytes = reference.floor_bytes.get(n)
    mid = benchstats.median(units)
    entry = {"context": n, "n": len(samples), "blocks": len(block_medians),
             "sessions": len(session_medians), "median_ms": mid,
             "ci95_ms": None, "interval_over": "sessions" if over_sessions else "blocks",
             "block_medians_ms": block_medians, "session_medians_ms": session_medians,
             "min_ms": min(samples), "floor_bytes": floor_bytes, "floor_ms": None,
             "share_of_floor": None, "samples_ms": samples,
             "order_medians_ms": {o: benchstats.median(v) for o, v in rt.orders[n].items()}}
    if len(units) >= benchstats.MIN_SAMPLES:
        entry["ci95_ms"] = list(benchstats.median_ci95(units))
    if floor_bytes is not None:
        entry["floor_ms"] = floor_bytes / (gbs * 1e6)
        entry["share_of_floor"] = entry["floor_ms"] / mid
    if rt is not reference:
        keys = sorted(set(rt.blocks[n]) & set(reference.blocks.get(n, {})))
        if len(keys) >= benchstats.MIN_SAMPLES:
            d, (lo, hi) = benchstats.paired_diff([reference.blocks[n][k] for k in keys],
                                                 [rt.blocks[n][k] for k in keys])
            entry["paired_diff_ms"] = {"median": d, "ci95": [lo, hi], "pairs": len(keys)}
        else:
            entry["paired_diff_ms"] = None
    return entry


def tokens_check(runtimes, names):
    """Each runtime's greedy tokens against TileInfer's: agreement, or the first
    step that differs with both top-2 gaps there; and whether every run of a
    runtime gave the same tokens."""
    ref = runtimes[REFERENCE].gaps
    check = {"reference": REFERENCE, "runtimes": {}}
    for name in names:
        rt = runtimes[name]
        if rt.gaps is None:
            continue
        result = {"deterministic": all(t == rt.token_runs[0] for t in rt.token_runs),
                  "tokens": len(rt.gaps["tokens"])}
        if name != REFERENCE:
            a, b = ref["tokens"], rt.gaps["tokens"]
            step = next((i for i, (x, y) in enumerate(zip(a, b)) if x != y), min(len(a), len(b)))
            result["agree"] = a == b
            result["first_difference"] = None if a == b else {
                "step": step,
                "reference_token": a[step] if step < len(a) else None,
                "token": b[step] if step < len(b) else None,
                "reference_top2_gap": ref["top2_gap"][step] if step < len(a) else None,
                "top2_gap": rt.gaps["top2_gap"][step] if step < len(b) else None}
        check["runtimes"][name] = result
    return check


def runtime_entry(rt, args, reference, gbs):
    label = LABELS[rt.name]
    kind = re.match(r"tirun (\w+) backend", rt.ready.get("detail", ""))
    if rt.name == REFERENCE and kind:
        label += f" ({kind.group(1).upper()})"
    entry = {"name": rt.name, "label": label, "error": rt.error,
             "detail": rt.ready.get("detail"), "device": rt.ready.get("device"),
             "contexts": [context_entry(rt, n, reference, gbs)
                          for n in args.contexts if rt.orders.get(n)],
             "generate": None}
    if rt.generations:
        tokens = rt.generations[0][0]
        entry["generate"] = {"tokens": len(tokens),
                             "tokens_per_s": benchstats.median(len(t) / s
                                                               for t, s in rt.generations),
                             "seconds": [s for _, s in rt.generations], "token_ids": tokens}
    return entry


def print_table(result):
    runs = [r for r in result["runtimes"] if r["contexts"]]
    print(f"{result['model']} on {result['device']}; floor at "
          f"{result['bandwidth']['gbs']:.1f} GB/s; median ms per token")
    print(f"{'context':>8} " + " ".join(f"{r['name']:>11}" for r in runs)
          + f" {'floor':>8} {'of floor':>9}")
    by_context = {}
    for r in runs:
        for c in r["contexts"]:
            by_context.setdefault(c["context"], {})[r["name"]] = c
    for n, cells in by_context.items():
        ref = cells.get(REFERENCE, {})
        floor = f"{ref['floor_ms']:8.3f}" if ref.get("floor_ms") else f"{'-':>8}"
        share = f"{100 * ref['share_of_floor']:8.1f}%" if ref.get("share_of_floor") else f"{'-':>9}"
        print(f"{n:>8} " + " ".join(f"{cells[r['name']]['median_ms']:11.3f}"
                                     if r["name"] in cells else f"{'-':>11}" for r in runs)
              + f" {floor} {share}")
    for r in result["runtimes"]:
        gen = r["generate"]
        rate = f"{gen['tokens_per_s']:.1f} tokens/s" if gen else "no generation"
        check = result["tokens_check"]["runtimes"].get(r["name"], {})
        agree = "" if "agree" not in check else (
            ", tokens agree" if check["agree"]
            else f", tokens differ from step {check['first_difference']['step']}")
        error = f"; error: {r['error']}" if r["error"] else ""
        print(f"{r['name']}: {rate}{agree}{error}")


def main(argv):
    args = parse_args(argv)
    commands = [" ".join(["python3"] + sys.argv)]
    model, *paths = prepare(args, commands)
    runtimes = {name: Runtime(name) for name in args.runtimes}
    bandwidth = []
    for index, order in enumerate(args.spawn_orders):
        names = args.runtimes if order == "forward" else args.runtimes[::-1]
        session(index, names, args, paths, runtimes, bandwidth, commands)

    samples = [x for b in bandwidth for x in b["samples"]]
    gbs = benchstats.median(samples)
    reference = runtimes[REFERENCE]
    result = {
        "schema": "tileinfer-bench-1",
        "date": datetime.datetime.now(datetime.timezone.utc).strftime("%Y-%m-%dT%H:%M:%SZ"),
        "device": reference.ready.get("device"),
        "model": model,
        "commands": commands,
        "settings": {k: getattr(args, k) for k in (
            "target", "target_file", "contexts", "rounds", "block", "warmup", "generate", "generate_reps",
            "sessions", "spawn_orders", "weights", "backend", "static_cache")},
        "bandwidth": {"gbs": gbs, "samples": samples, "bytes": bandwidth[0].get("bytes"),
                      "measurements": [{k: b[k] for k in ("session", "when", "gbs")}
                                       for b in bandwidth]},
        "runtimes": [runtime_entry(runtimes[n], args, reference, gbs) for n in args.runtimes],
        "tokens_check": tokens_check(runtimes, args.runtimes),
    }
    try:
        write_atomically(args.out, lambda f: f.write(json.dumps(result, indent=1,
                                                                allow_nan=False) + "\n"))
    except (OSError, ValueError) as e:
        fail(f"--out {args.out}: {e}")
    print_table(result)
    progress(f"run_bench: wrote {args.out}")


if __name__ == "__main__":
    main(sys.argv[1:])
