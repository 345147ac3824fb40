"""GPU profile parsing on profiles recorded on an H100 (JAX 0.11.2), without a GPU.

tests/data/gpu/ holds the mlp4_grad profiles as recorded (with XLA's command buffers,
``cb``, and without, ``nocb``) and fixtures cut from the bigger ones by
tests/data/gpu/make_fixtures.py.  Without command buffers each kernel's ``hlo_op`` names
its instruction: that is the truth the command-buffer matching (by kernel name, in
schedule order) is checked against.
"""

from __future__ import annotations

import gzip
import json
from dataclasses import dataclass, field
from pathlib import Path

import jax
import pytest

from workbench.engine.hlo.parser import parse_hlo
from workbench.engine.profile.attribute import attribute
from workbench.engine.profile.events import (
    gpu_events,
    kernel_name,
    launch_schedule,
    match_kernels,
)
from workbench.engine.profile.store import module_key

DATA = Path(__file__).parents[1] / "data" / "gpu"


def _module(name: str):
    return parse_hlo((DATA / f"{name}.hlo.txt").read_text())


def _schedule(module):
    return launch_schedule((i.name, i.opcode) for i in module.entry.instructions)


def _profile(variant: str):
    return jax.profiler.ProfileData.from_file(str(DATA / f"mlp4_grad.{variant}.xplane.pb"))


def _raw_kernels(pd) -> list[tuple[str, dict]]:
    out = []
    for plane in pd.planes:
        if plane.name != "/device:GPU:0":
            continue
        for line in plane.lines:
            for e in line.events:
                out.append((e.start_ns, e.name, dict(e.stats)))
    return [(n, s) for _, n, s in sorted(out, key=lambda r: r[0])]


def test_nocb_hlo_op_names_instructions_of_the_module():
    module = _module("mlp4_grad")
    names = {i.name for i in module.instructions()}
    ev = gpu_events(_profile("nocb"), module.name, _schedule(module), calls=5)
    assert ev.attribution == "hlo_op" and len(ev.steps) == 5
    raw = _raw_kernels(_profile("nocb"))
    truth = [s["hlo_op"] for _, s in raw]
    got = [e.instruction for st in ev.steps for e in st.events]
    assert got == truth and set(got) <= names
    # the kernel is named after its fusion with '.' -> '_' (or after the fusion it reuses)
    for name, stats in raw:
        assert name.rstrip("_0123456789") == kernel_name(stats["hlo_op"]).rstrip("_0123456789")


def test_cb_kernels_match_by_name_in_schedule_order():
    module = _module("mlp4_grad")
    raw_cb = _raw_kernels(_profile("cb"))
    assert {s["hlo_op"] for _, s in raw_cb} == {"command_buffer_1"}  # names no instruction
    cb = gpu_events(_profile("cb"), module.name, _schedule(module), calls=5)
    nocb = gpu_events(_profile("nocb"), module.name, _schedule(module), calls=5)
    assert cb.attribution == "kernel names" and any("command buffers" in n for n in cb.notes)
    assert [len(s.events) for s in cb.steps] == [len(s.events) for s in nocb.steps]
    got = [e.instruction for st in cb.steps for e in st.events]
    want = [e.instruction for st in nocb.steps for e in st.events]
    assert got == want
    # XLA reuses one kernel for identical fusions: the names alone would not tell
    names = [e.name for e in cb.steps[0].events]
    assert len(set(names)) < len(set(got[: len(names)]))


def test_transformer24_command_buffer_matching_recovers_every_hlo_op():
    fx = json.loads(gzip.decompress((DATA / "transformer24_kernels.json.gz").read_bytes()))
    assert fx["cb_hlo_op"] == ["command_buffer_1"]
    assert fx["cb_kernels"] == fx["nocb_kernels"]  # the same kernels, in the same order
    schedule = launch_schedule((n, op) for n, op in fx["schedule"])
    matched = match_kernels(fx["cb_kernels"], schedule)
    assert [m[0] for m in matched] == fx["nocb_hlo_op"]
    assert len(matched) == fx["kernels_per_call"] > 900


@dataclass
class _Event:
    name: str
    start_ns: float
    duration_ns: float
    stats: dict


@dataclass
class _Line:
    name: str
    events: list[_Event] = field(default_factory=list)


@dataclass
class _Plane:
    name: str
    lines: list[_Line] = field(default_factory=list)


@dataclass
class _Profile:
    planes: list[_Plane]


def _from_fixture(events: list[dict]) -> _Profile:
    lines: dict[tuple[str, str], _Line] = {}
    for e in events:
        line = lines.setdefault((e["plane"], e["line"]), _Line(e["line"]))
        line.events.append(_Event(e["name"], e["start_ns"], e["duration_ns"], e["stats"]))
    planes: dict[str, _Plane] = {}
    for (plane, _), line in lines.items():
        planes.setdefault(plane, _Plane(plane)).lines.append(line)
    return _Profile(list(planes.values()))


H100 = "NVIDIA H100 80GB HBM3"


def _h100_attribute(ev, module, label: str, module_key: str, **kw):
    """``attribute`` for events recorded on the H100 the fixtures come from."""
    return attribute(
        ev, module, label=label, backend="gpu", device_kind=H100, module_key=module_key, **kw
    )


def _bf16_matmul(variant: str):
    """The 8192^2 bf16 matmul's module, its recorded kernel events (``cb``: in CUDA graphs,
    ``nocb``: launched one by one) and the five calls read from them."""
    module = _module("matmul8192_bf16")
    fx = json.loads((DATA / "matmul8192_events.json").read_text())[variant]
    return module, fx, gpu_events(_from_fixture(fx), module.name, _schedule(module), calls=5)


@pytest.mark.parametrize("variant", ["cb", "nocb"])
def test_cublas_custom_call_and_its_memset_map_to_the_instruction(variant):
    module, fx, ev = _bf16_matmul(variant)
    (call,) = [i for i in module.entry.instructions if i.opcode == "custom-call"]
    assert len(ev.steps) == 5
    for st in ev.steps:
        assert [e.instruction for e in st.events] == [call.name] * len(st.events)
        assert any(e.name.startswith("nvjet") for e in st.events)  # cuBLAS's kernel
    # with only the kernel names (command buffers), the library kernel still finds its call
    names = [e["name"] for e in fx][:2]
    assert [m[0] for m in match_kernels(names, _schedule(module))] == [call.name] * 2
    rep = _h100_attribute(ev, module, "matmul", module_key(module.name, "x"))
    kernels = [e["duration_ns"] for e in fx if e["name"].startswith("nvjet")]
    assert rep.instructions[0].name == call.name
    # the median call's kernel time: about 1.2 ms for an 8192^2 bf16 matmul on an H100
    assert rep.instructions[0].seconds == pytest.approx(
        sorted(kernels)[len(kernels) // 2] * 1e-9, rel=0.05
    )
    assert 0.9 < rep.coverage <= 1.0


def test_gpu_attribution_lines_add_up_and_coverage_is_of_the_span():
    module = _module("mlp4_grad")
    ev = gpu_events(_profile("cb"), module.name, _schedule(module), calls=5)
    rep = _h100_attribute(ev, module, "mlp", "k")
    assert sum(ln.seconds for ln in rep.lines) == pytest.approx(rep.fusion_seconds, rel=1e-12)
    assert 0 < rep.coverage <= 1.0
    # kernels overlap inside a CUDA graph: their times add up to more than the span
    assert rep.busy_s > rep.step_s and any("overlapped" in n for n in rep.notes)
    gemms = [r for r in rep.instructions if r.name.startswith("gemm_fusion")]
    assert sum(r.share for r in gemms) > 0.5  # the matmuls dominate an MLP's gradient


def test_bf16_matmul_roofline_from_our_counts_and_the_h100_peak():
    """XLA's cost_analysis says -1 FLOPs for this program; our count of the cuBLAS call and
    the measured kernel time give the roofline the issue asks for."""
    from workbench.engine.bench.peaks import peak_for
    from workbench.engine.hlo.costs import instruction_costs

    module, _, ev = _bf16_matmul("nocb")
    peak = peak_for(H100)
    rep = _h100_attribute(ev, module, "matmul", "k", costs=instruction_costs(module), peak=peak)
    row = rep.instructions[0]
    assert row.opcode == "custom-call" and row.dtype == "bfloat16"
    assert row.flops == 2 * 8192**3
    assert row.flops_per_s == pytest.approx(row.flops / row.seconds)
    assert 500e12 < row.flops_per_s < peak.flops_for("bfloat16")  # ~900 TFLOP/s, under the peak
    assert row.bound == "compute"
    assert row.intensity == pytest.approx(row.flops / row.bytes)


def test_command_buffer_kernels_of_a_while_body_are_matched_to_the_body():
    """A scan's body runs inside the entry's ``while``: its kernels must be matched to the
    body's instructions by exact name, not by family to a later entry fusion (which would
    also skip the schedule past everything in between).  The module is a real compiled scan
    (CPU names, same naming rules); the kernel sequence follows its schedule: entry
    instructions in order, the loop's condition and body instructions trip after trip."""
    import jax.numpy as jnp

    def f(w, x):
        def body(c, wi):
            return jnp.tanh(c @ wi), None

        y, _ = jax.lax.scan(body, x, w)
        return jnp.sin(y).sum()

    text = jax.jit(f).lower(jnp.ones((3, 32, 32)), jnp.ones((8, 32))).compile().as_text()
    module = parse_hlo(text)
    schedule = _schedule(module)
    truth: list[str] = []
    for name, op in schedule:
        if op != "while":
            truth.append(name)
            continue
        loop = module.entry.by_name[name]
        for _ in range(3):
            for comp in loop.called:
                truth.extend(
                    n
                    for n, _ in launch_schedule(
                        (i.name, i.opcode) for i in module.by_name[comp].instructions
                    )
                )
    assert len(truth) > len(schedule)  # the loop's instructions ran in the sequence
    kernels = [kernel_name(n) for n in truth]
    matched = match_kernels(kernels, schedule, (i.name for i in module.instructions()))
    assert [m[0] for m in matched] == truth
