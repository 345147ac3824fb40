"""Run the tutorial notebooks the way a learner does, once per test session.

Conventions every notebook in ``notebooks/`` follows (``docs/tutorials.md`` says them for
authors):

- Exercises come last, under a ``## Exercises`` heading. Each is three code cells, in this
  order: the learner's cell (tag ``exercise``: a stub the learner replaces), the check
  (tag ``check``: ``assert`` statements on what the learner's cell defines) and the worked
  solution (tag ``solution``, collapsed with ``jupyter.source_hidden``).
- A cell that shows an error on purpose carries ``raises-exception`` (Jupyter's own tag).
- Notebooks are committed without outputs.

``run(name)`` executes a notebook top to bottom in a fresh kernel with 8 fake CPU devices,
with each exercise cell holding its solution (the learner's finished notebook) and the
solution cells left out. Then, in the same kernel, it runs each exercise's *stub* followed by
its check, which must fail: a check that passes on the stub checks nothing. Last, it reads
the kernel's peak resident memory (Binder gives a notebook 1-2 GB).
"""

from __future__ import annotations

import copy
import os
import tempfile
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import nbformat

from tests import run_once
from tests.browser import kernel_env
from tests.browser_fixtures import BROWSER_GROUP_B

ROOT = Path(__file__).resolve().parent.parent
NOTEBOOKS = ROOT / "notebooks"
TOUR = "00_tour"
TOPICS = [
    "01_tracing_and_jit",
    "02_autodiff",
    "03_vmap",
    "04_control_flow",
    "05_parallelism",
    "06_xla_fusion_and_memory",
    "07_benchmarking",
    "08_random_numbers",
]
ALL = [TOUR, *TOPICS]
TIME_LIMIT_S = 120.0  # per notebook, on CI's 2 cores
WORKBENCH_MIME = "application/vnd.jax-workbench."
# the payloads the notebooks' cells show, by the names the tutorial tests read them with
JAXPR = WORKBENCH_MIME + "jaxpr+json"
COMPARE = WORKBENCH_MIME + "jaxpr-compare+json"
HLO = WORKBENCH_MIME + "hlo+json"
CACHE_CELL = WORKBENCH_MIME + "cache-cell+json"  # a cell's compile lines
CACHE = WORKBENCH_MIME + "cache+json"  # the %jaxcache table
PERSISTENT = WORKBENCH_MIME + "cache-persistent+json"
BENCH = WORKBENCH_MIME + "bench+json"
SHARDING = WORKBENCH_MIME + "sharding+json"
PROFILE = WORKBENCH_MIME + "profile+json"
# the kernel's own high-water mark: Linux's VmHWM belongs to the process image, while
# getrusage's ru_maxrss survives fork+exec and so reports the (large) pytest process that
# started the kernel
PEAK_RSS_KIB_EXPR = (
    "next((int(l.split()[1]) for l in open('/proc/self/status') "
    "if l.startswith('VmHWM:')), None) if __import__('os').path.exists("
    "'/proc/self/status') else __import__('resource').getrusage("
    "__import__('resource').RUSAGE_SELF).ru_maxrss"
)
_PEAK_RSS_CODE = f"print('peak-rss-kib', {PEAK_RSS_KIB_EXPR})"


@dataclass
class Exercise:
    """The cell indices (in the committed notebook) of one exercise's three cells."""

    exercise: int
    check: int
    solution: int


@dataclass
class Run:
    name: str
    committed: Any  # the notebook as committed (no outputs)
    nb: Any  # executed: exercise cells hold their solutions, solution cells left out
    seconds: float  # kernel start to the last cell's reply
    exercises: list[Exercise]
    stub_errors: list[str | None] = field(default_factory=list)  # ename of each stub's check
    peak_rss_bytes: int = 0

    def code_cells(self) -> list[Any]:
        return [c for c in self.nb.cells if c.cell_type == "code"]

    def cells_starting(self, prefix: str) -> list[Any]:
        return [c for c in self.code_cells() if c.source.startswith(prefix)]

    def cell(self, prefix: str) -> Any:
        """The one executed code cell whose source starts with ``prefix``."""
        found = self.cells_starting(prefix)
        assert len(found) == 1, f"{self.name}: {len(found)} cells start with {prefix!r}"
        return found[0]

    def errors(self) -> list[tuple[Any, dict]]:
        return [(c, o) for c in self.code_cells() for o in c.outputs if o.output_type == "error"]

    def stderr(self) -> list[tuple[Any, str]]:
        return [
            (c, o.text)
            for c in self.code_cells()
            for o in c.outputs
            if o.output_type == "stream" and o.name == "stderr"
        ]


def path(name: str) -> Path:
    return NOTEBOOKS / f"{name}.ipynb"


def tags(cell: Any) -> list[str]:
    return list(cell.get("metadata", {}).get("tags", []))


def data_of(cell: Any, mime: str) -> list[Any]:
    """Every payload of type ``mime`` among the cell's outputs (displays and results), as a
    front end reads it: a packed payload (a big one) unpacked."""
    from workbench import schemas

    return [
        schemas.unpack(o["data"][mime]) if mime.endswith("+json") else o["data"][mime]
        for o in cell.outputs
        if mime in o.get("data", {})
    ]


def printed(cell: Any) -> str:
    return "".join(
        o.get("text", "") for o in cell.outputs if o.output_type == "stream" and o.name == "stdout"
    )


def find_exercises(nb: Any) -> list[Exercise]:
    """Pair the ``exercise``, ``check`` and ``solution`` cells, checking their order."""
    marks = [
        (i, t)
        for i, c in enumerate(nb.cells)
        for t in tags(c)
        if t in ("exercise", "check", "solution")
    ]
    found: list[Exercise] = []
    for k in range(0, len(marks), 3):
        group = marks[k : k + 3]
        assert [t for _, t in group] == ["exercise", "check", "solution"], (
            f"exercise cells out of order: {marks}"
        )
        found.append(Exercise(*(i for i, _ in group)))
    return found


def solved(committed: Any) -> Any:
    """A copy of the notebook as a learner finishes it: each exercise cell holding its
    solution, the solution cells left out."""
    found = find_exercises(committed)
    solutions = {e.exercise: committed.cells[e.solution].source for e in found}
    dropped = {e.solution for e in found}
    nb = copy.deepcopy(committed)
    cells = []
    for i, c in enumerate(nb.cells):
        if i in dropped:
            continue
        if i in solutions:
            c.source = solutions[i]
        cells.append(c)
    nb.cells = cells
    return nb


def one(cell: Any, mime: str) -> Any:
    """The one payload of type ``mime`` among the cell's outputs."""
    found = data_of(cell, mime)
    assert len(found) == 1, (cell.source[:60], len(found))
    return found[0]


def shown_jaxpr(run: Run, prefix: str) -> dict:
    """The one ``%jaxpr`` payload the cell starting with ``prefix`` shows."""
    (payload,) = data_of(run.cell(prefix), JAXPR)
    return payload


def shown_stages(run: Run, prefix: str) -> list[dict]:
    """The stages of the one ``%jaxpr --compare`` payload the cell starting with ``prefix``
    shows, in order."""
    (payload,) = data_of(run.cell(prefix), COMPARE)  # unpacked, its stages included
    return list(payload["stages"])


def histogram(closed: Any) -> dict[str, int]:
    """Primitive counts of a jaxpr made in the test process, nested jaxprs included: what a
    shown jaxpr's ``stats.histogram`` must hold for the same program."""
    from tests.programs import primitive_counts

    return primitive_counts(closed.jaxpr)


_cache: dict[str, Run] = {}
#: set (to anything) where the tutorials' checks must read the Binder simulation's runs
FROM_BINDER_ENV = "WORKBENCH_TEST_TUTORIALS_FROM_BINDER"


def xdist_group(name: str) -> str:
    """The ``xdist_group`` of every test that runs ``name``: under ``pytest-xdist``
    (``--dist loadgroup``; the suite runs ``--dist loadfile``, one module per worker) they go to one worker, which executes the notebook once.  The tour
    goes with the JupyterLab tests that open it in the browser."""
    return BROWSER_GROUP_B if name == TOUR else f"notebook-{name}"


def run(name: str) -> Run:
    """``name`` executed once per test session, as the tour's and each topic's own checks,
    the checks all tutorials share and the browser tests all read the same run.

    The Binder session's runs come first: ``tests/notebooks/test_binder.py`` executes the
    learner's notebook (:func:`learner_notebook`) in the virtualenv Binder's files install
    and :func:`remember` s it, so the tutorials' checks read what a Binder user gets.
    Otherwise the notebook is executed here with this environment's kernel, memoised in this
    process and shared with the session's other workers (``tests/run_once.py``), unless
    ``FROM_BINDER_ENV`` is set (noxfile.py's binder session): then a tutorial Binder did not
    run is an error, not a second, silent run of it in another environment."""
    if name not in _cache:
        if os.environ.get(FROM_BINDER_ENV):
            raise RuntimeError(
                f"{name}: the Binder simulation made no run of it (its test in "
                "tests/notebooks/test_binder.py failed, was deselected or ran in another "
                f"process), and {FROM_BINDER_ENV} says the checks read only Binder's runs"
            )
        raw = path(name).read_text(encoding="utf-8")
        _cache[name] = run_once.once(
            f"tutorial-{run_once.key_of(name, raw)}", lambda: _execute(name)
        )
    return _cache[name]


def remember(done: Run) -> None:
    """Let :func:`run` answer with ``done`` (a run made elsewhere: the Binder simulation)."""
    _cache[done.name] = done


def learner_notebook(committed: Any) -> tuple[Any, int]:
    """What :func:`run` executes for the ``committed`` notebook, and how many of its cells
    are the learner's finished notebook (:func:`solved`).  After those: each exercise's stub
    and its check (tagged ``raises-exception``: the check must fail), then the cell printing
    the kernel's peak resident memory."""
    nb = solved(committed)
    main_count = len(nb.cells)
    for e in find_exercises(committed):
        for src in (committed.cells[e.exercise].source, committed.cells[e.check].source):
            nb.cells.append(nbformat.v4.new_code_cell(src, metadata={"tags": ["raises-exception"]}))
    nb.cells.append(nbformat.v4.new_code_cell(_PEAK_RSS_CODE))
    return nb, main_count


def collect(name: str, committed: Any, executed: Any, main_count: int, seconds: float) -> Run:
    """The :class:`Run` of ``executed`` (:func:`learner_notebook` run top to bottom, any
    cells after its own left out): the learner's cells, each stub check's error and the
    peak memory."""
    exercises = find_exercises(committed)
    cells = list(executed.cells)
    extra = cells[main_count : main_count + 2 * len(exercises) + 1]
    stub_errors: list[str | None] = []
    for k in range(len(exercises)):
        errs = [o for o in extra[2 * k + 1].outputs if o.output_type == "error"]
        stub_errors.append(errs[0]["ename"] if errs else None)
    rss_text = printed(extra[-1])
    peak = int(rss_text.split()[-1]) * 1024 if "peak-rss-kib" in rss_text else 0
    nb = copy.deepcopy(executed)
    nb.cells = cells[:main_count]
    return Run(
        name=name,
        committed=committed,
        nb=nb,
        seconds=seconds,
        exercises=exercises,
        stub_errors=stub_errors,
        peak_rss_bytes=peak,
    )


def _execute(name: str) -> Run:
    from nbclient import NotebookClient

    committed = nbformat.read(path(name), as_version=4)
    nb, main_count = learner_notebook(committed)
    with tempfile.TemporaryDirectory(prefix="wb-ipython-") as ipython_dir:
        env = dict(kernel_env(), IPYTHONDIR=ipython_dir)  # no ~/.ipython of this machine
        client = NotebookClient(
            nb,
            timeout=int(TIME_LIMIT_S),
            kernel_name="python3",
            resources={"metadata": {"path": str(NOTEBOOKS)}},
        )
        start = time.monotonic()
        finished: list[float] = []
        client.on_cell_executed = lambda **kw: (  # type: ignore[assignment]
            finished.append(time.monotonic()) if kw["cell_index"] == main_count - 1 else None
        )
        client.execute(env=env)
    seconds = (finished[0] if finished else time.monotonic()) - start
    return collect(name, committed, nb, main_count, seconds)


def sections(nb: Any) -> list[tuple[str, list[Any]]]:
    """The notebook cut at its ``## `` headings: (heading, cells) in order."""
    out: list[tuple[str, list[Any]]] = [("(intro)", [])]
    for c in nb.cells:
        if c.cell_type == "markdown":
            for line in c.source.splitlines():
                if line.startswith("## "):
                    out.append((line[3:].strip(), []))
                    break
        out[-1][1].append(c)
    return out


def shows_workbench(cell: Any) -> bool:
    """Whether a code cell's outputs carry a workbench view (any of our MIME kinds) or one
    of the workbench's short errors."""
    for o in cell.get("outputs", []):
        if any(k.startswith(WORKBENCH_MIME) for k in o.get("data", {})):
            return True
        if o.output_type == "error" and o.get("ename") == "CellError":
            return True
    return False
