"""What a finishing jit trace was called with, read from the locals of pjit's frame.

Wraps the local variable names of JAX's ``pjit`` tracing frame (``fun``, ``avals`` /
``in_avals``, ``dbg``, ``ji`` / ``jit_info``, ``args``, ``kwargs``, ``avals_ft`` /
``args_ft`` / ``in_tree``, ``jaxpr``) and the abstract values' private text form
(``str_short``).  Turned into plain records here so the cache tracker never holds a
frame or JAX object beyond a weak reference to the function; :mod:`.stack` finds the
frame.
"""

from __future__ import annotations

import sys
from dataclasses import dataclass
from typing import Any

from workbench.engine._jax_compat.jit import is_jax_internal, runs_user_code


@dataclass(frozen=True)
class ArgType:
    """The abstract type of one traced argument leaf, as plain strings (no data held)."""

    path: str
    text: str  # e.g. "f32[3]"
    shape: tuple[int, ...]
    dtype: str
    weak: bool
    sharding: str  # "" when the aval carries no mesh sharding


@dataclass(frozen=True)
class JitTraceSite:
    """What a finishing jit trace was called with; ``fun`` must only be weakly kept.

    ``static_tokens`` say whether two static values are the same for JAX's cache (which
    compares them by hash and ``==``) without keeping the values: the hash where the
    value is hashable, else its ``id``.  ``tree`` is the pytree structure of the
    (args, kwargs) call; ``failed`` is True when the trace raised.
    """

    fun: Any
    args: tuple[ArgType, ...]
    statics: tuple[tuple[str, str], ...]  # (parameter name, repr of the value)
    internal: bool  # JAX's own helper (e.g. convert_element_type for an eager op)
    static_tokens: tuple[tuple[str, Any], ...] = ()
    tree: str = ""
    tree_hash: int = 0
    failed: bool = False
    eager_primitive: bool = False  # JAX's jit of one primitive for eager dispatch


def _aval_type(path: str, aval: Any) -> ArgType:
    shape = tuple(int(d) if isinstance(d, int) else -1 for d in getattr(aval, "shape", ()))
    try:
        text = aval.str_short(True)
    except Exception:
        text = str(aval)
    sharding = ""
    sh = getattr(aval, "sharding", None)
    mesh = getattr(sh, "mesh", None)
    if mesh is not None and not getattr(mesh, "empty", True):
        sharding = str(getattr(sh, "spec", sh))
    dtype = str(getattr(aval, "dtype", ""))
    return ArgType(path, text, shape, dtype, bool(getattr(aval, "weak_type", False)), sharding)


def _short_repr(value: Any, limit: int = 80) -> str:
    try:
        text = repr(value)
    except Exception:
        text = f"<{type(value).__name__}>"
    return text if len(text) <= limit else text[: limit - 1] + "…"


def _static_token(value: Any) -> Any:
    """Equal for two values JAX's cache treats as the same static argument (by hash)."""
    try:
        return ("hash", type(value).__qualname__, hash(value))
    except Exception:
        return ("id", id(value))


def _static_names(fun: Any, ji: Any, n_args: int) -> dict[int, str]:
    sig = getattr(ji, "fun_signature", None)
    if sig is None:
        try:
            import inspect as _inspect
            sig = _inspect.signature(fun)
        except Exception:
            sig = None
    names = list(sig.parameters) if sig is not None else []
    return {i: (names[i] if i < len(names) else f"args[{i}]") for i in range(n_args)}


def site_from_locals(loc: dict[str, Any]) -> JitTraceSite | None:
    """The call that pjit's trace frame (its locals ``loc``) describes; None when
    ``fun`` or the abstract values are not among them (a JAX that renamed them)."""
    fun = loc.get("fun")
    avals = loc.get("avals")
    if avals is None:
        avals = loc.get("in_avals")
    dbg = loc.get("dbg")
    ji = loc.get("ji") or loc.get("jit_info")
    if fun is None or avals is None:
        return None
    avals = tuple(avals)
    names = tuple(getattr(dbg, "arg_names", None) or ())
    if len(names) != len(avals):
        names = tuple(f"args[{i}]" for i in range(len(avals)))
    args = tuple(_aval_type(n, a) for n, a in zip(names, avals, strict=True))
    statics: list[tuple[str, str]] = []
    tokens: list[tuple[str, Any]] = []
    call_args = loc.get("args") or ()
    call_kwargs = loc.get("kwargs") or {}
    argnums = tuple(getattr(ji, "static_argnums", ()) or ())
    argnames = tuple(getattr(ji, "static_argnames", ()) or ())
    if argnums:
        labels = _static_names(fun, ji, len(call_args))
        for i in argnums:
            if 0 <= i < len(call_args):
                statics.append((labels[i], _short_repr(call_args[i])))
                tokens.append((labels[i], _static_token(call_args[i])))
    for name in argnames:
        if name in call_kwargs:
            statics.append((name, _short_repr(call_kwargs[name])))
            tokens.append((name, _static_token(call_kwargs[name])))
    tree_text, tree_hash = "", 0
    flat = loc.get("avals_ft") or loc.get("args_ft")
    tree = getattr(flat, "tree", None) if flat is not None else loc.get("in_tree")
    if tree is not None:
        try:
            full = str(tree)
            tree_hash = hash(full)
            tree_text = _short_repr_text(full.removeprefix("PyTreeDef(").removesuffix(")"))
        except Exception:
            tree_text, tree_hash = "", 0
    jaxpr = loc.get("jaxpr")
    # the trace event also fires when tracing raised: then no jaxpr was made
    failed = jaxpr is None and sys.exc_info()[1] is not None
    internal = is_jax_internal(fun) and not (jaxpr is not None and runs_user_code(jaxpr))
    return JitTraceSite(fun=fun, args=args, statics=tuple(statics), internal=internal,
                        static_tokens=tuple(tokens), tree=tree_text, tree_hash=tree_hash,
                        failed=failed,
                        eager_primitive=bool(getattr(fun, "_apply_primitive", False)))


def _short_repr_text(text: str, limit: int = 120) -> str:
    return text if len(text) <= limit else text[: limit - 1] + "…"
