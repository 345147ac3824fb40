"""``%jaxmem`` (who holds the live device arrays) and ``%%jaxmem CALL`` (a compiled
program's memory at its peak).

Thin by design: parse flags; the line form asks :mod:`workbench.api.memory` for the
report (and runs the free actions asked for); the cell form captures the call with the
cell rules of ``%%hlo`` (:mod:`workbench.ipython.cell`) and asks the engine for the
program's memory.  Neither keeps an array: the records hold numbers and names only.
"""

from __future__ import annotations

from IPython.core.error import UsageError
from IPython.core.magic import Magics, line_cell_magic, magics_class, no_var_expand
from IPython.core.magic_arguments import argument, magic_arguments

from workbench.api.errors import releases_arguments
from workbench.api.memory import live_report
from workbench.engine.common.errors import report
from workbench.engine.memory.owners import BUDGET_S, LiveMemory
from workbench.engine.memory.program import ProgramMemory, build_program_memory
from workbench.ipython.args import (
    argnums,
    check_backend,
    check_transforms,
    parse_magic_line,
    trace_arguments,
)
from workbench.ipython.cell import (
    CellError,
    CellInterrupted,
    at_call,
    capture_call,
    interruptible,
    trace_for_compile,
)
from workbench.views.display import Display
from workbench.views.errors import WorkbenchError
from workbench.views.memory import live_display, program_display


@magics_class
class MemoryMagics(Magics):
    """``%jaxmem``: who holds device memory; ``%%jaxmem``: a compiled program's peak."""

    @no_var_expand
    @magic_arguments()
    @trace_arguments  # -t/--transform, --static-argnums, --static-argnames (cell form)
    @argument(
        "--free-history",
        action="store_true",
        help="first clear the output history (Out, _, __, ___) and say how many bytes that freed",
    )
    @argument(
        "--free-traceback",
        action="store_true",
        help="first forget the last exception (sys.last_traceback: its frames keep the failed "
        "call's locals alive) and say how many bytes that freed",
    )
    @argument(
        "--budget",
        type=float,
        default=BUDGET_S,
        metavar="SECONDS",
        help=f"time the walks for owners may take (default {BUDGET_S:g} s)",
    )
    @argument(
        "--backend",
        default=None,
        metavar="NAME",
        help="cell form: compile for this backend (cpu, gpu, tpu) instead of the default one",
    )
    @argument("--text", action="store_true", help="plain text only")
    @line_cell_magic
    @releases_arguments(WorkbenchError, UsageError, CellInterrupted)
    def jaxmem(
        self, line: str = "", cell: str | None = None
    ) -> Display[LiveMemory] | Display[ProgramMemory]:
        """Line form ``%jaxmem``: every live device array grouped by what keeps it alive
        (names, attributes, closures, the output history, the last exception's traceback,
        module globals, nothing visible), largest first, with bytes per device.

        Cell form ``%%jaxmem``: the cell runs, its last line must be a call ``f(...)``; that
        call is compiled (not run) and its memory at the peak shown from XLA's buffer
        assignment, with the buffers live then, donation and checkpoint advice.
        """
        args, _ = parse_magic_line(self.jaxmem, line)
        if args.budget <= 0:
            raise UsageError(f"--budget needs a positive number of seconds, got {args.budget:g}")
        if cell is None:
            if args.transform or args.static_argnums or args.static_argnames or args.backend:
                raise UsageError(
                    "-t, --static-argnums, --static-argnames and --backend are for the cell "
                    "form, %%jaxmem, whose last line is the call to compile"
                )
            with interruptible("while walking the live arrays"):
                rep = live_report(
                    self.shell,
                    free_hist=args.free_history,
                    free_tb=args.free_traceback,
                    budget_s=args.budget,
                )
            return live_display(rep, text_only=args.text)
        if args.free_history or args.free_traceback:
            raise UsageError("--free-history and --free-traceback are for the line form, %jaxmem")
        backend = check_backend(args.backend)
        check_transforms(args.transform)
        captured = capture_call(self.shell, line, cell, "", "jaxmem")
        ins = trace_for_compile(captured, args, backend)
        try:
            with interruptible(f"while compiling {captured.call_text}"):
                prog = build_program_memory(ins, argnums(args.static_argnums))
        except CellInterrupted:
            raise
        except Exception as exc:
            raise CellError(at_call(report(exc, "compile"), captured), subject=ins.label) from None
        return program_display(prog, text_only=args.text)


__all__ = ["MemoryMagics"]
