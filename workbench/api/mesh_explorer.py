"""``workbench.mesh_explorer()``: the mesh explorer (a Panel app) in a notebook."""

from __future__ import annotations

from typing import Any


def mesh_explorer(namespace: dict[str, Any] | None = None, **config: Any) -> Any:
    """The interactive mesh explorer (a Panel app) for this notebook.

    ``namespace`` (default: the IPython user namespace) supplies the functions the
    "function" operation can compile; ``config`` sets the starting controls, e.g.
    ``mesh_shape="2, 4"``, ``spec="data, None"``, ``operation="matmul"``; ``fake_devices=N``
    asks for N CPU devices (only possible before JAX has started; otherwise the app says how).

    In JupyterLab and Notebook 7 the page loads BokehJS, Panel and their stylesheets from the
    Jupyter server (Panel's server extension), not from a CDN: the cell works without
    internet access and the saved notebook stays small (about 95 KB of output, where
    ``pn.extension(inline=True)`` saves megabytes).  ``jax-workbench doctor`` says whether
    that server extension is enabled.
    """
    from workbench.apps.mesh_explorer import mesh_explorer as _explorer  # Panel loads lazily

    return _explorer(namespace=namespace, **config)
