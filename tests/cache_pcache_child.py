"""Child process for the persistent-cache test: compile one function, print its record.

Run twice with the same cache directory: the first run writes the entry, the second
must load it from disk (a persistent-cache hit), which only a fresh process shows.
"""

from __future__ import annotations

import json
import os
import sys

os.environ.setdefault("JAX_PLATFORMS", "cpu")

import jax  # noqa: E402
import jax.numpy as jnp  # noqa: E402

from workbench.engine.cache import cache, capture_compiles  # noqa: E402
from workbench.engine.cache.persistent import enable_persistent_cache  # noqa: E402


def main(directory: str) -> None:
    enable_persistent_cache(directory, min_compile_time_s=0, min_entry_size_bytes=0)

    @jax.jit
    def persisted(x):
        return jnp.tanh(x @ x.T).sum()

    with capture_compiles() as recs:
        persisted(jnp.ones((8, 8))).block_until_ready()
    user = [r.to_dict() for r in recs if r.origin == "user"]
    print(json.dumps({"records": user, "persistent": cache().persistent.to_dict()}))


if __name__ == "__main__":
    main(sys.argv[1])
