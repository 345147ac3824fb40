"""tests/run_once.py, the suite's own machinery: a result made once per session across
processes, a failed make leaving nothing behind, and a session that makes and removes only
its own shared folder (a value inherited from an outer pytest is neither reused nor removed).
"""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

from tests import run_once

pytestmark = pytest.mark.skipif(run_once.fcntl is None, reason="run_once shares through fcntl")


@pytest.fixture
def session(monkeypatch, tmp_path):
    """A session of its own (the suite's, if any, is set aside and put back)."""
    monkeypatch.setattr(run_once, "_made", None)
    monkeypatch.delenv(run_once.ENV, raising=False)
    run_once.session_started()
    root = Path(os.environ[run_once.ENV])
    yield root
    run_once.session_finished()
    assert not root.exists()


#: a process that asks for the shared result: its ``make()`` logs its pid, and takes long
#: enough for the other processes to ask meanwhile
ASK = """
import os, sys, time
from tests import run_once
def make():
    with open(sys.argv[1], "a") as f:
        f.write(f"{os.getpid()}\\n")
    time.sleep(0.5)
    return 42
print(run_once.once("shared", make))
"""


def test_processes_asking_at_once_get_one_result_made_once(session, tmp_path):
    log = tmp_path / "made.log"
    root = Path(__file__).resolve().parents[2]
    env = dict(
        os.environ, PYTHONPATH=os.pathsep.join([str(root), os.environ.get("PYTHONPATH", "")])
    )
    # started processes inherit the session's variable, as pytest-xdist's workers do
    procs = [
        subprocess.Popen(
            [sys.executable, "-c", ASK, str(log)], env=env, stdout=subprocess.PIPE, text=True
        )
        for _ in range(3)
    ]
    outs = [p.communicate(timeout=120)[0].strip() for p in procs]
    assert [p.returncode for p in procs] == [0, 0, 0]
    assert outs == ["42"] * 3
    assert len(log.read_text().splitlines()) == 1


def test_a_failing_make_stores_nothing_and_leaves_the_lock_free(session):
    def fail() -> int:
        raise RuntimeError("no kernel")

    with pytest.raises(RuntimeError):
        run_once.once("flaky", fail)
    assert not list(session.glob("*.pickle"))
    assert run_once.once("flaky", lambda: 7) == 7
    assert run_once.once("flaky", lambda: 8) == 7


def test_a_session_makes_its_own_folder_and_removes_only_that(monkeypatch, tmp_path):
    outer = tmp_path / "outer"
    outer.mkdir()
    (outer / "kept.pickle").write_bytes(b"")
    monkeypatch.setattr(run_once, "_made", None)
    monkeypatch.setenv(run_once.ENV, str(outer))
    run_once.session_started()
    mine = Path(os.environ[run_once.ENV])
    assert mine != outer and mine.is_dir()
    run_once.session_finished()
    assert not mine.exists()
    assert os.environ[run_once.ENV] == str(outer) and (outer / "kept.pickle").exists()
