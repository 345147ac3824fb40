"""A pytest plugin: the ``no_recompiles`` fixture.

Enable it in a ``conftest.py`` (or the test module) with::

    pytest_plugins = ["workbench.testing"]

(or ``pytest -p workbench.testing``).  It is opt-in, not an installed ``pytest11``
entry point: loading it imports JAX, which would then happen in every pytest run of
the environment, before a ``conftest.py`` could set ``JAX_PLATFORMS`` or ``XLA_FLAGS``.

The fixture warms nothing and checks nothing by itself: it gives a
:class:`~workbench.api.guard.RecompileGuard` the test uses around the part that must
not recompile, after its own warm-up::

    def test_step_is_cached(no_recompiles):
        step(params, batch)            # first compile
        with no_recompiles:
            step(params, batch)        # RecompileError (a test failure) if it compiles again
        with no_recompiles(allow=1, functions=[step]):
            ...
"""

from __future__ import annotations

import pytest

from workbench.api.guard import RecompileGuard


@pytest.fixture
def no_recompiles() -> RecompileGuard:
    """A guard for ``with no_recompiles: ...`` (see :mod:`workbench.testing`)."""
    return RecompileGuard()


__all__ = ["no_recompiles"]
