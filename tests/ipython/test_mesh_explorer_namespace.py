"""The mesh explorer in a real IPython session: what it takes from the user's namespace.

Cells run in the session's ``InteractiveShell`` (its ``user_ns`` holds IPython's own
``open``, ``exit``...), as a notebook's do; the explorer is built over that namespace.
Expected layouts come from JAX (``devices_indices_map``), never typed in.
"""

from __future__ import annotations

import jax
import pytest

from workbench.apps.mesh_explorer import MeshExplorer
from workbench.engine.sharding.mesh_explorer import (
    FieldInputError,
    user_arrays,
    user_functions,
    user_meshes,
)

CELLS = """\
import jax, jax.numpy as jnp, numpy as np, os
from jax.numpy import cumsum
from os.path import join
from jax.sharding import NamedSharding, PartitionSpec as P
mx_mesh = jax.make_mesh((4, 2), ('batch', 'hidden'))
mx_rev = jax.sharding.Mesh(np.array(jax.devices()[::-1]).reshape(2, 4), ('a', 'b'))
mx_x = jax.device_put(jnp.ones((64, 32), jnp.bfloat16), NamedSharding(mx_mesh, P('batch', None)))
mx_plain = jnp.arange(12.0)
def mx_loss(v):
    return (v * 2).sum()
mx_step = jax.jit(lambda v: v @ v.T)
mx_lib = jax.jit(os.path.join)
class MxModel:
    pass
"""


@pytest.fixture(scope="module")
def ns(shell, run):
    run(CELLS).ok()
    yield shell.user_ns
    for name in [n for n in shell.user_ns if n.startswith("mx_") or n == "MxModel"]:
        del shell.user_ns[name]


def _mine(found: dict) -> list[str]:
    """The names this module's cells defined (the shared session holds other tests' too)."""
    return [n for n in found if n.startswith("mx_")]


def test_functions_are_the_users_own_jitted_first(ns):
    funcs = user_functions(ns)
    assert "open" in ns and "open" not in funcs  # IPython's own open is a plain function
    assert "cumsum" not in funcs and "join" not in funcs  # imported by name from modules
    assert "MxModel" not in funcs and "jax" not in funcs
    # a jit wrapper the user made of a library function is the user's; jitted ones first
    assert _mine(funcs) == ["mx_step", "mx_lib", "mx_loss"]


def test_meshes_and_arrays_are_offered_named_shardings_first(ns):
    assert _mine(user_meshes(ns)) == ["mx_mesh", "mx_rev"]
    assert _mine(user_arrays(ns)) == ["mx_x", "mx_plain"]


def test_app_starts_from_the_users_mesh_array_and_function(ns):
    app = MeshExplorer(namespace=ns)
    picked_mesh = ns[app.mesh_pick.value]
    picked_x = ns[app.array_pick.value]
    assert isinstance(picked_mesh, jax.sharding.Mesh)
    assert app.widgets["function_name"].value == next(iter(user_functions(ns, app.hidden)))
    assert "open" in app.hidden  # IPython's own names, read from the running shell
    res = app.result
    assert res is not None
    assert res.mesh.axis_names == list(picked_mesh.axis_names)
    assert res.mesh.axis_sizes == [picked_mesh.shape[a] for a in picked_mesh.axis_names]
    lay = res.inputs[0]
    assert lay.shape == list(picked_x.shape) and lay.dtype == str(picked_x.dtype)
    if isinstance(picked_x.sharding, jax.sharding.NamedSharding):
        # the array's current sharding is the starting spec: the same blocks JAX made
        blocks = {
            tuple(
                (s.start or 0, s.stop if s.stop is not None else n)
                for s, n in zip(i, lay.shape, strict=True)
            )
            for i in picked_x.sharding.devices_indices_map(picked_x.shape).values()
        }
        assert {tuple(zip(s.start, s.stop, strict=True)) for s in lay.shards} == blocks


def test_picking_a_mesh_uses_its_device_order_and_retargets_the_operand_spec(ns):
    # only this module's names: the explorer starts from the namespace's first mesh, and the
    # session's other tests leave theirs (a one-axis mesh first would already have set the
    # second operand's spec to "None, None", which fits every mesh and so stays)
    mine = {k: v for k, v in ns.items() if k.startswith("mx_")}
    app = MeshExplorer(namespace=mine, operation="matmul", shape="64, 64", spec="None, None")
    app.mesh_pick.value = "mx_rev"
    rev = ns["mx_rev"]
    assert app.result is not None and app.message.object.count("jwb-ok") == 1
    assert app.result.mesh.device_ids == [int(d.id) for d in rev.devices.flat]
    assert app.widgets["rhs_spec"].value == f"{rev.axis_names[-1]}, None"
    app.widgets["mesh_shape"].value = "4, 2"  # typed: no longer that mesh, JAX's order
    assert app.result.mesh.device_ids == [int(d.id) for d in jax.devices()]


def test_picking_an_array_fills_shape_dtype_and_spec(ns):
    app = MeshExplorer(namespace=ns, mesh_shape="2, 4", shape="8, 8", spec="data, None")
    app.array_pick.value = "mx_plain"
    x = ns["mx_plain"]
    assert app.widgets["shape"].value == str(x.shape[0])
    assert app.widgets["dtype"].value == str(x.dtype)
    assert app.widgets["spec"].value == "None"
    assert app.result is not None and app.result.inputs[0].shape == list(x.shape)


def test_bad_spec_error_sits_under_its_field_with_jaxs_words_until_fixed(ns):
    app = MeshExplorer(namespace=ns, mesh_shape="2, 4", axis_names="data, model")
    good = app.result
    mesh = jax.make_mesh((2, 4), ("data", "model"))
    with pytest.raises(Exception) as jax_said:
        jax.sharding.NamedSharding(mesh, jax.sharding.PartitionSpec("data", "data"))
    app.widgets["spec"].value = "data, data"
    pane = app.field_errors["spec"]
    assert pane.visible and type(jax_said.value).__name__ in pane.object
    assert "duplicate entries for `data`" in pane.object
    assert app.widgets["spec"].css_classes == ["jwb-invalid"]
    assert [k for k, p in app.field_errors.items() if p.visible] == ["spec"]
    assert "used twice" in app.message.object and app.result is good
    app.widgets["spec"].value = "data, None"
    assert not pane.visible and app.widgets["spec"].css_classes == []
    assert app.result is not good


@pytest.mark.parametrize(
    ("field", "value", "blamed"),
    [
        ("mesh_shape", "3, 3", "mesh_shape"),
        ("axis_names", "a, a", "axis_names"),
        ("axis_names", "a", "axis_names"),
        ("axis_types", "Manual", "axis_types"),
        ("shape", "-1, 4", "shape"),
        ("spec", "nope, None", "spec"),
        ("out_spec", "model, model", "out_spec"),
        ("rhs_spec", "data, data", "rhs_spec"),
    ],
)
def test_each_bad_input_is_blamed_on_its_own_field(ns, field, value, blamed):
    app = MeshExplorer(namespace=ns, mesh_shape="2, 4", axis_names="data, model")
    app.widgets["operation"].value = "matmul"
    app.widgets[field].value = value
    assert [k for k, p in app.field_errors.items() if p.visible] == [blamed]


def test_field_error_type_carries_jaxs_error_for_specs():
    from workbench.engine.sharding.mesh_explorer import ExplorerConfig, explore

    with pytest.raises(FieldInputError) as err:
        explore(ExplorerConfig.default(8, spec="data, data"))
    assert err.value.field == "spec" and err.value.jax_error.startswith("DuplicateSpecError")


#: a ``.py`` module of the user's own, next to the notebook (outside every library folder)
USER_MODULE = """\
import jax

def mw_mod_loss(v):
    return (v * v).sum()

mw_mod_step = jax.jit(mw_mod_loss)
"""

WRAPPED_CELLS = """\
import functools, math
import jax, jax.numpy as jnp
import equinox as eqx
from flax import nnx
from mw_user_model import mw_mod_loss, mw_mod_step
def mw_loss(v, scale=1.0):
    return (v * scale).sum()
mw_partial = functools.partial(mw_loss, scale=3.0)
mw_grad = jax.grad(mw_loss)
@nnx.jit
def mw_nnx_step(v):
    return (v * v).mean()
@eqx.filter_jit
def mw_eqx_step(v):
    return jnp.tanh(v).sum()
mw_donating = jax.jit(lambda v: v * 2, donate_argnums=0)
mw_sqrt = math.sqrt
mw_lib_partial = functools.partial(jnp.sum, axis=0)
mw_relu = jax.nn.relu
mw_nnx_relu = nnx.relu
mw_print = print
class MwSpy:
    touched = []
    def __getattr__(self, name):
        MwSpy.touched.append(name)
        raise AttributeError(name)
    @property
    def __wrapped__(self):
        MwSpy.touched.append("__wrapped__")
        return mw_loss
    @property
    def sharding(self):
        MwSpy.touched.append("sharding")
    def __call__(self, v):
        MwSpy.touched.append("__call__")
        return v
mw_spy = MwSpy()
mw_mesh = jax.make_mesh((4, 2), ('data', 'model'))
mw_x = jax.device_put(
    jnp.arange(64.0).reshape(8, 8),
    jax.sharding.NamedSharding(mw_mesh, jax.sharding.PartitionSpec('data', None)),
)
"""


@pytest.fixture(scope="module")
def wrapped_ns(shell, run, tmp_path_factory):
    import sys

    folder = tmp_path_factory.mktemp("notebook_dir")
    (folder / "mw_user_model.py").write_text(USER_MODULE)
    sys.path.insert(0, str(folder))
    try:
        run(WRAPPED_CELLS).ok()
        yield shell.user_ns
    finally:
        sys.path.remove(str(folder))
        sys.modules.pop("mw_user_model", None)
        for name in [n for n in shell.user_ns if n.startswith("mw_") or n == "MwSpy"]:
            del shell.user_ns[name]


def _wrapped_names(found: dict) -> list[str]:
    return [n for n in found if n.startswith("mw_")]


def test_functions_from_the_users_module_and_wrappers_are_offered(wrapped_ns):
    ns = wrapped_ns
    funcs = user_functions(ns)
    jit_wrapped = ["mw_mod_step", "mw_nnx_step", "mw_eqx_step", "mw_donating"]
    plain = ["mw_mod_loss", "mw_loss", "mw_partial", "mw_grad"]
    # every jit wrapper (jax.jit, nnx.jit, eqx.filter_jit) before the plain ones, in
    # the namespace's order within each group
    order = [n for n in ns if n in jit_wrapped] + [n for n in ns if n in plain]
    assert _wrapped_names(funcs) == order


def test_library_functions_builtins_and_callable_objects_are_never_offered(wrapped_ns):
    funcs = user_functions(wrapped_ns)
    for name in ("mw_sqrt", "mw_lib_partial", "mw_relu", "mw_nnx_relu", "mw_print", "mw_spy"):
        assert name in wrapped_ns and name not in funcs, name
    assert "MwSpy" not in funcs and "eqx" not in funcs and "nnx" not in funcs


def test_listing_and_picking_call_nothing_and_leave_the_users_values_as_they_were(wrapped_ns):
    ns = wrapped_ns
    before = dict(ns)
    x = ns["mw_x"]
    x_sharding, x_values = x.sharding, jax.device_get(x)
    user_functions(ns), user_meshes(ns), user_arrays(ns)
    # the explorer compiles the user's donating function over the user's array
    app = MeshExplorer(namespace=ns, operation="function")
    app.widgets["function_name"].value = "mw_donating"
    app.array_pick.value = "mw_x"
    assert app.result is not None and app.result.inputs[0].shape == list(x.shape)
    assert ns["MwSpy"].touched == []  # no property, __getattr__ or __call__ of the user's
    public = {k for k in before if not k.startswith("_")}
    assert {k for k in ns if not k.startswith("_")} == public  # no name added or removed
    assert all(ns[k] is before[k] for k in public)  # none rebound
    assert ns["mw_x"] is x and not x.is_deleted()  # not donated, not rebound
    assert x.sharding == x_sharding  # not moved
    assert (jax.device_get(x) == x_values).all()
