"""XLA's shape text (``f32[2,4]{1,0}``, ``(s32[], f32[3]{0})``) read into array leaves.

Shared by the model (an instruction's ``bytes`` and ``short_shape`` are read from
its shape text on demand, since most instructions are never asked) and the parser.
"""

from __future__ import annotations

import functools
import re
from dataclasses import dataclass

#: bits per element; unknown dtypes count as 0 bytes (and are reported as such).
DTYPE_BITS: dict[str, int] = {
    "pred": 8,
    "s1": 1,
    "u1": 1,
    "s2": 2,
    "u2": 2,
    "s4": 4,
    "u4": 4,
    "s8": 8,
    "u8": 8,
    "s16": 16,
    "u16": 16,
    "s32": 32,
    "u32": 32,
    "s64": 64,
    "u64": 64,
    "f16": 16,
    "bf16": 16,
    "f32": 32,
    "f64": 64,
    "c64": 64,
    "c128": 128,
    "f8e5m2": 8,
    "f8e4m3fn": 8,
    "f8e4m3b11fnuz": 8,
    "f8e5m2fnuz": 8,
    "f8e4m3fnuz": 8,
    "f8e4m3": 8,
    "f8e3m4": 8,
    "f8e8m0fnu": 8,
    "f4e2m1fn": 4,
    "tf32": 32,
    "token": 0,
}


@dataclass(slots=True)
class ArrayShape:
    dtype: str
    dims: tuple[int, ...]

    @property
    def bytes(self) -> int:
        n = 1
        for d in self.dims:
            n *= d
        return (n * DTYPE_BITS.get(self.dtype, 0) + 7) // 8

    @property
    def text(self) -> str:
        return f"{self.dtype}[{','.join(map(str, self.dims))}]"


_ARRAY_RE = re.compile(r"([a-z][a-z0-9]*)\[([^\]]*)\]")


def parse_shape(text: str) -> list[ArrayShape]:
    """The array leaves of a (possibly tuple) shape, in order; layouts are dropped."""
    out = []
    for dtype, dims in _ARRAY_RE.findall(text):
        ds: list[int] = []
        for d in dims.split(","):
            d = d.strip().lstrip("<=")
            if d and d != "?":
                try:
                    ds.append(int(d))
                except ValueError:
                    ds.append(0)
        out.append(ArrayShape(dtype, tuple(ds)))
    if not out and text.strip().startswith("token"):
        out.append(ArrayShape("token", ()))
    return out


_LAYOUT_RE = re.compile(r"\{[^{}]*\}")


@functools.lru_cache(maxsize=8192)
def strip_layout(shape_text: str) -> str:
    """``f32[2,4]{1,0}`` -> ``f32[2,4]``; tuples keep their parentheses.  Cached: a module
    has 10^5 instructions and a few thousand distinct shapes."""
    return _LAYOUT_RE.sub("", shape_text) if "{" in shape_text else shape_text


__all__ = ["DTYPE_BITS", "ArrayShape", "parse_shape", "strip_layout"]
