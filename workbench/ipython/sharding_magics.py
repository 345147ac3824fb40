"""``%sharding EXPR``: how a live ``jax.Array`` (or a pytree of them) is laid out.

Thin front door: evaluate the expression in the user's namespace (compiled under
a ``<workbench-cell-N>`` file name, so an error names the user's line), ask the
engine for the layouts, hand them to the view.  Bad input is one short
:class:`~workbench.ipython.cell.CellError`; the namespace is untouched.
"""

from __future__ import annotations

from IPython.core.error import UsageError
from IPython.core.magic import Magics, line_magic, magics_class, no_var_expand
from IPython.core.magic_arguments import argument, magic_arguments

from workbench.api.errors import releases_arguments
from workbench.api.sharding import sharding
from workbench.engine.common.errors import ErrorReport, report
from workbench.engine.common.source import SourceLine
from workbench.engine.sharding.layout import Layout
from workbench.ipython.args import parse_magic_line
from workbench.ipython.cell import CellError, CellInterrupted, interruptible, register_cell_source
from workbench.views.display import Display
from workbench.views.errors import WorkbenchError


@magics_class
class ShardingMagics(Magics):
    """``%sharding``: the mesh, PartitionSpec and a picture of the shards of live arrays."""

    @no_var_expand  # the expression is Python, kept as typed (as %timeit does)
    @magic_arguments()
    @argument("--text", action="store_true", help="plain text only (no picture)")
    @line_magic
    @releases_arguments(WorkbenchError, UsageError, CellInterrupted)
    def sharding(self, line: str = "") -> Display[list[Layout]]:
        """Show how EXPR (a jax.Array or a pytree of them) is sharded: ``%sharding [--text] EXPR``.

        EXPR is any Python expression after the flags, e.g. ``%sharding params``.
        """
        args, expr = parse_magic_line(
            self.sharding, line, needs="an expression, e.g. %sharding x or %sharding params"
        )
        text_only = args.text
        source = f"%sharding {line.strip()}"
        filename = register_cell_source(self.shell, source)
        where = SourceLine(filename, 1, "<cell>", source)
        try:
            code = compile(expr, filename, "eval")
        except SyntaxError as exc:
            exc.filename, exc.lineno, exc.text = filename, 1, source
            raise CellError(report(exc, "parse")) from None
        try:
            shell = self.shell
            assert shell is not None  # a registered magic always has its shell
            with interruptible(f"evaluating {expr.strip()}"):
                value = eval(code, shell.user_global_ns, shell.user_ns)
        except Exception as exc:
            rep = report(exc, "expression")
            rep.where = rep.where or where
            raise CellError(rep) from None
        try:
            shown = sharding(value, text=text_only)
            shown._repr_mimebundle_()  # render now: a view failure is a message here, too
        except WorkbenchError as exc:
            exc.report.where = where
            if exc.report.phase == "arguments":  # the twin's own phase: not a call here
                exc.report.phase = "layout"
            raise CellError(exc.report) from None
        except Exception as exc:  # anything else the layout code trips on: one short message
            said = str(exc).strip().splitlines()[0] if str(exc).strip() else "no message"
            raise CellError(
                ErrorReport(
                    phase="layout",
                    kind=type(exc).__name__,
                    summary=f"cannot show the layout of {expr.strip()}: {said}",
                    where=where,
                )
            ) from None
        return shown


__all__ = ["ShardingMagics"]
