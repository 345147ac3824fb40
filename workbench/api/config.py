"""``workbench.config``: the kernel's settings for how outputs are written."""

from __future__ import annotations

from typing import Any

from workbench.views import _standalone


def config(html: str | None = None) -> dict[str, Any]:
    """Change settings (those given) and return them all.

    ``html``: what each output's ``text/html`` part carries for front ends without the
    JupyterLab extension (VS Code, Colab, exported HTML; see README "Where it renders"):

    - ``"embed"`` (default): the static summary, the output's data and the standalone
      runtime (about 85 KB), so every output is interactive on its own, everywhere;
    - ``"lean"``: the runtime is left out while the JupyterLab extension is listening (its
      side panel's comm says so): smaller notebooks, but an exported copy is interactive
      only where one output still carries the runtime;
    - ``"static"``: the summary only (headline numbers and top rows, no script).
    """
    if html is not None:
        _standalone.set_html_mode(html)
    return {"html": _standalone.html_mode()}


__all__ = ["config"]
