"""The package stays typed and linted: ``mypy workbench`` and ``ruff`` report nothing.

Run in the suite (so the README's test command, which CI runs, checks them) rather
than as separate CI steps that a local run would skip.  The wheel ships ``py.typed``,
so a type error here is a type error in every user's editor.
"""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]


def _run(*cmd: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", *cmd], cwd=ROOT, capture_output=True, text=True, timeout=600
    )


@pytest.mark.slow
def test_mypy_reports_no_errors():
    proc = _run("mypy", "workbench")
    assert proc.returncode == 0, proc.stdout + proc.stderr


def test_ruff_reports_nothing():
    proc = _run("ruff", "check", ".")
    assert proc.returncode == 0, proc.stdout + proc.stderr
