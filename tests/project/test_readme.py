"""The README's two set-up commands are the ones CI and users run."""

from __future__ import annotations

import re
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]


def _bash_blocks() -> list[str]:
    return re.findall(r"```bash\n(.*?)\n```", (ROOT / "README.md").read_text(), re.S)


def test_readme_has_exactly_two_setup_commands():
    blocks = _bash_blocks()
    assert len(blocks) == 2 and all("\n" not in b for b in blocks)
    assert "jax-workbench lab" in blocks[0]
    assert "pytest" in blocks[1]


def test_ci_runs_the_readme_test_command():
    ci_lines = (ROOT / ".ci" / "run").read_text().splitlines()
    assert _bash_blocks()[1] in ci_lines


def test_tour_notebook_exists():
    assert (ROOT / "notebooks" / "00_tour.ipynb").exists()
