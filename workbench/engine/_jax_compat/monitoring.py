"""The cache feature's hooks into ``jax.monitoring`` and ``jax_explain_cache_misses``.

Wraps the event names JAX records (``jax._src.dispatch``'s constants for trace, lower
and compile durations; the persistent cache's names, which JAX spells out at each call
site), the loggers its cache-miss explanations go to, the thread-local state of the
``jax_explain_cache_misses`` option (``jax._src.config``), and the listener lists of
``jax._src.monitoring`` where the public unregister/get functions are missing.  Only
this module names these events: the cache tracker subscribes through these constants.
"""

from __future__ import annotations

import types
from typing import Any

import jax

# Event names JAX records through ``jax.monitoring``; read from JAX where it exposes them so
# a rename shows up in tests/engine/test_compat.py, with the 0.10 names as the fallback.
_dispatch: types.ModuleType | None
try:
    from jax._src import dispatch as _dispatch
except Exception:  # pragma: no cover - moved
    _dispatch = None

TRACE_EVENT: str = getattr(_dispatch, "JAXPR_TRACE_EVENT", "/jax/core/compile/jaxpr_trace_duration")
LOWER_EVENT: str = getattr(
    _dispatch, "JAXPR_TO_MLIR_MODULE_EVENT", "/jax/core/compile/jaxpr_to_mlir_module_duration"
)
COMPILE_EVENT: str = getattr(
    _dispatch, "BACKEND_COMPILE_EVENT", "/jax/core/compile/backend_compile_duration"
)

# The persistent compilation cache's events (JAX spells them out at each call site; it
# exports no constants for them).
#: a compile that will consult the persistent cache (an event, before the lookup)
PCACHE_REQUEST_EVENT = "/jax/compilation_cache/compile_requests_use_cache"
#: the persistent cache answered (an event)
PCACHE_HIT_EVENT = "/jax/compilation_cache/cache_hits"
#: JAX wrote an entry; it names this event "cache_misses" (an event)
PCACHE_WRITE_EVENT = "/jax/compilation_cache/cache_misses"
#: compile time saved by a hit, less the time reading it took (a duration, may be < 0)
PCACHE_SAVED_EVENT = "/jax/compilation_cache/compile_time_saved_sec"

#: Loggers JAX writes ``jax_explain_cache_misses`` output to (tracing-cache misses first).
EXPLAIN_LOGGERS: tuple[str, ...] = (
    "jax._src.interpreters.partial_eval",
    "jax._src.compiler",
    "jax._src.compilation_cache",
)


def _explain_state() -> Any:
    try:
        from jax._src import config as _config
    except Exception:  # pragma: no cover - moved
        return None
    state = getattr(_config, "explain_cache_misses", None)
    needed = ("swap_local", "set_local", "get_global")
    return state if all(hasattr(state, n) for n in needed) else None


_EXPLAIN_OPTION = "jax_explain_cache_misses"


def explanations_requested() -> bool:
    """Whether the user turned ``jax_explain_cache_misses`` on globally (then its log
    messages are theirs to see), read fresh each time."""
    state = _explain_state()
    if state is not None:
        return bool(state.get_global())
    # a config option is a dynamic attribute of jax.config (unknown to type checkers)
    return bool(getattr(jax.config, _EXPLAIN_OPTION))


def explain_on_this_thread() -> tuple[Any] | None:
    """Turn ``jax_explain_cache_misses`` on for the calling thread only, leaving the
    global value (the user's) alone; returns what :func:`restore_explain` puts back, or
    None when nothing was changed (already on, or a JAX without thread-local config).
    The option is in neither the jit key nor the trace context, so caches are unaffected.
    """
    state = _explain_state()
    if state is None or state.value:
        return None
    return (state.swap_local(True),)


def restore_explain(token: tuple[Any] | None) -> None:
    if token is not None:
        state = _explain_state()
        if state is not None:
            state.set_local(token[0])


def unregister_monitoring_listener(kind: str, callback: Any) -> bool:
    """Remove a ``jax.monitoring`` listener; ``kind`` is "event" or "duration".

    The public ``unregister_*`` functions exist in recent JAX; older ones only had
    ``clear_event_listeners`` (which would drop other people's listeners too), so
    there we remove ours from the private list instead.
    """
    import jax.monitoring as mon

    public = {
        "event": "unregister_event_listener",
        "duration": "unregister_event_duration_listener",
    }[kind]
    fn = getattr(mon, public, None)
    try:
        if fn is not None:
            fn(callback)
            return True
        from jax._src import monitoring as _mon

        lst = {"event": "_event_listeners", "duration": "_event_duration_secs_listeners"}[kind]
        getattr(_mon, lst).remove(callback)
        return True
    except (AssertionError, ValueError, AttributeError, ImportError):
        return False


def monitoring_listeners(kind: str) -> list[Any]:
    """The listeners currently registered (for tests of a clean unload)."""
    from jax._src import monitoring as _mon

    getter = {"event": "get_event_listeners", "duration": "get_event_duration_listeners"}[kind]
    fn = getattr(_mon, getter, None)
    if fn is not None:
        return list(fn())
    lst = {"event": "_event_listeners", "duration": "_event_duration_secs_listeners"}[kind]
    return list(getattr(_mon, lst, []))
