"""Detection for ``workbench.no_recompiles()``: which compiles in a block were recompiles.

The rule: a compile inside the block (on the watching thread) is a *recompile* when the
ledger says so (:attr:`CompileRecord.is_recompile`): it is the user's function
(``origin == "user"``; JAX's eager helpers and the workbench's own inspections never
count) and its reasons are something other than a first call: a new shape, dtype or
weak type, another static value, pytree structure, a new function object for the same
code (a closure re-created), a redefinition, or JAX's caches cleared.  A function's
first compile in the process is not a recompile.  A function compiled before the
tracker was listening (no ``%load_ext workbench``) is still known to JAX: the block
turns on JAX's own cache-miss explanations on its thread, so the first compile the
ledger sees of it is told apart ("never seen" vs "seen with other input types").
Limit: a closure re-created (``jax.jit`` in a loop) counts only when the ledger saw the
earlier object (JAX calls a new object "never seen"); likewise ``jax.clear_caches()`` in
the block, and a ``jax.pmap`` called with new shapes (pmap explains no misses), count
only when the ledger saw the earlier compile (``%load_ext workbench``, or the warm-up in
a guard or capture); a function JAX traced only nested inside another jit counts as
compiled before when JAX's explanation says so.
"""

from __future__ import annotations

import contextlib
from collections.abc import Callable, Iterable, Iterator
from typing import Any

from workbench.engine.cache.attribution import function_key, traced_function
from workbench.engine.cache.records import CompileRecord
from workbench.engine.cache.tracker import CACHE


def _matcher(functions: Iterable[Any] | None) -> Callable[[CompileRecord], bool]:
    """Which records the caller asked about: every one (None), else those of the given
    functions (jitted callables, matched by definition site, or names: ``"f"`` or
    ``"jit(f)"``)."""
    if functions is None:
        return lambda rec: True
    keys: set[str] = set()
    names: set[str] = set()
    for f in functions:
        if isinstance(f, str):
            names.update({f, f"jit({f})"})
            continue
        inner = traced_function(f)
        name = getattr(inner, "__name__", None) or getattr(f, "__name__", None) or repr(f)
        keys.add(function_key(inner, name)[0])
        names.update({name, f"jit({name})"})
    return lambda rec: (
        rec.key in keys or rec.function in names or rec.key.partition("@")[0] in names
    )


@contextlib.contextmanager
def watch_recompiles(functions: Iterable[Any] | None = None) -> Iterator[list[CompileRecord]]:
    """Yields a list that, when the block ends, holds the recompile records (see the
    module's rule) of compiles made inside it on this thread; works whether or not
    ``%load_ext workbench`` is on."""
    wanted = _matcher(functions)
    found: list[CompileRecord] = []
    with CACHE.capture() as sink:
        token = CACHE.explain_on_this_thread()
        try:
            yield found
        finally:
            CACHE.stop_explaining(token)
            found.extend(r for r in sink if is_recompile(r) and wanted(r))


def is_recompile(rec: CompileRecord) -> bool:
    """The guard's rule for one record: the user's function, compiled again."""
    return rec.kind == "compile" and rec.origin == "user" and rec.is_recompile


__all__ = ["is_recompile", "watch_recompiles"]
