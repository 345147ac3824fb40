"""JAX's ``GSPMDSharding`` class, private since it left ``jax.sharding``.

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
