"""The extension's TypeScript checks, run from pytest: vitest (view models) and `tsc --noEmit`.

Both need extension/node_modules (made by `pip install -e .`, which runs `npm install`, or by
`cd extension && npm install`); without it the tests fail rather than skip, because a checkout
whose TypeScript was never type-checked or unit-tested is not a passing one.
"""

from __future__ import annotations

import os
import shutil
import subprocess
from pathlib import Path

import pytest

EXT = Path(__file__).resolve().parents[2] / "extension"

pytestmark = pytest.mark.slow


def _npm_run(*args: str, timeout: float = 300) -> subprocess.CompletedProcess[str]:
    npm = shutil.which("npm")
    assert npm, "npm is needed to test the extension (Node.js 20+)"
    assert (EXT / "node_modules").exists(), (
        "extension/node_modules is missing: run `pip install -e .` or `cd extension && npm install`"
    )
    env = dict(os.environ, CI="1", FORCE_COLOR="0", NO_COLOR="1")
    return subprocess.run(
        [npm, *args], cwd=EXT, capture_output=True, text=True, timeout=timeout, env=env
    )


def test_vitest_view_models_pass():
    proc = _npm_run("test")
    out = proc.stdout + proc.stderr
    assert proc.returncode == 0, f"`npm test` (vitest) failed:\n{out[-8000:]}"
    # vitest must really have run test files (an empty glob would also exit 0 with --passWithNoTests)
    assert "Test Files" in out and " passed" in out, out[-4000:]
    assert " failed" not in out.split("Test Files", 1)[1].splitlines()[0], out[-4000:]


def test_typescript_has_no_type_errors():
    # the worker sources are generated (src/generated/) before tsc can see every import
    gen = _npm_run("run", "build:workers")
    assert gen.returncode == 0, (
        f"`npm run build:workers` failed:\n{(gen.stdout + gen.stderr)[-4000:]}"
    )
    proc = _npm_run("exec", "--", "tsc", "--noEmit", "-p", "tsconfig.json")
    assert proc.returncode == 0, (
        f"`tsc --noEmit` reports errors:\n{(proc.stdout + proc.stderr)[-8000:]}"
    )
