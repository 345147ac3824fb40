"""``%%jaxprof --compile`` (where one real compile's time goes) and ``%%jaxprof --trace-dir``
(the run profile's trace saved for XProf or Perfetto), in a real shell.

Programs are the 4-block transformer of ``tests/real_models.py`` (its Python loop, and the
``lax.scan`` twin) and small functions; the 24-block coverage check is the engine's.
"""

from __future__ import annotations

import glob
import os

import jax
import pytest

from workbench.views.compile_time import COMPILE_TIME_MIME


@pytest.fixture(scope="module", autouse=True)
def models(shell):
    shell.run_cell(
        "import tests.real_models as rm\n"
        "cp_params, cp_x = rm.transformer_args(4)\n"
        "cp_stacked = rm.stacked_params(cp_params)\n"
        "cp_small = jnp.ones((64, 64))",
        store_history=False,
    )


@pytest.mark.slow  # compiles a transformer gradient with XLA's dumps (seconds)
@pytest.mark.jax_versions
def test_python_loop_gradient_gets_the_unrolled_loop_advice(run, shell):
    c = run("%%jaxprof --compile -t grad\nrm.transformer_loss_einsum(cp_params, cp_x)").ok()
    payload = c.bundle[COMPILE_TIME_MIME]
    rep = c.result.result.report
    blocks = len(shell.user_ns["cp_params"])
    (loop,) = rep.size.loops
    assert loop.function == "block" and loop.calls == blocks
    assert payload["label"].startswith("grad(")
    (advice,) = payload["advice"]
    assert f"runs {blocks} times" in advice and "lax.scan" in advice
    assert "real_models.py:" in advice  # the line that calls block, by file and number
    text = c.bundle["text/plain"]
    assert f"advice: {advice}" in text
    assert payload["xla"]["found"] and payload["xla"]["coverage"] > 0
    assert payload["trace_s"] > 0 and payload["lower_s"] > 0 and payload["compile_s"] > 0


def test_scan_twin_gets_no_loop_advice(run):
    c = run("%%jaxprof --compile\nrm.transformer_loss_scan(cp_stacked, cp_x)").ok()
    payload = c.bundle[COMPILE_TIME_MIME]
    assert payload["advice"] == [] and payload["size"]["loops"] == []
    assert "advice:" not in c.bundle["text/plain"]
    assert payload["xla"]["found"]


def test_a_call_that_does_not_trace_fails_in_one_line_and_keeps_the_namespace(run, shell):
    c = run("%%jaxprof --compile\ncp_kept = 1\njax.grad(lambda v: v)(jnp.ones(3))")
    text = c.short_error()
    assert "Gradient only defined for scalar-output functions" in text
    assert shell.user_ns["cp_kept"] == 1  # the set-up line ran and its name stays


def test_an_unwritable_trace_directory_is_one_line(run, tmp_path):
    blocker = tmp_path / "a-file"
    blocker.write_text("")
    for flags in ("-n 2", "--compile"):
        c = run(f"%%jaxprof {flags} --trace-dir {blocker / 'sub'}\njnp.sin(cp_small)")
        text = c.short_error()
        assert len(text.strip().splitlines()) == 1, text
        assert "--trace-dir" in text and str(blocker / "sub") in text
    assert blocker.is_file()


def test_a_failed_run_leaves_no_trace_directory_it_made(run, tmp_path):
    """The folders ``--trace-dir`` made for a run that then failed are removed; one that
    was there before stays (and what was in it)."""
    there = tmp_path / "there"
    there.mkdir()
    (there / "mine.txt").write_text("kept")
    for flags in ("-n 2", "--compile"):
        for where in (tmp_path / "new" / "deeper", there):
            c = run(f"%%jaxprof {flags} --trace-dir {where}\njax.grad(lambda v: v)(jnp.ones(3))")
            assert "Gradient only defined" in c.short_error()
            assert not (tmp_path / "new").exists()
            assert sorted(p.name for p in there.iterdir()) == ["mine.txt"]


def test_run_profile_trace_is_saved_where_asked_and_says_how_to_open_it(run, tmp_path):
    where = tmp_path / "traces"
    c = run(f"%%jaxprof -n 2 --trace-dir {where}\njnp.matmul(jnp.sin(cp_small), cp_small)").ok()
    (run_dir,) = glob.glob(str(where / "plugins" / "profile" / "*"))
    (xplane,) = glob.glob(os.path.join(run_dir, "*.xplane.pb"))
    assert os.path.isfile(os.path.join(run_dir, "perfetto_trace.json.gz"))
    note = next(n for n in c.result.result.report.notes if "trace saved" in n)
    assert run_dir in note and "XProf" in note and "Perfetto" in note
    # the saved trace is the profiled run's: the events of its instructions are in it
    profile = jax.profiler.ProfileData.from_file(xplane)
    timed = {r.name for r in c.result.result.report.instructions}
    names = {e.name for p in profile.planes for ln in p.lines for e in ln.events}
    assert timed and timed <= names, (timed, sorted(names)[:20])


def test_traced_flags_need_compile(run):
    c = run("%%jaxprof -t grad\nrm.transformer_loss_einsum(cp_params, cp_x)")
    assert "--compile" in c.short_error()


def test_compile_profile_compiles_for_real_and_leaves_the_persistent_cache_alone(
    run, shell, tmp_path
):
    run(f"%jaxcache persist {tmp_path} --min-compile-time 0").ok()
    try:
        run("cp_f = jax.jit(lambda a: jnp.tanh(a) @ a)\ncp_f(cp_small)").ok()
        entries = sorted(os.listdir(tmp_path))
        assert entries  # the user's own compile wrote its entry
        c = run("%%jaxprof --compile\ncp_f(cp_small)").ok()
        xla = c.bundle[COMPILE_TIME_MIME]["xla"]
        assert xla["found"] and xla["wall_s"] > 0 and c.result.result.report.cache_bypassed
        assert sorted(os.listdir(tmp_path)) == entries
        assert jax.config.jax_compilation_cache_dir == str(tmp_path)
        again = run("cp_f(cp_small)").ok()
        assert again.summary is None  # the user's call still finds its own executable
    finally:
        run("%jaxcache persist off").ok()
