"""Regenerate the small GPU fixtures of tests/engine/test_profile_gpu.py from the recorded profiles.

    python tests/data/gpu/make_fixtures.py [/path/to/shared/data]

The recorded profiles (H100, JAX 0.11.2; see that folder's README.md) are megabytes;
the tests need only what the parser reads, so this keeps:

- ``transformer24_kernels.json.gz``: the ``(name, opcode)`` schedule of the entry
  computation of ``transformer24_grad.hlo.txt``, and the kernel names of the first
  profiled call with command buffers (``-cb``, where ``hlo_op`` names the command buffer)
  next to the ``hlo_op`` of the same call's kernels without them (``-nocb``, the truth),
  gzipped (names repeat a lot);
- ``matmul8192_events.json``: every event of the GPU plane of both ``matmul8192_bf16``
  profiles (name, start, duration, the stats the parser reads), for a stand-in of
  ``ProfileData``.

The mlp4_grad profiles (``mlp4_grad.cb.xplane.pb``, ``mlp4_grad.nocb.xplane.pb``) and
the ``.hlo.txt`` files are copied as they are (the -cb and -nocb HLO texts differ only in
a metadata column).
"""

from __future__ import annotations

import gzip
import json
import sys
from pathlib import Path

import jax

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parents[2]))

from workbench.engine.hlo.parser import parse_hlo  # noqa: E402


def _device_events(path: Path) -> list[dict]:
    pd = jax.profiler.ProfileData.from_file(str(path))
    out = []
    for plane in pd.planes:
        if not plane.name.startswith("/device:GPU"):
            continue
        for line in plane.lines:
            for e in line.events:
                out.append(
                    {
                        "plane": plane.name,
                        "line": line.name,
                        "name": e.name,
                        "start_ns": e.start_ns,
                        "duration_ns": e.duration_ns,
                        "stats": {
                            k: str(v)
                            for k, v in dict(e.stats).items()
                            if k in ("hlo_module", "hlo_op", "kernel_details")
                        },
                    }
                )
    return out


def main(root: Path) -> None:
    cb, nocb = root / "gpu-profiles-cb", root / "gpu-profiles-nocb"
    module = parse_hlo((cb / "transformer24_grad.hlo.txt").read_text())
    schedule = [[i.name, i.opcode] for i in module.entry.instructions]
    with_cb = _device_events(cb / "transformer24_grad.xplane.pb")
    without = _device_events(nocb / "transformer24_grad.xplane.pb")
    calls = 5
    per_call = len(with_cb) // calls
    assert per_call * calls == len(with_cb) == len(without)
    data = json.dumps(
        {
            "module": module.name,
            "schedule": schedule,
            "kernels_per_call": per_call,
            "cb_kernels": [e["name"] for e in with_cb[:per_call]],
            "cb_hlo_op": sorted({e["stats"].get("hlo_op", "") for e in with_cb}),
            "nocb_kernels": [e["name"] for e in without[:per_call]],
            "nocb_hlo_op": [e["stats"].get("hlo_op") for e in without[:per_call]],
        },
        separators=(",", ":"),
    )
    (HERE / "transformer24_kernels.json.gz").write_bytes(
        gzip.compress(data.encode(), compresslevel=9, mtime=0)
    )
    (HERE / "matmul8192_events.json").write_text(
        json.dumps(
            {
                "cb": _device_events(cb / "matmul8192_bf16.xplane.pb"),
                "nocb": _device_events(nocb / "matmul8192_bf16.xplane.pb"),
            },
            indent=0,
        )
    )


if __name__ == "__main__":
    main(Path(sys.argv[1]) if len(sys.argv) > 1 else Path("/work/shared/data"))
