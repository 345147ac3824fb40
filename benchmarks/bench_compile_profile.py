"""What does ``%%jaxprof --compile`` cost against a plain compile, and how much of XLA's
compile do its named passes and phases cover?

Run by hand (not part of the test suite)::

    python benchmarks/bench_compile_profile.py [--blocks N] [--rounds N] [--style einsum]

What is measured
----------------
The gradient of ``tests/real_models.py``'s transformer (24 blocks unless ``--blocks``),
two ways per round, in alternating order:

* *plain*: ``jax.jit(fresh).trace(params, x).lower().compile()`` of a new wrapper function
  (no trace-cache entry, so all three stages run), JAX's persistent compilation cache
  bypassed as the profile bypasses it: what a user's first call compiles;
* *profiled*: what the magic does after capturing the call: a scoped ``Inspection`` traced,
  lowered and compiled under the profiler by
  :func:`~workbench.engine.compile_time.run.compile_time_profile`, then the trace read, the
  optimized module parsed and the program sized.

The ratio is profiled / plain of the same round (median over rounds).  The figures split
the profiled run: its trace, lower and compile stages (the compile with the profiler on:
against the plain compile, the profiler's own cost) and the analysis after it.  Coverage is
the share of XLA's compile wall time in named passes and phases, and the phases printed
are the top of the profiled compile of the last round.

On a 2-core machine shared with other work the 24-block compile takes 30 s to 2 min; the
ratio is what to read, from a run where both ways saw the same load.
"""

from __future__ import annotations

import argparse
import os
import statistics
import sys
import time
from typing import Any

os.environ.setdefault("JAX_PLATFORMS", "cpu")
sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))

import jax  # noqa: E402

from tests import real_models  # noqa: E402
from workbench.engine import _jax_compat as compat  # noqa: E402
from workbench.engine.compile_time.run import compile_time_profile  # noqa: E402
from workbench.engine.stages import Inspection  # noqa: E402


def plain(grad: Any, args: tuple[Any, ...]) -> dict[str, float]:
    def fresh(*a: Any) -> Any:  # a new function object: no trace-cache entry of its own
        return grad(*a)

    t0 = time.perf_counter()
    traced = jax.jit(fresh).trace(*args)
    t1 = time.perf_counter()
    lowered = traced.lower()
    t2 = time.perf_counter()
    with compat.persistent_cache_bypassed():
        lowered.compile()
    t3 = time.perf_counter()
    return {"total": t3 - t0, "trace": t1 - t0, "lower": t2 - t1, "compile": t3 - t2}


def profiled(grad: Any, args: tuple[Any, ...]) -> tuple[dict[str, float], Any]:
    t0 = time.perf_counter()
    rep = compile_time_profile(Inspection(grad, args, {}, scoped=True))
    total = time.perf_counter() - t0
    analysis = total - rep.trace_s - rep.lower_s - rep.compile_s
    return (
        {
            "total": total,
            "trace": rep.trace_s,
            "lower": rep.lower_s,
            "compile": rep.compile_s,
            "analysis": analysis,
            "coverage": rep.phases.coverage,
            "xla_wall": rep.phases.wall_s,
        },
        rep,
    )


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--blocks", type=int, default=real_models.BLOCKS)
    ap.add_argument("--rounds", type=int, default=2)
    ap.add_argument("--style", default="einsum", choices=sorted(real_models.TRANSFORMER_LOSSES))
    a = ap.parse_args()
    params, x = real_models.transformer_args(a.blocks)
    grad = jax.grad(real_models.TRANSFORMER_LOSSES[a.style])
    args = (params, x)
    plain(grad, args)  # JAX's own small jits (tril, where) compiled once, for both ways
    rows: list[tuple[dict[str, float], dict[str, float]]] = []
    rep = None
    for r in range(a.rounds):
        if r % 2 == 0:
            p = plain(grad, args)
            q, rep = profiled(grad, args)
        else:
            q, rep = profiled(grad, args)
            p = plain(grad, args)
        rows.append((p, q))
        print(
            f"round {r + 1}: plain {p['total']:.2f} s (compile {p['compile']:.2f}), "
            f"profiled {q['total']:.2f} s (compile {q['compile']:.2f}, analysis "
            f"{q['analysis']:.2f}), coverage {q['coverage']:.1%}",
            flush=True,
        )

    def med(key: str, which: int) -> float:
        return statistics.median(row[which][key] for row in rows)

    ratio = statistics.median(q["total"] / p["total"] for p, q in rows)
    compile_ratio = statistics.median(q["compile"] / p["compile"] for p, q in rows)
    print()
    print(f"{a.blocks}-block {a.style} gradient, {a.rounds} rounds, medians:")
    print(
        f"  plain:    {med('total', 0):.2f} s (trace {med('trace', 0):.2f}, lower "
        f"{med('lower', 0):.2f}, compile {med('compile', 0):.2f})"
    )
    print(
        f"  profiled: {med('total', 1):.2f} s (trace {med('trace', 1):.2f}, lower "
        f"{med('lower', 1):.2f}, compile {med('compile', 1):.2f}, analysis "
        f"{med('analysis', 1):.2f})"
    )
    print(
        f"  --compile / plain: {ratio:.2f}x (the compile alone, profiler on: {compile_ratio:.2f}x)"
    )
    print(
        f"  coverage of XLA's compile wall time by named passes and phases: {med('coverage', 1):.1%}"
    )
    if rep is not None:
        wall = rep.phases.wall_s
        print(
            f"  last round's XLA compile: {wall:.2f} s; HLO passes {rep.phases.hlo_passes_s / wall:.1%}"
        )
        for ph in rep.phases.phases[:6]:
            print(f"    {ph.name:<40} {ph.kind:<10} {ph.seconds:8.2f} s  {ph.share:6.1%}")
        for loop in rep.size.loops:
            print(
                f"  unrolled: {loop.function} x{loop.calls}, {loop.instruction_share:.0%} of "
                f"{rep.size.instructions} instructions"
            )


if __name__ == "__main__":
    main()
