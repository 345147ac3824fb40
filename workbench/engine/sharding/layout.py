"""How an array is cut into shards and which devices hold each shard.

Two ways to the same record, :class:`Layout`:

* :func:`layout_of_sharding` / :func:`layout_of` read a live ``jax.Array`` (or any
  ``jax.sharding.Sharding`` with a shape) through ``Sharding.devices_indices_map``:
  JAX's own answer, so ``SingleDeviceSharding``, ``GSPMDSharding`` and meshes with
  any device order are drawn exactly as JAX places them.
* :func:`plan_layout` computes the geometry from a mesh and a PartitionSpec alone
  (no devices needed), with XLA's padding rule for shards that do not divide the
  dimension.  The mesh explorer and the 512-device picture use it; the tests check
  it against ``devices_indices_map`` wherever JAX accepts the spec.

Records are plain dataclasses; ``to_dict`` is the JSON MIME payload.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from typing import Any

import numpy as np

LAYOUT_VERSION = 1


class ShardingInputError(ValueError):
    """A mesh, spec or shape a user typed that cannot describe a layout (short message)."""


@dataclass(slots=True)
class MeshInfo:
    """A device mesh: axis names, sizes and types, and the device id at each position."""

    axis_names: list[str]
    axis_sizes: list[int]
    axis_types: list[str]  # "Auto" | "Explicit" | "Manual" (one per axis)
    device_ids: list[int]  # flattened in mesh order (row-major over the axes)

    @property
    def size(self) -> int:
        return int(math.prod(self.axis_sizes))

    def coords(self, position: int) -> list[int]:
        return (
            [int(c) for c in np.unravel_index(position, self.axis_sizes)] if self.axis_sizes else []
        )

    def to_dict(self) -> dict[str, Any]:
        return {
            "axis_names": list(self.axis_names),
            "axis_sizes": list(self.axis_sizes),
            "axis_types": list(self.axis_types),
            "device_ids": list(self.device_ids),
        }


@dataclass(slots=True)
class DeviceInfo:
    """One device: which process owns it, and whether this process can address it."""

    id: int
    process: int = 0
    kind: str = ""
    addressable: bool = True
    coords: list[int] | None = None  # position in the mesh, when there is one

    def to_dict(self) -> dict[str, Any]:
        return {
            "id": self.id,
            "process": self.process,
            "kind": self.kind,
            "addressable": self.addressable,
            "coords": self.coords,
        }


@dataclass(slots=True)
class Shard:
    """One distinct block of the array and every device holding a copy of it.

    ``start``/``stop`` bound the valid data (clamped to the array, so a block past
    the end has ``start == stop``); ``block_start``/``padded_stop`` bound the whole
    block as if the dimension divided evenly.  XLA pads uneven shards to that size,
    so every device holds ``padded_shape``, and a block lying wholly past the end
    is all padding: it must keep its own place (``block_start``), or several such
    blocks would be drawn on top of each other and counted ever larger.
    """

    start: list[int]
    stop: list[int]
    padded_stop: list[int]
    devices: list[int]
    block_start: list[int] | None = None  # None: the block starts where its data does

    @property
    def origin(self) -> list[int]:
        """Where the block (data and padding) begins along each dimension."""
        return self.start if self.block_start is None else self.block_start

    @property
    def shape(self) -> list[int]:
        return [max(0, b - a) for a, b in zip(self.start, self.stop, strict=False)]

    @property
    def padded_shape(self) -> list[int]:
        return [b - a for a, b in zip(self.origin, self.padded_stop, strict=False)]

    @property
    def padded(self) -> bool:
        return self.padded_stop != self.stop

    @property
    def only_padding(self) -> bool:
        """No valid data at all: the block lies past the end of a padded dimension."""
        return self.padded and any(n == 0 for n in self.shape)

    def index_text(self) -> str:
        if not self.start:
            return "[]"
        return (
            "[" + ", ".join(f"{a}:{b}" for a, b in zip(self.start, self.stop, strict=False)) + "]"
        )

    def to_dict(self, *, bits: int) -> dict[str, Any]:
        return {
            "start": self.start,
            "stop": self.stop,
            "block_start": self.origin,
            "padded_stop": self.padded_stop,
            "shape": self.shape,
            "padded_shape": self.padded_shape,
            "only_padding": self.only_padding,
            "bytes": shard_bytes(self.padded_shape, bits),
            "devices": self.devices,
        }


def shard_bytes(shape: list[int], bits: int) -> int:
    """Bytes of ``shape`` elements of ``bits`` each (sub-byte types pack, rounded up)."""
    return -(-int(math.prod(shape)) * bits // 8)


def dtype_bits(dtype: Any) -> tuple[str, int]:
    """A dtype's name and its storage width in bits per element.

    Sub-byte types (int4, float4_e2m1fn, ...) count their real width, not numpy's
    one-byte ``itemsize``.  Extended dtypes (typed PRNG keys, ``key<fry>``) are not
    numpy dtypes at all: their storage is ``jax.random.key_data``'s, whose trailing
    shape and dtype give the bits per key.
    """
    import jax

    if jax.dtypes.issubdtype(dtype, jax.dtypes.extended):
        data = jax.eval_shape(jax.random.key_data, jax.ShapeDtypeStruct((), dtype))
        return str(dtype), int(math.prod(data.shape)) * dtype_bits(data.dtype)[1]
    dt = np.dtype(dtype)
    bits_of = getattr(jax.dtypes, "itemsize_bits", None)
    bits = int(bits_of(dt)) if bits_of is not None else dt.itemsize * 8
    return dt.name, bits


@dataclass(slots=True)
class Layout:
    """An array's shape and dtype, its sharding, and the shards with their devices."""

    kind: str  # "named" | "single" | "gspmd" | other sharding class names, lowercased
    shape: list[int]
    dtype: str
    bits: int  # storage bits per element (int4: 4; a threefry key: 64)
    sharding_text: str
    shards: list[Shard]
    devices: list[DeviceInfo]
    mesh: MeshInfo | None = None
    spec: list[list[str]] | None = None  # per array dimension: mesh axes splitting it
    path: str = ""  # pytree path of this leaf ("" for a lone array)
    process_index: int = 0  # the process that built this record
    notes: list[str] = field(default_factory=list)
    #: mesh axes of the spec's ``unreduced``/``reduced`` sets (newer JAX): along unreduced
    #: ones devices hold partial sums, not copies (in the notes and the spec's text)
    unreduced: list[str] = field(default_factory=list)
    reduced: list[str] = field(default_factory=list)

    @property
    def itemsize(self) -> float:
        """Bytes per element (0.5 for int4)."""
        return self.bits / 8

    @property
    def empty(self) -> bool:
        """A dimension of size 0: no device holds any data, whatever the spec says."""
        return any(n == 0 for n in self.shape)

    @property
    def uneven(self) -> bool:
        return any(s.padded for s in self.shards)

    @property
    def fully_replicated(self) -> bool:
        if self.empty and self.mesh is not None and self.spec is not None:
            return self.replication == self.mesh.size > 1
        return len(self.shards) == 1 and len(self.devices) > 1

    @property
    def replication(self) -> int:
        """How many devices hold each shard (the same for every shard in a mesh layout).

        For an empty array every index box is empty, so boxes of different shards
        coincide; with a mesh the answer then comes from the spec (devices per
        block), not from counting equal boxes.
        """
        if self.empty and self.mesh is not None and self.spec is not None:
            return max(1, self.mesh.size // max(1, math.prod(split_counts(self.mesh, self.spec))))
        return max((len(s.devices) for s in self.shards), default=1)

    @property
    def replicated_axes(self) -> list[str]:
        if self.mesh is None or self.spec is None:
            return []
        used = {a for entry in self.spec for a in entry} | set(self.unreduced)
        return [
            a
            for a, n in zip(self.mesh.axis_names, self.mesh.axis_sizes, strict=False)
            if a not in used and n > 1
        ]

    @property
    def spec_text(self) -> str:
        if self.spec is None:
            return ""
        text = spec_text(self.spec)
        sets = [
            f"{name}={{{', '.join(repr(a) for a in axes)}}}"
            for name, axes in (("unreduced", self.unreduced), ("reduced", self.reduced))
            if axes
        ]
        if sets:  # as JAX writes it: P('X', unreduced={'Y'})
            text = text[:-1] + (", " if text != "P()" else "") + ", ".join(sets) + ")"
        return text

    def device(self, device_id: int) -> DeviceInfo | None:
        for d in self.devices:
            if d.id == device_id:
                return d
        return None

    def shard_of(self) -> dict[int, int]:
        """device id -> index of the shard it holds."""
        return {d: i for i, s in enumerate(self.shards) for d in s.devices}

    def to_dict(self) -> dict[str, Any]:
        return {
            "kind": self.kind,
            "path": self.path,
            "shape": self.shape,
            "dtype": self.dtype,
            "itemsize": self.itemsize,
            "bits": self.bits,
            "empty": self.empty,
            "sharding": self.sharding_text,
            "mesh": None if self.mesh is None else self.mesh.to_dict(),
            "spec": self.spec,
            "spec_text": self.spec_text,
            "replicated_axes": self.replicated_axes,
            "replication": self.replication,
            "fully_replicated": self.fully_replicated,
            "uneven": self.uneven,
            "process_index": self.process_index,
            "shards": [s.to_dict(bits=self.bits) for s in self.shards],
            "devices": [d.to_dict() for d in self.devices],
            "notes": list(self.notes),
        }


# -- PartitionSpec entries ----------------------------------------------------------------
def spec_entries(spec: Any, ndim: int) -> list[list[str]]:
    """A ``PartitionSpec`` (or list of entries) as one list of axis names per dimension.

    ``None`` -> ``[]``; ``'x'`` -> ``['x']``; ``('x', 'y')`` -> ``['x', 'y']`` (major first).
    A spec shorter than the rank leaves the trailing dimensions unsplit.
    """
    entries: list[list[str]] = []
    if not isinstance(spec, (list, tuple)) or type(spec).__name__ == "PartitionSpec":
        from workbench.engine import _jax_compat as compat

        spec = compat.spec_parts(spec)[0]  # a P with unreduced={...} refuses tuple(spec)
    for e in tuple(spec):
        if e is None:
            entries.append([])
        elif isinstance(e, (tuple, list)):
            entries.append([str(a) for a in e])
        elif isinstance(e, str):
            entries.append([e])
        else:  # P.UNCONSTRAINED and friends: leave to JAX, draw as unsplit
            entries.append([])
    if len(entries) > ndim:
        raise ShardingInputError(
            f"the PartitionSpec has {len(entries)} entries but the array has rank {ndim}"
        )
    return entries + [[] for _ in range(ndim - len(entries))]


def spec_text(entries: list[list[str]]) -> str:
    def one(e: list[str]) -> str:
        if not e:
            return "None"
        if len(e) == 1:
            return repr(e[0])
        return "(" + ", ".join(repr(a) for a in e) + ")"

    while entries and not entries[-1]:
        entries = entries[:-1]
    return "P(" + ", ".join(one(e) for e in entries) + ")"


def check_spec(mesh: MeshInfo, entries: list[list[str]]) -> None:
    """Unknown axis names and axes used twice are errors before any geometry."""
    seen: dict[str, int] = {}
    for dim, entry in enumerate(entries):
        for axis in entry:
            if axis not in mesh.axis_names:
                names = ", ".join(repr(a) for a in mesh.axis_names) or "(none)"
                raise ShardingInputError(
                    f"unknown mesh axis {axis!r} in dimension {dim}; the mesh has {names}"
                )
            if axis in seen:
                where = "dimension" if seen[axis] == dim else "dimensions"
                dims = f"{seen[axis]}" if seen[axis] == dim else f"{seen[axis]} and {dim}"
                raise ShardingInputError(
                    f"mesh axis {axis!r} is used twice ({where} {dims}); each mesh axis can "
                    f"split at most one dimension, once"
                )
            seen[axis] = dim


def split_counts(mesh: MeshInfo, entries: list[list[str]]) -> list[int]:
    sizes = dict(zip(mesh.axis_names, mesh.axis_sizes, strict=False))
    return [int(math.prod(sizes[a] for a in e)) for e in entries]


def indivisible(mesh: MeshInfo, entries: list[list[str]], shape: list[int]) -> str:
    """'' when every split divides its dimension, else a message that shows the padding."""
    for dim, (n, size, entry) in enumerate(
        zip(split_counts(mesh, entries), shape, entries, strict=False)
    ):
        if n > 1 and size % n:
            chunk = -(-size // n)
            last = size - chunk * (n - 1)
            by = " x ".join(repr(a) for a in entry)
            tail = (
                f"XLA would pad it to {chunk * n} inside jit: shards of {chunk}, "
                f"the last holding {last}"
                if last > 0
                else f"{n - math.ceil(size / chunk)} shard(s) would hold only padding"
            )
            return (
                f"dimension {dim} (size {size}) is split {n} ways by {by}, and {size} is not "
                f"a multiple of {n}; a jax.Array needs even shards ({tail})"
            )
    return ""


def plan_layout(
    mesh: MeshInfo,
    spec: Any,
    shape: list[int] | tuple[int, ...],
    dtype: Any = "float32",
    devices: list[DeviceInfo] | None = None,
) -> Layout:
    """The layout ``NamedSharding(mesh, spec)`` gives an array of ``shape``, computed directly.

    Mesh position ``p`` (row-major over the axes) holds, along each dimension split by
    axes ``(a, b, ...)``, block number ``coord[a] * size[b] * ... + coord[b] * ...``
    (the first axis is the major one), each block ``ceil(size / splits)`` long.
    """
    shape = [int(s) for s in shape]
    entries = (
        spec
        if isinstance(spec, list) and all(isinstance(e, list) for e in spec)
        else spec_entries(spec, len(shape))
    )
    entries = entries + [[] for _ in range(len(shape) - len(entries))]
    if len(entries) > len(shape):
        raise ShardingInputError(
            f"the PartitionSpec has {len(entries)} entries but the array has rank {len(shape)}"
        )
    check_spec(mesh, entries)
    counts = split_counts(mesh, entries)
    chunks = [-(-s // n) if n else s for s, n in zip(shape, counts, strict=False)]
    axis_pos = {a: i for i, a in enumerate(mesh.axis_names)}
    sizes = mesh.axis_sizes
    positions = np.arange(mesh.size)
    coords = np.array(np.unravel_index(positions, sizes)) if sizes else np.zeros((0, 1), int)
    blocks = []
    for entry in entries:
        b = np.zeros(mesh.size, dtype=np.int64)
        for axis in entry:
            i = axis_pos[axis]
            b = b * sizes[i] + coords[i]
        blocks.append(b)
    by_index: dict[tuple[int, ...], list[int]] = {}
    for p in range(mesh.size):
        key = tuple(int(b[p]) for b in blocks)
        by_index.setdefault(key, []).append(mesh.device_ids[p])
    shards = []
    for key in sorted(by_index):
        # The block keeps its unclamped place and extent; only the data is clamped.
        block = [k * c for k, c in zip(key, chunks, strict=False)]
        padded = [a + c for a, c in zip(block, chunks, strict=False)]
        stop = [min(p, s) for p, s in zip(padded, shape, strict=False)]
        start = [min(a, s) for a, s in zip(block, shape, strict=False)]
        shards.append(Shard(start, stop, padded, by_index[key], None if block == start else block))
    name, bits = dtype_bits(dtype)
    if devices is None:
        devices = [DeviceInfo(d, coords=mesh.coords(p)) for p, d in enumerate(mesh.device_ids)]
    return Layout(
        kind="named",
        shape=shape,
        dtype=name,
        bits=bits,
        sharding_text=f"NamedSharding({mesh_text(mesh)}, {spec_text(entries)})",
        shards=shards,
        devices=devices,
        mesh=mesh,
        spec=entries,
    )


def mesh_text(mesh: MeshInfo) -> str:
    axes = ", ".join(f"{a!r}: {n}" for a, n in zip(mesh.axis_names, mesh.axis_sizes, strict=False))
    types = ", ".join(mesh.axis_types)
    return f"Mesh({axes}; {types})" if axes else "Mesh()"


# -- from JAX objects ---------------------------------------------------------------------
def _type_name(t: Any) -> str:
    name = getattr(t, "name", None) or str(t)
    return name.rsplit(".", 1)[-1]


def mesh_info(mesh: Any) -> MeshInfo:
    """A ``jax.sharding.Mesh`` as a :class:`MeshInfo` (axis types default to Auto)."""
    names = [str(a) for a in mesh.axis_names]
    sizes = [int(n) for n in mesh.devices.shape]
    types = getattr(mesh, "axis_types", None) or ("Auto",) * len(names)
    return MeshInfo(
        names, sizes, [_type_name(t) for t in types], [int(d.id) for d in mesh.devices.flat]
    )


def device_info(device: Any, process_index: int, coords: list[int] | None = None) -> DeviceInfo:
    proc = int(getattr(device, "process_index", 0))
    return DeviceInfo(
        int(device.id), proc, str(getattr(device, "device_kind", "")), proc == process_index, coords
    )


def _kind_of(sharding: Any) -> str:
    name = type(sharding).__name__
    return {
        "NamedSharding": "named",
        "SingleDeviceSharding": "single",
        "GSPMDSharding": "gspmd",
        "PositionalSharding": "positional",
    }.get(name, name.lower())


def _bounds(index: tuple[Any, ...], shape: list[int]) -> tuple[list[int], list[int]]:
    start, stop = [], []
    for sl, size in zip(index, shape, strict=False):
        a, b, _ = sl.indices(size) if isinstance(sl, slice) else (int(sl), int(sl) + 1, 1)
        start.append(a)
        stop.append(b)
    return start, stop


def layout_of_sharding(
    sharding: Any, shape: tuple[int, ...] | list[int], dtype: Any, path: str = ""
) -> Layout:
    """The layout JAX itself gives ``shape`` under ``sharding`` (``devices_indices_map``)."""
    import jax

    shape = [int(s) for s in shape]
    me = jax.process_index()
    mesh = None
    entries = None
    coords: dict[int, list[int]] = {}
    notes = []
    placed = sharding
    unreduced: frozenset[str] = frozenset()
    reduced: frozenset[str] = frozenset()
    if type(sharding).__name__ == "NamedSharding" and not getattr(sharding.mesh, "empty", False):
        from workbench.engine import _jax_compat as compat

        mesh = mesh_info(sharding.mesh)
        entries = spec_entries(sharding.spec, len(shape))
        coords = {d: mesh.coords(p) for p, d in enumerate(mesh.device_ids)}
        partitions, unreduced, reduced = compat.spec_parts(sharding.spec)
        if unreduced or reduced:
            # JAX places no index map for these ("doesn't work with unreduced"); the blocks
            # are those of the partitions alone, what differs is what each copy holds
            placed = jax.sharding.NamedSharding(
                sharding.mesh, jax.sharding.PartitionSpec(*partitions)
            )
            notes.extend(_reduction_notes(mesh, unreduced, reduced))
    imap = placed.devices_indices_map(tuple(shape))
    by_index: dict[tuple[tuple[int, ...], tuple[int, ...]], list[Any]] = {}
    for dev, index in imap.items():
        start, stop = _bounds(tuple(index), shape)
        by_index.setdefault((tuple(start), tuple(stop)), []).append(dev)
    order = mesh.device_ids if mesh is not None else None
    shards = []
    for (lo, hi), devs in sorted(by_index.items()):
        ids = [int(d.id) for d in devs]
        if order is not None:
            ids.sort(key=order.index)
        shards.append(Shard(list(lo), list(hi), list(hi), ids))
    all_devs = list(imap.keys())
    if mesh is not None:
        pos = {d: p for p, d in enumerate(mesh.device_ids)}
        all_devs.sort(key=lambda d: pos.get(int(d.id), 0))
    devices = [device_info(d, me, coords.get(int(d.id))) for d in all_devs]
    name, bits = dtype_bits(dtype)
    if any(not d.addressable for d in devices):
        mine = sum(d.addressable for d in devices)
        notes.append(
            f"process {me} addresses {mine} of {len(devices)} devices; "
            f"the others belong to other processes"
        )
    return Layout(
        kind=_kind_of(sharding),
        shape=shape,
        dtype=name,
        bits=bits,
        sharding_text=str(sharding),
        shards=shards,
        devices=devices,
        mesh=mesh,
        spec=entries,
        path=path,
        process_index=me,
        notes=notes,
        unreduced=[a for a in (mesh.axis_names if mesh else []) if a in unreduced],
        reduced=[a for a in (mesh.axis_names if mesh else []) if a in reduced],
    )


def _reduction_notes(
    mesh: MeshInfo, unreduced: frozenset[str], reduced: frozenset[str]
) -> list[str]:
    """What an ``unreduced``/``reduced`` set of a PartitionSpec means for the shards drawn."""
    sizes = dict(zip(mesh.axis_names, mesh.axis_sizes, strict=False))

    def axes(names: frozenset[str]) -> tuple[str, int]:
        ordered = [a for a in mesh.axis_names if a in names] + sorted(names - set(sizes))
        return ", ".join(repr(a) for a in ordered), int(math.prod(sizes.get(a, 1) for a in ordered))

    notes = []
    if unreduced:
        text, n = axes(unreduced)
        notes.append(
            f"unreduced over {text}: the {n} devices along it hold partial sums of each block, "
            f"not copies; the array's value is their sum (JAX adds them when it needs the value)"
        )
    if reduced:
        text, n = axes(reduced)
        notes.append(f"reduced over {text}: the {n} devices along it hold copies of each block")
    return notes


def layout_of(x: Any, path: str = "") -> Layout:
    """The layout of a live ``jax.Array`` (or a ``ShapeDtypeStruct`` that has a sharding)."""
    sharding = getattr(x, "sharding", None)
    if sharding is None or not hasattr(x, "shape") or not hasattr(x, "dtype"):
        what = type(x).__name__
        hint = (
            " (it lives on the host: jax.device_put puts it on devices)"
            if isinstance(x, np.ndarray)
            else ""
        )
        article = "an" if what[:1].lower() in "aeiou" else "a"
        raise ShardingInputError(
            f"{path or 'the value'} is {article} {what}, not a jax.Array with a sharding{hint}"
        )
    layout = layout_of_sharding(sharding, x.shape, x.dtype, path)
    if getattr(x, "is_deleted", lambda: False)():
        layout.notes.append(
            "this array has been deleted (donated?): its data is gone, the layout is what it was"
        )
    return layout


def layouts_of_tree(tree: Any) -> list[Layout]:
    """One :class:`Layout` per array leaf of a pytree, labelled by its key path."""
    import jax

    leaves, _ = jax.tree_util.tree_flatten_with_path(tree)
    out = []
    skipped = []
    for keypath, leaf in leaves:
        path = jax.tree_util.keystr(keypath)
        if getattr(leaf, "sharding", None) is not None and hasattr(leaf, "shape"):
            out.append(layout_of(leaf, path))
        else:
            skipped.append(f"{path or 'value'} ({type(leaf).__name__})")
    if not out:
        if not leaves:
            raise ShardingInputError("the value is an empty pytree: no arrays to show")
        if len(leaves) == 1 and not skipped[0].startswith("["):
            layout_of(leaves[0][1])  # raises the single-value message
        raise ShardingInputError(
            f"the value (a {type(tree).__name__}) holds no jax.Array; "
            f"its leaves: " + ", ".join(skipped[:6])
        )
    if skipped:
        out[0].notes.append(
            "not arrays, left out: " + ", ".join(skipped[:6]) + (" ..." if len(skipped) > 6 else "")
        )
    return out


__all__ = [
    "LAYOUT_VERSION",
    "DeviceInfo",
    "Layout",
    "MeshInfo",
    "Shard",
    "ShardingInputError",
    "check_spec",
    "dtype_bits",
    "indivisible",
    "layout_of",
    "layout_of_sharding",
    "layouts_of_tree",
    "mesh_info",
    "mesh_text",
    "plan_layout",
    "shard_bytes",
    "spec_entries",
    "spec_text",
    "split_counts",
]
