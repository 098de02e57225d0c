"""The layering rule, enforced: every module of Strata imports only from its own layer or
the layers below it, and no modules import each other in a cycle.

Imports are read from the source (ast), wherever they appear: at module level, inside
functions and under `if TYPE_CHECKING:`. A type-only import is a dependency a reader has
to follow too.

    support      errors, source locations, element types (imports nothing of Strata)
    dialects     graph, tile, token; the op registry; the IR context and parser
    transforms   passes within one level
    frontends    the builder (and the importers): programs from where users keep them
    lowering     passes from one level to the next, the LLVM and NVVM translations
    runtime      the reference interpreter, the CPU and CUDA runtimes
    targets      cpu, cuda, reference: pipeline + translator + executable; the pass registry
    strata       the public Python API
    tools        the command-line programs
"""

from __future__ import annotations

import ast
import tomllib
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent

LAYERS = ("support", "dialects", "transforms", "frontends", "lowering", "runtime", "targets", "strata", "tools")
"""Bottom to top."""

MAY_IMPORT = {
    "support": set(),
    "dialects": {"support"},
    "transforms": {"support", "dialects"},
    "frontends": {"support", "dialects", "transforms"},
    "lowering": {"support", "dialects", "transforms"},
    "runtime": {"support", "dialects", "transforms", "lowering"},
    "targets": {"support", "dialects", "transforms", "lowering", "runtime"},
    "strata": {"support", "dialects", "transforms", "frontends", "lowering", "runtime", "targets"},
    "tools": {"support", "dialects", "transforms", "frontends", "lowering", "runtime", "targets", "strata"},
}
"""Which layers each layer may import besides itself (front ends and lowering are side by side)."""


def package_folders() -> dict[str, Path]:
    """Package name -> folder, from pyproject.toml (the folders are mapped into `strata`)."""
    config = tomllib.loads((ROOT / "pyproject.toml").read_text())["tool"]["setuptools"]
    return {name: ROOT / folder for name, folder in config["package-dir"].items()}


def modules() -> dict[str, Path]:
    """Every module of the distribution by dotted name."""
    found: dict[str, Path] = {}
    for package, folder in package_folders().items():
        for path in folder.glob("*.py"):
            name = package if path.stem == "__init__" else f"{package}.{path.stem}"
            found[name] = path
        for sub in folder.iterdir():
            if (sub / "__init__.py").exists() and f"{package}.{sub.name}" not in package_folders():
                for path in sub.glob("*.py"):
                    name = f"{package}.{sub.name}" if path.stem == "__init__" else f"{package}.{sub.name}.{path.stem}"
                    found[name] = path
    return found


def layer_of(module: str) -> str:
    parts = module.split(".")
    return parts[1] if len(parts) > 1 and parts[1] in LAYERS else "strata"


def imports_of(name: str, path: Path, known: set[str]) -> set[str]:
    """The Strata modules `path` imports (a `from package import module` names the module)."""
    is_package = path.stem == "__init__"
    found: set[str] = set()
    for node in ast.walk(ast.parse(path.read_text(), str(path))):
        if isinstance(node, ast.Import):
            targets = [alias.name for alias in node.names]
        elif isinstance(node, ast.ImportFrom):
            if node.level:
                base = name.split(".")[: len(name.split(".")) - node.level + is_package]
                source = ".".join(base + ([node.module] if node.module else []))
            else:
                source = node.module or ""
            targets = [f"{source}.{alias.name}" if f"{source}.{alias.name}" in known else source for alias in node.names]
        else:
            continue
        found.update(t for t in targets if t.split(".")[0] == "strata")
    return found


def import_graph() -> dict[str, set[str]]:
    found = modules()
    known = set(found)
    graph = {}
    for name, path in found.items():
        imported = imports_of(name, path, known)
        unknown = {m for m in imported if m not in known}
        assert not unknown, f"{name} imports modules that do not exist: {sorted(unknown)}"
        graph[name] = imported - {name}
    return graph


def test_every_folder_is_a_known_layer():
    assert {layer_of(m) for m in modules()} <= set(LAYERS)
    assert set(MAY_IMPORT) == set(LAYERS)


def test_no_import_against_the_layer_order():
    violations = [
        f"{module} ({layer_of(module)}) imports {target} ({layer_of(target)})"
        for module, targets in sorted(import_graph().items())
        for target in sorted(targets)
        if layer_of(target) != layer_of(module) and layer_of(target) not in MAY_IMPORT[layer_of(module)]
    ]
    assert not violations, "imports against the layer order:\n" + "\n".join(violations)


def find_cycles(graph: dict[str, set[str]]) -> list[list[str]]:
    """The strongly connected components with more than one module (Tarjan)."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    cycles: list[list[str]] = []

    def visit(node: str) -> None:
        index[node] = low[node] = len(index)
        stack.append(node)
        on_stack.add(node)
        for target in sorted(graph.get(node, ())):
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


def test_no_import_cycles():
    cycles = find_cycles(import_graph())
    assert not cycles, "import cycles:\n" + "\n".join(" <-> ".join(c) for c in cycles)


@pytest.mark.parametrize(
    "graph, expected",
    [
        ({"a": {"b"}, "b": {"a"}}, [["a", "b"]]),
        ({"a": {"b"}, "b": {"c"}, "c": {"a"}, "d": {"a"}}, [["a", "b", "c"]]),
        ({"a": {"b"}, "b": set()}, []),
    ],
)
def test_the_cycle_finder_finds_cycles(graph, expected):
    assert find_cycles(graph) == expected


def test_the_import_reader_sees_function_level_and_type_checking_imports(tmp_path):
    source = tmp_path / "probe.py"
    source.write_text(
        "from typing import TYPE_CHECKING\n"
        "if TYPE_CHECKING:\n    from strata.runtime import cpu\n"
        "def f():\n    import strata.targets.passes\n"
    )
    known = {"strata.runtime.cpu", "strata.targets.passes"}
    assert imports_of("strata.dialects.probe", source, known) == known


def test_public_names_are_the_documented_objects_whichever_module_loads_first():
    """strata's public names are imported on first use (PEP 562): a submodule imported
    later must not replace one of them (as `strata.grad` the module once could)."""
    import importlib
    import types

    import strata

    for module in ("strata.api", "strata.gradients", "strata.training", "strata.frontends.builder", "strata.dsl"):
        importlib.import_module(module)
    modules = {"dsl", "vsla", "ops"}
    for name in strata.__all__:
        assert isinstance(getattr(strata, name), types.ModuleType) == (name in modules), name
    assert callable(strata.grad) and callable(strata.value_and_grad) and strata.compile_torch.__module__ == "strata.torch_api"
