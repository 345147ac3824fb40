"""The memory monitor: live-array bytes per device from JAX's own arrays, without keeping
any of them alive.  Expected sizes come from the arrays (``nbytes``, the sharding)."""

from __future__ import annotations

import gc
import weakref

import jax
import jax.numpy as jnp
import numpy as np
import pytest
from jax.sharding import Mesh, NamedSharding, PartitionSpec

from workbench import schemas
from workbench.engine.monitor import kernel_info, sample_memory
from workbench.engine.monitor.memory import live_bytes_by_device
from workbench.views import sidepanel_messages as pm


def _bytes(sample, device_id):
    return {d.id: d.live_bytes for d in sample.devices}[device_id]


@pytest.fixture
def quiet_gc():
    """Arrays left in reference cycles by earlier tests are freed now, not by a collection
    that happens to run between two samples (which read as a few bytes less grown)."""
    gc.collect()
    gc.disable()
    try:
        yield
    finally:
        gc.enable()


def test_a_sample_counts_an_array_on_its_device(quiet_gc):
    before = sample_memory("request")
    x = jnp.ones((256, 1024), jnp.float32)
    after = sample_memory("request")
    dev = next(iter(x.sharding.addressable_devices)).id
    assert after.live_bytes - before.live_bytes == x.nbytes
    assert _bytes(after, dev) - _bytes(before, dev) == x.nbytes
    assert after.live_arrays - before.live_arrays == 1
    del x


def test_sharded_and_replicated_arrays_count_each_devices_share(quiet_gc):
    devices = jax.devices()
    assert len(devices) == 8
    mesh = Mesh(np.array(devices), ("d",))
    before = sample_memory("request")
    sharded = jax.device_put(jnp.zeros((8, 1024)), NamedSharding(mesh, PartitionSpec("d")))
    replicated = jax.device_put(jnp.zeros((1024,)), NamedSharding(mesh, PartitionSpec()))
    after = sample_memory("request")
    # the host-side zeros passed to device_put are gone: count only what is live now
    for d in devices:
        grew = _bytes(after, d.id) - _bytes(before, d.id)
        assert grew == sharded.nbytes // 8 + replicated.nbytes
    assert after.live_bytes - before.live_bytes == sharded.nbytes + 8 * replicated.nbytes
    del sharded, replicated


def test_no_reference_is_kept():
    x = jnp.arange(4096.0)
    nbytes = x.nbytes
    ref = weakref.ref(x)
    sample = sample_memory("start", "3", "cell-id")
    live_bytes_by_device()
    del x
    gc.collect()
    assert ref() is None  # the sample kept numbers only
    assert isinstance(sample.live_bytes, int)
    later = sample_memory("end")
    assert later.live_bytes <= sample.live_bytes - nbytes


def test_deleted_arrays_hold_nothing():
    x = jnp.ones((512, 512))
    nbytes = x.nbytes
    before = sample_memory("request")
    x.delete()
    after = sample_memory("request")
    assert before.live_bytes - after.live_bytes == nbytes


def test_cpu_reports_no_allocator_figures_and_messages_validate():
    info = kernel_info()
    assert [d.id for d in info.devices] == [d.id for d in jax.devices()]
    assert all(
        d.memory_stats == (d_.memory_stats() is not None)
        for d, d_ in zip(info.devices, jax.devices(), strict=True)
    )
    sample = sample_memory("load")
    for d in sample.devices:
        stats = jax.devices()[d.id].memory_stats()
        expected = None if stats is None else stats.get("bytes_in_use")
        assert d.bytes_in_use == expected
    msg = pm.snapshot("0", info, [], 0, [], [pm.memory_sample(sample)], [], [])
    schemas.validate_message(msg)
    with pytest.raises(ValueError):
        sample_memory("whenever")


def test_arrays_sharing_a_layout_are_each_counted_on_every_device_they_hold(quiet_gc):
    """The walk works out bytes once per (sharding, shape, dtype): many arrays of one
    layout, and arrays of other layouts beside them, still add up shard by shard."""
    mesh = Mesh(np.array(jax.devices()).reshape(4, 2), ("a", "b"))
    rows = NamedSharding(mesh, PartitionSpec("a"))
    one = jax.devices()[1]
    before_bytes, before_count = live_bytes_by_device()
    # from host buffers: no intermediate device array that a collection would free later
    same = [jax.device_put(np.full((64,), i, np.float32), one) for i in range(40)]
    sharded = [jax.device_put(np.full((8, 6), i, np.float32), rows) for i in range(12)]
    other = jax.device_put(np.ones((3, 5), np.int8), one)
    made = [*same, *sharded, other]
    after_bytes, after_count = live_bytes_by_device()
    assert after_count - before_count == len(made)
    grew = {i: after_bytes.get(i, 0) - before_bytes.get(i, 0) for i in after_bytes}
    expected: dict[int, int] = {}
    for a in made:  # from JAX's own shards, not the walk's arithmetic
        for s in a.addressable_shards:
            expected[s.device.id] = expected.get(s.device.id, 0) + s.data.nbytes
    assert {i: b for i, b in grew.items() if b} == expected
    del same, sharded, other, made
