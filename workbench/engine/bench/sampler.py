"""Timing one call correctly: the first call apart, blocking on every output, autoranging.

JAX dispatches asynchronously: ``f(x)`` returns as soon as the work is queued, so
a loop around ``f(x)`` measures dispatch, not computation.  Every timed call here
therefore blocks until *all* leaves of its output pytree are ready (a function
returning ``{"a": y, "b": z}`` is waited for on both).  The first call, which
traces and compiles, is timed on its own (split into trace/lower/compile by the
compile ledger when it is present), warm-up calls are never counted, and a
sample is ``number`` back-to-back calls between two ``perf_counter_ns`` reads, so
the clock's resolution and the per-sample overhead are spread over many calls.

The inner loops are specialised (single array vs. pytree, with vs. without
keyword arguments) so that the harness adds only a loop step per call on top of
``f(x).block_until_ready()``; Python's cyclic GC is paused inside a sample, as
``timeit`` does, so a collection triggered by someone else's garbage does not
land on one sample's clock.
"""

from __future__ import annotations

import contextlib
import gc
import numbers
import time
from collections.abc import Callable
from dataclasses import asdict, dataclass, field
from typing import Any

import jax
import numpy as np

from workbench.engine.cache.ledger import capture_compiles
from workbench.engine.common.errors import ErrorReport, report
from workbench.engine.jaxpr.inspection import function_name


class BenchInputError(ValueError):
    """Bad benchmark settings (budget, counts, sweep): a short message for the user.

    Raised before anything runs.  The message is the whole story, so :attr:`report`
    holds it as an error record with no source line (the fault is in the settings,
    not in a line of the user's code); front doors show it through the error view
    rather than as a traceback through our internals.
    """

    @property
    def report(self) -> ErrorReport:
        return ErrorReport(phase="settings", kind=type(self).__name__, summary=str(self))


class OutputError(TypeError):
    """The function returned something the harness cannot wait for."""


class DonatedArgumentsError(ValueError):
    """The first call deleted argument buffers (``donate_argnums``): no second call can run."""


@dataclass(slots=True)
class FirstCall:
    """The first call of a variant: compile (when it happened) plus one execution."""

    total_s: float
    trace_s: float | None = None
    lower_s: float | None = None
    compile_s: float | None = None
    compiles: int | None = None  # None: unknown (no compile ledger)
    functions: list[str] = field(default_factory=list)
    source: str = "first call"  # "ledger" when split from the compile ledger

    @property
    def compile_total_s(self) -> float | None:
        """trace + lower + compile, when the ledger saw a compile."""
        parts = [p for p in (self.trace_s, self.lower_s, self.compile_s) if p is not None]
        return sum(parts) if parts else None

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)

    @classmethod
    def from_dict(cls, d: dict[str, Any]) -> FirstCall:
        return cls(**d)


_READY_SCALARS = (np.ndarray, np.generic, numbers.Number)


def describe_output(out: Any) -> tuple[bool, str]:
    """(is a single ``jax.Array``, short description); raises :class:`OutputError`.

    Host values (NumPy arrays, Python numbers) are already computed when the call
    returns, so they are accepted; anything else (``None``, strings, objects)
    gives no way to wait for the device work the call started.
    """
    if isinstance(out, jax.Array):
        return True, f"{out.dtype}{list(out.shape)}"
    leaves = jax.tree.leaves(out)
    if not leaves:
        raise OutputError(f"returned {type(out).__name__} with no arrays in it, so the device "
                          "work it started cannot be waited for and would not be timed; return "
                          "the result arrays (any pytree of them)")
    bad = [leaf for leaf in leaves if not isinstance(leaf, (jax.Array, *_READY_SCALARS))]
    if bad:
        raise OutputError(f"returned a {type(bad[0]).__name__} among its outputs, not an array; "
                          "the harness can only wait for JAX arrays (or host numbers/arrays)")
    n_dev = sum(isinstance(leaf, jax.Array) for leaf in leaves)
    return False, f"{type(out).__name__} of {len(leaves)} leaves ({n_dev} JAX arrays)"


# -- the timed loops: kept tiny, one per output/argument shape ---------------------------
def _loop_array(fn: Callable[..., Any], args: tuple[Any, ...], number: int) -> int:
    pc = time.perf_counter_ns
    it = range(number)
    t0 = pc()
    for _ in it:
        fn(*args).block_until_ready()
    return pc() - t0


def _loop_array_kw(fn: Callable[..., Any], args: tuple[Any, ...], kwargs: dict[str, Any],
                   number: int) -> int:
    pc = time.perf_counter_ns
    it = range(number)
    t0 = pc()
    for _ in it:
        fn(*args, **kwargs).block_until_ready()
    return pc() - t0


def _loop_tree(fn: Callable[..., Any], args: tuple[Any, ...], kwargs: dict[str, Any],
               number: int) -> int:
    block = jax.block_until_ready
    pc = time.perf_counter_ns
    it = range(number)
    t0 = pc()
    for _ in it:
        block(fn(*args, **kwargs))
    return pc() - t0


class CallTimer:
    """Times one function at one set of arguments; holds no output between calls."""

    def __init__(self, fn: Callable[..., Any], args: tuple[Any, ...],
                 kwargs: dict[str, Any]) -> None:
        self.fn = fn
        self.args = args
        self.kwargs = kwargs
        self.single_array = False
        self.output = ""

    def first_call(self) -> FirstCall:
        """Run the first call (compile included) alone; validate what it returns."""
        t0 = time.perf_counter_ns()
        with capture_compiles() as records:
            out = self.fn(*self.args, **self.kwargs)
            jax.block_until_ready(out)
        total = (time.perf_counter_ns() - t0) * 1e-9
        try:
            self.single_array, self.output = describe_output(out)
        finally:
            del out
        gone = self.deleted_arguments()
        if gone:
            raise DonatedArgumentsError(
                f"donated {', '.join(gone[:3])}{' ...' if len(gone) > 3 else ''} "
                "(donate_argnums): the first call deleted the buffer, and the timed loop "
                "must call again with the same arguments (fresh arguments per call are not "
                "possible there). Time a variant without donation; with a sweep, "
                "make_args builds arguments the benchmark may consume instead of yours")
        return _from_ledger(total, list(records))

    def deleted_arguments(self) -> list[str]:
        """Where the arguments hold arrays that are deleted (donated to the last call)."""
        gone = []
        flat, _ = jax.tree_util.tree_flatten_with_path((self.args, self.kwargs))
        for path, leaf in flat:
            is_deleted = getattr(leaf, "is_deleted", None)
            if isinstance(leaf, jax.Array) and callable(is_deleted) and is_deleted():
                gone.append(_argument_name(path))
        return gone

    def time_calls(self, number: int) -> float:
        """Seconds per call over ``number`` back-to-back calls, GC paused."""
        was_enabled = gc.isenabled()
        gc.disable()
        try:
            if self.single_array:
                if self.kwargs:
                    ns = _loop_array_kw(self.fn, self.args, self.kwargs, number)
                else:
                    ns = _loop_array(self.fn, self.args, number)
            else:
                ns = _loop_tree(self.fn, self.args, self.kwargs, number)
        finally:
            if was_enabled:
                gc.enable()
        return ns * 1e-9 / number

    def autorange(self, target_s: float, min_time_s: float = 0.0,
                  time_limit_s: float = float("inf")) -> tuple[int, int]:
        """Warm up in batches of 1, 2, 5, 10, ... calls until one takes ``target_s``.

        Returns ``(calls per sample, warm-up calls made)``.  None of these calls is
        counted.  Warm-up lasts at least ``min_time_s`` (caches and clocks settle)
        and at most ``time_limit_s``.  The samples are sized from the *fastest*
        per-call time among the batches at the final batch size: one batch that a
        preemption slowed would otherwise make every sample too short.
        """
        from workbench.engine.bench.stats import round_up_125

        start = time.perf_counter()
        batch, calls = 1, 0
        fastest = float("inf")  # per call, over the batches at the current size
        while True:
            per_call = self.time_calls(batch)
            fastest = min(fastest, per_call)
            calls += batch
            elapsed = time.perf_counter() - start
            if elapsed >= time_limit_s or (fastest * batch >= target_s
                                           and elapsed >= min_time_s):
                break
            if fastest * batch < target_s:
                batch = round_up_125(batch + 1)
                fastest = float("inf")
        return max(1, round_up_125(target_s / fastest) if fastest > 0 else 1), calls


def _argument_name(path: tuple[Any, ...]) -> str:
    """A leaf of ``(args, kwargs)`` by its path: ``argument 0``, ``argument 1['w']``, ``x``."""
    top, key, *tail = path  # (0 for args or 1 for kwargs, position or name, inside it)
    inside = jax.tree_util.keystr(tuple(tail)) if tail else ""
    if getattr(top, "idx", None) == 0:
        return f"argument {getattr(key, 'idx', '?')}{inside}"
    return f"{getattr(key, 'key', '?')}{inside}"


def steady_state_compiles() -> contextlib.AbstractContextManager[list[Any]]:
    """Compile records of the calling thread.

    Held around warm-up and sampling, which compile nothing when all is well: the
    ledger's listener only runs on a compile, so a cached call pays nothing for it.
    """
    return capture_compiles()


def _from_ledger(total: float, records: list[Any]) -> FirstCall:
    def total_of(attr: str) -> float | None:
        vals = [v for v in (getattr(r, attr, None) for r in records) if v is not None]
        return sum(vals) if vals else None

    return FirstCall(total_s=total, trace_s=total_of("trace_s"), lower_s=total_of("lower_s"),
                     compile_s=total_of("compile_s"), compiles=len(records),
                     functions=[str(getattr(r, "function", "?")) for r in records],
                     source="ledger")


def error_report(exc: BaseException, phase: str, fn: Any = None) -> ErrorReport:
    """A short report; the function's name goes into the summary when JAX raised it."""
    rep = report(exc, phase)
    if fn is not None and isinstance(exc, (OutputError, DonatedArgumentsError)):
        rep.summary = f"{function_name(fn)} {rep.summary}"
    return rep
