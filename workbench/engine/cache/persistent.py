"""JAX's persistent compilation cache: its settings, this session's counts, and turning it
on and off (remembering what was there before).

JAX writes an entry only for programs that took at least
``jax_persistent_cache_min_compile_time_secs`` (1 s by default) to compile and are at
least ``jax_persistent_cache_min_entry_size_bytes`` large, which keeps the small
programs of a notebook out of the cache; ``%jaxcache persist`` shows those settings
so an empty cache directory is not a mystery.  Settings are restored on unload.
"""

from __future__ import annotations

import math
import os
import tempfile
from dataclasses import dataclass
from typing import Any

import jax

from workbench.engine.cache.records import PersistentCacheStatus

_KEYS = (
    "jax_compilation_cache_dir",
    "jax_persistent_cache_min_compile_time_secs",
    "jax_persistent_cache_min_entry_size_bytes",
)
_saved: dict[str, Any] | None = None


@dataclass
class PersistentCounts:
    """What the persistent cache did this session, as JAX's events told the tracker."""

    hits: int = 0
    misses: int = 0
    written: int = 0
    #: compile time saved by hits, less reading time: JAX stores the original compile time in
    #: whole seconds, so a program that compiled in under a second shows minus the read time
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
        max_size_bytes=int(_option("jax_compilation_cache_max_size")),
    )


def _reset_jax_cache_state() -> None:
    """JAX decides once whether the cache is in use; make it decide again."""
    try:
        from jax.experimental.compilation_cache import compilation_cache as cc

        cc.reset_cache()
    except Exception:  # pragma: no cover - API moved; new settings apply to a new process
        pass


class PersistentCacheError(ValueError):
    """A persistent-cache setting JAX would take but that cannot work (one line)."""


def check_persistent_settings(
    directory: str, min_compile_time_s: float | None, min_entry_size_bytes: int | None
) -> str:
    """The absolute directory, once it and the thresholds are known to work.

    JAX takes any string and number: an empty name silently means the current
    directory, an unwritable one (``/proc``) makes every compile warn while entries
    are counted as written, NaN ends up in the JSON payload, a negative size is
    meaningless.  Checked before anything changes, so a refusal leaves the settings
    as they were.
    """
    if not directory or not directory.strip():
        raise PersistentCacheError(
            "the cache directory is empty: give one, e.g. %jaxcache persist ~/.cache/jax-workbench"
        )
    if min_compile_time_s is not None and not (
        math.isfinite(min_compile_time_s) and min_compile_time_s >= 0
    ):
        raise PersistentCacheError(
            f"--min-compile-time must be a number of seconds >= 0, not {min_compile_time_s!r}"
        )
    if min_entry_size_bytes is not None and min_entry_size_bytes < 0:
        raise PersistentCacheError(
            f"--min-entry-size must be a number of bytes >= 0, not {min_entry_size_bytes}"
        )
    path = os.path.abspath(os.path.expanduser(directory))
    try:
        os.makedirs(path, exist_ok=True)
        with tempfile.TemporaryFile(dir=path):
            pass  # JAX writes entries here: a directory that takes no file is no cache
    except OSError as exc:
        raise PersistentCacheError(
            f"cannot write to {path!r} ({exc.strerror or exc}): choose a writable directory"
        ) from None
    return path


def enable_persistent_cache(
    directory: str, min_compile_time_s: float | None = None, min_entry_size_bytes: int | None = None
) -> PersistentCacheStatus:
    """Point JAX's persistent cache at ``directory`` (created if missing); raises
    :class:`PersistentCacheError` for settings that cannot work, changing nothing."""
    global _saved
    directory = check_persistent_settings(directory, min_compile_time_s, min_entry_size_bytes)
    if _saved is None:
        _saved = {k: _option(k) for k in _KEYS}
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
