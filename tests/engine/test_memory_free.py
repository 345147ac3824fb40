"""The free actions' measurement: while the action runs, the workbench holds no array
(else the array a frame kept would outlive the action and its bytes be counted short)."""

from __future__ import annotations

import gc
import sys

import jax
import jax.numpy as jnp

from workbench.engine.memory import owners


def test_no_frame_of_the_measurement_holds_an_array_while_the_action_runs():
    held = {"k": jnp.ones((300,))}
    keep = jnp.ones((7,))  # noqa: F841 - another live array: the list is not just ours
    holding: list[str] = []

    def action():
        frame = sys._getframe(1)
        while frame is not None:
            if frame.f_code.co_filename == owners.__file__:
                holding.extend(
                    f"{frame.f_code.co_name}: {k}"
                    for k, v in frame.f_locals.items()
                    if isinstance(v, jax.Array)
                    or (isinstance(v, list) and any(isinstance(x, jax.Array) for x in v))
                )
            frame = frame.f_back
        held.clear()

    gc.collect()
    before = sum(a.nbytes for a in jax.live_arrays())
    freed = owners.freed_by(action, "history")
    gc.collect()
    after = sum(a.nbytes for a in jax.live_arrays())
    assert holding == []
    assert freed.nbytes == before - after == 300 * 4
    assert freed.arrays == 1
