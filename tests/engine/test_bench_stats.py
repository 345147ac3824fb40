"""Benchmark statistics on synthetic sample sets whose answers are known."""

from __future__ import annotations

import math

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from workbench.engine.bench.stats import (
    fit_power_law,
    median_ci_ranks,
    paired_ratio,
    quantile,
    ratio_of_medians,
    round_up_125,
    summarize,
)


def test_summary_of_one_to_nine():
    s = summarize([9, 1, 8, 2, 7, 3, 6, 4, 5])  # run order shuffled on purpose
    assert (s.n, s.min, s.max, s.median, s.mean) == (9, 1, 9, 5, 5)
    assert (s.q1, s.q3, s.iqr) == (3, 7, 4)
    assert s.std == pytest.approx(math.sqrt(7.5))  # sample variance of 1..9 is 7.5
    # n=9: the 95% interval is [x_(2), x_(8)] with coverage 1 - 2*P(B<=1) = 1 - 20/512
    assert (s.ci_low, s.ci_high) == (2, 8)
    assert s.ci_coverage == pytest.approx(1 - 20 / 512)
    assert s.outliers == [] and s.warnings


def test_outliers_are_run_indices_outside_tukey_fences():
    xs = [10.0] * 5 + [10.5, 9.5] * 5 + [30.0] + [10.0] * 3
    s = summarize(xs)
    assert s.outliers == [15]
    assert s.median == 10.0
    # 30 / 9.5 is about 3.2x: one outlier, but below the "times longer" warning at 4x
    assert not any("times longer" in w for w in s.warnings)


def test_quiet_samples_carry_no_warning_and_tight_ci():
    xs = [1e-3 * (1 + 0.001 * math.sin(i)) for i in range(50)]
    s = summarize(xs)
    assert s.warnings == [] and not s.noisy
    assert s.ci_halfwidth_rel < 0.002
    assert s.ci_low <= s.median <= s.ci_high


def test_noisy_samples_are_flagged():
    xs = [1.0, 1.5, 2.0, 1.0, 1.5, 2.0, 1.0, 9.0]
    s = summarize(xs)
    assert any(w.startswith("noisy") for w in s.warnings)
    assert any("9.0 times longer" in w for w in s.warnings)


@pytest.mark.parametrize("n,lo,hi", [(6, 0, 5), (7, 0, 6), (10, 1, 8), (20, 5, 14), (100, 39, 60)])
def test_median_ci_ranks_match_binomial_tables(n, lo, hi):
    r_lo, r_hi, coverage = median_ci_ranks(n)
    assert (r_lo, r_hi) == (lo, hi)
    assert coverage >= 0.95
    # one rank narrower would fall below 95% coverage
    narrower = 1 - 2 * sum(math.comb(n, i) for i in range(lo + 2)) / 2**n
    assert narrower < 0.95


def test_few_samples_report_their_true_coverage():
    assert median_ci_ranks(5) == (0, 4, pytest.approx(1 - 2 / 32))
    assert median_ci_ranks(1)[2] == 0.0
    assert summarize([3.0]).std == 0.0


@settings(max_examples=60, deadline=None)
@given(
    st.lists(st.floats(1e-9, 1e3, allow_nan=False), min_size=1, max_size=60),
    st.sampled_from([0.1, 0.25, 0.5, 0.75, 0.9]),
)
def test_quantile_agrees_with_numpy(xs, q):
    assert quantile(sorted(xs), q) == pytest.approx(float(np.quantile(xs, q)), rel=1e-12)


def test_ci_covers_true_median_about_95_percent_of_the_time():
    rng = np.random.default_rng(0)
    hits = 0
    trials = 400
    for _ in range(trials):
        xs = rng.lognormal(mean=0.0, sigma=0.5, size=25)  # true median is exactly 1.0
        s = summarize(list(xs))
        hits += s.ci_low <= 1.0 <= s.ci_high
    assert 0.92 <= hits / trials <= 0.995


def test_paired_ratio_cancels_shared_drift():
    drift = [1 + 0.5 * i / 20 for i in range(21)]  # the machine slows down by 50%
    a = [2e-3 * d for d in drift]
    b = [1e-3 * d for d in drift]
    r = paired_ratio(a, b, "a", "b")
    assert r.median == pytest.approx(2.0) and r.ci_low == pytest.approx(2.0)
    assert r.ci_high == pytest.approx(2.0) and r.pairs == 21
    assert (r.variant, r.reference) == ("a", "b")
    assert paired_ratio([], [1.0]) is None


def test_power_law_fit_recovers_exponent():
    ns = [64, 128, 256, 512, 1024]
    ts = [3e-9 * n**2 for n in ns]
    f = fit_power_law(ns, ts, "f")
    assert f.exponent == pytest.approx(2.0) and f.coefficient == pytest.approx(3e-9)
    assert f.r2 == pytest.approx(1.0) and f.exponent_stderr == pytest.approx(0.0, abs=1e-9)
    noisy = fit_power_law(ns, [t * (1.1 if i % 2 else 0.9) for i, t in enumerate(ts)])
    assert 1.8 < noisy.exponent < 2.2 and noisy.r2 < 1.0 and noisy.exponent_stderr > 0
    assert fit_power_law([1], [1.0]) is None
    assert fit_power_law([8, 16], [1.0, 2.0]).exponent_stderr is None


def test_loop_counts_round_up_to_1_2_5():
    # (seconds are formatted by the views: tests/views/test_views.py::test_seconds_like_timeit)
    assert [round_up_125(x) for x in (0.3, 1, 1.5, 3, 7, 11, 100, 101)] == [
        1,
        1,
        2,
        5,
        10,
        20,
        100,
        200,
    ]


def test_ratio_of_unpaired_medians_is_bounded_by_both_cis():
    a, b = summarize([1, 2, 3, 4, 5, 6, 7]), summarize([2, 4, 6, 8, 10, 12, 14])
    r = ratio_of_medians(a, b, "this", "other")
    assert r.median == pytest.approx(0.5)
    # conservative: lowest over highest and highest over lowest of the medians' CIs
    assert (r.ci_low, r.ci_high) == (
        pytest.approx(a.ci_low / b.ci_high),
        pytest.approx(a.ci_high / b.ci_low),
    )
    assert r.ci_low < 0.5 < r.ci_high
    assert r.ci_coverage is None and r.pairs == 0  # no confidence level claimed
    assert ratio_of_medians(a, summarize([0.0] * 7)) is None
