"""The measured profiler on real CPU profiles: events, attribution, coverage, front doors.

Expected values come from JAX: the compiled module's own text (its instruction names),
the test's own source lines (where the matmuls are), the profile's own events.
"""

from __future__ import annotations

import inspect
import re
import sys
from pathlib import Path

import jax
import jax.numpy as jnp
import pytest

import workbench
from workbench.engine.hlo.parser import parse_hlo
from workbench.engine.profile import run as prun
from workbench.engine.profile.events import cpu_events
from workbench.engine.profile.run import ProfileError, profile_call
from workbench.engine.profile.store import forget, measured, module_key
from workbench.views._standalone import static_part
from workbench.views.errors import WorkbenchError
from workbench.views.profile import PROFILE_MIME

_NAME = re.compile(r"^\s*(?:ROOT\s+)?%?([\w.\-]+)\s*=", re.M)


def two_matmuls(w1, w2, x):
    h = x @ w1
    y = jnp.maximum(h, 0.0) @ w2
    return y + 1.0


def _matmul_lines() -> set[int]:
    lines, first = inspect.getsourcelines(two_matmuls)
    return {first + i for i, text in enumerate(lines) if "@" in text}


@pytest.fixture(scope="module")
def mm_args():
    k1, k2, k3 = jax.random.split(jax.random.key(0), 3)
    return (
        jax.random.normal(k1, (384, 384)),
        jax.random.normal(k2, (384, 384)),
        jax.random.normal(k3, (256, 384)),
    )


def _trace(fn, args, calls=3):
    """The raw ProfileData of ``calls`` calls and the compiled module (engine pieces)."""
    call = prun.prepare(fn, args, {})
    text = call.compiled.as_text()
    prun._run_once(call, "warm-up")
    with prun.profiler_session() as where:
        for _ in range(calls):
            prun._run_once(call, "call")
        jax.profiler.stop_trace()
        pd = prun.read_trace(where)
    return pd, text


def test_cpu_events_are_named_like_the_compiled_instructions(mm_args):
    pd, text = _trace(two_matmuls, mm_args)
    names = set(_NAME.findall(text))
    module = parse_hlo(text)
    ours = []
    for plane in pd.planes:
        for line in plane.lines:
            for e in line.events:
                st = dict(e.stats)
                if st.get("hlo_module") == module.name and "hlo_op" in st:
                    ours.append((e.name, st["hlo_op"]))
    assert ours, "the trace has per-instruction events"
    assert all(name == op and name in names for name, op in ours)
    # every entry instruction that does work ran, once per call
    entry = {
        i.name
        for i in module.entry.instructions
        if i.opcode not in ("parameter", "constant", "tuple", "get-tuple-element", "bitcast")
    }
    ev = cpu_events(pd, module.name, names)
    assert len(ev.steps) == 3
    for st in ev.steps:
        assert {e.instruction for e in st.events} == entry
        assert st.start_ns <= st.events[0].start_ns and st.events[-1].end_ns <= st.end_ns


def test_two_matmuls_put_most_time_on_the_matmul_lines(mm_args):
    rep = profile_call(two_matmuls, mm_args, {}, calls=7)
    file = inspect.getsourcefile(two_matmuls)
    on_mm = sum(ln.seconds for ln in rep.lines if ln.file == file and ln.line in _matmul_lines())
    assert on_mm / rep.fusion_seconds > 0.6
    dots = [p for p in rep.primitives if p.name == "dot_general"]
    assert dots and dots[0].share > 0.6
    # per-line times add up to the per-instruction ones, exactly (a partition of each)
    assert sum(ln.seconds for ln in rep.lines) == pytest.approx(rep.fusion_seconds, rel=1e-12)
    assert sum(p.seconds for p in rep.primitives) == pytest.approx(rep.fusion_seconds, rel=1e-12)
    assert sum(i.share for i in rep.instructions) == pytest.approx(1.0)
    # coverage: attributed events over the measured step, a fraction
    assert 0.0 < rep.coverage <= 1.0 and rep.attributed_s <= rep.step_s
    assert rep.calls == 7 and len(rep.step_seconds) == 7
    # FLOPs of the top table: our count of the optimized HLO; each dot is 2*M*N*K
    m, k, n = mm_args[2].shape[0], mm_args[0].shape[0], mm_args[0].shape[1]
    with_dots = [r for r in rep.instructions if "dot" in r.label]
    assert len(with_dots) == 2
    for r in with_dots:
        assert r.flops == pytest.approx(2 * m * k * n, rel=0.01)  # + a fused max or add
        assert r.cost_source == "counted" and r.dtype == "float32"
        if r.seconds >= 2e-6:
            assert r.flops_per_s == pytest.approx(r.flops / r.seconds)
            assert r.bound is None  # CPU: no peak in the table
    # the listing shows this file's lines, the matmuls among them with their time
    (listing,) = [ls for ls in rep.listings if ls.file == file]
    timed = {n: sec for n, _, sec, _ in listing.rows if sec is not None}
    assert _matmul_lines() <= set(timed)


def test_instruction_times_are_medians_of_the_events(mm_args):
    pd, text = _trace(two_matmuls, mm_args, calls=5)
    module = parse_hlo(text)
    ev = cpu_events(pd, module.name, set(_NAME.findall(text)))
    from workbench.engine.profile.attribute import attribute

    rep = attribute(ev, module, label="t", backend="cpu", device_kind="cpu", module_key="k")
    for row in rep.instructions:
        per_call = sorted(
            sum(e.self_ns for e in st.events if e.instruction == row.name) for st in ev.steps
        )
        assert row.seconds == pytest.approx(per_call[2] * 1e-9)


def test_profile_twin_view_and_store(mm_args):
    forget()
    d = workbench.profile(two_matmuls, *mm_args, n=3, top=2)
    bundle = d._repr_mimebundle_()
    assert set(bundle) == {"text/plain", "text/html", PROFILE_MIME}
    text = bundle["text/plain"]
    assert "coverage:" in text and "unknown peak" in text  # CPU: no peak in the table
    assert "y = jnp.maximum(h, 0.0) @ w2" in text  # the listing shows the source
    payload = bundle[PROFILE_MIME]
    assert payload["kind"] == "profile" and payload["top"] == 2
    assert payload["coverage"] == d.report.coverage
    html = static_part(bundle["text/html"])
    # the summary: no picture (the view's timeline is drawn by the runtime), the top lines
    assert "<svg" not in html and "<script" not in html
    assert "jnp.maximum(h, 0.0) @ w2" in html
    # the store: %%hlo of the same compiled module is coloured by measured time
    key = d.report.module_key
    assert measured(key) is d.report
    h = workbench.hlo(two_matmuls, *mm_args)
    assert h.report.module_key == key and h.report.measured == d.report.measured_by_instruction()
    hlo_html = h._repr_mimebundle_()["text/html"]
    assert "<b>measured</b> device time" in hlo_html and "(%%jaxprof of this module)" in hlo_html
    other = workbench.hlo(lambda v: v * 3.0, mm_args[0])
    assert other.report.measured is None
    other_html = other._repr_mimebundle_()["text/html"]
    assert "estimated bytes moved" in other_html and "<b>measured</b>" not in other_html


def test_module_key_follows_the_text():
    assert module_key("jit_f", "a") == module_key("jit_f", "a") != module_key("jit_f", "b")


def test_html_escapes_source_text(shell, run):
    r = run(
        "%%jaxprof -n 2\ndef f(x):\n    return (x * 2.0).sum()  # <b>bold</b> & co\nf(jnp.ones(1000))"
    )
    assert r.error is None, r.stdout + r.stderr
    html = r.bundle["text/html"]
    assert "<b>bold</b>" not in html and "&lt;b&gt;bold&lt;/b&gt; &amp; co" in html


# -- the magics ---------------------------------------------------------------------------
MAGIC_CELL = """%%jaxprof -n 3 --top 3
def mlp(w1, w2, x):
    h = jnp.tanh(x @ w1)
    return jnp.sum(h @ w2)
w1, w2, x = jnp.ones((256, 256)), jnp.ones((256, 256)), jnp.ones((128, 256))
mlp(w1, w2, x)
"""


def test_cell_magic_lists_the_cells_lines(shell, run):
    shell.user_ns.pop("mlp", None)
    r = run(MAGIC_CELL)
    assert r.error is None, r.stdout + r.stderr
    assert "mlp" in shell.user_ns  # set-up lines ran
    text = r.bundle["text/plain"]
    assert "cell [" in text and "h = jnp.tanh(x @ w1)" in text
    payload = r.bundle[PROFILE_MIME]
    assert payload["label"] == "mlp(w1, w2, x)" and payload["calls"] == 3
    cell_listing = payload["listings"][0]
    assert cell_listing["in_cell"] and cell_listing["file"].startswith("<workbench-cell")
    timed = [row for row in cell_listing["rows"] if row[2] is not None]
    assert any("@ w1" in row[1] for row in timed) and any("@ w2" in row[1] for row in timed)


def test_line_magic(shell, run):
    shell.run_cell("def _dbl(v):\n    return v * 2.0\n_v = jnp.ones(4096)", store_history=False)
    r = run("%jaxprof -n 2 _dbl(_v)")
    assert r.error is None, r.stdout + r.stderr
    assert r.bundle[PROFILE_MIME]["calls"] == 2


@pytest.mark.parametrize(
    "line,needle",
    [("%jaxprof -n 0 f(x)", "-n"), ("%jaxprof --top 0 f(x)", "--top"), ("%jaxprof -n", "-n")],
)
def test_bad_flags_are_usage_errors(run, line, needle):
    r = run(line)
    assert r.error is not None and needle in r.message


# -- bad input ----------------------------------------------------------------------------
def _no_profile_left(tmp_path: Path) -> None:
    """Nothing written is left, and no profiler is left running (a new one starts)."""
    assert list(tmp_path.iterdir()) == []
    jax.profiler.start_trace(str(tmp_path / "probe"))
    jax.profiler.stop_trace()


def test_a_call_that_raises_at_run_time(tmp_path):
    def boom(x):
        raise ValueError("no such thing")

    def f(x):
        return jax.pure_callback(boom, jax.ShapeDtypeStruct(x.shape, x.dtype), x)

    with pytest.raises(ProfileError) as info:
        profile_call(f, (jnp.ones(3),), {}, calls=2, tmp_root=str(tmp_path))
    assert "warm-up" in str(info.value) and "no such thing" in str(info.value)
    _no_profile_left(tmp_path)


def test_a_call_that_raises_while_profiled(tmp_path, monkeypatch):
    calls = []

    def flaky(x):
        calls.append(1)
        if len(calls) > 2:
            raise RuntimeError("the device fell over")
        return x

    def f(x):
        return jax.pure_callback(flaky, jax.ShapeDtypeStruct(x.shape, x.dtype), x)

    with pytest.raises(ProfileError) as info:
        profile_call(f, (jnp.ones(3),), {}, calls=4, tmp_root=str(tmp_path))
    assert "profiled call 2 of 4" in str(info.value)
    _no_profile_left(tmp_path)


def test_a_function_with_no_jittable_form_names_the_users_line(shell, run):
    r = run(
        "%%jaxprof\nkept = 41\ndef f(x):\n    if x.sum() > 0:\n        return x\n    return -x\n"
        "f(jnp.ones(3))"
    )
    assert r.error is not None
    text = r.short_error()
    assert "TracerBoolConversionError" in text and "if x.sum() > 0:" in text
    assert shell.user_ns["kept"] == 41  # the namespace the cell built is kept


def test_an_output_that_is_not_an_array(run):
    r = run("%%jaxprof\ndef g(x):\n    return 'done'\ng(jnp.ones(3))")
    assert r.error is not None
    text = r.short_error()
    assert "str" in text and "g(jnp.ones(3))" in text


@pytest.fixture
def dbl(shell):
    """``_dbl(_v)`` in the shell: these tests must not lean on test_line_magic having run."""
    shell.run_cell("def _dbl(v):\n    return v * 2.0\n_v = jnp.ones(4096)", store_history=False)


def test_a_profiler_already_running(run, tmp_path, dbl):
    jax.profiler.start_trace(str(tmp_path / "users"))
    try:
        r = run("%jaxprof -n 2 _dbl(_v)")
        assert r.error is not None
        text = r.short_error()
        assert "already running" in text and "_dbl(_v)" in text
    finally:
        jax.profiler.stop_trace()  # the user's profiler was left running: theirs to stop
    with pytest.raises(WorkbenchError, match="already running"):
        jax.profiler.start_trace(str(tmp_path / "users2"))
        try:
            workbench.profile(lambda v: v + 1, jnp.ones(3), n=2)
        finally:
            jax.profiler.stop_trace()


def test_an_unwritable_temporary_directory(tmp_path, run, monkeypatch, dbl):
    blocker = tmp_path / "a-file"
    blocker.write_text("not a directory")
    with pytest.raises(WorkbenchError, match="cannot create a temporary directory") as info:
        workbench.profile(lambda v: v + 1, jnp.ones(3), n=2, tmp_dir=str(blocker / "sub"))
    assert "TMPDIR" in str(info.value)
    import tempfile

    monkeypatch.setattr(tempfile, "tempdir", str(blocker))
    r = run("%jaxprof -n 2 _dbl(_v)")
    assert r.error is not None and "cannot create a temporary directory" in r.short_error()
    monkeypatch.undo()
    (tmp_path / "empty").mkdir()
    _no_profile_left(tmp_path / "empty")  # no profiler left running


def test_a_backend_without_device_events(tmp_path, monkeypatch):
    real = prun.device_events

    def as_if_metal(profile, platform, module, calls, device_id=0, **kw):
        return real(profile, "metal", module, calls, device_id, **kw)

    monkeypatch.setattr(prun, "device_events", as_if_metal)
    with pytest.raises(ProfileError, match="metal backend is not supported") as info:
        profile_call(lambda v: v * 2, (jnp.ones(8),), {}, calls=2, tmp_root=str(tmp_path))
    assert info.value.report.kind == "NoDeviceEvents"
    _no_profile_left(tmp_path)


def test_bad_arguments_to_the_twin():
    with pytest.raises(ValueError, match="n \\(the number of profiled calls\\)"):
        workbench.profile(lambda v: v, jnp.ones(2), n=0)
    with pytest.raises(ValueError, match="top"):
        workbench.profile(lambda v: v, jnp.ones(2), top=0)
    with pytest.raises(TypeError, match="needs a function"):
        workbench.profile(3, jnp.ones(2))


def test_donated_arguments_are_not_consumed():
    f = jax.jit(lambda v: v * 2.0, donate_argnums=0)
    x = jnp.ones(1024)
    rep = profile_call(f, (x,), {}, calls=3)
    assert not x.is_deleted() and float(x.sum()) == 1024.0
    assert rep.calls == 3


def test_static_arguments_of_a_jitted_function():
    f = jax.jit(lambda v, k: v * k, static_argnums=1)
    rep = profile_call(f, (jnp.ones(64), 3), {}, calls=2)
    assert rep.calls == 2 and rep.instructions


# -- the 24-layer transformer gradient ----------------------------------------------------
@pytest.mark.slow  # compiles the 24-layer gradient (seconds)
def test_coverage_of_the_24_layer_transformer_gradient():
    sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "benchmarks"))
    from bench_jaxpr import init_params, make_loss

    params, x = init_params()
    # 20 calls: coverage is a median of per-call fractions, steadier with more calls.  The
    # step is the executor's run: the host's dispatch before it (0.3 ms quiet, up to 3 ms on
    # a loaded machine, which took single rounds to 82%) is kept apart, said in a note
    rep = profile_call(jax.grad(make_loss()), (params, x), {}, calls=20)
    assert "ThunkExecutor::Execute" in rep.step_source
    assert any("host dispatched the call" in n for n in rep.notes)
    assert len(rep.instructions) > 500
    assert sum(ln.seconds for ln in rep.lines) == pytest.approx(rep.fusion_seconds, rel=1e-9)
    assert rep.coverage >= 0.9, rep.notes


def test_no_user_array_is_kept_alive(tmp_path):
    import gc
    import weakref

    x = jnp.ones((64, 64))
    ref = weakref.ref(x)
    rep = profile_call(lambda v: (v @ v).sum(), (x,), {}, calls=2)
    with pytest.raises(ProfileError):
        profile_call(lambda v: v, (x,), {}, calls=2, tmp_root=str(tmp_path / "missing" / "x"))
    del x
    gc.collect()
    assert ref() is None and rep.calls == 2


def test_command_buffer_flag_on_cpu_says_it_does_nothing():
    rep = profile_call(lambda v: v * 2, (jnp.ones(16),), {}, calls=2, command_buffers=False)
    assert "GPU feature" in rep.notes[0]


def test_an_spmd_program_is_timed_on_one_device():
    """On the 8 fake CPU devices every device runs each instruction: the times are one
    device's (events_per_call 1), not the sum over the eight."""
    from jax.sharding import NamedSharding
    from jax.sharding import PartitionSpec as P

    mesh = jax.make_mesh((8,), ("d",))
    x = jax.device_put(jnp.ones((1024, 256)), NamedSharding(mesh, P("d")))
    rep = profile_call(lambda a, w: jnp.tanh(a @ w).sum(), (x, jnp.ones((256, 256))), {}, calls=3)
    assert any("ran on 8 devices" in n for n in rep.notes)
    assert all(r.events_per_call == 1 for r in rep.instructions)
    assert any(r.opcode == "all-reduce" for r in rep.instructions)
    assert rep.busy_s <= rep.step_s


def test_steps_by_time_window_match_steps_by_run_id(mm_args):
    """The fast path (a single-device program: steps by dispatch windows, names as hlo_op,
    almost no stats read) finds exactly what reading every event's stats finds."""
    pd, text = _trace(two_matmuls, mm_args, calls=4)
    module = parse_hlo(text)
    names = set(_NAME.findall(text))
    slow = cpu_events(pd, module.name, names)
    fast = cpu_events(pd, module.name, names, single_device=True)
    assert len(fast.steps) == len(slow.steps) == 4
    for a, b in zip(fast.steps, slow.steps, strict=True):
        assert (a.start_ns, a.end_ns) == (b.start_ns, b.end_ns)
        assert [(e.instruction, e.start_ns, e.duration_ns, e.self_ns) for e in a.events] == [
            (e.instruction, e.start_ns, e.duration_ns, e.self_ns) for e in b.events
        ]


def test_html_reads_when_sanitised(mm_args):
    """The checks every view's HTML passes (tests/views/test_fallback_html.py): essentials inline,
    no SVG text left loose by a sanitizer, theme colours only."""
    from tests.views.test_fallback_html import essentials_inline, sanitize, theme_colours_only

    html = workbench.profile(two_matmuls, *mm_args, n=3)._repr_mimebundle_()["text/html"]
    s = essentials_inline(html)
    theme_colours_only(html)
    clean = sanitize(html)
    assert "<td" in clean and "coverage:" in clean and "y = jnp.maximum(h, 0.0) @ w2" in clean
    assert not any(tag == "svg" for tag, _ in s.tags)  # the timeline is the runtime's


def test_arguments_donated_by_name_are_not_consumed():
    """``donate_argnames``: a keyword argument donated is copied too (Compiled.args_info
    says which leaves are donated), so the user's array survives every call."""
    f = jax.jit(lambda v, w: v * 2.0 + w, donate_argnames="w")
    x, w = jnp.ones(1024), jnp.ones(1024)
    rep = profile_call(f, (x,), {"w": w}, calls=2)
    assert not w.is_deleted() and float(w.sum()) == 1024.0
    assert rep.calls == 2
    g = jax.jit(lambda k, v, u: v * k + u, static_argnums=0, donate_argnums=2)
    y, u = jnp.ones(64), jnp.ones(64)
    assert profile_call(g, (3, y, u), {}, calls=2).calls == 2
    assert not u.is_deleted() and not y.is_deleted()


@pytest.mark.parametrize(
    "cell",
    [
        "%jaxprof -n 2 _str16(_big16)",
        "%%jaxprof -n 2\n_str16(_big16)",
        "workbench.profile(_str16, _big16, n=2)",
        "workbench.profile(_str16, _big16, n=0)",
        "%jaxprof -n 2 _raise16(_big16)",
        "%jaxprof -n 2 _trace16(_big16)",
        "%jaxprof --compile _trace16(_big16)",
    ],
)
def test_a_failed_profile_does_not_keep_the_array_alive(run, shell, cell, monkeypatch):
    """IPython keeps the last error (sys.last_value) until the next one: neither its
    traceback's frames nor its chained exceptions may hold the user's arrays."""
    import logging

    # JAX logs a failed callback with its traceback (whose frames reach the executing
    # call's); pytest's log capture keeps that record, a notebook's handler does not
    monkeypatch.setattr(logging.getLogger("jax._src.callback"), "disabled", True)
    run(
        "import gc, weakref, workbench\ndef _str16(x):\n    return 'done'\n"
        "def _boom16(v):\n    raise ValueError('nope')\n"
        "def _trace16(x):\n    raise ValueError('at trace time')\n"
        "def _raise16(x):\n    return jax.pure_callback(_boom16, jax.ShapeDtypeStruct(x.shape, x.dtype), x)\n"
        "_big16 = jnp.ones((64, 64))\n_big16_ref = weakref.ref(_big16)"
    )
    out = run(cell)
    assert out.error is not None
    run("del _big16\ngc.collect()")
    assert shell.user_ns["_big16_ref"]() is None, f"{cell} kept the argument alive"


def test_an_interrupt_while_profiled(run, shell, dbl, tmp_path, monkeypatch):
    """Ctrl-C during the profiled calls: one line, Run All stops (still a KeyboardInterrupt),
    the profiler stopped, its files removed, the namespace kept."""
    import tempfile

    from workbench.ipython.cell import CellInterrupted

    real, seen = prun._run_once, []

    def interrupted(call, where):
        seen.append(where)
        if len(seen) == 3:
            raise KeyboardInterrupt
        return real(call, where)

    monkeypatch.setattr(prun, "_run_once", interrupted)
    monkeypatch.setattr(tempfile, "tempdir", str(tmp_path))
    shell.user_ns["kept"] = 7
    r = run("%jaxprof -n 4 _dbl(_v)")
    assert isinstance(r.error, CellInterrupted) and isinstance(r.error, KeyboardInterrupt)
    assert "interrupted while profiling _dbl(_v)" in str(r.error)
    assert shell.user_ns["kept"] == 7 and seen[-1] == "profiled call 2 of 4"
    monkeypatch.undo()
    _no_profile_left(tmp_path)


def _many(ws, x):
    return sum(jnp.tanh(x @ w).sum() for w in ws)


def test_a_cpu_step_starts_when_the_executor_starts():
    """A program run by XLA:CPU's concurrent executor: the step is the executor's run
    (``ThunkExecutor::Execute`` to completion), as a GPU step is its kernels' span; the
    host's dispatch before it (arguments, buffers, waking a thread: it grows with the
    machine's load) is kept apart and said in a note.  Both ways of finding steps agree."""
    ws = [jnp.ones((128, 128)) * i for i in range(8)]
    pd, text = _trace(_many, (ws, jnp.ones((64, 128))), calls=4)
    module = parse_hlo(text)
    names = set(_NAME.findall(text))
    execs, dispatches = [], []
    for plane in pd.planes:
        for line in plane.lines:
            for e in line.events:
                if e.name == "ThunkExecutor::Execute":
                    execs.append(e.start_ns)
                elif e.name.startswith("CommonPjRtLoadedExecutable::ExecuteHelper"):
                    dispatches.append(e.start_ns)
    assert execs, "this program is run by the concurrent executor"
    slow = cpu_events(pd, module.name, names)
    fast = cpu_events(pd, module.name, names, single_device=True)
    assert "ThunkExecutor::Execute" in fast.step_source == slow.step_source
    for a, b in zip(fast.steps, slow.steps, strict=True):
        assert (a.start_ns, a.end_ns, a.dispatch_ns) == (b.start_ns, b.end_ns, b.dispatch_ns)
        assert a.start_ns in execs and a.dispatch_ns > 0
        assert a.start_ns - a.dispatch_ns in dispatches
        assert a.start_ns <= min(e.start_ns for e in a.events)
    rep = profile_call(_many, (ws, jnp.ones((64, 128))), {}, calls=3)
    assert 0 < rep.coverage <= 1 and any("host dispatched the call" in n for n in rep.notes)


def test_a_trace_that_cannot_be_written_or_read(tmp_path, monkeypatch):
    """The profiler failing while it stops (disk full) or its file unreadable: a short
    ProfileError, not the profiler's own exception; the profiler stopped, its files removed."""
    real_stop = jax.profiler.stop_trace
    fails = []

    def stop_badly():
        if not fails:
            fails.append(1)
            real_stop()
            raise OSError(28, "No space left on device")
        real_stop()

    monkeypatch.setattr(jax.profiler, "stop_trace", stop_badly)
    (tmp_path / "a").mkdir()
    (tmp_path / "b").mkdir()
    with pytest.raises(ProfileError, match="No space left on device") as info:
        profile_call(lambda v: v * 2, (jnp.ones(8),), {}, calls=2, tmp_root=str(tmp_path / "a"))
    assert "trace" in str(info.value)
    monkeypatch.undo()
    _no_profile_left(tmp_path / "a")

    def unreadable(path):
        raise RuntimeError(f"could not parse {path}")

    monkeypatch.setattr(jax.profiler.ProfileData, "from_file", unreadable)
    with pytest.raises(ProfileError, match="could not parse"):
        profile_call(lambda v: v * 2, (jnp.ones(8),), {}, calls=2, tmp_root=str(tmp_path / "b"))
    monkeypatch.undo()
    _no_profile_left(tmp_path / "b")


def test_flax_nnx_and_equinox_calls_profile(run, shell):
    """Real ecosystem code: an ``nnx.jit`` function of an NNX module, and an
    ``eqx.filter_jit`` function of an Equinox MLP (whose activation functions are leaves,
    which plain ``jax.jit`` refuses) are profiled over their array leaves."""
    run(
        "import jax, jax.numpy as jnp, equinox as eqx\nfrom flax import nnx\n"
        "_m18 = nnx.Linear(64, 32, rngs=nnx.Rngs(0))\n_x18 = jnp.ones((16, 64))\n"
        "@nnx.jit\ndef _nloss18(m, x):\n    return jnp.mean(m(x) ** 2)\n"
        "_mlp18 = eqx.nn.MLP(64, 8, 32, 2, key=jax.random.PRNGKey(0))\n"
        "@eqx.filter_jit\ndef _eloss18(m, x):\n    return jnp.mean(jax.vmap(m)(x) ** 2)"
    )
    for cell in (
        "%jaxprof -n 2 --text _nloss18(_m18, _x18)",
        "%jaxprof -n 2 --text _eloss18(_mlp18, _x18)",
    ):
        out = run(cell)
        assert out.error is None, (cell, out.error)
        text = shell.display_formatter.format(out.result.result)[0]["text/plain"]
        assert "coverage" in text, (cell, text)
