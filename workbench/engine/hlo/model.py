"""The data model of an XLA HLO module: computations, instructions, their sources.

:mod:`workbench.engine.hlo.parser` builds it from the text ``Compiled.as_text()``
prints; the graph builder, the report and the views read it.  Derived facts
(result bytes, the jaxpr primitive an instruction came from, a computation's root)
are properties here, so every reader computes them the same way.
"""

from __future__ import annotations

import functools
import json
import re
from dataclasses import dataclass, field
from typing import Any

from workbench.engine.common.source import SourceLine
from workbench.engine.hlo.shapes import ArrayShape, parse_shape, strip_layout

COLLECTIVE_OPCODES = (
    "all-reduce",
    "all-gather",
    "reduce-scatter",
    "all-to-all",
    "collective-permute",
    "collective-broadcast",
    "ragged-all-to-all",
)

#: attributes whose value names computations the instruction calls
CALL_ATTRS = (
    "calls",
    "to_apply",
    "condition",
    "body",
    "branch_computations",
    "true_computation",
    "false_computation",
    "called_computations",
)


class HloParseError(ValueError):
    """The text is not an HLO module we can read (no entry computation)."""


_TOKEN_RE = re.compile(r'"(?:[^"\\]|\\.)*"|[{}\[\]()]|,')
#: a bracket or a quote: text without one splits on plain commas
_NESTING_RE = re.compile(r'[({\["]')


def split_top(text: str) -> list[str]:
    """Split on commas that are not inside brackets or quotes."""
    parts: list[str] = []
    depth = 0
    last = 0
    for m in _TOKEN_RE.finditer(text):
        t = m.group()
        if t == ",":
            if depth == 0:
                parts.append(text[last : m.start()])
                last = m.end()
        elif t in "([{":
            depth += 1
        elif t in ")]}":
            depth -= 1
    tail = text[last:]
    if tail.strip():
        parts.append(tail)
    return [p.strip() for p in parts if p.strip()]


def split_attrs(text: str, into: dict[str, str]) -> dict[str, str]:
    """``kind=kLoop, calls=%f, is_scheduled`` into ``into`` (``{"kind": "kLoop", "calls":
    "%f", "is_scheduled": ""}``), in order; quoted and bracketed values kept whole."""
    simple = _NESTING_RE.search(text) is None
    for piece in text.split(",") if simple else split_top(text):
        piece = piece.strip()
        if not piece:
            continue
        key, eq, value = piece.partition("=")
        if not eq:
            into[piece] = ""
            continue
        into[key.strip()] = value.strip()
    return into


@dataclass(slots=True)
class HloInstruction:
    """One instruction.  Its attributes are kept as the text XLA printed (``attrs_text``,
    metadata cut out into ``metadata``) and split into :attr:`attrs` on first use: a big
    module has 10^5 instructions, nearly all inside fused computations, and the views ask
    for the attributes of a few thousand."""

    name: str
    opcode: str
    shape_text: str
    operands: list[str]
    attrs_text: str = ""
    metadata: str = ""  # ``{op_name="..." source_file=... source_line=...}``, or ""
    is_root: bool = False
    op_name: str = ""
    source: SourceLine | None = None
    called: list[str] = field(default_factory=list)
    line_no: int = 0  # 1-based line of the module text
    literal: str = ""  # constant(...) contents, or parameter(N)'s number
    #: ``stack_frame_id`` of the metadata (newer XLA), resolved into ``source`` by the parser
    frame_id: str = field(default="", repr=False, compare=False)
    _bytes: int = field(default=-1, repr=False, compare=False)
    _short: str = field(default="", repr=False, compare=False)
    _attrs: dict[str, str] | None = field(default=None, repr=False, compare=False)

    @property
    def attrs(self) -> dict[str, str]:
        """``attr -> value text`` in printed order (``metadata`` first when present), as
        XLA printed them; made from ``attrs_text`` on first use, then kept."""
        if self._attrs is None:
            first = {"metadata": self.metadata} if self.metadata else {}
            self._attrs = split_attrs(self.attrs_text, first) if self.attrs_text else first
        return self._attrs

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

    def int_list(self, key: str) -> tuple[int, ...]:
        """An attribute printed as ``{0,2}`` (dot dimension numbers, ``dimensions=``) as ints;
        ``()`` when absent, so a dot without batch dimensions reads like one with none."""
        return parse_int_list(self.attrs.get(key, ""))

    @property
    def window(self) -> list[WindowDim]:
        """``window={size=3x3 stride=2x2 pad=1_1x1_1}`` (convolution, reduce-window), per
        spatial dimension; ``[]`` when the instruction has none."""
        return parse_window(self.attrs.get("window", ""))

    @property
    def backend_config(self) -> dict[str, Any]:
        """The JSON ``backend_config`` (cuBLAS dot dimension numbers, fusion kinds, a while
        loop's ``known_trip_count``); ``{}`` when absent or not JSON.  Parsed on each call:
        only the cost counter asks, once per instruction."""
        text = self.attrs.get("backend_config", "")
        try:
            value = json.loads(text) if text[:1] in ("{", '"') else None
            if isinstance(value, str):  # older XLA printed the JSON as a quoted string
                value = json.loads(value) if value.startswith("{") else None
        except ValueError:
            return {}
        return value if isinstance(value, dict) else {}

    def to_dict(self) -> dict[str, Any]:
        d: dict[str, Any] = {
            "name": self.name,
            "opcode": self.opcode,
            "shape": self.short_shape,
            "bytes": self.bytes,
            "operands": self.operands,
            "line": self.line_no,
        }
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


@dataclass(frozen=True, slots=True)
class WindowDim:
    """One spatial dimension of an HLO ``window={...}`` attribute."""

    size: int
    stride: int = 1
    pad_low: int = 0
    pad_high: int = 0
    lhs_dilate: int = 1  # "base dilation" in XLA's terms
    rhs_dilate: int = 1  # "window dilation"


_INT_RE = re.compile(r"-?\d+")


def parse_int_list(text: str) -> tuple[int, ...]:
    """``{0,2}`` -> ``(0, 2)``; anything without digits -> ``()``."""
    return tuple(int(t) for t in _INT_RE.findall(text))


def parse_window(text: str) -> list[WindowDim]:
    """``{size=3x3 stride=2x2 pad=1_1x1_1 lhs_dilate=1x2 rhs_dilate=1x1}`` per dimension.

    XLA prints only the fields that differ from their defaults, ``x`` between
    dimensions and ``low_high`` for padding; an unreadable field keeps its default."""
    fields: dict[str, list[str]] = {}
    for part in text.strip("{} ").split():
        key, eq, value = part.partition("=")
        if eq:
            fields[key] = value.split("x")
    sizes = fields.get("size", [])
    out = []
    for i, size in enumerate(sizes):

        def get(key: str, default: int, i: int = i) -> int:
            vals = fields.get(key)
            try:
                return int(vals[i]) if vals and i < len(vals) else default
            except ValueError:
                return default

        low, _, high = (
            fields.get("pad", [])[i] if i < len(fields.get("pad", [])) else "0_0"
        ).partition("_")
        try:
            pad_low, pad_high = int(low), int(high or 0)
        except ValueError:
            pad_low = pad_high = 0
        try:
            n = int(size)
        except ValueError:
            n = 1
        out.append(
            WindowDim(
                n, get("stride", 1), pad_low, pad_high, get("lhs_dilate", 1), get("rhs_dilate", 1)
            )
        )
    return out


@functools.lru_cache(maxsize=4096)
def primitive_of(op_name: str) -> str:
    """``jit(f)/jvp()/mul`` -> ``mul`` (cached: a module repeats a few hundred op names
    over its 10^5 instructions)."""
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


__all__ = [
    "CALL_ATTRS",
    "COLLECTIVE_OPCODES",
    "HloComputation",
    "HloInstruction",
    "HloModule",
    "HloParseError",
    "WindowDim",
    "parse_int_list",
    "split_attrs",
    "split_top",
    "parse_window",
    "primitive_of",
]
