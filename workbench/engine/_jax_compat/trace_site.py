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
import types
from dataclasses import dataclass
from typing import Any

from workbench.engine._jax_compat.equinox_jit import filter_jit_arg_names
from workbench.engine._jax_compat.jit import (
    is_jax_internal,
    is_jitted,
    jit_settings,
    jitted_inner,
    runs_user_code,
)


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
    #: static parameter name -> "positional" | "keyword": how it was passed (JAX's key
    #: holds positional statics in the argument tuple and keyword ones by name)
    static_passing: tuple[tuple[str, str], ...] = ()
    #: static parameter name -> repr of its default, for static parameters not passed
    static_defaults: tuple[tuple[str, str], ...] = ()
    #: the user's function's name and the record's label when JAX's traced function is
    #: a wrapper of its own around it (``jax.pmap``: "pm", "pmap(pm)"); else None
    user_name: str | None = None
    label: str | None = None
    #: ``id`` of the jaxpr the trace made (0 when none): JAX's trace cache hands this same
    #: object to a later lowering, which is how that lowering is matched to this trace
    jaxpr_id: int = 0
    #: what made the jit when JAX did, not the user ("make_jaxpr", "eval_shape"): the
    #: record is then named for that call (``make_jaxpr(sum)``), never ``jit(sum)``
    maker: str | None = None


def aval_text(aval: Any) -> str:
    """An abstract value's short text (``f32[3]``), the one form both the trace site and
    a lowering's input types use, so the two can be compared."""
    try:
        return str(aval.str_short(True))
    except Exception:
        return str(aval)


def aval_type(path: str, aval: Any) -> ArgType:
    """One argument's type as a signature records it (shape, dtype, sharding)."""
    shape = tuple(int(d) if isinstance(d, int) else -1 for d in getattr(aval, "shape", ()))
    text = aval_text(aval)
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


def _signature(fun: Any, ji: Any) -> Any:
    sig = getattr(ji, "fun_signature", None)
    if sig is None:
        try:
            import inspect as _inspect

            sig = _inspect.signature(fun)
        except Exception:
            sig = None
    return sig


def _static_names(fun: Any, ji: Any, n_args: int) -> dict[int, str]:
    sig = _signature(fun, ji)
    names = list(sig.parameters) if sig is not None else []
    return {i: (names[i] if i < len(names) else f"args[{i}]") for i in range(n_args)}


def _defaults(fun: Any, ji: Any, names: tuple[str, ...]) -> tuple[tuple[str, str], ...]:
    """repr of the default of each named parameter that has one."""
    sig = _signature(fun, ji)
    if sig is None or not names:
        return ()
    out = []
    for name in names:
        param = sig.parameters.get(name)
        if param is not None and param.default is not param.empty:
            out.append((name, _short_repr(param.default)))
    return tuple(out)


def pmap_user_function(fun: Any) -> tuple[Any, Any] | None:
    """(the user's function, its JAX debug info) when ``fun`` is the function JAX's
    ``pmap`` jits (``_fun`` of ``jax._src.pmap._cached_shard_map``, which closes over
    the user's function as a ``WrappedFun`` named ``fun``); None otherwise."""
    for _ in range(4):  # through functools.wraps layers (JAX's ``_fun`` is wrapped)
        code = getattr(fun, "__code__", None)
        if code is not None and code.co_name == "_fun" and code.co_filename.endswith("pmap.py"):
            break
        fun = getattr(fun, "__wrapped__", None)
        if fun is None:
            return None
    else:
        return None
    for name, cell in zip(code.co_freevars, getattr(fun, "__closure__", None) or (), strict=False):
        if name != "fun":
            continue
        try:
            wrapped = cell.cell_contents
        except ValueError:
            return None
        user = getattr(wrapped, "f", None)
        return (user, getattr(wrapped, "debug_info", None)) if callable(user) else None
    return None


def _pmap_site(fun: Any, names: tuple[str, ...]) -> tuple[Any, tuple[str, ...], str, str] | None:
    """For pmap's jitted wrapper: the user's function, argument names, name, label."""
    found = pmap_user_function(fun)
    if found is None:
        return None
    user, dbg = found
    info = getattr(dbg, "func_src_info", None)
    name = (
        info.partition(" at ")[0]
        if isinstance(info, str) and info
        else getattr(user, "__name__", "?")
    )
    arg_names = tuple(getattr(dbg, "arg_names", None) or ())
    if len(arg_names) == len(names) and all(isinstance(a, str) and a for a in arg_names):
        names = arg_names
    return user, names, name, f"pmap({name})"


def _bound_static_self(fun: Any) -> tuple[str, Any] | None:
    """(parameter name, self) when ``fun`` is a method bound from a jitted function whose
    first argument is static (``@partial(jax.jit, static_argnums=0) def apply(self, x)``)."""
    if not isinstance(fun, types.MethodType) or not is_jitted(fun.__func__):
        return None
    settings = jit_settings(fun.__func__)
    if settings is None or 0 not in settings.static_argnums:
        return None
    return _static_names(jitted_inner(fun.__func__), None, 1)[0], fun.__self__


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
    pmapped = _pmap_site(fun, names)
    if pmapped is not None:
        fun, names = pmapped[0], pmapped[1]
    call_args = loc.get("args") or ()
    # ``eqx.filter_jit`` jits an inner function of flat leaves: name them as the user did
    names = filter_jit_arg_names(fun, call_args, names) or names
    args = tuple(aval_type(n, a) for n, a in zip(names, avals, strict=True))
    statics: list[tuple[str, str]] = []
    tokens: list[tuple[str, Any]] = []
    passing: list[tuple[str, str]] = []
    call_kwargs = loc.get("kwargs") or {}
    argnums = tuple(getattr(ji, "static_argnums", ()) or ())
    argnames = tuple(getattr(ji, "static_argnames", ()) or ())
    if argnums:
        labels = _static_names(fun, ji, len(call_args))
        for i in argnums:
            if 0 <= i < len(call_args):
                statics.append((labels[i], _short_repr(call_args[i])))
                tokens.append((labels[i], _static_token(call_args[i])))
                passing.append((labels[i], "positional"))
    for name in argnames:
        if name in call_kwargs:
            statics.append((name, _short_repr(call_kwargs[name])))
            tokens.append((name, _static_token(call_kwargs[name])))
            passing.append((name, "keyword"))
    bound = _bound_static_self(fun)
    if bound is not None:
        # ``jax.make_jaxpr(d.apply)``: JAX jits the bound method, which calls the jitted
        # function with ``self`` as its static first argument: that is the call to record
        statics.insert(0, (bound[0], _short_repr(bound[1])))
        tokens.insert(0, (bound[0], _static_token(bound[1])))
        passing.insert(0, (bound[0], "positional"))
    passed = {name for name, _ in statics}
    defaults = _defaults(fun, ji, tuple(n for n in argnames if n not in passed))
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
    if bound is not None:
        tree_text, tree_hash = "", 0  # the outer wrapper's tree: not the jitted call's
    jaxpr = loc.get("jaxpr")
    # the trace event also fires when tracing raised: then no jaxpr was made
    failed = jaxpr is None and sys.exc_info()[1] is not None
    internal = (
        pmapped is None
        and is_jax_internal(fun)
        and not (jaxpr is not None and runs_user_code(jaxpr))
    )
    return JitTraceSite(
        fun=fun,
        args=args,
        statics=tuple(statics),
        internal=internal,
        static_tokens=tuple(tokens),
        tree=tree_text,
        tree_hash=tree_hash,
        failed=failed,
        eager_primitive=bool(getattr(fun, "_apply_primitive", False)),
        static_passing=tuple(passing),
        static_defaults=defaults,
        user_name=pmapped[2] if pmapped else None,
        label=pmapped[3] if pmapped else None,
        jaxpr_id=0 if jaxpr is None else id(getattr(jaxpr, "jaxpr", jaxpr)),
    )


def _short_repr_text(text: str, limit: int = 120) -> str:
    return text if len(text) <= limit else text[: limit - 1] + "…"
