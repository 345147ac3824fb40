"""Readers of XLA's ``*buffer-assignment.txt`` and ``*live-range.txt`` dumps.

Why text: JAX exposes a compiled program's buffer assignment only through XLA's dump
files (the proto needs jaxlib internals).  The two files say:

- the buffer assignment: allocations (``allocation 3: size 655360, ... preallocated-temp``)
  and the HLO values each holds (``value: <55 fusion.3 @0> (size=65536,offset=262144):
  f32[64,256]{1,0}``);
- the live range: the program order (``InstructionSequence``), each value's live range
  in that order (``fusion.3{}:4-5``, both ends included) and the peak XLA found
  (``Live ranges at 219 (peak):`` and the values live then).

:func:`peak_moment` is XLA's own sweep (``HloLiveRange::ComputePeakMemoryMoment``):
values start at their first step and end one step after their last, starts sorted before
ends at the same step, and each value weighs what its defining instruction's whole shape
does (for a value inside a tuple, the tuple's table: 8 bytes an element; see
:func:`sweep_size`); the peak is the bytes of the values live at that step, so the figure
agrees with the report XLA writes beside it.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field

from workbench.engine.hlo.model import split_top

_VALUE = re.compile(
    r"^ value: <(\d+) (\S+?)(\{[\d,]*\})?(?: \(phi\))?(?: @(\d+))?> "
    r"\(size=(\d+),offset=(\d+)\): (\S+)",
    re.M,
)
_ALLOCATION = re.compile(r"^allocation (\d+): size (\d+), (.*)$")
_RANGE = re.compile(r"^\s+(\S+):(\d+)-(\d+)\s*$", re.M)
_SEQUENCE = re.compile(r"^\s+(\d+):(\S+)\s*$", re.M)
_LISTED = re.compile(r"^\s+(\S+): (\d+) bytes", re.M)
_PEAK = re.compile(r"Live ranges at (\d+) \(peak\)")
_MAX = re.compile(r"HloLiveRange \(max (\d+)\)")


@dataclass(slots=True)
class DumpValue:
    """One HLO value in the buffer assignment: ``name`` is the instruction, ``index`` its
    tuple index (``{}`` for an array), ``role`` what its allocation is."""

    name: str
    index: str
    size: int
    shape: str
    allocation: int
    role: str  # "parameter N", "output", "temp", "constant", "thread-local", ...

    @property
    def key(self) -> str:
        return self.name + self.index


@dataclass
class BufferAssignment:
    values: dict[str, DumpValue] = field(default_factory=dict)
    #: allocation number -> (size, role)
    allocations: dict[int, tuple[int, str]] = field(default_factory=dict)


def _role(rest: str) -> str:
    m = re.search(r"parameter (\d+)", rest)
    if m:
        return f"parameter {m.group(1)}"
    for word, role in (
        ("maybe-live-out", "output"),
        ("output shape", "output"),
        ("preallocated-temp", "temp"),
        ("constant", "constant"),
        ("thread-local", "thread-local"),
    ):
        if word in rest:
            return role
    return "temp"


def parse_buffer_assignment(text: str) -> BufferAssignment:
    """The values and allocations of a ``*buffer-assignment.txt`` (what follows
    ``Used values:`` repeats them with uses; it is not read)."""
    out = BufferAssignment()
    head = text.split("\nUsed values:", 1)[0]
    allocation, role = -1, "temp"
    for line in head.splitlines():
        m = _ALLOCATION.match(line)
        if m:
            allocation, role = int(m.group(1)), _role(m.group(3))
            out.allocations[allocation] = (int(m.group(2)), role)
            continue
        v = _VALUE.match(line)
        if v:
            value = DumpValue(
                name=v.group(2),
                index=v.group(3) or "{}",
                size=int(v.group(5)),
                shape=v.group(7).split("{")[0],
                allocation=allocation,
                role=role,
            )
            out.values.setdefault(value.key, value)
    return out


@dataclass
class LiveRanges:
    sequence: list[str]
    #: value key (``name{index}``) -> (first step, last step), both included
    ranges: dict[str, tuple[int, int]]
    steps: int
    #: what XLA's own report says: the peak step and the bytes it lists live there
    reported_peak_step: int | None
    reported_peak_bytes: int | None


def parse_live_range(text: str) -> LiveRanges:
    seq_part, _, rest = text.partition("BufferLiveRange:")
    ranges_part, _, peak_part = rest.partition("Live ranges at")
    sequence = [name for _, name in _SEQUENCE.findall(seq_part)]
    ranges = {n: (int(s), int(e)) for n, s, e in _RANGE.findall(ranges_part)}
    m = _MAX.search(text)
    steps = int(m.group(1)) if m else len(sequence)
    pm = _PEAK.search(text)
    listed = peak_part.split("Stack trace breakdown", 1)[0]
    reported = [int(b) for _, b in _LISTED.findall(listed)] if pm else []
    return LiveRanges(
        sequence=sequence,
        ranges=ranges,
        steps=steps,
        reported_peak_step=int(pm.group(1)) if pm else None,
        reported_peak_bytes=sum(reported) if pm else None,
    )


def sweep_size(value: DumpValue, instruction_shape: str | None) -> int:
    """What XLA's peak sweep weighs a value by: ``ByteSizeOf`` of its instruction's shape
    with 8-byte pointers, so a tuple-shaped instruction's values each weigh the tuple's
    table (8 bytes per element), an array its own size."""
    text = (instruction_shape or "").strip()
    if not text.startswith("("):
        return value.size
    inner = text[1 : text.rfind(")")] if ")" in text else text[1:]
    return 8 * len(split_top(inner)) if inner.strip() else 0


def peak_moment(ranges: dict[str, tuple[int, int]], sizes: dict[str, int]) -> int:
    """XLA's peak step: a sweep where each value adds its size at its first step and
    removes it one step after its last, additions before removals at the same step."""
    events = [(s, 0, sizes.get(k, 0)) for k, (s, _) in ranges.items()]
    events += [(e + 1, 1, sizes.get(k, 0)) for k, (_, e) in ranges.items()]
    events.sort()
    usage = peak = 0
    when = 0
    for t, is_end, size in events:
        usage += -size if is_end else size
        if usage > peak:
            peak, when = usage, t
    return when


def usage_by_step(
    ranges: dict[str, tuple[int, int]], sizes: dict[str, int], steps: int
) -> list[int]:
    """Bytes live at each step of the program order (a value counts from its first to its
    last step, both included), by a difference array: linear in values plus steps."""
    diff = [0] * (steps + 2)
    for k, (s, e) in ranges.items():
        size = sizes.get(k, 0)
        if s > steps:
            continue
        diff[s] += size
        diff[min(e, steps) + 1] -= size
    out, running = [], 0
    for t in range(steps + 1):
        running += diff[t]
        out.append(running)
    return out


__all__ = [
    "BufferAssignment",
    "DumpValue",
    "LiveRanges",
    "parse_buffer_assignment",
    "parse_live_range",
    "peak_moment",
    "sweep_size",
    "usage_by_step",
]
