"""Roofline: achieved FLOP/s and bytes/s against the device's peak.

The work per call comes from XLA's own ``cost_analysis`` of the compiled program
(FLOPs and bytes accessed, per device for SPMD programs) where it gave real
figures, and from our own count of the optimized HLO
(:mod:`workbench.engine.hlo.costs`) where it did not: on GPUs XLA reports a
negative "not counted" placeholder for programs whose work is in cuBLAS/cuDNN
custom calls, exactly the programs where a roofline matters.  The record says
which source each figure came from.  The FLOP peak is the one of the dtype doing
most of the program's dot/convolution FLOPs in our count (a bf16 matmul with f32
arguments elsewhere is held against the bf16 peak); the arguments' dtype only
when nothing was counted.  The time is the benchmark's median.  Peaks come from a small table of vendor datasheet figures
(dense, no sparsity) matched on ``device.device_kind``; anything not in the table
is reported as "unknown peak" rather than guessed.  A user can pass their own
peak (``peaks=DevicePeak(...)`` or a dict) or register a device for the session.

Notes on the figures: for ``float32`` on NVIDIA Ampere and later the table gives
the TF32 tensor-core peak, because that is what XLA uses for ``float32`` matmuls
at JAX's default precision; on TPUs ``float32`` matmuls at default precision run
as single bf16 passes, so the bf16 figure applies.  Element-wise programs are
bound by memory bandwidth long before either peak matters.
"""

from __future__ import annotations

import math
import re
from collections.abc import Mapping
from dataclasses import asdict, dataclass, field
from typing import Any

import numpy as np

from workbench.engine.common.analysis import CostAnalysis
from workbench.engine.hlo.costs import ProgramCost

T = 1e12


@dataclass(slots=True)
class DevicePeak:
    """Peak throughput of one device: FLOP/s by dtype and memory bytes/s."""

    name: str
    flops: dict[str, float] = field(default_factory=dict)  # dtype name -> FLOP/s
    bytes_per_s: float | None = None
    source: str = "table"

    def flops_for(self, dtype: str) -> float | None:
        # every 8-bit float format runs at the part's FP8 rate ("float8"), else (no FP8
        # units: XLA upcasts) at the 16-bit one
        family = "float8" if dtype.startswith("float8") else ""
        for key in (dtype, family, _FALLBACK_DTYPE.get(family or dtype, "")):
            if key in self.flops:
                return self.flops[key]
        return None

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)


_FALLBACK_DTYPE = {"float16": "bfloat16", "bfloat16": "float16", "float8": "bfloat16"}


def _gpu(
    name: str, f64: float, f32: float, bf16: float, tb_per_s: float, fp8: float | None = None
) -> DevicePeak:
    table = {"float64": f64 * T, "float32": f32 * T, "bfloat16": bf16 * T, "float16": bf16 * T}
    if fp8 is not None:  # Hopper/Ada tensor cores: twice the 16-bit rate
        table["float8"] = fp8 * T
    return DevicePeak(name, table, tb_per_s * T)


def _tpu(name: str, bf16: float, tb_per_s: float) -> DevicePeak:
    return DevicePeak(name, {"bfloat16": bf16 * T, "float32": bf16 * T}, tb_per_s * T)


#: (regex on device_kind, peak).  First match wins; datasheet figures, dense.  The
#: patterns are anchored on the names the drivers report ("NVIDIA H100 80GB HBM3" is
#: the SXM part, "NVIDIA A100 80GB PCIe" and "NVIDIA A100-PCIE-40GB" the PCIe ones):
#: a part whose figures differ and are not listed (H100 NVL, H200 NVL, GH200, TPU v4
#: lite, a bare "A100") falls through to "unknown peak" rather than borrowing a
#: sibling's numbers.
KNOWN_PEAKS: list[tuple[str, DevicePeak]] = [
    (r"(?i)^NVIDIA H100 PCIe$", _gpu("NVIDIA H100 PCIe", 25.6, 378, 756, 2.0, 1513)),
    (
        r"(?i)^NVIDIA H100 80GB HBM3$|^NVIDIA H100[ -]SXM",
        _gpu("NVIDIA H100 SXM", 34, 494.5, 989.5, 3.35, 1979),
    ),
    (r"(?i)^NVIDIA H200$|^NVIDIA H200[ -]SXM", _gpu("NVIDIA H200", 34, 494.5, 989.5, 4.8, 1979)),
    (r"(?i)^NVIDIA A100\b.*\b40GB\b", _gpu("NVIDIA A100 40GB", 9.7, 156, 312, 1.555)),
    (
        r"(?i)^NVIDIA A100\b(?=.*\b80GB\b).*\bPCIe\b",
        _gpu("NVIDIA A100 PCIe 80GB", 9.7, 156, 312, 1.935),
    ),
    (
        r"(?i)^NVIDIA A100\b(?=.*\b80GB\b).*\bSXM",
        _gpu("NVIDIA A100 SXM 80GB", 9.7, 156, 312, 2.039),
    ),
    (
        r"(?i)^Tesla V100-SXM2\b",
        DevicePeak(
            "NVIDIA V100 SXM2",
            {"float64": 7.8 * T, "float32": 15.7 * T, "float16": 125 * T},
            0.9 * T,
        ),
    ),
    (
        r"(?i)^Tesla V100-PCIE\b",
        DevicePeak(
            "NVIDIA V100 PCIe", {"float64": 7 * T, "float32": 14 * T, "float16": 112 * T}, 0.9 * T
        ),
    ),
    (r"^NVIDIA L4$", _gpu("NVIDIA L4", 0.49, 60, 121, 0.3, 242.5)),
    (
        r"^(Tesla|NVIDIA) T4$",
        DevicePeak("NVIDIA T4", {"float32": 8.1 * T, "float16": 65 * T}, 0.32 * T),
    ),
    (r"^TPU v4$", _tpu("TPU v4", 275, 1.2)),
    (r"^TPU v5 lite$|^TPU v5e$", _tpu("TPU v5e", 197, 0.819)),
    (r"^TPU v5p$|^TPU v5$", _tpu("TPU v5p", 459, 2.765)),
    (r"^TPU v6 lite$|^TPU v6e$|Trillium", _tpu("TPU v6e", 918, 1.64)),
]

_registered: list[tuple[str, DevicePeak]] = []


def register_peak(pattern: str, peak: DevicePeak) -> None:
    """Add (or override) a device for this session; ``pattern`` is a regex on device_kind."""
    re.compile(pattern)  # fail early on a bad pattern
    _registered.insert(0, (pattern, peak))


def peak_for(device_kind: str) -> DevicePeak | None:
    """The peak for a ``device_kind`` string, registered entries first; None if unknown."""
    for pattern, peak in _registered + KNOWN_PEAKS:
        if re.search(pattern, device_kind):
            return peak
    return None


_PEAKS_USAGE = (
    "peaks= takes a DevicePeak or a dict such as {'flops': 1e14, "
    "'bytes_per_s': 2e12} (flops may be {'float32': 1e14, 'bfloat16': 4e14})"
)


def _positive(value: Any, what: str) -> float:
    from workbench.engine.bench.sampler import BenchInputError

    if (
        isinstance(value, bool)
        or not isinstance(value, (int, float, np.number))
        or not math.isfinite(float(value))
        or float(value) <= 0
    ):
        raise BenchInputError(f"{what} must be a positive number, got {value!r}; " + _PEAKS_USAGE)
    return float(value)


def as_peak(value: DevicePeak | Mapping[str, Any] | None) -> DevicePeak | None:
    """A user's override: a :class:`DevicePeak` or ``{"flops": ..., "bytes_per_s": ...}``.

    Checked before anything runs (:class:`BenchInputError`), so a typo in ``peaks=``
    is one short message rather than a failure after the samples are taken.
    """
    from workbench.engine.bench.sampler import BenchInputError

    if value is None or isinstance(value, DevicePeak):
        return value
    if not isinstance(value, Mapping):
        raise BenchInputError(f"{_PEAKS_USAGE}; got a {type(value).__name__}")
    unknown = sorted(set(map(str, value)) - {"name", "flops", "bytes_per_s"})
    if unknown:
        raise BenchInputError(f"unknown key {unknown[0]!r} in peaks=; {_PEAKS_USAGE}")
    flops = value.get("flops")
    if flops is None:
        table: dict[str, float] = {}
    elif isinstance(flops, Mapping):
        table = {str(k): _positive(v, f"peaks['flops'][{k!r}]") for k, v in flops.items()}
    else:
        table = {"*": _positive(flops, "peaks['flops']")}
    bw = value.get("bytes_per_s")
    return DevicePeak(
        str(value.get("name", "user-supplied")),
        table,
        None if bw is None else _positive(bw, "peaks['bytes_per_s']"),
        "override",
    )


@dataclass(slots=True)
class Roofline:
    """Achieved throughput of one benchmarked call against its device's peak."""

    device_kind: str
    dtype: str
    seconds: float
    flops: float | None
    bytes_accessed: float | None
    flops_per_s: float | None
    bytes_per_s: float | None
    intensity: float | None  # FLOPs per byte
    peak_name: str | None
    peak_source: str  # "table", "override", "registered" or "unknown"
    peak_flops_per_s: float | None
    peak_bytes_per_s: float | None
    flops_fraction: float | None
    bytes_fraction: float | None
    bound: str | None  # "memory" or "compute" by the ridge point, when both peaks are known
    note: str = ""
    #: where ``flops`` / ``bytes_accessed`` came from: "xla" (its cost analysis),
    #: "counted" (ours, from the optimized HLO) or "unknown" (neither had a figure)
    flops_source: str = "xla"
    bytes_source: str = "xla"

    @property
    def source_text(self) -> str:
        """The figures' origin in words, for the views."""
        return counts_source_text(self.flops_source, self.bytes_source)

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)

    @classmethod
    def from_dict(cls, d: dict[str, Any]) -> Roofline:
        return cls(**d)


def counts_source_text(flops_source: str, bytes_source: str) -> str:
    """ "XLA's cost analysis", "our count of the optimized HLO", or both by figure."""
    words = {"xla": "XLA's cost analysis", "counted": "our count of the optimized HLO"}
    if flops_source == bytes_source:
        return words.get(flops_source, "")
    parts = [
        f"{what} from {words[src]}"
        for what, src in (("FLOPs", flops_source), ("bytes", bytes_source))
        if src in words
    ]
    return ", ".join(parts)


def _ratio(a: float | None, b: float | None) -> float | None:
    return None if a is None or not b else a / b


def _positive_or_none(v: float | None) -> float | None:
    return v if v is not None and v > 0 else None


def roofline(
    cost: CostAnalysis,
    seconds: float,
    device_kind: str,
    dtype: str,
    override: DevicePeak | None = None,
    reason: str = "",
    counts: ProgramCost | None = None,
) -> Roofline:
    """Throughput from the program's FLOPs and bytes and a median time; peaks from table
    or override.

    ``counts`` (:func:`workbench.engine.hlo.costs.program_cost` of the compiled module
    with ``cost``) supplies our figures where XLA gave none or a sentinel, and the
    dtype whose peak applies; without it only XLA's figures and ``dtype`` are used.
    ``reason`` explains an empty ``cost`` (e.g. an eager function) instead of the
    generic "XLA reported no cost analysis".
    """
    peak = override
    source = "override" if override is not None else "unknown"
    if peak is None:
        for pattern, p in _registered:
            if re.search(pattern, device_kind):
                peak, source = p, "registered"
                break
    if peak is None:
        peak = peak_for(device_kind)
        source = "table" if peak is not None else "unknown"
    flops = _positive_or_none(cost.flops)
    nbytes = _positive_or_none(cost.bytes_accessed)
    fsrc = "xla" if flops is not None else "unknown"
    bsrc = "xla" if nbytes is not None else "unknown"
    notes: list[str] = []
    if counts is not None and not reason:
        flops = _positive_or_none(counts.flops)
        nbytes = _positive_or_none(counts.bytes)
        fsrc = counts.flops_source if flops is not None else "unknown"
        bsrc = counts.bytes_source if nbytes is not None else "unknown"
        if counts.dtype and counts.dtype.startswith(("float", "bfloat")):
            dtype = counts.dtype
        if "counted" in (fsrc, bsrc):
            notes.extend(counts.notes)
    elif cost.notes and not reason:
        notes.extend(cost.notes)
    fps = _ratio(flops, seconds)
    bps = _ratio(nbytes, seconds)
    peak_f = None
    if peak is not None:
        peak_f = peak.flops.get("*") or peak.flops_for(dtype)
    peak_b = peak.bytes_per_s if peak is not None else None
    intensity = _ratio(flops, nbytes)
    bound = None
    if intensity is not None and peak_f and peak_b:
        bound = "compute" if intensity >= peak_f / peak_b else "memory"
    if reason:
        notes.insert(0, reason)
    elif not cost.reported and "counted" not in (fsrc, bsrc):
        notes.append("XLA reported no cost analysis for this program")
    if reason or (fps is None and bps is None):
        pass  # nothing to hold against a peak
    elif peak is None:
        notes.append(f"unknown peak for {device_kind!r}; pass peaks= to compare")
    elif peak_f is None:
        notes.append(f"no {dtype} FLOP/s peak listed for {peak.name}")
    return Roofline(
        device_kind=device_kind,
        dtype=dtype,
        seconds=seconds,
        flops=flops,
        bytes_accessed=nbytes,
        flops_per_s=fps,
        bytes_per_s=bps,
        intensity=intensity,
        peak_name=None if peak is None else peak.name,
        peak_source=source,
        peak_flops_per_s=peak_f,
        peak_bytes_per_s=peak_b,
        flops_fraction=_ratio(fps, peak_f),
        bytes_fraction=_ratio(bps, peak_b),
        bound=bound,
        note="; ".join(dict.fromkeys(notes)),
        flops_source=fsrc,
        bytes_source=bsrc,
    )
