"""%%jaxpr / %jaxpr through a real IPython InteractiveShell, checking the captured bundles."""

from __future__ import annotations

import json
import re

import jax
import jax.numpy as jnp
import pytest

from tests.programs import count_equations, primitive_counts
from workbench import schemas
from workbench.views._standalone import embedded_data, runtime_base64
from workbench.views.jaxpr import JAXPR_COMPARE_MIME, JAXPR_MIME

LOSS_CELL = """%%jaxpr -t grad
def loss(w, x):
    return jnp.sum(jnp.tanh(x @ w) ** 2)
loss(jnp.ones((4, 4)), jnp.ones((2, 4)))
"""


def test_cell_defines_function_and_shows_grad_jaxpr(run, shell):
    shell.user_ns.pop("loss", None)
    r = run(LOSS_CELL)
    assert r.error is None, r.stdout
    loss = shell.user_ns["loss"]  # the cell ran like a normal cell
    w, x = jnp.ones((4, 4)), jnp.ones((2, 4))
    ref = jax.make_jaxpr(jax.grad(loss))(w, x)
    assert r.bundle["text/plain"] == str(ref)
    assert set(r.bundle) >= {"text/plain", "text/html", JAXPR_MIME}
    rec = r.bundle[JAXPR_MIME]
    assert rec["version"] == 3 and rec["kind"] == "jaxpr"
    assert rec["label"] == "grad(loss)"
    assert rec["in_avals"] == ["f32[4,4]", "f32[2,4]"] and rec["out_avals"] == ["f32[4,4]"]
    assert rec["stats"]["histogram"] == primitive_counts(ref)
    assert rec["stats"]["histogram"]["dot_general"] >= 2  # forward and the gradient's
    json.dumps(rec)  # serialisable as is
    html = r.bundle["text/html"]
    assert "grad(loss)" in html and f"{count_equations(ref)} equations" in html
    assert "traced in" in html
    # the cell's own line is recognised: the view shows it beside its equations
    assert any(c["number"] is not None for c in rec["cells"].values()), rec["cells"]
    lines = [t for f in rec["lines"].values() for t in f.values()]
    assert "return jnp.sum(jnp.tanh(x @ w) ** 2)" in lines


def test_last_expression_is_not_executed(run, shell):
    shell.user_ns["calls"] = []
    r = run("%%jaxpr\ndef f(x):\n    calls.append(1)\n    return x * 2\nf(jnp.ones(3))")
    assert r.error is None
    # traced once (Python runs once during tracing) but never run on data
    assert shell.user_ns["calls"] == [1]
    assert "mul" in r.bundle["text/plain"]


def test_html_is_self_contained_and_carries_the_view(run):
    r = run(LOSS_CELL)
    html = r.bundle["text/html"]
    assert not re.search(r"""(src|href)\s*=\s*["']?(https?:)?//""", html)
    assert "import(" in html and "DecompressionStream" in html  # the loader
    assert runtime_base64() in html  # the views, embedded
    assert embedded_data(html) == {
        JAXPR_MIME: schemas.unpack(r.bundle[JAXPR_MIME]),
        "text/plain": r.bundle["text/plain"],
    }


def test_line_magic_and_python_api_agree(run, shell):
    run(LOSS_CELL)
    r = run("%jaxpr -t grad loss(jnp.ones((4, 4)), jnp.ones((2, 4)))")
    assert r.error is None
    import workbench

    d = workbench.jaxpr(
        shell.user_ns["loss"], jnp.ones((4, 4)), jnp.ones((2, 4)), transforms="grad"
    )
    assert d._repr_mimebundle_()["text/plain"] == r.bundle["text/plain"]


def test_line_magic_call_with_negative_literal(run, shell):
    shell.user_ns["h"] = lambda x, k: x * k
    r = run("%jaxpr h(jnp.ones(2), -1)")
    assert r.error is None, r.stdout
    assert "mul" in r.bundle["text/plain"]


def test_text_flag_gives_plain_text_only(run):
    r = run(LOSS_CELL.replace("-t grad", "-t grad --text"))
    assert list(r.bundle) == ["text/plain"]


def test_transform_order_is_innermost_first(run):
    run(LOSS_CELL)
    r = run(
        '%jaxpr -t grad -t "vmap(in_axes=(None, 0))" loss(jnp.ones((4, 4)), jnp.ones((3, 2, 4)))'
    )
    assert r.error is None, r.stdout
    assert r.bundle[JAXPR_MIME]["label"] == "vmap(grad(loss), in_axes=(None, 0))"
    assert r.bundle[JAXPR_MIME]["out_avals"] == ["f32[3,4,4]"]
    r2 = run(
        '%jaxpr -t "vmap(grad(f), in_axes=(None, 0))" loss(jnp.ones((4, 4)), jnp.ones((3, 2, 4)))'
    )
    assert r2.bundle["text/plain"] == r.bundle["text/plain"]


def test_compare_shows_each_stage(run):
    run(LOSS_CELL)
    r = run(
        '%jaxpr --compare -t grad -t "vmap(in_axes=(None, 0))" '
        "loss(jnp.ones((4, 4)), jnp.ones((3, 2, 4)))"
    )
    assert r.error is None, r.stdout
    rec = r.bundle[JAXPR_COMPARE_MIME]
    assert rec["kind"] == "jaxpr-compare" and JAXPR_MIME not in r.bundle
    labels = [s["label"] for s in rec["stages"]]
    assert labels == ["loss", "grad(loss)", "vmap(grad(loss), in_axes=(None, 0))"]
    # the stages inside vmap see one example, as vmap traces them
    assert [s["in_avals"][1] for s in rec["stages"]] == ["f32[2,4]", "f32[2,4]", "f32[3,2,4]"]
    counts = [s["stats"]["equations"] for s in rec["stages"]]
    assert counts[0] < counts[1]
    html = r.bundle["text/html"]
    assert all(f"{c} equations" in html for c in counts)
    assert "== grad(loss):" in r.bundle["text/plain"]


def test_compare_traces_the_stages_inside_vmap_at_one_example(run):
    """A stage inside ``vmap`` is what one call of the vmapped function traces: before, every
    stage was traced at the batched arguments, so a function written for one example failed
    (``dot_general requires contracting dimensions to have the same shape``) and one that
    happened to broadcast showed a batched program under the per-example label."""
    r = run(
        '%%jaxpr --compare -t grad -t "vmap(in_axes=(None, 0))"\n'
        "def layer(w, x):\n    return jnp.sum(jnp.tanh(w @ x))\n"
        "layer(jnp.ones((2, 3)), jnp.ones((8, 3)))"
    )
    assert r.error is None, r.stdout
    stages = r.bundle[JAXPR_COMPARE_MIME]["stages"]
    assert [s["in_avals"] for s in stages] == [["f32[2,3]", "f32[3]"]] * 2 + [
        ["f32[2,3]", "f32[8,3]"]
    ]
    assert [s["out_avals"] for s in stages] == [["f32[]"], ["f32[2,3]"], ["f32[8,2,3]"]]
    w, x = jnp.ones((2, 3)), jnp.ones(3)
    assert stages[1]["stats"]["histogram"] == primitive_counts(
        jax.make_jaxpr(jax.grad(lambda w, x: jnp.sum(jnp.tanh(w @ x))))(w, x)
    )
    # nested vmaps peel off one batch axis each, outermost first; in_axes as pytrees
    r = run(
        '%jaxpr --compare -t "vmap(in_axes=(None, 0))" -t "vmap(in_axes=(0, None))" '
        "jnp.subtract(jnp.ones((5, 3)), jnp.ones((7, 3)))"
    )
    assert r.error is None, r.stdout
    assert [s["in_avals"] for s in r.bundle[JAXPR_COMPARE_MIME]["stages"]] == [
        ["f32[3]", "f32[3]"],
        ["f32[3]", "f32[7,3]"],
        ["f32[5,3]", "f32[7,3]"],
    ]
    r = run(
        "%jaxpr --compare -t \"vmap(in_axes=({'a': 1},))\" "
        "(lambda d: d['a'] * 2)({'a': jnp.ones((4, 3))})"
    )
    assert r.error is None, r.stdout
    assert [s["in_avals"] for s in r.bundle[JAXPR_COMPARE_MIME]["stages"]] == [
        ["f32[4]"],
        ["f32[4,3]"],
    ]


def test_compare_inside_vmap_knows_every_static_argument(run, shell):
    """``in_axes`` written over the traced arguments skips *every* static one: those named by
    ``--static-argnames`` but passed positionally and those the ``jax.jit`` declares itself,
    not only ``--static-argnums``.  Before, the per-example stage of such a call kept the
    batch axis (``f32[8,3]`` where vmap passes ``f32[3]``)."""
    shell.user_ns["pw"] = lambda n, x: jnp.sum(x**n)
    shell.user_ns["jpw"] = jax.jit(shell.user_ns["pw"], static_argnums=0)
    for cell in (
        '%jaxpr --compare -t "vmap(in_axes=(0,))" --static-argnames n pw(2, jnp.ones((8, 3)))',
        '%jaxpr --compare -t "vmap(in_axes=(0,))" jpw(2, jnp.ones((8, 3)))',
        '%jaxpr --compare -t "vmap(in_axes=(0,))" --static-argnums 0 pw(2, jnp.ones((8, 3)))',
    ):
        r = run(cell)
        assert r.error is None, (cell, r.stdout)
        stages = r.bundle[JAXPR_COMPARE_MIME]["stages"]
        assert [s["in_avals"] for s in stages] == [["f32[3]"], ["f32[8,3]"]], cell
        assert [s["out_avals"] for s in stages] == [["f32[]"], ["f32[8]"]], cell


def test_compare_inside_vmap_reports_a_wrong_in_axes_in_jax_words(run):
    """An ``in_axes`` that does not fit the arguments is JAX's error about ``in_axes``, as
    without ``--compare``, not a ``tree_map`` failure of the workbench's own bookkeeping."""
    cell = (
        "%jaxpr {}-t \"vmap(in_axes=({{'b': 0}},))\" "
        "(lambda d: d['a'] * 2)({{'a': jnp.ones((4, 3))}})"
    )
    with pytest.raises(ValueError) as jax_says:
        jax.vmap(lambda d: d["a"] * 2, in_axes=({"b": 0},))({"a": jnp.ones((4, 3))})
    first = str(jax_says.value).splitlines()[0][:60]
    for flags in ("", "--compare "):
        r = run(cell.format(flags))
        assert r.error is not None, flags
        assert first in r.short_error() and "tree_map" not in r.short_error(), (flags, r.stdout)


def test_compare_inside_vmap_keeps_weak_types(run, shell):
    """One example of a weakly typed array is weakly typed (as vmap traces it): ``f16 + weak
    f32`` stays ``f16``, in the per-example stage as in the batched one."""
    shell.user_ns["a16"] = jnp.ones(8, jnp.float16)
    shell.user_ns["weak"] = jnp.broadcast_to(jnp.asarray(2.0), (8,))
    assert shell.user_ns["weak"].weak_type  # the premise
    r = run("%jaxpr --compare -t vmap jnp.add(a16, weak)")
    assert r.error is None, r.stdout
    stages = r.bundle[JAXPR_COMPARE_MIME]["stages"]
    one = jax.eval_shape(jnp.add, jnp.ones((), jnp.float16), jnp.asarray(2.0))
    assert one.dtype == jnp.float16  # what JAX does with one weak example
    assert [s["out_avals"] for s in stages] == [["f16[]"], ["f16[8]"]]


def test_static_argnums_flag(run):
    r = run("%%jaxpr --static-argnums 1\ndef p(x, n):\n    return x ** n\np(jnp.ones(3), 3)")
    assert r.error is None, r.stdout
    assert "integer_pow[y=3]" in r.bundle["text/plain"]
    r = run("%%jaxpr --static-argnames n\ndef q(x, n=2):\n    return x ** n\nq(jnp.ones(3), n=4)")
    assert r.error is None, r.stdout
    assert "integer_pow[y=4]" in r.bundle["text/plain"]


def test_depth_is_accepted_and_changes_no_data(run):
    """``--depth`` opened nested jaxprs in the old Python HTML; the views fold on their own
    now, so the flag is accepted and the payload is the same whatever it says."""
    cell = (
        "%%jaxpr --depth {d}\ndef s(x):\n    return jax.lax.scan(lambda c, y: (c + y, c), x,"
        " jnp.ones((3, 2)))[0]\ns(jnp.ones(2))"
    )
    closed, opened = (run(cell.format(d=d)) for d in (0, 1))
    assert closed.error is None and opened.error is None
    prims = [
        [eq["primitive"] for eq in r.bundle[JAXPR_MIME]["jaxpr"]["eqns"]] for r in (closed, opened)
    ]
    assert prims[0] == prims[1] and "scan" in prims[0]


# -- bad input: short messages, namespace intact ---------------------------------------------


def test_last_line_not_a_call(run, shell):
    r = run("%%jaxpr\nkept_value = 41\nkept_value + 1")
    text = r.short_error()
    assert "must be a call" in text and "kept_value + 1" in text
    assert shell.user_ns["kept_value"] == 41  # the body ran as a normal cell would


def test_syntax_error_names_line(run):
    r = run("%%jaxpr\ndef f(x:\n    return x\nf(1)")
    text = r.short_error()
    assert "SyntaxError" in text and "line 2" in text


def test_unknown_transform_and_flag(run, shell):
    shell.user_ns.pop("never_defined", None)
    r = run("%%jaxpr -t gard\nnever_defined = 1\nlen([])")
    text = r.short_error()
    assert "unknown transform 'gard'" in text and "grad" in text
    assert "never_defined" not in shell.user_ns  # nothing ran
    for line in ("%%jaxpr --bogus\nlen([])", "%jaxpr --bogus f(x)"):  # same in both forms
        text = run(line).short_error()
        assert "unknown flag '--bogus'" in text and "-t/--transform NAME" in text


def test_grad_of_non_scalar(run):
    r = run("%%jaxpr -t grad\ndef vec(x):\n    return x * 2\nvec(jnp.ones(3))")
    text = r.short_error()
    assert "Gradient only defined for scalar-output functions" in text
    assert "vec(jnp.ones(3))" in text  # the user's call line


def test_tracer_bool_conversion(run):
    r = run("%%jaxpr\ndef relu(x):\n    if x > 0:\n        return x\n    return 0.0\nrelu(1.0)")
    text = r.short_error()
    assert "TracerBoolConversionError" in text
    assert "if x > 0:" in text and "line 3" in text
    assert "errors.html" in text  # JAX's hint link


def test_shape_mismatch(run):
    run(LOSS_CELL)
    r = run("%jaxpr loss(jnp.ones((3, 4)), jnp.ones((2, 5)))")
    text = r.short_error()
    assert "dot_general" in text and "x @ w" in text


def test_function_that_raises(run, shell):
    r = run(
        "%%jaxpr\nbefore = 'ok'\ndef boom(x):\n    raise ValueError('bad input here')\nboom(1.0)"
    )
    text = r.short_error()
    assert "ValueError" in text and "bad input here" in text and "line 4" in text
    assert shell.user_ns["before"] == "ok"
    assert shell.user_ns["boom"] is not None


def test_body_error_keeps_earlier_assignments(run, shell):
    r = run("%%jaxpr\nfirst = 1\nundefined_name_xyz\nsecond = 2\nlen([])")
    text = r.short_error()
    assert "NameError" in text and "line 3" in text
    assert shell.user_ns["first"] == 1 and "second" not in shell.user_ns


def test_kernel_survives_errors(run):
    run("%%jaxpr\ndef relu2(x):\n    if x > 0:\n        return x\n    return x\nrelu2(1.0)")
    r = run(LOSS_CELL)
    assert r.error is None


# -- escaping ---------------------------------------------------------------------------------

XSS = "<img src=x onerror=alert(1)>"


def test_named_scope_and_source_are_escaped(run):
    r = run(f"""%%jaxpr
def evil(x):
    with jax.named_scope('{XSS}'):
        return jnp.sin(x) + len('{XSS}')
evil(jnp.ones(2))
""")
    assert r.error is None, r.stdout
    html = r.bundle["text/html"]
    assert XSS not in html
    # the summary names no scope; the payload the view draws (as text) carries it
    assert XSS in json.dumps(schemas.unpack(r.bundle[JAXPR_MIME]))


def test_function_name_is_escaped(run, shell):
    def f(x):
        return x + 1

    f.__name__ = f.__qualname__ = XSS
    shell.user_ns["evil_f"] = f
    r = run("%jaxpr -t grad evil_f(1.0)")
    assert r.error is None, r.stdout
    assert XSS not in r.bundle["text/html"]
    assert "grad(&lt;img" in r.bundle["text/html"]


def test_error_text_in_html_free_output(run):
    r = run(f"%%jaxpr\ndef e2(x):\n    raise ValueError('{XSS}')\ne2(1.0)")
    # error output is plain text (not HTML), so the string is inert; it is shown as written
    assert XSS in r.stdout + r.stderr


@pytest.mark.parametrize("line", ["%jaxpr", "%jaxpr -t grad", "%jaxpr 3 + 4"])
def test_line_magic_usage(run, line):
    r = run(line)
    assert r.error is not None
    assert len((r.stdout + r.stderr).strip().splitlines()) <= 4


def test_line_magic_unquoted_transform_with_spaces(run):
    run(LOSS_CELL)
    r = run("%jaxpr -t vmap(in_axes=(None, 0)) loss(jnp.ones((4, 4)), jnp.ones((3, 2, 4)))")
    assert r.error is None, r.stdout
    assert r.bundle[JAXPR_MIME]["label"] == "vmap(loss, in_axes=(None, 0))"


def test_stray_return_is_a_short_syntax_error(run):
    r = run("%%jaxpr\nreturn 3\nlen([])")
    assert "SyntaxError" in r.short_error()
