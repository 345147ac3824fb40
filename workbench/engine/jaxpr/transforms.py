"""Transform specs: parse ``"vmap(grad(f))"`` or ``"vmap(in_axes=(0, None))"`` safely and
apply a list of them (innermost first) to a function.

Strings are parsed with :mod:`ast` and only literal values are accepted
(``ast.literal_eval``), so a transform spec can never run code.

Some transforms change the call signature: ``jvp`` and ``linearize`` take
tangents after the primals, ``vjp`` (its backward function) takes the output
cotangent after the primals.  :func:`apply_transforms` returns the new function
together with abstract arguments (``jax.ShapeDtypeStruct``) for those extra
inputs, so the program can be traced without running anything on data.
"""

from __future__ import annotations

import ast
import functools
import inspect
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any

import jax
import numpy as np


class TransformError(ValueError):
    """A transform name, argument or string spec that cannot be used."""


# name -> (allowed keyword arguments, name of the one positional argument after f)
_ALLOWED: dict[str, tuple[frozenset[str], str | None]] = {
    "grad": (frozenset({"argnums", "has_aux", "holomorphic", "allow_int"}), "argnums"),
    "value_and_grad": (frozenset({"argnums", "has_aux", "holomorphic", "allow_int"}), "argnums"),
    "vmap": (frozenset({"in_axes", "out_axes", "axis_name", "axis_size"}), "in_axes"),
    "jvp": (frozenset(), None),
    "vjp": (frozenset({"has_aux"}), None),
    "linearize": (frozenset(), None),
    "jacfwd": (frozenset({"argnums", "has_aux", "holomorphic"}), "argnums"),
    "jacrev": (frozenset({"argnums", "has_aux", "holomorphic", "allow_int"}), "argnums"),
    "hessian": (frozenset({"argnums", "has_aux", "holomorphic"}), "argnums"),
    "checkpoint": (frozenset({"prevent_cse", "policy", "static_argnums"}), None),
}
_ALIASES = {"remat": "checkpoint", "jacobian": "jacrev"}

TRANSFORM_NAMES: tuple[str, ...] = tuple(_ALLOWED)


@dataclass(frozen=True)
class TransformSpec:
    name: str
    kwargs: dict[str, Any] = field(default_factory=dict)

    def __str__(self) -> str:
        if not self.kwargs:
            return self.name
        inner = ", ".join(f"{k}={v!r}" for k, v in self.kwargs.items())
        return f"{self.name}({inner})"

    def label(self, inner: str) -> str:
        extra = "".join(f", {k}={v!r}" for k, v in self.kwargs.items())
        return f"{self.name}({inner}{extra})"


def _check(name: str, kwargs: dict[str, Any]) -> TransformSpec:
    name = _ALIASES.get(name, name)
    if name not in _ALLOWED:
        raise TransformError(f"unknown transform {name!r}; known: {', '.join(TRANSFORM_NAMES)}")
    allowed = _ALLOWED[name][0]
    bad = sorted(set(kwargs) - allowed)
    if bad:
        raise TransformError(
            f"{name} does not take {', '.join(bad)}"
            + (f"; it takes {', '.join(sorted(allowed))}" if allowed else "; it takes no arguments")
        )
    if name == "checkpoint" and "policy" in kwargs:
        policy, names = kwargs["policy"], checkpoint_policy_names()
        if policy not in names:
            raise TransformError(
                f"checkpoint policy must be the name of one of jax.checkpoint_policies: "
                f"{', '.join(names)}; got {policy!r}"
            )
    for key in ("argnums", "static_argnums"):
        if key in kwargs and not _is_argnums(kwargs[key]):
            raise TransformError(
                f"{name}: {key} must be an integer or a tuple of integers, got {kwargs[key]!r}"
            )
    return TransformSpec(name, dict(kwargs))


def _is_argnums(value: Any) -> bool:
    def is_int(v: Any) -> bool:
        return isinstance(v, int) and not isinstance(v, bool)

    return is_int(value) or (isinstance(value, (tuple, list)) and all(map(is_int, value)))


def checkpoint_policy_names() -> tuple[str, ...]:
    """The names in ``jax.checkpoint_policies`` that are policies themselves (called with a
    primitive and its parameters), not factories such as ``save_only_these_names(...)``
    that a string cannot call, nor attributes every object has (``__class__``)."""

    def is_policy(obj: Any) -> bool:
        try:
            params = inspect.signature(obj).parameters.values()
        except (TypeError, ValueError):
            return False
        return any(p.kind is inspect.Parameter.VAR_KEYWORD for p in params)

    return tuple(
        sorted(
            n
            for n in dir(jax.checkpoint_policies)
            if not n.startswith("_")
            and callable(obj := getattr(jax.checkpoint_policies, n))
            and not isinstance(obj, type)
            and is_policy(obj)
        )
    )


def _literal(node: ast.AST, text: str) -> Any:
    try:
        return ast.literal_eval(node)
    except (ValueError, SyntaxError, TypeError) as exc:
        raise TransformError(
            f"transform arguments must be literals (numbers, tuples, None, strings): "
            f"{ast.get_source_segment(text, node) or ast.dump(node)}"
        ) from exc


def parse_transforms(text: str) -> list[TransformSpec]:
    """Parse one transform string into specs, innermost first.

    Accepts ``"grad"``, ``"vmap(in_axes=(0, None))"`` and nested forms such as
    ``"vmap(grad(f), in_axes=0)"`` / ``"jit(vmap(grad(f)))"`` where the innermost
    bare name stands for the function.
    """
    text = text.strip()
    if not text:
        raise TransformError("empty transform")
    try:
        node = ast.parse(text, mode="eval").body
    except SyntaxError as exc:
        raise TransformError(f"cannot parse transform {text!r}: {exc.msg}") from None

    specs: list[TransformSpec] = []

    def walk(n: ast.AST, outermost: bool) -> None:
        if isinstance(n, ast.Name):
            if outermost or n.id in _ALLOWED or n.id in _ALIASES:
                specs.append(_check(n.id, {}))  # "grad", or "vmap(grad)"
            return  # otherwise the function placeholder, as in "grad(f)"
        if not (isinstance(n, ast.Call) and isinstance(n.func, ast.Name)):
            raise TransformError(f"cannot read transform {text!r}: expected name(...)")
        name = n.func.id
        if name == "jit":  # jit is implied: everything is traced through jax.jit
            if len(n.args) != 1 or n.keywords:
                raise TransformError("jit(...) in a transform string takes just the function")
            walk(n.args[0], False)
            return
        if any(kw.arg is None for kw in n.keywords):
            raise TransformError(f"**kwargs is not supported in a transform string: {text!r}")
        # ``**kw`` (arg None) was refused just above
        kwargs = {str(kw.arg): _literal(kw.value, text) for kw in n.keywords}
        args = list(n.args)
        inner: ast.AST | None = None
        if args and isinstance(args[0], (ast.Name, ast.Call)) and not _is_literal_node(args[0]):
            inner = args.pop(0)
        canonical = _ALIASES.get(name, name)
        if args:
            positional = _ALLOWED.get(canonical, (frozenset(), None))[1]
            if positional is None or len(args) > 1:
                raise TransformError(f"{name}: too many positional arguments in {text!r}")
            if positional in kwargs:
                raise TransformError(f"{name}: {positional} given twice in {text!r}")
            kwargs[positional] = _literal(args[0], text)
        if inner is not None:
            walk(inner, False)
        specs.append(_check(name, kwargs))

    walk(node, True)
    if not specs:
        raise TransformError(f"no transform in {text!r}; expected e.g. grad or vmap(grad(f))")
    return specs


def _is_literal_node(node: ast.AST) -> bool:
    try:
        ast.literal_eval(node)
        return True
    except Exception:
        return False


def normalize(transforms: Sequence[str | TransformSpec] | str | None) -> list[TransformSpec]:
    """Turn user input (names, strings, specs) into specs, innermost first."""
    if transforms is None:
        return []
    if isinstance(transforms, (str, TransformSpec)):
        transforms = [transforms]
    out: list[TransformSpec] = []
    for t in transforms:
        if isinstance(t, TransformSpec):
            out.append(_check(t.name, t.kwargs))
        elif isinstance(t, str):
            out.extend(parse_transforms(t))
        else:
            raise TransformError(f"a transform must be a name or string, not {type(t).__name__}")
    return out


def describe(fn_name: str, specs: Sequence[TransformSpec]) -> str:
    """``vmap(grad(loss))`` style label for a composition."""
    label = fn_name
    for s in specs:
        label = s.label(label)
    return label


def _abstract(x: Any) -> Any:
    """A ShapeDtypeStruct with x's shape and dtype (x may itself be abstract)."""
    if isinstance(x, jax.ShapeDtypeStruct):
        return jax.ShapeDtypeStruct(x.shape, x.dtype)
    dtype = jax.dtypes.result_type(x) if not hasattr(x, "dtype") else x.dtype
    return jax.ShapeDtypeStruct(np.shape(x), dtype)


def _tangent_abstract(x: Any) -> Any:
    a = _abstract(x)
    if not (jax.numpy.issubdtype(a.dtype, jax.numpy.inexact)):
        raise TransformError(
            "jvp/linearize need floating-point inputs; an argument has dtype "
            f"{a.dtype} (make it static with --static-argnums, or cast it)"
        )
    return a


def _named(fn: Callable[..., Any], name: str) -> Callable[..., Any]:
    try:
        fn.__name__ = name
        fn.__qualname__ = name
    except (AttributeError, TypeError):
        pass
    return fn


def _apply_one(
    fn: Callable[..., Any],
    spec: TransformSpec,
    args: tuple[Any, ...],
    kwargs: dict[str, Any],
    name: str,
) -> tuple[Callable[..., Any], tuple[Any, ...], dict[str, Any]]:
    kw = dict(spec.kwargs)
    t = spec.name
    if t in ("grad", "value_and_grad", "jacfwd", "jacrev", "hessian"):
        return _named(getattr(jax, t)(fn, **kw), name), args, kwargs
    if t == "vmap":
        return _named(jax.vmap(fn, **kw), name), args, kwargs
    if t == "checkpoint":
        if "policy" in kw:
            kw["policy"] = getattr(jax.checkpoint_policies, kw["policy"])
        return _named(jax.checkpoint(fn, **kw), name), args, kwargs

    # The remaining transforms change the signature; keyword arguments are closed over.
    base = functools.partial(fn, **kwargs) if kwargs else fn
    n = len(args)
    if t == "jvp":
        tangents = tuple(jax.tree.map(_tangent_abstract, a) for a in args)

        def jvp_fn(*pt: Any) -> Any:
            return jax.jvp(base, tuple(pt[:n]), tuple(pt[n:]))

        return _named(jvp_fn, name), args + tangents, {}
    if t == "linearize":
        tangents = tuple(jax.tree.map(_tangent_abstract, a) for a in args)

        def linear_fn(*pt: Any) -> Any:
            _, f_lin = jax.linearize(base, *pt[:n])
            return f_lin(*pt[n:])

        return _named(linear_fn, name), args + tangents, {}
    if t == "vjp":
        has_aux = bool(kw.get("has_aux", False))
        out_shape = jax.eval_shape(base, *args)
        if has_aux:
            out_shape = out_shape[0]
        cotangent = jax.tree.map(_abstract, out_shape)

        def vjp_fn(*pc: Any) -> Any:
            # has_aux is only known at run time; JAX's overloads want a literal
            res = jax.vjp(base, *pc[:n], has_aux=True) if has_aux else jax.vjp(base, *pc[:n])
            backward = res[1]
            return backward(pc[n])

        return _named(vjp_fn, name), args + (cotangent,), {}
    raise TransformError(f"unknown transform {t!r}")  # pragma: no cover - _check guards


def apply_transforms(
    fn: Callable[..., Any],
    specs: Sequence[TransformSpec],
    args: tuple[Any, ...],
    kwargs: dict[str, Any],
    fn_name: str,
) -> tuple[Callable[..., Any], tuple[Any, ...], dict[str, Any]]:
    """Apply specs innermost first; return (function, args, kwargs) to trace."""
    label = fn_name
    for spec in specs:
        label = spec.label(label)
        fn, args, kwargs = _apply_one(fn, spec, args, kwargs, label)
    return fn, args, kwargs


def remap_for_statics(spec: TransformSpec, static: set[int], nargs: int) -> TransformSpec:
    """Translate ``argnums``/``in_axes`` given over the full call to the dynamic args.

    Static arguments are closed over before transforms are applied, so positions
    the user wrote against the call as written must skip them.
    """
    if not static:
        return spec
    kw = dict(spec.kwargs)

    def new_pos(i: int) -> int:
        i = i + nargs if i < 0 else i
        if i in static:
            raise TransformError(f"{spec.name}: argnums {i} refers to a static argument")
        return i - sum(1 for s in static if s < i)

    if "argnums" in kw:
        a = kw["argnums"]
        kw["argnums"] = tuple(new_pos(i) for i in a) if isinstance(a, (tuple, list)) else new_pos(a)
    if (
        spec.name == "vmap"
        and isinstance(kw.get("in_axes"), (tuple, list))
        and len(kw["in_axes"]) == nargs
    ):
        kw["in_axes"] = tuple(ax for i, ax in enumerate(kw["in_axes"]) if i not in static)
    return TransformSpec(spec.name, kw)
