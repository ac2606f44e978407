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


def rank_sum_counts(n, m):
    """counts[u] = the number of the C(n+m, n) equally likely orderings of two
    samples of sizes n and m (no ties) with Mann-Whitney statistic U = u: the
    number of (x, y) pairs with y < x. Exact integers, u = 0 .. n*m."""
    # f[j][u] for the current i: orderings of i x's and j y's with statistic u.
    # Recurrence on the largest element: an x (adds the j y's below it) or a y.
    f = [[1] + [0] * (n * m) for _ in range(m + 1)]  # i = 0: U = 0 only
    for i in range(1, n + 1):
        g = [[0] * (n * m + 1) for _ in range(m + 1)]
        for j in range(m + 1):
            for u in range(n * m + 1):
                c = f[j][u - j] if u >= j else 0          # the largest is an x
                if j:
                    c += g[j - 1][u]                       # the largest is a y
                g[j][u] = c
        f = g
    return f[m]


def shift_ci95(a, b):
    """The shift of b against a: the Hodges-Lehmann estimate (the median of all
    differences y - x, y from b, x from a) and its distribution-free 95%
    interval [D(k), D(nm+1-k)] over the sorted differences, where k is the
    largest rank with P(U < k) <= 2.5% for the Mann-Whitney U of two samples of
    these sizes drawn from one distribution. Two runs of one benchmark agree
    when the interval holds 0. Needs at least 4 values in each."""
    n, m = len(a), len(b)
    if n < 4 or m < 4:
        raise ValueError(f"a 95% interval for a shift needs at least 4 values per side, "
                         f"got {n} and {m}")
    counts = rank_sum_counts(n, m)
    total = sum(counts)
    k, below = 0, 0  # below = #orderings with U < k
    while ALPHA_DENOMINATOR * (below + counts[k]) <= total:
        below += counts[k]
        k += 1
    if k == 0:  # Cannot happen from 4 per side: C(8, 4) = 70 orderings >= 40.
        raise ValueError(f"no 95% interval for a shift between {n} and {m} values")
    diffs = sorted(y - x for x in a for y in b)
    return median(diffs), (diffs[k - 1], diffs[len(diffs) - k])
