"""Printing every model in models/ is a fixed point: tic g --emit=graph, then
tic - --emit=graph on that output, gives the same text. Also checks that the
canonical form elaborates to the same graph (--emit=graph-ir) as the original."""
import pathlib
import subprocess
import sys


def run(args, stdin=None):
    res = subprocess.run(args, input=stdin, capture_output=True, text=True)
    if res.returncode != 0:
        sys.exit(f"{' '.join(args)} failed:\n{res.stderr}")
    return res.stdout


tic, models = sys.argv[1], pathlib.Path(sys.argv[2])
files = sorted(models.glob("*.graph"))
if not files:
    sys.exit(f"no models in {models}")
for f in files:
    first = run([tic, str(f), "--emit=graph"])
    second = run([tic, "-", "--emit=graph"], stdin=first)
    if first != second:
        sys.exit(f"{f.name}: printing is not a fixed point")
    if run([tic, str(f), "--emit=graph-ir"]) != run([tic, "-", "--emit=graph-ir"], stdin=first):
        sys.exit(f"{f.name}: the canonical form elaborates to a different graph")
    print(f"{f.name}: fixed point")
print(f"{len(files)} models checked")
