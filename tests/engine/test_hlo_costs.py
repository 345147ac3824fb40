"""Our FLOP/byte counts (workbench.engine.hlo.costs) against XLA's own cost analysis.

On CPU XLA reports for everything, so each program's expected figures are XLA's
``cost_analysis()`` of the same compiled program: our count must land within 5%.
GPU custom calls (cuBLAS, cuDNN) XLA does not count; there the expectations are
hand counts on the optimized HLO recorded on an H100 (tests/data/gpu/), or XLA's
CPU count of the equivalent HLO dot/convolution.
"""

from __future__ import annotations

import json
import math
import re
from pathlib import Path
from typing import Any

import jax
import jax.numpy as jnp
import numpy as np
import pytest
from jax import lax

from workbench.engine.common.analysis import CostAnalysis, normalize_cost
from workbench.engine.hlo.costs import instruction_costs, program_cost
from workbench.engine.hlo.model import HloModule
from workbench.engine.hlo.parser import parse_hlo

GPU = Path(__file__).parents[1] / "data" / "gpu"
REL = 0.05


def _r(*shape: int, dtype: Any = jnp.float32, seed: int = 0) -> jax.Array:
    # numpy, not jax.random: no compile per shape while the module is collected
    return jnp.asarray(np.random.default_rng(seed).standard_normal(shape), dtype)


def _conv(
    x: jax.Array,
    w: jax.Array,
    stride: tuple[int, ...] = (1, 1),
    pad: Any = "SAME",
    groups: int = 1,
    lhs_dil: Any = None,
    rhs_dil: Any = None,
) -> jax.Array:
    return lax.conv_general_dilated(
        x, w, stride, pad, lhs_dilation=lhs_dil, rhs_dilation=rhs_dil, feature_group_count=groups
    )


def _mlp_loss(ws: list[jax.Array], x: jax.Array) -> jax.Array:
    for w in ws:
        x = jnp.tanh(x @ w)
    return jnp.sum(x**2)


#: name -> (function, arguments); each a different counting rule
PROGRAMS: dict[str, tuple[Any, tuple[Any, ...]]] = {
    "batched dot": (lambda a, b: jnp.einsum("bij,bjk->bik", a, b), (_r(8, 64, 32), _r(8, 32, 48))),
    "two batch dims": (
        lambda a, b: jnp.einsum("bhij,bhjk->bhik", a, b),
        (_r(2, 4, 64, 32), _r(2, 4, 32, 16)),
    ),
    "matrix-vector": (lambda a, b: a @ b, (_r(300, 200), _r(200))),
    "bf16 dot": (
        lambda a, b: a @ b,
        (_r(128, 256, dtype=jnp.bfloat16), _r(256, 64, dtype=jnp.bfloat16)),
    ),
    "conv SAME": (_conv, (_r(2, 3, 16, 16), _r(8, 3, 3, 3))),
    "conv VALID": (lambda x, w: _conv(x, w, pad="VALID"), (_r(2, 3, 16, 16), _r(8, 3, 3, 3))),
    "conv strided": (lambda x, w: _conv(x, w, (2, 2)), (_r(2, 4, 17, 17), _r(8, 4, 3, 3))),
    "conv grouped": (lambda x, w: _conv(x, w, groups=4), (_r(2, 8, 16, 16), _r(16, 2, 3, 3))),
    "conv depthwise": (lambda x, w: _conv(x, w, groups=8), (_r(2, 8, 16, 16), _r(8, 1, 5, 5))),
    "conv dilated": (lambda x, w: _conv(x, w, rhs_dil=(2, 2)), (_r(2, 4, 16, 16), _r(8, 4, 3, 3))),
    "conv transposed": (
        lambda x, w: _conv(x, w, pad=((2, 2), (2, 2)), lhs_dil=(2, 2)),
        (_r(2, 4, 8, 8), _r(8, 4, 3, 3)),
    ),
    "conv 1-d": (
        lambda x, w: lax.conv_general_dilated(x, w, (1,), "SAME"),
        (_r(4, 6, 50), _r(10, 6, 7)),
    ),
    "conv 3-d": (
        lambda x, w: lax.conv_general_dilated(x, w, (1, 1, 1), "SAME"),
        (_r(1, 2, 8, 8, 8), _r(4, 2, 3, 3, 3)),
    ),
    "conv gradient": (
        lambda x, w: jax.grad(lambda x, w: jnp.sum(_conv(x, w, (2, 2)) ** 2), argnums=(0, 1))(x, w),
        (_r(2, 4, 16, 16), _r(8, 4, 3, 3)),
    ),
    "element-wise chain": (
        lambda x: jnp.tanh(x * 2 + 1) / (x * x + 1) - jnp.exp(-x),
        (_r(1000, 50),),
    ),
    "reductions": (lambda x: (x.sum(0), x.max(1), x.mean()), (_r(300, 70),)),
    "argmax (variadic reduce)": (lambda x: jnp.argmax(x, axis=1), (_r(100, 30),)),
    "softmax": (lambda x: jax.nn.softmax(x, axis=-1), (_r(64, 100),)),
    "layer norm": (
        lambda x: (x - x.mean(-1, keepdims=True)) * lax.rsqrt(x.var(-1, keepdims=True) + 1e-5),
        (_r(128, 256),),
    ),
    "sort": (jnp.sort, (_r(100, 30),)),
    "scatter-add": (lambda x, i, u: x.at[i].add(u), (_r(100, 8), jnp.arange(20) % 7, _r(20, 8))),
    "max pool": (
        lambda x: lax.reduce_window(x, -jnp.inf, lax.max, (1, 1, 2, 2), (1, 1, 2, 2), "VALID"),
        (_r(2, 3, 16, 16),),
    ),
    "max pool gradient (select-and-scatter)": (
        jax.grad(
            lambda x: jnp.sum(
                lax.reduce_window(x, -jnp.inf, lax.max, (1, 1, 3, 3), (1, 1, 2, 2), "SAME")
            )
        ),
        (_r(2, 3, 16, 16),),
    ),
    "2-layer MLP gradient": (jax.grad(_mlp_loss), ([_r(64, 64), _r(64, 64, seed=1)], _r(32, 64))),
    # XLA counts the part of an operand a slice reads, not the whole operand
    "slice": (lambda x: x[:10, :5] * 2, (_r(1000, 100),)),
    "dynamic slice": (lambda x, i: lax.dynamic_slice(x, (i, 0), (10, 100)), (_r(1000, 100), 3)),
    "dynamic-update-slice": (
        lambda x, u, i: lax.dynamic_update_slice(x, u, (i, 0)),
        (_r(1000, 100), _r(1, 100), 3),
    ),
    "gather rows": (lambda x, i: x[i] + 1, (_r(1000, 100), jnp.arange(5))),
    "large constant": (
        lambda x: x * jnp.asarray(np.arange(400.0).reshape(20, 20), jnp.float32),
        (_r(20, 20),),
    ),
}


def _compiled(fn: Any, *args: Any) -> tuple[HloModule, CostAnalysis]:
    c = jax.jit(fn).lower(*args).compile()
    return parse_hlo(c.as_text()), normalize_cost(c.cost_analysis())


@pytest.mark.parametrize("name", list(PROGRAMS))
def test_counts_match_xla_on_cpu(name: str) -> None:
    fn, args = PROGRAMS[name]
    module, xla = _compiled(fn, *args)
    assert xla.flops and xla.flops > 0, "XLA must report on CPU for the comparison to mean anything"
    ours = program_cost(module, None)
    assert ours.flops_source == "counted" and not ours.uncounted
    assert ours.counted_flops == pytest.approx(xla.flops, rel=REL), name
    assert ours.counted_transcendentals == pytest.approx(
        xla.transcendentals or 0.0, rel=REL, abs=0.5
    )
    assert ours.counted_bytes == pytest.approx(xla.bytes_accessed, rel=REL), name
    # with XLA's figures at hand, XLA's are the ones given
    both = program_cost(module, xla)
    assert (both.flops, both.flops_source, both.bytes_source) == (xla.flops, "xla", "xla")


def test_instruction_costs_add_up_and_fusions_count_their_bodies() -> None:
    a, b = _r(8, 64, 32), _r(8, 32, 48)
    module, xla = _compiled(lambda a, b: jnp.tanh(jnp.einsum("bij,bjk->bik", a, b)).sum(1), a, b)
    costs = instruction_costs(module)
    entry = module.entry
    assert set(costs) == {i.name for i in entry.instructions}
    assert sum(c.flops or 0 for c in costs.values()) == program_cost(module, None).counted_flops
    dots = [
        i
        for c in module.computations
        if c.role == "fused"
        for i in c.instructions
        if i.opcode == "dot"
    ]
    assert len(dots) == 1
    holder = next(
        i
        for i in entry.instructions
        if i.opcode == "fusion"
        and dots[0].name in {x.name for x in module.by_name[i.called[0]].instructions}
    )
    b_, m, k = a.shape
    n = b.shape[2]
    # the dot, then tanh (a transcendental) and the sum over m, wherever XLA fused them
    fused = {c.name for c in module.computations if c.role == "fused"}
    by_body = {i.name: costs[i.name] for i in entry.instructions if set(i.called) & fused}
    assert sum(c.flops or 0 for c in by_body.values()) == 2 * b_ * m * n * k + (b_ * m * n - b_ * n)
    assert sum(c.transcendentals or 0 for c in by_body.values()) == b_ * m * n
    assert (costs[holder.name].flops or 0) >= 2 * b_ * m * n * k
    # a fusion's bytes are its operands and its result, not its internals
    operand_bytes = sum(entry.by_name[o].bytes for o in holder.operands)
    assert costs[holder.name].bytes == operand_bytes + holder.bytes
    for name in (i.name for i in entry.instructions if i.opcode == "parameter"):
        assert costs[name].flops == 0 and costs[name].bytes == 0


def _while_of(module: HloModule) -> Any:
    return next(i for c in module.computations for i in c.instructions if i.opcode == "while")


def test_while_loop_times_its_known_trip_count() -> None:
    x = _r(50, 50)
    module, xla = _compiled(lambda x: lax.fori_loop(0, 7, lambda i, v: jnp.sin(v) * 2 @ x, x), x)
    loop = _while_of(module)
    trips = int(loop.backend_config["known_trip_count"]["n"])
    assert trips > 1
    ours = program_cost(module, None)
    # XLA counts the body once (its loop has no other work around it)
    assert ours.counted_flops == pytest.approx(trips * xla.flops, rel=REL)
    assert ours.counted_transcendentals == pytest.approx(trips * xla.transcendentals, rel=REL)
    both = program_cost(module, xla)
    assert both.flops_source == "counted" and both.flops == ours.counted_flops
    assert any("trip count" in n for n in both.notes)
    assert instruction_costs(module)[loop.name].flops == ours.counted_flops
    # older XLA printed backend_config as a quoted JSON string: read the same
    text = (
        jax.jit(lambda x: lax.fori_loop(0, 7, lambda i, v: jnp.sin(v) * 2 @ x, x))
        .lower(x)
        .compile()
        .as_text()
    )
    cfg = re.search(r"backend_config=(\{[^\n]*known_trip_count[^\n]*\})", text)
    assert cfg is not None
    quoted = text.replace(cfg.group(0), "backend_config=" + json.dumps(cfg.group(1)))
    assert program_cost(parse_hlo(quoted), None).counted_flops == ours.counted_flops


def test_while_loop_without_trip_count_is_counted_once_and_says_so() -> None:
    x = _r(40, 40)
    module, xla = _compiled(
        lambda x: lax.while_loop(lambda v: jnp.sum(v) < 1e6, lambda v: v @ x + 1.0, x), x
    )
    assert "known_trip_count" not in _while_of(module).backend_config
    ours = program_cost(module, xla)
    assert ours.flops_source == "xla" and ours.counted_flops == pytest.approx(xla.flops, rel=REL)
    assert any("no known trip count" in n for n in ours.notes)


def _without_trip_count(text: str) -> str:
    return re.sub(r',?"known_trip_count":\{"n":"\d+"\}', "", text)


SCANS: dict[str, tuple[Any, tuple[Any, ...]]] = {
    "stacked outputs": (
        lambda x: lax.scan(lambda c, _: (jnp.sin(c), c * 2), x, None, length=50),
        (_r(100, 100),),
    ),
    "stacked inputs": (
        lambda xs: lax.scan(lambda c, x: (c + x, None), jnp.zeros(100), xs),
        (_r(500, 100),),
    ),
}


@pytest.mark.parametrize("kind", list(SCANS))
def test_scan_bytes_per_trip_match_xla(kind: str) -> None:
    """A scan reads one slice of its stacked inputs and writes one slice of its stacked
    outputs per trip (XLA counts the slice, not the buffer); with the trip count hidden
    both count the body once and must agree, so ours x trips is not trips x the buffer."""
    fn, args = SCANS[kind]
    compiled = jax.jit(fn).lower(*args).compile()
    xla = normalize_cost(compiled.cost_analysis())
    text = compiled.as_text()
    assert "known_trip_count" in text
    once = program_cost(parse_hlo(_without_trip_count(text)), None)
    assert once.counted_flops == pytest.approx(xla.flops, rel=REL)
    assert once.counted_bytes == pytest.approx(xla.bytes_accessed, rel=REL)


# -- GPU custom calls, on the optimized HLO recorded on an H100 -----------------------------
def _gpu(name: str) -> tuple[HloModule, CostAnalysis]:
    meta = json.loads((GPU / "meta.json").read_text())
    return (
        parse_hlo((GPU / f"{name}.hlo.txt").read_text()),
        normalize_cost(meta["programs"][name]["cost_analysis"]),
    )


def test_cublas_matmul_counted_by_hand() -> None:
    module, xla = _gpu("matmul8192_bf16")
    call = next(i for i in module.entry.instructions if i.opcode == "custom-call")
    assert "cublas" in call.attrs["custom_call_target"]
    (a,) = [i for i in module.entry.instructions if i.opcode == "parameter"]
    n = a.shape[0].dims[0]
    assert a.shape[0].dims == (n, n)
    cost = instruction_costs(module)[call.name]
    assert cost.flops == 2 * n**3 and cost.dtype == "bfloat16" and cost.source == "counted"
    # two operand reads and one result write of n x n bf16; the s8 workspace is scratch
    assert cost.bytes == 3 * n * n * 2
    assert xla.flops is None and xla.notes  # XLA's -1 sentinel, dropped
    total = program_cost(module, xla)
    assert (total.flops, total.flops_source, total.dtype) == (2 * n**3, "counted", "bfloat16")
    assert total.bytes == 3 * n * n * 2 and total.bytes_source == "counted"
    assert any("XLA did not count" in note for note in total.notes)


def test_recorded_mlp_gradient_matches_xlas_gpu_count() -> None:
    module, xla = _gpu("mlp4_grad")
    assert xla.flops and xla.flops > 0
    ours = program_cost(module, None)
    assert not ours.uncounted and ours.dtype == "float32"
    assert ours.counted_flops == pytest.approx(xla.flops, rel=REL)
    assert ours.counted_transcendentals == pytest.approx(xla.transcendentals, rel=REL)
    assert ours.counted_bytes == pytest.approx(xla.bytes_accessed, rel=REL)
    # Triton gemm fusions (kind=kCustom, a dot inside) are counted from their bodies
    costs = instruction_costs(module)
    gemms = [i for i in module.entry.instructions if i.name.startswith("gemm_fusion")]
    assert gemms and all((costs[g.name].flops or 0) > 0 for g in gemms)
    assert program_cost(module, xla).flops_source == "xla"


def _conv_instruction(module: HloModule) -> Any:
    return next(i for c in module.computations for i in c.instructions if i.opcode == "convolution")


@pytest.mark.parametrize("direction", ["convForward", "convBackwardInput", "convBackwardFilter"])
def test_cudnn_convolutions_count_like_the_forward_convolution(direction: str) -> None:
    """cuDNN calls carry the forward convolution's window and dim_labels whatever they
    compute; rebuilt from a CPU convolution, each direction must cost what XLA counts
    for that convolution."""
    x, w = _r(2, 8, 17, 17), _r(16, 2, 3, 3)
    module, xla = _compiled(lambda x, w: _conv(x, w, (2, 2), groups=4), x, w)
    conv = _conv_instruction(module)
    lhs, rhs = (module.entry.by_name[o].shape_text for o in conv.operands)
    out = conv.shape_text
    operands, result = {
        "convForward": ((lhs, rhs), out),
        "convBackwardInput": ((out, rhs), lhs),
        "convBackwardFilter": ((lhs, out), rhs),
    }[direction]
    attrs = ", ".join(
        f"{k}={conv.attrs[k]}"
        for k in ("window", "dim_labels", "feature_group_count")
        if k in conv.attrs
    )
    text = (
        f"HloModule cudnn\n\nENTRY %main (p0: {operands[0]}, p1: {operands[1]}) -> {result} {{\n"
        f"  %p0 = {operands[0]} parameter(0)\n  %p1 = {operands[1]} parameter(1)\n"
        f"  %cc = ({result}, u8[65536]{{0}}) custom-call(%p0, %p1), {attrs}, "
        f'custom_call_target="__cudnn${direction}", backend_config={{"cudnn_conv_backend_config":{{}}}}\n'
        f"  ROOT %r = {result} get-tuple-element(%cc), index=0\n}}\n"
    )
    ours = instruction_costs(parse_hlo(text))["cc"]
    assert ours.source == "counted" and ours.dtype == "float32"
    assert ours.flops == pytest.approx(xla.flops, rel=REL)


def test_cublas_gemm_with_batch_dims_counts_like_the_dot() -> None:
    """The older ``__cublas$gemm`` form (dimension numbers at the top of backend_config),
    rebuilt from a CPU batched dot: the same FLOPs as XLA counts for the dot."""
    a, b = _r(4, 32, 64), _r(4, 48, 64)
    module, xla = _compiled(lambda a, b: jnp.einsum("bik,bjk->bij", a, b), a, b)
    dot = next(i for c in module.computations for i in c.instructions if i.opcode == "dot")
    comp = next(c for c in module.computations if dot in c.instructions)
    lhs, rhs = (comp.by_name[o].shape_text for o in dot.operands)
    dims = {
        k: [str(d) for d in dot.int_list(k)]
        for k in (
            "lhs_batch_dims",
            "lhs_contracting_dims",
            "rhs_batch_dims",
            "rhs_contracting_dims",
        )
    }
    cfg = {
        "alpha_real": 1,
        "beta": 0,
        "dot_dimension_numbers": {
            "lhs_batch_dimensions": dims["lhs_batch_dims"],
            "lhs_contracting_dimensions": dims["lhs_contracting_dims"],
            "rhs_batch_dimensions": dims["rhs_batch_dims"],
            "rhs_contracting_dimensions": dims["rhs_contracting_dims"],
        },
    }
    out = dot.shape_text
    text = (
        f"HloModule gemm\n\nENTRY %main (p0: {lhs}, p1: {rhs}) -> {out} {{\n"
        f"  %p0 = {lhs} parameter(0)\n  %p1 = {rhs} parameter(1)\n"
        f'  ROOT %g = {out} custom-call(%p0, %p1), custom_call_target="__cublas$gemm", '
        f"backend_config={json.dumps(cfg, separators=(',', ':'))}\n}}\n"
    )
    ours = instruction_costs(parse_hlo(text))["g"]
    assert ours.flops == pytest.approx(xla.flops, rel=REL) and ours.dtype == "float32"


def test_unknown_custom_call_is_unknown_not_zero() -> None:
    text = (
        "HloModule m\n\nENTRY %main (p0: f32[64,64]) -> f32[64,64] {\n"
        "  %p0 = f32[64,64]{1,0} parameter(0)\n"
        '  ROOT %k = f32[64,64]{1,0} custom-call(%p0), custom_call_target="my_kernel"\n}\n'
    )
    module = parse_hlo(text)
    cost = instruction_costs(module)["k"]
    assert cost.flops is None and cost.source == "unknown" and "my_kernel" in cost.note
    assert cost.bytes == 2 * 64 * 64 * 4
    total = program_cost(module, None)
    assert total.flops is None and total.flops_source == "unknown" and total.uncounted == ("k",)
    assert total.bytes_source == "counted"


# -- XLA's negative sentinels ------------------------------------------------------------
def _numbers(value: Any) -> list[float]:
    if isinstance(value, bool):
        return []
    if isinstance(value, (int, float)):
        return [float(value)]
    if isinstance(value, dict):
        return [x for v in value.values() for x in _numbers(v)]
    if isinstance(value, (list, tuple)):
        return [x for v in value for x in _numbers(v)]
    return []


@pytest.mark.parametrize("sentinel", [-1.0, -2.0])
def test_negative_sentinels_become_none_with_a_note(sentinel: float) -> None:
    cost = normalize_cost(
        {
            "flops": sentinel,
            "bytes accessed": sentinel,
            "bytes accessed0{}": sentinel,
            "transcendentals": 0.0,
        }
    )
    assert cost.flops is None and cost.bytes_accessed is None and cost.transcendentals == 0.0
    assert cost.reported and cost.notes and "XLA did not count" in cost.notes[0]
    assert all(v >= 0 for v in _numbers(cost.to_dict()))
    assert not re.search(rf"{sentinel:g}\b", json.dumps(cost.to_dict()))
    assert math.isfinite(sum(_numbers(cost.to_dict())))


def test_hlo_view_with_a_sentinel_cost_validates_and_shows_no_negative_figure() -> None:
    import workbench
    from workbench import schemas
    from workbench.engine.hlo.report import build_hlo_report
    from workbench.views.hlo import hlo_html, hlo_record

    rep = build_hlo_report(workbench.inspect(lambda a, b: jnp.tanh(a @ b), _r(8, 8), _r(8, 4)))
    rep.cost = normalize_cost({"flops": -2.0, "bytes accessed": -1.0, "transcendentals": 0.0})
    rec = hlo_record(rep)
    schemas.validate(schemas.mime_type("hlo"), rec)
    assert rec["cost"]["flops"] is None and rec["cost"]["notes"]
    assert all(v >= 0 for v in _numbers(rec["cost"]))
    row = re.search(r"<dt>cost_analysis</dt><dd>(.*?)</dd>", hlo_html(rep))
    assert row is not None and not re.search(r"-\d", row.group(1)) and "n/a" in row.group(1)


# -- custom calls on CPU: LAPACK, which XLA's cost analysis leaves out -------------------------
def _custom_calls(module: HloModule) -> list[Any]:
    return [i for c in module.computations for i in c.instructions if i.opcode == "custom-call"]


def test_lapack_cholesky_xla_undercounts_by_one_per_call_and_ours_is_used() -> None:
    a = _r(16, 16)
    module, xla = _compiled(lambda a: jnp.linalg.cholesky(a @ a.T + 16 * jnp.eye(16)), a)
    (call,) = _custom_calls(module)
    assert "potrf" in call.attrs["custom_call_target"]
    costs = instruction_costs(module)
    rest = sum(c.flops or 0 for name, c in costs.items() if name != call.name)
    rest_bytes = sum(c.bytes or 0 for name, c in costs.items() if name != call.name)
    # XLA's generic cost analysis: everything else, less one per custom call
    assert xla.flops == pytest.approx(rest - 1, rel=REL)
    assert xla.bytes_accessed == pytest.approx(rest_bytes - 1, rel=REL)
    n = a.shape[0]
    assert costs[call.name].flops == n * n * n // 3  # XLA's rule for an HLO cholesky
    total = program_cost(module, xla)
    assert total.flops_source == "counted" and total.flops == rest + n * n * n // 3
    assert any("XLA did not count custom calls (" + call.name in note for note in total.notes)


def test_lapack_triangular_solve_gives_a_sentinel_and_our_count() -> None:
    a, b = jnp.eye(24) + jnp.tril(_r(24, 24)) * 0.01, _r(24, 5)
    module, xla = _compiled(
        lambda a, b: lax.linalg.triangular_solve(a, b, left_side=True, lower=True), a, b
    )
    (call,) = _custom_calls(module)
    assert "trsm" in call.attrs["custom_call_target"]
    assert xla.flops is None and xla.notes  # XLA said -1: not counted
    cost = instruction_costs(module)[call.name]
    assert cost.flops == 2 * a.shape[0] * b.size  # XLA's rule for an HLO triangular-solve
    total = program_cost(module, xla)
    assert total.flops_source == "counted" and total.flops is not None
    assert total.flops >= cost.flops


def test_cublas_triangular_solve_is_a_solve_not_a_gemm() -> None:
    """``__cublas$triangularSolve`` (XLA:GPU's triangular-solve) has no dot dimension
    numbers: it must be counted by the solve rule, not dropped as a gemm without them."""
    n, k = 24, 5
    text = (
        "HloModule m\n\nENTRY %main (a: f32[24,24], b: f32[24,5]) -> f32[24,5] {\n"
        "  %a = f32[24,24]{1,0} parameter(0)\n  %b = f32[24,5]{1,0} parameter(1)\n"
        "  %ts = (f32[24,5]{1,0}, s8[1024]{0}) custom-call(%a, %b), "
        'custom_call_target="__cublas$triangularSolve", '
        'backend_config={"operation_queue_id":"0","triangular_solve_options":'
        '{"left_side":true,"lower":true,"unit_diagonal":false,"transpose_a":"NO_TRANSPOSE"}}\n'
        "  ROOT %r = f32[24,5]{1,0} get-tuple-element(%ts), index=0\n}\n"
    )
    cost = instruction_costs(parse_hlo(text))["ts"]
    assert cost.source == "counted" and cost.flops == 2 * n * (n * k)  # XLA's triangular-solve rule


def _async_forms(text: str, module: HloModule) -> tuple[str, str]:
    """The module with its all-gathers as all-gather-start/-done pairs, and with them
    wrapped in async-start/-done computations (XLA:GPU's asynchronous collectives)."""
    line = re.compile(r"^  (ROOT )?(%[\w.-]+) = (\S+) all-gather\((%[\w.-]+)\)(.*)$", re.M)

    def operand_shape(name: str) -> str:
        return next(
            i.shape_text
            for c in module.computations
            for i in c.instructions
            if i.name == name.lstrip("%")
        )

    def start_done(m: re.Match[str]) -> str:
        root, name, shape, op, rest = m.groups()
        return (
            f"  {name}.s = ({operand_shape(op)}, {shape}) all-gather-start({op}){rest}\n"
            f"  {root or ''}{name} = {shape} all-gather-done({name}.s)"
        )

    wrapped: list[str] = []

    def async_pair(m: re.Match[str]) -> str:
        root, name, shape, op, rest = m.groups()
        comp = f"%ag_{len(wrapped)}"
        wrapped.append(
            f"{comp} (p: {operand_shape(op)}) -> {shape} {{\n"
            f"  %p = {operand_shape(op)} parameter(0)\n"
            f"  ROOT %ag = {shape} all-gather(%p){rest}\n}}\n\n"
        )
        return (
            f"  {name}.s = (({operand_shape(op)}), {shape}, s32[]) async-start({op}), "
            f"calls={comp}\n  {root or ''}{name} = {shape} async-done({name}.s)"
        )

    split = line.sub(start_done, text)
    wrapped_text = line.sub(async_pair, text)
    entry = wrapped_text.index("ENTRY")
    return split, wrapped_text[:entry] + "".join(wrapped) + wrapped_text[entry:]


def test_asynchronous_collectives_count_their_traffic_once() -> None:
    """XLA:GPU splits collectives into -start/-done pairs or async-start/-done wrappers
    whose tuples carry the operand and the result again: the traffic is the
    collective's, counted once (here: as XLA counts the synchronous all-gathers)."""
    from jax.sharding import NamedSharding
    from jax.sharding import PartitionSpec as P

    mesh = jax.make_mesh((8,), ("x",))
    x = jax.device_put(_r(64, 128), NamedSharding(mesh, P("x", None)))
    w = jax.device_put(_r(128, 32), NamedSharding(mesh, P("x", None)))
    compiled = (
        jax.jit(lambda x, w: x @ w, out_shardings=NamedSharding(mesh, P())).lower(x, w).compile()
    )
    xla = normalize_cost(compiled.cost_analysis())
    text = compiled.as_text()
    module = parse_hlo(text)
    assert " all-gather(" in text
    assert program_cost(module, None).counted_bytes == pytest.approx(xla.bytes_accessed, rel=REL)
    for form in _async_forms(text, module):
        assert " all-gather(" not in form.split("ENTRY")[1]
        ours = program_cost(parse_hlo(form), None)
        assert ours.counted_bytes == pytest.approx(xla.bytes_accessed, rel=REL)
        assert ours.counted_flops == pytest.approx(xla.flops, rel=REL)


def test_custom_call_with_a_comparator_is_unknown_not_one_comparison() -> None:
    """CPU's ``TopK`` custom call names its comparator in ``called_computations``: that
    body runs once per comparison, as often as the library decides, so one run of it is
    not the call's cost.  XLA says -1; ours must say unknown, not 7 FLOPs."""
    x = _r(100, 300)
    module, xla = _compiled(lambda x: lax.top_k(x, 5), x)
    (call,) = _custom_calls(module)
    assert call.called and xla.flops is None
    cost = instruction_costs(module)[call.name]
    assert cost.flops is None and cost.source == "unknown"
    total = program_cost(module, xla)
    assert total.flops is None and total.flops_source == "unknown" and call.name in total.uncounted
