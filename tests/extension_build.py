"""Whether this checkout's JupyterLab extension build is current: one rule for ``noxfile.py``
(which builds once before a session's tests) and the tests (``tests.browser``'s
``ensure_extension_built``, for a developer's ``pytest`` without nox).

``npm run build`` writes two things from ``extension/``'s sources and the schemas: the
labextension in ``workbench/labextension`` and the standalone runtime outputs embed,
``workbench/views/static/standalone.js``.  Either missing, or older than the newest source
file, and a test would exercise a build of other sources than the ones checked out: the
change a developer just made would not be what the browser shows.  Modification times
decide, as ``make`` does: every build rewrites both outputs, and a ``git checkout`` or an
edit gives the files it touches the current time.

Standard library only: ``noxfile.py`` imports it in nox's own interpreter.
"""

from __future__ import annotations

from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
EXT = ROOT / "extension"
LABEXTENSION = ROOT / "workbench" / "labextension"
STANDALONE = ROOT / "workbench" / "views" / "static" / "standalone.js"
#: what the build reads (node_modules aside: ``npm ci`` decides those), as (path, the glob of
#: the files under it that count): of workbench/schemas only the JSON, not the package's
#: Python, whose ``__pycache__`` every test session writes after the build
SOURCES = (
    *(
        (EXT / n, "*")
        for n in ("src", "style", "schema", "package.json", "tsconfig.json", "scripts")
    ),
    (ROOT / "workbench" / "schemas", "*.json"),
)


def _files(*paths: tuple[Path, str]) -> list[Path]:
    """The files at or under each ``(path, glob)`` that match its glob (a path that is not
    there adds none)."""
    found: list[Path] = []
    for path, pattern in paths:
        if path.is_file():
            found.append(path)
        elif path.is_dir():
            found += [p for p in path.rglob(pattern) if p.is_file()]
    return found


def _newest_mtime(*paths: tuple[Path, str]) -> float:
    return max([0.0, *(p.stat().st_mtime for p in _files(*paths))])


def missing() -> list[str]:
    """The build's outputs that are not there (relative to the checkout): the labextension's
    ``package.json``, its ``remoteEntry`` and style bundles, the standalone runtime."""
    wanted = {
        "workbench/labextension/package.json": (LABEXTENSION / "package.json").is_file(),
        "workbench/labextension/static/remoteEntry.*.js": bool(
            list((LABEXTENSION / "static").glob("remoteEntry.*.js"))
        ),
        "workbench/labextension/static/style.js": (LABEXTENSION / "static" / "style.js").is_file(),
        "workbench/views/static/standalone.js": STANDALONE.is_file(),
    }
    return [name for name, there in wanted.items() if not there]


def stale_reason() -> str | None:
    """Why the build must run again (an output missing, or a source newer than an output),
    or None when it is current."""
    gone = missing()
    if gone:
        return f"not built: no {', '.join(gone)}"
    # the last build's time: it writes the runtime, then the labextension's files
    built = min(_newest_mtime((LABEXTENSION, "*")), STANDALONE.stat().st_mtime)
    newer = sorted(str(p.relative_to(ROOT)) for p in _files(*SOURCES) if p.stat().st_mtime > built)
    if newer:
        shown = ", ".join(newer[:5]) + (f" and {len(newer) - 5} more" if len(newer) > 5 else "")
        return f"sources changed since the last build: {shown}"
    return None
