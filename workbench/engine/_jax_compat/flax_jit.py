"""The program a Flax ``nnx.jit`` function really runs, traced through its own ``.trace``.

``nnx.jit`` does not hand the user's function to ``jax.jit``: it splits the NNX objects
of the call (model, optimizer, ``Rngs``) into their graph definitions and states, and
calls one ``jax.jit`` of an inner function that merges them back, runs the user's
function, and returns the call's output *and the objects' new state*; the wrapper then
writes that state back into the objects.  Traced inside another ``jax.jit`` (as a plain
callable), only the user's output leaves that jit: XLA drops the state updates (the
optimizer step of a train step) as dead code, and the program shown is not the one that
runs.  The wrapper's own ``.trace`` stages the call as it runs; its result (Flax's
``Traced``/``SimpleTraced``) holds JAX's ``jax.stages.Traced`` as ``.traced``.

Tracing writes nothing back to the objects (only a call applies the updates), and it is
done on abstract copies (:func:`abstract_nnx_call`): an inspection kept in ``Out``
history holds no model, and so no device memory, of the user's.

Read from Flax 0.12's ``flax/nnx/transforms/compilation.py`` (``JitWrapped``,
``SimpleJitWrapped``, their ``__get__`` that binds a method as ``functools.partial``);
anything unexpected gives ``None`` and the caller falls back to tracing the wrapper as a
plain callable.
"""

from __future__ import annotations

import functools
from collections.abc import Callable
from typing import Any

import jax


def _flax_nnx() -> Any:
    try:
        from flax import nnx
    except Exception:  # pragma: no cover - Flax not installed
        return None
    return nnx


def nnx_jit_call(
    fn: Any, args: tuple[Any, ...], kwargs: dict[str, Any]
) -> tuple[Any, tuple[Any, ...], dict[str, Any]] | None:
    """``(the nnx.jit wrapper, args, kwargs)`` for a call of an ``nnx.jit`` function
    (a method decorated with it arrives as ``functools.partial(wrapper, self)``: its bound
    arguments go back in front), else None."""
    bound: tuple[Any, ...] = ()
    bound_kw: dict[str, Any] = {}
    if isinstance(fn, functools.partial):
        fn, bound, bound_kw = fn.func, tuple(fn.args), dict(fn.keywords)
    cls = type(fn)
    if not cls.__module__.startswith("flax.nnx") or "Jit" not in cls.__name__:
        return None
    if not callable(getattr(fn, "trace", None)):
        return None
    return fn, (*bound, *args), {**bound_kw, **kwargs}


def is_nnx_node(nnx: Any, x: Any) -> bool:
    """Whether ``x`` is a Flax NNX graph node (a module, an optimizer, ``Rngs``)."""
    try:
        return bool(nnx.graph.is_graph_node(x))
    except Exception:
        return False


def nnx_mapped(nnx: Any, tree: Any, fn: Callable[[Any], Any]) -> Any:
    """A copy of ``tree`` (NNX objects, and arrays beside them) with every array of its
    state replaced by ``fn(array)``: one ``nnx.split`` of the whole tree, so objects shared
    within it stay shared in the copy, then ``nnx.merge``.  Raises what Flax raises."""
    graphdef, state = nnx.split(tree)
    return nnx.merge(graphdef, jax.tree.map(fn, state))


def abstract_nnx_call(
    args: tuple[Any, ...], kwargs: dict[str, Any], abstract: Callable[[Any], Any]
) -> tuple[tuple[Any, ...], dict[str, Any]] | None:
    """Copies of the call's arguments with every array (in the NNX objects' state too)
    replaced by ``abstract(array)``: one ``nnx.split`` of the whole call, so objects shared
    between arguments stay shared, and ``nnx.merge`` of the abstract state.  Python values
    (static arguments, a float) stay as they are.  None where Flax cannot split the call."""
    nnx = _flax_nnx()
    if nnx is None:
        return None
    try:
        copied = nnx_mapped(nnx, (args, kwargs), abstract)
        # arrays outside any NNX object (``x``, ``y``) are state of the split too
        new_args, new_kwargs = copied
    except Exception:
        return None
    return tuple(new_args), dict(new_kwargs)


def nnx_traced(wrapper: Any, args: tuple[Any, ...], kwargs: dict[str, Any]) -> Any:
    """JAX's ``jax.stages.Traced`` of ``wrapper(*args, **kwargs)`` as ``nnx.jit`` runs it:
    inputs and outputs are the objects' split state, so the state updates are outputs of
    the program.  Errors of the trace are the user's and propagate."""
    traced = wrapper.trace(*args, **kwargs)
    inner = getattr(traced, "traced", None)
    if inner is None or not callable(getattr(inner, "lower", None)):
        raise TypeError(
            f"{type(traced).__name__} from nnx.jit's .trace holds no jax.stages.Traced "
            "(a Flax this workbench does not know)"
        )
    return inner


class NnxJitStage:
    """Stands where the workbench keeps a ``jax.jit`` function to trace: ``.trace(*args)``
    gives JAX's ``Traced`` of the ``nnx.jit`` call (see :func:`nnx_traced`)."""

    __slots__ = ("wrapper",)

    def __init__(self, wrapper: Any) -> None:
        self.wrapper = wrapper

    def trace(self, *args: Any, **kwargs: Any) -> Any:
        return nnx_traced(self.wrapper, args, kwargs)
