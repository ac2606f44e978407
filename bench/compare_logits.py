"""compare_logits.py A B VOCAB [--max-error E]: two --dump-logits files of the
same steps (float32, VOCAB values per step), B the reference. Per step: the
relative error max|a - b| / max|b| and whether the argmaxes agree.

Exit 1 if any argmax differs and is not a near-tie in B (its top-2 gap at most
1e-3 of max |b|), or, with --max-error, if any step's relative error exceeds E.
Bad input (a missing file, sizes that are not whole steps, or files of
different lengths) is one error line and exit 1."""
import argparse
import sys

import numpy as np


def load(path, vocab):
    try:
        values = np.fromfile(path, dtype=np.float32)
    except OSError as e:
        sys.exit(f"compare_logits: error: cannot read '{path}': {e.strerror}")
    if values.size == 0 or values.size % vocab:
        sys.exit(f"compare_logits: error: '{path}' holds {values.size} floats, "
                 f"not a whole number of {vocab}-value steps")
    return values.reshape(-1, vocab)


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("a")
    parser.add_argument("b", help="the reference")
    parser.add_argument("vocab", type=int)
    parser.add_argument("--max-error", type=float, default=None,
                        help="fail when a step's relative error is above this")
    args = parser.parse_args()
    if args.vocab < 2:
        sys.exit("compare_logits: error: the vocabulary needs at least 2 entries")
    a, b = load(args.a, args.vocab), load(args.b, args.vocab)
    if a.shape != b.shape:
        sys.exit(f"compare_logits: error: {a.shape[0]} steps in '{args.a}', "
                 f"{b.shape[0]} in '{args.b}'")
    scale = np.abs(b).max(axis=1)
    err = np.abs(a - b).max(axis=1) / np.where(scale > 0, scale, 1)
    bad = 0
    for i in range(a.shape[0]):
        ia, ib = int(a[i].argmax()), int(b[i].argmax())
        top2 = np.sort(b[i])[-2:]
        near = (top2[1] - top2[0]) <= 1e-3 * scale[i]
        argmax_bad = ia != ib and not near
        error_bad = args.max_error is not None and not err[i] <= args.max_error
        bad += argmax_bad or error_bad
        verdict = "" if ia == ib else (" (near-tie)" if near else " DIFFER")
        if error_bad:
            verdict += f" ERROR above {args.max_error:g}"
        print(f"step {i}: relative error {err[i]:.3g}, argmax {ia} vs {ib}{verdict}")
    print(f"{a.shape[0]} steps: max relative error {err.max():.3g}; "
          f"{bad} steps fail")
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
