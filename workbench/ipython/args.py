"""Flag parsing shared by the magics (to be unified on ``magic_arguments``)."""

from __future__ import annotations

from typing import Any

from IPython.core.error import UsageError
from IPython.core.magic_arguments import parse_argstring

from workbench.engine.jaxpr.inspection import BackendUnavailable, resolve_backend
from workbench.engine.jaxpr.transforms import TransformError, normalize

_VALUE_FLAGS = {"-t", "--transform", "--static-argnums", "--static-argnames", "--depth"}
_BOOL_FLAGS = {"--text", "--compare"}


def _ints(text: str | None) -> tuple[int, ...]:
    if not text:
        return ()
    try:
        return tuple(int(p) for p in text.replace(",", " ").split())
    except ValueError:
        raise UsageError(f"--static-argnums takes integers such as 0,2; got {text!r}") from None


def _names(text: str | None) -> tuple[str, ...]:
    return tuple(p for p in (text or "").replace(",", " ").split() if p)


def _tokens(line: str) -> list[tuple[str, int]]:
    """Whitespace-separated tokens (quotes respected) with the offset where each ends."""
    out: list[tuple[str, int]] = []
    i, n = 0, len(line)
    while i < n:
        while i < n and line[i].isspace():
            i += 1
        if i >= n:
            break
        j = i
        buf = []
        depth = 0
        while j < n and (depth > 0 or not line[j].isspace()):
            if line[j] in "([{":
                depth += 1
            elif line[j] in ")]}":
                depth = max(0, depth - 1)
            if line[j] in "'\"":
                q = line[j]
                k = line.find(q, j + 1)
                k = n if k < 0 else k
                buf.append(line[j + 1:k])
                j = k + 1
            else:
                buf.append(line[j])
                j += 1
        out.append(("".join(buf), j))
        i = j
    return out


def split_flags(line: str, value_flags: set[str] | None = None,
                bool_flags: set[str] | None = None,
                usage: str = "-t/--transform NAME, --static-argnums, --static-argnames, "
                             "--text, --compare, --depth N") -> tuple[list[str], str]:
    """Split a line magic's text into (flag tokens, call expression).

    Flags come first; reading stops at the first token that is neither a known
    flag nor a flag's value, so a call such as ``f(x, -1)`` is never read as flags.
    """
    value_flags = _VALUE_FLAGS if value_flags is None else value_flags
    bool_flags = _BOOL_FLAGS if bool_flags is None else bool_flags
    flags: list[str] = []
    end = 0
    toks = _tokens(line)
    i = 0
    while i < len(toks):
        tok, tok_end = toks[i]
        name = tok.split("=", 1)[0]
        if name in bool_flags or (name in value_flags and "=" in tok):
            flags.append(tok)
            end = tok_end
            i += 1
        elif name in value_flags:
            if i + 1 >= len(toks):
                raise UsageError(f"{tok} needs a value")
            flags.extend([tok, toks[i + 1][0]])
            end = toks[i + 1][1]
            i += 2
        elif tok.startswith("-") and len(tok) > 1 and (tok[1].isalpha() or tok[1] == "-"):
            raise UsageError(f"unknown flag {tok!r}; flags are {usage}")
        else:
            break
    return flags, line[end:].strip()


def magic_args(magic: Any, line: str, cell: str | None, value_flags: set[str],
               bool_flags: set[str], example: str, usage: str | None = None) -> tuple[Any, str]:
    """(parsed flags, call expression) of a line or cell magic.

    Cell form: the whole line is flags.  Line form: flags first, then the call
    (``split_flags`` stops at the first token that is not a flag).
    """
    if cell is not None:
        return parse_argstring(magic, line), ""
    kw = {} if usage is None else {"usage": usage}
    flag_tokens, expr = split_flags(line, value_flags, bool_flags, **kw)
    if not expr:
        raise UsageError(f"{example.split()[0]} needs a call, e.g. {example}")
    return magic.parser.parse_args(flag_tokens), expr


def check_transforms(transforms: list[str]) -> None:
    """Bad transforms are reported before anything in the cell runs."""
    try:
        normalize(transforms)
    except TransformError as exc:
        raise UsageError(str(exc)) from None


def check_backend(backend: str | None) -> str | None:
    """``--backend tpu`` on a CPU machine: one line naming the backends that are here."""
    if backend is None:
        return None
    try:
        return resolve_backend(backend)
    except BackendUnavailable as exc:
        raise UsageError(str(exc)) from None


