"""A multi-process JAX program seen from one notebook (``workbench.cluster()``,
``%jaxcluster``).

``launch`` starts ipyparallel engines that become JAX processes (or attaches to the
user's), ``agent`` is the workbench's part in each process (its compile ledger with
program fingerprints, its latest step time), ``compare`` puts the processes side by side
and says where they diverge.
"""

from workbench.engine.cluster.agent import ClusterCompile, fingerprint
from workbench.engine.cluster.compare import ClusterReport, Divergence, compare
from workbench.engine.cluster.launch import ClusterHandle, attach, start

__all__ = [
    "ClusterCompile",
    "ClusterHandle",
    "ClusterReport",
    "Divergence",
    "attach",
    "compare",
    "fingerprint",
    "start",
]
