"""Our FLOP/byte count of the optimized HLO: how close to XLA's, and what it costs.

Run by hand (not part of the test suite)::

    python benchmarks/bench_costs.py [--rounds N] [--data ../shared/data]

Accuracy: for each program, our count (``workbench.engine.hlo.costs.program_cost``
with no XLA figure) next to XLA's own ``Compiled.cost_analysis()`` of the same
compiled program, as a ratio (1.000 = the same).  Programs: the gradient of the
24-layer transformer-block stack of ``bench_jaxpr.py`` compiled here (CPU), and,
when the recorded GPU data is at hand (``--data``, the folder with
``gpu-profiles-cb/``), the optimized HLO recorded on an H100 with XLA's
cost_analysis from its ``meta.json`` (where XLA reported a -1 sentinel, only our
figure is printed).

Cost: what ``%jaxbench``'s roofline now adds per benchmarked function, parsing
the optimized HLO and counting (``parse_hlo`` + ``program_cost``), against the
reference measured in the same run: XLA's compile of the same program
(``Lowered.compile()``), which the roofline's ``inspect`` already pays for.
Each round uses a fresh function object, so JAX's caches never serve a
previous round; figures are medians over rounds, ratios paired per round.
"""

from __future__ import annotations

import argparse
import gc
import json
import os
import statistics
import sys
import time
from pathlib import Path
from typing import Any

os.environ.setdefault("JAX_PLATFORMS", "cpu")
sys.path.insert(0, str(Path(__file__).resolve().parent))

import jax  # noqa: E402
from bench_jaxpr import init_params, make_loss  # noqa: E402

from workbench.engine.common.analysis import normalize_cost  # noqa: E402
from workbench.engine.hlo.costs import program_cost  # noqa: E402
from workbench.engine.hlo.parser import parse_hlo  # noqa: E402


def timed(fn: Any) -> tuple[float, Any]:
    gc.collect()
    t0 = time.perf_counter()
    out = fn()
    return time.perf_counter() - t0, out


def _ratio(ours: float | None, xla: float | None) -> str:
    if ours is None or xla is None or xla <= 0:
        return "n/a"
    return f"{ours / xla:.3f}"


def _row(name: str, text: str, raw: Any) -> None:
    xla = normalize_cost(raw)
    pc = program_cost(parse_hlo(text), None)
    xf = "not counted" if xla.flops is None else f"{xla.flops:.4g}"
    xb = "not counted" if xla.bytes_accessed is None else f"{xla.bytes_accessed:.4g}"
    print(
        f"{name:<34}{pc.counted_flops:>12.4g}{xf:>13}{_ratio(pc.counted_flops, xla.flops):>8}"
        f"{pc.counted_bytes:>12.4g}{xb:>13}{_ratio(pc.counted_bytes, xla.bytes_accessed):>8}"
        f"  {pc.dtype or '-'}" + (f"  uncounted: {', '.join(pc.uncounted)}" if pc.uncounted else "")
    )


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--rounds", type=int, default=5)
    ap.add_argument(
        "--data", type=Path, default=Path(__file__).resolve().parents[2] / "shared" / "data"
    )
    opts = ap.parse_args()
    params, x = init_params()
    rows: dict[str, list[float]] = {"compile": [], "parse": [], "count": []}
    text = ""
    raw: Any = None
    for r in range(opts.rounds):
        loss = make_loss()
        lowered = jax.jit(jax.grad(loss)).lower(params, x)
        t_compile, compiled = timed(lambda: lowered.compile())  # noqa: B023
        text, raw = compiled.as_text(), compiled.cost_analysis()
        t_parse, module = timed(lambda: parse_hlo(text))  # noqa: B023
        t_count, _ = timed(lambda: program_cost(module, normalize_cost(raw)))  # noqa: B023
        for k, v in zip(rows, (t_compile, t_parse, t_count), strict=True):
            rows[k].append(v)
        print(
            f"round {r + 1}/{opts.rounds}: compile {t_compile:.2f} s, parse + count "
            f"{t_parse + t_count:.3f} s",
            file=sys.stderr,
        )
    print(
        f"\njax {jax.__version__}, backend {jax.default_backend()}, {os.cpu_count()} CPUs, "
        f"{opts.rounds} rounds (medians)\n"
    )
    print("accuracy: our count / XLA's cost_analysis of the same compiled program")
    print(
        f"{'program':<34}{'our FLOPs':>12}{'XLA FLOPs':>13}{'ratio':>8}{'our bytes':>12}"
        f"{'XLA bytes':>13}{'ratio':>8}  peak dtype"
    )
    _row("transformer24 grad (CPU, here)", text, raw)
    gpu = opts.data / "gpu-profiles-cb"
    if (gpu / "meta.json").exists():
        meta = json.loads((gpu / "meta.json").read_text())
        for name, prog in meta["programs"].items():
            hlo = gpu / f"{name}.hlo.txt"
            if hlo.exists():
                _row(f"{name} (H100, recorded)", hlo.read_text(), prog["cost_analysis"])
    else:
        print(f"(no recorded GPU data under {opts.data}: GPU rows skipped)")
    med_c = statistics.median(rows["compile"])
    ours = [p + c for p, c in zip(rows["parse"], rows["count"], strict=True)]
    ratio = statistics.median(o / c for o, c in zip(ours, rows["compile"], strict=True))
    print(f"\n{'section':<34}{'median s':>10}{'x compile':>11}")
    for k, label in (
        ("compile", "XLA compile (reference)"),
        ("parse", "parse_hlo"),
        ("count", "program_cost"),
    ):
        m = statistics.median(rows[k])
        print(f"{label:<34}{m:>10.3f}{m / med_c:>11.3f}")
    print(
        f"\nparse + count vs compile (paired median): {ratio:.3f}x, "
        f"{len(text) / 1e6:.2f} MB of HLO text"
    )


if __name__ == "__main__":
    main()
