"""``workbench.no_recompiles()``: fail a test or a notebook cell that recompiles.

::

    f(x)                                 # compiles f for f32[8]
    with workbench.no_recompiles():
        f(x)                             # cached: fine
        g(x)                             # g's first compile: fine
        f(jnp.ones(16))                  # f again, for f32[16]: RecompileError on exit

The rule (see :mod:`workbench.engine.cache.guard`): a compile in the block, on this
thread, of a user function that compiled before in this process (a cache miss whose
reason is not "first call": new shape, dtype, weak type, static value, pytree, a
re-created closure, cleared caches).  First compiles, JAX's helpers and the
workbench's own inspections never count.  Works with or without ``%load_ext workbench``.
"""

from __future__ import annotations

import threading
from collections.abc import Iterable
from types import TracebackType
from typing import Any

from workbench.engine.cache.guard import watch_recompiles
from workbench.engine.cache.records import CompileRecord


class RecompileError(AssertionError):
    """A ``no_recompiles`` block recompiled; ``records`` are the ledger's records."""

    __module__ = "workbench"  # as users import it and tracebacks name it

    def __init__(self, message: str, records: list[CompileRecord]) -> None:
        super().__init__(message)
        self.records = records


def _describe(rec: CompileRecord) -> str:
    where = f"{rec.call_site.file}:{rec.call_site.line}" if rec.call_site else "unknown line"
    reasons = "; ".join(r.text() for r in rec.reasons) or "no reason recorded"
    return f"  {rec.function} at {where}: {reasons}"


def recompile_message(records: list[CompileRecord], allow: int) -> str:
    n = len(records)
    head = (
        f"{n} recompile{'s' if n != 1 else ''} inside no_recompiles()"
        + (f" (allowed: {allow})" if allow else "")
        + ":"
    )
    return "\n".join([head, *(_describe(r) for r in records)])


class RecompileGuard:
    """A context manager (re-enterable, nestable, usable from several threads) that
    raises :class:`RecompileError` on exit when its block recompiled more than
    ``allow`` times.  Calling it makes a new guard with other settings:
    ``with guard(allow=1): ...``.  ``recompiles`` holds the last block's records."""

    def __init__(self, *, allow: int = 0, functions: Iterable[Any] | None = None) -> None:
        self.allow = allow
        self.functions = list(functions) if functions is not None else None
        self.recompiles: list[CompileRecord] = []
        self._active = threading.local()

    def __call__(self, *, allow: int = 0, functions: Iterable[Any] | None = None) -> RecompileGuard:
        return RecompileGuard(allow=allow, functions=functions)

    def __enter__(self) -> RecompileGuard:
        stack = self._active.__dict__.setdefault("stack", [])
        cm = watch_recompiles(self.functions)
        stack.append((cm, cm.__enter__()))
        return self

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        __tracebackhide__ = True  # pytest shows the user's line, not this frame
        cm, found = self._active.stack.pop()
        cm.__exit__(None, None, None)
        self.recompiles = list(found)
        # an error from the block itself wins: it is what the user needs to see
        if exc_type is None and len(found) > self.allow:
            raise RecompileError(recompile_message(found, self.allow), list(found))


def no_recompiles(*, allow: int = 0, functions: Iterable[Any] | None = None) -> RecompileGuard:
    """A guard: ``with workbench.no_recompiles(): ...`` raises :class:`RecompileError`
    (an ``AssertionError``) when the block compiled a function it had already compiled
    before: each recompile named with the user's line and the ledger's reasons.

    ``allow``: recompiles tolerated.  ``functions``: watch only these (jitted
    functions, or names such as ``"f"``); None watches all of the user's.
    """
    return RecompileGuard(allow=allow, functions=functions)


__all__ = ["RecompileError", "RecompileGuard", "no_recompiles", "recompile_message"]
