"""A running benchmark's progress, shown through display updates (no widgets, no comms).

:class:`ProgressDisplay` is an observer of :func:`workbench.engine.bench.runner.run_benchmark`:
the runner calls it between samples (never inside a timed region).  A few times a
second, and on phase changes, it takes the run's partial record
(:meth:`~workbench.engine.bench.runner.Progress.snapshot`: the samples so far, their
statistics and a ``progress`` object) and sends its whole MIME bundle, text, HTML
fallback and ``application/vnd.jax-workbench.bench+json``, first with
``display(..., display_id=True)`` then as ``update_display_data`` of that output.  The
JupyterLab extension redraws in place from the payload; any other front end redraws the
HTML.  At the end the same output is updated to the finished result, so the saved
notebook holds only that (a plain bundle, no widget state).

Cost: an update costs milliseconds (a bundle of the samples so far), so updates are
spaced by at least ``interval_s`` and by ``cost / max_share`` (the last update's cost
over the share of the run they may take, 3%), so even a run with tens of thousands of
samples spends little of its budget redrawing.
"""

from __future__ import annotations

import dataclasses
import time
from typing import Any

from workbench.engine.bench.result import Benchmark, BenchProgress
from workbench.engine.bench.runner import Progress
from workbench.views.bench import bench_bundle

#: least time between two updates while sampling, and after a phase change
INTERVAL_S = 0.25
PHASE_INTERVAL_S = 0.05
#: most of the run's time the updates may take (the gap grows with an update's cost)
MAX_SHARE = 0.03


def updates_in_place() -> bool:
    """True where a display can be updated in place: a Jupyter kernel, or a shell whose
    display publisher handles updates itself.  Terminal IPython's publisher (the base
    :class:`~IPython.core.displaypub.DisplayPublisher`) prints every display and every
    update, so a run shown as it goes would print its progress dozens of times there."""
    from IPython import get_ipython
    from IPython.core.displaypub import DisplayPublisher

    ip = get_ipython()
    if ip is None:  # plain Python: display() prints
        return False
    if getattr(ip, "kernel", None) is not None:
        return True
    publisher = getattr(ip, "display_pub", None)
    return publisher is not None and type(publisher).publish is not DisplayPublisher.publish


class ProgressDisplay:
    """Observer that shows the run so far as one output, updated in place."""

    def __init__(
        self,
        text_only: bool = False,
        interval_s: float | None = None,
        phase_interval_s: float | None = None,
        max_share: float | None = None,
    ) -> None:
        self.text_only = text_only
        self.interval_s = INTERVAL_S if interval_s is None else interval_s
        self.phase_interval_s = PHASE_INTERVAL_S if phase_interval_s is None else phase_interval_s
        self.max_share = MAX_SHARE if max_share is None else max_share
        self.handle: Any = None
        self.updates = 0  # bundles sent (the first display included)
        self.cost_s = 0.0  # time spent building and sending them
        self._last_cost = 0.0
        self._last_at = -float("inf")
        self._phase: str | None = None
        self._event: Progress | None = None
        self._record: Benchmark | None = None

    @property
    def shown(self) -> bool:
        return self.handle is not None

    def __call__(self, p: Progress) -> None:
        """Runner callback; returns at once unless an update is due."""
        if p.benchmark is not None:  # the final record: the front door shows the result
            return
        self._event = p
        now = time.perf_counter()
        changed = p.phase != self._phase
        self._phase = p.phase
        gap = max(
            self.phase_interval_s if changed else self.interval_s, self._last_cost / self.max_share
        )
        if now - self._last_at < gap:
            return
        self._record = p.snapshot()
        self._send(bench_bundle(self._record, text_only=self.text_only), now)

    def _send(self, bundle: dict[str, Any], started: float) -> None:
        from IPython.display import display

        if self.handle is None:
            self.handle = display(bundle, raw=True, display_id=True)
        else:
            self.handle.update(bundle, raw=True)
        self.updates += 1
        self._last_at = time.perf_counter()
        cost = self._last_at - started
        self.cost_s += cost
        # the first bundle pays one-off costs (imports, first display): not a rate
        self._last_cost = cost if self.updates > 1 else 0.0

    def finish(self, bundle: dict[str, Any]) -> None:
        """Replace the progress output by the finished result's bundle."""
        if self.handle is not None:
            self._send(bundle, time.perf_counter())

    def stopped(self, exc: BaseException) -> None:
        """An exception ended the run before its result: the output keeps what was
        measured and says why it stopped (never a progress bar left running)."""
        if self.handle is None:
            return
        record = self._record
        event = self._event
        if event is not None:
            try:
                record = event.snapshot()
            except Exception:
                pass
        why = (
            "interrupted" if isinstance(exc, KeyboardInterrupt) else f"{type(exc).__name__}: {exc}"
        )
        if record is None or record.progress is None:
            self._send(
                {"text/plain": f"benchmark stopped before the end: {why}"}, time.perf_counter()
            )
            return
        progress: BenchProgress = dataclasses.replace(record.progress, done=True, message=why)
        final = dataclasses.replace(
            record, progress=progress, interrupted=isinstance(exc, KeyboardInterrupt)
        )
        try:
            bundle = bench_bundle(final, text_only=self.text_only)
        except Exception:
            bundle = {"text/plain": f"benchmark stopped before the end: {why}"}
        self._send(bundle, time.perf_counter())


__all__ = ["ProgressDisplay", "updates_in_place"]
