"""The one place numbers become words: seconds, bytes, counts with SI prefixes, percentages.

Every view (a running benchmark's partial records included) formats through these, so a time reads the
same in the jaxpr header, the HLO summary, the benchmark table and the compile line.
The engine keeps numbers; turning them into text is a view's job.

``None`` (and non-finite values) read ``n/a``: a figure that was not measured or not
reported is never shown as zero.
"""

from __future__ import annotations

import math

#: (unit, seconds per unit), largest first
SECOND_UNITS: tuple[tuple[str, float], ...] = (("s", 1.0), ("ms", 1e-3), ("µs", 1e-6), ("ns", 1e-9))
_BYTE_UNITS = (("GiB", 1 << 30), ("MiB", 1 << 20), ("KiB", 1 << 10))
_SI_PREFIXES = (("P", 1e15), ("T", 1e12), ("G", 1e9), ("M", 1e6), ("k", 1e3))
NA = "n/a"


def _finite(x: float | None) -> bool:
    return x is not None and math.isfinite(x)


def sig(value: float, digits: int = 3) -> str:
    """``value`` to ``digits`` significant digits, in positional notation, no trailing zeros.

    ``f"{v:.3g}"`` switches to exponents (``3.4e+02``) and keeps none of the zeros a reader
    expects of ``340``; this never does either.
    """
    if value == 0 or not math.isfinite(value):
        return "0" if value == 0 else str(value)
    decimals = max(0, digits - 1 - math.floor(math.log10(abs(value))))
    text = f"{round(value, decimals):.{decimals}f}"
    if "." in text:
        text = text.rstrip("0").rstrip(".")
    return "0" if text in ("-0", "") else text


def seconds_unit(seconds: float, digits: int = 3) -> tuple[str, float]:
    """The unit ``fmt_seconds`` picks for ``seconds``: (name, seconds per unit).

    The value is rounded to ``digits`` first, so 999.9999 µs is "1 ms", not "1000 µs".
    """
    rounded = float(f"{seconds:.{digits}g}")
    for unit, scale in SECOND_UNITS:
        if abs(rounded) >= scale:
            return unit, scale
    return SECOND_UNITS[-1]


def fmt_seconds(seconds: float | None, digits: int = 3) -> str:
    """``%timeit``-style: ``digits`` significant digits in s, ms, µs or ns (``1.23 ms``)."""
    if not _finite(seconds):
        return NA
    assert seconds is not None
    if seconds == 0:
        return "0 s"
    rounded = float(f"{seconds:.{digits}g}")
    unit, scale = seconds_unit(rounded, digits)
    return f"{sig(rounded / scale, digits)} {unit}"


def fmt_in_unit(seconds: float | None, unit: str, digits: int = 3) -> str:
    """The number alone, in a unit chosen elsewhere (a breakdown in its total's unit)."""
    if not _finite(seconds):
        return NA
    assert seconds is not None
    scale = dict(SECOND_UNITS)[unit]
    return sig(seconds / scale, digits)


def fmt_bytes(n: float | None) -> str:
    """Binary units: ``1.5 MiB``; below a KiB, whole bytes."""
    if not _finite(n):
        return NA
    assert n is not None
    for unit, size in _BYTE_UNITS:
        if abs(n) >= size:
            return f"{n / size:.1f} {unit}"
    return f"{int(n)} B"


def fmt_count(n: float | None, unit: str = "", digits: int = 3) -> str:
    """SI prefixes for counts and rates: ``1.23 GFLOP``, ``3.2 TB/s``, ``176 FLOP``."""
    if not _finite(n):
        return NA
    assert n is not None
    for prefix, size in _SI_PREFIXES:
        if abs(n) >= size:
            return f"{sig(n / size, digits)} {prefix}{unit}"
    return f"{sig(n, digits)} {unit}".strip()


def fmt_percent(fraction: float | None, decimals: int = 1) -> str:
    """0.0123 -> ``1.2%``."""
    if not _finite(fraction):
        return NA
    assert fraction is not None
    return f"{100 * fraction:.{decimals}f}%"


__all__ = [
    "NA",
    "SECOND_UNITS",
    "fmt_bytes",
    "fmt_count",
    "fmt_in_unit",
    "fmt_percent",
    "fmt_seconds",
    "seconds_unit",
    "sig",
]
