"""A compile that XLA really runs: JAX's persistent compilation cache bypassed for it.

``jax._src.compilation_cache`` decides once per process whether the cache is used
(``_cache_checked`` / ``_cache_used``, under ``_cache_initialized_mutex``; the same in JAX
0.10.2 and 0.12).  :func:`persistent_cache_bypassed` makes that decision "not used" for the
duration of one compile and puts the decision back as it was, so the compile neither
reads an entry (a hit would compile nothing) nor writes one (the user's cache directory
is left as it was), and no setting of the user's changes.  Where this JAX keeps the
decision elsewhere, the context says so (``False``) and the caller tells the user.

The decision alone is not enough: ``compiler.get_compile_options`` also turns on XLA's own
caches under the cache directory (the GPU per-fusion autotune cache by default, the
kernel cache on request) whenever ``compilation_cache.is_persistent_cache_enabled()``,
which reads the ``jax_enable_compilation_cache`` option, not the decision.  A GPU compile
would then skip autotuning with the user's earlier results and write new ones into the
user's directory.  So the option is also set off for the block, thread-locally (the
option's own context manager; the user's global value is untouched).
"""

from __future__ import annotations

import contextlib
from collections.abc import Iterator
from typing import Any

try:  # pragma: no cover - the import itself is what varies between releases
    from jax._src import compilation_cache as _cc
except Exception:  # pragma: no cover
    _cc = None  # type: ignore[assignment]

try:  # pragma: no cover - as above
    from jax._src import config as _config
except Exception:  # pragma: no cover
    _config = None  # type: ignore[assignment]


def _bypassable() -> bool:
    return _cc is not None and all(
        hasattr(_cc, a) for a in ("_cache_checked", "_cache_used", "_cache_initialized_mutex")
    )


def _xla_caches_off() -> contextlib.AbstractContextManager[Any]:
    """``jax_enable_compilation_cache`` off in this thread (see the module docstring)."""
    state = getattr(_config, "enable_compilation_cache", None)
    if state is None or not callable(state):
        return contextlib.nullcontext()
    try:
        return state(False)
    except Exception:
        return contextlib.nullcontext()


@contextlib.contextmanager
def persistent_cache_bypassed() -> Iterator[bool]:
    """Inside: JAX treats its persistent compilation cache as off.  Yields whether it could."""
    if not _bypassable():
        yield False
        return
    with _xla_caches_off(), _cache_decision_off():
        yield True


@contextlib.contextmanager
def _cache_decision_off() -> Iterator[None]:
    """JAX's once-per-process "cache used" decision made "not used", then put back."""
    with _cc._cache_initialized_mutex:
        saved = (_cc._cache_checked, _cc._cache_used)
        _cc._cache_checked, _cc._cache_used = True, False
    try:
        yield
    finally:
        with _cc._cache_initialized_mutex:
            # a reset_cache() meanwhile (the user turned the cache on in another thread)
            # is respected: only our own "not used" is undone
            if (_cc._cache_checked, _cc._cache_used) == (True, False):
                _cc._cache_checked, _cc._cache_used = saved


__all__ = ["persistent_cache_bypassed"]
