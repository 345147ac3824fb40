"""Fingerprints of an :class:`Inspection` (``%%jaxpr``) or an :class:`HloReport` (``%%hlo``),
and their differences.

Items are grouped by (what, source line): the jaxpr primitive, or the HLO opcode
(``fusion:kLoop`` for a fusion, by its kind), and the user's line it came from.  Two
runs of one cell are compiled under different file names (IPython names a cell's file
after its number and contents), so a line inside any notebook cell is keyed by its line
number and function only: the same line of the re-run cell lines up with itself, and an
edited line keeps its place.  A cell line's text is kept too (read from
:mod:`linecache`, where IPython and the magics put cell sources): what a diff would
call removed at one line and added at another with the same primitive and the same text
only moved (a line inserted above it, the function renamed) and is no change.

Sizes are bounded: at most :data:`MAX_GROUPS` groups, :data:`MAX_EXAMPLES` examples of
:data:`MAX_EXAMPLE_CHARS` characters each, whatever the size of the program.
"""

from __future__ import annotations

import functools
import linecache
import time
from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass, field

from workbench.engine.common.source import SourceLine, cell_label
from workbench.engine.hlo.report import HloReport
from workbench.engine.jaxpr.model import Equation, JaxprModel
from workbench.engine.stages import Inspection

MAX_GROUPS = 400
MAX_EXAMPLES = 3
MAX_EXAMPLE_CHARS = 160

#: HLO instructions that are bookkeeping, not work: left out of the groups (still counted
#: in the "instructions" total)
_QUIET_OPCODES = frozenset({"parameter", "tuple", "get-tuple-element", "bitcast"})

GroupKey = tuple[str, str, int, str]  # (what, file or "<cell>", line, function)


@dataclass
class Group:
    """Items of one kind from one source line."""

    what: str
    line: SourceLine | None
    count: int = 0
    examples: list[str] = field(default_factory=list)

    def add(self, example: str | Callable[[], str]) -> None:
        """Count one item; ``example`` is its text, or a function that makes it (called only
        while the group still wants examples: most items of a big program are counted
        without ever being printed)."""
        self.count += 1
        if len(self.examples) < MAX_EXAMPLES:
            if callable(example):
                example = example()
            if not example:
                return
            text = " ".join(example.split())
            if len(text) > MAX_EXAMPLE_CHARS:
                text = text[: MAX_EXAMPLE_CHARS - 1] + "…"
            if text not in self.examples:
                self.examples.append(text)


@dataclass(frozen=True, slots=True)
class Total:
    """A headline number of a result (equations, compile time...); None: not known."""

    name: str
    value: float | None
    unit: str  # "count" | "s" | "bytes" | "flops"


@dataclass
class Fingerprint:
    """The small summary of one result that the next run of its cell is compared with."""

    kind: str  # "jaxpr" | "hlo"
    function: str
    groups: dict[GroupKey, Group]
    totals: list[Total]
    #: groups past :data:`MAX_GROUPS` that were not kept (their items are in the totals)
    truncated: int = 0


@dataclass(frozen=True, slots=True)
class TotalChange:
    name: str
    before: float | None
    after: float | None
    unit: str


@dataclass
class LiveDiff:
    """What changed from ``before`` to ``after`` (two runs of one cell)."""

    kind: str
    function: str
    added: list[Group]
    removed: list[Group]
    totals: list[TotalChange]
    t: float = 0.0

    @property
    def unchanged(self) -> bool:
        return (
            not self.added
            and not self.removed
            and all(c.before == c.after for c in self.totals if c.unit != "s")
        )


def _file_key(source: SourceLine) -> str:
    file = source.file
    if cell_label(file) is not None or "ipykernel_" in file or file.startswith("<ipython-input"):
        return "<cell>"
    return file


def _is_cell(file: str) -> bool:
    return _file_key(SourceLine(file, 0)) == "<cell>"


def _with_text(source: SourceLine | None) -> SourceLine | None:
    """A notebook cell's line with its text (stripped, bounded), for moved-line matching
    and for the front end to show; other files' lines as they are."""
    if source is None or source.text or not _is_cell(source.file):
        return source
    text = linecache.getline(source.file, source.line).strip()
    if len(text) > MAX_EXAMPLE_CHARS:
        text = text[: MAX_EXAMPLE_CHARS - 1] + "…"
    return SourceLine(source.file, source.line, source.function, text, column=source.column)


def _key(what: str, source: SourceLine | None) -> GroupKey:
    if source is None:
        return (what, "", 0, "")
    return (what, _file_key(source), source.line, source.function)


class _Builder:
    def __init__(self) -> None:
        self.groups: dict[GroupKey, Group] = {}
        self.truncated = 0

    def add(self, what: str, source: SourceLine | None, example: str | Callable[[], str]) -> None:
        key = _key(what, source)
        group = self.groups.get(key)
        if group is None:
            if len(self.groups) >= MAX_GROUPS:
                self.truncated += 1
                return
            group = self.groups[key] = Group(what, _with_text(source))
        group.add(example)


def _equations(model: JaxprModel) -> Iterator[Equation]:
    stack = [model]
    while stack:
        jm = stack.pop()
        for eq in jm.eqns:
            yield eq
            stack.extend(s.jaxpr for s in eq.subjaxprs)


def equation_text(eq: Equation) -> str:
    """``c:f32[3] = mul a b``: JAX's printing of an equation, without its params."""
    outs = " ".join(f"{a.name}:{a.aval.text}" for a in eq.outvars)
    ins = " ".join(a.literal if a.literal is not None else a.name for a in eq.invars)
    return f"{outs} = {eq.primitive} {ins}".strip()


def jaxpr_fingerprint(ins: Inspection) -> Fingerprint:
    """The fingerprint of a traced inspection (``%%jaxpr``): its equations, nested ones
    included, by primitive and line; totals: equations and the stage times known."""
    b = _Builder()
    model = ins.model
    for eq in _equations(model):
        b.add(eq.primitive, eq.source, functools.partial(equation_text, eq))
    totals = [
        Total("equations", float(model.total_equations), "count"),
        Total("trace time", ins.timings.trace, "s"),
    ]
    if ins.timings.lower is not None:
        totals.append(Total("lower time", ins.timings.lower, "s"))
    if ins.timings.compile is not None:
        totals.append(Total("compile time", ins.timings.compile, "s"))
    return Fingerprint("jaxpr", ins.label, b.groups, totals, b.truncated)


def hlo_fingerprint(rep: HloReport) -> Fingerprint:
    """The fingerprint of an HLO report (``%%hlo``): instructions outside fused bodies by
    opcode (fusions by kind) and line, or StableHLO ops for ``--stage lowered``; totals:
    counts, stage times, XLA's memory analysis and cost estimate."""
    b = _Builder()
    lines = rep.text.splitlines()

    def text_of(line_no: int) -> str:
        return lines[line_no - 1] if 0 < line_no <= len(lines) else ""

    if rep.module is not None:
        for comp in rep.module.computations:
            if comp.role == "fused":
                continue
            for i in comp.instructions:
                if i.opcode in _QUIET_OPCODES:
                    continue
                what = (
                    f"fusion:{i.fusion_kind}"
                    if i.opcode == "fusion" and i.fusion_kind
                    else i.opcode
                )
                b.add(what, i.source, text_of(i.line_no))
    elif rep.stablehlo is not None:
        for op in rep.stablehlo.ops:
            if op.op.startswith(("func.", "builtin.")):
                continue
            b.add(op.op, op.source, text_of(op.line_no))
    totals = _hlo_totals(rep)
    return Fingerprint("hlo", rep.label, b.groups, totals, b.truncated)


def _count(value: int | None) -> float | None:
    return None if value is None else float(value)


def _hlo_totals(rep: HloReport) -> list[Total]:
    out = []
    if rep.module is not None:
        out += [
            Total("instructions", _count(rep.hlo_op_count), "count"),
            Total("fusions", _count(rep.fusion_count), "count"),
        ]
    out.append(Total("StableHLO ops", _count(rep.stablehlo_op_count), "count"))
    out += [Total("trace time", rep.trace_s, "s"), Total("lower time", rep.lower_s, "s")]
    if rep.stage == "compiled":
        out.append(Total("compile time", rep.compile_s, "s"))
    m = rep.memory
    if m.reported:
        out += [
            Total("memory: temp", _count(m.temp_bytes), "bytes"),
            Total("memory: arguments", _count(m.argument_bytes), "bytes"),
            Total("memory: outputs", _count(m.output_bytes), "bytes"),
        ]
    if rep.cost.reported:
        out += [
            Total("estimated bytes", rep.cost.bytes_accessed, "bytes"),
            Total("estimated flops", rep.cost.flops, "flops"),
        ]
    return out


def _side(groups: Iterable[tuple[Group, int]]) -> list[Group]:
    return [Group(g.what, g.line, n, list(g.examples)) for g, n in groups]


def _moved_key(g: Group) -> tuple[str, str] | None:
    if g.line is None or not g.line.text or not _is_cell(g.line.file):
        return None
    return (g.what, g.line.text)


def _cancel_moved(added: list[tuple[Group, int]], removed: list[tuple[Group, int]]) -> None:
    """Take out of both sides what only moved: the same primitive from the same cell
    text, at another line number or in a renamed function (in place)."""
    left: dict[tuple[str, str], int] = {}
    for g, n in removed:
        key = _moved_key(g)
        if key is not None:
            left[key] = left.get(key, 0) + n
    if not left:
        return
    moved: dict[tuple[str, str], int] = {}
    for i, (g, n) in enumerate(added):
        key = _moved_key(g)
        if key is None or not left.get(key):
            continue
        take = min(n, left[key])
        left[key] -= take
        moved[key] = moved.get(key, 0) + take
        added[i] = (g, n - take)
    for i, (g, n) in enumerate(removed):
        key = _moved_key(g)
        if key is None or not moved.get(key):
            continue
        take = min(n, moved[key])
        moved[key] -= take
        removed[i] = (g, n - take)
    added[:] = [(g, n) for g, n in added if n > 0]
    removed[:] = [(g, n) for g, n in removed if n > 0]


def diff_fingerprints(
    before: Fingerprint, after: Fingerprint, now: float | None = None
) -> LiveDiff:
    """Groups added (new, or more items than before) and removed (gone, or fewer), in
    the order of ``after`` then ``before``; every total of either side, before and after."""
    added = []
    for key, g in after.groups.items():
        old = before.groups.get(key)
        n = g.count - (old.count if old is not None else 0)
        if n > 0:
            added.append((g, n))
    removed = []
    for key, g in before.groups.items():
        new = after.groups.get(key)
        n = g.count - (new.count if new is not None else 0)
        if n > 0:
            removed.append((g, n))
    _cancel_moved(added, removed)
    names: dict[str, str] = {}
    for t in (*after.totals, *before.totals):
        names.setdefault(t.name, t.unit)
    b_vals = {t.name: t.value for t in before.totals}
    a_vals = {t.name: t.value for t in after.totals}
    totals = [
        TotalChange(name, b_vals.get(name), a_vals.get(name), unit) for name, unit in names.items()
    ]
    return LiveDiff(
        kind=after.kind,
        function=after.function,
        added=_side(added),
        removed=_side(removed),
        totals=totals,
        t=time.time() if now is None else now,
    )


__all__ = [
    "MAX_EXAMPLES",
    "MAX_GROUPS",
    "Fingerprint",
    "Group",
    "LiveDiff",
    "Total",
    "TotalChange",
    "diff_fingerprints",
    "equation_text",
    "hlo_fingerprint",
    "jaxpr_fingerprint",
]
