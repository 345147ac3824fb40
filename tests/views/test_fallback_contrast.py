"""Text colours of our stylesheets at >= 4.5:1 on the notebook's background in JupyterLab
Light and Dark, read from the themes JupyterLab itself installs (no browser needed).

The browser test measures what its notebooks happen to show; a note, a removed mesh axis
or a failed benchmark row may not be among them, so every ``color:`` of a rule that does
not set its own background is checked here against ``--jp-layout-color0`` (the
``.jp-Notebook`` background).  Pseudo-element icons (``::after { content: ' ⚠' }``) are
graphics (3:1 suffices) and left out."""

from __future__ import annotations

import re
import sys
from pathlib import Path

import pytest

from workbench.views import _html, bench, cache, sharding

ROOT = Path(__file__).resolve().parents[2]
THEMES = Path(sys.prefix) / "share" / "jupyter" / "lab" / "themes" / "@jupyterlab"


def _theme_vars(name: str) -> dict[str, str]:
    css = (THEMES / name / "index.css").read_text()
    return dict(re.findall(r"(--[\w-]+)\s*:\s*([^;}]+)", css))


def _resolve(value: str, env: dict[str, str]) -> str | None:
    value = value.strip()
    m = re.fullmatch(r"var\((--[\w-]+)\s*(?:,\s*(.+))?\)", value)
    if not m:
        return value
    if m.group(1) in env:
        return _resolve(env[m.group(1)], env)
    return _resolve(m.group(2), env) if m.group(2) else None


def _rgba(text: str) -> tuple[float, float, float, float] | None:
    c = text.strip().lower()
    if c == "white":
        return (255, 255, 255, 1)
    if c == "black":
        return (0, 0, 0, 1)
    if c.startswith("#"):
        h = c[1:]
        if len(h) in (3, 4):
            h = "".join(x * 2 for x in h)
        a = int(h[6:8], 16) / 255 if len(h) == 8 else 1.0
        return (int(h[0:2], 16), int(h[2:4], 16), int(h[4:6], 16), a)
    m = re.fullmatch(r"rgba?\(([^)]*)\)", c)
    if m:
        p = [float(x) for x in re.split(r"[,\s/]+", m.group(1).strip()) if x]
        return (p[0], p[1], p[2], p[3] if len(p) > 3 else 1.0)
    return None


def _lum(c: tuple[float, ...]) -> float:
    def ch(v: float) -> float:
        v /= 255
        return v / 12.92 if v <= 0.03928 else ((v + 0.055) / 1.055) ** 2.4

    return 0.2126 * ch(c[0]) + 0.7152 * ch(c[1]) + 0.0722 * ch(c[2])


def _ratio(fg: tuple[float, float, float, float], bg: tuple[float, float, float, float]) -> float:
    a = fg[3]
    mixed = tuple(fg[i] * a + bg[i] * (1 - a) for i in range(3))
    x, y = _lum(mixed), _lum(bg)
    return (max(x, y) + 0.05) / (min(x, y) + 0.05)


def _sheets() -> dict[str, str]:
    out = {
        "_html.CSS": _html.CSS,
        "bench.BENCH_CSS": bench.BENCH_CSS,
        "cache._CSS": cache._CSS,
        "sharding.CSS": sharding.CSS,
    }
    for path in sorted((ROOT / "extension" / "style").glob("*.css")):
        out[f"extension/style/{path.name}"] = path.read_text()
    return out


def _low_contrast(theme: str) -> list[str]:
    env = _theme_vars(theme)
    bg = _rgba(_resolve("var(--jp-layout-color0)", env) or "")
    assert bg is not None
    bad = []
    for name, css in _sheets().items():
        css = re.sub(r"/\*.*?\*/", "", css, flags=re.S)
        for m in re.finditer(r"([^{}]*)\{([^{}]*)\}", css):
            selector, body = m.group(1).strip(), m.group(2)
            if "background" in body or "::" in selector:
                continue
            for cm in re.finditer(r"(?<![\w-])color\s*:\s*([^;}]+)", body):
                value = _resolve(cm.group(1).replace("!important", ""), env)
                colour = _rgba(value) if value else None
                if colour is None:
                    continue
                r = _ratio(colour, bg)
                if r < 4.5:
                    bad.append(f"{name}: {selector} {cm.group(1).strip()} {r:.2f}:1")
    return bad


def test_the_theme_files_are_read():
    env = _theme_vars("theme-dark-extension")
    assert _resolve("var(--jp-layout-color0)", env) == "#111"
    # and the check sees a low colour: grey 3 on white is 2.7:1
    light = _theme_vars("theme-light-extension")
    assert (
        _ratio(
            _rgba(_resolve("var(--jp-content-font-color3)", light) or "") or (0, 0, 0, 0),
            (255, 255, 255, 1),
        )
        < 3
    )


@pytest.mark.parametrize("theme", ["theme-light-extension", "theme-dark-extension"])
def test_text_colours_reach_4_5_to_1(theme):
    assert _low_contrast(theme) == []
