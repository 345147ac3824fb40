"""Collectives of a compiled SPMD program, named by the mesh axes they run over.

The HLO model (:func:`workbench.engine.hlo.graph.find_collectives`) gives each
collective's replica groups as lists of *partition ids* (iota forms expanded).
Newer XLA prints a third form, ``replica_groups=mesh['axis_0'=2,'axis_1'=4] {'axis_1'}``
(optionally with ``device_ids=([2,4]T(1,0))``), over XLA's own mesh axes; the HLO
model expands that too (:func:`~workbench.engine.hlo.graph.expand_mesh_groups`).  Then :func:`axes_of_groups` answers the question a user asks, "over
which of *my* mesh axes?": partition id ``k`` is mesh position ``k`` (row-major),
because a jit over a ``NamedSharding`` assigns devices in the mesh's flat order.

Pure functions of (mesh, groups); nothing here talks to JAX.
"""

from __future__ import annotations

import itertools
from dataclasses import dataclass
from typing import Any

import numpy as np

from workbench.engine.common.source import SourceLine
from workbench.engine.hlo.graph import Collective, expand_mesh_groups, find_collectives
from workbench.engine.hlo.model import HloModule
from workbench.engine.sharding.layout import MeshInfo

#: collectives whose result depends on the order of the devices within a group (which
#: block lands where), so ('a', 'c') and ('c', 'a') are different operations
ORDERED_KINDS = ("all-gather", "reduce-scatter", "all-to-all", "ragged-all-to-all")


def axes_of_groups(
    groups: list[list[int]], mesh: MeshInfo, ordered: bool = False
) -> list[str] | None:
    """The mesh axes whose positions vary within each group, if the groups are exactly that.

    ``[]`` (XLA's "one group of everything") is all axes.  Axes of size 1 are never
    named.  ``None`` means the groups do not line up with any set of mesh axes.
    With ``ordered`` (all-gather, reduce-scatter, all-to-all) the axes come major
    first as the order *within* each group walks them: groups over ('c', 'a') list
    their members c-major, and that is the order the shards are concatenated in.
    """
    n = mesh.size
    if not groups:
        return [a for a, s in zip(mesh.axis_names, mesh.axis_sizes, strict=False) if s > 1]
    given = {frozenset(g) for g in groups}
    if any(i < 0 or i >= n for g in groups for i in g):
        return None
    if all(len(g) == 1 for g in groups):
        return []
    big = [i for i, s in enumerate(mesh.axis_sizes) if s > 1]
    grid = np.arange(n).reshape(mesh.axis_sizes)
    for r in range(1, len(big) + 1):
        for over in itertools.combinations(big, r):
            rest = [i for i in range(len(mesh.axis_sizes)) if i not in over]
            size = int(np.prod([mesh.axis_sizes[i] for i in over]))
            expected = {
                frozenset(g)
                for g in np.transpose(grid, rest + list(over)).reshape(-1, size).tolist()
            }
            if expected == given:
                if ordered and r > 1:
                    return _walk_order(groups, grid, rest, over, size, mesh)
                return [mesh.axis_names[i] for i in over]
    return None


def _walk_order(
    groups: list[list[int]],
    grid: Any,
    rest: list[int],
    over: tuple[int, ...],
    size: int,
    mesh: MeshInfo,
) -> list[str]:
    """The permutation of ``over`` whose row-major walk lists every group in its order."""
    given = {tuple(g) for g in groups}
    for perm in itertools.permutations(over):
        walked = {
            tuple(g) for g in np.transpose(grid, rest + list(perm)).reshape(-1, size).tolist()
        }
        if walked == given:
            return [mesh.axis_names[i] for i in perm]
    return [mesh.axis_names[i] for i in over]  # an order no axis walk gives: mesh order


def axes_of_pairs(pairs: list[list[int]], mesh: MeshInfo) -> list[str] | None:
    """The mesh axes along which a collective-permute moves data (coordinates that differ)."""
    n = mesh.size
    if any(len(p) != 2 or not (0 <= p[0] < n and 0 <= p[1] < n) for p in pairs):
        return None
    differ: set[int] = set()
    for src, dst in pairs:
        a, b = mesh.coords(src), mesh.coords(dst)
        differ.update(i for i, (x, y) in enumerate(zip(a, b, strict=False)) if x != y)
    return [mesh.axis_names[i] for i in sorted(differ)]


def _quoted(axes: list[str]) -> str:
    return ", ".join(repr(a) for a in axes)


@dataclass(slots=True)
class MeshCollective:
    """A collective the SPMD partitioner inserted, in the user's mesh terms."""

    kind: str
    shape: str
    bytes: int  # of the result, on each device
    axes: list[str] | None  # None: the groups match no set of mesh axes
    groups: list[list[int]] | None  # device ids (not partition ids)
    pairs: list[list[int]] | None  # collective-permute: device id pairs
    name: str = ""
    op_name: str = ""
    source: SourceLine | None = None

    @property
    def description(self) -> str:
        if self.axes is None:
            if self.groups is not None:
                return (
                    f"{self.kind} over device groups "
                    + " ".join("{" + ",".join(map(str, g)) + "}" for g in self.groups[:4])
                    + (" ..." if len(self.groups) > 4 else "")
                )
            return f"{self.kind} (groups not reported)"
        if not self.axes:
            return f"{self.kind} within each device (no mesh axis)"
        word = "along" if self.kind == "collective-permute" else "over"
        return f"{self.kind} {word} {_quoted(self.axes)}"

    @property
    def key(self) -> tuple[str, tuple[str, ...] | None, str]:
        """What makes two collectives 'the same' when comparing two compiles."""
        return (self.kind, None if self.axes is None else tuple(self.axes), self.shape)

    def to_dict(self) -> dict[str, Any]:
        return {
            "kind": self.kind,
            "shape": self.shape,
            "bytes": self.bytes,
            "axes": self.axes,
            "description": self.description,
            "groups": self.groups,
            "pairs": self.pairs,
            "name": self.name,
            "op_name": self.op_name,
            "source": None if self.source is None else self.source.to_dict(),
        }


def _groups_of(c: Collective, attrs: dict[str, str]) -> list[list[int]] | None:
    if c.replica_groups is not None:
        return c.replica_groups
    text = attrs.get("replica_groups", c.groups_text)
    if text:
        return expand_mesh_groups(text, attrs.get("device_ids", ""))
    if c.kind != "collective-permute":
        return []  # no replica_groups attribute: XLA's default, every partition in one group
    return None


def mesh_collectives(module: HloModule, mesh: MeshInfo) -> list[MeshCollective]:
    """Every collective of ``module`` (compiled for ``mesh``), translated to mesh axes."""
    attrs = {ins.name: ins.attrs for ins in module.instructions()}
    out = []
    for c in find_collectives(module):
        groups = _groups_of(c, attrs.get(c.name, {}))
        axes: list[str] | None = None
        dev_groups = dev_pairs = None
        ids = mesh.device_ids
        if c.kind == "collective-permute" and c.source_target_pairs is not None:
            axes = axes_of_pairs(c.source_target_pairs, mesh)
            if axes is not None:
                dev_pairs = [[ids[a], ids[b]] for a, b in c.source_target_pairs]
        elif groups is not None:
            axes = axes_of_groups(groups, mesh, ordered=c.kind in ORDERED_KINDS)
            in_range = all(0 <= i < len(ids) for g in groups for i in g)
            if in_range:
                dev_groups = [[ids[i] for i in g] for g in groups] if groups else [list(ids)]
        out.append(
            MeshCollective(
                kind=c.kind,
                shape=c.shape,
                bytes=c.bytes,
                axes=axes,
                groups=dev_groups,
                pairs=dev_pairs,
                name=c.name,
                op_name=c.op_name,
                source=c.source,
            )
        )
    return out


__all__ = [
    "ORDERED_KINDS",
    "MeshCollective",
    "axes_of_groups",
    "axes_of_pairs",
    "expand_mesh_groups",
    "mesh_collectives",
]
