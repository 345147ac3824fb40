"""notebooks/06_xla_fusion_and_memory.ipynb teaches what its prose says: XLA fuses the
softmax (fewer kernels than StableHLO ops, the same counts XLA gives here), fused programs
move fewer bytes and run faster than op by op, the profile attributes time to the cell's
lines, memory_analysis shows the fused intermediate costs nothing and a dot's operand is
materialized, donation aliases and deletes, and the H100 section reads recorded data."""

from __future__ import annotations

import json
import re

import jax
import jax.numpy as jnp
import pytest

import workbench
from tests import tutorials
from tests.tutorials import BENCH, HLO, PROFILE

NAME = "06_xla_fusion_and_memory"
# the Binder session's: they read the run Binder's environment made (tests/tutorials.py)
pytestmark = [pytest.mark.notebook, pytest.mark.binder]

REC = tutorials.NOTEBOOKS / "data" / "h100"


@pytest.fixture(scope="module")
def r():
    return tutorials.run(NAME)


def _one(cell, mime):
    return tutorials.one(cell, mime)


def softmax(x):
    z = x - jnp.max(x, axis=-1, keepdims=True)
    e = jnp.exp(z)
    return e / jnp.sum(e, axis=-1, keepdims=True)


def _entry_fusions(text: str) -> int:
    return text[text.index("ENTRY") :].count(" fusion(")


def test_softmax_fused_into_fewer_kernels_than_stablehlo_ops(r):
    compiled = _one(r.cell("%%hlo\ndef softmax(x):"), HLO)
    x = jax.ShapeDtypeStruct((256, 1024), jnp.float32)
    lowered = jax.jit(softmax).lower(x)
    here = _entry_fusions(lowered.compile().as_text())
    assert compiled["stage"] == "compiled"
    assert compiled["counts"]["fusions"] == here
    assert 0 < compiled["counts"]["fusions"] < compiled["counts"]["stablehlo_ops"]
    assert any(
        n["kind"] == "fusion" and len(n["fused_ops"]) > 1  # several ops, one kernel
        for g in compiled["graphs"].values()
        for n in g["nodes"]
    )
    # "the division became one reciprocal per row ... followed by a multiplication"
    text = lowered.compile().as_text()
    divides = re.findall(r"= (f32\[[\d,]*\])\S* divide\(", text)
    assert divides and set(divides) == {"f32[256]"}, divides
    nodes = [n for g in compiled["graphs"].values() for n in g["nodes"]]
    assert any("divide" in n.get("fused_ops", []) and n["shape"] == "f32[256]" for n in nodes)
    assert any(
        "multiply" in n.get("fused_ops", []) and n["shape"] == "f32[256,1024]" for n in nodes
    )
    before = _one(r.cell("%hlo --stage lowered softmax"), HLO)
    assert before["stage"] == "lowered"
    assert before["counts"]["stablehlo_ops"] == compiled["counts"]["stablehlo_ops"]


def test_fused_moves_fewer_bytes_and_runs_faster(r):
    out = tutorials.printed(r.cell("x = jax.random.normal(jax.random.key(0), (256, 1024))"))
    lines = out.splitlines()
    eqns = len(jax.make_jaxpr(softmax)(jnp.ones((256, 1024))).eqns)
    assert lines[0].startswith(f"{eqns} jaxpr equations")
    unfused = float(lines[0].split(":")[1].split()[0])
    fused = float(lines[1].split(":")[1].split()[0])
    assert fused < unfused  # the prose's claim
    bench = _one(r.cell('workbench.bench({"jit (fused)"'), BENCH)
    text = "".join(
        o["data"]["text/plain"]
        for o in r.cell('workbench.bench({"jit (fused)"').outputs
        if BENCH in o.get("data", {})
    )
    assert "op by op (no jit) / jit (fused) = " in text
    ratio = float(text.split("op by op (no jit) / jit (fused) = ")[1].split("×")[0])
    assert ratio > 1.0, text  # op by op is slower
    assert bench


def test_profile_attributes_time_to_the_cells_lines(r):
    prof = _one(r.cell("%%jaxprof -n 20"), PROFILE)
    text = "".join(
        o["data"]["text/plain"]
        for o in r.cell("%%jaxprof -n 20").outputs
        if PROFILE in o.get("data", {})
    )
    assert "h = jax.nn.gelu(x @ w1 + b1)" in text and "return x + h @ w2" in text
    # "puts dot_general far ahead of the elementwise work"
    by_primitive = text.split("by jaxpr primitive:")[1].split("\n")[0]
    assert by_primitive.split()[0] == "dot_general", by_primitive
    assert "custom fusion: dot" in text  # the matmuls are kernels of their own
    assert prof


def test_memory_analysis_claims(r):
    out = tutorials.printed(r.cell("def pairwise(u, v):"))
    rows = {ln.split()[0]: ln for ln in out.splitlines() if ln.split()}

    def temp(name: str) -> float:
        return float(rows[name].split("temporaries")[1].split()[0])

    a = jnp.ones((512, 512))
    here = jax.jit(lambda a, w: jnp.tanh(a) @ w).lower(a, a).compile().memory_analysis()
    assert temp("act_then_matmul") == here.temp_size_in_bytes / 1024 == a.nbytes / 1024
    n = 1024
    pair = (
        jax.jit(lambda u, v: (u[:, None] * v[None, :]).sum(axis=1))
        .lower(jnp.ones(n), jnp.ones(n))
        .compile()
        .memory_analysis()
    )
    assert temp("pairwise") == round(pair.temp_size_in_bytes / 1024) < n * n * 4 / 1024 / 100
    shown = _one(r.cell("%hlo act_then_matmul(a, w)"), HLO)
    assert shown["memory"]["temp_bytes"] == here.temp_size_in_bytes


def test_donation_aliases_deletes_and_jaxbench_keeps_the_array(r):
    hlo = _one(r.cell("def sgd(params, grads):"), HLO)
    assert hlo["memory"]["alias_bytes"] == 512 * 512 * 4
    text = "".join(
        o["data"]["text/plain"]
        for o in r.cell("def sgd(params, grads):").outputs
        if HLO in o.get("data", {})
    )
    assert "input_output_alias" in text  # where the prose says to look
    out = tutorials.printed(r.cell("new_params = sgd_step(params, grads)"))
    assert "params deleted: True | new_params deleted: False" in out
    assert "RuntimeError: Array has been deleted" in out
    # "Its buffer now holds the result": the output reuses the donated buffer here
    params, grads = jnp.ones((512, 512)), jnp.full((512, 512), 0.5)
    before = params.unsafe_buffer_pointer()
    new = jax.jit(lambda p, g: p - 0.01 * g, donate_argnums=0)(params, grads)
    assert params.is_deleted() and new.unsafe_buffer_pointer() == before
    assert _one(r.cell("%jaxbench --budget 0.3 sgd_step"), BENCH)
    assert "after %jaxbench: False" in tutorials.printed(r.cell('print("new_params deleted'))


def _prose(r, start: str) -> str:
    return next(
        c.source for c in r.nb.cells if c.cell_type == "markdown" and c.source.startswith(start)
    )


def test_recorded_h100_section(r):
    meta = json.loads((REC / "meta.json").read_text())
    assert "H100" in meta["device_kind"] and meta["jax"] == "0.11.2"
    heading = _prose(r, "## Recorded")
    assert "NVIDIA H100" in heading and meta["jax"] in heading  # labelled as recorded
    assert "recorded on an nvidia h100" in heading.lower().replace("\n", " ")
    cell = r.cell("REC = Path(")
    prof = _one(cell, PROFILE)
    text = "".join(o["data"]["text/plain"] for o in cell.outputs if PROFILE in o.get("data", {}))
    assert "recorded on NVIDIA H100" in text and f"with JAX {meta['jax']}" in text
    assert "custom fusion: tanh, dot" in text  # the GEMM fusion the prose points at
    # what the notebook shows is what the public front door gives here
    here = workbench.profile_from_trace(
        REC / "mlp4_grad.xplane.pb", REC / "mlp4_grad.hlo.txt", calls=5, top=6
    )
    assert prof == here._repr_mimebundle_()[PROFILE]


def test_recorded_cells_use_the_public_api(r):
    """A tutorial shows how to use the workbench: no reaching into its internals."""
    for c in r.code_cells():
        assert "workbench.engine" not in c.source and "workbench.views" not in c.source, c.source


def test_gemm_fusion_computes_tanh_on_its_operand_and_is_far_below_both_roofs(r):
    prose = _prose(r, "Two things differ from the CPU above").replace("\n", " ")
    hlo = (REC / "mlp4_grad.hlo.txt").read_text()
    # "the kernel applies tanh to an operand as it loads it": a tanh of a parameter, feeding
    # the dot, inside the GEMM fusion's computation (the CPU materialized tanh(a) instead)
    bodies = re.findall(r"^%gemm_fusion\S* \(.*?^}", hlo, re.M | re.S)
    with_tanh = [b for b in bodies if " tanh(%parameter" in b]
    assert with_tanh and all(" dot(" in b for b in with_tanh)
    rep = workbench.profile_from_trace(
        REC / "mlp4_grad.xplane.pb", REC / "mlp4_grad.hlo.txt", calls=5, top=6
    ).report
    gemms = [i for i in rep.instructions if i.label == "custom fusion: tanh, dot"]
    assert len(gemms) >= 6
    peak = rep.peak
    ridge = peak.flops_per_s["float32"] / peak.bytes_per_s
    assert "148 FLOP per byte" in prose and round(ridge) == 148
    assert "under a quarter of that bandwidth" in prose
    for g in gemms[:6]:  # the rows the notebook shows
        assert g.bound == "memory" and g.intensity < ridge  # what the roofline says...
        assert g.bytes_per_s < peak.bytes_per_s / 4  # ...but not at the memory roof either
        assert 20e12 <= g.flops_per_s <= 28e12  # "20 to 27 TFLOP/s"
        assert 4.5e-6 < g.seconds < 7.5e-6  # "5 to 7 µs"
    lo, hi = (float(v) for v in re.search(r"at (\d+) to (\d+) FLOP per byte", prose).groups())
    assert {round(g.intensity) for g in gemms[:6]} <= set(range(int(lo), int(hi) + 1))


def test_recorded_matmul_flops_and_roofline(r):
    meta = json.loads((REC / "meta.json").read_text())
    assert meta["programs"]["matmul8192_bf16"]["cost_analysis"]["flops"] == -1.0
    prose = _prose(r, "The second recording").replace("\n", " ")
    # a multiply-add is 2 FLOPs: the prose's multiply-add count is half the FLOP count
    (madds,) = re.findall(r"(\S+) multiply-adds", prose)
    assert madds == "8192³" and "2 x 8192³" in prose
    cell = r.cell("meta = json.loads(")
    out = tutorials.printed(cell)
    assert "(recorded): -1.0 FLOPs" in out
    assert f"{2 * 8192**3:.4g} FLOPs (counted)" in out
    # the figures follow from the recorded trace: time of the call, FLOPs / time / peak
    rep = workbench.profile_from_trace(
        REC / "matmul8192_bf16.xplane.pb", REC / "matmul8192_bf16.hlo.txt", calls=5
    ).report
    (call,) = rep.instructions
    assert call.opcode == "custom-call" and call.flops == 2 * 8192**3
    peak = rep.peak.flops_per_s["bfloat16"]
    assert 985e12 < peak < 995e12  # "about 989 TFLOP/s"
    assert f"recorded time per call {call.seconds * 1e3:.2f} ms" in out
    assert f"{call.flops_per_s / 1e12:.0f} TFLOP/s, {call.flops_per_s / peak:.0%} of" in out
    assert f"({peak / 1e12:.1f} TFLOP/s)" in out
    assert 1.1e-3 < call.seconds < 1.3e-3  # "about 1.2 ms"
    assert call.bound == "compute" and "compute-bound" in out
    assert _one(cell, PROFILE)  # the profile itself is shown too


def test_memory_prose_says_materializing_is_the_cpus_choice(r):
    prose = _prose(r, "## Memory analysis").replace("\n", " ")
    assert "on this CPU is a library kernel" in prose
    assert "the last section shows a GPU computing the `tanh` inside" in prose


def test_recorded_data_is_small():
    total = sum(p.stat().st_size for p in REC.iterdir())
    assert total < 200_000


def test_exercises_ran_on_the_solutions(r):
    for n in (1, 2):
        assert any(f"Exercise {n}: correct" in tutorials.printed(c) for c in r.code_cells()), n
