"""One of two JAX processes on loopback (see tests/engine/test_sharding_multiprocess.py).

Usage: python -m tests.mesh_two_process_child PROCESS_ID COORDINATOR_PORT OUT_JSON
Each process has 4 CPU devices; together they form a 2 x 4 mesh.  The process
writes what %sharding and the explorer report from its side.
"""

from __future__ import annotations

import json
import os
import sys

os.environ["JAX_PLATFORMS"] = "cpu"
os.environ.pop("XLA_FLAGS", None)

import jax  # noqa: E402

jax.config.update("jax_num_cpu_devices", 4)
jax.config.update("jax_cpu_collectives_implementation", "gloo")


def main() -> None:
    pid, port, out = int(sys.argv[1]), int(sys.argv[2]), sys.argv[3]
    jax.distributed.initialize(
        coordinator_address=f"127.0.0.1:{port}",
        num_processes=2,
        process_id=pid,
        initialization_timeout=60,
    )
    import numpy as np
    from jax.sharding import NamedSharding
    from jax.sharding import PartitionSpec as P

    import workbench
    from workbench.engine.sharding.mesh_explorer import ExplorerConfig, explore
    from workbench.views.sharding import MIME

    mesh = jax.make_mesh((2, 4), ("hosts", "local"))
    data = np.arange(64, dtype=np.float32).reshape(8, 8)
    sharding = NamedSharding(mesh, P("hosts", "local"))
    x = jax.make_array_from_callback(data.shape, sharding, lambda idx: data[idx])
    bundle = workbench.sharding(x)._repr_mimebundle_()
    res = explore(
        ExplorerConfig(
            mesh_shape="2, 4",
            axis_names="hosts, local",
            shape="64, 64",
            spec="None, local",
            rhs_spec="local, None",
            operation="matmul",
        )
    )
    with open(out, "w") as f:
        json.dump(
            {
                "process_index": jax.process_index(),
                "process_count": jax.process_count(),
                "layout": bundle[MIME]["layouts"][0],
                "text": bundle["text/plain"],
                # the static summary (the text/html without scripts) says so too
                "html_has_remote": "not addressable from process" in bundle["text/html"],
                "explorer": res.to_dict(),
            },
            f,
        )
    jax.distributed.shutdown()


if __name__ == "__main__":
    main()
