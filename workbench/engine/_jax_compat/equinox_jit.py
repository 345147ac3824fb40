"""Argument paths of an ``eqx.filter_jit`` call, in the user's terms.

``eqx.filter_jit`` does not jit the user's function: it binds the call to the
function's signature, splits ``args[0]`` ("first") and ``(args[1:], kwargs)``
("rest") into their flat leaves (arrays kept, other leaves ``None``) and calls one
``jax.jit`` of its inner ``fun_wrapped(dynamic_donate, dynamic_nodonate, static)``,
where ``static = (static_fun, static_first, static_rest)`` and each ``static_*`` is
``(static_leaves, treedef)``.  JAX's debug info therefore names a leaf
``dynamic_nodonate['rest'][4]``: the 5th leaf of ``(args[1:], kwargs)``.  This
module maps such a name back to ``x`` or ``model.layers[0].weight`` using the
treedef in ``static`` and the function's signature.

Read from Equinox 0.13's ``equinox/_jit.py`` (``_filter_jit_cache``,
``_preprocess``, ``hashable_partition``): every step is checked and any surprise
gives ``None``, so the caller keeps JAX's own names.
"""

from __future__ import annotations

import inspect
import re
from typing import Any

import jax

_LEAF = re.compile(r"^dynamic_(?:no)?donate\['(?P<part>first|rest)'\]\[(?P<i>\d+)\]$")


def is_filter_jit_inner(fun: Any) -> bool:
    """Whether ``fun`` is the function Equinox's ``filter_jit`` hands to ``jax.jit``."""
    code = getattr(fun, "__code__", None)
    if code is None or code.co_name != "fun_wrapped":
        return False
    filename = code.co_filename.replace("\\", "/")
    return filename.endswith("equinox/_jit.py") and code.co_varnames[:3] == (
        "dynamic_donate",
        "dynamic_nodonate",
        "static",
    )


class _Slot:
    """A placeholder leaf: unflattening a treedef with these keeps no user value."""

    __slots__ = ("index",)

    def __init__(self, index: int) -> None:
        self.index = index


def _leaf_paths(static_part: Any) -> list[tuple[Any, ...]] | None:
    """The key path of each leaf of one ``(static_leaves, treedef)`` half of Equinox's
    partition, in the order of its leaves."""
    try:
        static_leaves, treedef = static_part
        n = len(static_leaves)
        if getattr(treedef, "num_leaves", None) != n:
            return None
        tree = jax.tree_util.tree_unflatten(treedef, [_Slot(i) for i in range(n)])
        flat, _ = jax.tree_util.tree_flatten_with_path(tree, is_leaf=lambda x: isinstance(x, _Slot))
    except Exception:
        return None
    paths: list[tuple[Any, ...] | None] = [None] * n
    for path, leaf in flat:
        if not isinstance(leaf, _Slot) or paths[leaf.index] is not None:
            return None
        paths[leaf.index] = tuple(path)
    if any(p is None for p in paths):
        return None
    return [p for p in paths if p is not None]


def _user_function(static_fun: Any) -> Any:
    """The user's function from Equinox's ``static_fun`` half (a plain function is one
    static leaf; a callable Module is rebuilt from its static leaves)."""
    static_leaves, treedef = static_fun
    if len(static_leaves) == 1 and callable(static_leaves[0]):
        return static_leaves[0]
    return jax.tree_util.tree_unflatten(treedef, list(static_leaves))


def _key(k: Any) -> Any:
    for attr in ("idx", "key", "name"):
        if hasattr(k, attr):
            return getattr(k, attr)
    return None


def _param_path(
    params: list[inspect.Parameter], position: int | None, keyword: Any, rest: tuple[Any, ...]
) -> str | None:
    """``name`` + the rest of the key path, for the argument at ``position`` (of the
    bound positional arguments) or passed as ``keyword``."""
    tail = jax.tree_util.keystr(rest) if rest else ""
    if keyword is not None:
        return f"{keyword}{tail}" if isinstance(keyword, str) else None
    assert position is not None
    for i, p in enumerate(params):
        if p.kind is p.VAR_POSITIONAL:
            return f"{p.name}[{position - i}]{tail}"
        if i == position and p.kind in (p.POSITIONAL_ONLY, p.POSITIONAL_OR_KEYWORD):
            return f"{p.name}{tail}"
    return None


def filter_jit_arg_names(
    fun: Any, call_args: Any, names: tuple[str, ...]
) -> tuple[str, ...] | None:
    """The user's names for JAX's argument ``names`` of an ``eqx.filter_jit`` trace
    (``fun`` the inner function, ``call_args`` its positional arguments); a name that
    cannot be mapped (an array closed over by the function: ``['fun'][i]``) is kept as
    JAX wrote it.  None when ``fun`` is not Equinox's or its call is not as expected."""
    if not is_filter_jit_inner(fun):
        return None
    try:
        static_fun, static_first, static_rest = call_args[2]
        user = _user_function(static_fun)
        params = list(inspect.signature(user).parameters.values())
    except Exception:
        return None
    paths = {"first": _leaf_paths(static_first), "rest": _leaf_paths(static_rest)}
    out: list[str] = []
    for name in names:
        m = _LEAF.match(name)
        leaf_paths = paths.get(m.group("part")) if m else None
        if m is None or leaf_paths is None or int(m.group("i")) >= len(leaf_paths):
            out.append(name)
            continue
        path = leaf_paths[int(m.group("i"))]
        if m.group("part") == "first":
            mapped = _param_path(params, 0, None, path)
        elif len(path) >= 2 and _key(path[0]) == 0 and isinstance(_key(path[1]), int):
            mapped = _param_path(params, 1 + _key(path[1]), None, path[2:])
        elif len(path) >= 2 and _key(path[0]) == 1:
            mapped = _param_path(params, None, _key(path[1]), path[2:])
        else:
            mapped = None
        out.append(name if mapped is None else mapped)
    return tuple(out)
