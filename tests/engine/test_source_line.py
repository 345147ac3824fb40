"""One record for "a line of the user's source".

Every feature points back at the user's code; when each grows its own
``file``/``line`` dataclass the views draw them differently and the payloads
drift.  These tests look for such records across the package, so a new one
fails here.
"""

from __future__ import annotations

import dataclasses
import importlib
import pkgutil

import jax
import jax.numpy as jnp

import workbench
from workbench.engine import _jax_compat as compat
from workbench.engine.common.source import SourceLine

#: file:line records besides SourceLine: none (the cache's call sites are SourceLines too).
PENDING: set[str] = set()


def _file_line_dataclasses() -> set[str]:
    found = set()
    for mod in pkgutil.walk_packages(workbench.__path__, "workbench."):
        module = importlib.import_module(mod.name)
        for name, obj in vars(module).items():
            if (
                isinstance(obj, type)
                and dataclasses.is_dataclass(obj)
                and obj.__module__ == module.__name__
            ):
                fields = {f.name for f in dataclasses.fields(obj)}
                if {"file", "line"} <= fields:
                    found.add(f"{obj.__module__}.{name}")
    return found


def test_source_line_is_the_only_file_line_record():
    found = _file_line_dataclasses()
    assert "workbench.engine.common.source.SourceLine" in found
    others = found - {"workbench.engine.common.source.SourceLine"}
    assert others == PENDING, f"file:line records besides SourceLine: {sorted(others - PENDING)}"


def test_jax_compat_gives_a_source_line_with_its_column():
    def f(x):
        return jnp.sin(x) * 2.0

    cj = jax.make_jaxpr(f)(1.0)
    fr = compat.user_frame(cj.jaxpr.eqns[0].source_info)
    assert isinstance(fr, SourceLine)
    assert fr.file == __file__ and fr.line == f.__code__.co_firstlineno + 1
    assert fr.column is not None and fr.text is None
    assert set(fr.to_dict()) == {"file", "line", "function", "column"}
