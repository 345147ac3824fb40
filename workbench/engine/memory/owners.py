"""The record behind ``%jaxmem``: every live device array, grouped by what keeps it alive.

In a notebook the usual holders of device memory are invisible: a name, the output
history (``Out[12]``, ``_``), the last exception's traceback (every local of the failed
call), an object's attributes (an NNX module's parameters, an optimizer state, a list of
arrays: ``params[3]['w1']``), a jitted function's closure or partial, or nothing the user
can reach.  This module answers from ``jax.live_arrays()``:

1. *roots* the front door names (the namespace, the output history, the last exception:
   :func:`namespace_roots`, :func:`history_roots`, :func:`traceback_roots`) are walked
   down containers, attributes, slots, closures and partials, each array keeping every
   root that reaches it (the first names its group);
2. the arrays no root reached are looked for from the other side, with
   ``gc.get_referrers`` a few levels up, to a module's globals or a running frame;
3. the rest are "reachable from nothing the workbench can see" (a count and bytes).

The walks are bounded in time (:data:`BUDGET_S`), and the record says when they were cut
short.  Nothing here keeps an array alive afterwards: arrays are read for their numbers
and every list that held one is cleared before returning.
"""

from __future__ import annotations

import functools
import gc
import inspect
import math
import sys
import time
import types
import weakref
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from typing import Any

import jax

from workbench.engine.common.gcpause import gc_paused
from workbench.engine.common.source import SourceLine

SCHEMA_VERSION = 1
#: seconds the walks may take together (for ~100k objects)
BUDGET_S = 1.0
#: how deep a walk goes below a root (``model.layers[3].attn.wq`` is 5)
MAX_DEPTH = 12
#: levels of ``gc.get_referrers`` above an array no root reached
REFERRER_LEVELS = 3

#: the kinds of owner, in the order they claim an array for their group
KINDS = (
    "name",
    "attribute",
    "closure",
    "history",
    "traceback",
    "module",
    "frame",
    "unreachable",
    "unplaced",
)

_SCALARS = (str, bytes, bytearray, int, float, complex, bool, type(None), range, memoryview)
#: packages whose objects are never walked into (the shell would lead back to everything)
_OPAQUE = (
    "IPython",
    "ipykernel",
    "traitlets",
    "zmq",
    "tornado",
    "asyncio",
    "workbench",
    "jax",
    "jaxlib",
    "numpy",
    "matplotlib",
    "pandas",
    "threading",
    "logging",
)
#: attribute names that add nothing to a path (an NNX Variable's value slot, a State's
#: mapping)
_VALUE_SLOTS = frozenset({"_raw_value", "raw_value", "_mapping"})


@dataclass(slots=True)
class HeldArray:
    path: str
    shape: str  # ``f32[4096,4096]``
    nbytes: int
    devices: dict[str, int]
    #: how many other owners also hold it
    also: int = 0

    def to_dict(self) -> dict[str, Any]:
        return {
            "path": self.path,
            "shape": self.shape,
            "nbytes": self.nbytes,
            "devices": dict(self.devices),
            "also": self.also,
        }


@dataclass
class OwnerGroup:
    kind: str
    owner: str
    where: SourceLine | None = None
    arrays: list[HeldArray] = field(default_factory=list)
    nbytes: int = 0
    devices: dict[str, int] = field(default_factory=dict)

    def add(self, a: HeldArray) -> None:
        self.arrays.append(a)
        self.nbytes += a.nbytes
        for d, b in a.devices.items():
            self.devices[d] = self.devices.get(d, 0) + b

    def to_dict(self, max_arrays: int | None = None) -> dict[str, Any]:
        shown = self.arrays if max_arrays is None else self.arrays[:max_arrays]
        d: dict[str, Any] = {
            "kind": self.kind,
            "owner": self.owner,
            "nbytes": self.nbytes,
            "count": len(self.arrays),
            "devices": dict(self.devices),
            "arrays": [a.to_dict() for a in shown],
        }
        if self.where is not None:
            d["where"] = self.where.to_dict()
        return d


@dataclass(slots=True)
class AllocatorStats:
    device: str
    bytes_in_use: int | None
    peak_bytes_in_use: int | None
    bytes_limit: int | None

    def to_dict(self) -> dict[str, Any]:
        return {
            "device": self.device,
            "bytes_in_use": self.bytes_in_use,
            "peak_bytes_in_use": self.peak_bytes_in_use,
            "bytes_limit": self.bytes_limit,
        }


@dataclass(slots=True)
class Freed:
    """What an explicit free action released, measured with ``jax.live_arrays()``."""

    action: str  # "history" or "traceback"
    arrays: int
    nbytes: int
    note: str = ""

    def to_dict(self) -> dict[str, Any]:
        return {
            "action": self.action,
            "arrays": self.arrays,
            "nbytes": self.nbytes,
            "note": self.note,
        }


@dataclass
class LiveMemory:
    groups: list[OwnerGroup]
    total_arrays: int
    total_bytes: int
    devices: dict[str, int]
    walk_s: float
    objects: int
    cut_short: bool
    allocator: list[AllocatorStats]
    allocator_note: str
    #: bytes of the arrays that only the output history / only the traceback holds: what
    #: ``--free-history`` / ``--free-traceback`` would free
    history_only_bytes: int = 0
    traceback_only_bytes: int = 0
    freed: list[Freed] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)

    def group(self, kind: str, owner: str | None = None) -> OwnerGroup | None:
        for g in self.groups:
            if g.kind == kind and (owner is None or g.owner == owner):
                return g
        return None

    def find(self, path: str) -> tuple[OwnerGroup, HeldArray] | None:
        """The group and entry of the array at ``path`` (``params[3]['w1']``), if any."""
        for g in self.groups:
            for a in g.arrays:
                if a.path == path:
                    return g, a
        return None

    def to_dict(
        self, max_groups: int | None = None, max_arrays: int | None = None
    ) -> dict[str, Any]:
        shown = self.groups if max_groups is None else self.groups[:max_groups]
        return {
            "groups": [g.to_dict(max_arrays) for g in shown],
            "total_groups": len(self.groups),
            "total_arrays": self.total_arrays,
            "total_bytes": self.total_bytes,
            "devices": dict(self.devices),
            "walk": {"seconds": self.walk_s, "objects": self.objects, "cut_short": self.cut_short},
            "allocator": [a.to_dict() for a in self.allocator],
            "allocator_note": self.allocator_note,
            "history_only_bytes": self.history_only_bytes,
            "traceback_only_bytes": self.traceback_only_bytes,
            "freed": [f.to_dict() for f in self.freed],
            "notes": list(self.notes),
        }


# -- roots ------------------------------------------------------------------------------


@dataclass(slots=True)
class Root:
    """One place a walk starts: its kind, the owner's label, the object, and the path
    prefix its arrays are named by (``params`` for the name ``params``)."""

    kind: str
    owner: str
    obj: Any
    path: str
    where: SourceLine | None = None


def namespace_roots(names: dict[str, Any]) -> list[Root]:
    """The user's names (already without the shell's own): each is its own owner."""
    roots = []
    for name, value in names.items():
        if isinstance(value, (types.ModuleType, type)) or isinstance(value, _SCALARS):
            continue
        if _is_array(value):
            kind = "name"
        elif _is_function(value):
            kind = "closure"
        else:
            kind = "attribute"
        roots.append(Root(kind, name, value, name))
    return roots


def history_roots(outputs: dict[int, Any], underscores: dict[str, Any]) -> list[Root]:
    """``Out[n]`` entries, then ``_``, ``__``, ``___`` and ``_n`` (the same objects, as a
    user may reach them)."""
    roots = [Root("history", f"Out[{n}]", v, f"Out[{n}]") for n, v in sorted(outputs.items())]
    roots += [Root("history", k, v, k) for k, v in underscores.items() if v is not None]
    return roots


def _on_a_stack() -> set[int]:
    """The frames executing now, in any thread (each thread's innermost and its callers)."""
    out: set[int] = set()
    for top in sys._current_frames().values():
        f: types.FrameType | None = top
        while f is not None:
            out.add(id(f))
            f = f.f_back
    return out


def frame_locals(frame: types.FrameType) -> dict[str, Any]:
    """A copy of a frame's locals that leaves nothing behind on the frame.

    Before Python 3.13, reading ``f_locals`` of a function's frame stores a snapshot dict
    on the frame that holds every local for as long as the frame lives: a ``del`` in the
    code, or ``frame.clear()``, no longer frees the array.  The snapshot is emptied after
    the copy (the next read rebuilds it from the frame).  Untouched: a module's or class
    body's ``f_locals`` (the namespace itself), 3.13's proxy (no snapshot), a frame
    executing now (a debugger's trace function writes its snapshot back into it), and a
    snapshot someone else holds (``pdb.post_mortem`` evaluates ``p x`` in the dict it read
    from ``f_locals``: emptied, the debugger would no longer see the frame's variables)."""
    try:
        snapshot = frame.f_locals
        local = dict(snapshot)
    except Exception:
        return {}
    if (
        type(snapshot) is dict
        and frame.f_code.co_flags & inspect.CO_OPTIMIZED
        and sys.getrefcount(snapshot) <= _SNAPSHOT_REFS
        and id(frame) not in _on_a_stack()
    ):
        snapshot.clear()
    return local


#: references to a frame's snapshot that nobody else holds, as ``sys.getrefcount`` counts
#: them in :func:`frame_locals`: the frame's own, the ``snapshot`` local and the call's
#: argument
_SNAPSHOT_REFS = 3


def traceback_roots(tb: Any = None, exc: Any = None) -> list[Root]:
    """The frames of the last exception's traceback (``sys.last_traceback`` unless
    given), each local a path ``var``, owner the failed call's frame; the exception
    itself (its arguments).  Module-level frames are the namespace and are skipped."""
    if tb is None:
        tb = getattr(sys, "last_traceback", None)
    if exc is None:
        exc = getattr(sys, "last_value", None)
    roots: list[Root] = []
    seen = 0
    while tb is not None and seen < 200:
        seen += 1
        frame = tb.tb_frame
        code = frame.f_code
        module = str(frame.f_globals.get("__name__", ""))
        if code.co_name != "<module>" and not module.startswith(("IPython", "workbench")):
            where = SourceLine(code.co_filename, tb.tb_lineno, code.co_name)
            owner = f"{code.co_name}() in the last exception's traceback"
            local = frame_locals(frame)
            roots += [Root("traceback", owner, v, k, where) for k, v in local.items()]
            local.clear()
        tb = tb.tb_next
    if exc is not None:
        roots.append(Root("traceback", "the last exception", getattr(exc, "args", ()), "args"))
    return roots


# -- the walk ---------------------------------------------------------------------------


def _is_array(obj: Any) -> bool:
    return isinstance(obj, jax.Array)


def _is_function(obj: Any) -> bool:
    """A function, partial or method, or a jitted function (JAX's wrapper of one)."""
    if isinstance(obj, (types.FunctionType, types.MethodType, functools.partial)):
        return True
    return callable(obj) and _opaque(obj) and getattr(obj, "__wrapped__", None) is not None


def _opaque(obj: Any) -> bool:
    mod = type(obj).__module__ or ""
    return mod.split(".", 1)[0] in _OPAQUE


def _key_text(k: Any) -> str:
    text = repr(k)
    return text if len(text) <= 40 else text[:37] + "..."


def _children(obj: Any) -> Iterator[tuple[str, Any, bool]]:
    """``(path suffix, child, through a function)`` for what ``obj`` holds."""
    if isinstance(obj, dict):
        for k, v in list(obj.items()):
            yield f"[{_key_text(k)}]", v, False
        return
    if isinstance(obj, (list, tuple)):
        fields = getattr(type(obj), "_fields", None)
        if isinstance(obj, tuple) and isinstance(fields, tuple) and len(fields) == len(obj):
            for name, v in zip(fields, obj, strict=True):
                yield f".{name}", v, False
        else:
            for i, v in enumerate(obj):
                yield f"[{i}]", v, False
        return
    if isinstance(obj, functools.partial):
        for i, v in enumerate(obj.args):
            yield f".args[{i}]", v, True
        for k, v in (obj.keywords or {}).items():
            yield f".keywords[{k!r}]", v, True
        yield "", obj.func, True
        return
    if isinstance(obj, types.MethodType):
        yield ".__self__", obj.__self__, True
        yield "", obj.__func__, True
        return
    if isinstance(obj, types.FunctionType):
        for name, cell in zip(obj.__code__.co_freevars, obj.__closure__ or (), strict=False):
            try:
                yield f".<closure {name}>", cell.cell_contents, True
            except ValueError:  # an empty cell
                continue
        for i, v in enumerate(obj.__defaults__ or ()):
            yield f".<default {i}>", v, True
        for k, v in (obj.__kwdefaults__ or {}).items():
            yield f".<default {k}>", v, True
        wrapped = obj.__dict__.get("__wrapped__")
        if wrapped is not None:
            yield "", wrapped, True
        return
    if _opaque(obj):
        # a jitted function (jax.jit, nnx.jit's wrapper): what it wraps
        wrapped = getattr(obj, "__wrapped__", None) if callable(obj) else None
        if wrapped is not None:
            yield "", wrapped, True
        return
    d = getattr(obj, "__dict__", None)
    if isinstance(d, dict):
        for k, v in list(d.items()):
            yield ("" if k in _VALUE_SLOTS else f".{k}"), v, False
    for cls in type(obj).__mro__:
        slots = cls.__dict__.get("__slots__", ())
        for name in (slots,) if isinstance(slots, str) else slots:
            if name in ("__dict__", "__weakref__"):
                continue
            try:
                v = getattr(obj, name)
            except Exception:
                continue
            yield ("" if name in _VALUE_SLOTS else f".{name}"), v, False


class _Budget:
    def __init__(self, seconds: float) -> None:
        self.deadline = time.perf_counter() + seconds
        self.objects = 0
        self.cut = False

    def spent(self) -> bool:
        if self.cut:
            return True
        if self.objects % 512 == 1 and time.perf_counter() > self.deadline:
            self.cut = True
        return self.cut


def _walk_root(
    root: Root,
    targets: dict[int, int],
    found: dict[int, list[tuple[int, str, bool]]],
    r: int,
    budget: _Budget,
) -> None:
    """Depth-first from ``root``: every target array reached gets ``(root number, path,
    through a function)``, the first path per root only."""
    seen: set[int] = set()
    reached: set[int] = set()
    stack: list[tuple[Any, str, int, bool]] = [(root.obj, root.path, 0, False)]
    while stack:
        obj, path, depth, via_fn = stack.pop()
        budget.objects += 1
        if budget.spent():
            break
        oid = id(obj)
        if oid in seen:
            continue
        seen.add(oid)
        t = targets.get(oid)
        if t is not None:
            if t not in reached:
                reached.add(t)
                found.setdefault(t, []).append((r, path, via_fn))
            continue
        if (
            depth >= MAX_DEPTH
            or isinstance(obj, _SCALARS)
            or isinstance(obj, (type, types.ModuleType))
        ):
            continue
        if _is_array(obj):
            continue  # an array we were not asked about (deleted meanwhile)
        try:
            kids = list(_children(obj))
        except Exception:
            continue
        for suffix, child, through in reversed(kids):
            if isinstance(child, _SCALARS):
                continue
            stack.append((child, path + suffix, depth + 1, via_fn or through))
    stack.clear()


def _frame_label(frame: types.FrameType) -> tuple[str, SourceLine]:
    code = frame.f_code
    return f"{code.co_name}() frame", SourceLine(code.co_filename, frame.f_lineno, code.co_name)


def _referrer_walk(
    arrays: list[Any], left: list[int], budget: _Budget, ours: set[int]
) -> dict[int, tuple[str, str, str, SourceLine | None]]:
    """For the arrays ``left`` (indices into ``arrays``): up to :data:`REFERRER_LEVELS`
    levels of ``gc.get_referrers`` to a module's globals or a live frame.  Returns index
    -> (kind, owner, path, where)."""
    out: dict[int, tuple[str, str, str, SourceLine | None]] = {}
    if not left:
        return out
    module_dicts: dict[int, str] = {}
    for name, mod in list(sys.modules.items()):
        d = getattr(mod, "__dict__", None)
        if isinstance(d, dict):
            module_dicts[id(d)] = name
    here = {id(sys._getframe(k)) for k in range(3)}
    # object id -> (array index, path below it)
    level: dict[int, tuple[int, str]] = {id(arrays[i]): (i, "") for i in left}
    objs: list[Any] = [arrays[i] for i in left]
    ours.update((id(objs), id(arrays), id(left)))
    for _ in range(REFERRER_LEVELS):
        if not objs or budget.spent():
            break
        refs = gc.get_referrers(*objs)
        ours.add(id(refs))
        nxt: list[Any] = []
        nxt_level: dict[int, tuple[int, str]] = {}
        ours.add(id(nxt))
        for ref in refs:
            budget.objects += 1
            if id(ref) in ours or id(ref) in here or id(ref) in level:
                continue
            if isinstance(ref, types.FrameType):
                code = ref.f_code
                if code.co_filename == __file__:
                    continue
                local = frame_locals(ref)
                for k, v in local.items():
                    hit = level.get(id(v))
                    if hit is not None and hit[0] not in out:
                        owner, where = _frame_label(ref)
                        out[hit[0]] = ("frame", owner, k + hit[1], where)
                local.clear()
                continue
            # which of this level's objects does it hold, and under what name
            held: list[tuple[str, tuple[int, str]]] = []
            try:
                if isinstance(ref, dict):
                    for k, v in list(ref.items()):
                        hit = level.get(id(v))
                        if hit is not None:
                            held.append(
                                (str(k) if id(ref) in module_dicts else f"[{_key_text(k)}]", hit)
                            )
                elif isinstance(ref, (list, tuple)):
                    for i, v in enumerate(ref):
                        hit = level.get(id(v))
                        if hit is not None:
                            held.append((f"[{i}]", hit))
                else:
                    for v in gc.get_referents(ref):
                        hit = level.get(id(v))
                        if hit is not None:
                            held.append(("", hit))
            except Exception:
                continue
            module_name = module_dicts.get(id(ref))
            for key, (idx, below) in held:
                if idx in out:
                    continue
                if module_name is not None:
                    out[idx] = (
                        "module",
                        f"module {module_name}",
                        f"{module_name}.{key}{below}",
                        None,
                    )
                elif id(ref) not in nxt_level:
                    nxt_level[id(ref)] = (idx, key + below)
                    nxt.append(ref)
        refs.clear()
        del refs
        objs.clear()
        objs = [o for o in nxt if nxt_level[id(o)][0] not in out]
        ours.add(id(objs))
        level = {id(o): nxt_level[id(o)] for o in objs}
        nxt.clear()
    objs.clear()
    return out


# -- arrays ------------------------------------------------------------------------------

_DTYPES = {
    "float32": "f32",
    "float64": "f64",
    "float16": "f16",
    "bfloat16": "bf16",
    "int8": "s8",
    "int16": "s16",
    "int32": "s32",
    "int64": "s64",
    "uint8": "u8",
    "uint16": "u16",
    "uint32": "u32",
    "uint64": "u64",
    "bool": "pred",
    "complex64": "c64",
    "complex128": "c128",
}


def short_shape(dtype: Any, shape: tuple[int, ...]) -> str:
    name = str(dtype)
    return f"{_DTYPES.get(name, name)}[{','.join(str(d) for d in shape)}]"


def _device_name(d: Any) -> str:
    return f"{d.platform}:{d.id}"


def _layout(
    a: Any, cache: dict[Any, tuple[dict[str, int], str, int]]
) -> tuple[dict[str, int], str, int]:
    key: tuple[Any, Any, Any] | None = (a.sharding, a.shape, a.dtype)
    try:
        hit = cache.get(key)
    except TypeError:
        key, hit = None, None
    if hit is not None:
        return hit
    itemsize = int(a.dtype.itemsize)
    shard = math.prod(a.sharding.shard_shape(a.shape)) * itemsize
    devices: dict[str, int] = {}
    for d in a.sharding.addressable_devices:
        devices[_device_name(d)] = devices.get(_device_name(d), 0) + shard
    value = (devices, short_shape(a.dtype, a.shape), math.prod(a.shape) * itemsize)
    if key is not None:
        cache[key] = value
    return value


def allocator_stats() -> tuple[list[AllocatorStats], str]:
    """The allocator's in-use / peak / limit per local device where ``memory_stats()``
    reports them (GPU, TPU); the CPU backend reports none, and the note says so."""
    out = []
    silent = []
    for d in jax.local_devices():
        try:
            stats = d.memory_stats()
        except Exception:
            stats = None
        if not isinstance(stats, dict):
            silent.append(_device_name(d))
            continue

        def num(k: str, stats: dict[str, Any] = stats) -> int | None:
            v = stats.get(k)
            return int(v) if isinstance(v, (int, float)) and math.isfinite(v) else None

        out.append(
            AllocatorStats(
                _device_name(d), num("bytes_in_use"), num("peak_bytes_in_use"), num("bytes_limit")
            )
        )
    note = ""
    if silent:
        platforms = sorted({s.split(":")[0] for s in silent})
        note = (
            f"the {', '.join(platforms)} backend reports no allocator statistics "
            f"(Device.memory_stats() is None): the figures here are the live arrays' bytes"
        )
    return out, note


def _pointer(a: Any) -> tuple[int, str] | None:
    """A single-device array's buffer address and device; None for others."""
    try:
        if len(a.sharding.device_set) != 1:
            return None
        return int(a.unsafe_buffer_pointer()), str(next(iter(a.sharding.device_set)))
    except Exception:
        return None


def _views_of_placed(
    arrays: list[Any], found: dict[int, list[tuple[int, str, bool]]], left: list[int]
) -> dict[int, int]:
    """Arrays no root reached that are other ``jax.Array`` objects over the buffer of an
    array a root did reach (JAX keeps such views inside the array, out of the collector's
    sight, e.g. after printing one): index -> the reached array's index.  They live and
    go with it."""
    if not left:
        return {}
    wanted = {p: i for i in left if (p := _pointer(arrays[i])) is not None}
    if not wanted:
        return {}
    out: dict[int, int] = {}
    for i in found:
        p = _pointer(arrays[i])
        if p is not None and p in wanted:
            out[wanted.pop(p)] = i
            if not wanted:
                break
    return out


def live_memory(roots: list[Root], budget_s: float = BUDGET_S) -> LiveMemory:
    """Every live array, grouped by the first of ``roots`` (then referrers) that holds it.

    Holds the arrays only while it runs (see the module's docstring)."""
    t0 = time.perf_counter()
    budget = _Budget(budget_s)
    with gc_paused():
        arrays = [a for a in jax.live_arrays() if not a.is_deleted()]
        try:
            return _live_memory(arrays, roots, budget, t0)
        finally:
            arrays.clear()


def _live_memory(arrays: list[Any], roots: list[Root], budget: _Budget, t0: float) -> LiveMemory:
    targets = {id(a): i for i, a in enumerate(arrays)}
    layouts: dict[Any, tuple[dict[str, int], str, int]] = {}
    facts = [_layout(a, layouts) for a in arrays]
    found: dict[int, list[tuple[int, str, bool]]] = {}
    for r, root in enumerate(roots):
        if budget.spent():
            break
        _walk_root(root, targets, found, r, budget)
    left = [i for i in range(len(arrays)) if i not in found]
    views = _views_of_placed(arrays, found, left)
    left = [i for i in left if i not in views]
    others: dict[int, tuple[str, str, str, SourceLine | None]] = {}
    if left and not budget.cut:
        others = _referrer_walk(arrays, left, budget, {id(targets)})
    groups: dict[tuple[str, str], OwnerGroup] = {}
    history_only = traceback_only = 0
    total_devices: dict[str, int] = {}
    total = 0
    for i, (devices, shape, nbytes) in enumerate(facts):
        total += nbytes
        for d, b in devices.items():
            total_devices[d] = total_devices.get(d, 0) + b
        holders = found.get(i if i not in views else views[i])
        if holders:
            r, path, via_fn = holders[0]
            if i in views:  # JAX's own array over a placed array's buffer
                path = f"{path or roots[r].owner} (another jax.Array over its buffer)"
            root = roots[r]
            kind = "closure" if via_fn and root.kind in ("name", "attribute") else root.kind
            if kind == "name" and path != root.path:
                kind = "attribute"
            key = (root.kind, root.owner)
            group = groups.get(key)
            if group is None:
                group = groups[key] = OwnerGroup(kind, root.owner, root.where)
            group.add(HeldArray(path or root.owner, shape, nbytes, devices, len(holders) - 1))
            kinds = {roots[h[0]].kind for h in holders}
            if kinds == {"history"}:
                history_only += nbytes
            if kinds == {"traceback"}:
                traceback_only += nbytes
            continue
        other = others.get(i)
        if other is not None:
            kind, owner, path, where = other
        elif budget.cut:
            kind, owner, path, where = (
                "unplaced",
                "not placed: the walk stopped at its time budget",
                "",
                None,
            )
        else:
            kind, owner, path, where = (
                "unreachable",
                "reachable from nothing the workbench can see",
                "",
                None,
            )
        key = (kind, owner)
        group = groups.get(key)
        if group is None:
            group = groups[key] = OwnerGroup(kind, owner, where)
        group.add(HeldArray(path or f"<{shape}>", shape, nbytes, devices))
    found.clear()
    for g in groups.values():
        g.arrays.sort(key=lambda a: (-a.nbytes, a.path))
    ordered = sorted(groups.values(), key=lambda g: (-g.nbytes, KINDS.index(g.kind), g.owner))
    allocator, note = allocator_stats()
    notes = []
    if budget.cut:
        notes.append(
            f"the walk stopped after {time.perf_counter() - t0:.2g} s ({budget.objects} objects "
            f"visited): arrays it had not placed are listed as not placed"
        )
    return LiveMemory(
        groups=ordered,
        total_arrays=len(facts),
        total_bytes=total,
        devices=total_devices,
        walk_s=time.perf_counter() - t0,
        objects=budget.objects,
        cut_short=budget.cut,
        allocator=allocator,
        allocator_note=note,
        history_only_bytes=history_only,
        traceback_only_bytes=traceback_only,
        notes=notes,
    )


# -- free actions -------------------------------------------------------------------------


def _weak_live_arrays() -> list[tuple[weakref.ref[Any], int]]:
    """A weak reference and the bytes of every live array.  Its own frame: a loop
    variable left bound to the last array would keep that array alive through the caller's
    action (and the action's bytes would be counted short)."""
    out: list[tuple[weakref.ref[Any], int]] = []
    for a in jax.live_arrays():
        if a.is_deleted():
            continue
        try:
            out.append((weakref.ref(a), int(a.nbytes)))
        except TypeError:
            continue
    return out


def freed_by(action: Callable[[], None], name: str) -> Freed:
    """Run ``action`` (which drops references) and measure, with weak references to every
    live array taken before, how many arrays and bytes it freed."""
    gc.collect()  # garbage already unreachable is not the action's to claim
    before = _weak_live_arrays()
    action()
    gc.collect()
    gone = [(r, n) for r, n in before if r() is None]
    return Freed(name, len(gone), sum(n for _, n in gone))


def drop_last_exception() -> bool:
    """Forget the last exception (``sys.last_traceback``, ``last_value``, ``last_type``,
    ``last_exc``); whether there was one."""
    had = (
        getattr(sys, "last_traceback", None) is not None
        or getattr(sys, "last_value", None) is not None
    )
    for attr in ("last_type", "last_value", "last_traceback", "last_exc"):
        if hasattr(sys, attr):
            try:
                delattr(sys, attr)
            except AttributeError:
                pass
    return had


__all__ = [
    "BUDGET_S",
    "KINDS",
    "SCHEMA_VERSION",
    "AllocatorStats",
    "Freed",
    "HeldArray",
    "LiveMemory",
    "OwnerGroup",
    "Root",
    "allocator_stats",
    "drop_last_exception",
    "freed_by",
    "history_roots",
    "live_memory",
    "namespace_roots",
    "short_shape",
    "traceback_roots",
]
