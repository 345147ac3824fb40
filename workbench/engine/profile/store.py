"""The profiles of this session, by compiled module, so ``%%hlo`` can colour by measured time.

The key is the module's name and a hash of its optimized HLO program (the text without
metadata and stack frames, :func:`~workbench.engine.hlo.program_text.program_text`):
``%%hlo`` names the user's calls in its op_names and ``%%jaxprof`` does not, but both
compile the same program, so the diagram of a module that was profiled is coloured by
what was measured, anything else by the estimate.  A few profiles are kept (the latest per module);
they hold no arrays.
"""

from __future__ import annotations

import hashlib
import re
from collections import OrderedDict
from collections.abc import Callable
from typing import Any

from workbench.engine.hlo.model import HloModule
from workbench.engine.hlo.program_text import program_text
from workbench.engine.profile.report import ProfileReport

_MAX = 32
_STORE: OrderedDict[str, ProfileReport] = OrderedDict()
#: parsed modules (and our counts of them) of the last few profiled programs: profiling
#: the same program again (another -n, after %%hlo) does not parse 10^5 lines again
_MAX_PARSED = 4
_PARSED: OrderedDict[tuple[str, int], tuple[HloModule, Any]] = OrderedDict()
_NAME = re.compile(r"^HloModule\s+([^\s,]+)")


def module_key(name: str, hlo_text: str) -> str:
    """``jit_f:1a2b3c4d5e6f7a8b``: what identifies one compiled program in this session
    (whatever names its metadata carries)."""
    digest = hashlib.sha256(program_text(hlo_text).encode()).hexdigest()[:16]
    return f"{name}:{digest}"


def text_key(hlo_text: str) -> str:
    """:func:`module_key` read from the text itself (its ``HloModule <name>`` line)."""
    m = _NAME.match(hlo_text)
    return module_key(m.group(1) if m else "", hlo_text)


def parsed(
    hlo_text: str, parse: Callable[[str], HloModule], costs: Callable[[HloModule], Any] | None
) -> tuple[HloModule, Any]:
    """``(parse(text), costs(module) or None)``, from the cache when this text was seen."""
    key = (text_key(hlo_text), id(costs))
    hit = _PARSED.get(key)
    if hit is None:
        module = parse(hlo_text)
        hit = (module, costs(module) if costs is not None else None)
        _PARSED[key] = hit
        while len(_PARSED) > _MAX_PARSED:
            _PARSED.popitem(last=False)
    else:
        _PARSED.move_to_end(key)
    return hit


def remember(report: ProfileReport) -> None:
    _STORE.pop(report.module_key, None)
    _STORE[report.module_key] = report
    while len(_STORE) > _MAX:
        _STORE.popitem(last=False)


def measured(key: str) -> ProfileReport | None:
    """The latest profile of the module ``key``, or None."""
    return _STORE.get(key)


def latest() -> ProfileReport | None:
    """The profile measured last (any module), or None: a cluster's processes compare it."""
    return next(reversed(_STORE.values()), None)


def forget() -> None:
    """Drop every stored profile and parsed module (benchmarks measure a cold profile)."""
    _STORE.clear()
    _PARSED.clear()


__all__ = ["forget", "latest", "measured", "module_key", "parsed", "remember", "text_key"]
