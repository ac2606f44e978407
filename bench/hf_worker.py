"""A Transformers baseline behind the worker protocol of docs/benchmarking.md.

  python3 bench/hf_worker.py --variant eager|sdpa|cuda_graph|compile --checkpoint DIR
                             [--max-context 4096] [--static-cache max|per-context]

LlamaForCausalLM in BF16 on the GPU, loaded from DIR (bench/llama_checkpoint.py),
run four ways:

  eager, sdpa  the plain Transformers decode step with that attention and a
               DynamicCache; after each timed step the cache is cropped back to
               the context (outside the timed region).
  cuda_graph   SDPA, a StaticCache, and one decode step captured in a
               torch.cuda.CUDAGraph whose token and position are device tensors
               set before each replay.
  compile      the same step through torch.compile(mode="reduce-overhead"),
               compiled and warmed up before the worker says it is ready.

The static variants' cache (--static-cache):

  max          one StaticCache of max-context + 1 slots for every context,
               captured or compiled once; every step attends over all of it.
  per-context  (the default) a StaticCache sized to what is asked: N + 1 slots
               rounded up to SLOT_MULTIPLE for `context N`, PROMPT_LEN + M
               rounded up for `generate M` and `gaps M`. A new size drops the
               old cache and its graph or compiled step, then builds, captures
               or compiles (a fresh torch.compile after torch._dynamo.reset,
               shapes static), and checks the new ones before the command
               answers, outside every timed region.

The static variants pass their own 4-D additive mask (slot <= position), built
inside the step from the position tensor, so that the step does not depend on
how a Transformers version builds its mask for a static cache (decisions taken
on the host, which a replayed graph would not take again). Transformers 5 keeps
the static cache's write position in a per-layer device counter
(StaticLayer.cumulative_length) rather than taking cache_position; it is rewound
before each timed step, and cache_position is passed only to versions whose
LlamaModel still takes it. Both static variants are checked against the
uncaptured step at two positions before ready, and again after every new
cache size, so a position baked into the graph cannot go unnoticed.

Every timed step is queued behind a GPU sleep that outlasts the host's work
of queueing it (twice that work as measured on each measurement's first,
untimed step, and 0.5 ms more), so the CUDA events around it time the step's GPU
work alone: the baseline at its best, as a loop that keeps the GPU fed sees
it. From an idle GPU they also timed the host's launch work (Python, the
CUDA-graph trees' bookkeeping), which put torch.compile at 1.70-2.13 ms per
token at context 1 against 1.465 ms measured by hand (issue #13). The host
then waits for the step. One command per line on stdin, one JSON answer per
line on stdout; logs go to stderr.
"""
import argparse
import gc
import inspect
import json
import os
import sys
import time
import traceback

PROMPT_LEN = 6        # generate/gaps start from the first 6 standard tokens.
CHECK_POSITIONS = (8, 5)
# --static-cache per-context rounds its cache sizes up to this. The smallest
# cache, 64 slots, still holds both CHECK_POSITIONS (position p needs p + 1
# slots), so every size is checked at the same positions as the max cache.
SLOT_MULTIPLE = 64
STATIC_CACHES = ("max", "per-context")
# max |replayed - uncaptured| / max |uncaptured| over the logits. Inductor's
# fused BF16 kernels round differently from eager ones (2.2% seen on the H200;
# our own kernel differs from Transformers by up to 4.3%); a position baked
# into the graph would differ by the size of the logits themselves.
CHECK_TOLERANCE = 0.08
# The GPU sleep that measures the clock (torch.cuda._sleep counts cycles).
CALIBRATION_CYCLES = 10_000_000
# The cover's margin over the host's measured queueing time.
COVER_FACTOR, COVER_EXTRA_MS = 2.0, 0.5


def log(message):
    print(f"hf_worker: {message}", file=sys.stderr, flush=True)


_answers = sys.stdout


def answer(obj):
    _answers.write(json.dumps(obj) + "\n")
    _answers.flush()


def keep_stdout_for_answers():
    """Answers alone on standard output: whatever else writes there (a library's
    print, a C extension's printf) goes to standard error instead."""
    global _answers
    _answers = os.fdopen(os.dup(1), "w")
    os.dup2(2, 1)
    sys.stdout = sys.stderr


def describe(e):
    """One line for an exception; the traceback goes to stderr."""
    traceback.print_exc()
    lines = str(e).strip().splitlines()
    return f"{type(e).__name__}: {lines[0]}" if lines else type(e).__name__


def round_up(n, multiple):
    return -(-n // multiple) * multiple


def standard_tokens(count, vocab, bos):
    """docs/benchmarking.md: bos, then 1 + (i * 7919) mod (vocab - 1)."""
    return [bos] + [1 + (i * 7919) % (vocab - 1) for i in range(1, count)]


class Worker:
    """What every variant shares: the model, the standard sequence on the GPU,
    the timed loop and greedy generation. Subclasses give reset, prefill,
    decode and prepare_step, and may size their cache in fit."""

    def __init__(self, torch, model, max_context):
        self.torch = torch
        self.model = model
        self.max_context = max_context
        config = model.config
        bos = getattr(config, "bos_token_id", None)
        eos = getattr(config, "eos_token_id", None)
        if eos is None:
            eos = model.generation_config.eos_token_id
        if eos is None:
            eos = []
        self.eos = set([eos] if isinstance(eos, int) else eos)
        seq = standard_tokens(max_context + 1, config.vocab_size, 1 if bos is None else bos)
        self.tokens = torch.tensor([seq], dtype=torch.long, device="cuda")
        self.context_len = None
        self.cycles_per_ms = None  # The GPU's clock, measured once (cover_cycles).

    def context(self, n):
        if not 1 <= n <= self.max_context:
            raise ValueError(f"context {n} is outside 1..{self.max_context} (--max-context)")
        self.context_len = None
        self.fit(n + 1)  # Position n is the measured step's.
        self.torch.cuda.synchronize()
        t0 = time.perf_counter()
        self.reset()
        self.prefill(n)
        self.torch.cuda.synchronize()
        self.context_len = n
        return {"context": n, "seconds": time.perf_counter() - t0}

    def measure(self, reps):
        if self.context_len is None:
            raise ValueError("no context yet: send 'context N' first")
        n = self.context_len
        cuda = self.torch.cuda
        start, end = cuda.Event(enable_timing=True), cuda.Event(enable_timing=True)
        ms = []
        try:
            cover = self.cover_cycles(self.prepare_step(n))
            self.after_step(n)
            for _ in range(reps):
                step = self.prepare_step(n)
                cuda._sleep(cover)  # The GPU is busy while the host queues the step.
                start.record()
                step()
                end.record()
                end.synchronize()
                ms.append(start.elapsed_time(end))
                self.after_step(n)
        except Exception:
            self.context_len = None  # A failed step may leave the cache past n.
            raise
        return {"context": n, "ms": ms}

    def cover_cycles(self, step):
        """GPU clock cycles of a sleep that outlasts the host's queueing of
        `step`: runs it once, untimed, timing the host's part, then waits for
        the GPU. The clock is measured with a sleep the first time."""
        cuda = self.torch.cuda
        cuda.synchronize()
        if self.cycles_per_ms is None:
            start, end = cuda.Event(enable_timing=True), cuda.Event(enable_timing=True)
            start.record()
            cuda._sleep(CALIBRATION_CYCLES)
            end.record()
            end.synchronize()
            self.cycles_per_ms = CALIBRATION_CYCLES / start.elapsed_time(end)
        t0 = time.perf_counter()
        step()
        host_ms = (time.perf_counter() - t0) * 1e3
        cuda.synchronize()
        return int((COVER_FACTOR * host_ms + COVER_EXTRA_MS) * self.cycles_per_ms)

    def generate(self, count, gaps):
        """Greedy from the first PROMPT_LEN tokens on an empty cache; the last
        token is not fed back. Returns the tokens, the host seconds and, with
        gaps, each token's top-2 logit gap."""
        self.check_room(PROMPT_LEN + count - 1)
        torch = self.torch
        self.context_len = None  # The cache no longer holds a measured context.
        self.fit(PROMPT_LEN + count)
        self.reset()
        torch.cuda.synchronize()
        t0 = time.perf_counter()
        logits = self.prefill(PROMPT_LEN)
        tokens, top2 = [], []
        pos = PROMPT_LEN
        while True:
            token = logits.argmax(dim=-1)
            if gaps:
                best = logits.float().topk(2, dim=-1).values[0]
                top2.append(best[0] - best[1])
            tokens.append(int(token.item()))
            if tokens[-1] in self.eos or len(tokens) == count:
                break
            logits = self.decode(token.view(1, 1), pos)
            pos += 1
        torch.cuda.synchronize()
        seconds = time.perf_counter() - t0
        if gaps:
            return {"tokens": tokens, "top2_gap": torch.stack(top2).tolist()}
        return {"tokens": tokens, "seconds": seconds}

    def check_room(self, positions):
        pass

    def fit(self, positions):
        """Makes the cache hold at least `positions` positions; untimed."""

    def after_step(self, n):
        pass


class DynamicWorker(Worker):
    """eager / sdpa: Transformers' own decode step on a DynamicCache."""

    def __init__(self, torch, model, max_context):
        super().__init__(torch, model, max_context)
        from transformers import DynamicCache
        self.new_cache = DynamicCache
        self.cache = None

    def reset(self):
        self.cache = self.new_cache()

    def forward(self, ids):
        out = self.model(input_ids=ids, past_key_values=self.cache, use_cache=True,
                         logits_to_keep=1)
        return out.logits[:, -1, :]

    def prefill(self, n):
        return self.forward(self.tokens[:, :n])

    def decode(self, ids, pos):
        return self.forward(ids)

    def prepare_step(self, n):
        ids = self.tokens[:, n:n + 1]
        return lambda: self.forward(ids)

    def after_step(self, n):
        self.cache.crop(-1)  # Drop the step's one position (5.x: negative removes).


class StaticWorker(Worker):
    """cuda_graph / compile: one decode step over a StaticCache, replayed.
    Subclasses give build_step (capture or compile, then check) and drop_step."""

    def __init__(self, torch, model, max_context, per_context):
        super().__init__(torch, model, max_context)
        self.per_context = per_context
        self.takes_cache_position = (
            "cache_position" in inspect.signature(model.model.forward).parameters)
        self.ids = torch.zeros((1, 1), dtype=torch.long, device="cuda")
        self.pos = torch.zeros((1, 1), dtype=torch.long, device="cuda")
        self.check_error = 0.0  # The largest over every check.
        self.slots = None       # Set once a cache and its step are built and checked.
        self.cache = self.slot_ids = self.positions = None
        self.fit(1 + 1)         # Context 1's cache; --static-cache max's only one.

    def fit(self, positions):
        slots = round_up(positions, SLOT_MULTIPLE) if self.per_context else self.max_context + 1
        if slots == self.slots:
            return
        t0 = time.perf_counter()
        self.drop()
        self.build_cache(slots)
        err = self.build_step()
        self.slots = slots
        if self.per_context:
            log(f"a StaticCache of {slots} slots, {self.built}, replay vs uncaptured step "
                f"{err:.2g}, in {time.perf_counter() - t0:.1f} s; "
                f"{self.torch.cuda.memory_allocated() / 2**20:.0f} MiB allocated")

    def drop(self):
        """Frees the cache and what refers to it before another is built, so
        that one alone is held. Until a build has been checked self.slots is
        None, so after a failed one the next fit drops it and builds again."""
        if self.cache is None:
            return
        self.slots = None
        self.drop_step()
        self.cache = self.slot_ids = self.positions = None
        gc.collect()
        self.torch.cuda.empty_cache()

    def build_cache(self, slots):
        """The cache, and the mask's slot numbers and the prefill's positions, of `slots`."""
        import transformers
        from transformers import StaticCache
        torch = self.torch
        try:
            self.cache = StaticCache(config=self.model.config, max_cache_len=slots)
        except TypeError as e:
            raise RuntimeError(f"StaticCache(config=, max_cache_len=) under transformers "
                               f"{transformers.__version__}: {e}") from e
        self.slot_ids = torch.arange(slots, device="cuda").view(1, 1, 1, -1)
        self.positions = torch.arange(slots, device="cuda").view(1, -1)

    def context(self, n):
        got = super().context(n)
        if self.per_context:
            got["cache_slots"] = self.slots
        return got

    def forward(self, ids, pos):
        """ids, pos: [1, q]. The mask hides every slot after each query's position."""
        torch = self.torch
        mask = (self.slot_ids > pos.view(1, 1, -1, 1)).to(torch.bfloat16)
        mask = mask * torch.finfo(torch.bfloat16).min
        kwargs = dict(input_ids=ids, position_ids=pos, attention_mask=mask,
                      past_key_values=self.cache, use_cache=True, logits_to_keep=1)
        if self.takes_cache_position:
            kwargs["cache_position"] = pos.view(-1)
        return self.model(**kwargs).logits[:, -1, :]

    def reset(self):
        self.cache.reset()

    def rewind(self, n):
        """Transformers 5's static layers write at their own device counter."""
        for layer in self.cache.layers:
            counter = getattr(layer, "cumulative_length", None)
            if isinstance(counter, self.torch.Tensor):
                counter.fill_(n)

    def prefill(self, n):
        return self.forward(self.tokens[:, :n], self.positions[:, :n])

    def set_inputs(self, ids, pos):
        self.ids.copy_(ids)
        self.pos.fill_(pos)

    def decode(self, ids, pos):
        self.set_inputs(ids, pos)
        return self.replay()

    def prepare_step(self, n):
        self.set_inputs(self.tokens[:, n:n + 1], n)
        self.rewind(n)
        return self.replay

    def check_room(self, positions):
        room = self.max_context + 1
        if positions > room:
            raise ValueError(f"needs {positions} positions; --max-context {self.max_context} "
                             f"allows {room} (raise --max-context)")

    def check(self):
        """The replayed step against the uncaptured one at CHECK_POSITIONS;
        returns the largest difference."""
        torch = self.torch
        worst = 0.0
        for n in CHECK_POSITIONS:
            self.reset()
            self.prefill(n)
            self.set_inputs(self.tokens[:, n:n + 1], n)
            want = self.forward(self.ids, self.pos).float()
            for _ in range(3):
                self.rewind(n)
                got = self.replay().float()
            err = float((got - want).abs().max() / want.abs().max())
            if not err <= CHECK_TOLERANCE:
                raise RuntimeError(f"the replayed step differs from the uncaptured one at "
                                   f"position {n}: max relative difference {err:.3g}")
            worst = max(worst, err)
        torch.cuda.synchronize()
        self.check_error = max(self.check_error, worst)
        return worst


class GraphWorker(StaticWorker):
    built = "captured"

    def __init__(self, torch, model, max_context, per_context):
        self.graph = self.logits = None
        super().__init__(torch, model, max_context, per_context)

    def build_step(self):
        torch = self.torch
        # Warm up on a side stream, then capture (torch.cuda.graph's recipe).
        self.reset()
        self.prefill(1)
        self.set_inputs(self.tokens[:, 1:2], 1)
        side = torch.cuda.Stream()
        side.wait_stream(torch.cuda.current_stream())
        with torch.cuda.stream(side):
            for _ in range(3):
                self.rewind(1)
                self.forward(self.ids, self.pos)
        torch.cuda.current_stream().wait_stream(side)
        self.rewind(1)
        self.graph = torch.cuda.CUDAGraph()
        with torch.cuda.graph(self.graph):
            self.logits = self.forward(self.ids, self.pos)
        return self.check()

    def drop_step(self):
        self.graph = self.logits = None  # The graph's memory pool goes with both.

    def replay(self):
        self.graph.replay()
        return self.logits


class CompileWorker(StaticWorker):
    built = "compiled"

    def __init__(self, torch, model, max_context, per_context):
        self.compiled = None
        self.fullgraph = None  # Chosen by the first build, kept by the later ones.
        super().__init__(torch, model, max_context, per_context)

    def build_step(self):
        torch = self.torch
        # per-context: a fresh compilation for each cache size, after a reset
        # (which also frees the CUDA graphs recorded for the previous cache), so
        # that neither dynamo's recompile limit nor its automatic dynamic shapes
        # come into play; dynamic=False says the same.
        dynamic = False if self.per_context else None
        for fullgraph in (True, False) if self.fullgraph is None else (self.fullgraph,):
            torch._dynamo.reset()
            self.compiled = torch.compile(self.forward, mode="reduce-overhead",
                                          fullgraph=fullgraph, dynamic=dynamic)
            try:
                err = self.check()  # Compiles, warms up, and records the CUDA graphs.
            except Exception as e:
                if not fullgraph or self.fullgraph is not None:
                    raise
                log(f"fullgraph=True failed ({describe(e)}); trying fullgraph=False")
                continue
            self.fullgraph = fullgraph
            from torch._dynamo.utils import counters
            skips = counters["inductor"]["cudagraph_skips"]
            if self.per_context and skips:
                log(f"CUDA graph skips so far: {skips} (the step may run without CUDA graphs)")
            if not self.per_context:
                # Positions are tensors: a recompile now would be a bug, so make
                # it fail loudly. (per-context compiles afresh for each new size.)
                torch._dynamo.config.error_on_recompile = True
            return err

    def drop_step(self):
        self.compiled = None
        self.torch._dynamo.reset()

    def replay(self):
        self.torch.compiler.cudagraph_mark_step_begin()
        return self.compiled(self.ids, self.pos)


VARIANTS = {
    "eager": (DynamicWorker, "eager"),
    "sdpa": (DynamicWorker, "sdpa"),
    "cuda_graph": (GraphWorker, "sdpa"),
    "compile": (CompileWorker, "sdpa"),
}


def start(args):
    """Loads the model and builds the variant; returns (worker, ready answer)."""
    import torch
    import transformers
    from transformers import LlamaForCausalLM

    if not torch.cuda.is_available():
        raise RuntimeError("no CUDA device")
    torch.set_grad_enabled(False)
    cls, attention = VARIANTS[args.variant]
    model = LlamaForCausalLM.from_pretrained(args.checkpoint, dtype=torch.bfloat16,
                                             attn_implementation=attention)
    model = model.to("cuda").eval()
    t0 = time.perf_counter()
    if issubclass(cls, StaticWorker):
        worker = cls(torch, model, args.max_context, args.static_cache == "per-context")
    else:
        worker = cls(torch, model, args.max_context)
    detail = [f"transformers {transformers.__version__}", f"torch {torch.__version__}",
              f"{attention} attention"]
    if isinstance(worker, StaticWorker):
        if worker.per_context:
            detail.append(f"--static-cache per-context: a StaticCache of context + 1 slots "
                          f"rounded up to {SLOT_MULTIPLE} ({PROMPT_LEN} + tokens for generation), "
                          f"{worker.built} again for each new size, {worker.slots} at start")
        else:
            detail.append(f"--static-cache max: one StaticCache of {worker.slots} slots")
        detail.append("cache_position passed" if worker.takes_cache_position
                      else "no cache_position (device write counter)")
        if isinstance(worker, CompileWorker):
            from torch._dynamo.utils import counters
            detail.append(f"torch.compile reduce-overhead, fullgraph={worker.fullgraph}, "
                          f"CUDA graph skips {counters['inductor']['cudagraph_skips']}")
        else:
            detail.append("the decode step captured as one CUDA graph")
        detail.append(f"replay vs uncaptured step: max relative difference "
                      f"{worker.check_error:.2g}" + (" at start" if worker.per_context else ""))
        detail.append(f"ready in {time.perf_counter() - t0:.0f} s")
    else:
        detail.append("DynamicCache")
    return worker, {"ready": True, "runtime": args.variant,
                    "device": torch.cuda.get_device_name(), "detail": ", ".join(detail)}


def positive(word, arg):
    if arg is None or not arg.isdigit() or int(arg) < 1:
        raise ValueError(f"'{word}' needs a positive integer")
    return int(arg)


def serve(worker):
    for line in sys.stdin:
        words = line.split()
        if not words:
            continue
        word, arg = words[0], (words[1] if len(words) > 1 else None)
        try:
            if len(words) > 2:
                raise ValueError(f"'{line.strip()}': one argument at most")
            if word == "quit":
                return
            if word == "context":
                answer(worker.context(positive(word, arg)))
            elif word == "measure":
                answer(worker.measure(positive(word, arg)))
            elif word in ("generate", "gaps"):
                answer(worker.generate(positive(word, arg), gaps=word == "gaps"))
            else:
                raise ValueError(f"unknown command '{word}'")
        except Exception as e:
            answer({"error": describe(e)})


def refuse(message):
    """The start-up failure of the protocol: not ready, exit 1."""
    answer({"ready": False, "error": message})
    sys.exit(1)


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.error = refuse
    ap.add_argument("--variant", required=True, choices=sorted(VARIANTS))
    ap.add_argument("--checkpoint", required=True, help="a checkpoint from llama_checkpoint.py")
    ap.add_argument("--max-context", type=int, default=4096,
                    help="the largest context asked for (sizes the max static cache)")
    ap.add_argument("--static-cache", choices=STATIC_CACHES,
                    help="cuda_graph and compile: one cache sized to each context (per-context, "
                         "the default) or one of max-context + 1 slots (max)")
    args = ap.parse_args()
    keep_stdout_for_answers()
    if args.max_context < max(CHECK_POSITIONS):
        refuse(f"--max-context must be at least {max(CHECK_POSITIONS)}")
    static = issubclass(VARIANTS[args.variant][0], StaticWorker)
    if args.static_cache is not None and not static:
        refuse(f"--static-cache applies to cuda_graph and compile, not {args.variant}")
    args.static_cache = args.static_cache or "per-context"
    try:
        worker, ready = start(args)
    except Exception as e:
        refuse(describe(e))
    log(ready["detail"])
    answer(ready)
    serve(worker)


if __name__ == "__main__":
    main()
