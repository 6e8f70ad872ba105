"""The shared package's import graph: no cycle, no import that runs against the layers (STYLE.md:
handler -> domain -> data access), and features that meet only through their ports (STYLE.md item
12). Every import counts, the ones only a type checker follows and the ones inside functions
included: a loop there is still a loop to a reader."""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

pytestmark = pytest.mark.unit

PACKAGE = Path(__file__).resolve().parents[2] / "layers" / "shared" / "warble"

# The layer of each module, by its dotted name's prefix; a module may import its own layer and
# those listed for it, nothing else of warble.
BASE = "base"  # ids, keys, clock, errors, events, settings, ...: what every layer may use
LAYERS = {
    "warble.domain": "domain",
    "warble.dal": "dal",
    "warble.schemas": "schemas",
    "warble.services": "services",
    "warble.skeleton": "skeleton",
    "warble.http": "http",
    "warble.entrypoints": "entrypoints",
}
MAY_IMPORT = {
    BASE: {BASE},
    "domain": {BASE, "domain"},
    "dal": {BASE, "domain", "dal"},
    "schemas": {BASE, "domain", "schemas"},
    "services": {BASE, "domain", "dal", "services"},
    "skeleton": {BASE, "skeleton"},
    "http": {BASE, "domain", "schemas", "services", "skeleton", "http"},
    "entrypoints": {BASE, "domain", "schemas", "services", "skeleton", "entrypoints"},
}
# What an entry point may name of the data access: the store errors it answers 503 for
# (``warble.dal.store_unavailable``, the package root), nothing that reaches a store.
ENTRY_POINTS_MAY_NAME = {"warble.dal"}

# A feature (a package ``warble.domain.<feature>``) may name of another feature only what that one
# shows the others: its ports (Protocols, stored records, the errors its stores raise) and its
# answers (API.md's objects). Never its service, nor any other module of its own.
FEATURE_FACES = {"ports", "answers"}
# What only the data access may name: the Redis keys and the store libraries.
DAL_ONLY = {"warble.keys"}
STORE_LIBRARIES = {"redis", "psycopg", "psycopg_pool", "pynamodb", "boto3", "botocore"}


def module_name(path: Path) -> str:
    parts = path.relative_to(PACKAGE.parent).with_suffix("").parts
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


def layer_of(module: str) -> str:
    for prefix, layer in LAYERS.items():
        if module == prefix or module.startswith(prefix + "."):
            return layer
    return BASE


def imports_of(path: Path, known: set[str]) -> set[str]:
    """Every warble module ``path`` imports, anywhere in the file."""
    name = module_name(path)
    package = name if path.name == "__init__.py" else name.rpartition(".")[0]
    found: set[str] = set()
    for node in ast.walk(ast.parse(path.read_text())):
        if isinstance(node, ast.Import):
            found.update(alias.name for alias in node.names)
        elif isinstance(node, ast.ImportFrom):
            if node.level:
                base = package.split(".")[: len(package.split(".")) - node.level + 1]
                source = ".".join(base + ([node.module] if node.module else []))
            else:
                source = node.module or ""
            found.add(source)
            found.update(f"{source}.{alias.name}" for alias in node.names)
    return {module for module in found if module in known and module != name}


def feature_of(module: str) -> str | None:
    """The feature a module belongs to (``warble.domain.tweets.service``: ``tweets``), if any."""
    parts = module.split(".")
    if parts[:2] != ["warble", "domain"] or len(parts) < 3:
        return None
    return parts[2] if (PACKAGE / "domain" / parts[2] / "__init__.py").exists() else None


def reaches_into(module: str, target: str) -> bool:
    """Whether a domain module imports a part of another feature that is not its face."""
    theirs = feature_of(target)
    if layer_of(module) != "domain" or theirs is None or theirs == feature_of(module):
        return False
    parts = target.split(".")
    return len(parts) > 3 and parts[3] not in FEATURE_FACES


def libraries_of(path: Path) -> set[str]:
    """The top-level names of the third-party and standard modules ``path`` imports."""
    found: set[str] = set()
    for node in ast.walk(ast.parse(path.read_text())):
        if isinstance(node, ast.Import):
            found.update(alias.name.split(".")[0] for alias in node.names)
        elif isinstance(node, ast.ImportFrom) and not node.level and node.module:
            found.add(node.module.split(".")[0])
    return found


@pytest.fixture(scope="module")
def graph() -> dict[str, set[str]]:
    paths = {module_name(path): path for path in PACKAGE.rglob("*.py")}
    return {name: imports_of(path, set(paths)) for name, path in paths.items()}


def cycles(graph: dict[str, set[str]]) -> list[list[str]]:
    """The strongly connected components of more than one module (Tarjan)."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    found: list[list[str]] = []

    def visit(node: str) -> None:
        index[node] = low[node] = len(index)
        stack.append(node)
        for nxt in sorted(graph[node]):
            if nxt not in index:
                visit(nxt)
                low[node] = min(low[node], low[nxt])
            elif nxt in stack:
                low[node] = min(low[node], index[nxt])
        if low[node] == index[node]:
            component = []
            while True:
                member = stack.pop()
                component.append(member)
                if member == node:
                    break
            if len(component) > 1:
                found.append(sorted(component))

    for node in sorted(graph):
        if node not in index:
            visit(node)
    return found


def test_the_graph_is_read_whole(graph: dict[str, set[str]]) -> None:
    # Given the package, then the check sees its layers and their imports (a check that found
    # no module would pass whatever the code did).
    assert {layer_of(module) for module in graph} == set(MAY_IMPORT)
    assert "warble.domain.tweets.ports" in graph["warble.dal.tweets"]
    assert {feature_of(module) for module in graph} >= {"accounts", "tweets", "timelines"}


def test_no_module_imports_itself_back(graph: dict[str, set[str]]) -> None:
    assert cycles(graph) == []


def test_the_cycle_check_finds_a_loop() -> None:
    assert cycles({"a": {"b"}, "b": {"c"}, "c": {"a"}, "d": {"a"}}) == [["a", "b", "c"]]


def test_no_import_runs_against_the_layers(graph: dict[str, set[str]]) -> None:
    upward = sorted(
        f"{module} -> {target}"
        for module, targets in graph.items()
        for target in targets
        if layer_of(target) not in MAY_IMPORT[layer_of(module)]
        and not (layer_of(module) in {"http", "entrypoints"} and target in ENTRY_POINTS_MAY_NAME)
    )
    assert upward == []


def test_the_layer_check_refuses_an_upward_import() -> None:
    # the domain naming a store, a store naming a route, a route naming a stream consumer
    for module, target in [
        ("warble.domain.tweets.service", "warble.dal.tweets"),
        ("warble.dal.tweets", "warble.http.tweets"),
        ("warble.http.app", "warble.entrypoints.websocket"),
    ]:
        assert layer_of(target) not in MAY_IMPORT[layer_of(module)]


def test_features_meet_only_through_their_ports(graph: dict[str, set[str]]) -> None:
    # What one feature needs of another is a narrow Protocol in its own ports, which the
    # composition root (warble.services) satisfies with the other feature's service.
    reaching = sorted(
        f"{module} -> {target}"
        for module, targets in graph.items()
        for target in targets
        if reaches_into(module, target)
    )
    assert reaching == []


def test_the_feature_check_refuses_a_reach_into_another_feature() -> None:
    assert reaches_into("warble.domain.likes.service", "warble.domain.tweets.service")
    assert reaches_into("warble.domain.timelines.service", "warble.domain.tweets.flags")
    assert reaches_into("warble.domain.shared", "warble.domain.graph.service")
    # its own modules, another feature's ports and answers, and the shared modules are fine
    assert not reaches_into("warble.domain.tweets.service", "warble.domain.tweets.flags")
    assert not reaches_into("warble.domain.likes.service", "warble.domain.tweets.ports")
    assert not reaches_into("warble.domain.likes.service", "warble.domain.accounts.answers")
    assert not reaches_into("warble.domain.likes.service", "warble.domain.pagination")
    # the composition root wires services together: that is its job
    assert not reaches_into("warble.services", "warble.domain.tweets.service")


def test_the_domain_names_no_key_and_no_store_library(graph: dict[str, set[str]]) -> None:
    named = sorted(
        f"{module} -> {target}"
        for module, targets in graph.items()
        if layer_of(module) == "domain"
        for target in targets & DAL_ONLY
    )
    domain = PACKAGE / "domain"
    libraries = sorted(
        f"{path.relative_to(PACKAGE)} -> {library}"
        for path in domain.rglob("*.py")
        for library in libraries_of(path) & STORE_LIBRARIES
    )
    assert named == [] and libraries == []
