"""``%jaxbench`` / ``%%jaxbench`` through a real InteractiveShell, the view, and the live widget."""

from __future__ import annotations

import json
import re

import jax
import jax.numpy as jnp
import pytest
from IPython.core.error import UsageError

import workbench
from workbench.engine.bench.result import Benchmark
from workbench.engine.bench.runner import run_benchmark
from workbench.ipython.bench_widget import BenchWidget
from workbench.views.bench import BENCH_MIME, bench_bundle

TIMEIT_LINE = re.compile(r"^\S+ \S*s ± \S+ \S*s \(median ± IQR/2 of \d+ runs, \d+ loops? each\); "
                         r"(compile|first call) ")


def test_line_magic_times_the_call(run, shell):
    shell.user_ns["f"] = jax.jit(lambda x: jnp.tanh(x) + 1)
    shell.user_ns["x"] = jnp.ones(32)
    r = run("%jaxbench --budget 0.2 f(x)")
    assert r.error is None, r.stdout
    assert set(r.bundle) >= {"text/plain", "text/html", BENCH_MIME}
    assert TIMEIT_LINE.match(r.bundle["text/plain"]), r.bundle["text/plain"]
    rec = r.bundle[BENCH_MIME]
    assert rec["version"] == 1 and rec["kind"] == "bench" and rec["label"] == "f(x)"
    (m,) = rec["measurements"]
    assert m["stats"]["n"] == len(m["samples"]) >= 7 and m["first_call"]["total_s"] > 0
    json.dumps(rec)
    # usable as data afterwards (the cell's value; `_` is not updated once another test
    # assigned `_` itself, as IPython leaves a user's `_` alone)
    assert isinstance(r.result.result.record, Benchmark)


def test_cell_magic_runs_setup_and_honours_n_and_r(run, shell):
    shell.user_ns.pop("g", None)
    r = run("%%jaxbench -n 3 -r 4 --no-roofline\n"
            "g = jax.jit(lambda d: {'s': d['a'] * 2, 't': d['b'].sum()})\n"
            "d = {'a': jnp.ones(5), 'b': jnp.ones(7)}\n"
            "g(d)")
    assert r.error is None, r.stdout
    assert "g" in shell.user_ns and "d" in shell.user_ns  # the set-up ran in the namespace
    (m,) = r.bundle[BENCH_MIME]["measurements"]
    assert m["number"] == 3 and len(m["samples"]) == 4 and m["roofline"] is None
    assert "(median ± IQR/2 of 4 runs, 3 loops each)" in r.bundle["text/plain"]


def test_assignment_text_and_quiet(run, shell):
    shell.user_ns["f"] = jax.jit(lambda x: x * 3)
    shell.user_ns["x"] = jnp.ones(4)
    r = run("res = %jaxbench --budget=0.1 --text f(x)\nres")
    assert r.error is None, r.stdout
    assert isinstance(shell.user_ns["res"].record, Benchmark)
    assert list(r.bundle) == ["text/plain"]
    q = run("%jaxbench -q --budget 0.1 f(x)")
    assert q.error is None and q.bundle == {} and "median" not in q.stdout
    assert isinstance(q.result.result.record, Benchmark) and q.result.result.ok


@pytest.mark.parametrize("line,needle", [
    ("%jaxbench --budget 0 f(x)", "budget must be a positive"),
    ("%jaxbench -n 0 f(x)", "number must be"),
    ("%jaxbench --bogus f(x)", "unknown flag"),
    ("%jaxbench", "needs a call"),
])
def test_bad_flags_are_usage_errors(run, line, needle):
    r = run(line)
    assert isinstance(r.error, UsageError) and needle in str(r.error)


def test_failing_setup_line_names_the_line_and_keeps_namespace(run, shell):
    shell.user_ns["keep_me"] = 42
    r = run("%%jaxbench --budget 0.1\nkeep_me = 43\ny = 1 / 0\nf(x)")
    assert type(r.error).__name__ == "CellError"
    text = "\n".join(r.error._render_traceback_())
    assert "ZeroDivisionError" in text and "y = 1 / 0" in text and "line 3" in text
    assert len(text.splitlines()) <= 4
    assert shell.user_ns["keep_me"] == 43  # ran like a normal cell up to the failure


def test_function_that_raises_fails_the_cell_with_a_short_report(run, shell):
    """Issue 11 item 12: a failing call fails the cell (it used to be only shown in the
    result, so Run All went on and nbclient passed)."""
    shell.user_ns["bad"] = lambda x: x.no_such_method()
    r = run("%jaxbench --budget 0.1 bad(x)")
    assert r.error is not None and not r.result.success
    text = re.sub(r"\x1b\[[0-9;]*m", "", r.short_error())
    assert text.startswith("AttributeError (first call)") and "no_such_method" in text
    assert "&lt;" not in text  # text is not HTML-escaped; HTML is


def test_html_escapes_user_strings_and_is_self_contained():
    evil = "<img src=x onerror=alert(1)>"
    b = run_benchmark({evil: jax.jit(lambda x: x + 1), "two": jax.jit(lambda x: x - 1)},
                      (jnp.ones(3),), budget=0.1, label=evil)
    html = bench_bundle(b)["text/html"]
    assert evil not in html and "&lt;img src=x onerror=alert(1)&gt;" in html
    assert not re.search(r"""(src|href)\s*=\s*["']?(https?:)?//""", html)
    assert "<svg" in html and html.count('class="jwb-pt"') == sum(
        len(m.samples) for m in b.measurements)
    assert "two / &lt;img" in html  # the comparison line


def test_sweep_view_draws_loglog_with_exponent():
    f = jax.jit(lambda x: x @ x)
    b = workbench.bench(f, sweep={"n": [16, 32, 64]}, make_args=lambda n: jnp.ones((n, n)),
                        budget=0.3, roofline=False, live=False)
    bundle = b._repr_mimebundle_()
    assert "time vs n, log-log" in bundle["text/html"]
    assert re.search(r"∝ n\^-?\d+\.\d\d", bundle["text/html"])
    assert re.search(r"time ∝ n\^-?\d+\.\d\d", bundle["text/plain"])
    assert bundle[BENCH_MIME]["sweep_values"] == [16, 32, 64]


def test_widget_updates_live_then_shows_the_table():
    w = BenchWidget("f(x)", redraw_s=0.0)
    seen: list[int] = []
    w.plots.observe(lambda ch: seen.append(ch["new"].count('class="jwb-pt"')), "value")
    progress: list[float] = []
    w.progress.observe(lambda ch: progress.append(ch["new"]), "value")
    b = run_benchmark(jax.jit(lambda x: x * 2), (jnp.ones(8),), number=2, repeat=5,
                      budget=0.1, observer=w)
    # the run-order plot grew sample by sample while the benchmark ran
    assert seen[:5] == [1, 2, 3, 4, 5]
    assert progress == sorted(progress) and progress[-1] == 1.0
    state = w.widget_state()
    assert state["progress"] == 1.0 and state["bar_style"] == "success"
    assert state["phase"] == "done" and "5 samples" in state["status"]
    assert state["plots"] == ""  # the final table carries the plots
    assert "median ± IQR/2" in state["table"] and state["table"].count('class="jwb-pt"') == 5
    assert w.result is b and state["redraws"] == 5


def test_widget_on_interrupt_keeps_samples_and_says_so():
    w = BenchWidget("spin", redraw_s=0.0)
    ready = jnp.ones(2)

    def f(x):
        if w.samples_seen >= 3:  # the user presses "interrupt" after three samples
            raise KeyboardInterrupt
        return ready

    b = run_benchmark(f, (1,), number=5, budget=10, precision=0, observer=w)
    assert b.interrupted and w.progress.bar_style == "warning"
    assert w.progress.description == "interrupted"
    assert "interrupted: kept" in w.status.value
    kept = len(b.measurements[0].samples)
    assert kept >= 1 and f"{kept} samples" in w.status.value


def test_bench_live_in_a_shell_replaces_the_widget_and_is_not_shown_twice(shell):
    from IPython.utils.capture import capture_output

    shell.user_ns["f"] = jax.jit(lambda x: x + 2)
    shell.user_ns["x"] = jnp.ones(4)
    with capture_output() as cap:
        res = shell.run_cell("import workbench\n"
                             "workbench.bench(f, x, budget=0.1, live=True)", store_history=True)
    assert res.error_in_exec is None
    out = res.result
    assert isinstance(out.record, Benchmark)
    # the live output was updated in place to the result; the return value is not repeated
    texts = [o.data.get("text/plain", "") for o in cap.outputs]
    assert sum("median ± IQR/2" in t for t in texts) == 1
    # shown again in full from a later cell
    with capture_output() as later:
        shell.run_cell("_", store_history=True)
    assert any("median ± IQR/2" in o.data.get("text/plain", "") for o in later.outputs) or \
        "median ± IQR/2" in later.stdout


def test_line_flags_stop_before_negative_literals_in_the_call(run, shell):
    shell.user_ns["fneg"] = jax.jit(lambda x, k: x * k)
    shell.user_ns["xneg"] = jnp.ones(4)
    r = run("%jaxbench -n 10 -r3 --budget=0.5 -q fneg(xneg, -1)")
    assert r.error is None, r.stdout
    (m,) = r.result.result.measurements
    assert m.number == 10 and len(m.samples) == 3
    assert r.result.result.label == "fneg(xneg, -1)"
    r = run("%jaxbench -q -n 2 -r 2 fneg(-xneg, 2)")  # not read as a flag
    assert r.error is None and r.result.result.label == "fneg(-xneg, 2)"
    r = run("%jaxbench --nope f(x)")
    assert isinstance(r.error, UsageError) and "unknown flag '--nope'" in str(r.error)


def test_closing_the_widget_leaves_no_widget_models_behind():
    import warnings

    import ipywidgets
    from ipywidgets.widgets import widget as widget_module

    registry = getattr(widget_module, "_instances", None)  # ipywidgets 8: Widget.widgets
    if registry is None:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", DeprecationWarning)
            registry = ipywidgets.Widget.widgets
    before = len(registry)
    w = BenchWidget("f(x)")
    assert len(registry) > before + 6  # the box, five children, their layouts and styles
    w.close()
    assert len(registry) == before


@pytest.mark.parametrize("kwargs,needle", [
    ({"budget": 0}, "budget must be a positive"),
    ({"sweep": {"n": [1]}}, "make_args"),
])
def test_python_twin_bad_settings_stay_benchinputerror_and_render_short(kwargs, needle):
    """A script's ``except ValueError`` / ``except BenchInputError`` keeps working, and a
    notebook still shows the error view's line instead of a traceback (as the magics do)."""
    from workbench.engine.bench.sampler import BenchInputError

    with pytest.raises(BenchInputError, match=needle) as info:
        workbench.bench(jax.jit(jnp.sin), jnp.ones(3), live=False, **kwargs)
    exc = info.value
    assert isinstance(exc, ValueError)
    assert str(exc) == exc.report.summary  # the plain message, as before
    lines = exc._render_traceback_()
    assert len(lines) == 1 and "BenchInputError" in lines[0] and needle in lines[0]
