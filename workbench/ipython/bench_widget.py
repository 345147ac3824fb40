"""The live benchmark widget (ipywidgets): progress, plots that grow, then the table.

It is an observer of :func:`workbench.engine.bench.runner.run_benchmark`: the
runner calls it between samples (never inside a timed region) with a
:class:`~workbench.engine.bench.runner.Progress`.  Redrawing the SVG plots costs
about a millisecond, so it is throttled to :attr:`BenchWidget.redraw_s`; widget
state changes reach the browser while the cell is still running, which is what
makes it live.  The pictures come from :mod:`workbench.views.bench`, so the
finished widget and the saved output agree.
"""

from __future__ import annotations

import time
from typing import Any

from workbench.engine.bench.result import Benchmark
from workbench.engine.bench.runner import Progress
from workbench.engine.bench.stats import summarize
from workbench.views._format import fmt_seconds
from workbench.views._html import esc, style_block
from workbench.views.bench import BENCH_CSS, bench_html, samples_plots

_PHASE_LABEL = {"compile": "compiling", "warmup": "warming up", "sampling": "sampling",
                "roofline": "roofline", "error": "error", "done": "done",
                "interrupted": "interrupted"}


class BenchWidget:
    """Progress bar, status line, live histogram + run-order plot, final table."""

    def __init__(self, title: str, redraw_s: float = 0.25) -> None:
        import ipywidgets as w

        self.redraw_s = redraw_s
        self.title = w.HTML(f"<b>benchmark: {esc(title)}</b>")
        self.progress = w.FloatProgress(value=0.0, min=0.0, max=1.0, description="starting",
                                        bar_style="info")
        self.status = w.HTML("")
        self.plots = w.HTML("")
        self.table = w.HTML("")
        self.box = w.VBox([self.title, self.progress, self.status, self.plots, self.table])
        self.redraws = 0
        self.samples_seen = 0
        self.result: Benchmark | None = None
        self._last_draw = 0.0

    def __call__(self, p: Progress) -> None:
        """Observer entry point; cheap unless a redraw is due.

        Called after every sample round (thousands per second for fast calls), so
        between redraws it returns before touching any widget: each trait change
        is a message to the browser.
        """
        now = time.perf_counter()
        if p.phase == "sampling" and now - self._last_draw < self.redraw_s:
            return
        self.progress.value = max(self.progress.value, min(p.fraction, 1.0))
        self.progress.description = _PHASE_LABEL.get(p.phase, p.phase)
        if p.benchmark is not None:
            self.finish(p.benchmark)
            return
        seen = sum(len(m.samples) for m in p.measurements)
        self.status.value = esc(self._status(p))
        if p.phase == "sampling" and seen != self.samples_seen:
            self._draw(p)
            self._last_draw = now
        self.samples_seen = seen

    def _status(self, p: Progress) -> str:
        parts = [p.message]
        for m in p.measurements:
            if len(m.samples) >= 1:
                med = summarize(m.samples).median
                parts.append(f"{m.variant}: median {fmt_seconds(med)} "
                             f"({len(m.samples)} × {m.number})")
        return " · ".join(parts)

    def _draw(self, p: Progress) -> None:
        self.plots.value = (f"{style_block()}<style>{BENCH_CSS}</style>"
                            f'<div class="jwb">{samples_plots(p.measurements)}</div>')
        self.redraws += 1

    def finish(self, b: Benchmark) -> None:
        """The final state: full bar, the whole result (table, plots, notes)."""
        self.result = b
        self.progress.value = 1.0
        self.progress.bar_style = "warning" if b.interrupted or not b.ok else "success"
        self.progress.description = "interrupted" if b.interrupted else "done"
        n = sum(len(m.samples) for m in b.measurements)
        errors = sum(m.error is not None for m in b.measurements)
        self.status.value = esc(f"{'interrupted: kept ' if b.interrupted else ''}{n} samples "
                                f"in {fmt_seconds(b.wall_s)}"
                                + (f"; {errors} failed" if errors else ""))
        self.plots.value = ""
        self.table.value = bench_html(b)

    def close(self) -> None:
        """Close the box, every child, and their ``layout``/``style`` models.

        Closing a container closes only its own model: the children (and each
        one's layout and style, widgets in their own right) would stay registered,
        with open comms, in the kernel for as long as it runs.
        """
        import ipywidgets as w

        for widget in (self.title, self.progress, self.status, self.plots, self.table,
                       self.box):
            for part in (getattr(widget, "layout", None), getattr(widget, "style", None)):
                if isinstance(part, w.Widget):
                    part.close()
            widget.close()

    def _ipython_display_(self) -> None:
        from IPython.display import display

        display(self.box)

    def widget_state(self) -> dict[str, Any]:
        """The model values that matter (what a test or a front end reads)."""
        return {"progress": self.progress.value, "bar_style": self.progress.bar_style,
                "phase": self.progress.description, "status": self.status.value,
                "plots": self.plots.value, "table": self.table.value,
                "redraws": self.redraws}
