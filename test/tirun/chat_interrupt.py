"""Drives tirun chat as a person would, through a pipe: a long reply, Ctrl-C
(SIGINT) in the middle of it, then another turn and /exit. Checks that the
interrupted reply ended early, that the conversation went on (the next turn
reused the cache), and that tirun exited 0.

    python3 chat_interrupt.py TIRUN PLAN WEIGHTS
"""
import signal
import subprocess
import sys
import time

tirun, plan, weights = sys.argv[1:4]
proc = subprocess.Popen([tirun, "chat", plan, weights, "--backend", "cpu", "--threads", "1", "-n", "400"],
                        stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
proc.stdin.write("Tell me a very long story\n")
proc.stdin.flush()
time.sleep(1.0)  # the reply is under way: 400 tokens take several seconds here
proc.send_signal(signal.SIGINT)
time.sleep(0.5)
proc.stdin.write("And another\n/exit\n")
proc.stdin.flush()
try:
    out, err = proc.communicate(timeout=120)
except subprocess.TimeoutExpired:
    proc.kill()
    sys.exit("tirun chat did not finish after Ctrl-C and /exit")
print(err, end="")
lines = [l for l in err.splitlines() if "tokens reused" in l]
if proc.returncode != 0:
    sys.exit(f"exit status {proc.returncode}")
if len(lines) != 2:
    sys.exit(f"expected two turns, saw {len(lines)}")
if "(stop: Ctrl-C)" not in lines[0]:
    sys.exit("the first reply did not stop at Ctrl-C: " + lines[0])
generated = int(lines[0].split(" generated")[0].split()[-1])
if not 0 < generated < 400:
    sys.exit(f"the interrupted reply has {generated} tokens")
if lines[1].startswith("tirun chat: 0 tokens reused"):
    sys.exit("the turn after Ctrl-C did not reuse the cache")
print("ok: Ctrl-C stopped the reply after", generated, "tokens and the conversation went on")
