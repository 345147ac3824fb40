"""What the suite's notebook kernels may change without changing what the views show.

The notebook of the two 24-block gradients (tests/browser.py ``HLO24_CELLS``) runs with
LLVM at -O0 (``tests.browser.LLVM_O0``): its outputs are views of XLA's optimized module and
of its buffer assignment (``%%jaxmem``), which XLA makes before LLVM sees anything.  This
checks that premise on a real model rather than assuming it.  (What measures a compile,
``%%jaxprof --compile``, runs in a notebook of its own with XLA's defaults.)
"""

from __future__ import annotations

import jax
import pytest

from tests import real_models
from tests.browser import LLVM_O0


@pytest.mark.slow  # two compiles of a 4-block transformer's gradient
def test_llvm_at_o0_leaves_the_optimized_module_alone():
    params, x = real_models.transformer_args(blocks=4)
    lowered = jax.jit(jax.grad(real_models.transformer_loss_einsum)).lower(params, x)
    name, value = LLVM_O0.removeprefix("--").split("=")
    default = lowered.compile()
    o0 = lowered.compile(compiler_options={name: int(value)})
    assert default.as_text().startswith("HloModule ") and "fusion" in default.as_text()
    assert o0.as_text() == default.as_text()
    # the same buffers: only the machine code (its size not compared) differs
    fields = [f"{k}_size_in_bytes" for k in ("argument", "output", "alias", "temp")]
    ours, theirs = default.memory_analysis(), o0.memory_analysis()
    assert ours.temp_size_in_bytes > 0
    assert [getattr(theirs, f) for f in fields] == [getattr(ours, f) for f in fields]
