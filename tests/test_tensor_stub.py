"""nbgrad/tensor.pyi, the stub that shows Tensor's runtime API (installed by
nbgrad/ops), is current and complete (tests/tensor_stub.py generates it)."""
import ast
import difflib
import sys

import pytest

import nbgrad
import tensor_stub
from nbgrad.ops import ROWS
from nbgrad.tensor import Tensor

MODULE = sys.modules["nbgrad.tensor"]


def _stub():
    return ast.parse(tensor_stub.STUB.read_text())


def _classes():
    return {node.name: node for node in _stub().body if isinstance(node, ast.ClassDef)}


def _members(node):
    """Names a class body of the stub defines (methods, properties, attributes)."""
    names = set()
    for item in node.body:
        if isinstance(item, ast.FunctionDef):
            names.add(item.name)
        elif isinstance(item, ast.AnnAssign):
            names.add(item.target.id)
    return names


def _runtime(cls):
    """What ``cls`` defines at runtime beyond its bases: public names and dunders."""
    return {name for name in vars(cls)
            if (not name.startswith("_") or (name.startswith("__") and name.endswith("__")))
            and name not in tensor_stub.NOT_API}


def test_stub_is_current():
    expected = tensor_stub.render()
    actual = tensor_stub.STUB.read_text() if tensor_stub.STUB.exists() else ""
    if actual != expected:
        diff = "".join(list(difflib.unified_diff(actual.splitlines(True), expected.splitlines(True),
                                                 "nbgrad/tensor.pyi", "render()"))[:60])
        pytest.fail(f"nbgrad/tensor.pyi is out of date: run `{tensor_stub.COMMAND}`\n{diff}")


@pytest.mark.parametrize("name", ["Tensor", "Size"])
def test_stub_lists_the_runtime_api(name):
    cls = getattr(MODULE, name)
    stub, runtime = _members(_classes()[name]), _runtime(cls)
    assert not runtime - stub, f"missing from the stub: {sorted(runtime - stub)}"
    assert not stub - runtime, f"in the stub, not at runtime: {sorted(stub - runtime)}"


def test_stub_lists_the_public_names_of_tensor_py():
    defined = {name for name, value in vars(MODULE).items() if not name.startswith("_")
               and getattr(value, "__module__", None) == "nbgrad.tensor"}
    stub = {node.name for node in _stub().body if isinstance(node, (ast.ClassDef, ast.FunctionDef))}
    assert {"Size", "Tensor"} <= defined
    assert stub == defined
    assert nbgrad.Size is MODULE.Size and nbgrad.Tensor is Tensor


def test_every_stub_definition_has_a_one_line_docstring():
    for node in ast.walk(_stub()):
        if isinstance(node, (ast.ClassDef, ast.FunctionDef)):
            doc = ast.get_docstring(node)
            assert doc and "\n" not in doc, node.name


def _stub_methods():
    return {item.name: item for item in _classes()["Tensor"].body
            if isinstance(item, ast.FunctionDef)}


@pytest.mark.parametrize("row", [row for row in ROWS if row.method], ids=lambda row: row.name)
def test_generated_methods_take_their_rows_parameters(row):
    methods = _stub_methods()
    for name in (row.name, row.name + "_"):
        args = methods[name].args
        params = [a.arg for a in args.posonlyargs + args.args]
        assert len(params) == len(row.inputs) and not args.vararg, (name, params)
        assert params[0] == "self" and not any(p.startswith("x") and p[1:].isdigit()
                                               for p in params), (name, params)
        assert methods[name].returns is not None, name


@pytest.mark.parametrize("name, signature", [
    ("add", "(self, other, /)"),      # (x0, *rest) at runtime
    ("add_", "(self, other, /)"),     # (self, *args)
    ("__add__", "(self, other, /)"),  # (x0, x1)
    ("__radd__", "(self, other, /)"),  # (x1, x0)
    ("neg", "(self)"),
    ("pow", "(self, exponent)"),      # (self, exponent, *rest): named from the runtime
    ("clamp", "(self, min=None, max=None)"),
    ("matmul", "(self, b)"),          # (a, b): the first parameter is self
])
def test_signatures(name, signature):
    line = next(line for line in tensor_stub.render().splitlines()
                if line.startswith(f"    def {name}("))
    assert line.startswith(f"    def {name}{signature}"), line


def test_an_attribute_missing_from_the_tables_says_what_to_do(monkeypatch):
    monkeypatch.setattr(Tensor, "brand_new", lambda self: self, raising=False)
    with pytest.raises(LookupError, match=r"Tensor\.brand_new .*_TENSOR.*"
                                          r"python -m tests\.tensor_stub --write"):
        tensor_stub.render()
