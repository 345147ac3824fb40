"""The cache feature: what JAX traced, lowered and compiled, why, and its persistent cache.

``records`` (the plain data), ``tracker`` (the listener on JAX's monitoring events and
its log filter; the process's one :data:`CACHE`), ``attribution`` (whose function a
compile was, the user's line, the miss reasons), ``reasons`` (signature diffs and JAX's
explanations as :class:`MissReason`), ``queries`` (function table, cell summary,
persistent status), ``persistent`` (JAX's persistent compilation cache settings).
"""

from workbench.engine.cache.records import CacheSnapshot, CompileRecord
from workbench.engine.cache.tracker import (
    CACHE,
    CacheTracker,
    cache,
    capture_compiles,
    inspecting,
    unrecorded,
)

__all__ = [
    "CACHE",
    "CacheSnapshot",
    "CacheTracker",
    "CompileRecord",
    "cache",
    "capture_compiles",
    "inspecting",
    "unrecorded",
]
