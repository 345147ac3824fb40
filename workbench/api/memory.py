"""``workbench.memory()``: the Python twin of ``%jaxmem`` (who holds the live device
arrays), and the shell-side roots and free actions both doors share.

The roots a walk starts from are the running shell's: its user names (not IPython's own),
its output history (``Out``, ``_``, ``__``, ``___``, ``_N``) and the last exception's
traceback (``sys.last_traceback`` and the copy IPython's traceback formatter keeps).
Without a shell, the caller's globals are the names.
"""

from __future__ import annotations

import re
import sys
from typing import Any

from workbench.engine.memory.owners import (
    BUDGET_S,
    Freed,
    LiveMemory,
    Root,
    drop_last_exception,
    freed_by,
    history_roots,
    live_memory,
    namespace_roots,
    traceback_roots,
)
from workbench.views.display import Display
from workbench.views.memory import live_display

#: the names IPython puts in a user namespace (outputs and inputs it numbers, its helpers)
_IPYTHON_NAME = re.compile(r"^(_+|_\d+|_i+\d*|_ih|_oh|_dh|In|Out|exit|quit|get_ipython)$")


def current_shell() -> Any:
    """The running IPython shell, or None."""
    try:
        from IPython import get_ipython
    except ImportError:  # pragma: no cover - IPython comes with Jupyter
        return None
    return get_ipython()


def user_names(shell: Any) -> dict[str, Any]:
    """The shell's user namespace without what IPython itself put there."""
    hidden = shell.user_ns_hidden
    return {
        k: v
        for k, v in shell.user_ns.items()
        if not _IPYTHON_NAME.match(k) and not (k in hidden and hidden[k] is v)
    }


def _blank(value: Any) -> bool:
    """Whether a history slot (``_``, ``__``, ``___``) holds nothing: ``None`` or the
    empty string IPython resets it to.  By type, never ``in``/``==``: a NumPy array there
    compares elementwise and has no truth value."""
    return value is None or (isinstance(value, str) and not value)


def _outputs(shell: Any) -> dict[int, Any]:
    out = getattr(getattr(shell, "history_manager", None), "output_hist", None)
    return dict(out) if isinstance(out, dict) else {}


def shell_roots(shell: Any) -> list[Root]:
    """Every root of ``%jaxmem`` in ``shell``, in the order they claim an array."""
    ns = shell.user_ns
    outputs = _outputs(shell)
    underscores = {k: ns.get(k) for k in ("_", "__", "___")}
    underscores.update({f"_{n}": ns[f"_{n}"] for n in outputs if f"_{n}" in ns})
    hidden = getattr(shell, "user_ns_hidden", {})
    for k in ("_", "__", "___"):
        kept = hidden.get(k)
        if not _blank(kept) and all(kept is not v for v in underscores.values()):
            underscores[f"{k} (IPython's copy)"] = kept
    # the previous cell's result, which IPython keeps until this cell ends
    last = getattr(getattr(shell, "last_execution_result", None), "result", None)
    if last is not None and all(last is not v for v in underscores.values()):
        underscores["the last cell's result"] = last
    roots = namespace_roots(user_names(shell)) + history_roots(outputs, underscores)
    roots += traceback_roots()
    kept = getattr(getattr(shell, "InteractiveTB", None), "tb", None)
    if kept is not None and kept is not getattr(sys, "last_traceback", None):
        roots += traceback_roots(kept, exc=())
    return roots


def history_holds_anything(shell: Any) -> bool:
    ns = shell.user_ns
    return bool(_outputs(shell)) or any(not _blank(ns.get(k)) for k in ("_", "__", "___"))


def _clear_history(shell: Any) -> None:
    last = getattr(shell, "last_execution_result", None)
    if last is not None and getattr(last, "result", None) is not None:
        last.result = None
    dh = shell.displayhook
    if getattr(dh, "do_full_cache", False):
        dh.flush()  # IPython's own %reset out: Out, _N, its _/__/___
    out = getattr(getattr(shell, "history_manager", None), "output_hist", None)
    if isinstance(out, dict):
        out.clear()
    # flush leaves the namespace's _/__/___ when builtins has a ``_`` (gettext's), and
    # IPython's own copies of them (``user_ns_hidden``) always
    blank = {"_": "", "__": "", "___": ""}
    shell.user_ns.update(blank)
    hidden = getattr(shell, "user_ns_hidden", None)
    if isinstance(hidden, dict):
        hidden.update({k: v for k, v in blank.items() if k in hidden})


def free_history(shell: Any) -> Freed:
    """Clear the output history (``Out``, ``_``, ``__``, ``___``, ``_N``: IPython's
    ``%reset out``); the arrays and bytes that freed, measured."""
    if not history_holds_anything(shell):
        return Freed("history", 0, 0, "--free-history: the output history is empty; nothing freed")
    freed = freed_by(lambda: _clear_history(shell), "history")
    if not freed.arrays:
        freed.note = "--free-history: the output history held no device arrays; nothing freed"
    return freed


def _clear_traceback(shell: Any) -> None:
    drop_last_exception()
    for name in ("InteractiveTB", "SyntaxTB"):
        formatter = getattr(shell, name, None) if shell is not None else None
        if formatter is not None and getattr(formatter, "tb", None) is not None:
            formatter.tb = None


def free_traceback(shell: Any) -> Freed:
    """Forget the last exception (its traceback's frames keep every local of the failed
    call alive); the arrays and bytes that freed, measured."""
    had = getattr(sys, "last_traceback", None) is not None or (
        shell is not None and getattr(getattr(shell, "InteractiveTB", None), "tb", None)
    )
    if not had:
        return Freed(
            "traceback", 0, 0, "--free-traceback: there is no last exception; nothing freed"
        )
    freed = freed_by(lambda: _clear_traceback(shell), "traceback")
    if not freed.arrays:
        freed.note = "--free-traceback: the last exception held no device arrays; nothing freed"
    return freed


def live_report(
    shell: Any,
    names: dict[str, Any] | None = None,
    free_hist: bool = False,
    free_tb: bool = False,
    budget_s: float = BUDGET_S,
) -> LiveMemory:
    """The free actions asked for (in that order), then the report."""
    freed = []
    if free_hist:
        if shell is None:
            freed.append(Freed("history", 0, 0, "--free-history: no IPython shell; nothing freed"))
        else:
            freed.append(free_history(shell))
    if free_tb:
        freed.append(free_traceback(shell))
    if shell is not None and names is None:
        roots = shell_roots(shell)
    else:
        roots = namespace_roots(names or {}) + traceback_roots()
    rep = live_memory(roots, budget_s)
    roots.clear()
    rep.freed = freed
    return rep


def memory(
    free_history: bool = False,
    free_traceback: bool = False,
    budget_s: float = BUDGET_S,
    text: bool = False,
) -> Display[LiveMemory]:
    """Every live device array, grouped by what keeps it alive, largest first.

    The Python twin of ``%jaxmem``: in IPython the shell's names, output history and last
    exception; elsewhere the caller's globals.  ``free_history``/``free_traceback`` first
    drop those references and report the bytes that freed.  ``.report`` is the record; it
    holds no array.
    """
    shell = current_shell()
    names = None
    if shell is None:
        frame = sys._getframe(1)
        names = dict(frame.f_globals)
        del frame
    rep = live_report(shell, names, free_history, free_traceback, budget_s)
    if names is not None:
        names.clear()
    return live_display(rep, text_only=text)


__all__ = [
    "free_history",
    "free_traceback",
    "live_report",
    "memory",
    "shell_roots",
    "user_names",
]
