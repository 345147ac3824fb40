"""Dataflow graphs and collectives from a parsed HLO module.

A fusion diagram is the dataflow graph of one non-fused computation (the entry,
or a ``while``/``conditional``/``call`` body) in which every instruction is one
node: a fusion is a node labelled with its kind and the operations fused inside
it, a library call (``dot``, ``convolution``, ``custom-call``) is its own kind,
and so on.  Each node carries the Python lines and jaxpr primitives it came
from, gathered from the ``metadata`` of the instruction and of everything fused
into it, so a user can go from "this fusion is heavy" to "that line of my cell".

Bytes moved are an *estimate* from shapes (operands read + result written),
not a measurement; the views say so.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from workbench.engine.common.source import SourceLine
from workbench.engine.hlo.model import (
    COLLECTIVE_OPCODES,
    HloComputation,
    HloInstruction,
    HloModule,
)

FUSION_KINDS = {
    "kLoop": "loop",
    "kInput": "input (reduction)",
    "kOutput": "output",
    "kCustom": "custom",
}
LIBRARY_OPCODES = {"dot", "convolution", "custom-call", "fft", "triangular-solve", "cholesky"}
CONTROL_OPCODES = {"while", "conditional", "call", "async-start", "async-done"}
#: instructions that move no data of their own (views draw them small)
PLUMBING_OPCODES = {
    "parameter",
    "constant",
    "tuple",
    "get-tuple-element",
    "bitcast",
    "after-all",
    "partition-id",
    "replica-id",
    "iota",
}
#: left out of a fusion's "ops fused inside" list unless nothing else is there
_QUIET_FUSED = {"parameter", "constant", "tuple", "get-tuple-element", "bitcast", "broadcast"}


@dataclass(slots=True)
class GraphNode:
    id: str
    kind: str  # parameter | fusion | library | collective | control | constant | plumbing | op
    opcode: str
    label: str
    shape: str
    bytes: int
    bytes_moved: int
    fusion_kind: str = ""
    fused_ops: list[str] = field(default_factory=list)
    primitives: list[str] = field(default_factory=list)
    sources: list[SourceLine] = field(default_factory=list)
    source_lost: bool = False
    is_output: bool = False
    param_index: int | None = None
    called: list[str] = field(default_factory=list)  # control-flow bodies (sub-diagrams)
    op_name: str = ""

    def to_dict(self) -> dict[str, Any]:
        d: dict[str, Any] = {
            "id": self.id,
            "kind": self.kind,
            "opcode": self.opcode,
            "label": self.label,
            "shape": self.shape,
            "bytes": self.bytes,
            "bytes_moved": self.bytes_moved,
        }
        if self.fusion_kind:
            d["fusion_kind"] = self.fusion_kind
        if self.fused_ops:
            d["fused_ops"] = self.fused_ops
        if self.primitives:
            d["primitives"] = self.primitives
        if self.sources:
            d["sources"] = [s.to_dict() for s in self.sources]
        if self.source_lost:
            d["source_lost"] = True
        if self.is_output:
            d["output"] = True
        if self.param_index is not None:
            d["param_index"] = self.param_index
        if self.called:
            d["called"] = self.called
        if self.op_name:
            d["op_name"] = self.op_name
        return d


@dataclass(slots=True)
class GraphEdge:
    src: str
    dst: str
    shape: str
    bytes: int

    def to_dict(self) -> dict[str, Any]:
        return {"src": self.src, "dst": self.dst, "shape": self.shape, "bytes": self.bytes}


@dataclass(slots=True)
class GraphOrigin:
    """What made a called computation (a ``while`` body or condition, a ``cond`` branch, a
    ``call``): the user's function it runs (``step`` for ``lax.scan(step, ...)``) and the
    line of the call that made it (the ``lax.scan``/``while_loop``/``cond``), when known."""

    name: str
    source: SourceLine | None = None

    def to_dict(self) -> dict[str, Any]:
        d: dict[str, Any] = {"name": self.name}
        if self.source is not None:
            d["source"] = self.source.to_dict()
        return d


@dataclass(slots=True)
class DataflowGraph:
    computation: str
    nodes: list[GraphNode]
    edges: list[GraphEdge]
    origin: GraphOrigin | None = None

    @property
    def fusion_count(self) -> int:
        return sum(1 for n in self.nodes if n.kind == "fusion")

    def to_dict(self) -> dict[str, Any]:
        d: dict[str, Any] = {
            "computation": self.computation,
            "nodes": [n.to_dict() for n in self.nodes],
            "edges": [e.to_dict() for e in self.edges],
        }
        if self.origin is not None:
            d["origin"] = self.origin.to_dict()
        return d


class _Gather:
    """Sources, primitives and fused opcodes of a computation, recursively, memoised."""

    def __init__(self, module: HloModule) -> None:
        self.module = module
        self._memo: dict[str, tuple[list[SourceLine], list[str], list[str]]] = {}

    def of(self, comp_name: str) -> tuple[list[SourceLine], list[str], list[str]]:
        if comp_name in self._memo:
            return self._memo[comp_name]
        self._memo[comp_name] = ([], [], [])  # cycle guard
        comp = self.module.by_name.get(comp_name)
        sources: dict[tuple[str, int], SourceLine] = {}
        prims: dict[str, None] = {}
        ops: dict[str, None] = {}
        if comp is not None:
            for ins in comp.instructions:
                _add_own(ins, sources, prims)
                if ins.opcode == "fusion":
                    for c in ins.called:
                        s, p, o = self.of(c)
                        for loc in s:
                            sources.setdefault((loc.file, loc.line), loc)
                        prims.update(dict.fromkeys(p))
                        ops.update(dict.fromkeys(o))
                else:
                    ops[ins.opcode] = None
        result = (list(sources.values()), list(prims), list(ops))
        self._memo[comp_name] = result
        return result


def _add_own(
    ins: HloInstruction, sources: dict[tuple[str, int], SourceLine], prims: dict[str, None]
) -> None:
    if ins.opcode == "parameter":
        return  # a parameter's op_name is the argument's name, not a primitive
    if ins.source is not None:
        sources.setdefault((ins.source.file, ins.source.line), ins.source)
    if ins.primitive:
        prims[ins.primitive] = None


def _kind(ins: HloInstruction) -> str:
    op = ins.opcode
    if op == "parameter":
        return "parameter"
    if op == "fusion":
        return "fusion"
    if op == "constant":
        return "constant"
    base = op[:-6] if op.endswith("-start") else op[:-5] if op.endswith("-done") else op
    if base in COLLECTIVE_OPCODES:
        return "collective"
    if op in LIBRARY_OPCODES:
        return "library"
    if op in CONTROL_OPCODES:
        return "control"
    if op in PLUMBING_OPCODES:
        return "plumbing"
    return "op"


def fusion_label(kind_attr: str, fused_ops: list[str]) -> str:
    kind = FUSION_KINDS.get(kind_attr, kind_attr.removeprefix("k").lower() or "?")
    shown = [o for o in fused_ops if o not in _QUIET_FUSED] or fused_ops
    return f"{kind} fusion: {', '.join(shown)}" if shown else f"{kind} fusion"


def build_graph(
    module: HloModule, comp: HloComputation, gather: _Gather | None = None
) -> DataflowGraph:
    """The dataflow graph of ``comp``: one node per instruction, one edge per operand use."""
    gather = gather or _Gather(module)
    by_name = comp.by_name
    nodes: list[GraphNode] = []
    edges: list[GraphEdge] = []
    for ins in comp.instructions:
        kind = _kind(ins)
        sources: dict[tuple[str, int], SourceLine] = {}
        prims: dict[str, None] = {}
        _add_own(ins, sources, prims)
        fused_ops: list[str] = []
        called_bodies: list[str] = []
        for c in ins.called:
            role = module.by_name[c].role if c in module.by_name else ""
            if kind == "fusion":
                s, p, o = gather.of(c)
                for loc in s:
                    sources.setdefault((loc.file, loc.line), loc)
                prims.update(dict.fromkeys(p))
                fused_ops.extend(x for x in o if x not in fused_ops)
            elif role == "control":
                called_bodies.append(c)
        operand_bytes = 0
        seen: set[str] = set()
        for op in ins.operands:
            src = by_name.get(op)
            b = src.bytes if src is not None else 0
            operand_bytes += b
            if src is not None and op not in seen:
                seen.add(op)
                edges.append(GraphEdge(op, ins.name, src.short_shape, b))
        out_bytes = ins.bytes
        if ins.opcode == "custom-call":
            leaves = ins.shape  # library calls may return (result, s8[N] workspace)
            if len(leaves) > 1 and leaves[-1].dtype in ("s8", "u8") and len(leaves[-1].dims) == 1:
                out_bytes -= leaves[-1].bytes
        label = _label(ins, kind, fused_ops)
        if ins.opcode.startswith("async-"):
            wrapped = _wrapped_op(module, ins, by_name)
            if wrapped:
                base = wrapped[:-6] if wrapped.endswith("-start") else wrapped
                kind = "collective" if base in COLLECTIVE_OPCODES else "op"
                label = f"async {wrapped} ({ins.opcode.removeprefix('async-')})"
                called_bodies = []
        moved = 0 if kind in ("parameter", "constant", "plumbing") else out_bytes + operand_bytes
        node = GraphNode(
            id=ins.name,
            kind=kind,
            opcode=ins.opcode,
            label=label,
            shape=ins.short_shape,
            bytes=out_bytes,
            bytes_moved=moved,
            fusion_kind=ins.fusion_kind,
            fused_ops=fused_ops,
            primitives=list(prims),
            sources=list(sources.values()),
            is_output=ins.is_root,
            called=called_bodies,
            op_name=ins.op_name,
        )
        if kind == "parameter":
            try:
                node.param_index = int(ins.literal)
            except ValueError:
                node.param_index = None
        node.source_lost = kind not in ("parameter", "constant", "plumbing") and not node.sources
        nodes.append(node)
    return DataflowGraph(comp.name, nodes, edges)


def _wrapped_op(module: HloModule, ins: HloInstruction, by_name: dict[str, HloInstruction]) -> str:
    """The opcode an ``async-start/update/done`` runs (its called computation's root)."""
    seen = 0
    while ins.opcode in ("async-update", "async-done") and ins.operands and seen < 8:
        nxt = by_name.get(ins.operands[0])
        if nxt is None:
            break
        ins, seen = nxt, seen + 1
    for c in ins.called:
        comp = module.by_name.get(c)
        if comp is not None and comp.root is not None:
            return comp.root.opcode
    return ""


def _label(ins: HloInstruction, kind: str, fused_ops: list[str]) -> str:
    if kind == "fusion":
        return fusion_label(ins.fusion_kind, fused_ops)
    if kind == "parameter":
        arg = f" {ins.op_name}" if ins.op_name else ""
        return f"parameter {ins.literal}{arg}"
    if ins.opcode == "custom-call":
        target = ins.attrs.get("custom_call_target", "").strip('"')
        return f"library call: {target}" if target else "custom-call"
    if kind == "library":
        return f"library call: {ins.opcode}"
    if kind == "control":
        return f"{ins.opcode}"
    return ins.opcode


def control_graphs(module: HloModule) -> dict[str, DataflowGraph]:
    """Graphs of the entry and of every control-flow body, entry first; each body's graph
    with its :class:`GraphOrigin` where one can be told."""
    gather = _Gather(module)
    out = {module.entry.name: build_graph(module, module.entry, gather)}
    for comp in module.computations:
        if comp.role == "control" and comp.name not in out:
            out[comp.name] = build_graph(module, comp, gather)
    origins = _Origins(module, gather)
    for name, graph in out.items():
        if name != module.entry.name:
            graph.origin = origins.of(name)
    return out


#: a call scope of the workbench's scoped trace, ``NAME#K`` (possibly inside a transform's
#: parentheses: ``jvp(step#0)``); see :mod:`workbench.engine.common.call_scopes`
_CALL_SCOPE = re.compile(r"(?:^|[/(])([A-Za-z_][\w.]*)#\d+(?=$|[/)])")


class _Origins:
    """The :class:`GraphOrigin` of called computations, from op_names and sources.

    The name is the user's function the computation runs: the outermost call scope
    (``NAME#K``) of its instructions' op_names *below* the op_name of the instruction that
    calls it (``.../while`` calls a body whose instructions read ``.../while/body/
    eval_jaxpr/step#0/...``), the most frequent one; else that of the computations it
    calls in turn (a ``call`` wrapping a ``while``), else that of the computations called
    with it (a loop's condition is named for its body).  An HLO traced without call
    scopes gets, in the same order, the function of the most frequent source line inside
    (the calling line left out).  The source is the calling instruction's line: the
    ``lax.scan``/``while_loop``/``cond`` call.
    """

    def __init__(self, module: HloModule, gather: _Gather) -> None:
        self.module = module
        self.gather = gather
        self.callers: dict[str, HloInstruction] = {}
        for comp in module.computations:
            if comp.role == "fused":
                continue
            for ins in comp.instructions:
                for c in ins.called:
                    self.callers.setdefault(c, ins)

    def of(self, comp_name: str) -> GraphOrigin | None:
        name = self._name(comp_name, self._scoped) or self._name(comp_name, self._sources)
        if name is None:
            return None
        caller = self.callers.get(comp_name)
        return GraphOrigin(name, caller.source if caller is not None else None)

    def _name(self, comp_name: str, own: Any) -> str | None:
        found = own(comp_name) or self._called(comp_name, own, {comp_name})
        if found:
            return found
        caller = self.callers.get(comp_name)
        for c in caller.called if caller is not None else ():
            if c != comp_name:
                found = own(c) or self._called(c, own, {comp_name, c})
                if found:
                    return found
        return None

    def _called(self, comp_name: str, own: Any, seen: set[str]) -> str | None:
        comp = self.module.by_name.get(comp_name)
        for ins in comp.instructions if comp is not None else ():
            for c in ins.called:
                sub = self.module.by_name.get(c)
                if sub is None or sub.role != "control" or c in seen:
                    continue
                seen.add(c)
                found = own(c) or self._called(c, own, seen)
                if found:
                    return found
        return None

    def _scoped(self, comp_name: str) -> str | None:
        comp = self.module.by_name.get(comp_name)
        caller = self.callers.get(comp_name)
        if comp is None or caller is None or not caller.op_name:
            return None
        prefix = caller.op_name.split(";")[0] + "/"
        votes: dict[str, int] = {}
        for ins in comp.instructions:
            if ins.opcode == "parameter":
                continue
            op_name = ins.op_name.split(";")[0]
            if not op_name.startswith(prefix):
                continue
            m = _CALL_SCOPE.search(op_name, len(prefix) - 1)
            if m is not None:
                votes[m.group(1)] = votes.get(m.group(1), 0) + 1
        return max(votes, key=votes.__getitem__) if votes else None

    def _sources(self, comp_name: str) -> str | None:
        caller = self.callers.get(comp_name)
        calling = caller.source.key if caller is not None and caller.source is not None else None
        sources, _, _ = self.gather.of(comp_name)
        votes: dict[str, int] = {}
        for src in sources:
            if src.function and not src.function.startswith("<") and src.key != calling:
                votes[src.function] = votes.get(src.function, 0) + 1
        return max(votes, key=votes.__getitem__) if votes else None


# -- collectives -----------------------------------------------------------------------
@dataclass(slots=True)
class Collective:
    name: str
    kind: str  # all-reduce, all-gather, ... (async -start folded in)
    computation: str
    shape: str
    bytes: int
    replica_groups: list[list[int]] | None  # None: not given; [] : all devices in one group
    groups_text: str = ""
    source_target_pairs: list[list[int]] | None = None
    channel_id: int | None = None
    use_global_device_ids: bool = False
    dimensions: str = ""
    op_name: str = ""
    source: SourceLine | None = None

    def to_dict(self) -> dict[str, Any]:
        return {
            "name": self.name,
            "kind": self.kind,
            "computation": self.computation,
            "shape": self.shape,
            "bytes": self.bytes,
            "replica_groups": self.replica_groups,
            "groups_text": self.groups_text,
            "source_target_pairs": self.source_target_pairs,
            "channel_id": self.channel_id,
            "use_global_device_ids": self.use_global_device_ids,
            "dimensions": self.dimensions,
            "op_name": self.op_name,
            "source": self.source.to_dict() if self.source else None,
        }


_MESH_FORM = re.compile(r"mesh\[(?P<axes>[^\]]*)\]\s*(?P<sel>\{[^}]*\})?")
_AXIS = re.compile(r"'([^']*)'\s*=\s*(\d+)")
_DEVICE_IDS = re.compile(
    r"\(\s*(?P<expr>\[[^\]]*\](?:\s*<=\s*\[[^\]]*\])?(?:T\([^)]*\))?)\s*\)\s*(?P<sel>\{[^}]*\})?"
)


def _ints(text: str) -> list[int]:
    return [int(x) for x in text.strip("[] ").split(",") if x.strip()]


def _iota_expr(expr: str) -> np.ndarray:
    """``[4,2]``, ``[2,4]T(1,0)`` or ``[8]<=[2,4]T(1,0)`` as a flat array of ids."""
    expr = expr.strip()
    head, sep, tail = expr.partition("<=")
    body = tail if sep else head
    perm = None
    if "T(" in body:
        body, _, p = body.partition("T(")
        perm = _ints(p.rstrip(") "))
    dims = _ints(body)
    ids = np.arange(int(np.prod(dims))).reshape(dims)
    if perm is not None:
        ids = ids.transpose(perm)
    return ids.reshape(-1)


def expand_mesh_groups(groups_text: str, device_ids_text: str = "") -> list[list[int]] | None:
    """XLA's mesh-axes replica groups as explicit partition-id lists (None if not that form)."""
    m = _MESH_FORM.search(groups_text)
    if m is None:
        return None
    axes = _AXIS.findall(m.group("axes"))
    names = [a for a, _ in axes]
    sizes = [int(n) for _, n in axes]
    selected = m.group("sel")
    ids = np.arange(int(np.prod(sizes)) if sizes else 1)
    if device_ids_text:
        d = _DEVICE_IDS.search(device_ids_text)
        if d is not None:
            ids = _iota_expr(d.group("expr"))
            selected = selected or d.group("sel")
    grid = ids.reshape(sizes) if sizes else ids
    chosen = re.findall(r"'([^']*)'", selected or "")
    if selected is None:
        chosen = list(names)  # no selection printed: one group over the whole mesh
    over = [names.index(a) for a in chosen if a in names]
    rest = [i for i in range(len(names)) if i not in over]
    moved = np.transpose(grid, rest + over) if names else grid
    group_size = int(np.prod([sizes[i] for i in over])) if over else 1
    return moved.reshape(-1, group_size).tolist()


def parse_int_lists(text: str) -> list[list[int]]:
    """``{{0,1},{2,3}}`` -> ``[[0, 1], [2, 3]]``; ``{}`` -> ``[]``."""
    inner = text.strip()
    if inner.startswith("{") and inner.endswith("}"):
        inner = inner[1:-1]
    groups = []
    for part in inner.split("}"):
        part = part.strip().lstrip(",").strip().lstrip("{")
        if part:
            groups.append([int(x) for x in part.split(",") if x.strip()])
    return groups


def parse_replica_groups(text: str) -> list[list[int]]:
    """Both printed forms: explicit ``{{0,1},{2,3}}`` and iota ``[2,4]<=[4,2]T(1,0)``."""
    text = text.strip()
    if text.startswith("["):
        head, _, tail = text.partition("<=")
        dims = [int(x) for x in head.strip("[] ").split(",") if x.strip()]
        perm: list[int] | None = None
        if "T(" in tail:
            tail, _, p = tail.partition("T(")
            perm = [int(x) for x in p.rstrip(")").split(",") if x.strip()]
        reshape = [int(x) for x in tail.strip("[] ").split(",") if x.strip()]
        ids = np.arange(int(np.prod(reshape))).reshape(reshape)
        if perm is not None:
            ids = ids.transpose(perm)
        return ids.reshape(dims).tolist()
    return parse_int_lists(text)


def find_collectives(module: HloModule) -> list[Collective]:
    out = []
    for comp in module.computations:
        done_of = {
            i.operands[0]: i for i in comp.instructions if i.opcode.endswith("-done") and i.operands
        }
        for ins in comp.instructions:
            op = ins.opcode
            if op.endswith("-done"):
                continue  # counted at its -start
            kind = op[:-6] if op.endswith("-start") else op
            if kind not in COLLECTIVE_OPCODES:
                continue
            groups: list[list[int]] | None = None
            gtext = ins.attrs.get("replica_groups", "")
            if gtext:
                try:
                    groups = (
                        expand_mesh_groups(gtext, ins.attrs.get("device_ids", ""))
                        if gtext.startswith("mesh[")
                        else parse_replica_groups(gtext)
                    )
                except (ValueError, TypeError):
                    groups = None
            pairs = None
            if "source_target_pairs" in ins.attrs:
                try:
                    pairs = parse_int_lists(ins.attrs["source_target_pairs"])
                except ValueError:
                    pairs = None
            channel = ins.attrs.get("channel_id")
            shape, nbytes = ins.short_shape, ins.bytes
            if op.endswith("-start"):
                # an async start returns (operands, results, [scratch]); its -done has
                # exactly the result, so take that where it exists
                done = done_of.get(ins.name)
                if done is not None:
                    shape, nbytes = done.short_shape, done.bytes
            out.append(
                Collective(
                    name=ins.name,
                    kind=kind,
                    computation=comp.name,
                    shape=shape,
                    bytes=nbytes,
                    replica_groups=groups,
                    groups_text=gtext,
                    source_target_pairs=pairs,
                    channel_id=int(channel) if channel and channel.isdigit() else None,
                    use_global_device_ids=ins.attrs.get("use_global_device_ids") == "true",
                    dimensions=ins.attrs.get("dimensions", ""),
                    op_name=ins.op_name,
                    source=ins.source,
                )
            )
    return out


__all__ = [
    "Collective",
    "DataflowGraph",
    "expand_mesh_groups",
    "GraphEdge",
    "GraphNode",
    "GraphOrigin",
    "build_graph",
    "control_graphs",
    "find_collectives",
    "fusion_label",
    "parse_replica_groups",
]
