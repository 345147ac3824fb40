"""A lowering matched to an inspection by where its function is defined (a library's jit
traced inside the workbench's) must not take another closure of the same code's place."""

from workbench.engine.cache.tracker import CACHE


def _reasons(run, code: str) -> list[str]:
    before = len(CACHE.records())
    run(code)
    new = [r for r in CACHE.records()[before:] if r.function == "jit(<lambda>)"]
    assert len(new) == 1, new
    return [m.kind for m in new[0].reasons]


def test_sibling_closure_does_not_take_anothers_inspection(run):
    run("def rv_mk(k):\n    return jax.jit(lambda x: x * k)\nrv_fs = [rv_mk(1.0), rv_mk(2.0)]")
    run("%jaxpr --text rv_fs[0](jnp.ones(3))")
    run("jax.make_jaxpr(rv_fs[1])(jnp.ones(3))")  # rv_fs[1]'s trace is cached, not compiled
    assert _reasons(run, "rv_fs[1](jnp.ones(3))") != ["cache_cleared"]
    # rv_fs[0]'s first call compiles the inspection's trace; then a real shape change
    assert _reasons(run, "rv_fs[0](jnp.ones(3))") != ["unknown"]
    assert _reasons(run, "rv_fs[0](jnp.ones(4))") == ["shape"]
