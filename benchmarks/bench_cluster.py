"""How long ``workbench.cluster(n=4)`` takes to start, and ``%jaxcluster`` to answer.

Run by hand (not part of the test suite)::

    python benchmarks/bench_cluster.py [--n 4] [--devices 2] [--records 1000] [--repeat 5]

What is measured
----------------
*start-up*: ``workbench.cluster(n=N, devices_per_process=D)`` from the call to its return,
in a real IPython ``InteractiveShell`` with the workbench loaded: ipyparallel's controller
and N engines on 127.0.0.1, each engine made a JAX process (``jax.distributed.initialize``
over loopback, gloo collectives) and the workbench loaded there.  ``rc.startup_s`` is the
part before the workbench is loaded in the engines.

*%jaxcluster*: with ``--records`` compile records in every process's ledger, the magic's
whole cell (gather each process's snapshot through ipyparallel, compare, draw text/plain,
text/html and the JSON payload) timed ``--repeat`` times; the median is reported.  The
records are one real compile per process (its signature, shardings and fingerprint)
repeated under ``--records`` function names, with the last function compiled for another
shape in the last process, so the report has one divergence to say.

*stop*: ``rc.stop()`` until every process it started (engines, nannies, controller) is gone.

Memory: each process's resident set as ``%jaxcluster`` reports it.
"""

from __future__ import annotations

import argparse
import statistics
import time

from IPython.core.interactiveshell import InteractiveShell
from IPython.utils.capture import capture_output

FILL = """
import jax, jax.numpy as jnp
from dataclasses import replace
from workbench.engine.cluster.agent import AGENT
f = jax.jit(lambda x: jnp.tanh(x) * 2.0)
f(jnp.ones(128))
real = [c for c in AGENT.compiles][-1]
AGENT.compiles.clear()
last = jax.process_index() == jax.process_count() - 1
for i in range({records}):
    sig = "f32[256]" if (last and i == {records} - 1) else real.signature
    AGENT.compiles.append(replace(real, function=f"jit(f{{i}})", signature=sig, seq=i + 1))
"""


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--n", type=int, default=4)
    ap.add_argument("--devices", type=int, default=2)
    ap.add_argument("--records", type=int, default=1000)
    ap.add_argument("--repeat", type=int, default=5)
    args = ap.parse_args()

    shell = InteractiveShell.instance()
    shell.run_cell("%load_ext workbench", store_history=False)
    t0 = time.perf_counter()
    with capture_output():
        res = shell.run_cell(
            f"rc = workbench.cluster(n={args.n}, devices_per_process={args.devices})",
            store_history=False,
        )
    startup = time.perf_counter() - t0
    if res.error_in_exec is not None:
        raise res.error_in_exec
    rc = shell.user_ns["rc"]
    try:
        rc[:].execute(FILL.format(records=args.records), block=True)
        times = []
        for _ in range(args.repeat):
            t = time.perf_counter()
            with capture_output():
                out = shell.run_cell("%jaxcluster", store_history=False)
            times.append(time.perf_counter() - t)
            if out.error_in_exec is not None:
                raise out.error_in_exec
        rep = rc.report()
        bundle, _ = shell.display_formatter.format(out.result)
        text = bundle.get("text/plain", "")
    finally:
        t = time.perf_counter()
        rc.stop()
        stop = time.perf_counter() - t
    print(f"workbench.cluster(n={args.n}, devices_per_process={args.devices}): {startup:.1f} s")
    print(f"  engines + jax.distributed: {rc.startup_s:.1f} s; workbench loaded in the rest")
    print(
        f"%jaxcluster, {args.n} processes x {args.records} ledger records: "
        f"median {statistics.median(times) * 1e3:.0f} ms of {args.repeat} "
        f"(min {min(times) * 1e3:.0f} ms, max {max(times) * 1e3:.0f} ms); "
        f"gather {rep.gather_s * 1e3:.0f} ms"
    )
    print(
        f"  {len(rep.rows)} rows, {len(rep.divergences)} divergence(s): {rep.divergences[0].text}"
    )
    print(f"  text/plain: {len(text.splitlines())} lines")
    mem = ", ".join(f"{(p.rss_bytes or 0) / 2**20:.0f} MiB" for p in rep.processes)
    print(f"  resident memory per process: {mem}")
    print(f"rc.stop(): {stop:.1f} s, nothing left running: {not rc.handle.running()}")


if __name__ == "__main__":
    main()
