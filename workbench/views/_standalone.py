"""The interactive views in every front end: the standalone runtime in the ``text/html`` part.

JupyterLab and Notebook 7 with the extension draw our ``application/vnd.jax-workbench.*+json``
payloads with the extension's MIME renderer (it outranks ``text/html``).  Everywhere else
(VS Code, Colab, nbconvert's HTML, Jupyter without the extension) only ``text/html`` is shown,
so that part carries the same TypeScript views as one ES module
(``workbench/views/static/standalone.js``, built by ``extension/scripts/bundle-standalone.mjs``
and shipped inside this package), with:

- a static summary (:func:`static_note`, the view's own HTML) that needs no script and no
  stylesheet: what GitHub's preview, nbviewer's static mode or an untrusted notebook show;
- ``<script type="application/vnd.jax-workbench.data" class="jwb-data">``: the output's MIME
  bundle (payload, unpacked, and ``text/plain``) as gzip + base64 JSON: never parsed as
  script, never inserted as HTML;
- ``<script type="application/vnd.jax-workbench.runtime" class="jwb-runtime">``: the runtime,
  gzip + base64, at most once per output;
- :data:`LOADER`: a few lines that decompress the runtime with ``DecompressionStream``,
  import it from a Blob URL (no ``eval``, nothing fetched from any host) and mount the
  output into a shadow root, where the runtime's draw hides the static summary.

Where the runtime goes (``workbench.config(html=...)``, :data:`HTML_MODES`):

- ``"auto"`` (the default): in every output while no JupyterLab extension listens (VS Code,
  Colab: each output may be drawn in an iframe of its own and needs its own copy); while the
  side panel's comm says the extension listens (it draws the outputs itself), only in the
  first output since it started listening: the saved notebook carries the runtime once,
  and an exported page mounts every output with it (the others keep their data and loader;
  an output above the one carrying it waits for it, :data:`LOADER`).  When the cell whose
  output carried it runs again (its old outputs are cleared), its next output carries it
  again (:func:`note_cell_started`).  Outputs cleared any other way (Clear Outputs, a
  deleted cell) can leave the notebook without it: ``"embed"`` then, or re-run that cell;
- ``"embed"``: in every output (each works alone anywhere, ~91 KB each);
- ``"static"``: the summary only.

The compile line under a cell (:data:`STATIC_KINDS`) is its own summary and carries none of
it.  README "Where it renders" has the measured sizes.
"""

from __future__ import annotations

import base64
import functools
import gzip
import json
import re
from importlib import resources
from typing import Any

from workbench.schemas import unpack
from workbench.views._html import PRE_STYLE, SUMMARY_MAX_BYTES, esc

HTML_MODES = ("auto", "embed", "static")

_settings: dict[str, Any] = {"html": "auto"}
#: set by the side panel (workbench.ipython.sidepanel) while the extension's comm listens
_extension_listening = False
#: "auto": whether an output has carried the runtime since the extension started listening
_runtime_sent = False
#: the front end's id of the running cell (None outside JupyterLab), and of the cell whose
#: output carried the runtime in "auto" mode
_current_cell: str | None = None
_carrier_cell: str | None = None
#: kinds whose static summary is the whole output (the compile line under a cell): no data,
#: no runtime, no script (30 cells would otherwise carry the runtime 30 times)
STATIC_KINDS = frozenset({"cache-cell"})

#: decompress the runtime once per page, import it from a Blob URL (revoked once imported),
#: mount this output: the ``.jwb-out`` around the script, or the one inside its parent (VS
#: Code's built-in HTML renderer re-creates each script as a child of its own wrapper of
#: the output).  An output above the one that carries the runtime (``"auto"`` mode: the
#: carrier may be any output of the page) waits in a list the runtime mounts once it loads
LOADER = (
    "(()=>{const s=document.currentScript,p=s&&s.parentElement,"
    "b=p&&(p.closest('.jwb-out')||p.querySelector('.jwb-out')),w=window,"
    "k='__jaxWorkbenchRuntime',q='__jaxWorkbenchWaiting';"
    "if(!b||!w.DecompressionStream)return;"
    "const f=(o,e)=>{o.setAttribute('data-jwb-ready','error');o.title=String(e);},"
    "g=(m,o)=>m.mount(o).catch(e=>f(o,e));"
    "if(!w[k]){const r=b.querySelector('script.jwb-runtime')||"
    "document.querySelector('script.jwb-runtime');if(!r){(w[q]=w[q]||[]).push(b);return;}"
    "const a=atob(r.textContent.trim()),u=new Uint8Array(a.length);"
    "for(let i=0;i<a.length;i++)u[i]=a.charCodeAt(i);"
    "w[k]=new Response(new Blob([u]).stream().pipeThrough("
    "new DecompressionStream('gzip'))).blob().then(t=>{const l=URL.createObjectURL("
    "new Blob([t],{type:'text/javascript'}));return import(l).finally(()=>"
    "URL.revokeObjectURL(l));});}"
    "w[k].then(m=>{g(m,b);(w[q]||[]).splice(0).forEach(o=>g(m,o));},e=>f(b,e));})();"
)

#: the line every static summary ends with
NEEDS_FRONT_END = (
    "The interactive view of this output needs a notebook front end that runs its "
    "scripts (JupyterLab, Notebook 7, VS Code, Colab, or this page opened in a browser)."
)


def html_mode() -> str:
    return str(_settings["html"])


def set_html_mode(mode: str) -> None:
    if mode not in HTML_MODES:
        raise ValueError(f"html must be one of {', '.join(map(repr, HTML_MODES))}, not {mode!r}")
    _settings["html"] = mode


def note_extension_listening(listening: bool) -> None:
    """The side panel's comm opened (or lost) a JupyterLab extension peer."""
    global _extension_listening, _runtime_sent
    if listening and not _extension_listening:
        _runtime_sent = False
    _extension_listening = listening


def note_cell_started(cell_id: str | None) -> None:
    """A cell starts (the shell session's hook, through the side panel).  When it is the cell
    whose output carried the runtime, the front end has just cleared that output: without
    this the notebook would be left with no output carrying the runtime."""
    global _current_cell, _runtime_sent
    _current_cell = cell_id
    if cell_id is not None and cell_id == _carrier_cell:
        _runtime_sent = False


def _wants_runtime() -> bool:
    """Whether the next output carries the runtime (see the module's note on the modes)."""
    global _runtime_sent, _carrier_cell
    mode = html_mode()
    if mode == "static":
        return False
    if mode == "embed" or not _extension_listening:
        return True
    if not _runtime_sent:
        _runtime_sent = True
        _carrier_cell = _current_cell
        return True
    return False


def runtime_path() -> Any:
    return resources.files("workbench.views").joinpath("static/standalone.js")


@functools.cache
def runtime_base64() -> str:
    """The runtime, gzipped and in base64 ('' when this checkout never built it)."""
    try:
        code = runtime_path().read_bytes()
    except OSError:
        return ""
    return base64.b64encode(gzip.compress(code, compresslevel=9, mtime=0)).decode()


def _pack_json(value: Any) -> str:
    text = json.dumps(value, separators=(",", ":"), ensure_ascii=False, allow_nan=False)
    # level 9: 13% smaller than 6 on a 24-block gradient (0.6 s more on a 30 s compile)
    return base64.b64encode(gzip.compress(text.encode(), compresslevel=9, mtime=0)).decode()


def static_note() -> str:
    return f'<p style="font-style:italic;opacity:0.8;margin:4px 0">{NEEDS_FRONT_END}</p>'


#: the bytes of the ``.jwb-out`` and ``.jwb-static`` boxes around a summary, at most
_WRAPPER_BYTES = 120


def bounded_summary(summary: str, text: str | None) -> str:
    """``summary`` when it is within :data:`SUMMARY_MAX_BYTES` (with the closing note), else
    the first lines of ``text`` (the output's ``text/plain``) that fit, escaped, in a
    ``<pre>``.  Each view's summary is small by construction (its tables cut by
    :func:`~workbench.views._html.summary_table`); this holds the bound for whatever a view
    did not cut (a list of notes, a headline made of user names)."""
    room = SUMMARY_MAX_BYTES - len(static_note().encode()) - _WRAPPER_BYTES
    if len(summary.encode()) <= room:
        return summary
    head = '<div class="jwb"><div>This output\'s summary is too long to show here; its text '
    head += f'begins:</div><pre style="{PRE_STYLE}">'
    tail = "\n…</pre></div>"
    lines = (text or "").splitlines()
    body, size = [], len((head + tail).encode())
    for line in lines:
        piece = esc(line) + "\n"
        n = len(piece.encode())
        if size + n > room:  # what fits of this line (an escaped character is <= 6 bytes)
            body.append(esc(line[: max(0, room - size) // 6]))
            break
        body.append(piece)
        size += n
    return head + "".join(body).removesuffix("\n") + tail


def standalone_html(summary: str, mime: str, payload: Any, text: str | None) -> str:
    """The ``text/html`` part: ``summary`` (static, already escaped HTML; bounded by
    :func:`bounded_summary`) plus, unless the mode is ``"static"``, the output's data, the
    runtime where :func:`html_mode` wants it, and the loader."""
    kind = mime.rsplit(".", 1)[-1].removesuffix("+json")
    parts = [f'<div class="jwb-out" data-jwb-kind="{kind}">', '<div class="jwb-static">']
    parts += [bounded_summary(summary, text), static_note(), "</div>"]
    mode = html_mode()
    runtime = runtime_base64()
    if mode != "static" and runtime and kind not in STATIC_KINDS:
        # unpacked: gzip of the plain JSON is ~10% smaller than of packed fields' base64
        data: dict[str, Any] = {mime: unpack(payload)}
        if text is not None:
            data["text/plain"] = text
        parts.append(
            '<script type="application/vnd.jax-workbench.data" class="jwb-data">'
            f"{_pack_json(data)}</script>"
        )
        if _wants_runtime():
            parts.append(
                '<script type="application/vnd.jax-workbench.runtime" class="jwb-runtime">'
                f"{runtime}</script>"
            )
        parts.append(f"<script>{LOADER}</script>")
    parts.append("</div>")
    return "".join(parts)


_DATA = re.compile(
    r'<script type="application/vnd\.jax-workbench\.data" class="jwb-data">([^<]*)</script>'
)


def static_part(html: str) -> str:
    """The static summary of a ``text/html`` part: what shows where scripts do not run."""
    end = html.find("<script")
    return html if end < 0 else html[:end]


def embedded_data(html: str) -> dict[str, Any] | None:
    """The MIME bundle a ``text/html`` part carries for the runtime (None when it carries
    none): what tests and tools read instead of parsing the static summary."""
    m = _DATA.search(html)
    if m is None:
        return None
    return dict(json.loads(gzip.decompress(base64.b64decode(m.group(1))).decode()))


__all__ = [
    "HTML_MODES",
    "LOADER",
    "NEEDS_FRONT_END",
    "bounded_summary",
    "embedded_data",
    "static_part",
    "html_mode",
    "note_cell_started",
    "note_extension_listening",
    "runtime_base64",
    "set_html_mode",
    "standalone_html",
]
