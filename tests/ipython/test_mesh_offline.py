"""The notebook explorer's resources from the Jupyter server: the kernel side (quick tests).

The page side (the helper mapping URLs, BokehJS's stylesheet models) runs in a real browser
in ``tests/chromium/test_mesh_offline_browser.py``.
"""

from __future__ import annotations

import json
import subprocess
import sys

import pytest

from workbench.apps import notebook_resources as nr

BOKEH = "https://cdn.bokeh.org/bokeh/release/bokeh-3.9.2.min.js"
PANEL = "https://cdn.holoviz.org/panel/1.9.4/dist/panel.min.js"


def test_loader_urls_become_calls_of_the_page_helper():
    code = f'const js_urls = ["{BOKEH}", "{PANEL}", "https://example.org/other.js"];'
    out = nr.localise_js(code)
    assert out.startswith(nr.LOCAL_URL_JS)
    body = out[len(nr.LOCAL_URL_JS) :]
    assert body == (
        f'const js_urls = [window.__jwbLocalUrl("{BOKEH}"), '
        f'window.__jwbLocalUrl("{PANEL}"), "https://example.org/other.js"];'
    )


def test_urls_inside_other_strings_and_scripts_without_cdn_urls_are_left_alone():
    # a URL inside a JSON string (e.g. an HTML pane's text) is not a literal of its own
    inner = json.dumps({"text": f'<link href="{PANEL}">'})
    assert nr.localise_js(f"var doc = {inner};") == f"var doc = {inner};"
    plain = "console.log('no CDN here');"
    assert nr.localise_js(plain) == plain


def test_bundle_rewrites_only_scripts():
    data = {
        "application/javascript": f'load(["{BOKEH}"])',
        nr.LOAD_MIME: f'load(["{BOKEH}"])',
        "text/html": f'<a href="{BOKEH}">',
        "text/plain": BOKEH,
        "application/json": {"a": 1},
    }
    out = nr.localise_bundle(data)
    assert out["application/javascript"] == out[nr.LOAD_MIME] != data[nr.LOAD_MIME]
    assert "window.__jwbLocalUrl(" in out[nr.LOAD_MIME]
    assert {k: out[k] for k in ("text/html", "text/plain", "application/json")} == {
        k: data[k] for k in ("text/html", "text/plain", "application/json")
    }


class FakePublisher:
    """ipykernel's ZMQDisplayPublisher hook API: register_hook/unregister_hook."""

    def __init__(self) -> None:
        self.hooks: list = []

    def register_hook(self, hook) -> None:
        self.hooks.append(hook)

    def unregister_hook(self, hook) -> bool:
        self.hooks.remove(hook)
        return True


def test_display_hook_is_held_only_while_open(monkeypatch):
    pub = FakePublisher()
    monkeypatch.setattr(nr, "_display_publisher", lambda: pub)
    with nr.localised_display() as hooked:
        assert hooked and len(pub.hooks) == 1
        msg = {"content": {"data": {"application/javascript": f'x("{PANEL}")'}, "metadata": {}}}
        assert pub.hooks[0](msg) is msg
        assert msg["content"]["data"]["application/javascript"].startswith(nr.LOCAL_URL_JS)
        status = {"content": {"execution_state": "busy"}}
        assert pub.hooks[0](status) == {"content": {"execution_state": "busy"}}
    assert pub.hooks == []


def test_outside_ipykernel_nothing_is_hooked(shell):
    # a plain IPython shell's display publisher has no hooks: nothing to rewrite, no error
    with nr.localised_display() as hooked:
        assert hooked is False


def test_panel_keeps_its_cdn_where_the_server_extension_is_off(monkeypatch):
    import panel as pn

    calls: list = []
    monkeypatch.setattr(pn, "extension", lambda *a, **k: calls.append((a, k)))
    pub = FakePublisher()
    monkeypatch.setattr(nr, "_display_publisher", lambda: pub)
    monkeypatch.setattr(nr, "panel_server_extension_enabled", lambda: False)
    assert nr.load_panel_extension() is False and calls == [((), {})]
    monkeypatch.setattr(nr, "panel_server_extension_enabled", lambda: True)
    seen: list = []
    monkeypatch.setattr(pn, "extension", lambda *a, **k: seen.append(list(pub.hooks)))
    assert nr.load_panel_extension() is True and len(seen[0]) == 1 and pub.hooks == []


def _jupyter_lists_panel_extension(env: dict | None = None) -> bool:
    out = subprocess.run(
        [sys.executable, "-m", "jupyter", "server", "extension", "list"],
        capture_output=True,
        text=True,
        timeout=120,
        env=env,
    )
    text = out.stdout + out.stderr
    line = next(
        ln
        for ln in text.splitlines()
        if nr.PANEL_SERVER_EXTENSION in ln and ("enabled" in ln or "disabled" in ln)
    )
    return "enabled" in line


@pytest.mark.slow  # a `jupyter server extension list` subprocess (~9 s on 2 cores)
def test_server_extension_check_agrees_with_jupyter(monkeypatch, tmp_path):
    import os

    # enabled as Panel's wheel leaves it: the browser tests prove it (the loader was
    # localised, so this check said True, and the server served Panel's files)
    assert nr.panel_server_extension_enabled() is True
    # a user who disabled it (what `jupyter server extension disable --user` writes)
    (tmp_path / "jupyter_server_config.json").write_text(
        json.dumps({"ServerApp": {"jpserver_extensions": {nr.PANEL_SERVER_EXTENSION: False}}})
    )
    monkeypatch.setenv("JUPYTER_CONFIG_DIR", str(tmp_path))
    # in a virtualenv Jupyter ranks the environment's config above the user's
    # (JUPYTER_PREFER_ENV_PATH defaults to true there), so Panel's own "enabled" would win:
    # the user's setting decides where the user's directory comes first
    monkeypatch.setenv("JUPYTER_PREFER_ENV_PATH", "0")
    assert nr.panel_server_extension_enabled() is False
    assert _jupyter_lists_panel_extension(dict(os.environ)) is False
