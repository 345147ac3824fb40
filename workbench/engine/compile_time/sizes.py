"""How big each of the user's lines made the program, and the usual reason it is big.

Compile time grows with the program: XLA's passes and the backend's code generation walk
every instruction.  The usual cause of a program far bigger than its source is a Python
loop that JAX unrolls: ``for p in params: x = block(p, x)`` traces ``block`` once per
layer, and the program holds every copy.

Two counts per source line (the innermost user frame, as ``%%hlo`` and ``%%jaxpr`` show
an equation's or instruction's line): the jaxpr equations it produced (every nested
jaxpr included) and the instructions of XLA's optimized module (every computation, the
fused ones included) whose metadata names it.

Unrolled loops are found in the scoped trace's op_names (see
:mod:`workbench.engine.common.call_scopes`): each call of a user function is a scope
``name#k``, counted per enclosing scope, so the 24 calls of ``block`` from the loop in
``transformer`` are ``transformer#0/block#0`` ... ``block#23``.  A function called many
times from one scope whose calls hold a large share of the program is reported with the
line that calls it (from the equations' tracebacks: the frame just outside ``block``).
Under ``lax.scan`` the body is traced once (``block#0`` only) and nothing is reported.
"""

from __future__ import annotations

import re
from collections import Counter, defaultdict
from collections.abc import Iterable, Iterator
from dataclasses import dataclass, field
from typing import Any

from workbench.engine import _jax_compat as compat
from workbench.engine.common.source import SourceLine
from workbench.engine.hlo.model import HloModule
from workbench.engine.jaxpr.model import _jaxprs_in

#: a function called at least this many times from one scope is a loop worth a word ...
MIN_CALLS = 4
#: ... when its calls hold at least this share of the program's instructions
MIN_SHARE = 0.25

_SCOPE = re.compile(r"^([A-Za-z_][\w.]*)#(\d+)$")
_WRAPPED = re.compile(r"^[A-Za-z_][\w.\-]*\((.*)\)$")


@dataclass(slots=True)
class LineSize:
    """One source line: what it produced."""

    source: SourceLine | None  # None: equations/instructions without a user line
    equations: int
    equation_share: float
    instructions: int
    instruction_share: float

    def to_dict(self) -> dict[str, Any]:
        return {
            "source": None if self.source is None else self.source.to_dict(),
            "equations": self.equations,
            "equation_share": self.equation_share,
            "instructions": self.instructions,
            "instruction_share": self.instruction_share,
        }


@dataclass(slots=True)
class UnrolledLoop:
    """A function called ``calls`` times from one scope, its calls a large part of the program."""

    function: str
    calls: int
    call_site: SourceLine | None  # the line that calls it (the loop's body line)
    instructions: int
    instruction_share: float
    equations: int
    equation_share: float

    def to_dict(self) -> dict[str, Any]:
        return {
            "function": self.function,
            "calls": self.calls,
            "call_site": None if self.call_site is None else self.call_site.to_dict(),
            "instructions": self.instructions,
            "instruction_share": self.instruction_share,
            "equations": self.equations,
            "equation_share": self.equation_share,
        }


@dataclass(slots=True)
class ProgramSize:
    equations: int = 0
    instructions: int = 0
    lines: list[LineSize] = field(default_factory=list)
    loops: list[UnrolledLoop] = field(default_factory=list)


def scope_path(op_name: str) -> tuple[str, ...]:
    """The ``name#k`` scopes of an op_name or name stack, transforms unwrapped:
    ``jit(f)/transpose(jvp(loss#0))/transformer#0/block#3/dot_general`` ->
    ``("loss#0", "transformer#0", "block#3")``."""
    out: list[str] = []
    for seg in op_name.split("/"):
        while True:
            m = _WRAPPED.match(seg)
            if m is None:
                break
            seg = m.group(1)
        if _SCOPE.match(seg):
            out.append(seg)
    return tuple(out)


def _equations(closed_jaxpr: Any, prefix: str = "") -> Iterator[tuple[Any, str]]:
    """Every equation (nested jaxprs included) with its full name stack."""
    todo: list[tuple[Any, str]] = [(closed_jaxpr, prefix)]
    while todo:
        jaxpr, outer = todo.pop()
        for eqn in compat.open_jaxpr(jaxpr).eqns:
            stack = compat.name_stack(eqn.source_info)
            full = f"{outer}/{stack}" if outer and stack else (outer or stack)
            yield eqn, full
            for k, v in eqn.params.items():
                for _, sub in _jaxprs_in(v, k):
                    todo.append((sub, full))


def _key(src: SourceLine | None) -> tuple[str, int] | None:
    return None if src is None or not src.file else (src.file, src.line)


def _groups(paths: Iterable[tuple[tuple[str, ...], int]]) -> dict[tuple[tuple[str, ...], str], Any]:
    """(enclosing scope path, function) -> [set of call numbers, weight] over ``paths``
    (each path with its weight: instructions or equations)."""
    groups: dict[tuple[tuple[str, ...], str], Any] = {}
    for path, weight in paths:
        seen: set[tuple[tuple[str, ...], str]] = set()
        for i, seg in enumerate(path):
            name, k = seg.rsplit("#", 1)
            key = (path[:i], name)
            g = groups.setdefault(key, [set(), 0])
            g[0].add(k)
            if key not in seen:
                seen.add(key)
                g[1] += weight
    return groups


def program_size(closed_jaxpr: Any, module: HloModule) -> ProgramSize:
    """Equations and instructions per source line, and the unrolled loops among them."""
    eq_lines: Counter[tuple[str, int] | None] = Counter()
    sources: dict[tuple[str, int], SourceLine] = {}
    eq_paths: Counter[tuple[str, ...]] = Counter()
    frames_of: dict[tuple[str, ...], list[list[SourceLine]]] = defaultdict(list)
    n_eq = 0
    for eqn, stack in _equations(closed_jaxpr):
        n_eq += 1
        src = compat.user_frame(eqn.source_info)
        key = _key(src)
        eq_lines[key] += 1
        if key is not None and src is not None and key not in sources:
            sources[key] = SourceLine(src.file, src.line, src.function)
        path = scope_path(stack)
        eq_paths[path] += 1
        if path and len(frames_of[path]) < 3:  # a few tracebacks per scope find its caller
            frames_of[path].append(compat.user_frames(eqn.source_info))

    ins_lines: Counter[tuple[str, int] | None] = Counter()
    ins_paths: Counter[tuple[str, ...]] = Counter()
    n_ins = 0
    for ins in module.instructions():
        n_ins += 1
        key = _key(ins.source)
        ins_lines[key] += 1
        if key is not None and ins.source is not None and key not in sources:
            sources[key] = SourceLine(ins.source.file, ins.source.line, ins.source.function)
        ins_paths[scope_path(ins.op_name)] += 1

    lines = [
        LineSize(
            source=sources.get(key) if key is not None else None,
            equations=eq_lines.get(key, 0),
            equation_share=eq_lines.get(key, 0) / n_eq if n_eq else 0.0,
            instructions=ins_lines.get(key, 0),
            instruction_share=ins_lines.get(key, 0) / n_ins if n_ins else 0.0,
        )
        for key in set(eq_lines) | set(ins_lines)
    ]
    lines.sort(key=lambda ls: (-ls.instructions, -ls.equations))
    return ProgramSize(
        equations=n_eq,
        instructions=n_ins,
        lines=lines,
        loops=_loops(eq_paths, ins_paths, frames_of, n_eq, n_ins),
    )


def _loops(
    eq_paths: Counter[tuple[str, ...]],
    ins_paths: Counter[tuple[str, ...]],
    frames_of: dict[tuple[str, ...], list[list[SourceLine]]],
    n_eq: int,
    n_ins: int,
) -> list[UnrolledLoop]:
    ins_groups = _groups(ins_paths.items())
    eq_groups = _groups(eq_paths.items())
    found: list[tuple[tuple[str, ...], str, UnrolledLoop]] = []
    for (parent, name), (calls, weight) in ins_groups.items():
        share = weight / n_ins if n_ins else 0.0
        if len(calls) < MIN_CALLS or share < MIN_SHARE:
            continue
        eq_calls, eq_weight = eq_groups.get((parent, name), (set(), 0))
        found.append(
            (
                parent,
                name,
                UnrolledLoop(
                    function=name,
                    calls=max(len(calls), len(eq_calls)),
                    call_site=_call_site(parent, name, frames_of),
                    instructions=weight,
                    instruction_share=share,
                    equations=eq_weight,
                    equation_share=eq_weight / n_eq if n_eq else 0.0,
                ),
            )
        )
    # the outermost loops only: a function called twice in each of 24 unrolled blocks is
    # part of the 24, not a loop of its own
    found.sort(key=lambda f: len(f[0]))
    kept: list[tuple[tuple[str, ...], str, UnrolledLoop]] = []
    for parent, name, loop in found:
        if any(
            len(parent) > len(p) and parent[len(p)].rsplit("#", 1)[0] == n and parent[: len(p)] == p
            for p, n, _ in kept
        ):
            continue
        kept.append((parent, name, loop))
    return sorted((k[2] for k in kept), key=lambda lp: -lp.instructions)


def _runs(function: str, name: str) -> bool:
    """Whether a frame's function (JAX records qualified names) is the scope ``name``; a
    method ``__call__`` is scoped by its class (``Block.__call__``)."""
    return (
        function == name
        or function.endswith("." + name)
        or function == f"{name}.__call__"
        or function.endswith(f".{name}.__call__")
    )


def _call_site(
    parent: tuple[str, ...], name: str, frames_of: dict[tuple[str, ...], list[list[SourceLine]]]
) -> SourceLine | None:
    """The line in ``parent``'s function that calls ``name``: in the equations' user
    frames (innermost first), the frame just outside the innermost one running ``name``."""
    votes: Counter[tuple[str, int, str]] = Counter()
    for path, stacks in frames_of.items():
        if len(path) <= len(parent) or path[: len(parent)] != parent:
            continue
        if path[len(parent)].rsplit("#", 1)[0] != name:
            continue
        for frames in stacks:
            runs = [i for i, f in enumerate(frames[:-1]) if _runs(f.function, name)] or [
                # frames without a class in the name: the innermost ``__call__``
                i
                for i, f in enumerate(frames[:-1])
                if f.function == "__call__"
            ]
            if runs:
                caller = frames[runs[0] + 1]
                votes[(caller.file, caller.line, caller.function)] += 1
    if not votes:
        return None
    (file, line, function), _ = votes.most_common(1)[0]
    return SourceLine(file, line, function)


__all__ = ["LineSize", "ProgramSize", "UnrolledLoop", "program_size", "scope_path"]
