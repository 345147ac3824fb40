"""What this process's JAX devices are and how much memory live arrays hold on them.

Two sources, because each backend tells a different amount:

- ``jax.live_arrays()`` works everywhere (CPU included): each live array's bytes per
  device, from its sharding (the shard's shape times the item size, on each
  addressable device that holds a shard; a replicated array counts once per copy).
  Deleted (donated) arrays hold nothing and are skipped.
- ``Device.memory_stats()`` is the allocator's own view (GPU, TPU): bytes in use, the
  peak and the limit.  CPU returns None; the fields are then None ("not reported").

The walk keeps no array: it reads numbers off each array and drops the list before
returning, so a sample can be taken at any time without changing what it measures.
"""

from __future__ import annotations

import math
import time
from dataclasses import dataclass, field
from typing import Any

import jax

from workbench.engine._jax_compat import backends_initialized

#: what a sample's ``when`` may be: %load_ext, before a cell, after it, asked for
WHEN = ("load", "start", "end", "request")


@dataclass(frozen=True, slots=True)
class DeviceInfo:
    """One device as the panel lists it."""

    id: int
    platform: str
    kind: str
    process_index: int
    memory_stats: bool  # the device reports memory_stats() (GPU, TPU), not CPU

    def to_dict(self) -> dict[str, Any]:
        return {
            "id": self.id,
            "platform": self.platform,
            "kind": self.kind,
            "process_index": self.process_index,
            "memory_stats": self.memory_stats,
        }


@dataclass(frozen=True, slots=True)
class KernelInfo:
    """The JAX process the panel follows: version, backend and its devices."""

    jax_version: str
    backend: str
    process_index: int
    process_count: int
    devices: tuple[DeviceInfo, ...]

    def to_dict(self) -> dict[str, Any]:
        return {
            "jax_version": self.jax_version,
            "backend": self.backend,
            "process_index": self.process_index,
            "process_count": self.process_count,
            "devices": [d.to_dict() for d in self.devices],
        }


@dataclass(frozen=True, slots=True)
class DeviceMemory:
    """One device in one sample; the allocator's figures are None where not reported."""

    id: int
    live_bytes: int
    bytes_in_use: int | None = None
    peak_bytes_in_use: int | None = None
    bytes_limit: int | None = None

    def to_dict(self) -> dict[str, Any]:
        return {
            "id": self.id,
            "live_bytes": self.live_bytes,
            "bytes_in_use": self.bytes_in_use,
            "peak_bytes_in_use": self.peak_bytes_in_use,
            "bytes_limit": self.bytes_limit,
        }


@dataclass(frozen=True, slots=True)
class MemorySample:
    """One reading of memory, with when it was taken and which cell it belongs to."""

    t: float
    when: str
    cell: str | None
    cell_id: str | None
    live_bytes: int
    live_arrays: int
    devices: tuple[DeviceMemory, ...] = field(default_factory=tuple)

    def to_dict(self) -> dict[str, Any]:
        return {
            "t": self.t,
            "when": self.when,
            "cell": self.cell,
            "cell_id": self.cell_id,
            "live_bytes": self.live_bytes,
            "live_arrays": self.live_arrays,
            "devices": [d.to_dict() for d in self.devices],
        }


def _stats(device: Any) -> dict[str, Any] | None:
    try:
        stats = device.memory_stats()
    except Exception:  # a backend that does not implement it at all
        return None
    return stats if isinstance(stats, dict) else None


def _int_or_none(value: Any) -> int | None:
    """A byte count from ``memory_stats()``; None for anything else (a NaN or an infinity
    from an odd backend must not make the whole sample fail)."""
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        return None
    return int(value) if math.isfinite(value) else None


def device_info() -> list[DeviceInfo]:
    """This process's view of every device (all processes' devices, as jax.devices())."""
    out = []
    for d in jax.devices():
        local = d.process_index == jax.process_index()
        out.append(
            DeviceInfo(
                id=int(d.id),
                platform=str(d.platform),
                kind=str(d.device_kind),
                process_index=int(d.process_index),
                memory_stats=local and _stats(d) is not None,
            )
        )
    return out


def jax_started() -> bool:
    """Whether JAX's backends are up: until then nothing here may read devices or arrays
    (that would start them, too early for ``jax.distributed.initialize()`` and the
    platform settings a user may still make)."""
    return backends_initialized()


def kernel_info() -> KernelInfo:
    """Version, default backend, processes and devices of this JAX process; before JAX
    started its backends, the version only (no backend, no devices), starting nothing."""
    if not jax_started():
        return KernelInfo(
            jax_version=jax.__version__, backend="", process_index=0, process_count=1, devices=()
        )
    return KernelInfo(
        jax_version=jax.__version__,
        backend=jax.default_backend(),
        process_index=jax.process_index(),
        process_count=jax.process_count(),
        devices=tuple(device_info()),
    )


def live_bytes_by_device() -> tuple[dict[int, int], int]:
    """(device id -> bytes of live arrays, number of live arrays), no reference kept.

    The walk runs around every cell (the side panel's history), so it reads only three
    attributes per array and groups arrays by layout; the shard size and the devices are
    worked out once per layout (a notebook's arrays share few), which makes a sample
    two to three times cheaper than asking every array for them."""
    layouts: dict[tuple[Any, tuple[int, ...], Any], int] = {}
    unhashable: list[tuple[Any, tuple[int, ...], Any]] = []  # a sharding with no hash
    arrays = jax.live_arrays()
    try:
        for a in arrays:  # inline, no call per array: this loop is the sample's cost
            try:
                if a.is_deleted():  # donated: holds nothing
                    continue
                key = (a.sharding, a.shape, a.dtype)
            except Exception:  # deleted meanwhile, or an odd object: skip it
                continue
            try:
                layouts[key] = layouts.get(key, 0) + 1
            except TypeError:
                unhashable.append(key)
    finally:
        arrays.clear()  # the walk's list is the only reference to the arrays we ever held
        del arrays
    per_device: dict[int, int] = {}
    count = 0
    for (sharding, shape, dtype), n in [*layouts.items(), *((k, 1) for k in unhashable)]:
        try:
            nbytes = math.prod(sharding.shard_shape(shape)) * int(dtype.itemsize) * n
            ids = [int(d.id) for d in sharding.addressable_devices]
        except Exception:  # an exotic sharding: skip its arrays
            continue
        for i in ids:
            per_device[i] = per_device.get(i, 0) + nbytes
        count += n
    return per_device, count


def sample_memory(
    when: str, cell: str | None = None, cell_id: str | None = None, now: float | None = None
) -> MemorySample:
    """Read memory now: live arrays on every local device, plus the allocator's figures
    where the backend reports them."""
    if when not in WHEN:
        raise ValueError(f"when must be one of {', '.join(WHEN)}, got {when!r}")
    per_device, count = live_bytes_by_device()
    devices = []
    for d in jax.local_devices():
        stats = _stats(d) or {}
        devices.append(
            DeviceMemory(
                id=int(d.id),
                live_bytes=per_device.get(d.id, 0),
                bytes_in_use=_int_or_none(stats.get("bytes_in_use")),
                peak_bytes_in_use=_int_or_none(stats.get("peak_bytes_in_use")),
                bytes_limit=_int_or_none(stats.get("bytes_limit")),
            )
        )
    return MemorySample(
        t=time.time() if now is None else now,
        when=when,
        cell=cell,
        cell_id=cell_id,
        live_bytes=sum(per_device.values()),
        live_arrays=count,
        devices=tuple(devices),
    )


__all__ = [
    "WHEN",
    "DeviceInfo",
    "DeviceMemory",
    "KernelInfo",
    "MemorySample",
    "device_info",
    "jax_started",
    "kernel_info",
    "live_bytes_by_device",
    "sample_memory",
]
