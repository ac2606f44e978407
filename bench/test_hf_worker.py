#!/usr/bin/env python3
"""What hf_worker.py's timed loop asks of CUDA, in order, without torch or a
GPU: a stand-in torch records every call. Each timed step must sit behind a
GPU sleep that covers the host's queueing of it, between the events that
time it, and the sleep must be sized from the host's measured time.

  python3 bench/test_hf_worker.py
"""
import os
import sys
import unittest

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import hf_worker  # noqa: E402


class Clock:
    """time.perf_counter for hf_worker: advances only when told."""

    def __init__(self):
        self.now = 0.0

    def perf_counter(self):
        return self.now


class FakeCuda:
    def __init__(self, calls, clock):
        self.calls = calls
        self.clock = clock
        self.sleep_ms = {}  # cycles -> ms the fake GPU takes for them.
        calls_ = calls

        class Event:
            count = 0

            def __init__(self, enable_timing=False):
                assert enable_timing
                Event.count += 1
                self.name = "start" if Event.count % 2 else "end"

            def record(self):
                calls_.append(("record", self.name))

            def synchronize(self):
                calls_.append(("wait", self.name))

            def elapsed_time(self, other):
                return 10.0  # ms: the calibration sleep's, and every step's.

        self.Event = Event

    def synchronize(self):
        self.calls.append(("synchronize",))

    def _sleep(self, cycles):
        self.calls.append(("sleep", cycles))


class FakeTorch:
    def __init__(self, calls, clock):
        self.cuda = FakeCuda(calls, clock)


class StepWorker(hf_worker.Worker):
    """A worker whose step is one recorded call that takes the host 1 ms."""

    def __init__(self, torch, calls, clock):
        self.torch = torch
        self.calls = calls
        self.clock = clock
        self.context_len = 5
        self.cycles_per_ms = None

    def prepare_step(self, n):
        self.calls.append(("prepare", n))

        def step():
            self.clock.now += 1e-3
            self.calls.append(("step",))

        return step

    def after_step(self, n):
        self.calls.append(("after", n))


class TimedLoopTest(unittest.TestCase):
    def setUp(self):
        self.calls, self.clock = [], Clock()
        self.saved = hf_worker.time.perf_counter
        hf_worker.time.perf_counter = self.clock.perf_counter
        self.worker = StepWorker(FakeTorch(self.calls, self.clock), self.calls, self.clock)

    def tearDown(self):
        hf_worker.time.perf_counter = self.saved

    def test_each_step_is_queued_behind_a_sleep_that_covers_the_host(self):
        result = self.worker.measure(2)
        self.assertEqual(result, {"context": 5, "ms": [10.0, 10.0]})
        # The clock: 10,000,000 cycles in 10 ms. The host queues a step in 1 ms,
        # so the cover is (2 * 1 + 0.5) ms of cycles.
        cover = int((2 * 1.0 + 0.5) * hf_worker.CALIBRATION_CYCLES / 10.0)
        timed = [("prepare", 5), ("sleep", cover), ("record", "start"), ("step",),
                 ("record", "end"), ("wait", "end"), ("after", 5)]
        self.assertEqual(self.calls, [
            ("prepare", 5), ("synchronize",),
            ("record", "start"), ("sleep", hf_worker.CALIBRATION_CYCLES), ("record", "end"),
            ("wait", "end"),
            ("step",), ("synchronize",), ("after", 5)] + timed + timed)

    def test_the_clock_is_measured_once(self):
        self.worker.measure(1)
        del self.calls[:]
        self.worker.measure(1)
        self.assertNotIn(("sleep", hf_worker.CALIBRATION_CYCLES), self.calls)
        self.assertEqual(self.calls[:4], [("prepare", 5), ("synchronize",), ("step",),
                                          ("synchronize",)])


if __name__ == "__main__":
    unittest.main()
