"""The mesh explorer: a HoloViz Panel app over :func:`workbench.engine.sharding.mesh_explorer.explore`.

In a notebook, ``workbench.mesh_explorer()`` returns the app (the "function"
operation then offers the notebook's functions); standalone, ``jax-workbench
mesh-explorer --port N`` serves it with Panel's server on 127.0.0.1.

A front door only: the controls hold text; the engine picks the starting mesh
(:meth:`ExplorerConfig.default`) and the offered functions (:func:`user_functions`),
and :func:`explore` parses, validates and compiles; the view draws.  A bad spec shows a one-line message above the picture
and the last good state stays on screen.
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
    available_devices,
    explore,
    user_functions,
)
from workbench.views._format import fmt_seconds
from workbench.views._html import esc
from workbench.views.mesh_explorer import explorer_html

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


class MeshExplorer:
    """The app's state: the controls, the last good result, and the message line."""

    def __init__(
        self,
        namespace: dict[str, Any] | None = None,
        devices: list[Any] | None = None,
        fake_devices: int | None = None,
        **config: Any,
    ) -> None:
        """``fake_devices=N`` asks for N CPU devices; honoured only before JAX has started."""
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
        self.widgets: dict[str, Any] = {}
        for label, placeholder, key in TEXT_FIELDS:
            self.widgets[key] = pn.widgets.TextInput(
                label=label, value=str(getattr(cfg, key)), placeholder=placeholder, width=260
            )
        self.widgets["dtype"] = pn.widgets.Select(
            label="dtype", options=list(DTYPES), value=cfg.dtype, width=260
        )
        self.widgets["operation"] = pn.widgets.Select(
            label="operation", options=list(OPERATIONS), value=cfg.operation, width=260
        )
        self.widgets["reduction"] = pn.widgets.Select(
            label="reduction", options=list(REDUCTIONS), value=cfg.reduction, width=260
        )
        funcs = list(user_functions(self.namespace))
        self.widgets["function_name"] = pn.widgets.Select(
            label="function from the notebook",
            options=funcs,
            value=funcs[0] if funcs else None,
            width=260,
        )
        self.message = pn.pane.HTML("", sizing_mode="stretch_width")
        self.view = pn.pane.HTML("", sizing_mode="stretch_width")
        for w in self.widgets.values():
            w.param.watch(self.update, "value")
        self.update()
        if device_warning:
            self._say(device_warning, error=True)

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
        if self.widgets["operation"].value == "function":
            funcs = list(user_functions(self.namespace))
            sel = self.widgets["function_name"]
            if list(sel.options) != funcs:
                sel.options = funcs
        try:
            res = explore(self.config(), previous=self.result, devices=self.devices)
        except ShardingInputError as exc:
            self._say(str(exc), error=True)
            return None
        except Exception as exc:  # anything else from JAX: one line, the app lives on
            self._say(
                f"{type(exc).__name__}: {str(exc).splitlines()[0] if str(exc) else ''}", error=True
            )
            return None
        self.result = res
        self.view.object = explorer_html(res)
        done = (
            f"compiled in {fmt_seconds(res.compile_s)} · updated in {fmt_seconds(res.elapsed_s)}"
            if res.operation != "layout"
            else f"layout updated in {fmt_seconds(res.elapsed_s)}"
        )
        self._say(done, error=False)
        return res

    def _say(self, text: str, error: bool) -> None:
        if error:
            kept = " · showing the last good state" if self.result is not None else ""
            self.message.object = (
                f'<div data-jwb="message" class="jwb-error" style="color:#cf222e;'
                f'font-family:system-ui,sans-serif">{esc(text)}{kept}</div>'
            )
        else:
            self.message.object = (
                f'<div data-jwb="message" class="jwb-ok" style="color:#57606a;'
                f'font-family:system-ui,sans-serif">{esc(text)}</div>'
            )

    def panel(self) -> Any:
        w = self.widgets
        kinds = sorted({str(getattr(d, "device_kind", "?")) for d in self.devices})
        have = (
            f"{len(self.devices)} device(s) here ({esc(', '.join(kinds))}); "
            f"the mesh shape's product must be {len(self.devices)}"
        )
        controls = pn.Column(
            "### mesh",
            pn.pane.HTML(f'<div data-jwb="device-count">{have}</div>', width=260),
            w["mesh_shape"],
            w["axis_names"],
            w["axis_types"],
            "### array",
            w["shape"],
            w["dtype"],
            w["spec"],
            "### operation",
            w["operation"],
            w["equation"],
            w["rhs_shape"],
            w["rhs_spec"],
            w["out_spec"],
            w["reduce_axes"],
            w["reduction"],
            w["function_name"],
            width=290,
        )
        return pn.Row(
            controls,
            pn.Column(self.message, self.view, sizing_mode="stretch_width"),
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
    (Panel's server extension), not from Panel's and Bokeh's CDNs: the cell works offline
    and the saved notebook stays small (:mod:`workbench.apps.notebook_resources`).
    """
    if namespace is None:
        try:
            from IPython import get_ipython

            ip = get_ipython()
            namespace = ip.user_ns if ip is not None else {}
        except ImportError:
            namespace = {}
    if _in_notebook():
        load_panel_extension()
    return MeshExplorer(namespace=namespace, **config).panel()


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
