"""What the scoped trace of ``%%hlo`` needs from JAX, Flax and Equinox internals.

The scoped trace (:mod:`workbench.engine.common.call_scopes`) names each call of the
user's functions in the op_names; it is useless if JAX serves the trace, or a nested
``jax.jit``'s trace, from its caches (no Python runs, so no call is seen).  JAX keys
its trace caches (``weakref_lru_cache`` in ``jax._src.util``, ``_infer_params_cached``
in ``jax._src.pjit``) on the function *and* on ``jax._src.config.trace_context()``; the
option ``jax_hlo_source_file_canonicalization_regex`` is part of that context and
changes nothing else when its regex never matches.  :func:`fresh_trace_caches` sets it
to such an equivalent regex for one block: every trace inside misses the caches the
user's own calls filled (and fills no entry those calls could hit), while the user's
later calls, made under the unchanged context, still find their own entries.

Also here: whether JAX's name stack is empty where a call starts (the traced function
itself, with no transform or scope around it, is already named by JAX's ``jit(f)``), which source files hold the layers of Flax NNX and Equinox (``nnx.Linear``,
``eqx.nn.MLP``...), whose ``__call__`` the scoped trace names by class, and where JAX
and jaxlib live (never the user's code).  Found from the packages' import specs,
without importing them.
"""

from __future__ import annotations

import contextlib
import importlib.util
import itertools
import os
from collections.abc import Iterator
from typing import Any

import jax

from workbench.engine._jax_compat._modules import siu as _siu

try:
    from jax._src import config as _config
except Exception:  # pragma: no cover - moved
    _config = None  # type: ignore[assignment]

#: a regex that matches nothing: removing its matches from a file name changes nothing
_NEVER = "(?!)"


def _canonicalization_state() -> Any:
    """JAX's ``jax_hlo_source_file_canonicalization_regex`` state (a context manager when
    called with a value), when it is part of the trace context in this JAX; else None."""
    state = getattr(_config, "hlo_source_file_canonicalization_regex", None)
    if (
        state is None
        or not callable(state)
        or not callable(getattr(_config, "trace_context", None))
    ):
        return None
    return state


def fresh_trace_caches_supported() -> bool:
    """Whether :func:`fresh_trace_caches` makes JAX's trace caches miss in this JAX."""
    state = _canonicalization_state()
    if state is None:
        return False
    try:
        before = _config.trace_context()
        with state(_equivalent(state.value)):
            inside = _config.trace_context()
        return bool(before != inside)
    except Exception:
        return False


def _equivalent(regex: str | None) -> str:
    """A regex that removes exactly what ``regex`` removes (nothing for None), spelled
    differently, so the trace context differs and the HLO does not."""
    return _NEVER if not regex else f"(?:{regex})|{_NEVER}"


def fresh_trace_caches() -> contextlib.AbstractContextManager[bool]:
    """Trace in a context JAX's trace caches have no entry of the user's for (see the
    module docstring); yields whether it could (else the block runs as it would)."""
    return _equivalent_trace_context("")


_unique = itertools.count()


def unique_trace_context() -> contextlib.AbstractContextManager[bool]:
    """Like :func:`fresh_trace_caches`, but a context no trace has used before (the regex
    carries a counter in a ``(?#...)`` comment): every trace inside misses every entry, the
    workbench's own earlier scoped traces included.  For a compile that must really run
    (``%%jaxprof --compile``): a trace served from a cache is lowered to the same module
    object, whose executable JAX keeps, and nothing would compile.  Its cache entries are
    never hit again; JAX's LRU bounds (and weak references) drop them."""
    return _equivalent_trace_context(f"(?#workbench-{next(_unique)})")


@contextlib.contextmanager
def _equivalent_trace_context(comment: str) -> Iterator[bool]:
    """The block runs with the canonicalization regex spelled as :func:`_equivalent` spells
    it, then ``comment`` (a regex comment, which removes nothing): the HLO is the same, the
    trace context is another.  Yields whether it could (else the block runs as it would)."""
    state = _canonicalization_state()
    if state is None:
        yield False
        return
    try:
        ctx = state(f"{_equivalent(state.value)}{comment}")
        ctx.__enter__()
    except Exception:
        yield False
        return
    try:
        yield True
    finally:
        ctx.__exit__(None, None, None)


def name_stack_empty() -> bool:
    """Whether JAX's current name stack holds nothing (no transform such as ``jvp``, no
    scope): true where ``jit(f)`` starts tracing ``f``; False where this JAX cannot say."""
    current = getattr(_siu, "current_name_stack", None)
    if current is None:
        return False
    try:
        return len(current().stack) == 0
    except Exception:
        return False


def _package_dir(name: str) -> str | None:
    try:
        spec = importlib.util.find_spec(name)
    except (ImportError, ValueError):
        return None
    locations = list(getattr(spec, "submodule_search_locations", None) or ())
    if not locations:
        return None
    return os.path.abspath(locations[0]) + os.sep


def library_layer_dirs() -> tuple[str, ...]:
    """The folders of Flax NNX's and Equinox's layers (``flax/nnx/nn/``, ``equinox/nn/``):
    a ``__call__`` defined there is a model's layer, named by its class."""
    out = []
    for pkg, sub in (("flax", ("nnx", "nn")), ("equinox", ("nn",))):
        base = _package_dir(pkg)
        if base is not None:
            out.append(os.path.join(base, *sub) + os.sep)
    return tuple(out)


def jax_dirs() -> tuple[str, ...]:
    """Where JAX and jaxlib are installed (their code is never the user's)."""
    out = [os.path.dirname(os.path.abspath(jax.__file__)) + os.sep]
    jaxlib = _package_dir("jaxlib")
    if jaxlib is not None:
        out.append(jaxlib)
    return tuple(out)
