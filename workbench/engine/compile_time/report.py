"""The record behind ``%%jaxprof --compile``: where one real compile of a call spent its time.

Plain data (views draw it, ``to_dict`` is the JSON payload's body).  Times are seconds of
one compile; the phases' shares are fractions of XLA's compile wall time, the workers'
of their summed CPU time, the lines' of the program's equations and instructions.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from workbench.engine.compile_time.phases import CompilePhases
from workbench.engine.compile_time.sizes import ProgramSize

SCHEMA_VERSION = 1


@dataclass(slots=True)
class CompileTimeReport:
    label: str
    backend: str
    module: str  # XLA's module name (``jit_loss``)
    trace_s: float
    lower_s: float
    compile_s: float  # the compile call as the caller timed it (profiler running)
    phases: CompilePhases
    size: ProgramSize
    #: whether JAX's persistent compilation cache was kept out of this compile
    cache_bypassed: bool = True
    notes: list[str] = field(default_factory=list)

    def to_dict(self) -> dict[str, Any]:
        p = self.phases
        return {
            "label": self.label,
            "backend": self.backend,
            "module": self.module,
            "trace_s": self.trace_s,
            "lower_s": self.lower_s,
            "compile_s": self.compile_s,
            "xla": {
                "found": p.found,
                "wall_s": p.wall_s,
                "line": p.line,
                "coverage": p.coverage,
                "hlo_passes_s": p.hlo_passes_s,
                "unnamed_s": p.unnamed_s,
                "phases": [x.to_dict() for x in p.phases],
                "workers": [x.to_dict() for x in p.workers],
                "worker_threads": p.worker_threads,
                "worker_cpu_s": p.worker_cpu_s,
            },
            "size": {
                "equations": self.size.equations,
                "instructions": self.size.instructions,
                "lines": [ln.to_dict() for ln in self.size.lines],
                "loops": [lp.to_dict() for lp in self.size.loops],
            },
            "cache_bypassed": self.cache_bypassed,
            "notes": list(self.notes),
        }


__all__ = ["SCHEMA_VERSION", "CompileTimeReport"]
