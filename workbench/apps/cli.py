"""The ``jax-workbench`` console script: ``lab``, ``doctor`` and ``mesh``.

``lab`` starts JupyterLab on the tour notebooks; ``--fake-devices N`` sets
``XLA_FLAGS=--xla_force_host_platform_device_count=N`` in the environment the
kernels inherit (it must be set before JAX initialises its backend, which is
why it is a server-start option and not a notebook call).  ``doctor`` prints
what a bug report needs: JAX/jaxlib versions, backends and devices, the flags in
force, and whether our JupyterLab extension is installed and enabled.
"""

from __future__ import annotations

import argparse
import json
import os
import re
import subprocess
import sys
from pathlib import Path
from typing import Any

EXTENSION_NAME = "jax-workbench"
TOUR = "tour.ipynb"
_DEVICE_FLAG = re.compile(r"--xla_force_host_platform_device_count=\S*")


def with_fake_devices(xla_flags: str, n: int) -> str:
    """``xla_flags`` with the host device count set to ``n`` (replacing any previous one)."""
    if n < 1:
        raise ValueError("--fake-devices must be at least 1")
    rest = _DEVICE_FLAG.sub("", xla_flags).split()
    return " ".join([*rest, f"--xla_force_host_platform_device_count={n}"])


def set_fake_devices(env: dict[str, str] | os._Environ[str], n: int) -> None:
    """Ask for ``n`` fake CPU devices in ``env`` by both of JAX's routes.

    JAX reads ``JAX_NUM_CPU_DEVICES`` (its ``jax_num_cpu_devices`` option) and, when
    that is set, ignores the XLA flag; so a count already in the environment would
    silently win over ``--fake-devices`` unless both say ``n``.
    """
    env["XLA_FLAGS"] = with_fake_devices(env.get("XLA_FLAGS", ""), n)
    env["JAX_NUM_CPU_DEVICES"] = str(n)


def fake_devices_here(n: int) -> None:
    """:func:`set_fake_devices` for this process, before its JAX backend starts.

    The package imports JAX, which reads ``JAX_NUM_CPU_DEVICES`` at import: by the
    time a command runs, the option must be set on JAX's config as well.
    """
    set_fake_devices(os.environ, n)
    if "jax" in sys.modules:
        import jax

        jax.config.update("jax_num_cpu_devices", n)


def notebooks_dir() -> Path:
    """The project's ``notebooks/``: beside the package in a checkout, else ``./notebooks``."""
    here = Path(__file__).resolve().parent.parent / "notebooks"
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
        print(f"jax-workbench lab: no notebooks directory at {directory}; "
              f"run from the project checkout or pass --dir", file=sys.stderr)
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


def extension_status() -> dict[str, Any]:
    """Is our prebuilt JupyterLab extension installed, and is it enabled?"""
    try:
        from jupyter_core.paths import jupyter_config_path, jupyter_path
    except ImportError:
        return {"installed": False, "enabled": False, "path": None, "note": "jupyter_core missing"}
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
                    isinstance(dis, list) and EXTENSION_NAME in dis):
                disabled = True
    return {"installed": found is not None, "enabled": found is not None and not disabled,
            "path": None if found is None else str(found)}


def doctor_report() -> dict[str, Any]:
    import jax
    import jaxlib

    from workbench.engine import _jax_compat

    backends: dict[str, Any] = {}
    for name in ("cpu", "gpu", "cuda", "rocm", "tpu"):
        try:
            devs = jax.devices(name)
        except Exception as exc:  # not present: say so briefly
            backends[name] = f"not available ({type(exc).__name__})"
            continue
        backends[name] = [f"{d.id}: {d.device_kind} (process {d.process_index})" for d in devs]
    try:
        import jupyterlab
        lab_version = jupyterlab.__version__
    except ImportError:
        lab_version = None
    from workbench import __version__

    return {
        "jax-workbench": __version__,
        "python": sys.version.split()[0],
        "jax": jax.__version__,
        "jaxlib": jaxlib.__version__,
        "default_backend": jax.default_backend(),
        "device_count": jax.device_count(),
        "process_count": jax.process_count(),
        "backends": backends,
        "XLA_FLAGS": os.environ.get("XLA_FLAGS", ""),
        "JAX_PLATFORMS": os.environ.get("JAX_PLATFORMS", ""),
        "jupyterlab": lab_version,
        "extension": extension_status(),
        "compat_features": dict(_jax_compat.FEATURES),
    }


def format_doctor(rep: dict[str, Any]) -> str:
    lines = [f"jax-workbench {rep['jax-workbench']} · Python {rep['python']}",
             f"JAX {rep['jax']} · jaxlib {rep['jaxlib']}",
             f"default backend: {rep['default_backend']} · {rep['device_count']} device(s) · "
             f"{rep['process_count']} process(es)",
             "backends:"]
    for name, devs in rep["backends"].items():
        if isinstance(devs, list):
            lines.append(f"  {name}: {len(devs)} device(s)")
            lines.extend(f"    {d}" for d in devs[:16])
            if len(devs) > 16:
                lines.append(f"    … {len(devs) - 16} more")
        else:
            lines.append(f"  {name}: {devs}")
    lines.append(f"XLA_FLAGS: {rep['XLA_FLAGS'] or '(unset)'}")
    lines.append(f"JAX_PLATFORMS: {rep['JAX_PLATFORMS'] or '(unset)'}")
    lines.append(f"JupyterLab: {rep['jupyterlab'] or 'not installed'}")
    ext = rep["extension"]
    if ext["installed"]:
        state = "enabled" if ext["enabled"] else "installed but disabled"
        lines.append(f"JupyterLab extension {EXTENSION_NAME}: {state} ({ext['path']})")
    else:
        lines.append(f"JupyterLab extension {EXTENSION_NAME}: not installed "
                     "(outputs fall back to self-contained HTML)")
    missing = [k for k, ok in rep["compat_features"].items() if not ok]
    lines.append("JAX internals used: all found" if not missing else
                 f"JAX internals not found (features degrade): {', '.join(missing)}")
    return "\n".join(lines)


def cmd_doctor(args: argparse.Namespace) -> int:
    if args.fake_devices is not None:
        fake_devices_here(args.fake_devices)
    rep = doctor_report()
    print(json.dumps(rep, indent=2) if args.json else format_doctor(rep))
    return 0


def cmd_mesh(args: argparse.Namespace) -> int:
    """The mesh explorer on Panel's server; fake devices are set before JAX starts."""
    if args.fake_devices is not None:
        fake_devices_here(args.fake_devices)
        os.environ.setdefault("JAX_PLATFORMS", "cpu")
    from workbench.apps.mesh_explorer import serve

    print(f"mesh explorer on http://127.0.0.1:{args.port}/", flush=True)
    serve(args.port, show=args.show)
    return 0


def build_parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(prog="jax-workbench", description=__doc__.splitlines()[0])
    sub = p.add_subparsers(dest="command", required=True)
    lab = sub.add_parser("lab", help="start JupyterLab on the tour notebooks "
                                     "(extra arguments go to jupyter lab)")
    lab.add_argument("--port", type=int, default=None)
    lab.add_argument("--fake-devices", type=int, default=None, metavar="N",
                     help="give kernels N fake CPU devices "
                          "(XLA_FLAGS=--xla_force_host_platform_device_count=N)")
    lab.add_argument("--dir", default=None, help="notebook directory (default: notebooks/)")
    doc = sub.add_parser("doctor", help="print JAX, device and extension status")
    doc.add_argument("--json", action="store_true", help="machine-readable output")
    doc.add_argument("--fake-devices", type=int, default=None, metavar="N")
    mesh = sub.add_parser("mesh", help="serve the interactive mesh explorer (Panel) on 127.0.0.1")
    mesh.add_argument("--port", type=int, default=5006)
    mesh.add_argument("--fake-devices", type=int, default=None, metavar="N",
                      help="N fake CPU devices (XLA_FLAGS=--xla_force_host_platform_device_count=N)")
    mesh.add_argument("--show", action="store_true", help="open a browser tab")
    return p


def main(argv: list[str] | None = None) -> int:
    parser = build_parser()
    args, extra = parser.parse_known_args(argv)
    if args.command == "lab":
        if args.fake_devices is not None and args.fake_devices < 1:
            parser.error("--fake-devices must be at least 1")
        return cmd_lab(args, extra)
    if extra:
        parser.error(f"unrecognized arguments: {' '.join(extra)}")
    if args.command == "mesh":
        if args.fake_devices is not None and args.fake_devices < 1:
            parser.error("--fake-devices must be at least 1")
        return cmd_mesh(args)
    return cmd_doctor(args)


if __name__ == "__main__":  # pragma: no cover
    sys.exit(main())
