"""The record behind ``%%hlo``: what XLA made of one call, as plain data.

Built from an :class:`~workbench.engine.stages.Inspection`: the module text
of the requested stage, its parse (or the reason it could not be parsed, in
which case views fall back to the text), fusion/dataflow graphs of the entry
and of control-flow bodies, collectives, op counts before and after
optimization, and the compile facts a user asks first (backend, device kind,
stage times, ``cost_analysis`` and ``memory_analysis``, with ``None`` meaning
"not reported by this backend").
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from workbench.engine.common.analysis import CostAnalysis, MemoryAnalysis
from workbench.engine.common.gcpause import gc_paused
from workbench.engine.hlo.graph import Collective, DataflowGraph, control_graphs, find_collectives
from workbench.engine.hlo.model import HloModule, HloParseError
from workbench.engine.hlo.parser import parse_hlo
from workbench.engine.hlo.stablehlo import StableHloText, parse_stablehlo
from workbench.engine.profile.store import measured, module_key
from workbench.engine.stages import Inspection

SCHEMA_VERSION = 3
STAGES = ("compiled", "lowered")


@dataclass
class HloReport:
    label: str
    stage: str  # "compiled" (optimized HLO) or "lowered" (StableHLO)
    text: str  # the raw text of the stage, exactly as JAX prints it
    backend: str
    device_kinds: list[str]
    device_count: int
    trace_s: float | None
    lower_s: float | None
    compile_s: float | None
    stablehlo: StableHloText | None = None
    module: HloModule | None = None
    parse_error: str | None = None
    graphs: dict[str, DataflowGraph] = field(default_factory=dict)
    collectives: list[Collective] = field(default_factory=list)
    cost: CostAnalysis = field(default_factory=CostAnalysis)
    memory: MemoryAnalysis = field(default_factory=MemoryAnalysis)
    fusion: bool = True
    #: the compiled module's key in the profile store (name + hash of the optimized HLO)
    module_key: str = ""
    #: measured device time (seconds per call) by instruction, when ``%%jaxprof`` profiled
    #: this very module in this session; the diagram is then coloured by it
    measured: dict[str, float] | None = None
    measured_note: str = ""

    # -- derived counts ----------------------------------------------------------------
    @property
    def stablehlo_op_count(self) -> int | None:
        return self.stablehlo.op_count if self.stablehlo is not None else None

    @property
    def hlo_op_count(self) -> int | None:
        """Instructions of the optimized module, fused computations included."""
        if self.module is None:
            return None
        return sum(len(c.instructions) for c in self.module.computations)

    @property
    def fusion_count(self) -> int | None:
        if self.module is None:
            return None
        return sum(
            1
            for c in self.module.computations
            if c.role != "fused"
            for i in c.instructions
            if i.opcode == "fusion"
        )

    @property
    def unfused_op_count(self) -> int | None:
        """Real work outside fusions: not fusions, not parameters/constants/tuples/bitcasts."""
        if self.module is None:
            return None
        quiet = {
            "fusion",
            "parameter",
            "constant",
            "tuple",
            "get-tuple-element",
            "bitcast",
            "async-update",
            "async-done",
        }
        return sum(
            1
            for c in self.module.computations
            if c.role in ("entry", "control")
            for i in c.instructions
            if i.opcode not in quiet and not i.opcode.endswith("-done")
        )

    def to_dict(self, *, include_module: bool = True) -> dict[str, Any]:
        d: dict[str, Any] = {
            "version": SCHEMA_VERSION,
            "label": self.label,
            "stage": self.stage,
            "backend": self.backend,
            "device_kinds": self.device_kinds,
            "device_count": self.device_count,
            "timings": {
                "trace_s": self.trace_s,
                "lower_s": self.lower_s,
                "compile_s": self.compile_s,
            },
            "counts": {
                "stablehlo_ops": self.stablehlo_op_count,
                "hlo_instructions": self.hlo_op_count,
                "fusions": self.fusion_count,
                "unfused_ops": self.unfused_op_count,
            },
            "cost": self.cost.to_dict(),
            "memory": self.memory.to_dict(),
            "parse_error": self.parse_error,
            "collectives": [c.to_dict() for c in self.collectives],
            "graphs": {k: g.to_dict() for k, g in self.graphs.items()},
        }
        if include_module and self.module is not None:
            d["module"] = {
                "name": self.module.name,
                "problems": self.module.problems,
                # fused bodies are many and small: compact rows [name, opcode, shape,
                # operands] (their fusion node in "graphs" carries ops/sources already)
                "computations": [
                    {
                        "name": c.name,
                        "entry": c.is_entry,
                        "role": c.role,
                        "lines": [c.first_line, c.last_line],
                        "instructions": [i.to_dict() for i in c.instructions]
                        if c.role != "fused"
                        else [
                            [i.name, i.opcode, i.short_shape, i.operands] for i in c.instructions
                        ],
                    }
                    for c in self.module.computations
                ],
            }
        return d


class HloOptionError(ValueError):
    """A combination of options that cannot be honoured (the front doors show it as usage)."""


def fusion_for(stage: str, fusion: bool | None) -> bool:
    """The fusion rule, decided once: the diagram is drawn by default for the compiled stage
    (fusions are made by XLA's optimization passes), never for the lowered one."""
    if stage not in STAGES:
        raise HloOptionError(f"stage must be one of {', '.join(STAGES)}, got {stage!r}")
    if fusion is None:
        return stage == "compiled"
    if fusion and stage != "compiled":
        raise HloOptionError(
            "--fusion needs --stage compiled: fusions are made by XLA's "
            "optimization passes, after lowering"
        )
    return fusion


def build_hlo_report(
    ins: Inspection, stage: str = "compiled", fusion: bool | None = None
) -> HloReport:
    """See :func:`_build`; ``fusion=None`` applies :func:`fusion_for`'s default.  The parse
    allocates ~10^5 small objects, so the cyclic GC (which would rescan them all,
    repeatedly) is paused meanwhile."""
    use_fusion = fusion_for(stage, fusion)
    with gc_paused():
        return _build(ins, stage, use_fusion)


def _build(ins: Inspection, stage: str, fusion: bool) -> HloReport:
    """Run the stages ``stage`` needs (errors propagate: the caller reports them) and parse.

    Parsing never raises: a module we cannot read becomes ``parse_error`` and the
    views show the text with a note.
    """
    ins.lowered  # noqa: B018 - trace + lower, errors surface to the caller
    stablehlo = None
    try:
        stablehlo = parse_stablehlo(ins.stablehlo_debug_text)
    except Exception:  # a printing/parsing surprise must not cost the user the view
        stablehlo = None
    if stage == "lowered":
        return HloReport(
            label=ins.label,
            stage=stage,
            text=ins.stablehlo_text,
            backend=ins.backend,
            device_kinds=ins.device_kinds,
            device_count=(stablehlo.num_partitions * stablehlo.num_replicas) if stablehlo else 1,
            trace_s=ins.timings.trace,
            lower_s=ins.timings.lower,
            compile_s=None,
            stablehlo=stablehlo,
            fusion=False,
        )
    ins.compiled  # noqa: B018
    report = HloReport(
        label=ins.label,
        stage=stage,
        text=ins.hlo_text,
        backend=ins.backend,
        device_kinds=ins.device_kinds,
        device_count=len(ins.devices),
        trace_s=ins.timings.trace,
        lower_s=ins.timings.lower,
        compile_s=ins.timings.compile,
        stablehlo=stablehlo,
        cost=ins.cost,
        memory=ins.memory,
        fusion=fusion,
    )
    try:
        report.module = parse_hlo(report.text)
    except HloParseError as exc:
        report.parse_error = str(exc)
        return report
    except Exception as exc:  # never into the user's cell
        report.parse_error = f"{type(exc).__name__}: {exc}"
        return report
    report.module_key = module_key(report.module.name, report.text)
    prof = measured(report.module_key)
    if prof is not None:
        report.measured = prof.measured_by_instruction()
        report.measured_note = (
            f"{prof.calls} profiled calls on {prof.device_kind}, median "
            f"step {prof.step_s * 1e3:.3g} ms"
        )
    try:
        report.collectives = find_collectives(report.module)
        if fusion:
            report.graphs = control_graphs(report.module)
    except Exception as exc:
        report.parse_error = f"diagram not built ({type(exc).__name__}: {exc})"
        report.graphs = {}
    return report


__all__ = ["SCHEMA_VERSION", "STAGES", "HloReport", "build_hlo_report"]
