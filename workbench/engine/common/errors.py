"""Turn an exception from user code or from JAX into a short, structured report.

A notebook user who typed ``if x > 0:`` inside a traced function should see
three things, not sixty lines of JAX internals: what went wrong, which of their
own lines did it, and JAX's hint (the "error occurred while tracing ..." line
and the documentation link).  Views render this record; magics raise it.
"""

from __future__ import annotations

import linecache
import os
import re
import sysconfig
import types
from dataclasses import dataclass, field
from typing import Any

import jax

from workbench.engine import _jax_compat as compat
from workbench.engine.common.source import SourceLine

_JAX_DIR = os.path.dirname(jax.__file__) + os.sep
# workbench/engine/common/errors.py -> workbench/
_WORKBENCH_DIR = (
    os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__)))) + os.sep
)
_NOT_USER = tuple(
    p
    for p in {
        _JAX_DIR,
        _WORKBENCH_DIR,
        sysconfig.get_path("stdlib") + os.sep,
        sysconfig.get_path("purelib") + os.sep,
        sysconfig.get_path("platlib") + os.sep,
    }
    if p
)

SUMMARY_LIMIT = 600
SUMMARY_LINES = 12
HINT_LINES = 6
_SENTENCE_END = re.compile(r"[.!?]['\")\]]?$")

_HINT_PATTERNS = re.compile(
    r"(error occurred while tracing|See https?://|not available in Python because|"
    r"Try |try |you can|If you|consider|static_argnums|static_argnames|jax\.lax\.cond|"
    r"problem arose with)",
)


@dataclass(slots=True)
class ErrorReport:
    """What went wrong, where in the user's code, and JAX's hint."""

    phase: str  # "parse", "cell", "arguments", "transform", "trace", "lower", "compile"
    kind: str  # exception type name, e.g. "TracerBoolConversionError"
    summary: str
    hints: list[str] = field(default_factory=list)
    where: SourceLine | None = None

    def to_dict(self) -> dict[str, Any]:
        return {
            "phase": self.phase,
            "kind": self.kind,
            "summary": self.summary,
            "hints": self.hints,
            "where": None if self.where is None else self.where.to_dict(),
        }


def is_user_file(filename: str) -> bool:
    """User code: notebook cells, scripts, tests; not JAX, us, stdlib or site-packages."""
    if not filename:
        return False
    if filename.startswith("<") and filename.endswith(">"):
        # <ipython-input-..>, <workbench-cell-..>, <string>; but not <frozen ...>
        return not filename.startswith("<frozen")
    return not os.path.abspath(filename).startswith(_NOT_USER)


def _frames(tb: types.TracebackType | None) -> list[tuple[str, int, str]]:
    out = []
    while tb is not None:
        code = tb.tb_frame.f_code
        out.append((code.co_filename, tb.tb_lineno, code.co_name))
        tb = tb.tb_next
    return out


def user_line(exc: BaseException) -> SourceLine | None:
    """The innermost frame of user code in the exception's traceback (or its causes)."""
    seen: set[int] = set()
    candidates: list[tuple[str, int, str]] = []
    e: BaseException | None = exc
    while e is not None and id(e) not in seen:
        seen.add(id(e))
        candidates = [f for f in _frames(e.__traceback__) if is_user_file(f[0])] or candidates
        if candidates:
            break
        e = e.__cause__ or e.__context__
    if not candidates:
        return None
    file, line, func = candidates[-1]
    text = linecache.getline(file, line).strip()
    return SourceLine(file=file, line=line, function=func, text=text)


def _message(exc: BaseException) -> str:
    if isinstance(exc, SyntaxError):
        return exc.msg or "invalid syntax"
    try:
        text = str(exc)
    except Exception:
        text = ""
    if isinstance(exc, KeyError) and len(exc.args) == 1:
        text = f"key {exc.args[0]!r} not found"
    return text.strip()


def _cut(text: str, limit: int) -> str:
    """``text`` within ``limit`` characters, cut after a whole sentence where one fits
    (a message cut mid-sentence loses its point), else at a word, marked with "…"."""
    if len(text) <= limit:
        return text
    head = text[: limit - 1]
    ends = [m.end() for m in re.finditer(r"[.!?](?=\s)", head)]
    if ends and ends[-1] >= limit // 3:
        return head[: ends[-1]] + " …"
    space = head.rfind(" ")
    return (head[:space] if space >= limit // 2 else head) + "…"


def _first_sentence(lines: list[str]) -> int:
    """How many lines the first statement of a message spans: a line that does not end a
    sentence (``Error interpreting argument to _JitWrapper(`` followed by a multi-line
    repr, ``The error was:``) runs on into the next one, but not into one of JAX's hint
    lines (``The error occurred while tracing ...``): those stay hints."""
    n = 0
    while n < len(lines) and n < SUMMARY_LINES:
        if n and _HINT_PATTERNS.search(lines[n]):
            break
        n += 1
        if _SENTENCE_END.search(lines[n - 1]):
            break
    return max(n, 1)


def report(exc: BaseException, phase: str) -> ErrorReport:
    """Summarise ``exc`` in a few lines; keeps JAX's own hint lines."""
    text = _message(exc)
    lines = [ln.strip() for ln in text.splitlines() if ln.strip()]
    n = _first_sentence(lines) if lines else 0
    summary = _cut(" ".join(lines[:n]), SUMMARY_LIMIT) if lines else type(exc).__name__
    hints: list[str] = []
    for ln in lines[n:]:
        if _HINT_PATTERNS.search(ln) and len(hints) < HINT_LINES:
            hints.append(_cut(ln, SUMMARY_LIMIT))
    where: SourceLine | None
    if isinstance(exc, SyntaxError) and exc.filename:
        text_line = (exc.text or linecache.getline(exc.filename, exc.lineno or 0)).strip()
        where = SourceLine(exc.filename, exc.lineno or 0, "<cell>", text_line)
    else:
        where = user_line(exc)
    return ErrorReport(
        phase=phase, kind=type(exc).__name__, summary=summary, hints=hints, where=where
    )


def calling_user_line() -> SourceLine | None:
    """The innermost frame of user code on the stack, with its text: the line that called
    into workbench or JAX (read from a listener, a twin or an error handler)."""
    found = compat.user_call_site(is_user_file)
    if found is None:
        return None
    file, line, function = found
    return SourceLine(file, line, function, linecache.getline(file, line).strip())
