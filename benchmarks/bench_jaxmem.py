"""What ``%jaxmem`` and ``%%jaxmem`` cost.

Run by hand (not part of the test suite)::

    python benchmarks/bench_jaxmem.py [--arrays 10000] [--rounds 5] [--blocks 4]

What is measured
----------------
1. ``%jaxmem`` in a real IPython shell whose namespace holds ``--arrays`` live arrays (a
   list of them, as a user's loop would leave), plus a few names: the whole magic (walks,
   grouping, the text/HTML/JSON bundle).  The reference is plain JAX's own look at the same
   arrays, ``jax.live_arrays()`` with each array's ``nbytes`` summed, timed in the same
   rounds; the ratio says what naming the owners costs on top of listing the arrays.
2. ``%%jaxmem``'s engine on the transformer's gradient (``--blocks``; 24 is the real model)
   against a plain ``jax.jit(f).lower(...).compile()`` of the same program, alternating in
   each round: trace + lower + compile with XLA's dump + reading and parsing the dump,
   against trace + lower + compile.  It prints the live-range peak beside
   ``memory_analysis()``'s argument + output + temp - alias for the last run.

Medians of the rounds; the machine is shared, so the two sides alternate in each round.
"""

from __future__ import annotations

import argparse
import os
import statistics
import sys
import time

os.environ.setdefault("JAX_PLATFORMS", "cpu")
sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))

import jax  # noqa: E402
from IPython.core.interactiveshell import InteractiveShell  # noqa: E402
from IPython.utils.capture import capture_output  # noqa: E402

from tests import real_models  # noqa: E402
from workbench.engine.memory.program import build_program_memory  # noqa: E402
from workbench.engine.stages import Inspection  # noqa: E402


def _median(xs: list[float]) -> float:
    return statistics.median(xs)


def bench_live(n: int, rounds: int) -> None:
    shell = InteractiveShell.instance()
    shell.run_cell("%load_ext workbench", store_history=False)
    shell.run_cell(
        f"import jax.numpy as jnp\nbase = jnp.arange(16.0)\narrs = [base + i for i in range({n})]\n"
        "params = {'w': jnp.ones((512, 512)), 'b': jnp.zeros(512)}",
        store_history=False,
    )
    ours, plain = [], []
    for _ in range(rounds):
        t0 = time.perf_counter()
        total = sum(a.nbytes for a in jax.live_arrays())
        plain.append(time.perf_counter() - t0)
        t0 = time.perf_counter()
        with capture_output():
            r = shell.run_cell("%jaxmem", store_history=False)
            r.result._repr_mimebundle_()
        ours.append(time.perf_counter() - t0)
    rep = r.result.report
    assert rep.total_bytes == total, (rep.total_bytes, total)
    print(
        f"%jaxmem with {rep.total_arrays} live arrays: {_median(ours) * 1e3:.0f} ms (bundle "
        f"included; walk {rep.walk_s * 1e3:.0f} ms over {rep.objects} objects"
        f"{', cut short' if rep.cut_short else ''}); jax.live_arrays() + nbytes: "
        f"{_median(plain) * 1e3:.1f} ms; ratio {_median(ours) / _median(plain):.1f}"
    )
    shell.run_cell("del arrs, params, base", store_history=False)


def bench_program(blocks: int, rounds: int) -> None:
    params, x = real_models.transformer_args(blocks)
    ours, plain = [], []
    rep = None
    for _ in range(rounds):
        f = jax.grad(real_models.transformer_loss_einsum)  # a new function: nothing cached
        t0 = time.perf_counter()
        compiled = jax.jit(f).lower(params, x).compile()
        plain.append(time.perf_counter() - t0)
        del compiled
        g = jax.grad(real_models.transformer_loss_einsum)
        t0 = time.perf_counter()
        rep = build_program_memory(Inspection(g, (params, x), {}, scoped=True))
        ours.append(time.perf_counter() - t0)
    assert rep is not None
    print(
        f"%%jaxmem on the {blocks}-block gradient: {_median(ours):.2f} s against a plain "
        f"compile's {_median(plain):.2f} s: ratio {_median(ours) / _median(plain):.2f} "
        f"({rep.dump_bytes / 1e6:.1f} MB of dump files read and removed)"
    )
    analysis = rep.analysis_bytes or 0
    print(
        f"  live-range peak {rep.peak_bytes:,} bytes (XLA's report: "
        f"{rep.xla_reported_peak_bytes:,}); memory_analysis argument + output + temp - alias "
        f"{analysis:,} bytes: peak / analysis {rep.peak_bytes / analysis:.3f}; "
        f"peak_memory_in_bytes {rep.memory.peak_bytes}"
    )


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--arrays", type=int, default=10_000)
    ap.add_argument("--rounds", type=int, default=5)
    ap.add_argument("--blocks", type=int, default=4)
    ap.add_argument("--program-rounds", type=int, default=3)
    args = ap.parse_args()
    print(f"jax {jax.__version__}, {jax.default_backend()}, {len(jax.devices())} devices")
    bench_live(args.arrays, args.rounds)
    bench_program(args.blocks, args.program_rounds)


if __name__ == "__main__":
    main()
