"""``_jupyter_labextension_paths``: where ``jupyter labextension develop`` finds the built
extension (``extension/package.json``'s ``outputDir``) and what it is called."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import tomllib
from importlib.metadata import PackageNotFoundError, version
from pathlib import Path

import pytest

import workbench

ROOT = Path(__file__).resolve().parents[2]


def test_labextension_paths_match_the_build_and_the_wheel():
    (entry,) = workbench._jupyter_labextension_paths()
    assert entry == {"src": "labextension", "dest": "jax-workbench"}
    package = json.loads((ROOT / "extension" / "package.json").read_text())
    built = (ROOT / "extension" / package["jupyterlab"]["outputDir"]).resolve()
    assert built == Path(workbench.__file__).parent / entry["src"]
    assert package["name"] == entry["dest"]
    shared = tomllib.loads((ROOT / "pyproject.toml").read_text())["tool"]["hatch"]["build"][
        "targets"
    ]["wheel"]["shared-data"]
    assert shared["workbench/labextension"] == f"share/jupyter/labextensions/{entry['dest']}"


@pytest.mark.slow  # `jupyter labextension develop` in a subprocess
def test_develop_links_this_checkout(tmp_path):
    """``jupyter labextension develop --overwrite .`` (jupyter-builder's develop) links
    this checkout's build; into a temporary labextensions dir, never the environment's."""
    if not (ROOT / "workbench" / "labextension" / "package.json").is_file():
        pytest.skip("extension not built here (cd extension && npm run build)")
    if shutil.which("jupyter-builder") is None or shutil.which("jupyter") is None:
        pytest.skip("no jupyter or jupyter-builder")
    try:
        version("jax-workbench")  # else develop would `pip install -e .` first
    except PackageNotFoundError:
        pytest.skip("jax-workbench not installed")
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    out = subprocess.run(
        [
            "jupyter",
            "labextension",
            "develop",
            "--overwrite",
            ".",
            "--DevelopLabExtensionApp.sys_prefix=False",
            f"--DevelopLabExtensionApp.labextensions_dir={tmp_path}",
        ],
        cwd=ROOT,
        env=env,
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert out.returncode == 0, out.stdout + out.stderr
    link = tmp_path / "jax-workbench"
    assert link.is_symlink() and link.resolve() == (ROOT / "workbench" / "labextension").resolve()
