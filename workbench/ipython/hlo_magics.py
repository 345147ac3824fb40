"""``%%hlo`` and ``%hlo``: what XLA compiled for a call.

Thin by design: parse flags, capture the call (:mod:`workbench.ipython.cell`), ask
the engine for the HLO report, hand it to the view.
"""

from __future__ import annotations

from IPython.core.error import UsageError
from IPython.core.magic import Magics, line_cell_magic, magics_class, no_var_expand
from IPython.core.magic_arguments import argument, magic_arguments

from workbench.api.errors import releases_arguments
from workbench.api.tracing import compile_report
from workbench.engine.hlo.report import (
    STAGES,
    HloOptionError,
    HloReport,
    fusion_for,
)
from workbench.ipython.args import (
    check_backend,
    check_transforms,
    parse_magic_line,
    trace_arguments,
)
from workbench.ipython.cell import (
    CellInterrupted,
    capture_call,
    interruptible,
    trace_for_compile,
)
from workbench.ipython.session import publish_result
from workbench.views.display import Display
from workbench.views.errors import WorkbenchError
from workbench.views.hlo import hlo_display


@magics_class
class HloMagics(Magics):
    """``%%hlo`` and ``%hlo``: what XLA compiled for a call, with a fusion diagram."""

    @no_var_expand  # the expression is Python, kept as typed (as %timeit does)
    @magic_arguments()
    @trace_arguments  # -t/--transform, --static-argnums, --static-argnames
    @argument(
        "--stage",
        default="compiled",
        choices=STAGES,
        help="compiled: optimized HLO after XLA's passes (default); "
        "lowered: StableHLO as JAX lowered it",
    )
    @argument(
        "--backend",
        default=None,
        metavar="NAME",
        help="compile for this backend (cpu, gpu, tpu) instead of the default one",
    )
    @argument(
        "--fusion",
        dest="fusion",
        action="store_true",
        default=None,
        help="draw the fusion diagram (default for --stage compiled)",
    )
    @argument(
        "--no-fusion", dest="fusion", action="store_false", help="text and summary only, no diagram"
    )
    @argument("--text", action="store_true", help="plain text only (JAX's own printing)")
    @line_cell_magic
    @releases_arguments(WorkbenchError, UsageError, CellInterrupted)
    def hlo(self, line: str = "", cell: str | None = None) -> Display[HloReport] | None:
        """Show what XLA made of a call instead of running it.

        Cell form: the cell runs, its last line must be a call ``f(...)``; that call
        is lowered and compiled (not executed).  Line form: ``%hlo [flags] f(x)``.
        """
        args, expr = parse_magic_line(
            self.hlo,
            line,
            needs=None if cell is not None else "a call, e.g. %hlo --stage lowered loss(w, x)",
        )
        backend = check_backend(args.backend)
        try:
            fusion_for(args.stage, args.fusion)  # bad combinations are refused before the cell runs
        except HloOptionError as exc:
            raise UsageError(str(exc)) from None
        check_transforms(args.transform)
        captured = capture_call(self.shell, line, cell, expr, "hlo")
        ins = trace_for_compile(captured, args, backend)
        with interruptible(f"while compiling {captured.call_text}", captured):
            rep = compile_report(ins, args.stage, args.fusion)
        # a cell magic's re-run is diffed against its last run (live mode)
        publish_result(self.shell, "hlo", rep, whole_cell=cell is not None)
        return hlo_display(rep, text_only=args.text)


__all__ = ["HloMagics"]
