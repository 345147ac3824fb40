"""The benchmark's progress display: display updates of one output, in a real InteractiveShell.

A fake display publisher records what a kernel would send: ``display_data`` (the first
bundle, with its ``display_id``) and ``update_display_data`` (every later one).  Every
bundle is built by ``View.bundle``, so the autouse fixture validates each partial payload
against the schema as well.
"""

from __future__ import annotations

import re
import time
from dataclasses import dataclass, field
from typing import Any

import jax
import jax.numpy as jnp
import pytest
from IPython.core.displaypub import DisplayPublisher

import workbench
from workbench import schemas
from workbench.engine.bench.runner import Progress, run_benchmark
from workbench.ipython import bench_progress
from workbench.views.bench import BENCH_MIME, bench_bundle, progress_text


@dataclass
class Message:
    msg_type: str  # "display_data" or "update_display_data"
    display_id: str | None
    data: dict[str, Any]

    @property
    def payload(self) -> dict[str, Any] | None:
        return self.data.get(BENCH_MIME)


@dataclass
class FakePublisher(DisplayPublisher):
    messages: list[Message] = field(default_factory=list)

    def __post_init__(self) -> None:
        super().__init__()

    def publish(self, data, metadata=None, source=None, *, transient=None, update=False):
        self.messages.append(
            Message(
                "update_display_data" if update else "display_data",
                (transient or {}).get("display_id"),
                dict(data),
            )
        )


@pytest.fixture
def published(shell, monkeypatch):
    pub = FakePublisher()
    monkeypatch.setattr(shell, "display_pub", pub)
    monkeypatch.setattr(bench_progress, "INTERVAL_S", 0.0)  # every due round, within MAX_SHARE
    monkeypatch.setattr(bench_progress, "PHASE_INTERVAL_S", 0.0)
    monkeypatch.setattr(bench_progress, "MAX_SHARE", 1.0)
    return pub.messages


def _slow(ms: float):
    ready = jnp.ones(4)

    def f(x):
        time.sleep(ms / 1000)
        return ready

    return f


def _one_output(messages: list[Message]) -> str:
    """All messages are one output: a display, then updates of the same display id."""
    assert messages, "nothing was displayed"
    first, *rest = messages
    assert first.msg_type == "display_data" and first.display_id
    assert all(
        m.msg_type == "update_display_data" and m.display_id == first.display_id for m in rest
    ), [(m.msg_type, m.display_id) for m in rest]
    return first.display_id


def test_magic_updates_one_output_as_it_runs_then_shows_the_result(shell, published, monkeypatch):
    monkeypatch.setattr("workbench.api.bench.in_kernel", lambda: True)
    shell.user_ns["slow"] = _slow(4)
    shell.user_ns["x"] = jnp.ones(4)
    res = shell.run_cell(
        "%jaxbench -n 1 -r 40 --budget 20 --no-roofline slow(x)", store_history=True
    )
    assert res.error_in_exec is None
    _one_output(published)
    partial = [m for m in published if m.payload is not None and "progress" in m.payload]
    final = published[-1]
    assert len(partial) >= 3, [
        (m.msg_type, list(m.data), m.data.get("text/plain", "")[:50]) for m in published
    ]
    assert final not in partial and final.payload is not None
    # the plots grow: samples so far never shrink, and the payload carries them
    (name,) = final.payload["variants"]
    counts = [m.payload["progress"]["samples"][name] for m in partial]
    assert counts == sorted(counts) and counts[-1] > counts[0] >= 0
    sampled = [m for m in partial if m.payload["progress"]["phase"] == "sampling"]
    assert sampled and all(
        len(m.payload["measurements"][0]["samples"]) == m.payload["progress"]["samples"][name]
        for m in sampled
    )
    last = sampled[-1].payload["measurements"][0]
    assert last["stats"]["n"] == len(last["samples"])  # statistics of the samples so far
    fractions = [m.payload["progress"]["fraction"] for m in partial]
    assert fractions == sorted(fractions)
    assert all(m.data["text/plain"].startswith("running: ") for m in partial)
    assert all('class="jwb-progress' in m.data["text/html"] for m in partial)
    # the end: the finished result, no progress, every sample, shown once
    assert len(final.payload["measurements"][0]["samples"]) == 40
    assert not final.data["text/plain"].startswith("running")
    assert 'class="jwb-progress' not in final.data["text/html"]
    assert res.result is not None and "_ipython_display_" in vars(res.result)


def test_interrupt_ends_on_the_kept_samples_not_a_progress_bar(shell, published):
    calls = {"n": 0}
    ready = jnp.ones(2)

    def f(x):
        calls["n"] += 1
        time.sleep(0.002)
        if calls["n"] > 30:  # the user presses "interrupt" after a few samples
            raise KeyboardInterrupt
        return ready

    r = workbench.bench(f, 1, number=1, budget=20, precision=0, roofline=False, progress=True)
    assert r.interrupted and 1 <= len(r.measurements[0].samples) < 30
    _one_output(published)
    final = published[-1].payload
    assert final is not None and "progress" not in final and final["interrupted"]
    assert "interrupted: the samples taken so far are kept" in published[-1].data["text/plain"]


def test_an_exception_after_the_run_leaves_a_stopped_output(shell, published, monkeypatch):
    from workbench.api import bench as api

    real = api.run_benchmark

    def failing(*args, **kwargs):
        real(*args, **kwargs)
        raise RuntimeError("boom after sampling")

    monkeypatch.setattr(api, "run_benchmark", failing)
    with pytest.raises(RuntimeError, match="boom"):
        workbench.bench(_slow(2), 1, number=1, repeat=20, budget=20, roofline=False, progress=True)
    _one_output(published)
    last = published[-1]
    assert last.payload is not None and last.payload["progress"]["done"] is True
    assert last.payload["progress"]["message"] == "RuntimeError: boom after sampling"
    assert last.data["text/plain"].startswith("stopped before the end: RuntimeError")
    assert last.payload["measurements"][0]["samples"]  # what was measured stays visible


def test_bad_input_shows_no_progress_output(shell, published):
    from workbench.engine.bench.sampler import BenchInputError

    with pytest.raises(BenchInputError, match="make_args"):
        workbench.bench(jax.jit(jnp.sin), sweep={"n": [1, 2]}, progress=True)
    assert published == []


def test_updates_are_spaced_by_their_cost(shell, published, monkeypatch):
    """A run of many fast rounds sends a bounded number of updates (the kernel-side cost)."""
    monkeypatch.setattr(bench_progress, "INTERVAL_S", 0.25)
    monkeypatch.setattr(bench_progress, "PHASE_INTERVAL_S", 0.05)
    monkeypatch.setattr(bench_progress, "MAX_SHARE", 0.05)
    seen: list[bench_progress.ProgressDisplay] = []
    real_init = bench_progress.ProgressDisplay.__init__

    def init(self, *a, **k):
        real_init(self, *a, **k)
        seen.append(self)

    monkeypatch.setattr(bench_progress.ProgressDisplay, "__init__", init)
    t = time.perf_counter()
    r = workbench.bench(
        jax.jit(lambda x: x + 1),
        jnp.ones(8),
        number=5,
        repeat=3000,
        budget=50,
        precision=0,
        roofline=False,
        progress=True,
    )
    wall = time.perf_counter() - t
    (display,) = seen
    assert len(r.measurements[0].samples) == 3000
    assert display.updates == len(published) <= 4 + wall / 0.25 + 2
    assert display.cost_s <= 0.2 * wall  # loose: shared CI cores; measured 2-6%


def test_live_is_still_accepted_as_the_former_name_of_progress(shell, published):
    """``live=`` (the keyword's name before "live" came to mean live mode only) still
    turns the progress display on and off."""
    workbench.bench(_slow(1), 1, number=1, repeat=3, budget=20, roofline=False, live=True)
    shown = len(published)
    _one_output(published)
    workbench.bench(_slow(1), 1, number=1, repeat=3, budget=20, roofline=False, live=False)
    assert len(published) == shown  # nothing shown while it ran


def test_snapshot_is_the_run_so_far_and_matches_the_schema():
    snaps = []

    def observer(p: Progress) -> None:
        if p.benchmark is None and p.phase == "sampling":
            snaps.append(p.snapshot())

    b = run_benchmark(
        {"a": jax.jit(lambda x: x * 2), "b": jax.jit(lambda x: x + 1)},
        (jnp.ones(8),),
        number=2,
        repeat=6,
        budget=5,
        observer=observer,
    )
    assert b.progress is None and "progress" not in b.to_dict()
    assert [s.progress.samples for s in snaps] == [{"a": i, "b": i} for i in range(1, 7)]
    mid = snaps[2]
    assert mid.measurements[0].stats.n == 3 and mid.comparisons[0].ratio.pairs == 3
    assert b.measurements[0].samples[:3] == mid.measurements[0].samples  # copies, same values
    assert len(b.measurements[0].samples) == 6 and len(mid.measurements[0].samples) == 3
    payload = bench_bundle(mid)[BENCH_MIME]
    schemas.validate(BENCH_MIME, payload)
    assert payload["progress"]["phase"] == "sampling" and not payload["progress"]["done"]
    text = progress_text(mid.progress)
    assert text.startswith("running: sampling (3 runs)") and "samples: a 3, b 3" in text


def test_a_shell_without_display_updates_gets_no_progress_output(shell, capsys):
    """Terminal IPython prints every display: progress=True there must not print each update."""
    r = workbench.bench(_slow(2), 1, number=1, repeat=30, budget=20, roofline=False, progress=True)
    assert len(r.measurements[0].samples) == 30
    out = capsys.readouterr().out
    assert "running:" not in out and "stopped before the end" not in out


def test_an_interrupt_while_drawing_the_result_leaves_a_stopped_output(
    shell, published, monkeypatch
):
    from workbench.api import bench as api

    def interrupted(*args, **kwargs):
        raise KeyboardInterrupt

    monkeypatch.setattr(api, "bench_display", interrupted)
    with pytest.raises(KeyboardInterrupt):
        workbench.bench(_slow(2), 1, number=1, repeat=10, budget=20, roofline=False, progress=True)
    _one_output(published)
    last = published[-1]
    assert last.payload is not None and last.payload["progress"]["done"] is True
    assert last.data["text/plain"].startswith("stopped before the end: interrupted")


def test_the_progress_bar_reads_when_sanitised(shell, published):
    from tests.views.test_fallback_html import sanitize

    workbench.bench(_slow(2), 1, number=1, repeat=10, budget=20, roofline=False, progress=True)
    partial = [m for m in published if m.payload is not None and "progress" in m.payload]
    html = sanitize(partial[-1].data["text/html"])
    track = re.search(r'<div class="jwb-progress-track"([^>]*)>', html)
    bar = re.search(r'<div class="jwb-progress-bar"([^>]*)>', html)
    assert track and bar, html[:400]
    for part in (track.group(1), bar.group(1)):  # a box a reader can see without the <style>
        assert re.search(r"(height|border):", part), part
    assert re.search(r"width:\d", bar.group(1)) and "background" in bar.group(1)
