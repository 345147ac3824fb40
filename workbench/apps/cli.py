"""The ``jax-workbench`` console script: ``lab``, ``doctor`` and ``mesh-explorer``.

``lab`` starts JupyterLab on the tour notebooks; ``--fake-devices N`` sets
``XLA_FLAGS=--xla_force_host_platform_device_count=N`` (and ``JAX_NUM_CPU_DEVICES``)
in the environment the kernels inherit, so every kernel starts with N CPU
devices.  ``doctor`` prints what a bug report needs (the engine's
:class:`~workbench.engine.common.environment.DoctorReport`: JAX/jaxlib versions,
backends and devices, the flags in force, the CPU, and whether our JupyterLab
extension is installed and enabled).  ``mesh-explorer`` serves the mesh explorer.
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

from workbench.engine.common.devices import FakeDevicesError, fake_devices, set_fake_devices
from workbench.engine.common.environment import (
    EXTENSION_NAME,
    DoctorReport,
    ExtensionStatus,
    doctor_report,
)

TOUR = "00_tour.ipynb"


def extension_status() -> ExtensionStatus:
    """Look for our prebuilt extension in Jupyter's paths, and for a page config disabling it."""
    try:
        from jupyter_core.paths import jupyter_config_path, jupyter_path
    except ImportError:
        return ExtensionStatus(False, False, None, "jupyter_core missing")
    found = None
    for base in jupyter_path("labextensions"):
        candidate = Path(base) / EXTENSION_NAME
        if (candidate / "package.json").exists():
            found = candidate
            break
    disabled = False
    for base in jupyter_config_path():
        cfg = Path(base) / "labconfig" / "page_config.json"
        if cfg.exists():
            try:
                data = json.loads(cfg.read_text())
            except (OSError, ValueError):
                continue
            dis = data.get("disabledExtensions", {})
            if (isinstance(dis, dict) and dis.get(EXTENSION_NAME)) or (
                isinstance(dis, list) and EXTENSION_NAME in dis
            ):
                disabled = True
    return ExtensionStatus(
        installed=found is not None,
        enabled=found is not None and not disabled,
        path=None if found is None else str(found),
    )


def notebooks_dir() -> Path:
    """The project's ``notebooks/``: beside the package in a checkout, else ``./notebooks``."""
    here = Path(__file__).resolve().parents[2] / "notebooks"  # workbench/apps/cli.py
    if here.is_dir():
        return here
    return Path.cwd() / "notebooks"


def lab_command(port: int | None, directory: Path, extra: list[str]) -> list[str]:
    cmd = [sys.executable, "-m", "jupyterlab", f"--ServerApp.root_dir={directory}"]
    if hasattr(os, "geteuid") and os.geteuid() == 0:
        cmd.append("--allow-root")  # containers and CI machines run as root
    if port is not None:
        cmd.append(f"--port={port}")
    tour = directory / TOUR
    if tour.exists():
        cmd.append(str(tour))
    return cmd + extra


def cmd_lab(args: argparse.Namespace, extra: list[str]) -> int:
    env = dict(os.environ)
    if args.fake_devices is not None:
        set_fake_devices(env, args.fake_devices)
        env.setdefault("JAX_PLATFORMS", "cpu")
    directory = Path(args.dir).resolve() if args.dir else notebooks_dir()
    if not directory.is_dir():
        print(
            f"jax-workbench lab: no notebooks directory at {directory}; "
            f"run from the project checkout or pass --dir",
            file=sys.stderr,
        )
        return 2
    cmd = lab_command(args.port, directory, extra)
    print("starting:", " ".join(cmd), flush=True)
    if env.get("XLA_FLAGS"):
        print(f"  XLA_FLAGS={env['XLA_FLAGS']}", flush=True)
    if args.fake_devices is not None:
        print(f"  JAX_NUM_CPU_DEVICES={env['JAX_NUM_CPU_DEVICES']}", flush=True)
    if os.name == "posix":
        # Become the server, so signals (Ctrl-C, a test's terminate()) reach it directly.
        os.execve(cmd[0], cmd, env)
    try:
        return subprocess.call(cmd, env=env)
    except KeyboardInterrupt:
        return 130


def format_doctor(rep: DoctorReport) -> str:
    """The report as the lines ``doctor`` prints."""
    env = rep.environment
    lines = [
        f"jax-workbench {rep.workbench_version} · Python {env.python}",
        f"JAX {env.jax_version} · jaxlib {env.jaxlib_version}",
        f"default backend: {env.backend} · {env.device_count} device(s) · "
        f"{rep.process_count} process(es)",
        "backends:",
    ]
    for name, devs in rep.backends.items():
        if isinstance(devs, list):
            lines.append(f"  {name}: {len(devs)} device(s)")
            lines.extend(f"    {d}" for d in devs[:16])
            if len(devs) > 16:
                lines.append(f"    … {len(devs) - 16} more")
        else:
            lines.append(f"  {name}: {devs}")
    lines.append(f"XLA_FLAGS: {env.xla_flags or '(unset)'}")
    lines.append(f"JAX_PLATFORMS: {env.jax_platforms or '(unset)'}")
    if rep.jax_num_cpu_devices:
        lines.append(f"JAX_NUM_CPU_DEVICES: {rep.jax_num_cpu_devices}")
    usable = (
        "" if env.cpu_count_usable in (None, env.cpu_count) else f" ({env.cpu_count_usable} usable)"
    )
    lines.append(f"CPU: {env.cpu_model} · {env.cpu_count} core(s){usable} · {env.platform}")
    lines.append(f"JupyterLab: {rep.jupyterlab or 'not installed'}")
    ext = rep.extension
    if ext.installed:
        state = "enabled" if ext.enabled else "installed but disabled"
        lines.append(f"JupyterLab extension {EXTENSION_NAME}: {state} ({ext.path})")
    else:
        lines.append(
            f"JupyterLab extension {EXTENSION_NAME}: not installed "
            "(outputs fall back to self-contained HTML)"
        )
    missing = rep.missing_features
    lines.append(
        "JAX internals used: all found"
        if not missing
        else f"JAX internals not found (features degrade): {', '.join(missing)}"
    )
    return "\n".join(lines)


def panel_server_line(enabled: bool | None) -> str:
    """What ``doctor`` says about Panel's server extension (the explorer's files offline)."""
    from workbench.apps.notebook_resources import PANEL_SERVER_EXTENSION

    what = f"Panel server extension {PANEL_SERVER_EXTENSION}"
    if enabled:
        return f"{what}: enabled (the mesh explorer in a notebook loads Panel from the server)"
    if enabled is None:
        return (
            f"{what}: unknown (jupyter_server not installed here): the mesh explorer in a "
            "notebook loads Panel from its CDN"
        )
    return (
        f"{what}: disabled: the mesh explorer in a notebook loads Panel from its CDN "
        f"(blank offline); `jupyter server extension enable {PANEL_SERVER_EXTENSION}`"
    )


def cmd_doctor(args: argparse.Namespace) -> int:
    from workbench import __version__
    from workbench.apps.notebook_resources import panel_server_extension_enabled

    if args.fake_devices is not None:
        fake_devices(args.fake_devices)
    rep = doctor_report(__version__, extension_status())
    panel_server = panel_server_extension_enabled()
    if args.json:
        print(json.dumps({**rep.to_dict(), "panel_server_extension": panel_server}, indent=2))
    else:
        print(format_doctor(rep) + "\n" + panel_server_line(panel_server))
    return 0


def cmd_mesh_explorer(args: argparse.Namespace) -> int:
    """The mesh explorer on Panel's server; fake devices are set before JAX starts."""
    if args.fake_devices is not None:
        fake_devices(args.fake_devices)
        os.environ.setdefault("JAX_PLATFORMS", "cpu")
    from workbench.apps.mesh_explorer import serve

    print(f"mesh explorer on http://127.0.0.1:{args.port}/", flush=True)
    serve(args.port, show=args.show)
    return 0


def jupyterlab_help(flag: str = "--help") -> str:
    """JupyterLab's own ``--help`` (or ``--help-all``) text: the options ``lab`` forwards."""
    try:
        out = subprocess.run(
            [sys.executable, "-m", "jupyterlab", flag],
            capture_output=True,
            text=True,
            timeout=60,
        )
    except (OSError, subprocess.TimeoutExpired) as exc:
        return f"(JupyterLab's options could not be listed: {exc}; try `jupyter lab {flag}`)"
    if out.returncode != 0 or not out.stdout.strip():
        said = (out.stderr.strip().splitlines() or ["no output"])[-1]
        return f"(JupyterLab's options could not be listed: {said}; try `jupyter lab {flag}`)"
    return out.stdout


class _LabHelp(argparse.Action):
    """``lab --help``: our options, then JupyterLab's (everything else is passed to it)."""

    def __init__(self, option_strings: list[str], dest: str, **kwargs: Any) -> None:
        super().__init__(option_strings, dest, nargs=0, default=argparse.SUPPRESS, **kwargs)

    def __call__(self, parser: argparse.ArgumentParser, *args: Any, **kwargs: Any) -> None:
        text = jupyterlab_help("--help")
        start = text.find("Options\n=======")  # its options, not its long introduction
        parser.print_help()
        print("\nJupyterLab's options (passed to `jupyter lab` as given):\n")
        print(text[start:] if start >= 0 else text, end="")
        parser.exit()


class _LabHelpAll(_LabHelp):
    def __call__(self, parser: argparse.ArgumentParser, *args: Any, **kwargs: Any) -> None:
        print(jupyterlab_help("--help-all"), end="")
        parser.exit()


def build_parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(
        prog="jax-workbench",
        description="jax-workbench: start JupyterLab on the tour (lab), report the set-up "
        "(doctor), serve the mesh explorer (mesh-explorer). `jax-workbench COMMAND --help` "
        "shows each command's options.",
    )
    sub = p.add_subparsers(dest="command", required=True)
    lab = sub.add_parser(
        "lab",
        help="start JupyterLab on the tour notebooks (extra arguments go to jupyter lab)",
        description="Start JupyterLab on the tour notebooks. Every argument not listed here "
        "goes to `jupyter lab` unchanged (--no-browser, --ip=..., --ServerApp.token=..., "
        "--LabApp.default_url=...): JupyterLab's own options follow. --help-all shows all of "
        "JupyterLab's configurable options.",
        add_help=False,
    )
    lab.add_argument("-h", "--help", action=_LabHelp, help="show this help and JupyterLab's")
    lab.add_argument(
        "--help-all", action=_LabHelpAll, help="JupyterLab's own --help-all (every option)"
    )
    lab.add_argument("--port", type=int, default=None, help="the server's port (JupyterLab's)")
    lab.add_argument(
        "--fake-devices",
        type=int,
        default=None,
        metavar="N",
        help="give kernels N fake CPU devices (XLA_FLAGS=--xla_force_host_platform_device_count=N)",
    )
    lab.add_argument("--dir", default=None, help="notebook directory (default: notebooks/)")
    doc = sub.add_parser("doctor", help="print JAX, device and extension status")
    doc.add_argument("--json", action="store_true", help="machine-readable output")
    doc.add_argument(
        "--fake-devices",
        type=int,
        default=None,
        metavar="N",
        help="report as a kernel with N fake CPU devices would see it",
    )
    mesh = sub.add_parser(
        "mesh-explorer", help="serve the interactive mesh explorer (Panel) on 127.0.0.1"
    )
    mesh.add_argument("--port", type=int, default=5006, help="the server's port (default 5006)")
    mesh.add_argument(
        "--fake-devices",
        type=int,
        default=None,
        metavar="N",
        help="N fake CPU devices (XLA_FLAGS=--xla_force_host_platform_device_count=N)",
    )
    mesh.add_argument("--show", action="store_true", help="open a browser tab")
    return p


def main(argv: list[str] | None = None) -> int:
    parser = build_parser()
    args, extra = parser.parse_known_args(argv)
    if extra and args.command != "lab":  # lab passes the rest to jupyter lab
        parser.error(f"unrecognized arguments: {' '.join(extra)}")
    if args.fake_devices is not None and args.fake_devices < 1:
        parser.error("--fake-devices must be at least 1")
    try:
        if args.command == "lab":
            return cmd_lab(args, extra)
        if args.command == "mesh-explorer":
            return cmd_mesh_explorer(args)
        return cmd_doctor(args)
    except FakeDevicesError as exc:
        print(f"jax-workbench {args.command}: {exc}", file=sys.stderr)
        return 2


if __name__ == "__main__":  # pragma: no cover
    sys.exit(main())
