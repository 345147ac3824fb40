"""How much does ``%%hlo`` cost next to XLA's own compile of the same program?

Run by hand (not part of the test suite)::

    python benchmarks/bench_hlo.py [--rounds N]

Subject: the gradient of the 24-layer transformer-block stack of
``bench_jaxpr.py`` (the foundation issue's benchmark program).  Each round uses
a fresh function object, so JAX's caches never serve a previous round, and
measures, in one process and one after the other:

- ``compile``: ``Lowered.compile()`` (XLA's optimization passes and codegen), the reference;
- ``as_text``: JAX's own work that any HLO view needs: ``Compiled.as_text()``,
  ``Lowered.as_text(debug_info=True)``, ``cost_analysis()`` and ``memory_analysis()``;
- ``parse``: our HLO parser, collectives and dataflow graphs (``build_hlo_report``);
- ``layout``: the layered layout of every diagram;
- ``render``: the self-contained HTML with the SVG diagrams, plus the JSON record.

Target (issue 3): parse + layout + HTML/SVG render at most 0.5x the XLA compile
time, measured in the same run (medians over rounds, paired per round), and
the HTML at most 5 MB.  Garbage is collected (untimed) before each section.

On the real models (tests/real_models.py: the 24-block transformer, both attention
styles), end to end against plain JAX in the same run, with the phase breakdown:
``benchmarks/bench_display_cost.py`` (issue 22's targets for ``%%hlo``).
"""

from __future__ import annotations

import argparse
import gc
import os
import statistics
import sys
import time
from pathlib import Path

os.environ.setdefault("JAX_PLATFORMS", "cpu")
sys.path.insert(0, str(Path(__file__).resolve().parent))

import jax  # noqa: E402
from bench_jaxpr import init_params, make_loss  # noqa: E402

import workbench  # noqa: E402
from workbench.engine.hlo.report import build_hlo_report  # noqa: E402
from workbench.views.hlo import graph_layouts, hlo_html, hlo_record  # noqa: E402


def timed(fn):  # type: ignore[no-untyped-def]
    gc.collect()
    t0 = time.perf_counter()
    out = fn()
    return time.perf_counter() - t0, out


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--rounds", type=int, default=5)
    opts = ap.parse_args()
    params, x = init_params()
    rows: dict[str, list[float]] = {
        k: [] for k in ("compile", "as_text", "parse", "layout", "render", "json")
    }
    sizes: dict[str, float] = {}
    for r in range(opts.rounds):
        ins = workbench.inspect(make_loss(), params, x, transforms="grad")
        ins.lowered  # noqa: B018 - trace + lower, untimed
        t_compile, _ = timed(lambda: ins.compiled)  # noqa: B023
        # JAX's own work any HLO view needs: printing the modules, the analyses
        t_text, text = timed(
            lambda: (ins.hlo_text, ins.stablehlo_debug_text, ins.cost, ins.memory)[0]  # noqa: B023
        )
        t_parse, rep = timed(lambda: build_hlo_report(ins))  # noqa: B023
        t_layout, layouts = timed(lambda: graph_layouts(rep))  # noqa: B023
        t_render, html = timed(lambda: hlo_html(rep, layouts))  # noqa: B023
        t_json, _ = timed(lambda: hlo_record(rep, layouts))  # noqa: B023
        for k, v in zip(
            rows, (t_compile, t_text, t_parse, t_layout, t_render, t_json), strict=True
        ):
            rows[k].append(v)
        sizes = {
            "hlo_text_mb": len(text) / 1e6,
            "html_mb": len(html.encode()) / 1e6,
            "fusions": rep.fusion_count,
            "instructions": rep.hlo_op_count,
            "entry_nodes": len(next(iter(rep.graphs.values())).nodes),
        }
        print(
            f"round {r + 1}/{opts.rounds}: compile {t_compile:.2f} s, ours "
            f"{t_parse + t_layout + t_render:.2f} s",
            file=sys.stderr,
        )
    ours = [
        p + lay + ren
        for p, lay, ren in zip(rows["parse"], rows["layout"], rows["render"], strict=True)
    ]
    ratio = statistics.median(o / c for o, c in zip(ours, rows["compile"], strict=True))
    print(
        f"\njax {jax.__version__}, backend {jax.default_backend()}, "
        f"{os.cpu_count()} CPUs, {opts.rounds} rounds (medians)"
    )
    print(
        f"program: grad of a 24-layer transformer stack: {sizes['fusions']} fusions, "
        f"{sizes['instructions']} HLO instructions, {sizes['entry_nodes']} entry nodes, "
        f"{sizes['hlo_text_mb']:.2f} MB of HLO text\n"
    )
    print(f"{'section':<28}{'median s':>10}{'x compile':>11}")
    med_c = statistics.median(rows["compile"])
    for k, label in (
        ("compile", "XLA compile (reference)"),
        ("as_text", "JAX: as_text + analyses"),
        ("parse", "parse + graphs"),
        ("layout", "layout"),
        ("render", "HTML/SVG render"),
        ("json", "JSON record"),
    ):
        m = statistics.median(rows[k])
        print(f"{label:<28}{m:>10.3f}{m / med_c:>11.3f}")
    print(
        f"\nparse + layout + render vs compile (paired median): {ratio:.3f}x  "
        f"(target <= 0.5x: {'PASS' if ratio <= 0.5 else 'FAIL'})"
    )
    print(
        f"HTML size: {sizes['html_mb']:.2f} MB  "
        f"(target <= 5 MB: {'PASS' if sizes['html_mb'] <= 5 else 'FAIL'})"
    )


if __name__ == "__main__":
    main()
