"""``workbench.bench(fn, *args)``: the Python front door of the benchmarks.

Thin by design: check where we run (a Jupyter kernel gets the progress display), hand
the call to :func:`~workbench.engine.bench.runner.run_benchmark` with
:class:`~workbench.ipython.bench_progress.ProgressDisplay` as its observer (the run so far
as one output, updated in place through display updates), and return the engine's
``Benchmark`` record in a :class:`~workbench.views.display.Display` (``r.measurements``,
``r.to_json()``...).  When the progress output was shown, it is updated at the end to the
finished result (so a saved notebook keeps the table and plots) and the returned value
is not shown a second time by the same cell (:func:`hide_in_execution`: the kernel's
execution count is a front door's business, not a view's).  The shell's session hears of
the finished benchmark (the side panel's latest timings).
"""

from __future__ import annotations

import sys
from collections.abc import Callable, Mapping, Sequence
from typing import Any

from workbench.engine.bench.peaks import DevicePeak
from workbench.engine.bench.result import Benchmark
from workbench.engine.bench.runner import (
    DEFAULT_BUDGET_S,
    DEFAULT_PRECISION,
    check_settings,
    run_benchmark,
)
from workbench.engine.bench.sampler import BenchInputError
from workbench.engine.common.errors import ErrorReport
from workbench.views.bench import bench_display
from workbench.views.display import Display
from workbench.views.errors import error_text


def in_kernel() -> bool:
    """True inside a Jupyter kernel (where display updates redraw), not a terminal IPython."""
    try:
        from IPython import get_ipython
    except ImportError:  # pragma: no cover - IPython is a dependency
        return False
    ip = get_ipython()
    return ip is not None and getattr(ip, "kernel", None) is not None


class BenchSettingsError(BenchInputError):
    """Bad settings from :func:`bench`, shown in IPython as the error view's line.

    Still a :class:`BenchInputError` (a ``ValueError``) with the plain message, so a
    script's ``except`` keeps working; the engine's error has no display code, so
    the front door adds the short rendering the magics give their errors.
    """

    @property
    def report(self) -> ErrorReport:
        rep = super().report
        rep.kind = BenchInputError.__name__  # the name a user catches and searches for
        return rep

    def _render_traceback_(self) -> list[str]:
        return error_text(self.report, color=True).splitlines()


def _short(exc: BenchInputError) -> BenchSettingsError:
    return BenchSettingsError(*exc.args)


def bench(
    fn: Callable[..., Any] | Mapping[str, Callable[..., Any]],
    *args: Any,
    sweep: Mapping[str, Sequence[Any]] | None = None,
    make_args: Callable[..., Any] | None = None,
    budget: float = DEFAULT_BUDGET_S,
    number: int | None = None,
    repeat: int | None = None,
    precision: float = DEFAULT_PRECISION,
    roofline: bool = True,
    peaks: DevicePeak | dict[str, Any] | None = None,
    progress: bool | None = None,
    text: bool = False,
    label: str | None = None,
    live: bool | None = None,
    allow_mutation: bool = False,
    **kwargs: Any,
) -> Display[Benchmark]:
    """Time ``fn(*args, **kwargs)`` correctly and show it (as it goes, in a notebook).

    - ``fn`` may be a dict ``{"name": function}``: the variants run interleaved and
      each is compared with the first (ratio of paired samples with its 95% CI).
    - ``sweep={"n": [...]}`` with ``make_args=lambda n: (args...)``: time vs. size
      on log-log axes with the fitted exponent.
    - ``budget`` seconds of warm-up and sampling per benchmark (compiles excluded),
      an upper bound: a slow call gets the samples that fit (at least one) and the
      result says "budget reached after N samples"; sampling stops earlier once the
      median's 95% CI is within ``precision``.  ``number`` (calls per sample) and
      ``repeat`` (samples) override autoranging, within the budget.
    - a ``jax.jit`` function with ``donate_argnums`` is timed on fresh copies of the
      donated arguments, made outside the clock: your arrays are never consumed.
    - Flax NNX objects among the arguments (model, optimizer, ``Rngs``) are copied once
      before the first call, and every call runs on the copies: an ``nnx.jit`` train
      step does not train your model nor advance your optimizer or RNG counters.  The
      result says so.  Where a copy cannot be made the benchmark refuses;
      ``allow_mutation=True`` times on your objects, which the calls then change.
    - ``roofline``: achieved FLOP/s and bytes/s from XLA's cost analysis against
      the device's peak (``peaks=`` overrides the table).
    - ``progress``: show the run as it goes (progress, plots that grow, through display
      updates of one output); default: on in a kernel.  Where outputs cannot be
      updated in place (terminal IPython, plain Python) the result is shown once.
      ``live=`` is its former name, still accepted.

    The options are keyword-only; any other keyword goes to ``fn``.
    """
    if progress is None:
        progress = live
    result = bench_call(
        fn,
        args,
        kwargs,
        sweep=sweep,
        make_args=make_args,
        budget=budget,
        number=number,
        repeat=repeat,
        precision=precision,
        roofline=roofline,
        peaks=peaks,
        progress=progress,
        text=text,
        label=label,
        allow_mutation=allow_mutation,
    )
    _tell_session(result.record)
    return result


def _tell_session(record: Benchmark) -> None:
    """The running shell's session hears of the finished benchmark (the side panel's latest
    timings); ``%jaxbench`` tells its own shell's session itself.

    A session exists only once ``%load_ext workbench`` imported its module: without that
    module there is none to tell, and importing it here would load the whole IPython front
    door (every magic, the side panel's comm) into a script that never uses it.
    """
    session_module = sys.modules.get("workbench.ipython.session")
    session = session_module.current_session() if session_module is not None else None
    if session is not None:
        session.result_produced("bench", record)


def bench_call(
    fn: Callable[..., Any] | Mapping[str, Callable[..., Any]],
    args: tuple[Any, ...],
    kwargs: dict[str, Any],
    *,
    sweep: Mapping[str, Sequence[Any]] | None = None,
    make_args: Callable[..., Any] | None = None,
    budget: float = DEFAULT_BUDGET_S,
    number: int | None = None,
    repeat: int | None = None,
    precision: float = DEFAULT_PRECISION,
    roofline: bool = True,
    peaks: DevicePeak | dict[str, Any] | None = None,
    progress: bool | None = None,
    text: bool = False,
    label: str | None = None,
    allow_mutation: bool = False,
) -> Display[Benchmark]:
    """:func:`bench` with the call's arguments passed as a tuple and a dict.

    The magics use this, so a user's keyword named like an option (``budget=``)
    still reaches their function.
    """
    from IPython import get_ipython

    try:
        check_settings(budget, number, repeat, precision)  # before any output appears
    except BenchInputError as exc:
        raise _short(exc) from None
    observer = None
    if in_kernel() if progress is None else progress:
        from workbench.ipython.bench_progress import ProgressDisplay, updates_in_place

        # where an output cannot be updated in place (terminal IPython prints every
        # display), progress=True would print each update: the result is shown once instead
        if updates_in_place():
            observer = ProgressDisplay(text_only=text)  # shows its output on the first event
    try:
        record = run_benchmark(
            fn,
            tuple(args),
            kwargs,
            sweep=sweep,
            make_args=make_args,
            budget=budget,
            number=number,
            repeat=repeat,
            precision=precision,
            with_roofline=roofline,
            peaks=peaks,
            label=label,
            observer=observer,
            allow_mutation=allow_mutation,
        )
    except BaseException as exc:
        if observer is not None:
            observer.stopped(exc)
        if isinstance(exc, BenchInputError):
            raise _short(exc) from None
        raise
    try:
        result = bench_display(record, text_only=text)
        if observer is not None and observer.shown:
            observer.finish(result._repr_mimebundle_())
    except BaseException as exc:  # e.g. an interrupt while drawing: no stuck progress
        if observer is not None:
            observer.stopped(exc)
        raise
    if observer is not None and observer.shown:
        ip = get_ipython()
        hide_in_execution(result, None if ip is None else ip.execution_count)
    return result


def hide_in_execution(result: Display[Any], execution_count: int | None) -> None:
    """Skip the automatic display of ``result`` in cell ``execution_count``.

    Used when that cell's progress output already shows the result (or with ``-q``); any
    later display (``r`` in another cell) shows it in full.  The hook is an instance
    attribute, so results never shown as they went display through the ordinary
    ``_repr_mimebundle_`` path.
    """

    def display_once() -> None:
        from IPython import get_ipython
        from IPython.display import display

        ip = get_ipython()
        if ip is not None and ip.execution_count == execution_count:
            return
        display(result._repr_mimebundle_(), raw=True)

    result._ipython_display_ = display_once  # type: ignore[attr-defined]
