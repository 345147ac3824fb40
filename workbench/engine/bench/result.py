"""Benchmark records: plain dataclasses, JSON in and out, a DataFrame on request.

The JSON form is also the ``application/vnd.jax-workbench.bench+json`` payload
(``docs/mime-bench.md``), so a result saved today loads with :meth:`Benchmark.from_json`
and compares with tomorrow's (:meth:`Benchmark.compare_to`), with the environment
record alongside to explain a difference.
"""

from __future__ import annotations

import json
import math
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from workbench.engine.bench.peaks import Roofline
from workbench.engine.bench.sampler import FirstCall
from workbench.engine.bench.stats import PowerFit, RatioStats, SampleStats, ratio_of_medians
from workbench.engine.common.environment import Environment
from workbench.engine.common.errors import ErrorReport
from workbench.engine.common.source import SourceLine

SCHEMA_VERSION = 1


@dataclass
class Measurement:
    """One variant at one sweep point: the samples in run order and their summary."""

    variant: str
    params: dict[str, Any] = field(default_factory=dict)
    number: int = 0  # calls per sample
    samples: list[float] = field(default_factory=list)  # seconds per call, in run order
    warmup_calls: int = 0
    first_call: FirstCall | None = None
    output: str = ""
    stats: SampleStats | None = None
    roofline: Roofline | None = None
    error: ErrorReport | None = None
    interrupted: bool = False
    #: Compiles seen after the first call (None: not measured).  A function
    #: that compiles on every call (e.g. ``jax.jit`` of a fresh lambda inside it) has
    #: a steady state made of compiles; the samples then time those.
    warmup_compiles: int | None = None
    sampling_compiles: int | None = None
    #: The budget (an upper bound on the wall time) ended sampling before ``min_runs``
    #: samples (or ``repeat`` when given): a slow function got the samples that fit.
    stopped_by_budget: bool = False
    #: What the calls ran on when the arguments hold mutable state (Flax NNX graph nodes):
    #: "timed on copies of ..." or, with ``allow_mutation``, that they changed the user's
    #: objects.  Empty when the arguments hold no such state.
    state_note: str = ""

    @property
    def ok(self) -> bool:
        return self.error is None and bool(self.samples)

    @property
    def warnings(self) -> list[str]:
        """The samples' noise warnings plus what the harness saw (compiles in the samples)."""
        out = []
        if self.sampling_compiles:
            n = self.sampling_compiles
            out.append(
                f"recompiled {n} time{'s' if n != 1 else ''} during sampling: the "
                "steady state includes compiles"
            )
        return out + (list(self.stats.warnings) if self.stats is not None else [])

    @property
    def median(self) -> float | None:
        return None if self.stats is None else self.stats.median

    @property
    def label(self) -> str:
        p = ", ".join(f"{k}={v}" for k, v in self.params.items())
        return f"{self.variant} [{p}]" if p else self.variant

    def to_dict(self) -> dict[str, Any]:
        return {
            "variant": self.variant,
            "params": dict(self.params),
            "number": self.number,
            # 6 significant digits: 1e-6 relative, far below any timing's uncertainty,
            # and about half the JSON of full floats for long runs
            "samples": [float(f"{x:.6g}") for x in self.samples],
            "warmup_calls": self.warmup_calls,
            "first_call": None if self.first_call is None else self.first_call.to_dict(),
            "output": self.output,
            "stats": None if self.stats is None else self.stats.to_dict(),
            "roofline": None if self.roofline is None else self.roofline.to_dict(),
            "error": None if self.error is None else self.error.to_dict(),
            "interrupted": self.interrupted,
            "warmup_compiles": self.warmup_compiles,
            "sampling_compiles": self.sampling_compiles,
            "stopped_by_budget": self.stopped_by_budget,
            "state_note": self.state_note,
        }

    @classmethod
    def from_dict(cls, d: dict[str, Any]) -> Measurement:
        err = d.get("error")
        error = None
        if err is not None:
            where = err.get("where")
            error = ErrorReport(
                phase=err["phase"],
                kind=err["kind"],
                summary=err["summary"],
                hints=list(err.get("hints", [])),
                where=None if where is None else SourceLine.from_dict(where),
            )
        return cls(
            variant=d["variant"],
            params=_params_from_json(d.get("params", {})),
            number=d.get("number", 0),
            samples=list(d.get("samples", [])),
            warmup_calls=d.get("warmup_calls", 0),
            first_call=None
            if d.get("first_call") is None
            else FirstCall.from_dict(d["first_call"]),
            output=d.get("output", ""),
            stats=None if d.get("stats") is None else SampleStats.from_dict(d["stats"]),
            roofline=None if d.get("roofline") is None else Roofline.from_dict(d["roofline"]),
            error=error,
            interrupted=bool(d.get("interrupted", False)),
            warmup_compiles=d.get("warmup_compiles"),
            sampling_compiles=d.get("sampling_compiles"),
            stopped_by_budget=bool(d.get("stopped_by_budget", False)),
            state_note=str(d.get("state_note", "")),
        )


@dataclass
class Comparison:
    """``variant / reference`` at one sweep point, from paired interleaved samples."""

    params: dict[str, Any]
    ratio: RatioStats

    def to_dict(self) -> dict[str, Any]:
        return {"params": dict(self.params), "ratio": self.ratio.to_dict()}

    @classmethod
    def from_dict(cls, d: dict[str, Any]) -> Comparison:
        return cls(params=_params_from_json(d["params"]), ratio=RatioStats.from_dict(d["ratio"]))


@dataclass
class BenchConfig:
    budget_s: float
    number: int | None
    repeat: int | None
    precision: float
    min_runs: int
    roofline: bool

    def to_dict(self) -> dict[str, Any]:
        return dict(self.__dict__)


@dataclass
class BenchProgress:
    """Where a running benchmark is: present only on the partial records of a run in progress.

    ``done`` is False while the run goes on; True on a record the run left behind when an
    exception stopped it before its result (the measurements are what it had so far).
    """

    phase: str  # "compile", "warmup", "sampling", "roofline", "error" (of a sweep point)
    message: str
    fraction: float  # 0..1 of the whole benchmark
    elapsed_s: float  # wall time since the start, compiles included
    point: int  # index of the sweep point being measured (0 without a sweep)
    points: int  # number of sweep points (1 without a sweep)
    samples: dict[str, int]  # samples so far per variant, all sweep points together
    done: bool = False

    def to_dict(self) -> dict[str, Any]:
        return {
            "phase": self.phase,
            "message": self.message,
            "fraction": min(1.0, max(0.0, float(self.fraction))),
            "elapsed_s": max(0.0, float(self.elapsed_s)),
            "point": self.point,
            "points": self.points,
            "samples": dict(self.samples),
            "done": self.done,
        }

    @classmethod
    def from_dict(cls, d: dict[str, Any]) -> BenchProgress:
        return cls(
            phase=d["phase"],
            message=d["message"],
            fraction=d["fraction"],
            elapsed_s=d["elapsed_s"],
            point=d["point"],
            points=d["points"],
            samples=dict(d["samples"]),
            done=bool(d.get("done", False)),
        )


@dataclass
class Benchmark:
    """A whole benchmark: variants × sweep points, comparisons, fits and the environment.

    ``progress`` is set only on the partial records a run shows while it goes on
    (:class:`BenchProgress`); a finished result has none.
    """

    label: str
    variants: list[str]
    sweep_param: str | None
    sweep_values: list[Any]
    measurements: list[Measurement]
    comparisons: list[Comparison]
    fits: list[PowerFit]
    env: Environment
    config: BenchConfig
    interrupted: bool = False
    wall_s: float = 0.0
    progress: BenchProgress | None = None

    # -- queries ---------------------------------------------------------------------
    def measurement(self, variant: str | None = None, **params: Any) -> Measurement:
        """The measurement of ``variant`` (default: the first) at sweep point ``params``."""
        variant = self.variants[0] if variant is None else variant
        want = {k: _untuple(v) for k, v in params.items()}
        for m in self.measurements:
            if m.variant == variant and all(
                k in m.params and _untuple(m.params[k]) == v for k, v in want.items()
            ):
                return m
        raise KeyError(f"no measurement for {variant!r} at {params or 'the only point'}")

    @property
    def median(self) -> float | None:
        """The first variant's median (seconds per call) at the first point: the headline."""
        return self.measurements[0].median if self.measurements else None

    @property
    def ok(self) -> bool:
        return any(m.ok for m in self.measurements)

    def compare_to(self, other: Benchmark, variant: str | None = None) -> RatioStats | None:
        """This result's ``variant`` over ``other``'s (e.g. today vs. a saved baseline).

        The two runs were not interleaved, so there are no pairs: the ratio is of the
        medians, and its bounds come from the two medians' 95% CIs conservatively
        (see :func:`~workbench.engine.bench.stats.ratio_of_medians`; no coverage is
        claimed, and drift between the runs is not in them).
        ``self.env.differences(other.env)`` says what changed in between.
        """
        a, b = self.measurement(variant), other.measurement(variant)
        if not (a.ok and b.ok):
            return None
        from workbench.engine.bench.stats import summarize

        sa = a.stats if a.stats is not None else summarize(a.samples)
        sb = b.stats if b.stats is not None else summarize(b.samples)
        return ratio_of_medians(sa, sb, a.label + " (this)", b.label + " (other)")

    # -- serialisation ---------------------------------------------------------------
    def to_dict(self) -> dict[str, Any]:
        out = {
            "version": SCHEMA_VERSION,
            "kind": "bench",
            "label": self.label,
            "variants": list(self.variants),
            "sweep_param": self.sweep_param,
            "sweep_values": list(self.sweep_values),
            "measurements": [m.to_dict() for m in self.measurements],
            "comparisons": [c.to_dict() for c in self.comparisons],
            "fits": [f.to_dict() for f in self.fits],
            "env": self.env.to_dict(),
            "config": self.config.to_dict(),
            "interrupted": self.interrupted,
            "wall_s": self.wall_s,
        }
        if self.progress is not None:
            out["progress"] = self.progress.to_dict()
        return out

    def to_json(self, indent: int | None = None) -> str:
        """Strict JSON (no ``NaN``): what Jupyter's own serialiser accepts as a MIME part."""
        return json.dumps(_json_safe(self.to_dict()), indent=indent, allow_nan=False)

    @classmethod
    def from_dict(cls, d: dict[str, Any]) -> Benchmark:
        if d.get("kind") != "bench":
            raise ValueError("not a jax-workbench benchmark record")
        if int(d.get("version", 0)) > SCHEMA_VERSION:
            raise ValueError(
                f"benchmark record version {d['version']} is newer than this "
                f"jax-workbench reads ({SCHEMA_VERSION}); upgrade jax-workbench"
            )
        return cls(
            label=d["label"],
            variants=list(d["variants"]),
            sweep_param=d.get("sweep_param"),
            sweep_values=[_untuple_back(v) for v in d.get("sweep_values", [])],
            measurements=[Measurement.from_dict(m) for m in d["measurements"]],
            comparisons=[Comparison.from_dict(c) for c in d.get("comparisons", [])],
            fits=[PowerFit.from_dict(f) for f in d.get("fits", [])],
            env=Environment.from_dict(d["env"]),
            config=BenchConfig(**d["config"]),
            interrupted=bool(d.get("interrupted", False)),
            wall_s=float(d.get("wall_s", 0.0)),
            progress=None if d.get("progress") is None else BenchProgress.from_dict(d["progress"]),
        )

    @classmethod
    def from_json(cls, text: str) -> Benchmark:
        return cls.from_dict(json.loads(text))

    def to_dataframe(self, samples: bool = False) -> Any:
        """One row per measurement (or, with ``samples=True``, per sample); needs pandas."""
        try:
            import pandas as pd
        except ImportError:
            raise ImportError(
                "to_dataframe() needs pandas (pip install pandas); "
                "to_json() and to_dict() work without it"
            ) from None
        rows: list[dict[str, Any]] = []
        for m in self.measurements:
            base = {"variant": m.variant, **m.params}
            if samples:
                rows.extend(
                    {
                        **base,
                        "run": i,
                        "seconds": s,
                        "number": m.number,
                        "outlier": bool(m.stats and i in m.stats.outliers),
                    }
                    for i, s in enumerate(m.samples)
                )
                continue
            st = m.stats
            fc = m.first_call
            rows.append(
                {
                    **base,
                    "median_s": st.median if st else None,
                    "min_s": st.min if st else None,
                    "mean_s": st.mean if st else None,
                    "std_s": st.std if st else None,
                    "iqr_s": st.iqr if st else None,
                    "ci_low_s": st.ci_low if st else None,
                    "ci_high_s": st.ci_high if st else None,
                    "runs": len(m.samples),
                    "number": m.number,
                    "first_call_s": fc.total_s if fc else None,
                    "compile_s": fc.compile_total_s if fc else None,
                    "flops_per_s": m.roofline.flops_per_s if m.roofline else None,
                    "bytes_per_s": m.roofline.bytes_per_s if m.roofline else None,
                    "error": None if m.error is None else f"{m.error.kind}: {m.error.summary}",
                    "interrupted": m.interrupted,
                }
            )
        return pd.DataFrame(rows)


def _json_safe(obj: Any) -> Any:
    """The record with every value JSON can hold as itself.

    Sweep values and params are the user's: NumPy scalars become Python numbers,
    tuples lists (read back as tuples), non-finite floats ``null`` (strict JSON has
    no NaN), and anything else (a dtype such as ``jnp.bfloat16``) its ``str``.
    """
    if isinstance(obj, dict):
        return {str(k): _json_safe(v) for k, v in obj.items()}
    if isinstance(obj, (list, tuple)):
        return [_json_safe(v) for v in obj]
    if obj is None or isinstance(obj, (bool, str, int)):
        return obj
    if isinstance(obj, float):
        return obj if math.isfinite(obj) else None
    if not isinstance(obj, type) and isinstance(getattr(obj, "shape", None), tuple):
        try:  # NumPy/JAX scalars and (small) arrays as numbers and lists
            return _json_safe(obj.item() if obj.shape == () else obj.tolist())
        except (AttributeError, TypeError, ValueError):
            pass
    dtype = obj if isinstance(obj, np.dtype) else getattr(obj, "dtype", None)
    if isinstance(dtype, np.dtype):  # jnp.bfloat16, np.float32, np.dtype("int8")
        return dtype.name
    return str(obj)


def _untuple(v: Any) -> Any:
    """Lists and tuples compared alike (a sweep value ``(8, 8)`` is ``[8, 8]`` in JSON)."""
    if isinstance(v, (list, tuple)):
        return tuple(_untuple(x) for x in v)
    return v


def _untuple_back(v: Any) -> Any:
    """JSON arrays in sweep values and params back to the tuples they were written from."""
    return _untuple(v) if isinstance(v, list) else v


def _params_from_json(d: dict[str, Any]) -> dict[str, Any]:
    return {k: _untuple_back(v) for k, v in d.items()}
