"""A failed inspection never keeps the user's arrays alive.

IPython keeps the last error (``sys.last_value``, its traceback and anything it chains) until
the next one, so an error raised while a magic's frame, or a chained engine exception, still
holds the call's arguments would keep a user's (possibly multi-GB) arrays alive after ``del``.
"""

from __future__ import annotations

import pytest


@pytest.mark.parametrize(
    "cell",
    [
        "%hlo _trace17(_big17)",
        "%%hlo\n_trace17(_big17)",
        "%%jaxmem\n_trace17(_big17)",
        "%jaxpr _trace17(_big17)",
        "%%jaxpr\n_trace17(_big17)",
        "%jaxpr -t grad _vec17(_big17)",
        "%jaxbench _trace17(_big17)",
        "workbench.hlo(_trace17, _big17)",
        "workbench.jaxpr(_trace17, _big17)",
    ],
)
def test_a_failed_inspection_does_not_keep_the_array_alive(run, shell, cell):
    run(
        "import gc, weakref, workbench, jax.numpy as jnp\n"
        "def _trace17(x):\n    raise ValueError('at trace time')\n"
        "def _vec17(x):\n    return x * 2\n"
        "_big17 = jnp.ones((64, 64))\n_big17_ref = weakref.ref(_big17)"
    )
    out = run(cell)
    assert out.error is not None or out.error_in_exec is not None
    run("del _big17\ngc.collect()")
    assert shell.user_ns["_big17_ref"]() is None, f"{cell} kept the argument alive"
