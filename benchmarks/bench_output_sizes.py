"""Bytes each output kind adds to a saved notebook, per ``workbench.config(html=...)`` mode:
the README's "Where it renders" table.

Run by hand (not part of the test suite; about a minute on a quiet CPU)::

    python benchmarks/bench_output_sizes.py

One small example of each kind runs as a notebook cell in a real IPython
``InteractiveShell`` with ``%load_ext workbench`` (8 fake CPU devices, as the tests); its
whole cell (the result's bundle and every display printed with it, the compile line
included) is saved with ``nbformat`` the way ``benchmarks/bench_notebook_size.py`` measures
(:func:`cell_size`), once per mode:

- ``embed``: the runtime in the output (``"auto"`` where no extension listens: VS Code, Colab);
- ``auto, after the first``: ``"auto"`` while the extension's comm listens, an output after
  the one that carried the runtime (data and loader, no runtime);
- ``static``: the summary only.

Also printed: the runtime's base64 bytes and each output's static summary (the ``text/html``
part before its scripts, :data:`workbench.views._html.SUMMARY_MAX_BYTES` at most).
"""

from __future__ import annotations

import os
import sys
from pathlib import Path
from typing import Any

os.environ.setdefault("JAX_PLATFORMS", "cpu")
os.environ.setdefault("XLA_FLAGS", "--xla_force_host_platform_device_count=8")
ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from benchmarks.bench_notebook_size import cell_size, run_cell  # noqa: E402

SETUP = (
    "import jax, jax.numpy as jnp\n"
    "from jax.sharding import Mesh, NamedSharding, PartitionSpec as P\n"
    "def loss(w, x):\n    return jnp.sum(jnp.tanh(x @ w) ** 2)\n"
    "w, x = jnp.ones((4, 4)), jnp.ones((2, 4))\n"
    "mesh = jax.make_mesh((4, 2), ('data', 'model'))\n"
    "xs = jax.device_put(jnp.ones((64, 32)), NamedSharding(mesh, P('data', 'model')))\n"
)

#: (label, cell): one small example of each kind
CELLS = [
    ("`%%jaxpr -t grad` (the README's first example)", "%%jaxpr -t grad\nloss(w, x)"),
    # early, while the kernel has compiled one function (its table grows with the session)
    ("`%jaxcache`", "%jaxcache"),
    ("`%jaxpr --compare`", "%jaxpr --compare -t grad loss(w, x)"),
    ("`%hlo -t grad`", "%hlo -t grad loss(w, x)"),
    ("`%jaxbench`", "%jaxbench -n 1 -r 6 loss(w, x)"),
    ("`%sharding`", "%sharding xs"),
    ("`%%jaxprof`", "%%jaxprof -n 2\nloss(w, x)"),
    ("`%%jaxprof --compile`", "%%jaxprof --compile\nloss(w, x)"),
    ("`%jaxmem`", "%jaxmem"),
    ("`%%jaxmem -t grad`", "%%jaxmem -t grad\nloss(w, x)"),
]


def _measure(shell: Any, code: str) -> dict[str, int]:
    from workbench.views import _standalone as sa

    out = {}
    for mode in ("embed", "auto", "static"):
        sa.set_html_mode(mode)
        sa.note_extension_listening(mode == "auto")
        if mode == "auto":
            sa._runtime_sent = True  # an earlier output of the notebook carried it
        bundle, displays, _ = run_cell(shell, code)
        out[mode] = cell_size(bundle, displays)
        if mode == "static":
            out["summary"] = len(sa.static_part(bundle.get("text/html", "")).encode())
        sa.note_extension_listening(False)
    sa.set_html_mode("auto")
    return out


def _explorer() -> dict[str, int]:
    """The mesh explorer's picture (its own output, above the Panel app), as displayed."""
    from benchmarks.bench_notebook_size import _saved
    from workbench.engine.sharding.mesh_explorer import ExplorerConfig, explore
    from workbench.views import _standalone as sa
    from workbench.views.mesh_explorer import explorer_bundle

    res = explore(
        ExplorerConfig(
            operation="matmul", shape="64, 64", spec="data, model", rhs_spec="model, None"
        )
    )
    import nbformat

    out = {}
    for mode in ("embed", "auto", "static"):
        sa.set_html_mode(mode)
        sa.note_extension_listening(mode == "auto")
        if mode == "auto":
            sa._runtime_sent = True
        bundle = explorer_bundle(res)
        out[mode] = _saved([nbformat.v4.new_output("display_data", data=bundle)]) - _saved([])
        if mode == "static":
            out["summary"] = len(sa.static_part(bundle.get("text/html", "")).encode())
        sa.note_extension_listening(False)
    sa.set_html_mode("auto")
    return out


def main() -> int:
    from IPython.core.interactiveshell import InteractiveShell

    from workbench.views import _standalone as sa

    shell = InteractiveShell.instance()
    shell.run_cell("%load_ext workbench", store_history=False)
    shell.run_cell(SETUP, store_history=False)
    print(f"runtime: {len(sa.runtime_base64()) / 1e3:.1f} KB in base64")
    print("| output (small example) | embed | auto, after the first | static | summary |")
    print("|---|---:|---:|---:|---:|")
    rows = [(label, _measure(shell, code)) for label, code in CELLS]
    rows.append(("mesh explorer's picture", _explorer()))
    for label, r in rows:
        print(
            f"| {label} | {r['embed'] / 1e3:.1f} KB | {r['auto'] / 1e3:.1f} KB | "
            f"{r['static'] / 1e3:.1f} KB | {r['summary'] / 1e3:.1f} KB |",
            flush=True,
        )
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
