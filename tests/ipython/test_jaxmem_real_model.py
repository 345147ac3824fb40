"""``%%jaxmem`` on the 24-block transformer's gradient: the live-range peak is XLA's own
and within 10% of ``memory_analysis()``'s argument + output + temp - alias, and the
largest activations kept for the backward pass are named by the model's lines."""

from __future__ import annotations

import pytest

from tests import real_models

pytestmark = pytest.mark.slow  # compiles the 24-block gradient with XLA's dump


def test_the_24_block_gradients_peak_is_xlas_and_near_memory_analysis(run, shell):
    params, x = real_models.transformer_args()
    shell.user_ns.update(jm24_grad=real_models.transformer_grad("einsum"), jm24_p=params, jm24_x=x)
    out = run("%%jaxmem\njm24_grad(jm24_p, jm24_x)").ok()
    rep = out.result.result.report
    assert rep.peak_bytes == rep.xla_reported_peak_bytes
    assert rep.analysis_bytes is not None
    assert abs(rep.peak_bytes - rep.analysis_bytes) <= 0.10 * rep.analysis_bytes
    assert rep.saved and rep.saved[0].source is not None
    assert rep.saved[0].source.file == real_models.__file__
    assert rep.donation is not None and rep.donation.argnums == [0]
    run("del jm24_grad, jm24_p, jm24_x").ok()
