"""The cache feature (``%load_ext workbench``, ``%jaxcache``) in a real IPython shell,
cell by cell.

Each test defines its own functions (unique names) so the session-wide shell's
cache records from other tests cannot make a test pass or fail.
"""

from __future__ import annotations

import gc
import inspect
import logging
import re
import threading
import typing
import weakref

import jax
import jax.numpy as jnp
import pytest

from workbench.engine import _jax_compat as compat
from workbench.engine.cache import CACHE, CacheTracker, capture_compiles
from workbench.views.cache import CACHE_MIME, CACHE_PERSISTENT_MIME

if typing.TYPE_CHECKING:
    from tests.conftest import CellRun


@pytest.fixture
def cell(run, shell):
    """``run`` for cells that must succeed; afterwards ``_`` is still IPython's."""
    yield lambda code: run(code).ok()
    # the shell is the session's: a cell assigning ``_`` stops IPython updating it for
    # good, and later tests (``%jaxbench`` results read back as ``_``) would fail
    # (IPython's own rule: it updates ``_`` while it is absent or still its value)
    assert shell.user_ns.get("_", shell.displayhook._) is shell.displayhook._, (
        "a cell here assigned `_`"
    )


def test_first_compile_line_then_quiet(cell):
    c = cell("@jax.jit\ndef loss_a(x):\n    return jnp.sum(jnp.tanh(x) ** 2)\nloss_a(jnp.ones(3))")
    g = c.group("jit(loss_a)")
    assert g["compiles"] == 1 and g["traces"] == 1 and g["lowers"] == 1
    assert g["trace_s"] > 0 and g["lower_s"] > 0 and g["compile_s"] > 0
    assert g["reasons"] == []  # a first compile is not a recompile
    text = c.lines[0]["text/plain"]
    assert re.search(
        r"^jit\(loss_a\): compiled 1x in [\d.]+ m?s \(trace [\d.]+( ms)? · "
        r"lower [\d.]+( ms)? · XLA [\d.]+( ms)?\)",
        text,
        re.M,
    ), text
    assert c.summary["version"] == 1 and c.summary["cell"] == str(c.result.execution_count)
    assert "<style>" in c.lines[0]["text/html"] and "jit(loss_a)" in c.lines[0]["text/html"]
    # cached calls: the cell stays quiet; plain cells too
    assert cell("loss_a(jnp.ones(3)); loss_a(jnp.ones(3))").lines == []
    assert cell("y_plain = 1 + 2").lines == []


REASON_CASES = {
    "shape": ("f_shape(jnp.ones(3))", "f_shape(jnp.ones(4))", "x", "f32[3]", "f32[4]"),
    "dtype": ("f_dtype(jnp.ones(3))", "f_dtype(jnp.ones(3, jnp.int32))", "x", "f32[3]", "i32[3]"),
    "weak_type": ("f_weak_type(jnp.float32(2.0))", "f_weak_type(2.0)", "x", "f32[]", "weak f32[]"),
}


@pytest.mark.parametrize("kind", sorted(REASON_CASES))
def test_type_change_reasons(cell, kind):
    first, second, path, before, after = REASON_CASES[kind]
    cell(f"@jax.jit\ndef f_{kind}(x):\n    return x * 2\n{first}")
    c = cell(second)
    g = c.group(f"jit(f_{kind})")
    assert g["compiles"] == 1
    (reason,) = g["reasons"]
    assert (reason["kind"], reason["path"], reason["before"], reason["after"]) == (
        kind,
        path,
        before,
        after,
    )
    assert f"recompiled: {path} changed {before} -> {after}" in c.lines[0]["text/plain"]
    # the user's line that made the call
    assert g["call_sites"][0]["text"] == second
    # JAX's explanation was read from its logger, not printed into the cell
    rec = [r for r in CACHE.records() if r.function == f"jit(f_{kind})"][-1]
    assert rec.jax_explanation and rec.jax_explanation.startswith("TRACING CACHE MISS")
    assert "CACHE MISS" not in c.stderr


def test_call_site_names_the_calling_function(cell):
    """A call made inside a user function is attributed to that function's line, with the
    function's name (the cache's call sites are the package's one SourceLine record)."""
    cell(
        "@jax.jit\ndef f_site(x):\n    return x + 1\n"
        "def caller_of_f_site(v):\n    return f_site(v)\n"
        "caller_of_f_site(jnp.ones(2))"
    )
    c = cell("caller_of_f_site(jnp.ones(5))")
    (site,) = c.group("jit(f_site)")["call_sites"]
    assert (site["function"], site["line"], site["text"]) == (
        "caller_of_f_site",
        5,
        "return f_site(v)",
    )
    rec = [r for r in CACHE.records() if r.function == "jit(f_site)"][-1]
    assert rec.call_site is not None and rec.call_site.to_dict() == site
    top = cell("f_site(jnp.ones(7))").group("jit(f_site)")["call_sites"][0]
    assert (top["function"], top["text"]) == ("<module>", "f_site(jnp.ones(7))")


def test_static_argument_reason(cell):
    cell(
        "from functools import partial\n"
        "@partial(jax.jit, static_argnames='n')\ndef f_static(x, n):\n    return x * n\n"
        "f_static(jnp.ones(2), n=2)"
    )
    (reason,) = cell("f_static(jnp.ones(2), n=3)").group("jit(f_static)")["reasons"]
    assert (reason["kind"], reason["path"], reason["before"], reason["after"]) == (
        "static_arg",
        "n",
        "2",
        "3",
    )


def test_a_retrace_beside_a_compile_is_called_retraced_not_recompiled(cell):
    """One jit call compiles; two ``make_jaxpr`` traces of the same function in the same
    cell only trace: their reasons are retraces, whatever else the cell compiled (never
    ``compiled 1x · recompiled: xs changed f32[20] -> f32[10]; ...``)."""
    cell("def ema_rt(xs, alpha):\n    return xs * alpha")
    c = cell(
        "got_rt = jax.jit(ema_rt)(jnp.ones(20), 0.9)\n"
        "short_rt = jax.make_jaxpr(ema_rt)(jnp.ones(10), 0.9)\n"
        "long_rt = jax.make_jaxpr(ema_rt)(jnp.ones(1000), 0.9)"
    )
    g = c.group("jit(ema_rt)")
    assert (g["compiles"], g["traces"]) == (1, 3)
    assert [(r["path"], r["before"], r["after"]) for r in g["reasons"]] == [
        ("xs", "f32[20]", "f32[10]"),
        ("xs", "f32[10]", "f32[1000]"),
    ]
    assert g["reasons_from"] == ["trace", "trace"]
    text = c.lines[0]["text/plain"]
    assert "recompiled" not in text, text
    assert "retraced: xs changed f32[20] -> f32[10]; xs changed f32[10] -> f32[1000]" in text
    assert "recompiled" not in c.lines[0]["text/html"]
    # a recompile and a retrace in one cell: each reason under its own word
    cell("f_rt2 = jax.jit(lambda x: x * 2)\nf_rt2(jnp.ones(2))")
    c = cell("f_rt2(jnp.ones(3))\nj_rt2 = jax.make_jaxpr(f_rt2)(jnp.ones(4))")
    g = c.group("jit(<lambda>)")
    assert g["reasons_from"] == ["compile", "trace"]
    assert (
        "recompiled: x changed f32[2] -> f32[3] · retraced: x changed f32[3] -> f32[4]"
        in c.lines[0]["text/plain"]
    )


def test_pytree_reason_names_the_argument_path(cell):
    cell(
        "@jax.jit\ndef f_tree(params):\n    return params['w1'].sum()\nf_tree({'w1': jnp.ones(2)})"
    )
    c = cell("f_tree({'w1': jnp.ones(2), 'b1': jnp.zeros(2)})")
    (reason,) = c.group("jit(f_tree)")["reasons"]
    assert (reason["kind"], reason["path"], reason["before"], reason["after"]) == (
        "pytree",
        "params['b1']",
        None,
        "f32[2]",
    )
    c = cell("f_tree({'w1': jnp.ones(5)})")
    (reason,) = c.group("jit(f_tree)")["reasons"]
    assert (reason["kind"], reason["path"]) == ("shape", "params['w1']")


def test_new_closure_reason(cell):
    cell("def make_scaled(k):\n    return jax.jit(lambda x: x * k)\nmake_scaled(2.0)(jnp.ones(3))")
    c = cell("make_scaled(3.0)(jnp.ones(3))")
    (reason,) = c.group("jit(<lambda>)")["reasons"]
    assert reason["kind"] == "closure"
    assert "closure" in c.lines[0]["text/plain"]


def test_sharding_reason(cell):
    cell(
        "from jax.sharding import NamedSharding, PartitionSpec as P\n"
        "mesh_s = jax.make_mesh((8,), ('d',), axis_types=(jax.sharding.AxisType.Explicit,))\n"
        "@jax.jit\ndef f_shard(x):\n    return x * 2\n"
        "f_shard(jnp.ones(8))"
    )
    c = cell("f_shard(jax.device_put(jnp.ones(8), NamedSharding(mesh_s, P('d'))))")
    (reason,) = c.group("jit(f_shard)")["reasons"]
    assert reason["kind"] == "sharding" and reason["path"] == "x"
    assert "'d'" in reason["after"] and reason["before"] == "f32[8]"


def test_redefined_function_and_new_function(cell):
    cell("@jax.jit\ndef f_redef(x):\n    return x + 1\nf_redef(jnp.ones(2))")
    c = cell("@jax.jit\ndef f_redef(x):\n    return x + 2\nf_redef(jnp.ones(2))")
    (reason,) = c.group("jit(f_redef)")["reasons"]
    assert reason["kind"] == "redefined"
    assert reason["before"] != reason["after"]


def test_counts_and_attribution_per_cell(cell):
    c1 = cell(
        "@jax.jit\ndef f_cnt(x):\n    return x - 1\n"
        "@jax.jit\ndef g_cnt(x):\n    return x + 1\n"
        "for n in (2, 3, 3, 2):\n    f_cnt(jnp.ones(n))\n"
        "g_cnt(jnp.ones(2))"
    )
    assert c1.group("jit(f_cnt)")["compiles"] == 2
    assert c1.group("jit(g_cnt)")["compiles"] == 1
    c2 = cell("f_cnt(jnp.ones(4)); g_cnt(jnp.ones(2))")
    assert [g["function"] for g in c2.summary["functions"]] == ["jit(f_cnt)"]
    recs = [r for r in CACHE.records() if r.function == "jit(f_cnt)" and r.kind == "compile"]
    assert [r.cell for r in recs] == [str(c1.result.execution_count)] * 2 + [
        str(c2.result.execution_count)
    ]
    assert recs[0].thread == threading.main_thread().name


def test_jax_helpers_grouped_apart(cell, monkeypatch):
    from workbench.engine.cache import queries

    monkeypatch.setattr(queries, "HELPERS_SHOWN_FROM_S", 0.0)  # shown whatever they cost
    c = cell("_h = jnp.arange(13, dtype=jnp.int16).astype(jnp.uint8)")
    assert c.summary is not None
    assert c.summary["functions"] == []
    helpers = c.summary["jax_helpers"]
    assert helpers["compiles"] >= 1 and helpers["origin"] == "jax"
    assert "JAX helpers" in c.lines[0]["text/plain"]


def test_background_thread_is_recorded(shell):
    f = jax.jit(lambda x: x * 7)

    def work():
        f(jnp.ones(11)).block_until_ready()

    with capture_compiles() as mine:
        t = threading.Thread(target=work, name="bg-compiler")
        t.start()
        t.join()
    assert mine == []  # capture_compiles is per thread
    recs = [r for r in CACHE.records() if r.thread == "bg-compiler" and r.origin == "user"]
    assert len(recs) == 1 and recs[0].cell == "background" and recs[0].kind == "compile"


def test_thread_started_by_a_cell_is_attributed_to_it(cell):
    c = cell(
        "import threading\n@jax.jit\ndef f_thr(x):\n    return x * 3\n"
        "t_ = threading.Thread(target=lambda: f_thr(jnp.ones(6)), name='cell-worker')\n"
        "t_.start(); t_.join()"
    )
    assert c.group("jit(f_thr)")["compiles"] == 1
    rec = [r for r in CACHE.records() if r.function == "jit(f_thr)"][-1]
    assert rec.thread == "cell-worker" and rec.cell == str(c.result.execution_count)


def test_no_strong_references(cell, shell):
    cell(
        "@jax.jit\ndef f_leak(x):\n    return x * 5\n"
        "arr_leak = jnp.ones(17)\nf_leak(arr_leak); f_leak(jnp.ones(18))"
    )
    ref_fn = weakref.ref(shell.user_ns["f_leak"])
    ref_inner = weakref.ref(shell.user_ns["f_leak"].__wrapped__)
    ref_arr = weakref.ref(shell.user_ns["arr_leak"])
    stats = [f for f in CACHE.functions() if f.function == "jit(f_leak)"][-1]
    assert stats.entries == 2
    cell("del f_leak, arr_leak")
    shell.history_manager.output_hist.clear()
    for name in ("_", "__", "___"):
        shell.user_ns.pop(name, None)
    gc.collect()
    assert ref_fn() is None and ref_inner() is None and ref_arr() is None
    stats = [f for f in CACHE.functions() if f.function == "jit(f_leak)"][-1]
    assert stats.entries == 0 and stats.compiles == 2  # history kept, entries gone


def test_jaxcache_table_and_clear(cell, shell):
    cell("@jax.jit\ndef f_tab(x):\n    return x ** 2\nf_tab(jnp.ones(2)); f_tab(jnp.ones(3))")
    c = cell("%jaxcache")
    data = c.bundle[CACHE_MIME]
    assert data["version"] == 1
    row = [f for f in data["functions"] if f["function"] == "jit(f_tab)"][-1]
    assert row["compiles"] == 2 and row["entries"] == 2 and row["traces"] == 2
    assert row["misses"][-1]["reasons"][0]["kind"] == "shape"
    assert "jit(f_tab)" in c.bundle["text/plain"] and "<table" in c.bundle["text/html"]
    c = cell("%jaxcache clear")
    assert "Cleared" in c.stdout
    assert cell("%jaxcache").bundle[CACHE_MIME]["functions"] == []
    # after clear_caches JAX recompiles; the tracker sees it as a new function again
    c = cell("f_tab(jnp.ones(2))")
    assert c.group("jit(f_tab)")["compiles"] == 1
    assert cell("workbench_cache = __import__('workbench').cache()").error is None
    assert shell.user_ns["workbench_cache"].functions[0].function == "jit(f_tab)"


def test_html_escapes_user_strings(cell):
    c = cell(
        "def _mk():\n    def f_esc(x, tag):\n        return x\n"
        "    return jax.jit(f_esc, static_argnames='tag')\nf_esc = _mk()\n"
        "f_esc(jnp.ones(2), tag='<b>x</b>')"
    )
    c = cell("f_esc(jnp.ones(2), tag='<script>alert(1)</script>')")
    html = c.lines[0]["text/html"]
    assert "<script>alert" not in html and "&lt;script&gt;" in html


def test_timings_switch(run, cell, shell):
    cell("%workbench timings off")
    try:
        c = cell("@jax.jit\ndef f_off(x):\n    return x / 2\nf_off(jnp.ones(2))")
        assert c.lines == []
        assert any(r.function == "jit(f_off)" for r in CACHE.records())  # still recorded
    finally:
        cell("%workbench timings on")
    assert cell("f_off(jnp.ones(9))").group("jit(f_off)")["compiles"] == 1
    bad = run("%workbench timings maybe")
    assert bad.error is not None and "invalid choice: 'maybe'" in str(bad.error)
    assert "'on', 'off'" in str(bad.error) and "usage: %workbench [timings] [on|off]" in str(
        bad.error
    )


def test_jaxcache_bad_input_is_short(run, shell):
    for line in (
        "%jaxcache frobnicate",
        "%jaxcache persist --min-compile-time",
        "%jaxcache persist /tmp/x --min-compile-time soon",
    ):
        c = run(line)
        assert c.error is not None
        assert len(str(c.error).splitlines()) <= 2


def test_persist_shows_settings(cell, tmp_path):
    c = cell(f"%jaxcache persist {tmp_path} --min-compile-time 0")
    try:
        data = c.bundle[CACHE_PERSISTENT_MIME]
        assert data["directory"] == str(tmp_path) and data["min_compile_time_s"] == 0
        assert jax.config.jax_compilation_cache_dir == str(tmp_path)
        assert "minimum compile time to be written: 0 s" in c.bundle["text/plain"]
        c = cell("@jax.jit\ndef f_pc(x):\n    return jnp.cos(x) * 3\nf_pc(jnp.ones(4))")
        assert CACHE.records()[-1].persistent_cache == "written"
        assert "1 written to the persistent cache" in c.lines[0]["text/plain"]
    finally:
        off = cell("%jaxcache persist off")
    assert off.bundle[CACHE_PERSISTENT_MIME]["directory"] is None
    assert jax.config.jax_compilation_cache_dir is None


@pytest.mark.slow  # several cells with the persistent cache on
def test_persistent_cache_write_log_stays_out_of_the_cell(cell, tmp_path, caplog):
    # JAX's own log handler writes to the process's stderr (a notebook shows it in the
    # cell); caplog sees every record that reaches a handler
    try:
        cell(f"%jaxcache persist {tmp_path} --min-compile-time 0")
        with caplog.at_level(logging.DEBUG, logger="jax"):
            c = cell("@jax.jit\ndef f_pclog(x):\n    return jnp.sin(x) * 5\nf_pclog(jnp.ones(4))")
        assert [r.persistent_cache for r in CACHE.records() if r.function == "jit(f_pclog)"] == [
            "written"
        ]
        shown = [r.getMessage() for r in caplog.records if r.levelno >= logging.WARNING]
        assert not [m for m in shown if "persistent compilation cache" in m], shown
        assert "Writing" not in c.stdout + c.stderr
    finally:
        cell("%jaxcache persist off")


@pytest.mark.slow  # three cells each
@pytest.mark.parametrize(
    "line, says",
    [
        ("/proc", "cannot write"),
        ("''", "directory is empty"),
        ("DIR --min-compile-time nan", "--min-compile-time"),
        ("DIR --min-compile-time -1", "--min-compile-time"),
        ("DIR --min-entry-size -5", "--min-entry-size"),
    ],
)
def test_persist_refuses_settings_that_cannot_work(run, tmp_path, line, says):
    before = run("%jaxcache persist").bundle[CACHE_PERSISTENT_MIME]
    c = run("%jaxcache persist " + line.replace("DIR", str(tmp_path / "pc")))
    assert c.error is not None and says in str(c.error), (c.error, c.stdout)
    assert "Traceback" not in c.stdout + c.stderr
    after = run("%jaxcache persist").bundle[CACHE_PERSISTENT_MIME]
    assert after == before  # nothing changed


def test_unload_removes_everything_and_restores_config(run, shell):
    duration_before = len(compat.monitoring_listeners("duration"))
    event_before = len(compat.monitoring_listeners("event"))
    on_duration, on_event, log_filter = CACHE.listeners()
    # the extension has JAX explain misses on the cell's thread only, while a cell runs
    assert jax.config.jax_explain_cache_misses is False
    assert run("explain_in_cell = jax.config.jax_explain_cache_misses").error is None
    assert shell.user_ns["explain_in_cell"] is True
    hooks_before = len(shell.events.callbacks["post_run_cell"])
    try:
        run("%unload_ext workbench")
        assert jax.config.jax_explain_cache_misses is False  # never changed globally
        assert on_duration not in compat.monitoring_listeners("duration")
        assert on_event not in compat.monitoring_listeners("event")
        assert len(compat.monitoring_listeners("duration")) == duration_before - 1
        assert len(compat.monitoring_listeners("event")) == event_before - 1
        for name in compat.EXPLAIN_LOGGERS:
            assert log_filter not in logging.getLogger(name).filters
        assert len(shell.events.callbacks["post_run_cell"]) == hooks_before - 1
        assert "jaxcache" not in shell.magics_manager.magics["line"]
        assert "workbench" not in shell.magics_manager.magics["line"]
        from workbench.engine.cache import CacheSnapshot
        from workbench.ipython import _RECORD_VIEWS  # the records' displays go too

        printers = shell.display_formatter.mimebundle_formatter.type_printers
        assert CacheSnapshot in _RECORD_VIEWS and not set(_RECORD_VIEWS) & set(printers)
        c = run("@jax.jit\ndef f_unl(x):\n    return x + 9\nf_unl(jnp.ones(2))")
        assert c.error is None and c.lines == []
        assert not any(r.function == "jit(f_unl)" for r in CACHE.records())
    finally:
        run("%load_ext workbench")
    assert jax.config.jax_explain_cache_misses is False
    assert on_duration in compat.monitoring_listeners("duration")


def test_capture_compiles_without_the_extension():
    tracker = CacheTracker()  # a tracker nobody else installed: capture installs and removes it
    f = jax.jit(lambda x: jnp.sin(x) + 1)
    assert tracker.listeners()[0] not in compat.monitoring_listeners("duration")
    with tracker.capture() as recs:
        assert tracker.listeners()[0] in compat.monitoring_listeners("duration")
        f(jnp.ones(19))
        f(jnp.ones(19))
        f(jnp.ones(20))
    f(jnp.ones(21))  # after the block: not captured
    assert tracker.listeners()[0] not in compat.monitoring_listeners("duration")
    user = [r for r in recs if r.origin == "user"]
    assert [r.function for r in user] == ["jit(<lambda>)"] * 2
    assert all(r.kind == "compile" and r.compile_s and r.trace_s and r.lower_s for r in user)
    assert user[1].reasons[0].kind == "shape"
    assert user[0].to_dict()["function"] == "jit(<lambda>)"
    with tracker.capture(include_partial=True) as recs:
        f.trace(jnp.ones(22))
    assert [r.kind for r in recs if r.origin == "user"] == ["trace"]


def test_nested_captures_each_removed_by_identity():
    # both sinks hold equal records after the inner block: removal by == would take the
    # outer entry out first, then fail on exit and leave a capture registered for ever
    tracker = CacheTracker()
    f = jax.jit(lambda x: x * 13)
    a, b = jnp.ones(24), jnp.ones(25)
    with tracker.capture() as outer:
        with tracker.capture() as inner:
            f(a)
        assert inner == outer and len(inner) == 1
        f(b)  # after the inner block: still the outer one's
    assert len(outer) == 2 and len(inner) == 1
    assert tracker._captures == []
    assert tracker.listeners()[0] not in compat.monitoring_listeners("duration")


def test_capture_compiles_reports_cache_cleared():
    f = jax.jit(lambda x: x * 11)
    with capture_compiles() as recs:
        f(jnp.ones(23))
        f.clear_cache()
        jax.clear_caches()
        f(jnp.ones(23))
    user = [r for r in recs if r.origin == "user"]
    assert len(user) == 2 and user[1].reasons[0].kind == "cache_cleared"


@pytest.mark.slow  # a second Python process compiles again from the cache
def test_persistent_cache_hit_in_a_second_process(tmp_path):
    import json
    import os
    import subprocess
    import sys
    from pathlib import Path

    child = Path(__file__).parents[1] / "cache_pcache_child.py"
    env = {**os.environ, "JAX_PLATFORMS": "cpu"}

    def run_child() -> dict:
        out = subprocess.run(
            [sys.executable, str(child), str(tmp_path / "cache")],
            capture_output=True,
            text=True,
            env=env,
            timeout=120,
        )
        assert out.returncode == 0, out.stderr[-2000:]
        return json.loads(out.stdout.strip().splitlines()[-1])

    first = run_child()
    (rec1,) = first["records"]
    assert rec1["persistent_cache"] == "written" and first["persistent"]["written"] >= 1
    assert any((tmp_path / "cache").iterdir())
    second = run_child()
    (rec2,) = second["records"]
    assert rec2["persistent_cache"] == "hit"
    # JAX's figure: the first compile's time minus reading the entry (negative for a
    # program that compiles faster than it loads)
    assert isinstance(rec2["time_saved_s"], float) and second["persistent"]["hits"] >= 1
    assert rec2["trace_s"] > 0 and rec2["lower_s"] > 0  # tracing and lowering still run


def test_jaxpr_magic_traces_are_the_workbenchs_work(cell):
    # the magic's own trace is recorded as such, never as the user's
    c = cell("%%jaxpr -t grad\ndef f_mag(w):\n    return jnp.sum(jnp.sin(w))\nf_mag(jnp.ones(3))")
    g = c.group("jit(grad(f_mag))")
    assert g["origin"] == "workbench" and g["traces"] == 1 and g["compiles"] == 0
    assert g["inspected_by"] == ["%%jaxpr"]
    assert "traced 1x" in c.lines[0]["text/plain"]
    assert "inspected by %%jaxpr" in c.lines[0]["text/plain"]


# -- the edges: call structure, statics by value, eager ops, AOT, threads, JAX's listeners ---


def _user_groups(c: CellRun) -> list[str]:
    return [g["function"] for g in c.summary["functions"]] if c.summary else []


def _helpers(c: CellRun) -> list[str]:
    h = c.summary["jax_helpers"] if c.summary else None
    return h["names"] if h else []


def test_keyword_call_and_container_change_are_structure_reasons(cell):
    cell("@jax.jit\ndef f_kw(x, y):\n    return x + y\nf_kw(jnp.ones(3), 1.0)")
    (reason, *_) = cell("f_kw(x=jnp.ones(3), y=1.0)").group("jit(f_kw)")["reasons"]
    assert reason["kind"] == "pytree", reason
    cell("@jax.jit\ndef f_tl(p):\n    return p[0]\nf_tl((jnp.ones(2), jnp.ones(2)))")
    (reason, *_) = cell("f_tl([jnp.ones(2), jnp.ones(2)])").group("jit(f_tl)")["reasons"]
    assert reason["kind"] == "pytree" and "list" in reason["text"], reason


def test_static_values_compared_by_value_not_by_repr(cell):
    cell(
        "from functools import partial\n@partial(jax.jit, static_argnums=1)\ndef f_srep(x, cfg):\n    return x\n"
        "class CfgRep:\n    def __repr__(self):\n        return 'CfgRep()'\n"
        "f_srep(jnp.ones(2), tuple(range(40)))"
    )
    (reason,) = cell("f_srep(jnp.ones(2), tuple(range(39)) + (99,))").group("jit(f_srep)")[
        "reasons"
    ]
    assert (reason["kind"], reason["path"]) == ("static_arg", "cfg")  # reprs truncated alike
    cell("f_srep(jnp.ones(2), CfgRep())")
    (reason,) = cell("f_srep(jnp.ones(2), CfgRep())").group("jit(f_srep)")["reasons"]
    assert reason["kind"] == "static_arg" and "same repr" in reason["text"]


def test_signature_diff_reports_tree_change_and_static_identity():
    from workbench.engine.cache.reasons import Signature, closest_diff

    a = compat.ArgType("x", "f32[3]", (3,), "float32", False, "")
    pos = Signature((a,), tree="((*,), {})", tree_hash=1)
    kw = Signature((a,), tree="((), {'x': *})", tree_hash=2)
    (r,) = closest_diff(kw, [pos])
    assert r.kind == "pytree" and "{'x': *}" in r.text()
    s1 = Signature((a,), (("c", "Cfg()"),), (("c", ("id", 1)),), "t", 3)
    s2 = Signature((a,), (("c", "Cfg()"),), (("c", ("id", 2)),), "t", 3)
    assert [r.kind for r in closest_diff(s2, [s1])] == ["static_arg"]
    assert closest_diff(s1, [s1])[0].kind == "cache_cleared"


def test_compiles_of_user_code_without_a_trace_are_user_work(cell):
    cell("@jax.jit\ndef fv_u(x):\n    return jnp.sin(x).sum()\nfv_u(jnp.ones(3))")
    for call in ("jax.vmap(fv_u)(jnp.ones((4, 3)))", "jax.grad(fv_u)(jnp.ones(3))"):
        c = cell(call)
        assert "jit(fv_u)" in _user_groups(c) and "fv_u" not in _helpers(c), call
    cell(
        "@jax.jit\ndef in_u(x):\n    return x + 1\n@jax.jit\ndef out_u(x):\n"
        "    return in_u(x) * 2\nout_u(jnp.ones(3))"
    )
    c = cell("in_u(jnp.ones(3))")  # traced inside out_u, compiled now from JAX's cache
    assert _user_groups(c) == ["jit(in_u)"] and c.group("jit(in_u)")["reasons"] == []
    (reason,) = cell("in_u(jnp.ones(4))").group("jit(in_u)")["reasons"]  # first own trace
    assert reason["kind"] == "shape", reason
    c = cell("relu_u = jax.jit(jax.nn.relu)\nrelu_u(jnp.ones(3))")
    assert "jit(relu)" in _user_groups(c) and "relu" not in _helpers(c)
    c = cell(
        "def body_u(c, x):\n    return c + jnp.sin(x), c\n"
        "scan_u = jax.lax.scan(body_u, 0.0, jnp.ones(5))"
    )
    assert "jit(scan)" in _user_groups(c)
    c = cell("scan_u = jax.lax.scan(body_u, 0.0, jnp.ones(6))")
    assert c.group("jit(scan)")["reasons"] == []  # not a "new closure"


def test_eager_jax_ops_stay_helpers(cell):
    cell("@jax.jit\ndef f_eag(x):\n    return jnp.arccosh(x) + 1\nf_eag(jnp.ones(3) * 2)")
    c = cell("_e = jnp.arccosh(jnp.ones(3) * 2)")  # JAX's own jit, trace cached by f_eag
    # a cheap helper is left out of the cell's line, but recorded as JAX's
    assert _user_groups(c) == []
    assert CACHE.records()[-1].function == "jit(arccosh)"
    assert CACHE.records()[-1].origin == "jax"


def test_transforms_and_callable_instances_get_their_own_rows(cell):
    cell("@jax.jit\ndef loss_t(w):\n    return jnp.sum(jnp.sin(w))\nloss_t(jnp.ones(3))")
    c = cell("dl_t = jax.jit(jax.grad(loss_t))\ndl_t(jnp.ones(3))")
    assert [r["kind"] for r in c.group("jit(loss_t)")["reasons"]] == []
    c = cell("vl_t = jax.jit(jax.vmap(loss_t))\nvl_t(jnp.ones((2, 3)))")
    assert [r["kind"] for r in c.group("jit(loss_t)")["reasons"]] == []
    keys = {r.key for r in CACHE.records() if r.function == "jit(loss_t)"}
    assert len(keys) == 3
    cell(
        "class CallA:\n    def __call__(self, x):\n        return x + 1\n"
        "class CallB:\n    def __call__(self, x):\n        return x * 3\n"
        "ja_t = jax.jit(CallA()); ja_t(jnp.ones(2))"
    )
    c = cell("jb_t = jax.jit(CallB()); jb_t(jnp.ones(2))")
    (g,) = c.summary["functions"]
    assert g["reasons"] == []
    a, b = [r.key for r in CACHE.records() if r.origin == "user"][-2:]
    assert "CallA.__call__" in a and "CallB.__call__" in b


def test_user_function_named_like_a_jax_helper_is_new(cell):
    cell("_r = jax.nn.relu(jnp.ones(3) - 7)")
    c = cell("@jax.jit\ndef relu(x):\n    return jnp.maximum(x, 0.5)\nrelu(jnp.ones(3))")
    assert c.group("jit(relu)")["reasons"] == []
    cell("del relu")


def test_ahead_of_time_compile_is_not_a_recompile(cell):
    cell("@jax.jit\ndef f_aot(x):\n    return x + 1\nf_aot(jnp.ones(3))")
    cell("lo_aot = f_aot.lower(jnp.ones(2))")
    c = cell("co_aot = lo_aot.compile()")
    assert c.group("jit(f_aot)")["reasons"] == [] and c.group("jit(f_aot)")["compiles"] == 1
    cell("@jax.jit\ndef f_tr(x):\n    return x * 4\nt_tr = f_tr.trace(jnp.ones(3))")
    c = cell("f_tr(jnp.ones(3))")
    assert c.group("jit(f_tr)")["reasons"] == []


def test_entries_credit_the_traced_object_and_reset_when_cleared(cell, shell):
    cell(
        "def make_e(k):\n    return jax.jit(lambda x: x * k)\n"
        "a_e = make_e(2.0); b_e = make_e(3.0)\n"
        "a_e(jnp.ones(29)); b_e(jnp.ones(29)); a_e(jnp.ones(30))"
    )
    key = [r.key for r in CACHE.records() if r.cell_run is not None][-1]
    cell("del b_e")
    gc.collect()
    (st,) = [f for f in CACHE.functions() if f.key == key]
    assert st.entries == 2 == shell.user_ns["a_e"]._cache_size()
    cell("a_e.clear_cache()\na_e(jnp.ones(29))")
    (st,) = [f for f in CACHE.functions() if f.key == key]
    assert st.entries == 1 == shell.user_ns["a_e"]._cache_size()


def test_recompile_count_is_not_capped(cell, monkeypatch):
    from workbench.engine.cache import attribution

    monkeypatch.setattr(attribution, "MAX_SIGNATURES", 2)
    cell(
        "@jax.jit\ndef f_many(x):\n    return x - 3\n"
        "for n in range(31, 36):\n    f_many(jnp.ones(n))"
    )
    (st,) = [f for f in CACHE.functions() if f.function == "jit(f_many)"]
    assert st.recompiles == 4 and len(st.misses) == 2
    row = [
        r
        for r in cell("%jaxcache").bundle["text/plain"].splitlines()
        if r.startswith("jit(f_many) ")
    ][0]
    assert row.split()[-1] == "4"


def test_log_filter_holds_back_only_our_explanations(shell):
    _, _, log_filter = CACHE.listeners()

    def rec(msg: str, level: int = logging.WARNING) -> logging.LogRecord:
        return logging.LogRecord(compat.EXPLAIN_LOGGERS[1], level, __file__, 1, msg, None, None)

    assert log_filter.filter(rec("Persistent cache directory is not writable: fix it"))
    assert log_filter.filter(rec("TRACING CACHE MISS at x\n  for f defined at y:1"))  # not ours
    token = CACHE.explain_on_this_thread()
    try:
        assert token is not None
        assert not log_filter.filter(rec("TRACING CACHE MISS at x\n  for f defined at y:1"))
        assert log_filter.filter(rec("some other persistent warning"))
        jax.config.update("jax_explain_cache_misses", True)  # the user asks for them
        try:
            assert log_filter.filter(rec("TRACING CACHE MISS at x\n  for f defined at y:1"))
        finally:
            jax.config.update("jax_explain_cache_misses", False)
    finally:
        CACHE.stop_explaining(token)
    assert jax.config.jax_explain_cache_misses is False


def test_user_enabling_explanations_after_load_keeps_them(run, shell):
    try:
        run("jax.config.update('jax_explain_cache_misses', True)")
        run("%unload_ext workbench")
        assert jax.config.jax_explain_cache_misses is True  # the user's value stays
    finally:
        jax.config.update("jax_explain_cache_misses", False)
        run("%load_ext workbench")


def test_explanation_for_another_function_is_not_attached():
    tracker = CacheTracker()
    f_stale = jax.jit(lambda x: x + 31)
    with tracker.capture() as recs:
        tracker._on_explanation(
            "TRACING CACHE MISS at a:1 (<module>):\n"
            "  for <lambda>x defined at /elsewhere.py:3\n  never seen"
        )
        f_stale(jnp.ones(31))
    (rec,) = [r for r in recs if r.origin == "user"]
    assert rec.jax_explanation is None and tracker._explanations == {}


def test_thread_from_an_earlier_cell_is_background(cell):
    cell(
        "import threading\n@jax.jit\ndef f_late(x):\n    return x * 9\n"
        "go_late = threading.Event()\n"
        "th_late = threading.Thread(target=lambda: (go_late.wait(5), f_late(jnp.ones(37))))\n"
        "th_late.start()"
    )
    cell("go_late.set(); th_late.join()")
    (rec,) = [r for r in CACHE.records() if r.function == "jit(f_late)"]
    assert rec.cell == "background" and rec.cell_run is None


def test_failed_trace_leaves_no_signature(run, shell):
    c = run("@jax.jit\ndef f_bad(x):\n    return x.reshape(7)\nf_bad(jnp.ones(3))")
    assert c.error is not None
    c = run("f_bad(jnp.ones(7))")
    assert c.error is None and c.group("jit(f_bad)")["reasons"] == []


def test_listeners_registered_under_the_lock(monkeypatch):
    tracker = CacheTracker()
    held = []
    real = jax.monitoring.register_event_duration_secs_listener

    def spy(cb):
        held.append(tracker._lock._is_owned())
        real(cb)

    monkeypatch.setattr(jax.monitoring, "register_event_duration_secs_listener", spy)
    tracker.install()
    tracker.uninstall()
    assert held == [True]
    assert tracker.listeners()[0] not in compat.monitoring_listeners("duration")


def _listener_parameters(fn) -> list[tuple[str, object]]:
    return [(p.name, p.kind) for p in inspect.signature(fn).parameters.values() if p.name != "self"]


@pytest.mark.parametrize(
    "register, ours",
    [
        (jax.monitoring.register_event_duration_secs_listener, 0),
        (jax.monitoring.register_event_listener, 1),
    ],
)
def test_listeners_have_the_signatures_jax_declares(register, ours):
    # JAX types a listener as a protocol with named parameters; a listener whose names
    # differ is called correctly only as long as JAX passes them by position
    protocol = typing.get_type_hints(register)["callback"]
    listener = CacheTracker().listeners()[ours]
    assert _listener_parameters(listener) == _listener_parameters(protocol.__call__)


def test_duration_listener_called_by_parameter_name():
    tracker = CacheTracker()
    tracker._on_duration(event=compat.PCACHE_SAVED_EVENT, duration_secs=0.25)
    tracker._on_event(event=compat.PCACHE_HIT_EVENT)
    status = tracker.persistent_status()
    assert status.time_saved_s == 0.25 and status.hits == 1


def test_snapshot_is_a_copy_later_compiles_do_not_change():
    # CacheSnapshot is documented as a consistent copy that can be kept and compared:
    # a compile after it was taken must not change its function rows or their misses
    tracker = CacheTracker()
    f = jax.jit(lambda x: x * 17)
    with tracker.capture():
        f(jnp.ones(41))
        snap = tracker.snapshot()
        saved = snap.to_dict()
        f(jnp.ones(42))  # a recompile of the same function: its live row changes
    assert snap.to_dict() == saved
    (row,) = [s for s in tracker.functions() if s.origin == "user"]
    assert row.compiles == 2 and row.recompiles == 1
    (kept,) = [s for s in snap.functions if s.origin == "user"]
    assert kept.compiles == 1 and kept.recompiles == 0 and len(kept.misses) == 1
