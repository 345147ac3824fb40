"""The extension's TypeScript checks, run from pytest (quick loop included): vitest (view
models), `tsc --noEmit`, Prettier and ESLint.

All need extension/node_modules (made by `pip install -e .` or the nox sessions, which run
`npm ci`, or by `cd extension && npm ci`); without it the tests fail rather than skip, because a
checkout whose TypeScript was never type-checked or unit-tested is not a passing one.

The four share one xdist group: they run one after another on one worker, after the generated
sources (`npm run build:workers`, which tsc and the renderer's tests import) are written once,
so no check reads a file while another process rewrites it.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

EXT = Path(__file__).resolve().parents[2] / "extension"

pytestmark = pytest.mark.xdist_group("extension-node")


def _npm_run(*args: str, timeout: float = 300) -> subprocess.CompletedProcess[str]:
    npm = shutil.which("npm")
    assert npm, "npm is needed to test the extension (Node.js 20+)"
    assert (EXT / "node_modules").exists(), (
        "extension/node_modules is missing: run `pip install -e .` or `cd extension && npm ci`"
    )
    # WORKBENCH_PYTHON: the interpreter running this suite, for the vitest tests that ask
    # Python where JupyterLab's files are (test/cells-style.test.ts reads its theme files)
    env = dict(os.environ, CI="1", FORCE_COLOR="0", NO_COLOR="1", WORKBENCH_PYTHON=sys.executable)
    return subprocess.run(
        [npm, *args], cwd=EXT, capture_output=True, text=True, timeout=timeout, env=env
    )


@pytest.fixture(scope="module")
def generated_sources() -> None:
    """src/generated/, which tsc and the tests importing the renderer need."""
    gen = _npm_run("run", "build:workers")
    assert gen.returncode == 0, (
        f"`npm run build:workers` failed:\n{(gen.stdout + gen.stderr)[-4000:]}"
    )


def test_vitest_view_models_pass(generated_sources):
    proc = _npm_run("test")
    out = proc.stdout + proc.stderr
    assert proc.returncode == 0, f"`npm test` (vitest) failed:\n{out[-8000:]}"
    # vitest must really have run test files (an empty glob would also exit 0 with --passWithNoTests)
    assert "Test Files" in out and " passed" in out, out[-4000:]
    assert " failed" not in out.split("Test Files", 1)[1].splitlines()[0], out[-4000:]


def test_typescript_has_no_type_errors(generated_sources):
    # incremental: an unchanged checkout is checked again in a second (tsc's own build info,
    # kept in node_modules/.cache beside ESLint's and Prettier's caches)
    proc = _npm_run(
        "exec",
        "--",
        "tsc",
        "--noEmit",
        "--incremental",
        "--tsBuildInfoFile",
        "node_modules/.cache/tsc/noemit.tsbuildinfo",
        "-p",
        "tsconfig.json",
    )
    assert proc.returncode == 0, (
        f"`tsc --noEmit` reports errors:\n{(proc.stdout + proc.stderr)[-8000:]}"
    )


def test_prettier_changes_nothing():
    proc = _npm_run("run", "prettier:check")
    assert proc.returncode == 0, (
        "files Prettier would change (`cd extension && npm run lint:fix`):\n"
        + (proc.stdout + proc.stderr)[-8000:]
    )


def test_eslint_reports_nothing():
    proc = _npm_run("run", "eslint:check")
    assert proc.returncode == 0, f"ESLint reports problems:\n{(proc.stdout + proc.stderr)[-8000:]}"
