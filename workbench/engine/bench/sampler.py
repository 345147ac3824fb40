"""Timing one call correctly: the first call apart, blocking on every output, autoranging.

JAX dispatches asynchronously: ``f(x)`` returns as soon as the work is queued, so
a loop around ``f(x)`` measures dispatch, not computation.  Every timed call here
therefore blocks until *all* array leaves of its output pytree are ready (a
function returning ``{"a": y, "b": z}`` is waited for on both; an Equinox model's
activation functions and static fields are not arrays and hold no device work).  The first call, which
traces and compiles, is timed on its own (split into trace/lower/compile from the
cache tracker's compile records), warm-up calls are never counted, and a
sample is ``number`` back-to-back calls between two ``perf_counter_ns`` reads, so
the clock's resolution and the per-sample overhead are spread over many calls.

The inner loops are specialised (single array vs. pytree, with vs. without
keyword arguments) so that the harness adds only a loop step per call on top of
``f(x).block_until_ready()``; Python's cyclic GC is paused inside a sample, as
``timeit`` does, so a collection triggered by someone else's garbage does not
land on one sample's clock.

A ``jax.jit`` function that donates arguments is given fresh copies of them for
every call, made before the clock starts (:class:`CallTimer`): the user's arrays
are never consumed by a benchmark.
"""

from __future__ import annotations

import contextlib
import gc
import inspect
import numbers
import time
from collections.abc import Callable
from dataclasses import asdict, dataclass, field
from typing import Any

import jax
import numpy as np

from workbench.engine import _jax_compat as compat
from workbench.engine.cache import CompileRecord, capture_compiles
from workbench.engine.common.errors import ErrorReport, report
from workbench.engine.stages import function_name


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
    compiles: int | None = None  # None: unknown
    functions: list[str] = field(default_factory=list)
    #: "cache" when split from the cache tracker's compile records, else "first call"
    source: str = "first call"

    @property
    def compile_total_s(self) -> float | None:
        """trace + lower + compile, when the cache tracker saw a compile."""
        parts = [p for p in (self.trace_s, self.lower_s, self.compile_s) if p is not None]
        return sum(parts) if parts else None

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)

    @classmethod
    def from_dict(cls, d: dict[str, Any]) -> FirstCall:
        # results saved before the feature was called "cache" say "ledger"
        if d.get("source") == "ledger":
            d = {**d, "source": "cache"}
        return cls(**d)


_READY_SCALARS = (np.ndarray, np.generic, numbers.Number)


def describe_output(out: Any) -> tuple[bool, str]:
    """(is a single ``jax.Array``, short description); raises :class:`OutputError`.

    The call is waited for on its array leaves.  Host values (NumPy arrays, Python
    numbers) are already computed when the call returns.  Other leaves (functions,
    activations and static fields of an Equinox or Flax model returned by a train
    step) hold no device work, so they are ignored.  Only an output with no arrays
    at all (``None``, a string) is refused: nothing says when the device work the
    call started is done, so the loop would time dispatch alone.
    """
    if isinstance(out, jax.Array):
        return True, f"{out.dtype}{list(out.shape)}"
    leaves = jax.tree.leaves(out)
    arrays = [leaf for leaf in leaves if isinstance(leaf, (jax.Array, *_READY_SCALARS))]
    if not arrays:
        raise OutputError(
            f"returned {type(out).__name__} with no arrays in it, so the device "
            "work it started cannot be waited for and would not be timed; return "
            "the result arrays (any pytree of them)"
        )
    n_dev = sum(isinstance(leaf, jax.Array) for leaf in leaves)
    other = len(leaves) - len(arrays)
    extra = f", {other} other leaves not waited for" if other else ""
    return False, f"{type(out).__name__} of {len(leaves)} leaves ({n_dev} JAX arrays{extra})"


# -- the timed loops: kept tiny, one per output/argument shape ---------------------------
def _loop_array(fn: Callable[..., Any], args: tuple[Any, ...], number: int) -> int:
    pc = time.perf_counter_ns
    it = range(number)
    t0 = pc()
    for _ in it:
        fn(*args).block_until_ready()
    return pc() - t0


def _loop_array_kw(
    fn: Callable[..., Any], args: tuple[Any, ...], kwargs: dict[str, Any], number: int
) -> int:
    pc = time.perf_counter_ns
    it = range(number)
    t0 = pc()
    for _ in it:
        fn(*args, **kwargs).block_until_ready()
    return pc() - t0


def _loop_tree(
    fn: Callable[..., Any], args: tuple[Any, ...], kwargs: dict[str, Any], number: int
) -> int:
    block = jax.block_until_ready
    pc = time.perf_counter_ns
    it = range(number)
    t0 = pc()
    for _ in it:
        block(fn(*args, **kwargs))
    return pc() - t0


def _loop_donating(
    fn: Callable[..., Any], calls: list[tuple[tuple[Any, ...], dict[str, Any]]]
) -> int:
    """One call per prepared argument set: each call consumes its own copies."""
    block = jax.block_until_ready
    pc = time.perf_counter_ns
    t0 = pc()
    for args, kwargs in calls:
        block(fn(*args, **kwargs))
    return pc() - t0


#: Most bytes of donated-argument copies prepared at once for one sample; a sample
#: of more calls is timed in chunks (the clock stops while the next copies are made).
COPY_BYTES_LIMIT = 256 * 2**20


def donated_arguments(
    fn: Callable[..., Any], args: tuple[Any, ...], kwargs: dict[str, Any]
) -> tuple[tuple[int, ...], tuple[str, ...]]:
    """(positions, keyword names) of the arguments ``fn`` donates, from its jit settings.

    Read from the ``jax.jit`` wrapper (``donate_argnums``; JAX turns
    ``donate_argnames`` into positions), never by calling: a call would already
    have deleted the user's buffers.  A donated parameter passed by keyword is
    donated too, so its name is looked up in the signature.
    """
    settings = compat.jit_settings(fn)
    if settings is None or not settings.donate_argnums:
        return (), ()
    positions = tuple(i for i in settings.donate_argnums if i < len(args))
    names: tuple[str, ...] = ()
    if kwargs:
        try:
            params = list(inspect.signature(fn).parameters)
        except (TypeError, ValueError):
            params = []
        names = tuple(
            params[i] for i in settings.donate_argnums if i < len(params) and params[i] in kwargs
        )
    return positions, names


def _copy_arrays(tree: Any) -> Any:
    """The tree with every ``jax.Array`` leaf copied (same sharding), others as they are.

    ``device_put(a, may_alias=False)`` copies the buffers without an XLA program
    and keeps the sharding and whether it is committed (both in jit's cache key, so
    the copies hit the user's compiled program); ``a.copy()`` would compile a copy
    per shape, a compile of the benchmark's own that the cell's compile line and the
    ledger would show under the user's cell.
    """
    return jax.tree.map(
        lambda a: jax.device_put(a, may_alias=False) if isinstance(a, jax.Array) else a, tree
    )


def _consumed(
    args: tuple[Any, ...], kwargs: dict[str, Any]
) -> tuple[tuple[int, ...], tuple[str, ...]]:
    """(positions, keyword names) of the arguments with a deleted (donated) array leaf."""

    def gone(tree: Any) -> bool:
        return any(isinstance(a, jax.Array) and a.is_deleted() for a in jax.tree.leaves(tree))

    return (
        tuple(i for i, a in enumerate(args) if gone(a)),
        tuple(k for k, v in kwargs.items() if gone(v)),
    )


def _nbytes(tree: Any) -> int:
    return sum(
        int(getattr(a, "nbytes", 0) or 0) for a in jax.tree.leaves(tree) if isinstance(a, jax.Array)
    )


class CallTimer:
    """Times one function at one set of arguments; holds no output between calls.

    A function that donates arguments (``jax.jit(..., donate_argnums=...)``) is
    never given the user's arrays: every call, the first included, gets fresh
    copies of the donated arguments, made and waited for *before* the clock
    starts, so the samples time the call alone, as the user's own loop
    ``p = upd(p, g)`` would, and the user's ``p`` is intact afterwards.
    """

    def __init__(
        self, fn: Callable[..., Any], args: tuple[Any, ...], kwargs: dict[str, Any]
    ) -> None:
        self.fn = fn
        self.args = args
        self.kwargs = kwargs
        self.single_array = False
        self.output = ""
        self.donated_positions, self.donated_names = donated_arguments(fn, args, kwargs)
        #: calls whose argument copies are prepared together (donating functions)
        self.copies_per_chunk = 0
        #: the fastest per-call time autorange saw (None before warm-up)
        self.per_call_s: float | None = None
        self._set_donated(self.donated_positions, self.donated_names)

    def _set_donated(self, positions: tuple[int, ...], names: tuple[str, ...]) -> None:
        """Arguments copied for every call from now on, and how many calls share a chunk."""
        self.donated_positions, self.donated_names = positions, names
        if self.donates:
            size = _nbytes(([self.args[i] for i in positions], [self.kwargs[k] for k in names]))
            self.copies_per_chunk = max(1, COPY_BYTES_LIMIT // max(size, 1))

    @property
    def donates(self) -> bool:
        """True when calls get fresh copies of donated arguments (see the class doc)."""
        return bool(self.donated_positions or self.donated_names)

    def _fresh_call(self) -> tuple[tuple[Any, ...], dict[str, Any]]:
        """Arguments for one call of a donating function: donated ones copied."""
        args = tuple(
            _copy_arrays(a) if i in self.donated_positions else a for i, a in enumerate(self.args)
        )
        kwargs = {
            k: _copy_arrays(v) if k in self.donated_names else v for k, v in self.kwargs.items()
        }
        return args, kwargs

    def _prepared(self, number: int) -> list[tuple[tuple[Any, ...], dict[str, Any]]]:
        calls = [self._fresh_call() for _ in range(number)]
        jax.block_until_ready(calls)  # copies finished before the clock starts
        return calls

    def first_call(self) -> FirstCall:
        """Run the first call (compile included) alone; validate what it returns."""
        probe = None
        if self.donates:
            ((args, kwargs),) = self._prepared(1)
        elif compat.jit_settings(self.fn) is None:
            probe = self._probe_arguments()
            args, kwargs = probe if probe is not None else (self.args, self.kwargs)
        else:
            args, kwargs = self.args, self.kwargs
        t0 = time.perf_counter_ns()
        with capture_compiles() as records:
            out = self.fn(*args, **kwargs)
            jax.block_until_ready(out)
        total = (time.perf_counter_ns() - t0) * 1e-9
        del args, kwargs
        if probe is not None:
            self._set_donated(*_consumed(*probe))
            del probe
        try:
            self.single_array, self.output = describe_output(out)
        finally:
            del out
        gone = self.deleted_arguments()
        if gone:  # donation the jit settings did not show (another wrapper's)
            raise DonatedArgumentsError(
                f"donated {', '.join(gone[:3])}{' ...' if len(gone) > 3 else ''}: the first "
                "call deleted the buffer, and the timed loop must call again with the same "
                "arguments. The benchmark gives fresh copies to jax.jit functions with "
                "donate_argnums, but this wrapper does not say what it donates. Time a "
                "variant without donation; with a sweep, make_args builds arguments the "
                "benchmark may consume instead of yours"
            )
        return _from_records(total, list(records))

    def _probe_arguments(self) -> tuple[tuple[Any, ...], dict[str, Any]] | None:
        """Copies of every array argument, for the first call of a function that is no
        ``jax.jit`` wrapper (``eqx.filter_jit(donate=...)``, ``nnx.jit``, a Python
        function calling a donating jit): such a wrapper may donate without saying so,
        and what it deletes is then found on the copies, never on the user's arrays.
        None (call with the user's arguments) when there is nothing to copy or copying
        fails (an argument the tree functions cannot rebuild, device memory)."""
        if not any(
            isinstance(leaf, jax.Array) for leaf in jax.tree.leaves((self.args, self.kwargs))
        ):
            return None
        try:
            probe = (
                tuple(_copy_arrays(a) for a in self.args),
                {k: _copy_arrays(v) for k, v in self.kwargs.items()},
            )
            jax.block_until_ready(probe)
        except Exception:
            return None
        return probe

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
            if self.donates:
                ns = 0
                left = number
                while left > 0:  # copies for a chunk of calls, then the chunk, timed
                    calls = self._prepared(min(left, self.copies_per_chunk))
                    left -= len(calls)
                    ns += _loop_donating(self.fn, calls)
                    del calls
            elif self.single_array:
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

    def autorange(
        self, target_s: float, min_time_s: float = 0.0, time_limit_s: float = float("inf")
    ) -> tuple[int, int]:
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
            if elapsed >= time_limit_s or (fastest * batch >= target_s and elapsed >= min_time_s):
                break
            if fastest * batch < target_s:
                batch = round_up_125(batch + 1)
                fastest = float("inf")
        self.per_call_s = fastest
        return max(1, round_up_125(target_s / fastest) if fastest > 0 else 1), calls


def _argument_name(path: tuple[Any, ...]) -> str:
    """A leaf of ``(args, kwargs)`` by its path: ``argument 0``, ``argument 1['w']``, ``x``."""
    top, key, *tail = path  # (0 for args or 1 for kwargs, position or name, inside it)
    inside = jax.tree_util.keystr(tuple(tail)) if tail else ""
    if getattr(top, "idx", None) == 0:
        return f"argument {getattr(key, 'idx', '?')}{inside}"
    return f"{getattr(key, 'key', '?')}{inside}"


def steady_state_compiles() -> contextlib.AbstractContextManager[list[CompileRecord]]:
    """Compile records of the calling thread.

    Held around warm-up and sampling, which compile nothing when all is well: the
    tracker's listener only runs on a compile, so a cached call pays nothing for it.
    """
    return capture_compiles()


def _from_records(total: float, records: list[CompileRecord]) -> FirstCall:
    def total_of(attr: str) -> float | None:
        vals = [getattr(r, attr) for r in records]
        vals = [v for v in vals if v is not None]
        return sum(vals) if vals else None

    return FirstCall(
        total_s=total,
        trace_s=total_of("trace_s"),
        lower_s=total_of("lower_s"),
        compile_s=total_of("compile_s"),
        compiles=len(records),
        functions=[r.function for r in records],
        source="cache",
    )


def error_report(exc: BaseException, phase: str, fn: Any = None) -> ErrorReport:
    """A short report; the function's name goes into the summary when JAX raised it."""
    rep = report(exc, phase)
    if fn is not None and isinstance(exc, (OutputError, DonatedArgumentsError)):
        rep.summary = f"{function_name(fn)} {rep.summary}"
    return rep
