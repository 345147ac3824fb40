"""The one flag parser of the magics, driven by each magic's own ``magic_arguments`` declaration.

Every magic declares its flags once, with IPython's ``@magic_arguments()`` and
``@argument(...)`` decorators (as ``%timeit`` and ``%%capture`` do); those build
``magic.parser`` and put the generated usage in the magic's docstring, which is
what ``%jaxpr?`` prints.  :func:`parse_magic_line` reads a magic's line with that
parser, for both forms:

* **whole line** (a cell magic's line, ``%jaxcache``, ``%workbench``): every word
  is a flag, a flag's value or a declared positional;
* **line form** (``%jaxpr -t grad f(x)``, ``%sharding --text x``): flags first,
  then a Python expression, returned exactly as typed.  Reading flags stops at
  the first word that is neither a known flag nor a flag's value, so
  ``%jaxpr f(x, -1)`` and ``%jaxbench f(-x)`` are never read as flags.

Why not IPython's ``parse_argstring``: its ``arg_split`` keeps the quotes of
``-t "vmap(in_axes=(None, 0))"`` in the value, and it cannot tell where the
flags of a line magic end and its expression begins.  Here words are split as a
shell would (quotes removed, ``\\`` escapes) with one addition: spaces inside
unquoted brackets do not split, so ``-t vmap(in_axes=(None, 0))`` is one value.
Values may be attached (``-tgrad``, ``-n100``, ``--budget=0.5``).  argparse then
converts and checks the values; its errors, like ours, are IPython
``UsageError``\\ s (one or two lines, never a traceback, never ``SystemExit``).
"""

from __future__ import annotations

import argparse
from collections.abc import Callable
from typing import Any, TypeVar

from IPython.core.error import UsageError
from IPython.core.magic_arguments import argument

from workbench.engine.jaxpr.transforms import TRANSFORM_NAMES, TransformError, normalize
from workbench.engine.stages import BackendUnavailable, resolve_backend

F = TypeVar("F", bound=Callable[..., Any])

_CLOSE = {"(": ")", "[": "]", "{": "}"}


def _closing_quote(line: str, i: int, escapes: bool) -> int:
    """Where the quote opened at ``line[i]`` closes; a short UsageError if it never does."""
    c, end, n = line[i], i + 1, len(line)
    while end < n and line[end] != c:
        end += 2 if escapes and line[end] == "\\" else 1
    if end >= n:
        raise UsageError(f"unclosed {c} in {line[i:].strip()!r}")
    return end


def _word(line: str, i: int) -> tuple[str, int]:
    """The shell word starting at ``line[i]`` (not a space): its text without quotes, its end.

    Inside unquoted brackets the text is Python (``checkpoint(policy='dots_saveable')``),
    so quotes there are kept as typed; a bracket left open is an error, not a word that
    silently swallows the call after it.
    """
    out: list[str] = []
    depth: list[str] = []  # closing brackets expected, innermost last
    n, start = len(line), i
    while i < n and (depth or not line[i].isspace()):
        c = line[i]
        if c in "'\"" and depth:  # a Python string literal: verbatim, \ escapes anything
            end = _closing_quote(line, i, escapes=True)
            out.append(line[i : end + 1])
            i = end + 1
            continue
        if c in "'\"":
            end = _closing_quote(line, i, escapes=c == '"')
            body = line[i + 1 : end]
            if c == '"':  # inside double quotes a backslash escapes " and \ only
                body = body.replace('\\"', '"').replace("\\\\", "\\")
            out.append(body)
            i = end + 1
            continue
        if c == "\\" and i + 1 < n:
            out.append(line[i + 1])
            i += 2
            continue
        if c in _CLOSE:
            depth.append(_CLOSE[c])
        elif depth and c == depth[-1]:
            depth.pop()
        out.append(c)
        i += 1
    if depth:
        opening = {v: k for k, v in _CLOSE.items()}[depth[0]]
        raise UsageError(f"unclosed {opening} in {line[start:].strip()!r}")
    return "".join(out), i


def _skip_space(line: str, i: int) -> int:
    while i < len(line) and line[i].isspace():
        i += 1
    return i


def _looks_like_flag(word: str) -> bool:
    """``-x`` or ``--xyz``; not ``-1`` or ``-(x)``, which start an expression."""
    return len(word) > 1 and word[0] == "-" and (word[1].isalpha() or word[1] == "-")


def _options(parser: argparse.ArgumentParser) -> dict[str, argparse.Action]:
    """Option string -> action, for every flag the magic declared."""
    return {s: a for a in parser._actions for s in a.option_strings}


def _takes_value(action: argparse.Action) -> bool:
    if action.nargs not in (None, 0, 1):
        raise TypeError(f"{'/'.join(action.option_strings)}: flags take zero or one value here")
    return action.nargs != 0


def _flag_list(parser: argparse.ArgumentParser) -> str:
    """``-t/--transform NAME, --text, ...`` from the declaration, for error messages."""
    parts = []
    for a in parser._actions:
        if not a.option_strings:
            continue
        text = "/".join(a.option_strings)
        if _takes_value(a):
            if a.metavar is not None:
                text += f" {a.metavar}"
            elif a.choices is not None:
                text += " " + "|".join(str(c) for c in a.choices)
            else:
                text += f" {a.dest.upper()}"
        parts.append(text)
    return ", ".join(parts)


def _kind(action: argparse.Action) -> str:
    """What a flag's value is, in words: ``-n needs an integer``."""
    kind = {int: "an integer", float: "a number"}.get(action.type, "a value")  # type: ignore[call-overload]
    if kind != "a value" and isinstance(action.metavar, str):
        kind += f" {action.metavar}"
    return kind


def _missing(flag: str, action: argparse.Action) -> str:
    """``-n needs a value (an integer, N)``: what to give, not just that something is missing."""
    kind = _kind(action)
    return f"{flag} needs a value" + ("" if kind == "a value" else f" ({kind})")


def _check_value(flag: str, action: argparse.Action, value: str | None) -> None:
    """A numeric flag's value is checked here, before the expression is looked for: in
    ``%jaxbench -n f(x)`` the call was read as ``-n``'s value, and "needs a call" misleads."""
    if value is None or action.type not in (int, float):
        return
    try:
        action.type(value)
    except ValueError:
        raise UsageError(f"{flag} needs {_kind(action)}, got {value!r}") from None


def usage_line(magic: Callable[..., Any]) -> str:
    """The magic's generated usage on one line (IPython's formatter writes a reST block)."""
    parser: argparse.ArgumentParser = magic.parser  # type: ignore[attr-defined]
    return "usage: " + " ".join(parser.format_usage().replace("::", " ").split())


def _match(options: dict[str, argparse.Action], word: str) -> tuple[str, str | None] | None:
    """``(flag, attached value or None)`` if ``word`` is one of the flags, else None."""
    flag, eq, value = word.partition("=")
    if flag in options:
        return flag, (value if eq else None)  # --budget=0.5, --text
    if not word.startswith("--") and word[:2] in options and _takes_value(options[word[:2]]):
        return word[:2], word[2:]  # -tgrad, -n100
    return None


def parse_magic_line(
    magic: Callable[..., Any], line: str, *, needs: str | None = None
) -> tuple[argparse.Namespace, str]:
    """``(flags, expression)`` of a magic's line, read with ``magic.parser``.

    ``needs=None``: the whole line is arguments (a cell magic's line, or a magic that
    takes no expression); the expression returned is ``""``.  Otherwise the line form:
    flags, then the expression, and ``needs`` says what is missing when nothing
    follows the flags (``"a call, e.g. %jaxpr f(x)"``).  ``--`` ends the flags.
    """
    parser: argparse.ArgumentParser = magic.parser  # type: ignore[attr-defined]
    name = f"%{parser.prog}"
    options = _options(parser)
    flags: list[str] = []  # as FLAG=VALUE, so argparse never takes a value for a flag
    positionals: list[str] = []
    i, rest_at, only_words = _skip_space(line, 0), len(line), False
    while i < len(line):
        if needs is not None and line[i] != "-":  # the expression starts here
            rest_at = i
            break
        word, end = _word(line, i)
        hit = None if only_words else _match(options, word)
        if word == "--" and not only_words:
            if needs is not None:
                rest_at = end
                break
            only_words = True
        elif hit is not None:
            flag, value = hit
            if value is None and _takes_value(options[flag]):
                j = _skip_space(line, end)
                if j < len(line):
                    value, end = _word(line, j)
                if value is None or _match(options, value) is not None:  # -t --text: argparse
                    raise UsageError(_missing(flag, options[flag]))  # -n -1 is a value
            _check_value(flag, options[flag], value)
            flags.append(flag if value is None else f"{flag}={value}")
        elif _looks_like_flag(word) and not only_words:
            raise UsageError(
                f"unknown flag {word!r}; {name} takes "
                f"{_flag_list(parser) or 'no flags'} (see {name}?)"
            )
        elif needs is not None:  # e.g. -1 * x: an expression
            rest_at = i
            break
        else:
            positionals.append(word)
        i = _skip_space(line, end)
    expression = line[rest_at:].strip() if needs is not None else ""
    if needs is not None and not expression:
        raise UsageError(f"{name} needs {needs}")
    dashed = any(w.startswith("-") for w in positionals)  # a DIR named -x, given after --
    try:
        args = parser.parse_args(flags + (["--"] if dashed else []) + positionals)
    except UsageError as exc:  # MagicArgumentParser.error raises it instead of exiting
        raise UsageError(f"{name}: {exc}\n{usage_line(magic)}") from None
    return args, expression


def trace_arguments(magic: F) -> F:
    """The flags of the magics that trace a call (``%jaxpr``, ``%hlo``), declared once:
    which transforms to apply and which arguments are static.  Use it among the
    ``@argument`` decorators, below ``@magic_arguments()``."""
    declared = [
        argument(
            "-t",
            "--transform",
            action="append",
            default=[],
            metavar="NAME",
            help=f"transform to apply, innermost first; repeatable. One of "
            f"{', '.join(TRANSFORM_NAMES)}, optionally with literal arguments, e.g. "
            f'"vmap(in_axes=(None, 0))", or a nested string such as '
            f'"vmap(grad(f))".',
        ),
        argument(
            "--static-argnums",
            default=None,
            metavar="ARGNUMS",
            help="positions of static arguments, e.g. 1,2",
        ),
        argument(
            "--static-argnames",
            default=None,
            metavar="ARGNAMES",
            help="names of static keyword arguments",
        ),
    ]
    for deco in reversed(declared):  # as if written one above the other
        magic = deco(magic)
    return magic


def argnums(text: str | None) -> tuple[int, ...]:
    """``--static-argnums 0,2`` (commas or spaces)."""
    if not text:
        return ()
    try:
        return tuple(int(p) for p in text.replace(",", " ").split())
    except ValueError:
        raise UsageError(f"--static-argnums takes integers such as 0,2; got {text!r}") from None


def argnames(text: str | None) -> tuple[str, ...]:
    """``--static-argnames n,k`` (commas or spaces)."""
    return tuple(p for p in (text or "").replace(",", " ").split() if p)


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


__all__ = [
    "argnames",
    "argnums",
    "check_backend",
    "check_transforms",
    "parse_magic_line",
    "trace_arguments",
    "usage_line",
]
