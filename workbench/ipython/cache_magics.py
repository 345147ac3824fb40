"""IPython front door of the compile ledger: the cell line, ``%jaxcache``, ``%workbench``.

Thin by design: the IPython ``pre_run_cell``/``post_run_cell`` hooks tell the engine's
ledger which cell is running, and after each cell the ledger's summary of that
cell goes to the view.  Everything installed here is undone by :func:`unload`:
the hooks, the ledger's JAX listeners and log filter, the magics, and the JAX
configuration changed by ``%jaxcache persist``.  ``jax_explain_cache_misses`` is
turned on only for the cell's own thread while a cell runs (so its global value stays
the user's: if they turn it on, they see JAX's messages).
"""

from __future__ import annotations

from typing import Any

from IPython.core.error import UsageError
from IPython.core.magic import Magics, line_magic, magics_class
from IPython.core.magic_arguments import argument, magic_arguments
from IPython.display import display

from workbench.engine.cache.ledger import LEDGER, LedgerSnapshot
from workbench.engine.cache.persistent import enable_persistent_cache, restore_persistent_cache
from workbench.ipython.args import parse_magic_line, usage_line
from workbench.views.cache import cell_line_display, ledger_display, persistent_display


class Observatory:
    """The per-shell state: hooks, the timings switch, the JAX config to restore."""

    def __init__(self, shell: Any) -> None:
        self.shell = shell
        self.timings = True
        self._explain_token: tuple[Any] | None = None
        self._run: int | None = None
        self._label = ""

    def load(self) -> None:
        LEDGER.install()
        self.shell.events.register("pre_run_cell", self.pre_run_cell)
        self.shell.events.register("post_run_cell", self.post_run_cell)

    def unload(self) -> None:
        for name, cb in (("pre_run_cell", self.pre_run_cell),
                         ("post_run_cell", self.post_run_cell)):
            try:
                self.shell.events.unregister(name, cb)
            except ValueError:
                pass
        if self._run is not None:
            LEDGER.end_cell()
            self._run = None
        LEDGER.stop_explaining(self._explain_token)
        self._explain_token = None
        LEDGER.uninstall()
        restore_persistent_cache()

    def pre_run_cell(self, info: Any = None) -> None:
        self._label = str(self.shell.execution_count)
        self._run = LEDGER.begin_cell(self._label)
        # JAX's own explanations, read from its logger, refine our reasons (e.g. a
        # changed tracing context); printed only if the user asked for them globally.
        if self._explain_token is None:
            self._explain_token = LEDGER.explain_on_this_thread()

    def post_run_cell(self, result: Any = None) -> None:
        LEDGER.stop_explaining(self._explain_token)
        self._explain_token = None
        if self._run is None:
            return
        LEDGER.end_cell()
        run, self._run = self._run, None
        count = getattr(result, "execution_count", None)
        if count is not None and str(count) != self._label:
            self._label = str(count)
            LEDGER.relabel_cell(run, self._label)
        if not self.timings:
            return
        summary = LEDGER.cell_summary(run, self._label)
        if not summary.empty:
            display(cell_line_display(summary))


@magics_class
class ObservatoryMagics(Magics):
    """``%jaxcache`` and ``%workbench timings on|off``."""

    def __init__(self, shell: Any, observatory: Observatory) -> None:
        super().__init__(shell)
        self.observatory = observatory

    @magic_arguments()
    @argument("command", nargs="?", choices=("clear", "persist"), metavar="clear|persist",
              help="clear: empty JAX's compilation caches and the ledger; "
                   "persist: JAX's persistent compilation cache (below)")
    @argument("directory", nargs="?", metavar="DIR|off",
              help="persist DIR: turn the persistent cache on in DIR; persist off: put the "
                   "previous settings back; persist alone: its settings and hits/misses")
    @argument("--min-compile-time", type=float, default=None, metavar="SECONDS",
              help="persist DIR: write programs that took at least this long to compile "
                   "(0: all of them)")
    @argument("--min-entry-size", type=int, default=None, metavar="BYTES",
              help="persist DIR: write entries of at least this many bytes")
    @line_magic
    def jaxcache(self, line: str = "") -> Any:
        """Every jitted function seen in this kernel: cache entries, compiles, time, misses.

        ``%jaxcache clear`` empties JAX's caches (``jax.clear_caches()``) and the ledger.
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
            return ledger_display(LEDGER.snapshot())
        if args.command == "clear":
            LEDGER.clear_caches()
            print("Cleared JAX's compilation caches and the compile ledger.")
            return None
        if args.directory == "off":
            restore_persistent_cache()
        elif args.directory is not None:
            try:
                enable_persistent_cache(args.directory, args.min_compile_time,
                                        args.min_entry_size)
            except OSError as exc:
                raise UsageError(f"cannot use {args.directory!r} as the cache: {exc}") from None
        return persistent_display(LEDGER.persistent_status())

    @magic_arguments()
    @argument("setting", nargs="?", choices=("timings",), metavar="timings",
              help="the compile line shown beside each cell that compiled")
    @argument("state", nargs="?", choices=("on", "off"), metavar="on|off",
              help="turn it on (the default) or off; without it, print whether it is on")
    @line_magic
    def workbench(self, line: str = "") -> None:
        """``%workbench timings on|off``: the compile line beside each cell (on by default)."""
        args, _ = parse_magic_line(self.workbench, line)
        if args.state is not None:
            self.observatory.timings = args.state == "on"
            return
        print(f"workbench timings: {'on' if self.observatory.timings else 'off'}")


_OBSERVATORIES: dict[int, tuple[Observatory, ObservatoryMagics]] = {}


def _snapshot_bundle(snap: LedgerSnapshot, include: Any = None, exclude: Any = None) -> Any:
    return ledger_display(snap)._repr_mimebundle_(include, exclude)


def load(shell: Any) -> Observatory:
    """Install the observatory in ``shell`` (idempotent)."""
    if id(shell) in _OBSERVATORIES:
        return _OBSERVATORIES[id(shell)][0]
    obs = Observatory(shell)
    obs.load()
    magics = ObservatoryMagics(shell, obs)
    shell.register_magics(magics)
    shell.display_formatter.mimebundle_formatter.for_type(LedgerSnapshot, _snapshot_bundle)
    _OBSERVATORIES[id(shell)] = (obs, magics)
    return obs


def unload(shell: Any) -> None:
    """Remove everything :func:`load` installed from ``shell``."""
    entry = _OBSERVATORIES.pop(id(shell), None)
    if entry is None:
        return
    obs, magics = entry
    obs.unload()
    registered = shell.magics_manager.magics["line"]
    for name in ObservatoryMagics.magics["line"]:
        if getattr(registered.get(name), "__self__", None) is magics:
            registered.pop(name, None)
    shell.display_formatter.mimebundle_formatter.type_printers.pop(LedgerSnapshot, None)


__all__ = ["Observatory", "ObservatoryMagics", "load", "unload"]
