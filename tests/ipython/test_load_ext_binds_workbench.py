"""``%load_ext workbench`` makes the README's next line work: ``workbench.mesh_explorer()``
needs the name ``workbench``, which the extension binds when the notebook has none, and
never over a name the user already has."""

from __future__ import annotations

import sys

import pytest
from IPython.core.interactiveshell import InteractiveShell
from IPython.utils.capture import capture_output
from traitlets.config import Config

import workbench
from workbench.ipython.session import Session


@pytest.fixture
def fresh_shell(shell):
    """A second real ``InteractiveShell`` (the suite's keeps ``sys.modules['__main__']``)."""
    main = sys.modules["__main__"]
    config = Config()
    config.HistoryManager.hist_file = ":memory:"
    other = InteractiveShell(config=config)
    sys.modules["__main__"] = main
    yield other
    if Session.of(other) is not None:
        workbench.unload_ipython_extension(other)
    other.history_manager.end_session()
    sys.modules["__main__"] = main


def _run(sh: InteractiveShell, code: str):
    with capture_output():
        res = sh.run_cell(code, store_history=False)
    assert res.error_in_exec is None and res.error_before_exec is None, res
    return res.result


def test_load_ext_binds_workbench_so_the_readme_line_works(fresh_shell):
    _run(fresh_shell, "%load_ext workbench")
    assert _run(fresh_shell, "workbench.mesh_explorer") is workbench.mesh_explorer
    assert _run(fresh_shell, "workbench") is workbench
    # bound as IPython binds its own names: not listed by %who among the user's variables
    assert "workbench" in fresh_shell.user_ns_hidden


def test_load_ext_keeps_the_users_own_workbench_name(fresh_shell):
    _run(fresh_shell, "workbench = 'my bench'")
    _run(fresh_shell, "%load_ext workbench")
    assert fresh_shell.user_ns["workbench"] == "my bench"
    assert "workbench" not in fresh_shell.user_ns_hidden
