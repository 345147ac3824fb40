"""``%%hlo`` and ``%hlo``: what XLA compiled for a call.

Thin by design: parse flags, capture the call (:mod:`workbench.ipython.cell`), ask
the engine for the HLO report, hand it to the view.
"""

from __future__ import annotations

from IPython.core.error import UsageError
from IPython.core.magic import Magics, line_cell_magic, magics_class
from IPython.core.magic_arguments import argument, magic_arguments

from workbench.engine.common.errors import report
from workbench.engine.hlo.report import (
    STAGES,
    HloOptionError,
    HloReport,
    build_hlo_report,
    fusion_for,
)
from workbench.ipython.args import _ints, _names, check_backend, check_transforms, magic_args
from workbench.ipython.cell import CellError, _at_call, capture_call, trace_captured
from workbench.views.display import Display
from workbench.views.hlo import hlo_display

_HLO_VALUE_FLAGS = {"-t", "--transform", "--static-argnums", "--static-argnames", "--stage",
                    "--backend"}
_HLO_BOOL_FLAGS = {"--text", "--fusion", "--no-fusion"}
_HLO_USAGE = ("-t/--transform NAME, --static-argnums, --static-argnames, --stage "
              "compiled|lowered, --backend NAME, --fusion/--no-fusion, --text")


@magics_class
class HloMagics(Magics):
    """``%%hlo`` and ``%hlo``: what XLA compiled for a call, with a fusion diagram."""

    @magic_arguments()
    @argument("-t", "--transform", action="append", default=[], metavar="NAME",
              help="transform to apply first, innermost first; repeatable (as in %%jaxpr)")
    @argument("--static-argnums", default=None, help="positions of static arguments, e.g. 1,2")
    @argument("--static-argnames", default=None, help="names of static keyword arguments")
    @argument("--stage", default="compiled", choices=STAGES,
              help="compiled: optimized HLO after XLA's passes (default); "
                   "lowered: StableHLO as JAX lowered it")
    @argument("--backend", default=None,
              help="compile for this backend (cpu, gpu, tpu) instead of the default one")
    @argument("--fusion", dest="fusion", action="store_true", default=None,
              help="draw the fusion diagram (default for --stage compiled)")
    @argument("--no-fusion", dest="fusion", action="store_false",
              help="text and summary only, no diagram")
    @argument("--text", action="store_true", help="plain text only (JAX's own printing)")
    @line_cell_magic
    def hlo(self, line: str = "", cell: str | None = None) -> Display[HloReport] | None:
        """Show what XLA made of a call instead of running it.

        Cell form: the cell runs, its last line must be a call ``f(...)``; that call
        is lowered and compiled (not executed).  Line form: ``%hlo f(x)``.
        """
        args, expr = magic_args(self.hlo, line, cell, _HLO_VALUE_FLAGS, _HLO_BOOL_FLAGS,
                                "%hlo --stage lowered loss(w, x)", _HLO_USAGE)
        backend = check_backend(args.backend)
        try:
            fusion_for(args.stage, args.fusion)  # bad combinations are refused before the cell runs
        except HloOptionError as exc:
            raise UsageError(str(exc)) from None
        check_transforms(args.transform)
        captured = capture_call(self.shell, line, cell, expr, "hlo")
        (ins,) = trace_captured(captured, args.transform, _ints(args.static_argnums),
                                _names(args.static_argnames), compare=False, backend=backend)

        try:
            rep = build_hlo_report(ins, args.stage, fusion=args.fusion)
        except Exception as exc:
            raise CellError(_at_call(report(exc, "compile"), captured),
                            subject=ins.label) from None
        return hlo_display(rep, text_only=args.text)


__all__ = ["HloMagics"]
