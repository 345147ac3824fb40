"""Views: pure functions from engine records to MIME bundles (text, HTML, JSON)."""

from .errors_view import error_text
from .jaxpr_view import JAXPR_MIME, JaxprDisplay, compare_bundle, jaxpr_bundle

__all__ = ["JAXPR_MIME", "JaxprDisplay", "compare_bundle", "error_text", "jaxpr_bundle"]
