#!/usr/bin/env python3
"""One traced step as a per-worker timeline, and where its time went.

  python3 bench/trace_timeline.py trace.json --bandwidth-gbs B [--kv-bytes K]
      [--png out.png] [--layer L] [--json accounting.json]

The input is what `tirun --trace` writes (lib/Runtime/Trace.cpp): one thread
per worker, an "X" event per task (cat = opcode, args.wave, args.weight_bytes,
args.kind = the opcode's kind in include/ti/Plan/Opcodes.def),
per grid barrier (cat "barrier", from the worker's arrival to its departure,
args.wave = the wave it closes) and per token selection (cat "select").

The accounting splits the measured step time T, from the first event's start
to the last event's end, into five parts that sum to T exactly:

  ideal streaming    (weight bytes of every task + K) / B: the time the step
                     would take if it only streamed its bytes at the measured
                     bandwidth B (GB/s). K (--kv-bytes, default 0) is the K/V
                     cache the attention tasks read, which the trace does not
                     record; it is shared evenly among the attention waves.
  GEMV below the     for each wave whose opcode streams weight matrices (kind
  roofline           "stream": gemv, ffn_partial, lm_head): its span minus its
                     ideal streaming time.
  barrier latency    for each barrier: from the last task end of the waves it
                     closes to its release (the last worker's departure).
  attention          for each attention wave (kind "attention"): its span,
                     minus its share of K.
  other              the span of every other wave (select_token, embed,
                     reduce_residual, the step's token selection, which is
                     ordered before wave 0) minus its ideal streaming time (the
                     embedding rows are weight bytes too), and the time after
                     the last barrier's release, if any. It is computed as T
                     minus the other four parts, so it also takes the floating
                     point rounding; the pieces it is made of agree with it to
                     far below a nanosecond.

A wave's span. The barriers cut the step into intervals: the first starts at
the step's start, each ends at a release and the next starts there. A wave
with no barrier of its own (the attention scores at short contexts) shares the
interval of the next wave that has one, as in trace_summary.py. Within an
interval the waves, in plan order, take turns: wave i's span runs from the
latest task end of the waves before it in the interval (or the interval's
start) to the latest task end of its own tasks (or of those before, if later).
The spans of an interval's waves plus its barrier latency are the interval.
Time a worker spends after the release before starting its next task thus
counts in the next wave's span, as does the token selection in the first; so
does the slowest worker's lead over the others (imbalance), since a span ends
at the wave's last task end.

The per-wave parts are kept as pieces (wave, category, microseconds), so the
same sums give the step's accounting, the GEMV part by wave name (q+k+v, o,
ffn, lm_head) and the accounting of one layer's window.

After the accounting come two tables that say what is behind its parts: the
barriers by the opcode of the wave each closes, with the medians of the time
from the last worker's arrival to the first and to the last departure (the
barrier itself, not the stragglers it waits for), every task's duration by
opcode (10th, 50th and 90th percentiles, the largest: a wave waits for its
slowest task; attention also split into chunk 0 and the others, since in
short mode only chunk 0's tasks attend), and the tasks that stream weights
by wave name: the median task's time and bytes, the rate that makes, and
that rate against one worker's share of the bandwidth (B over the workers). From a trace of
`tirun bench --worker-mode compute-only`, where nothing waits for memory,
the last says how much faster than HBM the consumers are. A trace with the
tasks' inputs marks (the stream worker's) adds where a task's time goes
before and after its inputs, each wave's hand-off on the critical path, and
that hand-off as each worker's first task of the wave saw it (the workers
already waiting for it, and when their inputs came: handoff_readers_by_wave).

--png draws every worker's events (tasks by opcode, barrier waits in grey,
the selection in its own colour), one layer enlarged below (default: the
middle one), and under each panel a bar splitting its time as above.
"""
import argparse
import json
import re
import sys
from collections import defaultdict
from dataclasses import dataclass, field

from atomic_file import write_atomically
from benchstats import median

CATEGORIES = ("ideal", "gemv", "barrier", "attention", "other")
CATEGORY_LABELS = {
    "ideal": "ideal streaming",
    "gemv": "GEMV below the roofline",
    "barrier": "barrier latency",
    "attention": "attention",
    "other": "other",
}
SELECT_WAVE = -1     # The step's token selection, ordered before wave 0.
TAIL = "after the last barrier"


@dataclass
class Wave:
    """One wave's events: its tasks and the barrier that closes it (if any)."""
    index: int
    name: str
    opcode: str
    kind: str  # The opcode's kind (Opcodes.def); "select", "barrier" for those.
    tasks: list = field(default_factory=list)
    barriers: list = field(default_factory=list)

    @property
    def weight_bytes(self):
        return sum(t["args"].get("weight_bytes", 0) for t in self.tasks)

    @property
    def last_end(self):
        return max((end(t) for t in self.tasks), default=None)

    @property
    def release(self):
        return max((end(b) for b in self.barriers), default=None)


@dataclass
class Interval:
    """From one release (or the step's start) to the next (or the step's end)."""
    start: float
    stop: float
    waves: list
    closed: bool  # Ends at a barrier's release, not at the step's end.


@dataclass
class Piece:
    interval: int
    wave: object      # a Wave, or None for the time after the last barrier
    category: str
    us: float


@dataclass
class Accounting:
    start: float
    stop: float
    bandwidth_gbs: float
    kv_bytes: int
    waves: list
    intervals: list
    pieces: list

    @property
    def total(self):
        return self.stop - self.start

    def parts(self, pieces=None, total=None):
        """Microseconds per category. The last part takes the rounding, so the
        parts sum to the total as exactly as floating point allows."""
        pieces = self.pieces if pieces is None else pieces
        total = self.total if total is None else total
        sums = {c: 0.0 for c in CATEGORIES}
        for p in pieces:
            sums[p.category] += p.us
        sums["other"] = total - sum(sums[c] for c in CATEGORIES if c != "other")
        return sums


def end(event):
    return event["ts"] + event["dur"]


def category_of(kind):
    """The part a wave's span (less its ideal streaming time) belongs to, by
    its opcode's kind (Opcodes.def)."""
    if kind == "stream":
        return "gemv"
    if kind == "attention":
        return "attention"
    return "other"


def layer_of(name):
    m = re.match(r"L(\d+)\.", name)
    return int(m.group(1)) if m else None


def pattern_of(name):
    """A wave's name without its layer: "L7.q+k+v" -> "q+k+v"."""
    return re.sub(r"^L\d+\.", "", name)


def load_events(path):
    with open(path) as f:
        return [e for e in json.load(f)["traceEvents"] if e.get("ph") == "X"]


def group_waves(events):
    """The waves in plan order, the token selection first as its own wave."""
    waves = {}
    for e in events:
        cat = e["cat"]
        if cat == "select":
            index, name, opcode, kind = SELECT_WAVE, "select", "select", "select"
        elif cat == "barrier":
            index = e["args"]["wave"]
            name, opcode, kind = None, None, None
        else:
            index, name, opcode = e["args"]["wave"], e["name"], cat
            kind = e["args"].get("kind", "?")
        w = waves.setdefault(index, Wave(index, name, opcode, kind))
        if name is not None and w.name is None:
            w.name, w.opcode, w.kind = name, opcode, kind
        (w.barriers if cat == "barrier" else w.tasks).append(e)
    for w in waves.values():
        if w.name is None:  # A barrier with no tasks, e.g. the step's closing one.
            w.name = re.sub(r"^barrier ", "", w.barriers[0]["name"])
            w.opcode = w.kind = "barrier"
    return [waves[i] for i in sorted(waves)]


def cut_intervals(waves, start, stop):
    """Group the waves into the intervals their barriers close."""
    intervals, pending, t = [], [], start
    for w in waves:
        pending.append(w)
        if w.release is not None:
            intervals.append(Interval(t, w.release, pending, True))
            pending, t = [], w.release
    if pending or t < stop:
        intervals.append(Interval(t, stop, pending, False))
    return intervals


def wave_ideal_us(wave, bandwidth_gbs, kv_share_bytes):
    extra = kv_share_bytes if wave.kind == "attention" else 0
    return (wave.weight_bytes + extra) / (bandwidth_gbs * 1e3)


def interval_pieces(k, interval, bandwidth_gbs, kv_share_bytes):
    """Each wave's span as an ideal piece and a category piece, then the
    barrier latency (or, after the last barrier, the tail)."""
    pieces, t = [], interval.start
    for w in interval.waves:
        done = max(t, w.last_end if w.last_end is not None else t)
        ideal = wave_ideal_us(w, bandwidth_gbs, kv_share_bytes)
        pieces.append(Piece(k, w, "ideal", ideal))
        pieces.append(Piece(k, w, category_of(w.kind), done - t - ideal))
        t = done
    last = interval.waves[-1] if interval.waves else None
    if interval.closed:
        pieces.append(Piece(k, last, "barrier", interval.stop - t))
    elif interval.stop > t:
        pieces.append(Piece(k, None, "other", interval.stop - t))
    return pieces


def account(events, bandwidth_gbs, kv_bytes=0):
    if not events:
        raise ValueError("the trace has no events")
    if bandwidth_gbs <= 0:
        raise ValueError("the bandwidth must be positive")
    start = min(e["ts"] for e in events)
    stop = max(end(e) for e in events)
    waves = group_waves(events)
    attention = [w for w in waves if w.kind == "attention"]
    if kv_bytes and not attention:
        raise ValueError("--kv-bytes given but the trace has no attention wave")
    kv_share = kv_bytes / len(attention) if attention else 0
    intervals = cut_intervals(waves, start, stop)
    pieces = []
    for k, iv in enumerate(intervals):
        pieces += interval_pieces(k, iv, bandwidth_gbs, kv_share)
    return Accounting(start, stop, bandwidth_gbs, kv_bytes, waves, intervals, pieces)


def gemv_by_pattern(acc):
    """The GEMV part by wave name: waves, span, ideal, excess, effective GB/s."""
    rows = defaultdict(lambda: {"waves": 0, "span_us": 0.0, "ideal_us": 0.0,
                                "excess_us": 0.0, "bytes": 0})
    for p in acc.pieces:
        if p.wave is None or category_of(p.wave.kind) != "gemv":
            continue
        r = rows[pattern_of(p.wave.name)]
        if p.category == "ideal":
            r["waves"] += 1
            r["ideal_us"] += p.us
            r["span_us"] += p.us
            r["bytes"] += p.wave.weight_bytes
        elif p.category == "gemv":
            r["excess_us"] += p.us
            r["span_us"] += p.us
    for r in rows.values():
        r["gbs"] = r["bytes"] / r["span_us"] / 1e3 if r["span_us"] > 0 else 0.0
    return dict(sorted(rows.items(), key=lambda kv: -kv[1]["excess_us"]))


def other_by_opcode(acc):
    rows = defaultdict(float)
    for p in acc.pieces:
        if p.category == "other":
            rows[TAIL if p.wave is None else p.wave.opcode] += p.us
    return dict(sorted(rows.items(), key=lambda kv: -kv[1]))


def layer_window(acc, layer):
    """The intervals holding layer `layer`'s waves: (start, stop, pieces)."""
    ks = [k for k, iv in enumerate(acc.intervals)
          if any(layer_of(w.name) == layer for w in iv.waves)]
    if not ks:
        raise ValueError(f"no wave of layer {layer} in the trace")
    pieces = [p for p in acc.pieces if ks[0] <= p.interval <= ks[-1]]
    return acc.intervals[ks[0]].start, acc.intervals[ks[-1]].stop, pieces


def layers(acc):
    return sorted({layer_of(w.name) for w in acc.waves} - {None})


def quantile(values, q):
    """The nearest-rank q-quantile (0 < q <= 1) of `values`."""
    v = sorted(values)
    return v[max(0, min(len(v) - 1, -(-int(q * 1000) * len(v) // 1000) - 1))]


def barriers_by_opcode(acc):
    """The barriers by the opcode of the wave each closes (the last wave
    before it with tasks): how many, and the medians of the time from the last
    worker's arrival to the first worker's departure and to the last one's
    (the barrier itself, without the stragglers it waits for), in µs."""
    rows, opcode = {}, "select"
    for w in acc.waves:
        if w.tasks:
            opcode = w.opcode
        if not w.barriers:
            continue
        arrival = max(b["ts"] for b in w.barriers)
        first = min(end(b) for b in w.barriers) - arrival
        last = max(end(b) for b in w.barriers) - arrival
        rows.setdefault(opcode, []).append((first, last))
    return {op: {"barriers": len(r), "first_departure_us": median([x[0] for x in r]),
                 "last_departure_us": median([x[1] for x in r])} for op, r in rows.items()}


def tasks_by_opcode(acc):
    """Per opcode, the tasks' durations: count, 10th, 50th and 90th
    percentiles and the largest, in µs (a wave waits for its slowest). An
    attention trace that names each task's chunk also gets the rows
    "attention chunk 0" and "attention chunks 1+": in short mode only chunk
    0's tasks have positions to attend."""
    durations = {}
    for w in acc.waves:
        for t in w.tasks:
            durations.setdefault(w.opcode, []).append(t["dur"])
            chunk = t.get("args", {}).get("chunk")
            if w.opcode == "attention" and chunk is not None:
                row = "attention chunk 0" if chunk == 0 else "attention chunks 1+"
                durations.setdefault(row, []).append(t["dur"])
    return {op: {"tasks": len(d), "p10_us": quantile(d, 0.1), "median_us": median(d),
                 "p90_us": quantile(d, 0.9), "max_us": max(d)} for op, d in durations.items()}


def workers_of(acc):
    return len({e["tid"] for w in acc.waves for e in w.tasks + w.barriers})


def streams_by_wave(acc):
    """The tasks that stream weights (kind "stream"), by wave name (a layer's
    waves as one): how many, the median task's duration and weight bytes,
    the rate those make (GB/s) and that rate over one worker's share of the
    bandwidth."""
    rows = {}
    for w in acc.waves:
        if w.kind != "stream":
            continue
        r = rows.setdefault(pattern_of(w.name), {"us": [], "bytes": []})
        for t in w.tasks:
            r["us"].append(t["dur"])
            r["bytes"].append(t["args"].get("weight_bytes", 0))
    share = acc.bandwidth_gbs / max(1, workers_of(acc))
    out = {}
    for name, r in rows.items():
        us, nbytes = median(r["us"]), median(r["bytes"])
        gbs = nbytes / us / 1e3 if us > 0 else 0.0
        out[name] = {"tasks": len(r["us"]), "median_us": us, "median_bytes": nbytes,
                     "gbs": gbs, "of_share": gbs / share if share > 0 else 0.0}
    return out


def inputs_us(task):
    """The task's start to its inputs mark (args.inputs_us), or None unmarked."""
    return task.get("args", {}).get("inputs_us")


def critical_steps(acc):
    """The waves on the step's critical path with the wave before each: every
    wave with tasks after the first, but the token selection."""
    before = None
    for w in acc.waves:
        if not w.tasks:
            continue
        if before is not None and w.index != SELECT_WAVE:
            yield before, w
        before = w


def inputs_by_wave(acc):
    """Where a task's time goes, by wave name (a layer's waves as one), over
    the tasks that marked their inputs' arrival (args.inputs_us: the
    worker's WeightStream::inputsReady): the medians of the task, of its
    start to that mark (waiting for the inputs, loading them, their norm or
    rotations) and of the mark to its end (the work on them). Empty for a
    trace without the marks."""
    rows = {}
    for w in acc.waves:
        for t in w.tasks:
            inputs = inputs_us(t)
            if inputs is None:
                continue
            r = rows.setdefault(pattern_of(w.name), {"task": [], "inputs": [], "work": []})
            r["task"].append(t["dur"])
            r["inputs"].append(inputs)
            r["work"].append(t["dur"] - inputs)
    return {name: {"tasks": len(r["task"]), "median_us": median(r["task"]),
                   "inputs_median_us": median(r["inputs"]),
                   "work_median_us": median(r["work"])} for name, r in rows.items()}


def critical_by_wave(acc):
    """Each wave's time on the step's critical path, by wave name (a layer's
    waves as one): from the last task of the wave before it to its own last
    task, so a barrier after the wave before, or a wait for its tags, counts
    here. Beside it, the wave's largest task's weight bytes at one worker's
    share of the bandwidth, and what is above that (medians)."""
    share = acc.bandwidth_gbs / max(1, workers_of(acc))  # GB/s = bytes per ns.
    rows = {}
    for before, w in critical_steps(acc):
        span = w.last_end - before.last_end
        largest = max(t["args"].get("weight_bytes", 0) for t in w.tasks)
        ideal = largest / share / 1e3 if share > 0 else 0.0
        r = rows.setdefault(pattern_of(w.name), {"span": [], "ideal": [], "above": []})
        r["span"].append(span)
        r["ideal"].append(ideal)
        r["above"].append(span - ideal)
    return {name: {"waves": len(r["span"]), "median_us": median(r["span"]),
                   "ideal_us": median(r["ideal"]), "above_us": median(r["above"])}
            for name, r in rows.items()}


def handoffs_by_wave(acc):
    """critical_by_wave's span cut at the wave's last inputs mark, by wave
    name (a layer's waves as one), over the waves with marks: from the last
    task of the wave before to the latest arrival of this wave's inputs (the
    hand-off: its outputs stored, seen by the readers, and for attention the
    rotations), then to the wave's last task's end (the work after it; medians
    over the waves). Empty for a trace without the marks."""
    rows = {}
    for before, w in critical_steps(acc):
        marks = [t["ts"] + m for t in w.tasks if (m := inputs_us(t)) is not None]
        if not marks:
            continue
        last = max(marks)
        r = rows.setdefault(pattern_of(w.name), {"to": [], "after": []})
        r["to"].append(last - before.last_end)
        r["after"].append(w.last_end - last)
    return {name: {"waves": len(r["to"]), "to_inputs_us": median(r["to"]),
                   "after_us": median(r["after"])} for name, r in rows.items()}


def handoff_readers_by_wave(acc):
    """What each worker's first task of a wave saw of its hand-off, by wave
    name (a layer's waves as one), over the waves with marks: times from the
    wave before's last task end (T0), each worker's first task of the wave
    counted once (its later tasks find their inputs there). Per wave: the
    share of workers already waiting at T0 (their first task began at or
    before it), the earliest inputs mark, the median and last marks of the
    waiting workers (the hand-off as a reader that was ready sees it: the
    writers' stores reaching L2, the polls' rounds, the inputs' loads and
    any norm before the mark), the latest first task's start (a reader
    still busy with the wave before) and the latest mark of all; medians
    over the waves (the waiting workers' marks over the waves that had
    any). The last mark is the hand-off of handoffs_by_wave when a worker's
    first task is its wave's latest. Empty for a trace without the marks."""
    rows = {}
    for before, w in critical_steps(acc):
        t0 = before.last_end
        first = {}
        for t in w.tasks:
            if t["tid"] not in first or t["ts"] < first[t["tid"]]["ts"]:
                first[t["tid"]] = t
        seen, waiting, starts = [], [], []
        for t in first.values():
            mark = inputs_us(t)
            if mark is None:
                continue
            start = t["ts"] - t0
            starts.append(start)
            seen.append(start + mark)
            if start <= 0:
                waiting.append(start + mark)
        if not seen:
            continue
        r = rows.setdefault(pattern_of(w.name), defaultdict(list))
        r["waiting_share"].append(len(waiting) / len(seen))
        r["first_seen"].append(min(seen))
        if waiting:
            r["waiting_median"].append(median(waiting))
            r["waiting_last"].append(max(waiting))
        r["last_start"].append(max(starts))
        r["last_seen"].append(max(seen))
    return {name: {"waves": len(r["first_seen"]),
                   "waiting_share": median(r["waiting_share"]),
                   "first_seen_us": median(r["first_seen"]),
                   "waiting_median_us": median(r["waiting_median"]) if r["waiting_median"] else None,
                   "waiting_last_us": median(r["waiting_last"]) if r["waiting_last"] else None,
                   "last_start_us": median(r["last_start"]),
                   "last_seen_us": median(r["last_seen"])} for name, r in rows.items()}


def late_workers(acc, top=5):
    """The workers whose last task of a wave ends furthest after the wave's
    median worker's, by wave name (a layer's waves as one): a dependent wave
    waits for the slowest, so a worker late in every layer is a cost of
    every layer. For each name: the median over its waves of (slowest end -
    median end), and the `top` workers by their mean lateness (us after the
    median end), latest first."""
    rows = {}
    for w in acc.waves:
        ends = {}
        for t in w.tasks:
            end = t["ts"] + t["dur"]
            ends[t["tid"]] = max(ends.get(t["tid"], end), end)
        if len(ends) < 2 or w.index == SELECT_WAVE:
            continue
        mid = median(list(ends.values()))
        r = rows.setdefault(pattern_of(w.name), {"spread": [], "late": {}})
        r["spread"].append(max(ends.values()) - mid)
        for tid, end in ends.items():
            r["late"].setdefault(tid, []).append(end - mid)
    out = {}
    for name, r in rows.items():
        mean = {tid: sum(v) / len(v) for tid, v in r["late"].items()}
        latest = sorted(mean.items(), key=lambda kv: (-kv[1], kv[0]))[:top]
        out[name] = {"waves": len(r["spread"]), "spread_us": median(r["spread"]),
                     "latest": [{"worker": tid, "late_us": us} for tid, us in latest]}
    return out


def to_json(acc):
    return {
        "step_us": acc.total,
        "bandwidth_gbs": acc.bandwidth_gbs,
        "weight_bytes": sum(w.weight_bytes for w in acc.waves),
        "kv_bytes": acc.kv_bytes,
        "workers": workers_of(acc),
        "waves": sum(1 for w in acc.waves if w.index != SELECT_WAVE),
        "barriers": sum(1 for iv in acc.intervals if iv.closed),
        "parts_us": acc.parts(),
        "gemv_by_wave": gemv_by_pattern(acc),
        "other_by_opcode": other_by_opcode(acc),
        "barriers_by_opcode": barriers_by_opcode(acc),
        "tasks_by_opcode": tasks_by_opcode(acc),
        "streams_by_wave": streams_by_wave(acc),
        "inputs_by_wave": inputs_by_wave(acc),
        "handoff_readers_by_wave": handoff_readers_by_wave(acc),
        "critical_by_wave": critical_by_wave(acc),
        "handoffs_by_wave": handoffs_by_wave(acc),
        "late_workers": late_workers(acc),
    }


def print_report(acc, out=None):
    out = out or sys.stdout
    j = to_json(acc)
    total = acc.total
    print(f"step: {total:.3f} us on {j['workers']} workers, {j['waves']} waves, "
          f"{j['barriers']} barriers", file=out)
    print(f"streamed: {j['weight_bytes']} weight bytes + {j['kv_bytes']} K/V bytes "
          f"at {acc.bandwidth_gbs:g} GB/s", file=out)
    print(f"{'part':<24} {'us':>9} {'%':>6}", file=out)
    for c, us in j["parts_us"].items():
        print(f"{CATEGORY_LABELS[c]:<24} {us:9.1f} {100 * us / total:6.1f}", file=out)
    print(f"{'step':<24} {total:9.1f} {100.0:6.1f}", file=out)
    print(f"{'above ideal':<24} {total - j['parts_us']['ideal']:9.1f} "
          f"{100 * (total - j['parts_us']['ideal']) / total:6.1f}", file=out)
    print(f"sum of the parts {sum(j['parts_us'].values()):.3f} us, step {total:.3f} us", file=out)
    print("GEMV below the roofline by wave:", file=out)
    print(f"  {'wave':<14} {'waves':>5} {'span us':>9} {'ideal us':>9} {'excess us':>9} {'GB/s':>7}",
          file=out)
    for name, r in j["gemv_by_wave"].items():
        print(f"  {name:<14} {r['waves']:>5} {r['span_us']:9.1f} {r['ideal_us']:9.1f} "
              f"{r['excess_us']:9.1f} {r['gbs']:7.0f}", file=out)
    print("other by opcode:", file=out)
    for name, us in j["other_by_opcode"].items():
        print(f"  {name:<24} {us:9.1f}", file=out)
    print("barriers by the wave they close, from the last arrival (medians):", file=out)
    print(f"  {'opcode':<20} {'barriers':>8} {'to first departure us':>22} "
          f"{'to last us':>10}", file=out)
    for name, r in j["barriers_by_opcode"].items():
        print(f"  {name:<20} {r['barriers']:>8} {r['first_departure_us']:22.2f} "
              f"{r['last_departure_us']:10.2f}", file=out)
    print("tasks by opcode (us):", file=out)
    print(f"  {'opcode':<20} {'tasks':>6} {'p10':>8} {'median':>8} {'p90':>8} {'max':>8}",
          file=out)
    for name, r in j["tasks_by_opcode"].items():
        print(f"  {name:<20} {r['tasks']:>6} {r['p10_us']:8.2f} {r['median_us']:8.2f} "
              f"{r['p90_us']:8.2f} {r['max_us']:8.2f}", file=out)
    share = acc.bandwidth_gbs / max(1, j["workers"])
    print(f"streaming tasks by wave (medians; a worker's share of {acc.bandwidth_gbs:g} GB/s "
          f"is {share:.1f}):", file=out)
    print(f"  {'wave':<14} {'tasks':>6} {'us':>8} {'bytes':>10} {'GB/s':>7} {'x share':>7}",
          file=out)
    for name, r in j["streams_by_wave"].items():
        print(f"  {name:<14} {r['tasks']:>6} {r['median_us']:8.2f} {r['median_bytes']:10.0f} "
              f"{r['gbs']:7.1f} {r['of_share']:7.2f}", file=out)
    if j["inputs_by_wave"]:
        print("tasks by wave, to their inputs and after (medians, us; the tasks that marked "
              "their inputs' arrival):", file=out)
        print(f"  {'wave':<14} {'tasks':>6} {'task':>8} {'inputs':>8} {'work':>8}", file=out)
        for name, r in j["inputs_by_wave"].items():
            print(f"  {name:<14} {r['tasks']:>6} {r['median_us']:8.2f} "
                  f"{r['inputs_median_us']:8.2f} {r['work_median_us']:8.2f}", file=out)
    print("waves on the critical path (the wave before's last task to this wave's last "
          "task; medians; ideal: its largest task's bytes at a worker's share):", file=out)
    print(f"  {'wave':<14} {'waves':>5} {'us':>8} {'ideal us':>9} {'above us':>9}", file=out)
    for name, r in j["critical_by_wave"].items():
        print(f"  {name:<14} {r['waves']:>5} {r['median_us']:8.2f} {r['ideal_us']:9.2f} "
              f"{r['above_us']:9.2f}", file=out)
    if j["handoffs_by_wave"]:
        print("hand-offs on the critical path (the wave before's last task to this wave's "
              "last inputs mark, then to its last task; medians, us):", file=out)
        print(f"  {'wave':<14} {'waves':>5} {'to inputs':>9} {'after':>8}", file=out)
        for name, r in j["handoffs_by_wave"].items():
            print(f"  {name:<14} {r['waves']:>5} {r['to_inputs_us']:9.2f} {r['after_us']:8.2f}",
                  file=out)
    if j["handoff_readers_by_wave"]:
        print("hand-offs as each worker's first task of a wave saw them (us from the wave "
              "before's last task end; medians over the waves): the workers already waiting, "
              "the first inputs mark, the waiting workers' median and last marks, the latest "
              "first task's start, the last mark:", file=out)
        print(f"  {'wave':<14} {'waves':>5} {'waiting':>8} {'first':>7} {'w.median':>8} "
              f"{'w.last':>7} {'l.start':>7} {'last':>7}", file=out)

        def us(v):
            return f"{v:7.2f}" if v is not None else f"{'-':>7}"
        for name, r in j["handoff_readers_by_wave"].items():
            print(f"  {name:<14} {r['waves']:>5} {100 * r['waiting_share']:7.0f}% "
                  f"{us(r['first_seen_us'])} {us(r['waiting_median_us']):>8} "
                  f"{us(r['waiting_last_us'])} {us(r['last_start_us'])} "
                  f"{us(r['last_seen_us'])}", file=out)
    print("late workers (a wave's slowest end after its median worker's, median over the "
          "waves; the workers latest on average, us after the median end):", file=out)
    print(f"  {'wave':<14} {'waves':>5} {'spread us':>9}  latest workers", file=out)
    for name, r in j["late_workers"].items():
        latest = ", ".join(f"{x['worker']} {x['late_us']:.2f}" for x in r["latest"])
        print(f"  {name:<14} {r['waves']:>5} {r['spread_us']:9.2f}  {latest}", file=out)


# --- the picture -------------------------------------------------------------

BARRIER_COLOR = "#d9d9d9"
CATEGORY_COLORS = {
    "ideal": "#4d4d4d",
    "gemv": "#6baed6",
    "barrier": "#bdbdbd",
    "attention": "#fb6a4a",
    "other": "#c49c94",
}


# Opcodes get colours in the order they first appear in the step (the same
# plan always colours alike), the token selection its own.
PALETTE = ["#b8860b", "#8c564b", "#1f77b4", "#d62728", "#ff7f7f", "#2ca02c", "#9467bd",
           "#17becf", "#7f7f7f", "#e377c2", "#bcbd22", "#aec7e8", "#ffbb78", "#98df8a"]
SELECT_COLOR = "#f2c200"
assigned_colors = {}


def opcode_color(opcode):
    if opcode == "select":
        return SELECT_COLOR
    if opcode not in assigned_colors:
        assigned_colors[opcode] = PALETTE[len(assigned_colors) % len(PALETTE)]
    return assigned_colors[opcode]


def draw_events(ax, acc, workers, t0):
    """Every event as a thin bar in its worker's row, one collection per colour."""
    from matplotlib.collections import PolyCollection
    by_color = defaultdict(list)
    for w in acc.waves:
        for e in w.tasks:
            by_color[opcode_color(w.opcode)].append(e)
        for e in w.barriers:
            by_color[BARRIER_COLOR].append(e)
    row = {tid: i for i, tid in enumerate(workers)}
    for color, events in by_color.items():
        verts = []
        for e in events:
            x0, x1, y = e["ts"] - t0, end(e) - t0, row[e["tid"]]
            verts.append([(x0, y - 0.42), (x1, y - 0.42), (x1, y + 0.42), (x0, y + 0.42)])
        z = 1 if color == BARRIER_COLOR else 2
        ax.add_collection(PolyCollection(verts, facecolors=color, edgecolors=color,
                                         linewidths=0.15, antialiased=False, zorder=z))
    ax.set_ylim(len(workers) - 0.5, -0.5)
    n = len(workers)
    ticks = sorted({0, n // 4, n // 2, 3 * n // 4, n - 1})
    ax.set_yticks(ticks)
    ax.set_yticklabels([str(workers[i]) for i in ticks])
    ax.set_ylabel("worker")


def draw_parts(ax, parts, x0, total, title):
    """A stacked bar from x0 splitting `total` into the accounting parts."""
    x = x0
    for c in CATEGORIES:
        us = max(parts[c], 0.0)
        ax.barh(0, us, left=x, height=1.0, color=CATEGORY_COLORS[c], edgecolor="white",
                linewidth=0.5)
        share = us / total if total > 0 else 0
        if share > 0.03:
            text = f"{CATEGORY_LABELS[c]}  {us:.1f} µs ({100 * share:.0f}%)"
            if share < 0.16:
                text = f"{us:.1f} µs\n{100 * share:.0f}%"
            ax.text(x + us / 2, 0, text, ha="center", va="center", fontsize=7.5,
                    color="white" if c == "ideal" else "black")
        x += us
    ax.set_ylim(-0.5, 0.5)
    ax.set_yticks([])
    ax.set_ylabel(title, rotation=0, ha="right", va="center", fontsize=8)


def plot(acc, layer, path):
    import matplotlib
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    from matplotlib.patches import Patch

    t0, total = acc.start, acc.total
    workers = sorted({e["tid"] for w in acc.waves for e in w.tasks + w.barriers})
    l0, l1, lpieces = layer_window(acc, layer)

    fig = plt.figure(figsize=(16, 12.5), dpi=120)
    gs = fig.add_gridspec(6, 1, height_ratios=[10, 0.7, 1.1, 6.5, 0.7, 1.1], hspace=0.12,
                          left=0.07, right=0.985, top=0.955, bottom=0.03)
    top = fig.add_subplot(gs[0])
    top_bar = fig.add_subplot(gs[1], sharex=top)
    low = fig.add_subplot(gs[3])
    low_bar = fig.add_subplot(gs[4], sharex=low)
    legend_ax = fig.add_subplot(gs[5])
    legend_ax.axis("off")

    draw_events(top, acc, workers, t0)
    top.set_xlim(0, total)
    top.axvspan(l0 - t0, l1 - t0, facecolor="none", edgecolor="black", linewidth=0.8,
                linestyle="--", zorder=3)
    top.text((l0 + l1) / 2 - t0, len(workers) - 0.5, f"layer {layer}", fontsize=8,
             ha="center", va="top", backgroundcolor="white", zorder=4)
    top.tick_params(labelbottom=False)
    top.set_title(f"One step: {total:.1f} µs on {len(workers)} workers; ideal streaming at "
                  f"{acc.bandwidth_gbs:g} GB/s is {acc.parts()['ideal']:.1f} µs", fontsize=10, loc="left")
    draw_parts(top_bar, acc.parts(), 0, total, "step")
    top_bar.set_xlabel("µs from the step's start", fontsize=9)

    draw_events(low, acc, workers, t0)
    low.set_xlim(l0 - t0, l1 - t0)
    low.tick_params(labelbottom=False)
    low.set_title(f"Layer {layer} enlarged: {l1 - l0:.1f} µs", fontsize=10, loc="left",
                  pad=16)
    ks = sorted({p.interval for p in lpieces})
    for k in ks:
        iv = acc.intervals[k]
        low.axvline(iv.stop - t0, color="black", linewidth=0.6, linestyle=":", zorder=3)
        names = [pattern_of(w.name) for w in iv.waves if w.tasks and w.index != SELECT_WAVE]
        if names:
            low.text((iv.start + iv.stop) / 2 - t0, 1.005, " + ".join(names), ha="center",
                     va="bottom", fontsize=8, clip_on=False, transform=low.get_xaxis_transform())
    draw_parts(low_bar, acc.parts(lpieces, l1 - l0), l0 - t0, l1 - l0, f"layer {layer}")
    low_bar.set_xlabel("µs from the step's start", fontsize=9)

    opcodes = [w.opcode for w in acc.waves if w.tasks]
    seen = list(dict.fromkeys(opcodes))
    handles = [Patch(color=opcode_color(o), label=o) for o in seen]
    handles.append(Patch(color=BARRIER_COLOR, label="barrier wait"))
    first = legend_ax.legend(handles=handles, loc="upper left", ncol=6, fontsize=8,
                             title="events", title_fontsize=8, frameon=False)
    legend_ax.add_artist(first)
    handles = [Patch(color=CATEGORY_COLORS[c], label=CATEGORY_LABELS[c]) for c in CATEGORIES]
    legend_ax.legend(handles=handles, loc="upper right", ncol=3, fontsize=8,
                     title="accounting", title_fontsize=8, frameon=False)

    write_atomically(path, lambda f: fig.savefig(f, format="png"), binary=True)
    plt.close(fig)


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("trace")
    ap.add_argument("--bandwidth-gbs", type=float, required=True,
                    help="the measured streaming bandwidth, GB/s")
    ap.add_argument("--kv-bytes", type=int, default=0,
                    help="K/V cache bytes the step reads (not in the trace)")
    ap.add_argument("--png", help="draw the timeline here")
    ap.add_argument("--layer", type=int, help="the layer to enlarge (default: the middle one)")
    ap.add_argument("--json", help="write the accounting here")
    args = ap.parse_args(argv)
    try:
        acc = account(load_events(args.trace), args.bandwidth_gbs, args.kv_bytes)
        ls = layers(acc)
        layer = args.layer if args.layer is not None else (ls[len(ls) // 2] if ls else None)
        if args.png and layer is None:
            raise ValueError("no layer wave (named L<n>.*) in the trace to enlarge")
        if args.png:
            layer_window(acc, layer)
            import matplotlib  # noqa: F401  (before the report, so an error comes alone)
    except ImportError:
        print("trace_timeline: error: --png needs matplotlib", file=sys.stderr)
        return 1
    except (OSError, KeyError, ValueError) as e:
        print(f"trace_timeline: error: {e}", file=sys.stderr)
        return 1
    print_report(acc)
    if args.json:
        write_atomically(args.json, lambda f: json.dump(to_json(acc), f, indent=1))
    if args.png:
        plot(acc, layer, args.png)
    return 0


if __name__ == "__main__":
    sys.exit(main())
