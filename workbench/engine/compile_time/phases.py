"""Where XLA's compile time went, read from a ``jax.profiler`` trace of one compile.

XLA marks its work with TraceMe events: the HLO pass pipelines and each pass in them
(``HLO passes after layout assignment (jit_f)``, ``fusion``, ``copy-insertion``), the
backend's phases (``JitCompiler::Compile``, ``ThunkEmitter::EmitEntryComputation`` on CPU;
LLVM and PTX phases on GPU) and, on the backend's code generation threads, the MLIR passes
that compile each fusion (``CanonicalizerPass``, ``LowerToLLVMPass``).

Which thread runs the compile differs between releases (``tf_PjRtCompilerThreadPool`` in
JAX 0.10.2, the calling ``python`` thread in 0.12), so it is found by content: the line
whose events include the module's own pass pipelines (their names end with
``(module name)``).  Its outermost event around them is XLA's compile: its duration is the
wall time every share here is a fraction of.

On that line every event's *self time* (its duration less its children's) is charged to
its name.  An HLO pass pipeline and everything in it is an HLO pass; an event whose
children cover most of it is an envelope (``CompileCpuExecutable``,
``CpuCompiler::RunBackend``): its self time is the unnamed rest.  Every other event is a
backend phase.  The share of the wall that named passes and phases cover is the
*coverage*.  The other threads' events inside the compile's wall are the code generation
workers: their time is CPU time summed over threads (they run in parallel, inside a phase
of the compile thread such as ``JitCompiler::Compile``), reported as a second level.
"""

from __future__ import annotations

import re
from collections import defaultdict
from collections.abc import Iterable
from dataclasses import dataclass, field
from typing import Any

#: an event whose children cover at least this share of it only wraps them
ENVELOPE_COVERED = 0.5

HLO_PASS = "hlo-pass"
BACKEND = "backend"
MLIR_PASS = "mlir-pass"
WORKER = "worker"
OTHER = "other"


@dataclass(slots=True)
class PhaseTime:
    """One named pass or phase: its self time summed over its events."""

    name: str
    kind: str  # HLO_PASS | BACKEND | MLIR_PASS | WORKER | OTHER
    seconds: float
    share: float  # of XLA's compile wall time (worker rows: of the workers' CPU time)
    count: int

    def to_dict(self) -> dict[str, Any]:
        return {
            "name": self.name,
            "kind": self.kind,
            "seconds": self.seconds,
            "share": self.share,
            "count": self.count,
        }


@dataclass(slots=True)
class CompilePhases:
    """XLA's compile, split into what it did (see the module docstring)."""

    found: bool
    wall_s: float = 0.0  # XLA's compile: the outermost event around the pass pipelines
    line: str = ""  # the profiler line it ran on
    coverage: float = 0.0  # share of wall_s in named passes and phases
    hlo_passes_s: float = 0.0
    #: the compile thread's passes and phases, top first (self times; shares of ``wall_s``)
    phases: list[PhaseTime] = field(default_factory=list)
    #: the code generation workers' events inside the compile, top first (CPU time)
    workers: list[PhaseTime] = field(default_factory=list)
    worker_threads: int = 0
    worker_cpu_s: float = 0.0
    #: the unnamed rest: self time of envelopes and of the wall event itself
    unnamed_s: float = 0.0


@dataclass(slots=True)
class _Event:
    name: str
    start: float
    end: float
    children: list[_Event] = field(default_factory=list)
    parent: _Event | None = None

    @property
    def duration(self) -> float:
        return self.end - self.start

    def self_time(self) -> float:
        return max(0.0, self.duration - sum(c.duration for c in self.children))


def _tree(events: Iterable[Any]) -> list[_Event]:
    """The events of one line nested by time (a child lies inside its parent)."""
    items = sorted(
        (
            (float(e.start_ns), float(e.start_ns) + float(e.duration_ns), str(e.name))
            for e in events
        ),
        key=lambda t: (t[0], -t[1]),
    )
    roots: list[_Event] = []
    stack: list[_Event] = []
    for start, end, name in items:
        while stack and stack[-1].end <= start:
            stack.pop()
        ev = _Event(name, start, end, parent=stack[-1] if stack else None)
        (stack[-1].children if stack else roots).append(ev)
        stack.append(ev)
    return roots


def _walk(ev: _Event) -> Iterable[_Event]:
    todo = [ev]
    while todo:
        e = todo.pop()
        yield e
        todo.extend(e.children)


def _pipeline_re(module: str) -> re.Pattern[str]:
    return re.compile(r"\s*\(" + re.escape(module) + r"\)\s*$")


def _host_lines(profile: Any) -> Iterable[tuple[str, Any]]:
    for plane in profile.planes:
        if str(plane.name).startswith("/host:"):
            for line in plane.lines:
                yield str(line.name), line


def _is_mlir(name: str) -> bool:
    return name.endswith("Pass") or name.startswith("mlir::") or "PassAdaptor" in name


def compile_phases(profile: Any, module: str) -> CompilePhases:
    """Split the compile of HLO module ``module`` found in ``profile`` (a ``ProfileData``).

    Returns ``found=False`` when no line carries the module's pass pipelines (the compile
    was served from a cache, or this XLA names its passes differently).
    """
    tagged = _pipeline_re(module)
    best: tuple[_Event, str] | None = None
    trees: dict[int, tuple[str, list[_Event]]] = {}
    for k, (name, line) in enumerate(_host_lines(profile)):
        roots = _tree(line.events)
        trees[k] = (name, roots)
        for root in roots:
            if any(tagged.search(e.name) for e in _walk(root)):
                if best is None or root.duration > best[0].duration:
                    best = (root, name)
    if best is None:
        return CompilePhases(found=False)
    wall, line_name = best
    wall_ns = wall.duration
    by_name: dict[tuple[str, str], list[float]] = defaultdict(list)
    unnamed = wall.self_time()
    for ev in _walk(wall):
        if ev is wall:
            continue
        in_pipeline = any(tagged.search(a.name) for a in _ancestry(ev, wall))
        self_ns = ev.self_time()
        if in_pipeline:
            by_name[(HLO_PASS, tagged.sub("", ev.name))].append(self_ns)
        elif ev.children and sum(c.duration for c in ev.children) >= ENVELOPE_COVERED * (
            ev.duration
        ):
            unnamed += self_ns
        else:
            by_name[(MLIR_PASS if _is_mlir(ev.name) else BACKEND, ev.name)].append(self_ns)
    phases = [
        PhaseTime(name, kind, sum(ts) / 1e9, sum(ts) / wall_ns if wall_ns else 0.0, len(ts))
        for (kind, name), ts in by_name.items()
    ]
    phases.sort(key=lambda p: -p.seconds)
    named_ns = wall_ns - unnamed
    hlo_ns = sum(sum(ts) for (kind, _), ts in by_name.items() if kind == HLO_PASS)

    # the other lines' events inside the compile: the code generation workers
    workers: dict[tuple[str, str], list[float]] = defaultdict(list)
    threads = 0
    cpu_ns = 0.0
    for name, roots in trees.values():
        if name == line_name:
            continue
        inside = [r for r in roots if r.start >= wall.start and r.end <= wall.end]
        if not inside:
            continue
        threads += 1
        for root in inside:
            cpu_ns += root.duration
            for ev in _walk(root):
                if ev.children and sum(c.duration for c in ev.children) >= ENVELOPE_COVERED * (
                    ev.duration
                ):
                    kind = OTHER
                else:
                    kind = MLIR_PASS if _is_mlir(ev.name) else WORKER
                if kind != OTHER:
                    workers[(kind, ev.name)].append(ev.self_time())
                else:
                    workers[(OTHER, "(waiting and dispatch)")].append(ev.self_time())
    worker_rows = [
        PhaseTime(name, kind, sum(ts) / 1e9, sum(ts) / cpu_ns if cpu_ns else 0.0, len(ts))
        for (kind, name), ts in workers.items()
    ]
    worker_rows.sort(key=lambda p: -p.seconds)
    return CompilePhases(
        found=True,
        wall_s=wall_ns / 1e9,
        line=line_name,
        coverage=named_ns / wall_ns if wall_ns else 0.0,
        hlo_passes_s=hlo_ns / 1e9,
        phases=phases,
        workers=worker_rows,
        worker_threads=threads,
        worker_cpu_s=cpu_ns / 1e9,
        unnamed_s=unnamed / 1e9,
    )


def _ancestry(ev: _Event, stop: _Event) -> Iterable[_Event]:
    """``ev`` and its ancestors below ``stop``."""
    e: _Event | None = ev
    while e is not None and e is not stop:
        yield e
        e = e.parent


__all__ = [
    "BACKEND",
    "HLO_PASS",
    "MLIR_PASS",
    "OTHER",
    "WORKER",
    "CompilePhases",
    "PhaseTime",
    "compile_phases",
]
