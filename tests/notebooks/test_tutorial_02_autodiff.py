"""notebooks/02_autodiff.ipynb teaches what its prose says: the jaxprs it shows are the
programs JAX builds for the same functions in this process (forward then backward, jvp
interleaved, linearize split, vjp and linear_transpose running the linear part backwards,
custom rules in place of the body, checkpoint policies saving and recomputing what the prose
names)."""

from __future__ import annotations

import contextlib
import io

import jax
import jax.numpy as jnp
import pytest
from jax.ad_checkpoint import print_saved_residuals

from tests import tutorials
from tests.tutorials import CACHE_CELL, JAXPR, histogram, shown_jaxpr, shown_stages
from workbench.schemas import unpack

NAME = "02_autodiff"
# the Binder session's: they read the run Binder's environment made (tests/tutorials.py)
pytestmark = [pytest.mark.notebook, pytest.mark.binder]


@pytest.fixture(scope="module")
def r():
    return tutorials.run(NAME)


def top_prims(payload):
    return [e["primitive"] for e in payload["jaxpr"]["eqns"]]


def tangent_dependent(payload, tangent_positions):
    """For each top-level equation, whether it reads (transitively) one of the inputs at
    ``tangent_positions``."""
    jx = payload["jaxpr"]
    dirty = {jx["invars"][i][0] for i in tangent_positions}
    flags = []
    for e in jx["eqns"]:
        hit = any(a[0] in dirty for a in e["invars"] if a[0])
        if hit:
            dirty.update(o[0] for o in e["outvars"] if o[0] not in ("", "_"))
        flags.append(hit)
    return flags


def loss(w, x, y):
    return jnp.mean((jnp.tanh(x @ w) - y) ** 2)


W, X, Y = jnp.ones((3, 2)) / 10, jnp.arange(12.0).reshape(4, 3) / 10, jnp.ones((4, 2))
A = jnp.arange(6.0).reshape(2, 3) / 6
XV = jnp.array([0.1, 0.2, 0.3])


def f(x):
    return jnp.sum(A @ jnp.sin(x))


def test_grad_holds_the_forward_pass_then_the_backward_pass(r):
    fwd, bwd = shown_stages(r, "%%jaxpr --compare -t grad\ndef loss")
    assert fwd["stats"]["histogram"] == histogram(jax.make_jaxpr(loss)(W, X, Y))
    assert bwd["stats"]["histogram"] == histogram(jax.make_jaxpr(jax.grad(loss))(W, X, Y))
    # every forward primitive is in the gradient program, and the matmul came back transposed
    assert all(
        bwd["stats"]["histogram"].get(p, 0) >= n for p, n in fwd["stats"]["histogram"].items()
    )
    assert bwd["stats"]["histogram"]["dot_general"] == 2 * fwd["stats"]["histogram"]["dot_general"]
    assert bwd["out_avals"] == ["f32[3,2]"]
    printed = tutorials.printed(r.cell("grad_w = jax.grad(loss)"))
    assert "d/dw: (3, 2)" in printed and "[(3, 2), (4, 3)]" in printed


def test_value_and_grad_is_the_grad_program_with_the_value_returned(r):
    first = shown_stages(r, "%%jaxpr --compare -t grad\ndef loss")[1]
    vg = shown_jaxpr(r, '%%jaxpr -t "value_and_grad(has_aux=True)"')
    assert vg["out_avals"] == ["f32[]", "f32[4,2]", "f32[3,2]"]
    assert vg["stats"]["histogram"] == first["stats"]["histogram"]


def test_the_training_step_compiles_once(r):
    cell = r.cell("@jax.jit\ndef sgd_step")
    lines = tutorials.data_of(cell, CACHE_CELL)
    steps = [g for ln in lines for g in ln["functions"] if g["function"] == "jit(sgd_step)"]
    assert len(steps) == 1 and steps[0]["compiles"] == 1 and not steps[0]["reasons"], steps
    losses = [float(t.split()[-1]) for t in tutorials.printed(cell).splitlines()]
    assert len(losses) == 5 and losses == sorted(losses, reverse=True)


def test_each_derivative_order_differentiates_a_bigger_program(r):
    stages = shown_stages(r, "%%jaxpr --compare -t grad -t grad\ndef f")
    sizes = [s["stats"]["equations"] for s in stages]
    assert sizes == sorted(sizes) and len(set(sizes)) == 3, sizes
    got, by_hand = tutorials.printed(r.cell("d2 = jax.grad")).split("=")[1].split(", by hand")
    assert abs(float(got) - float(by_hand)) < 1e-5
    want = 2 * jnp.sin(1.0) + 4 * jnp.cos(1.0) - jnp.sin(1.0)
    assert abs(float(got) - float(want)) < 1e-5


def test_hessian_pushes_identity_tangents_through_the_gradient(r):
    cell = r.cell("K = jnp.array")
    (payload,) = tutorials.data_of(cell, JAXPR)
    payload = unpack(payload)
    assert tutorials.printed(cell).strip() == "True"
    assert payload["out_avals"] == ["f32[3,3]"]
    assert payload["label"] == "hessian(energy)"
    prims = top_prims(payload)
    assert {"iota", "eq"} <= set(prims[:8]), prims
    assert any(a["shape"] == [3, 3] and a["dtype"] == "float32" for a in payload["avals"])


def test_jvp_interleaves_linearize_sorts_vjp_runs_backwards(r):
    jvp = shown_jaxpr(r, "%%jaxpr -t jvp\nA = jnp.arange")
    lin = shown_jaxpr(r, "%jaxpr -t linearize f(x)")
    vjp = shown_jaxpr(r, "%jaxpr -t vjp f(x)")
    assert jvp["in_avals"] == ["f32[3]", "f32[3]"] and jvp["out_avals"] == ["f32[]", "f32[]"]
    assert lin["in_avals"] == ["f32[3]", "f32[3]"] and lin["out_avals"] == ["f32[]"]
    assert vjp["in_avals"] == ["f32[3]", "f32[]"] and vjp["out_avals"] == ["f32[3]"]
    # jvp: primal and tangent equations interleave (a tangent one before the last primal one)
    flags = tangent_dependent(jvp, [1])
    assert True in flags and flags.index(True) < max(i for i, d in enumerate(flags) if not d)
    # linearize: every primal equation first, then the tangent ones
    flags = tangent_dependent(lin, [1])
    assert flags == sorted(flags) and any(flags)
    # vjp: the tangent half backwards, starting with the transpose of reduce_sum
    back = [p for p, d in zip(top_prims(vjp), tangent_dependent(vjp, [1]), strict=True) if d]
    fwd = [p for p, d in zip(top_prims(lin), tangent_dependent(lin, [1]), strict=True) if d]
    assert fwd == ["mul", "dot_general", "reduce_sum"]
    assert back == ["broadcast_in_dim", "dot_general", "mul"]
    nums = [float(t) for t in tutorials.printed(r.cell("_, jv = jax.jvp")).split()[1::2]]
    assert len(nums) == 3 and max(nums) - min(nums) < 1e-5
    assert abs(nums[0] - float(jax.jvp(f, (XV,), (jnp.array([1.0, 0.0, 0.0]),))[1])) < 1e-5


def test_linear_transpose_is_the_linear_program_backwards(r):
    lin = shown_jaxpr(r, "%jaxpr f_lin(v)")
    tr = shown_jaxpr(r, "f_T = jax.linear_transpose")
    _, f_lin = jax.linearize(f, XV)
    f_t = jax.linear_transpose(f_lin, XV)
    want_lin = jax.make_jaxpr(f_lin)(XV)
    want_t = jax.make_jaxpr(f_t)(jnp.float32(1.0))
    assert (
        top_prims(lin)
        == [e.primitive.name for e in want_lin.eqns]
        == ["mul", "dot_general", "reduce_sum"]
    )
    assert (
        top_prims(tr)
        == [e.primitive.name for e in want_t.eqns]
        == ["broadcast_in_dim", "dot_general", "mul"]
    )

    def dims(payload, closed):
        (shown,) = [
            e["params"]["dimension_numbers"]
            for e in payload["jaxpr"]["eqns"]
            if e["primitive"] == "dot_general"
        ]
        (made,) = [
            str(e.params["dimension_numbers"])
            for e in closed.eqns
            if e.primitive.name == "dot_general"
        ]
        assert shown == made
        return shown

    # A contracted over its columns, then over its rows (A transposed)
    assert dims(lin, want_lin) != dims(tr, want_t)
    # the residuals are the constants: cos x and A
    assert len(lin["jaxpr"]["constvars"]) == 2 and len(lin["jaxpr"]["invars"]) == 1
    printed = tutorials.printed(r.cell("(g_T,) = f_T(1.0)"))
    rows = [line.split(":", 1)[1].strip() for line in printed.splitlines()]
    assert rows[0] == rows[1], printed


def test_custom_jvp_replaces_the_derivative_of_the_body(r):
    assert "[nan nan nan]" in tutorials.printed(r.cell("def norm(x)"))
    body, grad = shown_stages(r, "%%jaxpr --compare -t grad\n@jax.custom_jvp")

    @jax.custom_jvp
    def safe_norm(x):
        return jnp.sqrt(jnp.sum(x**2))

    safe_norm.defjvp(
        lambda p, t: (
            safe_norm(p[0]),
            jnp.vdot(p[0], t[0]) / jnp.where(safe_norm(p[0]) == 0, 1.0, safe_norm(p[0])),
        )
    )
    call = jax.make_jaxpr(safe_norm)(jnp.zeros(3)).eqns[0].primitive.name
    assert top_prims(body) == [call]
    # under grad: the rule's equations; sqrt only inside the primal call, never differentiated
    assert "sqrt" not in top_prims(grad) and "select_n" in grad["stats"]["histogram"]
    assert call in top_prims(grad)
    printed = tutorials.printed(r.cell('print("grad(safe_norm)(0)'))
    assert "[0. 0. 0.]" in printed and "[0.6 0.8]" in printed


def test_custom_vjp_clips_the_cotangent_and_refuses_forward_mode(r):
    body, grad = shown_stages(r, "%%jaxpr --compare -t grad\n@jax.custom_vjp")

    @jax.custom_vjp
    def ident(x):
        return x

    ident.defvjp(lambda x: (x, None), lambda _, g: (g,))
    assert top_prims(body)[0] == jax.make_jaxpr(ident)(XV).eqns[0].primitive.name
    assert {"max", "min"} <= set(grad["stats"]["histogram"])
    printed = tutorials.printed(r.cell('print("value:", scaled(x)'))
    assert "grad: [1. 1. 1.]" in printed and "without clipping: [10. 10. 10.]" in printed
    jvp = shown_jaxpr(r, "%jaxpr -t jvp scaled(x)")
    lin_name = (
        jax.make_jaxpr(lambda x, t: jax.jvp(ident, (x,), (t,)))(XV, XV).eqns[0].primitive.name
    )
    assert lin_name in top_prims(jvp)
    (err,) = [o for o in r.cell("%hlo -t jvp scaled(x)").outputs if o.output_type == "error"]
    assert err["ename"] == "CellError"
    assert "forward-mode autodiff (jvp) to a custom_vjp" in "\n".join(err["traceback"])
    # tracing succeeds (above); evaluating the custom_lin equation eagerly fails at once
    with pytest.raises(TypeError) as eager:
        jax.jvp(ident, (XV,), (XV,))
    printed = tutorials.printed(r.cell("try:\n    jax.jvp(scaled"))
    assert printed.strip() == "eager jax.jvp: TypeError " + str(eager.value).splitlines()[0]


def mlp(W1, W2, x):
    h = jnp.sin(W1 @ x)
    return jnp.sum(jnp.sin(W2 @ h))


W1, W2 = jnp.ones((4, 3)) / 3, jnp.ones((2, 4)) / 4


def test_checkpoint_policies_save_what_the_prose_says(r):
    printed = tutorials.printed(r.cell("import contextlib, io, re\nfrom jax.ad_checkpoint"))
    _, default, nothing, dots = printed.split("--- ")
    assert "output of sin" in default and "output of cos" in default
    # the kernel's temporary file name became the line of the cell (mlp's two lines)
    assert "ipykernel" not in printed and "from cell line" in printed
    # what the prose lists: h = sin(W1 @ x) (for W2's gradient) and the cos of both layers
    assert default.count("output of sin") == 1 and default.count("output of cos") == 2
    assert all("from the argument" in line for line in nothing.splitlines()[1:] if line)
    saved = [line for line in dots.splitlines()[1:] if line and "from the argument" not in line]
    assert len(saved) == 2 and all("output of dot_general" in line for line in saved)
    # the same lists as print_saved_residuals gives in this process
    for section, policy in (
        (default, None),
        (nothing, "nothing_saveable"),
        (dots, "dots_saveable"),
    ):
        buf = io.StringIO()
        with contextlib.redirect_stdout(buf):
            print_saved_residuals(
                mlp
                if policy is None
                else jax.checkpoint(mlp, policy=getattr(jax.checkpoint_policies, policy)),
                W1,
                W2,
                XV,
            )
        assert [ln.split(" from")[0] for ln in buf.getvalue().splitlines()] == [
            ln.split(" from")[0] for ln in section.splitlines()[1:] if ln
        ]


def test_checkpoint_recomputes_in_the_backward_pass(r):
    shown = {
        p: shown_jaxpr(r, f"""%jaxpr -t "checkpoint(policy='{p}')" -t grad""")
        for p in ("dots_saveable", "nothing_saveable")
    }
    made = {
        p: histogram(
            jax.make_jaxpr(
                jax.grad(jax.checkpoint(mlp, policy=getattr(jax.checkpoint_policies, p)))
            )(W1, W2, XV)
        )
        for p in shown
    }
    remat = jax.make_jaxpr(jax.checkpoint(mlp))(W1, W2, XV).eqns[0].primitive.name
    for p, payload in shown.items():
        assert payload["stats"]["histogram"] == made[p]
        assert top_prims(payload).count(remat) == 1
    dots, nothing = (shown[p]["stats"]["histogram"] for p in ("dots_saveable", "nothing_saveable"))
    assert "reduce_precision" in dots
    assert nothing["dot_general"] > dots["dot_general"]
    assert nothing["sin"] > dots["sin"]
    plain = histogram(jax.make_jaxpr(jax.grad(mlp))(W1, W2, XV))
    assert remat not in plain


def test_exercises_teach_what_they_ask(r):
    hvp = r.committed.cells[r.exercises[0].solution].source
    assert "jax.jvp" in hvp and "hessian" not in hvp
    assert "defjvp" in r.committed.cells[r.exercises[1].solution].source
    assert "dots_saveable" in r.committed.cells[r.exercises[2].solution].source
