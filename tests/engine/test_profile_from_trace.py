"""``workbench.profile_from_trace``: a profile recorded elsewhere, shown as ``workbench.profile``
shows a live one.

The GPU cases read the H100 recordings in tests/data/gpu/ (see make_fixtures.py there) and
compare with the engine's own pipeline on the same files; the CPU case records a trace here
with ``jax.profiler.trace`` and reads it back through the public front door.
"""

from __future__ import annotations

from pathlib import Path

import jax
import jax.numpy as jnp
import pytest

import workbench
from workbench.engine.bench.peaks import peak_for
from workbench.engine.hlo.costs import instruction_costs
from workbench.engine.hlo.parser import parse_hlo
from workbench.engine.profile.attribute import attribute
from workbench.engine.profile.run import device_events
from workbench.engine.profile.store import text_key
from workbench.views.display import Display
from workbench.views.errors import WorkbenchError
from workbench.views.profile import PROFILE_MIME, profile_display

DATA = Path(__file__).parents[1] / "data" / "gpu"
TRACE = DATA / "mlp4_grad.cb.xplane.pb"
HLO = DATA / "mlp4_grad.hlo.txt"
KIND = "NVIDIA H100 80GB HBM3"


def _internal(label: str):
    """What the engine's pieces make of the recording (the notebook's old recipe)."""
    text = HLO.read_text()
    module = parse_hlo(text)
    trace = jax.profiler.ProfileData.from_file(str(TRACE))
    return attribute(
        device_events(trace, "gpu", module, calls=5),
        module,
        label=label,
        backend="gpu",
        device_kind=KIND,
        module_key=text_key(text),
        costs=instruction_costs(module),
        peak=peak_for(KIND),
    )


def test_equals_the_engine_pipeline_on_the_recorded_h100_trace():
    d = workbench.profile_from_trace(TRACE, HLO, calls=5, top=4)
    assert isinstance(d, Display)
    # device kind and JAX version come from the trace itself, not from this machine
    assert d.report.backend == "gpu" and d.report.device_kind == KIND
    assert d.report.label == f"jit_mlp, recorded on {KIND} with JAX 0.11.2"
    want = _internal(d.report.label)
    assert d.report.to_dict() == want.to_dict()
    assert type(d.view) is type(profile_display(want).view)  # workbench.profile's display
    bundle = d._repr_mimebundle_()
    assert set(bundle) == {"text/plain", "text/html", PROFILE_MIME}
    assert bundle[PROFILE_MIME]["top"] == 4
    assert "peak: unknown" not in bundle["text/plain"]  # the H100's peak, from the trace's kind


def test_text_or_path_label_and_device_kind():
    by_text = workbench.profile_from_trace(
        str(TRACE), HLO.read_text(), calls=5, label="mine", device_kind="some GPU"
    )
    assert by_text.report.label == "mine" and by_text.report.device_kind == "some GPU"
    assert "unknown peak for some GPU" in repr(by_text)
    assert (
        by_text.report.instructions
        == workbench.profile_from_trace(
            TRACE, HLO, calls=5, label="mine", device_kind="some GPU"
        ).report.instructions
    )


def test_a_cpu_trace_recorded_here_round_trips(tmp_path):
    @jax.jit
    def f(w, x):
        return jnp.tanh(x @ w).sum()

    w, x = jnp.ones((128, 128)), jnp.ones((64, 128))
    f(w, x).block_until_ready()
    with jax.profiler.trace(str(tmp_path / "trace")):
        for _ in range(3):
            f(w, x).block_until_ready()
    text = f.lower(w, x).compile().as_text()
    (tmp_path / "f.hlo.txt").write_text(text)
    # the directory jax.profiler.trace wrote into is read like the .xplane.pb inside it
    d = workbench.profile_from_trace(tmp_path / "trace", tmp_path / "f.hlo.txt", calls=3)
    names = {i.name for i in parse_hlo(text).instructions()}
    assert d.report.backend == "cpu" and d.report.calls == 3
    assert d.report.instructions and {r.name for r in d.report.instructions} <= names
    assert f"with JAX {jax.__version__}" in d.report.label


def _error(*args, **kwargs) -> WorkbenchError:
    with pytest.raises(WorkbenchError) as info:
        workbench.profile_from_trace(*args, **kwargs)
    err = info.value
    assert len(str(err).splitlines()) <= 3, str(err)  # short: no traceback through the engine
    assert err._render_traceback_()
    return err


def test_bad_input_is_a_short_clear_error(tmp_path):
    err = _error(tmp_path / "missing.xplane.pb", HLO, calls=5)
    assert err.report.kind == "FileNotFoundError" and "no such trace file" in str(err)
    assert "missing.xplane.pb" in str(err)
    assert "no .xplane.pb trace under" in str(_error(tmp_path, HLO, calls=5))
    assert "no such HLO file" in str(_error(TRACE, tmp_path / "missing.hlo.txt", calls=5))
    # a trace in which this module never ran
    err = _error(TRACE, DATA / "matmul8192_bf16.hlo.txt", calls=5)
    assert err.report.kind == "NoDeviceEvents" and "jit_matmul" in str(err)
    assert "recorded running this HLO module" in str(err)
    # the files swapped: neither is what it should be
    assert "could not be read as a jax.profiler trace" in str(_error(HLO, HLO, calls=5))
    assert "is not optimized HLO text" in str(_error(TRACE, DATA / "meta.json", calls=5))


@pytest.mark.parametrize("calls", [0, -1, 2.5, True, None])
def test_calls_must_be_a_positive_count(calls):
    with pytest.raises((TypeError, ValueError), match="calls"):
        workbench.profile_from_trace(TRACE, HLO, calls=calls)


def test_readme_documents_profile_from_trace_in_the_profile_row():
    readme = (Path(__file__).resolve().parents[2] / "README.md").read_text(encoding="utf-8")
    (row,) = [ln for ln in readme.splitlines() if ln.startswith("| `workbench.profile(fn")]
    assert "`workbench.profile_from_trace(trace, hlo, calls=N)`" in row
    for words in (
        "`.xplane.pb`",
        "`jax.profiler.trace`",
        "optimized HLO",
        "`jax.jit(f).lower(...).compile().as_text()`",
        "the backend, device kind and JAX version come from the trace",
    ):
        assert words in row, words
