"""Live mode: what changed since the last run of the same ``%%jaxpr`` / ``%%hlo`` cell.

One :class:`LiveMode` per shell (its :class:`~workbench.ipython.session.Session` owns it)
keeps the latest :class:`~workbench.engine.live.Fingerprint` of each cell, by the cell id
JupyterLab sends with the execute request, and compares a cell's new result with it.
Why by cell id: a re-run cell gets a new prompt number but keeps its id, and a cell
without an id (a terminal, a plain shell) has nothing to be compared with.  Only the
fingerprints are kept (a few kilobytes each), never the results themselves.
"""

from __future__ import annotations

import threading
from collections import OrderedDict
from collections.abc import Callable
from typing import Any

from workbench.engine.live import (
    Fingerprint,
    LiveDiff,
    diff_fingerprints,
    hlo_fingerprint,
    jaxpr_fingerprint,
)

#: cells whose latest fingerprint is kept (the oldest go first)
MAX_FINGERPRINTS = 500

#: the results live mode compares, by the kind their front door names them
_FINGERPRINTS: dict[str, Callable[[Any], Fingerprint]] = {
    "jaxpr": jaxpr_fingerprint,
    "hlo": hlo_fingerprint,
}


class LiveMode:
    """The latest fingerprint of each cell that produced a jaxpr or an HLO report."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._fingerprints: OrderedDict[str, Fingerprint] = OrderedDict()

    @staticmethod
    def compares(kind: str) -> bool:
        """Whether results of ``kind`` (``"jaxpr"``, ``"hlo"``, ``"bench"``...) are compared."""
        return kind in _FINGERPRINTS

    def compare(self, kind: str, result: Any, cell_id: str) -> LiveDiff | None:
        """Keep ``result``'s fingerprint as cell ``cell_id``'s latest; the diff with the
        one it replaces, or None on the cell's first run (or a run of another kind)."""
        fp = _FINGERPRINTS[kind](result)
        with self._lock:
            before = self._fingerprints.pop(cell_id, None)
            self._fingerprints[cell_id] = fp
            while len(self._fingerprints) > MAX_FINGERPRINTS:
                self._fingerprints.popitem(last=False)
        if before is None or before.kind != fp.kind:
            return None
        return diff_fingerprints(before, fp)

    def __len__(self) -> int:
        return len(self._fingerprints)


__all__ = ["MAX_FINGERPRINTS", "LiveMode"]
