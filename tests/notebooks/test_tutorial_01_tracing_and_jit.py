"""notebooks/01_tracing_and_jit.ipynb teaches what it says: the tracer is what the prose
describes, the jaxprs hold the primitives it names (compared with ``jax.make_jaxpr`` of the
same functions here), what is baked in is baked in, and each compile line gives the reason
the prose explains."""

from __future__ import annotations

from functools import partial

import jax
import jax.numpy as jnp
import pytest

from tests import tutorials
from tests.tutorials import CACHE, CACHE_CELL, JAXPR, PERSISTENT, histogram

NAME = "01_tracing_and_jit"
# the Binder session's: they read the run Binder's environment made (tests/tutorials.py)
pytestmark = [pytest.mark.notebook, pytest.mark.binder]


@pytest.fixture(scope="module")
def r():
    return tutorials.run(NAME)


def groups(cell, function: str | None = None) -> list[dict]:
    return [
        g
        for d in tutorials.data_of(cell, CACHE_CELL)
        for g in d["functions"]
        if function is None or g["function"] == function
    ]


def reasons(cell, function: str) -> list[tuple[str, str | None, str | None]]:
    return [
        (m["kind"], m["before"], m["after"]) for g in groups(cell, function) for m in g["reasons"]
    ]


def test_a_tracer_is_an_abstract_value_and_cached_calls_skip_python(r):
    first = r.cell("@jax.jit\ndef normalize")
    text = tutorials.printed(first)
    assert text.count("normalize got") == 1 and "float32[4]" in text
    assert "jax.typeof(x): float32[4] | shape (4,) | dtype float32" in text
    assert "[0." not in text  # no data in the tracer
    (g,) = groups(first, "jit(normalize)")
    assert g["compiles"] == 1 and g["reasons"] == []
    cached = r.cell("normalize(b)")
    assert tutorials.printed(cached) == "" and tutorials.data_of(cached, CACHE_CELL) == []


def standardize(x):
    m = jnp.mean(x)
    s = jnp.sqrt(jnp.mean((x - m) ** 2))
    return jnp.where(s > 0, (x - m) / s, 0.0)


def test_the_jaxpr_holds_the_primitives_the_prose_names(r):
    shown = tutorials.one(r.cell("%%jaxpr\ndef standardize"), JAXPR)
    want = histogram(jax.make_jaxpr(standardize)(jnp.arange(4.0)))
    assert shown["stats"]["histogram"] == want
    assert {"reduce_sum", "div", "integer_pow", "sqrt", "select_n"} <= set(want)
    assert "mean" not in want  # jnp.mean is not a primitive


def test_side_effects_run_once_and_debug_print_every_call(r):
    cell = r.cell("calls = []")
    text = tutorials.printed(cell)
    (seen,) = [ln for ln in text.splitlines() if ln.startswith("print sees")]
    assert "float32[2]" in seen and "0." not in seen  # once, the tracer, no values
    assert [ln for ln in text.splitlines() if ln.startswith("debug.print sees")] == [
        "debug.print sees [0. 0.]",
        "debug.print sees [1. 1.]",
        "debug.print sees [2. 2.]",
    ]
    assert "calls recorded: [(2,)]" in text
    (g,) = groups(cell, "jit(noisy)")
    assert g["compiles"] == 1
    hist = tutorials.one(r.cell("%jaxpr noisy("), JAXPR)["stats"]["histogram"]
    assert [p for p in hist if p.startswith("debug")], hist  # debug_print (debug_callback)


def test_globals_become_constants_and_go_stale(r):
    cell = r.cell("%%jaxpr\nscale = 2.0")
    shown = tutorials.one(cell, JAXPR)
    text = "".join(o["data"]["text/plain"] for o in cell.outputs if JAXPR in o.get("data", {}))
    head = text.split(".", 1)[0]
    assert head.startswith("{ lambda a:f32[3]; b:f32[3]")  # offset: a constant input
    assert "mul 2.0:f32[]" in text  # scale: a literal
    assert shown["in_avals"] == ["f32[3]"]  # neither is an argument
    stale = r.cell("fast_affine = jax.jit(affine)")
    lines = tutorials.printed(stale).splitlines()
    assert lines[0] == "[3. 4. 5.]" and lines[1].startswith("[3. 4. 5.]")
    assert [g["compiles"] for g in groups(stale, "jit(affine)")] == [1]


def power_sum(x, n):
    total = jnp.zeros_like(x)
    for k in range(1, n + 1):
        total = total + x**k
    return total


def test_static_arguments_unroll_and_compile_once_per_value(r):
    (g,) = groups(
        r.cell("from functools import partial\n\n@partial(jax.jit, static_argnames"),
        "jit(power_sum)",
    )
    assert g["compiles"] == 1 and g["reasons"] == []
    assert reasons(r.cell("power_sum(jnp.arange(3.0), n=4)"), "jit(power_sum)") == [
        ("static_arg", "3", "4")
    ]
    shown = tutorials.one(r.cell("%jaxpr power_sum("), JAXPR)
    want = histogram(jax.make_jaxpr(power_sum, static_argnums=1)(jnp.arange(3.0), 3))
    assert shown["stats"]["histogram"] == want
    assert want["integer_pow"] == 3 and want["add"] == 3  # the prose's unrolled loop
    (err,) = [
        o for o in r.cell("%%jaxpr\ndef power_sum_traced").outputs if o.output_type == "error"
    ]
    assert err["ename"] == "CellError" and "TracerIntegerConversionError" in err["evalue"]
    assert "range(1, n + 1)" in err["evalue"]
    printed = tutorials.printed(r.cell("try:\n    power_sum(jnp.arange(3.0), n=[3])"))
    assert printed.startswith("ValueError: Non-hashable static arguments")
    # the same rule in this process: a list is not a valid static value
    with pytest.raises(ValueError):
        jax.jit(power_sum, static_argnames="n")(jnp.arange(3.0), n=[3])


def test_each_recompile_has_the_reason_the_prose_gives(r):
    shape = r.cell("normalize(jnp.arange(5.0))")
    assert reasons(shape, "jit(normalize)") == [("shape", "f32[4]", "f32[5]")]
    assert "normalize got" in tutorials.printed(shape)  # a new program: traced again
    weak = r.cell("@jax.jit\ndef scale_by")
    assert reasons(weak, "jit(scale_by)") == [("weak_type", "f32[]", "weak f32[]")]
    assert tutorials.printed(weak) == f"{jax.typeof(jnp.float32(2.0))} vs {jax.typeof(2.0)}\n"
    assert str(jax.typeof(2.0)).startswith("~")  # the prose: weak types are marked with ~
    # the weak type the prose describes, as JAX computes it here
    assert (jnp.ones(3, jnp.bfloat16) * 2.0).dtype == jnp.bfloat16
    closure = groups(r.cell("def make_update"))
    assert [m["kind"] for g in closure for m in g["reasons"]] == ["closure"]
    (jaxcache,) = [c for c in r.code_cells() if c.source == "%jaxcache"]
    table = tutorials.one(jaxcache, CACHE)
    names = {f["function"] for f in table["functions"] if f["origin"] == "user"}
    assert {"jit(normalize)", "jit(power_sum)", "jit(scale_by)", "jit(noisy)"} <= names
    assert any(f["origin"] == "jax" for f in table["functions"])


def test_capture_and_the_guard(r):
    captured = r.cell("with workbench.capture_compiles() as compiles:")
    result = "".join(
        o["data"]["text/plain"] for o in captured.outputs if o.output_type == "execute_result"
    )
    assert "('jit(normalize)', 'compile', ['x changed f32[5] -> f32[6]'])" in result
    assert tutorials.printed(r.cell("with workbench.no_recompiles():")) == "no recompiles\n"
    message = tutorials.printed(r.cell("try:\n    with workbench.no_recompiles():"))
    assert "1 recompile inside no_recompiles()" in message
    assert "jit(normalize)" in message and "x changed f32[6] -> f32[7]" in message


def test_the_persistent_cache_loads_after_the_memory_cache_is_cleared(r):
    status = tutorials.one(r.cell("import tempfile"), PERSISTENT)
    assert status["min_compile_time_s"] == 0
    (written,) = groups(r.cell("@jax.jit\ndef rbf"), "jit(rbf)")
    assert written["persistent_written"] == 1
    (hit,) = groups(r.cell("jax.clear_caches()"), "jit(rbf)")
    assert hit["persistent_hits"] == 1
    assert [m["kind"] for m in hit["reasons"]] == ["cache_cleared"]
    # the prose: a hit is still traced and lowered; only XLA's compile becomes a read
    assert hit["trace_s"] > 0 and hit["lower_s"] > 0 and hit["compiles"] == 1
    # JAX stores the compile time in whole seconds: under a second it reads 0, and the
    # "saved" figure (stored time minus read time) is negative, as the prose warns
    if written["compile_s"] < 1.0:
        assert hit["time_saved_s"] < 0
    cells = {c.source: c for c in r.cells_starting("%jaxcache persist")}
    stats = tutorials.one(cells["%jaxcache persist"], PERSISTENT)
    assert stats["directory"] == status["directory"]
    assert stats["hits"] >= 1 and stats["written"] >= 1
    assert tutorials.one(cells["%jaxcache persist off"], PERSISTENT)["directory"] is None


def test_exercises_check_what_their_prose_asks(r):
    assert len(r.exercises) == 3
    for k in (1, 2, 3):
        (check,) = [
            c
            for c in r.code_cells()
            if "check" in tutorials.tags(c) and f'"Exercise {k}: correct' in c.source
        ]
        assert f"Exercise {k}: correct" in tutorials.printed(check)
    # exercise 3's buckets are the ones its prompt names (3 -> 8, 8 -> 8, 9 -> 16)
    (check3,) = [c for c in r.code_cells() if '"Exercise 3: correct' in c.source]
    assert "Exercise 3: correct (15 lengths, 3 buckets)" in tutorials.printed(check3)
    # exercise 1's unrolled loop, as JAX traces the solution here
    solution = partial(jax.jit, static_argnums=(1,))(lambda x, n: _repeat(jnp.sin, x, n))
    assert histogram(solution.trace(jnp.ones(5), 3).jaxpr)["sin"] == 3


def _repeat(f, x, n):
    for _ in range(n):
        x = f(x)
    return x


def test_ends_with_what_you_saw_and_the_link_to_autodiff(r):
    heads = [h for h, _ in tutorials.sections(r.committed)]
    assert heads[-2:] == ["What you saw", "Exercises"]
    (saw,) = [
        c
        for c in r.committed.cells
        if c.cell_type == "markdown" and c.source.startswith("## What you saw")
    ]
    assert "[02_autodiff](02_autodiff.ipynb)" in saw.source
