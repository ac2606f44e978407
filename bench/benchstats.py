"""Statistics for benchmark samples (docs/benchmarking.md), standard library only.

The median of the samples, and a distribution-free 95% confidence interval for
it: with the samples sorted as x(1) <= ... <= x(n), the interval is
[x(l), x(n+1-l)], where l is the largest rank for which a Binomial(n, 1/2)
variable falls below l with probability at most 2.5%. The binomial tail is
summed exactly in integers, so the rank is exact for any n (the C++ version in
tirun implements the same definition). Fewer than 6 samples admit no such rank
(for n = 5, P(X < 1) = 1/32 > 2.5%): the interval functions raise ValueError.
"""

ALPHA_DENOMINATOR = 40  # 2.5% = 1/40, kept as an integer so the test is exact.
MIN_SAMPLES = 6


def median(xs):
    """The median; the mean of the two middle values when len(xs) is even."""
    s = sorted(xs)
    n = len(s)
    if n == 0:
        raise ValueError("the median of no samples")
    mid = n // 2
    return s[mid] if n % 2 else (s[mid - 1] + s[mid]) / 2


def ci_rank(n):
    """The 1-based rank l of the lower bound: the largest l >= 1 with
    P(Binomial(n, 1/2) < l) <= 2.5%. Raises ValueError for n < 6."""
    if n < MIN_SAMPLES:
        raise ValueError(f"a 95% interval for the median needs at least {MIN_SAMPLES} samples, "
                         f"got {n}")
    # P(X < l) = sum_{k < l} C(n, k) / 2^n <= 1/40  <=>  40 * sum <= 2^n.
    limit = 1 << n
    below = 0  # sum of C(n, k) for k < l
    term = 1   # C(n, l - 1)
    l = 0
    while ALPHA_DENOMINATOR * (below + term) <= limit:
        below += term
        l += 1
        term = term * (n - (l - 1)) // l
    return l


def median_ci95(xs):
    """(lo, hi) = (x(l), x(n+1-l)) of the sorted samples; see ci_rank."""
    s = sorted(xs)
    l = ci_rank(len(s))
    return s[l - 1], s[len(s) - l]


def paired_diff(a_blocks, b_blocks):
    """Per-round differences of block medians, b minus a, paired by index:
    (median, (lo, hi)) over the rounds. Needs at least 6 pairs."""
    if len(a_blocks) != len(b_blocks):
        raise ValueError(f"paired blocks differ in number: {len(a_blocks)} and {len(b_blocks)}")
    diffs = [median(b) - median(a) for a, b in zip(a_blocks, b_blocks)]
    return median(diffs), median_ci95(diffs)
