"""IPython front door: ``%jaxbench f(x)`` and ``%%jaxbench`` (set-up lines, last line the call).

Thin by design: parse flags, capture the call with :mod:`workbench.ipython.cell` (the
cell runs in the user's namespace; its last line's function and arguments are
evaluated but the call is handed to the benchmark instead of run once), then
call :func:`workbench.bench`.  Bad flags are IPython ``UsageError``s; a failing
set-up line or argument is a short :class:`~workbench.ipython.cell.CellError`.
"""

from __future__ import annotations

from IPython.core.error import UsageError
from IPython.core.magic import Magics, line_cell_magic, magics_class, no_var_expand
from IPython.core.magic_arguments import argument, magic_arguments
from IPython.display import display

from workbench.api.bench import bench_call, hide_in_execution
from workbench.api.errors import releases_arguments
from workbench.engine.bench.result import Benchmark
from workbench.engine.bench.runner import DEFAULT_BUDGET_S, DEFAULT_PRECISION, check_settings
from workbench.engine.bench.sampler import BenchInputError
from workbench.ipython.args import parse_magic_line
from workbench.ipython.cell import CellError, CellInterrupted, capture_call
from workbench.ipython.session import publish_result
from workbench.views.display import Display
from workbench.views.errors import WorkbenchError


@magics_class
class BenchMagics(Magics):
    """``%jaxbench`` / ``%%jaxbench``: time a JAX call correctly, showing its progress."""

    @no_var_expand  # the expression is Python, kept as typed (as %timeit does)
    @magic_arguments()
    @argument(
        "-n",
        type=int,
        default=None,
        metavar="N",
        help="calls per sample (default: autorange so a sample is long enough)",
    )
    @argument(
        "-r",
        type=int,
        default=None,
        metavar="R",
        help="number of samples (default: until the budget or the precision is met)",
    )
    @argument(
        "--budget",
        type=float,
        default=DEFAULT_BUDGET_S,
        metavar="SECONDS",
        help=f"time for warm-up and sampling, compiles excluded (default {DEFAULT_BUDGET_S:g})",
    )
    @argument(
        "--precision",
        type=float,
        default=DEFAULT_PRECISION,
        metavar="FRACTION",
        help="stop early once the median's 95%% CI is within ± this fraction "
        "(default 0.01; 0 uses the whole budget)",
    )
    @argument(
        "--no-roofline",
        action="store_true",
        help="skip the cost analysis (achieved FLOP/s and bytes/s)",
    )
    @argument(
        "--allow-mutation",
        action="store_true",
        help="time on your own Flax NNX objects (the calls change them) instead of on "
        "copies, e.g. when a copy does not fit in device memory",
    )
    @argument("--text", action="store_true", help="plain text output only")
    @argument(
        "-q",
        "--quiet",
        action="store_true",
        help="return the result without displaying it (like %%timeit -o -q)",
    )
    @line_cell_magic
    @releases_arguments(WorkbenchError, UsageError, CellInterrupted)
    def jaxbench(self, line: str = "", cell: str | None = None) -> Display[Benchmark] | None:
        """Benchmark a call: ``%jaxbench f(x)`` or a cell whose last line is the call.

        Every call blocks on all its outputs; the first call (compile) is reported
        apart; samples are autoranged within ``--budget``.  The result is returned
        (``r = %jaxbench f(x)``) with ``.to_json()``, ``.to_dataframe()``.
        """
        args, expr = parse_magic_line(
            self.jaxbench, line, needs=None if cell is not None else "a call, e.g. %jaxbench f(x)"
        )
        try:  # settings are checked before the cell runs
            check_settings(args.budget, args.n, args.r, args.precision)
        except BenchInputError as exc:
            raise UsageError(str(exc)) from None
        captured = capture_call(self.shell, line, cell, expr, "jaxbench")
        result = bench_call(
            captured.fn,
            captured.args,
            captured.kwargs,
            budget=args.budget,
            number=args.n,
            repeat=args.r,
            precision=args.precision,
            roofline=not args.no_roofline,
            text=args.text,
            label=captured.call_text,
            progress=False if args.quiet else None,
            allow_mutation=args.allow_mutation,
        )
        publish_result(self.shell, "bench", result.record)  # e.g. the side panel's timings
        shown = "_ipython_display_" in vars(result)  # the progress output ended showing it
        if args.quiet:
            shell = self.shell
            assert shell is not None  # a registered magic always has its shell
            hide_in_execution(result, shell.execution_count)
        failed = [(m.variant, m.error) for m in result.record.measurements if m.error is not None]
        if failed:  # the cell fails, as any failing cell does (Run All stops, nbclient fails)
            if not shown and not args.quiet and any(m.ok for m in result.record.measurements):
                display(result)  # the variants that did run are worth seeing
            variant, error = failed[0]
            raise CellError(error, subject=variant)
        if result.record.interrupted and not result.record.ok:
            # stopped before any sample: nothing to keep, so it is an interruption (Run All
            # stops); with samples, the result is shown and kept (the interrupt button's use)
            raise CellInterrupted(f"interrupted before any sample of {captured.call_text}")
        return result


__all__ = ["BenchMagics"]
