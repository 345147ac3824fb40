"""``%jaxbench`` / ``%%jaxbench`` through a real InteractiveShell, the view, and the progress display."""

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
from workbench.views._standalone import embedded_data
from workbench.views.bench import BENCH_MIME, bench_bundle

TIMEIT_LINE = re.compile(
    r"^\S+ \S*s ± \S+ \S*s \(median ± IQR/2 of \d+ runs, \d+ loops? each\); "
    r"(compile|first call) "
)


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
    r = run(
        "%%jaxbench -n 3 -r 4 --no-roofline\n"
        "g = jax.jit(lambda d: {'s': d['a'] * 2, 't': d['b'].sum()})\n"
        "d = {'a': jnp.ones(5), 'b': jnp.ones(7)}\n"
        "g(d)"
    )
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


@pytest.mark.parametrize(
    "line,needle",
    [
        ("%jaxbench --budget 0 f(x)", "budget must be a positive"),
        ("%jaxbench -n 0 f(x)", "number must be"),
        ("%jaxbench --bogus f(x)", "unknown flag"),
        ("%jaxbench", "needs a call"),
    ],
)
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
    """A failing call fails the cell (were it only shown in the result, Run All would go on
    and nbclient would pass)."""
    shell.user_ns["bad"] = lambda x: x.no_such_method()
    r = run("%jaxbench --budget 0.1 bad(x)")
    assert r.error is not None and not r.result.success
    text = re.sub(r"\x1b\[[0-9;]*m", "", r.short_error())
    assert text.startswith("AttributeError (first call)") and "no_such_method" in text
    assert "&lt;" not in text  # text is not HTML-escaped; HTML is


def test_html_escapes_user_strings_and_is_self_contained():
    evil = "<img src=x onerror=alert(1)>"
    b = run_benchmark(
        {evil: jax.jit(lambda x: x + 1), "two": jax.jit(lambda x: x - 1)},
        (jnp.ones(3),),
        budget=0.1,
        label=evil,
    )
    html = bench_bundle(b)["text/html"]
    assert evil not in html and "&lt;img src=x onerror=alert(1)&gt;" in html
    assert not re.search(r"""(src|href)\s*=\s*["']?(https?:)?//""", html)
    # the plots are the view's: every sample travels in the data the text/html carries
    data = embedded_data(html)[BENCH_MIME]
    assert [len(m["samples"]) for m in data["measurements"]] == [
        len(m.samples) for m in b.measurements
    ]
    assert "two / &lt;img" in html  # the comparison line


def test_sweep_view_draws_loglog_with_exponent():
    f = jax.jit(lambda x: x @ x)
    b = workbench.bench(
        f,
        sweep={"n": [16, 32, 64]},
        make_args=lambda n: jnp.ones((n, n)),
        budget=0.3,
        roofline=False,
        progress=False,
    )
    bundle = b._repr_mimebundle_()
    assert re.search(r"∝ n\^-?\d+\.\d\d", bundle["text/html"])
    assert re.search(r"time ∝ n\^-?\d+\.\d\d", bundle["text/plain"])
    assert bundle[BENCH_MIME]["sweep_values"] == [16, 32, 64]


def test_line_flags_stop_before_negative_literals_in_the_call(run, shell):
    shell.user_ns["fneg"] = jax.jit(lambda x, k: x * k)
    shell.user_ns["xneg"] = jnp.ones(4)
    r = run("%jaxbench -n 10 -r3 --budget=3 -q fneg(xneg, -1)")  # room for stalls
    assert r.error is None, r.stdout
    (m,) = r.result.result.measurements
    assert m.number == 10 and len(m.samples) == 3
    assert r.result.result.label == "fneg(xneg, -1)"
    r = run("%jaxbench -q -n 2 -r 2 fneg(-xneg, 2)")  # not read as a flag
    assert r.error is None and r.result.result.label == "fneg(-xneg, 2)"
    r = run("%jaxbench --nope f(x)")
    assert isinstance(r.error, UsageError) and "unknown flag '--nope'" in str(r.error)


@pytest.mark.parametrize(
    "kwargs,needle",
    [
        ({"budget": 0}, "budget must be a positive"),
        ({"sweep": {"n": [1]}}, "make_args"),
    ],
)
def test_python_twin_bad_settings_stay_benchinputerror_and_render_short(kwargs, needle):
    """A script's ``except ValueError`` / ``except BenchInputError`` keeps working, and a
    notebook still shows the error view's line instead of a traceback (as the magics do)."""
    from workbench.engine.bench.sampler import BenchInputError

    with pytest.raises(BenchInputError, match=needle) as info:
        workbench.bench(jax.jit(jnp.sin), jnp.ones(3), progress=False, **kwargs)
    exc = info.value
    assert isinstance(exc, ValueError)
    assert str(exc) == exc.report.summary  # the plain message, as before
    lines = exc._render_traceback_()
    assert len(lines) == 1 and "BenchInputError" in lines[0] and needle in lines[0]
