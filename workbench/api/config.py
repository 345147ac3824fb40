"""``workbench.config``: the kernel's settings for how outputs are written."""

from __future__ import annotations

from typing import Any

from workbench.views import _standalone


def config(html: str | None = None) -> dict[str, Any]:
    """Change settings (those given) and return them all.

    ``html``: what each output's ``text/html`` part carries for front ends without the
    JupyterLab extension (VS Code, Colab, exported HTML; see README "Where it renders"):

    - ``"auto"`` (default): the static summary, the output's data and the standalone runtime
      (about 85 KB); while the JupyterLab extension listens (its side panel's comm says so)
      the runtime goes only into the first output since then: the notebook carries it once,
      and an exported copy mounts every output with it;
    - ``"embed"``: the runtime in every output, so each is interactive on its own anywhere
      (an output cut out of a page, a front end that isolates outputs);
    - ``"static"``: the summary only (headline numbers and top rows, no script).
    """
    if html is not None:
        _standalone.set_html_mode(html)
    return {"html": _standalone.html_mode()}


__all__ = ["config"]
