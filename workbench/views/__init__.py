"""Views: pure functions from engine records to MIME bundles (text, HTML, JSON).

One display protocol (:class:`~workbench.views.display.Display` over a feature's
:class:`~workbench.views.display.View`), one JSON envelope (:mod:`._envelope`), one set of
number formatters (:mod:`._format`).  No JAX and no IPython are imported here.
"""

from workbench.views.display import Display, View
from workbench.views.errors import WorkbenchError, error_text
from workbench.views.jaxpr import JAXPR_MIME, compare_bundle, jaxpr_bundle

__all__ = [
    "JAXPR_MIME",
    "Display",
    "View",
    "WorkbenchError",
    "compare_bundle",
    "error_text",
    "jaxpr_bundle",
]
