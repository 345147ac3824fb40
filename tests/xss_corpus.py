"""A corpus of hostile user strings, and one output of every payload kind built from code
whose strings are that corpus: function names, named scopes (op_name), file names, array
and benchmark names.  Drawn by the standalone runtime (chromium/test_standalone_browser.py)
and by the JupyterLab extension (chromium/test_xss_extension_browser.py): nothing may
execute, every string must show as text.  A payload that would run sets ``window.__xss``.
"""

from __future__ import annotations

import copy
import functools

from tests.programs import two_process_cluster_report
from workbench.views._standalone import STATIC_KINDS

#: `<img onerror>`, `</script>`, a `javascript:` URL, a template literal, bidi controls
XSS = (
    '<img src=x onerror="window.__xss=1">"\'</script><script>window.__xss=2</script>'
    " javascript:window.__xss=3 `${window.__xss=4}` \u202e\u2066gnp.exe\u2069"
)
#: code whose file name, function name and named scope are the corpus
XSS_SOURCE = f"""
import jax, jax.numpy as jnp

def fn(w, x):
    with jax.named_scope({XSS!r}):
        return jnp.sum(jnp.tanh(x @ w) ** 2)

fn.__name__ = fn.__qualname__ = {XSS!r}
"""


@functools.cache
def _bundles(shell) -> dict[str, dict]:
    """The MIME bundle of one output of each kind, built from code whose strings are the corpus."""
    import jax
    import jax.numpy as jnp
    from jax.sharding import NamedSharding
    from jax.sharding import PartitionSpec as P

    import workbench
    from workbench.engine.memory.program import build_program_memory
    from workbench.engine.stages import Inspection
    from workbench.views import cache as cache_view
    from workbench.views import cluster as cluster_view
    from workbench.views import memory as memory_view

    ns: dict = {}
    exec(compile(XSS_SOURCE, f"/tmp/{XSS}.py", "exec"), ns)
    fn = ns["fn"]
    w, x = jnp.ones((4, 4)), jnp.ones((2, 4))
    mesh = jax.make_mesh((2, 4), ("data", "model"))
    xs = jax.device_put(jnp.ones((8, 8)), NamedSharding(mesh, P("data", "model")))
    jfn = jax.jit(fn)
    jfn(w, x)
    shell.run_cell("pass", store_history=True)
    out = {
        "jaxpr": workbench.jaxpr(fn, w, x, transforms="grad"),
        "jaxpr-compare": workbench.jaxpr(fn, w, x, transforms="grad", compare=True),
        "hlo": workbench.hlo(fn, w, x, transforms="grad"),
        "bench": workbench.bench({XSS: jfn}, w, x, budget=0.05, progress=False),
        "sharding": workbench.sharding({XSS: xs}),
        "profile": workbench.profile(jfn, w, x, n=2),
    }
    # the live arrays, one held by a name that is the corpus; the gradient's buffer assignment
    shell.user_ns[XSS] = xs
    out["memory"] = workbench.memory()
    out["memory-program"] = memory_view.program_display(
        build_program_memory(Inspection(fn, (w, x), {}))
    )
    out["cluster"] = cluster_view.cluster_display(two_process_cluster_report(fn, w, x))
    bundles = {k: d._repr_mimebundle_() for k, d in out.items()}
    bundles["cache"] = cache_view.cache_display(workbench.cache())._repr_mimebundle_()
    # where one real compile of the corpus-named function goes
    shell.user_ns.update(_xss_fn=fn, _xss_w=w, _xss_x=x)
    compiled = shell.run_cell("%jaxprof --compile _xss_fn(_xss_w, _xss_x)")
    bundles["compile-time"] = shell.display_formatter.format(compiled.result)[0]
    del shell.user_ns[XSS]
    return bundles


#: kinds the corpus does not reach here: the compile line carries no runtime (STATIC_KINDS);
#: the mesh explorer's strings are its own form's; the persistent cache's, a directory path
XSS_NOT_COVERED = STATIC_KINDS | {"mesh-explorer", "cache-persistent"}


def xss_bundles(shell) -> dict[str, dict]:
    """``{kind: MIME bundle}`` of one output of each kind the corpus reaches (built once per
    process: one real compile, benchmark and profile each); a copy the caller may change."""
    return copy.deepcopy(_bundles(shell))
