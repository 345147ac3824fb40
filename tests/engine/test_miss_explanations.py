"""JAX's ``TRACING CACHE MISS`` log text read into miss reasons, in the wordings the JAX
versions we support print (taken from real logs)."""

from __future__ import annotations

from workbench.engine.cache.reasons import parse_jax_explanation

# JAX 0.12.0.1, a jit whose static argument changed (it names no values)
NO_REASON = """TRACING CACHE MISS at /tmp/dbg2.py:11 (<module>):
  for power defined at /tmp/dbg2.py:5
  all previously seen cache keys differ. For the closest previous key:
  cache miss explanation unavailable"""


def test_a_miss_without_a_reason_still_says_the_function_compiled_before():
    parsed = parse_jax_explanation(NO_REASON)
    assert parsed.function == "power"
    assert parsed.defined_at == "/tmp/dbg2.py:5"
    assert parsed.seen_before and not parsed.never_seen
    assert [r.kind for r in parsed.reasons] == ["unknown"]
    assert parsed.reasons[0].detail is not None
    assert "compiled before with other arguments" in parsed.reasons[0].detail


def test_a_first_call_is_not_seen_before():
    parsed = parse_jax_explanation(
        "TRACING CACHE MISS at /tmp/a.py:3 (<module>):\n"
        "  for f defined at /tmp/a.py:1\n"
        "  never seen function:\n"
        "    f id=1 defined at /tmp/a.py:1"
    )
    assert parsed.never_seen and not parsed.seen_before
    assert [r.kind for r in parsed.reasons] == ["new_function"]
