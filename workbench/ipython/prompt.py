"""Which cell is running: the prompt number the user sees, and JupyterLab's cell id.

Why one place decides: IPython's ``shell.execution_count`` is the running cell's number
in IPython < 9.8 but already the *next* one in 9.8 and later (it is incremented before
``pre_run_cell``), so reading it directly labelled prompt [7] "cell [8]".  The number
IPython itself reports for the cell is the ``ExecutionResult.execution_count`` of the
run in progress; while user code (a magic) runs, that result is on the display hook.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from IPython.core import release

from workbench.engine.common.source import CellLabel, register_functions

#: IPython 9.8 (ipython/ipython#15088) increments ``execution_count`` before the cell runs.
_COUNT_IS_NEXT = release.version_info[:2] >= (9, 8)


def prompt_number(shell: Any, *, before_run: bool = False) -> int | None:
    """The ``[N]`` of the cell that is running (None outside a shell).

    ``before_run``: called from a ``pre_run_cell`` hook, where the run's result is not yet
    on the display hook; the count is then read knowing when this IPython increments it.
    """
    if shell is None:
        return None
    result = getattr(getattr(shell, "displayhook", None), "exec_result", None)
    count = getattr(result, "execution_count", None)
    if isinstance(count, int):
        return count
    count = getattr(shell, "execution_count", None)
    if not isinstance(count, int):
        return None
    # A magic called outside run_cell (shell.run_line_magic) sees the count of the cell to
    # come in every version; a cell that has started sees its own count only before 9.8.
    return count - 1 if (before_run and _COUNT_IS_NEXT) else count


def current_cell_id(shell: Any) -> str | None:
    """JupyterLab's id of the running cell (the execute request's ``metadata.cellId``).

    Recorded with the cell's source so later features can link outputs to cells; None in
    a terminal, a plain ``InteractiveShell``, or a front end that sends no id.
    """
    kernel = getattr(shell, "kernel", None)
    get_parent = getattr(kernel, "get_parent", None)
    if get_parent is None:
        return None
    try:
        parent = get_parent()
    except Exception:  # a kernel with no request in flight
        return None
    metadata = parent.get("metadata") if isinstance(parent, dict) else None
    cell_id = metadata.get("cellId") if isinstance(metadata, dict) else None
    return cell_id if isinstance(cell_id, str) and cell_id else None


class CellIds:
    """Execution count -> JupyterLab cell id of the cells this shell ran.

    An ordinary cell's functions are compiled by the shell under its own file name, which
    the shell maps to the prompt number only; :meth:`pre_run_cell` (called first by the
    shell session's ``pre_run_cell`` hook) keeps the running cell's id beside its number,
    so a source line in such a cell can be linked to its cell by id as well.  Bounded: a
    long session forgets its oldest cells.
    """

    MAX_CELLS = 10_000

    def __init__(self, shell: Any) -> None:
        self.shell = shell
        self.ids: dict[int, str] = {}

    def pre_run_cell(self, info: Any = None) -> None:
        self._record(prompt_number(self.shell, before_run=True))

    def record_running(self) -> None:
        """Record the cell running now (the one that loads the extension: its
        ``pre_run_cell`` came before this hook was registered)."""
        self._record(prompt_number(self.shell))

    def _record(self, number: int | None) -> None:
        cell_id = current_cell_id(self.shell)
        if number is None or cell_id is None:
            return
        self.ids.pop(number, None)
        self.ids[number] = cell_id
        while len(self.ids) > self.MAX_CELLS:
            del self.ids[next(iter(self.ids))]


def shell_cell_labels(shell: Any, ids: CellIds | None = None) -> Callable[[str], CellLabel | None]:
    """Label files the shell compiled itself (a function defined in an ordinary cell) with
    their prompt number, as IPython's own tracebacks do ("Cell In[3]"): its compiler keeps
    file name -> number (``_filename_map``, in IPython since 8.0); and with the cell's id
    when ``ids`` recorded one for that number."""

    def lookup(file: str) -> CellLabel | None:
        numbers = getattr(getattr(shell, "compile", None), "_filename_map", None)
        number = numbers.get(file) if isinstance(numbers, dict) else None
        if not isinstance(number, int) or number <= 0:
            return None
        return CellLabel(number, ids.ids.get(number) if ids is not None else None)

    return lookup


def register_cell_functions(
    shell: Any, number: int | None, cell_id: str | None, seen: dict[str, int] | None = None
) -> None:
    """Remember which cell run defined each function the run left in the namespace.

    Why: ipykernel names a cell's file after a hash of its text, so two cells with the
    same text share one file, and a line's file says only "one of them" (IPython's map
    keeps the latest).  The function's code object is the run's own, so a profile of a
    function defined by the earlier cell can name that cell (``%%jaxprof`` keys its lines
    on the cell, not on the text).  Only functions compiled from this run's file are
    recorded (held weakly).

    ``seen`` (the session's, kept between cells: name -> ``id`` of the value the last
    pass saw) limits the pass to the names this run bound or re-bound: it runs after
    every cell, and a namespace of thousands of names would otherwise cost each cell a
    look at every one of them (~30 ms for 10,000 names).  An object can only reuse a
    seen ``id`` after the one seen under that name died, i.e. after the name was
    re-bound; a re-bound name that lands on the same ``id`` is left unrecorded, which
    only loses the nicety (the file's latest cell is named, as before).
    """
    numbers = getattr(getattr(shell, "compile", None), "_filename_map", None)
    if not isinstance(numbers, dict) or not isinstance(number, int) or number <= 0:
        return
    files = {f for f, n in numbers.items() if n == number}
    if not files:
        return
    ns = getattr(shell, "user_ns", {})
    now = dict(zip(ns.keys(), map(id, ns.values()), strict=True))
    if seen is None:
        values = list(ns.values())
    else:
        values = [ns[k] for k, i in now.items() if seen.get(k) != i]
        seen.clear()
        seen.update(now)
    register_functions(values, files, CellLabel(number, cell_id))


__all__ = [
    "CellIds",
    "current_cell_id",
    "prompt_number",
    "register_cell_functions",
    "shell_cell_labels",
]
