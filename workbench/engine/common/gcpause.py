"""Pause Python's cyclic garbage collector while we build big, short-lived structures.

Tracing a 2,000-equation program and building its model and views allocates
hundreds of thousands of container objects; with the collector on, that sets off
full collections that walk every object in the kernel (JAX's own state, the
user's arrays, ``Out`` history) and cost more than the work itself.  Nothing we
build here is cyclic garbage worth collecting mid-way, so we pause and let the
collector resume afterwards.  Nests safely.
"""

from __future__ import annotations

import gc
from collections.abc import Iterator
from contextlib import contextmanager


@contextmanager
def gc_paused() -> Iterator[None]:
    was_enabled = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        if was_enabled:
            gc.enable()
