"""The engine: everything that talks to JAX.  No display code lives here."""

from workbench.engine.common.analysis import CostAnalysis, MemoryAnalysis
from workbench.engine.common.errors import ErrorReport, report
from workbench.engine.jaxpr.model import JaxprModel, build_model
from workbench.engine.jaxpr.transforms import (
    TRANSFORM_NAMES,
    TransformError,
    TransformSpec,
    parse_transforms,
)
from workbench.engine.stages import Inspection, inspect, inspect_chain, inspect_stages

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
