#!/usr/bin/env python3
"""Tests of trace_timeline.py's accounting: hand-made traces whose parts are
worked out by hand, and the sample trace from the H200 (test/bench/Inputs).

  python3 bench/test_trace_timeline.py
"""
import contextlib
import io
import json
import os
import sys
import tempfile
import unittest

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
import trace_timeline as tt  # noqa: E402

SAMPLE = os.path.join(HERE, "..", "test", "bench", "Inputs", "sample-trace.json")


# The kinds tirun writes for these opcodes (include/ti/Plan/Opcodes.def).
KINDS = {"gemv": "stream", "lm_head": "stream", "ffn_partial": "stream", "embed": "gather",
         "select_token": "control", "attention": "attention", "reduce_residual": "reduce"}


def task(tid, wave, name, opcode, ts, dur, weight_bytes=0):
    return {"ph": "X", "pid": 0, "tid": tid, "cat": opcode, "name": name, "ts": ts, "dur": dur,
            "args": {"wave": wave, "task": 0, "rows": [0, 1], "weight_bytes": weight_bytes,
                     "kind": KINDS[opcode]}}


def barrier(tid, wave, name, ts, dur):
    return {"ph": "X", "pid": 0, "tid": tid, "cat": "barrier", "name": "barrier " + name,
            "ts": ts, "dur": dur, "args": {"wave": wave}}


def select(tid, ts, dur):
    return {"ph": "X", "pid": 0, "tid": tid, "cat": "select", "name": "select", "ts": ts,
            "dur": dur, "args": {"step": 1}}


# Two workers, three waves, each closed by a barrier. At 1 GB/s a byte takes
# 1e-3 us, so wave 0's 2,000 weight bytes take 2 us.
#
#   wave 0 gemv      w0 task 0-5,    barrier 5-8    (release 8, last end 6)
#                    w1 task 0-6,    barrier 6-8
#   wave 1 attention w0 task 8.5-10, barrier 10-13  (release 13.5, last end 12)
#                    w1 task 9-12,   barrier 12-13.5
#   wave 2 reduce    w0 task 14-15,  barrier 15-16  (release 16, last end 15)
#                    w1 task 13.5-14.5, barrier 14.5-16
THREE_WAVES = [
    task(0, 0, "L0.q+k+v", "gemv", 0, 5, 1000), barrier(0, 0, "L0.q+k+v", 5, 3),
    task(1, 0, "L0.q+k+v", "gemv", 0, 6, 1000), barrier(1, 0, "L0.q+k+v", 6, 2),
    task(0, 1, "L0.a", "attention", 8.5, 1.5), barrier(0, 1, "L0.a", 10, 3),
    task(1, 1, "L0.a", "attention", 9, 3), barrier(1, 1, "L0.a", 12, 1.5),
    task(0, 2, "L0.ffn_reduce", "reduce_residual", 14, 1), barrier(0, 2, "L0.ffn_reduce", 15, 1),
    task(1, 2, "L0.ffn_reduce", "reduce_residual", 13.5, 1),
    barrier(1, 2, "L0.ffn_reduce", 14.5, 1.5),
]


class HandMadeTrace(unittest.TestCase):
    def assertParts(self, parts, expected, total):
        for c in tt.CATEGORIES:
            self.assertAlmostEqual(parts[c], expected[c], places=9, msg=c)
        self.assertAlmostEqual(sum(parts.values()), total, places=9)

    def test_three_waves(self):
        acc = tt.account(THREE_WAVES, bandwidth_gbs=1.0)
        self.assertEqual(acc.total, 16)
        # ideal: 2,000 bytes at 1 GB/s. gemv: span 0-6 less the ideal 2.
        # barrier: 8-6, 13.5-12, 16-15. attention: 8-12. other: 13.5-15.
        self.assertParts(acc.parts(), {"ideal": 2, "gemv": 4, "barrier": 4.5,
                                       "attention": 4, "other": 1.5}, 16)

    def test_barriers_and_tasks_by_opcode(self):
        acc = tt.account(THREE_WAVES, bandwidth_gbs=1.0)
        # Wave 0: last arrival 6, departures 8 and 8. Wave 1: last arrival 12,
        # departures 13 and 13.5. Wave 2: last arrival 15, departures 16, 16.
        self.assertEqual(tt.barriers_by_opcode(acc), {
            "gemv": {"barriers": 1, "first_departure_us": 2.0, "last_departure_us": 2.0},
            "attention": {"barriers": 1, "first_departure_us": 1.0,
                                 "last_departure_us": 1.5},
            "reduce_residual": {"barriers": 1, "first_departure_us": 1.0,
                                "last_departure_us": 1.0}})
        tasks = tt.tasks_by_opcode(acc)
        self.assertEqual(tasks["gemv"], {"tasks": 2, "p10_us": 5, "median_us": 5.5, "p90_us": 6,
                                         "max_us": 6})
        self.assertEqual(tasks["attention"]["median_us"], 2.25)
        # No chunk in the events: no per-chunk rows.
        self.assertNotIn("attention chunk 0", tasks)

    def test_attention_tasks_by_chunk(self):
        # The same trace with w0's attention task of chunk 0, w1's of chunk 1.
        events = [dict(e, args=dict(e["args"])) for e in THREE_WAVES]
        for e, chunk in zip([e for e in events if e["cat"] == "attention"], (0, 1)):
            e["args"]["chunk"] = chunk
        tasks = tt.tasks_by_opcode(tt.account(events, bandwidth_gbs=1.0))
        self.assertEqual(tasks["attention"]["tasks"], 2)
        self.assertEqual((tasks["attention chunk 0"]["tasks"], tasks["attention chunk 0"]["max_us"]),
                         (1, 1.5))
        self.assertEqual((tasks["attention chunks 1+"]["tasks"],
                          tasks["attention chunks 1+"]["max_us"]), (1, 3))

    def test_inputs_by_wave(self):
        # No marks in the hand-made trace: no rows, and no table printed.
        acc = tt.account(THREE_WAVES, bandwidth_gbs=1.0)
        self.assertEqual(tt.inputs_by_wave(acc), {})
        # w0's attention task (1.5 us) marked its inputs at 0.5, w1's (3 us) at 2.
        events = [dict(e, args=dict(e["args"])) for e in THREE_WAVES]
        for e, mark in zip([e for e in events if e["cat"] == "attention"], (0.5, 2.0)):
            e["args"]["inputs_us"] = mark
        rows = tt.inputs_by_wave(tt.account(events, bandwidth_gbs=1.0))
        self.assertEqual(list(rows), ["a"])  # "L0.a" without its layer.
        r = rows["a"]
        self.assertEqual((r["tasks"], r["median_us"], r["inputs_median_us"], r["work_median_us"]),
                         (2, 2.25, 1.25, 1.0))

    def test_handoffs_by_wave(self):
        # No marks: no rows. With w0's attention task (8.5-10) marked at 0.5
        # and w1's (9-12) at 2: the last inputs at 11, 5 us after wave 0's
        # last end (6), and 1 us before wave 1's (12).
        self.assertEqual(tt.handoffs_by_wave(tt.account(THREE_WAVES, bandwidth_gbs=1.0)), {})
        events = [dict(e, args=dict(e["args"])) for e in THREE_WAVES]
        for e, mark in zip([e for e in events if e["cat"] == "attention"], (0.5, 2.0)):
            e["args"]["inputs_us"] = mark
        rows = tt.handoffs_by_wave(tt.account(events, bandwidth_gbs=1.0))
        self.assertEqual(rows, {"a": {"waves": 1, "to_inputs_us": 5.0, "after_us": 1.0}})

    def test_handoff_readers_by_wave(self):
        # No marks: no rows. Marked as in test_handoffs_by_wave, both
        # attention tasks begin after wave 0's last end (6), behind the
        # barrier: nobody waiting, the first mark 3 us after it (w0: 8.5 +
        # 0.5), the last 5 (w1: 9 + 2), the latest start 3 (w1 at 9).
        self.assertEqual(tt.handoff_readers_by_wave(tt.account(THREE_WAVES, bandwidth_gbs=1.0)),
                         {})
        events = [dict(e, args=dict(e["args"])) for e in THREE_WAVES]
        for e, mark in zip([e for e in events if e["cat"] == "attention"], (0.5, 2.0)):
            e["args"]["inputs_us"] = mark
        rows = tt.handoff_readers_by_wave(tt.account(events, bandwidth_gbs=1.0))
        self.assertEqual(rows, {"a": {"waves": 1, "waiting_share": 0.0, "first_seen_us": 3.0,
                                      "waiting_median_us": None, "waiting_last_us": None,
                                      "last_start_us": 3.0, "last_seen_us": 5.0}})
        # Tagged hand-offs, no barriers: w0 ends wave 0 at 5 and waits from
        # there (its first attention task 5-8, inputs at +1.5: 0.5 after
        # wave 0's last end at 6); w1 ends it at 6 and starts at 6.25 (inputs
        # at +0.25: 0.5). w1's second task (9-10, inputs at once) is not its
        # first and does not count.
        tagged = [
            task(0, 0, "L0.q+k+v", "gemv", 0, 5, 1000),
            task(1, 0, "L0.q+k+v", "gemv", 0, 6, 1000),
            task(0, 1, "L0.a", "attention", 5, 3), task(1, 1, "L0.a", "attention", 6.25, 2.75),
            task(1, 1, "L0.a", "attention", 9, 1), barrier(0, 1, "L0.a", 8, 2),
            barrier(1, 1, "L0.a", 10, 0),
        ]
        for e, mark in zip([e for e in tagged if e["cat"] == "attention"], (1.5, 0.25, 0.0)):
            e["args"]["inputs_us"] = mark
        rows = tt.handoff_readers_by_wave(tt.account(tagged, bandwidth_gbs=1.0))
        self.assertEqual(rows, {"a": {"waves": 1, "waiting_share": 0.5, "first_seen_us": 0.5,
                                      "waiting_median_us": 0.5, "waiting_last_us": 0.5,
                                      "last_start_us": 0.25, "last_seen_us": 0.5}})

    def test_streams_by_wave(self):
        acc = tt.account(THREE_WAVES, bandwidth_gbs=1.0)
        # Only wave 0 streams: tasks of 5 and 6 us, 1,000 bytes each; two
        # workers share 1 GB/s, 0.5 each.
        rows = tt.streams_by_wave(acc)
        self.assertEqual(list(rows), ["q+k+v"])
        r = rows["q+k+v"]
        self.assertEqual((r["tasks"], r["median_us"], r["median_bytes"]), (2, 5.5, 1000))
        self.assertAlmostEqual(r["gbs"], 1000 / 5.5 / 1e3, places=12)
        self.assertAlmostEqual(r["of_share"], 1000 / 5.5 / 1e3 / 0.5, places=12)

    def test_critical_by_wave(self):
        acc = tt.account(THREE_WAVES, bandwidth_gbs=1.0)
        crit = tt.critical_by_wave(acc)
        # Wave 1's last task ends at 12, wave 0's at 6; wave 2's at 15. Two
        # workers share 1 GB/s: wave 0's 1,000-byte tasks would take 2 us,
        # but wave 0 has no wave before it.
        self.assertEqual(set(crit), {"a", "ffn_reduce"})
        self.assertAlmostEqual(crit["a"]["median_us"], 6)
        self.assertAlmostEqual(crit["a"]["ideal_us"], 0)
        self.assertAlmostEqual(crit["ffn_reduce"]["median_us"], 3)
        self.assertAlmostEqual(crit["ffn_reduce"]["above_us"], 3)

    def test_late_workers(self):
        acc = tt.account(THREE_WAVES, bandwidth_gbs=1.0)
        late = tt.late_workers(acc)
        # Wave 0 ends at 5 and 6 (median 5.5): worker 1 is 0.5 late, worker
        # 0 0.5 early. Wave 1 ends at 10 and 12 (median 11).
        self.assertEqual(late["q+k+v"]["waves"], 1)
        self.assertAlmostEqual(late["q+k+v"]["spread_us"], 0.5)
        self.assertEqual([x["worker"] for x in late["q+k+v"]["latest"]], [1, 0])
        self.assertAlmostEqual(late["q+k+v"]["latest"][0]["late_us"], 0.5)
        self.assertAlmostEqual(late["a"]["spread_us"], 1.0)
        self.assertEqual(late["a"]["latest"][0]["worker"], 1)
        self.assertEqual(len(tt.late_workers(acc, top=1)["a"]["latest"]), 1)

    def test_quantiles_are_nearest_rank(self):
        v = list(range(1, 11))  # 1..10
        self.assertEqual(tt.quantile(v, 0.1), 1)
        self.assertEqual(tt.quantile(v, 0.9), 9)
        self.assertEqual(tt.quantile(v, 1.0), 10)
        self.assertEqual(tt.quantile([7], 0.9), 7)
        self.assertEqual(tt.median([3, 1, 2, 10]), 2.5)

    def test_kv_bytes_move_attention_time_into_ideal(self):
        acc = tt.account(THREE_WAVES, bandwidth_gbs=1.0, kv_bytes=1000)
        self.assertParts(acc.parts(), {"ideal": 3, "gemv": 4, "barrier": 4.5,
                                       "attention": 3, "other": 1.5}, 16)

    def test_kv_bytes_without_attention_are_refused(self):
        events = [e for e in THREE_WAVES if e["args"]["wave"] != 1]
        with self.assertRaises(ValueError):
            tt.account(events, bandwidth_gbs=1.0, kv_bytes=1000)

    def test_breakdowns_sum_to_their_parts(self):
        acc = tt.account(THREE_WAVES, bandwidth_gbs=1.0)
        gemv = tt.gemv_by_pattern(acc)
        self.assertEqual(list(gemv), ["q+k+v"])
        self.assertEqual(gemv["q+k+v"]["waves"], 1)
        self.assertAlmostEqual(gemv["q+k+v"]["span_us"], 6)
        self.assertAlmostEqual(gemv["q+k+v"]["excess_us"], 4)
        self.assertAlmostEqual(gemv["q+k+v"]["gbs"], 2000 / 6 / 1e3)
        self.assertEqual(tt.other_by_opcode(acc), {"reduce_residual": 1.5})

    def test_wave_without_barrier_shares_the_next_interval(self):
        # Two attention waves, the first without a barrier: the interval
        # 8-13.5 splits at the first's last end (11) and the second's (12.5).
        events = THREE_WAVES[:4] + [
            task(0, 1, "L0.a", "attention", 8.5, 1.5),
            task(1, 1, "L0.a", "attention", 9, 2),
            task(0, 2, "L0.a2", "attention", 10.5, 0.5),
            barrier(0, 2, "L0.a2", 11, 2.5),
            task(1, 2, "L0.a2", "attention", 11, 1.5),
            barrier(1, 2, "L0.a2", 12.5, 1),
        ]
        acc = tt.account(events, bandwidth_gbs=1.0)
        self.assertEqual([len(iv.waves) for iv in acc.intervals], [1, 2])
        spans = [p.us for p in acc.pieces if p.category == "attention"]
        self.assertEqual(spans, [3, 1.5])
        self.assertParts(acc.parts(), {"ideal": 2, "gemv": 4, "barrier": 3,
                                       "attention": 4.5, "other": 0}, 13.5)

    def test_selection_and_tail_are_other(self):
        # The selection (0-1) comes before wave 0; wave 1 has no barrier and
        # ends at 7, and worker 1's last task ends at 7.5 after it.
        events = [
            select(0, 0, 1), select(1, 0, 0.5),
            task(0, 0, "L0.o", "gemv", 1, 3, 500), barrier(0, 0, "L0.o", 4, 2),
            task(1, 0, "L0.o", "gemv", 1.5, 3.5, 500), barrier(1, 0, "L0.o", 5, 1),
            task(0, 1, "L0.ffn_reduce", "reduce_residual", 6, 1),
            task(1, 1, "L0.ffn_reduce", "reduce_residual", 6.5, 1),
        ]
        acc = tt.account(events, bandwidth_gbs=1.0)
        self.assertEqual([iv.closed for iv in acc.intervals], [True, False])
        # other: the selection 0-1, the reduce 6-7.5. gemv: 1-5 less 1.
        self.assertParts(acc.parts(), {"ideal": 1, "gemv": 3, "barrier": 1,
                                       "attention": 0, "other": 2.5}, 7.5)
        self.assertEqual(tt.other_by_opcode(acc), {"reduce_residual": 1.5, "select": 1})

    def test_categories(self):
        # By the opcode's kind alone: a new opcode of kind "stream" counts as
        # GEMV without this script knowing its name.
        self.assertEqual(tt.category_of("stream"), "gemv")
        self.assertEqual(tt.category_of("gather"), "other")
        self.assertEqual(tt.category_of("reduce"), "other")
        self.assertEqual(tt.category_of("control"), "other")
        self.assertEqual(tt.category_of("attention"), "attention")
        self.assertEqual(tt.category_of("select"), "other")

    def test_layer_window(self):
        acc = tt.account(THREE_WAVES, bandwidth_gbs=1.0)
        start, stop, pieces = tt.layer_window(acc, 0)
        self.assertEqual((start, stop), (0, 16))
        self.assertAlmostEqual(sum(p.us for p in pieces), 16)
        with self.assertRaises(ValueError):
            tt.layer_window(acc, 1)


class SampleTrace(unittest.TestCase):
    """Eight of the 132 workers of a real step on the H200."""

    @classmethod
    def setUpClass(cls):
        cls.acc = tt.account(tt.load_events(SAMPLE), bandwidth_gbs=4625.5, kv_bytes=32768)

    def test_parts_sum_to_the_step(self):
        parts = self.acc.parts()
        self.assertAlmostEqual(sum(parts.values()), self.acc.total, places=9)
        self.assertAlmostEqual(self.acc.total, 1380.384, places=9)
        self.assertAlmostEqual(sum(p.us for p in self.acc.pieces), self.acc.total, places=9)
        for c in tt.CATEGORIES:
            self.assertGreater(parts[c], 0, c)

    def test_breakdowns(self):
        parts = self.acc.parts()
        gemv = tt.gemv_by_pattern(self.acc)
        self.assertEqual(sorted(gemv), ["ffn", "lm_head", "o", "q+k+v"])
        self.assertAlmostEqual(sum(r["excess_us"] for r in gemv.values()), parts["gemv"], places=9)
        other = tt.other_by_opcode(self.acc)
        self.assertEqual(sorted(other), ["embed", "reduce_residual", "select", "select_token"])
        self.assertAlmostEqual(sum(other.values()), parts["other"], places=9)

    def test_every_layer_window_sums(self):
        self.assertEqual(tt.layers(self.acc), list(range(16)))
        for layer in tt.layers(self.acc):
            start, stop, pieces = tt.layer_window(self.acc, layer)
            parts = self.acc.parts(pieces, stop - start)
            self.assertAlmostEqual(parts["other"], sum(p.us for p in pieces if p.category == "other"),
                                   places=9)

    def test_command_line_writes_json_and_png(self):
        try:
            import matplotlib  # noqa: F401
        except ImportError:
            self.skipTest("no matplotlib")
        with tempfile.TemporaryDirectory() as d:
            png, js = os.path.join(d, "t.png"), os.path.join(d, "a.json")
            with contextlib.redirect_stdout(io.StringIO()) as out:
                rc = tt.main([SAMPLE, "--bandwidth-gbs", "4625.5", "--png", png, "--json", js,
                              "--layer", "3"])
            self.assertEqual(rc, 0)
            self.assertIn("GEMV below the roofline", out.getvalue())
            with open(png, "rb") as f:
                self.assertEqual(f.read(8), b"\x89PNG\r\n\x1a\n")
            with open(js) as f:
                j = json.load(f)
            self.assertAlmostEqual(sum(j["parts_us"].values()), j["step_us"], places=9)
            self.assertEqual(sorted(os.listdir(d)), ["a.json", "t.png"])

    def test_command_line_refuses_a_missing_layer(self):
        with contextlib.redirect_stderr(io.StringIO()) as err:
            rc = tt.main([SAMPLE, "--bandwidth-gbs", "4625.5", "--png", "/nonexistent/x.png",
                          "--layer", "99"])
        self.assertEqual(rc, 1)
        self.assertIn("no wave of layer 99", err.getvalue())


if __name__ == "__main__":
    unittest.main()
