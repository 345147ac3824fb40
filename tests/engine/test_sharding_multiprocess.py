"""Two JAX processes on 127.0.0.1 (jax.distributed, CPU collectives): who owns which shards."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from tests.browser import free_port

pytestmark = pytest.mark.slow  # two Python processes start JAX and talk over TCP

ROOT = Path(__file__).resolve().parents[2]


def test_two_processes_see_addressable_and_remote_shards(tmp_path):
    port = free_port()
    env = {k: v for k, v in os.environ.items() if k != "XLA_FLAGS"}
    procs = []
    for pid in (0, 1):
        log = open(tmp_path / f"p{pid}.log", "wb")
        procs.append(
            (
                subprocess.Popen(
                    [
                        sys.executable,
                        "-m",
                        "tests.mesh_two_process_child",
                        str(pid),
                        str(port),
                        str(tmp_path / f"p{pid}.json"),
                    ],
                    cwd=ROOT,
                    env=env,
                    stdout=log,
                    stderr=subprocess.STDOUT,
                ),
                log,
            )
        )
    try:
        for proc, _ in procs:
            proc.wait(timeout=120)
    finally:
        for proc, log in procs:
            if proc.poll() is None:
                proc.kill()
                proc.wait()
            log.close()
    for pid, (proc, _) in enumerate(procs):
        assert proc.returncode == 0, (tmp_path / f"p{pid}.log").read_text()[-3000:]
    reports = [json.loads((tmp_path / f"p{pid}.json").read_text()) for pid in (0, 1)]
    for pid, rep in enumerate(reports):
        assert rep["process_index"] == pid and rep["process_count"] == 2
        lay = rep["layout"]
        assert lay["process_index"] == pid and len(lay["devices"]) == 8
        owners = {d["id"]: d["process"] for d in lay["devices"]}
        mine = {d["id"] for d in lay["devices"] if d["addressable"]}
        assert len(mine) == 4 and all(owners[i] == pid for i in mine)
        assert {owners[i] for i in owners} == {0, 1}
        # the 'hosts' axis splits rows between processes: this process holds one half
        my_rows = {tuple(s["start"])[0] for s in lay["shards"] if set(s["devices"]) <= mine}
        assert len(my_rows) == 1
        assert f"process {pid} addresses 4 of 8 devices" in rep["text"]
        assert "not addressable from process" in rep["text"] and rep["html_has_remote"]
        ex = rep["explorer"]
        assert ex["process_count"] == 2 and ex["device_count"] == 8
        assert [(c["kind"], c["axes"]) for c in ex["collectives"]] == [("all-reduce", ["local"])]
    assert reports[0]["layout"]["shards"] == reports[1]["layout"]["shards"]
