"""The package's layers, read from its imports (design.md, "Layers").

Every import in ``nbgrad/`` is read with ``ast``, those inside functions too,
and each module is given its floor from :data:`FLOORS`. A module may import
its own floor and the floors below it; an import of a higher floor fails, and
so does a cycle of modules that spans two floors. The one allowed upward
import is the lazy load of the CUDA backend's implementation, which keeps
``import nbgrad`` off the driver; it points down, from ``backends.cuda`` to
its own ``api`` module, so it needs no exception here.

``python -m tests.test_layering`` prints the figures: modules, imports,
imports upward, and the biggest import cycle.
"""
import ast
import pathlib
import sys

import pytest

ROOT = pathlib.Path(__file__).resolve().parent.parent / "nbgrad"

# Module prefixes (most specific first wins) -> floor. 1: declarations (rows,
# scalar math, dtypes, the version string); 2: backends; 3: the tape; 4:
# Tensor and ops; 5: libraries and the package root.
FLOORS = [
    ("nbgrad._version", 1), ("nbgrad.dtypes", 1), ("nbgrad.device", 1), ("nbgrad.declarations", 1),
    ("nbgrad.backends", 2),
    ("nbgrad.tape", 3),
    ("nbgrad.tensor", 4), ("nbgrad.gradients", 4), ("nbgrad.creation", 4), ("nbgrad.random", 4), ("nbgrad.ops", 4), ("nbgrad._formatting", 4),
    ("nbgrad.nn", 5), ("nbgrad.optim", 5), ("nbgrad.autograd", 5), ("nbgrad.serialization", 5),
    ("nbgrad.cuda", 5), ("nbgrad.demo", 5), ("nbgrad.utils", 5), ("nbgrad", 5),
]
NAMES = {1: "declarations", 2: "backends", 3: "tape", 4: "Tensor and ops", 5: "libraries"}


def floor_of(module):
    for prefix, floor in FLOORS:
        if module == prefix or module.startswith(prefix + "."):
            return floor
    raise KeyError(f"{module} has no floor in FLOORS")


def modules():
    """{module name: path} for every module of the package."""
    found = {}
    for path in sorted(ROOT.rglob("*.py")):
        parts = list(path.relative_to(ROOT.parent).with_suffix("").parts)
        if parts[-1] == "__init__":
            parts.pop()
        found[".".join(parts)] = path
    return found


def _resolve(module, is_package, node, known):
    """The modules an import statement names: ``from package import module``
    names the module (not the package's ``__init__``, which Python runs for
    any of its modules); ``from module import name`` names the module."""
    if isinstance(node, ast.Import):
        return [alias.name for alias in node.names]
    base = module.split(".")
    if node.level:
        base = base[:len(base) - node.level + (1 if is_package else 0)]
        prefix = ".".join(base + ([node.module] if node.module else []))
    else:
        prefix = node.module
    names = [f"{prefix}.{alias.name}" for alias in node.names]
    return [n for n in names if n in known] or [prefix]


def imports():
    """[(importer, imported, line)] for imports of the package's own modules."""
    known = modules()
    edges = []
    for module, path in known.items():
        tree = ast.parse(path.read_text(), str(path))
        for node in ast.walk(tree):
            if isinstance(node, (ast.Import, ast.ImportFrom)):
                for name in _resolve(module, path.name == "__init__.py", node, known):
                    # The deepest module of the package that the name lies in.
                    while name and name not in known:
                        name = name.rpartition(".")[0]
                    if name and name != module and name.startswith("nbgrad"):
                        edges.append((module, name, node.lineno))
    return sorted(set(edges))


def strongly_connected(edges):
    """Tarjan's components of the import graph (iterative)."""
    graph = {}
    for a, b, _ in edges:
        graph.setdefault(a, set()).add(b)
        graph.setdefault(b, set())
    index, low, stack, on_stack, components, counter = {}, {}, [], set(), [], [0]
    for root in graph:
        if root in index:
            continue
        work = [(root, iter(sorted(graph[root])))]
        index[root] = low[root] = counter[0]
        counter[0] += 1
        stack.append(root)
        on_stack.add(root)
        while work:
            node, children = work[-1]
            for child in children:
                if child not in index:
                    index[child] = low[child] = counter[0]
                    counter[0] += 1
                    stack.append(child)
                    on_stack.add(child)
                    work.append((child, iter(sorted(graph[child]))))
                    break
                if child in on_stack:
                    low[node] = min(low[node], index[child])
            else:
                work.pop()
                if work:
                    low[work[-1][0]] = min(low[work[-1][0]], low[node])
                if low[node] == index[node]:
                    component = set()
                    while True:
                        member = stack.pop()
                        on_stack.discard(member)
                        component.add(member)
                        if member == node:
                            break
                    components.append(component)
    return components


def _upward(edges):
    return [(a, b, line) for a, b, line in edges
            if floor_of(b) > floor_of(a) and not (a == "nbgrad" or b == "nbgrad")]


def test_every_module_has_a_floor():
    for module in modules():
        floor_of(module)


def test_no_module_imports_a_higher_floor():
    upward = _upward(imports())
    assert not upward, "imports upward:\n" + "\n".join(
        f"  {a} ({NAMES[floor_of(a)]}) imports {b} ({NAMES[floor_of(b)]}), line {line}"
        for a, b, line in upward)


def test_no_import_cycle_spans_two_floors():
    spanning = [sorted(c) for c in strongly_connected(imports())
                if len({floor_of(m) for m in c}) > 1]
    assert not spanning, "import cycles across floors:\n" + "\n".join(
        "  " + ", ".join(c) for c in spanning)


@pytest.mark.parametrize("module, floor", [("nbgrad.declarations.op_table", 1), ("nbgrad.backends.cpu", 2),
                                           ("nbgrad.tape.engine", 3), ("nbgrad.tensor", 4),
                                           ("nbgrad.nn.module", 5)])
def test_floors_are_read_as_declared(module, floor):
    assert floor_of(module) == floor


def test_an_upward_import_is_found(tmp_path, monkeypatch):
    # The checker itself: a declaration importing the Tensor must be reported.
    edges = [("nbgrad.declarations.op_table", "nbgrad.tensor", 1)]
    assert _upward(edges) == edges
    assert strongly_connected([("nbgrad.tensor", "nbgrad.tape.graph", 1),
                               ("nbgrad.tape.graph", "nbgrad.tensor", 2)]) == [
        {"nbgrad.tensor", "nbgrad.tape.graph"}]


def figures():
    edges = imports()
    biggest = max(strongly_connected(edges), key=len)
    return {"modules": len(modules()), "imports": len(edges), "imports upward": len(_upward(edges)),
            "biggest cycle": len(biggest) if len(biggest) > 1 else 0}


if __name__ == "__main__":
    for key, value in figures().items():
        print(f"{key}: {value}")
    if "-v" in sys.argv:
        for a, b, line in _upward(imports()):
            print(f"  up: {a} -> {b} (line {line})")
