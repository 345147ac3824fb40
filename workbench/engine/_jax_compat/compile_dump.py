"""One compile with XLA's dump of its buffer assignment and live ranges.

``Lowered.compile(compiler_options={'xla_dump_to': d, 'xla_dump_hlo_as_text': True})``
makes XLA write, for that one compile, ``*buffer-assignment.txt`` (every buffer, its size
and the HLO values it holds) and ``*live-range.txt`` (the program order, each value's live
range, the peak): the same route on JAX 0.10.2 and 0.12.  With a persistent compilation
cache on, the dump options are not part of the cache key: a hit returns the stored
executable and writes nothing.  So the compile runs inside
:func:`~workbench.engine._jax_compat.compilation.persistent_cache_bypassed` (the one
routine that makes JAX treat its persistent cache as off for one compile and puts JAX's
decision back afterwards): no user setting is changed, the cache is neither read nor
written.  A fresh dump directory per compile keeps JAX's in-memory executable cache
(keyed on the options) from answering either.
"""

from __future__ import annotations

from typing import Any

from workbench.engine._jax_compat.compilation import persistent_cache_bypassed


def compile_with_dump(lowered: Any, directory: str) -> tuple[Any, bool]:
    """``lowered.compile()`` with XLA's HLO dump (text) written to ``directory`` and the
    persistent compilation cache bypassed; (compiled, whether the bypass was possible:
    when False a cache hit may have written no dump and the caller says so)."""
    options = {"xla_dump_to": directory, "xla_dump_hlo_as_text": True}
    with persistent_cache_bypassed() as bypassed:
        return lowered.compile(compiler_options=options), bypassed


__all__ = ["compile_with_dump"]
