"""Real browsers for tests: Debian's chromium driven by Playwright, never a downloaded one."""

from __future__ import annotations

import os
import shutil
import socket
import subprocess
from pathlib import Path
from typing import IO

CHROMIUM_ARGS = ["--no-sandbox", "--disable-gpu", "--disable-background-networking",
                 "--disable-component-update", "--disable-sync", "--no-first-run"]


def chromium_path() -> str:
    path = os.environ.get("CHROMIUM") or shutil.which("chromium") or "/usr/bin/chromium"
    if not Path(path).exists():
        raise RuntimeError("Debian's chromium is required for browser tests: apt-get install chromium")
    return path


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def artifacts_dir() -> Path:
    d = Path(os.environ.get("TEST_ARTIFACTS", Path(__file__).resolve().parent.parent / "test-artifacts"))
    d.mkdir(parents=True, exist_ok=True)
    return d


def stop_server(proc: subprocess.Popen, log: IO[bytes]) -> None:
    """Terminate a server started by a test (kill it if it lingers) and close its log."""
    proc.terminate()
    try:
        proc.wait(timeout=20)
    except subprocess.TimeoutExpired:
        proc.kill()
    log.close()
