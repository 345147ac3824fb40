"""An optimized HLO module's text reduced to the program: what identifies it across traces.

``%%hlo`` traces anew, with each call of the user's functions named in the op_names
(:mod:`workbench.engine.common.call_scopes`) and from its own call stack, while the user's
calls and ``%%jaxprof`` compile the same call without those names.  The two texts then
differ only in each instruction's metadata (op_name, source line, stack frame id) and in
the module's stack-frame tables; what XLA compiled is the same.  Keys that must match
across the two (the profile store's module key) hash this reduced text.
"""

from __future__ import annotations

import re

#: `, metadata={...}` with quoted strings that may hold braces
_METADATA = re.compile(r', metadata=\{(?:[^{}"]|"(?:[^"\\]|\\.)*")*\}')
#: the stack-frame tables after the module's header line: their titles and numbered rows
_FRAME_TABLE = re.compile(r"^(?:FileNames|FunctionNames|FileLocations|StackFrames)$|^\d+ ")


def program_text(hlo_text: str) -> str:
    """``hlo_text`` without instruction metadata and stack-frame tables."""
    kept = [line for line in hlo_text.splitlines() if not _FRAME_TABLE.match(line)]
    return _METADATA.sub("", "\n".join(kept))
