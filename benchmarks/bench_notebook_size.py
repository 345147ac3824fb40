"""How big is a saved notebook cell?  ``%%hlo -t grad`` and ``%%jaxpr -t grad`` of the
24-block transformer, in both attention styles, as the user saves them.

Run by hand (not part of the test suite; about two minutes per style on a quiet CPU)::

    python benchmarks/bench_notebook_size.py [--styles einsum,matmul] [--blocks 24] [--json]

Subjects: the real models of ``tests/real_models.py``, the gradient with respect to the
params of ``transformer_loss_einsum`` and ``transformer_loss_matmul`` (24 blocks, d=256,
4 heads, batch 8 x 128 tokens).  Each cell runs in a real IPython ``InteractiveShell`` with
``%load_ext workbench``, exactly as typed in a notebook::

    %%hlo -t grad
    loss(params, x)

Everything the cell shows is measured: the result's bundle as IPython's display formatter
builds it (every MIME type: ``text/plain``, ``text/html`` and the workbench JSON) and any
display the cell printed under it (the compile line), each as an output of one code cell in
a notebook written by ``nbformat`` (text split into lines, JSON indented), in bytes of
UTF-8, less the same notebook with the cell's outputs empty.

Goals (issue 22): at most 1.0 MB for the ``%%hlo -t grad`` cell and at most 0.6 MB for the
``%%jaxpr -t grad`` cell, for both styles.  The exit status is 1 when one is over.

One run of this script (JAX 0.12.0.1, CPU, 2 shared cores), before the bound on
``text/plain`` (``workbench/views/_bounds.py``) and the slimmer payload, and after:

=========  ==================  ==================
style      ``%%hlo -t grad``   ``%%jaxpr -t grad``
=========  ==================  ==================
einsum     18.927 -> 0.620 MB  2.404 -> 0.460 MB
matmul     18.767 -> 0.614 MB  2.310 -> 0.454 MB
=========  ==================  ==================

Before, ``text/plain`` was XLA's whole text (17.2 MB, 112,015 lines for einsum) and the
jaxpr's ``text/html`` 1.8 MB; after, ``text/plain`` is its first lines (0.18 MB) and the
HLO JSON 0.39 MB packed (was 1.43 MB: the instruction rows of fused and applied bodies).
"""

from __future__ import annotations

import argparse
import gzip
import json
import os
import sys
import time
from pathlib import Path
from typing import Any

os.environ.setdefault("JAX_PLATFORMS", "cpu")
ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

#: the goals, bytes of the saved .ipynb per cell, everything included: since the text/html part
#: carries the standalone runtime (about 85 KB) and the output's data again (gzipped) for
#: front ends without the extension, the %%hlo goal is the 1.2 MB that change was held to
GOALS = {"hlo": 1_200_000, "jaxpr": 600_000}
STYLES = ("einsum", "matmul")


def _saved(outputs: list[Any]) -> int:
    import nbformat

    cell = nbformat.v4.new_code_cell("%%hlo -t grad\nloss(params, x)")
    cell.outputs.extend(outputs)
    return len(nbformat.writes(nbformat.v4.new_notebook(cells=[cell])).encode())


def stored_sizes(bundle: dict[str, Any]) -> dict[str, int]:
    """Bytes each MIME type of ``bundle`` adds to the saved .ipynb (``nbformat.writes``)."""
    import nbformat

    empty = _saved([])
    return {
        mime: _saved([nbformat.v4.new_output("display_data", data={mime: value})]) - empty
        for mime, value in bundle.items()
    }


def cell_size(bundle: dict[str, Any], displays: list[dict[str, Any]]) -> int:
    """Bytes the whole cell's outputs add: the result and every display printed with it."""
    import nbformat

    outputs = [nbformat.v4.new_output("display_data", data=d) for d in displays]
    outputs.append(nbformat.v4.new_output("execute_result", data=bundle, execution_count=1))
    return _saved(outputs) - _saved([])


def run_cell(shell: Any, code: str) -> tuple[dict[str, Any], list[dict[str, Any]], float]:
    """Run ``code`` as a notebook cell: the result's formatted bundle, the displays, seconds."""
    from IPython.utils.capture import capture_output

    t0 = time.perf_counter()
    with capture_output() as cap:
        res = shell.run_cell(code, store_history=True)
    seconds = time.perf_counter() - t0
    if res.error_in_exec or res.error_before_exec:
        raise RuntimeError(f"{code!r} failed: {res.error_in_exec or res.error_before_exec}")
    bundle, _ = shell.display_formatter.format(res.result)
    return bundle, [o.data for o in cap.outputs], seconds


def report(name: str, kind: str, bundle: dict[str, Any], displays: list[dict[str, Any]]) -> int:
    sizes = stored_sizes(bundle)
    total = cell_size(bundle, displays)
    print(f"\n{name}")
    for mime, n in sizes.items():
        extra = ""
        if mime.endswith("+json"):
            gz = len(gzip.compress(json.dumps(bundle[mime]).encode(), 6))
            extra = (
                f"  (gzip {gz / 1e3:,.0f} KB; {'packed' if 'packed' in bundle[mime] else 'plain'})"
            )
        print(f"  {mime:42s} {n / 1e6:8.3f} MB{extra}")
    shown = bundle.get("text/plain", "")
    print(f"  {'text/plain lines':42s} {shown.count(chr(10)) + 1:8,d}")
    goal = GOALS[kind]
    verdict = "within" if total <= goal else "OVER"
    print(
        f"  {'cell, everything included':42s} {total / 1e6:8.3f} MB: {verdict} the "
        f"{goal / 1e6:.1f} MB goal"
    )
    return total


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--styles", default=",".join(STYLES), help="einsum,matmul (default both)")
    ap.add_argument("--blocks", type=int, default=24, help="transformer blocks (default 24)")
    ap.add_argument("--json", action="store_true", help="print the sizes as JSON at the end")
    opts = ap.parse_args()

    from IPython.core.interactiveshell import InteractiveShell

    from tests import real_models

    shell = InteractiveShell.instance()
    shell.run_cell("%load_ext workbench", store_history=False)
    params, x = real_models.transformer_args(opts.blocks)
    shell.user_ns.update(params=params, x=x)
    results: dict[str, dict[str, int]] = {}
    over = False
    for style in opts.styles.split(","):
        shell.user_ns["loss"] = real_models.TRANSFORMER_LOSSES[style]
        results[style] = {}
        for kind in ("hlo", "jaxpr"):
            bundle, displays, seconds = run_cell(shell, f"%%{kind} -t grad\nloss(params, x)")
            label = f"{style}: %%{kind} -t grad, {opts.blocks} blocks ({seconds:.1f} s)"
            total = report(label, kind, bundle, displays)
            results[style][kind] = total
            over |= total > GOALS[kind]
    print("\nsummary (saved cell, everything included)")
    for style, sizes in results.items():
        for kind, total in sizes.items():
            print(
                f"  {style:7s} %%{kind:5s} -t grad  {total / 1e6:6.3f} MB  (goal "
                f"{GOALS[kind] / 1e6:.1f} MB){'  OVER' if total > GOALS[kind] else ''}"
            )
    if opts.json:
        print(json.dumps(results))
    return 1 if over else 0


if __name__ == "__main__":
    sys.exit(main())
