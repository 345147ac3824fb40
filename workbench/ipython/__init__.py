"""The IPython front door: ``%load_ext workbench`` installs the magics and the cell hooks.

One module per magic family (``jaxpr_magics``, ``hlo_magics``, ``bench_magics``,
``sharding_magics``, ``cache_magics``), the cell semantics they share (``cell``), their
flag parsing (``args``) and the live benchmark widget.  :func:`load` and :func:`unload`
are the only places that touch the shell's registries, so ``%unload_ext`` undoes
exactly what ``%load_ext`` did.
"""

from __future__ import annotations

from typing import Any, cast

from workbench.engine.jaxpr.inspection import Inspection
from workbench.ipython import cache_magics
from workbench.ipython.bench_magics import BenchMagics
from workbench.ipython.hlo_magics import HloMagics
from workbench.ipython.jaxpr_magics import JaxprMagics
from workbench.ipython.sharding_magics import ShardingMagics
from workbench.views.display import Display
from workbench.views.jaxpr import JAXPR_VIEW

_MAGIC_CLASSES = (JaxprMagics, HloMagics, BenchMagics, ShardingMagics)


def _inspection_bundle(ins: Inspection, include: Any = None, exclude: Any = None) -> Any:
    return Display(ins, JAXPR_VIEW)._repr_mimebundle_(include, exclude)


def load(shell: Any) -> None:
    """Register the magics, the Inspection display and the cache feature's cell hooks."""
    for cls in _MAGIC_CLASSES:
        shell.register_magics(cls)
    shell.display_formatter.mimebundle_formatter.for_type(Inspection, _inspection_bundle)
    cache_magics.load(shell)


def unload(shell: Any) -> None:
    """Remove what :func:`load` installed."""
    magics = shell.magics_manager.magics
    for cls in _MAGIC_CLASSES:
        # IPython declares ``Magics.magics = None``; @magics_class fills in {kind: {name: ...}}
        table = cast(dict[str, dict[str, Any]], cls.magics)
        for kind in ("line", "cell"):
            for name in table[kind]:
                magics[kind].pop(name, None)
    shell.display_formatter.mimebundle_formatter.type_printers.pop(Inspection, None)
    cache_magics.unload(shell)


__all__ = ["load", "unload"]
