"""Shared pieces of our self-contained HTML: escaping, ids, CSS, source labels.

Numbers are formatted in :mod:`workbench.views._format`; the JSON envelope is built in
:mod:`workbench.views._envelope`.

Every string that came from user code goes through :func:`esc`.  The CSS is
scoped under ``.jwb`` and uses JupyterLab's theme variables with light-theme
fallbacks, so the same HTML reads well in JupyterLab (light or dark), Notebook 7,
VS Code and an nbconvert export.
"""

from __future__ import annotations

import html
import linecache
import os
import re
import uuid
from collections.abc import Iterable
from typing import Any

from workbench.engine.common.source import cell_label


def esc(text: object) -> str:
    return html.escape(str(text), quote=True)


def new_id(prefix: str = "jwb") -> str:
    return f"{prefix}-{uuid.uuid4().hex[:10]}"


_IPYKERNEL_CELL = re.compile(r"(ipykernel_\d+[/\\]\d+\.py$|^<ipython-input-\d+-[0-9a-f]+>$)")
_WORKBENCH_CELL = re.compile(r"^<(?:workbench-cell|ipython-input)-(\d+)(?:-[0-9a-f]+)?>$")


def source_label(file: str, line: int) -> tuple[str, bool]:
    """(short label, is_cell) for a source location, e.g. ``("cell [3] line 4", True)``."""
    m = _WORKBENCH_CELL.match(file)
    if m or _IPYKERNEL_CELL.search(file):
        known = cell_label(file)
        number = known.number if known is not None else (int(m.group(1)) if m else None)
        return (f"cell [{number}] line {line}" if number else f"cell line {line}"), True
    return f"{os.path.basename(file)}:{line}", False


def cells_of(files: Iterable[str]) -> dict[str, dict[str, Any]]:
    """``{file: {"number": N|None, "cell_id": str|None}}`` for each of ``files`` that is a
    notebook cell :func:`cell_label` knows (the payloads' ``cells``: how a front end finds
    the cell editor a source line is in)."""
    out: dict[str, dict[str, Any]] = {}
    for file in dict.fromkeys(files):
        label = cell_label(file)
        if label is not None:
            out[file] = {"number": label.number, "cell_id": label.cell_id}
    return out


class LineCache:
    """``linecache.getline`` memoised per (file, line); views ask for the same line a lot."""

    def __init__(self) -> None:
        self._lines: dict[tuple[str, int], str] = {}

    def get(self, file: str, line: int) -> str:
        key = (file, line)
        text = self._lines.get(key)
        if text is None:
            text = linecache.getline(file, line).strip()
            self._lines[key] = text
        return text


#: inline style of every code block (``<pre>``): the essentials that must survive a sanitizer
PRE_STYLE = "white-space:pre;margin:0;font-size:12px;overflow-x:auto;line-height:1.45"
#: the theme's colours (JupyterLab's variables; light-theme fallbacks elsewhere)
FG1 = "var(--jp-content-font-color1,#1f2328)"
FG2 = "var(--jp-content-font-color2,#57606a)"
BORDER = "var(--jp-border-color2,#d0d7de)"
#: inline styles of tables, for the same reason.  No ``var()`` in inline essentials:
#: JupyterLab's sanitizer drops a whole ``style`` attribute that holds one, so borders are
#: a translucent grey that reads on light and dark backgrounds alike
NEUTRAL_BORDER = "rgba(128,128,128,0.5)"
TABLE_STYLE = "border-collapse:collapse;font-size:12px;margin:4px 0"
CELL_STYLE = f"border:1px solid {NEUTRAL_BORDER};padding:2px 8px;text-align:left;vertical-align:top"
#: shown only with our stylesheet (trusted notebooks, nbconvert, VS Code): pictures whose
#: SVG a sanitizer would strip into loose text; and its counterpart, shown only without it
STYLED_ONLY = 'class="jwb-styled" style="display:none"'
UNSTYLED_ONLY = 'class="jwb-nostyle"'

#: rows each table of a static summary shows (the interactive view has them all)
SUMMARY_ROWS = 8
#: characters of one cell of a summary table (a long name is cut with "…")
SUMMARY_CELL_CHARS = 120
#: characters of one line of prose in a summary (a note, a warning, a divergence)
NOTE_CHARS = 400
#: what a static summary (the ``text/html`` part before its data and runtime) may weigh:
#: its tables are cut at :data:`SUMMARY_ROWS` rows of :data:`SUMMARY_CELL_CHARS`-character
#: cells, so it stays this small whatever the program
SUMMARY_MAX_BYTES = 20_000


def cut(text: object, n: int = SUMMARY_CELL_CHARS) -> str:
    """``text`` cut to ``n`` characters (the last one "…"): a summary cell's text."""
    s = str(text)
    return s if len(s) <= n else s[: n - 1] + "…"


def summary_table(
    head: list[str],
    rows: list[list[str]],
    total: int | None = None,
    what: str = "rows",
    limit: int = SUMMARY_ROWS,
    attrs: str = "",
    html_cells: bool = False,
) -> str:
    """A table of a static summary (what shows where scripts do not run): its first
    ``limit`` (at most :data:`SUMMARY_ROWS`) ``rows``, then one line saying how many more of
    ``total`` the interactive view has.  Cells are plain text (escaped and cut here), or
    with ``html_cells`` markup the caller built from escaped, cut text; the borders are inline, so the table reads with no stylesheet.  Every view's summary draws
    its tables with this, which is what bounds them all (:data:`SUMMARY_MAX_BYTES`)."""
    n = min(limit, SUMMARY_ROWS)
    shown = rows[:n]
    th = "".join(f'<th style="{CELL_STYLE}">{esc(h)}</th>' for h in head)
    body = "".join(
        "<tr>"
        + "".join(f'<td style="{CELL_STYLE}">{c if html_cells else esc(cut(c))}</td>' for c in row)
        + "</tr>"
        for row in shown
    )
    table = (
        f'<table class="jwb-tab"{attrs} style="{TABLE_STYLE}"><thead><tr>{th}</tr></thead>'
        f"<tbody>{body}</tbody></table>"
    )
    return table + more_line((len(rows) if total is None else total) - len(shown), what)


def more_line(more: int, what: str) -> str:
    """The line under a summary table that was cut: how many ``what`` it left out."""
    return f"<div>... {more} more {esc(what)} not shown here</div>" if more > 0 else ""


_ESSENTIAL_STYLE = {"table": TABLE_STYLE, "th": CELL_STYLE, "td": CELL_STYLE, "pre": PRE_STYLE}
#: a tag whose style already has this keeps its own
_ESSENTIAL_KEY = {"table": "border-collapse", "th": "border", "td": "border", "pre": "white-space"}
_ESSENTIAL_TAG = re.compile(r"<(table|th|td|pre)(\s[^>]*)?>")
_STYLE_ATTR = re.compile(r'\sstyle="([^"]*)"')


def inline_essentials(html_text: str) -> str:
    """Our HTML with the essentials inline: each ``<table>``, ``<th>``, ``<td>`` and
    ``<pre>`` gets borders/padding (tables) or preformatting (code) in its ``style``
    attribute unless it has its own, so the output stays readable where a sanitizer strips
    the ``<style>`` block (untrusted notebooks in JupyterLab).  Only our own markup is
    touched: strings from user code are escaped, so they hold no tags."""

    def add(m: re.Match[str]) -> str:
        tag, attrs = m.group(1), m.group(2) or ""
        style = _STYLE_ATTR.search(attrs)
        if style is None:
            return f'<{tag}{attrs} style="{_ESSENTIAL_STYLE[tag]}">'
        if _ESSENTIAL_KEY[tag] in style.group(1):
            return m.group(0)
        merged = f' style="{_ESSENTIAL_STYLE[tag]};{style.group(1)}"'
        return f"<{tag}{attrs[: style.start()]}{merged}{attrs[style.end() :]}>"

    return _ESSENTIAL_TAG.sub(add, html_text)


CSS = """
.jwb{font-family:var(--jp-code-font-family,Menlo,Consolas,monospace);font-size:var(--jp-code-font-size,12.5px);
 color:var(--jp-content-font-color1,#1f2328);line-height:1.45;max-width:100%;overflow-x:auto}
.jwb pre{font-family:inherit;background:none;color:inherit;padding:0;border:0}
.jwb .jwb-head{font-family:var(--jp-ui-font-family,system-ui,sans-serif);margin:2px 0 6px 0}
.jwb .jwb-title{font-weight:600}
.jwb .jwb-meta{color:var(--jp-content-font-color2,#57606a)}
.jwb details{margin-left:1.5em}
.jwb details>summary{cursor:pointer;color:var(--jp-content-font-color2,#57606a);font-family:var(--jp-ui-font-family,system-ui,sans-serif)}
.jwb .jwb-note{font-family:var(--jp-ui-font-family,system-ui,sans-serif);color:var(--jp-content-font-color1,#1f2328);border-left:3px solid var(--jp-warn-color1,#bc4c00);padding-left:4px;margin:4px 0}
.jwb .jwb-cols{display:flex;gap:16px;align-items:flex-start;overflow-x:auto}
.jwb .jwb-col{flex:1 1 0;min-width:260px;border:1px solid var(--jp-border-color2,#d0d7de);border-radius:4px;padding:6px}
.jwb .jwb-err{border-left:4px solid var(--jp-error-color1,#cf222e);padding:4px 8px;font-family:var(--jp-ui-font-family,system-ui,sans-serif)}
.jwb .jwb-err pre{margin:2px 0;white-space:pre-wrap}
.jwb .jwb-styled{display:block!important}
.jwb .jwb-nostyle{display:none}
"""


def style_block() -> str:
    return f"<style>{CSS}</style>"
