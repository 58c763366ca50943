"""The app's code stays in pieces a reader can hold: no class over 400 lines, no function over 80;
no import circle among its modules; and the protocol layer imports nothing of Django or DRF.

Measured from the source with ``ast`` (a definition's first line, decorators included, to its
last), so the rule holds for every module of ``mcp_endpoint/`` except generated migrations.
"""

from __future__ import annotations

import ast
from collections.abc import Iterator
from pathlib import Path

import pytest

import mcp_endpoint

PACKAGE = Path(mcp_endpoint.__file__).parent
MAX_CLASS_LINES = 400
MAX_FUNCTION_LINES = 80


def modules() -> list[Path]:
    return sorted(
        path
        for path in PACKAGE.rglob("*.py")
        if "migrations" not in path.relative_to(PACKAGE).parts
    )


def oversized(source: str) -> list[tuple[str, int, int]]:
    """Each class over ``MAX_CLASS_LINES`` and function over ``MAX_FUNCTION_LINES`` lines:
    (name, first line, length)."""
    found = []
    for node in ast.walk(ast.parse(source)):
        if isinstance(node, ast.ClassDef):
            limit = MAX_CLASS_LINES
        elif isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
            limit = MAX_FUNCTION_LINES
        else:
            continue
        first = min([node.lineno, *(decorator.lineno for decorator in node.decorator_list)])
        length = (node.end_lineno or node.lineno) - first + 1
        if length > limit:
            found.append((node.name, first, length))
    return found


def test_every_module_is_measured() -> None:
    names = {path.relative_to(PACKAGE).as_posix() for path in modules()}
    assert {"endpoint.py", "views.py", "protocol/server.py", "rest_framework/spec.py"} <= names
    assert not any(name.startswith("migrations/") for name in names)


@pytest.mark.parametrize("path", modules(), ids=lambda path: path.relative_to(PACKAGE).as_posix())
def test_no_class_or_function_too_long(path: Path) -> None:
    found = oversized(path.read_text(encoding="utf-8"))
    assert not found, "\n".join(
        f"{path.relative_to(PACKAGE)}:{line} {name} is {length} lines"
        for name, line, length in found
    )


def lines(count: int) -> str:
    return "".join(f"    x{index} = {index}\n" for index in range(count))


def test_the_measure_counts_decorators_and_catches_a_long_function() -> None:
    # A decorator and a def line, then the body: 80 lines fit, 81 do not.
    assert oversized(f"@decorator\ndef fits():\n{lines(MAX_FUNCTION_LINES - 2)}") == []
    assert oversized(f"@decorator\ndef long():\n{lines(MAX_FUNCTION_LINES - 1)}") == [
        ("long", 1, MAX_FUNCTION_LINES + 1)
    ]


def test_the_measure_catches_a_long_class() -> None:
    source = f"class Large:\n{lines(MAX_CLASS_LINES)}"
    assert oversized(source) == [("Large", 1, MAX_CLASS_LINES + 1)]


def import_statements(source: str, package: str = "") -> Iterator[tuple[str, list[str]]]:
    """Each import of a source, at any depth of its code (``TYPE_CHECKING`` too): the module it
    names and the names it takes from it (none for ``import x``). A relative import is resolved
    against ``package``, and left out when none is given."""
    for node in ast.walk(ast.parse(source)):
        if isinstance(node, ast.Import):
            for alias in node.names:
                yield alias.name, []
        elif isinstance(node, ast.ImportFrom):
            base = node.module or ""
            if node.level:
                if not package:
                    continue
                anchor = package.split(".")[: len(package.split(".")) - node.level + 1]
                base = ".".join([*anchor, *([base] if base else [])])
            yield base, [alias.name for alias in node.names]


def imported_modules(source: str) -> set[str]:
    """Every module a source imports, at any depth of its code (``TYPE_CHECKING`` too)."""
    return {module for module, _ in import_statements(source)}


@pytest.mark.parametrize(
    "path",
    sorted((PACKAGE / "protocol").glob("*.py")),
    ids=lambda path: path.name,
)
def test_the_protocol_layer_imports_no_django(path: Path) -> None:
    # Dicts in, dicts out: the transports (and nothing else) know HTTP.
    imported = imported_modules(path.read_text(encoding="utf-8"))
    assert not {name for name in imported if name.split(".")[0] in {"django", "rest_framework"}}


def test_the_import_measure_sees_nested_imports() -> None:
    source = "if TYPE_CHECKING:\n    from django.http import HttpRequest\n"
    assert imported_modules(source) == {"django.http"}


def module_name(path: Path) -> str:
    parts = ["mcp_endpoint", *path.relative_to(PACKAGE).with_suffix("").parts]
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


def import_graph(sources: dict[str, str]) -> dict[str, set[str]]:
    """Which of ``sources`` (module name to code) each one imports, at any depth of its code,
    ``TYPE_CHECKING`` and imports inside functions included: a name taken from a package is
    its submodule where one has that name, else the package itself."""
    graph: dict[str, set[str]] = {name: set() for name in sources}
    for name, source in sources.items():
        package = name if source_is_package(name, sources) else name.rpartition(".")[0]
        for module, names in import_statements(source, package):
            targets = [f"{module}.{n}" if f"{module}.{n}" in sources else module for n in names]
            graph[name].update(t for t in targets or [module] if t in sources and t != name)
    return graph


def source_is_package(name: str, sources: dict[str, str]) -> bool:
    return any(other.startswith(f"{name}.") for other in sources)


def circle(graph: dict[str, set[str]]) -> list[str]:
    """One import circle of ``graph`` as the modules along it (first one repeated at the end),
    or [] when there is none."""
    state: dict[str, int] = {}  # 1 on the current path, 2 done
    path: list[str] = []

    def visit(name: str) -> list[str]:
        state[name] = 1
        path.append(name)
        for target in sorted(graph[name]):
            if state.get(target) == 1:
                return [*path[path.index(target) :], target]
            if target not in state and (found := visit(target)):
                return found
        path.pop()
        state[name] = 2
        return []

    for name in sorted(graph):
        if name not in state and (found := visit(name)):
            return found
    return []


def test_no_import_circle() -> None:
    # A module only ever imports modules below it, so that each one can be read (and
    # imported) knowing nothing of what stands above it.
    sources = {module_name(path): path.read_text(encoding="utf-8") for path in modules()}
    found = circle(import_graph(sources))
    assert not found, " -> ".join(found)


# The modules that find a caller's key or token (its look-up, the key models, caches and
# memory, the writes of its last use): the DRF adapter reads the credential they made
# (mcp_endpoint.credential) and imports none of them, so that it stands below the executor
# that runs its tools and calls down into it.
CREDENTIAL_LOOK_UP = frozenset(
    {
        "mcp_endpoint.authentication",
        "mcp_endpoint.models",
        "mcp_endpoint.key_cache",
        "mcp_endpoint.key_memory",
        "mcp_endpoint.last_use",
    }
)


def test_the_drf_adapter_reads_credentials_and_looks_none_up() -> None:
    sources = {module_name(path): path.read_text(encoding="utf-8") for path in modules()}
    graph = import_graph(sources)
    adapter = {name for name in graph if name.startswith("mcp_endpoint.rest_framework")}
    assert adapter
    reached = {name: graph[name] & CREDENTIAL_LOOK_UP for name in sorted(adapter)}
    assert not {name: found for name, found in reached.items() if found}
    assert "mcp_endpoint.executor" not in set().union(*(graph[name] for name in adapter))


def test_the_circle_measure_sees_type_checking_and_function_imports() -> None:
    sources = {
        "mcp_endpoint": "",
        "mcp_endpoint.low": "def f():\n    from mcp_endpoint import high\n",
        "mcp_endpoint.high": "if TYPE_CHECKING:\n    from .mid import X\n",
        "mcp_endpoint.mid": "from mcp_endpoint.low import f\n",
        "mcp_endpoint.pkg": "from mcp_endpoint.pkg.part import Y\n",
        "mcp_endpoint.pkg.part": "from mcp_endpoint.pkg import sibling\n",
        "mcp_endpoint.pkg.sibling": "",
    }
    graph = import_graph(sources)
    assert graph["mcp_endpoint.pkg.part"] == {"mcp_endpoint.pkg.sibling"}
    assert circle(graph) == [
        "mcp_endpoint.high",
        "mcp_endpoint.mid",
        "mcp_endpoint.low",
        "mcp_endpoint.high",
    ]
    del sources["mcp_endpoint.mid"]
    assert circle(import_graph(sources)) == []
