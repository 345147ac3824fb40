"""``%%jaxprof`` and ``%jaxprof``: measured device time of a call, line by line; with
``--compile``, where one real compile of the call spends its time.

Thin by design: parse flags, capture the call (:mod:`workbench.ipython.cell`: set-up lines
run, the last line's function and arguments are evaluated), hand it to the engine's
profiler and the result to the view.  A failure is a short
:class:`~workbench.ipython.cell.CellError` pointing at the user's line; the namespace the
set-up lines built is kept, the profiler is stopped and its files removed.
"""

from __future__ import annotations

from typing import Any

from IPython.core.error import UsageError
from IPython.core.magic import Magics, line_cell_magic, magics_class, no_var_expand
from IPython.core.magic_arguments import argument, magic_arguments

from workbench.api.errors import releases_arguments
from workbench.engine.compile_time.report import CompileTimeReport
from workbench.engine.compile_time.run import compile_time_profile, fresh_compile_context
from workbench.engine.profile.report import ProfileReport
from workbench.engine.profile.run import DEFAULT_CALLS, check_calls, check_trace_dir, profile_call
from workbench.ipython.args import check_transforms, parse_magic_line, trace_arguments
from workbench.ipython.cell import (
    CapturedCall,
    CellInterrupted,
    capture_call,
    interruptible,
    trace_for_compile,
)
from workbench.views.compile_time import compile_time_display
from workbench.views.display import Display
from workbench.views.errors import WorkbenchError
from workbench.views.profile import DEFAULT_TOP, profile_display


@magics_class
class ProfileMagics(Magics):
    """``%%jaxprof`` / ``%jaxprof``: where a compiled call spends its device time."""

    @no_var_expand  # the expression is Python, kept as typed (as %timeit does)
    @magic_arguments()
    @argument(
        "-n",
        type=int,
        default=DEFAULT_CALLS,
        metavar="N",
        help=f"profiled calls after one warm-up call (default {DEFAULT_CALLS}); "
        "figures are medians over them",
    )
    @argument(
        "--top",
        type=int,
        default=DEFAULT_TOP,
        metavar="K",
        help=f"rows of the instructions table (default {DEFAULT_TOP})",
    )
    @argument(
        "--no-command-buffer",
        action="store_true",
        help="GPU: profile a copy compiled without XLA's command buffers (CUDA "
        "graphs), so every kernel event names its instruction",
    )
    @argument(
        "--compile",
        dest="compile_time",
        action="store_true",
        help="instead of running the call, compile it once for real (no cache) under the "
        "profiler: trace, lower and XLA times, XLA's passes and phases, program size "
        "per source line",
    )
    @trace_arguments  # -t/--transform, --static-argnums, --static-argnames (with --compile)
    @argument(
        "--trace-dir",
        default=None,
        metavar="DIR",
        help="also save the profiler's trace in DIR, to open in XProf or Perfetto",
    )
    @argument("--text", action="store_true", help="plain text output only")
    @line_cell_magic
    @releases_arguments(WorkbenchError, UsageError, CellInterrupted)
    def jaxprof(
        self, line: str = "", cell: str | None = None
    ) -> Display[ProfileReport] | Display[CompileTimeReport]:
        """Profile a call: ``%jaxprof f(x)`` or a cell whose last line is the call.

        The call is compiled, run once to warm up, then ``-n`` times under
        ``jax.profiler`` (each blocking on all its outputs); device time is attributed to
        HLO instructions, fusions, jaxpr primitives and the cell's lines.  With
        ``--compile`` the call is not run: it is traced afresh and compiled once, and the
        compile's time is split into XLA's passes and phases.
        """
        args, expr = parse_magic_line(
            self.jaxprof, line, needs=None if cell is not None else "a call, e.g. %jaxprof f(x)"
        )
        try:  # settings are checked before the cell runs
            check_calls(args.n)
        except ValueError as exc:
            raise UsageError(f"-n: {exc}") from None
        if args.top < 1:
            raise UsageError(f"--top must be a positive integer, got {args.top}")
        traced_flags = args.transform or args.static_argnums or args.static_argnames
        if traced_flags and not args.compile_time:
            raise UsageError(
                "-t, --static-argnums and --static-argnames go with --compile (the run "
                "profile runs the call as written)"
            )
        check_transforms(args.transform)
        trace = None
        if args.trace_dir is not None:
            try:
                trace = check_trace_dir(args.trace_dir)
            except ValueError as exc:
                raise UsageError(f"--trace-dir: {exc}") from None
        try:
            return self._profile(line, cell, expr, args, trace.path if trace else None)
        except BaseException:
            if trace is not None:  # a failed run leaves behind nothing it made
                trace.remove_made()
            raise

    def _profile(
        self, line: str, cell: str | None, expr: str, args: Any, trace_dir: str | None
    ) -> Display[ProfileReport] | Display[CompileTimeReport]:
        """The run (or, with ``--compile``, the compile) profile once the flags are checked."""
        captured = capture_call(self.shell, line, cell, expr, "jaxprof")
        if args.compile_time:
            return self._compile_time(captured, args, cell is not None, trace_dir)
        with interruptible(f"while profiling {captured.call_text}", captured):
            rep = profile_call(
                captured.fn,
                captured.args,
                captured.kwargs,
                calls=args.n,
                command_buffers=not args.no_command_buffer,
                label=captured.call_text,
                inspected_by="%%jaxprof" if cell is not None else "%jaxprof",
                trace_dir=trace_dir,
            )
        return profile_display(rep, text_only=args.text, top=args.top)

    def _compile_time(
        self, captured: CapturedCall, args: Any, is_cell: bool, trace_dir: str | None
    ) -> Display[CompileTimeReport]:
        """``--compile``: a fresh scoped trace (as ``%%hlo`` takes it), compiled once."""
        with fresh_compile_context():  # no cache of JAX's serves any stage
            ins = trace_for_compile(captured, args)
        with interruptible(f"while compiling {captured.call_text}", captured):
            rep = compile_time_profile(
                ins,
                inspected_by="%%jaxprof --compile" if is_cell else "%jaxprof --compile",
                trace_dir=trace_dir,
            )
        return compile_time_display(rep, text_only=args.text, top=args.top)


__all__ = ["ProfileMagics"]
