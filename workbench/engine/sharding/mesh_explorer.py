"""The mesh explorer's compile step: a mesh, specs and an operation in; what XLA did out.

:func:`explore` takes an :class:`ExplorerConfig` (text as the user typed it, so
the app stays a thin front door; :meth:`ExplorerConfig.default` is the starting
state for the devices present) and runs four named steps: :func:`validate`
builds the mesh from the devices JAX has and the array's layout;
:func:`operands` makes the abstract arguments (``ShapeDtypeStruct``: nothing is
allocated or run); :func:`compile_operation` really compiles the operation with
those shardings through :func:`workbench.engine.stages.inspect` and
reads the output sharding XLA chose, the collectives the SPMD partitioner
inserted (named by mesh axes), ``memory_analysis`` and the stage times; and
:func:`diff_since` says what changed since the previous result.

Every bad input raises :class:`ShardingInputError` with one short line; the
caller keeps its last good result.
"""

from __future__ import annotations

import functools
import inspect
import math
import os
import sys
import time
import types
from collections import Counter
from collections.abc import Callable, Collection, Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field, replace
from typing import Any

import numpy as np

from workbench.engine import _jax_compat as compat
from workbench.engine.common.analysis import MemoryAnalysis
from workbench.engine.common.errors import is_user_file
from workbench.engine.hlo.parser import parse_hlo
from workbench.engine.sharding.collectives import MeshCollective, mesh_collectives
from workbench.engine.sharding.layout import (
    LAYOUT_VERSION,
    DeviceInfo,
    Layout,
    MeshInfo,
    ShardingInputError,
    check_spec,
    device_info,
    indivisible,
    layout_of_sharding,
    plan_layout,
    shard_bytes,
)
from workbench.engine.sharding.spec import (
    check_mesh,
    parse_axis_types,
    parse_ints,
    parse_names,
    parse_spec,
)

OPERATIONS = ("layout", "matmul", "einsum", "reduce", "function")
REDUCTIONS = ("sum", "max", "mean")
DTYPES = ("float32", "bfloat16", "float16", "float64", "int32", "int8")


class FieldInputError(ShardingInputError):
    """A :class:`ShardingInputError` that knows which control caused it.

    ``field`` is the :class:`ExplorerConfig` field name (``"spec"``, ``"mesh_shape"``...),
    so the app can show the message next to that control and mark it invalid rather than
    above the picture only; ``jax_error`` is JAX's own words on the same input
    (``"DuplicateSpecError: ..."``) when JAX was asked and refused it, else ``""``.
    """

    def __init__(self, message: str, field: str, jax_error: str = "") -> None:
        super().__init__(message)
        self.field = field
        self.jax_error = jax_error


@contextmanager
def at_field(field: str) -> Iterator[None]:
    """Blame ``field`` for a :class:`ShardingInputError` raised inside (unless one already is)."""
    try:
        yield
    except FieldInputError:
        raise
    except ShardingInputError as exc:
        raise FieldInputError(str(exc), field) from None


def short_error(exc: BaseException, limit: int = 140) -> str:
    """``Type: first line`` of an exception, short enough to sit under a text field.

    A longer line keeps its end (``…but P('data', 'data') has duplicate entries for
    `data```): JAX's messages open with the rule and end with what in the input broke it.
    """
    lines = str(exc).strip().splitlines()
    line = lines[0].strip() if lines else ""
    kind = type(exc).__name__
    if len(line) > limit:
        tail = line[-limit:]
        line = "…" + (tail.split(" ", 1)[1] if " " in tail[1:] else tail).lstrip()
    return f"{kind}: {line}" if line else kind


@dataclass(slots=True)
class ExplorerConfig:
    """Everything the explorer's controls hold, as text where the user types text."""

    mesh_shape: str = "2, 4"
    axis_names: str = "data, model"
    axis_types: str = "Auto"
    shape: str = "1024, 1024"
    dtype: str = "float32"
    spec: str = "data, model"
    operation: str = "layout"
    equation: str = "ij,jk->ik"
    rhs_shape: str = ""  # "" : (K, K) for a matmul, sizes from the equation for an einsum
    rhs_spec: str = "model, None"
    out_spec: str = ""  # "" : let XLA choose
    reduce_axes: str = "1"
    reduction: str = "sum"
    function: Callable[..., Any] | None = None  # notebook mode: f(x) on the array
    function_name: str = ""

    @classmethod
    def default(cls, device_count: int, **overrides: Any) -> ExplorerConfig:
        """A starting state whose mesh uses every device: ``(a, b)`` as square as the count allows.

        A prime count (or one device) gets a 1-D mesh ``data``.  ``overrides`` set
        fields by name; an unknown name is a ``TypeError``, as for a function call.
        """
        a = 1
        for f in range(1, math.isqrt(device_count) + 1):
            if device_count % f == 0:
                a = f
        b = device_count // a
        if a == 1:
            cfg = cls(
                mesh_shape=str(device_count),
                axis_names="data",
                spec="data, None",
                rhs_spec="None, None",
            )
        else:
            cfg = cls(mesh_shape=f"{a}, {b}")
        for k, v in overrides.items():
            if k not in cls.__dataclass_fields__:
                raise TypeError(f"mesh_explorer() got an unknown setting {k!r}")
            setattr(cfg, k, v)
        return cfg

    def to_dict(self) -> dict[str, Any]:
        d = {k: getattr(self, k) for k in self.__dataclass_fields__ if k != "function"}
        return d


@dataclass(slots=True)
class ExplorerDiff:
    """What changed between two compiles: collectives added/removed, bytes up/down."""

    added: list[str]
    removed: list[str]
    collective_bytes_before: int
    collective_bytes_after: int
    temp_bytes_before: int | None
    temp_bytes_after: int | None
    output_before: str
    output_after: str

    @property
    def changed(self) -> bool:
        return bool(
            self.added
            or self.removed
            or self.output_before != self.output_after
            or self.collective_bytes_before != self.collective_bytes_after
            or self.temp_bytes_before != self.temp_bytes_after
        )

    def to_dict(self) -> dict[str, Any]:
        return {
            "added": self.added,
            "removed": self.removed,
            "collective_bytes_before": self.collective_bytes_before,
            "collective_bytes_after": self.collective_bytes_after,
            "temp_bytes_before": self.temp_bytes_before,
            "temp_bytes_after": self.temp_bytes_after,
            "output_before": self.output_before,
            "output_after": self.output_after,
            "changed": self.changed,
        }


@dataclass(slots=True)
class ExplorerResult:
    """One explorer state: layouts, and for an operation what the compiler did."""

    config: ExplorerConfig
    mesh: MeshInfo
    inputs: list[Layout]
    operation: str
    op_text: str = ""
    outputs: list[Layout] = field(default_factory=list)
    collectives: list[MeshCollective] = field(default_factory=list)
    memory: MemoryAnalysis | None = None
    trace_s: float | None = None
    lower_s: float | None = None
    compile_s: float | None = None
    elapsed_s: float = 0.0
    diff: ExplorerDiff | None = None
    notes: list[str] = field(default_factory=list)
    device_count: int = 0
    process_count: int = 1

    @property
    def collective_bytes(self) -> int:
        return sum(c.bytes for c in self.collectives)

    def to_dict(self) -> dict[str, Any]:
        return {
            "version": LAYOUT_VERSION,
            "kind": "explorer",
            "config": self.config.to_dict(),
            "mesh": self.mesh.to_dict(),
            "operation": self.operation,
            "op_text": self.op_text,
            "inputs": [x.to_dict() for x in self.inputs],
            "outputs": [x.to_dict() for x in self.outputs],
            "collectives": [c.to_dict() for c in self.collectives],
            "collective_bytes": self.collective_bytes,
            "memory": None if self.memory is None else self.memory.to_dict(),
            "timings": {
                "trace_s": self.trace_s,
                "lower_s": self.lower_s,
                "compile_s": self.compile_s,
                "elapsed_s": self.elapsed_s,
            },
            "diff": None if self.diff is None else self.diff.to_dict(),
            "notes": list(self.notes),
            "device_count": self.device_count,
            "process_count": self.process_count,
        }


# -- building blocks ------------------------------------------------------------------------
def available_devices() -> list[Any]:
    """The devices a mesh is built over: all of JAX's, in JAX's order."""
    import jax

    return list(jax.devices())


def _public(namespace: dict[str, Any], hidden: Collection[str]) -> Iterator[tuple[str, Any]]:
    """The namespace's names a user gave: not private, not ``hidden`` (IPython's own
    ``open``, ``exit``, ``In``..., which the caller reads from the shell)."""
    for name, value in list(namespace.items()):
        if not name.startswith("_") and name not in hidden:
            yield name, value


def _user_code(fn: Any, namespace: dict[str, Any]) -> bool:
    """Whether ``fn`` is a plain function the user wrote: in a notebook cell (its globals are
    the user namespace) or in a ``.py`` file of theirs the notebook imported (a file outside
    the standard library, site-/dist-packages, JAX and the workbench).  Builtins, library
    functions and code made by ``exec`` elsewhere (``<string>``) are not."""
    if not isinstance(fn, types.FunctionType):
        return False
    if fn.__globals__ is namespace:
        return True
    filename = fn.__code__.co_filename or ""
    if filename.startswith("<"):
        return False
    path = os.path.abspath(filename)
    if "site-packages" in path or "dist-packages" in path:
        return False
    return is_user_file(path)


def _wrapped(value: Any, namespace: dict[str, Any]) -> Any:
    """The callable ``value`` wraps, found without running the user's code: a
    ``functools.partial``'s function, a ``__wrapped__`` attribute (``functools.wraps``:
    ``jax.jit``, ``jax.grad``, ``nnx.jit``) or a library class's own ``__wrapped__``
    property (Equinox's ``filter_jit``); ``None`` for anything else.  A property or
    ``__getattr__`` of a user's class is never evaluated."""
    if isinstance(value, functools.partial):
        return value.func
    found = inspect.getattr_static(value, "__wrapped__", None)
    if isinstance(found, property):
        getter = found.fget
        if (
            not isinstance(getter, types.FunctionType)
            or getter.__code__.co_filename.startswith("<")
            or _user_code(getter, namespace)
        ):
            return None  # only a library's own property is read
        try:
            return getter(value)
        except Exception:
            return None
    if found is None or hasattr(type(found), "__set__"):  # another data descriptor
        return None
    return found


#: other libraries' jit wrappers, by (top package, type name): ``nnx.jit``, ``eqx.filter_jit``
_JIT_WRAPPERS = {("flax", "JitWrapped"), ("equinox", "_JitWrapper")}


def _is_jit(value: Any) -> bool:
    """``value`` is a jit wrapper: ``jax.jit``'s, Flax NNX's or Equinox's (by its type)."""
    kind = type(value)
    return compat.is_jitted(value) or (
        (kind.__module__.split(".")[0], kind.__name__) in _JIT_WRAPPERS
    )


def _unwrapped(value: Any, namespace: dict[str, Any]) -> tuple[Any, bool]:
    """(the innermost callable under ``value``'s wrappers, whether one of them is a jit)."""
    jit = False
    inner = value
    for _ in range(16):
        jit = jit or _is_jit(inner)
        nxt = _wrapped(inner, namespace)
        if nxt is None or nxt is inner:
            break
        inner = nxt
    return inner, jit


def _library_attribute(fn: Any) -> bool:
    """``fn`` is an attribute of the module it names (``jax.numpy.sum`` imported by name),
    not a wrapper the user made of it (``jax.jit(mylib.loss)`` is a new object)."""
    module = sys.modules.get(getattr(fn, "__module__", None) or "")
    return module is not None and getattr(module, getattr(fn, "__name__", ""), None) is fn


def user_functions(namespace: dict[str, Any], hidden: Collection[str] = ()) -> dict[str, Any]:
    """The user's own functions the "function" operation can compile, jitted ones first.

    A function the user wrote (in a notebook cell, or in a ``.py`` file of theirs the
    notebook imported), and any wrapper of one: ``jax.jit``, ``nnx.jit``,
    ``eqx.filter_jit``, ``jax.grad``, ``functools.partial``; also a jit wrapper the user
    made of a library's function (``jax.jit(mylib.loss)``).  Never a builtin, IPython's own names (its ``open``
    is a plain function), a library's function imported by name (``from jax.numpy import
    sum`` is a jit wrapper too), a class, a module or a private name.  Jitted first: the app
    offers the first one, and a jitted function is certainly a JAX function.  Nothing in
    the namespace is called, and no user class's property or ``__getattr__`` runs.
    """
    jitted: dict[str, Any] = {}
    plain: dict[str, Any] = {}
    for name, value in _public(namespace, hidden):
        if inspect.isclass(value) or inspect.ismodule(value) or not callable(value):
            continue
        inner, jit = _unwrapped(value, namespace)
        if _user_code(inner, namespace) or (_is_jit(value) and not _library_attribute(value)):
            (jitted if jit else plain)[name] = value
    return {**jitted, **plain}


def user_meshes(namespace: dict[str, Any], hidden: Collection[str] = ()) -> dict[str, Any]:
    """The ``jax.sharding.Mesh`` objects the namespace names, in its order."""
    import jax

    return {n: v for n, v in _public(namespace, hidden) if isinstance(v, jax.sharding.Mesh)}


def user_arrays(namespace: dict[str, Any], hidden: Collection[str] = ()) -> dict[str, Any]:
    """The namespace's ``jax.Array`` values of rank 1 or more (a scalar has nothing to
    split), those with a ``NamedSharding`` (the user sharded them) first."""
    import jax

    arrays = {
        n: v for n, v in _public(namespace, hidden) if isinstance(v, jax.Array) and v.ndim > 0
    }
    named = {n: v for n, v in arrays.items() if isinstance(v.sharding, jax.sharding.NamedSharding)}
    return {**named, **{n: v for n, v in arrays.items() if n not in named}}


def _axis_text(name: str) -> str:
    """An axis name as the spec parser reads it back: bare if it is a plain word."""
    return name if name.isidentifier() and name != "None" else repr(name)


def spec_text(spec: Any, rank: int) -> str:
    """A ``PartitionSpec`` as the explorer's spec field writes it, one entry per dimension:
    ``P('batch', None)`` on a rank-2 array is ``batch, None``; ``P(('a', 'b'))`` is
    ``(a, b), None`` on a rank-2 array.  Unconstrained entries are ``None``."""
    entries = list(spec) + [None] * (rank - len(spec))
    out = []
    for e in entries[:rank] if rank else entries:
        axes = e if isinstance(e, tuple) else (e,)
        names = [a for a in axes if isinstance(a, str)]
        if not names:
            out.append("None")
        elif len(names) == 1:
            out.append(_axis_text(names[0]))
        else:
            out.append("(" + ", ".join(_axis_text(a) for a in names) + ")")
    return ", ".join(out)


def mesh_fields(mesh: Any) -> dict[str, str]:
    """The mesh controls' text for a ``jax.sharding.Mesh``: shape, axis names, axis types."""
    names = [str(a) for a in mesh.axis_names]
    sizes = [int(mesh.shape[a]) for a in mesh.axis_names]
    # Mesh.axis_types holds AxisType members (Auto, Explicit, Manual) in every JAX we support
    types = [str(t).rsplit(".", 1)[-1] for t in getattr(mesh, "axis_types", ())]
    types = types if len(types) == len(names) else ["Auto"] * len(names)
    return {
        "mesh_shape": ", ".join(map(str, sizes)),
        "axis_names": ", ".join(_axis_text(a) for a in names),
        "axis_types": ", ".join(types),
    }


def array_fields(x: Any) -> tuple[dict[str, str], Any | None]:
    """The array controls' text for an array: its shape, dtype and current sharding as the
    spec, and the mesh that spec is written over (``None`` unless it has a NamedSharding:
    other shardings start replicated)."""
    import jax

    shape = [int(d) for d in x.shape]
    sharding = getattr(x, "sharding", None)
    fields = {
        "shape": ", ".join(map(str, shape)),
        "dtype": str(x.dtype),
        "spec": ", ".join(["None"] * len(shape)),
    }
    if isinstance(sharding, jax.sharding.NamedSharding) and isinstance(
        sharding.mesh, jax.sharding.Mesh
    ):
        fields["spec"] = spec_text(sharding.spec, len(shape))
        return fields, sharding.mesh
    return fields, None


def build_mesh(cfg: ExplorerConfig, devices: list[Any]) -> tuple[Any, MeshInfo]:
    """The ``jax.sharding.Mesh`` the config asks for, over all ``devices`` in order."""
    import jax

    with at_field("mesh_shape"):
        shape = parse_ints(cfg.mesh_shape, "mesh shape")
    with at_field("axis_names"):
        names = parse_names(cfg.axis_names)
        if shape and (len(names) != len(shape) or len(set(names)) < len(names) or "" in names):
            check_mesh(shape, names, len(devices))  # its words on the names
    with at_field("mesh_shape"):
        check_mesh(shape, names, len(devices))
    with at_field("axis_types"):
        types = parse_axis_types(cfg.axis_types, len(shape))
        if "Manual" in types:
            # A Manual axis is what shard_map makes of a mesh axis inside its body; a mesh
            # built with one outside shard_map trips JAX's internal asserts.
            raise ShardingInputError(
                "Manual axes exist only inside shard_map; use Auto or Explicit here"
            )
    grid = np.empty(len(devices), dtype=object)
    grid[:] = devices
    axis_types = tuple(getattr(jax.sharding.AxisType, t) for t in types)
    mesh = jax.sharding.Mesh(grid.reshape(shape), tuple(names), axis_types=axis_types)
    info = MeshInfo(names, shape, types, [int(d.id) for d in devices])
    return mesh, info


def _dtype(name: str) -> Any:
    import jax.numpy as jnp

    try:
        return jnp.dtype(name)
    except TypeError:
        raise ShardingInputError(f"unknown dtype {name!r}; e.g. {', '.join(DTYPES)}") from None


def _jax_refuses(mesh: Any, entries: list[list[str]]) -> str:
    """JAX's own words (short) on ``NamedSharding(mesh, P(*entries))``, or ``""`` if it
    accepts it.  Asked before our checks so the field shows what JAX itself says."""
    import jax

    try:
        jax.sharding.NamedSharding(mesh, _spec_of(entries))
    except Exception as exc:  # JAX raises ValueError, DuplicateSpecError, TypeError...
        return short_error(exc)
    return ""


def _checked(
    info: MeshInfo, mesh: Any, spec_text: str, shape: list[int], what: str, field: str
) -> list[list[str]]:
    """The spec's entries, padded to the rank; a bad one raises a :class:`FieldInputError`
    for ``field`` carrying JAX's own error beside our one-line reason."""
    with at_field(field):
        entries = parse_spec(spec_text)
    if len(entries) > len(shape):
        raise FieldInputError(
            f"the {what} spec {spec_text!r} has {len(entries)} entries but "
            f"the {what} has rank {len(shape)} {tuple(shape)}",
            field,
        )
    entries += [[] for _ in range(len(shape) - len(entries))]
    said = _jax_refuses(mesh, entries)
    try:
        check_spec(info, entries)
    except ShardingInputError as exc:
        raise FieldInputError(f"{what} spec: {exc}", field, said) from None
    if said:
        raise FieldInputError(f"{what} spec: {said}", field, said)
    return entries


def _einsum_rhs_shape(equation: str, lhs_shape: list[int]) -> list[int]:
    ins, _, _ = equation.replace(" ", "").partition("->")
    parts = ins.split(",")
    if len(parts) != 2 or "." in ins:
        raise ShardingInputError(
            f"the explorer's einsum takes two operands without '...', "
            f"e.g. ij,jk->ik; got {equation!r}"
        )
    lhs, rhs = parts
    if len(lhs) != len(lhs_shape):
        raise ShardingInputError(
            f"the einsum's first operand {lhs!r} has {len(lhs)} indices but "
            f"the array has rank {len(lhs_shape)}"
        )
    sizes = dict(zip(lhs, lhs_shape, strict=False))
    default = lhs_shape[-1] if lhs_shape else 1
    return [sizes.get(c, default) for c in rhs]


def _describe_op(cfg: ExplorerConfig, rhs_shape: list[int] | None, dtype: Any) -> str:
    if cfg.operation == "matmul":
        return f"x @ y   (y: {dtype.name}{list(rhs_shape or [])})"
    if cfg.operation == "einsum":
        return f"einsum({cfg.equation!r}, x, y)   (y: {dtype.name}{list(rhs_shape or [])})"
    if cfg.operation == "reduce":
        return f"{cfg.reduction}(x, axis={tuple(parse_ints(cfg.reduce_axes, 'axes', 0))})"
    if cfg.operation == "function":
        return f"{cfg.function_name or getattr(cfg.function, '__name__', 'f')}(x)"
    return ""


def _operation(
    cfg: ExplorerConfig, mesh: Any, out_spec: list[list[str]] | None, explicit: bool
) -> Callable[..., Any]:
    """A fresh function for the chosen operation (fresh, so JAX's caches never answer)."""
    import jax
    import jax.numpy as jnp

    out_sh = (
        None
        if out_spec is None
        else jax.sharding.NamedSharding(
            mesh, jax.sharding.PartitionSpec(*[tuple(e) if e else None for e in out_spec])
        )
    )

    def constrain(y: Any) -> Any:
        if out_sh is None:
            return y
        if explicit:
            return jax.sharding.reshard(y, out_sh)
        return jax.lax.with_sharding_constraint(y, out_sh)

    # Explicit axes carry shardings in the types: a dot takes its output sharding as an
    # argument (JAX asks for it when the contraction is sharded); Auto axes are constrained.
    dot_out = out_sh if explicit else None
    op: Callable[..., Any]
    if cfg.operation == "matmul":

        def matmul(x: Any, y: Any) -> Any:
            z = jnp.matmul(x, y, out_sharding=dot_out)
            return z if dot_out is not None else constrain(z)

        op = matmul
    elif cfg.operation == "einsum":
        eq = cfg.equation.replace(" ", "")

        def einsum(x: Any, y: Any) -> Any:
            z = jnp.einsum(eq, x, y, out_sharding=dot_out)
            return z if dot_out is not None else constrain(z)

        op = einsum
    elif cfg.operation == "reduce":
        axes = tuple(parse_ints(cfg.reduce_axes, "reduction axes", 0))
        reducers: dict[str, Callable[..., Any]] = {"sum": jnp.sum, "max": jnp.max, "mean": jnp.mean}
        fn = reducers[cfg.reduction]

        def reduce(x: Any) -> Any:
            return constrain(fn(x, axis=axes))

        op = reduce
    else:
        if cfg.function is None:  # validate() said so already; this narrows the type
            raise ShardingInputError("no function chosen")
        user: Callable[..., Any] = cfg.function

        def function(x: Any) -> Any:
            return jax.tree.map(constrain, user(x)) if out_sh is not None else user(x)

        op = function
    op.__name__ = op.__qualname__ = {
        "matmul": "matmul",
        "einsum": "einsum",
        "reduce": cfg.reduction,
    }.get(cfg.operation, cfg.function_name or getattr(cfg.function, "__name__", "f"))
    return op


def diff_results(before: ExplorerResult, after: ExplorerResult) -> ExplorerDiff:
    """Collectives added and removed (as a multiset of kind/axes/shape), bytes before/after."""
    b = Counter(c.key for c in before.collectives)
    a = Counter(c.key for c in after.collectives)
    desc = {c.key: f"{c.description} {c.shape}" for c in [*before.collectives, *after.collectives]}
    added = [desc[k] for k in sorted((a - b).elements(), key=str)]
    removed = [desc[k] for k in sorted((b - a).elements(), key=str)]

    def out_text(r: ExplorerResult) -> str:
        return "; ".join(o.spec_text or o.sharding_text for o in r.outputs)

    def temp(r: ExplorerResult) -> int | None:
        return None if r.memory is None else r.memory.temp_bytes

    return ExplorerDiff(
        added,
        removed,
        before.collective_bytes,
        after.collective_bytes,
        temp(before),
        temp(after),
        out_text(before),
        out_text(after),
    )


# -- the step: validate, operands, compile, diff ----------------------------------------------
@dataclass(slots=True)
class _Plan:
    """What :func:`validate` established: the mesh, the array, and the result so far."""

    mesh: Any  # jax.sharding.Mesh
    info: MeshInfo
    devices: list[DeviceInfo]
    dtype: Any
    shape: list[int]
    entries: list[list[str]]
    result: ExplorerResult


def validate(cfg: ExplorerConfig, devices: list[Any]) -> _Plan:
    """Parse and check everything the user typed for the mesh and the array.

    Builds the mesh and the array's layout (which is the whole answer for the
    "layout" operation: an uneven split is a note there, an error before a
    compile).  Raises :class:`ShardingInputError` with one line on bad input.
    """
    import jax

    if cfg.operation not in OPERATIONS:
        raise ShardingInputError(
            f"unknown operation {cfg.operation!r}; one of {', '.join(OPERATIONS)}"
        )
    mesh, info = build_mesh(cfg, devices)
    me = jax.process_index()
    pos = {int(d.id): p for p, d in enumerate(devices)}
    dev_infos = [device_info(d, me, info.coords(pos[int(d.id)])) for d in devices]
    with at_field("dtype"):
        dtype = _dtype(cfg.dtype)
    with at_field("shape"):
        shape = parse_ints(cfg.shape, "array shape", 0)
    entries = _checked(info, mesh, cfg.spec, shape, "array", "spec")
    x_layout = plan_layout(info, entries, shape, dtype, dev_infos)
    x_layout.path = "x"
    result = ExplorerResult(
        config=replace(cfg),
        mesh=info,
        inputs=[x_layout],
        operation=cfg.operation,
        device_count=len(devices),
        process_count=jax.process_count(),
    )
    bad = indivisible(info, entries, shape)
    if cfg.operation == "layout":
        if bad:
            x_layout.notes.append(bad)
        return _Plan(mesh, info, dev_infos, dtype, shape, entries, result)
    if bad:
        raise FieldInputError(f"array: {bad}", "spec")
    if cfg.operation == "function" and cfg.function is None:
        raise FieldInputError(
            "no function chosen: pick one from the notebook's namespace", "function_name"
        )
    if cfg.operation == "reduce" and cfg.reduction not in REDUCTIONS:
        raise FieldInputError(
            f"unknown reduction {cfg.reduction!r}; one of {', '.join(REDUCTIONS)}",
            "reduction",
        )
    return _Plan(mesh, info, dev_infos, dtype, shape, entries, result)


def _spec_of(entries: list[list[str]]) -> Any:
    import jax

    return jax.sharding.PartitionSpec(
        *[tuple(a) if len(a) > 1 else (a[0] if a else None) for a in entries]
    )


def operands(cfg: ExplorerConfig, plan: _Plan) -> list[Any]:
    """The operation's abstract arguments, each a ``ShapeDtypeStruct`` with its sharding.

    ``x`` is the array; a matmul or einsum adds ``y`` (its shape typed by the user,
    else ``(K, K)`` for a matmul and the sizes the equation implies for an einsum),
    whose layout joins the result's inputs.  Nothing is allocated.
    """
    import jax

    def arg(shape: list[int], entries: list[list[str]]) -> Any:
        return jax.ShapeDtypeStruct(
            tuple(shape),
            plan.dtype,
            sharding=jax.sharding.NamedSharding(plan.mesh, _spec_of(entries)),
        )

    args = [arg(plan.shape, plan.entries)]
    rhs_shape: list[int] | None = None
    if cfg.operation in ("matmul", "einsum"):
        if cfg.rhs_shape.strip():
            with at_field("rhs_shape"):
                rhs_shape = parse_ints(cfg.rhs_shape, "second operand's shape", 0)
        elif cfg.operation == "matmul":
            if not plan.shape:
                raise FieldInputError("a matmul needs an array of rank 1 or more", "shape")
            rhs_shape = [plan.shape[-1], plan.shape[-1]]
        else:
            with at_field("equation"):
                rhs_shape = _einsum_rhs_shape(cfg.equation, plan.shape)
        rhs_entries = _checked(
            plan.info, plan.mesh, cfg.rhs_spec, rhs_shape, "second operand", "rhs_spec"
        )
        bad = indivisible(plan.info, rhs_entries, rhs_shape)
        if bad:
            raise FieldInputError(f"second operand: {bad}", "rhs_spec")
        y_layout = plan_layout(plan.info, rhs_entries, rhs_shape, plan.dtype, plan.devices)
        y_layout.path = "y"
        plan.result.inputs.append(y_layout)
        args.append(arg(rhs_shape, rhs_entries))
    with at_field("reduce_axes"):
        plan.result.op_text = _describe_op(cfg, rhs_shape, plan.dtype)
    return args


def compile_operation(cfg: ExplorerConfig, plan: _Plan, args: list[Any]) -> None:
    """Compile the operation on ``args`` and record what XLA did into ``plan.result``.

    The output sharding it chose, the collectives the partitioner inserted (named
    by mesh axes), ``memory_analysis`` and the stage times.  Whatever fails in the
    compile (JAX's own error, or JAX tripping over an unusual sharding) becomes one
    :class:`ShardingInputError` line, so the caller keeps its last good state.
    """
    import jax

    from workbench.engine.stages import inspect as inspect_call

    result = plan.result
    with at_field("out_spec"):
        out_entries = parse_spec(cfg.out_spec) if cfg.out_spec.strip() else None
    if out_entries is not None:
        said = _jax_refuses(plan.mesh, out_entries)
        try:
            check_spec(plan.info, out_entries)
        except ShardingInputError as exc:
            raise FieldInputError(f"output spec: {exc}", "out_spec", said) from None
        if said:
            raise FieldInputError(f"output spec: {said}", "out_spec", said)
    explicit = "Explicit" in plan.info.axis_types
    op = _operation(cfg, plan.mesh, out_entries, explicit)
    ins = inspect_call(op, *args)
    try:
        compiled = ins.compiled
        out_sh = jax.tree.leaves(compiled.output_shardings)
        out_info = jax.tree.leaves(ins.lowered.out_info)
        for i, (sh, aval) in enumerate(zip(out_sh, out_info, strict=False)):
            lay = layout_of_sharding(
                sh, aval.shape, aval.dtype, "out" if len(out_sh) == 1 else f"out[{i}]"
            )
            result.outputs.append(lay)
        result.collectives = mesh_collectives(parse_hlo(ins.hlo_text), plan.info)
        result.memory = ins.memory
    except ShardingInputError:
        raise
    except Exception as exc:  # JAX's own words on why this cannot compile
        from workbench.engine.common.errors import report

        rep = report(exc, "compile")
        hint = f" ({rep.hints[0]})" if rep.hints else ""
        said = rep.summary.strip()
        if not said or said == rep.kind:
            said = "raised inside JAX without a message"
        raise ShardingInputError(
            f"{result.op_text or 'the operation'} does not compile with "
            f"these shardings: {rep.kind}: {said}{hint}"
        ) from None
    result.trace_s = ins.timings.trace
    result.lower_s = ins.timings.lower
    result.compile_s = ins.timings.compile


def diff_since(previous: ExplorerResult | None, result: ExplorerResult) -> ExplorerDiff | None:
    """What changed since the previous compile, when there was one of the same operation.

    Layouts alone have nothing to compare (no compile), and two different
    operations differ in everything, so both give ``None``.
    """
    if previous is None or previous.operation != result.operation or result.operation == "layout":
        return None
    return diff_results(previous, result)


def explore(
    cfg: ExplorerConfig, previous: ExplorerResult | None = None, devices: list[Any] | None = None
) -> ExplorerResult:
    """Layouts for ``cfg``, and for an operation a real compile on the devices present."""
    t0 = time.perf_counter()
    plan = validate(cfg, available_devices() if devices is None else devices)
    result = plan.result
    if cfg.operation != "layout":
        compile_operation(cfg, plan, operands(cfg, plan))
        result.diff = diff_since(previous, result)
    result.elapsed_s = time.perf_counter() - t0
    return result


def per_device_bytes(layout: Layout) -> int:
    """Bytes one device holds for this array (padded shard size)."""
    if not layout.shards:
        return 0
    return shard_bytes(layout.shards[0].padded_shape, layout.bits)


__all__ = [
    "DTYPES",
    "OPERATIONS",
    "REDUCTIONS",
    "ExplorerConfig",
    "ExplorerDiff",
    "ExplorerResult",
    "FieldInputError",
    "array_fields",
    "at_field",
    "available_devices",
    "build_mesh",
    "compile_operation",
    "diff_results",
    "diff_since",
    "explore",
    "mesh_fields",
    "operands",
    "per_device_bytes",
    "short_error",
    "spec_text",
    "user_arrays",
    "user_functions",
    "user_meshes",
    "validate",
]
