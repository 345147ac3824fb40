"""IPython front door of the cache feature: the cell line, ``%jaxcache``, ``%workbench``.

Thin by design: :class:`CellCompiles` tells the engine's cache tracker which cell is
running (called from the shell session's ``pre_run_cell``/``post_run_cell`` hooks), and
after each cell the tracker's summary of that cell goes to the view.  Everything installed
is undone on ``%unload_ext``: the tracker's JAX listeners and log filter, the magics, and
the JAX configuration changed by ``%jaxcache persist``.  ``jax_explain_cache_misses`` is
turned on only for the cell's own thread while a cell runs (so its global value stays
the user's: if they turn it on, they see JAX's messages).
"""

from __future__ import annotations

from typing import Any

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


class CellCompiles:
    """The cache feature's part of one shell's cells: which cell the tracker attributes
    compiles to, JAX's miss explanations while it runs, and the compile line after it.

    Owned by the shell's :class:`~workbench.ipython.session.Session`, which calls
    :meth:`begin_cell` and :meth:`end_cell` from its own IPython hooks (in the order it
    documents) and :meth:`install`/:meth:`uninstall` on load and unload.
    """

    def __init__(self, shell: Any) -> None:
        self.shell = shell
        #: ``%workbench timings on|off``: the compile line beside each cell that compiled
        self.timings = True
        self._explain_token: tuple[Any] | None = None
        self._run: int | None = None
        self._label = ""
        self._cell_id: str | None = None

    def install(self) -> None:
        CACHE.install()

    def uninstall(self) -> None:
        """Everything :meth:`install` and a running cell set up goes (the tracker's
        listeners are reference-counted: another shell's stay)."""
        if self._run is not None:
            CACHE.end_cell()
            self._run = None
        CACHE.stop_explaining(self._explain_token)
        self._explain_token = None
        CACHE.uninstall()
        restore_persistent_cache()

    def begin_cell(self) -> tuple[str, str | None]:
        """A cell starts: compiles from now on are its own.  Returns its ``(label, cell_id)``."""
        self._label = str(prompt_number(self.shell, before_run=True))
        self._cell_id = current_cell_id(self.shell)
        self._run = CACHE.begin_cell(self._label, self._cell_id)
        # JAX's own explanations, read from its logger, refine our reasons (e.g. a
        # changed tracing context); printed only if the user asked for them globally.
        if self._explain_token is None:
            self._explain_token = CACHE.explain_on_this_thread()
        return self._label, self._cell_id

    def end_cell(self, result: Any = None) -> tuple[int, str, str | None] | None:
        """The cell ended: its records are complete and carry the cell's final label
        (IPython knows the number for sure only now).  Returns ``(run, label, cell_id)``,
        or None when no cell was begun (the one that loaded the extension)."""
        CACHE.stop_explaining(self._explain_token)
        self._explain_token = None
        if self._run is None:
            return None
        CACHE.end_cell()
        run, self._run = self._run, None
        count = getattr(result, "execution_count", None)
        if count is not None and str(count) != self._label:
            self._label = str(count)
            CACHE.relabel_cell(run, self._label)
        return run, self._label, self._cell_id

    def show_compile_line(self, run: int, label: str) -> None:
        """The line beside a cell that compiled (``%workbench timings off`` hides it)."""
        if not self.timings:
            return
        summary = CACHE.cell_summary(run, label)
        if not summary.empty:
            display(cell_line_display(summary))


@magics_class
class CacheMagics(Magics):
    """``%jaxcache`` and ``%workbench timings on|off``."""

    def __init__(self, shell: Any, cells: CellCompiles) -> None:
        super().__init__(shell)
        self.cells = cells

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
            self.cells.timings = args.state == "on"
            return
        print(f"workbench timings: {'on' if self.cells.timings else 'off'}")


__all__ = ["CacheMagics", "CellCompiles"]
