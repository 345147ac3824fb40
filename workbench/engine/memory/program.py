"""The record behind ``%%jaxmem CALL``: a compiled program's memory at its peak.

From XLA's own buffer assignment (:mod:`workbench.engine.memory.dump`), read from one
compile that dumps it into a temporary directory (removed before returning):

- the live-range peak: the bytes of the HLO values live at XLA's peak step, the same
  figure XLA's live-range report gives, beside ``memory_analysis()``'s
  argument + output + temp - alias (what the runtime allocates for one call);
- the buffers live at the peak, largest first, with the HLO instruction that defines each
  and the user's source line of its metadata;
- the bytes live at every step of the program order (the memory-over-time chart);
- what donation would change (the arguments that an output of the same shape and dtype
  could reuse: ``donate_argnums``) and, for a gradient, the largest activations the
  forward pass keeps for the backward pass and the lines that made them (what
  ``jax.checkpoint`` would recompute instead of keeping).
"""

from __future__ import annotations

import os
import tempfile
import time
from collections import Counter
from dataclasses import dataclass, field
from typing import Any

from workbench.engine import _jax_compat as compat
from workbench.engine.common.analysis import MemoryAnalysis, normalize_memory
from workbench.engine.common.gcpause import gc_paused
from workbench.engine.common.source import SourceLine
from workbench.engine.hlo.model import HloInstruction
from workbench.engine.hlo.parser import parse_hlo
from workbench.engine.memory.dump import (
    BufferAssignment,
    parse_buffer_assignment,
    parse_live_range,
    peak_moment,
    sweep_size,
    usage_by_step,
)
from workbench.engine.stages import Inspection

SCHEMA_VERSION = 1
#: points of the memory-over-program-order series kept (each the largest of its steps)
TIMELINE_POINTS = 400


class MemoryDumpError(RuntimeError):
    """XLA wrote no buffer assignment for the compile (the front doors say it in a line)."""


@dataclass(slots=True)
class PeakBuffer:
    """One HLO value live at the peak."""

    name: str  # the instruction, with its tuple index when not ``{}``
    shape: str  # ``f32[8,128,256]``
    bytes: int
    role: str  # "parameter N", "output", "temp", "constant"
    opcode: str = ""
    op_name: str = ""
    source: SourceLine | None = None
    live: tuple[int, int] = (0, 0)

    def to_dict(self) -> dict[str, Any]:
        return {
            "name": self.name,
            "shape": self.shape,
            "bytes": self.bytes,
            "role": self.role,
            "opcode": self.opcode,
            "op_name": self.op_name,
            "source": self.source.to_dict() if self.source is not None else None,
            "live": list(self.live),
        }


@dataclass(slots=True)
class Donation:
    """Arguments an output of the same shape and dtype could reuse."""

    argnums: list[int]
    paths: list[str]
    bytes: int
    note: str = ""

    def to_dict(self) -> dict[str, Any]:
        return {
            "argnums": self.argnums,
            "paths": self.paths,
            "bytes": self.bytes,
            "note": self.note,
        }


@dataclass(slots=True)
class SavedActivations:
    """Forward-pass values live at a gradient's peak, grouped by the line that made them."""

    source: SourceLine | None
    op_name: str
    count: int
    bytes: int

    def to_dict(self) -> dict[str, Any]:
        return {
            "source": self.source.to_dict() if self.source is not None else None,
            "op_name": self.op_name,
            "count": self.count,
            "bytes": self.bytes,
        }


@dataclass
class ProgramMemory:
    label: str
    backend: str
    #: bytes live at XLA's peak step, from the dump's live ranges and value sizes
    peak_bytes: int
    peak_step: int
    steps: int
    #: what XLA's own live-range report says (the check that ours agrees)
    xla_reported_peak_bytes: int | None
    memory: MemoryAnalysis
    buffers: list[PeakBuffer] = field(default_factory=list)
    #: (step, bytes) pairs, at most TIMELINE_POINTS, each the largest of its steps
    timeline: list[tuple[int, int]] = field(default_factory=list)
    donation: Donation | None = None
    saved: list[SavedActivations] = field(default_factory=list)
    has_backward: bool = False
    compile_s: float = 0.0
    dump_bytes: int = 0
    notes: list[str] = field(default_factory=list)
    #: bytes of the output allocations that hold no live value at the peak step: XLA gives
    #: every output its own allocation, held for the whole call, and ``memory_analysis()``
    #: counts all of it; a program that writes its outputs after its peak (a train step's new
    #: parameters and optimizer state, a gradient's last blocks) has those bytes allocated but
    #: empty at the peak, which the live-range peak rightly leaves out
    idle_output_bytes: int = 0

    @property
    def analysis_bytes(self) -> int | None:
        """``memory_analysis()``'s argument + output + temp - alias; None if not reported."""
        m = self.memory
        if m.argument_bytes is None or m.output_bytes is None or m.temp_bytes is None:
            return None
        return m.argument_bytes + m.output_bytes + m.temp_bytes - (m.alias_bytes or 0)

    @property
    def comparable_bytes(self) -> int | None:
        """``memory_analysis()``'s figure less the output buffers empty at the peak: what the
        live-range peak is comparable with (what remains between them is the part of XLA's
        temp buffer its packing leaves unused at that step); None if not reported."""
        a = self.analysis_bytes
        return None if a is None else a - self.idle_output_bytes

    def to_dict(self) -> dict[str, Any]:
        return {
            "label": self.label,
            "backend": self.backend,
            "peak_bytes": self.peak_bytes,
            "peak_step": self.peak_step,
            "steps": self.steps,
            "xla_reported_peak_bytes": self.xla_reported_peak_bytes,
            "analysis_bytes": self.analysis_bytes,
            "memory": self.memory.to_dict(),
            "buffers": [b.to_dict() for b in self.buffers],
            "timeline": [list(p) for p in self.timeline],
            "donation": self.donation.to_dict() if self.donation is not None else None,
            "saved": [s.to_dict() for s in self.saved],
            "has_backward": self.has_backward,
            "compile_s": self.compile_s,
            "dump_bytes": self.dump_bytes,
            "notes": list(self.notes),
            "idle_output_bytes": self.idle_output_bytes,
            "comparable_bytes": self.comparable_bytes,
        }


def _held_at_peak(assignment: BufferAssignment, at_peak: list[str]) -> Counter[int]:
    """Bytes of the values live at the peak, by the allocation that holds them."""
    held: Counter[int] = Counter()
    for k in at_peak:
        v = assignment.values.get(k)
        if v is not None:
            held[v.allocation] += v.size
    return held


def idle_output_bytes(assignment: BufferAssignment, at_peak: list[str]) -> int:
    """Bytes of the output allocations not taken by a value live at the peak: each output
    allocation's size less its values live then (an output aliased to a donated argument
    is that argument's allocation, not an output's, and memory_analysis already counts it
    once)."""
    held = _held_at_peak(assignment, at_peak)
    return sum(
        max(size - held[a], 0)
        for a, (size, role) in assignment.allocations.items()
        if role == "output"
    )


def counted_twice_bytes(assignment: BufferAssignment, at_peak: list[str]) -> int:
    """Bytes the live-range peak counts twice: values live at the peak step beyond the size
    of the allocation holding them.  XLA's live ranges include their last step, so an
    operation that writes in place (into a donated argument's buffer, or a
    dynamic-update-slice's operand) has its operand and its result live at the step of the
    write, in the same bytes of one allocation; memory_analysis counts those bytes once."""
    held = _held_at_peak(assignment, at_peak)
    return sum(max(n - assignment.allocations.get(a, (n, ""))[0], 0) for a, n in held.items())


def _pick(files: list[str], suffix: str) -> str | None:
    """The main module's dump file ending in ``suffix`` (the largest, when a compile
    dumped several modules)."""
    found = [f for f in files if f.endswith(suffix)]
    if not found:
        return None
    return max(found, key=os.path.getsize)


def _read_dump(lowered: Any) -> tuple[Any, float, str, str, int]:
    """Compile with the dump on; (compiled, seconds, buffer assignment, live range, bytes
    of files written).  The directory is removed before returning."""
    with tempfile.TemporaryDirectory(prefix="jwb-jaxmem-") as d:
        t0 = time.perf_counter()
        compiled, bypassed = compat.compile_with_dump(lowered, d)
        seconds = time.perf_counter() - t0
        files = [os.path.join(d, f) for f in os.listdir(d)]
        written = sum(os.path.getsize(f) for f in files if os.path.isfile(f))
        ba = _pick(files, "buffer-assignment.txt")
        lr = _pick(files, "live-range.txt")
        if ba is None or lr is None:
            why = (
                "a backend that does not dump it"
                if bypassed
                else "a persistent compilation cache hit this JAX could not bypass"
            )
            raise MemoryDumpError(f"XLA wrote no buffer assignment for this compile ({why})")
        with open(ba, encoding="utf-8", errors="replace") as fh:
            ba_text = fh.read()
        with open(lr, encoding="utf-8", errors="replace") as fh:
            lr_text = fh.read()
    return compiled, seconds, ba_text, lr_text, written


def _downsample(usage: list[int], points: int = TIMELINE_POINTS) -> list[tuple[int, int]]:
    if len(usage) <= points:
        return list(enumerate(usage))
    out = []
    step = len(usage) / points
    for i in range(points):
        a, b = int(i * step), max(int((i + 1) * step), int(i * step) + 1)
        chunk = usage[a:b]
        j = max(range(len(chunk)), key=chunk.__getitem__)
        out.append((a + j, chunk[j]))
    return out


def _shape_dtype(info: Any) -> tuple[tuple[int, ...], str] | None:
    shape, dtype = getattr(info, "shape", None), getattr(info, "dtype", None)
    if shape is None or dtype is None:
        return None
    return tuple(int(d) for d in shape), str(dtype)


def _nbytes(sd: tuple[tuple[int, ...], str]) -> int:
    import numpy as np

    n = 1
    for d in sd[0]:
        n *= d
    try:
        return n * np.dtype(sd[1]).itemsize
    except TypeError:
        return 0


def _call_positions(count: int, static_argnums: tuple[int, ...]) -> list[int]:
    """The call's positions of the ``count`` non-static positional arguments (JAX's stages
    list only those)."""
    out: list[int] = []
    pos = 0
    while len(out) < count:
        if pos not in static_argnums:
            out.append(pos)
        pos += 1
    return out


def donation_advice(lowered: Any, static_argnums: tuple[int, ...] = ()) -> Donation | None:
    """The top-level positional arguments whose every array an output of the same shape
    and dtype could reuse (as JAX matches donated buffers to outputs), in order, numbered
    as in the call (``static_argnums`` skipped); None when the stage does not say its
    arguments and outputs."""
    import jax

    try:
        args_info = lowered.args_info
        out_info = lowered.out_info
    except Exception:
        return None
    positional = args_info[0] if isinstance(args_info, tuple) and len(args_info) == 2 else ()
    outputs = Counter(
        sd for leaf in jax.tree_util.tree_leaves(out_info) if (sd := _shape_dtype(leaf))
    )
    argnums: list[int] = []
    paths: list[str] = []
    total = 0
    positions = _call_positions(len(positional), tuple(static_argnums))
    for i, arg in zip(positions, positional, strict=True):
        leaves = jax.tree_util.tree_leaves(arg)
        if not leaves or any(getattr(leaf, "donated", False) for leaf in leaves):
            continue
        need = Counter(sd for leaf in leaves if (sd := _shape_dtype(leaf)))
        if not need or any(outputs[k] < n for k, n in need.items()):
            continue
        outputs -= need
        argnums.append(i)
        paths.append(f"argument {i}")
        total += sum(_nbytes(k) * n for k, n in need.items())
    if not argnums:
        return Donation([], [], 0, "no argument has an output of its shape and dtype to reuse it")
    return Donation(
        argnums,
        paths,
        total,
        "an output of the same shape and dtype can reuse each of these arguments' buffers "
        "when the caller no longer needs them",
    )


def build_program_memory(ins: Inspection, static_argnums: tuple[int, ...] = ()) -> ProgramMemory:
    """Compile ``ins`` once with XLA's dump and read its memory (errors propagate);
    ``static_argnums`` as the call was traced with (the donation advice numbers the
    arguments as the call does)."""
    lowered = ins.lowered
    compiled, seconds, ba_text, lr_text, written = _read_dump(lowered)
    with gc_paused():
        rep = _build(ins, lowered, compiled, seconds, ba_text, lr_text, written)
    if static_argnums:
        rep.donation = donation_advice(lowered, static_argnums)
    return rep


def _build(
    ins: Inspection,
    lowered: Any,
    compiled: Any,
    seconds: float,
    ba_text: str,
    lr_text: str,
    written: int,
) -> ProgramMemory:
    assignment = parse_buffer_assignment(ba_text)
    live = parse_live_range(lr_text)
    sizes = {k: v.size for k, v in assignment.values.items()}
    notes: list[str] = []
    instructions: dict[str, HloInstruction] = {}
    try:
        module = parse_hlo(compiled.as_text())
        instructions = {i.name: i for i in module.instructions()}
    except Exception as exc:  # the figures stand without the source lines
        notes.append(f"source lines not read ({type(exc).__name__})")
    weights = {
        k: sweep_size(v, hi.shape_text if (hi := instructions.get(v.name)) else None)
        for k, v in assignment.values.items()
    }
    when = peak_moment(live.ranges, weights)
    usage = usage_by_step(live.ranges, sizes, live.steps)
    at_peak = [k for k, (s, e) in live.ranges.items() if s <= when <= e]
    peak_bytes = sum(sizes.get(k, 0) for k in at_peak)
    try:
        memory = normalize_memory(compiled.memory_analysis())
    except Exception:
        memory = MemoryAnalysis()
    buffers = []
    for k in at_peak:
        v = assignment.values.get(k)
        if v is None:
            continue
        hi = instructions.get(v.name)
        buffers.append(
            PeakBuffer(
                name=v.name if v.index == "{}" else v.name + v.index,
                shape=v.shape,
                bytes=v.size,
                role=v.role,
                opcode=hi.opcode if hi is not None else "",
                op_name=hi.op_name if hi is not None else "",
                source=hi.source if hi is not None else None,
                live=live.ranges[k],
            )
        )
    buffers.sort(key=lambda b: (-b.bytes, b.name))
    has_backward = any("transpose(" in i.op_name for i in instructions.values())
    saved: list[SavedActivations] = []
    if has_backward:
        groups: dict[tuple[Any, Any], SavedActivations] = {}
        for b in buffers:
            if b.role.startswith("parameter") or b.role == "constant" or not b.op_name:
                continue
            if "transpose(" in b.op_name:
                continue
            if b.live[1] >= live.steps:
                # live to the program's end: an output (a train step's new optimizer state,
                # made before the peak), not a value the backward pass reads and frees
                continue
            # one group per line: the 24 blocks' copies of a line are one answer
            key = b.source.key if b.source is not None else (None, b.op_name)
            g = groups.get(key)
            if g is None:
                g = groups[key] = SavedActivations(b.source, b.op_name, 0, 0)
            g.count += 1
            g.bytes += b.bytes
        saved = sorted(groups.values(), key=lambda g: -g.bytes)
    donation = donation_advice(lowered)
    if twice := counted_twice_bytes(assignment, at_peak):
        notes.append(
            f"{twice} bytes of the live-range peak are counted twice: an operation writing in "
            "place (an output into a donated argument's buffer) has its operand and its result "
            "live at the step of the write, in the same bytes; memory_analysis counts them once"
        )
    if live.reported_peak_bytes is not None and live.reported_peak_bytes != peak_bytes:
        notes.append(
            f"XLA's live-range report lists {live.reported_peak_bytes} bytes at step "
            f"{live.reported_peak_step}; these figures read {peak_bytes} at step {when}"
        )
    return ProgramMemory(
        label=ins.label,
        backend=ins.backend,
        peak_bytes=peak_bytes,
        peak_step=when,
        steps=live.steps,
        xla_reported_peak_bytes=live.reported_peak_bytes,
        memory=memory,
        buffers=buffers,
        timeline=_downsample(usage),
        donation=donation,
        saved=saved,
        has_backward=has_backward,
        compile_s=seconds,
        dump_bytes=written,
        notes=notes,
        idle_output_bytes=idle_output_bytes(assignment, at_peak),
    )


__all__ = [
    "SCHEMA_VERSION",
    "Donation",
    "MemoryDumpError",
    "PeakBuffer",
    "ProgramMemory",
    "SavedActivations",
    "build_program_memory",
    "counted_twice_bytes",
    "donation_advice",
    "idle_output_bytes",
]
