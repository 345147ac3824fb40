"""What does ``%%jaxprof`` cost next to timing the same calls plainly, and what does it cover?

Run by hand (not part of the test suite)::

    python benchmarks/bench_profile.py [--rounds N] [--calls N]

Subject: the gradient of the 24-layer transformer-block stack of ``bench_jaxpr.py``, and a
small two-matmul program (where the profiler's fixed costs dominate).

*Reference*: ``calls`` plain calls of the compiled function, each followed by
``jax.block_until_ready`` (what a careful user times by hand), after a warm-up.

*Profile*: :func:`workbench.engine.profile.run.profile_call` with ``calls`` calls: parsing
the optimized HLO, one warm-up call, the calls under ``jax.profiler.trace``, reading the
trace back (``ProfileData``), our FLOP/byte counts, attribution to instructions, lines and
primitives (``profile_s``: everything but the compile, which is reported apart; the
reference's compile is not timed either).

Target (issue 14): profile <= 2 x reference + 1 s.  Printed: the ratio, the excess over
2x (must be <= 1 s), and the coverage of the 24-layer gradient (target >= 90% on CPU).
Rounds alternate reference and profile so drift hits both; medians over rounds.
"""

from __future__ import annotations

import argparse
import gc
import os
import statistics
import sys
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

os.environ.setdefault("JAX_PLATFORMS", "cpu")
sys.path.insert(0, str(Path(__file__).resolve().parent))
sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

import jax  # noqa: E402
import jax.numpy as jnp  # noqa: E402
from bench_jaxpr import init_params, make_loss  # noqa: E402

from workbench.engine.profile.run import profile_call  # noqa: E402
from workbench.engine.profile.store import forget  # noqa: E402


def two_matmuls(w1: jax.Array, w2: jax.Array, x: jax.Array) -> jax.Array:
    return jnp.tanh(x @ w1) @ w2


def plain(fn: Callable[..., Any], args: tuple[Any, ...], calls: int) -> float:
    jitted = jax.jit(fn)
    jax.block_until_ready(jitted(*args))  # compile + warm-up, untimed
    gc.collect()
    t0 = time.perf_counter()
    for _ in range(calls):
        jax.block_until_ready(jitted(*args))
    return time.perf_counter() - t0


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--rounds", type=int, default=3)
    ap.add_argument("--calls", type=int, default=10)
    opts = ap.parse_args()
    params, x = init_params()
    k = jax.random.split(jax.random.key(0), 3)
    mm = (
        jax.random.normal(k[0], (512, 512)),
        jax.random.normal(k[1], (512, 512)),
        jax.random.normal(k[2], (256, 512)),
    )
    subjects: list[tuple[str, Callable[..., Any], tuple[Any, ...]]] = [
        ("transformer24 grad", jax.grad(make_loss()), (params, x)),
        ("two matmuls 256x512x512", two_matmuls, mm),
    ]
    print(
        f"backend {jax.default_backend()} ({jax.devices()[0].device_kind}), "
        f"{opts.calls} calls per measurement, {opts.rounds} rounds"
    )
    for name, fn, args in subjects:
        ref: list[float] = []
        prof: list[float] = []
        comp: list[float] = []
        cov: list[float] = []
        step: list[float] = []
        phases: dict[str, list[float]] = {}
        for _ in range(opts.rounds):
            ref.append(plain(fn, args, opts.calls))
            gc.collect()
            forget()  # cold: the module is parsed and counted again, as a first profile is
            rep = profile_call(fn, args, {}, calls=opts.calls)
            prof.append(rep.profile_s)
            comp.append(rep.compile_s or 0.0)
            cov.append(rep.coverage)
            step.append(rep.step_s)
            for k, v in rep.phases.items():
                phases.setdefault(k, []).append(v)
        r, p = statistics.median(ref), statistics.median(prof)
        excess = p - 2 * r
        print(f"\n{name}")
        print(f"  reference ({opts.calls} plain calls)   {r * 1e3:9.1f} ms")
        print(
            f"  profile (all but the compile)         {p * 1e3:9.1f} ms   ratio {p / r:6.2f}x"
            f"   excess over 2x: {excess:+.3f} s (target <= 1 s: "
            f"{'met' if excess <= 1.0 else 'NOT met'})"
        )
        print(
            "  where it went: "
            + ", ".join(f"{k} {statistics.median(v) * 1e3:.0f} ms" for k, v in phases.items())
        )
        print(f"  compile (apart)                      {statistics.median(comp) * 1e3:9.1f} ms")
        print(
            f"  median step under the profiler        {statistics.median(step) * 1e3:9.3f} ms"
            f"   vs plain {r / opts.calls * 1e3:.3f} ms per call"
        )
        print(
            f"  coverage                              {statistics.median(cov):9.1%}"
            f"   (rounds: {', '.join(f'{c:.1%}' for c in cov)})"
        )


if __name__ == "__main__":
    main()
