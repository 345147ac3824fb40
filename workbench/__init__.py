"""jax-workbench: see what ``jit``, ``grad``, ``vmap`` and sharding do to your JAX program.

In a notebook::

    %load_ext workbench

    %%jaxpr -t grad
    def loss(w, x):
        return jnp.sum(jnp.tanh(x @ w) ** 2)
    loss(jnp.ones((4, 4)), jnp.ones((2, 4)))

From Python: :func:`inspect` returns the engine's :class:`Inspection` (jaxpr,
StableHLO, optimized HLO, cost and memory analyses, stage timings), and
:func:`jaxpr`, :func:`hlo`, :func:`bench`, :func:`sharding`, :func:`cache` are the
twins of the magics (:func:`cache` returns the records ``%jaxcache`` shows);
``with no_recompiles():`` fails a block that compiles a function again.  The
package is layered: ``engine`` (talks to JAX) -> ``views`` (records to MIME bundles)
-> front doors (``api``, ``ipython``, ``apps``).
"""

from __future__ import annotations

from importlib import metadata
from typing import Any

from workbench.api.bench import bench
from workbench.api.cluster import cluster
from workbench.api.config import config
from workbench.api.guard import RecompileError, no_recompiles
from workbench.api.hlo import hlo
from workbench.api.inspection import inspect
from workbench.api.jaxpr import jaxpr
from workbench.api.memory import memory
from workbench.api.mesh_explorer import mesh_explorer
from workbench.api.profile import profile, profile_from_trace
from workbench.api.sharding import sharding
from workbench.engine import Inspection, TransformSpec, inspect_chain
from workbench.engine.cache import CacheSnapshot, CompileRecord, cache, capture_compiles
from workbench.engine.common.devices import fake_devices


def _version() -> str:
    """The installed distribution's version, which the build takes from
    ``extension/package.json`` (hatch-nodejs-version): one version for the Python package and
    the JupyterLab extension, written in one place.  A checkout imported without being
    installed (``PYTHONPATH``) reads that file itself."""
    try:
        return metadata.version("jax-workbench")
    except metadata.PackageNotFoundError:
        import json
        from pathlib import Path

        package = Path(__file__).resolve().parent.parent / "extension" / "package.json"
        try:
            return str(json.loads(package.read_text(encoding="utf-8"))["version"])
        except (OSError, ValueError, KeyError):
            return "0+unknown"


__version__ = _version()


def _jupyter_labextension_paths() -> list[dict[str, str]]:
    """Where the built JupyterLab extension is (``workbench/labextension``, written by
    ``cd extension && npm run build``) and its name: what ``jupyter labextension develop
    --overwrite .`` links into JupyterLab's labextensions directory."""
    return [{"src": "labextension", "dest": "jax-workbench"}]


def load_ipython_extension(ipython: Any) -> None:
    """``%load_ext workbench``: register the magics and the cache feature's cell hooks, and
    bind the name ``workbench`` when the notebook has none.

    The README and the tutorials call ``workbench.mesh_explorer()``, ``workbench.cache()``
    ... right after ``%load_ext workbench``: a NameError there until ``import workbench``
    surprises everyone.  The name is pushed as IPython pushes its own (hidden from
    ``%who``), and never over a name the user already has: their ``workbench`` stays theirs.
    ``%unload_ext`` leaves it (a module reference; the user may have imported it too).
    """
    import sys

    from workbench.ipython import load

    load(ipython)
    user_ns = getattr(ipython, "user_ns", None)
    if isinstance(user_ns, dict) and "workbench" not in user_ns:
        ipython.push({"workbench": sys.modules[__name__]}, interactive=False)


def unload_ipython_extension(ipython: Any) -> None:
    """``%unload_ext workbench``: remove what ``load_ipython_extension`` installed."""
    from workbench.ipython import unload

    unload(ipython)


__all__ = [
    "CacheSnapshot",
    "CompileRecord",
    "Inspection",
    "RecompileError",
    "TransformSpec",
    "__version__",
    "bench",
    "cache",
    "capture_compiles",
    "cluster",
    "config",
    "fake_devices",
    "hlo",
    "inspect",
    "inspect_chain",
    "jaxpr",
    "load_ipython_extension",
    "memory",
    "mesh_explorer",
    "no_recompiles",
    "profile",
    "profile_from_trace",
    "sharding",
    "unload_ipython_extension",
]
