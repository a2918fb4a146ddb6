"""The guard: every op nbgrad exports is tested. Rows are tested by the op
table (``test_table.REFERENCE``, which has its own guard); every other op
declared with ``registry.tensor_op`` (a ``Tensor`` method or an ``nbgrad``
function) must be named in the ``TESTED_OPS`` set of some test module, the
table of names that module's cases cover. An in-place ``x_`` counts as
tested with ``x``."""
import ast
import pathlib

from nbgrad.ops import registry
from nbgrad.declarations.op_table import ROWS

TESTS = pathlib.Path(__file__).resolve().parent.parent


def tested_ops():
    """The union of every test module's ``TESTED_OPS`` (read without importing it)."""
    names = set()
    for path in TESTS.rglob("test_*.py"):
        for node in ast.parse(path.read_text()).body:
            if isinstance(node, ast.Assign) and any(
                    isinstance(t, ast.Name) and t.id == "TESTED_OPS" for t in node.targets):
                if isinstance(node.value, ast.Call):  # set()
                    continue
                names |= set(ast.literal_eval(node.value))
    return names


def test_every_exported_op_has_a_tested_entry():
    rows = {row.name for row in ROWS} | {row.name + "_" for row in ROWS}
    exported = (set(registry.FUNCTIONS) | set(registry.METHODS)) - rows
    tested = tested_ops()
    missing = sorted(name for name in exported if not name.startswith("__")
                     and name not in tested and name.rstrip("_") not in tested)
    assert not missing, f"exported ops that no test module lists in TESTED_OPS: {missing}"
