"""The environment a benchmark ran in, stored with every result.

Two timings are only comparable when they came from the same software and
hardware; this record (JAX and jaxlib versions, backend, device kind and count,
``XLA_FLAGS``, CPU model and count, Python) travels with the result's JSON, so a
result loaded next month can say *why* it differs from today's.
"""

from __future__ import annotations

import datetime as _dt
import os
import platform
from dataclasses import asdict, dataclass, field
from functools import lru_cache
from typing import Any

import jax


@lru_cache(maxsize=1)
def cpu_model() -> str:
    """The CPU's marketing name (Linux ``/proc/cpuinfo``, else ``platform``)."""
    try:
        with open("/proc/cpuinfo", encoding="utf-8", errors="replace") as f:
            for line in f:
                key, _, value = line.partition(":")
                if key.strip() in ("model name", "Model", "Hardware") and value.strip():
                    return value.strip()
    except OSError:
        pass
    return platform.processor() or platform.machine() or "unknown"


def _usable_cpus() -> int | None:
    try:
        return len(os.sched_getaffinity(0))
    except (AttributeError, OSError):
        return os.cpu_count()


def _jaxlib_version() -> str:
    try:
        import jaxlib

        return str(getattr(jaxlib, "__version__", "unknown"))
    except Exception:
        return "unknown"


@dataclass(slots=True)
class Environment:
    jax_version: str
    jaxlib_version: str
    backend: str
    device_kind: str
    device_count: int
    xla_flags: str
    jax_platforms: str
    cpu_model: str
    cpu_count: int | None
    cpu_count_usable: int | None
    python: str
    platform: str
    timestamp: str
    extra: dict[str, str] = field(default_factory=dict)

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)

    @classmethod
    def from_dict(cls, d: dict[str, Any]) -> Environment:
        known = {k: d[k] for k in cls.__dataclass_fields__ if k in d}
        return cls(**known)

    def differences(self, other: Environment) -> dict[str, tuple[Any, Any]]:
        """Fields that differ (timestamp aside): what to suspect when two results disagree."""
        a, b = self.to_dict(), other.to_dict()
        return {k: (a[k], b[k]) for k in a if k != "timestamp" and a[k] != b[k]}


def environment() -> Environment:
    """The current process's environment (JAX's backend is initialised if it was not)."""
    try:
        devices = jax.devices()
        backend = jax.default_backend()
    except Exception:  # no backend could start: still describe the software
        devices, backend = [], "unavailable"
    kinds = sorted({d.device_kind for d in devices})
    return Environment(
        jax_version=jax.__version__,
        jaxlib_version=_jaxlib_version(),
        backend=backend,
        device_kind=", ".join(kinds) or "none",
        device_count=len(devices),
        xla_flags=os.environ.get("XLA_FLAGS", ""),
        jax_platforms=os.environ.get("JAX_PLATFORMS", ""),
        cpu_model=cpu_model(),
        cpu_count=os.cpu_count(),
        cpu_count_usable=_usable_cpus(),
        python=platform.python_version(),
        platform=platform.platform(),
        timestamp=_dt.datetime.now(_dt.UTC).isoformat(timespec="seconds"),
    )
