"""A compiled program's memory at its peak, read from XLA's buffer-assignment dump.

The peak must be the figure XLA's own live-range report gives (read from the same dump by
a second, independent route: the values XLA lists at its peak), and within 10% of
``memory_analysis()``'s argument + output + temp - alias; the donation advice must be what
a real ``donate_argnums`` compile aliases.
"""

from __future__ import annotations

import os
import tempfile

import jax
import jax.numpy as jnp
import pytest

from tests import real_models
from workbench.engine.memory.dump import parse_live_range, peak_moment, usage_by_step
from workbench.engine.memory.program import build_program_memory
from workbench.engine.stages import Inspection


def _program(fn, *args, **kwargs):
    return build_program_memory(Inspection(fn, args, kwargs, scoped=True))


@pytest.fixture(scope="module")
def one_block_grad():
    params, x = real_models.transformer_args(1)
    return params, x, _program(real_models.transformer_grad("einsum"), params, x)


@pytest.fixture(scope="module")
def scan_program():
    p, xs = real_models.scan_rnn_params(), real_models.scan_rnn_inputs()
    return _program(jax.grad(real_models.scan_rnn_loss), p, xs)


def _agrees_with_xla(rep):
    assert rep.xla_reported_peak_bytes is not None
    assert rep.peak_bytes == rep.xla_reported_peak_bytes
    assert rep.analysis_bytes is not None
    assert abs(rep.peak_bytes - rep.analysis_bytes) <= 0.10 * rep.analysis_bytes


def test_the_gradients_peak_is_xlas_and_near_memory_analysis(one_block_grad):
    _, _, rep = one_block_grad
    _agrees_with_xla(rep)
    assert rep.has_backward
    assert sum(b.bytes for b in rep.buffers) == rep.peak_bytes
    assert [b.bytes for b in rep.buffers] == sorted((b.bytes for b in rep.buffers), reverse=True)
    assert max(b for _, b in rep.timeline) >= rep.peak_bytes


def test_a_scans_peak_is_xlas_and_near_memory_analysis(scan_program):
    _agrees_with_xla(scan_program)


def test_buffers_at_the_peak_name_the_users_source_line(one_block_grad):
    _, _, rep = one_block_grad
    lines = {b.source.line for b in rep.buffers if b.source is not None}
    here = {b.source.file for b in rep.buffers if b.source is not None}
    assert real_models.__file__ in here
    assert lines
    # the largest forward-pass values kept for the backward pass come from lines of the model
    assert rep.saved and rep.saved[0].source is not None
    assert rep.saved[0].source.file == real_models.__file__
    assert rep.saved[0].bytes == max(s.bytes for s in rep.saved)


def test_donation_advice_is_what_a_real_donate_argnums_compile_aliases(one_block_grad):
    params, x, rep = one_block_grad
    assert rep.donation is not None and rep.donation.argnums == [0]
    expected = sum(leaf.nbytes for leaf in jax.tree_util.tree_leaves(params))
    assert rep.donation.bytes == expected
    donated = jax.jit(real_models.transformer_grad("einsum"), donate_argnums=(0,))
    alias = donated.lower(params, x).compile().memory_analysis().alias_size_in_bytes
    assert alias == rep.donation.bytes


def test_no_donation_is_advised_when_no_output_matches_an_argument():
    rep = _program(lambda w, x: jnp.tanh(x @ w).sum(), jnp.ones((32, 32)), jnp.ones((4, 32)))
    assert rep.donation is not None
    assert (rep.donation.argnums, rep.donation.bytes) == ([], 0)


def test_the_dump_directory_is_removed():
    before = set(os.listdir(tempfile.gettempdir()))
    _program(lambda x: jnp.sin(x) * 2, jnp.ones(8))
    after = set(os.listdir(tempfile.gettempdir()))
    assert not [n for n in after - before if n.startswith("jwb-jaxmem-")]


def test_a_persistent_cache_does_not_hide_the_dump(tmp_path):
    """With the persistent cache on and the program already in it, the dump is written."""
    from workbench.engine.cache import persistent

    f = jax.jit(lambda x: jnp.cos(x) @ x.T + 1.0)
    x = jnp.ones((64, 64))
    saved = {
        k: getattr(jax.config, k)
        for k in (
            "jax_compilation_cache_dir",
            "jax_persistent_cache_min_compile_time_secs",
            "jax_persistent_cache_min_entry_size_bytes",
        )
    }
    try:
        jax.config.update("jax_compilation_cache_dir", str(tmp_path))
        jax.config.update("jax_persistent_cache_min_compile_time_secs", 0)
        jax.config.update("jax_persistent_cache_min_entry_size_bytes", 0)
        persistent._reset_jax_cache_state()
        f.lower(x).compile()  # now in the persistent cache
        cached = sorted(os.listdir(tmp_path))
        assert cached
        rep = _program(f, x)
        assert rep.peak_bytes == rep.xla_reported_peak_bytes
        assert jax.config.jax_enable_compilation_cache
        # the user's cache is neither written nor emptied by the dumping compile
        assert sorted(os.listdir(tmp_path)) == cached
    finally:
        for k, v in saved.items():
            jax.config.update(k, v)
        persistent._reset_jax_cache_state()


def test_xlas_sweep_adds_the_values_starting_at_a_step_before_removing_those_that_ended():
    """``a`` lives 0-1, ``b`` 2-3, ``c`` 1-2.  Counted step by step, steps 1 and 2 hold 15
    bytes each; XLA's sweep adds ``b`` at step 2 before it removes ``a`` (ended at 1), so
    for a moment 25 bytes meet there and step 2 is its peak step."""
    ranges = {"a{}": (0, 1), "b{}": (2, 3), "c{}": (1, 2)}
    sizes = {"a{}": 10, "b{}": 10, "c{}": 5}
    assert usage_by_step(ranges, sizes, 3) == [10, 15, 15, 10]
    assert peak_moment(ranges, sizes) == 2


def test_the_live_range_text_is_read():
    text = (
        "HloLiveRange (max 3):\n  InstructionSequence:\n    0:p\n    1:f\n  BufferLiveRange:\n"
        "    p{}:0-3\n    f{}:1-3\n  Live ranges at 1 (peak):\n"
        "    p{}: 16 bytes (cumulative: 16 bytes)\n    f{}: 8 bytes (cumulative: 24 bytes)\n"
        "  Stack trace breakdown for peak usage: 24 bytes\n"
    )
    lr = parse_live_range(text)
    assert lr.sequence == ["p", "f"]
    assert lr.ranges == {"p{}": (0, 3), "f{}": (1, 3)}
    assert (lr.reported_peak_step, lr.reported_peak_bytes, lr.steps) == (1, 24, 3)


def test_donation_advice_numbers_arguments_as_the_call_does_around_static_ones():
    def step(n, w, x):
        return w - 0.1 * n * (x.T @ jnp.tanh(x @ w))

    w, x = jnp.ones((16, 16)), jnp.ones((4, 16))
    rep = build_program_memory(Inspection(step, (3, w, x), {}, static_argnums=(0,)), (0,))
    assert rep.donation is not None and rep.donation.argnums == [1]
    donated = jax.jit(step, static_argnums=(0,), donate_argnums=(1,))
    alias = donated.lower(3, w, x).compile().memory_analysis().alias_size_in_bytes
    assert alias == rep.donation.bytes == w.nbytes


def _xlas_idle_output_bytes(lowered) -> tuple[int, int]:
    """(XLA's peak, the bytes of its output allocations that hold none of the values its
    live-range report lists at the peak), read from XLA's own two files by a route of its
    own: allocation headers and ``value: <id name ...>`` lines of the buffer assignment, the
    ``name{}: N bytes`` lines under ``Live ranges at S (peak):``."""
    import glob
    import re

    with tempfile.TemporaryDirectory() as d:
        lowered.compile(compiler_options={"xla_dump_to": d, "xla_dump_hlo_as_text": True})
        ba = open(max(glob.glob(f"{d}/*buffer-assignment.txt"), key=os.path.getsize)).read()
        lr = open(max(glob.glob(f"{d}/*live-range.txt"), key=os.path.getsize)).read()
    at_peak = lr.split("(peak):", 1)[1].split("Stack trace breakdown", 1)[0]
    listed = dict(re.findall(r"^\s+(\S+): (\d+) bytes", at_peak, re.M))
    idle = 0
    for block in ba.split("\nUsed values:", 1)[0].split("\nallocation ")[1:]:
        header, *values = block.splitlines()
        size = int(re.match(r"\d+: size (\d+),", header).group(1))
        if "maybe-live-out" not in header or "parameter" in header:
            continue  # not an output's own allocation (an aliased one is the argument's)
        used = 0
        for v in values:
            m = re.match(r" value: <\d+ (\S+?)(\{[\d,]*\})?(?: \(phi\))?(?: @\d+)?> ", v)
            if m and (key := m.group(1) + (m.group(2) or "{}")) in listed:
                used += int(listed[key])
        idle += max(size - used, 0)
    return sum(int(b) for b in listed.values()), idle


def test_a_train_steps_peak_compares_with_memory_analysis_less_its_empty_output_buffers():
    """An NNX train step (optax adamw) peaks inside its dropout draw, before it writes the
    new parameters and optimizer state: XLA allocates each of those outputs for the whole
    call and ``memory_analysis()`` counts them, the live-range peak does not, so the two
    differ by about the outputs' bytes (0.78 of it here).  Less the output bytes XLA's own
    report shows empty at the peak, ``memory_analysis()`` is within 10% of the peak."""
    s = real_models.nnx_mlp_setup()
    ins = Inspection(s.train_step, (s.model, s.optimizer, s.x, s.y), {}, scoped=True)
    rep = build_program_memory(ins)
    xla_peak, xla_idle = _xlas_idle_output_bytes(ins.lowered)
    assert rep.peak_bytes == rep.xla_reported_peak_bytes == xla_peak
    assert rep.idle_output_bytes == xla_idle
    assert rep.analysis_bytes is not None and rep.comparable_bytes is not None
    # the outputs are most of the gap: they are what memory_analysis counts and the peak not
    assert rep.idle_output_bytes >= 0.9 * (rep.memory.output_bytes or 0)
    assert rep.comparable_bytes == rep.analysis_bytes - xla_idle
    assert abs(rep.peak_bytes - rep.comparable_bytes) <= 0.10 * rep.comparable_bytes


def test_a_train_steps_outputs_are_not_offered_as_activations_to_checkpoint():
    """An Equinox train step's new optimizer state is computed before the peak and lives to
    the end (an output): the checkpoint advice names only values the backward pass frees."""
    s = real_models.equinox_setup()
    rep = _program(s.train_step, s.model, s.opt_state, s.x, s.y)
    outputs = {b.name for b in rep.buffers if b.live[1] >= rep.steps}
    assert outputs  # the advice had them to leave out
    assert sum(g.count for g in rep.saved) == len(
        [
            b
            for b in rep.buffers
            if b.live[1] < rep.steps
            and b.op_name
            and "transpose(" not in b.op_name
            and not b.role.startswith("parameter")
            and b.role != "constant"
        ]
    )


def test_an_in_place_write_at_the_peak_is_said_to_be_counted_twice():
    """Both arguments donated: each output is written into an argument's buffer.  Where XLA
    schedules a write at the argument's last use (JAX 0.12's XLA does here), both values
    are live at that step (XLA's live ranges include their last step), so the live-range
    peak counts those bytes twice and ``memory_analysis()`` once; a note says how many.
    Less them (none, where the schedule has no such step), the peak is
    ``memory_analysis()``'s figure."""
    import re

    def update(w, x):
        s = jnp.cos(jnp.sin(jnp.tile(x, (8, 1)) @ w)).sum(0)
        return w + s, x * s

    w, x = jnp.ones((256, 256)), jnp.ones((256, 256))
    rep = _program(jax.jit(update, donate_argnums=(0, 1)), w, x)
    assert rep.memory.alias_bytes == w.nbytes + x.nbytes
    notes = [n for n in rep.notes if "counted twice" in n]
    twice = sum(int(re.match(r"(\d+) bytes", n).group(1)) for n in notes)
    assert len(notes) <= 1 and twice <= rep.memory.alias_bytes
    assert rep.peak_bytes - twice == rep.comparable_bytes
