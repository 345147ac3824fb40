"""Panel in a notebook without the internet: BokehJS and Panel's files from the Jupyter server.

``pn.extension()`` in a notebook has two modes, and neither suits a workbench notebook:
``inline=True`` pastes BokehJS and Panel into the output (megabytes saved with the
notebook), and the default points ``<script>`` and stylesheet URLs at cdn.bokeh.org and
cdn.holoviz.org, so the explorer cell stays blank without internet access.  Yet the Jupyter
server already serves the same files: Panel's server extension
(``panel.io.jupyter_server_extension``, enabled by Panel's own wheel through
``etc/jupyter/jupyter_server_config.d/panel-client-jupyter.json``) routes
``{base_url}panel-preview/static/`` to Bokeh's static directory and
``{base_url}panel-preview/static/extensions/panel/`` to Panel's ``dist/``, the files of the
very Panel and Bokeh the kernel imports when kernel and server share an environment.

The kernel does not know the server's ``base_url`` (``/``, ``/user/<name>/`` on a hub or
Binder, ...) but the page does: JupyterLab 4 and Notebook 7 both carry it in the
``jupyter-config-data`` script element.  So the URLs are mapped in the page, by a small
helper (:data:`LOCAL_URL_JS`, about 2 KB at the top of Panel's loader script):

* the loader's ``<script>`` URLs (BokehJS, Panel) are rewritten here, in the kernel, into
  calls of that helper (an ipykernel display-publisher hook held only while
  ``pn.extension()`` publishes);
* the stylesheets Panel's models name by CDN URL, in the documents it renders and in the
  updates it sends later over the comm, are mapped by wrapping BokehJS's
  ``ImportedStyleSheet`` models in the page, before any document is embedded.

Where there is no Jupyter page (an exported notebook, VS Code, Colab, nbviewer) the helper
maps them to an empty ``data:`` script: nothing is asked of any outside host, the app (which
needs its kernel anyway) stays undrawn, and the explorer's saved picture of its state (a
workbench output of its own) shows what it showed.  The saved notebook carries Panel's usual outputs plus the
helper, about 95 KB for the explorer against some 6 MB with ``inline=True``.

Requires Panel's server extension in the *server's* environment (``jax-workbench doctor``
checks the Jupyter config), with the same Panel and Bokeh versions as the kernel: the usual
case of one environment for both.  In Pyodide (JupyterLite) Panel's own choice stands.

Known limit: only the explorer's own ``pn.extension()`` is localised.  A user's own
``pn.extension()`` in the same notebook still names the CDNs; offline its loader's requests
fail and leave Panel's page-wide loader state waiting (its loaders capture ``window.Bokeh``
when they start), so after a reload of such a notebook the explorer's saved render shows
but a re-run of its cell does not draw, and a user's cell *before* the explorer leaves the
explorer blank.  Seen in a browser with outside requests blocked; not yet handled here.
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

#: Panel's Jupyter server extension: serves ``{base_url}panel-preview/static/...``.
PANEL_SERVER_EXTENSION = "panel.io.jupyter_server_extension"

#: Panel's MIME type for its loader script (pyviz_comms.LOAD_MIME), also sent as JavaScript.
LOAD_MIME = "application/vnd.holoviews_load.v0+json"

#: The JavaScript helper that maps a CDN URL to the Jupyter server's copy, named once per page.
LOCAL_URL_FUNCTION = "__jwbLocalUrl"

#: Defines ``window.__jwbLocalUrl(url)`` once per page and makes Bokeh's stylesheet models use
#: it.  The base URL comes from the page's ``jupyter-config-data`` and must be a plain path
#: (anything else, or no Jupyter page: an empty ``data:`` script, nothing fetched); the result is absolute on the page's origin, so
#: Bokeh's loader recognises a script it has already injected and does not load it twice.
#:
#: Stylesheets: Panel names them by CDN URL in the documents it renders *and* in the updates
#: it sends later over the comm (a widget whose ``stylesheets`` are recomputed sends new
#: ``ImportedStyleSheet`` models), so rewriting what we publish is not enough.  Each
#: ``ImportedStyleSheet`` model builds a detached ``<link>`` in ``underlying()`` (nothing is
#: fetched before it is attached); the wrapper points it at the local copy first.  Installed
#: at once when BokehJS is on the page, else in the capture phase of the load event of the
#: script that brings it (before Bokeh's own onload callbacks, so before any document embeds).
LOCAL_URL_JS = (
    "window.__jwbLocalUrl = window.__jwbLocalUrl || (function () {\n"
    "  var base = null;\n"
    "  try {\n"
    "    var el = document.getElementById('jupyter-config-data');\n"
    "    if (el) { base = JSON.parse(el.textContent).baseUrl; }\n"
    "  } catch (e) { base = null; }\n"
    "  var valid = typeof base === 'string' && /^\\/[\\w\\-.~%@+\\/]*$/.test(base);\n"
    "  if (valid && base.charAt(base.length - 1) !== '/') { base += '/'; }\n"
    "  var root = valid ? window.location.origin + base + 'panel-preview/static/' : null;\n"
    "  var PANEL = /^https:\\/\\/cdn\\.holoviz\\.org\\/panel\\/[^\\/]+\\/dist\\//;\n"
    "  var BOKEH = /^https:\\/\\/cdn\\.bokeh\\.org\\/bokeh\\/(?:release|dev)\\/"
    "(bokeh(?:-[a-z]+)?)-[^\\/]*?(\\.min)?\\.js$/;\n"
    "  var local = function (url) {\n"
    "    if (typeof url !== 'string') { return url; }\n"
    "    if (root === null) {\n"
    "      return PANEL.test(url) || BOKEH.test(url) ? 'data:text/javascript,' : url;\n"
    "    }\n"
    "    if (PANEL.test(url)) { return url.replace(PANEL, root + 'extensions/panel/'); }\n"
    "    var m = BOKEH.exec(url);\n"
    "    if (m) { return root + 'js/' + m[1] + (m[2] || '') + '.js'; }\n"
    "    return url;\n"
    "  };\n"
    "  local.base = valid ? base : null;\n"
    "  var patch = function (B) {\n"
    "    if (!B || !B.Models || typeof B.Models.get !== 'function') { return; }\n"
    "    ['ImportedStyleSheet', 'GlobalImportedStyleSheet'].forEach(function (name) {\n"
    "      var M = null;\n"
    "      try { M = B.Models.get(name); } catch (e) { M = null; }\n"
    "      if (!M || !Object.prototype.hasOwnProperty.call(M.prototype, 'underlying')\n"
    "          || M.prototype.underlying.__jwbLocal) { return; }\n"
    "      var underlying = M.prototype.underlying;\n"
    "      var wrapped = function () {\n"
    "        var sheet = underlying.call(this);\n"
    "        var url = local(this.url);\n"
    "        if (url !== this.url && sheet && sheet.el && typeof sheet.replace === 'function'\n"
    "            && sheet.el.getAttribute('href') !== url) { sheet.replace(url); }\n"
    "        return sheet;\n"
    "      };\n"
    "      wrapped.__jwbLocal = true;\n"
    "      M.prototype.underlying = wrapped;\n"
    "    });\n"
    "  };\n"
    "  local.install = function () {\n"
    "    var B = window.Bokeh;\n"
    "    patch(B);\n"
    "    if (B && B.versions && typeof B.versions.forEach === 'function') {\n"
    "      B.versions.forEach(function (v) { patch(v); });\n"
    "    }\n"
    "  };\n"
    "  if (root !== null) {\n"
    "    document.addEventListener('load', function (e) {\n"
    "      if (e.target && e.target.tagName === 'SCRIPT') { local.install(); }\n"
    "    }, true);\n"
    "  }\n"
    "  return local;\n"
    "})();\n"
    "if (window.__jwbLocalUrl.base !== null) { window.__jwbLocalUrl.install(); }\n"
)

# A JavaScript string literal holding a Panel or BokehJS CDN URL: a quote not escaped by a
# backslash (so a URL inside another string, e.g. an HTML pane's text, is left alone), the
# URL (no quote, backslash or space can occur in it), the closing quote.
_CDN_LITERAL = re.compile(
    r'(?<!\\)"(https://cdn\.(?:holoviz\.org/panel/[^/"\\\s]+/dist/'
    r'|bokeh\.org/bokeh/(?:release|dev)/)[^"\\\s]*)"'
)


def localise_js(code: str) -> str:
    """``code`` with each CDN URL literal resolved at run time by :data:`LOCAL_URL_JS`.

    Unchanged (no helper added) when it names no CDN URL.
    """
    new, count = _CDN_LITERAL.subn(rf'window.{LOCAL_URL_FUNCTION}("\1")', code)
    return LOCAL_URL_JS + new if count else code


def localise_bundle(data: dict[str, Any]) -> dict[str, Any]:
    """A MIME bundle whose scripts load Panel's and Bokeh's files from the Jupyter server."""
    out = dict(data)
    for mime, value in data.items():
        if not isinstance(value, str):
            continue
        if mime in ("application/javascript", LOAD_MIME):
            out[mime] = localise_js(value)
    return out


def _display_publisher() -> Any:
    """ipykernel's display publisher when one is running with transform hooks, else None."""
    try:
        from IPython import get_ipython
    except ImportError:
        return None
    ip = get_ipython()
    pub = getattr(ip, "display_pub", None)
    if pub is None or not hasattr(pub, "register_hook") or not hasattr(pub, "unregister_hook"):
        return None
    return pub


@contextmanager
def localised_display() -> Iterator[bool]:
    """While open, every display message this kernel thread publishes is localised.

    Yields whether the hook is in place (False outside ipykernel: nothing is rewritten).
    """
    pub = _display_publisher()
    if pub is None:
        yield False
        return

    def hook(msg: dict[str, Any]) -> dict[str, Any]:
        content = msg.get("content")
        if isinstance(content, dict) and isinstance(content.get("data"), dict):
            content["data"] = localise_bundle(content["data"])
        return msg

    pub.register_hook(hook)
    try:
        yield True
    finally:
        pub.unregister_hook(hook)


def _in_pyodide() -> bool:
    import sys

    return sys.platform == "emscripten"


def panel_server_extension_enabled() -> bool | None:
    """Whether a Jupyter server started from this environment loads Panel's server extension.

    Read from the Jupyter config path (``jupyter_server_config.d`` included), as
    ``jupyter server extension list`` does; Panel's wheel enables it, a user may have
    disabled it.  None when jupyter_server is not installed here (or its config is unreadable).
    """
    try:
        from jupyter_core.paths import jupyter_config_path
        from jupyter_server.extension.config import ExtensionConfigManager
    except ImportError:
        return None
    try:
        manager = ExtensionConfigManager(read_config_path=jupyter_config_path())
        return bool(manager.enabled(PANEL_SERVER_EXTENSION))
    except Exception:  # a broken config file: say unknown, never break the cell
        return None


def load_panel_extension(*args: Any, **kwargs: Any) -> bool:
    """``pn.extension(*args, **kwargs)`` whose loader fetches BokehJS and Panel locally.

    Returns whether the loader was localised.  Panel's own choice (the CDNs) stands in
    Pyodide (JupyterLite: no Jupyter server to serve the files) and where this environment's
    Jupyter config does not enable Panel's server extension: the files would be missing
    there, while the CDNs at least work online.
    """
    import panel as pn

    if _in_pyodide() or not panel_server_extension_enabled():
        pn.extension(*args, **kwargs)
        return False
    # Panel >= 1.10 in a kernel launched by a Jupyter server with its extension
    # (PANEL_JUPYTER_ENDPOINT set) names ``/panel-preview/...`` from the server's root, which
    # misses a base_url (JupyterHub, Binder) and bypasses the page's mapping: ask it for the
    # CDN URLs, which the page maps under its base_url.
    pn.config.notebook_resources = "cdn"  # type: ignore[misc,unused-ignore]  # a setter property; stubs vary by Panel version
    with localised_display() as hooked:
        pn.extension(*args, **kwargs)
    return hooked


__all__ = [
    "LOAD_MIME",
    "LOCAL_URL_FUNCTION",
    "LOCAL_URL_JS",
    "PANEL_SERVER_EXTENSION",
    "load_panel_extension",
    "localise_bundle",
    "localise_js",
    "localised_display",
    "panel_server_extension_enabled",
]
