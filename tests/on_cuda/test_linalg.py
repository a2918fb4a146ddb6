"""``matmul`` in all its forms (nbgrad/ops/linalg.py) on the device: the
tiled kernel's values and gradients against the CPU's BLAS."""
import pytest

import nbgrad

from .support import MIXED, on_both, raised, run_both, same_error, values

FORMS = {
    "dot": ((3,), (3,)), "mv": ((2, 3), (3,)), "vm": ((3,), (3, 2)), "mm": ((2, 3), (3, 4)),
    "batched-vector": ((2, 2, 3), (3,)), "vector-batched": ((3,), (2, 3, 2)),
    "folded": ((2, 2, 3), (3, 2)), "folded-left": ((2, 3), (2, 3, 2)),
    "bmm": ((2, 2, 3), (2, 3, 1)), "broadcast-batch": ((2, 1, 2, 3), (3, 3, 2)),
}


@pytest.mark.parametrize("dtype", [nbgrad.float32, nbgrad.float64], ids=str)
@pytest.mark.parametrize("form", sorted(FORMS))
def test_matmul_forms(form, dtype):
    a_shape, b_shape = FORMS[form]
    out, want = run_both(lambda a, b: a @ b, values(a_shape, 1), values(b_shape, 2), dtype=dtype)
    assert out.grad_fn.name() == want.grad_fn.name()


def test_matmul_of_strided_views_and_mm():
    run_both(lambda a, b: a.t() @ b[:, ::2], values((3, 2), 3), values((3, 4), 4))
    run_both(lambda a, b: nbgrad.Tensor.mm(a, b.mT), values((2, 3), 5), values((4, 3), 6))
    run_both(lambda a, b: b.__rmatmul__(a), values((2, 3), 7), values((3,), 8))


def test_only_one_operand_requires_grad():
    def fn(a):
        other = nbgrad.tensor(values((3, 2), 9), dtype=a.dtype, device=a.device)
        return (a @ other) + (other.t() @ a.t()).t()
    run_both(fn, values((2, 3), 10))


@pytest.mark.parametrize("shapes", [((2, 3), (2, 3)), ((3,), (4,)), ((2, 3), (4,)),
                                    ((2, 2, 3), (2, 2, 3)), ((3, 2, 3), (2, 3, 2))],
                         ids=["mm", "dot", "mv", "bmm", "batch"])
def test_shape_errors_as_on_the_cpu(shapes):
    (a_cpu, a_cuda), (b_cpu, b_cuda) = on_both(values(shapes[0], 1)), on_both(values(shapes[1], 2))
    same_error(lambda a, b: a @ b, (a_cpu, b_cpu), (a_cuda, b_cuda))


def test_mixed_devices_are_refused():
    a, b = nbgrad.ones(2, 2, device="cuda"), nbgrad.ones(2, 2)
    assert str(raised(lambda: a @ b)) == MIXED.format("cuda:0", "cpu")
    assert str(raised(lambda: b @ a)) == MIXED.format("cpu", "cuda:0")
