"""The mesh explorer's engine on the user's own objects: a mesh's and an array's text for
the controls (read back by the explorer's own parser, checked against JAX's shardings),
and bad inputs blamed on the field that caused them, with JAX's own words."""

from __future__ import annotations

import jax
import numpy as np
import pytest
from jax.sharding import NamedSharding
from jax.sharding import PartitionSpec as P

from workbench.engine.sharding.mesh_explorer import (
    ExplorerConfig,
    FieldInputError,
    array_fields,
    explore,
    mesh_fields,
    short_error,
    spec_text,
)
from workbench.engine.sharding.spec import parse_spec


@pytest.mark.parametrize(
    ("spec", "rank"),
    [
        (P("a", None), 2),
        (P("a"), 3),
        (P(("a", "b"), None), 2),
        (P(None, "b"), 2),
        (P(), 1),
    ],
)
def test_spec_text_reads_back_as_the_same_partition_spec(spec, rank):
    entries = parse_spec(spec_text(spec, rank))
    assert len(entries) == rank
    back = P(*[tuple(e) if len(e) > 1 else (e[0] if e else None) for e in entries])
    mesh = jax.make_mesh((2, 4), ("a", "b"))
    shape = (8,) * rank
    # the same blocks on the same devices as JAX's own sharding of that spec
    assert NamedSharding(mesh, back).devices_indices_map(shape) == NamedSharding(
        mesh, spec
    ).devices_indices_map(shape)


def test_an_arrays_fields_start_the_explorer_on_its_own_layout():
    mesh = jax.sharding.Mesh(np.array(jax.devices()).reshape(4, 2), ("rows", "cols"))
    x = jax.device_put(np.zeros((16, 6), np.float32), NamedSharding(mesh, P("rows", "cols")))
    fields, its_mesh = array_fields(x)
    assert its_mesh is mesh
    res = explore(ExplorerConfig.default(len(jax.devices()), **mesh_fields(mesh), **fields))
    lay = res.inputs[0]
    assert lay.shape == list(x.shape) and lay.dtype == str(x.dtype)
    blocks = {
        tuple(
            (s.start or 0, s.stop if s.stop is not None else n)
            for s, n in zip(i, x.shape, strict=True)
        )
        for i in x.sharding.devices_indices_map(x.shape).values()
    }
    assert {tuple(zip(s.start, s.stop, strict=True)) for s in lay.shards} == blocks
    single, none = array_fields(jax.device_put(np.zeros(5), jax.devices()[0]))
    assert none is None and single["spec"] == "None"


def test_short_error_keeps_the_end_of_a_long_jax_message():
    mesh = jax.make_mesh((2, 4), ("data", "model"))
    with pytest.raises(Exception) as jax_said:
        NamedSharding(mesh, P("data", "data"))
    short = short_error(jax_said.value)
    assert short.startswith(type(jax_said.value).__name__ + ": ")
    assert len(short) <= len(type(jax_said.value).__name__) + 2 + 141
    assert str(jax_said.value).strip().splitlines()[0].endswith(short.split("…", 1)[-1])


@pytest.mark.parametrize(
    ("overrides", "field"),
    [
        ({"mesh_shape": "3, 3"}, "mesh_shape"),
        ({"axis_names": "data"}, "axis_names"),
        ({"axis_names": "data, data"}, "axis_names"),
        ({"axis_types": "Manual"}, "axis_types"),
        ({"dtype": "float99"}, "dtype"),
        ({"shape": "-2"}, "shape"),
        ({"spec": "data, data"}, "spec"),
        ({"operation": "matmul", "rhs_spec": "nope"}, "rhs_spec"),
        ({"operation": "matmul", "out_spec": "model, model"}, "out_spec"),
        ({"operation": "reduce", "reduce_axes": "q"}, "reduce_axes"),
        ({"operation": "function"}, "function_name"),
    ],
)
def test_each_bad_input_names_its_field(overrides, field):
    with pytest.raises(FieldInputError) as err:
        explore(ExplorerConfig.default(len(jax.devices()), **overrides))
    assert err.value.field == field


def test_a_bad_spec_carries_jaxs_own_error():
    mesh = jax.make_mesh((2, 4), ("data", "model"))
    with pytest.raises(Exception) as jax_said:
        NamedSharding(mesh, P("data", "data"))
    with pytest.raises(FieldInputError) as err:
        explore(ExplorerConfig.default(len(jax.devices()), spec="data, data"))
    assert err.value.jax_error == short_error(jax_said.value)
