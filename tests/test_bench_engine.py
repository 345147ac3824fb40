"""The benchmark engine on real JAX calls: blocking, first call, interleaving, failures, hygiene.

Budgets are tiny (0.1-0.3 s); the assertions are about correctness, not speed.
"""

from __future__ import annotations

import _thread
import gc
import json
import threading
import time

import jax
import jax.numpy as jnp
import pytest

from workbench.engine.bench_peaks import DevicePeak, peak_for, register_peak
from workbench.engine.bench_result import Benchmark
from workbench.engine.bench_runner import Progress, run_benchmark
from workbench.engine.bench_sampler import BenchInputError, ledger_available
from workbench.engine.bench_stats import summarize


def _heavy_dict(x):
    y = (x @ x) @ x
    return {"cheap": x[0, 0], "heavy": y}


def test_pytree_outputs_are_waited_for_on_every_leaf():
    """A dict whose *second* leaf is the slow one must not be under-measured."""
    f = jax.jit(_heavy_dict)
    x = jnp.ones((768, 768)) / 768  # ~20 ms on CPU, dispatched asynchronously
    jax.block_until_ready(f(x))
    # reference: the bare loop a careful user writes, and the dispatch-only time
    ref, dispatch = [], []
    for _ in range(7):
        t0 = time.perf_counter()
        jax.block_until_ready(f(x))
        ref.append(time.perf_counter() - t0)
        t0 = time.perf_counter()
        out = f(x)
        dispatch.append(time.perf_counter() - t0)
        jax.block_until_ready(out)
    ref_min, ref_med = min(ref), summarize(ref).median
    # the test can tell: not waiting would measure far less than even the fastest call
    assert summarize(dispatch).median < 0.3 * ref_min
    b = run_benchmark(f, (x,), budget=0.4, with_roofline=False)
    m = b.measurements[0]
    assert m.ok and "dict of 2 leaves" in m.output
    # a shared machine makes the matmul's time vary; under-measuring would be 10x+ off
    assert 0.5 * ref_min < m.median < 3 * ref_med


def test_first_call_is_apart_and_split_by_the_ledger():
    f = jax.jit(lambda x: jnp.tanh(x) * 3 + 1)  # a fresh function: compiles on first call
    b = run_benchmark(f, (jnp.ones(64),), budget=0.2, with_roofline=False)
    m = b.measurements[0]
    fc = m.first_call
    assert fc is not None and fc.total_s > 0
    assert m.warmup_calls >= 1 and m.number >= 1
    assert fc.total_s > 5 * m.median  # the compile is not in the steady-state samples
    assert max(m.samples) < fc.total_s
    assert ledger_available()
    assert fc.source == "ledger" and fc.compiles >= 1
    assert fc.compile_s is not None and fc.compile_s > 0 and fc.trace_s is not None
    assert any("<lambda>" in name for name in fc.functions)
    # a second benchmark of the same function finds it compiled
    again = run_benchmark(f, (jnp.ones(64),), budget=0.1, with_roofline=False)
    assert again.measurements[0].first_call.compiles == 0


def test_number_and_repeat_by_hand():
    f = jax.jit(lambda x: x + 1)
    b = run_benchmark(f, (jnp.ones(8),), number=7, repeat=5, budget=0.1, with_roofline=False)
    m = b.measurements[0]
    assert m.number == 7 and len(m.samples) == 5 and m.stats.n == 5


def test_variants_run_interleaved():
    log: list[str] = []
    ready = jnp.ones(3)
    jax.block_until_ready(ready)

    def make(name):
        def fn(x):
            log.append(name)
            return ready
        fn.__name__ = name
        return fn

    b = run_benchmark({"A": make("A"), "B": make("B")}, (1,), number=3, repeat=4,
                      budget=0.1, with_roofline=False)
    sampling = log[-24:]
    assert sampling == (["A"] * 3 + ["B"] * 3) * 4
    # both first calls happened before any sample
    assert log.index("B") < len(log) - 24
    assert [m.variant for m in b.measurements] == ["A", "B"]
    assert len(b.comparisons) == 1 and b.comparisons[0].ratio.pairs == 4


def test_comparison_ratio_of_a_slower_variant():
    x = jnp.ones((256, 256))
    fast = jax.jit(lambda x: x @ x)
    slow = jax.jit(lambda x: (x @ x) @ x @ x)  # about three times the work
    b = run_benchmark({"fast": fast, "slow": slow}, (x,), budget=0.4, with_roofline=False)
    r = b.comparisons[0].ratio
    assert (r.variant, r.reference) == ("slow", "fast")
    assert 1.5 < r.median < 6 and r.ci_low <= r.median <= r.ci_high


def test_interrupt_stops_cleanly_and_keeps_samples():
    ready = jnp.ones(4)
    jax.block_until_ready(ready)

    def busy(x):
        t_end = time.perf_counter() + 2e-4
        while time.perf_counter() < t_end:
            pass
        return ready

    events: list[Progress] = []

    def observer(p: Progress) -> None:
        events.append(p)
        if p.phase == "sampling" and len(p.measurements[0].samples) == 3:
            # what the kernel's interrupt button does: SIGINT -> KeyboardInterrupt in
            # the main thread, at whatever bytecode runs next (often a timed loop)
            threading.Timer(0.01, _thread.interrupt_main).start()

    t0 = time.perf_counter()
    b = run_benchmark(busy, (1,), budget=30, precision=0, number=20, with_roofline=False,
                      observer=observer)
    assert time.perf_counter() - t0 < 10
    assert b.interrupted
    m = b.measurements[0]
    assert m.interrupted and len(m.samples) >= 3 and m.stats.n == len(m.samples)
    assert gc.isenabled()
    assert events[-1].phase == "interrupted" and events[-1].benchmark is b


def test_failures_are_reported_and_the_others_go_on():
    def boom(x):
        return x / undefined_name  # noqa: F821 - the user's bug

    b = run_benchmark({"ok": jax.jit(lambda x: x * 2), "boom": boom,
                       "none": lambda x: None, "text": lambda x: "done"},
                      (jnp.ones(4),), budget=0.2, with_roofline=False)
    ok, boom_m, none_m, text_m = b.measurements
    assert ok.ok and ok.stats is not None
    assert boom_m.error.kind == "NameError" and boom_m.error.phase == "first call"
    assert boom_m.error.where is not None and boom_m.error.where.file == __file__
    assert "undefined_name" in boom_m.error.where.text
    assert none_m.error.kind == "OutputError" and "no arrays" in none_m.error.summary
    assert text_m.error.kind == "OutputError" and "str" in text_m.error.summary
    assert [c.ratio.variant for c in b.comparisons] == []  # no samples for the others


@pytest.mark.parametrize("kwargs,needle", [
    ({"budget": 0}, "budget must be a positive"),
    ({"budget": float("nan")}, "budget must be a positive"),
    ({"number": 0}, "number must be"),
    ({"repeat": 2.5}, "repeat must be"),
    ({"sweep": {"n": [1]}}, "make_args"),
    ({"sweep": {"n": [1], "m": [2]}, "make_args": lambda n: n}, "one parameter"),
])
def test_bad_settings_are_one_clear_message(kwargs, needle):
    with pytest.raises(BenchInputError, match=needle):
        run_benchmark(jax.jit(lambda x: x), (), **kwargs)
    assert "BenchInputError" in BenchInputError("x")._render_traceback_()[0]


def test_sweep_fits_exponent_and_survives_a_failing_size():
    ready = jnp.ones(2)
    jax.block_until_ready(ready)

    def spin(microseconds):  # wall time exactly proportional to the size
        t_end = time.perf_counter() + microseconds * 1e-6
        while time.perf_counter() < t_end:
            pass
        return ready

    def make_args(n):
        if n == 300:
            raise ValueError(f"cannot build n={n}")
        return n

    sizes = [100, 200, 300, 400, 800]
    # one call per sample: a descheduled spin (a busy machine) spoils a few samples, not all
    b = run_benchmark(spin, sweep={"n": sizes}, make_args=make_args, number=1, repeat=15,
                      with_roofline=False)
    assert b.sweep_param == "n" and b.sweep_values == sizes
    bad = b.measurement(n=300)
    assert bad.error.kind == "ValueError" and bad.error.phase == "make_args"
    assert "n=300" in bad.error.summary
    good = [b.measurement(n=n) for n in sizes if n != 300]
    assert all(m.ok for m in good)
    (fit,) = b.fits
    assert fit.points == 4 and fit.exponent == pytest.approx(1.0, abs=0.1)
    assert fit.coefficient == pytest.approx(1e-6, rel=0.5)


def test_no_device_arrays_are_kept():
    f = jax.jit(lambda x: {"a": x * 2, "b": jnp.sin(x)})

    def raises(x):
        y = x * 3  # an array alive in the failing frame
        raise RuntimeError(f"bad {y.shape}")

    gc.collect()
    before = len(jax.live_arrays())
    b = run_benchmark({"f": f, "raises": raises}, sweep={"n": [128, 256, 512]},
                      make_args=lambda n: (jnp.ones((n, 4)),), budget=0.3)
    ok = run_benchmark(f, (jnp.arange(8.0),), budget=0.1)
    gc.collect()
    assert len(jax.live_arrays()) == before
    assert b.measurement("f", n=128).ok and b.measurement("raises", n=128).error is not None
    assert ok.ok


def test_roofline_with_table_override_and_unknown_peak():
    x = jnp.ones((128, 128))
    f = jax.jit(lambda x: x @ x)
    b = run_benchmark(f, (x,), budget=0.2,
                      peaks=DevicePeak("my cpu", {"float32": 1e11}, 2e10, "override"))
    r = b.measurements[0].roofline
    assert r.flops == pytest.approx(2 * 128**3, rel=0.05)
    assert r.flops_per_s == pytest.approx(r.flops / b.measurements[0].median)
    assert r.peak_source == "override" and r.flops_fraction == pytest.approx(r.flops_per_s / 1e11)
    assert r.bound in ("compute", "memory")
    plain = run_benchmark(f, (x,), budget=0.1).measurements[0].roofline
    assert plain.peak_source == "unknown" and plain.flops_fraction is None
    assert "unknown peak" in plain.note
    # an eager function is not analysed as jax.jit(fn) (a different program, a new compile)
    eager = run_benchmark(lambda x: x @ x, (x,), budget=0.1).measurements[0].roofline
    assert eager.flops is None and "not a jax.jit function" in eager.note


def test_peak_table_matches_device_kinds():
    assert peak_for("NVIDIA H100 80GB HBM3").name == "NVIDIA H100 SXM"
    assert peak_for("NVIDIA H200").bytes_per_s == pytest.approx(4.8e12)
    assert peak_for("NVIDIA A100-SXM4-40GB").name == "NVIDIA A100 40GB"
    assert peak_for("TPU v5 lite").name == "TPU v5e"
    assert peak_for("cpu") is None
    register_peak(r"^my-test-accelerator$", DevicePeak("mine", {"float32": 1.0}, 1.0))
    assert peak_for("my-test-accelerator").name == "mine"


def test_result_as_data_roundtrips_with_environment():
    b = run_benchmark({"a": jax.jit(lambda x: x + 1), "b": jax.jit(lambda x: x - 1)},
                      (jnp.ones(16),), budget=0.2)
    d = json.loads(b.to_json())
    assert d["version"] == 1 and d["kind"] == "bench"
    env = d["env"]
    assert env["jax_version"] == jax.__version__ and env["backend"] == "cpu"
    assert env["device_count"] == jax.device_count() and "device_count=8" in env["xla_flags"]
    assert env["cpu_count"] and env["cpu_model"]
    back = Benchmark.from_json(b.to_json())
    assert back.to_dict() == b.to_dict()
    assert back.env.differences(b.env) == {}
    r = back.compare_to(b, "a")
    assert r.median == pytest.approx(1.0)
    df = b.to_dataframe()
    assert list(df["variant"]) == ["a", "b"] and df["median_s"].iloc[0] == b.median
    long = b.to_dataframe(samples=True)
    assert len(long) == sum(len(m.samples) for m in b.measurements)
