"""jax-workbench: see what ``jit``, ``grad``, ``vmap`` and sharding do to your JAX program.

In a notebook::

    %load_ext workbench

    %%jaxpr -t grad
    def loss(w, x):
        return jnp.sum(jnp.tanh(x @ w) ** 2)
    loss(jnp.ones((4, 4)), jnp.ones((2, 4)))

From Python: :func:`inspect` returns the engine's :class:`Inspection` (jaxpr,
StableHLO, optimized HLO, cost and memory analyses, stage timings), and
:func:`jaxpr` returns a displayable jaxpr view of the same call.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

from .bench_api import bench
from .engine import Inspection, TransformSpec, inspect, inspect_chain, inspect_stages
from .engine.ledger import CompileRecord, capture_compiles, ledger
from .sharding_magics import sharding

__version__ = "0.1.0"


def jaxpr(
    fn: Callable[..., Any],
    *args: Any,
    transforms: Sequence[str | TransformSpec] | str | None = (),
    static_argnums: int | Sequence[int] = (),
    static_argnames: str | Sequence[str] = (),
    compare: bool = False,
    depth: int = 1,
    text: bool = False,
    **kwargs: Any,
) -> Any:
    """The jaxpr of ``fn(*args, **kwargs)`` under ``transforms``, as a displayable object.

    The Python twin of ``%jaxpr``: same flags, same display (HTML in notebooks,
    JAX's own text in a terminal).
    """
    from .views.jaxpr_view import JaxprDisplay

    stages = inspect_stages(fn, args, kwargs, transforms, static_argnums, static_argnames,
                            compare=compare)
    return JaxprDisplay(stages, compare=compare, depth=depth, text_only=text)


def hlo(
    fn: Callable[..., Any],
    *args: Any,
    stage: str = "compiled",
    fusion: bool | None = None,
    text: bool = False,
    backend: str | None = None,
    transforms: Sequence[str | TransformSpec] | str | None = (),
    static_argnums: int | Sequence[int] = (),
    static_argnames: str | Sequence[str] = (),
    **kwargs: Any,
) -> Any:
    """What XLA made of ``fn(*args, **kwargs)``, as a displayable object.

    The Python twin of ``%hlo``: ``stage="compiled"`` (optimized HLO, with the fusion
    diagram unless ``fusion=False``) or ``"lowered"`` (StableHLO); ``backend`` picks a
    backend other than the default.  ``.report`` is the engine's record.
    """
    from .engine.hlo_report import build_hlo_report
    from .engine.inspection import resolve_backend
    from .views.hlo_view import HloDisplay

    if backend is not None:
        backend = resolve_backend(backend)
    (ins,) = inspect_stages(fn, args, kwargs, transforms, static_argnums, static_argnames,
                            backend=backend)
    use_fusion = stage == "compiled" if fusion is None else fusion
    return HloDisplay(build_hlo_report(ins, stage, fusion=use_fusion), text_only=text)


def mesh_explorer(namespace: dict[str, Any] | None = None, **config: Any) -> Any:
    """The interactive mesh explorer (a Panel app) for this notebook.

    ``namespace`` (default: the IPython user namespace) supplies the functions the
    "function" operation can compile; ``config`` sets the starting controls, e.g.
    ``mesh_shape="2, 4"``, ``spec="data, None"``, ``operation="matmul"``; ``fake_devices=N``
    asks for N CPU devices (only possible before JAX has started; otherwise the app says how).
    """
    from .mesh_app import mesh_explorer as _explorer

    return _explorer(namespace=namespace, **config)


def _inspection_bundle(ins: Inspection, include: Any = None, exclude: Any = None) -> Any:
    from .views.jaxpr_view import jaxpr_bundle

    return jaxpr_bundle(ins)


def load_ipython_extension(ipython: Any) -> None:
    """``%load_ext workbench``: register the magics and the Inspection display."""
    from .magics import HloMagics, JaxprMagics

    ipython.register_magics(JaxprMagics)
    ipython.register_magics(HloMagics)
    from .bench_magics import BenchMagics

    ipython.register_magics(BenchMagics)
    from .sharding_magics import ShardingMagics

    ipython.register_magics(ShardingMagics)
    formatter = ipython.display_formatter.mimebundle_formatter
    formatter.for_type(Inspection, _inspection_bundle)
    from . import observatory  # the compile ledger's cell line, %jaxcache, %workbench

    observatory.load(ipython)


def unload_ipython_extension(ipython: Any) -> None:
    """``%unload_ext workbench``: remove what ``load_ipython_extension`` installed."""
    from .magics import HloMagics, JaxprMagics

    magics = ipython.magics_manager.magics
    for kind in ("line", "cell"):
        for cls in (JaxprMagics, HloMagics):
            for name in cls.magics[kind]:
                magics[kind].pop(name, None)
    from .bench_magics import BenchMagics

    for kind in ("line", "cell"):
        for name in BenchMagics.magics[kind]:
            magics[kind].pop(name, None)
    from .sharding_magics import ShardingMagics

    for kind in ("line", "cell"):
        for name in ShardingMagics.magics[kind]:
            magics[kind].pop(name, None)
    formatter = ipython.display_formatter.mimebundle_formatter
    formatter.type_printers.pop(Inspection, None)
    from . import observatory

    observatory.unload(ipython)


__all__ = ["Inspection", "TransformSpec", "__version__", "hlo", "inspect", "inspect_chain", "jaxpr",
           "load_ipython_extension", "unload_ipython_extension",
           "CompileRecord", "capture_compiles", "ledger", "bench", "sharding", "mesh_explorer"]
