"""Does ``%jaxcache`` stay quick in a long session?

Run by hand (not part of the test suite)::

    python benchmarks/bench_cache_size.py [--records N] [--rounds N]

What is measured
----------------
The wall time of one ``%jaxcache`` cell (the snapshot, and its text, HTML and JSON
bundle as IPython's display formatter builds them) in a real ``InteractiveShell`` with
the workbench loaded, once the cache tracker holds ``--records`` records (10,000 by
default, the most it keeps), against the same cell with 100 records.  Target: under
10 ms at 10,000 records; the ratio shows how much the store's size still costs.

How the records are made
------------------------
10,000 real compiles would take minutes, so the tracker's own JAX listeners are
driven directly (trace, lower and compile events, as JAX sends them) inside
``begin_cell``/``end_cell``, one "cell" per record, with a new function name every few
cells, as a notebook that re-runs cells defining functions does.  Everything after the
listeners (attribution, pruning, the per-cell summary, the snapshot) is the real code.
"""

from __future__ import annotations

import argparse
import os
import statistics
import time

os.environ.setdefault("JAX_PLATFORMS", "cpu")

from IPython.core.interactiveshell import InteractiveShell  # noqa: E402

from workbench.engine import _jax_compat as compat  # noqa: E402
from workbench.engine.cache import CACHE  # noqa: E402


def fill(n: int) -> None:
    """``n`` cells, each compiling one function (a new name every 3 cells)."""
    CACHE.clear()
    for i in range(n):
        CACHE.begin_cell(str(i))
        name = f"f{i // 3}"
        CACHE._on_duration(compat.TRACE_EVENT, 1e-3, fun_name=name)
        CACHE._on_duration(compat.LOWER_EVENT, 2e-3, fun_name=f"jit({name})")
        CACHE._on_duration(compat.COMPILE_EVENT, 3e-2, fun_name=f"jit({name})")
        CACHE.end_cell()


def time_jaxcache(shell: InteractiveShell, rounds: int) -> float:
    samples = []
    for _ in range(rounds):
        t0 = time.perf_counter()
        # what a ``%jaxcache`` cell costs: the magic, then one formatting of its result
        result = shell.run_line_magic("jaxcache", "")
        shell.display_formatter.format(result)
        samples.append(time.perf_counter() - t0)
    return statistics.median(samples)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--records", type=int, default=10_000)
    ap.add_argument("--rounds", type=int, default=30)
    args = ap.parse_args()
    shell = InteractiveShell.instance()
    shell.run_cell("%load_ext workbench", store_history=False)
    fill(100)
    small = time_jaxcache(shell, args.rounds)
    t0 = time.perf_counter()
    fill(args.records)
    fill_s = time.perf_counter() - t0
    big = time_jaxcache(shell, args.rounds)
    stored = len(CACHE.records())
    rows = len(CACHE.functions())
    print(
        f"filled {args.records} cells in {fill_s:.2f} s "
        f"({fill_s / args.records * 1e6:.0f} µs per cell): "
        f"{stored} records stored, {rows} function rows"
    )
    print(f"%jaxcache at 100 records:        {small * 1e3:7.2f} ms")
    print(f"%jaxcache at {args.records:>6} records:     {big * 1e3:7.2f} ms  (target < 10 ms)")
    print(f"ratio: {big / small:.2f}")


if __name__ == "__main__":
    main()
