"""``workbench.no_recompiles()`` and the ``no_recompiles`` pytest fixture, on real jits."""

from __future__ import annotations

import os
import subprocess
import sys
import textwrap
import threading
from pathlib import Path

import jax
import jax.numpy as jnp
import numpy as np
import pytest

import workbench
from workbench import RecompileError, no_recompiles

pytest_plugins = ["pytester"]

HERE = Path(__file__).name
ROOT = Path(__file__).resolve().parents[2]


def _line_of(marker: str) -> int:
    for i, text in enumerate(Path(__file__).read_text().splitlines(), 1):
        if marker in text and "_line_of" not in text:
            return i
    raise AssertionError(marker)


def test_same_shapes_twice_passes():
    @jax.jit
    def same_twice(x):
        return x * 2

    same_twice(jnp.ones(8))
    with no_recompiles() as guard:
        same_twice(jnp.ones(8))
        same_twice(jnp.ones(8))
    assert guard.recompiles == []


def test_new_shape_fails_with_reason_and_line():
    @jax.jit
    def new_shape(x):
        return x + 1

    new_shape(jnp.ones(8, jnp.float32))
    with pytest.raises(RecompileError) as err:
        with no_recompiles():
            new_shape(jnp.ones(16, jnp.float32))  # the recompiling line
    msg = str(err.value)
    assert isinstance(err.value, AssertionError)
    assert "1 recompile inside no_recompiles()" in msg
    assert "jit(new_shape)" in msg
    assert "x changed f32[8] -> f32[16]" in msg
    assert f"{HERE}:{_line_of('# the recompiling line')}" in msg
    assert [r.function for r in err.value.records] == ["jit(new_shape)"]


def test_first_compile_of_a_new_function_passes():
    @jax.jit
    def brand_new(x):
        return x - 1

    with no_recompiles() as guard:
        brand_new(jnp.ones(3))
        jnp.tanh(jnp.ones(5))  # JAX's eager helpers never count
    assert guard.recompiles == []


def test_weak_type_change_fails():
    @jax.jit
    def scale(x, s):
        return x * s

    scale(jnp.ones(3), 2.0)  # a Python float: weak f32[]
    with pytest.raises(RecompileError, match=r"s changed weak f32\[\] -> f32\[\]"):
        with no_recompiles():
            scale(jnp.ones(3), jnp.float32(2.0))


def test_dtype_change_fails():
    @jax.jit
    def to_dtype(x):
        return x * 3

    to_dtype(jnp.ones(4, jnp.float32))
    with pytest.raises(RecompileError, match=r"x changed f32\[4\] -> i32\[4\]"):
        with no_recompiles():
            to_dtype(jnp.ones(4, jnp.int32))


def _jax_explains_static_changes() -> bool:
    """Whether this JAX's ``jax_explain_cache_misses`` names a changed static argument's
    values (0.10 does; 0.12 says "cache miss explanation unavailable")."""
    import logging

    seen: list[str] = []

    class Grab(logging.Handler):
        def emit(self, record: logging.LogRecord) -> None:
            seen.append(record.getMessage())

    def probe(x, n):
        return x + n

    probe_jit = jax.jit(probe, static_argnums=1)
    probe_jit(jnp.ones(2), 1)
    handler, log = Grab(), logging.getLogger("jax")
    log.addHandler(handler)
    try:
        with jax.explain_cache_misses(True):
            probe_jit(jnp.ones(2), 2)
    finally:
        log.removeHandler(handler)
    text = "\n".join(m for m in seen if m.startswith("TRACING CACHE MISS"))
    assert "probe" in text, seen
    return "Static(" in text


def test_static_arg_change_fails():
    """A changed static argument after a warm-up outside any guard (no ``%load_ext``):
    JAX's own explanation is all there is; where it names the values the message does,
    where it names none the recompile is still caught, said to come without a reason."""

    def power(x, n):
        return x**n

    power_jit = jax.jit(power, static_argnums=1)
    power_jit(jnp.ones(3), 2)
    with no_recompiles():
        power_jit(jnp.ones(3), 2)
    # where JAX names no values, the message has them only if the tracker saw the warm-up
    # (it listens whenever an earlier test in this process loaded the extension)
    expected = (
        r"static .*2 -> 3"
        if _jax_explains_static_changes()
        else r"power.*(static n changed 2 -> 3|compiled before with other arguments; JAX gave "
        r"no reason)"
    )
    with pytest.raises(RecompileError, match=expected):
        with no_recompiles():
            power_jit(jnp.ones(3), 3)


def test_static_arg_change_names_both_values_once_the_warm_up_was_seen():
    def power(x, n):
        return x**n

    power_jit = jax.jit(power, static_argnums=1)
    with workbench.capture_compiles():
        power_jit(jnp.ones(3), 2)
    with pytest.raises(RecompileError, match=r"static n changed 2 -> 3"):
        with no_recompiles():
            power_jit(jnp.ones(3), 3)


def test_allow_and_functions_filter():
    @jax.jit
    def watched(x):
        return x * 5

    @jax.jit
    def ignored(x):
        return x * 6

    watched(jnp.ones(2))
    ignored(jnp.ones(2))
    with no_recompiles(allow=1) as guard:
        watched(jnp.ones(3))
    assert len(guard.recompiles) == 1
    with no_recompiles(functions=[watched]):
        ignored(jnp.ones(4))
    with no_recompiles(functions=["ignored"]) as guard:
        watched(jnp.ones(5))
    assert guard.recompiles == []
    with pytest.raises(RecompileError, match=r"jit\(watched\)"):
        with no_recompiles(functions=[watched]):
            watched(jnp.ones(6))


def test_inspections_never_count():
    @jax.jit
    def inspected(x):
        return jnp.sin(x)

    inspected(jnp.ones(2))
    with no_recompiles():
        assert workbench.inspect(inspected, jnp.ones(7)).hlo_text  # it compiles: not counted
        workbench.jaxpr(inspected, jnp.ones(9))

    @jax.jit
    def inspected_first(x):
        return jnp.cos(x)

    # JAX's cache holds the inspection's trace: the user's first call is still a first
    workbench.jaxpr(inspected_first, jnp.ones(3))
    with no_recompiles():
        inspected_first(jnp.ones(5))


def test_nested_guards():
    @jax.jit
    def nested(x):
        return x / 2

    nested(jnp.ones(2))
    # the inner guard tolerates one; the outer one sees it too
    with pytest.raises(RecompileError, match="x changed f32\\[2\\] -> f32\\[3\\]"):
        with no_recompiles():
            with no_recompiles(allow=1) as inner:
                nested(jnp.ones(3))
            assert len(inner.recompiles) == 1
    # the inner guard's failure is what propagates; the outer one does not mask it
    with pytest.raises(RecompileError, match="x changed f32\\[3\\] -> f32\\[4\\]") as err:
        with no_recompiles(allow=5):
            with no_recompiles():
                nested(jnp.ones(4))
    assert "allowed" not in str(err.value)  # the inner guard's message, not the outer's


def test_an_error_in_the_block_wins():
    @jax.jit
    def raising(x):
        return x

    raising(jnp.ones(2))
    with pytest.raises(ValueError, match="the user's"):
        with no_recompiles():
            raising(jnp.ones(3))
            raise ValueError("the user's")


def test_threads_are_watched_apart():
    @jax.jit
    def threaded(x):
        return x * 7

    threaded(jnp.ones(2))
    errors: list[BaseException] = []

    def worker(n: int, guarded: bool) -> None:
        try:
            if guarded:
                with no_recompiles():
                    threaded(jnp.ones(n))
            else:
                threaded(jnp.ones(n))
        except BaseException as e:  # noqa: B036 - reported to the main thread
            errors.append(e)

    # another thread's recompile is not this block's
    with no_recompiles():
        t = threading.Thread(target=worker, args=(11, False))
        t.start()
        t.join()
    assert errors == []
    # a guard on a worker thread catches that thread's own recompile
    t = threading.Thread(target=worker, args=(12, True))
    t.start()
    t.join()
    assert len(errors) == 1 and isinstance(errors[0], RecompileError)
    assert "f32[12]" in str(errors[0])
    # one guard object used from two threads at once keeps their blocks apart
    guard = no_recompiles()
    barrier = threading.Barrier(2)
    seen: list[int] = []

    def first_a(x):
        return x + 1

    def first_b(x):
        return x + 2

    fresh = {13: jax.jit(first_a), 14: jax.jit(first_b)}
    threaded(jnp.ones(15))

    def shared(n: int) -> None:
        with guard:
            barrier.wait()
            fresh[n](jnp.ones(n))  # first compiles only
            barrier.wait()
        seen.append(n)

    ts = [threading.Thread(target=shared, args=(n,)) for n in (13, 14)]
    for t in ts:
        t.start()
    for t in ts:
        t.join()
    assert sorted(seen) == [13, 14]


def test_a_closure_recreated_in_a_loop_fails():
    """jit inside a loop makes a new function object each time: the same code compiles
    again (the ledger's "closure" reason)."""

    def run(k):
        return jax.jit(lambda x: x * k)(jnp.ones(3))

    # the ledger must have seen the earlier object (JAX's own explanation only says
    # "never seen function" of a new one): here a first guard records it
    with no_recompiles():
        run(1)
    with pytest.raises(RecompileError, match="closure re-created"):
        with no_recompiles():
            run(2)


def test_with_the_extension_loaded(shell):
    shell.run_cell(
        textwrap.dedent("""
        import workbench
        @jax.jit
        def in_notebook(x):
            return x * 9
        in_notebook(jnp.ones(2))
    """),
        store_history=False,
    )
    ok = shell.run_cell(
        "with workbench.no_recompiles():\n    in_notebook(jnp.ones(2))", store_history=False
    )
    assert ok.error_in_exec is None
    bad = shell.run_cell(
        "with workbench.no_recompiles():\n    in_notebook(jnp.ones(3))", store_history=False
    )
    assert isinstance(bad.error_in_exec, RecompileError)
    assert "x changed f32[2] -> f32[3]" in str(bad.error_in_exec)


@pytest.mark.slow  # a second JAX process
@pytest.mark.jax_process
def test_without_the_extension_a_function_compiled_before_is_known():
    """In a fresh process the tracker never listened to the first compile: JAX's own
    cache-miss explanation tells the guard it is a recompile."""
    code = textwrap.dedent("""
        import jax, jax.numpy as jnp, workbench
        from workbench.engine.cache import CACHE
        f = jax.jit(lambda x: x * 2)
        f(jnp.ones(8))
        assert CACHE.records() == []
        with workbench.no_recompiles():
            f(jnp.ones(8))
            jax.jit(lambda y: y)(jnp.ones(2))
        try:
            with workbench.no_recompiles():
                f(jnp.ones(16))
        except workbench.RecompileError as e:
            print(e)
    """)
    env = {**os.environ, "PYTHONPATH": str(ROOT), "JAX_PLATFORMS": "cpu"}
    out = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, env=env, timeout=120
    )
    assert out.returncode == 0, out.stderr
    assert "x changed f32[8] -> f32[16]" in out.stdout
    assert "<string>:12" in out.stdout


def test_pytest_fixture(pytester):
    pytester.makepyfile(
        textwrap.dedent("""
        import jax, jax.numpy as jnp
        pytest_plugins = ["workbench.testing"]

        @jax.jit
        def step(x):
            return x * 2

        def test_cached(no_recompiles):
            step(jnp.ones(4))
            with no_recompiles:
                step(jnp.ones(4))

        def test_recompiles(no_recompiles):
            step(jnp.ones(4))
            with no_recompiles:
                step(jnp.ones(5))

        def test_allowed(no_recompiles):
            step(jnp.ones(4))
            with no_recompiles(allow=1, functions=[step]):
                step(jnp.ones(6))
    """)
    )
    result = pytester.runpytest("-p", "no:cacheprovider")
    result.assert_outcomes(passed=2, failed=1)
    out = result.stdout.str()
    assert "RecompileError: 1 recompile inside no_recompiles()" in out
    assert "test_pytest_fixture.py:16: x changed f32[4] -> f32[5]" in out
    assert "FAILED test_pytest_fixture.py::test_recompiles" in out
    assert "raise RecompileError" not in out  # the guard's own frame is hidden


def test_numpy_inputs_same_types_pass():
    @jax.jit
    def from_numpy(x):
        return x + 1

    from_numpy(np.ones(3, np.float32))
    with no_recompiles():
        from_numpy(np.ones(3, np.float32))
        from_numpy(jnp.ones(3, jnp.float32))


# -- what JAX users do around the guard ------------------------------------------------


def test_aot_compile_and_donation_and_shard_map_are_judged_by_shape():
    from jax.sharding import Mesh
    from jax.sharding import PartitionSpec as P

    try:
        from jax import shard_map
    except ImportError:  # older JAX
        from jax.experimental.shard_map import shard_map  # type: ignore[no-redef]

    aot = jax.jit(lambda x: x + 1)
    compiled = aot.lower(jnp.ones(8)).compile()
    donating = jax.jit(lambda x: x * 3, donate_argnums=0)
    donating(jnp.ones(4))
    mesh = Mesh(np.array(jax.devices()[:1]), ("i",))
    mapped = jax.jit(shard_map(lambda a: a * 2, mesh=mesh, in_specs=P("i"), out_specs=P("i")))
    mapped(jnp.ones(4))
    with no_recompiles() as guard:
        compiled(jnp.ones(8))
        aot(jnp.ones(8))  # a jit call after the AOT compile of the same types
        donating(jnp.ones(4))
        mapped(jnp.ones(4))
    assert guard.recompiles == []
    with pytest.raises(RecompileError, match=r"x changed f32\[8\] -> f32\[3\]"):
        with no_recompiles():
            aot.lower(jnp.ones(3)).compile()
    with pytest.raises(RecompileError, match=r"a changed f32\[4\] -> f32\[6\]"):
        with no_recompiles():
            mapped(jnp.ones(6))


def test_clear_caches_inside_the_block_fails_when_the_warm_up_was_seen():
    """The ledger saw the warm-up (here: a guard around it) -> the compile after
    ``jax.clear_caches()`` reads "caches cleared".  (A warm-up no ledger saw is a limit:
    after the clear JAX itself calls the function never seen.)"""
    cleared = jax.jit(lambda x: x - 1)
    with no_recompiles():
        cleared(jnp.ones(8))
    with pytest.raises(RecompileError, match="caches were cleared"):
        with no_recompiles():
            jax.clear_caches()
            cleared(jnp.ones(8))


def test_a_guard_and_an_inspection_leave_no_listener_or_config_behind():
    from jax._src import monitoring

    from workbench.engine.cache import CACHE

    def state():
        return (
            len(monitoring._event_listeners),
            len(monitoring._event_duration_secs_listeners),
            CACHE._users,
            dict(jax.config.values),
        )

    f = jax.jit(lambda x: x * 2)
    f(jnp.ones(8))
    before = state()
    with no_recompiles():
        f(jnp.ones(8))
    with pytest.raises(RecompileError):
        with no_recompiles():
            f(jnp.ones(9))
    with pytest.raises(ValueError):
        with no_recompiles():
            raise ValueError
    workbench.inspect(f, jnp.ones(8))
    assert state() == before
    assert not jax.config.jax_explain_cache_misses
