"""Views: pure functions from engine records to MIME bundles (text, HTML, JSON)."""

from workbench.views.errors import error_text
from workbench.views.jaxpr import JAXPR_MIME, JaxprDisplay, compare_bundle, jaxpr_bundle

__all__ = ["JAXPR_MIME", "JaxprDisplay", "compare_bundle", "error_text", "jaxpr_bundle"]
