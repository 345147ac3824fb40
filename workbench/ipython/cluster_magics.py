"""IPython front door: ``%jaxcluster`` and ``%jaxcluster profile``, and each engine's set-up.

``%jaxcluster`` runs in the notebook's kernel (which need not have JAX devices of its own)
and shows the newest ``workbench.cluster(...)``'s processes side by side: their compile
ledgers with program fingerprints, divergence in words, memory, the latest step times with
the slowest flagged.  ``%jaxcluster profile`` puts the processes' latest ``%%jaxprof``
(else ``%jaxbench``) step times side by side with the time each spent in collectives.

:func:`engine_setup` runs in every engine when the cluster starts or attaches: it loads
the workbench there (so ``%%px`` cells can use its magics, whose outputs ipyparallel
labels by engine, i.e. by process) and feeds the process's agent the benchmarks its
magics produce.
"""

from __future__ import annotations

from typing import Any

from IPython.core.error import UsageError
from IPython.core.magic import Magics, line_magic, magics_class
from IPython.core.magic_arguments import argument, magic_arguments

from workbench.api import cluster as cluster_api
from workbench.engine.cluster.agent import AGENT
from workbench.ipython.args import parse_magic_line
from workbench.ipython.session import Result, Session
from workbench.views.cluster import cluster_display


def _on_result(result: Result) -> None:
    if result.kind == "bench":
        value = result.value
        AGENT.note_bench(str(getattr(value, "label", "")), getattr(value, "median", None))


def engine_setup() -> dict[str, Any]:
    """In an engine: ``%load_ext workbench`` and the agent told of each benchmark."""
    from IPython import get_ipython

    from workbench.engine.cluster import agent

    agent.install()
    shell = get_ipython()
    if shell is None:
        return {"workbench": False}
    # no side panel announcement from an engine: ipyparallel would forward its comm to the
    # notebook's kernel, whose front end has a side panel of its own
    kernel = getattr(shell, "kernel", None)
    try:
        shell.kernel = None
    except Exception:
        kernel = None
    try:
        shell.run_line_magic("load_ext", "workbench")
    finally:
        if kernel is not None:
            shell.kernel = kernel
    session = Session.of(shell)
    if session is not None:
        session.on_result(_on_result)
    return {"workbench": session is not None}


@magics_class
class ClusterMagics(Magics):
    """``%jaxcluster``."""

    @magic_arguments()
    @argument(
        "what",
        nargs="?",
        choices=("profile",),
        metavar="profile",
        help="the processes' latest %%%%jaxprof (else %%jaxbench) step times side by side",
    )
    @argument(
        "--timeout",
        type=float,
        default=30.0,
        metavar="SECONDS",
        help="how long to wait for each process to answer (one that does not is named)",
    )
    @line_magic
    def jaxcluster(self, line: str = "") -> Any:
        """The processes of ``workbench.cluster(...)`` side by side: compile ledgers with
        program fingerprints, divergence in words, memory, step times (slowest flagged)."""
        args, _ = parse_magic_line(self.jaxcluster, line)
        c = cluster_api.current()
        if c is None:
            raise UsageError(
                "%jaxcluster: no cluster in this kernel; start one with "
                "rc = workbench.cluster(n=2) (or attach with workbench.cluster(connect=...))"
            )
        rep = c.report(profile=args.what == "profile", timeout=args.timeout)
        return cluster_display(rep)


__all__ = ["ClusterMagics", "engine_setup"]
