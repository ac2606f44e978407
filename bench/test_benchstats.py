"""Tests for benchstats: python3 bench/test_benchstats.py (or -m unittest)."""
import itertools
import math
import os
import sys
import unittest
from fractions import Fraction

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import benchstats  # noqa: E402


def reference_rank(n):
    """The rank by the definition, with exact fractions, for small n."""
    best = None
    for l in range(1, n + 1):
        if Fraction(sum(math.comb(n, k) for k in range(l)), 2 ** n) > Fraction(1, 40):
            break
        best = l
    return best


class MedianTest(unittest.TestCase):
    def test_odd(self):
        self.assertEqual(benchstats.median([3.0, 1.0, 2.0]), 2.0)

    def test_even_is_mean_of_middle_pair(self):
        self.assertEqual(benchstats.median([4.0, 1.0, 3.0, 2.0]), 2.5)

    def test_empty(self):
        with self.assertRaises(ValueError):
            benchstats.median([])


class RankTest(unittest.TestCase):
    def test_known_ranks(self):
        # P(X < 2) = 11/1024 <= 2.5% < P(X < 3) = 56/1024 for n = 10; and so on.
        for n, l in [(6, 1), (10, 2), (20, 6), (100, 40), (1000, 469)]:
            self.assertEqual(benchstats.ci_rank(n), l, n)

    def test_matches_definition(self):
        for n in range(6, 200):
            self.assertEqual(benchstats.ci_rank(n), reference_rank(n), n)

    def test_large_n(self):
        # The normal approximation puts it at n/2 - 1.96 sqrt(n)/2, about 49690.
        self.assertEqual(benchstats.ci_rank(100000), 49690)

    def test_too_few_samples(self):
        for n in range(6):
            with self.assertRaises(ValueError):
                benchstats.ci_rank(n)
        with self.assertRaises(ValueError):
            benchstats.median_ci95([1.0, 2.0, 3.0, 4.0, 5.0])


class IntervalTest(unittest.TestCase):
    def test_order_statistics_of_unsorted_input(self):
        xs = [10.0, 1.0, 9.0, 2.0, 8.0, 3.0, 7.0, 4.0, 6.0, 5.0]  # n = 10: [x(2), x(9)]
        self.assertEqual(benchstats.median_ci95(xs), (2.0, 9.0))

    def test_twenty(self):
        xs = [float(v) for v in range(20, 0, -1)]  # n = 20: [x(6), x(15)]
        self.assertEqual(benchstats.median_ci95(xs), (6.0, 15.0))


class PairedDiffTest(unittest.TestCase):
    def test_block_medians_b_minus_a(self):
        a = [[1.0, 1.0, 1.0]] * 6
        b = [[1.0 + d, 1.5 + d, 9.0] for d in (0.1, 0.2, 0.3, 0.4, 0.5, 0.6)]
        mid, (lo, hi) = benchstats.paired_diff(a, b)
        self.assertAlmostEqual(mid, 0.5 + 0.35)
        self.assertAlmostEqual(lo, 0.6)  # n = 6: the whole range
        self.assertAlmostEqual(hi, 1.1)

    def test_unpaired(self):
        with self.assertRaises(ValueError):
            benchstats.paired_diff([[1.0]] * 6, [[1.0]] * 7)


def brute_force_counts(n, m):
    """rank_sum_counts by enumerating every placement of the n x's."""
    counts = [0] * (n * m + 1)
    for xs in itertools.combinations(range(n + m), n):
        u = sum(x - i for i, x in enumerate(xs))  # y's below the i-th smallest x
        counts[u] += 1
    return counts


class ShiftTest(unittest.TestCase):
    def test_counts_match_enumeration(self):
        for n, m in [(1, 1), (3, 2), (4, 5), (6, 6), (5, 8)]:
            self.assertEqual(benchstats.rank_sum_counts(n, m), brute_force_counts(n, m), (n, m))

    def test_ranks_match_published_critical_values(self):
        # Two-sided 5% Mann-Whitney critical values: U <= 13 for 8 and 8, U <= 37
        # for 12 and 12; the interval's rank k is one more. Two samples whose
        # differences are all distinct integers 1 .. n*m show which rank it took.
        for n, critical in [(8, 13), (12, 37)]:
            a = [float(i) for i in range(n)]
            b = [float(n * j) for j in range(1, n + 1)]  # b_j - a_i = n*j - i: all distinct
            diffs = sorted(y - x for x in a for y in b)
            _, (lo, hi) = benchstats.shift_ci95(a, b)
            self.assertEqual(lo, diffs[critical], n)  # D(k), k = critical + 1
            self.assertEqual(hi, diffs[len(diffs) - critical - 1], n)

    def test_unequal_sizes(self):
        # 6 and 12: two-sided 5% critical value U <= 14, so k = 15; the sides swap.
        for a_size, b_size in [(6, 12), (12, 6)]:
            a = [float(i) for i in range(a_size)]
            b = [float(a_size * j) for j in range(1, b_size + 1)]
            if a_size > b_size:  # keep the differences distinct: spread a instead
                a, b = [float(b_size * j) for j in range(a_size)], [float(i) for i in range(b_size)]
            diffs = sorted(y - x for x in a for y in b)
            self.assertEqual(len(set(diffs)), len(diffs))
            _, (lo, hi) = benchstats.shift_ci95(a, b)
            self.assertEqual((lo, hi), (diffs[14], diffs[len(diffs) - 15]), (a_size, b_size))

    def test_estimate_is_median_of_differences(self):
        a = [1.0, 2.0, 3.0, 4.0]
        b = [x + 10.0 for x in a]
        mid, (lo, hi) = benchstats.shift_ci95(a, b)
        self.assertEqual(mid, 10.0)
        self.assertLessEqual(lo, 10.0)
        self.assertGreaterEqual(hi, 10.0)

    def test_same_samples_hold_zero_and_far_ones_do_not(self):
        a = [1.0, 1.2, 0.9, 1.1, 1.05, 0.95]
        _, (lo, hi) = benchstats.shift_ci95(a, list(a))
        self.assertTrue(lo <= 0.0 <= hi)
        _, (lo, hi) = benchstats.shift_ci95(a, [x + 1.0 for x in a])
        self.assertGreater(lo, 0.0)

    def test_too_few(self):
        with self.assertRaises(ValueError):
            benchstats.shift_ci95([1.0, 2.0, 3.0], [1.0, 2.0, 3.0, 4.0])


if __name__ == "__main__":
    unittest.main()
