"""StableHLO as lowered: operations per line, with their Python source from ``loc(...)``.

JAX prints debug locations only when asked (``Lowered.as_text(debug_info=True)``);
they come as trailing ``loc(#locN)`` references resolved through ``#locN = loc(...)``
definitions at the end of the module: name locations ``"jit(f)/tanh"(#child)``,
call sites ``callsite(#callee at #caller)`` and file locations ``"file":line:col``.
We follow callee chains to the innermost file location, which is the user's line
of the operation, and keep the outermost name as the op name (its last path
component is the jaxpr primitive).
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field

from workbench.engine.common.source import SourceLine
from workbench.engine.hlo.model import primitive_of

_LOC_DEF_RE = re.compile(r"^(#loc\d*)\s*=\s*loc\((.*)\)\s*$")
_LOC_USE_RE = re.compile(r"loc\((#loc\d*)\)\s*$")
_FILE_LOC_RE = re.compile(r'^"((?:[^"\\]|\\.)*)":(\d+)(?::\d+)?')
_NAME_LOC_RE = re.compile(r'^"((?:[^"\\]|\\.)*)"\((#loc\d*)\)$')
_BARE_NAME_RE = re.compile(r'^"((?:[^"\\]|\\.)*)"$')
_CALLSITE_RE = re.compile(r"^callsite\((#loc\d*) at (#loc\d*)\)$")
_OP_RE = re.compile(r'^\s*(?:(?:%[\w#:]+(?:,\s*)?)+\s*=\s*)?"?([a-z_][\w]*\.[\w.]+)')


@dataclass(slots=True)
class StableOp:
    line_no: int
    op: str
    op_name: str = ""
    source: SourceLine | None = None

    @property
    def primitive(self) -> str:
        return primitive_of(self.op_name)


@dataclass(slots=True)
class StableHloText:
    text: str
    ops: list[StableOp] = field(default_factory=list)
    num_partitions: int = 1
    num_replicas: int = 1

    @property
    def op_count(self) -> int:
        """Operations in the module, excluding the ``func``/``module`` scaffolding."""
        return sum(1 for o in self.ops if not o.op.startswith(("func.", "builtin.")))


def _resolve(defs: dict[str, str], ref: str) -> tuple[str, SourceLine | None]:
    """(outermost op name, innermost file location) of a location reference."""
    name = ""
    seen = set()
    body = defs.get(ref, "")
    while body and ref not in seen:
        seen.add(ref)
        m = _NAME_LOC_RE.match(body)
        if m:
            if not name:
                name = m.group(1)
            ref = m.group(2)
            body = defs.get(ref, "")
            continue
        m = _CALLSITE_RE.match(body)
        if m:
            ref = m.group(1)
            body = defs.get(ref, "")
            continue
        m = _FILE_LOC_RE.match(body)
        if m:
            return name, SourceLine(m.group(1), int(m.group(2)))
        m = _BARE_NAME_RE.match(body)
        if m and not name:  # a name with no location under it, e.g. loc("sort")
            name = m.group(1)
        break
    return name, None


def parse_stablehlo(text: str) -> StableHloText:
    lines = text.splitlines()
    defs: dict[str, str] = {}
    for line in lines:
        if line.startswith("#loc"):
            m = _LOC_DEF_RE.match(line)
            if m:
                defs[m.group(1)] = m.group(2)
    out = StableHloText(text)
    for key in ("num_partitions", "num_replicas"):
        m = re.search(rf"mhlo\.{key} = (\d+)", text)
        if m:
            setattr(out, key, int(m.group(1)))
    cache: dict[str, tuple[str, SourceLine | None]] = {}

    def resolve(line: str) -> tuple[str, SourceLine | None] | None:
        u = _LOC_USE_RE.search(line)
        if not u:
            return None
        ref = u.group(1)
        if ref not in cache:
            cache[ref] = _resolve(defs, ref)
        return cache[ref]

    # an op with regions (while, case, sort, reduce with a body...) prints its loc on
    # the line that closes its last region: keep such ops open until that line
    pending: list[StableOp] = []
    for no, line in enumerate(lines, 1):
        if line.startswith("#loc") or not line.strip():
            continue
        m = _OP_RE.match(line)
        if not m:
            if pending and line.lstrip().startswith("}"):
                found = resolve(line)
                if found is not None:
                    op_ = pending.pop()
                    op_.op_name, op_.source = found
            continue
        op = m.group(1)
        if op in ("func.func", "builtin.module"):
            continue
        found = resolve(line)
        entry = StableOp(no, op, *(found or ("", None)))
        out.ops.append(entry)
        if found is None:  # its loc comes on the line closing its regions
            pending.append(entry)
    return out


__all__ = ["StableHloText", "StableOp", "parse_stablehlo"]
