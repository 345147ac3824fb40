"""One record for "this line of the user's source": file, line, and what else is known.

Every feature points back at the user's code: an HLO instruction's metadata, a
jaxpr equation's source info, the user frame of an error, a collective inserted
by the partitioner.  They all carry the same thing, so they share one record and
the views draw it one way.  What a source knows varies (JAX gives a column for a
jaxpr equation, a traceback gives the line's text, HLO metadata gives neither),
so ``column`` and ``text`` are ``None`` when not known and are then left out of
:meth:`SourceLine.to_dict`: each payload keeps exactly the fields it had.
"""

from __future__ import annotations

import types
import weakref
from collections.abc import Callable, Container, Iterable
from dataclasses import dataclass
from typing import Any


@dataclass(slots=True)
class SourceLine:
    """``file:line`` in the user's code, with the function, the line's text and column if known.

    The positional order (file, line, function, text) is that of a traceback entry;
    pass ``column`` by keyword.
    """

    file: str
    line: int
    function: str = ""
    text: str | None = None
    column: int | None = None

    @property
    def key(self) -> tuple[str, int]:
        """What makes two records the same line (function, text and column aside)."""
        return (self.file, self.line)

    def to_dict(self) -> dict[str, Any]:
        d: dict[str, Any] = {"file": self.file, "line": self.line, "function": self.function}
        if self.column is not None:
            d["column"] = self.column
        if self.text is not None:
            d["text"] = self.text
        return d

    @classmethod
    def from_dict(cls, d: dict[str, Any]) -> SourceLine:
        return cls(
            file=str(d.get("file", "")),
            line=int(d.get("line", 0)),
            function=str(d.get("function", "")),
            text=d.get("text"),
            column=d.get("column"),
        )


@dataclass(frozen=True, slots=True)
class CellLabel:
    """Which notebook cell a source file is: the prompt number the user sees and, in
    JupyterLab, the cell's id (so a front end can link an output to its cell)."""

    number: int | None
    cell_id: str | None = None


#: file name -> cell, for the files the magics compile a cell's source under
_CELLS: dict[str, CellLabel] = {}
_MAX_CELLS = 10_000  # a long session: forget the oldest cells, not the memory
#: the front doors' look-ups for files they did not register (IPython's own cell files):
#: one per shell that loaded the workbench, asked in the order they were added; a tuple,
#: replaced whole, so a reader never sees it change under it
_resolvers: tuple[Callable[[str], CellLabel | None], ...] = ()


def register_cell(file: str, label: CellLabel) -> None:
    """Record that ``file`` holds the source of cell ``label``."""
    _CELLS.pop(file, None)
    _CELLS[file] = label
    while len(_CELLS) > _MAX_CELLS:
        del _CELLS[next(iter(_CELLS))]


#: id(code object) -> (weak reference to it, the cell run that created it): a shell that names
#: a cell's file after its text (ipykernel: ``/tmp/ipykernel_<pid>/<hash>.py``) gives two
#: cells with identical text one file, and the file alone cannot say which run defined a
#: function; its code object can (each run compiles its own)
_CODES: dict[int, tuple[Any, CellLabel]] = {}


def register_code(code: Any, label: CellLabel) -> None:
    """Record that the code object ``code`` was compiled by the run of cell ``label``
    (held weakly; forgotten when the code object goes)."""
    key = id(code)
    known = _CODES.get(key)
    if known is not None and known[0]() is code:
        return  # the first run that compiled it is the one that defined it

    def gone(_ref: Any, key: int = key) -> None:
        entry = _CODES.get(key)
        if entry is not None and entry[0] is _ref:
            del _CODES[key]

    try:
        ref = weakref.ref(code, gone)
    except TypeError:
        return
    _CODES[key] = (ref, label)
    while len(_CODES) > _MAX_CELLS:
        del _CODES[next(iter(_CODES))]


def register_functions(values: Iterable[Any], files: Container[str], label: CellLabel) -> None:
    """:func:`register_code` for every function among ``values`` whose code was compiled
    from one of ``files`` (a cell run's), looked for through a ``jax.jit`` function and up
    to four ``functools.wraps`` layers (``nnx.jit``'s wrapper)."""
    from workbench.engine._jax_compat.jit import is_jitted

    for value in values:
        fun = getattr(value, "__wrapped__", None) if is_jitted(value) else value
        for _ in range(4):
            if not isinstance(fun, types.FunctionType):
                break
            if fun.__code__.co_filename in files:
                register_code(fun.__code__, label)
                break
            fun = fun.__dict__.get("__wrapped__")


def code_label(code: Any) -> CellLabel | None:
    """The cell run that compiled ``code`` (see :func:`register_code`), or None."""
    entry = _CODES.get(id(code))
    if entry is None or entry[0]() is not code:
        return None
    return entry[1]


def add_cell_resolver(resolver: Callable[[str], CellLabel | None]) -> None:
    """Add how to label files compiled by a shell itself, e.g. a function defined in an
    ordinary cell (the engine cannot ask the shell); each shell adds its own."""
    global _resolvers
    if resolver not in _resolvers:
        _resolvers = (*_resolvers, resolver)


def remove_cell_resolver(resolver: Callable[[str], CellLabel | None]) -> None:
    """Remove a resolver :func:`add_cell_resolver` added (an unknown one is ignored)."""
    global _resolvers
    _resolvers = tuple(r for r in _resolvers if r != resolver)


def cell_label(file: str) -> CellLabel | None:
    """The cell ``file`` is the source of, or None when it is not a known cell."""
    label = _CELLS.get(file)
    for resolver in _resolvers if label is None else ():
        try:
            label = resolver(file)
        except Exception:  # a label is a nicety; never fail a view for it
            label = None
        if label is not None:
            break
    return label


__all__ = [
    "CellLabel",
    "SourceLine",
    "add_cell_resolver",
    "cell_label",
    "code_label",
    "register_cell",
    "register_code",
    "register_functions",
    "remove_cell_resolver",
]
