"""Statistics of benchmark samples: robust summaries, distribution-free intervals, fits.

Timings are not normally distributed: they have a hard floor (the true cost) and a
long right tail (interrupts, GC, frequency changes, other processes).  So the
headline number is the *median*, its spread is the IQR, and its 95% confidence
interval comes from order statistics (the binomial argument: the true median lies
between the j-th and k-th smallest samples with a probability computed exactly),
which assumes nothing about the shape of the distribution.  Comparisons use
*paired* ratios of interleaved samples (A_i / B_i), so drift that hits both
variants cancels; their interval is the same order-statistic interval.

Everything here is pure Python on plain lists, so it is tested on synthetic sample
sets with known answers and has no dependency beyond the standard library.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import asdict, dataclass, field
from functools import lru_cache
from typing import Any

#: Spread (IQR / median) above which a result is flagged as measured on a noisy machine.
NOISY_IQR = 0.10
#: Ratio slowest/fastest above which a result is flagged (as ``%timeit`` does at 4x).
NOISY_MAX_MIN = 4.0
CONFIDENCE = 0.95


def quantile(sorted_xs: Sequence[float], q: float) -> float:
    """Linear-interpolation quantile (NumPy's default, "type 7") of sorted data."""
    n = len(sorted_xs)
    if n == 0:
        raise ValueError("quantile of no samples")
    if n == 1:
        return float(sorted_xs[0])
    pos = q * (n - 1)
    lo = math.floor(pos)
    hi = min(lo + 1, n - 1)
    frac = pos - lo
    return float(sorted_xs[lo] + (sorted_xs[hi] - sorted_xs[lo]) * frac)


def _binom_pmf_half(i: int, n: int) -> float:
    """P(Binomial(n, 1/2) = i), through log-gamma so large ``n`` costs no big integers."""
    return math.exp(
        math.lgamma(n + 1) - math.lgamma(i + 1) - math.lgamma(n - i + 1) - n * math.log(2.0)
    )


@lru_cache(maxsize=4096)
def median_ci_ranks(n: int, level: float = CONFIDENCE) -> tuple[int, int, float]:
    """0-based ranks ``(lo, hi)`` of the order-statistic CI of the median, and its coverage.

    The interval ``[x_(j), x_(n+1-j)]`` (1-based) misses the true median only when
    fewer than ``j`` samples fall below it, so its coverage is ``1 - 2 P(B <= j-1)``
    for ``B ~ Binomial(n, 1/2)``.  We take the narrowest such interval whose
    coverage is at least ``level``; with fewer than 6 samples even ``[min, max]``
    falls short, and the coverage returned says so.  Linear in ``n``, cached.
    """
    if n <= 0:
        raise ValueError("confidence interval of no samples")
    alpha = 1.0 - level
    tail = _binom_pmf_half(0, n)  # P(B <= j-1) for j = 1
    j = 1
    while j + 1 <= n - j:
        nxt = tail + _binom_pmf_half(j, n)  # P(B <= j), the tail if we widened j by one
        if 2.0 * nxt > alpha:
            break
        tail = nxt
        j += 1
    return j - 1, n - j, max(0.0, 1.0 - 2.0 * tail)


@dataclass(slots=True)
class SampleStats:
    """Summary of one set of per-call times (seconds), in the order they were taken."""

    n: int
    min: float
    max: float
    median: float
    mean: float
    std: float  # sample standard deviation (n-1); 0 for a single sample
    q1: float
    q3: float
    iqr: float
    ci_low: float  # 95% CI of the median (order statistics)
    ci_high: float
    ci_coverage: float  # the interval's exact coverage (>= 0.95 from 6 samples on)
    outliers: list[int] = field(default_factory=list)  # run indices outside Tukey's fences
    warnings: list[str] = field(default_factory=list)

    @property
    def ci_halfwidth_rel(self) -> float:
        """The larger side of the median's CI relative to the median (0.01 = ±1%)."""
        if self.median <= 0:
            return math.inf
        return max(self.median - self.ci_low, self.ci_high - self.median) / self.median

    @property
    def noisy(self) -> bool:
        return bool(self.warnings)

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)

    @classmethod
    def from_dict(cls, d: dict[str, Any]) -> SampleStats:
        return cls(**d)


def summarize(samples: Sequence[float]) -> SampleStats:
    """Median, IQR, CI of the median, outliers and noise warnings of ``samples``."""
    xs = [float(x) for x in samples]
    n = len(xs)
    if n == 0:
        raise ValueError("no samples to summarize")
    s = sorted(xs)
    med = quantile(s, 0.5)
    q1, q3 = quantile(s, 0.25), quantile(s, 0.75)
    iqr = q3 - q1
    mean = math.fsum(xs) / n
    std = math.sqrt(math.fsum((x - mean) ** 2 for x in xs) / (n - 1)) if n > 1 else 0.0
    lo, hi, coverage = median_ci_ranks(n)
    fence_lo, fence_hi = q1 - 1.5 * iqr, q3 + 1.5 * iqr
    outliers = [i for i, x in enumerate(xs) if x < fence_lo or x > fence_hi] if n >= 4 else []
    warnings: list[str] = []
    if n >= 4 and med > 0 and iqr / med > NOISY_IQR:
        warnings.append(
            f"noisy: the IQR is {100 * iqr / med:.0f}% of the median; "
            "other work on this machine may have interfered"
        )
    if s[0] > 0 and s[-1] / s[0] > NOISY_MAX_MIN:
        warnings.append(
            f"the slowest run took {s[-1] / s[0]:.1f} times longer than the "
            "fastest: a cache warming up, or a busy machine"
        )
    return SampleStats(
        n=n,
        min=s[0],
        max=s[-1],
        median=med,
        mean=mean,
        std=std,
        q1=q1,
        q3=q3,
        iqr=iqr,
        ci_low=s[lo],
        ci_high=s[hi],
        ci_coverage=coverage,
        outliers=outliers,
        warnings=warnings,
    )


@dataclass(slots=True)
class RatioStats:
    """``variant / reference`` from paired, interleaved samples: median and its 95% CI."""

    variant: str
    reference: str
    median: float
    ci_low: float
    ci_high: float
    #: Exact coverage of a paired interval; None for :func:`ratio_of_medians`, whose
    #: interval is a conservative bound, not an interval of known confidence.
    ci_coverage: float | None
    pairs: int  # 0: not paired (two separate runs)

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)

    @classmethod
    def from_dict(cls, d: dict[str, Any]) -> RatioStats:
        return cls(**d)


def paired_ratio(
    variant: Sequence[float],
    reference: Sequence[float],
    variant_name: str = "",
    reference_name: str = "",
) -> RatioStats | None:
    """Median of ``variant[i] / reference[i]`` over the rounds both ran, with its CI.

    Pairing sample ``i`` of each variant (taken back to back in round ``i``) makes
    the ratio insensitive to drift slower than a round.  None if no pairs.
    """
    ratios = sorted(a / b for a, b in zip(variant, reference, strict=False) if b > 0)
    if not ratios:
        return None
    lo, hi, coverage = median_ci_ranks(len(ratios))
    return RatioStats(
        variant=variant_name,
        reference=reference_name,
        median=quantile(ratios, 0.5),
        ci_low=ratios[lo],
        ci_high=ratios[hi],
        ci_coverage=coverage,
        pairs=len(ratios),
    )


def ratio_of_medians(
    a: SampleStats, b: SampleStats, a_name: str = "", b_name: str = ""
) -> RatioStats | None:
    """``median(a) / median(b)`` for two runs that were *not* interleaved.

    Without pairs there is no order-statistic interval of the ratio, so the bounds
    combine the two medians' CIs conservatively: ``[lo_a / hi_b, hi_a / lo_b]``
    holds the true ratio whenever both intervals hold their medians.  No coverage
    is claimed (``ci_coverage`` is None); drift between the runs is not in it.
    """
    if b.median <= 0 or b.ci_low <= 0:
        return None
    return RatioStats(
        variant=a_name,
        reference=b_name,
        median=a.median / b.median,
        ci_low=a.ci_low / b.ci_high,
        ci_high=a.ci_high / b.ci_low,
        ci_coverage=None,
        pairs=0,
    )


@dataclass(slots=True)
class PowerFit:
    """``time ≈ coefficient * size ** exponent``, fitted by least squares on log-log axes."""

    variant: str
    exponent: float
    coefficient: float
    r2: float
    exponent_stderr: float | None  # None with two points (no residual degrees of freedom)
    points: int

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)

    @classmethod
    def from_dict(cls, d: dict[str, Any]) -> PowerFit:
        return cls(**d)


def fit_power_law(
    sizes: Sequence[float], times: Sequence[float], variant: str = ""
) -> PowerFit | None:
    """Least-squares line through ``(log size, log time)``; None below two usable points."""
    pts = [(math.log(x), math.log(y)) for x, y in zip(sizes, times, strict=True) if x > 0 and y > 0]
    n = len(pts)
    if n < 2:
        return None
    mx = math.fsum(p[0] for p in pts) / n
    my = math.fsum(p[1] for p in pts) / n
    sxx = math.fsum((p[0] - mx) ** 2 for p in pts)
    if sxx == 0:
        return None
    sxy = math.fsum((p[0] - mx) * (p[1] - my) for p in pts)
    slope = sxy / sxx
    intercept = my - slope * mx
    ss_res = math.fsum((p[1] - (intercept + slope * p[0])) ** 2 for p in pts)
    ss_tot = math.fsum((p[1] - my) ** 2 for p in pts)
    r2 = 1.0 - ss_res / ss_tot if ss_tot > 0 else 1.0
    stderr = math.sqrt(ss_res / (n - 2) / sxx) if n > 2 else None
    return PowerFit(
        variant=variant,
        exponent=slope,
        coefficient=math.exp(intercept),
        r2=r2,
        exponent_stderr=stderr,
        points=n,
    )


def round_up_125(x: float) -> int:
    """The smallest of 1, 2, 5, 10, 20, 50, ... that is at least ``x`` (loop counts)."""
    if x <= 1:
        return 1
    k = 10 ** math.floor(math.log10(x))
    for m in (1, 2, 5, 10):
        if m * k >= x:
            return int(m * k)
    return int(10 * k)  # pragma: no cover
