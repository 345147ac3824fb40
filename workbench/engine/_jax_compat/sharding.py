"""JAX's ``GSPMDSharding`` class, private since it left ``jax.sharding``; the parts of a
``PartitionSpec``, whose ``unreduced``/``reduced`` sets exist only in newer JAX.

Wraps ``jax._src.sharding_impls.GSPMDSharding`` (a sharding given by an XLA
HloSharding over a device list, what a compiled program may report for a value that is
not laid out over a mesh), falling back to the public attribute of older JAX.
"""

from __future__ import annotations

from typing import Any

import jax


def _gspmd_sharding_class() -> Any:
    try:
        from jax._src.sharding_impls import GSPMDSharding as cls
    except Exception:  # pragma: no cover - moved or removed
        return getattr(jax.sharding, "GSPMDSharding", None)
    return cls


#: JAX's sharding given by an XLA HloSharding over a device list (private since it left
#: ``jax.sharding``); None where this JAX has none.  ``layout`` recognises it by name;
#: tests build one here to check a non-mesh sharding is placed by JAX's own answer.
GSPMDSharding: Any = _gspmd_sharding_class()


def spec_parts(spec: Any) -> tuple[tuple[Any, ...], frozenset[str], frozenset[str]]:
    """``(partitions, unreduced axes, reduced axes)`` of a ``PartitionSpec``.

    A spec with ``unreduced={'Y'}`` refuses ``tuple(spec)`` and ``spec[i]`` ("Using *pspec
    is dangerous ..."): its per-dimension entries are ``spec.partitions``.  A JAX without
    these sets (or a plain tuple of entries) has only the partitions.
    """
    parts = getattr(spec, "partitions", None)
    partitions = tuple(parts) if parts is not None else tuple(spec)
    unreduced = frozenset(str(a) for a in (getattr(spec, "unreduced", None) or ()))
    reduced = frozenset(str(a) for a in (getattr(spec, "reduced", None) or ()))
    return partitions, unreduced, reduced
