"""``%%jaxpr`` and ``%jaxpr``: the jaxpr of a call under any composition of transforms.

Thin by design: parse flags, capture the call (:mod:`workbench.ipython.cell`), ask
the engine for inspections, hand them to the view.  Failures become a short
:class:`~workbench.ipython.cell.CellError` (or IPython's ``UsageError`` for bad
flags) instead of a long traceback; the namespace is left as a normal run would.
"""

from __future__ import annotations

from typing import Any

from IPython.core.error import UsageError
from IPython.core.magic import Magics, line_cell_magic, magics_class, no_var_expand
from IPython.core.magic_arguments import argument, magic_arguments

from workbench.api.errors import releases_arguments
from workbench.ipython.args import (
    argnames,
    argnums,
    check_transforms,
    parse_magic_line,
    trace_arguments,
)
from workbench.ipython.cell import CellInterrupted, capture_call, trace_captured
from workbench.ipython.session import publish_result
from workbench.views.display import Display
from workbench.views.errors import WorkbenchError
from workbench.views.jaxpr import jaxpr_display


@magics_class
class JaxprMagics(Magics):
    """``%%jaxpr`` and ``%jaxpr``: the jaxpr of a call under any composition of transforms."""

    @no_var_expand  # the expression is Python, kept as typed (as %timeit does)
    @magic_arguments()
    @trace_arguments  # -t/--transform, --static-argnums, --static-argnames
    @argument("--text", action="store_true", help="plain text only (JAX's own printing)")
    @argument(
        "--compare",
        action="store_true",
        help="show the function and each successive transform side by side "
        "(a stage inside vmap at one example)",
    )
    @argument(
        "--depth",
        type=int,
        default=1,
        metavar="N",
        help="how many levels of nested jaxprs start open (default 1)",
    )
    @line_cell_magic
    @releases_arguments(WorkbenchError, UsageError, CellInterrupted)
    def jaxpr(self, line: str = "", cell: str | None = None) -> Display[Any] | None:
        """Show the jaxpr of a call instead of running it.

        Cell form: the cell runs, its last line must be a call ``f(...)``; that call
        is traced (not executed) and its jaxpr shown.  Line form: ``%jaxpr [flags] f(x)``.
        Quote a transform with spaces: ``-t "vmap(in_axes=(None, 0))"``.
        """
        args, expr = parse_magic_line(
            self.jaxpr,
            line,
            needs=None if cell is not None else "a call, e.g. %jaxpr -t grad loss(w, x)",
        )
        if args.depth < 0:
            raise UsageError("--depth must be 0 or more")
        check_transforms(args.transform)
        captured = capture_call(self.shell, line, cell, expr, "jaxpr")
        stages = trace_captured(
            captured,
            args.transform,
            argnums(args.static_argnums),
            argnames(args.static_argnames),
            compare=args.compare,
        )
        if stages:  # a cell magic's re-run is diffed against its last run (live mode)
            publish_result(self.shell, "jaxpr", stages[-1], whole_cell=cell is not None)
        return jaxpr_display(stages, compare=args.compare, depth=args.depth, text_only=args.text)


__all__ = ["JaxprMagics"]
