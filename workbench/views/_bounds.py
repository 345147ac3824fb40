"""How much of a text an output saves: the one bound on ``text/plain`` (and the HTML's text).

A notebook saves every MIME type of every output.  XLA's optimized HLO of a 24-block
transformer's gradient is about 110,000 lines (17 MB); saved whole in ``text/plain`` it made
one cell 14-19 MB.  So ``text/plain`` carries JAX's text up to the first
:data:`TEXT_MAX_LINES` lines or :data:`TEXT_MAX_BYTES` bytes (UTF-8), whichever comes first,
then one line saying how much was left out and where all of it is: ``.text`` of the object
the magic or twin returned (the kernel keeps it; the notebook does not).  A text within the
bound is unchanged, byte for byte.

The HTML fallbacks draw at most :data:`HTML_MAX_BYTES` of code (equation rows, module
text) before a note, by the same rule.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

#: ``text/plain`` keeps at most this many lines of JAX's text ...
TEXT_MAX_LINES = 2000
#: ... and at most this many bytes (UTF-8), whichever limit comes first
TEXT_MAX_BYTES = 200_000
#: the HTML fallbacks render at most this many bytes of code rows before a note
HTML_MAX_BYTES = 200_000


@dataclass(frozen=True)
class TextSize:
    """A text's size and how much of it a bounded output shows (whole lines)."""

    lines: int
    bytes: int
    shown_lines: int
    shown_bytes: int

    @property
    def cut(self) -> bool:
        return self.shown_lines < self.lines or self.shown_bytes < self.bytes

    def to_dict(self) -> dict[str, Any]:
        return {
            "lines": self.lines,
            "bytes": self.bytes,
            "shown_lines": self.shown_lines,
            "shown_bytes": self.shown_bytes,
        }


def _utf8_len(text: str) -> int:
    return len(text) if text.isascii() else len(text.encode())


def _line_count(text: str) -> int:
    if not text:
        return 0
    return text.count("\n") + (0 if text.endswith("\n") else 1)


def _head(text: str, max_lines: int, max_bytes: int) -> str:
    """The longest prefix of whole lines within both limits (newline of the last kept line
    dropped); when not even the first line fits, that line cut to ``max_bytes``."""
    end = 0
    used = 0
    for _ in range(max_lines):
        nl = text.find("\n", end)
        stop = len(text) if nl < 0 else nl
        size = _utf8_len(text[end:stop]) + (0 if nl < 0 else 1)
        if used + size > max_bytes:
            break
        used += size
        end = stop if nl < 0 else nl + 1
        if nl < 0:
            break
    if end == 0 and text:
        return text.encode()[:max_bytes].decode(errors="ignore")
    return text[:end].removesuffix("\n")


def _mb(n: int) -> str:
    return f"{n / 1e6:.1f} MB" if n >= 100_000 else f"{n / 1e3:.0f} KB"


#: where the whole text is, as the left-out line names it: ``.text`` of what the magics and
#: twins return (:class:`~workbench.views.display.Display`)
WHOLE_TEXT = ".text"


def bounded(
    text: str,
    max_lines: int = TEXT_MAX_LINES,
    max_bytes: int = TEXT_MAX_BYTES,
    where: str | None = WHOLE_TEXT,
) -> tuple[str, TextSize]:
    """``text`` within the bound (unchanged when it fits), and its :class:`TextSize`;
    ``where`` is the attribute of the displayed object that holds all of it (see
    :func:`left_out_line`)."""
    total_bytes = _utf8_len(text)
    total_lines = _line_count(text)
    if total_lines <= max_lines and total_bytes <= max_bytes:
        return text, TextSize(total_lines, total_bytes, total_lines, total_bytes)
    head = _head(text, max_lines, max_bytes)
    shown_bytes = _utf8_len(head)
    # the head lost only its last newline: every newline left ends a kept line (an empty
    # last kept line too, which _line_count would drop as a trailing newline)
    shown_lines = head.count("\n") + 1 if head else 0
    size = TextSize(total_lines, total_bytes, shown_lines, shown_bytes)
    return f"{head}\n{left_out_line(size, where)}", size


def bound_text(text: str, where: str | None = WHOLE_TEXT) -> str:
    """``text/plain``: JAX's text within the bound, then one line on what was left out."""
    return bounded(text, where=where)[0]


def text_size(text: str) -> TextSize:
    """What :func:`bound_text` keeps of ``text``, for a payload to tell its view."""
    return bounded(text)[1]


def left_out_line(size: TextSize, where: str | None = WHOLE_TEXT) -> str:
    """The one line after a cut text: how much is missing and where all of it is.

    ``where`` must be an attribute the displayed object really has (``.text`` of a
    display, ``.jaxpr_text`` of an :class:`~workbench.engine.Inspection`, ``.text`` of an
    ``HloReport``); ``None`` for a record that has none, and then the line names no place
    rather than a wrong one."""
    head = (
        f"[… {size.lines - size.shown_lines:,} more lines "
        f"({_mb(size.bytes - size.shown_bytes)}) left out of {size.lines:,} lines, "
        f"{_mb(size.bytes)}"
    )
    if where is None:
        return f"{head}, not saved in the notebook]"
    return (
        f"{head}: the full text is {where} of the returned object "
        f"(e.g. _{where} or Out[n]{where}), kept by the kernel, not saved in the notebook]"
    )


__all__ = [
    "HTML_MAX_BYTES",
    "TEXT_MAX_BYTES",
    "TEXT_MAX_LINES",
    "WHOLE_TEXT",
    "TextSize",
    "bound_text",
    "bounded",
    "left_out_line",
    "text_size",
]
