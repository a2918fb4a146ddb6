"""Copies and device moves (nbgrad/ops/copying.py): ``to``/``cuda``/``cpu``
taped across devices, ``clone``, dtype casts, ``copy_``/``fill_``/``zero_``."""
import numpy as np
import pytest

import nbgrad

from .support import MIXED, assert_same, host, on_both, raised, run_both, values


def test_to_cuda_of_a_leaf_is_a_non_leaf_whose_backward_fills_the_cpu_leaf():
    x = nbgrad.tensor(values((2, 3), 1), requires_grad=True)
    y = x.to("cuda")
    assert y.is_cuda and not y.is_leaf and y.requires_grad
    assert y.grad_fn.name() == x.float().grad_fn.name()  # ToCopy, as a dtype change
    (y * y).sum().backward()
    assert not x.grad.is_cuda and x.grad.dtype is x.dtype
    np.testing.assert_allclose(x.grad.numpy(), 2 * x.detach().numpy())


def test_cpu_of_a_cuda_leaf_sends_the_gradient_back_to_the_device():
    x = nbgrad.tensor(values((3,), 2), device="cuda", requires_grad=True)
    z = x.cpu()
    assert not z.is_cuda and z.grad_fn is not None
    (z * 3).sum().backward()
    assert x.grad.is_cuda and host(x.grad).tolist() == [3.0, 3.0, 3.0]


@pytest.mark.parametrize("move", [
    lambda t: t.cuda(), lambda t: t.cuda(0), lambda t: t.to("cuda:0"),
    lambda t: t.to(nbgrad.device("cuda")), lambda t: t.to(device="cuda"),
    lambda t: t.to("cuda", nbgrad.float64), lambda t: t.to(nbgrad.ones(1, device="cuda")),
], ids=["cuda", "cuda0", "str", "device", "kw", "device-dtype", "other"])
def test_ways_to_move_to_the_device(move):
    x = nbgrad.tensor(values((2, 2), 3), dtype=nbgrad.float32, requires_grad=True)
    y = move(x)
    assert y.is_cuda
    y.sum().backward()
    assert not x.grad.is_cuda and x.grad.tolist() == [[1.0, 1.0], [1.0, 1.0]]


def test_round_trip_through_the_device_and_same_device_is_a_no_op():
    cpu, cuda = on_both(values((2, 3), 4))
    assert cuda.to("cuda") is cuda and cuda.cuda() is cuda and cpu.cpu() is cpu
    back = cuda.cpu()
    np.testing.assert_array_equal(back.numpy(), cpu.numpy())
    back[0, 0] = 100.0  # a copy
    assert cuda[0, 0].item() != 100.0
    again = cuda.to("cuda", copy=True)
    assert again is not cuda and again._data is not cuda._data


def test_gradient_through_a_round_trip_and_a_dtype_change():
    def fn(x):
        return (x.cuda().double().sigmoid().cpu().float() * x).cuda()
    x = nbgrad.tensor(values((2, 3), 5), dtype=nbgrad.float32, requires_grad=True)
    out = fn(x)
    out.sum().backward()
    y = nbgrad.tensor(values((2, 3), 5), dtype=nbgrad.float32, requires_grad=True)
    (y.double().sigmoid().float() * y).sum().backward()
    np.testing.assert_allclose(x.grad.numpy(), y.grad.numpy(), rtol=1e-6)


def test_clone_and_casts_on_the_device():
    def fn(x):
        return x.clone() * x.double().float() + x.to(nbgrad.float64).to(nbgrad.float32)
    run_both(fn, values((2, 3), 6))
    cpu, cuda = on_both(values((2, 3), 7))
    for cast in (lambda t: t.long(), lambda t: t.bool(), lambda t: t.float(),
                 lambda t: (t > 0).double(), lambda t: t.long().float()):
        assert_same(cast(cuda), cast(cpu))
    assert cuda.type() == "nbgrad.cuda.DoubleTensor" and cpu.type() == "nbgrad.DoubleTensor"


def test_copy_fill_zero_on_the_device():
    def fn(a, b):
        y = a * 1
        y[0].copy_(b[1])
        y[1, 1:].fill_(2.5)
        y[:, 0].zero_()
        return y * a
    run_both(fn, values((2, 3), 8), values((2, 3), 9), dtype=nbgrad.float64)


def test_copy_from_another_device_is_taped():
    source = nbgrad.tensor(values((3,), 1), requires_grad=True)  # on the CPU
    target = nbgrad.zeros(3, device="cuda") * 1
    target.copy_(source)
    assert target.is_cuda
    (target * 2).sum().backward()
    assert not source.grad.is_cuda and source.grad.tolist() == [2.0, 2.0, 2.0]
    back = nbgrad.zeros(3)
    back.copy_(nbgrad.tensor([1.0, 2.0, 3.0], device="cuda"))
    assert back.tolist() == [1.0, 2.0, 3.0]


def test_copy_numbers_and_integer_targets():
    cpu, cuda = on_both(np.array([1, 2, 3]))
    for t in (cpu, cuda):
        t.copy_(7)
        t[1:].fill_(-1)
    assert_same(cuda, cpu)


def test_fill_with_a_device_scalar_tensor():
    cpu, cuda = on_both(values((2, 2), 1))
    cpu.fill_(nbgrad.tensor(3.0))
    cuda.fill_(nbgrad.tensor(3.0, device="cuda"))
    assert_same(cuda, cpu)


def test_leaf_refuses_inplace_copy_on_both_devices():
    for device in ("cpu", "cuda"):
        leaf = nbgrad.zeros(2, device=device, requires_grad=True)
        error = raised(leaf.copy_, nbgrad.ones(2, device=device))
        assert str(error) == ("a leaf Variable that requires grad is being used in an in-place "
                              "operation.")
        assert leaf._version == 0


def test_partial_overlap_is_refused_on_the_device():
    cpu, cuda = on_both(values((4,), 1))
    for t in (cpu, cuda):
        error = raised(t[1:].copy_, t[:3])
        assert str(error).startswith("unsupported operation: some elements of the input tensor")


def test_mixed_device_elementwise_message():
    """The message names the device the op ran on first (torch's
    TensorIterator: the first non-CPU device is the common one)."""
    cuda = nbgrad.ones(2, device="cuda")
    cpu = nbgrad.ones(2)
    error = raised(lambda: cuda + cpu)
    assert type(error) is RuntimeError and str(error) == MIXED.format("cuda:0", "cpu")
    assert str(raised(lambda: cuda.mul_(cpu))) == MIXED.format("cuda:0", "cpu")
    assert str(raised(nbgrad.where, cuda > 0, cuda, cpu)) == MIXED.format("cuda:0", "cpu")


def test_mixed_device_message_with_the_cpu_tensor_first():
    error = raised(lambda: nbgrad.ones(2) + nbgrad.ones(2, device="cuda"))
    assert str(error) == MIXED.format("cuda:0", "cpu")


def test_zero_dim_cpu_tensor_is_a_scalar_in_a_cuda_op():
    """As in torch: values, promotion as a 0-d tensor, and the gradient back on the CPU."""
    x = nbgrad.ones(2, device="cuda", requires_grad=True)
    s = nbgrad.tensor(3.0, dtype=nbgrad.float64, requires_grad=True)
    out = x * s
    assert out.is_cuda and out.dtype is nbgrad.float32 and host(out).tolist() == [3.0, 3.0]
    out.sum().backward()
    assert s.grad.device == nbgrad.device("cpu") and s.grad.dtype is nbgrad.float64
    assert s.grad.item() == 2.0 and host(x.grad).tolist() == [3.0, 3.0]
    assert host(nbgrad.where(x > 0, nbgrad.tensor(1.0), x)).tolist() == [1.0, 1.0]
    with nbgrad.no_grad():
        y = x.clone()
        y.mul_(nbgrad.tensor(2.0))
    assert host(y).tolist() == [2.0, 2.0]


def test_only_zero_dim_cpu_tensors_join_a_cuda_op():
    cuda = nbgrad.ones(2, device="cuda")
    for cpu in (nbgrad.ones(1), nbgrad.ones(2)):
        assert str(raised(lambda: cuda + cpu)) == MIXED.format("cuda:0", "cpu")
    scalar = nbgrad.tensor(1.0)  # written into: it must be on the op's device
    assert str(raised(lambda: scalar.add_(cuda[0]))) == MIXED.format("cuda:0", "cpu")
    assert scalar.item() == 1.0 and scalar._version == 0
