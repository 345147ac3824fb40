"""How big is a saved notebook output?  Bytes per MIME type of two big bundles.

Run by hand (not part of the test suite)::

    python benchmarks/bench_notebook_size.py [--json]

Subjects (the programs of ``bench_jaxpr.py``):

- ``%%hlo`` of the gradient of the 24-layer transformer stack
  (``workbench.hlo(jax.grad(loss), params, x)``), budget: all MIME types together at
  most 1.5 MB (issue 12);
- ``%%jaxpr`` of the gradient of the same stack grown to about 12,000 equations
  (``bench_jaxpr.LAYERS`` raised: same layer, more of them).

Each bundle is built as a kernel builds it (``_repr_mimebundle_``) and measured as the
notebook file stores it: what each MIME type adds to a notebook written by ``nbformat``
(text split into lines, JSON indented), in bytes of UTF-8.  (A ``json.dumps`` of each value
undercounts: 1.29 MB against the 1.43 MB really saved for the 24-layer ``%%hlo``.)  The gzip size of each
JSON payload is printed too (what ``packed`` buys).

Baseline (before issue 12, measured with this script's method on the same machine):
24-layer ``%%hlo``: text/plain 0.98 MB, text/html 3.26 MB, JSON 1.79 MB (gzip 114 KB),
6.03 MB in all.
"""

from __future__ import annotations

import argparse
import gzip
import json
import os
import sys
from pathlib import Path

os.environ.setdefault("JAX_PLATFORMS", "cpu")
sys.path.insert(0, str(Path(__file__).resolve().parent))

import bench_jaxpr  # noqa: E402
import jax  # noqa: E402
from bench_jaxpr import init_params, make_loss  # noqa: E402

import workbench  # noqa: E402

BUDGET = 1_500_000
BASELINE_HLO = {
    "text/plain": 1_005_000,
    "text/html": 3_433_000,
    "application/vnd.jax-workbench.hlo+json": 1_956_000,
}


def stored_sizes(bundle: dict) -> dict[str, int]:
    """Bytes each MIME type adds to the saved .ipynb (``nbformat.writes``, UTF-8)."""
    import nbformat

    def saved(data: dict) -> int:
        cell = nbformat.v4.new_code_cell("%%hlo")
        cell.outputs.append(nbformat.v4.new_output("display_data", data=data))
        return len(nbformat.writes(nbformat.v4.new_notebook(cells=[cell])).encode())

    empty = saved({})
    return {mime: saved({mime: value}) - empty for mime, value in bundle.items()}


def report(name: str, bundle: dict, baseline: dict[str, int] | None) -> dict[str, int]:
    sizes = stored_sizes(bundle)
    total = sum(sizes.values())
    print(f"\n{name}")
    for mime, n in sizes.items():
        extra = ""
        if mime.endswith("+json"):
            gz = len(gzip.compress(json.dumps(bundle[mime]).encode(), 6))
            packed = "packed" in bundle[mime]
            extra = f"  (gzip {gz / 1e3:,.0f} KB; {'packed' if packed else 'plain'})"
        base = f"  was {baseline[mime] / 1e6:.2f} MB" if baseline and mime in baseline else ""
        print(f"  {mime:42s} {n / 1e6:8.3f} MB{base}{extra}")
    verdict = "within" if total <= BUDGET else "OVER"
    base_total = f" (was {sum(baseline.values()) / 1e6:.2f} MB)" if baseline else ""
    print(
        f"  {'total':42s} {total / 1e6:8.3f} MB{base_total}: {verdict} the "
        f"{BUDGET / 1e6:.1f} MB budget"
    )
    return sizes


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument(
        "--layers-jaxpr",
        type=int,
        default=125,
        help="layers of the big jaxpr (125: about 12,000 equations)",
    )
    ap.add_argument("--json", action="store_true", help="print the sizes as JSON at the end")
    opts = ap.parse_args()

    params, x = init_params()
    hlo = workbench.hlo(jax.grad(make_loss()), params, x)
    hlo_sizes = report(
        "24-layer %%hlo (gradient of the transformer stack)", hlo._repr_mimebundle_(), BASELINE_HLO
    )

    bench_jaxpr.LAYERS = opts.layers_jaxpr
    big_params, big_x = init_params()
    jx = workbench.jaxpr(jax.grad(make_loss()), big_params, big_x)
    eqns = jx.inspection.model.total_equations
    jaxpr_sizes = report(
        f"{opts.layers_jaxpr}-layer %%jaxpr ({eqns:,} equations)", jx._repr_mimebundle_(), None
    )
    if opts.json:
        print(json.dumps({"hlo": hlo_sizes, "jaxpr": jaxpr_sizes, "jaxpr_equations": eqns}))
    return 0 if sum(hlo_sizes.values()) <= BUDGET else 1


if __name__ == "__main__":
    sys.exit(main())
