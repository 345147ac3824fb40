"""A custom import-linter contract: only named modules may import private parts of
external packages (``jax._src``, jaxlib's submodules).

import-linter's own ``forbidden`` contract cannot say this: with
``include_external_packages`` an external package is one squashed node (``jax``), and
it rejects subpackages of external packages as forbidden modules.  grimp still keeps
each import's source line, so this contract reads which module names those lines
import and matches them against the private patterns.  Registered in pyproject.toml
under ``[tool.importlinter] contract_types``; lint-imports puts the working directory
on ``sys.path``, so ``tests.contracts`` is importable when it runs from the repository
root (as ``tests/project/test_layers.py`` does).
"""

from __future__ import annotations

import ast
import re
from dataclasses import dataclass

from grimp import ImportGraph
from importlinter.application import output
from importlinter.domain import fields
from importlinter.domain.contract import Contract, ContractCheck


@dataclass(frozen=True)
class PrivateImport:
    importer: str
    line_number: int
    line: str
    imported: str  # the full private module name the line imports


_FROM = re.compile(r"^\s*from\s+([\w.]+)\s+import\s*\(?\s*(.*)$")
_IMPORT = re.compile(r"^\s*import\s+(.+)$")


def imported_names(line: str) -> list[str]:
    """Full dotted names a source line of an import statement brings in:
    ``import a.b`` -> ``a.b``; ``from a import b, c`` -> ``a.b``, ``a.c`` (a name
    imported from a package may be a submodule, so it counts as one).  Multi-line
    statements, of which grimp keeps the first line, are read by pattern."""
    try:
        tree = ast.parse(line.strip())
    except SyntaxError:
        tree = None
    names: list[str] = []
    if tree is not None and tree.body and isinstance(tree.body[0], (ast.Import, ast.ImportFrom)):
        node = tree.body[0]
        if isinstance(node, ast.Import):
            return [a.name for a in node.names]
        base = node.module or ""
        return [base, *(f"{base}.{a.name}" for a in node.names if a.name != "*")]
    m = _FROM.match(line)
    if m:
        base = m.group(1)
        rest = [n.strip().split(" as ")[0].strip(" ,()") for n in m.group(2).split(",")]
        return [base, *(f"{base}.{n}" for n in rest if n and n != "*")]
    m = _IMPORT.match(line)
    if m:
        names = [n.strip().split(" as ")[0].strip() for n in m.group(1).split(",")]
    return [n for n in names if n]


def is_private(name: str, patterns: set[str]) -> bool:
    """``pkg.mod`` matches the module and everything under it; ``pkg.*`` matches
    every submodule of ``pkg`` but not ``pkg`` itself (``import jaxlib`` for its
    version is fine, ``from jaxlib import xla_client`` is not)."""
    for pattern in patterns:
        if pattern.endswith(".*"):
            if name.startswith(pattern[:-1]):
                return True
        elif name == pattern or name.startswith(pattern + "."):
            return True
    return False


def is_allowed(importer: str, allowed: set[str]) -> bool:
    """``importer`` is an allowed module or inside an allowed package: ``pkg.shim``
    allows ``pkg.shim`` and ``pkg.shim.core``, not the sibling ``pkg.shim_extra``."""
    return any(importer == a or importer.startswith(a + ".") for a in allowed)


class PrivateImportsContract(Contract):
    """Modules under ``source_modules`` other than ``allowed_importers`` must not import
    anything matching ``private_modules``.

    Configuration options:
        - source_modules:     packages whose modules are checked (with their descendants).
        - private_modules:    dotted names (``jax._src``) or ``pkg.*`` patterns.
        - allowed_importers:  modules that may import them (the one compatibility shim),
                              each with its submodules when it is a package.
    """

    type_name = "private_imports"

    source_modules = fields.ListField(subfield=fields.StringField())
    private_modules = fields.ListField(subfield=fields.StringField())
    allowed_importers = fields.ListField(subfield=fields.StringField(), required=False)

    def _option(self, name: str) -> list[str]:
        """A parsed list option (the class attribute is the field; the instance's the value)."""
        return [str(v) for v in (getattr(self, name, None) or [])]

    def check(self, graph: ImportGraph, verbose: bool) -> ContractCheck:
        patterns = set(self._option("private_modules"))
        tops = {p.split(".")[0] for p in patterns}
        allowed = set(self._option("allowed_importers"))
        importers: set[str] = set()
        for source in self._option("source_modules"):
            importers |= {source, *graph.find_descendants(source)}
        found: list[PrivateImport] = []
        for importer in sorted(i for i in importers if not is_allowed(i, allowed)):
            for imported in sorted(graph.find_modules_directly_imported_by(importer)):
                if imported.split(".")[0] not in tops:
                    continue
                for detail in graph.get_import_details(importer=importer, imported=imported):
                    line = str(detail["line_contents"])
                    for name in imported_names(line):
                        if is_private(name, patterns):
                            found.append(
                                PrivateImport(
                                    importer, int(detail["line_number"]), line.strip(), name
                                )
                            )
                            break
        return ContractCheck(kept=not found, metadata={"found": found})

    def render_broken_contract(self, check: ContractCheck) -> None:
        allowed = ", ".join(self._option("allowed_importers")) or "no module"
        output.print_error(f"Only {allowed} may import these; found:", bold=True)
        output.new_line()
        for f in check.metadata["found"]:
            # (no square brackets: the output is rich markup)
            output.print_error(f"- {f.importer} (l.{f.line_number}): {f.line}  -> {f.imported}")
        output.new_line()
