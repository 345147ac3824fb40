"""The user's mutable state is never what a benchmark runs on: timed calls get copies.

JAX arrays are immutable, and a ``jax.jit`` function cannot change its arguments; but the
objects Flax NNX users pass are mutable *graph nodes*: an ``nnx.jit`` train step writes new
weights, optimizer moments and ``step`` into ``model`` and ``optimizer``, and every dropout
call advances the counter of an ``nnx.Rngs``.  Timed a few hundred times on the user's own
objects, a benchmark would train their model.  So every NNX graph node among the arguments
(however deep in lists, tuples and dicts) is replaced by a copy before the first call:

- **one joint copy** (``nnx.split`` of all the nodes together, then ``nnx.merge``), so what
  the arguments share stays shared between the copies (a model and the optimizer that
  holds it, an ``Rngs`` passed beside a model that draws from it);
- **with copied buffers** (``jax.device_put(..., may_alias=False)``: no XLA program, the
  same sharding), because a step that donates its state (``nnx.jit(donate_argnums=...)``)
  would otherwise delete the user's arrays through the copy;
- **made before the first call**, outside every timed region.

The price is memory: the copies are a second set of the state's device buffers for the run
(a sweep's, one point at a time), so a model and optimizer filling more than half a device
refuse (out of memory, :class:`StateCopyError`) unless ``allow_mutation=True``; said in
``docs/mime-bench.md``.

The copy then advances as the timed calls run, exactly as the user's objects would in
their own training loop: each call sees state of the same structure, shapes, dtypes and
sharding (so the same compiled program and the same work), one step further on.  Giving
every call a fresh copy of the *initial* state instead would need a copy per call (memory
and copy traffic between calls, cache-cold buffers) to time a situation the user's loop
never is in; what matters, and what is guaranteed, is that the user's objects are not
advanced at all.

A copy that cannot be made (a node ``nnx.split`` refuses, device memory for the copied
buffers) refuses the benchmark with :class:`StateCopyError`, whose one line says why and
offers ``allow_mutation=True`` (``--allow-mutation``): time on the user's objects, which
the calls then change.

Equinox modules, optax states and ``eqx.nn.State`` are immutable pytrees (a stateful layer
returns its new state), so they need no copy.  Flax is imported only when the user already
did (``flax.nnx`` in ``sys.modules``): no NNX object can exist otherwise.  The calls used,
``nnx.graph.is_graph_node``, ``nnx.split`` and ``nnx.merge``, are in every Flax this
package's CI installs (0.12.8 with JAX 0.10.2 and the newest); an NNX without them
refuses as any failed copy does.
"""

from __future__ import annotations

import ast
import functools
import sys
import types
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any

import jax
import numpy as np

from workbench.engine import _jax_compat as compat
from workbench.engine.bench.sampler import BenchInputError


class StateCopyError(BenchInputError):
    """The arguments hold mutable state that could not be copied: refused, nothing ran."""


@dataclass
class PrivateArguments:
    """The call's functions and arguments with every mutable graph node replaced by its copy."""

    args: tuple[Any, ...]
    kwargs: dict[str, Any]
    #: the functions (variants), the same objects unless one carries state (see
    #: :func:`_carried`)
    fns: dict[str, Any] = field(default_factory=dict)
    #: what was copied, in the user's terms: ``argument 0 (MLP)``, ``rngs (Rngs)``
    copied: list[str] = field(default_factory=list)


def _nnx() -> Any:
    """Flax's ``nnx`` module when the user imported it, else None."""
    return sys.modules.get("flax.nnx")


_is_node = compat.is_nnx_node


def callee_text(call_text: str | None) -> str:
    """The source of the called function in ``call_text`` (``model.apply(x)``:
    ``model.apply``), or ``""``."""
    if not call_text:
        return ""
    try:
        node = ast.parse(call_text.strip(), mode="eval").body
    except SyntaxError:
        return ""
    if not isinstance(node, ast.Call):
        return ""
    return ast.get_source_segment(call_text.strip(), node.func) or ""


def _carried(nnx: Any, fn: Any) -> list[Any]:
    """The graph nodes a function carries: a module called as a function (``model(x)``),
    the ``self`` of a bound method (``model.apply``, also an ``nnx.jit`` method, which
    Flax binds as a ``functools.partial``), the bound arguments of a partial, and the
    modules a plain function reads from its namespace or closure (``def fwd(x): return
    model(x)``)."""
    return [node for _, node in _carried_named(nnx, fn)]


def _carried_named(nnx: Any, fn: Any) -> list[tuple[str | None, Any]]:
    """:func:`_carried` with the name each node goes by where the function reads it from
    its globals or closure (None for the others)."""
    if _is_node(nnx, fn):
        return [(None, fn)]
    if isinstance(fn, types.MethodType) and _is_node(nnx, fn.__self__):
        return [(None, fn.__self__)]
    if isinstance(fn, functools.partial):
        return [
            (None, leaf)
            for leaf in jax.tree.leaves((fn.args, fn.keywords), is_leaf=lambda x: _is_node(nnx, x))
            if _is_node(nnx, leaf)
        ]
    if isinstance(fn, types.FunctionType):
        named: list[tuple[str | None, Any]] = list(_read_nodes(nnx, fn).items())
        return named
    return []


def _code_names(code: types.CodeType) -> set[str]:
    """The global names ``code`` and the functions nested in it read."""
    names = set(code.co_names)
    for const in code.co_consts:
        if isinstance(const, types.CodeType):
            names |= _code_names(const)
    return names


def _read_nodes(nnx: Any, fn: types.FunctionType) -> dict[str, Any]:
    """name -> graph node, for the nodes a plain function reads from its closure or
    its module's namespace (a notebook's cell: ``def fwd(x): return model(x)``).

    Only what the function's own code names (a helper it calls that reads another global
    is not followed): the function is then run with copies in those places."""
    found: dict[str, Any] = {}
    for name, cell in zip(fn.__code__.co_freevars, fn.__closure__ or (), strict=False):
        try:
            value = cell.cell_contents
        except ValueError:  # an empty cell
            continue
        if _is_node(nnx, value):
            found[name] = value
    glb = fn.__globals__
    for name in sorted(_code_names(fn.__code__)):
        value = glb.get(name)
        if name not in found and value is not None and _is_node(nnx, value):
            found[name] = value
    return found


def _with_copies(nnx: Any, fn: Any, swap: Callable[[Any], Any]) -> Any:
    """``fn`` carrying the copies of the nodes it carries (see :func:`_carried`)."""
    if _is_node(nnx, fn):
        return swap(fn)
    if isinstance(fn, types.MethodType) and _is_node(nnx, fn.__self__):
        return types.MethodType(fn.__func__, swap(fn.__self__))
    if isinstance(fn, functools.partial):
        is_node = functools.partial(_is_node, nnx)
        args, keywords = jax.tree.map(swap, (fn.args, fn.keywords), is_leaf=is_node)
        return functools.partial(fn.func, *args, **keywords)
    if isinstance(fn, types.FunctionType):
        read = _read_nodes(nnx, fn)
        if not read:
            return fn
        # the same code over a copy of its namespace and closure with the copies in them:
        # the user's namespace and cells are not touched
        glb = dict(fn.__globals__)
        glb.update({k: swap(v) for k, v in read.items() if k in glb and glb[k] is v})
        closure = fn.__closure__
        if closure is not None:
            closure = tuple(
                types.CellType(swap(read[name]))
                if name in read and _cell_value(cell) is read[name]
                else cell
                for name, cell in zip(fn.__code__.co_freevars, closure, strict=True)
            )
        out = types.FunctionType(fn.__code__, glb, fn.__name__, fn.__defaults__, closure)
        out.__kwdefaults__ = fn.__kwdefaults__
        out.__dict__.update(fn.__dict__)
        out.__qualname__ = fn.__qualname__
        return out
    return fn


def _cell_value(cell: Any) -> Any:
    try:
        return cell.cell_contents
    except ValueError:
        return None


def positional_texts(call_text: str | None) -> list[str]:
    """The source of each positional argument of ``call_text`` (``f(model, opt, x)``:
    ``["model", "opt", "x"]``), so a note names them as the user wrote them; ``[]`` when
    it is no plain call (a ``*args`` ends the list: what follows has no text of its own)."""
    if not call_text:
        return []
    try:
        node = ast.parse(call_text.strip(), mode="eval").body
    except SyntaxError:
        return []
    if not isinstance(node, ast.Call):
        return []
    out = []
    for a in node.args:
        if isinstance(a, ast.Starred):
            break
        text = ast.get_source_segment(call_text.strip(), a) or ""
        out.append(text if len(text) <= 40 else text[:37] + "...")
    return out


def _where(path: tuple[Any, ...], names: Sequence[str] = ()) -> str:
    """``model``, ``argument 1[2]``, ``rngs``: a leaf of ``(args, kwargs)`` by its path
    (positional arguments by their text in the call when ``names`` has it)."""
    top, key, *tail = path
    inside = jax.tree_util.keystr(tuple(tail)) if tail else ""
    if getattr(top, "idx", None) == 0:
        i = getattr(key, "idx", None)
        if isinstance(i, int) and i < len(names) and names[i]:
            return f"{names[i]}{inside}"
        return f"argument {'?' if i is None else i}{inside}"
    return f"{getattr(key, 'key', '?')}{inside}"


def _copy_buffer(x: Any) -> Any:
    if isinstance(x, jax.Array) and not isinstance(x, jax.core.Tracer):
        return jax.device_put(x, may_alias=False)
    if isinstance(x, np.ndarray):
        return x.copy()
    return x


def mutable_arguments(
    args: tuple[Any, ...], kwargs: dict[str, Any], names: Sequence[str] = ()
) -> list[tuple[str, Any]]:
    """``(where, node)`` of every mutable graph node among the arguments (outermost only:
    a module's submodules and variables are copied with it)."""
    nnx = _nnx()
    if nnx is None:
        return []
    try:
        flat, _ = jax.tree_util.tree_flatten_with_path(
            (args, kwargs), is_leaf=lambda x: _is_node(nnx, x)
        )
    except Exception:
        return []
    return [(_where(path, names), leaf) for path, leaf in flat if _is_node(nnx, leaf)]


def mutable_state(
    fns: dict[str, Any],
    args: tuple[Any, ...],
    kwargs: dict[str, Any],
    names: Sequence[str] = (),
    callee: str = "",
) -> list[tuple[str, Any]]:
    """``(where, node)`` of the mutable graph nodes the functions carry and the arguments
    hold; a function's by the callee's text in the call (``model``) or its variant name."""
    nnx = _nnx()
    if nnx is None:
        return []
    found = []
    for name, fn in fns.items():
        for read_as, node in _carried_named(nnx, fn):
            # ``model.apply(x)``: the node is ``model``; several variants: by their names;
            # a module a plain function reads: by the name it reads it as
            where = read_as or (callee.split(".")[0] if callee and len(fns) == 1 else name)
            found.append((where, node))
    return found + mutable_arguments(args, kwargs, names)


def private_arguments(
    args: tuple[Any, ...],
    kwargs: dict[str, Any],
    names: Sequence[str] = (),
    fns: dict[str, Any] | None = None,
    callee: str = "",
) -> PrivateArguments:
    """The functions and arguments with their mutable graph nodes copied (see the module
    doc).

    Functions and arguments without such nodes are returned as they are (the same
    objects).  Raises :class:`StateCopyError` when a copy cannot be made.  ``names``: the
    positional arguments' text in the call (:func:`positional_texts`), ``callee``: the
    called function's (:func:`callee_text`), for the messages.
    """
    fns = dict(fns or {})
    found = mutable_state(fns, args, kwargs, names, callee)
    if not found:
        return PrivateArguments(args, kwargs, fns)
    nnx = _nnx()
    unique: dict[int, Any] = {}
    for _, node in found:
        unique.setdefault(id(node), node)
    nodes = tuple(unique.values())
    try:
        copies = compat.nnx_mapped(nnx, nodes, _copy_buffer)
        jax.block_until_ready(jax.tree.leaves(nnx.state(copies)))
    except Exception as exc:
        where = ", ".join(f"{w} ({type(n).__name__})" for w, n in found[:3])
        reason = str(exc).strip().splitlines()[0] if str(exc).strip() else type(exc).__name__
        raise StateCopyError(
            f"cannot copy the state of {where} to time on ({type(exc).__name__}: "
            f"{reason[:200]}); the timed calls would change yours. Pass --allow-mutation "
            "(allow_mutation=True) to time on your objects anyway"
        ) from None
    copy_of = {id(n): c for n, c in zip(nodes, copies, strict=True)}

    def replace(x: Any) -> Any:
        return copy_of.get(id(x), x) if _is_node(nnx, x) else x

    def rebuild(value: Any) -> Any:
        if not any(_is_node(nnx, leaf) for leaf in _top_leaves(nnx, value)):
            return value
        return jax.tree.map(replace, value, is_leaf=lambda x: _is_node(nnx, x))

    return PrivateArguments(
        tuple(rebuild(a) for a in args),
        {k: rebuild(v) for k, v in kwargs.items()},
        {name: _with_copies(nnx, fn, replace) for name, fn in fns.items()},
        _unique_descriptions(found),
    )


def _unique_descriptions(found: list[tuple[str, Any]]) -> list[str]:
    """``where (Type)`` of each node once (a model passed and also bound to the method)."""
    seen: set[int] = set()
    out = []
    for where, node in found:
        if id(node) not in seen:
            seen.add(id(node))
            out.append(f"{where} ({type(node).__name__})")
    return out


def _top_leaves(nnx: Any, value: Any) -> list[Any]:
    return jax.tree.leaves(value, is_leaf=lambda x: _is_node(nnx, x))


def copies_note(copied: list[str]) -> str:
    """The line the views show: what the timed calls ran on copies of."""
    shown = ", ".join(copied[:4]) + (f" and {len(copied) - 4} more" if len(copied) > 4 else "")
    return f"timed on copies of {shown}: your objects are unchanged"
