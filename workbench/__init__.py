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

from .engine import Inspection, TransformSpec, inspect, inspect_chain, inspect_stages

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


def _inspection_bundle(ins: Inspection, include: Any = None, exclude: Any = None) -> Any:
    from .views.jaxpr_view import jaxpr_bundle

    return jaxpr_bundle(ins)


def load_ipython_extension(ipython: Any) -> None:
    """``%load_ext workbench``: register the magics and the Inspection display."""
    from .magics import JaxprMagics

    ipython.register_magics(JaxprMagics)
    formatter = ipython.display_formatter.mimebundle_formatter
    formatter.for_type(Inspection, _inspection_bundle)


def unload_ipython_extension(ipython: Any) -> None:
    """``%unload_ext workbench``: remove what ``load_ipython_extension`` installed."""
    from .magics import JaxprMagics

    magics = ipython.magics_manager.magics
    for kind in ("line", "cell"):
        for name in JaxprMagics.magics[kind]:
            magics[kind].pop(name, None)
    formatter = ipython.display_formatter.mimebundle_formatter
    formatter.type_printers.pop(Inspection, None)


__all__ = ["Inspection", "TransformSpec", "__version__", "inspect", "inspect_chain", "jaxpr",
           "load_ipython_extension", "unload_ipython_extension"]
