"""notebooks/08_random_numbers.ipynb teaches what it says: keys are typed values in the jaxprs
it shows (the same jaxprs JAX makes here), the legacy key is wrapped, split/fold_in are the
primitives the prose names, a reused key is caught by ``jax_debug_key_reuse`` (and the
notebook turns the checker off again), keys batch under vmap, a captured key is a constant,
and the compiled sampler takes ``u32[2]`` and computes Threefry with integer ops, as XLA
compiles it in this process."""

from __future__ import annotations

from collections import Counter

import jax
import numpy as np
import pytest

from tests import tutorials
from tests.tutorials import HLO, histogram, shown_jaxpr

NAME = "08_random_numbers"
# the Binder session's: they read the run Binder's environment made (tests/tutorials.py)
pytestmark = [pytest.mark.notebook, pytest.mark.binder]

THREEFRY_OPS = ("add", "xor", "shift-left", "shift-right-logical", "or")


@pytest.fixture(scope="module")
def run():
    return tutorials.run(NAME)


def all_eqns(payload: dict) -> list[dict]:
    out = []

    def walk(jaxpr):
        for e in jaxpr["eqns"]:
            out.append(e)
            for sub in e.get("subjaxprs", []):
                walk(sub["jaxpr"])

    walk(payload["jaxpr"])
    return out


def aval_texts(payload: dict, atoms: list) -> list[str]:
    return [payload["avals"][a[1]]["text"] for a in atoms]


def sample(key):
    return jax.random.normal(key, (3,))


@pytest.fixture(scope="module")
def key():
    return jax.random.key(0)  # the notebook's key (made here, not at import: no JAX at collection)


def test_a_key_is_a_value_and_the_same_key_gives_the_same_numbers(run, key):
    out = tutorials.printed(run.cell("key = jax.random.key(0)")).splitlines()
    assert out[0] == f"key<fry> () {jax.random.key_data(key)}"
    assert out[1] == out[2].split(" equal:")[0] and out[2].endswith("equal: True")
    np.testing.assert_allclose(
        np.array(out[1].strip("[]").split(), dtype=np.float32), np.asarray(sample(key)), rtol=1e-6
    )


def test_the_sampler_jaxpr_takes_a_typed_key_and_draws_bits_with_random_bits(run, key):
    shown = shown_jaxpr(run, "%%jaxpr\ndef sample(key):")
    assert shown["in_avals"] == ["key<fry>[]"]
    expected = histogram(jax.make_jaxpr(sample)(key))
    assert shown["stats"]["histogram"] == dict(expected)
    assert {"random_bits", "shift_right_logical", "or", "bitcast_convert_type", "erf_inv"} <= set(
        expected
    )
    (bits,) = [e for e in all_eqns(shown) if e["primitive"] == "random_bits"]
    assert aval_texts(shown, bits["outvars"]) == ["u32[3]"]


def test_the_legacy_key_is_raw_uint32_wrapped_in_the_jaxpr(run):
    printed = tutorials.printed(run.cell("old = jax.random.PRNGKey(0)")).splitlines()
    assert printed[0].startswith("uint32 (2,)")
    assert printed[1] == "same numbers: True"
    assert printed[2].startswith("TypeError:")
    shown = shown_jaxpr(run, "%jaxpr sample(old)")
    assert shown["in_avals"] == ["u32[2]"]
    assert shown["jaxpr"]["eqns"][0]["primitive"] == "random_wrap"
    old = jax.random.PRNGKey(0)
    assert shown["stats"]["histogram"] == dict(histogram(jax.make_jaxpr(sample)(old)))


def test_split_and_fold_in_are_the_primitives_named(run, key):
    two = shown_jaxpr(run, "%%jaxpr\ndef two_draws(key):")
    (split,) = [e for e in two["jaxpr"]["eqns"] if e["primitive"] == "random_split"]
    assert aval_texts(two, split["outvars"]) == ["key<fry>[2]"]

    def two_draws(k):
        k1, k2 = jax.random.split(k)
        return jax.random.normal(k1, (2,)), jax.random.normal(k2, (2,))

    expected = histogram(jax.make_jaxpr(two_draws)(key))
    assert two["stats"]["histogram"] == dict(expected)
    # the prose: unpacking takes the key<fry>[2] apart with slices or one unstack (0.10 slices,
    # 0.12 unstacks: this process's JAX made the shown jaxpr, so the histograms match above)
    assert ("unstack" in expected) != ("slice" in expected)
    fold = shown_jaxpr(run, "%%jaxpr\ndef key_for_step(key, step):")
    assert [e["primitive"] for e in fold["jaxpr"]["eqns"]] == [
        "convert_element_type",
        "random_fold_in",
    ]
    lines = tutorials.printed(run.cell("k3, k3_again, k4 =")).splitlines()
    k3 = str(jax.random.key_data(jax.random.fold_in(key, 3)))
    k4 = str(jax.random.key_data(jax.random.fold_in(key, 4)))
    assert lines[0] == f"step 3 twice: {k3} {k3}"
    assert lines[1].split(":", 1)[1].strip() == k4 and k3 != k4


def test_key_reuse_is_caught_then_the_checker_is_turned_off(run):
    assert tutorials.printed(run.cell("layer_key = jax.random.key(42)")).strip() == (
        "identical layers: True"
    )
    cell = run.cell("%%jaxpr\ndef init(key):\n    w1 = jax.random.normal(key")
    assert "raises-exception" in tutorials.tags(cell)
    (err,) = [o for o in cell.outputs if o.output_type == "error"]
    assert err["ename"] == "CellError" and err["evalue"].startswith("KeyReuseError")
    assert "w2 = jax.random.normal(key, (2, 2))" in err["evalue"]  # the second use
    fixed = shown_jaxpr(run, "%%jaxpr\ndef init(key):\n    k1, k2 = jax.random.split(key)")
    assert "random_split" in fixed["stats"]["histogram"]
    # the prose: samplers and split consume a key, fold_in does not
    with jax.debug_key_reuse(True):
        base = jax.random.key(1)
        jax.random.fold_in(base, 1), jax.random.fold_in(base, 2)
        jax.random.split(base)
        with pytest.raises(jax.errors.KeyReuseError):
            jax.random.split(base)
        drawn = jax.random.key(2)
        jax.random.normal(drawn)
        with pytest.raises(jax.errors.KeyReuseError):
            jax.random.normal(drawn)
    eager = tutorials.printed(run.cell("fresh = jax.random.key(7)")).splitlines()
    assert eager[0].startswith("KeyReuseError:")
    assert eager[1] == "clone gives the same numbers: True"
    off = run.cell('jax.config.update("jax_debug_key_reuse", False)')
    assert tutorials.printed(off).strip() == "checker on after the block: False"
    # turned on, then off again, in that order
    sources = [c.source for c in run.code_cells()]
    on_at = sources.index('jax.config.update("jax_debug_key_reuse", True)')
    assert sources.index(off.source) > on_at


def test_under_vmap_random_bits_takes_a_batch_of_keys(run, key):
    keys = jax.random.split(key, 4)
    shown = shown_jaxpr(run, "%jaxpr -t vmap sample(keys)")
    assert shown["in_avals"] == ["key<fry>[4]"]
    (bits,) = [e for e in all_eqns(shown) if e["primitive"] == "random_bits"]
    assert aval_texts(shown, bits["invars"]) == ["key<fry>[4]"]
    assert aval_texts(shown, bits["outvars"]) == ["u32[4,3]"]
    assert shown["stats"]["histogram"] == dict(histogram(jax.make_jaxpr(jax.vmap(sample))(keys)))
    text = tutorials.printed(run.cell("def add_noise(key, x):"))
    shared, per_key = text.split("a key per example:")
    shared_rows = [ln.strip(" []") for ln in shared.splitlines()[1:] if ln.strip()]
    per_key_rows = [ln.strip(" []") for ln in per_key.splitlines() if ln.strip()]
    assert len(shared_rows) == 3 and len(set(shared_rows)) == 1
    assert len(per_key_rows) == 3 and len(set(per_key_rows)) == 3


def test_under_jit_a_captured_key_is_a_constant_and_an_argument_is_not(run):
    lines = tutorials.printed(run.cell("@jax.jit\ndef noisy_captured(x):")).splitlines()
    assert len(lines) == 2 and lines[0] == lines[1]
    shown = shown_jaxpr(run, "%jaxpr noisy_captured")
    assert aval_texts(shown, shown["jaxpr"]["constvars"]) == ["key<fry>[]"]
    assert shown["in_avals"] == ["f32[3]"]
    lines = tutorials.printed(run.cell("@jax.jit\ndef noisy(key, x):")).splitlines()
    assert len(lines) == 2 and lines[0] != lines[1]


def test_the_compiled_sampler_takes_u32_2_and_computes_threefry_with_integer_ops(run, key):
    (payload,) = tutorials.data_of(run.cell("compiled = %hlo sample(key)"), HLO)
    comps = payload["module"]["computations"]
    (entry,) = [c for c in comps if c["entry"]]
    params = [i["shape"] for i in entry["instructions"] if i["opcode"] == "parameter"]
    assert params == ["u32[2]"]

    def opcode(i):
        return i["opcode"] if isinstance(i, dict) else i[1]

    ops = Counter(opcode(i) for c in comps for i in c["instructions"])
    assert all(ops[op] > 0 for op in THREEFRY_OPS), ops
    # the printed table is the same count
    printed = tutorials.printed(run.cell("from collections import Counter")).splitlines()
    assert printed[0] == "entry parameters: ['u32[2]']"
    assert printed[1] == str({op: ops[op] for op in (*THREEFRY_OPS, "while")})
    assert ops["while"] >= 1  # the rounds are a loop on the CPU, as the prose says
    # XLA compiles the same in this process
    text = jax.jit(sample).lower(key).compile().as_text()
    assert "entry_computation_layout={(u32[2]{0})->f32[3]{0}}" in text
    assert all(f" {op}(" in text for op in THREEFRY_OPS)
    assert payload["counts"]["hlo_instructions"] == sum(len(c["instructions"]) for c in comps)


def test_the_walk_check_tells_an_exclusive_sum_what_position_t_is(run):
    """A walk that returns the position *before* each step fails with a hint that says
    what position t is and how step t is drawn."""
    wrong = (
        "def random_walk(key, n):\n"
        "    s = jax.vmap(lambda t: jax.random.normal(jax.random.fold_in(key, t)))(jnp.arange(n))\n"
        "    return jnp.cumsum(s) - s"
    )
    ns = {"jax": jax, "jnp": jax.numpy}
    exec(wrong, ns)
    check = run.committed.cells[run.exercises[2].check].source
    with pytest.raises(AssertionError, match=r"step t included.*fold_in\(key, t\)"):
        exec(check, ns)
