"""Live mode: what changed between two runs of the same ``%%jaxpr`` / ``%%hlo`` cell.

A :class:`Fingerprint` is a small summary of one result (items grouped by what they are
and the source line they came from, with counts and a few example texts, plus totals);
:func:`diff_fingerprints` compares two.  Why fingerprints and not the results: a
report can hold megabytes (a parsed HLO module); the kernel keeps one fingerprint per
cell, a few kilobytes, for as long as the session lasts.
"""

from workbench.engine.live.fingerprint import (
    Fingerprint,
    Group,
    LiveDiff,
    Total,
    TotalChange,
    diff_fingerprints,
    hlo_fingerprint,
    jaxpr_fingerprint,
)

__all__ = [
    "Fingerprint",
    "Group",
    "LiveDiff",
    "Total",
    "TotalChange",
    "diff_fingerprints",
    "hlo_fingerprint",
    "jaxpr_fingerprint",
]
