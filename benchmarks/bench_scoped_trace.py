"""What does naming the user's calls cost the trace of ``%%hlo``?

Run by hand (not part of the test suite)::

    python benchmarks/bench_scoped_trace.py [--rounds N] [--blocks N]

What is measured
----------------
One trace (``jax.jit(f).trace(params, x)``, nothing lowered or compiled) of the gradient of
``tests/real_models.py``'s transformer (24 blocks unless ``--blocks``), three ways:

* *plain*: JAX alone, the reference;
* *monitoring*: inside :func:`workbench.engine.common.call_scopes.scoped_calls` with the
  ``sys.monitoring`` hook (Python >= 3.12; the default there);
* *setprofile*: the same with the ``sys.setprofile`` hook (Python 3.11, and the fallback).

Each trace is of a new wrapper function around the gradient, so none is served from JAX's
trace cache (the scoped trace never is: it runs where the user's cache entries do not
apply); JAX's own small jits inside (``jnp.where``, ``jnp.tril``) are cached after the
first round, for every mode alike.

Why it is done this way
-----------------------
The machine is shared and noisy: the modes alternate within each round in a rotating
order, the figures are medians over rounds, and each ratio is the median of the per-round
ratios against the plain trace of the same round.  A second plain trace per round gives
the A/A ratio: how far two identical measurements drift apart in this run.
"""

from __future__ import annotations

import argparse
import os
import statistics
import sys
import time
from collections.abc import Callable
from typing import Any

os.environ.setdefault("JAX_PLATFORMS", "cpu")
sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))

import jax  # noqa: E402

from tests import real_models  # noqa: E402
from workbench.engine.common.call_scopes import HOOKS, default_hook, scoped_calls  # noqa: E402


def _trace_once(grad: Callable[..., Any], args: tuple[Any, ...], hook: str | None) -> float:
    def fresh(*a: Any) -> Any:  # a new function object: no trace-cache entry of its own
        return grad(*a)

    t0 = time.perf_counter()
    if hook is None:
        jax.jit(fresh).trace(*args)
    else:
        with scoped_calls(hook):
            jax.jit(fresh).trace(*args)
    return time.perf_counter() - t0


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--rounds", type=int, default=7)
    parser.add_argument("--blocks", type=int, default=real_models.BLOCKS)
    opts = parser.parse_args()

    params, x = real_models.transformer_args(opts.blocks)
    grad = jax.grad(real_models.transformer_loss_einsum)
    hooks = [h for h in HOOKS if h != "monitoring" or hasattr(sys, "monitoring")]
    modes: list[str | None] = [None, None, *hooks]  # plain twice: the A/A ratio
    _trace_once(grad, (params, x), None)  # warm JAX's own helpers
    times: dict[str, list[float]] = {}
    ratios: dict[str, list[float]] = {}
    for r in range(opts.rounds):
        order = modes[r % len(modes) :] + modes[: r % len(modes)]
        got: dict[str, list[float]] = {}
        for mode in order:
            got.setdefault(mode or "plain", []).append(_trace_once(grad, (params, x), mode))
        plain = got["plain"]
        ratios.setdefault("A/A", []).append(plain[1] / plain[0])
        times.setdefault("plain", []).append(min(plain))
        for hook in hooks:
            times.setdefault(hook, []).append(got[hook][0])
            ratios.setdefault(hook, []).append(got[hook][0] / min(plain))

    print(
        f"trace of the {opts.blocks}-block transformer's gradient, {opts.rounds} rounds, "
        f"Python {sys.version_info.major}.{sys.version_info.minor}, JAX {jax.__version__}, "
        f"{jax.default_backend()}; default hook here: {default_hook()}"
    )
    print(f"{'mode':<12}{'median s':>10}{'vs plain':>10}")
    print(f"{'plain':<12}{statistics.median(times['plain']):>10.3f}{'1.00':>10}")
    for hook in hooks:
        med = statistics.median(times[hook])
        print(f"{hook:<12}{med:>10.3f}{statistics.median(ratios[hook]):>10.2f}")
    print(f"A/A (plain vs plain): {statistics.median(ratios['A/A']):.2f}")


if __name__ == "__main__":
    main()
