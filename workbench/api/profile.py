"""``workbench.profile(fn, *args)``: the Python twin of ``%%jaxprof``.

Thin by design: the engine runs the compiled call under the profiler and attributes the
device time (:func:`~workbench.engine.profile.run.profile_call`); the view draws it.  A
failure (the call raises, the function cannot be jitted, a profiler is already running,
no temporary directory) is a short :class:`~workbench.views.errors.WorkbenchError` naming
the user's line, with the profiler stopped and its files removed by the engine.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from workbench.api._errors import short_input_error
from workbench.api._trace import caller_line
from workbench.engine.profile.record import ProfileReport
from workbench.engine.profile.run import DEFAULT_CALLS, ProfileError, check_calls, profile_call
from workbench.views.display import Display
from workbench.views.errors import WorkbenchError
from workbench.views.profile import DEFAULT_TOP, profile_display


def check_top(top: object) -> int:
    if isinstance(top, bool) or not isinstance(top, int) or top < 1:
        raise ValueError(f"top must be a positive integer, got {top!r}")
    return top


def profile(
    fn: Callable[..., Any],
    *args: Any,
    n: int = DEFAULT_CALLS,
    top: int = DEFAULT_TOP,
    command_buffers: bool = True,
    text: bool = False,
    tmp_dir: str | None = None,
    **kwargs: Any,
) -> Display[ProfileReport]:
    """Measure where ``fn(*args, **kwargs)`` spends its device time, line by line.

    Compiles the call (a ``jax.jit`` function keeps its settings; anything else is jitted),
    makes one warm-up call, then ``n`` calls under ``jax.profiler`` (each blocking on all
    its outputs) and attributes the device time to HLO instructions, fusions, jaxpr
    primitives and your source lines (medians over the calls).  ``top``: rows of the
    instructions table; ``command_buffers=False`` (GPU) profiles a copy compiled without
    XLA's command buffers; ``tmp_dir``: where the trace is written (then removed).
    ``.report`` is the engine's record.  The options are keyword-only; any other keyword
    goes to ``fn``.
    """
    try:
        check_calls(n)
        check_top(top)
        if not callable(fn):
            raise TypeError(f"profile() needs a function, got a {type(fn).__name__}")
    except (TypeError, ValueError) as exc:
        raise short_input_error(exc) from None
    failure: WorkbenchError | None = None
    try:
        rep = profile_call(fn, tuple(args), dict(kwargs), calls=n, tmp_root=tmp_dir,
                           command_buffers=command_buffers)
    except ProfileError as exc:
        failure = WorkbenchError(exc.report).located(caller_line())
    if failure is not None:
        # a notebook keeps the last error until the next one: raised outside the except
        # clause it chains nothing (the engine's frames hold the arguments), and this
        # frame, which its traceback keeps, lets go of them first
        del fn, args, kwargs
        raise failure
    return profile_display(rep, text_only=text, top=top)


__all__ = ["profile"]
