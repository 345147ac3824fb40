"""The one place that touches JAX internals.

JAX moves its private modules between releases (0.10.x here, 0.11.x on GPU
machines), so every use of ``jax._src`` or a private attribute is feature-detected
here and degrades to ``None`` / a neutral answer instead of raising.  The rest of
the package imports only the names below, from this package (``from workbench.engine
import _jax_compat as compat``), never from its modules; ``tests/engine/test_compat.py``
checks each of them against the installed JAX so a move shows up as one failing test,
not as a broken notebook.

One module per concern, each naming the internals it wraps:

- ``_modules``: the optional imports of ``jax.extend.core``, ``jax._src.core`` and
  ``source_info_util``; :data:`FEATURES` (what was found, for ``doctor``).
- ``jaxpr``: the jaxpr types (``Jaxpr``/``ClosedJaxpr``, merged in JAX 0.11), literals,
  dropped outputs.
- ``source_info``: an equation's user line and name stack; excluding our own frames.
- ``jit``: what a ``jax.jit`` wrapper holds; whether a function or jaxpr is JAX's own.
- ``trace_site``: the call a jit trace was made with, from pjit's frame locals.
- ``equinox_jit``: the user's argument paths of an ``eqx.filter_jit`` trace.
- ``flax_jit``: the program an ``nnx.jit`` call runs (state updates included), through
  the wrapper's own ``.trace``, on abstract copies of the NNX objects.
- ``stack``: the package's one stack walker and the JAX frames it looks for.
- ``monitoring``: ``jax.monitoring`` event names, listener lists, the
  ``jax_explain_cache_misses`` option and its loggers.
- ``scoping``: what the scoped trace of ``%%hlo`` needs: a trace context that JAX's
  trace caches miss in, where Flax NNX's and Equinox's layers and JAX itself live.
- ``compilation``: a compile with JAX's persistent compilation cache bypassed.
- ``compile_dump``: a compile with XLA's buffer-assignment dump, the persistent cache off.
- ``sharding``: ``GSPMDSharding``; a ``PartitionSpec``'s partitions and unreduced/reduced axes.  ``backends``: the initialised backends.
"""

from __future__ import annotations

from workbench.engine._jax_compat._modules import FEATURES
from workbench.engine._jax_compat.backends import available_backends, backends_initialized
from workbench.engine._jax_compat.cluster import (
    compiled_executable_on_stack,
    distributed_initialize,
    enable_recoverability,
    executable_hlo_text,
    parameter_shardings,
)
from workbench.engine._jax_compat.compilation import persistent_cache_bypassed
from workbench.engine._jax_compat.compile_dump import compile_with_dump
from workbench.engine._jax_compat.flax_jit import (
    NnxJitStage,
    abstract_nnx_call,
    is_nnx_node,
    nnx_jit_call,
    nnx_mapped,
)
from workbench.engine._jax_compat.jaxpr import (
    JAXPR_TYPES_MERGED,
    ClosedJaxpr,
    DropVar,
    Jaxpr,
    Literal,
    is_closed_jaxpr,
    is_dropvar,
    is_jaxpr,
    is_literal,
    is_open_jaxpr,
    jaxpr_consts,
    literal_text,
    open_jaxpr,
    traced_function_name,
)
from workbench.engine._jax_compat.jit import (
    JitSettings,
    bound_jitted,
    function_code,
    innermost_function,
    is_jax_internal,
    is_jitted,
    jit_settings,
    jitted_inner,
    make_jaxpr_target,
    runs_user_code,
    transform_label,
    transform_names,
    unwrap_chain,
)
from workbench.engine._jax_compat.monitoring import (
    COMPILE_EVENT,
    EXPLAIN_LOGGERS,
    LOWER_EVENT,
    PCACHE_HIT_EVENT,
    PCACHE_REQUEST_EVENT,
    PCACHE_SAVED_EVENT,
    PCACHE_WRITE_EVENT,
    TRACE_EVENT,
    explain_on_this_thread,
    explanations_requested,
    monitoring_listeners,
    restore_explain,
    unregister_monitoring_listener,
)
from workbench.engine._jax_compat.scoping import (
    fresh_trace_caches,
    fresh_trace_caches_supported,
    jax_dirs,
    library_layer_dirs,
    name_stack_empty,
    unique_trace_context,
)
from workbench.engine._jax_compat.sharding import GSPMDSharding, spec_parts
from workbench.engine._jax_compat.source_info import (
    exclude_path_from_user_frames,
    name_stack,
    user_frame,
    user_frames,
)
from workbench.engine._jax_compat.stack import (
    LoweringSource,
    jit_trace_site,
    lowering_source,
    outermost_frame,
    user_call_site,
)
from workbench.engine._jax_compat.trace_site import ArgType, JitTraceSite

__all__ = [
    # _modules
    "FEATURES",
    # cluster
    "compiled_executable_on_stack",
    "distributed_initialize",
    "enable_recoverability",
    "executable_hlo_text",
    "parameter_shardings",
    # jaxpr
    "JAXPR_TYPES_MERGED",
    "ClosedJaxpr",
    "DropVar",
    "Jaxpr",
    "Literal",
    "is_closed_jaxpr",
    "is_dropvar",
    "is_jaxpr",
    "is_literal",
    "literal_text",
    "traced_function_name",
    "is_open_jaxpr",
    "jaxpr_consts",
    "open_jaxpr",
    # source_info
    "exclude_path_from_user_frames",
    "name_stack",
    "user_frame",
    "user_frames",
    # compilation
    "persistent_cache_bypassed",
    # flax_jit
    "NnxJitStage",
    "abstract_nnx_call",
    "is_nnx_node",
    "nnx_jit_call",
    "nnx_mapped",
    # jit
    "JitSettings",
    "bound_jitted",
    "function_code",
    "innermost_function",
    "is_jax_internal",
    "is_jitted",
    "jit_settings",
    "jitted_inner",
    "make_jaxpr_target",
    "runs_user_code",
    "transform_label",
    "transform_names",
    "unwrap_chain",
    # trace_site and stack
    "ArgType",
    "JitTraceSite",
    "LoweringSource",
    "jit_trace_site",
    "lowering_source",
    "outermost_frame",
    "user_call_site",
    # monitoring
    "COMPILE_EVENT",
    "EXPLAIN_LOGGERS",
    "LOWER_EVENT",
    "PCACHE_HIT_EVENT",
    "PCACHE_REQUEST_EVENT",
    "PCACHE_SAVED_EVENT",
    "PCACHE_WRITE_EVENT",
    "TRACE_EVENT",
    "explain_on_this_thread",
    "explanations_requested",
    "monitoring_listeners",
    "restore_explain",
    "unregister_monitoring_listener",
    # scoping
    "fresh_trace_caches",
    "fresh_trace_caches_supported",
    "jax_dirs",
    "library_layer_dirs",
    "name_stack_empty",
    "unique_trace_context",
    # sharding, backends
    "GSPMDSharding",
    "spec_parts",
    "available_backends",
    "backends_initialized",
    # compile_dump
    "compile_with_dump",
]
