"""JAX's jaxpr types: which objects are jaxprs, closed or open, literals, dropped outputs.

Wraps ``Jaxpr``, ``ClosedJaxpr``, ``Literal`` and ``DropVar`` of ``jax.extend.core``
(or ``jax._src.core``).  JAX 0.11 merged ``ClosedJaxpr`` into ``Jaxpr`` (one type that
holds both the equations and the constants), so the builders never test these types
themselves: they ask the predicates below, which answer for both shapes.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from workbench.engine._jax_compat._modules import core_attr

ClosedJaxpr: Any = core_attr("ClosedJaxpr")
Jaxpr: Any = core_attr("Jaxpr")
Literal: Any = core_attr("Literal")
DropVar: Any = core_attr("DropVar")


#: True on JAX >= 0.11, where ``ClosedJaxpr`` is an alias of ``Jaxpr``: one type holds
#: the equations and the constant values (``.consts``; ``.jaxpr`` returns the object
#: itself).  Before, a ``ClosedJaxpr`` wrapped a ``Jaxpr`` (``.jaxpr``) plus ``.consts``.
#: Also true if a later JAX drops the alias but keeps ``consts`` on ``Jaxpr``.
JAXPR_TYPES_MERGED: bool = Jaxpr is not None and (
    ClosedJaxpr is Jaxpr or (ClosedJaxpr is None and hasattr(Jaxpr, "consts"))
)

_JAXPR_TYPES: tuple[type, ...] = tuple(
    t for t in dict.fromkeys((Jaxpr, ClosedJaxpr)) if isinstance(t, type)
)
_CLOSED_TYPES: tuple[type, ...] = (
    (Jaxpr,) if JAXPR_TYPES_MERGED else (ClosedJaxpr,) if isinstance(ClosedJaxpr, type) else ()
)


def is_jaxpr(obj: Any) -> bool:
    """A jaxpr of either shape (closed or open, merged type or not): what a builder
    walking equation params should descend into."""
    return isinstance(obj, _JAXPR_TYPES)


def is_closed_jaxpr(obj: Any) -> bool:
    """``obj`` carries its constant values (``.consts``) beside its equations.

    Every jaxpr on a merged-type JAX; only a ``ClosedJaxpr`` before that.
    """
    return isinstance(obj, _CLOSED_TYPES)


def is_open_jaxpr(obj: Any) -> bool:
    """``obj`` is the type that holds the equations (``Jaxpr``); on a merged-type JAX
    that is every jaxpr, closed or not."""
    return Jaxpr is not None and isinstance(obj, Jaxpr)


def open_jaxpr(obj: Any) -> Any:
    """The object whose ``constvars``/``invars``/``eqns``/``outvars`` describe ``obj``.

    The inner ``Jaxpr`` of a (pre-0.11) ``ClosedJaxpr``; the jaxpr itself otherwise
    (including on 0.11, whose legacy ``.jaxpr`` returns ``self`` and may go away).
    """
    if is_open_jaxpr(obj):
        return obj
    inner = getattr(obj, "jaxpr", None)
    return inner if is_open_jaxpr(inner) else obj


def jaxpr_consts(obj: Any) -> list[Any]:
    """The constant values bound to a jaxpr's ``constvars`` ([] for an open one)."""
    if not is_closed_jaxpr(obj):
        return []
    return list(getattr(obj, "consts", None) or ())


def is_literal(atom: Any) -> bool:
    if Literal is not None:
        return isinstance(atom, Literal)
    return type(atom).__name__ == "Literal"


def is_dropvar(var: Any) -> bool:
    if DropVar is not None:
        return isinstance(var, DropVar)
    return type(var).__name__ == "DropVar"


def literal_text(atom: Any) -> str:
    """A literal as JAX's jaxpr printer writes it (``1.100000023841858``, ``0``): the
    printer shows the scalar's Python value, not the numpy scalar's shorter ``str``
    (``1.1``) nor a typed wrapper's repr (``TypedInt(0, dtype=int32)``)."""
    pretty = getattr(atom, "pretty_print", None)
    if pretty is not None:
        try:
            return str(pretty(None, print_dtype=False))
        except Exception:  # another JAX's signature: compute it as JAX 0.10 does
            pass
    val = getattr(atom, "val", atom)
    try:
        return str(np.asarray(val).item()) if not np.shape(val) else "[...]"
    except Exception:
        return str(val)


def traced_function_name(value: Any) -> str | None:
    """The user's function behind a ``WrappedFun`` param (a custom_jvp rule, say), named
    as JAX's printer names it (``jvp=<lambda>``); None for any other value."""
    try:  # any param object: its attribute lookup may raise anything (a lazy proxy)
        if not hasattr(value, "call_wrapped"):
            return None
        debug = getattr(value, "debug_info", None)
        src = getattr(debug, "func_src_info", None)
        name = getattr(debug, "func_name", None)
    except Exception:
        return None
    if not isinstance(src, str):
        return None
    # JAX's printer writes ``debug_info.func_name``: the source info's first word
    if not isinstance(name, str):
        name = src.split(" ", 1)[0]
    return name or None
