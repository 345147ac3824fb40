"""``inspect()``: trace, lower and compile a call through JAX's AOT stages, lazily.

Nothing here runs the user's function on data: ``jax.jit(f).trace(*args)`` only
traces (arguments may be arrays or ``jax.ShapeDtypeStruct``), ``.lower()`` emits
StableHLO and ``.compile()`` asks XLA for an executable that is never called.
Each stage is computed on first use and cached, so ``%%jaxpr`` pays only for the
trace while ``%%hlo`` pays for the compile.
"""

from __future__ import annotations

import contextlib
import functools
import inspect as pyinspect
import os
import re
import threading
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

import jax
import numpy as np

from workbench.engine import _jax_compat as compat
from workbench.engine.cache import inspecting, unrecorded
from workbench.engine.common.analysis import (
    CostAnalysis,
    MemoryAnalysis,
    normalize_cost,
    normalize_memory,
)
from workbench.engine.common.call_scopes import scoped_calls
from workbench.engine.common.gcpause import gc_paused
from workbench.engine.jaxpr.arguments import (
    abstract_arrays,
    filter_arrays,
    is_array,
    jax_accepts,
    needs_filtering,
    referable,
    static_positions,
    wraps_user_function,
)
from workbench.engine.jaxpr.model import JaxprModel, build_model
from workbench.engine.jaxpr.transforms import (
    TransformSpec,
    apply_transforms,
    describe,
    normalize,
    remap_for_statics,
)
from workbench.engine.jaxpr.trees import TreeSummary, summarize_call

# Equations created inside our own wrappers belong to the user's line, not ours; and
# the frames of the front doors that call the user's function (the magics, the twins)
# are no source of an op either: the whole package is excluded, not just the engine.
_PACKAGE_DIR = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
compat.exclude_path_from_user_frames(_PACKAGE_DIR)


_ANSI = re.compile(r"\x1b\[[0-9;]*m")


def function_name(fn: Any) -> str:
    inner = compat.jitted_inner(fn)
    for obj in (fn, inner):
        name = getattr(obj, "__name__", None)
        if isinstance(name, str):
            return name
    if isinstance(fn, functools.partial):
        return function_name(fn.func)
    return type(fn).__name__


@dataclass(slots=True)
class StageTimes:
    trace: float | None = None
    lower: float | None = None
    compile: float | None = None


class Inspection:
    """One call of one (possibly transformed) function, inspected stage by stage.

    Attributes are computed on first access and cached; ``timings`` holds the
    wall time (seconds) of each stage that has run.
    """

    def __init__(
        self,
        fn: Callable[..., Any],
        args: tuple[Any, ...],
        kwargs: dict[str, Any],
        transforms: Sequence[TransformSpec] = (),
        static_argnums: Sequence[int] = (),
        static_argnames: Sequence[str] = (),
        backend: str | None = None,
        scoped: bool = False,
    ) -> None:
        made = compat.make_jaxpr_target(fn)
        if made is not None:
            # ``jax.make_jaxpr(f)(x)`` as the call: its jaxpr is the jaxpr of ``f(x)``
            fn, static_argnums = made[0], (*made[1], *static_argnums)
        self.fn_name = function_name(fn)
        self.requested_backend = backend
        #: trace with every call of the user's code named in the op_names (``%%hlo``: see
        #: :mod:`workbench.engine.common.call_scopes`); a fresh trace, never JAX's cached one
        self.scoped = scoped
        self.transforms: list[TransformSpec] = list(transforms)
        self.label = describe(compat.transform_label(fn, self.fn_name), self.transforms)
        self.timings = StageTimes()
        self._lock = threading.RLock()
        self._cache: dict[str, Any] = {}
        #: what the pytree summaries read (set by _prepare): the user's names of the traced
        #: positional arguments, and the structure of the call as written when a filter
        #: changed it (with which of its leaves are static)
        self._arg_names: list[str] | None = None
        self._call_tree: tuple[Any, list[bool]] | None = None
        #: for an ``nnx.jit`` call: what to trace the program it runs with, and abstract
        #: copies of its arguments (lowered and compiled instead of the jaxpr's trace)
        self._program: tuple[Any, tuple[Any, ...], dict[str, Any]] | None = None
        #: set by _prepare when the user's own ``jax.jit`` function is traced through its
        #: ``.trace``: the jit (with its static arguments) that calls it, whose jaxpr is
        #: what ``jax.make_jaxpr`` prints (the ``jit[name=...]`` equation around the body)
        self._printed_via: Any = None
        self._stage_fn, self._stage_args, self._stage_kwargs = self._prepare(
            fn, tuple(args), dict(kwargs), tuple(static_argnums), tuple(static_argnames)
        )
        if backend is not None:
            self._stage_args, self._stage_kwargs = on_backend(
                backend, self._stage_args, self._stage_kwargs
            )

    # -- preparing the jitted callable -------------------------------------------------
    def _prepare(
        self,
        fn: Callable[..., Any],
        args: tuple[Any, ...],
        kwargs: dict[str, Any],
        static_argnums: tuple[int, ...],
        static_argnames: tuple[str, ...],
    ) -> tuple[Any, tuple[Any, ...], dict[str, Any]]:
        """The ``jax.jit`` function to trace and its (dynamic) arguments.

        A ``jax.jit`` function called with arrays keeps its own settings (static, donate,
        shardings) and is traced through its AOT ``.trace``; everything else (another
        library's jit such as ``nnx.jit`` or ``eqx.filter_jit``, a transform, static
        arguments given here, leaves JAX cannot take as inputs) is called inside our
        own ``jax.jit``, as ``jax.make_jaxpr`` would trace it.

        That is the jaxpr shown.  The program lowered and compiled for an ``nnx.jit``
        call is its own (``self._program``, see :func:`_nnx_jit_program`): called inside
        another jit, the objects' new state (a train step's weight updates) is no output
        of that jit, and XLA drops the updates as dead code.
        """
        nargs = len(args)
        fn = referable(fn)
        static_nums = {i + nargs if i < 0 else i for i in static_argnums}
        static_names = set(static_argnames)
        if static_names:
            # positions in the call as written (a bound method's signature has no self)
            static_nums |= static_positions(fn, tuple(static_argnames), nargs, kwargs)
        asked = bool(self.transforms or static_nums or static_names)
        if not asked and self.requested_backend is None:
            self._program = _nnx_jit_program(fn, args, kwargs)
            if self._program is not None:
                # the jaxpr too is traced on the copies: a method that writes to its own
                # module would write a tracer into the user's (Flax refuses, and the
                # object is left broken), and nothing here may change the user's state
                fn = self._program[0].wrapper
                args, kwargs, nargs = self._program[1], self._program[2], len(self._program[1])
        bound = compat.bound_jitted(fn)
        if bound is not None and not asked and not needs_filtering(args, kwargs):
            # ``d.apply(x)``: its ``.trace`` needs ``self`` back in front
            fn, args, nargs = bound[0], (bound[1], *args), nargs + 1
        if compat.is_jitted(fn):
            settings = compat.jit_settings(fn)
            own_nums: set[int] = set()
            own_names: set[str] = set()
            if settings is not None:
                own_nums = {
                    i + nargs if i < 0 else i
                    for i in settings.static_argnums
                    if -nargs <= i < nargs
                }
                own_names = {n for n in settings.static_argnames if n in kwargs}
                declared = {i + nargs if i < 0 else i for i in settings.static_argnums}
                if (
                    asked
                    and not self.transforms
                    and static_nums <= declared
                    and static_names <= set(settings.static_argnames)
                ):
                    # ``--static-argnums`` naming what the jit already declares: its own
                    # jit is the call the user makes (and the trace their call reuses)
                    asked = False
            dynamic = (
                tuple(a for i, a in enumerate(args) if i not in own_nums),
                {k: v for k, v in kwargs.items() if k not in own_names},
            )
            filtering = needs_filtering(*dynamic)
            if not asked and not filtering:
                # Keep the user's own jit settings (static, donate, shardings); its static
                # arguments stay as they are, the others become shapes and dtypes.
                self._arg_names = _positional_names(fn, nargs, own_nums)
                self._printed_via = _calling(fn, own_nums, own_names)
                return fn, *_abstract_dynamic(args, kwargs, own_nums, own_names)
            static_nums |= own_nums
            static_names |= own_names
            if filtering:  # its own jit would refuse the closed-over leaves: trace inside it
                fn = compat.jitted_inner(fn)
        bad = [i for i in static_nums if not 0 <= i < nargs]
        if bad:
            raise IndexError(f"static_argnums {bad} out of range for a call with {nargs} arguments")
        statics = {i: args[i] for i in sorted(static_nums)}
        static_kw = {k: kwargs[k] for k in static_names if k in kwargs}
        dyn_args = tuple(a for i, a in enumerate(args) if i not in static_nums)
        dyn_kwargs = {k: v for k, v in kwargs.items() if k not in static_names}
        base = fn
        if statics or static_kw:

            def base(*dyn: Any, **kw: Any) -> Any:
                it = iter(dyn)
                full = [statics[i] if i in statics else next(it) for i in range(nargs)]
                full.extend(it)
                return fn(*full, **static_kw, **kw)

            wraps_user_function(base, fn)
            base.__name__ = base.__qualname__ = self.fn_name
            dynamic_signature = _without_statics(fn, set(statics), set(static_kw))
            if dynamic_signature is not None:  # JAX names "the argument x" from it
                base.__signature__ = dynamic_signature  # type: ignore[attr-defined]
        self._arg_names = _positional_names(fn, nargs, static_nums)
        self._call_tree = _call_tree(dyn_args, dyn_kwargs)
        base, dyn_args, dyn_kwargs = filter_arrays(base, dyn_args, dyn_kwargs)
        specs = [remap_for_statics(s, static_nums, nargs) for s in self.transforms]
        g, targs, tkwargs = apply_transforms(base, specs, dyn_args, dyn_kwargs, self.fn_name)
        return jax.jit(g), *_abstract_dynamic(targs, tkwargs, set(), set())

    def _stage(self, key: str, compute: Callable[[], Any], timing: str | None = None) -> Any:
        with self._lock:
            if key in self._cache:
                return self._cache[key]
            t0 = time.perf_counter()
            # the workbench's own trace/lower/compile: never taken for the user's compiles
            with gc_paused(), inspecting() if timing else contextlib.nullcontext():
                value = compute()
            if timing:  # a stage may take two traces (see ``jaxpr``): their sum
                spent = time.perf_counter() - t0
                setattr(self.timings, timing, (getattr(self.timings, timing) or 0.0) + spent)
            self._cache[key] = value
            return value

    # -- stages --------------------------------------------------------------------------
    @property
    def traced(self) -> Any:
        """``jax.stages.Traced`` (trace only; nothing runs): the call as ``jax.make_jaxpr``
        traces it (the jaxpr shown)."""

        return self._stage(
            "traced",
            lambda: self._trace(self._stage_fn, self._stage_args, self._stage_kwargs),
            "trace",
        )

    def _trace(self, stage: Any, args: tuple[Any, ...], kwargs: dict[str, Any]) -> Any:
        """``stage.trace(*args, **kwargs)``, inside :func:`scoped_calls` when scoped."""
        if not self.scoped:
            return stage.trace(*args, **kwargs)
        with scoped_calls(root=self.fn_name):
            return stage.trace(*args, **kwargs)

    @property
    def _program_traced(self) -> Any:
        """The ``jax.stages.Traced`` that is lowered and compiled: the call's own trace, or
        for an ``nnx.jit`` call the program that runs (the objects' new state among its
        outputs), traced through the wrapper's ``.trace``."""
        if self._program is None:
            return self.traced
        stage, args, kwargs = self._program
        return self._stage("program_traced", lambda: self._trace(stage, args, kwargs), "trace")

    @property
    def jaxpr(self) -> Any:
        """The ``ClosedJaxpr`` of the (transformed) call: for the user's own ``jax.jit``
        function, its body (what ``.trace`` gives, what the views draw)."""
        return self.traced.jaxpr

    @property
    def printed_jaxpr(self) -> Any:
        """The ``ClosedJaxpr`` exactly as ``jax.make_jaxpr`` gives it for the call.

        For the user's own ``jax.jit`` function that is one ``jit[name=f jaxpr={...}]``
        equation around :attr:`jaxpr`: the trace of a jit that calls it (the body comes
        from JAX's trace cache, so this costs little), never a rebuilt copy.  Otherwise it
        is :attr:`jaxpr` itself.
        """
        traced = self.traced  # the user's jit first: its errors and timings as they are
        if self._printed_via is None:
            return traced.jaxpr

        def printed() -> Any:
            with unrecorded():  # plumbing: the user's trace above is the inspection
                return self._printed_via.trace(*self._stage_args, **self._stage_kwargs).jaxpr

        return self._stage("printed_jaxpr", printed, "trace")

    @property
    def model(self) -> JaxprModel:
        """The structured jaxpr model (see :mod:`workbench.engine.jaxpr.model`)."""
        return self._stage("model", lambda: build_model(self.jaxpr))

    @property
    def jaxpr_text(self) -> str:
        """Exactly JAX's own pretty-printed jaxpr (``str(jax.make_jaxpr(f)(*args))``,
        :attr:`printed_jaxpr`), never coloured: ``str()`` of a jaxpr
        adds ANSI colour codes inside a Jupyter kernel (JAX's ``jax_pprint_use_color``),
        which a ``text/plain`` output or a saved notebook must not carry."""

        def compute() -> str:
            printed = self.printed_jaxpr
            try:
                return str(printed.pretty_print(use_color=False))
            except TypeError:  # a JAX whose pretty_print has no use_color
                return _ANSI.sub("", str(printed))

        return self._stage("jaxpr_text", compute)

    @property
    def lowered(self) -> Any:
        return self._stage("lowered", lambda: self._program_traced.lower(), "lower")

    @property
    def stablehlo_text(self) -> str:
        return self._stage("stablehlo_text", lambda: self.lowered.as_text())

    @property
    def stablehlo_debug_text(self) -> str:
        """StableHLO with ``loc(...)`` debug locations (source lines), where JAX can print them."""

        def compute() -> str:
            try:
                return self.lowered.as_text(debug_info=True)
            except TypeError:  # a JAX without the debug_info keyword
                return self.stablehlo_text

        return self._stage("stablehlo_debug_text", compute)

    @property
    def compiled(self) -> Any:
        return self._stage("compiled", lambda: self.lowered.compile(), "compile")

    @property
    def hlo_text(self) -> str:
        """Optimized HLO after XLA's passes."""
        return self._stage("hlo_text", lambda: self.compiled.as_text())

    @property
    def cost(self) -> CostAnalysis:
        def compute() -> CostAnalysis:
            try:
                return normalize_cost(self.compiled.cost_analysis())
            except Exception:
                return CostAnalysis()

        return self._stage("cost", compute)

    @property
    def memory(self) -> MemoryAnalysis:
        def compute() -> MemoryAnalysis:
            try:
                return normalize_memory(self.compiled.memory_analysis())
            except Exception:
                return MemoryAnalysis()

        return self._stage("memory", compute)

    @property
    def in_avals(self) -> list[str]:
        return [a.aval.text for a in self.model.invars]

    @property
    def out_avals(self) -> list[str]:
        return [a.aval.text for a in self.model.outvars]

    @property
    def trees(self) -> dict[str, list[TreeSummary]]:
        """One-line summaries of the top-level arguments and results (``ps: list[24] of
        {w1, w2, wk, wq, wv: f32[128,128]}``): ``{"in": [...], "out": [...]}``."""

        def compute() -> dict[str, list[TreeSummary]]:
            traced = self.traced
            in_tree, in_static = getattr(traced, "in_tree", None), None
            if self._call_tree is not None and self._call_tree[1].count(False) == len(
                self.in_avals
            ):
                in_tree, in_static = self._call_tree
            try:
                return summarize_call(
                    in_tree,
                    self.in_avals,
                    getattr(traced, "out_tree", None),
                    self.out_avals,
                    self._arg_names,
                    in_static,
                )
            except Exception:  # an exotic pytree node: one entry per leaf, never a failure
                return summarize_call(None, self.in_avals, None, self.out_avals)

        return self._stage("trees", compute)

    @property
    def input_shardings(self) -> list[str]:
        args, kw = self.compiled.input_shardings
        return [str(s) for s in jax.tree.leaves((args, kw))]

    @property
    def output_shardings(self) -> list[str]:
        return [str(s) for s in jax.tree.leaves(self.compiled.output_shardings)]

    @property
    def devices(self) -> list[Any]:
        """Devices the compiled program runs on (compiles if needed)."""
        found: dict[int, Any] = {}
        shardings = jax.tree.leaves(self.compiled.input_shardings) + jax.tree.leaves(
            self.compiled.output_shardings
        )
        for s in shardings:
            for d in getattr(s, "device_set", ()):
                found[d.id] = d
        if not found:
            d = jax.devices()[0]
            found[d.id] = d
        return [found[k] for k in sorted(found)]

    @property
    def backend(self) -> str:
        if "compiled" in self._cache:
            return self.devices[0].platform
        return self.requested_backend or jax.default_backend()

    @property
    def device_kinds(self) -> list[str]:
        devs = self.devices if "compiled" in self._cache else jax.devices()
        return sorted({d.device_kind for d in devs})

    def __repr__(self) -> str:
        done = [k for k in ("traced", "lowered", "compiled") if k in self._cache]
        return f"<Inspection {self.label} stages={done}>"


def _nnx_jit_program(
    fn: Any, args: tuple[Any, ...], kwargs: dict[str, Any]
) -> tuple[Any, tuple[Any, ...], dict[str, Any]] | None:
    """For a call of an ``nnx.jit`` function: what to trace the program it runs with (the
    wrapper's own ``.trace``) and abstract copies of the call's arguments (the user's
    objects are neither kept nor touched); else None."""
    call = compat.nnx_jit_call(fn, args, kwargs)
    if call is None:
        return None
    wrapper, full_args, full_kwargs = call
    copied = compat.abstract_nnx_call(full_args, full_kwargs, abstract_arrays)
    if copied is None:
        return None
    return compat.NnxJitStage(wrapper), *copied


def _without_statics(fn: Any, positions: set[int], names: set[str]) -> Any:
    """``fn``'s signature without the parameters closed over as static (the signature of the
    wrapper that takes the rest), None when it cannot be read."""
    try:
        sig = pyinspect.signature(fn)
    except (TypeError, ValueError):
        return None
    positional = (pyinspect.Parameter.POSITIONAL_ONLY, pyinspect.Parameter.POSITIONAL_OR_KEYWORD)
    kept = [
        p
        for i, p in enumerate(sig.parameters.values())
        if not (p.kind in positional and i in positions) and p.name not in names
    ]
    try:
        return sig.replace(parameters=kept)
    except ValueError:
        return None


def _calling(fn: Any, static_nums: set[int], static_names: set[str]) -> Any:
    """A ``jax.jit`` of a function that calls the jitted ``fn``, static where ``fn`` is:
    what ``jax.make_jaxpr(fn, static_argnums=...)`` traces (its jaxpr shows the call of
    ``fn`` as one ``jit`` equation).

    The caller is not dressed as ``fn`` (no ``functools.wraps``): the compile tracker must
    not take this trace for one of the user's function; it only borrows ``fn``'s signature,
    which maps the static argument names as ``fn``'s own jit maps them."""

    def call(*args: Any, **kwargs: Any) -> Any:
        return fn(*args, **kwargs)

    try:
        call.__signature__ = pyinspect.signature(fn)  # type: ignore[attr-defined]
    except (TypeError, ValueError):
        pass
    return jax.jit(
        call, static_argnums=tuple(sorted(static_nums)), static_argnames=tuple(static_names)
    )


def _abstract_dynamic(
    args: tuple[Any, ...], kwargs: dict[str, Any], static_nums: set[int], static_names: set[str]
) -> tuple[tuple[Any, ...], dict[str, Any]]:
    """The call's arguments with shapes and dtypes in place of arrays, statics untouched.

    An inspection is kept by its display in ``Out`` history: holding the user's arrays
    there would keep their (device) memory alive after ``del x``.
    """
    return (
        tuple(a if i in static_nums else abstract_arrays(a) for i, a in enumerate(args)),
        {k: v if k in static_names else abstract_arrays(v) for k, v in kwargs.items()},
    )


def _positional_names(
    fn: Any, nargs: int, static: set[int] | frozenset[int] = frozenset()
) -> list[str] | None:
    """The names of the first ``nargs`` positional parameters of ``fn`` but the ``static``
    positions (the arguments that are traced), None when its signature cannot be read or
    takes them through ``*args``."""
    try:
        params = list(pyinspect.signature(fn).parameters.values())
    except (TypeError, ValueError):
        return None
    names = [p.name for p in params if p.kind in (p.POSITIONAL_ONLY, p.POSITIONAL_OR_KEYWORD)]
    if len(names) < nargs:
        return None
    return [name for i, name in enumerate(names[:nargs]) if i not in static]


def _call_tree(args: tuple[Any, ...], kwargs: dict[str, Any]) -> tuple[Any, list[bool]] | None:
    """The structure of the dynamic arguments as written and which of its leaves are static
    (closed over by :func:`filter_arrays`: an argument with a leaf JAX cannot take keeps
    its array leaves only), when filtering will change the call; else None.  Keeps no
    array alive: a structure and booleans."""
    if not needs_filtering(args, kwargs):
        return None
    static: list[bool] = []
    for arg in (*args, *(kwargs[k] for k in sorted(kwargs))):  # a dict flattens sorted
        leaves = jax.tree.leaves(arg)
        split = not all(jax_accepts(x) for x in leaves)
        static.extend(split and not is_array(x) for x in leaves)
    return jax.tree.structure((args, kwargs)), static


class BackendUnavailable(ValueError):
    """A backend was asked for that this JAX does not have (e.g. ``tpu`` on a CPU machine)."""


def resolve_backend(name: str) -> str:
    """The platform name for ``name`` (``gpu`` means cuda/rocm), or BackendUnavailable."""
    name = name.strip().lower()
    present = compat.available_backends()
    if name == "gpu" and name not in present:
        name = next((b for b in ("cuda", "rocm") if b in present), name)
    if name not in present:
        raise BackendUnavailable(
            f"backend {name!r} is not available here; available: {', '.join(present)}"
        )
    return name


def on_backend(
    backend: str, args: tuple[Any, ...], kwargs: dict[str, Any]
) -> tuple[tuple[Any, ...], dict[str, Any]]:
    """Make the call compile for ``backend`` (``jit(backend=...)`` is deprecated; JAX
    picks the backend from where the inputs live).

    Inputs already on that backend (and everything on the default backend when it is
    the one asked for) stay as they are, so their shardings are kept.  Others become
    ``ShapeDtypeStruct`` stand-ins on the backend's first device: nothing is copied,
    since ``%hlo`` compiles and never runs.
    """
    platform = resolve_backend(backend)
    device = jax.local_devices(backend=platform)[0]
    sharding = jax.sharding.SingleDeviceSharding(device)

    def on_it(s: Any) -> bool:
        return s is not None and all(d.platform == device.platform for d in s.device_set)

    def place(x: Any) -> Any:
        if isinstance(x, jax.ShapeDtypeStruct):
            s = getattr(x, "sharding", None)
            if s is None and jax.default_backend() == platform:
                return x
            return x if on_it(s) else jax.ShapeDtypeStruct(x.shape, x.dtype, sharding=sharding)
        if isinstance(x, jax.Array):
            return (
                x
                if on_it(x.sharding)
                else jax.ShapeDtypeStruct(x.shape, x.dtype, sharding=sharding)
            )
        if isinstance(x, (np.ndarray, np.generic)) and jax.default_backend() != platform:
            return jax.ShapeDtypeStruct(x.shape, x.dtype, sharding=sharding)
        return x

    return jax.tree.map(place, args), jax.tree.map(place, kwargs)


def inspect(
    fn: Callable[..., Any],
    *args: Any,
    transforms: Sequence[str | TransformSpec] | str | None = (),
    static_argnums: int | Sequence[int] = (),
    static_argnames: str | Sequence[str] = (),
    **kwargs: Any,
) -> Inspection:
    """Inspect ``fn(*args, **kwargs)`` under ``transforms`` (innermost first).

    Nothing is traced until a stage is asked for: ``.jaxpr``, ``.model``,
    ``.stablehlo_text``, ``.hlo_text``, ``.cost``, ``.memory``...
    """
    if not callable(fn):
        raise TypeError(f"inspect() needs a callable, got {type(fn).__name__}")
    if isinstance(static_argnums, int):
        static_argnums = (static_argnums,)
    if isinstance(static_argnames, str):
        static_argnames = (static_argnames,)
    return Inspection(fn, args, kwargs, normalize(transforms), static_argnums, static_argnames)


def inspect_chain(
    fn: Callable[..., Any],
    args: tuple[Any, ...],
    kwargs: dict[str, Any],
    transforms: Sequence[str | TransformSpec] | str | None = (),
    static_argnums: Sequence[int] = (),
    static_argnames: Sequence[str] = (),
    backend: str | None = None,
    scoped: bool = False,
) -> list[Inspection]:
    """The function and each successive transform: ``[f, t1(f), t2(t1(f)), ...]``.

    This is what ``--compare`` shows, so a user sees what each transform did.  The call's
    arguments are those of the outermost stage; a stage inside a ``vmap`` is traced at what
    one call of it receives (each ``vmap``'s batch axis removed, per its ``in_axes``), as
    ``vmap`` itself would trace it, not at the batched arrays.
    """
    specs = normalize(transforms)
    static = (
        _static_call_positions(fn, args, kwargs, static_argnums, static_argnames)
        if any(s.name == "vmap" for s in specs)
        else set()
    )
    stages = []
    for k in range(len(specs) + 1):
        a, kw = args, kwargs
        for spec in reversed(specs[k:]):  # outermost vmap first
            if spec.name == "vmap":
                a, kw = unbatched(a, kw, spec, static)
        stages.append(
            Inspection(
                fn,
                a,
                kw,
                specs[:k],
                static_argnums,
                static_argnames,
                backend=backend,
                scoped=scoped,
            )
        )
    return stages


def _static_call_positions(
    fn: Callable[..., Any],
    args: tuple[Any, ...],
    kwargs: dict[str, Any],
    static_argnums: Sequence[int],
    static_argnames: Sequence[str],
) -> set[int]:
    """The positions of the call that a transformed stage closes over, as
    ``Inspection._prepare`` finds them: ``static_argnums``, the ``static_argnames`` passed
    positionally, and the static arguments of the user's own ``jax.jit``."""
    nargs = len(args)
    static = {i + nargs if i < 0 else i for i in static_argnums}
    if static_argnames:
        static |= static_positions(fn, tuple(static_argnames), nargs, kwargs)
    settings = compat.jit_settings(fn) if compat.is_jitted(fn) else None
    if settings is not None:
        static |= {
            i + nargs if i < 0 else i for i in settings.static_argnums if -nargs <= i < nargs
        }
    return static


def unbatched(
    args: tuple[Any, ...], kwargs: dict[str, Any], spec: TransformSpec, static: set[int]
) -> tuple[tuple[Any, ...], dict[str, Any]]:
    """What the function inside ``vmap`` (``spec``) receives for a call with ``args``:
    abstract arrays without the mapped axis; unmapped and non-array leaves as they are.
    ``in_axes`` is read as ``remap_for_statics`` reads it (over the whole call, or over
    the non-static arguments); keyword arguments are mapped over axis 0, as ``jax.vmap``
    maps them."""
    in_axes = spec.kwargs.get("in_axes", 0)
    if isinstance(in_axes, list):
        in_axes = tuple(in_axes)
    if isinstance(in_axes, tuple):
        if len(in_axes) != len(args):  # given over the dynamic arguments only
            it = iter(in_axes)
            in_axes = tuple(None if i in static else next(it, None) for i in range(len(args)))
    else:
        in_axes = tuple(None if i in static else in_axes for i in range(len(args)))

    def drop(axis: Any, leaf: Any) -> Any:
        if axis is None or not is_array(leaf):
            return leaf
        shape = tuple(np.shape(leaf))
        axis = axis + len(shape) if axis < 0 else axis
        return jax.ShapeDtypeStruct(
            shape[:axis] + shape[axis + 1 :],
            leaf.dtype,
            weak_type=bool(getattr(leaf, "weak_type", False)),
        )

    def drop_tree(axes: Any, tree: Any) -> Any:
        return jax.tree.map(
            lambda ax, sub: jax.tree.map(lambda leaf: drop(ax, leaf), sub),
            axes,
            tree,
            is_leaf=lambda x: x is None,
        )

    try:
        return (
            tuple(drop_tree(ax, a) for ax, a in zip(in_axes, args, strict=True)),
            {k: drop_tree(0, v) for k, v in kwargs.items()},
        )
    except (ValueError, TypeError):
        # in_axes does not fit the arguments: let jax.vmap say how, in its own words
        dyn = [i for i in range(len(args)) if i not in static]
        jax.eval_shape(
            jax.vmap(lambda *_: 0, in_axes=tuple(in_axes[i] for i in dyn)), *(args[i] for i in dyn)
        )
        raise


def inspect_stages(
    fn: Callable[..., Any],
    args: tuple[Any, ...],
    kwargs: dict[str, Any],
    transforms: Sequence[str | TransformSpec] | str | None = (),
    static_argnums: int | Sequence[int] = (),
    static_argnames: str | Sequence[str] = (),
    compare: bool = False,
    backend: str | None = None,
    scoped: bool = False,
) -> list[Inspection]:
    """What a front door shows: every stage with ``compare``, else just the final one.
    ``scoped`` names the user's calls in the op_names (``%%hlo``; see :class:`Inspection`)."""
    if isinstance(static_argnums, int):
        static_argnums = (static_argnums,)
    if isinstance(static_argnames, str):
        static_argnames = (static_argnames,)
    if compare:
        return inspect_chain(
            fn,
            args,
            kwargs,
            transforms,
            tuple(static_argnums),
            tuple(static_argnames),
            backend=backend,
            scoped=scoped,
        )
    return [
        Inspection(
            fn,
            args,
            kwargs,
            normalize(transforms),
            tuple(static_argnums),
            tuple(static_argnames),
            backend=backend,
            scoped=scoped,
        )
    ]
