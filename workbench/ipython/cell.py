"""Cell semantics shared by the call-inspecting cell magics (``%%jaxpr``, ``%%hlo``,
``%%jaxbench``).

The cell runs like a normal cell, in the user's namespace, except its last
expression, which must be a call ``f(args...)``: that call's function and
arguments are evaluated, but the call itself is handed back to be inspected
(traced/lowered/compiled) instead of executed.

The body is compiled under a file name ``<workbench-cell-N>`` registered in
:mod:`linecache` with the magic line first, so line numbers in jaxpr source
info, HLO metadata and error reports match the lines the user sees in the cell.
"""

from __future__ import annotations

import argparse
import ast
import builtins
import linecache
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from typing import Any

from IPython.core.error import UsageError

from workbench.api.tracing import trace_stages
from workbench.engine.common.errors import ErrorReport, report
from workbench.engine.common.source import CellLabel, SourceLine, register_cell
from workbench.engine.jaxpr.transforms import TransformError
from workbench.engine.profile.run import ProfileError
from workbench.engine.stages import BackendUnavailable, Inspection
from workbench.ipython.args import argnames, argnums
from workbench.ipython.prompt import current_cell_id, prompt_number
from workbench.views.errors import WorkbenchError


class CellError(WorkbenchError):
    """A user-facing failure in a cell: the shared short-report exception of the twins,
    rendered by IPython without a long traceback (``_render_traceback_``)."""


class CellInterrupted(KeyboardInterrupt):
    """Ctrl-C (or a ``KeyboardInterrupt`` raised by user code) while a magic traced, lowered
    or ran the user's code: still an interruption (Run All stops), shown in one line
    instead of a traceback through the magic's own frames."""

    def __init__(self, what: str) -> None:
        super().__init__(what)
        self.what = what

    def _render_traceback_(self) -> list[str]:
        return [f"KeyboardInterrupt: {self.what}"]


@dataclass
class CapturedCall:
    fn: Any
    args: tuple[Any, ...]
    kwargs: dict[str, Any]
    call_text: str
    filename: str
    line: int


@contextmanager
def interruptible(what: str, call: CapturedCall | None = None) -> Iterator[None]:
    """Turn a ``KeyboardInterrupt`` raised inside into a one-line :class:`CellInterrupted`;
    with ``call`` (the magics' work on a captured call), also a failure that carries its
    own report (a :class:`~workbench.views.errors.WorkbenchError` of the twins' stages, a
    :class:`~workbench.engine.profile.run.ProfileError`) into a :class:`CellError` that
    points at the call's line where the report names none (:func:`at_call`).  Anything
    else passes through: a bug keeps its traceback.

    The error raised here still chains what it replaces (``from None`` only hides it), and
    that exception's frames hold the call's arguments: the magics that use it wear
    :func:`~workbench.api.errors.releases_arguments`, which lets go of both."""
    try:
        yield
    except CellInterrupted:
        raise
    except KeyboardInterrupt:
        raise CellInterrupted(f"interrupted {what}") from None
    except (WorkbenchError, ProfileError) as exc:
        if call is None:
            raise
        subject = exc.subject if isinstance(exc, WorkbenchError) else ""
        raise CellError(at_call(exc.report, call), subject=subject) from None


def register_cell_source(shell: Any, text: str) -> str:
    """Compile-ready file name for a magic's source ``text``, registered in
    :mod:`linecache` (so tracebacks and JAX's source info show the lines) and labelled
    with the cell's prompt number and JupyterLab cell id (:func:`cell_label`)."""
    number = prompt_number(shell)
    base = f"<workbench-cell-{number or 0}>"
    name, k = base, 1
    while name in linecache.cache:
        k += 1
        name = f"<workbench-cell-{number or 0}-{k}>"
    lines = [ln + "\n" for ln in text.splitlines()]
    linecache.cache[name] = (len(text), None, lines, name)
    register_cell(name, CellLabel(number, current_cell_id(shell)))
    return name


def _fail(
    phase: str, kind: str, summary: str, filename: str = "", line: int = 0, text: str = ""
) -> CellError:
    where = SourceLine(filename, line, "<cell>", text) if filename else None
    return CellError(ErrorReport(phase=phase, kind=kind, summary=summary, where=where))


def _call_parts(call: ast.Call) -> ast.Tuple:
    """``(func, (args...), {kwargs...})`` as one expression, keeping ``*a`` and ``**k``."""
    keys: list[ast.expr | None] = []
    values: list[ast.expr] = []
    for kw in call.keywords:
        keys.append(None if kw.arg is None else ast.Constant(kw.arg))
        values.append(kw.value)
    expr = ast.Tuple(
        elts=[
            call.func,
            ast.Tuple(elts=list(call.args), ctx=ast.Load()),
            ast.Dict(keys=keys, values=values),
        ],
        ctx=ast.Load(),
    )
    return ast.fix_missing_locations(ast.copy_location(expr, call))


def run_cell_capturing_call(shell: Any, magic_line: str, cell: str, magic: str) -> CapturedCall:
    """Run all but the last statement of ``cell``; evaluate the last call's parts."""
    source = shell.transform_cell(cell) if shell is not None else cell
    filename = register_cell_source(shell, f"%%{magic} {magic_line}".rstrip() + "\n" + source)
    try:
        tree = ast.parse(source, filename=filename, mode="exec")
    except SyntaxError as exc:
        exc.lineno = (exc.lineno or 0) + 1
        exc.filename = filename
        raise CellError(report(exc, "parse")) from None
    ast.increment_lineno(tree, 1)  # line 1 is the magic line
    if not tree.body:
        raise _fail(
            "parse", "UsageError", f"%%{magic} needs a cell whose last line is a call, e.g. f(x)"
        )
    *body, last = tree.body
    user_ns = shell.user_ns if shell is not None else {}
    global_ns = shell.user_global_ns if shell is not None else user_ns
    if body:
        module = ast.Module(body=body, type_ignores=[])
        try:  # ast.parse accepts a stray `return`/`break`; compile() is where it fails
            code = compile(module, filename, "exec")
        except SyntaxError as exc:
            raise CellError(report(exc, "parse")) from None
        try:
            with interruptible("running the cell"):
                exec(code, global_ns, user_ns)
        except Exception as exc:
            raise CellError(report(exc, "cell")) from None
    last_text = linecache.getline(filename, last.lineno).strip()
    if not (isinstance(last, ast.Expr) and isinstance(last.value, ast.Call)):
        raise _fail(
            "parse",
            "UsageError",
            f"the last line of a %%{magic} cell must be a call such as f(x, y), "
            f"{_WHAT_HAPPENS.get(magic, 'which the magic works on')}; "
            f"got {type(last).__name__.lower()}",
            filename,
            last.lineno,
            last_text,
        )
    return _evaluate_call(last.value, filename, global_ns, user_ns, last_text)


_WHAT_HAPPENS = {
    "jaxpr": "whose jaxpr is shown instead of running it",
    "hlo": "which is compiled, not run, and its HLO shown",
    "jaxbench": "which is timed",
    "jaxmem": "which is compiled, not run, and its memory at the peak shown",
}


def parse_call_expression(shell: Any, expr: str, magic: str) -> CapturedCall:
    """For the line magic: ``expr`` must be a single call expression."""
    expr = expr.strip()
    filename = register_cell_source(shell, expr)
    try:
        node = ast.parse(expr, filename=filename, mode="eval").body
    except SyntaxError as exc:
        exc.filename = filename
        raise CellError(report(exc, "parse")) from None
    if not isinstance(node, ast.Call):
        raise _fail(
            "parse",
            "UsageError",
            f"%{magic} needs a call such as f(x, y); got {expr.strip()!r}",
            filename,
            1,
            expr.strip(),
        )
    user_ns = shell.user_ns if shell is not None else {}
    global_ns = shell.user_global_ns if shell is not None else user_ns
    return _evaluate_call(node, filename, global_ns, user_ns, expr.strip())


def _refuse_print(
    call: ast.Call, filename: str, global_ns: dict[str, Any], user_ns: dict[str, Any], text: str
) -> None:
    """``print(f(x))`` (the docs' usual last line) returns None: tracing ``print`` shows an
    empty jaxpr (and a ``JitTracer`` printed), profiling it finds no device work.  Said
    before the arguments run, with the call to write instead."""
    func = call.func
    if not (isinstance(func, ast.Name) and func.id == "print"):
        return
    found = user_ns.get("print", global_ns.get("print", builtins.print))
    if found is not builtins.print:  # the user's own print
        return
    in_cell = call.lineno > 1  # a cell's line 1 is its magic line
    inner = [a for a in call.args if not isinstance(a, ast.Starred)]
    write = "end the cell with" if in_cell else "write"
    suggestion = (
        f"{write} the call itself: {ast.unparse(inner[0])}"
        if len(inner) == 1 and isinstance(inner[0], ast.Call) and not call.keywords
        else f"{write} the call whose result you want"
    )
    raise _fail(
        "parse",
        "UsageError",
        f"{'the last line, ' + text + ',' if in_cell else text} returns None: print shows "
        f"a value and returns nothing, so there is no result to inspect; {suggestion}",
        filename,
        call.lineno,
        text,
    )


def _evaluate_call(
    call: ast.Call, filename: str, global_ns: dict[str, Any], user_ns: dict[str, Any], text: str
) -> CapturedCall:
    _refuse_print(call, filename, global_ns, user_ns, text)
    expr = ast.Expression(body=_call_parts(call))
    code = compile(expr, filename, "eval")
    try:
        with interruptible("evaluating the call's arguments"):
            fn, args, kwargs = eval(code, global_ns, user_ns)
    except Exception as exc:
        raise CellError(report(exc, "arguments")) from None
    if not callable(fn):
        raise _fail(
            "arguments",
            "TypeError",
            f"{ast.unparse(call.func)} is a {type(fn).__name__}, not a function",
            filename,
            call.lineno,
            text,
        )
    return CapturedCall(
        fn=fn,
        args=tuple(args),
        kwargs=dict(kwargs),
        call_text=text,
        filename=filename,
        line=call.lineno,
    )


def capture_call(shell: Any, line: str, cell: str | None, expr: str, magic: str) -> CapturedCall:
    """The call a line magic (``%m f(x)``: ``expr``) or a cell magic (``%%m``: the cell's
    last line, after the body ran) is about; what every call-inspecting magic starts with."""
    if cell is None:
        return parse_call_expression(shell, expr, magic)
    return run_cell_capturing_call(shell, line, cell, magic)


def trace_captured(
    captured: CapturedCall,
    transforms: list[str],
    static_argnums: tuple[int, ...],
    static_argnames: tuple[str, ...],
    compare: bool,
    backend: str | None = None,
    model: bool = True,
    scoped: bool = False,
) -> list[Inspection]:
    """Build the inspections and trace them now, so errors surface in the cell (the same
    stages as ``workbench.jaxpr``/``hlo``: :func:`~workbench.api.tracing.trace_stages`)."""
    try:
        with interruptible(f"while tracing {captured.call_text}", captured):
            return trace_stages(
                captured.fn,
                captured.args,
                captured.kwargs,
                transforms,
                static_argnums,
                static_argnames,
                compare=compare,
                backend=backend,
                model=model,
                scoped=scoped,
            )
    except (TransformError, BackendUnavailable) as exc:
        raise UsageError(str(exc)) from None


def trace_for_compile(
    captured: CapturedCall, args: argparse.Namespace, backend: str | None = None
) -> Inspection:
    """The one stage a compiling magic (``%%hlo``, ``%%jaxmem``, ``%jaxprof --compile``)
    works on: traced with the flags of :func:`~workbench.ipython.args.trace_arguments`,
    scoped (the user's calls named in the op_names, which the views group by), without
    the model (only jaxpr's views draw it)."""
    (ins,) = trace_captured(
        captured,
        args.transform,
        argnums(args.static_argnums),
        argnames(args.static_argnames),
        compare=False,
        backend=backend,
        model=False,
        scoped=True,
    )
    return ins


def at_call(rep: ErrorReport, captured: CapturedCall) -> ErrorReport:
    """Errors raised inside JAX itself (e.g. grad of a non-scalar) point at the call line."""
    if rep.where is None:
        rep.where = SourceLine(captured.filename, captured.line, "<cell>", captured.call_text)
    return rep
