"""Normalise ``Compiled.cost_analysis()`` and ``memory_analysis()`` into fixed records.

Across JAX versions and backends these return ``None``, a dict, a list of one
dict, or a C++ stats object with more or fewer fields.  Views and the
benchmark roofline need one schema with explicit "not reported" (``None``).

XLA's GPU cost analysis also answers with negative numbers where it did not
count (``flops: -1`` for a program whose work is in cuBLAS/cuDNN custom calls,
``-2`` seen for a convolution gradient): placeholders, not measurements.  They
become ``None`` with a note, so no view or roofline ever shows them as figures.
"""

from __future__ import annotations

from dataclasses import asdict, dataclass, field
from typing import Any


@dataclass(slots=True)
class CostAnalysis:
    flops: float | None = None
    transcendentals: float | None = None
    bytes_accessed: float | None = None
    optimal_seconds: float | None = None
    raw: dict[str, float] = field(default_factory=dict)
    #: why a figure is None although XLA answered (its negative "not counted" sentinels)
    notes: list[str] = field(default_factory=list)

    @property
    def reported(self) -> bool:
        return bool(self.raw) or bool(self.notes)

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)


@dataclass(slots=True)
class MemoryAnalysis:
    argument_bytes: int | None = None
    output_bytes: int | None = None
    alias_bytes: int | None = None
    temp_bytes: int | None = None
    generated_code_bytes: int | None = None
    host_temp_bytes: int | None = None
    peak_bytes: int | None = None
    reported: bool = False

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)


def normalize_cost(raw: Any) -> CostAnalysis:
    if isinstance(raw, (list, tuple)):
        raw = raw[0] if raw else None
    if not isinstance(raw, dict):
        return CostAnalysis()
    flat: dict[str, float] = {}
    sentinels: list[str] = []
    for k, v in raw.items():
        try:
            value = float(v)
        except (TypeError, ValueError):
            continue
        if value < 0:  # XLA's "did not count" placeholder: dropped, never shown
            sentinels.append(str(k))
            continue
        flat[str(k)] = value

    def pick(*keys: str) -> float | None:
        for k in keys:
            if k in flat:
                return flat[k]
        return None

    return CostAnalysis(
        flops=pick("flops"),
        transcendentals=pick("transcendentals"),
        bytes_accessed=pick("bytes accessed", "bytes_accessed"),
        optimal_seconds=pick("optimal_seconds", "optimal seconds"),
        raw=flat,
        notes=[_sentinel_note(sentinels)] if sentinels else [],
    )


_HEADLINE_KEYS = (
    "flops",
    "transcendentals",
    "bytes accessed",
    "bytes_accessed",
    "optimal_seconds",
    "optimal seconds",
)


def _sentinel_note(keys: list[str]) -> str:
    """Names the headline figures XLA left uncounted (per-operand byte keys are many and
    say nothing more)."""
    named = [k for k in _HEADLINE_KEYS if k in keys] or sorted(keys)[:3]
    return (
        "XLA did not count "
        + ", ".join(named)
        + " (a negative placeholder: its cost analysis does not cost custom calls such as "
        "cuBLAS, cuDNN or LAPACK)"
    )


_MEMORY_FIELDS = {
    "argument_bytes": ("argument_size_in_bytes",),
    "output_bytes": ("output_size_in_bytes",),
    "alias_bytes": ("alias_size_in_bytes",),
    "temp_bytes": ("temp_size_in_bytes",),
    "generated_code_bytes": ("generated_code_size_in_bytes",),
    "host_temp_bytes": ("host_temp_size_in_bytes",),
    "peak_bytes": ("peak_memory_in_bytes", "peak_memory_size_in_bytes"),
}


def normalize_memory(raw: Any) -> MemoryAnalysis:
    if raw is None:
        return MemoryAnalysis()
    if isinstance(raw, (list, tuple)):
        raw = raw[0] if raw else None
        if raw is None:
            return MemoryAnalysis()
    out = MemoryAnalysis(reported=True)
    for ours, theirs in _MEMORY_FIELDS.items():
        for name in theirs:
            value = raw.get(name) if isinstance(raw, dict) else getattr(raw, name, None)
            if value is not None:
                try:
                    setattr(out, ours, int(value))
                except (TypeError, ValueError):
                    pass
                break
    return out
