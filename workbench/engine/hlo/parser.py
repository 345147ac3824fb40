"""A parser for XLA's HLO text, as ``Compiled.as_text()`` prints it.

Why our own parser: JAX gives us the optimized module only as text (the proto
needs jaxlib internals that move between releases), and the views need
structure (computations, instructions, operands, called computations, fusion
kinds, metadata with source lines) to draw fusion diagrams and find collectives.

The grammar handled, one instruction per statement::

    [ROOT] %name = SHAPE opcode(OPERANDS), attr=value, attr={...}, metadata={...}

SHAPE is an array shape ``f32[2,4]{1,0}`` (layout optional, dynamic dims
``<=4`` allowed) or a tuple ``(s32[], f32[3]{0})``.  Source locations come
either from ``metadata={source_file=... source_line=...}`` or, in newer XLA,
from ``stack_frame_id=N`` resolved through the module's ``FileNames`` /
``FunctionNames`` / ``FileLocations`` / ``StackFrames`` tables.

Lines the parser does not understand are kept as ``problems`` (never raised
into a user's cell); :class:`HloParseError` is raised only when no entry
computation can be found, and the views then fall back to the text.
"""

from __future__ import annotations

import re
from typing import Any

from workbench.engine.common.source import SourceLine
from workbench.engine.hlo.model import (
    CALL_ATTRS,
    HloComputation,
    HloInstruction,
    HloModule,
    HloParseError,
    split_top,
)

# -- low-level scanning --------------------------------------------------------------
_TOKEN_RE = re.compile(r'"(?:[^"\\]|\\.)*"|[{}\[\]()]|,')
_HEAD_RE = re.compile(r"\s*(ROOT\s+)?%?([^\s=]+)\s*=\s*")
_OPCODE_RE = re.compile(r"\s*([A-Za-z][\w\-]*)\(")
_FAST_RE = re.compile(
    r"\s*(ROOT\s+)?%?([^\s=(]+) = ([a-z][a-z0-9]*\[[^\]\s]*\](?:\{[^\s}]*\})?) "
    r"([A-Za-z][\w\-]*)\("
)
_COMP_RE = re.compile(r"^(ENTRY\s+)?%?([^\s(=]+)\s*(?:\((.*)\)\s*->\s*(.+?)\s*)?\{\s*$")
_INDEX_COMMENT_RE = re.compile(r"/\*index=\d+\*/")
_META_RE = re.compile(r'(\w+)=("(?:[^"\\]|\\.)*"|[^\s}]+)')
_NAME_REF_RE = re.compile(r"%([^\s,(){}]+)")
_UNESCAPE_RE = re.compile(r"\\(.)")
_METADATA_RE = re.compile(r'(?:^|,)\s*metadata=(\{(?:[^{}"]|"(?:[^"\\]|\\.)*")*\})')
#: a bracket or a quote: text without one splits on plain commas
_NESTING_RE = re.compile(r'[({\["]')
#: an attribute naming called computations (what linking needs from each instruction)
_CALL_KEY_RE = re.compile(r"(?:^|[\s,])(?:" + "|".join(CALL_ATTRS) + r")=")


_C_ESCAPES = {"n": "\n", "t": "\t", "r": "\r"}


def _unquote(value: str) -> str:
    if len(value) >= 2 and value[0] == '"' and value[-1] == '"':
        if "\\" not in value:
            return value[1:-1]
        return _UNESCAPE_RE.sub(lambda m: _C_ESCAPES.get(m.group(1), m.group(1)), value[1:-1])
    return value


def _close(text: str, start: int) -> int:
    """Index just past the bracket that closes the one at ``start`` (quotes respected)."""
    depth = 0
    for m in _TOKEN_RE.finditer(text, start):
        t = m.group()
        if t in "([{":
            depth += 1
        elif t in ")]}":
            depth -= 1
            if depth == 0:
                return m.end()
    raise ValueError("unbalanced brackets")


def _balanced(text: str) -> bool:
    if text.count("(") == text.count(")") and text.count("{") == text.count("}"):
        # the common case, decided without a Python-level scan (square brackets are
        # shapes' and attributes', always closed on their own line)
        return True
    depth = 0
    for m in _TOKEN_RE.finditer(text):
        t = m.group()
        if t in "([{":
            depth += 1
        elif t in ")]}":
            depth -= 1
    return depth <= 0


def parse_instruction(line: str, line_no: int = 0) -> HloInstruction:
    """One instruction statement; raises ``ValueError`` on text it cannot read."""
    if "/*index=" in line:
        line = _INDEX_COMMENT_RE.sub("", line)
    fm = _FAST_RE.match(line)  # the common case: array shape, operands without brackets
    if fm:
        root, name, shape_text, opcode = fm.groups()
        open_at = fm.end() - 1
        close_at = line.find(")", open_at) + 1
        if close_at == 0 or "(" in line[open_at + 1 : close_at]:
            close_at = _close(line, open_at)
    else:
        m = _HEAD_RE.match(line)
        if not m:
            raise ValueError("not an instruction")
        root, name = m.group(1), m.group(2)
        pos = m.end()
        if line.startswith("(", pos):
            end = _close(line, pos)
        else:
            end = line.find(" ", pos)
            if end < 0:
                raise ValueError("no opcode")
        shape_text = line[pos:end]
        om = _OPCODE_RE.match(line, end)
        if not om:
            raise ValueError("no opcode")
        opcode = om.group(1)
        open_at = om.end() - 1
        close_at = _close(line, open_at)
    operand_text = line[open_at + 1 : close_at - 1]
    ins = HloInstruction(
        name=name,
        opcode=opcode,
        shape_text=shape_text,
        operands=[],
        is_root=bool(root),
        line_no=line_no,
    )
    if opcode in ("constant", "parameter"):  # a literal / the parameter number, not operands
        ins.literal = operand_text
    elif operand_text.strip():
        simple = _NESTING_RE.search(operand_text) is None
        refs = _NAME_REF_RE.findall(operand_text) if simple else []
        if refs and len(refs) == operand_text.count(",") + 1:
            ins.operands = refs  # the common case: ``%a, %b``, one name per operand
        else:
            for piece in operand_text.split(",") if simple else split_top(operand_text):
                refs = _NAME_REF_RE.findall(piece)
                if refs:
                    ins.operands.append(refs[-1])
                else:  # printed without '%' (print_percent=false): the last word is the name
                    ins.operands.append(piece.split()[-1])
    rest = line[close_at:].strip()
    if rest.startswith(","):
        rest = rest[1:]
    at = rest.find("metadata={")
    if at >= 0:  # cut out first: it is on almost every line and holds quoted user strings
        end = rest.find("}", at)
        meta = rest[at + 9 : end + 1]
        start = rest.rfind(",", 0, at)
        if (
            end > 0
            and meta.count('"') % 2 == 0
            and "\\" not in meta
            and not rest[start + 1 : at].strip()
        ):
            # the common case: no "}" inside a quoted value (else the regex below)
            ins.metadata = meta
            rest = rest[: max(start, 0)] + rest[end + 1 :]
        else:
            mm = _METADATA_RE.search(rest)
            if mm:
                ins.metadata = mm.group(1)
                rest = rest[: mm.start()] + rest[mm.end() :]
    ins.attrs_text = rest  # split into ``ins.attrs`` when asked
    if ins.metadata:
        _apply_metadata(ins, ins.metadata)
    return ins


def _apply_metadata(ins: HloInstruction, meta: str) -> None:
    fields = {k: v for k, v in _META_RE.findall(meta.strip("{}"))}
    if "op_name" in fields:
        ins.op_name = _unquote(fields["op_name"])
    if "source_file" in fields and "source_line" in fields:
        try:
            ins.source = SourceLine(_unquote(fields["source_file"]), int(fields["source_line"]))
        except ValueError:
            pass
    if "stack_frame_id" in fields:
        ins.frame_id = fields["stack_frame_id"]


# -- the module ----------------------------------------------------------------------
_TABLES = ("FileNames", "FunctionNames", "FileLocations", "StackFrames")


def _closes_computation(line: str) -> bool:
    """``}`` alone (or ``}, execution_thread=...``) ends a computation; ``})`` of a
    multi-line constant does not."""
    t = line.strip()
    return t == "}" or t.startswith("}, execution_thread")


def _iter_statements(lines: list[str], start: int) -> Any:
    """(line_no, statement) pairs, joining lines until brackets balance."""
    i = start
    n = len(lines)
    while i < n:
        text = lines[i]
        first = i
        while (
            not _balanced(text)
            and i + 1 < n
            and not _COMP_RE.match(text.strip())
            and not _closes_computation(lines[i + 1])
        ):
            i += 1
            text += " " + lines[i].strip()
        yield first + 1, text
        i += 1


def parse_hlo(text: str) -> HloModule:
    """Parse a module printed by ``Compiled.as_text()`` (or ``HloModule.to_string()``)."""
    lines = text.splitlines()
    name = ""
    header = ""
    comps: list[HloComputation] = []
    problems: list[str] = []
    tables: dict[str, dict[int, str]] = {t: {} for t in _TABLES}
    table: str | None = None
    current: HloComputation | None = None
    for line_no, raw in _iter_statements(lines, 0):
        line = raw.rstrip()
        stripped = line.strip()
        if current is not None:
            if stripped == "}" or stripped.startswith("}, execution_thread"):
                current.last_line = line_no
                comps.append(current)
                current = None
                continue
            if not stripped:
                continue
            try:
                current.instructions.append(parse_instruction(line, line_no))
            except ValueError as exc:
                problems.append(f"line {line_no}: {exc}: {stripped[:120]}")
            continue
        if not stripped or stripped.startswith("//"):
            table = None if not stripped else table
            continue
        if stripped.startswith("HloModule"):
            header = stripped
            name = stripped.split(None, 1)[1].split(",", 1)[0] if " " in stripped else ""
            continue
        if stripped in _TABLES:
            table = stripped
            continue
        cm = _COMP_RE.match(stripped)
        if cm:
            table = None
            current = HloComputation(
                name=cm.group(2),
                is_entry=bool(cm.group(1)),
                params_text=cm.group(3) or "",
                result_text=cm.group(4) or "",
                first_line=line_no,
            )
            continue
        if table is not None:
            key, _, value = stripped.partition(" ")
            if key.isdigit():
                tables[table][int(key)] = value.strip()
                continue
        problems.append(f"line {line_no}: not understood: {stripped[:120]}")
    if current is not None:
        problems.append(f"computation {current.name} is not closed")
        comps.append(current)
    if not any(c.is_entry for c in comps):
        raise HloParseError("no ENTRY computation found in the HLO text")
    module = HloModule(name=name, header=header, computations=comps, problems=problems)
    _resolve_frames(module, tables)
    _link_calls(module)
    return module


def _resolve_frames(module: HloModule, tables: dict[str, dict[int, str]]) -> None:
    if not tables["StackFrames"]:
        return
    files = {k: _unquote(v) for k, v in tables["FileNames"].items()}
    funcs = {k: _unquote(v) for k, v in tables["FunctionNames"].items()}
    locs: dict[int, SourceLine] = {}
    for k, v in tables["FileLocations"].items():
        f = dict(_META_RE.findall(v.strip("{}")))
        try:
            locs[k] = SourceLine(
                files.get(int(f.get("file_name_id", 0)), ""),
                int(f.get("line", 0)),
                funcs.get(int(f.get("function_name_id", 0)), ""),
            )
        except ValueError:
            continue
    frames: dict[int, SourceLine] = {}
    for k, v in tables["StackFrames"].items():
        f = dict(_META_RE.findall(v.strip("{}")))
        try:
            loc = locs.get(int(f.get("file_location_id", 0)))
        except ValueError:
            loc = None
        if loc is not None:
            frames[k] = loc  # the frame's own location is the innermost (the op's) line
    for ins in module.instructions():
        fid = ins.frame_id
        if fid and ins.source is None:
            try:
                ins.source = frames.get(int(fid))
            except ValueError:
                pass


_CALL_ATTRS = frozenset(CALL_ATTRS)


def _link_calls(module: HloModule) -> None:
    names = module.by_name
    roles: dict[str, str] = {}
    for comp in module.computations:
        for ins in comp.instructions:
            if not _CALL_KEY_RE.search(ins.attrs_text):
                continue  # most instructions call nothing: their attributes stay unsplit
            for key, value in ins.attrs.items():
                if key not in _CALL_ATTRS or not value:
                    continue
                refs = _NAME_REF_RE.findall(value) or [
                    r.strip() for r in value.strip("{} ").split(",")
                ]  # printed without '%'
                for ref in refs:
                    if ref in names and ref not in ins.called:
                        ins.called.append(ref)
                        role = _role_of(ins.opcode, key)
                        # "control" wins over "applied" when one computation is used both ways
                        if roles.get(ref) != "control":
                            roles[ref] = role
    for comp in module.computations:
        comp.role = "entry" if comp.is_entry else roles.get(comp.name, "")


def _role_of(opcode: str, key: str) -> str:
    if opcode == "fusion" and key == "calls":
        return "fused"
    if opcode in ("while", "conditional", "call", "async-start", "custom-call") or key in (
        "condition",
        "body",
        "branch_computations",
        "true_computation",
        "false_computation",
    ):
        return "control"
    return "applied"


__all__ = ["parse_hlo", "parse_instruction"]
