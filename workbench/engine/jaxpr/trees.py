"""One-line summaries of a call's argument and result pytrees, for headers and payloads.

A 24-layer model's gradient takes and returns 121 and 120 arrays; listing each shape
hides the structure a user wrote.  ``ps: list[24] of {w1, w2, wk, wq, wv: f32[128,128]}``
says it in one line:

- a dict whose leaves share one aval collapses to ``{keys: aval}``, and so does one whose
  values (two or more) share one summary (``{layer_0, layer_1, …+22: {kernel, bias: ...}}``);
- a list or tuple whose elements have the same summary collapses to ``list[N] of ...``
  (``tuple[N] of ...``);
- a custom node's private children that hold no array (a Flax NNX module's
  ``_pytree__state: PytreeState()``, bookkeeping of the object, not of the model) are left
  out, and a ``Param`` wrapper says only what it wraps: ``MLP(linear1: Linear(bias:
  f32[64], kernel: f32[16,64]), …)``;
- anything else is spelled out, abbreviated past a few entries (``…+N``) and past
  :data:`MAX_SUMMARY` characters.

The pytree structure is read from JAX's ``PyTreeDef`` (its public ``node_data`` and
``children``), the leaves' avals from the jaxpr's text; the summary itself is plain Python.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

#: entries of a dict, list or tuple spelled out before "…+N"
MAX_ENTRIES = 4
#: keys of a dict whose leaves share one aval spelled out before "…+N"
MAX_KEYS = 8
#: a summary longer than this is cut with "…"
MAX_SUMMARY = 200


@dataclass(frozen=True, slots=True)
class TreeSummary:
    """One top-level argument or result: its name, one-line summary and leaf count."""

    name: str
    summary: str
    leaves: int

    def to_dict(self) -> dict[str, Any]:
        return {"name": self.name, "summary": self.summary, "leaves": self.leaves}


@dataclass(frozen=True, slots=True)
class Node:
    """A pytree node without JAX: ``kind`` is leaf, static (a leaf that is not an input:
    an Equinox module's activation function), none, dict, list, tuple or the custom
    node's type name; ``keys`` for dicts and for custom nodes whose children have names
    (namedtuples, dataclasses, ``register_pytree_with_keys``); ``aval`` for leaves."""

    kind: str
    children: tuple[Node, ...] = ()
    keys: tuple[str, ...] = ()
    aval: str = ""


def from_treedef(treedef: Any, avals: Sequence[str | None]) -> Node:
    """The :class:`Node` tree of a ``PyTreeDef`` whose leaves are ``avals`` (in order; a
    ``None`` aval is a static leaf, one that is no input of the traced call)."""
    it = iter(avals)

    def walk(td: Any) -> Node:
        data = td.node_data()
        if data is None:
            aval = next(it)
            return Node("leaf", aval=aval) if aval is not None else Node("static")
        typ, aux = data
        children = tuple(walk(c) for c in td.children())
        if typ is type(None):
            return Node("none")
        if typ is dict:
            return Node("dict", children, keys=tuple(str(k) for k in aux))
        if typ is list:
            return Node("list", children)
        if typ is tuple:
            return Node("tuple", children)
        fields = getattr(typ, "_fields", None)  # a namedtuple: its fields are its keys
        if isinstance(fields, tuple) and len(fields) == len(children):
            return Node(typ.__name__, children, keys=tuple(fields))
        return Node(getattr(typ, "__name__", "node"), children, keys=_child_keys(td))

    return walk(treedef)


def _child_keys(td: Any) -> tuple[str, ...]:
    """The names of a custom node's children (``l1``, ``weight``...) as its key paths give
    them (Flax ``State``, Equinox modules, dataclasses): the node is rebuilt around
    placeholder leaves and flattened one level.  ``()`` when the children have no names
    (only positions) or the node cannot be rebuilt that way."""
    import jax

    try:
        obj = td.unflatten([object()] * td.num_leaves)
        pairs, _ = jax.tree_util.tree_flatten_with_path(obj, is_leaf=lambda x: x is not obj)
    except Exception:  # a node whose unflatten checks its leaves: no names, still a summary
        return ()
    if len(pairs) != len(td.children()):
        return ()
    keys: list[str] = []
    for path, _ in pairs:
        if len(path) != 1:
            return ()
        k = path[0]
        if isinstance(k, jax.tree_util.DictKey):
            keys.append(str(k.key))
        elif isinstance(k, jax.tree_util.GetAttrKey):
            keys.append(k.name)
        else:  # SequenceKey, FlattenedIndexKey: positions, not names
            return ()
    return tuple(keys)


def leaf_count(node: Node) -> int:
    if node.kind == "leaf":
        return 1
    return sum(leaf_count(c) for c in node.children)


def _abbrev(items: list[str], n: int) -> str:
    shown = items[:MAX_ENTRIES]
    if n > len(shown):
        shown.append(f"…+{n - len(shown)}")
    return ", ".join(shown)


def summarize(node: Node) -> str:
    """The one-line summary of ``node`` (see the module docstring)."""
    text = _summary(node)
    return text if len(text) <= MAX_SUMMARY else text[: MAX_SUMMARY - 1] + "…"


#: wrappers whose name says nothing a signature needs (Flax NNX's trainable parameter):
#: ``kernel: f32[16,64]`` rather than ``kernel: Param(f32[16,64])``
_QUIET_WRAPPERS = frozenset({"Param"})


def _bookkeeping(key: str, child: Node) -> bool:
    """A private child with no array in it: an object's own state (NNX's ``PytreeState``),
    not something the program computes with."""
    return key.startswith("_") and child.kind not in ("leaf", "none") and leaf_count(child) == 0


def _summary(node: Node) -> str:
    kind, kids = node.kind, node.children
    if kind == "leaf":
        return node.aval
    if kind == "none":
        return "None"
    if kind == "static":
        return "static"
    if node.keys and kind != "dict" and len(node.keys) == len(kids):
        kept = [(k, c) for k, c in zip(node.keys, kids, strict=True) if not _bookkeeping(k, c)]
        if len(kept) < len(kids):
            node = Node(
                kind, tuple(c for _, c in kept), keys=tuple(k for k, _ in kept), aval=node.aval
            )
            kids = node.children
    if kind in _QUIET_WRAPPERS and len(kids) == 1:
        return _summary(kids[0])
    if node.keys and kind != "dict" and len(kids) == 1:  # Param(value: x) says Param(x)
        return f"{kind}({_summary(kids[0])})"
    if node.keys:
        subs = [_summary(c) for c in kids]
        same_leaf = all(c.kind == "leaf" for c in kids)
        if subs and len(set(subs)) == 1 and (same_leaf or len(subs) >= 2):
            # {w1, w2: f32[8,8]}; {layer_0, …+23: {kernel: ..., bias: ...}}
            keys = list(node.keys[:MAX_KEYS])
            if len(node.keys) > MAX_KEYS:
                keys.append(f"…+{len(node.keys) - MAX_KEYS}")
            inner = f"{', '.join(keys)}: {subs[0]}"
        else:
            inner = _abbrev([f"{k}: {s}" for k, s in zip(node.keys, subs, strict=True)], len(kids))
        return f"{{{inner}}}" if kind == "dict" else f"{kind}({inner})"
    subs = [_summary(c) for c in kids]
    if kind in ("list", "tuple"):
        if len(subs) >= 2 and len(set(subs)) == 1:
            return f"{kind}[{len(subs)}] of {subs[0]}"
        inner = _abbrev(subs, len(subs))
        return f"[{inner}]" if kind == "list" else f"({inner}{',' if len(subs) == 1 else ''})"
    return f"{kind}({_abbrev(subs, len(subs))})"


def summarize_call(
    in_tree: Any,
    in_avals: Sequence[str],
    out_tree: Any,
    out_avals: Sequence[str],
    arg_names: Sequence[str] | None = None,
    in_static: Sequence[bool] | None = None,
) -> dict[str, list[TreeSummary]]:
    """``{"in": [...], "out": [...]}``: one :class:`TreeSummary` per top-level argument
    (``in_tree`` is the ``(args, kwargs)`` tree of the traced call) and per top-level result
    (the elements of a returned tuple, else the one result ``out``).  Names come from
    ``arg_names`` when it has one per positional argument, else ``arg0``...; keyword
    arguments are named by their keyword.  A tree whose leaf count does not match the avals
    (a call traced through filters) gives one entry per aval instead.  ``in_static`` marks
    the leaves of ``in_tree`` that are not inputs (closed over by a filtered call): the
    other leaves take ``in_avals`` in order."""
    ins: list[TreeSummary] = []
    root = None
    if in_tree is not None and in_static is not None:
        if len(in_static) == in_tree.num_leaves and in_static.count(False) == len(in_avals):
            it = iter(in_avals)
            root = from_treedef(in_tree, [None if s else next(it) for s in in_static])
    elif in_tree is not None and in_tree.num_leaves == len(in_avals):
        root = from_treedef(in_tree, in_avals)
    if (
        root is not None
        and root.kind == "tuple"
        and len(root.children) == 2
        and root.children[0].kind == "tuple"
        and root.children[1].kind == "dict"
    ):
        args, kwargs = root.children
        names = (
            list(arg_names)
            if arg_names is not None and len(arg_names) == len(args.children)
            else [f"arg{i}" for i in range(len(args.children))]
        )
        for name, child in zip(names, args.children, strict=True):
            ins.append(TreeSummary(name, summarize(child), leaf_count(child)))
        for key, child in zip(kwargs.keys, kwargs.children, strict=True):
            ins.append(TreeSummary(key, summarize(child), leaf_count(child)))
    else:
        ins = [TreeSummary(f"arg{i}", a, 1) for i, a in enumerate(in_avals)]
    outs: list[TreeSummary] = []
    out_root = None
    if out_tree is not None and out_tree.num_leaves == len(out_avals):
        out_root = from_treedef(out_tree, out_avals)
    if out_root is None:
        outs = [TreeSummary(f"out[{i}]", a, 1) for i, a in enumerate(out_avals)]
    elif out_root.kind == "tuple":
        outs = [
            TreeSummary(f"out[{i}]", summarize(c), leaf_count(c))
            for i, c in enumerate(out_root.children)
        ]
    else:
        outs = [TreeSummary("out", summarize(out_root), leaf_count(out_root))]
    return {"in": ins, "out": outs}


__all__ = ["Node", "TreeSummary", "from_treedef", "leaf_count", "summarize", "summarize_call"]
