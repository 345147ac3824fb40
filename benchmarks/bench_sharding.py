"""How fast does the mesh explorer answer a spec change, and how fast is the layout picture?

Run by hand (not part of the test suite)::

    python benchmarks/bench_sharding.py [--rounds N] [--devices 8,64]

Targets (issue 6):

- explorer, from a spec change to the updated view, including the compile of a
  sharded 1024x1024 matmul: median at most 300 ms on 8 fake CPU devices, 1 s on 64;
- the layout picture (SVG) of a 512-device layout: at most 200 ms.

The explorer is measured through its front door: ``MeshExplorer.widgets['spec'].value``
is set (as a browser edit does), which runs parse -> mesh -> compile (fresh function,
so JAX's caches never answer) -> collectives -> HTML, synchronously.  Each device
count runs in its own process (fake devices must be set before JAX starts).  The
reference, alternated round by round in the same process, is JAX alone:
``jax.jit(matmul).lower(args).compile()`` for the same shardings, so the ratio says
what the explorer adds on top of XLA.  Medians over rounds.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
SPECS = (
    ("data, model", "model, None"),
    ("data, None", "None, model"),
    ("None, model", "model, None"),
    ("model, data", "data, None"),
)


def child(devices: int, rounds: int) -> dict[str, float]:
    """Runs in a fresh process with ``devices`` fake CPU devices."""
    import jax

    jax.config.update("jax_num_cpu_devices", devices)
    import jax.numpy as jnp
    from jax.sharding import NamedSharding
    from jax.sharding import PartitionSpec as P

    from workbench.apps.mesh_explorer import MeshExplorer
    from workbench.engine.sharding.mesh_explorer import ExplorerConfig
    from workbench.engine.sharding.spec import parse_spec

    cfg = ExplorerConfig.default(devices)
    names = [a.strip() for a in cfg.axis_names.split(",")]
    app = MeshExplorer(operation="matmul", shape="1024, 1024")
    assert app.result is not None, app.message.object
    assert app.result.device_count == devices == len(jax.devices())
    mesh = jax.make_mesh(
        tuple(app.result.mesh.axis_sizes),
        tuple(names),
        axis_types=(jax.sharding.AxisType.Auto,) * len(names),
    )

    def spec(text: str) -> P:
        return P(*[tuple(e) if len(e) > 1 else (e[0] if e else None) for e in parse_spec(text)])

    def reference(lhs: str, rhs: str) -> float:
        a = jax.ShapeDtypeStruct((1024, 1024), jnp.float32, sharding=NamedSharding(mesh, spec(lhs)))
        b = jax.ShapeDtypeStruct((1024, 1024), jnp.float32, sharding=NamedSharding(mesh, spec(rhs)))

        def matmul(x, y):  # a fresh function per call: no cache hit
            return x @ y

        t0 = time.perf_counter()
        jax.jit(matmul).lower(a, b).compile()
        return time.perf_counter() - t0

    explorer, ref, kinds = [], [], set()
    for r in range(rounds):
        lhs, rhs = SPECS[(r + 1) % len(SPECS)]  # SPECS[0] is the starting state
        app.widgets["rhs_spec"].value = rhs  # untimed: the timed change is the array spec
        before = app.result
        t0 = time.perf_counter()
        app.widgets["spec"].value = lhs
        dt = time.perf_counter() - t0
        assert app.result is not before, app.message.object
        explorer.append(dt)
        kinds.update(c.description for c in app.result.collectives)
        ref.append(reference(lhs, rhs))
    return {
        "devices": devices,
        "explorer_ms": 1e3 * statistics.median(explorer),
        "jax_compile_ms": 1e3 * statistics.median(ref),
        "ratio": statistics.median(e / c for e, c in zip(explorer, ref, strict=True)),
        "collectives": sorted(kinds),
    }


def svg_bench(rounds: int) -> list[tuple[str, float, int]]:
    from workbench.engine.sharding.layout import MeshInfo, plan_layout
    from workbench.views.sharding import layout_svg, layouts_html

    mesh = MeshInfo(["data", "model"], [8, 64], ["Auto", "Auto"], list(range(512)))
    cases = [
        ("2-D, 512 shards", plan_layout(mesh, [["data"], ["model"]], [4096, 4096])),
        ("3-D facets, 512 devices", plan_layout(mesh, [["data"], [], ["model"]], [8, 1024, 1024])),
        ("1-D strip, 512 shards", plan_layout(mesh, [["data", "model"]], [1 << 20])),
    ]
    out = []
    for label, lay in cases:
        svg_t, html_t = [], []
        for _ in range(rounds):
            t0 = time.perf_counter()
            svg = layout_svg(lay)
            svg_t.append(time.perf_counter() - t0)
            t0 = time.perf_counter()
            page = layouts_html([lay])
            html_t.append(time.perf_counter() - t0)
        out.append((f"{label}: SVG", 1e3 * statistics.median(svg_t), len(svg)))
        out.append(
            (f"{label}: full HTML (SVG + device table)", 1e3 * statistics.median(html_t), len(page))
        )
    return out


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--rounds", type=int, default=12)
    ap.add_argument("--devices", default="8,64")
    ap.add_argument("--child", type=int, default=None, help=argparse.SUPPRESS)
    opts = ap.parse_args()
    if opts.child is not None:
        print(json.dumps(child(opts.child, opts.rounds)))
        return
    os.environ["JAX_PLATFORMS"] = "cpu"
    env = {k: v for k, v in os.environ.items() if k != "XLA_FLAGS"}
    targets = {8: 300.0, 64: 1000.0}
    print(
        f"explorer: spec change -> updated view, sharded 1024x1024 f32 matmul "
        f"(median of {opts.rounds} rounds)"
    )
    print(
        f"{'devices':>8} {'explorer ms':>12} {'JAX compile ms':>15} {'ratio':>6} "
        f"{'target ms':>10}  ok"
    )
    for n in [int(x) for x in opts.devices.split(",")]:
        proc = subprocess.run(
            [sys.executable, __file__, "--child", str(n), "--rounds", str(opts.rounds)],
            env=env,
            cwd=ROOT,
            capture_output=True,
            text=True,
            check=False,
        )
        if proc.returncode != 0:
            print(f"{n:>8} failed: {proc.stderr.strip().splitlines()[-1:]}")
            continue
        r = json.loads(proc.stdout.strip().splitlines()[-1])
        target = targets.get(n, float("nan"))
        ok = "yes" if r["explorer_ms"] <= target else "NO"
        print(
            f"{n:>8} {r['explorer_ms']:>12.1f} {r['jax_compile_ms']:>15.1f} "
            f"{r['ratio']:>6.2f} {target:>10.0f}  {ok}"
        )
        print(f"{'':>8} collectives seen: {'; '.join(r['collectives'])}")
    print()
    print(f"layout picture, 512 devices (median of {opts.rounds} rounds; target: SVG <= 200 ms)")
    print(f"{'case':<52} {'ms':>8} {'KiB':>8}")
    for label, ms, size in svg_bench(opts.rounds):
        print(f"{label:<52} {ms:>8.1f} {size / 1024:>8.0f}")


if __name__ == "__main__":
    main()
