"""The arguments of an inspected call: which are inputs, which are closed over, and the
abstract stand-ins an inspection keeps instead of the user's arrays.

Real programs pass more than arrays: an Equinox model carries its activation functions,
a Flax module its configuration.  ``jax.make_jaxpr`` refuses those leaves; Equinox's
``filter_make_jaxpr`` makes the array leaves inputs and closes over the rest.  We do the
same, but only when some leaf is something JAX cannot take as an input, so an ordinary
call is traced exactly as ``jax.make_jaxpr`` traces it (Python scalars stay weak-typed
inputs).

An inspection is kept by the display in ``Out`` history: holding the user's arrays there
would keep device memory alive after ``del x``.  :func:`abstract_arrays` replaces every
array by a ``jax.ShapeDtypeStruct`` (shape, dtype, weak type, and the sharding of a
committed array), which traces, lowers and compiles to the same program.
"""

from __future__ import annotations

import functools
import inspect as pyinspect
import weakref
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import jax
import numpy as np

from workbench.engine.jaxpr.transforms import TransformError

_ARRAYS = (jax.Array, np.ndarray, np.generic, jax.ShapeDtypeStruct)
_SCALARS = (bool, int, float, complex)


def is_array(x: Any) -> bool:
    """An array leaf (what Equinox's ``is_array`` keeps as an input; abstract ones too)."""
    return isinstance(x, _ARRAYS)


def jax_accepts(x: Any) -> bool:
    """A leaf ``jax.jit`` takes as an input as is: arrays, Python numbers, ``__jax_array__``."""
    return isinstance(x, _ARRAYS) or isinstance(x, _SCALARS) or hasattr(x, "__jax_array__")


@dataclass(frozen=True)
class _Split:
    """One argument whose non-array leaves are closed over: its structure and those leaves
    (``None`` where an array goes back in)."""

    treedef: Any
    fixed: tuple[Any, ...]

    def join(self, arrays: list[Any]) -> Any:
        it = iter(arrays)
        leaves = [next(it) if f is _INPUT else f for f in self.fixed]
        return jax.tree.unflatten(self.treedef, leaves)


_INPUT = object()  # marks an array position in _Split.fixed


def _split(arg: Any) -> tuple[Any, _Split | None]:
    leaves, treedef = jax.tree.flatten(arg)
    if all(jax_accepts(x) for x in leaves):
        return arg, None
    arrays = [x for x in leaves if is_array(x)]
    fixed = tuple(_INPUT if is_array(x) else x for x in leaves)
    return arrays, _Split(treedef, fixed)


def needs_filtering(args: tuple[Any, ...], kwargs: dict[str, Any]) -> bool:
    """Whether some leaf is something JAX cannot take as an input (a function, a string...)."""
    return not all(jax_accepts(x) for x in jax.tree.leaves((args, kwargs)))


def filter_arrays(
    fn: Callable[..., Any],
    args: tuple[Any, ...],
    kwargs: dict[str, Any],
) -> tuple[Callable[..., Any], tuple[Any, ...], dict[str, Any]]:
    """``fn`` over the array leaves only, as ``eqx.filter_make_jaxpr`` traces it.

    Each argument keeps its position (so ``argnums`` and ``in_axes`` still point at it);
    one with non-array leaves becomes the list of its array leaves, and the function
    rebuilds it (closing over the rest) before calling ``fn``.  Of its result, only the
    array leaves are outputs (the rest would be static to Equinox too).
    """
    if not needs_filtering(args, kwargs):
        return fn, args, kwargs
    pos = [_split(a) for a in args]
    kws = {k: _split(v) for k, v in kwargs.items()}
    # The closure keeps only the structures and closed-over leaves, never the arrays
    # themselves: the traced function lives as long as the displayed inspection.
    splits = [s for _, s in pos]
    kw_splits = {k: s for k, (_, s) in kws.items()}

    def filtered(*dyn: Any, **kw: Any) -> Any:
        full = [a if s is None else s.join(a) for a, s in zip(dyn, splits, strict=True)]
        full_kw = {
            k: v if kw_splits[k] is None else kw_splits[k].join(v)  # type: ignore[union-attr]
            for k, v in kw.items()
        }
        # outputs too: ``eqx.apply_updates`` returns the model, activations and all
        return jax.tree.map(lambda x: x if is_array(x) else None, fn(*full, **full_kw))

    wraps_user_function(filtered, fn)
    try:  # JAX names arguments in its errors from this signature: the user's, not ours
        sig = pyinspect.signature(fn)
        sig.bind(*args, **kwargs)
        filtered.__signature__ = sig  # type: ignore[attr-defined]
    except (TypeError, ValueError):
        pass
    return filtered, tuple(a for a, _ in pos), {k: v for k, (v, _) in kws.items()}


def wraps_user_function(wrapper: Callable[..., Any], fn: Callable[..., Any]) -> None:
    """Make a workbench wrapper around the user's ``fn`` stand for it in JAX's messages.

    ``__name__``/``__qualname__`` for the jit's name; ``__wrapped__`` because JAX finds the
    source of "the error occurred while tracing the function f at cell [3] line 2" by
    unwrapping (``inspect.unwrap``): without it the hint names our wrapper's file.
    """
    for attr in ("__name__", "__qualname__", "__module__", "__doc__"):
        try:
            setattr(wrapper, attr, getattr(fn, attr))
        except (AttributeError, TypeError):
            pass
    try:
        wrapper.__wrapped__ = fn  # type: ignore[attr-defined]
    except (AttributeError, TypeError):
        pass


def referable(fn: Callable[..., Any]) -> Callable[..., Any]:
    """``fn``, or a Python function that calls it where ``jax.jit`` cannot hold ``fn`` itself.

    ``jax.jit`` hashes the function it wraps and keeps a weak reference to it.  NumPy's
    ufuncs and array-function dispatchers (``np.sin``, ``np.sum``) allow no weak
    reference: ``jax.jit(np.sum)`` refuses them, and a second ``jax.jit`` of the same ufunc
    crashes jaxlib (the kernel dies).  ``jax.make_jaxpr`` wraps them first; so do we.
    """
    try:
        hash(fn)
        weakref.ref(fn)
        return fn
    except TypeError:
        pass

    @functools.wraps(fn)
    def call(*args: Any, **kwargs: Any) -> Any:
        return fn(*args, **kwargs)

    return call


def _abstract(x: Any) -> Any:
    if isinstance(x, jax.Array) and not isinstance(x, jax.core.Tracer):
        # An uncommitted array goes wherever the computation goes: no sharding, as traced.
        sharding = x.sharding if getattr(x, "committed", True) else None
        return jax.ShapeDtypeStruct(
            x.shape, x.dtype, sharding=sharding, weak_type=bool(getattr(x, "weak_type", False))
        )
    if isinstance(x, (np.ndarray, np.generic)):
        return jax.ShapeDtypeStruct(np.shape(x), x.dtype)
    return x


def abstract_arrays(tree: Any) -> Any:
    """``tree`` with every concrete array replaced by its ``ShapeDtypeStruct``."""
    return jax.tree.map(_abstract, tree)


def static_positions(
    fn: Callable[..., Any], names: tuple[str, ...], nargs: int, kwargs: dict[str, Any]
) -> set[int]:
    """Positions of the static argument ``names`` passed positionally; refuses a name
    that is no parameter of ``fn`` (``jax.jit(f, static_argnames=...)`` raises too,
    where ignoring it would silently trace the argument)."""
    try:
        params = list(pyinspect.signature(fn).parameters.values())
    except (TypeError, ValueError):  # no readable signature: names apply to keywords only
        return set()
    by_name = {
        p.name: i
        for i, p in enumerate(params)
        if p.kind in (p.POSITIONAL_ONLY, p.POSITIONAL_OR_KEYWORD)
    }
    known = {p.name for p in params if p.kind is not p.POSITIONAL_ONLY}
    takes_any = any(p.kind is p.VAR_KEYWORD for p in params)
    missing = [n for n in names if n not in known and not takes_any and n not in kwargs]
    if missing:
        shown = ", ".join(p.name for p in params) or "no parameters"
        raise TransformError(
            f"static argument name {', '.join(map(repr, missing))} is not a parameter of "
            f"{getattr(fn, '__name__', 'the function')} (it takes: {shown})"
        )
    return {by_name[n] for n in names if n in by_name and by_name[n] < nargs}
