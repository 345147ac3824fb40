"""Does the cache feature slow down calls of an already-compiled function?

Run by hand (not part of the test suite)::

    python benchmarks/bench_cache.py [--rounds N] [--calls N]

What is measured
----------------
The subject is cached dispatch: ``f(x)`` for a tiny ``jax.jit`` function
(``x * 2 + 1`` on a 4-element float32 array) that was compiled before timing
starts; each sample is the mean of ``--calls`` back-to-back calls (results are
kept and blocked on once at the end of the sample, as a loop in a notebook would
be dispatch-bound).

*Off* (the reference): a real IPython ``InteractiveShell`` with the workbench unloaded
(``workbench.unload_ipython_extension``).  *On*: the same shell with it loaded (the cache
tracker's listeners on ``jax.monitoring``, the log filter, ``jax_explain_cache_misses`` on,
the cell hooks, the side panel's tracker subscription).  Target: on/off at most 1.03.

A third row, *compile*, times one fresh trace+lower+compile of a new function
with the cache feature on vs off (what the listeners cost when JAX does compile);
it is reported for information.

Why it is done this way
-----------------------
Machines are noisy (this one is shared), so on and off alternate within each
round, in a rotating order, and the figures are medians of the per-round
samples; the ratio is the median of per-round ratios, so slow drift hits both.
Each round also times "off" twice; the median off/off ratio (column A/A) shows
how far two identical measurements drift apart on this machine in this run.
"""

from __future__ import annotations

import argparse
import os
import statistics
import time

os.environ.setdefault("JAX_PLATFORMS", "cpu")

import jax  # noqa: E402
import jax.numpy as jnp  # noqa: E402
from IPython.core.interactiveshell import InteractiveShell  # noqa: E402

import workbench  # noqa: E402


def _dispatch_sample(f, x, calls: int) -> float:
    outs = [None] * calls
    t0 = time.perf_counter()
    for i in range(calls):
        outs[i] = f(x)
    t1 = time.perf_counter()
    jax.block_until_ready(outs)
    return (t1 - t0) / calls


def _compile_sample(k: int) -> float:
    g = jax.jit(lambda x: jnp.tanh(x) * k)
    t0 = time.perf_counter()
    g(jnp.ones(3)).block_until_ready()
    return time.perf_counter() - t0


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--rounds", type=int, default=90)
    ap.add_argument("--calls", type=int, default=1000)
    args = ap.parse_args()

    shell = InteractiveShell.instance()
    f = jax.jit(lambda x: x * 2 + 1)
    x = jnp.ones(4)
    f(x).block_until_ready()
    for _ in range(3):  # warm both states
        workbench.load_ipython_extension(shell)
        _dispatch_sample(f, x, args.calls)
        workbench.unload_ipython_extension(shell)
        _dispatch_sample(f, x, args.calls)

    # Each round times off, on and a second off ("A/A": the noise floor of this machine),
    # in a rotating order; ratios are per round, then the median over rounds.
    states = ("off", "on", "off2")
    disp: dict[str, list[float]] = {s: [] for s in states}
    comp: dict[str, list[float]] = {s: [] for s in states}
    ratios, aa, c_ratios = [], [], []
    for r in range(args.rounds):
        order = states[r % 3 :] + states[: r % 3]
        sample: dict[str, float] = {}
        for state in order:
            if state == "on":
                workbench.load_ipython_extension(shell)
            sample[state] = _dispatch_sample(f, x, args.calls)
            comp[state].append(_compile_sample(r * 3 + states.index(state)))
            if state == "on":
                workbench.unload_ipython_extension(shell)
            disp[state].append(sample[state])
        ratios.append(sample["on"] / sample["off"])
        aa.append(sample["off2"] / sample["off"])
        c_ratios.append(comp["on"][-1] / comp["off"][-1])

    med = statistics.median
    ratio = med(ratios)
    print(
        f"jax {jax.__version__}, {args.rounds} rounds x {args.calls} calls, "
        f"backend {jax.default_backend()}"
    )
    print(f"{'case':<30}{'off':>11}{'on':>11}{'on/off':>9}{'A/A':>8}{'target':>9}")
    print(
        f"{'cached dispatch (per call)':<30}{med(disp['off']) * 1e6:>9.2f}us"
        f"{med(disp['on']) * 1e6:>9.2f}us{ratio:>9.3f}{med(aa):>8.3f}{'<= 1.03':>9}"
    )
    print(
        f"{'first call (compile)':<30}{med(comp['off']) * 1e3:>9.2f}ms"
        f"{med(comp['on']) * 1e3:>9.2f}ms{med(c_ratios):>9.3f}{'':>8}{'info':>9}"
    )
    print(
        "PASS" if ratio <= 1.03 else "FAIL",
        f"(cached dispatch on/off {ratio:.3f}; "
        f"A/A off/off {med(aa):.3f} is this run's noise floor)",
    )


if __name__ == "__main__":
    main()
