"""The record behind ``%%jaxprof``: measured device time per instruction, line and primitive.

Plain data (views draw it, ``to_dict`` is the JSON payload's body).  Times are seconds per
call, medians over the profiled calls; ``share`` is a fraction of the attributed time (the
sum of the per-instruction medians), ``coverage`` the median over calls of the fraction of
the step covered by attributed events.
``None`` means "not known" (no FLOP count for a custom call, no peak for the device), never
a number standing in for one.
"""

from __future__ import annotations

from dataclasses import asdict, dataclass, field
from typing import Any

from workbench.engine.common.source import CellLabel, SourceLine

SCHEMA_VERSION = 1


@dataclass(slots=True)
class InstructionTime:
    """One executed instruction of the module (a fusion, a library call, a loop...)."""

    name: str
    opcode: str
    label: str  # "loop fusion: add, tanh", "dot", "custom-call: __cublas$gemm"
    computation: str
    seconds: float  # median over calls of the time its events took in one call
    share: float  # of the sum of all instructions' medians
    events_per_call: int
    spread: float  # interquartile range / median over calls; 0 for one call
    resolved: bool  # False: too short or too noisy to tell apart from the profiler's noise
    sources: list[SourceLine] = field(default_factory=list)
    primitives: list[str] = field(default_factory=list)
    flops: float | None = None
    bytes: float | None = None
    cost_source: str = "unknown"  # "xla" | "counted" | "unknown"
    dtype: str | None = None
    flops_per_s: float | None = None
    bytes_per_s: float | None = None
    intensity: float | None = None  # FLOPs per byte
    bound: str | None = None  # "compute" | "memory" when both peaks are known

    def to_dict(self) -> dict[str, Any]:
        d = asdict(self)
        d["sources"] = [s.to_dict() for s in self.sources]
        return d


@dataclass(slots=True)
class LineTime:
    """Device time attributed to one source line; ``source`` None = instructions with no line.

    The JSON flattens the source (``file``, ``line``, ``function``, ``text``; ``""``/0/null
    for the no-line row) so the payload reads like a line profiler's row.
    """

    source: SourceLine | None
    seconds: float
    share: float
    in_cell: bool  # the line is in a notebook cell
    cell: int | None = None  # the prompt number of that cell, when known

    @property
    def file(self) -> str:
        return self.source.file if self.source is not None else ""

    @property
    def line(self) -> int:
        return self.source.line if self.source is not None else 0

    @property
    def text(self) -> str | None:
        return self.source.text if self.source is not None else None

    def to_dict(self) -> dict[str, Any]:
        src = self.source
        return {
            "file": self.file,
            "line": self.line,
            "function": src.function if src is not None else "",
            "text": self.text,
            "seconds": self.seconds,
            "share": self.share,
            "in_cell": self.in_cell,
            "cell": self.cell,
        }


@dataclass(slots=True)
class Listing:
    """A source file's lines around the attributed ones, for the line-profiler listing.

    ``rows``: ``[line, text, seconds or None, share or None]``; lines with no device time
    have None (a line in between, shown for context).
    """

    file: str
    cell: int | None
    in_cell: bool
    rows: list[list[Any]] = field(default_factory=list)

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)


@dataclass(slots=True)
class PrimitiveTime:
    name: str  # jaxpr primitive from op_name, "" when the metadata names none
    seconds: float
    share: float

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)


@dataclass(slots=True)
class TimelineEvent:
    """One event of the median call, relative to the step's start (microseconds)."""

    name: str
    instruction: str | None
    start_us: float
    duration_us: float

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)


@dataclass(slots=True)
class PeakInfo:
    name: str | None  # None: the device is not in the peak table ("unknown peak")
    flops_per_s: dict[str, float] = field(default_factory=dict)
    bytes_per_s: float | None = None

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)


@dataclass
class ProfileReport:
    label: str
    backend: str
    device_kind: str
    module_name: str
    module_key: str
    calls: int
    step_seconds: list[float]  # each profiled call's step time
    step_s: float  # median
    attributed_s: float  # median over calls of the time covered by attributed events
    coverage: float  # median over calls of (time covered by attributed events / step time)
    busy_s: float  # median over calls of the sum of all event times (overlap counted twice)
    step_source: str
    attribution: str
    instructions: list[InstructionTime] = field(default_factory=list)
    lines: list[LineTime] = field(default_factory=list)
    listings: list[Listing] = field(default_factory=list)
    primitives: list[PrimitiveTime] = field(default_factory=list)
    timeline: list[TimelineEvent] = field(default_factory=list)
    timeline_step_us: float = 0.0
    peak: PeakInfo = field(default_factory=lambda: PeakInfo(None))
    notes: list[str] = field(default_factory=list)
    profile_s: float = 0.0  # wall time after the compile: parse, warm-up, calls, trace, attribution
    compile_s: float | None = None
    #: where ``profile_s`` went: parse and count, warm-up call, profiled calls, stop and
    #: read the trace, events, attribution (seconds)
    phases: dict[str, float] = field(default_factory=dict)
    #: file -> the cell its lines are in, where the file alone is not enough to say (two
    #: cells with identical text share a file under ipykernel): the cell whose run defined
    #: the profiled function
    cells: dict[str, CellLabel] = field(default_factory=dict)

    @property
    def fusion_seconds(self) -> float:
        """The sum of per-instruction medians (what the per-line times add up to)."""
        return sum(i.seconds for i in self.instructions)

    def measured_by_instruction(self) -> dict[str, float]:
        return {i.name: i.seconds for i in self.instructions}

    def to_dict(self) -> dict[str, Any]:
        return {
            "version": SCHEMA_VERSION,
            "label": self.label,
            "backend": self.backend,
            "device_kind": self.device_kind,
            "module_name": self.module_name,
            "module_key": self.module_key,
            "calls": self.calls,
            "step_seconds": self.step_seconds,
            "step_s": self.step_s,
            "attributed_s": self.attributed_s,
            "coverage": self.coverage,
            "busy_s": self.busy_s,
            "step_source": self.step_source,
            "attribution": self.attribution,
            "instructions": [i.to_dict() for i in self.instructions],
            "lines": [ln.to_dict() for ln in self.lines],
            "listings": [x.to_dict() for x in self.listings],
            "primitives": [p.to_dict() for p in self.primitives],
            "timeline": {
                "step_us": self.timeline_step_us,
                "events": [e.to_dict() for e in self.timeline],
            },
            "peak": self.peak.to_dict(),
            "notes": self.notes,
            "profile_s": self.profile_s,
            "compile_s": self.compile_s,
            "phases": self.phases,
        }


__all__ = [
    "SCHEMA_VERSION",
    "InstructionTime",
    "LineTime",
    "Listing",
    "PeakInfo",
    "PrimitiveTime",
    "ProfileReport",
    "TimelineEvent",
]
