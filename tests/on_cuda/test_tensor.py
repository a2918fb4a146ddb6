"""The Tensor on the device (nbgrad/tensor.py): metadata, conversions, repr,
``__cuda_array_interface__``, grads that stay on the device, aliases."""
import copy
import os

import numpy as np
import pytest

import nbgrad

from .support import assert_same, host, on_both, raised, values

SIMULATOR = os.environ.get("NUMBA_ENABLE_CUDASIM") == "1"


def test_metadata_matches_the_cpu():
    cpu, cuda = on_both(values((2, 3), 1))
    assert cuda.is_cuda and not cpu.is_cuda
    assert cuda.device == nbgrad.device("cuda:0") and repr(cuda.device) == "device(type='cuda', index=0)"
    for t in (lambda t: t, lambda t: t.t(), lambda t: t[:, 1:], lambda t: t[1]):
        a, b = t(cuda), t(cpu)
        assert (a.shape, a.stride(), a.storage_offset(), a.is_contiguous(), a.numel(), a.ndim,
                a.element_size(), a.dtype) == (b.shape, b.stride(), b.storage_offset(),
                                               b.is_contiguous(), b.numel(), b.ndim,
                                               b.element_size(), b.dtype)


def test_repr_names_the_device():
    cuda = nbgrad.tensor([[1.0, 2.5], [3.0, -4.0]], device="cuda")
    assert repr(cuda) == ("tensor([[ 1.0000,  2.5000],\n        [ 3.0000, -4.0000]], "
                          "device='cuda:0')")
    assert repr(nbgrad.tensor([1, 2], device="cuda")) == "tensor([1, 2], device='cuda:0')"
    assert repr(nbgrad.zeros(2, dtype=nbgrad.float64, device="cuda", requires_grad=True)) == (
        "tensor([0., 0.], device='cuda:0', dtype=nbgrad.float64, requires_grad=True)")
    cpu, cuda = on_both([2.0, 2.0], requires_grad=True)
    assert repr(cuda * 2) == repr(cpu * 2).replace(", grad_fn", ", device='cuda:0', grad_fn")
    assert repr(nbgrad.zeros(0, 2, device="cuda")) == (
        "tensor([], device='cuda:0', size=(0, 2))")


def test_numpy_refuses_a_cuda_tensor():
    cuda = nbgrad.ones(2, device="cuda")
    error = raised(cuda.numpy)
    assert type(error) is TypeError  # torch's type and words
    assert str(error) == ("can't convert cuda:0 device type tensor to numpy. Use Tensor.cpu() "
                          "to copy the tensor to host memory first.")
    assert isinstance(raised(np.asarray, cuda), TypeError)
    grad = nbgrad.ones(2, device="cuda", requires_grad=True)  # requires grad: torch checks that first
    assert str(raised(grad.numpy)).startswith("Can't call numpy() on Tensor that requires grad")
    np.testing.assert_array_equal(cuda.cpu().numpy(), [1.0, 1.0])


def _read_interface(t):
    """The values behind ``__cuda_array_interface__``, read without nbgrad."""
    face = t.__cuda_array_interface__
    assert set(face) >= {"shape", "strides", "data", "typestr", "version"}
    if not SIMULATOR:
        from numba import cuda
        return cuda.as_cuda_array(t).copy_to_host()

    class Host:  # the simulator's device memory is host memory: read it as NumPy would
        __array_interface__ = {k: face[k] for k in ("shape", "strides", "data", "typestr")}
        __array_interface__["version"] = 3
    return np.array(Host(), copy=True)


@pytest.mark.parametrize("view", [lambda t: t, lambda t: t.t(), lambda t: t[1:, ::2],
                                  lambda t: t[1]], ids=["whole", "transposed", "sliced", "row"])
def test_cuda_array_interface_exposes_the_buffer(view):
    cpu, cuda = on_both(values((3, 4), 2), dtype=nbgrad.float32)
    t = view(cuda)
    face = t.__cuda_array_interface__
    assert face["shape"] == tuple(t.shape) and face["typestr"] == "<f4"
    assert face["strides"] in (None, tuple(s * 4 for s in t.stride()))
    assert (face["strides"] is None) == t.is_contiguous()
    assert face["data"][1] is False  # writable
    np.testing.assert_array_equal(_read_interface(t), view(cpu).numpy())


def test_cuda_array_interface_shares_memory():
    cuda = nbgrad.zeros(2, 3, device="cuda")
    row = cuda[1]
    assert row.__cuda_array_interface__["data"][0] == cuda.__cuda_array_interface__["data"][0] + 12
    cuda[1, 2] = 5.0
    assert _read_interface(row)[2] == 5.0


def test_cuda_array_interface_is_absent_on_cpu_and_refused_with_grad():
    cpu = nbgrad.ones(2)
    assert not hasattr(cpu, "__cuda_array_interface__")
    assert isinstance(raised(getattr, cpu, "__cuda_array_interface__"), AttributeError)
    grad = nbgrad.ones(2, device="cuda", requires_grad=True)
    error = raised(getattr, grad, "__cuda_array_interface__")
    assert type(error) is RuntimeError and "requires grad" in str(error)
    assert grad.detach().__cuda_array_interface__["shape"] == (2,)


def test_python_conversions_read_the_device():
    cuda = nbgrad.tensor([[1.5, 2.0], [3.0, 4.0]], device="cuda")
    assert cuda[0, 0].item() == 1.5 and float(cuda[0, 0]) == 1.5 and int(cuda[1, 1]) == 4
    assert cuda.tolist() == [[1.5, 2.0], [3.0, 4.0]]
    assert bool(cuda[0, 1] > 1) is True
    assert [row.tolist() for row in cuda] == [[1.5, 2.0], [3.0, 4.0]] and len(cuda) == 2
    index = nbgrad.tensor(1, device="cuda")
    assert [10, 20, 30][index] == 20
    assert str(raised(cuda.item)) == "a Tensor with 4 elements cannot be converted to Scalar"


def test_gradients_stay_on_the_device():
    x = nbgrad.tensor(values((2, 3), 1), device="cuda", requires_grad=True)
    (x * x).sum().backward()
    assert x.grad.device == x.device and x.grad.is_cuda
    assert x.grad.dtype is x.dtype and x.grad.grad_fn is None and not x.grad.requires_grad
    (x * 3).sum().backward()  # accumulates in place, on the device
    np.testing.assert_allclose(host(x.grad), 2 * host(x) + 3, rtol=1e-6)


def test_grad_assignment_checks_the_device():
    x = nbgrad.ones(2, device="cuda", requires_grad=True)
    error = raised(setattr, x, "grad", nbgrad.zeros(2))
    assert str(error) == ("attempting to assign a gradient with device type 'cpu' to a tensor "
                          "with device type 'cuda'. Please ensure that the gradient and the "
                          "tensor are on the same device")
    x.grad = nbgrad.full((2,), 3.0, device="cuda")
    (x * 2).sum().backward()
    assert host(x.grad).tolist() == [5.0, 5.0]


def test_detach_and_data_alias_the_device_buffer():
    cpu, cuda = on_both(values((2, 3), 1), requires_grad=True)
    for t in (cpu, cuda):
        d = t.detach()
        assert d.device == t.device and not d.requires_grad
        d[0, 0] = 7.0  # visible through t, and counted in t's version
        assert t[0, 0].item() == 7.0 and t._version == 1
        alias = t.data
        alias[0, 1] = 8.0  # its own counter: not seen by t's
        assert t[0, 1].item() == 8.0 and t._version == 1
    assert_same(cuda.detach(), cpu.detach())


def test_deepcopy_copies_the_device_buffer_and_grad():
    x = nbgrad.tensor(values((2,), 1), device="cuda", requires_grad=True)
    (x * 2).sum().backward()
    y = copy.deepcopy(x)
    assert y.device == x.device and y.requires_grad and y.grad.device == x.device
    y.detach()[0] = 9.0
    assert x[0].item() != 9.0
    assert_same(y.grad, nbgrad.full((2,), 2.0, dtype=nbgrad.float64))


def test_data_setter_moves_the_tensor_to_another_device():
    x = nbgrad.zeros(2, requires_grad=True)
    x.data = nbgrad.ones(2, device="cuda")
    assert x.is_cuda and x.device == nbgrad.device("cuda", 0)
    (x * 2).sum().backward()
    assert x.grad.is_cuda and host(x.grad).tolist() == [2.0, 2.0]
