"""The package stays typed, linted and formatted: ``mypy workbench``, ``ruff check`` and
``ruff format --check`` report nothing.

Run in the suite, quick loop included (so the README's test command, which CI runs, and a
developer's ``nox -s quick`` check them) rather than as separate CI steps that a local run would
skip.  The wheel ships ``py.typed``, so a type error here is a type error in every user's
editor.  mypy keeps its cache per environment (``.mypy_cache/<environment>``): the sessions on
the oldest and the newest JAX type-check against different JAX sources and would otherwise
invalidate each other's cache on every run.
"""

from __future__ import annotations

import hashlib
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]


def _run(*cmd: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", *cmd], cwd=ROOT, capture_output=True, text=True, timeout=600
    )


def _mypy_cache_dir() -> Path:
    env = hashlib.sha256(sys.prefix.encode()).hexdigest()[:12]
    return ROOT / ".mypy_cache" / f"py{sys.version_info[0]}{sys.version_info[1]}-{env}"


def test_mypy_reports_no_errors():
    proc = _run("mypy", "--cache-dir", str(_mypy_cache_dir()), "workbench")
    assert proc.returncode == 0, proc.stdout + proc.stderr


def test_ruff_reports_nothing():
    proc = _run("ruff", "check", ".")
    assert proc.returncode == 0, proc.stdout + proc.stderr


def test_ruff_format_changes_nothing():
    proc = _run("ruff", "format", "--check", ".")
    assert proc.returncode == 0, (
        "files `ruff format` would change (run `ruff format .`):\n" + proc.stdout + proc.stderr
    )
