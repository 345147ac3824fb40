"""Error reports as a few readable lines (what, where in the user's code, JAX's hint), and
the exception that carries one."""

from __future__ import annotations

from workbench.engine.common.errors import ErrorReport
from workbench.engine.common.source import SourceLine
from workbench.views._html import source_label

_PHASES = {
    "parse": "in the cell",
    "cell": "running the cell",
    "arguments": "evaluating the call",
    "expression": "evaluating the expression",
    "layout": "reading the layout",
    "transform": "applying the transforms",
    "trace": "while tracing",
    "lower": "while lowering to StableHLO",
    "compile": "while compiling with XLA",
}

RED, BOLD, DIM, RESET = "\x1b[31m", "\x1b[1m", "\x1b[2m", "\x1b[0m"


def error_text(rep: ErrorReport, subject: str = "", color: bool = False) -> str:
    """A short multi-line message; ``color`` adds ANSI codes for notebook error output."""
    r, b, d, z = (RED, BOLD, DIM, RESET) if color else ("", "", "", "")
    phase = _PHASES.get(rep.phase, rep.phase)
    if subject and rep.phase in ("trace", "lower", "compile", "transform"):
        phase = f"{phase} {subject}"
    lines = [f"{r}{b}{rep.kind}{z} {d}({phase}){z}: {rep.summary}"]
    if rep.where is not None:
        label, _ = source_label(rep.where.file, rep.where.line)
        func = rep.where.function
        where = f"  at {label}" + ("" if func in ("<module>", "<cell>") else f", in {func}")
        if rep.where.text:
            where += f":  {rep.where.text}"
        lines.append(where)
    for h in rep.hints:
        lines.append(f"  {d}hint:{z} {h}")
    return "\n".join(lines)


class WorkbenchError(Exception):
    """A user-facing failure: ``str()`` is the short report, never JAX's sixty lines.

    What the Python twins (``workbench.jaxpr``/``hlo``/``sharding``) raise and what the
    magics' :class:`~workbench.ipython.cell.CellError` is; ``.report`` is the structured
    :class:`~workbench.engine.common.errors.ErrorReport`.  IPython calls
    ``_render_traceback_`` instead of printing a traceback.
    """

    def __init__(self, rep: ErrorReport, subject: str = "") -> None:
        super().__init__(rep.summary)
        self.report = rep
        self.subject = subject

    def located(self, where: SourceLine | None) -> WorkbenchError:
        """Point at ``where`` when the report names no line of the user's (JAX raised it)."""
        if self.report.where is None:
            self.report.where = where
        return self

    def _render_traceback_(self) -> list[str]:
        return error_text(self.report, self.subject, color=True).splitlines()

    def __str__(self) -> str:
        return error_text(self.report, self.subject)
