"""How much does ``%%jaxpr`` cost on top of tracing, and how fast is ``import workbench``?

Run by hand (not part of the test suite)::

    python benchmarks/bench_jaxpr.py [--rounds N] [--import-runs N]

What is measured
----------------
The subject is the gradient of a 24-layer transformer-block stack written in
plain ``jax.numpy`` (d=128, 16 tokens, layer norm, softmax attention, five
128x128 weight matrices per layer: q, k, v, o and one MLP matrix; mean-square
loss).  Its ``jax.grad`` jaxpr has about 2,300 equations: a realistic "big
cell" whose display must still feel instant.

*Reference*: a bare ``jax.make_jaxpr(jax.grad(loss))(params, x)``, i.e. the
least a user would pay to see that jaxpr without workbench.

*A*: the whole ``%%jaxpr -t grad`` cell through a real IPython
``InteractiveShell`` (inside ``capture_output``).  ``run_cell`` already calls
the shell's display hook, which runs ``display_formatter.format`` on the
result and so builds text/plain, text/html and the JSON record once, as a
notebook kernel does; that is row "A notebook".  The row "A + format" adds a
second, explicit ``sh.display_formatter.format(result.result)`` (the model
and text are cached on the Inspection by then, so only the HTML and the JSON
are built again).  Target for A: at most 1.3x the reference.

*B*: ``jaxpr_html(ins)`` alone, on an Inspection whose ``.model`` and
``.jaxpr_text`` were already computed.  Target: at most 0.3x the reference.

The pieces (trace, structured model, JAX's pretty print, JSON record) are
reported as ratios to the reference too, to show where the time goes.

Finally ``import workbench`` after ``import jax`` is timed in fresh
subprocesses (target: at most 200 ms), next to ``import jax`` itself.

Why it is done this way
-----------------------
Machines are noisy, so everything is a median over repeated measurements taken
in one run, and the reference and the measured paths alternate within each
round (reference, A, B and pieces, reference, A, ...), so drift hits both.
Every repetition gets a *fresh* function object (``make_loss()``), since JAX
caches traces per function object and a repeated trace would be nearly free.
Garbage is collected (untimed) before each timed section so that one section's
garbage is not collected on another's clock.  The "ratio" column is the ratio
of medians; "paired" is the median of the per-round ratios (measured over the
reference of the same round), which is more robust to slow drift.

On the real models (tests/real_models.py: the 24-block transformer, both attention
styles), end to end against plain JAX in the same run, with the phase breakdown:
``benchmarks/bench_display_cost.py`` (issue 22's targets for ``%%jaxpr``).
"""

from __future__ import annotations

import os

os.environ.setdefault("XLA_FLAGS", "--xla_force_host_platform_device_count=8")
os.environ["JAX_PLATFORMS"] = "cpu"

import argparse  # noqa: E402
import gc  # noqa: E402
import statistics  # noqa: E402
import subprocess  # noqa: E402
import sys  # noqa: E402
import time  # noqa: E402
from collections.abc import Callable, Iterable  # noqa: E402
from dataclasses import dataclass, field  # noqa: E402
from typing import Any  # noqa: E402

import jax  # noqa: E402
import jax.numpy as jnp  # noqa: E402

import workbench  # noqa: E402
from workbench.views.jaxpr import jaxpr_html, jaxpr_record  # noqa: E402

LAYERS = 24
D_MODEL = 128
TOKENS = 16
WEIGHTS = ("wq", "wk", "wv", "wo", "w1")

Params = list[dict[str, jax.Array]]
LossFn = Callable[[Params, jax.Array], jax.Array]


# -- the subject: a transformer-block stack in plain jax.numpy -----------------------------


def init_params(seed: int = 0) -> tuple[Params, jax.Array]:
    keys = jax.random.split(jax.random.key(seed), LAYERS * len(WEIGHTS) + 1)
    scale = D_MODEL**-0.5
    params: Params = []
    for i in range(LAYERS):
        params.append(
            {
                name: jax.random.normal(keys[len(WEIGHTS) * i + j], (D_MODEL, D_MODEL)) * scale
                for j, name in enumerate(WEIGHTS)
            }
        )
    x = jax.random.normal(keys[-1], (TOKENS, D_MODEL))
    return params, x


def make_loss() -> LossFn:
    """A fresh loss function object (and fresh helpers) each call: no JAX trace cache hits."""

    def layer_norm(h: jax.Array) -> jax.Array:
        mu = jnp.mean(h, axis=-1, keepdims=True)
        c = h - mu
        var = jnp.mean(c * c, axis=-1, keepdims=True)
        return c * jax.lax.rsqrt(var + 1e-5)

    def block(p: dict[str, jax.Array], h: jax.Array) -> jax.Array:
        a = layer_norm(h)
        q, k, v = a @ p["wq"], a @ p["wk"], a @ p["wv"]
        s = (q @ k.T) * (D_MODEL**-0.5)
        s = s - jax.lax.stop_gradient(jnp.max(s, axis=-1, keepdims=True))
        e = jnp.exp(s)
        attn = e / jnp.sum(e, axis=-1, keepdims=True)
        h = h + (attn @ v) @ p["wo"]
        return h + jnp.tanh(h @ p["w1"])

    def loss(params: Params, x: jax.Array) -> jax.Array:
        h = x
        for p in params:
            h = block(p, h)
        return jnp.mean((h - x) ** 2)

    return loss


def count_equations(jaxpr: Any) -> int:
    """Equations of a (closed) jaxpr, including every nested jaxpr in equation params."""
    inner = getattr(jaxpr, "jaxpr", jaxpr)
    total = 0
    for eq in inner.eqns:
        total += 1
        for value in eq.params.values():
            items = value if isinstance(value, (tuple, list)) else (value,)
            for item in items:
                if hasattr(item, "eqns") or hasattr(getattr(item, "jaxpr", None), "eqns"):
                    total += count_equations(item)
    return total


# -- timing helpers ------------------------------------------------------------------------


class GcClock:
    """Wall time spent inside the cyclic garbage collector (via ``gc.callbacks``)."""

    def __init__(self) -> None:
        self.total = 0.0
        self._start = 0.0
        gc.callbacks.append(self._callback)

    def _callback(self, phase: str, info: dict[str, int]) -> None:
        if phase == "start":
            self._start = time.perf_counter()
        else:
            self.total += time.perf_counter() - self._start


GC_CLOCK = GcClock()


def timed(fn: Callable[[], Any]) -> tuple[float, float, Any]:
    """(wall seconds, of which in the garbage collector, value); collects garbage first."""
    gc.collect()
    gc0 = GC_CLOCK.total
    t0 = time.perf_counter()
    value = fn()
    return time.perf_counter() - t0, GC_CLOCK.total - gc0, value


@dataclass
class Samples:
    times: dict[str, list[float]] = field(default_factory=dict)
    gc_times: dict[str, list[float]] = field(default_factory=dict)

    def add(self, name: str, seconds: float, gc_seconds: float = 0.0) -> None:
        self.times.setdefault(name, []).append(seconds)
        self.gc_times.setdefault(name, []).append(gc_seconds)

    def median(self, name: str) -> float:
        return statistics.median(self.times[name])

    def median_gc(self, name: str) -> float:
        return statistics.median(self.gc_times[name])

    def paired_ratio(self, name: str, ref: str) -> float:
        return statistics.median(
            m / r for m, r in zip(self.times[name], self.times[ref], strict=True)
        )


CELL = "%%jaxpr -t grad\nloss = make_loss()\nloss(params, x)\n"


def make_shell(params: Params, x: jax.Array) -> Any:
    from IPython.core.interactiveshell import InteractiveShell

    sh = InteractiveShell.instance()
    res = sh.run_cell("%load_ext workbench")
    if not res.success:
        raise RuntimeError(f"%load_ext workbench failed: {res.error_in_exec!r}")
    sh.user_ns.update(make_loss=make_loss, params=params, x=x)
    return sh


def one_round(sh: Any, params: Params, x: jax.Array, samples: Samples | None) -> dict[str, Any]:
    """One reference and one of each measured path, in a fixed alternating order."""
    from IPython.utils.capture import capture_output

    def add(name: str, seconds: float, gc_seconds: float) -> None:
        if samples is not None:
            samples.add(name, seconds, gc_seconds)

    # Reference: bare make_jaxpr of grad, fresh function object.
    t, g, ref_jaxpr = timed(lambda: jax.make_jaxpr(jax.grad(make_loss()))(params, x))
    add("reference", t, g)

    # A: the %%jaxpr cell end to end (display hook formats once), then an explicit format.
    def run_cell() -> Any:
        with capture_output():
            return sh.run_cell(CELL)

    t_cell, g_cell, result = timed(run_cell)
    if not result.success:
        raise RuntimeError(f"%%jaxpr cell failed: {result.error_in_exec!r}")
    t_fmt, g_fmt, (fmt, _md) = timed(lambda: sh.display_formatter.format(result.result))
    add("A notebook", t_cell, g_cell)
    add("A + format", t_cell + t_fmt, g_cell + g_fmt)

    # B and the pieces, each on its own, on a fresh Inspection.
    pieces = pieces_gc = 0.0
    t, g, ins = timed(lambda: _traced_inspection(params, x))
    add("trace (inspect + .traced)", t, g)
    pieces += t
    pieces_gc += g
    t, g, model = timed(lambda: ins.model)
    add("model (ins.model)", t, g)
    pieces += t
    pieces_gc += g
    t, g, _ = timed(lambda: ins.jaxpr_text)
    add("text (ins.jaxpr_text)", t, g)
    pieces += t
    pieces_gc += g
    t, g, html = timed(lambda: jaxpr_html(ins))
    add("B html (jaxpr_html)", t, g)
    pieces += t
    pieces_gc += g
    t, g, _ = timed(lambda: jaxpr_record(ins))
    add("JSON record (jaxpr_record)", t, g)
    pieces += t
    pieces_gc += g
    add("sum of the 5 pieces", pieces, pieces_gc)
    return {"ref_jaxpr": ref_jaxpr, "model": model, "html": html, "bundle": fmt}


def _traced_inspection(params: Params, x: jax.Array) -> Any:
    ins = workbench.inspect(make_loss(), params, x, transforms="grad")
    ins.traced  # noqa: B018 - computes and caches the trace
    return ins


# -- import time in fresh subprocesses -----------------------------------------------------

IMPORT_JAX = "import time; t=time.perf_counter(); import jax; print(time.perf_counter()-t)"
IMPORT_WB = (
    "import jax, time; t=time.perf_counter(); import workbench; print(time.perf_counter()-t)"
)


def subprocess_seconds(code: str) -> float:
    env = dict(os.environ)
    out = subprocess.run(
        [sys.executable, "-c", code], env=env, check=True, capture_output=True, text=True
    ).stdout
    return float(out.strip().splitlines()[-1])


# -- report --------------------------------------------------------------------------------


def fmt_ms(seconds: float) -> str:
    return f"{seconds * 1e3:9.1f} ms"


Row = tuple[str, str, str, str, str, str, str]


def table(rows: Iterable[Row]) -> str:
    header = ("measurement", "median", "of it GC", "ratio", "paired", "target", "result")
    rows = [header, *rows]
    widths = [max(len(r[i]) for r in rows) for i in range(len(header))]
    lines = []
    for k, r in enumerate(rows):
        lines.append(
            "  ".join(
                c.ljust(w) if i == 0 else c.rjust(w)
                for i, (c, w) in enumerate(zip(r, widths, strict=True))
            )
        )
        if k == 0:
            lines.append("  ".join("-" * w for w in widths))
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--rounds", type=int, default=11, help="timed rounds after one warm-up")
    ap.add_argument("--import-runs", type=int, default=5, help="fresh subprocesses per import")
    opts = ap.parse_args(argv)

    t_start = time.perf_counter()
    params, x = init_params()
    sh = make_shell(params, x)

    warm = one_round(sh, params, x, None)  # warm-up: JAX internals, IPython, workbench views
    n_ref = count_equations(warm["ref_jaxpr"])
    model = warm["model"]
    print(
        f"subject: {LAYERS}-layer transformer stack, d={D_MODEL}, {TOKENS} tokens, "
        f"{len(WEIGHTS)} weights/layer; jax {jax.__version__}, {os.cpu_count()} CPUs"
    )
    print(
        f"grad jaxpr equations: reference {n_ref}, workbench model {model.total_equations} "
        f"({len(model.eqns)} top level)"
    )
    bundle = warm["bundle"]
    print(
        "bundle sizes: " + ", ".join(f"{k} {len(str(v)) / 1e3:.0f} kB" for k, v in bundle.items())
    )

    samples = Samples()
    for _ in range(opts.rounds):
        one_round(sh, params, x, samples)
    t_rounds = time.perf_counter() - t_start

    import_times = Samples()
    for _ in range(opts.import_runs):
        import_times.add("jax", subprocess_seconds(IMPORT_JAX))
        import_times.add("workbench", subprocess_seconds(IMPORT_WB))

    ref = samples.median("reference")
    targets = {"A notebook": 1.3, "A + format": 1.3, "B html (jaxpr_html)": 0.3}
    rows: list[Row] = [
        (
            "reference: make_jaxpr(grad(loss))",
            fmt_ms(ref),
            fmt_ms(samples.median_gc("reference")),
            "1.00x",
            "1.00x",
            "",
            "",
        )
    ]
    for name in (
        "A notebook",
        "A + format",
        "B html (jaxpr_html)",
        "trace (inspect + .traced)",
        "model (ins.model)",
        "text (ins.jaxpr_text)",
        "JSON record (jaxpr_record)",
        "sum of the 5 pieces",
    ):
        med = samples.median(name)
        ratio = med / ref
        target = targets.get(name)
        rows.append(
            (
                name,
                fmt_ms(med),
                fmt_ms(samples.median_gc(name)),
                f"{ratio:.2f}x",
                f"{samples.paired_ratio(name, 'reference'):.2f}x",
                "" if target is None else f"<= {target:.1f}x",
                "" if target is None else ("PASS" if ratio <= target else "FAIL"),
            )
        )
    wb_import = import_times.median("workbench")
    rows.append(
        ("import jax (fresh process)", fmt_ms(import_times.median("jax")), "", "", "", "", "")
    )
    rows.append(
        (
            "import workbench after jax",
            fmt_ms(wb_import),
            "",
            "",
            "",
            "<= 200 ms",
            "PASS" if wb_import <= 0.2 else "FAIL",
        )
    )

    print(
        f"\n{opts.rounds} rounds (after 1 warm-up), {opts.import_runs} import runs each; "
        f"medians; ratio = median / reference median, paired = median of per-round ratios;\n"
        f"'of it GC' = median time inside the garbage collector during that measurement; "
        f"the pieces are timed one by one, after a gc.collect() each\n"
    )
    print(table(rows))
    print(
        f"\nruntime: {time.perf_counter() - t_start:.1f} s "
        f"(rounds {t_rounds:.1f} s, imports {time.perf_counter() - t_start - t_rounds:.1f} s)"
    )
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
