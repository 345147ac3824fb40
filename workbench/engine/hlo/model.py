"""The data model of an XLA HLO module: computations, instructions, their sources.

:mod:`workbench.engine.hlo.parser` builds it from the text ``Compiled.as_text()``
prints; the graph builder, the report and the views read it.  Derived facts
(result bytes, the jaxpr primitive an instruction came from, a computation's root)
are properties here, so every reader computes them the same way.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from workbench.engine.common.source import SourceLine
from workbench.engine.hlo.shapes import ArrayShape, parse_shape, strip_layout

COLLECTIVE_OPCODES = ("all-reduce", "all-gather", "reduce-scatter", "all-to-all",
                      "collective-permute", "collective-broadcast", "ragged-all-to-all")

#: attributes whose value names computations the instruction calls
CALL_ATTRS = ("calls", "to_apply", "condition", "body", "branch_computations",
              "true_computation", "false_computation", "called_computations")


class HloParseError(ValueError):
    """The text is not an HLO module we can read (no entry computation)."""


@dataclass(slots=True)
class HloInstruction:
    name: str
    opcode: str
    shape_text: str
    operands: list[str]
    attrs: dict[str, str]
    is_root: bool = False
    op_name: str = ""
    source: SourceLine | None = None
    called: list[str] = field(default_factory=list)
    line_no: int = 0  # 1-based line of the module text
    literal: str = ""  # constant(...) contents, or parameter(N)'s number
    _bytes: int = field(default=-1, repr=False, compare=False)
    _short: str = field(default="", repr=False, compare=False)

    @property
    def shape(self) -> list[ArrayShape]:
        return parse_shape(self.shape_text)

    @property
    def bytes(self) -> int:
        """Bytes of the result (all tuple leaves), computed once: graphs ask a lot."""
        if self._bytes < 0:
            self._bytes = sum(a.bytes for a in self.shape)
        return self._bytes

    @property
    def short_shape(self) -> str:
        if not self._short:
            self._short = strip_layout(self.shape_text)
        return self._short

    @property
    def primitive(self) -> str:
        """The jaxpr primitive named at the end of ``op_name`` (``jit(f)/jvp()/mul`` -> mul)."""
        return primitive_of(self.op_name)

    @property
    def fusion_kind(self) -> str:
        return self.attrs.get("kind", "")

    def to_dict(self) -> dict[str, Any]:
        d: dict[str, Any] = {"name": self.name, "opcode": self.opcode,
                             "shape": self.short_shape, "bytes": self.bytes,
                             "operands": self.operands, "line": self.line_no}
        if self.is_root:
            d["root"] = True
        if self.called:
            d["called"] = self.called
        keep = {k: v for k, v in self.attrs.items() if k != "metadata" and len(v) <= 400}
        if keep:
            d["attrs"] = keep
        if self.op_name:
            d["op_name"] = self.op_name
        if self.source is not None:
            d["source"] = self.source.to_dict()
        return d


def primitive_of(op_name: str) -> str:
    if not op_name:
        return ""
    last = op_name.rstrip("/").rsplit("/", 1)[-1]
    return last.split("(", 1)[0] or last


@dataclass(slots=True)
class HloComputation:
    name: str
    is_entry: bool
    params_text: str
    result_text: str
    instructions: list[HloInstruction] = field(default_factory=list)
    first_line: int = 0
    last_line: int = 0
    #: how it is used: "entry", "fused" (body of a fusion), "control" (while/conditional/
    #: call body), "applied" (reducer of reduce/scatter/sort...), or "" if unreferenced
    role: str = ""
    _by_name: dict[str, HloInstruction] | None = field(default=None, repr=False, compare=False)

    @property
    def by_name(self) -> dict[str, HloInstruction]:
        if self._by_name is None or len(self._by_name) != len(self.instructions):
            self._by_name = {i.name: i for i in self.instructions}
        return self._by_name

    @property
    def root(self) -> HloInstruction | None:
        for ins in self.instructions:
            if ins.is_root:
                return ins
        return self.instructions[-1] if self.instructions else None

    @property
    def parameters(self) -> list[HloInstruction]:
        return [i for i in self.instructions if i.opcode == "parameter"]


@dataclass(slots=True)
class HloModule:
    name: str
    header: str
    computations: list[HloComputation]
    problems: list[str] = field(default_factory=list)
    _by_name: dict[str, HloComputation] = field(default_factory=dict, repr=False, compare=False)

    @property
    def by_name(self) -> dict[str, HloComputation]:
        if len(self._by_name) != len(self.computations):
            self._by_name = {c.name: c for c in self.computations}
        return self._by_name

    @property
    def entry(self) -> HloComputation:
        for c in self.computations:
            if c.is_entry:
                return c
        raise HloParseError("no ENTRY computation")

    def instructions(self) -> list[HloInstruction]:
        return [i for c in self.computations for i in c.instructions]


__all__ = ["CALL_ATTRS", "COLLECTIVE_OPCODES", "HloComputation", "HloInstruction", "HloModule",
           "HloParseError", "primitive_of"]
