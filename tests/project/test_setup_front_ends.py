"""What ``pip install -e .`` and the console script give a new user: both front ends the
README names (JupyterLab 4, Notebook 7), and ``jax-workbench lab --help`` that lists every
option ``lab`` takes, JupyterLab's own included (it forwards them)."""

from __future__ import annotations

import re
import subprocess
import sys
import tomllib
from pathlib import Path

import pytest
from packaging.requirements import Requirement
from packaging.version import Version

ROOT = Path(__file__).resolve().parents[2]


def test_install_gives_notebook_7_as_the_readme_says():
    project = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))["project"]
    reqs = {r.name: r for r in map(Requirement, project["dependencies"])}
    assert "notebook" in reqs, "Notebook 7 must come with the package, not only with [test]"
    assert not reqs["notebook"].specifier.contains(Version("6.5"))  # 7 or newer
    assert "jupyterlab" in reqs
    readme = (ROOT / "README.md").read_text(encoding="utf-8")
    assert "Notebook 7" in readme and "jupyter notebook" in readme


@pytest.mark.slow  # two subprocesses (ours and JupyterLab's own --help)
def test_lab_help_lists_its_options_and_the_jupyterlab_options_it_forwards():
    ours = subprocess.run(
        [sys.executable, "-m", "workbench.apps.cli", "lab", "--help"],
        capture_output=True,
        text=True,
        timeout=120,
        cwd=ROOT,
    )
    assert ours.returncode == 0, ours.stderr
    for option in ("--port", "--fake-devices", "--dir", "--help-all"):
        assert option in ours.stdout
    theirs = subprocess.run(
        [sys.executable, "-m", "jupyterlab", "--help"], capture_output=True, text=True, timeout=120
    ).stdout
    options = theirs[theirs.index("Options\n=======") :]
    flags = re.findall(r"^(--[\w-]+)", options, flags=re.MULTILINE)
    assert len(flags) > 10  # the premise: JupyterLab lists its options
    missing = [f for f in flags if f not in ours.stdout]
    assert not missing, missing
