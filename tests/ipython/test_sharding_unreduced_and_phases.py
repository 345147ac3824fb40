"""``%sharding`` of an array whose PartitionSpec has an ``unreduced`` set (newer JAX), and the
phase its errors name: the expression it evaluates, or the layout it reads, never "the call"."""

from __future__ import annotations

import inspect

import jax
import jax.numpy as jnp
import numpy as np
import pytest
from jax.sharding import AxisType, Mesh, NamedSharding
from jax.sharding import PartitionSpec as P

from workbench.views.sharding import MIME

HAS_UNREDUCED = "unreduced" in inspect.signature(P).parameters


def _explicit_mesh() -> Mesh:
    devs = np.array(jax.devices()[:8], dtype=object).reshape(4, 2)
    return Mesh(devs, ("X", "Y"), axis_types=(AxisType.Explicit,) * 2)


@pytest.mark.skipif(not HAS_UNREDUCED, reason="this JAX's PartitionSpec has no unreduced set")
def test_sharding_of_an_unreduced_array_shows_its_blocks_and_partial_sums(run, shell):
    mesh = _explicit_mesh()
    spec = P("X", None, unreduced={"Y"})
    y = jax.jit(lambda a: a * 2, out_shardings=NamedSharding(mesh, spec))(jnp.ones((8, 4, 2)))
    shell.user_ns["su_y"] = y
    r = run("%sharding su_y").ok()
    lay = r.bundle[MIME]["layouts"][0]
    # the blocks are those of the partitions alone (JAX's own index map for them)
    imap = NamedSharding(mesh, P("X", None)).devices_indices_map(y.shape)
    want: dict[tuple, list[int]] = {}
    for dev, index in imap.items():
        key = tuple(
            (s.start or 0, s.stop if s.stop is not None else n)
            for s, n in zip(index, y.shape, strict=True)
        )
        want.setdefault(key, []).append(dev.id)
    got = {
        tuple(zip(s["start"], s["stop"], strict=True)): sorted(s["devices"]) for s in lay["shards"]
    }
    assert got == {k: sorted(v) for k, v in want.items()}
    text = r.bundle["text/plain"]
    assert "unreduced={'Y'}" in text and "partial sums" in text
    assert "replicated over 'Y'" not in text  # the devices along Y hold no copies


def test_sharding_errors_name_what_failed_not_a_call(run):
    said = run("%sharding su_no_such_name").short_error()
    assert "(evaluating the expression)" in said and "evaluating the call" not in said
    said = run("%sharding [1, 2]").short_error()
    assert "(reading the layout)" in said and "evaluating the call" not in said
