"""JAX's persistent compilation cache: its settings, this session's counts, and turning it
on and off (remembering what was there before).

JAX writes an entry only for programs that took at least
``jax_persistent_cache_min_compile_time_secs`` (1 s by default) to compile and are at
least ``jax_persistent_cache_min_entry_size_bytes`` large, which keeps the small
programs of a notebook out of the cache; ``%jaxcache persist`` shows those settings
so an empty cache directory is not a mystery.  Settings are restored on unload.
"""

from __future__ import annotations

import os
from dataclasses import dataclass
from typing import Any

import jax

from workbench.engine.cache.records import PersistentCacheStatus

_KEYS = ("jax_compilation_cache_dir", "jax_persistent_cache_min_compile_time_secs",
         "jax_persistent_cache_min_entry_size_bytes")
_saved: dict[str, Any] | None = None


@dataclass
class PersistentCounts:
    """What the persistent cache did this session, as JAX's events told the tracker."""

    hits: int = 0
    misses: int = 0
    written: int = 0
    #: compile time saved by hits, less reading time (negative when reading cost more)
    saved_s: float = 0.0


def _option(name: str) -> Any:
    # JAX's config options are dynamic attributes: typed readers would be guesses
    return getattr(jax.config, name)


def cache_directory() -> str | None:
    """The persistent cache's directory; None when the cache is off."""
    return _option("jax_compilation_cache_dir") or None


def persistent_cache_settings() -> PersistentCacheStatus:
    """The persistent cache's settings, read fresh (no counts)."""
    return PersistentCacheStatus(
        directory=_option("jax_compilation_cache_dir"),
        min_compile_time_s=float(_option("jax_persistent_cache_min_compile_time_secs")),
        min_entry_size_bytes=int(_option("jax_persistent_cache_min_entry_size_bytes")),
        max_size_bytes=int(_option("jax_compilation_cache_max_size")))


def _reset_jax_cache_state() -> None:
    """JAX decides once whether the cache is in use; make it decide again."""
    try:
        from jax.experimental.compilation_cache import compilation_cache as cc
        cc.reset_cache()
    except Exception:  # pragma: no cover - API moved; new settings apply to a new process
        pass


def enable_persistent_cache(directory: str, min_compile_time_s: float | None = None,
                            min_entry_size_bytes: int | None = None) -> PersistentCacheStatus:
    """Point JAX's persistent cache at ``directory`` (created if missing)."""
    global _saved
    if _saved is None:
        _saved = {k: _option(k) for k in _KEYS}
    directory = os.path.abspath(os.path.expanduser(directory))
    os.makedirs(directory, exist_ok=True)
    jax.config.update("jax_compilation_cache_dir", directory)
    if min_compile_time_s is not None:
        jax.config.update("jax_persistent_cache_min_compile_time_secs", float(min_compile_time_s))
    if min_entry_size_bytes is not None:
        jax.config.update("jax_persistent_cache_min_entry_size_bytes", int(min_entry_size_bytes))
    _reset_jax_cache_state()
    return persistent_cache_settings()


def restore_persistent_cache() -> bool:
    """Put back the settings from before the first :func:`enable_persistent_cache`."""
    global _saved
    if _saved is None:
        return False
    for key, value in _saved.items():
        jax.config.update(key, value)
    _saved = None
    _reset_jax_cache_state()
    return True
