"""The tape's and Tensor's construction templates: every path that makes a
Tensor, a SavedTensor or a Node (their own constructors, the general
elementwise path, the generated straight-line code) fills every slot, so a
slot added to a template reaches all of them."""
import pytest

import nbgrad
from nbgrad.tape.graph import Node, SavedTensor

TENSOR_SLOTS = [s for s in nbgrad.Tensor.__slots__ if not s.startswith("__")]
NODE_SLOTS = [s for s in Node.__slots__ if not s.startswith("__")]


def _results():
    x = nbgrad.ones(3, requires_grad=True)
    w = nbgrad.ones(2, 3, requires_grad=True)
    return {
        "straight-line": x * x,  # a small call of one shape: generated code
        "straight-line with a number": x * 2.0,
        "general (broadcast)": x + w,
        "general (a view)": x[1:] * 2,
        "_from_op": x.sum(),  # a reduction builds its result with Tensor._from_op
        "matmul": w @ x,
    }


@pytest.mark.parametrize("path", list(_results()))
def test_every_path_fills_every_slot_of_its_result_and_node(path):
    result = _results()[path]
    for slot in TENSOR_SLOTS:
        getattr(result, slot)  # AttributeError: a path that left a slot unset
    node = result.grad_fn
    for slot in NODE_SLOTS:
        getattr(node, slot)
    saved = [s for s in node.saved if isinstance(s, SavedTensor)]
    for s in saved:
        for slot in SavedTensor.__slots__:
            getattr(s, slot)


def test_saved_tensor_constructor_matches_the_generated_one():
    x = nbgrad.ones(3, requires_grad=True)
    y = x * x  # straight-line: saves x through SavedTensor.input_lines, inlined
    generated = y.grad_fn.saved[0]
    made = SavedTensor(x)
    fields = [s for s in SavedTensor.__slots__ if s not in ("tensor_ref", "__weakref__")]
    assert [getattr(generated, s) for s in fields] == [getattr(made, s) for s in fields]
    assert generated.tensor_ref() is made.tensor_ref() is x
