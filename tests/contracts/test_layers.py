"""The layers hold: core imports no UI, the render layer no screens, and nothing is circular.

Read with `ast`, never by importing, so the test sees imports inside functions
too (an import that only runs when a key is pressed still ties two layers
together) and cannot be fooled by what happens to be in `sys.modules`.

The rules, in the order they are tested:

(a) `core/` imports nothing from the viewer, Textual or Rich, at module level
    or inside functions: it is a headless library (`--check`, other programs).
(b) The render layer (widgets and what they draw) imports no screen, directly
    or through the modules it imports: screens are built on widgets, not the
    other way round, so a widget can be tested and reused without the app.
(c) The module-level import graph of the project is acyclic.
(d) A project module imported inside a function must be in `DEFERRED` with
    the reason, and no deferral may be hiding a cycle: adding every deferred
    edge to the module-level graph keeps it acyclic. "Import it lazily" is
    how cycles are usually papered over; this makes each one a decision.
"""

from __future__ import annotations

import ast
from collections.abc import Iterator
from dataclasses import dataclass
from graphlib import CycleError, TopologicalSorter
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]

#: Source folder -> the module name it installs as (see setup.py).
PACKAGES: dict[str, str] = {
    "core": "transcript_view.core",
    "viewer": "transcript_view.viewer",
    "transcript_view": "transcript_view",
}

# -- the rules --------------------------------------------------------------------------

CORE = "transcript_view.core"
#: (a) What core may never import (a name or anything under it).
UI = ("transcript_view.viewer", "textual", "rich")

V = "transcript_view.viewer."
#: (b) The render layer: the widgets, what they draw, and the styles they draw with.
RENDER = {V + n for n in (
    "rows", "blocks", "document", "transcript_view", "fileview", "header", "sanitize", "palette",
)}
#: (b) Screens: what the render layer may not reach (a name or anything under it).
SCREENS = (V + "main_screen", V + "screens", V + "app")

#: (d) Function-level imports of project modules that are allowed: (importer, imported) ->
#: why it is deferred. A TODO entry is a known violation waiting to be removed.
DEFERRED: dict[tuple[str, str], str] = {
    ("transcript_view.cli", V + "app"): (
        "`--check` must never import Textual (tests/contracts/test_import_hygiene.py); "
        "only the viewer path loads the app"
    ),
    ("transcript_view.cli", CORE + ".check"): (
        "start-up: usage errors and the viewer path never load the checker"
    ),
    ("transcript_view.cli", CORE + ".context"): (
        "start-up: only --context loads the model calls' report (and the passes it runs)"
    ),
    ("transcript_view.cli", CORE + ".formats.detect"): (
        "start-up: only the viewer path sniffs the file (`--check` detects in the core)"
    ),
    ("transcript_view.cli", CORE + ".formats.sessions"): (
        "start-up: only --claude / --codex need the agents' default folders"
    ),
    ("transcript_view.cli", CORE + ".opencode_store"): (
        "start-up: only a PATH that is OpenCode's (a database, a session in one) reads it"
    ),
    ("transcript_view.cli", CORE + ".transcript"): (
        "start-up: `--help` and usage errors import nothing beyond argparse"
    ),
}

# -- reading the imports ----------------------------------------------------------------


@dataclass(frozen=True)
class Import:
    """One imported module, as the importing module names it."""

    importer: str
    imported: str
    deferred: bool
    """Inside a function: runs when called, not when the importer is imported."""
    typing_only: bool
    """Under `if TYPE_CHECKING:`: never runs, but still a dependency between layers."""
    line: int


def _module_files() -> dict[str, Path]:
    """Every project module by its installed name; `.pyi` stubs stand for native ones."""
    modules: dict[str, Path] = {}
    for folder, package in PACKAGES.items():
        for path in sorted((ROOT / folder).rglob("*.py*")):
            if path.suffix not in (".py", ".pyi") or "__pycache__" in path.parts:
                continue
            parts = [package, *path.relative_to(ROOT / folder).with_suffix("").parts]
            if parts[-1] == "__init__":
                parts.pop()
            modules.setdefault(".".join(parts), path)
    return modules


MODULES = _module_files()


def _is_type_checking(node: ast.If) -> bool:
    test = node.test
    return (isinstance(test, ast.Name) and test.id == "TYPE_CHECKING") or (
        isinstance(test, ast.Attribute) and test.attr == "TYPE_CHECKING"
    )


def _walk(node: ast.AST, deferred: bool, typing_only: bool) -> Iterator[tuple[ast.AST, bool, bool]]:
    for child in ast.iter_child_nodes(node):
        yield child, deferred, typing_only
        inner = deferred or isinstance(child, ast.FunctionDef | ast.AsyncFunctionDef | ast.Lambda)
        typing = typing_only or (isinstance(child, ast.If) and _is_type_checking(child))
        yield from _walk(child, inner, typing)


def _resolve(module: str, node: ast.ImportFrom, is_package: bool) -> str:
    """The absolute module an ImportFrom reads from (relative imports resolved)."""
    if not node.level:
        return node.module or ""
    base = module.split(".")
    base = base if is_package else base[:-1]
    base = base[: len(base) - (node.level - 1)]
    return ".".join([*base, node.module] if node.module else base)


def imports_of(module: str, path: Path) -> Iterator[Import]:
    """Every module `module` imports; `from pkg import sub` names `pkg.sub` when it is one."""
    tree = ast.parse(path.read_bytes(), str(path))
    for node, deferred, typing_only in _walk(tree, False, False):
        names: list[str] = []
        if isinstance(node, ast.Import):
            names = [alias.name for alias in node.names]
        elif isinstance(node, ast.ImportFrom):
            source = _resolve(module, node, path.stem == "__init__")
            names = [
                f"{source}.{alias.name}" if f"{source}.{alias.name}" in MODULES else source
                for alias in node.names
            ]
        for name in dict.fromkeys(names):
            yield Import(module, name, deferred, typing_only, node.lineno)


IMPORTS = [imp for module, path in MODULES.items() for imp in imports_of(module, path)]


def _under(name: str, prefixes: tuple[str, ...]) -> bool:
    return any(name == p or name.startswith(p + ".") for p in prefixes)


def _graph(*, with_deferred: bool) -> dict[str, set[str]]:
    """Project module -> the project modules it imports when it runs."""
    graph: dict[str, set[str]] = {m: set() for m in MODULES}
    for imp in IMPORTS:
        if imp.imported in MODULES and not imp.typing_only and (with_deferred or not imp.deferred):
            graph[imp.importer].add(imp.imported)
    return graph


def _cycle(graph: dict[str, set[str]]) -> list[str]:
    try:
        tuple(TopologicalSorter(graph).static_order())
    except CycleError as exc:
        return list(exc.args[1])
    return []


# -- the tests --------------------------------------------------------------------------


def test_the_modules_are_found() -> None:
    assert {CORE, CORE + ".markers", V + "main_screen", V + "screens.help", "transcript_view.cli"} \
        <= set(MODULES)
    missing = {m for m in RENDER if m not in MODULES}
    assert not missing, f"render-layer modules renamed or gone: update RENDER: {missing}"


def test_core_imports_no_ui() -> None:
    bad = [
        f"{MODULES[i.importer].relative_to(ROOT)}:{i.line} imports {i.imported}"
        for i in IMPORTS
        if _under(i.importer, (CORE,)) and _under(i.imported, UI)
    ]
    assert bad == []


def test_the_render_layer_reaches_no_screen() -> None:
    graph = _graph(with_deferred=True)
    for imp in IMPORTS:  # type-only imports count here: they are still a dependency
        if imp.imported in MODULES:
            graph[imp.importer].add(imp.imported)
    bad: list[str] = []
    for start in sorted(RENDER & set(MODULES)):
        via: dict[str, str] = {start: ""}
        todo = [start]
        while todo:
            here = todo.pop()
            for there in graph[here]:
                if there not in via:
                    via[there] = here
                    todo.append(there)
        for reached in sorted(m for m in via if _under(m, SCREENS)):
            chain = [reached]
            while via[chain[-1]]:
                chain.append(via[chain[-1]])
            bad.append(" -> ".join(reversed(chain)))
    assert bad == [], "the render layer must not import screens"


def test_the_module_level_import_graph_is_acyclic() -> None:
    assert _cycle(_graph(with_deferred=False)) == []


def test_every_deferred_import_is_allowed_and_breaks_no_cycle() -> None:
    deferred = {
        (i.importer, i.imported): f"{MODULES[i.importer].relative_to(ROOT)}:{i.line}"
        for i in IMPORTS
        if i.deferred and i.imported in MODULES
    }
    unlisted = [f"{where} imports {b}" for (a, b), where in sorted(deferred.items())
                if (a, b) not in DEFERRED]
    assert unlisted == [], "import at the top of the file, or add to DEFERRED with a reason"
    stale = sorted(set(DEFERRED) - set(deferred))
    assert stale == [], "no longer imported inside a function: remove from DEFERRED"
    assert all(reason.strip() for reason in DEFERRED.values())
    assert _cycle(_graph(with_deferred=True)) == [], "a deferred import is hiding a cycle"
