"""The mesh explorer: a HoloViz Panel app over :func:`workbench.engine.sharding.mesh_explorer.explore`.

In a notebook, ``workbench.mesh_explorer()`` returns the app (the "function"
operation then offers the notebook's functions); standalone, ``jax-workbench
mesh-explorer --port N`` serves it with Panel's server on 127.0.0.1.

A front door only: the controls hold text; the engine picks the starting mesh
(:meth:`ExplorerConfig.default`) and the offered functions (:func:`user_functions`),
and :func:`explore` parses, validates and compiles; the view draws.  A bad input shows a
one-line message above the picture and, under the control that caused it, JAX's own error
(the control marked invalid, cleared once fixed); the last good state stays on screen.

The notebook's own ``jax.sharding.Mesh`` objects and arrays are offered in two pickers: a
mesh fills the mesh controls (and its device order is used), an array its shape, dtype and
current sharding as the spec.  The controls take their colours from JupyterLab's theme
variables (Panel's own design variables outside JupyterLab), so they follow Light and Dark.
"""

from __future__ import annotations

from typing import Any

import panel as pn

from workbench.apps.notebook_resources import load_panel_extension
from workbench.engine.common import devices as device_setup
from workbench.engine.sharding.layout import ShardingInputError
from workbench.engine.sharding.mesh_explorer import (
    DTYPES,
    OPERATIONS,
    REDUCTIONS,
    ExplorerConfig,
    ExplorerResult,
    FieldInputError,
    array_fields,
    available_devices,
    explore,
    mesh_fields,
    user_arrays,
    user_functions,
    user_meshes,
)
from workbench.engine.sharding.spec import parse_spec
from workbench.views._format import fmt_seconds
from workbench.views._html import esc
from workbench.views.mesh_explorer import explorer_display, explorer_html

#: (label, placeholder used as a stable selector, config field)
TEXT_FIELDS = (
    ("mesh shape", "mesh shape", "mesh_shape"),
    ("axis names", "axis names", "axis_names"),
    ("axis types (Auto / Explicit)", "axis types", "axis_types"),
    ("array shape", "array shape", "shape"),
    ("PartitionSpec per dimension", "array spec", "spec"),
    ("einsum equation", "einsum equation", "equation"),
    ("second operand shape (blank: from the op)", "second operand shape", "rhs_shape"),
    ("second operand spec", "second operand spec", "rhs_spec"),
    ("output spec (blank: XLA chooses)", "output spec", "out_spec"),
    ("reduction axes", "reduction axes", "reduce_axes"),
)


#: the picker's entry for "the controls below, as typed"
TYPED = "(as typed below)"

# Colours: JupyterLab's theme variables first (they reach into Panel's shadow roots, being
# inherited custom properties), Panel's design variables outside JupyterLab, then Light.
_FG = "var(--jp-ui-font-color1, var(--panel-on-background-color, rgba(0, 0, 0, 0.87)))"
_FG2 = "var(--jp-ui-font-color1, var(--panel-on-background-color, #444))"
_BG = "var(--jp-layout-color1, var(--panel-background-color, #fff))"
_INPUT_BG = "var(--jp-input-background, var(--panel-surface-color, #f5f5f5))"
_BORDER = "var(--jp-border-color1, var(--panel-border-color, #bdbdbd))"
_ERROR = "var(--jp-error-color1, #d32f2f)"
_FOCUS = "var(--jp-brand-color1, #1976d2)"
#: every control's stylesheet (inside its shadow root)
WIDGET_CSS = f"""
:host {{ color: {_FG}; }}
label, .bk-input-group > label {{ color: {_FG}; }}
input, select, .bk-input {{
  color: {_FG}; background-color: {_INPUT_BG}; border: 1px solid {_BORDER};
}}
select option {{ color: {_FG}; background-color: {_BG}; }}
input::placeholder {{ color: {_FG2}; opacity: 0.8; }}
input:focus, select:focus, .bk-input:focus {{
  border-color: {_FOCUS}; outline: 2px solid {_FOCUS}; outline-offset: 0;
}}
:host(.jwb-invalid) input, :host(.jwb-invalid) select, :host(.jwb-invalid) .bk-input {{
  border: 2px solid {_ERROR};
}}
:host(.jwb-invalid) label {{ color: {_ERROR}; }}
"""
#: the text panes' stylesheet: headings, the device line, the field errors, the message
TEXT_CSS = f"""
:host {{ color: {_FG}; font-family: var(--jp-ui-font-family, system-ui, sans-serif); }}
h3 {{ color: {_FG}; font-size: 1.1em; margin: 0.6em 0 0.2em; }}
.jwb-field-error, .jwb-error {{ color: {_ERROR}; }}
.jwb-field-error {{ font-size: 0.9em; overflow-wrap: anywhere; }}
.jwb-ok {{ color: {_FG2}; }}
"""
# The result's tables are shown whole where the output has the room, and scroll inside
# their own box (never past the output's edge) where it has not: the inputs' and the
# outputs' columns take their content's width and wrap under each other (the view's own
# stylesheet splits the width evenly, which cut the per-device tables to half their width).
VIEW_CSS = f"""
:host {{ color: {_FG}; max-width: 100%; min-width: 0; }}
.jwb.jwb-sh {{ max-width: 100%; overflow-x: auto; }}
.jwb.jwb-sh .jwb-cols {{ flex-wrap: wrap; }}
.jwb.jwb-sh .jwb-col {{ flex: 1 1 auto; min-width: 0; max-width: 100%; box-sizing: border-box; }}
"""


def ipython_hidden(namespace: dict[str, Any]) -> set[str]:
    """The names IPython itself put in ``namespace`` (its ``open`` is a plain function,
    ``exit``, ``In``...) when it is the running shell's user namespace; else none."""
    try:
        from IPython import get_ipython
    except ImportError:  # pragma: no cover - IPython comes with Jupyter
        return set()
    ip = get_ipython()
    if ip is None or ip.user_ns is not namespace:
        return set()
    return set(ip.user_ns_hidden)


def _label(name: str, value: Any) -> str:
    """A picker entry: ``x: bfloat16[64, 32] P('batch', None)`` or ``mesh: Mesh('data': 2)``."""
    import jax

    if isinstance(value, jax.sharding.Mesh):
        sizes = ", ".join(f"{a!r}: {n}" for a, n in value.shape.items())
        return f"{name}: Mesh({sizes})"
    sharding = getattr(value, "sharding", None)
    spec = getattr(sharding, "spec", None)
    where = f" P{tuple(spec)!r}".replace(",)", ")") if spec is not None else ""
    return f"{name}: {value.dtype}{list(value.shape)}{where}"


class MeshExplorer:
    """The app's state: the controls, the last good result, and the message lines."""

    def __init__(
        self,
        namespace: dict[str, Any] | None = None,
        devices: list[Any] | None = None,
        fake_devices: int | None = None,
        **config: Any,
    ) -> None:
        """``fake_devices=N`` asks for N CPU devices; honoured only before JAX has started.

        Without ``config`` for them, the mesh and the array start as the namespace's first
        ``Mesh`` and first array (one with a NamedSharding before others), as picked.
        """
        device_warning = ""
        if fake_devices:
            try:
                device_setup.fake_devices(fake_devices)
            except device_setup.FakeDevicesError as exc:  # said above the picture
                device_warning = str(exc)
        self.namespace = namespace if namespace is not None else {}
        self.devices = available_devices() if devices is None else list(devices)
        cfg = ExplorerConfig.default(len(self.devices), **config)
        self.result: ExplorerResult | None = None
        #: the display handle of the saved picture (:meth:`show_picture`), updated with the state
        self.picture: Any = None
        self._filling = False
        self.widgets: dict[str, Any] = {}
        for label, placeholder, key in TEXT_FIELDS:
            self.widgets[key] = pn.widgets.TextInput(
                label=label,
                value=str(getattr(cfg, key)),
                placeholder=placeholder,
                width=260,
                stylesheets=[WIDGET_CSS],
            )
        dtypes = list(DTYPES) + ([cfg.dtype] if cfg.dtype not in DTYPES else [])
        self.widgets["dtype"] = self._select("dtype", dtypes, cfg.dtype)
        self.widgets["operation"] = self._select("operation", list(OPERATIONS), cfg.operation)
        self.widgets["reduction"] = self._select("reduction", list(REDUCTIONS), cfg.reduction)
        self.hidden = ipython_hidden(self.namespace)
        funcs = list(user_functions(self.namespace, self.hidden))
        self.widgets["function_name"] = self._select(
            "function from the notebook", funcs, funcs[0] if funcs else None
        )
        self.meshes = user_meshes(self.namespace, self.hidden)
        self.arrays = user_arrays(self.namespace, self.hidden)
        self.mesh_pick = self._select("mesh from the notebook", self._choices(self.meshes), "")
        self.array_pick = self._select("array from the notebook", self._choices(self.arrays), "")
        # one message line under each control (JAX's words when it refused the input)
        self.field_errors = {
            k: pn.pane.HTML("", width=260, margin=(0, 10), visible=False, stylesheets=[TEXT_CSS])
            for k in self.widgets
        }
        self.message = pn.pane.HTML("", sizing_mode="stretch_width", stylesheets=[TEXT_CSS])
        self.view = pn.pane.HTML("", sizing_mode="stretch_width", stylesheets=[VIEW_CSS])
        for w in self.widgets.values():
            w.param.watch(self.update, "value")
        self.mesh_pick.param.watch(lambda e: self.use_mesh(e.new), "value")
        self.array_pick.param.watch(lambda e: self.use_array(e.new), "value")
        typed_mesh = {"mesh_shape", "axis_names", "axis_types"} & set(config)
        typed_array = {"shape", "dtype", "spec"} & set(config)
        if self.meshes and not typed_mesh:
            self._fill(lambda: setattr(self.mesh_pick, "value", next(iter(self.meshes))))
        if self.arrays and not (typed_array or typed_mesh):
            self._fill(lambda: setattr(self.array_pick, "value", next(iter(self.arrays))))
        self.update()
        if device_warning:
            self._say(device_warning, error=True)

    @staticmethod
    def _select(label: str, options: Any, value: Any) -> Any:
        return pn.widgets.Select(
            label=label, options=options, value=value, width=260, stylesheets=[WIDGET_CSS]
        )

    @staticmethod
    def _choices(found: dict[str, Any]) -> dict[str, str]:
        return {TYPED: "", **{_label(n, v): n for n, v in found.items()}}

    def _fill(self, change: Any) -> None:
        """Make several control changes as one: no compile until all are made."""
        self._filling = True
        try:
            change()
        finally:
            self._filling = False

    def _set_mesh_controls(self, mesh: Any) -> None:
        """The mesh's text in the mesh controls; the operand specs written over other axis
        names follow it (the second operand split over its last axis, as by default)."""
        for k, v in mesh_fields(mesh).items():
            self.widgets[k].value = v
        names = [str(a) for a in mesh.axis_names]
        for key, fresh in (
            ("rhs_spec", f"{names[-1]}, None" if len(names) > 1 else "None, None"),
            ("out_spec", ""),
        ):
            try:
                used = {a for entry in parse_spec(self.widgets[key].value) for a in entry}
            except ShardingInputError:
                continue
            if not used <= set(names):
                self.widgets[key].value = fresh

    def use_mesh(self, name: str) -> None:
        """The notebook's mesh ``name`` in the mesh controls ("" leaves them as typed)."""
        mesh = self.meshes.get(name)
        if mesh is not None:
            self._fill(lambda: self._set_mesh_controls(mesh))
        if not self._filling:
            self.update()

    def use_array(self, name: str) -> None:
        """The notebook's array ``name``: its shape, dtype and sharding (as the spec) in the
        array controls, and the mesh of its NamedSharding in the mesh controls."""
        x = self.arrays.get(name)
        if x is not None:
            fields, mesh = array_fields(x)

            def change() -> None:
                if mesh is not None:
                    picked = [n for n, m in self.meshes.items() if m == mesh]
                    self.mesh_pick.value = picked[0] if picked else ""
                    self._set_mesh_controls(mesh)
                dtype = self.widgets["dtype"]
                if fields["dtype"] not in dtype.options:
                    dtype.options = [*dtype.options, fields["dtype"]]
                for k, v in fields.items():
                    self.widgets[k].value = v

            self._fill(change)
        if not self._filling:
            self.update()

    def _devices(self) -> list[Any]:
        """The picked mesh's devices in its order when the controls still describe it, else
        every device in JAX's order."""
        mesh = self.meshes.get(self.mesh_pick.value or "")
        if mesh is not None and all(
            self.widgets[k].value == v for k, v in mesh_fields(mesh).items()
        ):
            return list(mesh.devices.flat)
        return self.devices

    def config(self) -> ExplorerConfig:
        values = {k: w.value for k, w in self.widgets.items()}
        name = values.pop("function_name") or ""
        fn = self.namespace.get(name) if name else None
        return ExplorerConfig(
            **{k: ("" if v is None else v) for k, v in values.items()},
            function=fn,
            function_name=name,
        )

    def update(self, *events: Any) -> ExplorerResult | None:
        """Recompute from the controls; on bad input keep the last good view."""
        if self._filling:
            return None
        if self.widgets["operation"].value == "function":
            funcs = list(user_functions(self.namespace, self.hidden))
            sel = self.widgets["function_name"]
            if list(sel.options) != funcs:
                self._fill(lambda: setattr(sel, "options", funcs))
        try:
            res = explore(self.config(), previous=self.result, devices=self._devices())
        except FieldInputError as exc:
            self._mark(exc.field, exc.jax_error or str(exc))
            self._say(str(exc), error=True)
            return None
        except ShardingInputError as exc:
            self._mark(None, "")
            self._say(str(exc), error=True)
            return None
        except Exception as exc:  # anything else from JAX: one line, the app lives on
            self._mark(None, "")
            self._say(
                f"{type(exc).__name__}: {str(exc).splitlines()[0] if str(exc) else ''}", error=True
            )
            return None
        self._mark(None, "")
        self.result = res
        self.view.object = explorer_html(res)
        if self.picture is not None:
            self.picture.update(explorer_display(res))
        done = (
            f"compiled in {fmt_seconds(res.compile_s)} · updated in {fmt_seconds(res.elapsed_s)}"
            if res.operation != "layout"
            else f"layout updated in {fmt_seconds(res.elapsed_s)}"
        )
        self._say(done, error=False)
        return res

    def show_picture(self) -> None:
        """Display the current state as a workbench output of its own (the mesh-explorer
        payload: drawn by the extension, or by the standalone runtime in its ``text/html``,
        with a static summary), updated on every change.  The Panel app needs its kernel and
        Bokeh: a saved or exported notebook shows this picture instead of a blank cell."""
        if self.result is None:
            return
        from IPython.display import display

        self.picture = display(explorer_display(self.result), display_id=True)

    def _mark(self, field: str | None, text: str) -> None:
        """The error under ``field`` and that control marked invalid; every other cleared."""
        for key, pane in self.field_errors.items():
            widget = self.widgets[key]
            if key == field:
                pane.object = (
                    f'<div data-jwb="field-error" data-field="{esc(key)}" role="alert" '
                    f'class="jwb-field-error">{esc(text)}</div>'
                )
                pane.visible = True
                widget.css_classes = ["jwb-invalid"]
            elif pane.visible or widget.css_classes:
                pane.object = ""
                pane.visible = False
                widget.css_classes = []

    def _say(self, text: str, error: bool) -> None:
        if error:
            kept = " · showing the last good state" if self.result is not None else ""
            self.message.object = (
                f'<div data-jwb="message" class="jwb-error">{esc(text)}{kept}</div>'
            )
        else:
            self.message.object = f'<div data-jwb="message" class="jwb-ok">{esc(text)}</div>'

    def panel(self) -> Any:
        w = self.widgets
        kinds = sorted({str(getattr(d, "device_kind", "?")) for d in self.devices})
        have = (
            f"{len(self.devices)} device(s) here ({esc(', '.join(kinds))}); "
            f"the mesh shape's product must be {len(self.devices)}"
        )

        def heading(text: str) -> Any:
            return pn.pane.HTML(f"<h3>{esc(text)}</h3>", width=260, stylesheets=[TEXT_CSS])

        def field(key: str) -> Any:
            return pn.Column(w[key], self.field_errors[key], margin=0)

        controls = pn.Column(
            heading("mesh"),
            pn.pane.HTML(
                f'<div data-jwb="device-count">{have}</div>', width=260, stylesheets=[TEXT_CSS]
            ),
            *([self.mesh_pick] if self.meshes else []),
            field("mesh_shape"),
            field("axis_names"),
            field("axis_types"),
            heading("array"),
            *([self.array_pick] if self.arrays else []),
            field("shape"),
            field("dtype"),
            field("spec"),
            heading("operation"),
            field("operation"),
            field("equation"),
            field("rhs_shape"),
            field("rhs_spec"),
            field("out_spec"),
            field("reduce_axes"),
            field("reduction"),
            field("function_name"),
            width=290,
        )
        # the picture beside the controls where the output is wide, under them where not
        return pn.FlexBox(
            controls,
            pn.Column(
                self.message,
                self.view,
                sizing_mode="stretch_width",
                min_width=0,
                styles={"flex": "1 1 520px", "min-width": "0"},
            ),
            flex_wrap="wrap",
            align_items="flex-start",
            sizing_mode="stretch_width",
        )

    def __panel__(self) -> Any:
        return self.panel()


def _in_notebook() -> bool:
    try:
        from IPython import get_ipython
    except ImportError:
        return False
    ip = get_ipython()
    return ip is not None and hasattr(ip, "kernel")


def mesh_explorer(namespace: dict[str, Any] | None = None, **config: Any) -> Any:
    """The explorer for a notebook: the user namespace's functions can be compiled.

    In a kernel, Panel's loader and the app's stylesheets are fetched from the Jupyter server
    (Panel's server extension), never from Panel's and Bokeh's CDNs: the cell works offline
    and the saved notebook stays small (:mod:`workbench.apps.notebook_resources`).  Above
    the app, a picture of its current state (:meth:`MeshExplorer.show_picture`) is what a
    saved or exported copy shows.
    """
    if namespace is None:
        try:
            from IPython import get_ipython

            ip = get_ipython()
            namespace = ip.user_ns if ip is not None else {}
        except ImportError:
            namespace = {}
    if not _in_notebook():
        return MeshExplorer(namespace=namespace, **config).panel()
    load_panel_extension()
    explorer = MeshExplorer(namespace=namespace, **config)
    app = explorer.panel()
    explorer.show_picture()
    return app


def serve(port: int, show: bool = False) -> None:
    """Panel's server on 127.0.0.1:``port``, one explorer per browser session."""

    def app() -> Any:
        return MeshExplorer().panel()

    pn.serve(
        {"/": app},
        port=port,
        address="127.0.0.1",
        show=show,
        title="mesh explorer",
        websocket_origin=[f"127.0.0.1:{port}", f"localhost:{port}"],
        threaded=False,
    )


__all__ = ["MeshExplorer", "mesh_explorer", "serve"]
