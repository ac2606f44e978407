"""compare_logits.py A B VOCAB: two --dump-logits files of the same steps
(float32, VOCAB per step): per step the relative error max|a - b| / max|b|
and whether the argmaxes agree. Exit 1 if any argmax differs and is not a
near-tie in B (its top-2 gap at most 1e-3 of max |b|)."""
import sys

import numpy as np

a = np.fromfile(sys.argv[1], dtype=np.float32)
b = np.fromfile(sys.argv[2], dtype=np.float32)
vocab = int(sys.argv[3])
a, b = a.reshape(-1, vocab), b.reshape(-1, vocab)
assert a.shape == b.shape, (a.shape, b.shape)
err = np.abs(a - b).max(axis=1) / np.abs(b).max(axis=1)
bad = 0
for i in range(a.shape[0]):
    ia, ib = int(a[i].argmax()), int(b[i].argmax())
    top2 = np.sort(b[i])[-2:]
    near = (top2[1] - top2[0]) <= 1e-3 * np.abs(b[i]).max()
    if ia != ib and not near:
        bad += 1
    print(f"step {i}: relative error {err[i]:.3g}, argmax {ia} vs {ib}"
          f"{'' if ia == ib else (' (near-tie)' if near else ' DIFFER')}")
print(f"{a.shape[0]} steps: max relative error {err.max():.3g}; {bad} argmax differences")
sys.exit(1 if bad else 0)
