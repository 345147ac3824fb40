"""Write extension/test/fixtures/profile-cpu.json: a real ``%%jaxprof`` payload on CPU.

    python tests/data/make_profile_fixture.py

The cell runs in a real IPython shell (so the listing is a notebook cell's, with its
prompt number); one source line carries markup (``<img onerror>``) that the extension
must show as text.
"""

from __future__ import annotations

import json
import os
import sys
from pathlib import Path

os.environ.setdefault("JAX_PLATFORMS", "cpu")
ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT))

from IPython.core.interactiveshell import InteractiveShell  # noqa: E402

CELL = """%%jaxprof -n 5 --top 4
def mlp(w1, w2, x):
    h = jnp.tanh(x @ w1)  # <img src=x onerror=alert(1)>
    y = jnp.sin(h) @ w2
    return jnp.sum(jnp.sin(y))
w1, w2, x = jnp.ones((256, 256)), jnp.ones((256, 256)), jnp.ones((128, 256))
mlp(w1, w2, x)
"""


def main() -> None:
    sh = InteractiveShell.instance()
    sh.run_cell("%load_ext workbench\nimport jax.numpy as jnp", store_history=True)
    result = sh.run_cell(CELL, store_history=True)
    assert result.error_in_exec is None, result.error_in_exec
    bundle, _ = sh.display_formatter.format(result.result)
    payload = bundle["application/vnd.jax-workbench.profile+json"]
    out = ROOT / "extension" / "test" / "fixtures" / "profile-cpu.json"
    out.write_text(json.dumps(payload, indent=1) + "\n")
    print(f"wrote {out} ({out.stat().st_size} bytes)")


if __name__ == "__main__":
    main()
