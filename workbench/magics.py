"""IPython front doors: ``%%jaxpr`` / ``%jaxpr`` and ``%%hlo`` / ``%hlo``.

Thin by design: parse flags, capture the call (:mod:`workbench.cellcall`), ask
the engine for inspections, hand them to the view.  Failures become a short
:class:`~workbench.cellcall.CellError` (or IPython's ``UsageError`` for bad
flags) instead of a long traceback; the namespace is left as a normal run would.
"""

from __future__ import annotations

from typing import Any

from IPython.core.error import UsageError
from IPython.core.magic import Magics, line_cell_magic, magics_class
from IPython.core.magic_arguments import argument, magic_arguments, parse_argstring

from .cellcall import CapturedCall, CellError, capture_call
from .engine.errors import ErrorReport, UserLine, report
from .engine.hlo_report import STAGES, build_hlo_report
from .engine.inspection import BackendUnavailable, Inspection, inspect_stages, resolve_backend
from .engine.transforms import TRANSFORM_NAMES, TransformError, normalize
from .views.hlo_view import HloDisplay
from .views.jaxpr_view import JaxprDisplay

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


@magics_class
class JaxprMagics(Magics):
    """``%%jaxpr`` and ``%jaxpr``: the jaxpr of a call under any composition of transforms."""

    @magic_arguments()
    @argument("-t", "--transform", action="append", default=[], metavar="NAME",
              help=f"transform to apply, innermost first; repeatable. One of "
                   f"{', '.join(TRANSFORM_NAMES)}, optionally with literal arguments, e.g. "
                   f"\"vmap(in_axes=(None, 0))\", or a nested string such as \"vmap(grad(f))\".")
    @argument("--static-argnums", default=None, help="positions of static arguments, e.g. 1,2")
    @argument("--static-argnames", default=None, help="names of static keyword arguments")
    @argument("--text", action="store_true", help="plain text only (JAX's own printing)")
    @argument("--compare", action="store_true",
              help="show the function and each successive transform side by side")
    @argument("--depth", type=int, default=1, help="how many levels of nested jaxprs start open")
    @line_cell_magic
    def jaxpr(self, line: str = "", cell: str | None = None) -> JaxprDisplay | None:
        """Show the jaxpr of a call instead of running it.

        Cell form: the cell runs, its last line must be a call ``f(...)``; that call
        is traced (not executed) and its jaxpr shown.  Line form: ``%jaxpr f(x)``.
        """
        args, expr = magic_args(self.jaxpr, line, cell, _VALUE_FLAGS, _BOOL_FLAGS,
                                "%jaxpr -t grad loss(w, x)")
        if args.depth < 0:
            raise UsageError("--depth must be 0 or more")
        check_transforms(args.transform)
        captured = capture_call(self.shell, line, cell, expr, "jaxpr")
        stages = trace_captured(captured, args.transform, _ints(args.static_argnums),
                                _names(args.static_argnames), compare=args.compare)
        return JaxprDisplay(stages, compare=args.compare, depth=args.depth, text_only=args.text)


_HLO_VALUE_FLAGS = {"-t", "--transform", "--static-argnums", "--static-argnames", "--stage",
                    "--backend"}
_HLO_BOOL_FLAGS = {"--text", "--fusion", "--no-fusion"}
_HLO_USAGE = ("-t/--transform NAME, --static-argnums, --static-argnames, --stage "
              "compiled|lowered, --backend NAME, --fusion/--no-fusion, --text")


@magics_class
class HloMagics(Magics):
    """``%%hlo`` and ``%hlo``: what XLA compiled for a call, with a fusion diagram."""

    @magic_arguments()
    @argument("-t", "--transform", action="append", default=[], metavar="NAME",
              help="transform to apply first, innermost first; repeatable (as in %%jaxpr)")
    @argument("--static-argnums", default=None, help="positions of static arguments, e.g. 1,2")
    @argument("--static-argnames", default=None, help="names of static keyword arguments")
    @argument("--stage", default="compiled", choices=STAGES,
              help="compiled: optimized HLO after XLA's passes (default); "
                   "lowered: StableHLO as JAX lowered it")
    @argument("--backend", default=None,
              help="compile for this backend (cpu, gpu, tpu) instead of the default one")
    @argument("--fusion", dest="fusion", action="store_true", default=None,
              help="draw the fusion diagram (default for --stage compiled)")
    @argument("--no-fusion", dest="fusion", action="store_false",
              help="text and summary only, no diagram")
    @argument("--text", action="store_true", help="plain text only (JAX's own printing)")
    @line_cell_magic
    def hlo(self, line: str = "", cell: str | None = None) -> HloDisplay | None:
        """Show what XLA made of a call instead of running it.

        Cell form: the cell runs, its last line must be a call ``f(...)``; that call
        is lowered and compiled (not executed).  Line form: ``%hlo f(x)``.
        """
        args, expr = magic_args(self.hlo, line, cell, _HLO_VALUE_FLAGS, _HLO_BOOL_FLAGS,
                                "%hlo --stage lowered loss(w, x)", _HLO_USAGE)
        backend = check_backend(args.backend)
        fusion = args.stage == "compiled" if args.fusion is None else args.fusion
        if fusion and args.stage != "compiled":
            raise UsageError("--fusion needs --stage compiled: fusions are made by XLA's "
                             "optimization passes, after lowering")
        check_transforms(args.transform)
        captured = capture_call(self.shell, line, cell, expr, "hlo")
        (ins,) = trace_captured(captured, args.transform, _ints(args.static_argnums),
                                _names(args.static_argnames), compare=False, backend=backend)

        try:
            rep = build_hlo_report(ins, args.stage, fusion=fusion)
        except Exception as exc:
            raise CellError(_at_call(report(exc, "compile"), captured),
                            subject=ins.label) from None
        return HloDisplay(rep, text_only=args.text)


def check_backend(backend: str | None) -> str | None:
    """``--backend tpu`` on a CPU machine: one line naming the backends that are here."""
    if backend is None:
        return None
    try:
        return resolve_backend(backend)
    except BackendUnavailable as exc:
        raise UsageError(str(exc)) from None


def trace_captured(captured: CapturedCall, transforms: list[str], static_argnums: tuple[int, ...],
                   static_argnames: tuple[str, ...], compare: bool,
                   backend: str | None = None) -> list[Inspection]:
    """Build the inspections and trace them now, so errors surface in the cell."""
    try:
        stages = inspect_stages(captured.fn, captured.args, captured.kwargs, transforms,
                                static_argnums, static_argnames, compare=compare,
                                backend=backend)
    except TransformError as exc:
        raise UsageError(str(exc)) from None
    except BackendUnavailable as exc:
        raise UsageError(str(exc)) from None
    except Exception as exc:
        raise CellError(_at_call(report(exc, "transform"), captured)) from None
    for ins in stages:
        try:
            ins.model  # noqa: B018 - forces trace + model build, errors surface here
        except Exception as exc:
            raise CellError(_at_call(report(exc, "trace"), captured), subject=ins.label) from None
    return stages


def _at_call(rep: ErrorReport, captured: CapturedCall) -> ErrorReport:
    """Errors raised inside JAX itself (e.g. grad of a non-scalar) point at the call line."""
    if rep.where is None:
        rep.where = UserLine(captured.filename, captured.line, "<cell>", captured.call_text)
    return rep


__all__ = ["CellError", "HloMagics", "JaxprMagics", "check_backend", "split_flags"]
