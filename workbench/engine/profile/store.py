"""The profiles of this session, by compiled module, so ``%%hlo`` can colour by measured time.

The key is the module's name and a hash of its optimized HLO text: ``%%hlo`` and
``%%jaxprof`` of the same call compile the same text (JAX's trace cache keeps even the
metadata identical), so the diagram of a module that was profiled is coloured by what was
measured, anything else by the estimate.  A few profiles are kept (the latest per module);
they hold no arrays.
"""

from __future__ import annotations

import hashlib
from collections import OrderedDict

from workbench.engine.profile.record import ProfileReport

_MAX = 32
_STORE: OrderedDict[str, ProfileReport] = OrderedDict()


def module_key(name: str, hlo_text: str) -> str:
    """``jit_f:1a2b3c4d5e6f7a8b``: what identifies one compiled module in this session."""
    return f"{name}:{hashlib.sha256(hlo_text.encode()).hexdigest()[:16]}"


def remember(report: ProfileReport) -> None:
    _STORE.pop(report.module_key, None)
    _STORE[report.module_key] = report
    while len(_STORE) > _MAX:
        _STORE.popitem(last=False)


def measured(key: str) -> ProfileReport | None:
    """The latest profile of the module ``key``, or None."""
    return _STORE.get(key)


def forget() -> None:
    _STORE.clear()


__all__ = ["forget", "measured", "module_key", "remember"]
