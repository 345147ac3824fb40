"""IPython front door of the cache feature: the cell line, ``%jaxcache``, ``%workbench``.

Thin by design: the IPython ``pre_run_cell``/``post_run_cell`` hooks tell the engine's
cache tracker which cell is running, and after each cell the tracker's summary of that
cell goes to the view.  Everything installed here is undone by :func:`unload`:
the hooks, the tracker's JAX listeners and log filter, the magics, and the JAX
configuration changed by ``%jaxcache persist``.  ``jax_explain_cache_misses`` is
turned on only for the cell's own thread while a cell runs (so its global value stays
the user's: if they turn it on, they see JAX's messages).
"""

from __future__ import annotations

import logging
from collections.abc import Callable
from typing import Any, cast

from IPython.core.error import UsageError
from IPython.core.magic import Magics, line_magic, magics_class
from IPython.core.magic_arguments import argument, magic_arguments
from IPython.display import display

from workbench.engine.cache import CACHE
from workbench.engine.cache.persistent import (
    PersistentCacheError,
    enable_persistent_cache,
    restore_persistent_cache,
)
from workbench.ipython.args import parse_magic_line, usage_line
from workbench.ipython.prompt import current_cell_id, prompt_number
from workbench.views.cache import cache_display, cell_line_display, persistent_display

_log = logging.getLogger(__name__)


class CellHooks:
    """The per-shell state: hooks, the timings switch, the JAX config to restore."""

    def __init__(self, shell: Any) -> None:
        self.shell = shell
        self.timings = True
        self._explain_token: tuple[Any] | None = None
        self._run: int | None = None
        self._label = ""
        #: told of each cell: ``(label, cell_id)`` when it starts, ``(run, label,
        #: cell_id)`` when it ended (final label, records complete); the side panel's
        #: hooks, called from these so %unload_ext has one set of IPython hooks to remove
        self.on_start: list[Callable[[str, str | None], None]] = []
        self.on_end: list[Callable[[int, str, str | None], None]] = []
        self._cell_id: str | None = None

    def load(self) -> None:
        CACHE.install()
        self.shell.events.register("pre_run_cell", self.pre_run_cell)
        self.shell.events.register("post_run_cell", self.post_run_cell)

    def unload(self) -> None:
        for name, cb in (
            ("pre_run_cell", self.pre_run_cell),
            ("post_run_cell", self.post_run_cell),
        ):
            try:
                self.shell.events.unregister(name, cb)
            except ValueError:
                pass
        if self._run is not None:
            CACHE.end_cell()
            self._run = None
        CACHE.stop_explaining(self._explain_token)
        self._explain_token = None
        CACHE.uninstall()
        restore_persistent_cache()

    def pre_run_cell(self, info: Any = None) -> None:
        self._label = str(prompt_number(self.shell, before_run=True))
        self._cell_id = current_cell_id(self.shell)
        self._run = CACHE.begin_cell(self._label, self._cell_id)
        _tell(self.on_start, self._label, self._cell_id)
        # JAX's own explanations, read from its logger, refine our reasons (e.g. a
        # changed tracing context); printed only if the user asked for them globally.
        if self._explain_token is None:
            self._explain_token = CACHE.explain_on_this_thread()

    def post_run_cell(self, result: Any = None) -> None:
        CACHE.stop_explaining(self._explain_token)
        self._explain_token = None
        if self._run is None:
            return
        CACHE.end_cell()
        run, self._run = self._run, None
        count = getattr(result, "execution_count", None)
        if count is not None and str(count) != self._label:
            self._label = str(count)
            CACHE.relabel_cell(run, self._label)
        _tell(self.on_end, run, self._label, self._cell_id)
        if not self.timings:
            return
        summary = CACHE.cell_summary(run, self._label)
        if not summary.empty:
            display(cell_line_display(summary))


def _tell(callbacks: list[Callable[..., None]], *args: Any) -> None:
    for cb in callbacks:
        try:
            cb(*args)
        except Exception:  # a listener's bug never breaks the user's cell
            _log.debug("cell hook listener failed", exc_info=True)


@magics_class
class CacheMagics(Magics):
    """``%jaxcache`` and ``%workbench timings on|off``."""

    def __init__(self, shell: Any, hooks: CellHooks) -> None:
        super().__init__(shell)
        self.hooks = hooks

    @magic_arguments()
    @argument(
        "command",
        nargs="?",
        choices=("clear", "persist"),
        metavar="clear|persist",
        help="clear: empty JAX's compilation caches and the records; "
        "persist: JAX's persistent compilation cache (below)",
    )
    @argument(
        "directory",
        nargs="?",
        metavar="DIR|off",
        help="persist DIR: turn the persistent cache on in DIR; persist off: put the "
        "previous settings back; persist alone: its settings and hits/misses",
    )
    @argument(
        "--min-compile-time",
        type=float,
        default=None,
        metavar="SECONDS",
        help="persist DIR: write programs that took at least this long to compile (0: all of them)",
    )
    @argument(
        "--min-entry-size",
        type=int,
        default=None,
        metavar="BYTES",
        help="persist DIR: write entries of at least this many bytes",
    )
    @line_magic
    def jaxcache(self, line: str = "") -> Any:
        """Every jitted function seen in this kernel: cache entries, compiles, time, misses.

        ``%jaxcache clear`` empties JAX's caches (``jax.clear_caches()``) and the records.
        ``%jaxcache persist DIR`` turns on JAX's persistent compilation cache in DIR
        (``--min-compile-time 0`` to cache small programs too) and shows its settings;
        ``%jaxcache persist`` shows them and its hits/misses; ``%jaxcache persist off``
        puts the previous settings back.
        """
        args, _ = parse_magic_line(self.jaxcache, line)
        thresholds = args.min_compile_time is not None or args.min_entry_size is not None
        usage = usage_line(self.jaxcache)
        if args.command == "clear" and (args.directory is not None or thresholds):
            raise UsageError(f"%jaxcache clear takes nothing more\n{usage}")
        if args.directory in (None, "off") and thresholds:
            raise UsageError(f"the thresholds go with %jaxcache persist DIR\n{usage}")
        if args.command is None:
            return cache_display(CACHE.snapshot())
        if args.command == "clear":
            CACHE.clear_caches()
            print("Cleared JAX's compilation caches and the cache records.")
            return None
        if args.directory == "off":
            restore_persistent_cache()
        elif args.directory is not None:
            try:
                enable_persistent_cache(args.directory, args.min_compile_time, args.min_entry_size)
            except PersistentCacheError as exc:
                raise UsageError(f"{exc}\n{usage}") from None
            except OSError as exc:
                raise UsageError(f"cannot use {args.directory!r} as the cache: {exc}") from None
        return persistent_display(CACHE.persistent_status())

    @magic_arguments()
    @argument(
        "setting",
        nargs="?",
        choices=("timings",),
        metavar="timings",
        help="the compile line shown beside each cell that compiled",
    )
    @argument(
        "state",
        nargs="?",
        choices=("on", "off"),
        metavar="on|off",
        help="turn it on (the default) or off; without it, print whether it is on",
    )
    @line_magic
    def workbench(self, line: str = "") -> None:
        """``%workbench timings on|off``: the compile line beside each cell (on by default)."""
        args, _ = parse_magic_line(self.workbench, line)
        if args.state is not None:
            self.hooks.timings = args.state == "on"
            return
        print(f"workbench timings: {'on' if self.hooks.timings else 'off'}")


_LOADED: dict[int, tuple[CellHooks, CacheMagics]] = {}


def hooks_for(shell: Any) -> CellHooks | None:
    """The shell's cell hooks while the cache feature is loaded."""
    entry = _LOADED.get(id(shell))
    return entry[0] if entry is not None else None


def load(shell: Any) -> CellHooks:
    """Install the cache feature's hooks and magics in ``shell`` (idempotent)."""
    if id(shell) in _LOADED:
        return _LOADED[id(shell)][0]
    hooks = CellHooks(shell)
    hooks.load()
    magics = CacheMagics(shell, hooks)
    shell.register_magics(magics)
    _LOADED[id(shell)] = (hooks, magics)
    return hooks


def unload(shell: Any) -> None:
    """Remove everything :func:`load` installed from ``shell``."""
    entry = _LOADED.pop(id(shell), None)
    if entry is None:
        return
    hooks, magics = entry
    hooks.unload()
    registered = shell.magics_manager.magics["line"]
    # IPython declares ``Magics.magics = None``; @magics_class fills in {kind: {name: ...}}
    for name in cast(dict[str, dict[str, Any]], CacheMagics.magics)["line"]:
        if getattr(registered.get(name), "__self__", None) is magics:
            registered.pop(name, None)


__all__ = ["CellHooks", "CacheMagics", "hooks_for", "load", "unload"]
