"""A real ipykernel driven through jupyter_client, speaking the side panel's comm protocol
as the JupyterLab extension does (for tests/ipython/test_sidepanel_comm.py and
benchmarks/bench_sidepanel.py).

Every message the kernel sends on a ``jax-workbench`` comm (comm_open data and comm_msg
data) is validated against ``workbench/schemas/comm/sidepanel.schema.json`` as it arrives,
so no test can see a message the schema does not allow.
"""

from __future__ import annotations

import queue
import tempfile
import time
import uuid
from dataclasses import dataclass, field
from typing import Any

from jupyter_client.manager import KernelManager

from tests.browser import kernel_env
from workbench import schemas

TARGET = "jax-workbench"


@dataclass
class CommEvent:
    """One comm message seen on IOPub: open / msg / close, its comm and data."""

    kind: str  # "open" | "msg" | "close"
    comm_id: str
    data: dict[str, Any]
    #: when the kernel sent it (its header's date, in seconds): spacing read here is the
    #: kernel's, not this process's (which a loaded machine may leave to read late, in bursts)
    t: float
    target: str | None = None


@dataclass
class CellResult:
    reply: dict[str, Any]
    stdout: str = ""
    stderr: str = ""
    outputs: list[dict[str, Any]] = field(default_factory=list)
    error: str | None = None

    @property
    def ok(self) -> bool:
        return self.reply.get("status") == "ok"


class PanelKernel:
    """A kernel with 8 fake CPU devices that imports this checkout's workbench."""

    def __init__(self) -> None:
        self._ipython_dir = tempfile.TemporaryDirectory(prefix="wb-panel-ipython-")
        self.km = KernelManager(kernel_name="python3")
        self.km.start_kernel(env=dict(kernel_env(), IPYTHONDIR=self._ipython_dir.name))
        self.kc = self.km.client()
        self.kc.start_channels()
        self.kc.wait_for_ready(timeout=120)
        self.events: list[CommEvent] = []
        self.statuses: list[tuple[str, float]] = []
        self._client_comms: set[str] = set()  # comms this client opened

    # -- IOPub ---------------------------------------------------------------------------
    def _take(self, msg: dict[str, Any]) -> None:
        kind = msg["msg_type"]
        content = msg["content"]
        now = time.monotonic()
        if kind == "status":
            self.statuses.append((content["execution_state"], now))
            return
        sent = msg["header"]["date"].timestamp()  # a datetime: jupyter_client parses it
        if kind == "comm_open" and content.get("target_name") == TARGET:
            schemas.validate_message(content["data"])
            self.events.append(CommEvent("open", content["comm_id"], content["data"], sent, TARGET))
        elif kind == "comm_msg":
            if self._ours(content["comm_id"]):
                schemas.validate_message(content["data"])
                self.events.append(CommEvent("msg", content["comm_id"], content["data"], sent))
        elif kind == "comm_close":
            if self._ours(content["comm_id"]):
                self.events.append(
                    CommEvent("close", content["comm_id"], content.get("data") or {}, sent)
                )

    def _ours(self, comm_id: str) -> bool:
        return comm_id in self._client_comms or any(
            e.comm_id == comm_id for e in self.events if e.kind == "open"
        )

    def pump(self, seconds: float) -> None:
        """Read IOPub for ``seconds`` (messages keep arriving from timers)."""
        end = time.monotonic() + seconds
        while True:
            left = end - time.monotonic()
            if left <= 0:
                return
            try:
                msg = self.kc.get_iopub_msg(timeout=min(left, 0.2))
            except queue.Empty:
                continue
            self._take(msg)

    def wait_for(self, pred: Any, timeout: float = 30.0) -> CommEvent:
        """Pump until an event satisfies ``pred`` (checked on events seen so far too)."""
        end = time.monotonic() + timeout
        seen = 0
        while True:
            for e in self.events[seen:]:
                if pred(e):
                    return e
            seen = len(self.events)
            if time.monotonic() > end:
                raise TimeoutError(f"no such comm event in {timeout}s; saw {self.events[-5:]}")
            try:
                msg = self.kc.get_iopub_msg(timeout=0.2)
            except queue.Empty:
                continue
            self._take(msg)

    # -- shell ---------------------------------------------------------------------------
    def execute(
        self, code: str, cell_id: str | None = None, timeout: float = 300.0, silent: bool = False
    ) -> CellResult:
        """Run a cell as JupyterLab does (its ``cellId`` in the request's metadata) and read
        IOPub until the kernel is idle again."""
        content = {
            "code": code,
            "silent": silent,
            "store_history": not silent,
            "user_expressions": {},
            "allow_stdin": False,
            "stop_on_error": True,
        }
        msg = self.kc.session.msg(
            "execute_request", content, metadata={"cellId": cell_id} if cell_id else {}
        )
        self.kc.shell_channel.send(msg)
        msg_id = msg["header"]["msg_id"]
        out = CellResult(reply={})
        end = time.monotonic() + timeout
        while True:
            if time.monotonic() > end:
                raise TimeoutError(f"cell did not finish: {code[:80]!r}")
            try:
                m = self.kc.get_iopub_msg(timeout=1.0)
            except queue.Empty:
                continue
            self._take(m)
            if m.get("parent_header", {}).get("msg_id") != msg_id:
                continue
            kind, c = m["msg_type"], m["content"]
            if kind == "stream":
                if c["name"] == "stdout":
                    out.stdout += c["text"]
                else:
                    out.stderr += c["text"]
            elif kind in ("execute_result", "display_data"):
                out.outputs.append(c)
            elif kind == "error":
                out.error = f"{c['ename']}: {c['evalue']}"
            elif kind == "status" and c["execution_state"] == "idle":
                break
        while True:
            reply = self.kc.get_shell_msg(timeout=timeout)
            if reply["parent_header"].get("msg_id") == msg_id:
                out.reply = reply["content"]
                return out

    def run_ok(self, code: str, cell_id: str | None = None, timeout: float = 300.0) -> CellResult:
        out = self.execute(code, cell_id, timeout)
        assert out.ok, f"{code!r} failed: {out.error}\n{out.stderr}"
        return out

    def open_comm(self, data: dict[str, Any] | None = None) -> str:
        """Open a comm to the target from the client, as the panel does (data: hello)."""
        comm_id = uuid.uuid4().hex
        self._client_comms.add(comm_id)
        msg = self.kc.session.msg(
            "comm_open",
            {"comm_id": comm_id, "target_name": TARGET, "data": data if data is not None else {}},
        )
        self.kc.shell_channel.send(msg)
        return comm_id

    def send(self, comm_id: str, data: Any) -> None:
        self.kc.shell_channel.send(
            self.kc.session.msg("comm_msg", {"comm_id": comm_id, "data": data})
        )

    def hello(self, timeout: float = 60.0) -> tuple[str, dict[str, Any]]:
        """Open a comm with hello; return its id and the snapshot it got."""
        comm_id = self.open_comm({"protocol": 1, "type": "hello", "client": "test"})
        e = self.wait_for(
            lambda e: (
                e.comm_id == comm_id and (e.kind == "close" or e.data.get("type") == "snapshot")
            ),
            timeout,
        )
        assert e.kind == "msg", "the kernel closed the comm instead of answering hello"
        return comm_id, e.data

    def messages(
        self, comm_id: str, kind: str | None = None, since: int = 0
    ) -> list[dict[str, Any]]:
        """Data of the comm_msgs on ``comm_id`` (of type ``kind``), from event ``since``."""
        return [
            e.data
            for e in self.events[since:]
            if e.kind == "msg"
            and e.comm_id == comm_id
            and (kind is None or e.data.get("type") == kind)
        ]

    def closed(self, comm_id: str) -> bool:
        return any(e.kind == "close" and e.comm_id == comm_id for e in self.events)

    def restart(self) -> None:
        self.km.restart_kernel(now=True)
        self.kc.wait_for_ready(timeout=120)

    def shutdown(self) -> None:
        try:
            self.kc.stop_channels()
        finally:
            self.km.shutdown_kernel(now=True)
            self._ipython_dir.cleanup()


__all__ = ["CellResult", "CommEvent", "PanelKernel", "TARGET"]
