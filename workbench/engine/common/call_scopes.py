"""Name each call of the user's functions in the op_names of the workbench's own trace.

XLA's op_name of an instruction is JAX's name stack: the transforms and the
``jax.named_scope`` scopes around the operation, e.g. ``jit(loss)/jvp(loss)/dot_general``.
A model written as a Python ``for`` loop over blocks leaves no trace of its blocks there,
so a view can only guess which instructions belong to which block.  During the
workbench's own trace for ``%%hlo`` (never a call of the user's), :func:`scoped_calls`
enters ``jax.named_scope(f"{name}#{k}")`` around every call of a function of the user's
code, so the op_names read ``jit(loss)/jvp(loss#0)/transformer#0/block#2/dot_general``
and, for the backward pass, ``jit(loss)/transpose(jvp(loss#0))/transformer#0/block#2/...``.

The contract the views rely on (the TypeScript clustering reads it):

- a segment is ``NAME#K``: ``NAME`` the function's ``__name__``; for a method named
  ``__call__`` the class name of its instance (``Block``, ``MLP``, ``Linear``);
- ``K`` counts from 0 per (enclosing scope path, ``NAME``) and restarts with each trace:
  every block has ``layernorm#0`` and ``layernorm#1`` whatever other code does, and a
  change of the loss's last line renames nothing else;
- the user's own ``jax.named_scope`` scopes appear unchanged.

"User code" is a function whose file is a notebook cell the workbench knows, or a file
outside the standard library, site-packages/dist-packages, JAX/jaxlib and the workbench
itself; names starting with ``<`` (lambdas, comprehensions, ``<module>``), dunder methods
other than ``__call__`` and generators are left out.  The ``__call__`` of Flax NNX and
Equinox layers (``nnx.Linear``, ``eqx.nn.MLP``) is named too, by class.

Two hooks see the calls: ``sys.monitoring`` (Python >= 3.12: ``PY_START``/``PY_RETURN``/
``PY_UNWIND`` on a free tool id; every code location that is not the user's is disabled
at its first event, so JAX's own code stops costing, except beside another tool such as
coverage, whose disabled locations the ``restart_events()`` undoing ours would wake) and
``sys.setprofile`` (Python 3.11, and the fallback when no tool id is free).  Only the
tracing thread's calls are scoped; a profile function already set is chained and
restored; nothing is left behind when the trace raises.  ``benchmarks/bench_scoped_trace.py`` measures both.
"""

from __future__ import annotations

import contextlib
import os
import site
import sys
import sysconfig
import threading
import types
from collections.abc import Callable, Iterator
from typing import Any

import jax

from workbench.engine import _jax_compat as compat
from workbench.engine.common.source import cell_label

_GENERATOR_FLAGS = 0x20 | 0x80 | 0x100 | 0x200  # generator, coroutine, iterable coro, async gen
_PACKAGE_DIR = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__)))) + os.sep

#: the hook kinds :func:`scoped_calls` can use, cheapest first (see the benchmark)
HOOKS = ("monitoring", "setprofile")


def _library_dirs() -> tuple[str, ...]:
    """Folders whose code is never the user's: the standard library, site-packages,
    JAX/jaxlib and this package."""
    dirs: set[str] = set()
    for key in ("stdlib", "platstdlib", "purelib", "platlib"):
        path = sysconfig.get_paths().get(key)
        if path:
            dirs.add(os.path.abspath(path) + os.sep)
    with contextlib.suppress(Exception):
        dirs.update(os.path.abspath(p) + os.sep for p in site.getsitepackages())
    with contextlib.suppress(Exception):
        user_site = site.getusersitepackages()
        if isinstance(user_site, str):
            dirs.add(os.path.abspath(user_site) + os.sep)
    dirs.update(compat.jax_dirs())
    dirs.add(_PACKAGE_DIR)
    return tuple(sorted(dirs))


_LIBRARY_DIRS: tuple[str, ...] | None = None
_LAYER_DIRS: tuple[str, ...] | None = None
#: file name -> its code is the user's (cells aside: a cell is asked each time it is new)
_USER_FILES: dict[str, bool] = {}

_SKIP, _FUNCTION, _CALL = 0, 1, 2


def _user_file(filename: str) -> bool:
    known = _USER_FILES.get(filename)
    if known is not None:
        return known
    global _LIBRARY_DIRS
    if _LIBRARY_DIRS is None:
        _LIBRARY_DIRS = _library_dirs()
    if cell_label(filename) is not None:
        mine = True
    elif not filename or filename.startswith("<"):
        return False  # exec'd code, a shell's cell not (yet) registered: asked again later
    else:
        path = os.path.abspath(filename)
        mine = not path.startswith(_LIBRARY_DIRS) and (
            "site-packages" not in path and "dist-packages" not in path
        )
    if len(_USER_FILES) > 20_000:
        _USER_FILES.clear()
    _USER_FILES[filename] = mine
    return mine


def _layer_file(filename: str) -> bool:
    global _LAYER_DIRS
    if _LAYER_DIRS is None:
        _LAYER_DIRS = compat.library_layer_dirs()
    return bool(_LAYER_DIRS) and os.path.abspath(filename).startswith(_LAYER_DIRS)


def classify(code: types.CodeType) -> int:
    """How a call of ``code`` is scoped: not at all, by its name, or (a ``__call__``) by
    the class of its instance."""
    name = code.co_name
    if name.startswith("<") or code.co_flags & _GENERATOR_FLAGS:
        return _SKIP
    if name == "__call__":
        if code.co_argcount < 1:
            return _SKIP
        return _CALL if _user_file(code.co_filename) or _layer_file(code.co_filename) else _SKIP
    if name.startswith("__") and name.endswith("__"):
        return _SKIP
    return _FUNCTION if _user_file(code.co_filename) else _SKIP


def _instance_class(frame: types.FrameType | None, code: types.CodeType) -> str | None:
    """The class name of the instance a ``__call__`` frame runs on (its first argument)."""
    if frame is None or frame.f_code is not code:
        return None
    try:
        this = frame.f_locals.get(code.co_varnames[0])
    except Exception:
        return None
    name = type(this).__name__ if this is not None else None
    return name if name and not name.startswith("<") else None


class _Scopes:
    """The scopes entered for the tracing thread: a stack of (key, context manager or None
    for a call left unnamed), the scope path, and the per-(path, name) counters of this
    trace.  ``root``: the name of the traced function, whose own call is left unnamed
    where JAX's ``jit(root)`` already names every op of it (see :func:`scoped_calls`)."""

    __slots__ = ("counters", "owner", "path", "root", "stack")

    def __init__(self, root: str | None = None) -> None:
        self.owner = threading.get_ident()
        self.stack: list[tuple[Any, Any]] = []
        self.path: tuple[str, ...] = ()
        self.counters: dict[tuple[tuple[str, ...], str], int] = {}
        self.root = root

    def enter(self, key: Any, name: str) -> None:
        if name == self.root and not self.stack and compat.name_stack_empty():
            self.root = None  # once: the traced function's own call, nothing around it
            self.stack.append((key, None))
            return
        counted = (self.path, name)
        k = self.counters.get(counted, 0)
        self.counters[counted] = k + 1
        segment = f"{name}#{k}"
        scope = jax.named_scope(segment)
        scope.__enter__()
        self.stack.append((key, scope))
        self.path = (*self.path, segment)

    def exit(self, key: Any) -> None:
        if self.stack and self.stack[-1][0] is key:
            _, scope = self.stack.pop()
            if scope is not None:
                self.path = self.path[:-1]
                scope.__exit__(None, None, None)

    def close(self) -> None:
        """Leave every scope still open (the trace raised where no return was seen)."""
        while self.stack:
            _, scope = self.stack.pop()
            if scope is not None:
                with contextlib.suppress(Exception):
                    scope.__exit__(None, None, None)
        self.path = ()


# -- sys.setprofile ----------------------------------------------------------------------
def _chainable(previous: Any) -> bool:
    """A profile function this hook can call in turn (a Python function or method); a C
    profiler (``cProfile`` on Python 3.11) is not: then nothing is scoped."""
    return previous is None or isinstance(previous, (types.FunctionType, types.MethodType))


@contextlib.contextmanager
def _profile_hook(scopes: _Scopes) -> Iterator[bool]:
    previous: Any = sys.getprofile()
    if not _chainable(previous):
        yield False
        return
    kinds: dict[types.CodeType, int] = {}

    def hook(frame: types.FrameType, event: str, arg: Any) -> None:
        if previous is not None:
            previous(frame, event, arg)
        if event == "call":
            code = frame.f_code
            kind = kinds.get(code)
            if kind is None:
                kind = kinds[code] = classify(code)
            if kind == _FUNCTION:
                scopes.enter(frame, code.co_name)
            elif kind == _CALL:
                name = _instance_class(frame, code)
                if name is not None:
                    scopes.enter(frame, name)
        elif event == "return" and scopes.stack and scopes.stack[-1][0] is frame:
            scopes.exit(frame)  # also when an exception unwinds the frame

    sys.setprofile(hook)
    try:
        yield True
    finally:
        sys.setprofile(previous)


# -- sys.monitoring ----------------------------------------------------------------------
def _free_tool_id() -> int | None:
    mon = getattr(sys, "monitoring", None)
    if mon is None:
        return None
    for tool in (4, 3, 5):  # ids Python names no purpose for first, then "optimizer"
        if mon.get_tool(tool) is None:
            return tool
    return None


@contextlib.contextmanager
def _monitoring_hook(scopes: _Scopes) -> Iterator[bool]:
    mon: Any = getattr(sys, "monitoring")  # noqa: B009 - Python 3.12+ only
    tool = _free_tool_id()
    if tool is None:
        yield False
        return
    events = mon.events
    # DISABLE makes JAX's own code stop costing; the locations it disables stay disabled
    # for this tool id after it is freed (Python 3.12), and only ``restart_events()``,
    # which re-enables every tool's, undoes that.  Beside another tool (coverage, a
    # debugger) that would re-enable what it disabled: there nothing is disabled (each
    # call costs a callback) and nothing is restarted.
    alone = all(mon.get_tool(t) is None for t in range(6) if t != tool)
    disable = mon.DISABLE if alone else None
    owner = scopes.owner
    get_ident = threading.get_ident
    getframe = sys._getframe
    kinds: dict[types.CodeType, int] = {}

    def start(code: types.CodeType, offset: int) -> Any:
        kind = kinds.get(code)
        if kind is None:
            kind = kinds[code] = classify(code)
        if kind == _SKIP:
            return disable  # JAX's and Python's own code: never again for this tool
        if get_ident() != owner:
            return None
        if kind == _FUNCTION:
            scopes.enter(code, code.co_name)
        else:
            name = _instance_class(getframe(1), code)
            if name is not None:
                scopes.enter(code, name)
        return None

    def stop(code: types.CodeType, offset: int, value: Any) -> Any:
        if scopes.stack and scopes.stack[-1][0] is code and get_ident() == owner:
            scopes.exit(code)
            return None
        kind = kinds.get(code)
        if kind is None:  # a frame that started before the hook (never one it scoped)
            kind = kinds[code] = classify(code)
        return disable if kind == _SKIP else None

    def unwind(code: types.CodeType, offset: int, exc: BaseException) -> None:
        if scopes.stack and scopes.stack[-1][0] is code and get_ident() == owner:
            scopes.exit(code)

    mon.use_tool_id(tool, "jax-workbench call scopes")
    try:
        mon.register_callback(tool, events.PY_START, start)
        mon.register_callback(tool, events.PY_RETURN, stop)
        mon.register_callback(tool, events.PY_UNWIND, unwind)
        mon.set_events(tool, events.PY_START | events.PY_RETURN | events.PY_UNWIND)
        yield True
    finally:
        mon.set_events(tool, 0)
        for event in (events.PY_START, events.PY_RETURN, events.PY_UNWIND):
            mon.register_callback(tool, event, None)
        mon.free_tool_id(tool)
        if alone:  # no other tool's disabled locations to wake (see above)
            mon.restart_events()


def default_hook() -> str:
    """The hook :func:`scoped_calls` uses here: ``sys.monitoring`` where Python has it."""
    return "monitoring" if hasattr(sys, "monitoring") else "setprofile"


#: the threads inside :func:`scoped_calls` (one hook per thread: a nested call adds none)
_ACTIVE: set[int] = set()

_HOOKS: dict[str, Callable[[_Scopes], contextlib.AbstractContextManager[bool]]] = {
    "monitoring": _monitoring_hook,
    "setprofile": _profile_hook,
}


@contextlib.contextmanager
def scoped_calls(hook: str | None = None, root: str | None = None) -> Iterator[bool]:
    """Inside the block, every call of the user's code on this thread runs inside
    ``jax.named_scope("NAME#K")`` (see the module docstring), and JAX's trace caches miss
    (:func:`~workbench.engine._jax_compat.fresh_trace_caches`), so a function the user
    already called is traced again, with its calls seen.  Yields whether calls are
    scoped (False where no hook can be installed: the block then runs as it would).

    ``root``, the name of the function traced, leaves that function's own call unnamed
    where nothing (no transform, no scope) is around it: ``jit(f)/f#0/sin`` on every op
    would repeat what JAX's ``jit(f)`` says.  Under a transform it stays named:
    ``jit(loss)/jvp(loss#0)/...`` and ``transpose(jvp(loss#0))`` say forward and
    backward for the ops written in ``loss`` itself.

    Only the workbench's own traces may run in here: the scopes change the op_names of
    what is traced, and the trace is a new entry of JAX's caches.
    """
    kind = hook or default_hook()
    if kind == "monitoring" and not hasattr(sys, "monitoring"):
        kind = "setprofile"
    thread = threading.get_ident()
    if thread in _ACTIVE:  # already inside one (a front door called from a traced function)
        yield False
        return
    scopes = _Scopes(root)
    _ACTIVE.add(thread)
    try:
        with compat.fresh_trace_caches():
            try:
                with _HOOKS[kind](scopes) as on:
                    if not on and kind == "monitoring":
                        with _profile_hook(scopes) as on:
                            yield on
                    else:
                        yield on
            finally:
                scopes.close()
    finally:
        _ACTIVE.discard(thread)


__all__ = ["HOOKS", "classify", "default_hook", "scoped_calls"]
