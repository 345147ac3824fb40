"""The engine: everything that talks to JAX.  No display code lives here."""

from .analysis import CostAnalysis, MemoryAnalysis
from .errors import ErrorReport, report
from .inspection import Inspection, inspect, inspect_chain, inspect_stages
from .jaxpr_model import JaxprModel, build_model
from .transforms import TRANSFORM_NAMES, TransformError, TransformSpec, parse_transforms

__all__ = [
    "TRANSFORM_NAMES",
    "CostAnalysis",
    "ErrorReport",
    "Inspection",
    "JaxprModel",
    "MemoryAnalysis",
    "TransformError",
    "TransformSpec",
    "build_model",
    "inspect",
    "inspect_chain",
    "inspect_stages",
    "parse_transforms",
    "report",
]
