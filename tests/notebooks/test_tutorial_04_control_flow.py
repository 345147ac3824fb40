"""notebooks/04_control_flow.ipynb teaches what it says: the jaxprs it shows are the ones JAX
makes for the same code in this process (the primitives the prose names are in them), the
errors are the ones the prose explains, the recompile reason is the static argument, and the
scanned program is smaller and compiles faster than the unrolled one."""

from __future__ import annotations

import re
from types import SimpleNamespace

import jax
import jax.numpy as jnp
import pytest
from jax import lax

import workbench
from tests import tutorials
from tests.tutorials import BENCH, CACHE_CELL, HLO, histogram, shown_jaxpr

NAME = "04_control_flow"
# the Binder session's: they read the run Binder's environment made (tests/tutorials.py)
pytestmark = [pytest.mark.notebook, pytest.mark.binder]


@pytest.fixture(scope="module")
def run():
    return tutorials.run(NAME)


def eqns(payload: dict) -> list[dict]:
    return payload["jaxpr"]["eqns"]


def error_of(run, prefix: str) -> dict:
    cell = run.cell(prefix)
    assert "raises-exception" in tutorials.tags(cell)
    (err,) = [o for o in cell.outputs if o.output_type == "error"]
    assert err["ename"] == "CellError"
    return err


# -- the Python `if` ------------------------------------------------------------------------


def test_a_python_if_on_a_tracer_is_the_short_error_naming_the_line(run):
    err = error_of(run, "%%jaxpr\ndef rect_sqrt(x):")
    assert err["evalue"].startswith("TracerBoolConversionError")
    assert "if x > 0:" in err["evalue"]


def test_a_branch_on_a_shape_traces_only_the_branch_taken(run):
    def normalize(x):
        if x.ndim == 2:
            return x / x.sum(axis=1, keepdims=True)
        return x / x.sum()

    shown = shown_jaxpr(run, "%%jaxpr\ndef normalize(x):")
    expected = jax.make_jaxpr(normalize)(jnp.ones((3, 4)))
    assert shown["stats"]["histogram"] == dict(histogram(expected))
    (reduce,) = [e for e in eqns(shown) if e["primitive"] == "reduce_sum"]
    assert reduce["params"]["axes"] == "(1,)"  # the matrix branch, as the prose says


def test_a_new_static_value_recompiles_and_the_line_says_why(run):
    first = tutorials.data_of(run.cell("from functools import partial"), CACHE_CELL)
    assert any(
        g["function"] == "jit(activation)" and not g["reasons"]
        for p in first
        for g in p["functions"]
    )
    (line,) = tutorials.data_of(run.cell('activation(x, mode="tanh")'), CACHE_CELL)
    (group,) = [g for g in line["functions"] if g["function"] == "jit(activation)"]
    assert group["compiles"] == 1
    assert [(m["kind"], m["path"]) for m in group["reasons"]] == [("static_arg", "mode")]


# -- where / cond / switch -------------------------------------------------------------------


def test_where_computes_both_sides_and_its_gradient_at_zero_is_nan(run):
    def rect_sqrt_where(x):
        return jnp.where(x > 0, jnp.sqrt(x), 0.0)

    shown = shown_jaxpr(run, "%%jaxpr\ndef rect_sqrt_where(x):")
    expected = histogram(jax.make_jaxpr(rect_sqrt_where)(jnp.array([-1.0, 0.0, 4.0])))
    assert shown["stats"]["histogram"] == dict(expected)
    assert {"select_n", "sqrt"} <= set(expected)
    assert "cond" not in expected
    assert jnp.isnan(jax.grad(rect_sqrt_where)(0.0))
    assert tutorials.printed(run.cell('print("grad at 0 through jnp.where')).split()[-1] == "nan"


def rect_sqrt_cond(x):
    return lax.cond(x > 0, jnp.sqrt, lambda x: jnp.zeros_like(x), x)


def test_cond_holds_both_branches_and_differentiates_only_the_chosen_one(run):
    shown = shown_jaxpr(run, "%%jaxpr\ndef rect_sqrt_cond(x):")
    (cond,) = [e for e in eqns(shown) if e["primitive"] == "cond"]
    expected = [e for e in jax.make_jaxpr(rect_sqrt_cond)(4.0).eqns if e.primitive.name == "cond"]
    assert len(cond["subjaxprs"]) == len(expected[0].params["branches"]) == 2
    # the predicate becomes an int index (the prose: convert_element_type of the bool)
    assert "convert_element_type" in [e["primitive"] for e in eqns(shown)]
    # false-first: branch 1 is the sqrt
    assert "sqrt" in [e["primitive"] for e in cond["subjaxprs"][1]["jaxpr"]["eqns"]]
    assert float(jax.grad(rect_sqrt_cond)(0.0)) == 0.0
    assert tutorials.printed(run.cell('print("grad at 0 through lax.cond')).split()[-1] == "0.0"


def test_switch_clamps_its_index_and_holds_one_branch_per_function(run):
    shown = shown_jaxpr(run, "%%jaxpr\ndef wave(kind, t):")
    prims = [e["primitive"] for e in eqns(shown)]
    assert "clamp" in prims
    assert prims.index("clamp") < prims.index("cond")
    (cond,) = [e for e in eqns(shown) if e["primitive"] == "cond"]
    assert len(cond["subjaxprs"]) == 3


def test_cond_under_vmap_with_a_batched_predicate_becomes_a_select(run):
    xs = jnp.array([0.0, 4.0, -1.0])
    shown = shown_jaxpr(run, "%jaxpr -t vmap rect_sqrt_cond")
    expected = histogram(jax.make_jaxpr(jax.vmap(rect_sqrt_cond))(xs))
    assert shown["stats"]["histogram"] == dict(expected)
    assert "cond" not in expected and {"select_n", "sqrt"} <= set(expected)
    # each branch's input is selected against a stop_gradient copy (the prose's explanation)
    assert expected["stop_gradient"] == 2  # one per branch (each takes one operand)
    # differentiating the *vmapped* function (where the stop_gradients act) gives 0 at 0 and
    # -1, where the same sum through jnp.where gives nan: as printed
    through_cond = jax.grad(lambda v: jax.vmap(rect_sqrt_cond)(v).sum())(xs)
    through_where = jax.grad(lambda v: jnp.where(v > 0, jnp.sqrt(v), 0.0).sum())(xs)
    assert through_cond.tolist() == [0.0, 0.25, 0.0]
    assert jnp.isnan(through_where[0]) and jnp.isnan(through_where[2])
    printed = tutorials.printed(run.cell("def total_cond(xs):")).splitlines()
    assert printed == [
        f"grad through vmap(cond): {through_cond}",
        f"grad through jnp.where:  {through_where}",
    ]


# -- loops -----------------------------------------------------------------------------------


def power(x, n):
    return lax.fori_loop(0, n, lambda i, acc: acc * x, jnp.ones_like(x))


def test_fori_loop_is_a_scan_with_int_bounds_and_a_while_with_traced_ones(run):
    static = shown_jaxpr(run, "%%jaxpr --static-argnums 1\ndef power(x, n):")
    traced = shown_jaxpr(run, "%jaxpr power(2.0, 5)")
    want_static = jax.make_jaxpr(power, static_argnums=1)(2.0, 5)
    want_traced = jax.make_jaxpr(power)(2.0, 5)
    assert [e["primitive"] for e in eqns(static)] == [e.primitive.name for e in want_static.eqns]
    assert [e["primitive"] for e in eqns(traced)] == [e.primitive.name for e in want_traced.eqns]
    assert "scan" in [e["primitive"] for e in eqns(static)]
    assert "while" in [e["primitive"] for e in eqns(traced)]
    (scan,) = [e for e in eqns(static) if e["primitive"] == "scan"]
    assert scan["params"]["length"] == "5"


def test_scan_threads_a_carry_and_stacks_the_outputs(run):
    shown = shown_jaxpr(run, "%%jaxpr\ndef running_max(xs):")
    (scan,) = [e for e in eqns(shown) if e["primitive"] == "scan"]
    assert scan["params"]["length"] == "5"
    (body,) = scan["subjaxprs"]
    assert len(body["jaxpr"]["invars"]) == 2 and len(body["jaxpr"]["outvars"]) == 2
    assert [e["primitive"] for e in body["jaxpr"]["eqns"]] == ["max"]  # once, used twice
    assert shown["out_avals"] == ["f32[]", "f32[5]"]


def test_while_loop_has_a_test_and_a_body_and_stops_on_data(run):
    shown = shown_jaxpr(run, "%%jaxpr\ndef newton_sqrt(a):")
    (loop,) = [e for e in eqns(shown) if e["primitive"] == "while"]
    assert {s["param"] for s in loop["subjaxprs"]} == {"cond_jaxpr", "body_jaxpr"}
    printed = tutorials.printed(run.cell("newton_sqrt = jax.jit(newton_sqrt)")).split()
    assert [float(v) for v in printed] == pytest.approx([2**0.5, 100.0], rel=1e-4)


def test_grad_through_while_fails_jvp_works_and_a_static_trip_count_scans_back(run):
    err = error_of(run, "%jaxpr -t grad newton_sqrt")
    assert err["evalue"].startswith("ValueError")
    assert "Reverse-mode differentiation does not work for lax.while_loop" in err["evalue"]
    jvp = shown_jaxpr(run, "%jaxpr -t jvp newton_sqrt")
    assert "while" in jvp["stats"]["histogram"]
    back = shown_jaxpr(run, "%jaxpr -t grad --static-argnums 1 power")
    scans = [e for e in eqns(back) if e["primitive"] == "scan"]
    assert [s["params"]["reverse"] for s in scans] == ["False", "True"]
    expected = jax.make_jaxpr(jax.grad(power), static_argnums=1)(2.0, 5)
    assert back["stats"]["histogram"] == dict(histogram(expected))


# -- unrolled vs scan ------------------------------------------------------------------------


@pytest.fixture(scope="module")
def loops():
    """The notebook's recurrence, unrolled and scanned (built here, not at import: collecting
    the tests must not start JAX)."""
    w = jnp.eye(16) * 0.5

    def step(h, x):
        h = jnp.tanh(w @ h + x)
        return h, h.sum()

    def unrolled(h, xs):
        outs = []
        for x in xs:
            h, o = step(h, x)
            outs.append(o)
        return h, jnp.stack(outs)

    def scanned(h, xs):
        return lax.scan(step, h, xs)

    return SimpleNamespace(
        unrolled=unrolled, scanned=scanned, h0=jnp.zeros(16), xs=jnp.ones((50, 16))
    )


def test_the_unrolled_jaxpr_repeats_the_body_and_the_scanned_one_nests_it_once(run, loops):
    u = shown_jaxpr(run, "%jaxpr unrolled(h0, xs)")
    s = shown_jaxpr(run, "%jaxpr scanned(h0, xs)")
    want_u = jax.make_jaxpr(loops.unrolled)(loops.h0, loops.xs)
    want_s = jax.make_jaxpr(loops.scanned)(loops.h0, loops.xs)
    assert u["stats"]["top_level_equations"] == len(want_u.eqns)
    assert u["stats"]["histogram"] == dict(histogram(want_u))
    assert s["stats"]["histogram"] == dict(histogram(want_s))
    assert [e["primitive"] for e in eqns(s)] == ["scan"]
    assert u["stats"]["histogram"]["tanh"] == loops.xs.shape[0]  # one copy of the body per step
    assert s["stats"]["histogram"]["tanh"] == 1
    assert u["stats"]["equations"] > 10 * s["stats"]["equations"]


def test_the_scanned_program_is_smaller_and_compiles_faster_in_xla(run, loops):
    u = tutorials.data_of(run.cell("u_hlo = %hlo unrolled"), HLO)[0]
    s = tutorials.data_of(run.cell("s_hlo = %hlo scanned"), HLO)[0]
    for key in ("stablehlo_ops", "hlo_instructions"):
        assert u["counts"][key] > 5 * s["counts"][key], key
    assert u["timings"]["compile_s"] > s["timings"]["compile_s"]
    # the counts are XLA's for the same program here
    assert (
        s["counts"]["hlo_instructions"]
        == workbench.hlo(loops.scanned, loops.h0, loops.xs).report.hlo_op_count
    )
    # the scanned diagram has the while body and condition as sub-diagrams; the unrolled one
    # is one flat entry computation
    assert len(s["graphs"]) > 1 and len(u["graphs"]) == 1
    # the compile lines say the same, and the table prints both rows
    for prefix in ("u_hlo = %hlo unrolled", "s_hlo = %hlo scanned"):
        (line,) = tutorials.data_of(run.cell(prefix), CACHE_CELL)
        assert any(g["compile_s"] for g in line["functions"])
    table = tutorials.printed(run.cell("for name, fn, shown in")).splitlines()
    assert [row.split()[0] for row in table] == ["unrolled", "scan"]
    shown_u = shown_jaxpr(run, "%jaxpr unrolled(h0, xs)")
    assert int(table[0].split()[1]) == shown_u["stats"]["equations"]


def test_the_benchmark_times_both_variants(run):
    (bench,) = tutorials.data_of(run.cell('workbench.bench({"scan"'), BENCH)
    assert bench["variants"] == ["scan", "unrolled"]


# -- the exercises' checks ------------------------------------------------------------------


def check_of(run, n: int) -> str:
    """The committed check cell of exercise ``n`` (from 1)."""
    return run.committed.cells[run.exercises[n - 1].check].source


WRONG_ANSWERS = {
    # the trap the prose shows: a single where, whose discarded sqrt branch poisons the gradient
    1: (
        "def rect_sqrt_safe(x):\n    return jnp.where(x > 0, jnp.sqrt(x), 0.0)",
        "the sqrt branch still sees x <= 0",
    ),
    # a scan started from 0 instead of xs[0]: the check's data must not start at 0
    2: (
        "def ema(xs, alpha):\n    def step(m, x):\n        m = alpha * m + (1 - alpha) * x\n"
        "        return m, m\n    return lax.scan(step, 0.0, xs)[1]",
        "m[0] is xs[0]",
    ),
    # the section "Reverse mode needs a known trip count"
    3: (
        "def logistic(r, x0, n):\n    return lax.while_loop(lambda c: c[0] < n, "
        "lambda c: (c[0] + 1, r * c[1] * (1 - c[1])), (0, x0))[1]",
        "grad failed",
    ),
}


@pytest.mark.parametrize("n", sorted(WRONG_ANSWERS))
def test_each_check_rejects_the_plausible_wrong_answer_with_its_hint(run, n):
    wrong, hint = WRONG_ANSWERS[n]
    ns = {"jax": jax, "jnp": jnp, "lax": lax}
    exec(wrong, ns)
    with pytest.raises(AssertionError, match=re.escape(hint)):
        exec(check_of(run, n), ns)
