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
        return cls(file=str(d.get("file", "")), line=int(d.get("line", 0)),
                   function=str(d.get("function", "")), text=d.get("text"),
                   column=d.get("column"))


__all__ = ["SourceLine"]
