"""``%%hlo`` / ``%hlo`` through a real InteractiveShell: the cell runs as a normal cell and
shows the compiled module (text, HTML linked to the cell's lines, payload), the flags
(stage, text only, no fusion graph), no frame of the workbench in the program's source
info, every bad input as a short error, a failure inside XLA named at the user's line, and
``%unload_ext`` taking the magic away."""

from __future__ import annotations

import os

import jax
import jax.numpy as jnp
import pytest

import workbench
from workbench.views.hlo import HLO_MIME


def _mlp(w, x):
    with jax.named_scope("<script>alert(1)</script>"):
        h = jnp.tanh(x @ w)
    return jnp.sum((h - 1.0) ** 2)


@pytest.fixture
def hlo_args(shell):
    """``hf(hw, hx)`` in the user's namespace: the program the line-magic tests inspect."""
    shell.user_ns["hw"], shell.user_ns["hx"] = jnp.ones((4, 4)), jnp.ones((2, 4))
    shell.user_ns["hf"] = _mlp


HLO_CELL = """%%hlo -t grad
def loss(w, x):
    with jax.named_scope('<script>alert(1)</script>'):
        h = jnp.tanh(x @ w)
    return jnp.sum((h - 1.0) ** 2)
loss(jnp.ones((4, 4)), jnp.ones((2, 4)))
"""


def test_cell_magic(run, shell):
    shell.user_ns.pop("loss", None)
    r = run(HLO_CELL)
    assert r.error is None, r.stdout
    assert callable(shell.user_ns["loss"])  # the cell ran as a normal cell
    text = r.bundle["text/plain"]
    assert text.startswith("HloModule") and "fusion(" in text
    html = r.bundle["text/html"]
    # the summary names the heaviest fusions by their cell lines (the view links them)
    assert "<svg" not in html and "cell [" in html
    assert "<script>alert(1)" not in html
    rec = r.bundle[HLO_MIME]
    assert rec["counts"]["fusions"] == text.count(" fusion(")


def test_line_magic_and_flags(run, hlo_args):
    r = run("%hlo --stage lowered hf(hw, hx)")
    assert r.error is None, r.stdout
    assert r.bundle["text/plain"].startswith("module @")
    r = run("%hlo --text hf(hw, hx)")
    assert set(r.bundle) == {"text/plain"}
    r = run("%hlo --no-fusion hf(hw, hx)")
    assert "<svg" not in r.bundle["text/html"] and r.bundle[HLO_MIME]["graphs"] == {}


def test_no_workbench_frame_in_the_programs_source_info(run, hlo_args):
    """The stack frames JAX records for each op are the user's only: our magics and
    twins call the user's function, and their frames must not be attributed lines in
    the HLO's metadata (the whole package is excluded from JAX's user frames)."""
    package = os.path.dirname(workbench.__file__)
    texts = [
        run("%hlo hf(hw, hx)").bundle["text/plain"],
        run("%hlo --stage lowered hf(hw, hx)").bundle["text/plain"],
        repr(workbench.hlo(_mlp, jnp.ones((4, 4)), jnp.ones((2, 4)))),
    ]
    lowered = workbench.hlo(_mlp, jnp.ones((4, 4)), jnp.ones((2, 4)), stage="lowered")
    assert any(__file__ in t for t in texts)  # the user's file is named, so the check bites
    for text in texts:
        assert package not in text
    assert all(
        op.source is None or not op.source.file.startswith(package)
        for op in lowered.report.stablehlo.ops
    )


def test_bad_input(run, shell, hlo_args):
    text = run("%hlo --backend tpu hf(hw, hx)").short_error()
    assert "'tpu' is not available here; available: cpu" in text
    assert len(text.strip().splitlines()) == 1
    shell.user_ns.pop("kept_hlo", None)
    text = run("%%hlo\nkept_hlo = 7\nkept_hlo * 2").short_error()
    assert "must be a call" in text and shell.user_ns["kept_hlo"] == 7
    text = run(
        "%%hlo\ndef bad(x):\n    return x @ jnp.ones((3, 3))\nbad(jnp.ones(4))"
    ).short_error()
    assert "dot_general requires contracting dimensions" in text
    assert "line 3, in bad" in text and "return x @ jnp.ones((3, 3))" in text
    text = run("%hlo --stage optimized hf(hw, hx)").short_error()
    assert "optimized" in text
    assert run("1 + 1").result.result == 2  # the kernel is fine


def test_fusion_flag_needs_compiled_stage(run, hlo_args):
    text = run("%hlo --stage lowered --fusion hf(hw, hx)").short_error()
    assert "--fusion needs --stage compiled" in text


def _unknown_target(x):
    # traces and lowers; XLA refuses it at compile time (no handler for the target)
    return jax.ffi.ffi_call("workbench_no_such_target", jax.ShapeDtypeStruct(x.shape, x.dtype))(x)


def test_compile_failure_names_the_users_line(run):
    """A failure inside XLA has no user frame in its traceback: the twin names the line
    that called it, the magic the cell's call, both as a short error of phase compile."""
    from workbench.views.errors import WorkbenchError

    workbench.hlo(_unknown_target, jnp.ones(3), stage="lowered")  # lowering is fine
    with pytest.raises(WorkbenchError) as info:
        workbench.hlo(_unknown_target, jnp.ones(3))  # the calling line
    rep = info.value.report
    assert rep.phase == "compile" and "workbench_no_such_target" in rep.summary
    assert rep.where is not None and rep.where.file == __file__
    assert rep.where.text == "workbench.hlo(_unknown_target, jnp.ones(3))  # the calling line"
    assert rep.where.function == "test_compile_failure_names_the_users_line"
    run("from tests.ipython.test_hlo_magic import _unknown_target")
    r = run("%%hlo\n_unknown_target(jnp.ones(3))")
    assert r.error is not None and r.error.report.phase == "compile"
    assert "workbench_no_such_target" in r.short_error()
    assert "_unknown_target(jnp.ones(3))" in r.short_error()


def test_unload_removes_hlo_magic(shell, run):
    try:
        run("%unload_ext workbench")
        assert "hlo" not in shell.magics_manager.magics["cell"]
        assert "hlo" not in shell.magics_manager.magics["line"]
    finally:
        run("%load_ext workbench")
    assert "hlo" in shell.magics_manager.magics["cell"]
