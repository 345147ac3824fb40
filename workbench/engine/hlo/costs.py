"""Our own FLOP and byte counts, read from the optimized HLO.

Why count ourselves: ``Compiled.cost_analysis()`` is XLA's figure, and on GPUs it
is often missing exactly where a roofline matters: cuBLAS/cuDNN custom calls are
not costed (an 8192² bf16 matmul on an H100 reports ``flops: -1``), and a while
loop's body is counted once whatever its trip count.  The optimized module has
everything needed: shapes, dot dimension numbers, convolution windows, the
custom call's target and its ``backend_config``.

The rules follow XLA's ``HloCostAnalysis`` so the two agree where XLA counts
(the tests hold us within 5% of it on CPU):

- dot: 2 × output elements × contracted size (an FMA is two FLOPs);
- convolution: 2 × (input features / feature groups) × output features ×
  (batch / batch groups) × the number of (output, kernel) position pairs that
  land on the input, per spatial dimension — with no padding that is output
  elements × kernel size × input features per group; padded positions are not
  counted, like XLA;
- element-wise: one FLOP per output element; exp/log/tanh/pow/sqrt/rsqrt/sin/...
  count as transcendentals instead (XLA keeps them apart);
- reduce: (input elements − output elements) × the reducer's FLOPs;
  reduce-window: output elements × (window size − 1) × the reducer's; scatter:
  update elements × the combiner's; map: output elements × the mapped function's;
  sort: n·⌈log₂ n⌉;
- fusions: the sum over the fused computation; while: body + condition per trip,
  times ``known_trip_count`` when XLA recorded it (XLA itself counts one trip);
  conditional: the most expensive branch; call: the callee;
- custom calls by target: cuBLAS (``__cublas$gemm``, ``__cublas$lt$matmul``...)
  from the dot dimension numbers in ``backend_config``; cuDNN convolutions
  (``__cudnn$conv...``) from their window and ``dim_labels``, which describe the
  forward convolution whichever direction the call computes; oneDNN matmuls on
  CPU; LAPACK / cuSOLVER factorizations and triangular solves (XLA's rule for the
  HLO op they implement, textbook counts for LU and QR: XLA itself reports -1 for
  a program with one, on CPU too); layout/sharding markers are free; anything else
  is *unknown* (None), never a guess.

Bytes are operand bytes + result bytes of each instruction as it runs (a
fusion's parameters and outputs, not its internals; a cuBLAS/cuDNN call's
scratch workspace excluded); a while loop's are its body's per trip.  Where
an instruction touches only part of a buffer we count the part, as XLA does:
a slice, dynamic-slice or gather reads what it returns, an in-place
dynamic-update-slice writes its update, a fusion parameter is read as its
users inside read it.  Without this a ``lax.scan`` would be charged its whole
stacked inputs and outputs on every trip.  Asynchronous pairs (``async-start``
/ ``-done``, ``all-gather-start`` / ``-done``...) are counted once, at the start.

The dtype that sets the FLOP peak is a dot's or convolution's operand dtype
(bf16 × bf16 → f32 runs at the bf16 rate); for element-wise work, the result's.
"""

from __future__ import annotations

import math
import re
from dataclasses import dataclass, field
from typing import Any

from workbench.engine.common.analysis import CostAnalysis
from workbench.engine.hlo.model import (
    HloComputation,
    HloInstruction,
    HloModule,
    WindowDim,
)
from workbench.engine.hlo.shapes import ArrayShape

#: element-wise opcodes XLA counts as transcendentals rather than FLOPs
TRANSCENDENTAL_OPS = frozenset(
    {
        "exponential",
        "exponential-minus-one",
        "log",
        "log-plus-one",
        "logistic",
        "power",
        "sqrt",
        "cbrt",
        "rsqrt",
        "tanh",
        "sine",
        "cosine",
        "tan",
        "atan2",
        "erf",
    }
)

#: element-wise opcodes that cost one FLOP per output element
ELEMENTWISE_OPS = frozenset(
    {
        "add",
        "subtract",
        "multiply",
        "divide",
        "remainder",
        "maximum",
        "minimum",
        "negate",
        "abs",
        "sign",
        "floor",
        "ceil",
        "round-nearest-afz",
        "round-nearest-even",
        "compare",
        "convert",
        "clamp",
        "select",
        "is-finite",
        "popcnt",
        "count-leading-zeros",
        "shift-left",
        "shift-right-logical",
        "shift-right-arithmetic",
        "and",
        "or",
        "xor",
        "not",
        "real",
        "imag",
        "complex",
        "stochastic-convert",
        "reduce-precision",
    }
)

#: opcodes whose result dtype is not the one they compute in
_OPERAND_DTYPE_OPS = frozenset({"compare", "convert", "is-finite", "stochastic-convert"})

#: instructions that move no data of their own (aliases, pointer tables, loop plumbing)
_FREE_BYTES = frozenset(
    {
        "parameter",
        "constant",
        "get-tuple-element",
        "tuple",
        "bitcast",
        "after-all",
        "partition-id",
        "replica-id",
        "while",
        "conditional",
        "call",
        "add-dependency",
        "opt-barrier",
        "optimization-barrier",
        "domain",
        "async-start",
        "async-update",
        "async-done",
        "all-reduce-done",
        "all-gather-done",
        "collective-permute-done",
        "copy-done",
        "send-done",
        "recv-done",
    }
)

#: asynchronous starts whose result tuple carries their operands again beside the
#: output (and u32/s32 scalar contexts): the operands are read once, not twice
_START_WITH_OPERANDS = frozenset({"all-gather-start", "collective-permute-start", "copy-start"})

#: custom-call targets that mark layouts, shardings or placements: no work
_FREE_TARGETS = frozenset(
    {
        "Sharding",
        "SPMDFullToShardShape",
        "SPMDShardToFullShape",
        "LayoutConstraint",
        "MoveToHost",
        "MoveToDevice",
        "AllocateBuffer",
        "annotate_device_placement",
        "X64Combine",
        "X64SplitLow",
        "X64SplitHigh",
        "Cast",
        "ShardBarrierFrom",
        "ShardBarrierTo",
        "xla.sdy.FuncResultSharding",
        "local_sharding_constraint",
    }
)

SOURCES = ("xla", "counted", "unknown")

#: dense linear-algebra library calls we count: LAPACK on CPU (``lapack_spotrf_ffi``),
#: cuSOLVER / hipSOLVER (``cusolver_getrf_ffi``), cuBLAS's triangular solve
_SOLVER_RE = re.compile(
    r"^(?:lapack_[sdcz]|blas_[sdcz]|cusolver_|hipsolver_|__cublas\$)"
    r"(trsm|triangularSolve|potrf|getrf|geqrf)(?:_ffi)?$"
)


@dataclass(frozen=True, slots=True)
class OpCost:
    """FLOPs and bytes of one instruction as it runs (a fusion: its whole body)."""

    flops: float | None  # None = unknown (never a negative sentinel)
    bytes: float | None  # bytes read + written by the instruction (operands + result)
    dtype: str | None  # the dtype that sets the FLOP peak (a dot's operand dtype), numpy name
    source: str  # "xla" (XLA's own per-op figure) | "counted" (ours) | "unknown"
    transcendentals: float | None = None
    #: what the figure leaves out or assumes (an uncounted custom call inside, a while
    #: loop whose trip count is unknown), "" when nothing
    note: str = ""

    def to_dict(self) -> dict[str, Any]:
        return {
            "flops": self.flops,
            "bytes": self.bytes,
            "dtype": self.dtype,
            "source": self.source,
            "transcendentals": self.transcendentals,
            "note": self.note,
        }


@dataclass(frozen=True, slots=True)
class ProgramCost:
    """A program's totals: XLA's figure where it gave a real one, ours otherwise.

    ``flops_source`` / ``bytes_source`` say which ("xla", "counted" or "unknown");
    the ``counted_*`` fields are always ours, so a view can show both.
    """

    flops: float | None
    bytes: float | None
    transcendentals: float | None
    flops_source: str
    bytes_source: str
    #: the dtype doing most of the counted FLOPs: which peak FLOP/s applies
    dtype: str | None
    counted_flops: float
    counted_bytes: float
    counted_transcendentals: float
    flops_by_dtype: dict[str, float] = field(default_factory=dict)
    #: names of instructions whose FLOPs we could not count (unknown custom calls)
    uncounted: tuple[str, ...] = ()
    notes: tuple[str, ...] = ()

    @property
    def source(self) -> str:
        """One word for a label: "xla", "counted", "mixed" or "unknown"."""
        pair = {self.flops_source, self.bytes_source}
        return pair.pop() if len(pair) == 1 else "mixed"

    def to_dict(self) -> dict[str, Any]:
        return {
            "flops": self.flops,
            "bytes": self.bytes,
            "transcendentals": self.transcendentals,
            "flops_source": self.flops_source,
            "bytes_source": self.bytes_source,
            "dtype": self.dtype,
            "counted_flops": self.counted_flops,
            "counted_bytes": self.counted_bytes,
            "counted_transcendentals": self.counted_transcendentals,
            "flops_by_dtype": dict(self.flops_by_dtype),
            "uncounted": list(self.uncounted),
            "notes": list(self.notes),
        }


# -- dtypes ---------------------------------------------------------------------------
_DTYPE_NAMES = {
    "pred": "bool",
    "f16": "float16",
    "bf16": "bfloat16",
    "f32": "float32",
    "f64": "float64",
    "c64": "complex64",
    "c128": "complex128",
    "tf32": "float32",
}


def numpy_dtype(hlo_dtype: str) -> str:
    """HLO's element type name as numpy/JAX spells it (``bf16`` -> ``bfloat16``)."""
    if hlo_dtype in _DTYPE_NAMES:
        return _DTYPE_NAMES[hlo_dtype]
    if hlo_dtype[:1] in "su" and hlo_dtype[1:].isdigit():
        return ("int" if hlo_dtype[0] == "s" else "uint") + hlo_dtype[1:]
    if hlo_dtype.startswith("f8"):
        return "float8_" + hlo_dtype[2:]
    if hlo_dtype.startswith("f4"):
        return "float4_" + hlo_dtype[2:]
    return hlo_dtype


# -- the tally of one instruction or computation ----------------------------------------
@dataclass(slots=True)
class _Tally:
    flops: float = 0.0
    transcendentals: float = 0.0
    bytes: float = 0.0
    by_dtype: dict[str, float] = field(default_factory=dict)
    #: the dot/convolution part of ``by_dtype``: matrix units set the peak when present
    matmul_by_dtype: dict[str, float] = field(default_factory=dict)
    #: (instruction name, why) for work we could not count
    unknown: list[tuple[str, str]] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)
    #: while loops whose trip count XLA knew (and multiplied here), for ProgramCost's note
    known_trips: int = 0
    #: custom calls that run (XLA's cost analysis leaves each out): their names
    custom_calls: list[str] = field(default_factory=list)

    def add_flops(self, n: float, dtype: str | None, matmul: bool = False) -> None:
        if n:
            self.flops += n
            key = dtype or "unknown"
            self.by_dtype[key] = self.by_dtype.get(key, 0.0) + n
            if matmul:
                self.matmul_by_dtype[key] = self.matmul_by_dtype.get(key, 0.0) + n

    def add(self, other: _Tally, times: float = 1.0) -> None:
        self.flops += other.flops * times
        self.transcendentals += other.transcendentals * times
        self.bytes += other.bytes * times
        for k, v in other.by_dtype.items():
            self.by_dtype[k] = self.by_dtype.get(k, 0.0) + v * times
        for k, v in other.matmul_by_dtype.items():
            self.matmul_by_dtype[k] = self.matmul_by_dtype.get(k, 0.0) + v * times
        self.unknown.extend(x for x in other.unknown if x not in self.unknown)
        self.notes.extend(n for n in other.notes if n not in self.notes)
        self.known_trips += other.known_trips
        self.custom_calls.extend(c for c in other.custom_calls if c not in self.custom_calls)

    def without_bytes(self) -> _Tally:
        """The work of a body run inside its caller: its internal traffic is not memory
        traffic (a fusion's bytes are its own parameters and outputs)."""
        out = self.scaled(1.0)
        out.bytes = 0.0
        return out

    def scaled(self, times: float) -> _Tally:
        out = _Tally()
        out.add(self, times)
        return out

    @property
    def dtype(self) -> str | None:
        """The dtype whose peak applies: the one doing most dot/convolution FLOPs when
        there are any (matrix units set the peak), else the one doing most floating
        FLOPs, else the one doing most FLOPs of any kind."""
        for table in (
            self.matmul_by_dtype,
            {
                k: v
                for k, v in self.by_dtype.items()
                if k.startswith(("float", "bfloat", "complex"))
            },
            self.by_dtype,
        ):
            real = {k: v for k, v in table.items() if k != "unknown" and v}
            if real:
                return max(real, key=real.__getitem__)
        return None


def _elements(shape: ArrayShape) -> int:
    return math.prod(shape.dims)


def _first(shapes: list[ArrayShape]) -> ArrayShape | None:
    return shapes[0] if shapes else None


def _unquote(text: str) -> str:
    return text[1:-1] if len(text) >= 2 and text[0] == text[-1] == '"' else text


class _Counter:
    """Counts a module's computations once each (fused bodies are shared by name)."""

    def __init__(self, module: HloModule) -> None:
        self.module = module
        self.comps = module.by_name
        self._memo: dict[str, _Tally] = {}
        self._busy: set[str] = set()
        #: parsed shapes by instruction identity: the model re-reads shape text on each ask
        self._shapes: dict[int, list[ArrayShape]] = {}
        #: users of each instruction by computation, built when a fusion's bytes are asked
        self._user_maps: dict[str, dict[str, list[HloInstruction]]] = {}

    # -- helpers ---------------------------------------------------------------------
    def shape(self, ins: HloInstruction) -> list[ArrayShape]:
        key = id(ins)
        got = self._shapes.get(key)
        if got is None:
            got = self._shapes[key] = ins.shape
        return got

    def operand_shapes(self, ins: HloInstruction, comp: HloComputation) -> list[list[ArrayShape]]:
        out = []
        for name in ins.operands:
            op = comp.by_name.get(name)
            out.append(self.shape(op) if op is not None else [])
        return out

    def computation(self, name: str) -> _Tally:
        """The cost of running a computation once (memoised; recursion guarded)."""
        if name in self._memo:
            return self._memo[name]
        comp = self.comps.get(name)
        total = _Tally()
        if comp is None or name in self._busy:
            if comp is None:
                total.unknown.append((name, "computation not found in the module"))
            return total
        self._busy.add(name)
        try:
            for ins in comp.instructions:
                total.add(self.instruction(ins, comp))
        finally:
            self._busy.discard(name)
        self._memo[name] = total
        return total

    def _called(self, ins: HloInstruction, key: str) -> list[str]:
        value = ins.attrs.get(key, "")
        names = [n.lstrip("%") for n in value.strip("{} ").replace(",", " ").split()]
        return [n for n in names if n in self.comps]

    # -- one instruction -------------------------------------------------------------
    def instruction(self, ins: HloInstruction, comp: HloComputation) -> _Tally:
        t = _Tally()
        op = ins.opcode
        out = self.shape(ins)
        res = _first(out)
        operands = self.operand_shapes(ins, comp)
        # traffic inside a fused body or a reducer is not memory traffic: skip its sum
        if op not in _FREE_BYTES and comp.role not in ("fused", "applied"):
            t.bytes = float(self._bytes(ins, out, operands))
        if op in ELEMENTWISE_OPS or op in TRANSCENDENTAL_OPS:
            n = sum(_elements(s) for s in out)
            src = operands[0][0] if op in _OPERAND_DTYPE_OPS and operands and operands[0] else res
            dtype = numpy_dtype(src.dtype) if src is not None else None
            if op in TRANSCENDENTAL_OPS:
                t.transcendentals += n
            else:
                t.add_flops(n, dtype)
        elif op == "dot":
            self._dot(ins, operands, res, t)
        elif op == "convolution":
            self._conv(
                ins,
                _first(operands[0]) if operands else None,
                _first(operands[1]) if len(operands) > 1 else None,
                res,
                t,
            )
        elif op == "fusion":
            for name in ins.called or self._called(ins, "calls"):
                t.add(self.computation(name).without_bytes())
        elif op in (
            "reduce",
            "reduce-window",
            "map",
            "scatter",
            "select-and-scatter",
            "sort",
            "all-reduce",
            "all-reduce-start",
            "reduce-scatter",
        ):
            self._applied(ins, operands, out, t)
        elif op == "while":
            self._while(ins, t)
        elif op == "conditional":
            branches = [self.computation(n) for n in ins.called]
            if branches:
                worst = max(branches, key=lambda b: b.flops + b.transcendentals)
                t.add(worst)
                if len(branches) > 1:
                    t.notes.append(
                        f"{ins.name}: a conditional; its most expensive branch is counted"
                    )
        elif op in ("call", "async-start", "copy-start"):
            for name in ins.called:
                t.add(self.computation(name))
        elif op == "custom-call":
            t.custom_calls.append(ins.name)
            self._custom_call(ins, operands, out, t)
        elif op in ("rng", "rng-bit-generator"):
            t.transcendentals += sum(_elements(s) for s in out)  # XLA's convention
        elif op == "fft":
            src = _first(operands[0]) if operands else None
            logs = math.prod(max(1, int(math.log2(n))) for n in ins.int_list("fft_length") if n > 0)
            if src is not None:
                t.add_flops(2 * 4 * logs * _elements(src), numpy_dtype(src.dtype))
        elif op == "triangular-solve" and len(operands) > 1 and operands[0] and operands[1]:
            a, b = operands[0][0], operands[1][0]
            t.add_flops(2 * (a.dims[-1] if a.dims else 1) * _elements(b), numpy_dtype(a.dtype))
        elif op == "cholesky" and operands and operands[0]:
            a = operands[0][0]
            t.add_flops((a.dims[-1] if a.dims else 1) * _elements(a) // 3, numpy_dtype(a.dtype))
        return t

    def _bytes(
        self, ins: HloInstruction, result: list[ArrayShape], operands: list[list[ArrayShape]]
    ) -> int:
        op = ins.opcode
        if (
            op == "custom-call"
            and _is_library_call(ins)
            and len(result) > 1
            and result[-1].dtype in ("s8", "u8")
            and len(result[-1].dims) == 1
        ):
            result = result[:-1]  # cuBLAS/cuDNN scratch workspace: allocated, not traffic
        # XLA's rules for ops that touch part of an operand: a slice reads what it
        # returns, an in-place dynamic-update-slice writes only its update (the scan's
        # stacked inputs and outputs: counting whole buffers per trip overcounts by the
        # trip count)
        if op in ("slice", "dynamic-slice", "gather"):
            out_bytes = sum(s.bytes for s in result)
            return 2 * out_bytes + sum(s.bytes for shp in operands[1:] for s in shp)
        if op == "dynamic-update-slice" and len(operands) > 1:
            return 2 * sum(s.bytes for s in operands[1]) + sum(
                s.bytes for shp in operands[2:] for s in shp
            )
        if op in _START_WITH_OPERANDS:
            result = list(result)
            for shp in operands:
                for s in shp:
                    if s in result:
                        result.remove(s)
            result = [s for s in result if s.dims or s.dtype not in ("u32", "s32")]
        if op == "fusion":
            body = self._fused_body(ins)
            if body is not None:
                return self._fusion_bytes(ins, body, result, operands)
        return sum(s.bytes for s in result) + sum(s.bytes for shp in operands for s in shp)

    def _fused_body(self, ins: HloInstruction) -> HloComputation | None:
        names = ins.called or self._called(ins, "calls")
        return self.comps.get(names[0]) if names else None

    def _users(self, comp: HloComputation) -> dict[str, list[HloInstruction]]:
        got = self._user_maps.get(comp.name)
        if got is None:
            got = {}
            for i in comp.instructions:
                for o in dict.fromkeys(i.operands):
                    got.setdefault(o, []).append(i)
            self._user_maps[comp.name] = got
        return got

    def _fusion_bytes(
        self,
        ins: HloInstruction,
        body: HloComputation,
        result: list[ArrayShape],
        operands: list[list[ArrayShape]],
    ) -> int:
        """A fusion's memory traffic the way XLA's ``HloCostAnalysis::HandleFusion``
        counts it: each output (only the update of an output computed by a
        dynamic-update-slice, which writes in place), each parameter by what its users
        inside read (a slice of it: the slice), and large constants."""
        root = body.root
        roots: list[HloInstruction | None]
        if root is not None and root.opcode == "tuple" and len(root.operands) == len(result):
            roots = [body.by_name.get(o) for o in root.operands]
        else:
            roots = [root] * len(result) if len(result) == 1 else [None] * len(result)
        total = 0
        for shape, r in zip(result, roots, strict=True):
            if (
                r is not None
                and r.opcode == "dynamic-update-slice"
                and len(r.operands) > 1
                and r.operands[1] in body.by_name
            ):
                total += sum(s.bytes for s in self.shape(body.by_name[r.operands[1]]))
            else:
                total += shape.bytes
        params = {}
        for p in body.instructions:
            if p.opcode == "parameter":
                try:
                    params[int(p.literal)] = p
                except (TypeError, ValueError):
                    pass
            elif p.opcode == "constant":
                shp = self.shape(p)
                if sum(_elements(s) for s in shp) > 1:
                    total += sum(s.bytes for s in shp)
        for i, shp in enumerate(operands):
            param = params.get(i)
            if param is None or len(self.shape(param)) != 1:
                total += sum(s.bytes for s in shp)  # a tuple parameter: read whole
            else:
                total += self._param_read_bytes(param, body)
        return total

    def _param_read_bytes(self, param: HloInstruction, body: HloComputation) -> int:
        """XLA's ``FusionParameterReadBytes``: a slice or dynamic-slice of the parameter
        reads its result's bytes, a dynamic-update-slice into it reads nothing (aliased
        to the output), broadcasts and reshapes read it each, any other users share one
        read of the whole."""
        size = 0
        whole = sum(s.bytes for s in self.shape(param))
        shared = False
        for user in self._users(body).get(param.name, []):
            op = user.opcode
            if op == "slice" or (op == "dynamic-slice" and user.operands[0] == param.name):
                size += sum(s.bytes for s in self.shape(user))
            elif op == "dynamic-update-slice" and user.operands[0] == param.name:
                continue
            elif op == "fusion":
                nested = self._fused_body(user)
                nested_params = (
                    {}
                    if nested is None
                    else {
                        int(p.literal): p
                        for p in nested.instructions
                        if p.opcode == "parameter" and (p.literal or "").isdigit()
                    }
                )
                for idx, name in enumerate(user.operands):
                    if name == param.name:
                        inner = nested_params.get(idx)
                        size += (
                            whole
                            if inner is None or nested is None
                            else self._param_read_bytes(inner, nested)
                        )
            elif op in ("broadcast", "reshape"):
                size += whole
            elif not shared:
                shared = True
                size += whole
        return size

    def _dot(
        self,
        ins: HloInstruction,
        operands: list[list[ArrayShape]],
        res: ArrayShape | None,
        t: _Tally,
    ) -> None:
        lhs = _first(operands[0]) if operands else None
        if lhs is None or res is None:
            t.unknown.append((ins.name, "dot operand shapes unknown"))
            return
        k = math.prod(
            lhs.dims[d] for d in ins.int_list("lhs_contracting_dims") if d < len(lhs.dims)
        )
        t.add_flops(2.0 * _elements(res) * k, numpy_dtype(lhs.dtype), matmul=True)

    def _conv(
        self,
        ins: HloInstruction,
        lhs: ArrayShape | None,
        rhs: ArrayShape | None,
        out: ArrayShape | None,
        t: _Tally,
        window: list[WindowDim] | None = None,
    ) -> None:
        labels = _dim_labels(ins.attrs.get("dim_labels", ""))
        if lhs is None or rhs is None or out is None or labels is None:
            t.unknown.append((ins.name, "convolution shapes or dim_labels unreadable"))
            return
        flops = conv_flops(
            lhs,
            rhs,
            out,
            labels,
            ins.window if window is None else window,
            _int_attr(ins, "feature_group_count"),
            _int_attr(ins, "batch_group_count"),
        )
        if flops is None:
            t.unknown.append((ins.name, "convolution dimensions do not match its shapes"))
            return
        t.add_flops(flops, numpy_dtype(lhs.dtype), matmul=True)

    def _applied(
        self,
        ins: HloInstruction,
        operands: list[list[ArrayShape]],
        out: list[ArrayShape],
        t: _Tally,
    ) -> None:
        op = ins.opcode
        if op == "sort":
            src = _first(operands[0]) if operands else None
            if src is not None:
                n = _elements(src)
                t.add_flops(
                    n * max(0, math.ceil(math.log2(n))) if n > 1 else 0, numpy_dtype(src.dtype)
                )
            return
        if op == "select-and-scatter":
            select = self._reducer(ins, "select")
            scatter = self._reducer(ins, "scatter")
            source = _first(operands[1]) if len(operands) > 1 else None
            if source is None:
                return
            window = math.prod(w.size for w in ins.window)
            n = _elements(source)
            t.add(select.scaled(n * max(0, window - 1)))
            t.add(scatter.scaled(n))
            return
        if op in ("all-reduce", "all-reduce-start", "reduce-scatter"):
            # XLA's convention: one combining operation per output element
            dtype = numpy_dtype(out[0].dtype) if out else None
            t.add_flops(sum(_elements(s) for s in out), dtype)
            return
        reducer = self._reducer(ins, "to_apply")
        res = _first(out)
        if op == "reduce":
            src = _first(operands[0]) if operands else None
            if src is None or res is None:
                return
            count = _elements(src) - _elements(res)
        elif op == "reduce-window":
            count = (math.prod(w.size for w in ins.window) - 1) * (_elements(res) if res else 0)
        elif op == "map":
            count = _elements(res) if res else 0
        else:  # scatter(operands..., indices, updates...): N operands, N updates
            n_ops = (len(operands) - 1) // 2
            upd = _first(operands[n_ops + 1]) if len(operands) > n_ops + 1 else None
            count = _elements(upd) if upd is not None else 0
        t.add(reducer.scaled(max(0, count)))

    def _reducer(self, ins: HloInstruction, key: str) -> _Tally:
        names = self._called(ins, key)
        if not names:
            return _Tally()
        return self.computation(names[0]).without_bytes()

    def _while(self, ins: HloInstruction, t: _Tally) -> None:
        body = self._called(ins, "body")
        cond = self._called(ins, "condition")
        once = _Tally()
        for name in body + cond:
            once.add(self.computation(name))
        trips = _trip_count(ins)
        if trips is None:
            t.add(once)
            t.notes.append(
                f"{ins.name}: a while loop with no known trip count; its body is counted once"
            )
        else:
            t.add(once, trips)
            t.known_trips += 1 if trips != 1 else 0

    def _custom_call(
        self,
        ins: HloInstruction,
        operands: list[list[ArrayShape]],
        out: list[ArrayShape],
        t: _Tally,
    ) -> None:
        target = _unquote(ins.attrs.get("custom_call_target", ""))
        res = _first(out)
        if target in _FREE_TARGETS:
            return
        solver = _SOLVER_RE.match(target)
        if solver:  # before the gemm rule: ``__cublas$triangularSolve`` is a cuBLAS call too
            self._solver(ins, solver.group(1), operands, t)
            return
        if target.startswith("__cublas$"):
            cfg = ins.backend_config
            gemm = cfg.get("gemm_backend_config", cfg)
            dnums = gemm.get("dot_dimension_numbers") if isinstance(gemm, dict) else None
            lhs = _first(operands[0]) if operands else None
            if not isinstance(dnums, dict) or lhs is None or res is None:
                t.unknown.append((ins.name, f"{target} without dot dimension numbers"))
                return
            contracting = [int(d) for d in dnums.get("lhs_contracting_dimensions", [])]
            k = math.prod(lhs.dims[d] for d in contracting if d < len(lhs.dims))
            t.add_flops(2.0 * _elements(res) * k, numpy_dtype(lhs.dtype), matmul=True)
            return
        if target.startswith("__cudnn$conv"):
            self._cudnn_conv(ins, target, operands, res, t)
            return
        if target == "__onednn$matmul":
            lhs = _first(operands[0]) if operands else None
            if lhs is None or res is None or not lhs.dims:
                t.unknown.append((ins.name, "oneDNN matmul shapes unknown"))
                return
            mm = ins.backend_config.get("onednn_matmul_config", {})
            transpose_a = bool(mm.get("transpose_a")) if isinstance(mm, dict) else False
            k = lhs.dims[-2] if transpose_a and len(lhs.dims) > 1 else lhs.dims[-1]
            t.add_flops(2.0 * _elements(res) * k, numpy_dtype(lhs.dtype), matmul=True)
            return
        if "window" in ins.attrs and "dim_labels" in ins.attrs and len(operands) > 1:
            # a library convolution (oneDNN...) printed like an HLO convolution
            self._conv(ins, _first(operands[0]), _first(operands[1]), res, t)
            return
        # a computation a custom call names (TopK's comparator...) runs as often as the
        # library decides: one run of it is not the call's cost
        t.unknown.append((ins.name, f"custom call {target or '(no target)'}"))

    def _solver(
        self, ins: HloInstruction, routine: str, operands: list[list[ArrayShape]], t: _Tally
    ) -> None:
        """Dense factorizations and solves in LAPACK (CPU) / cuSOLVER / cuBLAS calls.

        ``trsm`` and ``potrf`` are counted the way XLA counts the HLO ops they implement
        (``triangular-solve``: 2 × n × elements of b; ``cholesky``: n × elements of a / 3);
        ``getrf`` (LU) and ``geqrf`` (QR) by the textbook FLOP counts per matrix
        (2n³/3; 2mn² − 2n³/3 with m ≥ n)."""
        a = _first(operands[0]) if operands else None
        if a is None or len(a.dims) < 2:
            t.unknown.append((ins.name, f"{routine} operand shape unknown"))
            return
        m, n = a.dims[-2], a.dims[-1]
        batch = math.prod(a.dims[:-2])
        dtype = numpy_dtype(a.dtype)
        if routine in ("trsm", "triangularSolve"):
            b = _first(operands[1]) if len(operands) > 1 else None
            if b is None:
                t.unknown.append((ins.name, f"{routine} operand shape unknown"))
                return
            t.add_flops(2.0 * n * _elements(b), dtype, matmul=True)
        elif routine == "potrf":
            t.add_flops(float(n * _elements(a) // 3), dtype, matmul=True)
        elif routine == "getrf":
            k = min(m, n)
            t.add_flops(
                batch * (m * n * k - (m + n) * k * k / 2 + k**3 / 3) * 2, dtype, matmul=True
            )
        else:  # geqrf
            big, small = max(m, n), min(m, n)
            t.add_flops(batch * (2.0 * big * small**2 - 2.0 * small**3 / 3), dtype, matmul=True)

    def _cudnn_conv(
        self,
        ins: HloInstruction,
        target: str,
        operands: list[list[ArrayShape]],
        res: ArrayShape | None,
        t: _Tally,
    ) -> None:
        """cuDNN convolutions carry the *forward* convolution's window and dim_labels:
        map the call's operands back onto (input, kernel, output) by direction."""
        a = _first(operands[0]) if operands else None
        b = _first(operands[1]) if len(operands) > 1 else None
        if target == "__cudnn$convBackwardInput":
            lhs, rhs, out = res, b, a  # operands: (output grad, kernel) -> input grad
        elif target == "__cudnn$convBackwardFilter":
            lhs, rhs, out = a, res, b  # operands: (input, output grad) -> kernel grad
        else:  # __cudnn$convForward, __cudnn$convBiasActivationForward, graph variants
            lhs, rhs, out = a, b, res
        self._conv(ins, lhs, rhs, out, t)


def _is_library_call(ins: HloInstruction) -> bool:
    target = _unquote(ins.attrs.get("custom_call_target", ""))
    return target.startswith(("__cublas", "__cudnn"))


def _int_attr(ins: HloInstruction, key: str, default: int = 1) -> int:
    try:
        return int(ins.attrs.get(key, default))
    except ValueError:
        return default


def _trip_count(ins: HloInstruction) -> int | None:
    """``known_trip_count`` from a while loop's backend_config (XLA's loop analysis)."""
    ktc = ins.backend_config.get("known_trip_count")
    if isinstance(ktc, dict):
        try:
            return int(ktc.get("n"))  # type: ignore[arg-type]
        except (TypeError, ValueError):
            return None
    return None


@dataclass(frozen=True, slots=True)
class ConvLabels:
    """``dim_labels=b01f_01io->b01f`` read into dimension indices."""

    in_batch: int
    in_feature: int
    in_spatial: tuple[int, ...]
    k_in: int
    k_out: int
    k_spatial: tuple[int, ...]
    out_batch: int
    out_feature: int
    out_spatial: tuple[int, ...]


def _spatial(labels: str) -> tuple[int, ...]:
    digits = sorted((int(c), i) for i, c in enumerate(labels) if c.isdigit())
    return tuple(i for _, i in digits)


def _dim_labels(text: str) -> ConvLabels | None:
    try:
        ins, rest = text.split("_", 1)
        ker, out = rest.split("->", 1)
        return ConvLabels(
            ins.index("b"),
            ins.index("f"),
            _spatial(ins),
            ker.index("i"),
            ker.index("o"),
            _spatial(ker),
            out.index("b"),
            out.index("f"),
            _spatial(out),
        )
    except ValueError:
        return None


def conv_flops(
    lhs: ArrayShape,
    rhs: ArrayShape,
    out: ArrayShape,
    labels: ConvLabels,
    window: list[WindowDim],
    feature_groups: int = 1,
    batch_groups: int = 1,
) -> float | None:
    """FLOPs of a convolution as XLA's ``HloCostAnalysis::GetConvolutionFlops`` counts them.

    Per spatial dimension, the (output position, kernel position) pairs whose input
    index lands inside the input (stride, padding, both dilations applied); the
    FMA count is their product × input features per group × output features ×
    batch per batch group, two FLOPs each.
    """
    try:
        c_in = lhs.dims[labels.in_feature]
        c_out = out.dims[labels.out_feature]
        batch = lhs.dims[labels.in_batch]
        valid = 1
        for d, w in enumerate(window):
            valid *= _valid_positions(
                lhs.dims[labels.in_spatial[d]],
                rhs.dims[labels.k_spatial[d]],
                out.dims[labels.out_spatial[d]],
                w,
            )
    except IndexError:
        return None
    fma = (c_in // max(1, feature_groups)) * c_out * (batch // max(1, batch_groups)) * valid
    return 2.0 * fma


def _valid_positions(n_in: int, n_kernel: int, n_out: int, w: WindowDim) -> int:
    if w.lhs_dilate == 1:  # closed form per kernel tap: the outputs whose input index is in range
        stride = max(1, w.stride)
        count = 0
        for k in range(n_kernel):
            offset = k * w.rhs_dilate - w.pad_low  # input index = o * stride + offset
            lo = max(0, -(offset // stride))  # ceil(-offset / stride)
            hi = min(n_out - 1, (n_in - 1 - offset) // stride)
            if hi >= lo:
                count += hi - lo + 1
        return count
    count = 0
    for k in range(n_kernel):
        for o in range(n_out):
            undilated = o * w.stride - w.pad_low + k * w.rhs_dilate
            if undilated % w.lhs_dilate:
                continue
            i = undilated // w.lhs_dilate
            if 0 <= i < n_in:
                count += 1
    return count


# -- the public interface -----------------------------------------------------------------
def _op_cost(tally: _Tally, name: str) -> OpCost:
    own_unknown = [why for n, why in tally.unknown if n == name]
    notes = list(tally.notes)
    if own_unknown:
        return OpCost(None, tally.bytes, None, "unknown", None, "; ".join(own_unknown + notes))
    inner = [f"{n} ({why})" for n, why in tally.unknown]
    if inner:
        notes.append("not counted inside: " + ", ".join(inner))
    return OpCost(
        tally.flops, tally.bytes, tally.dtype, "counted", tally.transcendentals, "; ".join(notes)
    )


def _runtime_computations(module: HloModule) -> list[HloComputation]:
    """The entry and the computations it runs as such (while/conditional/call bodies),
    not fused bodies or reducers: their instructions are the ones that execute."""
    return [c for c in module.computations if c.is_entry or c.role == "control"]


def instruction_costs(module: HloModule) -> dict[str, OpCost]:
    """Our count for each instruction that runs on its own, by name.

    The entry computation's instructions, and those of while/conditional/call bodies
    (per execution of the body; the ``while`` instruction itself carries the total
    over its known trip count).  A fusion's figure is the sum over its fused body;
    its bytes are its parameters and outputs.
    """
    counter = _Counter(module)
    out: dict[str, OpCost] = {}
    for comp in _runtime_computations(module):
        for ins in comp.instructions:
            out[ins.name] = _op_cost(counter.instruction(ins, comp), ins.name)
    return out


def count_module(module: HloModule) -> ProgramCost:
    """Our totals alone (``program_cost`` without XLA's figure)."""
    return program_cost(module, None)


def program_cost(module: HloModule, xla: CostAnalysis | None) -> ProgramCost:
    """The program's FLOPs and bytes: XLA's own figure where it is a real count,
    ours where XLA reported nothing or a negative "not counted" sentinel.

    Two cases where a non-negative XLA figure is still not the program's, and ours
    is used with a note saying why:

    - custom calls: XLA's generic cost analysis (the one ``Compiled.cost_analysis()``
      runs) counts each custom call as -1 FLOPs and -1 bytes, so the total is the
      rest of the program less one per call: a negative sentinel when the calls are
      all there is (a cuBLAS matmul), a plausible-looking undercount otherwise (a
      LAPACK Cholesky among fusions on CPU);
    - while loops: XLA counts the body once; ours multiplies it by
      ``known_trip_count``.
    """
    counter = _Counter(module)
    total = counter.computation(module.entry.name)
    notes = list(total.notes)
    uncounted = tuple(dict.fromkeys(n for n, _ in total.unknown))
    if uncounted:
        notes.append(
            "our count leaves out "
            + ", ".join(f"{n} ({why})" for n, why in dict.fromkeys(total.unknown))
        )
    xf = xla.flops if xla is not None and xla.flops is not None and xla.flops >= 0 else None
    xb = (
        xla.bytes_accessed
        if xla is not None and xla.bytes_accessed is not None and xla.bytes_accessed >= 0
        else None
    )
    xt = (
        xla.transcendentals
        if xla is not None and xla.transcendentals is not None and xla.transcendentals >= 0
        else None
    )
    ours_flops_ok = not uncounted or total.flops > 0
    xla_notes = list(getattr(xla, "notes", ()) or ()) if xla is not None else []
    if xla is not None and xla.reported and total.custom_calls:
        n = len(total.custom_calls)
        shown = ", ".join(total.custom_calls[:3]) + (", ..." if n > 3 else "")
        notes.append(
            f"XLA did not count custom calls ({shown}): ours is used"
            + ("" if xla_notes else f"; XLA's figures are the rest of the program less {n}")
        )
        xf = xb = xt = None
    else:
        notes.extend(xla_notes)
    if (xf is not None or xb is not None) and total.known_trips:
        notes.append(
            "XLA counts a while loop's body once; ours multiplies it by the "
            "known trip count, so ours is used"
        )
        xf = xb = xt = None
    flops: float | None
    if xf is not None:
        flops, fsrc = xf, "xla"
    elif ours_flops_ok:
        flops, fsrc = total.flops, "counted"
    else:
        flops, fsrc = None, "unknown"
    nbytes, bsrc = (xb, "xla") if xb is not None else (total.bytes, "counted")
    trans = xt if xf is not None and xt is not None else total.transcendentals
    return ProgramCost(
        flops=flops,
        bytes=nbytes,
        transcendentals=trans,
        flops_source=fsrc,
        bytes_source=bsrc,
        dtype=total.dtype,
        counted_flops=total.flops,
        counted_bytes=total.bytes,
        counted_transcendentals=total.transcendentals,
        flops_by_dtype={k: v for k, v in total.by_dtype.items() if v},
        uncounted=uncounted,
        notes=tuple(dict.fromkeys(notes)),
    )


__all__ = [
    "ELEMENTWISE_OPS",
    "TRANSCENDENTAL_OPS",
    "ConvLabels",
    "OpCost",
    "ProgramCost",
    "conv_flops",
    "count_module",
    "instruction_costs",
    "numpy_dtype",
    "program_cost",
]
