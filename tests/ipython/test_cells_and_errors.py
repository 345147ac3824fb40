"""Cell semantics and front-door errors: the cell number a label shows is the prompt's,
every error a magic reports fails the cell, interruptions and bad arguments are one short
message, and every view has a size bound."""

from __future__ import annotations

import json
import re
import subprocess
import sys
from pathlib import Path

import jax
import jax.numpy as jnp
import nbformat
import numpy as np
import pytest
from IPython.utils.capture import capture_output
from nbclient import NotebookClient
from nbclient.exceptions import CellExecutionError

import workbench
from workbench import schemas
from workbench.engine.cache import CACHE
from workbench.engine.common.errors import ErrorReport
from workbench.engine.common.source import cell_label
from workbench.engine.jaxpr.transforms import checkpoint_policy_names
from workbench.engine.profile.run import ProfileError
from workbench.ipython import prompt
from workbench.ipython.cell import CellError, CellInterrupted
from workbench.ipython.prompt import current_cell_id, prompt_number
from workbench.views._bounds import TEXT_MAX_LINES, bound_text
from workbench.views._html import SUMMARY_MAX_BYTES, SUMMARY_ROWS
from workbench.views._standalone import embedded_data, static_part
from workbench.views.errors import WorkbenchError
from workbench.views.jaxpr import JAXPR_MIME
from workbench.views.sharding import MAX_JSON_LAYOUTS, SUMMARY_LAYOUTS

ANSI = re.compile(r"\x1b\[[0-9;]*m")


def _plain(text: str) -> str:
    return ANSI.sub("", text)


def _labels(bundle: dict) -> set[str]:
    """The source labels the jaxpr view shows: each equation's line in its cell's number
    (the payload's ``cells``), as the extension and the standalone runtime draw them."""
    payload = schemas.unpack(bundle[JAXPR_MIME])
    cells, found = payload["cells"], set()
    stack = [payload["jaxpr"]]
    while stack:
        jaxpr = stack.pop()
        for eq in jaxpr["eqns"]:
            src = eq.get("source")
            if src and src["file"] in cells:
                n = cells[src["file"]]["number"]
                found.add(f"cell [{n}] line {src['line']}" if n else f"cell line {src['line']}")
            stack.extend(sub["jaxpr"] for sub in eq.get("subjaxprs", []))
    return found


# -- the prompt number, one function deciding it -----------------------------------------
@pytest.fixture(params=["ipython<9.8", "ipython>=9.8"])
def counting(request, shell, monkeypatch):
    """Run the shell as this IPython does, and as IPython 9.8+ does: it increments
    ``execution_count`` *before* ``pre_run_cell`` (ipython/ipython#15088), so a cell's
    code sees the number of the cell to come."""
    if request.param == "ipython<9.8":
        yield request.param
        return
    monkeypatch.setattr(prompt, "_COUNT_IS_NEXT", True)

    def bump(info=None):
        shell.execution_count += 1

    def unbump(result=None):
        shell.execution_count -= 1

    shell.events.callbacks["pre_run_cell"].insert(0, bump)  # before the workbench's hook
    shell.events.register("post_run_cell", unbump)
    try:
        yield request.param
    finally:
        shell.events.unregister("pre_run_cell", bump)
        shell.events.unregister("post_run_cell", unbump)


def test_error_and_jaxpr_labels_are_the_prompt_number(run, counting):
    r = run("%%jaxpr\ndef lab_f(x):\n    return jnp.sin(x) @ jnp.ones((4, 2))\nlab_f(jnp.ones(3))")
    n_def = r.result.execution_count
    assert r.error is not None
    assert f"at cell [{n_def}] line 3" in _plain(r.short_error())
    r = run("%%jaxpr\ndef lab_g(x):\n    return jnp.cos(x) * 2\nlab_g(jnp.ones(3))")
    n = r.result.execution_count
    labels = _labels(r.bundle)
    assert labels == {f"cell [{n}] line 3"}, (n, labels)
    r = run("%jaxpr lab_f(jnp.ones(5))")  # fails in lab_f, defined in the first cell
    assert f"at cell [{n_def}] line 3" in _plain(r.short_error())
    r = run("%jaxpr lab_f(*undefined_name)")  # fails evaluating this cell's call
    assert f"at cell [{r.result.execution_count}] line 1" in _plain(r.short_error())


def test_cache_records_carry_the_prompt_number(run, counting):
    r = run("lab_jit = jax.jit(lambda v: v + 1)\nlab_jit(jnp.ones(97)).block_until_ready()")
    assert r.error is None
    mine = [
        rec
        for rec in CACHE.records()
        if rec.cell_run is not None and rec.function == "jit(<lambda>)"
    ]
    assert mine and mine[-1].cell == str(r.result.execution_count)


def test_functions_from_ordinary_cells_are_labelled_with_their_cell(run):
    """'cell line 3' had no number: a function defined in an ordinary cell is labelled by the
    number IPython gives that cell, as its own tracebacks do ("Cell In[5]")."""
    r_def = run("def lab_h(x):\n    y = jnp.tanh(x)\n    return y * 3\n")
    r = run("%jaxpr lab_h(jnp.ones(3))")
    n = r_def.result.execution_count
    assert _labels(r.bundle) == {f"cell [{n}] line 2", f"cell [{n}] line 3"}


def test_prompt_number_outside_a_shell():
    assert prompt_number(None) is None

    class Bare:
        execution_count = 4

    assert prompt_number(Bare()) == 4


class FakeKernel:
    def __init__(self, parent):
        self.parent = parent

    def get_parent(self):
        if isinstance(self.parent, Exception):
            raise self.parent
        return self.parent


class FakeShell:
    def __init__(self, kernel=None):
        if kernel is not None:
            self.kernel = kernel


def test_current_cell_id_reads_the_execute_requests_metadata():
    assert current_cell_id(FakeShell(FakeKernel({"metadata": {"cellId": "c-1"}}))) == "c-1"
    assert current_cell_id(FakeShell(FakeKernel({"metadata": {}}))) is None
    assert current_cell_id(FakeShell(FakeKernel({}))) is None
    assert current_cell_id(FakeShell(FakeKernel(RuntimeError("no request")))) is None
    assert current_cell_id(FakeShell()) is None
    assert current_cell_id(None) is None


def test_cell_id_is_on_the_cell_label(run, shell):
    shell.kernel = FakeKernel({"header": {}, "metadata": {"cellId": "a1b2-cell"}})
    try:
        r = run("%%jaxpr\ndef lab_k(x):\n    return x @ jnp.ones((5, 5))\nlab_k(jnp.ones(3))")
    finally:
        del shell.kernel
    where = r.error.report.where
    label = cell_label(where.file)
    assert label is not None
    assert label.cell_id == "a1b2-cell" and label.number == r.result.execution_count


def test_cell_id_is_on_every_compile_record_and_the_cell_line(run, shell):
    """The cache's records carry the notebook's cell id, so a front end can link a compile
    to its cell (JupyterLab sends the id as ``cellId`` in the execute request)."""
    from workbench.engine.cache import CACHE
    from workbench.views.cache import CACHE_CELL_MIME

    shell.kernel = FakeKernel({"header": {}, "metadata": {"cellId": "cid-compile-7"}})
    try:
        shell.run_cell("cid_f = jax.jit(lambda v: v * 3)", store_history=True)
        with capture_output() as cap:
            shell.run_cell("cid_f(jnp.ones(7))", store_history=True)
    finally:
        del shell.kernel
    mine = [r for r in CACHE.records() if r.function == "jit(<lambda>)" and r.cell_id is not None]
    assert mine and all(r.cell_id == "cid-compile-7" for r in mine)
    payloads = [o.data[CACHE_CELL_MIME] for o in cap.outputs if CACHE_CELL_MIME in o.data]
    assert payloads and payloads[-1]["cell_id"] == "cid-compile-7"
    run("cid_f(jnp.ones(8))")  # outside a notebook: no id
    last = [r for r in CACHE.records() if r.function == "jit(<lambda>)"][-1]
    assert last.cell_id is None


# -- every error a magic reports fails the cell -----------------------------------------
FAILING_CELLS = {
    "grad of a non-scalar": "%%jaxpr -t grad\ndef fe1(x):\n    return x * 2\nfe1(jnp.ones(3))",
    "shape error while tracing": "%%jaxpr\ndef fe2(x):\n    return x @ jnp.ones((4, 2))\n"
    "fe2(jnp.ones(3))",
    "hlo of a failing trace": "%%hlo\ndef fe3(x):\n    return x @ jnp.ones((4, 2))\n"
    "fe3(jnp.ones(3))",
    "jaxbench of a failing call": "def fe4(x):\n    return x @ jnp.ones((4, 2))\n"
    "%jaxbench -n 1 -r 1 fe4(jnp.ones(3))",
    "jaxbench cell of a failing call": "%%jaxbench -n 1 -r 1\ndef fe5(x):\n"
    "    return x @ jnp.ones((4, 2))\nfe5(jnp.ones(3))",
    "last line not a call": "%%jaxpr\nx5 = 1",
    "sharding of no array": "%sharding None",
}


@pytest.mark.parametrize("name", list(FAILING_CELLS))
def test_a_reported_error_fails_the_cell(run, name):
    r = run(FAILING_CELLS[name])
    assert not r.result.success
    assert r.result.error_in_exec is not None or r.result.error_before_exec is not None
    r.short_error()


def test_jaxbench_failure_names_the_error(run):
    r = run("def fe6(x):\n    return x @ jnp.ones((4, 2))\n%jaxbench -n 1 -r 1 fe6(jnp.ones(3))")
    assert isinstance(r.error, workbench.views.errors.WorkbenchError)
    assert "dot_general" in r.message


@pytest.mark.notebook
def test_nbclient_fails_on_a_failing_magic_cell(tmp_path: Path):
    """Run All stops and CI running the notebook fails, as for any failing cell."""
    nb = nbformat.v4.new_notebook()
    nb.cells = [
        nbformat.v4.new_code_cell("%load_ext workbench\nimport jax.numpy as jnp"),
        nbformat.v4.new_code_cell("%%jaxpr -t grad\ndef v(x):\n    return x * 2\nv(jnp.ones(3))"),
        nbformat.v4.new_code_cell("reached = True"),
    ]
    client = NotebookClient(
        nb, timeout=300, kernel_name="python3", resources={"metadata": {"path": str(tmp_path)}}
    )
    with pytest.raises(CellExecutionError) as info:
        client.execute()
    assert "Gradient only defined for scalar-output functions" in str(info.value)
    assert nb.cells[2].get("outputs", []) == [] and nb.cells[2].get("execution_count") is None


# -- an interruption is one line ---------------------------------------------------------
@pytest.mark.parametrize("magic", ["%jaxpr", "%hlo", "%%jaxpr\n", "%%hlo\n"])
def test_keyboard_interrupt_while_tracing_is_one_line(run, magic):
    run("def ki(x):\n    raise KeyboardInterrupt\n")
    r = run(f"{magic} ki(jnp.ones(3))")
    assert _interruption(r) == ["KeyboardInterrupt: interrupted while tracing ki(jnp.ones(3))"]


def _interruption(r) -> list[str]:
    """The lines naming the run's interruption, checked to be shown without a traceback."""
    assert isinstance(r.error, KeyboardInterrupt)
    text = _plain(r.stdout + r.stderr)
    assert "Traceback" not in text
    return [ln for ln in text.splitlines() if "KeyboardInterrupt" in ln]


def test_keyboard_interrupt_in_the_cell_body_is_one_line(run):
    r = run("%%jaxpr\nraise KeyboardInterrupt\nabs(1)")
    assert isinstance(r.error, KeyboardInterrupt)
    assert "Traceback" not in r.stdout + r.stderr
    assert "KeyboardInterrupt: interrupted running the cell" in _plain(r.stdout + r.stderr)


# the work a magic does on the captured call once it is traced: (module, function, verb)
WORK = {
    "%hlo": ("hlo_magics", "compile_report", "compiling"),
    "%%jaxmem\n": ("memory_magics", "build_program_memory", "compiling"),
    "%jaxprof --compile": ("profile_magics", "compile_time_profile", "compiling"),
    "%jaxprof -n 1": ("profile_magics", "profile_call", "profiling"),
}


def _failing_work(monkeypatch, magic: str, exc: BaseException) -> str:
    """Make ``magic``'s work on the call raise ``exc``; the verb its interruption names."""
    module, name, verb = WORK[magic]

    def fail(*args, **kwargs):
        raise exc

    monkeypatch.setattr(f"workbench.ipython.{module}.{name}", fail)
    return verb


@pytest.mark.parametrize("magic", list(WORK))
def test_keyboard_interrupt_while_compiling_or_profiling_is_one_line(run, monkeypatch, magic):
    verb = _failing_work(monkeypatch, magic, KeyboardInterrupt())
    run("def kw(x):\n    return x * 2\n")
    r = run(f"{magic} kw(jnp.ones(3))")
    assert isinstance(r.error, CellInterrupted)
    assert _interruption(r) == [f"KeyboardInterrupt: interrupted while {verb} kw(jnp.ones(3))"]


@pytest.mark.parametrize("magic", ["%hlo", "%jaxprof --compile", "%jaxprof -n 1"])
def test_a_reported_failure_of_the_work_points_at_the_call(run, monkeypatch, magic):
    """The engine's short error (a WorkbenchError of the twins' stages, a ProfileError)
    becomes the cell's: where JAX gave no line, the call's line, the stage's name kept."""
    rep = ErrorReport(phase="compile", kind="XlaRuntimeError", summary="out of room in kw")
    own = ProfileError(rep) if magic.startswith("%jaxprof") else WorkbenchError(rep, "jit(kw)")
    _failing_work(monkeypatch, magic, own)
    run("def kw(x):\n    return x * 2\n")
    r = run(f"%%{magic[1:]}\nkw(jnp.ones(3))")  # the cell form: the call on line 2
    assert isinstance(r.error, CellError)
    assert r.error.report.where is not None and r.error.report.where.line == 2
    assert r.error.report.where.text == "kw(jnp.ones(3))"
    assert r.error.subject == ("" if magic.startswith("%jaxprof") else "jit(kw)")
    assert "out of room in kw" in _plain(r.short_error())


@pytest.mark.parametrize("magic", ["%hlo", "%jaxprof --compile", "%jaxprof -n 1"])
def test_a_bug_in_the_work_keeps_its_traceback(run, monkeypatch, magic):
    """Only the engine's short errors are the user's: anything else is ours, shown with
    the traceback that finds it (%%jaxmem reports every failure of its compile instead)."""
    _failing_work(monkeypatch, magic, RuntimeError("a bug of ours"))
    run("def kw(x):\n    return x * 2\n")
    r = run(f"{magic} kw(jnp.ones(3))")
    assert type(r.error) is RuntimeError
    assert "Traceback" in _plain(r.stdout + r.stderr)


def test_jaxbench_interrupted_before_any_sample_fails_the_cell_in_one_line(run):
    """Nothing was measured, so the interruption stands (Run All stops), in one line."""
    r = run(
        "def kb_first(x):\n    raise KeyboardInterrupt\n%jaxbench -n 1 -r 1 kb_first(jnp.ones(3))"
    )
    assert isinstance(r.error, KeyboardInterrupt)
    out = _plain(r.stdout + r.stderr)
    assert "Traceback" not in out
    assert "KeyboardInterrupt: interrupted before any sample of kb_first(jnp.ones(3))" in out


# -- the Python API's bad arguments ------------------------------------------------------
API_ERRORS = {
    "workbench.inspect(3)": (TypeError, "needs a function"),
    "workbench.inspect(abs, 1.0, transforms='nonsense')": (ValueError, "unknown transform"),
    "workbench.hlo(abs, jnp.ones(3), stage='nonsense')": (ValueError, "stage must be one of"),
    "workbench.hlo(abs, jnp.ones(3), backend='tpu')": (ValueError, "not available"),
    "workbench.hlo(abs, jnp.ones(3), transforms='nonsense')": (ValueError, "unknown transform"),
    "workbench.sharding(None)": (Exception, "no arrays"),
    "workbench.sharding(3)": (Exception, "3"),
    "workbench.inspect(abs, 1.0, transforms=3)": (TypeError, "transforms"),
    "workbench.inspect(abs, 1.0, static_argnums='a')": (TypeError, "static_argnums"),
    "workbench.inspect(abs, 1.0, static_argnums=[1.5])": (TypeError, "static_argnums"),
    "workbench.inspect(abs, 1.0, static_argnames=3)": (TypeError, "static_argnames"),
    "workbench.hlo(abs, jnp.ones(3), backend=3)": (TypeError, "backend"),
}


@pytest.mark.parametrize("code", list(API_ERRORS))
def test_python_api_bad_arguments_are_short(run, shell, code):
    shell.run_cell("import workbench", store_history=False)
    kind, words = API_ERRORS[code]
    r = run(code)
    assert isinstance(r.error, kind)
    text = _plain(r.short_error())
    assert words in text and len(text.strip().splitlines()) <= 2, text


@pytest.mark.slow  # a fresh interpreter
def test_doctor_refuses_zero_fake_devices_in_one_line():
    p = subprocess.run(
        [sys.executable, "-m", "workbench.apps.cli", "doctor", "--fake-devices", "0"],
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert p.returncode == 2
    assert "Traceback" not in p.stderr
    assert "--fake-devices must be at least 1" in p.stderr.strip().splitlines()[-1]


# -- messages ----------------------------------------------------------------------------
@pytest.mark.parametrize(
    "line, words",
    [
        ("%jaxbench -n sq23(x23)", "-n needs an integer N, got 'sq23(x23)'"),
        ("%jaxbench -n", "-n needs a value (an integer N)"),
        ("%%jaxbench -n\nsq23(x23)", "-n needs a value (an integer N)"),
        ("%jaxbench --budget soon sq23(x23)", "--budget needs a number SECONDS, got 'soon'"),
    ],
)
def test_numeric_flag_messages(run, shell, line, words):
    shell.user_ns.update(sq23=lambda v: v * v, x23=jnp.ones(3))
    r = run(line)
    assert r.error is not None
    assert words in r.message
    assert "needs a call" not in r.message and "unknown flag" not in r.message


def test_argnums_that_is_not_an_integer_is_named(run, shell):
    shell.user_ns.update(fa=lambda v: (v**2).sum(), xa=jnp.ones(3))
    r = run("%jaxpr -t \"grad(argnums='a')\" fa(xa)")
    assert r.error is not None
    assert "argnums" in r.message and "'a'" in r.message
    assert "cannot be interpreted" not in r.message


def test_checkpoint_policy_must_be_a_real_policy(run, shell):
    shell.user_ns.update(fc=lambda v: jnp.sin(v).sum(), xc=jnp.ones(3))
    for bad in ("__class__", "save_only_these_names", "nope"):
        r = run(f"%jaxpr -t \"checkpoint(policy='{bad}')\" fc(xc)")
        assert r.error is not None and "checkpoint policy" in r.message, bad
    names = checkpoint_policy_names()
    assert "dots_saveable" in names and "nothing_saveable" in names
    for name in names:  # every name offered is one jax.checkpoint accepts
        policy = getattr(jax.checkpoint_policies, name)
        jax.make_jaxpr(jax.grad(jax.checkpoint(lambda v: jnp.sin(v).sum(), policy=policy)))(
            jnp.ones(3)
        )
        r = run(f"%jaxpr -t \"checkpoint(policy='{name}')\" fc(xc)")
        assert r.error is None, (name, r.message)


# -- no variable expansion in the flags either -------------------------------------------
@pytest.mark.parametrize(
    "cell", ['%jaxpr -t "{t20}" f20(x20)', "%%jaxpr -t {t20}\nf20(x20)", '%hlo -t "{t20}" f20(x20)']
)
def test_flags_are_not_var_expanded(run, shell, cell):
    """With expansion, ``{t20}`` would become ``grad`` and the cell would succeed."""
    shell.user_ns.update(t20="grad", f20=lambda v: (v**2).sum(), x20=jnp.ones(3))
    r = run(cell)
    assert r.error is not None
    assert "{t20}" in r.message


# -- size bounds ---------------------------------------------------------------------------
@pytest.mark.slow  # 20,000 arrays
def test_sharding_view_of_20000_arrays_is_bounded():
    xs = [jnp.zeros((2,)) for _ in range(20_000)]
    bundle = workbench.sharding(xs)._repr_mimebundle_()
    html, text = bundle["text/html"], bundle["text/plain"]
    data = bundle["application/vnd.jax-workbench.sharding+json"]
    assert len(html) < 500_000 and len(text) < 200_000, (len(html), len(text))
    assert len(json.dumps(data)) < 3_000_000
    # the static summary: a few layouts drawn as text, a few rows, how many in all
    summary = static_part(html)
    assert len(summary.encode()) <= SUMMARY_MAX_BYTES
    assert summary.count('data-jwb="layout"') == SUMMARY_LAYOUTS
    assert f"... {len(xs) - SUMMARY_LAYOUTS - SUMMARY_ROWS} more arrays" in summary
    assert f"({len(xs)} in all)" in summary and f"({len(xs)} in all)" in text
    assert len(data["layouts"]) == MAX_JSON_LAYOUTS and data["total_layouts"] == len(xs)


@pytest.mark.slow  # 3,000 sharded arrays
def test_sharding_json_is_bounded_by_shards_on_a_mesh():
    """On a mesh every array lists one entry per device: the JSON is cut by shards too."""
    from jax.sharding import Mesh, NamedSharding, PartitionSpec

    from workbench.views.sharding import MAX_JSON_SHARDS

    mesh = Mesh(np.array(jax.devices()[:8]).reshape(4, 2), ("data", "model"))
    x = jax.device_put(jnp.zeros((8, 4)), NamedSharding(mesh, PartitionSpec("data", "model")))
    xs = [x] * 3000
    data = workbench.sharding(xs)._repr_mimebundle_()["application/vnd.jax-workbench.sharding+json"]
    shards = sum(len(lay["shards"]) for lay in data["layouts"])
    assert shards <= MAX_JSON_SHARDS and data["total_layouts"] == len(xs)
    assert len(data["layouts"]) == MAX_JSON_SHARDS // 8


def test_small_sharding_views_are_whole():
    xs = [jnp.zeros((2,)), jnp.ones((3, 4))]
    bundle = workbench.sharding(xs)._repr_mimebundle_()
    data = bundle["application/vnd.jax-workbench.sharding+json"]
    assert bundle["text/html"].count('data-jwb="layout"') == len(xs)
    assert len(data["layouts"]) == len(xs) and "total_layouts" not in data
    assert "more arrays" not in bundle["text/html"]


@pytest.mark.slow  # a 28,000-op program
def test_stablehlo_output_is_bounded():
    def big(x):
        for i in range(4000):
            x = jnp.sin(x) * 1.0001 + i
        return x

    shown = workbench.hlo(big, jnp.ones(3), stage="lowered")
    bundle = shown._repr_mimebundle_()
    text = shown.report.stablehlo.text
    n_lines = sum(1 for ln in text.splitlines() if not ln.startswith("#loc"))
    assert n_lines > TEXT_MAX_LINES
    html = bundle["text/html"]
    assert len(html) < 1_500_000
    # the view reads the saved text (text/plain, its first lines) from the data it carries
    assert embedded_data(html)["text/plain"] == bundle["text/plain"]
    assert f"{shown.report.stablehlo_op_count} StableHLO ops" in html
    assert shown.text == shown.report.text  # the whole module stays in .text
    assert bundle["text/plain"] == bound_text(shown.report.text)  # its first lines saved
