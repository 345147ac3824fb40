"""Real browsers for tests: Debian's chromium driven by Playwright, never a downloaded one."""

from __future__ import annotations

import os
import shutil
import socket
from pathlib import Path

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
