"""``workbench.profile(fn, *args)``: the Python twin of ``%%jaxprof``; and
``workbench.profile_from_trace(trace, hlo, calls=...)``: the same display of a profile
recorded elsewhere.

Thin by design: the engine runs the compiled call under the profiler and attributes the
device time (:func:`~workbench.engine.profile.run.profile_call`); the view draws it.  A
failure (the call raises, the function cannot be jitted, a profiler is already running,
no temporary directory) is a short :class:`~workbench.views.errors.WorkbenchError` naming
the user's line, with the profiler stopped and its files removed by the engine.
"""

from __future__ import annotations

import os
from collections.abc import Callable
from typing import Any

from workbench.api.errors import releases_arguments, short_input_error
from workbench.api.tracing import caller_line
from workbench.engine.profile.from_trace import profile_recorded
from workbench.engine.profile.report import ProfileReport
from workbench.engine.profile.run import DEFAULT_CALLS, ProfileError, check_calls, profile_call
from workbench.views.display import Display
from workbench.views.errors import WorkbenchError
from workbench.views.profile import DEFAULT_TOP, profile_display


def check_top(top: object) -> int:
    if isinstance(top, bool) or not isinstance(top, int) or top < 1:
        raise ValueError(f"top must be a positive integer, got {top!r}")
    return top


@releases_arguments(WorkbenchError)
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
    try:
        rep = profile_call(
            fn,
            tuple(args),
            dict(kwargs),
            calls=n,
            tmp_root=tmp_dir,
            command_buffers=command_buffers,
        )
    except ProfileError as exc:
        raise WorkbenchError(exc.report).located(caller_line()) from None
    return profile_display(rep, text_only=text, top=top)


def profile_from_trace(
    trace: str | os.PathLike[str],
    hlo: str | os.PathLike[str],
    *,
    calls: int,
    top: int = DEFAULT_TOP,
    device_id: int = 0,
    device_kind: str | None = None,
    label: str | None = None,
    text: bool = False,
) -> Display[ProfileReport]:
    """Show a profile recorded elsewhere (another machine, a GPU) as ``profile`` shows one.

    ``trace``: the ``.xplane.pb`` file ``jax.profiler.trace(dir)`` wrote around the calls
    (or that directory); ``hlo``: the optimized HLO of the program that ran
    (``jax.jit(f).lower(*args).compile().as_text()``), as text or a path to a file;
    ``calls``: how many calls the trace holds.  The backend, device kind and JAX version
    come from the trace (``device_kind`` overrides the kind, which picks the peak figures);
    source lines are the recording's (their text is shown where the file exists here).
    A missing or unreadable file, or a trace in which the module never ran, is a short
    error.
    """
    try:
        if isinstance(calls, bool) or not isinstance(calls, int) or calls < 1:
            raise ValueError(
                f"calls (how many calls of the program the trace holds) must be "
                f"a positive integer, got {calls!r}"
            )
        check_calls(calls)
        check_top(top)
        if isinstance(device_id, bool) or not isinstance(device_id, int) or device_id < 0:
            raise ValueError(f"device_id must be a device number, got {device_id!r}")
    except (TypeError, ValueError) as exc:
        raise short_input_error(exc) from None
    failure: WorkbenchError | None = None
    try:
        rep = profile_recorded(
            trace, hlo, calls=calls, device_id=device_id, label=label, device_kind=device_kind
        )
    except ProfileError as exc:
        failure = WorkbenchError(exc.report).located(caller_line())
    if failure is not None:
        raise failure
    return profile_display(rep, text_only=text, top=top)


__all__ = ["profile", "profile_from_trace"]
