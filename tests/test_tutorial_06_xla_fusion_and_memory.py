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

from tests import tutorials

pytestmark = pytest.mark.notebook

NAME = "06_xla_fusion_and_memory"
HLO = "application/vnd.jax-workbench.hlo+json"
BENCH = "application/vnd.jax-workbench.bench+json"
PROFILE = "application/vnd.jax-workbench.profile+json"
REC = tutorials.NOTEBOOKS / "data" / "h100"


@pytest.fixture(scope="module")
def r():
    return tutorials.run(NAME)


def _one(cell, mime):
    found = tutorials.data_of(cell, mime)
    assert len(found) == 1, (cell.source[:60], len(found))
    return found[0]


def softmax(x):
    z = x - jnp.max(x, axis=-1, keepdims=True)
    e = jnp.exp(z)
    return e / jnp.sum(e, axis=-1, keepdims=True)


def _entry_fusions(text: str) -> int:
    return text[text.index("ENTRY"):].count(" fusion(")


def test_softmax_fused_into_fewer_kernels_than_stablehlo_ops(r):
    compiled = _one(r.cell("%%hlo\ndef softmax(x):"), HLO)
    x = jax.ShapeDtypeStruct((256, 1024), jnp.float32)
    lowered = jax.jit(softmax).lower(x)
    here = _entry_fusions(lowered.compile().as_text())
    assert compiled["stage"] == "compiled"
    assert compiled["counts"]["fusions"] == here
    assert 0 < compiled["counts"]["fusions"] < compiled["counts"]["stablehlo_ops"]
    assert any(n["kind"] == "fusion" and len(n["fused_ops"]) > 1  # several ops, one kernel
               for g in compiled["graphs"].values() for n in g["nodes"])
    # "the division became one reciprocal per row ... followed by a multiplication"
    text = lowered.compile().as_text()
    divides = re.findall(r"= (f32\[[\d,]*\])\S* divide\(", text)
    assert divides and set(divides) == {"f32[256]"}, divides
    nodes = [n for g in compiled["graphs"].values() for n in g["nodes"]]
    assert any("divide" in n.get("fused_ops", []) and n["shape"] == "f32[256]" for n in nodes)
    assert any("multiply" in n.get("fused_ops", []) and n["shape"] == "f32[256,1024]"
               for n in nodes)
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
    text = "".join(o["data"]["text/plain"] for o in r.cell('workbench.bench({"jit (fused)"').outputs
                   if BENCH in o.get("data", {}))
    assert "op by op (no jit) / jit (fused) = " in text
    ratio = float(text.split("op by op (no jit) / jit (fused) = ")[1].split("×")[0])
    assert ratio > 1.0, text  # op by op is slower
    assert bench


def test_profile_attributes_time_to_the_cells_lines(r):
    prof = _one(r.cell("%%jaxprof -n 20"), PROFILE)
    text = "".join(o["data"]["text/plain"] for o in r.cell("%%jaxprof -n 20").outputs
                   if PROFILE in o.get("data", {}))
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
    pair = jax.jit(lambda u, v: (u[:, None] * v[None, :]).sum(axis=1)).lower(
        jnp.ones(n), jnp.ones(n)).compile().memory_analysis()
    assert temp("pairwise") == round(pair.temp_size_in_bytes / 1024) < n * n * 4 / 1024 / 100
    shown = _one(r.cell("%hlo act_then_matmul(a, w)"), HLO)
    assert shown["memory"]["temp_bytes"] == here.temp_size_in_bytes


def test_donation_aliases_deletes_and_jaxbench_keeps_the_array(r):
    hlo = _one(r.cell("def sgd(params, grads):"), HLO)
    assert hlo["memory"]["alias_bytes"] == 512 * 512 * 4
    text = "".join(o["data"]["text/plain"] for o in r.cell("def sgd(params, grads):").outputs
                   if HLO in o.get("data", {}))
    assert "input_output_alias" in text  # where the prose says to look
    out = tutorials.printed(r.cell("new_params = sgd_step(params, grads)"))
    assert "params deleted: True | new_params deleted: False" in out
    assert "RuntimeError: Array has been deleted" in out
    assert _one(r.cell("%jaxbench --budget 0.3 sgd_step"), BENCH)
    assert "after %jaxbench: False" in tutorials.printed(r.cell('print("new_params deleted'))


def test_recorded_h100_section(r):
    meta = json.loads((REC / "meta.json").read_text())
    assert "H100" in meta["device_kind"] and meta["jax"] == "0.11.2"
    heading = next(c.source for c in r.nb.cells if c.cell_type == "markdown"
                   and c.source.startswith("## Recorded"))
    assert "NVIDIA H100" in heading and meta["jax"] in heading  # labelled as recorded
    prof = _one(r.cell("# the workbench's profile engine"), PROFILE)
    text = "".join(o["data"]["text/plain"] for o in r.cell("# the workbench's profile engine").outputs
                   if PROFILE in o.get("data", {}))
    assert "recorded on an NVIDIA H100" in text and "gpu" in text
    assert "custom fusion: tanh, dot" in text  # the GEMM fusion the prose points at
    assert prof
    out = tutorials.printed(r.cell("from workbench.engine.bench.peaks import roofline"))
    assert meta["programs"]["matmul8192_bf16"]["cost_analysis"]["flops"] == -1.0
    assert "(recorded): -1.0 FLOPs" in out
    assert f"{2 * 8192 ** 3:.4g} FLOPs (counted)" in out
    assert "compute-bound" in out


def test_recorded_data_is_small():
    total = sum(p.stat().st_size for p in REC.iterdir())
    assert total < 200_000


def test_exercises_ran_on_the_solutions(r):
    for n in (1, 2):
        assert any(f"Exercise {n}: correct" in tutorials.printed(c) for c in r.code_cells()), n
