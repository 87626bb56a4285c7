"""The package's layout: every module imports, no package imports one above it (so no import
circle crosses packages), no two files import each other (directly or in a circle), no module
reaches into its own package's __init__ (the way import cycles start), no module over 400
lines, at most six at the root."""
import ast
import importlib
import pathlib
import re

import pytest

import topkspec

ROOT = pathlib.Path(topkspec.__file__).parent
# kernels/: scripts for a runtime's own interpreter (topkspec.targets.foreign), not modules of the package
MODULES = sorted(p for p in ROOT.rglob("*.py") if "templates" not in p.parts and "kernels" not in p.parts)
MAX_LINES = 400
OVER_FOR_NOW: set = set()  # modules still to split


def _name(path: pathlib.Path) -> str:
    parts = ("topkspec",) + path.relative_to(ROOT).with_suffix("").parts
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


@pytest.mark.parametrize("path", [p for p in MODULES if p.name != "__main__.py"], ids=_name)
def test_every_module_imports(path):
    importlib.import_module(_name(path))


def test_no_module_imports_from_its_own_package_init():
    """`from topkspec.spec import x` inside topkspec/spec/ is fine for a submodule x, not for a
    name the package's __init__ defines or re-exports (__version__ excepted: no cycle)."""
    reaches = []
    for path in MODULES:
        if path.name == "__init__.py":
            continue
        package = _name(path).rsplit(".", 1)[0]
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if not isinstance(node, ast.ImportFrom):
                continue
            if (node.level == 0 and node.module == package) or (node.level == 1 and node.module is None):
                for alias in node.names:
                    submodule = path.parent / f"{alias.name}.py"
                    subpackage = path.parent / alias.name / "__init__.py"
                    if not (submodule.exists() or subpackage.exists() or alias.name == "__version__"):
                        reaches.append(f"{_name(path)}:{node.lineno} imports {alias.name} from {package}")
    assert not reaches, "\n".join(reaches)


def test_no_module_is_over_400_lines():
    long = {_name(p): n for p in MODULES if (n := len(p.read_text(encoding="utf-8").splitlines())) > MAX_LINES
            and _name(p) not in OVER_FOR_NOW}
    assert not long, f"modules over {MAX_LINES} lines: {long}"


def test_the_package_root_holds_at_most_six_modules():
    root = sorted(p.name for p in ROOT.glob("*.py"))
    assert len(root) <= 6, f"the package root holds {len(root)} modules: {root}"


# The rooms (packages, sub-packages and root modules) from the bottom up: each may import those
# below it, never one above. A module belongs to the most specific room that holds it:
# DirectML's stack (its worker, Windows stack and clients) sits below the adapters that call
# it, and the tools that run the targets on it (setup's check, the bundle, the analyses) are a
# package of their own above them, so no package straddles the targets. The root package itself defines only __version__ and lazy names; any
# module may read __version__ from it.
LAYERS = ("errors", "spec", "strategies", "properties", "repro",
          "directml", "directml.worker", "directml.windows", "directml.client",
          "targets", "targets.runtimes", "corpus", "known",
          "directml_tools", "directml_tools.setup", "directml_tools.bundle", "directml_tools.analyses",
          "report", "fuzz", "cli", "suite", "pytest_plugin", "hypofuzz_suite", "__main__")


def _layer(module: str) -> str | None:
    parts = module.split(".")[1:]
    for size in range(len(parts), 0, -1):
        if ".".join(parts[:size]) in LAYERS:
            return ".".join(parts[:size])
    return None


def test_no_package_straddles_the_targets():
    """A package's rooms lie all below the targets or all above them: one whose lower rooms
    the targets import and whose upper rooms import the targets is on both floors at once."""
    below, above = LAYERS[:LAYERS.index("targets")], LAYERS[LAYERS.index("targets.runtimes") + 1:]
    top = lambda room: room.split(".")[0]  # noqa: E731
    straddling = sorted({top(room) for room in below} & {top(room) for room in above})
    assert not straddling, f"packages with rooms below and above the targets: {straddling}"


def test_every_package_is_a_room():
    """A package split into rooms (directml, targets) names each of its sub-packages in LAYERS,
    so a new one is placed among its neighbours, not taken for its parent."""
    split = {room.split(".")[0] for room in LAYERS if "." in room}
    packages = {_name(p).split(".", 1)[1] for p in MODULES if p.name == "__init__.py" and _name(p) != "topkspec"}
    unplaced = sorted(p for p in packages if p.split(".")[0] in split and p not in LAYERS)
    assert not unplaced, f"sub-packages with no place in LAYERS: {unplaced}"


def _imported(path: pathlib.Path, node) -> list[tuple[str, str]]:
    """(module imported, name) for an import statement, relative ones resolved; a name that
    is a submodule counts as an import of that submodule."""
    if isinstance(node, ast.Import):
        return [(alias.name, "") for alias in node.names]
    package = _name(path) if path.name == "__init__.py" else _name(path).rsplit(".", 1)[0]
    base = package.split(".")[:len(package.split(".")) - (node.level - 1)] if node.level else []
    module = ".".join(base + ([node.module] if node.module else []))
    found = []
    for alias in node.names:
        folder = ROOT.parent.joinpath(*module.split("."), alias.name)
        is_module = folder.with_suffix(".py").exists() or (folder / "__init__.py").exists()
        found.append((f"{module}.{alias.name}", "") if is_module else (module, alias.name))
    return found


def test_no_package_imports_one_above_it():
    """At module level or inside a function: an import upwards is a circle waiting to happen."""
    upward = []
    for path in MODULES:
        here = _layer(_name(path))
        if here is None:
            continue  # the root package's __init__
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if not isinstance(node, (ast.Import, ast.ImportFrom)):
                continue
            for module, name in _imported(path, node):
                if module.split(".")[0] != "topkspec":
                    continue
                there = _layer(module)
                if there is None:
                    if name not in ("__version__",):
                        upward.append(f"{_name(path)}:{node.lineno} imports the root package ({name or module})")
                elif LAYERS.index(there) > LAYERS.index(here):
                    upward.append(f"{_name(path)}:{node.lineno} ({here}) imports {module} ({there})")
    assert not upward, "\n".join(upward)


# Circles between files not yet broken: frozenset of modules -> why (empty: keep it so).
CIRCLES_FOR_NOW: dict[frozenset, str] = {}


def _import_graph() -> dict[str, dict[str, int]]:
    """Module -> {module of topkspec it imports: line of the first such import}, counting
    imports at module level and inside functions, `import x` and `from x import y`, relative
    ones too; `from package import name` is an import of the package's __init__."""
    names = {_name(p) for p in MODULES}
    graph: dict[str, dict[str, int]] = {}
    for path in MODULES:
        here = _name(path)
        edges = graph.setdefault(here, {})
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if isinstance(node, (ast.Import, ast.ImportFrom)):
                for module, _ in _imported(path, node):
                    if module in names and module != here:
                        edges.setdefault(module, node.lineno)
    return graph


def _circles(graph: dict[str, dict[str, int]]) -> list[list[str]]:
    """One circle per group of modules that reach each other (a strongly connected component
    of two or more), as the modules in order with the first again at the end: the shortest
    way round from the group's first module."""
    order: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    groups: list[set] = []

    def visit(module: str) -> None:  # Tarjan's algorithm
        order[module] = low[module] = len(order)
        stack.append(module)
        for other in graph.get(module, {}):
            if other not in order:
                visit(other)
                low[module] = min(low[module], low[other])
            elif other in stack:
                low[module] = min(low[module], order[other])
        if low[module] == order[module]:
            group = set()
            while not group or module not in group:
                group.add(stack.pop())
            if len(group) > 1:
                groups.append(group)

    for module in sorted(graph):
        if module not in order:
            visit(module)
    circles = []
    for group in groups:  # breadth first from the group's first module back to it
        start = min(group)
        came_from: dict[str, str | None] = {start: None}
        frontier, last = [start], None
        while last is None:
            ahead = []
            for module in frontier:
                for other in sorted(graph[module]):
                    if other == start and last is None:
                        last = module
                    elif other in group and other not in came_from:
                        came_from[other] = module
                        ahead.append(other)
            frontier = ahead
        circle = [last]
        while came_from[circle[-1]] is not None:
            circle.append(came_from[circle[-1]])
        circles.append(circle[::-1] + [start])
    return sorted(circles)


def test_the_circle_finder_names_a_planted_circle():
    graph = {"a": {"b": 1}, "b": {"c": 2}, "c": {"a": 3, "d": 4}, "d": {}, "e": {"d": 5}}
    assert _circles(graph) == [["a", "b", "c", "a"]]
    assert _circles({"a": {"b": 1}, "b": {}}) == []
    real = _import_graph()  # one import planted back the other way is a circle of two
    assert real["topkspec.targets.registry"]["topkspec.targets.validator"]
    real["topkspec.targets.validator"]["topkspec.targets.registry"] = 1
    assert ["topkspec.targets.registry", "topkspec.targets.validator", "topkspec.targets.registry"] in _circles(real)


def test_no_two_files_import_each_other():
    """Not directly, not in a circle of three or more: a circle is broken by moving what both
    sides need to a lower file or by passing it in, never hidden in an import inside a function."""
    graph = _import_graph()
    found = [circle for circle in _circles(graph) if frozenset(circle) not in CIRCLES_FOR_NOW]
    named = [" -> ".join(f"{a}:{graph[a][b]}" for a, b in zip(circle, circle[1:])) + f" -> {circle[-1]}"
             for circle in found]
    assert not found, "files that import each other (module:line of the import):\n" + "\n".join(named)


def test_every_package_has_a_layer():
    packages = {_layer(_name(p)) for p in MODULES} - {None}
    assert packages <= set(LAYERS), f"not in LAYERS: {sorted(packages - set(LAYERS))}"


RULE_ID = re.compile(r"^(out|dml|onnx|lower)\.[a-z0-9_]+(\.[a-z0-9_]+)*$")


def test_every_rule_id_written_in_the_code_is_a_rule_of_the_spec():
    """A rule named by a string ("out.prefix") must exist: a typo would otherwise fail nowhere
    (properties hold Rule objects, which resolve at import; this covers the strings)."""
    from topkspec.spec.rules import RULES

    unknown = [f"{_name(path)}:{node.lineno} {node.value!r}" for path in MODULES
               for node in ast.walk(ast.parse(path.read_text(encoding="utf-8")))
               if isinstance(node, ast.Constant) and isinstance(node.value, str) and RULE_ID.match(node.value)
               and node.value not in RULES]
    assert not unknown, "not rules of the spec:\n" + "\n".join(unknown)


def test_repro_programs_are_written_in_one_room():
    """Every template of a repro program lives in topkspec/repro/templates/, and each relation
    between calls a report shows has its replay there (repro.relations), none in the properties."""
    from topkspec.properties.catalogue import RELATIONS
    from topkspec.repro.relations import REPLAYS

    elsewhere = sorted(str(p.relative_to(ROOT)) for p in ROOT.rglob("*.tmpl")
                       if (ROOT / "repro" / "templates") not in p.parents)
    assert not elsewhere, f"templates outside topkspec/repro/templates/: {elsewhere}"
    assert set(RELATIONS) == set(REPLAYS), (
        f"relations without a replay: {sorted(set(RELATIONS) - set(REPLAYS))}; "
        f"replays of no relation: {sorted(set(REPLAYS) - set(RELATIONS))}")
    fields = {f for relation in RELATIONS.values() for f in vars(relation)}
    assert fields <= {"calls", "sides"}, f"a property's Relation carries program text again: {fields}"


def test_the_develop_page_shows_the_rooms_in_order():
    """docs/develop.md's table of rooms names every room of LAYERS, bottom up, in its order."""
    page = (ROOT.parent / "docs" / "develop.md").read_text(encoding="utf-8")
    table = page[page.index("## Layers"):page.index("## Add a property")]
    named = [name for line in table.splitlines() if line.startswith("| `")
             for name in re.findall(r"`([\w.]+)`", line.split("|")[1])]
    assert named == [room for room in LAYERS if room != "__main__"], f"docs/develop.md's rooms: {named}"


@pytest.mark.parametrize("path", [p for p in MODULES if p.name == "__init__.py" and p.parent != ROOT], ids=_name)
def test_every_room_opens_with_what_it_holds_and_may_import(path):
    text = ast.get_docstring(ast.parse(path.read_text(encoding="utf-8"))) or ""
    assert text and re.search(r"\bimport", text, re.IGNORECASE), f"{_name(path)}: its opening text does not say what it may import"
