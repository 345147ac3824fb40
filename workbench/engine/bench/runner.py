"""Running a benchmark: variants interleaved, sweep points in turn, within a time budget.

Order of work at each sweep point: build the arguments (``make_args``), make each
variant's first call (compile) alone, warm each one up while autoranging its
calls-per-sample, then take samples in rounds, ``A B A B ...``, so that drift
(thermal, frequency, other processes) hits every variant alike.  Sampling stops
when the budget for the point would be overrun by another round, or earlier once
every variant has at least ``min_runs`` samples and the 95% CI of each median is
within ``precision`` (±1% by default), or after ``repeat`` rounds when given.
The budget is an upper bound on the wall time after the first calls (compiles
are not charged to it): a slow function gets the samples that fit, at least one,
and the measurement says the budget stopped it (``stopped_by_budget``); a call
slower than the warm-up's share is not warmed up (its first call did that), and
``number`` is lowered when one sample of it would not fit.  Warm-up and sampling run inside a compile capture, so a function that
compiles again in its steady state is counted and flagged.

Failures stay local: a variant that raises (or returns no arrays) is reported
and the others go on; a sweep point whose ``make_args`` raises is reported and
the other points go on.  A ``jax.jit`` function with ``donate_argnums`` gets fresh
copies of its donated arguments for every call, made outside the clock (the
user's arrays are never consumed); any other function's first call gets copies of
every array argument, and what it deletes there (``eqx.filter_jit(donate=...)``, a
Python wrapper around a donating jit) is copied for every later call.  Should the
user's arguments still be deleted (copies could not be made), the variant is stopped
with a message before the raw XLA error.  After
sampling, a failing roofline or observer (or an interrupt during the final
render) never costs the samples.  ``KeyboardInterrupt`` (the kernel's interrupt
button) stops cleanly and keeps every sample taken so far.  Nothing holds device
arrays afterwards: arguments made for a sweep point are dropped with it, and
outputs are never kept.
"""

from __future__ import annotations

import dataclasses
import functools
import math
import time
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

import jax
import jax.numpy as jnp
import numpy as np

from workbench.engine import _jax_compat as compat
from workbench.engine.bench.peaks import DevicePeak, as_peak, roofline
from workbench.engine.bench.result import (
    BenchConfig,
    Benchmark,
    BenchProgress,
    Comparison,
    Measurement,
)
from workbench.engine.bench.sampler import (
    BenchInputError,
    CallTimer,
    DonatedArgumentsError,
    error_report,
    steady_state_compiles,
)
from workbench.engine.bench.state import (
    StateCopyError,
    callee_text,
    copies_note,
    mutable_state,
    positional_texts,
    private_arguments,
)
from workbench.engine.bench.stats import PowerFit, fit_power_law, paired_ratio, summarize
from workbench.engine.cache import inspecting
from workbench.engine.common.analysis import CostAnalysis, normalize_cost
from workbench.engine.common.environment import environment
from workbench.engine.common.gcpause import gc_paused
from workbench.engine.hlo.costs import ProgramCost, program_cost
from workbench.engine.hlo.parser import parse_hlo
from workbench.engine.stages import function_name, inspect

DEFAULT_BUDGET_S = 3.0
DEFAULT_PRECISION = 0.01
MIN_RUNS = 7
#: At most this many samples per variant and point (the JSON keeps every one).
MAX_RUNS = 20_000
#: How long one sample (``number`` back-to-back calls) should last.  The timed region
#: adds one clock read and a loop start (about 0.1 µs) per sample: 0.1% of 0.1 ms,
#: spread over the sample's calls.  Short samples matter for two reasons: a sample
#: that spans a preemption (busy machine) or a rare slow call is spoiled, and the
#: shorter the samples the fewer of them are, so the *median* sample stays the
#: undisturbed speed, as the median of single calls does.  (Measured here under
#: load: 2 ms samples read 40% slow, 0.2 ms ones 11%.)
SAMPLE_TARGET_S = 0.1e-3
#: Share of a variant's budget that warm-up (and autoranging) may use, and the least
#: time it runs for (caches, allocator pools and clocks settle).
WARMUP_SHARE = 0.15
MIN_WARMUP_S = 0.02


@dataclass
class Progress:
    """What an observer (the progress display) is told after each round and phase change.

    Building a whole partial record costs far more than the call that tells the
    observer, so it is built only on request: :meth:`snapshot` (an observer that
    redraws a few times a second calls it then, between samples, never in a timed
    region).
    """

    phase: str  # "compile", "warmup", "sampling", "roofline", "error", "done", "interrupted"
    message: str
    fraction: float  # 0..1 of the whole benchmark
    measurements: list[Measurement]  # the measurements of the current sweep point
    benchmark: Benchmark | None = None  # set on the final event
    run: _Run | None = None  # the run, for snapshot()

    def snapshot(self) -> Benchmark:
        """The benchmark so far, with :class:`BenchProgress` (the final record at the end).

        Measurements still sampling get the statistics of their samples so far (and
        comparisons theirs); the record owns copies, so it may be kept.
        """
        if self.benchmark is not None:
            return self.benchmark
        if self.run is None:
            raise ValueError("this progress event has no run to take a snapshot of")
        return self.run.snapshot(self)


Observer = Callable[[Progress], None]


def check_settings(budget: float, number: int | None, repeat: int | None, precision: float) -> None:
    """Raise :class:`BenchInputError` for settings that cannot give a measurement."""
    if not isinstance(budget, (int, float)) or not math.isfinite(budget) or budget <= 0:
        raise BenchInputError(f"the budget must be a positive number of seconds, got {budget!r}")
    for name, value in (("number", number), ("repeat", repeat)):
        if value is not None and (not isinstance(value, (int, np.integer)) or value < 1):
            raise BenchInputError(f"{name} must be a whole number of at least 1, got {value!r}")
    if (
        not isinstance(precision, (int, float))
        or isinstance(precision, bool)
        or not math.isfinite(precision)
        or precision < 0
    ):
        raise BenchInputError(
            f"precision must be 0 (use the whole budget) or a positive "
            f"fraction such as 0.01, got {precision!r}"
        )


def as_variants(
    fn: Callable[..., Any] | Mapping[str, Callable[..., Any]],
) -> dict[str, Callable[..., Any]]:
    """A function, or ``{"name": function, ...}`` for a comparison (first is the reference)."""
    if isinstance(fn, Mapping):
        if not fn:
            raise BenchInputError("no variants to compare: the dict of functions is empty")
        out = {}
        for name, f in fn.items():
            if not callable(f):
                raise BenchInputError(f"variant {name!r} is a {type(f).__name__}, not a function")
            out[str(name)] = f
        return out
    if not callable(fn):
        raise BenchInputError(
            f"bench() needs a function (or a dict of them), got {type(fn).__name__}"
        )
    return {function_name(fn): fn}


def _sweep_points(
    sweep: Mapping[str, Sequence[Any]] | None,
    make_args: Callable[..., Any] | None,
    args: tuple[Any, ...],
) -> tuple[str | None, list[Any]]:
    if sweep is None:
        if make_args is not None:
            raise BenchInputError("make_args is only used with sweep={'n': [...]}")
        return None, [None]
    if not isinstance(sweep, Mapping) or len(sweep) != 1:
        raise BenchInputError("sweep takes one parameter, e.g. sweep={'n': [256, 512, 1024]}")
    ((name, values),) = sweep.items()
    values = list(values)
    if not values:
        raise BenchInputError(f"sweep parameter {name!r} has no values")
    if make_args is None or not callable(make_args):
        raise BenchInputError(
            "a sweep needs make_args=lambda n: (args...) to build the arguments at each size"
        )
    if args:
        raise BenchInputError(
            "with a sweep, the arguments come from make_args; pass no positional arguments"
        )
    return str(name), values


def _as_args(made: Any) -> tuple[tuple[Any, ...], dict[str, Any]]:
    """``make_args`` may return a tuple of arguments, ``(args, kwargs)``, or one argument."""
    if isinstance(made, tuple):
        if len(made) == 2 and isinstance(made[0], tuple) and isinstance(made[1], dict):
            return made[0], dict(made[1])
        return made, {}
    return (made,), {}


def _dtype_of(args: tuple[Any, ...], kwargs: dict[str, Any]) -> str:
    """The floating dtype holding most argument bytes: which peak FLOP/s applies."""
    sizes: dict[str, int] = {}
    for leaf in jax.tree.leaves((args, kwargs)):
        dt = getattr(leaf, "dtype", None)
        # jnp's issubdtype: NumPy's raises on extended dtypes (PRNG keys, key<fry>)
        if dt is not None and jnp.issubdtype(dt, np.inexact):
            sizes[str(dt)] = sizes.get(str(dt), 0) + int(getattr(leaf, "nbytes", 0) or 0)
    return max(sizes, key=sizes.__getitem__) if sizes else "float32"


class _Run:
    """State of one ``run_benchmark`` call (kept small; nothing survives it but the record)."""

    def __init__(
        self,
        n_points: int,
        budget: float,
        observer: Observer | None,
        record: Benchmark | None = None,
    ) -> None:
        self.n_points = n_points
        self.budget = budget
        self.observer = observer
        self.point = 0
        self.point_start = time.perf_counter()
        self.t_start = self.point_start
        #: the record being filled in (its measurements grow point by point)
        self.record = record

    def snapshot(self, p: Progress) -> Benchmark:
        if self.record is None:
            raise ValueError("this run has no record to take a snapshot of")
        rec = self.record
        ms = [
            dataclasses.replace(
                m,
                samples=list(m.samples),
                stats=m.stats if m.stats is not None or not m.samples else summarize(m.samples),
            )
            for m in rec.measurements
        ]
        counts = {name: 0 for name in rec.variants}
        for m in ms:
            counts[m.variant] = counts.get(m.variant, 0) + len(m.samples)
        progress = BenchProgress(
            phase=p.phase,
            message=p.message,
            fraction=p.fraction,
            elapsed_s=time.perf_counter() - self.t_start,
            point=self.point,
            points=self.n_points,
            samples=counts,
        )
        return dataclasses.replace(
            rec,
            measurements=ms,
            comparisons=_comparisons(ms, list(rec.variants)),
            fits=_fits(ms, list(rec.variants), rec.sweep_param),
            progress=progress,
            wall_s=progress.elapsed_s,
        )

    def fraction(self, within: float) -> float:
        return min(1.0, (self.point + min(max(within, 0.0), 1.0)) / self.n_points)

    def tell(self, phase: str, message: str, within: float, ms: list[Measurement]) -> None:
        if self.observer is not None:
            self.notify(Progress(phase, message, self.fraction(within), ms, run=self))

    def notify(self, progress: Progress) -> None:
        """Tell the observer; a failing observer is dropped, never the measurement.

        ``KeyboardInterrupt`` passes: it is how the user stops the benchmark.
        """
        if self.observer is None:
            return
        try:
            self.observer(progress)
        except Exception:
            self.observer = None


def run_benchmark(
    fn: Callable[..., Any] | Mapping[str, Callable[..., Any]],
    args: tuple[Any, ...] = (),
    kwargs: dict[str, Any] | None = None,
    *,
    sweep: Mapping[str, Sequence[Any]] | None = None,
    make_args: Callable[..., Any] | None = None,
    budget: float = DEFAULT_BUDGET_S,
    number: int | None = None,
    repeat: int | None = None,
    precision: float = DEFAULT_PRECISION,
    min_runs: int = MIN_RUNS,
    with_roofline: bool = True,
    peaks: DevicePeak | dict[str, Any] | None = None,
    label: str | None = None,
    observer: Observer | None = None,
    allow_mutation: bool = False,
) -> Benchmark:
    """Benchmark ``fn(*args, **kwargs)`` (or several variants, or a sweep) into a record.

    Raises :class:`BenchInputError` for bad settings before anything runs, and its
    :class:`~workbench.engine.bench.state.StateCopyError` when the arguments hold mutable
    state (Flax NNX objects) that cannot be copied; every failure after that is recorded
    in the result instead of raised.  The calls run on copies of such state (made before
    the first call, outside every timed region), so the user's objects are unchanged;
    ``allow_mutation=True`` runs them on the user's objects instead.
    """
    check_settings(budget, number, repeat, precision)
    variants = as_variants(fn)
    sweep_param, points = _sweep_points(sweep, make_args, tuple(args))
    peak_override = as_peak(peaks)
    kwargs = dict(kwargs or {})
    state = _StatePolicy(allow_mutation, positional_texts(label), callee_text(label))
    if make_args is None:  # one set of arguments: a copy that cannot be made refuses the run
        variants, args, kwargs = state.prepare(variants, tuple(args), kwargs)
    config = BenchConfig(
        budget_s=float(budget),
        number=number,
        repeat=repeat,
        precision=float(precision),
        min_runs=min_runs,
        roofline=with_roofline,
    )
    env = environment()
    t_start = time.perf_counter()
    measurements: list[Measurement] = []
    record = Benchmark(
        label=label or " vs ".join(variants),
        variants=list(variants),
        sweep_param=sweep_param,
        sweep_values=[] if sweep_param is None else points,
        measurements=measurements,
        comparisons=[],
        fits=[],
        env=env,
        config=config,
    )
    run = _Run(len(points), float(budget), observer, record)
    run.t_start = t_start
    interrupted = False
    for i, value in enumerate(points):
        run.point = i
        params = {} if sweep_param is None else {sweep_param: value}
        ms = [Measurement(variant=name, params=dict(params)) for name in variants]
        measurements.extend(ms)
        if interrupted:
            for m in ms:
                m.interrupted = True
            continue
        try:
            _run_point(
                run,
                variants,
                ms,
                params,
                args,
                kwargs,
                make_args,
                value,
                config,
                peak_override,
                state,
            )
        except KeyboardInterrupt:
            interrupted = True
            for m in ms:
                m.interrupted = True
        for m in ms:
            if m.samples:
                m.stats = summarize(m.samples)
    bench = dataclasses.replace(
        record,
        comparisons=_comparisons(measurements, list(variants)),
        fits=_fits(measurements, list(variants), sweep_param),
        interrupted=interrupted,
        wall_s=time.perf_counter() - t_start,
    )
    run.record = None  # a late snapshot() gets the final record through its event only
    try:
        # the final event (an observer's last draw) must not lose what was measured: an
        # interrupt here still returns the result, the samples are all taken
        run.notify(
            Progress(
                "interrupted" if interrupted else "done",
                "interrupted: kept the samples so far" if interrupted else "done",
                1.0,
                measurements,
                bench,
            )
        )
    except KeyboardInterrupt:
        pass
    return bench


def _run_point(
    run: _Run,
    variants: dict[str, Callable[..., Any]],
    ms: list[Measurement],
    params: dict[str, Any],
    args: tuple[Any, ...],
    kwargs: dict[str, Any],
    make_args: Callable[..., Any] | None,
    value: Any,
    config: BenchConfig,
    peak_override: DevicePeak | None,
    state: _StatePolicy,
) -> None:
    """One sweep point: arguments, first calls, warm-up, interleaved samples, roofline."""
    point_budget = config.budget_s / run.n_points
    where = f" at {', '.join(f'{k}={v}' for k, v in params.items())}" if params else ""
    if make_args is not None:
        try:
            args, kwargs = _as_args(make_args(value))
            # make_args may hand out the user's own objects: copied as the plain call's are
            variants, args, kwargs = state.prepare(variants, args, kwargs)
        except Exception as exc:
            rep = error_report(
                exc, "make_args" if not isinstance(exc, StateCopyError) else "settings"
            )
            for m in ms:
                m.error = rep
            run.tell("error", f"make_args failed{where}", 1.0, ms)
            return
    for m in ms:
        m.state_note = state.note
    timers: dict[str, CallTimer] = {}
    donors: list[str] = []
    try:
        for m in ms:
            fn = variants[m.variant]
            run.tell("compile", f"first call of {m.variant}{where} (compiling)", 0.0, ms)
            timer = CallTimer(fn, args, kwargs)
            if donors and timer.deleted_arguments():
                timers[m.variant] = timer  # stopped with the others below, never called
                continue
            try:
                m.first_call = timer.first_call()
                m.output = timer.output
            except Exception as exc:
                m.error = error_report(exc, "first call", fn)
                if isinstance(exc, DonatedArgumentsError):
                    donors.append(m.variant)
                continue
            timers[m.variant] = timer
        if donors:  # the arguments every variant shares are gone
            _stop_variants_without_arguments(ms, timers, donors)
        running = [m for m in ms if m.variant in timers]
        if not running:
            return
        # the budget is for warm-up and sampling: compiles (first calls) are not in it
        point_start = time.perf_counter()
        with steady_state_compiles() as compiles:
            _warm_and_sample(
                run,
                running,
                timers,
                variants,
                config,
                point_start,
                point_budget,
                where,
                ms,
                compiles,
            )
        if config.roofline:
            for m in running:
                if m.samples:
                    run.tell("roofline", f"cost analysis of {m.variant}{where}", 1.0, ms)
                    try:
                        m.roofline = _roofline(variants[m.variant], args, kwargs, m, peak_override)
                    except Exception:  # an extra: never worth the samples
                        m.roofline = None
    finally:
        timers.clear()
        del args, kwargs


class _StatePolicy:
    """Copies the mutable state among a point's arguments (or, allowed, does not) and
    keeps the line the views show about it."""

    def __init__(self, allow_mutation: bool, names: list[str], callee: str) -> None:
        self.allow_mutation = allow_mutation
        self.names = names  # the positional arguments' text in the call, when known
        self.callee = callee  # the called function's text in the call, when known
        self.note = ""

    def prepare(
        self, variants: dict[str, Callable[..., Any]], args: tuple[Any, ...], kwargs: dict[str, Any]
    ) -> tuple[dict[str, Callable[..., Any]], tuple[Any, ...], dict[str, Any]]:
        """The variants and arguments to run: with copies of the state they hold."""
        self.note = ""  # each sweep point's own arguments say what it ran on
        if self.allow_mutation:
            found = mutable_state(variants, args, kwargs, self.names, self.callee)
            if found:
                shown = ", ".join(dict.fromkeys(f"{w} ({type(n).__name__})" for w, n in found))
                self.note = f"timed on your objects (allow_mutation): the calls changed {shown}"
            return variants, args, kwargs
        private = private_arguments(args, kwargs, self.names, variants, self.callee)
        if private.copied:
            self.note = copies_note(private.copied)
        return private.fns, private.args, private.kwargs


def _stop_variants_without_arguments(
    ms: list[Measurement], timers: dict[str, CallTimer], donors: list[str]
) -> None:
    """A variant that donated the shared arguments deleted them for the others too."""
    for m in ms:
        timer = timers.get(m.variant)
        gone = [] if timer is None else timer.deleted_arguments()
        if gone:
            m.error = error_report(
                DonatedArgumentsError(
                    f"cannot time: {', '.join(gone[:3])} deleted by the donation "
                    f"(donate_argnums) of variant {donors[0]!r}, which shares the arguments; "
                    "time the donating variant on its own"
                ),
                "first call",
            )
            del timers[m.variant]


class _CompileCounter:
    """Attributes the steady-state compile records to the variant whose calls made them.

    One capture is held for the whole phase (variants interleave on one thread);
    reading the sink's length around each variant's calls is outside the clock.
    """

    def __init__(self, sink: list[Any]) -> None:
        self.sink = sink

    def mark(self) -> int:
        return len(self.sink)

    def since(self, mark: int) -> int:
        return len(self.sink) - mark


def _first_run_s(m: Measurement) -> float:
    """How long one call runs, from the first call less its trace/lower/compile."""
    fc = m.first_call
    if fc is None:
        return 0.0
    return max(0.0, fc.total_s - (fc.compile_total_s or 0.0))


def _warm_and_sample(
    run: _Run,
    running: list[Measurement],
    timers: dict[str, CallTimer],
    variants: dict[str, Callable[..., Any]],
    config: BenchConfig,
    point_start: float,
    point_budget: float,
    where: str,
    ms: list[Measurement],
    compiles: list[Any],
) -> None:
    """Warm-up with autoranging, then interleaved rounds; compiles counted per variant.

    A call that runs longer than the warm-up's share of the budget is not warmed
    up: its first call already ran it once (caches, allocator pools), and a
    warm-up call would spend the budget the samples need.  "Runs longer" is read
    from the first call less its compile; should the first round show the call is
    fast after all (the first call was slow for another reason), that round is
    dropped as a late warm-up and the variant is autoranged then.
    """
    warmer = _Warmer(
        run,
        timers,
        variants,
        config,
        point_budget / len(running),
        where,
        ms,
        _CompileCounter(compiles),
    )
    unwarmed: set[str] = set()
    for m in running:
        first_run = _first_run_s(m)
        if first_run >= warmer.warm:  # slow: one call is more than the warm-up may spend
            m.warmup_calls, m.warmup_compiles = 0, 0
            m.number = config.number or 1
            warmer.per_call[m.variant] = first_run
            unwarmed.add(m.variant)
        else:
            warmer.warm_up(m)
    running = [m for m in running if m.error is None]
    _fit_number_to_budget(
        running, warmer.per_call, config, point_budget - (time.perf_counter() - point_start)
    )
    for m in running:
        m.sampling_compiles = 0
    _sample_rounds(
        run,
        running,
        timers,
        variants,
        config,
        point_start,
        point_budget,
        where,
        ms,
        warmer,
        unwarmed,
    )


class _Warmer:
    """Warm-up with autoranging for one sweep point (also used late, see above)."""

    def __init__(
        self,
        run: _Run,
        timers: dict[str, CallTimer],
        variants: dict[str, Callable[..., Any]],
        config: BenchConfig,
        per_variant: float,
        where: str,
        ms: list[Measurement],
        counter: _CompileCounter,
    ) -> None:
        self.run, self.timers, self.variants, self.config = run, timers, variants, config
        self.where, self.ms, self.counter = where, ms, counter
        # with a tiny budget, still leave room for min_runs samples
        self.target = min(SAMPLE_TARGET_S, per_variant / (2 * config.min_runs))
        self.warm = per_variant * WARMUP_SHARE
        self.per_call: dict[str, float] = {}

    def warm_up(self, m: Measurement) -> None:
        """Autorange ``m``'s calls per sample; an exception becomes ``m.error``."""
        self.run.tell("warmup", f"warming up {m.variant}{self.where}", 0.0, self.ms)
        timer = self.timers[m.variant]
        mark = self.counter.mark()
        try:
            auto_number, calls = timer.autorange(
                self.target, min_time_s=min(MIN_WARMUP_S, self.warm / 2), time_limit_s=self.warm
            )
        except Exception as exc:
            m.error = error_report(exc, "warm-up", self.variants[m.variant])
            return
        finally:
            m.warmup_compiles = (m.warmup_compiles or 0) + self.counter.since(mark)
        m.warmup_calls += calls
        m.number = self.config.number or auto_number
        self.per_call[m.variant] = timer.per_call_s or 0.0


def _fit_number_to_budget(
    running: list[Measurement], per_call: dict[str, float], config: BenchConfig, left_s: float
) -> None:
    """Fewer calls per sample than ``number`` asks when the samples would overrun the budget.

    The budget bounds the wall time: ``-n 1000`` of a 2 ms call with a 0.2 s budget
    takes ``min_runs`` (or ``repeat``) samples of the calls that fit, so the median
    still has a confidence interval (the views say so, beside ``-n``), rather than
    2 s samples.
    """
    if config.number is None or not running:
        return
    wanted = config.repeat if config.repeat is not None else config.min_runs
    left = max(left_s, 0.0)
    if wanted * sum(per_call.get(m.variant, 0.0) * m.number for m in running) <= left:
        return
    share = left / (len(running) * wanted)
    for m in running:
        est = per_call.get(m.variant, 0.0)
        if est > 0:
            m.number = max(1, min(m.number, int(share / est)))


def _sample_rounds(
    run: _Run,
    running: list[Measurement],
    timers: dict[str, CallTimer],
    variants: dict[str, Callable[..., Any]],
    config: BenchConfig,
    point_start: float,
    point_budget: float,
    where: str,
    ms: list[Measurement],
    warmer: _Warmer,
    unwarmed: set[str],
) -> None:
    """Rounds of one sample per variant (A B A B ...) until a stopping rule fires.

    The budget is an upper bound: a round starts only if the last one's wall time
    still fits in what is left (the first round always runs: without a sample
    there is no result).  A measurement the budget stopped before ``min_runs``
    (or ``repeat``) samples is marked ``stopped_by_budget``.
    """
    counter = warmer.counter
    rounds = 0
    next_check = config.min_runs
    wanted = config.repeat if config.repeat is not None else config.min_runs
    while running:
        round_start = time.perf_counter()
        for m in list(running):
            mark = counter.mark()
            try:
                m.samples.append(timers[m.variant].time_calls(m.number))
            except Exception as exc:
                m.error = error_report(exc, "sampling", variants[m.variant])
                running.remove(m)
            finally:
                m.sampling_compiles = (m.sampling_compiles or 0) + counter.since(mark)
        rounds += 1
        if rounds == 1 and unwarmed and _late_warm_up(running, warmer, unwarmed):
            running = [m for m in running if m.error is None]
            rounds = 0
            continue
        now = time.perf_counter()
        elapsed = now - point_start
        out_of_budget = elapsed + (now - round_start) > point_budget
        if config.repeat is not None:
            within = rounds / config.repeat
            done = rounds >= config.repeat
        else:
            within = elapsed / point_budget
            done = False
            if rounds >= next_check:
                # the CI check sorts every sample: do it on a geometric schedule (about
                # 5% more rounds each time) so bookkeeping stays a small share of the time
                done = _precise(running, config.precision)
                next_check = rounds + max(1, rounds // 20)
            done = done or rounds >= MAX_RUNS
        if not done and out_of_budget:
            done = True
            if rounds < wanted:
                for m in running:
                    m.stopped_by_budget = True
        run.tell("sampling", f"{rounds} runs{where}", within, ms)
        if done:
            return


def _late_warm_up(running: list[Measurement], warmer: _Warmer, unwarmed: set[str]) -> bool:
    """After the first round: warm up the variants whose first call misled (see above).

    True when it did; the first round is then dropped for every variant, so the
    rounds stay paired for the comparisons, and counted as warm-up.
    """
    fast = [
        m
        for m in running
        if m.variant in unwarmed and m.samples and m.samples[-1] * m.number < warmer.warm
    ]
    unwarmed.clear()
    if not fast:
        return False
    for m in running:
        if m.samples:
            m.samples.pop()
            m.warmup_calls += m.number
        m.warmup_compiles = (m.warmup_compiles or 0) + (m.sampling_compiles or 0)
        m.sampling_compiles = 0
    for m in fast:
        warmer.warm_up(m)
    return True


def _precise(running: list[Measurement], precision: float) -> bool:
    if precision <= 0:
        return False
    for m in running:
        st = summarize(m.samples)
        if st.ci_coverage < 0.95 or st.ci_halfwidth_rel > precision:
            return False
    return True


def _roofline(
    fn: Callable[..., Any],
    args: tuple[Any, ...],
    kwargs: dict[str, Any],
    m: Measurement,
    peak_override: DevicePeak | None,
) -> Any:
    """XLA's cost analysis of the jitted call (cached after the first call) at the median,
    with our own count of its optimized HLO where XLA did not count.

    For ``jax.jit`` functions, and for the jit wrappers of Flax (``nnx.jit``) and Equinox
    (``eqx.filter_jit``), through their own ``.lower``: that is the program the timed
    calls ran (an NNX step's state updates included), and JAX's caches hand back the
    executable of the first call instead of compiling it again.  A plain Python function
    runs as many small programs, and analysing ``jax.jit(fn)`` instead would both
    describe a different program and compile it (a spurious entry in the user's compile
    records, ``%jaxcache``): n/a.
    """
    median = summarize(m.samples).median
    dtype = _dtype_of(args, kwargs)
    if compat.is_jitted(fn):
        try:
            ins = inspect(fn, *args, **kwargs)
            cost = ins.cost
            kind = ", ".join(ins.device_kinds)
            hlo: Callable[[], str] = lambda: ins.hlo_text  # noqa: E731
        except Exception:
            return None
    else:
        compiled = _library_compiled(fn, args, kwargs)
        if compiled is None:
            return roofline(
                CostAnalysis(),
                median,
                ", ".join(sorted({d.device_kind for d in jax.devices()})),
                dtype,
                peak_override,
                reason="not a jax.jit function (nor nnx.jit, eqx.filter_jit): "
                "no single compiled program to analyse",
            )
        try:
            cost = normalize_cost(compiled.cost_analysis())
        except Exception:
            cost = CostAnalysis()
        kind = ", ".join(sorted({d.device_kind for d in _devices_of(compiled)}))
        hlo = compiled.as_text
    return roofline(cost, median, kind, dtype, peak_override, counts=_counted(hlo, cost))


#: The packages whose jit wrappers have an AOT ``.lower`` that stages the call as run.
_LIBRARY_JITS = ("flax", "equinox")


def _library_compiled(fn: Any, args: tuple[Any, ...], kwargs: dict[str, Any]) -> Any:
    """The ``jax.stages.Compiled`` of a Flax or Equinox jit wrapper's call, or None.

    ``nnx.jit`` functions have ``.lower(*args)`` giving JAX's ``Lowered``; Equinox's
    ``filter_jit`` gives its own wrapper around one (``.lowered``).  A method decorated
    with either arrives bound, as a ``functools.partial`` of the wrapper and ``self``.
    Lowering traces (NNX writes nothing back to the objects) and compiling is the
    workbench's own, kept out of the user's compile records.
    """
    bound: tuple[Any, ...] = ()
    bound_kw: dict[str, Any] = {}
    if isinstance(fn, functools.partial):
        fn, bound, bound_kw = fn.func, tuple(fn.args), dict(fn.keywords)
    if type(fn).__module__.split(".")[0] not in _LIBRARY_JITS:
        return None
    lower = getattr(fn, "lower", None)
    if not callable(lower):
        return None
    try:
        with gc_paused(), inspecting():
            lowered = lower(*bound, *args, **bound_kw, **kwargs)
            lowered = getattr(lowered, "lowered", lowered)  # Equinox's wrapper
            compiled = lowered.compile()
    except Exception:
        return None
    if not callable(getattr(compiled, "cost_analysis", None)):
        return None
    return compiled


def _devices_of(compiled: Any) -> list[Any]:
    found = {}
    try:
        shardings = jax.tree.leaves(compiled.input_shardings) + jax.tree.leaves(
            compiled.output_shardings
        )
        for sh in shardings:
            for d in getattr(sh, "device_set", ()):
                found[d.id] = d
    except Exception:
        pass
    return list(found.values()) or jax.devices()[:1]


def _counted(hlo_text: Callable[[], str], cost: CostAnalysis) -> ProgramCost | None:
    """Our FLOP/byte count of the optimized HLO, resolved against XLA's ``cost``.

    Always asked, not only when XLA gave nothing: the dtype whose peak applies
    comes from it.  A module text we cannot read leaves XLA's figures alone (None).
    """
    try:
        return program_cost(parse_hlo(hlo_text()), cost)
    except Exception:
        return None


def _fits(
    measurements: list[Measurement], names: list[str], sweep_param: str | None
) -> list[PowerFit]:
    """Power-law fits of median time against the (numeric) sweep parameter, per variant."""
    fits: list[PowerFit] = []
    if sweep_param is None:
        return fits
    for name in names:
        pts = [
            (m.params[sweep_param], m.stats.median)
            for m in measurements
            if m.variant == name
            and m.stats is not None
            and isinstance(m.params[sweep_param], (int, float, np.number))
        ]
        fit = fit_power_law([p[0] for p in pts], [p[1] for p in pts], name) if pts else None
        if fit is not None:
            fits.append(fit)
    return fits


def _comparisons(measurements: list[Measurement], names: list[str]) -> list[Comparison]:
    if len(names) < 2:
        return []
    out = []
    by_point: dict[str, dict[str, Measurement]] = {}
    for m in measurements:
        by_point.setdefault(repr(sorted(m.params.items())), {})[m.variant] = m
    for group in by_point.values():
        ref = group.get(names[0])
        if ref is None or not ref.samples:
            continue
        for name in names[1:]:
            other = group.get(name)
            if other is None or not other.samples:
                continue
            ratio = paired_ratio(other.samples, ref.samples, name, names[0])
            if ratio is not None:
                out.append(Comparison(params=dict(other.params), ratio=ratio))
    return out
