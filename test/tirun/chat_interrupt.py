"""Drives tirun chat as a person would, through pipes: a reply, Ctrl-C
(SIGINT) once it is under way, another turn interrupted the same way, then
/exit. Checks that each interrupted reply ended early, that the second turn
reused the cache (the conversation went on), and that tirun exited 0. It waits
for what tirun prints rather than for fixed times, so that a slow build
(the sanitizer pass) runs it as well.

    python3 chat_interrupt.py TIRUN PLAN WEIGHTS
"""
import signal
import subprocess
import sys
import threading
import time

tirun, plan, weights = sys.argv[1:4]
proc = subprocess.Popen([tirun, "chat", plan, weights, "--backend", "cpu", "--threads", "1", "-n", "400"],
                        stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.PIPE)
streams = {"out": bytearray(), "err": bytearray()}


def pump(pipe, name):
    for chunk in iter(lambda: pipe.read1(4096), b""):
        streams[name] += chunk


threads = [threading.Thread(target=pump, args=(proc.stdout, "out"), daemon=True),
           threading.Thread(target=pump, args=(proc.stderr, "err"), daemon=True)]
for t in threads:
    t.start()


def wait_for(condition, what, seconds=300):
    deadline = time.time() + seconds
    while not condition():
        if proc.poll() is not None or time.time() > deadline:
            proc.kill()
            sys.stderr.write(streams["err"].decode(errors="replace"))
            sys.exit(f"tirun chat: no {what}")
        time.sleep(0.05)


def turns():
    return streams["err"].count(b"tokens reused")


for turn, line in enumerate([b"Tell me a very long story\n", b"And another\n"]):
    printed = len(streams["out"])
    proc.stdin.write(line)
    proc.stdin.flush()
    wait_for(lambda: len(streams["out"]) > printed, f"reply text in turn {turn + 1}")
    proc.send_signal(signal.SIGINT)
    wait_for(lambda: turns() == turn + 1, f"summary line after Ctrl-C in turn {turn + 1}")
proc.stdin.write(b"/exit\n")
proc.stdin.flush()
try:
    proc.wait(timeout=120)
except subprocess.TimeoutExpired:
    proc.kill()
    sys.exit("tirun chat did not leave after /exit")
for t in threads:
    t.join(timeout=10)
err = streams["err"].decode(errors="replace")
print(err, end="")
lines = [l for l in err.splitlines() if "tokens reused" in l]
if proc.returncode != 0:
    sys.exit(f"exit status {proc.returncode}")
for l in lines:
    if "(stop: Ctrl-C)" not in l:
        sys.exit("a reply did not stop at Ctrl-C: " + l)
generated = [int(l.split(" generated")[0].split()[-1]) for l in lines]
if len(lines) != 2 or not all(0 < g < 400 for g in generated):
    sys.exit(f"expected two interrupted replies, saw {generated}")
if lines[1].startswith("tirun chat: 0 tokens reused"):
    sys.exit("the turn after Ctrl-C did not reuse the cache")
print("ok: Ctrl-C stopped the replies after", " and ".join(map(str, generated)),
      "tokens and the conversation went on")
