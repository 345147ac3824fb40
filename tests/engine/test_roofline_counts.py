"""The roofline with our own counts: where XLA reports nothing or a negative sentinel,
``%jaxbench`` uses our count of the optimized HLO, against the peak of the dtype doing
the FLOPs, and says so; a sentinel never shows as a number."""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

import jax
import jax.numpy as jnp
import pytest

import workbench.engine.bench.runner as runner
from workbench import schemas
from workbench.engine.bench.peaks import peak_for, roofline
from workbench.engine.common.analysis import CostAnalysis, normalize_cost
from workbench.engine.hlo.costs import program_cost
from workbench.engine.hlo.parser import parse_hlo
from workbench.views.bench import BENCH_MIME, bench_text

GPU = Path(__file__).parents[1] / "data" / "gpu"
#: the 8192² bf16 matmul's median measured on an H100 (1.49 ms ≈ 740 TFLOP/s)
H100_MATMUL_S = 1.49e-3
SENTINEL = {
    "flops": -1.0,
    "bytes accessed": -1.0,
    "bytes accessed0{}": -1.0,
    "bytes accessedout{}": -1.0,
    "optimal_seconds": -1.0,
}


def _recorded(name: str) -> tuple[Any, CostAnalysis, str]:
    meta = json.loads((GPU / "meta.json").read_text())
    return (
        parse_hlo((GPU / f"{name}.hlo.txt").read_text()),
        normalize_cost(meta["programs"][name]["cost_analysis"]),
        meta["device_kind"],
    )


def _negative_numbers(value: Any) -> list[float]:
    if isinstance(value, bool):
        return []
    if isinstance(value, (int, float)):
        return [value] if value < 0 else []
    if isinstance(value, dict):
        return [x for v in value.values() for x in _negative_numbers(v)]
    if isinstance(value, (list, tuple)):
        return [x for v in value for x in _negative_numbers(v)]
    return []


def test_recorded_h100_matmul_is_compute_bound_at_about_740_tflops() -> None:
    module, xla, kind = _recorded("matmul8192_bf16")
    assert xla.flops is None and xla.bytes_accessed is None  # XLA said -1: not counted
    n = module.entry.parameters[0].shape[0].dims[0]
    counts = program_cost(module, xla)
    # the arguments' dtype is only a fallback: the dtype of the dot's operands decides
    r = roofline(xla, H100_MATMUL_S, kind, "float32", counts=counts)
    assert r.flops == 2 * n**3 and (r.flops_source, r.bytes_source) == ("counted", "counted")
    assert r.flops_per_s == pytest.approx(2 * n**3 / H100_MATMUL_S)
    assert r.flops_per_s == pytest.approx(740e12, rel=0.01)
    peak = peak_for(kind)
    assert peak is not None and r.dtype == "bfloat16"
    assert r.peak_flops_per_s == peak.flops["bfloat16"]
    assert r.bound == "compute" and r.intensity is not None
    assert r.intensity > peak.flops["bfloat16"] / (peak.bytes_per_s or 1)
    assert r.flops_fraction == pytest.approx(r.flops_per_s / peak.flops["bfloat16"])
    assert "XLA did not count" in r.note
    assert r.source_text == "our count of the optimized HLO"


def test_recorded_mlp_gradient_keeps_xlas_figures_and_the_f32_peak() -> None:
    module, xla, kind = _recorded("mlp4_grad")
    r = roofline(xla, 1e-4, kind, "float32", counts=program_cost(module, xla))
    assert (r.flops, r.bytes_accessed) == (xla.flops, xla.bytes_accessed)
    assert (r.flops_source, r.bytes_source, r.dtype) == ("xla", "xla", "float32")
    peak = peak_for(kind)
    assert peak is not None and r.peak_flops_per_s == peak.flops["float32"]


def test_sentinel_without_our_count_is_not_a_number() -> None:
    cost = normalize_cost(SENTINEL)
    r = roofline(cost, H100_MATMUL_S, "NVIDIA H100 80GB HBM3", "bfloat16")
    assert r.flops is None and r.bytes_accessed is None and r.flops_per_s is None
    assert r.flops_source == "unknown" and "XLA did not count" in r.note
    assert not _negative_numbers(r.to_dict())


class _SentinelInspection:
    """The real inspection of the call, with the cost analysis and device an H100 gave
    for a cuBLAS matmul: XLA's -1 placeholders."""

    def __init__(self, real: Any) -> None:
        self._real = real

    def __getattr__(self, name: str) -> Any:
        return getattr(self._real, name)

    @property
    def cost(self) -> CostAnalysis:
        return normalize_cost(SENTINEL)

    @property
    def device_kinds(self) -> list[str]:
        return ["NVIDIA H100 80GB HBM3"]


def test_jaxbench_uses_our_count_when_xla_gives_a_sentinel(run, shell, monkeypatch) -> None:
    real_inspect = runner.inspect
    monkeypatch.setattr(
        runner, "inspect", lambda fn, *a, **k: _SentinelInspection(real_inspect(fn, *a, **k))
    )
    f = jax.jit(lambda a, b: jnp.tanh(a @ b))
    a, b = jnp.ones((96, 64)), jnp.ones((64, 80))
    compiled = f.lower(a, b).compile()
    xla = normalize_cost(compiled.cost_analysis())
    assert xla.flops and xla.flops > 0
    shell.user_ns.update(f=f, a=a, b=b)
    r = run("%jaxbench --budget 0.2 f(a, b)")
    assert r.error is None, r.stdout
    rec = r.bundle[BENCH_MIME]
    schemas.validate(BENCH_MIME, rec)
    roof = rec["measurements"][0]["roofline"]
    assert (roof["flops_source"], roof["bytes_source"]) == ("counted", "counted")
    assert roof["flops"] == pytest.approx(xla.flops, rel=0.05)  # ours, where XLA counted it
    assert roof["bytes_accessed"] == pytest.approx(xla.bytes_accessed, rel=0.05)
    assert roof["peak_name"] == "NVIDIA H100 SXM" and roof["dtype"] == "float32"
    assert not _negative_numbers(rec)
    text, html = r.bundle["text/plain"], r.bundle["text/html"]
    for shown in (text, html):
        assert not re.search(r"(?<![\w.#&-])-\d", shown.replace("e-", "e"))
    assert "figures from our count of the optimized HLO" in text
    assert "XLA did not count" in text
    assert "our count" in html


def test_jaxbench_on_cpu_keeps_xlas_figures_and_says_so(run, shell) -> None:
    f = jax.jit(lambda a, b: a @ b)
    a, b = jnp.ones((64, 48)), jnp.ones((48, 32))
    xla = normalize_cost(f.lower(a, b).compile().cost_analysis())
    shell.user_ns.update(f=f, a=a, b=b)
    r = run("%jaxbench --budget 0.2 f(a, b)")
    assert r.error is None, r.stdout
    roof = r.bundle[BENCH_MIME]["measurements"][0]["roofline"]
    assert (roof["flops"], roof["flops_source"]) == (xla.flops, "xla")
    assert "figures from XLA's cost analysis" in r.bundle["text/plain"]
    assert "figures from XLA's cost analysis" in bench_text(r.result.result.record)


def test_jaxbench_on_cpu_with_a_lapack_call_uses_our_count(run, shell) -> None:
    """A real sentinel on CPU: XLA reports -1 FLOPs for a program with a LAPACK
    triangular solve; the roofline shows our count and says so."""
    from jax import lax

    f = jax.jit(lambda a, b: lax.linalg.triangular_solve(a, b, left_side=True, lower=True))
    a, b = jnp.eye(64) + jnp.tril(jnp.ones((64, 64))) * 0.01, jnp.ones((64, 8))
    compiled = f.lower(a, b).compile()
    xla = normalize_cost(compiled.cost_analysis())
    assert xla.flops is None and xla.notes
    ours = program_cost(parse_hlo(compiled.as_text()), xla)
    shell.user_ns.update(f=f, a=a, b=b)
    r = run("%jaxbench --budget 0.2 f(a, b)")
    assert r.error is None, r.stdout
    rec = r.bundle[BENCH_MIME]
    roof = rec["measurements"][0]["roofline"]
    assert roof["flops"] == ours.flops and roof["flops_source"] == "counted"
    assert roof["flops_per_s"] == pytest.approx(ours.flops / roof["seconds"])
    assert not _negative_numbers(rec)
    assert "figures from our count of the optimized HLO" in r.bundle["text/plain"]


def test_schemas_refuse_a_negative_sentinel_as_a_figure() -> None:
    """A record carrying XLA's -1 as a figure (an older writer, a hand-made payload) must
    not validate: the extension would print it as a number."""
    import jsonschema

    import workbench
    from workbench.engine.hlo.report import build_hlo_report
    from workbench.views.hlo import hlo_record

    rep = build_hlo_report(workbench.inspect(lambda a: a * 2, jnp.ones((4,))))
    rec = hlo_record(rep)
    schemas.validate(schemas.mime_type("hlo"), rec)
    for key in ("flops", "transcendentals", "bytes_accessed", "optimal_seconds"):
        bad = {**rec, "cost": {**rec["cost"], key: -1.0}}
        with pytest.raises(jsonschema.ValidationError):
            schemas.validate(schemas.mime_type("hlo"), bad)
    module, xla, kind = _recorded("matmul8192_bf16")
    roof = roofline(
        xla, H100_MATMUL_S, kind, "bfloat16", counts=program_cost(module, xla)
    ).to_dict()
    sub = json.loads((Path(schemas.__file__).parent / "bench.schema.json").read_text())
    check = jsonschema.Draft202012Validator({**sub["$defs"]["roofline"], "$defs": sub["$defs"]})
    assert not list(check.iter_errors(roof))
    for key in ("flops", "bytes_accessed"):
        assert list(check.iter_errors({**roof, key: -1.0})), key


def test_fp8_matmul_on_hopper_is_held_against_the_fp8_peak() -> None:
    """An f8 cuBLAS matmul's FLOPs are f8 FLOPs: on an H100 their peak is twice bf16's,
    so a realistic 1.5 PFLOP/s must not read as 150% of the (bf16) peak."""
    n = 8192
    cfg = (
        '{"gemm_backend_config":{"dot_dimension_numbers":{"lhs_contracting_dimensions":["1"],'
        '"rhs_contracting_dimensions":["0"],"lhs_batch_dimensions":[],'
        '"rhs_batch_dimensions":[]}}}'
    )
    text = (
        f"HloModule m\n\nENTRY %main (a: f8e4m3fn[{n},{n}], b: f8e4m3fn[{n},{n}]) -> "
        f"bf16[{n},{n}] {{\n  %a = f8e4m3fn[{n},{n}]{{1,0}} parameter(0)\n"
        f"  %b = f8e4m3fn[{n},{n}]{{1,0}} parameter(1)\n"
        f"  %s = f32[] constant(1)\n"
        f"  %g = (bf16[{n},{n}]{{1,0}}, s8[33554432]{{0}}) custom-call(%a, %b, %s, %s), "
        f'custom_call_target="__cublas$lt$matmul$f8", backend_config={cfg}\n'
        f"  ROOT %r = bf16[{n},{n}]{{1,0}} get-tuple-element(%g), index=0\n}}\n"
    )
    module = parse_hlo(text)
    xla = normalize_cost(SENTINEL)
    counts = program_cost(module, xla)
    assert counts.flops == 2 * n**3 and counts.dtype == "float8_e4m3fn"
    seconds = 2 * n**3 / 1.5e15
    r = roofline(xla, seconds, "NVIDIA H100 80GB HBM3", "bfloat16", counts=counts)
    peak = peak_for("NVIDIA H100 80GB HBM3")
    assert peak is not None and r.peak_flops_per_s is not None
    assert r.peak_flops_per_s > peak.flops["bfloat16"]
    assert r.flops_fraction is not None and r.flops_fraction < 1


def test_jaxbench_with_only_bytes_counted_reads_plainly(run, shell) -> None:
    """CPU's TopK custom call: XLA says -1 for everything, ours counts the bytes but not
    the FLOPs.  The roofline says where the bytes came from without garbling it into
    "figures from bytes from ...", and shows no FLOP figure."""
    from jax import lax

    f = jax.jit(lambda x: lax.top_k(x, 5))
    x = jnp.ones((100, 300))
    compiled = f.lower(x).compile()
    xla = normalize_cost(compiled.cost_analysis())
    ours = program_cost(parse_hlo(compiled.as_text()), xla)
    assert xla.flops is None and ours.flops is None and ours.bytes_source == "counted"
    shell.user_ns.update(f=f, x=x)
    r = run("%jaxbench --budget 0.2 f(x)")
    assert r.error is None, r.stdout
    roof = r.bundle[BENCH_MIME]["measurements"][0]["roofline"]
    assert (roof["flops"], roof["flops_source"]) == (None, "unknown")
    assert roof["bytes_accessed"] == ours.bytes and roof["bytes_source"] == "counted"
    for shown in (r.bundle["text/plain"], r.bundle["text/html"]):
        assert "bytes from our count of the optimized HLO" in shown
        assert "figures from bytes" not in shown and "figures from FLOPs" not in shown
