"""One compile with XLA's dump of its buffer assignment and live ranges.

``Lowered.compile(compiler_options={'xla_dump_to': d, 'xla_dump_hlo_as_text': True})``
makes XLA write, for that one compile, ``*buffer-assignment.txt`` (every buffer, its size
and the HLO values it holds) and ``*live-range.txt`` (the program order, each value's live
range, the peak): the same route on JAX 0.10.2 and 0.12.  With a persistent compilation
cache on, the dump options are not part of the cache key: a hit returns the stored
executable and writes nothing.  So the persistent cache is switched off for this compile
(``jax_enable_compilation_cache``, public) and JAX's decision whether to use it, taken once
per process in ``compilation_cache`` (``reset_cache``, experimental), is made again
before and after.  A fresh dump directory per compile keeps JAX's in-memory executable
cache (keyed on the options) from answering either.
"""

from __future__ import annotations

from typing import Any

import jax


def _reset_cache_decision() -> None:
    try:
        from jax.experimental.compilation_cache import compilation_cache as cc

        cc.reset_cache()
    except Exception:  # pragma: no cover - moved: the option alone then applies
        pass


def compile_with_dump(lowered: Any, directory: str) -> Any:
    """``lowered.compile()`` with XLA's HLO dump (text) written to ``directory``, the
    persistent compilation cache off for this compile and restored afterwards."""
    options = {"xla_dump_to": directory, "xla_dump_hlo_as_text": True}
    was_on = bool(getattr(jax.config, "jax_enable_compilation_cache", True))
    cache_dir = getattr(jax.config, "jax_compilation_cache_dir", None)
    switch = was_on and bool(cache_dir)
    if switch:
        jax.config.update("jax_enable_compilation_cache", False)
        _reset_cache_decision()
    try:
        return lowered.compile(compiler_options=options)
    finally:
        if switch:
            jax.config.update("jax_enable_compilation_cache", True)
            _reset_cache_decision()


__all__ = ["compile_with_dump"]
