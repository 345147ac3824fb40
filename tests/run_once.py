"""Expensive test inputs made once per test session, whichever pytest-xdist worker asks first.

The suite runs ``-n 2 --dist loadfile``: modules, not tests, are spread over the workers, so
two modules that read the same executed notebook (a tutorial's own checks and the checks
every tutorial shares; the browser tests and the saved-cell bounds of the 24-block model)
would each execute it in their own worker, a 24-block compile or a tutorial run twice.
``once(key, make)`` runs ``make()`` in the first worker that asks and stores its pickled
result in a folder every worker of the session shares; a worker that asks while it runs
waits for it (a file lock) rather than doing the same work beside it on the same two cores.

The folder is made by :func:`session_started` in the controlling process, before the
workers start (they inherit its environment variable), and removed at the session's end.
Without it (a module run alone, or a platform without ``fcntl``) ``make()`` simply runs.
"""

from __future__ import annotations

import hashlib
import os
import pickle
import shutil
import tempfile
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import TypeVar

try:
    import fcntl
except ImportError:  # not POSIX: no shared folder, each worker makes its own
    fcntl = None  # type: ignore[assignment]

T = TypeVar("T")
ENV = "WORKBENCH_TEST_SHARED_DIR"


def session_started() -> None:
    """Make the session's shared folder (the controlling process, before any worker)."""
    if fcntl is not None and ENV not in os.environ:
        os.environ[ENV] = tempfile.mkdtemp(prefix="wb-tests-shared-")


def session_finished() -> None:
    """Remove the shared folder (the controlling process, after every worker ended)."""
    root = os.environ.pop(ENV, None)
    if root:
        shutil.rmtree(root, ignore_errors=True)


def key_of(*parts: str) -> str:
    """A file name standing for ``parts`` (a notebook's name and its cells' text)."""
    return hashlib.sha256("\x00".join(parts).encode()).hexdigest()[:24]


@contextmanager
def _locked(path: Path) -> Iterator[None]:
    with open(path, "a+b") as f:
        fcntl.flock(f, fcntl.LOCK_EX)
        try:
            yield
        finally:
            fcntl.flock(f, fcntl.LOCK_UN)


def once(key: str, make: Callable[[], T]) -> T:
    """``make()``'s result, computed once per session across workers (see the module doc).
    A ``make()`` that raises stores nothing: the next caller tries again and fails alike."""
    root = os.environ.get(ENV)
    if fcntl is None or not root or not Path(root).is_dir():
        return make()
    done = Path(root) / f"{key}.pickle"
    with _locked(Path(root) / f"{key}.lock"):
        if done.exists():
            return pickle.loads(done.read_bytes())
        value = make()
        part = done.with_suffix(".part")
        part.write_bytes(pickle.dumps(value))
        part.replace(done)
        return value
