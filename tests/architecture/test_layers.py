"""Imports run one way: each package imports only the packages below it, and no two modules import each
other (function-local imports included), so a reader can find any piece by its layer."""

from __future__ import annotations

import ast
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
# Bottom first. A package may import itself and anything before it in this list.
LAYERS = [
    "jobs",
    "corpus",
    "ubi",  # production queries and events (UBI): ranker_server logs through it
    "rankers",
    "ratings",
    "evaluation",
    "raters",
    "judges",
    "trainer",
    "api",  # the REST API of every app, over their services and selectors
    "config",
]


def _module_name(path: Path, root: Path) -> str:
    parts = list(path.relative_to(root).with_suffix("").parts)
    if parts[-1] == "__init__":
        parts.pop()
    return ".".join(parts)


def _project_imports(root: Path = ROOT) -> dict[str, set[str]]:
    """{module: project modules it imports anywhere in its body}."""
    modules = {
        _module_name(path, root): path
        for layer in LAYERS
        for path in (root / layer).rglob("*.py")
        if "migrations" not in path.parts
    }
    graph: dict[str, set[str]] = {}
    for name, path in modules.items():
        targets: set[str] = set()
        package = name if path.name == "__init__.py" else name.rpartition(".")[0]
        for node in ast.walk(ast.parse(path.read_text(), filename=str(path))):
            if isinstance(node, ast.Import):
                candidates = [alias.name for alias in node.names]
            elif isinstance(node, ast.ImportFrom):
                base = node.module or ""
                if node.level:
                    base = ".".join([*package.split(".")[: len(package.split(".")) - node.level + 1], base])
                    base = base.strip(".")
                candidates = [f"{base}.{alias.name}" for alias in node.names] + [base]
            else:
                continue
            for candidate in candidates:
                # The longest known module the import names (``from a.b import c`` may name a.b.c or a.b).
                while candidate and candidate not in modules:
                    candidate = candidate.rpartition(".")[0]
                if candidate and candidate != name:
                    targets.add(candidate)
        graph[name] = targets
    return graph


def _layer(module: str) -> int:
    return LAYERS.index(module.split(".")[0])


def test_layers_import_only_downwards():
    upward = sorted(
        f"{module} -> {target}"
        for module, targets in _project_imports().items()
        for target in targets
        if _layer(target) > _layer(module)
    )
    assert upward == []


def _cycles(graph: dict[str, set[str]]) -> list[list[str]]:
    # Tarjan's strongly connected components; any component with two or more modules is a cycle.
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    cycles: list[list[str]] = []

    def visit(node: str) -> None:
        index[node] = low[node] = len(index)
        stack.append(node)
        on_stack.add(node)
        for target in graph.get(node, ()):
            if target not in index:
                visit(target)
                low[node] = min(low[node], low[target])
            elif target in on_stack:
                low[node] = min(low[node], index[target])
        if low[node] == index[node]:
            component = []
            while True:
                member = stack.pop()
                on_stack.discard(member)
                component.append(member)
                if member == node:
                    break
            if len(component) > 1:
                cycles.append(sorted(component))

    for node in sorted(graph):
        if node not in index:
            visit(node)
    return cycles


def test_layers_have_no_import_cycles():
    assert _cycles(_project_imports()) == []


def test_layers_checker_finds_function_local_cycle_and_upward_import(tmp_path):
    """The checker itself, on a made-up tree: a cycle hidden in a function body is still a cycle."""
    for layer in LAYERS:
        (tmp_path / layer).mkdir()
        (tmp_path / layer / "__init__.py").write_text("")
    (tmp_path / "rankers" / "services.py").write_text("def f():\n    from rankers.tasks import t\n")
    (tmp_path / "rankers" / "tasks.py").write_text("from rankers import services\n")
    (tmp_path / "corpus" / "models.py").write_text("def g():\n    import ratings.models\n")
    (tmp_path / "ratings" / "models.py").write_text("")
    graph = _project_imports(tmp_path)
    assert _cycles(graph) == [["rankers.services", "rankers.tasks"]]
    assert graph["corpus.models"] == {"ratings.models"}
